/* Reference ops: pooling (MaxPool, AveragePool, LpPool, the Global pools, MaxUnpool), normalization
 * (BatchNormalization, InstanceNormalization, LayerNormalization, LRN, MeanVarianceNormalization), Dropout
 * and the losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss). Layout is N x C x spatial... with any
 * number of spatial dims; float arithmetic is done in double and rounded once on store. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_internal.h"

#define OUT_LIMIT ((uint64_t)1 << 31) /* largest output (elements) a kernel agrees to build */
#define ATTR_LIMIT                                                                                           \
    ((int64_t)1 << 31) /* bound on kernel/stride/dilation/pad values: keeps size math in int64 */

static bool float_only(pc_dtype t)
{
    return ref_is_float(t);
}
static bool numeric_no_bool(pc_dtype t)
{
    return ref_is_float(t) || ref_is_int(t);
}

/* Whether output k exists on the node (optional outputs may be omitted). */
static bool wanted(const ref_ctx *ctx, uint32_t n_out, uint32_t k)
{
    return k < n_out && ctx->node->outputs[k] != NULL;
}

/* A zeroed output tensor whose shape came from attributes or input values: refuses more than 2^31 elements.
 */
static pc_data *new_checked(ref_ctx *ctx, pc_dtype dtype, int32_t rank, const int64_t *dims)
{
    uint64_t n = 1;
    bool zero = false;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0) {
            ref_fail(ctx, PC_ERR_SHAPE, "output dimension %d would be %lld", (int)d, (long long)dims[d]);
            return NULL;
        }
        if (dims[d] == 0) zero = true;
    }
    for (int32_t d = 0; d < rank && !zero; d++) {
        if ((uint64_t)dims[d] > OUT_LIMIT / n) {
            ref_fail(ctx, PC_ERR_BUDGET, "output would have more than 2^31 elements");
            return NULL;
        }
        n *= (uint64_t)dims[d];
    }
    return ref_new_tensor(ctx, dtype, rank, dims);
}

/* Three-way comparison of t[i] and t[j], exact for every integer type; NaN is above every number. */
static int cmp_elems(const pc_data *t, uint64_t i, uint64_t j)
{
    if (ref_is_float(t->dtype)) {
        double x = ref_get_f64(t, i), y = ref_get_f64(t, j);
        bool nx = isnan(x) != 0, ny = isnan(y) != 0;
        if (nx || ny) return (int)nx - (int)ny;
        return (x > y) - (x < y);
    }
    if (t->dtype == PC_DTYPE_UINT64) {
        uint64_t x = (uint64_t)ref_get_i64(t, i), y = (uint64_t)ref_get_i64(t, j);
        return (x > y) - (x < y);
    }
    int64_t x = ref_get_i64(t, i), y = ref_get_i64(t, j);
    return (x > y) - (x < y);
}

/* ---- pooling geometry
 * ---------------------------------------------------------------------------------------- */

typedef struct pool_geom {
    int32_t nsp; /* spatial dims */
    int64_t in[PC_MAX_RANK], k[PC_MAX_RANK], s[PC_MAX_RANK], d[PC_MAX_RANK];
    int64_t pb[PC_MAX_RANK], pe[PC_MAX_RANK], out[PC_MAX_RANK];
    uint64_t in_count, k_count; /* per (n, c) plane */
} pool_geom;

/* Reads an INTS attribute of exactly `n` values in [lo, hi) into dst (left as is when absent and not
 * required). */
static pc_status ints_attr(ref_ctx *ctx, const char *name, size_t n, int64_t lo, int64_t hi, bool required,
                           int64_t *dst)
{
    const pc_attr *a = pc_node_attr(ctx->node, name);
    if (!a) return required ? ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' is required", name) : PC_OK;
    if (a->type != PC_ATTR_INTS)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' must be a list of ints", name);
    if (a->n != n)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' has %zu values, expected %zu", name, a->n, n);
    for (size_t i = 0; i < n; i++) {
        if (a->ints[i] < lo || a->ints[i] >= hi)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' value %lld is out of range [%lld, %lld)",
                            name, (long long)a->ints[i], (long long)lo, (long long)hi);
        dst[i] = a->ints[i];
    }
    return PC_OK;
}

/* Fails on an attribute that the node's opset does not define (it would change the meaning if ignored). */
static pc_status attr_too_new(ref_ctx *ctx, const char *name, int64_t since)
{
    if (ctx->opset < since && ref_has_attr(ctx, name))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute '%s' is defined only from opset %lld", name,
                        (long long)since);
    return PC_OK;
}

/* Kernel, strides, dilations, pads (explicit or auto_pad) and the output size of a pooling op on x. Output
 * size per spatial dim with the dilated kernel ek = (k - 1) * d + 1: NOTSET: floor((in + pb + pe - ek) / s) +
 * 1, or ceil(...) with ceil_mode, dropping a last window that would start in the end padding; VALID:
 * floor((in - ek) / s) + 1, no padding; SAME_UPPER / SAME_LOWER: ceil(in / s), total padding (out - 1) * s +
 * ek - in split evenly, the odd one at the end (UPPER) or the beginning (LOWER). */
