"""Malformed reduce / softmax / pool / normalization / loss models that the executor must refuse cleanly: pools
without kernel_shape, pads as large as the kernel, windows that see no input (MaxPool, AveragePool 19), a
kernel larger than the padded input, kernels and pads near INT32_MAX, a bad auto_pad, dilations before opset
19 AveragePool, a rank-2 pool input; TopK with k above the axis; MaxUnpool indices out of range and negative
or enormous output_shape; loss targets out of range and a target shape that does not fit; repeated and
out-of-range reduce axes; LayerNormalization scale that does not broadcast; CumSum with a non-scalar axis;
BatchNormalization with parameters of the wrong size, running outputs in inference mode (opset 15) and
opset 9's saved_var output; Dropout in training mode (opset 6, no is_test); LRN without size; ArgMax and
integer ReduceMean over an empty axis; Softmax axis out of range; MeanVarianceNormalization default axes on
rank 2; GlobalMaxPool over an empty spatial dim. Each case's expected outcome goes to
OUT/expected-outcomes.txt; outputs are declared with the types the op would produce and unknown shapes.

Usage: /usr/bin/python3 gen_bad_nn.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto as TP

import casegen

F, I = TP.FLOAT, TP.INT64


def main():
    bad = casegen.BadCases(casegen.out_dir_from_argv())

    def case(name, op, inputs, out_types, opset, expect="error", why="", **attrs):
        """inputs: (name, array or None); out_types: one ONNX element type per output."""
        bad.single_node(name, op, [a for _, a in inputs], opset, attrs, out_type=out_types, expect=expect,
                        why=why, ir_version=8)

    x = np.ones((1, 2, 5, 5), np.float32)
    one = np.ones((1, 1, 1), np.float32)
    case('e_pool_nokernel', 'MaxPool', [('x', x)], [F], 12)
    case('e_pool_bigpad', 'MaxPool', [('x', x)], [F, I], 12, kernel_shape=[2, 2], pads=[2, 0, 0, 0])
    case('e_pool_emptywin', 'MaxPool', [('x', one)], [F, I], 12,
         expect='unsupported', why='a window over padding only has no defined max', kernel_shape=[2], dilations=[5], pads=[3, 3])
    case('e_avg_emptywin', 'AveragePool', [('x', one)], [F], 19,
         expect='unsupported', why='a window over padding only has no defined average', kernel_shape=[2], dilations=[5],
         pads=[3, 3])
    case('e_pool_kernel_too_big', 'AveragePool', [('x', x)], [F], 11, kernel_shape=[9, 1])
    case('e_pool_hugepad', 'AveragePool', [('x', x)], [F], 11, kernel_shape=[2000000000, 2000000000],
         pads=[1999999999] * 4)
    case('e_pool_autopad_bad', 'AveragePool', [('x', x)], [F], 11, kernel_shape=[2, 2], auto_pad='FOO')
    case('e_pool_dil_old', 'AveragePool', [('x', x)], [F], 11, kernel_shape=[2, 2], dilations=[2, 2])
    case('e_pool_rank2', 'MaxPool', [('x', np.ones((2, 2), np.float32))], [F], 12, kernel_shape=[])
    case('e_topk_big', 'TopK', [('x', x), ('k', np.array([9], np.int64))], [F, I], 11, axis=2)
    xu = np.ones((1, 1, 2), np.float32)
    case('e_unpool_idx', 'MaxUnpool', [('x', xu), ('i', np.array([[[0, 99]]], np.int64))], [F], 11,
         kernel_shape=[2], strides=[2])
    case('e_unpool_huge', 'MaxUnpool', [('x', xu), ('i', np.array([[[0, 1]]], np.int64)),
                                        ('s', np.array([1, 1, 1 << 40], np.int64))], [F], 11,
         kernel_shape=[2], strides=[2])
    case('e_unpool_neg', 'MaxUnpool', [('x', xu), ('i', np.array([[[0, 1]]], np.int64)),
                                       ('s', np.array([1, 1, -4], np.int64))], [F], 11,
         kernel_shape=[2], strides=[2])
    x23 = np.ones((2, 3), np.float32)
    case('e_nll_target', 'NegativeLogLikelihoodLoss', [('x', x23), ('t', np.array([0, 3], np.int64))], [F], 13)
    case('e_sce_target', 'SoftmaxCrossEntropyLoss', [('x', x23), ('t', np.array([0, -3], np.int64))], [F, F],
         13)
    case('e_nll_shape', 'NegativeLogLikelihoodLoss',
         [('x', np.ones((2, 3, 4), np.float32)), ('t', np.array([0, 1], np.int64))], [F], 13)
    case('e_reduce_dup', 'ReduceMean', [('x', x), ('a', np.array([1, -3], np.int64))], [F], 18)
    case('e_reduce_axis', 'ReduceSum', [('x', x), ('a', np.array([7], np.int64))], [F], 13)
    case('e_ln_scale', 'LayerNormalization', [('x', x), ('s', np.ones((3,), np.float32))], [F], 17,
         expect='unsupported', why='the executor declines a scale that does not broadcast to the normalized axes')
    case('e_cumsum_axis', 'CumSum', [('x', x), ('a', np.array([1, 2], np.int64))], [F], 14)
    p2 = np.ones(2, np.float32)
    case('e_bn_param', 'BatchNormalization',
         [('x', x), ('s', np.ones(3, np.float32)), ('b', p2), ('m', p2), ('v', p2)], [F], 15)
    case('e_bn_running_infer', 'BatchNormalization', [('x', x), ('s', p2), ('b', p2), ('m', p2), ('v', p2)],
         [F, F, F], 15)
    case('e_bn_saved_var', 'BatchNormalization', [('x', x), ('s', p2), ('b', p2), ('m', p2), ('v', p2)],
         [F, F, F, F, F], 9, expect='unsupported', why='saved_var: variance or inverse std, frameworks differ')
    case('e_dropout_train', 'Dropout', [('x', x)], [F], 6, expect='unsupported', why='training-mode dropout is random')
    case('e_lrn_nosize', 'LRN', [('x', x)], [F], 13)
    case('e_argmax_empty', 'ArgMax', [('x', np.ones((2, 0), np.float32))], [I], 13, axis=1)
    case('e_rmean_int_empty', 'ReduceMean', [('x', np.ones((2, 0), np.int32))], [TP.INT32], 13,
         expect='unsupported', why='the integer mean of an empty set is undefined', axes=[1])
    case('e_softmax_axis', 'Softmax', [('x', x)], [F], 13, axis=4)
    case('e_mvn_axes', 'MeanVarianceNormalization', [('x', x23)], [F], 13)
    case('e_globalmax_empty', 'GlobalMaxPool', [('x', np.ones((1, 2, 0), np.float32))], [F], 1)
    bad.close()


if __name__ == "__main__":
    main()
