/* The blocked EP's kernels (core/runtime/kernels/blocked.c) against the reference executor
 * (reference/ops_blocked.c, which runs the standard op on the unblocked, zero-padded tensor). Each case is a
 * one-node model in com.passcheck.blocked (opset 1) run by a session (optimize off) at 1 and at 3 threads and
 * by pc_ref_run on the same inputs:
 *   - each session runs twice and must give the same bits twice; each thread count's output is compared
 *     with the reference:
 *   - ToBlocked, FromBlocked, MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool, BatchNormalization and
 *     LRN must give the reference's bits (NaN where it has NaN: any payload for the arithmetic, the same bits
 *     for the ops that copy elements, the reorders and the max pools): the kernels do the reference's
 *     arithmetic in its order;
 *   - Conv (float sgemm against the reference's double sums) must be within 1e-5 |want| + 64 FLT_EPSILON *
 *     g * S, S the sum of |bias| and of the |products| behind the element (the same conv run by the reference
 *     on |X|, |W| and |B|), g = |scale| / sqrt(var + epsilon) of the fused BatchNormalization (1 without);
 *   - every padded lane (channel past the real C or M) of a blocked output must be +0 (bits 0), the inputs'
 *     padded lanes being 0;
 *   - once per op a wrong byte planted in the session's output must be seen by the comparison (the low byte
 *     for the exact ops, the exponent's byte for Conv);
 *   - where the reference refuses (a pooling window of padding only), the session must refuse too.
 * Random cases: block sizes 1, 3, 4, 8, 16 (and 1024 for the reorders), channel counts that are and are not
 * multiples of the block, N = 1 and 2, kernels 1x1, 3x3 and others, strides, explicit pads, dilations,
 * auto_pad SAME_UPPER / SAME_LOWER / VALID, ceil_mode, count_include_pad, Conv with and without bias and the
 * fused BatchNormalization, relu 0/1, strips of im2col longer than one, the packed weight (from 128 output
 * pixels) and the product per output block, the pointwise path, LRN sizes 1..5, NaN (random payloads, signs)
 * and infinities in the pools and reorders, size-0 batches, planes and channel sets. Then a chain of blocked
 * ops (in-place BatchNormalization), and the refusals, each by the kernel's prepare directly: wrong ranks and
 * types, group != 1, relu = 2, blocks that disagree, wrong vector sizes, inputs 3..6 incomplete,
 * FromBlocked's channels out of range, ToBlocked's block 0 or 1025, MaxPool's Indices, attributes the ai.onnx
 * opset does not define, windows of padding only, wrong output dims; and one through a session, whose message
 * names the node. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/rt_internal.h"
#include "reference/reference.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static uint64_t rng_state = 0x626c6f636b656421ull;

static uint32_t draw(uint32_t bound)
{
    return (uint32_t)(pc_splitmix64(&rng_state) % bound);
}

static float uniform(double lo, double hi)
{
    double u = (double)(pc_splitmix64(&rng_state) >> 11) / 9007199254740992.0;
    return (float)(lo + (hi - lo) * u);
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* ---- per-op statistics
 * --------------------------------------------------------------------------------------- */

enum { OP_TO, OP_FROM, OP_CONV, OP_BN, OP_MAXPOOL, OP_AVGPOOL, OP_GMP, OP_GAP, OP_LRN, OP_COUNT };

typedef struct op_stats {
    const char *op;
    int compared, refused, planted;
    uint64_t elements;
    bool exact;
    bool copies; /* the output's elements are the input's: NaN payloads must be the reference's too */
} op_stats;

static op_stats stats[OP_COUNT] = {
    {"ToBlocked", 0, 0, 0, 0, true, true},     {"FromBlocked", 0, 0, 0, 0, true, true},
    {"Conv", 0, 0, 0, 0, false, false},        {"BatchNormalization", 0, 0, 0, 0, true, false},
    {"MaxPool", 0, 0, 0, 0, true, true},       {"AveragePool", 0, 0, 0, 0, true, false},
    {"GlobalMaxPool", 0, 0, 0, 0, true, true}, {"GlobalAveragePool", 0, 0, 0, 0, true, false},
    {"LRN", 0, 0, 0, 0, true, false},
};

/* ---- tensors
 * ------------------------------------------------------------------------------------------------- */

static pc_data *tensor(int32_t rank, const int64_t *dims)
{
    pc_error err;
    pc_data *d = pc_data_new_tensor(PC_DTYPE_FLOAT, rank, dims, &err);
    if (!d) pt_die("tensor", &err);
    return d;
}

static float *fdata(const pc_data *d)
{
    return (float *)d->data;
}

enum fill { FILL_PLAIN, FILL_SPECIAL };

static float value(enum fill f)
{
    if (f == FILL_SPECIAL) {
        switch (draw(16)) {
        case 0: { /* a quiet NaN with a random payload and sign: which NaN a max keeps shows */
            uint32_t u = 0x7fc00000u | (uint32_t)draw(1u << 22);
            u |= draw(2) ? 0x80000000u : 0u;
            float nan;
            memcpy(&nan, &u, sizeof nan);
            return nan;
        }
        case 1:
            return INFINITY;
        case 2:
            return -INFINITY;
        case 3:
            return -0.0f;
        case 4:
        case 5:
            return (float)((int)draw(3) - 1); /* ties */
        default:
            break;
        }
    }
    return uniform(-2.0, 2.0);
}

/* (N, ceil(C / b), H, W, b): random in the lanes of the C real channels, 0 (or, with junk, random) past them
 */
static pc_data *blocked_random(int64_t n, int64_t c, int64_t h, int64_t w, int64_t b, enum fill f, bool junk)
{
    int64_t dims[5] = {n, ceil_div(c, b), h, w, b};
    pc_data *d = tensor(5, dims);
    float *v = fdata(d);
    for (uint64_t e = 0; e < d->n_elements; e++) {
        int64_t ch = (int64_t)(e / (uint64_t)(h * w * b)) % dims[1] * b + (int64_t)(e % (uint64_t)b);
        v[e] = ch < c ? value(f) : junk ? uniform(-2.0, 2.0) : 0.0f;
    }
    return d;
}

/* the channel of element e of a blocked (N, Cb, H, W, b) tensor */
static int64_t blocked_channel(const pc_data *d, uint64_t e)
{
    const int64_t *k = d->dims;
    return (int64_t)(e / (uint64_t)(k[2] * k[3] * k[4])) % k[1] * k[4] + (int64_t)(e % (uint64_t)k[4]);
}

/* ---- cases
 * --------------------------------------------------------------------------------------------------- */

enum { MAX_FEEDS = 2 };

typedef struct tcase {
    int op;
    pc_model *m;
    pc_node *node;
    uint32_t n_feeds;
    pc_data *feeds[MAX_FEEDS];
    int64_t real_channels; /* > 0: output 0 is blocked; its lanes past this channel count must be +0 */
    pc_model *abs_model;   /* Conv: the conv of |X|, |W|, |B| (no BatchNormalization, no Relu) */
    pc_data *abs_feed;
    float *gain; /* Conv with the fused BatchNormalization: |scale| / sqrt(var + eps) per padded channel */
    char label[320];
} tcase;

#define label_add(c, ...) pc_test_appendf((c)->label, sizeof(c)->label, __VA_ARGS__)

static pc_model *blocked_model(int64_t onnx_opset)
{
    pc_error err;
    pc_model *m = pt_model(onnx_opset);
    if (pc_model_set_opset(m, PC_BLOCKED_DOMAIN, 1, &err) != PC_OK) pt_die("opset", &err);
    return m;
}

static void case_begin(tcase *c, int op, int64_t onnx_opset)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->m = blocked_model(onnx_opset);
    label_add(c, "%s (ai.onnx %lld)", stats[op].op, (long long)onnx_opset);
}

