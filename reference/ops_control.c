/* Reference ops: control flow (If, Loop, Scan). Bodies run through ref_run_body in a child frame of the
 * running graph, so they see outer-scope values. Per-iteration results are kept as values (references) and
 * stacked once at the end: simple, and the memory is what the outputs need anyway. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

/* Loops run on small graphs here: a trip count beyond this is a runaway model, not a test. */
#define REF_MAX_ITERATIONS ((int64_t)1 << 24)
/* Largest tensor a stacked output may become, in elements. */
#define REF_MAX_ELEMENTS ((uint64_t)1 << 31)

/* ---- helpers
 * ------------------------------------------------------------------------------------------------- */

static const pc_graph *graph_attr(ref_ctx *ctx, const char *name)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    if (!a || a->type != PC_ATTR_GRAPH || !a->g) {
        ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' (a graph) is required", name);
        return NULL;
    }
    return a->g;
}

/* The single element of a bool tensor (If's cond, Loop's cond and the body's condition output). */
static pc_status read_bool(ref_ctx *ctx, const pc_data *t, const char *what, bool *v)
{
    if (t->kind != PC_TYPE_TENSOR || t->dtype != PC_DTYPE_BOOL)
        return ref_fail(ctx, PC_ERR_TYPE, "%s must be a bool tensor", what);
    if (t->n_elements != 1)
        return ref_fail(ctx, PC_ERR_SHAPE, "%s must hold one element, got %llu", what,
                        (unsigned long long)t->n_elements);
    *v = ref_get_i64(t, 0) != 0;
    return PC_OK;
}

/* Binds a value to a body input. A body input declared optional that is fed a plain tensor or sequence gets
 * it wrapped (Loop-16 carries optional(seq) in and seq out, e.g. test_loop16_seq_none); anything else as is.
 */
static pc_status bind_input(ref_ctx *ctx, const pc_value *decl, pc_data *v, pc_data **bound)
{
    if (decl->type.kind == PC_TYPE_OPTIONAL && v->kind != PC_TYPE_OPTIONAL) {
        pc_error e;
        if (!(*bound = pc_data_new_optional(v->kind, v->dtype, v, &e)))
            return ref_fail(ctx, e.status, "%s", e.message);
        return PC_OK;
    }
    *bound = pc_data_ref(v);
    return PC_OK;
}

/* x indexed at `index` on `axis`: a new tensor of rank - 1. */
static pc_data *slice_at(ref_ctx *ctx, const pc_data *x, int32_t axis, int64_t index)
{
    if (ref_require_bytewise(ctx, x->dtype, "a loop body value") != PC_OK) return NULL;
    int64_t dims[PC_MAX_RANK];
    for (int32_t d = 0, k = 0; d < x->rank; d++)
        if (d != axis) dims[k++] = x->dims[d];
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank - 1, dims);
    if (!y) return NULL;
    uint64_t outer = ref_shape_count(axis, x->dims),
             inner = ref_shape_count(x->rank - axis - 1, x->dims + axis + 1);
    uint64_t len = (uint64_t)x->dims[axis];
    for (uint64_t o = 0; o < outer; o++)
        if (!ref_copy_elems(y, o * inner, x, (o * len + (uint64_t)index) * inner, inner)) {
            pc_data_unref(y);
            ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying strings");
            return NULL;
        }
    return y;
}

/* Stacks n same-shaped tensors (the per-iteration values of one scan output) into one tensor: the dims
 * lead[0.. n_lead) (their product is n) are inserted at `axis` of the item shape (axis may be negative,
 * counted in the result's rank). A NULL item stays zero (Scan-8's padding past a sequence's length). Without
 * any item (zero iterations) the item shape and type come from `decl`, the body's declared output type. */
