"""Conv, ConvTranspose, MatMul, Gemm, Einsum cases with numpy-computed expected outputs.

Oracles: Conv pads then slides a dilated window (float64); ConvTranspose scatters every input element through
the kernel into the full output, then crops (pads / output_shape / SAME_*); MatMul is numpy.matmul, Gemm is
numpy @, Einsum is numpy.einsum. Usage: /usr/bin/python3 gen_conv.py OUT_DIR
"""
import itertools

import numpy as np

import casegen


def conv_ref(x, w, b, strides, dil, pads_b, pads_e, group):
    """Conv as pad-then-slide over a float64 copy (independent of the executor's index arithmetic)."""
    N, C = x.shape[:2]
    M = w.shape[0]
    ks = w.shape[2:]
    nsp = len(ks)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads_b[i], pads_e[i]) for i in range(nsp)])
    keff = [(ks[i] - 1) * dil[i] + 1 for i in range(nsp)]
    outs = [(xp.shape[2 + i] - keff[i]) // strides[i] + 1 for i in range(nsp)]
    y = np.zeros((N, M) + tuple(outs))
    Cg = C // group
    Mg = M // group
    for m in range(M):
        g = m // Mg
        for o in itertools.product(*[range(s) for s in outs]):
            sl = tuple(slice(o[i] * strides[i], o[i] * strides[i] + keff[i], dil[i]) for i in range(nsp))
            patch = xp[(slice(None), slice(g * Cg, (g + 1) * Cg)) + sl]
            y[(slice(None), m) + o] = (patch * w[m].astype(np.float64)).reshape(N, -1).sum(1)
        if b is not None:
            y[:, m] += b[m]
    return y


def same_pads(ins, ks, s, d, upper):
    pb, pe = [], []
    for i in range(len(ins)):
        out = -(-ins[i] // s[i])
        keff = (ks[i] - 1) * d[i] + 1
        tot = max(0, (out - 1) * s[i] + keff - ins[i])
        small = tot // 2
        b = small if upper else tot - small
        pb.append(b)
        pe.append(tot - b)
    return pb, pe


def convt_ref(x, w, b, s, d, opad, group, pads=None, output_shape=None, auto_pad="NOTSET"):
    """ConvTranspose by scattering each input element through the kernel, then cropping the full result."""
    N, C = x.shape[:2]
    Mg = w.shape[1]
    M = Mg * group
    ks = w.shape[2:]
    nsp = len(ks)
    ins = x.shape[2:]
    full = [s[i] * (ins[i] - 1) + opad[i] + (ks[i] - 1) * d[i] + 1 for i in range(nsp)]
    yf = np.zeros((N, M) + tuple(full))
    Cg = C // group
    for c in range(C):
        g = c // Cg
        for i in itertools.product(*[range(v) for v in ins]):
            for k in itertools.product(*[range(v) for v in ks]):
                o = tuple(i[j] * s[j] + k[j] * d[j] for j in range(nsp))
                yf[(slice(None), slice(g * Mg, (g + 1) * Mg)) + o] += \
                    x[(slice(None), c) + i][:, None] * w[(c, slice(None)) + k][None, :]
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        outs = output_shape if output_shape is not None else [ins[i] * s[i] for i in range(nsp)]
        pb = []
        for i in range(nsp):
            tot = full[i] - outs[i]
            if tot < 0:
                pb.append(0)
            else:
                pb.append(tot // 2 if auto_pad == "SAME_UPPER" else tot - tot // 2)
    else:
        pb = pads[:nsp] if pads else [0] * nsp
        pe = pads[nsp:] if pads else [0] * nsp
        outs = [full[i] - pb[i] - pe[i] for i in range(nsp)]
    y = np.zeros((N, M) + tuple(outs))
    # the window [pb, pb + out) of the full result, zero outside it
    for o in itertools.product(*[range(v) for v in outs]):
        src = tuple(o[i] + pb[i] for i in range(nsp))
        if all(0 <= src[i] < full[i] for i in range(nsp)):
            y[(slice(None), slice(None)) + o] = yf[(slice(None), slice(None)) + src]
    if b is not None:
        y += b.reshape((1, M) + (1,) * nsp)
    return y


def gen_conv(out):
    rng = np.random.default_rng(1)
    for nsp in (1, 2, 3):
        for trial in range(6):
            group = int(rng.choice([1, 2, 3]))
            Cg = rng.integers(1, 3)
            Mg = rng.integers(1, 3)
            C = group * Cg
            M = group * Mg
            N = rng.integers(1, 3)
            ks = [int(v) for v in rng.integers(1, 4, size=nsp)]
            s = [int(v) for v in rng.integers(1, 3, size=nsp)]
            d = [int(v) for v in rng.integers(1, 3, size=nsp)]
            ins = [int(rng.integers(max(5, (k - 1) * dd + 1), 8)) for k, dd in zip(ks, d)]
            x = rng.standard_normal((N, C) + tuple(ins)).astype(np.float32)
            w = rng.standard_normal((M, Cg) + tuple(ks)).astype(np.float32)
            b = rng.standard_normal(M).astype(np.float32) if trial % 2 else None
            mode = ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET", "SAME_LOWER"][trial]
            attrs = dict(group=group, strides=s, dilations=d)
            if mode == "NOTSET":
                pads = [int(v) for v in rng.integers(0, 3, size=2 * nsp)]
                attrs["pads"] = pads
                pb, pe = pads[:nsp], pads[nsp:]
                if trial == 4:
                    attrs["kernel_shape"] = ks
            elif mode == "VALID":
                pb = pe = [0] * nsp
                attrs["auto_pad"] = "VALID"
            else:
                pb, pe = same_pads(ins, ks, s, d, mode == "SAME_UPPER")
                attrs["auto_pad"] = mode
            y = conv_ref(x, w, b, s, d, pb, pe, group).astype(np.float32)
            ins = [x, w] + ([b] if b is not None else [])
            casegen.single_node_case(out, "conv_%dd_%d" % (nsp, trial), "Conv", ins, [y],
                                     opset=11 if trial < 3 else 7, attrs=attrs)
    # double and float16
    x = rng.standard_normal((1, 2, 5, 5))
    w = rng.standard_normal((3, 2, 3, 3))
    y = conv_ref(x, w, None, [1, 1], [1, 1], [1, 1], [1, 1], 1)
    casegen.single_node_case(out, "conv_double", "Conv", [x, w], [y], opset=13, attrs=dict(pads=[1, 1, 1, 1]))
    x16 = x.astype(np.float16)
    w16 = w.astype(np.float16)
    y = conv_ref(x16, w16, None, [1, 1], [1, 1], [0, 0], [0, 0], 1).astype(np.float16)
    casegen.single_node_case(out, "conv_f16", "Conv", [x16, w16], [y], opset=13)


def gen_conv_transpose(out):
    rng = np.random.default_rng(2)
    for nsp in (1, 2, 3):
        for trial in range(5):
            group = int(rng.choice([1, 2]))
            Cg = int(rng.integers(1, 3))
            Mg = int(rng.integers(1, 3))
            C = group * Cg
            ks = [int(v) for v in rng.integers(1, 4, size=nsp)]
            s = [int(v) for v in rng.integers(1, 4, size=nsp)]
            d = [int(v) for v in rng.integers(1, 3, size=nsp)]
            ins = [int(v) for v in rng.integers(2, 5, size=nsp)]
            opad = [int(rng.integers(0, max(s[i], d[i]))) for i in range(nsp)]
            x = rng.standard_normal((2, C) + tuple(ins)).astype(np.float32)
            w = rng.standard_normal((C, Mg) + tuple(ks)).astype(np.float32)
            b = rng.standard_normal(Mg * group).astype(np.float32) if trial % 2 else None
            attrs = dict(group=group, strides=s, dilations=d, output_padding=opad)
            kw = {}
            if trial == 0:
                pads = [int(v) for v in rng.integers(0, 2, size=2 * nsp)]
                attrs["pads"] = kw["pads"] = pads
            elif trial == 1:
                attrs["auto_pad"] = kw["auto_pad"] = "SAME_UPPER"
            elif trial == 2:
                attrs["auto_pad"] = kw["auto_pad"] = "SAME_LOWER"
            elif trial == 3:
                osz = [int(s[i] * (ins[i] - 1) + opad[i] + (ks[i] - 1) * d[i] + 1 - rng.integers(-1, 3))
                       for i in range(nsp)]
                attrs["output_shape"] = kw["output_shape"] = osz
            y = convt_ref(x, w, b, s, d, opad, group, **kw).astype(np.float32)
            casegen.single_node_case(out, "convt_%dd_%d" % (nsp, trial), "ConvTranspose",
                                     [x, w] + ([b] if b is not None else []), [y], opset=11, attrs=attrs)


def gen_matmul(out):
    rng = np.random.default_rng(3)
    shapes = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3,)), ((3,), (5, 3, 2)),
              ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (2, 1, 4, 6)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
              ((4, 3), (3, 4))]
    for i, (sa, sb) in enumerate(shapes):
        for dt in (np.float32, np.int32, np.int64, np.uint32, np.float64):
            if dt in (np.int32, np.int64, np.uint32):
                a = rng.integers(0, 50, size=sa).astype(dt)
                b = rng.integers(0, 50, size=sb).astype(dt)
                y = np.matmul(a, b)
            else:
                a = rng.standard_normal(sa).astype(dt)
                b = rng.standard_normal(sb).astype(dt)
                y = np.matmul(a.astype(np.float64), b.astype(np.float64))
            casegen.single_node_case(out, "matmul_%d_%s" % (i, dt.__name__), "MatMul", [a, b],
                                     [np.asarray(y).astype(dt)], opset=13)
    # int32 products wrap
    a = np.array([[2 ** 30, 2 ** 30]], dtype=np.int32)
    b = np.array([[2], [2]], dtype=np.int32)
    casegen.single_node_case(out, "matmul_int32_wrap", "MatMul", [a, b],
                             [np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(np.int32)], opset=13)


