#!/usr/bin/python3
"""TF-style NHWC models for the transpose-count comparison with ONNX Runtime (tests/nhwc-models/README.md).

Every model is what a TensorFlow converter emits: an NHWC graph input, Transpose(0,3,1,2) in front of each
layout-sensitive op (Conv, pools, BatchNormalization, Resize, ...), Transpose(0,2,3,1) after it, and long runs of
layout-agnostic ops in NHWC between them, with branches and several outputs. The set is fixed: each model has its
own seed, so the same script gives the same files.

usage: gen_nhwc_models.py OUT_DIR
Writes OUT_DIR/<name>.onnx for every model and OUT_DIR/manifest.tsv, one line per model:
"name<TAB>rtol<TAB>atol<TAB>input:d0,d1,..;...<TAB>note" (every input is float).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TO_NCHW = [0, 3, 1, 2]
TO_NHWC = [0, 2, 3, 1]

# Default comparison tolerance of an optimized model against the original, both run by ONNX Runtime with its own
# optimizations disabled. Not bit-exact: folding BatchNormalization/Add/Mul into Conv weights changes the order of
# float roundings (w*s summed vs summed then scaled), and a reduction over permuted data may add in another order.
RTOL, ATOL = 1e-5, 1e-6


class Builder:
    """Collects nodes, initializers and I/O; shapes come from onnx shape inference on demand."""

    def __init__(self, name, opset, seed):
        self.name = name
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0
        self.shapes = {}
        self.dtypes = {}
        self.rtol, self.atol, self.note = RTOL, ATOL, ""

    def fresh(self, hint):
        self.count += 1
        return f"{hint}_{self.count}"

    def input(self, shape, hint="input"):
        name = self.fresh(hint)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        self.shapes[name] = list(shape)
        self.dtypes[name] = TensorProto.FLOAT
        return name

    def const(self, array, hint="c"):
        name = self.fresh(hint)
        tensor = numpy_helper.from_array(np.asarray(array), name)
        self.inits.append(tensor)
        self.shapes[name] = list(tensor.dims)
        self.dtypes[name] = tensor.data_type
        return name

    def weights(self, shape, scale=0.2, hint="w"):
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), hint)

    def op(self, op_type, inputs, n_out=1, hint=None, **attrs):
        outs = [self.fresh(hint or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.fresh("n_" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                 producer_name="passcheck-gen_nhwc_models")

    def infer(self):
        inferred = onnx.shape_inference.infer_shapes(self.model(), strict_mode=True)
        for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
            t = vi.type.tensor_type
            self.dtypes[vi.name] = t.elem_type
            if t.HasField("shape"):
                self.shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
            else:
                self.shapes[vi.name] = None  # rank unknown (e.g. Reshape to a computed shape)

    def shape(self, name):
        if name not in self.shapes:
            self.infer()
        return self.shapes[name]

    def output(self, name, shape=None):
        """shape: the declared shape when inference cannot know it (None dims are unknown)."""
        self.shape(name)
        self.outputs.append(helper.make_tensor_value_info(name, self.dtypes[name], shape or self.shapes[name]))
        return name

    # ---- layout helpers -------------------------------------------------------------------------------------
    def t(self, x, perm):
        return self.op("Transpose", [x], perm=perm)

    def nchw(self, x):
        return self.t(x, TO_NCHW)

    def nhwc(self, x):
        return self.t(x, TO_NHWC)

    # ---- layout-sensitive ops (NCHW) -------------------------------------------------------------------------
    def conv(self, x, cout, k=3, stride=1, group=1, bias=True, dilation=1):
        cin = self.shape(x)[1]
        w = self.weights([cout, cin // group, k, k], scale=1.0 / np.sqrt(cin * k * k / group))
        ins = [x, w] + ([self.weights([cout], 0.1, "b")] if bias else [])
        pad = dilation * (k - 1) // 2
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group,
                       dilations=[dilation, dilation])

    def bn(self, x):
        c = self.shape(x)[1]
        scale = (1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32)
        b = (0.1 * self.rng.standard_normal(c)).astype(np.float32)
        mean = (0.1 * self.rng.standard_normal(c)).astype(np.float32)
        var = (1.0 + 0.2 * self.rng.random(c)).astype(np.float32)
        return self.op("BatchNormalization", [x, self.const(scale), self.const(b), self.const(mean),
                                              self.const(var)], epsilon=1e-5)

    def maxpool(self, x, k=2, stride=2):
        return self.op("MaxPool", [x], kernel_shape=[k, k], strides=[stride, stride])

    def avgpool(self, x, k=3, stride=1):
        return self.op("AveragePool", [x], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4,
                       count_include_pad=0)

    def resize(self, x, factor=2.0, mode="nearest"):
        scales = self.const(np.array([1, 1, factor, factor], np.float32), "scales")
        return self.op("Resize", [x, "", scales], mode=mode)

    # ---- NHWC layout-agnostic ops ----------------------------------------------------------------------------
    def unary(self, op_type, x, **attrs):
        return self.op(op_type, [x], **attrs)

    def binary_const(self, op_type, x, shape, scale=0.5, offset=0.0, const_first=False):
        c = self.const((self.rng.standard_normal(shape) * scale + offset).astype(np.float32))
        return self.op(op_type, [c, x] if const_first else [x, c])

    def chain(self, x, length):
        """A long layout-agnostic run: unary ops and broadcasting binary ops with constants of several ranks."""
        c = self.shape(x)[-1]
        h, w = self.shape(x)[1], self.shape(x)[2]
        steps = [
            lambda v: self.unary("Relu", v),
            lambda v: self.binary_const("Add", v, [c]),
            lambda v: self.binary_const("Mul", v, [1, 1, 1, c], offset=1.0),
            lambda v: self.unary("Sigmoid", v),
            lambda v: self.binary_const("Sub", v, [w, c], const_first=True),
            lambda v: self.unary("Tanh", v),
            lambda v: self.binary_const("Mul", v, [], offset=1.0),
            lambda v: self.unary("LeakyRelu", v, alpha=0.1),
            lambda v: self.binary_const("Add", v, [h, 1, c]),
            lambda v: self.unary("Abs", v),
            lambda v: self.binary_const("Div", v, [c], scale=0.1, offset=2.0),
            lambda v: self.unary("Neg", v),
        ]
        for i in range(length):
            x = steps[(i + self.count) % len(steps)](x)
        return x

    def qdq(self, x, axis=None):
        """QuantizeLinear → DequantizeLinear, per-tensor, or per-axis along `axis` when given."""
        if axis is None:
            scale, zp, attrs = self.const(np.float32(0.05)), self.const(np.uint8(128)), {}
        else:
            c = self.shape(x)[axis]
            scale = self.const(np.full([c], 0.05, np.float32) + 0.01 * np.arange(c, dtype=np.float32))
            zp, attrs = self.const(np.full([c], 128, np.uint8)), {"axis": axis}
        q = self.op("QuantizeLinear", [x, scale, zp], **attrs)
        # one quantum of difference after a rounding flip is legitimate: widen the tolerance to the largest scale
        self.atol = max(self.atol, 0.05 + (0.01 * (self.shape(x)[axis] - 1) if axis is not None else 0.0) + 1e-6)
        self.note = "QDQ: atol one quantization step"
        return self.op("DequantizeLinear", [q, scale, zp], **attrs)

    def ints(self, values, hint="i"):
        return self.const(np.array(values, np.int64), hint)

    def conv_block(self, x, cout, k=3, stride=1, group=1):
        """The TF converter's wrap of one conv: NHWC → NCHW → Conv → NHWC."""
        return self.nhwc(self.conv(self.nchw(x), cout, k, stride, group))


