#!/usr/bin/python3
"""Exports torchvision architectures with random weights (seeded: the same files every run) to ONNX, NCHW,
batch 1, opset 13, plus one random input per model as a TensorProto (input_0.pb).

usage: export_torchvision.py OUT_DIR [MODEL ...]   (default: every model in MODELS)

Needs Debian's python3-torch and python3-torchvision (not the default test path; bench/real-models/run.sh).
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torchvision

# name -> (constructor, input size); weights=None: random initialization, no download
MODELS = {
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), 224),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), 224),
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), 224),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), 224),
}


def export(name, out_dir):
    make, size = MODELS[name]
    torch.manual_seed(1)
    model = make().eval()
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(2))
    path = os.path.join(out_dir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    onnx.save(onnx.shape_inference.infer_shapes(m), path)  # value_info for every value
    t = onnx.numpy_helper.from_array(x.numpy().astype(np.float32), "input")
    with open(os.path.join(out_dir, name + ".input_0.pb"), "wb") as f:
        f.write(t.SerializeToString())


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    for n in names:
        if n not in MODELS:
            sys.exit("unknown model '%s' (known: %s)" % (n, ", ".join(MODELS)))
    os.makedirs(out_dir, exist_ok=True)
    for n in names:
        export(n, out_dir)
        print("exported", n)


if __name__ == "__main__":
    main()
