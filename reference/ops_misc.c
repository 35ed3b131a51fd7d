/* Reference ops, misc family: comparison, logic and bitwise binaries, Mod, BitShift, variadic
 * Max/Min/Sum/Mean, Clip, Where, Cast/CastLike, PRelu, GridSample, RoiAlign, NonMaxSuppression, Det,
 * StringNormalizer, and the random ops (registered so that they are reported as non-deterministic rather than
 * unknown). Floats are computed in double and rounded on store; integers in int64 (uint64 compared as
 * unsigned) and wrapped on store. The unary elementwise ops and Add/Sub/Mul/Div/Pow live in
 * ops_elementwise.c. */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reference/ref_internal.h"

/* Outputs whose size comes from input values (or from broadcasting, which can square a size) stay below this.
 */

#define KERNEL(Name)                                                                                         \
    static pc_status op_##Name(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)

/* ---- dtype predicates
 * ---------------------------------------------------------------------------------------- */

static bool dt_unsigned(pc_dtype t)
{
    return t == PC_DTYPE_UINT8 || t == PC_DTYPE_UINT16 || t == PC_DTYPE_UINT32 || t == PC_DTYPE_UINT64;
}
static bool dt_float(pc_dtype t)
{
    return ref_is_float(t);
}
static bool dt_int(pc_dtype t)
{
    return ref_is_int(t);
}
static bool dt_bool(pc_dtype t)
{
    return t == PC_DTYPE_BOOL;
}
static bool dt_number(pc_dtype t)
{
    return ref_is_float(t) || ref_is_int(t);
}
static bool dt_equal(pc_dtype t)
{
    return dt_number(t) || t == PC_DTYPE_BOOL || t == PC_DTYPE_STRING;
}
/* Element types whose elements the helpers can read and copy (sub-byte, float8 and complex types excluded).
 */
static bool dt_plain(pc_dtype t)
{
    return dt_equal(t);
}

/* Three-way integer compare; uint64 values arrive as their int64 bit pattern. */
static int cmp_int(int64_t a, int64_t b, bool uns)
{
    if (uns) return ((uint64_t)a > (uint64_t)b) - ((uint64_t)a < (uint64_t)b);
    return (a > b) - (a < b);
}

/* ---- stores
 * ------------------------------------------------------------------------------------------------ */

/* ---- output allocation with a size budget
 * -------------------------------------------------------------------- */

static bool same_dims(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db)
{
    if (ra != rb) return false;
    for (int32_t d = 0; d < ra; d++)
        if (da[d] != db[d]) return false;
    return true;
}

/* ---- broadcasting of k inputs
 * -------------------------------------------------------------------------------- */

/* Opset-1 binary ops broadcast only with broadcast=1: B is matched against A's trailing dims, or against the
 * dims starting at `axis`. Builds a shallow view of B padded with trailing 1s so that numpy broadcasting
 * lines it up; without broadcast=1 the shapes must be equal. */
static pc_status legacy_broadcast(ref_ctx *ctx, const pc_data *a, const pc_data *b, pc_data *view,
                                  int64_t *dims)
{
    *view = *b;
    if (ref_attr_int(ctx, "broadcast", 0) == 0) {
        if (!same_dims(a->rank, a->dims, b->rank, b->dims))
            return ref_fail(ctx, PC_ERR_SHAPE, "inputs must have equal shapes when attribute broadcast is 0");
        return PC_OK;
    }
    if (!ref_has_attr(ctx, "axis")) return PC_OK;
    int32_t axis;
    pc_status st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), a->rank, false, &axis);
    if (st != PC_OK) return st;
    if (axis + b->rank > a->rank)
        return ref_fail(ctx, PC_ERR_SHAPE, "input B of rank %d does not fit input A of rank %d at axis %d",
                        (int)b->rank, (int)a->rank, (int)axis);
    int32_t r = a->rank - axis;
    for (int32_t d = 0; d < r; d++)
        dims[d] = d < b->rank ? b->dims[d] : 1;
    view->rank = r;
    view->dims = dims;
    return PC_OK;
}

/* ---- binary ops: comparison, logic, bitwise, Mod, BitShift
 * -------------------------------------------------- */

typedef enum bin_code {
    B_AND,
    B_OR,
    B_XOR, /* bool */
    B_BAND,
    B_BOR,
    B_BXOR, /* integer bitwise */
    B_SHL,
    B_SHR, /* unsigned shifts */
    B_EQ,
    B_LT,
    B_LE,
    B_GT,
    B_GE,  /* comparisons: bool result */
    B_MOD, /* Mod, either flavour */
} bin_code;

typedef struct bin_desc {
    bin_code code;
    bool (*accept)(pc_dtype);
    const char *what;
    bool legacy; /* opset < 7 had the broadcast/axis attributes */
} bin_desc;

static bool str_eq(const pc_data *a, uint64_t i, const pc_data *b, uint64_t j)
{
    const pc_bytes *x = &((const pc_bytes *)a->data)[i], *y = &((const pc_bytes *)b->data)[j];
    return x->len == y->len && (x->len == 0 || memcmp(x->data, y->data, x->len) == 0);
}

/* Integer remainder: fmod=1 truncates (sign of the dividend, as C's %), fmod=0 floors (sign of the divisor).
 */
static int64_t int_mod(int64_t a, int64_t b, bool uns, bool trunc)
{
    if (uns) return (int64_t)((uint64_t)a % (uint64_t)b);
    if (b == -1) return 0; /* INT64_MIN % -1 overflows in C; the remainder is 0 */
    int64_t r = a % b;
    if (!trunc && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static pc_status run_bin(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, const bin_desc *op)
{
    pc_status st = ref_require_pair(ctx, in, n_in, op->accept, op->what, true);
    if (st != PC_OK) return st;
    const pc_data *a = in[0], *b = in[1];
    bool trunc_mod = false;
    if (op->code == B_MOD) {
        int64_t fm = ref_attr_int(ctx, "fmod", 0);
        if (fm != 0 && fm != 1)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute fmod must be 0 or 1, got %lld", (long long)fm);
        if (fm == 0 && ref_is_float(a->dtype))
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute fmod must be 1 for %s inputs, got 0",
                            pc_dtype_name(a->dtype));
        trunc_mod = fm == 1;
    }
    if (op->code == B_SHL || op->code == B_SHR) {
        const char *dir = ref_attr_string(ctx, "direction", NULL);
        if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
            return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                            "attribute direction must be \"LEFT\" or \"RIGHT\", got %s%s%s", dir ? "\"" : "",
                            dir ? dir : "none", dir ? "\"" : "");
    }
    pc_data bview;
    int64_t bdims[PC_MAX_RANK];
    pc_data *pair[2] = {in[0], in[1]};
    if (op->legacy && ctx->opset < 7) {
        if ((st = legacy_broadcast(ctx, a, b, &bview, bdims)) != PC_OK) return st;
        pair[1] = &bview;
    }
    ref_bcast bc;
    if ((st = ref_bcast_init(ctx, 2, pair, &bc)) != PC_OK) return st;
    if (pair[1] == &bview && !same_dims(bc.shape.rank, bc.shape.dims, a->rank, a->dims)) {
        free(bc.idx); /* legacy broadcasting is one-way: B stretches to A, never A to B */
        return ref_fail(ctx, PC_ERR_SHAPE, "input B does not broadcast to input A's shape");
    }
    bool compare = op->code >= B_EQ && op->code <= B_GE;
    pc_data *y = ref_new_tensor(ctx, compare ? PC_DTYPE_BOOL : a->dtype, bc.shape.rank, bc.shape.dims);
    if (!y) {
        free(bc.idx);
        return ctx->err->status;
    }
    const uint64_t *ia = bc.idx, *ib = bc.idx + bc.n;
    bool is_f = ref_is_float(a->dtype), uns = dt_unsigned(a->dtype), div0 = false;
    for (uint64_t k = 0; k < bc.n && !div0; k++) {
        if (compare) {
            bool r;
            if (a->dtype == PC_DTYPE_STRING) {
                r = str_eq(a, ia[k], b, ib[k]);
            } else if (is_f) {
                double x = ref_get_f64(a, ia[k]), z = ref_get_f64(b, ib[k]);
                r = op->code == B_EQ   ? x == z
                    : op->code == B_LT ? x < z
                    : op->code == B_LE ? x <= z
                    : op->code == B_GT ? x > z
                                       : x >= z; /* NaN compares false everywhere */
            } else {
                int c = cmp_int(ref_get_i64(a, ia[k]), ref_get_i64(b, ib[k]), uns);
                r = op->code == B_EQ   ? c == 0
                    : op->code == B_LT ? c < 0
                    : op->code == B_LE ? c <= 0
                    : op->code == B_GT ? c > 0
                                       : c >= 0;
            }
            ref_set_i64(y, k, r);
            continue;
        }
        if (op->code == B_MOD && is_f) {
            ref_set_f64(y, k, fmod(ref_get_f64(a, ia[k]), ref_get_f64(b, ib[k])));
            continue;
        }
        int64_t x = ref_get_i64(a, ia[k]), z = ref_get_i64(b, ib[k]), r = 0;
        switch (op->code) {
        case B_AND:
            r = x && z;
            break;
        case B_OR:
            r = x || z;
            break;
        case B_XOR:
            r = (x != 0) != (z != 0);
            break;
        case B_BAND:
            r = x & z;
            break;
        case B_BOR:
            r = x | z;
            break;
        case B_BXOR:
            r = x ^ z;
            break;
        case B_SHL:
        case B_SHR: {
            /* unsigned operands: shifting by the width or more gives 0; left shifts wrap on store */
            uint64_t ux = (uint64_t)x, s = (uint64_t)z;
            r = s >= 64 ? 0 : (int64_t)(op->code == B_SHL ? ux << s : ux >> s);
            break;
        }
        case B_MOD:
            if (z == 0) {
                div0 = true;
                break;
            }
            r = int_mod(x, z, uns, trunc_mod);
            break;
        default:
            break;
        }
        ref_set_i64(y, k, r);
    }
    free(bc.idx);
    if (div0) {
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_VALUE, "integer modulo by zero");
    }
    out[0] = y;
    return PC_OK;
}

