/* eliminate_slice (level 0): a Slice that provably keeps every element is removed. Every sliced axis must
 * start at 0 and end at or past its dim with step 1, judged on constant starts/ends/axes/steps (inputs from
 * opset 10, attributes before). Known dims let negative or clamped bounds count; with an unknown dim only
 * start 0 and end INT64_MAX ("to the end") do. */
#include <stdint.h>

#include "core/passes/pass_match.h"

typedef struct slice_args {
    int64_t starts[PC_MAX_RANK], ends[PC_MAX_RANK], axes[PC_MAX_RANK], steps[PC_MAX_RANK];
    size_t n;
} slice_args;

static bool read_const_ints(const pc_node *n, uint32_t index, int64_t *out, size_t *count)
{
    if (index >= n->n_inputs || !n->inputs[index]) return false;
    return pc_tensor_read_ints(pc_value_const(n->inputs[index]), out, PC_MAX_RANK, count);
}

static bool read_attr_ints(const pc_node *n, const char *name, int64_t *out, size_t *count)
{
    const pc_attr *a = pc_node_attr(n, name);
    if (!a || a->type != PC_ATTR_INTS || a->n > PC_MAX_RANK) return false;
    memcpy(out, a->ints, a->n * sizeof *out);
    *count = a->n;
    return true;
}

/* false when an argument is not constant or the counts disagree */
static bool slice_read_args(const pc_node *n, int32_t rank, slice_args *s)
{
    size_t n_ends = 0, n_axes = 0, n_steps = 0;
    bool attr_form = pm_onnx_opset(n) < 10;
    bool has_axes = attr_form ? pc_node_attr(n, "axes") != NULL : n->n_inputs > 3 && n->inputs[3];
    bool has_steps = !attr_form && n->n_inputs > 4 && n->inputs[4];
    if (attr_form) {
        if (!read_attr_ints(n, "starts", s->starts, &s->n) || !read_attr_ints(n, "ends", s->ends, &n_ends))
            return false;
        if (has_axes && !read_attr_ints(n, "axes", s->axes, &n_axes)) return false;
    } else {
        if (!read_const_ints(n, 1, s->starts, &s->n) || !read_const_ints(n, 2, s->ends, &n_ends))
            return false;
        if (has_axes && !read_const_ints(n, 3, s->axes, &n_axes)) return false;
        if (has_steps && !read_const_ints(n, 4, s->steps, &n_steps)) return false;
    }
    if (n_ends != s->n || (has_axes && n_axes != s->n) || (has_steps && n_steps != s->n)) return false;
    if (s->n > (size_t)rank) return false;
    for (size_t i = 0; i < s->n; i++) {
        if (!has_axes) s->axes[i] = (int64_t)i;
        if (!has_steps) s->steps[i] = 1;
    }
    return true;
}

static int64_t clamp_bound(int64_t v, int64_t dim)
{
    if (v < 0) v = v < -dim ? 0 : v + dim;
    return v > dim ? dim : v;
}

/* *why: the near-miss reason when false for a reason other than the Slice really cutting (PC_MISS_COUNT:
 * none) */
static bool slice_keeps_all(const pc_node *n, pc_miss_reason *why)
{
    pc_value *x = n->inputs[0];
    int32_t rank = pc_value_rank(x);
    *why = PC_MISS_COUNT;
    if (n->n_outputs != 1 || !n->outputs[0]) return false;
    if (rank < 0) {
        *why = PC_MISS_TYPE;
        return false;
    }
    slice_args s;
    if (!slice_read_args(n, rank, &s)) {
        *why = PC_MISS_NOT_CONSTANT;
        return false;
    }
    bool seen[PC_MAX_RANK] = {false};
    for (size_t i = 0; i < s.n; i++) {
        int64_t axis = s.axes[i] < 0 ? s.axes[i] + rank : s.axes[i];
        if (axis < 0 || axis >= rank || seen[axis] || s.steps[i] != 1) return false;
        seen[axis] = true;
        const pc_dim *d = x->initializer ? NULL : &x->type.shape.dims[axis];
        bool known = x->initializer || d->kind == PC_DIM_KNOWN;
        if (known) {
            int64_t dim = x->initializer ? x->initializer->dims[axis] : d->size;
            if (clamp_bound(s.starts[i], dim) != 0 || clamp_bound(s.ends[i], dim) != dim) return false;
        } else if (s.starts[i] != 0 || s.ends[i] != INT64_MAX) {
            if (s.starts[i] == 0 && s.ends[i] > 0) *why = PC_MISS_TYPE; /* may keep all: the dim is unknown */
            return false;
        }
    }
    return true;
}

pc_status pc_pass_eliminate_slice(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        if (!pm_is_op(n, "Slice") || n->n_inputs < 1 || !n->inputs[0] || !pc_pass_can_modify(opts, n))
            continue;
        pc_miss_reason why;
        if (!slice_keeps_all(n, &why)) {
            if (why != PC_MISS_COUNT) pc_pass_near_miss(opts, PC_RW_SLICE_REMOVED, why);
            continue;
        }
        const char *label = pm_label(n);
        bool done = false;
        st = pm_bypass(graph, opts, n, &done, err);
        if (st == PC_OK && done) {
            pc_pass_explain(opts, "removed Slice '%s' that keeps every element", label);
            pc_pass_note(opts, PC_RW_SLICE_REMOVED);
            *changed = true;
        } else if (st == PC_OK) {
            pc_pass_near_miss(opts, PC_RW_SLICE_REMOVED, PC_MISS_SHARED);
        }
    }
    pm_nodes_free(&nodes);
    return st;
}
