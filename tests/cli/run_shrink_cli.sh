#!/usr/bin/env bash
# ctest: `passcheck shrink` — usage errors (exit 2) naming the option, bad input files (exit 3) naming the file, a
# model that does not fail the property (exit 1, nothing written), and a real shrink: a 60-node chain whose Conv ->
# Relu fusion loses its EP under --inject level2-forgets-ep shrinks to the 2-node Conv -> Relu, the repro folder
# holds what docs/shrinking.md lists, and replaying the README's command fails the same way.
# usage: run_shrink_cli.sh PASSCHECK TEST_SHRINK DATA_DIR
set -uo pipefail
pc=$1 writer=$2 data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$writer" --write-model "$tmp" || { echo "FAIL: cannot write the test models"; exit 1; }
chain=$tmp/conv_relu_chain.onnx
abs=$data/node/test_abs/model.onnx
out=$tmp/out
P=(--property ep-assignment --inject level2-forgets-ep)

# --- usage errors (exit 2), nothing written --------------------------------------------------------------------
expect 0 "usage: passcheck shrink" -- "$pc" shrink --help
expect 0 "shrink +shrink a model" -- "$pc" --help
expect 2 "missing MODEL" -- "$pc" shrink --property numerics
expect 2 "missing --property P" -- "$pc" shrink "$chain"
expect 2 "--property: unknown property 'bogus'" -- "$pc" shrink "$chain" --property bogus
expect 2 "--property takes one property" -- "$pc" shrink "$chain" --property numerics,validity
expect 2 "--property needs an argument" -- "$pc" shrink "$chain" --property
expect 2 "--property given twice" -- "$pc" shrink "$chain" --property numerics --property numerics
expect 2 "unknown option '--bogus'" -- "$pc" shrink "$chain" --property numerics --bogus
expect 2 "more than one MODEL" -- "$pc" shrink "$chain" "$abs" --property numerics
expect 2 "unknown --pass 'no_such_pass'" -- "$pc" shrink "$chain" --property numerics --pass no_such_pass
for bad in 4 -1 x ''; do
    expect 2 "bad --level '$bad' \(want 0..3\)" -- "$pc" shrink "$chain" --property numerics --level "$bad"
done
for bad in 0 -1 x 5s '' 1e9; do
    expect 2 "bad --time '$bad'" -- "$pc" shrink "$chain" --property numerics --time "$bad"
done
expect 2 "--inject: .*no-such-fault" -- "$pc" shrink "$chain" --property numerics --inject no-such-fault
expect 2 "--ep: .*unknown EP 'gpu'" -- "$pc" shrink "$chain" --property numerics --ep cpu,gpu
expect 2 "--layer-assignment: .*position [0-9]+" -- "$pc" shrink "$chain" --property numerics \
    --layer-assignment 'cpu(enc'
expect 2 "empty --out" -- "$pc" shrink "$chain" --property numerics --out ''
check "usage errors write nothing" test ! -e "$out"

# --- bad input files (exit 3) naming the file -------------------------------------------------------------------
expect 3 "$tmp/missing.onnx: cannot open" -- "$pc" shrink "$tmp/missing.onnx" --property numerics --out "$out"
printf 'not a model' >"$tmp/garbage.onnx"
expect 3 "$tmp/garbage.onnx" -- "$pc" shrink "$tmp/garbage.onnx" --property numerics --out "$out"
expect 3 "--ep-file: $tmp/none.ep: cannot open" -- "$pc" shrink "$chain" --property numerics --ep-file "$tmp/none.ep"
mkdir -p "$tmp/empty"
expect 3 "--inputs: graph input 'x': $tmp/empty/input_0.pb" -- "$pc" shrink "$chain" "${P[@]}" --inputs "$tmp/empty"
expect 3 "--inputs: more files than the 1 graph inputs" -- "$pc" shrink "$abs" --property numerics \
    --inputs "$data/node/test_abs/test_data_set_0/input_0.pb,$data/node/test_abs/test_data_set_0/input_0.pb"
# data that is not what the model declares: refused before anything runs, naming the input and the file
expect 3 "graph input 'x': .*test_mod_int64_fmod.*: the data is int64\\[6\\] but the input is declared float" -- \
    "$pc" shrink "$abs" --property numerics --inputs "$data/node/test_mod_int64_fmod/test_data_set_0/input_0.pb"
expect 3 "graph input 'x': .*: the data is float\\[3\\] but the input is declared float\\[3,4,5\\]" -- \
    "$pc" shrink "$abs" --property numerics --inputs "$data/node/test_sigmoid_example/test_data_set_0/input_0.pb"
check "bad inputs write nothing" test ! -e "$out"

# --- nothing to shrink (exit 1), nothing written ----------------------------------------------------------------
expect 1 "does not fail property 'ep-assignment' \(it passes\); nothing to shrink" -- \
    "$pc" shrink "$abs" --property ep-assignment --inputs "$data/node/test_abs/test_data_set_0" --out "$out"
