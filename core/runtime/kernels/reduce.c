/* Reduction kernels: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
 * ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ArgMax and ArgMin.
 *
 * Axes come from the `axes` attribute before the opset where they became optional input 1 (ReduceSum: 13,
 * the others: 18) and from that input after, when noop_with_empty_axes appears too. Negative axes count from
 * the end; an axis out of range or listed twice is PC_ERR_ATTRIBUTE. No axes (absent or empty) reduce every
 * axis, or none with noop_with_empty_axes = 1: each output element is then the reduction of its one element
 * (|x| for L1, x^2 for SumSquare, log x for LogSum), as in the reference executor. Axes from an initializer
 * are checked in prepare; axes computed at run time (data NULL in prepare) are read and checked in run.
 *
 * Numbers: float sums (Sum, Mean, L1, L2, SumSquare, LogSum and the exponential sum of LogSumExp) and float
 * products accumulate in double and round once on store, as the reference does: a float accumulator would
 * drift by about n * 2^-24 over a long row, past the `runtime` property's tolerance on large reductions. Max
 * and Min stay in float (comparisons are exact) and propagate NaN as numpy does. Integers wrap through their
 * unsigned type, which equals the reference's wrapping int64 accumulator stored to the element width. An
 * empty reduction gives the identity: 0 for the sums, 1 for Prod, -inf/+inf (the type's lowest/highest
 * integer) for Max/Min, NaN for Mean, -inf for LogSum and LogSumExp. ArgMax/ArgMin treat NaN as the extreme
 * value (numpy: the first NaN; the last with select_last_index).
 *
 * Layout: axes of size 1 are dropped and neighbouring axes of the same role (reduced or kept) merged, which
 * leaves alternating groups of which the last is contiguous in memory.
 * - last group reduced (outer x reduced): every output folds contiguous rows into one accumulator, the
 *   reduced groups before it walked by an odometer (none when the reduced axes are contiguous); the fold
 *   keeps LANES partial accumulators, independent chains the compiler can vectorize or pipeline.
 * - last group kept (outer x reduced x inner): every block of up to CHUNK outputs accumulates whole input
 *   rows elementwise into accumulators in scratch memory, the reduced groups walked by an odometer.
 * Either way the inner loops are contiguous. ArgMax/ArgMin split the input at their axis into outer x n x
 * inner the same way. Scratch: SCRATCH_PER_OUTPUT bytes per output of a block, asked for in prepare. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

/* LANES: partial accumulators of a row fold. CHUNK: outputs accumulated together when the last axis is kept:
 * long enough that every input row is read in runs of pages (a short block made [4096,4096] over axis 0 about
 * twice as slow), small enough that the accumulators stay in L1. SCRATCH_PER_OUTPUT: the widest accumulator
 * set per output (LogSumExp's double sum and float maximum, ArgMax's int64 index and int64 best). */
enum { LANES = 8, CHUNK = 2048, SCRATCH_PER_OUTPUT = 16 };

/* ---- the plan */

/* An odometer over some input axes: their sizes and element strides, and the number of positions. After
 * `count` steps it is back at its start (every digit wraps), so one set of counters serves every pass. */
typedef struct odometer {
    int32_t n;
    int64_t dims[PC_MAX_RANK], st[PC_MAX_RANK];
    uint64_t count;
} odometer;

static inline void odo_step(const odometer *o, int64_t *c, int64_t *off)
{
    for (int32_t d = o->n - 1; d >= 0; d--) {
        *off += o->st[d];
        if (++c[d] < o->dims[d]) return;
        *off -= o->st[d] * o->dims[d];
        c[d] = 0;
    }
}

typedef struct reduce_plan {
    odometer outer; /* kept groups, the last group excluded */
    odometer mid;   /* reduced groups, the last group excluded */
    int64_t len;    /* the last group's size (contiguous) */
    bool last_reduced;
    bool empty;     /* no input elements: every output is the identity (apart: the data may be NULL) */
    int64_t block;  /* outputs accumulated together when the last group is kept: min(CHUNK, n_out) */
    uint64_t n_out; /* output elements */
    uint64_t n_red; /* input elements per output */
} reduce_plan;

/* Outputs per block of accumulators (at least 1). */
static int64_t block_of(uint64_t n_out)
{
    return n_out == 0 ? 1 : n_out < CHUNK ? (int64_t)n_out : CHUNK;
}

static size_t scratch_of(uint64_t n_out)
{
    return (size_t)block_of(n_out) * SCRATCH_PER_OUTPUT;
}