#define BIN_KERNEL(Name, code, accept, what, legacy)                                                         \
    KERNEL(Name)                                                                                             \
    {                                                                                                        \
        (void)n_out;                                                                                         \
        static const bin_desc d = {code, accept, what, legacy};                                              \
        return run_bin(ctx, in, n_in, out, &d);                                                              \
    }

BIN_KERNEL(And, B_AND, dt_bool, "bool", true)
BIN_KERNEL(Or, B_OR, dt_bool, "bool", true)
BIN_KERNEL(Xor, B_XOR, dt_bool, "bool", true)
BIN_KERNEL(BitwiseAnd, B_BAND, dt_int, "integer", false)
BIN_KERNEL(BitwiseOr, B_BOR, dt_int, "integer", false)
BIN_KERNEL(BitwiseXor, B_BXOR, dt_int, "integer", false)
BIN_KERNEL(Equal, B_EQ, dt_equal, "numeric, bool or string", true)
BIN_KERNEL(Less, B_LT, dt_number, "numeric", true)
BIN_KERNEL(LessOrEqual, B_LE, dt_number, "numeric", false)
BIN_KERNEL(Greater, B_GT, dt_number, "numeric", true)
BIN_KERNEL(GreaterOrEqual, B_GE, dt_number, "numeric", false)
BIN_KERNEL(Mod, B_MOD, dt_number, "numeric", false)

KERNEL(BitShift)
{
    (void)n_out;
    bool left = strcmp(ref_attr_string(ctx, "direction", ""), "LEFT") == 0;
    static const bin_desc l = {B_SHL, dt_unsigned, "unsigned integer", false};
    static const bin_desc r = {B_SHR, dt_unsigned, "unsigned integer", false};
    return run_bin(ctx, in, n_in, out, left ? &l : &r);
}

/* ---- variadic Max/Min/Sum/Mean
 * ------------------------------------------------------------------------------- */

typedef enum var_code { V_MAX, V_MIN, V_SUM, V_MEAN } var_code;

static pc_status run_variadic(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, var_code code)
{
    if (n_in == 0) return ref_fail(ctx, PC_ERR_ARITY, "at least one input is required");
    pc_status st;
    bool float_only = code == V_SUM || code == V_MEAN;
    for (uint32_t j = 0; j < n_in; j++) {
        if ((st = ref_require_tensor(ctx, in, n_in, j)) != PC_OK) return st;
        if ((st = ref_require_dtype(ctx, in[j], j, float_only ? dt_float : dt_number,
                                    float_only ? "floating-point" : "numeric")) != PC_OK)
            return st;
        if (in[j]->dtype != in[0]->dtype)
            return ref_fail(ctx, PC_ERR_TYPE, "input %u is %s but input 0 is %s", j,
                            pc_dtype_name(in[j]->dtype), pc_dtype_name(in[0]->dtype));
    }
    ref_bcast bc;
    if ((st = ref_bcast_init(ctx, n_in, in, &bc)) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, in[0]->dtype, bc.shape.rank, bc.shape.dims);
    if (!y) {
        free(bc.idx);
        return ctx->err->status;
    }
    bool is_f = ref_is_float(in[0]->dtype), uns = dt_unsigned(in[0]->dtype);
    for (uint64_t k = 0; k < bc.n; k++) {
        if (is_f) {
            double acc = ref_get_f64(in[0], bc.idx[k]);
            for (uint32_t j = 1; j < n_in; j++) {
                double v = ref_get_f64(in[j], bc.idx[(size_t)j * bc.n + k]);
                if (code == V_SUM || code == V_MEAN)
                    acc += v;
                else if (isnan(acc) || isnan(v))
                    acc = NAN; /* any NaN operand gives NaN */
                else if (code == V_MAX ? v > acc : v < acc)
                    acc = v;
            }
            ref_set_f64(y, k, code == V_MEAN ? acc / n_in : acc);
        } else {
            int64_t acc = ref_get_i64(in[0], bc.idx[k]);
            for (uint32_t j = 1; j < n_in; j++) {
                int64_t v = ref_get_i64(in[j], bc.idx[(size_t)j * bc.n + k]);
                int c = cmp_int(v, acc, uns);
                if (code == V_MAX ? c > 0 : c < 0) acc = v;
            }
            ref_set_i64(y, k, acc);
        }
    }
    free(bc.idx);
    out[0] = y;
    return PC_OK;
}

KERNEL(Max)
{
    (void)n_out;
    return run_variadic(ctx, in, n_in, out, V_MAX);
}
KERNEL(Min)
{
    (void)n_out;
    return run_variadic(ctx, in, n_in, out, V_MIN);
}
KERNEL(Sum)
{
    (void)n_out;
    return run_variadic(ctx, in, n_in, out, V_SUM);
}
KERNEL(Mean)
{
    (void)n_out;
    return run_variadic(ctx, in, n_in, out, V_MEAN);
}

/* ---- Clip
 * ---------------------------------------------------------------------------------------------------- */

/* The largest finite value of a floating-point type: Clip's bound when one is absent. */
static double float_type_max(pc_dtype dt)
{
    switch (dt) {
    case PC_DTYPE_DOUBLE:
        return DBL_MAX;
    case PC_DTYPE_FLOAT16:
        return 65504.0;
    case PC_DTYPE_BFLOAT16:
        return 3.3895313892515355e38;
    default:
        return FLT_MAX;
    }
}

/* Bounds are attributes min/max before opset 11 (defaults: the float range), optional scalar inputs from 11;
 * integer types from 12. An absent bound input is numeric_limits::lowest() / max() of the type (the spec's
 * words; ONNX Runtime's kernel does the same), so +-Inf meets a finite bound either way: Clip(+Inf) with no
 * max is the largest finite value, not +Inf (issue 14: --special-values found the reference passing it
 * through). y = min(max(x, lo), hi), so lo > hi gives hi; NaN in x or in a bound gives NaN. */
