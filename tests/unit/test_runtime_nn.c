/* The runtime's nn kernels (core/runtime/kernels/nn.c) against the reference executor. Each case is a
 * one-node model: the kernel row comes from pc_rt_kernel_find, the output dims from core's shape inference
 * (checked against the reference's output), prepare runs with the shapes only (data NULL, as at session
 * creation), then run, and every element must be within 1e-4 * (1 + |reference|) of the reference, with NaN
 * where the reference has NaN and equal infinities. Outputs start as a sentinel, so an element the kernel
 * never writes fails too; once per op a planted error in the output must be seen, so the comparison can fail.
 *
 * Random cases: MaxPool and AveragePool over 1-3 spatial axes (kernel, strides, dilations, asymmetric pads,
 * auto_pad, ceil_mode, count_include_pad, the opsets where each attribute exists), the Global pools,
 * BatchNormalization, InstanceNormalization (also with a mean far above the spread), LRN (the sqrt betas and
 * a general one), each in NCHW and in the channels-last com.ms.internal.nhwc form; Softmax and LogSoftmax
 * before and after opset 13 (NaN, infinities, wide values); LayerNormalization with broadcast Scale and B.
 * A case where the reference refuses (a window of padding only) must be refused by prepare too. Then the
 * refusals: storage_order=1, the Indices output, training BatchNormalization, spatial=0, the Mean/InvStdDev
 * outputs, missing or malformed attributes, attributes the opset does not define, wrong output dims. */
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

/* ---- cases
 * --------------------------------------------------------------------------------------------------- */

enum fill {
    FILL_PLAIN,    /* [-2, 2) */
    FILL_SPECIAL,  /* [-2, 2) with a few NaN, +inf and -inf */
    FILL_POSITIVE, /* [0.05, 2): variances */
    FILL_OFFSET,   /* 300 + [-0.05, 0.05): a mean far above the spread */
    FILL_WIDE,     /* [-90, 90): past float exp's range, for softmax */
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

static void label_add(tcase *c, const char *fmt, ...) PC_PRINTF(2, 3);
static void label_add(tcase *c, const char *fmt, ...)
{
    size_t len = strlen(c->label);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->label + len, sizeof c->label - len, fmt, ap);
    va_end(ap);
}

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

