#!/usr/bin/env python3
"""Write the bundled MNIST classifiers as ONNX models, for examples/classify_onnx.

    python3 examples/mnist/make_onnx.py                 # resnet.onnx beside this script
    python3 examples/mnist/make_onnx.py --model lenet --out /tmp/lenet.onnx

The weights are the ones classify_mnist builds its graphs from (<model>.safetensors in this
folder, trained by tools/train_mnist.py), so an ONNX model classifies the 2,000 bundled test
digits exactly as classify_mnist does. The graph is written node by node with the `onnx`
package's helper API (no torch): what torch.onnx.export writes for the models of
tools/train_mnist.py in eval mode, with the batch-norms kept as nodes and a symbolic batch
dimension "N". Input "input" [N, 1, 28, 28] float32 (pixel / 255), output "logits" [N, 10].

Needs onnx and numpy (pip install onnx). The checked-in resnet.onnx is this script's output
with the defaults; the model is checked (onnx.checker) before it is written.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            sys.exit(f"{path}: {name} is {t['dtype']}, expected F32")
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").reshape(t["shape"])
    return out, meta


class Builder:
    def __init__(self, weights):
        self.w = weights
        self.nodes, self.inits, self.used = [], [], set()
        self.count = 0

    def param(self, name):
        if name not in self.used:
            self.inits.append(numpy_helper.from_array(self.w[name].astype(np.float32), name))
            self.used.add(name)
        return name

    def node(self, op, inputs, name, **attrs):
        self.count += 1
        out = f"{name}_out" if name else f"t{self.count}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name or f"{op}_{self.count}",
                                           **attrs))
        return out

    def conv(self, x, prefix, pad, stride=1, bias=False):
        k = self.w[prefix + ".weight"].shape[2]
        ins = [x, self.param(prefix + ".weight")]
        if bias:
            ins.append(self.param(prefix + ".bias"))
        return self.node("Conv", ins, prefix, kernel_shape=[k, k], pads=[pad] * 4,
                         strides=[stride, stride], dilations=[1, 1], group=1)

    def bn(self, x, prefix):
        ins = [x] + [self.param(f"{prefix}.{s}")
                     for s in ("weight", "bias", "running_mean", "running_var")]
        return self.node("BatchNormalization", ins, prefix, epsilon=1e-5, momentum=0.9)

    def relu(self, x):
        return self.node("Relu", [x], None)

    def maxpool(self, x):
        return self.node("MaxPool", [x], None, kernel_shape=[2, 2], strides=[2, 2],
                         pads=[0, 0, 0, 0])

    def gemm(self, x, prefix):
        return self.node("Gemm", [x, self.param(prefix + ".weight"), self.param(prefix + ".bias")],
                         prefix, alpha=1.0, beta=1.0, transB=1)


def lenet(b):
    x = b.maxpool(b.relu(b.conv("input", "conv1", 0, bias=True)))
    x = b.maxpool(b.relu(b.conv(x, "conv2", 0, bias=True)))
    x = b.node("Flatten", [x], "flatten", axis=1)
    x = b.relu(b.gemm(x, "fc1"))
    return b.gemm(x, "fc2")


def basic_block(b, x, prefix, stride, downsample):
    y = b.relu(b.bn(b.conv(x, prefix + ".conv1", 1, stride), prefix + ".bn1"))
    y = b.bn(b.conv(y, prefix + ".conv2", 1), prefix + ".bn2")
    if downsample:
        x = b.bn(b.conv(x, prefix + ".downsample.0", 0, stride), prefix + ".downsample.1")
    return b.relu(b.node("Add", [y, x], prefix + ".add"))


def resnet(b):
    x = b.maxpool(b.relu(b.bn(b.conv("input", "conv1", 1), "bn1")))
    x = basic_block(b, x, "layer1.0", 1, False)
    x = basic_block(b, x, "layer2.0", 2, True)
    x = basic_block(b, x, "layer3.0", 2, True)
    x = b.node("GlobalAveragePool", [x], "avgpool")
    x = b.node("Flatten", [x], "flatten", axis=1)
    return b.gemm(x, "fc")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["lenet", "resnet"], default="resnet")
    ap.add_argument("--weights", help="safetensors file (default: <model>.safetensors here)")
    ap.add_argument("--out", help="ONNX file to write (default: <model>.onnx here)")
    args = ap.parse_args()
    weights, meta = read_safetensors(args.weights or
                                     os.path.join(HERE, f"{args.model}.safetensors"))
    b = Builder(weights)
    (lenet if args.model == "lenet" else resnet)(b)
    b.nodes[-1].output[0] = "logits"
    unused = sorted(set(weights) - b.used)
    if unused:
        sys.exit(f"weights not used by the graph: {unused}")
    graph = helper.make_graph(
        b.nodes, f"mnist_{args.model}",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 1, 28, 28])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="nnop examples/mnist/make_onnx.py",
                              ir_version=8)
    helper.set_model_props(model, {
        "model": args.model,
        "input": "NCHW float32 [N,1,28,28], pixel/255",
        "test_accuracy": meta.get("test_accuracy", ""),
        "weights": f"examples/mnist/{args.model}.safetensors (tools/train_mnist.py)",
    })
    onnx.checker.check_model(model, full_check=True)
    out = args.out or os.path.join(HERE, f"{args.model}.onnx")
    onnx.save(model, out)
    print(f"{out}: {len(b.nodes)} nodes, {len(b.inits)} initializers, "
          f"{os.path.getsize(out)} bytes (onnx {onnx.__version__}, opset {OPSET})")


if __name__ == "__main__":
    main()
