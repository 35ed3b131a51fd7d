"""Malformed tensor / shape op models that the executor must refuse cleanly: Reshape with -2, two -1s, a wrong
element count, an overflowing shape or a -1 to infer from zeros; Slice with a zero step or a repeated axis;
Gather / GatherElements / GatherND / ScatterND indices out of range or of the wrong shape; Expand / Tile /
Range / Pad / Resize outputs over the 2^31-element budget or overflowing int64; negative shapes and pads that
crop more than the axis; Range with an infinite count or a zero delta; OneHot with a NaN or enormous depth;
reflect padding and sizes-Resize of an empty axis; Resize with a negative scale or both scales and sizes;
Split sizes that do not add up or parts that do not divide the axis (opsets 13 and 18); too many Unsqueeze
axes; a Compress condition longer than the axis; Upsample scales below 1; a non-permutation perm; Concat
shapes that differ off the axis; ReverseSequence lengths beyond the time axis or too few of them; Squeeze of
a non-1 axis; Flatten axis beyond the rank; and Unique along an axis of 3**20 slices of an empty tensor (its
inverse_indices output alone would exceed the budget). Each case's expected outcome goes to
OUT/expected-outcomes.txt; outputs are declared with the op's output types and unknown shapes.

Usage: /usr/bin/python3 gen_bad_tensor.py OUT_DIR
"""
import numpy as np

import casegen

I = np.int64
BIG = np.iinfo(np.int64).max
SMALL = np.iinfo(np.int64).min


