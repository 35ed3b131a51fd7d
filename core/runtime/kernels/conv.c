/* Gemm-shaped kernels on OpenBLAS: Conv and FusedConv in NCHW and in the internal NHWC domain, MatMul, Gemm
 * and FusedGemm (float32).
 *
 * Conv, per image and group: a 1x1 kernel with unit strides and no padding is one sgemm on the input as it
 * lies (NCHW: Y[M, HW] = W[M, C] X[C, HW]; NHWC: Y[HW, M] = X[HW, C] W^T); a depthwise one (one input and one
 * output channel per group) is a direct loop; anything else is im2col into scratch and an sgemm, strip by
 * strip of output rows (strip_rows). Bias and
 * the fused activation run over the result once. One or two spatial axes (1-D as H = 1); three are refused.
 */
#include <cblas.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

typedef struct conv_geom {
    int64_t n, c, h, w;     /* input, NCHW order whatever the layout */
    int64_t m, oh, ow;      /* output channels and size */
    int64_t kh, kw;         /* kernel */
    int64_t sh, sw, dh, dw; /* strides, dilations */
    int64_t ph, pw;         /* padding at the start (the end follows from the output size) */
    int64_t group, cg, mg;  /* groups, input and output channels per group */
    bool nhwc;
} conv_geom;

static bool is_nhwc(const pc_node *node)
{
    return pc_name_eq(node->domain, PC_NHWC_DOMAIN);
}

/* One int per spatial axis from an ints attribute (fallback when absent); false when its length is wrong. */
static bool spatial(const pc_node *node, const char *name, int nsp, int64_t fallback, int64_t *v)
{
    size_t n;
    const int64_t *a = pc_rt_attr_ints(node, name, &n);
    for (int i = 0; i < 2; i++)
        v[i] = fallback;
    if (!a) return true;
    if (n != (size_t)nsp) return false;
    for (int i = 0; i < nsp; i++)
        v[2 - nsp + i] = a[i];
    return true;
}

static pc_status conv_geometry(const pc_rt_kernel_ctx *k, conv_geom *g)
{
    const pc_rt_tensor *x = k->in[0], *w = k->in[1], *y = k->out[0];
    memset(g, 0, sizeof *g);
    g->nhwc = is_nhwc(k->node);
    if (x->rank < 3 || x->rank > 4 || w->rank != x->rank || y->rank != x->rank)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "the runtime's Conv takes one or two spatial axes (X has rank %d, W rank %d)",
                            (int)x->rank, (int)w->rank);
    int nsp = x->rank - 2;
    g->n = x->dims[0];
    if (g->nhwc) {
        g->c = x->dims[x->rank - 1];
        g->h = nsp == 2 ? x->dims[1] : 1;
        g->w = x->dims[nsp];
        g->m = y->dims[y->rank - 1];
        g->oh = nsp == 2 ? y->dims[1] : 1;
        g->ow = y->dims[nsp];
    } else {
        g->c = x->dims[1];
        g->h = nsp == 2 ? x->dims[2] : 1;
        g->w = x->dims[1 + nsp];
        g->m = y->dims[1];
        g->oh = nsp == 2 ? y->dims[2] : 1;
        g->ow = y->dims[1 + nsp];
    }
    g->kh = nsp == 2 ? w->dims[2] : 1;
    g->kw = w->dims[1 + nsp];
    g->group = pc_node_attr_int(k->node, "group", 1);
    int64_t st[2], dl[2];
    if (!spatial(k->node, "strides", nsp, 1, st) || !spatial(k->node, "dilations", nsp, 1, dl))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "strides/dilations need one value per spatial axis");
    g->sh = st[0], g->sw = st[1], g->dh = dl[0], g->dw = dl[1];
    if (g->group < 1 || g->c % g->group || g->m % g->group || w->dims[0] != g->m ||
        w->dims[1] != g->c / g->group)
        return pc_error_set(k->err, PC_ERR_SHAPE,
                            "W [%lld, %lld, ...] does not fit %lld input and %lld output "
                            "channels in %lld groups",
                            (long long)w->dims[0], (long long)w->dims[1], (long long)g->c, (long long)g->m,
                            (long long)g->group);
    if (g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "strides and dilations must be >= 1");
    g->cg = g->c / g->group;
    g->mg = g->m / g->group;
    /* padding at the start: explicit pads, or SAME_* split from the output size the session inferred */
    const char *ap = pc_node_attr_string(k->node, "auto_pad", "NOTSET");
    int64_t pb[2] = {0, 0};
    if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
        int64_t in[2] = {g->h, g->w}, out[2] = {g->oh, g->ow}, kk[2] = {g->kh, g->kw}, s[2] = {g->sh, g->sw},
                d[2] = {g->dh, g->dw};
        for (int i = 2 - nsp; i < 2; i++) {
            int64_t total = (out[i] - 1) * s[i] + (kk[i] - 1) * d[i] + 1 - in[i];
            if (total < 0) total = 0;
            pb[i] = ap[5] == 'U' ? total / 2 : total - total / 2;
        }
    } else if (strcmp(ap, "NOTSET") == 0) {
        size_t np;
        const int64_t *pads = pc_rt_attr_ints(k->node, "pads", &np);
        if (pads && np != 2 * (size_t)nsp)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "pads has %zu values, expected %d", np, 2 * nsp);
        for (int i = 0; pads && i < nsp; i++)
            pb[2 - nsp + i] = pads[i];
    } else if (strcmp(ap, "VALID") != 0) {
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "auto_pad '%s' is not one ONNX defines", ap);
    }
    g->ph = pb[0], g->pw = pb[1];
    return PC_OK;
}

static bool conv_pointwise(const conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 &&
           g->oh == g->h && g->ow == g->w;
}

static bool conv_depthwise(const conv_geom *g)
{
    return g->group > 1 && g->cg == 1 && g->mg == 1;
}

