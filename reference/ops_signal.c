/* Reference ops, signal family: DFT, STFT, the Hann/Hamming/Blackman windows and MelWeightMatrix.
 * Transforms are the naive O(n^2) sums, accumulated in double with twiddles from exact (j * k mod n) angles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

#define KERNEL(Name)                                                                                         \
    static pc_status op_##Name(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)

/* Outputs sized by input values stay below 2^31 elements; naive transforms below 2^34 multiply-adds. */
#define WORK_LIMIT ((uint64_t)1 << 34)

static const double TWO_PI = 6.283185307179586476925286766559;

static bool dt_float(pc_dtype t)
{
    return ref_is_float(t);
}
static bool dt_int(pc_dtype t)
{
    return ref_is_int(t);
}

/* A one-element tensor input read as an integer (present = false when the optional input is omitted). */
static pc_status scalar_int(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, uint32_t j, const char *name,
                            bool required, bool *present, int64_t *v)
{
    *present = false;
    if (j >= n_in || !in[j]) {
        if (required) return ref_fail(ctx, PC_ERR_ARITY, "input %u (%s) is required", j, name);
        return PC_OK;
    }
    pc_status st = ref_require_tensor(ctx, in, n_in, j);
    if (st != PC_OK || (st = ref_require_dtype(ctx, in[j], j, dt_int, "integer")) != PC_OK) return st;
    if (in[j]->n_elements != 1)
        return ref_fail(ctx, PC_ERR_SHAPE, "input %u (%s) must be a scalar, it has %llu elements", j, name,
                        (unsigned long long)in[j]->n_elements);
    *present = true;
    *v = ref_get_i64(in[j], 0);
    return PC_OK;
}

/* cos/sin of -2 pi m / n for m in [0, n) (sign flipped for the inverse transform); n <= 2^31. */
static double *twiddles(ref_ctx *ctx, int64_t n, bool inverse)
{
    double *t = malloc((size_t)(n ? n : 1) * 2 * sizeof *t);
    if (!t) {
        ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int64_t m = 0; m < n; m++) {
        double a = TWO_PI * (double)m / (double)n;
        t[2 * m] = cos(a);
        t[2 * m + 1] = inverse ? sin(a) : -sin(a);
    }
    return t;
}

/* ---- DFT
 * ----------------------------------------------------------------------------------------------------- */

/* Input [batch, n1, ..., nk, 1 or 2] (real or complex); the transform runs along `axis`, over dft_length
 * points (the signal truncated or zero-padded). Opset 20 moved axis from an attribute (default 1) to input 2
 * (default -2). */
