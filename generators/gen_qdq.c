/* The `qdq` family: float graphs in QDQ form, as a static quantizer (ORT's quantize_static in QDQ mode)
 * writes them: every float activation between ops is DequantizeLinear(QuantizeLinear(x)), weights are int8
 * constants read through DequantizeLinear (per tensor or per output channel), Conv biases are int32 constants
 * read through DequantizeLinear at scale x_scale * w_scale, and the float ops sit between a DQ per input and
 * one Q.
 *
 * Units (one draw picks the next; index 0 is the simplest):
 * - 0 unary: DQ -> Relu | Sigmoid -> Q (equal parameters, new ones, or equal ones in the other 8-bit type)
 * - 1 conv: DQ(x), DQ(w)[, DQ(b)] -> Conv [-> Relu] -> Q
 * - 2 matmul: DQ(x), DQ(w) -> MatMul -> Q
 * - 3 binary: DQ(a), DQ(b) -> Add | Mul -> Q
 * - 4 concat: DQ(a), DQ(b) -> Concat -> Q
 * - 5 move: DQ -> Reshape | Transpose | MaxPool -> Q (equal parameters: ORT's drop-QDQ form, or new ones)
 * - 6 requant: DQ -> Q with equal parameters (shared or copied initializers: remove_dq_q must fire) or
 *   different ones (scale, zero point, type alone, per-axis: it must not)
 * - 7 output: DQ -> a float graph output
 * A unit without a fitting quantized value makes a new float input and quantizes it (growing backward). The
 * first node is always QuantizeLinear of a float input: the all-zero sequence is that one node.
 *
 * Values stay bounded: each Q's scale is drawn around the magnitude its input is expected to have (so outputs
 * use many levels, with saturation at the edges only), and the pool tracks the interval of every dequantized
 * value. The shared helpers (gen_quant.h) also serve the qlinear family. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "generators/gen_quant.h"

/* ---- shared helpers (gen_quant.h)
 * ------------------------------------------------------------------------------ */

static void type_range(pc_dtype t, int64_t *lo, int64_t *hi)
{
    *lo = t == PC_DTYPE_INT8 ? -128 : 0;
    *hi = t == PC_DTYPE_INT8 ? 127 : 255;
}

void pc_genq_free(pc_genq *s)
{
    free(s->items);
    s->items = NULL;
    s->n = s->cap = 0;
}

uint32_t pc_genq_budget(const pc_genq *s)
{
    return s->g->n_ops < s->g->cfg->max_nodes ? s->g->cfg->max_nodes - s->g->n_ops : 0;
}

void pc_genq_params_free(pc_genq_params *p)
{
    free(p->scales);
    free(p->zps);
    p->scales = NULL;
    p->zps = NULL;
}

static pc_status params_alloc(pc_genq_params *p, uint32_t n, pc_error *err)
{
    p->n = n;
    p->scales = calloc(n ? n : 1, sizeof *p->scales);
    p->zps = calloc(n ? n : 1, sizeof *p->zps);
    if (!p->scales || !p->zps) {
        pc_genq_params_free(p);
        return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (quantization parameters)");
    }
    return PC_OK;
}

/* Scale factors relative to the fitted scale: index 0 is not used (scale 1.0); the others give a mix of
 * levels used and a little saturation, and multipliers far from powers of two (so requantization rounding
 * matters). */
static const double scale_factors[] = {1.0, 1.0, 0.61, 1.7, 0.37, 1.13, 2.9, 0.83};

static float draw_scale(pc_genq *s, double mag, pc_dtype t)
{
    uint32_t k = pc_draw(s->g->ch, sizeof scale_factors / sizeof scale_factors[0]);
    if (k == 0) return 1.0f;
    if (!(mag > 1e-3)) mag = 1e-3;
    /* the magnitude should span about 100 of uint8's 255 steps or int8's 127 */
    double fit = mag / (t == PC_DTYPE_INT8 ? 60.0 : 100.0);
    float v = (float)(fit * scale_factors[k]);
    return v > 1e-6f ? v : 1e-6f;
}

static int64_t draw_zero_point(pc_genq *s, pc_dtype t)
{
    int64_t lo, hi;
    type_range(t, &lo, &hi);
    switch (pc_draw(s->g->ch, 4)) {
    case 0:
        return 0;
    case 1:
        return t == PC_DTYPE_INT8 ? -128 : 128; /* int8: the low end; uint8: the middle */
    case 2:
        return t == PC_DTYPE_INT8 ? 10 : 30;
    default:
        return pc_draw_range(s->g->ch, lo, hi);
    }
}

pc_status pc_genq_params_draw(pc_genq *s, pc_dtype type, int32_t axis, uint32_t n, double mag,
                              pc_genq_params *p, pc_error *err)
{
    memset(p, 0, sizeof *p);
    p->type = type != PC_DTYPE_UNDEFINED ? type : pc_draw(s->g->ch, 2) ? PC_DTYPE_INT8 : PC_DTYPE_UINT8;
    p->axis = n > 1 ? axis : -1;
    pc_status st = params_alloc(p, n ? n : 1, err);
    if (st != PC_OK) return st;
    for (uint32_t i = 0; i < p->n; i++) {
        p->scales[i] = draw_scale(s, mag, p->type);
        p->zps[i] = draw_zero_point(s, p->type);
    }
    return PC_OK;
}