static void plan_make(const pc_rt_tensor *x, const bool *red, uint64_t n_out, reduce_plan *pl)
{
    int64_t size[PC_MAX_RANK], st[PC_MAX_RANK];
    bool gred[PC_MAX_RANK];
    int32_t g = 0;
    pl->n_out = n_out;
    pl->block = block_of(n_out);
    pl->n_red = 1;
    pl->empty = x->n == 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (red[d]) pl->n_red *= (uint64_t)x->dims[d];
        if (x->dims[d] == 1) continue; /* moves nothing, whatever its role */
        if (g > 0 && gred[g - 1] == red[d]) {
            size[g - 1] *= x->dims[d];
        } else {
            size[g] = x->dims[d];
            gred[g++] = red[d];
        }
    }
    if (g == 0) { /* one element: a kept group of 1 */
        size[0] = 1;
        gred[0] = false;
        g = 1;
    }
    st[g - 1] = 1;
    for (int32_t i = g - 2; i >= 0; i--)
        st[i] = st[i + 1] * size[i + 1];
    pl->last_reduced = gred[g - 1];
    pl->len = size[g - 1];
    pl->outer.n = pl->mid.n = 0;
    pl->outer.count = pl->mid.count = 1;
    for (int32_t i = 0; i < g - 1; i++) {
        odometer *o = gred[i] ? &pl->mid : &pl->outer;
        o->dims[o->n] = size[i];
        o->st[o->n++] = st[i];
        o->count *= (uint64_t)size[i];
    }
}

/* ---- the reduction loops */

/* Steps: fold element v into accumulator a. */
#define ADD_STEP(a, v) ((a) += (v))
#define MUL_STEP(a, v) ((a) *= (v))
#define ABS_STEP(a, v) ((a) += fabs((double)(v)))
#define SQ_STEP(a, v)  ((a) += (double)(v) * (double)(v))
/* a NaN on either side wins, as numpy.maximum/minimum */
#define MAX_F(a, b)      (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define MIN_F(a, b)      (((a) <= (b) || (a) != (a)) ? (a) : (b))
#define MAX_I(a, b)      ((a) >= (b) ? (a) : (b))
#define MIN_I(a, b)      ((a) <= (b) ? (a) : (b))
#define MAX_STEP_F(a, v) ((a) = MAX_F(a, v))
#define MIN_STEP_F(a, v) ((a) = MIN_F(a, v))
#define MAX_STEP_I(a, v) ((a) = MAX_I(a, v))
#define MIN_STEP_I(a, v) ((a) = MIN_I(a, v))
/* Combines: merge two partial accumulators. */
#define ADD_COMB(a, b) ((a) + (b))
#define MUL_COMB(a, b) ((a) * (b))
/* Finals: the output element of type T from accumulator a (n_red: input elements per output). */
#define CAST_FIN(T, a) ((T)(a))
#define MEAN_FIN(T, a) ((T)(n_red > 0 ? (a) / n_red : NAN))
#define SQRT_FIN(T, a) ((T)sqrt(a))
#define LOG_FIN(T, a)  ((T)log(a))

/* acc = COMBINE(acc, fold of p[0, n)): LANES partial accumulators for long rows, since one accumulator makes
 * a chain of dependent adds the compiler may not reorder. */
#define FOLD_ROW(ACC, INIT, STEP, COMBINE, acc, p, n)                                                        \
    do {                                                                                                     \
        int64_t i_ = 0;                                                                                      \
        if ((n) >= 2 * LANES) {                                                                              \
            ACC l_[LANES];                                                                                   \
            for (int q_ = 0; q_ < LANES; q_++)                                                               \
                l_[q_] = (INIT);                                                                             \
            for (; i_ + LANES <= (n); i_ += LANES)                                                           \
                for (int q_ = 0; q_ < LANES; q_++)                                                           \
                    STEP(l_[q_], (p)[i_ + q_]);                                                              \
            for (int q_ = 0; q_ < LANES; q_++)                                                               \
                (acc) = COMBINE(acc, l_[q_]);                                                                \
        }                                                                                                    \
        for (; i_ < (n); i_++)                                                                               \
            STEP(acc, (p)[i_]);                                                                              \
    } while (0)

/* scratch: SCRATCH_PER_OUTPUT * min(CHUNK, outputs) bytes, 64-byte aligned */
typedef void (*reduce_fn)(const reduce_plan *pl, const void *x, void *y, void *scratch);