# ---- the models -------------------------------------------------------------------------------------------------
# Each takes a Builder and builds the graph; the table at the end names them, with opset and seed.

def m_conv_chain(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 8)
    y = b.chain(y, 8)
    y = b.conv_block(y, 8)
    b.output(b.chain(y, 3))


def m_conv_bn_relu(b):
    x = b.input([1, 10, 10, 3])
    y = b.nhwc(b.bn(b.conv(b.nchw(x), 8)))
    y = b.unary("Relu", y)
    y = b.op("Mul", [y, b.unary("Sigmoid", y)])  # swish
    y = b.nhwc(b.bn(b.conv(b.nchw(y), 8)))
    b.output(b.unary("Relu", y))


def m_pools(b):
    x = b.input([1, 12, 12, 6])
    y = b.nhwc(b.maxpool(b.nchw(x)))
    y = b.chain(y, 4)
    y = b.nhwc(b.avgpool(b.nchw(y)))
    y = b.chain(y, 4)
    b.output(b.nhwc(b.maxpool(b.nchw(y))))


def m_resize(b):
    x = b.input([1, 6, 6, 4])
    y = b.nhwc(b.resize(b.nchw(x)))
    y = b.unary("Relu", y)
    y = b.conv_block(y, 4)
    b.output(b.nhwc(b.resize(b.nchw(y), 2.0)))


