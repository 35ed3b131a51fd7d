/* Reference ops: data movement and shape ops — Identity, Constant, Reshape, Flatten, Squeeze, Unsqueeze,
 * Transpose, Concat, Split, Slice, Gather*, Scatter*, Expand, Tile, Pad, DepthToSpace, SpaceToDepth, Shape,
 * Size, ConstantOfShape, Range, OneHot, NonZero, Compress, Trilu, EyeLike, ReverseSequence, Resize, Upsample,
 * Unique.
 *
 * Data movement is written once for every element type: a kernel works out, for each output element, which
 * input element it is, and copies it with ref_copy_elem (strings included). Only arithmetic (scatter
 * reductions, Range, Resize interpolation) goes through ref_get_f64/ref_get_i64. Sizes that come from tensor
 * values are checked before anything is allocated: negative dims are SHAPE errors, outputs over 2^31 elements
 * are BUDGET errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

#define KERNEL(Name)                                                                                         \
    static pc_status op_##Name(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)

/* ---- helpers
 * ------------------------------------------------------------------------------------------------- */

/* Element types a kernel can move one element at a time: whole bytes, or strings. Packed sub-byte types are
 * not. */
static bool movable_dtype(pc_dtype t)
{
    unsigned bits = pc_dtype_bits(t);
    return t == PC_DTYPE_STRING || (bits >= 8 && bits % 8 == 0);
}

/* Input i must be present, a tensor, of a movable element type. */
static pc_status need_data(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, uint32_t i)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, i);
    if (st != PC_OK) return st;
    if (!movable_dtype(in[i]->dtype))
        return ref_unsupported(
            ctx, "input %u has element type %s (packed sub-byte types are not moved element-wise)", i,
            pc_dtype_name(in[i]->dtype));
    return PC_OK;
}

static bool has_input(pc_data *const *in, uint32_t n_in, uint32_t i)
{
    return i < n_in && in[i] != NULL;
}

/* Reads a signed integer tensor (shapes, axes, indices: the spec allows int32/int64 there; unsigned values
 * above INT64_MAX would silently turn negative) into a malloc'ed int64 array the caller frees. */
static pc_status read_signed(ref_ctx *ctx, const pc_data *t, const char *what, int64_t **vals, size_t *n)
{
    *vals = NULL;
    *n = 0;
    if (t->kind == PC_TYPE_TENSOR && !ref_is_signed(t->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "%s must be a signed integer tensor, got %s", what,
                        pc_dtype_name(t->dtype));
    return ref_read_ints(ctx, t, what, vals, n);
}

/* Reads signed integer input i (required). */
static pc_status int_input(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, uint32_t i, const char *what,
                           int64_t **vals, size_t *n)
{
    *vals = NULL;
    *n = 0;
    pc_status st = ref_require_tensor(ctx, in, n_in, i);
    if (st != PC_OK) return st;
    return read_signed(ctx, in[i], what, vals, n);
}

static pc_status copy_at(ref_ctx *ctx, pc_data *dst, uint64_t di, const pc_data *src, uint64_t si)
{
    if (ref_copy_elem(dst, di, src, si)) return PC_OK;
    return ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying a string element");
}

/* Unrefs d and passes st through: `return drop(y, st);` on error paths. */
static pc_status drop(pc_data *d, pc_status st)
{
    pc_data_unref(d);
    return st;
}

/* Product of dims[from, to). Exact for a non-empty tensor (it is at most its element count); an empty tensor
 * may have other huge dims, so the product wraps (unsigned, defined) and callers skip loops over empty
 * tensors. */
static int64_t prod(const int64_t *dims, int32_t from, int32_t to)
{
    uint64_t p = 1;
    for (int32_t i = from; i < to; i++)
        p *= (uint64_t)dims[i];
    return (int64_t)p;
}

/* Fills dst (all of it, row-major) from src: the element at output multi-index idx is src[base + sum idx[d] *
 * sstr[d]]. Transpose, Slice and Expand are this with different strides. */
static pc_status copy_strided(ref_ctx *ctx, pc_data *dst, const pc_data *src, int64_t base,
                              const int64_t *sstr)
{
    int64_t idx[PC_MAX_RANK] = {0};
    int64_t off = base;
    for (uint64_t i = 0; i < dst->n_elements; i++) {
        pc_status st = copy_at(ctx, dst, i, src, (uint64_t)off);
        if (st != PC_OK) return st;
        for (int32_t d = dst->rank - 1; d >= 0; d--) {
            off += sstr[d];
            if (++idx[d] < dst->dims[d]) break;
            off -= sstr[d] * dst->dims[d];
            idx[d] = 0;
        }
    }
    return PC_OK;
}

/* Advances a row-major multi-index. */
static void index_next(int32_t rank, const int64_t *dims, int64_t *idx)
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d]) return;
        idx[d] = 0;
    }
}

/* Normalizes index v into [0, n) allowing [-n, n); VALUE error naming `what` otherwise. */
static pc_status norm_index(ref_ctx *ctx, int64_t v, int64_t n, const char *what, int64_t *out)
{
    if (v < -n || v >= n)
        return ref_fail(ctx, PC_ERR_VALUE, "%s value %lld is out of range [%lld, %lld)", what, (long long)v,
                        (long long)-n, (long long)n);
    *out = v < 0 ? v + n : v;
    return PC_OK;
}

/* Axes from a list (attribute or input) normalized against rank; duplicates rejected. mark[axis] set for
 * each. */
static pc_status read_axes(ref_ctx *ctx, const int64_t *axes, size_t n, int32_t rank, const char *what,
                           bool *mark, int32_t *norm)
{
    for (int32_t d = 0; d < rank; d++)
        mark[d] = false;
    for (size_t k = 0; k < n; k++) {
        int32_t a;
        if (axes[k] < -(int64_t)rank || axes[k] >= rank)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "%s value %lld is out of range for rank %d", what,
                            (long long)axes[k], (int)rank);
        a = (int32_t)(axes[k] < 0 ? axes[k] + rank : axes[k]);
        if (mark[a]) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "%s repeats axis %d", what, (int)a);
        mark[a] = true;
        if (norm) norm[k] = a;
    }
    return PC_OK;
}

static bool set_string(pc_data *t, uint64_t i, const uint8_t *s, size_t len)
{
    pc_bytes *b = &((pc_bytes *)t->data)[i];
    uint8_t *copy = NULL;
    if (len) {
        if (!(copy = malloc(len))) return false;
        memcpy(copy, s, len);
    }
    free(b->data);
    b->data = copy;
    b->len = len;
    return true;
}

/* ---- Identity, Constant
 * -------------------------------------------------------------------------------------- */

/* Values are immutable once produced, so Identity shares its input (tensor, sequence or optional alike). */
KERNEL(Identity)
{
    (void)n_out;
    if (n_in < 1 || !in[0]) return ref_fail(ctx, PC_ERR_ARITY, "input 0 is required");
    out[0] = pc_data_ref(in[0]);
    return PC_OK;
}

static pc_data *constant_list(ref_ctx *ctx, const pc_attr *a)
{
    bool list = a->type == PC_ATTR_FLOATS || a->type == PC_ATTR_INTS || a->type == PC_ATTR_STRINGS;
    int64_t n = list ? (int64_t)a->n : 1;
    pc_dtype dt = a->type == PC_ATTR_FLOAT || a->type == PC_ATTR_FLOATS ? PC_DTYPE_FLOAT
                  : a->type == PC_ATTR_INT || a->type == PC_ATTR_INTS   ? PC_DTYPE_INT64
                                                                        : PC_DTYPE_STRING;
    pc_data *y = ref_new_tensor(ctx, dt, list ? 1 : 0, &n);
    if (!y) return NULL;
    for (int64_t i = 0; i < n; i++) {
        switch (a->type) {
        case PC_ATTR_FLOAT:
            ref_set_f64(y, 0, a->f);
            break;
        case PC_ATTR_FLOATS:
            ref_set_f64(y, (uint64_t)i, a->floats[i]);
            break;
        case PC_ATTR_INT:
            ref_set_i64(y, 0, a->i);
            break;
        case PC_ATTR_INTS:
            ref_set_i64(y, (uint64_t)i, a->ints[i]);
            break;
        default: {
            const pc_bytes *s = a->type == PC_ATTR_STRING ? &a->s : &a->strings[i];
            if (!set_string(y, (uint64_t)i, s->data, s->len)) {
                pc_data_unref(y);
                ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying attribute '%s'", a->name);
                return NULL;
            }
        }
        }
    }
    return y;
}

KERNEL(Constant)
{
    (void)in;
    (void)n_in;
    (void)n_out;
    static const struct {
        const char *name;
        pc_attr_type type;
    } kinds[] = {{"value", PC_ATTR_TENSOR},          {"value_float", PC_ATTR_FLOAT},
                 {"value_floats", PC_ATTR_FLOATS},   {"value_int", PC_ATTR_INT},
                 {"value_ints", PC_ATTR_INTS},       {"value_string", PC_ATTR_STRING},
                 {"value_strings", PC_ATTR_STRINGS}, {"sparse_value", PC_ATTR_SPARSE_TENSOR}};
    const pc_attr *a = NULL;
    for (uint32_t i = 0; i < ctx->node->n_attrs; i++) {
        const pc_attr *c = &ctx->node->attrs[i];
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            if (strcmp(c->name, kinds[k].name) != 0) continue;
            if (c->type != kinds[k].type)
                return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' must be of type %s, not %s", c->name,
                                pc_attr_type_name(kinds[k].type), pc_attr_type_name(c->type));
            if (a)
                return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                                "attributes '%s' and '%s' both given; exactly one is allowed", a->name,
                                c->name);
            a = c;
        }
    }
    if (!a)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "no value attribute (value, value_float(s), value_int(s), "
                        "value_string(s)) given");
    if (a->type == PC_ATTR_SPARSE_TENSOR) return ref_unsupported(ctx, "attribute 'sparse_value'");
    if (a->type != PC_ATTR_TENSOR) {
        out[0] = constant_list(ctx, a);
        return out[0] ? PC_OK : ctx->err->status;
    }
    if (!a->t) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'value' holds no tensor");
    /* A copy that owns its data: graph outputs may outlive the model. */
    pc_error e;
    pc_data *w = pc_data_wrap_tensor(a->t, &e);
    pc_data *y = w ? pc_data_clone(w, &e) : NULL;
    pc_data_unref(w);
    if (!y) return ref_fail(ctx, e.status, "attribute 'value': %s", e.message);
    out[0] = y;
    return PC_OK;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze
 * -------------------------------------------------------------------- */

KERNEL(Reshape)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int64_t *shape = NULL;
    size_t n = 0;
    if (ctx->opset < 5) { /* shape was an attribute before opset 5 */
        const int64_t *a = ref_attr_ints(ctx, "shape", &n);
        if (!a) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'shape' is required");
        if (!(shape = malloc(n ? n * sizeof *shape : 1))) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        memcpy(shape, a, n * sizeof *shape);
    } else if ((st = int_input(ctx, in, n_in, 1, "input 1 'shape'", &shape, &n)) != PC_OK) {
        return st;
    }
    bool allowzero = ctx->opset >= 14 && ref_attr_int(ctx, "allowzero", 0) != 0;
    int64_t dims[PC_MAX_RANK];
    int32_t infer = -1;
    uint64_t known = 1;
    bool overflow = false;
    if (n > PC_MAX_RANK) {
        free(shape);
        return ref_fail(ctx, PC_ERR_SHAPE, "'shape' has %zu entries (rank limit %d)", n, PC_MAX_RANK);
    }
    for (size_t i = 0; i < n && st == PC_OK; i++) {
        int64_t v = shape[i];
        if (v == 0 && !allowzero) {
            if ((int32_t)i >= x->rank)
                st = ref_fail(ctx, PC_ERR_SHAPE,
                              "shape[%zu] = 0 copies input dimension %zu, but the input has rank %d", i, i,
                              (int)x->rank);
            else
                v = x->dims[i];
        } else if (v == -1) {
            if (infer >= 0)
                st = ref_fail(ctx, PC_ERR_SHAPE, "'shape' has more than one -1 (entries %d and %zu)",
                              (int)infer, i);
            infer = (int32_t)i;
            continue;
        } else if (v < 0) {
            st = ref_fail(ctx, PC_ERR_SHAPE, "shape[%zu] = %lld is invalid", i, (long long)v);
        }
        dims[i] = v;
        if (!pc_u64_mul(known, (uint64_t)v, &known)) overflow = true;
    }
    free(shape);
    if (st != PC_OK) return st;
    char buf[96];
    if (overflow) return ref_fail(ctx, PC_ERR_SHAPE, "'shape' element count overflows");
    if (infer >= 0) {
        if (known == 0 || x->n_elements % known != 0)
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "cannot infer the -1 dimension: input %s, other dimensions multiply "
                            "to %llu",
                            pc_data_describe(x, buf, sizeof buf), (unsigned long long)known);
        dims[infer] = (int64_t)(x->n_elements / known);
    } else if (known != x->n_elements) {
        return ref_fail(ctx, PC_ERR_SHAPE, "cannot reshape %s to %llu elements",
                        pc_data_describe(x, buf, sizeof buf), (unsigned long long)known);
    }
    out[0] = ref_reshaped(ctx, x, (int32_t)n, dims);
    return out[0] ? PC_OK : ctx->err->status;
}

