/* Reference ops: tensor sequences and optionals (SequenceEmpty/Construct/Insert/At/Erase/Length,
 * SplitToSequence, ConcatFromSequence, SequenceMap, Optional, OptionalHasElement, OptionalGetElement). Values
 * are immutable once made, so sequences share their items by reference: SequenceAt hands out the item itself,
 * SequenceInsert makes a new item list that references the old items. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

/* ---- helpers
 * ------------------------------------------------------------------------------------------------- */

static pc_status require_kind(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, uint32_t index,
                              pc_type_kind kind, const char *what)
{
    if (index >= n_in || !in[index])
        return ref_fail(ctx, PC_ERR_ARITY, "input %u (%s) is required", index, what);
    if (in[index]->kind != kind) {
        char buf[96];
        return ref_fail(ctx, PC_ERR_TYPE, "input %u (%s) must be a %s, got %s", index, what,
                        kind == PC_TYPE_SEQUENCE   ? "sequence"
                        : kind == PC_TYPE_OPTIONAL ? "optional"
                                                   : "tensor",
                        pc_data_describe(in[index], buf, sizeof buf));
    }
    return PC_OK;
}

static pc_data *new_sequence(ref_ctx *ctx, pc_type_kind item_kind, pc_dtype dtype, uint32_t n,
                             pc_data *const *items)
{
    pc_error e;
    pc_data *d = pc_data_new_sequence(item_kind, dtype, n, items, &e);
    if (!d) ref_fail(ctx, e.status, "%s", e.message);
    return d;
}

static pc_data *new_optional(ref_ctx *ctx, pc_type_kind item_kind, pc_dtype dtype, pc_data *item)
{
    pc_error e;
    pc_data *d = pc_data_new_optional(item_kind, dtype, item, &e);
    if (!d) ref_fail(ctx, e.status, "%s", e.message);
    return d;
}

/* A position input: an int32/int64 tensor of one element, normalized from [-n, n + extra) to [0, n + extra).
 */
static pc_status read_position(ref_ctx *ctx, const pc_data *t, uint32_t n, uint32_t extra, uint32_t *pos)
{
    if (t->kind != PC_TYPE_TENSOR || (t->dtype != PC_DTYPE_INT32 && t->dtype != PC_DTYPE_INT64))
        return ref_fail(ctx, PC_ERR_TYPE, "input 'position' must be an int32 or int64 tensor");
    if (t->n_elements != 1 || t->rank > 1)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 'position' must be a scalar, got %llu elements",
                        (unsigned long long)t->n_elements);
    int64_t p = ref_get_i64(t, 0), hi = (int64_t)n + extra;
    if (p < -(int64_t)n || p >= hi)
        return ref_fail(ctx, PC_ERR_VALUE,
                        "position %lld is out of range [%lld, %lld] for a sequence of %u tensors",
                        (long long)p, -(long long)n, (long long)(hi - 1), n);
    *pos = (uint32_t)(p < 0 ? p + n : p);
    return PC_OK;
}

/* ---- construction and access
 * --------------------------------------------------------------------------------- */

static pc_status op_SequenceEmpty(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                  uint32_t n_out)
{
    (void)in, (void)n_in, (void)n_out;
    int64_t dtype = ref_attr_int(ctx, "dtype", PC_DTYPE_FLOAT);
    if (dtype < INT32_MIN || dtype > INT32_MAX || !pc_dtype_is_valid((int32_t)dtype))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'dtype' = %lld is not an element type",
                        (long long)dtype);
    out[0] = new_sequence(ctx, PC_TYPE_TENSOR, (pc_dtype)dtype, 0, NULL);
    return out[0] ? PC_OK : ctx->err->status;
}

static pc_status op_SequenceConstruct(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                      uint32_t n_out)
{
    (void)n_out;
    if (n_in == 0) return ref_fail(ctx, PC_ERR_ARITY, "at least one input is required");
    for (uint32_t i = 0; i < n_in; i++) {
        pc_status st = ref_require_tensor(ctx, in, n_in, i);
        if (st != PC_OK) return st;
        if (in[i]->dtype != in[0]->dtype)
            return ref_fail(ctx, PC_ERR_TYPE,
                            "input %u is %s but input 0 is %s: a sequence holds one element type", i,
                            pc_dtype_name(in[i]->dtype), pc_dtype_name(in[0]->dtype));
    }
    out[0] = new_sequence(ctx, PC_TYPE_TENSOR, in[0]->dtype, n_in, in);
    return out[0] ? PC_OK : ctx->err->status;
}

