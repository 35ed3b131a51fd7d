/* Reference ops: convolutions and matrix products — Conv, ConvTranspose, MatMul, Gemm, Einsum.
 * Plain loops over NCHW. Float products accumulate in double and round once on store; integer products
 * accumulate in uint64 (wrapping) and wrap to the element width on store, as ONNX integer arithmetic does.
 * Geometry (pads, output sizes) is computed once per call with checked arithmetic, since attributes and
 * shapes come from the file. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

/* Outputs larger than this are refused (PC_ERR_BUDGET): an absurd attribute must not turn into a huge
 * allocation. */
#define OUTPUT_BUDGET ((uint64_t)1 << 31)
/* Naive loops over an index space bigger than this would run for hours: refuse instead. */
#define WORK_BUDGET ((uint64_t)1 << 40)

/* ---- small helpers
 * --------------------------------------------------------------------------------------------- */

static bool conv_float(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT16 || t == PC_DTYPE_FLOAT || t == PC_DTYPE_DOUBLE;
}

/* Sizes and attribute values come from the file: every sum or product that depends on them is checked. */
static bool add_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}
static bool mul_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

/* Element count of an output shape, refusing absurd sizes before anything is allocated. */
static pc_status check_budget(ref_ctx *ctx, int32_t rank, const int64_t *dims, const char *what)
{
    uint64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return ref_fail(ctx, PC_ERR_SHAPE, "%s dimension %d is negative (%lld)", what, (int)i,
                            (long long)dims[i]);
        if (dims[i] == 0) return PC_OK;
    }
    for (int32_t i = 0; i < rank; i++) {
        if ((uint64_t)dims[i] > OUTPUT_BUDGET || n * (uint64_t)dims[i] > OUTPUT_BUDGET)
            return ref_fail(ctx, PC_ERR_BUDGET, "%s would have more than 2^31 elements", what);
        n *= (uint64_t)dims[i];
    }
    return PC_OK;
}

/* Stores an accumulated value: floats round once to the element type, integers wrap to the element width. */
typedef struct acc {
    double f;
    uint64_t i; /* unsigned: wrapping on overflow is defined */
} acc;

static void acc_add_product(acc *a, bool is_float, const pc_data *x, uint64_t xi, const pc_data *y,
                            uint64_t yi)
{
    if (is_float)
        a->f += ref_get_f64(x, xi) * ref_get_f64(y, yi);
    else
        a->i += (uint64_t)ref_get_i64(x, xi) * (uint64_t)ref_get_i64(y, yi);
}

static void acc_store(pc_data *y, uint64_t i, bool is_float, const acc *a)
{
    if (is_float)
        ref_set_f64(y, i, a->f);
    else
        ref_set_i64(y, i, (int64_t)a->i);
}

/* ---- convolution geometry
 * ------------------------------------------------------------------------------------ */

typedef enum { AUTO_NOTSET, AUTO_SAME_UPPER, AUTO_SAME_LOWER, AUTO_VALID } auto_pad_mode;

typedef struct conv_geom {
    int32_t nsp; /* number of spatial axes */
    int64_t group;
    auto_pad_mode auto_pad;
    int64_t kernel[PC_MAX_RANK], stride[PC_MAX_RANK], dilation[PC_MAX_RANK];
    int64_t kext[PC_MAX_RANK]; /* dilated kernel extent: (k - 1) * d + 1 */
    int64_t pad_begin[PC_MAX_RANK], pad_end[PC_MAX_RANK];
    int64_t out[PC_MAX_RANK]; /* output spatial sizes */
} conv_geom;

/* A per-spatial-axis int list attribute: absent gives `fallback` on every axis; present needs exactly n
 * values, each >= min. */
static pc_status spatial_ints(ref_ctx *ctx, const char *name, int32_t n, int64_t fallback, int64_t min,
                              int64_t *out)
{
    size_t len;
    const int64_t *v = ref_attr_ints(ctx, name, &len);
    if (!v) {
        for (int32_t i = 0; i < n; i++)
            out[i] = fallback;
        return PC_OK;
    }
    if (len != (size_t)n)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute %s has %zu values, expected %d (one per spatial axis)", name, len, (int)n);
    for (int32_t i = 0; i < n; i++) {
        if (v[i] < min)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute %s[%d] = %lld, must be >= %lld", name, (int)i,
                            (long long)v[i], (long long)min);
        out[i] = v[i];
    }
    return PC_OK;
}

/* Attributes shared by Conv, ConvTranspose, ConvInteger and QLinearConv (which runs Conv on its node):
 * spatial rank from X, kernel from W (kernel_shape, when given, must agree), strides, dilations, group,
 * auto_pad, and the explicit pads (auto_pad may replace them later). */
static pc_status conv_common(ref_ctx *ctx, const pc_data *x, const pc_data *w, conv_geom *g)
{
    if (x->rank < 3)
        return ref_fail(ctx, PC_ERR_SHAPE, "input X must have rank >= 3 (N, C, spatial...), got rank %d",
                        (int)x->rank);
    if (w->rank != x->rank)
        return ref_fail(ctx, PC_ERR_SHAPE, "weight W has rank %d, X has rank %d: they must match",
                        (int)w->rank, (int)x->rank);
    g->nsp = x->rank - 2;
    for (int32_t i = 0; i < g->nsp; i++)
        g->kernel[i] = w->dims[2 + i];
    size_t nk;
    const int64_t *ks = ref_attr_ints(ctx, "kernel_shape", &nk);
    if (ks) {
        if (nk != (size_t)g->nsp)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "kernel_shape has %zu values, expected %d", nk,
                            (int)g->nsp);
        for (int32_t i = 0; i < g->nsp; i++)
            if (ks[i] != g->kernel[i])
                return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                                "kernel_shape[%d] = %lld disagrees with W's dimension %lld", (int)i,
                                (long long)ks[i], (long long)g->kernel[i]);
    }
    pc_status st;
    if ((st = spatial_ints(ctx, "strides", g->nsp, 1, 1, g->stride)) != PC_OK) return st;
    if ((st = spatial_ints(ctx, "dilations", g->nsp, 1, 1, g->dilation)) != PC_OK) return st;
    for (int32_t i = 0; i < g->nsp; i++) {
        int64_t e;
        if (g->kernel[i] < 1)
            return ref_fail(ctx, PC_ERR_SHAPE, "kernel dimension %d of W is %lld, must be >= 1", (int)i,
                            (long long)g->kernel[i]);
        if (!mul_ok(g->kernel[i] - 1, g->dilation[i], &e) || !add_ok(e, 1, &g->kext[i]))
            return ref_fail(ctx, PC_ERR_OVERFLOW, "dilated kernel extent overflows on spatial axis %d",
                            (int)i);
    }
    g->group = ref_attr_int(ctx, "group", 1);
    if (g->group < 1)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "group = %lld, must be >= 1", (long long)g->group);

    const char *ap = ref_attr_string(ctx, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0)
        g->auto_pad = AUTO_NOTSET;
    else if (strcmp(ap, "SAME_UPPER") == 0)
        g->auto_pad = AUTO_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0)
        g->auto_pad = AUTO_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0)
        g->auto_pad = AUTO_VALID;
    else
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "auto_pad = '%s', must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);

    size_t np;
    const int64_t *pads = ref_attr_ints(ctx, "pads", &np);
    for (int32_t i = 0; i < g->nsp; i++)
        g->pad_begin[i] = g->pad_end[i] = 0;
    /* explicit pads only count with NOTSET (the spec forbids both; runtimes ignore pads then) */
    if (pads && g->auto_pad == AUTO_NOTSET) {
        if (np != 2 * (size_t)g->nsp)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                            "pads has %zu values, expected %d (begin and end per spatial axis)", np,
                            2 * (int)g->nsp);
        for (int32_t i = 0; i < g->nsp; i++) {
            g->pad_begin[i] = pads[i];
            g->pad_end[i] = pads[g->nsp + i];
            if (g->pad_begin[i] < 0 || g->pad_end[i] < 0)
                return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                                "pads on spatial axis %d are (%lld, %lld), must be >= 0", (int)i,
                                (long long)g->pad_begin[i], (long long)g->pad_end[i]);
        }
    }
    return PC_OK;
}

