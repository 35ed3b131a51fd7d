/* Shape inference: data movement and shape ops (Transpose, Reshape, Flatten, Squeeze/Unsqueeze, Concat,
 * Split, Slice, Pad, Tile, Expand, Gather, Shape, Size, ConstantOfShape, Constant, Range,
 * DepthToSpace/SpaceToDepth, Resize). Where a shape depends on an input's values, the input must be a
 * constant (initializer or Constant). */
#include <math.h>
#include <string.h>

#include "core/shape/shape_internal.h"

static void shape_unknown_dims(sh_shape *s, int32_t rank)
{
    s->rank = rank;
    for (int32_t i = 0; i < rank; i++)
        sh_dim_unknown(&s->dims[i]);
}

/* Axes from attribute `name` (before opset `input_from`) or from input `index`: *given false when absent,
 * *known false when given by a non-constant input. */
static void read_axes(const sh_ctx *c, const char *name, int64_t input_from, uint32_t index, int64_t *axes,
                      size_t *n, bool *given, bool *known)
{
    *n = 0;
    *given = *known = false;
    if (c->opset < input_from) {
        const int64_t *a = sh_attr_ints(c, name, n);
        if (!a) return;
        *given = *known = true;
        if (*n > PC_MAX_RANK)
            *n = PC_MAX_RANK, *known = false;
        else
            memcpy(axes, a, *n * sizeof *a);
        return;
    }
    if (!sh_has_input(c, index)) return;
    *given = true;
    *known = sh_const_ints(c, index, axes, PC_MAX_RANK, n);
}

/* Normalizes axes against rank; duplicates are an error. */
static pc_status normalize_axes(sh_ctx *c, int64_t *axes, size_t n, int32_t rank, const char *what)
{
    bool seen[PC_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        int32_t a;
        pc_status st = sh_axis(c, axes[i], rank, what, &a);
        if (st != PC_OK) return st;
        if (seen[a])
            return sh_fail_status(c, PC_ERR_ATTRIBUTE, "%s %lld is repeated", what, (long long)axes[i]);
        seen[a] = true;
        axes[i] = a;
    }
    return PC_OK;
}