static pc_status op_SequenceInsert(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                   uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_kind(ctx, in, n_in, 0, PC_TYPE_SEQUENCE, "input_sequence");
    if (st != PC_OK || (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK) return st;
    const pc_data *seq = in[0];
    pc_data *t = in[1];
    if (seq->item_kind != PC_TYPE_TENSOR && seq->item_kind != PC_TYPE_NONE)
        return ref_fail(ctx, PC_ERR_TYPE, "input_sequence must be a sequence of tensors");
    if (seq->dtype != PC_DTYPE_UNDEFINED && seq->dtype != t->dtype)
        return ref_fail(ctx, PC_ERR_TYPE, "tensor is %s but the sequence holds %s", pc_dtype_name(t->dtype),
                        pc_dtype_name(seq->dtype));
    if (seq->n_items == UINT32_MAX) return ref_fail(ctx, PC_ERR_BUDGET, "sequence is full");
    uint32_t pos = seq->n_items;
    if (n_in > 2 && in[2] && (st = read_position(ctx, in[2], seq->n_items, 1, &pos)) != PC_OK) return st;
    pc_data **items = malloc(((size_t)seq->n_items + 1) * sizeof *items);
    if (!items) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory inserting into a sequence");
    for (uint32_t i = 0, k = 0; i <= seq->n_items; i++)
        items[i] = i == pos ? t : seq->items[k++];
    out[0] = new_sequence(ctx, PC_TYPE_TENSOR, t->dtype, seq->n_items + 1, items);
    free(items);
    return out[0] ? PC_OK : ctx->err->status;
}

static pc_status op_SequenceAt(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_kind(ctx, in, n_in, 0, PC_TYPE_SEQUENCE, "input_sequence");
    if (st != PC_OK) return st;
    if (n_in < 2 || !in[1]) return ref_fail(ctx, PC_ERR_ARITY, "input 1 (position) is required");
    uint32_t pos = 0;
    if ((st = read_position(ctx, in[1], in[0]->n_items, 0, &pos)) != PC_OK) return st;
    out[0] = pc_data_ref(in[0]->items[pos]);
    return PC_OK;
}

static pc_status op_SequenceErase(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                  uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_kind(ctx, in, n_in, 0, PC_TYPE_SEQUENCE, "input_sequence");
    if (st != PC_OK) return st;
    const pc_data *seq = in[0];
    if (seq->n_items == 0) return ref_fail(ctx, PC_ERR_VALUE, "cannot erase from an empty sequence");
    uint32_t pos = seq->n_items - 1;
    if (n_in > 1 && in[1] && (st = read_position(ctx, in[1], seq->n_items, 0, &pos)) != PC_OK) return st;
    pc_data **items = malloc((size_t)seq->n_items * sizeof *items);
    if (!items) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory erasing from a sequence");
    uint32_t k = 0;
    for (uint32_t i = 0; i < seq->n_items; i++)
        if (i != pos) items[k++] = seq->items[i];
    out[0] = new_sequence(ctx, seq->item_kind, seq->dtype, k, items);
    free(items);
    return out[0] ? PC_OK : ctx->err->status;
}

static pc_status op_SequenceLength(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                   uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_kind(ctx, in, n_in, 0, PC_TYPE_SEQUENCE, "input_sequence");
    if (st != PC_OK) return st;
    pc_data *y = ref_new_scalar(ctx, PC_DTYPE_INT64);
    if (!y) return ctx->err->status;
    ref_set_i64(y, 0, in[0]->n_items);
    out[0] = y;
    return PC_OK;
}

/* ---- split and concatenate
 * ----------------------------------------------------------------------------------- */

/* SplitToSequence: no split = chunks of 1 (axis dropped unless keepdims); a scalar split = chunks of that
 * size, the last one shorter; a 1-D split = the listed sizes, summing to the axis length (keepdims ignored).
 */
static pc_status op_SplitToSequence(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                    uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    const pc_data *split = n_in > 1 ? in[1] : NULL;
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input must have rank >= 1 to be split");
    int32_t axis;
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), x->rank, false, &axis)) != PC_OK) return st;
    if ((st = ref_require_bytewise(ctx, x->dtype, "a sequence op")) != PC_OK) return st;
    int64_t dim = x->dims[axis];
    int64_t *sizes = NULL;
    size_t n_parts = 0;
    bool keep = true;
    if (!split) {
        keep = ref_attr_int(ctx, "keepdims", 1) != 0;
        n_parts = (size_t)dim;
    } else {
        if (split->kind != PC_TYPE_TENSOR ||
            (split->dtype != PC_DTYPE_INT32 && split->dtype != PC_DTYPE_INT64))
            return ref_fail(ctx, PC_ERR_TYPE, "input 'split' must be an int32 or int64 tensor");
        if (split->rank > 1) return ref_fail(ctx, PC_ERR_SHAPE, "input 'split' must be a scalar or 1-D");
        if ((st = ref_read_ints(ctx, split, "input 'split'", &sizes, &n_parts)) != PC_OK) return st;
        if (split->rank == 0) {
            int64_t chunk = sizes[0];
            free(sizes);
            sizes = NULL;
            if (chunk <= 0)
                return ref_fail(ctx, PC_ERR_VALUE, "scalar 'split' must be positive, got %lld",
                                (long long)chunk);
            n_parts = (size_t)(dim / chunk + (dim % chunk != 0));
            if (n_parts > UINT32_MAX) return ref_fail(ctx, PC_ERR_BUDGET, "too many chunks");
            sizes = malloc((n_parts ? n_parts : 1) * sizeof *sizes);
            if (!sizes) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory splitting");
            for (size_t i = 0; i < n_parts; i++)
                sizes[i] = (int64_t)i + 1 < (int64_t)n_parts ? chunk : dim - chunk * (int64_t)i;
        } else {
            int64_t sum = 0;
            for (size_t i = 0; i < n_parts; i++) {
                if (sizes[i] < 0 || sizes[i] > dim - sum) {
                    st = ref_fail(ctx, PC_ERR_VALUE,
                                  "split[%zu] = %lld: sizes must be >= 0 and sum to %lld, the "
                                  "length of axis %d",
                                  i, (long long)sizes[i], (long long)dim, (int)axis);
                    free(sizes);
                    return st;
                }
                sum += sizes[i];
            }
            if (sum != dim) {
                free(sizes);
                return ref_fail(ctx, PC_ERR_VALUE, "split sizes sum to %lld, but axis %d has length %lld",
                                (long long)sum, (int)axis, (long long)dim);
            }
        }
    }
    /* only an empty input can ask for more chunks than it has elements: refuse absurd counts of empty tensors
     */
    if (n_parts > UINT32_MAX || (n_parts > ((size_t)1 << 20) && n_parts > x->n_elements)) {
        free(sizes);
        return ref_fail(ctx, PC_ERR_BUDGET, "too many chunks (%zu)", n_parts);
    }
    uint64_t outer = ref_shape_count(axis, x->dims),
             inner = ref_shape_count(x->rank - axis - 1, x->dims + axis + 1);
    pc_data **items = calloc(n_parts ? n_parts : 1, sizeof *items);
    if (!items) {
        free(sizes);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory splitting");
    }
    st = PC_OK;
    int64_t offset = 0;
    for (size_t p = 0; st == PC_OK && p < n_parts; p++) {
        int64_t len = sizes ? sizes[p] : 1;
        ref_shape s = {x->rank, {0}};
        memcpy(s.dims, x->dims, (size_t)x->rank * sizeof *s.dims);
        s.dims[axis] = len;
        if (!keep) { /* drop the axis: the chunk has length 1 */
            memmove(s.dims + axis, s.dims + axis + 1, (size_t)(x->rank - axis - 1) * sizeof *s.dims);
            s.rank--;
        }
        if (!(items[p] = ref_new_tensor(ctx, x->dtype, s.rank, s.dims))) {
            st = ctx->err->status;
            break;
        }
        uint64_t run = (uint64_t)len * inner;
        for (uint64_t o = 0; o < outer; o++)
            if (!ref_copy_elems(items[p], o * run, x, (o * (uint64_t)dim + (uint64_t)offset) * inner, run)) {
                st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying strings");
                break;
            }
        offset += len;
    }
    if (st == PC_OK && !(out[0] = new_sequence(ctx, PC_TYPE_TENSOR, x->dtype, (uint32_t)n_parts, items)))
        st = ctx->err->status;
    for (size_t p = 0; p < n_parts; p++)
        pc_data_unref(items[p]);
    free(items);
    free(sizes);
    return st;
}

