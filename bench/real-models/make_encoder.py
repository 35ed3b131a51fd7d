#!/usr/bin/python3
"""Builds a small BERT-style encoder as ONNX with onnx.helper (no torch): token embeddings are the input
[batch, seq, hidden]; LAYERS blocks of multi-head self-attention (Q/K/V MatMul + bias, Reshape/Transpose to
heads, scaled QK^T MatMul, Softmax, AV MatMul, output projection), residual Add + LayerNormalization, and a
feed-forward MatMul -> Gelu (erf form: Div, Erf, Add, Mul, Mul) -> MatMul, residual Add + LayerNormalization.
Opset 17 (LayerNormalization), random weights from a fixed seed, plus one random input (input_0.pb).

usage: make_encoder.py OUT_DIR [--layers N] [--hidden H] [--heads A] [--seq S] [--batch B]
Defaults: 4 layers, hidden 256, 4 heads, sequence 128, batch 1 (about 3.2 M parameters, ~0.9 GFLOP per run).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("out_dir")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1)
    a = ap.parse_args()
    if a.hidden % a.heads:
        ap.error("--hidden must be a multiple of --heads")
    rng = np.random.default_rng(7)
    h, heads, dh, ff = a.hidden, a.heads, a.hidden // a.heads, 4 * a.hidden
    nodes, inits = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(arr, name))
        return name

    def weight(name, shape, scale):
        return init(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    init("shape_heads", np.array([a.batch, a.seq, heads, dh], np.int64))
    init("shape_merge", np.array([a.batch, a.seq, h], np.int64))
    init("scale", np.array(1.0 / np.sqrt(dh), np.float32))
    init("sqrt2", np.array(np.sqrt(2.0), np.float32))
    init("one", np.array(1.0, np.float32))
    init("half", np.array(0.5, np.float32))
    x = "embeddings"
    for l in range(a.layers):
        p = "l%d_" % l
        heads_of = {}
        for t in ("q", "k", "v"):
            mm = node("MatMul", [x, weight(p + t + "_w", (h, h), 1 / np.sqrt(h))], p + t + "_mm")
            b = node("Add", [mm, weight(p + t + "_b", (h,), 0.02)], p + t)
            r = node("Reshape", [b, "shape_heads"], p + t + "_heads")
            perm = [0, 2, 3, 1] if t == "k" else [0, 2, 1, 3]  # K transposed for QK^T
            heads_of[t] = node("Transpose", [r], p + t + "_t", perm=perm)
        s = node("MatMul", [heads_of["q"], heads_of["k"]], p + "scores")
        s = node("Mul", [s, "scale"], p + "scaled")
        s = node("Softmax", [s], p + "probs", axis=-1)
        c = node("MatMul", [s, heads_of["v"]], p + "context")
        c = node("Transpose", [c], p + "context_t", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, "shape_merge"], p + "context_m")
        o = node("MatMul", [c, weight(p + "o_w", (h, h), 1 / np.sqrt(h))], p + "o_mm")
        o = node("Add", [o, weight(p + "o_b", (h,), 0.02)], p + "o")
        r1 = node("Add", [x, o], p + "res1")
        ln1 = node("LayerNormalization", [r1, init(p + "ln1_g", np.ones(h, np.float32)),
                                          init(p + "ln1_b", np.zeros(h, np.float32))], p + "ln1", axis=-1,
                   epsilon=1e-12)
        f1 = node("MatMul", [ln1, weight(p + "ff1_w", (h, ff), 1 / np.sqrt(h))], p + "ff1_mm")
        f1 = node("Add", [f1, weight(p + "ff1_b", (ff,), 0.02)], p + "ff1")
        g = node("Div", [f1, "sqrt2"], p + "gelu_div")
        g = node("Erf", [g], p + "gelu_erf")
        g = node("Add", [g, "one"], p + "gelu_add")
        g = node("Mul", [f1, g], p + "gelu_mul")
        g = node("Mul", [g, "half"], p + "gelu")
        f2 = node("MatMul", [g, weight(p + "ff2_w", (ff, h), 1 / np.sqrt(ff))], p + "ff2_mm")
        f2 = node("Add", [f2, weight(p + "ff2_b", (h,), 0.02)], p + "ff2")
        r2 = node("Add", [ln1, f2], p + "res2")
        x = node("LayerNormalization", [r2, init(p + "ln2_g", np.ones(h, np.float32)),
                                        init(p + "ln2_b", np.zeros(h, np.float32))], p + "ln2", axis=-1,
                 epsilon=1e-12)
    nodes.append(helper.make_node("Identity", [x], ["output"], name="output"))
    graph = helper.make_graph(
        nodes, "encoder", [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, [a.batch, a.seq, h])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [a.batch, a.seq, h])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="passcheck")
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(a.out_dir, exist_ok=True)
    onnx.save(onnx.shape_inference.infer_shapes(model), os.path.join(a.out_dir, "encoder.onnx"))
    x = rng.standard_normal((a.batch, a.seq, h)).astype(np.float32)
    with open(os.path.join(a.out_dir, "encoder.input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "embeddings").SerializeToString())
    print("wrote", os.path.join(a.out_dir, "encoder.onnx"))


if __name__ == "__main__":
    main()