static pc_status pool_setup(ref_ctx *ctx, const pc_data *x, pool_geom *g, bool dilations_ok, bool ceil_ok)
{
    pc_status st;
    if (x->rank < 3)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must be N x C x D1 x ... (rank >= 3), got rank %d",
                        (int)x->rank);
    int32_t nsp = g->nsp = x->rank - 2;
    int64_t pads[2 * PC_MAX_RANK];
    for (int32_t j = 0; j < nsp; j++) {
        g->in[j] = x->dims[j + 2];
        g->s[j] = g->d[j] = 1;
        pads[j] = pads[j + nsp] = 0;
    }
    if ((st = ints_attr(ctx, "kernel_shape", (size_t)nsp, 1, ATTR_LIMIT, true, g->k)) != PC_OK ||
        (st = ints_attr(ctx, "strides", (size_t)nsp, 1, ATTR_LIMIT, false, g->s)) != PC_OK ||
        (st = ints_attr(ctx, "pads", 2 * (size_t)nsp, 0, ATTR_LIMIT, false, pads)) != PC_OK)
        return st;
    if (dilations_ok) {
        if ((st = ints_attr(ctx, "dilations", (size_t)nsp, 1, ATTR_LIMIT, false, g->d)) != PC_OK) return st;
    } else if (ref_has_attr(ctx, "dilations")) {
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute 'dilations' is not defined for this op at opset %lld",
                        (long long)ctx->opset);
    }
    bool ceil_mode = false;
    if (ceil_ok)
        ceil_mode = ref_attr_int(ctx, "ceil_mode", 0) != 0;
    else if (ref_has_attr(ctx, "ceil_mode"))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute 'ceil_mode' is not defined for this op at opset %lld",
                        (long long)ctx->opset);
    const char *ap = ref_attr_string(ctx, "auto_pad", "NOTSET");
    enum { AP_NOTSET, AP_VALID, AP_UPPER, AP_LOWER } mode;
    if (!strcmp(ap, "NOTSET") || !*ap)
        mode = AP_NOTSET;
    else if (!strcmp(ap, "VALID"))
        mode = AP_VALID;
    else if (!strcmp(ap, "SAME_UPPER"))
        mode = AP_UPPER;
    else if (!strcmp(ap, "SAME_LOWER"))
        mode = AP_LOWER;
    else
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'auto_pad' has unknown value '%s'", ap);
    if (mode != AP_NOTSET)
        for (int32_t j = 0; j < 2 * nsp; j++)
            if (pads[j])
                return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                                "attribute 'pads' cannot be used together with auto_pad %s", ap);
    g->in_count = g->k_count = 1;
    for (int32_t j = 0; j < nsp; j++) {
        int64_t in = g->in[j], s = g->s[j], ek = (g->k[j] - 1) * g->d[j] + 1;
        g->in_count *= (uint64_t)in;
        g->k_count *= (uint64_t)g->k[j];
        if (mode == AP_UPPER || mode == AP_LOWER) {
            int64_t out = (in + s - 1) / s, total = (out - 1) * s + ek - in;
            if (total < 0 || out == 0) total = 0;
            g->out[j] = out;
            g->pb[j] = mode == AP_UPPER ? total / 2 : total - total / 2;
            g->pe[j] = total - g->pb[j];
            continue;
        }
        g->pb[j] = mode == AP_VALID ? 0 : pads[j];
        g->pe[j] = mode == AP_VALID ? 0 : pads[j + nsp];
        int64_t span = in + g->pb[j] + g->pe[j] - ek;
        if (span < 0)
            return ref_fail(ctx, PC_ERR_SHAPE,
                            "spatial dim %d: the (dilated) kernel %lld is larger than the padded "
                            "input %lld",
                            (int)j, (long long)ek, (long long)(in + g->pb[j] + g->pe[j]));
        if (g->pb[j] >= ek || g->pe[j] >= ek)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                            "pads (%lld, %lld) of spatial dim %d must be smaller than the "
                            "(dilated) kernel %lld",
                            (long long)g->pb[j], (long long)g->pe[j], (int)j, (long long)ek);
        int64_t out = span / s + 1;
        if (ceil_mode && span % s) {
            out++;
            if ((out - 1) * s >= in + g->pb[j]) out--; /* that window would start in the end padding */
        }
        g->out[j] = out;
    }
    return PC_OK;
}

/* ---- MaxPool, AveragePool, LpPool
 * ---------------------------------------------------------------------------- */

typedef enum pool_kind { P_MAX, P_AVG, P_LP } pool_kind;

/* Every output element visits its window tap by tap; taps outside the input are padding. MaxPool ignores
 * padding (NaN wins, as numpy's max); AveragePool divides by the taps inside the input, or with
 * count_include_pad by the taps inside the padded extent (a ceil_mode window reaching past the end padding
 * counts only up to it, as PyTorch and ONNX Runtime do); LpPool sums |x|^p over the taps inside the input
 * (padding adds 0). */
static pc_status run_pool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out,
                          pool_kind kind)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, kind == P_MAX ? numeric_no_bool : float_only,
                                kind == P_MAX ? "numeric" : "floating-point")) != PC_OK)
        return st;
    int64_t op = ctx->opset;
    bool dil_ok = kind == P_MAX ? op >= 10 : kind == P_AVG ? op >= 19 : op >= 18;
    bool ceil_ok = kind == P_LP ? op >= 18 : op >= 10;
    pool_geom g;
    if ((st = pool_setup(ctx, x, &g, dil_ok, ceil_ok)) != PC_OK) return st;
    bool include_pad = false;
    if (kind == P_AVG) {
        if ((st = attr_too_new(ctx, "count_include_pad", 7)) != PC_OK) return st;
        include_pad = ref_attr_int(ctx, "count_include_pad", 0) != 0;
    }
    double p = 0;
    if (kind == P_LP) {
        p = ref_attr_float(ctx, "p", 2.0);
        if (!(p > 0) || isinf(p))
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'p' must be positive, got %g", p);
    }
    bool with_indices = kind == P_MAX && wanted(ctx, n_out, 1);
    int64_t order = 0;
    if (kind == P_MAX) {
        if ((st = attr_too_new(ctx, "storage_order", 8)) != PC_OK) return st;
        order = ref_attr_int(ctx, "storage_order", 0);
        if (order != 0 && order != 1)
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'storage_order' must be 0 or 1, got %lld",
                            (long long)order);
        if (with_indices && op < 8)
            return ref_fail(ctx, PC_ERR_ARITY, "the Indices output exists from opset 8");
    }

    int64_t ydims[PC_MAX_RANK];
    ydims[0] = x->dims[0];
    ydims[1] = x->dims[1];
    memcpy(ydims + 2, g.out, (size_t)g.nsp * sizeof *ydims);
    pc_data *y = new_checked(ctx, x->dtype, x->rank, ydims);
    pc_data *yi = y && with_indices ? ref_new_tensor(ctx, PC_DTYPE_INT64, x->rank, ydims) : NULL;
    if (!y || (with_indices && !yi)) {
        pc_data_unref(y);
        return ctx->err->status;
    }

    int64_t istride[PC_MAX_RANK], cstride[PC_MAX_RANK]; /* row-major and column-major spatial strides */
    ref_strides(g.nsp, g.in, istride);
    for (int32_t j = 0; j < g.nsp; j++)
        cstride[j] = j ? cstride[j - 1] * g.in[j - 1] : 1;
    uint64_t planes = (uint64_t)x->dims[0] * (uint64_t)x->dims[1];
    uint64_t out_count = ref_shape_count(g.nsp, g.out);
    bool empty_window = false;
    for (uint64_t pl = 0; pl < planes && !empty_window; pl++) {
        uint64_t xbase = pl * g.in_count, ybase = pl * out_count;
        int64_t oc[PC_MAX_RANK] = {0};
        for (uint64_t o = 0; o < out_count; o++) {
            double acc = 0.0;
            uint64_t best = 0, n_inside = 0, n_padded = 0;
            for (uint64_t kf = 0; kf < g.k_count; kf++) {
                uint64_t rem = kf, sp = 0;
                bool inside = true, padded = true;
                for (int32_t j = g.nsp - 1; j >= 0; j--) {
                    int64_t kk = (int64_t)(rem % (uint64_t)g.k[j]);
                    rem /= (uint64_t)g.k[j];
                    int64_t ix = oc[j] * g.s[j] - g.pb[j] + kk * g.d[j];
                    if (ix < 0 || ix >= g.in[j]) inside = false;
                    if (ix < -g.pb[j] || ix >= g.in[j] + g.pe[j]) padded = false;
                    if (inside) sp += (uint64_t)(ix * istride[j]);
                }
                n_padded += padded;
                if (!inside) continue;
                if (kind == P_MAX) {
                    if (!n_inside || cmp_elems(x, xbase + sp, xbase + best) > 0) best = sp;
                } else {
                    double v = ref_get_f64(x, xbase + sp);
                    acc += kind == P_AVG ? v : pow(fabs(v), p);
                }
                n_inside++;
            }
            uint64_t yo = ybase + o;
            if (kind == P_MAX) {
                if (!n_inside) {
                    empty_window = true;
                    break;
                }
                ref_copy_elem(y, yo, x, xbase + best);
                if (yi) {
                    uint64_t idx = best;
                    if (order == 1) { /* column-major spatial index: the first spatial dim varies fastest */
                        idx = 0;
                        for (int32_t j = 0; j < g.nsp; j++)
                            idx += (best / (uint64_t)istride[j] % (uint64_t)g.in[j]) * (uint64_t)cstride[j];
                    }
                    ref_set_i64(yi, yo, (int64_t)(xbase + idx));
                }
            } else if (kind == P_AVG) {
                uint64_t div = include_pad ? n_padded : n_inside;
                if (!div) {
                    empty_window = true;
                    break;
                }
                ref_set_f64(y, yo, acc / (double)div);
            } else {
                ref_set_f64(y, yo, pow(acc, 1.0 / p));
            }
            for (int32_t j = g.nsp - 1; j >= 0; j--) {
                if (++oc[j] < g.out[j]) break;
                oc[j] = 0;
            }
        }
    }
    if (empty_window) {
        pc_data_unref(y);
        pc_data_unref(yi);
        return ref_unsupported(ctx, "a pooling window covers only padding (its value is undefined)");
    }
    out[0] = y;
    if (yi) out[1] = yi;
    return PC_OK;
}

