/* Elementwise kernels: unary math and activations, Clip, the broadcasting binaries (arithmetic, Pow, PRelu,
 * comparisons, logic), the variadic Max/Min/Sum/Mean, Not and Where.
 *
 * Floats are computed in float, as ONNX Runtime does (the `runtime` property compares against the reference's
 * double arithmetic with a tolerance); integers wrap like two's complement hardware, through their unsigned
 * type so that C sees no signed overflow. NaN propagates everywhere the ONNX reference (numpy) lets it.
 *
 * Broadcasting: the output's axes are merged where every operand steps through them linearly (axes of size
 * 1 dropped), so equal shapes become one flat row, a scalar operand a row with step 0, and [N,C,H,W] against
 * [C,1,1] rows of H*W against one value. A row function then runs the innermost axis as a plain loop with
 * specialised bodies for step 1/1, 1/0 and 0/1. Each output element is computed only from operand elements
 * at its own position when shapes are equal, so out[0]->data may alias in[0]->data. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

/* ---- checks shared by the prepare functions */

static size_t elem_size(pc_dtype t)
{
    return pc_dtype_bits(t) / 8;
}

/* n_in within [lo, hi], inputs [0, lo) present, output 0 present */
static pc_status need_arity(pc_rt_kernel_ctx *k, uint32_t lo, uint32_t hi)
{
    if (k->n_in < lo && hi == UINT32_MAX)
        return pc_error_set(k->err, PC_ERR_ARITY, "%s takes at least %u inputs, the node has %u",
                            k->node->op_type, lo, k->n_in);
    if (k->n_in < lo || k->n_in > hi)
        return pc_error_set(k->err, PC_ERR_ARITY, "%s takes %u to %u inputs, the node has %u",
                            k->node->op_type, lo, hi, k->n_in);
    for (uint32_t i = 0; i < lo; i++)
        if (!k->in[i])
            return pc_error_set(k->err, PC_ERR_ARITY, "%s: input %u is required", k->node->op_type, i);
    if (k->n_out < 1 || !k->out[0])
        return pc_error_set(k->err, PC_ERR_ARITY, "%s: output 0 is required", k->node->op_type);
    return PC_OK;
}

/* input i has the element type of input 0 (mixed types would need a conversion no row implements) */
static pc_status need_same_dtype(pc_rt_kernel_ctx *k, uint32_t i)
{
    if (k->in[i]->dtype != k->in[0]->dtype)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "%s: input %u is %s but input 0 is %s (mixed element types are not implemented)",
                            k->node->op_type, i, pc_dtype_name(k->in[i]->dtype),
                            pc_dtype_name(k->in[0]->dtype));
    return PC_OK;
}

/* input i broadcasts (numpy rules) to output 0's shape: the walk reads it by strides over that shape */
static pc_status need_broadcast(pc_rt_kernel_ctx *k, uint32_t i)
{
    const pc_rt_tensor *t = k->in[i], *y = k->out[0];
    bool ok = t->rank <= y->rank;
    for (int32_t d = 0; ok && d < t->rank; d++) {
        int64_t td = t->dims[d], yd = y->dims[y->rank - t->rank + d];
        ok = td == yd || td == 1;
    }
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "%s: input %u (rank %d) does not broadcast to the output shape", k->node->op_type,
                            i, (int)t->rank);
    return PC_OK;
}

static pc_status need_out_dtype(pc_rt_kernel_ctx *k, pc_dtype want)
{
    if (k->out[0]->dtype != want)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: output is %s, this kernel writes %s",
                            k->node->op_type, pc_dtype_name(k->out[0]->dtype), pc_dtype_name(want));
    return PC_OK;
}

/* A dtype the row chosen by the table's type filter should never see; prepare refused it already. */
static pc_status unexpected_dtype(pc_rt_kernel_ctx *k, uint32_t i)
{
    return pc_error_set(k->err, PC_ERR_INTERNAL, "%s: no loop for input %u of type %s", k->node->op_type, i,
                        pc_dtype_name(k->in[i]->dtype));
}

/* ---- the broadcast walk */

enum { WALK_MAX = 3 }; /* operands: Where has three */

/* The output's axes after merging, with each operand's element stride per axis (0: broadcast). */
typedef struct walk {
    int32_t rank; /* >= 1 */
    int64_t dims[PC_MAX_RANK];
    int64_t st[WALK_MAX][PC_MAX_RANK];
    uint32_t n_src;
} walk;

