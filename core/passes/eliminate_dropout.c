/* eliminate_dropout (level 0): an inference-mode Dropout whose mask output is unused is removed. Inference
 * mode: before opset 7 the attribute is_test = 1 (its default 0 means training); opsets 7-11 have no training
 * mode; from opset 12 the training_mode input is absent or a constant false. The ratio does not matter at
 * inference. */
#include "core/passes/pass_match.h"

static bool dropout_is_inference(const pc_node *n)
{
    int64_t opset = pm_onnx_opset(n);
    if (opset < 7) return pc_node_attr_int(n, "is_test", 0) != 0;
    if (n->n_inputs < 3 || !n->inputs[2]) return true;
    const pc_tensor *t = pc_value_const(n->inputs[2]);
    return t && t->dtype == PC_DTYPE_BOOL && t->n_elements == 1 && ((const uint8_t *)t->data)[0] == 0;
}

pc_status pc_pass_eliminate_dropout(pc_graph *graph, const pc_pass_options *opts, bool *changed,
                                    pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        if (!pm_is_op(n, "Dropout") || n->n_inputs < 1 || n->n_outputs < 1 || !n->outputs[0] ||
            !pc_pass_can_modify(opts, n))
            continue;
        if (!dropout_is_inference(n)) {
            bool input_form = pm_onnx_opset(n) >= 12 && n->n_inputs >= 3 && n->inputs[2];
            pc_pass_near_miss(opts, PC_RW_DROPOUT_REMOVED,
                              input_form && !pc_value_const(n->inputs[2]) ? PC_MISS_NOT_CONSTANT
                                                                          : PC_MISS_ATTRIBUTE);
            continue;
        }
        if (n->n_outputs > 1 && pc_value_is_used(n->outputs[1])) { /* the mask is read */
            pc_pass_near_miss(opts, PC_RW_DROPOUT_REMOVED, PC_MISS_SHARED);
            continue;
        }
        const char *label = pm_label(n);
        bool done = false;
        st = pm_bypass(graph, opts, n, &done, err);
        if (st == PC_OK && done) {
            pc_pass_explain(opts, "removed inference Dropout '%s'", label);
            pc_pass_note(opts, PC_RW_DROPOUT_REMOVED);
            *changed = true;
        } else if (st == PC_OK) {
            pc_pass_near_miss(opts, PC_RW_DROPOUT_REMOVED, PC_MISS_SHARED);
        }
    }
    pm_nodes_free(&nodes);
    return st;
}
