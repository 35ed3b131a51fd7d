/* Reference ops: elementwise math, activations, logic, comparison, bitwise, Cast/CastLike, Clip, Where.
 * Floats are computed in double and rounded on store; integers in int64 and wrapped on store. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

/* ---- unary
 * --------------------------------------------------------------------------------------------------- */

typedef double (*unary_f)(ref_ctx *ctx, double x);

static bool float_only(pc_dtype t)
{
    return ref_is_float(t);
}
static bool signed_or_float(pc_dtype t)
{
    return ref_is_float(t) || ref_is_signed(t);
}
static bool numeric_no_bool(pc_dtype t)
{
    return ref_is_float(t) || ref_is_int(t);
}
static bool is_bool(pc_dtype t)
{
    return t == PC_DTYPE_BOOL;
}
static bool int_only(pc_dtype t)
{
    return ref_is_int(t);
}

/* Applies f to every element; `accept` says which input dtypes the op allows. Integer inputs go through int64
 * when int_f is given (exact), otherwise through double. */
static pc_status run_unary(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                           bool (*accept)(pc_dtype), const char *what, unary_f f, int64_t (*int_f)(int64_t))
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, accept, what)) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    for (uint64_t i = 0; i < x->n_elements; i++) {
        int64_t v = int_f && !ref_is_float(x->dtype) ? ref_get_i64(x, i) : 0;
        if (int_f && x->dtype == PC_DTYPE_UINT64 && v < 0) {
            /* a uint64 above INT64_MAX reads as negative. The ops taking unsigned types (Abs, Sign) map every
             * positive value to itself or to one constant, so a positive probe says which: keep the bits, or
             * write the constant. */
            int64_t probe = int_f(INT64_MAX);
            ref_set_i64(y, i, probe == INT64_MAX ? v : probe);
        } else if (int_f && !ref_is_float(x->dtype))
            ref_set_i64(y, i, int_f(v));
        else
            ref_set_f64(y, i, f(ctx, ref_get_f64(x, i)));
    }
    out[0] = y;
    return PC_OK;
}

#define UNARY_FLOAT(Name, expr)                                                                              \
    static double f_##Name(ref_ctx *ctx, double x)                                                           \
    {                                                                                                        \
        (void)ctx;                                                                                           \
        return (expr);                                                                                       \
    }                                                                                                        \
    static pc_status op_##Name(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,               \
                               uint32_t n_out)                                                               \
    {                                                                                                        \
        (void)n_out;                                                                                         \
        return run_unary(ctx, in, n_in, out, float_only, "floating-point", f_##Name, NULL);                  \
    }

static double round_half_even(double x)
{
    double r = nearbyint(x); /* default rounding mode: to nearest, ties to even */
    return r;
}

static double erf_gelu(double x)
{
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

UNARY_FLOAT(Exp, exp(x))
UNARY_FLOAT(Log, log(x))
UNARY_FLOAT(Sqrt, sqrt(x))
UNARY_FLOAT(Reciprocal, 1.0 / x)
UNARY_FLOAT(Floor, floor(x))
UNARY_FLOAT(Ceil, ceil(x))
UNARY_FLOAT(Round, round_half_even(x))
UNARY_FLOAT(Sin, sin(x))
UNARY_FLOAT(Cos, cos(x))
UNARY_FLOAT(Tan, tan(x))
UNARY_FLOAT(Asin, asin(x))
UNARY_FLOAT(Acos, acos(x))
UNARY_FLOAT(Atan, atan(x))
UNARY_FLOAT(Sinh, sinh(x))
UNARY_FLOAT(Cosh, cosh(x))
UNARY_FLOAT(Asinh, asinh(x))
UNARY_FLOAT(Acosh, acosh(x))
UNARY_FLOAT(Atanh, atanh(x))
UNARY_FLOAT(Sigmoid, 1.0 / (1.0 + exp(-x)))
UNARY_FLOAT(Tanh, tanh(x))
UNARY_FLOAT(Erf, erf(x))
UNARY_FLOAT(Softplus, log1p(exp(-fabs(x))) + (x > 0 ? x : 0))
UNARY_FLOAT(Softsign, x / (1.0 + fabs(x)))
UNARY_FLOAT(Mish, x *tanh(log1p(exp(-fabs(x))) + (x > 0 ? x : 0)))
UNARY_FLOAT(HardSwish, x *fmax(0.0, fmin(1.0, x / 6.0 + 0.5)))

/* Ops with attributes read them per element through ctx (cheap: one attribute scan per call would be better,
 * but the lookup is a short linear scan over a handful of attributes). Cached here per call instead. */
typedef struct act_params {
    double alpha, beta, gamma, lambd, bias;
    const char *approximate;
} act_params;

static pc_status run_act(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                         double (*f)(const act_params *, double), const act_params *p)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, float_only, "floating-point")) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    for (uint64_t i = 0; i < x->n_elements; i++)
        ref_set_f64(y, i, f(p, ref_get_f64(x, i)));
    out[0] = y;
    return PC_OK;
}

