/* The runtime's nn kernels (core/runtime/kernels/nn.c) against the reference executor. Each case is a
 * one-node model: the kernel row comes from pc_rt_kernel_find (by input 0's type), the output types and dims
 * from core's shape inference (declared on the outputs it has no rule for; output 0 checked against the
 * reference's), prepare runs with the shapes only (data NULL, as at session creation), then run, and every
 * element of every output the node names must be within 1e-4 * (1 + |reference|) of the reference, with NaN
 * where the reference has NaN and equal infinities. Outputs start as a sentinel, so an element the kernel
 * never writes fails too; once per op a planted error in output 0 must be seen, so the comparison can fail.
 *
 * Random cases: MaxPool and AveragePool over 1-3 spatial axes (kernel, strides, dilations, asymmetric pads,
 * auto_pad, ceil_mode, count_include_pad, the opsets where each attribute exists; MaxPool also on double,
 * uint8 and int8 and with Indices in both storage orders), the Global pools, BatchNormalization (also in
 * training mode with its running or batch statistics), InstanceNormalization (also with a mean far above the
 * spread), LRN (the sqrt betas and a general one), each in NCHW and in the channels-last com.ms.internal.nhwc
 * form; Softmax and LogSoftmax before and after opset 13 (NaN, infinities, wide values); LayerNormalization
 * with broadcast Scale and B and its Mean/InvStdDev outputs (float or double stash); Hardmax (ties, NaN,
 * double); Dropout in inference and zero-ratio training with its mask; NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (any rank, int32/int64 targets, ignore_index, weights, every reduction, log_prob,
 * double). A case where the reference refuses (a window of padding only) must be refused by prepare too.
 * Then the refusals: Indices of a channels-last MaxPool, BatchNormalization's saved_var and statistics
 * without training, spatial=0, a float16 Mean, missing or malformed attributes, attributes the opset does not
 * define, wrong output dims; and what only run sees: a target outside [0, C), training-mode Dropout with a
 * ratio above 0. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x6e6e2d6b65726e6cull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

static double unit(void)
{
    return (double)(pc_splitmix64(&rng_state) >> 11) / 9007199254740992.0;
}

static float uniform(double lo, double hi)
{
    return (float)(lo + (hi - lo) * unit());
}

/* uniform in double (the double cases get digits float would not have) */
static double lo_hi(double lo, double hi)
{
    return lo + (hi - lo) * unit();
}

/* ---- cases
 * --------------------------------------------------------------------------------------------------- */

enum fill {
    FILL_PLAIN,    /* [-2, 2) */
    FILL_SPECIAL,  /* [-2, 2) with a few NaN, +inf and -inf */
    FILL_POSITIVE, /* [0.05, 2): variances */
    FILL_OFFSET,   /* 300 + [-0.05, 0.05): a mean far above the spread */
    FILL_WIDE,     /* [-90, 90): past float exp's range, for softmax */
    FILL_TIES,     /* {-1, 0, 1}: ties for the argmax-like ops */
};

enum { MAX_IN = 5 };

typedef struct tcase {
    pc_model *m;
    pc_node *node;
    uint32_t n_in;
    pc_data *in[MAX_IN];
    double strict_rtol; /* > 0: also |a - b| <= strict_rtol * |b| (for exp's precision) */
    char label[512];
} tcase;

#define label_add(c, ...) pc_test_appendf((c)->label, sizeof(c)->label, __VA_ARGS__)

static void label_dims(tcase *c, int32_t rank, const int64_t *dims)
{
    label_add(c, "(");
    for (int32_t i = 0; i < rank; i++)
        label_add(c, "%s%lld", i ? "," : "", (long long)dims[i]);
    label_add(c, ")");
}

static void case_begin(tcase *c, const char *op, int64_t opset, bool nhwc)
{
    memset(c, 0, sizeof *c);
    c->m = pt_model(opset);
    pc_error err;
    /* the NHWC domain's import carries the ai.onnx opset, as the layout transformer writes it */
    if (nhwc && pc_model_set_opset(c->m, PC_NHWC_DOMAIN, opset, &err) != PC_OK) pt_die("opset", &err);
    label_add(c, "%s%s opset %lld", nhwc ? "nhwc." : "", op, (long long)opset);
}

/* Element i of a tensor of the types the cases use, as a double. */
static double elem_get(pc_dtype t, const void *data, uint64_t i)
{
    switch (t) {
    case PC_DTYPE_FLOAT:
        return ((const float *)data)[i];
    case PC_DTYPE_DOUBLE:
        return ((const double *)data)[i];
    case PC_DTYPE_INT64:
        return (double)((const int64_t *)data)[i];
    case PC_DTYPE_INT32:
        return ((const int32_t *)data)[i];
    case PC_DTYPE_INT8:
        return ((const int8_t *)data)[i];
    case PC_DTYPE_UINT8:
    case PC_DTYPE_BOOL:
        return ((const uint8_t *)data)[i];
    default:
        pt_die("elem_get: a type the cases do not use", NULL);
        return 0;
    }
}

static void elem_set(pc_dtype t, void *data, uint64_t i, double v)
{
    switch (t) {
    case PC_DTYPE_FLOAT:
        ((float *)data)[i] = (float)v;
        break;
    case PC_DTYPE_DOUBLE:
        ((double *)data)[i] = v;
        break;
    case PC_DTYPE_INT64:
        ((int64_t *)data)[i] = (int64_t)v;
        break;
    case PC_DTYPE_INT32:
        ((int32_t *)data)[i] = (int32_t)v;
        break;
    case PC_DTYPE_INT8:
        ((int8_t *)data)[i] = (int8_t)v;
        break;
    case PC_DTYPE_UINT8:
    case PC_DTYPE_BOOL:
        ((uint8_t *)data)[i] = (uint8_t)v;
        break;
    default:
        pt_die("elem_set: a type the cases do not use", NULL);
    }
}

/* A tensor of `dtype`: floating types filled as `kind` says; integer types with small integers in their
 * range (ties included), bool with 0/1. */
static pc_data *make_data_typed(pc_dtype dtype, int32_t rank, const int64_t *dims, enum fill kind)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(dtype, rank, dims, &err);
    if (!d) pt_die("tensor", &err);
    if (dtype == PC_DTYPE_FLOAT || dtype == PC_DTYPE_DOUBLE) {
        for (uint64_t i = 0; i < d->n_elements; i++) {
            uint32_t r = draw(40);
            double v = 0;
            switch (kind) {
            case FILL_PLAIN:
                v = lo_hi(-2, 2);
                break;
            case FILL_SPECIAL:
                v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : lo_hi(-2, 2);
                break;
            case FILL_POSITIVE:
                v = lo_hi(0.05, 2);
                break;
            case FILL_OFFSET:
                v = 300.0 + lo_hi(-0.05, 0.05);
                break;
            case FILL_WIDE:
                v = lo_hi(-90, 90);
                break;
            case FILL_TIES:
                v = (double)draw(3) - 1.0;
                break;
            }
            elem_set(dtype, d->data, i, v);
        }
        return d;
    }
    for (uint64_t i = 0; i < d->n_elements; i++) {
        double v = dtype == PC_DTYPE_BOOL    ? (double)draw(2)
                   : dtype == PC_DTYPE_UINT8 ? (double)draw(256)
                   : dtype == PC_DTYPE_INT8  ? (double)draw(256) - 128.0
                                             : (double)draw(200) - 100.0;
        elem_set(dtype, d->data, i, v);
    }
    return d;
}

static pc_data *make_data(int32_t rank, const int64_t *dims, enum fill kind)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(PC_DTYPE_FLOAT, rank, dims, &err);
    if (!d) pt_die("tensor", &err);
    float *v = d->data;
    for (uint64_t i = 0; i < d->n_elements; i++) {
        uint32_t r = draw(40);
        switch (kind) {
        case FILL_PLAIN:
            v[i] = uniform(-2, 2);
            break;
        case FILL_SPECIAL:
            v[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : uniform(-2, 2);
            break;
        case FILL_POSITIVE:
            v[i] = uniform(0.05, 2);
            break;
        case FILL_OFFSET:
            v[i] = 300.0f + uniform(-0.05, 0.05);
            break;
        case FILL_WIDE:
            v[i] = uniform(-90, 90);
            break;
        case FILL_TIES:
            v[i] = (float)draw(3) - 1.0f;
            break;
        }
    }
    return d;
}

