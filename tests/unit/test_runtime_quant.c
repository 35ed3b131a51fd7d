/* The runtime's quantized kernels (core/runtime/kernels/quant.c) against the reference executor, byte for
 * byte. Each case is a one-node model with random shapes, attributes and quantization parameters; the
 * kernel row comes from the quant table itself, the output dims and type from core's shape inference, and
 * the kernel runs as a session runs it: prepare with only the initializers' data visible, then run into an
 * output and a scratch buffer filled with garbage, then a second run over different garbage that must give
 * the same bytes. The reference's output must match exactly (floats bit for bit); where the reference
 * refuses, prepare must refuse too.
 *
 * Cases: QuantizeLinear (float32 and int32 x, opsets 10-21, per tensor and per axis, int8/uint8 and the
 * default/output_dtype types; values aimed at exact ties x / scale = k + 1/2 and at saturation, infinities);
 * DequantizeLinear (int8, uint8, int32 with extremes); QLinearConv NCHW, channels-last
 * (com.ms.internal.nhwc), com.microsoft QLinearConvRelu and the systolic EP's QLinearConv_nhwc (HWIO weight,
 * relu attribute), 1-D and 2-D, groups, depthwise, pointwise,
 * strides, dilations, pads and auto_pad, per-tensor and per-channel w params, bias, every mix of int8 and
 * uint8, scales from 2^-20 to 10^4 (powers of two make ties); QLinearMatMul and MatMulInteger with batch
 * broadcasting, 1-D operands, per-row A and per-column B params; sums over more than 32768 products that wrap
 * int32. Then fixed cases whose answers are written out (ties to even; a wrapped sum), prepare's refusals,
 * and a planted wrong byte that the comparison must see. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x71756e742d6b726eull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

static double unit(void)
{
    return (double)(pc_splitmix64(&rng_state) >> 11) / 9007199254740992.0;
}

static int64_t draw_range(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(pc_splitmix64(&rng_state) % (uint64_t)(hi - lo + 1));
}

/* ---- cases */

enum { MAX_IN = 9 };

typedef struct tcase {
    pc_model *m;
    pc_node *node;
    const char *op, *domain;
    int64_t opset;
    uint32_t n_in;
    pc_data *in[MAX_IN]; /* node input i's data; NULL: omitted */
    bool constant[MAX_IN];
    char label[1024];
} tcase;

#define label_add(c, ...) pc_test_appendf((c)->label, sizeof(c)->label, __VA_ARGS__)

static void case_begin(tcase *c, const char *op, const char *domain, int64_t opset)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->domain = domain;
    c->opset = opset;
    c->m = pt_model(opset);
    pc_error err;
    /* the NHWC domain's import carries the ai.onnx opset, as the layout transformer writes it */
    if (strcmp(domain, PC_NHWC_DOMAIN) == 0 && pc_model_set_opset(c->m, domain, opset, &err) != PC_OK)
        pt_die("opset", &err);
    if (strcmp(domain, PC_SYSTOLIC_DOMAIN) == 0 && pc_model_set_opset(c->m, domain, 1, &err) != PC_OK)
        pt_die("opset", &err);
    label_add(c, "%s%s%s-%lld", domain, *domain ? "." : "", op, (long long)opset);
}

static pc_data *tensor(pc_dtype dt, int32_t rank, const int64_t *dims)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(dt, rank, dims, &err);
    if (!d) pt_die("tensor", &err);
    return d;
}

static void set_i(pc_data *d, uint64_t i, int64_t v)
{
    switch (d->dtype) {
    case PC_DTYPE_UINT8:
        ((uint8_t *)d->data)[i] = (uint8_t)v;
        break;
    case PC_DTYPE_INT8:
        ((int8_t *)d->data)[i] = (int8_t)v;
        break;
    case PC_DTYPE_INT16:
        ((int16_t *)d->data)[i] = (int16_t)v;
        break;
    case PC_DTYPE_INT32:
        ((int32_t *)d->data)[i] = (int32_t)v;
        break;
    default:
        pt_die("set_i: unexpected dtype", NULL);
    }
}

static int64_t get_i(const pc_data *d, uint64_t i)
{
    switch (d->dtype) {
    case PC_DTYPE_UINT8:
        return ((const uint8_t *)d->data)[i];
    case PC_DTYPE_INT8:
        return ((const int8_t *)d->data)[i];
    case PC_DTYPE_INT32:
        return ((const int32_t *)d->data)[i];
    default:
        pt_die("get_i: unexpected dtype", NULL);
    }
    return 0;
}

static void set_f(pc_data *d, uint64_t i, float v)
{
    ((float *)d->data)[i] = v;
}

/* Node input i (data owned by the case): a graph input, or an initializer when constant. */
static void set_input(tcase *c, uint32_t i, pc_data *d, bool constant)
{
    if (i >= MAX_IN) pt_die("too many inputs", NULL);
    c->in[i] = d;
    c->constant[i] = constant;
    if (i + 1 > c->n_in) c->n_in = i + 1;
}

/* The node over inputs i0.. (omitted ones empty) and its output y, once the inputs are set. */
static void case_node(tcase *c)
{
    char names[256] = "";
    size_t o = 0;
    for (uint32_t i = 0; i < c->n_in; i++) {
        char name[16] = "";
        if (c->in[i]) {
            snprintf(name, sizeof name, "i%u", i);
            if (c->constant[i])
                pt_const(c->m, name, c->in[i]->dtype, c->in[i]->rank, c->in[i]->dims, c->in[i]->data);
            else
                pt_input(c->m, name, c->in[i]->dtype, c->in[i]->rank, c->in[i]->dims);
            label_add(c, " %s%s(", c->constant[i] ? "const " : "", pc_dtype_name(c->in[i]->dtype));
            for (int32_t d = 0; d < c->in[i]->rank; d++)
                label_add(c, "%s%lld", d ? "," : "", (long long)c->in[i]->dims[d]);
            label_add(c, ")");
        } else {
            label_add(c, " _");
        }
        o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? "," : "", name);
    }
    c->node = pt_node(c->m, c->op, c->domain, names, "y", NULL);
    pt_output(c->m, "y");
}

static void set_int(tcase *c, const char *name, int64_t v)
{
    pc_error err;
    if (pc_node_set_attr_int(c->node, name, v, &err) != PC_OK) pt_die(name, &err);
    label_add(c, " %s=%lld", name, (long long)v);
}

static void set_ints(tcase *c, const char *name, size_t n, const int64_t *v)
{
    pc_error err;
    if (pc_node_set_attr_ints(c->node, name, n, v, &err) != PC_OK) pt_die(name, &err);
    label_add(c, " %s=[", name);
    for (size_t i = 0; i < n; i++)
        label_add(c, "%s%lld", i ? "," : "", (long long)v[i]);
    label_add(c, "]");
}

static void set_string(tcase *c, const char *name, const char *v)
{
    pc_error err;
    if (pc_node_set_attr_string(c->node, name, v, &err) != PC_OK) pt_die(name, &err);
    label_add(c, " %s=%s", name, v);
}

static void case_end(tcase *c)
{
    for (uint32_t i = 0; i < c->n_in; i++)
        pc_data_unref(c->in[i]);
    pc_model_free(c->m);
}

/* ---- running the kernel */

static const pc_rt_kernel *quant_row(const pc_node *node, int64_t opset, pc_dtype in0)
{
    for (size_t i = 0; i < pc_rt_n_kernels_quant; i++) {
        const pc_rt_kernel *k = &pc_rt_kernels_quant[i];
        if (strcmp(k->op_type, node->op_type) == 0 && strcmp(k->domain, node->domain) == 0 &&
            opset >= k->min_opset && opset <= k->max_opset && (!k->types || (k->types & RT_TYPE(in0))))
            return k;
    }
    return NULL;
}

typedef struct kernel_run {
    const pc_rt_kernel *row;
    pc_rt_tensor tin[MAX_IN], tout;
    const pc_rt_tensor *in[MAX_IN];
    pc_rt_tensor *out[1];
    void *copies[MAX_IN];
    pc_rt_kernel_ctx k;
    pc_error err;
    size_t scratch_bytes;
    void *scratch;
    size_t out_bytes;
} kernel_run;

/* The row, the tensors (private copies of the inputs, shown to prepare only when constant) and prepare. */
static pc_status kernel_prepare(kernel_run *r, tcase *c, pc_dtype out_dt, int32_t out_rank,
                                const int64_t *out_dims)
{
    memset(r, 0, sizeof *r);
    pc_error_clear(&r->err);
    int64_t opset = pc_model_opset(c->m, c->node->domain);
    r->row = quant_row(c->node, opset, c->in[0] ? c->in[0]->dtype : PC_DTYPE_UNDEFINED);
    if (!r->row) return PC_ERR_UNSUPPORTED;
    for (uint32_t i = 0; i < c->n_in; i++) {
        const pc_data *d = c->in[i];
        if (!d) continue;
        r->copies[i] = malloc(d->n_bytes + 1);
        if (!r->copies[i]) pt_die("malloc", NULL);
        memcpy(r->copies[i], d->data, d->n_bytes);
        r->tin[i] = (pc_rt_tensor){.dtype = d->dtype, .rank = d->rank, .n = d->n_elements};
        if (d->rank) memcpy(r->tin[i].dims, d->dims, (size_t)d->rank * sizeof *d->dims);
        r->tin[i].data = c->constant[i] ? r->copies[i] : NULL;
        r->in[i] = &r->tin[i];
    }
    r->tout = (pc_rt_tensor){.dtype = out_dt, .rank = out_rank, .n = 1};
    for (int32_t d = 0; d < out_rank; d++) {
        r->tout.dims[d] = out_dims[d];
        r->tout.n *= (uint64_t)out_dims[d];
    }
    r->out_bytes = (size_t)r->tout.n * (pc_dtype_bits(out_dt) / 8);
    r->tout.data = malloc(r->out_bytes + 1);
    if (!r->tout.data) pt_die("malloc", NULL);
    r->out[0] = &r->tout;
    r->k = (pc_rt_kernel_ctx){.node = c->node,
                              .opset = opset,
                              .n_in = c->n_in,
                              .n_out = 1,
                              .in = r->in,
                              .out = r->out,
                              .threads = 1,
                              .err = &r->err};
    pc_status st = r->row->prepare ? r->row->prepare(&r->k, &r->scratch_bytes) : PC_OK;
    if (st == PC_OK && r->scratch_bytes) {
        r->scratch = aligned_alloc(64, (r->scratch_bytes + 63) / 64 * 64);
        if (!r->scratch) pt_die("aligned_alloc", NULL);
    }
    for (uint32_t i = 0; i < c->n_in; i++)
        if (r->in[i]) r->tin[i].data = r->copies[i];
    r->k.scratch = r->scratch;
    r->k.scratch_bytes = r->scratch_bytes;
    return st;
}

