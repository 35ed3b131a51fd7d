"""Reduce, ArgMax/ArgMin, TopK, CumSum, Softmax/LogSoftmax/Hardmax (legacy coercion), pooling (Max/Average/Lp,
1-3-D, dilations, ceil_mode, auto_pad, storage_order indices, int8, Global*, MaxUnpool), normalization
(BatchNormalization 6/7/9 incl. training outputs, InstanceNormalization, LayerNormalization, LRN with an even
size, MeanVarianceNormalization), Dropout in inference, and the NegativeLogLikelihood / SoftmaxCrossEntropy
losses (weights, ignore_index, reductions). Expected values come from numpy: `np.max`/`np.sum`/...,
stable `np.argsort`, a direct window-by-window pool in float64 (`npool`) and the spec's normalization and
loss formulas.

Usage: /usr/bin/python3 gen_nn.py OUT_DIR
"""
import itertools

import numpy as np

import casegen

OUT = None


def case(name, op, inputs, outputs, opset, **attrs):
    """inputs: (name, array or None = omitted optional input); outputs: (name, expected array). The names only
    document the op's parameters; the case's graph values are in0.../out0..."""
    casegen.single_node_case(OUT, name, op, [a for _, a in inputs], [a for _, a in outputs], opset, attrs,
                             ir_version=8)


def sm(z, ax):
    z = z - z.max(axis=ax, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=ax, keepdims=True)


def reduce_softmax_cases():
    rng=np.random.default_rng(0)
    x=rng.standard_normal((2,3,4)).astype(np.float32)
    # Reduce opset 18 with axes input
    case('rmean18', 'ReduceMean', [('x',x),('a',np.array([1],np.int64))], [('y',x.mean(axis=1))], 18, keepdims=0)
    case('rmax18_noaxes', 'ReduceMax', [('x',x)], [('y',x.max(keepdims=True))], 18)
    case('rl2_18_noop', 'ReduceL2', [('x',x),('a',np.array([],np.int64))], [('y',np.abs(x))], 18, noop_with_empty_axes=1)
    case('rsumsq_13_attr', 'ReduceSumSquare', [('x',x)], [('y',(x*x).sum(axis=(0,2),keepdims=True))], 13, axes=[0,-1])
    e=np.zeros((2,0,3),np.float32)
    case('rmax_empty', 'ReduceMax', [('x',e)], [('y',np.full((2,1,3),-np.inf,np.float32))], 13, axes=[1])
    case('rprod_empty', 'ReduceProd', [('x',e)], [('y',np.ones((2,3),np.float32))], 13, axes=[1], keepdims=0)
    case('rlse_empty', 'ReduceLogSumExp', [('x',e)], [('y',np.full((2,1,3),-np.inf,np.float32))], 13, axes=[1])
    case('rsum_empty_18', 'ReduceSum', [('x',e),('a',np.array([1],np.int64))], [('y',np.zeros((2,1,3),np.float32))], 18)
    xi=rng.integers(-100,100,(3,5)).astype(np.int32)
    case('rsum_int', 'ReduceSum', [('x',xi),('a',np.array([1],np.int64))], [('y',xi.sum(axis=1,keepdims=True).astype(np.int32))], 13)
    xu=rng.integers(0,255,(3,5)).astype(np.uint8)
    case('rmin_u8', 'ReduceMin', [('x',xu)], [('y',xu.min(axis=0,keepdims=True))], 13, axes=[0])
    xl=np.array([[1000.,1000.,-1000.],[1e-3,2.,3.]],np.float32)
    case('rlse_large', 'ReduceLogSumExp', [('x',xl)], [('y',np.array([1000+np.log(2),np.log(np.exp(xl[1]).sum())],np.float32))], 13, axes=[1], keepdims=0)
    # ArgMax ties
    t=np.array([[1,3,3,2],[5,5,5,1]],np.int64)
    case('argmax_last_int', 'ArgMax', [('x',t)], [('y',np.array([[2],[2]],np.int64))], 13, axis=1, select_last_index=1)
    case('argmin_first', 'ArgMin', [('x',t)], [('y',np.array([0,0,0,1],np.int64))], 13, axis=0, keepdims=0)
    # TopK ties
    tk=np.array([[3,1,3,2,3,0]],np.float32)
    case('topk_ties', 'TopK', [('x',tk),('k',np.array([4],np.int64))], [('v',np.array([[3,3,3,2]],np.float32)),('i',np.array([[0,2,4,3]],np.int64))], 11)
    case('topk_small_int', 'TopK', [('x',tk.astype(np.int32)),('k',np.array([3],np.int64))], [('v',np.array([[0,1,2]],np.int32)),('i',np.array([[5,1,3]],np.int64))], 11, largest=0)
    case('topk_k0', 'TopK', [('x',tk),('k',np.array([0],np.int64))], [('v',np.zeros((1,0),np.float32)),('i',np.zeros((1,0),np.int64))], 11)
    case('topk_v1', 'TopK', [('x',tk)], [('v',np.array([[3,3]],np.float32)),('i',np.array([[0,2]],np.int64))], 1, k=2)
    x3=rng.standard_normal((3,7,2)).astype(np.float32)
    idx=np.argsort(-x3,axis=1,kind='stable')[:,:3,:]
    case('topk_axis1', 'TopK', [('x',x3),('k',np.array([3],np.int64))], [('v',np.take_along_axis(x3,idx,1)),('i',idx.astype(np.int64))], 10, axis=1)
    # CumSum
    ci=rng.integers(-9,9,(2,5)).astype(np.int32)
    r=np.cumsum(ci[:,::-1],axis=1)[:,::-1]; ex=np.concatenate([r[:,1:],np.zeros((2,1),np.int32)],axis=1)
    case('cumsum_rev_excl_int', 'CumSum', [('x',ci),('a',np.array(-1,np.int32))], [('y',ex.astype(np.int32))], 14, exclusive=1, reverse=1)
    # Softmax legacy coerce
    xs=rng.standard_normal((2,3,4)).astype(np.float32)
    case('softmax11_axis1', 'Softmax', [('x',xs)], [('y',sm(xs.reshape(2,12),1).reshape(2,3,4))], 11)
    case('softmax13_axis1', 'Softmax', [('x',xs)], [('y',sm(xs,1))], 13, axis=1)
    case('logsoftmax11_axis0', 'LogSoftmax', [('x',xs)], [('y',np.log(sm(xs.reshape(1,24),1)).reshape(2,3,4))], 11, axis=0)
    hm=np.zeros(24,np.float32); hm[np.argmax(xs.reshape(2,12),1)[0]]=1; hm[12+np.argmax(xs.reshape(2,12),1)[1]]=1
    case('hardmax11', 'Hardmax', [('x',xs)], [('y',hm.reshape(2,3,4))], 11)


