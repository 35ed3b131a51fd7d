/* The blocked EP's kernels (com.passcheck.blocked, opset 1; docs/ep.md, "The blocked EP's ops"): the
 * reorders ToBlocked and FromBlocked, and the primitives Conv (group 1, optional bias, optional fused
 * BatchNormalization on inputs 3..6, optional Relu), BatchNormalization (optional Relu), MaxPool,
 * AveragePool, GlobalMaxPool, GlobalAveragePool and LRN, float32 only. Activations are nChw<b>c, (N, Cb, H,
 * W, b): element (n, cb, h, w, i) is channel cb * b + i of the plain tensor, the lanes past C zero. Each
 * primitive is the standard op on the zero-padded plain tensor (N, Cb * b, H, W), its standard attributes
 * read at the model's ai.onnx opset (as the reference runs it); each keeps the padded lanes of its output at
 * 0 when its inputs' are (and, for Conv, the weight's, bias's and BatchNormalization's padding is as
 * docs/ep.md says).
 *
 * Conv, per image, strip by strip of output pixels: im2col straight from the blocked input into a strip of
 * rows, one per output pixel, of K = Cb * kH * kW * b columns ordered (ci, ky, kx, i), which is the order of
 * the weight's rows for a fixed output block mo (the weight (Mb, Cb, kH, kW, b_i, b_o) is Mb matrices of
 * K x b, row-major). With enough pixels the weight is repacked once per run into one K x Mb b matrix and a
 * strip takes one sgemm over all its output blocks, the tile's columns then copied into each block's slab
 * with the bias; otherwise each output block is one sgemm, strip (pixels x K) times W[mo] (K x b), whose
 * result (pixels x b, row-major) is exactly the rows of the output's (n, mo) slab, started as the bias (beta
 * = 1). The fused BatchNormalization and the Relu run on the slab rows while still in cache. A 1x1 kernel at
 * stride 1 without padding over a single input block reads the input in place. Threads take (image, strip,
 * output blocks) items: whole strips, and when there are fewer strips than threads, ranges of output blocks
 * too (a packed product split by columns may round otherwise: then the bits depend on the thread count).
 *
 * Exactness against the reference: the reorders and the max pools copy elements (the first NaN of a window
 * wins, as the reference's argmax); the average pools sum in double in the reference's tap order and divide
 * once; BatchNormalization and Conv's fused one compute the reference's double expression scale * (x - mean)
 * / sqrt(var + epsilon) + B; LRN sums the squares in double in channel order and calls pow as the reference
 * does: all of those give the reference's bits. Conv's sum differs from the reference's double sum by
 * sgemm's float rounding only. The pools, global pools, BatchNormalization and the reorders split over
 * (image, block) planes, LRN over rows of pixels. */
#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

enum { BK_BLOCK_MAX = 1024 };

/* ---- checks shared by every op
 * ------------------------------------------------------------------------------- */

static bool has_input(const pc_rt_kernel_ctx *k, uint32_t i)
{
    return i < k->n_in && k->in[i] != NULL;
}

/* Input i present, float32 and (rank >= 0) of that rank. */
static pc_status need_input(pc_rt_kernel_ctx *k, uint32_t i, const char *name, int32_t rank)
{
    if (!has_input(k, i)) return pc_error_set(k->err, PC_ERR_ARITY, "input %u (%s) is missing", i, name);
    const pc_rt_tensor *t = k->in[i];
    if (t->dtype != PC_DTYPE_FLOAT)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "input %u (%s) is %s; the blocked kernels run float32", i, name,
                            pc_dtype_name(t->dtype));
    if (rank >= 0 && t->rank != rank)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input %u (%s) has rank %d, expected %d", i, name,
                            (int)t->rank, (int)rank);
    return PC_OK;
}

static pc_status at_most_inputs(pc_rt_kernel_ctx *k, uint32_t most)
{
    if (k->n_in > most)
        return pc_error_set(k->err, PC_ERR_ARITY, "the node has %u inputs; the op takes at most %u", k->n_in,
                            most);
    return PC_OK;
}

/* Input 0, a blocked activation (N, Cb, H, W, b) with 1 <= b <= 1024. */
static pc_status need_blocked_x(pc_rt_kernel_ctx *k)
{
    pc_status st = need_input(k, 0, "X", 5);
    if (st != PC_OK) return st;
    int64_t b = k->in[0]->dims[4];
    if (b < 1 || b > BK_BLOCK_MAX)
        return pc_error_set(k->err, PC_ERR_SHAPE, "input 0 (X) has block (last dim) %lld, not in 1..%d",
                            (long long)b, BK_BLOCK_MAX);
    return PC_OK;
}

/* A per-channel vector: float32 with exactly `len` elements (the padded channel count). */
static pc_status need_vector(pc_rt_kernel_ctx *k, uint32_t i, const char *name, int64_t len)
{
    pc_status st = need_input(k, i, name, -1);
    if (st != PC_OK) return st;
    if (k->in[i]->n != (uint64_t)len)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "input %u (%s) has %llu elements, expected %lld (blocks x block)", i, name,
                            (unsigned long long)k->in[i]->n, (long long)len);
    return PC_OK;
}

/* Output 0 float32 of exactly these dims, and no other output asked for. The session sized it from shape
 * inference: a disagreement is a bug somewhere, never something to compute through. */
static pc_status need_output(pc_rt_kernel_ctx *k, int32_t rank, const int64_t *dims)
{
    if (k->n_out < 1 || !k->out[0]) return pc_error_set(k->err, PC_ERR_ARITY, "output 0 is missing");
    for (uint32_t i = 1; i < k->n_out; i++)
        if (k->out[i])
            return pc_error_set(k->err, PC_ERR_ARITY, "output %u is asked for; the op has one output", i);
    const pc_rt_tensor *y = k->out[0];
    if (y->dtype != PC_DTYPE_FLOAT)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "output 0 is %s; the blocked kernels run float32",
                            pc_dtype_name(y->dtype));
    return pc_rt_require_out_dims(k, rank, dims);
}

/* A float attribute as the reference reads it: the float (or an int) widened to double; absent, the float
 * default widened. */
static pc_status attr_real(pc_rt_kernel_ctx *k, const char *name, float fallback, double *out)
{
    const pc_attr *a = pc_node_attr(k->node, name);
    *out = (double)fallback;
    if (a && a->type == PC_ATTR_FLOAT)
        *out = (double)a->f;
    else if (a && a->type == PC_ATTR_INT)
        *out = (double)a->i;
    else if (a)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute '%s' must be a float", name);
    return PC_OK;
}

static pc_status attr_relu(pc_rt_kernel_ctx *k, bool *relu)
{
    int64_t v;
    pc_status st = pc_rt_read_int(k, "relu", 0, &v);
    if (st != PC_OK) return st;
    if (v != 0 && v != 1)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'relu' is %lld, not 0 or 1", (long long)v);
    *relu = v == 1;
    return PC_OK;
}

/* The model's ai.onnx opset: the standard op a primitive is defined by runs at it (the node's own opset
 * is the blocked domain's). */
