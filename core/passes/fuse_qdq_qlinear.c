/* fuse_qdq_qlinear (level 2, after partitioning): ONNX Runtime's QDQ selector/action idea for the EP the pass
 * runs for (opts->ep required). A node group is selected from its QuantizeLinear backwards:
 *   - DQ(x), DQ(w)[, DQ(int32 b)] -> Conv | FusedConv(Relu) [-> Relu] -> Q  =>  QLinearConv, or com.microsoft
 *     QLinearConvRelu when the Relu is not made redundant by Q (its zero point above the type's low end);
 *   - DQ(a), DQ(b) -> MatMul [-> redundant Relu] -> Q  =>  QLinearMatMul;
 *   - DQ(a), DQ(b) -> Add [-> redundant Relu] -> Q, all per tensor and of one type  =>  com.microsoft
 * QLinearAdd (exact);
 *   - QLinearConv -> DQ -> Relu -> Q with equal parameters  =>  QLinearConvRelu (the Systolic quantizer's
 * form);
 *   - DQ -> Relu -> Q with equal parameters and Q's zero point at the low end  =>  removed (exact);
 *   - any other DQ -> Relu -> Q with equal per-tensor parameters  =>  the systolic EP's QLinearRelu, where
 * the EP claims it (only systolic does);
 *   - Relu -> Q with Q's zero point at the low end  =>  the Relu is removed (ORT's ReluQuantFusion; exact).
 * Every node of a group must be one this pass may modify and share the target's EP; the new node takes the
 * target's EP and must be claimed by the EP (pc_ep_claims_node), else it is dropped again. Conditions follow
 * ORT's ConvNodeGroupSelector/MatMul selector: constant positive float scales, constant zero points, x and y
 * of one 8-bit type, int8 x only with int8 w, per-tensor x and y, w per tensor or per output channel (axis
 * 0), an int32 bias whose scale is float(x_scale * w_scale[m]) with zero point 0. Shared DQ nodes stay for
 * their other consumers. Numerics: the Conv/MatMul rewrites move the rounding of the product from "float
 * result, then Q" to QLinear's requantization, so an output may differ by one quantization step
 * (docs/passes.md derives the bound); the Relu rewrites are exact. Fault PC_FAULT_QDQ_ROUNDING makes the
 * Conv/MatMul rewrites requantize with a multiplier rounded to 8 fractional bits (a coarse fixed-point
 * multiplier), which moves outputs by more than a step when x_scale * w_scale / y_scale is small and the
 * outputs are not tiny. */
#include "core/passes/pass_match.h"

#define MS_DOMAIN "com.microsoft"

/* ---- quantization parameters
 * --------------------------------------------------------------------------------- */

/* The scale and zero point of a QuantizeLinear or DequantizeLinear, read from constants. */
typedef struct qparams {
    pc_value *scale, *zp;   /* zp NULL when absent */
    const pc_tensor *s, *z; /* their constant tensors (z NULL when absent) */
    pc_dtype qtype;         /* the quantized element type */
    uint64_t n;             /* scale elements */
    bool per_tensor;        /* one element, rank <= 1 */
    int32_t axis;           /* normalized axis (per-axis only) */
} qparams;

static bool is_q8(pc_dtype d)
{
    return d == PC_DTYPE_UINT8 || d == PC_DTYPE_INT8;
}

/* The element type Q produces: its zero point's, else output_dtype (opset 21), else uint8. */
static pc_dtype q_output_type(const pc_node *q)
{
    if (q->n_inputs > 2 && q->inputs[2]) return pm_elem(q->inputs[2]);
    int64_t od = pc_node_attr_int(q, "output_dtype", 0);
    return od ? (pc_dtype)od : PC_DTYPE_UINT8;
}

static double scale_at(const qparams *p, uint64_t i)
{
    double v = 0;
    pm_get_f64(p->s, p->n == 1 ? 0 : i, &v);
    return v;
}

/* Zero point element i (0 when absent; the per-tensor element for any i when there is one). */
static int64_t zp_at(const qparams *p, uint64_t i)
{
    if (!p->z) return 0;
    uint64_t k = p->z->n_elements == 1 ? 0 : i;
    const uint8_t *d = p->z->data;
    switch (p->z->dtype) {
    case PC_DTYPE_UINT8:
        return d[k];
    case PC_DTYPE_INT8:
        return (int8_t)d[k];
    case PC_DTYPE_INT32: {
        int32_t v;
        memcpy(&v, d + k * 4, 4);
        return v;
    }
    default:
        return 0;
    }
}

