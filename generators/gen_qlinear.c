/* The `qlinear` family: graphs as the Systolic quantizer (and ORT's quantize_static in QOperator mode) writes
 * them: QuantizeLinear at the float input, then ops on quantized tensors — QLinearConv (uint8 or int8
 * activations, int8 weights per tensor or per output channel, optional int32 bias), QLinearMatMul (int8
 * weights per tensor or per column) and QLinearRelu — and DequantizeLinear at the outputs.
 *
 * QLinearRelu: the Systolic quantizer emits a custom QLinearRelu op, which neither ONNX nor ONNX Runtime
 * defines. Its meaning is Relu on the quantized values with the input's parameters, i.e. max(q, zero point),
 * which this family writes as DequantizeLinear -> Relu -> QuantizeLinear with equal parameters: standard ops,
 * so the graph also runs on ONNX Runtime for the external oracle, and it is exactly the input
 * fuse_qdq_qlinear turns into com.microsoft QLinearConvRelu when a QLinearConv feeds it (the reference's
 * internal op). Generating QLinearConvRelu directly would skip the rewrite the family is there to exercise.
 *
 * Units (index 0 the simplest): 0 QLinearConv, 1 QLinearMatMul, 2 QLinearRelu-style, 3 DQ to a float output,
 * 4 a new float input quantized, 5 com.microsoft QLinearAdd (ORT's contrib op, which its quantizer writes).
 * The graph starts from a quantized graph input (index 0; the all-zero sequence is one QLinearConv on a [1,
 * 1, 1] uint8 input) or a quantized float input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "generators/gen_quant.h"

static double mag_of(double lo, double hi)
{
    return fmax(fabs(lo), fabs(hi));
}

static bool accept_conv_input(const pc_genq_value *v, const void *ctx)
{
    (void)ctx;
    return v->axis < 0 && (v->rank == 3 || v->rank == 4);
}

static bool accept_matmul_input(const pc_genq_value *v, const void *ctx)
{
    (void)ctx;
    return v->axis < 0 && v->rank >= 1 && v->rank <= 3;
}

static bool accept_per_tensor(const pc_genq_value *v, const void *ctx)
{
    (void)ctx;
    return v->axis < 0;
}

/* A new input of the given rank: a quantized graph input (draw 0) or a float input and its QuantizeLinear. */
static pc_status new_input(pc_genq *s, int32_t rank, pc_genq_value **out, pc_error *err)
{
    int64_t dims[PC_MAX_RANK];
    if (rank > s->g->cfg->max_rank) rank = s->g->cfg->max_rank;
    pc_genq_draw_dims(s, rank, 1, 1, dims);
    bool from_float = pc_draw_bool(s->g->ch, 60) && pc_genq_budget(s) > 1;
    pc_genq_params p;
    pc_status st;
    if (!from_float) {
        if ((st = pc_genq_params_draw(s, PC_DTYPE_UNDEFINED, -1, 1, 1.0, &p, err)) == PC_OK)
            st = pc_genq_input(s, rank, dims, &p, out, err);
    } else {
        pc_gen_value *x = pc_genq_float_input(s, rank, dims, err);
        if (!x) return err->status;
        if ((st = pc_genq_params_draw(s, PC_DTYPE_UNDEFINED, -1, 1, mag_of(x->lo, x->hi), &p, err)) == PC_OK)
            st = pc_genq_quantize(s, x->value, x->lo, x->hi, &p, out, err);
    }
    pc_genq_params_free(&p);
    return st;
}

/* A pooled value `accept` takes, or a new input of a rank in [min_rank, max_rank]. */
static pc_status pick_or_new(pc_genq *s, pc_genq_accept_fn accept, int32_t min_rank, int32_t max_rank,
                             pc_genq_value **out, pc_error *err)
{
    *out = pc_draw_bool(s->g->ch, 10) ? NULL : pc_genq_pick(s, accept, NULL);
    if (*out) return PC_OK;
    return new_input(s, (int32_t)pc_draw_range(s->g->ch, min_rank, max_rank), out, err);
}

/* Output parameters of a QLinear op: the input's type (ORT's kernels pair them), scale for magnitude `mag`;
 * registers y with its interval. */
static pc_status qlinear_output(pc_genq *s, pc_node *n, const pc_genq_params *yp, pc_value *ys, pc_value *yz,
                                double bound, double lo, pc_error *err)
{
    pc_genq_value *out;
    pc_status st = pc_gen_node_end(s->g, n, -INFINITY, INFINITY, err);
    if (st != PC_OK) return st;
    if ((st = pc_genq_register(s, n->outputs[0], ys, yz, yp, &out, err)) != PC_OK) return st;
    pc_genq_interval(yp, lo, bound, &out->lo, &out->hi);
    return PC_OK;
}