static pc_status op_MaxPool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    return run_pool(ctx, in, n_in, out, n_out, P_MAX);
}

static pc_status op_AveragePool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                uint32_t n_out)
{
    return run_pool(ctx, in, n_in, out, n_out, P_AVG);
}

static pc_status op_LpPool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    return run_pool(ctx, in, n_in, out, n_out, P_LP);
}

/* ---- Global pools
 * -------------------------------------------------------------------------------------------- */

/* Pools each (n, c) plane over all spatial dims to one value; the output keeps the rank with spatial dims 1.
 */
static pc_status run_global_pool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                 pool_kind kind)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, kind == P_MAX ? numeric_no_bool : float_only,
                                kind == P_MAX ? "numeric" : "floating-point")) != PC_OK)
        return st;
    if (x->rank < 2)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must be N x C x D1 x ... (rank >= 2), got rank %d",
                        (int)x->rank);
    double p = 0;
    if (kind == P_LP) {
        p = ref_attr_float(ctx, "p", 2.0);
        if (!(p > 0) || isinf(p))
            return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'p' must be positive, got %g", p);
    }
    int64_t ydims[PC_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        ydims[d] = d < 2 ? x->dims[d] : 1;
    uint64_t planes = (uint64_t)x->dims[0] * (uint64_t)x->dims[1],
             area = ref_shape_count(x->rank - 2, x->dims + 2);
    if (kind == P_MAX && area == 0 && planes > 0)
        return ref_fail(ctx, PC_ERR_SHAPE, "the spatial dims are empty: there is no maximum");
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, ydims);
    if (!y) return ctx->err->status;
    for (uint64_t pl = 0; pl < planes; pl++) {
        uint64_t base = pl * area;
        if (kind == P_MAX) {
            uint64_t best = base;
            for (uint64_t i = base + 1; i < base + area; i++)
                if (cmp_elems(x, i, best) > 0) best = i;
            ref_copy_elem(y, pl, x, best);
            continue;
        }
        double acc = 0.0;
        for (uint64_t i = base; i < base + area; i++) {
            double v = ref_get_f64(x, i);
            acc += kind == P_AVG ? v : pow(fabs(v), p);
        }
        ref_set_f64(y, pl, kind == P_AVG ? acc / (double)area : pow(acc, 1.0 / p));
    }
    out[0] = y;
    return PC_OK;
}

static pc_status op_GlobalMaxPool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                  uint32_t n_out)
{
    (void)n_out;
    return run_global_pool(ctx, in, n_in, out, P_MAX);
}

static pc_status op_GlobalAveragePool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                      uint32_t n_out)
{
    (void)n_out;
    return run_global_pool(ctx, in, n_in, out, P_AVG);
}

static pc_status op_GlobalLpPool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                 uint32_t n_out)
{
    (void)n_out;
    return run_global_pool(ctx, in, n_in, out, P_LP);
}

/* ---- MaxUnpool
 * ----------------------------------------------------------------------------------------------- */

/* Scatters X into zeros at the flat indices I (MaxPool's Indices: over the whole N x C x spatial tensor) of
 * the inferred unpooled shape, spatial (in - 1) * stride - pad_begin - pad_end + kernel. With output_shape
 * the result is that shape, the inferred block at its origin and zeros after it — as the ONNX backend test
 * and the ONNX reference evaluator define it (PyTorch instead reads the indices in output_shape's geometry;
 * the two agree when the shapes are equal). */
