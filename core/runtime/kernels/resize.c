/* The resize family: Resize (ai.onnx 10 and 11-21, and channels-last in com.ms.internal.nhwc) and Upsample
 * (7-9) on float32, and in nearest mode also on uint8 and int8.
 *
 * Semantics are the reference executor's (reference/ops_tensor.c, the oracle of the `runtime` property),
 * which follows the ONNX reference implementation: every output coordinate maps to an input coordinate in
 * double (length_resized is scale * length_original for 'scales', the size for 'sizes'), takes the 2 (4 for
 * cubic) nearest positions of the edge-padded input, and weighs them; nearest picks one of the two by
 * nearest_mode. Resize-10 and Upsample have no coordinate or nearest mode: asymmetric coordinates, and a
 * fractional coordinate rounds down when enlarging and up when shrinking (as ONNX Runtime does). The tap
 * arithmetic below repeats the reference's expression by expression so that nearest picks the same element
 * and a tap that lands exactly on a sample gets the same weight 0 (and is left out, as it is there). A
 * channels-last node reads roi, scales and sizes in NCHW axis order and has ai.onnx's semantics at its
 * domain's opset (the model's import of that domain, else ai.onnx's, as core's shape inference and the
 * reference take it).
 *
 * Speed: the per-axis taps (input offsets premultiplied by the stride, float weights) are computed once per
 * run into scratch memory. The output is walked row by row over its innermost axis; the taps of the outer
 * axes are combined into a list of (offset, weight) per level of an odometer, rebuilt only from the level
 * that moved. A row whose innermost axis is kept (the channels of NHWC, an unchanged W) is a weighted sum of
 * whole input rows, in blocks held in registers; a resized innermost axis gathers 2 or 4 taps per output,
 * after first summing the outer combinations' input rows into one when that is cheaper. A kept innermost axis
 * shorter than BLOCK runs merged with the axis before it (rows of 3 channels would be all overhead). Nearest
 * copies elements (a memcpy per row when the innermost axis is kept). Floats accumulate in float, as ONNX
 * Runtime does; the reference sums in double. Nothing allocates in run. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/runtime/rt_internal.h"

typedef enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC } rs_mode;
typedef enum {
    CT_HALF_PIXEL,
    CT_HALF_PIXEL_SYMMETRIC,
    CT_PYTORCH_HALF_PIXEL,
    CT_ALIGN_CORNERS,
    CT_ASYMMETRIC,
    CT_TF_HALF_PIXEL_FOR_NN,
    CT_TF_CROP_AND_RESIZE
} rs_coord;
/* NR_LEGACY: Resize-10 and Upsample (down when enlarging, up when shrinking) */
typedef enum { NR_ROUND_PREFER_FLOOR, NR_ROUND_PREFER_CEIL, NR_FLOOR, NR_CEIL, NR_LEGACY } rs_nearest;

static const char *const mode_names[] = {"nearest", "linear", "cubic"};
static const char *const coord_names[] = {"half_pixel",        "half_pixel_symmetric", "pytorch_half_pixel",
                                          "align_corners",     "asymmetric",           "tf_half_pixel_for_nn",
                                          "tf_crop_and_resize"};
static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

#define NO_INPUT UINT32_MAX /* scales from the attribute (Upsample before opset 9) */
enum {
    COMBO_LIMIT = 1 << 16
}; /* outer tap combinations held at once (cubic up to rank 8); more is refused */

/* What the node asks for, from its attributes and the shapes of its inputs (known in prepare and in run). */
typedef struct rs_params {
    bool nhwc;
    int64_t opset; /* the ai.onnx semantics */
    rs_mode mode;
    rs_coord coord;
    rs_nearest nearest;
    double cubic_a, extrapolation;
    bool exclude_outside;
    uint32_t scales_at; /* input of 'scales' (NO_INPUT: the attribute) */
    bool use_sizes;     /* 'sizes' (input 3) instead of 'scales' */
    bool upsample;      /* scales below 1 are an error */
} rs_params;

/* One axis in NCHW order, as the reference's plan holds it. */
typedef struct rs_axis {
    int64_t in_len, out_len;
    double scale, length; /* length: the spec's length_resized */
    double roi_lo, roi_hi;
} rs_axis;

/* What one output coordinate reads along one axis: up to 4 input offsets (index * stride) with their nonzero
 * weights. n == 0 with outside: tf_crop_and_resize beyond the input (extrapolation_value); n == 0 without:
 * every weight vanished (the reference leaves such an output 0). */
typedef struct rs_tap {
    int64_t off[4];
    float w[4];
    int32_t n;
    int32_t outside;
} rs_tap;

/* One combination of the taps of the outer axes: an input offset and the product of the weights. */
typedef struct rs_combo {
    int64_t off;
    float w;
    int32_t pad_;
} rs_combo;

/* Where the tables sit in scratch: the taps of every axis (rs_tap, output-length entries each), then those of
 * the merged last two axes (below), the innermost axis' taps again as `most` (1, 2 or 4) rows of offsets and
 * of weights, the combination levels of the outer axes (each bounded by the product of `most` over its
 * axes), and one input row of floats. */
