"""Malformed ops_misc / ops_signal models that the executor must refuse cleanly: strings that do not parse or
do not fit the Cast target, integer Mod by zero, float Mod without fmod, RoiAlign on an empty map / with a bad
batch index / a NaN or enormous RoI, DFT / window / MelWeightMatrix sizes that are empty, negative or over
budget, an out-of-range NMS threshold, STFT without a frame length or longer than the signal, GridSample rank
5 and a bad mode, a broadcast over the 2^31-element budget, mixed Where types, legacy (opset 6) broadcasts
that do not fit, bad Clip / BitShift / Det / PRelu inputs, and what the executor declines by design (random
ops, non-ASCII or non-en_US StringNormalizer). Each case's expected outcome goes to
OUT/expected-outcomes.txt; outputs are dummies typed as the op would produce them.

Usage: /usr/bin/python3 gen_bad_misc.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto as TP
from onnx import mapping

import casegen


def main():
    bad = casegen.BadCases(casegen.out_dir_from_argv())
    rng = np.random.default_rng(1)

    def case(name, op, inputs, outputs, opset, attrs=None, expect="error", why=""):
        bad.single_node(name, op, inputs, opset, attrs, outputs=outputs, expect=expect, why=why)

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    def zeros(*s):
        return np.zeros(s, np.float32)

    def strings(*v):
        return np.array(v, dtype=object)

    def ct(name, x, to, opset=13):
        case(name, "Cast", [x], [np.zeros(x.shape, mapping.TENSOR_TYPE_TO_NP_TYPE[to])], opset, dict(to=to))

    ct("str_i8_range", strings("128"), TP.INT8)
    ct("str_u8_neg", strings("-1"), TP.UINT8)
    ct("str_hex", strings("0x10"), TP.FLOAT)
    ct("str_junk", strings("1.5abc"), TP.DOUBLE)
    ct("str_i64_big", strings("99999999999999999999"), TP.INT64)
    case("mod_zero", "Mod", [np.int32([1]), np.int32([0])], [np.int32([0])], 13)
    case("mod_float_fmod0", "Mod", [np.float32([1]), np.float32([2])], [np.float32([0])], 13)
    roi_out = [zeros(1, 1, 1, 1)]
    box, idx0 = np.float32([[0, 0, 1, 1]]), np.int64([0])
    case("roi_empty", "RoiAlign", [zeros(1, 1, 0, 3), box, idx0], roi_out, 16)
    case("roi_badidx", "RoiAlign", [f32(1, 1, 3, 3), box, np.int64([3])], roi_out, 16)
    case("roi_nan", "RoiAlign", [f32(1, 1, 3, 3), np.float32([[0, np.nan, 1, 1]]), idx0], roi_out, 16)
    case("roi_huge", "RoiAlign", [f32(1, 1, 3, 3), np.float32([[0, 0, 1e30, 1e30]]), idx0], roi_out, 16)
    case("dft_zero", "DFT", [zeros(1, 0, 1)], [zeros(1, 0, 2)], 17)
    case("dft_huge", "DFT", [zeros(1, 4, 1), np.int64(2 ** 40)], [zeros(1, 4, 2)], 17)
    case("hann_neg", "HannWindow", [np.int64(-3)], [zeros(0)], 17)
    case("hann_huge", "HannWindow", [np.int64(2 ** 40)], [zeros(0)], 17)
    case("mel_over", "MelWeightMatrix",
         [np.int32(8), np.int32(16), np.int32(8192), np.float32(0), np.float32(9000)], [zeros(9, 8)], 17)
    case("nms_iou", "NonMaxSuppression", [f32(1, 2, 4), f32(1, 1, 2), np.int64([3]), np.float32([1.5])],
         [np.zeros((0, 3), np.int64)], 11)
    case("stft_nolen", "STFT", [f32(1, 10, 1), np.int64(2)], [zeros(1, 1, 1, 2)], 17)
    case("stft_long", "STFT", [f32(1, 10, 1), np.int64(2), None, np.int64(11)], [zeros(1, 1, 1, 2)], 17)
    case("gs_rank5", "GridSample", [f32(1, 1, 2, 2, 2), f32(1, 2, 2, 2, 3)], [zeros(1, 1, 2, 2, 2)], 16)
    case("gs_badmode", "GridSample", [f32(1, 1, 2, 2), f32(1, 2, 2, 2)], [zeros(1, 1, 2, 2)], 16,
         dict(mode="area"))
    case("bcast_huge", "Equal", [zeros(70000, 1), zeros(1, 70000)], [np.zeros((1, 1), bool)], 13)
    case("where_mismatch", "Where", [np.array([True]), np.int32([1]), np.int64([1])], [np.int32([1])], 16)
    case("strnorm_nonascii", "StringNormalizer", [strings("Ünïcode")], [strings("x")], 10,
         dict(case_change_action="UPPER"), expect="unsupported",
         why="case change of non-ASCII text (locale rules)")
    case("strnorm_locale", "StringNormalizer", [strings("a")], [strings("a")], 10, dict(locale="tr_TR"),
         expect="unsupported", why="only the en_US locale is implemented")
    case("clip_vec", "Clip", [f32(3), np.float32([1, 2])], [f32(3)], 13)
    case("shift_signed", "BitShift", [np.int32([1]), np.int32([1])], [np.int32([2])], 11,
         dict(direction="LEFT"))
    case("shift_dir", "BitShift", [np.uint32([1]), np.uint32([1])], [np.uint32([2])], 11,
         dict(direction="UP"))
    case("det_nonsq", "Det", [f32(2, 3)], [np.float32(0)], 11)
    case("legacy_noattr", "Less", [f32(2, 3), f32(3)], [np.zeros((2, 3), bool)], 6)
    case("legacy_b_bigger", "Equal", [np.int32([[1, 2, 3]]), np.int32([[1], [2]])], [np.zeros((2, 3), bool)],
         6, dict(broadcast=1))
    case("prelu_bad", "PRelu", [f32(2, 3), f32(2)], [f32(2, 3)], 16)
    case("random", "RandomNormal", [], [zeros(2)], 13, dict(shape=[2]),
         expect="unsupported", why="its output is random: nothing to compare")
    bad.close()


if __name__ == "__main__":
    main()
