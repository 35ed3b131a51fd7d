#!/usr/bin/env python3
"""Remakes tests/bad-ort: one crafted ORT-format file per bad-input case, expected.tsv (file, status, message
substring) and the table in README.md, all from the files ONNX Runtime 1.30 wrote in tests/ort/data.

Each case copies a fixture and edits it through its own FlatBuffers structure (vtables and fields found by id,
never by byte offsets written down), or appends small objects at the end of the file and points a field at
them: uoffsets only point forward, so whatever is appended can be referenced from anywhere before it. The
output depends only on the fixtures: running this twice gives the same bytes.

usage: make_bad_ort.py [--check]
  (none)   write the files, expected.tsv and README.md's table; remove .ort files no case makes
  --check  write nothing; exit 1 listing every file that differs from what would be written
Standard library only.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "ort", "data")
TABLE_BEGIN = "<!-- the table below is written by make_bad_ort.py -->"
TABLE_END = "<!-- end of the generated table -->"
MAX_FILE = 20 * 1024

# Field ids, in ort.fbs declaration order (deprecated fields keep theirs; a union takes two).
IS_ORT_VERSION, IS_MODEL, IS_SESSION_STATE, IS_RESOLVER = range(4)
M_IR_VERSION, M_OPSET_IMPORT, M_PRODUCER_NAME, M_GRAPH = 0, 1, 2, 7
G_INITIALIZERS, G_NODE_ARGS, G_NODES, G_MAX_NODE_INDEX, G_NODE_EDGES = range(5)
G_INPUTS, G_OUTPUTS, G_SPARSE_INITIALIZERS, G_RUNTIME_OPTIMIZATIONS = range(5, 9)
N_DOC_STRING, N_DOMAIN, N_SINCE_VERSION, N_INDEX, N_OP_TYPE, N_TYPE = range(1, 7)
N_INPUTS, N_OUTPUTS, N_ATTRIBUTES, N_INPUT_ARG_COUNTS, N_IMPLICIT_INPUTS = range(8, 13)
E_NODE_INDEX, E_INPUT_EDGES = 0, 1
VI_NAME, VI_TYPE = 0, 2
TI_VALUE_TYPE, TI_VALUE = 1, 2
TTS_ELEM_TYPE, TTS_SHAPE = 0, 1
DIM_VALUE = 0
DV_DIM_TYPE, DV_DIM_VALUE = 0, 1
OP_DOMAIN, OP_VERSION = 0, 1
T_NAME, T_DIMS, T_DATA_TYPE, T_RAW_DATA, T_EXTERNAL_DATA_OFFSET = 0, 2, 3, 4, 6
A_NAME, A_TYPE, A_G = 0, 2, 7
KR_ENTRIES, KE_ARGS, KA_ARGS, AT_INDEX = 0, 1, 1, 1
DSS_KERNELS, DKCI_NODE_INDICES = 0, 0
ATTR_GRAPH, TYPE_INFO_SEQUENCE = 5, 2


class Fb:
    """A FlatBuffers buffer being edited. Positions are byte offsets into it."""

    def __init__(self, data):
        self.b = bytearray(data)

    # reads
    def u16(self, p):
        return struct.unpack_from("<H", self.b, p)[0]

    def u32(self, p):
        return struct.unpack_from("<I", self.b, p)[0]

    def i32(self, p):
        return struct.unpack_from("<i", self.b, p)[0]

    def vtable(self, t):
        return t - self.i32(t)

    def slot(self, t, fid):
        """The vtable slot of field fid of the table at t (the slot must exist)."""
        vt = self.vtable(t)
        assert 4 + 2 * fid + 2 <= self.u16(vt), "field id %d beyond the vtable" % fid
        return vt + 4 + 2 * fid

    def field(self, t, fid):
        """The position of field fid, or 0 when absent."""
        vt = self.vtable(t)
        if 4 + 2 * fid + 2 > self.u16(vt):
            return 0
        off = self.u16(vt + 4 + 2 * fid)
        return t + off if off else 0

    def must(self, t, fid):
        p = self.field(t, fid)
        assert p, "field id %d absent from the table at %d" % (fid, t)
        return p

    def ref(self, t, fid):
        p = self.must(t, fid)
        return p + self.u32(p)

    def vec_len(self, v):
        return self.u32(v)

    def elem(self, v, i):
        """The slot of element i of a vector of references."""
        assert i < self.vec_len(v)
        return v + 4 + 4 * i

    def vec_ref(self, v, i):
        s = self.elem(v, i)
        return s + self.u32(s)

    def vec_refs(self, v):
        return [self.vec_ref(v, i) for i in range(self.vec_len(v))]

    def string(self, s):
        return bytes(self.b[s + 4 : s + 4 + self.u32(s)])

    # writes
    def put(self, p, fmt, v):
        struct.pack_into(fmt, self.b, p, v)

    def put_u16(self, p, v):
        self.put(p, "<H", v)

    def put_u32(self, p, v):
        self.put(p, "<I", v)

    def put_i32(self, p, v):
        self.put(p, "<i", v)

    def put_i64(self, p, v):
        self.put(p, "<q", v)

    def point(self, at, target):
        """The uoffset at `at` leads to target (uoffsets only point forward)."""
        assert target > at
        self.put_u32(at, target - at)

    def append(self, data, align=4):
        while len(self.b) % align:
            self.b.append(0)
        p = len(self.b)
        self.b += data
        return p

    def add_string(self, s):
        return self.append(struct.pack("<I", len(s)) + s + b"\0")

    def add_vector(self, count, body, elem_align=4):
        """A vector whose elements (body) are elem_align-aligned; returns its length prefix's position."""
        while len(self.b) % 4 or (len(self.b) + 4) % elem_align:
            self.b.append(0)
        return self.append(struct.pack("<I", count) + body)

    def add_ref_vector(self, n):
        return self.add_vector(n, bytes(4 * n))

    def add_table(self, fields, vt=None):
        """A table after a fresh vtable (or sharing vt); fields are (id, width, value), value None for a
        reference the caller points later. Returns (table position, {id: field position}, vtable)."""
        if vt is None:
            n_ids = max((f[0] for f in fields), default=-1) + 1
            vt = self.append(bytes(4 + 2 * n_ids), 2)
        t = self.append(bytes(4), max([4] + [f[1] for f in fields]))
        self.put_i32(t, t - vt)
        pos = {}
        for fid, width, value in fields:
            p = self.append(bytes(width), width)
            pos[fid] = p
            if value is not None:
                self.put(p, {1: "<B", 2: "<H", 4: "<i", 8: "<q"}[width], value)
        voffs = {fid: p - t for fid, p in pos.items()}
        if self.u16(vt) == 0:  # a fresh vtable: its sizes and slots
            self.put_u16(vt, 4 + 2 * (max(voffs, default=-1) + 1))
            self.put_u16(vt + 2, len(self.b) - t)
            for fid, off in voffs.items():
                self.put_u16(vt + 4 + 2 * fid, off)
        else:
            assert self.u16(vt + 2) == len(self.b) - t and all(
                self.u16(vt + 4 + 2 * fid) == off for fid, off in voffs.items()
            ), "a shared vtable must describe the new table"
        return t, pos, vt

    def own_vtable(self, t):
        """A private copy of t's vtable, appended (vtables are shared): edits to it touch t alone."""
        vt = self.vtable(t)
        nvt = self.append(bytes(self.b[vt : vt + self.u16(vt)]), 2)
        self.put_i32(t, t - nvt)
        return nvt

    def drop(self, t, fid):
        """Field fid of t absent (its bytes stay, unreferenced)."""
        self.own_vtable(t)
        self.put_u16(self.slot(t, fid), 0)

    def set_string(self, t, fid, s):
        self.point(self.must(t, fid), self.add_string(s))

    def set_elem_string(self, v, i, s):
        self.point(self.elem(v, i), self.add_string(s))

    # the ORT format's parts
    def root(self):
        return self.u32(0)

    def model(self):
        return self.ref(self.root(), IS_MODEL)

    def graph(self):
        return self.ref(self.model(), M_GRAPH)

    def nodes(self, g=None):
        return self.vec_refs(self.ref(self.graph() if g is None else g, G_NODES))

    def node_args(self, g=None):
        return self.vec_refs(self.ref(self.graph() if g is None else g, G_NODE_ARGS))

    def initializers(self, g=None):
        return self.vec_refs(self.ref(self.graph() if g is None else g, G_INITIALIZERS))

    def edges(self, g):
        return self.vec_refs(self.ref(g, G_NODE_EDGES))

    def attribute(self, node, name):
        for a in self.vec_refs(self.ref(node, N_ATTRIBUTES)):
            if self.string(self.ref(a, A_NAME)) == name:
                return a
        raise KeyError(name)

    def loop_body(self):
        """test_loop11: the Loop node's 'body' graph."""
        return self.ref(self.attribute(self.nodes()[0], b"body"), A_G)

    def type_info(self, vi):
        return self.ref(vi, VI_TYPE)

    def tensor_type(self, vi):
        return self.ref(self.type_info(vi), TI_VALUE)

    def first_dim_value(self, vi):
        shape = self.ref(self.tensor_type(vi), TTS_SHAPE)
        dim = self.vec_refs(self.ref(shape, 0))[0]
        return self.ref(dim, DIM_VALUE)

    def data(self):
        return bytes(self.b)