static void case_free(tcase *c)
{
    for (uint32_t i = 0; i < c->n_feeds; i++)
        pc_data_unref(c->feeds[i]);
    pc_data_unref(c->abs_feed);
    pc_model_free(c->m);
    if (c->abs_model) pc_model_free(c->abs_model);
    free(c->gain);
}

static void feed(tcase *c, pc_model *m, const char *name, pc_data *d)
{
    pt_input(m, name, d->dtype, d->rank, d->dims);
    if (m == c->m) c->feeds[c->n_feeds++] = d;
}

static void set_int(pc_node *n, const char *name, int64_t v)
{
    pc_error err;
    if (pc_node_set_attr_int(n, name, v, &err) != PC_OK) pt_die(name, &err);
}

static void set_float(pc_node *n, const char *name, float v)
{
    pc_error err;
    if (pc_node_set_attr_float(n, name, v, &err) != PC_OK) pt_die(name, &err);
}

static void set_ints(pc_node *n, const char *name, size_t k, const int64_t *v)
{
    pc_error err;
    if (pc_node_set_attr_ints(n, name, k, v, &err) != PC_OK) pt_die(name, &err);
}

static void set_string(pc_node *n, const char *name, const char *v)
{
    pc_error err;
    if (pc_node_set_attr_string(n, name, v, &err) != PC_OK) pt_die(name, &err);
}

/* ---- running and comparing
 * ---------------------------------------------------------------------------------- */

/* A session's output for m, run twice (the second run must give the first's bits); NULL when creation or a
 * run fails (status and message in *st, msg). */
static pc_data *session_output(const pc_model *m, uint32_t n, pc_data *const *feeds, int threads,
                               pc_status *st, char *msg, size_t msg_size)
{
    pc_error err;
    pc_error_clear(&err);
    pc_session_options so;
    pc_session_options_default(&so);
    so.optimize = false;
    so.threads = threads;
    pc_session *s = NULL;
    pc_data **outs = NULL, *y = NULL;
    *st = pc_session_create(m, &so, &s, &err);
    for (int run = 0; run < 2 && *st == PC_OK; run++) {
        *st = pc_session_run(s, n, feeds, &outs, &err);
        if (*st != PC_OK) break;
        if (run == 0)
            y = pc_data_ref(outs[0]);
        else
            CHECK_MSG(outs[0]->n_bytes == y->n_bytes && memcmp(outs[0]->data, y->data, y->n_bytes) == 0,
                      "a second run at %d threads gave other bits", threads);
        pc_session_free_outputs(s, outs);
    }
    if (*st != PC_OK) {
        pc_data_unref(y);
        y = NULL;
    }
    snprintf(msg, msg_size, "%s", *st == PC_OK ? "" : err.message);
    pc_session_free(s);
    return y;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Elements of got outside the case's rule against want (exact, or Conv's tolerance with sabs the sum of
 * |products| per element); the first one described in why. */
static uint64_t compare(const tcase *c, const pc_data *got, const pc_data *want, const pc_data *sabs,
                        char *why, size_t why_size)
{
    if (got->rank != want->rank || got->n_elements != want->n_elements ||
        memcmp(got->dims, want->dims, (size_t)got->rank * sizeof *got->dims) != 0) {
        snprintf(why, why_size, "shapes differ (rank %d, %llu elements; reference rank %d, %llu elements)",
                 (int)got->rank, (unsigned long long)got->n_elements, (int)want->rank,
                 (unsigned long long)want->n_elements);
        return 1;
    }
    const float *a = fdata(got), *b = fdata(want);
    uint64_t bad = 0;
    for (uint64_t e = 0; e < want->n_elements; e++) {
        bool ok;
        double tol = 0.0;
        if (stats[c->op].copies) {
            ok = bits_of(a[e]) == bits_of(b[e]);
        } else if (isnan(a[e]) || isnan(b[e])) {
            ok = isnan(a[e]) && isnan(b[e]);
        } else if (stats[c->op].exact) {
            ok = bits_of(a[e]) == bits_of(b[e]);
        } else {
            double g = c->gain ? (double)c->gain[blocked_channel(want, e)] : 1.0;
            tol = 1e-5 * fabs((double)b[e]) + 64.0 * FLT_EPSILON * g * (double)fdata(sabs)[e];
            ok = isinf(b[e]) ? a[e] == b[e] : fabs((double)a[e] - (double)b[e]) <= tol;
        }
        if (!ok && bad++ == 0)
            snprintf(why, why_size,
                     "element %llu: kernel %.9g (0x%08x), reference %.9g (0x%08x), tolerance %.3g",
                     (unsigned long long)e, (double)a[e], (unsigned)bits_of(a[e]), (double)b[e],
                     (unsigned)bits_of(b[e]), tol);
    }
    return bad;
}

/* Lanes of a blocked output past `channels` that are not +0. */
static uint64_t padded_nonzero(const pc_data *y, int64_t channels, char *why, size_t why_size)
{
    uint64_t bad = 0;
    for (uint64_t e = 0; e < y->n_elements; e++)
        if (blocked_channel(y, e) >= channels && bits_of(fdata(y)[e]) != 0 && bad++ == 0)
            snprintf(why, why_size, "element %llu (channel %lld) is %.9g", (unsigned long long)e,
                     (long long)blocked_channel(y, e), (double)fdata(y)[e]);
    return bad;
}

static void run_case(tcase *c)
{
    op_stats *s = &stats[c->op];
    pc_error err;
    pc_error_clear(&err);
    pc_data **ref = NULL, **ref_abs = NULL;
    pc_status ref_st = pc_ref_run(c->m, c->n_feeds, c->feeds, &ref, &err);
    char ref_msg[1100], msg1[1100], msg3[1100], why[512] = "";
    snprintf(ref_msg, sizeof ref_msg, "%s", ref_st == PC_OK ? "" : err.message);
    pc_status st1, st3;
    pc_data *y1 = session_output(c->m, c->n_feeds, c->feeds, 1, &st1, msg1, sizeof msg1);
    pc_data *y3 = session_output(c->m, c->n_feeds, c->feeds, 3, &st3, msg3, sizeof msg3);
    if (ref_st != PC_OK || st1 != PC_OK) {
        CHECK_MSG(ref_st != PC_OK && st1 != PC_OK,
                  "%s: only one side refused: reference %s (%s), session %s (%s)", c->label,
                  pc_status_name(ref_st), ref_msg, pc_status_name(st1), msg1);
        CHECK_MSG(st1 == PC_ERR_UNSUPPORTED || st1 == PC_ERR_ATTRIBUTE || st1 == PC_ERR_SHAPE,
                  "%s: the session failed with %s: %s", c->label, pc_status_name(st1), msg1);
        if (ref_st != PC_OK && st1 != PC_OK) s->refused++;
        goto done;
    }
    CHECK_MSG(st3 == PC_OK, "%s: 3 threads: %s", c->label, msg3);
    const pc_data *sabs = NULL;
    if (c->abs_model) {
        pc_status st = pc_ref_run(c->abs_model, 1, &c->abs_feed, &ref_abs, &err);
        CHECK_MSG(st == PC_OK, "%s: the reference on |inputs|: %s", c->label, err.message);
        if (st != PC_OK) goto done;
        sabs = ref_abs[0];
    }
    uint64_t bad = 0;
    for (int r = 0; r < 2;
         r++) { /* 1 thread, 3 threads (a Conv split by output blocks may round otherwise) */
        const pc_data *y = r ? y3 : y1;
        if (!y) continue;
        uint64_t wrong = compare(c, y, ref[0], sabs, why, sizeof why);
        CHECK_MSG(wrong == 0, "%s: %d thread(s): %llu of %llu elements differ from the reference; first %s",
                  c->label, r ? 3 : 1, (unsigned long long)wrong, (unsigned long long)ref[0]->n_elements,
                  why);
        if (c->real_channels > 0) {
            uint64_t nz = padded_nonzero(y, c->real_channels, why, sizeof why);
            CHECK_MSG(nz == 0, "%s: %d thread(s): %llu padded lanes are not +0; first %s", c->label,
                      r ? 3 : 1, (unsigned long long)nz, why);
            wrong += nz;
        }
        bad += wrong;
    }
    if (bad) goto done;
    s->compared++;
    s->elements += ref[0]->n_elements;
    if (s->planted < 2 && y1->n_elements > 0) { /* a wrong byte must be seen */
        uint64_t at = y1->n_elements / 2;
        unsigned char *byte = (unsigned char *)y1->data + at * 4 + (s->exact ? 0 : 3);
        unsigned char keep = *byte;
        *byte ^= s->exact ? 0x01 : 0x40;
        CHECK_MSG(isnan(fdata(y1)[at]) || compare(c, y1, ref[0], sabs, why, sizeof why) == 1,
                  "%s: a wrong byte in element %llu was not seen", c->label, (unsigned long long)at);
        *byte = keep;
        s->planted++;
    }
done:
    pc_data_unref(y1);
    pc_data_unref(y3);
    if (ref_st == PC_OK) pc_ref_free_outputs(c->m, ref);
    if (ref_abs) pc_ref_free_outputs(c->abs_model, ref_abs);
    case_free(c);
}

