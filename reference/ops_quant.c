/* Reference ops: quantization — QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear — and the integer
 * products ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul.
 *
 * The integer products are compositions, so no convolution or matrix loop is written twice: each operand
 * minus its zero point becomes a double tensor (exact: small integers), this executor's own Conv or MatMul
 * runs on those (sums of products of 8-bit values are exact in double up to 2^37 terms), and the exact
 * integer result is wrapped to int32 (ConvInteger, MatMulInteger) or requantized (QLinear*). Requantization
 * follows the runtimes' float arithmetic: multiplier = float(x_scale * w_scale) / y_scale in float, y =
 * saturate(rint(float(acc) * multiplier)
 * + y_zero_point), ties to even. Quantize/Dequantize likewise compute x / scale and (x - zp) * scale in
 * float. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

/* ---- quantization parameters
 * ------------------------------------------------------------------------------------ */

/* Where a scale or zero point is read for each element of the tensor it applies to: at index
 * sum_d (coord[d] / block[d]) * stride[d]. Per-tensor: all strides 0. Per-axis: stride 1 on the axis.
 * Broadcast (MatMul's N-D zero points): the parameter's strides, 0 where it has size 1. Blocked (opset 21
 * block_size): the parameter's strides with block[axis] = block_size. t == NULL: absent (reads as 0). */
typedef struct qparam {
    const pc_data *t;
    int32_t rank;
    int64_t stride[PC_MAX_RANK];
    int64_t block[PC_MAX_RANK];
} qparam;

static void qparam_tensor(qparam *p, const pc_data *t, int32_t rank)
{
    p->t = t;
    p->rank = rank;
    for (int32_t d = 0; d < rank; d++) {
        p->stride[d] = 0;
        p->block[d] = 1;
    }
}

static uint64_t qparam_index(const qparam *p, const int64_t *coord)
{
    int64_t i = 0;
    for (int32_t d = 0; d < p->rank; d++)
        i += coord[d] / p->block[d] * p->stride[d];
    return (uint64_t)i;
}

/* Unidirectional broadcast of t to x's shape (right-aligned, size 1 repeats). */
static pc_status qparam_broadcast(ref_ctx *ctx, qparam *p, const pc_data *t, const pc_data *x,
                                  const char *what)
{
    qparam_tensor(p, t, x->rank);
    if (t->rank > x->rank)
        return ref_fail(ctx, PC_ERR_SHAPE, "%s has rank %d, more than its operand's %d", what, (int)t->rank,
                        (int)x->rank);
    int64_t s[PC_MAX_RANK];
    ref_strides(t->rank, t->dims, s);
    int32_t off = x->rank - t->rank;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] != 1 && t->dims[d] != x->dims[off + d])
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "%s cannot be broadcast to its operand: dimension %d is %lld, not %lld", what,
                            (int)d, (long long)t->dims[d], (long long)x->dims[off + d]);
        p->stride[off + d] = t->dims[d] == 1 ? 0 : s[d];
    }
    return PC_OK;
}

/* A parameter tensor (scale or zero point) must have 1 element (per tensor) unless the op allows more. */
static bool one_element(const pc_data *t)
{
    return t->n_elements == 1;
}

static bool q8(pc_dtype t)
{
    return t == PC_DTYPE_UINT8 || t == PC_DTYPE_INT8;
}

/* Saturation range of a quantized type; false for types this executor does not quantize to. */
static bool q_range(pc_dtype t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case PC_DTYPE_UINT8:
        *lo = 0;
        *hi = 255;
        return true;
    case PC_DTYPE_INT8:
        *lo = -128;
        *hi = 127;
        return true;
    case PC_DTYPE_UINT16:
        *lo = 0;
        *hi = 65535;
        return true;
    case PC_DTYPE_INT16:
        *lo = -32768;
        *hi = 32767;
        return true;
    default:
        *lo = *hi = 0;
        return false;
    }
}

static bool is_float8(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT8E4M3FN || t == PC_DTYPE_FLOAT8E4M3FNUZ || t == PC_DTYPE_FLOAT8E5M2 ||
           t == PC_DTYPE_FLOAT8E5M2FNUZ;
}

/* Quantized types by opset: 8-bit integers from 10, float8 from 19 (not implemented here), 16-bit integers
 * and 4-bit (not implemented) from 21. */
static pc_status check_qtype(ref_ctx *ctx, pc_dtype t, const char *what)
{
    if (q8(t) || (ctx->opset >= 21 && (t == PC_DTYPE_INT16 || t == PC_DTYPE_UINT16))) return PC_OK;
    if ((ctx->opset >= 19 && is_float8(t)) ||
        (ctx->opset >= 21 && (t == PC_DTYPE_INT4 || t == PC_DTYPE_UINT4)))
        return ref_unsupported(ctx, "%s of type %s", what, pc_dtype_name(t));
    return ref_fail(ctx, PC_ERR_TYPE, "%s has type %s, not allowed at opset %lld", what, pc_dtype_name(t),
                    (long long)ctx->opset);
}

