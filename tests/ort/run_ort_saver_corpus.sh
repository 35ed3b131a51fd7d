#!/usr/bin/env bash
# ctest: the ORT-format saver on the ONNX backend models. Each model is converted by `passcheck convert` to the
# ORT format; a refusal must be one of the documented classes (an optional type, a value no shape rule types,
# an op ONNX Runtime runs only by expanding its function body: core/ort/save.c); every file written must load
# back, re-save to the same bytes (ORT -> ORT byte-identical), and run in ONNX Runtime 1.30 with bit-identical
# outputs to the ONNX original on the case's recorded inputs (tests/ort/ort_run_check.js; cases ORT cannot run
# as ONNX are skipped).
# usage: run_ort_saver_corpus.sh PASSCHECK ORT_NODE_MODULES_DIR TESTDATA_DIR   (exit 77: no node or ORT)
set -euo pipefail
passcheck=$1 ort_dir=$2 data=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then echo "node not found: skipping"; exit 77; fi
if [ ! -d "$ort_dir/onnxruntime-node" ]; then echo "onnxruntime-node not in $ort_dir: skipping"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 written=0 refused=0 same=0
: >"$tmp/manifest"
while read -r m; do
    dir=$(dirname "$m")
    out="$tmp/$(basename "$(dirname "$dir")")__$(basename "$dir").ort"
    if ! "$passcheck" convert "$m" -o "$out" 2>"$tmp/err"; then
        refused=$((refused + 1))
        if ! grep -q -e 'a type the format cannot hold' -e 'has no type, even after shape inference' \
            -e 'expanding its function body' "$tmp/err"; then
            echo "refused for an undocumented reason: $(cat "$tmp/err")"
            fail=1
        fi
        continue
    fi
    written=$((written + 1))
    if ! "$passcheck" convert "$out" -o "$out.again.ort" 2>"$tmp/err" || ! cmp -s "$out" "$out.again.ort"; then
        echo "$m: not byte-identical after load and save: $(cat "$tmp/err")"
        fail=1
    else
        same=$((same + 1))
    fi
    rm -f "$out.again.ort"
    printf '%s\t%s\t%s\n' "$m" "$out" "$dir" >>"$tmp/manifest"
done < <(find "$data" -name model.onnx | sort)
echo "passcheck wrote $written ORT files ($same byte-identical after load and save) and refused $refused models"
node "$here/ort_run_check.js" "$ort_dir" "$tmp/manifest" 2>"$tmp/ort-stderr.log" || fail=1
exit $fail