/* One row of the innermost axis: n elements, operand j advancing by step[j] (0 or 1) elements. */
typedef void (*row_fn)(const void *const *src, const int64_t *step, void *dst, int64_t n);

static void walk_init(walk *w, const pc_rt_tensor *out, uint32_t n_src, const pc_rt_tensor *const *src)
{
    int64_t full[WALK_MAX][PC_MAX_RANK];
    for (uint32_t j = 0; j < n_src; j++)
        pc_rt_broadcast_strides(src[j], out, full[j]);
    w->n_src = n_src;
    w->rank = 0;
    for (int32_t d = 0; d < out->rank; d++) {
        int64_t n = out->dims[d];
        if (n == 1) continue; /* moves no operand */
        if (w->rank > 0) {
            /* axis d continues the previous merged axis p when p's stride is exactly d's stride * d's size
             * for every operand: offsets stay linear in the merged index */
            int32_t p = w->rank - 1;
            bool merge = true;
            for (uint32_t j = 0; j < n_src; j++)
                merge = merge && w->st[j][p] == full[j][d] * n;
            if (merge) {
                w->dims[p] *= n;
                for (uint32_t j = 0; j < n_src; j++)
                    w->st[j][p] = full[j][d];
                continue;
            }
        }
        w->dims[w->rank] = n;
        for (uint32_t j = 0; j < n_src; j++)
            w->st[j][w->rank] = full[j][d];
        w->rank++;
    }
    if (w->rank == 0) { /* a single element */
        w->rank = 1;
        w->dims[0] = 1;
        for (uint32_t j = 0; j < n_src; j++)
            w->st[j][0] = 0;
    }
}

/* Runs `row` over every row of the output (out->n > 0), the outer axes walked by an odometer. */
static void walk_run(const walk *w, const void *const *src, const size_t *src_size, void *dst,
                     size_t dst_size, row_fn row)
{
    int32_t last = w->rank - 1;
    int64_t inner = w->dims[last], step[WALK_MAX], off[WALK_MAX] = {0}, c[PC_MAX_RANK] = {0};
    const void *p[WALK_MAX];
    uint64_t rows = 1;
    for (int32_t d = 0; d < last; d++)
        rows *= (uint64_t)w->dims[d];
    for (uint32_t j = 0; j < w->n_src; j++)
        step[j] = w->st[j][last];
    char *y = dst;
    for (uint64_t r = 0; r < rows; r++) {
        for (uint32_t j = 0; j < w->n_src; j++)
            p[j] = (const char *)src[j] + (size_t)off[j] * src_size[j];
        row(p, step, y, inner);
        y += (size_t)inner * dst_size;
        for (int32_t d = last - 1; d >= 0; d--) {
            for (uint32_t j = 0; j < w->n_src; j++)
                off[j] += w->st[j][d];
            if (++c[d] < w->dims[d]) break;
            for (uint32_t j = 0; j < w->n_src; j++)
                off[j] -= w->st[j][d] * w->dims[d];
            c[d] = 0;
        }
    }
}

/* out = f(a, b) with a and b broadcast to out's shape */
static void walk2(pc_rt_tensor *out, const pc_rt_tensor *a, const pc_rt_tensor *b, row_fn row)
{
    walk w;
    const pc_rt_tensor *src[2] = {a, b};
    walk_init(&w, out, 2, src);
    const void *data[2] = {a->data, b->data};
    size_t sizes[2] = {elem_size(a->dtype), elem_size(b->dtype)};
    walk_run(&w, data, sizes, out->data, elem_size(out->dtype), row);
}

/* ---- row functions */

/* A binary row: EXPR computes one element from `a` and `b`. */
#define ROW2(name, TA, TB, TY, EXPR)                                                                         \
    static void name(const void *const *src, const int64_t *step, void *dst, int64_t n)                      \
    {                                                                                                        \
        const TA *pa = src[0];                                                                               \
        const TB *pb = src[1];                                                                               \
        TY *y = dst;                                                                                         \
        if (step[0] && step[1]) {                                                                            \
            for (int64_t i = 0; i < n; i++) {                                                                \
                const TA a = pa[i];                                                                          \
                const TB b = pb[i];                                                                          \
                y[i] = (TY)(EXPR);                                                                           \
            }                                                                                                \
        } else if (step[0]) {                                                                                \
            const TB b = pb[0];                                                                              \
            for (int64_t i = 0; i < n; i++) {                                                                \
                const TA a = pa[i];                                                                          \
                y[i] = (TY)(EXPR);                                                                           \
            }                                                                                                \
        } else if (step[1]) {                                                                                \
            const TA a = pa[0];                                                                              \
            for (int64_t i = 0; i < n; i++) {                                                                \
                const TB b = pb[i];                                                                          \
                y[i] = (TY)(EXPR);                                                                           \
            }                                                                                                \
        } else { /* both scalar along the row: n is 1 (axes of size 1 are dropped) */                        \
            const TA a = pa[0];                                                                              \
            const TB b = pb[0];                                                                              \
            const TY v = (TY)(EXPR);                                                                         \
            for (int64_t i = 0; i < n; i++)                                                                  \
                y[i] = v;                                                                                    \
        }                                                                                                    \
    }

