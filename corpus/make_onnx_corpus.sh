#!/usr/bin/env bash
# make_onnx_corpus.sh — regenerate the ONNX seed corpus in corpus/onnx/ (see corpus/README.md).
#
#   bash corpus/make_onnx_corpus.sh            # from the repository root or anywhere
#   PC_TESTDATA_DIR=/path/to/data bash corpus/make_onnx_corpus.sh
#
# Deterministic: the same inputs give byte-identical files. Two groups of seeds:
#   node_*.onnx, simple_*.onnx  a fixed list of small models copied from the ONNX backend test data
#                               (Debian package libonnx-testdata, /usr/share/libonnx-testdata/data)
#   edge_*.onnx                 hand-made models written by the embedded python3 below (standard library only:
#                               a tiny protobuf writer, no `onnx` package), valid ones and malformed ones
# Only files with those three prefixes are deleted and rewritten; crash-<sha1> files (fuzzer finds, replayed by
# ctest) and anything else in corpus/onnx/ are left alone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/onnx"
testdata="${PC_TESTDATA_DIR:-/usr/share/libonnx-testdata/data}"
python="${PYTHON3:-/usr/bin/python3}"

die() { echo "make_onnx_corpus.sh: $*" >&2; exit 1; }
[[ -d "$testdata/node" && -d "$testdata/simple" ]] ||
    die "ONNX backend test data not found under '$testdata' (install libonnx-testdata or set PC_TESTDATA_DIR)"
[[ -x "$python" ]] || die "python3 not found at '$python' (set PYTHON3)"

mkdir -p "$out"
find "$out" -maxdepth 1 -type f \( -name 'node_*.onnx' -o -name 'simple_*.onnx' -o -name 'edge_*.onnx' \) -delete

# (a) Backend test models: <dir>/<case> -> <dir>_<case>.onnx. Chosen for variety (not for coverage of every op):
# elementwise/broadcast, conv/pool/norm, RNNs, quantized ops, casts to 16-bit floats and strings, string ops,
# optional/sequence types, If/Loop/Scan/SequenceMap subgraphs (incl. the large *_expanded function bodies),
# the training domain, and the simple/ models with initializers. Keep the list sorted; each file is < 8 KiB.
testdata_cases=(
    node/test_abs
    node/test_adagrad
    node/test_add_bcast
    node/test_argmax_default_axis_example
    node/test_averagepool_2d_default
    node/test_batchnorm_epsilon
    node/test_bernoulli_seed
    node/test_bitshift_left_uint8
    node/test_cast_FLOAT_to_BFLOAT16
    node/test_cast_FLOAT_to_FLOAT16
    node/test_cast_FLOAT_to_STRING
    node/test_cast_STRING_to_FLOAT
    node/test_constant
    node/test_constant_pad
    node/test_constantofshape_int_zeros
    node/test_conv_with_strides_padding
    node/test_convtranspose_autopad_same
    node/test_dequantizelinear
    node/test_dft
    node/test_dropout_default_mask
    node/test_einsum_batch_diagonal
    node/test_gather_0
    node/test_gemm_default_no_bias
    node/test_identity_opt
    node/test_identity_sequence
    node/test_if
    node/test_if_opt
    node/test_if_seq
    node/test_layer_normalization_2d_axis0
    node/test_loop11
    node/test_loop13_seq
    node/test_loop16_seq_none
    node/test_lstm_defaults
    node/test_matmulinteger
    node/test_maxpool_2d_pads
    node/test_mvn_expanded
    node/test_nonmaxsuppression_center_point_box_format
    node/test_onehot_with_axis
    node/test_optional_get_element
    node/test_optional_has_element_empty
    node/test_qlinearconv
    node/test_range_float_type_positive_delta_expanded
    node/test_reduce_sum_default_axes_keepdims_example
    node/test_reshape_extended_dims
    node/test_resize_downsample_scales_linear
    node/test_rnn_seq_length
    node/test_scan9_sum
    node/test_scan_sum
    node/test_sequence_insert_at_back
    node/test_sequence_map_add_2_sequences
    node/test_sequence_map_identity_1_sequence_1_tensor_expanded
    node/test_shape_start_1
    node/test_slice
    node/test_softmax_axis_0
    node/test_stft
    node/test_strnormalizer_export_monday_casesensintive_lower
    node/test_tfidfvectorizer_tf_only_bigrams_skip0
    node/test_unique_sorted_with_axis
    simple/test_expand_shape_model1
    simple/test_gradient_of_add
    simple/test_sequence_model1
    simple/test_sequence_model3
    simple/test_sequence_model7
    simple/test_strnorm_model_monday_empty_output
)
for case in "${testdata_cases[@]}"; do
    src="$testdata/$case/model.onnx"
    [[ -f "$src" ]] || die "missing test model '$src'"
    size=$(stat -c %s "$src")
    ((size <= 4096)) || die "'$src' has $size bytes; the corpus takes test models up to 4 KiB"
    cp "$src" "$out/${case%%/*}_${case#*/}.onnx"
    chmod 0644 "$out/${case%%/*}_${case#*/}.onnx"
done

# (b) Hand-made seeds.
"$python" - "$out" <<'PYTHON'
import os
import struct
import sys

out_dir = sys.argv[1]
written = []


def emit(name, data):
    assert name.startswith("edge_") and name.endswith(".onnx"), name
    assert len(data) <= 8192, (name, len(data))
    assert name not in written, name
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)
    os.chmod(os.path.join(out_dir, name), 0o644)
    written.append(name)


# ---- protobuf wire writer --------------------------------------------------------------------------------------
def varint(n):
    if n < 0:
        n += 1 << 64  # int64 two's complement: 10 bytes
    b = bytearray()
    while True:
        x = n & 0x7F
        n >>= 7
        if n:
            b.append(x | 0x80)
        else:
            b.append(x)
            return bytes(b)


def b_(s):
    return s.encode() if isinstance(s, str) else bytes(s)


def key(field, wire_type):
    return varint((field << 3) | wire_type)


def vi(field, n):  # varint field
    return key(field, 0) + varint(n)


def ld(field, data):  # length-delimited field
    data = b_(data)
    return key(field, 2) + varint(len(data)) + data


def f32(field, x):
    return key(field, 5) + struct.pack("<f", x)


def cat(*parts):
    return b"".join(b_(p) for p in parts)


# ---- ONNX messages (field numbers: onnx.proto) ------------------------------------------------------------------
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, DOUBLE, UINT32, UINT64 = range(1, 14)
COMPLEX64, COMPLEX128, BFLOAT16, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, UINT4, INT4 = range(14, 23)
FLOAT4E2M1, F8E8M0, UINT2, INT2 = range(23, 27)


