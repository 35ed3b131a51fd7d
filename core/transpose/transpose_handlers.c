/* The transpose optimizer's handlers: how a Transpose(perm) on a node's inputs moves to its outputs
 * (docs/transpose.md lists them). Each handler validates everything first and edits only when the push is
 * certain, so a refusal leaves the graph untouched. Perm convention: out.shape[i] = in.shape[perm[i]]; after
 * the push the node reads the pre-transpose tensor, so an axis a of the old input is axis perm[a] of the new
 * one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/strmap.h"
#include "core/transpose/transpose_internal.h"

/* A handler asked to plan stops here, at its first edit: it accepts with its outputs in out_perm (NULL: no
 * Transpose after them). */
static bool planned(tp_push *p, bool *done, const int64_t *out_perm, size_t out_rank)
{
    if (!p->plan) return false;
    *done = true;
    p->plan->has_out = out_perm != NULL;
    p->plan->out_rank = out_perm ? out_rank : 0;
    if (out_perm) memcpy(p->plan->out_perm, out_perm, out_rank * sizeof *out_perm);
    return true;
}

/* Same with the outputs in the pushed perm after the `removed` axes (flags over the input) are dropped. */
static bool planned_squeezed(tp_push *p, bool *done, const bool *removed)
{
    int64_t out_perm[PC_MAX_RANK];
    size_t n = tp_perm_squeeze(p->perm, p->rank, removed, out_perm);
    return planned(p, done, out_perm, n);
}

pc_status tp_push_plain(tp_push *p)
{
    for (uint32_t k = 0; k < p->n_carry; k++) {
        pc_status st = tp_transpose_input(p->ctx, p->node, p->carry[k], p->perm_inv, p->rank);
        if (st != PC_OK) return st;
    }
    return PC_OK;
}

static pc_status push_and_outputs(tp_push *p, bool *done)
{
    if (planned(p, done, p->perm, p->rank)) return PC_OK;
    pc_status st = tp_push_plain(p);
    if (st != PC_OK) return st;
    *done = true;
    return tp_transpose_outputs(p->ctx, p->node, p->perm, p->rank);
}

/* Unary elementwise ops, Clip/CastLike (input 0): nothing but the Transposes. */
static pc_status handle_simple(tp_push *p, bool *done)
{
    return push_and_outputs(p, done);
}

/* Broadcasting ops: lower-rank inputs first get leading 1s so the perm applies to every input. */
static pc_status handle_broadcast(tp_push *p, bool *done)
{
    for (uint32_t k = 0; k < p->n_carry; k++) {
        const pc_value *v = p->node->inputs[p->carry[k]];
        int32_t r = pc_value_rank(v);
        if (r < 0 || (size_t)r > p->rank) return PC_OK;
        if ((size_t)r < p->rank && tp_unsqueeze_adds_node(p->ctx, p->node, p->carry[k]) &&
            !tp_can_add(p->ctx, p->node, "Unsqueeze", v->type.elem))
            return PC_OK;
    }
    if (planned(p, done, p->perm, p->rank)) return PC_OK;
    for (uint32_t k = 0; k < p->n_carry; k++) {
        int32_t r = pc_value_rank(p->node->inputs[p->carry[k]]);
        pc_status st = tp_unsqueeze_input(p->ctx, p->node, p->carry[k], p->rank - (size_t)r);
        if (st != PC_OK) return st;
    }
    return push_and_outputs(p, done);
}

/* An axis attribute that maps through the perm (Concat, Split, Softmax >= 13, QDQ per-axis). */
static pc_status remap_axis_attr(tp_push *p, const char *name, int64_t fallback, bool required, bool *ok)
{
    *ok = false;
    const pc_attr *a = pc_node_attr(p->node, name);
    if (!a && required) return PC_OK;
    if (a && a->type != PC_ATTR_INT) return PC_OK;
    int64_t axis;
    if (!tp_axis_normalize(a ? a->i : fallback, p->rank, &axis)) return PC_OK;
    *ok = true;
    return pc_node_set_attr_int(p->node, name, p->perm[axis], p->ctx->err);
}

static pc_status handle_axis(tp_push *p, bool *done, const char *name, int64_t fallback, bool required)
{
    /* validate before editing: the attribute's value must be a valid axis */
    const pc_attr *a = pc_node_attr(p->node, name);
    int64_t axis;
    if ((!a && required) || (a && a->type != PC_ATTR_INT) ||
        !tp_axis_normalize(a ? a->i : fallback, p->rank, &axis))
        return PC_OK;
    if (planned(p, done, p->perm, p->rank)) return PC_OK;
    bool ok;
    pc_status st = remap_axis_attr(p, name, fallback, required, &ok);
    if (st != PC_OK) return st;
    return push_and_outputs(p, done);
}

static pc_status handle_concat(tp_push *p, bool *done)
{
    if (pc_fault_active(PC_FAULT_CONCAT_AXIS)) {
        /* injected bug (--inject concat-wrong-axis): the axis goes through the inverse perm */
        const pc_attr *a = pc_node_attr(p->node, "axis");
        int64_t axis;
        if (!a || a->type != PC_ATTR_INT || !tp_axis_normalize(a->i, p->rank, &axis)) return PC_OK;
        if (planned(p, done, p->perm, p->rank)) return PC_OK;
        pc_status st = pc_node_set_attr_int(p->node, "axis", p->perm_inv[axis], p->ctx->err);
        if (st != PC_OK) return st;
        return push_and_outputs(p, done);
    }
    return handle_axis(p, done, "axis", 0, true);
}

static pc_status handle_split(tp_push *p, bool *done)
{
    return handle_axis(p, done, "axis", 0, false);
}

static pc_status handle_softmax(tp_push *p, bool *done)
{
    if (p->ctx->opset >= 13) return handle_axis(p, done, "axis", -1, false);
    /* < 13: the input is coerced to 2-D at `axis`; the push is exact only when every axis stays on its side,
     * and for Hardmax when a row's axes (from `axis` on) also stay in place: it marks the first maximum of
     * each row in flattened order, so a reordered row picks another element among ties (rows may move) */
    int64_t axis;
    if (!tp_axis_normalize(pc_node_attr_int(p->node, "axis", 1), p->rank, &axis)) return PC_OK;
    bool row_order = strcmp(p->node->op_type, "Hardmax") == 0;
    for (size_t i = 0; i < p->rank; i++) {
        if (((int64_t)i < axis) != (p->perm[i] < axis) && !pc_fault_active(PC_FAULT_SOFTMAX_OLD_OPSET))
            return PC_OK; /* the fault (--inject softmax-push-old-opset) pushes across the coercion point */
        if (row_order && (int64_t)i >= axis && p->perm[i] != (int64_t)i) return PC_OK;
    }
    return push_and_outputs(p, done);
}

