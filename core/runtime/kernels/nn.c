/* The nn family: pooling (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool), normalizations
 * (BatchNormalization, also its training mode, InstanceNormalization, LRN, LayerNormalization with Mean and
 * InvStdDev), Softmax/LogSoftmax on float32, Hardmax, inference Dropout with its mask, and the losses
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (float32 and double). The pools and per-channel norms
 * run channels-first (ai.onnx) and channels-last (com.ms.internal.nhwc: input 0 and output 0 are (N, d1..dk,
 * C), every other input keeps its standard layout, and the node's opset has ai.onnx's semantics).
 * MaxPool also runs double and the integer types (either layout) and computes Indices (channels first):
 * maxpool_direct.
 *
 * Precision: sums over a whole plane, row or channel (the global average, the means and variances of the
 * norms, the softmax denominators) accumulate in double, over LANES independent partial sums so that they
 * vectorize without reassociation; windowed sums (an AveragePool window, LRN's channel window) accumulate in
 * float, as a window adds only its few taps. Means are subtracted in two float parts (hi + lo), so x - mean
 * stays exact enough when the mean is large against the spread. exp is pc_rt_expf, a branch-free polynomial
 * within 2 ulp of expf, so that softmax rows vectorize.
 *
 * Speed: channels-first pools run tap-outer: each kernel tap adds one contiguous (stride 1) or strided input
 * run into the output row, with the per-axis tap ranges precomputed in scratch; channels-last pools add, per
 * tap, one contiguous run of C channels. Nothing allocates in run. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/base/half.h"
#include "core/runtime/rt_internal.h"

enum { POOL_AXES = 3, LANES = 8 };

/* ---- shared helpers
 * ------------------------------------------------------------------------------------------ */

static bool is_nhwc(const pc_rt_kernel_ctx *k)
{
    return pc_name_eq(k->node->domain, PC_NHWC_DOMAIN);
}

/* Whether the node asks for output i (present, not an omitted optional output). */
static bool output_wanted(const pc_rt_kernel_ctx *k, uint32_t i)
{
    return i < k->node->n_outputs && k->node->outputs[i] != NULL;
}

static int64_t div_floor(int64_t a, int64_t b) /* b > 0 */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t div_ceil(int64_t a, int64_t b) /* b > 0 */
{
    return -div_floor(-a, b);
}

static int64_t count_dims(int32_t rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

/* Appends n items of `size` bytes to a scratch layout of 64-byte aligned arrays; false on overflow. */
static bool scratch_take(size_t *total, uint64_t n, size_t size, size_t *offset)
{
    size_t bytes;
    if (n > SIZE_MAX || !pc_size_mul((size_t)n, size, &bytes) || !pc_size_add(bytes, 63, &bytes))
        return false;
    *offset = *total;
    return pc_size_add(*total, bytes & ~(size_t)63, total);
}

static pc_status scratch_overflow(pc_rt_kernel_ctx *k)
{
    return pc_error_set(k->err, PC_ERR_OVERFLOW, "scratch memory size overflows");
}

/* The scratch prepare asked for, checked against what run lays out in it (NULL and an error otherwise). */
static void *scratch_get(pc_rt_kernel_ctx *k, size_t needed)
{
    if (k->scratch_bytes < needed || (needed && !k->scratch)) {
        pc_error_set(k->err, PC_ERR_INTERNAL, "scratch of %zu bytes, %zu needed", k->scratch_bytes, needed);
        return NULL;
    }
    return k->scratch;
}

static pc_status require_float_input(pc_rt_kernel_ctx *k, uint32_t i, const char *name)
{
    if (i >= k->n_in || !k->in[i])
        return pc_error_set(k->err, PC_ERR_ARITY, "input %u (%s) is missing", i, name);
    if (k->in[i]->dtype != PC_DTYPE_FLOAT)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "input %u (%s) is %s; only float32 runs", i, name,
                            pc_dtype_name(k->in[i]->dtype));
    return PC_OK;
}

static pc_status require_output(pc_rt_kernel_ctx *k)
{
    if (k->n_out < 1 || !k->out[0]) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is missing");
    if (k->out[0]->dtype != PC_DTYPE_FLOAT)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "output 0 is %s; only float32 runs",
                            pc_dtype_name(k->out[0]->dtype));
    return PC_OK;
}

/* Input 0 float32 of rank >= min_rank (channels-last forms: >= 3), output 0 float32. */
static pc_status require_x(pc_rt_kernel_ctx *k, int32_t min_rank)
{
    pc_status st;
    if ((st = require_float_input(k, 0, "X")) != PC_OK || (st = require_output(k)) != PC_OK) return st;
    if (is_nhwc(k) && min_rank < 3) min_rank = 3;
    if (k->in[0]->rank < min_rank)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 has rank %d; this op needs rank >= %d",
                            (int)k->in[0]->rank, (int)min_rank);
    return PC_OK;
}

/* An attribute the node's opset does not define would change the meaning if ignored. */
static pc_status attr_since(pc_rt_kernel_ctx *k, const char *name, int64_t since)
{
    if (k->opset < since && pc_node_attr(k->node, name))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "attribute '%s' is defined only from opset %lld (node opset %lld)", name,
                            (long long)since, (long long)k->opset);
    return PC_OK;
}

/* An `axis` attribute in [-rank, rank - 1], normalized. */
static pc_status read_axis(pc_rt_kernel_ctx *k, int64_t fallback, int32_t rank, int32_t *axis)
{
    int64_t a;
    pc_status st = pc_rt_read_int(k, "axis", fallback, &a);
    if (st != PC_OK) return st;
    if (a < -(int64_t)rank || a >= rank)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'axis' is %lld, outside [%d, %d]",
                            (long long)a, -(int)rank, (int)rank - 1);
    *axis = (int32_t)(a < 0 ? a + rank : a);
    return PC_OK;
}

/* NaN wins (numpy's max): once the accumulator is NaN, nothing compares above it. */
static inline float max_nan(float acc, float v)
{
    return (v > acc || v != v) ? v : acc;
}

static float max_row(const float *x, int64_t n)
{
    float acc[LANES];
    for (int l = 0; l < LANES; l++)
        acc[l] = -INFINITY;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            acc[l] = max_nan(acc[l], x[i + l]);
    float m = -INFINITY;
    for (; i < n; i++)
        m = max_nan(m, x[i]);
    for (int l = 0; l < LANES; l++)
        m = max_nan(m, acc[l]);
    return m;
}

static double sum_f64(const float *x, int64_t n)
{
    double acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            acc[l] += (double)x[i + l];
    double s = 0.0;
    for (; i < n; i++)
        s += (double)x[i];
    for (int l = 0; l < LANES; l++)
        s += acc[l];
    return s;
}

/* sum of (x - mean)^2: the two-pass variance, stable where sum(x^2) - n mean^2 cancels */
static double sum_sq_dev_f64(const float *x, int64_t n, double mean)
{
    double acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            double d = (double)x[i + l] - mean;
            acc[l] += d * d;
        }
    double s = 0.0;
    for (; i < n; i++) {
        double d = (double)x[i] - mean;
        s += d * d;
    }
    for (int l = 0; l < LANES; l++)
        s += acc[l];
    return s;
}

/* y = ((x - mean_hi) - mean_lo) * a + b over n floats. */
static void normalize_row(const float *restrict x, float *restrict y, int64_t n, double mean, float a,
                          float b)
{
    float mh = (float)mean, ml = (float)(mean - (double)mh);
    for (int64_t i = 0; i < n; i++)
        y[i] = ((x[i] - mh) - ml) * a + b;
}

/* ---- MaxPool, AveragePool
 * ------------------------------------------------------------------------------------ */

typedef struct pool_geom {
    bool is_max, include_pad, nhwc;
    bool direct;   /* MaxPool through maxpool_direct: not float32, or the Indices output wanted */
    bool indices;  /* output 1 (Indices) wanted */
    int64_t order; /* storage_order of Indices: 0 row-major, 1 column-major spatial index */
    int32_t nsp;
    int64_t batch, channels;
    /* spatial axes right-aligned into POOL_AXES; leading unit axes: in = k = s = d = out = 1, no pads */
    int64_t in[POOL_AXES], k[POOL_AXES], s[POOL_AXES], d[POOL_AXES], pb[POOL_AXES], pe[POOL_AXES],
        out[POOL_AXES];
} pool_geom;

/* Taps of one axis for one output index: kk in [lo, hi) land inside the input; n_pad of them (from 0) land
 * inside the padded extent [-pb, in + pe) (count_include_pad's divisor: a ceil_mode window reaching past the
 * end padding counts only up to it). */
typedef struct axis_taps {
    int64_t lo, hi, n_pad;
} axis_taps;

static axis_taps axis_taps_at(const pool_geom *g, int a, int64_t o)
{
    int64_t start = o * g->s[a] - g->pb[a], d = g->d[a];
    axis_taps t;
    t.lo = start >= 0 ? 0 : div_ceil(-start, d);
    t.hi = div_floor(g->in[a] - 1 - start, d) + 1;
    t.n_pad = div_ceil(g->in[a] + g->pe[a] - start, d);
    if (t.hi > g->k[a]) t.hi = g->k[a];
    if (t.hi < t.lo) t.hi = t.lo;
    if (t.n_pad > g->k[a]) t.n_pad = g->k[a];
    return t;
}

static int64_t taps_count(const pool_geom *g, const axis_taps *t)
{
    return g->include_pad ? t->n_pad : t->hi - t->lo;
}

/* MaxPool's direct path takes these types (numpy's order; the backend tests pool uint8) */
#define MAXPOOL_DIRECT_TYPES (RT_F32 | RT_F64 | RT_ALL_INT)

/* AveragePool: float32 in and out; MaxPool (either layout): any type of MAXPOOL_DIRECT_TYPES, output 0 of
 * the same type. */
static pc_status pool_types_check(pc_rt_kernel_ctx *k, bool is_max)
{
    if (!is_max) {
        pc_status st = require_float_input(k, 0, "X");
        return st != PC_OK ? st : require_output(k);
    }
    if (k->n_in < 1 || !k->in[0]) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 (X) is missing");
    if (k->n_out < 1 || !k->out[0]) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is missing");
    pc_dtype t = k->in[0]->dtype;
    if (t <= PC_DTYPE_UNDEFINED || t >= 64 || !(MAXPOOL_DIRECT_TYPES & RT_TYPE(t)))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "input 0 (X) is %s", pc_dtype_name(t));
    if (k->out[0]->dtype != t)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "output 0 is %s, input 0 %s",
                            pc_dtype_name(k->out[0]->dtype), pc_dtype_name(t));
    return PC_OK;
}

/* Kernel, strides, dilations, pads (explicit or auto_pad), ceil_mode and the output size per spatial axis,
 * with ek = (k - 1) * d + 1: NOTSET: floor((in + pb + pe - ek) / s) + 1, with ceil_mode one more unless that
 * window would start in the end padding; VALID: no pads; SAME_UPPER / SAME_LOWER: ceil(in / s) with total
 * padding (out - 1) * s + ek - in split evenly, the odd one at the end (UPPER) or the beginning (LOWER). */