def opset(domain, version):
    return cat(ld(1, domain) if domain is not None else b"", vi(2, version))


def model(graph, ir=8, opsets=(("", 17),), extra=b"", producer="passcheck-corpus"):
    parts = [vi(1, ir), ld(2, producer)]
    if graph is not None:
        parts.append(ld(7, graph))
    parts += [ld(8, opset(d, v)) for d, v in opsets]
    parts.append(extra)
    return cat(*parts)


def dim(d):
    if d is None:
        return b""  # unknown dimension
    if isinstance(d, str):
        return ld(2, d)
    return vi(1, d)


def shape(dims):
    return cat(*[ld(1, dim(d)) for d in dims])


def ttype(elem, dims=None):  # TypeProto{tensor_type}
    body = vi(1, elem)
    if dims is not None:
        body += ld(2, shape(dims))
    return ld(1, body)


def seq_type(inner):
    return ld(4, ld(1, inner))


def opt_type(inner):
    return ld(9, ld(1, inner))


def map_type(key_elem, value):
    return ld(5, cat(vi(1, key_elem), ld(2, value)))


def value_info(name, tp=None, extra=b""):
    return cat(ld(1, name), ld(2, tp) if tp is not None else b"", extra)


def tensor(name, dtype, dims, raw=None, floats=None, int32s=None, strings=None, int64s=None, doubles=None,
           uint64s=None, extra=b"", packed_dims=False):
    parts = []
    if packed_dims:
        parts.append(ld(1, cat(*[varint(d) for d in dims])))
    else:
        parts += [vi(1, d) for d in dims]
    if dtype is not None:
        parts.append(vi(2, dtype))
    if floats is not None:
        parts.append(ld(4, cat(*[struct.pack("<f", x) for x in floats])))
    if int32s is not None:
        parts.append(ld(5, cat(*[varint(x) for x in int32s])))
    if strings is not None:
        parts += [ld(6, s) for s in strings]
    if int64s is not None:
        parts.append(ld(7, cat(*[varint(x) for x in int64s])))
    if name is not None:
        parts.append(ld(8, name))
    if raw is not None:
        parts.append(ld(9, raw))
    if doubles is not None:
        parts.append(ld(10, cat(*[struct.pack("<d", x) for x in doubles])))
    if uint64s is not None:
        parts.append(ld(11, cat(*[varint(x) for x in uint64s])))
    parts.append(extra)
    return cat(*parts)


def external(entries, location_enum=1):
    return cat(*[ld(13, cat(ld(1, k), ld(2, v))) for k, v in entries], vi(14, location_enum))


def kv(k, v):
    return cat(ld(1, k), ld(2, v))


def node(op, inputs, outputs, name="", attrs=(), domain=None, extra=b""):
    parts = [ld(1, i) for i in inputs] + [ld(2, o) for o in outputs]
    if name:
        parts.append(ld(3, name))
    if op is not None:
        parts.append(ld(4, op))
    parts += [ld(5, a) for a in attrs]
    if domain is not None:
        parts.append(ld(7, domain))
    parts.append(extra)
    return cat(*parts)


# AttributeProto: name=1 f=2 i=3 s=4 t=5 g=6 floats=7 ints=8 strings=9 tensors=10 graphs=11 tp=14
# type_protos=15 type=20
def a_f(n, x):
    return cat(ld(1, n), f32(2, x), vi(20, 1))


def a_i(n, x):
    return cat(ld(1, n), vi(3, x), vi(20, 2))


def a_s(n, s):
    return cat(ld(1, n), ld(4, s), vi(20, 3))


def a_t(n, t):
    return cat(ld(1, n), ld(5, t), vi(20, 4))


def a_g(n, g):
    return cat(ld(1, n), ld(6, g), vi(20, 5))


def a_floats(n, xs, packed=False):
    body = ld(7, cat(*[struct.pack("<f", x) for x in xs])) if packed else cat(*[f32(7, x) for x in xs])
    return cat(ld(1, n), body, vi(20, 6))


def a_ints(n, xs, packed=False):
    body = ld(8, cat(*[varint(x) for x in xs])) if packed else cat(*[vi(8, x) for x in xs])
    return cat(ld(1, n), body, vi(20, 7))


def a_strings(n, xs):
    return cat(ld(1, n), *[ld(9, x) for x in xs], vi(20, 8))


def a_tensors(n, ts):
    return cat(ld(1, n), *[ld(10, t) for t in ts], vi(20, 9))


def a_graphs(n, gs):
    return cat(ld(1, n), *[ld(11, g) for g in gs], vi(20, 10))


def a_tp(n, tp):
    return cat(ld(1, n), ld(14, tp), vi(20, 13))


def a_tps(n, tps):
    return cat(ld(1, n), *[ld(15, tp) for tp in tps], vi(20, 14))


def graph(nodes=(), name="g", inputs=(), outputs=(), inits=(), value_infos=(), extra=b""):
    return cat(*[ld(1, n) for n in nodes], ld(2, name), *[ld(5, t) for t in inits], *[ld(11, v) for v in inputs],
               *[ld(12, v) for v in outputs], *[ld(13, v) for v in value_infos], extra)


F22 = ttype(FLOAT, [2, 2])
FSYM = ttype(FLOAT, ["N", 2])
BOOL0 = ttype(BOOL, [])
W22 = tensor("W", FLOAT, [2, 2], raw=struct.pack("<4f", 1, 2, 3, 4))


def add_model(**kw):
    """Y = X + W, W a 2x2 float initializer (raw_data)."""
    g = graph([node("Add", ["X", "W"], ["Y"], name="add")], "add_graph", [value_info("X", F22)],
              [value_info("Y", F22)], [W22])
    return model(g, **kw)


ADD = add_model()

# ==== valid models (accepted: they exercise save -> reload -> equal -> stable bytes) ===========================
emit("edge_valid_add_initializer.onnx", ADD)
emit("edge_valid_empty_graph.onnx", model(graph(name="empty")))
emit("edge_valid_output_is_input.onnx",
     model(graph(name="passthrough", inputs=[value_info("X", FSYM)], outputs=[value_info("X", FSYM)])))
emit("edge_valid_output_is_initializer.onnx",
     model(graph(name="const", outputs=[value_info("W", F22)], inits=[W22])))
emit("edge_valid_unsorted_nodes.onnx", model(graph(
    [node("Relu", ["B"], ["Y"], name="last"), node("Neg", ["A"], ["B"], name="middle"),
     node("Abs", ["X"], ["A"], name="first")],
    "reverse_order", [value_info("X", F22)], [value_info("Y", F22)])))