def npool(x, k, s, d, pb, pe, ceil, kind, incl=0, p=2):
    """Pools window by window: the output size from the spec's formula (a ceil_mode window must start inside
    the input or its begin padding), then max / average (over the real elements, or over the padded window
    with count_include_pad) / Lp of the in-range elements. Returns (y, output spatial sizes)."""
    nsp = len(k)
    ins = x.shape[2:]
    outs = []
    for j in range(nsp):
        ek = (k[j] - 1) * d[j] + 1
        span = ins[j] + pb[j] + pe[j] - ek
        o = (-(-span // s[j]) if ceil else span // s[j]) + 1
        if ceil and (o - 1) * s[j] >= ins[j] + pb[j]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for oc in itertools.product(*[range(o) for o in outs]):
                vals = []
                cnt_pad = 0
                for kk in itertools.product(*[range(kj) for kj in k]):
                    pos = [oc[j] * s[j] - pb[j] + kk[j] * d[j] for j in range(nsp)]
                    if all(-pb[j] <= pos[j] < ins[j] + pe[j] for j in range(nsp)):
                        cnt_pad += 1
                    if all(0 <= pos[j] < ins[j] for j in range(nsp)):
                        vals.append(x[(n, c) + tuple(pos)])
                if kind == 'max':
                    y[(n, c) + oc] = max(vals)
                elif kind == 'avg':
                    y[(n, c) + oc] = sum(vals) / (cnt_pad if incl else len(vals))
                else:
                    y[(n, c) + oc] = sum(abs(v) ** p for v in vals) ** (1 / p)
    return y.astype(x.dtype), outs


def indices(x, k, s, d, pb, pe, ceil, order):
    """MaxPool's Indices: the flat index of each window's first maximum, row-major (storage_order 0) or
    column-major (1) over the spatial dims, plus (n * C + c) * spatial size."""
    nsp = len(k)
    ins = x.shape[2:]
    yv, outs = npool(x, k, s, d, pb, pe, ceil, 'max')
    res = np.zeros(yv.shape, np.int64)
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for oc in itertools.product(*[range(o) for o in outs]):
                best = None
                for kk in itertools.product(*[range(kj) for kj in k]):
                    pos = [oc[j] * s[j] - pb[j] + kk[j] * d[j] for j in range(nsp)]
                    if all(0 <= pos[j] < ins[j] for j in range(nsp)):
                        v = x[(n, c) + tuple(pos)]
                        if best is None or v > best[0]:
                            best = (v, pos)
                sp = np.ravel_multi_index(best[1], ins, order='C' if order == 0 else 'F')
                res[(n, c) + oc] = (n * x.shape[1] + c) * int(np.prod(ins)) + sp
    return res


def pool_cases():
    rng=np.random.default_rng(1)
    x=rng.standard_normal((2,2,7,6,5)).astype(np.float32)
    k=[3,2,2];s=[2,2,3];d=[2,1,2];pb=[1,0,1];pe=[2,1,1]
    y,_=npool(x,k,s,d,pb,pe,True,'max')
    pads=pb+pe
    case('maxpool3d_dil_ceil_idx0','MaxPool',[('x',x)],[('y',y),('i',indices(x,k,s,d,pb,pe,True,0))],12,kernel_shape=k,strides=s,dilations=d,pads=pads,ceil_mode=1)
    case('maxpool3d_dil_ceil_idx1','MaxPool',[('x',x)],[('y',y),('i',indices(x,k,s,d,pb,pe,True,1))],12,kernel_shape=k,strides=s,dilations=d,pads=pads,ceil_mode=1,storage_order=1)
    x2=rng.standard_normal((1,3,6,7)).astype(np.float32)
    for incl in (0,1):
        ya,_=npool(x2,[3,3],[2,2],[1,1],[1,1],[1,1],True,'avg',incl)
        case(f'avgpool_ceil_incl{incl}','AveragePool',[('x',x2)],[('y',ya)],11,kernel_shape=[3,3],strides=[2,2],pads=[1,1,1,1],ceil_mode=1,count_include_pad=incl)
    ya,_=npool(x2,[2,3],[1,2],[2,2],[1,0],[0,2],False,'avg',1)
    case('avgpool19_dil','AveragePool',[('x',x2)],[('y',ya)],19,kernel_shape=[2,3],strides=[1,2],dilations=[2,2],pads=[1,0,0,2],count_include_pad=1)
    yl,_=npool(x2,[2,2],[2,1],[1,2],[0,1],[1,1],True,'lp',p=3)
    case('lppool18','LpPool',[('x',x2)],[('y',yl)],18,kernel_shape=[2,2],strides=[2,1],dilations=[1,2],pads=[0,1,1,1],ceil_mode=1,p=3)
    yl,_=npool(x2,[3,2],[1,1],[1,1],[0,0],[0,0],False,'lp',p=2)
    case('lppool11','LpPool',[('x',x2)],[('y',yl)],11,kernel_shape=[3,2])
    x1=rng.standard_normal((2,3,9)).astype(np.float32)
    # SAME_LOWER 1-D stride 2 kernel 4: out=5 total=(5-1)*2+4-9=3 -> pb=2 pe=1
    ym,_=npool(x1,[4],[2],[1],[2],[1],False,'max')
    case('maxpool1d_same_lower','MaxPool',[('x',x1)],[('y',ym)],11,kernel_shape=[4],strides=[2],auto_pad='SAME_LOWER')
    ya,_=npool(x1,[4],[2],[1],[1],[2],False,'avg',0)
    case('avgpool1d_same_upper','AveragePool',[('x',x1)],[('y',ya)],11,kernel_shape=[4],strides=[2],auto_pad='SAME_UPPER')
    ym,_=npool(x1,[4],[3],[1],[0],[0],False,'max')
    case('maxpool1d_valid','MaxPool',[('x',x1)],[('y',ym)],11,kernel_shape=[4],strides=[3],auto_pad='VALID')
    case('globallp','GlobalLpPool',[('x',x2)],[('y',(np.abs(x2)**3).sum(axis=(2,3),keepdims=True)**(1/3))],2,p=3)
    case('globalmax_1d','GlobalMaxPool',[('x',x1)],[('y',x1.max(axis=2,keepdims=True))],1)
    xi8=rng.integers(-128,127,(1,2,5,5)).astype(np.int8)
    ym,_=npool(xi8.astype(np.float32),[2,2],[2,2],[1,1],[0,0],[0,0],True,'max')
    case('maxpool_int8_ceil','MaxPool',[('x',xi8)],[('y',ym.astype(np.int8))],12,kernel_shape=[2,2],strides=[2,2],ceil_mode=1)
    # MaxUnpool roundtrip 1-D pads
    xu=rng.standard_normal((1,2,4)).astype(np.float32); iu=np.array([[[0,3,4,7],[9,10,13,15]]],np.int64)
    yu=np.zeros(16,np.float32); yu[iu.ravel()]=xu.ravel()
    case('maxunpool1d','MaxUnpool',[('x',xu),('i',iu)],[('y',yu.reshape(1,2,8))],11,kernel_shape=[2],strides=[2])


def norm_loss_cases():
    rng=np.random.default_rng(2)
    x=rng.standard_normal((2,3,4,5)).astype(np.float32)
    s=rng.standard_normal((3,4,5)).astype(np.float32); b=rng.standard_normal((3,4,5)).astype(np.float32)
    m=rng.standard_normal((3,4,5)).astype(np.float32); v=rng.random((3,4,5)).astype(np.float32)
    case('bn7_spatial0','BatchNormalization',[('x',x),('s',s),('b',b),('m',m),('v',v)],[('y',(s*(x-m)/np.sqrt(v+1e-5)+b).astype(np.float32))],7,spatial=0)
    s=rng.standard_normal(3).astype(np.float32); b=rng.standard_normal(3).astype(np.float32); m=rng.standard_normal(3).astype(np.float32); v=rng.random(3).astype(np.float32)
    bm=x.mean(axis=(0,2,3)); bv=x.var(axis=(0,2,3))
    r=lambda a:a.reshape(1,3,1,1)
    y=(r(s)*(x-r(bm))/np.sqrt(r(bv)+1e-5)+r(b)).astype(np.float32)
    case('bn9_training','BatchNormalization',[('x',x),('s',s),('b',b),('m',m),('v',v)],[('y',y),('rm',(m*0.8+bm*0.2).astype(np.float32)),('rv',(v*0.8+bv*0.2).astype(np.float32)),('sm',bm.astype(np.float32))],9,momentum=0.8)
    case('bn6_is_test','BatchNormalization',[('x',x),('s',s),('b',b),('m',m),('v',v)],[('y',(r(s)*(x-r(m))/np.sqrt(r(v)+1e-3)+r(b)).astype(np.float32))],6,is_test=1,epsilon=1e-3)
    xd=x.astype(np.float64)
    mu=xd.mean(axis=(2,3),keepdims=True); va=xd.var(axis=(2,3),keepdims=True)
    case('instnorm_double','InstanceNormalization',[('x',xd),('s',s.astype(np.float64)),('b',b.astype(np.float64))],[('y',r(s)*(xd-mu)/np.sqrt(va+1e-2)+r(b))],6,epsilon=1e-2)
    sc=rng.standard_normal((1,5)).astype(np.float32)
    mu=x.mean(axis=(2,3),keepdims=True); va=x.var(axis=(2,3),keepdims=True); inv=1/np.sqrt(va+1e-5)
    case('layernorm_nobias_bcast','LayerNormalization',[('x',x),('s',sc),('b',None)],[('y',((x-mu)*inv*sc).astype(np.float32)),('m',mu.astype(np.float32)),('i',inv.astype(np.float32))],17,axis=2)
    case('layernorm_only_y','LayerNormalization',[('x',x),('s',sc),('b',sc)],[('y',((x-mu)*inv*sc+sc).astype(np.float32))],17,axis=-2)
    # LRN even size
    size=4; a=2e-4; be=0.6; bi=1.5
    sq=np.zeros_like(x)
    for c in range(3):
        lo=max(0,c-1); hi=min(2,c+2)
        sq[:,c]=(x[:,lo:hi+1]**2).sum(axis=1)
    case('lrn_even','LRN',[('x',x)],[('y',(x/(bi+a/size*sq)**be).astype(np.float32))],13,size=size,alpha=a,beta=be,bias=bi)
    mu=x.mean(axis=(1,),keepdims=True); sd=np.sqrt((x**2).mean(axis=1,keepdims=True)-mu**2)
    case('mvn_axis1','MeanVarianceNormalization',[('x',x)],[('y',((x-mu)/(sd+1e-9)).astype(np.float32))],13,axes=[1])
    case('dropout7_mask','Dropout',[('x',x)],[('y',x),('m',np.ones_like(x))],7,ratio=0.3)
    case('dropout10_mask','Dropout',[('x',x)],[('y',x),('m',np.ones(x.shape,bool))],10)
    case('dropout6_is_test','Dropout',[('x',x)],[('y',x)],6,is_test=1)
    case('dropout12_infer','Dropout',[('x',x),('r',np.array(0.4,np.float32)),('t',np.array(False))],[('y',x),('m',np.ones(x.shape,bool))],12)
    # losses
    inp=rng.standard_normal((3,4,2)).astype(np.float32); tg=np.array([[1,-1],[-1,-1],[3,0]],np.int32)
    w=rng.random(4).astype(np.float32)
    l=np.zeros((3,2),np.float32); ws=0
    for n in range(3):
        for d in range(2):
            if tg[n,d]!=-1: l[n,d]=-inp[n,tg[n,d],d]*w[tg[n,d]]; ws+=w[tg[n,d]]
    case('nll_int32_mean_w_ii','NegativeLogLikelihoodLoss',[('x',inp),('t',tg),('w',w)],[('l',np.array(l.sum()/ws,np.float32))],13,ignore_index=-1)
    case('nll_sum','NegativeLogLikelihoodLoss',[('x',inp),('t',np.abs(tg))],[('l',np.array(sum(-inp[n,abs(tg[n,d]),d] for n in range(3) for d in range(2)),np.float32))],12,reduction='sum')
    tall=np.full((3,2),2,np.int64)
    case('nll_all_ignored','NegativeLogLikelihoodLoss',[('x',inp),('t',tall)],[('l',np.array(np.nan,np.float32))],13,ignore_index=2)
    lp=inp-inp.max(axis=1,keepdims=True); lp=lp-np.log(np.exp(lp).sum(axis=1,keepdims=True))
    tp=np.abs(tg).astype(np.int64)
    l=np.array([[-lp[n,tp[n,d],d]*w[tp[n,d]] for d in range(2)] for n in range(3)],np.float32)
    case('sce_none_w_logprob','SoftmaxCrossEntropyLoss',[('x',inp),('t',tp),('w',w)],[('l',l),('lp',lp.astype(np.float32))],13,reduction='none')
    inp2=rng.standard_normal((5,3)).astype(np.float32); t2=np.array([0,2,1,1,0],np.int64)
    lp2=inp2-inp2.max(axis=1,keepdims=True); lp2=lp2-np.log(np.exp(lp2).sum(axis=1,keepdims=True))
    case('sce_2d_mean','SoftmaxCrossEntropyLoss',[('x',inp2),('t',t2)],[('l',np.array(np.mean([-lp2[i,t2[i]] for i in range(5)]),np.float32))],12)


def main():
    global OUT
    OUT = casegen.out_dir_from_argv()
    reduce_softmax_cases()
    pool_cases()
    norm_loss_cases()


if __name__ == "__main__":
    main()
