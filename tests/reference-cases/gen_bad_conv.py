"""Malformed Conv / ConvTranspose / MatMul / Gemm / Einsum / quantization models that the executor must refuse
cleanly: bad attributes (group, kernel_shape, pads, strides, dilations, auto_pad, output_shape, Einsum
equations), shapes that do not fit, wrong element types per opset, sizes that overflow or exceed the
2^31-element budget, a missing required input, and inputs whose result the spec leaves undefined (NaN / inf
quantization). Each case's expected outcome (error or unsupported) goes to OUT/expected-outcomes.txt; outputs
are dummies.

Usage: /usr/bin/python3 gen_bad_conv.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto

import casegen


def main():
    # an unsupported case declares its outputs' real types: with a float dummy, the loader would refuse the
    # model first (an output type its inputs contradict), and the executor's refusal would go untested
    bad = casegen.BadCases(casegen.out_dir_from_argv())

    def case(name, op, inputs, opset=13, nout=1, expect="error", why="", out_type=TensorProto.FLOAT, **attrs):
        bad.single_node(name, op, inputs, opset, attrs, n_out=nout, out_type=out_type, expect=expect, why=why)

    f = np.float32
    u = np.uint8
    x = np.ones((1, 4, 5, 5), f)
    w = np.ones((2, 2, 3, 3), f)
    wt = np.ones((4, 1, 3, 3), f)
    # Conv
    case("conv_group_bad", "Conv", [x, w], group=3)
    case("conv_group0", "Conv", [x, w], group=0)
    case("conv_kshape", "Conv", [x, w], group=2, kernel_shape=[3, 2])
    case("conv_pads_neg", "Conv", [x, w], group=2, pads=[0, -1, 0, 0])
    case("conv_pads_len", "Conv", [x, w], group=2, pads=[0, 0, 0])
    case("conv_pads_huge", "Conv", [x, w], group=2, pads=[2 ** 62] * 4)
    case("conv_pads_big", "Conv", [x, w], group=2, pads=[2 ** 40] * 4)
    case("conv_stride0", "Conv", [x, w], group=2, strides=[0, 1])
    case("conv_dil_huge", "Conv", [x, w], group=2, dilations=[2 ** 62, 1])
    case("conv_autopad", "Conv", [x, w], group=2, auto_pad="FOO")
    case("conv_kernel_big", "Conv", [x, np.ones((2, 2, 7, 3), f)], group=2)
    case("conv_rank2", "Conv", [np.ones((4, 5), f), np.ones((2, 5), f)])
    case("conv_type", "Conv", [x.astype(np.int32), w.astype(np.int32)], group=2)
    case("conv_wtype", "Conv", [x, w.astype(np.float64)], group=2)
    case("conv_bias_shape", "Conv", [x, w, np.ones(3, f)], group=2)
    # ConvTranspose
    case("convt_outshape_huge", "ConvTranspose", [x, wt], output_shape=[2 ** 40, 2 ** 40])
    case("convt_outshape_neg", "ConvTranspose", [x, wt], output_shape=[-1, 5])
    case("convt_stride_huge", "ConvTranspose", [x, wt], strides=[2 ** 62, 2 ** 62])
    case("convt_pads_big", "ConvTranspose", [x, wt], pads=[5, 5, 5, 5])
    case("convt_wdim0", "ConvTranspose", [x, np.ones((3, 1, 3, 3), f)])
    case("convt_group_ovf", "ConvTranspose", [np.ones((1, 0, 5, 5), f), np.ones((0, 2 ** 40, 1, 1), f)],
         group=2 ** 40)
    # MatMul, Gemm
    case("matmul_k", "MatMul", [np.ones((2, 3), f), np.ones((4, 2), f)])
    case("matmul_batch", "MatMul", [np.ones((2, 2, 3), f), np.ones((3, 3, 2), f)])
    case("matmul_rank0", "MatMul", [np.array(1, f), np.ones((3,), f)])
    case("matmul_int_opset8", "MatMul", [np.ones((2, 3), np.int32), np.ones((3, 2), np.int32)], opset=8)
    case("matmul_mixed", "MatMul", [np.ones((2, 3), f), np.ones((3, 2), np.float64)])
    case("gemm_rank3", "Gemm", [np.ones((2, 3, 1), f), np.ones((3, 2), f)])
    case("gemm_c_bad", "Gemm", [np.ones((2, 3), f), np.ones((3, 4), f), np.ones((3,), f)])
    case("gemm_noc_opset9", "Gemm", [np.ones((2, 3), f), np.ones((3, 4), f)], opset=9)
    case("gemm_opset6_nobcast", "Gemm", [np.ones((2, 3), f), np.ones((3, 4), f), np.ones((4,), f)], opset=6)
    case("gemm_int_alpha", "Gemm", [np.ones((2, 3), np.int32), np.ones((3, 4), np.int32)], alpha=0.5,
         out_type=TensorProto.INT32, expect="unsupported", why="integer Gemm with a non-integral alpha: no exact integer result")
    # Einsum
    e = np.ones((2, 3), f)
    case("ein_noeq", "Einsum", [e], opset=12)
    case("ein_terms", "Einsum", [e, e], opset=12, equation="ij->ij")
    case("ein_terms2", "Einsum", [e], opset=12, equation="ij,jk->ik")
    case("ein_char", "Einsum", [e], opset=12, equation="i1->i")
    case("ein_rank", "Einsum", [e], opset=12, equation="ijk->i")
    case("ein_size", "Einsum", [e, e], opset=12, equation="ij,ji->i")
    case("ein_outlabel", "Einsum", [e], opset=12, equation="ij->k")
    case("ein_outrep", "Einsum", [e], opset=12, equation="ij->ii")
    case("ein_dots", "Einsum", [e], opset=12, equation="i..j->i")
    case("ein_2ell", "Einsum", [e], opset=12, equation="...i...->i")
    case("ein_ellbc", "Einsum", [np.ones((2, 3), f), np.ones((4, 3), f)], opset=12, equation="...i,...i->...")
    case("ein_huge", "Einsum", [np.ones((2000,), f)] * 4, opset=12, equation="a,b,c,d->")
    case("ein_bool", "Einsum", [np.ones((2,), np.float64), np.ones((2,), f)], opset=12, equation="i,i")
    # QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear
    case("q_axis_len", "QuantizeLinear", [x, np.ones(3, f), np.zeros(3, u)], axis=1)
    case("q_axis_range", "QuantizeLinear", [x, np.ones(4, f)], axis=4)
    case("q_nan", "QuantizeLinear", [np.array([1, np.nan], f), np.array(1, f)], out_type=TensorProto.UINT8,
         expect="unsupported", why="quantizing NaN is undefined")
    case("q_zp_shape", "QuantizeLinear", [x, np.ones(4, f), np.zeros(1, u)], axis=1)
    case("q_opset10_axis", "QuantizeLinear", [x, np.ones(4, f)], opset=10)
    case("q_xtype", "QuantizeLinear", [x.astype(np.float64), np.array(1, f)])
    case("q_zptype", "QuantizeLinear", [x, np.array(1, f), np.array(1, np.int32)])
    case("dq_int32_zp", "DequantizeLinear", [np.ones(3, np.int32), np.array(1, f), np.array(2, np.int32)])
    case("dq_zptype", "DequantizeLinear", [np.ones(3, u), np.array(1, f), np.array(2, np.int8)])
    case("dq_scale_type", "DequantizeLinear", [np.ones(3, u), np.array(1, np.float64)])
    case("dql_nan", "DynamicQuantizeLinear", [np.array([np.inf], f)], opset=11,
         out_type=[TensorProto.UINT8, TensorProto.FLOAT, TensorProto.UINT8], expect="unsupported", why="a non-finite input has no defined range")
    # integer convolution / matrix products
    img = np.ones((1, 2, 3, 3), u)
    case("convint_type", "ConvInteger", [np.ones((1, 1, 3, 3), np.int32), np.ones((1, 1, 1, 1), u)], opset=10)
    case("convint_xzp", "ConvInteger", [img, np.ones((1, 2, 1, 1), u), np.ones(2, u)], opset=10)
    case("convint_wzp", "ConvInteger", [img, np.ones((3, 2, 1, 1), u), np.array(1, u), np.ones(2, u)],
         opset=10)
    case("convint_geom", "ConvInteger", [img, np.ones((3, 2, 5, 5), u)], opset=10)
    one_f, zero_u = np.array(1, f), np.array(0, u)
    x1, w1 = np.ones((1, 1, 3, 3), u), np.ones((1, 1, 1, 1), u)
    case("qconv_missing", "QLinearConv", [x1, one_f, zero_u, w1, one_f, None, one_f, zero_u], opset=10)
    case("qconv_bias", "QLinearConv",
         [x1, one_f, zero_u, w1, one_f, zero_u, one_f, zero_u, np.ones(2, np.int32)], opset=10)
    case("qmm_kscale", "QLinearMatMul",
         [np.ones((2, 3), u), np.ones((1, 3), f), zero_u, np.ones((3, 2), u), one_f, zero_u, one_f, zero_u],
         opset=10, out_type=TensorProto.UINT8,
         expect="unsupported", why="a_scale varying along the reduced dimension K: no per-row requantization")
    case("mmi_zp_row", "MatMulInteger", [np.ones((2, 3), u), np.ones((3, 2), u), np.ones(3, u)], opset=10)
    bad.close()


if __name__ == "__main__":
    main()