static pc_status pool_geom_read(pc_rt_kernel_ctx *k, bool is_max, pool_geom *g)
{
    pc_status st;
    memset(g, 0, sizeof *g);
    g->is_max = is_max;
    g->nhwc = is_nhwc(k);
    if ((st = pool_types_check(k, is_max)) != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    int32_t nsp = x->rank - 2;
    if (nsp < 1 || nsp > POOL_AXES)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "input 0 has rank %d; pooling runs over 1 to 3 spatial axes", (int)x->rank);
    g->nsp = nsp;
    g->batch = x->dims[0];
    g->channels = g->nhwc ? x->dims[x->rank - 1] : x->dims[1];

    int64_t ks[POOL_AXES], strides[POOL_AXES], dil[POOL_AXES], pads[2 * POOL_AXES];
    for (int32_t j = 0; j < nsp; j++) {
        strides[j] = dil[j] = 1;
        pads[j] = pads[j + nsp] = 0;
    }
    int64_t ceil_mode = 0;
    if ((st = pc_rt_read_ints(k, "kernel_shape", (size_t)nsp, 1, true, ks)) != PC_OK ||
        (st = pc_rt_read_ints(k, "strides", (size_t)nsp, 1, false, strides)) != PC_OK ||
        (st = pc_rt_read_ints(k, "pads", 2 * (size_t)nsp, 0, false, pads)) != PC_OK ||
        (st = attr_since(k, "dilations", is_max ? 10 : 19)) != PC_OK ||
        (st = pc_rt_read_ints(k, "dilations", (size_t)nsp, 1, false, dil)) != PC_OK ||
        (st = attr_since(k, "ceil_mode", 10)) != PC_OK ||
        (st = pc_rt_read_int(k, "ceil_mode", 0, &ceil_mode)) != PC_OK)
        return st;
    pc_rt_auto_pad mode;
    if ((st = pc_rt_read_auto_pad(k, &mode)) != PC_OK) return st;
    const char *ap = pc_node_attr_string(k->node, "auto_pad", "NOTSET");
    if (mode != PC_RT_PAD_NOTSET)
        for (int32_t j = 0; j < 2 * nsp; j++)
            if (pads[j])
                return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                    "attribute 'pads' cannot be used with auto_pad %s", ap);
    if (is_max) {
        int64_t order = 0;
        if ((st = attr_since(k, "storage_order", 8)) != PC_OK ||
            (st = pc_rt_read_int(k, "storage_order", 0, &order)) != PC_OK)
            return st;
        if (order != 0 && order != 1)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "attribute 'storage_order' must be 0 or 1, got %lld", (long long)order);
        g->order = order;
        g->indices = output_wanted(k, 1);
        if (g->indices && g->nhwc) /* its flat index would be into the NCHW tensor the node replaced */
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "output 1 (Indices) of a channels-last MaxPool");
        if (g->indices && k->opset < 8)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "output 1 (Indices) exists from opset 8");
        g->direct = g->indices || k->in[0]->dtype != PC_DTYPE_FLOAT;
    } else {
        int64_t include_pad = 0;
        if ((st = attr_since(k, "count_include_pad", 7)) != PC_OK ||
            (st = pc_rt_read_int(k, "count_include_pad", 0, &include_pad)) != PC_OK)
            return st;
        g->include_pad = include_pad != 0;
    }

    int32_t off = POOL_AXES - nsp;
    for (int32_t a = 0; a < POOL_AXES; a++) {
        g->in[a] = g->k[a] = g->s[a] = g->d[a] = g->out[a] = 1;
        g->pb[a] = g->pe[a] = 0;
    }
    for (int32_t j = 0; j < nsp; j++) {
        int32_t a = off + j;
        int64_t in = g->nhwc ? x->dims[1 + j] : x->dims[2 + j], s = strides[j], ek = (ks[j] - 1) * dil[j] + 1;
        g->in[a] = in;
        g->k[a] = ks[j];
        g->s[a] = s;
        g->d[a] = dil[j];
        if (mode == PC_RT_PAD_SAME_UPPER || mode == PC_RT_PAD_SAME_LOWER) {
            int64_t out = (in + s - 1) / s, total = (out - 1) * s + ek - in;
            if (total < 0 || out == 0) total = 0;
            g->out[a] = out;
            g->pb[a] = mode == PC_RT_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g->pe[a] = total - g->pb[a];
            continue;
        }
        g->pb[a] = mode == PC_RT_PAD_VALID ? 0 : pads[j];
        g->pe[a] = mode == PC_RT_PAD_VALID ? 0 : pads[j + nsp];
        if (g->pb[a] >= ek || g->pe[a] >= ek)
            return pc_error_set(
                k->err, PC_ERR_ATTRIBUTE,
                "attribute 'pads' (%lld, %lld) on spatial axis %d must be below the dilated kernel %lld",
                (long long)g->pb[a], (long long)g->pe[a], (int)j, (long long)ek);
        int64_t span = in + g->pb[a] + g->pe[a] - ek;
        if (span < 0)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "spatial axis %d: the dilated kernel %lld exceeds the padded input %lld",
                                (int)j, (long long)ek, (long long)(in + g->pb[a] + g->pe[a]));
        int64_t out = span / s + 1;
        if (ceil_mode && span % s && out * s < in + g->pb[a]) out++;
        g->out[a] = out;
    }
    int64_t ydims[PC_MAX_RANK];
    ydims[0] = g->batch;
    for (int32_t j = 0; j < nsp; j++)
        ydims[(g->nhwc ? 1 : 2) + j] = g->out[off + j];
    ydims[g->nhwc ? x->rank - 1 : 1] = g->channels;
    if ((st = pc_rt_require_out_dims(k, x->rank, ydims)) != PC_OK) return st;
    if (g->indices) {
        const pc_rt_tensor *ind = k->out[1];
        if (ind->dtype != PC_DTYPE_INT64 || ind->n != k->out[0]->n)
            return pc_error_set(k->err, PC_ERR_SHAPE, "output 1 (Indices) must be int64 shaped as output 0");
    }
    return PC_OK;
}

/* Scratch of a pool: the tap table of each axis; channels-first also the per-tap output column ranges of the
 * last axis, its per-column divisors and one input row (the window's rows reduced into one). */
typedef struct pool_layout {
    size_t taps[POOL_AXES], kw_lo, kw_hi, inv_w, row, total;
} pool_layout;

/* threads: one reduced input row each (channels-first) */
static bool pool_layout_compute(const pool_geom *g, int threads, pool_layout *l)
{
    bool ok = true;
    l->total = 0;
    l->kw_lo = l->kw_hi = l->inv_w = l->row = 0;
    for (int a = 0; a < POOL_AXES; a++)
        ok = ok && scratch_take(&l->total, (uint64_t)g->out[a], sizeof(axis_taps), &l->taps[a]);
    if (!g->nhwc) {
        ok = ok && scratch_take(&l->total, (uint64_t)g->k[2], sizeof(int64_t), &l->kw_lo) &&
             scratch_take(&l->total, (uint64_t)g->k[2], sizeof(int64_t), &l->kw_hi) &&
             scratch_take(&l->total, (uint64_t)g->out[2], sizeof(float), &l->inv_w) &&
             (uint64_t)g->in[2] <= UINT64_MAX / (uint64_t)threads &&
             scratch_take(&l->total, (uint64_t)g->in[2] * (uint64_t)threads, sizeof(float), &l->row);
    }
    return ok;
}

static pc_status pool_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes, bool is_max)
{
    pool_geom g;
    pc_status st = pool_geom_read(k, is_max, &g);
    if (st != PC_OK) return st;
    /* a window of padding only has no defined value (the max of nothing; 0 / 0); count_include_pad's
     * average of one is 0 */
    if (k->out[0]->n > 0 && (is_max || !g.include_pad))
        for (int a = 0; a < POOL_AXES; a++)
            for (int64_t o = 0; o < g.out[a]; o++) {
                axis_taps t = axis_taps_at(&g, a, o);
                if (t.hi == t.lo)
                    return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                        "spatial axis %d: the window of output %lld covers only padding",
                                        a - (POOL_AXES - g.nsp), (long long)o);
            }
    pool_layout l;
    if (!pool_layout_compute(&g, k->threads, &l)) return scratch_overflow(k);
    *scratch_bytes = l.total;
    return PC_OK;
}

/* y[i] op= x[i * stride]; strides 1 and 2 (most pools) get loops of their own, which vectorize. */
static void max_into(float *restrict y, const float *restrict x, int64_t n, int64_t stride)
{
    if (stride == 1)
        for (int64_t i = 0; i < n; i++)
            y[i] = max_nan(y[i], x[i]);
    else if (stride == 2)
        for (int64_t i = 0; i < n; i++)
            y[i] = max_nan(y[i], x[2 * i]);
    else
        for (int64_t i = 0; i < n; i++)
            y[i] = max_nan(y[i], x[i * stride]);
}

static void add_into(float *restrict y, const float *restrict x, int64_t n, int64_t stride)
{
    if (stride == 1)
        for (int64_t i = 0; i < n; i++)
            y[i] += x[i];
    else if (stride == 2)
        for (int64_t i = 0; i < n; i++)
            y[i] += x[2 * i];
    else
        for (int64_t i = 0; i < n; i++)
            y[i] += x[i * stride];
}

/* Channels-first only: kw_lo/kw_hi, the output columns [lo, hi) where last-axis tap kw is inside; inv_w, 1 /
 * the last axis's share of each column's divisor; row, one input row of scratch. */
typedef struct pool_tables {
    const axis_taps *taps[POOL_AXES];
    const int64_t *kw_lo, *kw_hi;
    const float *inv_w;
    float *row;
} pool_tables;

/* Channels-first, per output row: the input rows under the window (its outer axes) are reduced into one row,
 * contiguously, then each last-axis tap adds (or maxes) one run of that row, contiguous or strided, into the
 * output row: a k x k window costs k contiguous row passes and k output-row passes, not k * k strided. */