pc_status pc_genq_params_of(const pc_genq_value *v, pc_genq_params *p, pc_error *err)
{
    memset(p, 0, sizeof *p);
    const pc_tensor *ts = v->scale->initializer, *tz = v->zp->initializer;
    pc_status st = params_alloc(p, (uint32_t)ts->n_elements, err);
    if (st != PC_OK) return st;
    p->type = v->type;
    p->axis = v->axis;
    for (uint32_t i = 0; i < p->n; i++) {
        memcpy(&p->scales[i], (const uint8_t *)ts->data + 4 * i, 4);
        p->zps[i] = v->type == PC_DTYPE_INT8 ? ((const int8_t *)tz->data)[i] : ((const uint8_t *)tz->data)[i];
    }
    return PC_OK;
}

void pc_genq_interval(const pc_genq_params *p, double lo, double hi, double *dlo, double *dhi)
{
    int64_t tlo, thi;
    type_range(p->type, &tlo, &thi);
    *dlo = INFINITY;
    *dhi = -INFINITY;
    for (uint32_t i = 0; i < p->n; i++) {
        double sc = p->scales[i];
        double qlo = fmin(fmax(nearbyint(lo / sc) + (double)p->zps[i], (double)tlo), (double)thi);
        double qhi = fmin(fmax(nearbyint(hi / sc) + (double)p->zps[i], (double)tlo), (double)thi);
        *dlo = fmin(*dlo, (qlo - (double)p->zps[i]) * sc);
        *dhi = fmax(*dhi, (qhi - (double)p->zps[i]) * sc);
    }
}

static pc_genq_value *pool_push(pc_genq *s, pc_error *err)
{
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        pc_genq_value *p = realloc(s->items, (size_t)cap * sizeof *p);
        if (!p) return pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (quantized pool)"), NULL;
        s->items = p;
        s->cap = cap;
    }
    pc_genq_value *v = &s->items[s->n++];
    memset(v, 0, sizeof *v);
    return v;
}

/* Scale and zero point initializers for p: scalars per tensor, 1-D per axis. */
static pc_status params_consts(pc_genq *s, const pc_genq_params *p, pc_value **scale, pc_value **zp,
                               pc_error *err)
{
    int64_t dim = p->n;
    int32_t rank = p->axis >= 0 ? 1 : 0;
    /* pool entries move when the pool grows: keep the values, not the entries */
    pc_gen_value *sv = pc_gen_const_f32(s->g, PC_DTYPE_FLOAT, rank, &dim, p->scales, err);
    if (!sv) return err->status;
    *scale = sv->value;
    pc_gen_value *zv = pc_gen_const_i64(s->g, p->type, rank, &dim, p->zps, err);
    if (!zv) return err->status;
    *zp = zv->value;
    return PC_OK;
}

pc_status pc_genq_register(pc_genq *s, pc_value *q, pc_value *scale, pc_value *zp, const pc_genq_params *p,
                           pc_genq_value **out, pc_error *err)
{
    pc_genq_value *v = pool_push(s, err);
    if (!v) return err->status;
    v->q = q;
    v->scale = scale;
    v->zp = zp;
    v->type = p->type;
    v->axis = p->axis;
    v->zp_lo = INT64_MAX;
    v->zp_hi = INT64_MIN;
    for (uint32_t i = 0; i < p->n; i++) {
        v->s_max = fmaxf(v->s_max, p->scales[i]);
        v->zp_lo = p->zps[i] < v->zp_lo ? p->zps[i] : v->zp_lo;
        v->zp_hi = p->zps[i] > v->zp_hi ? p->zps[i] : v->zp_hi;
    }
    int64_t tlo, thi;
    type_range(p->type, &tlo, &thi);
    v->lo = (double)(tlo - v->zp_hi) * v->s_max;
    v->hi = (double)(thi - v->zp_lo) * v->s_max;
    v->rank = pc_gen_value_dims(q, v->dims);
    *out = v;
    return PC_OK;
}

/* How many inputs a Q or DQ of these parameters takes: 2 sometimes when the zero point may be left to its
 * default (every element 0; for a Q also the default output type, uint8), so the passes meet Q/DQ nodes
 * without one (an absent zero point is 0: remove_dq_q must compare it equal to a given 0, the QLinear fusions
 * must supply the input their ops require). The pool keeps the zero point's initializer either way. */
static uint32_t qdq_arity(pc_genq *s, const pc_value *zp, pc_dtype type, bool is_q)
{
    const pc_tensor *t = zp ? zp->initializer : NULL;
    if (!t || (is_q && type != PC_DTYPE_UINT8)) return 3;
    for (uint64_t i = 0; i < t->n_bytes; i++)
        if (((const uint8_t *)t->data)[i]) return 3;
    return pc_draw_bool(s->g->ch, 30) ? 2 : 3;
}

/* A per-axis Q/DQ's axis attribute for data x: the axis, or now and then its negative form (axis - rank),
 * which the passes must normalize. */
static pc_status set_axis(pc_genq *s, pc_node *n, int32_t axis, const pc_value *x, pc_error *err)
{
    int64_t dims[PC_MAX_RANK];
    int32_t rank = pc_gen_value_dims(x, dims);
    int64_t a = rank > 0 && pc_draw_bool(s->g->ch, 30) ? (int64_t)axis - rank : axis;
    return pc_node_set_attr_int(n, "axis", a, err);
}

