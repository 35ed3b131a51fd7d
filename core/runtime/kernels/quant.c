/* Quantized kernels: QuantizeLinear, DequantizeLinear, QLinearConv (NCHW, the internal NHWC domain,
 * com.microsoft QLinearConvRelu and the systolic EP's QLinearConv_nhwc with its HWIO weight), QLinearMatMul
 * and MatMulInteger, on 8-bit integers.
 *
 * Bit-exact with the reference executor (reference/ops_quant.c), which computes as ONNX Runtime does, in
 * float:
 *     QuantizeLinear    y = saturate(rint(float(x) / scale) + zp)
 *     DequantizeLinear  y = float(x - zp) * scale
 *     QLinear*          y = saturate(rint(float(acc) * m) + y_zp),  m = float(x_scale * w_scale) / y_scale
 * where rint rounds ties to even and acc is the exact integer sum (plus bias) wrapped to 32 bits. Rounding
 * clamps to [qmin - zp, qmax - zp] first (rint is monotone and keeps integers, so the order does not change
 * the result), then adds and subtracts 1.5 * 2^23: floats in [2^23, 2^24) are one apart, so the addition
 * rounds to an integer, ties to even, in the default rounding mode. That is rintf without a libm call, and
 * it vectorizes. NaN (which the reference refuses) saturates to qmin.
 *
 * Integer products: each operand minus its zero point becomes int16 (exact: 8 bits minus 8 bits), packed so
 * that the reduced axis K is contiguous on both sides, and a gemm takes dot products of rows in 4 x 2
 * blocks; its inner loop is a plain int16 x int16 -> int32 sum that compilers turn into pmaddwd. Sums run
 * over chunks of K short enough that int32 cannot overflow (|product| <= 255 * 255) and are combined modulo
 * 2^32, as a 32-bit accumulator wraps; a tile's sums are then requantized a row at a time. Convolution:
 * im2col rows of output pixels, tile by tile, from a centered channels-last copy of the image, against W;
 * depthwise convolution is a direct loop instead. MatMul: A's rows against B transposed, or, for a few rows,
 * B read as it lies. On x86-64 the hot loops are compiled twice, for the baseline and for AVX2, and chosen
 * when the run starts.
 *
 * Nothing survives between runs (the ABI keeps no per-node state and scratch is shared), so weights are
 * packed and per-channel multipliers computed at the start of every run: O(M K) against the product's
 * O(M K P); the conv transposes whichever of W and the patches is smaller. */
#include <float.h>
#include <stdbool.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

/* The rounding trick needs float arithmetic evaluated in float (no x87 excess precision). */
_Static_assert(FLT_EVAL_METHOD == 0, "quant.c rounds through float additions");

#define ROUND_MAGIC 12582912.0f /* 1.5 * 2^23 */

/* Sums of at most this many products of values in [-255, 255] fit int32: 32768 * 65025 < 2^31. */
enum { DOT_CHUNK = 32768 };

/* ---- shared checks and parameter access */

static bool is_q8(pc_dtype t)
{
    return t == PC_DTYPE_UINT8 || t == PC_DTYPE_INT8;
}

static void q8_range(pc_dtype t, int32_t *lo, int32_t *hi)
{
    *lo = t == PC_DTYPE_INT8 ? -128 : 0;
    *hi = t == PC_DTYPE_INT8 ? 127 : 255;
}

static const pc_rt_tensor *opt_in(const pc_rt_kernel_ctx *k, uint32_t i)
{
    return i < k->n_in ? k->in[i] : NULL;
}

/* inputs [0, required) present, at most `max`, output 0 present */
static pc_status need_inputs(pc_rt_kernel_ctx *k, uint32_t required, uint32_t max)
{
    if (k->n_in < required || k->n_in > max)
        return pc_error_set(k->err, PC_ERR_ARITY, "%s takes %u to %u inputs, the node has %u",
                            k->node->op_type, required, max, k->n_in);
    for (uint32_t i = 0; i < required; i++)
        if (!k->in[i])
            return pc_error_set(k->err, PC_ERR_ARITY, "%s: input %u is required", k->node->op_type, i);
    if (k->n_out < 1 || !k->out[0])
        return pc_error_set(k->err, PC_ERR_ARITY, "%s: output 0 is required", k->node->op_type);
    return PC_OK;
}

static pc_status need_type(pc_rt_kernel_ctx *k, uint32_t i, bool ok, const char *what, const char *allowed)
{
    if (ok) return PC_OK;
    return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: %s (input %u) is %s; this kernel takes %s",
                        k->node->op_type, what, i, pc_dtype_name(k->in[i]->dtype), allowed);
}

static pc_status need_scale(pc_rt_kernel_ctx *k, uint32_t i, const char *what)
{
    return need_type(k, i, k->in[i]->dtype == PC_DTYPE_FLOAT, what, "float32 scales");
}

/* A zero point of its value's type (input v); absent zero points pass. */
static pc_status need_zp_type(pc_rt_kernel_ctx *k, uint32_t zi, uint32_t v, const char *what)
{
    const pc_rt_tensor *z = opt_in(k, zi);
    if (!z || z->dtype == k->in[v]->dtype) return PC_OK;
    return pc_error_set(
        k->err, PC_ERR_UNSUPPORTED,
        "%s: %s (input %u) is %s but its value is %s (mixed element types are not implemented)",
        k->node->op_type, what, zi, pc_dtype_name(z->dtype), pc_dtype_name(k->in[v]->dtype));
}

static pc_status need_one(pc_rt_kernel_ctx *k, uint32_t i, const char *what)
{
    if (k->in[i]->n == 1) return PC_OK;
    return pc_error_set(k->err, PC_ERR_SHAPE, "%s: %s (input %u) must hold one value, it has %llu",
                        k->node->op_type, what, i, (unsigned long long)k->in[i]->n);
}

static pc_status need_out_type(pc_rt_kernel_ctx *k, pc_dtype want)
{
    if (k->out[0]->dtype == want) return PC_OK;
    return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: the output is %s, this kernel writes %s",
                        k->node->op_type, pc_dtype_name(k->out[0]->dtype), pc_dtype_name(want));
}

/* element i of a zero point (absent: 0) */
static int32_t zp_at(const pc_rt_tensor *t, uint64_t i)
{
    if (!t) return 0;
    if (t->dtype == PC_DTYPE_UINT8) return ((const uint8_t *)t->data)[i];
    if (t->dtype == PC_DTYPE_INT8) return ((const int8_t *)t->data)[i];
    return ((const int32_t *)t->data)[i];
}

static float f32_at(const pc_rt_tensor *t, uint64_t i)
{
    return ((const float *)t->data)[i];
}

/* Two's complement reading of 32 bits, without the implementation-defined conversion. */
static inline int32_t to_i32(uint32_t v)
{
    return v <= INT32_MAX ? (int32_t)v : (int32_t)(v - 2147483648u) - INT32_MAX - 1;
}

/* rint(clamp(v, lo, hi)) for integral lo <= hi of magnitude < 2^22; NaN gives lo */
static inline int32_t round_clamp(float v, float lo, float hi)
{
    v = v >= lo ? v : lo;
    v = v <= hi ? v : hi;
    return (int32_t)((v + ROUND_MAGIC) - ROUND_MAGIC);
}

/* Instruction sets: on x86-64 the hot loops are also compiled for AVX2 (twice the vector width; not FMA, so
 * no float operation is fused) and chosen at run time when the CPU has it. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define QUANT_AVX2      1
#define QUANT_AVX2_ATTR __attribute__((target("avx2")))
static bool cpu_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#endif

/* offset of a new 64-byte aligned region of `bytes` in a scratch plan; false on overflow */
static bool plan_take(size_t *total, size_t bytes, size_t *offset)
{
    size_t at = (*total + 63) / 64 * 64;
    if (at < *total || !pc_size_add(at, bytes, total)) return false;
    *offset = at;
    return true;
}

/* a * b * elem bytes; false on overflow */
static bool size_of3(uint64_t a, uint64_t b, size_t elem, size_t *out)
{
    return pc_size_mul((size_t)a, (size_t)b, out) && pc_size_mul(*out, elem, out);
}

/* ---- QuantizeLinear, DequantizeLinear */

/* Where the scale applies: one value, or one per index of `axis` (x seen as [outer, ch, inner]). */
typedef struct qd_layout {
    bool per_axis;
    uint64_t outer, ch, inner;
} qd_layout;

/* The reference's rules: per tensor when the scale has one element and rank <= 1, else per axis (opset 13+:
 * a 1-D scale as long as x's `axis`); the zero point has the scale's shape; opset 21's blocks are refused. */
static pc_status qd_layout_get(pc_rt_kernel_ctx *k, qd_layout *l)
{
    const pc_rt_tensor *x = k->in[0], *s = k->in[1], *z = opt_in(k, 2);
    memset(l, 0, sizeof *l);
    int64_t block = k->opset >= 21 ? pc_node_attr_int(k->node, "block_size", 0) : 0;
    if (block < 0)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: block_size = %lld, must be >= 0", k->node->op_type,
                            (long long)block);
    if (block > 0)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: blocked quantization (block_size %lld)",
                            k->node->op_type, (long long)block);
    if (z) {
        bool same = z->rank == s->rank && memcmp(z->dims, s->dims, (size_t)s->rank * sizeof s->dims[0]) == 0;
        if (!same && !(z->n == 1 && s->n == 1))
            return pc_error_set(k->err, PC_ERR_SHAPE, "%s: the zero point's shape must be the scale's",
                                k->node->op_type);
    }
    l->outer = x->n;
    l->ch = l->inner = 1;
    if (s->n == 1 && s->rank <= 1) return PC_OK;
    if (k->opset < 13)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "%s: the scale must be one value before opset 13 (it has %llu)", k->node->op_type,
                            (unsigned long long)s->n);
    int64_t axis = pc_node_attr_int(k->node, "axis", 1);
    if (axis < -(int64_t)x->rank || axis >= x->rank)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: axis %lld is out of range for rank %d",
                            k->node->op_type, (long long)axis, (int)x->rank);
    int32_t a = (int32_t)(axis < 0 ? axis + x->rank : axis);
    if (s->rank != 1 || s->dims[0] != x->dims[a])
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "%s: a per-axis scale must be 1-D with %lld elements (axis %d)", k->node->op_type,
                            (long long)x->dims[a], (int)a);
    l->per_axis = true;
    l->outer = l->ch = l->inner = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        uint64_t v = (uint64_t)x->dims[d];
        if (d < a) l->outer *= v;
        if (d == a) l->ch = v;
        if (d > a) l->inner *= v;
    }
    return PC_OK;
}

/* Per-axis with the axis last: the zero points as int32 in scratch, read along the row. */
static size_t qd_scratch(const qd_layout *l)
{
    return l->per_axis && l->inner == 1 ? (size_t)l->ch * sizeof(int32_t) : 0;
}

/* A run of x sharing its parameters: elements [at, at + n) with scale and zero point c, or (c < 0: per
 * axis, the axis last) one per element from the scales and the zero points zps. */
typedef void (*qd_run_fn)(const pc_rt_kernel_ctx *k, uint64_t at, uint64_t n, int64_t c, const int32_t *zps);