KERNEL(Flatten)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    /* axis in [-r, r], negatives counting from the input rank (not the Unsqueeze-style rank + 1) */
    int64_t a = ref_attr_int(ctx, "axis", 1);
    if (a < -(int64_t)x->rank || a > x->rank)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'axis' %lld is out of range for rank %d", (long long)a,
                        (int)x->rank);
    int32_t axis = (int32_t)(a < 0 ? a + x->rank : a);
    int64_t dims[2] = {1, 1};
    for (int32_t d = 0; d < x->rank; d++) { /* checked: an empty input can have huge dims */
        int64_t *p = &dims[d < axis ? 0 : 1];
        if (x->dims[d] && *p > INT64_MAX / x->dims[d])
            return ref_fail(ctx, PC_ERR_SHAPE, "flattened dimension overflows");
        *p *= x->dims[d];
    }
    out[0] = ref_reshaped(ctx, x, 2, dims);
    return out[0] ? PC_OK : ctx->err->status;
}

/* Axes of Squeeze/Unsqueeze: an attribute before opset 13, an input from 13. *vals is malloc'ed or NULL. */
static pc_status axes_attr_or_input(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, int64_t **vals,
                                    size_t *n, bool *given)
{
    *vals = NULL;
    *n = 0;
    *given = false;
    if (ctx->opset < 13) {
        const int64_t *a = ref_attr_ints(ctx, "axes", n);
        if (!ref_has_attr(ctx, "axes")) return PC_OK;
        *given = true;
        if (!(*vals = malloc(*n ? *n * sizeof **vals : 1)))
            return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        if (*n) memcpy(*vals, a, *n * sizeof **vals);
        return PC_OK;
    }
    if (!has_input(in, n_in, 1)) return PC_OK;
    *given = true;
    return int_input(ctx, in, n_in, 1, "input 1 'axes'", vals, n);
}

KERNEL(Squeeze)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int64_t *axes;
    size_t n;
    bool given, drop_axis[PC_MAX_RANK];
    if ((st = axes_attr_or_input(ctx, in, n_in, &axes, &n, &given)) != PC_OK) return st;
    if (given) {
        int32_t norm[PC_MAX_RANK];
        if (n > PC_MAX_RANK)
            st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "'axes' has %zu entries", n);
        else
            st = read_axes(ctx, axes, n, x->rank, "'axes'", drop_axis, norm);
        for (size_t k = 0; k < n && st == PC_OK; k++)
            if (x->dims[norm[k]] != 1)
                st = ref_fail(ctx, PC_ERR_SHAPE, "cannot squeeze axis %d of size %lld", (int)norm[k],
                              (long long)x->dims[norm[k]]);
    } else {
        for (int32_t d = 0; d < x->rank; d++)
            drop_axis[d] = x->dims[d] == 1;
    }
    free(axes);
    if (st != PC_OK) return st;
    int64_t dims[PC_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++)
        if (!drop_axis[d]) dims[r++] = x->dims[d];
    out[0] = ref_reshaped(ctx, x, r, dims);
    return out[0] ? PC_OK : ctx->err->status;
}

KERNEL(Unsqueeze)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int64_t *axes;
    size_t n;
    bool given, ins[PC_MAX_RANK];
    if ((st = axes_attr_or_input(ctx, in, n_in, &axes, &n, &given)) != PC_OK) return st;
    if (!given)
        st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "'axes' is required");
    else if (n > (size_t)(PC_MAX_RANK - x->rank))
        st = ref_fail(ctx, PC_ERR_SHAPE, "unsqueezing %zu axes exceeds the rank limit %d", n, PC_MAX_RANK);
    int32_t r = x->rank + (int32_t)n;
    if (st == PC_OK) st = read_axes(ctx, axes, n, r, "'axes'", ins, NULL);
    free(axes);
    if (st != PC_OK) return st;
    int64_t dims[PC_MAX_RANK];
    for (int32_t d = 0, j = 0; d < r; d++)
        dims[d] = ins[d] ? 1 : x->dims[j++];
    out[0] = ref_reshaped(ctx, x, r, dims);
    return out[0] ? PC_OK : ctx->err->status;
}

/* ---- Transpose, Concat, Split
 * -------------------------------------------------------------------------------- */

KERNEL(Transpose)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int32_t r = x->rank;
    size_t n;
    const int64_t *perm = ref_attr_ints(ctx, "perm", &n);
    int64_t p[PC_MAX_RANK], istr[PC_MAX_RANK], sstr[PC_MAX_RANK], dims[PC_MAX_RANK];
    bool seen[PC_MAX_RANK] = {false};
    if (perm && n != (size_t)r)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'perm' has %zu entries for an input of rank %d", n, (int)r);
    for (int32_t d = 0; d < r; d++) {
        p[d] = perm ? perm[d] : r - 1 - d;
        if (p[d] < 0 || p[d] >= r || seen[p[d]])
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'perm' is not a permutation of 0..%d (entry %d is %lld)",
                            (int)r - 1, (int)d, (long long)p[d]);
        seen[p[d]] = true;
    }
    ref_strides(r, x->dims, istr);
    for (int32_t d = 0; d < r; d++) {
        dims[d] = x->dims[p[d]];
        sstr[d] = istr[p[d]];
    }
    pc_data *y = ref_new_tensor(ctx, x->dtype, r, dims);
    if (!y) return ctx->err->status;
    if ((st = copy_strided(ctx, y, x, 0, sstr)) != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

KERNEL(Concat)
{
    (void)n_out;
    pc_status st;
    if (n_in < 1) return ref_fail(ctx, PC_ERR_ARITY, "at least one input is required");
    for (uint32_t k = 0; k < n_in; k++)
        if ((st = need_data(ctx, in, n_in, k)) != PC_OK) return st;
    if (!ref_has_attr(ctx, "axis")) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'axis' is required");
    const pc_data *x0 = in[0];
    int32_t r = x0->rank, axis;
    if (r == 0) return ref_fail(ctx, PC_ERR_SHAPE, "inputs must have rank >= 1");
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), r, false, &axis)) != PC_OK) return st;
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x0->dims, (size_t)r * sizeof *dims);
    dims[axis] = 0;
    for (uint32_t k = 0; k < n_in; k++) {
        const pc_data *x = in[k];
        char a[96], b[96];
        if (x->dtype != x0->dtype)
            return ref_fail(ctx, PC_ERR_TYPE, "input %u is %s but input 0 is %s", k, pc_dtype_name(x->dtype),
                            pc_dtype_name(x0->dtype));
        bool ok = x->rank == r;
        for (int32_t d = 0; ok && d < r; d++)
            ok = d == axis || x->dims[d] == x0->dims[d];
        if (!ok)
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "input %u is %s, which does not match input 0 %s outside axis %d", k,
                            pc_data_describe(x, a, sizeof a), pc_data_describe(x0, b, sizeof b), (int)axis);
        if (x->dims[axis] > INT64_MAX - dims[axis]) /* empty inputs can have huge dims */
            return ref_fail(ctx, PC_ERR_BUDGET, "concatenated axis %d overflows", (int)axis);
        dims[axis] += x->dims[axis];
    }
    pc_data *y = ref_new_tensor(ctx, x0->dtype, r, dims);
    if (!y) return ctx->err->status;
    int64_t outer = prod(dims, 0, axis), inner = prod(dims, axis + 1, r), off = 0;
    for (uint32_t k = 0; k < n_in; k++) {
        int64_t dk = in[k]->dims[axis];
        for (int64_t o = 0; o < outer && in[k]->n_elements; o++)
            for (int64_t a = 0; a < dk; a++)
                for (int64_t i = 0; i < inner; i++)
                    if ((st = copy_at(ctx, y, (uint64_t)((o * dims[axis] + off + a) * inner + i), in[k],
                                      (uint64_t)((o * dk + a) * inner + i))) != PC_OK)
                        return drop(y, st);
        off += dk;
    }
    out[0] = y;
    return PC_OK;
}

KERNEL(Split)
{
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int32_t axis;
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), x->rank, false, &axis)) != PC_OK) return st;
    if (n_out < 1) return ref_fail(ctx, PC_ERR_ARITY, "at least one output is required");
    int64_t dim = x->dims[axis];
    int64_t *sizes = NULL;
    size_t n = 0;
    if (ctx->opset < 13 && ref_has_attr(ctx, "split")) { /* sizes were an attribute before opset 13 */
        const int64_t *a = ref_attr_ints(ctx, "split", &n);
        if (!(sizes = malloc(n ? n * sizeof *sizes : 1))) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        if (n) memcpy(sizes, a, n * sizeof *sizes);
    } else if (ctx->opset >= 13 && has_input(in, n_in, 1) && in[1]->n_elements > 0) { /* empty: equal parts */
        if ((st = int_input(ctx, in, n_in, 1, "input 1 'split'", &sizes, &n)) != PC_OK) return st;
    }
    if (sizes) {
        int64_t sum = 0;
        if (n != n_out) st = ref_fail(ctx, PC_ERR_SHAPE, "'split' has %zu entries for %u outputs", n, n_out);
        for (size_t i = 0; i < n && st == PC_OK; i++) {
            if (sizes[i] < 0 || sizes[i] > dim - sum)
                st = ref_fail(ctx, PC_ERR_SHAPE,
                              "'split' entries must be >= 0 and sum to the axis size %lld "
                              "(entry %zu is %lld)",
                              (long long)dim, i, (long long)sizes[i]);
            else
                sum += sizes[i];
        }
        if (st == PC_OK && sum != dim)
            st = ref_fail(ctx, PC_ERR_SHAPE, "'split' sums to %lld, the axis size is %lld", (long long)sum,
                          (long long)dim);
        if (st != PC_OK) {
            free(sizes);
            return st;
        }
    } else {
        int64_t parts = n_out;
        if (ctx->opset >= 18 && ref_has_attr(ctx, "num_outputs")) {
            parts = ref_attr_int(ctx, "num_outputs", 0);
            if (parts != (int64_t)n_out)
                return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'num_outputs' is %lld but the node has %u outputs",
                                (long long)parts, n_out);
        }
        /* Equal parts; from opset 18 the last one may be smaller (chunks of ceil(dim / parts)). */
        int64_t chunk = dim / parts + (dim % parts != 0);
        if (dim % parts != 0 && (ctx->opset < 18 || chunk > dim / (parts - 1)))
            return ref_fail(ctx, PC_ERR_SHAPE, "axis %d of size %lld cannot be split into %lld parts",
                            (int)axis, (long long)dim, (long long)parts);
        if (!(sizes = malloc((size_t)parts * sizeof *sizes)))
            return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < parts; i++)
            sizes[i] = i < parts - 1 ? chunk : dim - chunk * (parts - 1);
    }
    int64_t outer = prod(x->dims, 0, axis), inner = prod(x->dims, axis + 1, x->rank), off = 0;
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    for (uint32_t k = 0; k < n_out && st == PC_OK; k++) {
        dims[axis] = sizes[k];
        pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, dims);
        if (!y) {
            st = ctx->err->status;
            break;
        }
        out[k] = y;
        for (int64_t o = 0; o < outer && y->n_elements && st == PC_OK; o++)
            for (int64_t a = 0; a < sizes[k] && st == PC_OK; a++)
                for (int64_t i = 0; i < inner && st == PC_OK; i++)
                    st = copy_at(ctx, y, (uint64_t)((o * sizes[k] + a) * inner + i), x,
                                 (uint64_t)((o * dim + off + a) * inner + i));
        off += sizes[k];
    }
    free(sizes);
    if (st != PC_OK) ref_unref_all(out, n_out);
    return st;
}

/* ---- Slice
 * --------------------------------------------------------------------------------------------------- */