static void pool_nchw(const pool_geom *g, const pool_tables *t, const float *x, float *y, float *row,
                      int64_t p_lo, int64_t p_hi)
{
    const int64_t in_plane = g->in[0] * g->in[1] * g->in[2], out_plane = g->out[0] * g->out[1] * g->out[2];
    const int64_t w_in = g->in[2], w_out = g->out[2], sw = g->s[2];
    const float init = g->is_max ? -INFINITY : 0.0f;
    for (int64_t p = p_lo; p < p_hi; p++) {
        const float *xp = x + p * in_plane;
        float *yr = y + p * out_plane;
        for (int64_t od = 0; od < g->out[0]; od++) {
            const axis_taps *td = &t->taps[0][od];
            for (int64_t oh = 0; oh < g->out[1]; oh++, yr += w_out) {
                const axis_taps *th = &t->taps[1][oh];
                const float *src = NULL; /* the reduced row: a single input row is read in place */
                int64_t rows = 0;
                for (int64_t kd = td->lo; kd < td->hi; kd++) {
                    int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                    for (int64_t kh = th->lo; kh < th->hi; kh++, rows++) {
                        int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                        const float *xr = xp + (id * g->in[1] + ih) * w_in;
                        if (rows == 0) {
                            src = xr;
                            continue;
                        }
                        if (rows == 1) {
                            memcpy(row, src, (size_t)w_in * sizeof *src);
                            src = row;
                        }
                        if (g->is_max)
                            max_into(row, xr, w_in, 1);
                        else
                            add_into(row, xr, w_in, 1);
                    }
                }
                for (int64_t ow = 0; ow < w_out; ow++)
                    yr[ow] = init;
                for (int64_t kw = 0; src && kw < g->k[2]; kw++) {
                    int64_t lo = t->kw_lo[kw], n = t->kw_hi[kw] - lo;
                    if (n <= 0) continue;
                    const float *xs = src + (lo * sw + kw * g->d[2] - g->pb[2]);
                    if (g->is_max)
                        max_into(yr + lo, xs, n, sw);
                    else
                        add_into(yr + lo, xs, n, sw);
                }
                if (!g->is_max) {
                    /* reciprocals multiply (divps is slow): within 2 ulp of the division */
                    float inv_outer = 1.0f / (float)(taps_count(g, td) * taps_count(g, th));
                    for (int64_t ow = 0; ow < w_out; ow++)
                        yr[ow] *= inv_outer * t->inv_w[ow];
                }
            }
        }
    }
}

/* Channels-last: per output position, each tap adds (or maxes) a contiguous run of C channels; output rows
 * [r_lo, r_hi) of the batch x out[0] x out[1] rows. */
static void pool_nhwc(const pool_geom *g, const pool_tables *t, const float *x, float *y, int64_t r_lo,
                      int64_t r_hi)
{
    const int64_t C = g->channels, in_image = g->in[0] * g->in[1] * g->in[2] * C;
    const float init = g->is_max ? -INFINITY : 0.0f;
    float *yv = y + r_lo * g->out[2] * C;
    for (int64_t r = r_lo; r < r_hi; r++) {
        int64_t oh = r % g->out[1], od = r / g->out[1] % g->out[0], n = r / g->out[1] / g->out[0];
        const float *xn = x + n * in_image;
        {
            const axis_taps *td = &t->taps[0][od];
            {
                const axis_taps *th = &t->taps[1][oh];
                for (int64_t ow = 0; ow < g->out[2]; ow++, yv += C) {
                    const axis_taps *tw = &t->taps[2][ow];
                    for (int64_t c = 0; c < C; c++)
                        yv[c] = init;
                    for (int64_t kd = td->lo; kd < td->hi; kd++) {
                        int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                        for (int64_t kh = th->lo; kh < th->hi; kh++) {
                            int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                            for (int64_t kw = tw->lo; kw < tw->hi; kw++) {
                                int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                                const float *xv = xn + ((id * g->in[1] + ih) * g->in[2] + iw) * C;
                                if (g->is_max)
                                    max_into(yv, xv, C, 1);
                                else
                                    add_into(yv, xv, C, 1);
                            }
                        }
                    }
                    if (!g->is_max) {
                        float cnt = (float)(taps_count(g, td) * taps_count(g, th) * taps_count(g, tw));
                        for (int64_t c = 0; c < C; c++)
                            yv[c] /= cnt;
                    }
                }
            }
        }
    }
}

/* Whether element i of x is above element j in numpy's max order: NaN above everything, so the first NaN
 * wins as numpy's argmax picks it. */
static bool elem_above(const void *x, pc_dtype t, int64_t i, int64_t j)
{
#define ABOVE_INT(T)                                                                                         \
    {                                                                                                        \
        const T *v = x;                                                                                      \
        return v[i] > v[j];                                                                                  \
    }
    switch (t) {
    case PC_DTYPE_FLOAT: {
        const float *v = x;
        return v[i] != v[i] ? v[j] == v[j] : v[i] > v[j];
    }
    case PC_DTYPE_DOUBLE: {
        const double *v = x;
        return v[i] != v[i] ? v[j] == v[j] : v[i] > v[j];
    }
    case PC_DTYPE_INT8:
        ABOVE_INT(int8_t)
    case PC_DTYPE_UINT8:
        ABOVE_INT(uint8_t)
    case PC_DTYPE_INT16:
        ABOVE_INT(int16_t)
    case PC_DTYPE_UINT16:
        ABOVE_INT(uint16_t)
    case PC_DTYPE_INT32:
        ABOVE_INT(int32_t)
    case PC_DTYPE_UINT32:
        ABOVE_INT(uint32_t)
    case PC_DTYPE_INT64:
        ABOVE_INT(int64_t)
    case PC_DTYPE_UINT64:
        ABOVE_INT(uint64_t)
    default:
        return false;
    }
#undef ABOVE_INT
}

/* MaxPool, any type of MAXPOOL_DIRECT_TYPES, channels first or last, with Indices (channels first): each
 * output visits its window tap by tap in row-major kernel order and keeps the first maximum (the reference's
 * and numpy's argmax). Indices is the flat index into X: (n * C + c) * plane + the spatial index, row-major
 * (storage_order 0) or with the first spatial axis fastest (1). Slower than the float path; only what it
 * cannot do comes here (quantized NHWC graphs pool uint8/int8 here). */
static void maxpool_direct(pc_rt_kernel_ctx *k, const pool_geom *g, const axis_taps *const *taps)
{
    const pc_rt_tensor *x = k->in[0];
    const pc_dtype t = x->dtype;
    const size_t es = pc_dtype_bits(t) / 8;
    const uint8_t *xb = x->data;
    uint8_t *yb = k->out[0]->data;
    int64_t *ind = g->indices ? k->out[1]->data : NULL;
    const int64_t in_plane = g->in[0] * g->in[1] * g->in[2], out_plane = g->out[0] * g->out[1] * g->out[2];
    const int64_t ch = g->channels;
    /* element (n, c, spatial i) of X at base + i * step; of Y at ybase + o * step */
    const int64_t step = g->nhwc ? ch : 1;
    for (int64_t p = 0; p < g->batch * ch; p++) {
        const int64_t n = p / ch, c = p % ch;
        const int64_t base = g->nhwc ? n * in_plane * ch + c : p * in_plane;
        const int64_t ybase = g->nhwc ? n * out_plane * ch + c : p * out_plane;
        int64_t o = 0;
        for (int64_t od = 0; od < g->out[0]; od++)
            for (int64_t oh = 0; oh < g->out[1]; oh++)
                for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {
                    const axis_taps *td = &taps[0][od], *th = &taps[1][oh], *tw = &taps[2][ow];
                    int64_t best = -1, bd = 0, bh = 0, bw = 0;
                    for (int64_t kd = td->lo; kd < td->hi; kd++) {
                        int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                        for (int64_t kh = th->lo; kh < th->hi; kh++) {
                            int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                            for (int64_t kw = tw->lo; kw < tw->hi; kw++) {
                                int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                                int64_t sp = (id * g->in[1] + ih) * g->in[2] + iw;
                                if (best < 0 || elem_above(xb, t, base + sp * step, base + best * step)) {
                                    best = sp;
                                    bd = id, bh = ih, bw = iw;
                                }
                            }
                        }
                    }
                    if (best < 0) continue; /* prepare refused windows of padding only */
                    int64_t yo = ybase + o * step;
                    memcpy(yb + (size_t)yo * es, xb + (size_t)(base + best * step) * es, es);
                    if (ind) /* leading unit axes have coordinate 0, so the column-major form needs no nsp */
                        ind[yo] = base + (g->order ? bd + (bh + bw * g->in[1]) * g->in[0] : best);
                }
    }
}

typedef struct pool_task {
    const pool_geom *g;
    const pool_tables *t;
    const float *x;
    float *y;
} pool_task;

static void pool_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const pool_task *p = arg;
    if (p->g->nhwc)
        pool_nhwc(p->g, p->t, p->x, p->y, lo, hi);
    else
        pool_nchw(p->g, p->t, p->x, p->y, p->t->row + (size_t)part * (size_t)p->g->in[2], lo, hi);
}

static pc_status pool_run(pc_rt_kernel_ctx *k, bool is_max)
{
    pool_geom g;
    pc_status st = pool_geom_read(k, is_max, &g);
    if (st != PC_OK) return st;
    if (k->out[0]->n == 0) return PC_OK;
    pool_layout l;
    if (!pool_layout_compute(&g, k->threads, &l)) return scratch_overflow(k);
    char *base = scratch_get(k, l.total);
    if (!base && l.total) return k->err->status;
    pool_tables t;
    for (int a = 0; a < POOL_AXES; a++) {
        axis_taps *tab = (axis_taps *)(void *)(base + l.taps[a]);
        for (int64_t o = 0; o < g.out[a]; o++)
            tab[o] = axis_taps_at(&g, a, o);
        t.taps[a] = tab;
    }
    if (g.direct) {
        maxpool_direct(k, &g, t.taps);
        return PC_OK;
    }
    if (!g.nhwc) {
        int64_t *kw_lo = (int64_t *)(void *)(base + l.kw_lo), *kw_hi = (int64_t *)(void *)(base + l.kw_hi);
        float *inv_w = (float *)(void *)(base + l.inv_w);
        for (int64_t kw = 0; kw < g.k[2]; kw++) { /* 0 <= ow * s - pb + kw * d < in */
            int64_t offset = kw * g.d[2] - g.pb[2];
            int64_t lo = div_ceil(-offset, g.s[2]), hi = div_floor(g.in[2] - 1 - offset, g.s[2]) + 1;
            if (lo < 0) lo = 0;
            if (hi > g.out[2]) hi = g.out[2];
            kw_lo[kw] = lo;
            kw_hi[kw] = hi > lo ? hi : lo;
        }
        for (int64_t ow = 0; ow < g.out[2]; ow++)
            inv_w[ow] = 1.0f / (float)taps_count(&g, &t.taps[2][ow]);
        t.kw_lo = kw_lo;
        t.kw_hi = kw_hi;
        t.inv_w = inv_w;
        t.row = (float *)(void *)(base + l.row);
    }
    pool_task task = {&g, &t, k->in[0]->data, k->out[0]->data};
    /* channels-first by plane, channels-last by output row; a chunk is worth a thread from ~16K window taps
     */
    int64_t window = g.k[0] * g.k[1] * g.k[2];
    int64_t items = g.nhwc ? g.batch * g.out[0] * g.out[1] : g.batch * g.channels;
    int64_t per_item = (g.nhwc ? g.out[2] * g.channels : g.out[0] * g.out[1] * g.out[2]) * window;
    pc_rt_parallel_for(k, items, per_item > 0 ? 16384 / per_item + 1 : 1, pool_part, &task);
    return PC_OK;
}