def m_concat_branches(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 6)
    a = b.chain(b.unary("Relu", y), 3)
    c = b.chain(b.unary("Sigmoid", y), 2)
    z = b.op("Concat", [a, c, y], axis=3)
    z = b.conv_block(z, 8)
    b.output(z)


def m_split_outputs(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 8)
    split = b.ints([3, 5], "split")
    p, q = b.op("Split", [y, split], n_out=2, axis=3)
    b.output(b.chain(p, 3))
    b.output(b.conv_block(b.unary("Relu", q), 4))


def m_se_block(b):
    x = b.input([1, 8, 8, 8])
    y = b.conv_block(x, 8)
    s = b.op("ReduceMean", [y], axes=[1, 2], keepdims=1)
    s = b.unary("Sigmoid", b.binary_const("Mul", s, [8]))
    y = b.op("Mul", [y, s])
    b.output(b.conv_block(y, 8))


def m_reduce_head(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 16)
    y = b.unary("Relu", y)
    g = b.op("ReduceMean", [y], axes=[1, 2], keepdims=0)  # TF's global average pool: [N, C]
    b.output(b.op("MatMul", [g, b.weights([16, 10])]))


def m_reduce_sum_input_axes(b):
    x = b.input([1, 6, 6, 4])
    y = b.conv_block(x, 6)
    s = b.op("ReduceSum", [b.unary("Exp", b.binary_const("Mul", y, [], scale=0.0, offset=0.1)), b.ints([3])],
             keepdims=1)
    y = b.op("Div", [b.unary("Exp", b.binary_const("Mul", y, [], scale=0.0, offset=0.1)), s])
    b.output(b.conv_block(y, 4))


def m_softmax_last(b):
    x = b.input([1, 6, 6, 5])
    y = b.conv_block(x, 10)
    y = b.chain(y, 2)
    b.output(b.op("Softmax", [y], axis=-1))
    b.output(b.op("LogSoftmax", [b.unary("Relu", y)], axis=3))


def m_pad_conv(b):
    x = b.input([1, 7, 7, 4])
    y = b.conv_block(x, 4)
    pads = b.ints([0, 1, 1, 0, 0, 1, 1, 0], "pads")
    y = b.op("Pad", [b.unary("Relu", y), pads], mode="constant")
    y = b.nhwc(b.conv(b.nchw(y), 6, k=3))
    b.output(b.chain(y, 2))


def m_slice(b):
    x = b.input([1, 10, 10, 4])
    y = b.conv_block(x, 6)
    y = b.op("Slice", [y, b.ints([1, 2]), b.ints([9, 8]), b.ints([1, 2])])
    y = b.chain(y, 3)
    y = b.op("Slice", [y, b.ints([0]), b.ints([4]), b.ints([-1])])
    b.output(b.conv_block(y, 4))


def m_squeeze_unsqueeze(b):
    x = b.input([1, 6, 6, 4])
    y = b.conv_block(x, 4)
    y = b.op("Squeeze", [y, b.ints([0])])
    y = b.chain(y, 3)
    y = b.op("Unsqueeze", [y, b.ints([0])])
    b.output(b.conv_block(y, 4))


def m_qdq(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 8)
    y = b.qdq(b.unary("Relu", y))
    y = b.conv_block(y, 8)
    b.output(b.qdq(y))


