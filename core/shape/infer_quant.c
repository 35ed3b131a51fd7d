/* Shape inference: QuantizeLinear, DequantizeLinear, QLinearConv (and its fused Relu form), QLinearMatMul. */
#include "core/shape/shape_internal.h"

/* A shape's element count (sh_dims_product); -1 when unknown. */
static int64_t known_elements(const sh_shape *s)
{
    pc_dim d;
    sh_dims_product(s, 0, s->rank, &d);
    return d.kind == PC_DIM_KNOWN ? d.size : -1;
}

/* A quantization parameter (scale or zero point, input i) that must hold one value: a scalar or a 1-D tensor
 * of one element (ONNX Runtime's QLinear kernels refuse anything else when they run). */
static pc_status check_one_value(sh_ctx *c, uint32_t i, const char *what)
{
    sh_shape s;
    if (!sh_in_shape(c, i, &s)) return PC_OK; /* absent or unknown */
    int64_t n = known_elements(&s);
    if (s.rank > 1 || (n >= 0 && n != 1))
        return sh_fail(c, "%s must be a scalar or a 1-D tensor of one element (rank %d, %lld elements)", what,
                       (int)s.rank, (long long)n);
    return PC_OK;
}

/* A scale (input si) and its zero point (input zi, when given) for data whose quantized axis has `len`
 * elements (-1: unknown): each a scalar or 1-D, the zero point of the scale's shape, and a 1-D one of more
 * than one element exactly `len` long (per axis) — ONNX's rule for Q/DQ before blocked quantization, and what
 * ONNX Runtime's kernels check when they run. */
static pc_status check_scale_zp(sh_ctx *c, uint32_t si, uint32_t zi, int64_t len, bool zp_same_shape,
                                const char *what)
{
    sh_shape s, z;
    bool has_s = sh_in_shape(c, si, &s), has_z = sh_in_shape(c, zi, &z); /* false: absent or unknown */
    if (has_s && s.rank > 1)
        return sh_fail(c, "%s scale must be a scalar or 1-D, has rank %d", what, (int)s.rank);
    if (has_z && z.rank > 1)
        return sh_fail(c, "%s zero point must be a scalar or 1-D, has rank %d", what, (int)z.rank);
    int64_t ns = has_s ? known_elements(&s) : -1, nz = has_z ? known_elements(&z) : -1;
    /* one value each is per tensor whatever the ranks ([1] against a scalar): ONNX Runtime accepts that */
    bool one_each = ns == 1 && nz == 1;
    if (zp_same_shape && has_s && has_z && !one_each &&
        (s.rank != z.rank || (ns >= 0 && nz >= 0 && ns != nz)))
        return sh_fail(c, "%s zero point's shape (rank %d, %lld elements) is not the scale's (rank %d, %lld)",
                       what, (int)z.rank, (long long)nz, (int)s.rank, (long long)ns);
    if (ns >= 0 && ns != 1 && len >= 0 && ns != len)
        return sh_fail(c, "%s scale has %lld elements: one, or one per element of the quantized axis (%lld)",
                       what, (long long)ns, (long long)len);
    if (nz >= 0 && nz != 1 && len >= 0 && nz != len)
        return sh_fail(
            c, "%s zero point has %lld elements: one, or one per element of the quantized axis (%lld)", what,
            (long long)nz, (long long)len);
    return PC_OK;
}

/* Q/DQ's scale and zero point against x (input 0): the quantized axis is `axis` (default 1) when the scale
 * has more than one element. Blocked quantization (opset 21's block_size) has scales of x's rank: not
 * checked. */
static pc_status check_q_params(sh_ctx *c, const char *what)
{
    if (c->opset >= 21 && sh_attr_int(c, "block_size", 0) != 0) return PC_OK;
    sh_shape x, s;
    int64_t len = -1;
    if (sh_in_shape(c, 0, &x) && sh_in_shape(c, 1, &s) && known_elements(&s) > 1) {
        int32_t axis;
        pc_status st = sh_axis(c, sh_attr_int(c, "axis", 1), x.rank, "axis", &axis);
        if (st != PC_OK) return st;
        if (x.dims[axis].kind == PC_DIM_KNOWN) len = x.dims[axis].size;
    }
    return check_scale_zp(c, 1, 2, len, true, what);
}

/* y's type: y_zero_point's, else output_dtype (opset 21), else uint8. */
pc_status sh_infer_quantize(sh_ctx *c)
{
    pc_status st = check_q_params(c, "y");
    if (st != PC_OK) return st;
    sh_shape x;
    sh_in_shape(c, 0, &x);
    pc_dtype elem = PC_DTYPE_UINT8;
    int64_t od = c->opset >= 21 ? sh_attr_int(c, "output_dtype", 0) : 0;
    if (sh_has_input(c, 2))
        elem = sh_in_elem(c, 2);
    else if (od != 0) {
        if (!pc_dtype_is_valid((int32_t)od) || od != (int32_t)od)
            return sh_fail_status(c, PC_ERR_ATTRIBUTE, "output_dtype %lld is not an element type",
                                  (long long)od);
        elem = (pc_dtype)od;
    }
    sh_set_out(c, 0, elem, &x);
    return PC_OK;
}

