"""GridSample cases with numpy-computed expected outputs: modes bilinear / nearest / bicubic (opset 16) and
cubic / linear (opset 20), padding zeros / border / reflection, align_corners 0 and 1, grids inside [-1, 1]
and far outside it, and a height-1 input under reflection.

Two oracles, one per opset, because the references differ where bicubic meets border padding:
- opset 16 names torch.nn.functional.grid_sample as its reference (its backend test data came from torch):
  gs_torch transcribes torch's CPU algorithm (pad the source coordinate for bilinear/nearest; for bicubic
  take the 4x4 taps around the unpadded point and pad each tap);
- opset 20 comes with ONNX's own reference implementation: gs_ref transcribes it (move an out-of-range point
  onto the border or reflect it, then take taps through a padded pixel reader).
Usage: /usr/bin/python3 gen_gridsample.py OUT_DIR
"""
import numpy as np

import casegen


def denorm(n, L, ac):
    return (n + 1) / 2.0 * (L - 1) if ac else ((n + 1) * L - 1) / 2.0


def reflect(x, lo, hi):
    rng = hi - lo
    if x < lo:
        dx = lo - x
        n = int(dx / rng)
        r = dx - n * rng
        return lo + r if n % 2 == 0 else hi - r
    if x > hi:
        dx = x - hi
        n = int(dx / rng)
        r = dx - n * rng
        return hi - r if n % 2 == 0 else lo + r
    return x


def pix(P, i, j, pm, bd):
    H, W = P.shape
    if pm == "zeros":
        return P[i, j] if 0 <= i < H and 0 <= j < W else 0.0
    if pm == "border":
        return P[min(max(i, 0), H - 1), min(max(j, 0), W - 1)]
    return P[int(reflect(i, bd[0], bd[2])), int(reflect(j, bd[1], bd[3]))]