def m_qdq_per_axis(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 6)
    y = b.qdq(b.unary("Relu", y), axis=3)
    b.output(b.conv_block(y, 4))


def m_shape_reshape(b):
    x = b.input([1, 6, 6, 4])
    y = b.conv_block(x, 8)
    n = b.op("Gather", [b.op("Shape", [y]), b.ints([0])], axis=0)
    c = b.op("Gather", [b.op("Shape", [y]), b.ints(3)], axis=0)
    target = b.op("Concat", [n, b.ints([-1])], axis=0)
    b.output(b.op("Reshape", [y, target]), shape=[None, None])  # rank 2; inference cannot see through Concat
    b.output(b.op("Cast", [c], to=TensorProto.FLOAT))


def m_depthwise(b):
    x = b.input([1, 10, 10, 8])
    y = b.conv_block(x, 8, k=3, group=8)
    y = b.op("Clip", [y, b.const(np.float32(0.0)), b.const(np.float32(6.0))])  # Relu6
    y = b.conv_block(y, 16, k=1)
    y = b.op("Clip", [y, b.const(np.float32(0.0)), b.const(np.float32(6.0))])
    y = b.conv_block(y, 16, k=3, group=16, stride=2)
    b.output(b.conv_block(y, 8, k=1))


def m_residual(b):
    x = b.input([1, 8, 8, 8])
    y = x
    for _ in range(3):
        z = b.unary("Relu", b.conv_block(y, 8))
        z = b.conv_block(z, 8)
        y = b.unary("Relu", b.op("Add", [y, z]))
    b.output(y)


def m_activations(b):
    x = b.input([1, 6, 6, 4])
    y = b.conv_block(x, 6)
    for op, attrs in [("Elu", {"alpha": 0.5}), ("HardSigmoid", {}), ("Softsign", {}), ("Selu", {}),
                      ("Softplus", {}), ("Erf", {}), ("Sqrt", {}), ("Reciprocal", {})]:
        if op in ("Sqrt", "Reciprocal"):
            y = b.binary_const("Add", b.unary("Abs", y), [], scale=0.0, offset=1.0)
        y = b.unary(op, y, **attrs)
    b.output(b.conv_block(y, 4))


def m_broadcast_ranks(b):
    x = b.input([2, 6, 5, 4])
    y = b.conv_block(x, 4)
    y = b.binary_const("Add", y, [4])
    y = b.binary_const("Mul", y, [5, 4], offset=1.0)
    y = b.binary_const("Sub", y, [6, 1, 4])
    y = b.binary_const("Add", y, [1, 6, 5, 1])
    y = b.binary_const("Mul", y, [], offset=1.0)
    y = b.binary_const("Max", y, [1, 1, 5, 4], const_first=True)
    b.output(b.conv_block(y, 4))


def m_variadic(b):
    x = b.input([1, 6, 6, 4])
    p = b.conv_block(x, 4)
    q = b.conv_block(x, 4)
    r = b.conv_block(x, 4)
    s = b.op("Sum", [p, q, r])
    m = b.op("Max", [p, q, b.const(np.zeros([4], np.float32))])
    n = b.op("Min", [s, m])
    b.output(b.conv_block(b.op("Mean", [s, m, n]), 4))


def m_concat_three(b):
    x = b.input([1, 8, 8, 3])
    parts = [b.unary("Relu", b.conv_block(x, 4, k=k)) for k in (1, 3, 5)]
    y = b.op("Concat", parts, axis=-1)
    y = b.chain(y, 4)
    b.output(b.conv_block(y, 6))


def m_instnorm_lrn(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 6)
    y = b.nchw(b.chain(y, 2))
    y = b.op("InstanceNormalization", [y, b.const(np.ones(6, np.float32)), b.const(np.zeros(6, np.float32))])
    y = b.nhwc(y)
    y = b.nchw(b.unary("Relu", y))
    y = b.nhwc(b.op("LRN", [y], size=3))
    b.output(b.chain(y, 2))