KERNEL(Clip)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, dt_number, "numeric")) != PC_OK) return st;
    bool is_f = ref_is_float(x->dtype), uns = dt_unsigned(x->dtype);
    bool has_lo = false, has_hi = false;
    double flo = 0, fhi = 0;
    int64_t ilo = 0, ihi = 0;
    if (ctx->opset < 11) {
        if (!is_f)
            return ref_fail(
                ctx, PC_ERR_TYPE,
                "input 0 must be floating-point for the attribute form of Clip (opset < 11), got %s",
                pc_dtype_name(x->dtype));
        has_lo = has_hi = true;
        flo = ref_attr_float(ctx, "min", -FLT_MAX);
        fhi = ref_attr_float(ctx, "max", FLT_MAX);
    } else {
        for (uint32_t j = 1; j <= 2; j++) {
            if (j >= n_in || !in[j]) continue;
            if ((st = ref_require_tensor(ctx, in, n_in, j)) != PC_OK) return st;
            if (in[j]->dtype != x->dtype)
                return ref_fail(ctx, PC_ERR_TYPE, "input %u (%s) is %s but input 0 is %s", j,
                                j == 1 ? "min" : "max", pc_dtype_name(in[j]->dtype), pc_dtype_name(x->dtype));
            if (in[j]->n_elements != 1)
                return ref_fail(ctx, PC_ERR_SHAPE, "input %u (%s) must be a scalar, it has %llu elements", j,
                                j == 1 ? "min" : "max", (unsigned long long)in[j]->n_elements);
            if (j == 1) {
                has_lo = true;
                flo = ref_get_f64(in[j], 0);
                ilo = ref_get_i64(in[j], 0);
            } else {
                has_hi = true;
                fhi = ref_get_f64(in[j], 0);
                ihi = ref_get_i64(in[j], 0);
            }
        }
        if (is_f && !has_lo) { /* integers: the type's own range bounds them already */
            has_lo = true;
            flo = -float_type_max(x->dtype);
        }
        if (is_f && !has_hi) {
            has_hi = true;
            fhi = float_type_max(x->dtype);
        }
    }
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    for (uint64_t k = 0; k < x->n_elements; k++) {
        if (is_f) {
            double v = ref_get_f64(x, k);
            if ((has_lo && isnan(flo)) || (has_hi && isnan(fhi))) v = NAN;
            if (has_lo && v < flo) v = flo;
            if (has_hi && v > fhi) v = fhi;
            ref_set_f64(y, k, v);
        } else {
            int64_t v = ref_get_i64(x, k);
            if (has_lo && cmp_int(v, ilo, uns) < 0) v = ilo;
            if (has_hi && cmp_int(v, ihi, uns) > 0) v = ihi;
            ref_set_i64(y, k, v);
        }
    }
    out[0] = y;
    return PC_OK;
}

/* ---- Where
 * --------------------------------------------------------------------------------------------------- */

KERNEL(Where)
{
    (void)n_out;
    pc_status st;
    for (uint32_t j = 0; j < 3; j++)
        if ((st = ref_require_tensor(ctx, in, n_in, j)) != PC_OK) return st;
    if ((st = ref_require_dtype(ctx, in[0], 0, dt_bool, "bool")) != PC_OK) return st;
    if (in[1]->dtype != in[2]->dtype)
        return ref_fail(ctx, PC_ERR_TYPE, "inputs X and Y have different element types (%s and %s)",
                        pc_dtype_name(in[1]->dtype), pc_dtype_name(in[2]->dtype));
    if (!dt_plain(in[1]->dtype))
        return ref_unsupported(ctx, "Where on %s elements", pc_dtype_name(in[1]->dtype));
    ref_bcast bc;
    if ((st = ref_bcast_init(ctx, 3, in, &bc)) != PC_OK) return st;
    pc_data *y = ref_new_tensor(ctx, in[1]->dtype, bc.shape.rank, bc.shape.dims);
    if (!y) {
        free(bc.idx);
        return ctx->err->status;
    }
    bool ok = true;
    for (uint64_t k = 0; k < bc.n && ok; k++) {
        bool c = ref_get_i64(in[0], bc.idx[k]) != 0;
        ok = c ? ref_copy_elem(y, k, in[1], bc.idx[bc.n + k])
               : ref_copy_elem(y, k, in[2], bc.idx[2 * bc.n + k]);
    }
    free(bc.idx);
    if (!ok) {
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying strings");
    }
    out[0] = y;
    return PC_OK;
}

/* ---- PRelu
 * --------------------------------------------------------------------------------------------------- */

/* slope broadcasts unidirectionally to X from opset 7. Before that (Caffe2's PRelu) a 1-D slope of C values
 * applies per channel (axis 1): it is viewed as [C, 1, ..., 1] so that numpy broadcasting lines it up. */
KERNEL(PRelu)
{
    (void)n_out;
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *x = in[0], *s = in[1];
    if ((st = ref_require_dtype(ctx, x, 0, dt_number, "numeric")) != PC_OK) return st;
    if (s->dtype != x->dtype)
        return ref_fail(ctx, PC_ERR_TYPE, "slope is %s but X is %s", pc_dtype_name(s->dtype),
                        pc_dtype_name(x->dtype));
    pc_data sview = *s;
    int64_t sdims[PC_MAX_RANK];
    pc_data *pair[2] = {in[0], in[1]};
    if (ctx->opset < 7 && s->rank == 1 && x->rank >= 2 && s->dims[0] == x->dims[1] && s->dims[0] != 1) {
        sdims[0] = s->dims[0];
        for (int32_t d = 1; d < x->rank - 1; d++)
            sdims[d] = 1;
        sview.rank = x->rank - 1;
        sview.dims = sdims;
        pair[1] = &sview;
    }
    ref_bcast bc;
    if ((st = ref_bcast_init(ctx, 2, pair, &bc)) != PC_OK) return st;
    if (!same_dims(bc.shape.rank, bc.shape.dims, x->rank, x->dims)) {
        free(bc.idx);
        char b1[96], b2[96];
        return ref_fail(ctx, PC_ERR_SHAPE, "slope %s does not broadcast to X %s",
                        pc_data_describe(s, b1, sizeof b1), pc_data_describe(x, b2, sizeof b2));
    }
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) {
        free(bc.idx);
        return ctx->err->status;
    }
    bool is_f = ref_is_float(x->dtype), uns = dt_unsigned(x->dtype);
    for (uint64_t k = 0; k < bc.n; k++) {
        if (is_f) {
            double v = ref_get_f64(x, k);
            ref_set_f64(y, k, v < 0 ? v * ref_get_f64(s, bc.idx[bc.n + k]) : v);
        } else {
            int64_t v = ref_get_i64(x, k);
            if (!uns && v < 0) v = (int64_t)((uint64_t)v * (uint64_t)ref_get_i64(s, bc.idx[bc.n + k]));
            ref_set_i64(y, k, v);
        }
    }
    free(bc.idx);
    out[0] = y;
    return PC_OK;
}

/* ---- Cast / CastLike
 * ----------------------------------------------------------------------------------------- */

/* Whether v, read back from its shortest decimal form, lands on the same value of type t. */
static bool same_in_type(double back, double v, pc_dtype t)
{
    switch (t) {
    case PC_DTYPE_FLOAT:
        return (float)back == (float)v;
    case PC_DTYPE_FLOAT16:
        return ref_f64_to_f16(back) == ref_f64_to_f16(v);
    case PC_DTYPE_BFLOAT16:
        return ref_f64_to_bf16(back) == ref_f64_to_bf16(v);
    default:
        return back == v;
    }
}

/* Formats a float the way numpy's str() does (what ONNX's Cast-to-string test data holds): the shortest
 * digits that read back to the same value of the element type; positional with at least one fractional digit
 * for 1e-4 <= |v| < 1e16 ("0.5", "12.0"), otherwise scientific without trailing zeros ("1e-05", "1.5e+20").
 */