static int64_t onnx_opset(const pc_rt_kernel_ctx *k)
{
    const pc_graph *g = k->node->graph;
    int64_t v = g && g->model ? pc_model_opset(g->model, "") : -1;
    return v > 0 ? v : k->opset;
}

/* An attribute the standard op does not define at the model's ai.onnx opset would change the meaning if
 * ignored. */
static pc_status attr_since(pc_rt_kernel_ctx *k, const char *name, int64_t since)
{
    int64_t opset = onnx_opset(k);
    if (opset < since && pc_node_attr(k->node, name))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "attribute '%s' is defined from ai.onnx opset %lld; the model imports %lld", name,
                            (long long)since, (long long)opset);
    return PC_OK;
}

/* The standard BatchNormalization the op (and Conv's fused one) is defined by, at the model's ai.onnx opset:
 * inference only (training_mode = 1 would normalize by the batch's statistics), and before opset 9 spatial
 * != 0 (per-activation parameters do not fit the per-channel vectors). */
static pc_status bn_mode_check(pc_rt_kernel_ctx *k)
{
    int64_t opset = onnx_opset(k), v;
    pc_status st;
    if (opset >= 14) {
        if ((st = pc_rt_read_int(k, "training_mode", 0, &v)) != PC_OK) return st;
        if (v != 0)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                "training_mode = %lld: the blocked BatchNormalization is inference only",
                                (long long)v);
    } else if (opset < 9) {
        if ((st = pc_rt_read_int(k, "spatial", 1, &v)) != PC_OK) return st;
        if (v == 0)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "spatial = 0 (per-activation parameters)");
    }
    return PC_OK;
}

/* Adds `count` items of `size` bytes, rounded up to 64, to *total; false on overflow. */
static bool scratch_grow(size_t *total, uint64_t count, size_t size)
{
    size_t bytes;
    return count <= SIZE_MAX && pc_size_mul((size_t)count, size, &bytes) && pc_size_add(bytes, 63, &bytes) &&
           pc_size_add(*total, bytes & ~(size_t)63, total);
}

static pc_status scratch_overflow(pc_rt_kernel_ctx *k)
{
    return pc_error_set(k->err, PC_ERR_OVERFLOW, "the scratch memory's size overflows");
}

/* The scratch prepare asked for, checked against what run lays out in it. */
static pc_status scratch_check(pc_rt_kernel_ctx *k, size_t needed)
{
    if (k->scratch_bytes < needed || (needed && !k->scratch))
        return pc_error_set(k->err, PC_ERR_INTERNAL, "scratch of %zu bytes, %zu needed", k->scratch_bytes,
                            needed);
    return PC_OK;
}

/* Work per chunk of a parallel split: about 64K elements (or window taps) are worth a thread. */
static int64_t grain_for(int64_t per_item)
{
    return per_item > 0 ? 65536 / per_item + 1 : 1;
}

static const pc_rt_act relu_act = {PC_RT_ACT_RELU, 0.0f, 0.0f};

/* MaxPool and GlobalMaxPool, against AveragePool and GlobalAveragePool (one kernel each pair). */
static bool is_max_op(const pc_rt_kernel_ctx *k)
{
    return strstr(k->node->op_type, "Max") != NULL;
}

/* ---- ToBlocked, FromBlocked
 * ---------------------------------------------------------------------------------- */

/* The transposes go through chunks of this many pixels: b lanes of a chunk stay in L1. */
enum { REORDER_CHUNK = 64 };

typedef struct reorder_task {
    const float *x;
    float *y;
    int64_t c, cb, b, hw; /* plain channels, blocks, block, pixels per plane */
    bool to_blocked;
} reorder_task;

/* One block's plane: `lanes` plain rows of hw pixels against the hw x b blocked plane, chunk by chunk;
 * ToBlocked zeroes the lanes past C. */
static void plane_to_blocked(const float *plain, float *blocked, int64_t lanes, int64_t b, int64_t hw)
{
    for (int64_t p0 = 0; p0 < hw; p0 += REORDER_CHUNK) {
        int64_t np = hw - p0 < REORDER_CHUNK ? hw - p0 : REORDER_CHUNK;
        float *bl = blocked + p0 * b;
        for (int64_t i = 0; i < lanes; i++) {
            const float *pr = plain + i * hw + p0;
            for (int64_t p = 0; p < np; p++)
                bl[p * b + i] = pr[p];
        }
        for (int64_t p = 0; p < np && lanes < b; p++)
            memset(bl + p * b + lanes, 0, (size_t)(b - lanes) * sizeof *bl);
    }
}

static void plane_from_blocked(const float *blocked, float *plain, int64_t lanes, int64_t b, int64_t hw)
{
    for (int64_t p0 = 0; p0 < hw; p0 += REORDER_CHUNK) {
        int64_t np = hw - p0 < REORDER_CHUNK ? hw - p0 : REORDER_CHUNK;
        const float *bl = blocked + p0 * b;
        for (int64_t i = 0; i < lanes; i++) {
            float *pr = plain + i * hw + p0;
            for (int64_t p = 0; p < np; p++)
                pr[p] = bl[p * b + i];
        }
    }
}

/* Planes (n, cb) [lo, hi). */
static void reorder_part(void *arg, int64_t lo, int64_t hi, int part)
{
    (void)part;
    const reorder_task *t = arg;
    const int64_t b = t->b, hw = t->hw;
    for (int64_t pl = lo; pl < hi; pl++) {
        int64_t n = pl / t->cb, c0 = pl % t->cb * b, lanes = t->c - c0 < b ? t->c - c0 : b;
        int64_t plain = (n * t->c + c0) * hw, blocked = pl * hw * b;
        if (t->to_blocked)
            plane_to_blocked(t->x + plain, t->y + blocked, lanes, b, hw);
        else
            plane_from_blocked(t->x + blocked, t->y + plain, lanes, b, hw);
    }
}

/* ToBlocked block=b: X (N, C, H, W) -> (N, ceil(C / b), H, W, b), the lanes past C zero. */
static pc_status to_blocked_read(pc_rt_kernel_ctx *k, int64_t *block)
{
    pc_status st;
    if ((st = at_most_inputs(k, 1)) != PC_OK || (st = need_input(k, 0, "X", 4)) != PC_OK) return st;
    if (!pc_node_attr(k->node, "block"))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'block' is required");
    if ((st = pc_rt_read_int(k, "block", 0, block)) != PC_OK) return st;
    if (*block < 1 || *block > BK_BLOCK_MAX)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'block' is %lld, not in 1..%d",
                            (long long)*block, BK_BLOCK_MAX);
    return PC_OK;
}

static pc_status to_blocked_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    int64_t b = 0;
    pc_status st = to_blocked_read(k, &b);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    int64_t dims[5] = {d[0], d[1] / b + (d[1] % b != 0), d[2], d[3], b};
    *scratch_bytes = 0;
    return need_output(k, 5, dims);
}