/* Conv output sizes. SAME_*: output = ceil(in / stride), the total padding split evenly, the odd one at the
 * end (UPPER) or the beginning (LOWER). (Opsets 1-10 say "output size matches the input", which is the same
 * for stride 1; every runtime uses the ceil rule, which opset 11 wrote down.) */
static pc_status conv_output(ref_ctx *ctx, const pc_data *x, conv_geom *g)
{
    for (int32_t i = 0; i < g->nsp; i++) {
        int64_t in = x->dims[2 + i], s = g->stride[i], k = g->kext[i];
        if (g->auto_pad == AUTO_SAME_UPPER || g->auto_pad == AUTO_SAME_LOWER) {
            int64_t out = in / s + (in % s != 0), total;
            /* (out - 1) * s + k - in cannot overflow: (out - 1) * s < in and k fits */
            if (!add_ok((out > 0 ? out - 1 : 0) * s, k, &total))
                return ref_fail(ctx, PC_ERR_OVERFLOW, "padding overflows on spatial axis %d", (int)i);
            total = total - in > 0 ? total - in : 0;
            int64_t small = total / 2;
            g->pad_begin[i] = g->auto_pad == AUTO_SAME_UPPER ? small : total - small;
            g->pad_end[i] = total - g->pad_begin[i];
        }
        int64_t padded;
        if (!add_ok(in, g->pad_begin[i], &padded) || !add_ok(padded, g->pad_end[i], &padded))
            return ref_fail(ctx, PC_ERR_OVERFLOW, "padded input size overflows on spatial axis %d", (int)i);
        if (padded < k)
            return ref_fail(
                ctx, PC_ERR_SHAPE,
                "spatial axis %d: padded input size %lld is smaller than the dilated kernel extent %lld",
                (int)i, (long long)padded, (long long)k);
        g->out[i] = (padded - k) / s + 1;
    }
    return PC_OK;
}

/* Splits a ConvTranspose total padding (from output_shape or SAME_*). Opset 11's text: SAME_UPPER puts the
 * odd one at the end, otherwise at the beginning (opset 1's formula says the opposite but its own auto_pad
 * text agrees with opset 11; the backend data follows opset 11). A negative total (output larger than the
 * full result) always extends the end, like output_padding: that is what the backend data expects. */
static void convt_split(auto_pad_mode mode, int64_t total, int64_t *begin, int64_t *end)
{
    if (total < 0) {
        *begin = 0;
        *end = total;
        return;
    }
    int64_t small = total / 2;
    *begin = mode == AUTO_SAME_UPPER ? small : total - small;
    *end = total - *begin;
}

/* ConvTranspose output sizes and pads. full = stride * (in - 1) + output_padding + kext is the size before
 * pads. */
static pc_status convt_output(ref_ctx *ctx, const pc_data *x, conv_geom *g)
{
    pc_status st;
    int64_t opad[PC_MAX_RANK];
    if ((st = spatial_ints(ctx, "output_padding", g->nsp, 0, 0, opad)) != PC_OK) return st;
    size_t nos;
    const int64_t *os = ref_attr_ints(ctx, "output_shape", &nos);
    /* output_shape lists the spatial sizes; some exporters write the full (N, C, spatial...) shape */
    if (os && nos == (size_t)g->nsp + 2)
        os += 2;
    else if (os && nos != (size_t)g->nsp)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "output_shape has %zu values, expected %d", nos, (int)g->nsp);
    for (int32_t i = 0; i < g->nsp; i++) {
        int64_t in = x->dims[2 + i], s = g->stride[i], full;
        if (!mul_ok(s, in - 1, &full) || !add_ok(full, opad[i], &full) || !add_ok(full, g->kext[i], &full))
            return ref_fail(ctx, PC_ERR_OVERFLOW, "output size overflows on spatial axis %d", (int)i);
        if (os || g->auto_pad == AUTO_SAME_UPPER || g->auto_pad == AUTO_SAME_LOWER) {
            int64_t out;
            if (os)
                out = os[i];
            else if (!mul_ok(in, s, &out))
                return ref_fail(ctx, PC_ERR_OVERFLOW, "output size overflows on spatial axis %d", (int)i);
            if (out < 0)
                return ref_fail(ctx, PC_ERR_ATTRIBUTE, "output_shape[%d] = %lld is negative", (int)i,
                                (long long)out);
            convt_split(g->auto_pad, full - out, &g->pad_begin[i], &g->pad_end[i]);
            g->out[i] = out;
        } else {
            int64_t out = full - g->pad_begin[i] - g->pad_end[i]; /* pads >= 0, full >= -s: no overflow */
            if (out < 0)
                return ref_fail(ctx, PC_ERR_SHAPE,
                                "spatial axis %d: pads (%lld, %lld) exceed the output size %lld", (int)i,
                                (long long)g->pad_begin[i], (long long)g->pad_end[i], (long long)full);
            g->out[i] = out;
        }
    }
    return PC_OK;
}

/* Optional bias B: a 1-D tensor of M values of X's dtype. */
static pc_status check_bias(ref_ctx *ctx, const pc_data *b, const pc_data *x, int64_t m)
{
    if (!b) return PC_OK;
    if (b->kind != PC_TYPE_TENSOR || b->dtype != x->dtype)
        return ref_fail(ctx, PC_ERR_TYPE, "bias B must be a %s tensor", pc_dtype_name(x->dtype));
    if (b->rank != 1 || b->dims[0] != m)
        return ref_fail(ctx, PC_ERR_SHAPE, "bias B must have shape [%lld], got rank %d with %llu elements",
                        (long long)m, (int)b->rank, (unsigned long long)b->n_elements);
    return PC_OK;
}

