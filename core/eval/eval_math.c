/* Constant evaluator: arithmetic, comparison and logic (broadcasting, one loop for every dtype through the
 * access table), Cast, Where, and integer Reduce* for shape arithmetic. Floats are computed in double and
 * rounded once on store; integers wrap. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval/eval_internal.h"

/* ---- broadcasting binary and variadic ops ---- */

typedef enum { IN_NUMERIC, IN_ANY, IN_BOOL } in_class;

typedef struct binop {
    double (*f)(double a, double b);
    /* false: the result is undefined (integer division by zero) */
    bool (*i)(int64_t a, int64_t b, bool u64, int64_t *out);
    in_class accepts;
    bool bool_out;
    bool variadic;
} binop;

static double f_add(double a, double b)
{
    return a + b;
}
static double f_sub(double a, double b)
{
    return a - b;
}
static double f_mul(double a, double b)
{
    return a * b;
}
static double f_div(double a, double b)
{
    return a / b;
}
static double f_min(double a, double b)
{
    if (pc_fault_active(PC_FAULT_EVAL_TIE_LATER) && !isnan(a) && !isnan(b) && a == b) return b;
    return isnan(a) || isnan(b) ? NAN : b < a ? b : a;
}
static double f_max(double a, double b)
{
    if (pc_fault_active(PC_FAULT_EVAL_TIE_LATER) && !isnan(a) && !isnan(b) && a == b) return b;
    return isnan(a) || isnan(b) ? NAN : b > a ? b : a;
}
static double f_eq(double a, double b)
{
    return a == b;
}
static double f_lt(double a, double b)
{
    return a < b;
}
static double f_gt(double a, double b)
{
    return a > b;
}

static bool i_add(int64_t a, int64_t b, bool u, int64_t *o)
{
    (void)u;
    *o = (int64_t)((uint64_t)a + (uint64_t)b);
    return true;
}
static bool i_sub(int64_t a, int64_t b, bool u, int64_t *o)
{
    (void)u;
    *o = (int64_t)((uint64_t)a - (uint64_t)b);
    return true;
}
static bool i_mul(int64_t a, int64_t b, bool u, int64_t *o)
{
    (void)u;
    *o = (int64_t)((uint64_t)a * (uint64_t)b);
    return true;
}
static bool i_div(int64_t a, int64_t b, bool u, int64_t *o)
{
    if (b == 0) return false;
    if (u) {
        *o = (int64_t)((uint64_t)a / (uint64_t)b);
        return true;
    }
    *o = a == INT64_MIN && b == -1 ? INT64_MIN : a / b; /* truncation toward zero; the one overflow wraps */
    /* planted bug (--inject fold-int-div-floor): the quotient of operands of opposite signs with a remainder
     * rounds toward -inf (Python's //), not toward zero as ONNX's integer Div does */
    if (pc_fault_active(PC_FAULT_FOLD_INT_DIV_FLOOR) && b != -1 && a % b != 0 && (a < 0) != (b < 0)) (*o)--;
    return true;
}
static int cmp(int64_t a, int64_t b, bool u)
{
    if (u) return (uint64_t)a < (uint64_t)b ? -1 : (uint64_t)a > (uint64_t)b;
    return a < b ? -1 : a > b;
}
static bool i_min(int64_t a, int64_t b, bool u, int64_t *o)
{
    *o = cmp(b, a, u) < 0 ? b : a;
    return true;
}
static bool i_max(int64_t a, int64_t b, bool u, int64_t *o)
{
    *o = cmp(b, a, u) > 0 ? b : a;
    return true;
}
static bool i_eq(int64_t a, int64_t b, bool u, int64_t *o)
{
    (void)u;
    *o = a == b;
    return true;
}
static bool i_lt(int64_t a, int64_t b, bool u, int64_t *o)
{
    *o = cmp(a, b, u) < 0;
    return true;
}
static bool i_gt(int64_t a, int64_t b, bool u, int64_t *o)
{
    *o = cmp(a, b, u) > 0;
    return true;
}
static bool i_and(int64_t a, int64_t b, bool u, int64_t *o)
{
    (void)u;
    *o = a && b;
    return true;
}
static bool i_or(int64_t a, int64_t b, bool u, int64_t *o)
{
    (void)u;
    *o = a || b;
    return true;
}

