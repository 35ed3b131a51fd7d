#!/usr/bin/env bash
# ctest fuzz_pipeline_known: PC_FUZZ_KNOWN. A planted fault's regression seed is a finding (abort, non-zero
# exit, "FINDING <signature>"); with that signature in a known-findings file it is not (exit 0, counted); a
# malformed file is a usage error naming the file and line (exit 2).
# usage: run_pipeline_known.sh FUZZ_PIPELINE_REPLAY SEED_FILE FAULT
set -uo pipefail
replay=$1 seed=$2 fault=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
export PC_FUZZ_OUT="$tmp/out" PC_FUZZ_INJECT="$fault"
out=$("$replay" "$seed" 2>&1)
rc=$?
sig=$(printf '%s\n' "$out" | sed -n 's/^fuzz_pipeline: FINDING \([^ ]*\) .*/\1/p' | head -1)
check "the seed is a finding with $fault on (exit $rc, signature '$sig')" test "$rc" -ne 0 -a -n "$sig"
printf '# known\n\n%s\n' "$sig" >"$tmp/known.txt"
expect 0 "inputs failed with known signatures \(latest $sig\)" -- env PC_FUZZ_KNOWN="$tmp/known.txt" "$replay" "$seed"
printf 'numerics@fold_constants\nnot a signature\n' >"$tmp/bad.txt"
expect 2 "PC_FUZZ_KNOWN: .*bad.txt:2: 'not a signature' is not a failure signature" -- \
    env PC_FUZZ_KNOWN="$tmp/bad.txt" "$replay" "$seed"
expect 2 "PC_FUZZ_KNOWN: .*missing.txt" -- env PC_FUZZ_KNOWN="$tmp/missing.txt" "$replay" "$seed"
finish fuzz_pipeline_known