static pc_status to_blocked_run(pc_rt_kernel_ctx *k)
{
    int64_t b = 0;
    pc_status st = to_blocked_read(k, &b);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    reorder_task t = {
        k->in[0]->data, k->out[0]->data, d[1], d[1] / b + (d[1] % b != 0), b, d[2] * d[3], true};
    pc_rt_parallel_for(k, d[0] * t.cb, grain_for(t.hw * b), reorder_part, &t);
    return PC_OK;
}

/* FromBlocked channels=C: X (N, Cb, H, W, b) with (Cb - 1) * b < C <= Cb * b -> (N, C, H, W). */
static pc_status from_blocked_read(pc_rt_kernel_ctx *k, int64_t *channels)
{
    pc_status st;
    if ((st = at_most_inputs(k, 1)) != PC_OK || (st = need_blocked_x(k)) != PC_OK) return st;
    if (!pc_node_attr(k->node, "channels"))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'channels' is required");
    if ((st = pc_rt_read_int(k, "channels", 0, channels)) != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    int64_t hi = d[1] * d[4];
    if (*channels < 1 || *channels > hi || *channels <= hi - d[4])
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "attribute 'channels' = %lld does not fit %lld blocks of %lld (it must be in "
                            "%lld..%lld)",
                            (long long)*channels, (long long)d[1], (long long)d[4],
                            (long long)(hi - d[4] + 1), (long long)hi);
    return PC_OK;
}

static pc_status from_blocked_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    int64_t c = 0;
    pc_status st = from_blocked_read(k, &c);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    int64_t dims[4] = {d[0], c, d[2], d[3]};
    *scratch_bytes = 0;
    return need_output(k, 4, dims);
}

static pc_status from_blocked_run(pc_rt_kernel_ctx *k)
{
    int64_t c = 0;
    pc_status st = from_blocked_read(k, &c);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    reorder_task t = {k->in[0]->data, k->out[0]->data, c, d[1], d[4], d[2] * d[3], false};
    pc_rt_parallel_for(k, d[0] * d[1], grain_for(t.hw * t.b), reorder_part, &t);
    return PC_OK;
}

/* ---- sliding windows (Conv, MaxPool, AveragePool)
 * ------------------------------------------------------------ */

/* Input 0 (N, Cb, H, W, b); per spatial axis (0: H, 1: W) kernel, stride, dilation, padding at the start and
 * the end, and the output size. */
typedef struct win {
    int64_t n, cb, h, w, b;
    int64_t k[2], s[2], d[2], pb[2], pe[2], out[2];
} win;

/* Strides, dilations, pads (explicit or auto_pad) and, for the pools, ceil_mode and the output size, as
 * core/shape/window.c and the reference compute them. With the dilated kernel ek = (k - 1) * d + 1: NOTSET:
 * floor((in + pb + pe - ek) / s) + 1, ceil_mode one more unless that window would start in the end padding;
 * VALID: no pads; SAME_UPPER / SAME_LOWER: ceil(in / s), the total padding (out - 1) * s + ek - in split
 * evenly, the odd one at the end (UPPER) or the start (LOWER). Conv ignores pads given with auto_pad (as the
 * reference); the pools refuse them, and pads reaching the dilated kernel. */
static pc_status win_read(pc_rt_kernel_ctx *k, bool pool, const int64_t *kernel, bool ceil_mode, win *g)
{
    const int64_t *xd = k->in[0]->dims;
    g->n = xd[0], g->cb = xd[1], g->h = xd[2], g->w = xd[3], g->b = xd[4];
    int64_t pads[4] = {0, 0, 0, 0};
    pc_status st;
    for (int a = 0; a < 2; a++) {
        g->k[a] = kernel[a];
        g->s[a] = g->d[a] = 1;
    }
    if ((st = pc_rt_read_ints(k, "strides", 2, 1, false, g->s)) != PC_OK ||
        (st = pc_rt_read_ints(k, "dilations", 2, 1, false, g->d)) != PC_OK ||
        (st = pc_rt_read_ints(k, "pads", 4, 0, false, pads)) != PC_OK)
        return st;
    pc_rt_auto_pad mode;
    if ((st = pc_rt_read_auto_pad(k, &mode)) != PC_OK) return st;
    const char *ap = pc_node_attr_string(k->node, "auto_pad", "NOTSET");
    if (pool && mode != PC_RT_PAD_NOTSET && (pads[0] || pads[1] || pads[2] || pads[3]))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "attribute 'pads' cannot be used with auto_pad %s", ap);
    for (int a = 0; a < 2; a++) {
        int64_t in = a ? g->w : g->h, s = g->s[a], ek = (g->k[a] - 1) * g->d[a] + 1;
        if (mode == PC_RT_PAD_SAME_UPPER || mode == PC_RT_PAD_SAME_LOWER) {
            int64_t out = (in + s - 1) / s, total = (out - 1) * s + ek - in;
            if (total < 0 || out == 0) total = 0;
            g->out[a] = out;
            g->pb[a] = mode == PC_RT_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g->pe[a] = total - g->pb[a];
            continue;
        }
        g->pb[a] = mode == PC_RT_PAD_VALID ? 0 : pads[a];
        g->pe[a] = mode == PC_RT_PAD_VALID ? 0 : pads[a + 2];
        int64_t span = in + g->pb[a] + g->pe[a] - ek;
        if (span < 0)
            return pc_error_set(k->err, PC_ERR_SHAPE,
                                "spatial axis %d: the dilated kernel %lld exceeds the padded input %lld", a,
                                (long long)ek, (long long)(in + g->pb[a] + g->pe[a]));
        if (pool && (g->pb[a] >= ek || g->pe[a] >= ek))
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "attribute 'pads' (%lld, %lld) on spatial axis %d must be below the dilated "
                                "kernel %lld",
                                (long long)g->pb[a], (long long)g->pe[a], a, (long long)ek);
        int64_t out = span / s + 1;
        if (ceil_mode && span % s && out * s < in + g->pb[a]) out++;
        g->out[a] = out;
    }
    return PC_OK;
}

/* ---- Conv
 * ------------------------------------------------------------------------------------------------------ */

/* A strip of im2col rows is about STRIP_BYTES (it is written and then read by the sgemms while in L2) and at
 * least STRIP_MIN_PIXELS rows (a shorter product runs slowly), as conv.c's strips. From PACK_MIN_PIXELS
 * output pixels (all images) on, the weight is repacked once per run into one K x Mb b matrix and each strip
 * takes one product over all its output blocks (a 16-column product per block repacks the strip each time: 64
 * to 64 channels 3x3 at 56x56 ran at 78 GFLOP/s so, 89 packed); below, repacking the weight costs more than
 * it saves (512 to 512 channels 3x3 at 7x7: 3.9 ms packed, 3.5 ms not). */
enum { STRIP_BYTES = 256 * 1024, STRIP_MIN_PIXELS = 192, PACK_MIN_PIXELS = 128 };

