"""Control-flow, sequence and optional cases with numpy-computed expected outputs: Scan 9/11/16 (input/output
axes incl. negative, directions, zero steps), Scan 8 (batch, sequence_lens, reverse, zero length), Loop (zero
trips, false condition, while, for, both, zero trips with an undeclared scan-output shape), SplitToSequence
(no split, scalar, 1-D, strings, keepdims), ConcatFromSequence (axis, new_axis), SequenceInsert/Erase/At/
Length with negative positions, SequenceEmpty, SequenceMap (empty, two outputs), Optional,
OptionalHasElement and OptionalGetElement at opsets 15 and 18, If with sequence-valued branches.

Oracle: the loops and scans are simulated step by step in numpy.
Usage: /usr/bin/python3 gen_control.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import casegen
from casegen import seq_vi, tensor_vi

node = helper.make_node


def save(out, name, nodes, ins, outs, opset, ins_vi, outs_vi):
    model = casegen.make_model(nodes, name, ins_vi, outs_vi, opset, ir_version=8)
    casegen.write_case(out, name, model, [(vi.name, v) for vi, v in zip(ins_vi, ins)],
                       [(vi.name, v) for vi, v in zip(outs_vi, outs)])


def scalar_vi(name, elem_type):
    return tensor_vi(name, elem_type=elem_type, shape=[])


def gen_scan(out, rng):
    def scan9(opset, in_axes, in_dirs, out_axes, out_dirs, shape=(3, 4, 2)):
        """Scan-9+ over two inputs: s_out = s + e1 * e2, scan outputs o1 = s_out and o2 = e1 + e2."""
        x1 = rng.standard_normal(shape).astype(np.float32)
        x2 = rng.standard_normal(shape).astype(np.float32)
        ax = [a % 3 for a in in_axes]
        L = shape[ax[0]]
        e_shape = list(shape)
        del e_shape[ax[0]]
        s = np.zeros(e_shape, np.float32)
        o1, o2 = [], []
        for t in range(L):
            i1 = L - 1 - t if in_dirs[0] else t
            i2 = L - 1 - t if in_dirs[1] else t
            e1 = np.take(x1, i1, axis=ax[0])
            e2 = np.take(x2, i2, axis=ax[1])
            s = s + e1 * e2
            o1.append(s.copy())
            o2.append(e1 + e2)
        outs = []
        for k, o in enumerate([o1, o2]):
            if out_dirs[k]:
                o = o[::-1]
            a = out_axes[k] % 3
            if not o:
                sh = list(e_shape)
                sh.insert(a, 0)
                outs.append(np.zeros(sh, np.float32))
            else:
                outs.append(np.stack(o, axis=a))

        def ev(n):
            return tensor_vi(n, elem_type=TP.FLOAT, shape=e_shape)

        body = helper.make_graph([node("Mul", ["e1", "e2"], ["p"]), node("Add", ["s", "p"], ["s_out"]),
                                  node("Identity", ["s_out"], ["o1"]), node("Add", ["e1", "e2"], ["o2"])],
                                 "body", [ev("s"), ev("e1"), ev("e2")], [ev("s_out"), ev("o1"), ev("o2")])
        scan = node("Scan", ["s0", "x1", "x2"], ["sf", "y1", "y2"], body=body, num_scan_inputs=2,
                    scan_input_axes=in_axes, scan_input_directions=in_dirs, scan_output_axes=out_axes,
                    scan_output_directions=out_dirs)
        s0 = np.zeros(e_shape, np.float32)
        name = "scan%d_%s" % (opset, "_".join(map(str, in_axes + in_dirs + out_axes + out_dirs)))
        save(out, name, [scan], [s0, x1, x2], [s, outs[0], outs[1]], opset,
             [tensor_vi("s0", s0), tensor_vi("x1", x1), tensor_vi("x2", x2)],
             [tensor_vi("sf", s), tensor_vi("y1", outs[0]), tensor_vi("y2", outs[1])])

    scan9(9, [0, 0], [0, 0], [0, 0], [0, 0])
    scan9(9, [1, 2], [1, 0], [1, 2], [0, 1], shape=(3, 3, 3))
    scan9(11, [-1, 1], [0, 1], [-1, -3], [1, 1], shape=(3, 3, 3))
    scan9(16, [2, 0], [1, 1], [0, 1], [1, 0], shape=(2, 2, 2))
    scan9(11, [1, 1], [0, 0], [1, 0], [0, 0], shape=(2, 0, 3))  # zero steps

    def scan8(lens, dirs):
        """Scan-8 over a batch: s_out = s + e, scan output o = s_out; rows past sequence_lens stay zero."""
        B, L, D = 2, 4, 3
        x = rng.standard_normal((B, L, D)).astype(np.float32)
        s0 = rng.standard_normal((B, D)).astype(np.float32)
        sf = np.zeros((B, D), np.float32)
        y = np.zeros((B, L, D), np.float32)
        for b in range(B):
            n = L if lens is None else lens[b]
            s = s0[b].copy()
            for t in range(n):
                i = n - 1 - t if dirs[0] else t
                s = s + x[b, i]
                y[b, t] = s
            sf[b] = s

        def dv(n):
            return tensor_vi(n, elem_type=TP.FLOAT, shape=[D])

        body = helper.make_graph([node("Add", ["s", "e"], ["s_out"]), node("Identity", ["s_out"], ["o"])],
                                 "body", [dv("s"), dv("e")], [dv("s_out"), dv("o")])
        ins = [s0, x]
        ivi = [tensor_vi("s0", s0), tensor_vi("x", x)]
        names = ["", "s0", "x"]
        if lens is not None:
            sl = np.array(lens, np.int64)
            ins = [sl] + ins
            ivi = [tensor_vi("sl", sl)] + ivi
            names[0] = "sl"
        scan = node("Scan", names, ["sf", "y"], body=body, num_scan_inputs=1, directions=dirs)
        name = "scan8_%s_%s" % (lens, dirs)
        for old, new in ((" ", ""), ("[", ""), ("]", ""), (",", "-")):
            name = name.replace(old, new)
        save(out, name, [scan], ins, [sf, y], 8, ivi, [tensor_vi("sf", sf), tensor_vi("y", y)])

    scan8(None, [0])
    scan8([3, 1], [0])
    scan8([4, 2], [1])
    scan8([0, 4], [1])


def gen_loop(out):
    def loop_case(name, M, cond, opset=13, body_cond="true", scan_decl=(2,)):
        """Carried v (float[2]) with v_out = v + 1, scan output v_out; the body's condition is its input
        (true) or i < 2 (lt). M / cond None = that Loop input omitted."""
        one = numpy_helper.from_array(np.ones(2, np.float32), "one")
        nodes = [node("Constant", [], ["onec"], value=one), node("Add", ["v", "onec"], ["v_out"]),
                 node("Identity", ["v_out"], ["sc"])]
        if body_cond == "true":
            nodes.append(node("Identity", ["c"], ["c_out"]))
        else:
            two = numpy_helper.from_array(np.array(2, np.int64), "two")
            nodes += [node("Constant", [], ["two"], value=two), node("Less", ["i", "two"], ["c_out"])]
        body = helper.make_graph(nodes, "body",
                                 [scalar_vi("i", TP.INT64), scalar_vi("c", TP.BOOL),
                                  tensor_vi("v", elem_type=TP.FLOAT, shape=[2])],
                                 [scalar_vi("c_out", TP.BOOL),
                                  tensor_vi("v_out", elem_type=TP.FLOAT, shape=[2]),
                                  tensor_vi("sc", elem_type=TP.FLOAT, shape=list(scan_decl))])
        v0 = np.array([1, 2], np.float32)
        ins, ivi, names = [], [], []
        if M is not None:
            m = np.array(M, np.int64)
            ins.append(m)
            ivi.append(tensor_vi("M", m))
            names.append("M")
        else:
            names.append("")
        if cond is not None:
            c = np.array(cond, bool)
            ins.append(c)
            ivi.append(tensor_vi("cond", c))
            names.append("cond")
        else:
            names.append("")
        ins.append(v0)
        ivi.append(tensor_vi("v0", v0))
        names.append("v0")
        # simulate
        v = v0.copy()
        sc = []
        it = 0
        cv = True if cond is None else cond
        while (M is None or it < M) and cv:
            v = v + 1
            sc.append(v.copy())
            nc = cv if body_cond == "true" else (it < 2)
            if cond is not None:
                cv = nc
            it += 1
        y = np.stack(sc) if sc else np.zeros([0, 2], np.float32)
        loop = node("Loop", names, ["vf", "ys"], body=body)
        save(out, name, [loop], ins, [v, y], opset, ivi, [tensor_vi("vf", v), tensor_vi("ys", y)])

    loop_case("loop_zero_trip", 0, True)
    loop_case("loop_false_cond", 5, False)
    loop_case("loop_while", None, True, body_cond="lt")
    loop_case("loop_for_only", 3, None)
    loop_case("loop_both_lt", 10, True, body_cond="lt")
    loop_case("loop_zero_unknown_shape", 0, True, scan_decl=("n",))


def gen_sequences(out, rng):
    x = rng.standard_normal((3, 5, 2)).astype(np.float32)
    xv = tensor_vi("x", x)
    sf = [seq_vi("s", TP.FLOAT)]
    save(out, "split_nosplit_keep0", [node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0)], [x],
         [[x[:, i] for i in range(5)]], 11, [xv], sf)
    save(out, "split_nosplit_keep1_neg", [node("SplitToSequence", ["x"], ["s"], axis=-2)], [x],
         [[x[:, i:i + 1] for i in range(5)]], 11, [xv], sf)
    sp = np.array(2, np.int64)
    save(out, "split_scalar", [node("SplitToSequence", ["x", "sp"], ["s"], axis=1)], [x, sp],
         [[x[:, 0:2], x[:, 2:4], x[:, 4:5]]], 11, [xv, tensor_vi("sp", sp)], sf)
    sp1 = np.array([1, 0, 4], np.int32)
    save(out, "split_1d", [node("SplitToSequence", ["x", "sp"], ["s"], axis=1, keepdims=0)], [x, sp1],
         [[x[:, 0:1], x[:, 1:1], x[:, 1:5]]], 11, [xv, tensor_vi("sp", sp1)], sf)
    xs = np.array([["a", "bc"], ["", "def"]], dtype=object)
    save(out, "split_string", [node("SplitToSequence", ["x"], ["s"], axis=0)], [xs], [[xs[0:1], xs[1:2]]], 11,
         [tensor_vi("x", xs)], [seq_vi("s", TP.STRING)])

    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 1)).astype(np.float32)
    c = rng.standard_normal((2, 3)).astype(np.float32)
    av, bv, cv = tensor_vi("a", a), tensor_vi("b", b), tensor_vi("c", c)
    y = np.concatenate([a, b, c], 1)
    save(out, "concat_axis1", [node("SequenceConstruct", ["a", "b", "c"], ["s"]),
                               node("ConcatFromSequence", ["s"], ["y"], axis=-1)],
         [a, b, c], [y], 11, [av, bv, cv], [tensor_vi("y", y)])
    for ax in [0, 1, 2, -1, -3]:
        yy = np.stack([a, c], axis=ax)
        save(out, "concat_new_axis_%d" % ax, [node("SequenceConstruct", ["a", "c"], ["s"]),
                                              node("ConcatFromSequence", ["s"], ["y"], axis=ax, new_axis=1)],
             [a, c], [yy], 11, [av, cv], [tensor_vi("y", yy)])
    p = np.array(-1, np.int64)
    p3 = np.array(-3, np.int32)
    save(out, "insert_neg", [node("SequenceConstruct", ["a", "c"], ["s"]),
                             node("SequenceInsert", ["s", "b2", "p"], ["s2"])],
         [a, c, a * 2, p], [[a, a * 2, c]], 11, [av, cv, tensor_vi("b2", a), tensor_vi("p", p)],
         [seq_vi("s2", TP.FLOAT)])
    save(out, "erase_neg_at_neg", [node("SequenceConstruct", ["a", "c", "b2"], ["s"]),
                                   node("SequenceErase", ["s", "p3"], ["s2"]),
                                   node("SequenceAt", ["s2", "p"], ["y"]),
                                   node("SequenceLength", ["s2"], ["n"]),
                                   node("SequenceErase", ["s2"], ["s3"])],
         [a, c, a * 2, p3, p], [[c, a * 2], a * 2, np.array(2, np.int64), [c]], 11,
         [av, cv, tensor_vi("b2", a), tensor_vi("p3", p3), tensor_vi("p", p)],
         [seq_vi("s2", TP.FLOAT), tensor_vi("y", a), scalar_vi("n", TP.INT64), seq_vi("s3", TP.FLOAT)])
    save(out, "empty_len", [node("SequenceEmpty", [], ["s"], dtype=TP.INT32),
                            node("SequenceLength", ["s"], ["n"]),
                            node("SequenceInsert", ["s", "i"], ["s2"])],
         [np.array([5], np.int32)], [np.array(0, np.int64), [np.array([5], np.int32)]], 11,
         [tensor_vi("i", elem_type=TP.INT32, shape=[1])], [scalar_vi("n", TP.INT64), seq_vi("s2", TP.INT32)])

    # SequenceMap over an empty sequence and with two outputs
    body = helper.make_graph([node("Add", ["e", "bt"], ["o1"]), node("Shape", ["e"], ["o2"])], "body",
                             [tensor_vi("e", elem_type=TP.FLOAT), tensor_vi("bt", elem_type=TP.FLOAT)],
                             [tensor_vi("o1", elem_type=TP.FLOAT),
                              tensor_vi("o2", elem_type=TP.INT64, shape=[None])])
    ys = [seq_vi("y1", TP.FLOAT), seq_vi("y2", TP.INT64)]
    save(out, "seqmap_empty", [node("SequenceEmpty", [], ["s"]),
                               node("SequenceMap", ["s", "t"], ["y1", "y2"], body=body)],
         [a], [[], []], 17, [tensor_vi("t", a)], ys)
    save(out, "seqmap_two", [node("SequenceConstruct", ["a", "c"], ["s"]),
                             node("SequenceMap", ["s", "t"], ["y1", "y2"], body=body)],
         [a, c, b], [[a + b, c + b], [np.array([2, 3], np.int64)] * 2], 17, [av, cv, tensor_vi("t", b)], ys)

    # optionals: a plain tensor and an omitted input as optionals (opset 18), Optional construction (opset 15)
    save(out, "opt18_tensor", [node("OptionalHasElement", ["a"], ["h"]),
                               node("OptionalGetElement", ["a"], ["g"]),
                               node("OptionalHasElement", [""], ["h0"])],
         [a], [np.array(True), a, np.array(False)], 18, [av],
         [scalar_vi("h", TP.BOOL), tensor_vi("g", a), scalar_vi("h0", TP.BOOL)])
    save(out, "opt15_wrap", [node("Optional", ["a"], ["o"]), node("OptionalHasElement", ["o"], ["h"]),
                             node("OptionalGetElement", ["o"], ["g"]),
                             node("Optional", [], ["e"], type=helper.make_tensor_type_proto(TP.FLOAT, [2])),
                             node("OptionalHasElement", ["e"], ["h2"])],
         [a], [np.array(True), a, np.array(False)], 15, [av],
         [scalar_vi("h", TP.BOOL), tensor_vi("g", a), scalar_vi("h2", TP.BOOL)])

    # If whose branches build sequences from outer-scope values
    s_vi = [seq_vi("s", TP.FLOAT)]
    thenb = helper.make_graph([node("SequenceConstruct", ["a", "c"], ["s"])], "then", [], s_vi)
    elseb = helper.make_graph([node("SequenceConstruct", ["c"], ["s"])], "else", [], s_vi)
    for flag in [True, False]:
        cc = np.array(flag)
        save(out, "if_seq_%s" % flag, [node("If", ["cond"], ["y"], then_branch=thenb, else_branch=elseb)],
             [cc, a, c], [[a, c] if flag else [c]], 13, [tensor_vi("cond", cc), av, cv],
             [seq_vi("y", TP.FLOAT)])


def main():
    out = casegen.out_dir_from_argv()
    rng = np.random.default_rng(1)
    gen_scan(out, rng)
    gen_loop(out)
    gen_sequences(out, rng)


if __name__ == "__main__":
    main()
