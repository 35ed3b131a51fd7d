#!/usr/bin/env bash
# Suite benchmark (see bench/README.md):
#   1. cases/second of `passcheck suite` (Release, default families and properties, --jobs 2, no shrinking), next to
#      the peer bench_suite_peer (the same cases only generated and run once on the reference executor, 2
#      processes) as a ratio;
#   2. per injected fault (`passcheck suite --list-faults`), on the default suite (every family and property, the
#      default 30000 cases; FAULT_CASES to change): the first case that fails differently from the run without
#      faults, the wall time of a run that stops right after it (time to detect), how many cases the fault's new
#      signatures fail, the shrunk repros' sizes (nodes), and the run's shrinking time;
#   3. the ONNX Runtime oracle's cases/second (--oracle ort --property ort-oracle) when node and onnxruntime-node
#      are installed.
#
#   bench/bench_suite.sh [BUILD_DIR]      (default build-release)
#   CASES=N bench/bench_suite.sh          cases for the throughput line (default 4000)
#   FAULT_CASES=N bench/bench_suite.sh    cases per fault run (default 30000, the suite's default)
#   ORT_CASES=N bench/bench_suite.sh      cases for the ORT oracle line (default 500)
# Exits 0 whatever the numbers are; non-zero only when something fails to build or run.
set -euo pipefail

CASES=${CASES:-4000}
FAULT_CASES=${FAULT_CASES:-30000}
SEED=${SEED:-1}
ORT_CASES=${ORT_CASES:-500}
case $ORT_CASES in '' | *[!0-9]* | 0*) echo "bench_suite.sh: ORT_CASES must be a positive integer" >&2; exit 2 ;; esac
case $CASES in '' | *[!0-9]* | 0*) echo "bench_suite.sh: CASES must be a positive integer" >&2; exit 2 ;; esac
case $FAULT_CASES in '' | *[!0-9]* | 0*) echo "bench_suite.sh: FAULT_CASES must be a positive integer" >&2; exit 2 ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build-release}
ort_dir=${PC_ORT_DIR:-$HOME/.cache/passcheck/ort/node_modules}

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
if ! grep -q 'CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt"; then
    echo "bench_suite.sh: $build is not a Release build" >&2
    exit 2