/* Reads the parameters of Q or DQ node n whose data input has rank data_rank (-1: unknown, then only
 * per-tensor is accepted). Scales must be constant, float, finite and > 0; zero points constant with the
 * scale's element count; block_size 0. */
static bool qparams_read(const pc_node *n, bool is_q, int32_t data_rank, qparams *p)
{
    memset(p, 0, sizeof *p);
    if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1 || !n->outputs[0])
        return false;
    if (pc_node_attr_int(n, "block_size", 0) != 0) return false;
    p->scale = n->inputs[1];
    p->zp = n->n_inputs > 2 ? n->inputs[2] : NULL;
    p->s = pc_value_const(p->scale);
    if (!p->s || p->s->dtype != PC_DTYPE_FLOAT || p->s->rank > 1 || p->s->n_elements == 0) return false;
    p->n = p->s->n_elements;
    for (uint64_t i = 0; i < p->n; i++) {
        double v = scale_at(p, i);
        if (!(v > 0) || !isfinite(v)) return false;
    }
    if (p->zp) {
        p->z = pc_value_const(p->zp);
        if (!p->z || p->z->n_elements != p->n) return false;
    }
    p->qtype = is_q ? q_output_type(n) : pm_elem(n->inputs[0]);
    if (p->z && p->z->dtype != p->qtype) return false;
    p->per_tensor = p->n == 1;
    p->axis = -1;
    if (!p->per_tensor) {
        if (data_rank < 1) return false;
        int64_t axis = pc_node_attr_int(n, "axis", 1);
        if (axis < 0) axis += data_rank;
        if (axis < 0 || axis >= data_rank) return false;
        p->axis = (int32_t)axis;
    }
    /* the float side must be float32: the rewrites compare against float arithmetic */
    const pc_value *f = is_q ? n->inputs[0] : n->outputs[0];
    return pm_elem(f) == PC_DTYPE_FLOAT;
}

/* Q's zero point is the lowest value of its type, so Q maps every x <= 0 to it and a Relu before Q changes
 * nothing (uint8 0, int8 -128; an absent zero point is uint8 0). Per tensor, as ORT's ReluQuantFusion. */
static bool zp_at_low_end(const qparams *y)
{
    if (!y->per_tensor) return false;
    int64_t zp = zp_at(y, 0);
    return (y->qtype == PC_DTYPE_UINT8 && zp == 0) || (y->qtype == PC_DTYPE_INT8 && zp == -128);
}

static bool tensors_same(const pc_tensor *a, const pc_tensor *b)
{
    if (!a || !b || a->dtype != b->dtype || a->n_elements != b->n_elements || a->n_bytes != b->n_bytes)
        return false;
    return a->n_bytes == 0 || memcmp(a->data, b->data, a->n_bytes) == 0;
}

/* Equal scale and zero point values (an absent zero point equals a zero one), type and axis. */
static bool qparams_equal(const qparams *a, const qparams *b)
{
    if (a->qtype != b->qtype || a->n != b->n || a->axis != b->axis || !tensors_same(a->s, b->s)) return false;
    for (uint64_t i = 0; i < a->n; i++)
        if (zp_at(a, i) != zp_at(b, i)) return false;
    return true;
}

/* ---- matching helpers
 * ----------------------------------------------------------------------------------------- */

/* The DequantizeLinear producing v, when this pass may fold it into a group led by `target`. */
static pc_node *dq_producer(const pc_pass_options *opts, const pc_graph *graph, const pc_value *v,
                            const pc_node *target)
{
    pc_node *dq = v ? v->producer : NULL;
    if (!dq || dq->graph != graph || !pm_is_op(dq, "DequantizeLinear") || !pc_pass_can_modify(opts, dq) ||
        !pc_nodes_fusable(dq, target))
        return NULL;
    return dq;
}

/* The node producing v when v's only use is `consumer` (so removing the consumer frees the producer). */
static pc_node *sole_producer(const pc_graph *graph, const pc_value *v, const pc_node *consumer)
{
    pc_node *p = v ? v->producer : NULL;
    if (!p || p->graph != graph || p->removed || p->n_outputs != 1 || pc_value_single_consumer(v) != consumer)
        return NULL;
    return p;
}

static int32_t data_rank(const pc_value *v)
{
    return pc_value_rank(v);
}

/* A zero scalar of type t: QLinear ops require the zero points DQ/Q may omit. */
static pc_value *zero_point_new(pc_graph *graph, pc_dtype t, pc_error *err)
{
    pc_tensor *z = pc_tensor_create(graph->model, NULL, t, 0, NULL, err);
    return z ? pc_pass_add_initializer(graph, "zero_point", z, err) : NULL;
}

