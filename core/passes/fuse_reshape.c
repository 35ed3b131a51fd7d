/* fuse_reshape (level 1, again per EP after partitioning): Reshape -> Reshape, where the first output's only
 * use is the second, becomes one Reshape of the first's input to the second's shape. A 0 in the second shape
 * (copy the input dim, unless allowzero = 1) refers to the intermediate shape, so it is resolved from the
 * intermediate's known dims, or the pair is left alone. Exact (data movement only). Shapes must be constant
 * (opset >= 5 input form). */
#include "core/passes/pass_match.h"

pc_status pc_pass_fuse_reshape(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *second = nodes.items[i];
        if (!pm_is_op(second, "Reshape") || pm_onnx_opset(second) < 5 || second->n_inputs != 2 ||
            !second->inputs[0] || !second->inputs[1] || second->n_outputs != 1 || !second->outputs[0] ||
            !pc_pass_can_modify(opts, second))
            continue;
        pc_node *first = second->inputs[0]->producer;
        if (!first || first->graph != graph || !pm_is_op(first, "Reshape") || first->n_inputs < 1 ||
            !first->inputs[0])
            continue;
        if (pc_value_single_consumer(first->outputs[0]) != second) {
            pc_pass_near_miss(opts, PC_RW_RESHAPE_FUSED, PC_MISS_SHARED);
            continue;
        }
        if (!pc_pass_can_modify(opts, first) || !pc_nodes_fusable(first, second)) {
            pc_pass_near_miss(opts, PC_RW_RESHAPE_FUSED, PC_MISS_ANNOTATION);
            continue;
        }
        int64_t shape[PC_MAX_RANK], mid[PC_MAX_RANK];
        size_t n = 0;
        if (!pc_tensor_read_ints(pc_value_const(second->inputs[1]), shape, PC_MAX_RANK, &n)) {
            pc_pass_near_miss(opts, PC_RW_RESHAPE_FUSED, PC_MISS_NOT_CONSTANT);
            continue;
        }
        /* the first Reshape's shape may be computed by nodes that die with it: they must be ours to remove */
        bool removable = false;
        if ((st = pc_pass_may_remove(opts, second, first->inputs[0], &removable, err)) != PC_OK) break;
        if (!removable) {
            pc_pass_near_miss(opts, PC_RW_RESHAPE_FUSED, PC_MISS_ANNOTATION);
            continue;
        }
        bool has_zero = false;
        for (size_t k = 0; k < n; k++)
            has_zero |= shape[k] == 0;
        pc_value *shape_value = second->inputs[1];
        if (has_zero && pc_node_attr_int(second, "allowzero", 0) == 0) {
            int32_t mid_rank = pc_value_rank(first->outputs[0]);
            if (mid_rank < 0 || !pc_value_dims(first->outputs[0], mid)) {
                pc_pass_near_miss(opts, PC_RW_RESHAPE_FUSED, PC_MISS_TYPE);
                continue;
            }
            bool ok = true;
            for (size_t k = 0; k < n; k++) {
                if (shape[k] != 0) continue;
                if ((int32_t)k >= mid_rank)
                    ok = false;
                else
                    shape[k] = mid[k];
            }
            /* a resolved 0 that is itself 0 would read as "copy" again: keep the pair */
            for (size_t k = 0; k < n && ok; k++)
                ok = shape[k] != 0;
            if (!ok) {
                pc_pass_near_miss(opts, PC_RW_RESHAPE_FUSED, PC_MISS_TYPE);
                continue;
            }
            if (!(shape_value = pc_pass_add_ints(graph, second->inputs[1]->name, n, shape, err))) {
                st = err->status;
                break;
            }
        }
        pc_value *ins[2] = {first->inputs[0], shape_value};
        pc_node *r = pc_pass_add_node(graph, opts, "Reshape", "", 2, ins, 1, second, err);
        if (!r || pm_copy_attrs(r, second, err) != PC_OK) {
            st = err->status;
            break;
        }
        if (!pc_pass_ep_accepts(opts, r)) {
            pc_pass_near_miss(opts, PC_RW_RESHAPE_FUSED, PC_MISS_ANNOTATION);
            st = pc_pass_remove_dead(graph, r, err); /* with the shape made for it */
            continue;
        }
        /* planted bug (passcheck suite --inject fusion-drops-annotation): the annotation property must catch
         * it */
        if (pc_fault_active(PC_FAULT_FUSION_DROPS_ANNOTATION)) pc_node_remove_metadata(r, PC_LAYER_ANN_KEY);
        if (pc_graph_move_output(second, 0, r, 0) != PC_OK) {
            st = pc_error_set(err, PC_ERR_INTERNAL, "moving output of node '%s'", pm_label(second));
            break;
        }
        pc_pass_explain(opts, "fused Reshape '%s' + Reshape '%s' -> Reshape '%s'", pm_label(first),
                        pm_label(second), r->name);
        pc_pass_note(opts, PC_RW_RESHAPE_FUSED);
        st = pc_pass_remove_dead(graph, second, err);
        *changed = true;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed) st = pc_graph_sort(graph, err);
    return st;
}