/* float before opset 19; the scale's type after. */
pc_status sh_infer_dequantize(sh_ctx *c)
{
    pc_status st = check_q_params(c, "x");
    if (st != PC_OK) return st;
    sh_shape x;
    sh_in_shape(c, 0, &x);
    sh_set_out(c, 0, c->opset >= 19 ? sh_in_elem(c, 1) : PC_DTYPE_FLOAT, &x);
    return PC_OK;
}

/* x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]: y has y_zero_point's type. */
pc_status sh_infer_qlinear_conv(sh_ctx *c)
{
    static const struct {
        uint32_t i;
        const char *what;
    } one[] = {{1, "x_scale"}, {2, "x_zero_point"}, {6, "y_scale"}, {7, "y_zero_point"}};
    for (size_t k = 0; k < sizeof one / sizeof one[0]; k++) {
        pc_status st = check_one_value(c, one[k].i, one[k].what);
        if (st != PC_OK) return st;
    }
    /* w's scale and zero point: one value, or one per output channel (w's dim 0) */
    sh_shape w;
    int64_t m = sh_in_shape(c, 3, &w) && w.rank > 0 && w.dims[0].kind == PC_DIM_KNOWN ? w.dims[0].size : -1;
    pc_status st = check_scale_zp(c, 4, 5, m, false, "w");
    if (st != PC_OK) return st;
    return sh_conv_output(c, 3, sh_in_elem(c, 7));
}

/* com.microsoft QLinearAdd: A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?: C is A and B broadcast, of
 * A's type; scales and zero points one value each. */
pc_status sh_infer_qlinear_add(sh_ctx *c)
{
    static const struct {
        uint32_t i;
        const char *what;
    } one[] = {{1, "A_scale"},      {2, "A_zero_point"}, {4, "B_scale"},
               {5, "B_zero_point"}, {6, "C_scale"},      {7, "C_zero_point"}};
    for (size_t k = 0; k < sizeof one / sizeof one[0]; k++) {
        pc_status st = check_one_value(c, one[k].i, one[k].what);
        if (st != PC_OK) return st;
    }
    sh_shape a, b, y;
    bool ka = sh_in_shape(c, 0, &a), kb = sh_in_shape(c, 3, &b);
    if (!ka || !kb) {
        sh_set_out(c, 0, sh_in_elem(c, 0), NULL);
        return PC_OK;
    }
    pc_status st = sh_broadcast(c, &a, &b, &y);
    if (st == PC_OK) sh_set_out(c, 0, sh_in_elem(c, 0), &y);
    return st;
}

/* The systolic EP's QLinearAdd (the array's residual add): com.microsoft QLinearAdd's inputs, A and B of
 * equal shapes (elementwise over one flat length: no broadcasting), C of A's shape and type. */
pc_status sh_infer_systolic_add(sh_ctx *c)
{
    sh_shape a, b;
    if (sh_in_shape(c, 0, &a) && sh_in_shape(c, 3, &b)) {
        if (a.rank != b.rank)
            return sh_fail(
                c,
                "A (rank %d) and B (rank %d) must have equal shapes: the systolic array's add does "
                "not broadcast",
                (int)a.rank, (int)b.rank);
        for (int32_t i = 0; i < a.rank; i++)
            if (a.dims[i].kind == PC_DIM_KNOWN && b.dims[i].kind == PC_DIM_KNOWN &&
                a.dims[i].size != b.dims[i].size)
                return sh_fail(c,
                               "A and B must have equal shapes (dim %d: %lld and %lld): the systolic array's "
                               "add does not broadcast",
                               (int)i, (long long)a.dims[i].size, (long long)b.dims[i].size);
    }
    return sh_infer_qlinear_add(c);
}

/* The systolic EP's QLinearRelu: X [, X_zero_point] -> Y = max(X, zero point), X's shape and type. */
pc_status sh_infer_qlinear_relu(sh_ctx *c)
{
    pc_status st = check_one_value(c, 1, "X_zero_point");
    if (st != PC_OK) return st;
    sh_shape x;
    bool known = sh_in_shape(c, 0, &x);
    sh_set_out(c, 0, sh_in_elem(c, 0), known ? &x : NULL);
    return PC_OK;
}

/* a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp. */
pc_status sh_infer_qlinear_matmul(sh_ctx *c)
{
    pc_status st = check_one_value(c, 6, "y_scale");
    if (st == PC_OK) st = check_one_value(c, 7, "y_zero_point");
    if (st != PC_OK) return st;
    return sh_matmul_output(c, 0, 3, sh_in_elem(c, 7));
}

/* DynamicQuantizeLinear: y uint8 like x, scale float and zero point uint8 scalars. */
pc_status sh_infer_dynamic_quantize(sh_ctx *c)
{
    sh_shape x, scalar = {.rank = 0};
    sh_in_shape(c, 0, &x);
    sh_set_out(c, 0, PC_DTYPE_UINT8, &x);
    if (c->n_out > 1) sh_set_out(c, 1, PC_DTYPE_FLOAT, &scalar);
    if (c->n_out > 2) sh_set_out(c, 2, PC_DTYPE_UINT8, &scalar);
    return PC_OK;
}

pc_status sh_infer_matmul_integer(sh_ctx *c)
{
    return sh_matmul_output(c, 0, 1, PC_DTYPE_INT32);
}

pc_status sh_infer_conv_integer(sh_ctx *c)
{
    return sh_conv_output(c, 1, PC_DTYPE_INT32);
}
