#!/usr/bin/env bash
# ctest: the CLI's contract — documented exit codes, a specific message naming the bad argument or file, and
# --help for every subcommand. usage: run_cli_contract.sh PASSCHECK DATA_DIR
set -uo pipefail
pc=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

good=$data/node/test_abs/model.onnx
expect 2 "usage" -- "$pc"
expect 0 "commands:" -- "$pc" --help
expect 0 "^passcheck [0-9]" -- "$pc" --version
expect 2 "unknown command 'frobnicate'" -- "$pc" frobnicate
for cmd in info roundtrip conformance; do
    expect 0 "usage: passcheck $cmd" -- "$pc" $cmd --help
    expect 0 "usage: passcheck $cmd" -- "$pc" help $cmd
done
expect 2 "unknown command 'nope'" -- "$pc" help nope
expect 2 "missing MODEL" -- "$pc" info
expect 2 "unknown option '--bogus'" -- "$pc" info --bogus "$good"
expect 2 "more than one MODEL" -- "$pc" info "$good" "$good"
expect 0 "ops \(1 kinds\)" -- "$pc" info "$good"
expect 0 '"nodes": 1' -- "$pc" info --json "$good"
expect 3 "$tmp/missing.onnx: cannot open" -- "$pc" info "$tmp/missing.onnx"
expect 3 "not a regular file" -- "$pc" info "$tmp"
: >"$tmp/empty.onnx"
expect 3 "\[truncated\].*empty.onnx" -- "$pc" info "$tmp/empty.onnx"
printf '\x0f\xff\xff\xff' >"$tmp/garbage.onnx"
expect 3 "garbage.onnx" -- "$pc" info "$tmp/garbage.onnx"
head -c 40 "$data/node/test_conv_with_strides_padding/model.onnx" >"$tmp/cut.onnx"
expect 3 "cut.onnx" -- "$pc" info "$tmp/cut.onnx"
# annotations and EP assignments: the corpus model has two nodes annotated encoder.0, one on CUDAExecutionProvider
ann=$(dirname "$0")/../../corpus/onnx/edge_valid_layer_annotations.onnx
expect 0 "annotations \(layer_ann; 0 nodes without\):.*2 +encoder\.0" -- "$pc" info "$ann"
expect 0 "ep assignments \(1 nodes unassigned\):.*1 +CUDAExecutionProvider" -- "$pc" info "$ann"
expect 0 '"annotations": \{"encoder.0": 2\}' -- "$pc" info --json "$ann"
expect 0 '"ep_assignments": \{"CUDAExecutionProvider": 1\}' -- "$pc" info --json "$ann"
expect 0 "annotations: none" -- "$pc" info "$good"
expect 2 "missing PATH" -- "$pc" roundtrip
expect 2 "needs an argument" -- "$pc" roundtrip --json
expect 3 "no such|No such" -- "$pc" roundtrip "$tmp/nowhere"
expect 0 "1 passed, 0 failed, 0 skipped" -- "$pc" roundtrip "$good"
expect 1 "1 passed, 1 failed, 0 skipped" -- "$pc" roundtrip "$good" "$tmp/empty.onnx"
printf 'empty.onnx known to be empty\n' >"$tmp/skip.txt"
expect 0 "1 passed, 0 failed, 1 skipped" -- "$pc" roundtrip --skip-list "$tmp/skip.txt" "$good" "$tmp/empty.onnx"
printf 'no-reason-entry\n' >"$tmp/badskip.txt"
expect 3 "has no reason" -- "$pc" roundtrip --skip-list "$tmp/badskip.txt" "$good"
expect 2 "not a directory" -- "$pc" roundtrip --save-dir "$tmp/nodir" "$good"
# a failed save leaves nothing behind: saving into a missing folder fails and creates no temp file
# conformance: usage errors name the bad argument (exit 2)
abs=$data/node/test_abs
mkdir -p "$tmp/nocases"
expect 2 "missing DIR" -- "$pc" conformance
expect 2 "unknown option '--bogus'" -- "$pc" conformance --bogus "$abs"
expect 2 "--filter needs an argument" -- "$pc" conformance "$abs" --filter
expect 2 "bad --filter regex '\(unclosed'" -- "$pc" conformance --filter '(unclosed' "$abs"
expect 2 "unknown engine 'ort' \(available: reference, runtime\)" -- "$pc" conformance --executor ort "$abs"
expect 2 "unknown engine 'ort' \(available: reference, runtime\)" -- "$pc" conformance --engine ort "$abs"
expect 2 "--engine runtime and --executor reference disagree" -- "$pc" conformance --engine runtime --executor reference "$abs"
expect 2 "bad --timeout 'soon'" -- "$pc" conformance --timeout soon "$abs"
expect 2 "bad --timeout '0'" -- "$pc" conformance --timeout 0 "$abs"
expect 2 "cannot read DIR '$tmp/nowhere'" -- "$pc" conformance "$tmp/nowhere"
expect 2 "DIR '$good' is not a directory" -- "$pc" conformance "$good"
expect 2 "no test cases in '$tmp/nocases'" -- "$pc" conformance "$tmp/nocases"
expect 2 "case node/test_abs found twice" -- "$pc" conformance "$abs" "$abs"
expect 3 "cannot open --expect file $tmp/none.txt" -- "$pc" conformance --expect "$tmp/none.txt" "$abs"
printf 'node/test_abs maybe\n' >"$tmp/badexpect.txt"
expect 3 "badexpect.txt:1: expected 'case_name outcome'" -- "$pc" conformance --expect "$tmp/badexpect.txt" "$abs"
printf 'node/test_abs passed\n# again\nnode/test_abs passed\n' >"$tmp/dupexpect.txt"
expect 3 "dupexpect.txt:3: case node/test_abs is listed again \(first on line 1\)" -- \
    "$pc" conformance --expect "$tmp/dupexpect.txt" "$abs"
