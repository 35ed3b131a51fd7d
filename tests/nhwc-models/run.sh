#!/usr/bin/env bash
# ctest: passcheck's transpose optimizer against ONNX Runtime 1.30 on TF-style NHWC models (README.md here).
#   1. gen_nhwc_models.py writes the fixed model set;
#   2. passcheck optimize --ep cpu at levels 1 and 3;
#   3. ORT (onnxruntime-node, CPU) saves its optimized graph at 'basic' and 'extended' (tests/ort/transpose_count.js);
#   4. check.py: ours <= ORT's Transpose count on every model, no identity perm, no T→T, no pair cancelling through
#      unary ops; prints the table and totals;
#   5. compare_ort.js: original and ours give the same outputs on ORT for the same random inputs.
# usage: run.sh PASSCHECK [ORT_NODE_MODULES_DIR]   (exit 77 = skipped: node, onnxruntime-node or python3-onnx missing)
# KEEP=DIR keeps the models and results in DIR instead of a temporary folder.
set -uo pipefail
passcheck=$1
ort_dir=${2:-${PC_ORT_DIR:-$HOME/.cache/passcheck/ort/node_modules}}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=/usr/bin/python3

if ! command -v node >/dev/null 2>&1; then echo "node not found: skipping"; exit 77; fi
if [ ! -d "$ort_dir/onnxruntime-node" ]; then echo "onnxruntime-node not in $ort_dir: skipping"; exit 77; fi
if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then echo "python3 onnx/numpy missing: skipping"; exit 77; fi

if [ -n "${KEEP:-}" ]; then
    tmp=$KEEP
    rm -rf "$tmp" && mkdir -p "$tmp"
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
fi
models=$tmp/models manifest=$tmp/models/manifest.tsv
"$py" "$here/gen_nhwc_models.py" "$models" || { echo "FAIL: the model generator failed"; exit 1; }

status=0
mkdir -p "$tmp/ours/l1" "$tmp/ours/l3"
while IFS=$'\t' read -r name _; do
    for level in 1 3; do
        if ! "$passcheck" optimize "$models/$name.onnx" --ep cpu --level "$level" -o "$tmp/ours/l$level/$name.onnx" \
            >"$tmp/ours/l$level/$name.log" 2>&1; then
            echo "FAIL $name level $level: passcheck optimize: $(tail -1 "$tmp/ours/l$level/$name.log")"
            status=1
        fi
    done
done <"$manifest"

# ORT logs warnings for some sessions on stderr; its verdict per session is on stdout
if ! node "$here/../ort/transpose_count.js" "$ort_dir" "$models" "$manifest" "$tmp/ort" basic extended \
    >"$tmp/ort.log" 2>"$tmp/ort-stderr.log"; then
    grep '^FAIL' "$tmp/ort.log"
    echo "FAIL: ONNX Runtime could not optimize every model"
    exit 1
fi

"$py" "$here/check.py" "$manifest" "$models" "$tmp/ort" "$tmp/ours" || status=1

for level in 1 3; do
    echo "== outputs on ONNX Runtime: original vs ours at level $level =="
    node "$here/compare_ort.js" "$ort_dir" "$models" "$manifest" "$tmp/ours/l$level" 2>"$tmp/cmp-stderr.log" \
        >"$tmp/cmp$level.log"
    rc=$?
    grep '^FAIL' "$tmp/cmp$level.log"
    echo "$(grep -c '^ok' "$tmp/cmp$level.log") equal, $(grep -c '^FAIL' "$tmp/cmp$level.log") differ"
    [ "$rc" -eq 0 ] || status=1
done
[ "$status" -eq 0 ] && echo "nhwc-models: passed" || echo "nhwc-models: FAILED"
exit "$status"