typedef struct rs_layout {
    size_t tap_at[PC_MAX_RANK];   /* rs_tap index of axis d's table */
    size_t level_at[PC_MAX_RANK]; /* rs_combo index of level d */
    size_t n_taps, n_combos, most;
    bool merge_ok;         /* the last two axes may run as one (the innermost is short) */
    size_t n_inner, n_src; /* the longest row: output and input elements */
    size_t off_at, combo_at, w_at, row_at, bytes; /* byte offsets in scratch */
} rs_layout;

/* A kept innermost axis shorter than this (the channels of a thin NHWC tensor) runs merged with the axis
 * before it: per-row overhead would dominate rows that short. Also the block of sum_rows. */
enum { BLOCK = 16 };

/* ---- attributes and inputs */

static int lookup(const char *s, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static bool is_nhwc(const pc_rt_kernel_ctx *k)
{
    return pc_name_eq(k->node->domain, PC_NHWC_DOMAIN);
}

static const pc_rt_tensor *input(const pc_rt_kernel_ctx *k, uint32_t i)
{
    return i < k->n_in ? k->in[i] : NULL;
}

/* NCHW axis l of a tensor of rank r in the node's layout: channels-last keeps C at the end. */
static int32_t physical_axis(bool nhwc, int32_t r, int32_t l)
{
    if (!nhwc) return l;
    return l == 0 ? 0 : l == 1 ? r - 1 : l - 1;
}

static pc_status need_float_list(pc_rt_kernel_ctx *k, uint32_t i, const char *what, uint64_t n_want,
                                 bool any_float)
{
    const pc_rt_tensor *t = input(k, i);
    pc_dtype dt = t->dtype;
    bool ok = dt == PC_DTYPE_FLOAT || (any_float && (dt == PC_DTYPE_DOUBLE || dt == PC_DTYPE_FLOAT16));
    if (!ok)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: input %u '%s' of type %s is not implemented",
                            k->node->op_type, i, what, pc_dtype_name(dt));
    if (t->n != n_want)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: input %u '%s' has %llu entries, %llu expected",
                            k->node->op_type, i, what, (unsigned long long)t->n, (unsigned long long)n_want);
    return PC_OK;
}

