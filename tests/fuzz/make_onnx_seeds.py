#!/usr/bin/env python3
"""make_onnx_seeds.py DIR: writes the seed corpus of fuzz_onnx (tests/fuzz/corpus/onnx), tiny
valid models, each loading in nnop_onnx, that between them reach every converter and the
opset-dependent attributes: python3 tests/fuzz/make_onnx_seeds.py tests/fuzz/corpus/onnx.
Weights are small integers over 8 so the files stay a few hundred bytes."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def w(name, shape, scale=8.0):
    n = int(np.prod(shape)) if shape else 1
    a = ((np.arange(n) * 5 % 7) - 3).astype(np.float32).reshape(shape) / scale
    return numpy_helper.from_array(a, name)


def ints(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits, opset):
    g = helper.make_graph(nodes, "seed", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                          [helper.make_tensor_value_info(n, F, None) for n in outputs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="nnop-seed")
    m.ir_version = 7 if opset < 21 else 10
    return m.SerializeToString()


def cnn():
    """conv, relu, max pool, global pool, the Shape-Gather-Unsqueeze-Concat-Reshape subgraph,
    Gemm with transB, Softmax (opset 13)"""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "W", "B"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Relu", ["c"], ["r"]),
        n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["p"], ["g"]),
        n("Shape", ["g"], ["shp"]),
        n("Gather", ["shp", "i0"], ["n"], axis=0),
        n("Unsqueeze", ["n", "ax"], ["nu"]),
        n("Concat", ["nu", "m1"], ["tgt"], axis=0),
        n("Reshape", ["g", "tgt"], ["f"]),
        n("Gemm", ["f", "Wf", "Bf"], ["z"], transB=1, alpha=0.5),
        n("Softmax", ["z"], ["prob"], axis=1),
    ]
    inits = [w("W", [2, 1, 3, 3]), w("B", [2]), ints("i0", 0), ints("ax", [0]), ints("m1", [-1]),
             w("Wf", [3, 2]), w("Bf", [3])]
    return model(nodes, [("x", ["N", 1, 4, 4])], ["prob"], inits, 13)


def norms():
    """Batch-, Instance-, Group- (per channel, opset 21) and LayerNormalization"""
    n = helper.make_node
    nodes = [
        n("BatchNormalization", ["x", "s", "b", "m", "v"], ["a"], epsilon=1e-3),
        n("InstanceNormalization", ["a", "s", "b"], ["i"]),
        n("GroupNormalization", ["i", "s4", "b4"], ["g"], num_groups=2, epsilon=1e-5),
        n("LayerNormalization", ["g", "ls", "lb"], ["y"], axis=1),
    ]
    inits = [w("s", [4]), w("b", [4]), w("m", [4]), numpy_helper.from_array(
        np.full([4], 2.0, np.float32), "v"), w("s4", [4]), w("b4", [4]), w("ls", [4, 2, 2]),
        w("lb", [4, 2, 2])]
    return model(nodes, [("x", [1, 4, 2, 2])], ["y"], inits, 21)


def pointwise():
    """activations, Clip's constant bounds, PRelu per channel, arithmetic with constants in
    each broadcast nnop takes, Sum, Dropout, Identity (opset 13)"""
    n = helper.make_node
    nodes = [
        n("Clip", ["x", "lo", "hi"], ["c"]),
        n("PRelu", ["c", "sl"], ["pr"]),
        n("LeakyRelu", ["pr"], ["lr"], alpha=0.2),
        n("HardSigmoid", ["lr"], ["hs"], alpha=0.3, beta=0.4),
        n("Selu", ["hs"], ["se"]),
        n("Add", ["se", "pc"], ["a1"]),
        n("Sub", ["one", "a1"], ["s1"]),
        n("Mul", ["s1", "full"], ["m1"]),
        n("Div", ["m1", "two"], ["d1"]),
        n("Elu", ["d1"], ["e1"]),
        n("Mul", ["e1", "x"], ["m2"]),
        n("Sum", ["m2", "d1", "x"], ["su"]),
        n("Dropout", ["su"], ["dr"]),
        n("Identity", ["dr"], ["id"]),
        n("HardSwish", ["id"], ["hw"]),
        n("Mish", ["hw"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(-1.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(2.0, np.float32), "hi"), w("sl", [2, 1, 1]),
             w("pc", [1, 2, 1, 1]), numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             w("full", [1, 2, 2, 2]), numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    return model(nodes, [("x", [1, 2, 2, 2])], ["y"], inits, 13)


def fold():
    """constants folded at load: Constant, ConstantOfShape, Cast, Slice, integer arithmetic,
    Squeeze, Unsqueeze, Concat of constants, Reshape with 0 and -1 (opset 13)"""
    n = helper.make_node
    nodes = [
        n("Constant", [], ["k"], value_ints=[1, 2, 2, 2]),
        n("ConstantOfShape", ["k"], ["z"], value=helper.make_tensor("v", F, [1], [0.5])),
        n("Shape", ["x"], ["sx"], start=1),
        n("Cast", ["sx"], ["sf"], to=TensorProto.FLOAT),
        n("Cast", ["sf"], ["si"], to=TensorProto.INT64),
        n("Slice", ["si", "st", "en", "axs", "stp"], ["sl"]),
        n("Mul", ["sl", "k2"], ["sm"]),
        n("Add", ["sm", "k0"], ["sa"]),
        n("Unsqueeze", ["z", "ax0"], ["zu"]),
        n("Squeeze", ["zu", "ax0"], ["zs"]),
        n("Add", ["x", "zs"], ["xa"]),
        n("Concat", ["k0b", "neg"], ["tgt"], axis=0),
        n("Mul", ["tgt", "k2"], ["t2"]),
        n("Div", ["t2", "k2"], ["t3"]),
        n("Reshape", ["xa", "t3"], ["y"]),
    ]
    inits = [ints("st", [0]), ints("en", [-1]), ints("axs", [0]), ints("stp", [1]), ints("k2", [2]),
             ints("k0", [0]), ints("ax0", [0]), ints("k0b", [0]), ints("neg", [-1])]
    return model(nodes, [("x", [1, 2, 2, 2])], ["y"], inits, 13)


def window():
    """ConvTranspose, AveragePool with pads and count_include_pad, SAME padding, GlobalMaxPool,
    Concat of values along channels, Flatten, MatMul with a constant B (opset 11)"""
    n = helper.make_node
    nodes = [
        n("ConvTranspose", ["x", "Wt"], ["t"], strides=[2, 2], pads=[1, 1, 1, 1],
          output_padding=[1, 1], group=1),
        n("AveragePool", ["t"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
          count_include_pad=1),
        n("Conv", ["ap", "W"], ["c"], kernel_shape=[3, 3], auto_pad="SAME_UPPER", group=2),
        n("Concat", ["c", "ap"], ["cc"], axis=1),
        n("GlobalMaxPool", ["cc"], ["gm"]),
        n("Flatten", ["gm"], ["f"], axis=1),
        n("MatMul", ["f", "B"], ["y"]),
    ]
    inits = [w("Wt", [2, 2, 2, 2]), w("W", [2, 1, 3, 3]), w("B", [4, 3])]
    return model(nodes, [("x", [1, 2, 3, 3])], ["y"], inits, 11)


def legacy():
    """opset 6: legacy broadcast with axis, Clip's bounds and Dropout's is_test as attributes,
    BatchNormalization's spatial, Softmax flattening at axis 1, Squeeze with an axes attribute"""
    n = helper.make_node
    nodes = [
        n("Add", ["x", "b"], ["a"], broadcast=1, axis=1),
        n("Clip", ["a"], ["c"], min=-1.0, max=1.0),
        n("BatchNormalization", ["c", "s", "b", "b", "s"], ["bn"], spatial=1, is_test=1),
        n("Dropout", ["bn"], ["d"], is_test=1, ratio=0.25),
        n("Softmax", ["d"], ["sm"], axis=1),
        n("Squeeze", ["sm"], ["y"], axes=[2, 3]),
    ]
    s = numpy_helper.from_array(np.array([1.0, 2.0, 0.5], np.float32), "s")
    return model(nodes, [("x", [2, 3, 1, 1])], ["y"], [w("b", [3]), s], 6)