/* run with garbage in the output and the scratch */
static pc_status kernel_exec(kernel_run *r, int garbage)
{
    memset(r->tout.data, garbage, r->out_bytes + 1);
    if (r->scratch) memset(r->scratch, garbage ^ 0xff, r->scratch_bytes);
    return r->row->run(&r->k);
}

static void kernel_free(kernel_run *r)
{
    for (uint32_t i = 0; i < MAX_IN; i++)
        free(r->copies[i]);
    free(r->tout.data);
    free(r->scratch);
}

static void element_text(pc_dtype dt, const void *data, uint64_t k, char *buf, size_t size)
{
    if (dt == PC_DTYPE_FLOAT) {
        float v;
        memcpy(&v, (const char *)data + k * 4, 4);
        snprintf(buf, size, "%.9g", (double)v);
    } else if (dt == PC_DTYPE_INT32) {
        int32_t v;
        memcpy(&v, (const char *)data + k * 4, 4);
        snprintf(buf, size, "%d", (int)v);
    } else if (dt == PC_DTYPE_INT8) {
        snprintf(buf, size, "%d", (int)((const int8_t *)data)[k]);
    } else {
        snprintf(buf, size, "%u", (unsigned)((const uint8_t *)data)[k]);
    }
}

/* first element whose bytes differ, or -1 */
static int64_t first_difference(const void *got, const void *want, uint64_t n, size_t es)
{
    for (uint64_t i = 0; i < n; i++)
        if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0) return (int64_t)i;
    return -1;
}

typedef struct op_stats {
    const char *op;
    int compared, refused, planted, elements;
} op_stats;

enum { R_FAILED, R_COMPARED, R_REFUSED };

/* The case on the reference and the kernel; both may refuse (prepare with UNSUPPORTED, ATTRIBUTE or SHAPE),
 * nothing else may differ. */
static int run_case(tcase *c, op_stats *stats)
{
    pc_error err;
    pc_error_clear(&err);
    pc_data *ref_in[MAX_IN], **ref = NULL;
    uint32_t n_ref = 0;
    for (uint32_t i = 0; i < c->n_in; i++)
        if (c->in[i] && !c->constant[i]) ref_in[n_ref++] = c->in[i];
    pc_status ref_st = pc_ref_run(c->m, n_ref, ref_in, &ref, &err);
    char ref_msg[1100];
    snprintf(ref_msg, sizeof ref_msg, "%s", ref_st == PC_OK ? "" : err.message);
    int result = R_FAILED;

    pc_status st = pc_graph_infer_shapes(c->m->graph, &err);
    CHECK_MSG(st == PC_OK, "%s: shape inference: %s", c->label, err.message);
    const pc_type *yt = &c->node->outputs[0]->type;
    int64_t dims[PC_MAX_RANK];
    bool known = st == PC_OK && yt->kind == PC_TYPE_TENSOR && yt->shape.rank >= 0;
    for (int32_t i = 0; known && i < yt->shape.rank; i++) {
        known = yt->shape.dims[i].kind == PC_DIM_KNOWN;
        dims[i] = yt->shape.dims[i].size;
    }
    CHECK_MSG(known || st != PC_OK, "%s: shape inference left the output's shape unknown", c->label);
    if (!known) goto done;

    kernel_run r;
    st = kernel_prepare(&r, c, yt->elem, yt->shape.rank, dims);
    CHECK_MSG(r.row != NULL, "%s: no kernel row", c->label);
    if (!r.row) goto done_run;
    if (st != PC_OK) {
        CHECK_MSG(ref_st != PC_OK, "%s: prepare refused (%s: %s) what the reference runs", c->label,
                  pc_status_name(st), r.err.message);
        CHECK_MSG(st == PC_ERR_UNSUPPORTED || st == PC_ERR_ATTRIBUTE || st == PC_ERR_SHAPE,
                  "%s: prepare failed with %s: %s", c->label, pc_status_name(st), r.err.message);
        if (ref_st != PC_OK) result = R_REFUSED;
        if (getenv("QUANT_VERBOSE"))
            fprintf(stderr, "refused: %s: %s / %s\n", c->label, r.err.message, ref_msg);
        goto done_run;
    }
    CHECK_MSG(ref_st == PC_OK, "%s: prepare accepted what the reference refuses (%s)", c->label, ref_msg);
    if (ref_st != PC_OK) goto done_run;
    const pc_data *want = ref[0];
    bool same = want->dtype == yt->elem && want->rank == yt->shape.rank;
    for (int32_t i = 0; same && i < want->rank; i++)
        same = want->dims[i] == dims[i];
    CHECK_MSG(same, "%s: the inferred output type or dims differ from the reference's", c->label);
    if (!same) goto done_run;
    size_t es = pc_dtype_bits(want->dtype) / 8;
    for (int pass = 0; pass < 2; pass++) {
        st = kernel_exec(&r, pass ? 0x5a : 0xa5);
        CHECK_MSG(st == PC_OK, "%s: run %d: %s: %s", c->label, pass, pc_status_name(st), r.err.message);
        if (st != PC_OK) goto done_run;
        int64_t at = first_difference(r.tout.data, want->data, want->n_elements, es);
        if (at >= 0) {
            char g[64], w[64];
            element_text(want->dtype, r.tout.data, (uint64_t)at, g, sizeof g);
            element_text(want->dtype, want->data, (uint64_t)at, w, sizeof w);
            CHECK_MSG(at < 0, "%s: run %d: element %lld of %llu is %s, the reference says %s", c->label, pass,
                      (long long)at, (unsigned long long)want->n_elements, g, w);
            goto done_run;
        }
    }
    result = R_COMPARED;
    stats->elements += (int)want->n_elements;
    if (want->n_elements > 0 && stats->planted == 0) { /* the comparison must see one wrong byte */
        uint8_t *y = r.tout.data;
        size_t at = (size_t)(want->n_elements / 2) * es;
        y[at] ^= 1;
        CHECK_MSG(first_difference(r.tout.data, want->data, want->n_elements, es) >= 0,
                  "%s: a planted wrong byte was not seen", c->label);
        y[at] ^= 1;
        stats->planted++;
    }
done_run:
    kernel_free(&r);
done:
    if (result == R_COMPARED) stats->compared++;
    if (result == R_REFUSED) stats->refused++;
    if (ref_st == PC_OK) pc_ref_free_outputs(c->m, ref);
    return result;
}

/* ---- parameters */

static pc_dtype q8_type(void)
{
    return draw(2) ? PC_DTYPE_UINT8 : PC_DTYPE_INT8;
}

static void q8_range(pc_dtype t, int64_t *lo, int64_t *hi)
{
    *lo = t == PC_DTYPE_INT8 ? -128 : 0;
    *hi = t == PC_DTYPE_INT8 ? 127 : 255;
}

/* zero points across the type's range: 0, the extremes, the middle, anything */
static int64_t zp_value(pc_dtype t)
{
    int64_t lo, hi;
    q8_range(t, &lo, &hi);
    switch (draw(6)) {
    case 0:
        return 0;
    case 1:
        return draw(2) ? lo : hi;
    case 2:
        return (lo + hi + 1) / 2;
    default:
        return draw_range(lo, hi);
    }
}

/* positive scales: powers of two (exact quotients: ties), log-uniform over [1e-6, 1e4], or typical */
static float scale_value(void)
{
    switch (draw(4)) {
    case 0:
        return ldexpf(1.0f, (int)draw_range(-20, 10));
    case 1:
        return (float)exp(log(1e-6) + unit() * (log(1e4) - log(1e-6)));
    default:
        return (float)(0.001 + unit() * 0.2);
    }
}

/* a scale or zero point tensor: per tensor as a scalar or [1], else 1-D [n] */
static pc_data *param_tensor(pc_dtype dt, int64_t n, bool vector_form)
{
    return vector_form || n != 1 ? tensor(dt, 1, &n) : tensor(dt, 0, NULL);
}

static pc_data *scalar_f(float v)
{
    pc_data *d = tensor(PC_DTYPE_FLOAT, 0, NULL);
    set_f(d, 0, v);
    return d;
}

static pc_data *scalar_i(pc_dtype dt, int64_t v)
{
    pc_data *d = tensor(dt, 0, NULL);
    set_i(d, 0, v);
    return d;
}

/* ---- QuantizeLinear, DequantizeLinear */