# errata: one entry per outcome of a case; the same outcome twice is an error. Exact bounds make Sigmoid differ:
# the differs entry applies, the run-error one is idle
printf 'node/test_sigmoid differs a\nnode/test_sigmoid run-error b\n' >"$tmp/errata2.txt"
expect 0 "SKIP node/test_sigmoid: erratum: data erratum \(a\)" -- \
    "$pc" conformance --atol 0 --rtol 0 --errata "$tmp/errata2.txt" "$data/node/test_sigmoid"
printf 'node/test_sigmoid differs a\nnode/test_sigmoid differs b\n' >"$tmp/errata3.txt"
expect 3 "errata3.txt:2: case node/test_sigmoid is listed again" -- \
    "$pc" conformance --errata "$tmp/errata3.txt" "$data/node/test_sigmoid"
expect 3 "cannot write --json file $tmp/nodir/r.json" -- "$pc" conformance --json "$tmp/nodir/r.json" "$abs"
# tolerances: --atol/--rtol for every case, --tolerances per op (the loosest bound of a case's ops wins); the
# reference's Sigmoid is a few ulps off the recorded float outputs, so exact bounds fail it and the backend
# defaults, given for Sigmoid alone, pass it while Tanh stays exact
sig=$data/node/test_sigmoid tanh=$data/node/test_tanh
expect 2 "bad --atol '-1': expected a number >= 0" -- "$pc" conformance --atol -1 "$sig"
expect 2 "bad --rtol 'x'" -- "$pc" conformance --rtol x "$sig"
expect 1 "FAIL node/test_sigmoid: differs: .* > tolerance 0;" -- "$pc" conformance --atol 0 --rtol 0 "$sig"
printf 'Sigmoid 1e-7 1e-3  # the backend defaults\n' >"$tmp/tol.txt"
expect 1 "FAIL node/test_tanh: differs.* 1 passed, 1 failed" -- \
    "$pc" conformance --quiet --atol 0 --rtol 0 --tolerances "$tmp/tol.txt" "$sig" "$tanh"
expect 0 "1 passed, 0 failed" -- "$pc" conformance --quiet --atol 0 --rtol 0 --tolerances "$tmp/tol.txt" "$sig"
expect 3 "cannot open --tolerances file $tmp/none.txt" -- "$pc" conformance --tolerances "$tmp/none.txt" "$sig"
printf 'Sigmoid 1e-7\n' >"$tmp/badtol.txt"
expect 3 "badtol.txt:1: expected 'op atol rtol'" -- "$pc" conformance --tolerances "$tmp/badtol.txt" "$sig"
printf 'Sigmoid 0 0\nSigmoid 1 1\n' >"$tmp/duptol.txt"
expect 3 "duptol.txt:2: op 'Sigmoid' is given twice" -- "$pc" conformance --tolerances "$tmp/duptol.txt" "$sig"
# every data set of a case is run and each failing one reported (the first no longer hides the rest): sets 0 and
# 2 of three have a changed expected value, set 1 is intact
mkdir -p "$tmp/multi"
cp -r "$data/node/test_abs" "$tmp/multi/"
for k in 1 2; do cp -r "$tmp/multi/test_abs/test_data_set_0" "$tmp/multi/test_abs/test_data_set_$k"; done
for k in 0 2; do
    python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-2] ^= 0x40; open(p, "wb").write(b)' \
        "$tmp/multi/test_abs/test_data_set_$k/output_0.pb"