_fixtures = {}


def fixture(short):
    """A fresh copy of a fixture: constant (992 bytes, one initializer), conv (1,912 bytes, one Conv node with
    attributes) or loop (4,536 bytes, a Loop whose body has 7 nodes, NodeEdges and initializers)."""
    names = {
        "constant": "test_constant.ort",
        "conv": "test_conv_with_strides_padding.ort",
        "loop": "test_loop11.ort",
    }
    if short not in _fixtures:
        with open(os.path.join(FIXTURES, names[short]), "rb") as f:
            _fixtures[short] = f.read()
    return Fb(_fixtures[short])


CASES = []


def case(name, cls, status, needle, what):
    """Registers a case: file name, section 9 class, the status passcheck must print, a substring its
    message must hold (naming the byte, field or object), and what is wrong, for the README."""

    def register(make):
        CASES.append((name, cls, status, needle, what, make))
        return make

    return register


# ---- 1: container and size


@case("c01_empty.ort", 1, "truncated", "empty", "0 bytes")
def _():
    return b""


@case("c01_truncated_11_bytes.ort", 1, "truncated", "11 bytes", "the first 11 bytes (below the 12 of any buffer)")
def _():
    return fixture("constant").data()[:11]


@case(
    "c01_truncated_half.ort",
    1,
    "bad-offset",
    "byte 36",
    "the first half of a file: the root's ort_version offset leads past the end",
)
def _():
    return fixture("constant").data()[:496]


@case(
    "c01_truncated_before_nul.ort",
    1,
    "unterminated-string",
    "ort_version",
    "cut before the last string's NUL (the terminator would be past the end)",
)
def _():
    fb = fixture("constant")
    s = fb.ref(fb.root(), IS_ORT_VERSION)
    assert s + 4 + fb.u32(s) + 4 >= len(fb.b), "ort_version must be the file's last object"
    return fb.data()[: s + 4 + fb.u32(s)]


# ---- 3: wrong magic


@case(
    "c03_bad_identifier.ort",
    3,
    "malformed-wire",
    'bytes 4..7 are not "ORTM": read as ONNX',
    '"ORTX" at bytes 4..7: not taken for the ORT format, so parsed (and refused) as ONNX',
)
def _():
    fb = fixture("constant")
    fb.b[7] = ord("X")
    return fb.data()


# ---- 4: format version, ir_version, opsets


def with_version(s):
    fb = fixture("constant")
    fb.set_string(fb.root(), IS_ORT_VERSION, s)
    return fb.data()


@case("c04_ort_version_missing.ort", 4, "bad-format-version", "ort_version is missing", "no ort_version")
def _():
    fb = fixture("constant")
    fb.drop(fb.root(), IS_ORT_VERSION)
    return fb.data()


@case("c04_ort_version_letter.ort", 4, "bad-format-version", '"x" is not 1-3 digits', 'ort_version "x"')
def _():
    return with_version(b"x")


@case(
    "c04_ort_version_5abc.ort",
    4,
    "bad-format-version",
    '"5abc" is not 1-3 digits',
    'ort_version "5abc" (std::stoi reads 5)',
)
def _():
    return with_version(b"5abc")


@case("c04_ort_version_empty.ort", 4, "bad-format-version", '"" is not 1-3 digits', 'ort_version ""')
def _():
    return with_version(b"")


@case("c04_ort_version_sign.ort", 4, "bad-format-version", '"+6" is not 1-3 digits', 'ort_version "+6"')
def _():
    return with_version(b"+6")


@case("c04_ort_version_space.ort", 4, "bad-format-version", '" 6" is not 1-3 digits', 'ort_version " 6"')
def _():
    return with_version(b" 6")


@case("c04_ort_version_4_digits.ort", 4, "bad-format-version", '"0006" is not 1-3 digits', 'ort_version "0006"')
def _():
    return with_version(b"0006")


@case("c04_ort_version_too_old.ort", 4, "bad-format-version", "ort_version 4", 'ort_version "4" (kernel-def hashes)')
def _():
    return with_version(b"4")


@case("c04_ort_version_unknown.ort", 4, "bad-format-version", "ort_version 7", 'ort_version "7" (no such version)')
def _():
    return with_version(b"7")


@case("c04_ir_version_0.ort", 4, "bad-ir-version", "ir_version 0 is outside", "Model.ir_version 0")
def _():
    fb = fixture("conv")
    fb.put_i64(fb.must(fb.model(), M_IR_VERSION), 0)
    return fb.data()


@case("c04_ir_version_99.ort", 4, "bad-ir-version", "ir_version 99 is outside", "Model.ir_version 99")
def _():
    fb = fixture("conv")
    fb.put_i64(fb.must(fb.model(), M_IR_VERSION), 99)
    return fb.data()


@case("c04_opset_import_missing.ort", 4, "bad-opset", "imports no opset", "no Model.opset_import")
def _():
    fb = fixture("conv")
    fb.drop(fb.model(), M_OPSET_IMPORT)
    return fb.data()