static void add_input(tcase *c, const char *name, int32_t rank, const int64_t *dims, enum fill kind)
{
    if (c->n_in == MAX_IN) pt_die("too many inputs", NULL);
    pt_input(c->m, name, PC_DTYPE_FLOAT, rank, dims);
    c->in[c->n_in++] = make_data(rank, dims, kind);
    label_add(c, " %s", name);
    label_dims(c, rank, dims);
}

/* A typed input; returns its data for the caller to adjust (targets, scalars). */
static pc_data *add_input_typed(tcase *c, const char *name, pc_dtype dtype, int32_t rank, const int64_t *dims,
                                enum fill kind)
{
    if (c->n_in == MAX_IN) pt_die("too many inputs", NULL);
    pt_input(c->m, name, dtype, rank, dims);
    c->in[c->n_in] = make_data_typed(dtype, rank, dims, kind);
    label_add(c, " %s:%s", name, pc_dtype_name(dtype));
    label_dims(c, rank, dims);
    return c->in[c->n_in++];
}

/* Every output the node names becomes a graph output, in order (the reference returns them so). */
static void add_node(tcase *c, const char *op, bool nhwc, const char *inputs, const char *outputs)
{
    c->node = pt_node(c->m, op, nhwc ? PC_NHWC_DOMAIN : "", inputs, outputs, NULL);
    for (uint32_t i = 0; i < c->node->n_outputs; i++)
        if (c->node->outputs[i]) pt_output(c->m, c->node->outputs[i]->name);
    if (c->node->n_outputs > 1) label_add(c, " -> %s", outputs);
}

/* Declares every output's type where core's shape inference has no rule for them (the losses, the training
 * outputs of BatchNormalization), as an exporter would. */
