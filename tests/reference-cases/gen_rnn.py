"""RNN, GRU, LSTM cases with numpy-computed expected outputs: forward / reverse / bidirectional, layout 0 and
1, sequence_lens, initial_h / initial_c, peepholes, no bias, clip, float64, opset 7 (no layout attribute),
linear_before_reset, input_forget, every activation function with explicit and default alpha/beta, a short
activation list, and the degenerate T=0 / size-1 shapes.

Oracle: the spec's gate equations stepped one batch row at a time in float64.
Usage: /usr/bin/python3 gen_rnn.py OUT_DIR
"""
import numpy as np
from onnx import helper

import casegen


def sig(x):
    return 1 / (1 + np.exp(-x))


ACTS = {
    "Tanh": lambda x, a, b: np.tanh(x),
    "Sigmoid": lambda x, a, b: sig(x),
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "LeakyRelu": lambda x, a, b: np.where(x < 0, a * x, x),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "Affine": lambda x, a, b: a * x + b,
    "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
    "Elu": lambda x, a, b: np.where(x < 0, a * (np.exp(x) - 1), x),
    "Softsign": lambda x, a, b: x / (1 + abs(x)),
    "Softplus": lambda x, a, b: np.log1p(np.exp(x)),
    "ThresholdedRelu": lambda x, a, b: np.where(x > a, x, 0),
}
# activation -> (number of parameters it takes from activation_alpha/_beta, default alpha, default beta)
NPAR = {"LeakyRelu": (1, 0.01, 0), "HardSigmoid": (2, 0.2, 0.5), "Affine": (2, None, None),
        "ScaledTanh": (2, None, None), "Elu": (1, 1.0, 0), "ThresholdedRelu": (1, 1.0, 0)}
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
ACTS_PER_DIR = {"RNN": 1, "GRU": 2, "LSTM": 3}


def run(kind, X, W, R, B, SL, H0, C0, P, direction, layout, acts, alphas, betas, clip, lbr, inpf):
    G = GATES[kind]
    if layout:
        X = X.transpose(1, 0, 2)
        H0 = None if H0 is None else H0.transpose(1, 0, 2)
        C0 = None if C0 is None else C0.transpose(1, 0, 2)
    T, Bt, _ = X.shape
    nd = W.shape[0]
    H = R.shape[2]
    per = ACTS_PER_DIR[kind]
    # alphas/betas are consumed in order by the activations that take parameters
    fl = []
    ai = bi = 0
    for a in acts:
        n, al, be = NPAR.get(a, (0, 0, 0))
        if n >= 1 and ai < len(alphas):
            al = alphas[ai]
            ai += 1
        if n >= 2 and bi < len(betas):
            be = betas[bi]
            bi += 1
        fl.append((a, al, be))
    Y = np.zeros((T, nd, Bt, H))
    Yh = np.zeros((nd, Bt, H))
    Yc = np.zeros((nd, Bt, H))

    def cl(x):
        return np.clip(x, -clip, clip) if clip else x

    for d in range(nd):
        F = [(lambda x, f=f: ACTS[f[0]](x, f[1], f[2])) for f in fl[d * per:(d + 1) * per]]
        back = direction == "reverse" or d == 1
        Wd = W[d].astype(np.float64)
        Rd = R[d].astype(np.float64)
        Bd = B[d].astype(np.float64) if B is not None else np.zeros(2 * G * H)
        Wb, Rb = Bd[:G * H], Bd[G * H:]
        for b in range(Bt):
            L = SL[b] if SL is not None else T
            h = H0[d, b].astype(np.float64) if H0 is not None else np.zeros(H)
            c = C0[d, b].astype(np.float64) if C0 is not None else np.zeros(H)
            for s in range(L):
                t = L - 1 - s if back else s
                x = X[t, b].astype(np.float64)
                if kind == "RNN":
                    h = F[0](cl(Wd @ x + Rd @ h + Wb + Rb))
                elif kind == "GRU":
                    z = F[0](cl(Wd[:H] @ x + Rd[:H] @ h + Wb[:H] + Rb[:H]))
                    r = F[0](cl(Wd[H:2 * H] @ x + Rd[H:2 * H] @ h + Wb[H:2 * H] + Rb[H:2 * H]))
                    if lbr:
                        hh = F[1](cl(Wd[2 * H:] @ x + Wb[2 * H:] + r * (Rd[2 * H:] @ h + Rb[2 * H:])))
                    else:
                        hh = F[1](cl(Wd[2 * H:] @ x + Wb[2 * H:] + Rd[2 * H:] @ (r * h) + Rb[2 * H:]))
                    h = (1 - z) * hh + z * h
                else:  # LSTM, gates in order i, o, f, c; peepholes in order i, o, f
                    Pd = P[d].astype(np.float64) if P is not None else np.zeros(3 * H)
                    g = Wd @ x + Rd @ h + Wb + Rb
                    i = F[0](cl(g[:H] + Pd[:H] * c))
                    f = 1 - i if inpf else F[0](cl(g[2 * H:3 * H] + Pd[2 * H:] * c))
                    cc = F[1](cl(g[3 * H:]))
                    c = f * c + i * cc
                    o = F[0](cl(g[H:2 * H] + Pd[H:2 * H] * c))
                    h = o * F[2](c)
                Y[t, d, b] = h
            Yh[d, b] = h
            Yc[d, b] = c
    if layout:
        Y = Y.transpose(2, 0, 1, 3)
        Yh = Yh.transpose(1, 0, 2)
        Yc = Yc.transpose(1, 0, 2)
    return Y, Yh, Yc