/* ---- the reorders
 * -------------------------------------------------------------------------------------------- */

static const int64_t blocks[] = {1, 4, 8, 16, 3};

static void to_blocked_case(int64_t n, int64_t ch, int64_t h, int64_t w, int64_t b, enum fill f)
{
    tcase c;
    case_begin(&c, OP_TO, 17);
    int64_t dims[4] = {n, ch, h, w};
    pc_data *x = tensor(4, dims);
    for (uint64_t e = 0; e < x->n_elements; e++)
        fdata(x)[e] = value(f);
    feed(&c, c.m, "x", x);
    c.node = pt_node(c.m, "ToBlocked", PC_BLOCKED_DOMAIN, "x", "y", NULL);
    set_int(c.node, "block", b);
    pt_output(c.m, "y");
    c.real_channels = ch;
    label_add(&c, " x (%lld,%lld,%lld,%lld) block %lld", (long long)n, (long long)ch, (long long)h,
              (long long)w, (long long)b);
    run_case(&c);
}

static void from_blocked_case(int64_t n, int64_t ch, int64_t h, int64_t w, int64_t b, bool junk, enum fill f)
{
    tcase c;
    case_begin(&c, OP_FROM, 17);
    feed(&c, c.m, "x", blocked_random(n, ch, h, w, b, f, junk));
    c.node = pt_node(c.m, "FromBlocked", PC_BLOCKED_DOMAIN, "x", "y", NULL);
    set_int(c.node, "channels", ch);
    pt_output(c.m, "y");
    label_add(&c, " x (%lld,%lld,%lld,%lld) block %lld channels %lld%s", (long long)n,
              (long long)ceil_div(ch, b), (long long)h, (long long)w, (long long)b, (long long)ch,
              junk ? " (junk in the padded lanes)" : "");
    run_case(&c);
}

static void reorder_cases(void)
{
    for (int t = 0; t < 60; t++) {
        int64_t b = blocks[t % 5], ch = 1 + draw((uint32_t)(3 * b + 2)), n = 1 + draw(2);
        int64_t h = 1 + draw(6), w = 1 + draw(9);
        enum fill f = t % 3 == 0 ? FILL_SPECIAL : FILL_PLAIN;
        to_blocked_case(n, ch, h, w, b, f);
        from_blocked_case(n, ch, h, w, b, t % 2 == 1, f);
    }
    to_blocked_case(1, 1000, 3, 2, 1024, FILL_PLAIN);
    from_blocked_case(1, 1000, 3, 2, 1024, true, FILL_PLAIN);
    to_blocked_case(2, 16, 70, 3, 16, FILL_SPECIAL); /* more than one chunk of pixels */
    from_blocked_case(2, 13, 70, 3, 16, true, FILL_SPECIAL);
}

/* ---- Conv
 * ------------------------------------------------------------------------------------------------------ */

typedef struct conv_cfg {
    int64_t b, n, c, m, h, w, kh, kw, s[2], d[2], pads[4];
    const char *auto_pad; /* NULL: explicit pads */
    bool bias, bn, relu, set_eps;
    float eps;
} conv_cfg;

/* A conv of k x k at strides and dilations 1, no pads, no bias, no BatchNormalization, no Relu. */
static conv_cfg cfg_of(int64_t b, int64_t n, int64_t c, int64_t m, int64_t h, int64_t w, int64_t k)
{
    conv_cfg g;
    memset(&g, 0, sizeof g);
    g.b = b, g.n = n, g.c = c, g.m = m, g.h = h, g.w = w, g.kh = g.kw = k;
    g.s[0] = g.s[1] = g.d[0] = g.d[1] = 1;
    return g;
}

static void pad_all(conv_cfg *g, int64_t pad)
{
    for (int i = 0; i < 4; i++)
        g->pads[i] = pad;
}

/* W (M, C, kH, kW) blocked: (mo, ci, y, x, i, o) = W[mo b + o, ci b + i, y, x], zeros past M or C */
static pc_data *block_weight(const float *plain, const conv_cfg *g)
{
    int64_t b = g->b, mb = ceil_div(g->m, b), cb = ceil_div(g->c, b);
    int64_t dims[6] = {mb, cb, g->kh, g->kw, b, b};
    pc_data *w = tensor(6, dims);
    for (int64_t o = 0; o < g->m; o++)
        for (int64_t i = 0; i < g->c; i++)
            for (int64_t y = 0; y < g->kh; y++)
                for (int64_t x = 0; x < g->kw; x++)
                    fdata(w)[(((((o / b) * cb + i / b) * g->kh + y) * g->kw + x) * b + i % b) * b + o % b] =
                        plain[((o * g->c + i) * g->kh + y) * g->kw + x];
    return w;
}

/* A per-channel vector of M real values (from gen) padded with `pad` to ceil(M / b) b. */
static float *padded_vector(const conv_cfg *g, int64_t len, double lo, double hi, float pad)
{
    int64_t mp = ceil_div(len, g->b) * g->b;
    float *v = malloc((size_t)mp * sizeof *v);
    if (!v) pt_die("malloc", NULL);
    for (int64_t i = 0; i < mp; i++)
        v[i] = i < len ? uniform(lo, hi) : pad;
    return v;
}

static void abs_all(float *v, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        v[i] = fabsf(v[i]);
}

/* The Conv node on m reading x, w (and b, and the BN vectors), with g's attributes. */
static pc_node *conv_node(pc_model *m, const conv_cfg *g, bool with_bn, bool relu)
{
    const char *ins = with_bn ? (g->bias ? "x,w,b,scale,shift,mean,var" : "x,w,,scale,shift,mean,var")
                              : (g->bias ? "x,w,b" : "x,w");
    pc_node *n = pt_node(m, "Conv", PC_BLOCKED_DOMAIN, ins, "y", NULL);
    if (g->s[0] != 1 || g->s[1] != 1 || draw(2)) set_ints(n, "strides", 2, g->s);
    if (g->d[0] != 1 || g->d[1] != 1) set_ints(n, "dilations", 2, g->d);
    if (g->auto_pad)
        set_string(n, "auto_pad", g->auto_pad);
    else if (g->pads[0] || g->pads[1] || g->pads[2] || g->pads[3])
        set_ints(n, "pads", 4, g->pads);
    int64_t ks[2] = {g->kh, g->kw};
    set_ints(n, "kernel_shape", 2, ks);
    if (relu) set_int(n, "relu", 1);
    if (g->set_eps) set_float(n, "epsilon", g->eps);
    pt_output(m, "y");
    return n;
}