static const int64_t qd_opsets[] = {10, 11, 13, 17, 19, 21};
static int n_ties; /* quantized elements exactly halfway between two integers, inside the range */

/* A Q/DQ case at a random opset; x: rank 0-4 dims 0-6; per axis (from opset 13) with a random, maybe
 * negative axis, or the default 1. Returns how many scales there are. */
static int64_t qd_begin(tcase *c, const char *op, int32_t *rank, int64_t *dims, bool *per_axis, int32_t *axis)
{
    case_begin(c, op, "", qd_opsets[draw(6)]);
    *rank = (int32_t)draw(5);
    for (int32_t d = 0; d < *rank; d++)
        dims[d] = draw(20) == 0 ? 0 : 1 + draw(6);
    *per_axis = c->opset >= 13 && *rank >= 1 && draw(3) != 0;
    *axis = *per_axis ? (int32_t)draw((uint32_t)*rank) : 1;
    return *per_axis ? dims[*axis] : 1;
}

static void qd_axis_attr(tcase *c, bool per_axis, int32_t rank, int32_t axis)
{
    if (!per_axis) return;
    if (axis == 1 && draw(2)) return; /* the default */
    set_int(c, "axis", draw(2) ? axis : axis - rank);
}

/* channel of element e of x for per-axis parameters ([outer, ch, inner]) */
static uint64_t qd_channel(int32_t rank, const int64_t *dims, bool per_axis, int32_t axis, uint64_t e)
{
    if (!per_axis) return 0;
    uint64_t inner = 1;
    for (int32_t d = axis + 1; d < rank; d++)
        inner *= (uint64_t)dims[d];
    return (e / inner) % (uint64_t)dims[axis];
}

static void quantize_case(op_stats *stats)
{
    tcase c;
    int32_t rank, axis;
    int64_t dims[PC_MAX_RANK];
    bool per_axis;
    int64_t nch = qd_begin(&c, "QuantizeLinear", &rank, dims, &per_axis, &axis), opset = c.opset;
    bool f32 = draw(5) != 0, vector_form = draw(2);
    pc_data *x = tensor(f32 ? PC_DTYPE_FLOAT : PC_DTYPE_INT32, rank, dims);
    pc_data *s = param_tensor(PC_DTYPE_FLOAT, nch, vector_form);
    int form = (int)draw(3); /* 0: no zero point (uint8), 1: uint8, 2: int8 */
    int64_t out_dtype = 0;
    if (form == 0 && opset >= 21 && draw(2)) out_dtype = draw(2) ? PC_DTYPE_INT8 : PC_DTYPE_UINT8;
    pc_dtype yt = form == 2   ? PC_DTYPE_INT8
                  : form == 1 ? PC_DTYPE_UINT8
                  : out_dtype ? (pc_dtype)out_dtype
                              : PC_DTYPE_UINT8;
    pc_data *z = form ? param_tensor(yt, nch, vector_form) : NULL;
    for (int64_t i = 0; i < nch; i++) {
        set_f(s, (uint64_t)i, draw(30) == 0 ? -scale_value() : scale_value());
        if (z) set_i(z, (uint64_t)i, zp_value(yt));
    }
    int64_t lo, hi;
    q8_range(yt, &lo, &hi);
    for (uint64_t e = 0; e < x->n_elements; e++) {
        uint64_t ch = qd_channel(rank, dims, per_axis, axis, e);
        float sc = ((float *)s->data)[ch];
        int64_t zp = z ? get_i(z, ch) : 0;
        /* aim at the range's inside and just past its ends, at integers, halves and anything between */
        double q = (double)draw_range(lo - zp - 4, hi - zp + 4);
        static const double frac[] = {0.0, 0.5, -0.5, 0.25, 0.49999, 0.50001};
        q += draw(4) ? frac[draw(6)] : unit() - 0.5;
        double v = q * sc;
        if (draw(40) == 0) v = draw(3) == 0 ? 0.0 : (draw(2) ? 1.0 : -1.0) * (double)sc * 1e6;
        if (f32) {
            float fv = (float)v;
            if (draw(60) == 0) fv = draw(2) ? INFINITY : -INFINITY;
            if (draw(60) == 0) fv = -0.0f;
            set_f(x, e, fv);
            float r = fv / sc;
            if (isfinite(r) && r - floorf(r) == 0.5f) {
                double fl = floor((double)r);
                n_ties += fl + (double)zp >= (double)lo && fl + 1.0 + (double)zp <= (double)hi;
            }
        } else {
            double iv = nearbyint(v);
            if (draw(30) == 0) iv = draw(2) ? INT32_MAX : INT32_MIN;
            iv = iv > INT32_MAX ? INT32_MAX : iv < INT32_MIN ? INT32_MIN : iv;
            set_i(x, e, (int64_t)iv);
        }
    }
    set_input(&c, 0, x, false);
    set_input(&c, 1, s, draw(2));
    if (z || draw(4) == 0) set_input(&c, 2, z, draw(2)); /* an empty input 2 sometimes when absent */
    case_node(&c);
    qd_axis_attr(&c, per_axis, rank, axis);
    if (out_dtype) set_int(&c, "output_dtype", out_dtype);
    run_case(&c, stats);
    case_end(&c);
}

static void dequantize_case(op_stats *stats)
{
    tcase c;
    int32_t rank, axis;
    int64_t dims[PC_MAX_RANK];
    bool per_axis;
    int64_t nch = qd_begin(&c, "DequantizeLinear", &rank, dims, &per_axis, &axis);
    bool vector_form = draw(2);
    pc_dtype xt = draw(4) == 0 ? PC_DTYPE_INT32 : q8_type();
    pc_data *x = tensor(xt, rank, dims);
    pc_data *s = param_tensor(PC_DTYPE_FLOAT, nch, vector_form);
    pc_data *z = draw(3) ? param_tensor(xt, nch, vector_form) : NULL;
    for (int64_t i = 0; i < nch; i++) {
        set_f(s, (uint64_t)i, scale_value());
        if (z) set_i(z, (uint64_t)i, xt == PC_DTYPE_INT32 ? 0 : zp_value(xt));
    }
    for (uint64_t e = 0; e < x->n_elements; e++) {
        if (xt == PC_DTYPE_INT32) /* large values round when converted to float */
            set_i(x, e, draw(10) == 0 ? (draw(2) ? INT32_MAX : INT32_MIN) : draw_range(-(1 << 30), 1 << 30));
        else
            set_i(x, e, xt == PC_DTYPE_INT8 ? draw_range(-128, 127) : draw_range(0, 255));
    }
    set_input(&c, 0, x, false);
    set_input(&c, 1, s, draw(2));
    if (z) set_input(&c, 2, z, draw(2));
    case_node(&c);
    qd_axis_attr(&c, per_axis, rank, axis);
    run_case(&c, stats);
    case_end(&c);
}

/* ---- QLinearConv */

typedef struct conv_cov {
    int nhwc, relu, depthwise, pointwise, grouped, strided, dilated, padded, same, one_d, per_channel, biased;
    int few_pixels;              /* fewer output pixels than channels under a kernel of several taps */
    int wide;                    /* pointwise over 150+ channels and 144+ pixels */
    int systolic, systolic_relu; /* QLinearConv_nhwc (HWIO weight), with relu = 1 */
} conv_cov;

/* 8-bit data across the type's range */
static void fill_q8(pc_data *d)
{
    int64_t lo, hi;
    q8_range(d->dtype, &lo, &hi);
    for (uint64_t i = 0; i < d->n_elements; i++)
        set_i(d, i, draw_range(lo, hi));
}

/* variant 0: NCHW, 1: channels last, 2: QLinearConvRelu; kind 0: any, 1: depthwise, 2: pointwise */
/* variant 0 NCHW, 1 channels-last (com.ms.internal.nhwc), 2 com.microsoft QLinearConvRelu, 3 the systolic
 * EP's QLinearConv_nhwc (channels-last, HWIO weight, a random relu attribute) */