static pc_status maxpool_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    return pool_prepare(k, scratch_bytes, true);
}

static pc_status maxpool_run(pc_rt_kernel_ctx *k)
{
    return pool_run(k, true);
}

static pc_status avgpool_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    return pool_prepare(k, scratch_bytes, false);
}

static pc_status avgpool_run(pc_rt_kernel_ctx *k)
{
    return pool_run(k, false);
}

/* ---- GlobalAveragePool, GlobalMaxPool
 * ------------------------------------------------------------------------ */

/* Batch, channels and the spatial area of input 0 in its layout. */
static void split_nc(const pc_rt_kernel_ctx *k, int64_t *batch, int64_t *channels, int64_t *area)
{
    const pc_rt_tensor *x = k->in[0];
    *batch = x->dims[0];
    if (is_nhwc(k)) {
        *channels = x->dims[x->rank - 1];
        *area = count_dims(x->rank - 2, x->dims + 1);
    } else {
        *channels = x->dims[1];
        *area = count_dims(x->rank - 2, x->dims + 2);
    }
}

static pc_status global_pool_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes, bool is_max)
{
    pc_status st = require_x(k, 2);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    int64_t ydims[PC_MAX_RANK], batch, channels, area;
    split_nc(k, &batch, &channels, &area);
    for (int32_t i = 0; i < x->rank; i++)
        ydims[i] = 1;
    ydims[0] = batch;
    ydims[is_nhwc(k) ? x->rank - 1 : 1] = channels;
    if ((st = pc_rt_require_out_dims(k, x->rank, ydims)) != PC_OK) return st;
    if (is_max && area == 0 && batch * channels > 0)
        return pc_error_set(k->err, PC_ERR_SHAPE, "the spatial dims are empty: there is no maximum");
    *scratch_bytes = 0;
    if (is_nhwc(k) && !is_max) { /* per-channel sums in double */
        size_t off;
        if (!scratch_take(scratch_bytes, (uint64_t)channels, sizeof(double), &off))
            return scratch_overflow(k);
    }
    return PC_OK;
}

static pc_status global_pool_run(pc_rt_kernel_ctx *k, bool is_max)
{
    int64_t batch, C, area;
    split_nc(k, &batch, &C, &area);
    const float *x = k->in[0]->data;
    float *y = k->out[0]->data;
    if (!is_nhwc(k)) {
        for (int64_t p = 0; p < batch * C; p++) {
            const float *xp = x + p * area;
            y[p] = is_max ? max_row(xp, area) : (float)(sum_f64(xp, area) / (double)area);
        }
        return PC_OK;
    }
    double *acc = is_max ? NULL : scratch_get(k, (size_t)C * sizeof *acc);
    if (!is_max && !acc && C > 0) return k->err->status;
    for (int64_t n = 0; n < batch; n++) {
        const float *xn = x + n * area * C;
        float *yn = y + n * C;
        if (is_max) {
            for (int64_t c = 0; c < C; c++)
                yn[c] = -INFINITY;
            for (int64_t i = 0; i < area; i++)
                max_into(yn, xn + i * C, C, 1);
            continue;
        }
        for (int64_t c = 0; c < C; c++)
            acc[c] = 0.0;
        for (int64_t i = 0; i < area; i++) {
            const float *row = xn + i * C;
            for (int64_t c = 0; c < C; c++)
                acc[c] += (double)row[c];
        }
        for (int64_t c = 0; c < C; c++)
            yn[c] = (float)(acc[c] / (double)area);
    }
    return PC_OK;
}

static pc_status gap_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    return global_pool_prepare(k, scratch_bytes, false);
}

static pc_status gap_run(pc_rt_kernel_ctx *k)
{
    return global_pool_run(k, false);
}

static pc_status gmp_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    return global_pool_prepare(k, scratch_bytes, true);
}

static pc_status gmp_run(pc_rt_kernel_ctx *k)
{
    return global_pool_run(k, true);
}

/* ---- BatchNormalization (inference)
 * -------------------------------------------------------------------------- */

/* Per-channel inputs: float32 vectors of C elements. */
static pc_status require_channel_vector(pc_rt_kernel_ctx *k, uint32_t i, const char *name, int64_t C)
{
    pc_status st = require_float_input(k, i, name);
    if (st != PC_OK) return st;
    if (k->in[i]->n != (uint64_t)C)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input %u (%s) has %llu elements, expected C = %lld", i,
                            name, (unsigned long long)k->in[i]->n, (long long)C);
    return PC_OK;
}

/* Training mode (training_mode = 1 from opset 14; before it, asking for any of outputs 1-3): the batch's
 * mean and biased variance per channel over N and the spatial dims (double, two passes) normalize instead of
 * the inputs', and outputs 1 and 2 are the running statistics input * momentum + batch * (1 - momentum)
 * (before 14 output 3 is the batch mean). Output 4 (saved_var: frameworks disagree on what it holds) is
 * refused. */
static pc_status batchnorm_mode(pc_rt_kernel_ctx *k, bool *training)
{
    pc_status st;
    int64_t v = 0;
    bool extra = false;
    for (uint32_t i = 1; i < k->node->n_outputs; i++)
        extra = extra || output_wanted(k, i);
    if (k->opset >= 14) {
        if ((st = pc_rt_read_int(k, "training_mode", 0, &v)) != PC_OK) return st;
        if (v != 0 && v != 1)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "attribute 'training_mode' must be 0 or 1, got %lld", (long long)v);
        if (v == 0 && extra)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                "outputs running_mean and running_var exist only with training_mode = 1");
        *training = v != 0;
    } else {
        *training = extra;
        if (k->opset < 7 && extra && pc_node_attr_int(k->node, "is_test", 0) != 0)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "is_test = 1 takes only the output Y");
    }
    if (output_wanted(k, 4))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "output 4 (saved_var) is not computed");
    return PC_OK;
}

typedef struct bnorm_layout {
    size_t a, mh, ml, mean, var, total;
} bnorm_layout;

static bool bnorm_layout_compute(int64_t C, bool training, bnorm_layout *l)
{
    l->total = 0;
    l->mh = l->ml = l->mean = l->var = 0;
    return scratch_take(&l->total, (uint64_t)C, sizeof(float), &l->a) &&
           (!training || (scratch_take(&l->total, (uint64_t)C, sizeof(float), &l->mh) &&
                          scratch_take(&l->total, (uint64_t)C, sizeof(float), &l->ml) &&
                          scratch_take(&l->total, (uint64_t)C, sizeof(double), &l->mean) &&
                          scratch_take(&l->total, (uint64_t)C, sizeof(double), &l->var)));
}

/* y = (x - mean[c]) * a[c] + B[c], a = scale / sqrt(var + epsilon) (in double, rounded once). */
static pc_status batchnorm_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = require_x(k, 2);
    if (st != PC_OK) return st;
    bool training = false;
    if ((st = batchnorm_mode(k, &training)) != PC_OK) return st;
    int64_t v;
    if (k->opset < 9) { /* spatial = 0 takes per-activation parameters (C x D1 x ...) */
        if ((st = pc_rt_read_int(k, "spatial", 1, &v)) != PC_OK) return st;
        if (v != 1)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "attribute 'spatial' = %lld", (long long)v);
    }
    int64_t batch, C, area;
    split_nc(k, &batch, &C, &area);
    static const char *const names[5] = {"X", "scale", "B", "input_mean", "input_var"};
    for (uint32_t i = 1; i < 5; i++)
        if ((st = require_channel_vector(k, i, names[i], C)) != PC_OK) return st;
    for (uint32_t i = 1; i < 4; i++)
        if (output_wanted(k, i) &&
            (!k->out[i] || k->out[i]->dtype != PC_DTYPE_FLOAT || k->out[i]->n != (uint64_t)C))
            return pc_error_set(k->err, PC_ERR_SHAPE, "output %u must be float32 with C = %lld elements", i,
                                (long long)C);
    float eps, momentum;
    if ((st = pc_rt_require_out_dims(k, k->in[0]->rank, k->in[0]->dims)) != PC_OK ||
        (st = pc_rt_read_float(k, "epsilon", 1e-5f, &eps)) != PC_OK ||
        (st = pc_rt_read_float(k, "momentum", 0.9f, &momentum)) != PC_OK)
        return st;
    if (training && batch * area == 0 && C > 0)
        return pc_error_set(k->err, PC_ERR_SHAPE, "training mode over an empty batch has no statistics");
    bnorm_layout l;
    if (!bnorm_layout_compute(C, training, &l)) return scratch_overflow(k);
    *scratch_bytes = l.total;
    return PC_OK;
}

/* The batch statistics of training mode into mean and var (biased), per channel. */
static void batchnorm_stats(const pc_rt_kernel_ctx *k, int64_t batch, int64_t C, int64_t area, double *mean,
                            double *var)
{
    const float *x = k->in[0]->data;
    const double cnt = (double)(batch * area);
    for (int64_t c = 0; c < C; c++)
        mean[c] = var[c] = 0.0;
    if (!is_nhwc(k)) {
        for (int64_t c = 0; c < C; c++) {
            for (int64_t n = 0; n < batch; n++)
                mean[c] += sum_f64(x + (n * C + c) * area, area);
            mean[c] /= cnt;
            for (int64_t n = 0; n < batch; n++)
                var[c] += sum_sq_dev_f64(x + (n * C + c) * area, area, mean[c]);
            var[c] /= cnt;
        }
        return;
    }
    for (int64_t r = 0; r < batch * area; r++)
        for (int64_t c = 0; c < C; c++)
            mean[c] += (double)x[r * C + c];
    for (int64_t c = 0; c < C; c++)
        mean[c] /= cnt;
    for (int64_t r = 0; r < batch * area; r++)
        for (int64_t c = 0; c < C; c++) {
            double d = (double)x[r * C + c] - mean[c];
            var[c] += d * d;
        }
    for (int64_t c = 0; c < C; c++)
        var[c] /= cnt;
}