static pc_status op_MaxUnpool(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *x = in[0], *ind = in[1];
    if ((st = ref_require_dtype(ctx, x, 0, numeric_no_bool, "numeric")) != PC_OK) return st;
    if (ind->dtype != PC_DTYPE_INT64)
        return ref_fail(ctx, PC_ERR_TYPE, "input 1 'I' must be an int64 tensor");
    if (x->rank < 3)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must be N x C x D1 x ... (rank >= 3), got rank %d",
                        (int)x->rank);
    if (ind->rank != x->rank || memcmp(ind->dims, x->dims, (size_t)x->rank * sizeof *x->dims))
        return ref_fail(ctx, PC_ERR_SHAPE, "input 1 'I' must have the shape of input 0");
    int32_t nsp = x->rank - 2;
    int64_t k[PC_MAX_RANK], s[PC_MAX_RANK], pads[2 * PC_MAX_RANK];
    for (int32_t j = 0; j < nsp; j++)
        s[j] = 1, pads[j] = pads[j + nsp] = 0;
    if ((st = ints_attr(ctx, "kernel_shape", (size_t)nsp, 1, ATTR_LIMIT, true, k)) != PC_OK ||
        (st = ints_attr(ctx, "strides", (size_t)nsp, 1, ATTR_LIMIT, false, s)) != PC_OK ||
        (st = ints_attr(ctx, "pads", 2 * (size_t)nsp, 0, ATTR_LIMIT, false, pads)) != PC_OK)
        return st;
    int64_t inf[PC_MAX_RANK], ydims[PC_MAX_RANK];
    inf[0] = ydims[0] = x->dims[0];
    inf[1] = ydims[1] = x->dims[1];
    for (int32_t j = 0; j < nsp; j++) {
        if (x->dims[j + 2] > ATTR_LIMIT)
            return ref_fail(ctx, PC_ERR_BUDGET, "spatial dim %d (%lld) is too large", (int)j,
                            (long long)x->dims[j + 2]);
        inf[j + 2] = ydims[j + 2] = (x->dims[j + 2] - 1) * s[j] - pads[j] - pads[j + nsp] + k[j];
        if (inf[j + 2] < 0)
            return ref_fail(ctx, PC_ERR_SHAPE, "the unpooled spatial dim %d would be %lld", (int)j,
                            (long long)inf[j + 2]);
    }
    if (n_in > 2 && in[2]) {
        int64_t *os;
        size_t n;
        if (in[2]->kind != PC_TYPE_TENSOR || in[2]->rank != 1)
            return ref_fail(ctx, PC_ERR_SHAPE, "input 2 'output_shape' must be a 1-D tensor");
        if ((st = ref_read_ints(ctx, in[2], "input 2 'output_shape'", &os, &n)) != PC_OK) return st;
        if (n != (size_t)x->rank) {
            free(os);
            return ref_fail(ctx, PC_ERR_SHAPE, "input 2 'output_shape' has %zu values, expected %d", n,
                            (int)x->rank);
        }
        for (int32_t d = 0; d < x->rank; d++) {
            if (os[d] < inf[d] || (d < 2 && os[d] != inf[d])) {
                long long v = (long long)os[d], want = (long long)inf[d];
                free(os);
                return ref_fail(ctx, PC_ERR_SHAPE,
                                "output_shape[%d] = %lld must be %s %lld (the inferred size)", (int)d, v,
                                d < 2 ? "equal to" : "at least", want);
            }
            ydims[d] = os[d];
        }
        free(os);
    }
    pc_data *y = new_checked(ctx, x->dtype, x->rank, ydims);
    if (!y) return ctx->err->status;
    uint64_t total = ref_shape_count(x->rank, inf);
    int64_t istr[PC_MAX_RANK], ostr[PC_MAX_RANK];
    ref_strides(x->rank, inf, istr);
    ref_strides(x->rank, ydims, ostr);
    for (uint64_t i = 0; i < x->n_elements; i++) {
        int64_t v = ref_get_i64(ind, i);
        if (v < 0 || (uint64_t)v >= total) {
            pc_data_unref(y);
            return ref_fail(ctx, PC_ERR_VALUE, "index %lld at position %llu is outside [0, %llu)",
                            (long long)v, (unsigned long long)i, (unsigned long long)total);
        }
        uint64_t o = 0;
        for (int32_t d = 0; d < x->rank; d++)
            o += (uint64_t)(v / istr[d] % inf[d]) * (uint64_t)ostr[d];
        ref_copy_elem(y, o, x, i);
    }
    out[0] = y;
    return PC_OK;
}

/* ---- BatchNormalization
 * -------------------------------------------------------------------------------------- */

/* Inference: y = scale * (x - mean) / sqrt(var + epsilon) + B per channel. Training (training_mode=1 from
 * opset 14; before 14 the presence of the extra outputs): batch mean and biased variance over N and the
 * spatial dims normalize, and running_mean/var = input * momentum + batch * (1 - momentum). Before opset 9,
 * spatial=0 takes per-activation parameters (C x D1 x ...). */