/* ConcatFromSequence: numpy.concatenate along axis, or numpy.stack (new_axis = 1). */
static pc_status op_ConcatFromSequence(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                       uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_kind(ctx, in, n_in, 0, PC_TYPE_SEQUENCE, "input_sequence");
    if (st != PC_OK) return st;
    const pc_data *seq = in[0];
    if (!ref_has_attr(ctx, "axis")) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'axis' is required");
    bool new_axis = ref_attr_int(ctx, "new_axis", 0) != 0;
    if (seq->n_items == 0) return ref_fail(ctx, PC_ERR_VALUE, "cannot concatenate an empty sequence");
    const pc_data *first = seq->items[0];
    for (uint32_t i = 0; i < seq->n_items; i++)
        if (seq->items[i]->kind != PC_TYPE_TENSOR)
            return ref_fail(ctx, PC_ERR_TYPE, "item %u of input_sequence is not a tensor", i);
    int32_t axis;
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), first->rank, new_axis, &axis)) != PC_OK) return st;
    if (!new_axis && first->rank == 0)
        return ref_fail(ctx, PC_ERR_SHAPE, "cannot concatenate scalars without new_axis");
    if (new_axis && first->rank >= PC_MAX_RANK)
        return ref_fail(ctx, PC_ERR_SHAPE, "result rank exceeds the limit");
    if ((st = ref_require_bytewise(ctx, first->dtype, "a sequence op")) != PC_OK) return st;
    int64_t total = 0;
    for (uint32_t i = 0; i < seq->n_items; i++) {
        const pc_data *t = seq->items[i];
        char a[96], b[96];
        if (t->dtype != first->dtype)
            return ref_fail(ctx, PC_ERR_TYPE, "item %u is %s but item 0 is %s", i, pc_dtype_name(t->dtype),
                            pc_dtype_name(first->dtype));
        bool same = t->rank == first->rank;
        for (int32_t d = 0; same && d < t->rank; d++)
            same = d == axis && !new_axis ? true : t->dims[d] == first->dims[d];
        if (!same)
            return ref_fail(ctx, PC_ERR_SHAPE, "item %u is %s, item 0 is %s: shapes must match%s", i,
                            pc_data_describe(t, a, sizeof a), pc_data_describe(first, b, sizeof b),
                            new_axis ? "" : " except on the concatenation axis");
        int64_t len = new_axis ? 1 : t->dims[axis];
        if (len > INT64_MAX - total)
            return ref_fail(ctx, PC_ERR_OVERFLOW, "concatenated axis length overflows");
        total += len;
    }
    ref_shape s = {first->rank, {0}};
    memcpy(s.dims, first->dims, (size_t)first->rank * sizeof *s.dims);
    if (new_axis) {
        memmove(s.dims + axis + 1, s.dims + axis, (size_t)(first->rank - axis) * sizeof *s.dims);
        s.rank++;
    }
    s.dims[axis] = total;
    pc_data *y = ref_new_tensor(ctx, first->dtype, s.rank, s.dims);
    if (!y) return ctx->err->status;
    /* in y's shape: outer = dims before axis, inner = dims after; item i covers [offset, offset + len) on
     * axis */
    uint64_t outer = ref_shape_count(axis, s.dims),
             inner = ref_shape_count(s.rank - axis - 1, s.dims + axis + 1);
    int64_t offset = 0;
    for (uint32_t i = 0; i < seq->n_items; i++) {
        const pc_data *t = seq->items[i];
        int64_t len = new_axis ? 1 : t->dims[axis];
        uint64_t run = (uint64_t)len * inner;
        for (uint64_t o = 0; o < outer; o++)
            if (!ref_copy_elems(y, (o * (uint64_t)total + (uint64_t)offset) * inner, t, o * run, run)) {
                pc_data_unref(y);
                return ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying strings");
            }
        offset += len;
    }
    out[0] = y;
    return PC_OK;
}