static pc_status batchnorm_run(pc_rt_kernel_ctx *k)
{
    int64_t batch, C, area;
    split_nc(k, &batch, &C, &area);
    bool training = false;
    pc_status st = batchnorm_mode(k, &training);
    if (st != PC_OK) return st;
    bnorm_layout l;
    if (!bnorm_layout_compute(C, training, &l)) return scratch_overflow(k);
    char *base = scratch_get(k, l.total);
    if (!base && l.total) return k->err->status;
    float eps = pc_node_attr_float(k->node, "epsilon", 1e-5f);
    const float *x = k->in[0]->data, *scale = k->in[1]->data, *bias = k->in[2]->data, *mean = k->in[3]->data,
                *var = k->in[4]->data;
    float *y = k->out[0]->data, *a = (float *)(void *)(base + l.a);
    if (training) {
        double *bm = (double *)(void *)(base + l.mean), *bv = (double *)(void *)(base + l.var);
        float *mh = (float *)(void *)(base + l.mh), *ml = (float *)(void *)(base + l.ml);
        double mom = (double)pc_node_attr_float(k->node, "momentum", 0.9f);
        batchnorm_stats(k, batch, C, area, bm, bv);
        float *rm = output_wanted(k, 1) ? k->out[1]->data : NULL,
              *rv = output_wanted(k, 2) ? k->out[2]->data : NULL,
              *sm = output_wanted(k, 3) ? k->out[3]->data : NULL;
        for (int64_t c = 0; c < C; c++) {
            a[c] = (float)((double)scale[c] / sqrt(bv[c] + (double)eps));
            mh[c] = (float)bm[c];
            ml[c] = (float)(bm[c] - (double)mh[c]);
            if (rm) rm[c] = (float)((double)mean[c] * mom + bm[c] * (1.0 - mom));
            if (rv) rv[c] = (float)((double)var[c] * mom + bv[c] * (1.0 - mom));
            if (sm) sm[c] = (float)bm[c];
        }
        if (!is_nhwc(k)) {
            for (int64_t p = 0; p < batch * C; p++) {
                int64_t c = p % C;
                normalize_row(x + p * area, y + p * area, area, bm[c], a[c], bias[c]);
            }
            return PC_OK;
        }
        for (int64_t r = 0; r < batch * area; r++) {
            const float *xr = x + r * C;
            float *yr = y + r * C;
            for (int64_t c = 0; c < C; c++)
                yr[c] = ((xr[c] - mh[c]) - ml[c]) * a[c] + bias[c];
        }
        return PC_OK;
    }
    for (int64_t c = 0; c < C; c++)
        a[c] = (float)((double)scale[c] / sqrt((double)var[c] + (double)eps));
    if (!is_nhwc(k)) {
        for (int64_t n = 0; n < batch; n++)
            for (int64_t c = 0; c < C; c++) {
                const float *xp = x + (n * C + c) * area;
                float *yp = y + (n * C + c) * area, m = mean[c], ac = a[c], b = bias[c];
                for (int64_t i = 0; i < area; i++)
                    yp[i] = (xp[i] - m) * ac + b;
            }
        return PC_OK;
    }
    for (int64_t r = 0; r < batch * area; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        for (int64_t c = 0; c < C; c++)
            yr[c] = (xr[c] - mean[c]) * a[c] + bias[c];
    }
    return PC_OK;
}

/* ---- InstanceNormalization
 * ----------------------------------------------------------------------------------- */

/* y = (x - mean) * scale[c] / sqrt(var + epsilon) + B[c], mean and biased variance per (n, c) over the
 * spatial dims, in double (two passes). */
typedef struct inorm_layout {
    size_t mean, var, mh, ml, a, total;
} inorm_layout;

static bool inorm_layout_compute(int64_t C, inorm_layout *l)
{
    l->total = 0;
    return scratch_take(&l->total, (uint64_t)C, sizeof(double), &l->mean) &&
           scratch_take(&l->total, (uint64_t)C, sizeof(double), &l->var) &&
           scratch_take(&l->total, (uint64_t)C, sizeof(float), &l->mh) &&
           scratch_take(&l->total, (uint64_t)C, sizeof(float), &l->ml) &&
           scratch_take(&l->total, (uint64_t)C, sizeof(float), &l->a);
}

static pc_status instnorm_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = require_x(k, 2);
    if (st != PC_OK) return st;
    int64_t batch, C, area;
    split_nc(k, &batch, &C, &area);
    float eps;
    if ((st = require_channel_vector(k, 1, "scale", C)) != PC_OK ||
        (st = require_channel_vector(k, 2, "B", C)) != PC_OK ||
        (st = pc_rt_require_out_dims(k, k->in[0]->rank, k->in[0]->dims)) != PC_OK ||
        (st = pc_rt_read_float(k, "epsilon", 1e-5f, &eps)) != PC_OK)
        return st;
    *scratch_bytes = 0;
    inorm_layout l;
    if (is_nhwc(k)) {
        if (!inorm_layout_compute(C, &l)) return scratch_overflow(k);
        *scratch_bytes = l.total;
    }
    return PC_OK;
}

static pc_status instnorm_run(pc_rt_kernel_ctx *k)
{
    int64_t batch, C, area;
    split_nc(k, &batch, &C, &area);
    double eps = (double)pc_node_attr_float(k->node, "epsilon", 1e-5f);
    const float *x = k->in[0]->data, *scale = k->in[1]->data, *bias = k->in[2]->data;
    float *y = k->out[0]->data;
    if (!is_nhwc(k)) {
        for (int64_t p = 0; p < batch * C; p++) {
            const float *xp = x + p * area;
            int64_t c = p % C;
            double mean = sum_f64(xp, area) / (double)area;
            double var = sum_sq_dev_f64(xp, area, mean) / (double)area;
            normalize_row(xp, y + p * area, area, mean, (float)((double)scale[c] / sqrt(var + eps)), bias[c]);
        }
        return PC_OK;
    }
    inorm_layout l;
    if (!inorm_layout_compute(C, &l)) return scratch_overflow(k);
    char *base = scratch_get(k, l.total);
    if (!base && l.total) return k->err->status;
    double *mean = (double *)(void *)(base + l.mean), *var = (double *)(void *)(base + l.var);
    float *mh = (float *)(void *)(base + l.mh), *ml = (float *)(void *)(base + l.ml),
          *a = (float *)(void *)(base + l.a);
    for (int64_t n = 0; n < batch; n++) {
        const float *xn = x + n * area * C;
        float *yn = y + n * area * C;
        for (int64_t c = 0; c < C; c++)
            mean[c] = var[c] = 0.0;
        for (int64_t i = 0; i < area; i++) {
            const float *row = xn + i * C;
            for (int64_t c = 0; c < C; c++)
                mean[c] += (double)row[c];
        }
        for (int64_t c = 0; c < C; c++)
            mean[c] /= (double)area;
        for (int64_t i = 0; i < area; i++) {
            const float *row = xn + i * C;
            for (int64_t c = 0; c < C; c++) {
                double d = (double)row[c] - mean[c];
                var[c] += d * d;
            }
        }
        for (int64_t c = 0; c < C; c++) {
            mh[c] = (float)mean[c];
            ml[c] = (float)(mean[c] - (double)mh[c]);
            a[c] = (float)((double)scale[c] / sqrt(var[c] / (double)area + eps));
        }
        for (int64_t i = 0; i < area; i++) {
            const float *row = xn + i * C;
            float *yr = yn + i * C;
            for (int64_t c = 0; c < C; c++)
                yr[c] = ((row[c] - mh[c]) - ml[c]) * a[c] + bias[c];
        }
    }
    return PC_OK;
}

/* ---- LRN
 * ----------------------------------------------------------------------------------------------------- */

/* y = x / (bias + alpha / size * sum of x^2 over channels [c - floor((size - 1) / 2), c + ceil((size - 1) /
 * 2)])^beta; the window sum in float (size taps). */
typedef struct lrn_params {
    int64_t before, after;
    float coef, beta, bias;
} lrn_params;

static pc_status lrn_params_read(pc_rt_kernel_ctx *k, lrn_params *p)
{
    pc_rt_lrn a;
    pc_status st = pc_rt_read_lrn(k, &a);
    if (st != PC_OK) return st;
    p->before = a.before;
    p->after = a.after;
    p->beta = a.beta;
    p->bias = a.bias;
    p->coef = (float)((double)a.alpha / (double)a.size);
    return PC_OK;
}

/* y[i] = x[i] / (bias + coef * acc[i])^beta, with sqrt forms for the usual betas. */
static void lrn_scale(const float *restrict x, const float *restrict acc, float *restrict y, int64_t n,
                      const lrn_params *p)
{
    float coef = p->coef, bias = p->bias;
    if (p->beta == 0.75f) {
        for (int64_t i = 0; i < n; i++) {
            float r = sqrtf(bias + coef * acc[i]);
            y[i] = x[i] / (r * sqrtf(r));
        }
    } else if (p->beta == 0.5f) {
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] / sqrtf(bias + coef * acc[i]);
    } else if (p->beta == 1.0f) {
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] / (bias + coef * acc[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] / powf(bias + coef * acc[i], p->beta);
    }
}

static pc_status lrn_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = require_x(k, 2);
    if (st != PC_OK) return st;
    lrn_params p;
    if ((st = lrn_params_read(k, &p)) != PC_OK ||
        (st = pc_rt_require_out_dims(k, k->in[0]->rank, k->in[0]->dims)) != PC_OK)
        return st;
    int64_t batch, C, area;
    split_nc(k, &batch, &C, &area);
    size_t off;
    *scratch_bytes = 0; /* the window sums of one plane (channels-first) or one row of channels */
    if (!scratch_take(scratch_bytes, (uint64_t)(is_nhwc(k) ? C : area), sizeof(float), &off))
        return scratch_overflow(k);
    return PC_OK;
}

static pc_status lrn_run(pc_rt_kernel_ctx *k)
{
    lrn_params p;
    pc_status st = lrn_params_read(k, &p);
    if (st != PC_OK) return st;
    int64_t batch, C, area;
    split_nc(k, &batch, &C, &area);
    const float *x = k->in[0]->data;
    float *y = k->out[0]->data, *acc = scratch_get(k, (size_t)(is_nhwc(k) ? C : area) * sizeof *acc);
    if (!acc && (is_nhwc(k) ? C : area) > 0) return k->err->status;
    if (!is_nhwc(k)) {
        for (int64_t n = 0; n < batch; n++)
            for (int64_t c = 0; c < C; c++) {
                int64_t lo = c - p.before < 0 ? 0 : c - p.before,
                        hi = c + p.after > C - 1 ? C - 1 : c + p.after;
                for (int64_t i = 0; i < area; i++)
                    acc[i] = 0.0f;
                for (int64_t cc = lo; cc <= hi; cc++) {
                    const float *xc = x + (n * C + cc) * area;
                    for (int64_t i = 0; i < area; i++)
                        acc[i] += xc[i] * xc[i];
                }
                lrn_scale(x + (n * C + c) * area, acc, y + (n * C + c) * area, area, &p);
            }
        return PC_OK;
    }
    for (int64_t r = 0; r < batch * area; r++) {
        const float *xr = x + r * C;
        for (int64_t c = 0; c < C; c++)
            acc[c] = 0.0f;
        /* offset by offset: acc[c] += x[c + dc]^2 over the channels where c + dc is inside */
        int64_t dc_lo = p.before < C ? -p.before : -C, dc_hi = p.after < C ? p.after : C;
        for (int64_t dc = dc_lo; dc <= dc_hi; dc++) {
            int64_t c0 = dc < 0 ? -dc : 0, c1 = dc > 0 ? C - dc : C;
            for (int64_t c = c0; c < c1; c++)
                acc[c] += xr[c + dc] * xr[c + dc];
        }
        lrn_scale(xr, acc, y + r * C, C, &p);
    }
    return PC_OK;
}