/* im2col runs in strips of whole output rows whose columns fill about STRIP_BYTES, so each strip is written
 * and then read by its sgemm while it is still in L2 (a 96-channel 3x3 conv at 80x80 has a 22 MB im2col: made
 * whole, it went to memory and back and took longer than the gemm). A strip has at least STRIP_MIN_COLS
 * output pixels however deep the kernel: sgemm on a narrow panel is slow (resnet18's last 3x3 convs, 7 pixels
 * a row and 4608-deep, ran at 32% of peak one row at a time and at 70% whole). */
enum { STRIP_BYTES = 256 * 1024, STRIP_MIN_COLS = 192 };

static int64_t strip_rows(const conv_geom *g)
{
    int64_t per_row = g->cg * g->kh * g->kw * g->ow * (int64_t)sizeof(float);
    int64_t rows = per_row > 0 ? STRIP_BYTES / per_row : g->oh;
    int64_t min_rows = g->ow > 0 ? (STRIP_MIN_COLS + g->ow - 1) / g->ow : 1;
    if (rows < min_rows) rows = min_rows;
    return rows < 1 ? 1 : rows > g->oh ? g->oh : rows;
}

/* NCHW depthwise, any stride: each channel is split into its sh x sw phase planes, phase (pa, pb) holding the
 * zero-padded input's rows pa, pa + sh, ... and columns pb, pb + sw, ..., each hp x wp. Tap (a, b) then reads
 * phase ((a dh) % sh, (b dw) % sw) shifted by ((a dh) / sh, (b dw) / sw): one contiguous run per tap over a
 * "wide" output of wp columns per row, the columns past ow junk dropped when the rows are copied out. A 5x5
 * kernel over a 20x20 plane makes 5 row passes of ~480 outputs instead of 500 loops of 20, and stride 2 reads
 * contiguous memory like stride 1. */
static int64_t dw_plane_h(const conv_geom *g)
{
    return g->oh + (g->kh - 1) * g->dh / g->sh;
}

static int64_t dw_plane_w(const conv_geom *g)
{
    return g->ow + (g->kw - 1) * g->dw / g->sw;
}

/* Scratch: per thread one strip of im2col of one group, or a depthwise channel's phase planes and wide output
 * (floats); plus NHWC's repacked weights. */
static size_t conv_scratch(const conv_geom *g, int threads)
{
    size_t cols = 0;
    if (conv_depthwise(g)) {
        if (!g->nhwc) {
            size_t hp = (size_t)dw_plane_h(g), wp = (size_t)dw_plane_w(g);
            cols = ((size_t)(g->sh * g->sw) * hp + (size_t)g->oh) * wp * (size_t)threads;
        }
    } else if (!conv_pointwise(g)) {
        cols = (size_t)(g->cg * g->kh * g->kw) * (size_t)(strip_rows(g) * g->ow) * (size_t)threads;
    }
    size_t packed = g->nhwc ? (size_t)(g->m * g->cg * g->kh * g->kw) : 0;
    return (cols + packed) * sizeof(float);
}

static pc_status conv_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    if (k->n_in < 2 || !k->in[0] || !k->in[1])
        return pc_error_set(k->err, PC_ERR_ARITY, "Conv needs X and W");
    for (uint32_t i = 0; i < k->n_in && i < 3; i++)
        if (k->in[i] && k->in[i]->dtype != PC_DTYPE_FLOAT)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "input %u is %s: the runtime's Conv is float32",
                                i, pc_dtype_name(k->in[i]->dtype));
    if (k->n_in > 3 && k->in[3])
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "FusedConv's sum input Z is not run");
    conv_geom g;
    pc_status st = conv_geometry(k, &g);
    if (st != PC_OK) return st;
    if (k->n_in > 2 && k->in[2] && (k->in[2]->rank != 1 || k->in[2]->dims[0] != g.m))
        return pc_error_set(k->err, PC_ERR_SHAPE, "bias B must be [%lld]", (long long)g.m);
    if ((st = pc_rt_activation_check(k->node, k->err)) != PC_OK) return st;
    *scratch = conv_scratch(&g, k->threads);
    return PC_OK;
}

/* NCHW im2col of output rows [r0, r0 + rows) of group g of image x: col[(c, kh, kw), (oh - r0, ow)], zero
 * where the window reads padding. Each (row, tap) copies the run of columns that lands inside the input
 * (contiguous at stride 1) and zeroes the rest, with no per-element test. */
PC_RT_WIDE static void im2col_nchw(const conv_geom *g, const float *x, int64_t r0, int64_t rows, float *col)
{
    int64_t ncols = rows * g->ow;
    /* planted bug (--inject runtime-im2col-pad): the columns' left padding forgotten; the runtime property
     * catches it against the reference */
    int64_t pw = pc_fault_active(PC_FAULT_RUNTIME_IM2COL_PAD) ? 0 : g->pw;
    for (int64_t b = 0; b < g->kw; b++) {
        /* the output columns ow whose input column ow * sw - pw + b * dw lies in [0, w) */
        int64_t off = b * g->dw - pw;
        int64_t lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
        int64_t hi = g->w - 1 - off < 0 ? -1 : (g->w - 1 - off) / g->sw; /* inclusive */
        if (hi > g->ow - 1) hi = g->ow - 1;
        if (lo > hi) lo = hi + 1; /* no column inside: all padding */
        for (int64_t c = 0; c < g->cg; c++)
            for (int64_t a = 0; a < g->kh; a++) {
                float *row = col + ((c * g->kh + a) * g->kw + b) * ncols;
                const float *xc = x + c * g->h * g->w;
                for (int64_t i = 0; i < rows; i++) {
                    int64_t ih = (r0 + i) * g->sh - g->ph + a * g->dh;
                    float *r = row + i * g->ow;
                    if (ih < 0 || ih >= g->h) {
                        memset(r, 0, (size_t)g->ow * sizeof *r);
                        continue;
                    }
                    const float *xr = xc + ih * g->w + off;
                    if (lo > 0) memset(r, 0, (size_t)lo * sizeof *r);
                    if (g->sw == 1) {
                        if (hi >= lo) memcpy(r + lo, xr + lo, (size_t)(hi - lo + 1) * sizeof *r);
                    } else {
                        for (int64_t ow = lo; ow <= hi; ow++)
                            r[ow] = xr[ow * g->sw];
                    }
                    if (hi + 1 < g->ow) memset(r + hi + 1, 0, (size_t)(g->ow - hi - 1) * sizeof *r);
                }
            }
    }
}

