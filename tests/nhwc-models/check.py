#!/usr/bin/python3
"""Counts Transposes in the original, ONNX Runtime's and passcheck's optimized models and checks passcheck's result.

usage: check.py MANIFEST MODEL_DIR ORT_DIR OURS_DIR
  ORT_DIR/{basic,extended}/NAME.onnx: written by tests/ort/transpose_count.js
  OURS_DIR/{l1,l3}/NAME.onnx:         written by passcheck optimize --ep cpu --level 1 / 3

For every model and each of our levels: ours passes onnx.checker, ours <= min(ORT basic, ORT extended), and ours holds no identity-perm
Transpose, no Transpose fed by a Transpose, and no Transpose pair that cancels through a single-consumer run of
unary elementwise ops (a pair the optimizer should have removed), and no two Transposes applying the same perm to
the same value (ONNX Runtime's common-subexpression elimination at 'basic' merges those). Prints a table and totals; exit 1 on any failure.
"""
import os
import sys

import onnx

OUR_LEVELS = ["l1", "l3"]
ORT_LEVELS = ["basic", "extended"]
# Unary ops that commute with any Transpose: a T(p) → these → T(p⁻¹) run always cancels.
UNARY_ELEMENTWISE = {
    "Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Softplus", "Softsign",
    "Elu", "Selu", "LeakyRelu", "HardSigmoid", "Identity", "Floor", "Ceil", "Round", "Sign", "Not", "Cast",
}


def graphs(g):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graphs(a.g)
            for sub in a.graphs:
                yield from graphs(sub)


def is_transpose(n):
    return n.op_type == "Transpose" and n.domain in ("", "ai.onnx")


def perm_of(n):
    for a in n.attribute:
        if a.name == "perm":
            return list(a.ints)
    return None  # reversed dims: never identity unless rank <= 1, which these models do not have


def count_transposes(model):
    return sum(1 for g in graphs(model.graph) for n in g.node if is_transpose(n))


def violations(model):
    out = []
    for g in graphs(model.graph):
        producer = {o: n for n in g.node for o in n.output}
        consumers = {}
        for n in g.node:
            for i in n.input:
                consumers.setdefault(i, []).append(n)
        graph_outputs = {o.name for o in g.output}
        position = {id(n): i for i, n in enumerate(g.node)}
        for n in g.node:
            if not is_transpose(n):
                continue
            p = perm_of(n)
            if p is not None and p == list(range(len(p))):
                out.append(f"identity-perm Transpose '{n.name}' {p}")
            twin = next((c for c in consumers.get(n.input[0], []) if is_transpose(c) and perm_of(c) == p and
                         position[id(c)] < position[id(n)]), None)
            if twin is not None:
                out.append(f"Transposes '{twin.name}' and '{n.name}' both apply {p} to '{n.input[0]}'")
            src = producer.get(n.input[0])
            if src is not None and is_transpose(src):
                out.append(f"Transpose '{n.name}' is fed by Transpose '{src.name}'")
            # follow a single-consumer unary chain to a Transpose with the inverse perm
            v, hops = n.output[0], 0
            while p is not None and v not in graph_outputs and len(consumers.get(v, [])) == 1:
                c = consumers[v][0]
                if is_transpose(c):
                    q = perm_of(c)
                    if hops and q is not None and len(q) == len(p) and [p[i] for i in q] == list(range(len(p))):
                        out.append(f"Transposes '{n.name}' and '{c.name}' cancel through {hops} unary ops")
                    break
                if c.op_type not in UNARY_ELEMENTWISE or c.domain not in ("", "ai.onnx") or len(c.output) != 1:
                    break
                v, hops = c.output[0], hops + 1
    return out


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: check.py MANIFEST MODEL_DIR ORT_DIR OURS_DIR")
    manifest, model_dir, ort_dir, ours_dir = sys.argv[1:]
    names = [l.split("\t")[0] for l in open(manifest).read().splitlines() if l and not l.startswith("#")]
    failures = []
    totals = {k: 0 for k in ["orig"] + ORT_LEVELS + OUR_LEVELS}
    fmt = "{:<24} {:>6} {:>10} {:>13} {:>8} {:>8}"
    print(fmt.format("model", "orig", "ORT basic", "ORT extended", "ours L1", "ours L3"))
    for name in names:
        row = {"orig": count_transposes(onnx.load(os.path.join(model_dir, name + ".onnx")))}
        for lv in ORT_LEVELS:
            row[lv] = count_transposes(onnx.load(os.path.join(ort_dir, lv, name + ".onnx")))
        best_ort = min(row[lv] for lv in ORT_LEVELS)
        for lv in OUR_LEVELS:
            path = os.path.join(ours_dir, lv, name + ".onnx")
            if not os.path.exists(path):
                row[lv] = None
                failures.append(f"{name} {lv}: passcheck wrote no model")
                continue
            m = onnx.load(path)
            try:
                onnx.checker.check_model(m)  # standard ONNX, as ORT needs it
            except onnx.checker.ValidationError as e:
                failures.append(f"{name} {lv}: onnx.checker: {str(e).splitlines()[0]}")
            row[lv] = count_transposes(m)
            if row[lv] > best_ort:
                failures.append(f"{name} {lv}: {row[lv]} Transposes, ONNX Runtime leaves {best_ort}")
            failures += [f"{name} {lv}: {v}" for v in violations(m)]
        for k, v in row.items():
            totals[k] += v or 0
        print(fmt.format(name, *["-" if row[k] is None else row[k] for k in ["orig"] + ORT_LEVELS + OUR_LEVELS]))
    print(fmt.format("total", *[totals[k] for k in ["orig"] + ORT_LEVELS + OUR_LEVELS]))
    for f in failures:
        print("FAIL " + f)
    print(f"transpose counts: {len(names)} models, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