def m_depth_space(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 8)
    y = b.nhwc(b.op("SpaceToDepth", [b.nchw(b.unary("Relu", y))], blocksize=2))
    y = b.chain(y, 3)
    y = b.nhwc(b.op("DepthToSpace", [b.nchw(y)], blocksize=2, mode="DCR"))
    b.output(b.conv_block(y, 4))


def m_global_pool(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 12)
    g = b.nhwc(b.op("GlobalAveragePool", [b.nchw(y)]))
    g = b.op("Squeeze", [g, b.ints([1, 2])])
    b.output(b.unary("Relu", g))
    m = b.nhwc(b.op("GlobalMaxPool", [b.nchw(b.unary("Relu", y))]))
    b.output(b.op("Mul", [y, m]))


def m_argmax(b):
    x = b.input([1, 6, 6, 4])
    y = b.conv_block(x, 5)
    y = b.chain(y, 2)
    b.output(b.op("ArgMax", [y], axis=3, keepdims=1))
    b.output(b.op("ArgMin", [y], axis=-1, keepdims=0))
    b.output(b.op("ReduceMax", [y], axes=[3], keepdims=0))


def m_tile(b):
    x = b.input([1, 4, 4, 3])
    y = b.conv_block(x, 3)
    y = b.op("Tile", [y, b.ints([1, 2, 2, 1])])
    b.output(b.conv_block(y, 4))


def m_multi_output_nhwc(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 8)
    b.output(y)  # a graph output in NHWC right after the conv
    z = b.chain(y, 5)
    b.output(z)
    b.output(b.conv_block(z, 4))


def m_deep(b):
    x = b.input([1, 16, 16, 3])
    y = b.conv_block(x, 8, stride=2)
    for i in range(6):
        z = b.chain(y, 3 + i % 3)
        z = b.conv_block(z, 8)
        y = b.op("Add", [y, z]) if i % 2 else b.unary("Relu", z)
    y = b.nhwc(b.maxpool(b.nchw(y)))
    b.output(b.chain(y, 2))


def m_shared_input(b):
    x = b.input([1, 8, 8, 4])
    # one NCHW copy feeds two convs (the converter shares the input Transpose)
    t = b.nchw(x)
    p = b.nhwc(b.conv(t, 4))
    q = b.nhwc(b.conv(t, 4, k=1))
    y = b.op("Add", [p, q])
    y = b.chain(y, 3)
    b.output(b.op("Concat", [y, x], axis=3))


def m_nchw_output(b):
    x = b.input([1, 8, 8, 4])
    y = b.conv_block(x, 6)
    y = b.chain(y, 4)
    b.output(b.nchw(y))  # the model hands NCHW out: one Transpose must stay somewhere


def m_cast_where(b):
    x = b.input([1, 6, 6, 4])
    y = b.conv_block(x, 4)
    mask = b.op("Greater", [y, b.const(np.zeros([4], np.float32))])
    y = b.op("Where", [mask, y, b.binary_const("Mul", y, [], scale=0.0, offset=0.1)])
    y = b.op("Cast", [b.op("Cast", [y], to=TensorProto.DOUBLE)], to=TensorProto.FLOAT)
    b.output(b.conv_block(y, 4))


def m_pow_minmax(b):
    x = b.input([1, 6, 6, 4])
    y = b.conv_block(x, 4)
    y = b.op("Pow", [b.unary("Abs", y), b.const(np.float32(1.5))])
    y = b.op("Min", [y, b.const(np.full([1, 1, 1, 4], 2.0, np.float32))])
    y = b.op("PRelu", [y, b.const(np.full([4], 0.2, np.float32))])
    b.output(b.conv_block(y, 4))


def m_resize_linear_chain(b):
    x = b.input([1, 5, 5, 4])
    y = b.conv_block(x, 4)
    y = b.nhwc(b.resize(b.nchw(b.chain(y, 3)), 2.0, mode="linear"))
    y = b.chain(y, 3)
    b.output(b.nhwc(b.bn(b.conv(b.nchw(y), 4))))


