#!/usr/bin/env bash
# ctest: a case whose child process crashes or hangs is reported as that case's run-error, the hung child is
# killed at the deadline, the cases after it still run, and the crashed case keeps its ops in the per-op table.
# Uses the runner's test hooks PC_CONFORMANCE_TEST_CRASH / PC_CONFORMANCE_TEST_HANG (docs/cli.md).
# usage: run_crash_hang.sh PASSCHECK DATA_DIR
set -uo pipefail
pc=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

check() { # check DESCRIPTION CONDITION...
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $what"
        failed=$((failed + 1))
    fi
}

crash=$data/node/test_abs hang=$data/node/test_acos after=$data/node/test_add
start=$(date +%s)
out=$(PC_CONFORMANCE_TEST_CRASH=node/test_abs PC_CONFORMANCE_TEST_HANG=node/test_acos \
      "$pc" conformance --timeout 2 --json "$tmp/r.json" "$crash" "$hang" "$after" 2>&1)
rc=$?
elapsed=$(($(date +%s) - start))
echo "$out"
check "exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "crash reported as run-error" grep -q "^FAIL node/test_abs: run-error: crashed: child killed by signal 11" <<<"$out"
check "hang reported as run-error" grep -q "^FAIL node/test_acos: run-error: timed out after 2 s" <<<"$out"
check "the case after them ran" grep -q "^conformance: 3 cases" <<<"$out"
check "the case after them is not a run-error" bash -c '! grep -q "^FAIL node/test_add: run-error" <<<"$1"' _ "$out"
check "the crashed case keeps its op (Abs: 1 case, 1 failed, 0 not blamed)" grep -qE "^ +Abs +1 +0 +1 +0 +0$" <<<"$out"
check "the hung child was killed promptly (${elapsed}s)" [ "$elapsed" -lt 30 ]
check "JSON records all three outcomes" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
got = {c["name"]: c["outcome"] for c in d["cases"]}
assert got["node/test_abs"] == "run-error" and got["node/test_acos"] == "run-error", got
assert got["node/test_add"] != "run-error", got
assert d["summary"]["run-error"] == 2, d["summary"]
' "$tmp/r.json"

# Known crashes can be recorded in an expectation file: then the run passes.
printf '# the two hooked cases\nnode/test_abs run-error\nnode/test_acos run-error\n' >"$tmp/expect.txt"
"$pc" conformance --quiet --write-expect "$tmp/all.txt" "$after" >/dev/null 2>&1
grep -v '^#' "$tmp/all.txt" >>"$tmp/expect.txt"
out=$(PC_CONFORMANCE_TEST_CRASH=node/test_abs PC_CONFORMANCE_TEST_HANG=node/test_acos \
      "$pc" conformance --quiet --timeout 2 --expect "$tmp/expect.txt" "$crash" "$hang" "$after" 2>&1)
rc=$?
check "expected crashes pass the expectation check (got $rc): $out" [ "$rc" -eq 0 ]

# Without the variables the hooks do nothing.
out=$("$pc" conformance --quiet "$crash" 2>&1)
check "hooks are inert when unset: $out" bash -c '! grep -q "run-error" <<<"$1"' _ "$out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
