/* Reference ops: recurrent layers RNN, GRU and LSTM. One driver runs all three: per direction, per batch
 * entry, per time step, the gate pre-activations are plain dot products accumulated in double, and the
 * hidden/cell state stays in double between steps (rounded to the element type only when stored in an
 * output). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

typedef enum rnn_kind { RNN_SIMPLE, RNN_GRU, RNN_LSTM } rnn_kind;

/* ---- activations
 * --------------------------------------------------------------------------------------------- */

typedef enum act_kind {
    ACT_RELU,
    ACT_TANH,
    ACT_SIGMOID,
    ACT_AFFINE,
    ACT_LEAKYRELU,
    ACT_THRESHOLDEDRELU,
    ACT_SCALEDTANH,
    ACT_HARDSIGMOID,
    ACT_ELU,
    ACT_SOFTSIGN,
    ACT_SOFTPLUS,
} act_kind;

typedef struct act_fn {
    act_kind kind;
    double alpha, beta;
} act_fn;

/* The activation names the spec lists, how many of (alpha, beta) each takes, and their defaults (NAN: the
 * spec gives none, so the value must come from activation_alpha/activation_beta). */
static const struct {
    const char *name;
    act_kind kind;
    int n_params;
    double alpha, beta;
} act_table[] = {
    {"Relu", ACT_RELU, 0, 0, 0},
    {"Tanh", ACT_TANH, 0, 0, 0},
    {"Sigmoid", ACT_SIGMOID, 0, 0, 0},
    {"Affine", ACT_AFFINE, 2, NAN, NAN},
    {"LeakyRelu", ACT_LEAKYRELU, 1, 0.01, 0},
    {"ThresholdedRelu", ACT_THRESHOLDEDRELU, 1, 1.0, 0},
    {"ScaledTanh", ACT_SCALEDTANH, 2, NAN, NAN},
    {"HardSigmoid", ACT_HARDSIGMOID, 2, 0.2, 0.5},
    {"Elu", ACT_ELU, 1, 1.0, 0},
    {"Softsign", ACT_SOFTSIGN, 0, 0, 0},
    {"Softplus", ACT_SOFTPLUS, 0, 0, 0},
};