pc_status sh_infer_transpose(sh_ctx *c)
{
    sh_shape x, y;
    bool known = sh_in_shape(c, 0, &x);
    size_t n;
    const int64_t *perm = sh_attr_ints(c, "perm", &n);
    pc_dtype elem = sh_in_elem(c, 0);
    if (!perm && !known) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    int32_t rank = perm ? (int32_t)n : x.rank;
    if (perm && known && (int32_t)n != x.rank)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "perm has %zu entries for an input of rank %d", n,
                              (int)x.rank);
    if (rank > PC_MAX_RANK) return sh_fail_status(c, PC_ERR_ATTRIBUTE, "perm has %zu entries", n);
    bool seen[PC_MAX_RANK] = {false};
    y.rank = rank;
    for (int32_t i = 0; i < rank; i++) {
        int64_t p = perm ? perm[i] : rank - 1 - i;
        if (p < 0 || p >= rank || seen[p])
            return sh_fail_status(c, PC_ERR_ATTRIBUTE,
                                  "perm is not a permutation of 0..%d (entry %d is %lld)", (int)rank - 1,
                                  (int)i, (long long)p);
        seen[p] = true;
        if (known)
            y.dims[i] = x.dims[p];
        else
            sh_dim_unknown(&y.dims[i]);
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_reshape(sh_ctx *c)
{
    sh_shape x, y;
    bool known = sh_in_shape(c, 0, &x);
    pc_dtype elem = sh_in_elem(c, 0);
    int64_t v[PC_MAX_RANK];
    size_t n;
    if (!sh_const_ints(c, 1, v, PC_MAX_RANK, &n)) {
        int64_t len = sh_in_length(c, 1);
        if (len >= 0 && len <= PC_MAX_RANK)
            shape_unknown_dims(&y, (int32_t)len);
        else
            y.rank = -1;
        sh_set_out(c, 0, elem, &y);
        return PC_OK;
    }
    bool allowzero = c->opset >= 14 && sh_attr_int(c, "allowzero", 0) != 0;
    int32_t infer_at = -1;
    y.rank = (int32_t)n;
    for (int32_t i = 0; i < (int32_t)n; i++) {
        if (v[i] == -1) {
            if (infer_at >= 0)
                return sh_fail(c, "shape has more than one -1 (entries %d and %d)", (int)infer_at, (int)i);
            infer_at = i;
            sh_dim_unknown(&y.dims[i]);
        } else if (v[i] == 0 && !allowzero) {
            if (known && i >= x.rank)
                return sh_fail(c, "shape entry %d is 0 (copy) but the input has rank %d", (int)i,
                               (int)x.rank);
            if (known)
                y.dims[i] = x.dims[i];
            else
                sh_dim_unknown(&y.dims[i]);
        } else if (v[i] < 0) {
            return sh_fail(c, "shape entry %d is %lld", (int)i, (long long)v[i]);
        } else {
            sh_dim_known(&y.dims[i], v[i]);
        }
    }
    if (allowzero && infer_at >= 0)
        for (size_t i = 0; i < n; i++)
            if (v[i] == 0) return sh_fail(c, "shape has both 0 (with allowzero) and -1");
    pc_dim total, rest;
    if (known) {
        sh_dims_product(&x, 0, x.rank, &total);
        if (infer_at >= 0) {
            y.dims[infer_at].kind = PC_DIM_KNOWN;
            y.dims[infer_at].size = 1;
        }
        sh_dims_product(&y, 0, y.rank, &rest);
        if (infer_at >= 0) sh_dim_unknown(&y.dims[infer_at]);
        if (total.kind == PC_DIM_KNOWN && rest.kind == PC_DIM_KNOWN) {
            if (infer_at >= 0) {
                if (rest.size == 0 || total.size % rest.size)
                    return sh_fail(c, "cannot reshape %lld elements with -1 and %lld other elements",
                                   (long long)total.size, (long long)rest.size);
                sh_dim_known(&y.dims[infer_at], total.size / rest.size);
            } else if (rest.size != total.size) {
                return sh_fail(c, "cannot reshape %lld elements into %lld", (long long)total.size,
                               (long long)rest.size);
            }
        }
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_flatten(sh_ctx *c)
{
    sh_shape x, y;
    pc_dtype elem = sh_in_elem(c, 0);
    if (!sh_in_shape(c, 0, &x)) {
        shape_unknown_dims(&y, 2);
        sh_set_out(c, 0, elem, &y);
        return PC_OK;
    }
    int64_t axis = sh_attr_int(c, "axis", 1);
    if (axis < -(int64_t)x.rank || axis > x.rank)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "axis %lld is outside [-%d, %d]", (long long)axis,
                              (int)x.rank, (int)x.rank);
    int32_t a = (int32_t)(axis < 0 ? axis + x.rank : axis);
    y.rank = 2;
    sh_dims_product(&x, 0, a, &y.dims[0]);
    sh_dims_product(&x, a, x.rank, &y.dims[1]);
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_squeeze(sh_ctx *c)
{
    sh_shape x, y;
    pc_dtype elem = sh_in_elem(c, 0);
    int64_t axes[PC_MAX_RANK];
    size_t n;
    bool given, axes_known;
    read_axes(c, "axes", 13, 1, axes, &n, &given, &axes_known);
    if (!sh_in_shape(c, 0, &x) || (given && !axes_known)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    bool drop[PC_MAX_RANK] = {false};
    if (given && n > 0) {
        pc_status st = normalize_axes(c, axes, n, x.rank, "axis");
        if (st != PC_OK) return st;
        for (size_t i = 0; i < n; i++) {
            const pc_dim *d = &x.dims[axes[i]];
            if (d->kind == PC_DIM_KNOWN && d->size != 1)
                return sh_fail(c, "cannot squeeze axis %lld of size %lld", (long long)axes[i],
                               (long long)d->size);
            drop[axes[i]] = true;
        }
    } else {
        for (int32_t i = 0; i < x.rank; i++) {
            if (x.dims[i].kind != PC_DIM_KNOWN) { /* might be 1: the rank is unknown */
                sh_set_out(c, 0, elem, NULL);
                return PC_OK;
            }
            drop[i] = x.dims[i].size == 1;
        }
    }
    y.rank = 0;
    for (int32_t i = 0; i < x.rank; i++)
        if (!drop[i]) y.dims[y.rank++] = x.dims[i];
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_unsqueeze(sh_ctx *c)
{
    sh_shape x, y;
    pc_dtype elem = sh_in_elem(c, 0);
    int64_t axes[PC_MAX_RANK];
    size_t n;
    bool given, axes_known;
    read_axes(c, "axes", 13, 1, axes, &n, &given, &axes_known);
    if (!given) return sh_fail_status(c, PC_ERR_ATTRIBUTE, "axes are required");
    bool x_known = sh_in_shape(c, 0, &x);
    if (!axes_known || !x_known) {
        int64_t len = axes_known ? (int64_t)n : sh_in_length(c, 1);
        if (x_known && len >= 0 && x.rank + len <= PC_MAX_RANK) {
            shape_unknown_dims(&y, x.rank + (int32_t)len);
            sh_set_out(c, 0, elem, &y);
        } else {
            sh_set_out(c, 0, elem, NULL);
        }
        return PC_OK;
    }
    if (x.rank + (int64_t)n > PC_MAX_RANK) return sh_fail(c, "the output rank would exceed %d", PC_MAX_RANK);
    int32_t rank = x.rank + (int32_t)n;
    pc_status st = normalize_axes(c, axes, n, rank, "axis");
    if (st != PC_OK) return st;
    bool ins[PC_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++)
        ins[axes[i]] = true;
    y.rank = rank;
    for (int32_t i = 0, k = 0; i < rank; i++) {
        if (ins[i])
            sh_dim_known(&y.dims[i], 1);
        else
            y.dims[i] = x.dims[k++];
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_concat(sh_ctx *c)
{
    sh_shape y;
    pc_dtype elem = sh_in_elem(c, 0);
    int64_t axis = sh_attr_int(c, "axis", 0);
    y.rank = -1;
    int32_t a = -1;
    int64_t sum = 0;
    bool sum_known = true;
    for (uint32_t i = 0; i < c->node->n_inputs; i++) {
        sh_shape s;
        if (!sh_in_shape(c, i, &s)) {
            sum_known = false;
            continue;
        }
        if (y.rank < 0) {
            pc_status st = sh_axis(c, axis, s.rank, "axis", &a);
            if (st != PC_OK) return st;
            y = s;
        } else if (s.rank != y.rank) {
            return sh_fail(c, "input %u has rank %d, input 0 rank %d", i, (int)s.rank, (int)y.rank);
        }
        for (int32_t k = 0; k < s.rank; k++) {
            if (k == a) continue;
            pc_dim *d = &y.dims[k];
            const pc_dim *e = &s.dims[k];
            if (d->kind == PC_DIM_KNOWN && e->kind == PC_DIM_KNOWN && d->size != e->size)
                return sh_fail(c, "input %u dim %d is %lld where another input has %lld", i, (int)k,
                               (long long)e->size, (long long)d->size);
            if (d->kind != PC_DIM_KNOWN && e->kind == PC_DIM_KNOWN) *d = *e;
        }
        if (s.dims[a].kind != PC_DIM_KNOWN || !sh_add(sum, s.dims[a].size, &sum)) sum_known = false;
    }
    if (y.rank >= 0) {
        if (sum_known)
            sh_dim_known(&y.dims[a], sum);
        else
            sh_dim_unknown(&y.dims[a]);
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_split(sh_ctx *c)
{
    sh_shape x;
    pc_dtype elem = sh_in_elem(c, 0);
    uint32_t n_out = c->node->n_outputs;
    if (!sh_in_shape(c, 0, &x)) {
        for (uint32_t i = 0; i < n_out; i++)
            sh_set_out(c, i, elem, NULL);
        return PC_OK;
    }
    int32_t a;
    pc_status st = sh_axis(c, sh_attr_int(c, "axis", 0), x.rank, "axis", &a);
    if (st != PC_OK) return st;
    int64_t sizes[PC_MAX_RANK * 4];
    size_t n = 0;
    bool given = false, known = false;
    int64_t *split = NULL;
    if (c->opset < 13) {
        const int64_t *s = sh_attr_ints(c, "split", &n);
        given = known = s != NULL;
        if (s && n != n_out)
            return sh_fail_status(c, PC_ERR_ATTRIBUTE, "split has %zu entries for %u outputs", n, n_out);
        split = (int64_t *)(uintptr_t)s;
    } else if (sh_has_input(c, 1)) {
        given = true;
        known = sh_const_ints(c, 1, sizes, sizeof sizes / sizeof sizes[0], &n);
        if (known && n != n_out) return sh_fail(c, "split has %zu entries for %u outputs", n, n_out);
        split = sizes;
    }
    const pc_dim *d = &x.dims[a];
    int64_t sum = 0;
    for (uint32_t i = 0; i < n_out; i++) {
        sh_shape y = x;
        if (given && known) {
            if (split[i] < 0) return sh_fail(c, "split entry %u is %lld", i, (long long)split[i]);
            sh_dim_known(&y.dims[a], split[i]);
            sum += split[i];
        } else if (!given && d->kind == PC_DIM_KNOWN) {
            int64_t parts = n_out;
            if (c->opset >= 18 && sh_attr_int(c, "num_outputs", 0) > 0)
                parts = sh_attr_int(c, "num_outputs", 0);
            if (parts != n_out)
                return sh_fail_status(c, PC_ERR_ATTRIBUTE, "num_outputs is %lld but the node has %u outputs",
                                      (long long)parts, n_out);
            int64_t chunk = d->size / parts + (d->size % parts != 0);
            if (c->opset < 18 && d->size % parts)
                return sh_fail(c, "dim %d of size %lld does not split evenly into %u outputs", (int)a,
                               (long long)d->size, n_out);
            int64_t left = d->size - chunk * (int64_t)i;
            if (left < 0) left = 0;
            sh_dim_known(&y.dims[a], left < chunk ? left : chunk);
        } else {
            sh_dim_unknown(&y.dims[a]);
        }
        sh_set_out(c, i, elem, &y);
    }
    if (given && known && d->kind == PC_DIM_KNOWN && sum != d->size)
        return sh_fail(c, "split sizes add up to %lld, the dim is %lld", (long long)sum, (long long)d->size);
    return PC_OK;
}

int64_t sh_slice_count(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first)
{
    /* an empty axis has nothing to take whatever the bounds: the negative-step clamps below would otherwise
     * make [0, -1] a one-element range */
    if (dim == 0) {
        *first = 0;
        return 0;
    }
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
        *first = start;
        return end > start ? (end - start - 1) / step + 1 : 0;
    }
    start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    *first = start;
    /* -step overflows for INT64_MIN; any step that large takes one element */
    return start > end ? (step == INT64_MIN ? 0 : (start - end - 1) / -step) + 1 : 0;
}

pc_status sh_infer_slice(sh_ctx *c)
{
    sh_shape x;
    pc_dtype elem = sh_in_elem(c, 0);
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    int64_t starts[PC_MAX_RANK], ends[PC_MAX_RANK], axes[PC_MAX_RANK], steps[PC_MAX_RANK];
    size_t ns = 0, ne = 0, na = 0, nst = 0;
    bool ok;
    if (c->opset < 10) {
        const int64_t *s = sh_attr_ints(c, "starts", &ns), *e = sh_attr_ints(c, "ends", &ne);
        const int64_t *a = sh_attr_ints(c, "axes", &na);
        ok = s && e && ns <= PC_MAX_RANK && ne <= PC_MAX_RANK && na <= PC_MAX_RANK;
        if (ok) {
            memcpy(starts, s, ns * sizeof *s);
            memcpy(ends, e, ne * sizeof *e);
            if (a) memcpy(axes, a, na * sizeof *a);
        }
        nst = 0;
    } else {
        ok = sh_const_ints(c, 1, starts, PC_MAX_RANK, &ns) && sh_const_ints(c, 2, ends, PC_MAX_RANK, &ne) &&
             (!sh_has_input(c, 3) || sh_const_ints(c, 3, axes, PC_MAX_RANK, &na)) &&
             (!sh_has_input(c, 4) || sh_const_ints(c, 4, steps, PC_MAX_RANK, &nst));
    }
    sh_shape y = x;
    if (!ok) { /* which axes change is unknown unless axes are constant */
        size_t nax = 0;
        if (c->opset >= 10 && sh_has_input(c, 3) && sh_const_ints(c, 3, axes, PC_MAX_RANK, &nax) &&
            normalize_axes(c, axes, nax, x.rank, "axis") == PC_OK) {
            for (size_t i = 0; i < nax; i++)
                sh_dim_unknown(&y.dims[axes[i]]);
        } else {
            shape_unknown_dims(&y, x.rank);
        }
        sh_set_out(c, 0, elem, &y);
        return PC_OK;
    }
    if (ns != ne) return sh_fail(c, "starts has %zu entries, ends %zu", ns, ne);
    bool has_axes = c->opset < 10 ? na > 0 || sh_attr_ints(c, "axes", &na) != NULL : sh_has_input(c, 3);
    if (has_axes && na != ns) return sh_fail(c, "axes has %zu entries, starts %zu", na, ns);
    if (c->opset >= 10 && sh_has_input(c, 4) && nst != ns)
        return sh_fail(c, "steps has %zu entries, starts %zu", nst, ns);
    if (!has_axes)
        for (size_t i = 0; i < ns; i++)
            axes[i] = (int64_t)i;
    pc_status st = normalize_axes(c, axes, ns, x.rank, "axis");
    if (st != PC_OK) return st;
    for (size_t i = 0; i < ns; i++) {
        int64_t step = c->opset >= 10 && sh_has_input(c, 4) ? steps[i] : 1;
        if (step == 0) return sh_fail(c, "step %zu is 0", i);
        pc_dim *d = &y.dims[axes[i]];
        if (d->kind != PC_DIM_KNOWN)
            sh_dim_unknown(d);
        else {
            int64_t first;
            sh_dim_known(d, sh_slice_count(d->size, starts[i], ends[i], step, &first));
        }
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_pad(sh_ctx *c)
{
    sh_shape x;
    pc_dtype elem = sh_in_elem(c, 0);
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    int64_t pads[2 * PC_MAX_RANK], axes[PC_MAX_RANK];
    size_t np = 0, na = 0;
    bool ok;
    if (c->opset < 11) {
        const int64_t *p = sh_attr_ints(c, "pads", &np);
        ok = p && np <= 2 * PC_MAX_RANK;
        if (ok) memcpy(pads, p, np * sizeof *p);
    } else {
        ok = sh_const_ints(c, 1, pads, 2 * PC_MAX_RANK, &np);
    }
    bool has_axes = c->opset >= 18 && sh_has_input(c, 3);
    if (ok && has_axes) ok = sh_const_ints(c, 3, axes, PC_MAX_RANK, &na);
    sh_shape y = x;
    if (!ok) {
        shape_unknown_dims(&y, x.rank);
        sh_set_out(c, 0, elem, &y);
        return PC_OK;
    }
    if (!has_axes) {
        na = (size_t)x.rank;
        for (size_t i = 0; i < na; i++)
            axes[i] = (int64_t)i;
    }
    if (np != 2 * na) return sh_fail(c, "pads has %zu entries, expected %zu", np, 2 * na);
    pc_status st = normalize_axes(c, axes, na, x.rank, "axis");
    if (st != PC_OK) return st;
    for (size_t i = 0; i < na; i++) {
        pc_dim *d = &y.dims[axes[i]];
        if (d->kind != PC_DIM_KNOWN) {
            sh_dim_unknown(d);
            continue;
        }
        int64_t v;
        if (!sh_add(d->size, pads[i], &v) || !sh_add(v, pads[i + na], &v))
            return sh_fail(c, "axis %lld overflows after padding", (long long)axes[i]);
        if (v < 0)
            return sh_fail(c, "axis %lld would have size %lld after padding", (long long)axes[i],
                           (long long)v);
        sh_dim_known(d, v);
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_tile(sh_ctx *c)
{
    sh_shape x;
    pc_dtype elem = sh_in_elem(c, 0);
    bool known = sh_in_shape(c, 0, &x);
    int64_t r[PC_MAX_RANK];
    size_t n;
    if (!sh_const_ints(c, 1, r, PC_MAX_RANK, &n)) {
        if (known) shape_unknown_dims(&x, x.rank);
        sh_set_out(c, 0, elem, &x);
        return PC_OK;
    }
    if (!known) shape_unknown_dims(&x, (int32_t)n);
    if ((size_t)x.rank != n)
        return sh_fail(c, "repeats has %zu entries for an input of rank %d", n, (int)x.rank);
    for (size_t i = 0; i < n; i++) {
        if (r[i] < 0) return sh_fail(c, "repeats[%zu] is %lld", i, (long long)r[i]);
        pc_dim *d = &x.dims[i];
        if (r[i] == 1) continue;
        if (d->kind == PC_DIM_KNOWN && (r[i] == 0 || d->size <= INT64_MAX / r[i]))
            sh_dim_known(d, d->size * r[i]);
        else if (r[i] == 0)
            sh_dim_known(d, 0);
        else
            sh_dim_unknown(d);
    }
    sh_set_out(c, 0, elem, &x);
    return PC_OK;
}

pc_status sh_infer_expand(sh_ctx *c)
{
    sh_shape x, s, y;
    pc_dtype elem = sh_in_elem(c, 0);
    sh_in_shape(c, 0, &x);
    int64_t v[PC_MAX_RANK];
    size_t n;
    if (!sh_const_ints(c, 1, v, PC_MAX_RANK, &n)) {
        int64_t len = sh_in_length(c, 1);
        if (x.rank >= 0 && len >= 0 && len <= PC_MAX_RANK)
            shape_unknown_dims(&y, x.rank > len ? x.rank : (int32_t)len);
        else
            y.rank = -1;
        sh_set_out(c, 0, elem, &y);
        return PC_OK;
    }
    s.rank = (int32_t)n;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < 0) return sh_fail(c, "shape entry %zu is %lld", i, (long long)v[i]);
        sh_dim_known(&s.dims[i], v[i]);
    }
    pc_status st = sh_broadcast(c, &x, &s, &y);
    if (st == PC_OK) sh_set_out(c, 0, elem, &y);
    return st;
}

pc_status sh_infer_gather(sh_ctx *c)
{
    sh_shape x, idx, y;
    pc_dtype elem = sh_in_elem(c, 0);
    if (!sh_in_shape(c, 0, &x) || !sh_in_shape(c, 1, &idx)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    int32_t a;
    pc_status st = sh_axis(c, sh_attr_int(c, "axis", 0), x.rank, "axis", &a);
    if (st != PC_OK) return st;
    if ((int64_t)x.rank - 1 + idx.rank > PC_MAX_RANK)
        return sh_fail(c, "the output rank exceeds %d", PC_MAX_RANK);
    y.rank = 0;
    for (int32_t i = 0; i < a; i++)
        y.dims[y.rank++] = x.dims[i];
    for (int32_t i = 0; i < idx.rank; i++)
        y.dims[y.rank++] = idx.dims[i];
    for (int32_t i = a + 1; i < x.rank; i++)
        y.dims[y.rank++] = x.dims[i];
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_gather_elements(sh_ctx *c)
{
    sh_shape idx;
    sh_in_shape(c, 1, &idx);
    sh_set_out(c, 0, sh_in_elem(c, 0), &idx);
    return PC_OK;
}

pc_status sh_infer_shape(sh_ctx *c)
{
    sh_shape x, y;
    y.rank = 1;
    sh_dim_unknown(&y.dims[0]);
    if (sh_in_shape(c, 0, &x)) {
        int64_t r = x.rank, start = c->opset >= 15 ? sh_attr_int(c, "start", 0) : 0;
        int64_t end = c->opset >= 15 ? sh_attr_int(c, "end", r) : r;
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = start < 0 ? 0 : start > r ? r : start;
        end = end < 0 ? 0 : end > r ? r : end;
        sh_dim_known(&y.dims[0], end > start ? end - start : 0);
    }
    sh_set_out(c, 0, PC_DTYPE_INT64, &y);
    return PC_OK;
}

pc_status sh_infer_size(sh_ctx *c)
{
    sh_shape y = {.rank = 0};
    sh_set_out(c, 0, PC_DTYPE_INT64, &y);
    return PC_OK;
}

pc_status sh_infer_constant_of_shape(sh_ctx *c)
{
    const pc_attr *value = pc_node_attr(c->node, "value");
    pc_dtype elem = value && value->type == PC_ATTR_TENSOR && value->t ? value->t->dtype : PC_DTYPE_FLOAT;
    int64_t v[PC_MAX_RANK];
    size_t n;
    sh_shape y;
    if (sh_const_ints(c, 0, v, PC_MAX_RANK, &n)) {
        y.rank = (int32_t)n;
        for (size_t i = 0; i < n; i++) {
            if (v[i] < 0) return sh_fail(c, "shape entry %zu is %lld", i, (long long)v[i]);
            sh_dim_known(&y.dims[i], v[i]);
        }
    } else {
        int64_t len = sh_in_length(c, 0);
        if (len >= 0 && len <= PC_MAX_RANK)
            shape_unknown_dims(&y, (int32_t)len);
        else
            y.rank = -1;
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

pc_status sh_infer_constant(sh_ctx *c)
{
    sh_shape y = {.rank = 0};
    for (uint32_t i = 0; i < c->node->n_attrs; i++) {
        const pc_attr *a = &c->node->attrs[i];
        pc_dtype elem;
        y.rank = 0;
        switch (a->type) {
        case PC_ATTR_TENSOR:
            if (strcmp(a->name, "value") != 0 || !a->t) continue;
            elem = a->t->dtype;
            y.rank = a->t->rank;
            for (int32_t k = 0; k < y.rank; k++)
                sh_dim_known(&y.dims[k], a->t->dims[k]);
            break;
        case PC_ATTR_FLOAT:
            elem = PC_DTYPE_FLOAT;
            break;
        case PC_ATTR_INT:
            elem = PC_DTYPE_INT64;
            break;
        case PC_ATTR_STRING:
            elem = PC_DTYPE_STRING;
            break;
        case PC_ATTR_FLOATS:
            elem = PC_DTYPE_FLOAT, y.rank = 1, sh_dim_known(&y.dims[0], (int64_t)a->n);
            break;
        case PC_ATTR_INTS:
            elem = PC_DTYPE_INT64, y.rank = 1, sh_dim_known(&y.dims[0], (int64_t)a->n);
            break;
        case PC_ATTR_STRINGS:
            elem = PC_DTYPE_STRING, y.rank = 1, sh_dim_known(&y.dims[0], (int64_t)a->n);
            break;
        default:
            continue; /* sparse_value: not inferred */
        }
        sh_set_out(c, 0, elem, &y);
        return PC_OK;
    }
    return PC_OK;
}

/* Range: max(ceil((limit - start) / delta), 0) elements, computed in the element type as the spec does. */
pc_status sh_infer_range(sh_ctx *c)
{
    pc_dtype elem = sh_in_elem(c, 0);
    sh_shape y;
    shape_unknown_dims(&y, 1);
    int64_t is[1], il[1], id[1];
    double fs[1], fl[1], fd[1];
    size_t n1, n2, n3;
    if (sh_const_ints(c, 0, is, 1, &n1) && sh_const_ints(c, 1, il, 1, &n2) &&
        sh_const_ints(c, 2, id, 1, &n3) && n1 == 1 && n2 == 1 && n3 == 1) {
        if (id[0] == 0) return sh_fail_status(c, PC_ERR_VALUE, "delta is 0");
        /* exact: ceil division of magnitudes in uint64, so no difference overflows */
        uint64_t span = 0, step = id[0] > 0 ? (uint64_t)id[0] : 0 - (uint64_t)id[0];
        if (id[0] > 0 && il[0] > is[0]) span = (uint64_t)il[0] - (uint64_t)is[0];
        if (id[0] < 0 && il[0] < is[0]) span = (uint64_t)is[0] - (uint64_t)il[0];
        uint64_t n = span ? (span - 1) / step + 1 : 0;
        if (n > INT64_MAX)
            return sh_fail_status(c, PC_ERR_VALUE, "Range would have %llu elements", (unsigned long long)n);
        sh_dim_known(&y.dims[0], (int64_t)n);
    } else if (sh_const_floats(c, 0, fs, 1, &n1) && sh_const_floats(c, 1, fl, 1, &n2) &&
               sh_const_floats(c, 2, fd, 1, &n3) && n1 == 1 && n2 == 1 && n3 == 1) {
        if (fd[0] == 0) return sh_fail_status(c, PC_ERR_VALUE, "delta is 0");
        double q = elem == PC_DTYPE_FLOAT ? ceil((double)(((float)fl[0] - (float)fs[0]) / (float)fd[0]))
                                          : ceil((fl[0] - fs[0]) / fd[0]);
        if (!(q < 0x1p62)) return sh_fail_status(c, PC_ERR_VALUE, "Range would have %g elements", q);
        sh_dim_known(&y.dims[0], q > 0 ? (int64_t)q : 0);
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

static pc_status space_depth(sh_ctx *c, bool to_space)
{
    sh_shape x;
    pc_dtype elem = sh_in_elem(c, 0);
    if (!sh_in_shape(c, 0, &x)) {
        shape_unknown_dims(&x, 4);
        sh_set_out(c, 0, elem, &x);
        return PC_OK;
    }
    if (x.rank != 4) return sh_fail(c, "input 0 must have rank 4, has rank %d", (int)x.rank);
    int64_t b = sh_attr_int(c, "blocksize", 0);
    if (b <= 0 || b > (1 << 20)) return sh_fail_status(c, PC_ERR_ATTRIBUTE, "blocksize %lld", (long long)b);
    pc_dim *ch = &x.dims[1];
    if (ch->kind == PC_DIM_KNOWN) {
        if (to_space && ch->size % (b * b))
            return sh_fail(c, "channels %lld are not a multiple of blocksize^2 = %lld", (long long)ch->size,
                           (long long)(b * b));
        int64_t v = ch->size / (b * b);
        if (!to_space && !sh_mul(ch->size, b * b, &v)) return sh_fail(c, "channels overflow");
        sh_dim_known(ch, v);
    } else {
        sh_dim_unknown(ch);
    }
    for (int i = 2; i < 4; i++) {
        pc_dim *d = &x.dims[i];
        if (d->kind != PC_DIM_KNOWN) {
            sh_dim_unknown(d);
            continue;
        }
        if (!to_space && d->size % b)
            return sh_fail(c, "dim %d of size %lld is not a multiple of blocksize %lld", i,
                           (long long)d->size, (long long)b);
        int64_t v = d->size / b;
        if (to_space && !sh_mul(d->size, b, &v)) return sh_fail(c, "dim %d overflows", i);
        sh_dim_known(d, v);
    }
    sh_set_out(c, 0, elem, &x);
    return PC_OK;
}

pc_status sh_infer_depth_to_space(sh_ctx *c)
{
    return space_depth(c, true);
}

pc_status sh_infer_space_to_depth(sh_ctx *c)
{
    return space_depth(c, false);
}

/* Resize: constant scales (floor(in * scale)) or sizes; opset 18's axes attribute. keep_aspect_ratio_policy
 * other than "stretch" is not inferred (dims left unknown). */
pc_status sh_infer_resize(sh_ctx *c)
{
    sh_shape x;
    pc_dtype elem = sh_in_elem(c, 0);
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    sh_shape y = x;
    int64_t axes[PC_MAX_RANK];
    size_t na = 0;
    const int64_t *ax = c->opset >= 18 ? sh_attr_ints(c, "axes", &na) : NULL;
    if (ax) {
        if (na > (size_t)x.rank) return sh_fail_status(c, PC_ERR_ATTRIBUTE, "axes has %zu entries", na);
        memcpy(axes, ax, na * sizeof *ax);
        pc_status st = normalize_axes(c, axes, na, x.rank, "axis");
        if (st != PC_OK) return st;
    } else {
        na = (size_t)x.rank;
        for (size_t i = 0; i < na; i++)
            axes[i] = (int64_t)i;
    }
    uint32_t scales_at = c->opset < 11 ? 1 : 2;
    double scales[PC_MAX_RANK];
    int64_t sizes[PC_MAX_RANK];
    size_t n = 0;
    const char *policy = pc_node_attr_string(c->node, "keep_aspect_ratio_policy", "stretch");
    bool stretch = c->opset < 18 || strcmp(policy, "stretch") == 0;
    if (c->opset >= 11 && sh_has_input(c, 3) && sh_const_ints(c, 3, sizes, PC_MAX_RANK, &n) && n > 0) {
        if (n != na) return sh_fail(c, "sizes has %zu entries, expected %zu", n, na);
        for (size_t i = 0; i < n; i++) {
            if (sizes[i] < 0) return sh_fail(c, "sizes[%zu] is %lld", i, (long long)sizes[i]);
            if (stretch)
                sh_dim_known(&y.dims[axes[i]], sizes[i]);
            else
                sh_dim_unknown(&y.dims[axes[i]]);
        }
    } else if (sh_has_input(c, scales_at) && sh_const_floats(c, scales_at, scales, PC_MAX_RANK, &n) &&
               n > 0) {
        if (n != na) return sh_fail(c, "scales has %zu entries, expected %zu", n, na);
        for (size_t i = 0; i < n; i++) {
            if (!(scales[i] > 0) || !isfinite(scales[i]))
                return sh_fail_status(c, PC_ERR_VALUE, "scales[%zu] = %g is not positive", i, scales[i]);
            pc_dim *d = &y.dims[axes[i]];
            if (d->kind != PC_DIM_KNOWN) {
                if (scales[i] != 1) sh_dim_unknown(d);
                continue;
            }
            double v = floor(scales[i] * (double)d->size);
            if (!(v < 0x1p62)) return sh_fail(c, "output dim %lld would be %g", (long long)axes[i], v);
            sh_dim_known(d, (int64_t)v);
        }
    } else {
        shape_unknown_dims(&y, x.rank);
    }
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}

/* TopK: values and int64 indices, dim `axis` becomes k (input 1 from opset 10, attribute before). */
pc_status sh_infer_top_k(sh_ctx *c)
{
    sh_shape x;
    pc_dtype elem = sh_in_elem(c, 0);
    if (sh_in_shape(c, 0, &x)) {
        int32_t a;
        pc_status st = sh_axis(c, sh_attr_int(c, "axis", -1), x.rank, "axis", &a);
        if (st != PC_OK) return st;
        int64_t k[1];
        size_t n = 0;
        bool known =
            c->opset < 10 ? (k[0] = sh_attr_int(c, "k", -1)) >= 0 : sh_const_ints(c, 1, k, 1, &n) && n == 1;
        if (known && k[0] < 0) return sh_fail(c, "k is %lld", (long long)k[0]);
        if (known && x.dims[a].kind == PC_DIM_KNOWN && k[0] > x.dims[a].size)
            return sh_fail(c, "k = %lld is larger than dim %d (%lld)", (long long)k[0], (int)a,
                           (long long)x.dims[a].size);
        if (known)
            sh_dim_known(&x.dims[a], k[0]);
        else
            sh_dim_unknown(&x.dims[a]);
    }
    sh_set_out(c, 0, elem, &x);
    if (c->n_out > 1) sh_set_out(c, 1, PC_DTYPE_INT64, &x);
    return PC_OK;
}

/* EyeLike: input 0's shape, in `dtype` (input 0's type when absent). */
pc_status sh_infer_eye_like(sh_ctx *c)
{
    sh_shape x;
    sh_in_shape(c, 0, &x);
    int64_t dt = sh_attr_int(c, "dtype", 0);
    if (dt && (!pc_dtype_is_valid((int32_t)dt) || dt != (int32_t)dt))
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "dtype %lld is not an element type", (long long)dt);
    sh_set_out(c, 0, dt ? (pc_dtype)dt : sh_in_elem(c, 0), &x);
    return PC_OK;
}

/* NonZero: int64 [rank, count]; the count depends on the data. */
pc_status sh_infer_non_zero(sh_ctx *c)
{
    sh_shape x, y;
    shape_unknown_dims(&y, 2);
    if (sh_in_shape(c, 0, &x)) sh_dim_known(&y.dims[0], x.rank);
    sh_set_out(c, 0, PC_DTYPE_INT64, &y);
    return PC_OK;
}

/* OneHot(indices, depth, values): depth inserted at `axis` (in [-r-1, r]), values' element type. */
pc_status sh_infer_one_hot(sh_ctx *c)
{
    sh_shape x, y;
    pc_dtype elem = sh_in_elem(c, 2);
    if (!sh_in_shape(c, 0, &x)) {
        sh_set_out(c, 0, elem, NULL);
        return PC_OK;
    }
    if (x.rank >= PC_MAX_RANK) return sh_fail(c, "the output rank would exceed %d", PC_MAX_RANK);
    int32_t a;
    pc_status st = sh_axis(c, sh_attr_int(c, "axis", -1), x.rank + 1, "axis", &a);
    if (st != PC_OK) return st;
    double depth[1];
    int64_t idepth[1];
    size_t n;
    pc_dim d;
    sh_dim_unknown(&d);
    if (sh_const_ints(c, 1, idepth, 1, &n) && n == 1)
        sh_dim_known(&d, idepth[0]);
    else if (sh_const_floats(c, 1, depth, 1, &n) && n == 1 && depth[0] >= 0 && depth[0] < 0x1p62)
        sh_dim_known(&d, (int64_t)depth[0]);
    if (d.kind == PC_DIM_KNOWN && d.size < 0) return sh_fail(c, "depth is %lld", (long long)d.size);
    y.rank = x.rank + 1;
    for (int32_t i = 0, k = 0; i < y.rank; i++)
        y.dims[i] = i == a ? d : x.dims[k++];
    sh_set_out(c, 0, elem, &y);
    return PC_OK;
}