/* ---- Softmax, LogSoftmax
 * ------------------------------------------------------------------------------------- */

/* Before opset 13 the input is coerced to 2-D at `axis` (default 1) and each row of prod(dims[axis:])
 * elements is normalized; from 13 on only `axis` (default -1) is: rows of n elements `inner` apart. The max
 * is subtracted first; a max of +-inf is replaced by 0 (numpy's answer: NaN for inf / inf, -inf rows NaN). */
typedef struct smax_split {
    int64_t outer, n, inner;
} smax_split;

static pc_status smax_split_read(pc_rt_kernel_ctx *k, smax_split *s)
{
    const pc_rt_tensor *x = k->in[0];
    bool legacy = k->opset < 13;
    int32_t axis = 0;
    pc_status st = read_axis(k, legacy ? 1 : -1, x->rank, &axis);
    if (st != PC_OK) return st;
    s->outer = count_dims(axis, x->dims);
    s->n = x->dims[axis];
    s->inner = count_dims(x->rank - axis - 1, x->dims + axis + 1);
    if (legacy) {
        s->n *= s->inner;
        s->inner = 1;
    }
    return PC_OK;
}

typedef struct smax_layout {
    size_t max, factor, sum, total;
} smax_layout;

static bool smax_layout_compute(const smax_split *s, smax_layout *l)
{
    l->total = 0;
    if (s->inner == 1) return true; /* contiguous rows need nothing */
    return scratch_take(&l->total, (uint64_t)s->inner, sizeof(float), &l->max) &&
           scratch_take(&l->total, (uint64_t)s->inner, sizeof(float), &l->factor) &&
           scratch_take(&l->total, (uint64_t)s->inner, sizeof(double), &l->sum);
}

static pc_status smax_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = require_x(k, 1);
    if (st != PC_OK) return st;
    smax_split s;
    smax_layout l;
    if ((st = smax_split_read(k, &s)) != PC_OK ||
        (st = pc_rt_require_out_dims(k, k->in[0]->rank, k->in[0]->dims)) != PC_OK)
        return st;
    if (!smax_layout_compute(&s, &l)) return scratch_overflow(k);
    *scratch_bytes = l.total;
    return PC_OK;
}

PC_RT_WIDE static void smax_row(const float *restrict x, float *restrict y, int64_t n, bool log_form)
{
    float m = max_row(x, n);
    if (m != m) {
        for (int64_t i = 0; i < n; i++)
            y[i] = m;
        return;
    }
    if (isinf(m)) m = 0.0f;
    for (int64_t i = 0; i < n; i++)
        y[i] = pc_rt_expf(x[i] - m);
    double sum = sum_f64(y, n);
    if (log_form) {
        float ls = (float)log(sum);
        for (int64_t i = 0; i < n; i++)
            y[i] = (x[i] - m) - ls;
    } else {
        float inv = (float)(1.0 / sum);
        for (int64_t i = 0; i < n; i++)
            y[i] *= inv;
    }
}

typedef struct smax_task {
    const float *x;
    float *y;
    int64_t n;
    bool log_form;
} smax_task;

static void smax_rows(void *arg, int64_t lo, int64_t hi, int part)
{
    (void)part;
    const smax_task *t = arg;
    for (int64_t o = lo; o < hi; o++)
        smax_row(t->x + o * t->n, t->y + o * t->n, t->n, t->log_form);
}

static pc_status smax_run_kind(pc_rt_kernel_ctx *k, bool log_form)
{
    smax_split s;
    pc_status st = smax_split_read(k, &s);
    if (st != PC_OK) return st;
    const float *x = k->in[0]->data;
    float *y = k->out[0]->data;
    if (s.inner == 1) { /* rows on the session's threads, a chunk from ~16K elements */
        smax_task t = {x, y, s.n, log_form};
        pc_rt_parallel_for(k, s.outer, s.n > 0 ? 16384 / s.n + 1 : 1, smax_rows, &t);
        return PC_OK;
    }
    /* strided: the n rows of `inner` columns are swept whole, each column keeping its own max and sum */
    smax_layout l;
    if (!smax_layout_compute(&s, &l)) return scratch_overflow(k);
    char *base = scratch_get(k, l.total);
    if (!base && l.total) return k->err->status;
    float *mx = (float *)(void *)(base + l.max), *f = (float *)(void *)(base + l.factor);
    double *sum = (double *)(void *)(base + l.sum);
    const int64_t inner = s.inner;
    for (int64_t o = 0; o < s.outer; o++) {
        const float *xb = x + o * s.n * inner;
        float *yb = y + o * s.n * inner;
        for (int64_t j = 0; j < inner; j++) {
            mx[j] = -INFINITY;
            sum[j] = 0.0;
        }
        for (int64_t r = 0; r < s.n; r++)
            max_into(mx, xb + r * inner, inner, 1);
        for (int64_t j = 0; j < inner; j++)
            if (isinf(mx[j])) mx[j] = 0.0f;
        for (int64_t r = 0; r < s.n; r++) {
            const float *xr = xb + r * inner;
            float *yr = yb + r * inner;
            for (int64_t j = 0; j < inner; j++) {
                float e = pc_rt_expf(xr[j] - mx[j]);
                yr[j] = e;
                sum[j] += (double)e;
            }
        }
        for (int64_t j = 0; j < inner; j++)
            f[j] = log_form ? (float)log(sum[j]) : (float)(1.0 / sum[j]);
        for (int64_t r = 0; r < s.n; r++) {
            const float *xr = xb + r * inner;
            float *yr = yb + r * inner;
            if (log_form)
                for (int64_t j = 0; j < inner; j++)
                    yr[j] = (xr[j] - mx[j]) - f[j];
            else
                for (int64_t j = 0; j < inner; j++)
                    yr[j] *= f[j];
        }
    }
    return PC_OK;
}

static pc_status softmax_run(pc_rt_kernel_ctx *k)
{
    return smax_run_kind(k, false);
}

static pc_status logsoftmax_run(pc_rt_kernel_ctx *k)
{
    return smax_run_kind(k, true);
}

/* Element i of a float or double tensor. */
static void store_f(pc_rt_tensor *t, int64_t i, double v)
{
    if (t->dtype == PC_DTYPE_DOUBLE)
        ((double *)t->data)[i] = v;
    else
        ((float *)t->data)[i] = (float)v;
}

static double load_f(const pc_rt_tensor *t, int64_t i)
{
    return t->dtype == PC_DTYPE_DOUBLE ? ((const double *)t->data)[i] : (double)((const float *)t->data)[i];
}

/* ---- LayerNormalization
 * -------------------------------------------------------------------------------------- */

/* Normalizes over axes [axis, rank): Y = (X - mean) / sqrt(var + epsilon) * Scale + B, statistics per leading
 * index in double. Scale and B broadcast (unidirectionally, right-aligned) over the normalized shape; when
 * they have fewer elements they are expanded into scratch once per run. */
typedef struct lnorm_geom {
    int32_t axis;
    int64_t outer, inner;
    bool expand_scale, expand_bias;
} lnorm_geom;

static const pc_rt_tensor *lnorm_bias(const pc_rt_kernel_ctx *k)
{
    return k->n_in > 2 ? k->in[2] : NULL;
}

static pc_status lnorm_param_check(pc_rt_kernel_ctx *k, uint32_t i, const char *name, int32_t axis,
                                   bool *expand)
{
    pc_status st = require_float_input(k, i, name);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *p = k->in[i];
    int32_t ns = x->rank - axis;
    bool ok = p->rank <= ns;
    for (int32_t d = 0; ok && d < p->rank; d++) {
        int64_t pd = p->dims[d], nd = x->dims[x->rank - p->rank + d];
        ok = pd == nd || pd == 1;
    }
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "input %u (%s) of rank %d does not broadcast to the %d normalized axes", i, name,
                            (int)p->rank, (int)ns);
    *expand = p->n != (uint64_t)count_dims(ns, x->dims + axis);
    return PC_OK;
}

static pc_status lnorm_geom_read(pc_rt_kernel_ctx *k, lnorm_geom *g)
{
    pc_status st = require_x(k, 1);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    if ((st = read_axis(k, -1, x->rank, &g->axis)) != PC_OK) return st;
    g->outer = count_dims(g->axis, x->dims);
    g->inner = count_dims(x->rank - g->axis, x->dims + g->axis);
    g->expand_bias = false;
    if ((st = lnorm_param_check(k, 1, "Scale", g->axis, &g->expand_scale)) != PC_OK) return st;
    if (lnorm_bias(k) && (st = lnorm_param_check(k, 2, "B", g->axis, &g->expand_bias)) != PC_OK) return st;
    return PC_OK;
}

typedef struct lnorm_layout {
    size_t scale, bias, total;
} lnorm_layout;

static bool lnorm_layout_compute(const lnorm_geom *g, lnorm_layout *l)
{
    l->total = 0;
    l->scale = l->bias = 0;
    return (!g->expand_scale || scratch_take(&l->total, (uint64_t)g->inner, sizeof(float), &l->scale)) &&
           (!g->expand_bias || scratch_take(&l->total, (uint64_t)g->inner, sizeof(float), &l->bias));
}

static pc_status lnorm_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    lnorm_geom g;
    pc_status st = lnorm_geom_read(k, &g);
    if (st != PC_OK) return st;
    if ((st = pc_rt_require_out_dims(k, k->in[0]->rank, k->in[0]->dims)) != PC_OK) return st;
    int64_t stash;
    float eps;
    if ((st = pc_rt_read_int(k, "stash_type", 1, &stash)) != PC_OK ||
        (st = pc_rt_read_float(k, "epsilon", 1e-5f, &eps)) != PC_OK)
        return st;
    /* the statistics are computed in double whatever stash_type asks for: at least as precise */
    if (stash != PC_DTYPE_FLOAT && stash != PC_DTYPE_DOUBLE && stash != PC_DTYPE_FLOAT16 &&
        stash != PC_DTYPE_BFLOAT16)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "attribute 'stash_type' %lld is not a floating-point type", (long long)stash);
    /* Mean and InvStdDev: stash_type elements, one per leading index (dims [axis, rank) are 1) */
    for (uint32_t i = 1; i < 3; i++) {
        if (!output_wanted(k, i)) continue;
        const pc_rt_tensor *o = k->out[i];
        if (!o || (o->dtype != PC_DTYPE_FLOAT && o->dtype != PC_DTYPE_DOUBLE))
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                "output %u (%s) of type %s: only float and double run", i,
                                i == 1 ? "Mean" : "InvStdDev", o ? pc_dtype_name(o->dtype) : "none");
        if (o->n != (uint64_t)g.outer)
            return pc_error_set(k->err, PC_ERR_SHAPE, "output %u holds %llu elements; %lld statistics", i,
                                (unsigned long long)o->n, (long long)g.outer);
    }
    lnorm_layout l;
    if (!lnorm_layout_compute(&g, &l)) return scratch_overflow(k);
    *scratch_bytes = l.total;
    return PC_OK;
}