def gen_gemm(out):
    rng = np.random.default_rng(4)
    # transA, transB, C's shape (None: no C), alpha, beta
    variants = [(0, 0, (3, 4), 1., 1.), (1, 0, (4,), 0.5, 2.), (0, 1, (3, 1), 1., 0.),
                (1, 1, (1, 4), 2., -1.), (0, 0, (), 1., 1.), (1, 1, None, 0.25, 1.)]
    for i, (ta, tb, cs, al, be) in enumerate(variants):
        A = rng.standard_normal((5, 3) if ta else (3, 5)).astype(np.float32)
        B = rng.standard_normal((4, 5) if tb else (5, 4)).astype(np.float32)
        y = al * (A.T if ta else A).astype(np.float64) @ (B.T if tb else B).astype(np.float64)
        ins = [A, B]
        if cs is not None:
            C = rng.standard_normal(cs).astype(np.float32)
            y = y + be * C
            ins.append(C)
        casegen.single_node_case(out, "gemm_%d" % i, "Gemm", ins, [y.astype(np.float32)], opset=13,
                                 attrs=dict(transA=ta, transB=tb, alpha=al, beta=be))
    A = rng.integers(-5, 5, size=(3, 4)).astype(np.int64)
    B = rng.integers(-5, 5, size=(4, 2)).astype(np.int64)
    C = rng.integers(-5, 5, size=(2,)).astype(np.int64)
    casegen.single_node_case(out, "gemm_int64", "Gemm", [A, B, C], [(2 * A @ B + 3 * C).astype(np.int64)],
                             opset=13, attrs=dict(alpha=2.0, beta=3.0))
    A = rng.standard_normal((3, 4)).astype(np.float32)
    B = rng.standard_normal((4, 2)).astype(np.float32)
    C = rng.standard_normal((3, 2)).astype(np.float32)
    casegen.single_node_case(out, "gemm_opset6", "Gemm", [A, B, C],
                             [(A.astype(np.float64) @ B + C).astype(np.float32)], opset=6)
    C1 = rng.standard_normal((2,)).astype(np.float32)
    casegen.single_node_case(out, "gemm_opset6_bcast", "Gemm", [A, B, C1],
                             [(A.astype(np.float64) @ B + C1).astype(np.float32)], opset=6,
                             attrs=dict(broadcast=1))