@case(
    "c04_opset_domain_twice.ort",
    4,
    "duplicate-name",
    "lists domain 'ai.onnx' twice",
    'opset_import[1] names domain "" again',
)
def _():
    fb = fixture("conv")
    ops = fb.vec_refs(fb.ref(fb.model(), M_OPSET_IMPORT))
    assert fb.string(fb.ref(ops[0], OP_DOMAIN)) == b""
    fb.set_string(ops[1], OP_DOMAIN, b"")
    return fb.data()


@case(
    "c04_opset_version_0.ort",
    4,
    "bad-opset",
    "opset 0 for domain 'ai.onnx'",
    'opset_import for domain "" at version 0',
)
def _():
    fb = fixture("conv")
    op = fb.vec_refs(fb.ref(fb.model(), M_OPSET_IMPORT))[0]
    fb.put_i64(fb.must(op, OP_VERSION), 0)
    return fb.data()


# ---- 8: enums out of range (the ORT format's enums are the schema's)


@case(
    "c08_data_type_99.ort",
    8,
    "enum-out-of-range",
    "initializers[0].data_type: value 99",
    "Tensor.data_type 99 (TensorDataType ends at 20)",
)
def _():
    fb = fixture("constant")
    fb.put_i32(fb.must(fb.initializers()[0], T_DATA_TYPE), 99)
    return fb.data()


@case("c08_elem_type_21.ort", 8, "enum-out-of-range", "value.elem_type: value 21", "TensorTypeAndShape.elem_type 21")
def _():
    fb = fixture("constant")
    fb.put_i32(fb.must(fb.tensor_type(fb.node_args()[0]), TTS_ELEM_TYPE), 21)
    return fb.data()


@case(
    "c08_attribute_type_13.ort",
    8,
    "enum-out-of-range",
    "attributes[1].type: value 13",
    "Attribute.type 13 (AttributeType ends at 12)",
)
def _():
    fb = fixture("conv")
    fb.put_i32(fb.must(fb.attribute(fb.nodes()[0], b"group"), A_TYPE), 13)
    return fb.data()


@case("c08_dim_type_3.ort", 8, "enum-out-of-range", "value.dim_type: value 3", "DimensionValue.dim_type 3")
def _():
    fb = fixture("constant")
    fb.b[fb.must(fb.first_dim_value(fb.node_args()[0]), DV_DIM_TYPE)] = 3
    return fb.data()


def node_with_type(value):
    """conv's node with a NodeType: the 4 bytes of its doc_string offset become the type field."""
    fb = fixture("conv")
    node = fb.nodes()[0]
    fb.own_vtable(node)
    off = fb.u16(fb.slot(node, N_DOC_STRING))
    fb.put_u16(fb.slot(node, N_DOC_STRING), 0)
    fb.put_u16(fb.slot(node, N_TYPE), off)
    fb.put_i32(node + off, value)
    return fb.data()


@case(
    "c08_node_type_2.ort",
    8,
    "enum-out-of-range",
    "nodes[0].type: value 2",
    "Node.type 2 (NodeType is Primitive 0 or Fused 1)",
)
def _():
    return node_with_type(2)


# ---- 9: NUL inside names


@case(
    "c09_nul_in_op_type.ort",
    9,
    "embedded-nul",
    "nodes[0].op_type: string of 4 bytes holds a NUL",
    'Node.op_type "Co\\0v"',
)
def _():
    fb = fixture("conv")
    s = fb.ref(fb.nodes()[0], N_OP_TYPE)
    assert fb.string(s) == b"Conv"
    fb.b[s + 4 + 2] = 0
    return fb.data()


@case(
    "c09_nul_in_nodearg_name.ort",
    9,
    "embedded-nul",
    "node_args[4].name: string of 10 bytes holds a NUL",
    'a NodeArg named "trip\\0count"',
)
def _():
    fb = fixture("loop")
    vi = [v for v in fb.node_args() if fb.string(fb.ref(v, VI_NAME)) == b"trip_count"][0]
    s = fb.ref(vi, VI_NAME)
    fb.b[s + 4 + 4] = 0
    return fb.data()


# ---- 10: offsets


@case(
    "c10_root_offset_0.ort",
    10,
    "bad-offset",
    "byte 0: InferenceSession: offset 0",
    "root offset 0 (points at itself)",
)
def _():
    fb = fixture("constant")
    fb.put_u32(0, 0)
    return fb.data()


@case(
    "c10_root_offset_past_end.ort",
    10,
    "bad-offset",
    "byte 0: InferenceSession: offset 992 leads past the end",
    "root offset = the file size",
)
def _():
    fb = fixture("constant")
    fb.put_u32(0, len(fb.b))
    return fb.data()


@case("c10_root_offset_misaligned.ort", 10, "misaligned", "InferenceSession not 4-byte aligned", "root offset + 2")
def _():
    fb = fixture("constant")
    fb.put_u32(0, fb.root() + 2)
    return fb.data()


@case("c10_root_offset_above_int32.ort", 10, "bad-offset", "above INT32_MAX", "root offset 0x80000000")
def _():
    fb = fixture("constant")
    fb.put_u32(0, 0x80000000)
    return fb.data()


@case(
    "c10_graph_offset_0.ort",
    10,
    "bad-offset",
    "byte 204: InferenceSession.model.graph: offset 0",
    "Model.graph's uoffset 0",
)
def _():
    fb = fixture("conv")
    fb.put_u32(fb.must(fb.model(), M_GRAPH), 0)
    return fb.data()


@case(
    "c10_graph_offset_past_end.ort",
    10,
    "bad-offset",
    "model.graph: offset 2147483632 leads past the end",
    "Model.graph's uoffset 0x7ffffff0",
)
def _():
    fb = fixture("conv")
    fb.put_u32(fb.must(fb.model(), M_GRAPH), 0x7FFFFFF0)
    return fb.data()


@case(
    "c10_graph_offset_misaligned.ort",
    10,
    "misaligned",
    "table Graph not 4-byte aligned",
    "Model.graph's uoffset + 2",
)
def _():
    fb = fixture("conv")
    p = fb.must(fb.model(), M_GRAPH)
    fb.put_u32(p, fb.u32(p) + 2)
    return fb.data()


@case(
    "c10_nodes_element_0.ort",
    10,
    "bad-offset",
    "graph.nodes[0]: offset 0",
    "a 0 uoffset in Graph.nodes (a vector of tables)",
)
def _():
    fb = fixture("conv")
    fb.put_u32(fb.elem(fb.ref(fb.graph(), G_NODES), 0), 0)
    return fb.data()


@case(
    "c10_outputs_element_0.ort",
    10,
    "bad-offset",
    "graph.outputs[0]: offset 0",
    "a 0 uoffset in Graph.outputs (a vector of strings)",
)
def _():
    fb = fixture("conv")
    fb.put_u32(fb.elem(fb.ref(fb.graph(), G_OUTPUTS), 0), 0)
    return fb.data()


# ---- 11: vtables and fields