static pc_value *zero_point_or_new(pc_graph *graph, const qparams *p, pc_error *err)
{
    return p->zp ? p->zp : zero_point_new(graph, p->qtype, err);
}

/* The three zero points a QLinear op takes (its two operands' and y's), each the group's own or a new zero
 * constant, which is listed in made (room for 3 more) so a refused rewrite can drop it. zp[0] NULL: out of
 * memory. */
static void zero_points_three(pc_graph *graph, const qparams *const p[3], pc_value *zp[3], pc_value **made,
                              uint32_t *n_made, pc_error *err)
{
    for (int i = 0; i < 3; i++) {
        zp[i] = zero_point_or_new(graph, p[i], err);
        if (!zp[i]) {
            zp[0] = NULL;
            return;
        }
        if (zp[i] != p[i]->zp) made[(*n_made)++] = zp[i];
    }
}

/* Fault PC_FAULT_QDQ_ROUNDING: an output scale that makes the requantization multiplier
 * m = float(x_scale * w_scale) / y_scale equal m rounded to 8 fractional bits (at least 1/256). */
static pc_value *faulty_y_scale(pc_graph *graph, const qparams *x, const qparams *w, const qparams *y,
                                pc_error *err)
{
    float xw = (float)scale_at(x, 0) * (float)scale_at(w, 0), ys = (float)scale_at(y, 0);
    double m = (double)(xw / ys), mq = nearbyint(m * 256.0) / 256.0;
    if (mq < 1.0 / 256.0) mq = 1.0 / 256.0;
    pc_tensor *t = pc_tensor_create(graph->model, NULL, PC_DTYPE_FLOAT, 0, NULL, err);
    if (!t) return NULL;
    float v = (float)((double)xw / mq);
    memcpy(t->data, &v, sizeof v);
    return pc_pass_add_initializer(graph, "y_scale", t, err);
}

/* Drops a node the EP did not claim and the constants made for it. */
static pc_status unclaimed_drop(pc_graph *graph, pc_node *n, pc_value *const *made, uint32_t n_made,
                                pc_error *err)
{
    pc_status st = pc_graph_remove_node(graph, n, err);
    for (uint32_t i = 0; st == PC_OK && i < n_made; i++)
        st = pm_drop_unused_const(graph, made[i], err);
    return st;
}

/* Adds the replacement node, keeps it only when the EP claims it, then gives it Q's output and removes what
 * is dead. *done is false when the EP refused it. */
static pc_status emit_group(pc_graph *graph, const pc_pass_options *opts, const char *op, const char *domain,
                            uint32_t n_inputs, pc_value *const *inputs, pc_value *const *made,
                            uint32_t n_made, const pc_node *source, bool conv_attrs, pc_node *q,
                            pc_node **out, pc_error *err)
{
    *out = NULL;
    pc_model *model = graph->model;
    bool imported;
    pc_status st = pc_pass_import_domain(model, domain, &imported, err);
    if (st != PC_OK) return st;
    pc_node *n = pc_pass_add_node(graph, opts, op, domain, n_inputs, inputs, 1, source, err);
    if (!n) return err->status;
    if (conv_attrs) {
        st = pm_copy_attrs(n, source, err);
        if (st != PC_OK) return st;
        /* a FusedConv source: its activation is what the group replaces */
        pc_node_remove_attr(n, "activation");
        pc_node_remove_attr(n, "activation_params");
    }
    char why[256] = "";
    if (!pc_ep_claims_node(opts->ep, n, why, sizeof why)) {
        pc_pass_unimport_domain(model, domain, imported);
        return unclaimed_drop(graph, n, made, n_made, err);
    }
    if (pc_graph_move_output(q, 0, n, 0) != PC_OK)
        return pc_error_set(err, PC_ERR_INTERNAL, "moving the output of node '%s'", pm_label(q));
    *out = n;
    return PC_OK;
}

/* ---- DQ(x), DQ(w)[, DQ(b)] -> Conv [Relu] -> Q
 * ----------------------------------------------------------------- */

typedef struct group {
    pc_node *q, *relu, *target; /* relu: a separate Relu node (NULL when none) */
    bool has_relu;              /* a Relu in the group (a node, or FusedConv's activation) */
    qparams y;
} group;

/* The Conv-like target: Conv in ai.onnx or the NHWC domain, FusedConv with activation Relu (the level-2
 * fusion runs first). Sets *base_domain to the QLinearConv's domain. */
