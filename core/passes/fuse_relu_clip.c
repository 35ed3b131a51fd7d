/* fuse_relu_clip (level 0, again per EP after partitioning): Relu -> Clip and Clip -> Relu become one Clip
 * with min' = max(min, 0) (and, for Clip -> Relu, max' = max(max, 0)), but only where that is exact on the
 * reference executor, -0 included. Relu maps -0 to +0 there, while Clip returns x itself unless it crosses a
 * bound strictly
 * (-0 < +0 is false), so a Clip whose lower bound is 0 keeps the -0 the pair turned into +0. Exact cases:
 *  - min > 0: -0 is clipped up to min in both forms, and min > 0 makes the Relu a no-op on the Clip's range;
 *  - Relu -> Clip with max < 0: every non-NaN value ends at max in both forms (the fused Clip gets min = max:
 *    a min above max is refused by ONNX Runtime's Clip-6).
 * Bounds are attributes before opset 11 (defaults -/+FLT_MAX) and constant scalar inputs from 11 (absent:
 * unbounded); a non-constant bound leaves the pair alone. The intermediate value must have one use. */
#include <float.h>

#include "core/passes/pass_match.h"

typedef struct clip_bounds {
    bool has_min, has_max;
    double min, max;
} clip_bounds;

static bool clip_read_bounds(const pc_node *clip, clip_bounds *b)
{
    if (pm_onnx_opset(clip) < 11) {
        b->has_min = b->has_max = true;
        b->min = pc_node_attr_float(clip, "min", -FLT_MAX);
        b->max = pc_node_attr_float(clip, "max", FLT_MAX);
        return true;
    }
    const pc_tensor *t[2] = {NULL, NULL};
    for (uint32_t i = 0; i < 2; i++) {
        pc_value *v = clip->n_inputs > i + 1 ? clip->inputs[i + 1] : NULL;
        if (!v) continue;
        if (!(t[i] = pc_value_const(v)) || t[i]->n_elements != 1) return false;
    }
    b->has_min = t[0] != NULL;
    b->has_max = t[1] != NULL;
    if ((t[0] && !pm_scalar_f64(t[0], &b->min)) || (t[1] && !pm_scalar_f64(t[1], &b->max))) return false;
    return true;
}

/* A new Clip(x, bounds) made from `source`, with the dtype of x for input-form bounds (float/double only). */
static pc_node *clip_emit(pc_graph *g, const pc_pass_options *opts, const pc_node *clip, pc_value *x,
                          const clip_bounds *b, pc_error *err)
{
    if (pm_onnx_opset(clip) < 11) {
        pc_node *n = pc_pass_add_node(g, opts, "Clip", "", 1, &x, 1, clip, err);
        if (!n || pm_copy_attrs(n, clip, err) != PC_OK ||
            pc_node_set_attr_float(n, "min", (float)b->min, err) != PC_OK ||
            pc_node_set_attr_float(n, "max", (float)b->max, err) != PC_OK)
            return NULL;
        return n;
    }
    pc_value *ins[3] = {x, NULL, NULL};
    double vals[2] = {b->min, b->max};
    bool has[2] = {b->has_min, b->has_max};
    for (uint32_t i = 0; i < 2; i++) {
        if (!has[i]) continue;
        pc_tensor *t = pc_tensor_create(g->model, NULL, pm_elem(x), 0, NULL, err);
        if (!t) return NULL;
        pm_set_f64(t, 0, vals[i]); /* x is float or double (checked by the caller) */
        if (!(ins[i + 1] = pc_pass_add_initializer(g, i ? "clip_max" : "clip_min", t, err))) return NULL;
    }
    uint32_t n_in = has[1] ? 3 : has[0] ? 2 : 1;
    return pc_pass_add_node(g, opts, "Clip", "", n_in, ins, 1, clip, err);
}

pc_status pc_pass_fuse_relu_clip(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *first = nodes.items[i];
        bool relu_first = pm_is_op(first, "Relu");
        if ((!relu_first && !pm_is_op(first, "Clip")) || first->n_inputs < 1 || !first->inputs[0] ||
            first->n_outputs != 1 || !first->outputs[0] || !pc_pass_can_modify(opts, first))
            continue;
        pc_rewrite_kind kind = relu_first ? PC_RW_RELU_CLIP_MERGED : PC_RW_CLIP_RELU_MERGED;
        const char *want = relu_first ? "Clip" : "Relu";
        pc_node *second = pc_value_single_consumer(first->outputs[0]);
        if (!second && pm_counting(opts) && pm_shared_into(first->outputs[0], want))
            pc_pass_near_miss(opts, kind, PC_MISS_SHARED);
        if (!second || second->removed || !pm_is_op(second, want) || second->inputs[0] != first->outputs[0] ||
            !second->outputs[0])
            continue;
        if (!pc_pass_can_modify(opts, second) || !pc_nodes_fusable(first, second)) {
            pc_pass_near_miss(opts, kind, PC_MISS_ANNOTATION);
            continue;
        }
        pc_node *clip = relu_first ? second : first;
        pc_value *x = first->inputs[0];
        pc_dtype dt = pm_elem(x);
        clip_bounds b = {0};
        if (dt != PC_DTYPE_FLOAT && dt != PC_DTYPE_DOUBLE) {
            pc_pass_near_miss(opts, kind, PC_MISS_TYPE);
            continue;
        }
        if (!clip_read_bounds(clip, &b) || (b.has_min && isnan(b.min)) || (b.has_max && isnan(b.max))) {
            pc_pass_near_miss(opts, kind, PC_MISS_NOT_CONSTANT);
            continue;
        }
        bool min_positive = b.has_min && b.min > 0, max_negative = b.has_max && b.max < 0;
        if (!min_positive && !(relu_first && max_negative)) { /* -0 would survive the fused Clip */
            pc_pass_near_miss(opts, kind, PC_MISS_NOT_CONSTANT);
            continue;
        }
        /* not min_positive: Relu -> Clip(max < 0), which ends every value at max. Say so with min = max, not
         * with max(min, 0) = 0 > max: an order the pair did not have, and ONNX Runtime refuses a Clip-6 so */
        if (!min_positive) b.min = b.max;
        b.has_min = true;
        if (!relu_first && b.has_max && b.max <= 0) b.max = 0.0; /* the Relu would lift it (and -0) to +0 */
        pc_node *n = clip_emit(graph, opts, clip, x, &b, err);
        if (!n) {
            st = err->status;
            break;
        }
        if (!pc_pass_ep_accepts(opts, n)) {
            /* the EP would not run the new Clip: drop it (and its bound constants) again */
            pc_pass_near_miss(opts, kind, PC_MISS_ANNOTATION);
            st = pc_pass_remove_dead(graph, n, err);
            continue;
        }
        if (pc_graph_move_output(second, 0, n, 0) != PC_OK) {
            st = pc_error_set(err, PC_ERR_INTERNAL, "moving output of node '%s'", pm_label(second));
            break;
        }
        pc_pass_explain(opts, "fused %s '%s' + %s '%s' -> Clip '%s'", first->op_type, pm_label(first),
                        second->op_type, pm_label(second), n->name);
        pc_pass_note(opts, kind);
        st = pc_pass_remove_dead(graph, second, err);
        *changed = true;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed) st = pc_graph_sort(graph, err);
    return st;
}