static pc_status quantize_with(pc_genq *s, pc_value *x, double lo, double hi, const pc_genq_params *p,
                               pc_value *scale, pc_value *zp, pc_genq_value **out, pc_error *err)
{
    pc_value *ins[3] = {x, scale, zp};
    pc_node *n = pc_gen_node_begin(s->g, "QuantizeLinear", "", qdq_arity(s, zp, p->type, true), ins, 1, err);
    if (!n) return err->status;
    if (p->axis >= 0 && set_axis(s, n, p->axis, x, err) != PC_OK) return err->status;
    int64_t tlo, thi;
    type_range(p->type, &tlo, &thi);
    pc_status st = pc_gen_node_end(s->g, n, (double)tlo, (double)thi, err);
    if (st != PC_OK) return st;
    st = pc_genq_register(s, n->outputs[0], scale, zp, p, out, err);
    if (st != PC_OK) return st;
    /* tighter than the type's range when the input does not fill it */
    pc_genq_interval(p, lo, hi, &(*out)->lo, &(*out)->hi);
    return PC_OK;
}

pc_status pc_genq_quantize(pc_genq *s, pc_value *x, double lo, double hi, const pc_genq_params *p,
                           pc_genq_value **out, pc_error *err)
{
    pc_value *scale = NULL, *zp = NULL;
    pc_status st = params_consts(s, p, &scale, &zp, err);
    return st != PC_OK ? st : quantize_with(s, x, lo, hi, p, scale, zp, out, err);
}

pc_status pc_genq_quantize_like(pc_genq *s, pc_value *x, double lo, double hi, const pc_genq_value *like,
                                pc_genq_value **out, pc_error *err)
{
    pc_genq_params p;
    pc_status st = pc_genq_params_of(like, &p, err);
    if (st != PC_OK) return st;
    st = quantize_with(s, x, lo, hi, &p, like->scale, like->zp, out, err);
    pc_genq_params_free(&p);
    return st;
}

pc_status pc_genq_dequantize(pc_genq *s, pc_genq_value *v, bool share, pc_value **out, pc_error *err)
{
    if (share && v->dq) {
        *out = v->dq;
        return PC_OK;
    }
    pc_value *ins[3] = {v->q, v->scale, v->zp};
    pc_node *n =
        pc_gen_node_begin(s->g, "DequantizeLinear", "", qdq_arity(s, v->zp, v->type, false), ins, 1, err);
    if (!n) return err->status;
    if (v->axis >= 0 && set_axis(s, n, v->axis, v->q, err) != PC_OK) return err->status;
    pc_status st = pc_gen_node_end(s->g, n, v->lo, v->hi, err);
    if (st != PC_OK) return st;
    v->dq = *out = n->outputs[0];
    return PC_OK;
}

pc_status pc_genq_input(pc_genq *s, int32_t rank, const int64_t *dims, const pc_genq_params *p,
                        pc_genq_value **out, pc_error *err)
{
    int64_t tlo, thi;
    type_range(p->type, &tlo, &thi);
    pc_gen_value *in = pc_gen_input(s->g, p->type, rank, dims, (double)tlo, (double)thi, err);
    if (!in) return err->status;
    pc_value *q = in->value, *scale = NULL, *zp = NULL;
    if (params_consts(s, p, &scale, &zp, err) != PC_OK) return err->status;
    return pc_genq_register(s, q, scale, zp, p, out, err);
}

static const double input_ranges[] = {1.0, 4.0, 0.25, 2.5};

pc_gen_value *pc_genq_float_input(pc_genq *s, int32_t rank, const int64_t *dims, pc_error *err)
{
    double r = input_ranges[pc_draw(s->g->ch, sizeof input_ranges / sizeof input_ranges[0])];
    return pc_gen_input(s->g, PC_DTYPE_FLOAT, rank, dims, -r, r, err);
}

void pc_genq_draw_dims(pc_genq *s, int32_t rank, int64_t min_c, int64_t min_spatial, int64_t *dims)
{
    for (int32_t i = 0; i < rank; i++) {
        int64_t lo = i == 1 ? min_c : i >= 2 ? min_spatial : 1;
        dims[i] = pc_draw_range(s->g->ch, lo, lo + 3);
    }
    /* shrink the largest shrinkable dim until the tensor fits */
    while (!pc_gen_shape_fits(s->g, rank, dims)) {
        int32_t best = -1;
        for (int32_t i = 0; i < rank; i++) {
            int64_t lo = i == 1 ? min_c : i >= 2 ? min_spatial : 1;
            if (dims[i] > lo && (best < 0 || dims[i] > dims[best])) best = i;
        }
        if (best < 0) break;
        dims[best]--;
    }
}

pc_genq_value *pc_genq_pick(pc_genq *s, pc_genq_accept_fn accept, const void *ctx)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (!accept || accept(&s->items[i], ctx)) n++;
    if (n == 0) return NULL;
    uint32_t k = pc_draw(s->g->ch, n);
    for (uint32_t i = s->n; i-- > 0;)
        if (!accept || accept(&s->items[i], ctx)) {
            if (k == 0) return &s->items[i];
            k--;
        }
    return NULL;
}

float pc_genq_scale0(const pc_genq_value *v)
{
    float x;
    memcpy(&x, v->scale->initializer->data, sizeof x);
    return x;
}