/* starts/ends/axes/steps: attributes before opset 10 (no steps), inputs from 10. */
static pc_status slice_params(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, int64_t *v[4], size_t n[4])
{
    static const char *names[4] = {"starts", "ends", "axes", "steps"};
    pc_status st = PC_OK;
    for (int k = 0; k < 4; k++) {
        v[k] = NULL;
        n[k] = 0;
    }
    for (int k = 0; k < 4 && st == PC_OK; k++) {
        if (ctx->opset < 10) {
            if (k == 3 || !ref_has_attr(ctx, names[k])) {
                if (k < 2) st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' is required", names[k]);
                continue;
            }
            const int64_t *a = ref_attr_ints(ctx, names[k], &n[k]);
            if (!(v[k] = malloc(n[k] ? n[k] * sizeof *v[k] : 1)))
                st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
            else if (n[k])
                memcpy(v[k], a, n[k] * sizeof *v[k]);
        } else if (k < 2 || has_input(in, n_in, (uint32_t)k + 1)) {
            char what[32];
            snprintf(what, sizeof what, "input %d '%s'", k + 1, names[k]);
            st = int_input(ctx, in, n_in, (uint32_t)k + 1, what, &v[k], &n[k]);
        }
    }
    if (st == PC_OK && (n[1] != n[0] || (v[2] && n[2] != n[0]) || (v[3] && n[3] != n[0])))
        st = ref_fail(ctx, PC_ERR_SHAPE,
                      "starts, ends, axes and steps must have the same length (%zu, %zu, %zu, %zu)", n[0],
                      n[1], n[2], n[3]);
    if (st != PC_OK)
        for (int k = 0; k < 4; k++)
            free(v[k]);
    return st;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

KERNEL(Slice)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int32_t r = x->rank;
    int64_t *v[4];
    size_t n[4];
    if ((st = slice_params(ctx, in, n_in, v, n)) != PC_OK) return st;
    int64_t start[PC_MAX_RANK], step[PC_MAX_RANK], dims[PC_MAX_RANK], istr[PC_MAX_RANK], sstr[PC_MAX_RANK];
    bool seen[PC_MAX_RANK] = {false};
    for (int32_t d = 0; d < r; d++) {
        start[d] = 0;
        step[d] = 1;
        dims[d] = x->dims[d];
    }
    for (size_t k = 0; k < n[0] && st == PC_OK; k++) {
        int64_t a = v[2] ? v[2][k] : (int64_t)k;
        if (a < -(int64_t)r || a >= r) {
            st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "axes[%zu] = %lld is out of range for rank %d", k,
                          (long long)a, (int)r);
            break;
        }
        int32_t ax = (int32_t)(a < 0 ? a + r : a);
        if (seen[ax]) {
            st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "axes repeats axis %d", (int)ax);
            break;
        }
        seen[ax] = true;
        int64_t dim = x->dims[ax], s = v[0][k], e = v[1][k], p = v[3] ? v[3][k] : 1;
        if (p == 0) {
            st = ref_fail(ctx, PC_ERR_VALUE, "steps[%zu] is 0", k);
            break;
        }
        if (s < 0) s += dim; /* no overflow: s >= INT64_MIN and dim >= 0 */
        if (e < 0) e += dim;
        int64_t cnt;
        if (dim == 0) {
            cnt = 0;
        } else if (p > 0) { /* numpy clamping: forward slices stay in [0, dim] */
            s = clamp64(s, 0, dim);
            e = clamp64(e, 0, dim);
            cnt = e > s ? (e - s - 1) / p + 1 : 0;
        } else { /* backward slices start in [0, dim - 1] and end in [-1, dim - 1] */
            s = clamp64(s, 0, dim - 1);
            e = clamp64(e, -1, dim - 1);
            cnt = s > e ? (int64_t)(((uint64_t)(s - e) - 1) / ((uint64_t)0 - (uint64_t)p)) + 1 : 0;
        }
        start[ax] = cnt ? s : 0;
        step[ax] = cnt > 1 ? p : 0; /* |p| < dim when there is a second element, so strides cannot overflow */
        dims[ax] = cnt;
    }
    for (int k = 0; k < 4; k++)
        free(v[k]);
    if (st != PC_OK) return st;
    ref_strides(r, x->dims, istr);
    uint64_t base = 0; /* unsigned: exact for a non-empty input, harmless wrap (unused) for an empty one */
    for (int32_t d = 0; d < r; d++) {
        base += (uint64_t)start[d] * (uint64_t)istr[d];
        sstr[d] = (int64_t)((uint64_t)step[d] * (uint64_t)istr[d]);
    }
    pc_data *y = ref_new_tensor(ctx, x->dtype, r, dims);
    if (!y) return ctx->err->status;
    if ((st = copy_strided(ctx, y, x, (int64_t)base, sstr)) != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* ---- Gather, GatherElements, GatherND
 * ------------------------------------------------------------------------ */

KERNEL(Gather)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int32_t axis;
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 'data' must have rank >= 1");
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), x->rank, false, &axis)) != PC_OK) return st;
    if ((st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK) return st;
    const pc_data *ind = in[1];
    int32_t r = x->rank - 1 + ind->rank;
    if (r > PC_MAX_RANK) return ref_fail(ctx, PC_ERR_SHAPE, "output rank %d exceeds the limit", (int)r);
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x->dims, (size_t)axis * sizeof *dims);
    memcpy(dims + axis, ind->dims, (size_t)ind->rank * sizeof *dims);
    memcpy(dims + axis + ind->rank, x->dims + axis + 1, (size_t)(x->rank - axis - 1) * sizeof *dims);
    int64_t *idx;
    size_t ni;
    if ((st = read_signed(ctx, ind, "input 1 'indices'", &idx, &ni)) != PC_OK) return st;
    int64_t dim = x->dims[axis];
    for (size_t j = 0; j < ni && st == PC_OK; j++)
        st = norm_index(ctx, idx[j], dim, "'indices'", &idx[j]);
    pc_data *y = st == PC_OK ? ref_new_tensor(ctx, x->dtype, r, dims) : NULL;
    if (!y) {
        free(idx);
        return ctx->err->status;
    }
    int64_t outer = prod(x->dims, 0, axis), inner = prod(x->dims, axis + 1, x->rank);
    for (int64_t o = 0; o < outer && y->n_elements && st == PC_OK; o++)
        for (size_t j = 0; j < ni && st == PC_OK; j++)
            for (int64_t i = 0; i < inner && st == PC_OK; i++)
                st = copy_at(ctx, y, (uint64_t)((o * (int64_t)ni + (int64_t)j) * inner + i), x,
                             (uint64_t)((o * dim + idx[j]) * inner + i));
    free(idx);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* Indices/updates of GatherElements and ScatterElements: same rank as data, no larger than data off the axis.
 */
static pc_status check_elements_shape(ref_ctx *ctx, const pc_data *x, const pc_data *ind, int32_t axis)
{
    char a[96], b[96];
    bool ok = ind->rank == x->rank;
    for (int32_t d = 0; ok && d < x->rank; d++)
        ok = d == axis || ind->dims[d] <= x->dims[d];
    if (!ok)
        return ref_fail(ctx, PC_ERR_SHAPE, "indices %s do not fit data %s",
                        pc_data_describe(ind, a, sizeof a), pc_data_describe(x, b, sizeof b));
    return PC_OK;
}

/* Flat data offset for element i (at multi-index idx) of an indices tensor whose value along `axis` is v. */
static int64_t element_offset(const int64_t *idx, const int64_t *xstr, int32_t rank, int32_t axis, int64_t v)
{
    int64_t off = 0;
    for (int32_t d = 0; d < rank; d++)
        off += (d == axis ? v : idx[d]) * xstr[d];
    return off;
}

KERNEL(GatherElements)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK || (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK) return st;
    const pc_data *x = in[0], *ind = in[1];
    int32_t axis;
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 'data' must have rank >= 1");
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), x->rank, false, &axis)) != PC_OK) return st;
    if ((st = check_elements_shape(ctx, x, ind, axis)) != PC_OK) return st;
    int64_t *iv;
    size_t ni;
    if ((st = read_signed(ctx, ind, "input 1 'indices'", &iv, &ni)) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, x->dtype, ind->rank, ind->dims);
    if (!y) {
        free(iv);
        return ctx->err->status;
    }
    int64_t xstr[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    ref_strides(x->rank, x->dims, xstr);
    for (size_t i = 0; i < ni && st == PC_OK; i++, index_next(ind->rank, ind->dims, idx)) {
        int64_t v = 0;
        if ((st = norm_index(ctx, iv[i], x->dims[axis], "'indices'", &v)) != PC_OK) break;
        st = copy_at(ctx, y, i, x, (uint64_t)element_offset(idx, xstr, x->rank, axis, v));
    }
    free(iv);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* Flat data offset of the slice an index tuple of ScatterND/GatherND names: tuple[j] indexes data axis from +
 * j. */
static pc_status nd_offset(ref_ctx *ctx, const int64_t *tuple, int64_t m, const pc_data *x,
                           const int64_t *xstr, int32_t from, int64_t *off)
{
    *off = 0;
    for (int64_t j = 0; j < m; j++) {
        int64_t v = 0;
        pc_status st = norm_index(ctx, tuple[j], x->dims[from + j], "'indices'", &v);
        if (st != PC_OK) return st;
        *off += v * xstr[from + j];
    }
    return PC_OK;
}

KERNEL(GatherND)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK || (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK) return st;
    const pc_data *x = in[0], *ind = in[1];
    int64_t b = ctx->opset >= 12 ? ref_attr_int(ctx, "batch_dims", 0) : 0;
    char da[96], db[96];
    if (ind->rank < 1) return ref_fail(ctx, PC_ERR_SHAPE, "input 1 'indices' must have rank >= 1");
    if (b < 0 || b >= ind->rank || b >= x->rank)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "'batch_dims' %lld must be in [0, min(rank(data), rank(indices)))", (long long)b);
    int64_t m = ind->dims[ind->rank - 1];
    bool ok = m <= x->rank - b;
    for (int32_t d = 0; ok && d < b; d++)
        ok = ind->dims[d] == x->dims[d];
    if (!ok)
        return ref_fail(ctx, PC_ERR_SHAPE, "indices %s do not fit data %s with batch_dims %lld",
                        pc_data_describe(ind, da, sizeof da), pc_data_describe(x, db, sizeof db),
                        (long long)b);
    int32_t bd = (int32_t)b, mm = (int32_t)m, r = ind->rank - 1 + x->rank - bd - mm;
    if (r > PC_MAX_RANK) return ref_fail(ctx, PC_ERR_SHAPE, "output rank %d exceeds the limit", (int)r);
    int64_t dims[PC_MAX_RANK], xstr[PC_MAX_RANK];
    memcpy(dims, ind->dims, (size_t)(ind->rank - 1) * sizeof *dims);
    memcpy(dims + ind->rank - 1, x->dims + bd + mm, (size_t)(x->rank - bd - mm) * sizeof *dims);
    int64_t *iv;
    size_t ni;
    if ((st = read_signed(ctx, ind, "input 1 'indices'", &iv, &ni)) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, x->dtype, r, dims);
    if (!y) {
        free(iv);
        return ctx->err->status;
    }
    ref_strides(x->rank, x->dims, xstr);
    int64_t batches = prod(ind->dims, 0, bd), tuples = prod(ind->dims, bd, ind->rank - 1);
    int64_t slice = prod(x->dims, bd + mm, x->rank), batch_size = prod(x->dims, bd, x->rank);
    for (int64_t bb = 0; bb < batches && y->n_elements && st == PC_OK; bb++)
        for (int64_t t = 0; t < tuples && st == PC_OK; t++) {
            int64_t k = bb * tuples + t, off;
            if ((st = nd_offset(ctx, iv + k * m, m, x, xstr, bd, &off)) != PC_OK) break;
            for (int64_t s = 0; s < slice && st == PC_OK; s++)
                st = copy_at(ctx, y, (uint64_t)(k * slice + s), x, (uint64_t)(bb * batch_size + off + s));
        }
    free(iv);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* ---- Scatter, ScatterElements, ScatterND
 * --------------------------------------------------------------------- */

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } reduction;

