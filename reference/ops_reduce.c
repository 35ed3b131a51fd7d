/* Reference ops: reductions (Reduce*, ArgMax/ArgMin, TopK, CumSum) and the softmax family (Softmax,
 * LogSoftmax, Hardmax). Float data accumulates in double and is rounded once on store; integer data
 * accumulates in int64 with wrapping arithmetic (the store wraps to the element width, as the element type
 * itself would). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

static bool numeric_no_bool(pc_dtype t)
{
    return ref_is_float(t) || ref_is_int(t);
}
static bool numeric_or_bool(pc_dtype t)
{
    return ref_is_numeric(t);
}
static bool float_only(pc_dtype t)
{
    return ref_is_float(t);
}

/* Three-way comparison of a[i] and a[j], exact for every integer width (uint64 compares unsigned). NaN orders
 * above every number when nan_high, below otherwise, and equal to NaN. */
static int cmp_elems(const pc_data *a, uint64_t i, uint64_t j, bool nan_high)
{
    if (ref_is_float(a->dtype)) {
        double x = ref_get_f64(a, i), y = ref_get_f64(a, j);
        bool nx = isnan(x) != 0, ny = isnan(y) != 0;
        if (nx || ny) return nan_high ? (int)nx - (int)ny : (int)ny - (int)nx;
        return (x > y) - (x < y);
    }
    if (a->dtype == PC_DTYPE_UINT64) {
        uint64_t x = (uint64_t)ref_get_i64(a, i), y = (uint64_t)ref_get_i64(a, j);
        return (x > y) - (x < y);
    }
    int64_t x = ref_get_i64(a, i), y = ref_get_i64(a, j);
    return (x > y) - (x < y);
}

/* Splits a shape around `axis` into outer (before), n (the axis) and inner (after) element counts. */
static void split_at(const pc_data *x, int32_t axis, uint64_t *outer, uint64_t *n, uint64_t *inner)
{
    *outer = ref_shape_count(axis, x->dims);
    *n = (uint64_t)x->dims[axis];
    *inner = ref_shape_count(x->rank - axis - 1, x->dims + axis + 1);
}

/* ---- Reduce*
 * ------------------------------------------------------------------------------------------------- */

typedef enum reduce_kind {
    R_SUM,
    R_MEAN,
    R_MAX,
    R_MIN,
    R_PROD,
    R_L1,
    R_L2,
    R_LOGSUM,
    R_LOGSUMEXP,
    R_SUMSQUARE,
} reduce_kind;

/* Smallest and largest value of an integer element type, as int64 bit patterns (uint64's maximum is -1:
 * callers compare uint64 unsigned). */
static void int_limits(pc_dtype t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case PC_DTYPE_INT8:
        *lo = INT8_MIN;
        *hi = INT8_MAX;
        break;
    case PC_DTYPE_INT16:
        *lo = INT16_MIN;
        *hi = INT16_MAX;
        break;
    case PC_DTYPE_INT32:
        *lo = INT32_MIN;
        *hi = INT32_MAX;
        break;
    case PC_DTYPE_UINT8:
        *lo = 0;
        *hi = UINT8_MAX;
        break;
    case PC_DTYPE_UINT16:
        *lo = 0;
        *hi = UINT16_MAX;
        break;
    case PC_DTYPE_UINT32:
        *lo = 0;
        *hi = UINT32_MAX;
        break;
    case PC_DTYPE_UINT64:
        *lo = 0;
        *hi = -1;
        break;
    case PC_DTYPE_BOOL:
        *lo = 0;
        *hi = 1;
        break;
    default:
        *lo = INT64_MIN;
        *hi = INT64_MAX;
        break;
    }
}

static bool int_greater(int64_t a, int64_t b, bool uns)
{
    return uns ? (uint64_t)a > (uint64_t)b : a > b;
}

/* Integer reductions stay in int64 where the result is an integer function of the inputs; the rest (L2,
 * LogSum, LogSumExp) go through double and truncate on store. */
static bool int_exact(reduce_kind k)
{
    return k != R_L2 && k != R_LOGSUM && k != R_LOGSUMEXP;
}