bool pc_genq_conv_draw(pc_genq *s, const pc_genq_value *x, pc_genq_conv *c)
{
    pc_gen *g = s->g;
    memset(c, 0, sizeof *c);
    c->rank = x->rank;
    c->ns = x->rank - 2;
    int64_t ch = x->dims[1];
    bool depthwise = ch > 1 && pc_draw_bool(g->ch, 20);
    c->group = depthwise ? ch : 1;
    c->m = depthwise ? ch : pc_draw_range(g->ch, 1, 4);
    c->padded = pc_draw_bool(g->ch, 30);
    c->kelems = ch / c->group;
    c->out_dims[0] = x->dims[0];
    c->out_dims[1] = c->m;
    c->w_dims[0] = c->m;
    c->w_dims[1] = ch / c->group;
    for (int32_t i = 0; i < c->ns; i++) {
        int64_t d = x->dims[2 + i];
        c->k[i] = pc_draw_range(g->ch, 1, d < 3 ? d : 3);
        c->strides[i] = pc_draw_range(g->ch, 1, 2);
        c->strided |= c->strides[i] != 1;
        c->pads[i] = c->pads[i + c->ns] = c->padded ? c->k[i] / 2 : 0;
        c->out_dims[2 + i] = (d + 2 * c->pads[i] - c->k[i]) / c->strides[i] + 1;
        c->w_dims[2 + i] = c->k[i];
        c->kelems *= c->k[i];
    }
    return pc_gen_shape_fits(g, c->rank, c->out_dims) && pc_gen_shape_fits(g, c->rank, c->w_dims);
}

pc_status pc_genq_conv_attrs(const pc_genq_conv *c, pc_node *n, pc_error *err)
{
    pc_status st = pc_node_set_attr_ints(n, "kernel_shape", (size_t)c->ns, c->k, err);
    if (st == PC_OK && c->strided) st = pc_node_set_attr_ints(n, "strides", (size_t)c->ns, c->strides, err);
    if (st == PC_OK && c->padded) st = pc_node_set_attr_ints(n, "pads", (size_t)(2 * c->ns), c->pads, err);
    if (st == PC_OK && c->group != 1) st = pc_node_set_attr_int(n, "group", c->group, err);
    return st;
}

pc_status pc_genq_weights(pc_genq *s, pc_dtype wt, int32_t rank, const int64_t *dims, int32_t axis,
                          uint32_t n, pc_genq_value *w, pc_genq_params *wp, pc_error *err)
{
    memset(w, 0, sizeof *w);
    int64_t wq = pc_draw_bool(s->g->ch, 40) ? 20 : 127, zp = wt == PC_DTYPE_UINT8 ? 128 : 0;
    pc_gen_value *c = pc_gen_const(s->g, wt, rank, dims, (double)(zp - wq), (double)(zp + wq), err);
    if (!c) return err->status;
    pc_value *cv = c->value;
    /* scales around 1/wq: a dequantized weight is O(1) */
    pc_status st = pc_genq_params_draw(s, wt, axis, n, 100.0 / (double)wq, wp, err);
    if (st != PC_OK) return st;
    for (uint32_t i = 0; i < wp->n; i++)
        wp->zps[i] = zp; /* symmetric weights, as quantizers make them */
    pc_value *scale = NULL, *zpv = NULL;
    if ((st = params_consts(s, wp, &scale, &zpv, err)) != PC_OK) {
        pc_genq_params_free(wp);
        return st;
    }
    *w = (pc_genq_value){.q = cv, .scale = scale, .zp = zpv, .type = wt, .axis = wp->axis, .rank = rank};
    for (uint32_t i = 0; i < wp->n; i++)
        w->s_max = fmaxf(w->s_max, wp->scales[i]);
    w->lo = -(double)wq * w->s_max;
    w->hi = (double)wq * w->s_max;
    memcpy(w->dims, dims, (size_t)rank * sizeof *dims);
    return PC_OK;
}

pc_value *pc_genq_bias(pc_genq *s, int64_t m, float x_scale, float w_scale_max, double *bmag, pc_error *err)
{
    int64_t bq = pc_draw_range(s->g->ch, 1, 4) * 100;
    pc_gen_value *b = pc_gen_const(s->g, PC_DTYPE_INT32, 1, &m, (double)-bq, (double)bq, err);
    *bmag = (double)bq * (double)x_scale * (double)w_scale_max;
    return b ? b->value : NULL;
}

/* ---- the qdq family
 * ---------------------------------------------------------------------------------------------- */

static double mag_of(double lo, double hi)
{
    return fmax(fabs(lo), fabs(hi));
}

/* A float input of the given shape, quantized with drawn per-tensor parameters (2 nodes' worth: 1 Q). */
static pc_status new_quantized_input(pc_genq *s, int32_t rank, const int64_t *dims, pc_genq_value **out,
                                     pc_error *err)
{
    pc_gen_value *x = pc_genq_float_input(s, rank, dims, err);
    if (!x) return err->status;
    pc_genq_params p;
    pc_status st = pc_genq_params_draw(s, PC_DTYPE_UNDEFINED, -1, 1, mag_of(x->lo, x->hi), &p, err);
    if (st == PC_OK) st = pc_genq_quantize(s, x->value, x->lo, x->hi, &p, out, err);
    pc_genq_params_free(&p);
    return st;
}

typedef struct rank_rule {
    int32_t min_rank, max_rank;
    bool per_tensor; /* only per-tensor values */
} rank_rule;

static bool accept_rank(const pc_genq_value *v, const void *ctx)
{
    const rank_rule *r = ctx;
    return v->rank >= r->min_rank && v->rank <= r->max_rank && (!r->per_tensor || v->axis < 0);
}

/* A pooled value of rank in [min_rank, max_rank], or (draw, or none fits) a new quantized input of a drawn
 * rank in that range. Uses one node for the new input's Q. */