/* ---- SequenceMap
 * --------------------------------------------------------------------------------------------- */

/* The element type of a body/node output declared as tensor or sequence of tensors (for empty results). */
static pc_dtype declared_elem(const pc_type *t)
{
    if (t->kind == PC_TYPE_TENSOR) return t->elem;
    if (t->kind == PC_TYPE_SEQUENCE && t->inner && t->inner->kind == PC_TYPE_TENSOR) return t->inner->elem;
    return PC_DTYPE_UNDEFINED;
}

static pc_status op_SequenceMap(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                uint32_t n_out)
{
    pc_status st = require_kind(ctx, in, n_in, 0, PC_TYPE_SEQUENCE, "input_sequence");
    if (st != PC_OK) return st;
    const pc_attr *a = pc_node_attr(ctx->node, "body");
    if (!a || a->type != PC_ATTR_GRAPH || !a->g)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'body' (a graph) is required");
    const pc_graph *body = a->g;
    if (body->n_inputs != n_in || body->n_outputs != n_out)
        return ref_fail(ctx, PC_ERR_ARITY,
                        "body takes %u inputs and gives %u outputs; the node has %u and %u", body->n_inputs,
                        body->n_outputs, n_in, n_out);
    uint32_t n = in[0]->n_items;
    for (uint32_t j = 1; j < n_in; j++) {
        if (!in[j]) return ref_fail(ctx, PC_ERR_ARITY, "input %u is missing", j);
        if (in[j]->kind == PC_TYPE_SEQUENCE && in[j]->n_items != n)
            return ref_fail(ctx, PC_ERR_SHAPE, "input %u is a sequence of %u items but input_sequence has %u",
                            j, in[j]->n_items, n);
        if (in[j]->kind != PC_TYPE_SEQUENCE && in[j]->kind != PC_TYPE_TENSOR)
            return ref_fail(ctx, PC_ERR_TYPE, "input %u must be a tensor or a sequence", j);
    }
    /* results[k * n + i]: body output k of iteration i */
    size_t n_results = (size_t)n * n_out;
    pc_data **results = calloc(n_results ? n_results : 1, sizeof *results);
    pc_data **body_in = calloc(n_in, sizeof *body_in);
    pc_data **body_out = calloc(n_out ? n_out : 1, sizeof *body_out);
    if (!results || !body_in || !body_out) {
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory for SequenceMap");
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < n_in; j++)
            body_in[j] = in[j]->kind == PC_TYPE_SEQUENCE ? in[j]->items[i] : in[j];
        if ((st = ref_run_body(ctx, body, n_in, body_in, body_out)) != PC_OK) goto done;
        for (uint32_t k = 0; k < n_out; k++) {
            results[(size_t)k * n + i] = body_out[k];
            body_out[k] = NULL;
            if (results[(size_t)k * n + i]->kind != PC_TYPE_TENSOR) {
                st = ref_fail(ctx, PC_ERR_TYPE, "body output %u must be a tensor", k);
                goto done;
            }
        }
    }
    for (uint32_t k = 0; k < n_out; k++) {
        pc_data *const *items = results + (size_t)k * n;
        pc_dtype dtype = n ? items[0]->dtype : declared_elem(&body->outputs[k]->type);
        if (dtype == PC_DTYPE_UNDEFINED && ctx->node->outputs[k])
            dtype = declared_elem(&ctx->node->outputs[k]->type);
        for (uint32_t i = 1; i < n; i++)
            if (items[i]->dtype != dtype) {
                st = ref_fail(ctx, PC_ERR_TYPE, "body output %u is %s in iteration %u but %s in iteration 0",
                              k, pc_dtype_name(items[i]->dtype), i, pc_dtype_name(dtype));
                goto done;
            }
        if (!(out[k] = new_sequence(ctx, PC_TYPE_TENSOR, dtype, n, items))) {
            st = ctx->err->status;
            goto done;
        }
    }
