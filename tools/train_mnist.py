#!/usr/bin/env python3
"""Train the two bundled MNIST classifiers of nnop's examples and export them.

    python3 tools/train_mnist.py                   # both models, data from ../shared/data/mnist
    python3 tools/train_mnist.py --model lenet --data-dir DIR --out-dir examples/mnist

Trains on the TRAIN split only (8,000 digits), with fixed seeds, on the CPU by default
(--device cuda to use a GPU), then writes into --out-dir:

    <model>.safetensors        fp32 weights, PyTorch parameter names, metadata with the
                               architecture, the recorded test accuracy and this command
    <model>.torch_pred         PyTorch's predicted class of each test digit (IDX1 ubyte file)
    <model>.torch_logits.safetensors   PyTorch's fp32 logits on the test split ("logits")
    test-images-idx3-ubyte, test-labels-idx1-ubyte   the test split, uncompressed IDX
                               (a copy of the shared data: the example and tests read it)

Input convention (the C example must do the same): NCHW float32 of shape [N, 1, 28, 28],
value = pixel / 255. Inference uses eval mode (batch-norm with running statistics).

Needs torch only (no numpy, no torchvision); the safetensors files are written by hand:
8-byte little-endian header length, JSON header padded with spaces to 8 bytes, data.
"""
import argparse
import gzip
import os
import random
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from safetensors_write import write_safetensors

SEED = 20261129
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ------------------------------------------------------------------------------ data
def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    magic, count = struct.unpack(">II", raw[:8])
    if magic == 0x803:
        rows, cols = struct.unpack(">II", raw[8:16])
        assert len(raw) == 16 + count * rows * cols, path
        return raw[16:], (count, rows, cols), raw
    if magic == 0x801:
        assert len(raw) == 8 + count, path
        return raw[8:], (count,), raw
    raise ValueError(f"{path}: bad IDX magic {magic:#x}")


def load_split(data_dir, split):
    img_raw, (n, h, w), img_file = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"))
    lab_raw, (m,), lab_file = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"))
    assert n == m and h == 28 and w == 28
    x = torch.frombuffer(bytearray(img_raw), dtype=torch.uint8).reshape(n, 1, h, w)
    y = torch.frombuffer(bytearray(lab_raw), dtype=torch.uint8).long()
    return x.float() / 255.0, y, img_file, lab_file


# ------------------------------------------------------------------------------ models
class LeNet(nn.Module):
    """conv5x5-bias-relu, maxpool 2, conv5x5-bias-relu, maxpool 2, linear-relu, linear."""

    ARCH = "lenet: conv1 1->16 5x5 +bias relu, maxpool 2/2, conv2 16->32 5x5 +bias relu, " \
           "maxpool 2/2, flatten 512, fc1 512->128 relu, fc2 128->10"

    def __init__(self, c1=16, c2=32, hidden=128):
        super().__init__()
        self.conv1 = nn.Conv2d(1, c1, 5)
        self.conv2 = nn.Conv2d(c1, c2, 5)
        self.fc1 = nn.Linear(c2 * 4 * 4, hidden)
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2, 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2, 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