static pc_status conv_inputs(ref_ctx *ctx, pc_data *const *in, uint32_t n_in)
{
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    if ((st = ref_require_dtype(ctx, in[0], 0, conv_float, "float16/float/double")) != PC_OK) return st;
    if (in[1]->dtype != in[0]->dtype)
        return ref_fail(ctx, PC_ERR_TYPE, "W is %s but X is %s: they must match", pc_dtype_name(in[1]->dtype),
                        pc_dtype_name(in[0]->dtype));
    if (n_in > 2 && in[2] && in[2]->kind != PC_TYPE_TENSOR)
        return ref_fail(ctx, PC_ERR_TYPE, "bias B must be a tensor");
    return PC_OK;
}

/* Advances a row-major counter over dims[0..n); false after the last position. */
static bool counter_next(int32_t n, const int64_t *dims, int64_t *c)
{
    for (int32_t d = n - 1; d >= 0; d--) {
        if (++c[d] < dims[d]) return true;
        c[d] = 0;
    }
    return false;
}

/* ---- Conv
 * ------------------------------------------------------------------------------------------------------ */

/* A tensor's elements as doubles, read once (the loops below then index a plain array instead of switching
 * on the element type per read); NULL on out of memory. */
static double *to_f64(const pc_data *t)
{
    size_t bytes;
    if (!pc_size_mul(t->n_elements ? t->n_elements : 1, sizeof(double), &bytes)) return NULL;
    double *d = malloc(bytes);
    if (!d) return NULL;
    for (uint64_t i = 0; i < t->n_elements; i++)
        d[i] = ref_get_f64(t, i);
    return d;
}

/* Conv over one or two spatial axes, the same sums as the general loop in op_Conv in the same order: each
 * output of a map accumulates, in a double plane, B[m] and then the products for c, then the kernel offsets
 * row-major, skipping padding. Only the loop nest differs: for each (c, kh, kw) the products are added along
 * an output row, reading a contiguous (or strided) input row, so the inner loop is a plain multiply-add. The
 * result is bit-identical to the general loop's. */
static pc_status conv_planes(ref_ctx *ctx, const pc_data *x, const pc_data *w, const pc_data *b,
                             const conv_geom *g, pc_data *y)
{
    bool two = g->nsp == 2;
    int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0];
    int64_t H = two ? x->dims[2] : 1, W = x->dims[2 + two];
    int64_t KH = two ? g->kernel[0] : 1, KW = g->kernel[two];
    int64_t OH = two ? g->out[0] : 1, OW = g->out[two];
    int64_t sh = two ? g->stride[0] : 1, sw = g->stride[two], dh = two ? g->dilation[0] : 1,
            dw = g->dilation[two], ph = two ? g->pad_begin[0] : 0, pw = g->pad_begin[two];
    int64_t Cg = C / g->group, Mg = M / g->group;
    int64_t per_map = OH * OW; /* within the output's budget (check_budget) */
    size_t plane_bytes;
    double *xd = to_f64(x), *wd = to_f64(w), *plane = NULL;
    if (pc_size_mul((size_t)(per_map > 0 ? per_map : 1), sizeof(double), &plane_bytes))
        plane = malloc(plane_bytes);
    pc_status st = PC_OK;
    if (!xd || !wd || !plane) {
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory for the convolution's double planes");
        goto out;
    }
    uint64_t yi = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            double bias = b ? ref_get_f64(b, (uint64_t)m) : 0.0;
            for (int64_t i = 0; i < per_map; i++)
                plane[i] = bias;
            int64_t c0 = (m / Mg) * Cg, c = 0;
            /* a 1x1 kernel (the pointwise Convs that hold most of a mobile network's products): four
             * channels per pass over the plane, added left to right, ((a + p0) + p1) + ..., which is the
             * order of four single passes, so the bits stay the same with a quarter of the plane traffic */
            if (KH * KW == 1) {
                int64_t off = -pw, lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                int64_t hi = W - 1 - off < 0 ? -1 : (W - 1 - off) / sw;
                if (hi > OW - 1) hi = OW - 1;
                for (; c + 4 <= Cg; c += 4) {
                    const double *xp = xd + (n * C + c0 + c) * H * W, *wk = wd + m * Cg + c;
                    double w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3];
                    for (int64_t oh = 0; oh < OH; oh++) {
                        int64_t ih = oh * sh - ph;
                        if (ih < 0 || ih >= H) continue;
                        const double *r0 = xp + ih * W + off, *r1 = r0 + H * W, *r2 = r1 + H * W,
                                     *r3 = r2 + H * W;
                        double *a = plane + oh * OW;
                        for (int64_t ow = lo; ow <= hi; ow++) {
                            int64_t i = ow * sw;
                            a[ow] = a[ow] + r0[i] * w0 + r1[i] * w1 + r2[i] * w2 + r3[i] * w3;
                        }
                    }
                }
            }
            for (; c < Cg; c++) {
                const double *xp = xd + (n * C + c0 + c) * H * W, *wk = wd + (m * Cg + c) * KH * KW;
                for (int64_t kh = 0; kh < KH; kh++)
                    for (int64_t kw = 0; kw < KW; kw++) {
                        double wv = wk[kh * KW + kw];
                        /* the outputs whose input column ow * sw + off lies inside the row */
                        int64_t off = kw * dw - pw;
                        int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                        int64_t hi = W - 1 - off < 0 ? -1 : (W - 1 - off) / sw;
                        if (hi > OW - 1) hi = OW - 1;
                        for (int64_t oh = 0; oh < OH; oh++) {
                            int64_t ih = oh * sh - ph + kh * dh;
                            if (ih < 0 || ih >= H) continue;
                            const double *row = xp + ih * W + off;
                            double *a = plane + oh * OW;
                            for (int64_t ow = lo; ow <= hi; ow++)
                                a[ow] += row[ow * sw] * wv;
                        }
                    }
            }
            for (int64_t i = 0; i < per_map; i++)
                ref_set_f64(y, yi++, plane[i]);
        }
out:
    free(xd);
    free(wd);
    free(plane);
    return st;
}

/* y[n, m, o] = B[m] + sum over c in m's group and kernel offsets k of x[n, c, o * stride - pad_begin + k *
 * dilation]
 * * w[m, c, k]; input positions outside X read as zero (padding). */