/* NHWC im2col of output rows [r0, r0 + rows) of group g: col[(oh - r0, ow), (kh, kw, c)], channels
 * contiguous. */
static void im2col_nhwc(const conv_geom *g, const float *x, int64_t c0, int64_t r0, int64_t rows, float *col)
{
    int64_t kcols = g->kh * g->kw * g->cg;
    for (int64_t oh = r0; oh < r0 + rows; oh++)
        for (int64_t ow = 0; ow < g->ow; ow++) {
            float *r = col + ((oh - r0) * g->ow + ow) * kcols;
            for (int64_t a = 0; a < g->kh; a++) {
                int64_t ih = oh * g->sh - g->ph + a * g->dh;
                for (int64_t b = 0; b < g->kw; b++, r += g->cg) {
                    int64_t iw = ow * g->sw - g->pw + b * g->dw;
                    if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w)
                        memset(r, 0, (size_t)g->cg * sizeof *r);
                    else
                        memcpy(r, x + (ih * g->w + iw) * g->c + c0, (size_t)g->cg * sizeof *r);
                }
            }
        }
}

/* y[i] += sum over the KW taps of w[b] * src[b][i], for i < n: one row of a depthwise kernel over a run of
 * the wide output. Unrolled over a constant KW so the loop over i vectorizes with all taps in registers; the
 * sum runs in tap order whatever KW. */
#define DW_ROW(KW)                                                                                           \
    PC_RT_WIDE static void dw_row_##KW(float *restrict y, const float *const *src, const float *w,           \
                                       int64_t n)                                                            \
    {                                                                                                        \
        const float *s[KW];                                                                                  \
        float wv[KW];                                                                                        \
        for (int b = 0; b < KW; b++) {                                                                       \
            s[b] = src[b];                                                                                   \
            wv[b] = w[b];                                                                                    \
        }                                                                                                    \
        for (int64_t i = 0; i < n; i++) {                                                                    \
            float acc = y[i];                                                                                \
            for (int b = 0; b < KW; b++)                                                                     \
                acc += wv[b] * s[b][i];                                                                      \
            y[i] = acc;                                                                                      \
        }                                                                                                    \
    }
DW_ROW(1)
DW_ROW(2)
DW_ROW(3)
DW_ROW(4)
DW_ROW(5)
DW_ROW(6)
DW_ROW(7)
#undef DW_ROW

static void dw_row(float *y, const float *const *src, const float *w, int64_t kw, int64_t n)
{
    typedef void (*row_fn)(float *restrict, const float *const *, const float *, int64_t);
    static const row_fn by_width[] = {NULL,     dw_row_1, dw_row_2, dw_row_3,
                                      dw_row_4, dw_row_5, dw_row_6, dw_row_7};
    if (kw < (int64_t)(sizeof by_width / sizeof by_width[0])) {
        by_width[kw](y, src, w, n);
        return;
    }
    for (int64_t b = 0; b < kw; b++) /* wider kernels: one tap at a time, the same order */
        dw_row_1(y, src + b, w + b, n);
}

/* The wide output is made in chunks of DW_CHUNK floats so a chunk stays in L1 through all kh row passes. */
enum { DW_CHUNK = 2048, DW_MAX_KW = 64 };

PC_RT_WIDE static void depthwise_nchw(const conv_geom *g, const float *x, const float *w, const float *bias,
                                      float *y, const pc_rt_act *act, float *scratch, int64_t c_lo,
                                      int64_t c_hi)
{
    int64_t hp = dw_plane_h(g), wp = dw_plane_w(g), plane = hp * wp, phases = g->sh * g->sw;
    float *xp = scratch, *yw = scratch + phases * plane;
    int64_t span = (g->oh - 1) * wp + g->ow; /* the wide output's elements up to the last valid one */
    if (g->oh <= 0 || g->ow <= 0) return;
    /* out-of-image positions are the same for every channel: zeroed once, only the interior rewritten */
    memset(xp, 0, (size_t)(phases * plane) * sizeof *xp);
    for (int64_t c = c_lo; c < c_hi; c++) {
        const float *xc = x + c * g->h * g->w, *wc = w + c * g->kh * g->kw;
        for (int64_t pa = 0; pa < g->sh; pa++)
            for (int64_t pb = 0; pb < g->sw; pb++) {
                float *ph = xp + (pa * g->sw + pb) * plane;
                /* plane column j is input column j sw + pb - pw: those in [0, w) */
                int64_t first = pb - g->pw, j0 = first >= 0 ? 0 : (-first + g->sw - 1) / g->sw;
                int64_t j1 = g->w - 1 - first < 0 ? -1 : (g->w - 1 - first) / g->sw; /* inclusive */
                if (j1 > wp - 1) j1 = wp - 1;
                for (int64_t i = 0; i < hp; i++) {
                    int64_t ih = i * g->sh + pa - g->ph;
                    if (ih < 0 || ih >= g->h || j0 > j1) continue;
                    const float *xr = xc + ih * g->w + first;
                    float *r = ph + i * wp;
                    if (g->sw == 1)
                        memcpy(r + j0, xr + j0, (size_t)(j1 - j0 + 1) * sizeof *r);
                    else
                        for (int64_t j = j0; j <= j1; j++)
                            r[j] = xr[j * g->sw];
                }
            }
        float b0 = bias ? bias[c] : 0.0f;
        for (int64_t i0 = 0; i0 < span; i0 += DW_CHUNK) {
            int64_t n = span - i0 < DW_CHUNK ? span - i0 : DW_CHUNK;
            for (int64_t i = 0; i < n; i++)
                yw[i0 + i] = b0;
            for (int64_t a = 0; a < g->kh; a++) {
                const float *src[DW_MAX_KW];
                int64_t ra = a * g->dh;
                for (int64_t b = 0; b < g->kw; b++) {
                    int64_t cb = b * g->dw;
                    src[b] =
                        xp + ((ra % g->sh) * g->sw + cb % g->sw) * plane + ra / g->sh * wp + cb / g->sw + i0;
                }
                dw_row(yw + i0, src, wc + a * g->kw, g->kw, n);
            }
        }
        float *yc = y + c * g->oh * g->ow;
        for (int64_t oh = 0; oh < g->oh; oh++)
            memcpy(yc + oh * g->ow, yw + oh * wp, (size_t)g->ow * sizeof *yc);
        pc_rt_act_apply(act, yc, (uint64_t)(g->oh * g->ow));
    }
}