static void qconv_case(op_stats *stats, conv_cov *cov, int variant, int kind)
{
    static const int64_t opsets[] = {10, 13, 19, 21};
    tcase c;
    const char *op = variant == 2 ? "QLinearConvRelu" : variant == 3 ? "QLinearConv_nhwc" : "QLinearConv";
    const char *domain = variant == 1   ? PC_NHWC_DOMAIN
                         : variant == 2 ? PC_MS_DOMAIN
                         : variant == 3 ? PC_SYSTOLIC_DOMAIN
                                        : "";
    case_begin(&c, op, domain, opsets[draw(4)]);
    int nsp = draw(4) == 0 ? 1 : 2;
    int64_t n = 1 + draw(2), group, cg, mg;
    if (kind == 1) {
        group = 2 + draw(12);
        cg = mg = 1;
    } else {
        group = draw(3) == 0 ? 1 + draw(3) : 1;
        cg = 1 + draw(draw(3) == 0 ? 24 : 6);
        mg = 1 + draw(draw(3) == 0 ? 12 : 6);
    }
    /* sometimes a wide pointwise conv: more pixels than the kernel's gemm takes in one tile of patches */
    bool wide = kind == 2 && draw(4) == 0;
    if (wide) cg = 150 + draw(200);
    int64_t cin = group * cg, m = group * mg, in[2], ker[2], st[2], dl[2], pads[4] = {0, 0, 0, 0};
    int pad_mode = kind == 2 ? 0 : (int)draw(8); /* 0 none, 1 VALID, 2 SAME_UPPER, 3 SAME_LOWER, else pads */
    for (int i = 0; i < nsp; i++) {
        ker[i] = kind == 2 ? 1 : 1 + draw(draw(4) == 0 ? 5 : 3);
        st[i] = kind == 2 || draw(2) ? 1 : 1 + draw(3);
        dl[i] = kind == 2 || draw(3) ? 1 : 2 + draw(2);
        int64_t kext = (ker[i] - 1) * dl[i] + 1;
        if (pad_mode > 3) {
            pads[i] = draw((uint32_t)kext);
            pads[nsp + i] = draw((uint32_t)kext);
        }
        in[i] = kext + draw(8) - (pads[i] + pads[nsp + i] < kext ? pads[i] + pads[nsp + i] : 0);
        if (in[i] < 1) in[i] = 1;
        if (wide) in[i] = 12 + draw(9);
    }
    pc_dtype xt = q8_type(), wt = q8_type(), yt = q8_type();
    bool nhwc = variant == 1 || variant == 3, hwio = variant == 3;
    int64_t xd[4], wd[4] = {m, cg, 0, 0};
    xd[0] = n;
    xd[nhwc ? nsp + 1 : 1] = cin;
    for (int i = 0; i < nsp; i++) {
        xd[(nhwc ? 1 : 2) + i] = in[i];
        wd[2 + i] = ker[i];
    }
    if (hwio) { /* (k..., cg, m) */
        for (int i = 0; i < nsp; i++)
            wd[i] = ker[i];
        wd[nsp] = cg;
        wd[nsp + 1] = m;
    }
    pc_data *x = tensor(xt, nsp + 2, xd), *w = tensor(wt, nsp + 2, wd);
    fill_q8(x);
    fill_q8(w);
    bool per_channel = draw(2);
    int64_t np = per_channel ? m : 1;
    pc_data *xs = param_tensor(PC_DTYPE_FLOAT, 1, draw(2)), *xz = param_tensor(xt, 1, draw(2));
    pc_data *ws = param_tensor(PC_DTYPE_FLOAT, np, draw(2)), *wz = param_tensor(wt, np, draw(2));
    pc_data *ys = param_tensor(PC_DTYPE_FLOAT, 1, draw(2)), *yz = param_tensor(yt, 1, draw(2));
    int64_t k = cg * ker[0] * (nsp == 2 ? ker[1] : 1);
    /* scales: powers of two (multipliers 2^-1..2^-8 of integer sums: ties), a y_scale matched to the sums'
     * spread, or anything from the wide range */
    int style = (int)draw(3);
    float fxs = style == 0 ? ldexpf(1.0f, (int)draw_range(-3, 3)) : scale_value();
    set_f(xs, 0, fxs);
    set_i(xz, 0, zp_value(xt));
    set_i(yz, 0, zp_value(yt));
    float wmax = 0.0f;
    for (int64_t i = 0; i < np; i++) {
        float v = style == 0 ? ldexpf(1.0f, (int)draw_range(-3, 3)) : scale_value();
        set_f(ws, (uint64_t)i, v);
        set_i(wz, (uint64_t)i, zp_value(wt));
        wmax = v > wmax ? v : wmax;
    }
    float fys;
    if (style == 0)
        fys = ldexpf(fxs * wmax, (int)draw_range(1, 8 + (int)draw(6)));
    else if (style == 1)
        fys = (float)((double)fxs * wmax * 128.0 * sqrt((double)k) * (0.05 + unit()));
    else
        fys = scale_value();
    set_f(ys, 0, fys);
    pc_data *b = NULL;
    if (draw(3)) {
        b = tensor(PC_DTYPE_INT32, 1, &m);
        for (int64_t i = 0; i < m; i++)
            set_i(b, (uint64_t)i,
                  draw(20) == 0 ? draw_range(-(1ll << 31), (1ll << 31) - 1) : draw_range(-40000, 40000));
    }
    bool wconst = draw(2);
    set_input(&c, 0, x, false);
    set_input(&c, 1, xs, draw(2));
    set_input(&c, 2, xz, draw(2));
    set_input(&c, 3, w, wconst);
    set_input(&c, 4, ws, wconst);
    set_input(&c, 5, wz, wconst);
    set_input(&c, 6, ys, draw(2));
    set_input(&c, 7, yz, draw(2));
    if (b) set_input(&c, 8, b, wconst);
    case_node(&c);
    if (group > 1 || draw(4) == 0) set_int(&c, "group", group);
    if (draw(3) == 0) set_ints(&c, "kernel_shape", (size_t)nsp, ker);
    bool strided = false, dilated = false;
    for (int i = 0; i < nsp; i++) {
        strided = strided || st[i] > 1;
        dilated = dilated || dl[i] > 1;
    }
    if (strided || draw(4) == 0) set_ints(&c, "strides", (size_t)nsp, st);
    if (dilated || draw(4) == 0) set_ints(&c, "dilations", (size_t)nsp, dl);
    static const char *const modes[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
    if (pad_mode > 3)
        set_ints(&c, "pads", 2 * (size_t)nsp, pads);
    else if (pad_mode > 0 || draw(4) == 0)
        set_string(&c, "auto_pad", modes[pad_mode]);
    int64_t relu = hwio && draw(2) ? 1 : 0;
    if (hwio && (relu || draw(2))) set_int(&c, "relu", relu);
    if (run_case(&c, stats) == R_COMPARED) {
        cov->systolic += hwio;
        cov->systolic_relu += hwio && relu;
        cov->nhwc += variant == 1;
        cov->relu += variant == 2;
        cov->depthwise += kind == 1;
        cov->pointwise += kind == 2;
        cov->grouped += group > 1 && kind != 1;
        cov->strided += strided;
        cov->dilated += dilated;
        cov->padded += pad_mode > 3 && (pads[0] || pads[1] || pads[nsp] || pads[nsp + 1]);
        cov->same += pad_mode == 2 || pad_mode == 3;
        cov->one_d += nsp == 1;
        cov->per_channel += per_channel && m > 1;
        cov->biased += b != NULL;
        cov->wide += wide && nsp == 2;
        const pc_type *out_t = &c.node->outputs[0]->type;
        int64_t pixels = 1;
        for (int32_t d = nhwc ? 1 : 2; d < (nhwc ? nsp + 1 : nsp + 2); d++)
            pixels *= out_t->shape.dims[d].size;
        cov->few_pixels += kind == 0 && ker[0] * (nsp == 2 ? ker[1] : 1) > 1 && pixels < m;
    }
    case_end(&c);
}

/* 4096 channels under a 3x3 kernel: 36864 products of magnitude 255 * 255 per output, whose sums pass 2^31
 * and wrap (more than one chunk of the kernel's int32 sums); padding varies the number of taps. */
static void qconv_big_k_case(op_stats *stats, bool nhwc)
{
    tcase c;
    case_begin(&c, "QLinearConv", nhwc ? PC_NHWC_DOMAIN : "", 13);
    pc_dtype xt = q8_type(), wt = q8_type();
    int64_t xd[4] = {1, 4096, 3, 3}, wd[4] = {2, 4096, 3, 3}, b = 2;
    if (nhwc) xd[1] = 3, xd[3] = 4096;
    pc_data *x = tensor(xt, 4, xd), *w = tensor(wt, 4, wd), *bias = tensor(PC_DTYPE_INT32, 1, &b);
    for (uint64_t i = 0; i < x->n_elements; i++)
        set_i(x, i, xt == PC_DTYPE_UINT8 ? 255 : -128);
    for (uint64_t i = 0; i < w->n_elements; i++)
        set_i(w, i, wt == PC_DTYPE_UINT8 ? (i % 7 ? 255 : 0) : (i % 7 ? -128 : 127));
    set_i(bias, 0, INT32_MAX);
    set_i(bias, 1, -12345);
    set_input(&c, 0, x, false);
    set_input(&c, 1, scalar_f(1.0f), false);
    set_input(&c, 2, scalar_i(xt, xt == PC_DTYPE_UINT8 ? 0 : 127), false);
    set_input(&c, 3, w, true);
    set_input(&c, 4, scalar_f(1e-4f), true);
    set_input(&c, 5, scalar_i(wt, wt == PC_DTYPE_UINT8 ? 0 : 127), true);
    set_input(&c, 6, scalar_f(1e4f), false);
    set_input(&c, 7, scalar_i(PC_DTYPE_INT8, 0), false);
    set_input(&c, 8, bias, true);
    case_node(&c);
    set_ints(&c, "pads", 4, (int64_t[]){1, 0, 1, 2});
    CHECK_MSG(run_case(&c, stats) == R_COMPARED, "%s: the wrapping sums", c.label);
    case_end(&c);
}

/* ---- QLinearMatMul, MatMulInteger */

typedef struct mm_cov {
    int batched, broadcast, vec_a, vec_b, row_a, col_b, many_rows;
} mm_cov;

/* A or B's shape: 1-D (vec), or batch dims derived from the output's (leading ones dropped, some 1) + 2-D */
static int32_t mm_shape(const int64_t *batch, int32_t nb, bool vec, int64_t r, int64_t c, int64_t *dims,
                        bool *broadcast)
{
    if (vec) {
        dims[0] = r;
        return 1;
    }
    int32_t drop = draw(3) == 0 ? (int32_t)draw((uint32_t)nb + 1) : 0, rank = 0;
    for (int32_t d = drop; d < nb; d++) {
        dims[rank] = draw(4) == 0 ? 1 : batch[d];
        *broadcast = *broadcast || dims[rank] != batch[d] || drop;
        rank++;
    }
    dims[rank++] = r;
    dims[rank++] = c;
    return rank;
}

/* a parameter for A (rows) or B (columns): per tensor, or per row [M] / [M, 1], per column [N] / [1, N] */
static pc_data *mm_param(pc_dtype dt, bool is_a, int64_t len, bool vary, int *varied)
{
    if (!vary || len == 1) return param_tensor(dt, 1, draw(2));
    (*varied)++;
    if (draw(2)) return tensor(dt, 1, &len);
    int64_t d[2] = {is_a ? len : 1, is_a ? 1 : len};
    return tensor(dt, 2, d);
}

static void mm_case(op_stats *stats, mm_cov *cov, bool qlinear, bool big_k, bool wide)
{
    static const int64_t opsets[] = {10, 13, 19, 21};
    tcase c;
    case_begin(&c, qlinear ? "QLinearMatMul" : "MatMulInteger", "",
               qlinear ? opsets[draw(4)] : 10 + draw(12));
    int32_t nb = (int32_t)draw(3);
    int64_t batch[2] = {1 + draw(3), 1 + draw(3)}, m = 1 + draw(draw(3) == 0 ? 20 : 6),
            k = big_k           ? 40000
                : draw(12) == 0 ? 0
                                : 1 + draw(draw(3) == 0 ? 64 : 9),
            n = 1 + draw(draw(3) == 0 ? 40 : 6);
    bool vec_a = !big_k && !wide && draw(6) == 0, vec_b = !big_k && !wide && draw(6) == 0, broadcast = false;
    if (big_k) nb = 0;
    if (wide) { /* the kernel's gemm (more than 8 rows) over more than one 32-column block of B */
        m = 9 + draw(12);
        n = 33 + draw(40);
    }
    int64_t ad[PC_MAX_RANK], bd[PC_MAX_RANK];
    int32_t ar = mm_shape(batch, nb, vec_a, vec_a ? k : m, k, ad, &broadcast);
    int32_t br = mm_shape(batch, nb, vec_b, k, n, bd, &broadcast);
    pc_dtype at = q8_type(), bt = q8_type(), yt = q8_type();
    pc_data *a = tensor(at, ar, ad), *b = tensor(bt, br, bd);
    if (big_k) { /* every product 255 * 255 with the same sign: the sum passes 2^31 and wraps */
        for (uint64_t i = 0; i < a->n_elements; i++)
            set_i(a, i, at == PC_DTYPE_UINT8 ? 255 : -128);
        for (uint64_t i = 0; i < b->n_elements; i++)
            set_i(b, i, bt == PC_DTYPE_UINT8 ? (i % 3 ? 255 : 0) : (i % 3 ? 127 : -128));
    } else {
        fill_q8(a);
        fill_q8(b);
    }
    int varied_a = 0, varied_b = 0;
    bool row_ok = ar >= 2, col_ok = br >= 2;
    int64_t rows = vec_a ? 1 : m;
    pc_data *az = NULL, *bz = NULL, *as = NULL, *bs = NULL, *ys = NULL, *yz = NULL;
    if (qlinear || draw(4)) az = mm_param(at, true, rows, row_ok && draw(2), &varied_a);
    if (qlinear || draw(4)) bz = mm_param(bt, false, n, col_ok && draw(2), &varied_b);
    if (big_k) {
        if (az) set_i(az, 0, at == PC_DTYPE_UINT8 ? 0 : 127);
        if (bz) set_i(bz, 0, bt == PC_DTYPE_UINT8 ? 0 : 127);
    } else {
        for (uint64_t i = 0; az && i < az->n_elements; i++)
            set_i(az, i, zp_value(at));
        for (uint64_t i = 0; bz && i < bz->n_elements; i++)
            set_i(bz, i, zp_value(bt));
    }
    if (qlinear) {
        as = mm_param(PC_DTYPE_FLOAT, true, rows, row_ok && draw(2), &varied_a);
        bs = mm_param(PC_DTYPE_FLOAT, false, n, col_ok && draw(2), &varied_b);
        ys = param_tensor(PC_DTYPE_FLOAT, 1, draw(2));
        yz = param_tensor(yt, 1, draw(2));
        int style = (int)draw(3);
        float amax = 0.0f, bmax = 0.0f;
        for (uint64_t i = 0; i < as->n_elements; i++) {
            float v = style == 0 ? ldexpf(1.0f, (int)draw_range(-3, 3)) : scale_value();
            set_f(as, i, v);
            amax = v > amax ? v : amax;
        }
        for (uint64_t i = 0; i < bs->n_elements; i++) {
            float v = style == 0 ? ldexpf(1.0f, (int)draw_range(-3, 3)) : scale_value();
            set_f(bs, i, v);
            bmax = v > bmax ? v : bmax;
        }
        float fys = style == 0 ? ldexpf(amax * bmax, (int)draw_range(1, 10))
                    : style == 1
                        ? (float)((double)amax * bmax * 128.0 * sqrt((double)(k ? k : 1)) * (0.05 + unit()))
                        : scale_value();
        if (big_k) fys = amax * bmax * 1e9f;
        set_f(ys, 0, fys);
        set_i(yz, 0, zp_value(yt));
    }
    set_input(&c, 0, a, false);
    if (qlinear) {
        set_input(&c, 1, as, draw(2));
        set_input(&c, 2, az, draw(2));
        bool bconst = draw(2);
        set_input(&c, 3, b, bconst);
        set_input(&c, 4, bs, bconst);
        set_input(&c, 5, bz, bconst);
        set_input(&c, 6, ys, draw(2));
        set_input(&c, 7, yz, draw(2));
    } else {
        set_input(&c, 1, b, draw(2));
        if (az || bz) set_input(&c, 2, az, draw(2));
        if (bz) set_input(&c, 3, bz, draw(2));
    }
    case_node(&c);
    if (run_case(&c, stats) == R_COMPARED) {
        cov->batched += nb > 0;
        cov->broadcast += broadcast;
        cov->vec_a += vec_a;
        cov->vec_b += vec_b;
        cov->row_a += varied_a > 0;
        cov->col_b += varied_b > 0;
        cov->many_rows += !vec_a && m > 8; /* past the kernel's row-by-row products: its gemm */
    }
    case_end(&c);
}

/* ---- fixed answers: ties to even and a wrapped sum, written out */

/* Runs a built case and compares the kernel's and the reference's output with `want` (n elements). */
static void expect_output(tcase *c, const void *want, uint64_t n, pc_dtype dt)
{
    pc_error err;
    pc_data *ref_in[MAX_IN], **ref = NULL;
    uint32_t n_ref = 0;
    for (uint32_t i = 0; i < c->n_in; i++)
        if (c->in[i] && !c->constant[i]) ref_in[n_ref++] = c->in[i];
    size_t es = pc_dtype_bits(dt) / 8;
    pc_status st = pc_ref_run(c->m, n_ref, ref_in, &ref, &err);
    CHECK_MSG(st == PC_OK && ref[0]->n_elements == n && memcmp(ref[0]->data, want, n * es) == 0,
              "%s: the reference disagrees with the written-out answer (%s)", c->label,
              st == PC_OK ? "values" : err.message);
    if (st == PC_OK) pc_ref_free_outputs(c->m, ref);
    CHECK_OK(pc_graph_infer_shapes(c->m->graph, &err), &err);
    const pc_type *yt = &c->node->outputs[0]->type;
    int64_t dims[PC_MAX_RANK];
    for (int32_t i = 0; i < yt->shape.rank; i++)
        dims[i] = yt->shape.dims[i].size;
    kernel_run r;
    st = kernel_prepare(&r, c, yt->elem, yt->shape.rank, dims);
    CHECK_MSG(st == PC_OK, "%s: prepare: %s", c->label, r.err.message);
    if (st == PC_OK) st = kernel_exec(&r, 0xa5);
    CHECK_MSG(st == PC_OK && r.tout.n == n && memcmp(r.tout.data, want, n * es) == 0,
              "%s: the kernel disagrees with the written-out answer (%s)", c->label,
              st == PC_OK ? "values" : r.err.message);
    kernel_free(&r);
}

static void test_fixed(void)
{
    /* QuantizeLinear, scale 1: halves go to the even neighbour, saturating at the int8 ends */
    {
        static const float xv[] = {-2.5f, -1.5f,  -0.5f,  0.5f,    1.5f,   2.5f,
                                   3.5f,  126.5f, 127.5f, -128.5f, -129.5f};
        static const int8_t want[] = {-2, -2, 0, 0, 2, 2, 4, 126, 127, -128, -128};
        int64_t len = 11;
        tcase c;
        case_begin(&c, "QuantizeLinear", "", 13);
        pc_data *x = tensor(PC_DTYPE_FLOAT, 1, &len);
        memcpy(x->data, xv, sizeof xv);
        set_input(&c, 0, x, false);
        set_input(&c, 1, scalar_f(1.0f), true);
        set_input(&c, 2, scalar_i(PC_DTYPE_INT8, 0), true);
        case_node(&c);
        expect_output(&c, want, 11, PC_DTYPE_INT8);
        case_end(&c);
    }
    /* QLinearConv 1x1, x_scale = w_scale = 1, y_scale 2: sums 1, 3, 5, 7 become 0.5, 1.5, 2.5, 3.5 */
    {
        static const uint8_t xv[] = {1, 3, 5, 7}, want[] = {0, 2, 2, 4};
        int64_t xd[4] = {1, 1, 2, 2}, wd[4] = {1, 1, 1, 1};
        tcase c;
        case_begin(&c, "QLinearConv", "", 10);
        pc_data *x = tensor(PC_DTYPE_UINT8, 4, xd), *w = tensor(PC_DTYPE_INT8, 4, wd);
        memcpy(x->data, xv, sizeof xv);
        set_i(w, 0, 1);
        set_input(&c, 0, x, false);
        set_input(&c, 1, scalar_f(1.0f), false);
        set_input(&c, 2, scalar_i(PC_DTYPE_UINT8, 0), false);
        set_input(&c, 3, w, true);
        set_input(&c, 4, scalar_f(1.0f), true);
        set_input(&c, 5, scalar_i(PC_DTYPE_INT8, 0), true);
        set_input(&c, 6, scalar_f(2.0f), false);
        set_input(&c, 7, scalar_i(PC_DTYPE_UINT8, 0), false);
        case_node(&c);
        expect_output(&c, want, 4, PC_DTYPE_UINT8);
        case_end(&c);
    }
    /* MatMulInteger: 40000 products of 255 * 255 sum to 2601000000, which wraps to -1693967296 */
    {
        int64_t ad[2] = {1, 40000}, bd[2] = {40000, 1};
        tcase c;
        case_begin(&c, "MatMulInteger", "", 10);
        pc_data *a = tensor(PC_DTYPE_UINT8, 2, ad), *b = tensor(PC_DTYPE_UINT8, 2, bd);
        memset(a->data, 255, a->n_bytes);
        memset(b->data, 255, b->n_bytes);
        set_input(&c, 0, a, false);
        set_input(&c, 1, b, false);
        case_node(&c);
        int32_t want = -1693967296;
        expect_output(&c, &want, 1, PC_DTYPE_INT32);
        case_end(&c);
    }
}

/* ---- the multiplier's arithmetic */

/* saturate(rint(v)) to int8 */
static int64_t sat8(float v)
{
    float r = nearbyintf(v);
    return r < -128.0f ? -128 : r > 127.0f ? 127 : (int64_t)r;
}

/* Alternatives to the reference's float(acc) * (float(x_scale * w_scale) / y_scale) that agree except within
 * an ulp of a tie: the multiplier in double, multiplier and product in double, y_scale as a reciprocal, the
 * product in double from the exact sum (float(acc) rounds from 2^24). */
enum { N_ALT = 4, ALT_SUMS = 12 };
static bool alt_differs(int alt, int32_t acc, float xs, float ws, float ys)
{
    float m = (xs * ws) / ys, ref = (float)acc * m, v;
    double md = (double)xs * (double)ws / (double)ys;
    if (alt == 0)
        v = (float)acc * (float)md;
    else if (alt == 1)
        v = (float)((double)acc * md);
    else if (alt == 2)
        v = (float)acc * ((xs * ws) * (1.0f / ys));
    else
        v = (float)((double)acc * (double)m);
    return sat8(v) != sat8(ref);
}

/* How the sums are made: acc = big * (sum of a's first k_big terms) + (sum of its next k_small terms), with
 * b's terms big and 1 after its zero point b_zp; a second column of b repeats them, negated when `negate`. */
typedef struct selector {
    int32_t big, b_zp;
    int64_t k_big, k_small;
    bool negate;
} selector;

/* Each sum as a row of a [R, K] x [K, 2] QLinearMatMul, as pixels of a 1x1 QLinearConv over K channels and
 * as the outputs of a depthwise QLinearConv whose 1-D kernel of K taps strides K (both NCHW and channels
 * last), all with the given scales. */
static void run_sums(const selector *sl, const int32_t *sums, int64_t rows, float xs, float ws, float ys,
                     op_stats *conv, op_stats *matmul)
{
    int64_t k = sl->k_big + sl->k_small, cols = 2;
    uint8_t *sel = calloc((size_t)(rows * k), 1);
    if (!sel) pt_die("calloc", NULL);
    for (int64_t r = 0; r < rows; r++) {
        int64_t q = sums[r] / sl->big, rem = sums[r] % sl->big;
        for (int64_t i = 0; i < sl->k_big && q > 0; i++) {
            int64_t take = q < 255 ? q : 255;
            sel[r * k + i] = (uint8_t)take;
            q -= take;
        }
        for (int64_t i = sl->k_big; i < k && rem > 0; i++) {
            int64_t take = rem < 255 ? rem : 255;
            sel[r * k + i] = (uint8_t)take;
            rem -= take;
        }
        if (q != 0 || rem != 0) pt_die("a sum too large to select", NULL);
    }
    /* variants: 1x1 conv NCHW, channels last; matmul; depthwise NCHW, channels last */
    for (int variant = 0; variant < 5; variant++) {
        tcase c;
        pc_data *a, *b;
        bool nhwc = variant == 1 || variant == 4;
        if (variant >= 3) {
            case_begin(&c, "QLinearConv", nhwc ? PC_NHWC_DOMAIN : "", 13);
            int64_t xd[3] = {1, cols, rows * k}, wd[3] = {cols, 1, k};
            if (nhwc) xd[1] = rows * k, xd[2] = cols;
            a = tensor(PC_DTYPE_UINT8, 3, xd);
            b = tensor(PC_DTYPE_INT8, 3, wd);
            for (int64_t j = 0; j < cols; j++)
                for (int64_t i = 0; i < rows * k; i++)
                    set_i(a, (uint64_t)(nhwc ? i * cols + j : j * rows * k + i), sel[i]);
        } else if (variant < 2) {
            case_begin(&c, "QLinearConv", nhwc ? PC_NHWC_DOMAIN : "", 13);
            int64_t xd[4] = {1, k, rows, 1}, wd[4] = {cols, k, 1, 1};
            if (nhwc) xd[1] = rows, xd[3] = k;
            a = tensor(PC_DTYPE_UINT8, 4, xd);
            b = tensor(PC_DTYPE_INT8, 4, wd);
        } else {
            case_begin(&c, "QLinearMatMul", "", 13);
            int64_t ad[2] = {rows, k}, bd[2] = {k, cols};
            a = tensor(PC_DTYPE_UINT8, 2, ad);
            b = tensor(PC_DTYPE_INT8, 2, bd);
        }
        for (int64_t r = 0; r < rows && variant < 3; r++)
            for (int64_t i = 0; i < k; i++)
                set_i(a, (uint64_t)(variant == 0 ? i * rows + r : r * k + i), sel[r * k + i]);
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < cols; j++) {
                int64_t v = (i < sl->k_big ? sl->big : 1) * (j && sl->negate ? -1 : 1) + sl->b_zp;
                set_i(b, (uint64_t)(variant != 2 ? j * k + i : i * cols + j), v);
            }
        set_input(&c, 0, a, false);
        set_input(&c, 1, scalar_f(xs), false);
        set_input(&c, 2, scalar_i(PC_DTYPE_UINT8, 0), false);
        set_input(&c, 3, b, true);
        set_input(&c, 4, scalar_f(ws), true);
        set_input(&c, 5, scalar_i(PC_DTYPE_INT8, sl->b_zp), true);
        set_input(&c, 6, scalar_f(ys), false);
        set_input(&c, 7, scalar_i(PC_DTYPE_INT8, 0), false);
        case_node(&c);
        if (variant >= 3) {
            set_int(&c, "group", cols);
            set_ints(&c, "strides", 1, &k);
        }
        CHECK_MSG(run_case(&c, variant == 2 ? matmul : conv) == R_COMPARED, "%s: the multiplier case",
                  c.label);
        case_end(&c);
    }
    free(sel);
}

