#!/usr/bin/env bash
# Loader speed benchmark: passcheck's pc_model_load_file (load + full verify) against Debian's python3-onnx
# onnx.load on the same two generated files. See bench/README.md.
#
#   bench/run_load.sh [BUILD_DIR]        (default build-release, relative to the repository root)
#   REPEAT=N bench/run_load.sh ...       loads per file and tool (default 5); the median is reported
#
# Reports the ratio passcheck/onnx.load per file against the goal (<= 0.5) as PASS or MISS. Missing the goal is
# not a failure: the script exits 0. It exits non-zero only when something fails to build or run.
set -euo pipefail

GOAL=0.5
REPEAT=${REPEAT:-5}
PEER_PY=${PEER_PY:-/usr/bin/python3} # Debian's python3-onnx is importable only with the system interpreter

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build-release}
case $REPEAT in '' | *[!0-9]* | 0*) echo "run_load.sh: REPEAT must be a positive integer" >&2; exit 2 ;; esac

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [ "$btype" != "Release" ]; then
    echo "run_load.sh: warning: $build is configured as '${btype:-<none>}', not Release; numbers are not comparable" >&2
fi
cmake --build "$build" --target bench_load >/dev/null
bench="$build/bench/bench_load"

tmp=$(mktemp -d /tmp/passcheck-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

have_peer=1
if [ ! -x "$PEER_PY" ] || ! "$PEER_PY" -c 'import onnx' 2>/dev/null; then
    have_peer=0
    echo "note: python3-onnx is not importable with $PEER_PY (apt-get install python3-onnx); only passcheck's numbers are shown"
fi

echo "generating models in $tmp ..."
"$bench" gen "$tmp"

# One Python process per file, REPEAT loads in it; the import is not timed, freeing the model is not timed.
peer_time() {
    "$PEER_PY" -c '
import resource, statistics, sys, time
import onnx
path, n = sys.argv[1], int(sys.argv[2])
ts = []
for _ in range(n):
    t0 = time.perf_counter()
    m = onnx.load(path)
    ts.append(time.perf_counter() - t0)
    del m
print("onnx_load", path, "%.6f" % statistics.median(ts), "%.6f" % min(ts),
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
' "$1" "$REPEAT"
}

rows=()
for name in nodes100k weights500m; do
    f="$tmp/$name.onnx"
    ours=$("$bench" time "$f" "$REPEAT")
    echo "$ours"
    phases=$("$bench" phases "$f" "$REPEAT")
    echo "$phases"
    read -r _ _ our_med our_min < <(grep '^passcheck_load ' <<<"$ours")
    read -r _ _ our_rss _ _ _ size < <(grep '^passcheck_mem ' <<<"$ours")
    peer_med=- peer_min=- peer_rss=-
    if [ "$have_peer" = 1 ]; then
        peer=$(peer_time "$f")
        echo "$peer"
        read -r _ _ peer_med peer_min peer_rss <<<"$peer"
    fi
    rows+=("$name $size $our_med $our_min $our_rss $peer_med $peer_min $peer_rss")
done

echo
if [ "$have_peer" = 1 ]; then peer_desc="onnx.load via $PEER_PY"; else peer_desc="not available"; fi
echo "passcheck: pc_model_load_file, default options (load + full verify); peer: $peer_desc;"
echo "median of $REPEAT loads each, seconds; peak RSS in MiB (ru_maxrss of the whole process)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews both sides)"
printf '%-12s %9s %14s %14s %8s %6s %6s %10s %10s\n' file size_MB passcheck_s onnx.load_s ratio goal result \
    pc_rss_MiB py_rss_MiB
for row in "${rows[@]}"; do
    read -r name size our_med our_min our_rss peer_med peer_min peer_rss <<<"$row"
    awk -v name="$name" -v size="$size" -v om="$our_med" -v pm="$peer_med" -v orss="$our_rss" -v prss="$peer_rss" \
        -v goal="$GOAL" 'BEGIN {
            if (pm == "-") { ratio = "-"; res = "n/a"; pr = "-" }
            else {
                r = om / pm; ratio = sprintf("%.2f", r); res = (r <= goal) ? "PASS" : "MISS"
                pr = sprintf("%.0f", prss / 1024)
            }
            printf "%-12s %9.1f %14.3f %14s %8s %6s %6s %10.0f %10s\n", name, size / 1e6, om,
                   (pm == "-" ? "-" : sprintf("%.3f", pm)), ratio, "<=" goal, res, orss / 1024, pr
        }'
done
exit 0