static pc_status op_BatchNormalization(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                       uint32_t n_out)
{
    pc_status st;
    for (uint32_t i = 0; i < 5; i++)
        if ((st = ref_require_tensor(ctx, in, n_in, i)) != PC_OK ||
            (st = ref_require_dtype(ctx, in[i], i, float_only, "floating-point")) != PC_OK)
            return st;
    const pc_data *x = in[0];
    if (x->rank < 2)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must be N x C x ... (rank >= 2), got rank %d",
                        (int)x->rank);
    int64_t op = ctx->opset;
    bool spatial = op >= 9 || ref_attr_int(ctx, "spatial", 1) != 0;
    uint64_t N = (uint64_t)x->dims[0], C = (uint64_t)x->dims[1],
             inner = ref_shape_count(x->rank - 2, x->dims + 2);
    uint64_t n_par = spatial ? C : C * inner;
    static const char *names[5] = {"X", "scale", "B", "mean", "var"};
    for (uint32_t i = 1; i < 5; i++)
        if (in[i]->n_elements != n_par)
            return ref_fail(ctx, PC_ERR_SHAPE, "input %u '%s' has %llu elements, expected %llu", i, names[i],
                            (unsigned long long)in[i]->n_elements, (unsigned long long)n_par);
    bool extra =
        wanted(ctx, n_out, 1) || wanted(ctx, n_out, 2) || wanted(ctx, n_out, 3) || wanted(ctx, n_out, 4);
    bool training;
    if (op >= 14) {
        training = ref_attr_int(ctx, "training_mode", 0) != 0;
        if (!training && extra)
            return ref_fail(ctx, PC_ERR_ARITY,
                            "outputs running_mean and running_var exist only with training_mode=1");
    } else {
        training = extra;
        if (op < 7 && ref_attr_int(ctx, "is_test", 0) != 0 && extra)
            return ref_fail(ctx, PC_ERR_ARITY, "is_test=1 takes only the output Y");
    }
    if (training && !spatial) return ref_unsupported(ctx, "training mode with spatial=0");
    if (training && wanted(ctx, n_out, 4))
        return ref_unsupported(
            ctx, "output saved_var (variance or inverse standard deviation: frameworks differ)");
    double eps = ref_attr_float(ctx, "epsilon", 1e-5), momentum = ref_attr_float(ctx, "momentum", 0.9);

    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    pc_data *rm = NULL, *rv = NULL, *sm = NULL;
    bool ok = y != NULL;
    int64_t cdim = (int64_t)C;
    if (ok && training && wanted(ctx, n_out, 1))
        ok = (rm = ref_new_tensor(ctx, in[3]->dtype, 1, &cdim)) != NULL;
    if (ok && training && wanted(ctx, n_out, 2))
        ok = (rv = ref_new_tensor(ctx, in[4]->dtype, 1, &cdim)) != NULL;
    if (ok && training && wanted(ctx, n_out, 3))
        ok = (sm = ref_new_tensor(ctx, in[3]->dtype, 1, &cdim)) != NULL;
    if (!ok) {
        pc_data_unref(y);
        pc_data_unref(rm);
        pc_data_unref(rv);
        return ctx->err->status;
    }
    for (uint64_t c = 0; c < C; c++) {
        double bm = 0.0, bv = 0.0; /* batch statistics (training) */
        if (training) {
            uint64_t cnt = N * inner;
            for (uint64_t n = 0; n < N; n++)
                for (uint64_t i = 0; i < inner; i++)
                    bm += ref_get_f64(x, (n * C + c) * inner + i);
            bm /= (double)cnt;
            for (uint64_t n = 0; n < N; n++)
                for (uint64_t i = 0; i < inner; i++) {
                    double dv = ref_get_f64(x, (n * C + c) * inner + i) - bm;
                    bv += dv * dv;
                }
            bv /= (double)cnt;
            if (rm) ref_set_f64(rm, c, ref_get_f64(in[3], c) * momentum + bm * (1.0 - momentum));
            if (rv) ref_set_f64(rv, c, ref_get_f64(in[4], c) * momentum + bv * (1.0 - momentum));
            if (sm) ref_set_f64(sm, c, bm);
        }
        for (uint64_t n = 0; n < N; n++)
            for (uint64_t i = 0; i < inner; i++) {
                uint64_t pi = spatial ? c : c * inner + i, xi = (n * C + c) * inner + i;
                double m = training ? bm : ref_get_f64(in[3], pi), v = training ? bv : ref_get_f64(in[4], pi);
                double r = ref_get_f64(in[1], pi) * (ref_get_f64(x, xi) - m) / sqrt(v + eps) +
                           ref_get_f64(in[2], pi);
                ref_set_f64(y, xi, r);
            }
    }
    out[0] = y;
    if (rm) out[1] = rm;
    if (rv) out[2] = rv;
    if (sm) out[3] = sm;
    return PC_OK;
}

/* ---- InstanceNormalization
 * ----------------------------------------------------------------------------------- */

/* y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], mean and (biased) variance per (n, c) over the
 * spatial dims. */
static pc_status op_InstanceNormalization(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                          uint32_t n_out)
{
    (void)n_out;
    pc_status st;
    for (uint32_t i = 0; i < 3; i++)
        if ((st = ref_require_tensor(ctx, in, n_in, i)) != PC_OK ||
            (st = ref_require_dtype(ctx, in[i], i, float_only, "floating-point")) != PC_OK)
            return st;
    const pc_data *x = in[0];
    if (x->rank < 2)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must be N x C x ... (rank >= 2), got rank %d",
                        (int)x->rank);
    uint64_t C = (uint64_t)x->dims[1], planes = (uint64_t)x->dims[0] * C;
    uint64_t area = ref_shape_count(x->rank - 2, x->dims + 2);
    for (uint32_t i = 1; i < 3; i++)
        if (in[i]->n_elements != C)
            return ref_fail(ctx, PC_ERR_SHAPE, "input %u has %llu elements, expected C = %llu", i,
                            (unsigned long long)in[i]->n_elements, (unsigned long long)C);
    double eps = ref_attr_float(ctx, "epsilon", 1e-5);
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    for (uint64_t pl = 0; pl < planes; pl++) {
        uint64_t base = pl * area, c = pl % C;
        double mean = 0.0, var = 0.0;
        for (uint64_t i = 0; i < area; i++)
            mean += ref_get_f64(x, base + i);
        mean /= (double)area;
        for (uint64_t i = 0; i < area; i++) {
            double dv = ref_get_f64(x, base + i) - mean;
            var += dv * dv;
        }
        var /= (double)area;
        double scale = ref_get_f64(in[1], c) / sqrt(var + eps), bias = ref_get_f64(in[2], c);
        for (uint64_t i = 0; i < area; i++)
            ref_set_f64(y, base + i, (ref_get_f64(x, base + i) - mean) * scale + bias);
    }
    out[0] = y;
    return PC_OK;
}

/* ---- LayerNormalization
 * -------------------------------------------------------------------------------------- */

/* Maps a parameter tensor p onto the normalized shape ns (unidirectional broadcast: p's dims right-aligned,
 * each 1 or equal); idx receives, for each normalized element, p's flat index. */
static pc_status param_index(ref_ctx *ctx, const pc_data *p, uint32_t index, const ref_shape *ns,
                             uint64_t *idx)
{
    bool ok = p->rank <= ns->rank;
    for (int32_t d = 0; ok && d < p->rank; d++) {
        int64_t pd = p->dims[d], nd = ns->dims[ns->rank - p->rank + d];
        ok = pd == nd || pd == 1;
    }
    if (!ok) {
        char buf[96];
        return ref_unsupported(ctx, "input %u %s does not broadcast to the normalized axes", index,
                               pc_data_describe(p, buf, sizeof buf));
    }
    ref_broadcast_index(p, ns, idx);
    return PC_OK;
}

/* Normalizes over axes [axis, rank): Y = (X - Mean) * InvStdDev * Scale + B, Mean and InvStdDev = 1 /
 * sqrt(Var + epsilon) per leading index, output with shape d[0..axis) + [1] * (rank - axis) in the stash_type
 * element type. */