/* Scale and zero point initializers of per-tensor parameters p. */
static pc_status scalar_params(pc_genq *s, const pc_genq_params *p, pc_value **scale, pc_value **zp,
                               pc_error *err)
{
    pc_gen_value *sv = pc_gen_const_f32(s->g, PC_DTYPE_FLOAT, 0, NULL, p->scales, err);
    if (!sv) return err->status;
    *scale = sv->value; /* before the next constant: pool entries move when the pool grows */
    pc_gen_value *zv = pc_gen_const_i64(s->g, p->type, 0, NULL, p->zps, err);
    if (!zv) return err->status;
    *zp = zv->value;
    return PC_OK;
}

/* 0: QLinearConv(x, w int8 [, int32 bias]) */
static pc_status unit_qconv(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 2) return PC_OK;
    pc_genq_value *v;
    pc_status st = pick_or_new(s, accept_conv_input, 3, 4, &v, err);
    if (st != PC_OK || !v) return st;
    pc_genq_conv c;
    if (v->rank < 3 || !pc_genq_conv_draw(s, v, &c))
        return PC_OK; /* rank < 3: cfg->max_rank forbids a Conv */
    bool per_axis = c.m > 1 && pc_draw_bool(s->g->ch, 50);
    pc_genq_value w;
    pc_genq_params wp, yp = {0};
    if ((st = pc_genq_weights(s, PC_DTYPE_INT8, c.rank, c.w_dims, 0, per_axis ? (uint32_t)c.m : 1, &w, &wp,
                              err)) != PC_OK)
        return st;
    double amax = mag_of(v->lo, v->hi), wmax = mag_of(w.lo, w.hi), bmag = 0;
    pc_value *b = NULL;
    if (pc_draw_bool(s->g->ch, 50) && !(b = pc_genq_bias(s, c.m, pc_genq_scale0(v), w.s_max, &bmag, err))) {
        st = err->status;
        goto done;
    }
    double bound = (double)c.kelems * amax * wmax + bmag;
    double typical = sqrt((double)c.kelems) * amax * wmax * 0.5 + bmag;
    pc_value *ys = NULL, *yz = NULL;
    if ((st = pc_genq_params_draw(s, v->type, -1, 1, typical, &yp, err)) != PC_OK ||
        (st = scalar_params(s, &yp, &ys, &yz, err)) != PC_OK)
        goto done;
    pc_value *ins[9] = {v->q, v->scale, v->zp, w.q, w.scale, w.zp, ys, yz, b};
    pc_node *n = pc_gen_node_begin(s->g, "QLinearConv", "", b ? 9 : 8, ins, 1, err);
    if (!n || pc_genq_conv_attrs(&c, n, err) != PC_OK) {
        st = err->status;
        goto done;
    }
    st = qlinear_output(s, n, &yp, ys, yz, bound, -bound, err);
done:
    pc_genq_params_free(&wp);
    pc_genq_params_free(&yp);
    return st;
}

/* 1: QLinearMatMul(a, b int8 [K, N]) */
static pc_status unit_qmatmul(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 2) return PC_OK;
    pc_genq_value *v;
    pc_status st = pick_or_new(s, accept_matmul_input, 1, 3, &v, err);
    if (st != PC_OK || !v) return st;
    int64_t kdim = v->dims[v->rank - 1], n = pc_draw_range(s->g->ch, 1, 4);
    int64_t out_dims[PC_MAX_RANK], wdims[2] = {kdim, n};
    memcpy(out_dims, v->dims, sizeof out_dims);
    out_dims[v->rank - 1] = n;
    if (!pc_gen_shape_fits(s->g, v->rank, out_dims) || !pc_gen_shape_fits(s->g, 2, wdims)) return PC_OK;
    bool per_axis = n > 1 && pc_draw_bool(s->g->ch, 50);
    pc_genq_value w;
    pc_genq_params wp, yp = {0};
    if ((st = pc_genq_weights(s, PC_DTYPE_INT8, 2, wdims, 1, per_axis ? (uint32_t)n : 1, &w, &wp, err)) !=
        PC_OK)
        return st;
    double amax = mag_of(v->lo, v->hi), wmax = mag_of(w.lo, w.hi), bound = (double)kdim * amax * wmax;
    pc_value *ys = NULL, *yz = NULL;
    if ((st = pc_genq_params_draw(s, v->type, -1, 1, sqrt((double)kdim) * amax * wmax * 0.5, &yp, err)) !=
            PC_OK ||
        (st = scalar_params(s, &yp, &ys, &yz, err)) != PC_OK)
        goto done;
    pc_value *ins[8] = {v->q, v->scale, v->zp, w.q, w.scale, w.zp, ys, yz};
    pc_node *node = pc_gen_node_begin(s->g, "QLinearMatMul", "", 8, ins, 1, err);
    if (!node) {
        st = err->status;
        goto done;
    }
    st = qlinear_output(s, node, &yp, ys, yz, bound, -bound, err);
done:
    pc_genq_params_free(&wp);
    pc_genq_params_free(&yp);
    return st;
}