done
expect 1 "FAIL multi/test_abs: differs: test_data_set_0: output 0 'y' .*; test_data_set_2: output 0 'y' " -- \
    "$pc" conformance "$tmp/multi"
# the per-op table blames the op that made a failing output: a case with Abs and Neg outputs, Neg's expected
# value changed, counts a failure for Neg and none for Abs (not-blamed)
if /usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null; then
    /usr/bin/python3 - "$tmp/blame/test_abs_neg" <<'EOF'
import os, sys
import numpy as np
from onnx import helper, numpy_helper, TensorProto, save
d = sys.argv[1]
os.makedirs(d + "/test_data_set_0")
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in ("a", "b")]
nodes = [helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])]
save(helper.make_model(helper.make_graph(nodes, "g", [x], outs), opset_imports=[helper.make_opsetid("", 13)]),
     d + "/model.onnx")
xv = np.array([-1, 2, -3, 4], np.float32)
for name, v in (("input_0", xv), ("output_0", np.abs(xv)), ("output_1", -xv + [0, 0, 0, 1])):
    open("%s/test_data_set_0/%s.pb" % (d, name), "wb").write(numpy_helper.from_array(np.asarray(v, np.float32)).SerializeToString())
EOF
    expect 1 "FAIL blame/test_abs_neg: differs: output 1 'b'.* Abs +1 +0 +0 +1 +0 +Neg +1 +0 +1 +0 +0 " -- \
        "$pc" conformance "$tmp/blame"
fi
# conformance: a corrupt output_0.pb is that case's load-error; the run goes on with the next case
mkdir -p "$tmp/cases"
cp -r "$data/node/test_abs" "$data/node/test_add" "$tmp/cases/"
head -c 20 "$data/node/test_abs/test_data_set_0/output_0.pb" >"$tmp/cases/test_abs/test_data_set_0/output_0.pb"
expect 1 "FAIL cases/test_abs: load-error: \[truncated\] .*test_abs/test_data_set_0/output_0.pb.*conformance: 2 cases" -- \
    "$pc" conformance "$tmp/cases"
expect 0 "conformance: 1 cases.*1 passed, 0 failed, 0 skipped" -- "$pc" conformance --filter '/test_add$' "$tmp/cases"
# outputs: JSON and JUnit parse, the expectation file round-trips, and a failed write leaves no temp file
expect 1 "1 passed, 1 failed" -- "$pc" conformance --quiet --json "$tmp/r.json" --junit "$tmp/r.xml" \
    --write-expect "$tmp/exp.txt" "$tmp/cases"
expect 0 "ok" -- python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["summary"]["load-error"] == 1; print("ok")' "$tmp/r.json"
expect 0 "ok" -- python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert len(d.getElementsByTagName("testcase")) == 2; assert len(d.getElementsByTagName("error")) == 1; print("ok")' "$tmp/r.xml"
expect 0 "expectations: all 2 outcomes as listed" -- "$pc" conformance --quiet --expect "$tmp/exp.txt" "$tmp/cases"
sed -i 's/^cases\/test_abs load-error/cases\/test_abs passed/' "$tmp/exp.txt"
expect 1 "EXPECTATION cases/test_abs: expected passed, got load-error" -- \
    "$pc" conformance --quiet --expect "$tmp/exp.txt" "$tmp/cases"