def m_identity_perm(b):
    x = b.input([1, 6, 6, 4])
    y = b.unary("Relu", b.t(x, [0, 1, 2, 3]))  # converters emit these; ORT has no rule that deletes one
    y = b.conv_block(y, 4)
    y = b.t(b.chain(y, 2), [0, 1, 2, 3])
    b.output(b.conv_block(y, 4))


def m_conv1d(b):
    x = b.input([1, 16, 6])  # TF's NWC sequence layout around a 1-D conv
    y = b.t(x, [0, 2, 1])
    w = b.weights([8, 6, 3], scale=0.3)
    y = b.t(b.op("Conv", [y, w, b.weights([8], 0.1, "b")], kernel_shape=[3], pads=[1, 1]), [0, 2, 1])
    y = b.chain(y, 4)
    y = b.t(y, [0, 2, 1])
    y = b.t(b.op("Conv", [y, b.weights([4, 8, 1], scale=0.3)], kernel_shape=[1]), [0, 2, 1])
    b.output(b.op("Softmax", [y], axis=-1))


def m_residual_tail(b):
    # ends in a residual Add whose two inputs both come from Transpose(0,2,3,1) through a chain: moving the chain's
    # Transpose down to the Add never lowers the cost at one step, so ORT 1.30 leaves 3 Transposes (2 would do)
    x = b.input([1, 8, 8, 8])
    y = b.conv_block(x, 8)
    z = b.chain(b.conv_block(y, 8, k=1), 4)
    b.output(b.op("Add", [z, y]))


MODELS = [
    # name, builder, opset
    ("conv_chain", m_conv_chain, 13),
    ("conv_bn_relu", m_conv_bn_relu, 13),
    ("pools", m_pools, 15),
    ("resize", m_resize, 13),
    ("concat_branches", m_concat_branches, 13),
    ("split_outputs", m_split_outputs, 13),
    ("se_block", m_se_block, 13),
    ("reduce_head", m_reduce_head, 13),
    ("reduce_sum_input_axes", m_reduce_sum_input_axes, 13),
    ("softmax_last", m_softmax_last, 13),
    ("pad_conv", m_pad_conv, 13),
    ("slice", m_slice, 13),
    ("squeeze_unsqueeze", m_squeeze_unsqueeze, 13),
    ("qdq", m_qdq, 13),
    ("qdq_per_axis", m_qdq_per_axis, 13),
    ("shape_reshape", m_shape_reshape, 14),
    ("depthwise", m_depthwise, 13),
    ("residual", m_residual, 15),
    ("activations", m_activations, 13),
    ("broadcast_ranks", m_broadcast_ranks, 13),
    ("variadic", m_variadic, 13),
    ("concat_three", m_concat_three, 16),
    ("instnorm_lrn", m_instnorm_lrn, 13),
    ("depth_space", m_depth_space, 13),
    ("global_pool", m_global_pool, 13),
    ("argmax", m_argmax, 13),
    ("tile", m_tile, 13),
    ("multi_output_nhwc", m_multi_output_nhwc, 17),
    ("deep", m_deep, 17),
    ("shared_input", m_shared_input, 13),
    ("nchw_output", m_nchw_output, 13),
    ("cast_where", m_cast_where, 16),
    ("pow_minmax", m_pow_minmax, 13),
    ("resize_linear_chain", m_resize_linear_chain, 13),
    ("identity_perm", m_identity_perm, 13),
    ("conv1d", m_conv1d, 15),
    ("residual_tail", m_residual_tail, 13),
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_nhwc_models.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    lines = []
    for index, (name, build, opset) in enumerate(MODELS):
        b = Builder(name, opset, seed=1000 + index)
        build(b)
        model = onnx.shape_inference.infer_shapes(b.model(), strict_mode=True)
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(out_dir, name + ".onnx"))
        inputs = ";".join(f"{vi.name}:" + ",".join(str(d.dim_value) for d in vi.type.tensor_type.shape.dim)
                          for vi in model.graph.input)
        lines.append(f"{name}\t{b.rtol:g}\t{b.atol:g}\t{inputs}\t{b.note}")
    with open(os.path.join(out_dir, "manifest.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"gen_nhwc_models: {len(MODELS)} models in {out_dir}")


if __name__ == "__main__":
    main()