static pc_status handle_qdq(tp_push *p, bool *done)
{
    bool per_axis;
    if (!tp_qdq_kind(p->ctx, p->node, &per_axis)) return PC_OK;
    if (!per_axis) return push_and_outputs(p, done);
    pc_status st = handle_axis(p, done, "axis", 1, false);
    if (st == PC_OK && *done && !p->plan) pc_pass_note(p->ctx->opts, PC_RW_TP_QDQ_AXIS);
    return st;
}

/* Output perm after removing `removed` axes (flags over the transposed input) from a rank-r value. */
static pc_status transpose_squeezed_outputs(tp_push *p, const bool *removed)
{
    int64_t out_perm[PC_MAX_RANK];
    size_t n = tp_perm_squeeze(p->perm, p->rank, removed, out_perm);
    return tp_transpose_outputs(p->ctx, p->node, out_perm, n);
}

static pc_status handle_arg(tp_push *p, bool *done)
{
    int64_t axis;
    if (!tp_axis_normalize(pc_node_attr_int(p->node, "axis", 0), p->rank, &axis)) return PC_OK;
    int64_t keep = pc_node_attr_int(p->node, "keepdims", 1);
    bool removed[PC_MAX_RANK] = {false};
    removed[axis] = !keep;
    if (planned_squeezed(p, done, removed)) return PC_OK;
    pc_status st = pc_node_set_attr_int(p->node, "axis", p->perm[axis], p->ctx->err);
    if (st != PC_OK || (st = tp_push_plain(p)) != PC_OK) return st;
    *done = true;
    if (keep) return tp_transpose_outputs(p->ctx, p->node, p->perm, p->rank);
    return transpose_squeezed_outputs(p, removed);
}