mkdir -p "$tmp/adir"
expect 3 "cannot write --json file $tmp/adir" -- "$pc" conformance --quiet --json "$tmp/adir" "$tmp/cases"
expect 0 "^no temp file$" -- bash -c 'ls "$1".tmp.* 2>/dev/null || echo "no temp file"' _ "$tmp/adir"
# conformance: a result that differs names the output, the element and both values
cp -r "$data/node/test_abs" "$tmp/cases2"
python3 -c 'import struct, sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); v = struct.unpack("<f", b[-4:])[0]; b[-4:] = struct.pack("<f", v + 0.5); open(p, "wb").write(b)' \
    "$tmp/cases2/test_data_set_0/output_0.pb"
expect 1 "FAIL tmp[^/]*/cases2: differs: output 0 'y' index 59 \[2,3,4\] expected [0-9.]+ got [0-9.]+ \(abs error 0.5" -- \
    "$pc" conformance "$tmp/cases2"
# conformance --errata: a listed case ending with the listed outcome is a skip with the reason; another outcome
# stands; malformed files are exit 3 with the line at fault
expect 3 "cannot open --errata file $tmp/none.txt" -- "$pc" conformance --errata "$tmp/none.txt" "$abs"
printf 'cases2 differs\n' >"$tmp/noreason.txt"
expect 3 "noreason.txt:1: expected 'case_name outcome reason'" -- "$pc" conformance --errata "$tmp/noreason.txt" "$abs"
printf 'cases2 passed the data is fine\n' >"$tmp/passerrata.txt"
expect 3 "passerrata.txt:1: expected 'case_name outcome reason'" -- \
    "$pc" conformance --errata "$tmp/passerrata.txt" "$abs"
errname=$(basename "$(dirname "$tmp/cases2")")/cases2
printf '%s differs recorded output edited by this test\n' "$errname" >"$tmp/errata.txt"
expect 0 "SKIP $errname: erratum: data erratum \(recorded output edited by this test\): output 0 'y'.*0 passed, 0 failed, 1 skipped" -- \
    "$pc" conformance --errata "$tmp/errata.txt" "$tmp/cases2"
printf '%s shape wrong shape on purpose\n' "$errname" >"$tmp/errata2.txt"
expect 1 "FAIL $errname: differs: .*0 passed, 1 failed, 0 skipped" -- \
    "$pc" conformance --errata "$tmp/errata2.txt" "$tmp/cases2"
# conformance --optimize: bad level, --ep without --optimize, unknown EP (usage), bad EP file (bad input), a good run
expect 2 "bad --optimize '7': expected a level from 0 to 3" -- "$pc" conformance --optimize 7 "$abs"
expect 2 "--ep needs --optimize" -- "$pc" conformance --ep cpu "$abs"
expect 2 "--ep: EP list 'gpu': entry 1: unknown EP 'gpu'" -- "$pc" conformance --optimize 3 --ep gpu "$abs"
printf 'ep x bogus=1\n' >"$tmp/bad.ep"
expect 3 "--ep-file: .*bad.ep:1:6: unknown field 'bogus'" -- "$pc" conformance --optimize 3 --ep-file "$tmp/bad.ep" "$abs"
expect 0 "1 passed, 0 failed, 0 skipped" -- "$pc" conformance --optimize 3 --ep nhwc,cpu "$data/node/test_conv_with_strides_padding"
# conformance: data sets run in numeric order and a failure names its set; misnumbered files are a load-error
mkdir -p "$tmp/sets"
cp -r "$data/node/test_abs" "$tmp/sets/threesets"
cp -r "$tmp/sets/threesets/test_data_set_0" "$tmp/sets/threesets/test_data_set_10"
cp "$tmp/cases2/test_data_set_0/output_0.pb" "$tmp/sets/threesets/test_data_set_10/output_0.pb"
cp -r "$tmp/sets/threesets/test_data_set_10" "$tmp/sets/threesets/test_data_set_2" # 2 before 10, not after
cp -r "$data/node/test_abs" "$tmp/sets/gap"
mv "$tmp/sets/gap/test_data_set_0/input_0.pb" "$tmp/sets/gap/test_data_set_0/input_1.pb"
expect 1 "FAIL sets/gap: load-error: .*input_1.pb without input_0.pb.*FAIL sets/threesets: differs: test_data_set_2: output 0 'y' index 59" -- \
    "$pc" conformance "$tmp/sets"
# conformance: unsupported is a skip, and a failure only with --strict (Bernoulli is random: the reference declines it)
expect 0 "SKIP node/test_bernoulli: unsupported: .*1 passed, 0 failed, 1 skipped" -- \
    "$pc" conformance "$abs" "$data/node/test_bernoulli"
