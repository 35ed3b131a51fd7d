"""Tensor and shape ops: Slice (opset 9 attributes, negative and extreme steps, int32 indices), Pad (opset 10
attributes, reflect / edge / wrap, negative pads, opset 18 axes), Split (opset 11 attribute, opset 18
num_outputs), Squeeze / Unsqueeze attributes, ScatterElements reductions, legacy Scatter, ScatterND max,
GatherND batch_dims, Range, OneHot, NonZero, Compress, EyeLike, ReverseSequence, Reshape allowzero, Trilu,
Expand, Tile, Flatten, Shape start/end, Size, Depth/SpaceToDepth, Resize 10/13/18/19 (axes,
keep_aspect_ratio_policy, cubic, uint8, half_pixel_symmetric) and Upsample 7/9; string tensors through the
data-movement ops and Constant's value_* attributes; extreme int64 attribute / input values that must still
give an answer; and empty tensors whose other dims are huge (3**20: every element count and stride product
overflows int64 although the tensor holds nothing).

Expected values come from numpy slicing / `np.pad` / `np.take_along_axis` / `np.tile` / ... or hand-worked
element loops; Resize and Upsample use ONNX's own reference interpolation (`interpolate_nd` from
onnx.backend.test.case.node.resize), as gen_gridsample.py and gen_roialign.py use ONNX's reference; the two
half_pixel_symmetric expectations are hand-copied numbers.

Usage: /usr/bin/python3 gen_tensor.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto
from onnx.backend.test.case.node.resize import (cubic_coeffs, interpolate_nd, interpolate_nd_with_x,
                                                linear_coeffs)

import casegen

OUT = None
I = np.int64
BIG = np.iinfo(np.int64).max
SMALL = np.iinfo(np.int64).min


def arr(a):
    """numpy array of a case value; Python / numpy unicode strings become object arrays (ONNX strings)."""
    if isinstance(a, casegen.Empty):
        return a
    a = np.asarray(a)
    return a.astype(object) if a.dtype.kind == 'U' else a


def case(name, op, inputs, outputs, opset, **attrs):
    """inputs: (name, array or None = omitted optional input); outputs: (name, expected array). The names only
    document the op's parameters; the case's graph values are in0.../out0..."""
    casegen.single_node_case(OUT, name, op, [None if a is None else arr(a) for _, a in inputs],
                             [arr(a) for _, a in outputs], opset, attrs, ir_version=8)


def basic_cases():
    x=np.arange(60,dtype=np.float32).reshape(3,4,5)
    # Slice
    case('slice_v9_attrs','Slice',[('x',x)],[('y',x[1:3,-3:100,:])],9,starts=[1,-3],ends=[1000,100],axes=[0,1])
    case('slice_v9_noaxes','Slice',[('x',x)],[('y',x[0:2,1:-1])],9,starts=[0,1],ends=[2,-1])
    case('slice_negstep','Slice',[('x',x),('s',np.array([-1,10],I)),('e',np.array([-1000,0],I)),('a',np.array([1,2],I)),('p',np.array([-2,-3],I))],[('y',x[:,-1::-2,10:0:-3])],13)
    case('slice_minmax','Slice',[('x',x),('s',np.array([np.iinfo(np.int64).max],I)),('e',np.array([np.iinfo(np.int64).min],I)),('a',np.array([-1],I)),('p',np.array([-1],I))],[('y',x[:,:,::-1])],13)
    case('slice_empty','Slice',[('x',x),('s',np.array([3],I)),('e',np.array([1],I))],[('y',x[3:1])],13)
    case('slice_int32','Slice',[('x',x),('s',np.array([1],np.int32)),('e',np.array([3],np.int32)),('a',np.array([2],np.int32))],[('y',x[:,:,1:3])],13)
    s=np.array([['a','bb','ccc'],['d','','f']],dtype=object)
    case('slice_str','Slice',[('x',s),('s',np.array([1],I)),('e',np.array([3],I)),('a',np.array([1],I))],[('y',s[:,1:3])],13)
    case('transpose_str','Transpose',[('x',s)],[('y',s.T)],13)
    case('concat_str','Concat',[('a',s),('b',s[:, :1])],[('y',np.concatenate([s,s[:,:1]],1))],13,axis=-1)
    case('gather_str','Gather',[('x',s),('i',np.array([[2,-1],[0,1]],I))],[('y',s[:,[[2,2],[0,1]]])],13,axis=1)
    case('identity_str','Identity',[('x',s)],[('y',s)],13)
    case('reshape_str','Reshape',[('x',s),('sh',np.array([3,-1],I))],[('y',s.reshape(3,2))],13)
    case('pad_str','Pad',[('x',s),('p',np.array([0,1,1,0],I)),('v',np.array('zz',dtype=object))],[('y',np.pad(s,((0,1),(1,0)),constant_values='zz'))],13)
    case('tile_str','Tile',[('x',s),('r',np.array([2,1],I))],[('y',np.tile(s,(2,1)))],13)
    case('expand_str','Expand',[('x',s[:1]),('sh',np.array([3,1,1],I))],[('y',np.broadcast_to(s[:1],(3,1,3)))],13)
    case('unique_str','Unique',[('x',np.array(['b','a','b','','a'],dtype=object))],[('y',np.array(['','a','b'],dtype=object)),('i',np.array([3,1,0],I)),('inv',np.array([2,1,2,0,1],I)),('c',np.array([1,2,2],I))],11)
    case('unique_unsorted_axis','Unique',[('x',np.array([[3,1],[1,2],[3,1],[0,0]],np.int32))],[('y',np.array([[3,1],[1,2],[0,0]],np.int32)),('i',np.array([0,1,3],I)),('inv',np.array([0,1,0,2],I)),('c',np.array([2,1,1],I))],11,sorted=0,axis=0)
    case('const_strings','Constant',[],[('y',np.array(['x','yz'],dtype=object))],13,value_strings=['x','yz'])
    case('const_ints','Constant',[],[('y',np.array([1,-2],I))],13,value_ints=[1,-2])
    case('const_float','Constant',[],[('y',np.array(2.5,np.float32))],13,value_float=2.5)
    case('const_string','Constant',[],[('y',np.array('hi',dtype=object))],13,value_string='hi')
    # Squeeze / Unsqueeze attr
    y=np.zeros((1,3,1,2),np.float32)+np.arange(6,dtype=np.float32).reshape(1,3,1,2)
    case('squeeze_v11','Squeeze',[('x',y)],[('y',y.reshape(3,1,2))],11,axes=[0])
    case('squeeze_all','Squeeze',[('x',y)],[('y',y.reshape(3,2))],13)
    case('unsqueeze_v11','Unsqueeze',[('x',x)],[('y',x.reshape(1,3,4,1,5))],11,axes=[0,-2])
    # Split
    v=np.arange(7,dtype=np.float32)
    case('split_v11_attr','Split',[('x',v)],[('a',v[:2]),('b',v[2:7])],11,split=[2,5])
    case('split_v18_num','Split',[('x',v)],[('a',v[:3]),('b',v[3:6]),('c',v[6:])],18,num_outputs=3)
    # Pad
    m=np.arange(12,dtype=np.float32).reshape(3,4)
    case('pad_v10_attr','Pad',[('x',m)],[('y',np.pad(m,((1,0),(2,3)),constant_values=1.5))],10,pads=[1,2,0,3],value=1.5)
    case('pad_v10_reflect','Pad',[('x',m)],[('y',np.pad(m,((2,2),(3,1)),mode='reflect'))],10,pads=[2,3,2,1],mode='reflect')
    case('pad_reflect_big','Pad',[('x',m),('p',np.array([0,7,0,6],I))],[('y',np.pad(m,((0,0),(7,6)),mode='reflect'))],13,mode='reflect')
    case('pad_edge_neg','Pad',[('x',m),('p',np.array([-1,2,1,-2],I))],[('y',np.pad(m[1:,:2],((0,1),(2,0)),mode='edge'))],13,mode='edge')
    case('pad_const_neg','Pad',[('x',m),('p',np.array([-1,0,0,-3],I))],[('y',m[1:,:1])],13)
    case('pad_v18_axes','Pad',[('x',m),('p',np.array([1,2],I)),('v',np.array(9,np.float32)),('a',np.array([-1],I))],[('y',np.pad(m,((0,0),(1,2)),constant_values=9))],18)
    case('pad_v19_wrap','Pad',[('x',m),('p',np.array([1,3,2,1],I))],[('y',np.pad(m,((1,2),(3,1)),mode='wrap'))],19,mode='wrap')
    # Scatter
    d=np.zeros((3,3),np.float32)+1
    ind=np.array([[0,1,0],[2,0,0]],I); upd=np.array([[5,-1,2],[3,4,7]],np.float32)
    def scat(red):
        o=d.copy()
        for i in range(2):
            for j in range(3):
                t=(ind[i,j],j); a=o[t]; b=upd[i,j]
                o[t]={'none':b,'add':a+b,'mul':a*b,'max':max(a,b),'min':min(a,b)}[red]
        return o
    for red in ['max','min','mul']:
        case('scatterel_'+red,'ScatterElements',[('d',d),('i',ind),('u',upd)],[('y',scat(red))],18,axis=0,reduction=red)
    case('scatterel_none_dup','ScatterElements',[('d',d),('i',ind),('u',upd)],[('y',scat('none'))],13,axis=0)
    case('scatter_v9','Scatter',[('d',d),('i',ind),('u',upd)],[('y',scat('none'))],9,axis=0)
    dd=np.arange(8,dtype=np.int32).reshape(4,2); ii=np.array([[1],[3],[1]],I); uu=np.array([[10,-1],[3,3],[0,20]],np.int32)
    o=dd.copy(); 
    for k in range(3): o[ii[k,0]]=np.maximum(o[ii[k,0]],uu[k])
    case('scatternd_max','ScatterND',[('d',dd),('i',ii),('u',uu)],[('y',o)],18,reduction='max')
    # GatherND batch dims 2
    gd=np.arange(2*3*4*5,dtype=np.float32).reshape(2,3,4,5); gi=np.array([[[[1],[3]],[[0],[2]],[[3],[3]]],[[[0],[0]],[[1],[1]],[[2],[0]]]],I)
    exp=np.zeros((2,3,2,5),np.float32)
    for a in range(2):
        for b in range(3):
            for c in range(2): exp[a,b,c]=gd[a,b,gi[a,b,c,0]]
    case('gathernd_b2','GatherND',[('d',gd),('i',gi)],[('y',exp)],13,batch_dims=2)
    # Range / OneHot / NonZero / Compress / EyeLike / ReverseSequence / Reshape / Trilu / Expand / Tile
    case('range_i64_neg','Range',[('s',np.array(10,I)),('l',np.array(-3,I)),('d',np.array(-4,I))],[('y',np.arange(10,-3,-4,dtype=I))],11)
    case('range_f64','Range',[('s',np.array(0.5)),('l',np.array(2.0)),('d',np.array(0.3))],[('y',np.arange(0.5,2.0,0.3))],11)
    case('range_empty','Range',[('s',np.array(5,np.int32)),('l',np.array(1,np.int32)),('d',np.array(1,np.int32))],[('y',np.zeros(0,np.int32))],11)
    oi=np.array([[1.7,-1.0],[5.0,0.0]],np.float32)
    exp=np.zeros((2,2,3),I); vals=np.array([0,7],I)
    for a in range(2):
        for b in range(2):
            k=int(oi[a,b]); k=k+3 if k<0 else k
            if 0<=k<3: exp[a,b,k]=7
    case('onehot_float','OneHot',[('i',oi),('dp',np.array([3.0],np.float32)),('v',vals)],[('y',exp)],11)
    case('nonzero_scalar','NonZero',[('x',np.array(3,np.int32))],[('y',np.zeros((0,1),I))],13)
    case('nonzero_bool','NonZero',[('x',np.array([[True,False],[False,True]]))],[('y',np.array(np.nonzero([[1,0],[0,1]]),I))],13)
    case('compress_short','Compress',[('x',m),('c',np.array([False,True]))],[('y',np.compress([False,True],m,axis=1))],11,axis=1)
    case('compress_flat','Compress',[('x',m),('c',np.array([True,False,True]))],[('y',np.compress([True,False,True],m))],11)
    case('eyelike_k','EyeLike',[('x',np.zeros((3,5),np.int32))],[('y',np.eye(3,5,k=3,dtype=np.float64))],9,k=3,dtype=TensorProto.DOUBLE)
    case('eyelike_negk','EyeLike',[('x',np.zeros((4,2),np.float32))],[('y',np.eye(4,2,k=-2,dtype=np.float32))],9,k=-2)
    rs=np.arange(12,dtype=np.float32).reshape(3,4)
    exp=rs.copy(); lens=[2,4,0]
    for b in range(3): exp[b,:lens[b]]=rs[b,:lens[b]][::-1]
    case('revseq_b0','ReverseSequence',[('x',rs),('l',np.array(lens,I))],[('y',exp)],10,batch_axis=0,time_axis=1)
    z=np.zeros((2,0,3),np.float32)
    case('reshape_allowzero','Reshape',[('x',z),('s',np.array([3,0,2],I))],[('y',np.zeros((3,0,2),np.float32))],14,allowzero=1)
    t3=np.arange(2*3*4,dtype=np.int64).reshape(2,3,4)
    case('trilu_3d','Trilu',[('x',t3),('k',np.array(-1,I))],[('y',np.tril(t3,-1))],14,upper=0)
    case('expand_smaller','Expand',[('x',x),('s',np.array([4,1],I))],[('y',x*1)],13)
    case('expand_zero','Expand',[('x',np.ones((1,3),np.float32)),('s',np.array([0,1],I))],[('y',np.zeros((0,3),np.float32))],13)
    case('tile_zero','Tile',[('x',m),('r',np.array([0,2],I))],[('y',np.tile(m,(0,2)))],13)
    case('flatten0','Flatten',[('x',x)],[('y',x.reshape(1,-1))],13,axis=0)
    case('shape_slice','Shape',[('x',x)],[('y',np.array([4],I))],15,start=-2,end=-1)
    case('size_empty','Size',[('x',z)],[('y',np.array(0,I))],13)
    # depth/space
    ds=np.arange(2*8*2*3,dtype=np.float32).reshape(2,8,2,3)
    b=2
    tmp=ds.reshape(2,2,2,2,2,3).transpose(0,3,4,1,5,2).reshape(2,2,4,6)
    case('d2s_dcr','DepthToSpace',[('x',ds)],[('y',tmp)],13,blocksize=2)
    tmp2=ds.reshape(2,2,2,2,2,3).transpose(0,1,4,2,5,3).reshape(2,2,4,6)
    case('d2s_crd','DepthToSpace',[('x',ds)],[('y',tmp2)],13,blocksize=2,mode='CRD')
    case('s2d','SpaceToDepth',[('x',tmp)],[('y',ds)],13,blocksize=2)
    # Resize / Upsample legacy
    img=np.arange(16,dtype=np.float32).reshape(1,1,4,4)
    case('upsample_v7_nearest','Upsample',[('x',img)],[('y',img.repeat(2,2).repeat(3,3))],7,scales=[1.0,1.0,2.0,3.0])
    case('resize_v10_nearest','Resize',[('x',img),('s',np.array([1,1,2,2],np.float32))],[('y',img.repeat(2,2).repeat(2,3))],10)
    def asym_linear(a, sc):
        return interpolate_nd(a, linear_coeffs, scale_factors=sc, coordinate_transformation_mode='asymmetric').astype(np.float32)
    case('upsample_v9_linear','Upsample',[('x',img),('s',np.array([1,1,2,1.5],np.float32))],[('y',asym_linear(img,[1,1,2,1.5]))],9,mode='linear')
    case('resize_v10_linear','Resize',[('x',img),('s',np.array([1,1,0.5,1.5],np.float32))],[('y',asym_linear(img,[1,1,0.5,1.5]))],10,mode='linear')
    # Resize 18: axes + keep aspect ratio
    img2=np.arange(20,dtype=np.float32).reshape(1,1,4,5)
    sz=np.array([7,8],I)
    sc=min(7/4,8/5); osz=[int(sc*4+0.5),int(sc*5+0.5)]
    exp=interpolate_nd(img2, linear_coeffs, output_size=[1,1]+osz).astype(np.float32)
    # reference uses common scale not size/in: recompute
    exp=np.zeros([1,1]+osz,np.float32)
    sf=[1,1,sc,sc]
    for i in range(osz[0]):
        for j in range(osz[1]):
            exp[0,0,i,j]=interpolate_nd_with_x(img2[0,0],2,[sc,sc],[i,j],linear_coeffs)
    case('resize_v18_axes_notlarger','Resize',[('x',img2),('r',None),('sc',None),('sz',sz)],[('y',exp)],18,mode='linear',axes=[2,3],keep_aspect_ratio_policy='not_larger')
    exp=interpolate_nd(img2, cubic_coeffs, scale_factors=[1,1,1.5,0.8]).astype(np.float32)
    case('resize_v18_axes_scales','Resize',[('x',img2),('r',None),('sc',np.array([0.8,1.5],np.float32))],[('y',exp)],18,mode='cubic',axes=[3,-2])
    u8=(np.arange(16).reshape(1,1,4,4)*13).astype(np.uint8)
    exp=interpolate_nd(u8.astype(np.float64), linear_coeffs, scale_factors=[1,1,1.5,1.5]).astype(np.uint8)
    case('resize_u8_linear','Resize',[('x',u8),('r',None),('sc',np.array([1,1,1.5,1.5],np.float32))],[('y',exp)],13,mode='linear')


def opset19_cases():
    # half_pixel_symmetric (opset 19): the numbers of ONNX's resize_upsample/downsample_scales_linear_
    # half_pixel_symmetric examples
    x=np.array([[[[1,2],[3,4]]]],np.float32)
    exp=np.array([[[[1.0, 1.159375, 1.5, 1.840625, 2.0],[1.565217, 1.724592, 2.065217, 2.405842, 2.565217],[2.434783, 2.594158, 2.934783, 3.275408, 3.434783],[3.0, 3.159375, 3.5, 3.840625, 4.0]]]],np.float32)
    case('resize_hps_up','Resize',[('x',x),('r',None),('s',np.array([1,1,2.3,2.94],np.float32))],[('y',exp)],19,mode='linear',coordinate_transformation_mode='half_pixel_symmetric')
    x=np.array([[[[1,2,3,4]]]],np.float32)
    case('resize_hps_down','Resize',[('x',x),('r',None),('s',np.array([1,1,1,0.6],np.float32))],[('y',np.array([[[[1.6666666,3.3333333]]]],np.float32))],19,mode='linear',coordinate_transformation_mode='half_pixel_symmetric')

def string_cases():
    s=np.array([['a','bb','ccc','d'],['e','','ff','g'],['h','i','j','kk']],dtype=object)
    case('split_str','Split',[('x',s),('sp',np.array([1,3],I))],[('a',s[:,:1]),('b',s[:,1:])],13,axis=1)
    case('compress_str','Compress',[('x',s),('c',np.array([True,False,True]))],[('y',s[[0,2]])],11,axis=0)
    case('gatherel_str','GatherElements',[('x',s),('i',np.array([[2,0,1,0]],I))],[('y',np.take_along_axis(s,np.array([[2,0,1,0]]),0))],13,axis=0)
    case('gathernd_str','GatherND',[('x',s),('i',np.array([[1,2],[0,0]],I))],[('y',np.array(['ff','a'],dtype=object))],13)
    o=s.copy(); o[1]=np.array(['X','Y','Z','W'],dtype=object)
    case('scatternd_str','ScatterND',[('x',s),('i',np.array([[1]],I)),('u',np.array([['X','Y','Z','W']],dtype=object))],[('y',o)],13)
    exp=np.array([['off','on','off'],['on','off','off']],dtype=object)
    case('onehot_str','OneHot',[('i',np.array([1,0],I)),('d',np.array(3,I)),('v',np.array(['off','on'],dtype=object))],[('y',exp)],11)
    e=s.copy(); e[:2,0]=s[:2,0][::-1]; e[:3,1]=s[:3,1][::-1]
    case('revseq_str','ReverseSequence',[('x',s),('l',np.array([2,3,1,0],I))],[('y',e)],10,batch_axis=1,time_axis=0)
    img=np.array([[['a','b'],['c','d']]],dtype=object).reshape(1,1,2,2)
    case('resize10_str','Resize',[('x',img),('s',np.array([1,1,2,1],np.float32))],[('y',img.repeat(2,2))],10)
    case('unique_axis_str','Unique',[('x',np.array([['b','a'],['a','a'],['b','a']],dtype=object))],[('y',np.array([['a','a'],['b','a']],dtype=object))],11,axis=0)
    case('trilu_str','Trilu',[('x',s)],[('y',np.where(np.triu(np.ones((3,4)))==1,s,''))],14)
    case('d2s_str','DepthToSpace',[('x',np.array(list('abcd'),dtype=object).reshape(1,4,1,1))],[('y',np.array(list('abcd'),dtype=object).reshape(1,1,2,2))],13,blocksize=2)
    case('sq_str','Unsqueeze',[('x',s),('a',np.array([1],I))],[('y',s.reshape(3,1,4))],13)

def extreme_value_cases():
    """Extreme int64 values that still have an answer (clamping, not overflow)."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    # steps of INT64_MIN / INT64_MAX: start clamps to the last / first element, one element each
    case('slice_minstep', 'Slice', [('x', x), ('s', np.array([BIG], I)), ('e', np.array([SMALL], I)),
                                    ('a', np.array([2], I)), ('p', np.array([SMALL], I))], [('y', x[:, :, 3:4])], 13)
    case('slice_maxstep', 'Slice', [('x', x), ('s', np.array([SMALL], I)), ('e', np.array([BIG], I)),
                                    ('a', np.array([2], I)), ('p', np.array([BIG], I))], [('y', x[:, :, 0:1])], 13)
    # ceil((MIN - MAX) / MIN) = 2 elements: MAX, MAX + MIN = -1
    case('range_huge_neg', 'Range', [('s', np.array(BIG, I)), ('l', np.array(SMALL, I)), ('d', np.array(SMALL, I))],
         [('y', np.array([BIG, -1], I))], 11)
    case('resize_tiny', 'Resize', [('x', x), ('r', None), ('sc', np.array([1, 1e-30, 1], np.float32))],
         [('y', np.zeros((2, 0, 4), np.float32))], 13, mode='cubic')
    # align_corners onto a size-1 axis samples coordinate 0 (ONNX's reference: no division by out - 1 = 0)
    case('resize_align_1', 'Resize', [('x', x), ('r', None), ('sc', None), ('sz', np.array([1, 1, 1], I))],
         [('y', x[:1, :1, :1])], 13, mode='linear', coordinate_transformation_mode='align_corners')
    z3 = np.zeros((3, 3), np.float32)
    case('eyelike_mink', 'EyeLike', [('x', z3)], [('y', z3)], 9, k=int(SMALL))
    case('eyelike_maxk', 'EyeLike', [('x', z3)], [('y', z3)], 9, k=int(BIG))
    case('trilu_mink', 'Trilu', [('x', x), ('k', np.array(SMALL, I))], [('y', x)], 14)
    case('trilu_maxk', 'Trilu', [('x', x), ('k', np.array(BIG, I))], [('y', x)], 14, upper=0)
    # Written as a bad case during development, but valid: the output has rank 3 + 2 = 5, so -4 is axis 1 and
    # the axes {0, 1} are distinct.
    case('unsqueeze_dup', 'Unsqueeze', [('x', x), ('a', np.array([0, -4], I))], [('y', x.reshape(1, 1, 2, 3, 4))],
         13)
    # Written as a bad case during development, but valid: C = 0 is a multiple of blocksize^2 = 2^60, so the
    # output is the empty [1, 0, 2^31, 2^31].
    case('d2s_huge', 'DepthToSpace', [('x', np.zeros((1, 0, 2, 2), np.float32))],
         [('y', casegen.Empty([1, 0, 2 ** 31, 2 ** 31]))], 13, blocksize=1 << 30)