static void add_node(tcase *c, const char *op, bool nhwc, const char *inputs, const char *outputs)
{
    c->node = pt_node(c->m, op, nhwc ? PC_NHWC_DOMAIN : "", inputs, outputs, NULL);
    pt_output(c->m, "y");
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

/* Finds the row and calls prepare with shapes only; output 0 gets out_dims (other outputs rank 0). */
static pc_status kernel_prepare(kernel_run *r, tcase *c, int32_t out_rank, const int64_t *out_dims)
{
    memset(r, 0, sizeof *r);
    pc_error_clear(&r->err);
    const pc_node *node = c->node;
    int64_t opset = pc_model_opset(c->m, node->domain);
    r->row = pc_rt_kernel_find(node, opset, PC_DTYPE_FLOAT);
    CHECK_MSG(r->row != NULL, "%s: no kernel row", c->label);
    if (!r->row) return PC_ERR_UNSUPPORTED;
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
    for (uint32_t i = 0; i < node->n_outputs && i < MAX_OUT; i++) {
        r->out[i] = NULL;
        if (!node->outputs[i]) continue;
        r->tout[i] = (pc_rt_tensor){.dtype = PC_DTYPE_FLOAT, .rank = 0, .n = 1};
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
static uint64_t compare(const float *got, const pc_data *want, double strict_rtol, char *why, size_t why_size)
{
    uint64_t bad = 0;
    const float *w = want->data;
    for (uint64_t i = 0; i < want->n_elements; i++) {
        double a = got[i], b = w[i];
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

/* Runs the case on the reference and on the kernel and compares; both may refuse (prepare with
 * UNSUPPORTED, ATTRIBUTE or SHAPE), nothing else may differ. */
static int run_case(tcase *c, op_stats *stats)
{
    pc_error err;
    pc_error_clear(&err);
    pc_data **ref = NULL;
    pc_status ref_st = pc_ref_run(c->m, c->n_in, c->in, &ref, &err);
    char ref_msg[1100];
    snprintf(ref_msg, sizeof ref_msg, "%s", ref_st == PC_OK ? "" : err.message);
    int result = R_FAILED;
    float *y = NULL;
    void *scratch = NULL;

    pc_status st = pc_graph_infer_shapes(c->m->graph, &err);
    CHECK_MSG(st == PC_OK, "%s: shape inference: %s", c->label, err.message);
    const pc_type *yt = &c->node->outputs[0]->type;
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
    const pc_data *want = ref[0];
    bool same_dims = want->rank == yt->shape.rank;
    for (int32_t i = 0; same_dims && i < want->rank; i++)
        same_dims = want->dims[i] == dims[i];
    CHECK_MSG(same_dims, "%s: inferred output dims differ from the reference's", c->label);
    if (!same_dims) goto done;

    uint64_t n = r.tout[0].n;
    y = malloc((size_t)(n ? n : 1) * sizeof *y);
    if (!y) pt_die("malloc", NULL);
    for (uint64_t i = 0; i < n; i++)
        y[i] = -7777.0f; /* a sentinel: an element never written differs */
    if (r.scratch_bytes) {
        scratch = aligned_alloc(64, (r.scratch_bytes + 63) & ~(size_t)63);
        if (!scratch) pt_die("aligned_alloc", NULL);
    }
    for (uint32_t i = 0; i < c->node->n_inputs && i < MAX_IN; i++)
        for (uint32_t j = 0; j < c->m->graph->n_inputs; j++)
            if (r.in[i] && c->m->graph->inputs[j] == c->node->inputs[i]) r.tin[i].data = c->in[j]->data;
    r.tout[0].data = y;
    r.k.scratch = scratch;
    r.k.scratch_bytes = r.scratch_bytes;
    st = r.row->run(&r.k);
    CHECK_MSG(st == PC_OK, "%s: run: %s: %s", c->label, pc_status_name(st), r.err.message);
    if (st != PC_OK) goto done;
    char why[256] = "";
    uint64_t bad = compare(y, want, c->strict_rtol, why, sizeof why);
    CHECK_MSG(bad == 0, "%s: %llu of %llu elements differ; first %s", c->label, (unsigned long long)bad,
              (unsigned long long)n, why);
    if (bad) goto done;
    result = R_COMPARED;
    if (n > 0 && stats->planted == 0) { /* the comparison must see a wrong element */
        uint64_t at = n / 2;
        float keep = y[at];
        y[at] = isnan(keep) ? 0.0f : isinf(keep) ? 1.0f : keep + 0.01f + 0.01f * fabsf(keep);
        CHECK_MSG(compare(y, want, c->strict_rtol, why, sizeof why) == 1, "%s: a planted error was not seen",
                  c->label);
        y[at] = keep;
        stats->planted++;
    }

done:
    if (result == R_COMPARED) stats->compared++;
    if (result == R_REFUSED) stats->refused++;
    free(y);
    free(scratch);
    if (ref_st == PC_OK) pc_ref_free_outputs(c->m, ref);
    return result;
}

/* ---- random cases
 * ------------------------------------------------------------------------------------------- */

typedef struct pool_coverage {
    int nsp[4], nhwc, asym_pads, strided, dilated, ceil_extra, same, valid, include_pad, specials;
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
    add_input(&c, "x", nsp + 2, xd, specials ? FILL_SPECIAL : FILL_PLAIN);
    add_node(&c, op, nhwc, "x", "y");
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
    if (is_max && opset >= 8 && draw(5) == 0) set_int(&c, "storage_order", 0);
    if (run_case(&c, stats) == R_COMPARED) {
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
    add_node(&c, "BatchNormalization", nhwc, "x,scale,b,mean,var", "y");
    static const float eps[] = {1e-5f, 1e-3f, 0.1f};
    if (draw(2)) set_float(&c, "epsilon", eps[draw(3)]);
    if (opset < 9 && draw(3) == 0) set_int(&c, "spatial", 1);
    if (opset >= 14 && draw(3) == 0) set_int(&c, "training_mode", 0);
    run_case(&c, stats);
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
    add_node(&c, "LayerNormalization", false, bias ? "x,scale,b" : "x,scale", "y");
    if (with_axis) set_int(&c, "axis", axis_attr);
    static const float eps[] = {1e-5f, 1e-3f, 0.1f};
    if (draw(2)) set_float(&c, "epsilon", eps[draw(3)]);
    run_case(&c, stats);
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
    if (out_dims) {
        rank = out_rank;
        memcpy(dims, out_dims, (size_t)rank * sizeof *dims);
    } else if (pc_graph_infer_shapes(c->m->graph, &err) == PC_OK) {
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
    pool_refusal("MaxPool", 12, false, "y", PC_ERR_UNSUPPORTED, storage_order_1);
    pool_refusal("MaxPool", 12, true, "y", PC_ERR_UNSUPPORTED, storage_order_1);
    pool_refusal("MaxPool", 12, false, "y,indices", PC_ERR_UNSUPPORTED, kernel_2x2);
    pool_refusal("MaxPool", 8, false, "y,indices", PC_ERR_UNSUPPORTED, kernel_2x2);
    pool_refusal("MaxPool", 12, true, "y,indices", PC_ERR_UNSUPPORTED, kernel_2x2);
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

    /* BatchNormalization: training forms and per-activation parameters */
    for (int v = 0; v < 5; v++) {
        static const int64_t opsets[] = {14, 15, 9, 7, 8};
        tcase c;
        case_begin(&c, "BatchNormalization", opsets[v], v == 1);
        int64_t dims[4] = {2, 3, 4, 4};
        if (v == 1) dims[1] = 4, dims[3] = 3;
        /* spatial = 0 comes with per-activation parameters, C x D1 x D2 */
        int32_t pr = v == 3 ? 3 : 1;
        const int64_t *pd = v == 3 ? dims + 1 : (v == 1 ? dims + 3 : dims + 1);
        add_input(&c, "x", 4, dims, FILL_PLAIN);
        add_input(&c, "scale", pr, pd, FILL_PLAIN);
        add_input(&c, "b", pr, pd, FILL_PLAIN);
        add_input(&c, "mean", pr, pd, FILL_PLAIN);
        add_input(&c, "var", pr, pd, FILL_POSITIVE);
        add_node(&c, "BatchNormalization", v == 1, "x,scale,b,mean,var",
                 v == 2   ? "y,rm,rv"
                 : v == 4 ? "y,,,sm"
                          : "y");
        if (v < 2) set_int(&c, "training_mode", 1);
        if (v == 3) set_int(&c, "spatial", 0);
        expect_refusal(&c, PC_ERR_UNSUPPORTED, 4, dims);
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

    /* LayerNormalization's Mean and InvStdDev, a Scale that does not broadcast, a bad stash_type */
    for (int v = 0; v < 4; v++) {
        tcase c;
        case_begin(&c, "LayerNormalization", 17, false);
        int64_t dims[3] = {2, 3, 4}, sd[1] = {v == 2 ? 3 : 4};
        add_input(&c, "x", 3, dims, FILL_PLAIN);
        add_input(&c, "scale", 1, sd, FILL_PLAIN);
        add_node(&c, "LayerNormalization", false, "x,scale", v == 0 ? "y,mean" : v == 1 ? "y,,inv" : "y");
        if (v == 3) set_int(&c, "stash_type", 7);
        expect_refusal(&c, v < 2 ? PC_ERR_UNSUPPORTED : v == 2 ? PC_ERR_SHAPE : PC_ERR_ATTRIBUTE, 3, dims);
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
             ln = {"LayerNormalization", 0, 0, 0};
    pool_coverage cov = {{0}, 0, 0, 0, 0, 0, 0, 0, 0, 0};
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
    }
    softmax_exp_precision(&sm);
    refusals();

    op_stats *all[] = {&maxpool, &avgpool, &gap, &gmp, &bn, &in, &lrn, &sm, &lsm, &ln};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        printf("%-22s %4d compared, %3d refused by both\n", all[i]->op, all[i]->compared, all[i]->refused);
        CHECK_MSG(all[i]->planted == 1, "%s: the planted error was never tried", all[i]->op);
    }
    CHECK(maxpool.compared > N_POOL * 8 / 10 && avgpool.compared > N_POOL * 8 / 10);
    CHECK(gap.compared == N_OTHER && gmp.compared == N_OTHER && bn.compared == N_OTHER &&
          in.compared == N_OTHER && lrn.compared == N_OTHER && sm.compared == N_OTHER + 1 &&
          lsm.compared == N_OTHER && ln.compared == N_OTHER);
    printf("pools compared: 1-D %d, 2-D %d, 3-D %d; nhwc %d, asymmetric pads %d, strided %d, dilated %d, "
           "ceil_mode adding a window %d, SAME %d, VALID %d, count_include_pad %d, with NaN/inf %d\n",
           cov.nsp[1], cov.nsp[2], cov.nsp[3], cov.nhwc, cov.asym_pads, cov.strided, cov.dilated,
           cov.ceil_extra, cov.same, cov.valid, cov.include_pad, cov.specials);
    CHECK(cov.nsp[1] > 50 && cov.nsp[2] > 50 && cov.nsp[3] > 50 && cov.nhwc > 50 && cov.asym_pads > 50 &&
          cov.strided > 50 && cov.dilated > 20 && cov.ceil_extra > 10 && cov.same > 20 && cov.valid > 10 &&
          cov.include_pad > 50 && cov.specials > 50);
    return pc_test_finish("test_runtime_nn");
}