static void format_float(char *buf, size_t size, double v, pc_dtype t)
{
    if (isnan(v)) {
        snprintf(buf, size, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
        return;
    }
    if (v == 0) {
        snprintf(buf, size, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char e[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (same_in_type(strtod(e, NULL), v, t)) break;
    }
    /* e is "[-]d[.ddd]e[+-]xx": collect the digits and the decimal exponent */
    char digits[24];
    size_t nd = 0;
    const char *p = e;
    bool neg = *p == '-';
    if (neg) p++;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < sizeof digits - 1) digits[nd++] = *p;
    int exp10 = *p == 'e' ? atoi(p + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    double a = fabs(v);
    size_t o = 0;
#define PUT(c) (o + 1 < size ? (void)(buf[o++] = (c)) : (void)0)
    if (neg) PUT('-');
    if (a >= 1e-4 && a < 1e16) {
        if (exp10 >= 0) {
            for (int i = 0; i <= exp10; i++)
                PUT((size_t)i < nd ? digits[i] : '0');
            PUT('.');
            if ((size_t)exp10 + 1 < nd)
                for (size_t i = (size_t)exp10 + 1; i < nd; i++)
                    PUT(digits[i]);
            else
                PUT('0');
        } else {
            PUT('0');
            PUT('.');
            for (int i = 0; i < -exp10 - 1; i++)
                PUT('0');
            for (size_t i = 0; i < nd; i++)
                PUT(digits[i]);
        }
    } else {
        PUT(digits[0]);
        if (nd > 1) {
            PUT('.');
            for (size_t i = 1; i < nd; i++)
                PUT(digits[i]);
        }
        char ex[16];
        snprintf(ex, sizeof ex, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        for (const char *q = ex; *q; q++)
            PUT(*q);
    }
#undef PUT
    buf[o] = 0;
}

static bool set_string(pc_data *y, uint64_t i, const char *s)
{
    pc_bytes *b = &((pc_bytes *)y->data)[i];
    size_t n = strlen(s);
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return false;
    memcpy(copy, s, n);
    free(b->data);
    b->data = copy;
    b->len = n;
    return true;
}

/* Parses a string element into y[i]: plain or scientific decimal numbers, "NaN"/"INF"/"+INF"/"-INF" (any
 * case) for floats, decimal integers within the target's range for integer types. Surrounding whitespace is
 * allowed. */
static pc_status parse_string(ref_ctx *ctx, const pc_bytes *s, pc_data *y, uint64_t i)
{
    char buf[128];
    if (s->len >= sizeof buf || (s->len && memchr(s->data, 0, s->len)))
        return ref_fail(ctx, PC_ERR_VALUE, "string element %llu is not a number", (unsigned long long)i);
    if (s->len) memcpy(buf, s->data, s->len);
    buf[s->len] = 0;
    char *end = buf;
    bool range_ok = true;
    if (strpbrk(buf, "xXpP")) {
        /* hexadecimal forms are C's, not the spec's: left unparsed (end == buf) */
    } else if (ref_is_float(y->dtype)) {
        if (y->dtype == PC_DTYPE_FLOAT)
            ((float *)y->data)[i] = strtof(buf, &end);
        else
            ref_set_f64(y, i, strtod(buf, &end));
    } else if (ref_is_int(y->dtype)) {
        unsigned bits = pc_dtype_bits(y->dtype);
        errno = 0;
        if (dt_unsigned(y->dtype)) {
            const char *q = buf + strspn(buf, " \t\n\r");
            unsigned long long v = *q == '-' ? 0 : strtoull(buf, &end, 10); /* strtoull would negate "-1" */
            range_ok = errno == 0 && (bits == 64 || v < (1ull << bits));
            ref_set_i64(y, i, (int64_t)v);
        } else {
            long long v = strtoll(buf, &end, 10);
            range_ok = errno == 0 && (bits == 64 || (v >= -(1ll << (bits - 1)) && v < (1ll << (bits - 1))));
            ref_set_i64(y, i, v);
        }
    } else {
        return ref_unsupported(ctx, "Cast from string to %s", pc_dtype_name(y->dtype));
    }
    bool ok = end != buf;
    end += strspn(end, " \t\n\r");
    if (!ok || *end)
        return ref_fail(ctx, PC_ERR_VALUE, "string element %llu (\"%s\") is not a number",
                        (unsigned long long)i, buf);
    if (!range_ok)
        return ref_fail(ctx, PC_ERR_VALUE, "string element %llu (\"%s\") is out of range for %s",
                        (unsigned long long)i, buf, pc_dtype_name(y->dtype));
    return PC_OK;
}

static pc_status cast_to(ref_ctx *ctx, const pc_data *x, pc_dtype to, pc_data **out)
{
    if (!dt_plain(x->dtype)) return ref_unsupported(ctx, "Cast from %s", pc_dtype_name(x->dtype));
    if (!dt_plain(to)) return ref_unsupported(ctx, "Cast to %s", pc_dtype_name(to));
    if (x->dtype == PC_DTYPE_BOOL && to == PC_DTYPE_STRING)
        return ref_unsupported(ctx, "Cast from bool to string (no spelling is specified)");
    pc_data *y = ref_new_tensor(ctx, to, x->rank, x->dims);
    if (!y) return ctx->err->status;
    bool from_f = ref_is_float(x->dtype), from_64 = x->dtype == PC_DTYPE_INT64 || x->dtype == PC_DTYPE_UINT64;
    for (uint64_t i = 0; i < x->n_elements; i++) {
        if (x->dtype == to) {
            if (!ref_copy_elem(y, i, x, i)) goto nomem;
        } else if (to == PC_DTYPE_STRING) {
            char buf[64];
            if (from_f)
                format_float(buf, sizeof buf, ref_get_f64(x, i), x->dtype);
            else if (dt_unsigned(x->dtype))
                snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)ref_get_i64(x, i));
            else
                snprintf(buf, sizeof buf, "%" PRId64, ref_get_i64(x, i));
            if (!set_string(y, i, buf)) goto nomem;
        } else if (x->dtype == PC_DTYPE_STRING) {
            pc_status st = parse_string(ctx, &((const pc_bytes *)x->data)[i], y, i);
            if (st != PC_OK) {
                pc_data_unref(y);
                return st;
            }
        } else if (ref_is_float(to)) {
            if (from_64 && to == PC_DTYPE_FLOAT) {
                /* one rounding, straight from the 64-bit integer */
                int64_t v = ref_get_i64(x, i);
                ((float *)y->data)[i] = x->dtype == PC_DTYPE_UINT64 ? (float)(uint64_t)v : (float)v;
            } else {
                ref_set_f64(y, i, ref_get_f64(x, i));
            }
        } else if (from_f) {
            ref_set_f64(y, i,
                        ref_get_f64(x, i)); /* truncation toward zero; bool: nonzero (NaN too) is true */
        } else {
            ref_set_i64(y, i, ref_get_i64(x, i)); /* integers wrap, as a two's complement reinterpretation */
        }
    }
    *out = y;
    return PC_OK;
nomem:
    pc_data_unref(y);
    return ref_fail(ctx, PC_ERR_NOMEM, "out of memory creating strings");
}

KERNEL(Cast)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_attr *a = pc_node_attr(ctx->node, "to");
    if (!a) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute to is required");
    pc_dtype to = PC_DTYPE_UNDEFINED;
    if (a->type == PC_ATTR_INT) {
        if (!pc_dtype_is_valid((int32_t)a->i) || a->i != (int32_t)a->i)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute to is not an element type: %lld",
                            (long long)a->i);
        to = (pc_dtype)a->i;
    } else if (a->type == PC_ATTR_STRING && a->s.data) {
        /* opset 1 named the type: "FLOAT", "INT32", ... */
        for (int t = 1; t < PC_DTYPE_COUNT && to == PC_DTYPE_UNDEFINED; t++)
            if (strcasecmp((const char *)a->s.data, pc_dtype_name((pc_dtype)t)) == 0) to = (pc_dtype)t;
        if (to == PC_DTYPE_UNDEFINED)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute to names no element type: \"%s\"",
                            (const char *)a->s.data);
    } else {
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute to must be an int (or a string before opset 6)");
    }
    return cast_to(ctx, in[0], to, out);
}

KERNEL(CastLike)
{
    (void)n_out;
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    return cast_to(ctx, in[0], in[1]->dtype, out);
}