/* Axes come from the "axes" attribute before `input_since` and from optional input 1 from then on (ReduceSum:
 * 13, the others: 18), when noop_with_empty_axes also appears. An empty axes list reduces everything unless
 * noop is set; with noop nothing is reduced and every output element is the reduction over that one element
 * (as numpy's axis=() and the ONNX reference evaluator do: identity for Sum/Mean/Max/Min/Prod, |x| for L1,
 * x^2 for SumSquare). */
static pc_status run_reduce(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, reduce_kind kind,
                            int64_t input_since)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    bool (*accept)(pc_dtype) = kind == R_MAX || kind == R_MIN ? numeric_or_bool : numeric_no_bool;
    if ((st = ref_require_dtype(ctx, x, 0, accept, "numeric")) != PC_OK) return st;

    int64_t *axes_owned = NULL;
    const int64_t *axes = NULL;
    size_t n_axes = 0;
    bool noop = false;
    if (ctx->opset >= input_since) {
        if (ref_has_attr(ctx, "axes"))
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'axes' is input 1 from opset %lld on",
                            (long long)input_since);
        if (n_in > 1 && in[1]) {
            if (in[1]->kind != PC_TYPE_TENSOR || in[1]->dtype != PC_DTYPE_INT64)
                return ref_fail(ctx, PC_ERR_TYPE, "input 1 'axes' must be an int64 tensor");
            if (in[1]->rank > 1)
                return ref_fail(ctx, PC_ERR_SHAPE, "input 1 'axes' must be 1-D, got rank %d",
                                (int)in[1]->rank);
            if ((st = ref_read_ints(ctx, in[1], "input 1 'axes'", &axes_owned, &n_axes)) != PC_OK) return st;
            axes = axes_owned;
        }
        noop = ref_attr_int(ctx, "noop_with_empty_axes", 0) != 0;
    } else {
        if (n_in > 1 && in[1])
            return ref_fail(ctx, PC_ERR_ARITY, "input 1 'axes' exists from opset %lld on (use the attribute)",
                            (long long)input_since);
        axes = ref_attr_ints(ctx, "axes", &n_axes);
    }
    bool red[PC_MAX_RANK] = {false};
    if (n_axes == 0) {
        for (int32_t d = 0; d < x->rank && !noop; d++)
            red[d] = true;
    }
    for (size_t k = 0; k < n_axes; k++) {
        int32_t ax;
        if ((st = ref_axis(ctx, axes[k], x->rank, false, &ax)) != PC_OK) {
            free(axes_owned);
            return st;
        }
        if (red[ax]) {
            long long dup = (long long)axes[k];
            free(axes_owned);
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "axes lists axis %lld twice", dup);
        }
        red[ax] = true;
    }
    free(axes_owned);
    bool keepdims = ref_attr_int(ctx, "keepdims", 1) != 0;

    /* Output shape, and for each input axis the stride of its coordinate in the output (0 for reduced axes).
     */
    ref_shape os = {0, {0}};
    int64_t ostride[PC_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        if (!red[d])
            os.dims[os.rank++] = x->dims[d];
        else if (keepdims)
            os.dims[os.rank++] = 1;
    }
    {
        int64_t s = 1;
        for (int32_t d = x->rank - 1; d >= 0; d--) {
            ostride[d] = red[d] ? 0 : s;
            if (!red[d]) s *= x->dims[d];
        }
    }
    uint64_t n_red = 1; /* elements per output: the reduced axes' extent */
    for (int32_t d = 0; d < x->rank; d++)
        if (red[d]) n_red *= (uint64_t)x->dims[d];

    bool use_int = !ref_is_float(x->dtype) && int_exact(kind);
    bool uns = x->dtype == PC_DTYPE_UINT64;
    if (kind == R_MEAN && n_red == 0 && use_int && ref_shape_count(os.rank, os.dims) > 0)
        return ref_unsupported(ctx, "the integer mean of an empty set is undefined");

    pc_data *y = ref_new_tensor(ctx, x->dtype, os.rank, os.dims);
    if (!y) return ctx->err->status;
    uint64_t n_out = y->n_elements;
    size_t slots = (size_t)(n_out ? n_out : 1);
    double *facc = NULL, *fmax = NULL;
    int64_t *iacc = NULL;
    if (use_int)
        iacc = malloc(slots * sizeof *iacc);
    else
        facc = malloc(slots * sizeof *facc);
    if (kind == R_LOGSUMEXP) fmax = malloc(slots * sizeof *fmax);
    if ((use_int ? !iacc : !facc) || (kind == R_LOGSUMEXP && !fmax)) {
        free(facc);
        free(iacc);
        free(fmax);
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory for the reduction");
    }

    /* Identity elements: what a reduction over an empty set yields (the spec's rule for zero-sized axes). */
    int64_t lo, hi;
    int_limits(x->dtype, &lo, &hi);
    for (uint64_t o = 0; o < n_out; o++) {
        if (use_int)
            iacc[o] = kind == R_MAX ? lo : kind == R_MIN ? hi : kind == R_PROD ? 1 : 0;
        else
            facc[o] = kind == R_MAX ? -INFINITY : kind == R_MIN ? INFINITY : kind == R_PROD ? 1.0 : 0.0;
        if (fmax) fmax[o] = -INFINITY;
    }

    /* Walks the input once per pass (LogSumExp needs the maximum first, for a stable sum), keeping the output
     * index in step with an odometer over the input coordinates. */
    int passes = kind == R_LOGSUMEXP ? 2 : 1;
    for (int pass = 0; pass < passes; pass++) {
        int64_t counter[PC_MAX_RANK] = {0};
        uint64_t o = 0;
        for (uint64_t i = 0; i < x->n_elements; i++) {
            if (use_int) {
                int64_t v = ref_get_i64(x, i), a = iacc[o];
                switch (kind) {
                case R_SUM:
                case R_MEAN:
                    a = (int64_t)((uint64_t)a + (uint64_t)v);
                    break;
                case R_PROD:
                    a = (int64_t)((uint64_t)a * (uint64_t)v);
                    break;
                case R_MAX:
                    if (int_greater(v, a, uns)) a = v;
                    break;
                case R_MIN:
                    if (int_greater(a, v, uns)) a = v;
                    break;
                case R_L1:
                    a = (int64_t)((uint64_t)a + (v < 0 && !uns ? 0 - (uint64_t)v : (uint64_t)v));
                    break;
                case R_SUMSQUARE:
                    a = (int64_t)((uint64_t)a + (uint64_t)v * (uint64_t)v);
                    break;
                default:
                    break;
                }
                iacc[o] = a;
            } else {
                double v = ref_get_f64(x, i);
                switch (kind) {
                case R_SUM:
                case R_MEAN:
                case R_LOGSUM:
                    facc[o] += v;
                    break;
                case R_PROD:
                    facc[o] *= v;
                    break;
                case R_MAX:
                    if (isnan(v) || v > facc[o]) facc[o] = v;
                    break;
                case R_MIN:
                    if (isnan(v) || v < facc[o]) facc[o] = v;
                    break;
                case R_L1:
                    facc[o] += fabs(v);
                    break;
                case R_L2:
                case R_SUMSQUARE:
                    facc[o] += v * v;
                    break;
                case R_LOGSUMEXP:
                    if (pass == 0) {
                        if (isnan(v) || v > fmax[o]) fmax[o] = v;
                    } else if (isfinite(fmax[o])) {
                        facc[o] += exp(v - fmax[o]);
                    }
                    break;
                }
            }
            for (int32_t d = x->rank - 1; d >= 0; d--) {
                o += (uint64_t)ostride[d];
                if (++counter[d] < x->dims[d]) break;
                o -= (uint64_t)(ostride[d] * x->dims[d]);
                counter[d] = 0;
            }
        }
    }

    for (uint64_t o = 0; o < n_out; o++) {
        if (use_int) {
            int64_t a = iacc[o];
            if (kind == R_MEAN) a = uns ? (int64_t)((uint64_t)a / n_red) : a / (int64_t)n_red;
            ref_set_i64(y, o, a);
            continue;
        }
        double a = facc[o];
        switch (kind) {
        case R_MEAN:
            a = n_red ? a / (double)n_red : NAN;
            break;
        case R_L2:
            a = sqrt(a);
            break;
        case R_LOGSUM:
            a = log(a);
            break;
        case R_LOGSUMEXP:
            a = isfinite(fmax[o]) ? fmax[o] + log(a) : fmax[o];
            break; /* +-inf, NaN pass through */
        default:
            break;
        }
        ref_set_f64(y, o, a);
    }
    free(facc);
    free(iacc);
    free(fmax);
    out[0] = y;
    return PC_OK;
}

