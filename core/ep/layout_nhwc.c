/* Layout transformer (pc_layout_transform): moves the layout-sensitive nodes an NHWC-preferring EP
 * tentatively owns into the internal NHWC domain, between Transposes, then lets the transpose optimizer
 * cancel what it can.
 *
 * Requires: node->ep set on the EP's tentatively claimed nodes (partitioner, GetCapability #1); the rank of
 * input 0 (or of the weight for Conv-like ops) known.
 *
 * Conventions of the NHWC ops (the reference executor's composites in reference/ops_internal.c define them):
 *  - input 0 and output 0 are channels-last, (N, d1..dk, C);
 *  - every other input keeps its standard meaning and layout: Conv/ConvTranspose weights stay [M, C/group,
 * k...], BatchNormalization's per-channel vectors stay 1-D, MaxUnpool's indices stay NCHW flat positions,
 * GridSample's grid stays (N, H_out, W_out, 2), and Resize's roi, scales and sizes stay in NCHW axis order;
 *  - the node keeps its op type, attributes, annotation and EP; only its domain changes.
 * Not moved: nodes the EP would not claim in the NHWC domain (at the domain's opset: the model's import, else
 * ai.onnx's), nodes whose rank is unknown or < 3, MaxPool whose Indices output is used (indices are NCHW
 * positions), Resize whose scales or sizes are not constants (ORT leaves those unpermuted; here nothing needs
 * permuting, but a runtime-sized Resize is left to the EP as is, like ORT). */
#include <string.h>

#include "core/ep/ep_internal.h"
#include "core/ir/ir_internal.h"
#include "core/passes/pass.h"
#include "core/transpose/transpose_internal.h"

typedef struct layout_op {
    const char *domain, *op_type;
    int weight_input; /* input whose rank stands in for input 0's when that is unknown; -1: none */
} layout_op;

/* ONNX's layout-sensitive ops, ORT's Resize addition, and com.microsoft FusedConv. */
static const layout_op layout_ops[] = {
    {"", "AveragePool", -1},  {"", "BatchNormalization", -1},
    {"", "Conv", 1},          {"", "ConvTranspose", 1},
    {"", "DepthToSpace", -1}, {"", "GlobalAveragePool", -1},
    {"", "GlobalLpPool", -1}, {"", "GlobalMaxPool", -1},
    {"", "GridSample", -1},   {"", "InstanceNormalization", -1},
    {"", "LRN", -1},          {"", "LpPool", -1},
    {"", "MaxPool", -1},      {"", "MaxUnpool", -1},
    {"", "QLinearConv", 3},   {"", "Resize", -1},
    {"", "SpaceToDepth", -1}, {PC_MS_DOMAIN, "FusedConv", 1},
};

static const layout_op *layout_op_find(const char *domain, const char *op_type)
{
    for (size_t i = 0; i < sizeof layout_ops / sizeof layout_ops[0]; i++)
        if (pc_name_eq(layout_ops[i].domain, domain) && pc_name_eq(layout_ops[i].op_type, op_type))
            return &layout_ops[i];
    return NULL;
}

bool pc_op_is_layout_sensitive(const char *domain, const char *op_type)
{
    return layout_op_find(domain ? domain : "", op_type) != NULL;
}

/* channels-first → channels-last [0, 2, ..., r-1, 1] and its inverse [0, r-1, 1, ..., r-2] */
static void perm_to_last(int32_t r, int64_t *perm)
{
    perm[0] = 0;
    for (int32_t i = 1; i < r - 1; i++)
        perm[i] = i + 1;
    perm[r - 1] = 1;
}

static void perm_to_first(int32_t r, int64_t *perm)
{
    perm[0] = 0;
    perm[1] = r - 1;
    for (int32_t i = 2; i < r; i++)
        perm[i] = i - 1;
}

static pc_node *add_transpose(pc_graph *g, const pc_pass_options *opts, pc_value *x, const pc_node *source,
                              int32_t rank, const int64_t *perm, pc_error *err)
{
    pc_node *t = pc_pass_add_node(g, opts, "Transpose", "", 1, &x, 1, source, err);
    if (!t) return NULL;
    if (pc_node_set_attr_ints(t, "perm", (size_t)rank, perm, err) != PC_OK) return NULL;
    return t;
}

/* The rank that decides the perms, or -1 when the node cannot be moved. */
static int32_t node_rank(const pc_node *n, const layout_op *lo)
{
    int32_t r = pc_value_rank(n->inputs[0]);
    if (r < 0 && lo->weight_input >= 0 && (uint32_t)lo->weight_input < n->n_inputs)
        r = pc_value_rank(n->inputs[lo->weight_input]);
    return r >= 3 && r <= PC_MAX_RANK ? r : -1;
}

static bool movable(const pc_node *n, const layout_op *lo)
{
    if (n->n_inputs == 0 || !n->inputs[0] || n->n_outputs == 0 || !n->outputs[0]) return false;
    if (strcmp(n->op_type, "MaxPool") == 0 && n->n_outputs > 1 && pc_value_is_used(n->outputs[1]))
        return false;
    if (strcmp(n->op_type, "Resize") == 0) {
        /* opset 10: (X, scales); 11+: (X, roi, scales, sizes) */
        for (uint32_t i = 1; i < n->n_inputs; i++)
            if (n->inputs[i] && !pc_value_const(n->inputs[i])) return false;
    }
    return node_rank(n, lo) > 0;
}

/* The NHWC domain's opset: the model's import when there is one, else ai.onnx's (the reference runs an NHWC
 * op with that opset's semantics), within the domain's 1..21. */