static void conv_case(const conv_cfg *g)
{
    tcase c;
    case_begin(&c, OP_CONV, 17);
    int64_t b = g->b, mp = ceil_div(g->m, b) * b;
    pc_data *x = blocked_random(g->n, g->c, g->h, g->w, b, FILL_PLAIN, false);
    size_t wn = (size_t)(g->m * g->c * g->kh * g->kw);
    float *wp = malloc((wn ? wn : 1) * sizeof *wp);
    if (!wp) pt_die("malloc", NULL);
    for (size_t i = 0; i < wn; i++)
        wp[i] = uniform(-1.0, 1.0);
    pc_data *w = block_weight(wp, g);
    float *bias = padded_vector(g, g->m, -1.0, 1.0, 0.0f);
    float *scale = padded_vector(g, g->m, 0.5, 1.5, 0.0f), *shift = padded_vector(g, g->m, -1.0, 1.0, 0.0f);
    float *mean = padded_vector(g, g->m, -1.0, 1.0, 0.0f), *var = padded_vector(g, g->m, 0.1, 2.0, 1.0f);

    feed(&c, c.m, "x", x);
    pt_const_f(c.m, "w", 6, w->dims, fdata(w));
    if (g->bias) pt_const_f(c.m, "b", 1, &mp, bias);
    if (g->bn) {
        pt_const_f(c.m, "scale", 1, &mp, scale);
        pt_const_f(c.m, "shift", 1, &mp, shift);
        pt_const_f(c.m, "mean", 1, &mp, mean);
        pt_const_f(c.m, "var", 1, &mp, var);
        c.gain = malloc((size_t)mp * sizeof *c.gain);
        if (!c.gain) pt_die("malloc", NULL);
        double eps = g->set_eps ? (double)g->eps : (double)1e-5f;
        for (int64_t i = 0; i < mp; i++)
            c.gain[i] = (float)(fabs((double)scale[i]) / sqrt((double)var[i] + eps));
    }
    c.node = conv_node(c.m, g, g->bn, g->relu);
    c.real_channels = g->m;

    /* the same conv on |X|, |W|, |B|: the sum of |products| (and |bias|) behind each element */
    c.abs_model = blocked_model(17);
    pc_data *xa = tensor(5, x->dims);
    memcpy(xa->data, x->data, x->n_bytes);
    abs_all(fdata(xa), xa->n_elements);
    abs_all(fdata(w), w->n_elements);
    abs_all(bias, (uint64_t)mp);
    feed(&c, c.abs_model, "x", xa);
    c.abs_feed = xa;
    pt_const_f(c.abs_model, "w", 6, w->dims, fdata(w));
    if (g->bias) pt_const_f(c.abs_model, "b", 1, &mp, bias);
    conv_node(c.abs_model, g, false, false);

    label_add(&c,
              " x (%lld,%lld,%lld,%lld) block %lld, M %lld, kernel %lldx%lld, strides (%lld,%lld), dilations "
              "(%lld,%lld), ",
              (long long)g->n, (long long)g->c, (long long)g->h, (long long)g->w, (long long)b,
              (long long)g->m, (long long)g->kh, (long long)g->kw, (long long)g->s[0], (long long)g->s[1],
              (long long)g->d[0], (long long)g->d[1]);
    if (g->auto_pad)
        label_add(&c, "auto_pad %s", g->auto_pad);
    else
        label_add(&c, "pads (%lld,%lld,%lld,%lld)", (long long)g->pads[0], (long long)g->pads[1],
                  (long long)g->pads[2], (long long)g->pads[3]);
    label_add(&c, "%s%s%s", g->bias ? ", bias" : "", g->bn ? ", fused BN" : "", g->relu ? ", relu" : "");
    free(wp);
    free(bias);
    free(scale);
    free(shift);
    free(mean);
    free(var);
    pc_data_unref(w);
    run_case(&c);
}

static void conv_cases(void)
{
    static const char *const modes[] = {NULL, NULL, "SAME_UPPER", "SAME_LOWER", "VALID"};
    /* 400 small planes, then 80 of 8 to 23 rows and columns (from 128 output pixels the weight is packed) */
    for (int t = 0; t < 480; t++) {
        conv_cfg g;
        memset(&g, 0, sizeof g);
        g.b = blocks[t % 5];
        g.n = 1 + draw(2);
        g.c = 1 + draw((uint32_t)(2 * g.b + 3));
        g.m = 1 + draw((uint32_t)(2 * g.b + 3));
        int kind = t / 5 % 4; /* 1x1, 3x3, 3x3 again, an odd shape */
        g.kh = kind == 0 ? 1 : kind == 3 ? 1 + draw(3) : 3;
        g.kw = kind == 0 ? 1 : kind == 3 ? 1 + draw(4) : 3;
        for (int a = 0; a < 2; a++) {
            g.s[a] = draw(3) == 0 ? 2 : 1;
            g.d[a] = draw(4) == 0 ? 2 : 1;
        }
        g.auto_pad = modes[draw(5)];
        int64_t ek[2] = {(g.kh - 1) * g.d[0] + 1, (g.kw - 1) * g.d[1] + 1};
        for (int a = 0; a < 4 && !g.auto_pad; a++)
            g.pads[a] = draw(3);
        int64_t need_h = ek[0] - (g.auto_pad ? 0 : g.pads[0] + g.pads[2]);
        int64_t need_w = ek[1] - (g.auto_pad ? 0 : g.pads[1] + g.pads[3]);
        g.h = (need_h > 1 ? need_h : 1) + draw(5) + (t >= 400 ? 8 + draw(8) : 0);
        g.w = (need_w > 1 ? need_w : 1) + draw(6) + (t >= 400 ? 8 + draw(8) : 0);
        g.bias = draw(2);
        g.bn = draw(2);
        g.relu = draw(2);
        g.set_eps = draw(2);
        g.eps = uniform(1e-6, 1e-2);
        conv_case(&g);
    }
    /* longer than one strip of im2col (576 pixels at 1296 bytes each), more output blocks than threads */
    conv_cfg big = cfg_of(16, 1, 20, 40, 24, 24, 3);
    pad_all(&big, 1);
    big.bias = big.bn = big.relu = true;
    conv_case(&big);
    big.n = 2, big.bn = false, big.relu = false, big.b = 8, big.c = 9, big.m = 17;
    conv_case(&big);
    /* the pointwise path: 1x1, stride 1, no pads, one input block (the input read in place) */
    conv_cfg pw = cfg_of(16, 2, 16, 35, 20, 13, 1);
    pw.bias = true, pw.relu = true;
    conv_case(&pw);
    pw.c = 5, pw.b = 8, pw.bn = true, pw.bias = false;
    conv_case(&pw);
    pw.b = 1, pw.c = 1, pw.m = 3;
    conv_case(&pw);
    /* 1x1 but not in place: padding at the end only, at the start, stride 2 */
    conv_cfg ends = cfg_of(8, 1, 6, 9, 4, 5, 1);
    ends.pads[2] = 2, ends.pads[3] = 1, ends.bias = true;
    conv_case(&ends);
    ends.pads[0] = 1, ends.pads[2] = 0;
    conv_case(&ends);
    ends.pads[0] = ends.pads[1] = ends.pads[2] = ends.pads[3] = 0, ends.s[0] = 2;
    conv_case(&ends);
}

/* ---- BatchNormalization
 * -------------------------------------------------------------------------------------- */