/* NHWC depthwise: wt is W repacked [kh, kw, C] so the inner loop runs along the channels; output rows
 * [oh_lo, oh_hi), each started from the bias and activated once done. */
PC_RT_WIDE static void depthwise_nhwc(const conv_geom *g, const float *x, const float *wt, const float *bias,
                                      float *y, const pc_rt_act *act, int64_t oh_lo, int64_t oh_hi)
{
    for (int64_t oh = oh_lo; oh < oh_hi; oh++) {
        for (int64_t ow = 0; ow < g->ow; ow++) {
            float *yp = y + (oh * g->ow + ow) * g->c;
            if (bias)
                memcpy(yp, bias, (size_t)g->c * sizeof *yp);
            else
                memset(yp, 0, (size_t)g->c * sizeof *yp);
            for (int64_t a = 0; a < g->kh; a++) {
                int64_t ih = oh * g->sh - g->ph + a * g->dh;
                if (ih < 0 || ih >= g->h) continue;
                for (int64_t b = 0; b < g->kw; b++) {
                    int64_t iw = ow * g->sw - g->pw + b * g->dw;
                    if (iw < 0 || iw >= g->w) continue;
                    const float *xp = x + (ih * g->w + iw) * g->c, *wp = wt + (a * g->kw + b) * g->c;
                    for (int64_t c = 0; c < g->c; c++)
                        yp[c] += xp[c] * wp[c];
                }
            }
        }
        pc_rt_act_apply(act, y + oh * g->ow * g->c, (uint64_t)(g->ow * g->c));
    }
}

/* One image's depthwise conv, split by channels (NCHW; each thread its own slice of scratch) or by output
 * rows (NHWC). */
typedef struct depthwise_task {
    const conv_geom *g;
    const pc_rt_act *act;
    const float *x, *w, *bias;
    float *y, *scratch;
    size_t scratch_per_thread; /* floats */
} depthwise_task;

static void depthwise_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const depthwise_task *t = arg;
    if (t->g->nhwc)
        depthwise_nhwc(t->g, t->x, t->w, t->bias, t->y, t->act, lo, hi);
    else
        depthwise_nchw(t->g, t->x, t->w, t->bias, t->y, t->act,
                       t->scratch + (size_t)part * t->scratch_per_thread, lo, hi);
}

/* The gemm-shaped convs make the output matrix — NCHW: Y[m, p] = W[m, :] . B[:, p]; NHWC: Y[p, m] =
 * B[p, :] . W[m, :] — tile by tile, B being the input itself (pointwise) or a strip of im2col columns. A tile
 * (output channels [m_lo, m_hi) of the group, pixels [p_lo, p_hi) of B) starts as the bias, takes the product
 * with beta = 1 (OpenBLAS then skips its own pass zeroing C) and is activated while still in cache. */
typedef struct gemm_job {
    const conv_geom *g;
    pc_rt_act act;
    const float *w;    /* the group's weights, [mg, K] (NHWC: repacked) */
    const float *b;    /* B: NCHW [K, ldb] columns, NHWC [rows, ldb] */
    const float *bias; /* the group's bias, or NULL */
    float *y;          /* output element (m0, pixel p0): where B's pixel 0 lands */
    int64_t kdim, ldb, np, tile_m, tile_p, tiles_p;
} gemm_job;

PC_RT_WIDE static void gemm_tile(const gemm_job *j, int64_t m_lo, int64_t m_hi, int64_t p_lo, int64_t p_hi)
{
    const conv_geom *g = j->g;
    int64_t nm = m_hi - m_lo, np = p_hi - p_lo, ohw = g->oh * g->ow;
    if (nm <= 0 || np <= 0) return;
    if (g->nhwc) {
        float *y = j->y + p_lo * g->m + m_lo;
        for (int64_t p = 0; p < np; p++)
            if (j->bias)
                memcpy(y + p * g->m, j->bias + m_lo, (size_t)nm * sizeof *y);
            else
                memset(y + p * g->m, 0, (size_t)nm * sizeof *y);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)np, (int)nm, (int)j->kdim, 1.0f,
                    j->b + p_lo * j->ldb, (int)j->ldb, j->w + m_lo * j->kdim, (int)j->kdim, 1.0f, y,
                    (int)g->m);
        for (int64_t p = 0; p < np; p++)
            pc_rt_act_apply(&j->act, y + p * g->m, (uint64_t)nm);
    } else {
        float *y = j->y + m_lo * ohw + p_lo;
        for (int64_t m = 0; m < nm; m++) {
            float v = j->bias ? j->bias[m_lo + m] : 0.0f;
            for (int64_t p = 0; p < np; p++)
                y[m * ohw + p] = v;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nm, (int)np, (int)j->kdim, 1.0f,
                    j->w + m_lo * j->kdim, (int)j->kdim, j->b + p_lo, (int)j->ldb, 1.0f, y, (int)ohw);
        for (int64_t m = 0; m < nm; m++)
            pc_rt_act_apply(&j->act, y + m * ohw, (uint64_t)np);
    }
}