/* 'reduction': add/mul from opset 16, max/min from 18. */
static pc_status read_reduction(ref_ctx *ctx, const pc_data *x, reduction *red)
{
    const char *s = ctx->opset >= 16 ? ref_attr_string(ctx, "reduction", "none") : "none";
    if (strcmp(s, "none") == 0)
        *red = RED_NONE;
    else if (strcmp(s, "add") == 0)
        *red = RED_ADD;
    else if (strcmp(s, "mul") == 0)
        *red = RED_MUL;
    else if (strcmp(s, "max") == 0 && ctx->opset >= 18)
        *red = RED_MAX;
    else if (strcmp(s, "min") == 0 && ctx->opset >= 18)
        *red = RED_MIN;
    else
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'reduction' '%s' is not supported at this opset", s);
    if (*red != RED_NONE && !ref_is_numeric(x->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "'reduction' '%s' needs a numeric tensor, got %s", s,
                        pc_dtype_name(x->dtype));
    return PC_OK;
}

/* y[di] = y[di] (red) u[ui]; floats in double, integers in int64 with wrap-around. */
static pc_status scatter_apply(ref_ctx *ctx, pc_data *y, uint64_t di, const pc_data *u, uint64_t ui,
                               reduction red)
{
    if (red == RED_NONE) return copy_at(ctx, y, di, u, ui);
    if (ref_is_float(y->dtype)) {
        double a = ref_get_f64(y, di), b = ref_get_f64(u, ui);
        double v = red == RED_ADD ? a + b : red == RED_MUL ? a * b : red == RED_MAX ? fmax(a, b) : fmin(a, b);
        if (red >= RED_MAX && (isnan(a) || isnan(b))) v = NAN; /* max/min propagate NaN, as numpy does */
        ref_set_f64(y, di, v);
        return PC_OK;
    }
    int64_t a = ref_get_i64(y, di), b = ref_get_i64(u, ui), v;
    bool lt = y->dtype == PC_DTYPE_UINT64 ? (uint64_t)a < (uint64_t)b : a < b;
    switch (red) {
    case RED_ADD:
        v = (int64_t)((uint64_t)a + (uint64_t)b);
        break;
    case RED_MUL:
        v = (int64_t)((uint64_t)a * (uint64_t)b);
        break;
    case RED_MAX:
        v = lt ? b : a;
        break;
    default:
        v = lt ? a : b;
        break;
    }
    ref_set_i64(y, di, v);
    return PC_OK;
}

static pc_status scatter_elements(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out)
{
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK || (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK ||
        (st = need_data(ctx, in, n_in, 2)) != PC_OK)
        return st;
    const pc_data *x = in[0], *ind = in[1], *u = in[2];
    int32_t axis;
    reduction red;
    char da[96], db[96];
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 'data' must have rank >= 1");
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), x->rank, false, &axis)) != PC_OK ||
        (st = check_elements_shape(ctx, x, ind, axis)) != PC_OK ||
        (st = read_reduction(ctx, x, &red)) != PC_OK)
        return st;
    if (u->dtype != x->dtype) return ref_fail(ctx, PC_ERR_TYPE, "'updates' type differs from 'data'");
    if (u->rank != ind->rank || memcmp(u->dims, ind->dims, (size_t)u->rank * sizeof *u->dims) != 0)
        return ref_fail(ctx, PC_ERR_SHAPE, "'updates' %s must have the shape of 'indices' %s",
                        pc_data_describe(u, da, sizeof da), pc_data_describe(ind, db, sizeof db));
    int64_t *iv;
    size_t ni;
    if ((st = read_signed(ctx, ind, "input 1 'indices'", &iv, &ni)) != PC_OK) return st;
    pc_data *y = ref_reshaped(ctx, x, x->rank, x->dims);
    if (!y) {
        free(iv);
        return ctx->err->status;
    }
    int64_t xstr[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    ref_strides(x->rank, x->dims, xstr);
    /* In index order, so with duplicate indices and no reduction the last update wins (as the reference
     * does). */
    for (size_t i = 0; i < ni && st == PC_OK; i++, index_next(ind->rank, ind->dims, idx)) {
        int64_t v = 0;
        if ((st = norm_index(ctx, iv[i], x->dims[axis], "'indices'", &v)) != PC_OK) break;
        st = scatter_apply(ctx, y, (uint64_t)element_offset(idx, xstr, x->rank, axis, v), u, i, red);
    }
    free(iv);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

KERNEL(ScatterElements)
{
    (void)n_out;
    return scatter_elements(ctx, in, n_in, out);
}

KERNEL(Scatter)
{
    (void)n_out;
    return scatter_elements(ctx, in, n_in, out);
}

KERNEL(ScatterND)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK || (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK ||
        (st = need_data(ctx, in, n_in, 2)) != PC_OK)
        return st;
    const pc_data *x = in[0], *ind = in[1], *u = in[2];
    reduction red;
    char da[96], db[96], dc[96];
    if ((st = read_reduction(ctx, x, &red)) != PC_OK) return st;
    if (u->dtype != x->dtype) return ref_fail(ctx, PC_ERR_TYPE, "'updates' type differs from 'data'");
    if (ind->rank < 1) return ref_fail(ctx, PC_ERR_SHAPE, "input 1 'indices' must have rank >= 1");
    int64_t k = ind->dims[ind->rank - 1];
    /* updates must be indices.shape[:-1] + data.shape[k:] */
    bool ok = k <= x->rank && u->rank == ind->rank - 1 + x->rank - k;
    for (int32_t d = 0; ok && d < ind->rank - 1; d++)
        ok = u->dims[d] == ind->dims[d];
    for (int32_t d = (int32_t)k; ok && d < x->rank; d++)
        ok = u->dims[ind->rank - 1 + d - k] == x->dims[d];
    if (!ok)
        return ref_fail(ctx, PC_ERR_SHAPE, "data %s, indices %s and updates %s do not fit together",
                        pc_data_describe(x, da, sizeof da), pc_data_describe(ind, db, sizeof db),
                        pc_data_describe(u, dc, sizeof dc));
    int64_t *iv;
    size_t ni;
    if ((st = read_signed(ctx, ind, "input 1 'indices'", &iv, &ni)) != PC_OK) return st;
    pc_data *y = ref_reshaped(ctx, x, x->rank, x->dims);
    if (!y) {
        free(iv);
        return ctx->err->status;
    }
    int64_t xstr[PC_MAX_RANK];
    ref_strides(x->rank, x->dims, xstr);
    int64_t tuples = prod(ind->dims, 0, ind->rank - 1), slice = prod(x->dims, (int32_t)k, x->rank);
    for (int64_t t = 0; t < tuples && u->n_elements && st == PC_OK; t++) {
        int64_t off;
        if ((st = nd_offset(ctx, iv + t * k, k, x, xstr, 0, &off)) != PC_OK) break;
        for (int64_t s = 0; s < slice && st == PC_OK; s++)
            st = scatter_apply(ctx, y, (uint64_t)(off + s), u, (uint64_t)(t * slice + s), red);
    }
    free(iv);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* ---- Expand, Tile, Pad
 * --------------------------------------------------------------------------------------- */

KERNEL(Expand)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int64_t *shape;
    size_t n;
    if ((st = int_input(ctx, in, n_in, 1, "input 1 'shape'", &shape, &n)) != PC_OK) return st;
    if (n > PC_MAX_RANK) {
        free(shape);
        return ref_fail(ctx, PC_ERR_SHAPE, "'shape' has %zu entries (rank limit %d)", n, PC_MAX_RANK);
    }
    int32_t r = x->rank > (int32_t)n ? x->rank : (int32_t)n;
    int64_t dims[PC_MAX_RANK], xstr[PC_MAX_RANK], sstr[PC_MAX_RANK];
    ref_strides(x->rank, x->dims, xstr);
    /* Bidirectional broadcast: a dimension 1 on either side takes the other side's size. */
    for (int32_t d = 0; d < r && st == PC_OK; d++) {
        int32_t xi = d - (r - x->rank), si = d - (r - (int32_t)n);
        int64_t a = xi >= 0 ? x->dims[xi] : 1, b = si >= 0 ? shape[si] : 1;
        if (b < 0) {
            st = ref_fail(ctx, PC_ERR_SHAPE, "shape[%d] = %lld is negative", (int)si, (long long)b);
            break;
        }
        if (a == b || b == 1)
            dims[d] = a;
        else if (a == 1)
            dims[d] = b;
        else
            st = ref_fail(ctx, PC_ERR_SHAPE, "input dimension %d (%lld) cannot be broadcast to %lld", (int)xi,
                          (long long)a, (long long)b);
        sstr[d] = xi >= 0 && a != 1 ? xstr[xi] : 0;
    }
    free(shape);
    if (st != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, x->dtype, r, dims);
    if (!y) return ctx->err->status;
    if ((st = copy_strided(ctx, y, x, 0, sstr)) != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

KERNEL(Tile)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int64_t *rep;
    size_t n;
    if ((st = int_input(ctx, in, n_in, 1, "input 1 'repeats'", &rep, &n)) != PC_OK) return st;
    int64_t dims[PC_MAX_RANK], xstr[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    if (n != (size_t)x->rank)
        st =
            ref_fail(ctx, PC_ERR_SHAPE, "'repeats' has %zu entries for an input of rank %d", n, (int)x->rank);
    for (int32_t d = 0; d < x->rank && st == PC_OK; d++) {
        if (rep[d] < 0)
            st = ref_fail(ctx, PC_ERR_VALUE, "repeats[%d] = %lld is negative", (int)d, (long long)rep[d]);
        else if (x->dims[d] && rep[d] > INT64_MAX / x->dims[d])
            st = ref_fail(ctx, PC_ERR_BUDGET, "repeats[%d] = %lld overflows the output size", (int)d,
                          (long long)rep[d]);
        else
            dims[d] = x->dims[d] * rep[d];
    }
    free(rep);
    if (st != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, dims);
    if (!y) return ctx->err->status;
    ref_strides(x->rank, x->dims, xstr);
    for (uint64_t i = 0; i < y->n_elements && st == PC_OK; i++, index_next(x->rank, dims, idx)) {
        int64_t off = 0;
        for (int32_t d = 0; d < x->rank; d++)
            off += (idx[d] % x->dims[d]) * xstr[d];
        st = copy_at(ctx, y, i, x, (uint64_t)off);
    }
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

typedef enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

/* Source position along one axis of length len (the input after negative pads cropped it) for padded position
 * q (negative: before the data); -1 means "the constant". reflect and wrap repeat periodically, as numpy.pad
 * does. */
static int64_t pad_source(pad_mode mode, int64_t q, int64_t len)
{
    if (q >= 0 && q < len) return q;
    switch (mode) {
    case PAD_EDGE:
        return q < 0 ? 0 : len - 1;
    case PAD_WRAP:
        return ((q % len) + len) % len;
    case PAD_REFLECT: {
        if (len == 1) return 0;
        int64_t period = 2 * (len - 1);
        q = ((q % period) + period) % period;
        return q < len ? q : period - q;
    }
    default:
        return -1;
    }
}

/* pads, constant and axes: attributes before opset 11, inputs from 11 (axes from 18). */
static pc_status pad_params(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, const pc_data *x, int64_t *pb,
                            int64_t *pe)
{
    int32_t r = x->rank, axes[PC_MAX_RANK];
    int64_t *pads = NULL;
    size_t np = 0, na = (size_t)r;
    pc_status st = PC_OK;
    for (int32_t d = 0; d < r; d++) {
        pb[d] = pe[d] = 0;
        axes[d] = d;
    }
    if (ctx->opset < 11) {
        const int64_t *a = ref_attr_ints(ctx, "pads", &np);
        if (!a) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'pads' is required");
        if (!(pads = malloc(np ? np * sizeof *pads : 1))) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        if (np) memcpy(pads, a, np * sizeof *pads);
    } else if ((st = int_input(ctx, in, n_in, 1, "input 1 'pads'", &pads, &np)) != PC_OK) {
        return st;
    }
    if (ctx->opset >= 18 && has_input(in, n_in, 3)) {
        int64_t *av;
        bool mark[PC_MAX_RANK];
        if ((st = int_input(ctx, in, n_in, 3, "input 3 'axes'", &av, &na)) == PC_OK) {
            if (na > (size_t)r)
                st = ref_fail(ctx, PC_ERR_SHAPE, "'axes' has %zu entries for rank %d", na, (int)r);
            else
                st = read_axes(ctx, av, na, r, "'axes'", mark, axes);
            free(av);
        }
    }
    if (st == PC_OK && np != 2 * na)
        st = ref_fail(ctx, PC_ERR_SHAPE, "'pads' has %zu entries, %zu expected", np, 2 * na);
    for (size_t k = 0; k < na && st == PC_OK; k++) {
        pb[axes[k]] = pads[k];
        pe[axes[k]] = pads[k + na];
    }
    free(pads);
    return st;
}

KERNEL(Pad)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int32_t r = x->rank;
    const char *ms = ref_attr_string(ctx, "mode", "constant");
    pad_mode mode;
    if (strcmp(ms, "constant") == 0)
        mode = PAD_CONSTANT;
    else if (strcmp(ms, "reflect") == 0)
        mode = PAD_REFLECT;
    else if (strcmp(ms, "edge") == 0)
        mode = PAD_EDGE;
    else if (strcmp(ms, "wrap") == 0 && ctx->opset >= 19)
        mode = PAD_WRAP;
    else
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'mode' '%s' is not supported at this opset", ms);
    int64_t pb[PC_MAX_RANK], pe[PC_MAX_RANK], crop[PC_MAX_RANK], len[PC_MAX_RANK], dims[PC_MAX_RANK];
    if ((st = pad_params(ctx, in, n_in, x, pb, pe)) != PC_OK) return st;
    /* Negative pads crop first; the rest pads the cropped data (as the ONNX reference does). */
    for (int32_t d = 0; d < r; d++) {
        int64_t dim = x->dims[d];
        if (pb[d] < -dim || pe[d] < -dim ||
            (len[d] = dim + (pb[d] < 0 ? pb[d] : 0) + (pe[d] < 0 ? pe[d] : 0)) < 0)
            return ref_fail(ctx, PC_ERR_SHAPE, "pads %lld and %lld crop more than axis %d of size %lld",
                            (long long)pb[d], (long long)pe[d], (int)d, (long long)dim);
        crop[d] = pb[d] < 0 ? -pb[d] : 0;
        int64_t add = (pb[d] > 0 ? pb[d] : 0), add2 = (pe[d] > 0 ? pe[d] : 0);
        if (add > INT64_MAX - len[d] - add2)
            return ref_fail(ctx, PC_ERR_BUDGET, "pads of axis %d overflow the output size", (int)d);
        dims[d] = len[d] + add + add2;
        if (mode != PAD_CONSTANT && len[d] == 0 && dims[d] > 0)
            return ref_fail(ctx, PC_ERR_SHAPE, "cannot pad the empty axis %d in mode '%s'", (int)d, ms);
    }
    /* The constant: input 2 (from opset 11; empty means the default) or attribute 'value'. */
    pc_data *cv = NULL;
    if (mode == PAD_CONSTANT && ctx->opset >= 11 && has_input(in, n_in, 2) && in[2]->n_elements > 0) {
        if ((st = need_data(ctx, in, n_in, 2)) != PC_OK) return st;
        if (in[2]->dtype != x->dtype)
            return ref_fail(ctx, PC_ERR_TYPE, "'constant_value' is %s but 'data' is %s",
                            pc_dtype_name(in[2]->dtype), pc_dtype_name(x->dtype));
        cv = pc_data_ref(in[2]);
    } else {
        if (!(cv = ref_new_scalar(ctx, x->dtype))) return ctx->err->status;
        if (x->dtype != PC_DTYPE_STRING && ctx->opset < 11)
            ref_set_f64(cv, 0, ref_attr_float(ctx, "value", 0.0));
    }
    pc_data *y = ref_new_tensor(ctx, x->dtype, r, dims);
    if (!y) return drop(cv, ctx->err->status);
    /* Per-axis source tables; their total size is at most n_elements + rank when the output is not empty. */
    int64_t *tab = NULL, *base[PC_MAX_RANK], total = 0;
    if (y->n_elements) {
        for (int32_t d = 0; d < r; d++)
            total += dims[d];
        if (!(tab = malloc(total ? (size_t)total * sizeof *tab : 1))) {
            pc_data_unref(cv);
            return drop(y, ref_fail(ctx, PC_ERR_NOMEM, "out of memory"));
        }
        int64_t *p = tab;
        for (int32_t d = 0; d < r; d++) {
            base[d] = p;
            for (int64_t o = 0; o < dims[d]; o++) {
                int64_t s = pad_source(mode, o - (pb[d] > 0 ? pb[d] : 0), len[d]);
                *p++ = s < 0 ? -1 : s + crop[d];
            }
        }
    }
    int64_t xstr[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    ref_strides(r, x->dims, xstr);
    for (uint64_t i = 0; i < y->n_elements && st == PC_OK; i++, index_next(r, dims, idx)) {
        uint64_t off =
            0; /* unsigned: an empty input's strides may have wrapped (only constants are read then) */
        bool constant = false;
        for (int32_t d = 0; d < r && !constant; d++) {
            int64_t s = base[d][idx[d]];
            constant = s < 0;
            off += (uint64_t)s * (uint64_t)xstr[d];
        }
        st = constant ? copy_at(ctx, y, i, cv, 0) : copy_at(ctx, y, i, x, off);
    }
    free(tab);
    pc_data_unref(cv);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* ---- DepthToSpace, SpaceToDepth
 * ------------------------------------------------------------------------------ */

static pc_status depth_space(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, bool to_space)
{
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    char buf[96];
    if (x->rank != 4)
        return ref_fail(ctx, PC_ERR_SHAPE, "input must have rank 4, got %s",
                        pc_data_describe(x, buf, sizeof buf));
    if (!ref_has_attr(ctx, "blocksize"))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'blocksize' is required");
    int64_t b = ref_attr_int(ctx, "blocksize", 0), N = x->dims[0], C = x->dims[1], H = x->dims[2],
            W = x->dims[3];
    if (b <= 0 || b > (int64_t)1 << 31)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'blocksize' %lld is out of range", (long long)b);
    bool crd = false;
    if (to_space && ctx->opset >= 11) {
        const char *m = ref_attr_string(ctx, "mode", "DCR");
        if (strcmp(m, "CRD") == 0)
            crd = true;
        else if (strcmp(m, "DCR") != 0)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'mode' '%s' is not DCR or CRD", m);
    }
    int64_t bb = b * b, dims[4];
    if (to_space) {
        if (C % bb != 0)
            return ref_fail(ctx, PC_ERR_SHAPE, "channels %lld are not a multiple of blocksize^2 = %lld",
                            (long long)C, (long long)bb);
        if (H > INT64_MAX / b || W > INT64_MAX / b)
            return ref_fail(ctx, PC_ERR_BUDGET, "output size overflows");
        dims[0] = N, dims[1] = C / bb, dims[2] = H * b, dims[3] = W * b;
    } else {
        if (H % b != 0 || W % b != 0)
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "height %lld and width %lld must be multiples of blocksize %lld", (long long)H,
                            (long long)W, (long long)b);
        if (C > INT64_MAX / bb) return ref_fail(ctx, PC_ERR_BUDGET, "output size overflows");
        dims[0] = N, dims[1] = C * bb, dims[2] = H / b, dims[3] = W / b;
    }
    pc_data *y = ref_new_tensor(ctx, x->dtype, 4, dims);
    if (!y) return ctx->err->status;
    int64_t oc = dims[1], oh = dims[2], ow = dims[3];
    uint64_t k = 0;
    for (int64_t n = 0; n < N && y->n_elements; n++)
        for (int64_t c = 0; c < oc; c++)
            for (int64_t h = 0; h < oh; h++)
                for (int64_t w = 0; w < ow && st == PC_OK; w++, k++) {
                    int64_t sc, sh, sw;
                    if (to_space) { /* DCR: depth splits as (bi, bj, c); CRD: as (c, bi, bj) */
                        int64_t i = h % b, j = w % b;
                        sc = crd ? c * bb + i * b + j : (i * b + j) * oc + c;
                        sh = h / b;
                        sw = w / b;
                    } else { /* output depth is (bi, bj, c) */
                        int64_t blk = c / C;
                        sc = c % C;
                        sh = h * b + blk / b;
                        sw = w * b + blk % b;
                    }
                    st = copy_at(ctx, y, k, x, (uint64_t)(((n * C + sc) * H + sh) * W + sw));
                }
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

KERNEL(DepthToSpace)
{
    (void)n_out;
    return depth_space(ctx, in, n_in, out, true);
}

KERNEL(SpaceToDepth)
{
    (void)n_out;
    return depth_space(ctx, in, n_in, out, false);
}

/* ---- Shape, Size, ConstantOfShape, Range
 * --------------------------------------------------------------------- */

KERNEL(Shape)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int64_t r = x->rank, start = 0, end = r;
    if (ctx->opset >= 15) { /* start/end clamp to [0, rank] after adding rank to negatives */
        start = ref_attr_int(ctx, "start", 0);
        end = ref_attr_int(ctx, "end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = clamp64(start, 0, r);
        end = clamp64(end, 0, r);
    }
    int64_t n = end > start ? end - start : 0;
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_INT64, 1, &n);
    if (!y) return ctx->err->status;
    for (int64_t i = 0; i < n; i++)
        ref_set_i64(y, (uint64_t)i, x->dims[start + i]);
    out[0] = y;
    return PC_OK;
}

KERNEL(Size)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    pc_data *y = ref_new_scalar(ctx, PC_DTYPE_INT64);
    if (!y) return ctx->err->status;
    ref_set_i64(y, 0, (int64_t)in[0]->n_elements);
    out[0] = y;
    return PC_OK;
}

KERNEL(ConstantOfShape)
{
    (void)n_out;
    int64_t *shape;
    size_t n;
    pc_status st = int_input(ctx, in, n_in, 0, "input 0 'input'", &shape, &n);
    if (st != PC_OK) return st;
    if (in[0]->rank != 1)
        st = ref_fail(ctx, PC_ERR_SHAPE, "input 0 must be 1-D, got rank %d", (int)in[0]->rank);
    else if (n > PC_MAX_RANK)
        st = ref_fail(ctx, PC_ERR_SHAPE, "shape has %zu entries (rank limit %d)", n, PC_MAX_RANK);
    for (size_t i = 0; i < n && st == PC_OK; i++)
        if (shape[i] < 0)
            st = ref_fail(ctx, PC_ERR_SHAPE, "shape[%zu] = %lld is negative", i, (long long)shape[i]);
    const pc_attr *a = pc_node_attr(ctx->node, "value");
    pc_data *v = NULL;
    pc_error e;
    if (st == PC_OK && a) {
        if (a->type != PC_ATTR_TENSOR || !a->t || a->t->n_elements != 1)
            st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'value' must be a one-element tensor");
        else if (!movable_dtype(a->t->dtype))
            st = ref_unsupported(ctx, "'value' of element type %s", pc_dtype_name(a->t->dtype));
        else if (!(v = pc_data_wrap_tensor(a->t, &e)))
            st = ref_fail(ctx, e.status, "attribute 'value': %s", e.message);
    } else if (st == PC_OK && !(v = ref_new_scalar(ctx, PC_DTYPE_FLOAT))) { /* default: float 0 */
        st = ctx->err->status;
    }
    pc_data *y = st == PC_OK ? ref_new_tensor(ctx, v->dtype, (int32_t)n, shape) : NULL;
    free(shape);
    if (!y) return drop(v, ctx->err->status);
    for (uint64_t i = 0; i < y->n_elements && st == PC_OK; i++)
        st = copy_at(ctx, y, i, v, 0);
    pc_data_unref(v);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

KERNEL(Range)
{
    (void)n_out;
    pc_status st;
    static const char *names[3] = {"start", "limit", "delta"};
    for (uint32_t k = 0; k < 3; k++) {
        if ((st = ref_require_tensor(ctx, in, n_in, k)) != PC_OK) return st;
        if (!ref_is_float(in[k]->dtype) && !ref_is_signed(in[k]->dtype))
            return ref_fail(ctx, PC_ERR_TYPE, "input %u '%s' must be float or signed integer, got %s", k,
                            names[k], pc_dtype_name(in[k]->dtype));
        if (in[k]->dtype != in[0]->dtype)
            return ref_fail(ctx, PC_ERR_TYPE, "inputs have different element types (%s and %s)",
                            pc_dtype_name(in[0]->dtype), pc_dtype_name(in[k]->dtype));
        if (in[k]->n_elements != 1)
            return ref_fail(ctx, PC_ERR_SHAPE, "input %u '%s' must be a scalar", k, names[k]);
    }
    pc_dtype dt = in[0]->dtype;
    int64_t n;
    pc_data *y;
    if (ref_is_float(dt)) {
        double s = ref_get_f64(in[0], 0), l = ref_get_f64(in[1], 0), d = ref_get_f64(in[2], 0);
        /* ceil((limit - start) / delta) in the element type's precision (float32 for float16/float too) */
        if (d == 0) return ref_fail(ctx, PC_ERR_VALUE, "'delta' is 0");
        double q = dt == PC_DTYPE_DOUBLE ? (l - s) / d : (double)(((float)l - (float)s) / (float)d);
        if (!isfinite(q))
            return ref_fail(ctx, PC_ERR_VALUE, "the element count (limit - start) / delta is %g", q);
        q = ceil(q);
        if (q > (double)REF_MAX_ELEMENTS)
            return ref_fail(ctx, PC_ERR_BUDGET, "output of %.0f elements refused (limit 2^31)", q);
        n = q > 0 ? (int64_t)q : 0;
        if (!(y = ref_new_tensor(ctx, dt, 1, &n))) return ctx->err->status;
        for (int64_t i = 0; i < n; i++)
            ref_set_f64(y, (uint64_t)i, s + (double)i * d);
    } else {
        int64_t s = ref_get_i64(in[0], 0), l = ref_get_i64(in[1], 0), d = ref_get_i64(in[2], 0);
        if (d == 0) return ref_fail(ctx, PC_ERR_VALUE, "'delta' is 0");
        /* exact ceil division on magnitudes, in uint64 so no difference overflows */
        uint64_t span = 0, step = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d;
        if (d > 0 && l > s) span = (uint64_t)l - (uint64_t)s;
        if (d < 0 && l < s) span = (uint64_t)s - (uint64_t)l;
        uint64_t cnt = span ? (span - 1) / step + 1 : 0;
        if (cnt > REF_MAX_ELEMENTS)
            return ref_fail(ctx, PC_ERR_BUDGET, "output of %llu elements refused (limit 2^31)",
                            (unsigned long long)cnt);
        n = (int64_t)cnt;
        if (!(y = ref_new_tensor(ctx, dt, 1, &n))) return ctx->err->status;
        for (int64_t i = 0; i < n; i++)
            ref_set_i64(y, (uint64_t)i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    }
    out[0] = y;
    return PC_OK;
}

/* ---- OneHot, NonZero, Compress, Trilu, EyeLike, ReverseSequence
 * ---------------------------------------------- */

KERNEL(OneHot)
{
    (void)n_out;
    pc_status st;
    for (uint32_t k = 0; k < 2; k++) {
        if ((st = ref_require_tensor(ctx, in, n_in, k)) != PC_OK) return st;
        if (!ref_is_float(in[k]->dtype) && !ref_is_int(in[k]->dtype))
            return ref_fail(ctx, PC_ERR_TYPE, "input %u must be numeric, got %s", k,
                            pc_dtype_name(in[k]->dtype));
    }
    if ((st = need_data(ctx, in, n_in, 2)) != PC_OK) return st;
    const pc_data *ind = in[0], *dp = in[1], *vals = in[2];
    if (dp->n_elements != 1) return ref_fail(ctx, PC_ERR_SHAPE, "input 1 'depth' must hold one element");
    if (vals->n_elements != 2) return ref_fail(ctx, PC_ERR_SHAPE, "input 2 'values' must hold two elements");
    double df = ref_get_f64(dp, 0);
    if (!(df >= 0) || df >= 9223372036854775807.0)
        return ref_fail(ctx, PC_ERR_VALUE, "'depth' %g is invalid", df);
    int64_t depth = ref_is_float(dp->dtype) ? (int64_t)df : ref_get_i64(dp, 0);
    int32_t axis;
    if (ind->rank >= PC_MAX_RANK) return ref_fail(ctx, PC_ERR_SHAPE, "output rank exceeds the limit");
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", -1), ind->rank, true, &axis)) != PC_OK) return st;
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, ind->dims, (size_t)axis * sizeof *dims);
    dims[axis] = depth;
    memcpy(dims + axis + 1, ind->dims + axis, (size_t)(ind->rank - axis) * sizeof *dims);
    pc_data *y = ref_new_tensor(ctx, vals->dtype, ind->rank + 1, dims);
    if (!y) return ctx->err->status;
    int64_t outer = prod(ind->dims, 0, axis), inner = prod(ind->dims, axis, ind->rank);
    /* Indices are truncated to integers; negatives count from depth; out-of-range ones give all "off". */
    for (int64_t o = 0; o < outer && y->n_elements; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t v = ref_get_i64(ind, (uint64_t)(o * inner + i));
            if (ind->dtype == PC_DTYPE_UINT64 && v < 0)
                v = depth; /* above INT64_MAX: out of range, not negative */
            if (v < 0 && v >= -depth) v += depth;
            for (int64_t k = 0; k < depth && st == PC_OK; k++)
                st = copy_at(ctx, y, (uint64_t)((o * depth + k) * inner + i), vals, v == k ? 1 : 0);
        }
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* Whether element i is nonzero: floats compare to 0 (NaN is nonzero), strings are nonzero when not empty. */
static bool elem_nonzero(const pc_data *x, uint64_t i)
{
    if (x->dtype == PC_DTYPE_STRING) return ((const pc_bytes *)x->data)[i].len != 0;
    if (ref_is_float(x->dtype)) return ref_get_f64(x, i) != 0.0;
    return ref_get_i64(x, i) != 0;
}

KERNEL(NonZero)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if (!ref_is_numeric(x->dtype) && x->dtype != PC_DTYPE_STRING)
        return ref_unsupported(ctx, "input of element type %s", pc_dtype_name(x->dtype));
    int64_t nz = 0, idx[PC_MAX_RANK] = {0};
    for (uint64_t i = 0; i < x->n_elements; i++)
        nz += elem_nonzero(x, i);
    int64_t dims[2] = {x->rank, nz}; /* a scalar gives shape (0, nz), as the spec says */
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_INT64, 2, dims);
    if (!y) return ctx->err->status;
    int64_t k = 0;
    for (uint64_t i = 0; i < x->n_elements; i++, index_next(x->rank, x->dims, idx)) {
        if (!elem_nonzero(x, i)) continue;
        for (int32_t d = 0; d < x->rank; d++)
            ref_set_i64(y, (uint64_t)(d * nz + k), idx[d]);
        k++;
    }
    out[0] = y;
    return PC_OK;
}

KERNEL(Compress)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK || (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK) return st;
    const pc_data *x = in[0], *c = in[1];
    if (c->dtype != PC_DTYPE_BOOL || c->rank != 1)
        return ref_fail(ctx, PC_ERR_TYPE, "input 1 'condition' must be a 1-D bool tensor");
    bool flat = !ref_has_attr(ctx, "axis");
    int32_t axis = 0;
    if (!flat && (st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), x->rank, false, &axis)) != PC_OK)
        return st;
    int64_t dims[PC_MAX_RANK], dim = flat ? (int64_t)x->n_elements : x->dims[axis], cnt = 0;
    /* numpy.compress: a shorter condition leaves the rest unselected; selecting past the end is an error */
    for (uint64_t j = 0; j < c->n_elements; j++) {
        if (!ref_get_i64(c, j)) continue;
        if ((int64_t)j >= dim)
            return ref_fail(ctx, PC_ERR_SHAPE, "'condition' selects index %llu of an axis of size %lld",
                            (unsigned long long)j, (long long)dim);
        cnt++;
    }
    int32_t r = flat ? 1 : x->rank;
    if (!flat) memcpy(dims, x->dims, (size_t)r * sizeof *dims);
    dims[flat ? 0 : axis] = cnt;
    pc_data *y = ref_new_tensor(ctx, x->dtype, r, dims);
    if (!y) return ctx->err->status;
    int64_t outer = flat ? 1 : prod(x->dims, 0, axis), inner = flat ? 1 : prod(x->dims, axis + 1, x->rank);
    uint64_t k = 0;
    for (int64_t o = 0; o < outer && y->n_elements; o++)
        for (int64_t j = 0; j < (int64_t)c->n_elements && j < dim; j++) {
            if (!ref_get_i64(c, (uint64_t)j)) continue;
            for (int64_t i = 0; i < inner && st == PC_OK; i++)
                st = copy_at(ctx, y, k++, x, (uint64_t)((o * dim + j) * inner + i));
        }
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

