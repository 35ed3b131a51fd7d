/* systolic_nhwc (level 3, for the systolic EP: pipeline.c's ep_rewrites table): the Systolic fork's NHWC
 * transformer. Each QLinearConv the EP owns, with a 4-D x and a constant int8 weight of rank 4, becomes
 * QLinearConv_nhwc in PC_SYSTOLIC_DOMAIN:
 *  - x and y channels-last (N, H, W, C);
 *  - w re-laid-out into HWIO, dims [kH, kW, C/group, M], element (h, w, i, o) = the OIHW element (o, i, h,
 * w), once per weight value (convs sharing a weight share the copy); scales, zero points and bias unchanged;
 *  - the attributes unchanged; `relu` (default 0) is the kernel's Relu epilogue, clamping at y's zero point.
 * Reorders, counted as the fork counts uses: one Transpose to NHWC per NCHW source value, shared by every
 * converted conv reading it; a converted conv reading another's output reads its NHWC value directly; one
 * Transpose back to NCHW per converted output still read in NCHW (a consumer that is not converted, a graph
 * output, a subgraph reference), writing the original value, whose name, consumers and graph-output role it
 * keeps. Every new node is made from the conv it serves, so it carries the systolic EP (which claims
 * quantized Transposes). The transpose optimizer then runs for the EP, as after ORT's layout transformer.
 * Left alone (explained, counted as a near miss): a weight that is not a constant int8 tensor of rank 4 (the
 * fork's "weights not static"; the fork also skipped uint8 weights silently), an x whose rank is not 4, a
 * node the EP would not claim in the new form. Numerics: exact (the same integer arithmetic, elements moved).
 */
#include <string.h>

#include "core/ep/ep_internal.h"
#include "core/passes/pass_match.h"
#include "core/transpose/transpose_internal.h"

static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

/* value -> value, for the few dozen convs of a graph: NCHW source -> its NHWC reorder or converted output,
 * OIHW weight -> its HWIO copy */
typedef struct vmap {
    pc_value **from;
    pc_value **to;
    uint32_t n, cap;
} vmap;

static pc_value *vmap_get(const vmap *m, const pc_value *v)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->from[i] == v) return m->to[i];
    return NULL;
}

static pc_status vmap_put(vmap *m, pc_value *from, pc_value *to, pc_error *err)
{
    if (m->n == m->cap) {
        uint32_t cap = m->cap ? 2 * m->cap : 16;
        pc_value **f = realloc(m->from, cap * sizeof *f);
        if (f) m->from = f;
        pc_value **t = f ? realloc(m->to, cap * sizeof *t) : NULL;
        if (!t) return pc_error_set(err, PC_ERR_NOMEM, "systolic_nhwc: out of memory");
        m->to = t;
        m->cap = cap;
    }
    m->from[m->n] = from;
    m->to[m->n++] = to;
    return PC_OK;
}

static void vmap_free(vmap *m)
{
    free(m->from);
    free(m->to);
}

typedef struct state {
    pc_graph *graph;
    const pc_pass_options *opts;
    vmap nhwc; /* NCHW value -> the same data channels-last: a reorder's output, or a converted conv's */
    vmap hwio; /* OIHW weight -> HWIO copy */
} state;

/* The OIHW int8 weight as a new HWIO initializer. */
static pc_value *hwio_weight(state *s, pc_value *w, const pc_tensor *t, pc_error *err)
{
    pc_value *done = vmap_get(&s->hwio, w);
    if (done) return done;
    int64_t o = t->dims[0], i = t->dims[1], kh = t->dims[2], kw = t->dims[3];
    int64_t dims[4] = {kh, kw, i, o};
    pc_tensor *h = pc_tensor_create(s->graph->model, NULL, PC_DTYPE_INT8, 4, dims, err);
    if (!h) return NULL;
    const int8_t *src = t->data;
    int8_t *dst = h->data;
    /* planted bug (--inject systolic-weight-ohwi): the elements in OHWI order, the dims still HWIO */
    bool ohwi = pc_fault_active(PC_FAULT_SYSTOLIC_WEIGHT_OHWI);
    for (int64_t a = 0; a < o; a++)
        for (int64_t b = 0; b < i; b++)
            for (int64_t y = 0; y < kh; y++)
                for (int64_t x = 0; x < kw; x++)
                    dst[ohwi ? ((a * kh + y) * kw + x) * i + b : ((y * kw + x) * i + b) * o + a] =
                        src[((a * i + b) * kh + y) * kw + x];
    char hint[256];
    snprintf(hint, sizeof hint, "%s_hwio", w->name ? w->name : "w");
    pc_value *v = pc_pass_add_initializer(s->graph, hint, h, err);
    if (v && vmap_put(&s->hwio, w, v, err) != PC_OK) return NULL;
    return v;
}

/* x channels-last: a converted conv's output as it is, else the one reorder of x (made on first use). */
static pc_value *nhwc_input(state *s, pc_value *x, const pc_node *conv, pc_error *err)
{
    pc_value *done = vmap_get(&s->nhwc, x);
    if (done) return done;
    pc_node *t = pc_pass_add_node(s->graph, s->opts, "Transpose", "", 1, &x, 1, conv, err);
    if (!t || pc_node_set_attr_ints(t, "perm", 4, to_nhwc, err) != PC_OK ||
        tp_set_permuted_type(t->outputs[0], x, to_nhwc, 4, err) != PC_OK ||
        vmap_put(&s->nhwc, x, t->outputs[0], err) != PC_OK)
        return NULL;
    return t->outputs[0];
}