static pc_status op_Conv(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st = conv_inputs(ctx, in, n_in);
    if (st != PC_OK) return st;
    const pc_data *x = in[0], *w = in[1], *b = n_in > 2 ? in[2] : NULL;
    conv_geom g;
    if ((st = conv_common(ctx, x, w, &g)) != PC_OK) return st;
    int64_t C = x->dims[1], M = w->dims[0];
    if (C % g.group != 0 || C / g.group != w->dims[1])
        return ref_fail(ctx, PC_ERR_SHAPE,
                        "X has %lld channels; W's dimension 1 (%lld) times group %lld must equal it",
                        (long long)C, (long long)w->dims[1], (long long)g.group);
    if (M % g.group != 0)
        return ref_fail(ctx, PC_ERR_SHAPE, "W has %lld output channels, not divisible by group %lld",
                        (long long)M, (long long)g.group);
    if ((st = check_bias(ctx, b, x, M)) != PC_OK) return st;
    if ((st = conv_output(ctx, x, &g)) != PC_OK) return st;

    int64_t ydims[PC_MAX_RANK];
    ydims[0] = x->dims[0];
    ydims[1] = M;
    for (int32_t i = 0; i < g.nsp; i++)
        ydims[2 + i] = g.out[i];
    if ((st = check_budget(ctx, x->rank, ydims, "output Y")) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, ydims);
    if (!y) return ctx->err->status;

    if (g.nsp == 1 || g.nsp == 2) {
        if ((st = conv_planes(ctx, x, w, b, &g, y)) != PC_OK) {
            pc_data_unref(y); /* the planes' allocation failed: y was leaked here before */
            return st;
        }
        out[0] = y;
        return PC_OK;
    }
    int64_t xs[PC_MAX_RANK], ws[PC_MAX_RANK];
    ref_strides(x->rank, x->dims, xs);
    ref_strides(w->rank, w->dims, ws);
    const int64_t *xsp = x->dims + 2, *xss = xs + 2;
    int64_t Cg = C / g.group, Mg = M / g.group;
    uint64_t yi = 0;
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t m = 0; m < M; m++) {
            int64_t c0 = (m / Mg) * Cg;
            int64_t oc[PC_MAX_RANK] = {0};
            uint64_t per_map = ref_shape_count(g.nsp, g.out);
            for (uint64_t o = 0; o < per_map; o++, counter_next(g.nsp, g.out, oc)) {
                double sum = b ? ref_get_f64(b, (uint64_t)m) : 0.0;
                for (int64_t c = 0; c < Cg; c++) {
                    int64_t kc[PC_MAX_RANK] = {0};
                    uint64_t wi = (uint64_t)(m * ws[0] + c * ws[1]);
                    do {
                        int64_t xi = n * xs[0] + (c0 + c) * xs[1];
                        bool inside = true;
                        for (int32_t d = 0; d < g.nsp && inside; d++) {
                            int64_t p = oc[d] * g.stride[d] - g.pad_begin[d] + kc[d] * g.dilation[d];
                            inside = p >= 0 && p < xsp[d];
                            if (inside) xi += p * xss[d];
                        }
                        if (inside) sum += ref_get_f64(x, (uint64_t)xi) * ref_get_f64(w, wi);
                        wi++;
                    } while (counter_next(g.nsp, g.kernel, kc));
                }
                ref_set_f64(y, yi++, sum);
            }
        }
    out[0] = y;
    return PC_OK;
}

/* ---- ConvTranspose
 * --------------------------------------------------------------------------------------------- */

/* ConvTranspose over one or two spatial axes, the same sums as the general loop in op_ConvTranspose in the
 * same order (each output accumulates B[m], then for c in m's group the kernel offsets row-major), scattered
 * instead of gathered: for each (c, kh, kw) an input row adds its products to the output positions it
 * reaches, ih * stride - pad_begin + k * dilation. One (c, kh, kw) reaches an output at most once, so every
 * output sees its terms in the general loop's order and the result is bit-identical. */
static pc_status convt_planes(ref_ctx *ctx, const pc_data *x, const pc_data *w, const pc_data *b,
                              const conv_geom *g, pc_data *y)
{
    bool two = g->nsp == 2;
    int64_t N = x->dims[0], C = x->dims[1], Mg = w->dims[1], M = Mg * g->group, Cg = C / g->group;
    int64_t H = two ? x->dims[2] : 1, W = x->dims[2 + two];
    int64_t KH = two ? g->kernel[0] : 1, KW = g->kernel[two];
    int64_t OH = two ? g->out[0] : 1, OW = g->out[two];
    int64_t sh = two ? g->stride[0] : 1, sw = g->stride[two], dh = two ? g->dilation[0] : 1,
            dw = g->dilation[two], ph = two ? g->pad_begin[0] : 0, pw = g->pad_begin[two];
    int64_t per_map = OH * OW; /* within the output's budget (check_budget) */
    size_t plane_bytes;
    double *xd = to_f64(x), *wd = to_f64(w), *plane = NULL;
    if (pc_size_mul((size_t)(per_map > 0 ? per_map : 1), sizeof(double), &plane_bytes))
        plane = malloc(plane_bytes);
    pc_status st = PC_OK;
    if (!xd || !wd || !plane) {
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory for the transposed convolution's double planes");
        goto out;
    }
    uint64_t yi = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            double bias = b ? ref_get_f64(b, (uint64_t)m) : 0.0;
            for (int64_t i = 0; i < per_map; i++)
                plane[i] = bias;
            int64_t c0 = (m / Mg) * Cg, mm = m % Mg;
            for (int64_t c = 0; c < Cg; c++) {
                const double *xp = xd + (n * C + c0 + c) * H * W, *wk = wd + ((c0 + c) * Mg + mm) * KH * KW;
                for (int64_t kh = 0; kh < KH; kh++)
                    for (int64_t kw = 0; kw < KW; kw++) {
                        double wv = wk[kh * KW + kw];
                        /* the input columns iw whose output iw * sw + off lies inside the output row */
                        int64_t off = kw * dw - pw;
                        int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                        int64_t hi = OW - 1 - off < 0 ? -1 : (OW - 1 - off) / sw;
                        if (hi > W - 1) hi = W - 1;
                        for (int64_t ih = 0; ih < H; ih++) {
                            int64_t oh = ih * sh - ph + kh * dh;
                            if (oh < 0 || oh >= OH) continue;
                            const double *row = xp + ih * W;
                            double *a = plane + oh * OW + off;
                            for (int64_t iw = lo; iw <= hi; iw++)
                                a[iw * sw] += row[iw] * wv;
                        }
                    }
            }
            for (int64_t i = 0; i < per_map; i++)
                ref_set_f64(y, yi++, plane[i]);
        }
out:
    free(xd);
    free(wd);
    free(plane);
    return st;
}

/* The adjoint of Conv: each x[n, c, i] * w[c, m', k] lands on output position i * stride + k * dilation -
 * pad_begin. Computed by gathering: for output position o and kernel offset k, t = o + pad_begin - k *
 * dilation must be a multiple of the stride with t / stride inside X. */