emit("edge_valid_optional_inputs.onnx", model(graph(
    [node("Clip", ["X", "", "hi"], ["Y"], name="clip_max_only"),
     node("Dropout", ["Y"], ["Z", ""], name="mask_omitted")],
    "omitted_optionals", [value_info("X", F22)], [value_info("Z", F22)],
    [tensor("hi", FLOAT, [], raw=struct.pack("<f", 6.0))])))
emit("edge_valid_two_uses_two_outputs.onnx", model(graph(
    [node("Split", ["X"], ["s0", "s1"], name="split", attrs=[a_i("axis", 0)]),
     node("Mul", ["s0", "s0"], ["sq"], name="square"), node("Concat", ["sq", "s1", "sq"], ["Y"], name="cat",
                                                           attrs=[a_i("axis", 0)])],
    "fanout", [value_info("X", ttype(FLOAT, [4, 2]))],
    [value_info("Y", ttype(FLOAT, [None, 2])), value_info("s1")]), opsets=(("", 13),)))

# Every element type and every typed data field (graph outputs may be initializers directly).
dtype_inits = [
    tensor("f32_raw", FLOAT, [2], raw=struct.pack("<2f", 1.5, -0.0)),
    tensor("f32_float_data", FLOAT, [3], floats=[1.0, float("inf"), float("nan")]),
    tensor("f64_double_data", DOUBLE, [2], doubles=[3.25, -1e300]),
    tensor("i64_int64_data", INT64, [3], int64s=[0, -1, (1 << 63) - 1]),
    tensor("i32_int32_data", INT32, [2], int32s=[-5, 7]),
    tensor("i16_int32_data", INT16, [2], int32s=[-32768, 32767]),
    tensor("i8_int32_data", INT8, [2], int32s=[-128, 127]),
    tensor("u8_raw", UINT8, [3], raw=b"\x00\x7f\xff"),
    tensor("u16_int32_data", UINT16, [1], int32s=[65535]),
    tensor("u32_uint64_data", UINT32, [2], uint64s=[0, 4294967295]),
    tensor("u64_uint64_data", UINT64, [1], uint64s=[(1 << 64) - 1]),
    tensor("bool_int32_data", BOOL, [3], int32s=[0, 1, 5]),
    tensor("f16_raw", FLOAT16, [2], raw=b"\x00\x3c\x00\xc0"),
    tensor("bf16_int32_data", BFLOAT16, [1], int32s=[0x3F80]),
    tensor("c64_float_data", COMPLEX64, [1], floats=[1.0, -1.0]),
    tensor("c128_raw", COMPLEX128, [1], raw=struct.pack("<2d", 0.5, 2.0)),
    tensor("f8e4m3fn_raw", F8E4M3FN, [2], raw=b"\x38\xb8"),
    tensor("f8e5m2_int32_data", F8E5M2, [1], int32s=[0x3C]),
    tensor("u4_raw_odd", UINT4, [3], raw=b"\x21\x03"),
    tensor("i4_raw", INT4, [2, 2], raw=b"\xf1\x7e"),
    tensor("str_string_data", STRING, [3], strings=[b"", b"ascii", b"nul\x00inside\xff"]),
    tensor("scalar_i64", INT64, [], int64s=[42]),
    tensor("empty_f32", FLOAT, [0, 3]),
    tensor("empty_str", STRING, [2, 0]),
]
emit("edge_valid_all_dtypes.onnx", model(graph(
    name="dtypes", outputs=[value_info(t) for t in [
        "f32_raw", "f32_float_data", "f64_double_data", "i64_int64_data", "i32_int32_data", "i16_int32_data",
        "i8_int32_data", "u8_raw", "u16_int32_data", "u32_uint64_data", "u64_uint64_data", "bool_int32_data",
        "f16_raw", "bf16_int32_data", "c64_float_data", "c128_raw", "f8e4m3fn_raw", "f8e5m2_int32_data",
        "u4_raw_odd", "i4_raw", "str_string_data", "scalar_i64", "empty_f32", "empty_str"]],
    inits=dtype_inits), ir=10, opsets=(("", 21),)))
emit("edge_valid_subbyte_ir11.onnx", model(graph(
    name="subbyte", outputs=[value_info("u2"), value_info("i2"), value_info("fp4"), value_info("e8m0")],
    inits=[tensor("u2", UINT2, [5], raw=b"\xe4\x03"), tensor("i2", INT2, [4], raw=b"\x1b"),
           tensor("fp4", FLOAT4E2M1, [3], raw=b"\x21\x07"), tensor("e8m0", F8E8M0, [2], raw=b"\x7f\x80")]),
    ir=11, opsets=(("", 21),)))
emit("edge_valid_packed_dims.onnx", model(graph(
    name="packed", outputs=[value_info("P")],
    inits=[tensor("P", INT32, [1, 2, 1], int32s=[1, 2], packed_dims=True)])))

# Every attribute kind, on ops without schema checks (com.microsoft has no schema table) and on a known op.
sub = graph([node("Identity", ["outer_x"], ["sub_y"], name="sub_id")], "attr_subgraph",
            outputs=[value_info("sub_y", F22)])
all_attrs = [
    a_f("f", 0.25), a_i("i", -7), a_s("s", "text"), a_s("s_bytes", b"\x00\xff\x01"),
    a_t("t", tensor("tval", INT64, [2], int64s=[3, 4])), a_g("g", sub),
    a_floats("floats", [1.0, -2.5]), a_floats("floats_packed", [3.0, 4.0], packed=True),
    a_ints("ints", [1, -1, 1 << 40]), a_ints("ints_packed", [5, 6, 7], packed=True), a_ints("ints_empty", []),
    a_strings("strings", ["a", "", "c"]), a_tensors("tensors", [tensor("ta", FLOAT, [1], floats=[1.0]),
                                                               tensor("tb", STRING, [1], strings=[b"x"])]),
    a_graphs("graphs", [sub, graph(name="empty_subgraph")]), a_tp("tp", seq_type(ttype(FLOAT, ["T"]))),
    a_tps("tps", [ttype(INT64, []), map_type(STRING, ttype(FLOAT))]),
    cat(ld(1, "untyped_int"), vi(3, 9)),  # type UNDEFINED, exactly one value field: inferred (old IR style)
]
emit("edge_valid_all_attribute_kinds.onnx", model(graph(
    [node("AllAttrs", ["outer_x"], ["y"], name="custom", attrs=all_attrs, domain="com.microsoft"),
     node("Conv", ["outer_x", "wconv"], ["z"], name="conv",
          attrs=[a_ints("kernel_shape", [1, 1]), a_ints("pads", [0, 0, 0, 0]), a_ints("strides", [1, 1]),
                 a_s("auto_pad", "NOTSET")])],
    "attrs", [value_info("outer_x", ttype(FLOAT, [1, 1, 2, 2]))], [value_info("y"), value_info("z")],
    [tensor("wconv", FLOAT, [1, 1, 1, 1], floats=[2.0])]), opsets=(("", 17), ("com.microsoft", 1))))