static pc_status stack_items(ref_ctx *ctx, pc_data *const *items, uint64_t n, int n_lead, const int64_t *lead,
                             int64_t axis_attr, const pc_type *decl, const char *what, pc_data **out)
{
    const pc_data *proto = NULL;
    for (uint64_t i = 0; i < n && !proto; i++)
        proto = items[i];
    pc_dtype dtype;
    int32_t rank;
    int64_t dims[PC_MAX_RANK];
    if (proto) {
        dtype = proto->dtype;
        rank = proto->rank;
        if (rank) memcpy(dims, proto->dims, (size_t)rank * sizeof *dims);
    } else {
        /* nothing ran: the result is empty, but its rank, dims and type must still be right */
        bool known = decl && decl->kind == PC_TYPE_TENSOR && decl->elem != PC_DTYPE_UNDEFINED &&
                     decl->shape.rank >= 0 && decl->shape.rank < PC_MAX_RANK;
        for (int32_t d = 0; known && d < decl->shape.rank; d++)
            known = decl->shape.dims[d].kind == PC_DIM_KNOWN;
        if (!known)
            return ref_unsupported(ctx,
                                   "%s after zero iterations: the body does not declare the output's element "
                                   "type and full shape",
                                   what);
        dtype = decl->elem;
        rank = decl->shape.rank;
        for (int32_t d = 0; d < rank; d++)
            dims[d] = decl->shape.dims[d].size;
    }
    if (rank + n_lead > PC_MAX_RANK)
        return ref_fail(ctx, PC_ERR_SHAPE, "%s would exceed the rank limit", what);
    int32_t axis;
    pc_status st = ref_axis(ctx, axis_attr, rank, true, &axis);
    if (st != PC_OK) return st;
    for (uint64_t i = 0; i < n; i++) {
        const pc_data *t = items[i];
        if (!t) continue;
        if (t->kind != PC_TYPE_TENSOR)
            return ref_fail(ctx, PC_ERR_TYPE, "%s must be a tensor in every iteration", what);
        bool same = t->dtype == dtype && t->rank == rank;
        for (int32_t d = 0; same && d < rank; d++)
            same = t->dims[d] == dims[d];
        if (!same) {
            char a[96], b[96];
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "%s is %s in iteration %llu but %s before: it must keep its type and "
                            "shape",
                            what, pc_data_describe(t, a, sizeof a), (unsigned long long)i,
                            pc_data_describe(proto, b, sizeof b));
        }
    }
    if ((st = ref_require_bytewise(ctx, dtype, "a loop body value")) != PC_OK) return st;
    int64_t odims[PC_MAX_RANK];
    memcpy(odims, dims, (size_t)axis * sizeof *dims);
    memcpy(odims + axis, lead, (size_t)n_lead * sizeof *lead);
    memcpy(odims + axis + n_lead, dims + axis, (size_t)(rank - axis) * sizeof *dims);
    uint64_t count = 1;
    for (int32_t d = 0; d < rank + n_lead; d++) {
        if (odims[d] && count > REF_MAX_ELEMENTS / (uint64_t)odims[d])
            return ref_fail(ctx, PC_ERR_BUDGET, "%s would exceed 2^31 elements", what);
        count *= (uint64_t)odims[d];
    }
    pc_data *y = ref_new_tensor(ctx, dtype, rank + n_lead, odims);
    if (!y) return ctx->err->status;
    uint64_t outer = ref_shape_count(axis, dims), inner = ref_shape_count(rank - axis, dims + axis);
    for (uint64_t i = 0; i < n; i++) {
        if (!items[i]) continue;
        for (uint64_t o = 0; o < outer; o++)
            if (!ref_copy_elems(y, (o * n + i) * inner, items[i], o * inner, inner)) {
                pc_data_unref(y);
                return ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying strings");
            }
    }
    *out = y;
    return PC_OK;
}

/* A growing list of per-iteration values, `width` per iteration. */
typedef struct value_list {
    pc_data **v;
    uint64_t n, cap; /* in values */
} value_list;

