#!/usr/bin/env bash
# ctest (label real): `passcheck check` on real architectures — torchvision models with random weights, exported
# by bench/real-models/export_torchvision.py — with every property after every pass, with --ep cpu, nhwc,cpu and
# blocked,cpu (the first with ONNX Runtime on the original and the optimized graph, when installed), and each
# model's QOperator form (bench/real-models/quantize_qop.py) with --ep systolic,cpu; each must end "verdict: PASS"
# with exit 0. Skipped (77) without python3-torch,
# python3-torchvision and python3-onnx (Debian packages ci/deps does not install: not the default test path).
# usage: run_real_models.sh PASSCHECK [MODEL ...]   (KEEP=DIR keeps the exported models)
set -uo pipefail
pc=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=/usr/bin/python3
if ! "$py" -c 'import torch, torchvision, onnx' 2>/dev/null; then
    echo "python3-torch, python3-torchvision or python3-onnx missing: skipped"
    exit 77
fi
if [ -n "${KEEP:-}" ]; then
    tmp=$KEEP
    mkdir -p "$tmp"
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
fi
. "$here/../cli/lib.sh"
# default: all eleven (resnet18, mobilenet_v2, squeezenet1_1, shufflenet_v2_x1_0 at opset 13; mobilenet_v3_small,
# efficientnet_b0, regnet_y_400mf, googlenet, densenet121, mnasnet0_5, lraspp_mobilenet_v3_large at 17)
[ $# -gt 0 ] || set -- all
"$py" "$here/../../bench/real-models/export_torchvision.py" "$tmp" "$@" >"$tmp/export.log" 2>&1 || {
    echo "FAIL: export (see $tmp/export.log)"
    tail -5 "$tmp/export.log"
    exit 1
}
# With node and onnxruntime-node (ci/deps installs both), the --ep cpu run adds ort-oracle: ONNX Runtime 1.30 runs
# the original and the optimized graph, each judged against the reference (the nhwc,cpu run's graph holds
# internal NHWC-domain ops no runtime runs).
. "$here/ort.sh"
ort_setup "$pc"
for m in "$tmp"/*.onnx; do
    name=$(basename "$m" .onnx)
    for eps in cpu nhwc,cpu blocked,cpu; do
        start=$(date +%s)
        extra=()
        [ "$eps" = cpu ] && extra=("${ort[@]}")
        expect 0 "verdict: PASS" -- "$pc" check "$m" --inputs "$tmp/$name.input_0.pb" --ep "$eps" \
            --json "$tmp/$name.$eps.json" "${extra[@]}"
        [ ${#extra[@]} -gt 0 ] && ort_judged "$name" "$tmp/$name.$eps.json"
        echo "$name --ep $eps: $(($(date +%s) - start)) s"
    done
    # its QOperator form (every Conv a QLinearConv, as the Systolic fork's quantizer wrote them) on systolic
    start=$(date +%s)
    "$py" "$here/../../bench/real-models/quantize_qop.py" "$m" "$tmp/$name.q.onnx"
    expect 0 "verdict: PASS" -- "$pc" check "$tmp/$name.q.onnx" --inputs "$tmp/$name.input_0.pb" --ep systolic,cpu
    echo "$name (QOperator) --ep systolic,cpu: $(($(date +%s) - start)) s"
done
finish "real models"