def main():
    bad = casegen.BadCases(casegen.out_dir_from_argv())

    def case(name, op, inputs, outputs, opset, expect="error", why="", **attrs):
        """inputs: (name, array / casegen.Empty or None); outputs: (name, dummy) whose dtype gives the type."""
        types = [casegen.tensor_type(np.asarray(d).dtype) for _, d in outputs]
        bad.single_node(name, op, [a for _, a in inputs], opset, attrs, out_type=types, expect=expect, why=why,
                        ir_version=8)

    f = np.zeros(1, np.float32)
    fi = np.zeros(1, I)
    x=np.arange(24,dtype=np.float32).reshape(2,3,4)
    f=np.zeros(1,np.float32)
    case('reshape_neg2','Reshape',[('x',x),('s',np.array([-2,12],I))],[('y',f)],13)
    case('reshape_two_m1','Reshape',[('x',x),('s',np.array([-1,-1],I))],[('y',f)],13)
    case('reshape_count','Reshape',[('x',x),('s',np.array([5,5],I))],[('y',f)],13)
    case('reshape_overflow','Reshape',[('x',x),('s',np.array([1<<40,1<<40,-1],I))],[('y',f)],13)
    case('reshape_zero_infer','Reshape',[('x',np.zeros((0,3),np.float32)),('s',np.array([0,-1],I))],[('y',f)],14,allowzero=1)
    case('slice_step0','Slice',[('x',x),('s',np.array([0],I)),('e',np.array([1],I)),('a',np.array([0],I)),('p',np.array([0],I))],[('y',f)],13)
    case('slice_dup','Slice',[('x',x),('s',np.array([0,0],I)),('e',np.array([1,1],I)),('a',np.array([0,-3],I))],[('y',f)],13)
    case('gather_oob','Gather',[('x',x),('i',np.array([3],I))],[('y',f)],13)
    case('expand_huge','Expand',[('x',x[:1,:1,:1]),('s',np.array([1<<40,1<<40],I))],[('y',f)],13)
    case('expand_neg','Expand',[('x',x),('s',np.array([-1,1,1],I))],[('y',f)],13)
    case('tile_huge','Tile',[('x',x),('r',np.array([BIG,2,1],I))],[('y',f)],13)
    case('range_huge','Range',[('s',np.array(0,I)),('l',np.array(BIG,I)),('d',np.array(1,I))],[('y',fi)],11)
    case('range_inf','Range',[('s',np.array(0,np.float32)),('l',np.array(np.inf,np.float32)),('d',np.array(1,np.float32))],[('y',f)],11)
    case('range_d0','Range',[('s',np.array(0,np.float32)),('l',np.array(1,np.float32)),('d',np.array(0,np.float32))],[('y',f)],11)
    case('cos_neg','ConstantOfShape',[('s',np.array([-1],I))],[('y',f)],13)
    case('onehot_huge','OneHot',[('i',np.array([1,2],I)),('dp',np.array(1e30,np.float32)),('v',np.array([0,1],I))],[('y',fi)],11)
    case('onehot_nan','OneHot',[('i',np.array([1,2],I)),('dp',np.array(np.nan,np.float32)),('v',np.array([0,1],I))],[('y',fi)],11)
    case('pad_huge','Pad',[('x',x),('p',np.array([0,0,BIG,0,0,BIG],I))],[('y',f)],13)
    case('pad_crop_too_much','Pad',[('x',x),('p',np.array([0,0,-3,0,0,-2],I))],[('y',f)],13)
    case('pad_minint','Pad',[('x',x),('p',np.array([0,0,SMALL,0,0,0],I))],[('y',f)],13)
    case('pad_reflect_empty','Pad',[('x',np.zeros((2,0),np.float32)),('p',np.array([0,1,0,1],I))],[('y',f)],13,mode='reflect')
    case('resize_huge','Resize',[('x',x),('r',None),('sc',np.array([1,1e30,1],np.float32))],[('y',f)],13)
    case('resize_negscale','Resize',[('x',x),('r',None),('sc',np.array([1,-1,1],np.float32))],[('y',f)],13)
    case('resize_sizes_huge','Resize',[('x',x),('r',None),('sc',None),('sz',np.array([1<<40,1<<40,1],I))],[('y',f)],13)
    case('resize_empty_sizes','Resize',[('x',np.zeros((2,0),np.float32)),('r',None),('sc',None),('sz',np.array([2,3],I))],[('y',f)],13)
    case('resize_both','Resize',[('x',x),('r',None),('sc',np.array([1,1,1],np.float32)),('sz',np.array([1,1,1],I))],[('y',f)],13)
    case('split_bad','Split',[('x',x),('s',np.array([1,5],I))],[('a',f),('b',f)],13,axis=2)
    case('split_uneven13','Split',[('x',x)],[('a',f),('b',f),('c',f)],13,axis=2)
    case('split_uneven18','Split',[('x',np.zeros(5,np.float32))],[('a',f),('b',f),('c',f),('d',f)],18,num_outputs=4)
    case('scatternd_oob','ScatterND',[('d',x),('i',np.array([[5]],I)),('u',x[:1])],[('y',f)],13)
    case('scatternd_badshape','ScatterND',[('d',x),('i',np.array([[1]],I)),('u',x[:1,:1])],[('y',f)],13)
    case('unsqueeze_many','Unsqueeze',[('x',x),('a',np.arange(70,dtype=I))],[('y',f)],13)
    case('compress_long','Compress',[('x',x),('c',np.array([True,False,False,True]))],[('y',f)],11,axis=0)
    case('upsample_lt1','Upsample',[('x',x),('s',np.array([1,0.5,1],np.float32))],[('y',f)],9)
    case('transpose_bad','Transpose',[('x',x)],[('y',f)],13,perm=[0,0,1])
    case('concat_mismatch','Concat',[('a',x),('b',x[:,:2,:3])],[('y',f)],13,axis=0)
    case('gathernd_bad','GatherND',[('d',x),('i',np.array([[1,2,3,0]],I))],[('y',f)],13)
    case('gatherel_oob','GatherElements',[('d',x),('i',np.full((2,3,4),9,I))],[('y',f)],13,axis=1)
    case('revseq_bad','ReverseSequence',[('x',x),('l',np.array([1,9,0],I))],[('y',f)],10)
    case('squeeze_bad','Squeeze',[('x',x),('a',np.array([1],I))],[('y',f)],13)
    case('flatten_bad','Flatten',[('x',x)],[('y',f)],13,axis=4)
    H = 3 ** 20
    # all four outputs: inverse_indices would hold 3**20 entries (the valid e_unique_y in gen_tensor.py asks
    # for Y alone)
    case('e_unique', 'Unique', [('x', casegen.Empty([H, 0, H]))], [('y', f), ('i', fi), ('inv', fi), ('c', fi)],
         11, axis=2)
    # batch_axis 1 has 3**20 entries, sequence_lens none
    case('e_revseq', 'ReverseSequence', [('x', casegen.Empty([0, H])), ('l', np.array([], I))], [('y', f)], 10)
    bad.close()


if __name__ == "__main__":
    main()