static pc_status check_inputs(ev_ctx *c, uint32_t first, uint32_t n, in_class accepts, const ev_dtype **dt)
{
    pc_status st;
    for (uint32_t j = first; j < first + n; j++) {
        const ev_dtype *d;
        if ((st = ev_need(c, j, &d)) != PC_OK) return st;
        if (j == first)
            *dt = d;
        else if (d != *dt)
            return ev_fail(c, PC_ERR_TYPE, "input %u is %s but input %u is %s", j, pc_dtype_name(d->dtype),
                           first, pc_dtype_name((*dt)->dtype));
    }
    const ev_dtype *d = *dt;
    if (accepts == IN_BOOL && d->dtype != PC_DTYPE_BOOL)
        return ev_fail(c, PC_ERR_TYPE, "inputs must be bool, are %s", pc_dtype_name(d->dtype));
    if (accepts == IN_NUMERIC && d->dtype == PC_DTYPE_BOOL)
        return ev_fail(c, PC_ERR_TYPE, "inputs must be numeric, are bool");
    return PC_OK;
}

static pc_status run_binary(ev_ctx *c, const binop *op)
{
    uint32_t n = op->variadic ? c->n_in : 2;
    if (n == 0) return ev_fail(c, PC_ERR_ARITY, "at least one input is required");
    const ev_dtype *dt = NULL;
    pc_status st = check_inputs(c, 0, n, op->accepts, &dt);
    if (st != PC_OK) return st;
    int32_t rank;
    int64_t dims[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    if ((st = ev_broadcast_shape(c, n, c->in, &rank, dims)) != PC_OK) return st;
    const ev_dtype *ot = op->bool_out ? ev_dtype_of(PC_DTYPE_BOOL) : dt;
    pc_tensor *y = ev_new_out(c, 0, ot->dtype, rank, dims);
    if (!y) return c->err->status;
    bool u64 = dt->dtype == PC_DTYPE_UINT64;
    for (uint64_t k = 0; k < y->n_elements; k++, ev_index_next(rank, dims, idx)) {
        const pc_tensor *a = c->in[0];
        if (dt->is_float) {
            double acc = dt->load_f(a->data, ev_bcast_offset(a, rank, idx));
            for (uint32_t j = 1; j < n; j++)
                acc = op->f(acc, dt->load_f(c->in[j]->data, ev_bcast_offset(c->in[j], rank, idx)));
            ot->store_f(y->data, k, acc);
        } else {
            int64_t acc = dt->load_i(a->data, ev_bcast_offset(a, rank, idx));
            for (uint32_t j = 1; j < n; j++)
                if (!op->i(acc, dt->load_i(c->in[j]->data, ev_bcast_offset(c->in[j], rank, idx)), u64, &acc))
                    return ev_fail(c, PC_ERR_UNSUPPORTED, "integer division by zero (element %llu)",
                                   (unsigned long long)k);
            ot->store_i(y->data, k, acc);
        }
    }
    return PC_OK;
}

#define BINARY(name, f, i, accepts, bool_out, variadic)                                                      \
    pc_status ev_##name(ev_ctx *c)                                                                           \
    {                                                                                                        \
        static const binop op = {f, i, accepts, bool_out, variadic};                                         \
        return run_binary(c, &op);                                                                           \
    }
BINARY(add, f_add, i_add, IN_NUMERIC, false, false)
BINARY(sub, f_sub, i_sub, IN_NUMERIC, false, false)
BINARY(mul, f_mul, i_mul, IN_NUMERIC, false, false)
BINARY(div, f_div, i_div, IN_NUMERIC, false, false)
BINARY(min, f_min, i_min, IN_NUMERIC, false, true)
BINARY(max, f_max, i_max, IN_NUMERIC, false, true)
BINARY(equal, f_eq, i_eq, IN_ANY, true, false)
BINARY(less, f_lt, i_lt, IN_NUMERIC, true, false)
BINARY(greater, f_gt, i_gt, IN_NUMERIC, true, false)
BINARY(and, NULL, i_and, IN_BOOL, true, false)
BINARY(or, NULL, i_or, IN_BOOL, true, false)

/* Mod: fmod 0 (the default) takes the divisor's sign (numpy's mod), integers only; fmod 1 the dividend's (C's
 * % and fmod, exact in double so one rounding to the element type gives fmodf's result). x % -1 is 0 (C's
 * INT64_MIN % -1 overflows). */
static bool i_mod(int64_t a, int64_t b, bool u, int64_t *o)
{
    if (b == 0) return false;
    if (u) {
        *o = (int64_t)((uint64_t)a % (uint64_t)b);
        return true;
    }
    int64_t r = b == -1 ? 0 : a % b;
    *o = r != 0 && (r < 0) != (b < 0) ? r + b : r;
    return true;
}
static bool i_fmod(int64_t a, int64_t b, bool u, int64_t *o)
{
    if (b == 0) return false;
    *o = u ? (int64_t)((uint64_t)a % (uint64_t)b) : b == -1 ? 0 : a % b;
    return true;
}
static double f_fmod(double a, double b)
{
    return fmod(a, b);
}

pc_status ev_mod(ev_ctx *c)
{
    static const binop floor_op = {NULL, i_mod, IN_NUMERIC, false, false};
    static const binop trunc_op = {f_fmod, i_fmod, IN_NUMERIC, false, false};
    bool fm = pc_node_attr_int(c->node, "fmod", 0) != 0;
    const ev_dtype *dt;
    pc_status st = ev_need(c, 0, &dt);
    if (st != PC_OK) return st;
    if (dt->is_float && !fm)
        return ev_fail(c, PC_ERR_UNSUPPORTED, "Mod of %s with fmod 0", pc_dtype_name(dt->dtype));
    return run_binary(c, fm ? &trunc_op : &floor_op);
}

/* ---- unary ---- */

typedef struct unop {
    double (*f)(double x);                /* NULL: floats not accepted */
    int64_t (*i)(int64_t x, bool is_uns); /* NULL: integers not accepted */
    in_class accepts;
    bool signed_only; /* unsigned integers are not accepted (Neg) */
} unop;

static double f_neg(double x)
{
    return -x;
}
static double f_abs(double x)
{
    return fabs(x);
}
static double f_sqrt(double x)
{
    return sqrt(x);
}
static double f_recip(double x)
{
    return 1.0 / x;
}
static int64_t i_neg(int64_t x, bool u)
{
    (void)u;
    return (int64_t)(0 - (uint64_t)x);
}
static int64_t i_abs(int64_t x, bool u)
{
    return !u && x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}
static int64_t i_not(int64_t x, bool u)
{
    (void)u;
    return !x;
}

static pc_status run_unary(ev_ctx *c, const unop *op)
{
    const ev_dtype *dt;
    pc_status st = check_inputs(c, 0, 1, op->accepts, &dt);
    if (st != PC_OK) return st;
    if ((dt->is_float && !op->f) || (!dt->is_float && !op->i) || (op->signed_only && dt->is_unsigned))
        return ev_fail(c, PC_ERR_TYPE, "input 0 has element type %s, which the op does not take",
                       pc_dtype_name(dt->dtype));
    const pc_tensor *x = c->in[0];
    pc_tensor *y = ev_new_out(c, 0, dt->dtype, x->rank, x->dims);
    if (!y) return c->err->status;
    for (uint64_t k = 0; k < x->n_elements; k++) {
        if (dt->is_float)
            dt->store_f(y->data, k, op->f(dt->load_f(x->data, k)));
        else
            dt->store_i(y->data, k, op->i(dt->load_i(x->data, k), dt->is_unsigned));
    }
    return PC_OK;
}

#define UNARY(name, f, i, accepts, signed_only)                                                              \
    pc_status ev_##name(ev_ctx *c)                                                                           \
    {                                                                                                        \
        static const unop op = {f, i, accepts, signed_only};                                                 \
        return run_unary(c, &op);                                                                            \
    }
UNARY(neg, f_neg, i_neg, IN_NUMERIC, true)
UNARY(abs, f_abs, i_abs, IN_NUMERIC, false)
UNARY(sqrt, f_sqrt, NULL, IN_NUMERIC, false)
UNARY(reciprocal, f_recip, NULL, IN_NUMERIC, false)
UNARY(not, NULL, i_not, IN_BOOL, false)

/* ---- Where ---- */

pc_status ev_where(ev_ctx *c)
{
    const ev_dtype *cd, *dt;
    pc_status st = check_inputs(c, 0, 1, IN_BOOL, &cd);
    if (st == PC_OK) st = check_inputs(c, 1, 2, IN_ANY, &dt);
    if (st != PC_OK) return st;
    int32_t rank;
    int64_t dims[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    if ((st = ev_broadcast_shape(c, 3, c->in, &rank, dims)) != PC_OK) return st;
    pc_tensor *y = ev_new_out(c, 0, dt->dtype, rank, dims);
    if (!y) return c->err->status;
    for (uint64_t k = 0; k < y->n_elements; k++, ev_index_next(rank, dims, idx)) {
        bool pick = cd->load_i(c->in[0]->data, ev_bcast_offset(c->in[0], rank, idx)) != 0;
        const pc_tensor *src = c->in[pick ? 1 : 2];
        ev_copy_elem(y, k, src, ev_bcast_offset(src, rank, idx));
    }
    return PC_OK;
}

/* ---- Cast ---- */

bool ev_cast_supported(pc_dtype from, pc_dtype to)
{
    return ev_dtype_of(from) && ev_dtype_of(to);
}

/* Float to integer truncates toward zero; a value outside the target's range (or NaN) is undefined in ONNX,
 * so it is refused rather than guessed. */
static bool float_fits(double t, const ev_dtype *to)
{
    double lim = ldexp(1.0, (int)to->size * 8 - (to->is_unsigned ? 0 : 1));
    return to->is_unsigned ? t > -1.0 && t < lim : t >= -lim && t < lim;
}

static pc_status cast_to(ev_ctx *c, pc_dtype to_dtype)
{
    const ev_dtype *from, *to = ev_dtype_of(to_dtype);
    pc_status st = ev_need(c, 0, &from);
    if (st != PC_OK) return st;
    if (!to) return ev_fail(c, PC_ERR_UNSUPPORTED, "cast to %s", pc_dtype_name(to_dtype));
    const pc_tensor *x = c->in[0];
    pc_tensor *y = ev_new_out(c, 0, to->dtype, x->rank, x->dims);
    if (!y) return c->err->status;
    for (uint64_t k = 0; k < x->n_elements; k++) {
        if (from->is_float) {
            double v = from->load_f(x->data, k);
            if (to->is_float || to->dtype == PC_DTYPE_BOOL) {
                to->store_f(y->data, k, v); /* bool: v != 0, so NaN is true */
                continue;
            }
            double t = trunc(v);
            if (isnan(v) || !float_fits(t, to))
                return ev_fail(c, PC_ERR_UNSUPPORTED, "element %llu = %g is outside the range of %s",
                               (unsigned long long)k, v, pc_dtype_name(to->dtype));
            to->store_i(y->data, k, t >= 0x1p63 ? (int64_t)(uint64_t)t : (int64_t)t);
        } else {
            int64_t v = from->load_i(x->data, k);
            if (from->dtype == PC_DTYPE_UINT64 && to->is_float && v < 0) {
                /* beyond int64: one rounding from the unsigned value */
                uint64_t u = (uint64_t)v;
                if (to->dtype == PC_DTYPE_FLOAT) {
                    float f = (float)u;
                    memcpy((char *)y->data + 4 * k, &f, 4);
                } else {
                    to->store_f(y->data, k, (double)u);
                }
                continue;
            }
            to->store_i(y->data, k, v);
        }
    }
    return PC_OK;
}

pc_status ev_cast(ev_ctx *c)
{
    const pc_attr *a = pc_node_attr(c->node, "to");
    if (!a || a->type != PC_ATTR_INT) return ev_fail(c, PC_ERR_UNSUPPORTED, "attribute 'to' must be an int");
    if (!pc_dtype_is_valid((int32_t)a->i) || a->i != (int32_t)a->i)
        return ev_fail(c, PC_ERR_ATTRIBUTE, "attribute 'to' = %lld is not an element type", (long long)a->i);
    return cast_to(c, (pc_dtype)a->i);
}

/* ---- integer Reduce{Sum,Prod,Min,Max} ---- */

bool ev_reduce_supported(const pc_node *node, pc_dtype dtype)
{
    (void)node;
    const ev_dtype *d = ev_dtype_of(dtype);
    return dtype == PC_DTYPE_UNDEFINED || (d && !d->is_float && d->dtype != PC_DTYPE_BOOL);
}

enum { R_SUM, R_PROD, R_MIN, R_MAX };

pc_status ev_reduce(ev_ctx *c)
{
    const ev_dtype *dt;
    pc_status st = ev_need(c, 0, &dt);
    if (st != PC_OK) return st;
    if (!ev_reduce_supported(c->node, dt->dtype))
        return ev_fail(c, PC_ERR_UNSUPPORTED, "reductions of %s (only integers)", pc_dtype_name(dt->dtype));
    const char *op = c->node->op_type;
    int kind = !strcmp(op, "ReduceSum")    ? R_SUM
               : !strcmp(op, "ReduceProd") ? R_PROD
               : !strcmp(op, "ReduceMin")  ? R_MIN
                                           : R_MAX;
    const pc_tensor *x = c->in[0];
    int64_t axes[PC_MAX_RANK];
    size_t n = 0;
    bool given;
    int64_t input_from = kind == R_SUM ? 13 : 18;
    if (c->opset < input_from) {
        const pc_attr *a = pc_node_attr(c->node, "axes");
        given = a && a->type == PC_ATTR_INTS;
        if (given && a->n > PC_MAX_RANK) return ev_fail(c, PC_ERR_ATTRIBUTE, "axes has %zu entries", a->n);
        if (given) memcpy(axes, a->ints, (n = a->n) * sizeof *axes);
    } else {
        given = ev_in(c, 1) != NULL;
        if (given && (st = ev_read_ints(c, c->in[1], "axes", axes, PC_MAX_RANK, &n)) != PC_OK) return st;
    }
    if (given && n == 0) given = false;
    bool keep = pc_node_attr_int(c->node, "keepdims", 1) != 0;
    bool noop = c->opset >= input_from && pc_node_attr_int(c->node, "noop_with_empty_axes", 0) != 0;
    bool red[PC_MAX_RANK] = {false};
    for (int32_t k = 0; k < x->rank; k++)
        red[k] = !given && !noop;
    for (size_t i = 0; i < n; i++) {
        int32_t a;
        if ((st = ev_axis(c, axes[i], x->rank, "axis", &a)) != PC_OK) return st;
        red[a] = true;
    }
    int64_t dims[PC_MAX_RANK], full[PC_MAX_RANK], idx[PC_MAX_RANK] = {0};
    int32_t rank = 0;
    for (int32_t k = 0; k < x->rank; k++) {
        full[k] = red[k] ? 1 : x->dims[k];
        if (!red[k] || keep) dims[rank++] = full[k];
    }
    pc_tensor *y = ev_new_out(c, 0, dt->dtype, rank, dims);
    if (!y) return c->err->status;
    bool *seen = calloc(y->n_elements ? y->n_elements : 1, 1);
    if (!seen) return ev_fail(c, PC_ERR_NOMEM, "out of memory");
    bool u64 = dt->dtype == PC_DTYPE_UINT64;
    for (uint64_t k = 0; k < x->n_elements; k++, ev_index_next(x->rank, x->dims, idx)) {
        uint64_t o = 0;
        for (int32_t d = 0; d < x->rank; d++)
            o = o * (uint64_t)full[d] + (uint64_t)(red[d] ? 0 : idx[d]);
        int64_t v = dt->load_i(x->data, k), acc = seen[o] ? dt->load_i(y->data, o) : v;
        if (seen[o]) {
            if (kind == R_SUM)
                acc = (int64_t)((uint64_t)acc + (uint64_t)v);
            else if (kind == R_PROD)
                acc = (int64_t)((uint64_t)acc * (uint64_t)v);
            else if (kind == R_MIN)
                acc = cmp(v, acc, u64) < 0 ? v : acc;
            else
                acc = cmp(v, acc, u64) > 0 ? v : acc;
        }
        seen[o] = true;
        dt->store_i(y->data, o, acc);
    }
    for (uint64_t o = 0; o < y->n_elements; o++) {
        if (seen[o]) continue;
        if (kind == R_MIN || kind == R_MAX) {
            free(seen);
            return ev_fail(c, PC_ERR_UNSUPPORTED, "%s over an empty set", op);
        }
        dt->store_i(y->data, o, kind == R_PROD);
    }
    free(seen);
    return PC_OK;
}