static pc_status list_push(ref_ctx *ctx, value_list *l, pc_data *v)
{
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? l->cap * 2 : 16;
        pc_data **grown = cap <= SIZE_MAX / sizeof *grown ? realloc(l->v, (size_t)cap * sizeof *grown) : NULL;
        if (!grown) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory collecting loop outputs");
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return PC_OK;
}

static void list_free(value_list *l)
{
    for (uint64_t i = 0; i < l->n; i++)
        pc_data_unref(l->v[i]);
    free(l->v);
}

/* ---- If
 * ------------------------------------------------------------------------------------------------------ */

static pc_status op_If(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    bool cond = false;
    if (st != PC_OK || (st = read_bool(ctx, in[0], "input 'cond'", &cond)) != PC_OK) return st;
    const pc_graph *branch = graph_attr(ctx, cond ? "then_branch" : "else_branch");
    if (!branch) return ctx->err->status;
    if (branch->n_outputs != n_out)
        return ref_fail(ctx, PC_ERR_ARITY, "%s gives %u outputs but the node has %u",
                        cond ? "then_branch" : "else_branch", branch->n_outputs, n_out);
    return ref_run_body(ctx, branch, 0, NULL, out);
}

/* ---- Loop
 * ---------------------------------------------------------------------------------------------------- */

/* Loop(M, cond, v_initial...): body(iteration_num, cond, v...) -> (cond, v..., scan...). Outputs the final
 * v... and each scan output stacked on a new axis 0. */