static void bn_case(int64_t n, int64_t ch, int64_t h, int64_t w, int64_t b, bool relu, bool set_eps,
                    float eps)
{
    tcase c;
    case_begin(&c, OP_BN, draw(2) ? 15 : 9);
    conv_cfg g = {.b = b};
    int64_t cp = ceil_div(ch, b) * b;
    feed(&c, c.m, "x", blocked_random(n, ch, h, w, b, FILL_PLAIN, false));
    float *scale = padded_vector(&g, ch, -1.5, 1.5, 0.0f), *shift = padded_vector(&g, ch, -1.0, 1.0, 0.0f);
    float *mean = padded_vector(&g, ch, -1.0, 1.0, 0.0f), *var = padded_vector(&g, ch, 0.01, 2.0, 1.0f);
    pt_const_f(c.m, "scale", 1, &cp, scale);
    pt_const_f(c.m, "shift", 1, &cp, shift);
    pt_const_f(c.m, "mean", 1, &cp, mean);
    pt_const_f(c.m, "var", 1, &cp, var);
    c.node = pt_node(c.m, "BatchNormalization", PC_BLOCKED_DOMAIN, "x,scale,shift,mean,var", "y", NULL);
    if (relu) set_int(c.node, "relu", 1);
    if (set_eps) set_float(c.node, "epsilon", eps);
    pt_output(c.m, "y");
    c.real_channels = ch;
    label_add(&c, " x (%lld,%lld,%lld,%lld) block %lld%s", (long long)n, (long long)ch, (long long)h,
              (long long)w, (long long)b, relu ? ", relu" : "");
    free(scale);
    free(shift);
    free(mean);
    free(var);
    run_case(&c);
}

static void bn_cases(void)
{
    for (int t = 0; t < 80; t++) {
        /* one draw per declarator: the order of a call's arguments is unspecified */
        int64_t b = blocks[t % 5], n = 1 + draw(2), ch = 1 + draw((uint32_t)(3 * b + 2)), h = 1 + draw(7),
                w = 1 + draw(7);
        bool set_eps = draw(2);
        bn_case(n, ch, h, w, b, t / 5 % 2 == 1, set_eps, uniform(1e-6, 0.1));
    }
    bn_case(2, 40, 17, 15, 16, true, false, 0.0f);
}

/* ---- MaxPool, AveragePool
 * ------------------------------------------------------------------------------------ */

static void pool_case(int op, int t)
{
    bool is_max = op == OP_MAXPOOL;
    int64_t b = blocks[t % 5], n = 1 + draw(2), ch = 1 + draw((uint32_t)(2 * b + 3));
    /* dilations exist for MaxPool from opset 10, for AveragePool from 19 */
    int64_t opset = is_max ? (draw(2) ? 12 : 18) : (draw(2) ? 19 : 13);
    bool dilate = is_max || opset >= 19;
    int64_t k[2], s[2], d[2] = {1, 1}, pads[4] = {0};
    for (int a = 0; a < 2; a++) {
        k[a] = 1 + draw(3);
        s[a] = 1 + draw(3 - (uint32_t)a);
    }
    if (t % 7 == 0) k[0] = k[1] = 1;
    for (int a = 0; a < 2 && dilate; a++)
        d[a] = draw(3) == 0 ? 2 : 1;
    static const char *const modes[] = {NULL, NULL, NULL, "SAME_UPPER", "SAME_LOWER", "VALID"};
    const char *ap = modes[draw(6)];
    int64_t ek[2] = {(k[0] - 1) * d[0] + 1, (k[1] - 1) * d[1] + 1};
    for (int a = 0; a < 4 && !ap; a++)
        pads[a] = draw((uint32_t)(ek[a % 2] < 3 ? ek[a % 2] : 3)); /* below the dilated kernel */
    int64_t h = ek[0] + draw(5), w = ek[1] + draw(6);
    bool ceil_mode = draw(2), include_pad = !is_max && draw(2), specials = t % 3 == 0;
    tcase c;
    case_begin(&c, op, opset);
    feed(&c, c.m, "x", blocked_random(n, ch, h, w, b, specials ? FILL_SPECIAL : FILL_PLAIN, false));
    c.node = pt_node(c.m, is_max ? "MaxPool" : "AveragePool", PC_BLOCKED_DOMAIN, "x", "y", NULL);
    set_ints(c.node, "kernel_shape", 2, k);
    if (s[0] != 1 || s[1] != 1) set_ints(c.node, "strides", 2, s);
    if (d[0] != 1 || d[1] != 1) set_ints(c.node, "dilations", 2, d);
    if (ap)
        set_string(c.node, "auto_pad", ap);
    else if (pads[0] || pads[1] || pads[2] || pads[3] || draw(2))
        set_ints(c.node, "pads", 4, pads);
    if (ceil_mode || draw(2)) set_int(c.node, "ceil_mode", ceil_mode);
    if (include_pad) set_int(c.node, "count_include_pad", 1);
    if (is_max && draw(3) == 0) set_int(c.node, "storage_order", 0);
    pt_output(c.m, "y");
    c.real_channels = ch;
    label_add(
        &c, " x (%lld,%lld,%lld,%lld) block %lld kernel %lldx%lld strides (%lld,%lld) dilations (%lld,%lld) ",
        (long long)n, (long long)ch, (long long)h, (long long)w, (long long)b, (long long)k[0],
        (long long)k[1], (long long)s[0], (long long)s[1], (long long)d[0], (long long)d[1]);
    if (ap)
        label_add(&c, "auto_pad %s", ap);
    else
        label_add(&c, "pads (%lld,%lld,%lld,%lld)", (long long)pads[0], (long long)pads[1],
                  (long long)pads[2], (long long)pads[3]);
    label_add(&c, "%s%s%s", ceil_mode ? " ceil_mode" : "", include_pad ? " count_include_pad" : "",
              specials ? " (NaN, inf, ties)" : "");
    run_case(&c);
}

/* A window of padding only (rows -2 and 1 of a one-row input): the reference refuses (its value is
 * undefined), so must the session. */
static void padding_only_case(int op)
{
    tcase c;
    case_begin(&c, op, 19);
    feed(&c, c.m, "x", blocked_random(1, 5, 1, 5, 4, FILL_PLAIN, false));
    c.node = pt_node(c.m, stats[op].op, PC_BLOCKED_DOMAIN, "x", "y", NULL);
    set_ints(c.node, "kernel_shape", 2, (int64_t[]){2, 1});
    set_ints(c.node, "dilations", 2, (int64_t[]){3, 1});
    set_ints(c.node, "pads", 4, (int64_t[]){2, 0, 1, 0});
    pt_output(c.m, "y");
    label_add(&c, " a window of padding only");
    int before = stats[op].refused;
    run_case(&c);
    CHECK_MSG(stats[op].refused == before + 1, "%s: a window of padding only was not refused by both",
              stats[op].op);
}

/* ---- GlobalMaxPool, GlobalAveragePool, LRN
 * ------------------------------------------------------------------- */

static void unary_case_dims(int op, int t, int64_t n, int64_t ch, int64_t h, int64_t w, int64_t b)
{
    bool specials = op != OP_LRN && t % 3 == 0;
    tcase c;
    case_begin(&c, op, 17);
    feed(&c, c.m, "x", blocked_random(n, ch, h, w, b, specials ? FILL_SPECIAL : FILL_PLAIN, false));
    c.node = pt_node(c.m, stats[op].op, PC_BLOCKED_DOMAIN, "x", "y", NULL);
    label_add(&c, " x (%lld,%lld,%lld,%lld) block %lld%s", (long long)n, (long long)ch, (long long)h,
              (long long)w, (long long)b, specials ? " (NaN, inf, ties)" : "");
    if (op == OP_LRN) {
        static const float betas[] = {0.75f, 0.5f, 1.0f, 0.3f};
        int64_t size = 1 + t % 5;
        set_int(c.node, "size", size);
        if (draw(2)) set_float(c.node, "alpha", uniform(1e-4, 0.5));
        if (draw(2)) set_float(c.node, "beta", betas[draw(4)]);
        if (draw(2)) set_float(c.node, "bias", uniform(0.5, 2.0));
        label_add(&c, " size %lld", (long long)size);
    }
    pt_output(c.m, "y");
    c.real_channels = op == OP_GAP && h * w == 0 ? 0 : ch; /* the average of no pixels is NaN in every lane */
    run_case(&c);
}