/* The numeric types with their unsigned twin (wrapping arithmetic) and the ops whose form differs between
 * floats and integers. X(suffix, T, U, DIV, MAX, MIN). */
#define DIV_F(T, U, a, b) ((a) / (b))
/* b == -1 separately: INT_MIN / -1 overflows in C; it wraps to INT_MIN as in the reference */
#define DIV_I(T, U, a, b) ((b) == -1 ? (T)((U)0 - (U)(a)) : (T)((a) / (b)))
/* a NaN on either side wins, as numpy.maximum/minimum */
#define MAX_F(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define MIN_F(a, b) (((a) <= (b) || (a) != (a)) ? (a) : (b))
#define MAX_I(a, b) ((a) >= (b) ? (a) : (b))
#define MIN_I(a, b) ((a) <= (b) ? (a) : (b))
#define NUMERIC_TYPES(X)                                                                                     \
    X(f32, float, float, DIV_F, MAX_F, MIN_F)                                                                \
    X(i32, int32_t, uint32_t, DIV_I, MAX_I, MIN_I)                                                           \
    X(i64, int64_t, uint64_t, DIV_I, MAX_I, MIN_I)

#define NUMERIC_ROWS(sfx, T, U, DIV, MAX, MIN)                                                               \
    ROW2(add_##sfx, T, T, T, (U)a + (U)b)                                                                    \
    ROW2(sub_##sfx, T, T, T, (U)a - (U)b)                                                                    \
    ROW2(mul_##sfx, T, T, T, (U)a *(U)b)                                                                     \
    ROW2(div_##sfx, T, T, T, DIV(T, U, a, b))                                                                \
    ROW2(max_##sfx, T, T, T, MAX(a, b))                                                                      \
    ROW2(min_##sfx, T, T, T, MIN(a, b))                                                                      \
    ROW2(eq_##sfx, T, T, uint8_t, a == b)                                                                    \
    ROW2(lt_##sfx, T, T, uint8_t, a < b)                                                                     \
    ROW2(le_##sfx, T, T, uint8_t, a <= b)                                                                    \
    ROW2(gt_##sfx, T, T, uint8_t, a > b)                                                                     \
    ROW2(ge_##sfx, T, T, uint8_t, a >= b)
NUMERIC_TYPES(NUMERIC_ROWS)

ROW2(eq_b8, uint8_t, uint8_t, uint8_t, (a != 0) == (b != 0))
ROW2(and_b8, uint8_t, uint8_t, uint8_t, a &&b)
ROW2(or_b8, uint8_t, uint8_t, uint8_t, a || b)
ROW2(prelu_f32, float, float, float, a < 0.0f ? a * b : a)
ROW2(pow_f32, float, float, float, powf(a, b))
/* integer exponents through double: exact for every int32 and for int64 up to 2^53 (float would turn a large
 * odd exponent even, and with it the sign of a negative base) */
ROW2(pow_f32_i32, float, int32_t, float, pow((double)a, (double)b))
ROW2(pow_f32_i64, float, int64_t, float, pow((double)a, (double)b))

/* A binary op's rows by the element type of input 0. */
typedef struct row_set {
    row_fn f32, i32, i64, b8;
} row_set;

static row_fn row_for(const row_set *s, pc_dtype t)
{
    switch (t) {
    case PC_DTYPE_FLOAT:
        return s->f32;
    case PC_DTYPE_INT32:
        return s->i32;
    case PC_DTYPE_INT64:
        return s->i64;
    case PC_DTYPE_BOOL:
        return s->b8;
    default:
        return NULL;
    }
}

#define ROW_SET(op) static const row_set op##_rows = {op##_f32, op##_i32, op##_i64, NULL};
ROW_SET(add)
ROW_SET(sub)
ROW_SET(mul)
ROW_SET(div)
ROW_SET(max)
ROW_SET(min)
ROW_SET(lt)
ROW_SET(le)
ROW_SET(gt)
ROW_SET(ge)
static const row_set eq_rows = {eq_f32, eq_i32, eq_i64, eq_b8};
static const row_set and_rows = {NULL, NULL, NULL, and_b8};
static const row_set or_rows = {NULL, NULL, NULL, or_b8};
static const row_set prelu_rows = {prelu_f32, NULL, NULL, NULL};

/* ---- unary */

static pc_status unary_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 1, 1);
    if (st != PC_OK || (st = need_out_dtype(k, k->in[0]->dtype)) != PC_OK) return st;
    if (k->out[0]->n != k->in[0]->n)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: output has %llu elements, input %llu",
                            k->node->op_type, (unsigned long long)k->out[0]->n,
                            (unsigned long long)k->in[0]->n);
    return PC_OK;
}

/* y[i] = EXPR of v = x[i], over n elements of type T */
#define UNARY_LOOP(T, EXPR)                                                                                  \
    do {                                                                                                     \
        const T *x = k->in[0]->data;                                                                         \
        T *y = k->out[0]->data;                                                                              \
        for (uint64_t i = 0, n = k->out[0]->n; i < n; i++) {                                                 \
            const T v = x[i];                                                                                \
            y[i] = (T)(EXPR);                                                                                \
        }                                                                                                    \
    } while (0)

/* A float32 unary kernel; PARAMS declares the attributes EXPR reads. */
#define UNARY_F32(name, PARAMS, EXPR)                                                                        \
    static pc_status name##_run(pc_rt_kernel_ctx *k)                                                         \
    {                                                                                                        \
        PARAMS                                                                                               \
        UNARY_LOOP(float, EXPR);                                                                             \
        return PC_OK;                                                                                        \
    }

#define ATTR(name, fallback) const float name = pc_node_attr_float(k->node, #name, fallback);

/* [0, 1], NaN kept */
static inline float clamp01(float t)
{
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

/* -0 gives +0 and NaN stays NaN (fmaxf would give 0) */
UNARY_F32(relu, , v > 0.0f ? v : v <= 0.0f ? 0.0f : v)
UNARY_F32(sigmoid, , 1.0f / (1.0f + expf(-v)))
UNARY_F32(tanh, , tanhf(v))
UNARY_F32(exp, , expf(v))
UNARY_F32(log, , logf(v))
UNARY_F32(sqrt, , sqrtf(v))
UNARY_F32(reciprocal, , 1.0f / v)
UNARY_F32(floor, , floorf(v))
UNARY_F32(ceil, , ceilf(v))
UNARY_F32(erf, , erff(v))
/* log(1 + e^x) without overflow for large x */
UNARY_F32(softplus, , log1pf(expf(-fabsf(v))) + (v > 0.0f ? v : 0.0f))
UNARY_F32(softsign, , v / (1.0f + fabsf(v)))
UNARY_F32(elu, ATTR(alpha, 1.0f), v < 0.0f ? alpha * (expf(v) - 1.0f) : v)
UNARY_F32(leaky_relu, ATTR(alpha, 0.01f), v < 0.0f ? alpha * v : v)
UNARY_F32(hard_sigmoid, ATTR(alpha, 0.2f) ATTR(beta, 0.5f), clamp01(alpha *v + beta))
UNARY_F32(hard_swish, , v *clamp01(v / 6.0f + 0.5f))
/* the defaults are the float32 values of the spec's constants */
UNARY_F32(selu, ATTR(alpha, 1.67326319217681884765625f) ATTR(gamma, 1.05070102214813232421875f),
          gamma *(v <= 0.0f ? alpha * (expf(v) - 1.0f) : v))
UNARY_F32(sign, , v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v)
/* Gelu: the exact erf form (ai.onnx 20's default and com.microsoft's), or approximate = "tanh" */
UNARY_F32(gelu,
          const bool tanh_form = strcmp(pc_node_attr_string(k->node, "approximate", "none"), "tanh") == 0;
          , tanh_form ? 0.5f * v *(1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)))
                      : 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)))
/* nearbyintf rounds half to even in the default rounding mode */
UNARY_F32(round, , nearbyintf(v))

static pc_status neg_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
    case PC_DTYPE_FLOAT:
        UNARY_LOOP(float, -v);
        return PC_OK;
    case PC_DTYPE_INT32:
        UNARY_LOOP(int32_t, (uint32_t)0 - (uint32_t)v);
        return PC_OK;
    case PC_DTYPE_INT64:
        UNARY_LOOP(int64_t, (uint64_t)0 - (uint64_t)v);
        return PC_OK;
    default:
        return unexpected_dtype(k, 0);
    }
}

static pc_status abs_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
    case PC_DTYPE_FLOAT:
        UNARY_LOOP(float, fabsf(v));
        return PC_OK;
    case PC_DTYPE_INT32:
        UNARY_LOOP(int32_t, v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v);
        return PC_OK;
    case PC_DTYPE_INT64:
        UNARY_LOOP(int64_t, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
        return PC_OK;
    default:
        return unexpected_dtype(k, 0);
    }
}

static pc_status not_run(pc_rt_kernel_ctx *k)
{
    UNARY_LOOP(uint8_t, v == 0);
    return PC_OK;
}

/* ---- Clip */

/* Bounds: attributes min/max before opset 11; optional scalar inputs 1 and 2 from 11 (integer types from 12).
 * An absent bound is the type's lowest/highest finite value, as the spec and ONNX Runtime say (so Clip(+inf)
 * without max is FLT_MAX), not +-inf. */
static pc_status clip_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 1, k->opset < 11 ? 1 : 3);
    if (st != PC_OK || (st = need_out_dtype(k, k->in[0]->dtype)) != PC_OK) return st;
    if (k->out[0]->n != k->in[0]->n)
        return pc_error_set(k->err, PC_ERR_SHAPE, "Clip: output has %llu elements, input %llu",
                            (unsigned long long)k->out[0]->n, (unsigned long long)k->in[0]->n);
    for (uint32_t i = 1; i < k->n_in; i++) {
        if (!k->in[i]) continue;
        if ((st = need_same_dtype(k, i)) != PC_OK) return st;
        if (k->in[i]->n != 1)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "Clip: input %u (%s) must be a scalar, it has %llu elements", i,
                                i == 1 ? "min" : "max", (unsigned long long)k->in[i]->n);
    }
    return PC_OK;
}