fi
cmake --build "$build" -j2 --target passcheck bench_suite_peer >/dev/null
pc="$build/passcheck"
tmp=$(mktemp -d /tmp/passcheck-bench-suite.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
echo "seed $SEED, $CASES cases, default families and properties, --jobs 2"
echo

# --- 1. throughput ------------------------------------------------------------------------------------------------
"$pc" suite --seed "$SEED" --cases "$CASES" --jobs 2 --no-shrink --quiet --out "$tmp/base" --json "$tmp/base.json" \
    >"$tmp/base.log" 2>&1 || true # failures found on HEAD do not stop the benchmark
t0=$(now)
"$build/bench/bench_suite_peer" "$SEED" "$CASES" 0 2 >"$tmp/peer0" &
p0=$!
"$build/bench/bench_suite_peer" "$SEED" "$CASES" 1 2 >"$tmp/peer1" &
p1=$!
wait $p0 $p1
t1=$(now)
python3 - "$tmp/base.json" "$tmp/peer0" "$tmp/peer1" "$t0" "$t1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["timing"]
peer_cases = sum(int(open(p).read().split()[3]) for p in sys.argv[2:4])
peer_s = float(sys.argv[5]) - float(sys.argv[4])
peer_cps = peer_cases / peer_s
print(f"suite:  {d['cases']} cases in {t['seconds']:.2f} s = {t['cases_per_second']:.0f} cases/s "
      f"(goal >= 500; {d['failed_cases']} cases failed on this tree)")
print(f"peer:   {peer_cases} cases generated + one reference run, 2 processes, {peer_s:.2f} s = {peer_cps:.0f} cases/s")
print(f"ratio:  suite / peer = {t['cases_per_second'] / peer_cps:.2g} (share of bare generate+evaluate speed the "
      f"harness keeps: fork per case, pipeline, {len(d['properties'])} properties after every pass)")
EOF
echo

# --- 2. injected faults -------------------------------------------------------------------------------------------
echo "faults: seed $SEED, $FAULT_CASES cases, default families and properties, --jobs 2"
"$pc" suite --seed "$SEED" --cases "$FAULT_CASES" --jobs 2 --no-shrink --quiet --out "$tmp/fbase" \
    --json "$tmp/fbase.json" >"$tmp/fbase.log" 2>&1 || true
printf '%-24s %8s %9s %7s %6s %9s %s\n' fault "1st case" "detect s" "cases" "repro" "shrink s" \
    "new signatures (failing cases, nodes after shrinking)"
"$pc" suite --list-faults | while read -r fault _; do
    [ -n "$fault" ] || continue
    rm -rf "$tmp/f"
    "$pc" suite --seed "$SEED" --cases "$FAULT_CASES" --jobs 2 --inject "$fault" --quiet --out "$tmp/f" \
        --json "$tmp/f.json" >"$tmp/f.log" 2>&1 || true
    read -r first n_cases shrink_s sizes < <(python3 - "$tmp/fbase.json" "$tmp/f.json" <<'EOF'
import json, sys
base = {f["case"]: f["signature"] for f in json.load(open(sys.argv[1]))["failures"]}
d = json.load(open(sys.argv[2]))
base_sigs = set(base.values())
first = min((f["case"] for f in d["failures"] if base.get(f["case"]) != f["signature"]), default=-1)
new = [s for s in d["signatures"] if s["signature"] not in base_sigs]
print(first, sum(s["cases"] for s in new), f"{d['timing'].get('shrink_seconds', 0):.1f}",
      " ".join(f"{s['signature']}({s['cases']},{s['nodes_after']})" for s in new) or "-")
EOF
)
    if [ "$first" -lt 0 ]; then
        printf '%-24s %8s %9s %7s %6s %9s %s\n' "$fault" "-" "-" "-" "-" "-" "NOT DETECTED in $FAULT_CASES cases"
        continue
    fi
    # time to detect: a run that ends right after the first detecting case (no shrinking)
    rm -rf "$tmp/d"
    t0=$(now)
    "$pc" suite --seed "$SEED" --cases $((first + 1)) --jobs 2 --inject "$fault" --no-shrink --quiet \
        --out "$tmp/d" >/dev/null 2>&1 || true
    t1=$(now)
    smallest=$(tr ' ' '\n' <<<"$sizes" | sed -n 's/.*,\([0-9]*\))$/\1/p' | sort -n | head -1)
    printf '%-24s %8s %9.2f %7s %6s %9s %s\n' "$fault" "$first" "$(echo "$t1 - $t0" | bc)" "$n_cases" \
        "${smallest:--}" "$shrink_s" "$sizes"
done
echo

# --- 3. the ONNX Runtime oracle -----------------------------------------------------------------------------------
if command -v node >/dev/null 2>&1 && [ -d "$ort_dir/onnxruntime-node" ]; then
    PC_ORT_DIR=$ort_dir "$pc" suite --seed "$SEED" --cases "$ORT_CASES" --jobs 2 --oracle ort --property ort-oracle \
        --no-shrink --quiet --out "$tmp/ort" --json "$tmp/ort.json" >/dev/null 2>&1 || true
    python3 - "$tmp/ort.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
row = next((r for r in d["property_table"] if r["property"] == "ort-oracle"), None)
t = d["timing"]
print(f"ort oracle: {d['cases']} cases in {t['seconds']:.2f} s = {t['cases_per_second']:.0f} cases/s; "
      + (f"pass {row['pass']}, fail {row['fail']}, skip {row['skip']}, error {row['error']}" if row
         else "the ort-oracle property did not run"))
EOF
else
    echo "ort oracle: skipped (node or $ort_dir/onnxruntime-node missing)"
fi