static pc_status pick_or_new(pc_genq *s, const rank_rule *r, int64_t min_c, int64_t min_spatial,
                             pc_genq_value **out, pc_error *err)
{
    pc_genq_value *v = pc_draw_bool(s->g->ch, 10) ? NULL : pc_genq_pick(s, accept_rank, r);
    if (v) {
        /* spatial or channel minimums the caller needs: a value that has them, else a new input */
        bool ok = true;
        for (int32_t i = 1; i < v->rank && ok; i++)
            ok = v->dims[i] >= (i == 1 ? min_c : min_spatial);
        if (ok) {
            *out = v;
            return PC_OK;
        }
    }
    int32_t rank = (int32_t)pc_draw_range(s->g->ch, r->min_rank, r->max_rank);
    if (rank > s->g->cfg->max_rank) rank = s->g->cfg->max_rank;
    int64_t dims[PC_MAX_RANK];
    pc_genq_draw_dims(s, rank, min_c, min_spatial, dims);
    if (!pc_gen_shape_fits(s->g, rank, dims)) {
        *out = NULL;
        return PC_OK;
    }
    return new_quantized_input(s, rank, dims, out, err);
}

/* The other 8-bit type with every zero point clamped into [0, 127], where both types hold it: parameters that
 * differ from the originals in the type alone (a rewrite comparing them must look at the type). */
static void flip_type(pc_genq_params *p)
{
    p->type = p->type == PC_DTYPE_INT8 ? PC_DTYPE_UINT8 : PC_DTYPE_INT8;
    for (uint32_t i = 0; i < p->n; i++)
        p->zps[i] = p->zps[i] < 0 ? 0 : p->zps[i] > 127 ? 127 : p->zps[i];
}

/* The output Q of a unit: equal to `like` (draw 0, when given), else new parameters for magnitude `mag`, or
 * (allow_equal, one in five) like's scale and zero point in the other type. */
static pc_status output_q(pc_genq *s, pc_value *y, double lo, double hi, const pc_genq_value *like,
                          bool allow_equal, pc_error *err)
{
    pc_genq_value *out;
    if (like && allow_equal && !pc_draw_bool(s->g->ch, 50))
        return pc_genq_quantize_like(s, y, lo, hi, like, &out, err);
    pc_genq_params p;
    pc_status st;
    if (like && allow_equal && pc_draw_bool(s->g->ch, 40)) {
        if ((st = pc_genq_params_of(like, &p, err)) != PC_OK) return st;
        flip_type(&p);
        st = pc_genq_quantize(s, y, lo, hi, &p, &out, err);
        pc_genq_params_free(&p);
        return st;
    }
    st = pc_genq_params_draw(s, like ? like->type : PC_DTYPE_UNDEFINED, -1, 1, mag_of(lo, hi), &p, err);
    if (st == PC_OK) st = pc_genq_quantize(s, y, lo, hi, &p, &out, err);
    pc_genq_params_free(&p);
    return st;
}

static pc_status float_node(pc_genq *s, const char *op, uint32_t n_in, pc_value *const *ins, pc_node **out,
                            pc_error *err)
{
    pc_node *n = pc_gen_node_begin(s->g, op, "", n_in, ins, 1, err);
    if (!n) return err->status;
    *out = n;
    return PC_OK;
}

/* 0: DQ -> Relu | Sigmoid -> Q */
static pc_status unit_unary(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 4) return PC_OK;
    rank_rule r = {1, 4, false};
    pc_genq_value *v;
    pc_status st = pick_or_new(s, &r, 1, 1, &v, err);
    if (st != PC_OK || !v) return st;
    pc_value *x;
    if ((st = pc_genq_dequantize(s, v, pc_draw_bool(s->g->ch, 30), &x, err)) != PC_OK) return st;
    bool sigmoid = pc_draw(s->g->ch, 3) == 2;
    double lo = sigmoid ? 1.0 / (1.0 + exp(-v->lo)) : fmax(v->lo, 0.0);
    double hi = sigmoid ? 1.0 / (1.0 + exp(-v->hi)) : fmax(v->hi, 0.0);
    pc_node *n = NULL;
    if ((st = float_node(s, sigmoid ? "Sigmoid" : "Relu", 1, &x, &n, err)) != PC_OK) return st;
    if ((st = pc_gen_node_end(s->g, n, lo, hi, err)) != PC_OK) return st;
    /* equal parameters give DQ -> Relu -> Q with matching parameters (the pass's Relu rules) */
    return output_q(s, n->outputs[0], lo, hi, v, !sigmoid, err);
}

