"""Quantization cases with numpy-computed expected outputs: QuantizeLinear / DequantizeLinear (per tensor, per
axis with negative axes, ties, int32 input, opset 19 float16, opset 21 blocked and output_dtype),
DynamicQuantizeLinear (all zeros, all positive, mixed, empty), MatMulInteger (per-row/per-column zero points,
N-D, 1-D), ConvInteger, QLinearConv (per-channel), QLinearMatMul (per-row/per-column scales).

Oracle: the spec's formulas in numpy (round half to even with np.rint, saturate with np.clip); integer
convolution through gen_conv.conv_ref on zero-point-shifted float64 values.
Usage: /usr/bin/python3 gen_quant.py OUT_DIR
"""
import numpy as np

import casegen
from gen_conv import conv_ref


def qref(x, s, z, lo, hi):
    return np.clip(np.rint(x / s) + z, lo, hi)


def case(out, name, op, inputs, outputs, opset=13, **attrs):
    casegen.single_node_case(out, name, op, inputs, outputs, opset=opset, attrs=attrs)


def gen_linear(out):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((2, 3, 4)) * 50).astype(np.float32)
    for axis in (0, 1, 2, -1, -2):
        ax = axis % 3
        s = (rng.random(x.shape[ax]) + 0.1).astype(np.float32)
        z = rng.integers(-10, 10, size=x.shape[ax]).astype(np.int8)
        sh = [1, 1, 1]
        sh[ax] = -1
        y = qref(x, s.reshape(sh), z.reshape(sh).astype(np.float32), -128, 127).astype(np.int8)
        case(out, "quant_axis%d" % (axis + 3), "QuantizeLinear", [x, s, z], [y], axis=axis)
        xq = rng.integers(-128, 127, size=x.shape).astype(np.int8)
        case(out, "dequant_axis%d" % (axis + 3), "DequantizeLinear", [xq, s, z],
             [((xq.astype(np.float32) - z.reshape(sh)) * s.reshape(sh)).astype(np.float32)], axis=axis)
    # exact ties round to even; saturation
    s = np.float32(0.5)
    x = np.array([-1.25, -0.75, -0.25, 0.25, 0.75, 1.25, 300, -300, 2.5, 3.5], dtype=np.float32)
    case(out, "quant_ties_u8", "QuantizeLinear", [x, np.array(s)], [qref(x, s, 0, 0, 255).astype(np.uint8)],
         opset=10)
    case(out, "quant_ties_i8", "QuantizeLinear", [x, np.array(s), np.array(3, dtype=np.int8)],
         [qref(x, s, 3, -128, 127).astype(np.int8)], opset=10)
    xi = np.array([-7, 5, 1000, -3], dtype=np.int32)
    case(out, "dequant_int32", "DequantizeLinear", [xi, np.array(np.float32(0.25))],
         [(xi * np.float32(0.25)).astype(np.float32)], opset=10)
    case(out, "quant_int32in", "QuantizeLinear", [xi, np.array(np.float32(2.0)), np.array(1, dtype=np.uint8)],
         [qref(xi.astype(np.float32), 2.0, 1, 0, 255).astype(np.uint8)], opset=13)


def gen_linear_19_21(out):
    rng = np.random.default_rng(12)
    # opset 21: blocked quantization along axis 1, int16 / uint16
    x = (rng.standard_normal((2, 6)) * 40).astype(np.float32)
    s = (rng.random((2, 2)) + 0.5).astype(np.float32)
    z = rng.integers(-100, 100, size=(2, 2)).astype(np.int16)
    sf = np.repeat(s, 3, axis=1)
    zf = np.repeat(z, 3, axis=1)
    y = np.clip(np.rint(x / sf) + zf, -32768, 32767).astype(np.int16)
    case(out, "q21_blocked_int16", "QuantizeLinear", [x, s, z], [y], opset=21, axis=1, block_size=3)
    s2 = (rng.random((1, 6)) + 0.5).astype(np.float32)
    z2 = rng.integers(0, 200, size=(1, 6)).astype(np.uint16)
    xq = rng.integers(0, 65535, size=(2, 6)).astype(np.uint16)
    case(out, "dq21_blocked_axis0", "DequantizeLinear", [xq, s2, z2],
         [((xq.astype(np.float32) - z2) * s2).astype(np.float32)], opset=21, axis=0, block_size=2)
    # opset 19: float16 input and scale
    x16 = (rng.standard_normal((3, 4)) * 10).astype(np.float16)
    s16 = np.array(0.5, dtype=np.float16)
    y = np.clip(np.rint(x16.astype(np.float32) / np.float32(0.5)), 0, 255).astype(np.uint8)
    case(out, "q19_f16", "QuantizeLinear", [x16, s16], [y], opset=19)
    xq = rng.integers(-128, 127, size=(3, 4)).astype(np.int8)
    case(out, "dq19_f16", "DequantizeLinear", [xq, s16],
         [(xq.astype(np.float32) * np.float32(0.5)).astype(np.float16)], opset=19)
    # opset 21: output_dtype picks int8 without a zero point
    case(out, "q21_outdtype", "QuantizeLinear", [x, np.array(np.float32(2.0))],
         [np.clip(np.rint(x / np.float32(2)), -128, 127).astype(np.int8)], opset=21, output_dtype=3)