/* x's runs by layout: per tensor one; the axis last, one per outer index; else one per (outer, channel). */
static void qd_walk(pc_rt_kernel_ctx *k, const qd_layout *l, qd_run_fn run)
{
    if (!l->per_axis) {
        run(k, 0, k->in[0]->n, 0, NULL);
    } else if (l->inner == 1) {
        int32_t *zps = k->scratch;
        for (uint64_t c = 0; c < l->ch; c++)
            zps[c] = zp_at(opt_in(k, 2), c);
        for (uint64_t o = 0; o < l->outer; o++)
            run(k, o * l->ch, l->ch, -1, zps);
    } else {
        for (uint64_t o = 0; o < l->outer; o++)
            for (uint64_t c = 0; c < l->ch; c++)
                run(k, (o * l->ch + c) * l->inner, l->inner, (int64_t)c, NULL);
    }
}

/* Quantizing rows: one scale and zero point (row), or one per element (vec). lo, hi: qmin - zp, qmax - zp. */
typedef void (*quant_row_fn)(const void *x, uint64_t n, float s, int32_t zp, float lo, float hi, uint8_t *y);
typedef void (*quant_vec_fn)(const void *x, uint64_t n, const float *s, const int32_t *zp, int32_t qlo,
                             int32_t qhi, uint8_t *y);
/* int8 and uint8 outputs are both the low byte of the saturated value; per x type and instruction set
 * (the division is the cost: AVX2 halves it) */
#define QUANT_ROWS(SFX, ATTR, TS, T)                                                                         \
    ATTR static void quant_row_##TS##_##SFX(const void *xv, uint64_t n, float s, int32_t zp, float lo,       \
                                            float hi, uint8_t *y)                                            \
    {                                                                                                        \
        const T *x = xv;                                                                                     \
        for (uint64_t i = 0; i < n; i++)                                                                     \
            y[i] = (uint8_t)(round_clamp((float)x[i] / s, lo, hi) + zp);                                     \
    }                                                                                                        \
    ATTR static void quant_vec_##TS##_##SFX(const void *xv, uint64_t n, const float *s, const int32_t *zp,   \
                                            int32_t qlo, int32_t qhi, uint8_t *y)                            \
    {                                                                                                        \
        const T *x = xv;                                                                                     \
        for (uint64_t i = 0; i < n; i++)                                                                     \
            y[i] = (uint8_t)(round_clamp((float)x[i] / s[i], (float)(qlo - zp[i]), (float)(qhi - zp[i])) +   \
                             zp[i]);                                                                         \
    }
#define QUANT_IMPL(SFX, ATTR)                                                                                \
    QUANT_ROWS(SFX, ATTR, f32, float)                                                                        \
    QUANT_ROWS(SFX, ATTR, i32, int32_t)
QUANT_IMPL(base, )
#ifdef QUANT_AVX2
QUANT_IMPL(avx2, QUANT_AVX2_ATTR)
#endif

/* The quantized type: the zero point's, else output_dtype (opset 21), else uint8. */
static pc_dtype quantize_out_type(const pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *z = opt_in(k, 2);
    int64_t od = k->opset >= 21 ? pc_node_attr_int(k->node, "output_dtype", 0) : 0;
    return z ? z->dtype : od != 0 ? (pc_dtype)od : PC_DTYPE_UINT8;
}

static pc_status quantize_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = need_inputs(k, 2, 3);
    if (st != PC_OK) return st;
    const pc_rt_tensor *z = opt_in(k, 2);
    pc_dtype xt = k->in[0]->dtype, yt = quantize_out_type(k);
    int64_t od = k->opset >= 21 ? pc_node_attr_int(k->node, "output_dtype", 0) : 0;
    if (z && od != 0 && od != (int64_t)z->dtype)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "QuantizeLinear: output_dtype %lld disagrees with y_zero_point's type %s",
                            (long long)od, pc_dtype_name(z->dtype));
    if ((st = need_type(k, 0, xt == PC_DTYPE_FLOAT || xt == PC_DTYPE_INT32, "x", "float32 or int32")) !=
            PC_OK ||
        (st = need_scale(k, 1, "y_scale")) != PC_OK)
        return st;
    if (!is_q8(yt))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "QuantizeLinear to %s: this kernel writes int8 or uint8", pc_dtype_name(yt));
    if ((st = need_out_type(k, yt)) != PC_OK) return st;
    qd_layout l;
    if ((st = qd_layout_get(k, &l)) != PC_OK) return st;
    *scratch_bytes = qd_scratch(&l);
    return PC_OK;
}

static void quantize_span(const pc_rt_kernel_ctx *k, uint64_t at, uint64_t n, int64_t c, const int32_t *zps)
{
    const pc_rt_tensor *x = k->in[0];
    bool f32 = x->dtype == PC_DTYPE_FLOAT;
    quant_row_fn row = f32 ? quant_row_f32_base : quant_row_i32_base;
    quant_vec_fn vec = f32 ? quant_vec_f32_base : quant_vec_i32_base;
#ifdef QUANT_AVX2
    if (cpu_avx2()) {
        row = f32 ? quant_row_f32_avx2 : quant_row_i32_avx2;
        vec = f32 ? quant_vec_f32_avx2 : quant_vec_i32_avx2;
    }
#endif
    const char *xd = (const char *)x->data + at * (f32 ? sizeof(float) : sizeof(int32_t));
    uint8_t *y = (uint8_t *)k->out[0]->data + at;
    const float *s = k->in[1]->data;
    int32_t qlo, qhi;
    q8_range(k->out[0]->dtype, &qlo, &qhi);
    if (c < 0) {
        vec(xd, n, s, zps, qlo, qhi, y);
        return;
    }
    int32_t zp = zp_at(opt_in(k, 2), (uint64_t)c);
    row(xd, n, s[c], zp, (float)(qlo - zp), (float)(qhi - zp), y);
}

static pc_status quantize_run(pc_rt_kernel_ctx *k)
{
    qd_layout l;
    pc_status st = qd_layout_get(k, &l);
    if (st == PC_OK) qd_walk(k, &l, quantize_span);
    return st;
}

/* (x - zp) * s in float; x - zp is exact in int32 (an int32 x has zero point 0) */
typedef void (*deq_row_fn)(const void *x, uint64_t n, float s, int32_t zp, float *y);
typedef void (*deq_vec_fn)(const void *x, uint64_t n, const float *s, const int32_t *zp, float *y);
#define DEQ_ROWS(sfx, T)                                                                                     \
    static void deq_row_##sfx(const void *xv, uint64_t n, float s, int32_t zp, float *y)                     \
    {                                                                                                        \
        const T *x = xv;                                                                                     \
        for (uint64_t i = 0; i < n; i++)                                                                     \
            y[i] = (float)((int32_t)x[i] - zp) * s;                                                          \
    }                                                                                                        \
    static void deq_vec_##sfx(const void *xv, uint64_t n, const float *s, const int32_t *zp, float *y)       \
    {                                                                                                        \
        const T *x = xv;                                                                                     \
        for (uint64_t i = 0; i < n; i++)                                                                     \
            y[i] = (float)((int32_t)x[i] - zp[i]) * s[i];                                                    \
    }
DEQ_ROWS(u8, uint8_t)
DEQ_ROWS(i8, int8_t)
DEQ_ROWS(i32, int32_t)

static pc_status dequantize_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = need_inputs(k, 2, 3);
    if (st != PC_OK) return st;
    pc_dtype xt = k->in[0]->dtype;
    if ((st = need_type(k, 0, is_q8(xt) || xt == PC_DTYPE_INT32, "x", "int8, uint8 or int32")) != PC_OK ||
        (st = need_zp_type(k, 2, 0, "x_zero_point")) != PC_OK ||
        (st = need_scale(k, 1, "x_scale")) != PC_OK || (st = need_out_type(k, PC_DTYPE_FLOAT)) != PC_OK)
        return st;
    qd_layout l;
    if ((st = qd_layout_get(k, &l)) != PC_OK) return st;
    *scratch_bytes = qd_scratch(&l);
    return PC_OK;
}

static void dequantize_span(const pc_rt_kernel_ctx *k, uint64_t at, uint64_t n, int64_t c, const int32_t *zps)
{
    pc_dtype xt = k->in[0]->dtype;
    deq_row_fn row = xt == PC_DTYPE_UINT8 ? deq_row_u8 : xt == PC_DTYPE_INT8 ? deq_row_i8 : deq_row_i32;
    deq_vec_fn vec = xt == PC_DTYPE_UINT8 ? deq_vec_u8 : xt == PC_DTYPE_INT8 ? deq_vec_i8 : deq_vec_i32;
    const char *xd = (const char *)k->in[0]->data + at * (pc_dtype_bits(xt) / 8);
    float *y = (float *)k->out[0]->data + at;
    const float *s = k->in[1]->data;
    if (c < 0)
        vec(xd, n, s, zps, y);
    else
        row(xd, n, s[c], zp_at(opt_in(k, 2), (uint64_t)c), y);
}

static pc_status dequantize_run(pc_rt_kernel_ctx *k)
{
    qd_layout l;
    pc_status st = qd_layout_get(k, &l);
    if (st != PC_OK) return st;
    const pc_rt_tensor *z = opt_in(k, 2);
    if (k->in[0]->dtype == PC_DTYPE_INT32 && z)
        for (uint64_t i = 0; i < z->n; i++)
            if (zp_at(z, i) != 0)
                return pc_error_set(
                    k->err, PC_ERR_VALUE,
                    "DequantizeLinear: an int32 input has no zero point, but x_zero_point[%llu] = %d",
                    (unsigned long long)i, (int)zp_at(z, i));
    qd_walk(k, &l, dequantize_span);
    return PC_OK;
}

/* ---- the int16 gemm */

/* Where results go: out(i, j) for row i of A and row j of B, at y[i * si + j]; the multiplier and bias
 * vary along i (mj = bj = 0) or along j (mj = bj = 1). */
typedef struct gemm_out {
    uint8_t *y8;       /* requantized 8-bit output, or NULL for ... */
    int32_t *y32;      /* ... the wrapped int32 sums (MatMulInteger: no bias, no multiplier) */
    int64_t si;        /* row stride of out */
    const float *mult; /* multiplier of out(i, j): mult[i * mi + j * mj] */
    int64_t mi, mj;
    const int32_t *bias; /* added to the sum first: bias[i * bi + j * bj] */
    int64_t bi, bj;
    float lo, hi; /* qmin - zp, qmax - zp (a fused Relu raises qmin to zp) */
    int32_t zp;
} gemm_out;

