/* Constant evaluator: shape ops and data movement. Elements are copied by size, so every handled dtype shares
 * one path. */
#include <math.h>
#include <string.h>

#include "core/eval/eval_internal.h"

static pc_status copy_as(ev_ctx *c, const pc_tensor *x, int32_t rank, const int64_t *dims)
{
    pc_tensor *y = ev_new_out(c, 0, x->dtype, rank, dims);
    if (!y) return c->err->status;
    if (y->n_elements != x->n_elements)
        return ev_fail(c, PC_ERR_SHAPE, "%llu elements cannot become %llu", (unsigned long long)x->n_elements,
                       (unsigned long long)y->n_elements);
    if (x->n_bytes) memcpy(y->data, x->data, x->n_bytes);
    return PC_OK;
}

pc_status ev_identity(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    return st != PC_OK ? st : copy_as(c, c->in[0], c->in[0]->rank, c->in[0]->dims);
}

pc_status ev_shape(ev_ctx *c)
{
    const pc_tensor *x = ev_in(c, 0);
    if (!x) return ev_fail(c, PC_ERR_ARITY, "input 0 is missing");
    int64_t r = x->rank, start = 0, end = r;
    if (c->opset >= 15) {
        start = pc_node_attr_int(c->node, "start", 0);
        end = pc_node_attr_int(c->node, "end", r);
    }
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t n = end > start ? end - start : 0;
    pc_tensor *y = ev_new_out(c, 0, PC_DTYPE_INT64, 1, &n);
    if (!y) return c->err->status;
    if (n) memcpy(y->data, x->dims + start, (size_t)n * sizeof(int64_t));
    return PC_OK;
}

pc_status ev_size(ev_ctx *c)
{
    const pc_tensor *x = ev_in(c, 0);
    if (!x) return ev_fail(c, PC_ERR_ARITY, "input 0 is missing");
    pc_tensor *y = ev_new_out(c, 0, PC_DTYPE_INT64, 0, NULL);
    if (!y) return c->err->status;
    int64_t n = (int64_t)x->n_elements;
    memcpy(y->data, &n, sizeof n);
    return PC_OK;
}

pc_status ev_gather(ev_ctx *c)
{
    const ev_dtype *it;
    pc_status st = ev_need(c, 0, NULL);
    if (st == PC_OK) st = ev_need(c, 1, &it);
    if (st != PC_OK) return st;
    const pc_tensor *x = c->in[0], *ind = c->in[1];
    if (ind->dtype != PC_DTYPE_INT32 && ind->dtype != PC_DTYPE_INT64)
        return ev_fail(c, PC_ERR_TYPE, "indices must be int32 or int64, are %s", pc_dtype_name(ind->dtype));
    int32_t a;
    if ((st = ev_axis(c, pc_node_attr_int(c->node, "axis", 0), x->rank, "axis", &a)) != PC_OK) return st;
    if ((int64_t)x->rank - 1 + ind->rank > PC_MAX_RANK)
        return ev_fail(c, PC_ERR_SHAPE, "output rank too large");
    int64_t dims[PC_MAX_RANK];
    int32_t rank = 0;
    for (int32_t k = 0; k < a; k++)
        dims[rank++] = x->dims[k];
    for (int32_t k = 0; k < ind->rank; k++)
        dims[rank++] = ind->dims[k];
    for (int32_t k = a + 1; k < x->rank; k++)
        dims[rank++] = x->dims[k];
    int64_t axis_n = x->dims[a];
    uint64_t outer = 1, inner = 1;
    for (int32_t k = 0; k < a; k++)
        outer *= (uint64_t)x->dims[k];
    for (int32_t k = a + 1; k < x->rank; k++)
        inner *= (uint64_t)x->dims[k];
    for (uint64_t j = 0; j < ind->n_elements; j++) { /* checked before the output exists */
        int64_t v = it->load_i(ind->data, j);
        if (v < -axis_n || v >= axis_n)
            return ev_fail(c, PC_ERR_VALUE, "index %lld (element %llu) is outside [-%lld, %lld)",
                           (long long)v, (unsigned long long)j, (long long)axis_n, (long long)axis_n);
    }
    pc_tensor *y = ev_new_out(c, 0, x->dtype, rank, dims);
    if (!y) return c->err->status;
    uint64_t k = 0;
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t j = 0; j < ind->n_elements; j++) {
            int64_t v = it->load_i(ind->data, j);
            uint64_t src = (o * (uint64_t)axis_n + (uint64_t)(v < 0 ? v + axis_n : v)) * inner;
            for (uint64_t i = 0; i < inner; i++)
                ev_copy_elem(y, k++, x, src + i);
        }
    return PC_OK;
}