typedef struct conv_plan {
    win g;
    int64_t mb;               /* output blocks */
    int64_t kdim;             /* Cb * kH * kW * b: the depth of the products */
    int64_t pix;              /* output pixels per image */
    int64_t strip, strips;    /* pixels per strip, strips per image */
    int64_t mo_chunk, chunks; /* output blocks per item, items per strip */
    bool bias, bn, relu, direct, packed;
    double eps;
    size_t col_floats;  /* im2col floats per thread (0 when direct) */
    size_t tile_floats; /* packed: the product's floats per thread (strip x mo_chunk b) */
    /* scratch: the threads' strips, their product tiles, the packed weight (K x Mb b), sqrt(var + epsilon)
     * per channel */
    size_t tile_offset, wp_offset, sd_offset, total;
} conv_plan;

static pc_status conv_plan_read(pc_rt_kernel_ctx *k, conv_plan *p)
{
    static const char *const bn_names[4] = {"scale", "B_bn", "mean", "var"};
    pc_status st;
    memset(p, 0, sizeof *p);
    if (k->n_in > 3 &&
        (k->n_in != 7 || !has_input(k, 3) || !has_input(k, 4) || !has_input(k, 5) || !has_input(k, 6)))
        return pc_error_set(k->err, PC_ERR_ARITY,
                            "the node has %u inputs: the fused BatchNormalization needs all of inputs 3..6 "
                            "(scale, B, mean, var)",
                            k->n_in);
    if ((st = need_blocked_x(k)) != PC_OK || (st = need_input(k, 1, "W", 6)) != PC_OK) return st;
    const pc_rt_tensor *x = k->in[0], *w = k->in[1];
    int64_t b = x->dims[4];
    if (w->dims[4] != b || w->dims[5] != b)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "W's last two dims (%lld, %lld) must both be X's block %lld",
                            (long long)w->dims[4], (long long)w->dims[5], (long long)b);
    if (w->dims[1] != x->dims[1])
        return pc_error_set(k->err, PC_ERR_SHAPE, "W has %lld input blocks, X %lld", (long long)w->dims[1],
                            (long long)x->dims[1]);
    if (w->dims[2] < 1 || w->dims[3] < 1)
        return pc_error_set(k->err, PC_ERR_SHAPE, "W's kernel is %lld x %lld", (long long)w->dims[2],
                            (long long)w->dims[3]);
    int64_t group, ks[2] = {w->dims[2], w->dims[3]};
    if ((st = pc_rt_read_int(k, "group", 1, &group)) != PC_OK) return st;
    if (group != 1)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "attribute 'group' is %lld; the blocked Conv takes group 1", (long long)group);
    if ((st = pc_rt_read_ints(k, "kernel_shape", 2, 1, false, ks)) != PC_OK) return st;
    if (ks[0] != w->dims[2] || ks[1] != w->dims[3])
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                            "attribute 'kernel_shape' (%lld, %lld) disagrees with W's", (long long)ks[0],
                            (long long)ks[1]);
    p->mb = w->dims[0];
    int64_t mp = p->mb * b;
    p->bias = has_input(k, 2);
    if (p->bias && (st = need_input(k, 2, "B", 1)) != PC_OK) return st;
    if (p->bias && k->in[2]->dims[0] != mp)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "input 2 (B) has %lld elements, expected %lld (blocks x block)",
                            (long long)k->in[2]->dims[0], (long long)mp);
    p->bn = k->n_in == 7;
    for (uint32_t i = 3; p->bn && i < 7; i++)
        if ((st = need_vector(k, i, bn_names[i - 3], mp)) != PC_OK) return st;
    if ((p->bn && (st = bn_mode_check(k)) != PC_OK) ||
        (st = attr_real(k, "epsilon", 1e-5f, &p->eps)) != PC_OK || (st = attr_relu(k, &p->relu)) != PC_OK ||
        (st = win_read(k, false, ks, false, &p->g)) != PC_OK)
        return st;
    const win *g = &p->g;
    int64_t dims[5] = {g->n, p->mb, g->out[0], g->out[1], b};
    if ((st = need_output(k, 5, dims)) != PC_OK) return st;

    size_t kdim;
    if (!pc_size_mul((size_t)g->cb, (size_t)(g->k[0] * g->k[1]), &kdim) ||
        !pc_size_mul(kdim, (size_t)b, &kdim) || kdim > (size_t)INT32_MAX)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "the products are deeper than 2^31 (X's blocks x kernel)");
    p->kdim = (int64_t)kdim;
    p->pix = g->out[0] * g->out[1];
    p->direct = g->k[0] == 1 && g->k[1] == 1 && g->s[0] == 1 && g->s[1] == 1 && g->pb[0] == 0 &&
                g->pb[1] == 0 && g->out[0] == g->h && g->out[1] == g->w && g->cb == 1;
    int64_t per_pixel = p->kdim * (int64_t)sizeof(float);
    p->strip = per_pixel > 0 ? STRIP_BYTES / per_pixel : p->pix;
    if (p->strip < STRIP_MIN_PIXELS) p->strip = STRIP_MIN_PIXELS;
    if (p->strip > p->pix) p->strip = p->pix;
    if (p->strip < 1) p->strip = 1;
    p->strips = (p->pix + p->strip - 1) / p->strip;
    /* fewer (image, strip) items than threads: the output blocks are split too */
    int64_t items = g->n * p->strips;
    p->chunks = 1;
    if (items > 0 && items < k->threads && p->mb > 1) {
        p->chunks = (k->threads + items - 1) / items;
        if (p->chunks > p->mb) p->chunks = p->mb;
    }
    p->mo_chunk = p->mb > 0 ? (p->mb + p->chunks - 1) / p->chunks : 1;
    p->chunks = p->mb > 0 ? (p->mb + p->mo_chunk - 1) / p->mo_chunk : 1;
    p->packed = p->mb > 1 && p->kdim > 0 && g->n * p->pix >= PACK_MIN_PIXELS;
    size_t cols, tiles, wp = 0;
    if (!p->direct && !pc_size_mul((size_t)p->strip, kdim, &p->col_floats)) return scratch_overflow(k);
    if (p->packed && (!pc_size_mul((size_t)p->strip, (size_t)(p->mo_chunk * b), &p->tile_floats) ||
                      !pc_size_mul(kdim, (size_t)mp, &wp)))
        return scratch_overflow(k);
    if (!pc_size_mul(p->col_floats, (size_t)k->threads, &cols) ||
        !scratch_grow(&p->total, cols, sizeof(float)) ||
        !pc_size_mul(p->tile_floats, (size_t)k->threads, &tiles))
        return scratch_overflow(k);
    p->tile_offset = p->total;
    if (!scratch_grow(&p->total, tiles, sizeof(float))) return scratch_overflow(k);
    p->wp_offset = p->total;
    if (!scratch_grow(&p->total, wp, sizeof(float))) return scratch_overflow(k);
    p->sd_offset = p->total;
    if (p->bn && !scratch_grow(&p->total, (uint64_t)mp, sizeof(double))) return scratch_overflow(k);
    return PC_OK;
}

static pc_status conv_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    conv_plan p;
    pc_status st = conv_plan_read(k, &p);
    if (st == PC_OK) *scratch_bytes = p.total;
    return st;
}

/* im2col of output pixels [p0, p0 + np) of one image: row q holds, for (ci, ky, kx), the b lanes of input
 * pixel (oy * sh - ph + ky * dh, ox * sw - pw + kx * dw) of block ci, or zeros where that is padding. */