def root_vtable_edit(at, value):
    fb = fixture("constant")
    fb.put_u16(fb.vtable(fb.root()) + at, value)
    return fb.data()


@case("c11_vtable_past_end.ort", 11, "bad-vtable", "vtable at", "the root's vtable after the end of the file")
def _():
    fb = fixture("constant")
    fb.put_i32(fb.root(), -len(fb.b))
    return fb.data()


@case("c11_vtable_before_start.ort", 11, "bad-vtable", "vtable at", "the root's vtable before byte 0")
def _():
    fb = fixture("constant")
    fb.put_i32(fb.root(), 0x7FFFFFF0)
    return fb.data()


@case("c11_vtable_misaligned.ort", 11, "bad-vtable", "misaligned", "the root's vtable at an odd byte")
def _():
    fb = fixture("constant")
    fb.put_i32(fb.root(), fb.i32(fb.root()) + 1)
    return fb.data()


@case("c11_vsize_odd.ort", 11, "bad-vtable", "vtable size 3", "vtable size 3")
def _():
    return root_vtable_edit(0, 3)


@case("c11_vsize_2.ort", 11, "bad-vtable", "vtable size 2", "vtable size 2 (below its own 4 bytes)")
def _():
    return root_vtable_edit(0, 2)


@case("c11_vsize_past_end.ort", 11, "bad-vtable", "vtable size 65534", "vtable size 65534 (past the end)")
def _():
    return root_vtable_edit(0, 65534)


@case("c11_tsize_2.ort", 11, "bad-vtable", "table size 2", "table size 2 (below the soffset's 4 bytes)")
def _():
    return root_vtable_edit(2, 2)


@case("c11_tsize_past_end.ort", 11, "bad-vtable", "table size 65520", "table size 65520 (past the end)")
def _():
    return root_vtable_edit(2, 65520)


@case(
    "c11_field_beyond_tsize.ort",
    11,
    "bad-vtable",
    "field ort_version at 12..16 outside",
    "table size 8: ort_version at byte 12 of the table lies outside it",
)
def _():
    return root_vtable_edit(2, 8)


@case(
    "c11_field_in_soffset.ort",
    11,
    "bad-vtable",
    "field ort_version at 2..6 outside",
    "ort_version at byte 2 of its table (inside the soffset)",
)
def _():
    return root_vtable_edit(4 + 2 * IS_ORT_VERSION, 2)


@case(
    "c11_misaligned_u32_field.ort",
    11,
    "misaligned",
    "max_node_index not 4-byte aligned",
    "Graph.max_node_index one byte later",
)
def _():
    fb = fixture("conv")
    g = fb.graph()
    fb.own_vtable(g)
    s = fb.slot(g, G_MAX_NODE_INDEX)
    fb.put_u16(s, fb.u16(s) + 1)
    return fb.data()


@case(
    "c11_misaligned_i64_field.ort",
    11,
    "misaligned",
    "ir_version not 8-byte aligned",
    "Model.ir_version 4 bytes later (4 mod 8)",
)
def _():
    fb = fixture("conv")
    m = fb.model()
    s = fb.slot(m, M_IR_VERSION)
    assert (m + fb.u16(s) + 4) % 8 == 4 and fb.u16(s) + 12 <= fb.u16(fb.vtable(m) + 2)
    fb.put_u16(s, fb.u16(s) + 4)
    return fb.data()


@case(
    "c11_field_id_not_in_schema.ort",
    11,
    "unsupported",
    "field id 4 is not in the schema",
    "InferenceSession with a field id 4 (the schema has 0..3)",
)
def _():
    fb = fixture("constant")
    t = fb.root()
    vt = fb.vtable(t)
    old = bytes(fb.b[vt + 4 : vt + fb.u16(vt)])
    nvt = fb.append(struct.pack("<HH", len(old) + 6, fb.u16(vt + 2)) + old + struct.pack("<H", 4), 2)
    fb.put_i32(t, t - nvt)
    return fb.data()


# ---- 12: vectors and strings


@case("c12_vector_count_past_end.ort", 12, "bad-length-prefix", "nodes", "Graph.nodes claims 0x3fffffff elements")
def _():
    fb = fixture("conv")
    fb.put_u32(fb.ref(fb.graph(), G_NODES), 0x3FFFFFFF)
    return fb.data()


@case(
    "c12_vector_count_overflow.ort",
    12,
    "bad-length-prefix",
    "dims",
    "Tensor.dims claims 0xffffffff 8-byte elements (the byte count overflows 32 bits)",
)
def _():
    fb = fixture("constant")
    fb.put_u32(fb.ref(fb.initializers()[0], T_DIMS), 0xFFFFFFFF)
    return fb.data()


@case(
    "c12_string_length_past_end.ort",
    12,
    "bad-length-prefix",
    "producer_name",
    "Model.producer_name claims 0x7ffffff0 bytes",
)
def _():
    fb = fixture("conv")
    fb.put_u32(fb.ref(fb.model(), M_PRODUCER_NAME), 0x7FFFFFF0)
    return fb.data()


@case("c12_string_without_nul.ort", 12, "unterminated-string", "ort_version", "ort_version's NUL replaced by 'x'")
def _():
    fb = fixture("conv")
    s = fb.ref(fb.root(), IS_ORT_VERSION)
    fb.b[s + 4 + fb.u32(s)] = ord("x")
    return fb.data()


@case("c12_vector_misaligned.ort", 12, "misaligned", "vector length not 4-byte aligned", "Graph.nodes' uoffset + 2")
def _():
    fb = fixture("conv")
    p = fb.must(fb.graph(), G_NODES)
    fb.put_u32(p, fb.u32(p) + 2)
    return fb.data()


@case(
    "c12_int64_elements_misaligned.ort",
    12,
    "misaligned",
    "vector elements not 8-byte aligned",
    "Tensor.dims [5, 5] with its int64 elements at 4 mod 8",
)
def _():
    fb = fixture("constant")
    while len(fb.b) % 8:
        fb.b.append(0)
    v = fb.append(struct.pack("<Iqq", 2, 5, 5))
    assert (v + 4) % 8 == 4
    fb.point(fb.must(fb.initializers()[0], T_DIMS), v)
    return fb.data()


# ---- 13: unions


@case(
    "c13_union_type_unknown.ort",
    13,
    "bad-union",
    "union type 4 unknown",
    "TypeInfo.value_type 4 (TypeInfoValue has 1..3)",
)
def _():
    fb = fixture("constant")
    fb.b[fb.must(fb.type_info(fb.node_args()[0]), TI_VALUE_TYPE)] = 4
    return fb.data()


@case(
    "c13_union_type_without_value.ort",
    13,
    "bad-union",
    "has type 1 but no value",
    "TypeInfo.value_type 1 (tensor) without a value",
)
def _():
    fb = fixture("constant")
    fb.drop(fb.type_info(fb.node_args()[0]), TI_VALUE)
    return fb.data()


@case(
    "c13_union_value_with_none.ort",
    13,
    "bad-union",
    "union value with type NONE",
    "TypeInfo.value_type 0 (NONE) with a value",
)
def _():
    fb = fixture("constant")
    fb.b[fb.must(fb.type_info(fb.node_args()[0]), TI_VALUE_TYPE)] = 0
    return fb.data()