static double a_leaky(const act_params *p, double x)
{
    return x < 0 ? p->alpha * x : x;
}
static double a_elu(const act_params *p, double x)
{
    return x < 0 ? p->alpha * (exp(x) - 1.0) : x;
}
static double a_selu(const act_params *p, double x)
{
    return p->gamma * (x <= 0 ? p->alpha * (exp(x) - 1.0) : x);
}
/* fmin/fmax drop a NaN operand; ONNX's definitions (numpy's clip, max, min) keep it, so NaN passes first */
static double a_celu(const act_params *p, double x)
{
    return isnan(x) ? x : fmax(0.0, x) + fmin(0.0, p->alpha * (exp(x / p->alpha) - 1.0));
}
static double a_hardsigmoid(const act_params *p, double x)
{
    double v = p->alpha * x + p->beta;
    return isnan(v) ? v : fmax(0.0, fmin(1.0, v));
}
static double a_thresholded(const act_params *p, double x)
{
    return x > p->alpha ? x : 0.0;
}
static double a_shrink(const act_params *p, double x)
{
    return x < -p->lambd ? x + p->bias : x > p->lambd ? x - p->bias : 0.0;
}
static double a_gelu(const act_params *p, double x)
{
    if (p->approximate && strcmp(p->approximate, "tanh") == 0)
        return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    return erf_gelu(x);
}

#define ACT_OP(Name, fn, ...)                                                                                \
    static pc_status op_##Name(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,               \
                               uint32_t n_out)                                                               \
    {                                                                                                        \
        (void)n_out;                                                                                         \
        act_params p = {__VA_ARGS__};                                                                        \
        return run_act(ctx, in, n_in, out, fn, &p);                                                          \
    }

ACT_OP(LeakyRelu, a_leaky, .alpha = ref_attr_float(ctx, "alpha", 0.01))
ACT_OP(Elu, a_elu, .alpha = ref_attr_float(ctx, "alpha", 1.0))
ACT_OP(Selu, a_selu, .alpha = ref_attr_float(ctx, "alpha", 1.67326319217681884765625),
       .gamma = ref_attr_float(ctx, "gamma", 1.05070102214813232421875))
ACT_OP(Celu, a_celu, .alpha = ref_attr_float(ctx, "alpha", 1.0))
ACT_OP(HardSigmoid, a_hardsigmoid, .alpha = ref_attr_float(ctx, "alpha", 0.2),
       .beta = ref_attr_float(ctx, "beta", 0.5))
ACT_OP(ThresholdedRelu, a_thresholded, .alpha = ref_attr_float(ctx, "alpha", 1.0))
ACT_OP(Gelu, a_gelu, .approximate = ref_attr_string(ctx, "approximate", "none"))

/* Shrink allows every numeric type; integer results go through double exactly for the test ranges. */
static pc_status op_Shrink(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, numeric_no_bool, "numeric")) != PC_OK) return st;
    act_params p = {.lambd = ref_attr_float(ctx, "lambd", 0.5), .bias = ref_attr_float(ctx, "bias", 0.0)};
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    for (uint64_t i = 0; i < x->n_elements; i++)
        ref_set_f64(y, i, a_shrink(&p, ref_get_f64(x, i)));
    out[0] = y;
    return PC_OK;
}

static double f_abs(ref_ctx *c, double x)
{
    (void)c;
    return fabs(x);
}
static int64_t i_abs(int64_t x)
{
    return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}