/* bound input i, or the fallback when omitted */
#define CLIP_BOUND(T, i, fallback) (k->n_in > (i) && k->in[i] ? *(const T *)k->in[i]->data : (fallback))

/* y = min(max(x, lo), hi): lo > hi gives hi everywhere, hence lo lowered to hi first; NaN in x stays (both
 * compares are false) */
#define CLIP_LOOP(T, lo, hi)                                                                                 \
    do {                                                                                                     \
        const T lo_ = (lo) > (hi) ? (hi) : (lo), hi_ = (hi);                                                 \
        UNARY_LOOP(T, v<lo_ ? lo_ : v> hi_ ? hi_ : v);                                                       \
    } while (0)

static pc_status clip_run(pc_rt_kernel_ctx *k)
{
    switch (k->in[0]->dtype) {
    case PC_DTYPE_FLOAT: {
        float lo, hi;
        if (k->opset < 11) {
            lo = pc_node_attr_float(k->node, "min", -FLT_MAX);
            hi = pc_node_attr_float(k->node, "max", FLT_MAX);
        } else {
            lo = CLIP_BOUND(float, 1, -FLT_MAX);
            hi = CLIP_BOUND(float, 2, FLT_MAX);
        }
        if (isnan(lo) || isnan(hi)) { /* a NaN bound makes every element NaN, as in the reference */
            float *y = k->out[0]->data;
            for (uint64_t i = 0; i < k->out[0]->n; i++)
                y[i] = NAN;
        } else {
            CLIP_LOOP(float, lo, hi);
        }
        return PC_OK;
    }
    case PC_DTYPE_INT32: {
        int32_t lo = CLIP_BOUND(int32_t, 1, INT32_MIN), hi = CLIP_BOUND(int32_t, 2, INT32_MAX);
        CLIP_LOOP(int32_t, lo, hi);
        return PC_OK;
    }
    case PC_DTYPE_INT64: {
        int64_t lo = CLIP_BOUND(int64_t, 1, INT64_MIN), hi = CLIP_BOUND(int64_t, 2, INT64_MAX);
        CLIP_LOOP(int64_t, lo, hi);
        return PC_OK;
    }
    default:
        return unexpected_dtype(k, 0);
    }
}

