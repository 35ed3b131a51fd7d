/* systolic_nhwc (level 3, for the systolic EP: pipeline.c's ep_rewrites table): the Systolic fork's NHWC
 * transformer. One walk in topological order over the nodes the EP owns:
 *  - QLinearConv (and com.microsoft QLinearConvRelu) with a 4-D x and a constant int8 weight of rank 4
 * becomes QLinearConv_nhwc in PC_SYSTOLIC_DOMAIN: x and y channels-last (N, H, W, C); w re-laid-out into
 * HWIO, dims [kH, kW, C/group, M], element (h, w, i, o) = the OIHW element (o, i, h, w), once per weight
 * value (convs sharing a weight share the copy); scales, zero points, bias and attributes unchanged; `relu` =
 * 1 for QLinearConvRelu (the kernel's epilogue, clamping at y's zero point: one kernel, not an op per
 * fusion);
 *  - QLinearRelu reading a converted conv's output, as its only reader (not a graph output), with the conv's
 * output zero point: fused into the conv as relu = 1 (the fork's GetCapability fuse rule);
 *  - QLinearRelu whose input is channels-last already: carried in NHWC (the op is elementwise);
 *  - com.microsoft QLinearAdd whose A and B are both channels-last already, of equal shapes: carried in NHWC
 * as the EP's own QLinearAdd (the array's residual add, elementwise without broadcasting) — the fork's rule.
 * Reorders, counted as the fork counts uses: one Transpose to NHWC per NCHW source value a conv reads, shared
 * by every converted conv reading it; a node reading another's channels-last output reads it directly; one
 * Transpose back to NCHW per channels-last output still read in NCHW (a consumer that is not converted, a
 * graph output, a subgraph reference), writing the original value, whose name, consumers and graph-output
 * role it keeps. Every new node is made from the node it serves, so it carries the systolic EP (which claims
 * quantized Transposes). The transpose optimizer then runs for the EP, as after ORT's layout transformer.
 * Left alone (explained, counted as a near miss): a weight that is not a constant int8 tensor of rank 4 (the
 * fork's "weights not static"; the fork also skipped uint8 weights silently), an x whose rank is not 4, a
 * node the EP would not claim in the new form, a QLinearAdd with an NCHW input or unequal (or unknown)
 * shapes. Numerics: exact (the same integer arithmetic, elements moved). Planted faults: the fork's two
 * TransformQLinearAdd bugs (PC_FAULT_SYSTOLIC_ADD_SHAPE_COPY, PC_FAULT_SYSTOLIC_ADD_NO_RETURN) and its 2020
 * weight order (PC_FAULT_SYSTOLIC_WEIGHT_OHWI).
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

/* Why conv n is not converted, or NULL when it is convertible; *t: its weight. */
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

/* A Transpose back to NCHW takes over n's output 0 (its name, consumers and graph-output role; n gets a fresh
 * output) and reads `from`, or n's fresh output when from is NULL. */
static pc_node *way_back(state *s, pc_node *n, pc_value *from, pc_error *err)
{
    pc_value *y = n->outputs[0];
    pc_node *back = pc_pass_add_node(s->graph, s->opts, "Transpose", "", 1, &y, 1, n, err);
    if (!back || pc_node_set_attr_ints(back, "perm", 4, to_nchw, err) != PC_OK) return NULL;
    if (pc_graph_move_output(n, 0, back, 0) != PC_OK) {
        pc_error_set(err, PC_ERR_INTERNAL, "systolic_nhwc: moving the output of node '%s'", pm_label(n));
        return NULL;
    }
    return pc_node_set_input(back, 0, from ? from : n->outputs[0], err) == PC_OK ? back : NULL;
}

/* n's output 0 becomes channels-last: n writes a new NHWC value, and y (the old output) is written by a
 * Transpose back, which the end of the pass drops when nothing reads y any more. */
static pc_status output_to_nhwc(state *s, pc_node *n, pc_error *err)
{
    pc_node *back = way_back(s, n, NULL, err);
    if (!back) return err->status;
    pc_value *y = back->outputs[0], *yh = n->outputs[0];
    pc_status st = tp_set_permuted_type(yh, y, to_nhwc, 4, err);
    if (st == PC_OK) st = vmap_put(&s->nhwc, y, yh, err);
    return st;
}