static pc_status op_Loop(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    const pc_graph *body = graph_attr(ctx, "body");
    if (!body) return ctx->err->status;
    if (n_in < 2)
        return ref_fail(ctx, PC_ERR_ARITY, "Loop takes inputs M and cond (either may be empty) first");
    uint32_t n_carried = n_in - 2;
    if (body->n_inputs != n_carried + 2 || body->n_outputs < n_carried + 1)
        return ref_fail(ctx, PC_ERR_ARITY,
                        "body has %u inputs and %u outputs; with %u loop-carried values it needs "
                        "%u inputs and at least %u outputs",
                        body->n_inputs, body->n_outputs, n_carried, n_carried + 2, n_carried + 1);
    uint32_t n_scan = body->n_outputs - 1 - n_carried;
    if (n_out != n_carried + n_scan)
        return ref_fail(ctx, PC_ERR_ARITY,
                        "the node has %u outputs, the body gives %u loop-carried and %u scan "
                        "outputs",
                        n_out, n_carried, n_scan);
    bool has_trip = in[0] != NULL, has_cond = in[1] != NULL, cond = true;
    int64_t trip = 0;
    pc_status st;
    if (has_trip) {
        if (in[0]->kind != PC_TYPE_TENSOR || !ref_is_int(in[0]->dtype) || in[0]->n_elements != 1)
            return ref_fail(ctx, PC_ERR_TYPE, "input 'M' must be an int64 scalar");
        trip = ref_get_i64(in[0], 0);
    }
    if (has_cond && (st = read_bool(ctx, in[1], "input 'cond'", &cond)) != PC_OK) return st;
    for (uint32_t i = 0; i < n_carried; i++)
        if (!in[2 + i]) return ref_fail(ctx, PC_ERR_ARITY, "loop-carried input %u is missing", i);

    pc_data **carried = calloc(n_carried + 1, sizeof *carried);
    pc_data **body_in = calloc(n_carried + 2, sizeof *body_in);
    pc_data **body_out = calloc(body->n_outputs, sizeof *body_out);
    value_list scans = {NULL, 0, 0}; /* iteration i's scan output k at i * n_scan + k */
    st = PC_OK;
    if (!carried || !body_in || !body_out) {
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory starting a loop");
        goto done;
    }
    for (uint32_t i = 0; i < n_carried; i++)
        carried[i] = pc_data_ref(in[2 + i]);
    int64_t it = 0;
    for (; (!has_trip || it < trip) && cond; it++) {
        if (it >= REF_MAX_ITERATIONS) {
            st = ref_fail(ctx, PC_ERR_BUDGET, "loop ran %lld iterations without ending", (long long)it);
            goto done;
        }
        if (!(body_in[0] = ref_new_scalar(ctx, PC_DTYPE_INT64)) ||
            !(body_in[1] = ref_new_scalar(ctx, PC_DTYPE_BOOL))) {
            st = ctx->err->status;
            goto done;
        }
        ref_set_i64(body_in[0], 0, it);
        ref_set_i64(body_in[1], 0, cond);
        for (uint32_t i = 0; i < n_carried; i++)
            if ((st = bind_input(ctx, body->inputs[2 + i], carried[i], &body_in[2 + i])) != PC_OK) goto done;
        st = ref_run_body(ctx, body, n_carried + 2, body_in, body_out);
        ref_unref_all(body_in, n_carried + 2);
        if (st != PC_OK) goto done;
        bool next = false;
        st = read_bool(ctx, body_out[0], "the body's condition output", &next);
        pc_data_unref(body_out[0]);
        body_out[0] = NULL;
        if (st != PC_OK) goto done;
        if (!has_cond && !next && (!has_trip || it + 1 < trip)) {
            /* the spec says this condition is ignored without a cond input; onnxruntime and the ONNX
             * reference stop on it: no answer is safe */
            st = ref_unsupported(ctx,
                                 "Loop without a 'cond' input whose body yields false before the trip count "
                                 "(the spec ignores it, runtimes stop)");
            goto done;
        }
        if (has_cond) cond = next;
        for (uint32_t i = 0; i < n_carried; i++) {
            pc_data_unref(carried[i]);
            carried[i] = body_out[1 + i];
            body_out[1 + i] = NULL;
        }
        for (uint32_t k = 0; k < n_scan; k++) {
            pc_data *v = body_out[1 + n_carried + k];
            body_out[1 + n_carried + k] = NULL;
            if ((st = list_push(ctx, &scans, v)) != PC_OK) {
                pc_data_unref(v);
                goto done;
            }
        }
    }
    /* gather the scan outputs into a per-output array, then stack */
    pc_data **column = calloc(it ? (size_t)it : 1, sizeof *column);
    if (!column) {
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory stacking loop outputs");
        goto done;
    }
    for (uint32_t k = 0; k < n_scan && st == PC_OK; k++) {
        for (int64_t i = 0; i < it; i++)
            column[i] = scans.v[(uint64_t)i * n_scan + k];
        char what[64];
        snprintf(what, sizeof what, "scan output %u", k);
        st = stack_items(ctx, column, (uint64_t)it, 1, &it, 0, &body->outputs[1 + n_carried + k]->type, what,
                         &out[n_carried + k]);
    }
    free(column);
    if (st != PC_OK) goto done;
    for (uint32_t i = 0; i < n_carried; i++) {
        out[i] = carried[i];
        carried[i] = NULL;
    }
done:
    if (carried) ref_unref_all(carried, n_carried);
    if (body_in) ref_unref_all(body_in, n_carried + 2);
    if (body_out) ref_unref_all(body_out, body->n_outputs);
    free(carried);
    free(body_in);
    free(body_out);
    list_free(&scans);
    return st;
}

/* ---- Scan
 * ---------------------------------------------------------------------------------------------------- */

/* Reads a per-input/output int list attribute (default `fallback` for each of n). */
static pc_status int_list(ref_ctx *ctx, const char *name, uint32_t n, int64_t fallback, int64_t *vals)
{
    size_t k;
    const int64_t *v = ref_attr_ints(ctx, name, &k);
    if (v && k != n)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' has %zu values, expected %u", name, k, n);
    for (uint32_t i = 0; i < n; i++) {
        vals[i] = v ? v[i] : fallback;
        if (strstr(name, "direction") && vals[i] != 0 && vals[i] != 1)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s'[%u] = %lld must be 0 or 1", name, i,
                            (long long)vals[i]);
    }
    return PC_OK;
}