#define REDUCE_OP(Name, kind, since)                                                                         \
    static pc_status op_##Name(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,               \
                               uint32_t n_out)                                                               \
    {                                                                                                        \
        (void)n_out;                                                                                         \
        return run_reduce(ctx, in, n_in, out, kind, since);                                                  \
    }

REDUCE_OP(ReduceSum, R_SUM, 13)
REDUCE_OP(ReduceMean, R_MEAN, 18)
REDUCE_OP(ReduceMax, R_MAX, 18)
REDUCE_OP(ReduceMin, R_MIN, 18)
REDUCE_OP(ReduceProd, R_PROD, 18)
REDUCE_OP(ReduceL1, R_L1, 18)
REDUCE_OP(ReduceL2, R_L2, 18)
REDUCE_OP(ReduceLogSum, R_LOGSUM, 18)
REDUCE_OP(ReduceLogSumExp, R_LOGSUMEXP, 18)
REDUCE_OP(ReduceSumSquare, R_SUMSQUARE, 18)

/* ---- ArgMax / ArgMin
 * ----------------------------------------------------------------------------------------- */

/* NaN counts as the extreme value for both (numpy's argmax/argmin return the first NaN). */
static pc_status run_arg(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, bool is_max)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, numeric_no_bool, "numeric")) != PC_OK) return st;
    int32_t axis;
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", 0), x->rank, false, &axis)) != PC_OK) return st;
    bool keepdims = ref_attr_int(ctx, "keepdims", 1) != 0;
    bool last = ctx->opset >= 12 && ref_attr_int(ctx, "select_last_index", 0) != 0;
    uint64_t outer, n, inner;
    split_at(x, axis, &outer, &n, &inner);
    if (n == 0 && outer * inner > 0)
        return ref_fail(ctx, PC_ERR_SHAPE, "axis %d has no elements to take the %s of", (int)axis,
                        is_max ? "maximum" : "minimum");
    ref_shape os = {0, {0}};
    for (int32_t d = 0; d < x->rank; d++) {
        if (d != axis)
            os.dims[os.rank++] = x->dims[d];
        else if (keepdims)
            os.dims[os.rank++] = 1;
    }
    pc_data *y = ref_new_tensor(ctx, PC_DTYPE_INT64, os.rank, os.dims);
    if (!y) return ctx->err->status;
    for (uint64_t a = 0; a < outer; a++)
        for (uint64_t b = 0; b < inner; b++) {
            uint64_t base = a * n * inner + b, best = 0;
            for (uint64_t k = 1; k < n; k++) {
                int c = cmp_elems(x, base + k * inner, base + best * inner, is_max);
                if (!is_max) c = -c;
                if (c > 0 || (c == 0 && last)) best = k;
            }
            ref_set_i64(y, a * inner + b, (int64_t)best);
        }
    out[0] = y;
    return PC_OK;
}

