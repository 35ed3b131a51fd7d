/* fuse_conv_mul (level 0): Conv (constant float/double W, optional constant B) -> Mul by a constant that
 * broadcasts per output channel ([M,1,1], [1,M,1,1], [1], scalar; rank <= the output's) becomes one Conv with
 * W'[m,...] = W[m,...] * c[m] and B'[m] = B[m] * c[m], computed in double and rounded once. The Conv output
 * must be the Mul's only use. Not exact: the scale is applied to the weights before the accumulation. */
#include "core/passes/pass_match.h"

pc_status pc_pass_fuse_conv_mul(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pm_conv c;
        if (!pm_match_conv(opts, nodes.items[i], &c)) {
            pm_conv_near_miss(opts, nodes.items[i], "Mul", PC_RW_CONV_MUL_FOLDED);
            continue;
        }
        pc_node *mul = c.next;
        if (!pm_is_op(mul, "Mul") || mul->n_inputs != 2 || !mul->outputs[0]) continue;
        uint32_t ci = mul->inputs[0] == c.node->outputs[0] ? 1 : 0;
        const pc_tensor *k = pc_value_const(mul->inputs[ci]);
        if (!k || mul->inputs[1 - ci] != c.node->outputs[0] || k->dtype != c.w->dtype ||
            !pm_per_channel(k, c.w->rank, c.m)) {
            if (mul->inputs[1 - ci] == c.node->outputs[0])
                pc_pass_near_miss(opts, PC_RW_CONV_MUL_FOLDED, !k ? PC_MISS_NOT_CONSTANT : PC_MISS_TYPE);
            continue;
        }
        pc_tensor *w = pm_new_param(graph, &c, c.w, err), *b = w ? pm_new_param(graph, &c, NULL, err) : NULL;
        if (!b) {
            st = err->status;
            break;
        }
        uint64_t per = c.w->n_elements / (uint64_t)c.m;
        for (int64_t m = 0; m < c.m; m++) {
            double s = pm_channel_value(k, m);
            for (uint64_t e = 0; e < per; e++) {
                double x = 0;
                pm_get_f64(c.w, (uint64_t)m * per + e, &x);
                pm_set_f64(w, (uint64_t)m * per + e, x * s);
            }
            pm_set_f64(b, (uint64_t)m, (c.b ? pm_channel_value(c.b, m) : 0.0) * s);
        }
        bool done = false;
        st = pm_emit_conv(graph, opts, &c, mul, w, b, "Mul", &done, err);
        if (st == PC_OK) {
            if (done)
                pc_pass_note(opts, PC_RW_CONV_MUL_FOLDED);
            else
                pc_pass_near_miss(opts, PC_RW_CONV_MUL_FOLDED, PC_MISS_ANNOTATION);
        }
        *changed |= done;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed) st = pc_graph_sort(graph, err);
    return st;
}