/* Reads and checks the attributes and the inputs' types and sizes (not their values). */
static pc_status params_read(pc_rt_kernel_ctx *k, rs_params *p)
{
    const pc_node *node = k->node;
    const char *op = node->op_type;
    memset(p, 0, sizeof *p);
    p->nhwc = is_nhwc(k);
    p->upsample = strcmp(op, "Upsample") == 0;
    p->opset = k->opset;
    if (p->nhwc && p->opset < 1) p->opset = pc_model_opset(node->graph->model, "");
    p->cubic_a = -0.75;
    if (k->n_in < 1 || !k->in[0]) return pc_error_set(k->err, PC_ERR_ARITY, "%s: input 0 is required", op);
    if (k->n_out < 1 || !k->out[0]) return pc_error_set(k->err, PC_ERR_ARITY, "%s: output 0 is required", op);
    const pc_rt_tensor *x = k->in[0], *y = k->out[0];
    int32_t r = x->rank;

    const char *ms = pc_node_attr_string(node, "mode", "nearest");
    bool v11 = !p->upsample && p->opset >= 11;
    int m = lookup(ms, mode_names, v11 ? 3 : 2);
    if (m < 0) return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: 'mode' '%s' is not supported", op, ms);
    p->mode = (rs_mode)m;
    if (!v11) {
        p->coord = CT_ASYMMETRIC;
        p->nearest = NR_LEGACY;
        p->scales_at = p->upsample && p->opset < 9 ? NO_INPUT : 1;
    } else {
        const char *cs = pc_node_attr_string(node, "coordinate_transformation_mode", "half_pixel");
        const char *ns = pc_node_attr_string(node, "nearest_mode", "round_prefer_floor");
        int c = lookup(cs, coord_names, 7), nr = lookup(ns, nearest_names, 4);
        if (c < 0 || (c == CT_HALF_PIXEL_SYMMETRIC && p->opset < 19))
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                "%s: 'coordinate_transformation_mode' '%s' is not supported at opset %lld",
                                op, cs, (long long)p->opset);
        if (nr < 0)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: 'nearest_mode' '%s' is invalid", op, ns);
        p->coord = (rs_coord)c;
        p->nearest = (rs_nearest)nr;
        p->cubic_a = pc_node_attr_float(node, "cubic_coeff_a", -0.75f);
        p->exclude_outside = pc_node_attr_int(node, "exclude_outside", 0) != 0;
        p->extrapolation = pc_node_attr_float(node, "extrapolation_value", 0.0f);
        p->scales_at = 2;
    }

    /* types and ranks */
    if (!(RT_TYPE(x->dtype) & (RT_F32 | RT_U8 | RT_I8)))
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s on %s is not implemented", op,
                            pc_dtype_name(x->dtype));
    if (p->mode != MODE_NEAREST && x->dtype != PC_DTYPE_FLOAT)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: mode '%s' on %s is not implemented", op, ms,
                            pc_dtype_name(x->dtype));
    if (y->dtype != x->dtype)
        return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: output is %s, input %s", op,
                            pc_dtype_name(y->dtype), pc_dtype_name(x->dtype));
    if (r < (p->nhwc ? 3 : 1) || y->rank != r)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: input rank %d, output rank %d (%s needs rank >= %d)",
                            op, (int)r, (int)y->rank, p->nhwc ? "channels-last" : "resizing",
                            p->nhwc ? 3 : 1);

    /* opset 18's additions: only their defaults are implemented */
    if (v11 && p->opset >= 18) {
        if (pc_node_attr_int(node, "antialias", 0) != 0)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: 'antialias' = 1 is not implemented", op);
        if (pc_node_attr(node, "axes"))
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: the 'axes' attribute is not implemented",
                                op);
    }

    /* which inputs give the sizes (the reference's rule: an empty 'scales' is absent, so is an empty 'sizes'
     * next to a non-empty 'scales') */
    if (v11) {
        const pc_rt_tensor *sc = input(k, 2), *sz = input(k, 3);
        bool has_scales = sc && sc->n > 0, has_sizes = sz && (sz->n > 0 || !has_scales);
        if (has_scales == has_sizes)
            return pc_error_set(k->err, PC_ERR_ARITY,
                                "%s: exactly one of 'scales' (non-empty) and 'sizes' must be given", op);
        p->use_sizes = has_sizes;
        if (p->opset >= 18) {
            const char *ps = pc_node_attr_string(node, "keep_aspect_ratio_policy", "stretch");
            static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
            int pol = lookup(ps, policies, 3);
            if (pol < 0)
                return pc_error_set(k->err, PC_ERR_ATTRIBUTE,
                                    "%s: 'keep_aspect_ratio_policy' '%s' is invalid", op, ps);
            if (pol != 0 && has_sizes)
                return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                    "%s: 'keep_aspect_ratio_policy' '%s' is not implemented", op, ps);
        }
        if (p->coord == CT_TF_CROP_AND_RESIZE) {
            if (!input(k, 1))
                return pc_error_set(k->err, PC_ERR_ARITY,
                                    "%s: input 1 'roi' is required by tf_crop_and_resize", op);
            pc_status st = need_float_list(k, 1, "roi", 2 * (uint64_t)r, true);
            if (st != PC_OK) return st;
        }
        if (has_sizes) {
            if (sz->dtype != PC_DTYPE_INT64)
                return pc_error_set(k->err, PC_ERR_UNSUPPORTED, "%s: 'sizes' of type %s is not implemented",
                                    op, pc_dtype_name(sz->dtype));
            if (sz->n != (uint64_t)r)
                return pc_error_set(k->err, PC_ERR_SHAPE, "%s: 'sizes' has %llu entries for rank %d", op,
                                    (unsigned long long)sz->n, (int)r);
            return PC_OK;
        }
        return need_float_list(k, 2, "scales", (uint64_t)r, false);
    }
    if (p->scales_at == NO_INPUT) {
        const pc_attr *a = pc_node_attr(node, "scales");
        if (!a || a->type != PC_ATTR_FLOATS)
            return pc_error_set(k->err, PC_ERR_ATTRIBUTE, "%s: attribute 'scales' (floats) is required", op);
        if (a->n != (size_t)r)
            return pc_error_set(k->err, PC_ERR_SHAPE, "%s: 'scales' has %zu entries for rank %d", op, a->n,
                                (int)r);
        return PC_OK;
    }
    if (!input(k, 1)) return pc_error_set(k->err, PC_ERR_ARITY, "%s: input 1 'scales' is required", op);
    return need_float_list(k, 1, "scales", (uint64_t)r, false);
}

static double float_at(const pc_rt_tensor *t, uint64_t i)
{
    switch (t->dtype) {
    case PC_DTYPE_DOUBLE:
        return ((const double *)t->data)[i];
    case PC_DTYPE_FLOAT16:
        return pc_half_to_double(((const uint16_t *)t->data)[i]);
    default:
        return ((const float *)t->data)[i];
    }
}

/* Whether the values run needs (scales, sizes, roi) are at hand: always in run, for constants in prepare. */
static bool values_known(const pc_rt_kernel_ctx *k, const rs_params *p)
{
    if (p->scales_at != NO_INPUT && !p->use_sizes && !input(k, p->scales_at)->data) return false;
    if (p->use_sizes && !input(k, 3)->data) return false;
    if (p->coord == CT_TF_CROP_AND_RESIZE && !input(k, 1)->data) return false;
    return true;
}

/* The per-axis plan (NCHW order) from the values of scales or sizes and roi, checked against the output's
 * dims as the session set them. */