static pc_status convert(state *s, pc_node *n, const pc_tensor *w, pc_error *err)
{
    bool relu = pc_name_eq(n->op_type, "QLinearConvRelu");
    pc_value *x = nhwc_input(s, n->inputs[0], n, err);
    pc_value *wh = x ? hwio_weight(s, n->inputs[3], w, err) : NULL;
    if (!wh) return err->status;
    pc_status st = output_to_nhwc(s, n, err);
    if (st == PC_OK) st = pc_node_set_input(n, 0, x, err);
    if (st == PC_OK) st = pc_node_set_input(n, 3, wh, err);
    if (st == PC_OK && relu) st = pc_node_set_attr_int(n, "relu", 1, err);
    if (st != PC_OK) return st;
    n->op_type = "QLinearConv_nhwc";
    n->domain = PC_SYSTOLIC_DOMAIN;
    return PC_OK;
}

/* One 8-bit value of a constant zero point, or of an absent one (0 of type t). */
static bool zero_point(const pc_value *v, pc_dtype t, int32_t *zp)
{
    const pc_tensor *z = v ? pc_value_const(v) : NULL;
    if (v && (!z || z->n_elements != 1 || z->dtype != t)) return false;
    *zp = !z ? 0 : t == PC_DTYPE_INT8 ? ((const int8_t *)z->data)[0] : ((const uint8_t *)z->data)[0];
    return t == PC_DTYPE_INT8 || t == PC_DTYPE_UINT8;
}

/* r, a QLinearRelu reading converted conv c's output as its only reader, clamping at c's output zero point,
 * goes into c as relu = 1: r's output (keeping its name and readers) is written by a Transpose back from c's
 * channels-last output, and means that from now on. */
static pc_status fuse_relu(state *s, pc_node *c, pc_node *r, pc_error *err)
{
    pc_value *yh = c->outputs[0], *out = r->outputs[0];
    if (!way_back(s, r, yh, err)) return err->status;
    pc_status st = pc_node_set_attr_int(c, "relu", 1, err);
    if (st == PC_OK) st = vmap_put(&s->nhwc, out, yh, err);
    if (st == PC_OK) st = pc_graph_remove_node(s->graph, r, err);
    return st;
}

/* The converted conv whose channels-last output r may absorb, or NULL (a near miss counted when a conv
 * without relu writes r's input). */
static pc_node *relu_host(const state *s, const pc_node *r, const pc_value *xh)
{
    pc_node *c = xh->producer;
    const pc_value *y = r->inputs[0];
    if (!c || !pc_name_eq(c->op_type, "QLinearConv_nhwc") || strcmp(c->domain, PC_SYSTOLIC_DOMAIN) != 0 ||
        pc_node_attr_int(c, "relu", 0) != 0)
        return NULL;
    if (!pc_nodes_fusable(c, r) || !pc_pass_can_modify(s->opts, c)) {
        pc_pass_near_miss(s->opts, PC_RW_SYSTOLIC_RELU, PC_MISS_ANNOTATION);
        return NULL;
    }
    /* the conv's output is read by r alone: y by r, and the NHWC value by y's Transpose back only (a
     * converted node before r in the walk reads the NHWC value directly) */
    if (y->n_consumers != 1 || y->is_graph_output || y->n_subgraph_refs || xh->n_consumers != 1) {
        pc_pass_near_miss(s->opts, PC_RW_SYSTOLIC_RELU, PC_MISS_SHARED);
        return NULL;
    }
    pc_dtype t = y->type.elem;
    int32_t zc, zr;
    if (c->n_inputs < 8 || !zero_point(c->inputs[7], t, &zc) ||
        !zero_point(r->n_inputs > 1 ? r->inputs[1] : NULL, t, &zr) || zc != zr) {
        pc_pass_near_miss(s->opts, PC_RW_SYSTOLIC_RELU, PC_MISS_NOT_CONSTANT);
        return NULL;
    }
    return c;
}