/* 1: DQ(x), DQ(w)[, DQ(b)] -> Conv [-> Relu] -> Q */
static pc_status unit_conv(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 7) return PC_OK;
    pc_gen *g = s->g;
    rank_rule r = {3, 4, pc_draw(g->ch, 8) != 7}; /* rarely a per-axis activation (the pass must refuse it) */
    pc_genq_value *v;
    pc_status st = pick_or_new(s, &r, 1, 1, &v, err);
    if (st != PC_OK || !v) return st;
    pc_genq_conv c;
    if (v->rank < 3 || !pc_genq_conv_draw(s, v, &c))
        return PC_OK; /* rank < 3: cfg->max_rank forbids a Conv */
    /* int8 weights; uint8 ones for some uint8 activations (ORT's selector refuses int8 x with uint8 w) */
    pc_dtype wt = v->type == PC_DTYPE_UINT8 && pc_draw(g->ch, 4) == 3 ? PC_DTYPE_UINT8 : PC_DTYPE_INT8;
    bool per_axis = c.m > 1 && pc_draw_bool(g->ch, 50);
    pc_genq_value w;
    pc_genq_params wp;
    if ((st = pc_genq_weights(s, wt, c.rank, c.w_dims, 0, per_axis ? (uint32_t)c.m : 1, &w, &wp, err)) !=
        PC_OK)
        return st;
    pc_value *ins[3];
    uint32_t n_in = 2;
    if ((st = pc_genq_dequantize(s, v, pc_draw_bool(g->ch, 30), &ins[0], err)) != PC_OK) goto done;
    if ((st = pc_genq_dequantize(s, &w, false, &ins[1], err)) != PC_OK) goto done;
    double amax = mag_of(v->lo, v->hi), wmax = mag_of(w.lo, w.hi), bmag = 0;
    if (v->axis < 0 && pc_draw_bool(g->ch, 50)) {
        /* int32 bias read at scale x_scale * w_scale[m] (the float product, as quantizers compute it) */
        float xs = pc_genq_scale0(v);
        pc_value *b = pc_genq_bias(s, c.m, xs, w.s_max, &bmag, err);
        float *bscales = b ? malloc(wp.n * sizeof *bscales) : NULL;
        if (!bscales) {
            st = b ? pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (bias scales)") : err->status;
            goto done;
        }
        for (uint32_t i = 0; i < wp.n; i++)
            bscales[i] = xs * wp.scales[i];
        int64_t dim = wp.n;
        int32_t brank = wp.axis >= 0 ? 1 : 0;
        pc_gen_value *bs = pc_gen_const_f32(g, PC_DTYPE_FLOAT, brank, &dim, bscales, err);
        free(bscales);
        /* its zero point absent (as quantizers write it) or given: zeros, the only value an int32 one may
         * have */
        pc_gen_value *bz = NULL;
        if (bs && pc_draw_bool(g->ch, 30)) {
            int64_t *zs = calloc(wp.n, sizeof *zs);
            if (!zs) {
                st = pc_error_set(err, PC_ERR_NOMEM, "generator: out of memory (bias zero points)");
                goto done;
            }
            bz = pc_gen_const_i64(g, PC_DTYPE_INT32, brank, &dim, zs, err);
            free(zs);
            if (!bz) {
                st = err->status;
                goto done;
            }
        }
        pc_value *bins[3] = {b, bs ? bs->value : NULL, bz ? bz->value : NULL};
        pc_node *bn = bs ? pc_gen_node_begin(g, "DequantizeLinear", "", bz ? 3 : 2, bins, 1, err) : NULL;
        if (!bn || (wp.axis >= 0 && set_axis(s, bn, 0, b, err) != PC_OK) ||
            pc_gen_node_end(g, bn, -bmag, bmag, err) != PC_OK) {
            st = err->status;
            goto done;
        }
        ins[n_in++] = bn->outputs[0];
    }
    double bound = (double)c.kelems * amax * wmax + bmag;
    pc_node *conv = pc_gen_node_begin(g, "Conv", "", n_in, ins, 1, err);
    if (!conv || pc_genq_conv_attrs(&c, conv, err) != PC_OK ||
        pc_gen_node_end(g, conv, -bound, bound, err) != PC_OK) {
        st = err->status;
        goto done;
    }
    pc_value *y = conv->outputs[0];
    double lo = -bound;
    if (pc_draw_bool(g->ch, 40)) {
        pc_node *relu = pc_gen_node_begin(g, "Relu", "", 1, &y, 1, err);
        if (!relu || pc_gen_node_end(g, relu, 0, bound, err) != PC_OK) {
            st = err->status;
            goto done;
        }
        y = relu->outputs[0];
        lo = 0;
    }
    /* typical magnitude: random signs make the sum grow like sqrt(K) */
    double typical = sqrt((double)c.kelems) * amax * wmax * 0.5 + bmag;
    pc_genq_params yp;
    if ((st = pc_genq_params_draw(s, v->type, -1, 1, typical, &yp, err)) != PC_OK) goto done;
    pc_genq_value *out;
    st = pc_genq_quantize(s, y, lo, bound, &yp, &out, err);
    pc_genq_params_free(&yp);
done:
    pc_genq_params_free(&wp);
    return st;
}

/* 2: DQ(x), DQ(w) -> MatMul -> Q, w [K, N] per tensor or per column */
static pc_status unit_matmul(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 5) return PC_OK;
    pc_gen *g = s->g;
    rank_rule r = {1, 3, true};
    pc_genq_value *v;
    pc_status st = pick_or_new(s, &r, 1, 1, &v, err);
    if (st != PC_OK || !v) return st;
    int64_t kdim = v->dims[v->rank - 1], n = pc_draw_range(g->ch, 1, 4);
    int64_t out_dims[PC_MAX_RANK], wdims[2] = {kdim, n};
    memcpy(out_dims, v->dims, sizeof out_dims);
    out_dims[v->rank - 1] = n;
    if (!pc_gen_shape_fits(g, v->rank, out_dims) || !pc_gen_shape_fits(g, 2, wdims)) return PC_OK;
    bool per_axis = n > 1 && pc_draw_bool(g->ch, 50);
    /* int8 weights; uint8 ones for some uint8 activations, as in the conv unit (ORT's selector refuses int8 a
     * with uint8 b) */
    pc_dtype wt = v->type == PC_DTYPE_UINT8 && pc_draw(g->ch, 4) == 3 ? PC_DTYPE_UINT8 : PC_DTYPE_INT8;
    pc_genq_value w;
    pc_genq_params wp;
    if ((st = pc_genq_weights(s, wt, 2, wdims, 1, per_axis ? (uint32_t)n : 1, &w, &wp, err)) != PC_OK)
        return st;
    pc_value *ins[2];
    if ((st = pc_genq_dequantize(s, v, pc_draw_bool(g->ch, 30), &ins[0], err)) != PC_OK) goto done;
    if ((st = pc_genq_dequantize(s, &w, false, &ins[1], err)) != PC_OK) goto done;
    double amax = mag_of(v->lo, v->hi), wmax = mag_of(w.lo, w.hi), bound = (double)kdim * amax * wmax;
    pc_node *mm = pc_gen_node_begin(g, "MatMul", "", 2, ins, 1, err);
    if (!mm || pc_gen_node_end(g, mm, -bound, bound, err) != PC_OK) {
        st = err->status;
        goto done;
    }
    pc_genq_params yp;
    if ((st = pc_genq_params_draw(s, v->type, -1, 1, sqrt((double)kdim) * amax * wmax * 0.5, &yp, err)) !=
        PC_OK)
        goto done;
    pc_genq_value *out;
    st = pc_genq_quantize(s, mm->outputs[0], -bound, bound, &yp, &out, err);
    pc_genq_params_free(&yp);
