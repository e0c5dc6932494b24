#!/usr/bin/env python3
"""Export a torchvision network (or the small U-Net below) for examples/vision_net: its graph
as nnop operations (JSON), its weights (safetensors, torchvision's parameter names) and,
optionally, a reference input with PyTorch's output.

    python3 tools/export_vision_net.py mobilenet_v3_large --graph m.json --weights m.safetensors \
        --reference m_ref.safetensors --batch 2 --size 64

Models: mobilenet_v3_large, efficientnet_b0, convnext_tiny (torchvision, seeded random
weights: no pretrained download is possible here) and unet (defined here: an encoder-decoder
with channel-concat skips, a transposed-conv and a bilinear upsampling). Batch-norm statistics
are calibrated on seeded random images so activations stay in a realistic range.

The graph is the model traced with torch.fx, each node mapped to one nnop builder call:
conv (+bias), conv_transpose, batchnorm, act, add, mul (broadcast operand second), mul by a
constant (layer scale), pool, gap, flatten, linear, layer_norm (over C), concat, resize.
ConvNeXt's channels-last blocks (permute, LayerNorm, Linear, permute back) become
layer_norm over C and 1x1 convs on the N,C,H,W value. Tensors the graph reads under another
shape than the module's (a Linear used as a 1x1 conv, a (C,1,1) layer scale) are written in
the shape the graph reads. The reference output is PyTorch's, in float64 on the CPU, from the
same fp32 weights.
"""
import argparse
import copy
import json
import operator
import sys

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

from bn_calibrate import calibrate_batchnorm
from safetensors_write import write_safetensors

SEED = 20261201