KERNEL(Trilu)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if (x->rank < 2) return ref_fail(ctx, PC_ERR_SHAPE, "input must have rank >= 2, got %d", (int)x->rank);
    int64_t k = 0;
    if (has_input(in, n_in, 1)) {
        int64_t *kv;
        size_t n;
        if ((st = int_input(ctx, in, n_in, 1, "input 1 'k'", &kv, &n)) != PC_OK) return st;
        if (n == 1) k = kv[0];
        free(kv);
        if (n != 1) return ref_fail(ctx, PC_ERR_SHAPE, "input 1 'k' must hold one element");
    }
    bool upper = ref_attr_int(ctx, "upper", 1) != 0;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    /* Kept elements are copied; the rest stay zero (empty strings, false). */
    for (uint64_t f = 0; f < x->n_elements && st == PC_OK; f++) {
        int64_t j = (int64_t)(f % (uint64_t)cols), i = (int64_t)((f / (uint64_t)cols) % (uint64_t)rows);
        if (upper ? j - i >= k : j - i <= k) st = copy_at(ctx, y, f, x, f);
    }
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

KERNEL(EyeLike)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if (x->rank != 2) return ref_fail(ctx, PC_ERR_SHAPE, "input must be 2-D, got rank %d", (int)x->rank);
    pc_dtype dt = x->dtype;
    if (ref_has_attr(ctx, "dtype")) {
        int64_t v = ref_attr_int(ctx, "dtype", 0);
        if (v < INT32_MIN || v > INT32_MAX || !pc_dtype_is_valid((int32_t)v))
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'dtype' %lld is not an element type", (long long)v);
        dt = (pc_dtype)v;
    }
    if (!ref_is_numeric(dt))
        return ref_fail(ctx, PC_ERR_TYPE, "output element type %s is not numeric", pc_dtype_name(dt));
    int64_t k = ref_attr_int(ctx, "k", 0), rows = x->dims[0], cols = x->dims[1];
    pc_data *y = ref_new_tensor(ctx, dt, 2, x->dims);
    if (!y) return ctx->err->status;
    if (k < cols && k > -rows) /* otherwise the diagonal is outside the matrix; |k| now bounds the indices */
        for (int64_t i = 0; i < rows; i++)
            if (i + k >= 0 && i + k < cols) ref_set_f64(y, (uint64_t)(i * cols + i + k), 1.0);
    out[0] = y;
    return PC_OK;
}