# ---- 14: sharing, overlap, depth, the deprecated session_state


@case(
    "c14_table_referenced_twice.ort",
    14,
    "overlapping-objects",
    "byte 1048: a table (bytes 1048..1060) is also a table",
    "node_args[2] and node_args[1] are one table (a DAG: a small file could describe an exponential tree)",
)
def _():
    fb = fixture("conv")
    v = fb.ref(fb.graph(), G_NODE_ARGS)
    fb.point(fb.elem(v, 2), fb.vec_ref(v, 1))
    return fb.data()


@case(
    "c14_objects_overlap.ort",
    14,
    "overlapping-objects",
    "overlaps a vector",
    "Tensor.raw_data 4 bytes longer, into the dims vector after it",
)
def _():
    fb = fixture("constant")
    t = fb.initializers()[0]
    raw, dims = fb.ref(t, T_RAW_DATA), fb.ref(t, T_DIMS)
    assert raw + 4 + fb.u32(raw) == dims
    fb.put_u32(raw, fb.u32(raw) + 4)
    return fb.data()


@case(
    "c14_deep_type_chain.ort",
    14,
    "nesting-too-deep",
    "deeper than 64",
    "a NodeArg type of 40 nested sequence types (80 tables)",
)
def _():
    fb = fixture("constant")
    at = fb.must(fb.node_args()[0], VI_TYPE)
    ti_vt = seq_vt = None
    for _ in range(40):  # TypeInfo{value_type: sequence, value: SequenceType{elem_type: TypeInfo{...}}}
        ti, pos, ti_vt = fb.add_table([(TI_VALUE, 4, None), (TI_VALUE_TYPE, 1, TYPE_INFO_SEQUENCE)], ti_vt)
        fb.point(at, ti)
        seq, spos, seq_vt = fb.add_table([(0, 4, None)], seq_vt)
        fb.point(pos[TI_VALUE], seq)
        at = spos[0]
    ti, _pos, _vt = fb.add_table([(TI_VALUE_TYPE, 1, 0)])
    fb.point(at, ti)
    return fb.data()


@case(
    "c14_deep_subgraph_chain.ort",
    14,
    "nesting-too-deep",
    "deeper than 64",
    "the main graph replaced by 25 nested Graph -> Node -> Attribute (GRAPH) levels",
)
def _():
    fb = fixture("conv")
    at = fb.must(fb.model(), M_GRAPH)
    g_vt = n_vt = a_vt = None
    for _ in range(25):
        g, gpos, g_vt = fb.add_table([(G_NODES, 4, None)], g_vt)
        fb.point(at, g)
        nodes = fb.add_ref_vector(1)
        fb.point(gpos[G_NODES], nodes)
        n, npos, n_vt = fb.add_table([(N_ATTRIBUTES, 4, None)], n_vt)
        fb.point(fb.elem(nodes, 0), n)
        attrs = fb.add_ref_vector(1)
        fb.point(npos[N_ATTRIBUTES], attrs)
        a, apos, a_vt = fb.add_table([(A_G, 4, None), (A_TYPE, 4, ATTR_GRAPH)], a_vt)
        fb.point(fb.elem(attrs, 0), a)
        at = apos[A_G]
    g, _gpos, _vt = fb.add_table([(G_MAX_NODE_INDEX, 4, 0)])
    fb.point(at, g)
    return fb.data()


@case(
    "c14_session_state_verified.ort",
    14,
    "bad-length-prefix",
    "session_state.kernels.node_indices",
    "a deprecated session_state whose kernels.node_indices claims 0x3fffffff elements (verified, though never read)",
)
def _():
    fb = fixture("constant")
    t = fb.root()
    # the resolver's 4 bytes in the root table become session_state's
    off = fb.u16(fb.slot(t, IS_RESOLVER))
    fb.put_u16(fb.slot(t, IS_RESOLVER), 0)
    fb.put_u16(fb.slot(t, IS_SESSION_STATE), off)
    ss, spos, _vt = fb.add_table([(DSS_KERNELS, 4, None)])
    fb.point(t + off, ss)
    k, kpos, _vt = fb.add_table([(DKCI_NODE_INDICES, 4, None)])
    fb.point(spos[DSS_KERNELS], k)
    v = fb.add_vector(0x3FFFFFFF, struct.pack("<I", 0))
    fb.point(kpos[DKCI_NODE_INDICES], v)
    return fb.data()


# ---- 15: missing parts


@case("c15_model_missing.ort", 15, "missing-field", "no model", "InferenceSession without a model")
def _():
    fb = fixture("constant")
    fb.drop(fb.root(), IS_MODEL)
    return fb.data()


@case("c15_graph_missing.ort", 15, "missing-field", "no graph", "Model without a graph")
def _():
    fb = fixture("constant")
    fb.drop(fb.model(), M_GRAPH)
    return fb.data()


@case("c15_node_without_op_type.ort", 15, "missing-field", "node 0 ('') has no op_type", "Node without op_type")
def _():
    fb = fixture("conv")
    fb.drop(fb.nodes()[0], N_OP_TYPE)
    return fb.data()


@case(
    "c15_nodearg_without_name.ort",
    15,
    "missing-field",
    "node_args[0] has a type but no name",
    "a typed NodeArg without a name",
)
def _():
    fb = fixture("conv")
    fb.drop(fb.node_args()[0], VI_NAME)
    return fb.data()


@case(
    "c15_attribute_without_name.ort",
    15,
    "missing-field",
    "an attribute has no name",
    "Conv's 'group' attribute without a name",
)
def _():
    fb = fixture("conv")
    fb.drop(fb.attribute(fb.nodes()[0], b"group"), A_NAME)
    return fb.data()


@case("c15_tensor_without_dims.ort", 15, "missing-field", "'values' has no dims", "initializer without dims")
def _():
    fb = fixture("constant")
    fb.drop(fb.initializers()[0], T_DIMS)
    return fb.data()


@case(
    "c15_tensor_without_raw_data.ort",
    15,
    "missing-field",
    "'values': no raw_data",
    "FLOAT initializer without raw_data",
)
def _():
    fb = fixture("constant")
    fb.drop(fb.initializers()[0], T_RAW_DATA)
    return fb.data()


@case(
    "c15_string_tensor_with_raw_data.ort",
    15,
    "bad-dtype",
    "string tensor with raw_data",
    "STRING initializer with raw_data",
)
def _():
    fb = fixture("constant")
    fb.put_i32(fb.must(fb.initializers()[0], T_DATA_TYPE), 8)
    return fb.data()


# ---- 16: duplicate names


@case(
    "c16_initializer_twice.ort",
    16,
    "duplicate-initializer",
    "initializer 'one' is defined twice",
    "the Loop body's initializers 'one' and 'x' both named 'one'",
)
def _():
    fb = fixture("loop")
    inits = fb.initializers(fb.loop_body())
    assert fb.string(fb.ref(inits[0], T_NAME)) == b"one"
    fb.set_string(inits[1], T_NAME, b"one")
    return fb.data()


