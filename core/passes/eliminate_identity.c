/* eliminate_identity (level 0): Identity nodes are removed; their consumers read the input. A graph output
 * keeps its name through pc_pass_bypass_node (the input's producer takes the output over); when that is
 * impossible (the input is a graph input, an initializer or used elsewhere) the Identity stays. */
#include "core/passes/pass_match.h"

pc_status pc_pass_eliminate_identity(pc_graph *graph, const pc_pass_options *opts, bool *changed,
                                     pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        if (!pm_is_op(n, "Identity") || n->n_inputs != 1 || n->n_outputs != 1 || !pc_pass_can_modify(opts, n))
            continue;
        const char *label = pm_label(n);
        bool done = false;
        st = pm_bypass(graph, opts, n, &done, err);
        if (st == PC_OK && done) {
            pc_pass_explain(opts, "removed Identity '%s'", label);
            pc_pass_note(opts, PC_RW_IDENTITY_REMOVED);
            *changed = true;
        } else if (st == PC_OK) {
            pc_pass_near_miss(opts, PC_RW_IDENTITY_REMOVED, PC_MISS_SHARED); /* graph output not taken over */
        }
    }
    pm_nodes_free(&nodes);
    return st;
}
