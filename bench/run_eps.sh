#!/usr/bin/env bash
# EP benchmark (bench/README.md, "EPs"): the seed systems' EPs against `cpu` on the real CNNs, in one run:
#   - blocked: each torchvision CNN (float, random weights; export_torchvision.py) with --ep blocked,cpu over
#     --ep cpu (the nChw16c subgraphs, their reorders, against the plain kernels), and the reorders its compiled
#     bodies hold (ToBlocked + FromBlocked);
#   - systolic: the same CNNs quantized to the Systolic fork's QOperator form (quantize_qop.py) with
#     --ep systolic,cpu over --ep cpu (QLinearConv_nhwc on the CPU emulation of the array against QLinearConv),
#     and the reorders its rewrite left (Transposes).
# Ratios are medians over medians of `passcheck bench` in the same invocation order (cpu first); below 1.0 the
# EP is faster. Prints the geometric mean per EP. Needs python3-torch, python3-torchvision, python3-onnx.
#
#   bench/run_eps.sh [BUILD_DIR]          (default build-release)
#   RUNS=N WARMUP=N THREADS=N MODELS="resnet18 googlenet" bench/run_eps.sh
# Exits 0 whatever the numbers are; non-zero when a model fails to export, optimize or run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build-release}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
THREADS=${THREADS:-1}
py=/usr/bin/python3
for v in "$RUNS" "$WARMUP" "$THREADS"; do
    case $v in '' | *[!0-9]*) echo "run_eps.sh: RUNS, WARMUP and THREADS must be integers" >&2; exit 2 ;; esac
done
if ! "$py" -c 'import torch, torchvision, onnx' 2>/dev/null; then
    echo "run_eps.sh: python3-torch, python3-torchvision and python3-onnx are needed" >&2
    exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target passcheck >/dev/null
pc=$build/passcheck
tmp=$(mktemp -d /tmp/passcheck-bench-eps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
models=${MODELS:-resnet18 mobilenet_v2 squeezenet1_1 shufflenet_v2_x1_0 googlenet densenet121}
# shellcheck disable=SC2086
"$py" bench/real-models/export_torchvision.py "$tmp" $models >"$tmp/export.log" 2>&1 || {
    echo "run_eps.sh: export failed:" >&2
    tail -5 "$tmp/export.log" >&2
    exit 1
}

# median ms of one `passcheck bench` run
median() { # model inputs eps
    local out
    out=$("$pc" bench "$1" --inputs "$2" --ep "$3" --runs "$RUNS" --warmup "$WARMUP" --threads "$THREADS") || {
        echo "run_eps.sh: bench failed: $1 --ep $3" >&2
        return 1
    }
    awk '/passcheck +min/ { for (i = 1; i <= NF; i++) if ($i == "median") print $(i + 1) }' <<<"$out"
}

# reorders in an optimized model: ToBlocked/FromBlocked inside Subgraph bodies, or Transposes
reorders() { # model kind
    "$py" - "$1" "$2" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
def walk(g):
    for n in g.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from walk(a.g)
nodes = list(walk(m.graph))
if sys.argv[2] == "blocked":
    print(sum(n.op_type in ("ToBlocked", "FromBlocked") for n in nodes),
          sum(n.op_type == "Subgraph" for n in nodes))
else:
    print(sum(n.op_type == "Transpose" and n.domain in ("", "ai.onnx") for n in nodes),
          sum(n.op_type == "QLinearConv_nhwc" for n in nodes))
PY
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs after $WARMUP warm-up, $THREADS thread(s)"
printf '%-20s %-9s %10s %10s %7s %9s %s\n' model ep cpu_ms ep_ms ratio reorders units
logs=$tmp/ratios
: >"$logs"
for name in $models; do
    m=$tmp/$name.onnx
    in=$tmp/$name.input_0.pb
    "$py" bench/real-models/quantize_qop.py "$m" "$tmp/$name.q.onnx"
    for ep in blocked systolic; do
        model=$m
        [ "$ep" = systolic ] && model=$tmp/$name.q.onnx
        "$pc" optimize "$model" -o "$tmp/$name.$ep.onnx" --ep "$ep,cpu" >/dev/null
        read -r nre units < <(reorders "$tmp/$name.$ep.onnx" "$ep")
        base=$(median "$model" "$in" cpu)
        with=$(median "$model" "$in" "$ep,cpu")
        ratio=$(awk -v a="$with" -v b="$base" 'BEGIN { printf "%.3f", a / b }')
        echo "$ep $ratio" >>"$logs"
        unit=subgraphs
        [ "$ep" = systolic ] && unit=QLinearConv_nhwc
        printf '%-20s %-9s %10s %10s %7s %9s %s %s\n' "$name" "$ep" "$base" "$with" "$ratio" "$nre" "$units" "$unit"
    done
done
for ep in blocked systolic; do
    awk -v ep="$ep" '$1 == ep { s += log($2); n++ } END { if (n) printf "geomean %s/cpu: %.3f over %d models\n", ep, exp(s / n), n }' "$logs"
done