def channels_last():
    """opset 17: ConvNeXt's channels-last block (Transpose 0,2,3,1, LayerNormalization over the
    last axis, MatMul by a constant, a bias Add, GELU's erf form with its Constant nodes,
    Transpose 0,3,1,2), then the layer scale and the residual Add (onnx_view.c, onnx_fuse.c)"""
    n = helper.make_node
    c = lambda name, v: n("Constant", [], [name], value=helper.make_tensor(name, F, [], [v]))
    nodes = [
        n("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
        n("LayerNormalization", ["t", "g", "b"], ["ln"], axis=-1, epsilon=1e-6),
        n("MatMul", ["ln", "W"], ["m"]),
        n("Add", ["bw", "m"], ["h"]),
        c("s2", 1.4142135381698608), n("Div", ["h", "s2"], ["d"]), n("Erf", ["d"], ["e"]),
        c("one", 1.0), n("Add", ["e", "one"], ["a"]), n("Mul", ["h", "a"], ["hm"]),
        c("half", 0.5), n("Mul", ["hm", "half"], ["gl"]),
        n("Transpose", ["gl"], ["back"], perm=[0, 3, 1, 2]),
        n("Mul", ["ls", "back"], ["sc"]),
        n("Conv", ["x", "Wc"], ["xc"]),
        n("Add", ["sc", "xc"], ["y"]),
    ]
    inits = [w("g", [2]), w("b", [2]), w("W", [2, 3]), w("bw", [3]), w("ls", [3, 1, 1]),
             w("Wc", [3, 2, 1, 1])]
    return model(nodes, [("x", [1, 2, 2, 3])], ["y"], inits, 17)


def dynamo():
    """opset 18, what torch's dynamo exporter writes: a zero Pad folded into a Conv, Split of
    the channels (torch.chunk), as_strided as Reshape [-1] + Gather of every element whose
    indices come from a Range (onnx_conv.c, onnx_fold.c, onnx_shape.c)"""
    n = helper.make_node
    nodes = [
        n("Pad", ["x", "p"], ["px"]),
        n("Conv", ["px", "W"], ["c"]),
        n("Split", ["c"], ["s0", "s1"], axis=1, num_outputs=2),
        n("Add", ["s0", "s1"], ["a"]),
        n("Reshape", ["a", "flat"], ["f"]),
        n("Range", ["zero", "count", "one"], ["r"]),
        n("Reshape", ["r", "shape"], ["idx"]),
        n("Gather", ["f", "idx"], ["y"], axis=0),
    ]
    inits = [ints("p", [0, 0, 1, 1, 0, 0, 1, 1]), w("W", [4, 2, 3, 3]), ints("flat", [-1]),
             ints("zero", 0), ints("count", 12), ints("one", 1), ints("shape", [1, 2, 2, 3])]
    return model(nodes, [("x", [1, 2, 2, 3])], ["y"], inits, 18)


SEEDS = {"cnn.onnx": cnn, "norms.onnx": norms, "pointwise.onnx": pointwise, "fold.onnx": fold,
         "window.onnx": window, "legacy.onnx": legacy, "channels_last.onnx": channels_last,
         "dynamo.onnx": dynamo}

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, make in SEEDS.items():
        data = make()
        with open(os.path.join(sys.argv[1], name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")
