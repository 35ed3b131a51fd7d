/* Shape inference: matrix products, convolutions, pools and normalizations (channels-first; the NHWC forms
 * reach these functions with input 0 already seen channels-first, and weights keep their standard layout). */
#include <string.h>

#include "core/shape/shape_internal.h"

static void unknown_dims(sh_shape *s, int32_t rank)
{
    s->rank = rank;
    for (int32_t i = 0; i < rank; i++)
        sh_dim_unknown(&s->dims[i]);
}

pc_status sh_matmul_output(sh_ctx *c, uint32_t a_input, uint32_t b_input, pc_dtype elem)
{
    sh_shape a, b, y;
    if (!sh_in_shape(c, a_input, &a) || !sh_in_shape(c, b_input, &b)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    if (a.rank == 0 || b.rank == 0) return sh_fail(c, "MatMul inputs must have rank >= 1");
    /* 1-D operands: [K] is [1, K] on the left, [K, 1] on the right, and that dim is dropped afterwards */
    bool a_vec = a.rank == 1, b_vec = b.rank == 1;
    if (a_vec) {
        a.dims[1] = a.dims[0];
        sh_dim_known(&a.dims[0], 1);
        a.rank = 2;
    }
    if (b_vec) {
        sh_dim_known(&b.dims[1], 1);
        b.rank = 2;
    }
    const pc_dim *ka = &a.dims[a.rank - 1], *kb = &b.dims[b.rank - 2];
    if (ka->kind == PC_DIM_KNOWN && kb->kind == PC_DIM_KNOWN && ka->size != kb->size)
        return sh_fail(c, "inner dims differ: %lld and %lld", (long long)ka->size, (long long)kb->size);
    sh_shape ba = a, bb = b;
    ba.rank -= 2;
    bb.rank -= 2;
    pc_status st = sh_broadcast(c, &ba, &bb, &y);
    if (st != PC_OK) return st;
    if (!a_vec) y.dims[y.rank++] = a.dims[a.rank - 2];
    if (!b_vec) y.dims[y.rank++] = b.dims[b.rank - 1];
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_matmul(sh_ctx *c)
{
    return sh_matmul_output(c, 0, 1, sh_in_elem(c, 0));
}

pc_status sh_infer_gemm(sh_ctx *c)
{
    sh_shape a, b, y;
    pc_dtype elem = sh_in_elem(c, 0);
    unknown_dims(&y, 2);
    bool ta = sh_attr_int(c, "transA", 0) != 0, tb = sh_attr_int(c, "transB", 0) != 0;
    pc_dim ka, kb;
    sh_dim_unknown(&ka);
    sh_dim_unknown(&kb);
    if (sh_in_shape(c, 0, &a)) {
        if (a.rank != 2) return sh_fail(c, "A must have rank 2, has rank %d", (int)a.rank);
        y.dims[0] = a.dims[ta ? 1 : 0];
        ka = a.dims[ta ? 0 : 1];
    }
    if (sh_in_shape(c, 1, &b)) {
        if (b.rank != 2) return sh_fail(c, "B must have rank 2, has rank %d", (int)b.rank);
        y.dims[1] = b.dims[tb ? 0 : 1];
        kb = b.dims[tb ? 1 : 0];
    }
    if (ka.kind == PC_DIM_KNOWN && kb.kind == PC_DIM_KNOWN && ka.size != kb.size)
        return sh_fail(c, "inner dims differ: %lld and %lld", (long long)ka.size, (long long)kb.size);
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

/* Kernel sizes from kernel_shape or the weights' spatial dims; false when neither is known. */
static bool kernel_dims(sh_ctx *c, const sh_shape *w, int32_t nsp, int64_t *k)
{
    size_t n;
    const int64_t *ks = sh_attr_ints(c, "kernel_shape", &n);
    if (ks && n == (size_t)nsp) {
        memcpy(k, ks, n * sizeof *ks);
        return true;
    }
    if (!w || w->rank != nsp + 2) return false;
    for (int32_t i = 0; i < nsp; i++) {
        if (w->dims[2 + i].kind != PC_DIM_KNOWN) return false;
        k[i] = w->dims[2 + i].size;
    }
    return true;
}

static pc_status conv_like(sh_ctx *c, uint32_t w_input, pc_dtype elem, bool transposed)
{
    sh_shape x, w, y;
    bool w_known = sh_in_shape(c, w_input, &w);
    if (!sh_in_shape(c, 0, &x)) {
        if (w_known) {
            unknown_dims(&y, w.rank);
            sh_set_out(c, 0, elem, &y);
        } else {
            sh_set_out(c, 0, elem, NULL);
        }
        return PC_OK;
    }
    if (x.rank < 3) return sh_fail(c, "input 0 must have rank >= 3, has rank %d", (int)x.rank);
    if (w_known && w.rank != x.rank)
        return sh_fail(c, "weights have rank %d, input 0 rank %d", (int)w.rank, (int)x.rank);
    int64_t group = sh_attr_int(c, "group", 1);
    if (group < 1) return sh_fail_status(c, PC_ERR_ATTRIBUTE, "group %lld", (long long)group);
    y.rank = x.rank;
    y.dims[0] = x.dims[0];
    sh_dim_unknown(&y.dims[1]);
    if (w_known) {
        const pc_dim *cin = &x.dims[1], *w0 = &w.dims[0], *w1 = &w.dims[1];
        if (!transposed) {
            y.dims[1] = *w0;
            int64_t expect;
            if (cin->kind == PC_DIM_KNOWN && w1->kind == PC_DIM_KNOWN &&
                (!sh_mul(w1->size, group, &expect) || cin->size != expect))
                return sh_fail(c, "input has %lld channels, weights expect %lld x group %lld",
                               (long long)cin->size, (long long)w1->size, (long long)group);
        } else {
            int64_t m;
            if (w1->kind == PC_DIM_KNOWN && !sh_mul(w1->size, group, &m))
                return sh_fail(c, "channels overflow");
            if (w1->kind == PC_DIM_KNOWN) sh_dim_known(&y.dims[1], m);
            if (cin->kind == PC_DIM_KNOWN && w0->kind == PC_DIM_KNOWN && cin->size != w0->size)
                return sh_fail(c, "input has %lld channels, weights expect %lld", (long long)cin->size,
                               (long long)w0->size);
        }
    }
    /* kernel_shape, when given, has one value per spatial axis and repeats W's spatial dims (the reference
     * and ORT reject a disagreement, so inference must too) */
    size_t n_ks;
    const int64_t *ks = sh_attr_ints(c, "kernel_shape", &n_ks);
    if (ks && n_ks != (size_t)(x.rank - 2))
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "kernel_shape has %zu values for %d spatial axes", n_ks,
                              (int)x.rank - 2);
    for (int32_t i = 0; ks && w_known && i < x.rank - 2; i++)
        if (w.dims[2 + i].kind == PC_DIM_KNOWN && w.dims[2 + i].size != ks[i])
            return sh_fail_status(c, PC_ERR_ATTRIBUTE,
                                  "kernel_shape[%d] is %lld but the weights' dim %d is %lld", (int)i,
                                  (long long)ks[i], (int)i + 2, (long long)w.dims[2 + i].size);
    int64_t k[PC_MAX_RANK];
    if (kernel_dims(c, w_known ? &w : NULL, x.rank - 2, k)) {
        pc_status st =
            sh_window_dims(c, transposed ? SH_WINDOW_CONV_TRANSPOSE : SH_WINDOW_CONV, &x, k, &y.dims[2]);
        if (st != PC_OK) return st;
    } else {
        for (int32_t i = 2; i < y.rank; i++)
            sh_dim_unknown(&y.dims[i]);
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_conv_output(sh_ctx *c, uint32_t w_input, pc_dtype elem)
{
    return conv_like(c, w_input, elem, false);
}

pc_status sh_infer_conv(sh_ctx *c)
{
    return conv_like(c, 1, sh_in_elem(c, 0), false);
}

pc_status sh_infer_conv_transpose(sh_ctx *c)
{
    return conv_like(c, 1, sh_in_elem(c, 0), true);
}

/* MaxPool, AveragePool, LpPool; MaxPool's Indices output is int64 of the same shape. */
pc_status sh_infer_pool(sh_ctx *c)
{
    sh_shape x, y;
    pc_dtype elem = sh_in_elem(c, 0);
    y.rank = -1;
    if (sh_in_shape(c, 0, &x)) {
        if (x.rank < 3) return sh_fail(c, "input 0 must have rank >= 3, has rank %d", (int)x.rank);
        int64_t k[PC_MAX_RANK];
        size_t n;
        const int64_t *ks = sh_attr_ints(c, "kernel_shape", &n);
        if (!ks || n != (size_t)x.rank - 2)
            return sh_fail_status(c, PC_ERR_ATTRIBUTE, "kernel_shape must have %d values", (int)x.rank - 2);
        memcpy(k, ks, n * sizeof *ks);
        y.rank = x.rank;
        y.dims[0] = x.dims[0];
        y.dims[1] = x.dims[1];
        pc_status st = sh_window_dims(c, SH_WINDOW_POOL, &x, k, &y.dims[2]);
        if (st != PC_OK) return st;
    }
    sh_set_out(c, 0, elem, &y);
    if (c->n_out > 1) sh_set_out(c, 1, PC_DTYPE_INT64, &y);
    return PC_OK;
}

pc_status sh_infer_global_pool(sh_ctx *c)
{
    sh_shape x;
    pc_dtype elem = sh_in_elem(c, 0);
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    if (x.rank < 3) return sh_fail(c, "input 0 must have rank >= 3, has rank %d", (int)x.rank);
    for (int32_t i = 2; i < x.rank; i++)
        sh_dim_known(&x.dims[i], 1);
    sh_set_out(c, 0, elem, &x);
    return PC_OK;
}

/* Inference form: Y has X's shape (the training outputs are left alone). */
pc_status sh_infer_batch_norm(sh_ctx *c)
{
    sh_shape x;
    sh_in_shape(c, 0, &x);
    sh_set_out(c, 0, sh_in_elem(c, 0), &x);
    return PC_OK;
}

/* Y = X; Mean and InvStdDev keep X's leading dims up to axis and are 1 after it, in stash_type. */
pc_status sh_infer_layer_norm(sh_ctx *c)
{
    sh_shape x;
    bool known = sh_in_shape(c, 0, &x);
    sh_set_out(c, 0, sh_in_elem(c, 0), &x);
    if (c->n_out < 2) return PC_OK;
    pc_dtype stash = (pc_dtype)sh_attr_int(c, "stash_type", 1);
    if (!pc_dtype_is_valid((int32_t)stash)) stash = PC_DTYPE_UNDEFINED;
    if (known) {
        int32_t a;
        pc_status st = sh_axis(c, sh_attr_int(c, "axis", -1), x.rank, "axis", &a);
        if (st != PC_OK) return st;
        for (int32_t i = a; i < x.rank; i++)
            sh_dim_known(&x.dims[i], 1);
    }
    for (uint32_t i = 1; i < c->n_out && i < 3; i++)
        sh_set_out(c, i, stash, known ? &x : NULL);
    return PC_OK;
}

/* X (N, C, D1..Dk), grid (N, O1..Ok, k) → (N, C, O1..Ok). */
pc_status sh_infer_grid_sample(sh_ctx *c)
{
    sh_shape x, g, y;
    pc_dtype elem = sh_in_elem(c, 0);
    bool xk = sh_in_shape(c, 0, &x), gk = sh_in_shape(c, 1, &g);
    if (!gk) {
        if (xk) unknown_dims(&y, x.rank);
        sh_set_out(c, 0, elem, xk ? &y : NULL);
        return PC_OK;
    }
    if (g.rank < 3) return sh_fail(c, "grid must have rank >= 3, has rank %d", (int)g.rank);
    if (xk && x.rank != g.rank)
        return sh_fail(c, "input has rank %d, grid rank %d", (int)x.rank, (int)g.rank);
    y.rank = g.rank;
    y.dims[0] = g.dims[0];
    if (xk) {
        if (x.dims[0].kind == PC_DIM_KNOWN) y.dims[0] = x.dims[0];
        y.dims[1] = x.dims[1];
    } else {
        sh_dim_unknown(&y.dims[1]);
    }
    for (int32_t i = 1; i < g.rank - 1; i++)
        y.dims[i + 1] = g.dims[i];
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

/* output_shape input when constant, else (in - 1) * stride - pad_begin - pad_end + kernel per spatial dim. */
pc_status sh_infer_max_unpool(sh_ctx *c)
{
    sh_shape x, y;
    pc_dtype elem = sh_in_elem(c, 0);
    int64_t os[PC_MAX_RANK];
    size_t n;
    bool has_os = sh_has_input(c, 2), os_known = has_os && sh_const_ints(c, 2, os, PC_MAX_RANK, &n);
    if (has_os && !os_known) { /* sizes known only at run time */
        int64_t len = sh_in_length(c, 2);
        y.rank = len >= 0 && len <= PC_MAX_RANK ? (int32_t)len : -1;
        for (int32_t i = 0; i < y.rank; i++)
            sh_dim_unknown(&y.dims[i]);
        sh_set_out(c, 0, elem, &y);
        return PC_OK;
    }
    if (os_known) {
        y.rank = (int32_t)n;
        for (size_t i = 0; i < n; i++) {
            if (os[i] < 0) return sh_fail(c, "output_shape[%zu] is %lld", i, (long long)os[i]);
            sh_dim_known(&y.dims[i], os[i]);
        }
        sh_set_out(c, 0, elem, &y);
        return PC_OK;
    }
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    if (x.rank < 3) return sh_fail(c, "input 0 must have rank >= 3, has rank %d", (int)x.rank);
    int32_t nsp = x.rank - 2;
    size_t nk, ns, np;
    const int64_t *k = sh_attr_ints(c, "kernel_shape", &nk), *s = sh_attr_ints(c, "strides", &ns);
    const int64_t *p = sh_attr_ints(c, "pads", &np);
    if (!k || nk != (size_t)nsp || (s && ns != (size_t)nsp) || (p && np != 2 * (size_t)nsp))
        return sh_fail_status(c, PC_ERR_ATTRIBUTE,
                              "kernel_shape, strides or pads do not match %d spatial dims", (int)nsp);
    y = x;
    for (int32_t i = 0; i < nsp; i++) {
        pc_dim *d = &y.dims[2 + i];
        if (d->kind != PC_DIM_KNOWN) {
            sh_dim_unknown(d);
            continue;
        }
        int64_t v;
        if (!sh_mul(d->size - 1, s ? s[i] : 1, &v) || !sh_add(v, k[i], &v) || !sh_add(v, p ? -p[i] : 0, &v) ||
            !sh_add(v, p ? -p[i + nsp] : 0, &v) || (p && (p[i] < 0 || p[i + nsp] < 0)))
            return sh_fail(c, "the unpooled spatial dim %d overflows", (int)i);
        if (v < 0) return sh_fail(c, "the unpooled spatial dim %d would be %lld", (int)i, (long long)v);
        sh_dim_known(d, v);
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}
