#!/usr/bin/env bash
# ctest: `passcheck info` (text and --json) succeeds on every backend test model, and the JSON parses and agrees
# with the text output on the node count.
# usage: run_info_all.sh PASSCHECK DATA_DIR...
set -euo pipefail
passcheck=$1
shift
n=0 failed=0
while IFS= read -r -d '' model; do
    n=$((n + 1))
    if ! text=$("$passcheck" info "$model" 2>&1); then
        echo "FAIL info $model: $text"; failed=$((failed + 1)); continue
    fi
    if ! json=$("$passcheck" info --json "$model" 2>&1); then
        echo "FAIL info --json $model: $json"; failed=$((failed + 1)); continue
    fi
    text_nodes=$(printf '%s\n' "$text" | sed -n "s/^graph: .*', \([0-9]*\) nodes.*/\1/p")
    json_nodes=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"])' 2>&1) || {
        echo "FAIL info --json $model: output is not valid JSON: $json_nodes"; failed=$((failed + 1)); continue; }
    if [ "$text_nodes" != "$json_nodes" ]; then
        echo "FAIL $model: text says $text_nodes nodes, JSON says $json_nodes"; failed=$((failed + 1))
    fi
done < <(find "$@" -name '*.onnx' -type f -print0 | sort -z)
echo "info: $n models"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$n" -gt 0 ]