# Types: sequence, map, optional, opaque, sparse tensor, symbolic/unknown dims, denotations, deep but legal nesting.
deep = ttype(FLOAT, ["D"])
for _ in range(25):
    deep = seq_type(deep)
emit("edge_valid_types.onnx", model(graph(
    [node("Identity", ["X"], ["Y"], name="id")], "types",
    [value_info("X", cat(ld(1, cat(vi(1, FLOAT), ld(2, cat(ld(1, cat(vi(1, 3), ld(3, "DATA_BATCH"))),
                                                          ld(1, ld(2, "seq_len")), ld(1, b""))))),
                        ld(6, "TENSOR")))],
    [value_info("Y", ttype(FLOAT, [3, "seq_len", None]))],
    value_infos=[
        value_info("vi_seq", seq_type(ttype(INT64, [None]))),
        value_info("vi_map", map_type(INT64, seq_type(map_type(STRING, ttype(FLOAT))))),
        value_info("vi_opt", opt_type(seq_type(ttype(UINT8, [1])))),
        value_info("vi_opaque", ld(7, cat(ld(1, "com.example"), ld(2, "handle")))),
        value_info("vi_sparse", ld(8, cat(vi(1, FLOAT), ld(2, shape([10, 10]))))),
        value_info("vi_no_type"),
        value_info("vi_empty_type", b""),
        value_info("vi_deep_25", deep),
    ]), ir=9, opsets=(("", 18),)))

# Metadata and doc strings everywhere; opaque top-level fields the IR keeps as bytes.
g_meta = cat(
    ld(1, node("Relu", ["X"], ["Y"], name="relu",
               extra=cat(ld(6, "node doc"), ld(8, "ovl"), ld(9, kv("layer_ann", "layer_3")), ld(9, kv("k", "v")),
                         ld(9, kv("pc_ep", "CPUExecutionProvider"))))),
    ld(2, "meta_graph"),
    ld(5, tensor("unused_w", FLOAT, [1], floats=[0.5], extra=cat(ld(12, "tensor doc"), ld(16, kv("origin", "x"))))),
    ld(10, "graph doc"),
    ld(11, value_info("X", F22, extra=cat(ld(3, "input doc"), ld(4, kv("unit", "m"))))),
    ld(12, value_info("Y", F22)),
    ld(14, cat(ld(1, "Y"), ld(2, kv("SCALE_TENSOR", "unused_w")))),  # quantization_annotation (opaque)
    ld(16, kv("graph_key", "graph_value")),
)
emit("edge_valid_metadata_everywhere.onnx", model(
    g_meta, ir=10, opsets=(("", 17), ("ai.onnx.ml", 3)),
    extra=cat(ld(3, "1.0"), ld(4, "org.example"), vi(5, 7), ld(6, "model doc"), ld(14, kv("author", "corpus")),
              ld(14, kv("empty", "")),
              ld(20, cat(ld(1, graph(name="training_init")), ld(3, kv("W", "unused_w")))))))

# Model-local function called as an op (kept as opaque bytes, node resolved through the function id).
fn = cat(ld(1, "Square"), ld(4, "x"), ld(5, "y"), ld(7, node("Mul", ["x", "x"], ["y"])), ld(9, opset("", 17)),
         ld(10, "local.fn"), ld(6, "unused_attr"))
emit("edge_valid_local_function.onnx", model(graph(
    [node("Square", ["X"], ["Y"], name="call", domain="local.fn")], "calls_function",
    [value_info("X", F22)], [value_info("Y", F22)]), opsets=(("", 17), ("local.fn", 1)), extra=ld(25, fn)))

# Subgraphs: If reading outer values (graph input and initializer); Loop whose body nests an If that reads a
# value two scopes up; Scan.
then_g = graph([node("Identity", ["X"], ["then_out"], name="then_id")], "then", outputs=[value_info("then_out", F22)])
else_g = graph([node("Add", ["X", "W"], ["else_out"], name="else_add")], "else",
               outputs=[value_info("else_out", F22)])
emit("edge_valid_if_outer_scope.onnx", model(graph(
    [node("If", ["cond"], ["Y"], name="if", attrs=[a_g("then_branch", then_g), a_g("else_branch", else_g)])],
    "if_outer", [value_info("cond", BOOL0), value_info("X", F22)], [value_info("Y", F22)], [W22]), opsets=(("", 16),)))
inner_then = graph([node("Add", ["acc_in", "W"], ["t_out"], name="inner_add")], "inner_then",
                   outputs=[value_info("t_out", F22)])
inner_else = graph([node("Identity", ["acc_in"], ["e_out"], name="inner_id")], "inner_else",
                   outputs=[value_info("e_out", F22)])
body = graph(
    [node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
     node("If", ["cond_in"], ["acc_out"], name="nested_if",
          attrs=[a_g("then_branch", inner_then), a_g("else_branch", inner_else)])],
    "loop_body", [value_info("iter", ttype(INT64, [])), value_info("cond_in", BOOL0), value_info("acc_in", F22)],
    [value_info("cond_out", BOOL0), value_info("acc_out", F22)])
emit("edge_valid_loop_nested_if.onnx", model(graph(
    [node("Loop", ["M", "", "X"], ["Y"], name="loop", attrs=[a_g("body", body)])],
    "loop_outer", [value_info("M", ttype(INT64, [])), value_info("X", F22)], [value_info("Y", F22)], [W22]),
    opsets=(("", 16),)))
scan_body = graph([node("Add", ["s_in", "x_t"], ["s_out"], name="acc"), node("Identity", ["s_out"], ["y_t"],
                                                                            name="emit")],
                  "scan_body", [value_info("s_in", ttype(FLOAT, [2])), value_info("x_t", ttype(FLOAT, [2]))],
                  [value_info("s_out", ttype(FLOAT, [2])), value_info("y_t", ttype(FLOAT, [2]))])