/* Requantizes n sums into bytes: with one bias and multiplier (row), or one each per element (vec). */
static inline void requant_row(const int32_t *acc, int64_t n, int32_t bias, float mult, const gemm_out *o,
                               uint8_t *y)
{
    float lo = o->lo, hi = o->hi;
    int32_t zp = o->zp;
    if (pc_fault_active(PC_FAULT_RUNTIME_REQUANT_TRUNCATE)) { /* planted bug: truncation, not rint */
        for (int64_t i = 0; i < n; i++) {
            float v = (float)to_i32((uint32_t)acc[i] + (uint32_t)bias) * mult;
            y[i] = (uint8_t)((int32_t)(v >= lo ? (v <= hi ? v : hi) : lo) + zp);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++)
        y[i] = (uint8_t)(round_clamp((float)to_i32((uint32_t)acc[i] + (uint32_t)bias) * mult, lo, hi) + zp);
}

static inline void requant_vec(const int32_t *acc, int64_t n, const int32_t *bias, const float *mult,
                               const gemm_out *o, uint8_t *y)
{
    float lo = o->lo, hi = o->hi;
    int32_t zp = o->zp;
    if (pc_fault_active(PC_FAULT_RUNTIME_REQUANT_TRUNCATE)) { /* planted bug: truncation, not rint */
        for (int64_t i = 0; i < n; i++) {
            float v = (float)to_i32((uint32_t)acc[i] + (uint32_t)bias[i]) * mult[i];
            y[i] = (uint8_t)((int32_t)(v >= lo ? (v <= hi ? v : hi) : lo) + zp);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++)
        y[i] = (uint8_t)(round_clamp((float)to_i32((uint32_t)acc[i] + (uint32_t)bias[i]) * mult[i], lo, hi) +
                         zp);
}

/* out(i, j .. j + n) from n sums */
static inline void gemm_emit(const gemm_out *o, int64_t i, int64_t j, int64_t n, const int32_t *sums)
{
    if (!o->y8) {
        memcpy(o->y32 + i * o->si + j, sums, (size_t)n * sizeof *sums);
        return;
    }
    uint8_t *y = o->y8 + i * o->si + j;
    const float *m = o->mult + i * o->mi + j * o->mj;
    const int32_t *b = o->bias + i * o->bi + j * o->bj;
    if (o->mj)
        requant_vec(sums, n, b, m, o, y);
    else
        requant_row(sums, n, *b, *m, o, y);
}

/* B rows per cache tile: about 96 KiB of int16, at most GEMM_TILE (the sums buffer's width); K in chunks
 * of GEMM_KC (4 rows of A: 16 KiB) */
enum { GEMM_TILE = 1024, GEMM_KC = 2048 };
_Static_assert((int)GEMM_KC <= (int)DOT_CHUNK, "a chunk's int32 sums must not overflow");
static int64_t gemm_tile(int64_t k)
{
    int64_t t = (96 * 1024 / 2) / (k > 0 ? k : 1);
    return t < 16 ? 16 : t > GEMM_TILE ? GEMM_TILE : t & ~(int64_t)1;
}

/* the sums buffer a gemm needs in scratch: 4 rows of a tile */
static size_t gemm_scratch(void)
{
    return 4 * GEMM_TILE * sizeof(int32_t);
}

/* R x C dot products over k <= DOT_CHUNK elements (int32 cannot overflow) added modulo 2^32 to sums[r * ls
 * + c], a's rows lda apart, b's ldb. ATTR: the instruction set the function is compiled for. */
#define DOT_KERNEL(SFX, ATTR, R, C)                                                                          \
    ATTR static void dot_##SFX##_##R##x##C(const int16_t *a, int64_t lda, const int16_t *b, int64_t ldb,     \
                                           int64_t k, int32_t *sums, int64_t ls)                             \
    {                                                                                                        \
        int32_t s[R][C] = {{0}};                                                                             \
        for (int64_t i = 0; i < k; i++)                                                                      \
            for (int r = 0; r < R; r++)                                                                      \
                for (int c = 0; c < C; c++)                                                                  \
                    s[r][c] += a[r * lda + i] * b[c * ldb + i];                                              \
        for (int r = 0; r < R; r++)                                                                          \
            for (int c = 0; c < C; c++)                                                                      \
                sums[r * ls + c] = to_i32((uint32_t)sums[r * ls + c] + (uint32_t)s[r][c]);                   \
    }

/* out(i0 + i, j0 + j) = a_i . b_j for i < ra, j < rb, over k elements: B in tiles that stay in cache; for
 * each, A in blocks of 4 rows whose sums with the tile's rows, over chunks of K short enough for the block
 * to stay in L1 (and its int32 sums not to overflow), collect in `sums` (4 x GEMM_TILE) until they are
 * requantized a row at a time; compiled for one instruction set. */
#define GEMM_IMPL(SFX, ATTR)                                                                                 \
    DOT_KERNEL(SFX, ATTR, 4, 2)                                                                              \
    DOT_KERNEL(SFX, ATTR, 4, 1)                                                                              \
    DOT_KERNEL(SFX, ATTR, 1, 2)                                                                              \
    DOT_KERNEL(SFX, ATTR, 1, 1)                                                                              \
    ATTR static void gemm_##SFX(const int16_t *a, int64_t lda, int64_t ra, const int16_t *b, int64_t ldb,    \
                                int64_t rb, int64_t k, const gemm_out *o, int64_t i0, int64_t j0,            \
                                int32_t *sums)                                                               \
    {                                                                                                        \
        int64_t tile = gemm_tile(k);                                                                         \
        for (int64_t jt = 0; jt < rb; jt += tile) {                                                          \
            int64_t je = rb - jt < tile ? rb : jt + tile;                                                    \
            for (int64_t i = 0; i < ra;) {                                                                   \
                int nr = ra - i >= 4 ? 4 : 1;                                                                \
                for (int r = 0; r < nr; r++)                                                                 \
                    memset(sums + r * GEMM_TILE, 0, (size_t)(je - jt) * sizeof *sums);                       \
                for (int64_t k0 = 0; k0 < k; k0 += GEMM_KC) {                                                \
                    int64_t kn = k - k0 < GEMM_KC ? k - k0 : GEMM_KC;                                        \
                    const int16_t *ai = a + i * lda + k0;                                                    \
                    for (int64_t j = jt; j < je;) {                                                          \
                        int nc = je - j >= 2 ? 2 : 1;                                                        \
                        const int16_t *bj = b + j * ldb + k0;                                                \
                        int32_t *s = sums + (j - jt);                                                        \
                        if (nr == 4 && nc == 2)                                                              \
                            dot_##SFX##_4x2(ai, lda, bj, ldb, kn, s, GEMM_TILE);                             \
                        else if (nr == 4)                                                                    \
                            dot_##SFX##_4x1(ai, lda, bj, ldb, kn, s, GEMM_TILE);                             \
                        else if (nc == 2)                                                                    \
                            dot_##SFX##_1x2(ai, lda, bj, ldb, kn, s, GEMM_TILE);                             \
                        else                                                                                 \
                            dot_##SFX##_1x1(ai, lda, bj, ldb, kn, s, GEMM_TILE);                             \
                        j += nc;                                                                             \
                    }                                                                                        \
                }                                                                                            \
                for (int r = 0; r < nr; r++)                                                                 \
                    gemm_emit(o, i0 + i + r, j0 + jt, je - jt, sums + r * GEMM_TILE);                        \
                i += nr;                                                                                     \
            }                                                                                                \
        }                                                                                                    \
    }

GEMM_IMPL(base, )

#ifdef QUANT_AVX2
GEMM_IMPL(avx2, QUANT_AVX2_ATTR)
#endif

static void gemm_s16(const int16_t *a, int64_t lda, int64_t ra, const int16_t *b, int64_t ldb, int64_t rb,
                     int64_t k, const gemm_out *o, int64_t i0, int64_t j0, int32_t *sums)
{
#ifdef QUANT_AVX2
    if (cpu_avx2()) {
        gemm_avx2(a, lda, ra, b, ldb, rb, k, o, i0, j0, sums);
        return;
    }
#endif
    gemm_base(a, lda, ra, b, ldb, rb, k, o, i0, j0, sums);
}

/* ---- QLinearConv */

/* inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, [B] */
enum { QC_X, QC_XS, QC_XZ, QC_W, QC_WS, QC_WZ, QC_YS, QC_YZ, QC_B };

typedef struct qconv_geom {
    int64_t n, c, h, w;     /* input, NCHW names whatever the layout (1-D: h = 1) */
    int64_t m, oh, ow;      /* output channels and size */
    int64_t kh, kw, sh, sw; /* kernel, strides */
    int64_t dh, dw, ph, pw; /* dilations, padding at the start */
    int64_t group, cg, mg;  /* groups, input and output channels per group */
    int64_t k, kp;          /* patch length cg * kh * kw, and rounded up to 16 (zeros) */
    int64_t hq, wq;         /* NCHW depthwise: rows and row pitch of a stride phase of the padded plane */
    bool nhwc, pointwise, depthwise;
    bool w_order; /* patches ordered (cg, kh, kw) like W, not (kh, kw, cg) like the image */
    bool hwio;    /* W is (k..., cg, M), the systolic EP's QLinearConv_nhwc, not (M, cg, k...) */
    bool relu;    /* clamp at y's zero point: QLinearConvRelu, or QLinearConv_nhwc with relu = 1 */
} qconv_geom;

/* Attributes and spatial dims are bounded so that no geometry arithmetic overflows int64. */
#define QC_MAX ((int64_t)1 << 31)

/* An ints attribute with one value per spatial axis (fallback when absent), each in [min, QC_MAX]; stored
 * right-aligned in v[2] (1-D: v[0] keeps the fallback). */
static pc_status spatial_attr(pc_rt_kernel_ctx *k, const char *name, int nsp, int64_t fallback, int64_t min,
                              int64_t *v)
{
    size_t n;
    const int64_t *a = pc_rt_attr_ints(k->node, name, &n);
    v[0] = v[1] = fallback;
    if (!a) return PC_OK;
    if (n != (size_t)nsp)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "QLinearConv: %s has %zu values, expected %d", name, n,
                            nsp);
    for (int i = 0; i < nsp; i++) {
        if (a[i] < min || a[i] > QC_MAX)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "QLinearConv: %s[%d] = %lld is out of range", name,
                                i, (long long)a[i]);
        v[2 - nsp + i] = a[i];
    }
    return PC_OK;
}