/* Sorted, normalized, duplicate-free axes from the attribute or a constant input; false when unknown. */
static bool read_axes(tp_push *p, bool from_input, size_t rank, int64_t *axes, size_t *n, bool *present,
                      pc_dtype *dtype)
{
    *present = false;
    *dtype = PC_DTYPE_INT64;
    if (from_input) {
        if (p->node->n_inputs < 2 || !p->node->inputs[1]) {
            *n = 0;
            return true;
        }
        if (!tp_const_ints(p->node, 1, axes, n, dtype)) return false;
    } else {
        const pc_attr *a = pc_node_attr(p->node, "axes");
        if (!a) {
            *n = 0;
            return true;
        }
        if (a->type != PC_ATTR_INTS || a->n > PC_MAX_RANK) return false;
        *n = a->n;
        if (a->n) memcpy(axes, a->ints, a->n * sizeof *axes);
    }
    *present = true;
    bool seen[PC_MAX_RANK] = {false};
    for (size_t k = 0; k < *n; k++) {
        if (!tp_axis_normalize(axes[k], rank, &axes[k]) || seen[axes[k]]) return false;
        seen[axes[k]] = true;
    }
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Writes new axes (sorted) to the attribute or input 1. */
static pc_status write_axes(tp_push *p, bool to_input, int64_t *axes, size_t n, pc_dtype dtype)
{
    qsort(axes, n, sizeof *axes, cmp_i64);
    if (to_input) return tp_replace_input_ints(p->ctx, p->node, 1, dtype, n, axes);
    return pc_node_set_attr_ints(p->node, "axes", n, axes, p->ctx->err);
}

static pc_status handle_reduce(tp_push *p, bool *done)
{
    bool input_axes = strcmp(p->node->op_type, "ReduceSum") == 0 ? p->ctx->opset >= 13 : p->ctx->opset >= 18;
    int64_t axes[PC_MAX_RANK], new_axes[PC_MAX_RANK];
    size_t n;
    bool present;
    pc_dtype dtype;
    if (!read_axes(p, input_axes, p->rank, axes, &n, &present, &dtype))
        return PC_OK; /* non-constant: blocked */
    int64_t keep = pc_node_attr_int(p->node, "keepdims", 1);
    bool noop = input_axes && pc_node_attr_int(p->node, "noop_with_empty_axes", 0) != 0;
    pc_status st;
    bool removed[PC_MAX_RANK] = {false};
    for (size_t k = 0; k < n && !keep; k++)
        removed[axes[k]] = true;
    if (n == 0 && !noop ? planned(p, done, NULL, 0) : planned_squeezed(p, done, removed)) return PC_OK;
    if (n == 0) {
        if ((st = tp_push_plain(p)) != PC_OK) return st;
        *done = true;
        /* noop: the op is an identity; reduce-all with keepdims: all-1 dims need no Transpose; without:
         * scalar */
        return noop ? tp_transpose_outputs(p->ctx, p->node, p->perm, p->rank) : PC_OK;
    }
    for (size_t k = 0; k < n; k++)
        new_axes[k] = p->perm[axes[k]];
    if ((st = write_axes(p, input_axes, new_axes, n, dtype)) != PC_OK || (st = tp_push_plain(p)) != PC_OK)
        return st;
    *done = true;
    if (keep) return tp_transpose_outputs(p->ctx, p->node, p->perm, p->rank);
    return transpose_squeezed_outputs(p, removed);
}

static pc_status handle_squeeze(tp_push *p, bool *done)
{
    bool input_axes = p->ctx->opset >= 13;
    int64_t axes[PC_MAX_RANK], new_axes[PC_MAX_RANK];
    size_t n;
    bool present;
    pc_dtype dtype;
    if (!read_axes(p, input_axes, p->rank, axes, &n, &present, &dtype)) return PC_OK;
    if (!present) {
        /* no axes: every size-1 dim goes, which needs the shape */
        int64_t dims[PC_MAX_RANK];
        if (!pc_value_dims(p->node->inputs[0], dims)) return PC_OK;
        n = 0;
        for (size_t i = 0; i < p->rank; i++)
            if (dims[i] == 1) axes[n++] = (int64_t)i;
    }
    bool removed[PC_MAX_RANK] = {false};
    for (size_t k = 0; k < n; k++) {
        new_axes[k] = p->perm[axes[k]];
        removed[axes[k]] = true;
    }
    if (planned_squeezed(p, done, removed)) return PC_OK;
    pc_status st;
    if ((st = write_axes(p, input_axes, new_axes, n, dtype)) != PC_OK || (st = tp_push_plain(p)) != PC_OK)
        return st;
    *done = true;
    return transpose_squeezed_outputs(p, removed);
}

static pc_status handle_unsqueeze(tp_push *p, bool *done)
{
    bool input_axes = p->ctx->opset >= 13;
    int64_t axes[PC_MAX_RANK];
    size_t n;
    bool present;
    pc_dtype dtype;
    /* axes index the output: read them against the output rank (needs their count first) */
    if (input_axes) {
        if (!tp_const_ints(p->node, 1, axes, &n, &dtype)) return PC_OK;
    } else {
        const pc_attr *a = pc_node_attr(p->node, "axes");
        if (!a || a->type != PC_ATTR_INTS || a->n > PC_MAX_RANK) return PC_OK;
        n = a->n;
    }
    size_t out_rank = p->rank + n;
    if (out_rank > PC_MAX_RANK || !read_axes(p, input_axes, out_rank, axes, &n, &present, &dtype))
        return PC_OK;
    bool inserted[PC_MAX_RANK] = {false};
    for (size_t k = 0; k < n; k++)
        inserted[axes[k]] = true;
    int64_t out_perm[PC_MAX_RANK];
    tp_perm_unsqueeze(p->perm, p->rank, inserted, out_rank, out_perm);
    if (planned(p, done, out_perm, out_rank)) return PC_OK;
    pc_status st = tp_push_plain(p);
    if (st != PC_OK) return st;
    *done = true;
    return tp_transpose_outputs(p->ctx, p->node, out_perm, out_rank);
}

/* A computed 1-D int64 input of n values (as far as its static type tells): Gather can reorder it. */
static bool computed_ints(const pc_value *v, size_t n)
{
    if (!v || pc_value_const(v) || v->type.kind != PC_TYPE_TENSOR || v->type.elem != PC_DTYPE_INT64 ||
        v->type.shape.rank != 1)
        return false;
    const pc_dim *d = &v->type.shape.dims[0];
    return d->kind != PC_DIM_KNOWN || d->size == (int64_t)n;
}

/* Computed per-axis values are reordered as constants are, new[j] = old[perm_inv[j]]: a Gather by perm_inv.
 * Planted bug (--inject gather-perm-order): by perm; numerics catch it where perm is no involution. */
static const int64_t *gather_order(const tp_push *p)
{
    return pc_fault_active(PC_FAULT_GATHER_PERM_ORDER) ? p->perm : p->perm_inv;
}

/* new[j] = old[perm_inv[j]] per group of `rank` values (pads has two groups: begins, ends). */
static void permute_groups(const int64_t *old, size_t groups, const int64_t *perm_inv, size_t rank,
                           int64_t *out)
{
    for (size_t g = 0; g < groups; g++)
        for (size_t j = 0; j < rank; j++)
            out[g * rank + j] = old[g * rank + (size_t)perm_inv[j]];
}

static pc_status handle_pad(tp_push *p, bool *done)
{
    int64_t pads[2 * PC_MAX_RANK], np[2 * PC_MAX_RANK];
    size_t n = 0;
    pc_status st;
    if (p->ctx->opset < 11) {
        const pc_attr *a = pc_node_attr(p->node, "pads");
        if (!a || a->type != PC_ATTR_INTS || a->n != 2 * p->rank) return PC_OK;
        if (planned(p, done, p->perm, p->rank)) return PC_OK;
        permute_groups(a->ints, 2, p->perm_inv, p->rank, np);
        if ((st = pc_node_set_attr_ints(p->node, "pads", 2 * p->rank, np, p->ctx->err)) != PC_OK) return st;
        return push_and_outputs(p, done);
    }
    if (p->node->n_inputs > 3 && p->node->inputs[3]) return PC_OK; /* opset 18 axes: not handled */
    pc_value *pv = p->node->n_inputs > 1 ? p->node->inputs[1] : NULL;
    const pc_tensor *t = pv ? pc_value_const(pv) : NULL;
    if (!t) {
        /* computed pads: Gather(pads, [perm_inv, rank + perm_inv]) */
        if (!computed_ints(pv, 2 * p->rank) || !tp_can_add(p->ctx, p->node, "Gather", PC_DTYPE_INT64))
            return PC_OK;
        if (planned(p, done, p->perm, p->rank)) return PC_OK;
        int64_t order[2 * PC_MAX_RANK];
        const int64_t *by = gather_order(p);
        for (size_t j = 0; j < p->rank; j++) {
            order[j] = by[j];
            order[p->rank + j] = (int64_t)p->rank + by[j];
        }
        if ((st = tp_gather_input(p->ctx, p->node, 1, 2 * p->rank, order)) != PC_OK) return st;
        return push_and_outputs(p, done);
    }
    if (t->n_elements != 2 * p->rank || !pc_tensor_read_ints(t, pads, 2 * PC_MAX_RANK, &n)) return PC_OK;
    if (planned(p, done, p->perm, p->rank)) return PC_OK;
    permute_groups(pads, 2, p->perm_inv, p->rank, np);
    if ((st = tp_replace_input_ints(p->ctx, p->node, 1, t->dtype, n, np)) != PC_OK) return st;
    return push_and_outputs(p, done);
}

static pc_status handle_tile(tp_push *p, bool *done)
{
    int64_t reps[PC_MAX_RANK], nr[PC_MAX_RANK];
    size_t n;
    pc_dtype dtype;
    pc_value *rv = p->node->n_inputs > 1 ? p->node->inputs[1] : NULL;
    if (rv && !pc_value_const(rv)) {
        /* computed repeats: Gather(repeats, perm_inv) */
        if (!computed_ints(rv, p->rank) || !tp_can_add(p->ctx, p->node, "Gather", PC_DTYPE_INT64))
            return PC_OK;
        if (planned(p, done, p->perm, p->rank)) return PC_OK;
        pc_status st = tp_gather_input(p->ctx, p->node, 1, p->rank, gather_order(p));
        if (st != PC_OK) return st;
        return push_and_outputs(p, done);
    }
    if (!tp_const_ints(p->node, 1, reps, &n, &dtype) || n != p->rank) return PC_OK;
    if (planned(p, done, p->perm, p->rank)) return PC_OK;
    permute_groups(reps, 1, p->perm_inv, p->rank, nr);
    pc_status st = tp_replace_input_ints(p->ctx, p->node, 1, dtype, n, nr);
    if (st != PC_OK) return st;
    return push_and_outputs(p, done);
}

static pc_status handle_slice(tp_push *p, bool *done)
{
    int64_t axes[PC_MAX_RANK];
    size_t n = 0;
    pc_dtype dtype = PC_DTYPE_INT64;
    pc_status st;
    if (p->ctx->opset < 10) {
        const pc_attr *st_a = pc_node_attr(p->node, "starts"), *ax = pc_node_attr(p->node, "axes");
        if (!st_a || st_a->type != PC_ATTR_INTS || st_a->n > p->rank) return PC_OK;
        if (ax && (ax->type != PC_ATTR_INTS || ax->n != st_a->n)) return PC_OK;
        n = st_a->n;
        for (size_t k = 0; k < n; k++)
            axes[k] = ax ? ax->ints[k] : (int64_t)k;
    } else if (p->node->n_inputs > 3 && p->node->inputs[3] && !pc_value_const(p->node->inputs[3])) {
        /* computed axes: Gather(perm, axes) maps each (negative ones too, from Gather-11) */
        pc_value *av = p->node->inputs[3];
        if (p->ctx->opset < 11 || av->type.kind != PC_TYPE_TENSOR || av->type.shape.rank != 1 ||
            (av->type.elem != PC_DTYPE_INT64 && av->type.elem != PC_DTYPE_INT32) ||
            !tp_can_add(p->ctx, p->node, "Gather", av->type.elem))
            return PC_OK;
        if (planned(p, done, p->perm, p->rank)) return PC_OK;
        if ((st = tp_map_input(p->ctx, p->node, 3, av->type.elem, p->rank, p->perm)) != PC_OK) return st;
        return push_and_outputs(p, done);
    } else if (p->node->n_inputs > 3 && p->node->inputs[3]) {
        if (!tp_const_ints(p->node, 3, axes, &n, &dtype)) return PC_OK;
    } else {
        /* absent axes are 0..len(starts)-1: the length must be known (starts computed or not) */
        pc_value *sv = p->node->n_inputs > 1 ? p->node->inputs[1] : NULL;
        if (!sv || sv->type.kind != PC_TYPE_TENSOR || sv->type.shape.rank != 1 ||
            sv->type.shape.dims[0].kind != PC_DIM_KNOWN || sv->type.shape.dims[0].size > (int64_t)p->rank ||
            (sv->type.elem != PC_DTYPE_INT64 && sv->type.elem != PC_DTYPE_INT32))
            return PC_OK;
        n = (size_t)sv->type.shape.dims[0].size;
        dtype = sv->type.elem;
        for (size_t k = 0; k < n; k++)
            axes[k] = (int64_t)k;
    }
    bool seen[PC_MAX_RANK] = {false};
    for (size_t k = 0; k < n; k++) {
        if (!tp_axis_normalize(axes[k], p->rank, &axes[k]) || seen[axes[k]]) return PC_OK;
        seen[axes[k]] = true;
        axes[k] = p->perm[axes[k]]; /* not sorted: stays aligned with starts/ends/steps */
    }
    if (planned(p, done, p->perm, p->rank)) return PC_OK;
    if (p->ctx->opset < 10)
        st = pc_node_set_attr_ints(p->node, "axes", n, axes, p->ctx->err);
    else
        st = tp_replace_input_ints(p->ctx, p->node, 3, dtype, n, axes);
    if (st != PC_OK) return st;
    return push_and_outputs(p, done);
}

static pc_status handle_gather(tp_push *p, bool *done)
{
    /* only a constant scalar index: the op then drops one axis, like Squeeze */
    const pc_tensor *t = p->node->n_inputs > 1 ? pc_value_const(p->node->inputs[1]) : NULL;
    int64_t axis;
    if (!t || t->rank != 0 || !tp_axis_normalize(pc_node_attr_int(p->node, "axis", 0), p->rank, &axis))
        return PC_OK;
    /* planted bug (--inject gather-push-wrong-axis): the inverse perm; numerics catch it */
    int64_t to = pc_fault_active(PC_FAULT_GATHER_AXIS) ? p->perm_inv[axis] : p->perm[axis];
    bool removed[PC_MAX_RANK] = {false};
    removed[axis] = true;
    if (planned_squeezed(p, done, removed)) return PC_OK;
    pc_status st = pc_node_set_attr_int(p->node, "axis", to, p->ctx->err);
    if (st != PC_OK || (st = tp_push_plain(p)) != PC_OK) return st;
    *done = true;
    return transpose_squeezed_outputs(p, removed);
}

/* Shape(Transpose(x)) = Gather(Shape(x), perm); opset >= 15 start/end select perm[start:end]. */
static pc_status handle_shape(tp_push *p, bool *done)
{
    int64_t start = 0, end = (int64_t)p->rank, r = (int64_t)p->rank;
    if (p->ctx->opset >= 15) {
        start = pc_node_attr_int(p->node, "start", 0);
        end = pc_node_attr_int(p->node, "end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = start < 0 ? 0 : start > r ? r : start;
        end = end < 0 ? 0 : end > r ? r : end;
        if (end < start) end = start;
    }
    pc_value *out = p->node->outputs[0];
    if (!out || !tp_can_add(p->ctx, p->node, "Gather", PC_DTYPE_INT64)) return PC_OK;
    if (planned(p, done, NULL, 0)) return PC_OK; /* its output keeps its layout: a Gather reorders it */
    tp_ctx *ctx = p->ctx;
    pc_status st;
    pc_value *idx = pc_pass_add_ints(ctx->graph, "perm", (size_t)(end - start), p->perm + start, ctx->err);
    if (!idx) return ctx->err->status;
    pc_value *ins[2] = {out, idx};
    pc_node *g = pc_pass_add_node(ctx->graph, ctx->opts, "Gather", "", 2, ins, 1, p->node, ctx->err);
    if (!g) return ctx->err->status;
    pc_value *fresh = g->outputs[0];
    if ((st = pc_graph_move_output(p->node, 0, g, 0)) != PC_OK)
        return pc_error_set(ctx->err, st, "node '%s': cannot move its output", p->node->name);
    if ((st = pc_node_set_input(g, 0, fresh, ctx->err)) != PC_OK || (st = tp_push_plain(p)) != PC_OK)
        return st;
    pc_node_remove_attr(p->node, "start");
    pc_node_remove_attr(p->node, "end");
    *done = true;
    int64_t dim = r;
    pc_dim d = {.kind = PC_DIM_KNOWN, .size = dim};
    pc_type ty = {.kind = PC_TYPE_TENSOR, .elem = PC_DTYPE_INT64, .shape = {.rank = 1, .dims = &d}};
    return pc_value_set_type(fresh, &ty, ctx->err);
}

pc_status tp_replace_by_input(tp_ctx *ctx, pc_node *node, bool *kept)
{
    bool done;
    *kept = false;
    /* the run's rules: a graph output is handed to the input's producer only when this run may change it
     * (its EP, or its annotation group before partitioning); otherwise an Identity keeps the name */
    pc_status st = pc_pass_bypass_node_for(ctx->graph, ctx->opts, node, 0, 0, &done, ctx->err);
    if (st != PC_OK || done) return st;
    pc_value *a = node->inputs[0];
    if (!tp_can_add(ctx, node, "Identity", a->type.elem)) {
        *kept = true;
        return PC_OK;
    }
    pc_node *id = pc_pass_add_node(ctx->graph, ctx->opts, "Identity", "", 1, &a, 1, node, ctx->err);
    if (!id) return ctx->err->status;
    if ((st = pc_graph_move_output(node, 0, id, 0)) != PC_OK)
        return pc_error_set(ctx->err, st, "node '%s': cannot move its output", node->name);
    return pc_pass_remove_dead(ctx->graph, node, ctx->err);
}

/* Transpose(p2) after Transpose(p1): one Transpose with p1[p2[i]], or nothing when that is the identity. */
static pc_status handle_transpose(tp_push *p, bool *done)
{
    if (p->plan) return PC_OK; /* a Transpose is a relabeling in the plan, not a node that runs in a layout */
    int64_t p2[PC_MAX_RANK], c[PC_MAX_RANK];
    size_t r2;
    if (!tp_transpose_perm(p->node, p2, &r2) || r2 != p->rank) return PC_OK;
    tp_perm_compose(p->perm, p2, p->rank, c);
    pc_value *v = p->node->inputs[0];
    pc_node *first = v->producer;
    pc_status st;
    if ((st = pc_node_set_input(p->node, 0, first->inputs[0], p->ctx->err)) != PC_OK) return st;
    *done = true;
    if ((st = tp_remove_if_dead(p->ctx, first)) != PC_OK) return st;
    bool cancels = tp_perm_is_identity(c, p->rank);
    pc_pass_note(p->ctx->opts, cancels ? PC_RW_TP_CANCEL : PC_RW_TP_MERGE);
    bool kept = false;
    if (cancels && ((st = tp_replace_by_input(p->ctx, p->node, &kept)) != PC_OK || !kept)) return st;
    return pc_node_set_attr_ints(p->node, "perm", p->rank, c, p->ctx->err); /* kept: the identity perm */
}

/* Axis groups of a reshape from dims in[0..r) to out[0..s): group k is input axes [gi[k], gi[k+1]) and output
 * axes [go[k], go[k+1]) with equal element counts, each as small as the dims allow; size-1 dims left over at
 * the end join the last group. false for a 0 dim or counts that differ. */
static bool reshape_groups(const int64_t *in, size_t r, const int64_t *out, size_t s, size_t *gi, size_t *go,
                           size_t *n_groups)
{
    size_t i = 0, j = 0, k = 0;
    if (!r || !s) return false;
    while (i < r && j < s) {
        gi[k] = i;
        go[k] = j;
        uint64_t a = (uint64_t)in[i++], b = (uint64_t)out[j++];
        if (!a || !b) return false;
        while (a != b) {
            bool more_in = a < b;
            if (more_in ? i == r : j == s) return false;
            int64_t d = more_in ? in[i++] : out[j++];
            if (d <= 0 || !pc_u64_mul(more_in ? a : b, (uint64_t)d, more_in ? &a : &b)) return false;
        }
        k++;
    }
    for (; i < r; i++)
        if (in[i] != 1) return false;
    for (; j < s; j++)
        if (out[j] != 1) return false;
    gi[k] = r;
    go[k] = s;
    *n_groups = k;
    return true;
}

/* A Reshape that splits or merges axes carries the Transpose when every group of axes it merges stays
 * together, in order, in the stored tensor: the Reshape then runs on the stored tensor with its groups in
 * stored order, and the Transpose after it moves whole groups (ShuffleNet's channel shuffle in NHWC: the
 * split [N,C,H,W] -> [N,2,C/2,H,W] becomes [N,H,W,C] -> [N,H,W,2,C/2]). Input and output dims concrete, the
 * shape a constant. Beyond ORT, whose Reshape handler moves size-1 dims only (tp_reshape_merge does that in
 * the clean-up). */
static pc_status handle_reshape(tp_push *p, bool *done)
{
    pc_node *node = p->node;
    pc_value *y = node->outputs[0];
    int64_t in[PC_MAX_RANK], out[PC_MAX_RANK], shape[PC_MAX_RANK], new_dims[PC_MAX_RANK],
        out_perm[PC_MAX_RANK];
    size_t n_shape, gi[PC_MAX_RANK + 1], go[PC_MAX_RANK + 1], n_groups;
    pc_dtype dt;
    int32_t s = y ? pc_value_rank(y) : -1;
    if (s < 1 || pc_value_rank(node->inputs[0]) != (int32_t)p->rank || !pc_value_dims(node->inputs[0], in) ||
        !pc_value_dims(y, out) || !tp_const_ints(node, 1, shape, &n_shape, &dt) || n_shape != (size_t)s ||
        !reshape_groups(in, p->rank, out, (size_t)s, gi, go, &n_groups))
        return PC_OK;
    /* canonical axis a is stored axis perm[a]: a group's axes must be consecutive there, in order */
    size_t order[PC_MAX_RANK];
    for (size_t k = 0; k < n_groups; k++) {
        for (size_t a = gi[k] + 1; a < gi[k + 1]; a++)
            /* planted bug (--inject reshape-groups-apart): the check skipped; numerics catch it */
            if (p->perm[a] != p->perm[a - 1] + 1 && !pc_fault_active(PC_FAULT_RESHAPE_GROUPS_APART))
                return PC_OK;
        order[k] = k;
    }
    /* groups in stored order (insertion sort by their first stored axis; at most PC_MAX_RANK of them) */
    for (size_t k = 1; k < n_groups; k++)
        for (size_t m = k; m > 0 && p->perm[gi[order[m]]] < p->perm[gi[order[m - 1]]]; m--) {
            size_t t = order[m];
            order[m] = order[m - 1];
            order[m - 1] = t;
        }
    size_t at = 0;
    for (size_t m = 0; m < n_groups; m++) {
        size_t k = order[m];
        for (size_t j = go[k]; j < go[k + 1]; j++) {
            new_dims[at] = out[j];
            out_perm[j] = (int64_t)at++;
        }
    }
    if (planned(p, done, out_perm, (size_t)s)) return PC_OK;
    pc_status st = tp_push_plain(p);
    if (st != PC_OK ||
        (st = tp_replace_input_ints(p->ctx, node, 1, PC_DTYPE_INT64, (size_t)s, new_dims)) != PC_OK)
        return st;
    *done = true;
    return tp_transpose_outputs(p->ctx, node, out_perm, (size_t)s);
}

/* A Reshape that only moves size-1 dims is a Transpose: cancel or merge with the one before it (shapes
 * concrete). */
pc_status tp_reshape_merge(tp_push *p, bool *done)
{
    pc_node *node = p->node;
    pc_value *tv = node->inputs[0];
    pc_node *first = tv->producer;
    pc_value *a = first->inputs[0];
    int64_t in_dims[PC_MAX_RANK], mid[PC_MAX_RANK], shape[PC_MAX_RANK], out[PC_MAX_RANK];
    size_t n;
    pc_dtype dt;
    if (!pc_value_dims(a, in_dims) || pc_value_rank(a) != (int32_t)p->rank) return PC_OK;
    if (!tp_const_ints(node, 1, shape, &n, &dt) || n != p->rank) return PC_OK;
    for (size_t i = 0; i < p->rank; i++)
        mid[i] = in_dims[p->perm[i]];
    bool allowzero = p->ctx->opset >= 14 && pc_node_attr_int(node, "allowzero", 0) != 0;
    int64_t known = 1, minus = -1;
    for (size_t i = 0; i < n; i++) {
        out[i] = shape[i];
        if (shape[i] == 0 && !allowzero) out[i] = mid[i];
        if (out[i] == -1) {
            if (minus >= 0) return PC_OK;
            minus = (int64_t)i;
        } else if (out[i] < 0) {
            return PC_OK;
        } else if (!pc_u64_mul((uint64_t)known, (uint64_t)out[i], (uint64_t *)&known)) {
            return PC_OK;
        }
    }
    int64_t total = 1;
    for (size_t i = 0; i < p->rank; i++)
        if (!pc_u64_mul((uint64_t)total, (uint64_t)mid[i], (uint64_t *)&total)) return PC_OK;
    if (minus >= 0) {
        if (known == 0 || total % known) return PC_OK;
        out[minus] = total / known;
    }
    /* non-1 dims must keep order and size: out non-1 dim j is mid non-1 dim j, which is a's dim perm[k_j] */
    int64_t c[PC_MAX_RANK];
    bool used[PC_MAX_RANK] = {false};
    size_t k = 0;
    bool moves = false; /* a non-1 dim moves: not a Transpose */
    for (size_t i = 0; i < p->rank && !moves; i++) {
        if (out[i] == 1) continue;
        while (k < p->rank && mid[k] == 1)
            k++;
        if (k == p->rank || mid[k] != out[i]) {
            moves = true;
            break;
        }
        c[i] = p->perm[k];
        used[c[i]] = true;
        k++;
    }
    while (!moves && k < p->rank && mid[k] == 1)
        k++;
    if (!moves && k != p->rank) moves = true;
    if (moves && !pc_fault_active(PC_FAULT_RESHAPE_PUSH)) return PC_OK;
    if (moves) {
        /* injected bug (--inject reshape-push-any): non-1 dims are matched to the input's by size alone, so a
         * Reshape that reorders data is taken for a Transpose */
        memset(used, 0, sizeof used);
        for (size_t i = 0; i < p->rank; i++) {
            if (out[i] == 1) continue;
            size_t j = 0;
            while (j < p->rank && (used[j] || in_dims[j] != out[i]))
                j++;
            if (j == p->rank) return PC_OK;
            c[i] = (int64_t)j;
            used[j] = true;
        }
    }
    /* size-1 dims: keep an axis in place when it is free (so the result is the identity when it can be) */
    for (size_t i = 0; i < p->rank; i++)
        if (out[i] == 1 && in_dims[i] == 1 && !used[i]) {
            c[i] = (int64_t)i;
            used[i] = true;
        } else if (out[i] == 1) {
            c[i] = -1;
        }
    size_t free_axis = 0;
    for (size_t i = 0; i < p->rank; i++) {
        if (c[i] != -1) continue;
        while (used[free_axis] || in_dims[free_axis] != 1)
            free_axis++;
        c[i] = (int64_t)free_axis;
        used[free_axis] = true;
    }
    tp_ctx *ctx = p->ctx;
    pc_status st;
    if (tp_perm_is_identity(c, p->rank)) {
        if ((st = pc_node_set_input(node, 0, a, ctx->err)) != PC_OK) return st;
        *done = true;
        if ((st = tp_remove_if_dead(ctx, first)) != PC_OK) return st;
        bool kept; /* the Reshape reading a is then already the copy: its shape is a's */
        return tp_replace_by_input(ctx, node, &kept);
    }
    pc_node *t = pc_pass_add_node(ctx->graph, ctx->opts, "Transpose", "", 1, &a, 1, node, ctx->err);
    if (!t) return ctx->err->status;
    if ((st = pc_node_set_attr_ints(t, "perm", p->rank, c, ctx->err)) != PC_OK ||
        (st = pc_graph_move_output(node, 0, t, 0)) != PC_OK)
        return st == PC_OK ? st : pc_error_set(ctx->err, st, "node '%s': cannot move its output", node->name);
    *done = true;
    if ((st = pc_pass_remove_dead(ctx->graph, node, ctx->err)) != PC_OK) return st;
    return tp_remove_if_dead(ctx, first);
}

/* Resize on rank 4 for channel moves only: constant scales/sizes permuted, roi untouched. */
static pc_status handle_resize(tp_push *p, bool *done)
{
    if (p->rank != 4 || !tp_perm_is_channel_move(p->perm, 4)) return PC_OK;
    if (strcmp(pc_node_attr_string(p->node, "coordinate_transformation_mode", ""), "tf_crop_and_resize") ==
            0 ||
        pc_node_attr(p->node, "axes"))
        return PC_OK; /* roi and axes would need remapping */
    uint32_t first = p->ctx->opset >= 11 ? 2 : 1;
    const pc_tensor *ts[2] = {NULL, NULL};
    bool gathered[2] = {false, false};
    for (uint32_t i = first; i < p->node->n_inputs && i < first + 2; i++) {
        pc_value *v = p->node->inputs[i];
        if (!v) continue;
        const pc_tensor *t = pc_value_const(v);
        if (!t) {
            /* computed scales or sizes: Gather(v, perm_inv); an empty one (the other is used) stays */
            if (v->type.kind != PC_TYPE_TENSOR || v->type.shape.rank != 1 ||
                v->type.shape.dims[0].kind != PC_DIM_KNOWN ||
                (v->type.shape.dims[0].size != 0 && v->type.shape.dims[0].size != 4) ||
                (v->type.shape.dims[0].size == 4 && !tp_can_add(p->ctx, p->node, "Gather", v->type.elem)))
                return PC_OK;
            gathered[i - first] = v->type.shape.dims[0].size == 4;
            continue;
        }
        if (t->rank != 1) return PC_OK;
        if (t->n_elements == 0) continue;
        if (t->n_elements != 4 || (t->dtype != PC_DTYPE_FLOAT && t->dtype != PC_DTYPE_INT64)) return PC_OK;
        ts[i - first] = t;
    }
    if (planned(p, done, p->perm, p->rank)) return PC_OK;
    for (uint32_t k = 0; k < 2; k++) {
        const pc_tensor *t = ts[k];
        uint32_t i = first + k;
        pc_status st;
        if (gathered[k] && (st = tp_gather_input(p->ctx, p->node, i, 4, gather_order(p))) != PC_OK) return st;
        if (!t) continue;
        if (t->dtype == PC_DTYPE_INT64) {
            int64_t v[4], nv[4];
            size_t n;
            pc_tensor_read_ints(t, v, 4, &n);
            permute_groups(v, 1, p->perm_inv, 4, nv);
            st = tp_replace_input_ints(p->ctx, p->node, i, PC_DTYPE_INT64, 4, nv);
        } else {
            /* scales: a 4-element float tensor, permuted as a 4-D [4] "tensor" would not be: copy by hand */
            int64_t dim = 4;
            pc_tensor *nt =
                pc_tensor_create(p->ctx->graph->model, t->name, PC_DTYPE_FLOAT, 1, &dim, p->ctx->err);
            if (!nt) return p->ctx->err->status;
            for (size_t j = 0; j < 4; j++)
                memcpy((uint8_t *)nt->data + j * 4, (const uint8_t *)t->data + (size_t)p->perm_inv[j] * 4, 4);
            pc_value *nv = pc_pass_add_initializer(p->ctx->graph, p->node->inputs[i]->name, nt, p->ctx->err);
            if (!nv) return p->ctx->err->status;
            pc_value *old = p->node->inputs[i];
            if ((st = pc_node_set_input(p->node, i, nv, p->ctx->err)) == PC_OK && old->initializer &&
                !pc_value_is_used(old) && !old->is_graph_input)
                st = pc_graph_remove_initializer(p->ctx->graph, old, p->ctx->err);
        }
        if (st != PC_OK) return st;
    }
    return push_and_outputs(p, done);
}

/* Axes a rank-reducing op drops (the plan lifts an output candidate to the input's rank with them in place).
 * These read the same attributes the handlers read. */
static bool dropped_arg(tp_push *p, bool *removed)
{
    int64_t axis;
    if (pc_node_attr_int(p->node, "keepdims", 1) ||
        !tp_axis_normalize(pc_node_attr_int(p->node, "axis", 0), p->rank, &axis))
        return false;
    removed[axis] = true;
    return true;
}

static bool dropped_gather(tp_push *p, bool *removed)
{
    const pc_tensor *t = p->node->n_inputs > 1 ? pc_value_const(p->node->inputs[1]) : NULL;
    int64_t axis;
    if (!t || t->rank != 0 || !tp_axis_normalize(pc_node_attr_int(p->node, "axis", 0), p->rank, &axis))
        return false;
    removed[axis] = true;
    return true;
}

static bool dropped_list(tp_push *p, bool *removed, bool input_axes)
{
    int64_t axes[PC_MAX_RANK];
    size_t n;
    bool present;
    pc_dtype dtype;
    if (!read_axes(p, input_axes, p->rank, axes, &n, &present, &dtype) || !n) return false;
    for (size_t k = 0; k < n; k++)
        removed[axes[k]] = true;
    return true;
}

static bool dropped_reduce(tp_push *p, bool *removed)
{
    bool input_axes = strcmp(p->node->op_type, "ReduceSum") == 0 ? p->ctx->opset >= 13 : p->ctx->opset >= 18;
    return !pc_node_attr_int(p->node, "keepdims", 1) && dropped_list(p, removed, input_axes);
}

static bool dropped_squeeze(tp_push *p, bool *removed)
{
    int64_t axes[PC_MAX_RANK], dims[PC_MAX_RANK];
    size_t n;
    bool present;
    pc_dtype dtype;
    if (!read_axes(p, p->ctx->opset >= 13, p->rank, axes, &n, &present, &dtype)) return false;
    if (present) return dropped_list(p, removed, p->ctx->opset >= 13);
    /* no axes: every size-1 dim of the (transposed) input goes, as handle_squeeze does */
    if (!pc_value_dims(p->node->inputs[0], dims)) return false;
    bool any = false;
    for (size_t i = 0; i < p->rank; i++)
        if (dims[i] == 1) removed[i] = any = true;
    return any;
}

/* Sorted by (domain, op) for bsearch; checked once at first use. */
#define SIMPLE(op, min)                                                                                      \
    {                                                                                                        \
        "", op, handle_simple, TP_IN_ALL, min, NULL                                                          \
    }
#define BCAST(op, min)                                                                                       \
    {                                                                                                        \
        "", op, handle_broadcast, TP_IN_NONSCALAR, min, NULL                                                 \
    }
#define FIRST(op, fn, min)                                                                                   \
    {                                                                                                        \
        "", op, fn, TP_IN_FIRST, min, NULL                                                                   \
    }
static const tp_handler handlers[] = {
    SIMPLE("Abs", 1),
    SIMPLE("Acos", 7),
    SIMPLE("Acosh", 9),
    BCAST("Add", 7),
    BCAST("And", 7),
    {"", "ArgMax", handle_arg, TP_IN_FIRST, 1, dropped_arg},
    {"", "ArgMin", handle_arg, TP_IN_FIRST, 1, dropped_arg},
    SIMPLE("Asin", 7),
    SIMPLE("Asinh", 9),
    SIMPLE("Atan", 7),
    SIMPLE("Atanh", 9),
    BCAST("BitShift", 11),
    SIMPLE("Cast", 1),
    {"", "CastLike", handle_simple, TP_IN_FIRST, 15, NULL},
    SIMPLE("Ceil", 1),
    SIMPLE("Celu", 12),
    {"", "Clip", handle_simple, TP_IN_FIRST, 1, NULL},
    {"", "Concat", handle_concat, TP_IN_ALL, 1, NULL},
    SIMPLE("Cos", 7),
    SIMPLE("Cosh", 9),
    FIRST("DequantizeLinear", handle_qdq, 10),
    BCAST("Div", 7),
    SIMPLE("Elu", 1),
    BCAST("Equal", 7),
    SIMPLE("Erf", 9),
    SIMPLE("Exp", 1),
    SIMPLE("Floor", 1),
    {"", "Gather", handle_gather, TP_IN_FIRST, 1, dropped_gather},
    SIMPLE("Gelu", 20),
    BCAST("Greater", 7),
    BCAST("GreaterOrEqual", 12),
    SIMPLE("HardSigmoid", 1),
    SIMPLE("HardSwish", 14),
    FIRST("Hardmax", handle_softmax, 1),
    SIMPLE("Identity", 1),
    SIMPLE("IsInf", 10),
    SIMPLE("IsNaN", 9),
    SIMPLE("LeakyRelu", 1),
    BCAST("Less", 7),
    BCAST("LessOrEqual", 12),
    SIMPLE("Log", 1),
    FIRST("LogSoftmax", handle_softmax, 1),
    BCAST("Max", 8),
    BCAST("Mean", 8),
    BCAST("Min", 8),
    BCAST("Mod", 10),
    BCAST("Mul", 7),
    SIMPLE("Neg", 1),
    SIMPLE("Not", 1),
    BCAST("Or", 7),
    BCAST("PRelu", 7),
    FIRST("Pad", handle_pad, 2),
    BCAST("Pow", 7),
    FIRST("QuantizeLinear", handle_qdq, 10),
    SIMPLE("Reciprocal", 1),
    {"", "ReduceL1", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceL2", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceLogSum", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceLogSumExp", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceMax", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceMean", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceMin", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceProd", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceSum", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    {"", "ReduceSumSquare", handle_reduce, TP_IN_FIRST, 1, dropped_reduce},
    SIMPLE("Relu", 1),
    FIRST("Reshape", handle_reshape, 5),
    FIRST("Resize", handle_resize, 10),
    SIMPLE("Round", 11),
    SIMPLE("Selu", 1),
    FIRST("Shape", handle_shape, 1),
    SIMPLE("Shrink", 9),
    SIMPLE("Sigmoid", 1),
    SIMPLE("Sign", 9),
    SIMPLE("Sin", 7),
    SIMPLE("Sinh", 9),
    FIRST("Slice", handle_slice, 1),
    FIRST("Softmax", handle_softmax, 1),
    SIMPLE("Softplus", 1),
    SIMPLE("Softsign", 1),
    FIRST("Split", handle_split, 2),
    SIMPLE("Sqrt", 1),
    {"", "Squeeze", handle_squeeze, TP_IN_FIRST, 1, dropped_squeeze},
    BCAST("Sub", 7),
    BCAST("Sum", 8),
    SIMPLE("Tan", 7),
    SIMPLE("Tanh", 1),
    SIMPLE("ThresholdedRelu", 10),
    FIRST("Tile", handle_tile, 6),
    FIRST("Transpose", handle_transpose, 1),
    FIRST("Unsqueeze", handle_unsqueeze, 1),
    BCAST("Where", 9),
    BCAST("Xor", 7),
};
#undef SIMPLE
#undef BCAST
#undef FIRST

/* The rewrite kind of a push through h's ops (PC_RW_COUNT for Transpose, whose handler notes a cancel or a
 * merge itself). */
static const struct {
    tp_handler_fn fn;
    pc_rewrite_kind kind;
} handler_kinds[] = {
    {handle_simple, PC_RW_TP_PUSH_ELEMENTWISE},
    {handle_broadcast, PC_RW_TP_PUSH_BROADCAST},
    {handle_arg, PC_RW_TP_PUSH_ARG},
    {handle_concat, PC_RW_TP_PUSH_CONCAT},
    {handle_qdq, PC_RW_TP_PUSH_QDQ},
    {handle_gather, PC_RW_TP_PUSH_GATHER},
    {handle_softmax, PC_RW_TP_PUSH_SOFTMAX},
    {handle_pad, PC_RW_TP_PUSH_PAD},
    {handle_reduce, PC_RW_TP_PUSH_REDUCE},
    {handle_reshape, PC_RW_TP_RESHAPE_GROUPS},
    {handle_resize, PC_RW_TP_PUSH_RESIZE},
    {handle_shape, PC_RW_TP_PUSH_SHAPE},
    {handle_slice, PC_RW_TP_PUSH_SLICE},
    {handle_split, PC_RW_TP_PUSH_SPLIT},
    {handle_squeeze, PC_RW_TP_PUSH_SQUEEZE},
    {handle_tile, PC_RW_TP_PUSH_TILE},
    {handle_unsqueeze, PC_RW_TP_PUSH_UNSQUEEZE},
    {handle_transpose, PC_RW_COUNT},
};

pc_rewrite_kind tp_handler_kind(const tp_handler *h)
{
    for (size_t i = 0; h && i < sizeof handler_kinds / sizeof handler_kinds[0]; i++)
        if (handler_kinds[i].fn == h->fn) return handler_kinds[i].kind;
    return PC_RW_COUNT;
}

static int handler_cmp(const void *key, const void *elem)
{
    const pc_node *n = key;
    const tp_handler *h = elem;
    int c = pc_name_cmp(n->domain, h->domain);
    return c ? c : pc_name_cmp(n->op_type, h->op);
}

const tp_handler *tp_handler_find(const pc_node *node, int64_t opset)
{
#ifdef PC_DEBUG_CHECKS
    static bool checked;
    if (!checked) {
        for (size_t i = 1; i < sizeof handlers / sizeof handlers[0]; i++) {
            int c = strcmp(handlers[i - 1].domain, handlers[i].domain);
            if (!c) c = strcmp(handlers[i - 1].op, handlers[i].op);
            if (c >= 0) { /* the table must stay sorted for bsearch */
                fprintf(stderr, "transpose handler table not sorted at '%s'\n", handlers[i].op);
                abort();
            }
        }
        checked = true;
    }
#endif
    const tp_handler *h =
        bsearch(node, handlers, sizeof handlers / sizeof handlers[0], sizeof handlers[0], handler_cmp);
    return h && opset >= h->min_opset ? h : NULL;
}

bool tp_input_carries(const tp_handler *h, const pc_value *v, uint32_t i)
{
    return v && !(h->inputs == TP_IN_FIRST && i > 0) &&
           !(h->inputs == TP_IN_NONSCALAR && pc_value_rank(v) == 0);
}

uint32_t tp_handler_inputs(const tp_handler *h, const pc_node *node, uint32_t *out, uint32_t n_out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < node->n_inputs && n < n_out; i++)
        if (tp_input_carries(h, node->inputs[i], i)) out[n++] = i;
    return n;
}