static int64_t nhwc_opset(const pc_model *m)
{
    int64_t v = pc_model_opset(m, PC_NHWC_DOMAIN);
    if (v >= 0) return v;
    v = pc_model_opset(m, "");
    if (v < 1) v = 1;
    if (v > 21) v = 21;
    return v;
}

static pc_status move_node(pc_graph *g, pc_node *n, int32_t rank, const pc_pass_options *opts, pc_error *err)
{
    int64_t to_last[PC_MAX_RANK], to_first[PC_MAX_RANK];
    perm_to_last(rank, to_last);
    perm_to_first(rank, to_first);
    pc_value *x = n->inputs[0], *y = n->outputs[0];

    pc_node *tin = add_transpose(g, opts, x, n, rank, to_last, err);
    if (!tin) return err->status;
    pc_status st = tp_set_permuted_type(tin->outputs[0], x, to_last, (size_t)rank, err);
    if (st == PC_OK) st = pc_node_set_input(n, 0, tin->outputs[0], err);
    if (st != PC_OK) return st;

    /* y keeps its name, consumers and graph-output role but now comes from the closing Transpose */
    pc_node *tout = add_transpose(g, opts, y, n, rank, to_first, err);
    if (!tout) return err->status;
    st = pc_graph_move_output(n, 0, tout, 0);
    if (st != PC_OK)
        return pc_error_set(err, st, "node '%s': moving output '%s' to its Transpose", n->name, y->name);
    pc_value *y_nhwc = n->outputs[0];
    st = pc_node_set_input(tout, 0, y_nhwc, err);
    if (st == PC_OK) st = tp_set_permuted_type(y_nhwc, y, to_last, (size_t)rank, err);
    if (st != PC_OK) return st;
    n->domain = PC_NHWC_DOMAIN;
    return PC_OK;
}

pc_status pc_layout_transform(pc_graph *graph, const pc_ep *ep, const pc_pass_options *opts, bool *changed,
                              pc_error *err)
{
    return pc_layout_transform_keeping(graph, ep, opts, NULL, 0, changed, err);
}

pc_status pc_layout_transform_keeping(pc_graph *graph, const pc_ep *ep, const pc_pass_options *opts,
                                      const uint8_t *keep_form, uint32_t n_keep_form, bool *changed,
                                      pc_error *err)
{
    *changed = false;
    if (!graph || !ep) return pc_error_set(err, PC_ERR_USAGE, "layout transform: no graph or no EP");
    pc_pass_options o;
    if (opts)
        o = *opts;
    else
        o = (pc_pass_options){.new_nodes_unassigned = true};
    o.provider = ep->name;
    o.ep = ep;
    o.layout_cost_check = true;

    uint32_t moved = 0;
    int64_t opset = nhwc_opset(graph->model);
    pc_node *next;
    for (pc_node *n = graph->first; n; n = next) {
        next = n->next; /* new Transposes are appended at the end and are not layout-sensitive */
        if (!n->ep || strcmp(n->ep, ep->name) != 0) continue;
        const layout_op *lo = layout_op_find(n->domain, n->op_type);
        if (!lo || !movable(n, lo)) continue;
        /* assigned to this EP by an earlier run, which chose its form (a node it kept in NCHW, or one a
         * level-2 fusion made after its layout step): moving it now would make optimizing not idempotent */
        if (keep_form && n->id < n_keep_form && keep_form[n->id]) {
            pc_pass_explain(
                &o, "'%s' (#%u, %s) keeps its NCHW form: assigned to EP %s by an earlier partitioning",
                n->name ? n->name : "", n->id, n->op_type, ep->name);
            pc_pass_near_miss(&o, PC_RW_NHWC_MOVED, PC_MISS_OTHER);
            continue;
        }
        /* moved, the node would need the EP to claim its NHWC form (nothing else runs that domain); when the
         * EP would refuse it (e.g. the domain's opset is outside its range), it stays in NCHW form */
        char why[256];
        if (!pc_ep_claims_node_as(ep, n, PC_NHWC_DOMAIN, opset, why, sizeof why)) {
            pc_pass_explain(&o, "'%s' (#%u, %s) stays in NCHW: EP %s does not claim it in %s (%s)",
                            n->name ? n->name : "", n->id, n->op_type, ep->name, PC_NHWC_DOMAIN, why);
            pc_pass_near_miss(&o, PC_RW_NHWC_MOVED, PC_MISS_ANNOTATION);
            continue;
        }
        if (pc_model_opset(graph->model, PC_NHWC_DOMAIN) < 0) {
            pc_status st = pc_model_set_opset(graph->model, PC_NHWC_DOMAIN, opset, err);
            if (st != PC_OK) return st;
        }
        int32_t rank = node_rank(n, lo);
        pc_status st = move_node(graph, n, rank, &o, err);
        if (st != PC_OK) {
            pc_error_prefix(err, "layout transform for EP '%s': node '%s' (%s): ", ep->name, n->name,
                            n->op_type);
            return st;
        }
        pc_pass_explain(&o, "'%s' (#%u, %s) moved to %s for EP %s, rank %d", n->name ? n->name : "", n->id,
                        n->op_type, PC_NHWC_DOMAIN, ep->name, rank);
        pc_pass_note(&o, PC_RW_NHWC_MOVED);
        moved++;
    }
    if (!moved) return PC_OK;
    *changed = true;
    pc_status st = pc_graph_sort(graph, err);
    if (st != PC_OK) return st;
    bool ch = false;
    st = pc_transpose_optimize(graph, &o, &ch, err);
    if (st != PC_OK)
        pc_error_prefix(err, "transpose optimizer after the layout transform for EP '%s': ", ep->name);
    return st;
}