/* Scales: float before opset 19, float/float16/bfloat16 after. */
static pc_status check_scale_type(ref_ctx *ctx, const pc_data *s, const char *what)
{
    if (s->dtype == PC_DTYPE_FLOAT ||
        (ctx->opset >= 19 && (s->dtype == PC_DTYPE_FLOAT16 || s->dtype == PC_DTYPE_BFLOAT16)))
        return PC_OK;
    return ref_fail(ctx, PC_ERR_TYPE, "%s has type %s, not allowed at opset %lld", what,
                    pc_dtype_name(s->dtype), (long long)ctx->opset);
}

/* Rounds to nearest, ties to even (the default rounding mode), adds the zero point and saturates. v must not
 * be NaN (callers refuse it: its quantized value is undefined). */
static int64_t requantize(float v, int64_t zp, int64_t lo, int64_t hi)
{
    double r = (double)nearbyintf(v) + (double)zp;
    return r < (double)lo ? lo : r > (double)hi ? hi : (int64_t)r;
}

/* Scale and zero point of QuantizeLinear/DequantizeLinear for x: per tensor (one element), per axis (1-D,
 * along `axis`, from opset 13) or blocked (opset 21 block_size > 0: same rank as x, axis dimension ceil(n /
 * block)). The zero point must have the scale's shape. */
static pc_status qd_params(ref_ctx *ctx, const pc_data *x, const pc_data *scale, const pc_data *zp,
                           qparam *ps, qparam *pz)
{
    int64_t block = ctx->opset >= 21 ? ref_attr_int(ctx, "block_size", 0) : 0;
    if (block < 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "block_size = %lld, must be >= 0", (long long)block);
    if (zp) {
        bool same =
            zp->rank == scale->rank &&
            (scale->rank == 0 || memcmp(zp->dims, scale->dims, (size_t)scale->rank * sizeof(int64_t)) == 0);
        if (!same && !(one_element(zp) && one_element(scale)))
            return ref_fail(ctx, PC_ERR_SHAPE, "the zero point's shape must match the scale's");
    }
    qparam_tensor(ps, scale, x->rank);
    if (block == 0 && one_element(scale) && scale->rank <= 1) {
        qparam_tensor(pz, zp, x->rank);
        return PC_OK;
    }
    if (ctx->opset < 13)
        return ref_fail(ctx, PC_ERR_SHAPE, "the scale must be a scalar before opset 13 (got %llu elements)",
                        (unsigned long long)scale->n_elements);
    int32_t axis;
    pc_status st = ref_axis(ctx, ref_attr_int(ctx, "axis", 1), x->rank, false, &axis);
    if (st != PC_OK) return st;
    if (block == 0) {
        if (scale->rank != 1 || scale->dims[0] != x->dims[axis])
            return ref_fail(ctx, PC_ERR_SHAPE, "a per-axis scale must be 1-D with %lld elements (axis %d)",
                            (long long)x->dims[axis], (int)axis);
        ps->stride[axis] = 1;
    } else {
        if (scale->rank != x->rank)
            return ref_fail(ctx, PC_ERR_SHAPE, "a blocked scale must have the input's rank %d", (int)x->rank);
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t want = d == axis ? x->dims[d] / block + (x->dims[d] % block != 0) : x->dims[d];
            if (scale->dims[d] != want)
                return ref_fail(ctx, PC_ERR_SHAPE, "blocked scale dimension %d is %lld, expected %lld",
                                (int)d, (long long)scale->dims[d], (long long)want);
        }
        ref_strides(scale->rank, scale->dims, ps->stride);
        ps->block[axis] = block;
    }
    *pz = *ps;
    pz->t = zp;
    return PC_OK;
}

/* Advances a row-major coordinate over dims[0..n). */
static void coord_next(int32_t n, const int64_t *dims, int64_t *c)
{
    for (int32_t d = n - 1; d >= 0; d--) {
        if (++c[d] < dims[d]) return;
        c[d] = 0;
    }
}

static pc_status require_inputs(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, uint32_t first,
                                uint32_t count)
{
    pc_status st = PC_OK;
    for (uint32_t i = first; i < first + count && st == PC_OK; i++)
        st = ref_require_tensor(ctx, in, n_in, i);
    return st;
}

/* ---- QuantizeLinear / DequantizeLinear
 * -------------------------------------------------------------------------- */

