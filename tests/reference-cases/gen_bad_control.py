"""Control-flow, sequence and RNN models that the executor must refuse cleanly: a Loop scan output or a Scan
state that changes shape between iterations, a Loop body failing in a later iteration, Scan-8 sequence_lens
out of range, SplitToSequence sizes that do not add up (or a zero scalar split), ConcatFromSequence of
mismatched shapes, a SequenceMap body failing on one element, RNN sequence_lens out of range, LSTM weights of
the wrong shape, If with a non-bool condition, OptionalGetElement of an empty optional, and what the executor
declines by design (an unknown activation, a zero sequence length). Each case's expected outcome goes to
OUT/expected-outcomes.txt; outputs are dummies.

Usage: /usr/bin/python3 gen_bad_control.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import casegen
from casegen import tensor_vi

node = helper.make_node


def fv(name):
    """A float of unknown shape."""
    return tensor_vi(name, elem_type=TP.FLOAT)


def scalar_vi(name, elem_type):
    return tensor_vi(name, elem_type=elem_type, shape=[])


def const(name, value):
    return node("Constant", [], [name], value=numpy_helper.from_array(np.array(value), name))


def main():
    bad = casegen.BadCases(casegen.out_dir_from_argv())

    def save(name, nodes, ins, ivi, outs, opset=13, expect="error", why=""):
        """outs: graph output names, declared float of unknown shape."""
        model = casegen.make_model(nodes, name, ivi, [fv(n) for n in outs], opset, ir_version=8)
        bad.add(name, model, [(vi.name, v) for vi, v in zip(ivi, ins)], outs, expect, why)

    x = np.arange(10, dtype=np.float32)
    M = np.array(4, np.int64)
    mx_vi = [tensor_vi("M", M), tensor_vi("x", x)]

    # Loop whose scan output grows each iteration (x[0:i+1])
    body = helper.make_graph([const("one", np.array([1], np.int64)), const("zero", np.array([0], np.int64)),
                              node("Unsqueeze", ["i", "zero"], ["iu"]), node("Add", ["iu", "one"], ["e"]),
                              node("Slice", ["x", "zero", "e"], ["sc"]), node("Identity", ["cin"], ["cout"])],
                             "b",
                             [scalar_vi("i", TP.INT64), scalar_vi("cin", TP.BOOL)],
                             [scalar_vi("cout", TP.BOOL), fv("sc")])
    save("loop_grow", [node("Loop", ["M", ""], ["y"], body=body)], [M, x], mx_vi, ["y"])
    # Loop body failing at iteration 3: SequenceAt(a sequence of 2, i)
    body2 = helper.make_graph([node("SequenceConstruct", ["x", "x"], ["s"]),
                               node("SequenceAt", ["s", "i"], ["sc"]),
                               node("Identity", ["cin"], ["cout"]), node("Identity", ["v"], ["vo"])], "b",
                              [scalar_vi("i", TP.INT64), scalar_vi("cin", TP.BOOL), fv("v")],
                              [scalar_vi("cout", TP.BOOL), fv("vo"), fv("sc")])
    save("loop_body_fails", [node("Loop", ["M", "", "x"], ["vf", "y"], body=body2)], [M, x], mx_vi,
         ["vf", "y"])
    # Scan whose state grows: s_out = concat(s, e)
    body3 = helper.make_graph([node("Concat", ["s", "e"], ["so"], axis=0), node("Identity", ["so"], ["o"])],
                              "b", [fv("s"), fv("e")], [fv("so"), fv("o")])
    xs = np.ones((3, 2), np.float32)
    s0 = np.zeros(0, np.float32)
    save("scan_grow", [node("Scan", ["s0", "xs"], ["sf", "y"], body=body3, num_scan_inputs=1)], [s0, xs],
         [tensor_vi("s0", s0), tensor_vi("xs", xs)], ["sf", "y"], opset=11)
    xs8 = np.ones((2, 3, 2), np.float32)
    s8 = np.zeros((2, 0), np.float32)
    for name, lens in (("scan8_badlen", [2, 5]), ("scan8_grow", [2, 3])):
        ln = np.array(lens, np.int64)
        save(name, [node("Scan", ["lens", "s8", "xs8"], ["sf", "y"], body=body3, num_scan_inputs=1)],
             [ln, s8, xs8], [tensor_vi("lens", ln), tensor_vi("s8", s8), tensor_vi("xs8", xs8)], ["sf", "y"],
             opset=8)
    # SplitToSequence sizes that do not cover the axis, or a zero scalar split
    for name, sp in (("split_bad", np.array([3, -1], np.int64)), ("split_bad0", np.array(0, np.int64))):
        save(name, [node("SplitToSequence", ["x", "sp"], ["s"]),
                    node("ConcatFromSequence", ["s"], ["y"], axis=0)],
             [x, sp], [tensor_vi("x", x), tensor_vi("sp", sp)], ["y"])
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 3), np.float32)
    save("concat_bad", [node("SequenceConstruct", ["a", "b"], ["s"]),
                        node("ConcatFromSequence", ["s"], ["y"], axis=1)],
         [a, b], [tensor_vi("a", a), tensor_vi("b", b)], ["y"])
    # SequenceMap whose body fails on the 2nd element ([3,3] + [2,3])
    body4 = helper.make_graph([node("Add", ["e", "bt"], ["o"])], "b", [fv("e"), fv("bt")], [fv("o")])
    tt = np.ones((2, 3), np.float32)
    save("seqmap_fail", [node("SequenceConstruct", ["aa", "bb"], ["s"]),
                         node("SequenceMap", ["s", "tt"], ["y"], body=body4),
                         node("ConcatFromSequence", ["y"], ["z"], axis=0)],
         [a, b, tt], [tensor_vi("aa", a), tensor_vi("bb", b), tensor_vi("tt", tt)], ["z"], opset=17)
    # RNN family: sequence_lens out of range / zero, W of the wrong shape, an unknown activation
    X = np.ones((3, 2, 4), np.float32)
    W = np.ones((1, 5, 4), np.float32)
    R = np.ones((1, 5, 5), np.float32)
    rnn_vi = [tensor_vi("X", X), tensor_vi("W", W), tensor_vi("R", R)]
    for name, sl, expect, why in (("rnn_badlen", [3, 4], "error", ""),
                                  ("rnn_zerolen", [0, 3], "unsupported",
                                   "the spec leaves Y_h undefined for a zero length")):
        SL = np.array(sl, np.int32)
        save(name, [node("RNN", ["X", "W", "R", "", "SL"], ["Y"], hidden_size=5)], [X, W, R, SL],
             rnn_vi + [tensor_vi("SL", SL)], ["Y"], expect=expect, why=why)
    save("lstm_badW", [node("LSTM", ["X", "W", "R"], ["Y"], hidden_size=5)], [X, W, R], rnn_vi, ["Y"])
    Wg = np.ones((1, 15, 4), np.float32)
    Rg = np.ones((1, 15, 5), np.float32)
    save("gru_badact", [node("GRU", ["X", "W", "R"], ["Y"], activations=["Sigmoid", "Foo"])], [X, Wg, Rg],
         [tensor_vi("X", X), tensor_vi("W", Wg), tensor_vi("R", Rg)], ["Y"],
         expect="unsupported", why="an activation name the executor does not know")
    # If with an int32 condition; OptionalGetElement of an empty optional
    ci = np.array(1, np.int32)
    tb = helper.make_graph([const("k", np.float32(1))], "t", [], [scalar_vi("k", TP.FLOAT)])
    eb = helper.make_graph([const("k2", np.float32(2))], "e", [], [scalar_vi("k2", TP.FLOAT)])
    save("if_int_cond", [node("If", ["ci"], ["y"], then_branch=tb, else_branch=eb)], [ci],
         [tensor_vi("ci", ci)], ["y"])
    save("opt_get_empty", [node("Optional", [], ["o"], type=helper.make_tensor_type_proto(TP.FLOAT, [2])),
                           node("OptionalGetElement", ["o"], ["y"])], [], [], ["y"], opset=15)
    bad.close()


if __name__ == "__main__":
    main()