pc_status ev_concat(ev_ctx *c)
{
    if (c->n_in == 0) return ev_fail(c, PC_ERR_ARITY, "at least one input is required");
    pc_status st;
    for (uint32_t i = 0; i < c->n_in; i++)
        if ((st = ev_need(c, i, NULL)) != PC_OK) return st;
    const pc_tensor *x0 = c->in[0];
    int32_t a;
    if ((st = ev_axis(c, pc_node_attr_int(c->node, "axis", 0), x0->rank, "axis", &a)) != PC_OK) return st;
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x0->dims, (size_t)x0->rank * sizeof *dims);
    dims[a] = 0;
    for (uint32_t i = 0; i < c->n_in; i++) {
        const pc_tensor *t = c->in[i];
        if (t->dtype != x0->dtype || t->rank != x0->rank)
            return ev_fail(c, PC_ERR_TYPE, "input %u is %s of rank %d, input 0 %s of rank %d", i,
                           pc_dtype_name(t->dtype), (int)t->rank, pc_dtype_name(x0->dtype), (int)x0->rank);
        for (int32_t k = 0; k < t->rank; k++)
            if (k != a && t->dims[k] != x0->dims[k])
                return ev_fail(c, PC_ERR_SHAPE, "input %u dim %d is %lld, input 0 has %lld", i, (int)k,
                               (long long)t->dims[k], (long long)x0->dims[k]);
        dims[a] += t->dims[a];
    }
    pc_tensor *y = ev_new_out(c, 0, x0->dtype, x0->rank, dims);
    if (!y) return c->err->status;
    uint64_t outer = 1, inner = 1, k = 0;
    for (int32_t d = 0; d < a; d++)
        outer *= (uint64_t)dims[d];
    for (int32_t d = a + 1; d < x0->rank; d++)
        inner *= (uint64_t)dims[d];
    for (uint64_t o = 0; o < outer; o++)
        for (uint32_t i = 0; i < c->n_in; i++) {
            uint64_t run = (uint64_t)c->in[i]->dims[a] * inner;
            for (uint64_t e = 0; e < run; e++)
                ev_copy_elem(y, k++, c->in[i], o * run + e);
        }
    return PC_OK;
}

pc_status ev_reshape(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    if (st == PC_OK) st = ev_need(c, 1, NULL);
    if (st != PC_OK) return st;
    const pc_tensor *x = c->in[0];
    int64_t v[PC_MAX_RANK];
    size_t n;
    if ((st = ev_read_ints(c, c->in[1], "shape", v, PC_MAX_RANK, &n)) != PC_OK) return st;
    bool allowzero = c->opset >= 14 && pc_node_attr_int(c->node, "allowzero", 0) != 0;
    int32_t infer = -1;
    uint64_t rest = 1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == 0 && !allowzero) {
            if ((int32_t)i >= x->rank)
                return ev_fail(c, PC_ERR_SHAPE, "shape entry %zu copies a dim the input (rank %d) lacks", i,
                               (int)x->rank);
            v[i] = x->dims[i];
        }
        if (v[i] == -1) {
            if (infer >= 0) return ev_fail(c, PC_ERR_SHAPE, "shape has more than one -1");
            infer = (int32_t)i;
            continue;
        }
        if (v[i] < 0) return ev_fail(c, PC_ERR_SHAPE, "shape entry %zu is %lld", i, (long long)v[i]);
        if (!pc_u64_mul(rest, (uint64_t)v[i], &rest))
            return ev_fail(c, PC_ERR_SHAPE, "shape product overflows");
    }
    if (infer >= 0) {
        if (rest == 0 || x->n_elements % rest)
            return ev_fail(c, PC_ERR_SHAPE, "cannot infer -1: %llu elements, %llu in the other dims",
                           (unsigned long long)x->n_elements, (unsigned long long)rest);
        v[infer] = (int64_t)(x->n_elements / rest);
    }
    return copy_as(c, x, (int32_t)n, v);
}