/* ---- binary */

/* Two inputs of one type (input 1 of a type in `b_types` when that is non-zero), both broadcasting to the
 * output, an output of out_dtype (UNDEFINED: input 0's). */
static pc_status binary_check(pc_rt_kernel_ctx *k, uint64_t b_types, pc_dtype out_dtype)
{
    pc_status st = need_arity(k, 2, 2);
    if (st != PC_OK) return st;
    if (b_types) {
        if (!(RT_TYPE(k->in[1]->dtype) & b_types))
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: input 1 of type %s is not implemented",
                                k->node->op_type, pc_dtype_name(k->in[1]->dtype));
    } else if ((st = need_same_dtype(k, 1)) != PC_OK) {
        return st;
    }
    if ((st = need_broadcast(k, 0)) != PC_OK || (st = need_broadcast(k, 1)) != PC_OK) return st;
    return need_out_dtype(k, out_dtype == PC_DTYPE_UNDEFINED ? k->in[0]->dtype : out_dtype);
}

static pc_status binary_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    return binary_check(k, 0, PC_DTYPE_UNDEFINED);
}

static pc_status compare_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    return binary_check(k, 0, PC_DTYPE_BOOL);
}

/* Pow: the exponent has the base's type before opset 12, any numeric type from 12 (float, int32, int64 here)
 */