done:
    if (results)
        for (size_t i = 0; i < n_results; i++)
            pc_data_unref(results[i]);
    free(results);
    free(body_in);
    free(body_out);
    return st;
}

/* ---- optionals
 * ----------------------------------------------------------------------------------------------- */

static pc_status op_Optional(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    if (n_in > 0 && in[0]) {
        if (in[0]->kind != PC_TYPE_TENSOR && in[0]->kind != PC_TYPE_SEQUENCE)
            return ref_fail(ctx, PC_ERR_TYPE, "input must be a tensor or a sequence");
        out[0] = new_optional(ctx, in[0]->kind, in[0]->dtype, in[0]);
        return out[0] ? PC_OK : ctx->err->status;
    }
    const pc_attr *a = pc_node_attr(ctx->node, "type");
    if (!a || a->type != PC_ATTR_TYPE_PROTO || !a->tp)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'type' is required when the input is omitted");
    const pc_type *t = a->tp;
    if (t->kind != PC_TYPE_TENSOR && t->kind != PC_TYPE_SEQUENCE)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'type' must be a tensor or sequence type");
    out[0] = new_optional(ctx, t->kind, declared_elem(t), NULL);
    return out[0] ? PC_OK : ctx->err->status;
}

/* Opset 15: the input is a required optional. Opset 18: it may be omitted (false) or be a tensor/sequence
 * (true). */