pc_status ev_flatten(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    if (st != PC_OK) return st;
    const pc_tensor *x = c->in[0];
    int64_t axis = pc_node_attr_int(c->node, "axis", 1);
    if (axis < -(int64_t)x->rank || axis > x->rank)
        return ev_fail(c, PC_ERR_ATTRIBUTE, "axis %lld is outside [-%d, %d]", (long long)axis, (int)x->rank,
                       (int)x->rank);
    if (axis < 0) axis += x->rank;
    int64_t dims[2] = {1, 1};
    for (int32_t k = 0; k < x->rank; k++)
        dims[k < axis ? 0 : 1] *= x->dims[k];
    return copy_as(c, x, 2, dims);
}

/* Axes of Squeeze/Unsqueeze: an attribute before opset 13, input 1 after. */
static pc_status read_axes(ev_ctx *c, int64_t *axes, size_t *n, bool *given)
{
    *n = 0;
    if (c->opset < 13) {
        const pc_attr *a = pc_node_attr(c->node, "axes");
        *given = a && a->type == PC_ATTR_INTS;
        if (*given && a->n > PC_MAX_RANK) return ev_fail(c, PC_ERR_ATTRIBUTE, "axes has %zu entries", a->n);
        if (*given) memcpy(axes, a->ints, (*n = a->n) * sizeof *axes);
        return PC_OK;
    }
    *given = ev_in(c, 1) != NULL;
    return *given ? ev_read_ints(c, c->in[1], "axes", axes, PC_MAX_RANK, n) : PC_OK;
}

pc_status ev_squeeze(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    if (st != PC_OK) return st;
    const pc_tensor *x = c->in[0];
    int64_t axes[PC_MAX_RANK], dims[PC_MAX_RANK];
    size_t n;
    bool given, drop[PC_MAX_RANK] = {false};
    if ((st = read_axes(c, axes, &n, &given)) != PC_OK) return st;
    for (int32_t k = 0; k < x->rank; k++)
        drop[k] = !given && x->dims[k] == 1;
    for (size_t i = 0; i < n; i++) {
        int32_t a;
        if ((st = ev_axis(c, axes[i], x->rank, "axis", &a)) != PC_OK) return st;
        if (x->dims[a] != 1)
            return ev_fail(c, PC_ERR_SHAPE, "cannot squeeze axis %lld of size %lld", (long long)axes[i],
                           (long long)x->dims[a]);
        drop[a] = true;
    }
    int32_t rank = 0;
    for (int32_t k = 0; k < x->rank; k++)
        if (!drop[k]) dims[rank++] = x->dims[k];
    return copy_as(c, x, rank, dims);
}

pc_status ev_unsqueeze(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    if (st != PC_OK) return st;
    const pc_tensor *x = c->in[0];
    int64_t axes[PC_MAX_RANK], dims[PC_MAX_RANK];
    size_t n;
    bool given, ins[PC_MAX_RANK] = {false};
    if ((st = read_axes(c, axes, &n, &given)) != PC_OK) return st;
    if (!given) return ev_fail(c, PC_ERR_ATTRIBUTE, "axes are required");
    if ((size_t)x->rank + n > PC_MAX_RANK)
        return ev_fail(c, PC_ERR_SHAPE, "output rank exceeds %d", PC_MAX_RANK);
    int32_t rank = x->rank + (int32_t)n;
    for (size_t i = 0; i < n; i++) {
        int32_t a;
        if ((st = ev_axis(c, axes[i], rank, "axis", &a)) != PC_OK) return st;
        if (ins[a]) return ev_fail(c, PC_ERR_ATTRIBUTE, "axis %lld is repeated", (long long)axes[i]);
        ins[a] = true;
    }
    for (int32_t k = 0, j = 0; k < rank; k++)
        dims[k] = ins[k] ? 1 : x->dims[j++];
    return copy_as(c, x, rank, dims);
}