static pc_status axes_read(pc_rt_kernel_ctx *k, const rs_params *p, rs_axis *ax)
{
    const pc_rt_tensor *x = k->in[0], *y = k->out[0];
    const char *op = k->node->op_type;
    int32_t r = x->rank;
    for (int32_t l = 0; l < r; l++) {
        int64_t len = x->dims[physical_axis(p->nhwc, r, l)];
        ax[l] = (rs_axis){len, len, 1.0, (double)len, 0.0, 1.0};
    }
    if (p->use_sizes) {
        const int64_t *sz = input(k, 3)->data;
        for (int32_t l = 0; l < r; l++) {
            if (sz[l] < 0)
                return pc_error_set(k->err, PC_ERR_SHAPE, "%s: sizes[%d] = %lld is negative", op, (int)l,
                                    (long long)sz[l]);
            if (ax[l].in_len == 0) { /* refused below unless sz[l] is 0 too */
                ax[l].out_len = sz[l];
                continue;
            }
            ax[l].scale = (double)sz[l] / (double)ax[l].in_len;
            ax[l].length = (double)sz[l];
            ax[l].out_len = sz[l];
        }
    } else {
        const float *attr = NULL;
        if (p->scales_at == NO_INPUT) attr = pc_node_attr(k->node, "scales")->floats;
        for (int32_t l = 0; l < r; l++) {
            double s = attr ? (double)attr[l] : float_at(input(k, p->scales_at), (uint64_t)l);
            if (p->upsample && !(s >= 1))
                return pc_error_set(k->err, PC_ERR_VALUE, "%s: scales[%d] = %g is below 1", op, (int)l, s);
            if (!(s > 0) || !isfinite(s))
                return pc_error_set(k->err, PC_ERR_VALUE, "%s: scales[%d] = %g is not positive", op, (int)l,
                                    s);
            double v = floor(s * (double)ax[l].in_len);
            if (v > 0x1p62)
                return pc_error_set(k->err, PC_ERR_SHAPE, "%s: output dimension %d of %.0f", op, (int)l, v);
            ax[l].scale = s;
            ax[l].length = s * (double)ax[l].in_len;
            ax[l].out_len = (int64_t)v;
        }
    }
    if (p->coord == CT_TF_CROP_AND_RESIZE) {
        const pc_rt_tensor *roi = input(k, 1);
        for (int32_t l = 0; l < r; l++) {
            ax[l].roi_lo = float_at(roi, (uint64_t)l);
            ax[l].roi_hi = float_at(roi, (uint64_t)(r + l));
        }
    }
    for (int32_t l = 0; l < r; l++) {
        int32_t d = physical_axis(p->nhwc, r, l);
        if (ax[l].in_len == 0 && ax[l].out_len > 0)
            return pc_error_set(k->err, PC_ERR_SHAPE, "%s: cannot resize the empty axis %d to %lld", op,
                                (int)d, (long long)ax[l].out_len);
        if (y->dims[d] != ax[l].out_len)
            return pc_error_set(k->err, PC_ERR_SHAPE, "%s: output dim %d is %lld, the %s give %lld", op,
                                (int)d, (long long)y->dims[d], p->use_sizes ? "sizes" : "scales",
                                (long long)ax[l].out_len);
    }
    return PC_OK;
}

static pc_status layout_plan(pc_rt_kernel_ctx *k, const rs_params *p, rs_layout *lay)
{
    const pc_rt_tensor *x = k->in[0], *y = k->out[0];
    int32_t r = y->rank;
    size_t level = 1;
    memset(lay, 0, sizeof *lay);
    lay->most = p->mode == MODE_CUBIC ? 4 : p->mode == MODE_LINEAR ? 2 : 1;
    lay->merge_ok = r >= 2 && y->dims[r - 1] < BLOCK;
    lay->n_inner = (size_t)y->dims[r - 1];
    lay->n_src = (size_t)x->dims[r - 1];
    for (int32_t d = 0; d < r; d++) {
        lay->tap_at[d] = lay->n_taps;
        lay->n_taps += (size_t)y->dims[d];
    }
    for (int32_t d = 0; d + 1 < r; d++) {
        level *= lay->most;
        lay->level_at[d] = lay->n_combos;
        lay->n_combos += level;
        if (lay->n_combos > COMBO_LIMIT)
            return pc_error_set(k->err, PC_ERR_UNSUPPORTED,
                                "%s: mode '%s' over %d axes needs more than %d tap combinations",
                                k->node->op_type, mode_names[p->mode], (int)r, (int)COMBO_LIMIT);
    }
    /* the tensors' sizes bound every count here, so only the byte sizes can overflow */
    bool ok = true;
    if (lay->merge_ok) {
        ok = pc_size_mul(lay->n_inner, (size_t)y->dims[r - 2], &lay->n_inner) &&
             pc_size_mul(lay->n_src, (size_t)x->dims[r - 2], &lay->n_src);
        lay->n_taps += lay->n_inner; /* the merged axes' taps */
    }
    size_t tap_bytes = 0, inner = 0, off_bytes = 0, w_bytes = 0, combo_bytes = 0, row_bytes = 0;
    ok = ok && pc_size_mul(lay->n_taps, sizeof(rs_tap), &tap_bytes) &&
         pc_size_mul(lay->n_inner, lay->most, &inner) && pc_size_mul(inner, sizeof(int64_t), &off_bytes) &&
         pc_size_mul(inner, sizeof(float), &w_bytes) &&
         pc_size_mul(lay->n_combos, sizeof(rs_combo), &combo_bytes) &&
         pc_size_mul(lay->n_src, sizeof(float), &row_bytes) && tap_bytes <= SIZE_MAX / 8 &&
         off_bytes <= SIZE_MAX / 8 && w_bytes <= SIZE_MAX / 8 && combo_bytes <= SIZE_MAX / 8 &&
         row_bytes <= SIZE_MAX / 8;
    if (!ok)
        return pc_error_set(k->err, PC_ERR_SHAPE, "%s: the tap tables' size overflows", k->node->op_type);
    /* 8-byte items first, then the floats */
    lay->off_at = tap_bytes;
    lay->combo_at = lay->off_at + off_bytes;
    lay->w_at = lay->combo_at + combo_bytes;
    lay->row_at = lay->w_at + w_bytes;
    lay->bytes = lay->row_at + (p->mode == MODE_NEAREST ? 0 : row_bytes);
    return PC_OK;
}