static void unary_case(int op, int t)
{
    int64_t b = blocks[t % 5], n = 1 + draw(2), ch = 1 + draw((uint32_t)(3 * b + 2));
    int64_t h = t % 4 == 0 ? 1 : 1 + draw(9), w = t % 4 == 0 ? 1 : 1 + draw(9);
    unary_case_dims(op, t, n, ch, h, w, b);
}

/* ---- size 0
 * -------------------------------------------------------------------------------------------------- */

/* Empty batches, planes and channel sets: the same answers as the reference (GlobalAveragePool of no pixels
 * is 0 / 0, GlobalMaxPool's is refused by both). */
static void empty_cases(void)
{
    to_blocked_case(0, 5, 3, 3, 4, FILL_PLAIN);
    to_blocked_case(2, 0, 3, 3, 4, FILL_PLAIN);
    to_blocked_case(1, 5, 0, 3, 4, FILL_PLAIN);
    from_blocked_case(0, 5, 3, 3, 4, false, FILL_PLAIN);
    from_blocked_case(1, 5, 3, 0, 4, false, FILL_PLAIN);
    conv_cfg g = cfg_of(4, 0, 5, 6, 4, 4, 3);
    pad_all(&g, 1);
    g.bias = g.bn = true;
    conv_case(&g);
    g.n = 2, g.c = 0; /* no input channel: the output is the bias, normalized */
    conv_case(&g);
    bn_case(0, 5, 3, 3, 4, true, false, 0.0f);
    bn_case(1, 5, 0, 3, 4, false, false, 0.0f);
    for (int op = OP_GMP; op <= OP_LRN; op++) {
        unary_case_dims(op, 1, 0, 5, 3, 3, 4);
        unary_case_dims(op, 1, 2, 5, 0, 3, 4);
    }
}

/* ---- a chain
 * ------------------------------------------------------------------------------------------------- */

/* x -> ToBlocked -> Conv (fused BN, relu) -> BatchNormalization (relu; its input dies there: in place) ->
 * MaxPool -> LRN -> AveragePool -> FromBlocked, against the reference within 1e-4 (the Conv's rounding,
 * carried through). */
static void chain_case(int64_t b, int64_t ch, int64_t m)
{
    pc_error err;
    pc_model *mdl = blocked_model(17);
    int64_t xd[4] = {2, ch, 12, 11}, mp = ceil_div(m, b) * b;
    pc_data *x = tensor(4, xd);
    for (uint64_t e = 0; e < x->n_elements; e++)
        fdata(x)[e] = uniform(-2.0, 2.0);
    pt_input(mdl, "x", PC_DTYPE_FLOAT, 4, xd);
    conv_cfg g = cfg_of(b, 2, ch, m, 12, 11, 3);
    float *wp = malloc((size_t)(m * ch * 9) * sizeof *wp);
    if (!wp) pt_die("malloc", NULL);
    for (int64_t i = 0; i < m * ch * 9; i++)
        wp[i] = uniform(-0.5, 0.5);
    pc_data *w = block_weight(wp, &g);
    float *v[4];
    for (int i = 0; i < 4; i++)
        v[i] = padded_vector(&g, m,
                             i == 0   ? 0.5
                             : i == 3 ? 0.1
                                      : -1.0,
                             i == 0   ? 1.5
                             : i == 3 ? 2.0
                                      : 1.0,
                             i == 3 ? 1.0f : 0.0f);
    pt_const_f(mdl, "w", 6, w->dims, fdata(w));
    static const char *const names[4] = {"scale", "shift", "mean", "var"};
    for (int i = 0; i < 4; i++)
        pt_const_f(mdl, names[i], 1, &mp, v[i]);
    pc_node *n = pt_node(mdl, "ToBlocked", PC_BLOCKED_DOMAIN, "x", "xb", NULL);
    set_int(n, "block", b);
    n = pt_node(mdl, "Conv", PC_BLOCKED_DOMAIN, "xb,w,,scale,shift,mean,var", "c", NULL);
    set_ints(n, "pads", 4, (int64_t[]){1, 1, 1, 1});
    set_int(n, "relu", 1);
    n = pt_node(mdl, "BatchNormalization", PC_BLOCKED_DOMAIN, "c,scale,shift,mean,var", "bn", NULL);
    set_int(n, "relu", 1);
    n = pt_node(mdl, "MaxPool", PC_BLOCKED_DOMAIN, "bn", "mp", NULL);
    set_ints(n, "kernel_shape", 2, (int64_t[]){3, 3});
    set_ints(n, "strides", 2, (int64_t[]){2, 2});
    set_ints(n, "pads", 4, (int64_t[]){1, 1, 1, 1});
    n = pt_node(mdl, "LRN", PC_BLOCKED_DOMAIN, "mp", "lrn", NULL);
    set_int(n, "size", 3);
    n = pt_node(mdl, "AveragePool", PC_BLOCKED_DOMAIN, "lrn", "ap", NULL);
    set_ints(n, "kernel_shape", 2, (int64_t[]){2, 2});
    n = pt_node(mdl, "FromBlocked", PC_BLOCKED_DOMAIN, "ap", "y", NULL);
    set_int(n, "channels", m);
    pt_output(mdl, "y");
    pc_data **want = NULL;
    pc_status st1, st2;
    char msg[1100];
    pc_status rs = pc_ref_run(mdl, 1, &x, &want, &err);
    CHECK_MSG(rs == PC_OK, "chain block %lld: reference: %s", (long long)b, err.message);
    pc_data *y1 = session_output(mdl, 1, &x, 1, &st1, msg, sizeof msg);
    CHECK_MSG(st1 == PC_OK, "chain block %lld: session: %s", (long long)b, msg);
    pc_data *y2 = session_output(mdl, 1, &x, 2, &st2, msg, sizeof msg);
    CHECK_MSG(st2 == PC_OK, "chain block %lld: session at 2 threads: %s", (long long)b, msg);
    if (rs == PC_OK && st1 == PC_OK && st2 == PC_OK) {
        pc_compare_result cr;
        CHECK_MSG(pc_data_compare(want[0], y1, 1e-4, 1e-4, &cr) == PC_COMPARE_EQUAL,
                  "chain block %lld: %s (element %llu: %g, want %g)", (long long)b, cr.detail,
                  (unsigned long long)cr.worst_index, cr.worst_actual, cr.worst_expected);
        CHECK_MSG(memcmp(y1->data, y2->data, y1->n_bytes) == 0, "chain block %lld: 2 threads differ",
                  (long long)b);
    }
    if (rs == PC_OK) pc_ref_free_outputs(mdl, want);
    pc_data_unref(y1);
    pc_data_unref(y2);
    pc_data_unref(x);
    pc_data_unref(w);
    free(wp);
    for (int i = 0; i < 4; i++)
        free(v[i]);
    pc_model_free(mdl);
}

/* ---- refusals
 * ------------------------------------------------------------------------------------------------ */

enum { R_MAX_IN = 8 };

typedef struct refusal {
    pc_model *m;
    pc_node *node;
    uint32_t n_in, n_out;
    pc_rt_tensor tin[R_MAX_IN], tout[2];
    const pc_rt_tensor *in[R_MAX_IN];
    pc_rt_tensor *out[2];
} refusal;

static pc_rt_tensor view(pc_dtype t, int32_t rank, const int64_t *dims)
{
    pc_rt_tensor v = {.dtype = t, .rank = rank, .n = 1};
    for (int32_t i = 0; i < rank; i++) {
        v.dims[i] = dims[i];
        v.n *= (uint64_t)dims[i];
    }
    return v;
}