done:
    pc_genq_params_free(&wp);
    return st;
}

static bool accept_same_dims(const pc_genq_value *v, const void *ctx)
{
    const pc_genq_value *a = ctx;
    return v->rank == a->rank && memcmp(v->dims, a->dims, (size_t)a->rank * sizeof *a->dims) == 0;
}

/* 3: DQ(a), DQ(b) -> Add | Mul -> Q (b has a's shape; often a itself) */
static pc_status unit_binary(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 5) return PC_OK;
    rank_rule r = {1, 4, false};
    pc_genq_value *a;
    pc_status st = pick_or_new(s, &r, 1, 1, &a, err);
    if (st != PC_OK || !a) return st;
    pc_genq_value *b = pc_genq_pick(s, accept_same_dims, a);
    pc_value *ins[2];
    if ((st = pc_genq_dequantize(s, a, pc_draw_bool(s->g->ch, 30), &ins[0], err)) != PC_OK) return st;
    if ((st = pc_genq_dequantize(s, b, pc_draw_bool(s->g->ch, 50), &ins[1], err)) != PC_OK) return st;
    bool mul = pc_draw_bool(s->g->ch, 50);
    double lo, hi;
    if (mul) {
        double p[4] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
        lo = fmin(fmin(p[0], p[1]), fmin(p[2], p[3]));
        hi = fmax(fmax(p[0], p[1]), fmax(p[2], p[3]));
    } else {
        lo = a->lo + b->lo;
        hi = a->hi + b->hi;
    }
    pc_node *n = NULL;
    if ((st = float_node(s, mul ? "Mul" : "Add", 2, ins, &n, err)) != PC_OK) return st;
    if ((st = pc_gen_node_end(s->g, n, lo, hi, err)) != PC_OK) return st;
    return output_q(s, n->outputs[0], lo, hi, a, false, err);
}

/* 4: DQ(a), DQ(b) -> Concat -> Q (b has a's shape) */
static pc_status unit_concat(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 5) return PC_OK;
    rank_rule r = {1, 4, false};
    pc_genq_value *a;
    pc_status st = pick_or_new(s, &r, 1, 1, &a, err);
    if (st != PC_OK || !a) return st;
    int32_t axis = (int32_t)pc_draw(s->g->ch, (uint32_t)a->rank);
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, a->dims, sizeof dims);
    dims[axis] *= 2;
    if (!pc_gen_shape_fits(s->g, a->rank, dims)) return PC_OK;
    pc_genq_value *b = pc_genq_pick(s, accept_same_dims, a);
    pc_value *ins[2];
    if ((st = pc_genq_dequantize(s, a, pc_draw_bool(s->g->ch, 30), &ins[0], err)) != PC_OK) return st;
    if ((st = pc_genq_dequantize(s, b, pc_draw_bool(s->g->ch, 50), &ins[1], err)) != PC_OK) return st;
    double lo = fmin(a->lo, b->lo), hi = fmax(a->hi, b->hi);
    pc_node *n = NULL;
    if ((st = float_node(s, "Concat", 2, ins, &n, err)) != PC_OK) return st;
    if ((st = pc_node_set_attr_int(n, "axis", axis, err)) != PC_OK) return st;
    if ((st = pc_gen_node_end(s->g, n, lo, hi, err)) != PC_OK) return st;
    return output_q(s, n->outputs[0], lo, hi, a->axis < 0 ? a : NULL, true, err);
}