/* ASCII case-insensitive match of a counted name (onnxruntime accepts any case). */
static bool name_is(const char *want, const char *name, size_t len)
{
    if (strlen(want) != len) return false;
    for (size_t i = 0; i < len; i++) {
        char a = want[i], b = name[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
        if (a != b) return false;
    }
    return true;
}

static double act_apply(const act_fn *a, double x)
{
    switch (a->kind) {
    case ACT_RELU:
        return x > 0 ? x : 0.0;
    case ACT_TANH:
        return tanh(x);
    case ACT_SIGMOID:
        return 1.0 / (1.0 + exp(-x));
    case ACT_AFFINE:
        return a->alpha * x + a->beta;
    case ACT_LEAKYRELU:
        return x < 0 ? a->alpha * x : x;
    case ACT_THRESHOLDEDRELU:
        return x > a->alpha ? x : 0.0;
    case ACT_SCALEDTANH:
        return a->alpha * tanh(a->beta * x);
    case ACT_HARDSIGMOID:
        return fmax(0.0, fmin(1.0, a->alpha * x + a->beta));
    case ACT_ELU:
        return x < 0 ? a->alpha * (exp(x) - 1.0) : x;
    case ACT_SOFTSIGN:
        return x / (1.0 + fabs(x));
    case ACT_SOFTPLUS:
        return log1p(exp(-fabs(x))) + (x > 0 ? x : 0);
    }
    return x;
}

/* Reads the `activations` list (defaults per op when absent) into acts[0..n_dirs*per_dir). activation_alpha
 * and activation_beta are consumed in order by the activations that take a parameter (as onnxruntime does;
 * the spec says "consumed in the order of activation functions"); an activation without a value takes its
 * default. */
static pc_status parse_activations(ref_ctx *ctx, rnn_kind kind, int n_dirs, act_fn *acts)
{
    static const char *const defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    int per_dir = kind == RNN_SIMPLE ? 1 : kind == RNN_GRU ? 2 : 3;
    int n = per_dir * n_dirs;
    const pc_attr *a = pc_node_attr(ctx->node, "activations");
    if (a && a->type != PC_ATTR_STRINGS)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'activations' must be a list of strings");
    /* a list of per_dir names for a bidirectional layer applies to both directions (onnxruntime accepts it)
     */
    if (a && a->n != (size_t)n && a->n != (size_t)per_dir)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'activations' has %zu names, expected %d", a->n, n);
    size_t n_alpha, n_beta, next_alpha = 0, next_beta = 0;
    const float *alphas = ref_attr_floats(ctx, "activation_alpha", &n_alpha);
    const float *betas = ref_attr_floats(ctx, "activation_beta", &n_beta);
    for (int i = 0; i < n; i++) {
        const char *name = defaults[kind][i % per_dir];
        size_t len = strlen(name);
        if (a) {
            const pc_bytes *s = &a->strings[a->n == (size_t)n ? i : i % per_dir];
            name = (const char *)s->data;
            len = s->len;
        }
        size_t k = 0, n_table = sizeof act_table / sizeof act_table[0];
        while (k < n_table && !name_is(act_table[k].name, name, len))
            k++;
        if (k == n_table)
            return ref_unsupported(ctx, "activation '%.*s' (attribute 'activations')",
                                   (int)(len > 64 ? 64 : len), name ? name : "");
        acts[i].kind = act_table[k].kind;
        acts[i].alpha = act_table[k].alpha;
        acts[i].beta = act_table[k].beta;
        if (act_table[k].n_params >= 1 && next_alpha < n_alpha) acts[i].alpha = alphas[next_alpha++];
        if (act_table[k].n_params >= 2 && next_beta < n_beta) acts[i].beta = betas[next_beta++];
        if (isnan(acts[i].alpha) || isnan(acts[i].beta))
            return ref_unsupported(
                ctx,
                "activation '%s' without activation_alpha/activation_beta values (the spec "
                "gives no defaults)",
                act_table[k].name);
    }
    return PC_OK;
}

/* ---- shapes
 * -------------------------------------------------------------------------------------------------- */

/* Checked product of n sizes; false when it overflows int64 or exceeds the output budget. */
static bool checked_count(const int64_t *v, int n, int64_t *out)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0) return false;
        if (v[i] && p > ((int64_t)1 << 31) / v[i]) return false;
        p *= v[i];
    }
    *out = p;
    return true;
}

static pc_status require_dims(ref_ctx *ctx, const pc_data *t, const char *what, int rank, const int64_t *want)
{
    bool ok = t->rank == rank;
    for (int i = 0; ok && i < rank; i++)
        ok = t->dims[i] == want[i];
    if (ok) return PC_OK;
    char have[128], expected[128];
    size_t u = 0;
    expected[0] = 0;
    for (int i = 0; i < rank && u < sizeof expected; i++)
        u += (size_t)snprintf(expected + u, sizeof expected - u, "%s%lld", i ? "," : "", (long long)want[i]);
    return ref_fail(ctx, PC_ERR_SHAPE, "input %s is %s, expected shape [%s]", what,
                    pc_data_describe(t, have, sizeof have), expected);
}

/* ---- the driver
 * ---------------------------------------------------------------------------------------------- */

typedef struct rnn_dims {
    int64_t seq, batch, input, hidden;
    int n_dirs, gates;
    int layout;
} rnn_dims;

/* Flat offsets by layout: X and Y are time-major in layout 0 and batch-major in layout 1; the states
 * (initial_h/c, Y_h/c) are [dirs, batch, hidden] or [batch, dirs, hidden]. */