static pc_status op_ArgMax(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    return run_arg(ctx, in, n_in, out, true);
}

static pc_status op_ArgMin(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    return run_arg(ctx, in, n_in, out, false);
}

/* ---- TopK
 * ---------------------------------------------------------------------------------------------------- */

typedef struct topk_order {
    const pc_data *x;
    uint64_t base, stride;
    bool largest;
} topk_order;

/* Whether element k goes strictly before element j. Ties keep index order (the merge sort is stable). NaN is
 * the largest value. */
static bool topk_before(const topk_order *o, int64_t k, int64_t j)
{
    int c = cmp_elems(o->x, o->base + (uint64_t)k * o->stride, o->base + (uint64_t)j * o->stride, true);
    return o->largest ? c > 0 : c < 0;
}

/* Stable bottom-up merge sort of idx[0..n) with scratch tmp[0..n). */
static void merge_sort(const topk_order *o, int64_t *idx, int64_t *tmp, uint64_t n)
{
    for (uint64_t w = 1; w < n; w *= 2) {
        for (uint64_t lo = 0; lo < n; lo += 2 * w) {
            uint64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint64_t a = lo, b = mid, t = lo;
            while (a < mid && b < hi)
                tmp[t++] = topk_before(o, idx[b], idx[a]) ? idx[b++] : idx[a++];
            while (a < mid)
                tmp[t++] = idx[a++];
            while (b < hi)
                tmp[t++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

/* k is attribute "k" before opset 10 and input 1 (a 1-element int64 tensor) from then on; largest/sorted
 * arrived in
 * 11. Results are always sorted (with sorted=0 the order is unspecified, so sorted order is a valid answer).
 */
static pc_status op_TopK(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, numeric_no_bool, "numeric")) != PC_OK) return st;
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    int64_t k;
    if (ctx->opset >= 10) {
        if ((st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK) return st;
        if (in[1]->dtype != PC_DTYPE_INT64 || in[1]->n_elements != 1)
            return ref_fail(ctx, PC_ERR_TYPE, "input 1 'K' must be a 1-element int64 tensor");
        k = ref_get_i64(in[1], 0);
    } else {
        if (!ref_has_attr(ctx, "k")) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'k' is required");
        k = ref_attr_int(ctx, "k", 0);
    }
    int32_t axis;
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", -1), x->rank, false, &axis)) != PC_OK) return st;
    bool largest = ctx->opset < 11 || ref_attr_int(ctx, "largest", 1) != 0;
    if (k < 0 || k > x->dims[axis])
        return ref_fail(ctx, PC_ERR_VALUE, "K = %lld is outside [0, %lld] (the size of axis %d)",
                        (long long)k, (long long)x->dims[axis], (int)axis);
    uint64_t outer, n, inner;
    split_at(x, axis, &outer, &n, &inner);
    ref_shape os = {x->rank, {0}};
    memcpy(os.dims, x->dims, (size_t)x->rank * sizeof *os.dims);
    os.dims[axis] = k;
    pc_data *vals = ref_new_tensor(ctx, x->dtype, os.rank, os.dims);
    pc_data *idxs = vals ? ref_new_tensor(ctx, PC_DTYPE_INT64, os.rank, os.dims) : NULL;
    int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx),
            *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!vals || !idxs || !idx || !tmp) {
        pc_data_unref(vals);
        pc_data_unref(idxs);
        free(idx);
        free(tmp);
        return vals && idxs ? ref_fail(ctx, PC_ERR_NOMEM, "out of memory sorting") : ctx->err->status;
    }
    for (uint64_t a = 0; a < outer; a++)
        for (uint64_t b = 0; b < inner; b++) {
            topk_order o = {x, a * n * inner + b, inner, largest};
            for (uint64_t i = 0; i < n; i++)
                idx[i] = (int64_t)i;
            merge_sort(&o, idx, tmp, n);
            for (uint64_t i = 0; i < (uint64_t)k; i++) {
                uint64_t dst = (a * (uint64_t)k + i) * inner + b;
                ref_copy_elem(vals, dst, x, o.base + (uint64_t)idx[i] * inner);
                ref_set_i64(idxs, dst, idx[i]);
            }
        }
    free(idx);
    free(tmp);
    out[0] = vals;
    if (n_out > 1)
        out[1] = idxs;
    else
        pc_data_unref(idxs);
    return PC_OK;
}