/* Scales whose rounding the alternatives change, and sums each alternative rounds differently (random
 * inputs almost never hit them: the product must lie within an ulp of a tie): all of [1, 2^20) searched for
 * the first three, samples of [2^24, 2^31) for the last; then those sums through the kernels. */
static void test_multiplier(op_stats *conv, op_stats *matmul)
{
    for (int regime = 0; regime < 2; regime++) {
        bool large = regime == 1;
        float xs = 0, ws = 0, ys = 0;
        int32_t sums[N_ALT * ALT_SUMS];
        int n_sums = 0, tries = 0, found[N_ALT] = {0};
        bool done = false;
        while (!done && tries++ < 200) {
            xs = (float)(0.01 + unit());
            ws = (float)(0.01 + unit());
            /* the largest sums reach about +-127 */
            ys = xs * ws * (float)((large ? 2147483648.0 : 1048576.0) / 127.0 / (0.5 + 0.5 * unit()));
            n_sums = 0;
            for (int alt = large ? 3 : 0; alt < (large ? 4 : 3); alt++) {
                found[alt] = 0;
                for (int64_t i = 0; i < (large ? 4000000 : (1 << 20) - 1) && found[alt] < ALT_SUMS; i++) {
                    int32_t acc = large ? (int32_t)draw_range(1 << 24, 2122416000) : (int32_t)(i + 1);
                    if (alt_differs(alt, acc, xs, ws, ys)) {
                        sums[n_sums++] = acc;
                        found[alt]++;
                    }
                }
            }
            done = large ? found[3] > 0 : found[0] && found[1] && found[2];
        }
        CHECK_MSG(done, "no scales on which the multiplier's arithmetic shows (%s sums, %d tries)",
                  large ? "large" : "small", tries);
        if (!done) continue;
        if (getenv("QUANT_VERBOSE"))
            fprintf(stderr, "multiplier: scales %.9g %.9g %.9g after %d tries: %d %d %d %d sums\n",
                    (double)xs, (double)ws, (double)ys, tries, found[0], found[1], found[2], found[3]);
        /* small: 40 terms of 127 and 24 of 1, and the negations; large (b's zero point -128 makes 127 into
         * 255): 32640 terms of 255 reach 2122416000, a depthwise kernel can still take them */
        selector small = {127, 0, 40, 24, true}, big = {255, -128, 32640, 64, false};
        run_sums(large ? &big : &small, sums, n_sums, xs, ws, ys, conv, matmul);
    }
}