static double f_neg(ref_ctx *c, double x)
{
    (void)c;
    return -x;
}
static int64_t i_neg(int64_t x)
{
    return (int64_t)(0 - (uint64_t)x);
}
/* max(0, x), with -0 -> +0 and NaN kept: the one Relu of the reference (fused activations use it too) */
double ref_relu(double x)
{
    return x > 0 ? x : (x == 0 || x < 0 ? 0.0 : x);
}
static double f_relu(ref_ctx *c, double x)
{
    (void)c;
    return ref_relu(x);
}
static int64_t i_relu(int64_t x)
{
    return x > 0 ? x : 0;
}
static double f_sign(ref_ctx *c, double x)
{
    (void)c;
    return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;
}
static int64_t i_sign(int64_t x)
{
    return x > 0 ? 1 : x < 0 ? -1 : 0;
}
static double f_id(ref_ctx *c, double x)
{
    (void)c;
    return x;
}

static bool numeric_any(pc_dtype t)
{
    return ref_is_float(t) || ref_is_int(t);
}

/* Unary ops over ints (exactly, in int64) and floats. */
#define UNARY_NUMERIC(Name, accept, what, f, i)                                                              \
    static pc_status op_##Name(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,               \
                               uint32_t n_out)                                                               \
    {                                                                                                        \
        (void)n_out;                                                                                         \
        return run_unary(ctx, in, n_in, out, accept, what, f, i);                                            \
    }
UNARY_NUMERIC(Abs, numeric_any, "numeric", f_abs, i_abs)
UNARY_NUMERIC(Neg, signed_or_float, "signed numeric", f_neg, i_neg)
UNARY_NUMERIC(Relu, signed_or_float, "signed numeric", f_relu, i_relu)
UNARY_NUMERIC(Sign, numeric_any, "numeric", f_sign, i_sign)

/* IsNaN, IsInf, Not, BitwiseNot: results of another dtype. */
static pc_status op_IsNaN(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK || (st = ref_require_dtype(ctx, in[0], 0, float_only, "floating-point")) != PC_OK)
        return st;
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_BOOL, in[0]->rank, in[0]->dims);
    if (!y) return ctx->err->status;
    for (uint64_t i = 0; i < y->n_elements; i++)
        ref_set_i64(y, i, isnan(ref_get_f64(in[0], i)));
    out[0] = y;
    return PC_OK;
}

static pc_status op_IsInf(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK || (st = ref_require_dtype(ctx, in[0], 0, float_only, "floating-point")) != PC_OK)
        return st;
    bool neg = ref_attr_int(ctx, "detect_negative", 1) != 0,
         pos = ref_attr_int(ctx, "detect_positive", 1) != 0;
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_BOOL, in[0]->rank, in[0]->dims);
    if (!y) return ctx->err->status;
    for (uint64_t i = 0; i < y->n_elements; i++) {
        double v = ref_get_f64(in[0], i);
        ref_set_i64(y, i, isinf(v) && ((v > 0 && pos) || (v < 0 && neg)));
    }
    out[0] = y;
    return PC_OK;
}

static int64_t i_not(int64_t x)
{
    return !x;
}
static int64_t i_bitnot(int64_t x)
{
    return ~x;
}

UNARY_NUMERIC(Not, is_bool, "bool", f_id, i_not)
UNARY_NUMERIC(BitwiseNot, int_only, "integer", f_id, i_bitnot)

/* ---- binary and variadic (broadcasting)
 * ---------------------------------------------------------------------- */

typedef enum bin_kind { BIN_ARITH, BIN_COMPARE, BIN_LOGIC, BIN_BITWISE } bin_kind;
/* The four arithmetic ops the float path below runs without a call per element. */
typedef enum bin_arith { ARITH_NONE, ARITH_ADD, ARITH_SUB, ARITH_MUL, ARITH_DIV } bin_arith;

typedef struct bin_op {
    bin_kind kind;
    bool (*accept)(pc_dtype);
    const char *what;
    double (*f)(ref_ctx *, double, double); /* float path (and ints when i is NULL) */
    int64_t (*i)(ref_ctx *, int64_t, int64_t, pc_dtype,
                 bool *bad); /* integer path; bad: e.g. division by zero */
    bool (*cmp_f)(double, double);
    bool (*cmp_i)(int64_t, int64_t, bool is_unsigned);
    bin_arith arith;
} bin_op;