/* ---- GridSample
 * ---------------------------------------------------------------------------------------------- */

/* Follows torch.nn.functional.grid_sample (opset 16's stated reference, which produced its test data): grid
 * (x, y) in
 * [-1, 1] unnormalized per align_corners; bilinear/nearest pad the source coordinate, bicubic (A = -0.75)
 * pads each of its 16 taps. From opset 20 bicubic with border/reflection padding follows ONNX's own reference
 * instead (see gs_pad_source20); for the other modes the two agree. */
enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

static double gs_unnormalize(double g, int64_t size, bool align)
{
    return align ? (g + 1) / 2 * (double)(size - 1) : ((g + 1) * (double)size - 1) / 2;
}

/* Reflects x into [twice_lo/2, twice_hi/2] as often as needed. */
static double gs_reflect(double x, double twice_lo, double twice_hi)
{
    if (twice_lo == twice_hi) return 0;
    double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
    x = fabs(x - lo);
    double extra = fmod(x, span), flips = floor(x / span);
    return fmod(flips, 2) == 0 ? extra + lo : span - extra + lo;
}

static double gs_pad(double x, int64_t size, int pad, bool align)
{
    if (pad == GS_ZEROS) return x;
    if (pad == GS_REFLECTION)
        x = align ? gs_reflect(x, 0, 2.0 * (double)(size - 1)) : gs_reflect(x, -1, 2.0 * (double)size - 1);
    return fmin((double)(size - 1),
                fmax(x, 0)); /* fmax(NaN, 0) is 0: a reflected infinity lands on the border */
}

/* Opset 20's reference implementation (and ONNX Runtime) moves an out-of-range bicubic sample point onto the
 * border (clamp) or reflects it once into [lo, hi] before taking taps; torch takes the taps around the
 * original point. */
static double gs_pad_source20(double x, int64_t size, int pad, bool align)
{
    double lo = align ? 0 : -0.5, hi = align ? (double)(size - 1) : (double)size - 0.5, rng = hi - lo;
    if (x >= lo && x <= hi) return x;
    if (pad == GS_BORDER) return fmin((double)(size - 1), fmax(x, 0));
    if (!(rng > 0)) return lo;
    double dx = x < lo ? lo - x : x - hi, n = floor(dx / rng), r = dx - n * rng;
    bool even = fmod(n, 2) == 0;
    return x < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
}

/* The value at integer-valued (yy, xx) of one H x W plane, 0 outside (bounds checked before converting). */
static double gs_tap(const pc_data *x, uint64_t base, int64_t h, int64_t w, double yy, double xx)
{
    if (!(yy >= 0 && yy <= (double)(h - 1) && xx >= 0 && xx <= (double)(w - 1))) return 0;
    return ref_get_f64(x, base + (uint64_t)yy * (uint64_t)w + (uint64_t)xx);
}

static void gs_cubic_coeffs(double t, double c[4])
{
    const double A = -0.75;
#define CC1(v) (((A + 2) * (v) - (A + 3)) * (v) * (v) + 1)   /* |v| <= 1 */
#define CC2(v) (((A * (v)-5 * A) * (v) + 8 * A) * (v)-4 * A) /* 1 < |v| < 2 */
    c[0] = CC2(t + 1);
    c[1] = CC1(t);
    c[2] = CC1(1 - t);
    c[3] = CC2(2 - t);
#undef CC1
#undef CC2
}

KERNEL(GridSample)
{
    (void)n_out;
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *x = in[0], *g = in[1];
    if ((st = ref_require_dtype(ctx, x, 0, dt_float, "floating-point")) != PC_OK ||
        (st = ref_require_dtype(ctx, g, 1, dt_float, "floating-point")) != PC_OK)
        return st;
    /* opset 20 renamed the modes (linear/cubic) and allowed N-D input; the old names stay accepted */
    const char *ms = ref_attr_string(ctx, "mode", ctx->opset >= 20 ? "linear" : "bilinear");
    const char *ps = ref_attr_string(ctx, "padding_mode", "zeros");
    int mode, pad;
    if (strcmp(ms, "bilinear") == 0 || strcmp(ms, "linear") == 0)
        mode = GS_LINEAR;
    else if (strcmp(ms, "nearest") == 0)
        mode = GS_NEAREST;
    else if (strcmp(ms, "bicubic") == 0 || strcmp(ms, "cubic") == 0)
        mode = GS_CUBIC;
    else
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute mode must be bilinear, nearest or bicubic, got \"%s\"", ms);
    if (strcmp(ps, "zeros") == 0)
        pad = GS_ZEROS;
    else if (strcmp(ps, "border") == 0)
        pad = GS_BORDER;
    else if (strcmp(ps, "reflection") == 0)
        pad = GS_REFLECTION;
    else
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute padding_mode must be zeros, border or reflection, got \"%s\"", ps);
    bool align = ref_attr_int(ctx, "align_corners", 0) != 0;
    if (x->rank != 4) {
        if (x->rank >= 3 && ctx->opset >= 20)
            return ref_unsupported(ctx, "GridSample on rank-%d input (only 4-D)", (int)x->rank);
        return ref_fail(ctx, PC_ERR_SHAPE, "input X must be 4-D (N, C, H, W), got rank %d", (int)x->rank);
    }
    if (g->rank != 4 || g->dims[0] != x->dims[0] || g->dims[3] != 2) {
        char b[96];
        return ref_fail(ctx, PC_ERR_SHAPE, "grid must be (N=%lld, H_out, W_out, 2), got %s",
                        (long long)x->dims[0], pc_data_describe(g, b, sizeof b));
    }
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], Ho = g->dims[1], Wo = g->dims[2];
    int64_t odims[4] = {N, C, Ho, Wo};
    pc_data *y = ref_new_tensor(ctx, x->dtype, 4, odims);
    if (!y) return ctx->err->status;
    uint64_t k = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            uint64_t base = ((uint64_t)n * (uint64_t)C + (uint64_t)c) * (uint64_t)H * (uint64_t)W;
            for (int64_t oh = 0; oh < Ho; oh++)
                for (int64_t ow = 0; ow < Wo; ow++, k++) {
                    uint64_t gi =
                        (((uint64_t)n * (uint64_t)Ho + (uint64_t)oh) * (uint64_t)Wo + (uint64_t)ow) * 2;
                    double gx = ref_get_f64(g, gi), gy = ref_get_f64(g, gi + 1), v = 0;
                    if (isnan(gx) || isnan(gy)) {
                        ref_set_f64(y, k, NAN); /* no location to sample */
                        continue;
                    }
                    double ix = gs_unnormalize(gx, W, align), iy = gs_unnormalize(gy, H, align);
                    if (mode != GS_CUBIC) {
                        ix = gs_pad(ix, W, pad, align);
                        iy = gs_pad(iy, H, pad, align);
                    }
                    if (!isfinite(ix) || !isfinite(iy)) {
                        ref_set_f64(y, k, 0); /* zeros padding at infinity */
                        continue;
                    }
                    if (mode == GS_NEAREST) {
                        v = gs_tap(x, base, H, W, nearbyint(iy), nearbyint(ix)); /* ties to even, as torch */
                    } else if (mode == GS_LINEAR) {
                        double x0 = floor(ix), y0 = floor(iy), tx = ix - x0, ty = iy - y0;
                        v = gs_tap(x, base, H, W, y0, x0) * (1 - tx) * (1 - ty) +
                            gs_tap(x, base, H, W, y0, x0 + 1) * tx * (1 - ty) +
                            gs_tap(x, base, H, W, y0 + 1, x0) * (1 - tx) * ty +
                            gs_tap(x, base, H, W, y0 + 1, x0 + 1) * tx * ty;
                    } else {
                        if (ctx->opset >= 20 && pad != GS_ZEROS) {
                            ix = gs_pad_source20(ix, W, pad, align);
                            iy = gs_pad_source20(iy, H, pad, align);
                        }
                        double x0 = floor(ix), y0 = floor(iy), cx[4], cy[4];
                        gs_cubic_coeffs(ix - x0, cx);
                        gs_cubic_coeffs(iy - y0, cy);
                        for (int i = 0; i < 4; i++) {
                            double yy = trunc(gs_pad(y0 - 1 + i, H, pad, align)), row = 0;
                            for (int j = 0; j < 4; j++)
                                row += cx[j] *
                                       gs_tap(x, base, H, W, yy, trunc(gs_pad(x0 - 1 + j, W, pad, align)));
                            v += cy[i] * row;
                        }
                    }
                    ref_set_f64(y, k, v);
                }
        }
    out[0] = y;
    return PC_OK;
}