static pc_status resize_prepare(pc_rt_kernel_ctx *k, size_t *scratch_bytes)
{
    *scratch_bytes = 0;
    rs_params p;
    rs_axis ax[PC_MAX_RANK];
    rs_layout lay;
    pc_status st = params_read(k, &p);
    if (st != PC_OK) return st;
    if (values_known(k, &p) && (st = axes_read(k, &p, ax)) != PC_OK) return st;
    if ((st = layout_plan(k, &p, &lay)) != PC_OK) return st;
    *scratch_bytes = lay.bytes;
    return PC_OK;
}

/* ---- taps: the reference's resize_tap_at, expression by expression */

static void cubic_coeffs(double r, double A, double *c)
{
    double t = r + 1, u = 1 - r, v = 2 - r;
    c[0] = ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * u - (A + 3)) * u * u + 1;
    c[3] = ((A * v - 5 * A) * v + 8 * A) * v - 4 * A;
}

static void tap_at(const rs_params *p, const rs_axis *a, int64_t x, int64_t stride, rs_tap *t)
{
    int64_t in_len = a->in_len;
    double len0 = (double)in_len, xr = (double)x, out_w = a->length, xo;
    t->n = 0;
    t->outside = 0;
    switch (p->coord) {
    case CT_ALIGN_CORNERS:
        xo = out_w == 1 ? 0 : xr * (len0 - 1) / (out_w - 1);
        break;
    case CT_ASYMMETRIC:
        xo = xr * len0 / a->length;
        break;
    case CT_TF_HALF_PIXEL_FOR_NN:
        xo = (xr + 0.5) * len0 / a->length;
        break;
    case CT_PYTORCH_HALF_PIXEL:
        xo = out_w > 1 ? (xr + 0.5) * len0 / a->length - 0.5 : 0;
        break;
    case CT_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)a->out_len / a->length, center = len0 / 2;
        xo = center * (1 - adjustment) + (xr + 0.5) * len0 / a->length - 0.5;
        break;
    }
    case CT_TF_CROP_AND_RESIZE: {
        double lo = a->roi_lo, hi = a->roi_hi, span = (double)(in_len - 1);
        xo = out_w == 1 ? (hi - lo) * span / 2 : xr * (hi - lo) * span / (out_w - 1);
        xo += lo * span;
        if (!(xo >= 0 && xo <= span)) {
            t->outside = 1;
            return;
        }
        break;
    }
    default:
        xo = (xr + 0.5) * len0 / a->length - 0.5;
        break;
    }
    /* far outside the input every tap reads the edge anyway: keeps the conversion to int64 defined */
    if (isnan(xo)) xo = 0;
    if (xo < -len0 - 8) xo = floor(-len0 - 8);
    if (xo > 2.0 * len0 + 8) xo = floor(2.0 * len0 + 8);
    double fl = floor(xo), ratio = xo == fl ? 1.0 : xo - fl;
    int64_t i0 = (int64_t)fl - (xo == fl ? 1 : 0); /* the tap left of xo */
    int n = p->mode == MODE_CUBIC ? 4 : 2, pad = n == 4 ? 2 : 1;
    int64_t first = n == 4 ? i0 - 1 : i0;
    if (first < -pad) first = -pad;
    if (first + n - 1 > in_len - 1 + pad) first = in_len - 1 + pad - (n - 1);
    double c[4] = {0, 0, 0, 0};
    if (p->mode == MODE_NEAREST) {
        bool right = true; /* an integral xo (ratio 1) is exactly the right tap */
        if (ratio < 1.0) switch (p->nearest) {
            case NR_ROUND_PREFER_FLOOR:
                right = ratio > 0.5;
                break;
            case NR_ROUND_PREFER_CEIL:
                right = ratio >= 0.5;
                break;
            case NR_FLOOR:
                right = false;
                break;
            case NR_CEIL:
                right = true;
                break;
            default:
                right = a->scale < 1;
                break;
            }
        c[0] = right ? 0 : 1;
        c[1] = right ? 1 : 0;
    } else if (p->mode == MODE_LINEAR) {
        c[0] = 1 - ratio;
        c[1] = ratio;
    } else {
        cubic_coeffs(ratio, p->cubic_a, c);
    }
    if (p->exclude_outside && p->mode != MODE_NEAREST) { /* drop taps outside the input and renormalize */
        double sum = 0;
        for (int j = 0; j < n; j++) {
            if (first + j < 0 || first + j >= in_len) c[j] = 0;
            sum += c[j];
        }
        for (int j = 0; j < n; j++)
            c[j] /= sum;
    }
    for (int j = 0; j < n; j++) {
        if (c[j] == 0) continue;
        int64_t idx = first + j < 0 ? 0 : first + j > in_len - 1 ? in_len - 1 : first + j;
        t->off[t->n] = idx * stride;
        t->w[t->n] = (float)c[j];
        t->n++;
    }
}