static pc_status op_LayerNormalization(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                       uint32_t n_out)
{
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *x = in[0], *scale = in[1], *bias = n_in > 2 ? in[2] : NULL;
    if ((st = ref_require_dtype(ctx, x, 0, float_only, "floating-point")) != PC_OK ||
        (st = ref_require_dtype(ctx, scale, 1, float_only, "floating-point")) != PC_OK)
        return st;
    if (bias && (st = ref_require_dtype(ctx, bias, 2, float_only, "floating-point")) != PC_OK) return st;
    if (x->rank < 1) return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    int32_t axis;
    if ((st = ref_axis(ctx, ref_attr_int(ctx, "axis", -1), x->rank, false, &axis)) != PC_OK) return st;
    int64_t stash = ref_attr_int(ctx, "stash_type", 1);
    if (!pc_dtype_is_valid((int32_t)stash) || !ref_is_float((pc_dtype)stash))
        return ref_fail(ctx, PC_ERR_ATTRIBUTE,
                        "attribute 'stash_type' must name a floating-point type, got %lld", (long long)stash);
    double eps = ref_attr_float(ctx, "epsilon", 1e-5);
    ref_shape ns = {x->rank - axis, {0}};
    memcpy(ns.dims, x->dims + axis, (size_t)ns.rank * sizeof *ns.dims);
    uint64_t outer = ref_shape_count(axis, x->dims), inner = ref_shape_count(ns.rank, ns.dims);
    uint64_t *si = malloc((size_t)(inner ? inner : 1) * sizeof *si);
    uint64_t *bi = malloc((size_t)(inner ? inner : 1) * sizeof *bi);
    if (!si || !bi) {
        free(si);
        free(bi);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    }
    if ((st = param_index(ctx, scale, 1, &ns, si)) != PC_OK ||
        (bias && (st = param_index(ctx, bias, 2, &ns, bi)) != PC_OK)) {
        free(si);
        free(bi);
        return st;
    }
    int64_t sdims[PC_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        sdims[d] = d < axis ? x->dims[d] : 1;
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims), *mo = NULL, *io = NULL;
    bool ok = y != NULL;
    if (ok && wanted(ctx, n_out, 1)) ok = (mo = ref_new_tensor(ctx, (pc_dtype)stash, x->rank, sdims)) != NULL;
    if (ok && wanted(ctx, n_out, 2)) ok = (io = ref_new_tensor(ctx, (pc_dtype)stash, x->rank, sdims)) != NULL;
    if (!ok) {
        free(si);
        free(bi);
        pc_data_unref(y);
        pc_data_unref(mo);
        return ctx->err->status;
    }
    for (uint64_t o = 0; o < outer; o++) {
        uint64_t base = o * inner;
        double mean = 0.0, var = 0.0;
        for (uint64_t i = 0; i < inner; i++)
            mean += ref_get_f64(x, base + i);
        mean /= (double)inner;
        for (uint64_t i = 0; i < inner; i++) {
            double dv = ref_get_f64(x, base + i) - mean;
            var += dv * dv;
        }
        var /= (double)inner;
        double inv = 1.0 / sqrt(var + eps);
        for (uint64_t i = 0; i < inner; i++) {
            double r = (ref_get_f64(x, base + i) - mean) * inv * ref_get_f64(scale, si[i]);
            if (bias) r += ref_get_f64(bias, bi[i]);
            ref_set_f64(y, base + i, r);
        }
        if (mo) ref_set_f64(mo, o, mean);
        if (io) ref_set_f64(io, o, inv);
    }
    free(si);
    free(bi);
    out[0] = y;
    if (mo) out[1] = mo;
    if (io) out[2] = io;
    return PC_OK;
}

/* ---- LRN
 * ----------------------------------------------------------------------------------------------------- */

/* y = x / (bias + alpha / size * sum of x^2 over channels [c - floor((size-1)/2), c +
 * ceil((size-1)/2)])^beta. */
static pc_status op_LRN(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, float_only, "floating-point")) != PC_OK) return st;
    if (x->rank < 2)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must be N x C x ... (rank >= 2), got rank %d",
                        (int)x->rank);
    if (!ref_has_attr(ctx, "size")) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'size' is required");
    int64_t size = ref_attr_int(ctx, "size", 0);
    if (size < 1 || size >= ATTR_LIMIT)
        return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'size' must be positive, got %lld",
                        (long long)size);
    double alpha = ref_attr_float(ctx, "alpha", 1e-4), beta = ref_attr_float(ctx, "beta", 0.75);
    double bias = ref_attr_float(ctx, "bias", 1.0);
    int64_t C = x->dims[1], before = (size - 1) / 2, after = size - 1 - before;
    uint64_t N = (uint64_t)x->dims[0], area = ref_shape_count(x->rank - 2, x->dims + 2);
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    if (!y) return ctx->err->status;
    for (uint64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (uint64_t i = 0; i < area; i++) {
                double sq = 0.0;
                int64_t lo = c - before < 0 ? 0 : c - before, hi = c + after > C - 1 ? C - 1 : c + after;
                for (int64_t cc = lo; cc <= hi; cc++) {
                    double v = ref_get_f64(x, (n * (uint64_t)C + (uint64_t)cc) * area + i);
                    sq += v * v;
                }
                uint64_t xi = (n * (uint64_t)C + (uint64_t)c) * area + i;
                ref_set_f64(y, xi, ref_get_f64(x, xi) / pow(bias + alpha / (double)size * sq, beta));
            }
    out[0] = y;
    return PC_OK;
}

/* ---- MeanVarianceNormalization
 * ------------------------------------------------------------------------------- */

/* The spec's function: (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9) with statistics over `axes` (default [0,
 * 2, 3]); the variance is computed as E[(X - mean)^2], the same quantity without the cancellation. */