static bool is_unsigned_dtype(pc_dtype t)
{
    return t == PC_DTYPE_UINT8 || t == PC_DTYPE_UINT16 || t == PC_DTYPE_UINT32 || t == PC_DTYPE_UINT64;
}

/* One broadcast arithmetic loop over element type T: the output walked row-major, the innermost axis in a
 * plain loop, the sources by per-axis strides (0 where broadcast). Each element is computed in double and
 * rounded once to T, exactly as the general path's ref_get_f64/ref_set_f64 do, so the bits are the same. */
#define ARITH_WALK(T, EXPR)                                                                                  \
    do {                                                                                                     \
        const T *pa = (const T *)a->data, *pb = (const T *)b->data;                                          \
        T *py = (T *)y->data;                                                                                \
        for (uint64_t o = 0; o < n_outer; o++) {                                                             \
            for (int64_t j = 0; j < inner; j++) {                                                            \
                double u = (double)pa[oa + j * ia], v = (double)pb[ob + j * ib];                             \
                *py++ = (T)(EXPR);                                                                           \
            }                                                                                                \
            for (int32_t d = r - 2; d >= 0; d--) {                                                           \
                oa += sa[d];                                                                                 \
                ob += sb[d];                                                                                 \
                if (++c[d] < sh->dims[d]) break;                                                             \
                oa -= sa[d] * sh->dims[d];                                                                   \
                ob -= sb[d] * sh->dims[d];                                                                   \
                c[d] = 0;                                                                                    \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

#define ARITH_OPS(T)                                                                                         \
    switch (arith) {                                                                                         \
    case ARITH_ADD:                                                                                          \
        ARITH_WALK(T, u + v);                                                                                \
        break;                                                                                               \
    case ARITH_SUB:                                                                                          \
        ARITH_WALK(T, u - v);                                                                                \
        break;                                                                                               \
    case ARITH_MUL:                                                                                          \
        ARITH_WALK(T, u *v);                                                                                 \
        break;                                                                                               \
    case ARITH_DIV:                                                                                          \
        ARITH_WALK(T, u / v);                                                                                \
        break;                                                                                               \
    case ARITH_NONE:                                                                                         \
        break;                                                                                               \
    }

/* The float and double arithmetic of Add/Sub/Mul/Div: the element type and the op dispatched once per node,
 * not per element (the models' elementwise ops were half of a reference run through the general path). */
static void arith_float(bin_arith arith, const pc_data *a, const pc_data *b, const ref_shape *sh, pc_data *y)
{
    int32_t r = sh->rank;
    int64_t sa[PC_MAX_RANK], sb[PC_MAX_RANK], c[PC_MAX_RANK] = {0};
    ref_broadcast_strides(a, sh, sa);
    ref_broadcast_strides(b, sh, sb);
    int64_t inner = r > 0 ? sh->dims[r - 1] : 1, ia = r > 0 ? sa[r - 1] : 0, ib = r > 0 ? sb[r - 1] : 0;
    if (y->n_elements == 0) return;
    uint64_t n_outer = y->n_elements / (uint64_t)inner;
    int64_t oa = 0, ob = 0;
    if (a->dtype == PC_DTYPE_FLOAT) {
        ARITH_OPS(float)
    } else {
        ARITH_OPS(double)
    }
}

static pc_status run_binary(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, const bin_op *op)
{
    pc_status st = ref_require_pair(ctx, in, n_in, op->accept, op->what, true);
    if (st != PC_OK) return st;
    const pc_data *a = in[0], *b = in[1];
    if (op->arith != ARITH_NONE && (a->dtype == PC_DTYPE_FLOAT || a->dtype == PC_DTYPE_DOUBLE)) {
        ref_shape sh;
        uint64_t n = 0; /* y->n_elements: ref_new_tensor recounts */
        if ((st = ref_broadcast_result(ctx, 2, in, &sh, &n)) != PC_OK) return st;
        pc_data *y = ref_new_tensor(ctx, a->dtype, sh.rank, sh.dims);
        if (!y) return ctx->err->status;
        arith_float(op->arith, a, b, &sh, y);
        out[0] = y;
        return PC_OK;
    }
    ref_bcast bc;
    if ((st = ref_bcast_init(ctx, 2, in, &bc)) != PC_OK) {
        free(bc.idx);
        return st;
    }
    pc_dtype out_type = op->kind == BIN_COMPARE ? PC_DTYPE_BOOL : a->dtype;
    pc_data *y = ref_new_tensor(ctx, out_type, bc.shape.rank, bc.shape.dims);
    if (!y) {
        free(bc.idx);
        return ctx->err->status;
    }
    uint64_t n = bc.n;
    const uint64_t *ia = bc.idx, *ib = bc.idx + n;
    bool is_float = ref_is_float(a->dtype), uns = is_unsigned_dtype(a->dtype), bad = false;
    for (uint64_t k = 0; k < n && !bad; k++) {
        if (op->kind == BIN_COMPARE) {
            bool r = is_float ? op->cmp_f(ref_get_f64(a, ia[k]), ref_get_f64(b, ib[k]))
                              : op->cmp_i(ref_get_i64(a, ia[k]), ref_get_i64(b, ib[k]), uns);
            ref_set_i64(y, k, r);
        } else if (is_float || !op->i) {
            ref_set_f64(y, k, op->f(ctx, ref_get_f64(a, ia[k]), ref_get_f64(b, ib[k])));
        } else {
            ref_set_i64(y, k, op->i(ctx, ref_get_i64(a, ia[k]), ref_get_i64(b, ib[k]), a->dtype, &bad));
        }
    }
    free(bc.idx);
    if (bad) {
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_VALUE, "integer division by zero");
    }
    out[0] = y;
    return PC_OK;
}

static double f_add(ref_ctx *c, double a, double b)
{
    (void)c;
    return a + b;
}
static double f_sub(ref_ctx *c, double a, double b)
{
    (void)c;
    return a - b;
}
static double f_mul(ref_ctx *c, double a, double b)
{
    (void)c;
    return a * b;
}
static double f_div(ref_ctx *c, double a, double b)
{
    (void)c;
    return a / b;
}
static double f_pow(ref_ctx *c, double a, double b)
{
    (void)c;
    return pow(a, b);
}
static int64_t i_add(ref_ctx *c, int64_t a, int64_t b, pc_dtype t, bool *bad)
{
    (void)c;
    (void)t;
    (void)bad;
    return (int64_t)((uint64_t)a + (uint64_t)b);
}
static int64_t i_sub(ref_ctx *c, int64_t a, int64_t b, pc_dtype t, bool *bad)
{
    (void)c;
    (void)t;
    (void)bad;
    return (int64_t)((uint64_t)a - (uint64_t)b);
}
static int64_t i_mul(ref_ctx *c, int64_t a, int64_t b, pc_dtype t, bool *bad)
{
    (void)c;
    (void)t;
    (void)bad;
    return (int64_t)((uint64_t)a * (uint64_t)b);
}
static int64_t i_div(ref_ctx *c, int64_t a, int64_t b, pc_dtype t, bool *bad)
{
    (void)c;
    if (b == 0) {
        *bad = true;
        return 0;
    }
    if (t == PC_DTYPE_UINT64) return (int64_t)((uint64_t)a / (uint64_t)b);
    if (a == INT64_MIN && b == -1) return INT64_MIN; /* wraps, as two's complement hardware does */
    return a / b; /* truncation toward zero, as ONNX Runtime's integer Div */
}
static int64_t i_pow(ref_ctx *c, int64_t a, int64_t b, pc_dtype t, bool *bad)
{
    (void)c;
    (void)t;
    (void)bad;
    if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
    uint64_t r = 1, base = (uint64_t)a;
    for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
    }
    return (int64_t)r;
}

static const bin_op bin_add = {BIN_ARITH, numeric_no_bool, "numeric", f_add, i_add, NULL, NULL, ARITH_ADD};
static const bin_op bin_sub = {BIN_ARITH, numeric_no_bool, "numeric", f_sub, i_sub, NULL, NULL, ARITH_SUB};
static const bin_op bin_mul = {BIN_ARITH, numeric_no_bool, "numeric", f_mul, i_mul, NULL, NULL, ARITH_MUL};
static const bin_op bin_div = {BIN_ARITH, numeric_no_bool, "numeric", f_div, i_div, NULL, NULL, ARITH_DIV};

#define BINARY(Name, desc)                                                                                   \
    static pc_status op_##Name(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,               \
                               uint32_t n_out)                                                               \
    {                                                                                                        \
        (void)n_out;                                                                                         \
        return run_binary(ctx, in, n_in, out, &desc);                                                        \
    }