/* ---- rows */

/* The innermost axis' taps as `most` rows of (offset, weight) per output position, every weight nonzero: a
 * tap with fewer taps repeats its own in halves or quarters. w x / 2 + w x / 2 is exactly w x (the halving
 * only moves the exponent), so the sums are those of the taps, infinities and NaN included, where a zero
 * weight on a neighbour would turn an infinite neighbour into NaN. The sums run pairwise, ((e0 + e1) + (e2 +
 * e3)), so that the halves and quarters meet first. Outside and weightless positions get offset 0 and are
 * overwritten afterwards. */
static void inner_spread(const rs_tap *t, size_t n, size_t most, int64_t *off, float *w)
{
    for (size_t o = 0; o < n; o++) {
        int32_t m = t[o].n;
        for (size_t j = 0; j < most; j++) {
            /* entry j repeats tap src with weight share */
            int32_t src = 0;
            float share = 1.0f;
            if (m == 0) {
                share = 0.0f;
            } else if ((size_t)m == most) {
                src = (int32_t)j;
            } else if (most == 2 || m == 1) { /* one tap in 2 halves or 4 quarters */
                share = most == 2 ? 0.5f : 0.25f;
            } else if (m == 2) { /* taps 0, 0, 1, 1 in halves */
                src = (int32_t)j / 2;
                share = 0.5f;
            } else { /* m == 3: taps 0, 1, 2, 2, the last in halves */
                src = j < 2 ? (int32_t)j : 2;
                share = j < 2 ? 1.0f : 0.5f;
            }
            off[j * n + o] = m ? t[o].off[src] : 0;
            w[j * n + o] = m ? t[o].w[src] * share : 0.0f;
        }
    }
}

/* The innermost axis of the row and how to run it. */
typedef struct rs_inner {
    const rs_tap *tap; /* per position: outside and weightless ones */
    const int64_t *off;
    const float *w; /* `most` rows of n */
    int64_t n, n_src;
    size_t most;
    bool identity; /* not resized: position o reads o with weight 1 */
    bool special;  /* some position is outside or weightless */
} rs_inner;

/* The outer axes' combinations for a row, or that every output of the row is extrapolated (outside) or 0
 * (none: a tap without weight). */
typedef struct rs_outer {
    const rs_combo *combo;
    size_t n;
    bool outside, none;
} rs_outer;

/* y[0..n) = sum over the combinations of w * x[off + 0..n): blocks of BLOCK held in registers across the
 * combinations, so that y is written once. */
static void sum_rows(float *restrict y, const float *x, const rs_combo *cb, size_t n_cb, int64_t n)
{
    int64_t o = 0;
    for (; o + BLOCK <= n; o += BLOCK) {
        float acc[BLOCK];
        const float *xs = x + cb[0].off + o;
        for (int i = 0; i < BLOCK; i++)
            acc[i] = cb[0].w * xs[i];
        for (size_t j = 1; j < n_cb; j++) {
            const float w = cb[j].w, *xj = x + cb[j].off + o;
            for (int i = 0; i < BLOCK; i++)
                acc[i] += w * xj[i];
        }
        memcpy(y + o, acc, sizeof acc);
    }
    for (; o < n; o++) {
        float a = cb[0].w * x[cb[0].off + o];
        for (size_t j = 1; j < n_cb; j++)
            a += cb[j].w * x[cb[j].off + o];
        y[o] = a;
    }
}

/* y (+)= w * the innermost taps over xs, `most` (2 or 4) taps per output (the pairwise sum of inner_spread)
 */
#define TAPS_2 (w0[o] * xs[o0[o]] + w1[o] * xs[o1[o]])
#define TAPS_4 ((w0[o] * xs[o0[o]] + w1[o] * xs[o1[o]]) + (w2[o] * xs[o2[o]] + w3[o] * xs[o3[o]]))
#define GATHER(TAPS)                                                                                         \
    do {                                                                                                     \
        if (first)                                                                                           \
            for (int64_t o = 0; o < n; o++)                                                                  \
                y[o] = w * TAPS;                                                                             \
        else                                                                                                 \
            for (int64_t o = 0; o < n; o++)                                                                  \
                y[o] += w * TAPS;                                                                            \
    } while (0)

static void gather_taps(float *restrict y, const float *restrict xs, float w, const rs_inner *in, bool first)
{
    int64_t n = in->n;
    const int64_t *o0 = in->off, *o1 = o0 + n;
    const float *w0 = in->w, *w1 = w0 + n;
    if (in->most == 2) {
        GATHER(TAPS_2);
        return;
    }
    const int64_t *o2 = o1 + n, *o3 = o2 + n;
    const float *w2 = w1 + n, *w3 = w2 + n;
    GATHER(TAPS_4);
}

/* A float row. Several combinations over a resized innermost axis: their input rows are first summed into
 * one (`src`, contiguous and vectorizable), which the taps then read once, unless the input row is much
 * longer than the output's (a strong downscale reads few of its elements). */