def gen_dynamic(out):
    rng = np.random.default_rng(13)
    for nm, x in (("zeros", np.zeros(4, np.float32)), ("pos", np.array([0.5, 1, 2, 3.3], np.float32)),
                  ("mixed", (rng.standard_normal(20) * 3).astype(np.float32)),
                  ("empty", np.zeros(0, np.float32))):
        # the range always includes 0 (so an empty input has range [0, 0] and scale 1)
        mn = np.float32(min(0, np.min(x, initial=0)))
        mx = np.float32(max(0, np.max(x, initial=0)))
        sc = np.float32(1.0) if mx == mn else np.float32((mx - mn) / np.float32(255))
        zp = np.clip(np.rint(np.float32(0) - mn / sc), 0, 255).astype(np.uint8)
        y = np.clip(np.rint(x / sc) + zp, 0, 255).astype(np.uint8)
        case(out, "dql_" + nm, "DynamicQuantizeLinear", [x], [y, np.array(sc), np.array(zp)], opset=11)


def gen_integer(out):
    rng = np.random.default_rng(14)
    # MatMulInteger: per-row a / per-column b zero points, a batch, int8 b
    A = rng.integers(0, 255, size=(2, 3, 4)).astype(np.uint8)
    B = rng.integers(-128, 127, size=(4, 5)).astype(np.int8)
    az = rng.integers(0, 255, size=(3,)).astype(np.uint8)
    bz = rng.integers(-128, 127, size=(5,)).astype(np.int8)
    y = np.matmul(A.astype(np.int64) - az.reshape(3, 1), B.astype(np.int64) - bz).astype(np.int32)
    case(out, "matmulint_rowcol", "MatMulInteger", [A, B, az, bz], [y], opset=10)
    az2 = rng.integers(0, 255, size=(2, 3, 1)).astype(np.uint8)
    bz2 = rng.integers(-128, 127, size=(1, 5)).astype(np.int8)
    y = np.matmul(A.astype(np.int64) - az2, B.astype(np.int64) - bz2).astype(np.int32)
    case(out, "matmulint_nd", "MatMulInteger", [A, B, az2, bz2], [y], opset=10)
    A1 = rng.integers(-128, 127, size=(4,)).astype(np.int8)
    case(out, "matmulint_1d", "MatMulInteger", [A1, B],
         [np.matmul(A1.astype(np.int64), B.astype(np.int64)).astype(np.int32)], opset=10)

    # ConvInteger / QLinearConv with a per-channel w zero point and scale, grouped, strided, dilated
    x = rng.integers(0, 255, size=(1, 4, 5, 5)).astype(np.uint8)
    w = rng.integers(-128, 127, size=(6, 2, 3, 3)).astype(np.int8)
    xz = np.array(100, dtype=np.uint8)
    wz = rng.integers(-5, 5, size=(6,)).astype(np.int8)
    geom = dict(group=2, strides=[2, 1], dilations=[1, 2], pads=[1, 0, 0, 1])
    acc = conv_ref(x.astype(np.float64) - 100, w.astype(np.float64) - wz.reshape(6, 1, 1, 1), None, [2, 1],
                   [1, 2], [1, 0], [0, 1], 2)
    case(out, "convint_perchan", "ConvInteger", [x, w, xz, wz], [acc.astype(np.int32)], opset=10, **geom)
    xs = np.float32(0.02)
    ws = (rng.random(6) * 0.01 + 0.001).astype(np.float32)
    ys = np.float32(0.3)
    yz = np.int8(-3)
    bias = rng.integers(-1000, 1000, size=6).astype(np.int32)
    accb = acc + bias.reshape(1, 6, 1, 1)
    mult = ((xs * ws).astype(np.float32) / ys).astype(np.float32)
    yq = np.clip(np.rint((accb.astype(np.float32) * mult.reshape(1, 6, 1, 1)).astype(np.float32)) + yz, -128,
                 127).astype(np.int8)
    case(out, "qlinearconv_perchan", "QLinearConv",
         [x, np.array(xs), xz, w, ws, wz, np.array(ys), np.array(yz), bias], [yq], opset=10, **geom)

    # QLinearMatMul with per-row a and per-column b scales
    A = rng.integers(0, 255, size=(3, 4)).astype(np.uint8)
    B = rng.integers(0, 255, size=(4, 5)).astype(np.uint8)
    asc = (rng.random((3, 1)) * 0.01 + 0.001).astype(np.float32)
    bsc = (rng.random((5,)) * 0.01 + 0.001).astype(np.float32)
    az = np.array(128, dtype=np.uint8)
    bz = np.array(120, dtype=np.uint8)
    ys = np.float32(0.05)
    yz = np.uint8(100)
    acc = (A.astype(np.int64) - 128) @ (B.astype(np.int64) - 120)
    mult = ((asc * bsc).astype(np.float32) / ys).astype(np.float32)
    yq = np.clip(np.rint((acc.astype(np.float32) * mult).astype(np.float32)) + yz, 0, 255).astype(np.uint8)
    case(out, "qlinearmatmul_rowcol", "QLinearMatMul", [A, asc, az, B, bsc, bz, np.array(ys), np.array(yz)],
         [yq], opset=10)


def main():
    out = casegen.out_dir_from_argv()
    gen_linear(out)
    gen_linear_19_21(out)
    gen_dynamic(out)
    gen_integer(out)


if __name__ == "__main__":
    main()