static pc_status pow_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    return binary_check(k, k->opset < 12 ? RT_F32 : RT_F32 | RT_I32 | RT_I64, PC_DTYPE_UNDEFINED);
}

/* PRelu: the slope broadcasts to X, never X to the slope's shape */
static pc_status prelu_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = binary_prepare(k, scratch_bytes);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *y = k->out[0];
    bool same = x->rank == y->rank;
    for (int32_t d = 0; same && d < x->rank; d++)
        same = x->dims[d] == y->dims[d];
    if (!same) return pc_error_set(k->err, PC_ERR_SHAPE, "PRelu: the output's shape is not X's");
    return PC_OK;
}

static pc_status binary_run(pc_rt_kernel_ctx *k, const row_set *rows)
{
    row_fn row = row_for(rows, k->in[0]->dtype);
    if (!row) return unexpected_dtype(k, 0);
    if (k->out[0]->n > 0) walk2(k->out[0], k->in[0], k->in[1], row);
    return PC_OK;
}

#define BINARY_RUN(op)                                                                                       \
    static pc_status op##_run(pc_rt_kernel_ctx *k)                                                           \
    {                                                                                                        \
        return binary_run(k, &op##_rows);                                                                    \
    }
BINARY_RUN(add)
BINARY_RUN(sub)
BINARY_RUN(mul)
BINARY_RUN(eq)
BINARY_RUN(lt)
BINARY_RUN(le)
BINARY_RUN(gt)
BINARY_RUN(ge)
BINARY_RUN(and)
BINARY_RUN(or)
BINARY_RUN(prelu)

/* Integer division by zero is an error (ONNX Runtime would trap). Every divisor element is used when the
 * output is not empty (broadcasting repeats elements, never skips one), so one scan over the divisor decides.
 */
#define ANY_ZERO(T, t, found)                                                                                \
    do {                                                                                                     \
        const T *p = (t)->data;                                                                              \
        for (uint64_t i = 0; i < (t)->n && !(found); i++)                                                    \
            (found) = p[i] == 0;                                                                             \
    } while (0)

static pc_status div_run(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *b = k->in[1];
    bool zero = false;
    if (b->dtype == PC_DTYPE_INT32)
        ANY_ZERO(int32_t, b, zero);
    else if (b->dtype == PC_DTYPE_INT64)
        ANY_ZERO(int64_t, b, zero);
    if (zero && k->out[0]->n > 0)
        return pc_error_set(k->err, PC_ERR_VALUE, "Div: integer division by zero (a %s divisor element is 0)",
                            pc_dtype_name(b->dtype));
    return binary_run(k, &div_rows);
}

static pc_status pow_run(pc_rt_kernel_ctx *k)
{
    row_fn row = k->in[1]->dtype == PC_DTYPE_FLOAT   ? pow_f32
                 : k->in[1]->dtype == PC_DTYPE_INT32 ? pow_f32_i32
                 : k->in[1]->dtype == PC_DTYPE_INT64 ? pow_f32_i64
                                                     : NULL;
    if (!row || k->in[0]->dtype != PC_DTYPE_FLOAT) return unexpected_dtype(k, row ? 0 : 1);
    if (k->out[0]->n > 0) walk2(k->out[0], k->in[0], k->in[1], row);
    return PC_OK;
}

/* ---- variadic Max, Min, Sum, Mean */

static pc_status variadic_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 1, UINT32_MAX);
    for (uint32_t i = 0; st == PC_OK && i < k->n_in; i++) {
        if (!k->in[i])
            return pc_error_set(k->err, PC_ERR_ARITY, "%s: input %u is required", k->node->op_type, i);
        if ((st = need_same_dtype(k, i)) == PC_OK) st = need_broadcast(k, i);
    }
    return st == PC_OK ? need_out_dtype(k, k->in[0]->dtype) : st;
}

