#!/usr/bin/python3
"""Exports torchvision architectures with random weights (seeded: the same files every run) to ONNX, NCHW,
batch 1 (opset 13 for the four the Transpose benchmark counts, 17 for the others), plus one random input per
model as a TensorProto (input_0.pb).

usage: export_torchvision.py OUT_DIR [MODEL ... | all]   (default: every model in MODELS; all: MORE too)

Needs Debian's python3-torch and python3-torchvision (not the default test path; bench/real-models/run.sh).
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torchvision

# name -> (constructor, input size, opset); weights=None: random initialization, no download
MODELS = {
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), 224, 13),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), 224, 13),
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), 224, 13),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), 224, 13),
}
# more architectures for `passcheck check` (tests/real): name -> the same, opset 17
MORE = {
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), 224, 17),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), 224, 17),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(weights=None), 224, 17),
    "googlenet": (lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True), 224, 17),
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), 224, 17),
    "mnasnet0_5": (lambda: torchvision.models.mnasnet0_5(weights=None), 224, 17),
    "lraspp_mobilenet_v3_large": (
        lambda: torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None),
        224, 17),
}


def export(name, out_dir):
    make, size, opset = MODELS[name] if name in MODELS else MORE[name]
    torch.manual_seed(1)
    model = make().eval()
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(2))
    path = os.path.join(out_dir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
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
    if names == ["all"]:
        names = list(MODELS) + list(MORE)
    for n in names:
        if n not in MODELS and n not in MORE:
            sys.exit("unknown model '%s' (known: %s, or all)" % (n, ", ".join(list(MODELS) + list(MORE))))
    os.makedirs(out_dir, exist_ok=True)
    for n in names:
        export(n, out_dir)
        print("exported", n)


if __name__ == "__main__":
    main()