BINARY(Add, bin_add)
BINARY(Sub, bin_sub)
BINARY(Mul, bin_mul)
BINARY(Div, bin_div)

/* Pow allows different base and exponent types (opset 12+); the result has the base's type. */
static pc_status op_Pow(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_pair(ctx, in, n_in, numeric_no_bool, "numeric", false);
    if (st != PC_OK) return st;
    const pc_data *a = in[0], *b = in[1];
    ref_bcast bc;
    if ((st = ref_bcast_init(ctx, 2, in, &bc)) != PC_OK) {
        free(bc.idx);
        return st;
    }
    pc_data *y = ref_new_tensor(ctx, a->dtype, bc.shape.rank, bc.shape.dims);
    if (!y) {
        free(bc.idx);
        return ctx->err->status;
    }
    uint64_t n = bc.n;
    const uint64_t *ia = bc.idx, *ib = bc.idx + n;
    bool dummy = false;
    for (uint64_t k = 0; k < n; k++) {
        if (!ref_is_float(a->dtype) && !ref_is_float(b->dtype))
            ref_set_i64(y, k, i_pow(ctx, ref_get_i64(a, ia[k]), ref_get_i64(b, ib[k]), a->dtype, &dummy));
        else
            ref_set_f64(y, k, f_pow(ctx, ref_get_f64(a, ia[k]), ref_get_f64(b, ib[k])));
    }
    free(bc.idx);
    out[0] = y;
    return PC_OK;
}