/* ---- CumSum
 * -------------------------------------------------------------------------------------------------- */

static pc_status op_CumSum(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, numeric_no_bool, "numeric")) != PC_OK) return st;
    if ((in[1]->dtype != PC_DTYPE_INT32 && in[1]->dtype != PC_DTYPE_INT64) || in[1]->n_elements != 1 ||
        in[1]->rank > 1)
        return ref_fail(ctx, PC_ERR_TYPE, "input 1 'axis' must be an int32 or int64 scalar");
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    int32_t axis;
    if ((st = ref_axis(ctx, ref_get_i64(in[1], 0), x->rank, false, &axis)) != PC_OK) return st;
    bool exclusive = ref_attr_int(ctx, "exclusive", 0) != 0, reverse = ref_attr_int(ctx, "reverse", 0) != 0;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    uint64_t outer, n, inner;
    split_at(x, axis, &outer, &n, &inner);
    bool is_float = ref_is_float(x->dtype);
    for (uint64_t a = 0; a < outer; a++)
        for (uint64_t b = 0; b < inner; b++) {
            double fs = 0.0;
            uint64_t is = 0; /* wraps like the element type */
            for (uint64_t s = 0; s < n; s++) {
                uint64_t k = reverse ? n - 1 - s : s, i = (a * n + k) * inner + b;
                if (exclusive) {
                    if (is_float)
                        ref_set_f64(y, i, fs);
                    else
                        ref_set_i64(y, i, (int64_t)is);
                }
                if (is_float)
                    fs += ref_get_f64(x, i);
                else
                    is += (uint64_t)ref_get_i64(x, i);
                if (!exclusive) {
                    if (is_float)
                        ref_set_f64(y, i, fs);
                    else
                        ref_set_i64(y, i, (int64_t)is);
                }
            }
        }
    out[0] = y;
    return PC_OK;
}