KERNEL(DFT)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, dt_float, "floating-point")) != PC_OK) return st;
    if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2)) {
        char b[96];
        return ref_fail(ctx, PC_ERR_SHAPE, "input must be [batch, ..., 1 or 2], got %s",
                        pc_data_describe(x, b, sizeof b));
    }
    bool has_len, has_axis;
    int64_t len = 0, axis64 = 1;
    if ((st = scalar_int(ctx, in, n_in, 1, "dft_length", false, &has_len, &len)) != PC_OK) return st;
    if (ctx->opset >= 20) {
        if ((st = scalar_int(ctx, in, n_in, 2, "axis", false, &has_axis, &axis64)) != PC_OK) return st;
        if (!has_axis) axis64 = -2;
    } else {
        axis64 = ref_attr_int(ctx, "axis", 1);
    }
    /* negative axes count from the back over all dims; the last (real/imaginary) one is not a signal axis */
    int32_t axis;
    if ((st = ref_axis(ctx, axis64, x->rank, false, &axis)) != PC_OK) return st;
    if (axis == x->rank - 1)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "axis %lld is the real/imaginary dimension",
                        (long long)axis64);
    int64_t inverse = ref_attr_int(ctx, "inverse", 0), onesided = ref_attr_int(ctx, "onesided", 0);
    bool cplx = x->dims[x->rank - 1] == 2;
    if (onesided && cplx) return ref_unsupported(ctx, "onesided DFT of a complex input");
    if (onesided && inverse) return ref_unsupported(ctx, "onesided inverse DFT");
    int64_t n_axis = x->dims[axis];
    if (has_len && len <= 0)
        return ref_fail(ctx, PC_ERR_VALUE, "dft_length must be positive, got %lld", (long long)len);
    if (!has_len) len = n_axis;
    if (len == 0) return ref_fail(ctx, PC_ERR_SHAPE, "the signal has no points along axis %d", (int)axis);
    if ((uint64_t)len > REF_MAX_ELEMENTS)
        return ref_fail(ctx, PC_ERR_BUDGET, "dft_length %lld is too large", (long long)len);
    int64_t out_len = onesided ? len / 2 + 1 : len;
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    dims[axis] = out_len;
    dims[x->rank - 1] = 2;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, dims);
    if (!y) return ctx->err->status;
    uint64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++)
        outer *= (uint64_t)x->dims[d];
    for (int32_t d = axis + 1; d < x->rank - 1; d++)
        inner *= (uint64_t)x->dims[d];
    uint64_t used = (uint64_t)(n_axis < len ? n_axis : len); /* input points that reach the transform */
    if (used && y->n_elements / 2 > WORK_LIMIT / used) {
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_BUDGET, "naive DFT of %lld points over %llu lines is too much work",
                        (long long)len, (unsigned long long)(outer * inner));
    }
    double *tw = twiddles(ctx, len, inverse != 0);
    if (!tw) {
        pc_data_unref(y);
        return ctx->err->status;
    }
    uint64_t comp = cplx ? 2 : 1;
    double scale = inverse ? 1.0 / (double)len : 1.0;
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++)
            for (int64_t k = 0; k < out_len; k++) {
                double re = 0, im = 0;
                for (uint64_t j = 0; j < used; j++) {
                    uint64_t xi = ((o * (uint64_t)n_axis + j) * inner + i) * comp;
                    double xr = ref_get_f64(x, xi), xim = cplx ? ref_get_f64(x, xi + 1) : 0;
                    uint64_t m = (j * (uint64_t)k) % (uint64_t)len; /* j, k < 2^31 */
                    double c = tw[2 * m], s = tw[2 * m + 1];
                    re += xr * c - xim * s;
                    im += xr * s + xim * c;
                }
                uint64_t yi = ((o * (uint64_t)out_len + (uint64_t)k) * inner + i) * 2;
                ref_set_f64(y, yi, re * scale);
                ref_set_f64(y, yi + 1, im * scale);
            }
    free(tw);
    out[0] = y;
    return PC_OK;
}

/* ---- STFT
 * ---------------------------------------------------------------------------------------------------- */

/* signal [batch, length, 1 or 2]; frames of frame_length samples every frame_step, each multiplied by the
 * window (when given) and transformed; output [batch, frames, bins, 2] with bins = frame_length/2 + 1 when
 * onesided. */
KERNEL(STFT)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, dt_float, "floating-point")) != PC_OK) return st;
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2)) {
        char b[96];
        return ref_fail(ctx, PC_ERR_SHAPE, "signal must be [batch, length, 1 or 2], got %s",
                        pc_data_describe(x, b, sizeof b));
    }
    bool has_step, has_fl;
    int64_t step = 0, fl = 0;
    if ((st = scalar_int(ctx, in, n_in, 1, "frame_step", true, &has_step, &step)) != PC_OK ||
        (st = scalar_int(ctx, in, n_in, 3, "frame_length", false, &has_fl, &fl)) != PC_OK)
        return st;
    const pc_data *win = n_in > 2 ? in[2] : NULL;
    if (win) {
        if ((st = ref_require_tensor(ctx, in, n_in, 2)) != PC_OK ||
            (st = ref_require_dtype(ctx, win, 2, dt_float, "floating-point")) != PC_OK)
            return st;
        if (win->rank != 1)
            return ref_fail(ctx, PC_ERR_SHAPE, "window must be 1-D, got rank %d", (int)win->rank);
        if (has_fl && fl != win->dims[0])
            return ref_fail(ctx, PC_ERR_SHAPE, "window has %lld points but frame_length is %lld",
                            (long long)win->dims[0], (long long)fl);
        fl = win->dims[0];
    } else if (!has_fl) {
        return ref_fail(ctx, PC_ERR_ARITY, "one of window (input 2) and frame_length (input 3) is required");
    }
    int64_t len = x->dims[1];
    if (step <= 0)
        return ref_fail(ctx, PC_ERR_VALUE, "frame_step must be positive, got %lld", (long long)step);
    if (fl <= 0 || fl > len)
        return ref_fail(ctx, PC_ERR_VALUE, "frame length %lld must be in [1, signal length %lld]",
                        (long long)fl, (long long)len);
    int64_t onesided = ref_attr_int(ctx, "onesided", 1);
    bool cplx = x->dims[2] == 2;
    if (onesided && cplx) return ref_unsupported(ctx, "onesided STFT of a complex signal");
    int64_t frames = (len - fl) / step + 1, bins = onesided ? fl / 2 + 1 : fl;
    int64_t dims[4] = {x->dims[0], frames, bins, 2};
    pc_data *y = ref_new_tensor(ctx, x->dtype, 4, dims);
    if (!y) return ctx->err->status;
    if (y->n_elements / 2 > WORK_LIMIT / (uint64_t)fl) {
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_BUDGET, "naive STFT of %lld frames of %lld points is too much work",
                        (long long)frames, (long long)fl);
    }
    double *tw = twiddles(ctx, fl, false);
    if (!tw) {
        pc_data_unref(y);
        return ctx->err->status;
    }
    uint64_t comp = cplx ? 2 : 1, k_out = 0;
    for (int64_t b = 0; b < x->dims[0]; b++)
        for (int64_t f = 0; f < frames; f++)
            for (int64_t k = 0; k < bins; k++, k_out++) {
                double re = 0, im = 0;
                for (int64_t j = 0; j < fl; j++) {
                    uint64_t xi = ((uint64_t)b * (uint64_t)len + (uint64_t)(f * step + j)) * comp;
                    double w = win ? ref_get_f64(win, (uint64_t)j) : 1.0;
                    double xr = w * ref_get_f64(x, xi), xim = cplx ? w * ref_get_f64(x, xi + 1) : 0;
                    uint64_t m = ((uint64_t)j * (uint64_t)k) % (uint64_t)fl;
                    re += xr * tw[2 * m] - xim * tw[2 * m + 1];
                    im += xr * tw[2 * m + 1] + xim * tw[2 * m];
                }
                ref_set_f64(y, 2 * k_out, re);
                ref_set_f64(y, 2 * k_out + 1, im);
            }
    free(tw);
    out[0] = y;
    return PC_OK;
}

