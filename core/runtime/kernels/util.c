/* Helpers every kernel family uses: the kernel lookup over the family tables, broadcast strides, list
 * attributes, the fused activations of FusedConv/FusedGemm, and sgemm split over the session's threads. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

typedef struct family {
    const pc_rt_kernel *rows;
    const size_t *n;
} family;

static const family families[] = {
    {pc_rt_kernels_elementwise, &pc_rt_n_kernels_elementwise},
    {pc_rt_kernels_conv, &pc_rt_n_kernels_conv},
    {pc_rt_kernels_nn, &pc_rt_n_kernels_nn},
    {pc_rt_kernels_movement, &pc_rt_n_kernels_movement},
    {pc_rt_kernels_resize, &pc_rt_n_kernels_resize},
    {pc_rt_kernels_reduce, &pc_rt_n_kernels_reduce},
    {pc_rt_kernels_quant, &pc_rt_n_kernels_quant},
    {pc_rt_kernels_blocked, &pc_rt_n_kernels_blocked},
};

const pc_rt_kernel *pc_rt_kernel_find(const pc_node *node, int64_t opset, pc_dtype in0)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (size_t i = 0; i < *families[f].n; i++) {
            const pc_rt_kernel *k = &families[f].rows[i];
            if (!pc_name_eq(k->op_type, node->op_type) || !pc_name_eq(k->domain, node->domain)) continue;
            if (opset < k->min_opset || opset > k->max_opset) continue;
            if (k->types && (in0 <= PC_DTYPE_UNDEFINED || in0 >= 64 || !(k->types & RT_TYPE(in0)))) continue;
            return k;
        }
    return NULL;
}

void pc_rt_broadcast_strides(const pc_rt_tensor *t, const pc_rt_tensor *out, int64_t *strides)
{
    int32_t off = out->rank - t->rank;
    for (int32_t d = 0; d < off; d++)
        strides[d] = 0;
    int64_t s = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        strides[off + d] = t->dims[d] == 1 ? 0 : s;
        s = (int64_t)((uint64_t)s * (uint64_t)t->dims[d]);
    }
}

const int64_t *pc_rt_attr_ints(const pc_node *node, const char *name, size_t *n)
{
    const pc_attr *a = pc_node_attr(node, name);
    if (!a || a->type != PC_ATTR_INTS) {
        *n = 0;
        return NULL;
    }
    *n = a->n;
    return a->ints;
}

pc_status pc_rt_read_int(pc_rt_kernel_ctx *k, const char *name, int64_t fallback, int64_t *out)
{
    const pc_attr *a = pc_node_attr(k->node, name);
    *out = a && a->type == PC_ATTR_INT ? a->i : fallback;
    if (a && a->type != PC_ATTR_INT)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute '%s' must be an int", name);
    return PC_OK;
}

pc_status pc_rt_read_ints(pc_rt_kernel_ctx *k, const char *name, size_t n, int64_t lo, bool required,
                          int64_t *dst)
{
    size_t got;
    const int64_t *v = pc_rt_attr_ints(k->node, name, &got);
    if (!v) {
        if (pc_node_attr(k->node, name))
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute '%s' must be a list of ints", name);
        return required ? pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute '%s' is required", name) : PC_OK;
    }
    if (got != n)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute '%s' has %zu values, expected %zu", name,
                            got, n);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < lo || v[i] >= PC_RT_ATTR_LIMIT)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "attribute '%s' value %lld is out of range [%lld, 2^31)", name,
                                (long long)v[i], (long long)lo);
        dst[i] = v[i];
    }
    return PC_OK;
}

pc_status pc_rt_read_float(pc_rt_kernel_ctx *k, const char *name, float fallback, float *out)
{
    const pc_attr *a = pc_node_attr(k->node, name);
    *out = a && a->type == PC_ATTR_FLOAT ? a->f : fallback;
    if (a && a->type != PC_ATTR_FLOAT)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute '%s' must be a float", name);
    return PC_OK;
}

pc_status pc_rt_read_lrn(pc_rt_kernel_ctx *k, pc_rt_lrn *p)
{
    pc_status st;
    if (!pc_node_attr(k->node, "size"))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'size' is required");
    if ((st = pc_rt_read_int(k, "size", 1, &p->size)) != PC_OK ||
        (st = pc_rt_read_float(k, "alpha", 1e-4f, &p->alpha)) != PC_OK ||
        (st = pc_rt_read_float(k, "beta", 0.75f, &p->beta)) != PC_OK ||
        (st = pc_rt_read_float(k, "bias", 1.0f, &p->bias)) != PC_OK)
        return st;
    if (p->size < 1 || p->size >= PC_RT_ATTR_LIMIT)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'size' must be positive, got %lld",
                            (long long)p->size);
    p->before = (p->size - 1) / 2;
    p->after = p->size - 1 - p->before;
    return PC_OK;
}

pc_status pc_rt_read_auto_pad(pc_rt_kernel_ctx *k, pc_rt_auto_pad *mode)
{
    const pc_attr *a = pc_node_attr(k->node, "auto_pad");
    if (a && a->type != PC_ATTR_STRING)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'auto_pad' must be a string");
    const char *ap = pc_node_attr_string(k->node, "auto_pad", "NOTSET");
    if (!*ap || strcmp(ap, "NOTSET") == 0)
        *mode = PC_RT_PAD_NOTSET;
    else if (strcmp(ap, "VALID") == 0)
        *mode = PC_RT_PAD_VALID;
    else if (strcmp(ap, "SAME_UPPER") == 0)
        *mode = PC_RT_PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0)
        *mode = PC_RT_PAD_SAME_LOWER;
    else
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'auto_pad' has unknown value '%s'", ap);
    return PC_OK;
}

pc_status pc_rt_require_out_dims(pc_rt_kernel_ctx *k, int32_t rank, const int64_t *dims)
{
    const pc_rt_tensor *y = k->out[0];
    if (y->rank != rank)
        return pc_error_set(k->err, PC_ERR_SHAPE, "output 0 has rank %d; the kernel computes rank %d",
                            (int)y->rank, (int)rank);
    for (int32_t i = 0; i < rank; i++)
        if (y->dims[i] != dims[i])
            return pc_error_set(k->err, PC_ERR_SHAPE, "output 0 has dim %d = %lld; the kernel computes %lld",
                                (int)i, (long long)y->dims[i], (long long)dims[i]);
    return PC_OK;
}

/* activation_params as ORT's FusedConv takes them: LeakyRelu alpha; Clip min, max; HardSigmoid alpha, beta */
static float param(const pc_node *node, size_t i, float fallback)
{
    const pc_attr *a = pc_node_attr(node, "activation_params");
    return a && a->type == PC_ATTR_FLOATS && i < a->n ? a->floats[i] : fallback;
}