def cubic(t):
    A = -0.75
    x = abs(t)
    return [((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A,
            ((A + 2) * x - (A + 3)) * x * x + 1,
            ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1,
            ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A]


def gs_ref(X, G, mode, pm, ac):
    N, C, H, W = X.shape
    Ho, Wo = G.shape[1:3]
    Y = np.zeros((N, C, Ho, Wo))
    bd = [0, 0, H - 1, W - 1] if ac else [-0.5, -0.5, H - 0.5, W - 0.5]
    for n in range(N):
        for c in range(C):
            P = X[n, c].astype(np.float64)
            for a in range(Ho):
                for b in range(Wo):
                    y = denorm(float(G[n, a, b, 1]), H, ac)
                    x = denorm(float(G[n, a, b, 0]), W, ac)
                    if mode == "nearest":
                        y = np.rint(y)
                        x = np.rint(x)
                    if y < bd[0] or y > bd[2]:
                        if pm == "border":
                            y = min(max(y, 0), H - 1)
                        elif pm == "reflection":
                            y = reflect(y, bd[0], bd[2])
                    if x < bd[1] or x > bd[3]:
                        if pm == "border":
                            x = min(max(x, 0), W - 1)
                        elif pm == "reflection":
                            x = reflect(x, bd[1], bd[3])
                    if mode == "nearest":
                        v = pix(P, int(y), int(x), pm, bd)
                    elif mode == "bilinear":
                        y0 = int(np.floor(y))
                        x0 = int(np.floor(x))
                        ty = y - y0
                        tx = x - x0
                        v = sum(wy * wx * pix(P, y0 + i, x0 + j, pm, bd)
                                for i, wy in enumerate([1 - ty, ty]) for j, wx in enumerate([1 - tx, tx]))
                    else:
                        y0 = int(np.floor(y))
                        x0 = int(np.floor(x))
                        cy = cubic(y - y0)
                        cx = cubic(x - x0)
                        v = sum(cy[i] * cx[j] * pix(P, y0 - 1 + i, x0 - 1 + j, pm, bd)
                                for i in range(4) for j in range(4))
                    Y[n, c, a, b] = v
    return Y.astype(np.float32)


# ---- torch.nn.functional.grid_sample (2-D, CPU), the opset-16 reference
def torch_reflect(x, twice_lo, twice_hi):
    if twice_lo == twice_hi:
        return 0.0
    lo = twice_lo / 2
    span = (twice_hi - twice_lo) / 2
    x = abs(x - lo)
    extra = np.fmod(x, span)
    flips = np.floor(x / span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def torch_pad_coord(x, size, pm, ac):
    """torch's compute_coordinates: reflect (then clip) or clip a source coordinate; zeros leaves it."""
    if pm == "zeros":
        return x
    if pm == "reflection":
        x = torch_reflect(x, 0, 2 * (size - 1)) if ac else torch_reflect(x, -1, 2 * size - 1)
    return min(size - 1, max(x, 0))


def torch_read(P, y, x):
    """The pixel at integer-valued (y, x), 0 outside."""
    H, W = P.shape
    iy, ix = int(y), int(x)
    return P[iy, ix] if 0 <= iy < H and 0 <= ix < W else 0.0


def gs_torch(X, G, mode, pm, ac):
    N, C, H, W = X.shape
    Ho, Wo = G.shape[1:3]
    Y = np.zeros((N, C, Ho, Wo))
    for n in range(N):
        for c in range(C):
            P = X[n, c].astype(np.float64)
            for a in range(Ho):
                for b in range(Wo):
                    x = denorm(float(G[n, a, b, 0]), W, ac)
                    y = denorm(float(G[n, a, b, 1]), H, ac)
                    if mode == "bicubic":
                        x0 = np.floor(x)
                        y0 = np.floor(y)
                        cx = cubic(x - x0)
                        cy = cubic(y - y0)
                        v = 0.0
                        for i in range(4):
                            yy = torch_pad_coord(y0 - 1 + i, H, pm, ac)
                            v += cy[i] * sum(cx[j] * torch_read(P, yy, torch_pad_coord(x0 - 1 + j, W, pm, ac))
                                             for j in range(4))
                    else:
                        x = torch_pad_coord(x, W, pm, ac)
                        y = torch_pad_coord(y, H, pm, ac)
                        if mode == "nearest":
                            v = torch_read(P, np.rint(y), np.rint(x))  # nearbyint: ties to even
                        else:
                            x0 = np.floor(x)
                            y0 = np.floor(y)
                            tx = x - x0
                            ty = y - y0
                            v = sum(wy * wx * torch_read(P, y0 + i, x0 + j)
                                    for i, wy in enumerate([1 - ty, ty]) for j, wx in enumerate([1 - tx, tx]))
                    Y[n, c, a, b] = v
    return Y.astype(np.float32)


def main():
    out = casegen.out_dir_from_argv()
    r = np.random.default_rng(7)
    X = r.standard_normal((2, 2, 5, 6)).astype(np.float32)
    Gin = r.uniform(-1, 1, (2, 4, 7, 2)).astype(np.float32)  # inside the image
    Gout = r.uniform(-3.2, 3.2, (2, 4, 7, 2)).astype(np.float32)  # mostly outside, some far

    def case(name, X, G, opset, mode, pm, ac, ref_mode):
        """ac None: align_corners omitted (default 0)."""
        oracle = gs_torch if opset < 20 else gs_ref
        attrs = dict(mode=mode, padding_mode=pm)
        if ac is not None:
            attrs["align_corners"] = ac
        casegen.single_node_case(out, name, "GridSample", [X, G], [oracle(X, G, ref_mode, pm, ac or 0)],
                                 opset=opset, attrs=attrs)

    for mode in ["bilinear", "nearest", "bicubic"]:
        for pm in ["zeros", "border", "reflection"]:
            for ac in [0, 1]:
                for tag, G in [("in", Gin), ("out", Gout)]:
                    case("gs_%s_%s_%d_%s" % (mode, pm, ac, tag), X, G, 16, mode, pm, ac, mode)
    # opset 20 renamed the modes: cubic, linear
    for pm in ["border", "reflection"]:
        for ac in [0, 1]:
            for tag, G in [("in", Gin), ("out", Gout)]:
                case("gs20_cubic_%s_%d_%s" % (pm, ac, tag), X, G, 20, "cubic", pm, ac, "bicubic")
    X1 = r.standard_normal((1, 1, 1, 4)).astype(np.float32)
    case("gs20_cubic_refl_h1", X1, Gout[:1], 20, "cubic", "reflection", 0, "bicubic")
    case("gs20_linear_border", X, Gout, 20, "linear", "border", None, "bilinear")


if __name__ == "__main__":
    main()