/* ---- windows
 * ------------------------------------------------------------------------------------------------- */

static pc_status out_datatype(ref_ctx *ctx, pc_dtype *t)
{
    int64_t v = ref_attr_int(ctx, "output_datatype", PC_DTYPE_FLOAT);
    if (!pc_dtype_is_valid((int32_t)v) || v != (int32_t)v ||
        !(ref_is_float((pc_dtype)v) || ref_is_int((pc_dtype)v)))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute output_datatype must be a numeric element type, got %lld", (long long)v);
    *t = (pc_dtype)v;
    return PC_OK;
}

/* Generalized cosine window: w[n] = sum_k (-1)^k a[k] cos(2 pi k n / N), N = size (periodic) or size - 1. */
static pc_status run_window(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, const double *a,
                            int na)
{
    bool present;
    int64_t size = 0;
    pc_status st = scalar_int(ctx, in, n_in, 0, "size", true, &present, &size);
    if (st != PC_OK) return st;
    pc_dtype t = PC_DTYPE_FLOAT;
    if ((st = out_datatype(ctx, &t)) != PC_OK) return st;
    if (size < 0) return ref_fail(ctx, PC_ERR_VALUE, "size must not be negative, got %lld", (long long)size);
    bool periodic = ref_attr_int(ctx, "periodic", 1) != 0;
    if (!periodic && size == 1)
        return ref_unsupported(ctx, "symmetric window of size 1 (the formula divides by 0)");
    pc_data *y = ref_new_tensor(ctx, t, 1, &size);
    if (!y) return ctx->err->status;
    double n_div = periodic ? (double)size : (double)(size - 1);
    for (int64_t n = 0; n < size; n++) {
        double v = 0;
        for (int k = 0; k < na; k++)
            v += (k % 2 ? -a[k] : a[k]) * cos(TWO_PI * k * (double)n / n_div);
        ref_set_f64(y, (uint64_t)n, v);
    }
    out[0] = y;
    return PC_OK;
}

KERNEL(HannWindow)
{
    (void)n_out;
    static const double a[2] = {0.5, 0.5};
    return run_window(ctx, in, n_in, out, a, 2);
}

KERNEL(HammingWindow)
{
    (void)n_out;
    static const double a[2] = {25.0 / 46.0, 21.0 / 46.0};
    return run_window(ctx, in, n_in, out, a, 2);
}

KERNEL(BlackmanWindow)
{
    (void)n_out;
    static const double a[3] = {0.42, 0.5, 0.08};
    return run_window(ctx, in, n_in, out, a, 3);
}

/* ---- MelWeightMatrix
 * ----------------------------------------------------------------------------------------- */

static double hz_to_mel(double hz)
{
    return 2595.0 * log10(1.0 + hz / 700.0);
}
static double mel_to_hz(double mel)
{
    return 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
}