static void im2col_blocked(const win *g, const float *xn, int64_t p0, int64_t np, float *col)
{
    const int64_t b = g->b, plane = g->h * g->w * b, kw = g->k[1], dw = g->d[1];
    const size_t lane_bytes = (size_t)b * sizeof(float);
    float *dst = col;
    for (int64_t q = p0; q < p0 + np; q++) {
        int64_t oy = q / g->out[1], ox = q % g->out[1];
        /* the kernel columns [lo, hi) whose input column ix0 + kx * dw lies inside the row */
        int64_t ix0 = ox * g->s[1] - g->pb[1];
        int64_t lo = ix0 >= 0 ? 0 : (-ix0 + dw - 1) / dw;
        int64_t hi = g->w - 1 - ix0 < 0 ? 0 : (g->w - 1 - ix0) / dw + 1;
        if (hi > kw) hi = kw;
        if (lo > hi) lo = hi;
        for (int64_t ci = 0; ci < g->cb; ci++) {
            const float *xc = xn + ci * plane;
            for (int64_t ky = 0; ky < g->k[0]; ky++, dst += kw * b) {
                int64_t iy = oy * g->s[0] - g->pb[0] + ky * g->d[0];
                if (iy < 0 || iy >= g->h) {
                    memset(dst, 0, (size_t)kw * lane_bytes);
                    continue;
                }
                const float *xr = xc + (iy * g->w + ix0) * b;
                if (lo > 0) memset(dst, 0, (size_t)lo * lane_bytes);
                if (dw == 1 && hi > lo)
                    memcpy(dst + lo * b, xr + lo * b, (size_t)(hi - lo) * lane_bytes);
                else
                    for (int64_t kx = lo; kx < hi; kx++)
                        memcpy(dst + kx * b, xr + kx * dw * b, lane_bytes);
                if (hi < kw) memset(dst + hi * b, 0, (size_t)(kw - hi) * lane_bytes);
            }
        }
    }
}

/* rows x b floats: y = scale * (x - mean) / sd + shift per lane, in double as the reference's
 * BatchNormalization (sd = sqrt(var + epsilon), the value it divides by); x may be y. */
PC_RT_WIDE static void bn_rows(const float *x, float *y, int64_t rows, int64_t b, const float *scale,
                               const float *shift, const float *mean, const double *sd)
{
    for (int64_t r = 0; r < rows; r++, x += b, y += b)
        for (int64_t i = 0; i < b; i++)
            y[i] = (float)((double)scale[i] * ((double)x[i] - (double)mean[i]) / sd[i] + (double)shift[i]);
}

typedef struct conv_task {
    const conv_plan *p;
    const float *x, *w, *bias, *scale, *shift, *mean;
    const double *sd;
    float *y, *col, *tile, *wp;
} conv_task;

/* The fused BatchNormalization and Relu on np finished rows of output block mo's slab. */
static void conv_post(const conv_task *t, int64_t mo, int64_t np, float *ys)
{
    const conv_plan *p = t->p;
    const int64_t b = p->g.b;
    if (p->bn) bn_rows(ys, ys, np, b, t->scale + mo * b, t->shift + mo * b, t->mean + mo * b, t->sd + mo * b);
    if (p->relu) pc_rt_act_apply(&relu_act, ys, (uint64_t)(np * b));
}

/* rows x b: y = tile row (ld floats apart) + bias (+0 without one, so a product's -0 is +0 as the reference's
 * sum, which starts at the bias or +0). */
PC_RT_WIDE static void tile_to_slab(const float *restrict tile, int64_t ld, const float *restrict bias,
                                    float *restrict y, int64_t rows, int64_t b)
{
    for (int64_t r = 0; r < rows; r++, tile += ld, y += b)
        for (int64_t o = 0; o < b; o++)
            y[o] = tile[o] + (bias ? bias[o] : 0.0f);
}

/* Packed: the strip's product with output blocks [mo_lo, mo_hi) of the packed weight in one sgemm into the
 * thread's tile, then each block's columns copied to its slab with the bias. */
static void conv_blocks_packed(const conv_task *t, const float *a, float *tile, int64_t mo_lo, int64_t mo_hi,
                               int64_t np, float *y0)
{
    const conv_plan *p = t->p;
    const int64_t b = p->g.b, nb = (mo_hi - mo_lo) * b, mp = p->mb * b;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)np, (int)nb, (int)p->kdim, 1.0f, a,
                (int)p->kdim, t->wp + mo_lo * b, (int)mp, 0.0f, tile, (int)nb);
    for (int64_t mo = mo_lo; mo < mo_hi; mo++) {
        float *ys = y0 + mo * p->pix * b;
        tile_to_slab(tile + (mo - mo_lo) * b, nb, t->bias ? t->bias + mo * b : NULL, ys, np, b);
        conv_post(t, mo, np, ys);
    }
}

/* Output block mo over the strip's np pixels: the slab rows start as the bias, take the product and then
 * the fused BatchNormalization and Relu. */
static void conv_block(const conv_task *t, const float *a, int64_t mo, int64_t np, float *ys)
{
    const conv_plan *p = t->p;
    const int64_t b = p->g.b, kd = p->kdim;
    for (int64_t r = 0; r < np; r++)
        if (t->bias)
            memcpy(ys + r * b, t->bias + mo * b, (size_t)b * sizeof *ys);
        else
            memset(ys + r * b, 0, (size_t)b * sizeof *ys);
    const float *wm = t->w + mo * kd * b;
    if (kd > 0 && b == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)np, (int)kd, 1.0f, a, (int)kd, wm, 1, 1.0f, ys, 1);
    else if (kd > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)np, (int)b, (int)kd, 1.0f, a, (int)kd, wm,
                    (int)b, 1.0f, ys, (int)b);
    conv_post(t, mo, np, ys);
}

/* Items [lo, hi): item = ((n * strips) + s) * chunks + c: image n, strip s, output blocks of chunk c. A
 * thread's strip is made once for consecutive items of the same (n, s). */
static void conv_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const conv_task *t = arg;
    const conv_plan *p = t->p;
    const win *g = &p->g;
    const int64_t b = g->b, image = g->cb * g->h * g->w * b;
    float *col = p->col_floats ? t->col + (size_t)part * p->col_floats : NULL;
    int64_t made = -1;
    for (int64_t it = lo; it < hi; it++) {
        int64_t c = it % p->chunks, ns = it / p->chunks, s = ns % p->strips, n = ns / p->strips;
        int64_t p0 = s * p->strip, np = p->pix - p0 < p->strip ? p->pix - p0 : p->strip;
        const float *xn = t->x + n * image, *a = col;
        if (p->direct) {
            a = xn + p0 * b;            /* one input block: the image is the pixels x b matrix itself */
        } else if (ns != made && col) { /* no columns (no input block): the output is the bias */
            im2col_blocked(g, xn, p0, np, col);
            made = ns;
        }
        int64_t mo_end = (c + 1) * p->mo_chunk < p->mb ? (c + 1) * p->mo_chunk : p->mb;
        float *y0 = t->y + (n * p->mb * p->pix + p0) * b; /* (n, block 0, pixel p0) */
        if (p->packed)
            conv_blocks_packed(t, a, t->tile + (size_t)part * p->tile_floats, c * p->mo_chunk, mo_end, np,
                               y0);
        else
            for (int64_t mo = c * p->mo_chunk; mo < mo_end; mo++)
                conv_block(t, a, mo, np, y0 + mo * p->pix * b);
    }
}