class BasicBlock(nn.Module):
    """torchvision's BasicBlock: conv3x3-bn-relu, conv3x3-bn, + shortcut, relu."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet(nn.Module):
    """A small ResNet: stem, three residual blocks, global average pool, linear."""

    ARCH = "resnet: conv1 1->12 3x3 pad 1 (no bias) bn1 relu, maxpool 2/2, " \
           "layer1.0 BasicBlock 12->12, layer2.0 BasicBlock 12->24 stride 2 (downsample 1x1+bn), " \
           "layer3.0 BasicBlock 24->32 stride 2 (downsample 1x1+bn), global avg pool, fc 32->10; " \
           "bn eps 1e-5"

    def __init__(self, c1=12, c2=24, c3=32):
        super().__init__()
        self.conv1 = nn.Conv2d(1, c1, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c1)
        self.layer1 = nn.Sequential(BasicBlock(c1, c1, 1))
        self.layer2 = nn.Sequential(BasicBlock(c1, c2, 2))
        self.layer3 = nn.Sequential(BasicBlock(c2, c3, 2))
        self.fc = nn.Linear(c3, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2, 2)
        x = self.layer3(self.layer2(self.layer1(x)))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


MODELS = {"lenet": (LeNet, 40), "resnet": (ResNet, 40)}


# ------------------------------------------------------------------------------ training
def augment(x, gen):
    """Random affine per digit: rotation +-10 degrees, scale 0.9..1.1, shift +-2 pixels."""
    n = x.shape[0]
    ang = (torch.rand(n, generator=gen) * 2 - 1) * (10 * 3.14159265 / 180)
    scale = 0.9 + torch.rand(n, generator=gen) * 0.2
    shift = (torch.rand(n, 2, generator=gen) * 2 - 1) * (2.0 / 14.0)
    cos, sin = torch.cos(ang) / scale, torch.sin(ang) / scale
    theta = torch.stack([torch.stack([cos, -sin, shift[:, 0]], 1),
                         torch.stack([sin, cos, shift[:, 1]], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, align_corners=False, padding_mode="zeros")


def train(name, xtr, ytr, device, epochs, batch=64, log=print):
    torch.manual_seed(SEED)
    random.seed(SEED)
    cls, _ = MODELS[name]
    model = cls().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    steps = epochs * ((xtr.shape[0] + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(xtr.shape[0], generator=gen)
        total, correct, loss_sum = 0, 0, 0.0
        for i in range(0, xtr.shape[0], batch):
            idx = perm[i:i + batch]
            xb = augment(xtr[idx], gen).to(device)
            yb = ytr[idx].to(device)
            out = model(xb)
            loss = F.cross_entropy(out, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.item() * idx.numel()
            correct += (out.argmax(1) == yb).sum().item()
            total += idx.numel()
        log(f"{name} epoch {epoch + 1}/{epochs}: loss {loss_sum / total:.4f} "
            f"train acc (augmented) {correct / total:.4f}")
    return model.cpu().eval()


# ------------------------------------------------------------------------------ export
def write_idx1(path, values):
    with open(path, "wb") as f:
        f.write(struct.pack(">II", 0x801, len(values)))
        f.write(bytes(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["lenet", "resnet", "all"], default="all")
    ap.add_argument("--data-dir", default=os.path.join(REPO, "..", "shared", "data", "mnist"))
    ap.add_argument("--out-dir", default=os.path.join(REPO, "examples", "mnist"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epochs", type=int, default=0, help="0: the model's default")
    ap.add_argument("--threads", type=int, default=1,
                    help="CPU threads (1: the recorded run; others may round differently)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True, warn_only=True)
    os.makedirs(args.out_dir, exist_ok=True)
    xtr, ytr, _, _ = load_split(args.data_dir, "train")
    xte, yte, te_img_file, te_lab_file = load_split(args.data_dir, "test")
    print(f"train {xtr.shape[0]} digits, test {xte.shape[0]} digits (test used for reporting only)")
    with open(os.path.join(args.out_dir, "test-images-idx3-ubyte"), "wb") as f:
        f.write(te_img_file)
    with open(os.path.join(args.out_dir, "test-labels-idx1-ubyte"), "wb") as f:
        f.write(te_lab_file)

    names = ["lenet", "resnet"] if args.model == "all" else [args.model]
    for name in names:
        epochs = args.epochs or MODELS[name][1]
        t0 = time.time()
        model = train(name, xtr, ytr, args.device, epochs)
        with torch.no_grad():
            logits = model(xte)
        pred = logits.argmax(1)
        acc = (pred == yte).float().mean().item()
        correct = int((pred == yte).sum().item())
        print(f"{name}: test accuracy {acc:.4f} ({correct}/{xte.shape[0]}), "
              f"trained in {time.time() - t0:.0f} s")
        state = [(k, v) for k, v in model.state_dict().items()
                 if not k.endswith("num_batches_tracked")]
        meta = {
            "model": name,
            "architecture": MODELS[name][0].ARCH,
            "input": "NCHW float32 [N,1,28,28], pixel/255",
            "test_accuracy": f"{acc:.4f}",
            "test_correct": f"{correct}/{xte.shape[0]}",
            "trained_on": "train split only (8000 digits) of ../shared/data/mnist",
            "epochs": str(epochs),
            "seed": str(SEED),
            "torch": torch.__version__,
            "command": "python3 tools/train_mnist.py" + ("" if args.model == "all"
                                                          else f" --model {name}"),
        }
        write_safetensors(os.path.join(args.out_dir, f"{name}.safetensors"), state, meta)
        write_safetensors(os.path.join(args.out_dir, f"{name}.torch_logits.safetensors"),
                          [("logits", logits)], {"model": name, "test_accuracy": f"{acc:.4f}"})
        write_idx1(os.path.join(args.out_dir, f"{name}.torch_pred"), pred.tolist())


if __name__ == "__main__":
    main()