static pc_status op_ConvTranspose(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                  uint32_t n_out)
{
    (void)n_out;
    pc_status st = conv_inputs(ctx, in, n_in);
    if (st != PC_OK) return st;
    const pc_data *x = in[0], *w = in[1], *b = n_in > 2 ? in[2] : NULL;
    conv_geom g;
    if ((st = conv_common(ctx, x, w, &g)) != PC_OK) return st;
    int64_t C = x->dims[1], M;
    if (w->dims[0] != C)
        return ref_fail(ctx, PC_ERR_SHAPE, "W's dimension 0 (%lld) must equal X's channels (%lld)",
                        (long long)w->dims[0], (long long)C);
    if (C % g.group != 0)
        return ref_fail(ctx, PC_ERR_SHAPE, "X has %lld channels, not divisible by group %lld", (long long)C,
                        (long long)g.group);
    if (!mul_ok(w->dims[1], g.group, &M))
        return ref_fail(ctx, PC_ERR_OVERFLOW, "output channels W.shape[1] * group overflow");
    if ((st = check_bias(ctx, b, x, M)) != PC_OK) return st;
    if ((st = convt_output(ctx, x, &g)) != PC_OK) return st;

    int64_t ydims[PC_MAX_RANK];
    ydims[0] = x->dims[0];
    ydims[1] = M;
    for (int32_t i = 0; i < g.nsp; i++)
        ydims[2 + i] = g.out[i];
    if ((st = check_budget(ctx, x->rank, ydims, "output Y")) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, ydims);
    if (!y) return ctx->err->status;
    if (g.nsp == 1 || g.nsp == 2) {
        if ((st = convt_planes(ctx, x, w, b, &g, y)) != PC_OK) {
            pc_data_unref(y);
            return st;
        }
        out[0] = y;
        return PC_OK;
    }

    int64_t xs[PC_MAX_RANK], ws[PC_MAX_RANK];
    ref_strides(x->rank, x->dims, xs);
    ref_strides(w->rank, w->dims, ws);
    const int64_t *xsp = x->dims + 2, *xss = xs + 2;
    int64_t Cg = C / g.group, Mg = w->dims[1];
    uint64_t yi = 0, per_map = ref_shape_count(g.nsp, g.out);
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t m = 0; m < M; m++) {
            int64_t c0 = (m / Mg) * Cg, mm = m % Mg;
            int64_t oc[PC_MAX_RANK] = {0};
            for (uint64_t o = 0; o < per_map; o++, counter_next(g.nsp, g.out, oc)) {
                double sum = b ? ref_get_f64(b, (uint64_t)m) : 0.0;
                for (int64_t c = 0; c < Cg; c++) {
                    int64_t kc[PC_MAX_RANK] = {0};
                    uint64_t wi = (uint64_t)((c0 + c) * ws[0] + mm * ws[1]);
                    do {
                        int64_t xi = n * xs[0] + (c0 + c) * xs[1];
                        bool inside = true;
                        for (int32_t d = 0; d < g.nsp && inside; d++) {
                            int64_t t = oc[d] + g.pad_begin[d] - kc[d] * g.dilation[d];
                            inside = t >= 0 && t % g.stride[d] == 0 && t / g.stride[d] < xsp[d];
                            if (inside) xi += (t / g.stride[d]) * xss[d];
                        }
                        if (inside) sum += ref_get_f64(x, (uint64_t)xi) * ref_get_f64(w, wi);
                        wi++;
                    } while (counter_next(g.nsp, g.kernel, kc));
                }
                ref_set_f64(y, yi++, sum);
            }
        }
    out[0] = y;
    return PC_OK;
}

/* ---- MatMul
 * ---------------------------------------------------------------------------------------------------- */

/* Element types by opset: floats always, 32/64-bit integers from 9, bfloat16 from 13. */
static pc_status matmul_dtype(ref_ctx *ctx, const pc_data *a, const pc_data *b)
{
    pc_dtype t = a->dtype;
    bool ok = conv_float(t) ||
              (ctx->opset >= 9 && (t == PC_DTYPE_INT32 || t == PC_DTYPE_INT64 || t == PC_DTYPE_UINT32 ||
                                   t == PC_DTYPE_UINT64)) ||
              (ctx->opset >= 13 && t == PC_DTYPE_BFLOAT16);
    if (!ok)
        return ref_fail(ctx, PC_ERR_TYPE, "element type %s is not allowed at opset %lld", pc_dtype_name(t),
                        (long long)ctx->opset);
    if (b->dtype != t)
        return ref_fail(ctx, PC_ERR_TYPE, "inputs are %s and %s: they must match", pc_dtype_name(t),
                        pc_dtype_name(b->dtype));
    return PC_OK;
}

/* numpy.matmul: 1-D A is a row [1, K] and 1-D B a column [K, 1], the added axis dropped from the result; the
 * leading (batch) axes broadcast. */
static pc_status op_MatMul(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *a = in[0], *b = in[1];
    if ((st = matmul_dtype(ctx, a, b)) != PC_OK) return st;
    if (a->rank < 1 || b->rank < 1)
        return ref_fail(ctx, PC_ERR_SHAPE, "MatMul inputs must have rank >= 1, got ranks %d and %d",
                        (int)a->rank, (int)b->rank);
    int64_t M = a->rank > 1 ? a->dims[a->rank - 2] : 1, K = a->dims[a->rank - 1];
    int64_t Kb = b->rank > 1 ? b->dims[b->rank - 2] : b->dims[0], N = b->rank > 1 ? b->dims[b->rank - 1] : 1;
    if (K != Kb)
        return ref_fail(ctx, PC_ERR_SHAPE, "inner dimensions differ: A has K = %lld, B has K = %lld",
                        (long long)K, (long long)Kb);
    /* batch axes: A's and B's leading axes, right-aligned and broadcast */
    int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    int32_t nb = ba > bb ? ba : bb;
    int64_t bdims[PC_MAX_RANK], sa[PC_MAX_RANK] = {0},
                                sb[PC_MAX_RANK] = {0}; /* batch strides, 0 = broadcast */
    int64_t as_full[PC_MAX_RANK], bs_full[PC_MAX_RANK];
    ref_strides(a->rank, a->dims, as_full);
    ref_strides(b->rank, b->dims, bs_full);
    for (int32_t d = 0; d < nb; d++) {
        int32_t da = d - (nb - ba), db = d - (nb - bb);
        int64_t xa = da >= 0 ? a->dims[da] : 1, xb = db >= 0 ? b->dims[db] : 1;
        if (xa != xb && xa != 1 && xb != 1)
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "batch dimensions cannot be broadcast: %lld vs %lld on batch axis %d",
                            (long long)xa, (long long)xb, (int)d);
        bdims[d] = xa == 1 ? xb : xa;
        sa[d] = da >= 0 && xa != 1 ? as_full[da] : 0;
        sb[d] = db >= 0 && xb != 1 ? bs_full[db] : 0;
    }
    int64_t ydims[PC_MAX_RANK];
    int32_t yr = 0;
    for (int32_t d = 0; d < nb; d++)
        ydims[yr++] = bdims[d];
    if (a->rank > 1) ydims[yr++] = M;
    if (b->rank > 1) ydims[yr++] = N;
    if ((st = check_budget(ctx, yr, ydims, "output Y")) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, a->dtype, yr, ydims);
    if (!y) return ctx->err->status;

    bool is_float = ref_is_float(a->dtype);
    /* strides of the matrix axes; 1-D operands are a row (A) or a column (B) */
    int64_t am = a->rank > 1 ? as_full[a->rank - 2] : 0, ak = 1;
    int64_t bk = b->rank > 1 ? bs_full[b->rank - 2] : 1, bn = 1;
    uint64_t nbatch = ref_shape_count(nb, bdims), yi = 0;
    int64_t bc[PC_MAX_RANK] = {0};
    /* floats: A and B read once as doubles, and each output row accumulated in a double row, k outermost, so
     * the inner loop runs along B's row; every y[i, j] still sums its products in k order from 0, as the
     * integer loop below does, so the result is the same as a dot product per element */
    double *ad = NULL, *bd = NULL, *row = NULL;
    if (is_float) {
        size_t row_bytes;
        ad = to_f64(a);
        bd = to_f64(b);
        if (pc_size_mul((size_t)(N > 0 ? N : 1), sizeof(double), &row_bytes)) row = malloc(row_bytes);
        if (!ad || !bd || !row) {
            free(ad);
            free(bd);
            free(row);
            pc_data_unref(y);
            return ref_fail(ctx, PC_ERR_NOMEM, "out of memory for MatMul's double rows");
        }
    }
    for (uint64_t t = 0; t < nbatch; t++, counter_next(nb, bdims, bc)) {
        int64_t a0 = 0, b0 = 0;
        for (int32_t d = 0; d < nb; d++) {
            a0 += bc[d] * sa[d];
            b0 += bc[d] * sb[d];
        }
        for (int64_t i = 0; i < M; i++) {
            if (is_float) {
                for (int64_t j = 0; j < N; j++)
                    row[j] = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    double av = ad[a0 + i * am + k * ak];
                    const double *bp = bd + b0 + k * bk;
                    for (int64_t j = 0; j < N; j++)
                        row[j] += av * bp[j * bn];
                }
                for (int64_t j = 0; j < N; j++)
                    ref_set_f64(y, yi++, row[j]);
                continue;
            }
            for (int64_t j = 0; j < N; j++) {
                acc s = {0, 0};
                for (int64_t k = 0; k < K; k++)
                    acc_add_product(&s, false, a, (uint64_t)(a0 + i * am + k * ak), b,
                                    (uint64_t)(b0 + k * bk + j * bn));
                acc_store(y, yi++, false, &s);
            }
        }
    }
    free(ad);
    free(bd);
    free(row);
    out[0] = y;
    return PC_OK;
}

