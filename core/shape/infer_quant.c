/* Shape inference: QuantizeLinear, DequantizeLinear, QLinearConv (and its fused Relu form), QLinearMatMul. */
#include "core/shape/shape_internal.h"

/* y's type: y_zero_point's, else output_dtype (opset 21), else uint8. */
pc_status sh_infer_quantize(sh_ctx *c)
{
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
    sh_shape x;
    sh_in_shape(c, 0, &x);
    sh_set_out(c, 0, c->opset >= 19 ? sh_in_elem(c, 1) : PC_DTYPE_FLOAT, &x);
    return PC_OK;
}

/* x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]: y has y_zero_point's type. */
pc_status sh_infer_qlinear_conv(sh_ctx *c)
{
    return sh_conv_output(c, 3, sh_in_elem(c, 7));
}

/* a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp. */
pc_status sh_infer_qlinear_matmul(sh_ctx *c)
{
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
