/* fuse_conv_bn (level 0): Conv (constant W, optional constant B) -> BatchNormalization in inference form
 * (constant scale, bias, mean, var; single consumer of the Conv output; extra outputs unused) becomes one
 * Conv with f[m] = scale[m] / sqrt(var[m] + epsilon),  W'[m,...] = W[m,...] * f[m],  B'[m] = (B[m] - mean[m])
 * * f[m] + bias[m] computed in double and rounded once to the weights' type (float or double). The weights
 * are new initializers, so a shared W is never edited in place. Not exact: the result differs from the
 * unfused graph by rounding only. */
#include "core/passes/pass_match.h"

static bool bn_is_inference(const pc_node *bn)
{
    int64_t opset = pm_onnx_opset(bn);
    if (opset < 7 && pc_node_attr_int(bn, "is_test", 0) == 0) return false;
    if (opset < 9 && pc_node_attr_int(bn, "spatial", 1) == 0) return false; /* per-activation statistics */
    if (pc_node_attr_int(bn, "training_mode", 0) != 0) return false;
    for (uint32_t i = 1; i < bn->n_outputs; i++)
        if (pc_value_is_used(bn->outputs[i])) return false;
    return true;
}

/* the four per-channel parameters, all [m] constants of the weights' dtype; *why says which condition
 * refused (PC_MISS_COUNT: a malformed node) */
static bool bn_params(const pc_node *bn, const pm_conv *c, const pc_tensor **p, pc_miss_reason *why)
{
    *why = PC_MISS_COUNT;
    if (bn->n_inputs != 5 || bn->inputs[0] != c->node->outputs[0]) return false;
    for (uint32_t i = 0; i < 4; i++) {
        p[i] = bn->inputs[i + 1] ? pc_value_const(bn->inputs[i + 1]) : NULL;
        if (!p[i]) *why = PC_MISS_NOT_CONSTANT;
        if (!p[i] || p[i]->dtype != c->w->dtype || p[i]->rank != 1 || p[i]->dims[0] != c->m) {
            if (p[i]) *why = PC_MISS_TYPE;
            return false;
        }
    }
    return true;
}

pc_status pc_pass_fuse_conv_bn(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pm_conv c;
        const pc_tensor *p[4]; /* scale, bias, mean, var */
        if (!pm_match_conv(opts, nodes.items[i], &c)) {
            pm_conv_near_miss(opts, nodes.items[i], "BatchNormalization", PC_RW_CONV_BN_FOLDED);
            continue;
        }
        pc_node *bn = c.next;
        if (!pm_is_op(bn, "BatchNormalization") || !bn->outputs[0]) continue;
        if (!bn_is_inference(bn)) {
            pc_pass_near_miss(opts, PC_RW_CONV_BN_FOLDED, PC_MISS_ATTRIBUTE);
            continue;
        }
        pc_miss_reason why;
        if (!bn_params(bn, &c, p, &why)) {
            if (why != PC_MISS_COUNT) pc_pass_near_miss(opts, PC_RW_CONV_BN_FOLDED, why);
            continue;
        }
        double eps = pc_node_attr_float(bn, "epsilon", 1e-5f);
        bool ok = true;
        for (int64_t m = 0; m < c.m && ok; m++) {
            double var = pm_channel_value(p[3], m);
            ok = var + eps > 0 && isfinite(var);
        }
        if (!ok) {
            pc_pass_near_miss(opts, PC_RW_CONV_BN_FOLDED, PC_MISS_NOT_CONSTANT); /* var + epsilon <= 0 */
            continue;
        }
        pc_tensor *w = pm_new_param(graph, &c, c.w, err), *b = w ? pm_new_param(graph, &c, NULL, err) : NULL;
        if (!b) {
            st = err->status;
            break;
        }
        uint64_t per = c.w->n_elements / (uint64_t)c.m;
        for (int64_t m = 0; m < c.m; m++) {
            double f = pm_channel_value(p[0], m) / sqrt(pm_channel_value(p[3], m) + eps);
            for (uint64_t k = 0; k < per; k++) {
                double x = 0;
                pm_get_f64(c.w, (uint64_t)m * per + k, &x);
                pm_set_f64(w, (uint64_t)m * per + k, x * f);
            }
            double bias = c.b ? pm_channel_value(c.b, m) : 0.0;
            pm_set_f64(b, (uint64_t)m, (bias - pm_channel_value(p[2], m)) * f + pm_channel_value(p[1], m));
        }
        bool done = false;
        st = pm_emit_conv(graph, opts, &c, bn, w, b, "BatchNormalization", &done, err);
        if (st == PC_OK) {
            if (done)
                pc_pass_note(opts, PC_RW_CONV_BN_FOLDED);
            else
                pc_pass_near_miss(opts, PC_RW_CONV_BN_FOLDED, PC_MISS_ANNOTATION);
        }
        *changed |= done;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed) st = pc_graph_sort(graph, err);
    return st;
}