const ref_op ref_ops_elementwise[] = {
    {"", "Abs", op_Abs},
    {"", "Acos", op_Acos},
    {"", "Acosh", op_Acosh},
    {"", "Add", op_Add},
    {"", "Asin", op_Asin},
    {"", "Asinh", op_Asinh},
    {"", "Atan", op_Atan},
    {"", "Atanh", op_Atanh},
    {"", "BitwiseNot", op_BitwiseNot},
    {"", "Ceil", op_Ceil},
    {"", "Celu", op_Celu},
    {"", "Cos", op_Cos},
    {"", "Cosh", op_Cosh},
    {"", "Div", op_Div},
    {"", "Elu", op_Elu},
    {"", "Erf", op_Erf},
    {"", "Exp", op_Exp},
    {"", "Floor", op_Floor},
    {"", "Gelu", op_Gelu},
    {"", "HardSigmoid", op_HardSigmoid},
    {"", "HardSwish", op_HardSwish},
    {"", "IsInf", op_IsInf},
    {"", "IsNaN", op_IsNaN},
    {"", "LeakyRelu", op_LeakyRelu},
    {"", "Log", op_Log},
    {"", "Mish", op_Mish},
    {"", "Mul", op_Mul},
    {"", "Neg", op_Neg},
    {"", "Not", op_Not},
    {"", "Pow", op_Pow},
    {"", "Reciprocal", op_Reciprocal},
    {"", "Relu", op_Relu},
    {"", "Round", op_Round},
    {"", "Selu", op_Selu},
    {"", "Shrink", op_Shrink},
    {"", "Sigmoid", op_Sigmoid},
    {"", "Sign", op_Sign},
    {"", "Sin", op_Sin},
    {"", "Sinh", op_Sinh},
    {"", "Softplus", op_Softplus},
    {"", "Softsign", op_Softsign},
    {"", "Sqrt", op_Sqrt},
    {"", "Sub", op_Sub},
    {"", "Tan", op_Tan},
    {"", "Tanh", op_Tanh},
    {"", "ThresholdedRelu", op_ThresholdedRelu},
};

const size_t ref_ops_elementwise_count = sizeof ref_ops_elementwise / sizeof ref_ops_elementwise[0];