static void gemm_tiles_part(void *arg, int64_t lo, int64_t hi, int part)
{
    (void)part;
    const gemm_job *j = arg;
    for (int64_t t = lo; t < hi; t++) {
        int64_t m0 = t / j->tiles_p * j->tile_m, p0 = t % j->tiles_p * j->tile_p;
        int64_t m1 = m0 + j->tile_m < j->g->mg ? m0 + j->tile_m : j->g->mg;
        int64_t p1 = p0 + j->tile_p < j->np ? p0 + j->tile_p : j->np;
        gemm_tile(j, m0, m1, p0, p1);
    }
}

/* Tiles of about TILE_BYTES of output and at least TILE_MIN_PIXELS pixels (narrower products run slowly),
 * split by channels too when there are fewer pixel tiles than threads; then run on the pool. */
enum { TILE_BYTES = 256 * 1024, TILE_MIN_PIXELS = 192, TILE_ALIGN = 16 };

static void gemm_job_run(const pc_rt_kernel_ctx *k, gemm_job *j)
{
    int64_t mg = j->g->mg;
    int64_t tp = mg > 0 ? TILE_BYTES / (int64_t)sizeof(float) / mg : j->np;
    tp = tp < TILE_MIN_PIXELS ? TILE_MIN_PIXELS : tp / TILE_ALIGN * TILE_ALIGN;
    j->tile_p = tp > j->np ? j->np : tp;
    j->tiles_p = j->tile_p > 0 ? (j->np + j->tile_p - 1) / j->tile_p : 1;
    j->tile_m = mg;
    if (j->tiles_p < k->threads && mg >= 2 * TILE_ALIGN) {
        int64_t per = (mg + k->threads - 1) / k->threads;
        j->tile_m = (per + TILE_ALIGN - 1) / TILE_ALIGN * TILE_ALIGN;
    }
    int64_t tiles_m = j->tile_m > 0 ? (mg + j->tile_m - 1) / j->tile_m : 1;
    pc_rt_parallel_for(k, tiles_m * j->tiles_p, 1, gemm_tiles_part, j);
}

/* im2col convolution of one image and group, strip by strip of output rows: each strip's columns made in the
 * thread's own slice of scratch and multiplied there as one tile (threads take whole strips). */
typedef struct strip_task {
    const conv_geom *g;
    gemm_job job; /* w, bias, act; the rest set per strip */
    const float *x;
    float *y, *col;
    int64_t c0, m0, srows, strip_floats;
} strip_task;

/* The job of strip s, its columns made in col. */
static gemm_job strip_job(const strip_task *t, int64_t s, float *col)
{
    const conv_geom *g = t->g;
    int64_t r0 = s * t->srows, rows = g->oh - r0 < t->srows ? g->oh - r0 : t->srows;
    gemm_job j = t->job;
    j.np = rows * g->ow;
    j.b = col;
    if (g->nhwc) {
        im2col_nhwc(g, t->x, t->c0, r0, rows, col);
        j.ldb = j.kdim;
        j.y = t->y + r0 * g->ow * g->m + t->m0;
    } else {
        im2col_nchw(g, t->x + t->c0 * g->h * g->w, r0, rows, col);
        j.ldb = j.np;
        j.y = t->y + t->m0 * g->oh * g->ow + r0 * g->ow;
    }
    j.tile_m = g->mg;
    j.tile_p = j.np;
    j.tiles_p = 1;
    return j;
}

static void strip_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const strip_task *t = arg;
    float *col = t->col + (size_t)part * (size_t)t->strip_floats;
    for (int64_t s = lo; s < hi; s++) {
        gemm_job j = strip_job(t, s, col);
        gemm_tile(&j, 0, t->g->mg, 0, j.np);
    }
}

static pc_status conv_run(pc_rt_kernel_ctx *k)
{
    conv_geom g;
    pc_status st = conv_geometry(k, &g);
    if (st != PC_OK) return st;
    const float *x = k->in[0]->data, *w = k->in[1]->data;
    const float *bias = k->n_in > 2 && k->in[2] ? k->in[2]->data : NULL;
    float *y = k->out[0]->data, *col = k->scratch;
    int64_t hw = g.h * g.w, ohw = g.oh * g.ow, kk = g.kh * g.kw, kcols = g.cg * kk, srows = strip_rows(&g);
    pc_rt_act act = pc_rt_activation_get(k->node);
    /* NHWC's repacked weights sit after the threads' columns, at the end of the scratch (conv_scratch) */
    float *packed =
        g.nhwc ? col + conv_scratch(&g, k->threads) / sizeof(float) - (size_t)(g.m * kcols) : NULL;
    if (g.nhwc) {
        /* W [M, Cg, kh, kw] as the NHWC loops read it: depthwise [kh, kw, C], else [M, kh, kw, Cg] */
        for (int64_t m = 0; m < g.m; m++)
            for (int64_t c = 0; c < g.cg; c++)
                for (int64_t p = 0; p < kk; p++) {
                    float v = w[(m * g.cg + c) * kk + p];
                    if (conv_depthwise(&g)) /* planted bug (--inject runtime-depthwise-nhwc-channels) */
                        packed[p * g.c +
                               (pc_fault_active(PC_FAULT_RUNTIME_DEPTHWISE_NHWC) ? g.c - 1 - m : m)] = v;
                    else
                        packed[(m * kk + p) * g.cg + c] = v;
                }
    }
    if (conv_depthwise(&g) && g.kw > DW_MAX_KW)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "depthwise kernel %lld wide: at most %d",
                            (long long)g.kw, DW_MAX_KW);
    for (int64_t n = 0; n < g.n; n++) {
        const float *xn = x + n * g.c * hw;
        float *yn = y + n * g.m * ohw;
        if (conv_depthwise(&g)) {
            depthwise_task t = {.g = &g,
                                .act = &act,
                                .x = xn,
                                .w = g.nhwc ? packed : w,
                                .bias = bias,
                                .y = yn,
                                .scratch = col,
                                .scratch_per_thread = conv_scratch(&g, 1) / sizeof(float)};
            /* a chunk is worth a thread from about 16K multiply-adds */
            int64_t per_item = (g.nhwc ? g.ow * g.c : g.oh * g.ow) * g.kh * g.kw;
            pc_rt_parallel_for(k, g.nhwc ? g.oh : g.c, per_item > 0 ? 16384 / per_item + 1 : 1,
                               depthwise_part, &t);
            continue;
        }
        for (int64_t gi = 0; gi < g.group; gi++) {
            int64_t c0 = gi * g.cg, m0 = gi * g.mg;
            gemm_job job = {.g = &g,
                            .act = act,
                            .w = g.nhwc ? packed + m0 * kcols : w + m0 * kcols,
                            .bias = bias ? bias + m0 : NULL,
                            .kdim = kcols};
            if (conv_pointwise(&g)) { /* B is the input: NCHW [C, HW] rows, NHWC [HW, C] rows */
                job.b = g.nhwc ? xn + c0 : xn + c0 * hw;
                job.ldb = g.nhwc ? g.c : hw;
                job.y = g.nhwc ? yn + m0 : yn + m0 * ohw;
                job.np = ohw;
                gemm_job_run(k, &job);
                continue;
            }
            int64_t strips = (g.oh + srows - 1) / srows;
            strip_task t = {&g, job, xn, yn, col, c0, m0, srows, kcols * srows * g.ow};
            if (strips >= k->threads) {
                pc_rt_parallel_for(k, strips, 1, strip_part, &t);
                continue;
            }
            /* fewer strips than threads: each strip's columns made once, its product split in tiles */
            for (int64_t s = 0; s < strips; s++) {
                gemm_job j = strip_job(&t, s, col);
                gemm_job_run(k, &j);
            }
        }
    }
    return PC_OK;
}