static uint64_t x_off(const rnn_dims *d, int64_t t, int64_t b)
{
    return (uint64_t)((d->layout ? b * d->seq + t : t * d->batch + b) * d->input);
}
static uint64_t y_off(const rnn_dims *d, int64_t t, int dir, int64_t b)
{
    return (
        uint64_t)((d->layout ? (b * d->seq + t) * d->n_dirs + dir : (t * d->n_dirs + dir) * d->batch + b) *
                  d->hidden);
}
static uint64_t state_off(const rnn_dims *d, int dir, int64_t b)
{
    return (uint64_t)((d->layout ? b * d->n_dirs + dir : dir * d->batch + b) * d->hidden);
}

static double clipped(double x, double clip)
{
    return clip > 0 ? fmax(-clip, fmin(clip, x)) : x;
}

static pc_status run_rnn(ref_ctx *ctx, rnn_kind kind, pc_data *const *in, uint32_t n_in, pc_data **out,
                         uint32_t n_out)
{
    static const char *const in_names[] = {"X",         "W",         "R", "B", "sequence_lens",
                                           "initial_h", "initial_c", "P"};
    uint32_t max_in = kind == RNN_LSTM ? 8 : 6;
    if (n_in > max_in)
        return ref_fail(ctx, PC_ERR_ARITY, "%u inputs given, at most %u allowed", n_in, max_in);
    if (n_out > (kind == RNN_LSTM ? 3u : 2u))
        return ref_fail(ctx, PC_ERR_ARITY, "%u outputs requested", n_out);
    pc_status st;
    for (uint32_t i = 0; i < 3; i++)
        if ((st = ref_require_tensor(ctx, in, n_in, i)) != PC_OK) return st;
    const pc_data *X = in[0], *W = in[1], *R = in[2];
    const pc_data *B = n_in > 3 ? in[3] : NULL, *SL = n_in > 4 ? in[4] : NULL, *H0 = n_in > 5 ? in[5] : NULL;
    const pc_data *C0 = n_in > 6 ? in[6] : NULL, *P = n_in > 7 ? in[7] : NULL;
    for (uint32_t i = 0; i < n_in; i++) {
        if (!in[i]) continue;
        if (in[i]->kind != PC_TYPE_TENSOR)
            return ref_fail(ctx, PC_ERR_TYPE, "input %s must be a tensor", in_names[i]);
        if (i == 4) {
            if (!ref_is_int(in[i]->dtype))
                return ref_fail(ctx, PC_ERR_TYPE, "input sequence_lens must be int32, got %s",
                                pc_dtype_name(in[i]->dtype));
        } else if (!ref_is_float(in[i]->dtype) || in[i]->dtype != X->dtype) {
            return ref_fail(ctx, PC_ERR_TYPE,
                            "input %s must be a floating-point tensor of X's type %s, got %s", in_names[i],
                            pc_dtype_name(X->dtype), pc_dtype_name(in[i]->dtype));
        }
    }

    rnn_dims d;
    d.gates = kind == RNN_SIMPLE ? 1 : kind == RNN_GRU ? 3 : 4;
    d.layout = ctx->opset >= 14 ? (int)ref_attr_int(ctx, "layout", 0) : 0;
    if (d.layout != 0 && d.layout != 1)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'layout' must be 0 or 1, got %d", d.layout);
    const char *direction = ref_attr_string(ctx, "direction", "forward");
    bool bidi = strcmp(direction, "bidirectional") == 0, reverse = strcmp(direction, "reverse") == 0;
    if (!bidi && !reverse && strcmp(direction, "forward") != 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute 'direction' must be forward, reverse or bidirectional, got "
                        "'%s'",
                        direction);
    d.n_dirs = bidi ? 2 : 1;
    if (X->rank != 3)
        return ref_fail(ctx, PC_ERR_SHAPE, "input X must have rank 3, got rank %d", (int)X->rank);
    d.seq = X->dims[d.layout ? 1 : 0];
    d.batch = X->dims[d.layout ? 0 : 1];
    d.input = X->dims[2];
    if (R->rank != 3)
        return ref_fail(ctx, PC_ERR_SHAPE, "input R must have rank 3, got rank %d", (int)R->rank);
    d.hidden = R->dims[2];
    if (d.hidden > INT32_MAX) /* keeps gates * hidden below overflow; R's own size bounds it further */
        return ref_fail(ctx, PC_ERR_SHAPE, "input R has hidden size %lld", (long long)d.hidden);
    if (ref_has_attr(ctx, "hidden_size") && ref_attr_int(ctx, "hidden_size", -1) != d.hidden)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute hidden_size = %lld but R has hidden size %lld",
                        (long long)ref_attr_int(ctx, "hidden_size", -1), (long long)d.hidden);
    int64_t gh = d.gates * d.hidden;
    int64_t want[3];
    want[0] = d.n_dirs, want[1] = gh, want[2] = d.input;
    if ((st = require_dims(ctx, W, "W", 3, want)) != PC_OK) return st;
    want[2] = d.hidden;
    if ((st = require_dims(ctx, R, "R", 3, want)) != PC_OK) return st;
    want[1] = 2 * gh;
    if (B && (st = require_dims(ctx, B, "B", 2, want)) != PC_OK) return st;
    want[0] = d.batch;
    if (SL && (st = require_dims(ctx, SL, "sequence_lens", 1, want)) != PC_OK) return st;
    int64_t sdims[3] = {d.n_dirs, d.batch, d.hidden};
    if (d.layout) sdims[0] = d.batch, sdims[1] = d.n_dirs;
    if (H0 && (st = require_dims(ctx, H0, "initial_h", 3, sdims)) != PC_OK) return st;
    if (C0 && (st = require_dims(ctx, C0, "initial_c", 3, sdims)) != PC_OK) return st;
    want[0] = d.n_dirs, want[1] = 3 * d.hidden;
    if (P && (st = require_dims(ctx, P, "P", 2, want)) != PC_OK) return st;

    int64_t ydims[4] = {d.seq, d.n_dirs, d.batch, d.hidden}, n_y;
    if (d.layout) ydims[0] = d.batch, ydims[1] = d.seq, ydims[2] = d.n_dirs;
    if (!checked_count(ydims, 4, &n_y))
        return ref_fail(ctx, PC_ERR_BUDGET, "output Y of %lld x %lld x %lld x %lld elements is too large",
                        (long long)ydims[0], (long long)ydims[1], (long long)ydims[2], (long long)ydims[3]);
    /* nothing runs for an entry of length 0: onnxruntime zeroes Y_h/Y_c, the spec says nothing, so refuse */
    if (!SL && d.seq == 0 && d.batch > 0)
        return ref_unsupported(ctx, "a sequence length of 0 (Y_h/Y_c are not defined)");
    for (int64_t b = 0; SL && b < d.batch; b++) {
        int64_t len = ref_get_i64(SL, (uint64_t)b);
        if (len < 0 || len > d.seq)
            return ref_fail(ctx, PC_ERR_VALUE, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                            (long long)b, (long long)len, (long long)d.seq);
        if (len == 0)
            return ref_unsupported(ctx, "sequence_lens[%lld] = 0 (Y_h/Y_c are not defined)", (long long)b);
    }

    act_fn acts[6];
    if ((st = parse_activations(ctx, kind, d.n_dirs, acts)) != PC_OK) return st;
    double clip = ref_attr_float(ctx, "clip", 0.0);
    if (ref_has_attr(ctx, "clip") && !(clip > 0))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'clip' must be positive, got %g", clip);
    bool input_forget = kind == RNN_LSTM && ref_attr_int(ctx, "input_forget", 0) != 0;
    bool lbr = kind == RNN_GRU && ctx->opset >= 3 && ref_attr_int(ctx, "linear_before_reset", 0) != 0;

    /* only the outputs the node asks for are made (all three are optional) */
    pc_data *Y = NULL, *Yh = NULL, *Yc = NULL;
    const pc_node *n = ctx->node;
    if (n_out > 0 && n->outputs[0] && !(Y = ref_new_tensor(ctx, X->dtype, 4, ydims))) return ctx->err->status;
    if (n_out > 1 && n->outputs[1] && !(Yh = ref_new_tensor(ctx, X->dtype, 3, sdims))) goto fail;
    if (n_out > 2 && n->outputs[2] && !(Yc = ref_new_tensor(ctx, X->dtype, 3, sdims))) goto fail;

    /* scratch: pre-activations for all gates, the running state h and c, and a copy of the previous h */
    double *gate = malloc((size_t)(gh + 3 * d.hidden + 1) * sizeof *gate);
    if (!gate) {
        ref_fail(ctx, PC_ERR_NOMEM, "out of memory for the recurrent state");
        goto fail;
    }
    double *h = gate + gh, *c = h + d.hidden, *hprev = c + d.hidden;
    const int64_t H = d.hidden;
    for (int dir = 0; dir < d.n_dirs; dir++) {
        bool backward = reverse || dir == 1;
        const act_fn *f = &acts[dir * (kind == RNN_SIMPLE ? 1 : kind == RNN_GRU ? 2 : 3)];
        uint64_t w0 = (uint64_t)(dir * gh * d.input), r0 = (uint64_t)(dir * gh * H);
        uint64_t wb0 = (uint64_t)(dir * 2 * gh), rb0 = wb0 + (uint64_t)gh, p0 = (uint64_t)(dir * 3 * H);
        for (int64_t b = 0; b < d.batch; b++) {
            int64_t len = SL ? ref_get_i64(SL, (uint64_t)b) : d.seq;
            uint64_t s0 = state_off(&d, dir, b);
            for (int64_t j = 0; j < H; j++) {
                h[j] = H0 ? ref_get_f64(H0, s0 + (uint64_t)j) : 0.0;
                c[j] = C0 ? ref_get_f64(C0, s0 + (uint64_t)j) : 0.0;
            }
            for (int64_t step = 0; step < len; step++) {
                int64_t t = backward ? len - 1 - step : step;
                uint64_t xo = x_off(&d, t, b);
                memcpy(hprev, h, (size_t)H * sizeof *h);
                /* gate pre-activations: X_t W^T + Wb, plus H_{t-1} R^T + Rb except where GRU's reset gate
                 * enters (the h gate's recurrent part is handled below) */
                for (int64_t g = 0; g < gh; g++) {
                    double acc = 0.0;
                    for (int64_t i = 0; i < d.input; i++)
                        acc += ref_get_f64(X, xo + (uint64_t)i) *
                               ref_get_f64(W, w0 + (uint64_t)(g * d.input + i));
                    if (B) acc += ref_get_f64(B, wb0 + (uint64_t)g);
                    if (kind != RNN_GRU || g < 2 * H) {
                        for (int64_t m = 0; m < H; m++)
                            acc += hprev[m] * ref_get_f64(R, r0 + (uint64_t)(g * H + m));
                        if (B) acc += ref_get_f64(B, rb0 + (uint64_t)g);
                    }
                    gate[g] = acc;
                }
                if (kind == RNN_SIMPLE) {
                    for (int64_t j = 0; j < H; j++)
                        h[j] = act_apply(&f[0], clipped(gate[j], clip));
                } else if (kind == RNN_GRU) {
                    /* gates z, r, h; z and r into gate[0..2H) after activation */
                    for (int64_t j = 0; j < 2 * H; j++)
                        gate[j] = act_apply(&f[0], clipped(gate[j], clip));
                    for (int64_t j = 0; j < H; j++) {
                        const double z = gate[j], r = gate[H + j];
                        uint64_t row = r0 + (uint64_t)((2 * H + j) * H);
                        double rec = 0.0;
                        if (lbr) {
                            for (int64_t m = 0; m < H; m++)
                                rec += hprev[m] * ref_get_f64(R, row + (uint64_t)m);
                            if (B) rec += ref_get_f64(B, rb0 + (uint64_t)(2 * H + j));
                            rec *= r;
                        } else {
                            /* (r (.) H_{t-1}) Rh^T: the reset gate scales H_{t-1} elementwise, before the
                             * product */
                            for (int64_t m = 0; m < H; m++)
                                rec += gate[H + m] * hprev[m] * ref_get_f64(R, row + (uint64_t)m);
                            if (B) rec += ref_get_f64(B, rb0 + (uint64_t)(2 * H + j));
                        }
                        double hh = act_apply(&f[1], clipped(gate[2 * H + j] + rec, clip));
                        h[j] = (1.0 - z) * hh + z * hprev[j];
                    }
                } else {
                    /* gates i, o, f, c; peepholes P = [Pi, Po, Pf] */
                    for (int64_t j = 0; j < H; j++) {
                        double pi = P ? ref_get_f64(P, p0 + (uint64_t)j) : 0.0;
                        double po = P ? ref_get_f64(P, p0 + (uint64_t)(H + j)) : 0.0;
                        double pf = P ? ref_get_f64(P, p0 + (uint64_t)(2 * H + j)) : 0.0;
                        double ig = act_apply(&f[0], clipped(gate[j] + pi * c[j], clip));
                        double fg = input_forget
                                        ? 1.0 - ig
                                        : act_apply(&f[0], clipped(gate[2 * H + j] + pf * c[j], clip));
                        double cg = act_apply(&f[1], clipped(gate[3 * H + j], clip));
                        c[j] = fg * c[j] + ig * cg;
                        double og = act_apply(&f[0], clipped(gate[H + j] + po * c[j], clip));
                        /* the spec clips "the input of activations", onnxruntime does not clip C_t before h:
                         * refuse where the two readings differ */
                        if (clip > 0 && fabs(c[j]) > clip) {
                            ref_unsupported(ctx,
                                            "clip = %g with a cell state of %g: whether h() sees the clipped "
                                            "cell state is not agreed",
                                            clip, c[j]);
                            free(gate);
                            goto fail;
                        }
                        h[j] = og * act_apply(&f[2], c[j]);
                    }
                }
                if (Y) {
                    uint64_t yo = y_off(&d, t, dir, b);
                    for (int64_t j = 0; j < H; j++)
                        ref_set_f64(Y, yo + (uint64_t)j, h[j]);
                }
            }
            /* Y stays zero past an entry's sequence length (the tensor was zero-filled) */
            for (int64_t j = 0; j < H; j++) {
                if (Yh) ref_set_f64(Yh, s0 + (uint64_t)j, h[j]);
                if (Yc) ref_set_f64(Yc, s0 + (uint64_t)j, c[j]);
            }
        }
    }
    free(gate);
    if (n_out > 0) out[0] = Y;
    if (n_out > 1) out[1] = Yh;
    if (n_out > 2) out[2] = Yc;
    return PC_OK;
fail:
    pc_data_unref(Y);
    pc_data_unref(Yh);
    pc_data_unref(Yc);
    return ctx->err->status;
}

static pc_status op_RNN(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    return run_rnn(ctx, RNN_SIMPLE, in, n_in, out, n_out);
}

static pc_status op_GRU(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    return run_rnn(ctx, RNN_GRU, in, n_in, out, n_out);
}

static pc_status op_LSTM(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    return run_rnn(ctx, RNN_LSTM, in, n_in, out, n_out);
}

const ref_op ref_ops_rnn[] = {
    {"", "GRU", op_GRU},
    {"", "LSTM", op_LSTM},
    {"", "RNN", op_RNN},
};
const size_t ref_ops_rnn_count = sizeof ref_ops_rnn / sizeof ref_ops_rnn[0];
