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
 * whole, it went to memory and back and took longer than the gemm). */
enum { STRIP_BYTES = 256 * 1024 };

static int64_t strip_rows(const conv_geom *g)
{
    int64_t per_row = g->cg * g->kh * g->kw * g->ow * (int64_t)sizeof(float);
    int64_t rows = per_row > 0 ? STRIP_BYTES / per_row : g->oh;
    return rows < 1 ? 1 : rows > g->oh ? g->oh : rows;
}

/* NCHW depthwise at stride 1 runs on a padded copy of each channel (depthwise_nchw_s1). */
static bool depthwise_wide(const conv_geom *g)
{
    return conv_depthwise(g) && !g->nhwc && g->sh == 1 && g->sw == 1;
}

/* Scratch: per thread one strip of im2col of one group (floats), or the padded plane and wide output of a
 * stride-1 NCHW depthwise conv; plus NHWC's repacked weights. */
static size_t conv_scratch(const conv_geom *g, int threads)
{
    size_t cols = 0;
    if (!conv_pointwise(g) && !conv_depthwise(g))
        cols = (size_t)(g->cg * g->kh * g->kw) * (size_t)(strip_rows(g) * g->ow) * (size_t)threads;
    if (depthwise_wide(g)) {
        size_t hp = (size_t)(g->oh + (g->kh - 1) * g->dh), wp = (size_t)(g->ow + (g->kw - 1) * g->dw);
        cols = (hp + (size_t)g->oh) * wp * (size_t)threads;
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
static void im2col_nchw(const conv_geom *g, const float *x, int64_t r0, int64_t rows, float *col)
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

static void depthwise_nchw(const conv_geom *g, const float *x, const float *w, float *y, int64_t c_lo,
                           int64_t c_hi)
{
    for (int64_t c = c_lo; c < c_hi; c++) {
        const float *xc = x + c * g->h * g->w, *wc = w + c * g->kh * g->kw;
        float *yc = y + c * g->oh * g->ow;
        memset(yc, 0, (size_t)(g->oh * g->ow) * sizeof *yc);
        for (int64_t a = 0; a < g->kh; a++)
            for (int64_t b = 0; b < g->kw; b++) {
                float wv = wc[a * g->kw + b];
                int64_t off = b * g->dw - g->pw;
                int64_t lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
                int64_t hi = g->w - 1 - off < 0 ? -1 : (g->w - 1 - off) / g->sw;
                if (hi > g->ow - 1) hi = g->ow - 1;
                for (int64_t oh = 0; oh < g->oh; oh++) {
                    int64_t ih = oh * g->sh - g->ph + a * g->dh;
                    if (ih < 0 || ih >= g->h) continue;
                    const float *xr = xc + ih * g->w + off;
                    float *yr = yc + oh * g->ow;
                    if (g->sw == 1)
                        for (int64_t ow = lo; ow <= hi; ow++)
                            yr[ow] += xr[ow] * wv;
                    else
                        for (int64_t ow = lo; ow <= hi; ow++)
                            yr[ow] += xr[ow * g->sw] * wv;
                }
            }
    }
}

/* NCHW depthwise at stride 1, one channel at a time: the channel is copied into a zero-padded plane of width
 * wp = ow + (kw - 1) dw, and each tap adds w * (the plane shifted by the tap) to a "wide" output of wp
 * columns per row in one long contiguous loop — the columns past ow are junk, dropped when the rows are
 * copied out. A 5x5 kernel over a 20x20 plane makes 25 loops of ~480 multiply-adds instead of 500 loops of
 * 20. */
static void depthwise_nchw_s1(const conv_geom *g, const float *x, const float *w, float *y, float *scratch,
                              int64_t c_lo, int64_t c_hi)
{
    int64_t hp = g->oh + (g->kh - 1) * g->dh, wp = g->ow + (g->kw - 1) * g->dw;
    float *xp = scratch, *yw = scratch + hp * wp;
    int64_t span = (g->oh - 1) * wp + g->ow; /* the wide output's elements up to the last valid one */
    memset(xp, 0, (size_t)(hp * wp) * sizeof *xp);
    for (int64_t c = c_lo; c < c_hi; c++) {
        const float *xc = x + c * g->h * g->w, *wc = w + c * g->kh * g->kw;
        /* the input at rows [ph, ph + h), columns [pw, pw + w) of the plane, clipped to it; the border stays
         * zero from the memset above (only the interior is rewritten per channel) */
        for (int64_t i = 0; i < g->h; i++) {
            int64_t r = i + g->ph;
            if (r >= hp) break;
            int64_t n = g->w < wp - g->pw ? g->w : wp - g->pw;
            if (n > 0) memcpy(xp + r * wp + g->pw, xc + i * g->w, (size_t)n * sizeof *xp);
        }
        memset(yw, 0, (size_t)span * sizeof *yw);
        for (int64_t a = 0; a < g->kh; a++)
            for (int64_t b = 0; b < g->kw; b++) {
                const float wv = wc[a * g->kw + b], *src = xp + a * g->dh * wp + b * g->dw;
                for (int64_t i = 0; i < span; i++)
                    yw[i] += src[i] * wv;
            }
        float *yc = y + c * g->oh * g->ow;
        for (int64_t oh = 0; oh < g->oh; oh++)
            memcpy(yc + oh * g->ow, yw + oh * wp, (size_t)g->ow * sizeof *yc);
    }
}

/* NHWC depthwise: wt is W repacked [kh, kw, C] so the inner loop runs along the channels; output rows
 * [oh_lo, oh_hi). */
static void depthwise_nhwc(const conv_geom *g, const float *x, const float *wt, float *y, int64_t oh_lo,
                           int64_t oh_hi)
{
    for (int64_t oh = oh_lo; oh < oh_hi; oh++)
        for (int64_t ow = 0; ow < g->ow; ow++) {
            float *yp = y + (oh * g->ow + ow) * g->c;
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
}

/* One image's depthwise conv, split by channels (NCHW; each thread its own slice of scratch for the stride-1
 * form) or by output rows (NHWC). */
typedef struct depthwise_task {
    const conv_geom *g;
    const float *x, *w;
    float *y, *scratch;
    size_t scratch_per_thread; /* floats */
} depthwise_task;

static void depthwise_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const depthwise_task *t = arg;
    if (t->g->nhwc)
        depthwise_nhwc(t->g, t->x, t->w, t->y, lo, hi);
    else if (depthwise_wide(t->g))
        depthwise_nchw_s1(t->g, t->x, t->w, t->y, t->scratch + (size_t)part * t->scratch_per_thread, lo, hi);
    else
        depthwise_nchw(t->g, t->x, t->w, t->y, lo, hi);
}

/* im2col convolution of one image and group, strip by strip of output rows: each strip's columns made in the
 * thread's own slice of scratch and multiplied there by a single-threaded sgemm (threads take whole strips).
 */
typedef struct strip_task {
    const conv_geom *g;
    const float *x, *w, *packed; /* the image; W as given (NCHW) or repacked [M, kh, kw, Cg] (NHWC) */
    float *y, *col;
    int64_t c0, m0, srows, strip_floats;
} strip_task;

static void strip_part(void *arg, int64_t lo, int64_t hi, int part)
{
    const strip_task *t = arg;
    const conv_geom *g = t->g;
    int64_t kcols = g->cg * g->kh * g->kw, ohw = g->oh * g->ow;
    float *col = t->col + (size_t)part * (size_t)t->strip_floats;
    for (int64_t s = lo; s < hi; s++) {
        int64_t r0 = s * t->srows, rows = g->oh - r0 < t->srows ? g->oh - r0 : t->srows, ncols = rows * g->ow;
        if (g->nhwc) {
            im2col_nhwc(g, t->x, t->c0, r0, rows, col);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ncols, (int)g->mg, (int)kcols, 1.0f,
                        col, (int)kcols, t->packed + t->m0 * kcols, (int)kcols, 0.0f,
                        t->y + r0 * g->ow * g->m + t->m0, (int)g->m);
        } else {
            im2col_nchw(g, t->x + t->c0 * g->h * g->w, r0, rows, col);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->mg, (int)ncols, (int)kcols, 1.0f,
                        t->w + t->m0 * kcols, (int)kcols, col, (int)ncols, 0.0f,
                        t->y + t->m0 * ohw + r0 * g->ow, (int)ohw);
        }
    }
}