expect 1 "1 passed, 0 failed, 1 skipped" -- "$pc" conformance --strict "$abs" "$data/node/test_bernoulli"
expect 0 "^conformance: 2 cases.*1 passed, 0 failed, 1 skipped$" -- \
    "$pc" conformance --quiet "$abs" "$data/node/test_bernoulli"
# conformance: inputs are matched to graph inputs by the names in the files (x - y with the files swapped)
cp -r "$data/node/test_sub" "$tmp/swapped"
mv "$tmp/swapped/test_data_set_0/input_0.pb" "$tmp/swapped/test_data_set_0/x.pb"
mv "$tmp/swapped/test_data_set_0/input_1.pb" "$tmp/swapped/test_data_set_0/input_0.pb"
mv "$tmp/swapped/test_data_set_0/x.pb" "$tmp/swapped/test_data_set_0/input_1.pb"
expect 0 "1 passed, 0 failed, 0 skipped" -- "$pc" conformance "$tmp/swapped"
# convert: usage errors (exit 2), unwritable OUT and models the ORT format cannot hold (exit 3, nothing left
# behind), and a round trip ONNX -> ORT -> ONNX whose ORT bytes carry the identifier and whose model info agrees
expect 2 "convert: usage error: missing MODEL" -- "$pc" convert
expect 2 "convert: -o OUT is required" -- "$pc" convert "$good"
expect 2 "convert: --format 'xml': onnx or ort" -- "$pc" convert "$good" -o "$tmp/c.ort" --format xml
expect 2 "convert: usage error: unknown option '--bogus'" -- "$pc" convert "$good" -o "$tmp/c.ort" --bogus
expect 3 "convert: cannot write -o file $tmp/nodir/c.ort: folder $tmp/nodir" -- "$pc" convert "$good" -o "$tmp/nodir/c.ort"
expect 3 "convert: cannot write -o file $tmp: it is a directory" -- "$pc" convert "$good" -o "$tmp"
expect 3 "\[unsupported\]: $tmp/hs.ort: ORT format: node 'HardSwish' \(HardSwish\)" -- \
    "$pc" convert "$data/node/test_hardswish/model.onnx" -o "$tmp/hs.ort"
expect 3 "\[unsupported\]: $tmp/ann.ort: .*node 'mm' has metadata \('layer_ann'\)" -- "$pc" convert "$ann" -o "$tmp/ann.ort"
expect 0 "^no ORT leftovers$" -- bash -c 'ls "$1"/hs.ort* "$1"/ann.ort* "$1"/c.ort* 2>/dev/null || echo "no ORT leftovers"' _ "$tmp"
check "convert ONNX to ORT" "$pc" convert "$good" -o "$tmp/abs.ort"
expect 0 "^ORTM$" -- bash -c 'head -c 8 "$1" | tail -c 4' _ "$tmp/abs.ort"
check "convert ORT to ONNX" "$pc" convert "$tmp/abs.ort" -o "$tmp/abs.bin"
expect 0 "ops \(1 kinds\): +1 +Abs" -- "$pc" info "$tmp/abs.bin"
check "convert --format ort" "$pc" convert "$tmp/abs.bin" -o "$tmp/abs2.bin" --format ort
expect 0 "^same$" -- bash -c 'cmp -s "$1" "$2" && echo same' _ "$tmp/abs.ort" "$tmp/abs2.bin"
check "convert in place" "$pc" convert "$tmp/abs2.bin" -o "$tmp/abs2.bin" --format onnx
expect 0 "ops \(1 kinds\): +1 +Abs" -- "$pc" info "$tmp/abs2.bin"
# a node whose subgraphs read more enclosing values than the saver indexes: refused as over budget, not
# truncated (an If whose branches Concat 4,097 graph inputs)
if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
    /usr/bin/python3 - "$tmp/wide_if.onnx" <<'EOF'
import sys
import onnx
from onnx import TensorProto, helper as h
n = 4097
names = ["x%d" % i for i in range(n)]
def branch(tag):
    cat = h.make_node("Concat", names, [tag + "_y"], axis=0)
    return h.make_graph([cat], tag, [], [h.make_tensor_value_info(tag + "_y", TensorProto.FLOAT, [n])])