static pc_status qconv_geometry(pc_rt_kernel_ctx *k, qconv_geom *g)
{
    const pc_rt_tensor *x = k->in[QC_X], *w = k->in[QC_W], *y = k->out[0];
    memset(g, 0, sizeof *g);
    g->hwio = pc_name_eq(k->node->domain, PC_SYSTOLIC_DOMAIN);
    g->nhwc = g->hwio || pc_name_eq(k->node->domain, PC_NHWC_DOMAIN);
    int64_t relu = g->hwio ? pc_node_attr_int(k->node, "relu", 0) : 0;
    if (relu != 0 && relu != 1)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "QLinearConv_nhwc: relu is %lld, not 0 or 1",
                            (long long)relu);
    g->relu = relu || pc_name_eq(k->node->op_type, "QLinearConvRelu");
    if (x->rank < 3)
        return pc_error_set(k->err, PC_ERR_SHAPE, "QLinearConv: X has rank %d, at least 3", (int)x->rank);
    if (x->rank > 4)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "QLinearConv with %d spatial axes: the runtime's takes one or two",
                            (int)x->rank - 2);
    if (w->rank != x->rank || y->rank != x->rank)
        return pc_error_set(k->err, PC_ERR_SHAPE, "QLinearConv: X, W and Y have ranks %d, %d and %d",
                            (int)x->rank, (int)w->rank, (int)y->rank);
    int nsp = x->rank - 2;
    int32_t cax = g->nhwc ? x->rank - 1 : 1, sp0 = g->nhwc ? 1 : 2;
    /* W's output-channel, input-channel and first kernel axes: OIHW, or HWIO */
    int32_t wm = g->hwio ? w->rank - 1 : 0, wc = g->hwio ? w->rank - 2 : 1, wk = g->hwio ? 0 : 2;
    int64_t in[2] = {1, 1}, out[2] = {1, 1}, ker[2] = {1, 1}, st[2], dl[2], pb[2] = {0, 0}, pe[2] = {0, 0};
    for (int i = 0; i < nsp; i++) {
        in[2 - nsp + i] = x->dims[sp0 + i];
        out[2 - nsp + i] = y->dims[sp0 + i];
        ker[2 - nsp + i] = w->dims[wk + i];
    }
    for (int i = 0; i < 2; i++)
        if (in[i] > QC_MAX || ker[i] > QC_MAX || ker[i] < 1)
            return pc_error_set(k->err, ker[i] < 1 ? PC_ERR_SHAPE : PC_ERR_UNSUPPORTED,
                                "QLinearConv: spatial size %lld or kernel size %lld out of range",
                                (long long)in[i], (long long)ker[i]);
    size_t nks;
    const int64_t *ks = pc_rt_attr_ints(k->node, "kernel_shape", &nks);
    for (size_t i = 0; ks && i < nks; i++)
        if (nks != (size_t)nsp || ks[i] != w->dims[wk + i])
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "QLinearConv: kernel_shape disagrees with W's dims");
    pc_status s;
    if ((s = spatial_attr(k, "strides", nsp, 1, 1, st)) != PC_OK ||
        (s = spatial_attr(k, "dilations", nsp, 1, 1, dl)) != PC_OK)
        return s;
    g->group = pc_node_attr_int(k->node, "group", 1);
    g->n = x->dims[0];
    g->c = x->dims[cax];
    g->m = w->dims[wm];
    if (g->group < 1 || g->c % g->group || g->m % g->group || w->dims[wc] != g->c / g->group)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "QLinearConv: W with %lld output and %lld input channels does not fit %lld input "
                            "channels in %lld groups",
                            (long long)w->dims[wm], (long long)w->dims[wc], (long long)g->c,
                            (long long)g->group);
    const char *ap = pc_node_attr_string(k->node, "auto_pad", "NOTSET");
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    if (strcmp(ap, "NOTSET") == 0) {
        size_t np;
        const int64_t *pads = pc_rt_attr_ints(k->node, "pads", &np);
        if (pads && np != 2 * (size_t)nsp)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "QLinearConv: pads has %zu values, expected %d", np,
                                2 * nsp);
        for (int i = 0; pads && i < 2 * nsp; i++)
            if (pads[i] < 0 || pads[i] > QC_MAX)
                return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "QLinearConv: pads[%d] = %lld is out of range",
                                    i, (long long)pads[i]);
        for (int i = 0; pads && i < nsp; i++) {
            pb[2 - nsp + i] = pads[i];
            pe[2 - nsp + i] = pads[nsp + i];
        }
    } else if (!same && strcmp(ap, "VALID") != 0) {
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "QLinearConv: auto_pad '%s' is not one ONNX defines",
                            ap);
    }
    /* the output size each axis must have; SAME_*: ceil(in / stride), the odd padding at the end (UPPER) */
    for (int i = 0; i < 2; i++) {
        int64_t kext = (ker[i] - 1) * dl[i] + 1, want;
        if (same) {
            want = in[i] / st[i] + (in[i] % st[i] != 0);
            int64_t total = (want > 0 ? want - 1 : 0) * st[i] + kext - in[i];
            total = total > 0 ? total : 0;
            pb[i] = ap[5] == 'U' ? total / 2 : total - total / 2;
        } else {
            int64_t padded = in[i] + pb[i] + pe[i];
            if (padded < kext)
                return pc_error_set(k->err, PC_ERR_SHAPE,
                                    "QLinearConv: the padded input (%lld) is smaller than the kernel (%lld)",
                                    (long long)padded, (long long)kext);
            want = (padded - kext) / st[i] + 1;
        }
        if (out[i] != want)
            return pc_error_set(k->err, PC_ERR_SHAPE, "QLinearConv: output spatial size %lld, expected %lld",
                                (long long)out[i], (long long)want);
    }
    if (y->dims[0] != g->n || y->dims[cax] != g->m)
        return pc_error_set(k->err, PC_ERR_SHAPE, "QLinearConv: Y is not [%lld images, %lld channels]",
                            (long long)g->n, (long long)g->m);
    g->h = in[0], g->w = in[1], g->oh = out[0], g->ow = out[1];
    g->kh = ker[0], g->kw = ker[1], g->sh = st[0], g->sw = st[1], g->dh = dl[0], g->dw = dl[1];
    g->ph = pb[0], g->pw = pb[1];
    g->cg = g->c / g->group;
    g->mg = g->m / g->group;
    uint64_t patch;
    if (g->c > QC_MAX || g->m > QC_MAX || !pc_u64_mul((uint64_t)g->cg, (uint64_t)(g->kh * g->kw), &patch) ||
        patch > ((uint64_t)1 << 40))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "QLinearConv: %lld channels and a %lld x %lld kernel are too large",
                            (long long)g->c, (long long)g->kh, (long long)g->kw);
    g->k = (int64_t)patch;
    g->kp = (g->k + 15) / 16 * 16;
    int64_t hp = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1,
            wp = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    hp = hp > g->h + g->ph ? hp : g->h + g->ph;
    wp = wp > g->w + g->pw ? wp : g->w + g->pw;
    g->hq = (hp + g->sh - 1) / g->sh;
    g->wq = (wp + g->sw - 1) / g->sw;
    g->pointwise = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 &&
                   g->oh == g->h && g->ow == g->w;
    /* a direct loop sums kh * kw products per output without chunks */
    g->depthwise = g->group > 1 && g->cg == 1 && g->mg == 1 && g->kh * g->kw <= DOT_CHUNK;
    /* Either W's packing or the patches are a transpose (W is [cg][kh * kw], the image channels last), and
     * either is redone every run: transpose the smaller, W (M rows) or the patches (one per output pixel) */
    g->w_order = g->kh * g->kw > 1 && !g->depthwise && !g->pointwise && g->oh * g->ow < g->m;
    return PC_OK;
}

/* Scratch: the centered image (channels last; NCHW depthwise: one channel's phase planes), packed weights,
 * an im2col tile, per-channel multipliers and bias, depthwise sums, the gemm's sums. */
typedef struct qconv_plan {
    size_t img, wts, col, mult, bias, acc, sums, total;
    int64_t tile; /* im2col rows per tile */
} qconv_plan;

static bool qconv_plan_make(const qconv_geom *g, qconv_plan *p)
{
    memset(p, 0, sizeof *p);
    int64_t pixels = g->oh * g->ow;
    p->tile = gemm_tile(g->kp);
    if (p->tile > pixels) p->tile = pixels;
    /* NCHW depthwise: one channel's phase planes (and a row of slack for the last tap's run) and plane of
     * sums; channels last: one pixel's channel sums */
    bool plane = g->depthwise && !g->nhwc;
    uint64_t phases = 0;
    size_t img = 0, wts, col = 0, mult, bias, acc = 0, sums = g->depthwise ? 0 : gemm_scratch();
    bool ok = plane ? pc_u64_mul((uint64_t)(g->sh * g->sw), (uint64_t)g->hq, &phases) &&
                          size_of3(phases + 1, (uint64_t)g->wq, sizeof(int16_t), &img)
                    : size_of3((uint64_t)g->c, (uint64_t)(g->h * g->w), sizeof(int16_t), &img);
    ok = ok &&
         size_of3((uint64_t)g->m, (uint64_t)(g->depthwise ? g->kh * g->kw : g->kp), sizeof(int16_t), &wts) &&
         size_of3((uint64_t)g->m, 1, sizeof(float), &mult) &&
         size_of3((uint64_t)g->m, 1, sizeof(int32_t), &bias);
    if (ok && !g->depthwise && !g->pointwise)
        ok = size_of3((uint64_t)p->tile, (uint64_t)g->kp, sizeof(int16_t), &col);
    if (ok && g->depthwise)
        ok = plane ? size_of3((uint64_t)g->oh, (uint64_t)g->wq, sizeof(int32_t), &acc)
                   : size_of3((uint64_t)g->c, 1, sizeof(int32_t), &acc);
    return ok && plan_take(&p->total, img, &p->img) && plan_take(&p->total, wts, &p->wts) &&
           plan_take(&p->total, col, &p->col) && plan_take(&p->total, mult, &p->mult) &&
           plan_take(&p->total, bias, &p->bias) && plan_take(&p->total, acc, &p->acc) &&
           plan_take(&p->total, sums, &p->sums);
}

static pc_status qconv_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = need_inputs(k, 8, 9);
    if (st != PC_OK) return st;
    pc_dtype yt = k->in[QC_YZ]->dtype;
    if ((st = need_type(k, QC_X, is_q8(k->in[QC_X]->dtype), "x", "int8 or uint8")) != PC_OK ||
        (st = need_type(k, QC_W, is_q8(k->in[QC_W]->dtype), "w", "int8 or uint8")) != PC_OK ||
        (st = need_type(k, QC_YZ, is_q8(yt), "y_zero_point", "int8 or uint8")) != PC_OK ||
        (st = need_zp_type(k, QC_XZ, QC_X, "x_zero_point")) != PC_OK ||
        (st = need_zp_type(k, QC_WZ, QC_W, "w_zero_point")) != PC_OK ||
        (st = need_scale(k, QC_XS, "x_scale")) != PC_OK || (st = need_scale(k, QC_WS, "w_scale")) != PC_OK ||
        (st = need_scale(k, QC_YS, "y_scale")) != PC_OK || (st = need_out_type(k, yt)) != PC_OK)
        return st;
    if ((st = need_one(k, QC_XS, "x_scale")) != PC_OK || (st = need_one(k, QC_XZ, "x_zero_point")) != PC_OK ||
        (st = need_one(k, QC_YS, "y_scale")) != PC_OK || (st = need_one(k, QC_YZ, "y_zero_point")) != PC_OK)
        return st;
    qconv_geom g;
    if ((st = qconv_geometry(k, &g)) != PC_OK) return st;
    const pc_rt_tensor *ws = k->in[QC_WS], *wz = k->in[QC_WZ], *b = opt_in(k, QC_B);
    if ((ws->n != 1 && (ws->rank != 1 || ws->dims[0] != g.m)) ||
        (wz->n != 1 && (wz->rank != 1 || wz->dims[0] != g.m)))
        return pc_error_set(
            k->err, PC_ERR_SHAPE,
            "QLinearConv: w_scale and w_zero_point must hold one value or one per output channel (%lld)",
            (long long)g.m);
    if (b && (b->dtype != PC_DTYPE_INT32 || b->rank != 1 || b->dims[0] != g.m))
        return pc_error_set(k->err, PC_ERR_SHAPE, "QLinearConv: the bias must be int32 [%lld]",
                            (long long)g.m);
    qconv_plan p;
    if (!qconv_plan_make(&g, &p))
        return pc_error_set(k->err, PC_ERR_OVERFLOW, "QLinearConv: the scratch size overflows");
    *scratch_bytes = p.total;
    return PC_OK;
}