/* y = saturate(rint(x / y_scale) + y_zero_point); the output type is the zero point's (uint8 when absent;
 * from opset 21 the output_dtype attribute may name it). */
static pc_status op_QuantizeLinear(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                   uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_inputs(ctx, in, n_in, 0, 2);
    if (st != PC_OK) return st;
    const pc_data *x = in[0], *scale = in[1], *zp = n_in > 2 ? in[2] : NULL;
    if (zp && zp->kind != PC_TYPE_TENSOR) return ref_fail(ctx, PC_ERR_TYPE, "y_zero_point must be a tensor");
    bool x_ok = x->dtype == PC_DTYPE_FLOAT || x->dtype == PC_DTYPE_INT32 ||
                (ctx->opset >= 19 && (x->dtype == PC_DTYPE_FLOAT16 || x->dtype == PC_DTYPE_BFLOAT16));
    if (!x_ok)
        return ref_fail(ctx, PC_ERR_TYPE, "x has type %s, not allowed at opset %lld", pc_dtype_name(x->dtype),
                        (long long)ctx->opset);
    if ((st = check_scale_type(ctx, scale, "y_scale")) != PC_OK) return st;
    pc_dtype yt = PC_DTYPE_UINT8;
    if (zp)
        yt = zp->dtype;
    else if (ctx->opset >= 21 && ref_attr_int(ctx, "output_dtype", 0) != 0)
        yt = (pc_dtype)ref_attr_int(ctx, "output_dtype", 0);
    if (zp && ctx->opset >= 21 && ref_attr_int(ctx, "output_dtype", 0) != 0 &&
        ref_attr_int(ctx, "output_dtype", 0) != (int64_t)zp->dtype)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "output_dtype disagrees with y_zero_point's type %s",
                        pc_dtype_name(zp->dtype));
    if ((st = check_qtype(ctx, yt, zp ? "y_zero_point" : "the output type")) != PC_OK) return st;
    int64_t lo, hi;
    q_range(yt, &lo, &hi);
    qparam ps, pz;
    if ((st = qd_params(ctx, x, scale, zp, &ps, &pz)) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, yt, x->rank, x->dims);
    if (!y) return ctx->err->status;
    int64_t c[PC_MAX_RANK] = {0};
    for (uint64_t i = 0; i < x->n_elements; i++, coord_next(x->rank, x->dims, c)) {
        uint64_t pi = qparam_index(&ps, c);
        float v = (float)ref_get_f64(x, i) / (float)ref_get_f64(scale, pi);
        if (isnan(v)) {
            pc_data_unref(y);
            /* the spec leaves NaN's quantized value undefined */
            return ref_unsupported(ctx, "quantizing NaN (x[%llu] / scale)", (unsigned long long)i);
        }
        ref_set_i64(y, i, requantize(v, zp ? ref_get_i64(zp, pi) : 0, lo, hi));
    }
    out[0] = y;
    return PC_OK;
}