/* ---- refusals */

/* prepare's status on the case with the given output (no shape inference: some of these it refuses) */
static pc_status prepare_status(tcase *c, pc_dtype out_dt, int32_t out_rank, const int64_t *out_dims,
                                char *msg, size_t size)
{
    kernel_run r;
    pc_status st = kernel_prepare(&r, c, out_dt, out_rank, out_dims);
    snprintf(msg, size, "%s", r.row ? r.err.message : "no kernel row");
    if (!r.row) st = PC_ERR_INTERNAL;
    kernel_free(&r);
    return st;
}

static pc_data *filled(pc_dtype dt, int32_t rank, const int64_t *dims)
{
    pc_data *d = tensor(dt, rank, dims);
    memset(d->data, dt == PC_DTYPE_FLOAT ? 0 : 1, d->n_bytes);
    for (uint64_t i = 0; dt == PC_DTYPE_FLOAT && i < d->n_elements; i++)
        set_f(d, i, 0.5f);
    return d;
}

/* a QLinearConv over x dims xd with W dims wd, uint8 everywhere */
static void qconv_refusal_case(tcase *c, int32_t rank, const int64_t *xd, const int64_t *wd)
{
    case_begin(c, "QLinearConv", "", 13);
    set_input(c, 0, filled(PC_DTYPE_UINT8, rank, xd), false);
    set_input(c, 1, scalar_f(0.5f), false);
    set_input(c, 2, scalar_i(PC_DTYPE_UINT8, 0), false);
    set_input(c, 3, filled(PC_DTYPE_UINT8, rank, wd), false);
    set_input(c, 4, scalar_f(0.5f), false);
    set_input(c, 5, scalar_i(PC_DTYPE_UINT8, 0), false);
    set_input(c, 6, scalar_f(0.5f), false);
    set_input(c, 7, scalar_i(PC_DTYPE_UINT8, 0), false);
    case_node(c);
}