/* x - x_zero_point as int16, channels last: img[(h * W + w) * C + c] */
typedef void (*center_fn)(const void *x, const qconv_geom *g, int32_t zp, int16_t *img);
/* W [M, Cg, kh, kw] (or HWIO [kh, kw, Cg, M]) minus its zero point: depthwise as [kh * kw, C], else rows
 * [M][kh][kw][Cg] kp apart */
typedef void (*pack_w_fn)(const void *w, const pc_rt_tensor *zp, const qconv_geom *g, int16_t *wts);
#define QCONV_PACKS(sfx, T)                                                                                  \
    static void center_##sfx(const void *xv, const qconv_geom *g, int32_t zp, int16_t *img)                  \
    {                                                                                                        \
        const T *x = xv;                                                                                     \
        int64_t hw = g->h * g->w;                                                                            \
        if (g->nhwc) {                                                                                       \
            for (int64_t i = 0; i < hw * g->c; i++)                                                          \
                img[i] = (int16_t)(x[i] - zp);                                                               \
            return;                                                                                          \
        }                                                                                                    \
        /* the transpose 8 channels at a time: 8 sequential reads, one 16-byte write per pixel */            \
        for (int64_t c0 = 0; c0 < g->c; c0 += 8) {                                                           \
            int64_t nc = g->c - c0 < 8 ? g->c - c0 : 8;                                                      \
            for (int64_t p = 0; p < hw; p++)                                                                 \
                for (int64_t c = 0; c < nc; c++)                                                             \
                    img[p * g->c + c0 + c] = (int16_t)(x[(c0 + c) * hw + p] - zp);                           \
        }                                                                                                    \
    }                                                                                                        \
    static void pack_w_##sfx(const void *wv, const pc_rt_tensor *zp, const qconv_geom *g, int16_t *wts)      \
    {                                                                                                        \
        const T *w = wv;                                                                                     \
        int64_t kk = g->kh * g->kw;                                                                          \
        /* element (m, c, tap): OIHW at (m * cg + c) * kk + tap, HWIO at (tap * cg + c) * M + m */           \
        int64_t sm = g->hwio ? 1 : g->cg * kk, sc = g->hwio ? g->m : kk, st = g->hwio ? g->cg * g->m : 1;    \
        for (int64_t m = 0; m < g->m; m++) {                                                                 \
            int32_t z = zp_at(zp, zp->n == 1 ? 0 : (uint64_t)m);                                             \
            const T *wm = w + m * sm;                                                                        \
            if (g->depthwise) {                                                                              \
                for (int64_t t = 0; t < kk; t++)                                                             \
                    wts[t * g->c + m] = (int16_t)(wm[t * st] - z);                                           \
                continue;                                                                                    \
            }                                                                                                \
            int16_t *row = wts + m * g->kp;                                                                  \
            if (g->w_order)                                                                                  \
                for (int64_t c = 0; c < g->cg; c++)                                                          \
                    for (int64_t t = 0; t < kk; t++)                                                         \
                        row[c * kk + t] = (int16_t)(wm[c * sc + t * st] - z);                                \
            else                                                                                             \
                for (int64_t c = 0; c < g->cg; c++)                                                          \
                    for (int64_t t = 0; t < kk; t++)                                                         \
                        row[t * g->cg + c] = (int16_t)(wm[c * sc + t * st] - z);                             \
            memset(row + g->k, 0, (size_t)(g->kp - g->k) * sizeof *row);                                     \
        }                                                                                                    \
    }
QCONV_PACKS(u8, uint8_t)
QCONV_PACKS(i8, int8_t)

/* im2col rows of output pixels [p0, p0 + np) for the group whose channels start at c0: each row the patch
 * (kh, kw, cg), or (cg, kh, kw) in W's order, then zeros up to kp; taps in the padding read 0 (x at its
 * zero point). Without groups and dilation a kernel row inside the image is one run of kw * C values. */
static void im2col(const qconv_geom *g, const int16_t *img, int64_t c0, int64_t p0, int64_t np, int16_t *col)
{
    size_t run = (size_t)g->cg * sizeof *col;
    if (g->w_order) {
        int64_t kk = g->kh * g->kw;
        for (int64_t q = 0; q < np; q++) {
            int64_t p = p0 + q, oh = p / g->ow, ow = p % g->ow;
            int16_t *r = col + q * g->kp;
            for (int64_t a = 0; a < g->kh; a++)
                for (int64_t b = 0; b < g->kw; b++) {
                    int64_t ih = oh * g->sh - g->ph + a * g->dh, iw = ow * g->sw - g->pw + b * g->dw;
                    int16_t *rt = r + a * g->kw + b;
                    if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w) {
                        for (int64_t c = 0; c < g->cg; c++)
                            rt[c * kk] = 0;
                        continue;
                    }
                    const int16_t *src = img + (ih * g->w + iw) * g->c + c0;
                    for (int64_t c = 0; c < g->cg; c++)
                        rt[c * kk] = src[c];
                }
            memset(r + g->k, 0, (size_t)(g->kp - g->k) * sizeof *r);
        }
        return;
    }
    bool whole_rows = g->group == 1 && g->dw == 1;
    for (int64_t q = 0; q < np; q++) {
        int64_t p = p0 + q, oh = p / g->ow, ow = p % g->ow, iw0 = ow * g->sw - g->pw;
        int16_t *r = col + q * g->kp;
        for (int64_t a = 0; a < g->kh; a++) {
            int64_t ih = oh * g->sh - g->ph + a * g->dh;
            if (ih < 0 || ih >= g->h) {
                memset(r, 0, (size_t)g->kw * run);
                r += g->kw * g->cg;
                continue;
            }
            const int16_t *row = img + ih * g->w * g->c + c0;
            if (whole_rows && iw0 >= 0 && iw0 + g->kw <= g->w) {
                memcpy(r, row + iw0 * g->c, (size_t)g->kw * run);
                r += g->kw * g->cg;
                continue;
            }
            for (int64_t b = 0; b < g->kw; b++, r += g->cg) {
                int64_t iw = iw0 + b * g->dw;
                if (iw < 0 || iw >= g->w)
                    memset(r, 0, run);
                else
                    memcpy(r, row + iw * g->c, run);
            }
        }
        memset(r, 0, (size_t)(g->kp - g->k) * sizeof *r);
    }
}

/* Depthwise convolution (one input and one output channel per group); the sums of at most DOT_CHUNK taps
 * cannot overflow.
 *   NCHW, per channel: the plane minus its zero point as int16, zero-padded and split into stride phases
 *   (padded row r goes to row phase r % sh at r / sh, column likewise), and the plane of sums laid out with
 *   the phases' row pitch wq: then a tap adds one contiguous run of a phase to the whole plane of sums
 *   (columns past the output's width are computed and dropped);
 *   channels last, per output pixel: each tap's channels times the weights [kh * kw, C], summed along the
 *   channels. */

typedef void (*dw_phases_fn)(const void *x, const qconv_geom *g, int64_t c, int32_t zp, int16_t *ph);
#define DW_PHASES(TS, T)                                                                                     \
    static void dw_phases_##TS(const void *xv, const qconv_geom *g, int64_t c, int32_t zp, int16_t *ph)      \
    {                                                                                                        \
        const T *x = (const T *)xv + c * g->h * g->w;                                                        \
        int64_t hq = g->hq, wq = g->wq;                                                                      \
        memset(ph, 0, (size_t)((g->sh * g->sw * hq + 1) * wq) * sizeof *ph);                                 \
        for (int64_t ih = 0; ih < g->h; ih++) {                                                              \
            int64_t r = ih + g->ph;                                                                          \
            int16_t *row = ph + ((r % g->sh) * g->sw * hq + r / g->sh) * wq;                                 \
            const T *xr = x + ih * g->w;                                                                     \
            /* phase q holds padded columns u * sw + q, i.e. x's columns iw = u * sw + q - pw in [0, W) */   \
            for (int64_t q = 0; q < g->sw; q++) {                                                            \
                int64_t u0 = g->pw - q > 0 ? (g->pw - q + g->sw - 1) / g->sw : 0;                            \
                int64_t u1 = (g->w + g->pw - q + g->sw - 1) / g->sw;                                         \
                int16_t *dst = row + q * hq * wq;                                                            \
                int64_t base = q - g->pw;                                                                    \
                if (g->sw == 1)                                                                              \
                    for (int64_t u = u0; u < u1; u++)                                                        \
                        dst[u] = (int16_t)(xr[base + u] - zp);                                               \
                else                                                                                         \
                    for (int64_t u = u0; u < u1; u++)                                                        \
                        dst[u] = (int16_t)(xr[base + u * g->sw] - zp);                                       \
            }                                                                                                \
        }                                                                                                    \
    }
DW_PHASES(u8, uint8_t)
DW_PHASES(i8, int8_t)

#define DW_IMPL(SFX, ATTR)                                                                                   \
    ATTR static void dw_plane_##SFX(const qconv_geom *g, const int16_t *ph, const int16_t *wts, int64_t c,   \
                                    int32_t *acc)                                                            \
    {                                                                                                        \
        int64_t hq = g->hq, wq = g->wq, n = g->oh * wq;                                                      \
        memset(acc, 0, (size_t)n * sizeof *acc);                                                             \
        for (int64_t a = 0; a < g->kh; a++)                                                                  \
            for (int64_t b = 0; b < g->kw; b++) {                                                            \
                int16_t wv = wts[(a * g->kw + b) * g->c + c];                                                \
                /* padded row oh * sh + a * dh: phase (a * dh) % sh, row oh + (a * dh) / sh; columns alike   \
                 */                                                                                          \
                int64_t rr = (a * g->dh) % g->sh, dr = (a * g->dh) / g->sh;                                  \
                int64_t qc = (b * g->dw) % g->sw, dc = (b * g->dw) / g->sw;                                  \
                const int16_t *src = ph + ((rr * g->sw + qc) * hq + dr) * wq + dc;                           \
                for (int64_t i = 0; i < n; i++)                                                              \
                    acc[i] += src[i] * wv;                                                                   \
            }                                                                                                \
    }                                                                                                        \
    ATTR static void dw_nhwc_##SFX(const qconv_geom *g, const int16_t *img, const int16_t *wts,              \
                                   const int32_t *bias, int32_t *acc, const gemm_out *o)                     \
    {                                                                                                        \
        for (int64_t oh = 0; oh < g->oh; oh++)                                                               \
            for (int64_t ow = 0; ow < g->ow; ow++) {                                                         \
                memset(acc, 0, (size_t)g->c * sizeof *acc);                                                  \
                for (int64_t a = 0; a < g->kh; a++) {                                                        \
                    int64_t ih = oh * g->sh - g->ph + a * g->dh;                                             \
                    if (ih < 0 || ih >= g->h) continue;                                                      \
                    for (int64_t b = 0; b < g->kw; b++) {                                                    \
                        int64_t iw = ow * g->sw - g->pw + b * g->dw;                                         \
                        if (iw < 0 || iw >= g->w) continue;                                                  \
                        const int16_t *xp = img + (ih * g->w + iw) * g->c;                                   \
                        const int16_t *wp = wts + (a * g->kw + b) * g->c;                                    \
                        for (int64_t c = 0; c < g->c; c++)                                                   \
                            acc[c] += xp[c] * wp[c];                                                         \
                    }                                                                                        \
                }                                                                                            \
                requant_vec(acc, g->c, bias, o->mult, o, o->y8 + (oh * g->ow + ow) * g->c);                  \
            }                                                                                                \
    }