/* y = (x - x_zero_point) * x_scale, in float; the output type is float before opset 19, the scale's after. */
static pc_status op_DequantizeLinear(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                     uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_inputs(ctx, in, n_in, 0, 2);
    if (st != PC_OK) return st;
    const pc_data *x = in[0], *scale = in[1], *zp = n_in > 2 ? in[2] : NULL;
    if (zp && (zp->kind != PC_TYPE_TENSOR || zp->dtype != x->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "x_zero_point must be a tensor of x's type %s",
                        pc_dtype_name(x->dtype));
    if (x->dtype != PC_DTYPE_INT32 && (st = check_qtype(ctx, x->dtype, "x")) != PC_OK) return st;
    if ((st = check_scale_type(ctx, scale, "x_scale")) != PC_OK) return st;
    qparam ps, pz;
    if ((st = qd_params(ctx, x, scale, zp, &ps, &pz)) != PC_OK) return st;
    if (zp && x->dtype == PC_DTYPE_INT32)
        for (uint64_t i = 0; i < zp->n_elements; i++)
            if (ref_get_i64(zp, i) != 0)
                return ref_fail(ctx, PC_ERR_VALUE,
                                "an int32 input has no zero point, but x_zero_point[%llu] = %lld",
                                (unsigned long long)i, (long long)ref_get_i64(zp, i));
    pc_data *y = ref_new_tensor(ctx, ctx->opset >= 19 ? scale->dtype : PC_DTYPE_FLOAT, x->rank, x->dims);
    if (!y) return ctx->err->status;
    int64_t c[PC_MAX_RANK] = {0};
    for (uint64_t i = 0; i < x->n_elements; i++, coord_next(x->rank, x->dims, c)) {
        uint64_t pi = qparam_index(&ps, c);
        int64_t q = ref_get_i64(x, i) - (zp ? ref_get_i64(zp, pi) : 0);
        ref_set_f64(y, i, (double)((float)q * (float)ref_get_f64(scale, pi)));
    }
    out[0] = y;
    return PC_OK;
}

/* uint8 quantization of x with a range that includes 0: scale = (max - min) / 255, zero point =
 * rint(saturate(0 - min / scale)), y = saturate(rint(x / scale) + zero point), all in float as the spec's
 * reference. When the range is empty (max == min == 0) the spec divides 0 by 0; this uses scale 1, as
 * onnxruntime does (y and the zero point are 0 either way). */
static pc_status op_DynamicQuantizeLinear(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                          uint32_t n_out)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if (x->dtype != PC_DTYPE_FLOAT)
        return ref_fail(ctx, PC_ERR_TYPE, "x has type %s, must be float", pc_dtype_name(x->dtype));
    float mn = 0.0f, mx = 0.0f;
    for (uint64_t i = 0; i < x->n_elements; i++) {
        float v = (float)ref_get_f64(x, i);
        if (!isfinite(v))
            return ref_unsupported(ctx, "a non-finite input (x[%llu]): the spec leaves it undefined",
                                   (unsigned long long)i);
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    float izp = 0.0f - mn / scale;
    int64_t zp = requantize(izp < 0.0f ? 0.0f : izp > 255.0f ? 255.0f : izp, 0, 0, 255);
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_UINT8, x->rank, x->dims);
    pc_data *ys = ref_new_scalar(ctx, PC_DTYPE_FLOAT);
    pc_data *yz = ref_new_scalar(ctx, PC_DTYPE_UINT8);
    if (!y || !ys || !yz) {
        pc_data_unref(y);
        pc_data_unref(ys);
        pc_data_unref(yz);
        return ctx->err->status;
    }
    for (uint64_t i = 0; i < x->n_elements; i++)
        ref_set_i64(y, i, requantize((float)ref_get_f64(x, i) / scale, zp, 0, 255));
    ref_set_f64(ys, 0, scale);
    ref_set_i64(yz, 0, zp);
    pc_data *res[3] = {y, ys, yz};
    for (uint32_t i = 0; i < 3; i++) {
        if (i < n_out)
            out[i] = res[i];
        else
            pc_data_unref(res[i]);
    }
    return PC_OK;
}

/* ---- integer products by composition
 * ---------------------------------------------------------------------------- */

/* x - zero point as an exact double tensor of x's shape. */
static pc_data *centered(ref_ctx *ctx, const pc_data *x, const qparam *zp)
{
    pc_data *d = ref_new_tensor(ctx, PC_DTYPE_DOUBLE, x->rank, x->dims);
    if (!d) return NULL;
    int64_t c[PC_MAX_RANK] = {0};
    for (uint64_t i = 0; i < x->n_elements; i++, coord_next(x->rank, x->dims, c))
        ref_set_f64(d, i,
                    (double)(ref_get_i64(x, i) - (zp->t ? ref_get_i64(zp->t, qparam_index(zp, c)) : 0)));
    return d;
}

/* Runs this executor's standard op `op` on the node's attributes with two double operands. */
static pc_status run_standard(ref_ctx *ctx, const char *op, pc_data *a, pc_data *b, pc_data **result)
{
    const ref_op *base = ref_op_find("", op);
    if (!base) return ref_unsupported(ctx, "the standard %s it is defined by", op);
    pc_data *args[2] = {a, b};
    *result = NULL;
    return base->run(ctx, args, 2, result, 1);
}

