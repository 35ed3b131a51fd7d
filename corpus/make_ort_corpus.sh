#!/usr/bin/env bash
# make_ort_corpus.sh — regenerate the ORT-format seed corpus in corpus/ort/ (see corpus/README.md).
#
#   bash corpus/make_ort_corpus.sh            # from the repository root or anywhere
#   PC_TESTDATA_DIR=/path/to/data PC_ORT_NODE_MODULES=/path/to/node_modules bash corpus/make_ort_corpus.sh
#
# Every seed is a file ONNX Runtime 1.30 wrote (tests/ort/ort_convert.js: session option optimizedModelFilePath
# with session.save_model_format = ORT) from a small ONNX backend test model: <dir>_<case>.ort at optimization
# level 'disabled' and <dir>_<case>.basic.ort at level 'basic' (runtime optimization records, ORT's rewrites),
# the latter only when its size differs from the former's (ORT changed something). A case ORT refuses is
# skipped with a note; a file of 20 KiB or more is an error (pick another case). Only *.ort files are deleted
# and rewritten: crash-* and other fuzzer finds in corpus/ort/ are left alone.
# Not byte-deterministic: ONNX Runtime 1.30 writes the same model with its tables in a different order from one
# run to the next (three conversions of test_loop11 gave three files of one size), so a rerun rewrites most
# files with equivalent content. Commit a rerun only when the case list changes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/ort"
testdata="${PC_TESTDATA_DIR:-/usr/share/libonnx-testdata/data}"
node_modules="${PC_ORT_NODE_MODULES:-$HOME/.cache/passcheck/ort/node_modules}"
max_bytes=20480

die() { echo "make_ort_corpus.sh: $*" >&2; exit 1; }
[[ -d "$testdata/node" ]] || die "ONNX backend test data not found under '$testdata' (set PC_TESTDATA_DIR)"
[[ -d "$node_modules/onnxruntime-node" ]] ||
    die "onnxruntime-node not found in '$node_modules' (set PC_ORT_NODE_MODULES; tests/ort/ort_convert.js)"
command -v node >/dev/null 2>&1 || die "node not found"

# Chosen for the loader's paths, not for op coverage: Loop/If/Scan/SequenceMap subgraphs (implicit inputs,
# nested graphs), attributes of every kind ORT writes (float, int, string, tensor, graph, floats, ints,
# strings), initializers (Constant nodes become initializers; simple/ models), sequence types, string tensors,
# 16-bit floats, optional inputs left empty (RNNs, Clip), multi-node graphs that 'basic' rewrites. Every case
# here is one ORT 1.30 accepts (it refuses bfloat16 Cast, optional types, StringNormalizer without locales, the
# training domain); the backend data has no map types and no float8 models, so the corpus has neither.
# Keep the list sorted.
cases=(
    node/test_add
    node/test_batchnorm_epsilon
    node/test_cast_FLOAT_to_FLOAT16
    node/test_cast_FLOAT_to_STRING
    node/test_castlike_FLOAT_to_STRING_expanded
    node/test_clip_default_inbounds
    node/test_constant
    node/test_constantofshape_float_ones
    node/test_conv_with_strides_padding
    node/test_einsum_batch_diagonal
    node/test_gru_defaults
    node/test_identity_sequence
    node/test_if
    node/test_if_seq
    node/test_layer_normalization_2d_axis0_expanded
    node/test_loop11
    node/test_loop13_seq
    node/test_lstm_defaults
    node/test_maxpool_2d_default
    node/test_onehot_with_axis
    node/test_qlinearconv
    node/test_resize_upsample_scales_linear
    node/test_rnn_seq_length
    node/test_scan9_sum
    node/test_scan_sum
    node/test_sequence_insert_at_back
    node/test_sequence_map_add_1_sequence_1_tensor_expanded
    node/test_sequence_map_add_2_sequences
    node/test_sequence_map_identity_1_sequence_expanded
    node/test_split_variable_parts_1d
    node/test_tfidfvectorizer_tf_uniandbigrams_skip5
    node/test_top_k
    node/test_unique_sorted_with_axis
    simple/test_expand_shape_model1
    simple/test_sequence_model1
    simple/test_single_relu_model
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
: >"$work/manifest"
for c in "${cases[@]}"; do
    model="$testdata/$c/model.onnx"
    [[ -f "$model" ]] || { echo "make_ort_corpus.sh: $c: not in the test data, skipped" >&2; continue; }
    printf '%s\t%s\n' "$model" "$work/${c/\//_}.ort" >>"$work/manifest"
done
mkdir -p "$work/basic"
sed "s#\t$work/#\t$work/basic/#" "$work/manifest" >"$work/manifest-basic"

node "$root/tests/ort/ort_convert.js" "$node_modules" disabled <"$work/manifest" >"$work/log"
node "$root/tests/ort/ort_convert.js" "$node_modules" basic <"$work/manifest-basic" >>"$work/log"
grep '^refused' "$work/log" | sed 's/^/make_ort_corpus.sh: ORT /' >&2 || true

mkdir -p "$out"
find "$out" -maxdepth 1 -type f -name '*.ort' -delete
n=0
for f in "$work"/*.ort; do
    [[ -e "$f" ]] || continue
    name="$(basename "$f" .ort)"
    (($(stat -c %s "$f") < max_bytes)) || die "$name.ort is $(stat -c %s "$f") bytes (limit $max_bytes)"
    cp "$f" "$out/$name.ort"
    n=$((n + 1))
    b="$work/basic/$name.ort"
    if [[ -f "$b" ]] && (($(stat -c %s "$b") != $(stat -c %s "$f"))); then
        (($(stat -c %s "$b") < max_bytes)) || die "$name.basic.ort is $(stat -c %s "$b") bytes (limit $max_bytes)"
        cp "$b" "$out/$name.basic.ort"
        n=$((n + 1))
    fi
done
echo "make_ort_corpus.sh: wrote $n files to $out ($(du -sk "$out" | cut -f1) KiB)"