static void expect_refusal(tcase *c, pc_dtype out_dt, int32_t out_rank, const int64_t *out_dims,
                           pc_status want, const char *needle)
{
    char msg[1024];
    pc_status st = prepare_status(c, out_dt, out_rank, out_dims, msg, sizeof msg);
    CHECK_MSG(st == want && (!needle || strstr(msg, needle)), "%s: prepare gave %s (%s), expected %s",
              c->label, pc_status_name(st), msg, pc_status_name(want));
    case_end(c);
}

static void test_refusals(void)
{
    tcase c;
    int64_t d4[4] = {1, 2, 3, 4}, d1 = 2;
    /* three spatial axes */
    int64_t x5[5] = {1, 2, 3, 3, 3}, w5[5] = {2, 2, 1, 1, 1};
    qconv_refusal_case(&c, 5, x5, w5);
    expect_refusal(&c, PC_DTYPE_UINT8, 5, x5, PC_ERR_UNSUPPORTED, "spatial");
    /* pads with the wrong count; output dims that do not follow from the attributes */
    int64_t x4[4] = {1, 2, 5, 5}, w4[4] = {3, 2, 3, 3}, y4[4] = {1, 3, 3, 3}, bad[4] = {1, 3, 4, 3};
    qconv_refusal_case(&c, 4, x4, w4);
    set_ints(&c, "pads", 2, (int64_t[]){1, 1});
    expect_refusal(&c, PC_DTYPE_UINT8, 4, y4, PC_ERR_ATTRIBUTE, "pads");
    qconv_refusal_case(&c, 4, x4, w4);
    expect_refusal(&c, PC_DTYPE_UINT8, 4, bad, PC_ERR_SHAPE, "output");
    qconv_refusal_case(&c, 4, x4, w4);
    set_ints(&c, "strides", 2, (int64_t[]){0, 1});
    expect_refusal(&c, PC_DTYPE_UINT8, 4, y4, PC_ERR_ATTRIBUTE, "strides");
    qconv_refusal_case(&c, 4, x4, w4);
    set_string(&c, "auto_pad", "SAME");
    expect_refusal(&c, PC_DTYPE_UINT8, 4, y4, PC_ERR_ATTRIBUTE, "auto_pad");
    qconv_refusal_case(&c, 4, x4, w4);
    expect_refusal(&c, PC_DTYPE_UINT8, 4, y4, PC_OK, NULL); /* the same conv, well formed */

    /* QuantizeLinear: blocked (opset 21), to int16, a float16 scale, a bad axis, a short per-axis scale */
    case_begin(&c, "QuantizeLinear", "", 21);
    set_input(&c, 0, filled(PC_DTYPE_FLOAT, 4, d4), false);
    set_input(&c, 1, filled(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 1, 3, 2}), false);
    case_node(&c);
    set_int(&c, "block_size", 2);
    expect_refusal(&c, PC_DTYPE_UINT8, 4, d4, PC_ERR_UNSUPPORTED, "block");
    case_begin(&c, "QuantizeLinear", "", 21);
    set_input(&c, 0, filled(PC_DTYPE_FLOAT, 4, d4), false);
    set_input(&c, 1, scalar_f(1.0f), false);
    set_input(&c, 2, scalar_i(PC_DTYPE_INT16, 0), false);
    case_node(&c);
    expect_refusal(&c, PC_DTYPE_INT16, 4, d4, PC_ERR_UNSUPPORTED, "int16");
    case_begin(&c, "DequantizeLinear", "", 19);
    set_input(&c, 0, filled(PC_DTYPE_UINT8, 4, d4), false);
    set_input(&c, 1, filled(PC_DTYPE_FLOAT16, 0, NULL), false);
    case_node(&c);
    expect_refusal(&c, PC_DTYPE_FLOAT16, 4, d4, PC_ERR_UNSUPPORTED, "float16");
    case_begin(&c, "QuantizeLinear", "", 13);
    set_input(&c, 0, filled(PC_DTYPE_FLOAT, 4, d4), false);
    set_input(&c, 1, filled(PC_DTYPE_FLOAT, 1, &d1), false);
    case_node(&c);
    set_int(&c, "axis", 4);
    expect_refusal(&c, PC_DTYPE_UINT8, 4, d4, PC_ERR_ATTRIBUTE, "axis");
    case_begin(&c, "DequantizeLinear", "", 13);
    set_input(&c, 0, filled(PC_DTYPE_INT8, 4, d4), false);
    set_input(&c, 1, filled(PC_DTYPE_FLOAT, 1, (int64_t[]){3}), false);
    case_node(&c);
    set_int(&c, "axis", 3);
    expect_refusal(&c, PC_DTYPE_FLOAT, 4, d4, PC_ERR_SHAPE, "per-axis");
    case_begin(&c, "QuantizeLinear", "", 10);
    set_input(&c, 0, filled(PC_DTYPE_FLOAT, 4, d4), false);
    set_input(&c, 1, filled(PC_DTYPE_FLOAT, 1, &d1), false);
    case_node(&c);
    expect_refusal(&c, PC_DTYPE_UINT8, 4, d4, PC_ERR_SHAPE, "opset 13");

    /* QLinearMatMul: b_scale varying along a batch axis; a per-column y_scale */
    int64_t ad[3] = {2, 3, 4}, bd[3] = {2, 4, 5}, yd[3] = {2, 3, 5};
    for (int form = 0; form < 2; form++) {
        case_begin(&c, "QLinearMatMul", "", 13);
        set_input(&c, 0, filled(PC_DTYPE_UINT8, 3, ad), false);
        set_input(&c, 1, scalar_f(0.5f), false);
        set_input(&c, 2, scalar_i(PC_DTYPE_UINT8, 1), false);
        set_input(&c, 3, filled(PC_DTYPE_INT8, 3, bd), false);
        set_input(&c, 4, form == 0 ? filled(PC_DTYPE_FLOAT, 3, (int64_t[]){2, 1, 5}) : scalar_f(0.5f), false);
        set_input(&c, 5, scalar_i(PC_DTYPE_INT8, 0), false);
        set_input(&c, 6, form == 1 ? filled(PC_DTYPE_FLOAT, 1, (int64_t[]){5}) : scalar_f(0.5f), false);
        set_input(&c, 7, scalar_i(PC_DTYPE_UINT8, 0), false);
        case_node(&c);
        expect_refusal(&c, PC_DTYPE_UINT8, 3, yd, PC_ERR_UNSUPPORTED, form == 0 ? "b_scale" : "output scale");
    }

    /* DequantizeLinear of int32 with a non-zero zero point: an error when it runs */
    case_begin(&c, "DequantizeLinear", "", 13);
    set_input(&c, 0, filled(PC_DTYPE_INT32, 4, d4), false);
    set_input(&c, 1, scalar_f(1.0f), false);
    set_input(&c, 2, scalar_i(PC_DTYPE_INT32, 3), false);
    case_node(&c);
    kernel_run r;
    pc_status st = kernel_prepare(&r, &c, PC_DTYPE_FLOAT, 4, d4);
    if (st == PC_OK) st = kernel_exec(&r, 0);
    CHECK_MSG(st == PC_ERR_VALUE, "int32 DequantizeLinear with zero point 3: %s (%s)", pc_status_name(st),
              r.err.message);
    kernel_free(&r);
    case_end(&c);

    /* opset ranges and types the table claims */
    static const struct {
        const char *op, *domain;
        int64_t opset;
        pc_dtype dt;
        bool claimed;
    } rows[] = {
        {"QuantizeLinear", "", 9, PC_DTYPE_FLOAT, false},
        {"QuantizeLinear", "", 10, PC_DTYPE_FLOAT, true},
        {"QuantizeLinear", "", 21, PC_DTYPE_INT32, true},
        {"QuantizeLinear", "", 13, PC_DTYPE_FLOAT16, false},
        {"DequantizeLinear", "", 13, PC_DTYPE_INT32, true},
        {"DequantizeLinear", "", 21, PC_DTYPE_INT16, false},
        {"QLinearConv", "", 10, PC_DTYPE_INT8, true},
        {"QLinearConv", PC_NHWC_DOMAIN, 13, PC_DTYPE_UINT8, true},
        {"QLinearConvRelu", PC_MS_DOMAIN, 1, PC_DTYPE_UINT8, true},
        {"QLinearConv", "", 10, PC_DTYPE_FLOAT, false},
        {"QLinearMatMul", "", 21, PC_DTYPE_INT8, true},
        {"MatMulInteger", "", 9, PC_DTYPE_UINT8, false},
        {"ConvInteger", "", 10, PC_DTYPE_UINT8, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        pc_model *m = pt_model(rows[i].opset);
        pc_node *node = pc_graph_new_node(m->graph, rows[i].op, rows[i].domain);
        bool claimed = node && quant_row(node, rows[i].opset, rows[i].dt) != NULL;
        CHECK_MSG(claimed == rows[i].claimed, "%s-%lld on %s: %s", rows[i].op, (long long)rows[i].opset,
                  pc_dtype_name(rows[i].dt), rows[i].claimed ? "not claimed" : "claimed");
        pc_model_free(m);
    }
}