/* A value and its zero point: same 8-bit type. */
static pc_status check_q8_pair(ref_ctx *ctx, const pc_data *v, const pc_data *zp, const char *what)
{
    if (!q8(v->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "%s has type %s, must be uint8 or int8", what,
                        pc_dtype_name(v->dtype));
    if (zp && (zp->kind != PC_TYPE_TENSOR || zp->dtype != v->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "the zero point of %s must be a %s tensor", what,
                        pc_dtype_name(v->dtype));
    return PC_OK;
}

/* The integer convolution ConvInteger and QLinearConv share: Conv(x - x_zero_point, w - w_zero_point[m]) with
 * the node's attributes, as exact integers in a double tensor. x's zero point is per tensor, w's per tensor
 * or per output channel (1-D of M). */
static pc_status int_conv(ref_ctx *ctx, const pc_data *x, const pc_data *xzp, const pc_data *w,
                          const pc_data *wzp, pc_data **acc)
{
    pc_status st;
    if ((st = check_q8_pair(ctx, x, xzp, "x")) != PC_OK || (st = check_q8_pair(ctx, w, wzp, "w")) != PC_OK)
        return st;
    if (w->rank < 1) return ref_fail(ctx, PC_ERR_SHAPE, "w must have rank >= 3");
    qparam px, pw;
    if (xzp && !one_element(xzp))
        return ref_fail(ctx, PC_ERR_SHAPE, "x's zero point must be a scalar (got %llu elements)",
                        (unsigned long long)xzp->n_elements);
    qparam_tensor(&px, xzp, x->rank);
    qparam_tensor(&pw, wzp, w->rank);
    if (wzp && !one_element(wzp)) {
        if (wzp->rank != 1 || wzp->dims[0] != w->dims[0])
            return ref_fail(ctx, PC_ERR_SHAPE, "w's zero point must be a scalar or 1-D with %lld elements",
                            (long long)w->dims[0]);
        pw.stride[0] = 1;
    }
    pc_data *xd = centered(ctx, x, &px), *wd = xd ? centered(ctx, w, &pw) : NULL;
    st = wd ? run_standard(ctx, "Conv", xd, wd, acc) : ctx->err->status;
    pc_data_unref(xd);
    pc_data_unref(wd);
    return st;
}

/* Two's-complement wrap to 32 bits, as a 32-bit accumulator overflows. */
static int32_t wrap32(int64_t v)
{
    uint32_t u = (uint32_t)(uint64_t)v;
    int32_t s;
    memcpy(&s, &u, sizeof s);
    return s;
}

/* Exact integer result (in a double tensor) → int32, wrapping as 32-bit accumulation would. */
static pc_data *to_int32(ref_ctx *ctx, const pc_data *acc)
{
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_INT32, acc->rank, acc->dims);
    if (!y) return NULL;
    for (uint64_t i = 0; i < acc->n_elements; i++)
        ref_set_i64(y, i, (int64_t)ref_get_f64(acc, i));
    return y;
}

static pc_status op_ConvInteger(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_inputs(ctx, in, n_in, 0, 2);
    if (st != PC_OK) return st;
    pc_data *acc;
    if ((st = int_conv(ctx, in[0], n_in > 2 ? in[2] : NULL, in[1], n_in > 3 ? in[3] : NULL, &acc)) != PC_OK)
        return st;
    pc_data *y = to_int32(ctx, acc);
    pc_data_unref(acc);
    if (!y) return ctx->err->status;
    out[0] = y;
    return PC_OK;
}

/* y = saturate(rint(float(acc[n, m, ...] + B[m]) * (float(x_scale * w_scale[m]) / y_scale)) + y_zero_point).
 */
static pc_status op_QLinearConv(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_inputs(ctx, in, n_in, 0, 8);
    if (st != PC_OK) return st;
    const pc_data *x = in[0], *xs = in[1], *xzp = in[2], *w = in[3], *ws = in[4], *wzp = in[5], *ys = in[6],
                  *yzp = in[7], *b = n_in > 8 ? in[8] : NULL;
    if ((st = check_scale_type(ctx, xs, "x_scale")) != PC_OK ||
        (st = check_scale_type(ctx, ws, "w_scale")) != PC_OK ||
        (st = check_scale_type(ctx, ys, "y_scale")) != PC_OK)
        return st;
    if (!q8(yzp->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "y_zero_point has type %s, must be uint8 or int8",
                        pc_dtype_name(yzp->dtype));
    if (!one_element(xs) || !one_element(ys) || !one_element(yzp))
        return ref_fail(ctx, PC_ERR_SHAPE, "x_scale, y_scale and y_zero_point must be scalars");
    int64_t M = w->rank >= 1 ? w->dims[0] : 0;
    if (!one_element(ws) && (ws->rank != 1 || ws->dims[0] != M))
        return ref_fail(ctx, PC_ERR_SHAPE, "w_scale must be a scalar or 1-D with %lld elements",
                        (long long)M);
    if (b && (b->kind != PC_TYPE_TENSOR || b->dtype != PC_DTYPE_INT32 || b->rank != 1 || b->dims[0] != M))
        return ref_fail(ctx, PC_ERR_SHAPE, "bias B must be an int32 tensor of shape [%lld]", (long long)M);
    pc_data *acc;
    if ((st = int_conv(ctx, x, xzp, w, wzp, &acc)) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, yzp->dtype, acc->rank, acc->dims);
    if (!y) {
        pc_data_unref(acc);
        return ctx->err->status;
    }
    int64_t lo, hi, zp = ref_get_i64(yzp, 0);
    q_range(yzp->dtype, &lo, &hi);
    uint64_t per_map = acc->rank > 2 ? ref_shape_count(acc->rank - 2, acc->dims + 2) : 1;
    float fxs = (float)ref_get_f64(xs, 0), fys = (float)ref_get_f64(ys, 0);
    for (uint64_t i = 0; i < acc->n_elements; i++) {
        uint64_t m = (i / per_map) % (uint64_t)M;
        /* the sum wraps to int32 like the runtimes' accumulator, then converts to float */
        int64_t a = (int64_t)ref_get_f64(acc, i) + (b ? ref_get_i64(b, m) : 0);
        int32_t a32 = wrap32(a);
        float mult = (fxs * (float)ref_get_f64(ws, one_element(ws) ? 0 : m)) / fys, v = (float)a32 * mult;
        if (isnan(v)) {
            pc_data_unref(acc);
            pc_data_unref(y);
            return ref_unsupported(ctx, "a NaN requantized value (check the scales)");
        }
        ref_set_i64(y, i, requantize(v, zp, lo, hi));
    }
    pc_data_unref(acc);
    out[0] = y;
    return PC_OK;
}

/* A MatMul operand's parameter (zero point or scale): per tensor (one element), per row of A (1-D of M, as
 * the spec words it), otherwise broadcast to the operand (N-D [.., M, 1] for A, [N] or [.., 1, N] for B). */
static pc_status matmul_param(ref_ctx *ctx, qparam *p, const pc_data *t, const pc_data *v, bool is_a,
                              const char *what)
{
    qparam_tensor(p, t, v->rank);
    if (!t || one_element(t)) return PC_OK;
    if (is_a && t->rank == 1 && v->rank >= 2) {
        if (t->dims[0] != v->dims[v->rank - 2])
            return ref_fail(ctx, PC_ERR_SHAPE, "%s per row must have %lld elements, got %lld", what,
                            (long long)v->dims[v->rank - 2], (long long)t->dims[0]);
        p->stride[v->rank - 2] = 1;
        return PC_OK;
    }
    return qparam_broadcast(ctx, p, t, v, what);
}

/* (A - a_zero_point) x (B - b_zero_point) as exact integers (double tensor), by this executor's MatMul. */
static pc_status int_matmul(ref_ctx *ctx, const pc_data *a, const pc_data *azp, const pc_data *b,
                            const pc_data *bzp, pc_data **acc)
{
    pc_status st;
    if ((st = check_q8_pair(ctx, a, azp, "A")) != PC_OK || (st = check_q8_pair(ctx, b, bzp, "B")) != PC_OK)
        return st;
    if (a->rank < 1 || b->rank < 1) return ref_fail(ctx, PC_ERR_SHAPE, "A and B must have rank >= 1");
    qparam pa, pb;
    if ((st = matmul_param(ctx, &pa, azp, a, true, "a_zero_point")) != PC_OK ||
        (st = matmul_param(ctx, &pb, bzp, b, false, "b_zero_point")) != PC_OK)
        return st;
    pc_data *ad = centered(ctx, a, &pa), *bd = ad ? centered(ctx, b, &pb) : NULL;
    st = bd ? run_standard(ctx, "MatMul", ad, bd, acc) : ctx->err->status;
    pc_data_unref(ad);
    pc_data_unref(bd);
    return st;
}

static pc_status op_MatMulInteger(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                  uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_inputs(ctx, in, n_in, 0, 2);
    if (st != PC_OK) return st;
    pc_data *acc;
    if ((st = int_matmul(ctx, in[0], n_in > 2 ? in[2] : NULL, in[1], n_in > 3 ? in[3] : NULL, &acc)) != PC_OK)
        return st;
    pc_data *y = to_int32(ctx, acc);
    pc_data_unref(acc);
    if (!y) return ctx->err->status;
    out[0] = y;
    return PC_OK;
}

/* A's scale as a tensor of A's shape with K replaced by 1 (B's: K replaced by 1), so that MatMul of the two
 * gives a_scale[row] * b_scale[col] in the output's shape and broadcasting — exact in double (24-bit
 * significands). The scale must not vary along K, or the product would not factor out of the sum. */
static pc_status scale_operand(ref_ctx *ctx, const pc_data *s, const pc_data *v, bool is_a, const char *what,
                               pc_data **res)
{
    qparam p;
    pc_status st = matmul_param(ctx, &p, s, v, is_a, what);
    if (st != PC_OK) return st;
    int32_t kaxis = is_a || v->rank == 1 ? v->rank - 1 : v->rank - 2;
    if (p.stride[kaxis] != 0) return ref_unsupported(ctx, "%s varying along the reduced dimension K", what);
    int64_t dims[PC_MAX_RANK];
    memcpy(dims, v->dims, (size_t)v->rank * sizeof *dims);
    dims[kaxis] = 1;
    pc_data *d = ref_new_tensor(ctx, PC_DTYPE_DOUBLE, v->rank, dims);
    if (!d) return ctx->err->status;
    int64_t c[PC_MAX_RANK] = {0};
    for (uint64_t i = 0; i < d->n_elements; i++, coord_next(v->rank, dims, c))
        ref_set_f64(d, i, (double)(float)ref_get_f64(s, qparam_index(&p, c)));
    *res = d;
    return PC_OK;
}

/* y = saturate(rint(float(acc) * (float(a_scale * b_scale) / y_scale)) + y_zero_point). */
static pc_status op_QLinearMatMul(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                  uint32_t n_out)
{
    (void)n_out;
    pc_status st = require_inputs(ctx, in, n_in, 0, 8);
    if (st != PC_OK) return st;
    const pc_data *a = in[0], *as = in[1], *azp = in[2], *b = in[3], *bs = in[4], *bzp = in[5], *ys = in[6],
                  *yzp = in[7];
    if ((st = check_scale_type(ctx, as, "a_scale")) != PC_OK ||
        (st = check_scale_type(ctx, bs, "b_scale")) != PC_OK ||
        (st = check_scale_type(ctx, ys, "y_scale")) != PC_OK)
        return st;
    if (!q8(yzp->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "y_zero_point has type %s, must be uint8 or int8",
                        pc_dtype_name(yzp->dtype));
    if (!one_element(ys) || !one_element(yzp))
        return ref_unsupported(ctx, "a per-axis output scale or zero point");
    pc_data *acc = NULL, *sa = NULL, *sb = NULL, *sab = NULL, *y = NULL;
    if ((st = int_matmul(ctx, a, azp, b, bzp, &acc)) != PC_OK) goto done;
    if ((st = scale_operand(ctx, as, a, true, "a_scale", &sa)) != PC_OK) goto done;
    if ((st = scale_operand(ctx, bs, b, false, "b_scale", &sb)) != PC_OK) goto done;
    if ((st = run_standard(ctx, "MatMul", sa, sb, &sab)) != PC_OK) goto done;
    if (!(y = ref_new_tensor(ctx, yzp->dtype, acc->rank, acc->dims))) {
        st = ctx->err->status;
        goto done;
    }
    int64_t lo, hi, zp = ref_get_i64(yzp, 0);
    q_range(yzp->dtype, &lo, &hi);
    float fys = (float)ref_get_f64(ys, 0);
    for (uint64_t i = 0; i < acc->n_elements; i++) {
        int32_t a32 = wrap32((int64_t)ref_get_f64(acc, i));
        float mult = (float)ref_get_f64(sab, i) / fys, v = (float)a32 * mult;
        if (isnan(v)) {
            pc_data_unref(y);
            st = ref_unsupported(ctx, "a NaN requantized value (check the scales)");
            goto done;
        }
        ref_set_i64(y, i, requantize(v, zp, lo, hi));
    }
    out[0] = y;
done:
    pc_data_unref(acc);
    pc_data_unref(sa);
    pc_data_unref(sb);
    pc_data_unref(sab);
    return st;
}

/* ---- com.microsoft QLinearAdd
 * ------------------------------------------------------------------------------- */

/* A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point? (ONNX Runtime's contrib op):
 * C = saturate(rint((float(A - A_zp) * A_scale + float(B - B_zp) * B_scale) / C_scale) + C_zp), A and B
 * broadcast as Add does, every step in float as DequantizeLinear -> Add -> QuantizeLinear compute it; T is
 * int8 or uint8 for A, B and C, scales and zero points one element each (absent zero points are 0). */
static pc_status op_QLinearAdd(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    static const uint32_t need[] = {0, 1, 3, 4, 6};
    pc_status st = PC_OK;
    for (size_t k = 0; k < sizeof need / sizeof need[0] && st == PC_OK; k++)
        st = ref_require_tensor(ctx, in, n_in, need[k]);
    if (st != PC_OK) return st;
    const pc_data *a = in[0], *b = in[3];
    if (!q8(a->dtype) || b->dtype != a->dtype)
        return ref_fail(ctx, PC_ERR_TYPE, "A and B must both be int8 or both uint8 (%s, %s)",
                        pc_dtype_name(a->dtype), pc_dtype_name(b->dtype));
    static const char *const names[8] = {"A",       "A_scale",      "A_zero_point", "B",
                                         "B_scale", "B_zero_point", "C_scale",      "C_zero_point"};
    for (uint32_t i = 1; i < 8; i++) {
        const pc_data *p = i < n_in ? in[i] : NULL;
        if (i == 3 || !p) continue;
        bool scale = i == 1 || i == 4 || i == 6;
        if (p->kind != PC_TYPE_TENSOR || !one_element(p) || p->rank > 1)
            return ref_fail(ctx, PC_ERR_SHAPE, "%s must be a scalar or a 1-D tensor of one element",
                            names[i]);
        if (scale ? p->dtype != PC_DTYPE_FLOAT : p->dtype != a->dtype)
            return ref_fail(ctx, PC_ERR_TYPE, "%s has type %s, expected %s", names[i],
                            pc_dtype_name(p->dtype), scale ? "float" : pc_dtype_name(a->dtype));
    }
    float as = (float)ref_get_f64(in[1], 0), bs = (float)ref_get_f64(in[4], 0),
          cs = (float)ref_get_f64(in[6], 0);
    int64_t az = n_in > 2 && in[2] ? ref_get_i64(in[2], 0) : 0,
            bz = n_in > 5 && in[5] ? ref_get_i64(in[5], 0) : 0,
            cz = n_in > 7 && in[7] ? ref_get_i64(in[7], 0) : 0, lo, hi;
    q_range(a->dtype, &lo, &hi);
    pc_data *pair[2] = {in[0], in[3]};
    ref_bcast bc;
    if ((st = ref_bcast_init(ctx, 2, pair, &bc)) != PC_OK) {
        free(bc.idx);
        return st;
    }
    pc_data *c = ref_new_tensor(ctx, a->dtype, bc.shape.rank, bc.shape.dims);
    for (uint64_t k = 0; c && k < bc.n; k++) {
        float va = (float)(ref_get_i64(a, bc.idx[k]) - az) * as;
        float vb = (float)(ref_get_i64(b, bc.idx[bc.n + k]) - bz) * bs;
        float v = (va + vb) / cs;
        if (isnan(v)) {
            pc_data_unref(c);
            free(bc.idx);
            return ref_unsupported(ctx, "quantizing NaN (C element %llu)", (unsigned long long)k);
        }
        ref_set_i64(c, k, requantize(v, cz, lo, hi));
    }
    free(bc.idx);
    if (!c) return ctx->err->status;
    out[0] = c;
    return PC_OK;
}

/* ---- the systolic EP's ops (com.passcheck.systolic)
 * --------------------------------------------------------- */

/* QLinearAdd: com.microsoft QLinearAdd restricted to A and B of one shape (the array adds elementwise). */
static pc_status op_SystolicQLinearAdd(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                       uint32_t n_out)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st == PC_OK) st = ref_require_tensor(ctx, in, n_in, 3);
    if (st != PC_OK) return st;
    const pc_data *a = in[0], *b = in[3];
    bool same = a->rank == b->rank;
    for (int32_t i = 0; same && i < a->rank; i++)
        same = a->dims[i] == b->dims[i];
    if (!same)
        return ref_fail(ctx, PC_ERR_SHAPE,
                        "A and B must have one shape (the systolic add does not broadcast)");
    return op_QLinearAdd(ctx, in, n_in, out, n_out);
}

/* QLinearRelu: X [, X_zero_point] -> max(X, zero point) (absent: 0), the Relu of the real values X stands
 * for, written on the integers: DequantizeLinear, Relu and QuantizeLinear with one scale and zero point give
 * it. */
static pc_status op_QLinearRelu(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0], *z = n_in > 1 ? in[1] : NULL;
    if (!q8(x->dtype))
        return ref_fail(ctx, PC_ERR_TYPE, "X must be int8 or uint8, is %s", pc_dtype_name(x->dtype));
    if (z && (z->kind != PC_TYPE_TENSOR || !one_element(z) || z->rank > 1 || z->dtype != x->dtype))
        return ref_fail(ctx, PC_ERR_SHAPE, "X_zero_point must be one %s value", pc_dtype_name(x->dtype));
    int64_t zp = z ? ref_get_i64(z, 0) : 0;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    for (uint64_t k = 0; k < x->n_elements; k++) {
        int64_t v = ref_get_i64(x, k);
        ref_set_i64(y, k, v > zp ? v : zp);
    }
    out[0] = y;
    return PC_OK;
}

const ref_op ref_ops_quant[] = {
    {"", "ConvInteger", op_ConvInteger},
    {"", "DequantizeLinear", op_DequantizeLinear},
    {"", "DynamicQuantizeLinear", op_DynamicQuantizeLinear},
    {"", "MatMulInteger", op_MatMulInteger},
    {"", "QLinearConv", op_QLinearConv},
    {"", "QLinearMatMul", op_QLinearMatMul},
    {"", "QuantizeLinear", op_QuantizeLinear},
    {"com.microsoft", "QLinearAdd", op_QLinearAdd},
    {"com.passcheck.systolic", "QLinearAdd", op_SystolicQLinearAdd},
    {"com.passcheck.systolic", "QLinearRelu", op_QLinearRelu},
};

const size_t ref_ops_quant_count = sizeof ref_ops_quant / sizeof ref_ops_quant[0];