static bool same_shape(const pc_value *a, const pc_value *b)
{
    int64_t da[PC_MAX_RANK], db[PC_MAX_RANK];
    int32_t r = pc_value_rank(a);
    if (r < 0 || r != pc_value_rank(b) || !pc_value_dims(a, da) || !pc_value_dims(b, db)) return false;
    return memcmp(da, db, (size_t)r * sizeof *da) == 0;
}

/* QLinearRelu: fused into the conv before it, or carried; *done false when neither applies. */
static pc_status visit_relu(state *s, pc_node *r, bool *done, pc_error *err)
{
    *done = false;
    pc_value *xh = r->n_inputs && r->n_outputs ? vmap_get(&s->nhwc, r->inputs[0]) : NULL;
    if (!xh) return PC_OK; /* its input is NCHW: it stays as it is */
    pc_node *c = relu_host(s, r, xh);
    pc_status st;
    if (c) {
        pc_pass_explain(s->opts, "QLinearRelu '%s' (#%u) fused into '%s' (relu = 1)", pm_label(r), r->id,
                        pm_label(c));
        st = fuse_relu(s, c, r, err);
        if (st == PC_OK) pc_pass_note(s->opts, PC_RW_SYSTOLIC_RELU);
    } else {
        pc_pass_explain(s->opts, "QLinearRelu '%s' (#%u) carried in NHWC", pm_label(r), r->id);
        st = output_to_nhwc(s, r, err);
        if (st == PC_OK) st = pc_node_set_input(r, 0, xh, err);
        if (st == PC_OK) pc_pass_note(s->opts, PC_RW_SYSTOLIC_CARRY);
    }
    *done = st == PC_OK;
    return st;
}

/* com.microsoft QLinearAdd with both A and B channels-last and of one shape: the EP's own QLinearAdd. */
static pc_status visit_add(state *s, pc_node *n, bool *done, pc_error *err)
{
    *done = false;
    if (n->n_inputs < 7 || n->n_outputs < 1 || !n->inputs[0] || !n->inputs[3]) return PC_OK;
    pc_value *ah = vmap_get(&s->nhwc, n->inputs[0]), *bh = vmap_get(&s->nhwc, n->inputs[3]);
    if (!ah || !bh) {
        if (ah || bh) {
            pc_pass_explain(s->opts, "QLinearAdd '%s' (#%u) stays NCHW: input %s is not channels-last",
                            pm_label(n), n->id, ah ? "B" : "A");
            pc_pass_near_miss(s->opts, PC_RW_SYSTOLIC_CARRY, PC_MISS_OTHER);
        }
        return PC_OK;
    }
    /* planted bug (--inject systolic-add-shape-copy): B's shape read from A, as the fork's shape2 */
    const pc_value *b = pc_fault_active(PC_FAULT_SYSTOLIC_ADD_SHAPE_COPY) ? n->inputs[0] : n->inputs[3];
    if (!same_shape(n->inputs[0], b)) {
        pc_pass_explain(s->opts, "QLinearAdd '%s' (#%u) stays NCHW: A and B shapes differ or are unknown",
                        pm_label(n), n->id);
        pc_pass_near_miss(s->opts, PC_RW_SYSTOLIC_CARRY, PC_MISS_TYPE);
        /* planted bug (--inject systolic-add-no-return): the bail-out explained, not taken */
        if (!pc_fault_active(PC_FAULT_SYSTOLIC_ADD_NO_RETURN)) return PC_OK;
    }
    /* the claim is asked of the node as it would be */
    if (!pc_ep_claims_node_as(s->opts->ep, n, PC_SYSTOLIC_DOMAIN, 1, NULL, 0)) {
        pc_pass_explain(s->opts, "QLinearAdd '%s' (#%u) stays NCHW: the EP would not claim its own form",
                        pm_label(n), n->id);
        pc_pass_near_miss(s->opts, PC_RW_SYSTOLIC_CARRY, PC_MISS_OTHER);
        return PC_OK;
    }
    pc_pass_explain(s->opts, "QLinearAdd '%s' (#%u) carried in NHWC", pm_label(n), n->id);
    pc_status st = output_to_nhwc(s, n, err);
    if (st == PC_OK) st = pc_node_set_input(n, 0, ah, err);
    if (st == PC_OK) st = pc_node_set_input(n, 3, bh, err);
    if (st != PC_OK) return st;
    n->domain = PC_SYSTOLIC_DOMAIN;
    pc_pass_note(s->opts, PC_RW_SYSTOLIC_CARRY);
    *done = true;
    return PC_OK;
}