KERNEL(ReverseSequence)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if (x->rank < 2) return ref_fail(ctx, PC_ERR_SHAPE, "input must have rank >= 2, got %d", (int)x->rank);
    int64_t ba = ref_attr_int(ctx, "batch_axis", 1), ta = ref_attr_int(ctx, "time_axis", 0);
    if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "'batch_axis' %lld and 'time_axis' %lld must be 0 and 1 in some order", (long long)ba,
                        (long long)ta);
    int64_t *lens;
    size_t n;
    if ((st = int_input(ctx, in, n_in, 1, "input 1 'sequence_lens'", &lens, &n)) != PC_OK) return st;
    int64_t B = x->dims[ba], T = x->dims[ta];
    if ((int64_t)n != B)
        st = ref_fail(ctx, PC_ERR_SHAPE, "'sequence_lens' has %zu entries for batch %lld", n, (long long)B);
    for (size_t b = 0; b < n && st == PC_OK; b++)
        if (lens[b] < 0 || lens[b] > T)
            st = ref_fail(ctx, PC_ERR_VALUE, "sequence_lens[%zu] = %lld is outside [0, %lld]", b,
                          (long long)lens[b], (long long)T);
    pc_data *y = st == PC_OK ? ref_new_tensor(ctx, x->dtype, x->rank, x->dims) : NULL;
    if (!y) {
        free(lens);
        return ctx->err->status;
    }
    int64_t xstr[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    ref_strides(x->rank, x->dims, xstr);
    for (uint64_t i = 0; i < x->n_elements && st == PC_OK; i++, index_next(x->rank, x->dims, idx)) {
        int64_t t = idx[ta], L = lens[idx[ba]];
        int64_t off = (int64_t)i + ((t < L ? L - 1 - t : t) - t) * xstr[ta];
        st = copy_at(ctx, y, i, x, (uint64_t)off);
    }
    free(lens);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* ---- Resize, Upsample
 * ---------------------------------------------------------------------------------------- */

typedef enum { RS_NEAREST, RS_LINEAR, RS_CUBIC } resize_mode;
typedef enum {
    CT_HALF_PIXEL,
    CT_HALF_PIXEL_SYMMETRIC,
    CT_PYTORCH_HALF_PIXEL,
    CT_ALIGN_CORNERS,
    CT_ASYMMETRIC,
    CT_TF_HALF_PIXEL_FOR_NN,
    CT_TF_CROP_AND_RESIZE
} coord_mode;
/* NR_LEGACY: Resize-10 and Upsample have no nearest_mode; like onnxruntime, round down when enlarging and up
 * when shrinking (the two agree with plain repetition for integer scales, the only case the spec's tests pin
 * down). */
typedef enum { NR_ROUND_PREFER_FLOOR, NR_ROUND_PREFER_CEIL, NR_FLOOR, NR_CEIL, NR_LEGACY } nearest_rule;

typedef struct resize_plan {
    resize_mode mode;
    coord_mode coord;
    nearest_rule nearest;
    double cubic_a, extrapolation;
    bool exclude_outside;
    bool ort_lengths; /* pc_ref_options.resize_ort_lengths */
    bool float32;     /* pc_ref_options.resize_float32_coordinates */
    double scale[PC_MAX_RANK], roi_lo[PC_MAX_RANK], roi_hi[PC_MAX_RANK];
    /* the spec's length_resized: sizes[i] when 'sizes' is given; scale * length_original when 'scales' is, as
     * the ONNX reference implementation and backend data take it (not the floored output length:
     * onnx/onnx#2462, test_resize_downsample_scales_linear_align_corners) */
    double length[PC_MAX_RANK];
    float scale_f32[PC_MAX_RANK]; /* the scale as ONNX Runtime holds it (float; size / length for 'sizes') */
    int64_t dims[PC_MAX_RANK];
} resize_plan;

/* What one output coordinate reads along one axis: input positions (already clamped) with their weights. */
typedef struct resize_tap {
    int64_t idx[4];
    double w[4];
    int n;        /* taps with nonzero weight */
    bool outside; /* tf_crop_and_resize beyond the input: the result is extrapolation_value */
} resize_tap;

static void cubic_coeffs(double r, double A, double *c)
{
    double t = r + 1, u = 1 - r, v = 2 - r;
    c[0] = ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * u - (A + 3)) * u * u + 1;
    c[3] = ((A * v - 5 * A) * v + 8 * A) * v - 4 * A;
}

/* Follows the ONNX reference's 1-D interpolation: map output coordinate x to input coordinate xo, take the 2
 * (4 for cubic) positions nearest xo in the edge-padded input, weight them by the ratio xo - floor(xo) in (0,
 * 1]. x / scale is computed as x * length_original / length_resized: for 'sizes' that is the spec's exact
 * ratio (k/n rounded to a double and divided by would put an integral coordinate an ulp off it, and
 * floor/ceil then read the wrong element); for 'scales' both forms are the same quotient rounded once. */
/* The coordinate in float32, the way ONNX Runtime computes it (pc_ref_options.resize_float32_coordinates);
 * false for the transforms it does not cover. */
static bool resize_coord_f32(const resize_plan *p, int32_t d, int64_t in_len, int64_t x, double out_w,
                             double *xo)
{
    float xf = (float)x, sf = p->scale_f32[d], lo = (float)in_len, lr = (float)out_w, v;
    switch (p->coord) {
    case CT_HALF_PIXEL:
        v = (xf + 0.5f) / sf - 0.5f;
        break;
    case CT_ASYMMETRIC:
        v = xf / sf;
        break;
    case CT_TF_HALF_PIXEL_FOR_NN:
        v = (xf + 0.5f) / sf;
        break;
    case CT_PYTORCH_HALF_PIXEL:
        v = lr > 1 ? (xf + 0.5f) / sf - 0.5f : 0.0f;
        break;
    case CT_ALIGN_CORNERS:
        v = lr == 1 ? 0.0f : xf * (lo - 1) / (lr - 1);
        break;
    default:
        return false;
    }
    *xo = (double)v;
    return true;
}