expect 1 "does not fail property 'ep-assignment' \(it passes\)" -- "$pc" shrink "$chain" --property ep-assignment \
    --out "$out"
expect 1 "does not fail property 'ep-assignment' at pass 'fuse_reshape' \(it passes\)" -- \
    "$pc" shrink "$chain" "${P[@]}" --pass fuse_reshape --out "$out"
# a property that could not judge (an oracle missing) is no failure to shrink, and never exit 0
expect 1 "property 'ort-oracle' could not judge the model at 'end-to-end' \\(ERROR\\): the ONNX Runtime oracle is unavailable.*nothing to shrink" \
    -- env PC_ORT_DIR="$tmp/no-ort" "$pc" shrink "$abs" --property ort-oracle --out "$out"
check "no failure writes nothing" test ! -e "$out"

# --- a real shrink ----------------------------------------------------------------------------------------------
sig='ep-assignment@fuse_conv_activation/ep-not-inherited'
expect 0 "fails $sig: .*nodes 60 -> 2, .*repro: $out/ep-assignment@fuse_conv_activation-ep-not-inherited-[0-9a-f]{8}" \
    -- "$pc" shrink "$chain" "${P[@]}" --out "$out" --time 60
repro=$(ls -d "$out"/ep-assignment@fuse_conv_activation-ep-not-inherited-* 2>/dev/null | head -1)
check "repro folder written" test -n "$repro"
for f in repro.onnx before.onnx after.onnx case.txt README.md repro.dot; do
    check "repro has $f" test -s "$repro/$f"
done
# the repro is an ordinary model: exactly the Conv and the Relu (passcheck info, not the shrinker, counts)
expect 0 "graph: .*2 nodes.* Conv .* Relu" -- "$pc" info "$repro/repro.onnx"
check "case.txt names the signature" grep -q "^signature=$sig\$" "$repro/case.txt"
# the pictures show the change: the Conv and the Relu outlined as removed, the FusedConv as added with its
# activation attribute and no EP (the planted bug), edge types inferred where the model leaves them out (~)
check "before.dot: the Conv removed, with its pads" grep -q 'label="Conv.*pads=\[1,1,1,1\].*(removed by the pass)' "$repro/before.dot"
check "before.dot: an inferred edge type" grep -q 'label="~float\[1,1,3,3\]"' "$repro/before.dot"
check "after.dot: the FusedConv added without an EP" \
    grep -q "FusedConv.*activation='Relu'.*ep: (none).*(added by the pass)" "$repro/after.dot"
# the README's replay command fails the same way (and, being minimal already, shrinks no further)
replay=$(grep '^passcheck shrink ' "$repro/README.md" | head -1)
check "README has a shrink replay command" test -n "$replay"
if [ -n "$replay" ]; then
    read -r -a words <<<"${replay#passcheck }"
    expect 0 "fails $sig: .*nodes 2 -> 2" -- "$pc" "${words[@]}" --out "$tmp/replay" --time 60
fi
# a replay writes nothing (no second repro under another name): its repro is the folder replayed
mkdir -p "$tmp/cwd"
pcabs=$(readlink -f "$pc")
expect 1 "repro: $repro/? \\(replayed; nothing written\\)" -- sh -c "cd '$tmp/cwd' && '$pcabs' suite --replay '$repro'"
check "a replay without --out writes nothing" test -z "$(ls -A "$tmp/cwd")"
# same model, same seed, same result: the folder name is content-addressed
expect 0 "nodes 60 -> 2" -- "$pc" shrink "$chain" "${P[@]}" --out "$out" --time 60
check "a rerun lands in the same folder" test "$(ls -d "$out"/*/ | wc -l)" -eq 1

# --- an alloc-failure target is judged at every allocation -----------------------------------------------------
# fold_padded20: Transpose(constant) + x beside 20 unary outputs; under fold-skips-errors it breaks at a few of
# its allocations, none the one its fingerprint draws (judged at that point alone it passes: exit 1 before)
padded=$tmp/fold_padded20.onnx
expect 0 "fails alloc-failure@end-to-end/swallowed: .*nodes 22 -> 2, " -- "$pc" shrink "$padded" \
    --property alloc-failure --inject fold-skips-errors --out "$tmp/af" --time 60
afrepro=$(ls -d "$tmp"/af/alloc-failure@end-to-end-swallowed-* 2>/dev/null | head -1)
check "alloc-failure repro written" test -n "$afrepro"
check "case.txt records alloc_every" grep -q '^alloc_every=1$' "$afrepro/case.txt"
expect 1 "1 failed" -- "$pc" suite --replay "$afrepro" --out "$tmp/af-replay"

finish "shrink CLI"