/* v as an int64 when it is a whole number in range (the cast is only defined then). */
static bool whole(double v, int64_t *out)
{
    if (!(v >= -9.2e18 && v <= 9.2e18) || v != (double)(int64_t)v) return false;
    *out = (int64_t)v;
    return true;
}

/* ---- Gemm
 * ------------------------------------------------------------------------------------------------------ */

/* Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (M x K), B' likewise (K x N); C optional from opset
 * 11, unidirectionally broadcast to (M, N) (opsets < 7: only with broadcast = 1, else C must be exactly (M,
 * N)). */
static pc_status op_Gemm(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *a = in[0], *b = in[1], *c = n_in > 2 ? in[2] : NULL;
    if ((st = matmul_dtype(ctx, a, b)) != PC_OK) return st;
    if (!c && ctx->opset < 11) return ref_fail(ctx, PC_ERR_ARITY, "input C is required before opset 11");
    if (c && (c->kind != PC_TYPE_TENSOR || c->dtype != a->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "input C must be a %s tensor", pc_dtype_name(a->dtype));
    if (a->rank != 2 || b->rank != 2)
        return ref_fail(ctx, PC_ERR_SHAPE, "A and B must be 2-D, got ranks %d and %d", (int)a->rank,
                        (int)b->rank);
    bool ta = ref_attr_int(ctx, "transA", 0) != 0, tb = ref_attr_int(ctx, "transB", 0) != 0;
    double alpha = ref_attr_float(ctx, "alpha", 1.0), beta = ref_attr_float(ctx, "beta", 1.0);
    int64_t M = ta ? a->dims[1] : a->dims[0], K = ta ? a->dims[0] : a->dims[1];
    int64_t Kb = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
    if (K != Kb)
        return ref_fail(ctx, PC_ERR_SHAPE, "inner dimensions differ: A' is %lld x %lld, B' is %lld x %lld",
                        (long long)M, (long long)K, (long long)Kb, (long long)N);
    int64_t ydims[2] = {M, N}, cs[2] = {0, 0}; /* C's strides over (M, N), 0 where it broadcasts */
    if (c) {
        if (c->rank > 2) return ref_fail(ctx, PC_ERR_SHAPE, "C has rank %d, must be <= 2", (int)c->rank);
        int64_t cd[2] = {1, 1};
        for (int32_t d = 0; d < c->rank; d++)
            cd[2 - c->rank + d] = c->dims[d];
        bool exact = c->rank == 2 && cd[0] == M && cd[1] == N;
        if (ctx->opset < 7 && !exact && ref_attr_int(ctx, "broadcast", 0) == 0)
            return ref_fail(ctx, PC_ERR_SHAPE, "C must be %lld x %lld when broadcast = 0", (long long)M,
                            (long long)N);
        for (int32_t d = 0; d < 2; d++)
            if (cd[d] != ydims[d] && cd[d] != 1)
                return ref_fail(ctx, PC_ERR_SHAPE, "C cannot be broadcast to %lld x %lld (dimension %lld)",
                                (long long)M, (long long)N, (long long)cd[d]);
        cs[1] = cd[1] == 1 ? 0 : 1;
        cs[0] = cd[0] == 1 ? 0 : cd[1];
    }
    bool is_float = ref_is_float(a->dtype);
    /* integer Gemm: alpha and beta must be whole numbers so the result stays exact integer arithmetic */
    int64_t ialpha = 0, ibeta = 0;
    if (!is_float && (!whole(alpha, &ialpha) || !whole(beta, &ibeta)))
        return ref_unsupported(ctx, "integer Gemm with non-integral alpha %g or beta %g", alpha, beta);
    if ((st = check_budget(ctx, 2, ydims, "output Y")) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, a->dtype, 2, ydims);
    if (!y) return ctx->err->status;
    /* strides of A' and B' in A's and B's storage */
    int64_t am = ta ? 1 : a->dims[1], ak = ta ? a->dims[1] : 1, bk = tb ? 1 : b->dims[1],
            bn = tb ? b->dims[1] : 1;
    uint64_t yi = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            acc s = {0, 0};
            for (int64_t k = 0; k < K; k++)
                acc_add_product(&s, is_float, a, (uint64_t)(i * am + k * ak), b, (uint64_t)(k * bk + j * bn));
            uint64_t ci = (uint64_t)(i * cs[0] + j * cs[1]);
            if (is_float) {
                s.f = alpha * s.f + (c ? beta * ref_get_f64(c, ci) : 0.0);
            } else {
                s.i = (uint64_t)ialpha * s.i + (c ? (uint64_t)ibeta * (uint64_t)ref_get_i64(c, ci) : 0);
            }
            acc_store(y, yi++, is_float, &s);
        }
    out[0] = y;
    return PC_OK;
}

/* ---- Einsum
 * ---------------------------------------------------------------------------------------------------- */

/* Labels: 'a'..'z' are 0..25, 'A'..'Z' 26..51 (ASCII order is 'A' < 'a', so the implicit output orders them
 * by character code through label_char), and the broadcast (ellipsis) axes 52.. one label per axis. */
enum { EIN_LETTERS = 52, EIN_MAX_LABELS = EIN_LETTERS + PC_MAX_RANK };