/* Runs the body once: states (n_state) then scan elements (n_scan_in) in; replaces states[] with the new
 * states and appends the scan output elements to *scan_out (or stores them at slot[k] when slot is given). */
static pc_status scan_step(ref_ctx *ctx, const pc_graph *body, pc_data **states, uint32_t n_state,
                           pc_data *const *elems, uint32_t n_scan_in, pc_data **body_in, pc_data **body_out,
                           pc_data **slot, uint64_t slot_stride)
{
    pc_status st = PC_OK;
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++)
        st = bind_input(ctx, body->inputs[i], states[i], &body_in[i]);
    for (uint32_t j = 0; j < n_scan_in && st == PC_OK; j++)
        st = bind_input(ctx, body->inputs[n_state + j], elems[j], &body_in[n_state + j]);
    if (st == PC_OK) st = ref_run_body(ctx, body, n_state + n_scan_in, body_in, body_out);
    ref_unref_all(body_in, n_state + n_scan_in);
    if (st != PC_OK) return st;
    for (uint32_t i = 0; i < n_state; i++) { /* Scan (unlike Loop) requires states to keep type and shape */
        const pc_data *a = states[i], *b = body_out[i];
        bool same =
            a->kind == b->kind && (a->kind != PC_TYPE_TENSOR || (a->dtype == b->dtype && a->rank == b->rank));
        for (int32_t d = 0; same && a->kind == PC_TYPE_TENSOR && d < a->rank; d++)
            same = a->dims[d] == b->dims[d];
        if (!same) {
            char da[96], db[96];
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "state %u went from %s to %s: Scan states must keep type and shape", i,
                            pc_data_describe(a, da, sizeof da), pc_data_describe(b, db, sizeof db));
        }
    }
    for (uint32_t i = 0; i < n_state; i++) {
        pc_data_unref(states[i]);
        states[i] = body_out[i];
        body_out[i] = NULL;
    }
    for (uint32_t k = 0; n_state + k < body->n_outputs; k++) {
        slot[k * slot_stride] = body_out[n_state + k];
        body_out[n_state + k] = NULL;
    }
    return PC_OK;
}

/* Scan-8: inputs (sequence_lens, states..., scans...) with batch axis 0 and sequence axis 1 on every scan
 * input; each batch entry runs separately. Scan outputs past an entry's length are zero (the spec leaves them
 * undefined; onnxruntime zero-fills). */