static bool conv_target(const pc_node *n, bool *fused_relu, const char **base_domain)
{
    if (n->removed) return false;
    bool nhwc = strcmp(n->domain, PC_NHWC_DOMAIN) == 0;
    *fused_relu = false;
    *base_domain = nhwc ? PC_NHWC_DOMAIN : "";
    if (strcmp(n->op_type, "Conv") == 0) return n->domain[0] == '\0' || nhwc;
    if (strcmp(n->op_type, "FusedConv") == 0 && (nhwc || strcmp(n->domain, MS_DOMAIN) == 0)) {
        const pc_attr *p = pc_node_attr(n, "activation_params");
        *fused_relu = true;
        return strcmp(pc_node_attr_string(n, "activation", ""), "Relu") == 0 && (!p || p->n == 0);
    }
    return false;
}

static pc_status try_conv(pc_graph *graph, const pc_pass_options *opts, group *g, const char *base_domain,
                          bool *fired, pc_error *err)
{
    pc_node *conv = g->target;
    *fired = false;
    if (conv->n_inputs < 2 || conv->n_inputs > 3 || !conv->inputs[0] || !conv->inputs[1]) return PC_OK;
    if (g->has_relu && !zp_at_low_end(&g->y) && base_domain[0]) return PC_OK; /* no NHWC QLinearConvRelu */
    pc_node *dq_x = dq_producer(opts, graph, conv->inputs[0], conv),
            *dq_w = dq_producer(opts, graph, conv->inputs[1], conv);
    pc_value *b = conv->n_inputs > 2 ? conv->inputs[2] : NULL;
    pc_node *dq_b = b ? dq_producer(opts, graph, b, conv) : NULL;
    if (!dq_x || !dq_w || (b && !dq_b)) return PC_OK;
    bool as_relu = g->has_relu && !zp_at_low_end(&g->y);
    pc_rewrite_kind kind = as_relu ? PC_RW_QLINEAR_CONV_RELU : PC_RW_QLINEAR_CONV;
    int64_t wdims[PC_MAX_RANK];
    int32_t wrank = data_rank(dq_w->inputs[0]);
    if (wrank < 3 || !pc_value_dims(dq_w->inputs[0], wdims) || wdims[0] <= 0) {
        pc_pass_near_miss(opts, kind, PC_MISS_TYPE);
        return PC_OK;
    }
    int64_t m = wdims[0];
    qparams x, w, bq;
    if (!qparams_read(dq_x, false, data_rank(dq_x->inputs[0]), &x) || !x.per_tensor || !is_q8(x.qtype) ||
        !qparams_read(dq_w, false, wrank, &w) || !is_q8(w.qtype) ||
        (!w.per_tensor && (w.axis != 0 || (int64_t)w.n != m))) {
        pc_pass_near_miss(opts, kind, PC_MISS_TYPE);
        return PC_OK;
    }
    /* ORT's ConvNodeGroupSelector: x and y of one type; int8 activations only with int8 weights */
    if (x.qtype != g->y.qtype || (x.qtype == PC_DTYPE_INT8 && w.qtype != PC_DTYPE_INT8)) {
        pc_pass_near_miss(opts, kind, PC_MISS_TYPE);
        return PC_OK;
    }
    if (dq_b) {
        int64_t bdims[PC_MAX_RANK];
        if (data_rank(dq_b->inputs[0]) != 1 || !pc_value_dims(dq_b->inputs[0], bdims) || bdims[0] != m ||
            !qparams_read(dq_b, false, 1, &bq) || bq.qtype != PC_DTYPE_INT32 ||
            (!bq.per_tensor && bq.axis != 0)) {
            pc_pass_near_miss(opts, kind, PC_MISS_TYPE);
            return PC_OK;
        }
        /* QLinearConv adds B at scale x_scale * w_scale[m]: the DQ must have dequantized it at exactly that
         */
        for (int64_t k = 0; k < m; k++) {
            float want = (float)scale_at(&x, 0) * (float)scale_at(&w, (uint64_t)k);
            if (zp_at(&bq, (uint64_t)k) != 0 || (float)scale_at(&bq, (uint64_t)k) != want) {
                pc_pass_near_miss(opts, kind, PC_MISS_NOT_CONSTANT);
                return PC_OK;
            }
        }
    }
    pc_value *made[4];
    uint32_t n_made = 0;
    pc_value *zp[3];
    zero_points_three(graph, (const qparams *const[3]){&x, &w, &g->y}, zp, made, &n_made, err);
    if (!zp[0]) return err->status;
    pc_value *xz = zp[0], *wz = zp[1], *yz = zp[2];
    pc_value *ys = g->y.scale;
    if (pc_fault_active(PC_FAULT_QDQ_ROUNDING)) {
        if (!(ys = faulty_y_scale(graph, &x, &w, &g->y, err))) return err->status;
        made[n_made++] = ys;
    }
    pc_value *ins[9] = {
        dq_x->inputs[0], x.scale, xz, dq_w->inputs[0], w.scale, wz, ys, yz, dq_b ? dq_b->inputs[0] : NULL};
    const char *label = pm_label(conv);
    pc_node *n;
    pc_status st = emit_group(graph, opts, as_relu ? "QLinearConvRelu" : "QLinearConv",
                              as_relu ? MS_DOMAIN : base_domain, dq_b ? 9 : 8, ins, made, n_made, conv, true,
                              g->q, &n, err);
    if (st == PC_OK && !n) pc_pass_near_miss(opts, kind, PC_MISS_ANNOTATION); /* the EP refused it */
    if (st != PC_OK || !n) return st;
    pc_pass_note(opts, kind);
    pc_pass_explain(opts, "DQ -> %s '%s'%s -> Q '%s' -> %s '%s' on %s", conv->op_type, label,
                    g->relu ? " -> Relu" : "", pm_label(g->q), n->op_type, n->name, opts->ep->name);
    *fired = true;
    return pc_pass_remove_dead(graph, g->q, err);
}