/* ---- RoiAlign
 * ------------------------------------------------------------------------------------------------ */

/* Bilinear sample at (yy, xx) of one plane with RoiAlign's edge rules (those of the reference
 * implementations): points more than one pixel outside contribute 0, others clamp to the plane. The four
 * weighted corner values go to wv[] (max mode takes the largest of them). */
static void roi_sample(const pc_data *x, uint64_t base, int64_t h, int64_t w, double yy, double xx,
                       double wv[4])
{
    wv[0] = wv[1] = wv[2] = wv[3] = 0;
    if (yy < -1.0 || yy > (double)h || xx < -1.0 || xx > (double)w) return;
    if (yy <= 0) yy = 0;
    if (xx <= 0) xx = 0;
    int64_t y0 = (int64_t)yy, x0 = (int64_t)xx, y1, x1;
    if (y0 >= h - 1) {
        y1 = y0 = h - 1;
        yy = (double)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= w - 1) {
        x1 = x0 = w - 1;
        xx = (double)x0;
    } else {
        x1 = x0 + 1;
    }
    double ly = yy - (double)y0, lx = xx - (double)x0, hy = 1 - ly, hx = 1 - lx;
    wv[0] = hy * hx * ref_get_f64(x, base + (uint64_t)(y0 * w + x0));
    wv[1] = hy * lx * ref_get_f64(x, base + (uint64_t)(y0 * w + x1));
    wv[2] = ly * hx * ref_get_f64(x, base + (uint64_t)(y1 * w + x0));
    wv[3] = ly * lx * ref_get_f64(x, base + (uint64_t)(y1 * w + x1));
}

static double max_nan(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

KERNEL(RoiAlign)
{
    (void)n_out;
    pc_status st;
    for (uint32_t j = 0; j < 3; j++)
        if ((st = ref_require_tensor(ctx, in, n_in, j)) != PC_OK) return st;
    const pc_data *x = in[0], *rois = in[1], *bi = in[2];
    if ((st = ref_require_dtype(ctx, x, 0, dt_float, "floating-point")) != PC_OK ||
        (st = ref_require_dtype(ctx, rois, 1, dt_float, "floating-point")) != PC_OK ||
        (st = ref_require_dtype(ctx, bi, 2, dt_int, "integer")) != PC_OK)
        return st;
    if (x->rank != 4)
        return ref_fail(ctx, PC_ERR_SHAPE, "input X must be 4-D (N, C, H, W), got rank %d", (int)x->rank);
    if (rois->rank != 2 || rois->dims[1] != 4)
        return ref_fail(ctx, PC_ERR_SHAPE, "input rois must be (num_rois, 4)");
    if (bi->rank != 1 || bi->dims[0] != rois->dims[0])
        return ref_fail(ctx, PC_ERR_SHAPE, "input batch_indices must be (num_rois) = (%lld)",
                        (long long)rois->dims[0]);
    const char *ms = ref_attr_string(ctx, "mode", "avg");
    bool is_max = strcmp(ms, "max") == 0;
    if (!is_max && strcmp(ms, "avg") != 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute mode must be avg or max, got \"%s\"", ms);
    /* opset 16 added the mode and made half_pixel the default; opset 10 behaves as output_half_pixel */
    bool half = false;
    if (ctx->opset >= 16) {
        const char *cm = ref_attr_string(ctx, "coordinate_transformation_mode", "half_pixel");
        half = strcmp(cm, "half_pixel") == 0;
        if (!half && strcmp(cm, "output_half_pixel") != 0)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                            "attribute coordinate_transformation_mode must be half_pixel or "
                            "output_half_pixel, got \"%s\"",
                            cm);
    }
    int64_t oh = ref_attr_int(ctx, "output_height", 1), ow = ref_attr_int(ctx, "output_width", 1);
    int64_t sr = ref_attr_int(ctx, "sampling_ratio", 0);
    double scale = ref_attr_float(ctx, "spatial_scale", 1.0);
    if (oh <= 0 || ow <= 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attributes output_height/output_width must be positive, got %lld/%lld",
                        (long long)oh, (long long)ow);
    if (sr < 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute sampling_ratio must be >= 0, got %lld",
                        (long long)sr);
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], R = rois->dims[0];
    if ((H == 0 || W == 0) && R > 0 && C > 0)
        return ref_fail(ctx, PC_ERR_SHAPE, "input X has an empty %lld x %lld feature map to pool RoIs from",
                        (long long)H, (long long)W);
    int64_t odims[4] = {R, C, oh, ow};
    pc_data *y = ref_new_tensor(ctx, x->dtype, 4, odims);
    if (!y) return ctx->err->status;
    uint64_t k = 0;
    for (int64_t r = 0; r < R; r++) {
        int64_t b = ref_get_i64(bi, (uint64_t)r);
        if (b < 0 || b >= N) {
            pc_data_unref(y);
            return ref_fail(ctx, PC_ERR_VALUE, "batch_indices[%lld] = %lld is outside [0, %lld)",
                            (long long)r, (long long)b, (long long)N);
        }
        double c4[4];
        for (int j = 0; j < 4; j++) {
            c4[j] = ref_get_f64(rois, (uint64_t)r * 4 + (uint64_t)j);
            if (!isfinite(c4[j])) {
                pc_data_unref(y);
                return ref_fail(ctx, PC_ERR_VALUE, "rois[%lld][%d] is not finite", (long long)r, j);
            }
        }
        double off = half ? 0.5 : 0.0;
        double sw = c4[0] * scale - off, sh = c4[1] * scale - off, ew = c4[2] * scale - off,
               eh = c4[3] * scale - off;
        double rw = ew - sw, rh = eh - sh;
        if (!half) {
            rw = fmax(rw, 1.0); /* legacy mode: RoIs at least one pixel */
            rh = fmax(rh, 1.0);
        }
        double bh = rh / (double)oh, bw = rw / (double)ow;
        double gh = sr > 0 ? (double)sr : ceil(rh / (double)oh),
               gw = sr > 0 ? (double)sr : ceil(rw / (double)ow);
        if (!isfinite(gh) || !isfinite(gw) || gh * gw > (double)(1 << 24)) {
            pc_data_unref(y);
            return ref_fail(ctx, PC_ERR_BUDGET, "RoI %lld needs a %g x %g sampling grid per bin",
                            (long long)r, gh, gw);
        }
        int64_t ngh = gh > 0 ? (int64_t)gh : 0, ngw = gw > 0 ? (int64_t)gw : 0;
        double count = gh * gw > 1 ? gh * gw : 1;
        for (int64_t c = 0; c < C; c++) {
            uint64_t base = ((uint64_t)b * (uint64_t)C + (uint64_t)c) * (uint64_t)H * (uint64_t)W;
            for (int64_t ph = 0; ph < oh; ph++)
                for (int64_t pw = 0; pw < ow; pw++, k++) {
                    double acc = 0;
                    bool first = true;
                    for (int64_t iy = 0; iy < ngh; iy++) {
                        double yy = sh + (double)ph * bh + ((double)iy + 0.5) * bh / gh;
                        for (int64_t ix = 0; ix < ngw; ix++) {
                            double xx = sw + (double)pw * bw + ((double)ix + 0.5) * bw / gw, wv[4];
                            roi_sample(x, base, H, W, yy, xx, wv);
                            if (!is_max) {
                                acc += wv[0] + wv[1] + wv[2] + wv[3];
                            } else {
                                /* max mode takes the largest weighted corner, as ONNX Runtime (and ONNX's own
                                 * reference implementation) do; NaN propagates */
                                double m = max_nan(max_nan(wv[0], wv[1]), max_nan(wv[2], wv[3]));
                                acc = first ? m : max_nan(acc, m);
                                first = false;
                            }
                        }
                    }
                    ref_set_f64(y, k, is_max ? acc : acc / count);
                }
        }
    }
    out[0] = y;
    return PC_OK;
}