static pc_status scan8(ref_ctx *ctx, const pc_graph *body, pc_data *const *in, uint32_t n_in, pc_data **out,
                       uint32_t n_out, uint32_t n_state, uint32_t n_scan_in, uint32_t n_scan_out)
{
    const pc_data *lens = in[0];
    pc_data *const *init = in + 1, *const *scans = in + 1 + n_state;
    (void)n_in, (void)n_out;
    int64_t *dirs = calloc(n_scan_in, sizeof *dirs);
    if (!dirs) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    pc_status st = int_list(ctx, "directions", n_scan_in, 0, dirs);
    if (st != PC_OK) {
        free(dirs);
        return st;
    }
    int64_t batch = scans[0]->rank >= 2 ? scans[0]->dims[0] : 0,
            max_len = scans[0]->rank >= 2 ? scans[0]->dims[1] : 0;
    for (uint32_t j = 0; j < n_scan_in && st == PC_OK; j++)
        if (scans[j]->rank < 2 || scans[j]->dims[0] != batch || scans[j]->dims[1] != max_len)
            st = ref_fail(ctx, PC_ERR_SHAPE, "scan input %u must be [batch %lld, sequence %lld, ...]", j,
                          (long long)batch, (long long)max_len);
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++)
        if (init[i]->kind != PC_TYPE_TENSOR || init[i]->rank < 1 || init[i]->dims[0] != batch)
            st = ref_fail(ctx, PC_ERR_SHAPE, "initial state %u must be a tensor with batch axis %lld first",
                          i, (long long)batch);
    if (st == PC_OK && lens) {
        if (lens->kind != PC_TYPE_TENSOR || !ref_is_int(lens->dtype) || lens->rank != 1 ||
            lens->dims[0] != batch)
            st = ref_fail(ctx, PC_ERR_SHAPE, "input 'sequence_lens' must be an int64 tensor of shape [%lld]",
                          (long long)batch);
        for (int64_t b = 0; st == PC_OK && b < batch; b++) {
            int64_t len = ref_get_i64(lens, (uint64_t)b);
            if (len < 0 || len > max_len)
                st = ref_fail(ctx, PC_ERR_VALUE, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                              (long long)b, (long long)len, (long long)max_len);
        }
    }
    if (st == PC_OK && (batch > REF_MAX_ITERATIONS || max_len > REF_MAX_ITERATIONS / (batch ? batch : 1)))
        st =
            ref_fail(ctx, PC_ERR_BUDGET, "scan over %lld x %lld steps", (long long)batch, (long long)max_len);
    if (st != PC_OK) {
        free(dirs);
        return st;
    }
    uint64_t steps = (uint64_t)(batch * max_len);
    /* so[k * steps + b * max_len + t]: scan output k of entry b, step t; finals[i * batch + b]: final state i
     */
    pc_data **so = calloc(n_scan_out * steps + 1, sizeof *so);
    pc_data **finals = calloc(n_state * (uint64_t)batch + 1, sizeof *finals);
    pc_data **states = calloc(n_state + 1, sizeof *states);
    pc_data **row = calloc(n_scan_in, sizeof *row), **elems = calloc(n_scan_in, sizeof *elems);
    pc_data **body_in = calloc(n_state + n_scan_in, sizeof *body_in);
    pc_data **body_out = calloc(body->n_outputs + 1, sizeof *body_out);
    if (!so || !finals || !states || !row || !elems || !body_in || !body_out)
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory running Scan");
    for (int64_t b = 0; st == PC_OK && b < batch; b++) {
        int64_t len = lens ? ref_get_i64(lens, (uint64_t)b) : max_len;
        for (uint32_t i = 0; i < n_state && st == PC_OK; i++)
            if (!(states[i] = slice_at(ctx, init[i], 0, b))) st = ctx->err->status;
        for (uint32_t j = 0; j < n_scan_in && st == PC_OK; j++)
            if (!(row[j] = slice_at(ctx, scans[j], 0, b))) st = ctx->err->status;
        for (int64_t t = 0; t < len && st == PC_OK; t++) {
            for (uint32_t j = 0; j < n_scan_in && st == PC_OK; j++)
                if (!(elems[j] = slice_at(ctx, row[j], 0, dirs[j] ? len - 1 - t : t))) st = ctx->err->status;
            if (st == PC_OK)
                st = scan_step(ctx, body, states, n_state, elems, n_scan_in, body_in, body_out,
                               so + (uint64_t)(b * max_len + t), steps);
            ref_unref_all(elems, n_scan_in);
        }
        for (uint32_t i = 0; i < n_state; i++) {
            finals[(uint64_t)i * (uint64_t)batch + (uint64_t)b] = states[i];
            states[i] = NULL;
        }
        ref_unref_all(row, n_scan_in);
    }
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++) {
        if (!batch) { /* no entry ran: the final states are the (empty) initial ones */
            out[i] = pc_data_ref(init[i]);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "state %u", i);
        st = stack_items(ctx, finals + (uint64_t)i * (uint64_t)batch, (uint64_t)batch, 1, &batch, 0, NULL,
                         what, &out[i]);
    }
    int64_t lead[2] = {batch, max_len};
    for (uint32_t k = 0; k < n_scan_out && st == PC_OK; k++) {
        char what[64];
        snprintf(what, sizeof what, "scan output %u", k);
        st = stack_items(ctx, so + (uint64_t)k * steps, steps, 2, lead, 0, &body->outputs[n_state + k]->type,
                         what, &out[n_state + k]);
    }
    if (so)
        for (uint64_t i = 0; i < n_scan_out * steps; i++)
            pc_data_unref(so[i]);
    if (finals)
        for (uint64_t i = 0; i < n_state * (uint64_t)batch; i++)
            pc_data_unref(finals[i]);
    if (states) ref_unref_all(states, n_state);
    if (row) ref_unref_all(row, n_scan_in);
    if (body_out) ref_unref_all(body_out, body->n_outputs);
    free(so);
    free(finals);
    free(states);
    free(row);
    free(elems);
    free(body_in);
    free(body_out);
    free(dirs);
    return st;
}