class Gen:
    def __init__(self, out):
        self.out = out
        self.rng = np.random.default_rng(0)
        self.count = 0

    def case(self, kind, direction="forward", layout=0, T=4, Bt=3, I=3, H=5, bias=True, sl=False, h0=False,
             c0=False, p=False, acts=None, alphas=(), betas=(), clip=None, lbr=0, inpf=0, dtype=np.float32,
             opset=14, actlist_short=False):
        self.count += 1
        rng = self.rng
        G = GATES[kind]
        nd = 2 if direction == "bidirectional" else 1
        X = rng.standard_normal((T, Bt, I)).astype(dtype)
        if layout:
            X = np.ascontiguousarray(X.transpose(1, 0, 2))
        W = (rng.standard_normal((nd, G * H, I)) * 0.5).astype(dtype)
        R = (rng.standard_normal((nd, G * H, H)) * 0.5).astype(dtype)
        B = (rng.standard_normal((nd, 2 * G * H)) * 0.3).astype(dtype) if bias else None
        SL = rng.integers(1, T + 1, Bt).astype(np.int32) if sl else None
        sh = (Bt, nd, H) if layout else (nd, Bt, H)
        H0 = rng.standard_normal(sh).astype(dtype) if h0 else None
        C0 = rng.standard_normal(sh).astype(dtype) if c0 else None
        P = (rng.standard_normal((nd, 3 * H)) * 0.5).astype(dtype) if p else None
        dflt = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[kind]
        # an explicit list names every direction's activations, except the deliberately short one
        # (actlist_short), which the executor must repeat for the second direction, as it does the defaults
        al = (acts or dflt) * (1 if (acts and not actlist_short) else nd)
        Y, Yh, Yc = run(kind, X, W, R, B, SL, H0, C0, P, direction, layout, al, list(alphas), list(betas),
                        clip, lbr, inpf)
        names = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
        names = names[:8 if kind == "LSTM" else 6]
        vals = [X, W, R, B, SL, H0, C0, P][:len(names)]
        while vals and vals[-1] is None:
            vals.pop()
            names.pop()
        ins = [(n, v) for n, v in zip(names, vals) if v is not None]
        node_in = [n if v is not None else "" for n, v in zip(names, vals)]
        attrs = dict(hidden_size=H, direction=direction)
        if opset >= 14:
            attrs["layout"] = layout
        if acts:
            attrs["activations"] = acts
        if alphas:
            attrs["activation_alpha"] = list(alphas)
        if betas:
            attrs["activation_beta"] = list(betas)
        if clip:
            attrs["clip"] = clip
        if lbr:
            attrs["linear_before_reset"] = lbr
        if inpf:
            attrs["input_forget"] = inpf
        outs = [("Y", Y.astype(dtype)), ("Y_h", Yh.astype(dtype))]
        if kind == "LSTM":
            outs.append(("Y_c", Yc.astype(dtype)))
        name = "%s_%d_%s_l%d" % (kind.lower(), self.count, direction, layout)
        node = helper.make_node(kind, node_in, [n for n, _ in outs], **attrs)
        model = casegen.make_model([node], name, [casegen.tensor_vi(n, v) for n, v in ins],
                                   [casegen.tensor_vi(n, v) for n, v in outs], opset)
        casegen.write_case(self.out, name, model, ins, outs)


def main():
    g = Gen(casegen.out_dir_from_argv())
    case = g.case
    for k in ["RNN", "GRU", "LSTM"]:
        for dr in ["forward", "reverse", "bidirectional"]:
            for lay in [0, 1]:
                case(k, dr, lay, h0=True, c0=(k == "LSTM"), sl=True, p=(k == "LSTM"))
        case(k, "bidirectional", bias=False)
        case(k, "forward", clip=0.7, h0=True)
        case(k, "forward", dtype=np.float64, sl=True)
        case(k, "bidirectional", dtype=np.float64, opset=7)
    case("GRU", "bidirectional", lbr=1, sl=True, h0=True)
    case("GRU", "forward", lbr=1, clip=0.5)
    case("LSTM", "forward", inpf=1, p=True, c0=True)
    case("LSTM", "bidirectional", acts=["HardSigmoid", "LeakyRelu", "Affine", "Sigmoid", "Tanh", "Tanh"],
         alphas=[0.3, 0.2, 0.9], betas=[0.4, 0.1])
    case("GRU", "bidirectional", acts=["Sigmoid", "Tanh"], actlist_short=True)
    case("RNN", "bidirectional", acts=["Relu", "ScaledTanh"], alphas=[1.5], betas=[0.7])
    case("GRU", "reverse", acts=["Softsign", "Elu"], alphas=[0.8])
    case("LSTM", "reverse", acts=["Sigmoid", "Softplus", "ThresholdedRelu"], alphas=[0.1])
    case("RNN", "forward", T=1, Bt=1, I=1, H=1)
    case("RNN", "forward", T=0, Bt=2)


if __name__ == "__main__":
    main()
