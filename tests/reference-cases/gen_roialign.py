"""RoiAlign cases with numpy-computed expected outputs: avg and max modes, coordinate_transformation_mode
half_pixel and output_half_pixel, adaptive (sampling_ratio 0) and fixed sampling, RoIs partly outside, tiny
and larger than the feature map, batch indices out of order, and opset 10 defaults.

Oracle: a direct numpy transcription of the ONNX reference RoiAlign (bilinear sample points per bin, then the
mean or the max of the weighted corner contributions). Usage: /usr/bin/python3 gen_roialign.py OUT_DIR
"""
import numpy as np

import casegen


def roi_ref(X, rois, bidx, oh, ow, sr, scale, mode, half):
    _, C, H, W = X.shape
    R = rois.shape[0]
    Y = np.zeros((R, C, oh, ow))
    for n in range(R):
        off = 0.5 if half else 0.0
        sw, sh, ew, eh = [rois[n, k] * scale - off for k in range(4)]
        rw, rh = ew - sw, eh - sh
        if not half:
            rw = max(rw, 1.0)
            rh = max(rh, 1.0)
        bh, bw = rh / oh, rw / ow
        gh = int(sr) if sr > 0 else int(np.ceil(rh / oh))
        gw = int(sr) if sr > 0 else int(np.ceil(rw / ow))
        cnt = max(gh * gw, 1)
        for c in range(C):
            P = X[bidx[n], c]
            for ph in range(oh):
                for pw in range(ow):
                    vals = []
                    for iy in range(gh):
                        y0 = sh + ph * bh + (iy + .5) * bh / gh
                        for ix in range(gw):
                            x0 = sw + pw * bw + (ix + .5) * bw / gw
                            y, x = y0, x0
                            if y < -1 or y > H or x < -1 or x > W:
                                vals.append([0, 0, 0, 0])
                                continue
                            y = max(y, 0)
                            x = max(x, 0)
                            yl = int(y)
                            xl = int(x)
                            if yl >= H - 1:
                                yh = yl = H - 1
                                y = yl
                            else:
                                yh = yl + 1
                            if xl >= W - 1:
                                xh = xl = W - 1
                                x = xl
                            else:
                                xh = xl + 1
                            ly, lx = y - yl, x - xl
                            hy, hx = 1 - ly, 1 - lx
                            vals.append([hy * hx * P[yl, xl], hy * lx * P[yl, xh], ly * hx * P[yh, xl],
                                         ly * lx * P[yh, xh]])
                    if mode == "avg":
                        Y[n, c, ph, pw] = sum(sum(v) for v in vals) / cnt
                    else:
                        Y[n, c, ph, pw] = max(max(v) for v in vals) if vals else 0
    return Y.astype(np.float32)


def main():
    out = casegen.out_dir_from_argv()
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2, 3, 7, 9)).astype(np.float32)
    rois = np.float32([[0.3, 1.2, 6.5, 5.9], [-2, -1, 3, 2], [4, 4, 4.2, 4.1], [1, 1, 30, 20]])
    bidx = np.int64([1, 0, 1, 0])
    for mode in ["avg", "max"]:
        for half in [False, True]:
            for sr in [0, 3]:
                name = "roi_%s_%s_%d" % (mode, "half" if half else "out", sr)
                attrs = dict(mode=mode, output_height=3, output_width=4, sampling_ratio=sr,
                             spatial_scale=0.75,
                             coordinate_transformation_mode="half_pixel" if half else "output_half_pixel")
                casegen.single_node_case(out, name, "RoiAlign", [X, rois, bidx],
                                         [roi_ref(X, rois, bidx, 3, 4, sr, 0.75, mode, half)], opset=16,
                                         attrs=attrs)
    casegen.single_node_case(out, "roi_opset10", "RoiAlign", [X, rois, bidx],
                             [roi_ref(X, rois, bidx, 2, 2, 2, 1.0, "avg", False)], opset=10,
                             attrs=dict(output_height=2, output_width=2, sampling_ratio=2))


if __name__ == "__main__":
    main()