static int ein_label(char ch)
{
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
    return -1;
}

typedef struct ein_term {
    int32_t n_letters;
    int32_t ellipsis_at; /* index among the letters where "..." stands, -1 when absent */
    int8_t letters[PC_MAX_RANK];
} ein_term;

/* Parses one term (spaces already removed) of [s, e). */
static pc_status ein_parse_term(ref_ctx *ctx, const char *s, const char *e, ein_term *t)
{
    t->n_letters = 0;
    t->ellipsis_at = -1;
    while (s < e) {
        if (*s == '.') {
            if (e - s < 3 || s[1] != '.' || s[2] != '.' || t->ellipsis_at >= 0)
                return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                                "equation: a term has a stray '.' or more than one ellipsis");
            t->ellipsis_at = t->n_letters;
            s += 3;
            continue;
        }
        int l = ein_label(*s);
        if (l < 0) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "equation: unexpected character '%c'", *s);
        if (t->n_letters >= PC_MAX_RANK)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "equation: a term has more than %d labels",
                            (int)PC_MAX_RANK);
        t->letters[t->n_letters++] = (int8_t)l;
        s++;
    }
    return PC_OK;
}

/* Expands term t for an operand of rank r with `ell` ellipsis axes into per-axis labels; the ellipsis axes
 * are right-aligned among the n_ell broadcast labels. */
static void ein_axis_labels(const ein_term *t, int32_t ell, int32_t n_ell, int32_t *labels)
{
    int32_t k = 0;
    for (int32_t i = 0; i <= t->n_letters; i++) {
        if (i == t->ellipsis_at)
            for (int32_t j = 0; j < ell; j++)
                labels[k++] = EIN_LETTERS + (n_ell - ell) + j;
        if (i < t->n_letters) labels[k++] = t->letters[i];
    }
}

typedef struct ein_plan {
    int32_t n_out, n_labels;       /* output labels first, then the summed ones */
    int32_t order[EIN_MAX_LABELS]; /* label id per loop position */
    int64_t size[EIN_MAX_LABELS];  /* indexed by loop position */
} ein_plan;

static pc_status ein_plan_build(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, const char *eq, ein_plan *p,
                                int32_t **axis_labels_out)
{
    /* drop spaces */
    size_t len = strlen(eq);
    char *buf = malloc(len + 1);
    int32_t *axis_labels = NULL;
    ein_term *terms = calloc(n_in + 1, sizeof *terms);
    pc_status st = PC_OK;
    if (!buf || !terms) {
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory parsing the equation");
        goto done;
    }
    size_t bl = 0;
    for (size_t i = 0; i < len; i++)
        if (eq[i] != ' ') buf[bl++] = eq[i];
    buf[bl] = 0;
    char *arrow = strstr(buf, "->");
    char *lhs_end = arrow ? arrow : buf + bl;
    /* left-hand side terms, one per input */
    uint32_t nt = 0;
    for (char *s = buf;;) {
        char *comma = memchr(s, ',', (size_t)(lhs_end - s));
        char *e = comma ? comma : lhs_end;
        if (nt >= n_in) {
            st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "equation '%s' has more terms than the %u inputs", eq, n_in);
            goto done;
        }
        if ((st = ein_parse_term(ctx, s, e, &terms[nt++])) != PC_OK) goto done;
        if (!comma) break;
        s = comma + 1;
    }
    if (nt != n_in) {
        st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "equation '%s' has %u terms for %u inputs", eq, nt, n_in);
        goto done;
    }
    /* ellipsis width: the largest over the operands (they broadcast, right-aligned) */
    int32_t n_ell = 0, total_axes = 0;
    bool any_ellipsis = false;
    for (uint32_t k = 0; k < n_in; k++) {
        int32_t ell = in[k]->rank - terms[k].n_letters;
        if (terms[k].ellipsis_at >= 0) any_ellipsis = true;
        if (terms[k].ellipsis_at < 0 ? ell != 0 : ell < 0) {
            st = ref_fail(ctx, PC_ERR_SHAPE, "equation term %u has %d labels for input %u of rank %d", k,
                          (int)terms[k].n_letters, k, (int)in[k]->rank);
            goto done;
        }
        if (ell > n_ell) n_ell = ell;
        total_axes += in[k]->rank;
    }
    axis_labels = malloc((size_t)(total_axes ? total_axes : 1) * sizeof *axis_labels);
    if (!axis_labels) {
        st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory parsing the equation");
        goto done;
    }
    /* label sizes: letters must agree everywhere; broadcast axes broadcast (1 or equal) */
    int64_t lsize[EIN_MAX_LABELS];
    int count[EIN_MAX_LABELS] = {0};
    for (int32_t l = 0; l < EIN_MAX_LABELS; l++)
        lsize[l] = -1;
    for (int32_t l = EIN_LETTERS; l < EIN_LETTERS + n_ell; l++)
        lsize[l] = 1;
    int32_t off = 0;
    for (uint32_t k = 0; k < n_in; k++) {
        int32_t *lab = axis_labels + off;
        ein_axis_labels(&terms[k], in[k]->rank - terms[k].n_letters, n_ell, lab);
        for (int32_t d = 0; d < in[k]->rank; d++) {
            int32_t l = lab[d];
            int64_t sz = in[k]->dims[d];
            count[l]++;
            if (l >= EIN_LETTERS) {
                if (sz != 1 && lsize[l] != 1 && lsize[l] != sz) {
                    st = ref_fail(ctx, PC_ERR_SHAPE,
                                  "ellipsis axes of input %u cannot be broadcast (%lld vs %lld)", k,
                                  (long long)sz, (long long)lsize[l]);
                    goto done;
                }
                if (sz != 1) lsize[l] = sz;
            } else if (lsize[l] >= 0 && lsize[l] != sz) {
                st = ref_fail(ctx, PC_ERR_SHAPE, "label '%c' has size %lld in input %u but %lld elsewhere",
                              l < 26 ? 'a' + l : 'A' + (l - 26), (long long)sz, k, (long long)lsize[l]);
                goto done;
            } else {
                lsize[l] = sz;
            }
        }
        off += in[k]->rank;
    }
    /* output labels */
    bool in_out[EIN_MAX_LABELS] = {false};
    p->n_out = 0;
    if (arrow) {
        ein_term rt;
        if ((st = ein_parse_term(ctx, arrow + 2, buf + bl, &rt)) != PC_OK) goto done;
        int32_t rl[PC_MAX_RANK + PC_MAX_RANK];
        if (rt.n_letters + n_ell > PC_MAX_RANK) {
            st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "equation: output has more than %d axes", (int)PC_MAX_RANK);
            goto done;
        }
        /* an output without "..." sums the broadcast axes away */
        ein_axis_labels(&rt, rt.ellipsis_at >= 0 ? n_ell : 0, n_ell, rl);
        int32_t nr = rt.n_letters + (rt.ellipsis_at >= 0 ? n_ell : 0);
        for (int32_t i = 0; i < nr; i++) {
            int32_t l = rl[i];
            if (l < EIN_LETTERS && !count[l]) {
                st = ref_fail(ctx, PC_ERR_ATTRIBUTE,
                              "equation: output label '%c' does not appear in the inputs",
                              l < 26 ? 'a' + l : 'A' + (l - 26));
                goto done;
            }
            if (in_out[l]) {
                st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "equation: output label repeated");
                goto done;
            }
            in_out[l] = true;
            p->order[p->n_out++] = l;
        }
    } else {
        /* implicit: broadcast axes first, then the labels seen exactly once, in character order ('A' < 'a')
         */
        if (any_ellipsis)
            for (int32_t l = EIN_LETTERS; l < EIN_LETTERS + n_ell; l++) {
                in_out[l] = true;
                p->order[p->n_out++] = l;
            }
        for (int32_t pass = 0; pass < 2; pass++)
            for (int32_t l = pass == 0 ? 26 : 0; l < (pass == 0 ? 52 : 26); l++)
                if (count[l] == 1) {
                    if (p->n_out >= PC_MAX_RANK) {
                        st = ref_fail(ctx, PC_ERR_ATTRIBUTE, "equation: output has more than %d axes",
                                      (int)PC_MAX_RANK);
                        goto done;
                    }
                    in_out[l] = true;
                    p->order[p->n_out++] = l;
                }
    }
    p->n_labels = p->n_out;
    for (int32_t l = 0; l < EIN_MAX_LABELS; l++)
        if (count[l] && !in_out[l]) p->order[p->n_labels++] = l;
    for (int32_t i = 0; i < p->n_labels; i++)
        p->size[i] = lsize[p->order[i]];
