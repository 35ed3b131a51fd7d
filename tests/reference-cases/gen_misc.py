"""ops_misc / ops_signal cases with numpy-computed expected outputs: legacy broadcast comparisons (opsets 1
and 6), Clip (opset 6 attributes, no bounds, one bound, min > max, NaN, uint64), Max/Min/Mean/Sum (NaN,
uint64, int8, broadcast), Less/GreaterOrEqual on uint64, Equal on strings/bools/NaN, Mod (integer sign rules,
fmod, uint64, int8 broadcast), BitShift, BitwiseAnd/Or/Xor, Where (strings, broadcast), Cast (float <->
integer/bool/float16 rounding and wrap, to/from strings, opset 1 string `to`), Det, integer PRelu, DFT
(padding, truncation, onesided, complex inverse on a negative axis, a 2^20-point padded transform), STFT,
Hann/Blackman/Hamming windows, StringNormalizer, NonMaxSuppression ties.

Oracle: the numpy equivalent of each op (np.clip, np.maximum, np.fft, np.linalg.det, str() of numpy scalars
for Cast to string, ...), or literal values worked out by hand where numpy has no equivalent (Mod's sign
rules, BitShift past the width). Usage: /usr/bin/python3 gen_misc.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto as TP

import casegen


def main():
    out = casegen.out_dir_from_argv()
    rng = np.random.default_rng(0)

    def case(name, op, inputs, outputs, opset, attrs=None):
        casegen.single_node_case(out, name, op, inputs, outputs, opset=opset, attrs=attrs)

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    # legacy broadcast (opsets 1 and 6)
    a = f32(2, 3, 4, 5)
    b = f32(3, 4)
    case("legacy_less_axis", "Less", [a, b], [a < b.reshape(3, 4, 1)], 6, dict(broadcast=1, axis=1))
    b2 = f32(5)
    case("legacy_greater_tail", "Greater", [a, b2], [a > b2], 6, dict(broadcast=1))
    ab = rng.integers(0, 2, (2, 3)).astype(bool)
    bb = rng.integers(0, 2, (2, 3)).astype(bool)
    case("legacy_and_same", "And", [ab, bb], [ab & bb], 1)
    # scalars of equal shape need no broadcast attribute
    case("legacy_scalar_eq", "Equal", [np.int32(3), np.int32(3)], [np.array(True)], 6)

    # Clip: opset 6 attributes, opset 11 without bounds, NaN passes through. An absent bound is the type's
    # numeric_limits lowest()/max() (the spec's words; ONNX Runtime 1.30 clamps +-Inf to +-FLT_MAX there, checked
    # with onnxruntime-node), not "unbounded" as onnx.reference has it
    x = np.array([-3, -1, 0, 1, 3, np.nan, np.inf, -np.inf], np.float32)
    fmin, fmax = np.finfo(np.float32).min, np.finfo(np.float32).max
    case("clip6", "Clip", [x], [np.clip(x, -1.5, 2)], 6, dict(min=-1.5, max=2.0))
    case("clip6_default", "Clip", [x], [np.clip(x, fmin, fmax)], 6)
    case("clip11_none", "Clip", [x], [np.clip(x, fmin, fmax)], 11)
    case("clip13_max_only", "Clip", [x, None, np.float32(0.5)], [np.clip(x, fmin, 0.5)], 13)
    case("clip13_min_gt_max", "Clip", [x, np.float32(2), np.float32(1)],
         [np.where(np.isnan(x), x, np.float32(1))], 13)
    u = np.array([0, 5, 2 ** 63, 2 ** 64 - 1], np.uint64)
    lo, hi = np.uint64(3), np.uint64(2 ** 63 + 1)
    case("clip13_u64", "Clip", [u, lo, hi], [np.clip(u, lo, hi)], 13)

    # Max/Min propagate NaN; uint64 above 2^63; int8 broadcast
    m1 = np.array([1, np.nan, 3, -np.inf], np.float32)
    m2 = np.array([np.nan, 2, 1, 0], np.float32)
    case("max_nan", "Max", [m1, m2], [np.maximum(m1, m2)], 13)
    case("min_nan", "Min", [m1, m2, np.float32([0])], [np.minimum(np.minimum(m1, m2), 0)], 13)
    u1 = np.array([1, 2 ** 63, 2 ** 64 - 1], np.uint64)
    u2 = np.array([2 ** 63 + 5, 3, 0], np.uint64)
    case("max_u64", "Max", [u1, u2], [np.maximum(u1, u2)], 13)
    case("min_i8_bcast", "Min", [np.int8([[1], [-5]]), np.int8([0, -7, 3])],
         [np.minimum(np.int8([[1], [-5]]), np.int8([0, -7, 3]))], 13)
    s1, s2, s3 = f32(3, 1), f32(1, 4), f32(4)
    case("mean3", "Mean", [s1, s2, s3], [((s1.astype(np.float64) + s2 + s3) / 3).astype(np.float32)], 13)
    case("sum_dbl", "Sum", [s1.astype(np.float64), s3.astype(np.float64)], [s1.astype(np.float64) + s3], 13)

    # comparisons on uint64; Equal on strings, bools, NaN
    case("less_u64", "Less", [u1, u2], [u1 < u2], 13)
    case("greater_eq_u64", "GreaterOrEqual", [u1, u2], [u1 >= u2], 16)
    es1 = np.array(["a", "bc", "", "x"], dtype=object)
    es2 = np.array(["a", "b", "", "y"], dtype=object)
    case("equal_str", "Equal", [es1, es2], [np.array([True, False, True, False])], 19)
    case("equal_bool", "Equal", [ab, bb], [ab == bb], 13)
    case("equal_nan", "Equal", [m1, m1], [m1 == m1], 13)

    # Mod: sign of the divisor (fmod=0) or of the dividend (fmod=1); INT64_MIN % -1
    mi = np.array([-7, 7, -7, 7, np.iinfo(np.int64).min], np.int64)
    md = np.array([3, -3, -3, 3, -1], np.int64)
    case("mod_i64", "Mod", [mi, md], [np.array([2, -2, -1, 1, 0], np.int64)], 13)
    case("mod_i64_fmod", "Mod", [mi, md], [np.array([-1, 1, -1, 1, 0], np.int64)], 13, dict(fmod=1))
    mu = np.array([2 ** 64 - 1, 10], np.uint64)
    mud = np.array([2 ** 63, 3], np.uint64)
    case("mod_u64", "Mod", [mu, mud], [mu % mud], 13)
    case("mod_i8_bcast", "Mod", [np.int8([[-128], [127]]), np.int8([7, -7])],
         [np.mod(np.int8([[-128], [127]]), np.int8([7, -7]))], 13)

    # BitShift by the width or more gives 0
    bs = np.array([1, 255, 128], np.uint8)
    bsh = np.array([7, 8, 200], np.uint8)
    case("shl_u8", "BitShift", [bs, bsh], [np.array([128, 0, 0], np.uint8)], 11, dict(direction="LEFT"))
    case("shr_u64", "BitShift", [np.uint64([2 ** 64 - 1, 8]), np.uint64([63, 64])], [np.uint64([1, 0])], 11,
         dict(direction="RIGHT"))
    bi1 = np.int32([5, -1, 0x0f0f])
    bi2 = np.int32([3, 7, -256])
    case("band", "BitwiseAnd", [bi1, bi2], [bi1 & bi2], 18)
    case("bor", "BitwiseOr", [bi1, bi2], [bi1 | bi2], 18)
    case("bxor", "BitwiseXor", [bi1, bi2], [bi1 ^ bi2], 18)

    # Where on strings and with broadcast
    c = np.array([[True], [False]])
    ws1 = np.array(["x", "y", "z"], dtype=object)
    ws2 = np.array(["p"], dtype=object)
    case("where_str", "Where", [c, ws1, ws2], [np.where(c, ws1, ws2).astype(object)], 16)
    w1, w2 = np.uint8([1, 2, 3]), np.uint8([[9]])
    case("where_u8", "Where", [c, w1, w2], [np.where(c, w1, w2)], 16)

    # Cast
    def ct(name, x, to, y, opset=13):
        case(name, "Cast", [x], [y], opset, dict(to=to))

    xf = np.array([1.5, -1.5, 300.7, -0.0, 1e10, np.nan], np.float32)
    ct("cast_f_i32", xf[:4], TP.INT32, xf[:4].astype(np.int32))
    ct("cast_f_u8", xf[:4], TP.UINT8, np.uint8([1, 255, 44, 0]))
    ct("cast_f_bool", xf, TP.BOOL, xf.astype(bool))
    big = np.int64([2 ** 53 + 1, -(2 ** 62) - 1, 16777217])
    ct("cast_i64_f", big, TP.FLOAT, big.astype(np.float32))
    ct("cast_u64_d", np.uint64([2 ** 64 - 1, 3]), TP.DOUBLE, np.uint64([2 ** 64 - 1, 3]).astype(np.float64))
    ct("cast_i32_i8", np.int32([300, -129, 127]), TP.INT8, np.int32([300, -129, 127]).astype(np.int8))
    halfway = np.float64([1.0009765625 + 2 ** -11 + 1e-12, 65520.0, 1e-8, 0.1])
    with np.errstate(over="ignore"):  # 65520 rounds to float16 infinity, as intended
        ct("cast_d_f16", halfway, TP.FLOAT16, halfway.astype(np.float16))
    ct("cast_bool_f", np.array([True, False]), TP.FLOAT, np.float32([1, 0]))
    ct("cast_opset1_str_to", np.int32([1, 2]), "FLOAT", np.float32([1, 2]), 1)
    vals = np.array([0.1, 1e-5, 1.5e20, 123456.0, 1e16, 9999999999999998.0, -2.5e-7, 3.0, np.inf, -np.inf,
                     np.nan, 1e-4, 0.00012345, 65504], np.float32)
    ct("cast_f_str", vals, TP.STRING, np.array([str(v) for v in vals], dtype=object))
    vd = np.array([0.1, 1 / 3, 1e300, 5e-324, 2.0 ** 60, -0.0], np.float64)
    ct("cast_d_str", vd, TP.STRING, np.array([str(v) for v in vd], dtype=object))
    vh = np.array([0.1, 65504, 6e-8, 1 / 3, 1000.5], np.float16)
    ct("cast_h_str", vh, TP.STRING, np.array([str(v) for v in vh], dtype=object))
    ct("cast_i_str", np.int64([-5, 2 ** 62]), TP.STRING, np.array(["-5", str(2 ** 62)], dtype=object))
    ct("cast_u64_str", np.uint64([2 ** 64 - 1]), TP.STRING, np.array([str(2 ** 64 - 1)], dtype=object))
    ss = np.array(["1e-5", "  3.25 ", "-INF", "nan", "1E8"], dtype=object)
    ct("cast_str_d", ss, TP.DOUBLE, np.float64([1e-5, 3.25, -np.inf, np.nan, 1e8]))
    ct("cast_str_i64", np.array(["-42", "9223372036854775807"], dtype=object), TP.INT64,
       np.int64([-42, 9223372036854775807]))
    ct("cast_str_f16", np.array(["0.1", "70000"], dtype=object), TP.FLOAT16, np.float16([0.1, np.inf]))
    ct("cast_str_i8", np.array(["-128", " 127"], dtype=object), TP.INT8, np.int8([-128, 127]))
    ct("cast_str_u16", np.array(["65535"], dtype=object), TP.UINT16, np.uint16([65535]))

    # Det, integer PRelu
    dm = f32(2, 3, 5, 5)
    case("det_big", "Det", [dm], [np.linalg.det(dm.astype(np.float64)).astype(np.float32)], 11)
    case("det_sing", "Det", [np.float32([[1, 2], [2, 4]])], [np.float32(0)], 11)
    case("det_d", "Det", [dm[0, 0].astype(np.float64)], [np.linalg.det(dm[0, 0].astype(np.float64))], 11)
    case("prelu_i32", "PRelu", [np.int32([[-3, 4], [5, -6]]), np.int32([2, -1])],
         [np.int32([[-6, 4], [5, 6]])], 16)

    # DFT: signals carry a trailing [re] or [re, im] axis
    def dft_in(x, cplx):
        if cplx:
            return np.stack([x.real, x.imag], -1).astype(np.float32)
        return x[..., None].astype(np.float32)

    def dft_out(y):
        return np.stack([y.real, y.imag], -1).astype(np.float32)

    xr = rng.standard_normal((2, 7, 3))
    xc = rng.standard_normal((2, 6, 3)) + 1j * rng.standard_normal((2, 6, 3))
    case("dft_len_pad", "DFT", [dft_in(xr, False), np.int64(10)], [dft_out(np.fft.fft(xr, n=10, axis=1))], 17,
         dict(axis=1))
    case("dft_len_trunc_ax2", "DFT", [dft_in(xr, False), np.int64(2)], [dft_out(np.fft.fft(xr, n=2, axis=2))],
         17, dict(axis=2))
    case("dft_onesided", "DFT", [dft_in(xr, False)], [dft_out(np.fft.rfft(xr, axis=1))], 17,
         dict(axis=1, onesided=1))
    case("dft_cplx_inv_neg", "DFT", [dft_in(xc, True)], [dft_out(np.fft.ifft(xc, axis=2))], 17,
         dict(axis=-2, inverse=1))
    # a 4-point signal zero-padded to 2^20 points: cheap when only the points present are summed
    z4 = np.zeros((1, 4), np.float64)
    case("dft_work", "DFT", [dft_in(z4, False), np.int64(2 ** 20)],
         [dft_out(np.fft.fft(z4, n=2 ** 20, axis=1))], 17)

    # STFT
    sig = rng.standard_normal((2, 40))
    win = np.hanning(8).astype(np.float32)

    def stft(s, fl, step, w, onesided):
        frames = (s.shape[1] - fl) // step + 1
        res = []
        for b in range(s.shape[0]):
            rows = []
            for f in range(frames):
                seg = s[b, f * step:f * step + fl] * (w if w is not None else 1)
                y = np.fft.fft(seg)
                rows.append(y[:fl // 2 + 1] if onesided else y)
            res.append(rows)
        return dft_out(np.array(res))

    case("stft_full", "STFT", [sig[..., None].astype(np.float32), np.int64(5), win],
         [stft(sig, 8, 5, win, False)], 17, dict(onesided=0))
    case("stft_both", "STFT", [sig[..., None].astype(np.float32), np.int64(3), win, np.int64(8)],
         [stft(sig, 8, 3, win, True)], 17)
    sc = rng.standard_normal((1, 20)) + 1j * rng.standard_normal((1, 20))
    case("stft_cplx", "STFT", [dft_in(sc, True), np.int64(4), np.float32(np.ones(6))],
         [stft(sc, 6, 4, np.ones(6), False)], 17, dict(onesided=0))

    # window functions: double output, symmetric, size 1
    case("hann_d", "HannWindow", [np.int64(7)], [(0.5 - 0.5 * np.cos(2 * np.pi * np.arange(7) / 7))], 17,
         dict(output_datatype=TP.DOUBLE))
    case("blackman_sym", "BlackmanWindow", [np.int64(5)], [np.blackman(5).astype(np.float32)], 17,
         dict(periodic=0))
    case("hamming_1", "HammingWindow", [np.int32(1)], [np.float32([25 / 46 - 21 / 46])], 17)

    # StringNormalizer on [1, C] input
    sn = np.array(["Hello", "WORLD", "the", "The"], dtype=object).reshape(1, 4)
    case("strnorm_lower_2d", "StringNormalizer", [sn],
         [np.array(["hello", "world"], dtype=object).reshape(1, 2)], 10,
         dict(case_change_action="LOWER", stopwords=["the"]))
    case("strnorm_all_2d", "StringNormalizer", [np.array(["a", "A"], dtype=object).reshape(1, 2)],
         [np.array([""], dtype=object).reshape(1, 1)], 10, dict(stopwords=["a"]))

    # NonMaxSuppression: equal scores keep index order; no max_output_boxes_per_class selects nothing
    bx = np.float32([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [0, 0, 1, 1]]])
    scs = np.float32([[[0.5, 0.5, 0.5, 0.9]]])
    case("nms_ties", "NonMaxSuppression", [bx, scs, np.int64([10])], [np.int64([[0, 0, 3], [0, 0, 2]])], 11)
    case("nms_nomax", "NonMaxSuppression", [bx, scs], [np.zeros((0, 3), np.int64)], 11)


if __name__ == "__main__":
    main()