/* 5: DQ -> Reshape | Transpose | MaxPool -> Q */
static pc_status unit_move(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 4) return PC_OK;
    pc_gen *g = s->g;
    uint32_t kind = pc_draw(g->ch, 3); /* 0 Reshape, 1 Transpose, 2 MaxPool */
    rank_rule r = {kind == 2 ? 3 : 1, 4, false};
    pc_genq_value *v;
    pc_status st = pick_or_new(s, &r, 1, kind == 2 ? 2 : 1, &v, err);
    if (st != PC_OK || !v) return st;
    if (kind == 2 && (v->rank < 3 || v->dims[2] < 2 || (v->rank > 3 && v->dims[3] < 2))) kind = 0;
    pc_value *x;
    if ((st = pc_genq_dequantize(s, v, pc_draw_bool(g->ch, 30), &x, err)) != PC_OK) return st;
    pc_node *n = NULL;
    if (kind == 0) {
        /* flatten to 2-D after a drawn axis, or to 1-D */
        uint32_t split = pc_draw(g->ch, (uint32_t)v->rank);
        int64_t shape[2] = {1, 1};
        for (int32_t i = 0; i < v->rank; i++)
            shape[(uint32_t)i < split ? 0 : 1] *= v->dims[i];
        pc_gen_value *sh = split == 0 ? pc_gen_const_i64(g, PC_DTYPE_INT64, 1, (int64_t[]){1}, &shape[1], err)
                                      : pc_gen_const_i64(g, PC_DTYPE_INT64, 1, (int64_t[]){2}, shape, err);
        if (!sh) return err->status;
        pc_value *ins[2] = {x, sh->value};
        if ((st = float_node(s, "Reshape", 2, ins, &n, err)) != PC_OK) return st;
    } else if (kind == 1) {
        int64_t perm[PC_MAX_RANK];
        uint32_t rot = 1 + pc_draw(g->ch, (uint32_t)(v->rank > 1 ? v->rank - 1 : 1));
        for (int32_t i = 0; i < v->rank; i++)
            perm[i] = (i + (int64_t)rot) % v->rank;
        if ((st = float_node(s, "Transpose", 1, &x, &n, err)) != PC_OK) return st;
        if ((st = pc_node_set_attr_ints(n, "perm", (size_t)v->rank, perm, err)) != PC_OK) return st;
    } else {
        int64_t k[2] = {2, 2};
        if ((st = float_node(s, "MaxPool", 1, &x, &n, err)) != PC_OK) return st;
        if ((st = pc_node_set_attr_ints(n, "kernel_shape", (size_t)(v->rank - 2), k, err)) != PC_OK)
            return st;
    }
    if ((st = pc_gen_node_end(g, n, v->lo, v->hi, err)) != PC_OK) return st;
    /* equal parameters on both sides: ORT's drop-QDQ form for data movement */
    return output_q(s, n->outputs[0], v->lo, v->hi, v->axis < 0 ? v : NULL, true, err);
}

/* 6: DQ -> Q, equal (shared or copied initializers) or different (scale, zero point, type, per axis) */
static pc_status unit_requant(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 3) return PC_OK;
    pc_gen *g = s->g;
    rank_rule r = {1, 4, false};
    pc_genq_value *v;
    pc_status st = pick_or_new(s, &r, 1, 1, &v, err);
    if (st != PC_OK || !v) return st;
    pc_value *x;
    if ((st = pc_genq_dequantize(s, v, pc_draw_bool(g->ch, 30), &x, err)) != PC_OK) return st;
    pc_genq_value *out;
    uint32_t how = pc_draw(g->ch, 6);
    if (how == 0) return pc_genq_quantize_like(s, x, v->lo, v->hi, v, &out, err);
    pc_genq_params p;
    if ((st = pc_genq_params_of(v, &p, err)) != PC_OK) return st;
    switch (how) {
    case 1:
        break; /* equal values, new initializers */
    case 2:
        p.scales[0] *= 1.5f;
        break;
    case 3:
        p.zps[0] = p.zps[0] == 0 ? (p.type == PC_DTYPE_INT8 ? 3 : 7) : 0;
        break;
    case 4:
        if (p.axis < 0) {
            flip_type(&p);
        } else {
            p.scales[0] *= 0.5f;
        }
        break;
    default:
        /* per-axis along axis 0 with drawn scales (a per-axis activation) */
        if (v->dims[0] > 1) {
            pc_genq_params_free(&p);
            st = pc_genq_params_draw(s, v->type, 0, (uint32_t)v->dims[0], mag_of(v->lo, v->hi), &p, err);
            if (st != PC_OK) return st;
        } else {
            p.scales[0] *= 0.75f;
        }
        break;
    }
    st = pc_genq_quantize(s, x, v->lo, v->hi, &p, &out, err);
    pc_genq_params_free(&p);
    return st;
}

/* 7: DQ -> float graph output */
static pc_status unit_output(pc_genq *s, pc_error *err)
{
    if (pc_genq_budget(s) < 1 || s->n == 0) return PC_OK;
    pc_genq_value *v = pc_genq_pick(s, NULL, NULL);
    pc_value *x;
    return pc_genq_dequantize(s, v, false, &x, err);
}

typedef pc_status (*unit_fn)(pc_genq *s, pc_error *err);

static const unit_fn units[] = {unit_unary,  unit_conv, unit_matmul,  unit_binary,
                                unit_concat, unit_move, unit_requant, unit_output};
static const uint32_t unit_weights[] = {12, 24, 14, 10, 8, 12, 14, 6};

pc_status pc_gen_qdq(pc_gen *g, pc_error *err)
{
    pc_genq s = {.g = g};
    /* the first node: QuantizeLinear of a float input (all-zero: rank 1, one element, scale 1, zero point 0)
     */
    int32_t rank = (int32_t)pc_draw_range(g->ch, 1, g->cfg->max_rank < 4 ? g->cfg->max_rank : 4);
    int64_t dims[PC_MAX_RANK];
    pc_genq_draw_dims(&s, rank, 1, 1, dims);
    pc_genq_value *first;
    pc_status st = new_quantized_input(&s, rank, dims, &first, err);
    while (st == PC_OK && pc_gen_continue(g)) {
        uint32_t k = pc_draw_weighted(g->ch, unit_weights, sizeof units / sizeof units[0]);
        st = units[k](&s, err);
    }
    pc_genq_free(&s);
    return st;
}
