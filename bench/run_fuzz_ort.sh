#!/usr/bin/env bash
# run_fuzz_ort.sh — throughput of the ORT-format loader's fuzz target (bench/fuzz-ort.md).
#
#   bash bench/run_fuzz_ort.sh [SECONDS] [BUILD]      # defaults: 60, build-fuzz
#
# Runs fuzz_ort_load (seeds corpus/ort, dictionary fuzz/ort.dict, ci/fuzz ort's flags) and then, as the named
# peer, fuzz_onnx_load (seeds corpus/onnx, fuzz/onnx.dict, ci/fuzz's flags), each for SECONDS on one core (one
# libFuzzer process, one after the other) from a fresh scratch corpus, and prints executions per second and
# coverage (libFuzzer's cov: edges, and ft: features) for both and the ratio. BUILD must hold both libFuzzer
# binaries, built as ci/fuzz builds them: clang, -DPC_FUZZ=ON -DPC_SANITIZE=ON (ASan+UBSan), e.g.
#   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPC_FUZZ=ON -DPC_SANITIZE=ON
#   cmake --build build-fuzz --target fuzz_ort_load fuzz_onnx_load
# Seeds named crash-* are left out (an unfixed one would stop the run at start). Both targets run in libFuzzer's
# fork mode with one worker (-fork=1 -ignore_crashes=1), so an open finding (corpus/README.md lists them; the
# ORT target hit one within seconds at the time of writing) does not end the measurement: exec/s is then the
# last "#EXECS ... time: Ts" line's EXECS / T, and cov/ft are fork mode's counts, which are larger than a
# plain session's (so compare the two targets with each other, not with ci/fuzz's plain numbers). BENCH_FORK=0
# runs plain sessions instead (stopping at the first finding). Results depend on how busy the machine is: the
# script prints the load average before each run. FUZZ_EXTRA_ARGS adds libFuzzer flags to both runs.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-60}"
build="${2:-build-fuzz}"
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds > 0)) || { echo "usage: $0 [SECONDS] [BUILD]" >&2; exit 2; }
for t in fuzz_ort_load fuzz_onnx_load; do
    [[ -x "$build/fuzz/$t" ]] || { echo "$0: $build/fuzz/$t not built (see the header)" >&2; exit 1; }
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# run NAME SEEDS DICT MAX_LEN [FLAGS...]: one session; sets rate, execs, cov, ft
run() {
    local name=$1 seeds=$2 dict=$3 max_len=$4
    shift 4
    mkdir -p "$tmp/$name/seeds" "$tmp/$name/new" "$tmp/$name/artifacts"
    find "$seeds" -maxdepth 1 -type f ! -name 'crash-*' -exec cp {} "$tmp/$name/seeds/" \;
    echo "$name: $(find "$tmp/$name/seeds" -type f | wc -l) seeds, ${seconds}s, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    local fork=()
    [[ "${BENCH_FORK:-1}" == 0 ]] || fork=(-fork=1 -ignore_crashes=1)
    set +e
    # shellcheck disable=SC2086 # FUZZ_EXTRA_ARGS is a list of flags
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=10:malloc_context_size=8}" \
        "$build/fuzz/$name" "$tmp/$name/new" "$tmp/$name/seeds" -dict="$dict" -max_len="$max_len" -timeout=20 \
        -rss_limit_mb=2048 -max_total_time="$seconds" -artifact_prefix="$tmp/$name/artifacts/" \
        -print_final_stats=1 "${fork[@]}" "$@" ${FUZZ_EXTRA_ARGS:-} >"$tmp/$name.log" 2>&1
    local rc=$?
    set -e
    # keep what a session found: the scratch directory goes at exit
    if [[ -n "$(ls -A "$tmp/$name/artifacts")" ]]; then
        mkdir -p "$build/bench-artifacts"
        cp "$tmp/$name/artifacts/"* "$build/bench-artifacts/"
        echo "$name: findings kept in $build/bench-artifacts/" >&2
    fi
    cov=$(grep -o 'cov: [0-9]*' "$tmp/$name.log" | tail -n 1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$tmp/$name.log" | tail -n 1 | cut -d' ' -f2)
    if ((${#fork[@]})); then
        local last
        last=$(grep -E '^#[0-9]+: cov: .* time: [0-9]+s' "$tmp/$name.log" | tail -n 1)
        execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
        local t
        t=$(sed -E 's/.* time: ([0-9]+)s.*/\1/' <<<"$last")
        rate=$(awk -v n="${execs:-0}" -v t="${t:-0}" 'BEGIN { if (t > 0) printf "%d", n / t; else print 0 }')
        local crashes
        crashes=$(find "$tmp/$name/artifacts" -type f | wc -l)
        # fork mode keeps the workers' messages out of the log: the findings are counted, not described (rerun
        # with BENCH_FORK=0, or ci/fuzz, to see one)
        ((crashes == 0)) || echo "$name: $crashes finding(s) on the way (fork mode went on)" >&2
    else
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$tmp/$name.log" | tail -n 1)
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$name.log" | tail -n 1)
        if ((rc != 0)); then
            echo "$name: libFuzzer exited with $rc (a finding? the numbers cover the run up to it):" >&2
            grep -m3 -E 'BUG|ERROR' "$tmp/$name.log" >&2 || true
        fi
    fi
}

run fuzz_ort_load corpus/ort fuzz/ort.dict 65536 -use_counters=0 # ci/fuzz ort's flag (it says why)
ort_rate=${rate:-0} ort_execs=${execs:-0} ort_cov=${cov:-?} ort_ft=${ft:-?}
run fuzz_onnx_load corpus/onnx fuzz/onnx.dict 1048576
onnx_rate=${rate:-0} onnx_execs=${execs:-0} onnx_cov=${cov:-?} onnx_ft=${ft:-?}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; ${seconds}s per target, one worker each$([[ "${BENCH_FORK:-1}" == 0 ]] || echo ' (fork mode)')"
printf '%-16s %10s %12s %8s %8s\n' target exec/s executions cov ft
printf '%-16s %10s %12s %8s %8s\n' fuzz_ort_load "$ort_rate" "$ort_execs" "$ort_cov" "$ort_ft"
printf '%-16s %10s %12s %8s %8s\n' fuzz_onnx_load "$onnx_rate" "$onnx_execs" "$onnx_cov" "$onnx_ft"
if ((onnx_rate > 0)); then
    echo "ratio fuzz_ort_load / fuzz_onnx_load: $(awk -v a="$ort_rate" -v b="$onnx_rate" 'BEGIN { printf "%.3f", a / b }')"
fi
