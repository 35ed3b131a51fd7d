#!/usr/bin/env bash
# ctest reference_generated_cases: generate every case of tests/reference-cases/gen_*.py into a fresh
# temporary directory, then
#   - valid cases (gen_X.py -> valid/X/<case>): `passcheck conformance --strict` must pass every one, except
#     those in known-failures.txt, which must fail exactly as listed;
#   - bad cases (gen_bad_X.py -> bad/bad_X/<case>): each must be refused cleanly with the outcome its
#     generator wrote to expected-outcomes.txt (error or unsupported): never passed, never a crash, sanitizer
#     report or timeout.
# Exits 77 (ctest skip) when /usr/bin/python3 cannot import onnx and numpy (python3-onnx, python3-numpy).
# usage: run.sh PASSCHECK
#   PC_PYTHON overrides the interpreter; PC_KEEP_CASES=1 keeps the generated cases (their folder is printed).
set -uo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 PASSCHECK" >&2
    exit 2
fi
pc=$1
here=$(cd "$(dirname "$0")" && pwd)
py=${PC_PYTHON:-/usr/bin/python3}
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree

if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP: $py cannot import onnx and numpy (apt-get install python3-onnx python3-numpy, or ci/deps)"
    exit 77
fi

tmp=$(mktemp -d)
if [ "${PC_KEEP_CASES:-0}" = 1 ]; then
    echo "keeping the generated cases in $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
mkdir -p "$tmp/valid" "$tmp/bad"

start=$(date +%s)
for gen in "$here"/gen_*.py; do
    name=$(basename "$gen" .py)
    name=${name#gen_}
    case $name in
        bad_*) dir=$tmp/bad/$name ;;
        *) dir=$tmp/valid/$name ;;
    esac
    "$py" "$gen" "$dir"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: generator $gen exited with status $rc"
        exit 1
    fi
done
n_valid=$(find "$tmp/valid" -mindepth 2 -maxdepth 2 -type d | wc -l)
n_bad=$(find "$tmp/bad" -mindepth 2 -maxdepth 2 -type d | wc -l)
echo "generated $n_valid valid and $n_bad bad cases in $(($(date +%s) - start)) s"

status=0
# A run with failing cases exits 1; 2 (usage), 3 (files) and 4 (internal) mean the run itself went wrong.
echo "== valid cases: passcheck conformance --strict"
"$pc" conformance --strict --quiet --json "$tmp/valid.json" "$tmp"/valid/*
rc=$?
if [ "$rc" -gt 1 ]; then
    echo "FAIL: passcheck conformance exited with status $rc on the valid cases"
    exit 1
fi
"$py" "$here/check_outcomes.py" valid "$tmp/valid.json" "$here/known-failures.txt" || status=1

# Every bad case fails the run, so its FAIL/SKIP lines are noise: the JSON outcomes and messages are judged.
echo "== bad cases: passcheck conformance"
"$pc" conformance --quiet --json "$tmp/bad.json" "$tmp"/bad/* >"$tmp/bad.out" 2>&1
rc=$?
grep -v '^FAIL \|^SKIP ' "$tmp/bad.out"
if [ "$rc" -gt 1 ]; then
    echo "FAIL: passcheck conformance exited with status $rc on the bad cases"
    exit 1
fi
"$py" "$here/check_outcomes.py" bad "$tmp/bad.json" "$tmp/bad" || status=1

verdict=passed
[ "$status" -eq 0 ] || verdict=FAILED
echo "reference_generated_cases: $verdict in $(($(date +%s) - start)) s"
exit "$status"
