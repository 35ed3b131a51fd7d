#!/usr/bin/env bash
# ctest: `passcheck run` — usage errors (exit 2) naming the option, bad files (exit 3) naming the file, a node the
# runtime has no kernel for refused at once naming the node (exit 3), and good runs: the backend cases' recorded
# outputs reproduced from their recorded inputs (written with -o and compared by numpy), with --ep nhwc,cpu too,
# and --stats printing the memory plan.
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
    test_resize_upsample_scales_linear test_reduce_mean_keepdims_random; do
    for eps in cpu nhwc,cpu; do
        out=$tmp/$c-${eps%%,*}
        expect 0 "wrote 1 output file" -- "$pc" run "$data/node/$c/model.onnx" --inputs "$data/node/$c/test_data_set_0" \
            --ep "$eps" -o "$out"
        if command -v python3 >/dev/null && python3 -c 'import onnx, numpy' 2>/dev/null; then
            check "$c --ep $eps: the recorded outputs" compare "$out" "$data/node/$c"
        fi
    done
done
expect 0 "stats: 1 nodes; planned peak [0-9]+ bytes" -- "$pc" run "$conv/model.onnx" --stats
finish "run CLI"
