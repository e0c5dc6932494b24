#!/usr/bin/env python3
"""export_conv_shapes.py: the convolution shapes of real networks as an nnop-bench problem file.

Runs torchvision's classification, segmentation and detection-backbone models once on a random
image (no weights downloaded) with a forward hook on every Conv2d, and writes each distinct
shape (input C, H, W, output K, kernel, stride, padding, dilation, groups) as a conv + bias +
relu descriptor, the shape class issue 12's sweep times against its roofline floor and against
PyTorch. One line per shape and batch; `name=` says where the shape comes from.
    python3 tools/export_conv_shapes.py --batch 1,4 --dt f16 --layout nhwc \\
        > bench/problems/conv_sweep.txt
"""
import argparse
import sys

import torch
import torchvision.models as tvm
import torchvision.models.segmentation as tvs

from gen_conv_chains import pair  # the descriptor's " pP" / " pPHxPW" fields

# (name, constructor, input size): the families of the networks issue 12 names (ResNet,
# ResNeXt, DenseNet, GoogLeNet/Inception, VGG, AlexNet, MobileNet, EfficientNet, ShuffleNet,
# SqueezeNet, RegNet, ConvNeXt, and FCN/DeepLab heads for dilated and segmentation convs).
MODELS = [
    ("alexnet", tvm.alexnet, 224),
    ("vgg16", tvm.vgg16, 224),
    ("googlenet", lambda: tvm.googlenet(aux_logits=False, init_weights=False), 224),
    ("inception_v3", lambda: tvm.inception_v3(aux_logits=False, init_weights=False), 299),
    ("resnet50", tvm.resnet50, 224),
    ("resnext50_32x4d", tvm.resnext50_32x4d, 224),
    ("densenet121", tvm.densenet121, 224),
    ("mobilenet_v2", tvm.mobilenet_v2, 224),
    ("mobilenet_v3_large", tvm.mobilenet_v3_large, 224),
    ("efficientnet_b0", tvm.efficientnet_b0, 224),
    ("shufflenet_v2_x1_0", tvm.shufflenet_v2_x1_0, 224),
    ("squeezenet1_1", tvm.squeezenet1_1, 224),
    ("regnet_y_800mf", tvm.regnet_y_800mf, 224),
    ("convnext_tiny", tvm.convnext_tiny, 224),
    ("mnasnet1_0", tvm.mnasnet1_0, 224),
    ("fcn_resnet50", lambda: tvs.fcn_resnet50(weights=None, weights_backbone=None), 256),
    ("deeplabv3_mobilenet_v3_large",
     lambda: tvs.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None), 256),
]


def shapes_of(name, make, size):
    model = make().eval()
    seen = []

    def hook(mod, inp, out):
        x = inp[0]
        seen.append((x.shape[1], x.shape[2], x.shape[3], mod.out_channels, mod.kernel_size,
                     mod.stride, mod.padding, mod.dilation, mod.groups))

    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d) and isinstance(m.padding, tuple):
            m.register_forward_hook(hook)
    with torch.inference_mode():
        model(torch.randn(1, 3, size, size))
    return seen


def descriptor(n, s, dt, layout, name):
    c, h, w, k, ks, st, pd, dl, g = s
    line = f"conv n{n}c{c}h{h}w{w}k{k}r{ks[0]}s{ks[1]}"
    line += pair("p", int(pd[0]), int(pd[1]), 0) + pair("st", int(st[0]), int(st[1]), 1)
    line += pair("dl", int(dl[0]), int(dl[1]), 1)
    line += f" g{g}" if g > 1 else ""
    return line + f" dt={dt} layout={layout} post=bias,relu name={name}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", default="1,4", help="comma-separated batch sizes")
    ap.add_argument("--dt", default="f16")
    ap.add_argument("--layout", default="nhwc")
    a = ap.parse_args()
    batches = [int(b) for b in a.batch.split(",")]
    first = {}
    for name, make, size in MODELS:
        torch.manual_seed(0)
        for i, s in enumerate(shapes_of(name, make, size)):
            first.setdefault(s, f"{name}.{i}")
        print(f"{name}: {len(first)} distinct shapes so far", file=sys.stderr)
    print(f"# python3 tools/export_conv_shapes.py --batch {a.batch} --dt {a.dt} "
          f"--layout {a.layout}")
    print(f"# {len(first)} distinct conv shapes of {len(MODELS)} torchvision networks, "
          "conv + bias + relu; name = network.conv index where the shape first appears")
    print("# nnop-bench --perf -f bench/problems/conv_sweep.txt --json sweep.json  "
          "(PyTorch peer: bench/torch_problems.py)")
    for n in batches:
        for s, where in first.items():
            print(descriptor(n, s, a.dt, a.layout, f"{where}.n{n}"))


if __name__ == "__main__":
    main()