/* The spec's construction: num_mel_bins + 2 points evenly spaced on the mel scale (the step divides the range
 * by num_mel_bins + 2, as the spec's reference does), mapped to spectrogram bins floor((dft_length + 1) * hz
 * / rate), and a triangle between each three consecutive points. */
KERNEL(MelWeightMatrix)
{
    (void)n_out;
    bool present;
    int64_t n_mel = 0, dft_len = 0, rate = 0;
    pc_status st;
    if ((st = scalar_int(ctx, in, n_in, 0, "num_mel_bins", true, &present, &n_mel)) != PC_OK ||
        (st = scalar_int(ctx, in, n_in, 1, "dft_length", true, &present, &dft_len)) != PC_OK ||
        (st = scalar_int(ctx, in, n_in, 2, "sample_rate", true, &present, &rate)) != PC_OK)
        return st;
    double edge[2];
    for (uint32_t j = 3; j <= 4; j++) {
        if ((st = ref_require_tensor(ctx, in, n_in, j)) != PC_OK ||
            (st = ref_require_dtype(ctx, in[j], j, dt_float, "floating-point")) != PC_OK)
            return st;
        if (in[j]->n_elements != 1)
            return ref_fail(ctx, PC_ERR_SHAPE, "input %u must be a scalar, it has %llu elements", j,
                            (unsigned long long)in[j]->n_elements);
        edge[j - 3] = ref_get_f64(in[j], 0);
    }
    pc_dtype t = PC_DTYPE_FLOAT;
    if ((st = out_datatype(ctx, &t)) != PC_OK) return st;
    if (n_mel <= 0 || dft_len <= 0 || rate <= 0)
        return ref_fail(ctx, PC_ERR_VALUE,
                        "num_mel_bins (%lld), dft_length (%lld) and sample_rate (%lld) must be positive",
                        (long long)n_mel, (long long)dft_len, (long long)rate);
    if (!(edge[0] >= 0 && edge[0] < edge[1] && isfinite(edge[1])))
        return ref_fail(ctx, PC_ERR_VALUE, "need 0 <= lower_edge_hertz (%g) < upper_edge_hertz (%g)", edge[0],
                        edge[1]);
    int64_t n_spec = dft_len / 2 + 1;
    int64_t dims[2] = {n_spec, n_mel};
    pc_data *y = ref_new_tensor(ctx, t, 2, dims);
    if (!y) return ctx->err->status;
    int64_t *bins = malloc((size_t)(n_mel + 2) * sizeof *bins); /* n_mel < 2^31 after new_out */
    if (!bins) {
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    }
    double lo = hz_to_mel(edge[0]), hi = hz_to_mel(edge[1]), step = (hi - lo) / (double)(n_mel + 2);
    for (int64_t i = 0; i < n_mel + 2; i++) {
        double hz = mel_to_hz((double)i * step + lo);
        double b = floor((double)(dft_len + 1) * hz / (double)rate);
        if (!(b >= 0 && b < (double)n_spec)) {
            free(bins);
            pc_data_unref(y);
            return ref_fail(ctx, PC_ERR_VALUE,
                            "upper_edge_hertz %g maps past the last of %lld spectrogram bins "
                            "(sample_rate %lld)",
                            edge[1], (long long)n_spec, (long long)rate);
        }
        bins[i] = (int64_t)b;
    }
    for (int64_t i = 0; i < n_mel; i++) {
        int64_t l = bins[i], c = bins[i + 1], h = bins[i + 2];
        if (c == l) {
            ref_set_f64(y, (uint64_t)(c * n_mel + i), 1.0);
        } else {
            for (int64_t j = l; j <= c; j++)
                ref_set_f64(y, (uint64_t)(j * n_mel + i), (double)(j - l) / (double)(c - l));
        }
        for (int64_t j = c; j < h; j++)
            ref_set_f64(y, (uint64_t)(j * n_mel + i), (double)(h - j) / (double)(h - c));
    }
    free(bins);
    out[0] = y;
    return PC_OK;
}

const ref_op ref_ops_signal[] = {
    {"", "BlackmanWindow", op_BlackmanWindow},   {"", "DFT", op_DFT},
    {"", "HammingWindow", op_HammingWindow},     {"", "HannWindow", op_HannWindow},
    {"", "MelWeightMatrix", op_MelWeightMatrix}, {"", "STFT", op_STFT},
};
const size_t ref_ops_signal_count = sizeof ref_ops_signal / sizeof ref_ops_signal[0];