/* Why n is not converted, or NULL when it is convertible; *t: its weight. */
static const char *refusal(const state *s, pc_node *n, const pc_tensor **t)
{
    *t = NULL;
    if (n->n_inputs < 8 || n->n_outputs < 1 || !n->inputs[0] || !n->outputs[0]) return "inputs missing";
    if (pc_value_rank(n->inputs[0]) != 4) return "x is not 4-D";
    const pc_tensor *w = pc_value_const(n->inputs[3]);
    if (!w) return "its weight is not a constant";
    if (w->dtype != PC_DTYPE_INT8 || w->rank != 4) return "its weight is not int8 of rank 4";
    /* the claim is asked of the node as it would be (op, domain; inputs and attributes unchanged) */
    const char *op = n->op_type;
    n->op_type = "QLinearConv_nhwc";
    char why[256];
    bool claimed = pc_ep_claims_node_as(s->opts->ep, n, PC_SYSTOLIC_DOMAIN, 1, why, sizeof why);
    n->op_type = op;
    if (!claimed) return "the EP would not claim its channels-last form";
    *t = w;
    return NULL;
}

static pc_status convert(state *s, pc_node *n, const pc_tensor *w, pc_error *err)
{
    pc_graph *g = s->graph;
    pc_value *x = nhwc_input(s, n->inputs[0], n, err);
    pc_value *wh = x ? hwio_weight(s, n->inputs[3], w, err) : NULL;
    if (!wh) return err->status;
    pc_value *y = n->outputs[0];
    /* y keeps its name, consumers and graph-output role, now written by the Transpose back */
    pc_node *back = pc_pass_add_node(g, s->opts, "Transpose", "", 1, &y, 1, n, err);
    if (!back || pc_node_set_attr_ints(back, "perm", 4, to_nchw, err) != PC_OK) return err->status;
    if (pc_graph_move_output(n, 0, back, 0) != PC_OK)
        return pc_error_set(err, PC_ERR_INTERNAL, "systolic_nhwc: moving the output of node '%s'",
                            pm_label(n));
    pc_value *yh = n->outputs[0];
    pc_status st = pc_node_set_input(back, 0, yh, err);
    if (st == PC_OK) st = tp_set_permuted_type(yh, y, to_nhwc, 4, err);
    if (st == PC_OK) st = pc_node_set_input(n, 0, x, err);
    if (st == PC_OK) st = pc_node_set_input(n, 3, wh, err);
    if (st == PC_OK) st = vmap_put(&s->nhwc, y, yh, err);
    if (st != PC_OK) return st;
    n->op_type = "QLinearConv_nhwc";
    n->domain = PC_SYSTOLIC_DOMAIN;
    return PC_OK;
}

pc_status pc_pass_systolic_nhwc(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    if (!opts || !opts->ep) return PC_OK;
    state s = {.graph = graph, .opts = opts};
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err); /* sorted: producers convert before consumers */
    bool imported = false;
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        if (n->removed || !pm_is_op(n, "QLinearConv") || !n->ep || strcmp(n->ep, opts->ep->name) != 0 ||
            !pc_pass_can_modify(opts, n))
            continue;
        const pc_tensor *w;
        const char *why = refusal(&s, n, &w);
        if (why) {
            pc_pass_explain(opts, "'%s' (#%u) stays QLinearConv: %s", pm_label(n), n->id, why);
            pc_pass_near_miss(opts, PC_RW_SYSTOLIC_NHWC, PC_MISS_OTHER);
            continue;
        }
        if (!imported && pc_model_opset(graph->model, PC_SYSTOLIC_DOMAIN) < 0 &&
            (st = pc_model_set_opset(graph->model, PC_SYSTOLIC_DOMAIN, 1, err)) != PC_OK)
            break;
        imported = true;
        pc_pass_explain(opts, "'%s' (#%u) -> QLinearConv_nhwc (HWIO weight)", pm_label(n), n->id);
        if ((st = convert(&s, n, w, err)) != PC_OK) {
            pc_error_prefix(err, "systolic_nhwc: node '%s': ", pm_label(n));
            break;
        }
        pc_pass_note(opts, PC_RW_SYSTOLIC_NHWC);
        *changed = true;
    }
    pm_nodes_free(&nodes);
    /* a converted conv read only by converted convs needs no way back (the map's entries for converted
     * outputs: y, now written by its Transpose back, to the conv's NHWC value), and an OIHW weight nothing
     * else reads goes (a model would otherwise carry every converted weight twice) */
    for (uint32_t i = 0; st == PC_OK && i < s.nhwc.n; i++) {
        const pc_node *conv = s.nhwc.to[i]->producer;
        pc_value *y = s.nhwc.from[i];
        if (conv && strcmp(conv->domain, PC_SYSTOLIC_DOMAIN) == 0 && !pc_value_is_used(y))
            st = pc_graph_remove_node(graph, y->producer, err);
    }
    for (uint32_t i = 0; st == PC_OK && i < s.hwio.n; i++)
        st = pm_drop_unused_const(graph, s.hwio.from[i], err);
    vmap_free(&s.nhwc);
    vmap_free(&s.hwio);
    if (st != PC_OK || !*changed) return st;
    if ((st = pc_graph_sort(graph, err)) != PC_OK) return st;
    bool ch = false;
    st = pc_transpose_optimize(graph, opts, &ch, err);
    if (st != PC_OK) pc_error_prefix(err, "transpose optimizer after systolic_nhwc: ");
    return st;
}