DW_IMPL(base, )
#ifdef QUANT_AVX2
DW_IMPL(avx2, QUANT_AVX2_ATTR)
#endif

typedef void (*dw_plane_fn)(const qconv_geom *g, const int16_t *ph, const int16_t *wts, int64_t c,
                            int32_t *acc);
typedef void (*dw_nhwc_fn)(const qconv_geom *g, const int16_t *img, const int16_t *wts, const int32_t *bias,
                           int32_t *acc, const gemm_out *o);

static pc_status qconv_run(pc_rt_kernel_ctx *k)
{
    qconv_geom g;
    qconv_plan p;
    pc_status st = qconv_geometry(k, &g);
    if (st != PC_OK) return st;
    if (!qconv_plan_make(&g, &p) || p.total > k->scratch_bytes)
        return pc_error_set(k->err, PC_ERR_INTERNAL, "QLinearConv: scratch smaller than planned");
    if (k->out[0]->n == 0) return PC_OK;
    const pc_rt_tensor *x = k->in[QC_X], *w = k->in[QC_W], *ws = k->in[QC_WS], *b = opt_in(k, QC_B);
    char *scratch = k->scratch;
    int16_t *img = (int16_t *)(scratch + p.img), *wts = (int16_t *)(scratch + p.wts);
    int16_t *col = (int16_t *)(scratch + p.col);
    float *mult = (float *)(scratch + p.mult);
    int32_t *bias = (int32_t *)(scratch + p.bias), *acc = (int32_t *)(scratch + p.acc);
    int32_t *sums = (int32_t *)(scratch + p.sums);

    /* multipliers as the reference forms them: float(x_scale * w_scale[m]) / y_scale; bias 0 when absent */
    float xs = f32_at(k->in[QC_XS], 0), ys = f32_at(k->in[QC_YS], 0);
    for (int64_t m = 0; m < g.m; m++) {
        mult[m] = (xs * f32_at(ws, ws->n == 1 ? 0 : (uint64_t)m)) / ys;
        bias[m] = b ? ((const int32_t *)b->data)[m] : 0;
    }
    int32_t zp = zp_at(k->in[QC_YZ], 0), qlo, qhi;
    q8_range(k->out[0]->dtype, &qlo, &qhi);
    if (g.relu) qlo = zp; /* Relu: clamp at the zero point */
    int64_t ohw = g.oh * g.ow;
    /* NCHW: out(m, pixel), rows of W against patches; channels last: out(pixel, m), the other way round */
    gemm_out o = {.y8 = NULL,
                  .si = g.nhwc ? g.m : ohw,
                  .mult = mult,
                  .mi = !g.nhwc,
                  .mj = g.nhwc,
                  .bias = bias,
                  .bi = !g.nhwc,
                  .bj = g.nhwc,
                  .lo = (float)(qlo - zp),
                  .hi = (float)(qhi - zp),
                  .zp = zp};

    bool x_u8 = x->dtype == PC_DTYPE_UINT8;
    center_fn center = x_u8 ? center_u8 : center_i8;
    dw_phases_fn dw_phases = x_u8 ? dw_phases_u8 : dw_phases_i8;
    dw_plane_fn dw_plane = dw_plane_base;
    dw_nhwc_fn dw_nhwc = dw_nhwc_base;
#ifdef QUANT_AVX2
    if (cpu_avx2()) {
        dw_plane = dw_plane_avx2;
        dw_nhwc = dw_nhwc_avx2;
    }
#endif
    pack_w_fn pack_w = w->dtype == PC_DTYPE_UINT8 ? pack_w_u8 : pack_w_i8;
    pack_w(w->data, k->in[QC_WZ], &g, wts);
    int32_t xzp = zp_at(k->in[QC_XZ], 0);
    size_t xbytes = (size_t)(g.c * g.h * g.w);
    for (int64_t n = 0; n < g.n; n++) {
        const uint8_t *xn = (const uint8_t *)x->data + (size_t)n * xbytes;
        o.y8 = (uint8_t *)k->out[0]->data + n * g.m * ohw;
        if (g.depthwise && !g.nhwc) { /* plane by plane */
            for (int64_t c = 0; c < g.c; c++) {
                dw_phases(xn, &g, c, xzp, img);
                dw_plane(&g, img, wts, c, acc);
                for (int64_t oh = 0; oh < g.oh; oh++)
                    requant_row(acc + oh * g.wq, g.ow, bias[c], mult[c], &o, o.y8 + c * ohw + oh * g.ow);
            }
            continue;
        }
        center(xn, &g, xzp, img);
        if (g.depthwise) {
            dw_nhwc(&g, img, wts, bias, acc, &o);
            continue;
        }
        for (int64_t gi = 0; gi < g.group; gi++) {
            int64_t c0 = gi * g.cg, m0 = gi * g.mg;
            const int16_t *a = wts + m0 * g.kp;
            if (g.pointwise) { /* the image's pixels are the patches */
                if (g.nhwc)
                    gemm_s16(img + c0, g.c, ohw, a, g.kp, g.mg, g.cg, &o, 0, m0, sums);
                else
                    gemm_s16(a, g.kp, g.mg, img + c0, g.c, ohw, g.cg, &o, m0, 0, sums);
                continue;
            }
            for (int64_t p0 = 0; p0 < ohw; p0 += p.tile) {
                int64_t np = ohw - p0 < p.tile ? ohw - p0 : p.tile;
                im2col(&g, img, c0, p0, np, col);
                if (g.nhwc)
                    gemm_s16(col, g.kp, np, a, g.kp, g.mg, g.kp, &o, p0, m0, sums);
                else
                    gemm_s16(a, g.kp, g.mg, col, g.kp, np, g.kp, &o, m0, p0, sums);
            }
        }
    }
    return PC_OK;
}

/* ---- QLinearMatMul, MatMulInteger */

/* How a scale or zero point of a MatMul operand varies: one value, per row of A, per column of B. */
typedef enum { MP_TENSOR, MP_ROW, MP_COL } mm_param;

typedef struct mm_geom {
    int64_t m, k, n;                                           /* one product: [m, k] x [k, n] */
    int32_t nb;                                                /* batch axes of the output */
    int64_t bd[PC_MAX_RANK], sa[PC_MAX_RANK], sb[PC_MAX_RANK]; /* batch dims; A's and B's matrix strides */
    uint64_t batches;
    bool b_shared; /* B has no batch axes */
} mm_geom;

/* numpy.matmul shapes: 1-D A is a row, 1-D B a column; batch axes broadcast to the output's. */
static pc_status mm_geometry(pc_rt_kernel_ctx *k, uint32_t ia, uint32_t ib, mm_geom *g)
{
    const pc_rt_tensor *a = k->in[ia], *b = k->in[ib], *y = k->out[0];
    memset(g, 0, sizeof *g);
    if (a->rank < 1 || b->rank < 1)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: A and B must have rank >= 1", k->node->op_type);
    g->m = a->rank > 1 ? a->dims[a->rank - 2] : 1;
    g->k = a->dims[a->rank - 1];
    g->n = b->rank > 1 ? b->dims[b->rank - 1] : 1;
    int64_t kb = b->rank > 1 ? b->dims[b->rank - 2] : b->dims[0];
    int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    g->nb = y->rank - (a->rank > 1) - (b->rank > 1);
    bool ok = kb == g->k && g->nb >= ba && g->nb >= bb && (a->rank < 2 || y->dims[g->nb] == g->m) &&
              (b->rank < 2 || y->dims[y->rank - 1] == g->n);
    int64_t s = g->m * g->k;
    for (int32_t d = ba - 1; ok && d >= 0; d--) {
        int64_t yd = y->dims[g->nb - ba + d];
        ok = a->dims[d] == yd || a->dims[d] == 1;
        g->sa[g->nb - ba + d] = a->dims[d] == 1 ? 0 : s;
        s *= a->dims[d];
    }
    s = g->k * g->n;
    for (int32_t d = bb - 1; ok && d >= 0; d--) {
        int64_t yd = y->dims[g->nb - bb + d];
        ok = b->dims[d] == yd || b->dims[d] == 1;
        g->sb[g->nb - bb + d] = b->dims[d] == 1 ? 0 : s;
        s *= b->dims[d];
    }
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: A, B and Y do not make a matrix product",
                            k->node->op_type);
    g->batches = 1;
    for (int32_t d = 0; d < g->nb; d++) {
        g->bd[d] = y->dims[d];
        g->batches *= (uint64_t)y->dims[d];
    }
    g->b_shared = b->rank <= 2;
    return PC_OK;
}

/* The reference's parameter rules (one value; A's 1-D per row; else unidirectional broadcast to the
 * operand), of which one value, A's rows and B's columns are implemented. */
static pc_status mm_param_get(pc_rt_kernel_ctx *k, uint32_t i, uint32_t iv, bool is_a, const char *what,
                              mm_param *kind)
{
    const pc_rt_tensor *t = opt_in(k, i), *v = k->in[iv];
    *kind = MP_TENSOR;
    if (!t || t->n == 1) return PC_OK;
    if (is_a && t->rank == 1 && v->rank >= 2) {
        if (t->dims[0] != v->dims[v->rank - 2])
            return pc_error_set(k->err, PC_ERR_SHAPE, "%s: %s per row must have %lld elements",
                                k->node->op_type, what, (long long)v->dims[v->rank - 2]);
        *kind = MP_ROW;
        return PC_OK;
    }
    if (t->rank > v->rank)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: %s has a higher rank than its operand",
                            k->node->op_type, what);
    int32_t off = v->rank - t->rank, varying = -1, n_varying = 0;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] != 1 && t->dims[d] != v->dims[off + d])
            return pc_error_set(k->err, PC_ERR_SHAPE, "%s: %s does not broadcast to its operand",
                                k->node->op_type, what);
        if (t->dims[d] != 1) {
            varying = off + d;
            n_varying++;
        }
    }
    if (n_varying == 1 && v->rank >= 2 && varying == v->rank - (is_a ? 2 : 1)) {
        *kind = is_a ? MP_ROW : MP_COL;
        return PC_OK;
    }
    return pc_error_set(
        k->err, PC_ERR_UNSUPPORTED,
        "%s: %s varies along axes other than %s (only one value, A's rows and B's columns are "
        "implemented)",
        k->node->op_type, what, is_a ? "A's rows" : "B's columns");
}

/* rows [row0, row0 + rows) of a row-major [*, k] matrix minus their zero points (row r's: zp[r % m] when per
 * row) into int16 */
typedef void (*pack_a_fn)(const void *a, int64_t rows, int64_t row0, int64_t m, int64_t k,
                          const pc_rt_tensor *zp, bool per_row, int16_t *dst);
/* B [k, n] minus zero points (per column or one), transposed into int16 [n, k] */
typedef void (*pack_bt_fn)(const void *b, int64_t k, int64_t n, const pc_rt_tensor *zp, bool per_col,
                           int16_t *dst);
/* acc[j] = sum_i a[i] * (b[i][j] - zp[j]) for one centered row a, B read row by row as it lies */
typedef void (*axpy_fn)(const int16_t *a, int64_t k, const void *b, int64_t n, const int16_t *zp,
                        int32_t *acc);