emit("edge_valid_scan.onnx", model(graph(
    [node("Scan", ["init", "xs"], ["final", "ys"], name="scan",
          attrs=[a_g("body", scan_body), a_i("num_scan_inputs", 1)])],
    "scan_outer", [value_info("init", ttype(FLOAT, [2])), value_info("xs", ttype(FLOAT, [3, 2]))],
    [value_info("final", ttype(FLOAT, [2])), value_info("ys", ttype(FLOAT, [3, 2]))]), opsets=(("", 16),)))
seq_g = graph(
    [node("SequenceEmpty", [], ["s0"], name="empty", attrs=[a_i("dtype", FLOAT)]),
     node("SequenceInsert", ["s0", "X"], ["s1"], name="insert"),
     node("SequenceAt", ["s1", "zero"], ["Y"], name="at"), node("SequenceLength", ["s1"], ["n"], name="len")],
    "sequences", [value_info("X", F22)], [value_info("Y", F22), value_info("n", ttype(INT64, []))],
    [tensor("zero", INT64, [], int64s=[0])], [value_info("s1", seq_type(F22))])
emit("edge_valid_sequence_ops.onnx", model(seq_g, opsets=(("", 17),)))
str_g = graph(
    [node("StringNormalizer", ["S"], ["N"], name="norm",
          attrs=[a_s("case_change_action", "LOWER"), a_strings("stopwords", ["the", "a\x00b"])]),
     node("Identity", ["labels"], ["L"], name="labels_out")],
    "strings", [value_info("S", ttype(STRING, [None]))],
    [value_info("N", ttype(STRING, [None])), value_info("L", ttype(STRING, [2]))],
    [tensor("labels", STRING, [2], strings=[b"cat", b"\xe2\x98\x83 snowman"])])
emit("edge_valid_string_tensors.onnx", model(str_g, opsets=(("", 17),)))
# Non-canonical but legal encodings: a 10-byte varint for ir_version, the graph split into two records (singular
# sub-messages merge), ir_version given twice (last one wins), a default-valued field written explicitly.
emit("edge_valid_noncanonical_varint.onnx",
     b"\x08\x88\x80\x80\x80\x80\x80\x80\x80\x80\x00" + ADD[2:])
def field_offsets(msg):
    """Offsets where the top-level fields of an encoded message start (keys below 16: one byte)."""
    offsets, pos = [], 0
    while pos < len(msg):
        offsets.append(pos)
        pos += 1
        n = shift = 0
        while True:
            c = msg[pos]
            pos += 1
            n |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                break
        if msg[offsets[-1]] & 7 == 2:
            pos += n
    return offsets


g_add = graph([node("Add", ["X", "W"], ["Y"], name="add")], "add_graph", [value_info("X", F22)],
              [value_info("Y", F22)], [W22])
split_at = field_offsets(g_add)[2]  # node + name | initializer, input, output
emit("edge_valid_graph_merged.onnx",
     cat(vi(1, 99), ld(7, g_add[:split_at]), ld(8, opset("", 17)), ld(7, g_add[split_at:]), vi(1, 8), vi(5, 0)))
emit("edge_valid_layer_annotations.onnx", model(graph(
    [node("MatMul", ["X", "W"], ["h"], name="mm", extra=ld(9, kv("layer_ann", "encoder.0"))),
     node("Relu", ["h"], ["Y"], name="act", extra=cat(ld(9, kv("layer_ann", "encoder.0")),
                                                       ld(9, kv("pc_ep", "CUDAExecutionProvider"))))],
    "annotated", [value_info("X", F22)], [value_info("Y", F22)], [W22]), ir=10, opsets=(("", 17),)))
emit("edge_valid_opset_above_schema.onnx", model(graph(
    [node("FutureOp", ["X"], ["Y"], name="future", attrs=[a_i("mode", 2)])], "future",
    [value_info("X", F22)], [value_info("Y", F22)]), ir=10, opsets=(("", 21),)))