static void row_f32(float *restrict y, const float *x, const rs_outer *outer, const rs_inner *in, float *src)
{
    if (in->identity) {
        if (outer->n == 1 && outer->combo[0].w == 1.0f)
            memcpy(y, x + outer->combo[0].off, (size_t)in->n * sizeof *y);
        else
            sum_rows(y, x, outer->combo, outer->n, in->n);
    } else if (outer->n > 1 && (uint64_t)in->n_src <= (uint64_t)(outer->n - 1) * in->most * (uint64_t)in->n) {
        sum_rows(src, x, outer->combo, outer->n, in->n_src);
        gather_taps(y, src, 1.0f, in, true);
    } else {
        for (size_t j = 0; j < outer->n; j++)
            gather_taps(y, x + outer->combo[j].off, outer->combo[j].w, in, j == 0);
    }
}

/* Nearest: a copy of one element per output (one combination, every tap one offset with weight 1). */
#define NEAREST_ROW(name, T)                                                                                 \
    static void name(T *restrict y, const T *restrict xs, const rs_inner *in)                                \
    {                                                                                                        \
        if (in->identity) {                                                                                  \
            memcpy(y, xs, (size_t)in->n * sizeof *y);                                                        \
            return;                                                                                          \
        }                                                                                                    \
        const int64_t *off = in->off;                                                                        \
        for (int64_t o = 0; o < in->n; o++)                                                                  \
            y[o] = xs[off[o]];                                                                               \
    }
NEAREST_ROW(row_nearest_32, uint32_t)
NEAREST_ROW(row_nearest_8, uint8_t)

/* The positions of a row whose innermost tap is outside (extrapolation) or weightless (0); all: every
 * position, outside when `outer_outside` (an outer axis is), else by the innermost tap. */
#define FIX_ROW(name, T)                                                                                     \
    static void name(T *y, const rs_inner *in, bool all, bool outer_outside, T extrap)                       \
    {                                                                                                        \
        for (int64_t o = 0; o < in->n; o++)                                                                  \
            if (all || in->tap[o].n == 0) y[o] = outer_outside || in->tap[o].outside ? extrap : (T)0;        \
    }
FIX_ROW(fix_row_32, uint32_t)
FIX_ROW(fix_row_8, uint8_t)

/* The extrapolation value as the reference stores it: float rounding, or for integers truncation toward zero
 * (NaN 0, saturated to int64) wrapped to the type's width. */
static uint32_t extrap_bits(pc_dtype dt, double v)
{
    if (dt == PC_DTYPE_FLOAT) {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        return b;
    }
    int64_t i = isnan(v)                      ? 0
                : v >= 9223372036854775807.0  ? INT64_MAX
                : v <= -9223372036854775808.0 ? INT64_MIN
                                              : (int64_t)v;
    return (uint32_t)(uint8_t)(uint64_t)i;
}

static void row_run(const pc_rt_tensor *x, void *yp, size_t es, const rs_outer *outer, const rs_inner *in,
                    bool nearest, uint32_t ext, float *src)
{
    if (outer->outside || outer->none) {
        if (es == 4)
            fix_row_32(yp, in, true, outer->outside, ext);
        else
            fix_row_8(yp, in, true, outer->outside, (uint8_t)ext);
        return;
    }
    if (!nearest)
        row_f32(yp, x->data, outer, in, src);
    else if (es == 4)
        row_nearest_32(yp, (const uint32_t *)x->data + outer->combo[0].off, in);
    else
        row_nearest_8(yp, (const uint8_t *)x->data + outer->combo[0].off, in);
    if (in->special) {
        if (es == 4)
            fix_row_32(yp, in, false, false, ext);
        else
            fix_row_8(yp, in, false, false, (uint8_t)ext);
    }
}

