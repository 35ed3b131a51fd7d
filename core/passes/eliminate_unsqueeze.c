/* eliminate_unsqueeze (level 0): Unsqueeze of a constant initializer that nothing else reads becomes a new
 * initializer with the unsqueezed shape (same bytes). Axes come from the attribute before opset 13 and from a
 * constant input after; invalid axes (out of range, repeated) leave the node alone. A no-op Unsqueeze cannot
 * exist (axes are never empty), so nothing else is removed. */
#include "core/passes/pass_match.h"

static bool unsqueeze_axes(const pc_node *n, int64_t *axes, size_t *n_axes)
{
    if (pm_onnx_opset(n) < 13) {
        const pc_attr *a = pc_node_attr(n, "axes");
        if (!a || a->type != PC_ATTR_INTS || a->n > PC_MAX_RANK) return false;
        memcpy(axes, a->ints, a->n * sizeof *axes);
        *n_axes = a->n;
        return true;
    }
    if (n->n_inputs < 2 || !n->inputs[1]) return false;
    return pc_tensor_read_ints(pc_value_const(n->inputs[1]), axes, PC_MAX_RANK, n_axes);
}

/* dims of the result, false when the axes are invalid */
static bool unsqueeze_dims(const pc_tensor *t, const int64_t *axes, size_t n_axes, int64_t *dims,
                           int32_t *rank)
{
    if (n_axes == 0 || (size_t)t->rank + n_axes > PC_MAX_RANK) return false;
    int32_t r = t->rank + (int32_t)n_axes;
    bool inserted[PC_MAX_RANK] = {false};
    for (size_t i = 0; i < n_axes; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r || inserted[a]) return false;
        inserted[a] = true;
    }
    for (int32_t i = 0, k = 0; i < r; i++)
        dims[i] = inserted[i] ? 1 : t->dims[k++];
    *rank = r;
    return true;
}

pc_status pc_pass_eliminate_unsqueeze(pc_graph *graph, const pc_pass_options *opts, bool *changed,
                                      pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        if (!pm_is_op(n, "Unsqueeze") || n->n_inputs < 1 || n->n_outputs != 1 || !n->outputs[0] ||
            !pc_pass_can_modify(opts, n))
            continue;
        pc_value *x = n->inputs[0], *y = n->outputs[0];
        const pc_tensor *t = pc_value_const(x);
        /* the initializer must be ours alone; the output's value must be replaceable by another name */
        if (!t) continue;
        if (t->dtype == PC_DTYPE_STRING || x->n_consumers != 1 || x->is_graph_output || x->n_subgraph_refs ||
            y->is_graph_output || y->n_subgraph_refs) {
            pc_pass_near_miss(opts, PC_RW_UNSQUEEZE_FOLDED,
                              t->dtype == PC_DTYPE_STRING ? PC_MISS_TYPE : PC_MISS_SHARED);
            continue;
        }
        int64_t axes[PC_MAX_RANK], dims[PC_MAX_RANK];
        size_t n_axes = 0;
        int32_t rank = 0;
        if (!unsqueeze_axes(n, axes, &n_axes)) {
            pc_pass_near_miss(opts, PC_RW_UNSQUEEZE_FOLDED,
                              pm_onnx_opset(n) < 13 ? PC_MISS_ATTRIBUTE : PC_MISS_NOT_CONSTANT);
            continue;
        }
        if (!unsqueeze_dims(t, axes, n_axes, dims, &rank)) {
            pc_pass_near_miss(opts, PC_RW_UNSQUEEZE_FOLDED, PC_MISS_ATTRIBUTE);
            continue;
        }
        pc_tensor *nt = pc_tensor_create(graph->model, NULL, t->dtype, rank, dims, err);
        if (!nt) {
            st = err->status;
            break;
        }
        if (t->n_bytes) memcpy(nt->data, t->data, t->n_bytes);
        pc_value *c = pc_pass_add_initializer(graph, y->name, nt, err);
        if (!c) {
            st = err->status;
            break;
        }
        const char *label = pm_label(n), *from = x->name;
        if ((st = pc_value_replace_uses(y, c)) != PC_OK) {
            pc_error_set(err, st, "rewiring the uses of '%s'", y->name);
            break;
        }
        st = pc_pass_remove_dead(graph, n, err);
        pc_pass_explain(opts, "folded Unsqueeze '%s' of initializer '%s' -> initializer '%s'", label, from,
                        c->name);
        pc_pass_note(opts, PC_RW_UNSQUEEZE_FOLDED);
        *changed = true;
    }
    pm_nodes_free(&nodes);
    return st;
}