pc_status ev_transpose(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    if (st != PC_OK) return st;
    const pc_tensor *x = c->in[0];
    int32_t r = x->rank;
    int64_t perm[PC_MAX_RANK], dims[PC_MAX_RANK], strides[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    const pc_attr *pa = pc_node_attr(c->node, "perm");
    bool seen[PC_MAX_RANK] = {false};
    if (pa && (pa->type != PC_ATTR_INTS || pa->n != (size_t)r))
        return ev_fail(c, PC_ERR_ATTRIBUTE, "perm must list %d axes", (int)r);
    for (int32_t k = 0; k < r; k++) {
        perm[k] = pa ? pa->ints[k] : r - 1 - k;
        if (perm[k] < 0 || perm[k] >= r || seen[perm[k]])
            return ev_fail(c, PC_ERR_ATTRIBUTE, "perm is not a permutation of 0..%d", (int)r - 1);
        seen[perm[k]] = true;
    }
    int64_t s = 1;
    for (int32_t k = r - 1; k >= 0; k--) {
        strides[k] = s;
        s *= x->dims[k];
    }
    for (int32_t k = 0; k < r; k++)
        dims[k] = x->dims[perm[k]];
    pc_tensor *y = ev_new_out(c, 0, x->dtype, r, dims);
    if (!y) return c->err->status;
    for (uint64_t k = 0; k < y->n_elements; k++, ev_index_next(r, dims, idx)) {
        uint64_t src = 0;
        for (int32_t d = 0; d < r; d++)
            src += (uint64_t)(idx[d] * strides[perm[d]]);
        ev_copy_elem(y, k, x, src);
    }
    return PC_OK;
}

pc_status ev_slice(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    if (st != PC_OK) return st;
    const pc_tensor *x = c->in[0];
    int32_t r = x->rank;
    int64_t starts[PC_MAX_RANK], ends[PC_MAX_RANK], axes[PC_MAX_RANK], steps[PC_MAX_RANK];
    size_t ns, ne, na = 0, nst = 0;
    bool has_axes, has_steps = false;
    if (c->opset < 10) {
        const pc_attr *s = pc_node_attr(c->node, "starts"), *e = pc_node_attr(c->node, "ends");
        const pc_attr *a = pc_node_attr(c->node, "axes");
        if (!s || !e || s->type != PC_ATTR_INTS || e->type != PC_ATTR_INTS || s->n > PC_MAX_RANK ||
            e->n > PC_MAX_RANK || (a && (a->type != PC_ATTR_INTS || a->n > PC_MAX_RANK)))
            return ev_fail(c, PC_ERR_ATTRIBUTE, "starts and ends (and axes) must be int lists");
        memcpy(starts, s->ints, (ns = s->n) * sizeof *starts);
        memcpy(ends, e->ints, (ne = e->n) * sizeof *ends);
        has_axes = a != NULL;
        if (a) memcpy(axes, a->ints, (na = a->n) * sizeof *axes);
    } else {
        if ((st = ev_need(c, 1, NULL)) != PC_OK || (st = ev_need(c, 2, NULL)) != PC_OK ||
            (st = ev_read_ints(c, c->in[1], "starts", starts, PC_MAX_RANK, &ns)) != PC_OK ||
            (st = ev_read_ints(c, c->in[2], "ends", ends, PC_MAX_RANK, &ne)) != PC_OK)
            return st;
        has_axes = ev_in(c, 3) != NULL;
        has_steps = ev_in(c, 4) != NULL;
        if (has_axes && (st = ev_read_ints(c, c->in[3], "axes", axes, PC_MAX_RANK, &na)) != PC_OK) return st;
        if (has_steps && (st = ev_read_ints(c, c->in[4], "steps", steps, PC_MAX_RANK, &nst)) != PC_OK)
            return st;
    }
    if (ne != ns || (has_axes && na != ns) || (has_steps && nst != ns))
        return ev_fail(c, PC_ERR_SHAPE, "starts, ends, axes and steps differ in length");
    int64_t first[PC_MAX_RANK], step[PC_MAX_RANK], dims[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    bool seen[PC_MAX_RANK] = {false};
    for (int32_t k = 0; k < r; k++)
        first[k] = 0, step[k] = 1, dims[k] = x->dims[k];
    for (size_t i = 0; i < ns; i++) {
        int32_t a;
        if ((st = ev_axis(c, has_axes ? axes[i] : (int64_t)i, r, "axis", &a)) != PC_OK) return st;
        if (seen[a]) return ev_fail(c, PC_ERR_ATTRIBUTE, "axis %d is repeated", (int)a);
        seen[a] = true;
        int64_t dim = x->dims[a], s = has_steps ? steps[i] : 1, b = starts[i], e = ends[i];
        if (s == 0) return ev_fail(c, PC_ERR_VALUE, "step %zu is 0", i);
        if (b < 0) b += dim;
        if (e < 0) e += dim;
        int64_t cnt;
        if (s > 0) {
            b = b < 0 ? 0 : b > dim ? dim : b;
            e = e < 0 ? 0 : e > dim ? dim : e;
            cnt = e > b ? (e - b - 1) / s + 1 : 0;
        } else {
            b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            cnt = b > e ? (b - e - 1) / (s == INT64_MIN ? INT64_MAX : -s) + 1 : 0;
        }
        first[a] = b;
        step[a] = s;
        dims[a] = cnt;
    }
    pc_tensor *y = ev_new_out(c, 0, x->dtype, r, dims);
    if (!y) return c->err->status;
    for (uint64_t k = 0; k < y->n_elements; k++, ev_index_next(r, dims, idx)) {
        uint64_t src = 0;
        for (int32_t d = 0; d < r; d++)
            src = src * (uint64_t)x->dims[d] + (uint64_t)(first[d] + idx[d] * step[d]);
        ev_copy_elem(y, k, x, src);
    }
    return PC_OK;
}

/* Range: n = max(ceil((limit - start) / delta), 0) (in float32 precision for float/float16, exactly for
 * integers); element i = start + i * delta. */
pc_status ev_range(ev_ctx *c)
{
    const ev_dtype *dt;
    pc_status st;
    for (uint32_t i = 0; i < 3; i++) {
        if ((st = ev_need(c, i, &dt)) != PC_OK) return st;
        if (c->in[i]->dtype != c->in[0]->dtype || c->in[i]->n_elements != 1)
            return ev_fail(c, PC_ERR_TYPE, "start, limit and delta must be scalars of one type");
    }
    if (dt->is_unsigned) return ev_fail(c, PC_ERR_TYPE, "Range of %s", pc_dtype_name(dt->dtype));
    int64_t n;
    if (dt->is_float) {
        double s = dt->load_f(c->in[0]->data, 0), l = dt->load_f(c->in[1]->data, 0),
               d = dt->load_f(c->in[2]->data, 0);
        if (d == 0) return ev_fail(c, PC_ERR_VALUE, "delta is 0");
        double q = dt->dtype == PC_DTYPE_DOUBLE ? (l - s) / d : (double)(((float)l - (float)s) / (float)d);
        if (!isfinite(q)) return ev_fail(c, PC_ERR_VALUE, "the element count is %g", q);
        q = ceil(q);
        if (q > (double)c->max_elements)
            return ev_fail(c, PC_ERR_BUDGET, "Range of %.0f elements, more than the limit %llu", q,
                           (unsigned long long)c->max_elements);
        n = q > 0 ? (int64_t)q : 0;
        pc_tensor *y = ev_new_out(c, 0, dt->dtype, 1, &n);
        if (!y) return c->err->status;
        for (int64_t i = 0; i < n; i++)
            dt->store_f(y->data, (uint64_t)i, s + (double)i * d);
        return PC_OK;
    }
    int64_t s = dt->load_i(c->in[0]->data, 0), l = dt->load_i(c->in[1]->data, 0),
            d = dt->load_i(c->in[2]->data, 0);
    if (d == 0) return ev_fail(c, PC_ERR_VALUE, "delta is 0");
    uint64_t span = 0, step = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
    if (d > 0 && l > s) span = (uint64_t)l - (uint64_t)s;
    if (d < 0 && l < s) span = (uint64_t)s - (uint64_t)l;
    uint64_t cnt = span ? (span - 1) / step + 1 : 0;
    if (cnt > c->max_elements)
        return ev_fail(c, PC_ERR_BUDGET, "Range of %llu elements, more than the limit %llu",
                       (unsigned long long)cnt, (unsigned long long)c->max_elements);
    n = (int64_t)cnt;
    pc_tensor *y = ev_new_out(c, 0, dt->dtype, 1, &n);
    if (!y) return c->err->status;
    for (uint64_t i = 0; i < cnt; i++)
        dt->store_i(y->data, i, (int64_t)((uint64_t)s + i * (uint64_t)d));
    return PC_OK;
}

pc_status ev_constant_of_shape(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    if (st != PC_OK) return st;
    int64_t dims[PC_MAX_RANK];
    size_t n;
    if ((st = ev_read_ints(c, c->in[0], "shape", dims, PC_MAX_RANK, &n)) != PC_OK) return st;
    if (c->in[0]->dtype != PC_DTYPE_INT64) return ev_fail(c, PC_ERR_TYPE, "shape must be int64");
    const pc_attr *a = pc_node_attr(c->node, "value");
    const pc_tensor *v = a && a->type == PC_ATTR_TENSOR ? a->t : NULL;
    if (v && (v->n_elements != 1 || !ev_dtype_of(v->dtype)))
        return ev_fail(c, PC_ERR_UNSUPPORTED, "value must be a one-element tensor of a handled type");
    pc_tensor *y = ev_new_out(c, 0, v ? v->dtype : PC_DTYPE_FLOAT, (int32_t)n, dims);
    if (!y) return c->err->status;
    for (uint64_t k = 0; v && k < y->n_elements; k++)
        ev_copy_elem(y, k, v, 0);
    return PC_OK;
}

pc_status ev_expand(ev_ctx *c)
{
    pc_status st = ev_need(c, 0, NULL);
    if (st == PC_OK) st = ev_need(c, 1, NULL);
    if (st != PC_OK) return st;
    const pc_tensor *x = c->in[0];
    int64_t shape[PC_MAX_RANK], dims[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    size_t n;
    if ((st = ev_read_ints(c, c->in[1], "shape", shape, PC_MAX_RANK, &n)) != PC_OK) return st;
    for (size_t i = 0; i < n; i++)
        if (shape[i] < 0) return ev_fail(c, PC_ERR_SHAPE, "shape entry %zu is %lld", i, (long long)shape[i]);
    pc_tensor shape_t = {.rank = (int32_t)n, .dims = shape};
    const pc_tensor *both[2] = {x, &shape_t};
    int32_t rank;
    if ((st = ev_broadcast_shape(c, 2, both, &rank, dims)) != PC_OK) return st;
    pc_tensor *y = ev_new_out(c, 0, x->dtype, rank, dims);
    if (!y) return c->err->status;
    for (uint64_t k = 0; k < y->n_elements; k++, ev_index_next(rank, dims, idx))
        ev_copy_elem(y, k, x, ev_bcast_offset(x, rank, idx));
    return PC_OK;
}

pc_status ev_constant(ev_ctx *c)
{
    for (uint32_t i = 0; i < c->node->n_attrs; i++) {
        const pc_attr *a = &c->node->attrs[i];
        pc_tensor *y;
        int64_t n = (int64_t)a->n;
        switch (a->type) {
        case PC_ATTR_TENSOR:
            if (strcmp(a->name, "value") != 0 || !a->t) continue;
            if (!ev_dtype_of(a->t->dtype))
                return ev_fail(c, PC_ERR_UNSUPPORTED, "value of type %s", pc_dtype_name(a->t->dtype));
            return copy_as(c, a->t, a->t->rank, a->t->dims);
        case PC_ATTR_FLOAT:
            if (!(y = ev_new_out(c, 0, PC_DTYPE_FLOAT, 0, NULL))) return c->err->status;
            memcpy(y->data, &a->f, sizeof a->f);
            return PC_OK;
        case PC_ATTR_INT:
            if (!(y = ev_new_out(c, 0, PC_DTYPE_INT64, 0, NULL))) return c->err->status;
            memcpy(y->data, &a->i, sizeof a->i);
            return PC_OK;
        case PC_ATTR_FLOATS:
            if (!(y = ev_new_out(c, 0, PC_DTYPE_FLOAT, 1, &n))) return c->err->status;
            if (n) memcpy(y->data, a->floats, a->n * sizeof *a->floats);
            return PC_OK;
        case PC_ATTR_INTS:
            if (!(y = ev_new_out(c, 0, PC_DTYPE_INT64, 1, &n))) return c->err->status;
            if (n) memcpy(y->data, a->ints, a->n * sizeof *a->ints);
            return PC_OK;
        default:
            continue;
        }
    }
    return ev_fail(c, PC_ERR_UNSUPPORTED, "no value attribute the evaluator handles (strings, sparse)");
}
