#!/usr/bin/env bash
# Optimizer benchmark (see bench/README.md, "Optimizer"): TF-style NHWC graphs of 10k, 100k and 1M nodes; passcheck's
# transpose optimizer alone and the level-1 pipeline (cpu), per node, with the growth from the smallest to the
# largest graph; next to ONNX Runtime 1.30's session creation on the same files at 'disabled', 'basic' and
# 'extended', as ratios.
#
#   bench/run_optimize.sh [BUILD_DIR]     (default build-release)
#   SIZES="10000 100000" ...              node counts (default 10000 100000 1000000)
#   REPS=N ...                            fresh loads per size for passcheck (default 3; 1 for sizes >= 1M)
#   ORT_1M=1 ...                          also time ORT on graphs of >= 1M nodes (off by default: ORT's 'basic'
#                                         session takes minutes already at 100k nodes)
#   ORT_TIMEOUT=S ...                     give up on one ORT session creation after S seconds (default 600)
# Exits 0 whatever the numbers are; non-zero only when something fails to build or run.
set -euo pipefail

SIZES=${SIZES:-10000 100000 1000000}
reps_given=${REPS:+1}
REPS=${REPS:-3}
ORT_TIMEOUT=${ORT_TIMEOUT:-600}
for v in $SIZES $REPS $ORT_TIMEOUT; do
    case $v in '' | *[!0-9]* | 0*) echo "run_optimize.sh: SIZES, REPS and ORT_TIMEOUT must be positive integers" >&2; exit 2 ;; esac
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build-release}
ort_dir=${PC_ORT_DIR:-$HOME/.cache/passcheck/ort/node_modules}

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
[ "$btype" = Release ] || echo "run_optimize.sh: warning: $build is a '${btype:-<none>}' build; numbers are not comparable" >&2
if ! cmake --build "$build" --target bench_optimize >"$build/bench_optimize.build.log" 2>&1; then
    tail -20 "$build/bench_optimize.build.log" >&2
    exit 1
fi
bench=$build/bench/bench_optimize
tmp=$(mktemp -d /tmp/passcheck-bench-opt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

have_ort=0
if command -v node >/dev/null && [ -d "$ort_dir/onnxruntime-node" ]; then
    have_ort=1
else
    echo "note: node or onnxruntime-node missing (run ci/deps); only passcheck's numbers are shown"
fi

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# ORT column: seconds, or "-" (skipped) / "timeout"
ort_time() {
    local file=$1 level=$2 nodes=$3
    if [ "$have_ort" -eq 0 ] || { [ "$nodes" -ge 1000000 ] && [ "${ORT_1M:-0}" != 1 ]; }; then
        echo "-"
        return
    fi
    local out
    if out=$(timeout "$ORT_TIMEOUT" node bench/ort_session.js "$ort_dir" "$file" "$level" 1 2>/dev/null); then
        echo "$out" | awk '{print $4}'
    else
        echo "timeout"
    fi
}

rows=()
for n in $SIZES; do
    f=$tmp/tf_$n.onnx
    "$bench" gen "$f" "$n" >/dev/null
    reps=$REPS
    [ "$n" -ge 1000000 ] && [ -z "$reps_given" ] && reps=1
    ours=$("$bench" time "$f" "$reps")
    read -r _ _ nodes load infer tr pipe tb ta tp <<<"$ours"
    od=$(ort_time "$f" disabled "$nodes")
    ob=$(ort_time "$f" basic "$nodes")
    oe=$(ort_time "$f" extended "$nodes")
    rows+=("$nodes $load $infer $tr $pipe $tb $ta $tp $od $ob $oe $(du -m "$f" | cut -f1)")
    rm -f "$f"
done

printf '\n%-8s %5s %8s %8s %9s %8s %9s %8s %-13s %9s %9s %9s %9s %9s\n' nodes MB load_s infer_s transp_s us/node \
    pipe_s us/node 'T before>after' ort_dis_s ort_basic ort_ext pipe/ORTopt load+pipe/ORTbasic
for r in "${rows[@]}"; do
    echo "$r" | awk '{
        nodes=$1; load=$2; infer=$3; tr=$4; pipe=$5; od=$9; ob=$10; oe=$11
        r1 = (od ~ /^[0-9.]+$/ && ob ~ /^[0-9.]+$/ && ob - od > 0) ? sprintf("%.2g", pipe / (ob - od)) : "-"
        r2 = (ob ~ /^[0-9.]+$/) ? sprintf("%.2g", (load + pipe) / ob) : "-"
        printf "%-8d %5d %8.3f %8.3f %9.4f %8.3f %9.4f %8.3f %-13s %9s %9s %9s %9s %9s\n", nodes, $12, load, infer,
               tr, tr / nodes * 1e6, pipe, pipe / nodes * 1e6, $6 ">" $7 "/" $8, od, ob, oe, r1, r2
    }'
done
# linear growth: per-node time of the largest graph over the smallest (1.0 = perfectly linear)
printf '%s\n' "${rows[@]}" | awk 'NR == 1 { n0 = $1; t0 = $4 / $1; p0 = $5 / $1 }
    { n1 = $1; t1 = $4 / $1; p1 = $5 / $1 }
    END { if (NR > 1) printf "\ngrowth %d -> %d nodes: per-node time x%.2f (transpose optimizer), x%.2f (level-1 pipeline)\n",
                             n0, n1, (t0 > 0 ? t1 / t0 : 0), (p0 > 0 ? p1 / p0 : 0) }'
echo "columns: T before>after = Transposes in the file > after pc_transpose_optimize / after the pipeline;"
echo "pipe/ORTopt = our pipeline / (ORT basic - ORT disabled), i.e. optimization time against optimization time;"
echo "load+pipe/ORTbasic = our load + pipeline / ORT's whole 'basic' session creation. Below 1: passcheck is faster."