/* p broadcast over the normalized dims (rank ns, dims) into dst. */
static void lnorm_expand(const pc_rt_tensor *p, int32_t ns, const int64_t *dims, float *dst)
{
    pc_rt_tensor shape = {.dtype = PC_DTYPE_FLOAT, .rank = ns};
    memcpy(shape.dims, dims, (size_t)ns * sizeof *dims);
    int64_t strides[PC_MAX_RANK], counter[PC_MAX_RANK] = {0};
    pc_rt_broadcast_strides(p, &shape, strides);
    const float *src = p->data;
    int64_t total = count_dims(ns, dims), at = 0;
    for (int64_t i = 0; i < total; i++) {
        dst[i] = src[at];
        for (int32_t d = ns - 1; d >= 0; d--) {
            at += strides[d];
            if (++counter[d] < dims[d]) break;
            at -= strides[d] * dims[d];
            counter[d] = 0;
        }
    }
}

typedef struct lnorm_task {
    const float *x;
    float *y;
    const float *scale, *bias;
    pc_rt_tensor *mo, *io; /* Mean and InvStdDev when wanted */
    double eps;
    int64_t inner;
} lnorm_task;

static void lnorm_rows(void *arg, int64_t lo, int64_t hi, int part)
{
    (void)part;
    const lnorm_task *t = arg;
    const int64_t inner = t->inner;
    const float *scale = t->scale, *bias = t->bias;
    for (int64_t o = lo; o < hi; o++) {
        const float *xr = t->x + o * inner;
        float *yr = t->y + o * inner;
        double mean = sum_f64(xr, inner) / (double)inner;
        double var = sum_sq_dev_f64(xr, inner, mean) / (double)inner, inv_d = 1.0 / sqrt(var + t->eps);
        float inv = (float)inv_d, mh = (float)mean, ml = (float)(mean - (double)mh);
        if (t->mo) store_f(t->mo, o, mean);
        if (t->io) store_f(t->io, o, inv_d);
        if (bias)
            for (int64_t i = 0; i < inner; i++)
                yr[i] = ((xr[i] - mh) - ml) * inv * scale[i] + bias[i];
        else
            for (int64_t i = 0; i < inner; i++)
                yr[i] = ((xr[i] - mh) - ml) * inv * scale[i];
    }
}

static pc_status lnorm_run(pc_rt_kernel_ctx *k)
{
    lnorm_geom g;
    pc_status st = lnorm_geom_read(k, &g);
    if (st != PC_OK) return st;
    lnorm_layout l;
    if (!lnorm_layout_compute(&g, &l)) return scratch_overflow(k);
    const pc_rt_tensor *x = k->in[0], *bt = lnorm_bias(k);
    char *base = scratch_get(k, l.total);
    if (!base && l.total) return k->err->status;
    int32_t ns = x->rank - g.axis;
    const float *scale = k->in[1]->data, *bias = bt ? bt->data : NULL;
    if (g.expand_scale) {
        float *s = (float *)(void *)(base + l.scale);
        lnorm_expand(k->in[1], ns, x->dims + g.axis, s);
        scale = s;
    }
    if (g.expand_bias) {
        float *b = (float *)(void *)(base + l.bias);
        lnorm_expand(bt, ns, x->dims + g.axis, b);
        bias = b;
    }
    lnorm_task t = {x->data,
                    k->out[0]->data,
                    scale,
                    bias,
                    output_wanted(k, 1) ? k->out[1] : NULL,
                    output_wanted(k, 2) ? k->out[2] : NULL,
                    (double)pc_node_attr_float(k->node, "epsilon", 1e-5f),
                    g.inner};
    /* rows on the session's threads, a chunk from ~16K elements; each row is one thread's, in its order */
    pc_rt_parallel_for(k, g.outer, g.inner > 0 ? 16384 / g.inner + 1 : 1, lnorm_rows, &t);
    return PC_OK;
}

/* ---- Hardmax
 * ------------------------------------------------------------------------------------------------ */

/* 1 at the first maximum of each row (NaN above everything: numpy's argmax), 0 elsewhere; rows as Softmax's
 * (coerced to 2-D before opset 13). float32 and double. */
static pc_status require_float_or_double(pc_rt_kernel_ctx *k)
{
    if (k->n_in < 1 || !k->in[0]) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is missing");
    if (k->n_out < 1 || !k->out[0]) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is missing");
    pc_dtype t = k->in[0]->dtype;
    if (t != PC_DTYPE_FLOAT && t != PC_DTYPE_DOUBLE)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "input 0 is %s; float32 and double run",
                            pc_dtype_name(t));
    if (k->out[0]->dtype != t)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "output 0 is %s, input 0 %s",
                            pc_dtype_name(k->out[0]->dtype), pc_dtype_name(t));
    return PC_OK;
}

static pc_status hardmax_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pc_status st = require_float_or_double(k);
    if (st != PC_OK) return st;
    if (k->in[0]->rank < 1) return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must have rank >= 1");
    smax_split s;
    if ((st = smax_split_read(k, &s)) != PC_OK) return st;
    *scratch_bytes = 0;
    return pc_rt_require_out_dims(k, k->in[0]->rank, k->in[0]->dims);
}

static pc_status hardmax_run(pc_rt_kernel_ctx *k)
{
    smax_split s;
    pc_status st = smax_split_read(k, &s);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *y = k->out[0];
    if (y->n == 0) return PC_OK;
    memset(y->data, 0, (size_t)y->n * (pc_dtype_bits(y->dtype) / 8)); /* 0.0 is all zero bits */
    for (int64_t o = 0; o < s.outer; o++)
        for (int64_t j = 0; j < s.inner; j++) {
            int64_t base = o * s.n * s.inner + j, best = 0;
            for (int64_t r = 1; r < s.n; r++)
                if (elem_above(x->data, x->dtype, base + r * s.inner, base + best * s.inner)) best = r;
            store_f(y, base + best * s.inner, 1.0);
        }
    return PC_OK;
}

/* ---- Dropout
 * ------------------------------------------------------------------------------------------------- */

/* Inference: Y = X and the mask all true (bool from opset 10, X's type before). Training (is_test = 0 before
 * opset 7; input 2 'training_mode' true from 12) draws random numbers unless the ratio is 0: refused. Inputs
 * that are not constants are checked again in run. The floating types X can have come here; this row is
 * found before movement.c's copy-only one. */
static bool dropout_known(const pc_rt_tensor *t)
{
    return t->data != NULL || t->n == 0;
}

static double scalar_f(const pc_rt_tensor *t)
{
    uint16_t h;
    switch (t->dtype) {
    case PC_DTYPE_FLOAT:
    case PC_DTYPE_DOUBLE:
        return load_f(t, 0);
    case PC_DTYPE_FLOAT16:
        memcpy(&h, t->data, 2);
        return pc_half_to_double(h);
    case PC_DTYPE_BFLOAT16:
        memcpy(&h, t->data, 2);
        return pc_bfloat16_to_double(h);
    default:
        return NAN;
    }
}

static pc_status dropout_check(pc_rt_kernel_ctx *k)
{
    if (k->opset < 7) {
        float ratio = pc_node_attr_float(k->node, "ratio", 0.5f);
        if (pc_node_attr_int(k->node, "is_test", 0) == 0 && ratio != 0.0f)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "training-mode Dropout (is_test = 0, ratio %g)",
                                (double)ratio);
        return PC_OK;
    }
    const pc_rt_tensor *r = k->n_in > 1 ? k->in[1] : NULL, *t = k->n_in > 2 ? k->in[2] : NULL;
    if (k->opset < 12 || !t || !dropout_known(t)) return PC_OK;
    if (t->dtype != PC_DTYPE_BOOL || t->n != 1)
        return pc_error_set(k->err, PC_ERR_TYPE, "input 2 'training_mode' must be one bool");
    if (!((const uint8_t *)t->data)[0]) return PC_OK;
    double ratio = 0.5;
    if (r) {
        if (!dropout_known(r)) return PC_OK;
        if (r->n != 1) return pc_error_set(k->err, PC_ERR_SHAPE, "input 1 'ratio' must hold one value");
        ratio = scalar_f(r);
    }
    if (ratio != 0.0)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "training-mode Dropout (training_mode true, ratio %g)", ratio);
    return PC_OK;
}

static pc_status dropout_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    if (k->n_in < 1 || !k->in[0]) return pc_error_set(k->err, PC_ERR_ARITY, "input 0 is missing");
    if (k->n_out < 1 || !k->out[0]) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is missing");
    const pc_rt_tensor *x = k->in[0];
    if (k->out[0]->dtype != x->dtype)
        return pc_error_set(k->err, PC_ERR_TYPE, "output 0 is %s, input 0 %s",
                            pc_dtype_name(k->out[0]->dtype), pc_dtype_name(x->dtype));
    pc_status st = pc_rt_require_out_dims(k, x->rank, x->dims);
    if (st != PC_OK) return st;
    if (output_wanted(k, 1)) {
        const pc_rt_tensor *m = k->out[1];
        pc_dtype want = k->opset >= 10 ? PC_DTYPE_BOOL : x->dtype;
        if (!m || m->dtype != want || m->n != x->n)
            return pc_error_set(k->err, PC_ERR_SHAPE, "output 1 (mask) must be %s shaped as input 0",
                                pc_dtype_name(want));
    }
    return dropout_check(k);
}

static pc_status dropout_run(pc_rt_kernel_ctx *k)
{
    pc_status st = dropout_check(k);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0];
    const size_t es = pc_dtype_bits(x->dtype) / 8;
    if (x->n && k->out[0]->data != x->data) memcpy(k->out[0]->data, x->data, (size_t)x->n * es);
    if (!output_wanted(k, 1) || x->n == 0) return PC_OK;
    pc_rt_tensor *m = k->out[1];
    uint8_t one[8] = {1};
    switch (m->dtype) { /* the element 1 in the mask's type */
    case PC_DTYPE_FLOAT: {
        float f = 1.0f;
        memcpy(one, &f, sizeof f);
        break;
    }
    case PC_DTYPE_DOUBLE: {
        double d = 1.0;
        memcpy(one, &d, sizeof d);
        break;
    }
    case PC_DTYPE_FLOAT16:
        one[0] = 0x00, one[1] = 0x3c;
        break;
    case PC_DTYPE_BFLOAT16:
        one[0] = 0x80, one[1] = 0x3f;
        break;
    default: /* bool */
        break;
    }
    const size_t ms = pc_dtype_bits(m->dtype) / 8;
    uint8_t *md = m->data;
    if (ms == 1) {
        memset(md, one[0], (size_t)m->n);
        return PC_OK;
    }
    for (uint64_t i = 0; i < m->n; i++)
        memcpy(md + i * ms, one, ms);
    return PC_OK;
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
 * ------------------------------------------------------ */