static pc_status op_MeanVarianceNormalization(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                              uint32_t n_out)
{
    (void)n_out;
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, float_only, "floating-point")) != PC_OK) return st;
    static const int64_t default_axes[3] = {0, 2, 3};
    size_t n_axes;
    const int64_t *axes = ref_attr_ints(ctx, "axes", &n_axes);
    if (!axes && !ref_has_attr(ctx, "axes")) {
        axes = default_axes;
        n_axes = 3;
    }
    bool red[PC_MAX_RANK] = {false};
    for (size_t k = 0; k < n_axes; k++) {
        int32_t ax;
        if ((st = ref_axis(ctx, axes[k], x->rank, false, &ax)) != PC_OK) return st;
        if (red[ax]) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "axes lists axis %lld twice", (long long)axes[k]);
        red[ax] = true;
    }
    /* Statistics per group (the non-reduced coordinates); gstride maps each input axis to the group index. */
    int64_t gstride[PC_MAX_RANK], s = 1;
    uint64_t n_groups = 1, per_group = 1;
    for (int32_t d = x->rank - 1; d >= 0; d--) {
        gstride[d] = red[d] ? 0 : s;
        if (red[d])
            per_group *= (uint64_t)x->dims[d];
        else {
            s *= x->dims[d];
            n_groups *= (uint64_t)x->dims[d];
        }
    }
    pc_data *y = ref_new_tensor(ctx, x->dtype, x->rank, x->dims);
    double *mean = malloc((size_t)(n_groups ? n_groups : 1) * sizeof *mean);
    double *var = malloc((size_t)(n_groups ? n_groups : 1) * sizeof *var);
    if (!y || !mean || !var) {
        free(mean);
        free(var);
        if (!y) return ctx->err->status;
        pc_data_unref(y);
        return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    }
    for (uint64_t gi = 0; gi < n_groups; gi++)
        mean[gi] = var[gi] = 0.0;
    for (int pass = 0; pass < 3; pass++) { /* sums, squared deviations, output */
        int64_t counter[PC_MAX_RANK] = {0};
        uint64_t gi = 0;
        for (uint64_t i = 0; i < x->n_elements; i++) {
            double v = ref_get_f64(x, i);
            if (pass == 0)
                mean[gi] += v;
            else if (pass == 1)
                var[gi] += (v - mean[gi]) * (v - mean[gi]);
            else
                ref_set_f64(y, i, (v - mean[gi]) / (sqrt(var[gi]) + 1e-9));
            for (int32_t d = x->rank - 1; d >= 0; d--) {
                gi += (uint64_t)gstride[d];
                if (++counter[d] < x->dims[d]) break;
                gi -= (uint64_t)(gstride[d] * x->dims[d]);
                counter[d] = 0;
            }
        }
        for (uint64_t g = 0; g < n_groups && pass < 2; g++) {
            if (pass == 0)
                mean[g] /= (double)per_group;
            else
                var[g] /= (double)per_group;
        }
    }
    free(mean);
    free(var);
    out[0] = y;
    return PC_OK;
}

/* ---- Dropout
 * ------------------------------------------------------------------------------------------------- */

/* Inference is the identity with an all-true mask (mask of the input's type before opset 10, bool after).
 * Training (is_test=0 before opset 7, training_mode=true from 12) with a ratio above 0 draws random numbers:
 * unsupported. */
static pc_status op_Dropout(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out)
{
    pc_status st = ref_require_tensor(ctx, in, n_in, 0);
    if (st != PC_OK) return st;
    const pc_data *x = in[0];
    if ((st = ref_require_dtype(ctx, x, 0, float_only, "floating-point")) != PC_OK) return st;
    int64_t op = ctx->opset;
    double ratio = 0.5;
    bool training = false;
    if (op >= 12) {
        if (n_in > 1 && in[1]) {
            if (in[1]->kind != PC_TYPE_TENSOR || !ref_is_float(in[1]->dtype) || in[1]->n_elements != 1)
                return ref_fail(ctx, PC_ERR_TYPE, "input 1 'ratio' must be a floating-point scalar");
            ratio = ref_get_f64(in[1], 0);
        }
        if (n_in > 2 && in[2]) {
            if (in[2]->kind != PC_TYPE_TENSOR || in[2]->dtype != PC_DTYPE_BOOL || in[2]->n_elements != 1)
                return ref_fail(ctx, PC_ERR_TYPE, "input 2 'training_mode' must be a bool scalar");
            training = ref_get_i64(in[2], 0) != 0;
        }
    } else {
        ratio = ref_attr_float(ctx, "ratio", 0.5);
        training = op < 7 && ref_attr_int(ctx, "is_test", 0) == 0;
    }
    if (training && !(ratio >= 0.0 && ratio < 1.0))
        return ref_fail(ctx, PC_ERR_VALUE, "ratio %g is outside [0, 1)", ratio);
    if (training && ratio > 0.0)
        return ref_unsupported(ctx, "training-mode dropout with ratio %g (random)", ratio);
    pc_data *y = ref_reshaped(ctx, x, x->rank, x->dims);
    if (!y) return ctx->err->status;
    if (wanted(ctx, n_out, 1)) {
        pc_data *mask = ref_new_tensor(ctx, op >= 10 ? PC_DTYPE_BOOL : x->dtype, x->rank, x->dims);
        if (!mask) {
            pc_data_unref(y);
            return ctx->err->status;
        }
        for (uint64_t i = 0; i < mask->n_elements; i++)
            ref_set_f64(mask, i, 1.0);
        out[1] = mask;
    }
    out[0] = y;
    return PC_OK;
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
 * ------------------------------------------------------ */

/* Shapes of a loss: input (N, C, d1..dk), target (N, d1..dk) of int32/int64. D = prod(d1..dk). */
static pc_status loss_shapes(ref_ctx *ctx, const pc_data *x, const pc_data *t, const pc_data *w, uint64_t *N,
                             uint64_t *C, uint64_t *D)
{
    if (x->rank < 2)
        return ref_fail(ctx, PC_ERR_SHAPE, "input 0 must be N x C x ... (rank >= 2), got rank %d",
                        (int)x->rank);
    if (t->dtype != PC_DTYPE_INT32 && t->dtype != PC_DTYPE_INT64)
        return ref_fail(ctx, PC_ERR_TYPE, "input 1 (target) must be int32 or int64, got %s",
                        pc_dtype_name(t->dtype));
    bool ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int32_t d = 1; ok && d < t->rank; d++)
        ok = t->dims[d] == x->dims[d + 1];
    if (!ok) {
        char a[96], b[96];
        return ref_fail(ctx, PC_ERR_SHAPE, "target %s does not match input %s without its class dimension",
                        pc_data_describe(t, a, sizeof a), pc_data_describe(x, b, sizeof b));
    }
    *N = (uint64_t)x->dims[0];
    *C = (uint64_t)x->dims[1];
    *D = ref_shape_count(x->rank - 2, x->dims + 2);
    if (w && (w->rank != 1 || (uint64_t)w->dims[0] != *C))
        return ref_fail(ctx, PC_ERR_SHAPE, "input 2 (weight) must be 1-D with C = %llu elements",
                        (unsigned long long)*C);
    return PC_OK;
}