@case(
    "c16_nodearg_twice.ort",
    16,
    "duplicate-name",
    "NodeArg 'y' is listed twice",
    "NodeArgs 'y' and 'W' both named 'y'",
)
def _():
    fb = fixture("conv")
    fb.set_string(fb.node_args()[1], VI_NAME, b"y")
    return fb.data()


@case("c16_graph_input_twice.ort", 16, "duplicate-name", "graph input 'x' is listed twice", "graph inputs ['x', 'x']")
def _():
    fb = fixture("conv")
    fb.set_elem_string(fb.ref(fb.graph(), G_INPUTS), 1, b"x")
    return fb.data()


@case(
    "c16_attribute_twice.ort",
    16,
    "duplicate-name",
    "attribute 'strides' appears twice",
    "Conv's attributes 'pads' and 'strides' both named 'strides'",
)
def _():
    fb = fixture("conv")
    fb.set_string(fb.attribute(fb.nodes()[0], b"pads"), A_NAME, b"strides")
    return fb.data()


@case(
    "c16_output_produced_twice.ort",
    16,
    "duplicate-producer",
    "value 'end' is produced by",
    "the body's last Identity also writes 'end' (the first Add's output)",
)
def _():
    fb = fixture("loop")
    nodes = fb.nodes(fb.loop_body())
    assert fb.string(fb.vec_ref(fb.ref(nodes[1], N_OUTPUTS), 0)) == b"end"
    fb.set_elem_string(fb.ref(nodes[6], N_OUTPUTS), 0, b"end")
    return fb.data()


# ---- 17: dangling references


@case("c17_node_input_no_nodearg.ort", 17, "dangling-input", "input 'nowhere'", "Conv's input 0 names no NodeArg")
def _():
    fb = fixture("conv")
    fb.set_elem_string(fb.ref(fb.nodes()[0], N_INPUTS), 0, b"nowhere")
    return fb.data()


@case("c17_node_output_no_nodearg.ort", 17, "dangling-input", "output 'nowhere'", "Conv's output 0 names no NodeArg")
def _():
    fb = fixture("conv")
    fb.set_elem_string(fb.ref(fb.nodes()[0], N_OUTPUTS), 0, b"nowhere")
    return fb.data()


@case(
    "c17_implicit_input_no_nodearg.ort",
    17,
    "dangling-input",
    "implicit input 'nowhere'",
    "the Loop's implicit_inputs ['nowhere']",
)
def _():
    fb = fixture("loop")
    v = fb.add_ref_vector(1)
    fb.point(fb.must(fb.nodes()[0], N_IMPLICIT_INPUTS), v)
    fb.point(fb.elem(v, 0), fb.add_string(b"nowhere"))
    return fb.data()


@case("c17_graph_input_no_nodearg.ort", 17, "dangling-input", "graph input 'nowhere'", "graph input 0 names no NodeArg")
def _():
    fb = fixture("conv")
    fb.set_elem_string(fb.ref(fb.graph(), G_INPUTS), 0, b"nowhere")
    return fb.data()


@case(
    "c17_graph_output_no_nodearg.ort",
    17,
    "unproduced-output",
    "graph output 'nowhere'",
    "graph output 0 names no NodeArg",
)
def _():
    fb = fixture("conv")
    fb.set_elem_string(fb.ref(fb.graph(), G_OUTPUTS), 0, b"nowhere")
    return fb.data()


def body_edge(fb, node_index):
    """The Loop body's NodeEdge for a node index (0, the default, is not stored)."""
    body = fb.loop_body()
    for e in fb.edges(body):
        p = fb.field(e, E_NODE_INDEX)
        if (fb.u32(p) if p else 0) == node_index:
            return e
    raise KeyError(node_index)


@case(
    "c17_node_edge_no_node.ort",
    17,
    "dangling-input",
    "node_edges[1] names node index 999",
    "a NodeEdge for node index 999",
)
def _():
    fb = fixture("loop")
    fb.put_u32(fb.must(body_edge(fb, 1), E_NODE_INDEX), 999)
    return fb.data()


@case(
    "c17_node_edge_twice.ort",
    17,
    "duplicate-name",
    "node index 1 has two NodeEdges",
    "two NodeEdges for node index 1",
)
def _():
    fb = fixture("loop")
    fb.put_u32(fb.must(body_edge(fb, 2), E_NODE_INDEX), 1)
    return fb.data()


@case("c17_edge_end_no_node.ort", 17, "dangling-input", "names node index 999", "an EdgeEnd naming node index 999")
def _():
    fb = fixture("loop")
    v = fb.ref(body_edge(fb, 3), E_INPUT_EDGES)
    assert fb.vec_len(v) == 1
    fb.put_u32(v + 4, 999)
    return fb.data()


@case(
    "c17_edge_end_arg_out_of_range.ort",
    17,
    "bad-arity",
    "argument 77 -> 0 out of range",
    "an EdgeEnd's src_arg_index 77",
)
def _():
    fb = fixture("loop")
    v = fb.ref(body_edge(fb, 3), E_INPUT_EDGES)
    fb.put_i32(v + 4 + 4, 77)
    return fb.data()


@case(
    "c17_edge_end_arg_negative.ort",
    17,
    "bad-arity",
    "argument 0 -> -1 out of range",
    "an EdgeEnd's dst_arg_index -1",
)
def _():
    fb = fixture("loop")
    v = fb.ref(body_edge(fb, 3), E_INPUT_EDGES)
    fb.put_i32(v + 4 + 8, -1)
    return fb.data()


@case(
    "c17_edge_joins_other_values.ort",
    17,
    "dangling-input",
    "joins output 'slice_start' to input 'slice_end'",
    "an EdgeEnd from Unsqueeze's 'slice_start' into Slice's 'slice_end' input",
)
def _():
    fb = fixture("loop")
    v = fb.ref(body_edge(fb, 4), E_INPUT_EDGES)
    assert struct.unpack_from("<Iii", fb.b, v + 4) == (2, 0, 1)
    fb.put_i32(v + 4 + 8, 2)
    return fb.data()


@case(
    "c17_input_arg_counts_sum.ort",
    17,
    "bad-arity",
    "input_arg_counts sum to 3 for 2 inputs",
    "Conv's input_arg_counts [1, 1, 1] for 2 inputs",
)
def _():
    fb = fixture("conv")
    v = fb.ref(fb.nodes()[0], N_INPUT_ARG_COUNTS)
    assert fb.vec_len(v) == 3
    fb.put_i32(v + 4 + 8, 1)
    return fb.data()


@case(
    "c17_input_arg_counts_negative.ort",
    17,
    "bad-arity",
    "input_arg_counts[2] = -1",
    "Conv's input_arg_counts [1, 1, -1]",
)
def _():
    fb = fixture("conv")
    v = fb.ref(fb.nodes()[0], N_INPUT_ARG_COUNTS)
    fb.put_i32(v + 4 + 8, -1)
    return fb.data()