/* Folds the inputs left to right into the output: out = in0 op in1 (both broadcast to out's shape), then
 * out = out op in_j. Each step reads out[i] before writing it, at the same i. */
static pc_status variadic_run(pc_rt_kernel_ctx *k, const row_set *rows)
{
    pc_rt_tensor *y = k->out[0];
    row_fn row = row_for(rows, k->in[0]->dtype);
    if (!row) return unexpected_dtype(k, 0);
    if (y->n == 0) return PC_OK;
    if (k->n_in == 1) { /* one input: its shape is the output's */
        if (y->data != k->in[0]->data) memcpy(y->data, k->in[0]->data, (size_t)y->n * elem_size(y->dtype));
        return PC_OK;
    }
    walk2(y, k->in[0], k->in[1], row);
    for (uint32_t j = 2; j < k->n_in; j++)
        walk2(y, y, k->in[j], row);
    return PC_OK;
}

#define VARIADIC_RUN(name, op)                                                                               \
    static pc_status name##_run(pc_rt_kernel_ctx *k)                                                         \
    {                                                                                                        \
        return variadic_run(k, &op##_rows);                                                                  \
    }
VARIADIC_RUN(max, max)
VARIADIC_RUN(min, min)
VARIADIC_RUN(sum, add)

static pc_status mean_run(pc_rt_kernel_ctx *k)
{
    pc_status st = variadic_run(k, &add_rows);
    if (st != PC_OK) return st;
    float *y = k->out[0]->data;
    const float n = (float)k->n_in;
    for (uint64_t i = 0; i < k->out[0]->n; i++)
        y[i] /= n;
    return PC_OK;
}

/* ---- Where */

/* Copies elements by size, so every fixed-width type of 1, 2, 4 or 8 bytes runs the same loop. */
#define WHERE_ROW(bits)                                                                                      \
    static void where_row_##bits(const void *const *src, const int64_t *step, void *dst, int64_t n)          \
    {                                                                                                        \
        const uint8_t *c = src[0];                                                                           \
        const uint##bits##_t *x = src[1], *z = src[2];                                                       \
        uint##bits##_t *y = dst;                                                                             \
        for (int64_t i = 0; i < n; i++)                                                                      \
            y[i] = c[i * step[0]] ? x[i * step[1]] : z[i * step[2]];                                         \
    }
WHERE_ROW(8)
WHERE_ROW(16)
WHERE_ROW(32)
WHERE_ROW(64)

static pc_status where_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    pc_status st = need_arity(k, 3, 3);
    if (st != PC_OK) return st;
    if (k->in[1]->dtype != k->in[2]->dtype)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Where: X is %s but Y is %s (mixed types)",
                            pc_dtype_name(k->in[1]->dtype), pc_dtype_name(k->in[2]->dtype));
    if (!(RT_TYPE(k->in[1]->dtype) & RT_ANY_FIXED))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Where on %s elements is not implemented",
                            pc_dtype_name(k->in[1]->dtype));
    for (uint32_t i = 0; i < 3; i++)
        if ((st = need_broadcast(k, i)) != PC_OK) return st;
    return need_out_dtype(k, k->in[1]->dtype);
}

static pc_status where_run(pc_rt_kernel_ctx *k)
{
    pc_rt_tensor *y = k->out[0];
    size_t es = elem_size(y->dtype);
    row_fn row = es == 1   ? where_row_8
                 : es == 2 ? where_row_16
                 : es == 4 ? where_row_32
                 : es == 8 ? where_row_64
                           : NULL;
    if (!row) return unexpected_dtype(k, 1);
    if (y->n == 0) return PC_OK;
    walk w;
    walk_init(&w, y, 3, k->in);
    const void *data[3] = {k->in[0]->data, k->in[1]->data, k->in[2]->data};
    size_t sizes[3] = {1, es, es};
    walk_run(&w, data, sizes, y->data, es, row);
    return PC_OK;
}

/* ---- the table */

#define RT_NUM (RT_F32 | RT_I32 | RT_I64)

/* Opset ranges start where ONNX gave the op the semantics implemented here (numpy broadcasting from 7 for
 * the binaries, from 8 for the variadics; the type lists as the op's versions widened them). */
