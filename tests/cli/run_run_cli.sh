#!/usr/bin/env bash
# ctest: `passcheck run` — usage errors (exit 2) naming the option, bad files (exit 3) naming the file, a node the
# runtime has no kernel for refused at once naming the node (exit 3), and good runs: the backend cases' recorded
# outputs reproduced from their recorded inputs (written with -o and compared by numpy), with --ep nhwc,cpu too,
# and --stats printing the memory plan; the systolic EP's rewritten QLinearConvs give cpu's bytes; the blocked
# EP's compiled subgraphs give the recorded outputs and refuse malformed Subgraph nodes.
# usage: run_run_cli.sh PASSCHECK DATA_DIR
set -uo pipefail
pc=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

conv=$data/node/test_conv_with_strides_padding
expect 0 "usage: passcheck run MODEL" -- "$pc" run --help
expect 0 "run +optimize a model and run it on the runtime" -- "$pc" --help
expect 2 "missing MODEL" -- "$pc" run
expect 2 "unknown option '--bogus'" -- "$pc" run "$conv/model.onnx" --bogus
expect 2 "--threads" -- "$pc" run "$conv/model.onnx" --threads 0
expect 2 "--threads" -- "$pc" run "$conv/model.onnx" --threads x
expect 2 "bad --level '7'" -- "$pc" run "$conv/model.onnx" --level 7
expect 2 "--seed draws random inputs: not with --inputs" -- "$pc" run "$conv/model.onnx" --seed 1 --inputs "$conv/test_data_set_0"
expect 2 "empty -o DIR" -- "$pc" run "$conv/model.onnx" -o ''
expect 3 "$tmp/none.onnx: cannot open" -- "$pc" run "$tmp/none.onnx"
printf '\x0f\xff\xff\xff' >"$tmp/garbage.onnx"
expect 3 "garbage.onnx" -- "$pc" run "$tmp/garbage.onnx"
expect 3 "--inputs" -- "$pc" run "$conv/model.onnx" --inputs "$tmp"
# no kernel: refused before anything runs, naming the node and op
expect 3 "\[unsupported\].*node .*\(NonMaxSuppression\): no runtime kernel" -- "$pc" run "$data/node/test_nonmaxsuppression_identical_boxes/model.onnx"
check "nothing written for a refused model" test ! -e "$tmp/topk"
"$pc" run "$data/node/test_nonmaxsuppression_identical_boxes/model.onnx" -o "$tmp/topk" >/dev/null 2>&1
check "no output folder for a refused model" test ! -e "$tmp/topk"

# good runs: the recorded outputs from the recorded inputs, NCHW and through the NHWC EP
compare() { # DIR CASE: DIR/output_N.pb against CASE/test_data_set_0/output_N.pb
    python3 - "$1" "$2" <<'PY'
import glob, os, sys
import numpy as np
from onnx import TensorProto, numpy_helper
got_dir, case = sys.argv[1], sys.argv[2]
want_files = sorted(glob.glob(os.path.join(case, "test_data_set_0", "output_*.pb")))
ok = bool(want_files)
for w in want_files:
    g = os.path.join(got_dir, os.path.basename(w))
    a, b = TensorProto(), TensorProto()
    a.ParseFromString(open(w, "rb").read())
    b.ParseFromString(open(g, "rb").read())
    x, y = numpy_helper.to_array(a), numpy_helper.to_array(b)
    ok = ok and x.shape == y.shape and np.allclose(x, y, rtol=1e-4, atol=1e-5)
print("ok" if ok else "differs")
sys.exit(0 if ok else 1)
PY
}
for c in test_conv_with_strides_padding test_maxpool_2d_pads test_softmax_axis_1 test_gemm_all_attributes \
    test_resize_upsample_scales_linear test_reduce_mean_keepdims_random test_averagepool_2d_pads test_lrn \
    test_batchnorm_example test_globalmaxpool; do
    for eps in cpu nhwc,cpu blocked,cpu; do
        out=$tmp/$c-${eps%%,*}
        expect 0 "wrote 1 output file" -- "$pc" run "$data/node/$c/model.onnx" --inputs "$data/node/$c/test_data_set_0" \
            --ep "$eps" -o "$out"
        if command -v python3 >/dev/null && python3 -c 'import onnx, numpy' 2>/dev/null; then
            check "$c --ep $eps: the recorded outputs" compare "$out" "$data/node/$c"
        fi
    done
done
expect 0 "stats: 1 nodes; planned peak [0-9]+ bytes" -- "$pc" run "$conv/model.onnx" --stats

# the systolic EP: three int8-weight QLinearConvs (a shared input, a chain, a shared weight) rewritten to
# QLinearConv_nhwc give the same bytes as on cpu; the backend's QLinearConv (uint8 weight) stays as it is
expect 0 "wrote 1 output file" -- "$pc" run "$data/node/test_qlinearconv/model.onnx" \
    --inputs "$data/node/test_qlinearconv/test_data_set_0" --ep systolic,cpu -o "$tmp/qlinearconv-systolic"
