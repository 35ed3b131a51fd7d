#!/usr/bin/env bash
# Shrinking large generated graphs (issue 5's target: a 200-node failing graph shrinks in <= 5 s, the default
# budget). For each planted fault (`passcheck suite --list-faults`) and seed, a suite run with --max-nodes 200 (graphs
# of ~100-150 ops on average) and that fault injected; every failure signature it finds is shrunk with the default
# budget, and its repro README gives the size found, the size shrunk and the shrink time. Prints one line per
# signature, then the median and worst shrink time of the cases found at >= 150 nodes next to the budget (the peer:
# the 5 s the issue allows), and the median repro size.
#
#   bench/bench_shrink_large.sh [BUILD_DIR]     (default build-release)
#   SEEDS="1 2 3" CASES=40 bench/bench_shrink_large.sh
# Exits 0 whatever the numbers are; non-zero only when something fails to build or run.
set -euo pipefail

SEEDS=${SEEDS:-"1 2"}
CASES=${CASES:-40}
BUDGET=${BUDGET:-5}
case $CASES in '' | *[!0-9]* | 0*) echo "bench_shrink_large.sh: CASES must be a positive integer" >&2; exit 2 ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build-release}
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j 2 --target passcheck >/dev/null
pc=$build/passcheck
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rows=$tmp/rows
: >"$rows"
for seed in $SEEDS; do
    while read -r fault _; do
        [ -n "$fault" ] || continue
        out=$tmp/$seed-$fault
        rc=0
        "$pc" suite --quiet --jobs 2 --cases "$CASES" --seed "$seed" --max-nodes 200 --inject "$fault" \
            --shrink-time "$BUDGET" --out "$out" >"$out.log" 2>&1 || rc=$?
        if [ $rc -gt 1 ]; then
            echo "bench_shrink_large.sh: suite run (seed $seed, $fault) exited $rc" >&2
            tail -3 "$out.log" >&2
            exit 1
        fi
        for readme in "$out"/*/README.md; do
            [ -f "$readme" ] || continue
            found=$(awk -F'|' '/^\| found/ {gsub(/ /, "", $4); print $4; exit}' "$readme")
            shrunk=$(awk -F'|' '/^\| shrunk/ {gsub(/ /, "", $4); print $4; exit}' "$readme")
            secs=$(sed -n 's/^Shrinking: .* accepted, \([0-9.]*\) s.*/\1/p' "$readme" | head -1)
            sig=$(basename "$(dirname "$readme")")
            echo "$seed $fault ${sig%-*} $found $shrunk ${secs:-0}" >>"$rows"
        done
    done < <("$pc" suite --list-faults)
done

printf '%-5s %-24s %-58s %6s %7s %8s\n' seed fault signature found shrunk seconds
while read -r seed fault sig found shrunk secs; do
    printf '%-5s %-24s %-58s %6s %7s %8s\n' "$seed" "$fault" "$sig" "$found" "$shrunk" "$secs"
done <"$rows"
/usr/bin/env python3 - "$rows" "$BUDGET" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
budget = float(sys.argv[2])
big = [float(r[5]) for r in rows if r[3].isdigit() and int(r[3]) >= 150]
sizes = [int(r[4]) for r in rows if r[4].isdigit()]
if big:
    med, worst = statistics.median(big), max(big)
    print(f"cases found at >= 150 nodes: {len(big)}; shrink time median {med:.2f} s, worst {worst:.2f} s; "
          f"vs the {budget:g} s budget: median {med / budget:.2f}x, worst {worst / budget:.2f}x")
else:
    print("no failure was found at >= 150 nodes (raise CASES or add SEEDS)")
if sizes:
    print(f"repro size over {len(sizes)} signatures: median {statistics.median(sizes):g} nodes, max {max(sizes)}")
PY