pc_status pc_rt_activation_check(const pc_node *node, pc_error *err)
{
    const char *act = pc_node_attr_string(node, "activation", NULL);
    static const char *const known[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "HardSigmoid"};
    if (!act) return PC_OK;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(act, known[i]) == 0) return PC_OK;
    return pc_error_set(err, PC_ERR_UNSUPPORTED, "activation '%s' is not one the runtime fuses", act);
}

pc_rt_act pc_rt_activation_get(const pc_node *node)
{
    const char *act = pc_node_attr_string(node, "activation", NULL);
    pc_rt_act a = {PC_RT_ACT_NONE, 0.0f, 0.0f};
    if (!act) return a;
    if (strcmp(act, "Relu") == 0) {
        a.kind = PC_RT_ACT_RELU;
    } else if (strcmp(act, "Sigmoid") == 0) {
        a.kind = PC_RT_ACT_SIGMOID;
    } else if (strcmp(act, "Tanh") == 0) {
        a.kind = PC_RT_ACT_TANH;
    } else if (strcmp(act, "LeakyRelu") == 0) {
        a = (pc_rt_act){PC_RT_ACT_LEAKY_RELU, param(node, 0, 0.01f), 0.0f};
    } else if (strcmp(act, "Clip") == 0) {
        a = (pc_rt_act){PC_RT_ACT_CLIP, param(node, 0, -INFINITY), param(node, 1, INFINITY)};
    } else if (strcmp(act, "HardSigmoid") == 0) {
        a = (pc_rt_act){PC_RT_ACT_HARD_SIGMOID, param(node, 0, 0.2f), param(node, 1, 0.5f)};
    }
    return a;
}

