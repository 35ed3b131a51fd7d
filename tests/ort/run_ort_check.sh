#!/usr/bin/env bash
# ctest: models saved by passcheck must load in ONNX Runtime 1.30 wherever the originals do.
# usage: run_ort_check.sh PASSCHECK ORT_NODE_MODULES_DIR DATA_DIR...   (exit 77 = skipped: no node or ORT)
set -euo pipefail
passcheck=$1 ort_dir=$2
shift 2
if ! command -v node >/dev/null 2>&1; then echo "node not found: skipping"; exit 77; fi
if [ ! -d "$ort_dir/onnxruntime-node" ]; then echo "onnxruntime-node not in $ort_dir: skipping"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$passcheck" roundtrip --quiet --save-dir "$tmp" "$@"
# ORT logs kernel-construction errors of unloadable originals on stderr; the verdict is on stdout.
node "$(dirname "$0")/ort_check.js" "$ort_dir" "$tmp/manifest.tsv" 2>"$tmp/ort-stderr.log"
