#!/usr/bin/env bash
# Transposes left on real architectures under an NHWC EP: exports torchvision models with random weights
# (export_torchvision.py, Debian's python3-torch/torchvision; not the default test path) and runs
# `passcheck optimize --ep nhwc,cpu` on each, printing the Transpose count before and after. A second
# PASSCHECK (e.g. a build of an older commit) adds a column to compare with.
# usage: bench/real-models/run.sh PASSCHECK [OTHER_PASSCHECK]   (KEEP=DIR keeps the models; exit 77: no torch)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if (($# < 1 || $# > 2)); then
    echo "usage: run.sh PASSCHECK [OTHER_PASSCHECK]" >&2
    exit 2
fi
py=/usr/bin/python3
if ! "$py" -c 'import torch, torchvision, onnx' 2>/dev/null; then
    echo "python3-torch, python3-torchvision or python3-onnx missing: skipping"
    exit 77
fi
if [ -n "${KEEP:-}" ]; then
    tmp=$KEEP
    mkdir -p "$tmp"
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
fi
"$py" "$here/export_torchvision.py" "$tmp" >"$tmp/export.log" 2>&1 || {
    echo "FAIL: export (see $tmp/export.log)"
    exit 1
}
count() { # PASSCHECK MODEL -> "before after", or "error"
    "$1" optimize "$2" -o "$tmp/out.onnx" --ep nhwc,cpu 2>&1 | sed -n 's/.*Transposes \([0-9]*\) -> \([0-9]*\).*/\1 \2/p'
}
status=0
printf '%-22s %8s %8s%s\n' model before after "${2:+ $(basename "$2")}"
for m in "$tmp"/*.onnx; do
    [ "$(basename "$m")" = out.onnx ] && continue
    read -r before after <<<"$(count "$1" "$m")"
    if [ -z "${after:-}" ]; then
        echo "FAIL: passcheck optimize $(basename "$m")"
        status=1
        continue
    fi
    other=""
    if [ $# -eq 2 ]; then
        read -r _ o <<<"$(count "$2" "$m")"
        other=" ${o:-error}"
    fi
    printf '%-22s %8s %8s%s\n' "$(basename "$m" .onnx)" "$before" "$after" "$other"
done
exit $status