def empty_cases():
    """Empty tensors with huge other dims: the output is empty too (or, for e_pad, all padding), so nothing may
    overflow or be refused for size. (During development these were written with dummy outputs; the expected
    empty shapes are filled in here.)"""
    H = 3 ** 20

    def E(*dims, dt=np.float32):
        return casegen.Empty(dims, dt)

    e = E(H, 0, H)
    case('e_concat', 'Concat', [('a', e), ('b', e)], [('y', E(H, 0, H))], 13, axis=1)
    case('e_concat2', 'Concat', [('a', e), ('b', e)], [('y', E(2 * H, 0, H))], 13, axis=0)
    case('e_flatten', 'Flatten', [('x', e)], [('y', E(H, 0))], 13, axis=1)
    case('e_slice', 'Slice', [('x', e), ('s', np.array([1, 0], I)), ('e', np.array([5, 7], I)),
                              ('a', np.array([0, 2], I))], [('y', E(4, 0, 7))], 13)
    case('e_transpose', 'Transpose', [('x', e)], [('y', E(H, 0, H))], 13)
    case('e_pad', 'Pad', [('x', e), ('p', np.array([-(H - 1), 1, -(H - 2), 0, 0, 0], I))],
         [('y', np.zeros((1, 1, 2), np.float32))], 13)
    case('e_gather', 'Gather', [('x', e), ('i', np.array([0, 1], I))], [('y', E(H, 0, 2))], 13, axis=2)
    case('e_compress', 'Compress', [('x', e), ('c', np.array([True, False, True]))], [('y', E(H, 0, 2))], 11,
         axis=2)
    case('e_split', 'Split', [('x', e), ('s', np.array([1, H - 1], I))], [('a', E(H, 0, 1)), ('b', E(H, 0, H - 1))],
         13, axis=2)
    case('e_onehot', 'OneHot', [('i', E(H, 0, H, dt=I)), ('d', np.array(3, I)), ('v', np.array([0, 1], I))],
         [('y', E(H, 0, H, 3, dt=I))], 11)
    case('e_d2s', 'DepthToSpace', [('x', E(H, 4, 0, H))], [('y', E(H, 1, 0, 2 * H))], 13, blocksize=2)
    case('e_gathernd', 'GatherND', [('x', e), ('i', np.array([[1]], I))], [('y', E(1, 0, H))], 13)
    # updates shape = indices.shape[:-1] + data.shape[1:] = [H, 0] + [0, H]
    case('e_scatternd', 'ScatterND', [('x', e), ('i', E(H, 0, 1, dt=I)), ('u', E(H, 0, 0, H))], [('y', e)], 13)
    case('e_tile', 'Tile', [('x', e), ('r', np.array([1, 5, 1], I))], [('y', e)], 13)
    case('e_expand', 'Expand', [('x', e), ('s', np.array([1, 1, 1], I))], [('y', e)], 13)
    # Y alone is the one empty slice kind: [H, 0, 1] (gen_bad_tensor.py's e_unique also asks for
    # inverse_indices, which would exceed the budget)
    case('e_unique_y', 'Unique', [('x', e)], [('y', E(H, 0, 1))], 11, axis=2)
    # Written as a bad case during development (shape [2^40, 2^40, 0]), but valid: the shape holds a 0, so the
    # output is empty. The dims are [2^40, 2^20, 0] here because an expected-output file whose dims multiply
    # past 2^64 cannot be loaded ([size-overflow]); 2^60 still overflows every 2^31 budget.
    case('cos_huge', 'ConstantOfShape', [('s', np.array([1 << 40, 1 << 20, 0], I))],
         [('y', E(1 << 40, 1 << 20, 0))], 13)
    case('e_resize', 'Resize', [('x', e), ('r', None), ('s', np.array([1, 2, 1], np.float32))], [('y', e)], 13)


def main():
    global OUT
    OUT = casegen.out_dir_from_argv()
    basic_cases()
    opset19_cases()
    string_cases()
    extreme_value_cases()
    empty_cases()


if __name__ == "__main__":
    main()
