#!/usr/bin/env bash
# ctest fuzz_pipeline_repeats: an input that decodes to a case already checked is generated but not checked
# again (fuzz/fuzz_pipeline.c, Repeats). Five files decode to three cases: the minimal float case (byte 0 is
# family 0 or 7, the choice bytes are zeros or absent), the minimal nhwc case, and a float case whose first
# draw is 1; libFuzzer may add an empty input (the minimal float case again). At exit the target reports
# "N inputs, N - 3 repeated"; PC_FUZZ_RECHECK=1 checks them all; a bad value is a usage error (the target
# exits 2, which libFuzzer reports as "fuzz target exited" with its error exit code, 77).
# usage: run_pipeline_repeats.sh FUZZ_PIPELINE
set -uo pipefail
fuzzer=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
export PC_FUZZ_OUT="$tmp/out"
mkdir "$tmp/in"
printf '\000' >"$tmp/in/zero"
printf '\000\000\000' >"$tmp/in/zero-padded"
printf '\007\000' >"$tmp/in/zero-family7"
printf '\001' >"$tmp/in/nhwc"
printf '\000\001' >"$tmp/in/first-draw-1"

# repeats_ok OUTPUT: the report line says every input but three repeated
repeats_ok() {
    printf '%s\n' "$1" | awk '/^fuzz_pipeline: [0-9]+ inputs, [0-9]+ repeated/ { n = $2; r = $4; found = 1 }
        END { exit !(found && n >= 5 && r == n - 3) }'
}
out=$("$fuzzer" -runs=0 -artifact_prefix="$tmp/" "$tmp/in" 2>&1)
rc=$?
check "five files, three cases: exit 0 and N - 3 repeats (exit $rc; $(printf '%s\n' "$out" | grep 'repeated'))" \
    test "$rc" -eq 0
check "the report counts the repeats: $(printf '%s\n' "$out" | grep 'repeated')" repeats_ok "$out"
out=$(PC_FUZZ_RECHECK=1 "$fuzzer" -runs=0 -artifact_prefix="$tmp/" "$tmp/in" 2>&1)
check "PC_FUZZ_RECHECK=1 checks the repeats: $(printf '%s\n' "$out" | grep 'repeated')" \
    grep -q 'repeated a case already checked (checked again: PC_FUZZ_RECHECK=1)' <<<"$out"
expect 77 "bad PC_FUZZ_RECHECK 'yes' \(want 0 or 1\)" -- env PC_FUZZ_RECHECK=yes "$fuzzer" -runs=0 -artifact_prefix="$tmp/" "$tmp/in"
finish fuzz_pipeline_repeats