/* ---- ConvTranspose ----
 * Per image and group, one sgemm makes every (output channel, kernel offset) contribution of every input
 * pixel — NCHW: cols[(m, kh, kw), (ih, iw)] = W_g^T X_g; NHWC: cols[(ih, iw), (m, kh, kw)] = X_g W_g — and
 * col2im adds each to the output position it lands on, ih * stride - pad + k * dilation. Bias and nothing
 * else after (ConvTranspose has no fused form). */

static pc_status convt_geometry(const pc_rt_kernel_ctx *k, conv_geom *g)
{
    const pc_rt_tensor *x = k->in[0], *w = k->in[1], *y = k->out[0];
    memset(g, 0, sizeof *g);
    g->nhwc = is_nhwc(k->node);
    if (x->rank < 3 || x->rank > 4 || w->rank != x->rank || y->rank != x->rank)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                            "the runtime's ConvTranspose takes one or two spatial axes (X has rank %d)",
                            (int)x->rank);
    int nsp = x->rank - 2;
    g->n = x->dims[0];
    g->c = g->nhwc ? x->dims[x->rank - 1] : x->dims[1];
    g->h = nsp == 2 ? x->dims[g->nhwc ? 1 : 2] : 1;
    g->w = x->dims[g->nhwc ? nsp : 1 + nsp];
    g->m = g->nhwc ? y->dims[y->rank - 1] : y->dims[1];
    g->oh = nsp == 2 ? y->dims[g->nhwc ? 1 : 2] : 1;
    g->ow = y->dims[g->nhwc ? nsp : 1 + nsp];
    g->kh = nsp == 2 ? w->dims[2] : 1;
    g->kw = w->dims[1 + nsp];
    g->group = pc_node_attr_int(k->node, "group", 1);
    int64_t st[2], dl[2];
    if (!spatial(k->node, "strides", nsp, 1, st) || !spatial(k->node, "dilations", nsp, 1, dl))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "strides/dilations need one value per spatial axis");
    g->sh = st[0], g->sw = st[1], g->dh = dl[0], g->dw = dl[1];
    if (g->group < 1 || g->c % g->group || w->dims[0] != g->c || w->dims[1] * g->group != g->m)
        return pc_error_set(
            k->err, PC_ERR_SHAPE,
            "W [%lld, %lld, ...] does not fit %lld input and %lld output channels in %lld groups",
            (long long)w->dims[0], (long long)w->dims[1], (long long)g->c, (long long)g->m,
            (long long)g->group);
    if (g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1)
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "strides and dilations must be >= 1");
    g->cg = g->c / g->group;
    g->mg = g->m / g->group;
    /* the start padding: explicit pads, else what output_shape / SAME_* leave, the odd one at the end for
     * SAME_UPPER and at the start otherwise (as the reference splits it) */
    const char *ap = pc_node_attr_string(k->node, "auto_pad", "NOTSET");
    size_t np, nos;
    const int64_t *pads = pc_rt_attr_ints(k->node, "pads", &np);
    const int64_t *os = pc_rt_attr_ints(k->node, "output_shape", &nos);
    int64_t opad[2];
    if (!spatial(k->node, "output_padding", nsp, 0, opad))
        return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "output_padding needs one value per spatial axis");
    int64_t in[2] = {g->h, g->w}, out[2] = {g->oh, g->ow}, kk[2] = {g->kh, g->kw}, s[2] = {g->sh, g->sw},
            d[2] = {g->dh, g->dw}, pb[2] = {0, 0};
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    for (int i = 2 - nsp; i < 2; i++) {
        int64_t full = s[i] * (in[i] - 1) + opad[i] + (kk[i] - 1) * d[i] + 1;
        if (os || same) {
            int64_t total = full - out[i];
            if (total < 0)
                pb[i] = 0;
            else
                pb[i] = strcmp(ap, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
        } else if (pads) {
            if (np != 2 * (size_t)nsp)
                return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "pads has %zu values, expected %d", np,
                                    2 * nsp);
            pb[i] = pads[i - (2 - nsp)];
        }
    }
    g->ph = pb[0], g->pw = pb[1];
    return PC_OK;
}