/* ---- NonMaxSuppression
 * --------------------------------------------------------------------------------------- */

typedef struct nms_cand {
    double score;
    int64_t index;
} nms_cand;

/* Highest score first; equal scores by lower box index (ONNX Runtime's and the spec reference's order); NaN
 * last. */
static int nms_cmp(const void *pa, const void *pb)
{
    const nms_cand *a = pa, *b = pb;
    bool na = isnan(a->score), nb = isnan(b->score);
    if (na != nb) return na ? 1 : -1;
    if (!na && a->score != b->score) return a->score > b->score ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Corners of box i of batch b as (ymin, xmin, ymax, xmax). */
static void nms_box(const pc_data *boxes, uint64_t off, bool center, double out4[4])
{
    double v[4];
    for (int j = 0; j < 4; j++)
        v[j] = ref_get_f64(boxes, off + (uint64_t)j);
    if (center) { /* [x_center, y_center, width, height] */
        out4[0] = v[1] - v[3] / 2;
        out4[2] = v[1] + v[3] / 2;
        out4[1] = v[0] - v[2] / 2;
        out4[3] = v[0] + v[2] / 2;
    } else { /* [y1, x1, y2, x2], any diagonal pair */
        out4[0] = fmin(v[0], v[2]);
        out4[2] = fmax(v[0], v[2]);
        out4[1] = fmin(v[1], v[3]);
        out4[3] = fmax(v[1], v[3]);
    }
}

static bool nms_suppress(const double a[4], const double b[4], double thr)
{
    double iy0 = fmax(a[0], b[0]), iy1 = fmin(a[2], b[2]), ix0 = fmax(a[1], b[1]), ix1 = fmin(a[3], b[3]);
    if (iy1 <= iy0 || ix1 <= ix0) return false;
    double inter = (iy1 - iy0) * (ix1 - ix0);
    double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    double uni = area_a + area_b - inter;
    if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter / uni > thr;
}

static pc_status nms_scalar(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, uint32_t j, const char *name,
                            bool want_int, bool *present, double *f, int64_t *i)
{
    *present = false;
    if (j >= n_in || !in[j]) return PC_OK;
    pc_status st = ref_require_tensor(ctx, in, n_in, j);
    if (st != PC_OK) return st;
    if ((st = ref_require_dtype(ctx, in[j], j, want_int ? dt_int : dt_float,
                                want_int ? "integer" : "floating-point")) != PC_OK)
        return st;
    if (in[j]->n_elements == 0)
        return PC_OK; /* an empty tensor counts as omitted, as in the reference implementations */
    if (in[j]->n_elements != 1)
        return ref_fail(ctx, PC_ERR_SHAPE, "input %u (%s) must hold one value, it has %llu", j, name,
                        (unsigned long long)in[j]->n_elements);
    *present = true;
    if (want_int)
        *i = ref_get_i64(in[j], 0);
    else
        *f = ref_get_f64(in[j], 0);
    return PC_OK;
}

KERNEL(NonMaxSuppression)
{
    (void)n_out;
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *boxes = in[0], *scores = in[1];
    if ((st = ref_require_dtype(ctx, boxes, 0, dt_float, "floating-point")) != PC_OK ||
        (st = ref_require_dtype(ctx, scores, 1, dt_float, "floating-point")) != PC_OK)
        return st;
    if (boxes->rank != 3 || boxes->dims[2] != 4)
        return ref_fail(ctx, PC_ERR_SHAPE, "boxes must be (batches, boxes, 4)");
    if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
        return ref_fail(ctx, PC_ERR_SHAPE, "scores must be (batches=%lld, classes, boxes=%lld)",
                        (long long)boxes->dims[0], (long long)boxes->dims[1]);
    int64_t cpb = ref_attr_int(ctx, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute center_point_box must be 0 or 1, got %lld",
                        (long long)cpb);
    bool has_max, has_iou, has_score;
    int64_t max_out = 0;
    double iou = 0, score_thr = 0, unused_f;
    int64_t unused_i;
    if ((st = nms_scalar(ctx, in, n_in, 2, "max_output_boxes_per_class", true, &has_max, &unused_f,
                         &max_out)) != PC_OK ||
        (st = nms_scalar(ctx, in, n_in, 3, "iou_threshold", false, &has_iou, &iou, &unused_i)) != PC_OK ||
        (st = nms_scalar(ctx, in, n_in, 4, "score_threshold", false, &has_score, &score_thr, &unused_i)) !=
            PC_OK)
        return st;
    if (!has_max || max_out < 0) max_out = 0; /* absent: no output */
    if (!has_iou) iou = 0;
    if (!(iou >= 0 && iou <= 1))
        return ref_fail(ctx, PC_ERR_VALUE, "iou_threshold must be in [0, 1], got %g", iou);
    int64_t B = boxes->dims[0], S = boxes->dims[1], C = scores->dims[1];
    int64_t per_class = max_out < S ? max_out : S;
    /* room for every selection: at most B * C * per_class rows, bounded by the scores tensor's size */
    uint64_t cap = (uint64_t)B * (uint64_t)C * (uint64_t)per_class;
    nms_cand *cand = malloc((size_t)(S ? S : 1) * sizeof *cand);
    int64_t *sel = malloc((size_t)(S ? S : 1) * sizeof *sel);
    int64_t *rows = malloc((size_t)(cap ? cap : 1) * 3 * sizeof *rows);
    double(*corners)[4] = malloc((size_t)(S ? S : 1) * sizeof *corners);
    if (!cand || !sel || !rows || !corners) {
        free(cand);
        free(sel);
        free(rows);
        free(corners);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    }
    uint64_t n_rows = 0;
    for (int64_t b = 0; b < B && per_class > 0; b++) {
        for (int64_t i = 0; i < S; i++)
            nms_box(boxes, ((uint64_t)b * (uint64_t)S + (uint64_t)i) * 4, cpb == 1, corners[i]);
        for (int64_t c = 0; c < C; c++) {
            size_t nc = 0;
            for (int64_t i = 0; i < S; i++) {
                double s = ref_get_f64(scores,
                                       ((uint64_t)b * (uint64_t)C + (uint64_t)c) * (uint64_t)S + (uint64_t)i);
                if (has_score && !(s > score_thr)) continue; /* kept only when strictly above the threshold */
                cand[nc].score = s;
                cand[nc].index = i;
                nc++;
            }
            qsort(cand, nc, sizeof *cand, nms_cmp);
            int64_t ns = 0;
            for (size_t q = 0; q < nc && ns < per_class; q++) {
                bool keep = true;
                for (int64_t t = 0; t < ns && keep; t++)
                    if (nms_suppress(corners[cand[q].index], corners[sel[t]], iou)) keep = false;
                if (!keep) continue;
                sel[ns++] = cand[q].index;
                rows[n_rows * 3] = b;
                rows[n_rows * 3 + 1] = c;
                rows[n_rows * 3 + 2] = cand[q].index;
                n_rows++;
            }
        }
    }
    free(cand);
    free(sel);
    free(corners);
    int64_t odims[2] = {(int64_t)n_rows, 3};
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_INT64, 2, odims);
    if (y && n_rows) memcpy(y->data, rows, (size_t)n_rows * 3 * sizeof *rows);
    free(rows);
    if (!y) return ctx->err->status;
    out[0] = y;
    return PC_OK;
}

/* ---- Det
 * ----------------------------------------------------------------------------------------------------- */