done:
    free(buf);
    free(terms);
    if (st != PC_OK) {
        free(axis_labels);
        axis_labels = NULL;
    }
    *axis_labels_out = axis_labels;
    return st;
}

static bool einsum_dtype(pc_dtype t)
{
    return conv_float(t) || (ref_is_int(t) && t != PC_DTYPE_BOOL);
}

/* output[out labels] = sum over the other labels of the product of the operands, read at their labels' values
 * (a label repeated in one operand reads its diagonal). One odometer runs over all labels, output labels
 * outermost, so each output element's sum is a contiguous run; operand offsets move by per-label strides (the
 * sum of the strides of the operand's axes carrying that label, 0 for a broadcast axis). */
static pc_status op_Einsum(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st;
    if (n_in < 1) return ref_fail(ctx, PC_ERR_ARITY, "Einsum needs at least one input");
    for (uint32_t k = 0; k < n_in; k++) {
        if ((st = ref_require_tensor(ctx, in, n_in, k)) != PC_OK) return st;
        if ((st = ref_require_dtype(ctx, in[k], k, einsum_dtype, "numeric (not bool or bfloat16)")) != PC_OK)
            return st;
        if (in[k]->dtype != in[0]->dtype)
            return ref_fail(ctx, PC_ERR_TYPE, "input %u is %s but input 0 is %s: they must match", k,
                            pc_dtype_name(in[k]->dtype), pc_dtype_name(in[0]->dtype));
    }
    const char *eq = ref_attr_string(ctx, "equation", NULL);
    if (!eq) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute equation is required");
    ein_plan p;
    int32_t *axis_labels;
    if ((st = ein_plan_build(ctx, in, n_in, eq, &p, &axis_labels)) != PC_OK) return st;
    /* work = product of all label sizes (0 if any is 0) */
    uint64_t work = 1;
    bool empty = false;
    for (int32_t i = 0; i < p.n_labels; i++)
        empty |= p.size[i] == 0;
    for (int32_t i = 0; i < p.n_labels && !empty; i++) {
        if ((uint64_t)p.size[i] > WORK_BUDGET || work * (uint64_t)p.size[i] > WORK_BUDGET) {
            free(axis_labels);
            return ref_fail(ctx, PC_ERR_BUDGET, "Einsum index space exceeds 2^40 iterations");
        }
        work *= (uint64_t)p.size[i];
    }
    if ((st = check_budget(ctx, p.n_out, p.size, "output")) != PC_OK) {
        free(axis_labels);
        return st;
    }
    pc_data *y = ref_new_tensor(ctx, in[0]->dtype, p.n_out, p.size);
    int64_t *lstride = calloc((size_t)n_in * (size_t)p.n_labels + 1, sizeof *lstride);
    uint64_t *offs = calloc(n_in, sizeof *offs);
    if (!y || !lstride || !offs) {
        if (y)
            st = ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        else
            st = ctx->err->status;
        pc_data_unref(y);
        free(axis_labels);
        free(lstride);
        free(offs);
        return st;
    }
    int32_t pos_of[EIN_MAX_LABELS];
    for (int32_t i = 0; i < p.n_labels; i++)
        pos_of[p.order[i]] = i;
    int32_t off = 0;
    for (uint32_t k = 0; k < n_in; k++) {
        int64_t s[PC_MAX_RANK];
        ref_strides(in[k]->rank, in[k]->dims, s);
        for (int32_t d = 0; d < in[k]->rank; d++)
            if (in[k]->dims[d] != 1)
                lstride[(size_t)k * (size_t)p.n_labels + (size_t)pos_of[axis_labels[off + d]]] += s[d];
        off += in[k]->rank;
    }
    free(axis_labels);

    bool is_float = ref_is_float(in[0]->dtype);
    uint64_t n_y = y->n_elements, inner = n_y && !empty ? work / n_y : 0;
    int64_t cnt[EIN_MAX_LABELS] = {0};
    for (uint64_t o = 0; o < n_y && !empty; o++) {
        acc s = {0, 0};
        for (uint64_t r = 0; r < inner; r++) {
            double pf = 1.0;
            uint64_t pi = 1;
            for (uint32_t k = 0; k < n_in; k++) {
                if (is_float)
                    pf *= ref_get_f64(in[k], offs[k]);
                else
                    pi *= (uint64_t)ref_get_i64(in[k], offs[k]);
            }
            if (is_float)
                s.f += pf;
            else
                s.i += pi;
            for (int32_t l = p.n_labels - 1; l >= 0; l--) {
                bool carry = ++cnt[l] >= p.size[l];
                for (uint32_t k = 0; k < n_in; k++) {
                    int64_t st_k = lstride[(size_t)k * (size_t)p.n_labels + (size_t)l];
                    offs[k] += (uint64_t)(carry ? -st_k * (p.size[l] - 1) : st_k);
                }
                if (!carry) break;
                cnt[l] = 0;
            }
        }
        acc_store(y, o, is_float, &s);
    }
    free(lstride);
    free(offs);
    out[0] = y;
    return PC_OK;
}

const ref_op ref_ops_conv[] = {
    {"", "Conv", op_Conv},     {"", "ConvTranspose", op_ConvTranspose},
    {"", "Einsum", op_Einsum}, {"", "Gemm", op_Gemm},
    {"", "MatMul", op_MatMul},
};

const size_t ref_ops_conv_count = sizeof ref_ops_conv / sizeof ref_ops_conv[0];