/* A node `op` with n_in inputs and n_out outputs at ai.onnx `opset`; the views are set by the caller. */
static void refusal_begin(refusal *r, const char *op, int64_t opset, uint32_t n_in, uint32_t n_out)
{
    memset(r, 0, sizeof *r);
    r->m = blocked_model(opset);
    char ins[128] = "", name[8];
    for (uint32_t i = 0; i < n_in; i++) {
        snprintf(name, sizeof name, "i%u", i);
        pt_input(r->m, name, PC_DTYPE_FLOAT, 1, (int64_t[]){1});
        size_t len = strlen(ins);
        snprintf(ins + len, sizeof ins - len, "%s%s", i ? "," : "", name);
    }
    r->node = pt_node(r->m, op, PC_BLOCKED_DOMAIN, ins, n_out > 1 ? "y,y2" : "y", NULL);
    r->n_in = n_in;
    r->n_out = n_out;
    for (uint32_t i = 0; i < n_in && i < R_MAX_IN; i++)
        r->in[i] = &r->tin[i];
    for (uint32_t i = 0; i < n_out && i < 2; i++)
        r->out[i] = &r->tout[i];
}

/* prepare's status on the views; the message must contain `needle` */
static void refusal_expect(refusal *r, pc_status want, const char *needle, const char *what)
{
    pc_error err;
    pc_error_clear(&err);
    pc_dtype t0 = r->in[0] ? r->in[0]->dtype : PC_DTYPE_FLOAT;
    const pc_rt_kernel *row = pc_rt_kernel_find(r->node, 1, t0);
    CHECK_MSG(row != NULL, "%s: no kernel row", what);
    if (row) {
        pc_rt_kernel_ctx k = {.node = r->node,
                              .opset = 1,
                              .n_in = r->n_in,
                              .n_out = r->n_out,
                              .in = r->in,
                              .out = r->out,
                              .threads = 2,
                              .err = &err};
        size_t bytes = 0;
        pc_status st = row->prepare(&k, &bytes);
        CHECK_MSG(st == want && (!needle || strstr(err.message, needle)),
                  "%s: prepare gave %s (%s), expected %s with '%s'", what, pc_status_name(st), err.message,
                  pc_status_name(want), needle ? needle : "");
    }
    pc_model_free(r->m);
}

static const int64_t x5[5] = {1, 2, 5, 5, 4}; /* 8 padded channels in blocks of 4 */

/* a Conv with X x5, W (3, 2, 3, 3, 4, 4), B (12), the given inputs, output (1, 3, 3, 3, 4) */
static void conv_refusal_begin(refusal *r, int64_t opset, uint32_t n_in)
{
    refusal_begin(r, "Conv", opset, n_in, 1);
    r->tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r->tin[1] = view(PC_DTYPE_FLOAT, 6, (int64_t[]){3, 2, 3, 3, 4, 4});
    for (uint32_t i = 2; i < n_in; i++)
        r->tin[i] = view(PC_DTYPE_FLOAT, 1, (int64_t[]){12});
    r->tout[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 3, 3, 3, 4});
}