def gen_einsum(out):
    rng = np.random.default_rng(5)
    eqs = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
           ("ii", [(3, 3)]), ("iij->ji", [(3, 3, 2)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 4)]),
           ("...ii->...i", [(2, 3, 3)]), ("i,i", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("ij->", [(3, 4)]),
           ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ijk->kji", [(2, 3, 4)]),
           ("...,...->...", [(2, 3), (3,)]),
           ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]), ("Ab,bA->", [(2, 3), (3, 2)]), ("ba", [(2, 3)]),
           ("i...->...", [(3, 2, 4)]), ("ij->i", [(0, 3)]), ("ij->j", [(0, 3)]),
           ("a...b,...b->...a", [(4, 2, 3), (1, 3)]), (" i j , j k -> i k ", [(2, 3), (3, 2)]),
           ("...ij->...ji", [(2, 3)]), ("bac,cab->ab", [(2, 2, 3), (3, 2, 2)]), ("ii...->i...", [(3, 3, 2)])]
    for i, (eq, shs) in enumerate(eqs):
        for dt in (np.float32, np.int64):
            if dt == np.float32:
                ops = [rng.standard_normal(s).astype(dt) for s in shs]
                y = np.einsum(eq.replace(" ", ""), *[o.astype(np.float64) for o in ops])
            else:
                ops = [rng.integers(-3, 4, size=s).astype(dt) for s in shs]
                y = np.einsum(eq.replace(" ", ""), *ops)
            casegen.single_node_case(out, "einsum_%d_%s" % (i, dt.__name__), "Einsum", ops,
                                     [np.asarray(y).astype(dt)], opset=12, attrs=dict(equation=eq))


def main():
    out = casegen.out_dir_from_argv()
    gen_conv(out)
    gen_conv_transpose(out)
    gen_matmul(out)
    gen_gemm(out)
    gen_einsum(out)


if __name__ == "__main__":
    main()