const pc_rt_kernel pc_rt_kernels_elementwise[] = {
    {"", "Relu", 1, 21, RT_F32, unary_prepare, relu_run},
    {"", "Sigmoid", 1, 21, RT_F32, unary_prepare, sigmoid_run},
    {"", "Tanh", 1, 21, RT_F32, unary_prepare, tanh_run},
    {"", "Exp", 1, 21, RT_F32, unary_prepare, exp_run},
    {"", "Log", 1, 21, RT_F32, unary_prepare, log_run},
    {"", "Sqrt", 1, 21, RT_F32, unary_prepare, sqrt_run},
    {"", "Neg", 1, 21, RT_NUM, unary_prepare, neg_run},
    {"", "Abs", 1, 21, RT_NUM, unary_prepare, abs_run},
    {"", "Reciprocal", 1, 21, RT_F32, unary_prepare, reciprocal_run},
    {"", "Floor", 1, 21, RT_F32, unary_prepare, floor_run},
    {"", "Ceil", 1, 21, RT_F32, unary_prepare, ceil_run},
    {"", "Erf", 9, 21, RT_F32, unary_prepare, erf_run},
    {"", "Softplus", 1, 21, RT_F32, unary_prepare, softplus_run},
    {"", "Softsign", 1, 21, RT_F32, unary_prepare, softsign_run},
    {"", "Elu", 1, 21, RT_F32, unary_prepare, elu_run},
    {"", "LeakyRelu", 1, 21, RT_F32, unary_prepare, leaky_relu_run},
    {"", "HardSigmoid", 1, 21, RT_F32, unary_prepare, hard_sigmoid_run},
    {"", "HardSwish", 14, 21, RT_F32, unary_prepare, hard_swish_run},
    {"", "Selu", 1, 21, RT_F32, unary_prepare, selu_run},
    {"", "Sign", 9, 21, RT_F32, unary_prepare, sign_run},
    {"", "Round", 11, 21, RT_F32, unary_prepare, round_run},
    {"", "Clip", 1, 21, RT_F32, clip_prepare, clip_run},
    {"", "Gelu", 20, 21, RT_F32, unary_prepare, gelu_run},
    {PC_MS_DOMAIN, "Gelu", 1, 1, RT_F32, unary_prepare, gelu_run},
    {"", "Clip", 12, 21, RT_I32 | RT_I64, clip_prepare, clip_run},
    {"", "Not", 1, 21, RT_BOOL, unary_prepare, not_run},
    {"", "Add", 7, 21, RT_NUM, binary_prepare, add_run},
    {"", "Sub", 7, 21, RT_NUM, binary_prepare, sub_run},
    {"", "Mul", 7, 21, RT_NUM, binary_prepare, mul_run},
    {"", "Div", 7, 21, RT_NUM, binary_prepare, div_run},
    {"", "Pow", 7, 21, RT_F32, pow_prepare, pow_run},
    {"", "PRelu", 7, 21, RT_F32, prelu_prepare, prelu_run},
    {"", "Max", 8, 21, RT_F32, variadic_prepare, max_run},
    {"", "Max", 12, 21, RT_I32 | RT_I64, variadic_prepare, max_run},
    {"", "Min", 8, 21, RT_F32, variadic_prepare, min_run},
    {"", "Min", 12, 21, RT_I32 | RT_I64, variadic_prepare, min_run},
    {"", "Sum", 8, 21, RT_F32, variadic_prepare, sum_run},
    {"", "Mean", 8, 21, RT_F32, variadic_prepare, mean_run},
    {"", "Equal", 7, 21, RT_I32 | RT_I64 | RT_BOOL, compare_prepare, eq_run},
    {"", "Equal", 11, 21, RT_F32, compare_prepare, eq_run},
    {"", "Less", 7, 21, RT_F32, compare_prepare, lt_run},
    {"", "Less", 9, 21, RT_I32 | RT_I64, compare_prepare, lt_run},
    {"", "Greater", 7, 21, RT_F32, compare_prepare, gt_run},
    {"", "Greater", 9, 21, RT_I32 | RT_I64, compare_prepare, gt_run},
    {"", "LessOrEqual", 12, 21, RT_NUM, compare_prepare, le_run},
    {"", "GreaterOrEqual", 12, 21, RT_NUM, compare_prepare, ge_run},
    {"", "And", 7, 21, RT_BOOL, binary_prepare, and_run},
    {"", "Or", 7, 21, RT_BOOL, binary_prepare, or_run},
    {"", "Where", 9, 21, RT_BOOL, where_prepare, where_run},
};

const size_t pc_rt_n_kernels_elementwise =
    sizeof pc_rt_kernels_elementwise / sizeof pc_rt_kernels_elementwise[0];