static void resize_tap_at(const resize_plan *p, int32_t d, int64_t in_len, int64_t x, resize_tap *t)
{
    double len0 = (double)in_len, xr = (double)x, xo;
    double out_w = p->ort_lengths ? (double)p->dims[d] : p->length[d];
    t->n = 0;
    t->outside = false;
    if (!(p->float32 && resize_coord_f32(p, d, in_len, x, out_w, &xo))) switch (p->coord) {
        case CT_ALIGN_CORNERS:
            xo = out_w == 1 ? 0 : xr * (len0 - 1) / (out_w - 1);
            break;
        case CT_ASYMMETRIC:
            xo = xr * len0 / p->length[d];
            break;
        case CT_TF_HALF_PIXEL_FOR_NN:
            xo = (xr + 0.5) * len0 / p->length[d];
            break;
        /* the spec's "length_resized > 1 ? ... : 0" (the ONNX reference's -0.5 differs only for cubic:
         * onnx/onnx#4275) */
        case CT_PYTORCH_HALF_PIXEL:
            xo = out_w > 1 ? (xr + 0.5) * len0 / p->length[d] - 0.5 : 0;
            break;
        case CT_HALF_PIXEL_SYMMETRIC: {
            double adjustment = (double)p->dims[d] / p->length[d], center = len0 / 2;
            xo = center * (1 - adjustment) + (xr + 0.5) * len0 / p->length[d] - 0.5;
            break;
        }
        case CT_TF_CROP_AND_RESIZE: {
            double lo = p->roi_lo[d], hi = p->roi_hi[d], span = (double)(in_len - 1);
            xo = out_w == 1 ? (hi - lo) * span / 2 : xr * (hi - lo) * span / (out_w - 1);
            xo += lo * span;
            if (!(xo >= 0 && xo <= span)) {
                t->outside = true;
                return;
            }
            break;
        }
        default:
            xo = (xr + 0.5) * len0 / p->length[d] - 0.5;
            break;
        }
    /* Far outside the input every tap reads the edge anyway: keep the conversion to int64 defined. */
    if (isnan(xo)) xo = 0;
    if (xo < -(double)in_len - 8) xo = floor(-(double)in_len - 8);
    if (xo > 2.0 * (double)in_len + 8) xo = floor(2.0 * (double)in_len + 8);
    double fl = floor(xo), ratio = xo == fl ? 1.0 : xo - fl;
    int64_t i0 = (int64_t)fl - (xo == fl ? 1 : 0); /* the tap left of xo */
    int n = p->mode == RS_CUBIC ? 4 : 2, pad = n == 4 ? 2 : 1;
    int64_t first = n == 4 ? i0 - 1 : i0;
    if (first < -pad) first = -pad;
    if (first + n - 1 > in_len - 1 + pad) first = in_len - 1 + pad - (n - 1);
    double c[4];
    if (p->mode == RS_NEAREST) {
        bool right = true; /* an integral xo (ratio 1) is exactly the right tap */
        if (ratio < 1.0) switch (p->nearest) {
            case NR_ROUND_PREFER_FLOOR:
                right = ratio > 0.5;
                break;
            case NR_ROUND_PREFER_CEIL:
                right = ratio >= 0.5;
                break;
            case NR_FLOOR:
                right = false;
                break;
            case NR_CEIL:
                right = true;
                break;
            default:
                right = p->scale[d] < 1;
                break;
            }
        c[0] = right ? 0 : 1;
        c[1] = right ? 1 : 0;
    } else if (p->mode == RS_LINEAR) {
        c[0] = 1 - ratio;
        c[1] = ratio;
    } else {
        cubic_coeffs(ratio, p->cubic_a, c);
    }
    if (p->exclude_outside && p->mode != RS_NEAREST) { /* drop taps outside the input and renormalize */
        double sum = 0;
        for (int k = 0; k < n; k++) {
            if (first + k < 0 || first + k >= in_len) c[k] = 0;
            sum += c[k];
        }
        for (int k = 0; k < n; k++)
            c[k] /= sum;
    }
    for (int k = 0; k < n; k++) {
        if (c[k] == 0) continue;
        t->idx[t->n] = clamp64(first + k, 0, in_len - 1);
        t->w[t->n] = c[k];
        t->n++;
    }
}

/* A total order on doubles for the canonical sums below: by value, -0 before +0, NaN last. */
static int cmp_term(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
    if (a != b) return a < b ? -1 : 1;
    return (signbit(b) != 0) - (signbit(a) != 0);
}