/* ---- Softmax, LogSoftmax, Hardmax
 * ---------------------------------------------------------------------------- */

typedef enum smax_kind { S_SOFTMAX, S_LOGSOFTMAX, S_HARDMAX } smax_kind;

/* Before opset 13 the input is coerced to 2-D at `axis` (default 1) and each row of prod(dims[axis:])
 * elements is normalized; from 13 on only the one axis (default -1) is. Both are rows of n elements `inner`
 * apart. */
static pc_status run_softmax(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, smax_kind kind)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, float_only, "floating-point")) != PC_OK) return st;
    bool legacy = ctx->opset < 13;
    int32_t axis;
    if (x->rank == 0) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", legacy ? 1 : -1), x->rank, false, &axis)) != PC_OK)
        return st;
    uint64_t outer, n, inner;
    split_at(x, axis, &outer, &n, &inner);
    if (legacy) {
        n *= inner;
        inner = 1;
    }
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    for (uint64_t a = 0; a < outer; a++)
        for (uint64_t b = 0; b < inner; b++) {
            uint64_t base = a * n * inner + b;
            if (kind == S_HARDMAX) { /* 1 at the first maximum (numpy argmax), 0 elsewhere */
                uint64_t best = 0;
                for (uint64_t k = 1; k < n; k++)
                    if (cmp_elems(x, base + k * inner, base + best * inner, true) > 0) best = k;
                for (uint64_t k = 0; k < n; k++)
                    ref_set_f64(y, base + k * inner, k == best ? 1.0 : 0.0);
                continue;
            }
            double m = -INFINITY, sum = 0.0;
            for (uint64_t k = 0; k < n; k++) {
                double v = ref_get_f64(x, base + k * inner);
                if (v > m || isnan(v)) m = v;
            }
            if (isinf(m))
                m = 0.0; /* all -inf (or a +inf present): the unshifted formula gives numpy's answer */
            for (uint64_t k = 0; k < n; k++)
                sum += exp(ref_get_f64(x, base + k * inner) - m);
            for (uint64_t k = 0; k < n; k++) {
                double v = ref_get_f64(x, base + k * inner) - m;
                ref_set_f64(y, base + k * inner, kind == S_SOFTMAX ? exp(v) / sum : v - log(sum));
            }
        }
    out[0] = y;
    return PC_OK;
}

static pc_status op_Softmax(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    return run_softmax(ctx, in, n_in, out, S_SOFTMAX);
}

static pc_status op_LogSoftmax(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    return run_softmax(ctx, in, n_in, out, S_LOGSOFTMAX);
}

static pc_status op_Hardmax(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    return run_softmax(ctx, in, n_in, out, S_HARDMAX);
}

const ref_op ref_ops_reduce[] = {
    {"", "ArgMax", op_ArgMax},
    {"", "ArgMin", op_ArgMin},
    {"", "CumSum", op_CumSum},
    {"", "Hardmax", op_Hardmax},
    {"", "LogSoftmax", op_LogSoftmax},
    {"", "ReduceL1", op_ReduceL1},
    {"", "ReduceL2", op_ReduceL2},
    {"", "ReduceLogSum", op_ReduceLogSum},
    {"", "ReduceLogSumExp", op_ReduceLogSumExp},
    {"", "ReduceMax", op_ReduceMax},
    {"", "ReduceMean", op_ReduceMean},
    {"", "ReduceMin", op_ReduceMin},
    {"", "ReduceProd", op_ReduceProd},
    {"", "ReduceSum", op_ReduceSum},
    {"", "ReduceSumSquare", op_ReduceSumSquare},
    {"", "Softmax", op_Softmax},
    {"", "TopK", op_TopK},
};

const size_t ref_ops_reduce_count = sizeof ref_ops_reduce / sizeof ref_ops_reduce[0];