class UNet(nn.Module):
    """A small U-Net: two encoder levels, a bottleneck, a transposed-conv and a bilinear
    upsampling on the way up, channel-concat skips, a 1x1 head."""

    @staticmethod
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    def __init__(self, cin=3, base=16, classes=5):
        super().__init__()
        self.enc1 = self.block(cin, base)
        self.enc2 = self.block(base, 2 * base)
        self.pool = nn.MaxPool2d(2)
        self.mid = self.block(2 * base, 4 * base)
        self.up2 = nn.ConvTranspose2d(4 * base, 2 * base, 2, stride=2)
        self.dec2 = self.block(4 * base, 2 * base)
        self.up1 = nn.Conv2d(2 * base, base, 1)
        self.dec1 = self.block(2 * base, base)
        self.head = nn.Conv2d(base, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        u1 = self.up1(F.interpolate(d2, scale_factor=2.0, mode="bilinear", align_corners=False))
        d1 = self.dec1(torch.cat([u1, e1], 1))
        return self.head(d1)


def build(name):
    torch.manual_seed(SEED)
    if name == "unet":
        m = UNet()
    else:
        import torchvision
        m = getattr(torchvision.models, name)(weights=None)
    return calibrate_batchnorm(m, SEED + 1, batches=3, size=64)


ACTS = {nn.ReLU: "relu", nn.ReLU6: "relu6", nn.Hardswish: "hardswish",
        nn.Hardsigmoid: "hardsigmoid", nn.SiLU: "silu", nn.Sigmoid: "sigmoid", nn.GELU: "gelu",
        nn.Tanh: "tanh"}
ACT_FUNCS = {F.relu: "relu", F.relu6: "relu6", F.hardswish: "hardswish",
             F.hardsigmoid: "hardsigmoid", F.silu: "silu", torch.sigmoid: "sigmoid",
             F.gelu: "gelu", torch.relu: "relu"}


class Exporter:
    def __init__(self, model, example):
        self.model = model
        self.gm = torch.fx.symbolic_trace(model)
        ShapeProp(self.gm).propagate(example)
        self.mods = dict(self.gm.named_modules())
        self.ops, self.tensors, self.shapes = [], {}, {}
        self.val = {}    # fx node -> nnop value id
        self.perm = {}   # fx node -> 1 when the torch tensor is the N,H,W,C view of the value
        self.n_values = 0

    def new_value(self):
        self.n_values += 1
        return self.n_values - 1

    def tensor(self, name, t, shape=None):
        t = t.detach().float()
        if shape is not None:
            t = t.reshape(shape)
        if name in self.tensors:
            assert torch.equal(self.tensors[name], t), name
        self.tensors[name] = t.contiguous()
        self.shapes[name] = list(t.shape)
        return name

    def emit(self, op, inputs, **attrs):
        out = self.new_value()
        self.ops.append(dict(op=op, out=out, inputs=[self.val[i] for i in inputs], **attrs))
        return out

    def param(self, target):
        obj = self.gm
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def module(self, n):
        m, x = self.mods[n.target], n.args[0]
        name = n.target
        if isinstance(m, nn.Conv2d):
            w = self.tensor(name + ".weight", m.weight)
            b = self.tensor(name + ".bias", m.bias) if m.bias is not None else None
            return self.emit("conv", [x], weight=w, bias=b, pad=list(m.padding),
                             stride=list(m.stride), dilation=list(m.dilation), groups=m.groups)
        if isinstance(m, nn.ConvTranspose2d):
            w = self.tensor(name + ".weight", m.weight)
            b = self.tensor(name + ".bias", m.bias) if m.bias is not None else None
            return self.emit("conv_transpose", [x], weight=w, bias=b, pad=list(m.padding),
                             stride=list(m.stride), dilation=list(m.dilation),
                             output_pad=list(m.output_padding), groups=m.groups)
        if isinstance(m, nn.BatchNorm2d):
            names = [self.tensor(f"{name}.{k}", getattr(m, a)) for k, a in
                     (("weight", "weight"), ("bias", "bias"), ("running_mean", "running_mean"),
                      ("running_var", "running_var"))]
            return self.emit("batchnorm", [x], params=names, eps=m.eps)
        if type(m) in ACTS:
            if isinstance(m, nn.GELU) and m.approximate == "tanh":
                return self.emit("act", [x], kind="gelu_tanh")
            return self.emit("act", [x], kind=ACTS[type(m)])
        if isinstance(m, (nn.Dropout, nn.Identity)):
            return self.alias(n, x)
        if isinstance(m, nn.MaxPool2d) or isinstance(m, nn.AvgPool2d):
            pair = lambda v: list(v) if isinstance(v, (tuple, list)) else [v, v]  # noqa: E731
            assert not m.ceil_mode, "ceil_mode pooling"
            kind = "max" if isinstance(m, nn.MaxPool2d) else "avg"
            extra = {} if kind == "max" else {"count_include_pad": int(m.count_include_pad)}
            if kind == "max":
                assert pair(m.dilation) == [1, 1], "dilated max pooling"
            return self.emit("pool", [x], kind=kind, window=pair(m.kernel_size),
                             stride=pair(m.stride if m.stride is not None else m.kernel_size),
                             pad=pair(m.padding), **extra)
        if isinstance(m, nn.AdaptiveAvgPool2d):
            assert m.output_size in (1, (1, 1)), "adaptive pooling to more than 1x1"
            return self.emit("gap", [x])
        if isinstance(m, nn.Flatten):
            assert m.start_dim == 1 and m.end_dim == -1
            return self.emit("flatten", [x])
        if isinstance(m, nn.Linear):
            if self.perm.get(x):  # a Linear over channels-last data: a 1x1 conv
                w = self.tensor(name + ".weight", m.weight, list(m.weight.shape) + [1, 1])
                b = self.tensor(name + ".bias", m.bias) if m.bias is not None else None
                out = self.emit("conv", [x], weight=w, bias=b, pad=[0, 0], stride=[1, 1],
                                dilation=[1, 1], groups=1)
                self.perm[n] = 1
                return out
            w = self.tensor(name + ".weight", m.weight)
            b = self.tensor(name + ".bias", m.bias) if m.bias is not None else None
            return self.emit("linear", [x], weight=w, bias=b)
        if isinstance(m, nn.LayerNorm):
            return self.layer_norm(n, x, list(m.normalized_shape), m.weight, m.bias, m.eps,
                                   name)
        raise NotImplementedError(f"module {type(m).__name__} ({name})")

    def layer_norm(self, n, x, shape, weight, bias, eps, name):
        c = x.meta["tensor_meta"].shape[-1]
        assert self.perm.get(x) and shape == [c], "layer norm other than over channels"
        w = self.tensor(name + ".weight", weight) if weight is not None else None
        b = self.tensor(name + ".bias", bias) if bias is not None else None
        out = self.emit("layer_norm", [x], weight=w, bias=b, eps=eps)
        self.perm[n] = 1
        return out

    def alias(self, n, x):
        self.perm[n] = self.perm.get(x, 0)
        return self.val[x]

    def mul(self, n, a, b):
        if isinstance(a, torch.fx.Node) and a.op == "get_attr":
            a, b = b, a
        if isinstance(b, torch.fx.Node) and b.op == "get_attr":  # layer scale: (C,1,1)
            t = self.param(b.target)
            name = self.tensor(b.target, t, [1] + list(t.shape))
            return self.emit("mul_const", [a], tensor=name)
        sa, sb = a.meta["tensor_meta"].shape, b.meta["tensor_meta"].shape
        if list(sa) != list(sb) and list(sa[2:]) == [1, 1]:  # SE: scale * x
            a, b = b, a
        return self.emit("mul", [a, b])

    def function(self, n):
        f, args = n.target, n.args
        if f in (operator.add, operator.iadd, torch.add):
            return self.emit("add", [args[0], args[1]])
        if f in (operator.mul, operator.imul, torch.mul):
            return self.mul(n, args[0], args[1])
        if f in ACT_FUNCS:
            return self.emit("act", [args[0]], kind=ACT_FUNCS[f])
        if f is torch.flatten:
            assert (args[1] if len(args) > 1 else n.kwargs.get("start_dim", 0)) == 1
            return self.emit("flatten", [args[0]])
        if f is F.adaptive_avg_pool2d:
            assert args[1] in (1, (1, 1), [1, 1])
            return self.emit("gap", [args[0]])
        if f is torch.cat:
            assert (args[1] if len(args) > 1 else n.kwargs.get("dim", 0)) == 1
            return self.emit("concat", list(args[0]))
        if f is torch.permute:
            return self.permute(n, args[0], list(args[1]))
        if f is F.layer_norm:
            a = dict(zip(["input", "normalized_shape", "weight", "bias", "eps"], args))
            a.update(n.kwargs)
            return self.layer_norm(n, a["input"], list(a["normalized_shape"]),
                                   self.param(a["weight"].target), self.param(a["bias"].target),
                                   a.get("eps", 1e-5), a["weight"].target.rsplit(".", 1)[0])
        if f is F.interpolate:
            kw = n.kwargs
            mode = kw.get("mode", "nearest")
            size = kw.get("size")
            attrs = dict(mode=mode, align_corners=int(bool(kw.get("align_corners") or 0)))
            if size is not None:
                attrs["size"] = list(size) if isinstance(size, (list, tuple)) else [size, size]
            else:
                s = kw["scale_factor"]
                attrs["scale"] = list(s) if isinstance(s, (list, tuple)) else [s, s]
            return self.emit("resize", [args[0]], **attrs)
        if getattr(f, "__name__", "") == "stochastic_depth":  # identity in eval
            return self.alias(n, args[0])
        raise NotImplementedError(f"function {f}")

    def permute(self, n, x, dims):
        if dims == [0, 2, 3, 1]:
            assert not self.perm.get(x)
            self.perm[n] = 1
        elif dims == [0, 3, 1, 2]:
            assert self.perm.get(x)
            self.perm[n] = 0
        else:
            raise NotImplementedError(f"permute {dims}")
        return self.val[x]

    def method(self, n):
        if n.target == "permute":
            return self.permute(n, n.args[0], list(n.args[1:]))
        if n.target == "flatten":
            assert n.args[1] == 1
            return self.emit("flatten", [n.args[0]])
        raise NotImplementedError(f"method {n.target}")

    def run(self):
        outputs = []
        for n in self.gm.graph.nodes:
            if n.op == "placeholder":
                self.val[n] = self.new_value()
                self.perm[n] = 0
                shape = list(n.meta["tensor_meta"].shape)
            elif n.op == "get_attr":
                continue  # read where used (layer scale, layer norm parameters)
            elif n.op == "call_module":
                self.val[n] = self.module(n)
            elif n.op == "call_function":
                self.val[n] = self.function(n)
            elif n.op == "call_method":
                self.val[n] = self.method(n)
            elif n.op == "output":
                out = n.args[0]
                assert not self.perm.get(out)
                outputs.append(self.val[out])
            if n.op in ("call_module", "call_function", "call_method") and n not in self.perm:
                # elementwise ops keep their input's view (a GELU between channels-last Linears)
                first = next((a for a in n.args if isinstance(a, torch.fx.Node)), None)
                self.perm[n] = self.perm.get(first, 0)
        return {"format": "nnop-vision-net 1", "input": [0, shape[1]], "outputs": outputs,
                "n_values": self.n_values, "ops": self.ops,
                "tensors": {k: self.shapes[k] for k in self.tensors}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=["mobilenet_v3_large", "efficientnet_b0", "convnext_tiny",
                                      "unet"])
    ap.add_argument("--graph", required=True, help="the nnop graph (JSON) to write")
    ap.add_argument("--weights", help="weights file to write (safetensors)")
    ap.add_argument("--reference", help="also write an input and PyTorch's output")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=64)
    args = ap.parse_args()
    model = build(args.model)
    gen = torch.Generator().manual_seed(SEED + 2)
    x = torch.randn(args.batch, 3, args.size, args.size, generator=gen)
    ex = Exporter(model, x)
    graph = ex.run()
    graph["model"] = args.model
    with open(args.graph, "w") as f:
        json.dump(graph, f, indent=0, separators=(",", ":"))
        f.write("\n")
    print(f"{args.graph}: {len(graph['ops'])} ops, {len(graph['tensors'])} tensors")
    if args.weights:
        write_safetensors(args.weights, sorted(ex.tensors.items()),
                          {"model": args.model, "seed": SEED, "torch": torch.__version__})
        print(f"{args.weights}: {sum(t.numel() for t in ex.tensors.values()) / 1e6:.2f} M "
              f"parameters")
    if args.reference:
        # output: float64 from the float32 weights and input; output_f16: float64 from the
        # weights, buffers and input rounded to float16 (what an f16 graph holds), so an f16
        # result's error against it is arithmetic alone, not the rounding of the weights
        with torch.no_grad():
            y16 = copy.deepcopy(model).half().double()(x.half().double())
            y = model.double()(x.double())
        write_safetensors(args.reference, [("input", x), ("output", y), ("output_f16", y16)],
                          {"model": args.model, "output": "PyTorch float64 on the CPU",
                           "output_f16": "the same from f16-rounded weights and input"})
        print(f"{args.reference}: input {list(x.shape)}, output {list(y.shape)}")


if __name__ == "__main__":
    sys.exit(main())
