#!/usr/bin/env bash
# ctest: `passcheck partition` — exit code and a message naming the option for every bad argument, bad models and
# EP files, the partitioning errors, and exact assignments on backend test models and the annotated corpus model.
# usage: run_partition_cli.sh PASSCHECK DATA_DIR
set -uo pipefail
pc=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# expect_stdout FILE -- COMMAND...: exit 0 and stdout exactly FILE's content.
expect_stdout() {
    local want=$1
    shift 2
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne 0 ] || [ "$out" != "$(cat "$want")" ]; then
        echo "FAIL: $* -> exit $rc; got:"
        printf '%s\n' "$out"
        echo "want:"
        cat "$want"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}

conv=$data/node/test_conv_with_strides_padding/model.onnx
ann=$(dirname "$0")/../../corpus/onnx/edge_valid_layer_annotations.onnx
cat >"$tmp/npu.ep" <<'EOF'
# an NHWC accelerator that cannot run Transpose
ep npu layout=nhwc compiles=yes transpose=no
op Conv opset=11..21 types=float
op Conv domain=com.ms.internal.nhwc types=float
EOF
cat >"$tmp/broken.ep" <<'EOF'
ep broken layout=nhwc compiles=yes
op Conv opset=11..21
EOF
printf 'ep npu layout=nhwc\nop Conv opset=12..11\n' >"$tmp/bad.ep"

# help and arguments
expect 0 "usage: passcheck partition MODEL" -- "$pc" partition --help
expect 0 "usage: passcheck partition MODEL" -- "$pc" help partition
expect 2 "partition: usage error: missing MODEL" -- "$pc" partition
expect 2 "unknown option '--bogus'" -- "$pc" partition --bogus "$conv"
expect 2 "more than one MODEL" -- "$pc" partition "$conv" "$conv"
expect 2 "--ep needs an argument" -- "$pc" partition "$conv" --ep
expect 2 "--ep given twice" -- "$pc" partition "$conv" --ep cpu --ep nhwc
expect 2 "--ep: EP list 'gpu,cpu': entry 1: unknown EP 'gpu'" -- "$pc" partition "$conv" --ep gpu,cpu
expect 2 "--ep: EP list 'nhwc,,cpu': entry 2 is empty" -- "$pc" partition "$conv" --ep nhwc,,cpu
expect 2 "--ep: EP list 'cpu,cpu': entry 2: EP 'cpu' is listed twice" -- "$pc" partition "$conv" --ep cpu,cpu
expect 2 "--layer-assignment needs an argument" -- "$pc" partition "$conv" --layer-assignment
expect 2 "--layer-assignment: layer assignment 'cpu\(a': position 6: missing '\)'" -- \
    "$pc" partition "$conv" --layer-assignment 'cpu(a'
expect 2 "--layer-assignment: .*position 1: unknown EP 'nhwc' \(not in the EP list\)" -- \
    "$pc" partition "$conv" --ep cpu --layer-assignment 'nhwc(a)'
expect 2 "--layer-assignment: .*position 15: pattern 'enc' is given twice" -- \
    "$pc" partition "$conv" --ep nhwc,cpu --layer-assignment 'nhwc(enc);cpu(enc)'
expect 2 "--layer-assignment: .*position 5: empty pattern" -- "$pc" partition "$conv" --layer-assignment 'cpu()'
expect 2 "--ep-file needs an argument" -- "$pc" partition "$conv" --ep-file
expect 2 "--ep-file: empty file name" -- "$pc" partition "$conv" --ep-file ''
expect 3 "--ep-file: $tmp/none.ep: cannot open" -- "$pc" partition "$conv" --ep-file "$tmp/none.ep"
expect 3 "--ep-file: $tmp/bad.ep:2:15: field 'opset': minimum 12 > maximum 11" -- \
    "$pc" partition "$conv" --ep-file "$tmp/bad.ep" --ep npu,cpu
expect 2 "--ep: .*unknown EP 'npu'" -- "$pc" partition "$conv" --ep npu,cpu

# bad models
expect 3 "$tmp/missing.onnx: cannot open" -- "$pc" partition "$tmp/missing.onnx"
printf '\x0f\xff\xff\xff' >"$tmp/garbage.onnx"
expect 3 "garbage.onnx" -- "$pc" partition "$tmp/garbage.onnx"

# partitioning errors: no EP claims a node (3)
expect 3 "\[unsupported\].*node 'mm' \(MatMul\): no EP claims it \(nhwc: op ai.onnx:MatMul is not in the EP's op list\)" -- \
    "$pc" partition "$ann" --ep nhwc
# an NHWC EP that claims Conv but not its com.ms.internal.nhwc form keeps it in NCHW form (no layout change)
expect 0 "0 layout changes.*#0 Conv -> broken" -- "$pc" partition "$conv" --ep broken,cpu --ep-file "$tmp/broken.ep"