/* Bias per output channel and the fused activation over one image's output. */
static void conv_epilogue(const pc_rt_kernel_ctx *k, const conv_geom *g, const float *bias, float *y)
{
    int64_t ohw = g->oh * g->ow;
    if (bias) {
        if (g->nhwc)
            for (int64_t p = 0; p < ohw; p++)
                for (int64_t m = 0; m < g->m; m++)
                    y[p * g->m + m] += bias[m];
        else
            for (int64_t m = 0; m < g->m; m++)
                for (int64_t p = 0; p < ohw; p++)
                    y[m * ohw + p] += bias[m];
    }
    pc_rt_activation_apply(k->node, y, (uint64_t)(ohw * g->m));
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
    float *packed =
        g.nhwc ? col + (conv_pointwise(&g) || conv_depthwise(&g) ? 0 : kcols * srows * g.ow) : NULL;
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
    for (int64_t n = 0; n < g.n; n++) {
        const float *xn = x + n * g.c * hw;
        float *yn = y + n * g.m * ohw;
        if (conv_depthwise(&g)) {
            depthwise_task t = {&g, xn, g.nhwc ? packed : w, yn, col, conv_scratch(&g, 1) / sizeof(float)};
            /* a chunk is worth a thread from about 16K multiply-adds */
            int64_t per_item = (g.nhwc ? g.ow * g.c : g.oh * g.ow) * g.kh * g.kw;
            pc_rt_parallel_for(k, g.nhwc ? g.oh : g.c, per_item > 0 ? 16384 / per_item + 1 : 1,
                               depthwise_part, &t);
        } else {
            for (int64_t gi = 0; gi < g.group; gi++) {
                int64_t c0 = gi * g.cg, m0 = gi * g.mg;
                if (g.nhwc && conv_pointwise(&g)) { /* rows are pixels, lda = C */
                    pc_rt_sgemm(k, false, true, ohw, g.mg, kcols, 1.0f, xn + c0, g.c, packed + m0 * kcols,
                                kcols, 0.0f, yn + m0, g.m);
                } else if (conv_pointwise(&g)) {
                    pc_rt_sgemm(k, false, false, g.mg, ohw, kcols, 1.0f, w + m0 * kcols, kcols, xn + c0 * hw,
                                ohw, 0.0f, yn + m0 * ohw, ohw);
                } else {
                    strip_task t = {&g, xn, w, packed, yn, col, c0, m0, srows, kcols * srows * g.ow};
                    pc_rt_parallel_for(k, (g.oh + srows - 1) / srows, 1, strip_part, &t);
                }
            }
        }
        conv_epilogue(k, &g, bias, yn);
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
    {"", "Conv", 1, 21, RT_F32, conv_prepare, conv_run, false},
    {PC_MS_DOMAIN, "FusedConv", 1, 1, RT_F32, conv_prepare, conv_run, false},
    {PC_NHWC_DOMAIN, "Conv", 1, 21, RT_F32, conv_prepare, conv_run, false},
    {PC_NHWC_DOMAIN, "FusedConv", 1, 21, RT_F32, conv_prepare, conv_run, false},
    {"", "ConvTranspose", 1, 21, RT_F32, convt_prepare, convt_run, false},
    {PC_NHWC_DOMAIN, "ConvTranspose", 1, 21, RT_F32, convt_prepare, convt_run, false},
    {"", "MatMul", 1, 21, RT_F32, matmul_prepare, matmul_run, false},
    {"", "Gemm", 6, 21, RT_F32, gemm_prepare, gemm_run, false},
    {PC_MS_DOMAIN, "FusedGemm", 1, 1, RT_F32, gemm_prepare, gemm_run, false},
};
const size_t pc_rt_n_kernels_conv = sizeof pc_rt_kernels_conv / sizeof pc_rt_kernels_conv[0];