# ==== wire-level malformations =================================================================================
emit("edge_empty.onnx", b"")
emit("edge_single_byte_key.onnx", b"\x08")
emit("edge_single_byte_ff.onnx", b"\xff")
emit("edge_truncated_half.onnx", ADD[: len(ADD) // 2])
emit("edge_truncated_last_byte.onnx", ADD[:-1])
emit("edge_truncated_in_varint.onnx", b"\x08\x88\x80")
emit("edge_truncated_in_length.onnx", ADD[:2] + b"\x3a\xff")
emit("edge_truncated_nested_length.onnx", model(b"\x0a\x40\x0a\x02ab"))  # node runs past the graph
emit("edge_overlong_varint.onnx", b"\x08" + b"\x80" * 10 + b"\x01" + ADD[2:])
emit("edge_overlong_key.onnx", b"\x88\x80\x80\x80\x80\x00\x08" + ADD[2:])
emit("edge_ubsan_tag_shift.onnx", b"\xf8\xff\xff\xff\x7f\x00" + ADD)
emit("edge_huge_length_int_max.onnx", ADD[:2] + b"\x3a\xff\xff\xff\xff\x07" + b"\x0a\x00")
emit("edge_huge_length_2p32.onnx", ADD[:2] + b"\x3a\x80\x80\x80\x80\x10" + b"\x0a\x00")
emit("edge_huge_length_2p63.onnx", ADD[:2] + b"\x3a" + b"\xff" * 9 + b"\x7f" + b"\x0a\x00")
emit("edge_length_prefix_padded.onnx", ADD[:2] + b"\x32\x80\x80\x80\x80\x80\x00")  # 0 in 6 bytes
emit("edge_field_zero_onebyte.onnx", b"\x00\x00" + ADD)
emit("edge_field_zero_multibyte.onnx", ADD + b"\x80\x00\x01")
emit("edge_field_number_max.onnx", ADD + key((1 << 29) - 1, 0) + b"\x01")
emit("edge_field_number_over_max.onnx", ADD + key(1 << 29, 0) + b"\x01")
emit("edge_unknown_field.onnx", ADD + vi(100, 1))
emit("edge_wire_type_3.onnx", ADD + b"\x3b" + b"\x3c")  # start-group / end-group for field 7
emit("edge_wire_type_4.onnx", ADD + b"\x0c")
emit("edge_wire_type_6.onnx", ADD + b"\x0e\x00")
emit("edge_wire_type_7.onnx", b"\x0f" + ADD)
emit("edge_wrong_wire_type.onnx", ld(1, "8") + ADD[2:])  # ir_version as a string
emit("edge_fixed32_truncated.onnx", model(graph([node("Foo", [], ["y"], attrs=[b"\x0a\x01f\x15\x00\x00"])])))
emit("edge_packed_partial_element.onnx", model(graph(
    name="p", outputs=[value_info("F")], inits=[cat(vi(1, 2), vi(2, FLOAT), ld(4, b"\x00" * 7), ld(8, "F"))])))

# Nesting: 200 sequence levels (~400 message levels: beyond the pre-scan limit, harmless for protobuf-c too),
# a deep chain of If subgraphs, and an amplification bomb of empty sub-messages.
t = ttype(FLOAT)
for _ in range(200):
    t = seq_type(t)
emit("edge_nested_typeproto_200.onnx",
     model(graph(name="deep", inputs=[value_info("X", t)], outputs=[value_info("X", t)])))
def nested_if(levels):
    """`levels` If nodes, each then_branch holding the next; every level reads `c` and `X` of the top graph."""
    g = graph([node("Identity", ["X"], ["y0"], name="leaf")], "level0", outputs=[value_info("y0")])
    for level in range(1, levels + 1):
        other = graph([node("Identity", ["X"], ["e%d" % level])], "else%d" % level, outputs=[value_info("e%d" % level)])
        g = graph([node("If", ["c"], ["y%d" % level], name="if%d" % level,
                        attrs=[a_g("then_branch", g), a_g("else_branch", other)])],
                  "level%d" % level, outputs=[value_info("y%d" % level)])
    return model(graph([node("If", ["c"], ["Y"], name="top", attrs=[a_g("then_branch", g),
                                                                   a_g("else_branch", then_g)])],
                       "top", [value_info("c", BOOL0), value_info("X", F22)], [value_info("Y")]))


# 3 message levels per If (Graph -> Node -> Attribute -> Graph): 15 levels fit the limit of 64, 30 do not.
emit("edge_valid_nested_if_15.onnx", nested_if(15))
emit("edge_nested_if_30.onnx", nested_if(30))
emit("edge_many_empty_initializers.onnx", model(graph(name="bomb") + b"\x2a\x00" * 3000))
emit("edge_many_empty_nodes.onnx", model(b"\x0a\x00" * 3000))

# ==== strings ===================================================================================================
emit("edge_embedded_nul_node_name.onnx", model(graph(
    [node("Relu", ["X"], ["Y"], name="a\x00b")], "nul", [value_info("X", F22)], [value_info("Y", F22)])))
emit("edge_embedded_nul_value_name.onnx", model(graph(
    [node("Relu", ["X\x00hidden"], ["Y"], name="r")], "nul", [value_info("X", F22)], [value_info("Y", F22)])))
emit("edge_embedded_nul_op_type.onnx", model(graph(
    [node("Relu\x00Evil", ["X"], ["Y"])], "nul", [value_info("X", F22)], [value_info("Y", F22)])))
emit("edge_invalid_utf8_name.onnx", model(graph(
    [node("Relu", ["X\xff"], ["Y\xc3"], name="\xed\xa0\x80")], "utf8", [value_info("X\xff", F22)],
    [value_info("Y\xc3", F22)])))

# ==== tensor data ==============================================================================================
def init_model(t, out="T", ir=8, opsets=(("", 17),)):
    return model(graph(name="tensor", outputs=[value_info(out)], inits=[t]), ir=ir, opsets=opsets)


emit("edge_raw_data_short.onnx", init_model(tensor("T", FLOAT, [2, 2], raw=b"\x00" * 15)))
emit("edge_raw_data_long.onnx", init_model(tensor("T", FLOAT, [2, 2], raw=b"\x00" * 17)))
emit("edge_raw_data_not_multiple.onnx", init_model(tensor("T", INT64, [1], raw=b"\x00" * 12)))
emit("edge_raw_data_int4_mismatch.onnx", init_model(tensor("T", INT4, [3], raw=b"\x00"), ir=10,
                                                    opsets=(("", 21),)))
emit("edge_float_data_count_mismatch.onnx", init_model(tensor("T", FLOAT, [2, 2], floats=[1.0, 2.0, 3.0])))
emit("edge_complex_not_doubled.onnx", init_model(tensor("T", COMPLEX64, [2], floats=[1.0, 2.0])))
emit("edge_no_data.onnx", init_model(tensor("T", FLOAT, [2, 2])))
emit("edge_huge_dims_no_data.onnx", init_model(tensor("T", FLOAT, [1 << 30, 1 << 10])))
emit("edge_huge_dims_one_value.onnx", init_model(tensor("T", FLOAT, [1 << 28], floats=[1.0])))
emit("edge_dims_overflow.onnx", init_model(tensor("T", FLOAT, [1 << 62, 1 << 62], raw=b"")))
emit("edge_negative_dim_tensor.onnx", init_model(tensor("T", FLOAT, [-1], raw=b"")))
emit("edge_negative_dim_shape.onnx", model(graph(
    [node("Relu", ["X"], ["Y"])], "neg", [value_info("X", ttype(FLOAT, [-3, 2]))], [value_info("Y", F22)])))
emit("edge_rank_65_tensor.onnx", init_model(tensor("T", FLOAT, [1] * 65, raw=b"\x00" * 4)))
emit("edge_rank_65_shape.onnx", model(graph(
    name="rank", inputs=[value_info("X", ttype(FLOAT, [1] * 65))], outputs=[value_info("X")])))
emit("edge_multiple_data_fields.onnx", init_model(tensor("T", FLOAT, [1], raw=b"\x00" * 4, floats=[1.0])))
emit("edge_wrong_data_field.onnx", init_model(tensor("T", FLOAT, [1], int64s=[1])))
emit("edge_string_raw_data.onnx", init_model(tensor("T", STRING, [1], raw=b"abcd")))
emit("edge_subbyte_int32_data.onnx", init_model(tensor("T", UINT4, [2], int32s=[0x21]), ir=10, opsets=(("", 21),)))
emit("edge_data_type_missing.onnx", init_model(tensor("T", None, [1], raw=b"\x00" * 4)))
emit("edge_data_type_undefined.onnx", init_model(tensor("T", 0, [1], raw=b"\x00" * 4)))
emit("edge_data_type_999.onnx", init_model(tensor("T", 999, [1], raw=b"\x00" * 4)))
emit("edge_data_type_negative.onnx", init_model(tensor("T", -1, [1], raw=b"\x00" * 4)))
emit("edge_data_location_7.onnx", init_model(tensor("T", FLOAT, [1], raw=b"\x00" * 4, extra=vi(14, 7))))
emit("edge_segment.onnx", init_model(tensor("T", FLOAT, [1], raw=b"\x00" * 4, extra=ld(3, cat(vi(1, 0), vi(2, 1))))))
emit("edge_initializer_no_name.onnx", init_model(tensor(None, FLOAT, [1], raw=b"\x00" * 4)))
emit("edge_sparse_initializer.onnx", model(graph(name="sparse", extra=ld(15, cat(
    ld(1, tensor("sv", FLOAT, [1], floats=[1.0])), ld(2, tensor("si", INT64, [1], int64s=[3])), vi(3, 10))))))

# ==== external data (a model from bytes has no base directory: every one must be rejected, never opened) ========
def ext_model(entries, location_enum=1, extra=b""):
    return init_model(tensor("T", FLOAT, [4], extra=cat(external(entries, location_enum), extra)))


emit("edge_external_dotdot.onnx", ext_model([("location", "../x")]))
emit("edge_external_nested_dotdot.onnx", ext_model([("location", "sub/../../x"), ("offset", "0"), ("length", "16")]))
emit("edge_external_absolute.onnx", ext_model([("location", "/etc/passwd")]))
emit("edge_external_ort_mem_addr.onnx", ext_model([("location", "*/_ORT_MEM_ADDR_/*"), ("offset", "4096")]))
emit("edge_external_ort_mem_addr_plain.onnx", ext_model([("location", "_ORT_MEM_ADDR_")]))
emit("edge_external_plain_file.onnx", ext_model([("location", "weights.bin"), ("offset", "0"), ("length", "16"),
                                                  ("checksum", "da39a3ee5e6b4b0d3255bfef95601890afd80709")]))
emit("edge_external_backslash_drive.onnx", ext_model([("location", "C:\\w\\..\\x.bin")]))
emit("edge_external_nul_location.onnx", ext_model([("location", "a\x00/../../etc/passwd")]))
emit("edge_external_bad_offsets.onnx", ext_model([("location", "w.bin"), ("offset", "-1"),
                                                   ("length", "99999999999999999999999")]))
emit("edge_external_no_location.onnx", ext_model([("offset", "0")]))
emit("edge_external_duplicate_keys.onnx", ext_model([("location", "a.bin"), ("location", "../b.bin")]))
emit("edge_external_with_raw_data.onnx", ext_model([("location", "w.bin")], extra=ld(9, b"\x00" * 16)))
emit("edge_external_entries_default_location.onnx", ext_model([("location", "w.bin")], location_enum=0))
emit("edge_external_string_tensor.onnx", init_model(tensor("T", STRING, [1], extra=external([("location", "s")]))))
emit("edge_external_in_attribute.onnx", model(graph(
    [node("Constant", [], ["Y"], name="c", attrs=[a_t("value", tensor("v", FLOAT, [1], extra=external(
        [("location", "../../secret")])))])], "ext_attr", outputs=[value_info("Y")])))

# ==== graph structure ==========================================================================================
emit("edge_cycle.onnx", model(graph(
    [node("Add", ["X", "b"], ["a"], name="A"), node("Relu", ["a"], ["b"], name="B")], "cycle",
    [value_info("X", F22)], [value_info("a", F22)])))
emit("edge_self_loop.onnx", model(graph(
    [node("Add", ["X", "a"], ["a"], name="self")], "self", [value_info("X", F22)], [value_info("a", F22)])))
emit("edge_cycle_in_subgraph.onnx", model(graph(
    [node("If", ["c"], ["Y"], name="if", attrs=[
        a_g("then_branch", graph([node("Relu", ["q"], ["p"], name="P"), node("Relu", ["p"], ["q"], name="Q")],
                                 "cyc", outputs=[value_info("p")])),
        a_g("else_branch", then_g)])],
    "outer", [value_info("c", BOOL0), value_info("X", F22)], [value_info("Y")])))
emit("edge_dangling_input.onnx", model(graph(
    [node("Add", ["X", "nowhere"], ["Y"], name="add")], "dangling", [value_info("X", F22)], [value_info("Y", F22)])))
emit("edge_unproduced_output.onnx", model(graph(
    [node("Relu", ["X"], ["Y"])], "unproduced", [value_info("X", F22)], [value_info("Z", F22)])))
emit("edge_if_outer_ref_dangling.onnx", model(graph(
    [node("If", ["c"], ["Y"], name="if", attrs=[
        a_g("then_branch", graph([node("Identity", ["not_in_any_scope"], ["t"])], "then", outputs=[value_info("t")])),
        a_g("else_branch", then_g)])],
    "outer", [value_info("c", BOOL0), value_info("X", F22)], [value_info("Y")])))
emit("edge_if_subgraph_shadows_outer.onnx", model(graph(
    [node("If", ["c"], ["Y"], name="if", attrs=[
        a_g("then_branch", graph([node("Relu", ["X"], ["W"], name="shadow")], "then", outputs=[value_info("W")])),
        a_g("else_branch", then_g)])],
    "outer", [value_info("c", BOOL0), value_info("X", F22)], [value_info("Y")], [W22])))
emit("edge_subgraph_uses_later_outer_value.onnx", model(graph(
    [node("If", ["c"], ["Y"], name="if", attrs=[
        a_g("then_branch", graph([node("Identity", ["late"], ["t"])], "then", outputs=[value_info("t")])),
        a_g("else_branch", then_g)]),
     node("Relu", ["X"], ["late"], name="produces_late")],
    "outer", [value_info("c", BOOL0), value_info("X", F22)], [value_info("Y")])))
emit("edge_duplicate_producer.onnx", model(graph(
    [node("Relu", ["X"], ["Y"], name="r1"), node("Neg", ["X"], ["Y"], name="r2")], "dup",
    [value_info("X", F22)], [value_info("Y", F22)])))
emit("edge_output_overwrites_input.onnx", model(graph(
    [node("Relu", ["X"], ["X"], name="r")], "dup", [value_info("X", F22)], [value_info("X", F22)])))
emit("edge_duplicate_initializer.onnx", model(graph(
    name="dup", outputs=[value_info("W")], inits=[W22, W22])))
emit("edge_duplicate_graph_input.onnx", model(graph(
    name="dup", inputs=[value_info("X", F22), value_info("X", F22)], outputs=[value_info("X")])))
emit("edge_duplicate_graph_output.onnx", model(graph(
    [node("Relu", ["X"], ["Y"])], "dup", [value_info("X", F22)], [value_info("Y"), value_info("Y")])))
emit("edge_duplicate_value_info.onnx", model(graph(
    [node("Relu", ["X"], ["Y"])], "dup", [value_info("X", F22)], [value_info("Y")],
    value_infos=[value_info("Y", F22), value_info("Y", F22)])))
emit("edge_valid_input_and_initializer_ir3.onnx", model(graph(
    [node("Add", ["X", "W"], ["Y"])], "both", [value_info("X", F22), value_info("W", F22)], [value_info("Y")],
    [W22]), ir=3, opsets=(("", 9),)))
emit("edge_node_no_op_type.onnx", model(graph([node(None, ["X"], ["Y"])], "noop", [value_info("X", F22)],
                                              [value_info("Y")])))
emit("edge_unknown_op.onnx", model(graph([node("NoSuchOp", ["X"], ["Y"])], "unk", [value_info("X", F22)],
                                         [value_info("Y")])))
emit("edge_op_too_new_for_opset.onnx", model(graph([node("Gelu", ["X"], ["Y"])], "new", [value_info("X", F22)],
                                                   [value_info("Y")]), opsets=(("", 13),)))
emit("edge_unknown_domain.onnx", model(graph([node("Relu", ["X"], ["Y"], domain="org.nowhere")], "unk",
                                             [value_info("X", F22)], [value_info("Y")]),
                                       opsets=(("", 17), ("org.nowhere", 1))))
emit("edge_domain_not_imported.onnx", model(graph([node("Foo", ["X"], ["Y"], domain="com.microsoft")], "d",
                                                  [value_info("X", F22)], [value_info("Y")])))
emit("edge_wrong_arity.onnx", model(graph([node("Add", ["X"], ["Y"])], "arity", [value_info("X", F22)],
                                          [value_info("Y")])))

# ==== attributes ===============================================================================================
def attr_model(*attrs, op="Foo", domain="com.microsoft", opsets=(("", 17), ("com.microsoft", 1))):
    return model(graph([node(op, ["X"], ["Y"], name="n", attrs=list(attrs), domain=domain)], "attr",
                       [value_info("X", F22)], [value_info("Y")]), opsets=opsets)


emit("edge_attr_type_999.onnx", attr_model(cat(ld(1, "a"), vi(3, 1), vi(20, 999))))
emit("edge_attr_type_negative.onnx", attr_model(cat(ld(1, "a"), vi(3, 1), vi(20, -2))))
emit("edge_attr_type_mismatch.onnx", attr_model(cat(ld(1, "a"), f32(2, 1.0), vi(20, 2))))
emit("edge_attr_two_values.onnx", attr_model(cat(ld(1, "a"), f32(2, 1.0), vi(3, 1), vi(20, 1))))
emit("edge_attr_no_value.onnx", attr_model(cat(ld(1, "a"), vi(20, 5))))
emit("edge_attr_undefined_two_values.onnx", attr_model(cat(ld(1, "a"), vi(3, 1), ld(4, "s"))))
emit("edge_attr_no_name.onnx", attr_model(cat(vi(3, 1), vi(20, 2))))
emit("edge_attr_duplicate.onnx", attr_model(a_i("a", 1), a_i("a", 2)))
emit("edge_attr_ref_attr_name.onnx", attr_model(cat(ld(1, "a"), ld(21, "outer_attr"), vi(20, 2))))
emit("edge_attr_sparse_tensor.onnx", attr_model(cat(ld(1, "a"), ld(22, cat(
    ld(1, tensor("v", FLOAT, [1], floats=[1.0])), ld(2, tensor("i", INT64, [1], int64s=[0])), vi(3, 4))), vi(20, 11))))
emit("edge_attr_wrong_type_for_op.onnx", attr_model(a_f("axis", 1.0), op="Softmax", domain=None,
                                                    opsets=(("", 13),)))
emit("edge_attr_graph_on_plain_op.onnx", attr_model(a_g("body", then_g), op="Relu", domain=None,
                                                    opsets=(("", 14),)))
emit("edge_attr_map_float_key.onnx", attr_model(a_tp("tp", map_type(FLOAT, ttype(FLOAT)))))
emit("edge_attr_tensor_bad.onnx", attr_model(a_t("t", tensor("bad", FLOAT, [3], floats=[1.0]))))

# ==== model level ==============================================================================================
g_relu = graph([node("Relu", ["X"], ["Y"])], "m", [value_info("X", F22)], [value_info("Y", F22)])
emit("edge_ir_version_missing.onnx", cat(ld(7, g_relu), ld(8, opset("", 17))))
emit("edge_ir_version_0.onnx", model(g_relu, ir=0))
emit("edge_ir_version_99.onnx", model(g_relu, ir=99))
emit("edge_ir_version_negative.onnx", model(g_relu, ir=-1))
emit("edge_no_opset.onnx", model(g_relu, opsets=()))
emit("edge_opset_no_version.onnx", cat(vi(1, 8), ld(7, g_relu), ld(8, ld(1, ""))))
emit("edge_opset_0.onnx", model(g_relu, opsets=(("", 0),)))
emit("edge_opset_huge.onnx", model(g_relu, opsets=(("", 1 << 62),)))
emit("edge_opset_duplicate_domain.onnx", model(g_relu, opsets=(("", 17), ("ai.onnx", 13))))
emit("edge_opset_unknown_domain.onnx", model(g_relu, opsets=(("", 17), ("org.unknown", 1))))
emit("edge_no_graph.onnx", model(None))
emit("edge_metadata_duplicate_key.onnx", model(g_relu, extra=cat(ld(14, kv("k", "1")), ld(14, kv("k", "2")))))
emit("edge_metadata_no_key.onnx", model(g_relu, extra=ld(14, ld(2, "value only"))))
emit("edge_function_no_name.onnx", model(g_relu, extra=ld(25, cat(ld(10, "local.fn"), ld(4, "x")))))
emit("edge_function_recursive.onnx", model(graph(
    [node("Loopy", ["X"], ["Y"], domain="local.fn")], "rec", [value_info("X", F22)], [value_info("Y", F22)]),
    opsets=(("", 17), ("local.fn", 1)),
    extra=ld(25, cat(ld(1, "Loopy"), ld(4, "x"), ld(5, "y"), ld(7, node("Loopy", ["x"], ["y"], domain="local.fn")),
                     ld(10, "local.fn")))))

total = sum(os.path.getsize(os.path.join(out_dir, n)) for n in written)
print("make_onnx_corpus.sh: wrote %d hand-made seeds (%d bytes)" % (len(written), total))
PYTHON

count=$(find "$out" -maxdepth 1 -type f | wc -l)
bytes=$(find "$out" -maxdepth 1 -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
largest=$(find "$out" -maxdepth 1 -type f -printf '%s\n' | sort -n | tail -n 1)
echo "make_onnx_corpus.sh: $out: $count files, $bytes bytes, largest ${largest:-0} bytes"
((bytes <= 400 * 1024)) || die "corpus is $bytes bytes; keep it under 400 KiB"
((${largest:-0} <= 8192)) || die "a corpus file has ${largest} bytes; keep each under 8 KiB"