static pc_status op_OptionalHasElement(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                       uint32_t n_out)
{
    (void)n_out;
    const pc_data *x = n_in > 0 ? in[0] : NULL;
    bool has;
    if (ctx->opset >= 18 && (!x || x->kind != PC_TYPE_OPTIONAL)) {
        has = x != NULL;
    } else {
        pc_status st = require_kind(ctx, in, n_in, 0, PC_TYPE_OPTIONAL, "input");
        if (st != PC_OK) return st;
        has = x->n_items > 0;
    }
    pc_data *y = ref_new_scalar(ctx, PC_DTYPE_BOOL);
    if (!y) return ctx->err->status;
    ref_set_i64(y, 0, has);
    out[0] = y;
    return PC_OK;
}

/* Opset 15: the input must be an optional. Opset 18: a tensor or sequence passes through. An empty optional
 * is an error (the spec leaves the result undefined). */
static pc_status op_OptionalGetElement(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                       uint32_t n_out)
{
    (void)n_out;
    if (ctx->opset >= 18 && n_in > 0 && in[0] && in[0]->kind != PC_TYPE_OPTIONAL) {
        out[0] = pc_data_ref(in[0]);
        return PC_OK;
    }
    pc_status st = require_kind(ctx, in, n_in, 0, PC_TYPE_OPTIONAL, "input");
    if (st != PC_OK) return st;
    if (!in[0]->n_items) return ref_fail(ctx, PC_ERR_VALUE, "the optional input is empty");
    out[0] = pc_data_ref(in[0]->items[0]);
    return PC_OK;
}

const ref_op ref_ops_sequence[] = {
    {"", "ConcatFromSequence", op_ConcatFromSequence},
    {"", "Optional", op_Optional},
    {"", "OptionalGetElement", op_OptionalGetElement},
    {"", "OptionalHasElement", op_OptionalHasElement},
    {"", "SequenceAt", op_SequenceAt},
    {"", "SequenceConstruct", op_SequenceConstruct},
    {"", "SequenceEmpty", op_SequenceEmpty},
    {"", "SequenceErase", op_SequenceErase},
    {"", "SequenceInsert", op_SequenceInsert},
    {"", "SequenceLength", op_SequenceLength},
    {"", "SequenceMap", op_SequenceMap},
    {"", "SplitToSequence", op_SplitToSequence},
};
const size_t ref_ops_sequence_count = sizeof ref_ops_sequence / sizeof ref_ops_sequence[0];