/* ---- DQ(a), DQ(b) -> MatMul [redundant Relu] -> Q
 * --------------------------------------------------------------- */

static pc_status try_matmul(pc_graph *graph, const pc_pass_options *opts, group *g, bool *fired,
                            pc_error *err)
{
    pc_node *mm = g->target;
    *fired = false;
    if (g->has_relu && !zp_at_low_end(&g->y)) return PC_OK; /* no QLinearMatMul with a Relu */
    if (mm->n_inputs != 2 || !mm->inputs[0] || !mm->inputs[1]) return PC_OK;
    pc_node *dq_a = dq_producer(opts, graph, mm->inputs[0], mm),
            *dq_b = dq_producer(opts, graph, mm->inputs[1], mm);
    if (!dq_a || !dq_b) return PC_OK;
    int32_t brank = data_rank(dq_b->inputs[0]);
    qparams a, b;
    if (!qparams_read(dq_a, false, data_rank(dq_a->inputs[0]), &a) || !a.per_tensor || !is_q8(a.qtype) ||
        !qparams_read(dq_b, false, brank, &b) || !is_q8(b.qtype)) {
        pc_pass_near_miss(opts, PC_RW_QLINEAR_MATMUL, PC_MISS_TYPE);
        return PC_OK;
    }
    /* b per tensor, or per column (the last axis of a matrix): the scale must not vary along K */
    if (!b.per_tensor && (brank < 2 || b.axis != brank - 1)) {
        pc_pass_near_miss(opts, PC_RW_QLINEAR_MATMUL, PC_MISS_ATTRIBUTE);
        return PC_OK;
    }
    if (a.qtype != g->y.qtype || (a.qtype == PC_DTYPE_INT8 && b.qtype != PC_DTYPE_INT8)) {
        pc_pass_near_miss(opts, PC_RW_QLINEAR_MATMUL, PC_MISS_TYPE);
        return PC_OK;
    }
    pc_value *made[4];
    uint32_t n_made = 0;
    pc_value *zp[3];
    zero_points_three(graph, (const qparams *const[3]){&a, &b, &g->y}, zp, made, &n_made, err);
    if (!zp[0]) return err->status;
    pc_value *az = zp[0], *bz = zp[1], *yz = zp[2];
    pc_value *ys = g->y.scale;
    if (pc_fault_active(PC_FAULT_QDQ_ROUNDING)) {
        if (!(ys = faulty_y_scale(graph, &a, &b, &g->y, err))) return err->status;
        made[n_made++] = ys;
    }
    pc_value *ins[8] = {dq_a->inputs[0], a.scale, az, dq_b->inputs[0], b.scale, bz, ys, yz};
    const char *label = pm_label(mm);
    pc_node *n;
    pc_status st =
        emit_group(graph, opts, "QLinearMatMul", "", 8, ins, made, n_made, mm, false, g->q, &n, err);
    if (st == PC_OK && !n) pc_pass_near_miss(opts, PC_RW_QLINEAR_MATMUL, PC_MISS_ANNOTATION);
    if (st != PC_OK || !n) return st;
    pc_pass_note(opts, PC_RW_QLINEAR_MATMUL);
    pc_pass_explain(opts, "DQ -> MatMul '%s'%s -> Q '%s' -> QLinearMatMul '%s' on %s", label,
                    g->relu ? " -> Relu" : "", pm_label(g->q), n->name, opts->ep->name);
    *fired = true;
    return pc_pass_remove_dead(graph, g->q, err);
}