static pc_status conv_run(pc_rt_kernel_ctx *k)
{
    conv_plan p;
    pc_status st = conv_plan_read(k, &p);
    if (st != PC_OK || (st = scratch_check(k, p.total)) != PC_OK) return st;
    if (k->out[0]->n == 0) return PC_OK;
    conv_task t = {.p = &p,
                   .x = k->in[0]->data,
                   .w = k->in[1]->data,
                   .bias = p.bias ? k->in[2]->data : NULL,
                   .y = k->out[0]->data,
                   .col = p.direct ? NULL : k->scratch};
    if (p.bn) {
        const float *var = k->in[6]->data;
        double *sd = (double *)(void *)((char *)k->scratch + p.sd_offset);
        for (int64_t c = 0; c < p.mb * p.g.b; c++)
            sd[c] = sqrt((double)var[c] + p.eps);
        t.scale = k->in[3]->data;
        t.shift = k->in[4]->data;
        t.mean = k->in[5]->data;
        t.sd = sd;
    }
    if (p.packed) { /* W[mo] (K x b) into columns mo b .. mo b + b - 1 of the K x Mb b matrix */
        const int64_t b = p.g.b, mp = p.mb * b;
        t.tile = (float *)(void *)((char *)k->scratch + p.tile_offset);
        t.wp = (float *)(void *)((char *)k->scratch + p.wp_offset);
        for (int64_t mo = 0; mo < p.mb; mo++)
            for (int64_t r = 0; r < p.kdim; r++)
                memcpy(t.wp + r * mp + mo * b, t.w + (mo * p.kdim + r) * b, (size_t)b * sizeof(float));
    }
    pc_rt_parallel_for(k, p.g.n * p.strips * p.chunks, 1, conv_part, &t);
    return PC_OK;
}

/* ---- BatchNormalization
 * -------------------------------------------------------------------------------------- */

static pc_status bn_read(pc_rt_kernel_ctx *k, bool *relu, double *eps)
{
    static const char *const names[5] = {"X", "scale", "B", "mean", "var"};
    pc_status st;
    if ((st = at_most_inputs(k, 5)) != PC_OK || (st = need_blocked_x(k)) != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    for (uint32_t i = 1; i < 5; i++)
        if ((st = need_vector(k, i, names[i], d[1] * d[4])) != PC_OK) return st;
    if ((st = bn_mode_check(k)) != PC_OK || (st = attr_real(k, "epsilon", 1e-5f, eps)) != PC_OK ||
        (st = attr_relu(k, relu)) != PC_OK)
        return st;
    return need_output(k, 5, d);
}

static pc_status bn_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    bool relu;
    double eps;
    pc_status st = bn_read(k, &relu, &eps);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    *scratch_bytes = 0;
    return scratch_grow(scratch_bytes, (uint64_t)(d[1] * d[4]), sizeof(double)) ? PC_OK : scratch_overflow(k);
}

typedef struct bn_task {
    const float *x, *scale, *shift, *mean;
    const double *sd;
    float *y;
    int64_t cb, hw, b;
    bool relu;
} bn_task;

static void bn_part(void *arg, int64_t lo, int64_t hi, int part)
{
    (void)part;
    const bn_task *t = arg;
    for (int64_t pl = lo; pl < hi; pl++) {
        int64_t o = pl % t->cb * t->b, at = pl * t->hw * t->b;
        bn_rows(t->x + at, t->y + at, t->hw, t->b, t->scale + o, t->shift + o, t->mean + o, t->sd + o);
        if (t->relu) pc_rt_act_apply(&relu_act, t->y + at, (uint64_t)(t->hw * t->b));
    }
}

static pc_status bn_run(pc_rt_kernel_ctx *k)
{
    bool relu;
    double eps;
    pc_status st = bn_read(k, &relu, &eps);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    int64_t cp = d[1] * d[4];
    if ((st = scratch_check(k, (size_t)cp * sizeof(double))) != PC_OK) return st;
    double *sd = k->scratch;
    const float *var = k->in[4]->data;
    for (int64_t c = 0; c < cp; c++)
        sd[c] = sqrt((double)var[c] + eps);
    bn_task t = {k->in[0]->data,  k->in[1]->data, k->in[2]->data, k->in[3]->data, sd,
                 k->out[0]->data, d[1],           d[2] * d[3],    d[4],           relu};
    pc_rt_parallel_for(k, d[0] * d[1], grain_for(t.hw * t.b), bn_part, &t);
    return PC_OK;
}

/* ---- MaxPool, AveragePool
 * ------------------------------------------------------------------------------------ */

/* The taps of one axis for output index o: kk in [lo, hi) land inside the input, the first n_pad inside the
 * padded extent [-pb, in + pe) (count_include_pad's divisor: a ceil_mode window reaching past the end padding
 * counts only up to it, as the reference). */
typedef struct taps {
    int64_t lo, hi, n_pad;
} taps;

static taps taps_at(const win *g, int a, int64_t o)
{
    int64_t start = o * g->s[a] - g->pb[a], d = g->d[a], in = a ? g->w : g->h; /* start >= -pb */
    taps t;
    t.lo = start >= 0 ? 0 : (-start + d - 1) / d;
    t.hi = in - 1 - start < 0 ? 0 : (in - 1 - start) / d + 1;
    t.n_pad = in + g->pe[a] - start <= 0 ? 0 : (in + g->pe[a] - start + d - 1) / d;
    if (t.hi > g->k[a]) t.hi = g->k[a];
    if (t.lo > t.hi) t.lo = t.hi;
    if (t.n_pad > g->k[a]) t.n_pad = g->k[a];
    return t;
}

typedef struct pool_plan {
    win g;
    bool is_max, include_pad;
    size_t taps_h, taps_w, acc, acc_per_thread, total; /* scratch: the two tap tables, the threads' sums */
} pool_plan;