/* Input (N, C, d1..dk) float32 or double, target (N, d1..dk) int32/int64, optional weight (C). With
 * D = prod(d1..dk) and lp the input (NLL) or its log_softmax over C (SCE):
 *   loss[n, d] = -lp[n, t, d] * w[t], 0 where t == ignore_index;
 * reduction none gives that (target's shape), sum its sum, mean its sum over the sum of the weights applied
 * (NaN when every target is ignored, as numpy's 0 / 0). Sums and the log_softmax are in double. A target
 * outside [0, C) that is not ignore_index is an error at run time (PC_ERR_VALUE). */
enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_geom {
    int64_t N, C, D;
    int reduction;
    bool has_ii;
    int64_t ii;
} loss_geom;

static pc_status loss_read(pc_rt_kernel_ctx *k, bool sce, loss_geom *g)
{
    pc_status st = require_float_or_double(k);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *t = k->n_in > 1 ? k->in[1] : NULL, *w = k->n_in > 2 ? k->in[2] : NULL;
    if (x->rank < 2)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 must be N x C x ... (rank >= 2), got rank %d",
                            (int)x->rank);
    if (!t) return pc_error_set(k->err, PC_ERR_ARITY, "input 1 (target) is missing");
    if (t->dtype != PC_DTYPE_INT32 && t->dtype != PC_DTYPE_INT64)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "input 1 (target) is %s; int32 and int64 run",
                            pc_dtype_name(t->dtype));
    bool ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int32_t d = 1; ok && d < t->rank; d++)
        ok = t->dims[d] == x->dims[d + 1];
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 1 (target) is not input 0's shape without dim 1");
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->D = count_dims(x->rank - 2, x->dims + 2);
    if (w && (w->dtype != x->dtype || w->rank != 1 || w->dims[0] != g->C))
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 2 (weight) must be a %s vector of C = %lld elements",
                            pc_dtype_name(x->dtype), (long long)g->C);
    const pc_attr *ra = pc_node_attr(k->node, "reduction");
    if (ra && ra->type != PC_ATTR_STRING)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'reduction' must be a string");
    const char *red = pc_node_attr_string(k->node, "reduction", "mean");
    if (strcmp(red, "none") == 0)
        g->reduction = RED_NONE;
    else if (strcmp(red, "sum") == 0)
        g->reduction = RED_SUM;
    else if (strcmp(red, "mean") == 0)
        g->reduction = RED_MEAN;
    else
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'reduction' has unknown value '%s'", red);
    g->has_ii = pc_node_attr(k->node, "ignore_index") != NULL;
    if ((st = pc_rt_read_int(k, "ignore_index", 0, &g->ii)) != PC_OK) return st;
    if (g->reduction == RED_NONE)
        st = pc_rt_require_out_dims(k, t->rank, t->dims);
    else
        st = pc_rt_require_out_dims(k, 0, NULL);
    if (st != PC_OK) return st;
    if (sce && output_wanted(k, 1)) {
        const pc_rt_tensor *lp = k->out[1];
        bool same = lp && lp->dtype == x->dtype && lp->rank == x->rank;
        for (int32_t d = 0; same && d < x->rank; d++)
            same = lp->dims[d] == x->dims[d];
        if (!same)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "output 1 (log_prob) must be shaped and typed as input 0");
    }
    return PC_OK;
}

static pc_status loss_prepare_kind(pc_rt_kernel_ctx *k, size_t *scratch_bytes, bool sce)
{
    loss_geom g;
    pc_status st = loss_read(k, sce, &g);
    if (st != PC_OK) return st;
    *scratch_bytes = 0;
    size_t off;
    if (sce && !scratch_take(scratch_bytes, (uint64_t)g.D, 2 * sizeof(double), &off))
        return scratch_overflow(k);
    return PC_OK;
}

static pc_status nll_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    return loss_prepare_kind(k, scratch_bytes, false);
}

static pc_status sce_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    return loss_prepare_kind(k, scratch_bytes, true);
}

/* SCE, one batch index: lse[d] = m + log(sum_c exp(x[c, d] - m)), m the column's max (NaN if any is NaN; an
 * infinite max is replaced by 0, numpy's answer for the unshifted formula). Columns are swept row by row
 * (contiguous), each keeping its own max and sum. */
static void sce_lse(const pc_rt_tensor *x, int64_t n, const loss_geom *g, double *m, double *lse)
{
    const int64_t C = g->C, D = g->D;
    for (int64_t d = 0; d < D; d++) {
        m[d] = -INFINITY;
        lse[d] = 0.0;
    }
    for (int64_t c = 0; c < C; c++) {
        int64_t row = (n * C + c) * D;
        for (int64_t d = 0; d < D; d++) {
            double v = load_f(x, row + d);
            if (v > m[d] || v != v) m[d] = v;
        }
    }
    for (int64_t d = 0; d < D; d++)
        if (isinf(m[d])) m[d] = 0.0;
    for (int64_t c = 0; c < C; c++) {
        int64_t row = (n * C + c) * D;
        for (int64_t d = 0; d < D; d++)
            lse[d] += exp(load_f(x, row + d) - m[d]);
    }
    for (int64_t d = 0; d < D; d++)
        lse[d] = m[d] + log(lse[d]);
}

static pc_status loss_run_kind(pc_rt_kernel_ctx *k, bool sce)
{
    loss_geom g;
    pc_status st = loss_read(k, sce, &g);
    if (st != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *t = k->in[1], *w = k->n_in > 2 ? k->in[2] : NULL;
    pc_rt_tensor *y = k->out[0], *lpo = sce && output_wanted(k, 1) ? k->out[1] : NULL;
    double *m = NULL, *lse = NULL;
    if (sce) {
        size_t need = 0, off;
        if (!scratch_take(&need, (uint64_t)g.D, 2 * sizeof(double), &off)) return scratch_overflow(k);
        m = scratch_get(k, need);
        if (!m && need) return k->err->status;
        lse = m + g.D;
    }
    const int32_t *t32 = t->dtype == PC_DTYPE_INT32 ? t->data : NULL;
    const int64_t *t64 = t->dtype == PC_DTYPE_INT64 ? t->data : NULL;
    double sum = 0.0, wsum = 0.0;
    for (int64_t n = 0; n < g.N; n++) {
        if (sce && g.D > 0) {
            sce_lse(x, n, &g, m, lse);
            if (lpo)
                for (int64_t c = 0; c < g.C; c++) {
                    int64_t row = (n * g.C + c) * g.D;
                    for (int64_t d = 0; d < g.D; d++)
                        store_f(lpo, row + d, load_f(x, row + d) - lse[d]);
                }
        }
        for (int64_t d = 0; d < g.D; d++) {
            int64_t ti = n * g.D + d, c = t32 ? t32[ti] : t64[ti];
            double l = 0.0, wt = 0.0;
            if (!(g.has_ii && c == g.ii)) {
                if (c < 0 || c >= g.C)
                    return pc_error_set(k->err, PC_ERR_VALUE,
                                        "target %lld at index %lld is outside [0, %lld)", (long long)c,
                                        (long long)ti, (long long)g.C);
                wt = w ? load_f(w, c) : 1.0;
                double lp = load_f(x, (n * g.C + c) * g.D + d);
                if (sce) lp -= lse[d];
                l = -lp * wt;
            }
            if (g.reduction == RED_NONE) store_f(y, ti, l);
            sum += l;
            wsum += wt;
        }
    }
    if (g.reduction == RED_SUM) store_f(y, 0, sum);
    if (g.reduction == RED_MEAN) store_f(y, 0, sum / wsum);
    return PC_OK;
}

static pc_status nll_run(pc_rt_kernel_ctx *k)
{
    return loss_run_kind(k, false);
}

static pc_status sce_run(pc_rt_kernel_ctx *k)
{
    return loss_run_kind(k, true);
}

/* ---- the table
 * ----------------------------------------------------------------------------------------------- */

const pc_rt_kernel pc_rt_kernels_nn[] = {
    {"", "MaxPool", 1, 21, MAXPOOL_DIRECT_TYPES, maxpool_prepare, maxpool_run, 0},
    {PC_NHWC_DOMAIN, "MaxPool", 1, 21, MAXPOOL_DIRECT_TYPES, maxpool_prepare, maxpool_run, 0},
    {"", "AveragePool", 1, 21, RT_F32, avgpool_prepare, avgpool_run, 0},
    {PC_NHWC_DOMAIN, "AveragePool", 1, 21, RT_F32, avgpool_prepare, avgpool_run, 0},
    {"", "GlobalAveragePool", 1, 21, RT_F32, gap_prepare, gap_run, 0},
    {PC_NHWC_DOMAIN, "GlobalAveragePool", 1, 21, RT_F32, gap_prepare, gap_run, 0},
    {"", "GlobalMaxPool", 1, 21, RT_F32, gmp_prepare, gmp_run, 0},
    {PC_NHWC_DOMAIN, "GlobalMaxPool", 1, 21, RT_F32, gmp_prepare, gmp_run, 0},
    {"", "BatchNormalization", 1, 21, RT_F32, batchnorm_prepare, batchnorm_run, 0},
    {PC_NHWC_DOMAIN, "BatchNormalization", 1, 21, RT_F32, batchnorm_prepare, batchnorm_run, 0},
    {"", "InstanceNormalization", 1, 21, RT_F32, instnorm_prepare, instnorm_run, 0},
    {PC_NHWC_DOMAIN, "InstanceNormalization", 1, 21, RT_F32, instnorm_prepare, instnorm_run, 0},
    {"", "LRN", 1, 21, RT_F32, lrn_prepare, lrn_run, 0},
    {PC_NHWC_DOMAIN, "LRN", 1, 21, RT_F32, lrn_prepare, lrn_run, 0},
    {"", "Softmax", 1, 21, RT_F32, smax_prepare, softmax_run, 0},
    {"", "LogSoftmax", 1, 21, RT_F32, smax_prepare, logsoftmax_run, 0},
    {"", "LayerNormalization", 17, 21, RT_F32, lnorm_prepare, lnorm_run, 0},
    {"", "Hardmax", 1, 21, RT_F32 | RT_F64, hardmax_prepare, hardmax_run, 0},
    {"", "Dropout", 1, 21, RT_F32 | RT_F64 | RT_F16 | RT_BF16, dropout_prepare, dropout_run, 0},
    {"", "NegativeLogLikelihoodLoss", 12, 21, RT_F32 | RT_F64, nll_prepare, nll_run, 0},
    {"", "SoftmaxCrossEntropyLoss", 12, 21, RT_F32 | RT_F64, sce_prepare, sce_run, 0},
};
const size_t pc_rt_n_kernels_nn = sizeof pc_rt_kernels_nn / sizeof pc_rt_kernels_nn[0];