#define MM_PACKS(sfx, T)                                                                                     \
    static void pack_a_##sfx(const void *av, int64_t rows, int64_t row0, int64_t m, int64_t k,               \
                             const pc_rt_tensor *zp, bool per_row, int16_t *dst)                             \
    {                                                                                                        \
        const T *a = (const T *)av + row0 * k;                                                               \
        for (int64_t r = 0; r < rows; r++) {                                                                 \
            int32_t z = zp_at(zp, per_row ? (uint64_t)((row0 + r) % m) : 0);                                 \
            for (int64_t i = 0; i < k; i++)                                                                  \
                dst[r * k + i] = (int16_t)(a[r * k + i] - z);                                                \
        }                                                                                                    \
    }                                                                                                        \
    static void pack_bt_##sfx(const void *bv, int64_t k, int64_t n, const pc_rt_tensor *zp, bool per_col,    \
                              int16_t *dst)                                                                  \
    {                                                                                                        \
        const T *b = bv;                                                                                     \
        /* 32 columns at a time: each row of B read as a run, 32 rows of dst written along */                \
        for (int64_t j0 = 0; j0 < n; j0 += 32) {                                                             \
            int64_t nj = n - j0 < 32 ? n - j0 : 32;                                                          \
            int32_t z[32];                                                                                   \
            for (int64_t j = 0; j < nj; j++)                                                                 \
                z[j] = zp_at(zp, per_col ? (uint64_t)(j0 + j) : 0);                                          \
            for (int64_t i = 0; i < k; i++)                                                                  \
                for (int64_t j = 0; j < nj; j++)                                                             \
                    dst[(j0 + j) * k + i] = (int16_t)(b[i * n + j0 + j] - z[j]);                             \
        }                                                                                                    \
    }
MM_PACKS(u8, uint8_t)
MM_PACKS(i8, int8_t)

/* per B type and instruction set; two rows of B per pass over the sums */
#define MM_AXPY(SFX, ATTR, TS, T)                                                                            \
    ATTR static void axpy_##TS##_##SFX(const int16_t *a, int64_t k, const void *bv, int64_t n,               \
                                       const int16_t *zp, int32_t *acc)                                      \
    {                                                                                                        \
        const T *b = bv;                                                                                     \
        memset(acc, 0, (size_t)n * sizeof *acc);                                                             \
        int64_t i = 0;                                                                                       \
        for (; i + 1 < k; i += 2) {                                                                          \
            int16_t a0 = a[i], a1 = a[i + 1];                                                                \
            const T *b0 = b + i * n, *b1 = b0 + n;                                                           \
            for (int64_t j = 0; j < n; j++)                                                                  \
                acc[j] += a0 * (int16_t)(b0[j] - zp[j]) + a1 * (int16_t)(b1[j] - zp[j]);                     \
        }                                                                                                    \
        for (; i < k; i++) {                                                                                 \
            int16_t a0 = a[i];                                                                               \
            const T *b0 = b + i * n;                                                                         \
            for (int64_t j = 0; j < n; j++)                                                                  \
                acc[j] += a0 * (int16_t)(b0[j] - zp[j]);                                                     \
        }                                                                                                    \
    }
#define MM_AXPY_IMPL(SFX, ATTR)                                                                              \
    MM_AXPY(SFX, ATTR, u8, uint8_t)                                                                          \
    MM_AXPY(SFX, ATTR, i8, int8_t)
MM_AXPY_IMPL(base, )
#ifdef QUANT_AVX2
MM_AXPY_IMPL(avx2, QUANT_AVX2_ATTR)
#endif

/* The two ops' inputs: A, B and their optional zero points; QLinearMatMul's scales and output params. */
typedef struct mm_spec {
    uint32_t a, b, az, bz;
    bool qlinear;
    uint32_t as, bs, ys, yz;
} mm_spec;

static const mm_spec qlinear_matmul_spec = {0, 3, 2, 5, true, 1, 4, 6, 7};
static const mm_spec matmul_integer_spec = {0, 1, 2, 3, false, 0, 0, 0, 0};

/* A product of at most this many rows reads B as it lies: transposing B costs about as much as 9 rows of
 * the row-by-row product more than of the gemm (measured), whatever the sizes. */
enum { MM_AXPY_ROWS = 8 };

typedef struct mm_plan {
    mm_param az, bz, as, bs;
    bool fold; /* B shared and no per-row multiplier: every batch's rows in one gemm */
    bool axpy; /* few rows: row by row against B as it lies */
    size_t a16, b16, mult, zeros, sums, total;
} mm_plan;

static pc_status mm_plan_make(pc_rt_kernel_ctx *k, const mm_spec *sp, mm_geom *g, mm_plan *p)
{
    memset(p, 0, sizeof *p);
    pc_status st = mm_geometry(k, sp->a, sp->b, g);
    if (st != PC_OK || (st = mm_param_get(k, sp->az, sp->a, true, "a_zero_point", &p->az)) != PC_OK ||
        (st = mm_param_get(k, sp->bz, sp->b, false, "b_zero_point", &p->bz)) != PC_OK)
        return st;
    if (sp->qlinear && ((st = mm_param_get(k, sp->as, sp->a, true, "a_scale", &p->as)) != PC_OK ||
                        (st = mm_param_get(k, sp->bs, sp->b, false, "b_scale", &p->bs)) != PC_OK))
        return st;
    p->fold = g->b_shared && p->as != MP_ROW;
    uint64_t rows = p->fold ? g->batches * (uint64_t)g->m : (uint64_t)g->m;
    /* the row by row sums are not chunked: K within one chunk */
    p->axpy = rows <= MM_AXPY_ROWS && g->k <= DOT_CHUNK;
    uint64_t nm = p->as == MP_ROW && p->bs == MP_COL ? (uint64_t)(g->m * g->n)
                  : g->m > g->n                      ? (uint64_t)g->m
                                                     : (uint64_t)g->n;
    uint64_t n = (uint64_t)g->n;
    size_t a16, b16, mult, zeros, sums;
    bool ok = p->axpy
                  ? size_of3(1, (uint64_t)g->k, sizeof(int16_t), &a16) &&
                        size_of3(n, 1, sizeof(int16_t), &b16) && size_of3(n, 1, sizeof(int32_t), &sums)
                  : size_of3(rows, (uint64_t)g->k, sizeof(int16_t), &a16) &&
                        size_of3(n, (uint64_t)g->k, sizeof(int16_t), &b16) && (sums = gemm_scratch(), true);
    if (!ok || !size_of3(nm ? nm : 1, 1, sizeof(float), &mult) ||
        !size_of3(n ? n : 1, 1, sizeof(int32_t), &zeros) || !plan_take(&p->total, a16, &p->a16) ||
        !plan_take(&p->total, b16, &p->b16) || !plan_take(&p->total, mult, &p->mult) ||
        !plan_take(&p->total, zeros, &p->zeros) || !plan_take(&p->total, sums, &p->sums))
        return pc_error_set(k->err, PC_ERR_OVERFLOW, "%s: the scratch size overflows", k->node->op_type);
    return PC_OK;
}

static pc_status mm_prepare(pc_rt_kernel_ctx *k, const mm_spec *sp, size_t *scratch_bytes)
{
    pc_status st = need_inputs(k, sp->qlinear ? 8 : 2, sp->qlinear ? 8 : 4);
    if (st != PC_OK) return st;
    if ((st = need_type(k, sp->a, is_q8(k->in[sp->a]->dtype), "A", "int8 or uint8")) != PC_OK ||
        (st = need_type(k, sp->b, is_q8(k->in[sp->b]->dtype), "B", "int8 or uint8")) != PC_OK ||
        (st = need_zp_type(k, sp->az, sp->a, "a_zero_point")) != PC_OK ||
        (st = need_zp_type(k, sp->bz, sp->b, "b_zero_point")) != PC_OK)
        return st;
    if (sp->qlinear) {
        pc_dtype yt = k->in[sp->yz]->dtype;
        if ((st = need_type(k, sp->yz, is_q8(yt), "y_zero_point", "int8 or uint8")) != PC_OK ||
            (st = need_scale(k, sp->as, "a_scale")) != PC_OK ||
            (st = need_scale(k, sp->bs, "b_scale")) != PC_OK ||
            (st = need_scale(k, sp->ys, "y_scale")) != PC_OK || (st = need_out_type(k, yt)) != PC_OK)
            return st;
        if (k->in[sp->ys]->n != 1 || k->in[sp->yz]->n != 1)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                "QLinearMatMul: a per-axis output scale or zero point");
    } else if ((st = need_out_type(k, PC_DTYPE_INT32)) != PC_OK) {
        return st;
    }
    mm_geom g;
    mm_plan p;
    if ((st = mm_plan_make(k, sp, &g, &p)) != PC_OK) return st;
    *scratch_bytes = p.total;
    return PC_OK;
}