/* Scan-9+: inputs (states..., scans...), each scan input iterated on its own axis and direction; each scan
 * output stacked on its own axis, appended or prepended. */
static pc_status scan9(ref_ctx *ctx, const pc_graph *body, pc_data *const *in, pc_data **out,
                       uint32_t n_state, uint32_t n_scan_in, uint32_t n_scan_out)
{
    pc_data *const *init = in, *const *scans = in + n_state;
    int64_t *attrs = calloc(2 * (size_t)n_scan_in + 2 * (size_t)n_scan_out + 1, sizeof *attrs);
    if (!attrs) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    int64_t *in_axes = attrs, *in_dirs = in_axes + n_scan_in, *out_axes = in_dirs + n_scan_in;
    int64_t *out_dirs = out_axes + n_scan_out;
    pc_status st = int_list(ctx, "scan_input_axes", n_scan_in, 0, in_axes);
    if (st == PC_OK) st = int_list(ctx, "scan_input_directions", n_scan_in, 0, in_dirs);
    if (st == PC_OK) st = int_list(ctx, "scan_output_axes", n_scan_out, 0, out_axes);
    if (st == PC_OK) st = int_list(ctx, "scan_output_directions", n_scan_out, 0, out_dirs);
    for (uint32_t j = 0; j < n_scan_in + n_scan_out && st == PC_OK; j++) {
        int64_t ax = j < n_scan_in ? in_axes[j] : out_axes[j - n_scan_in];
        if (ctx->opset < 11 && ax < 0) /* negative axes arrived with Scan-11 */
            st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "negative scan axis %lld needs opset 11", (long long)ax);
    }
    int64_t len = 0;
    for (uint32_t j = 0; j < n_scan_in && st == PC_OK; j++) {
        int32_t ax;
        if (scans[j]->rank < 1) {
            st = ref_fail(ctx, PC_ERR_SHAPE, "scan input %u must have rank >= 1", j);
            break;
        }
        if ((st = ref_axis(ctx, in_axes[j], scans[j]->rank, false, &ax)) != PC_OK) break;
        in_axes[j] = ax;
        if (j == 0)
            len = scans[j]->dims[ax];
        else if (scans[j]->dims[ax] != len)
            st = ref_fail(ctx, PC_ERR_SHAPE, "scan input %u has %lld steps on axis %d, scan input 0 has %lld",
                          j, (long long)scans[j]->dims[ax], (int)ax, (long long)len);
    }
    if (st == PC_OK && len > REF_MAX_ITERATIONS)
        st = ref_fail(ctx, PC_ERR_BUDGET, "scan over %lld steps", (long long)len);
    if (st != PC_OK) {
        free(attrs);
        return st;
    }
    uint64_t steps = (uint64_t)len;
    pc_data **so = calloc(n_scan_out * steps + 1, sizeof *so); /* so[k * steps + t] */
    pc_data **states = calloc(n_state + 1, sizeof *states);
    pc_data **elems = calloc(n_scan_in, sizeof *elems);
    pc_data **body_in = calloc(n_state + n_scan_in, sizeof *body_in);
    pc_data **body_out = calloc(body->n_outputs + 1, sizeof *body_out);
    if (!so || !states || !elems || !body_in || !body_out)
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory running Scan");
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++)
        states[i] = pc_data_ref(init[i]);
    for (int64_t t = 0; t < len && st == PC_OK; t++) {
        for (uint32_t j = 0; j < n_scan_in && st == PC_OK; j++)
            if (!(elems[j] = slice_at(ctx, scans[j], (int32_t)in_axes[j], in_dirs[j] ? len - 1 - t : t)))
                st = ctx->err->status;
        if (st == PC_OK)
            st = scan_step(ctx, body, states, n_state, elems, n_scan_in, body_in, body_out, so + t, steps);
        ref_unref_all(elems, n_scan_in);
    }
    for (uint32_t k = 0; k < n_scan_out && st == PC_OK; k++) {
        pc_data **col = so + (uint64_t)k * steps;
        if (out_dirs[k]) /* prepended each iteration: the last iteration's value comes first */
            for (uint64_t a = 0, b = steps ? steps - 1 : 0; a < b; a++, b--) {
                pc_data *tmp = col[a];
                col[a] = col[b];
                col[b] = tmp;
            }
        char what[64];
        snprintf(what, sizeof what, "scan output %u", k);
        st = stack_items(ctx, col, steps, 1, &len, out_axes[k], &body->outputs[n_state + k]->type, what,
                         &out[n_state + k]);
    }
    for (uint32_t i = 0; i < n_state && st == PC_OK; i++) {
        out[i] = states[i];
        states[i] = NULL;
    }
    if (so)
        for (uint64_t i = 0; i < n_scan_out * steps; i++)
            pc_data_unref(so[i]);
    if (states) ref_unref_all(states, n_state);
    if (body_out) ref_unref_all(body_out, body->n_outputs);
    free(so);
    free(states);
    free(elems);
    free(body_in);
    free(body_out);
    free(attrs);
    return st;
}