if command -v python3 >/dev/null && python3 -c 'import onnx, numpy' 2>/dev/null; then
    check "test_qlinearconv --ep systolic,cpu: the recorded outputs" compare "$tmp/qlinearconv-systolic" \
        "$data/node/test_qlinearconv"
    python3 - "$tmp/sys.onnx" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper as nh, save
rng = np.random.default_rng(0)
arr = lambda n, a: nh.from_array(a, n)
inits = [arr("xs", np.array(0.05, np.float32)), arr("xz", np.array(3, np.int8)),
         arr("w", rng.integers(-20, 20, (6, 4, 3, 3)).astype(np.int8)), arr("ws", np.array(0.02, np.float32)),
         arr("wz", np.array(0, np.int8)), arr("ys", np.array(0.1, np.float32)), arr("yz", np.array(-2, np.int8)),
         arr("b", rng.integers(-50, 50, (6,)).astype(np.int32)),
         arr("w2", rng.integers(-20, 20, (5, 6, 1, 1)).astype(np.int8))]
nodes = [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y1"], pads=[1, 1, 1, 1]),
         helper.make_node("QLinearConv", ["y1", "ys", "yz", "w2", "ws", "wz", "ys", "yz"], ["y2"]),
         helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y3"], strides=[2, 2])]
x = helper.make_tensor_value_info("x", TensorProto.INT8, [1, 4, 5, 5])
outs = [helper.make_tensor_value_info(n, TensorProto.INT8, None) for n in ["y2", "y3", "y1"]]
g = helper.make_graph(nodes, "g", [x], outs, initializer=inits)
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
    expect 0 "QLinearConv_nhwc \(HWIO weight\)" -- "$pc" optimize "$tmp/sys.onnx" -o "$tmp/sys-opt.onnx" \
        --ep systolic,cpu --explain
    expect 0 "Transposes 0 -> 4.*ep systolic: 7 nodes.*EP rewrites \(level 3\): 3" -- "$pc" optimize "$tmp/sys.onnx" \
        -o "$tmp/sys-opt.onnx" --ep systolic,cpu
    expect 0 "wrote 3 output files" -- "$pc" run "$tmp/sys.onnx" --seed 5 --ep systolic,cpu -o "$tmp/sys-out"
    expect 0 "wrote 3 output files" -- "$pc" run "$tmp/sys.onnx" --seed 5 --ep cpu -o "$tmp/cpu-out"
    for i in 0 1 2; do
        check "systolic output $i equals cpu's" cmp "$tmp/sys-out/output_$i.pb" "$tmp/cpu-out/output_$i.pb"
    done
fi
# the blocked EP: a model whose compiled Subgraph node is malformed is a bad input (exit 3) naming the node
if command -v python3 >/dev/null && python3 -c 'import onnx' 2>/dev/null; then
    python3 - "$tmp" <<'PY'
import sys
from onnx import TensorProto as T, helper as h, save
d = sys.argv[1]
x = h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 4])
y = h.make_tensor_value_info("y", T.FLOAT, None)
ops = [h.make_opsetid("", 13), h.make_opsetid("com.passcheck.blocked", 1)]
def model(node, name):
    save(h.make_model(h.make_graph([node], "g", [x], [y]), opset_imports=ops), d + "/" + name)
model(h.make_node("Subgraph", ["x"], ["y"], name="sg", domain="com.passcheck.blocked", subgraph_id=0), "nobody.onnx")
body = h.make_graph([h.make_node("Relu", ["a"], ["b"])], "body",
                    [h.make_tensor_value_info("a", T.FLOAT, [1, 3, 4, 4]), h.make_tensor_value_info("a2", T.FLOAT, [1])],
                    [h.make_tensor_value_info("b", T.FLOAT, [1, 3, 4, 4])])
model(h.make_node("Subgraph", ["x"], ["y"], name="sg", domain="com.passcheck.blocked", subgraph_id=0, body=body),
      "arity.onnx")
model(h.make_node("ToBlocked", ["x"], ["y"], name="tb", domain="com.passcheck.blocked", block=0), "block0.onnx")
PY
    expect 3 "nobody.onnx.*node 'sg'.*attribute body \(a graph\) is required" -- "$pc" run "$tmp/nobody.onnx" \
        --ep blocked,cpu
    expect 3 "arity.onnx.*node 'sg'.*1 inputs and 1 outputs, its body 2 and 1" -- "$pc" run "$tmp/arity.onnx" \
        --ep blocked,cpu
    expect 3 "block0.onnx.*node 'tb'.*attribute block is 0, not in 1..1024" -- "$pc" run "$tmp/block0.onnx" \
        --ep blocked,cpu
fi
finish "run CLI"