/* loss[n, d] = -lp[n, t, d] * w[t] (0 where t == ignore_index); reduction none gives that tensor (target's
 * shape), sum its sum, mean its sum divided by the sum of the weights applied (the count of non-ignored
 * targets without weights). lp is the input in double, laid out as the input. */
static pc_status nll(ref_ctx *ctx, const double *lp, const pc_data *x, const pc_data *t, const pc_data *w,
                     uint64_t N, uint64_t C, uint64_t D, pc_data **loss)
{
    const char *red = ref_attr_string(ctx, "reduction", "mean");
    int mode = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : !strcmp(red, "mean") ? 2 : -1;
    if (mode < 0) return ref_fail(ctx, PC_ERR_ATTRIBUTE, "attribute 'reduction' has unknown value '%s'", red);
    bool has_ii = ref_has_attr(ctx, "ignore_index");
    int64_t ii = ref_attr_int(ctx, "ignore_index", 0);
    pc_data *y = mode == 0 ? ref_new_tensor(ctx, x->dtype, t->rank, t->dims) : ref_new_scalar(ctx, x->dtype);
    if (!y) return ctx->err->status;
    double sum = 0.0, wsum = 0.0;
    for (uint64_t n = 0; n < N; n++)
        for (uint64_t d = 0; d < D; d++) {
            uint64_t ti = n * D + d;
            int64_t c = ref_get_i64(t, ti);
            double l = 0.0, wt = 0.0;
            if (!(has_ii && c == ii)) {
                if (c < 0 || (uint64_t)c >= C) {
                    pc_data_unref(y);
                    return ref_fail(ctx, PC_ERR_VALUE, "target %lld at position %llu is outside [0, %llu)",
                                    (long long)c, (unsigned long long)ti, (unsigned long long)C);
                }
                wt = w ? ref_get_f64(w, (uint64_t)c) : 1.0;
                l = -lp[(n * C + (uint64_t)c) * D + d] * wt;
            }
            if (mode == 0) ref_set_f64(y, ti, l);
            sum += l;
            wsum += wt;
        }
    if (mode == 1) ref_set_f64(y, 0, sum);
    if (mode == 2) ref_set_f64(y, 0, sum / wsum);
    *loss = y;
    return PC_OK;
}

static pc_status run_loss(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out, uint32_t n_out,
                          bool softmax)
{
    pc_status st;
    if ((st = ref_require_tensor(ctx, in, n_in, 0)) != PC_OK ||
        (st = ref_require_tensor(ctx, in, n_in, 1)) != PC_OK)
        return st;
    const pc_data *x = in[0], *t = in[1], *w = n_in > 2 ? in[2] : NULL;
    if ((st = ref_require_dtype(ctx, x, 0, float_only, "floating-point")) != PC_OK) return st;
    if (w && (st = ref_require_dtype(ctx, w, 2, float_only, "floating-point")) != PC_OK) return st;
    uint64_t N = 0, C = 0, D = 0;
    if ((st = loss_shapes(ctx, x, t, w, &N, &C, &D)) != PC_OK) return st;
    double *lp = malloc((size_t)(x->n_elements ? x->n_elements : 1) * sizeof *lp);
    if (!lp) return ref_fail(ctx, PC_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < x->n_elements; i++)
        lp[i] = ref_get_f64(x, i);
    if (softmax) /* log_softmax over the class axis: x - max - log(sum exp(x - max)) */
        for (uint64_t n = 0; n < N; n++)
            for (uint64_t d = 0; d < D; d++) {
                double m = -INFINITY, s = 0.0;
                for (uint64_t c = 0; c < C; c++) {
                    double v = lp[(n * C + c) * D + d];
                    if (v > m || isnan(v)) m = v;
                }
                if (isinf(m)) m = 0.0;
                for (uint64_t c = 0; c < C; c++)
                    s += exp(lp[(n * C + c) * D + d] - m);
                for (uint64_t c = 0; c < C; c++)
                    lp[(n * C + c) * D + d] -= m + log(s);
            }
    pc_data *loss = NULL, *logp = NULL;
    st = nll(ctx, lp, x, t, w, N, C, D, &loss);
    if (st == PC_OK && softmax && wanted(ctx, n_out, 1)) {
        if (!(logp = ref_new_tensor(ctx, x->dtype, x->rank, x->dims))) {
            st = ctx->err->status;
            pc_data_unref(loss);
        } else {
            for (uint64_t i = 0; i < x->n_elements; i++)
                ref_set_f64(logp, i, lp[i]);
        }
    }
    free(lp);
    if (st != PC_OK) return st;
    out[0] = loss;
    if (logp) out[1] = logp;
    return PC_OK;
}

static pc_status op_NegativeLogLikelihoodLoss(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                              uint32_t n_out)
{
    return run_loss(ctx, in, n_in, out, n_out, false);
}

static pc_status op_SoftmaxCrossEntropyLoss(ref_ctx *ctx, pc_data *const *in, uint32_t n_in, pc_data **out,
                                            uint32_t n_out)
{
    return run_loss(ctx, in, n_in, out, n_out, true);
}

const ref_op ref_ops_nn[] = {
    {"", "AveragePool", op_AveragePool},
    {"", "BatchNormalization", op_BatchNormalization},
    {"", "Dropout", op_Dropout},
    {"", "GlobalAveragePool", op_GlobalAveragePool},
    {"", "GlobalLpPool", op_GlobalLpPool},
    {"", "GlobalMaxPool", op_GlobalMaxPool},
    {"", "InstanceNormalization", op_InstanceNormalization},
    {"", "LRN", op_LRN},
    {"", "LayerNormalization", op_LayerNormalization},
    {"", "LpPool", op_LpPool},
    {"", "MaxPool", op_MaxPool},
    {"", "MaxUnpool", op_MaxUnpool},
    {"", "MeanVarianceNormalization", op_MeanVarianceNormalization},
    {"", "NegativeLogLikelihoodLoss", op_NegativeLogLikelihoodLoss},
    {"", "SoftmaxCrossEntropyLoss", op_SoftmaxCrossEntropyLoss},
};

const size_t ref_ops_nn_count = sizeof ref_ops_nn / sizeof ref_ops_nn[0];