/* ---- DQ(a), DQ(b) -> Add [redundant Relu] -> Q
 * ------------------------------------------------------------------ */

/* ORT's BinaryNodeGroupSelector for Add: a, b and y per tensor and of one 8-bit type. Exact: QLinearAdd is
 * defined by the same float steps (docs/reference.md), and a float sum of two floats rounded through double
 * is the float sum. */
static pc_status try_add(pc_graph *graph, const pc_pass_options *opts, group *g, bool *fired, pc_error *err)
{
    pc_node *add = g->target;
    *fired = false;
    if (g->has_relu && !zp_at_low_end(&g->y)) return PC_OK;
    if (add->n_inputs != 2 || !add->inputs[0] || !add->inputs[1]) return PC_OK;
    pc_node *dq_a = dq_producer(opts, graph, add->inputs[0], add),
            *dq_b = dq_producer(opts, graph, add->inputs[1], add);
    if (!dq_a || !dq_b) return PC_OK;
    qparams a, b;
    if (!qparams_read(dq_a, false, data_rank(dq_a->inputs[0]), &a) ||
        !qparams_read(dq_b, false, data_rank(dq_b->inputs[0]), &b) || !a.per_tensor || !b.per_tensor ||
        !g->y.per_tensor || !is_q8(a.qtype) || a.qtype != b.qtype || a.qtype != g->y.qtype) {
        pc_pass_near_miss(opts, PC_RW_QLINEAR_ADD, PC_MISS_TYPE);
        return PC_OK;
    }
    pc_value *made[3];
    uint32_t n_made = 0;
    pc_value *zp[3];
    zero_points_three(graph, (const qparams *const[3]){&a, &b, &g->y}, zp, made, &n_made, err);
    if (!zp[0]) return err->status;
    pc_value *az = zp[0], *bz = zp[1], *yz = zp[2];
    pc_value *ins[8] = {dq_a->inputs[0], a.scale, az, dq_b->inputs[0], b.scale, bz, g->y.scale, yz};
    const char *label = pm_label(add);
    pc_node *n;
    pc_status st =
        emit_group(graph, opts, "QLinearAdd", MS_DOMAIN, 8, ins, made, n_made, add, false, g->q, &n, err);
    if (st == PC_OK && !n) pc_pass_near_miss(opts, PC_RW_QLINEAR_ADD, PC_MISS_ANNOTATION);
    if (st != PC_OK || !n) return st;
    pc_pass_note(opts, PC_RW_QLINEAR_ADD);
    pc_pass_explain(opts, "DQ, DQ -> Add '%s'%s -> Q '%s' -> QLinearAdd '%s' on %s", label,
                    g->relu ? " -> Relu" : "", pm_label(g->q), n->name, opts->ep->name);
    *fired = true;
    return pc_pass_remove_dead(graph, g->q, err);
}

/* ---- Relu rules
 * ------------------------------------------------------------------------------------------------- */

/* DQ -> Relu -> Q with equal parameters is max(q, zero point) on the quantized values: nothing at all when
 * the zero point is the type's low end, QLinearConvRelu when the quantized value comes from a QLinearConv
 * with the same output parameters. */
/* Whether the EP would run an Identity reading x (made from q, then removed again). */
static pc_status identity_claimed(pc_graph *graph, const pc_pass_options *opts, pc_value *x, const pc_node *q,
                                  bool *claimed, pc_error *err)
{
    pc_node *id = pc_pass_add_node(graph, opts, "Identity", "", 1, &x, 1, q, err);
    if (!id) return err->status;
    *claimed = pc_ep_claims_node(opts->ep, id, NULL, 0);
    return pc_graph_remove_node(graph, id, err);
}

/* Q's consumers may read x instead of Q's output without touching another EP's node: a graph output (or
 * outer-scope) value must then come from an Identity the EP runs, or from x's producer taking it over, which
 * must be ours to change. */
