#!/usr/bin/env python3
"""Quantize a float CNN into the Systolic fork's QOperator form (for bench/run_eps.sh): every Conv with a
constant weight becomes QuantizeLinear -> QLinearConv (uint8 activations, int8 weights symmetric per tensor,
int32 bias at x_scale * w_scale) -> DequantizeLinear; everything else stays float. Every activation gets one
scale and zero point (0.05, 128): a latency benchmark needs the graph's form, not calibrated accuracy. The
passes then remove the DQ -> Q pairs between consecutive convs (remove_dq_q) and fuse DQ -> Relu -> Q groups
(the systolic EP's QLinearRelu). The model needs ai.onnx opset 10 or later (QLinearConv).

usage: quantize_qop.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main(src, dst):
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    new_nodes, new_inits = [], []
    act_scale, act_zp = 0.05, 128

    def const(name, arr):
        new_inits.append(numpy_helper.from_array(arr, name))
        return name

    for i, n in enumerate(g.node):
        w = inits.get(n.input[1]) if n.op_type == "Conv" and len(n.input) > 1 else None
        if w is None:
            new_nodes.append(n)
            continue
        wf = numpy_helper.to_array(w).astype(np.float32)
        sw = float(np.abs(wf).max()) / 127.0 or 1.0
        wq = np.clip(np.round(wf / sw), -127, 127).astype(np.int8)
        p = "q%d_" % i
        xs = const(p + "xs", np.array(act_scale, np.float32))
        xz = const(p + "xz", np.array(act_zp, np.uint8))
        ws = const(p + "ws", np.array(sw, np.float32))
        wz = const(p + "wz", np.array(0, np.int8))
        wn = const(p + "w", wq)
        ins = [p + "x", xs, xz, wn, ws, wz, xs, xz]
        if len(n.input) > 2 and n.input[2] in inits:
            b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64)
            ins.append(const(p + "b", np.round(b / (act_scale * sw)).astype(np.int32)))
        new_nodes.append(helper.make_node("QuantizeLinear", [n.input[0], xs, xz], [p + "x"], name=p + "quant"))
        qc = helper.make_node("QLinearConv", ins, [p + "y"], name=p + "conv")
        qc.attribute.extend(n.attribute)
        new_nodes.append(qc)
        new_nodes.append(helper.make_node("DequantizeLinear", [p + "y", xs, xz], [n.output[0]], name=p + "dequant"))
    del g.node[:]
    g.node.extend(new_nodes)
    g.initializer.extend(new_inits)
    used = {x for n in g.node for x in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.save(m, dst)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
