"""Shared by the reference-case generators: build small ONNX models and write them as ONNX backend-test
cases,

    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_0/input_K.pb, output_K.pb

which `passcheck conformance OUT` runs. Expected outputs are computed by each generator with numpy; nothing
here runs our executor. Bad-input generators also write OUT/expected-outcomes.txt (see BadCases), which
run.sh checks.
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def out_dir_from_argv():
    """The generator's one argument: the directory to write cases into (created if missing)."""
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: %s OUT_DIR" % os.path.basename(sys.argv[0]))
    os.makedirs(sys.argv[1], exist_ok=True)
    return sys.argv[1]


class Empty:
    """An empty tensor whose other dims are too large for numpy (whose size arithmetic overflows on, say,
    [3**20, 0, 3**20]): a value for tensor_vi / encode / single_node_case holding only dims and a dtype."""

    def __init__(self, dims, dtype=np.float32):
        assert 0 in dims, dims
        self.shape = tuple(dims)
        self.dtype = np.dtype(dtype)


def tensor_type(dtype):
    """ONNX element type of a numpy dtype (object arrays hold strings)."""
    dtype = np.dtype(dtype)
    if dtype == np.dtype(object):
        return TensorProto.STRING
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[dtype]


def tensor_vi(name, value=None, elem_type=None, shape=None):
    """A tensor value info: type and shape from `value` unless given (shape None = unknown rank)."""
    if isinstance(value, Empty):
        elem_type, shape = tensor_type(value.dtype), value.shape
    if elem_type is None:
        elem_type = tensor_type(np.asarray(value).dtype)
    if shape is None and value is not None:
        shape = np.shape(value)
    return helper.make_tensor_value_info(name, elem_type, shape)


def seq_vi(name, elem_type, shape=None):
    elem = helper.make_tensor_type_proto(elem_type, shape)
    return helper.make_value_info(name, helper.make_sequence_type_proto(elem))


def encode(name, value):
    """A data file's proto: a numpy array (or scalar) is a TensorProto, a Python list a SequenceProto."""
    if isinstance(value, list):
        return numpy_helper.from_list([np.asarray(v) for v in value], name)
    if isinstance(value, Empty):
        t = TensorProto(name=name, data_type=tensor_type(value.dtype))
        t.dims.extend(value.shape)
        return t
    return numpy_helper.from_array(np.asarray(value), name)


def make_model(nodes, name, inputs_vi, outputs_vi, opset, ir_version=8, initializers=()):
    graph = helper.make_graph(nodes, name, inputs_vi, outputs_vi, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def write_case(out_dir, name, model, inputs, outputs):
    """Write one case. inputs/outputs: lists of (graph value name, value); values as for encode()."""
    case_dir = os.path.join(out_dir, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for kind, values in (("input", inputs), ("output", outputs)):
        for k, (vname, value) in enumerate(values):
            with open(os.path.join(data_dir, "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(encode(vname, value).SerializeToString())


def single_node_case(out_dir, name, op, inputs, outputs, opset, attrs=None, ir_version=7, in_prefix="in",
                     out_prefix="out"):
    """One node `op` fed by graph inputs in0, in1, ... (None in `inputs` = an omitted optional input, node
    input ''), producing graph outputs out0, out1, ... whose expected values are `outputs`."""
    node_in, feeds, vis = [], [], []
    for i, x in enumerate(inputs):
        if x is None:
            node_in.append("")
            continue
        n = "%s%d" % (in_prefix, i)
        node_in.append(n)
        feeds.append((n, x))
        vis.append(tensor_vi(n, x))
    outs = [("%s%d" % (out_prefix, i), y) for i, y in enumerate(outputs)]
    node = helper.make_node(op, node_in, [n for n, _ in outs], **(attrs or {}))
    model = make_model([node], name, vis, [tensor_vi(n, y) for n, y in outs], opset, ir_version)
    write_case(out_dir, name, model, feeds, outs)


class BadCases:
    """Writes malformed cases, each with the outcome run.sh must see, into OUT/expected-outcomes.txt:

        error        load-error or run-error with the executor's own error code ("[bad-shape] ...")
        unsupported  the executor declines it (PC_ERR_UNSUPPORTED), e.g. behaviour the spec leaves undefined

    Never passed, never a crash, a sanitizer report or a timeout. Expected outputs are dummies (the executor
    must not get as far as comparing them)."""

    OUTCOMES = ("error", "unsupported")

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.lines = []
        self.names = set()

    def add(self, name, model, inputs, outputs, expect="error", why=""):
        """inputs: (name, value) pairs; outputs: graph output names (each gets a dummy float[1] file) or
        (name, dummy value) pairs."""
        assert expect in self.OUTCOMES, expect
        assert name not in self.names, "duplicate case " + name
        self.names.add(name)
        outs = [o if isinstance(o, tuple) else (o, np.zeros(1, np.float32)) for o in outputs]
        write_case(self.out_dir, name, model, inputs, outs)
        self.lines.append("%s %s%s" % (name, expect, "  # " + why if why else ""))

    def single_node(self, name, op, inputs, opset, attrs=None, n_out=1, out_type=TensorProto.FLOAT,
                    outputs=None, expect="error", why="", ir_version=7, in_prefix="in", out_prefix="out"):
        """One node `op` on graph inputs in0, in1, ... (None = omitted input). Outputs are declared `out_type`
        (one type, or a list of one per output) of unknown shape with dummy float[1] files, or, with `outputs` (dummy arrays), typed and shaped by
        those."""
        node_in, feeds, vis = [], [], []
        for i, x in enumerate(inputs):
            if x is None:
                node_in.append("")
                continue
            n = "%s%d" % (in_prefix, i)
            node_in.append(n)
            feeds.append((n, x))
            vis.append(tensor_vi(n, x))
        if outputs is None:
            types = list(out_type) if isinstance(out_type, (list, tuple)) else [out_type] * n_out
            outs = [("%s%d" % (out_prefix, i), np.zeros(1, np.float32)) for i in range(len(types))]
            out_vis = [tensor_vi(n, elem_type=t) for (n, _), t in zip(outs, types)]
        else:
            outs = [("%s%d" % (out_prefix, i), y) for i, y in enumerate(outputs)]
            out_vis = [tensor_vi(n, y) for n, y in outs]
        node = helper.make_node(op, node_in, [n for n, _ in outs], **(attrs or {}))
        self.add(name, make_model([node], name, vis, out_vis, opset, ir_version), feeds, outs, expect, why)

    def close(self):
        with open(os.path.join(self.out_dir, "expected-outcomes.txt"), "w") as f:
            f.write("# case expected-outcome (error | unsupported), written by %s\n"
                    % os.path.basename(sys.argv[0]))
            f.write("\n".join(self.lines) + "\n")