static void refusal_cases(void)
{
    refusal r;
    pc_error err;
    /* Conv: a valid node first (the refusals below each change one thing) */
    conv_refusal_begin(&r, 17, 7);
    refusal_expect(&r, PC_OK, NULL, "Conv, valid");
    conv_refusal_begin(&r, 17, 3);
    r.tin[0] = view(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 8, 5, 5});
    refusal_expect(&r, PC_ERR_SHAPE, "rank 4", "Conv, X of rank 4");
    conv_refusal_begin(&r, 17, 3);
    r.tin[1] = view(PC_DTYPE_FLOAT, 4, (int64_t[]){12, 8, 3, 3});
    refusal_expect(&r, PC_ERR_SHAPE, "rank 4", "Conv, W of rank 4");
    conv_refusal_begin(&r, 17, 3);
    r.tin[1].dtype = PC_DTYPE_DOUBLE;
    refusal_expect(&r, PC_ERR_UNSUPPORTED, "double", "Conv, W double");
    conv_refusal_begin(&r, 17, 3);
    set_int(r.node, "group", 2);
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "group", "Conv, group 2");
    conv_refusal_begin(&r, 17, 3);
    set_int(r.node, "relu", 2);
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "relu", "Conv, relu 2");
    conv_refusal_begin(&r, 17, 3);
    r.tin[1] = view(PC_DTYPE_FLOAT, 6, (int64_t[]){3, 2, 3, 3, 8, 8});
    refusal_expect(&r, PC_ERR_SHAPE, "block", "Conv, W's block 8 against X's 4");
    conv_refusal_begin(&r, 17, 3);
    r.tin[1] = view(PC_DTYPE_FLOAT, 6, (int64_t[]){3, 1, 3, 3, 4, 4});
    refusal_expect(&r, PC_ERR_SHAPE, "input blocks", "Conv, W's input blocks");
    conv_refusal_begin(&r, 17, 3);
    r.tin[2] = view(PC_DTYPE_FLOAT, 1, (int64_t[]){10});
    refusal_expect(&r, PC_ERR_SHAPE, "input 2", "Conv, B of 10");
    conv_refusal_begin(&r, 17, 7);
    r.tin[5] = view(PC_DTYPE_FLOAT, 1, (int64_t[]){11});
    refusal_expect(&r, PC_ERR_SHAPE, "input 5", "Conv, mean of 11");
    conv_refusal_begin(&r, 17, 5);
    refusal_expect(&r, PC_ERR_ARITY, "3..6", "Conv, 5 inputs");
    conv_refusal_begin(&r, 17, 7);
    r.in[4] = NULL;
    refusal_expect(&r, PC_ERR_ARITY, "3..6", "Conv, input 4 omitted");
    conv_refusal_begin(&r, 17, 3);
    set_ints(r.node, "kernel_shape", 2, (int64_t[]){3, 2});
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "kernel_shape", "Conv, kernel_shape against W");
    conv_refusal_begin(&r, 17, 3);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 3, 5, 5, 4});
    refusal_expect(&r, PC_ERR_SHAPE, "output 0", "Conv, wrong output dims");
    conv_refusal_begin(&r, 17, 7);
    set_int(r.node, "training_mode", 1);
    refusal_expect(&r, PC_ERR_UNSUPPORTED, "training_mode", "Conv, fused BN in training mode");
    conv_refusal_begin(&r, 17, 3);
    set_string(r.node, "auto_pad", "SAME");
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "auto_pad", "Conv, auto_pad SAME");

    /* BatchNormalization */
    refusal_begin(&r, "BatchNormalization", 15, 5, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    for (int i = 1; i < 5; i++)
        r.tin[i] = view(PC_DTYPE_FLOAT, 1, (int64_t[]){8});
    r.tout[0] = r.tin[0];
    set_int(r.node, "relu", 2);
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "relu", "BatchNormalization, relu 2");
    refusal_begin(&r, "BatchNormalization", 15, 5, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    for (int i = 1; i < 5; i++)
        r.tin[i] = view(PC_DTYPE_FLOAT, 1, (int64_t[]){i == 3 ? 5 : 8});
    r.tout[0] = r.tin[0];
    refusal_expect(&r, PC_ERR_SHAPE, "input 3", "BatchNormalization, mean of 5");
    refusal_begin(&r, "BatchNormalization", 15, 4, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    for (int i = 1; i < 4; i++)
        r.tin[i] = view(PC_DTYPE_FLOAT, 1, (int64_t[]){8});
    r.tout[0] = r.tin[0];
    refusal_expect(&r, PC_ERR_ARITY, "input 4", "BatchNormalization, var missing");
    refusal_begin(&r, "BatchNormalization", 15, 5, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 3, (int64_t[]){1, 8, 25});
    for (int i = 1; i < 5; i++)
        r.tin[i] = view(PC_DTYPE_FLOAT, 1, (int64_t[]){8});
    r.tout[0] = r.tin[0];
    refusal_expect(&r, PC_ERR_SHAPE, "rank 3", "BatchNormalization, X of rank 3");

    /* the reorders */
    static const int64_t p4[4] = {1, 6, 5, 5};
    for (int v = 0; v < 3; v++) {
        refusal_begin(&r, "ToBlocked", 17, 1, 1);
        r.tin[0] = view(PC_DTYPE_FLOAT, 4, p4);
        r.tout[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 6, 5, 5, 1});
        if (v < 2) set_int(r.node, "block", v == 0 ? 0 : 1025);
        refusal_expect(&r, PC_ERR_ATTRIBUTE, "block",
                       v == 0   ? "ToBlocked, block 0"
                       : v == 1 ? "ToBlocked, block 1025"
                                : "ToBlocked, no block");
    }
    refusal_begin(&r, "ToBlocked", 17, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, x5);
    set_int(r.node, "block", 4);
    refusal_expect(&r, PC_ERR_SHAPE, "rank 5", "ToBlocked, input of rank 5");
    refusal_begin(&r, "ToBlocked", 17, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 4, p4);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 1, 5, 5, 4});
    set_int(r.node, "block", 4);
    refusal_expect(&r, PC_ERR_SHAPE, "output 0", "ToBlocked, output with one block for 6 channels");
    static const int64_t bad_channels[] = {0, 4, 9, -1};
    for (int v = 0; v < 4; v++) {
        refusal_begin(&r, "FromBlocked", 17, 1, 1);
        r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
        r.tout[0] = view(PC_DTYPE_FLOAT, 4, (int64_t[]){1, 6, 5, 5});
        if (bad_channels[v] >= 0) set_int(r.node, "channels", bad_channels[v]);
        char what[64];
        snprintf(what, sizeof what, "FromBlocked, channels %lld of blocks 2 x 4", (long long)bad_channels[v]);
        refusal_expect(&r, PC_ERR_ATTRIBUTE, "channels", what);
    }
    refusal_begin(&r, "FromBlocked", 17, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 4, p4);
    r.tout[0] = view(PC_DTYPE_FLOAT, 4, p4);
    set_int(r.node, "channels", 6);
    refusal_expect(&r, PC_ERR_SHAPE, "rank 4", "FromBlocked, input of rank 4");

    /* pools */
    refusal_begin(&r, "MaxPool", 12, 1, 2);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = r.tout[1] = view(PC_DTYPE_FLOAT, 5, x5);
    set_ints(r.node, "kernel_shape", 2, (int64_t[]){1, 1});
    refusal_expect(&r, PC_ERR_ARITY, "output 1", "MaxPool, Indices asked for");
    refusal_begin(&r, "MaxPool", 9, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 3, 3, 4});
    set_ints(r.node, "kernel_shape", 2, (int64_t[]){2, 2});
    set_ints(r.node, "dilations", 2, (int64_t[]){2, 2});
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "dilations", "MaxPool, dilations at opset 9");
    refusal_begin(&r, "AveragePool", 18, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 3, 3, 4});
    set_ints(r.node, "kernel_shape", 2, (int64_t[]){2, 2});
    set_ints(r.node, "dilations", 2, (int64_t[]){2, 2});
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "dilations", "AveragePool, dilations at opset 18");
    refusal_begin(&r, "MaxPool", 12, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, x5);
    set_ints(r.node, "kernel_shape", 2, (int64_t[]){3, 3});
    set_ints(r.node, "pads", 4, (int64_t[]){1, 1, 1, 1});
    set_string(r.node, "auto_pad", "SAME_UPPER");
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "pads", "MaxPool, pads with SAME_UPPER");
    refusal_begin(&r, "MaxPool", 12, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 1, 5, 4});
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 1, 5, 4});
    set_ints(r.node, "kernel_shape", 2, (int64_t[]){2, 1});
    set_ints(r.node, "dilations", 2, (int64_t[]){3, 1});
    set_ints(r.node, "pads", 4, (int64_t[]){2, 0, 1, 0}); /* taps at rows -2 and 1 of one row */
    refusal_expect(&r, PC_ERR_UNSUPPORTED, "only padding", "MaxPool, a window of padding only");
    refusal_begin(&r, "MaxPool", 12, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, x5);
    set_ints(r.node, "kernel_shape", 2, (int64_t[]){1, 1});
    set_int(r.node, "storage_order", 2);
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "storage_order", "MaxPool, storage_order 2");
    refusal_begin(&r, "AveragePool", 17, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, x5);
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "kernel_shape", "AveragePool, no kernel_shape");
    refusal_begin(&r, "GlobalMaxPool", 17, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 0, 5, 4});
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, (int64_t[]){1, 2, 1, 1, 4});
    refusal_expect(&r, PC_ERR_SHAPE, "empty", "GlobalMaxPool, no pixels");
    refusal_begin(&r, "GlobalAveragePool", 17, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, x5);
    refusal_expect(&r, PC_ERR_SHAPE, "output 0", "GlobalAveragePool, output not 1x1");
    refusal_begin(&r, "LRN", 17, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, x5);
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "size", "LRN, no size");
    refusal_begin(&r, "LRN", 17, 1, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, x5);
    set_int(r.node, "size", 0);
    refusal_expect(&r, PC_ERR_ATTRIBUTE, "size", "LRN, size 0");
    refusal_begin(&r, "LRN", 17, 2, 1);
    r.tin[0] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tin[1] = view(PC_DTYPE_FLOAT, 5, x5);
    r.tout[0] = view(PC_DTYPE_FLOAT, 5, x5);
    set_int(r.node, "size", 3);
    refusal_expect(&r, PC_ERR_ARITY, "at most 1", "LRN, two inputs");

    /* through a session: refused at creation, the message naming the node */
    pc_model *m = blocked_model(17);
    pt_input(m, "x", PC_DTYPE_FLOAT, 5, x5);
    float wv[3 * 2 * 9 * 16] = {0};
    pt_const_f(m, "w", 6, (int64_t[]){3, 2, 3, 3, 4, 4}, wv);
    pc_node *n = pt_node(m, "Conv", PC_BLOCKED_DOMAIN, "x,w", "conv_out", NULL);
    set_int(n, "relu", 2);
    pt_output(m, "conv_out");
    pc_session_options so;
    pc_session_options_default(&so);
    so.optimize = false;
    pc_session *s = NULL;
    pc_status st = pc_session_create(m, &so, &s, &err);
    CHECK_MSG(st == PC_ERR_ATTRIBUTE && strstr(err.message, "conv_out") && strstr(err.message, "relu"),
              "session with relu = 2: %s (%s)", pc_status_name(st), st == PC_OK ? "" : err.message);
    pc_session_free(s);
    pc_model_free(m);
}

int main(void)
{
    reorder_cases();
    conv_cases();
    bn_cases();
    for (int t = 0; t < 200; t++) {
        pool_case(OP_MAXPOOL, t);
        pool_case(OP_AVGPOOL, t);
    }
    padding_only_case(OP_MAXPOOL);
    padding_only_case(OP_AVGPOOL);
    for (int t = 0; t < 60; t++) {
        unary_case(OP_GMP, t);
        unary_case(OP_GAP, t);
        unary_case(OP_LRN, t);
    }
    empty_cases();
    chain_case(16, 20, 24);
    chain_case(4, 6, 7);
    chain_case(1, 3, 2);
    refusal_cases();
    for (int i = 0; i < OP_COUNT; i++) {
        const op_stats *s = &stats[i];
        printf("blocked %-18s %3d cases compared (%s), %7llu elements, %d refused by both, %d planted errors "
               "seen\n",
               s->op, s->compared, s->exact ? "bit-exact" : "sum-of-|products| tolerance",
               (unsigned long long)s->elements, s->refused, s->planted);
        CHECK_MSG(s->compared >= 20 && s->planted >= 1, "%s: too few cases compared (%d)", s->op,
                  s->compared);
    }
    return pc_test_finish("test_runtime_blocked");
}
