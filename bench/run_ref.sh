#!/usr/bin/env bash
# Reference-executor benchmark (see bench/README.md):
#   1. per-node overhead on a 20-node float chain, next to ONNX Runtime 1.30 (onnxruntime-node, CPU, one thread,
#      optimizations off) on the same model and input, as a ratio; then the same latency ratio on real
#      architectures (resnet18, mobilenet_v2, squeezenet1_1, shufflenet_v2_x1_0 with random weights) when
#      python3-torch/torchvision are installed (REAL_RUNS runs per timing batch, default 1 for passcheck), and on
#      the PaddleOCR detector, recognizer and classifier when tests/real/run_paddleocr.sh has fetched them;
#   2. cases/second of the whole conformance run over the ONNX backend test data (each case forked, loaded, run,
#      compared). There is no peer for this line: no other tool here runs the backend data end to end.
#
#   bench/run_ref.sh [BUILD_DIR]      (default build-release)
#   RUNS=N bench/run_ref.sh           graph runs per timing batch (default 2000)
# Exits 0 whatever the numbers are; non-zero only when something fails to build or run.
set -euo pipefail

RUNS=${RUNS:-2000}
case $RUNS in '' | *[!0-9]* | 0*) echo "run_ref.sh: RUNS must be a positive integer" >&2; exit 2 ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build-release}
testdata=${PC_TESTDATA_DIR:-/usr/share/libonnx-testdata/data}
ort_dir=${PC_ORT_DIR:-$HOME/.cache/passcheck/ort/node_modules}

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target bench_ref passcheck >/dev/null
tmp=$(mktemp -d /tmp/passcheck-bench-ref.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/bench_ref" gen "$tmp/chain20.onnx" 20 >/dev/null
ours=$("$build/bench/bench_ref" time "$tmp/chain20.onnx" "$RUNS")
us_ours=$(echo "$ours" | awk '{print $4}')
if command -v node >/dev/null && [ -d "$ort_dir/onnxruntime-node" ]; then
    peer=$(node bench/ort_time.js "$ort_dir" "$tmp/chain20.onnx" "$RUNS")
    us_peer=$(echo "$peer" | awk '{print $4}')
else
    echo "note: node or onnxruntime-node missing (run ci/deps); only passcheck's numbers are shown"
    us_peer=""
fi
printf '%-22s %12s %12s %12s %8s\n' model ref_us/run ref_us/node ort_us/run ratio
if [ -n "$us_peer" ]; then
    ratio=$(awk -v a="$us_ours" -v b="$us_peer" 'BEGIN { printf "%.2f", a / b }')
else
    ratio="-"
fi
printf '%-22s %12s %12s %12s %8s\n' chain20 "$us_ours" "$(echo "$ours" | awk '{print $5}')" "${us_peer:--}" "$ratio"

# real architectures (torchvision, random weights; bench/real-models/export_torchvision.py): one run each side
# after a warm-up batch, the same float input; the ratio is the reference's latency over ORT's
if [ -n "$us_peer" ] && /usr/bin/python3 -c 'import torch, torchvision, onnx' 2>/dev/null; then
    if /usr/bin/python3 bench/real-models/export_torchvision.py "$tmp" >"$tmp/export.log" 2>&1; then
        for m in "$tmp"/*.onnx; do
            [ "$(basename "$m")" = chain20.onnx ] && continue
            dims=$("$build/bench/bench_ref" shape "$m")
            r=$("$build/bench/bench_ref" time "$m" "${REAL_RUNS:-1}")
            p=$(node bench/ort_time.js "$ort_dir" "$m" "${REAL_RUNS:-3}" "$dims")
            a=$(echo "$r" | awk '{print $4}') b=$(echo "$p" | awk '{print $4}')
            printf '%-22s %12s %12s %12s %8s\n' "$(basename "$m" .onnx)" "$a" "$(echo "$r" | awk '{print $5}')" "$b" \
                "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
        done
    else
        echo "note: exporting the torchvision models failed ($tmp/export.log); real models skipped"
    fi
else
    echo "note: python3-torch/torchvision or ONNX Runtime missing: real models skipped"
fi

# the PaddleOCR models (fetched by tests/real/run_paddleocr.sh into $PC_OCR_DIR): symbolic dims, timed at the
# sizes OCR runs them at
ocr=${PC_OCR_DIR:-$HOME/.cache/passcheck/ocr}/package/assets
if [ -n "$us_peer" ] && [ -f "$ocr/ch_PP-OCRv4_rec_infer.onnx" ]; then
    for spec in ch_PP-OCRv4_det_infer:1x3x320x320 ch_PP-OCRv4_rec_infer:1x3x48x320 \
        ch_ppocr_mobile_v2.0_cls_infer:1x3x48x192; do
        name=${spec%%:*} dims=${spec#*:}
        r=$("$build/bench/bench_ref" time "$ocr/$name.onnx" "${REAL_RUNS:-1}" "$dims")
        p=$(node bench/ort_time.js "$ort_dir" "$ocr/$name.onnx" "${REAL_RUNS:-3}" "$dims")
        a=$(echo "$r" | awk '{print $4}') b=$(echo "$p" | awk '{print $4}')
        printf '%-22s %12s %12s %12s %8s\n' "${name%_infer}" "$a" "$(echo "$r" | awk '{print $5}')" "$b" \
            "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
    done
else
    echo "note: no PaddleOCR models in ${PC_OCR_DIR:-$HOME/.cache/passcheck/ocr} (tests/real/run_paddleocr.sh fetches them) or no ONNX Runtime: skipped"
fi

if [ -d "$testdata/node" ]; then
    start=$(date +%s.%N)
    set +e
    "$build/passcheck" conformance --quiet --errata tests/conformance/errata.txt "$testdata/node" "$testdata/pytorch-converted" \
        "$testdata/pytorch-operator" "$testdata/simple" >"$tmp/conformance.txt" 2>&1
    set -e
    end=$(date +%s.%N)
    summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$tmp/conformance.txt" | tail -1)
    if [ -z "$summary" ]; then
        echo "run_ref.sh: the conformance run printed no summary:" >&2
        tail -5 "$tmp/conformance.txt" >&2
        exit 1
    fi
    cases=$(echo "$summary" | awk '{print $1 + $3 + $5}')
    awk -v n="$cases" -v s="$start" -v e="$end" -v sum="$summary" \
        'BEGIN { printf "conformance: %d cases in %.1f s = %.1f cases/s (%s)\n", n, e - s, n / (e - s), sum }'
fi