static pc_status pool_plan_read(pc_rt_kernel_ctx *k, pool_plan *p)
{
    const bool is_max = is_max_op(k);
    pc_status st;
    memset(p, 0, sizeof *p);
    p->is_max = is_max;
    if ((st = at_most_inputs(k, 1)) != PC_OK || (st = need_blocked_x(k)) != PC_OK) return st;
    int64_t ks[2], ceil_mode = 0, v = 0;
    if ((st = pc_rt_read_ints(k, "kernel_shape", 2, 1, true, ks)) != PC_OK ||
        (st = attr_since(k, "dilations", is_max ? 10 : 19)) != PC_OK ||
        (st = attr_since(k, "ceil_mode", 10)) != PC_OK ||
        (st = pc_rt_read_int(k, "ceil_mode", 0, &ceil_mode)) != PC_OK)
        return st;
    if (is_max) {
        if ((st = attr_since(k, "storage_order", 8)) != PC_OK ||
            (st = pc_rt_read_int(k, "storage_order", 0, &v)) != PC_OK)
            return st;
        if (v != 0 && v != 1)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "attribute 'storage_order' must be 0 or 1, got %lld", (long long)v);
    } else {
        if ((st = attr_since(k, "count_include_pad", 7)) != PC_OK ||
            (st = pc_rt_read_int(k, "count_include_pad", 0, &v)) != PC_OK)
            return st;
        p->include_pad = v != 0;
    }
    if ((st = win_read(k, true, ks, ceil_mode != 0, &p->g)) != PC_OK) return st;
    const win *g = &p->g;
    int64_t dims[5] = {g->n, g->cb, g->out[0], g->out[1], g->b};
    if ((st = need_output(k, 5, dims)) != PC_OK) return st;
    /* a window of padding only has no value (the max of nothing; 0 / 0) */
    if (k->out[0]->n > 0 && (is_max || !p->include_pad))
        for (int a = 0; a < 2; a++)
            for (int64_t o = 0; o < g->out[a]; o++) {
                taps t = taps_at(g, a, o);
                if (t.hi == t.lo)
                    return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                        "spatial axis %d: the window of output %lld covers only padding", a,
                                        (long long)o);
            }
    p->taps_h = p->total;
    bool ok = scratch_grow(&p->total, (uint64_t)g->out[0], sizeof(taps));
    p->taps_w = p->total;
    ok = ok && scratch_grow(&p->total, (uint64_t)g->out[1], sizeof(taps));
    p->acc = p->total;
    p->acc_per_thread = is_max ? 0 : (size_t)g->b; /* the window sums, b doubles */
    ok = ok && scratch_grow(&p->total, (uint64_t)p->acc_per_thread * (uint64_t)k->threads, sizeof(double));
    return ok ? PC_OK : scratch_overflow(k);
}

/* The max of a window keeps the first NaN (the reference's argmax: NaN above every number, ties to the
 * first); otherwise a later value replaces only a strictly smaller one. */
PC_RT_WIDE static void max_lanes(float *restrict y, const float *restrict x, int64_t b)
{
    for (int64_t i = 0; i < b; i++) {
        float v = x[i], m = y[i];
        y[i] = (v > m || (v != v && m == m)) ? v : m;
    }
}

PC_RT_WIDE static void add_lanes(double *restrict acc, const float *restrict x, int64_t b)
{
    for (int64_t i = 0; i < b; i++)
        acc[i] += (double)x[i];
}

static void pool_plane(const pool_plan *p, const taps *th, const taps *tw, const float *xp, float *yp,
                       double *acc)
{
    const win *g = &p->g;
    const int64_t b = g->b;
    for (int64_t oy = 0; oy < g->out[0]; oy++) {
        const taps *ty = &th[oy];
        for (int64_t ox = 0; ox < g->out[1]; ox++, yp += b) {
            const taps *tx = &tw[ox];
            if (p->is_max)
                for (int64_t i = 0; i < b; i++)
                    yp[i] = -INFINITY;
            else
                for (int64_t i = 0; i < b; i++)
                    acc[i] = 0.0;
            for (int64_t ky = ty->lo; ky < ty->hi; ky++) { /* the reference's order: row-major taps */
                int64_t iy = oy * g->s[0] - g->pb[0] + ky * g->d[0];
                for (int64_t kx = tx->lo; kx < tx->hi; kx++) {
                    int64_t ix = ox * g->s[1] - g->pb[1] + kx * g->d[1];
                    const float *xv = xp + (iy * g->w + ix) * b;
                    if (p->is_max)
                        max_lanes(yp, xv, b);
                    else
                        add_lanes(acc, xv, b);
                }
            }
            if (p->is_max) continue;
            int64_t cnt = p->include_pad ? ty->n_pad * tx->n_pad : (ty->hi - ty->lo) * (tx->hi - tx->lo);
            double div = (double)cnt;
            for (int64_t i = 0; i < b; i++)
                yp[i] = (float)(acc[i] / div);
        }
    }
}

typedef struct pool_task {
    const pool_plan *p;
    const taps *th, *tw;
    const float *x;
    float *y;
    double *acc;
} pool_task;

static void pool_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const pool_task *t = arg;
    const win *g = &t->p->g;
    double *acc = t->acc + (size_t)part * t->p->acc_per_thread;
    for (int64_t pl = lo; pl < hi; pl++)
        pool_plane(t->p, t->th, t->tw, t->x + pl * g->h * g->w * g->b,
                   t->y + pl * g->out[0] * g->out[1] * g->b, acc);
}

static pc_status pool_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    pool_plan p;
    pc_status st = pool_plan_read(k, &p);
    if (st == PC_OK) *scratch_bytes = p.total;
    return st;
}

static pc_status pool_run(pc_rt_kernel_ctx *k)
{
    pool_plan p;
    pc_status st = pool_plan_read(k, &p);
    if (st != PC_OK || (st = scratch_check(k, p.total)) != PC_OK) return st;
    if (k->out[0]->n == 0) return PC_OK;
    char *base = k->scratch;
    taps *th = (taps *)(void *)(base + p.taps_h), *tw = (taps *)(void *)(base + p.taps_w);
    for (int64_t o = 0; o < p.g.out[0]; o++)
        th[o] = taps_at(&p.g, 0, o);
    for (int64_t o = 0; o < p.g.out[1]; o++)
        tw[o] = taps_at(&p.g, 1, o);
    pool_task t = {&p, th, tw, k->in[0]->data, k->out[0]->data, (double *)(void *)(base + p.acc)};
    int64_t per_plane = p.g.out[0] * p.g.out[1] * p.g.k[0] * p.g.k[1] * p.g.b;
    pc_rt_parallel_for(k, p.g.n * p.g.cb, grain_for(per_plane), pool_part, &t);
    return PC_OK;
}

/* ---- GlobalMaxPool, GlobalAveragePool
 * ------------------------------------------------------------------------ */

static pc_status global_read(pc_rt_kernel_ctx *k)
{
    const bool is_max = is_max_op(k);
    pc_status st;
    if ((st = at_most_inputs(k, 1)) != PC_OK || (st = need_blocked_x(k)) != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    int64_t dims[5] = {d[0], d[1], 1, 1, d[4]};
    if ((st = need_output(k, 5, dims)) != PC_OK) return st;
    if (is_max && d[2] * d[3] == 0 && k->out[0]->n > 0)
        return pc_error_set(k->err, PC_ERR_SHAPE, "the spatial dims are empty: there is no maximum");
    return PC_OK;
}

typedef struct global_task {
    const float *x;
    float *y;
    double *acc; /* b doubles per thread (averages) */
    int64_t hw, b;
    bool is_max;
} global_task;

/* Each plane's pixels in order: the max keeps the first NaN (the reference's argmax), the average sums in
 * double from 0 and divides once, as the reference. */
static void global_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const global_task *t = arg;
    const int64_t b = t->b;
    double *acc = t->acc ? t->acc + (size_t)part * (size_t)b : NULL; /* NULL for the max */
    for (int64_t pl = lo; pl < hi; pl++) {
        const float *xp = t->x + pl * t->hw * b;
        float *y = t->y + pl * b;
        if (t->is_max) {
            memcpy(y, xp, (size_t)b * sizeof *y);
            for (int64_t p = 1; p < t->hw; p++)
                max_lanes(y, xp + p * b, b);
            continue;
        }
        for (int64_t i = 0; i < b; i++)
            acc[i] = 0.0;
        for (int64_t p = 0; p < t->hw; p++)
            add_lanes(acc, xp + p * b, b);
        for (int64_t i = 0; i < b; i++)
            y[i] = (float)(acc[i] / (double)t->hw);
    }
}