static pc_status replaceable(pc_graph *graph, const pc_pass_options *opts, pc_node *q, pc_value *x, bool *ok,
                             pc_error *err)
{
    const pc_value *out = q->outputs[0];
    *ok = true;
    if (!out->is_graph_output && !out->n_subgraph_refs) return PC_OK;
    if (x->producer && !pc_pass_can_modify(opts, x->producer)) {
        *ok = false;
        return PC_OK;
    }
    return identity_claimed(graph, opts, x, q, ok, err);
}

/* DQ -> Relu -> Q with equal per-tensor parameters, not after a QLinearConv: the systolic EP's QLinearRelu,
 * max(x, zero point) (the fork's op took x alone and assumed a zero point of 0; the optional second input
 * here carries it). Only where the EP claims QLinearRelu. */
static pc_status try_qlinear_relu(pc_graph *graph, const pc_pass_options *opts, group *g, pc_node *dq,
                                  const qparams *d, bool *fired, pc_error *err)
{
    if (!d->per_tensor) return PC_OK;
    pc_value *ins[2] = {dq->inputs[0], d->zp};
    pc_node *n;
    pc_status st = emit_group(graph, opts, "QLinearRelu", PC_SYSTOLIC_DOMAIN, d->zp ? 2 : 1, ins, NULL, 0,
                              g->relu, false, g->q, &n, err);
    if (st == PC_OK && !n) pc_pass_near_miss(opts, PC_RW_QLINEAR_RELU, PC_MISS_ANNOTATION); /* refused */
    if (st != PC_OK || !n) return st;
    pc_pass_note(opts, PC_RW_QLINEAR_RELU);
    pc_pass_explain(opts, "DQ '%s' -> Relu -> Q '%s' -> QLinearRelu '%s' on %s", pm_label(dq), pm_label(g->q),
                    n->name, opts->ep->name);
    *fired = true;
    return pc_pass_remove_dead(graph, g->q, err);
}

static pc_status try_dq_relu_q(pc_graph *graph, const pc_pass_options *opts, group *g, bool *fired,
                               bool *blocked, pc_error *err)
{
    *fired = *blocked = false;
    pc_node *relu = g->relu;
    /* the DQ may have other consumers: it stays for them (leaving DQ -> Q behind would undo idempotence) */
    pc_node *dq = relu->inputs[0] ? relu->inputs[0]->producer : NULL;
    if (!dq || dq->graph != graph || !pm_is_op(dq, "DequantizeLinear") || !pc_pass_can_modify(opts, dq) ||
        !pc_nodes_fusable(dq, relu))
        return PC_OK;
    qparams d;
    if (!qparams_read(dq, false, data_rank(dq->inputs[0]), &d) || !is_q8(d.qtype) ||
        !qparams_equal(&d, &g->y))
        return PC_OK;
    const char *ql = pm_label(g->q), *dql = pm_label(dq);
    if (zp_at_low_end(&g->y)) {
        bool ok, added = false;
        pc_status st = replaceable(graph, opts, g->q, dq->inputs[0], &ok, err);
        if (st != PC_OK) return st;
        if (!ok) {
            /* dropping only the Relu would leave DQ -> Q, which remove_dq_q undoes on the next run */
            pc_pass_near_miss(opts, PC_RW_DQ_RELU_Q_REMOVED, PC_MISS_SHARED);
            *blocked = true;
            return PC_OK;
        }
        st = pm_replace_output(graph, opts, g->q, 0, dq->inputs[0], &added, err);
        if (st != PC_OK) return st;
        pc_pass_explain(
            opts, "removed DQ '%s' -> Relu -> Q '%s' (equal parameters, zero point at the low end)", dql, ql);
        pc_pass_note(opts, PC_RW_DQ_RELU_Q_REMOVED);
        *fired = true;
        return PC_OK;
    }
    pc_node *qc =
        pc_value_single_consumer(dq->outputs[0]) == relu ? sole_producer(graph, dq->inputs[0], dq) : NULL;
    if (!qc || !pm_is_op(qc, "QLinearConv") || qc->n_inputs < 8 || !pc_pass_can_modify(opts, qc) ||
        !pc_nodes_fusable(qc, dq))
        return try_qlinear_relu(graph, opts, g, dq, &d, fired, err);
    const pc_tensor *qs = pc_value_const(qc->inputs[6]), *qz = pc_value_const(qc->inputs[7]);
    if (!qs || !qz || !tensors_same(qs, d.s) || qz->n_elements != 1 || qz->dtype != d.qtype)
        return try_qlinear_relu(graph, opts, g, dq, &d, fired, err);
    qparams qcy = d;
    qcy.z = qz;
    if (zp_at(&qcy, 0) != zp_at(&d, 0)) return try_qlinear_relu(graph, opts, g, dq, &d, fired, err);
    const char *label = pm_label(qc);
    pc_node *n;
    pc_status st = emit_group(graph, opts, "QLinearConvRelu", MS_DOMAIN, qc->n_inputs, qc->inputs, NULL, 0,
                              qc, true, g->q, &n, err);
    if (st == PC_OK && !n) pc_pass_near_miss(opts, PC_RW_QLINEAR_CONV_RELU, PC_MISS_ANNOTATION);
    if (st != PC_OK || !n) return st;
    pc_pass_note(opts, PC_RW_QLINEAR_CONV_RELU);
    pc_pass_explain(opts, "QLinearConv '%s' -> DQ '%s' -> Relu -> Q '%s' -> QLinearConvRelu '%s' on %s",
                    label, dql, ql, n->name, opts->ep->name);
    *fired = true;
    return pc_pass_remove_dead(graph, g->q, err);
}