static void declare_output(tcase *c, uint32_t i, pc_dtype dtype, int32_t rank, const int64_t *dims)
{
    pc_error err;
    if (i < c->node->n_outputs && c->node->outputs[i] &&
        pt_set_tensor_type(c->node->outputs[i], dtype, rank, dims, &err) != PC_OK)
        pt_die("declare_output", &err);
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

static void set_int(tcase *c, const char *name, int64_t v)
{
    pc_error err;
    if (pc_node_set_attr_int(c->node, name, v, &err) != PC_OK) pt_die(name, &err);
    label_add(c, " %s=%lld", name, (long long)v);
}

static void set_float(tcase *c, const char *name, float v)
{
    pc_error err;
    if (pc_node_set_attr_float(c->node, name, v, &err) != PC_OK) pt_die(name, &err);
    label_add(c, " %s=%g", name, (double)v);
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

/* ---- running the kernel
 * ------------------------------------------------------------------------------------- */

enum { MAX_OUT = 5 };

typedef struct kernel_run {
    const pc_rt_kernel *row;
    pc_rt_tensor tin[MAX_IN], tout[MAX_OUT];
    const pc_rt_tensor *in[MAX_IN];
    pc_rt_tensor *out[MAX_OUT];
    pc_rt_kernel_ctx k;
    pc_error err;
    size_t scratch_bytes;
} kernel_run;

/* Finds the row and calls prepare with shapes only; output 0 gets out_dims, the others their inferred type
 * and dims (float32 of rank 0 where inference left them unknown). */
static pc_status kernel_prepare(kernel_run *r, tcase *c, int32_t out_rank, const int64_t *out_dims)
{
    memset(r, 0, sizeof *r);
    pc_error_clear(&r->err);
    const pc_node *node = c->node;
    int64_t opset = pc_model_opset(c->m, node->domain);
    for (uint32_t i = 0; i < node->n_inputs && i < MAX_IN; i++) {
        r->in[i] = NULL;
        for (uint32_t j = 0; j < c->m->graph->n_inputs; j++)
            if (node->inputs[i] && c->m->graph->inputs[j] == node->inputs[i]) {
                const pc_data *d = c->in[j];
                r->tin[i] =
                    (pc_rt_tensor){.dtype = d->dtype, .rank = d->rank, .n = d->n_elements, .data = NULL};
                if (d->rank) memcpy(r->tin[i].dims, d->dims, (size_t)d->rank * sizeof *d->dims);
                r->in[i] = &r->tin[i];
            }
    }
    r->row = pc_rt_kernel_find(node, opset, r->in[0] ? r->tin[0].dtype : PC_DTYPE_FLOAT);
    CHECK_MSG(r->row != NULL, "%s: no kernel row", c->label);
    if (!r->row) return PC_ERR_UNSUPPORTED;
    for (uint32_t i = 0; i < node->n_outputs && i < MAX_OUT; i++) {
        r->out[i] = NULL;
        if (!node->outputs[i]) continue;
        const pc_type *ty = &node->outputs[i]->type;
        bool typed = ty->kind == PC_TYPE_TENSOR && ty->elem != PC_DTYPE_UNDEFINED;
        r->tout[i] = (pc_rt_tensor){.dtype = typed ? ty->elem : PC_DTYPE_FLOAT, .rank = 0, .n = 1};
        bool known = typed && ty->shape.rank >= 0;
        for (int32_t d = 0; known && d < ty->shape.rank; d++)
            known = ty->shape.dims[d].kind == PC_DIM_KNOWN;
        if (i > 0 && known) {
            r->tout[i].rank = ty->shape.rank;
            for (int32_t d = 0; d < ty->shape.rank; d++) {
                r->tout[i].dims[d] = ty->shape.dims[d].size;
                r->tout[i].n *= (uint64_t)ty->shape.dims[d].size;
            }
        }
        if (i == 0) {
            r->tout[0].rank = out_rank;
            uint64_t n = 1;
            for (int32_t d = 0; d < out_rank; d++) {
                r->tout[0].dims[d] = out_dims[d];
                n *= (uint64_t)out_dims[d];
            }
            r->tout[0].n = n;
        }
        r->out[i] = &r->tout[i];
    }
    r->k = (pc_rt_kernel_ctx){.node = node,
                              .opset = opset,
                              .n_in = node->n_inputs,
                              .n_out = node->n_outputs,
                              .in = r->in,
                              .out = r->out,
                              .threads = 1,
                              .err = &r->err};
    size_t bytes = 0;
    pc_status st = r->row->prepare ? r->row->prepare(&r->k, &bytes) : PC_OK;
    r->scratch_bytes = bytes;
    return st;
}

/* |a - b| <= 1e-4 (1 + |b|); NaN exactly where the reference has NaN; infinities equal. */
static uint64_t compare(const pc_rt_tensor *got, const pc_data *want, double strict_rtol, char *why,
                        size_t why_size)
{
    uint64_t bad = 0;
    if (got->dtype != want->dtype || got->n != want->n_elements) {
        snprintf(why, why_size, "kernel output %s of %llu elements, reference %s of %llu",
                 pc_dtype_name(got->dtype), (unsigned long long)got->n, pc_dtype_name(want->dtype),
                 (unsigned long long)want->n_elements);
        return 1;
    }
    for (uint64_t i = 0; i < want->n_elements; i++) {
        double a = elem_get(got->dtype, got->data, i), b = elem_get(want->dtype, want->data, i);
        bool ok;
        if (isnan(a) || isnan(b))
            ok = isnan(a) && isnan(b);
        else if (isinf(a) || isinf(b))
            ok = a == b;
        else
            ok = fabs(a - b) <= 1e-4 * (1.0 + fabs(b)) &&
                 (strict_rtol <= 0 || fabs(a - b) <= strict_rtol * fabs(b));
        if (!ok && bad++ == 0)
            snprintf(why, why_size, "element %llu: kernel %.9g, reference %.9g", (unsigned long long)i, a, b);
    }
    return bad;
}

typedef struct op_stats {
    const char *op;
    int compared, refused, planted;
} op_stats;

enum { R_FAILED, R_COMPARED, R_REFUSED };

/* Runs the case on the reference and on the kernel and compares every output the node names; both may
 * refuse (prepare with UNSUPPORTED, ATTRIBUTE or SHAPE), nothing else may differ. */
static int run_case(tcase *c, op_stats *stats)
{
    pc_error err;
    pc_error_clear(&err);
    pc_data **ref = NULL;
    pc_status ref_st = pc_ref_run(c->m, c->n_in, c->in, &ref, &err);
    char ref_msg[1100];
    snprintf(ref_msg, sizeof ref_msg, "%s", ref_st == PC_OK ? "" : err.message);
    int result = R_FAILED;
    void *bufs[MAX_OUT] = {NULL};
    void *scratch = NULL;
    const pc_node *node = c->node;

    pc_status st = pc_graph_infer_shapes(c->m->graph, &err);
    CHECK_MSG(st == PC_OK, "%s: shape inference: %s", c->label, err.message);
    const pc_type *yt = &node->outputs[0]->type;
    int64_t dims[PC_MAX_RANK];
    bool known = st == PC_OK && yt->kind == PC_TYPE_TENSOR && yt->shape.rank >= 0;
    for (int32_t i = 0; known && i < yt->shape.rank; i++) {
        known = yt->shape.dims[i].kind == PC_DIM_KNOWN;
        dims[i] = yt->shape.dims[i].size;
    }
    CHECK_MSG(known || st != PC_OK, "%s: shape inference left output 0's shape unknown", c->label);
    if (!known) goto done;

    kernel_run r;
    st = kernel_prepare(&r, c, yt->shape.rank, dims);
    if (!r.row) goto done;
    if (st != PC_OK) {
        CHECK_MSG(ref_st != PC_OK, "%s: prepare refused (%s: %s) what the reference runs", c->label,
                  pc_status_name(st), r.err.message);
        CHECK_MSG(st == PC_ERR_UNSUPPORTED || st == PC_ERR_ATTRIBUTE || st == PC_ERR_SHAPE,
                  "%s: prepare failed with %s: %s", c->label, pc_status_name(st), r.err.message);
        if (ref_st != PC_OK) result = R_REFUSED;
        goto done;
    }
    CHECK_MSG(ref_st == PC_OK, "%s: prepare accepted what the reference refuses (%s)", c->label, ref_msg);
    if (ref_st != PC_OK) goto done;
    /* node output i is graph output `at` (add_node adds the named ones in order) */
    const pc_data *want[MAX_OUT] = {NULL};
    for (uint32_t i = 0, at = 0; i < node->n_outputs && i < MAX_OUT; i++)
        if (node->outputs[i]) want[i] = ref[at++];
    bool same_dims = want[0]->rank == yt->shape.rank;
    for (int32_t i = 0; same_dims && i < want[0]->rank; i++)
        same_dims = want[0]->dims[i] == dims[i];
    CHECK_MSG(same_dims, "%s: inferred output dims differ from the reference's", c->label);
    if (!same_dims) goto done;

    for (uint32_t i = 0; i < node->n_outputs && i < MAX_OUT; i++) {
        if (!r.out[i]) continue;
        size_t es = pc_dtype_bits(r.tout[i].dtype) / 8, bytes = (size_t)(r.tout[i].n ? r.tout[i].n : 1) * es;
        bufs[i] = malloc(bytes);
        if (!bufs[i]) pt_die("malloc", NULL);
        if (r.tout[i].dtype == PC_DTYPE_FLOAT || r.tout[i].dtype == PC_DTYPE_DOUBLE)
            for (uint64_t e = 0; e < r.tout[i].n; e++) /* a sentinel: an element never written differs */
                elem_set(r.tout[i].dtype, bufs[i], e, -7777.0);
        else
            memset(bufs[i], 0xA5, bytes);
        r.tout[i].data = bufs[i];
    }
    if (r.scratch_bytes) {
        scratch = aligned_alloc(64, (r.scratch_bytes + 63) & ~(size_t)63);
        if (!scratch) pt_die("aligned_alloc", NULL);
    }
    for (uint32_t i = 0; i < node->n_inputs && i < MAX_IN; i++)
        for (uint32_t j = 0; j < c->m->graph->n_inputs; j++)
            if (r.in[i] && c->m->graph->inputs[j] == node->inputs[i]) r.tin[i].data = c->in[j]->data;
    r.k.scratch = scratch;
    r.k.scratch_bytes = r.scratch_bytes;
    st = r.row->run(&r.k);
    CHECK_MSG(st == PC_OK, "%s: run: %s: %s", c->label, pc_status_name(st), r.err.message);
    if (st != PC_OK) goto done;
    char why[256] = "";
    for (uint32_t i = 0; i < node->n_outputs && i < MAX_OUT; i++) {
        if (!r.out[i]) continue;
        uint64_t bad = compare(&r.tout[i], want[i], c->strict_rtol, why, sizeof why);
        CHECK_MSG(bad == 0, "%s: output %u: %llu of %llu elements differ; first %s", c->label, i,
                  (unsigned long long)bad, (unsigned long long)r.tout[i].n, why);
        if (bad) goto done;
    }
    result = R_COMPARED;
    uint64_t n = r.tout[0].n;
    if (n > 0 && stats->planted == 0 && r.tout[0].dtype == PC_DTYPE_FLOAT) { /* the comparison must see it */
        float *y = bufs[0];
        uint64_t at = n / 2;
        float keep = y[at];
        y[at] = isnan(keep) ? 0.0f : isinf(keep) ? 1.0f : keep + 0.01f + 0.01f * fabsf(keep);
        CHECK_MSG(compare(&r.tout[0], want[0], c->strict_rtol, why, sizeof why) == 1,
                  "%s: a planted error was not seen", c->label);
        y[at] = keep;
        stats->planted++;
    }

done:
    if (result == R_COMPARED) stats->compared++;
    if (result == R_REFUSED) stats->refused++;
    for (uint32_t i = 0; i < MAX_OUT; i++)
        free(bufs[i]);
    free(scratch);
    if (ref_st == PC_OK) pc_ref_free_outputs(c->m, ref);
    return result;
}

/* ---- random cases
 * ------------------------------------------------------------------------------------------- */

typedef struct pool_coverage {
    int nsp[4], nhwc, asym_pads, strided, dilated, ceil_extra, same, valid, include_pad, specials, indices,
        column_major, typed;
} pool_coverage;

static void pool_case(bool is_max, op_stats *stats, pool_coverage *cov)
{
    static const int64_t max_opsets[] = {7, 8, 10, 11, 12, 18, 19, 21};
    static const int64_t avg_opsets[] = {7, 10, 11, 18, 19, 21};
    int64_t opset = is_max ? max_opsets[draw(8)] : avg_opsets[draw(6)];
    bool nhwc = draw(3) == 0;
    bool dil_ok = is_max ? opset >= 10 : opset >= 19, ceil_ok = opset >= 10;
    int nsp = 1 + (int)draw(3);
    int mode = (int)draw(8); /* 0 VALID, 1 SAME_UPPER, 2 SAME_LOWER, else NOTSET */
    bool notset = mode > 2;
    int64_t N = 1 + draw(2), C = 1 + draw(4), in[3], k[3], s[3], d[3], pads[6];
    bool ceil_extra = false, asym = false;
    bool ceil = ceil_ok && draw(2);
    for (int j = 0; j < nsp; j++) {
        in[j] = 1 + draw(nsp == 3 ? 6 : 10);
        k[j] = 1 + draw(draw(5) == 0 ? 5 : 3);
        s[j] = 1 + draw(3);
        d[j] = dil_ok && draw(3) == 0 ? 2 + draw(2) : 1;
        int64_t ek = (k[j] - 1) * d[j] + 1;
        pads[j] = pads[nsp + j] = 0;
        if (notset && draw(3)) {
            pads[j] = draw((uint32_t)ek);
            pads[nsp + j] = draw((uint32_t)ek);
        }
        /* shrink the window until it fits the (padded) input */
        for (;;) {
            ek = (k[j] - 1) * d[j] + 1;
            if (pads[j] >= ek) pads[j] = ek - 1;
            if (pads[nsp + j] >= ek) pads[nsp + j] = ek - 1;
            if (mode == 1 || mode == 2 || in[j] + pads[j] + pads[nsp + j] >= ek) break;
            if (d[j] > 1)
                d[j]--;
            else
                k[j]--;
        }
        int64_t span = in[j] + pads[j] + pads[nsp + j] - ek;
        ceil_extra =
            ceil_extra || (notset && ceil && span % s[j] && (span / s[j] + 1) * s[j] < in[j] + pads[j]);
        asym = asym || pads[j] != pads[nsp + j];
    }
    bool include_pad = !is_max && draw(2);

    tcase c;
    const char *op = is_max ? "MaxPool" : "AveragePool";
    case_begin(&c, op, opset, nhwc);
    int64_t xd[5];
    xd[0] = N;
    xd[nhwc ? nsp + 1 : 1] = C;
    for (int j = 0; j < nsp; j++)
        xd[(nhwc ? 1 : 2) + j] = in[j];
    bool specials = draw(4) == 0;
    /* MaxPool also runs other types in either layout (uint8/int8 exist from opset 12); channels first it
     * gives Indices */
    pc_dtype xt = PC_DTYPE_FLOAT;
    if (is_max && draw(5) == 0) {
        static const pc_dtype types[] = {PC_DTYPE_DOUBLE, PC_DTYPE_UINT8, PC_DTYPE_INT8};
        xt = types[draw(opset >= 12 ? 3 : 1)];
    }
    bool with_indices = is_max && !nhwc && opset >= 8 && draw(4) == 0, column_major = false;
    if (xt == PC_DTYPE_FLOAT)
        add_input(&c, "x", nsp + 2, xd, specials ? FILL_SPECIAL : FILL_PLAIN);
    else
        add_input_typed(&c, "x", xt, nsp + 2, xd, specials ? FILL_SPECIAL : FILL_TIES);
    add_node(&c, op, nhwc, "x", with_indices ? "y,indices" : "y");
    set_ints(&c, "kernel_shape", (size_t)nsp, k);
    bool strided = false, dilated = false;
    for (int j = 0; j < nsp; j++) {
        strided = strided || s[j] > 1;
        dilated = dilated || d[j] > 1;
    }
    if (strided || draw(2)) set_ints(&c, "strides", (size_t)nsp, s);
    if (dil_ok && (dilated || draw(4) == 0)) set_ints(&c, "dilations", (size_t)nsp, d);
    bool padded = false;
    for (int j = 0; j < 2 * nsp; j++)
        padded = padded || pads[j];
    if (notset && (padded || draw(3) == 0)) set_ints(&c, "pads", 2 * (size_t)nsp, pads);
    static const char *const modes[] = {"VALID", "SAME_UPPER", "SAME_LOWER"};
    if (!notset)
        set_string(&c, "auto_pad", modes[mode]);
    else if (draw(6) == 0)
        set_string(&c, "auto_pad", "NOTSET");
    if (ceil_ok && (ceil || draw(3) == 0)) set_int(&c, "ceil_mode", ceil);
    if (!is_max && (include_pad || draw(3) == 0)) set_int(&c, "count_include_pad", include_pad);
    if (with_indices && draw(2)) {
        column_major = true;
        set_int(&c, "storage_order", 1);
    } else if (is_max && opset >= 8 && draw(5) == 0) {
        set_int(&c, "storage_order", 0);
    }
    if (run_case(&c, stats) == R_COMPARED) {
        cov->indices += with_indices;
        cov->column_major += column_major;
        cov->typed += xt != PC_DTYPE_FLOAT;
        cov->nsp[nsp]++;
        cov->nhwc += nhwc;
        cov->asym_pads += asym;
        cov->strided += strided;
        cov->dilated += dilated;
        cov->ceil_extra += ceil_extra;
        cov->same += mode == 1 || mode == 2;
        cov->valid += mode == 0;
        cov->include_pad += include_pad;
        cov->specials += specials;
    }
    case_end(&c);
}

/* (N, C, spatial...) or (N, spatial..., C) with `nsp` spatial dims of at most `max_sp`. */
static int32_t nc_dims(bool nhwc, int nsp, int64_t C, int64_t max_sp, int64_t *dims)
{
    dims[0] = 1 + draw(2);
    dims[nhwc ? nsp + 1 : 1] = C;
    for (int j = 0; j < nsp; j++)
        dims[(nhwc ? 1 : 2) + j] = 1 + draw((uint32_t)max_sp);
    return nsp + 2;
}

static void global_pool_case(bool is_max, op_stats *stats)
{
    static const int64_t opsets[] = {7, 13, 21};
    bool nhwc = draw(3) == 0, big = draw(10) == 0;
    const char *op = is_max ? "GlobalMaxPool" : "GlobalAveragePool";
    tcase c;
    case_begin(&c, op, opsets[draw(3)], nhwc);
    int64_t dims[5];
    int32_t rank = nc_dims(nhwc, 1 + (int)draw(3), 1 + draw(big ? 3 : 10), big ? 40 : 6, dims);
    add_input(&c, "x", rank, dims, draw(4) == 0 ? FILL_SPECIAL : FILL_PLAIN);
    add_node(&c, op, nhwc, "x", "y");
    run_case(&c, stats);
    case_end(&c);
}

static int bn_training, ln_stats, loss_log_prob, dropout_masks;

static void batchnorm_case(op_stats *stats)
{
    static const int64_t opsets[] = {7, 9, 14, 15};
    int64_t opset = opsets[draw(4)];
    bool nhwc = draw(3) == 0;
    int64_t C = 1 + draw(9), dims[5];
    int nsp = nhwc ? 1 + (int)draw(3) : (int)draw(4);
    tcase c;
    case_begin(&c, "BatchNormalization", opset, nhwc);
    int32_t rank = nc_dims(nhwc, nsp, C, 6, dims);
    add_input(&c, "x", rank, dims, FILL_PLAIN);
    add_input(&c, "scale", 1, &C, FILL_PLAIN);
    add_input(&c, "b", 1, &C, FILL_PLAIN);
    add_input(&c, "mean", 1, &C, FILL_PLAIN);
    add_input(&c, "var", 1, &C, FILL_POSITIVE);
    /* training mode: training_mode = 1 from 14 (running mean and var), before it the extra outputs */
    static const char *const outs14[] = {"y", "y,rm,rv", "y,rm", "y,,rv"};
    static const char *const outs9[] = {"y,m,v", "y,m,v,sm", "y,,,sm", "y,m"};
    bool training = draw(3) == 0;
    const char *outs = !training ? "y" : opset >= 14 ? outs14[draw(4)] : outs9[draw(4)];
    add_node(&c, "BatchNormalization", nhwc, "x,scale,b,mean,var", outs);
    for (uint32_t i = 1; i < 4; i++)
        declare_output(&c, i, PC_DTYPE_FLOAT, 1, &C);
    static const float eps[] = {1e-5f, 1e-3f, 0.1f};
    if (draw(2)) set_float(&c, "epsilon", eps[draw(3)]);
    if (opset < 9 && draw(3) == 0) set_int(&c, "spatial", 1);
    if (opset >= 14 && (training || draw(3) == 0)) set_int(&c, "training_mode", training);
    if (training && draw(2)) set_float(&c, "momentum", uniform(0, 1));
    if (run_case(&c, stats) == R_COMPARED) bn_training += training;
    case_end(&c);
}

static void instnorm_case(op_stats *stats)
{
    static const int64_t opsets[] = {6, 11, 21};
    bool nhwc = draw(3) == 0, big = draw(8) == 0;
    int64_t C = 1 + draw(big ? 3 : 7), dims[5];
    int nsp = nhwc ? 1 + (int)draw(3) : (int)draw(4);
    tcase c;
    case_begin(&c, "InstanceNormalization", opsets[draw(3)], nhwc);
    int32_t rank = nc_dims(nhwc, nsp, C, big ? 24 : 6, dims);
    add_input(&c, "x", rank, dims, draw(5) == 0 ? FILL_OFFSET : FILL_PLAIN);
    add_input(&c, "scale", 1, &C, FILL_PLAIN);
    add_input(&c, "b", 1, &C, FILL_PLAIN);
    add_node(&c, "InstanceNormalization", nhwc, "x,scale,b", "y");
    static const float eps[] = {1e-5f, 1e-3f, 0.1f};
    if (draw(2)) set_float(&c, "epsilon", eps[draw(3)]);
    run_case(&c, stats);
    case_end(&c);
}

static void lrn_case(op_stats *stats)
{
    static const int64_t opsets[] = {11, 13};
    bool nhwc = draw(3) == 0;
    int64_t C = 1 + draw(9), dims[5];
    int nsp = nhwc ? 1 + (int)draw(3) : (int)draw(4);
    tcase c;
    case_begin(&c, "LRN", opsets[draw(2)], nhwc);
    int32_t rank = nc_dims(nhwc, nsp, C, 5, dims);
    add_input(&c, "x", rank, dims, draw(5) == 0 ? FILL_SPECIAL : FILL_PLAIN);
    add_node(&c, "LRN", nhwc, "x", "y");
    set_int(&c, "size", 1 + draw(7));
    if (draw(3)) set_float(&c, "alpha", uniform(1e-4, 1.0));
    static const float betas[] = {0.75f, 0.5f, 1.0f};
    uint32_t b = draw(5);
    if (b < 3)
        set_float(&c, "beta", betas[b]);
    else if (b == 3)
        set_float(&c, "beta", uniform(0.1, 2.0));
    if (draw(2)) set_float(&c, "bias", uniform(0.5, 2.0));
    run_case(&c, stats);
    case_end(&c);
}

static void softmax_case(bool log_form, op_stats *stats)
{
    static const int64_t opsets[] = {9, 11, 12, 13, 18, 21};
    int64_t opset = opsets[draw(6)];
    const char *op = log_form ? "LogSoftmax" : "Softmax";
    tcase c;
    case_begin(&c, op, opset, false);
    int32_t rank = 1 + (int32_t)draw(4);
    int64_t dims[4];
    bool big = draw(8) == 0;
    for (int32_t i = 0; i < rank; i++)
        dims[i] = 1 + draw(big && i == rank - 1 ? 300 : 6);
    uint32_t f = draw(6);
    add_input(&c, "x", rank, dims, f == 0 ? FILL_SPECIAL : f == 1 ? FILL_WIDE : FILL_PLAIN);
    add_node(&c, op, false, "x", "y");
    /* before 13 the default axis 1 does not exist on a 1-D input (the reference refuses it too) */
    if (draw(4) || (rank == 1 && opset < 13)) set_int(&c, "axis", (int64_t)draw((uint32_t)(2 * rank)) - rank);
    run_case(&c, stats);
    case_end(&c);
}

/* exp's relative precision, which the 1e-4 * (1 + |b|) tolerance hides in small outputs: Softmax over rows
 * (t, 0) gives e^t / (1 + e^t), as precise as exp(t), for t over the range where the result is a normal
 * float. */
static void softmax_exp_precision(op_stats *stats)
{
    enum { ROWS = 341 };
    tcase c;
    case_begin(&c, "Softmax", 13, false);
    int64_t dims[2] = {ROWS, 2};
    add_input(&c, "x", 2, dims, FILL_PLAIN);
    float *x = c.in[0]->data;
    for (int i = 0; i < ROWS; i++) {
        x[2 * i] = -85.0f + 0.5f * (float)i + uniform(0, 0.5);
        x[2 * i + 1] = 0.0f;
    }
    add_node(&c, "Softmax", false, "x", "y");
    c.strict_rtol = 2e-6;
    label_add(&c, " rows (t, 0), t in [-85, 85], relative tolerance 2e-6");
    CHECK_MSG(run_case(&c, stats) == R_COMPARED, "%s: not compared", c.label);
    case_end(&c);
}

/* A parameter shape broadcasting to the normalized dims: some trailing dims, some of them 1. */
static int32_t param_dims(int32_t ns, const int64_t *norm, int64_t *dims)
{
    int32_t rank = draw(6) == 0 ? (int32_t)draw((uint32_t)ns + 1) : ns;
    for (int32_t i = 0; i < rank; i++) {
        int64_t full = norm[ns - rank + i];
        dims[i] = draw(4) == 0 ? 1 : full;
    }
    return rank;
}

static void layernorm_case(op_stats *stats)
{
    static const int64_t opsets[] = {17, 18, 21};
    tcase c;
    case_begin(&c, "LayerNormalization", opsets[draw(3)], false);
    int32_t rank = 1 + (int32_t)draw(4);
    int64_t dims[4], sd[4], bd[4];
    bool big = draw(8) == 0;
    for (int32_t i = 0; i < rank; i++)
        dims[i] = 1 + draw(big && i == rank - 1 ? 200 : 6);
    int64_t axis_attr = (int64_t)draw((uint32_t)(2 * rank)) - rank;
    bool with_axis = draw(4) != 0;
    int32_t axis = with_axis ? (int32_t)(axis_attr < 0 ? axis_attr + rank : axis_attr) : rank - 1;
    int32_t ns = rank - axis;
    add_input(&c, "x", rank, dims, draw(5) == 0 ? FILL_OFFSET : FILL_PLAIN);
    add_input(&c, "scale", param_dims(ns, dims + axis, sd), sd, FILL_PLAIN);
    bool bias = draw(3) != 0;
    if (bias) add_input(&c, "b", param_dims(ns, dims + axis, bd), bd, FILL_PLAIN);
    static const char *const outs[] = {"y", "y,mean,inv", "y,mean", "y,,inv"};
    uint32_t o = draw(4);
    add_node(&c, "LayerNormalization", false, bias ? "x,scale,b" : "x,scale", outs[o]);
    if (with_axis) set_int(&c, "axis", axis_attr);
    static const float eps[] = {1e-5f, 1e-3f, 0.1f};
    if (draw(2)) set_float(&c, "epsilon", eps[draw(3)]);
    if (draw(4) == 0) set_int(&c, "stash_type", draw(2) ? PC_DTYPE_DOUBLE : PC_DTYPE_FLOAT);
    if (run_case(&c, stats) == R_COMPARED) ln_stats += o != 0;
    case_end(&c);
}

static void hardmax_case(op_stats *stats)
{
    static const int64_t opsets[] = {1, 11, 13, 21};
    int64_t opset = opsets[draw(4)];
    tcase c;
    case_begin(&c, "Hardmax", opset, false);
    int32_t rank = 1 + (int32_t)draw(4);
    int64_t dims[4];
    for (int32_t i = 0; i < rank; i++)
        dims[i] = 1 + draw(6);
    uint32_t f = draw(3);
    add_input_typed(&c, "x", draw(4) == 0 ? PC_DTYPE_DOUBLE : PC_DTYPE_FLOAT, rank, dims,
                    f == 0   ? FILL_SPECIAL
                    : f == 1 ? FILL_TIES
                             : FILL_PLAIN);
    add_node(&c, "Hardmax", false, "x", "y");
    if (draw(4) || (rank == 1 && opset < 13)) set_int(&c, "axis", (int64_t)draw((uint32_t)(2 * rank)) - rank);
    run_case(&c, stats);
    case_end(&c);
}

/* Inference Dropout (and training mode with ratio 0), with and without the mask. */
static void dropout_case(op_stats *stats)
{
    static const int64_t opsets[] = {7, 10, 12, 13, 21};
    int64_t opset = opsets[draw(5)];
    tcase c;
    case_begin(&c, "Dropout", opset, false);
    int32_t rank = (int32_t)draw(4);
    int64_t dims[3];
    for (int32_t i = 0; i < rank; i++)
        dims[i] = 1 + draw(5);
    add_input_typed(&c, "x", draw(4) == 0 ? PC_DTYPE_DOUBLE : PC_DTYPE_FLOAT, rank, dims, FILL_SPECIAL);
    const char *inputs = "x";
    bool with_ratio = false, with_mode = false;
    if (opset >= 12) {
        uint32_t v = draw(4);
        with_ratio = v == 1 || v == 2;
        with_mode = v >= 2;
        static const char *const ins[] = {"x", "x,r", "x,r,t", "x,,t"};
        inputs = ins[v];
    }
    double ratio = draw(3) == 0 ? 0.0 : lo_hi(0, 0.9);
    if (with_ratio)
        elem_set(PC_DTYPE_FLOAT, add_input_typed(&c, "r", PC_DTYPE_FLOAT, 0, NULL, FILL_PLAIN)->data, 0,
                 ratio);
    /* training is on only where the ratio is 0 (else random: a run-time refusal, checked apart) */
    if (with_mode)
        elem_set(PC_DTYPE_BOOL, add_input_typed(&c, "t", PC_DTYPE_BOOL, 0, NULL, FILL_PLAIN)->data, 0,
                 with_ratio && ratio == 0.0 && draw(2));
    bool mask = draw(2);
    add_node(&c, "Dropout", false, inputs, mask ? "y,mask" : "y");
    if (opset < 12 && draw(2)) set_float(&c, "ratio", (float)ratio);
    if (run_case(&c, stats) == R_COMPARED) dropout_masks += mask;
    case_end(&c);
}

/* NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: any rank, int32/int64 targets, ignore_index (inside
 * or outside [0, C), negative), weights, every reduction, SCE's log_prob. */
static void loss_case(bool sce, op_stats *stats)
{
    const char *op = sce ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
    tcase c;
    case_begin(&c, op, 12 + draw(2), false);
    pc_dtype dt = draw(4) == 0 ? PC_DTYPE_DOUBLE : PC_DTYPE_FLOAT;
    int32_t nd = (int32_t)draw(4), rank = nd + 2;
    int64_t C = 1 + draw(6), dims[6], tdims[5];
    dims[0] = tdims[0] = 1 + draw(3);
    dims[1] = C;
    for (int32_t j = 0; j < nd; j++)
        dims[2 + j] = tdims[1 + j] = 1 + draw(4);
    uint32_t f = draw(6);
    add_input_typed(&c, "x", dt, rank, dims, f == 0 ? FILL_SPECIAL : f == 1 ? FILL_WIDE : FILL_PLAIN);
    pc_dtype tt = draw(2) ? PC_DTYPE_INT64 : PC_DTYPE_INT32;
    pc_data *t = add_input_typed(&c, "t", tt, rank - 1, tdims, FILL_PLAIN);
    bool has_ii = draw(2);
    static const int64_t far_ii[] = {-1, -100, 10};
    int64_t ii = draw(2) ? (int64_t)draw((uint32_t)C) : far_ii[draw(3)];
    for (uint64_t i = 0; i < t->n_elements; i++)
        elem_set(tt, t->data, i, has_ii && draw(4) == 0 ? (double)ii : (double)draw((uint32_t)C));
    bool weighted = draw(2);
    if (weighted) add_input_typed(&c, "w", dt, 1, &C, FILL_POSITIVE);
    bool log_prob = sce && draw(2);
    add_node(&c, op, false, weighted ? "x,t,w" : "x,t", log_prob ? "z,lp" : "z");
    static const char *const reds[] = {"none", "sum", "mean"};
    uint32_t red = draw(4);
    declare_output(&c, 0, dt, red == 0 ? rank - 1 : 0, tdims);
    declare_output(&c, 1, dt, rank, dims);
    if (red < 3) set_string(&c, "reduction", reds[red]);
    if (has_ii) set_int(&c, "ignore_index", ii);
    if (run_case(&c, stats) == R_COMPARED) loss_log_prob += log_prob;
    case_end(&c);
}

/* ---- refusals
 * ----------------------------------------------------------------------------------------------- */

/* prepare must fail with `want`; output 0's dims come from shape inference, else out_dims (or x's dims). */
static void expect_refusal(tcase *c, pc_status want, int32_t out_rank, const int64_t *out_dims)
{
    pc_error err;
    int64_t dims[PC_MAX_RANK];
    int32_t rank = -1;
    bool inferred = pc_graph_infer_shapes(c->m->graph, &err) == PC_OK; /* the other outputs' types */
    if (out_dims) {
        rank = out_rank;
        memcpy(dims, out_dims, (size_t)rank * sizeof *dims);
    } else if (inferred) {
        const pc_type *yt = &c->node->outputs[0]->type;
        rank = yt->kind == PC_TYPE_TENSOR ? yt->shape.rank : -1;
        for (int32_t i = 0; i < rank; i++)
            dims[i] = yt->shape.dims[i].kind == PC_DIM_KNOWN ? yt->shape.dims[i].size : 1;
    }
    if (rank < 0) {
        rank = c->in[0]->rank;
        memcpy(dims, c->in[0]->dims, (size_t)rank * sizeof *dims);
    }
    kernel_run r;
    pc_status st = kernel_prepare(&r, c, rank, dims);
    if (!r.row) return;
    CHECK_MSG(st == want, "%s: prepare gave %s (%s), expected %s", c->label, pc_status_name(st),
              r.err.message, pc_status_name(want));
    CHECK_MSG(st == PC_OK || r.err.message[0], "%s: a refusal without a message", c->label);
}

/* prepare accepts (the data it would need is not there yet) and run fails with `want`, its message holding
 * `needle`. */
static void expect_run_error(tcase *c, pc_status want, const char *needle)
{
    pc_error err;
    pc_status st = pc_graph_infer_shapes(c->m->graph, &err);
    CHECK_MSG(st == PC_OK, "%s: shape inference: %s", c->label, err.message);
    const pc_type *yt = &c->node->outputs[0]->type;
    int32_t rank = yt->kind == PC_TYPE_TENSOR ? yt->shape.rank : -1;
    int64_t dims[PC_MAX_RANK];
    for (int32_t i = 0; i < rank; i++)
        dims[i] = yt->shape.dims[i].kind == PC_DIM_KNOWN ? yt->shape.dims[i].size : 1;
    CHECK_MSG(rank >= 0, "%s: output 0's rank unknown", c->label);
    if (rank < 0) return;
    kernel_run r;
    st = kernel_prepare(&r, c, rank, dims);
    if (!r.row) return;
    CHECK_MSG(st == PC_OK, "%s: prepare: %s: %s", c->label, pc_status_name(st), r.err.message);
    if (st != PC_OK) return;
    void *bufs[MAX_OUT] = {NULL}, *scratch = NULL;
    for (uint32_t i = 0; i < c->node->n_outputs && i < MAX_OUT; i++) {
        if (!r.out[i]) continue;
        bufs[i] = calloc((size_t)(r.tout[i].n ? r.tout[i].n : 1), pc_dtype_bits(r.tout[i].dtype) / 8);
        if (!bufs[i]) pt_die("calloc", NULL);
        r.tout[i].data = bufs[i];
    }
    if (r.scratch_bytes && !(scratch = aligned_alloc(64, (r.scratch_bytes + 63) & ~(size_t)63)))
        pt_die("aligned_alloc", NULL);
    for (uint32_t i = 0; i < c->node->n_inputs && i < MAX_IN; i++)
        for (uint32_t j = 0; j < c->m->graph->n_inputs; j++)
            if (r.in[i] && c->m->graph->inputs[j] == c->node->inputs[i]) r.tin[i].data = c->in[j]->data;
    r.k.scratch = scratch;
    r.k.scratch_bytes = r.scratch_bytes;
    st = r.row->run(&r.k);
    CHECK_MSG(st == want && strstr(r.err.message, needle), "%s: run gave %s (%s), expected %s naming '%s'",
              c->label, pc_status_name(st), r.err.message, pc_status_name(want), needle);
    for (uint32_t i = 0; i < MAX_OUT; i++)
        free(bufs[i]);
    free(scratch);
}

static void pool_refusal(const char *op, int64_t opset, bool nhwc, const char *outputs, pc_status want,
                         void (*attrs)(tcase *))
{
    tcase c;
    case_begin(&c, op, opset, nhwc);
    int64_t dims[4] = {1, nhwc ? 5 : 3, 5, nhwc ? 3 : 5};
    add_input(&c, "x", 4, dims, FILL_PLAIN);
    add_node(&c, op, nhwc, "x", outputs);
    attrs(&c);
    expect_refusal(&c, want, 0, NULL);
    case_end(&c);
}

static void kernel_2x2(tcase *c)
{
    set_ints(c, "kernel_shape", 2, (const int64_t[]){2, 2});
}
static void storage_order_1(tcase *c)
{
    kernel_2x2(c);
    set_int(c, "storage_order", 1);
}
static void storage_order_2(tcase *c)
{
    kernel_2x2(c);
    set_int(c, "storage_order", 2);
}
static void no_kernel(tcase *c)
{
    set_ints(c, "strides", 2, (const int64_t[]){1, 1});
}
static void kernel_3_values(tcase *c)
{
    set_ints(c, "kernel_shape", 3, (const int64_t[]){2, 2, 2});
}
static void kernel_as_int(tcase *c)
{
    set_int(c, "kernel_shape", 2);
}
static void pads_at_kernel(tcase *c)
{
    kernel_2x2(c);
    set_ints(c, "pads", 4, (const int64_t[]){0, 2, 0, 0});
}
static void bad_auto_pad(tcase *c)
{
    kernel_2x2(c);
    set_string(c, "auto_pad", "SAME");
}
static void pads_with_auto_pad(tcase *c)
{
    kernel_2x2(c);
    set_string(c, "auto_pad", "VALID");
    set_ints(c, "pads", 4, (const int64_t[]){1, 0, 0, 0});
}
static void dilated(tcase *c)
{
    kernel_2x2(c);
    set_ints(c, "dilations", 2, (const int64_t[]){2, 1});
}
static void ceil_on(tcase *c)
{
    kernel_2x2(c);
    set_int(c, "ceil_mode", 1);
}
static void zero_stride(tcase *c)
{
    kernel_2x2(c);
    set_ints(c, "strides", 2, (const int64_t[]){0, 1});
}

static void refusals(void)
{
    /* what the kernels do not compute */
    pool_refusal("MaxPool", 12, true, "y,indices", PC_ERR_UNSUPPORTED, kernel_2x2);
    pool_refusal("MaxPool", 12, true, "y,indices", PC_ERR_UNSUPPORTED, storage_order_1);
    /* malformed attributes */
    pool_refusal("MaxPool", 12, false, "y", PC_ERR_ATTRIBUTE, storage_order_2);
    pool_refusal("MaxPool", 12, false, "y", PC_ERR_ATTRIBUTE, no_kernel);
    pool_refusal("AveragePool", 12, true, "y", PC_ERR_ATTRIBUTE, no_kernel);
    pool_refusal("MaxPool", 12, false, "y", PC_ERR_ATTRIBUTE, kernel_3_values);
    pool_refusal("MaxPool", 12, false, "y", PC_ERR_ATTRIBUTE, kernel_as_int);
    pool_refusal("AveragePool", 12, false, "y", PC_ERR_ATTRIBUTE, pads_at_kernel);
    pool_refusal("MaxPool", 12, true, "y", PC_ERR_ATTRIBUTE, pads_at_kernel);
    pool_refusal("MaxPool", 12, false, "y", PC_ERR_ATTRIBUTE, bad_auto_pad);
    pool_refusal("AveragePool", 12, false, "y", PC_ERR_ATTRIBUTE, pads_with_auto_pad);
    pool_refusal("MaxPool", 12, false, "y", PC_ERR_ATTRIBUTE, zero_stride);
    /* attributes the opset does not define yet */
    pool_refusal("MaxPool", 8, false, "y", PC_ERR_ATTRIBUTE, dilated);
    pool_refusal("AveragePool", 18, false, "y", PC_ERR_ATTRIBUTE, dilated);
    pool_refusal("AveragePool", 9, true, "y", PC_ERR_ATTRIBUTE, ceil_on);
    pool_refusal("MaxPool", 7, false, "y", PC_ERR_ATTRIBUTE, storage_order_1);

    /* a window of padding only: MaxPool and the exclusive average have no value for it (the reference
     * refuses too); count_include_pad's average is 0 and must match */
    for (int v = 0; v < 3; v++) {
        bool is_max = v == 0;
        const char *op = is_max ? "MaxPool" : "AveragePool";
        tcase c;
        case_begin(&c, op, 19, v == 2);
        int64_t dims[3] = {1, 2, 1};
        add_input(&c, "x", 3, dims, FILL_PLAIN);
        add_node(&c, op, v == 2, "x", "y");
        set_ints(&c, "kernel_shape", 1, (const int64_t[]){2});
        set_ints(&c, "dilations", 1, (const int64_t[]){3});
        set_ints(&c, "pads", 2, (const int64_t[]){2, 1});
        if (v == 2) set_int(&c, "count_include_pad", 1);
        if (v < 2) {
            expect_refusal(&c, PC_ERR_UNSUPPORTED, 0, NULL);
        } else {
            op_stats s = {op, 0, 0, 1};
            CHECK_MSG(run_case(&c, &s) == R_COMPARED, "%s: expected a comparison", c.label);
        }
        case_end(&c);
    }

    /* output dims that are not the pool's */
    {
        tcase c;
        case_begin(&c, "MaxPool", 12, false);
        int64_t dims[4] = {1, 3, 5, 5}, wrong[4] = {1, 3, 5, 5};
        add_input(&c, "x", 4, dims, FILL_PLAIN);
        add_node(&c, "MaxPool", false, "x", "y");
        kernel_2x2(&c);
        expect_refusal(&c, PC_ERR_SHAPE, 4, wrong);
        expect_refusal(&c, PC_ERR_SHAPE, 3, wrong);
        case_end(&c);
    }
    {
        tcase c;
        case_begin(&c, "MaxPool", 12, false);
        int64_t dims[6] = {1, 1, 2, 2, 2, 2};
        add_input(&c, "x", 6, dims, FILL_PLAIN);
        add_node(&c, "MaxPool", false, "x", "y");
        set_ints(&c, "kernel_shape", 4, (const int64_t[]){1, 1, 1, 1});
        expect_refusal(&c, PC_ERR_UNSUPPORTED, 6, dims); /* four spatial axes */
        case_end(&c);
    }

    /* BatchNormalization: running statistics without training, saved_var, per-activation parameters,
     * is_test with training outputs, a training_mode that is not 0 or 1 */
    for (int v = 0; v < 5; v++) {
        static const int64_t opsets[] = {14, 9, 7, 6, 15};
        static const char *const outs[] = {"y,rm,rv", "y,m,v,sm,sv", "y", "y,m", "y"};
        tcase c;
        case_begin(&c, "BatchNormalization", opsets[v], false);
        int64_t dims[4] = {2, 3, 4, 4};
        /* spatial = 0 comes with per-activation parameters, C x D1 x D2 */
        int32_t pr = v == 2 ? 3 : 1;
        const int64_t *pd = dims + 1;
        add_input(&c, "x", 4, dims, FILL_PLAIN);
        add_input(&c, "scale", pr, pd, FILL_PLAIN);
        add_input(&c, "b", pr, pd, FILL_PLAIN);
        add_input(&c, "mean", pr, pd, FILL_PLAIN);
        add_input(&c, "var", pr, pd, FILL_POSITIVE);
        add_node(&c, "BatchNormalization", false, "x,scale,b,mean,var", outs[v]);
        if (v == 0) set_int(&c, "training_mode", 0);
        if (v == 2) set_int(&c, "spatial", 0);
        if (v == 3) set_int(&c, "is_test", 1);
        if (v == 4) set_int(&c, "training_mode", 2);
        expect_refusal(&c, v == 4 ? PC_ERR_ATTRIBUTE : PC_ERR_UNSUPPORTED, 4, dims);
        case_end(&c);
    }
    {
        tcase c;
        case_begin(&c, "BatchNormalization", 15, false);
        int64_t C = 3, C4 = 4, dims[4] = {2, 3, 4, 4};
        add_input(&c, "x", 4, dims, FILL_PLAIN);
        add_input(&c, "scale", 1, &C, FILL_PLAIN);
        add_input(&c, "b", 1, &C4, FILL_PLAIN);
        add_input(&c, "mean", 1, &C, FILL_PLAIN);
        add_input(&c, "var", 1, &C, FILL_POSITIVE);
        add_node(&c, "BatchNormalization", false, "x,scale,b,mean,var", "y");
        expect_refusal(&c, PC_ERR_SHAPE, 4, dims); /* B of 4 elements for 3 channels */
        case_end(&c);
    }

    /* LayerNormalization's Mean in float16 (stash_type 10), a Scale that does not broadcast, a bad
     * stash_type; InvStdDev in float runs */
    for (int v = 0; v < 4; v++) {
        tcase c;
        case_begin(&c, "LayerNormalization", 17, false);
        int64_t dims[3] = {2, 3, 4}, sd[1] = {v == 2 ? 3 : 4};
        add_input(&c, "x", 3, dims, FILL_PLAIN);
        add_input(&c, "scale", 1, sd, FILL_PLAIN);
        add_node(&c, "LayerNormalization", false, "x,scale", v == 0 ? "y,mean" : v == 1 ? "y,,inv" : "y");
        if (v == 0) set_int(&c, "stash_type", PC_DTYPE_FLOAT16);
        if (v == 3) set_int(&c, "stash_type", 7);
        static const pc_status want[] = {PC_ERR_UNSUPPORTED, PC_OK, PC_ERR_SHAPE, PC_ERR_ATTRIBUTE};
        expect_refusal(&c, want[v], 3, dims);
        case_end(&c);
    }

    /* the losses: an unknown reduction, a weight of the wrong size, float targets; Hardmax's axis */
    for (int v = 0; v < 3; v++) {
        tcase c;
        case_begin(&c, "NegativeLogLikelihoodLoss", 13, false);
        int64_t dims[3] = {2, 3, 4}, td[2] = {2, 4}, wd = v == 1 ? 4 : 3;
        add_input(&c, "x", 3, dims, FILL_PLAIN);
        add_input_typed(&c, "t", v == 2 ? PC_DTYPE_FLOAT : PC_DTYPE_INT64, 2, td, FILL_TIES);
        add_input(&c, "w", 1, &wd, FILL_POSITIVE);
        add_node(&c, "NegativeLogLikelihoodLoss", false, "x,t,w", "z");
        declare_output(&c, 0, PC_DTYPE_FLOAT, 0, NULL);
        if (v == 0) set_string(&c, "reduction", "avg");
        static const pc_status want[] = {PC_ERR_ATTRIBUTE, PC_ERR_SHAPE, PC_ERR_UNSUPPORTED};
        expect_refusal(&c, want[v], 0, dims);
        case_end(&c);
    }
    {
        tcase c;
        case_begin(&c, "Hardmax", 13, false);
        int64_t dims[3] = {2, 3, 4};
        add_input(&c, "x", 3, dims, FILL_PLAIN);
        add_node(&c, "Hardmax", false, "x", "y");
        set_int(&c, "axis", 3);
        expect_refusal(&c, PC_ERR_ATTRIBUTE, 3, dims);
        case_end(&c);
    }

    /* what only run can see: a target outside [0, C) that is not ignore_index; training-mode Dropout with a
     * ratio above 0 (random), whose inputs are not constants */
    for (int v = 0; v < 3; v++) {
        tcase c;
        bool sce = v == 1;
        const char *op = sce ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
        case_begin(&c, op, 13, false);
        int64_t dims[2] = {3, 4}, td[1] = {3};
        add_input(&c, "x", 2, dims, FILL_PLAIN);
        pc_data *t = add_input_typed(&c, "t", PC_DTYPE_INT64, 1, td, FILL_TIES);
        ((int64_t *)t->data)[0] = 1;
        ((int64_t *)t->data)[1] = v == 2 ? -1 : 4; /* -1 is outside without ignore_index = -1 */
        ((int64_t *)t->data)[2] = 0;
        add_node(&c, op, false, "x,t", "z");
        declare_output(&c, 0, PC_DTYPE_FLOAT, 1, td);
        set_string(&c, "reduction", "none");
        if (v == 2) set_int(&c, "ignore_index", 3);
        expect_run_error(&c, PC_ERR_VALUE, "at index 1");
        case_end(&c);
    }
    for (int v = 0; v < 2; v++) {
        tcase c;
        case_begin(&c, "Dropout", 13, false);
        int64_t dims[2] = {3, 4};
        add_input(&c, "x", 2, dims, FILL_PLAIN);
        if (v == 0)
            elem_set(PC_DTYPE_FLOAT, add_input_typed(&c, "r", PC_DTYPE_FLOAT, 0, NULL, FILL_PLAIN)->data, 0,
                     0.25);
        elem_set(PC_DTYPE_BOOL, add_input_typed(&c, "t", PC_DTYPE_BOOL, 0, NULL, FILL_PLAIN)->data, 0, 1);
        add_node(&c, "Dropout", false, v == 0 ? "x,r,t" : "x,,t", "y,mask");
        expect_run_error(&c, PC_ERR_UNSUPPORTED, "training-mode");
        case_end(&c);
    }

    /* LRN's size; Softmax's axis */
    for (int v = 0; v < 3; v++) {
        tcase c;
        case_begin(&c, "LRN", 13, v == 2);
        int64_t dims[4] = {1, 3, 2, 2};
        add_input(&c, "x", 4, dims, FILL_PLAIN);
        add_node(&c, "LRN", v == 2, "x", "y");
        if (v == 1) set_int(&c, "size", 0);
        if (v == 2) set_float(&c, "size", 3.0f);
        expect_refusal(&c, PC_ERR_ATTRIBUTE, 4, dims);
        case_end(&c);
    }
    for (int v = 0; v < 2; v++) {
        tcase c;
        case_begin(&c, "Softmax", v ? 13 : 11, false);
        int64_t dims[3] = {2, 3, 4};
        add_input(&c, "x", 3, dims, FILL_PLAIN);
        add_node(&c, "Softmax", false, "x", "y");
        set_int(&c, "axis", v ? -4 : 3);
        expect_refusal(&c, PC_ERR_ATTRIBUTE, 3, dims);
        case_end(&c);
    }

    /* rows the table does not have */
    {
        tcase c;
        case_begin(&c, "LayerNormalization", 16, false);
        int64_t dims[2] = {2, 3};
        add_input(&c, "x", 2, dims, FILL_PLAIN);
        add_input(&c, "scale", 1, dims + 1, FILL_PLAIN);
        add_node(&c, "LayerNormalization", false, "x,scale", "y");
        CHECK(pc_rt_kernel_find(c.node, 16, PC_DTYPE_FLOAT) == NULL);
        CHECK(pc_rt_kernel_find(c.node, 17, PC_DTYPE_DOUBLE) == NULL);
        CHECK(pc_rt_kernel_find(c.node, 17, PC_DTYPE_FLOAT) != NULL);
        case_end(&c);
    }
}

int main(void)
{
    enum { N_POOL = 700, N_OTHER = 150 };
    op_stats maxpool = {"MaxPool", 0, 0, 0}, avgpool = {"AveragePool", 0, 0, 0},
             gap = {"GlobalAveragePool", 0, 0, 0}, gmp = {"GlobalMaxPool", 0, 0, 0},
             bn = {"BatchNormalization", 0, 0, 0}, in = {"InstanceNormalization", 0, 0, 0},
             lrn = {"LRN", 0, 0, 0}, sm = {"Softmax", 0, 0, 0}, lsm = {"LogSoftmax", 0, 0, 0},
             ln = {"LayerNormalization", 0, 0, 0}, hm = {"Hardmax", 0, 0, 0}, dr = {"Dropout", 0, 0, 0},
             nll = {"NegativeLogLikelihoodLoss", 0, 0, 0}, sce = {"SoftmaxCrossEntropyLoss", 0, 0, 0};
    pool_coverage cov = {{0}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int t = 0; t < N_POOL; t++) {
        pool_case(true, &maxpool, &cov);
        pool_case(false, &avgpool, &cov);
    }
    for (int t = 0; t < N_OTHER; t++) {
        global_pool_case(false, &gap);
        global_pool_case(true, &gmp);
        batchnorm_case(&bn);
        instnorm_case(&in);
        lrn_case(&lrn);
        softmax_case(false, &sm);
        softmax_case(true, &lsm);
        layernorm_case(&ln);
        hardmax_case(&hm);
        dropout_case(&dr);
        loss_case(false, &nll);
        loss_case(true, &sce);
    }
    softmax_exp_precision(&sm);
    refusals();

    op_stats *all[] = {&maxpool, &avgpool, &gap, &gmp, &bn, &in, &lrn, &sm, &lsm, &ln, &hm, &dr, &nll, &sce};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        printf("%-22s %4d compared, %3d refused by both\n", all[i]->op, all[i]->compared, all[i]->refused);
        CHECK_MSG(all[i]->planted == 1, "%s: the planted error was never tried", all[i]->op);
    }
    CHECK(maxpool.compared > N_POOL * 8 / 10 && avgpool.compared > N_POOL * 8 / 10);
    CHECK(gap.compared == N_OTHER && gmp.compared == N_OTHER && bn.compared == N_OTHER &&
          in.compared == N_OTHER && lrn.compared == N_OTHER && sm.compared == N_OTHER + 1 &&
          lsm.compared == N_OTHER && ln.compared == N_OTHER && hm.compared == N_OTHER &&
          dr.compared == N_OTHER && nll.compared == N_OTHER && sce.compared == N_OTHER);
    printf("BatchNormalization training %d, LayerNormalization statistics %d, SCE log_prob %d, Dropout masks "
           "%d\n",
           bn_training, ln_stats, loss_log_prob, dropout_masks);
    CHECK(bn_training > 20 && ln_stats > 50 && loss_log_prob > 30 && dropout_masks > 30);
    printf("pools compared: 1-D %d, 2-D %d, 3-D %d; nhwc %d, asymmetric pads %d, strided %d, dilated %d, "
           "ceil_mode adding a window %d, SAME %d, VALID %d, count_include_pad %d, with NaN/inf %d; MaxPool "
           "Indices %d (column-major %d), not float32 %d\n",
           cov.nsp[1], cov.nsp[2], cov.nsp[3], cov.nhwc, cov.asym_pads, cov.strided, cov.dilated,
           cov.ceil_extra, cov.same, cov.valid, cov.include_pad, cov.specials, cov.indices, cov.column_major,
           cov.typed);
    CHECK(cov.nsp[1] > 50 && cov.nsp[2] > 50 && cov.nsp[3] > 50 && cov.nhwc > 50 && cov.asym_pads > 50 &&
          cov.strided > 50 && cov.dilated > 20 && cov.ceil_extra > 10 && cov.same > 20 && cov.valid > 10 &&
          cov.include_pad > 50 && cov.specials > 50 && cov.indices > 50 && cov.column_major > 20 &&
          cov.typed > 30);
    return pc_test_finish("test_runtime_nn");
}
