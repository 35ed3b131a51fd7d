#!/usr/bin/env bash
# ctest: `passcheck bench` — usage errors (exit 2) naming the option, bad files (exit 3), a node without a kernel
# (exit 3), a timed run printing min/median/p90 and memory, --profile's GFLOP/s table with the right FLOP count
# for a known Conv, and with ONNX Runtime present (else those checks are skipped) --compare-ort's ratio lines
# and the agreement of the outputs.
# usage: run_bench_cli.sh PASSCHECK DATA_DIR [ORT_NODE_MODULES]
set -uo pipefail
pc=$1 data=$2 ort=${3:-$HOME/.cache/passcheck/ort/node_modules}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

conv=$data/node/test_conv_with_strides_padding
expect 0 "usage: passcheck bench MODEL" -- "$pc" bench --help
expect 0 "bench +time the runtime on a model" -- "$pc" --help
expect 2 "missing MODEL" -- "$pc" bench
expect 2 "unknown option '--bogus'" -- "$pc" bench "$conv/model.onnx" --bogus
expect 2 "--runs" -- "$pc" bench "$conv/model.onnx" --runs 0
expect 2 "--warmup" -- "$pc" bench "$conv/model.onnx" --warmup x
expect 2 "--threads" -- "$pc" bench "$conv/model.onnx" --threads 300
expect 2 "--ort-level needs --compare-ort" -- "$pc" bench "$conv/model.onnx" --ort-level all
expect 2 "bad --ort-level 'fast'" -- "$pc" bench "$conv/model.onnx" --compare-ort --ort-level fast
expect 2 "--seed draws random inputs: not with --inputs" -- "$pc" bench "$conv/model.onnx" --seed 1 --inputs "$conv/test_data_set_0"
expect 3 "$tmp/none.onnx: cannot open" -- "$pc" bench "$tmp/none.onnx"
expect 3 "\[unsupported\].*\(NonMaxSuppression\): no runtime kernel" -- \
    "$pc" bench "$data/node/test_nonmaxsuppression_identical_boxes/model.onnx"

# a timed run: three latency figures and the memory line
expect 0 "passcheck  min +[0-9.]+ ms  median +[0-9.]+ ms  p90 +[0-9.]+ ms.*planned arena" -- \
    "$pc" bench "$conv/model.onnx" --runs 5 --warmup 1
# --profile: the Conv makes 1x1x4x3 outputs (stride 2, pads 1) of 3x3 windows over 1 channel: 2 x 12 x 9 = 216
# FLOP, 0.000216 MFLOP, printed as 0.0; the table and the sgemm peak appear
expect 0 "profile: cblas_sgemm peak [0-9.]+ GFLOP/s.*Conv.*gemm-shaped total: 0.0 MFLOP/run" -- \
    "$pc" bench "$conv/model.onnx" --runs 3 --profile
# a bigger conv for a FLOP count the table shows: 1x8x16x16 input, 16 3x3 filters, pads 1 -> 2 x 16 x 256 x 72
# = 589,824 FLOP = 0.6 MFLOP
py=python3
/usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null && py=/usr/bin/python3 # Debian's, where python3-onnx lives
if "$py" -c 'import onnx, numpy' 2>/dev/null; then
    "$py" - "$tmp/conv16.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
w = numpy_helper.from_array(np.ones((16, 8, 3, 3), np.float32), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv16", pads=[1, 1, 1, 1])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])], [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
    expect 0 "conv16 +Conv +[0-9.]+ +0\.6 " -- "$pc" bench "$tmp/conv16.onnx" --runs 3 --profile --level 0
    if command -v node >/dev/null && [ -d "$ort/onnxruntime-node" ]; then
        expect 0 "ort +min +[0-9.]+ ms.*level 'all'.*ratio ours/ort: [0-9.]+.*memory ours/ort: [0-9.]+.*outputs: agree" \
            -- "$pc" bench "$tmp/conv16.onnx" --runs 3 --compare-ort --ort-dir "$ort"
        expect 0 "level 'disabled', 2 intra-op threads" -- \
            "$pc" bench "$tmp/conv16.onnx" --runs 2 --threads 2 --compare-ort --ort-level disabled --ort-dir "$ort"
        expect 3 "onnxruntime-node" -- "$pc" bench "$tmp/conv16.onnx" --runs 1 --compare-ort --ort-dir "$tmp"
    else
        echo "note: node or onnxruntime-node missing: --compare-ort checks skipped"
    fi
else
    echo "note: python3-onnx missing: the generated Conv's checks are skipped"
fi
finish "bench CLI"