PC_RT_WIDE static void act_apply(const pc_rt_act *act, float *x, uint64_t n)
{
    switch (act->kind) {
    case PC_RT_ACT_NONE:
        break;
    case PC_RT_ACT_RELU:
        for (uint64_t i = 0; i < n; i++)
            x[i] = x[i] > 0.0f ? x[i] : x[i] <= 0.0f ? 0.0f : x[i]; /* NaN stays NaN, as Relu's own kernel */
        break;
    case PC_RT_ACT_SIGMOID:
        for (uint64_t i = 0; i < n; i++)
            x[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    case PC_RT_ACT_TANH:
        for (uint64_t i = 0; i < n; i++)
            x[i] = tanhf(x[i]);
        break;
    case PC_RT_ACT_LEAKY_RELU:
        for (uint64_t i = 0; i < n; i++)
            x[i] = x[i] >= 0.0f ? x[i] : act->a * x[i];
        break;
    case PC_RT_ACT_CLIP: {
        float lo = act->a, hi = act->b;
        for (uint64_t i = 0; i < n; i++)
            x[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
        break;
    }
    case PC_RT_ACT_HARD_SIGMOID:
        for (uint64_t i = 0; i < n; i++) {
            float v = act->a * x[i] + act->b;
            x[i] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        break;
    }
}

void pc_rt_act_apply(const pc_rt_act *act, float *x, uint64_t n)
{
    act_apply(act, x, n);
}

void pc_rt_activation_apply(const pc_node *node, float *x, uint64_t n)
{
    pc_rt_act a = pc_rt_activation_get(node);
    pc_rt_act_apply(&a, x, n);
}

typedef struct sgemm_task {
    bool ta, tb, by_cols;
    int64_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const float *a, *b;
    float *c;
} sgemm_task;

static void sgemm_part(void *arg, int64_t lo, int64_t hi, int part)
{
    (void)part;
    const sgemm_task *t = arg;
    const float *a = t->a, *b = t->b;
    float *c = t->c;
    int64_t m = t->m, n = t->n;
    if (t->by_cols) { /* columns lo..hi of B (and C) */
        b += t->tb ? lo * t->ldb : lo;
        c += lo;
        n = hi - lo;
    } else { /* rows lo..hi of A (and C) */
        a += t->ta ? lo : lo * t->lda;
        c += lo * t->ldc;
        m = hi - lo;
    }
    cblas_sgemm(CblasRowMajor, t->ta ? CblasTrans : CblasNoTrans, t->tb ? CblasTrans : CblasNoTrans, (int)m,
                (int)n, (int)t->k, t->alpha, a, (int)t->lda, b, (int)t->ldb, t->beta, c, (int)t->ldc);
}

/* Below about a million multiply-adds, or with fewer than 64 rows or columns per thread to split, a product
 * runs whole: waking the workers would cost more. */
enum { SGEMM_MIN_MADDS = 1 << 20, SGEMM_MIN_SPLIT = 64 };

void pc_rt_sgemm(const pc_rt_kernel_ctx *k, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t kk,
                 float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                 int64_t ldc)
{
    /* a product with one row or one column is a matrix-vector product: OpenBLAS's sgemm is several times
     * slower there than its sgemv (a batch-1 fully connected layer, 1000 x 512: 0.41 ms against 0.03 ms) */
    if ((m == 1 || n == 1) && kk > 0 && beta == 0.0f) /* y = 0 * y keeps a stale NaN in some BLAS builds */
        for (int64_t i = 0; i < (m == 1 ? n : m); i++)
            c[i * (m == 1 ? 1 : ldc)] = 0.0f;
    if (m == 1 && kk > 0) { /* c[1, n] = a[1, k] B' : y = B'^T a */
        if (trans_b)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)kk, alpha, b, (int)ldb, a,
                        trans_a ? (int)lda : 1, beta, c, 1);
        else
            cblas_sgemv(CblasRowMajor, CblasTrans, (int)kk, (int)n, alpha, b, (int)ldb, a,
                        trans_a ? (int)lda : 1, beta, c, 1);
        return;
    }
    if (n == 1 && kk > 0) { /* c[m, 1] = A' b[k, 1] */
        if (trans_a)
            cblas_sgemv(CblasRowMajor, CblasTrans, (int)kk, (int)m, alpha, a, (int)lda, b,
                        trans_b ? 1 : (int)ldb, beta, c, (int)ldc);
        else
            cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)kk, alpha, a, (int)lda, b,
                        trans_b ? 1 : (int)ldb, beta, c, (int)ldc);
        return;
    }
    sgemm_task t = {trans_a, trans_b, n >= m, m, n, kk, lda, ldb, ldc, alpha, beta, a, b, c};
    int64_t along = t.by_cols ? n : m;
    if (!k->pool || (double)m * (double)n * (double)kk < SGEMM_MIN_MADDS)
        sgemm_part(&t, 0, along, 0);
    else
        pc_rt_parallel_for(k, along, SGEMM_MIN_SPLIT, sgemm_part, &t);
}