node = h.make_node("If", ["c"], ["y"], then_branch=branch("then"), else_branch=branch("else"))
inputs = [h.make_tensor_value_info("c", TensorProto.BOOL, [])] + \
    [h.make_tensor_value_info(x, TensorProto.FLOAT, [1]) for x in names]
g = h.make_graph([node], "wide_if", inputs, [h.make_tensor_value_info("y", TensorProto.FLOAT, [n])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1])
EOF
    expect 3 "\[over-budget\]: $tmp/wide.ort: ORT format: node '.*': its subgraphs read more than 4096 enclosing values" -- \
        "$pc" convert "$tmp/wide_if.onnx" -o "$tmp/wide.ort"
    expect 0 "^no file$" -- bash -c 'ls "$1"/wide.ort* 2>/dev/null || echo "no file"' _ "$tmp"
    # an element type the ORT format's TensorDataType lacks (INT2) is refused, not written out of range
    /usr/bin/python3 - "$tmp/int2.onnx" <<'EOF'
import sys
import onnx
from onnx import helper as h
g = h.make_graph([], "int2_passthrough", [h.make_tensor_value_info("x", 26, [2])],
                 [h.make_tensor_value_info("x", 26, [2])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1])
EOF
    expect 3 "\[unsupported\]: $tmp/int2.ort: ORT format: value 'x' has element type int2, beyond the format's types" -- \
        "$pc" convert "$tmp/int2.onnx" -o "$tmp/int2.ort"
else
    echo "SKIP: the over-budget convert check needs python3-onnx (ci/deps installs it)"
fi
# roundtrip finds .ort files too, and an ORT-format model must also round-trip through the ORT saver (the
# fuzz find whose TypeInfo has no value loads, saves as ONNX, but cannot be written back as ORT)
repo=$(dirname "$0")/../..
expect 0 "roundtrip: 3 models.*3 passed, 0 failed" -- "$pc" roundtrip --quiet "$repo/tests/ort/data"
# an ORT save types every value by shape inference; types that break an op are refused, not written into a
# file that would not load back (the fuzz find crash-inferred-type-error: an Add of an inferred string)
expect 3 "\[unsupported\]: $tmp/inferred.ort: ORT format: the types shape inference gives break the model's ops: .*'Add'.*tensor\(string\)" -- \
    "$pc" convert "$repo/corpus/ort/crash-inferred-type-error" -o "$tmp/inferred.ort"
expect 1 "FAIL .*crash-typeinfo-none \[unsupported\]: saving as ORT: .*value 'cond' has no type" -- \
    "$pc" roundtrip "$repo/corpus/ort/crash-typeinfo-none"
# one parser for every subcommand: an option given twice is a usage error naming it, in every command (a silently
# ignored first value hides mistakes in scripts); only the list options (suite --family/--property) repeat
expect 2 "info: usage error: --json given twice" -- "$pc" info --json --json "$good"
expect 2 "roundtrip: usage error: --quiet given twice" -- "$pc" roundtrip --quiet --quiet "$good"
expect 2 "roundtrip: usage error: --json given twice" -- "$pc" roundtrip --json "$tmp/a.json" --json "$tmp/b.json" "$good"
expect 2 "conformance: usage error: --filter given twice" -- "$pc" conformance --filter a --filter b "$abs"
expect 2 "conformance: usage error: --strict given twice" -- "$pc" conformance --strict --strict "$abs"
expect 2 "optimize: usage error: --level given twice" -- "$pc" optimize "$good" -o "$tmp/o.onnx" --level 1 --level 2
expect 2 "partition: usage error: --json given twice" -- "$pc" partition --json --json "$good"
expect 2 "suite: usage error: --cases given twice" -- "$pc" suite --cases 1 --cases 2
expect 2 "suite: usage error: --quiet given twice" -- "$pc" suite --quiet --quiet
expect 2 "shrink: usage error: --out given twice" -- "$pc" shrink "$good" --property numerics --out "$tmp/a" --out "$tmp/b"
expect 0 "families: float nhwc qdq" -- "$pc" suite --cases 3 --no-shrink --family float --family nhwc,qdq
expect 2 "suite: usage error: --family needs an argument" -- "$pc" suite --family ""
expect 0 "^no output files$" -- bash -c 'ls "$1"/a.json "$1"/b.json "$1"/o.onnx "$1"/a "$1"/b 2>/dev/null || echo "no output files"' _ "$tmp"
finish