/* com.microsoft QLinearAdd: A and B of one 8-bit type with shapes that broadcast (equal, scalars, size-1
 * axes, fewer axes on either side), scales across the range or matched to the sum's spread, zero points
 * present or omitted (then 0). */
static void qadd_case(op_stats *stats, int *broadcast, int *omitted_zp, bool systolic)
{
    tcase c;
    case_begin(&c, "QLinearAdd", systolic ? PC_SYSTOLIC_DOMAIN : PC_MS_DOMAIN, 13);
    pc_dtype t = q8_type();
    int32_t rank = (int32_t)draw(5), rs = rank ? rank - (int32_t)draw((uint32_t)rank + 1) : 0;
    int64_t dims[4], full[4], small[4];
    for (int32_t d = 0; d < rank; d++)
        dims[d] = 1 + draw(5);
    for (int32_t d = 0; d < rank; d++)
        full[d] = draw(4) == 0 ? 1 : dims[d];
    for (int32_t d = 0; d < rs; d++)
        small[d] = draw(3) == 0 ? 1 : dims[rank - rs + d];
    bool a_small = draw(2);
    pc_data *a = a_small ? tensor(t, rs, small) : tensor(t, rank, full);
    pc_data *b = a_small ? tensor(t, rank, full) : tensor(t, rs, small);
    if (systolic) { /* the systolic add takes one shape (its shape rule refuses others; test_passes_systolic)
                     */
        pc_data_unref(b);
        b = tensor(t, a->rank, a->dims);
    }
    fill_q8(a);
    fill_q8(b);
    float as = scale_value(), bs = draw(3) ? scale_value() : as;
    float cs = draw(2) ? scale_value() : (float)((as + bs) * (0.3 + 1.5 * unit()));
    set_input(&c, 0, a, false);
    set_input(&c, 1, scalar_f(as), draw(2));
    bool omit = false;
    pc_data *az = draw(4) ? scalar_i(t, zp_value(t)) : NULL, *bz = draw(4) ? scalar_i(t, zp_value(t)) : NULL;
    set_input(&c, 2, az, draw(2));
    set_input(&c, 3, b, draw(5) == 0);
    set_input(&c, 4, scalar_f(bs), draw(2));
    set_input(&c, 5, bz, draw(2));
    set_input(&c, 6, scalar_f(cs), draw(2));
    if (draw(4)) set_input(&c, 7, scalar_i(t, zp_value(t)), draw(2));
    omit = !az || !bz || c.n_in < 8;
    case_node(&c);
    bool differ =
        a->rank != b->rank || (a->rank && memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]));
    if (run_case(&c, stats) == R_COMPARED) {
        *broadcast += differ;
        *omitted_zp += omit;
    }
    case_end(&c);
}

/* The systolic EP's QLinearRelu: X [, X_zero_point] -> max(X, zero point). */
static void qrelu_case(op_stats *stats, int *omitted_zp)
{
    tcase c;
    case_begin(&c, "QLinearRelu", PC_SYSTOLIC_DOMAIN, 13);
    pc_dtype t = q8_type();
    int32_t rank = (int32_t)draw(5);
    int64_t dims[4];
    for (int32_t d = 0; d < rank; d++)
        dims[d] = 1 + draw(6);
    pc_data *x = tensor(t, rank, dims);
    fill_q8(x);
    set_input(&c, 0, x, false);
    bool omit = draw(4) == 0;
    if (!omit) set_input(&c, 1, scalar_i(t, zp_value(t)), draw(2));
    case_node(&c);
    if (run_case(&c, stats) == R_COMPARED) *omitted_zp += omit;
    case_end(&c);
}

int main(void)
{
    op_stats q = {"QuantizeLinear", 0, 0, 0, 0}, dq = {"DequantizeLinear", 0, 0, 0, 0},
             qc = {"QLinearConv", 0, 0, 0, 0}, qm = {"QLinearMatMul", 0, 0, 0, 0},
             mi = {"MatMulInteger", 0, 0, 0, 0}, qa = {"QLinearAdd", 0, 0, 0, 0},
             sa = {"QLinearAdd (systolic)", 0, 0, 0, 0}, sr = {"QLinearRelu (systolic)", 0, 0, 0, 0};
    for (int i = 0; i < 400; i++)
        quantize_case(&q);
    for (int i = 0; i < 300; i++)
        dequantize_case(&dq);
    conv_cov cc = {0};
    for (int i = 0; i < 800; i++)
        qconv_case(&qc, &cc, i % 4, i % 5 == 1 ? 1 : i % 5 == 2 ? 2 : 0);
    qconv_big_k_case(&qc, false);
    qconv_big_k_case(&qc, true);
    mm_cov mc = {0};
    for (int i = 0; i < 300; i++) {
        mm_case(&qm, &mc, true, i == 0, i % 8 == 1);
        mm_case(&mi, &mc, false, i == 0, i % 8 == 1);
    }
    int qa_broadcast = 0, qa_omitted = 0;
    for (int i = 0; i < 400; i++)
        qadd_case(&qa, &qa_broadcast, &qa_omitted, false);
    int sa_broadcast = 0, sa_omitted = 0, sr_omitted = 0;
    for (int i = 0; i < 250; i++) {
        qadd_case(&sa, &sa_broadcast, &sa_omitted, true);
        qrelu_case(&sr, &sr_omitted);
    }
    CHECK_MSG(sa_broadcast == 0 && sa_omitted > 50 && sr_omitted > 30,
              "systolic coverage: broadcast %d, omitted zero points %d (add) %d (relu)", sa_broadcast,
              sa_omitted, sr_omitted);
    CHECK_MSG(qa_broadcast > 100 && qa_omitted > 100,
              "QLinearAdd coverage: broadcast %d, omitted zero points %d", qa_broadcast, qa_omitted);
    test_fixed();
    test_multiplier(&qc, &qm);
    test_refusals();
    const op_stats *all[] = {&q, &dq, &qc, &qm, &mi, &qa, &sa, &sr};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        CHECK_MSG(all[i]->compared >= 200 && all[i]->planted == 1, "%s: %d cases compared, %d planted",
                  all[i]->op, all[i]->compared, all[i]->planted);
        printf("test_runtime_quant: %s: %d cases equal to the reference (%d elements), %d refused by both\n",
               all[i]->op, all[i]->compared, all[i]->elements, all[i]->refused);
    }
    CHECK_MSG(n_ties > 500, "only %d exact ties quantized", n_ties);
    CHECK_MSG(
        cc.nhwc > 50 && cc.relu > 50 && cc.depthwise > 50 && cc.pointwise > 50 && cc.grouped > 20 &&
            cc.strided > 50 && cc.dilated > 30 && cc.padded > 50 && cc.same > 30 && cc.one_d > 50 &&
            cc.per_channel > 100 && cc.biased > 100 && cc.few_pixels > 20 && cc.wide > 10 &&
            cc.systolic > 100 && cc.systolic_relu > 40,
        "conv coverage: nhwc %d relu %d depthwise %d pointwise %d grouped %d strided %d dilated %d padded %d "
        "same %d 1-D %d per-channel %d bias %d few-pixels %d wide %d systolic %d (relu %d)",
        cc.nhwc, cc.relu, cc.depthwise, cc.pointwise, cc.grouped, cc.strided, cc.dilated, cc.padded, cc.same,
        cc.one_d, cc.per_channel, cc.biased, cc.few_pixels, cc.wide, cc.systolic, cc.systolic_relu);
    CHECK_MSG(
        mc.batched > 50 && mc.broadcast > 30 && mc.vec_a > 20 && mc.vec_b > 20 && mc.row_a > 50 &&
            mc.col_b > 50 && mc.many_rows > 50,
        "matmul coverage: batched %d broadcast %d 1-D A %d 1-D B %d per-row A %d per-column B %d, more than "
        "8 rows %d",
        mc.batched, mc.broadcast, mc.vec_a, mc.vec_b, mc.row_a, mc.col_b, mc.many_rows);
    printf("test_runtime_quant: %d exact ties quantized\n", n_ties);
    return pc_test_finish("test_runtime_quant");
}