static pc_status convt_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    if (k->n_in < 2 || !k->in[0] || !k->in[1])
        return pc_error_set(k->err, PC_ERR_ARITY, "ConvTranspose needs X and W");
    for (uint32_t i = 0; i < k->n_in && i < 3; i++)
        if (k->in[i] && k->in[i]->dtype != PC_DTYPE_FLOAT)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                "input %u is %s: the runtime's ConvTranspose is float32", i,
                                pc_dtype_name(k->in[i]->dtype));
    conv_geom g;
    pc_status st = convt_geometry(k, &g);
    if (st != PC_OK) return st;
    if (k->n_in > 2 && k->in[2] && (k->in[2]->rank != 1 || k->in[2]->dims[0] != g.m))
        return pc_error_set(k->err, PC_ERR_SHAPE, "bias B must be [%lld]", (long long)g.m);
    *scratch = (size_t)(g.mg * g.kh * g.kw) * (size_t)(g.h * g.w) * sizeof(float);
    return PC_OK;
}

static pc_status convt_run(pc_rt_kernel_ctx *k)
{
    conv_geom g;
    pc_status st = convt_geometry(k, &g);
    if (st != PC_OK) return st;
    const float *x = k->in[0]->data, *w = k->in[1]->data;
    const float *bias = k->n_in > 2 && k->in[2] ? k->in[2]->data : NULL;
    float *y = k->out[0]->data, *cols = k->scratch;
    int64_t hw = g.h * g.w, ohw = g.oh * g.ow, kk = g.kh * g.kw, rows = g.mg * kk;
    for (int64_t n = 0; n < g.n; n++) {
        const float *xn = x + n * g.c * hw;
        float *yn = y + n * g.m * ohw;
        memset(yn, 0, (size_t)(g.m * ohw) * sizeof *yn);
        for (int64_t gi = 0; gi < g.group; gi++) {
            int64_t c0 = gi * g.cg, m0 = gi * g.mg;
            const float *wg = w + c0 * rows; /* W [C, Mg, kh, kw]: group gi's rows are [Cg, Mg * kk] */
            if (g.nhwc)
                pc_rt_sgemm(k, false, false, hw, rows, g.cg, 1.0f, xn + c0, g.c, wg, rows, 0.0f, cols, rows);
            else
                pc_rt_sgemm(k, true, false, rows, hw, g.cg, 1.0f, wg, rows, xn + c0 * hw, hw, 0.0f, cols, hw);
            /* col2im: input pixel (ih, iw), kernel offset (a, b) lands on (ih*sh - ph + a*dh, iw*sw - pw +
             * b*dw) */
            for (int64_t m = 0; m < g.mg; m++)
                for (int64_t a = 0; a < g.kh; a++)
                    for (int64_t b = 0; b < g.kw; b++) {
                        int64_t r = (m * g.kh + a) * g.kw + b;
                        for (int64_t ih = 0; ih < g.h; ih++) {
                            int64_t oh = ih * g.sh - g.ph + a * g.dh;
                            if (oh < 0 || oh >= g.oh) continue;
                            for (int64_t iw = 0; iw < g.w; iw++) {
                                int64_t ow = iw * g.sw - g.pw + b * g.dw;
                                if (ow < 0 || ow >= g.ow) continue;
                                float v =
                                    g.nhwc ? cols[(ih * g.w + iw) * rows + r] : cols[r * hw + ih * g.w + iw];
                                if (g.nhwc)
                                    yn[(oh * g.ow + ow) * g.m + m0 + m] += v;
                                else
                                    yn[(m0 + m) * ohw + oh * g.ow + ow] += v;
                            }
                        }
                    }
        }
        if (bias) {
            if (g.nhwc)
                for (int64_t p = 0; p < ohw; p++)
                    for (int64_t m = 0; m < g.m; m++)
                        yn[p * g.m + m] += bias[m];
            else
                for (int64_t m = 0; m < g.m; m++)
                    for (int64_t p = 0; p < ohw; p++)
                        yn[m * ohw + p] += bias[m];
        }
    }
    return PC_OK;
}

/* ---- MatMul, Gemm ---- */

static pc_status f32_inputs(const pc_rt_kernel_ctx *k, uint32_t n, const char *op)
{
    for (uint32_t i = 0; i < n && i < k->n_in; i++)
        if (k->in[i] && k->in[i]->dtype != PC_DTYPE_FLOAT)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "input %u is %s: the runtime's %s is float32", i,
                                pc_dtype_name(k->in[i]->dtype), op);
    return PC_OK;
}

static pc_status matmul_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    (void)scratch;
    if (k->n_in != 2 || !k->in[0] || !k->in[1])
        return pc_error_set(k->err, PC_ERR_ARITY, "MatMul needs A and B");
    return f32_inputs(k, 2, "MatMul");
}

/* numpy.matmul: 1-D A is a row, 1-D B a column; batch axes broadcast. B without batch axes (weights) folds
 * A's batch into its rows: one sgemm. */
