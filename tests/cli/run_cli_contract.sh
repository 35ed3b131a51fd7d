#!/usr/bin/env bash
# ctest: the CLI's contract — documented exit codes, a specific message naming the bad argument or file, and
# --help for every subcommand. usage: run_cli_contract.sh PASSCHECK DATA_DIR
set -uo pipefail
pc=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# expect EXIT_CODE PATTERN -- COMMAND...: run, check the exit code and that stdout+stderr match PATTERN.
expect() {
    local code=$1 pattern=$2
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$code" ] || ! printf '%s' "$out" | tr '\n' ' ' | grep -qE -- "$pattern"; then
        echo "FAIL: $* -> exit $rc (want $code), output: $(printf '%s' "$out" | head -3)"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}

good=$data/node/test_abs/model.onnx
expect 2 "usage" -- "$pc"
expect 0 "commands:" -- "$pc" --help
expect 0 "^passcheck [0-9]" -- "$pc" --version
expect 2 "unknown command 'frobnicate'" -- "$pc" frobnicate
for cmd in info roundtrip; do
    expect 0 "usage: passcheck $cmd" -- "$pc" $cmd --help
    expect 0 "usage: passcheck $cmd" -- "$pc" help $cmd
done
expect 2 "unknown command 'nope'" -- "$pc" help nope
expect 2 "missing MODEL" -- "$pc" info
expect 2 "unknown option '--bogus'" -- "$pc" info --bogus "$good"
expect 2 "more than one MODEL" -- "$pc" info "$good" "$good"
expect 0 "ops \(1 kinds\)" -- "$pc" info "$good"
expect 0 '"nodes": 1' -- "$pc" info --json "$good"
expect 3 "$tmp/missing.onnx: cannot open" -- "$pc" info "$tmp/missing.onnx"
expect 3 "not a regular file" -- "$pc" info "$tmp"
: >"$tmp/empty.onnx"
expect 3 "\[truncated\].*empty.onnx" -- "$pc" info "$tmp/empty.onnx"
printf '\x0f\xff\xff\xff' >"$tmp/garbage.onnx"
expect 3 "garbage.onnx" -- "$pc" info "$tmp/garbage.onnx"
head -c 40 "$data/node/test_conv_with_strides_padding/model.onnx" >"$tmp/cut.onnx"
expect 3 "cut.onnx" -- "$pc" info "$tmp/cut.onnx"
# annotations and EP assignments: the corpus model has two nodes annotated encoder.0, one on CUDAExecutionProvider
ann=$(dirname "$0")/../../corpus/onnx/edge_valid_layer_annotations.onnx
expect 0 "annotations \(layer_ann; 0 nodes without\):.*2 +encoder\.0" -- "$pc" info "$ann"
expect 0 "ep assignments \(1 nodes unassigned\):.*1 +CUDAExecutionProvider" -- "$pc" info "$ann"
expect 0 '"annotations": \{"encoder.0": 2\}' -- "$pc" info --json "$ann"
expect 0 '"ep_assignments": \{"CUDAExecutionProvider": 1\}' -- "$pc" info --json "$ann"
expect 0 "annotations: none" -- "$pc" info "$good"
expect 2 "missing PATH" -- "$pc" roundtrip
expect 2 "needs an argument" -- "$pc" roundtrip --json
expect 3 "no such|No such" -- "$pc" roundtrip "$tmp/nowhere"
expect 0 "1 passed, 0 failed, 0 skipped" -- "$pc" roundtrip "$good"
expect 1 "1 passed, 1 failed, 0 skipped" -- "$pc" roundtrip "$good" "$tmp/empty.onnx"
printf 'empty.onnx known to be empty\n' >"$tmp/skip.txt"
expect 0 "1 passed, 0 failed, 1 skipped" -- "$pc" roundtrip --skip-list "$tmp/skip.txt" "$good" "$tmp/empty.onnx"
printf 'no-reason-entry\n' >"$tmp/badskip.txt"
expect 3 "has no reason" -- "$pc" roundtrip --skip-list "$tmp/badskip.txt" "$good"
expect 2 "not a directory" -- "$pc" roundtrip --save-dir "$tmp/nodir" "$good"
# a failed save leaves nothing behind: saving into a missing folder fails and creates no temp file
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