@case(
    "c17_runtime_optimization_no_node.ort",
    17,
    "dangling-input",
    "runtime optimization record names node index 999",
    "a runtime optimization record naming node index 999",
)
def _():
    fb = fixture("conv")
    g = fb.graph()
    # a vtable with a slot for runtime_optimizations; the empty sparse_initializers' 4 bytes become its offset
    vt = fb.vtable(g)
    old = bytearray(fb.b[vt + 4 : vt + fb.u16(vt)])
    assert len(old) == 2 * G_RUNTIME_OPTIMIZATIONS
    off = struct.unpack_from("<H", old, 2 * G_SPARSE_INITIALIZERS)[0]
    struct.pack_into("<H", old, 2 * G_SPARSE_INITIALIZERS, 0)
    nvt = fb.append(struct.pack("<HH", 4 + len(old) + 2, fb.u16(vt + 2)) + bytes(old) + struct.pack("<H", off), 2)
    fb.put_i32(g, g - nvt)
    ro, ropos, _vt = fb.add_table([(0, 4, None)])  # RuntimeOptimizations.records
    fb.point(g + off, ro)
    entries = fb.add_ref_vector(1)
    fb.point(ropos[0], entries)
    e, epos, _vt = fb.add_table([(0, 4, None), (1, 4, None)])  # optimizer_name, runtime_optimization_records
    fb.point(fb.elem(entries, 0), e)
    fb.point(epos[0], fb.add_string(b"ConvActivationFusion"))
    recs = fb.add_ref_vector(1)
    fb.point(epos[1], recs)
    r, rpos, _vt = fb.add_table([(0, 4, None), (1, 4, None)])  # action_id, nodes_to_optimize_indices
    fb.point(fb.elem(recs, 0), r)
    fb.point(rpos[0], fb.add_string(b"FuseConvAct"))
    nto, npos, _vt = fb.add_table([(0, 4, None)])  # node_indices
    fb.point(rpos[1], nto)
    fb.point(npos[0], fb.add_vector(2, struct.pack("<II", 0, 999)))
    return fb.data()


@case(
    "c17_kernel_type_str_arg_index.ort",
    17,
    "bad-arity",
    "input index 99, but Conv-11 has 3 formal inputs",
    "the kernel type string resolver binds Conv's 'T' to input 99 (Conv has 3)",
)
def _():
    fb = fixture("conv")
    entries = fb.vec_refs(fb.ref(fb.ref(fb.root(), IS_RESOLVER), KR_ENTRIES))
    assert len(entries) == 1 and fb.string(fb.ref(entries[0], 0)) == b":Conv:11"
    arg = fb.vec_refs(fb.ref(fb.vec_refs(fb.ref(entries[0], KE_ARGS))[0], KA_ARGS))[1]
    fb.put_u32(fb.must(arg, AT_INDEX), 99)
    return fb.data()


# ---- 18: node indices


@case("c18_node_index_twice.ort", 18, "duplicate-name", "share index 1", "two body nodes with index 1")
def _():
    fb = fixture("loop")
    fb.put_u32(fb.must(fb.nodes(fb.loop_body())[2], N_INDEX), 1)
    return fb.data()


@case(
    "c18_node_index_at_max.ort",
    18,
    "bad-value",
    "index 0, not below max_node_index 0",
    "max_node_index 0 with a node at index 0",
)
def _():
    fb = fixture("conv")
    fb.put_u32(fb.must(fb.graph(), G_MAX_NODE_INDEX), 0)
    return fb.data()


@case(
    "c18_node_index_above_max.ort",
    18,
    "bad-value",
    "index 1000, not below max_node_index 7",
    "a body node with index 1000 (max_node_index 7)",
)
def _():
    fb = fixture("loop")
    fb.put_u32(fb.must(fb.nodes(fb.loop_body())[6], N_INDEX), 1000)
    return fb.data()


@case(
    "c18_max_node_index_absurd.ort",
    18,
    "over-budget",
    "max_node_index 4294967295 exceeds the budget",
    "max_node_index 0xffffffff in a 2 KiB file (a loader sizing its node slots by it allocates 32 GiB)",
)
def _():
    fb = fixture("conv")
    fb.put_u32(fb.must(fb.graph(), G_MAX_NODE_INDEX), 0xFFFFFFFF)
    return fb.data()


# ---- 19: cycles (beyond the brief's classes, cheap to make)


@case("c19_node_reads_own_output.ort", 19, "cycle", "has a cycle through node", "Conv reads its own output 'y'")
def _():
    fb = fixture("conv")
    fb.set_elem_string(fb.ref(fb.nodes()[0], N_INPUTS), 0, b"y")
    return fb.data()


# ---- 20: operators, domains, attribute types


@case("c20_unknown_op.ort", 20, "unknown-op", "unknown operator Conx", "op_type 'Conx'")
def _():
    fb = fixture("conv")
    s = fb.ref(fb.nodes()[0], N_OP_TYPE)
    fb.b[s + 4 + 3] = ord("x")
    return fb.data()


@case(
    "c20_unknown_domain.ort",
    20,
    "unknown-domain",
    "uses domain 'com.example'",
    "a node in domain 'com.example' (not imported)",
)
def _():
    fb = fixture("conv")
    fb.set_string(fb.nodes()[0], N_DOMAIN, b"com.example")
    return fb.data()


@case("c20_since_version_0.ort", 20, "bad-opset", "since_version 0", "Node.since_version 0")
def _():
    fb = fixture("conv")
    fb.put_i32(fb.must(fb.nodes()[0], N_SINCE_VERSION), 0)
    return fb.data()


@case(
    "c20_since_version_above_opset.ort",
    20,
    "bad-opset",
    "since_version 12 outside 1..11",
    "Node.since_version 12 in an opset-11 model",
)
def _():
    fb = fixture("conv")
    fb.put_i32(fb.must(fb.nodes()[0], N_SINCE_VERSION), 12)
    return fb.data()


@case(
    "c20_attribute_type_mismatch.ort",
    20,
    "attribute-type",
    "type 1 with a value in field id 4",
    "'group' declared FLOAT with its value in i",
)
def _():
    fb = fixture("conv")
    fb.put_i32(fb.must(fb.attribute(fb.nodes()[0], b"group"), A_TYPE), 1)
    return fb.data()


@case(
    "c20_attribute_type_undefined.ort",
    20,
    "attribute-type",
    "type 0 with a value",
    "'group' declared UNDEFINED with its value in i",
)
def _():
    fb = fixture("conv")
    fb.put_i32(fb.must(fb.attribute(fb.nodes()[0], b"group"), A_TYPE), 0)
    return fb.data()


@case("c20_fused_node.ort", 20, "unsupported", "fused node", "Node.type Fused (its function is not in the file)")
def _():
    return node_with_type(1)


# ---- 21: dims


def constant_dims(dims):
    """constant's initializer with its dims replaced by an appended (aligned) vector."""
    fb = fixture("constant")
    v = fb.add_vector(len(dims), b"".join(struct.pack("<q", d) for d in dims), 8)
    fb.point(fb.must(fb.initializers()[0], T_DIMS), v)
    return fb.data()


@case("c21_negative_dim.ort", 21, "negative-dim", "dims[0] is negative (-5)", "initializer dims [-5, 5]")
def _():
    fb = fixture("constant")
    fb.put_i64(fb.ref(fb.initializers()[0], T_DIMS) + 4, -5)
    return fb.data()