/* A reduction of T elements with an ACC accumulator starting at INIT (the identity). */
#define REDUCE_FN(name, T, ACC, INIT, STEP, COMBINE, FINAL)                                                  \
    static void name(const reduce_plan *pl, const void *xv, void *yv, void *scratch)                         \
    {                                                                                                        \
        const T *x = xv;                                                                                     \
        T *y = yv;                                                                                           \
        ACC *acc = scratch;                                                                                  \
        const double n_red = (double)pl->n_red;                                                              \
        (void)n_red;                                                                                         \
        if (pl->empty) {                                                                                     \
            const ACC a0 = (INIT);                                                                           \
            for (uint64_t o = 0; o < pl->n_out; o++)                                                         \
                y[o] = FINAL(T, a0);                                                                         \
            return;                                                                                          \
        }                                                                                                    \
        int64_t oc[PC_MAX_RANK] = {0}, mc[PC_MAX_RANK] = {0}, ob = 0, mb = 0;                                \
        for (uint64_t o = 0; o < pl->outer.count; o++) {                                                     \
            if (pl->last_reduced) {                                                                          \
                ACC a = (INIT);                                                                              \
                for (uint64_t r = 0; r < pl->mid.count; r++) {                                               \
                    const T *p = x + ob + mb;                                                                \
                    FOLD_ROW(ACC, INIT, STEP, COMBINE, a, p, pl->len);                                       \
                    odo_step(&pl->mid, mc, &mb);                                                             \
                }                                                                                            \
                *y++ = FINAL(T, a);                                                                          \
            } else {                                                                                         \
                for (int64_t j0 = 0; j0 < pl->len; j0 += pl->block) {                                        \
                    const int64_t c = pl->len - j0 < pl->block ? pl->len - j0 : pl->block;                   \
                    for (int64_t j = 0; j < c; j++)                                                          \
                        acc[j] = (INIT);                                                                     \
                    for (uint64_t r = 0; r < pl->mid.count; r++) {                                           \
                        const T *p = x + ob + mb + j0;                                                       \
                        for (int64_t j = 0; j < c; j++)                                                      \
                            STEP(acc[j], p[j]);                                                              \
                        odo_step(&pl->mid, mc, &mb);                                                         \
                    }                                                                                        \
                    for (int64_t j = 0; j < c; j++)                                                          \
                        y[j0 + j] = FINAL(T, acc[j]);                                                        \
                }                                                                                            \
                y += pl->len;                                                                                \
            }                                                                                                \
            odo_step(&pl->outer, oc, &ob);                                                                   \
        }                                                                                                    \
    }

/* Sum and Prod: float in double, integers wrapping in their unsigned twin. X(suffix, T, ACC) */
#define WIDE_TYPES(X)                                                                                        \
    X(f32, float, double)                                                                                    \
    X(f64, double, double)                                                                                   \
    X(i32, int32_t, uint32_t)                                                                                \
    X(i64, int64_t, uint64_t)