static pc_status matmul_run(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *a = k->in[0], *b = k->in[1];
    pc_rt_tensor *y = k->out[0];
    int64_t m = a->rank > 1 ? a->dims[a->rank - 2] : 1, kk = a->dims[a->rank - 1];
    int64_t n = b->rank > 1 ? b->dims[b->rank - 1] : 1;
    int64_t kb = b->rank > 1 ? b->dims[b->rank - 2] : b->dims[0];
    if (kb != kk)
        return pc_error_set(k->err, PC_ERR_SHAPE, "inner dimensions differ (%lld and %lld)", (long long)kk,
                            (long long)kb);
    float *yd = y->data;
    if (y->n == 0) return PC_OK;
    if (kk == 0) {
        memset(yd, 0, y->n * sizeof *yd);
        return PC_OK;
    }
    int32_t nb = y->rank - (a->rank > 1) - (b->rank > 1); /* batch axes of the output */
    if (b->rank <= 2) {
        int64_t rows = (int64_t)(y->n / (uint64_t)n);
        pc_rt_sgemm(k, false, false, rows, n, kk, 1.0f, a->data, kk, b->data, n, 0.0f, yd, n);
        return PC_OK;
    }
    /* batch strides of A and B over the output's batch axes (0 where broadcast) */
    int64_t sa[PC_MAX_RANK] = {0}, sb[PC_MAX_RANK] = {0}, bd[PC_MAX_RANK], cnt[PC_MAX_RANK] = {0};
    int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank - 2;
    int64_t mat_a = m * kk, mat_b = kk * n, s = mat_a;
    for (int32_t d = ba - 1; d >= 0; d--) {
        sa[nb - ba + d] = a->dims[d] == 1 ? 0 : s;
        s *= a->dims[d];
    }
    s = mat_b;
    for (int32_t d = bb - 1; d >= 0; d--) {
        sb[nb - bb + d] = b->dims[d] == 1 ? 0 : s;
        s *= b->dims[d];
    }
    uint64_t batches = 1;
    for (int32_t d = 0; d < nb; d++) {
        bd[d] = y->dims[d];
        batches *= (uint64_t)bd[d];
    }
    const float *ad = a->data, *bdta = b->data;
    int64_t oa = 0, ob = 0;
    for (uint64_t t = 0; t < batches; t++) {
        pc_rt_sgemm(k, false, false, m, n, kk, 1.0f, ad + oa, kk, bdta + ob, n, 0.0f, yd + (int64_t)t * m * n,
                    n);
        for (int32_t d = nb - 1; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++cnt[d] < bd[d]) break;
            oa -= sa[d] * bd[d];
            ob -= sb[d] * bd[d];
            cnt[d] = 0;
        }
    }
    return PC_OK;
}

static pc_status gemm_prepare(pc_rt_kernel_ctx *k, size_t *scratch)
{
    (void)scratch;
    if (k->n_in < 2 || !k->in[0] || !k->in[1] || k->in[0]->rank != 2 || k->in[1]->rank != 2)
        return pc_error_set(k->err, PC_ERR_SHAPE, "Gemm needs 2-D A and B");
    if (k->opset < 7 && pc_node_attr_int(k->node, "broadcast", 0) == 0 && k->n_in > 2 && k->in[2] &&
        k->in[2]->n != k->out[0]->n)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "Gemm-6 without broadcast and a C of another shape");
    if (k->n_in > 2 && k->in[2] && k->in[2]->rank > 2)
        return pc_error_set(k->err, PC_ERR_SHAPE, "C has rank %d, at most 2", (int)k->in[2]->rank);
    pc_status st = f32_inputs(k, 3, "Gemm");
    if (st == PC_OK) st = pc_rt_activation_check(k->node, k->err);
    return st;
}

static pc_status gemm_run(pc_rt_kernel_ctx *k)
{
    const pc_rt_tensor *a = k->in[0], *b = k->in[1], *c = k->n_in > 2 ? k->in[2] : NULL;
    pc_rt_tensor *y = k->out[0];
    bool ta = pc_node_attr_int(k->node, "transA", 0) != 0, tb = pc_node_attr_int(k->node, "transB", 0) != 0;
    float alpha = pc_node_attr_float(k->node, "alpha", 1.0f),
          beta = pc_node_attr_float(k->node, "beta", 1.0f);
    int64_t m = ta ? a->dims[1] : a->dims[0], kk = ta ? a->dims[0] : a->dims[1],
            n = tb ? b->dims[0] : b->dims[1];
    if ((tb ? b->dims[1] : b->dims[0]) != kk || y->rank != 2 || y->dims[0] != m || y->dims[1] != n)
        return pc_error_set(k->err, PC_ERR_SHAPE, "A, B and Y do not make a %lld x %lld x %lld product",
                            (long long)m, (long long)kk, (long long)n);
    float *yd = y->data;
    /* Y = beta * C (unidirectional broadcast to [M, N]), then Y += alpha * A' B' */
    if (c && beta != 0.0f) {
        const float *cd = c->data;
        int64_t cm = c->rank == 2 ? c->dims[0] : 1, cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
        if ((cm != 1 && cm != m) || (cn != 1 && cn != n))
            return pc_error_set(k->err, PC_ERR_SHAPE, "C does not broadcast to [%lld, %lld]", (long long)m,
                                (long long)n);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                yd[i * n + j] = beta * cd[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
    } else if (y->n) {
        memset(yd, 0, y->n * sizeof *yd);
    }
    if (m && n && kk)
        pc_rt_sgemm(k, ta, tb, m, n, kk, alpha, a->data, a->dims[1], b->data, b->dims[1], 1.0f, yd, n);
    pc_rt_activation_apply(k->node, yd, y->n);
    return PC_OK;
}

const pc_rt_kernel pc_rt_kernels_conv[] = {
    {"", "Conv", 1, 21, RT_F32, conv_prepare, conv_run, 0},
    {PC_MS_DOMAIN, "FusedConv", 1, 1, RT_F32, conv_prepare, conv_run, 0},
    {PC_NHWC_DOMAIN, "Conv", 1, 21, RT_F32, conv_prepare, conv_run, 0},
    {PC_NHWC_DOMAIN, "FusedConv", 1, 21, RT_F32, conv_prepare, conv_run, 0},
    {"", "ConvTranspose", 1, 21, RT_F32, convt_prepare, convt_run, 0},
    {PC_NHWC_DOMAIN, "ConvTranspose", 1, 21, RT_F32, convt_prepare, convt_run, 0},
    {"", "MatMul", 1, 21, RT_F32, matmul_prepare, matmul_run, 0},
    {"", "Gemm", 6, 21, RT_F32, gemm_prepare, gemm_run, 0},
    {PC_MS_DOMAIN, "FusedGemm", 1, 1, RT_F32, gemm_prepare, gemm_run, 0},
};
const size_t pc_rt_n_kernels_conv = sizeof pc_rt_kernels_conv / sizeof pc_rt_kernels_conv[0];
