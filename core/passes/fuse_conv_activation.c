/* fuse_conv_activation (level 2, after partitioning): Conv -> Relu | Sigmoid | Tanh | LeakyRelu | HardSigmoid
 * | Clip (constant bounds) becomes FusedConv with attributes `activation` and `activation_params` (ONNX
 * Runtime's com.microsoft form; a Conv in the internal NHWC domain becomes that domain's FusedConv). Both
 * nodes must belong to the EP the pass runs for (opts->ep required), the Conv output must have one use, the
 * element type must be float, and the EP must claim the fused node (pc_ep_claims_node) — otherwise the fused
 * node is dropped again. Exact up to the rounding of the Conv output before the activation, which FusedConv
 * keeps. */
#include <float.h>

#include "core/passes/pass_match.h"

#define MS_DOMAIN "com.microsoft"

/* activation op, number of params, attribute names and defaults */
typedef struct activation {
    const char *op;
    uint32_t n_params;
    const char *attrs[2];
    float defaults[2];
} activation;

static const activation activations[] = {
    {"Relu", 0, {NULL, NULL}, {0, 0}},
    {"Sigmoid", 0, {NULL, NULL}, {0, 0}},
    {"Tanh", 0, {NULL, NULL}, {0, 0}},
    {"LeakyRelu", 1, {"alpha", NULL}, {0.01f, 0}},
    {"HardSigmoid", 2, {"alpha", "beta"}, {0.2f, 0.5f}},
    {"Clip", 2, {"min", "max"}, {-FLT_MAX, FLT_MAX}},
};

static const activation *activation_find(const pc_node *n)
{
    for (size_t i = 0; i < sizeof activations / sizeof activations[0]; i++)
        if (pm_is_op(n, activations[i].op)) return &activations[i];
    return NULL;
}

/* The activation's parameters; false for a Clip whose bounds are not constant scalars. */
static bool activation_params(const pc_node *n, const activation *a, float *p)
{
    for (uint32_t k = 0; k < a->n_params; k++)
        p[k] = pc_node_attr_float(n, a->attrs[k], a->defaults[k]);
    if (strcmp(a->op, "Clip") != 0 || pm_onnx_opset(n) < 11) return true;
    for (uint32_t k = 0; k < 2; k++) {
        const pc_value *v = n->n_inputs > k + 1 ? n->inputs[k + 1] : NULL;
        if (!v) continue;
        double d;
        if (!pm_scalar_f64(pc_value_const(v), &d) || isnan(d)) return false;
        p[k] = (float)d;
    }
    return true;
}

static pc_rewrite_kind activation_kind(const activation *a)
{
    return strcmp(a->op, "Relu") == 0   ? PC_RW_CONV_RELU_FUSED
           : strcmp(a->op, "Clip") == 0 ? PC_RW_CONV_CLIP_FUSED
                                        : PC_RW_CONV_ACT_FUSED;
}

/* Near miss for a Conv of this EP the pass refused before looking at its consumer: the Conv's output is
 * shared with an activation, or the Conv's element type is not float. */
static void conv_near_miss(const pc_pass_options *opts, const pc_node *conv, pc_miss_reason why)
{
    const pc_value *y = conv->outputs[0];
    for (uint32_t k = 0; y && k < y->n_consumers; k++) {
        const activation *a = activation_find(y->consumers[k].node);
        if (a) {
            pc_pass_near_miss(opts, activation_kind(a), why);
            return;
        }
    }
}

static const char *fused_domain(const pc_node *conv)
{
    if (conv->removed || strcmp(conv->op_type, "Conv") != 0) return NULL;
    if (conv->domain[0] == '\0') return MS_DOMAIN;
    return strcmp(conv->domain, PC_NHWC_DOMAIN) == 0 ? PC_NHWC_DOMAIN : NULL;
}

/* The Conv's element type: its input's, or its weights' when the input's is not known (e.g. a Transpose the
 * layout transformer inserted before shape inference ran again). */
static pc_dtype conv_elem(const pc_node *conv)
{
    pc_dtype d = pm_elem(conv->inputs[0]);
    return d != PC_DTYPE_UNDEFINED ? d : pm_elem(conv->inputs[1]);
}

pc_status pc_pass_fuse_conv_activation(pc_graph *graph, const pc_pass_options *opts, bool *changed,
                                       pc_error *err)
{
    *changed = false;
    if (!opts || !opts->ep) return PC_OK; /* which EP would run FusedConv is unknown: nothing to do */
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *conv = nodes.items[i];
        const char *domain = fused_domain(conv);
        if (!domain || conv->n_outputs != 1 || !conv->outputs[0] || conv->n_inputs < 2 ||
            !pc_pass_can_modify(opts, conv))
            continue;
        if (conv_elem(conv) != PC_DTYPE_FLOAT) {
            if (pm_counting(opts)) conv_near_miss(opts, conv, PC_MISS_TYPE);
            continue;
        }
        pc_node *act = pc_value_single_consumer(conv->outputs[0]);
        if (!act && pm_counting(opts)) conv_near_miss(opts, conv, PC_MISS_SHARED);
        const activation *a = act ? activation_find(act) : NULL;
        float params[2];
        if (!a || act->inputs[0] != conv->outputs[0] || act->n_outputs != 1 || !act->outputs[0]) continue;
        if (!pc_pass_can_modify(opts, act) || !pc_nodes_fusable(conv, act)) {
            pc_pass_near_miss(opts, activation_kind(a), PC_MISS_ANNOTATION);
            continue;
        }
        if (!activation_params(act, a, params)) {
            pc_pass_near_miss(opts, activation_kind(a), PC_MISS_NOT_CONSTANT);
            continue;
        }
        bool imported;
        if ((st = pc_pass_import_domain(graph->model, domain, &imported, err)) != PC_OK) break;
        pc_node *fused =
            pc_pass_add_node(graph, opts, "FusedConv", domain, conv->n_inputs, conv->inputs, 1, conv, err);
        if (!fused || pm_copy_attrs(fused, conv, err) != PC_OK ||
            pc_node_set_attr_string(fused, "activation", a->op, err) != PC_OK ||
            (a->n_params &&
             pc_node_set_attr_floats(fused, "activation_params", a->n_params, params, err) != PC_OK)) {
            st = err->status;
            break;
        }
        char why[256] = "";
        if (!pc_ep_claims_node(opts->ep, fused, why, sizeof why)) {
            /* the EP would not run it: drop the unused node (and the import made for it) again */
            pc_pass_near_miss(opts, activation_kind(a), PC_MISS_ANNOTATION);
            pc_pass_unimport_domain(graph->model, domain, imported);
            st = pc_graph_remove_node(graph, fused, err);
            continue;
        }
        /* planted bug (passcheck suite --inject level2-forgets-ep): the ep-assignment property must catch it
         */
        if (pc_fault_active(PC_FAULT_LEVEL2_FORGETS_EP)) fused->ep = NULL;
        if (pc_graph_move_output(act, 0, fused, 0) != PC_OK) {
            st = pc_error_set(err, PC_ERR_INTERNAL, "moving output of node '%s'", pm_label(act));
            break;
        }
        pc_pass_explain(opts, "fused Conv '%s' + %s '%s' -> FusedConv '%s' on %s", pm_label(conv), a->op,
                        pm_label(act), fused->name, opts->ep->name);
        pc_pass_note(opts, activation_kind(a));
        st = pc_pass_remove_dead(graph, act, err);
        *changed = true;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed) st = pc_graph_sort(graph, err);
    return st;
}