static pc_status global_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    const bool is_max = is_max_op(k);
    pc_status st = global_read(k);
    if (st != PC_OK) return st;
    *scratch_bytes = 0;
    if (!is_max &&
        !scratch_grow(scratch_bytes, (uint64_t)k->in[0]->dims[4] * (uint64_t)k->threads, sizeof(double)))
        return scratch_overflow(k);
    return PC_OK;
}

static pc_status global_run(pc_rt_kernel_ctx *k)
{
    const bool is_max = is_max_op(k);
    pc_status st = global_read(k);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    if ((st = scratch_check(k, is_max ? 0 : (size_t)d[4] * (size_t)k->threads * sizeof(double))) != PC_OK)
        return st;
    global_task t = {k->in[0]->data, k->out[0]->data, k->scratch, d[2] * d[3], d[4], is_max};
    pc_rt_parallel_for(k, d[0] * d[1], grain_for(t.hw * t.b), global_part, &t);
    return PC_OK;
}

/* ---- LRN
 * ----------------------------------------------------------------------------------------------------- */

/* y = x / (bias + alpha / size * sum of x^2 over channels [c - floor((size - 1) / 2), c + ceil((size - 1) /
 * 2)] of the padded plain tensor)^beta, in double as the reference: the squares summed in channel order, then
 * pow. */
typedef struct lrn_params {
    int64_t before, after;
    double coef, beta, bias;
} lrn_params;

static pc_status lrn_read(pc_rt_kernel_ctx *k, lrn_params *p)
{
    pc_rt_lrn a;
    pc_status st;
    if ((st = at_most_inputs(k, 1)) != PC_OK || (st = need_blocked_x(k)) != PC_OK ||
        (st = pc_rt_read_lrn(k, &a)) != PC_OK)
        return st;
    p->before = a.before;
    p->after = a.after;
    p->beta = a.beta;
    p->bias = a.bias;
    p->coef = (double)a.alpha / (double)a.size;
    return need_output(k, 5, k->in[0]->dims);
}

static pc_status lrn_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    lrn_params p;
    pc_status st = lrn_read(k, &p);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    *scratch_bytes = 0; /* each thread: one pixel's squares over the padded channels */
    if (!scratch_grow(scratch_bytes, (uint64_t)(d[1] * d[4]) * (uint64_t)k->threads, sizeof(double)))
        return scratch_overflow(k);
    return PC_OK;
}

typedef struct lrn_task {
    const lrn_params *p;
    const float *x;
    float *y;
    double *sq;
    int64_t cb, hw, b;
} lrn_task;

/* Pixels [lo, hi) of the N x H x W: each one's channels gathered from the blocks, squared, and each
 * channel's window summed in order. */
static void lrn_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const lrn_task *t = arg;
    const lrn_params *p = t->p;
    const int64_t b = t->b, cp = t->cb * b, plane = t->hw * b;
    if (cp == 0) return;
    double *sq = t->sq + (size_t)part * (size_t)cp;
    for (int64_t q = lo; q < hi; q++) {
        int64_t n = q / t->hw, at = (n * t->cb * t->hw + q % t->hw) * b; /* (n, block 0, pixel, lane 0) */
        for (int64_t c = 0; c < cp; c++) {
            double v = (double)t->x[at + c / b * plane + c % b];
            sq[c] = v * v;
        }
        for (int64_t c = 0; c < cp; c++) {
            int64_t c0 = c - p->before < 0 ? 0 : c - p->before,
                    c1 = c + p->after > cp - 1 ? cp - 1 : c + p->after;
            double s = 0.0;
            for (int64_t cc = c0; cc <= c1; cc++)
                s += sq[cc];
            int64_t e = at + c / b * plane + c % b;
            t->y[e] = (float)((double)t->x[e] / pow(p->bias + p->coef * s, p->beta));
        }
    }
}

static pc_status lrn_run(pc_rt_kernel_ctx *k)
{
    lrn_params p;
    pc_status st = lrn_read(k, &p);
    if (st != PC_OK) return st;
    const int64_t *d = k->in[0]->dims;
    if ((st = scratch_check(k, (size_t)(d[1] * d[4]) * (size_t)k->threads * sizeof(double))) != PC_OK)
        return st;
    lrn_task t = {&p, k->in[0]->data, k->out[0]->data, k->scratch, d[1], d[2] * d[3], d[4]};
    pc_rt_parallel_for(k, d[0] * t.hw, grain_for(d[1] * d[4] * (p.before + p.after + 1)), lrn_part, &t);
    return PC_OK;
}

/* ---- the table
 * ----------------------------------------------------------------------------------------------- */

/* BatchNormalization is RT_INPLACE: output element e reads element e of X and, of a vector the size of the
 * output (N = H = W = 1), element e too. */
const pc_rt_kernel pc_rt_kernels_blocked[] = {
    {PC_BLOCKED_DOMAIN, "ToBlocked", 1, 1, RT_F32, to_blocked_prepare, to_blocked_run, 0},
    {PC_BLOCKED_DOMAIN, "FromBlocked", 1, 1, RT_F32, from_blocked_prepare, from_blocked_run, 0},
    {PC_BLOCKED_DOMAIN, "Conv", 1, 1, RT_F32, conv_prepare, conv_run, 0},
    {PC_BLOCKED_DOMAIN, "BatchNormalization", 1, 1, RT_F32, bn_prepare, bn_run, RT_INPLACE},
    {PC_BLOCKED_DOMAIN, "MaxPool", 1, 1, RT_F32, pool_prepare, pool_run, 0},
    {PC_BLOCKED_DOMAIN, "AveragePool", 1, 1, RT_F32, pool_prepare, pool_run, 0},
    {PC_BLOCKED_DOMAIN, "GlobalMaxPool", 1, 1, RT_F32, global_prepare, global_run, 0},
    {PC_BLOCKED_DOMAIN, "GlobalAveragePool", 1, 1, RT_F32, global_prepare, global_run, 0},
    {PC_BLOCKED_DOMAIN, "LRN", 1, 1, RT_F32, lrn_prepare, lrn_run, 0},
};
const size_t pc_rt_n_kernels_blocked = sizeof pc_rt_kernels_blocked / sizeof pc_rt_kernels_blocked[0];