/* 2: QLinearRelu-style: DQ -> Relu -> Q with the input's parameters (shared initializers) */
static pc_status unit_qrelu(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 4 || s->n == 0) return PC_OK;
    pc_genq_value *v = pc_genq_pick(s, accept_per_tensor, NULL);
    if (!v) return PC_OK;
    pc_value *x;
    pc_status st = pc_genq_dequantize(s, v, false, &x, err);
    if (st != PC_OK) return st;
    double lo = fmax(v->lo, 0.0), hi = fmax(v->hi, 0.0);
    pc_node *relu = pc_gen_node_begin(s->g, "Relu", "", 1, &x, 1, err);
    if (!relu || pc_gen_node_end(s->g, relu, lo, hi, err) != PC_OK) return err->status;
    pc_genq_value *out;
    return pc_genq_quantize_like(s, relu->outputs[0], lo, hi, v, &out, err);
}

/* b may be added to a (the accept context): per tensor, a's type and rank, each dim equal or 1 in one of them
 */
static bool accept_addend(const pc_genq_value *v, const void *ctx)
{
    const pc_genq_value *a = ctx;
    if (v->axis >= 0 || v->type != a->type || v->rank != a->rank) return false;
    for (int32_t i = 0; i < v->rank; i++)
        if (v->dims[i] != a->dims[i] && v->dims[i] != 1 && a->dims[i] != 1) return false;
    return true;
}

/* 5: com.microsoft QLinearAdd(a, b), as ORT's QOperator quantizer writes a residual add: one 8-bit type, per
 * tensor, b broadcasting with a (on the systolic EP, two conv outputs it may carry in NHWC) */
static pc_status unit_qadd(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 1 || s->n == 0) return PC_OK;
    pc_genq_value *a = pc_genq_pick(s, accept_per_tensor, NULL);
    pc_genq_value *b = a ? pc_genq_pick(s, accept_addend, a) : NULL;
    if (!b) return PC_OK;
    int64_t dims[PC_MAX_RANK];
    for (int32_t i = 0; i < a->rank; i++)
        dims[i] = a->dims[i] > b->dims[i] ? a->dims[i] : b->dims[i];
    if (!pc_gen_shape_fits(s->g, a->rank, dims)) return PC_OK;
    double lo = a->lo + b->lo, hi = a->hi + b->hi;
    pc_value *ins[8] = {a->q, a->scale, a->zp, b->q, b->scale, b->zp, NULL, NULL};
    pc_genq_params yp;
    pc_status st = pc_genq_params_draw(s, a->type, -1, 1, mag_of(lo, hi), &yp, err);
    if (st == PC_OK && pc_model_opset(s->g->model, PC_MS_DOMAIN) < 0)
        st = pc_model_set_opset(s->g->model, PC_MS_DOMAIN, 1, err);
    if (st == PC_OK) st = scalar_params(s, &yp, &ins[6], &ins[7], err);
    pc_node *n = st == PC_OK ? pc_gen_node_begin(s->g, "QLinearAdd", PC_MS_DOMAIN, 8, ins, 1, err) : NULL;
    if (st == PC_OK) st = n ? qlinear_output(s, n, &yp, ins[6], ins[7], hi, lo, err) : err->status;
    pc_genq_params_free(&yp);
    return st;
}

/* 3: DQ -> a float graph output */
static pc_status unit_dq_output(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 1 || s->n == 0) return PC_OK;
    pc_value *x;
    return pc_genq_dequantize(s, pc_genq_pick(s, NULL, NULL), false, &x, err);
}

/* 4: a new input (quantized, or float and quantized) */
static pc_status unit_input(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 1) return PC_OK;
    pc_genq_value *v;
    return new_input(s, (int32_t)pc_draw_range(s->g->ch, 1, 4), &v, err);
}

typedef pc_status (*unit_fn)(pc_genq *s, pc_error *err);

static const unit_fn units[] = {unit_qconv, unit_qmatmul, unit_qrelu, unit_dq_output, unit_input, unit_qadd};
static const uint32_t unit_weights[] = {30, 20, 20, 15, 5, 15};

pc_status pc_gen_qlinear(pc_gen *g, pc_error *err)
{
    pc_genq s = {.g = g};
    /* the first unit always runs: the all-zero sequence is one QLinearConv */
    pc_status st = PC_OK;
    do {
        uint32_t k = pc_draw_weighted(g->ch, unit_weights, sizeof units / sizeof units[0]);
        st = units[k](&s, err);
    } while (st == PC_OK && pc_gen_continue(g));
    /* a graph needs a node: when the draws made none (a unit found nothing to do), one QLinearConv */
    if (st == PC_OK && g->n_ops == 0) st = unit_qconv(&s, err);
    if (st == PC_OK && g->n_ops == 0) st = unit_qmatmul(&s, err);
    if (st == PC_OK && g->n_ops == 0) {
        /* nothing fits the configuration's element cap: dequantize an input */
        pc_genq_value *v;
        if (s.n == 0) st = new_input(&s, 1, &v, err);
        if (st == PC_OK && g->n_ops == 0) st = unit_dq_output(&s, err);
    }
    pc_genq_free(&s);
    return st;
}