@case(
    "c21_dims_overflow.ort",
    21,
    "size-overflow",
    "element count overflows",
    "initializer dims [2^62, 2^62] (element count overflows)",
)
def _():
    return constant_dims([1 << 62, 1 << 62])


@case("c21_rank_65.ort", 21, "over-budget", "rank 65 exceeds", "initializer of rank 65 (dims all 1)")
def _():
    return constant_dims([1] * 65)


# ---- 22: tensor data


@case(
    "c22_raw_data_short.ort",
    22,
    "data-size-mismatch",
    "raw_data has 96 bytes but 25 float elements need 100",
    "raw_data of 96 bytes for 25 floats",
)
def _():
    fb = fixture("constant")
    raw = fb.ref(fb.initializers()[0], T_RAW_DATA)
    fb.put_u32(raw, fb.u32(raw) - 4)
    return fb.data()


@case(
    "c22_raw_data_wrong_dtype.ort",
    22,
    "data-size-mismatch",
    "25 double elements need 200",
    "data_type DOUBLE: 100 bytes of raw_data for 25 doubles",
)
def _():
    fb = fixture("constant")
    fb.put_i32(fb.must(fb.initializers()[0], T_DATA_TYPE), 11)
    return fb.data()


@case(
    "c22_data_type_undefined.ort",
    22,
    "bad-dtype",
    "initializer 'values': data_type is UNDEFINED",
    "initializer data_type 0 (UNDEFINED)",
)
def _():
    fb = fixture("constant")
    fb.put_i32(fb.must(fb.initializers()[0], T_DATA_TYPE), 0)
    return fb.data()


# ---- 23: sparse tensors (beyond the brief's classes, cheap to make)


@case("c23_sparse_initializer.ort", 23, "unsupported", "sparse initializers", "one (empty) sparse initializer")
def _():
    fb = fixture("conv")
    v = fb.add_ref_vector(1)
    fb.point(fb.must(fb.graph(), G_SPARSE_INITIALIZERS), v)
    t, _pos, _vt = fb.add_table([])
    fb.point(fb.elem(v, 0), t)
    return fb.data()


# ---- 24: shapes in types


@case(
    "c24_dim_value_negative.ort",
    24,
    "negative-dim",
    "dimension 0 is negative (-5)",
    "a NodeArg shape with dim_value -5",
)
def _():
    fb = fixture("constant")
    fb.put_i64(fb.must(fb.first_dim_value(fb.node_args()[0]), DV_DIM_VALUE), -5)
    return fb.data()


# ---- 25: external data


def with_external_offset(value):
    """constant's initializer rebuilt at the end of the file with an external_data_offset (the fixture's
    Tensor has no room for the 8-byte field): the initializers vector points at the new table."""
    fb = fixture("constant")
    old = fb.initializers()[0]
    t, pos, _vt = fb.add_table(
        [
            (T_EXTERNAL_DATA_OFFSET, 8, value),
            (T_NAME, 4, None),
            (T_DIMS, 4, None),
            (T_RAW_DATA, 4, None),
            (T_DATA_TYPE, 4, fb.i32(fb.must(old, T_DATA_TYPE))),
        ]
    )
    fb.point(fb.elem(fb.ref(fb.graph(), G_INITIALIZERS), 0), t)
    fb.point(pos[T_NAME], fb.add_string(fb.string(fb.ref(old, T_NAME))))
    dims = fb.ref(old, T_DIMS)
    fb.point(pos[T_DIMS], fb.add_vector(fb.u32(dims), bytes(fb.b[dims + 4 : dims + 4 + 8 * fb.u32(dims)]), 8))
    raw = fb.ref(old, T_RAW_DATA)
    fb.point(pos[T_RAW_DATA], fb.add_vector(fb.u32(raw), bytes(fb.b[raw + 4 : raw + 4 + fb.u32(raw)])))
    return fb.data()


@case(
    "c25_external_data_offset_0.ort",
    25,
    "bad-external-data",
    "external_data_offset 0",
    "initializer with external_data_offset 0",
)
def _():
    return with_external_offset(0)


@case(
    "c25_external_data_offset_64.ort",
    25,
    "bad-external-data",
    "external_data_offset 64",
    "initializer with external_data_offset 64",
)
def _():
    return with_external_offset(64)


@case(
    "c25_external_data_offset_minus_2.ort",
    25,
    "bad-external-data",
    "external_data_offset -2",
    "initializer with external_data_offset -2 (only -1 means none)",
)
def _():
    return with_external_offset(-2)


# ---- 26: resource limits


@case(
    "c26_huge_dims_small_data.ort",
    26,
    "data-size-mismatch",
    "raw_data has 100 bytes but 281474976710656 float elements",
    "dims [2^16, 2^16, 2^16] (2^50 bytes) with 100 bytes of raw_data: refused before any allocation",
)
def _():
    return constant_dims([1 << 16, 1 << 16, 1 << 16])


# ---- output


def manifest():
    lines = [
        "# tests/bad-ort: file, the status `passcheck info FILE` must print, a substring of its message.",
        "# Written by make_bad_ort.py (edit the case there, then rerun it); checked by run_bad_ort.sh.",
    ]
    for name, _cls, status, needle, _what, _make in CASES:
        lines.append("%s\t%s\t%s" % (name, status, needle))
    return ("\n".join(lines) + "\n").encode()


def readme_table(readme):
    rows = ["| file | class | what is wrong | expected status |", "|---|---|---|---|"]
    for name, cls, status, _needle, what, _make in CASES:
        rows.append("| `%s` | %d | %s | `%s` |" % (name, cls, what.replace("|", "\\|"), status))
    begin, end = readme.index(TABLE_BEGIN), readme.index(TABLE_END)
    return readme[: begin + len(TABLE_BEGIN)] + "\n" + "\n".join(rows) + "\n" + readme[end:]


def outputs():
    out = {}
    for name, _cls, _status, _needle, _what, make in CASES:
        assert name not in out, "two cases named " + name
        data = make()
        assert len(data) < MAX_FILE, "%s: %d bytes" % (name, len(data))
        out[name] = data
    out["expected.tsv"] = manifest()
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        out["README.md"] = readme_table(f.read()).encode("utf-8")
    return out


def main(argv):
    if argv not in ([], ["--check"]):
        sys.stderr.write("usage: make_bad_ort.py [--check]\n")
        return 2
    want = outputs()
    stale = sorted(f for f in os.listdir(HERE) if f.endswith(".ort") and f not in want)
    if argv == ["--check"]:
        bad = list(stale)
        for name, data in sorted(want.items()):
            path = os.path.join(HERE, name)
            if not os.path.exists(path) or open(path, "rb").read() != data:
                bad.append(name)
        for name in bad:
            print("make_bad_ort.py --check: %s differs from what the generator writes" % name)
        return 1 if bad else 0
    for name in stale:
        os.remove(os.path.join(HERE, name))
    for name, data in sorted(want.items()):
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
    print("make_bad_ort.py: wrote %d files, expected.tsv and README.md's table" % len(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