# exact assignments
cat >"$tmp/want_cpu" <<EOF
partition: $conv: eps cpu, 1 nodes, 0 layout changes
nodes:
  #0 Conv -> cpu
subgraphs:
  cpu kernel 0: 1 node: #0
EOF
expect_stdout "$tmp/want_cpu" -- "$pc" partition "$conv"
cat >"$tmp/want_nhwc" <<EOF
partition: $conv: eps nhwc,cpu, 3 nodes, 1 layout changes
nodes:
  Transpose_pc0 Transpose -> nhwc
  #0 com.ms.internal.nhwc:Conv -> nhwc
  Transpose_pc2 Transpose -> nhwc
subgraphs:
  nhwc compiled 0: 3 nodes: Transpose_pc0 #0 Transpose_pc2
EOF
expect_stdout "$tmp/want_nhwc" -- "$pc" partition "$conv" --ep nhwc,cpu
# npu does not run Transpose: the layout Transposes go to cpu, the Conv alone is npu's subgraph
cat >"$tmp/want_npu" <<EOF
partition: $conv: eps npu,cpu, 3 nodes, 1 layout changes
nodes:
  Transpose_pc0 Transpose -> cpu
  #0 com.ms.internal.nhwc:Conv -> npu
  Transpose_pc2 Transpose -> cpu
subgraphs:
  npu compiled 0: 1 node: #0
  cpu kernel 0: 1 node: Transpose_pc0
  cpu kernel 1: 1 node: Transpose_pc2
EOF
expect_stdout "$tmp/want_npu" -- "$pc" partition "$conv" --ep npu,cpu --ep-file "$tmp/npu.ep"
# annotations: both nodes carry encoder.0; pinned to cpu, nhwc may not take the Relu; exact '=' and prefix
expect 0 "mm MatMul -> cpu   act Relu -> nhwc" -- "$pc" partition "$ann" --ep nhwc,cpu
expect 0 "mm MatMul -> cpu   act Relu -> cpu" -- "$pc" partition "$ann" --ep nhwc,cpu --layer-assignment 'cpu(enc)'
expect 0 "act Relu -> cpu" -- "$pc" partition "$ann" --ep nhwc,cpu --layer-assignment 'cpu(=encoder.0)'
expect 0 "act Relu -> nhwc" -- "$pc" partition "$ann" --ep nhwc,cpu --layer-assignment 'cpu(=encoder)'
# leftmost rule wins; a pin to an EP that does not claim the node is released (MatMul pinned to nhwc -> cpu)
expect 0 "mm MatMul -> cpu   act Relu -> nhwc" -- \
    "$pc" partition "$ann" --ep nhwc,cpu --layer-assignment 'nhwc(encoder);cpu(=encoder.0)'
expect 0 '"nodes": \[ +\{"name": "mm", "id": 0, "domain": "", "op": "MatMul", "ep": "cpu"\}' -- \
    "$pc" partition "$ann" --ep nhwc,cpu --json
if command -v python3 >/dev/null; then
    expect 0 "^ok" -- bash -c "'$pc' partition '$conv' --ep nhwc,cpu --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"layout_changes\"] == 1 and [s[\"ep\"] for s in d[\"subgraphs\"]] == [\"nhwc\"]; print(\"ok\")'"
fi

# the nhwc EP claims the older exporters' forms too: an opset-10 QLinearConv and an opset-8 ConvTranspose move to
# NHWC (the EP's ai.onnx range is the transpose optimizer's, 7..21)
expect 0 "1 layout changes.*#0 com\\.ms\\.internal\\.nhwc:QLinearConv -> nhwc" -- \
    "$pc" partition "$data/node/test_qlinearconv/model.onnx" --ep nhwc,cpu
expect 0 "1 layout changes.*test com\\.ms\\.internal\\.nhwc:ConvTranspose -> nhwc" -- \
    "$pc" partition "$data/node/test_convtranspose_with_kernel/model.onnx" --ep nhwc,cpu

# a layout-sensitive node no NHWC EP took is explained, with the EP's own reason (an opset-6 Conv: the nhwc EP
# claims opsets 7..21), in text and JSON; with no NHWC EP in the list there is nothing to explain
conv6=$data/pytorch-converted/test_Conv2d/model.onnx
expect 0 "layout-sensitive nodes no NHWC EP took: +#0 Conv -> cpu: nhwc: opset 6 of 'ai.onnx' is outside 7\\.\\.21;" -- \
    "$pc" partition "$conv6" --ep nhwc,cpu
expect 0 '"layout_unclaimed": \[ +\{"id": 0, "op": "Conv", "ep": "cpu", "refused_by": \[\{"ep": "nhwc", "why": "opset 6' -- \
    "$pc" partition "$conv6" --ep nhwc,cpu --json
out=$("$pc" partition "$conv6" --ep cpu 2>&1)
check "no NHWC EP: nothing to explain" test -z "$(printf '%s' "$out" | grep 'no NHWC EP took')"
finish "partition cli"