static pc_status visit_conv(state *s, pc_node *n, bool *done, pc_error *err)
{
    *done = false;
    const pc_tensor *w;
    const char *why = refusal(s, n, &w);
    if (why) {
        pc_pass_explain(s->opts, "'%s' (#%u) stays %s: %s", pm_label(n), n->id, n->op_type, why);
        pc_pass_near_miss(s->opts, PC_RW_SYSTOLIC_NHWC, PC_MISS_OTHER);
        return PC_OK;
    }
    pc_pass_explain(s->opts, "'%s' (#%u) -> QLinearConv_nhwc (HWIO weight%s)", pm_label(n), n->id,
                    pc_name_eq(n->op_type, "QLinearConvRelu") ? ", relu = 1" : "");
    bool relu = pc_name_eq(n->op_type, "QLinearConvRelu");
    pc_status st = convert(s, n, w, err);
    if (st == PC_OK) pc_pass_note(s->opts, PC_RW_SYSTOLIC_NHWC);
    if (st == PC_OK && relu) pc_pass_note(s->opts, PC_RW_SYSTOLIC_RELU);
    *done = st == PC_OK;
    return st;
}

typedef pc_status (*visit_fn)(state *, pc_node *, bool *, pc_error *);

/* What the walk does per op (domain, op type). */
static const struct {
    const char *domain, *op_type;
    visit_fn visit;
} visits[] = {
    {"", "QLinearConv", visit_conv},
    {PC_MS_DOMAIN, "QLinearConvRelu", visit_conv},
    {PC_SYSTOLIC_DOMAIN, "QLinearRelu", visit_relu},
    {PC_MS_DOMAIN, "QLinearAdd", visit_add},
};

static visit_fn visit_of(const pc_node *n)
{
    for (size_t i = 0; i < sizeof visits / sizeof visits[0]; i++)
        if (pc_name_eq(n->domain, visits[i].domain) && pc_name_eq(n->op_type, visits[i].op_type))
            return visits[i].visit;
    return NULL;
}

pc_status pc_pass_systolic_nhwc(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    if (!opts || !opts->ep) return PC_OK;
    state s = {.graph = graph, .opts = opts};
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err); /* sorted: producers convert before consumers */
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++) {
        pc_node *n = nodes.items[i];
        visit_fn visit = n->removed ? NULL : visit_of(n);
        if (!visit || !n->ep || strcmp(n->ep, opts->ep->name) != 0 || !pc_pass_can_modify(opts, n)) continue;
        bool done = false;
        if ((st = visit(&s, n, &done, err)) != PC_OK) {
            pc_error_prefix(err, "systolic_nhwc: node '%s': ", pm_label(n));
            break;
        }
        *changed |= done;
    }
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed && pc_model_opset(graph->model, PC_SYSTOLIC_DOMAIN) < 0)
        st = pc_model_set_opset(graph->model, PC_SYSTOLIC_DOMAIN, 1, err);
    /* a channels-last output read only by converted nodes needs no way back (the map's entries for outputs
     * this pass made channels-last: y, now written by its Transpose back, to the NHWC value), and an OIHW
     * weight nothing else reads goes (a model would otherwise carry every converted weight twice) */
    for (uint32_t i = 0; st == PC_OK && i < s.nhwc.n; i++) {
        const pc_node *made = s.nhwc.to[i]->producer;
        pc_value *y = s.nhwc.from[i];
        if (made && strcmp(made->domain, PC_SYSTOLIC_DOMAIN) == 0 && y->producer && !pc_value_is_used(y))
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
