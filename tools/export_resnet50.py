#!/usr/bin/env python3
"""Export ImageNet ResNet-50 weights (torchvision parameter names) to safetensors for
examples/resnet50, and optionally a reference input with PyTorch's logits.

    python3 tools/export_resnet50.py --out resnet50.safetensors
    python3 tools/export_resnet50.py --out r50.safetensors --reference r50_ref.safetensors \
        --batch 4 --size 224

Weights: torchvision's pretrained IMAGENET1K_V2 when they can be loaded (--pretrained, needs
a download or torch's hub cache), otherwise random-initialized with a fixed seed (torchvision's
own initialisation), after which the batch-norm running statistics are calibrated on seeded
random images so that activations stay in a realistic range. BN's num_batches_tracked is not
exported. All tensors are fp32, written in the safetensors format by hand.

--reference writes "input" [N, 3, S, S] (seeded, ImageNet-normalized range) and "logits"
[N, 1000] computed by PyTorch in float64 on the CPU from the same (fp32) weights, so that
nnop's fp32 and fp16 results can be compared against it:

    ./build/examples/resnet50 --weights r50.safetensors --reference r50_ref.safetensors \
        --max-rel-err 1e-4               # and --dtype f16 --max-rel-err 1e-2
"""
import argparse
import sys

import torch
import torch.nn as nn

from bn_calibrate import calibrate_batchnorm
from safetensors_write import write_safetensors

SEED = 20261129


# A copy of torchvision's ResNet-50 (same module and parameter names), for machines without
# torchvision.
class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet50(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(64, 3)
        self.layer2 = self._make_layer(128, 4, 2)
        self.layer3 = self._make_layer(256, 6, 2)
        self.layer4 = self._make_layer(512, 3, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2048, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * 4:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * 4, 1, stride, bias=False),
                                       nn.BatchNorm2d(planes * 4))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def build(pretrained):
    torch.manual_seed(SEED)
    try:
        import torchvision
    except ImportError:
        torchvision = None
    if pretrained and torchvision is not None:
        try:
            m = torchvision.models.resnet50(weights="IMAGENET1K_V2")
            return m.eval(), "torchvision IMAGENET1K_V2 (pretrained)"
        except Exception as e:  # no network, no cache
            print(f"pretrained weights unavailable ({type(e).__name__}: {e}); using random ones",
                  file=sys.stderr)
    if torchvision is not None:
        m, where = torchvision.models.resnet50(weights=None), "torchvision"
    else:
        m, where = ResNet50(), "built-in copy of torchvision's"
    # Residual branches start small (as torchvision's zero_init_residual, with 0.1 instead of 0)
    # so that the deep random network is not chaotic: rounding weights to fp16 then moves the
    # logits by about 1e-3 of their range, as with trained weights, not by 3e-2.
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("bn3.weight"):
                p.fill_(0.1)
    calibrate_batchnorm(m, SEED + 1, batches=4, size=224)
    # a classifier with a visible spread of logits
    with torch.no_grad():
        m.fc.weight.mul_(4.0)
    return m, (f"random ({where} init, seed {SEED}, bn3 weights 0.1, BN statistics calibrated "
               "on random images)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="weights file to write")
    ap.add_argument("--pretrained", action="store_true",
                    help="try torchvision's pretrained weights first")
    ap.add_argument("--reference", help="also write a reference input and PyTorch's logits")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=224)
    args = ap.parse_args()

    model, source = build(args.pretrained)
    state = [(k, v) for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")]
    write_safetensors(args.out, state, {"model": "resnet50", "source": source,
                                        "torch": torch.__version__})
    print(f"{args.out}: {len(state)} tensors, "
          f"{sum(v.numel() for _, v in state) / 1e6:.1f} M parameters; {source}")
    if args.reference:
        gen = torch.Generator().manual_seed(SEED + 2)
        x = torch.randn(args.batch, 3, args.size, args.size, generator=gen)
        with torch.no_grad():
            logits = model.double()(x.double())
        write_safetensors(args.reference, [("input", x), ("logits", logits)],
                          {"model": "resnet50", "logits": "PyTorch float64 on the CPU",
                           "source": source})
        top = logits.argmax(1).tolist()
        print(f"{args.reference}: input {list(x.shape)}, logits {list(logits.shape)}, "
              f"top-1 {top}, max |logit| {logits.abs().max().item():.3f}")


if __name__ == "__main__":
    main()