/* Relu -> Q with Q's zero point at the low end: Q reads the Relu's input (ORT's ReluQuantFusion). */
static pc_status relu_drop(pc_graph *graph, const pc_pass_options *opts, group *g, pc_error *err)
{
    pc_status st = pc_node_set_input(g->q, 0, g->relu->inputs[0], err);
    if (st != PC_OK) return st;
    pc_pass_explain(opts, "removed Relu '%s' before QuantizeLinear '%s' (zero point at the low end)",
                    pm_label(g->relu), pm_label(g->q));
    pc_pass_note(opts, PC_RW_RELU_Q_DROPPED);
    return pc_pass_remove_dead(graph, g->relu, err);
}

/* ---- the pass
 * ----------------------------------------------------------------------------------------------------- */

static pc_status visit_q(pc_graph *graph, const pc_pass_options *opts, pc_node *q, bool *changed,
                         pc_error *err)
{
    group g = {.q = q};
    if (!pm_is_op(q, "QuantizeLinear") || !pc_pass_can_modify(opts, q) ||
        !qparams_read(q, true, data_rank(q->inputs[0]), &g.y) || !g.y.per_tensor || !is_q8(g.y.qtype))
        return PC_OK;
    pc_node *p = sole_producer(graph, q->inputs[0], q);
    if (!p || !pc_pass_can_modify(opts, p) || !pc_nodes_fusable(p, q)) return PC_OK;
    if (pm_is_op(p, "Relu")) {
        g.relu = p;
        g.has_relu = true;
        p = sole_producer(graph, p->inputs[0], p);
        if (p && (!pc_pass_can_modify(opts, p) || !pc_nodes_fusable(p, q))) p = NULL;
    }
    bool fired = false, fused_relu = false;
    const char *base_domain = "";
    pc_status st = PC_OK;
    if (p && conv_target(p, &fused_relu, &base_domain) && !(fused_relu && g.relu)) {
        g.target = p;
        g.has_relu |= fused_relu;
        st = try_conv(graph, opts, &g, base_domain, &fired, err);
    } else if (p && pm_is_op(p, "MatMul")) {
        g.target = p;
        st = try_matmul(graph, opts, &g, &fired, err);
    } else if (p && pm_is_op(p, "Add")) {
        g.target = p;
        st = try_add(graph, opts, &g, &fired, err);
    }
    if (st == PC_OK && !fired && g.relu) {
        bool blocked = false;
        st = try_dq_relu_q(graph, opts, &g, &fired, &blocked, err);
        if (st == PC_OK && !fired && !blocked && zp_at_low_end(&g.y)) {
            st = relu_drop(graph, opts, &g, err);
            fired = st == PC_OK;
        }
    }
    if (fired) *changed = true;
    return st;
}

pc_status pc_pass_fuse_qdq_qlinear(pc_graph *graph, const pc_pass_options *opts, bool *changed, pc_error *err)
{
    *changed = false;
    if (!opts || !opts->ep) return PC_OK; /* which EP would run the QLinear ops is unknown: nothing to do */
    pm_nodes nodes;
    pc_status st = pm_nodes_snapshot(graph, &nodes, err);
    for (uint32_t i = 0; st == PC_OK && i < nodes.n; i++)
        if (!nodes.items[i]->removed) st = visit_q(graph, opts, nodes.items[i], changed, err);
    pm_nodes_free(&nodes);
    if (st == PC_OK && *changed) st = pc_graph_sort(graph, err);
    return st;
}