static pc_status resize_run(ref_ctx *ctx, const pc_data *x, const resize_plan *p, pc_data **out)
{
    int32_t r = x->rank;
    if (p->mode != RS_NEAREST && !ref_is_numeric(x->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "linear and cubic modes need a numeric input, got %s",
                        pc_dtype_name(x->dtype));
    for (int32_t d = 0; d < r; d++)
        if (x->dims[d] == 0 && p->dims[d] > 0)
            return ref_fail(ctx, PC_ERR_SHAPE, "cannot resize the empty axis %d to %lld", (int)d,
                            (long long)p->dims[d]);
    pc_data *y = ref_new_tensor(ctx, x->dtype, r, p->dims);
    if (!y) return ctx->err->status;
    if (!y->n_elements) {
        out[0] = y;
        return PC_OK;
    }
    /* Per-axis tap tables (total size at most n_elements + rank, the output being non-empty). */
    int64_t total = 0;
    for (int32_t d = 0; d < r; d++)
        total += p->dims[d];
    resize_tap *taps = malloc(total ? (size_t)total * sizeof *taps : 1), *base[PC_MAX_RANK];
    if (!taps) return drop(y, ref_fail(ctx, PC_ERR_NOMEM, "out of memory"));
    resize_tap *q = taps;
    for (int32_t d = 0; d < r; d++) {
        base[d] = q;
        for (int64_t o = 0; o < p->dims[d]; o++)
            resize_tap_at(p, d, x->dims[d], o, q++);
    }
    int64_t xstr[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    ref_strides(r, x->dims, xstr);
    pc_status st = PC_OK;
    /* Room for one output's terms: the product over the axes of their most taps (1, 2 or 4 each). */
    size_t max_terms = 1;
    for (int32_t d = 0; d < r && p->mode != RS_NEAREST; d++) {
        int most = 1;
        for (int64_t o = 0; o < p->dims[d]; o++)
            if (base[d][o].n > most) most = base[d][o].n;
        if (max_terms > ((size_t)1 << 24) / (size_t)most) {
            free(taps);
            return drop(y,
                        ref_fail(ctx, PC_ERR_UNSUPPORTED, "more than 2^24 interpolation terms per output"));
        }
        max_terms *= (size_t)most;
    }
    double *terms = p->mode != RS_NEAREST ? malloc(max_terms * sizeof *terms) : NULL;
    if (p->mode != RS_NEAREST && !terms) {
        free(taps);
        return drop(y, ref_fail(ctx, PC_ERR_NOMEM, "out of memory"));
    }
    for (uint64_t i = 0; i < y->n_elements && st == PC_OK; i++, index_next(r, p->dims, idx)) {
        const resize_tap *t[PC_MAX_RANK];
        bool outside = false, none = false;
        for (int32_t d = 0; d < r; d++) {
            t[d] = &base[d][idx[d]];
            outside |= t[d]->outside;
            none |= t[d]->n == 0;
        }
        if (outside) {
            if (ref_is_numeric(x->dtype)) ref_set_f64(y, i, p->extrapolation);
            continue;
        }
        if (none) continue;
        if (p->mode == RS_NEAREST) { /* a copy: exact for every type, strings included */
            int64_t off = 0;
            for (int32_t d = 0; d < r; d++)
                off += t[d]->idx[0] * xstr[d];
            st = copy_at(ctx, y, i, x, (uint64_t)off);
            continue;
        }
        /* Separable weights: sum over every combination of the axes' taps. In a canonical order — each
         * product's factors sorted, then the terms sorted — so the result does not depend on the order of the
         * axes: a Resize over permuted axes (the transpose optimizer pushes Transposes through Resize) gives
         * bit-identical values, as it does in real arithmetic. */
        int k[PC_MAX_RANK] = {0};
        size_t n_terms = 0;
        for (;;) {
            double f[PC_MAX_RANK];
            int64_t off = 0;
            for (int32_t d = 0; d < r; d++) {
                f[d] = t[d]->w[k[d]];
                off += t[d]->idx[k[d]] * xstr[d];
            }
            qsort(f, (size_t)r, sizeof *f, cmp_term);
            double w = 1;
            for (int32_t d = 0; d < r; d++)
                w *= f[d];
            terms[n_terms++] = w * ref_get_f64(x, (uint64_t)off);
            int32_t d = r - 1;
            for (; d >= 0; d--) {
                if (++k[d] < t[d]->n) break;
                k[d] = 0;
            }
            if (d < 0) break;
        }
        qsort(terms, n_terms, sizeof *terms, cmp_term);
        double acc = 0;
        for (size_t j = 0; j < n_terms; j++)
            acc += terms[j];
        ref_set_f64(y, i, acc);
    }
    free(terms);
    free(taps);
    if (st != PC_OK) return drop(y, st);
    out[0] = y;
    return PC_OK;
}

/* Output size floor(in * scale) for the given scales (n == rank) in scale order of axes[]. */
static pc_status resize_scales(ref_ctx *ctx, const pc_data *x, resize_plan *p, const double *scales,
                               const int32_t *axes, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        int32_t a = axes[k];
        double s = scales[k], v = floor(s * (double)x->dims[a]);
        if (!(s > 0) || !isfinite(s))
            return ref_fail(ctx, PC_ERR_VALUE, "scales[%zu] = %g is not positive", k, s);
        if (v > 0x1p62) /* keeps the int64 conversion defined; new_out applies the element budget */
            return ref_fail(ctx, PC_ERR_BUDGET, "output dimension %d of %.0f refused", (int)a, v);
        p->scale[a] = s;
        p->length[a] = s * (double)x->dims[a]; /* exact: a float times an integer below 2^29 */
        p->scale_f32[a] = (float)s;
        p->dims[a] = (int64_t)v;
    }
    return PC_OK;
}

static void resize_defaults(const pc_data *x, resize_plan *p)
{
    memset(p, 0, sizeof *p);
    p->cubic_a = -0.75;
    for (int32_t d = 0; d < x->rank; d++) {
        p->scale[d] = 1;
        p->roi_lo[d] = 0;
        p->roi_hi[d] = 1;
        p->length[d] = (double)x->dims[d];
        p->scale_f32[d] = 1;
        p->dims[d] = x->dims[d];
    }
}

/* Reads a float list input (scales, roi) into a malloc'ed double array. */
static pc_status float_input(ref_ctx *ctx, const pc_data *t, const char *what, double **vals, size_t *n)
{
    *vals = NULL;
    *n = 0;
    if (t->kind != PC_TYPE_TENSOR || !ref_is_float(t->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "%s must be a floating-point tensor", what);
    if (!(*vals = malloc(t->n_elements ? (size_t)t->n_elements * sizeof **vals : 1)))
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory reading %s", what);
    for (uint64_t i = 0; i < t->n_elements; i++)
        (*vals)[i] = ref_get_f64(t, i);
    *n = (size_t)t->n_elements;
    return PC_OK;
}

static int lookup(const char *s, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

KERNEL(Resize)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    int32_t r = x->rank, axes[PC_MAX_RANK];
    resize_plan p;
    resize_defaults(x, &p);
    p.ort_lengths = ctx->opts->resize_ort_lengths;
    p.float32 = ctx->opts->resize_float32_coordinates;
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    const char *ms = ref_attr_string(ctx, "mode", "nearest");
    int m = lookup(ms, modes, ctx->opset >= 11 ? 3 : 2);
    if (m < 0) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'mode' '%s' is not supported at this opset", ms);
    p.mode = (resize_mode)m;
    size_t na = (size_t)r;
    for (int32_t d = 0; d < r; d++)
        axes[d] = d;
    if (ctx->opset < 11) { /* Resize-10: scales only, asymmetric coordinates */
        double *sc;
        size_t n;
        p.coord = CT_ASYMMETRIC;
        p.nearest = NR_LEGACY;
        if ((st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK ||
            (st = float_input(ctx, in[1], "input 1 'scales'", &sc, &n)) != PC_OK)
            return st;
        if (n != na)
            st = ref_fail(ctx, PC_ERR_SHAPE, "'scales' has %zu entries for rank %d", n, (int)r);
        else
            st = resize_scales(ctx, x, &p, sc, axes, n);
        free(sc);
        return st != PC_OK ? st : resize_run(ctx, x, &p, out);
    }
    static const char *const coords[] = {"half_pixel",        "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners",     "asymmetric",           "tf_half_pixel_for_nn",
                                         "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *cs = ref_attr_string(ctx, "coordinate_transformation_mode", "half_pixel");
    const char *ns = ref_attr_string(ctx, "nearest_mode", "round_prefer_floor");
    int c = lookup(cs, coords, 7), nr = lookup(ns, nearests, 4);
    if (c < 0 || (c == CT_HALF_PIXEL_SYMMETRIC && ctx->opset < 19))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "'coordinate_transformation_mode' '%s' is not supported at this opset", cs);
    if (nr < 0) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'nearest_mode' '%s' is invalid", ns);
    p.coord = (coord_mode)c;
    p.nearest = (nearest_rule)nr;
    p.cubic_a = ref_attr_float(ctx, "cubic_coeff_a", -0.75);
    p.exclude_outside = ref_attr_int(ctx, "exclude_outside", 0) != 0;
    p.extrapolation = ref_attr_float(ctx, "extrapolation_value", 0.0);
    int policy = 0; /* stretch, not_larger, not_smaller (opset 18) */
    if (ctx->opset >= 18) {
        static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
        const char *ps = ref_attr_string(ctx, "keep_aspect_ratio_policy", "stretch");
        if ((policy = lookup(ps, policies, 3)) < 0)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'keep_aspect_ratio_policy' '%s' is invalid", ps);
        size_t n;
        const int64_t *av = ref_attr_ints(ctx, "axes", &n);
        bool mark[PC_MAX_RANK];
        if (av) {
            if (n > (size_t)r)
                return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'axes' has %zu entries for rank %d", n, (int)r);
            if ((st = read_axes(ctx, av, n, r, "'axes'", mark, axes)) != PC_OK) return st;
            na = n;
        }
    }
    bool has_scales = has_input(in, n_in, 2) && in[2]->kind == PC_TYPE_TENSOR && in[2]->n_elements > 0;
    bool has_sizes =
        has_input(in, n_in, 3) && (in[3]->n_elements > 0 || !has_scales); /* empty sizes: absent */
    if (has_scales == has_sizes)
        return ref_fail(ctx, PC_ERR_ARITY, "exactly one of 'scales' (non-empty) and 'sizes' must be given");
    if (p.coord == CT_TF_CROP_AND_RESIZE) {
        double *roi;
        size_t n;
        if (!has_input(in, n_in, 1))
            return ref_fail(ctx, PC_ERR_ARITY, "input 1 'roi' is required by tf_crop_and_resize");
        if ((st = float_input(ctx, in[1], "input 1 'roi'", &roi, &n)) != PC_OK) return st;
        if (n != 2 * na) st = ref_fail(ctx, PC_ERR_SHAPE, "'roi' has %zu entries, %zu expected", n, 2 * na);
        for (size_t k = 0; k < na && st == PC_OK; k++) {
            p.roi_lo[axes[k]] = roi[k];
            p.roi_hi[axes[k]] = roi[na + k];
        }
        free(roi);
        if (st != PC_OK) return st;
    }
    if (has_scales) {
        double *sc;
        size_t n;
        if ((st = float_input(ctx, in[2], "input 2 'scales'", &sc, &n)) != PC_OK) return st;
        if (n != na)
            st = ref_fail(ctx, PC_ERR_SHAPE, "'scales' has %zu entries, %zu expected", n, na);
        else
            st = resize_scales(ctx, x, &p, sc, axes, n);
        free(sc);
    } else {
        int64_t *sz;
        size_t n;
        if ((st = int_input(ctx, in, n_in, 3, "input 3 'sizes'", &sz, &n)) != PC_OK) return st;
        if (n != na) st = ref_fail(ctx, PC_ERR_SHAPE, "'sizes' has %zu entries, %zu expected", n, na);
        double common = policy == 1 ? INFINITY : 0;
        for (size_t k = 0; k < n && st == PC_OK; k++) {
            int64_t in_len = x->dims[axes[k]];
            if (sz[k] < 0)
                st = ref_fail(ctx, PC_ERR_SHAPE, "sizes[%zu] = %lld is negative", k, (long long)sz[k]);
            else if (in_len == 0 && sz[k] > 0)
                st = ref_fail(ctx, PC_ERR_SHAPE, "cannot resize the empty axis %d", (int)axes[k]);
            if (st != PC_OK || in_len == 0) continue;
            double s = (double)sz[k] / (double)in_len; /* the reference's scale for a given size */
            p.scale[axes[k]] = s;
            p.length[axes[k]] = (double)sz[k];
            p.scale_f32[axes[k]] = (float)sz[k] / (float)in_len;
            p.dims[axes[k]] = sz[k];
            common = policy == 1 ? fmin(common, s) : fmax(common, s);
        }
        /* keep_aspect_ratio_policy: one scale for all listed axes, sizes rounded from it */
        for (size_t k = 0; k < n && st == PC_OK && policy != 0; k++) {
            int64_t in_len = x->dims[axes[k]];
            double v = floor(common * (double)in_len + 0.5);
            if (in_len == 0) continue;
            if (v > 0x1p62)
                st = ref_fail(ctx, PC_ERR_BUDGET, "output dimension %d of %.0f refused", (int)axes[k], v);
            p.scale[axes[k]] = common;
            p.length[axes[k]] = common * (double)in_len;
            p.scale_f32[axes[k]] = (float)common;
            p.dims[axes[k]] = (int64_t)v;
        }
        free(sz);
    }
    if (st != PC_OK) return st;
    if (ctx->opset >= 18 && ref_attr_int(ctx, "antialias", 0) != 0 && p.mode != RS_NEAREST)
        for (int32_t d = 0; d < r; d++)
            if (p.scale[d] < 1) return ref_unsupported(ctx, "'antialias' when downscaling");
    return resize_run(ctx, x, &p, out);
}

KERNEL(Upsample)
{
    (void)n_out;
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    resize_plan p;
    resize_defaults(x, &p);
    static const char *const modes[] = {"nearest", "linear"};
    const char *ms = ref_attr_string(ctx, "mode", "nearest");
    int m = lookup(ms, modes, 2);
    if (m < 0) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "'mode' '%s' is not nearest or linear", ms);
    p.mode = (resize_mode)m;
    p.coord = CT_ASYMMETRIC;
    p.nearest = NR_LEGACY;
    double *sc = NULL;
    size_t n = 0;
    if (ctx->opset < 9) { /* scales was an attribute before opset 9 */
        const float *a = ref_attr_floats(ctx, "scales", &n);
        if (!a) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'scales' is required");
        if (!(sc = malloc(n ? n * sizeof *sc : 1))) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < n; k++)
            sc[k] = a[k];
    } else if ((st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK ||
               (st = float_input(ctx, in[1], "input 1 'scales'", &sc, &n)) != PC_OK) {
        return st;
    }
    int32_t axes[PC_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        axes[d] = d;
    if (n != (size_t)x->rank)
        st = ref_fail(ctx, PC_ERR_SHAPE, "'scales' has %zu entries for rank %d", n, (int)x->rank);
    for (size_t k = 0; k < n && st == PC_OK; k++)
        if (!(sc[k] >= 1)) st = ref_fail(ctx, PC_ERR_VALUE, "scales[%zu] = %g is below 1", k, sc[k]);
    if (st == PC_OK) st = resize_scales(ctx, x, &p, sc, axes, n);
    free(sc);
    return st != PC_OK ? st : resize_run(ctx, x, &p, out);
}

/* ---- Unique
 * -------------------------------------------------------------------------------------------------- */

/* Total order on elements: strings bytewise, floats numerically with NaNs equal and last (as numpy sorts). */
static int cmp_elem(const pc_data *x, uint64_t a, uint64_t b)
{
    if (x->dtype == PC_DTYPE_STRING) {
        const pc_bytes *u = &((const pc_bytes *)x->data)[a], *v = &((const pc_bytes *)x->data)[b];
        size_t n = u->len < v->len ? u->len : v->len;
        int c = n ? memcmp(u->data, v->data, n) : 0;
        return c ? (c > 0) - (c < 0) : (u->len > v->len) - (u->len < v->len);
    }
    if (ref_is_float(x->dtype)) {
        double u = ref_get_f64(x, a), v = ref_get_f64(x, b);
        bool nu = isnan(u), nv = isnan(v);
        if (nu || nv) return (int)nu - (int)nv;
        return (u > v) - (u < v);
    }
    int64_t u = ref_get_i64(x, a), v = ref_get_i64(x, b);
    if (x->dtype == PC_DTYPE_UINT64) return ((uint64_t)u > (uint64_t)v) - ((uint64_t)u < (uint64_t)v);
    return (u > v) - (u < v);
}

/* Slices along the unique axis: slice a is elements (o, a, i) for o < outer, i < inner, compared in that
 * order. */
typedef struct slices {
    const pc_data *x;
    int64_t outer, dim, inner;
} slices;

static int cmp_slices(const slices *s, int64_t a, int64_t b)
{
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t i = 0; i < s->inner; i++) {
            int c = cmp_elem(s->x, (uint64_t)((o * s->dim + a) * s->inner + i),
                             (uint64_t)((o * s->dim + b) * s->inner + i));
            if (c) return c;
        }
    return 0;
}

/* Stable merge sort, so the first of equal slices is the first occurrence. */
static void sort_slices(const slices *s, int64_t *perm, int64_t *tmp, int64_t n)
{
    if (n < 2) return;
    int64_t h = n / 2, i = 0, j = h, k = 0;
    sort_slices(s, perm, tmp, h);
    sort_slices(s, perm + h, tmp, n - h);
    while (i < h && j < n)
        tmp[k++] = cmp_slices(s, perm[j], perm[i]) < 0 ? perm[j++] : perm[i++];
    while (i < h)
        tmp[k++] = perm[i++];
    while (j < n)
        tmp[k++] = perm[j++];
    memcpy(perm, tmp, (size_t)n * sizeof *perm);
}

KERNEL(Unique)
{
    pc_status st = need_data(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if (!ref_is_numeric(x->dtype) && x->dtype != PC_DTYPE_STRING)
        return ref_unsupported(ctx, "input of element type %s", pc_dtype_name(x->dtype));
    bool sorted = ref_attr_int(ctx, "sorted", 1) != 0, flat = !ref_has_attr(ctx, "axis");
    int32_t axis = 0;
    if (!flat && (st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), x->rank, false, &axis)) != PC_OK)
        return st;
    slices s = {x, 1, (int64_t)x->n_elements, 1};
    if (!flat) s = (slices){x, prod(x->dims, 0, axis), x->dims[axis], prod(x->dims, axis + 1, x->rank)};
    if (!x->n_elements) s.outer = 0;        /* empty slices all compare equal (and outer may have wrapped) */
    if ((uint64_t)s.dim > REF_MAX_ELEMENTS) /* inverse_indices has one entry per slice */
        return ref_fail(ctx, PC_ERR_BUDGET, "%lld slices along the axis refused (limit 2^31)",
                        (long long)s.dim);
    size_t bytes = (size_t)(s.dim ? s.dim : 1) * sizeof(int64_t);
    int64_t *perm = malloc(bytes), *tmp = malloc(bytes), *first = malloc(bytes), *count = malloc(bytes),
            *gid = malloc(bytes);
    pc_data *y[4] = {NULL, NULL, NULL, NULL};
    if (!perm || !tmp || !first || !count || !gid) {
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int64_t j = 0; j < s.dim; j++)
        perm[j] = j;
    sort_slices(&s, perm, tmp, s.dim);
    int64_t G = 0;
    for (int64_t k = 0; k < s.dim; k++) {
        if (k == 0 || cmp_slices(&s, perm[k - 1], perm[k]) != 0) {
            first[G] = perm[k];
            count[G++] = 0;
        }
        gid[perm[k]] = G - 1;
        count[G - 1]++;
    }
    if (!sorted) { /* renumber groups in order of first occurrence (perm becomes old -> new group number) */
        int64_t next = 0;
        for (int64_t j = 0; j < s.dim; j++)
            if (first[gid[j]] == j) perm[gid[j]] = next++;
        for (int64_t g = 0; g < G; g++) {
            tmp[perm[g]] = first[g];
            first[g] = count[g];
        }
        for (int64_t g = 0; g < G; g++)
            count[perm[g]] = first[g];
        memcpy(first, tmp, (size_t)G * sizeof *first);
        for (int64_t j = 0; j < s.dim; j++)
            gid[j] = perm[gid[j]];
    }
    int64_t dims[PC_MAX_RANK];
    int32_t r = flat ? 1 : x->rank;
    if (!flat) memcpy(dims, x->dims, (size_t)r * sizeof *dims);
    dims[flat ? 0 : axis] = G;
    if (!(y[0] = ref_new_tensor(ctx, x->dtype, r, dims))) {
        st = ctx->err->status;
        goto done;
    }
    for (int64_t o = 0; o < s.outer && st == PC_OK; o++)
        for (int64_t g = 0; g < G && st == PC_OK; g++)
            for (int64_t i = 0; i < s.inner && st == PC_OK; i++)
                st = copy_at(ctx, y[0], (uint64_t)((o * G + g) * s.inner + i), x,
                             (uint64_t)((o * s.dim + first[g]) * s.inner + i));
    const int64_t *lists[3] = {first, gid, count};
    for (uint32_t k = 1; k < 4 && k < n_out && st == PC_OK; k++) {
        int64_t n = k == 2 ? s.dim : G;
        if (!(y[k] = ref_new_tensor(ctx, PC_DTYPE_INT64, 1, &n))) {
            st = ctx->err->status;
            break;
        }
        for (int64_t j = 0; j < n; j++)
            ref_set_i64(y[k], (uint64_t)j, lists[k - 1][j]);
    }
done:
    free(perm);
    free(tmp);
    free(first);
    free(count);
    free(gid);
    if (st != PC_OK) {
        ref_unref_all(y, 4);
        return st;
    }
    for (uint32_t k = 0; k < 4 && k < n_out; k++)
        out[k] = y[k];
    return PC_OK;
}

/* ---- table
 * --------------------------------------------------------------------------------------------------- */

const ref_op ref_ops_tensor[] = {
    {"", "Compress", op_Compress},
    {"", "Concat", op_Concat},
    {"", "Constant", op_Constant},
    {"", "ConstantOfShape", op_ConstantOfShape},
    {"", "DepthToSpace", op_DepthToSpace},
    {"", "Expand", op_Expand},
    {"", "EyeLike", op_EyeLike},
    {"", "Flatten", op_Flatten},
    {"", "Gather", op_Gather},
    {"", "GatherElements", op_GatherElements},
    {"", "GatherND", op_GatherND},
    {"", "Identity", op_Identity},
    {"", "NonZero", op_NonZero},
    {"", "OneHot", op_OneHot},
    {"", "Pad", op_Pad},
    {"", "Range", op_Range},
    {"", "Reshape", op_Reshape},
    {"", "Resize", op_Resize},
    {"", "ReverseSequence", op_ReverseSequence},
    {"", "Scatter", op_Scatter},
    {"", "ScatterElements", op_ScatterElements},
    {"", "ScatterND", op_ScatterND},
    {"", "Shape", op_Shape},
    {"", "Size", op_Size},
    {"", "Slice", op_Slice},
    {"", "SpaceToDepth", op_SpaceToDepth},
    {"", "Split", op_Split},
    {"", "Squeeze", op_Squeeze},
    {"", "Tile", op_Tile},
    {"", "Transpose", op_Transpose},
    {"", "Trilu", op_Trilu},
    {"", "Unique", op_Unique},
    {"", "Unsqueeze", op_Unsqueeze},
    {"", "Upsample", op_Upsample},
};

const size_t ref_ops_tensor_count = sizeof ref_ops_tensor / sizeof ref_ops_tensor[0];