/* LU decomposition with partial pivoting in double, one matrix at a time. */
KERNEL(Det)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, dt_float, "floating-point")) != PC_OK) return st;
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2]) {
        char b[96];
        return ref_fail(ctx, PC_ERR_SHAPE, "input must be [*, M, M], got %s",
                        pc_data_describe(x, b, sizeof b));
    }
    int64_t m = x->dims[x->rank - 1];
    uint64_t mm = (uint64_t)m * (uint64_t)m; /* bounded by the input's size unless the batch is empty */
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank - 2, x->dims);
    if (!y) return ctx->err->status;
    if (y->n_elements == 0) {
        out[0] = y;
        return PC_OK;
    }
    double *a = malloc((size_t)(mm ? mm : 1) * sizeof *a);
    if (!a) {
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    }
    size_t M = (size_t)m;
    for (uint64_t bt = 0; bt < y->n_elements; bt++) {
        for (uint64_t i = 0; i < mm; i++)
            a[i] = ref_get_f64(x, bt * mm + i);
        double det = 1;
        for (size_t col = 0; col < M; col++) {
            size_t piv = col;
            for (size_t r = col + 1; r < M; r++)
                if (fabs(a[r * M + col]) > fabs(a[piv * M + col])) piv = r;
            if (piv != col) {
                for (size_t j = 0; j < M; j++) {
                    double t = a[col * M + j];
                    a[col * M + j] = a[piv * M + j];
                    a[piv * M + j] = t;
                }
                det = -det;
            }
            double p = a[col * M + col];
            det *= p;
            if (p == 0) break; /* singular: det is 0 (NaN/inf inputs propagate through det) */
            for (size_t r = col + 1; r < M; r++) {
                double f = a[r * M + col] / p;
                for (size_t j = col; j < M; j++)
                    a[r * M + j] -= f * a[col * M + j];
            }
        }
        ref_set_f64(y, bt, det);
    }
    free(a);
    out[0] = y;
    return PC_OK;
}

/* ---- StringNormalizer
 * ---------------------------------------------------------------------------------------- */

static bool ascii_only(const pc_bytes *s)
{
    for (size_t i = 0; i < s->len; i++)
        if (s->data[i] >= 0x80) return false;
    return true;
}

static bool ascii_eq_nocase(const pc_bytes *a, const pc_bytes *b)
{
    if (a->len != b->len) return false;
    for (size_t i = 0; i < a->len; i++) {
        uint8_t x = a->data[i], y = b->data[i];
        if (x >= 'A' && x <= 'Z') x = (uint8_t)(x + 32);
        if (y >= 'A' && y <= 'Z') y = (uint8_t)(y + 32);
        if (x != y) return false;
    }
    return true;
}

/* Case mapping is ASCII only: strings with other characters that need mapping or case-insensitive matching
 * are reported unsupported rather than mapped by a locale this executor does not have. */
KERNEL(StringNormalizer)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if (x->dtype != PC_DTYPE_STRING)
        return ref_fail(ctx, PC_ERR_TYPE, "input 0 must be a string tensor, got %s", pc_dtype_name(x->dtype));
    if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
        return ref_fail(ctx, PC_ERR_SHAPE, "input must be [C] or [1, C]");
    const char *action = ref_attr_string(ctx, "case_change_action", "NONE");
    int act = strcmp(action, "NONE") == 0    ? 0
              : strcmp(action, "LOWER") == 0 ? 1
              : strcmp(action, "UPPER") == 0 ? 2
                                             : -1;
    if (act < 0)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute case_change_action must be NONE, LOWER or UPPER, got \"%s\"", action);
    bool sensitive = ref_attr_int(ctx, "is_case_sensitive", 0) != 0;
    const char *locale = ref_attr_string(ctx, "locale", NULL);
    if (locale && *locale && strcmp(locale, "en_US") != 0 && strcmp(locale, "en_US.UTF-8") != 0)
        return ref_unsupported(ctx, "StringNormalizer with locale \"%s\" (only en_US)", locale);
    const pc_attr *sw = pc_node_attr(ctx->node, "stopwords");
    size_t n_sw = sw && sw->type == PC_ATTR_STRINGS ? sw->n : 0;
    uint64_t n = x->n_elements;
    const pc_bytes *xs = x->data;
    bool *keep = malloc((size_t)(n ? n : 1) * sizeof *keep);
    if (!keep) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    uint64_t kept = 0;
    for (uint64_t i = 0; i < n; i++) {
        keep[i] = true;
        for (size_t j = 0; j < n_sw && keep[i]; j++) {
            if (sensitive) {
                keep[i] = !(xs[i].len == sw->strings[j].len &&
                            (xs[i].len == 0 || memcmp(xs[i].data, sw->strings[j].data, xs[i].len) == 0));
                continue;
            }
            if (!ascii_only(&xs[i]) || !ascii_only(&sw->strings[j])) {
                free(keep);
                return ref_unsupported(ctx,
                                       "case-insensitive StringNormalizer matching of non-ASCII strings");
            }
            keep[i] = !ascii_eq_nocase(&xs[i], &sw->strings[j]);
        }
        if (keep[i] && act && !ascii_only(&xs[i])) {
            free(keep);
            return ref_unsupported(ctx, "StringNormalizer case change of non-ASCII strings");
        }
        kept += keep[i];
    }
    /* everything dropped: one empty string, shaped [1] or [1, 1] */
    int64_t odims[2] = {1, kept ? (int64_t)kept : 1};
    pc_data *y = x->rank == 1 ? ref_new_tensor(ctx, PC_DTYPE_STRING, 1, odims + 1)
                              : ref_new_tensor(ctx, PC_DTYPE_STRING, 2, odims);
    if (!y) {
        free(keep);
        return ctx->err->status;
    }
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!keep[i]) continue;
        if (!ref_copy_elem(y, k, x, i)) {
            free(keep);
            pc_data_unref(y);
            return ref_fail(ctx, PC_ERR_NOMEM, "out of memory copying strings");
        }
        pc_bytes *s = &((pc_bytes *)y->data)[k++];
        for (size_t c = 0; c < s->len; c++) {
            if (act == 1 && s->data[c] >= 'A' && s->data[c] <= 'Z') s->data[c] = (uint8_t)(s->data[c] + 32);
            if (act == 2 && s->data[c] >= 'a' && s->data[c] <= 'z') s->data[c] = (uint8_t)(s->data[c] - 32);
        }
    }
    free(keep);
    out[0] = y;
    return PC_OK;
}

/* ---- random ops
 * ---------------------------------------------------------------------------------------------- */

/* Registered so that they report "non-deterministic" instead of "unknown op": no reference value exists for
 * them. */
static pc_status random_op(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)in;
    (void)n_in;
    (void)out;
    (void)n_out;
    return ref_unsupported(ctx, "%s is non-deterministic (its output depends on a random number generator)",
                           ctx->node->op_type);
}

const ref_op ref_ops_misc[] = {
    {"", "And", op_And},
    {"", "Bernoulli", random_op},
    {"", "BitShift", op_BitShift},
    {"", "BitwiseAnd", op_BitwiseAnd},
    {"", "BitwiseOr", op_BitwiseOr},
    {"", "BitwiseXor", op_BitwiseXor},
    {"", "Cast", op_Cast},
    {"", "CastLike", op_CastLike},
    {"", "Clip", op_Clip},
    {"", "Det", op_Det},
    {"", "Equal", op_Equal},
    {"", "Greater", op_Greater},
    {"", "GreaterOrEqual", op_GreaterOrEqual},
    {"", "GridSample", op_GridSample},
    {"", "Less", op_Less},
    {"", "LessOrEqual", op_LessOrEqual},
    {"", "Max", op_Max},
    {"", "Mean", op_Mean},
    {"", "Min", op_Min},
    {"", "Mod", op_Mod},
    {"", "Multinomial", random_op},
    {"", "NonMaxSuppression", op_NonMaxSuppression},
    {"", "Or", op_Or},
    {"", "PRelu", op_PRelu},
    {"", "RandomNormal", random_op},
    {"", "RandomNormalLike", random_op},
    {"", "RandomUniform", random_op},
    {"", "RandomUniformLike", random_op},
    {"", "RoiAlign", op_RoiAlign},
    {"", "StringNormalizer", op_StringNormalizer},
    {"", "Sum", op_Sum},
    {"", "Where", op_Where},
    {"", "Xor", op_Xor},
};
const size_t ref_ops_misc_count = sizeof ref_ops_misc / sizeof ref_ops_misc[0];
