/* The one output-size computation for sliding windows (Conv, pools, ConvTranspose and their fused and NHWC
 * forms). With the dilated kernel ek = (k - 1) * d + 1, per spatial dim:
 *   explicit pads:  floor((in + pb + pe - ek) / s) + 1; pools with ceil_mode round up, dropping a last window
 *                   that would start in the end padding;
 *   VALID:          the same with no padding;
 *   SAME_UPPER/LOWER: ceil(in / s);
 *   ConvTranspose:  output_shape when given, in * s for SAME_*, else s * (in - 1) + output_padding + ek - pb
 * - pe. */
#include <string.h>

#include "core/shape/shape_internal.h"

enum { PAD_NOTSET, PAD_VALID, PAD_SAME };

static pc_status spatial_attr(sh_ctx *c, const char *name, int32_t n, int64_t fallback, int64_t lo,
                              int64_t *out)
{
    size_t len;
    const int64_t *v = sh_attr_ints(c, name, &len);
    for (int32_t i = 0; i < n; i++)
        out[i] = fallback;
    if (!v) return PC_OK;
    if (len != (size_t)n)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "attribute '%s' has %zu values, expected %d", name, len,
                              (int)n);
    for (int32_t i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > ((int64_t)1 << 40))
            return sh_fail_status(c, PC_ERR_ATTRIBUTE, "attribute '%s'[%d] = %lld is out of range", name,
                                  (int)i, (long long)v[i]);
        out[i] = v[i];
    }
    return PC_OK;
}

pc_status sh_window_dims(sh_ctx *c, sh_window_kind kind, const sh_shape *x, const int64_t *k, pc_dim *out)
{
    int32_t nsp = x->rank - 2;
    int64_t s[PC_MAX_RANK], d[PC_MAX_RANK], pads[2 * PC_MAX_RANK], opad[PC_MAX_RANK];
    pc_status st;
    if ((st = spatial_attr(c, "strides", nsp, 1, 1, s)) != PC_OK ||
        (st = spatial_attr(c, "dilations", nsp, 1, 1, d)) != PC_OK ||
        (st = spatial_attr(c, "pads", 2 * nsp, 0, 0, pads)) != PC_OK ||
        (st = spatial_attr(c, "output_padding", nsp, 0, 0, opad)) != PC_OK)
        return st;
    const char *ap = pc_node_attr_string(c->node, "auto_pad", "NOTSET");
    int mode;
    if (!*ap || strcmp(ap, "NOTSET") == 0)
        mode = PAD_NOTSET;
    else if (strcmp(ap, "VALID") == 0)
        mode = PAD_VALID;
    else if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0)
        mode = PAD_SAME;
    else
        return sh_fail_status(c, PC_ERR_ATTRIBUTE,
                              "auto_pad '%s' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", ap);
    bool ceil_mode = kind == SH_WINDOW_POOL && sh_attr_int(c, "ceil_mode", 0) != 0;
    size_t n_os = 0;
    const int64_t *os = kind == SH_WINDOW_CONV_TRANSPOSE ? sh_attr_ints(c, "output_shape", &n_os) : NULL;
    if (os && n_os == (size_t)nsp + 2)
        os += 2; /* some exporters write the full (N, C, spatial...) shape */
    else if (os && n_os != (size_t)nsp)
        return sh_fail_status(c, PC_ERR_ATTRIBUTE, "output_shape has %zu values, expected %d", n_os,
                              (int)nsp);
    for (int32_t i = 0; i < nsp; i++) {
        if (k[i] < 1) return sh_fail(c, "kernel size %lld on spatial axis %d", (long long)k[i], (int)i);
        int64_t ek, pb = mode == PAD_NOTSET ? pads[i] : 0, pe = mode == PAD_NOTSET ? pads[i + nsp] : 0;
        if (!sh_mul(k[i] - 1, d[i], &ek) || !sh_add(ek, 1, &ek))
            return sh_fail(c, "the dilated kernel overflows on spatial axis %d", (int)i);
        if (os) {
            if (os[i] < 0)
                return sh_fail_status(c, PC_ERR_ATTRIBUTE, "output_shape[%d] is %lld", (int)i,
                                      (long long)os[i]);
            sh_dim_known(&out[i], os[i]);
            continue;
        }
        const pc_dim *xd = &x->dims[2 + i];
        if (xd->kind != PC_DIM_KNOWN) {
            sh_dim_unknown(&out[i]);
            continue;
        }
        int64_t in = xd->size, o, t;
        bool ok = true;
        if (kind == SH_WINDOW_CONV_TRANSPOSE) {
            if (mode == PAD_SAME)
                ok = sh_mul(in, s[i], &o);
            else
                ok = sh_mul(s[i], in - 1, &o) && sh_add(o, opad[i], &o) && sh_add(o, ek, &o) &&
                     sh_add(o, -pb, &o) && sh_add(o, -pe, &o);
            if (!ok) return sh_fail(c, "the output size overflows on spatial axis %d", (int)i);
            if (o < 0)
                return sh_fail(c, "spatial axis %d: the output size would be %lld", (int)i, (long long)o);
        } else if (mode == PAD_SAME) {
            o = in / s[i] + (in % s[i] != 0);
        } else {
            int64_t padded;
            if (!sh_add(in, pb, &padded) || !sh_add(padded, pe, &padded))
                return sh_fail(c, "the padded input overflows on spatial axis %d", (int)i);
            int64_t span = padded - ek;
            if (span < 0)
                return sh_fail(
                    c, "spatial axis %d: the padded input %lld is smaller than the dilated kernel %lld",
                    (int)i, (long long)padded, (long long)ek);
            o = span / s[i] + 1;
            /* ceil_mode: one more window, unless it would start in the end padding ((o - 1) * s >= in + pb)
             */
            if (ceil_mode && span % s[i] && sh_mul(o, s[i], &t) && t < in + pb) o++;
        }
        sh_dim_known(&out[i], o);
    }
    return PC_OK;
}