static pc_status op_Scan(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    const pc_graph *body = graph_attr(ctx, "body");
    if (!body) return ctx->err->status;
    int64_t m = ref_attr_int(ctx, "num_scan_inputs", -1);
    uint32_t first = ctx->opset < 9 ? 1 : 0; /* Scan-8 starts with sequence_lens */
    if (m < 1 || m > (int64_t)n_in - first)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute num_scan_inputs = %lld must be in [1, %lld]",
                        (long long)m, (long long)n_in - first);
    uint32_t n_scan_in = (uint32_t)m, n_state = n_in - first - n_scan_in;
    if (body->n_inputs != n_state + n_scan_in || body->n_outputs < n_state)
        return ref_fail(ctx, PC_ERR_ARITY,
                        "body has %u inputs and %u outputs; with %u states and %u scan inputs it "
                        "needs %u inputs and at least %u outputs",
                        body->n_inputs, body->n_outputs, n_state, n_scan_in, n_state + n_scan_in, n_state);
    uint32_t n_scan_out = body->n_outputs - n_state;
    if (n_out != body->n_outputs)
        return ref_fail(ctx, PC_ERR_ARITY, "the node has %u outputs, the body gives %u", n_out,
                        body->n_outputs);
    for (uint32_t i = first; i < n_in; i++) {
        if (!in[i]) return ref_fail(ctx, PC_ERR_ARITY, "input %u is missing", i);
        if (i >= first + n_state && in[i]->kind != PC_TYPE_TENSOR)
            return ref_fail(ctx, PC_ERR_TYPE, "scan input %u must be a tensor", i - first - n_state);
    }
    if (first) return scan8(ctx, body, in, n_in, out, n_out, n_state, n_scan_in, n_scan_out);
    return scan9(ctx, body, in, out, n_state, n_scan_in, n_scan_out);
}

const ref_op ref_ops_control[] = {
    {"", "If", op_If},
    {"", "Loop", op_Loop},
    {"", "Scan", op_Scan},
};
const size_t ref_ops_control_count = sizeof ref_ops_control / sizeof ref_ops_control[0];