static pc_status resize_run(pc_rt_kernel_ctx *k)
{
    rs_params p;
    rs_axis ax[PC_MAX_RANK];
    rs_layout lay;
    pc_status st = params_read(k, &p);
    if (st != PC_OK || (st = axes_read(k, &p, ax)) != PC_OK || (st = layout_plan(k, &p, &lay)) != PC_OK)
        return st;
    const pc_rt_tensor *x = k->in[0];
    pc_rt_tensor *y = k->out[0];
    if (y->n == 0) return PC_OK;
    if (k->scratch_bytes < lay.bytes || !k->scratch)
        return pc_error_set(k->err, PC_ERR_INTERNAL, "%s: scratch of %zu bytes, %zu needed", k->node->op_type,
                            k->scratch_bytes, lay.bytes);
    int32_t r = y->rank, last = r - 1;
    char *scratch = k->scratch;
    rs_tap *taps = (rs_tap *)(void *)scratch;
    rs_combo *combos = (rs_combo *)(void *)(scratch + lay.combo_at);
    float *src = p.mode == MODE_NEAREST ? NULL : (float *)(void *)(scratch + lay.row_at);

    /* per-axis taps in the physical layout */
    int64_t stride = 1;
    for (int32_t d = last; d >= 0; d--) {
        int32_t l = p.nhwc ? (d == 0 ? 0 : d == last ? 1 : d + 1) : d;
        rs_tap *t = taps + lay.tap_at[d];
        for (int64_t o = 0; o < y->dims[d]; o++)
            tap_at(&p, &ax[l], o, stride, &t[o]);
        stride *= x->dims[d];
    }
    rs_inner in = {taps + lay.tap_at[last],
                   (int64_t *)(void *)(scratch + lay.off_at),
                   (float *)(void *)(scratch + lay.w_at),
                   y->dims[last],
                   x->dims[last],
                   lay.most,
                   x->dims[last] == y->dims[last],
                   false};
    for (int64_t o = 0; o < in.n && in.identity; o++)
        in.identity = in.tap[o].n == 1 && in.tap[o].off[0] == o && in.tap[o].w[0] == 1.0f;
    /* a short kept innermost axis: rows over the last two axes, the taps of axis r-2 shifted by each
     * position of the innermost (its stride is the innermost length) */
    int32_t n_lead = last; /* the axes the odometer walks */
    if (lay.merge_ok && in.identity) {
        const rs_tap *t2 = taps + lay.tap_at[last - 1];
        rs_tap *m = taps + lay.tap_at[last] + y->dims[last];
        int64_t c_n = y->dims[last];
        for (int64_t w = 0; w < y->dims[last - 1]; w++)
            for (int64_t c = 0; c < c_n; c++) {
                rs_tap *t = &m[w * c_n + c];
                *t = t2[w];
                for (int32_t j = 0; j < t->n; j++)
                    t->off[j] += c;
            }
        n_lead = last - 1;
        in.tap = m;
        in.n = y->dims[last - 1] * c_n;
        in.n_src = x->dims[last - 1] * c_n;
        in.identity = in.n == in.n_src;
        for (int64_t o = 0; o < in.n && in.identity; o++)
            in.identity = in.tap[o].n == 1 && in.tap[o].off[0] == o && in.tap[o].w[0] == 1.0f;
    }
    for (int64_t o = 0; o < in.n; o++)
        in.special |= in.tap[o].n == 0;
    inner_spread(in.tap, (size_t)in.n, lay.most, (int64_t *)(void *)(scratch + lay.off_at),
                 (float *)(void *)(scratch + lay.w_at));

    size_t es = pc_dtype_bits(y->dtype) / 8, row_bytes = (size_t)in.n * es;
    uint64_t rows = y->n / (uint64_t)in.n;
    uint32_t ext = extrap_bits(y->dtype, p.extrapolation);
    int64_t at[PC_MAX_RANK] = {0}; /* odometer over the outer axes */
    size_t level_n[PC_MAX_RANK];
    bool level_outside[PC_MAX_RANK], level_none[PC_MAX_RANK];
    static const rs_combo base = {0, 1.0f, 0};
    char *yp = y->data;
    int32_t dirty = 0; /* first level to rebuild */
    for (uint64_t row = 0; row < rows; row++, yp += row_bytes) {
        /* rebuild the combinations of the levels that moved: level d = level d-1 times axis d's taps */
        for (int32_t d = dirty; d < n_lead; d++) {
            const rs_combo *parent = d ? combos + lay.level_at[d - 1] : &base;
            size_t n_parent = d ? level_n[d - 1] : 1, n = 0;
            const rs_tap *t = taps + lay.tap_at[d] + at[d];
            bool outside = (d ? level_outside[d - 1] : false) || t->outside;
            bool none = (d ? level_none[d - 1] : false) || t->n == 0;
            rs_combo *out = combos + lay.level_at[d];
            if (!outside && !none)
                for (size_t i = 0; i < n_parent; i++)
                    for (int32_t j = 0; j < t->n; j++)
                        out[n++] = (rs_combo){parent[i].off + t->off[j], parent[i].w * t->w[j], 0};
            level_n[d] = n;
            level_outside[d] = outside;
            level_none[d] = none;
        }
        rs_outer outer = {&base, 1, false, false};
        if (n_lead > 0)
            outer = (rs_outer){combos + lay.level_at[n_lead - 1], level_n[n_lead - 1],
                               level_outside[n_lead - 1], level_none[n_lead - 1]};
        row_run(x, yp, es, &outer, &in, p.mode == MODE_NEAREST, ext, src);
        int32_t d = n_lead - 1;
        for (; d >= 0; d--) {
            if (++at[d] < y->dims[d]) break;
            at[d] = 0;
        }
        dirty = d < 0 ? 0 : d;
    }
    return PC_OK;
}

/* ---- the table */

#define RT_RESIZE_TYPES (RT_F32 | RT_U8 | RT_I8)

const pc_rt_kernel pc_rt_kernels_resize[] = {
    {"", "Upsample", 7, 9, RT_RESIZE_TYPES, resize_prepare, resize_run, 0},
    {"", "Resize", 10, 21, RT_RESIZE_TYPES, resize_prepare, resize_run, 0},
    /* channels-last: ai.onnx semantics at the domain's opset (opset 10 and below read as Resize-10) */
    {PC_NHWC_DOMAIN, "Resize", 1, 21, RT_RESIZE_TYPES, resize_prepare, resize_run, 0},
};

const size_t pc_rt_n_kernels_resize = sizeof pc_rt_kernels_resize / sizeof pc_rt_kernels_resize[0];