static pc_status mm_run(pc_rt_kernel_ctx *k, const mm_spec *sp)
{
    mm_geom g;
    mm_plan p;
    pc_status st = mm_plan_make(k, sp, &g, &p);
    if (st != PC_OK) return st;
    if (p.total > k->scratch_bytes)
        return pc_error_set(k->err, PC_ERR_INTERNAL, "%s: scratch smaller than planned", k->node->op_type);
    if (k->out[0]->n == 0) return PC_OK;
    const pc_rt_tensor *a = k->in[sp->a], *b = k->in[sp->b];
    char *scratch = k->scratch;
    int16_t *a16 = (int16_t *)(scratch + p.a16), *b16 = (int16_t *)(scratch + p.b16);
    float *mult = (float *)(scratch + p.mult);
    int32_t *zeros = (int32_t *)(scratch + p.zeros), *sums = (int32_t *)(scratch + p.sums);
    memset(zeros, 0, (size_t)g.n * sizeof *zeros);
    gemm_out o = {.si = g.n, .bias = zeros};
    if (sp->qlinear) {
        /* float(a_scale * b_scale) / y_scale, per output element's row and column as the params vary */
        const pc_rt_tensor *as = k->in[sp->as], *bs = k->in[sp->bs];
        float ys = f32_at(k->in[sp->ys], 0);
        int64_t rows = p.as == MP_ROW ? g.m : 1, cols = p.bs == MP_COL ? g.n : 1;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                mult[i * cols + j] = (f32_at(as, (uint64_t)i) * f32_at(bs, (uint64_t)j)) / ys;
        o.mult = mult;
        o.mi = p.as == MP_ROW ? cols : 0;
        o.mj = o.bj = p.bs == MP_COL;
        int32_t qlo, qhi;
        o.zp = zp_at(k->in[sp->yz], 0);
        q8_range(k->out[0]->dtype, &qlo, &qhi);
        o.lo = (float)(qlo - o.zp);
        o.hi = (float)(qhi - o.zp);
    }
    bool a_u8 = a->dtype == PC_DTYPE_UINT8, b_u8 = b->dtype == PC_DTYPE_UINT8;
    pack_a_fn pack_a = a_u8 ? pack_a_u8 : pack_a_i8;
    pack_bt_fn pack_bt = b_u8 ? pack_bt_u8 : pack_bt_i8;
    axpy_fn axpy = b_u8 ? axpy_u8_base : axpy_i8_base;
#ifdef QUANT_AVX2
    if (cpu_avx2()) axpy = b_u8 ? axpy_u8_avx2 : axpy_i8_avx2;
#endif
    const pc_rt_tensor *az = opt_in(k, sp->az), *bz = opt_in(k, sp->bz);
    bool a_rows = p.az == MP_ROW, b_cols = p.bz == MP_COL;
    const uint8_t *ad = a->data, *bd = b->data; /* 8-bit: element offsets are byte offsets */
    uint8_t *y8 = sp->qlinear ? k->out[0]->data : NULL;
    int32_t *y32 = sp->qlinear ? NULL : k->out[0]->data;
    if (p.fold && !p.axpy) {
        int64_t rows = (int64_t)g.batches * g.m;
        pack_bt(bd, g.k, g.n, bz, b_cols, b16);
        pack_a(ad, rows, 0, g.m, g.k, az, a_rows, a16);
        o.y8 = y8;
        o.y32 = y32;
        gemm_s16(a16, g.k, rows, b16, g.k, g.n, g.k, &o, 0, 0, sums);
        return PC_OK;
    }
    if (p.axpy) /* B's zero points as a row */
        for (int64_t j = 0; j < g.n; j++)
            b16[j] = (int16_t)zp_at(bz, b_cols ? (uint64_t)j : 0);
    int64_t oa = 0, ob = 0, packed_b = -1, cnt[PC_MAX_RANK] = {0};
    for (uint64_t t = 0; t < g.batches; t++) {
        int64_t at = (int64_t)t * g.m * g.n;
        o.y8 = y8 ? y8 + at : NULL;
        o.y32 = y32 ? y32 + at : NULL;
        if (p.axpy) {
            for (int64_t r = 0; r < g.m; r++) {
                pack_a(ad + oa, 1, r, g.m, g.k, az, a_rows, a16);
                axpy(a16, g.k, bd + ob, g.n, b16, sums);
                gemm_emit(&o, r, 0, g.n, sums);
            }
        } else {
            if (ob != packed_b) { /* broadcast batches reuse the packed B */
                pack_bt(bd + ob, g.k, g.n, bz, b_cols, b16);
                packed_b = ob;
            }
            pack_a(ad + oa, g.m, 0, g.m, g.k, az, a_rows, a16);
            gemm_s16(a16, g.k, g.m, b16, g.k, g.n, g.k, &o, 0, 0, sums);
        }
        for (int32_t d = g.nb - 1; d >= 0; d--) {
            oa += g.sa[d];
            ob += g.sb[d];
            if (++cnt[d] < g.bd[d]) break;
            oa -= g.sa[d] * g.bd[d];
            ob -= g.sb[d] * g.bd[d];
            cnt[d] = 0;
        }
    }
    return PC_OK;
}

/* ---- com.microsoft QLinearAdd: A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp? ----
 * c = saturate(rint((float(a - a_zp) * a_scale + float(b - b_zp) * b_scale) / c_scale) + c_zp), each step in
 * float as the reference computes it (bit-exact), A and B broadcast as numpy does. */
static pc_status qadd_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    /* A, A_scale, B, B_scale and C_scale are required; the zero points (2, 5, 7) may be absent */
    pc_status st = need_inputs(k, 2, 8);
    if (st != PC_OK) return st;
    static const uint32_t required[] = {3, 4, 6};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!opt_in(k, required[i]))
            return pc_error_set(k->err, PC_ERR_ARITY, "QLinearAdd: input %u is required", required[i]);
    pc_dtype t = k->in[0]->dtype;
    if ((st = need_type(k, 0, is_q8(t), "A", "int8 or uint8")) != PC_OK ||
        (st = need_type(k, 3, k->in[3]->dtype == t, "B", "A's type")) != PC_OK ||
        (st = need_zp_type(k, 2, 0, "A_zero_point")) != PC_OK ||
        (st = need_zp_type(k, 5, 0, "B_zero_point")) != PC_OK ||
        (st = need_zp_type(k, 7, 0, "C_zero_point")) != PC_OK ||
        (st = need_scale(k, 1, "A_scale")) != PC_OK || (st = need_scale(k, 4, "B_scale")) != PC_OK ||
        (st = need_scale(k, 6, "C_scale")) != PC_OK || (st = need_out_type(k, t)) != PC_OK)
        return st;
    static const char *const params[8] = {NULL,      "A_scale",      "A_zero_point", NULL,
                                          "B_scale", "B_zero_point", "C_scale",      "C_zero_point"};
    for (uint32_t i = 0; i < 8; i++) {
        const pc_rt_tensor *p = params[i] ? opt_in(k, i) : NULL;
        if (p && (p->n != 1 || p->rank > 1))
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "QLinearAdd: %s (input %u) must be a scalar or a 1-D tensor of one value",
                                params[i], i);
    }
    *scratch_bytes = 0;
    return PC_OK;
}

static pc_status qadd_run(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *a = k->in[0], *b = k->in[3];
    pc_rt_tensor *c = k->out[0];
    if (c->n == 0) return PC_OK;
    int64_t sa[PC_MAX_RANK], sb[PC_MAX_RANK], at[PC_MAX_RANK] = {0};
    pc_rt_broadcast_strides(a, c, sa);
    pc_rt_broadcast_strides(b, c, sb);
    float as = f32_at(k->in[1], 0), bs = f32_at(k->in[4], 0), cs = f32_at(k->in[6], 0);
    int32_t az = zp_at(opt_in(k, 2), 0), bz = zp_at(opt_in(k, 5), 0), cz = zp_at(opt_in(k, 7), 0), lo, hi;
    q8_range(c->dtype, &lo, &hi);
    bool u8 = a->dtype == PC_DTYPE_UINT8;
    int64_t ia = 0, ib = 0;
    for (uint64_t e = 0; e < c->n; e++) {
        int32_t qa = u8 ? ((const uint8_t *)a->data)[ia] : ((const int8_t *)a->data)[ia];
        int32_t qb = u8 ? ((const uint8_t *)b->data)[ib] : ((const int8_t *)b->data)[ib];
        /* three statements, as the reference: no contraction into a fused multiply-add */
        float va = (float)(qa - az) * as;
        float vb = (float)(qb - bz) * bs;
        float v = (va + vb) / cs;
        int32_t q = round_clamp(v, (float)(lo - cz), (float)(hi - cz)) + cz;
        if (u8)
            ((uint8_t *)c->data)[e] = (uint8_t)q;
        else
            ((int8_t *)c->data)[e] = (int8_t)q;
        /* the next coordinate of C, and A's and B's offsets with it */
        for (int32_t d = c->rank - 1; d >= 0; d--) {
            ia += sa[d];
            ib += sb[d];
            if (++at[d] < c->dims[d]) break;
            ia -= sa[d] * c->dims[d];
            ib -= sb[d] * c->dims[d];
            at[d] = 0;
        }
    }
    return PC_OK;
}

/* ---- the systolic EP's QLinearAdd: com.microsoft QLinearAdd over A and B of one shape (the array adds
 * elementwise, without broadcasting) ---- */
static pc_status systolic_add_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = qadd_prepare(k, scratch_bytes);
    if (st != PC_OK) return st;
    const pc_rt_tensor *a = k->in[0], *b = k->in[3];
    bool same = a->rank == b->rank;
    for (int32_t d = 0; same && d < a->rank; d++)
        same = a->dims[d] == b->dims[d];
    if (!same)
        return pc_error_set(
            k->err, PC_ERR_SHAPE,
            "QLinearAdd (systolic): A and B must have one shape, the array does not broadcast");
    return PC_OK;
}

/* ---- the systolic EP's QLinearRelu: X [, X_zero_point] -> max(X, zero point) ---- */
static pc_status qrelu_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = need_inputs(k, 1, 2);
    if (st != PC_OK) return st;
    pc_dtype t = k->in[0]->dtype;
    if ((st = need_type(k, 0, is_q8(t), "X", "int8 or uint8")) != PC_OK ||
        (st = need_zp_type(k, 1, 0, "X_zero_point")) != PC_OK || (st = need_out_type(k, t)) != PC_OK)
        return st;
    const pc_rt_tensor *z = opt_in(k, 1);
    if (z && (z->n != 1 || z->rank > 1))
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "QLinearRelu: X_zero_point must be a scalar or a 1-D tensor of one value");
    *scratch_bytes = 0;
    return PC_OK;
}

static pc_status qrelu_run(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *y = k->out[0];
    int32_t zp = zp_at(opt_in(k, 1), 0);
    if (x->dtype == PC_DTYPE_UINT8) {
        const uint8_t *src = x->data;
        uint8_t *dst = y->data, z = (uint8_t)zp;
        for (uint64_t e = 0; e < y->n; e++)
            dst[e] = src[e] > z ? src[e] : z;
    } else {
        const int8_t *src = x->data;
        int8_t *dst = y->data, z = (int8_t)zp;
        for (uint64_t e = 0; e < y->n; e++)
            dst[e] = src[e] > z ? src[e] : z;
    }
    return PC_OK;
}

static pc_status qlinear_matmul_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    return mm_prepare(k, &qlinear_matmul_spec, scratch_bytes);
}

static pc_status qlinear_matmul_run(pc_rt_kernel_ctx *k)
{
    return mm_run(k, &qlinear_matmul_spec);
}

static pc_status matmul_integer_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    return mm_prepare(k, &matmul_integer_spec, scratch_bytes);
}

static pc_status matmul_integer_run(pc_rt_kernel_ctx *k)
{
    return mm_run(k, &matmul_integer_spec);
}

const pc_rt_kernel pc_rt_kernels_quant[] = {
    {"", "QuantizeLinear", 10, 21, RT_F32 | RT_I32, quantize_prepare, quantize_run, 0},
    {"", "DequantizeLinear", 10, 21, RT_I8 | RT_U8 | RT_I32, dequantize_prepare, dequantize_run, 0},
    {"", "QLinearConv", 10, 21, RT_I8 | RT_U8, qconv_prepare, qconv_run, 0},
    {PC_NHWC_DOMAIN, "QLinearConv", 1, 21, RT_I8 | RT_U8, qconv_prepare, qconv_run, 0},
    {PC_MS_DOMAIN, "QLinearConvRelu", 1, 1, RT_I8 | RT_U8, qconv_prepare, qconv_run, 0},
    {PC_SYSTOLIC_DOMAIN, "QLinearConv_nhwc", 1, 1, RT_I8 | RT_U8, qconv_prepare, qconv_run, 0},
    {PC_MS_DOMAIN, "QLinearAdd", 1, 1, RT_I8 | RT_U8, qadd_prepare, qadd_run, 0},
    {PC_SYSTOLIC_DOMAIN, "QLinearAdd", 1, 1, RT_I8 | RT_U8, systolic_add_prepare, qadd_run, 0},
    {PC_SYSTOLIC_DOMAIN, "QLinearRelu", 1, 1, RT_I8 | RT_U8, qrelu_prepare, qrelu_run, 0},
    {"", "QLinearMatMul", 10, 21, RT_I8 | RT_U8, qlinear_matmul_prepare, qlinear_matmul_run, 0},
    {"", "MatMulInteger", 10, 21, RT_I8 | RT_U8, matmul_integer_prepare, matmul_integer_run, 0},
};
const size_t pc_rt_n_kernels_quant = sizeof pc_rt_kernels_quant / sizeof pc_rt_kernels_quant[0];