#define WIDE_FNS(sfx, T, ACC)                                                                                \
    REDUCE_FN(sum_##sfx, T, ACC, 0, ADD_STEP, ADD_COMB, CAST_FIN)                                            \
    REDUCE_FN(prod_##sfx, T, ACC, 1, MUL_STEP, MUL_COMB, CAST_FIN)
WIDE_TYPES(WIDE_FNS)

/* Max and Min in the element type. X(suffix, T, LOWEST, HIGHEST, F or I) */
#define EXTREME_TYPES(X)                                                                                     \
    X(f32, float, -INFINITY, INFINITY, F)                                                                    \
    X(f64, double, -INFINITY, INFINITY, F)                                                                   \
    X(i32, int32_t, INT32_MIN, INT32_MAX, I)                                                                 \
    X(i64, int64_t, INT64_MIN, INT64_MAX, I)
#define EXTREME_FNS(sfx, T, LO, HI, C)                                                                       \
    REDUCE_FN(max_##sfx, T, T, LO, MAX_STEP_##C, MAX_##C, CAST_FIN)                                          \
    REDUCE_FN(min_##sfx, T, T, HI, MIN_STEP_##C, MIN_##C, CAST_FIN)
EXTREME_TYPES(EXTREME_FNS)

/* The float reductions, in a double accumulator for float and double. X(suffix, T) */
#define FLOAT_TYPES(X)                                                                                       \
    X(f32, float)                                                                                            \
    X(f64, double)
#define FLOAT_FNS(sfx, T)                                                                                    \
    REDUCE_FN(mean_##sfx, T, double, 0, ADD_STEP, ADD_COMB, MEAN_FIN)                                        \
    REDUCE_FN(l1_##sfx, T, double, 0, ABS_STEP, ADD_COMB, CAST_FIN)                                          \
    REDUCE_FN(l2_##sfx, T, double, 0, SQ_STEP, ADD_COMB, SQRT_FIN)                                           \
    REDUCE_FN(sumsquare_##sfx, T, double, 0, SQ_STEP, ADD_COMB, CAST_FIN)                                    \
    REDUCE_FN(logsum_##sfx, T, double, 0, ADD_STEP, ADD_COMB, LOG_FIN)
FLOAT_TYPES(FLOAT_FNS)

/* exp(v - mx) into a double sum; mx is the maximum of the output's elements, in scope where it expands.
 * Float in float (expf) as the float kernels always did; double in double. */
#define EXP_OF(T, v)   (sizeof(T) == sizeof(float) ? (double)expf((float)(v)) : exp((double)(v)))
#define EXP_STEP(a, v) ((a) += EXP_OF(elem_t, (v)-mx))
/* LogSumExp in two passes over each output's elements: the maximum mx, then mx + log(sum exp(x - mx)), which
 * cannot overflow. mx = +-inf or NaN is the result itself (as the reference: exp(inf - inf) would be NaN). */
#define LOGSUMEXP_FN(name, T)                                                                                \
    static void name(const reduce_plan *pl, const void *xv, void *yv, void *scratch)                         \
    {                                                                                                        \
        typedef T elem_t; /* EXP_STEP names the element type */                                              \
        const T *x = xv;                                                                                     \
        T *y = yv;                                                                                           \
        double *s = scratch;                                                                                 \
        T *m = (T *)(s + pl->block);                                                                         \
        if (pl->empty) {                                                                                     \
            for (uint64_t o = 0; o < pl->n_out; o++)                                                         \
                y[o] = -INFINITY;                                                                            \
            return;                                                                                          \
        }                                                                                                    \
        int64_t oc[PC_MAX_RANK] = {0}, mc[PC_MAX_RANK] = {0}, ob = 0, mb = 0;                                \
        for (uint64_t o = 0; o < pl->outer.count; o++) {                                                     \
            if (pl->last_reduced) {                                                                          \
                T mx = -INFINITY;                                                                            \
                for (uint64_t r = 0; r < pl->mid.count; r++) {                                               \
                    FOLD_ROW(T, -INFINITY, MAX_STEP_F, MAX_F, mx, x + ob + mb, pl->len);                     \
                    odo_step(&pl->mid, mc, &mb);                                                             \
                }                                                                                            \
                double sum = 0.0;                                                                            \
                for (uint64_t r = 0; r < pl->mid.count && isfinite(mx); r++) {                               \
                    FOLD_ROW(double, 0.0, EXP_STEP, ADD_COMB, sum, x + ob + mb, pl->len);                    \
                    odo_step(&pl->mid, mc, &mb);                                                             \
                }                                                                                            \
                *y++ = isfinite(mx) ? (T)((double)mx + log(sum)) : mx;                                       \
            } else {                                                                                         \
                for (int64_t j0 = 0; j0 < pl->len; j0 += pl->block) {                                        \
                    const int64_t c = pl->len - j0 < pl->block ? pl->len - j0 : pl->block;                   \
                    for (int64_t j = 0; j < c; j++) {                                                        \
                        m[j] = -INFINITY;                                                                    \
                        s[j] = 0.0;                                                                          \
                    }                                                                                        \
                    for (uint64_t r = 0; r < pl->mid.count; r++) {                                           \
                        const T *p = x + ob + mb + j0;                                                       \
                        for (int64_t j = 0; j < c; j++)                                                      \
                            MAX_STEP_F(m[j], p[j]);                                                          \
                        odo_step(&pl->mid, mc, &mb);                                                         \
                    }                                                                                        \
                    for (uint64_t r = 0; r < pl->mid.count; r++) {                                           \
                        const T *p = x + ob + mb + j0;                                                       \
                        for (int64_t j = 0; j < c; j++)                                                      \
                            s[j] += EXP_OF(T, p[j] - m[j]); /* NaN for a non-finite m[j], not used */        \
                        odo_step(&pl->mid, mc, &mb);                                                         \
                    }                                                                                        \
                    for (int64_t j = 0; j < c; j++)                                                          \
                        y[j0 + j] = isfinite(m[j]) ? (T)((double)m[j] + log(s[j])) : m[j];                   \
                }                                                                                            \
                y += pl->len;                                                                                \
            }                                                                                                \
            odo_step(&pl->outer, oc, &ob);                                                                   \
        }                                                                                                    \
    }
LOGSUMEXP_FN(logsumexp_f32, float)
LOGSUMEXP_FN(logsumexp_f64, double)

typedef enum reduce_kind {
    R_SUM,
    R_MEAN,
    R_MAX,
    R_MIN,
    R_PROD,
    R_L1,
    R_L2,
    R_SUMSQUARE,
    R_LOGSUM,
    R_LOGSUMEXP,
    R_COUNT
} reduce_kind;

/* The element types with loops, in the column order of the function tables; -1 for the others. */
static int type_slot(pc_dtype t)
{
    return t == PC_DTYPE_FLOAT    ? 0
           : t == PC_DTYPE_INT32  ? 1
           : t == PC_DTYPE_INT64  ? 2
           : t == PC_DTYPE_DOUBLE ? 3
                                  : -1;
}

static const reduce_fn reduce_fns[R_COUNT][4] = {
    [R_SUM] = {sum_f32, sum_i32, sum_i64, sum_f64},
    [R_MEAN] = {mean_f32, NULL, NULL, mean_f64},
    [R_MAX] = {max_f32, max_i32, max_i64, max_f64},
    [R_MIN] = {min_f32, min_i32, min_i64, min_f64},
    [R_PROD] = {prod_f32, prod_i32, prod_i64, prod_f64},
    [R_L1] = {l1_f32, NULL, NULL, l1_f64},
    [R_L2] = {l2_f32, NULL, NULL, l2_f64},
    [R_SUMSQUARE] = {sumsquare_f32, NULL, NULL, sumsquare_f64},
    [R_LOGSUM] = {logsum_f32, NULL, NULL, logsum_f64},
    [R_LOGSUMEXP] = {logsumexp_f32, NULL, NULL, logsumexp_f64},
};

static reduce_fn reduce_fn_for(reduce_kind kind, pc_dtype t)
{
    int s = type_slot(t);
    return s < 0 ? NULL : reduce_fns[kind][s];
}

/* ---- checks shared by Reduce* and ArgMax/ArgMin */

/* n_in within [1, max_in], input 0 present, output 0 present */
static pc_status need_arity(pc_rt_kernel_ctx *k, uint32_t max_in)
{
    if (k->n_in < 1 || !k->in[0])
        return pc_error_set(k->err, PC_ERR_ARITY, "%s: input 0 is required", k->node->op_type);
    for (uint32_t i = max_in; i < k->n_in; i++)
        if (k->in[i])
            return pc_error_set(k->err, PC_ERR_ARITY,
                                "%s takes at most %u inputs at opset %lld, input %u is set", k->node->op_type,
                                max_in, (long long)k->opset, i);
    if (k->n_out < 1 || !k->out[0])
        return pc_error_set(k->err, PC_ERR_ARITY, "%s: output 0 is required", k->node->op_type);
    return PC_OK;
}

/* Output 0's shape is input 0's with the red axes removed, or set to 1 with keepdims: the loops write
 * exactly that many elements. */
static pc_status need_out_shape(pc_rt_kernel_ctx *k, const bool *red, bool keep)
{
    const pc_rt_tensor *x = k->in[0], *y = k->out[0];
    int32_t r = 0;
    bool ok = true;
    for (int32_t d = 0; d < x->rank; d++) {
        if (red[d] && !keep) continue;
        ok = ok && r < y->rank && y->dims[r] == (red[d] ? 1 : x->dims[d]);
        r++;
    }
    if (!ok || r != y->rank)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "%s: output 0 (rank %d) does not have the reduced shape of input 0 (rank %d, "
                            "keepdims=%d)",
                            k->node->op_type, (int)y->rank, (int)x->rank, (int)keep);
    return PC_OK;
}

/* axis in [-rank, rank) to [0, rank) */
static pc_status need_axis(pc_rt_kernel_ctx *k, int64_t axis, int32_t rank, int32_t *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: axis %lld is out of range for rank %d",
                            k->node->op_type, (long long)axis, (int)rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return PC_OK;
}

/* ---- Reduce* */

static int64_t axes_input_since(reduce_kind kind)
{
    return kind == R_SUM ? 13 : 18;
}

/* The reduced axes of input 0 (red). *pending: the axes are a computed input whose values are not there yet
 * (prepare); red is then not set. */
static pc_status reduce_axes(pc_rt_kernel_ctx *k, reduce_kind kind, bool *red, bool *pending)
{
    const int64_t *axes = NULL;
    size_t n = 0;
    bool noop = false;
    int32_t rank = k->in[0]->rank;
    *pending = false;
    if (k->opset >= axes_input_since(kind)) {
        if (pc_node_attr(k->node, "axes"))
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "%s: attribute 'axes' is input 1 from opset %lld on (the node is at %lld)",
                                k->node->op_type, (long long)axes_input_since(kind), (long long)k->opset);
        const pc_rt_tensor *a = k->n_in > 1 ? k->in[1] : NULL;
        if (a) {
            if (a->dtype != PC_DTYPE_INT64)
                return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: input 1 'axes' is %s, not int64",
                                    k->node->op_type, pc_dtype_name(a->dtype));
            if (a->rank > 1)
                return pc_error_set(k->err, PC_ERR_SHAPE, "%s: input 1 'axes' has rank %d, not 1",
                                    k->node->op_type, (int)a->rank);
            if (a->n > 0 && !a->data) {
                *pending = true;
                return PC_OK;
            }
            axes = a->data;
            n = (size_t)a->n;
        }
        noop = pc_node_attr_int(k->node, "noop_with_empty_axes", 0) != 0;
    } else {
        const pc_attr *at = pc_node_attr(k->node, "axes");
        if (at && at->type != PC_ATTR_INTS)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: attribute 'axes' is not a list of ints",
                                k->node->op_type);
        if (at) {
            axes = at->ints;
            n = at->n;
        }
    }
    for (int32_t d = 0; d < rank; d++)
        red[d] = n == 0 && !noop;
    for (size_t i = 0; i < n; i++) {
        int32_t d = 0;
        pc_status st = need_axis(k, axes[i], rank, &d);
        if (st != PC_OK) return st;
        if (red[d])
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: axes lists axis %d twice", k->node->op_type,
                                (int)d);
        red[d] = true;
    }
    return PC_OK;
}

static pc_status reduce_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes, reduce_kind kind)
{
    *scratch_bytes = 0;
    if (k->n_out >= 1 && k->out[0]) *scratch_bytes = scratch_of(k->out[0]->n);
    pc_status st = need_arity(k, k->opset >= axes_input_since(kind) ? 2 : 1);
    if (st != PC_OK) return st;
    if (!reduce_fn_for(kind, k->in[0]->dtype))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s on %s elements is not implemented",
                            k->node->op_type, pc_dtype_name(k->in[0]->dtype));
    if (k->out[0]->dtype != k->in[0]->dtype)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: output is %s, this kernel writes %s",
                            k->node->op_type, pc_dtype_name(k->out[0]->dtype),
                            pc_dtype_name(k->in[0]->dtype));
    bool red[PC_MAX_RANK], pending = false;
    if ((st = reduce_axes(k, kind, red, &pending)) != PC_OK || pending) return st;
    return need_out_shape(k, red, pc_node_attr_int(k->node, "keepdims", 1) != 0);
}

/* The scratch prepare asked for, checked in run (a session that gave less would be a bug, not bad input). */
static pc_status need_scratch(pc_rt_kernel_ctx *k)
{
    if (k->scratch_bytes < scratch_of(k->out[0]->n) || !k->scratch)
        return pc_error_set(k->err, PC_ERR_INTERNAL, "%s: %zu bytes of scratch memory, %zu needed",
                            k->node->op_type, k->scratch_bytes, scratch_of(k->out[0]->n));
    return PC_OK;
}

/* The axes are resolved again here (a few compares): run gets no state from prepare, and computed axes are
 * only known now. */
static pc_status reduce_run(pc_rt_kernel_ctx *k, reduce_kind kind)
{
    reduce_fn fn = reduce_fn_for(kind, k->in[0]->dtype);
    if (!fn)
        return pc_error_set(k->err, PC_ERR_INTERNAL, "%s: no loop for %s", k->node->op_type,
                            pc_dtype_name(k->in[0]->dtype));
    bool red[PC_MAX_RANK], pending = false;
    pc_status st = reduce_axes(k, kind, red, &pending);
    if (st != PC_OK) return st;
    if (pending)
        return pc_error_set(k->err, PC_ERR_INTERNAL, "%s: input 1 'axes' has no data", k->node->op_type);
    if ((st = need_out_shape(k, red, pc_node_attr_int(k->node, "keepdims", 1) != 0)) != PC_OK) return st;
    if (k->out[0]->n == 0) return PC_OK;
    if ((st = need_scratch(k)) != PC_OK) return st;
    reduce_plan pl;
    plan_make(k->in[0], red, k->out[0]->n, &pl);
    fn(&pl, k->in[0]->data, k->out[0]->data, k->scratch);
    return PC_OK;
}

#define REDUCE_KERNEL(name, kind)                                                                            \
    static pc_status name##_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)                              \
    {                                                                                                        \
        return reduce_prepare(k, scratch_bytes, kind);                                                       \
    }                                                                                                        \
    static pc_status name##_run(pc_rt_kernel_ctx *k)                                                         \
    {                                                                                                        \
        return reduce_run(k, kind);                                                                          \
    }
REDUCE_KERNEL(sum, R_SUM)
REDUCE_KERNEL(mean, R_MEAN)
REDUCE_KERNEL(max, R_MAX)
REDUCE_KERNEL(min, R_MIN)
REDUCE_KERNEL(prod, R_PROD)
REDUCE_KERNEL(l1, R_L1)
REDUCE_KERNEL(l2, R_L2)
REDUCE_KERNEL(sumsquare, R_SUMSQUARE)
REDUCE_KERNEL(logsum, R_LOGSUM)
REDUCE_KERNEL(logsumexp, R_LOGSUMEXP)

/* ---- ArgMax, ArgMin */

/* Whether v replaces the best b so far. NaN is the extreme for both ops: the first NaN wins, or the last
 * one with select_last_index (a number never replaces a NaN). */
#define ARGMAX_FIRST_F(v, b) ((v) > (b) || (isnan(v) && !isnan(b)))
#define ARGMAX_LAST_F(v, b)  ((v) >= (b) || isnan(v))
#define ARGMIN_FIRST_F(v, b) ((v) < (b) || (isnan(v) && !isnan(b)))
#define ARGMIN_LAST_F(v, b)  ((v) <= (b) || isnan(v))
#define ARGMAX_FIRST_I(v, b) ((v) > (b))
#define ARGMAX_LAST_I(v, b)  ((v) >= (b))
#define ARGMIN_FIRST_I(v, b) ((v) < (b))
#define ARGMIN_LAST_I(v, b)  ((v) <= (b))

/* y[o][j] = the index along the middle axis of the best x[o][i][j], over [outer, n, inner] (n >= 1); scratch
 * holds `block` indices and `block` best values (block >= min(inner, CHUNK)) */
typedef void (*arg_fn)(const void *x, int64_t *y, uint64_t outer, int64_t n, int64_t inner, void *scratch,
                       int64_t block);

#define ARG_FN(name, T, TAKE)                                                                                \
    static void name(const void *xv, int64_t *y, uint64_t outer, int64_t n, int64_t inner, void *scratch,    \
                     int64_t block)                                                                          \
    {                                                                                                        \
        const T *x = xv;                                                                                     \
        int64_t *bi = scratch;                                                                               \
        T *b = (T *)(bi + block);                                                                            \
        for (uint64_t o = 0; o < outer; o++, x += n * inner) {                                               \
            if (inner == 1) {                                                                                \
                T best = x[0];                                                                               \
                int64_t best_i = 0;                                                                          \
                for (int64_t i = 1; i < n; i++) {                                                            \
                    const T v = x[i];                                                                        \
                    if (TAKE(v, best)) {                                                                     \
                        best = v;                                                                            \
                        best_i = i;                                                                          \
                    }                                                                                        \
                }                                                                                            \
                *y++ = best_i;                                                                               \
                continue;                                                                                    \
            }                                                                                                \
            for (int64_t j0 = 0; j0 < inner; j0 += block) {                                                  \
                const int64_t c = inner - j0 < block ? inner - j0 : block;                                   \
                for (int64_t j = 0; j < c; j++) {                                                            \
                    b[j] = x[j0 + j];                                                                        \
                    bi[j] = 0;                                                                               \
                }                                                                                            \
                for (int64_t i = 1; i < n; i++) {                                                            \
                    const T *p = x + i * inner + j0;                                                         \
                    for (int64_t j = 0; j < c; j++) { /* selects, not branches: the loop vectorizes */       \
                        const T v = p[j];                                                                    \
                        const bool take = TAKE(v, b[j]);                                                     \
                        b[j] = take ? v : b[j];                                                              \
                        bi[j] = take ? i : bi[j];                                                            \
                    }                                                                                        \
                }                                                                                            \
                for (int64_t j = 0; j < c; j++)                                                              \
                    y[j0 + j] = bi[j];                                                                       \
            }                                                                                                \
            y += inner;                                                                                      \
        }                                                                                                    \
    }

/* X(suffix, T, F or I) */
#define ARG_TYPES(X)                                                                                         \
    X(f32, float, F)                                                                                         \
    X(i32, int32_t, I)                                                                                       \
    X(i64, int64_t, I)                                                                                       \
    X(f64, double, F)
#define ARG_FNS(sfx, T, C)                                                                                   \
    ARG_FN(argmax_first_##sfx, T, ARGMAX_FIRST_##C)                                                          \
    ARG_FN(argmax_last_##sfx, T, ARGMAX_LAST_##C)                                                            \
    ARG_FN(argmin_first_##sfx, T, ARGMIN_FIRST_##C)                                                          \
    ARG_FN(argmin_last_##sfx, T, ARGMIN_LAST_##C)
ARG_TYPES(ARG_FNS)

/* [min?][last?][type slot] */
static const arg_fn arg_fns[2][2][4] = {
    {{argmax_first_f32, argmax_first_i32, argmax_first_i64, argmax_first_f64},
     {argmax_last_f32, argmax_last_i32, argmax_last_i64, argmax_last_f64}},
    {{argmin_first_f32, argmin_first_i32, argmin_first_i64, argmin_first_f64},
     {argmin_last_f32, argmin_last_i32, argmin_last_i64, argmin_last_f64}},
};

/* The axis, checked against input 0 and output 0. */
static pc_status arg_axis(pc_rt_kernel_ctx *k, int32_t *axis)
{
    const pc_rt_tensor *x = k->in[0];
    if (x->rank < 1)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: input 0 must have rank >= 1", k->node->op_type);
    pc_status st = need_axis(k, pc_node_attr_int(k->node, "axis", 0), x->rank, axis);
    if (st != PC_OK) return st;
    bool red[PC_MAX_RANK] = {false};
    red[*axis] = true;
    if ((st = need_out_shape(k, red, pc_node_attr_int(k->node, "keepdims", 1) != 0)) != PC_OK) return st;
    if (x->dims[*axis] == 0 && k->out[0]->n > 0)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: axis %d has no elements to take the %s of",
                            k->node->op_type, (int)*axis,
                            strcmp(k->node->op_type, "ArgMax") ? "minimum" : "maximum");
    return PC_OK;
}

static pc_status arg_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    if (k->n_out >= 1 && k->out[0]) *scratch_bytes = scratch_of(k->out[0]->n);
    pc_status st = need_arity(k, 1);
    if (st != PC_OK) return st;
    if (type_slot(k->in[0]->dtype) < 0)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s on %s elements is not implemented",
                            k->node->op_type, pc_dtype_name(k->in[0]->dtype));
    if (k->out[0]->dtype != PC_DTYPE_INT64)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: output is %s, this kernel writes int64",
                            k->node->op_type, pc_dtype_name(k->out[0]->dtype));
    int32_t axis = 0;
    return arg_axis(k, &axis);
}

static pc_status arg_run(pc_rt_kernel_ctx *k, int is_min)
{
    const pc_rt_tensor *x = k->in[0];
    int slot = type_slot(x->dtype);
    if (slot < 0)
        return pc_error_set(k->err, PC_ERR_INTERNAL, "%s: no loop for %s", k->node->op_type,
                            pc_dtype_name(x->dtype));
    int32_t axis = 0;
    pc_status st = arg_axis(k, &axis);
    if (st != PC_OK || k->out[0]->n == 0) return st;
    if ((st = need_scratch(k)) != PC_OK) return st;
    /* select_last_index exists from opset 12; earlier nodes take the first index */
    int last = k->opset >= 12 && pc_node_attr_int(k->node, "select_last_index", 0) != 0;
    uint64_t outer = 1;
    int64_t inner = 1;
    for (int32_t d = 0; d < axis; d++)
        outer *= (uint64_t)x->dims[d];
    for (int32_t d = axis + 1; d < x->rank; d++)
        inner *= x->dims[d];
    arg_fns[is_min][last][slot](x->data, k->out[0]->data, outer, x->dims[axis], inner, k->scratch,
                                block_of(k->out[0]->n));
    return PC_OK;
}

static pc_status argmax_run(pc_rt_kernel_ctx *k)
{
    return arg_run(k, 0);
}

static pc_status argmin_run(pc_rt_kernel_ctx *k)
{
    return arg_run(k, 1);
}

/* ---- the table */

#define RT_NUM   (RT_F32 | RT_I32 | RT_I64 | RT_F64)
#define RT_FLOAT (RT_F32 | RT_F64)

/* Every opset from 1: the ops' semantics implemented here have not changed across their versions, only
 * where the axes come from (handled in reduce_axes) and select_last_index (from 12). */
const pc_rt_kernel pc_rt_kernels_reduce[] = {
    {"", "ReduceSum", 1, 21, RT_NUM, sum_prepare, sum_run, 0},
    {"", "ReduceMean", 1, 21, RT_FLOAT, mean_prepare, mean_run, 0},
    {"", "ReduceMax", 1, 21, RT_NUM, max_prepare, max_run, 0},
    {"", "ReduceMin", 1, 21, RT_NUM, min_prepare, min_run, 0},
    {"", "ReduceProd", 1, 21, RT_NUM, prod_prepare, prod_run, 0},
    {"", "ReduceL1", 1, 21, RT_FLOAT, l1_prepare, l1_run, 0},
    {"", "ReduceL2", 1, 21, RT_FLOAT, l2_prepare, l2_run, 0},
    {"", "ReduceSumSquare", 1, 21, RT_FLOAT, sumsquare_prepare, sumsquare_run, 0},
    {"", "ReduceLogSum", 1, 21, RT_FLOAT, logsum_prepare, logsum_run, 0},
    {"", "ReduceLogSumExp", 1, 21, RT_FLOAT, logsumexp_prepare, logsumexp_run, 0},
    {"", "ArgMax", 1, 21, RT_NUM, arg_prepare, argmax_run, 0},
    {"", "ArgMin", 1, 21, RT_NUM, arg_prepare, argmin_run, 0},
};

const size_t pc_rt_n_kernels_reduce = sizeof pc_rt_kernels_reduce / sizeof pc_rt_kernels_reduce[0];
