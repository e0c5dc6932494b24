#!/usr/bin/env python3
"""gen_edge_tests.py OUT_DIR: tiny ONNX models at the edges of the shape space (1x1 and 2x2
spatial, kernels larger than the input, stride larger than the kernel, dilation, asymmetric
pads, ceil_mode, groups, batch > 1 with one channel, long softmax rows, LRN wider than C,
Resize to and from 1x1, Gemm with N or K 1, activations at +-100, ...), one or two ops each,
random non-zero inputs from a fixed seed, expected outputs by ONNX Runtime (an oracle apart
from nnop and from the onnx package's reference evaluator that gen_extra_tests.py uses).
Layout of ONNX's node tests: OUT_DIR/test_<name>/model.onnx, test_data_set_0/input_<j>.pb,
output_<j>.pb and OUT_DIR/index.txt. onnx_conformance runs them (ctest onnx.edge_cpu): a
refusal is fine, a wrong number or a crash is a failure. Exit 77 (skip) without onnx,
numpy or onnxruntime."""
import os
import shutil
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper
except ImportError as e:
    print(f"gen_edge_tests: {e}: skipped")
    sys.exit(77)

H = helper.make_node


class Gen:
    def __init__(self, out, seed):
        self.out, self.rng, self.names = out, np.random.default_rng(seed), []
        self.so = ort.SessionOptions()
        # the plain kernels: no fusion of ORT's own between the oracle and the ops
        self.so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        self.so.intra_op_num_threads = 1
        self.so.log_severity_level = 3  # no warnings from ORT's own shape inference

    def r(self, *shape, scale=1.0, dtype=np.float32):
        """random values kept away from 0 (a sign flip or a dropped term shows)"""
        v = self.rng.uniform(0.25, 1.0, shape) * self.rng.choice([-1.0, 1.0], shape)
        return (scale * v).astype(dtype)

    def add(self, name, nodes, inputs, inits=None, opset=13, outputs=("y",), ref=None):
        """inputs: {name: array} graph inputs; inits: {name: array} initializers; ref: the
        expected output in float64 where ORT's own rounding is the larger error"""
        inits = inits or {}
        nodes = nodes if isinstance(nodes, list) else [nodes]
        elem = lambda a: helper.np_dtype_to_tensor_dtype(a.dtype)
        first = next(iter(inputs.values()))
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info(k, elem(v), v.shape)
                          for k, v in inputs.items()],
            [helper.make_tensor_value_info(o, elem(first), None) for o in outputs],
            [numpy_helper.from_array(v, k) for k, v in inits.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        data = model.SerializeToString()
        try:
            sess = ort.InferenceSession(data, self.so, providers=["CPUExecutionProvider"])
            ys = sess.run(list(outputs), inputs)
            if ref is not None:
                ys = [ref(*[v.astype(np.float64) for v in (*inputs.values(), *inits.values())])
                      .astype(ys[0].dtype)]
        except Exception as e:  # no ORT kernel for it (some float16 ops): no test
            print(f"gen_edge_tests: {name}: ONNX Runtime cannot run it ({str(e)[:120]}): left out")
            return
        d = os.path.join(self.out, f"test_{name}")
        os.makedirs(os.path.join(d, "test_data_set_0"))
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(data)
        files = [(f"input_{j}", k, v) for j, (k, v) in enumerate(inputs.items())]
        files += [(f"output_{j}", k, v) for j, (k, v) in enumerate(zip(outputs, ys))]
        for fname, k, v in files:
            with open(os.path.join(d, "test_data_set_0", fname + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(v), k).SerializeToString())
        self.names.append((f"test_{name}", len(inputs), len(outputs)))

    def write_index(self):
        with open(os.path.join(self.out, "index.txt"), "w", encoding="utf-8") as f:
            f.writelines(f"{n} 1 {i} {o}\n" for n, i, o in sorted(self.names))


def convs(g):
    # name, x shape, w shape, attrs, bias
    cases = [
        ("1x1_k1", (2, 3, 1, 1), (4, 3, 1, 1), {}, True),
        ("1x1_k3_pad1", (1, 3, 1, 1), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1]), True),
        ("2x2_k3_pad1", (1, 2, 2, 2), (3, 2, 3, 3), dict(pads=[1, 1, 1, 1]), False),
        ("2x2_k2", (3, 2, 2, 2), (3, 2, 2, 2), {}, True),
        ("k5_on_3x3_pad2", (1, 2, 3, 3), (2, 2, 5, 5), dict(pads=[2, 2, 2, 2]), True),
        ("k4_on_2x3_asym_pads", (1, 1, 2, 3), (2, 1, 4, 4), dict(pads=[1, 2, 2, 1]), False),
        ("k7_on_1x1_pad3", (1, 2, 1, 1), (2, 2, 7, 7), dict(pads=[3, 3, 3, 3]), True),
        ("kernel_eq_input", (2, 3, 4, 5), (5, 3, 4, 5), {}, True),
        ("dilation2", (1, 2, 7, 7), (3, 2, 3, 3), dict(dilations=[2, 2]), True),
        ("dilation_2_3_pads", (1, 2, 6, 8), (2, 2, 3, 3),
         dict(dilations=[2, 3], pads=[2, 3, 2, 3]), False),
        ("dilation_gt_input", (1, 1, 3, 3), (2, 1, 3, 3), dict(dilations=[2, 2], pads=[2, 2, 2, 2]),
         True),
        ("dilation_stride", (1, 2, 9, 9), (2, 2, 3, 3), dict(dilations=[2, 2], strides=[2, 2]),
         True),
        ("stride3_k1", (1, 2, 7, 7), (2, 2, 1, 1), dict(strides=[3, 3]), True),
        ("stride4_k2", (1, 2, 9, 9), (3, 2, 2, 2), dict(strides=[4, 4]), False),
        ("stride_2_3", (1, 2, 7, 8), (2, 2, 3, 2), dict(strides=[2, 3], pads=[1, 0, 1, 0]), True),
        ("stride_gt_input", (1, 1, 3, 3), (1, 1, 1, 1), dict(strides=[5, 5]), False),
        ("stride2_pad_gt_k", (1, 2, 4, 4), (2, 2, 2, 2), dict(strides=[2, 2], pads=[2, 2, 2, 2]),
         True),
        ("groups2", (1, 4, 5, 5), (6, 2, 3, 3), dict(group=2, pads=[1, 1, 1, 1]), True),
        ("groups3_batch2", (2, 6, 4, 4), (3, 2, 3, 3), dict(group=3), True),
        ("groups2_1x1_spatial", (1, 4, 1, 1), (4, 2, 1, 1), dict(group=2), True),
        ("depthwise", (1, 4, 6, 6), (4, 1, 3, 3), dict(group=4, pads=[1, 1, 1, 1]), True),
        ("depthwise_mult2", (1, 3, 5, 5), (6, 1, 3, 3), dict(group=3), True),
        ("depthwise_stride2_dil2", (2, 4, 9, 9), (4, 1, 3, 3),
         dict(group=4, strides=[2, 2], dilations=[2, 2], pads=[2, 2, 2, 2]), False),
        ("depthwise_1x1_spatial", (1, 8, 1, 1), (8, 1, 3, 3), dict(group=8, pads=[1, 1, 1, 1]),
         True),
        ("depthwise_k5_on_2x2", (1, 3, 2, 2), (3, 1, 5, 5), dict(group=3, pads=[2, 2, 2, 2]), True),
        ("depthwise_asym_pads", (1, 4, 5, 5), (4, 1, 3, 3), dict(group=4, pads=[0, 1, 2, 0]),
         True),
        ("depthwise_c1_batch3", (3, 1, 5, 5), (1, 1, 3, 3), dict(group=1, pads=[1, 1, 1, 1]), True),
        ("c1_batch3", (3, 1, 5, 5), (2, 1, 3, 3), {}, True),
        ("m1", (2, 3, 4, 4), (1, 3, 3, 3), dict(pads=[1, 1, 1, 1]), True),
        ("asym_pads_0101", (1, 2, 5, 5), (2, 2, 3, 3), dict(pads=[0, 1, 0, 1]), True),
        ("asym_pads_2011", (1, 2, 5, 5), (2, 2, 3, 3), dict(pads=[2, 0, 1, 1]), True),
        ("asym_pads_1002_stride2", (1, 2, 6, 6), (2, 2, 3, 3),
         dict(pads=[1, 0, 0, 2], strides=[2, 2]),
         True),
        ("long_row", (1, 1, 1, 300), (2, 1, 1, 7), dict(pads=[0, 3, 0, 3]), True),
        ("tall_column", (1, 2, 200, 1), (2, 2, 5, 1), dict(strides=[3, 1]), True),
        ("k1x5", (1, 2, 4, 6), (3, 2, 1, 5), dict(pads=[0, 2, 0, 2]), True),
        ("auto_pad_same_upper", (1, 2, 5, 6), (2, 2, 4, 4), dict(auto_pad="SAME_UPPER",
                                                                strides=[2, 2]), True),
        ("auto_pad_same_lower", (1, 2, 5, 6), (2, 2, 4, 4), dict(auto_pad="SAME_LOWER",
                                                                strides=[2, 2]), True),
        ("auto_pad_valid", (1, 2, 5, 6), (2, 2, 3, 3), dict(auto_pad="VALID"), True),
        ("large_values", (1, 3, 4, 4), (2, 3, 3, 3), dict(pads=[1, 1, 1, 1]), True),
        ("pads_0011_k2_on_1x1", (1, 2, 1, 1), (3, 2, 2, 2), dict(pads=[0, 0, 1, 1]), True),
        ("pads_0022_k3_s2", (1, 2, 5, 5), (2, 2, 3, 3), dict(pads=[0, 0, 2, 2], strides=[2, 2]),
         True),
        ("pads3_k2", (1, 2, 2, 2), (2, 2, 2, 2), dict(pads=[3, 3, 3, 3]), True),
        ("pads2_k1_s2", (1, 2, 3, 3), (2, 2, 1, 1), dict(pads=[2, 2, 2, 2], strides=[2, 2]), True),
        ("w_eq_c", (2, 3, 4, 3), (2, 3, 2, 2), {}, True),
        ("1d", (2, 3, 9), (4, 3, 3), dict(pads=[1, 1]), True),
    ]
    for name, xs, ws, attrs, bias in cases:
        scale = 100.0 if name == "large_values" else 1.0
        inits = {"w": g.r(*ws), **({"b": g.r(ws[0])} if bias else {})}
        g.add(f"conv_{name}", H("Conv", ["x", "w"] + (["b"] if bias else []), ["y"], **attrs),
              {"x": g.r(*xs, scale=scale)}, inits)


def conv_transposes(g):
    cases = [
        ("stride2", (1, 2, 3, 3), (2, 3, 3, 3), dict(strides=[2, 2])),
        ("1x1_input_stride2", (1, 2, 1, 1), (2, 2, 3, 3), dict(strides=[2, 2])),
        ("1x1_input_k1", (2, 3, 1, 1), (3, 2, 1, 1), {}),
        ("pads", (1, 2, 4, 4), (2, 2, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
        ("output_padding", (1, 2, 3, 3), (2, 2, 3, 3),
         dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
        ("stride3_k2", (1, 1, 3, 3), (1, 2, 2, 2), dict(strides=[3, 3])),
        ("dilation2", (1, 2, 3, 3), (2, 2, 3, 3), dict(dilations=[2, 2])),
        ("groups2", (1, 4, 3, 3), (4, 1, 3, 3), dict(group=2, strides=[2, 2])),
        ("asym_pads", (1, 2, 4, 4), (2, 2, 3, 3), dict(strides=[2, 2], pads=[0, 1, 1, 0])),
        ("c1_batch3", (3, 1, 2, 2), (1, 1, 4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
        ("k1_stride2", (1, 2, 3, 3), (2, 3, 1, 1), dict(strides=[2, 2])),
        ("output_shape", (1, 2, 3, 3), (2, 2, 3, 3), dict(strides=[2, 2], output_shape=[7, 8])),
        ("same_upper", (1, 2, 3, 3), (2, 2, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
        ("pads_gt_k", (1, 2, 5, 5), (2, 2, 2, 2), dict(pads=[2, 2, 2, 2])),
        ("groups_depthwise", (2, 3, 2, 2), (3, 1, 3, 3), dict(group=3, strides=[3, 3])),
        ("groups2_out2", (1, 4, 2, 3), (4, 2, 2, 3),
         dict(group=2, strides=[2, 1], pads=[0, 1, 0, 1])),
        ("output_padding_dil", (1, 2, 3, 3), (2, 2, 2, 2),
         dict(strides=[3, 3], dilations=[2, 2], output_padding=[2, 1])),
    ]
    for name, xs, ws, attrs in cases:
        g.add(f"convtranspose_{name}", H("ConvTranspose", ["x", "w", "b"], ["y"], **attrs),
              {"x": g.r(*xs)}, {"w": g.r(*ws), "b": g.r(ws[1] * attrs.get("group", 1))})


def pools(g):
    # name, op, x shape, attrs; MaxPool inputs are shifted negative: a pad of 0 would win
    cases = [
        ("kernel_eq_input", (1, 2, 3, 3), dict(kernel_shape=[3, 3])),
        ("kernel_eq_input_3x5", (2, 1, 3, 5), dict(kernel_shape=[3, 5])),
        ("1x1_k1", (2, 3, 1, 1), dict(kernel_shape=[1, 1])),
        ("1x1_k3_pad1", (1, 2, 1, 1), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
        ("2x2_k3_pad1", (1, 2, 2, 2), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
        ("2x2_k2_s2", (1, 2, 2, 2), dict(kernel_shape=[2, 2], strides=[2, 2])),
        ("stride3_k2", (1, 2, 8, 8), dict(kernel_shape=[2, 2], strides=[3, 3])),
        ("stride2_k1", (1, 2, 5, 5), dict(kernel_shape=[1, 1], strides=[2, 2])),
        ("ceil_k2_s2_on_5", (1, 2, 5, 5), dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)),
        ("ceil_k3_s2_pad1_on_6", (1, 2, 6, 6),
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
        # the last window of ceil_mode would start in the end pad: dropped
        ("ceil_k2_s2_pad1_on_5", (1, 1, 5, 5),
         dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
        ("ceil_k3_s3_on_4", (1, 2, 4, 4), dict(kernel_shape=[3, 3], strides=[3, 3], ceil_mode=1)),
        ("ceil_k1_s3_on_2x2", (1, 2, 2, 2), dict(kernel_shape=[1, 1], strides=[3, 3], ceil_mode=1)),
        ("pads_1_s1", (1, 2, 4, 4), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
        ("pads_2_k5_on_3", (1, 1, 3, 3), dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2])),
        ("asym_pads_0011", (1, 2, 6, 6),
         dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1])),
        ("asym_pads_1122_ceil", (1, 2, 5, 5),
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 2, 2], ceil_mode=1)),
        ("rect_k2x3_s1x2", (2, 1, 5, 7), dict(kernel_shape=[2, 3], strides=[1, 2])),
        ("long_row", (1, 1, 1, 500), dict(kernel_shape=[1, 9], strides=[1, 4], pads=[0, 4, 0, 4])),
        ("c1_batch4", (4, 1, 4, 4), dict(kernel_shape=[2, 2], strides=[2, 2])),
        ("auto_pad_same_upper", (1, 2, 5, 5), dict(kernel_shape=[2, 2], strides=[2, 2],
                                                   auto_pad="SAME_UPPER")),
        ("auto_pad_same_lower", (1, 2, 5, 5), dict(kernel_shape=[2, 2], strides=[2, 2],
                                                   auto_pad="SAME_LOWER")),
        ("k3_pads2", (1, 2, 4, 4), dict(kernel_shape=[3, 3], pads=[2, 2, 2, 2])),
        ("k2_pads_0011_on_1x1", (1, 2, 1, 1), dict(kernel_shape=[2, 2], pads=[0, 0, 1, 1])),
        ("k3_pads_1122_s1", (1, 2, 4, 4), dict(kernel_shape=[3, 3], pads=[1, 1, 2, 2])),
        ("k3_pads_0022_s2", (1, 2, 5, 5), dict(kernel_shape=[3, 3], strides=[2, 2],
                                               pads=[0, 0, 2, 2])),
        ("k3_pads_0112_s2", (1, 2, 6, 5), dict(kernel_shape=[3, 3], strides=[2, 2],
                                               pads=[0, 1, 1, 2])),
        ("ceil_k3_s2_pads_0011_on_6", (1, 2, 6, 6),
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1)),
        ("1d", (2, 3, 9), dict(kernel_shape=[3], strides=[2])),
    ]
    for name, xs, attrs in cases:
        x = g.r(*xs)
        g.add(f"maxpool_{name}", H("MaxPool", ["x"], ["y"], **attrs), {"x": x - 3.0})
        if "same" in name:  # count_include_pad with auto_pad is the same case twice
            g.add(f"averagepool_{name}", H("AveragePool", ["x"], ["y"], **attrs), {"x": x})
            continue
        for cip in (0, 1):
            g.add(f"averagepool_{name}_cip{cip}",
                  H("AveragePool", ["x"], ["y"], count_include_pad=cip, **attrs), {"x": x})
    g.add("maxpool_dilation2", H("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2]),
          {"x": g.r(1, 2, 6, 6)}, opset=12)
    for op in ("GlobalAveragePool", "GlobalMaxPool"):
        low = op.lower()
        for name, xs in (("1x1", (2, 3, 1, 1)), ("1xw_long", (1, 2, 1, 700)),
                         ("c1_batch3", (3, 1, 5, 4)), ("2x2", (1, 5, 2, 2))):
            g.add(f"{low}_{name}", H(op, ["x"], ["y"]), {"x": g.r(*xs) - 2.0})


def linears(g):
    # Gemm: name, A shape, B shape, attrs, C shape or None
    cases = [
        ("m1_k1_n1", (1, 1), (1, 1), {}, (1,)),
        ("k1", (3, 1), (1, 4), {}, (4,)),
        ("n1", (3, 5), (5, 1), {}, (1,)),
        ("m1", (1, 7), (7, 3), {}, (3,)),
        ("transb", (2, 5), (3, 5), dict(transB=1), (3,)),
        ("transb_n1", (4, 6), (1, 6), dict(transB=1), (1,)),
        ("transa", (5, 2), (5, 3), dict(transA=1), (3,)),
        ("alpha_beta", (2, 4), (4, 3), dict(alpha=0.5, beta=2.0), (3,)),
        ("beta0", (2, 4), (4, 3), dict(beta=0.0), (3,)),
        ("c_1xn", (2, 4), (4, 3), {}, (1, 3)),
        ("c_mxn", (2, 4), (4, 3), {}, (2, 3)),
        ("c_mx1", (2, 4), (4, 3), {}, (2, 1)),
        ("c_scalar", (2, 4), (4, 3), {}, ()),
        ("no_c", (3, 4), (4, 2), {}, None),
        ("long_k", (2, 3000), (3000, 2), dict(transB=0), (2,)),
    ]
    for name, a, b, attrs, c in cases:
        inits = {"b": g.r(*b), **({"c": g.r(*c)} if c is not None else {})}
        g.add(f"gemm_{name}", H("Gemm", ["x", "b"] + (["c"] if c is not None else []), ["y"],
                                **attrs), {"x": g.r(*a)}, inits)
    g.add("matmul_const_a", H("MatMul", ["a", "x"], ["y"]), {"x": g.r(4, 3)}, {"a": g.r(2, 4)})
    g.add("gemm_input_b", H("Gemm", ["a", "x"], ["y"]), {"x": g.r(4, 3)}, {"a": g.r(2, 4)})
    g.add("gemm_two_inputs", H("Gemm", ["x", "z"], ["y"], transB=1), {"x": g.r(2, 4),
                                                                       "z": g.r(3, 4)})
    for name, a, b in (("k1", (3, 1), (1, 4)), ("n1", (2, 5), (5, 1)), ("m1k1n1", (1, 1), (1, 1)),
                       ("3d", (2, 3, 4), (4, 5)), ("4d_nchw", (2, 3, 1, 4), (4, 2))):
        g.add(f"matmul_{name}", H("MatMul", ["x", "b"], ["y"]), {"x": g.r(*a)}, {"b": g.r(*b)})
    # MatMul then a bias Add (an exporter's Linear), N = 1
    g.add("matmul_add_n1", [H("MatMul", ["x", "b"], ["m"]), H("Add", ["m", "c"], ["y"])],
          {"x": g.r(3, 4)}, {"b": g.r(4, 1), "c": g.r(1)})


def softmaxes(g):
    cases = [
        ("long_row_10000", (2, 10000), -1, 13, 1.0),
        ("long_row_large", (1, 3000), -1, 13, 30.0),
        ("len1_axis", (3, 1), -1, 13, 1.0),
        ("1x1", (1, 1), 1, 13, 1.0),
        ("large_values", (2, 7), 1, 13, 100.0),
        ("4d_axis1", (2, 5, 3, 4), 1, 13, 1.0),
        ("4d_axis1_c1", (2, 1, 3, 4), 1, 13, 1.0),
        ("4d_axis3", (1, 2, 3, 600), 3, 13, 1.0),
        ("4d_axis2", (1, 2, 5, 3), 2, 13, 1.0),
        # before opset 13 the input is coerced to 2-D at axis: one softmax over C*H*W
        ("opset11_4d_axis1", (2, 3, 2, 2), 1, 11, 1.0),
        ("opset11_2d_axis1", (3, 6), 1, 11, 1.0),
        ("3d_axis_neg1", (2, 3, 500), -1, 13, 1.0),
        ("2d_axis0", (4, 3), 0, 13, 1.0),
        ("opset11_2d_axis0", (4, 3), 0, 11, 1.0),
        ("opset11_4d_axis1_1x1", (2, 5, 1, 1), 1, 11, 1.0),
        ("opset11_4d_axis3", (1, 2, 3, 4), 3, 11, 1.0),
        ("opset11_3d_axis1", (2, 3, 4), 1, 11, 1.0),
        ("opset11_4d_axis_neg1", (2, 3, 1, 5), -1, 11, 1.0),
        ("4d_axis_neg3", (2, 3, 2, 2), -3, 13, 1.0),
    ]
    for name, xs, axis, opset, scale in cases:
        g.add(f"softmax_{name}", H("Softmax", ["x"], ["y"], axis=axis),
              {"x": g.r(*xs, scale=scale)},
              opset=opset)


def extremes(g, dtype=np.float32, tag=""):
    """finite inputs up to +-100: exp overflows float32 past 88.7, and float16 past 11"""
    v = np.array([-100, -88, -80, -20, -3, -0.5, 0, 0.5, 3, 20, 80, 88, 100], dtype=np.float32)
    x = np.concatenate([v, g.r(35, scale=5.0)]).reshape(2, 2, 3, 4).astype(dtype)
    acts = [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Elu", {}), ("Elu", dict(alpha=0.3)),
            ("Selu", {}), ("Mish", {}), ("HardSigmoid", {}),
            ("HardSigmoid", dict(alpha=0.5, beta=0.1)),
            ("HardSwish", {}), ("LeakyRelu", {}), ("LeakyRelu", dict(alpha=0.0)),
            ("LeakyRelu", dict(alpha=1.5)), ("Gelu", {}), ("Gelu", dict(approximate="tanh"))]
    for op, attrs in acts:
        suffix = "_".join(f"{k}{v}" for k, v in attrs.items())
        name = f"{op.lower()}_extremes{'_' + suffix if suffix else ''}{tag}"
        g.add(name, H(op, ["x"], ["y"], **attrs), {"x": x}, opset=20 if op == "Gelu" else 18)
    c = lambda *a: np.array(a, dtype=dtype).reshape(())
    for name, ins, inits in (("min_max", ["x", "lo", "hi"], {"lo": c(-2), "hi": c(6)}),
                             ("min_only", ["x", "lo"], {"lo": c(-1)}),
                             ("max_only", ["x", "", "hi"], {"hi": c(0.5)}),
                             ("min_gt_max", ["x", "lo", "hi"], {"lo": c(2), "hi": c(1)}),
                             ("none", ["x"], {})):
        g.add(f"clip_{name}{tag}", H("Clip", ins, ["y"]), {"x": x}, inits)
    g.add(f"clip6_min_max{tag}", H("Clip", ["x"], ["y"], min=-1.0, max=6.0), {"x": x}, opset=6)
    for name, slope in (("per_channel", (2, 1, 1)), ("scalar", (1,)), ("w", (4,))):
        g.add(f"prelu_{name}{tag}", H("PRelu", ["x", "s"], ["y"]), {"x": x},
              {"s": g.r(*slope, dtype=dtype)})
    g.add(f"clip_min_eq_max{tag}", H("Clip", ["x", "lo", "lo"], ["y"]), {"x": x}, {"lo": c(0.5)})
    # swish (x * sigmoid x) and exporters' GELU erf form (fused at import) at the extremes
    g.add(f"swish_extremes{tag}", [H("Sigmoid", ["x"], ["s"]), H("Mul", ["x", "s"], ["y"])],
          {"x": x})
    gelu = [H("Div", ["x", "s2"], ["d"]), H("Erf", ["d"], ["e"]), H("Add", ["e", "one"], ["a"]),
            H("Mul", ["x", "a"], ["m"]), H("Mul", ["m", "half"], ["y"])]
    g.add(f"gelu_erf_form_extremes{tag}", gelu, {"x": x},
          {"s2": c(2 ** 0.5), "one": c(1), "half": c(0.5)})


def norms(g):
    # BatchNormalization: name, x shape, variance kind, epsilon
    for name, xs, var, eps in (("tiny_var", (2, 3, 4, 4), 1e-8, 1e-5),
                               ("zero_var", (1, 3, 2, 2), 0.0, 1e-5),
                               ("big_eps", (1, 3, 2, 2), 0.5, 0.5),
                               ("c1_batch3", (3, 1, 3, 3), 0.7, 1e-5),
                               ("1x1_spatial", (2, 4, 1, 1), 0.3, 1e-5),
                               ("2d_nc", (3, 5), 0.8, 1e-5),
                               ("3d_ncl", (2, 3, 7), 0.8, 1e-5)):
        c = xs[1]
        v = np.full(c, var, np.float32) if var < 0.5 else np.abs(g.r(c)) + var
        g.add(f"batchnorm_{name}", H("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                     epsilon=eps),
              {"x": g.r(*xs)}, {"s": g.r(c), "b": g.r(c), "m": g.r(c), "v": v.astype(np.float32)},
              opset=15)
    for name, xs, attrs in (("size_gt_c", (1, 2, 3, 3), dict(size=5)),
                            ("size1", (1, 4, 2, 2), dict(size=1)),
                            # (an even size: ONNX Runtime's LRN refuses it, no oracle)
                            ("c1_batch2", (2, 1, 3, 3), dict(size=3)),
                            ("params", (1, 7, 1, 1), dict(size=3, alpha=0.01, beta=0.9, bias=2.0)),
                            ("size_gt_c_big", (2, 3, 2, 2), dict(size=9, alpha=1.0, beta=0.5)),
                            ("c1_size5", (3, 1, 2, 2), dict(size=5, alpha=0.5, beta=1.0)),
                            ("size3_c3_1x1", (1, 3, 1, 1), dict(size=3, alpha=2.0, bias=0.5))):
        g.add(f"lrn_{name}", H("LRN", ["x"], ["y"], **attrs), {"x": g.r(*xs, scale=3.0)})
    for name, xs in (("1x1", (2, 3, 1, 1)), ("c1_batch3", (3, 1, 4, 4)), ("long", (1, 2, 1, 900))):
        c = xs[1]
        g.add(f"instancenorm_{name}", H("InstanceNormalization", ["x", "s", "b"], ["y"]),
              {"x": g.r(*xs)}, {"s": g.r(c), "b": g.r(c)})
    # a large mean and a small spread: float rounding of ORT's is the larger error there
    # (its BatchNormalization folds mean into a bias in float, its GroupNormalization takes
    # E x^2 - mean^2 and gives NaN), so these expect float64 results
    off = lambda *xs: (1000.0 + 0.1 * g.r(*xs)).astype(np.float32)

    def normed(x, axes, eps=1e-5):
        return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)

    g.add("layernorm_offset_mean", H("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1),
          {"x": off(3, 500)}, {"s": g.r(500), "b": g.r(500)}, opset=17,
          ref=lambda x, s, b: normed(x, (1,)) * s + b)
    g.add("layernorm_offset_mean_axis1_4d", H("LayerNormalization", ["x", "s", "b"], ["y"], axis=1),
          {"x": off(2, 3, 4, 4)}, {"s": g.r(3, 4, 4), "b": g.r(3, 4, 4)}, opset=17,
          ref=lambda x, s, b: normed(x, (1, 2, 3)) * s + b)
    ch = lambda v: v.reshape(1, -1, 1, 1)
    g.add("instancenorm_offset_mean", H("InstanceNormalization", ["x", "s", "b"], ["y"]),
          {"x": off(2, 3, 8, 8)}, {"s": g.r(3), "b": g.r(3)},
          ref=lambda x, s, b: normed(x, (2, 3)) * ch(s) + ch(b))
    g.add("groupnorm_offset_mean", H("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2),
          {"x": off(2, 4, 5, 5)}, {"s": g.r(4), "b": g.r(4)}, opset=21,
          ref=lambda x, s, b: normed(x.reshape(2, 2, -1), (2,)).reshape(x.shape) * ch(s) + ch(b))
    g.add("batchnorm_offset_mean", H("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"]),
          {"x": off(2, 3, 2, 2)}, {"s": g.r(3), "b": g.r(3), "m": np.full(3, 1000, np.float32),
                                   "v": np.full(3, 0.01, np.float32)},
          ref=lambda x, s, b, m, v: (x - ch(m)) / np.sqrt(ch(v) + 1e-5) * ch(s) + ch(b))
    for name, xs, axis in (("len1", (2, 1), -1), ("axis1_4d", (2, 3, 2, 2), 1),
                           ("axis_last_4d", (2, 3, 2, 5), -1), ("long", (2, 4000), -1),
                           ("3d_axis_neg2", (2, 3, 4), -2), ("3d_axis1", (2, 3, 4), 1),
                           ("2d_axis0", (3, 4), 0)):
        shape = xs[axis:]
        g.add(f"layernorm_{name}", H("LayerNormalization", ["x", "s", "b"], ["y"], axis=axis),
              {"x": g.r(*xs)}, {"s": g.r(*shape), "b": g.r(*shape)}, opset=17)
    for name, xs, groups in (("g1", (2, 4, 3, 3), 1), ("g_eq_c", (1, 4, 2, 2), 4),
                             ("1x1_g2", (2, 4, 1, 1), 2)):
        g.add(f"groupnorm_{name}", H("GroupNormalization", ["x", "s", "b"], ["y"],
                                     num_groups=groups),
              {"x": g.r(*xs)}, {"s": g.r(xs[1]), "b": g.r(xs[1])}, opset=21)
    # opset 18's scale and bias are per group (opset 21: per channel)
    g.add("groupnorm_opset18_per_group", H("GroupNormalization", ["x", "s", "b"], ["y"],
                                           num_groups=2),
          {"x": g.r(2, 4, 3, 3)}, {"s": g.r(2), "b": g.r(2)}, opset=18)
    for name, xs, axes, keep in (("hw_keep", (2, 3, 4, 5), [2, 3], 1), ("hw_drop", (2, 3, 4, 5),
                                 [2, 3], 0), ("c_keep", (2, 3, 2, 2), [1], 1),
                                 ("1x1", (1, 3, 1, 1), [2, 3], 1), ("all", (2, 3, 2, 2), None, 1)):
        attrs = dict(keepdims=keep, **({"axes": axes} if axes else {}))
        g.add(f"reducemean_{name}", H("ReduceMean", ["x"], ["y"], **attrs), {"x": g.r(*xs)})
    for name, axes in (("neg_axes", [-2, -1]), ("reversed_axes", [3, 2])):
        g.add(f"reducemean_{name}", H("ReduceMean", ["x"], ["y"], axes=axes),
              {"x": g.r(2, 3, 4, 5)})
    g.add("reducemean_opset18_axes_input", H("ReduceMean", ["x", "a"], ["y"], keepdims=0),
          {"x": g.r(2, 3, 4, 5)}, {"a": np.array([2, 3], np.int64)}, opset=18)
    g.add("reducemean_opset18_no_axes_noop", H("ReduceMean", ["x"], ["y"], noop_with_empty_axes=1),
          {"x": g.r(2, 3, 4, 5)}, opset=18)


def resizes(g):
    empty = np.zeros((0,), np.float32)
    i = lambda *v: np.array(v, dtype=np.int64)
    f = lambda *v: np.array(v, dtype=np.float32)
    x1, x4, x3 = g.r(2, 3, 1, 1), g.r(1, 2, 4, 4), g.r(1, 2, 3, 5)
    cases = []
    for ct in ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"):
        cases += [(f"linear_{ct}_from_1x1", x1, "linear", ct, None, i(2, 3, 3, 4)),
                  (f"linear_{ct}_to_1x1", x4, "linear", ct, None, i(1, 2, 1, 1)),
                  (f"linear_{ct}_to_1xw", x3, "linear", ct, None, i(1, 2, 1, 7)),
                  (f"nearest_{ct}_to_1x1", x4, "nearest", ct, None, i(1, 2, 1, 1)),
                  (f"nearest_{ct}_from_1x1", x1, "nearest", ct, None, i(2, 3, 2, 3))]
    for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        cases += [(f"nearest_{nm}_down_3x5_to_2x3", x3, "nearest", "half_pixel", nm, i(1, 2, 2, 3)),
                  (f"nearest_{nm}_up_x3", x3, "nearest", "half_pixel", nm, i(1, 2, 9, 15))]
    cases += [("linear_half_pixel_down_half", x4, "linear", "half_pixel", None, i(1, 2, 2, 2)),
              ("linear_half_pixel_odd_up", x3, "linear", "half_pixel", None, i(1, 2, 7, 6))]
    for name, x, mode, ct, nm, sizes in cases:
        attrs = dict(mode=mode, coordinate_transformation_mode=ct)
        if nm:
            attrs["nearest_mode"] = nm
        g.add(f"resize_{name}", H("Resize", ["x", "roi", "scales", "sizes"], ["y"], **attrs),
              {"x": x}, {"roi": empty, "scales": empty, "sizes": sizes})
    for name, x, mode, scales in (("nearest_scales_1x1_x3", x1, "nearest", f(1, 1, 3, 3)),
                                  ("linear_scales_half", x4, "linear", f(1, 1, 0.5, 0.5)),
                                  ("linear_scales_0.3", x4, "linear", f(1, 1, 0.3, 0.3)),
                                  ("nearest_scales_1.7", x3, "nearest", f(1, 1, 1.7, 1.7)),
                                  ("linear_scales_1.7", x3, "linear", f(1, 1, 1.7, 1.7)),
                                  ("linear_scales_0.6", x3, "linear", f(1, 1, 0.6, 0.6)),
                                  ("linear_scales_to_1x1", x4, "linear", f(1, 1, 0.25, 0.25)),
                                  ("nearest_scales_0.5", x4, "nearest", f(1, 1, 0.5, 0.5))):
        g.add(f"resize_{name}", H("Resize", ["x", "roi", "scales"], ["y"], mode=mode),
              {"x": x}, {"roi": empty, "scales": scales})


def binaries(g):
    x = g.r(2, 3, 4, 5)
    for op in ("Add", "Sub", "Mul", "Div"):
        low = op.lower()
        for name, shape in (("c11", (3, 1, 1)), ("1c11", (1, 3, 1, 1)), ("one", (1,)),
                            ("scalar", ()), ("w", (5,)), ("h1", (4, 1)), ("full", (2, 3, 4, 5)),
                            ("n111", (2, 1, 1, 1))):
            g.add(f"{low}_bcast_{name}", H(op, ["x", "c"], ["y"]), {"x": x}, {"c": g.r(*shape)})
        # the constant first: c - x, c / x
        g.add(f"{low}_const_first_c11", H(op, ["c", "x"], ["y"]), {"x": x}, {"c": g.r(3, 1, 1)})
        # two graph inputs, the second broadcast, and the first smaller than the output
        g.add(f"{low}_inputs_nc11", H(op, ["x", "z"], ["y"]), {"x": x, "z": g.r(2, 3, 1, 1)})
        g.add(f"{low}_inputs_first_bcast", H(op, ["z", "x"], ["y"]), {"x": x, "z": g.r(1, 3, 4, 5)})
    # ONNX broadcasts a 1-D operand along the last dim (W), even where its length is C's
    xw = g.r(2, 3, 4, 3)
    for op in ("Add", "Mul", "PRelu"):
        g.add(f"{op.lower()}_1d_len_c_eq_w", H(op, ["x", "c"], ["y"]), {"x": xw}, {"c": g.r(3)})
        g.add(f"{op.lower()}_1311_c_eq_w", H(op, ["x", "c"], ["y"]), {"x": xw},
              {"c": g.r(1, 3, 1, 1)})
    for name, shape in (("11hw", (1, 1, 4, 5)), ("hw", (4, 5)), ("1c1w", (1, 3, 1, 5)),
                        ("n1hw", (2, 1, 4, 5))):
        g.add(f"mul_bcast_{name}", H("Mul", ["x", "c"], ["y"]), {"x": x}, {"c": g.r(*shape)})
    g.add("mul_inputs_n1hw", H("Mul", ["x", "z"], ["y"]), {"x": x, "z": g.r(2, 1, 4, 5)})
    g.add("add_same_input", H("Add", ["x", "x"], ["y"]), {"x": x})
    g.add("add_relu_1x1", [H("Add", ["x", "z"], ["s"]), H("Relu", ["s"], ["y"])],
          {"x": g.r(2, 3, 1, 1), "z": g.r(2, 3, 1, 1)})
    g.add("sum_one", H("Sum", ["x"], ["y"]), {"x": x})
    g.add("sum_three_bcast", H("Sum", ["x", "a", "b"], ["y"]), {"x": x},
          {"a": g.r(3, 1, 1), "b": g.r(1)})
    for name, shapes, axis in (("axis1_1x1", [(2, 3, 1, 1), (2, 1, 1, 1)], 1),
                               ("axis0", [(1, 2, 3, 3), (2, 2, 3, 3)], 0),
                               ("axis2", [(1, 2, 1, 4), (1, 2, 3, 4)], 2),
                               ("axis_neg1", [(1, 2, 3, 1), (1, 2, 3, 5)], -1),
                               ("one_input", [(1, 2, 3, 3)], 1),
                               ("2d_axis1", [(2, 3), (2, 1)], 1),
                               ("many", [(1, 1, 2, 2)] * 5, 1)):
        ins = {f"x{j}": g.r(*s) for j, s in enumerate(shapes)}
        g.add(f"concat_{name}", H("Concat", list(ins), ["y"], axis=axis), ins)
    g.add("concat_const_first", H("Concat", ["c", "x"], ["y"], axis=1), {"x": g.r(2, 2, 1, 1)},
          {"c": g.r(2, 3, 1, 1)})
    g.add("concat_with_const", H("Concat", ["x", "c"], ["y"], axis=1), {"x": g.r(1, 2, 2, 2)},
          {"c": g.r(1, 3, 2, 2)})


def shapes(g):
    x = g.r(2, 3, 4, 5)
    i = lambda *v: np.array(v, dtype=np.int64)
    for axis in (0, 1, 2, 4):
        g.add(f"flatten_axis{axis}", H("Flatten", ["x"], ["y"], axis=axis), {"x": x})
    g.add("reshape_neg1_zero", H("Reshape", ["x", "s"], ["y"]), {"x": x}, {"s": i(0, -1, 5)})
    g.add("reshape_to_1x1", H("Reshape", ["x", "s"], ["y"]), {"x": g.r(1, 6)}, {"s": i(1, 6, 1, 1)})
    g.add("flatten_axis_neg1", H("Flatten", ["x"], ["y"], axis=-1), {"x": g.r(2, 3, 1, 1)})
    g.add("flatten_axis_neg3", H("Flatten", ["x"], ["y"], axis=-3), {"x": x})
    g.add("flatten_2d", H("Flatten", ["x"], ["y"]), {"x": g.r(3, 4)})
    g.add("squeeze_no_axes_batch1", H("Squeeze", ["x"], ["y"]), {"x": g.r(1, 3, 1, 1)})
    g.add("squeeze_1x1_then_gemm", [H("Squeeze", ["x", "a"], ["s"]), H("Gemm", ["s", "w"], ["y"])],
          {"x": g.r(2, 3, 1, 1)}, {"a": i(2, 3), "w": g.r(3, 4)})
    g.add("concat_axis_neg3", H("Concat", ["x", "z"], ["y"], axis=-3),
          {"x": x, "z": g.r(2, 1, 4, 5)})
    g.add("transpose_0321", H("Transpose", ["x"], ["y"], perm=[0, 3, 2, 1]), {"x": x})
    g.add("transpose_2d", H("Transpose", ["x"], ["y"]), {"x": g.r(3, 7)})
    g.add("squeeze_1x1", H("Squeeze", ["x", "a"], ["y"]), {"x": g.r(2, 3, 1, 1)}, {"a": i(2, 3)})
    g.add("unsqueeze_2d", H("Unsqueeze", ["x", "a"], ["y"]), {"x": g.r(2, 3)}, {"a": i(2, 3)})
    for name, st, en, ax, sp in (("neg_step", (-1,), (-1000,), (3,), (-1,)),
                                 ("step2", (1,), (4,), (2,), (2,)),
                                 ("clamped", (-100, 1), (100, 1000), (2, 3), (1, 3)),
                                 ("neg_step2_c", (10,), (-10,), (1,), (-2,)),
                                 ("to_1x1", (3, 4), (4, 5), (2, 3), (1, 1))):
        g.add(f"slice_{name}", H("Slice", ["x", "s", "e", "a", "p"], ["y"]), {"x": x},
              {"s": i(*st), "e": i(*en), "a": i(*ax), "p": i(*sp)})
    g.add("gather_axis1_scalar", H("Gather", ["x", "k"], ["y"], axis=1), {"x": x},
          {"k": np.array(-1, np.int64)})
    g.add("gather_axis1_list", H("Gather", ["x", "k"], ["y"], axis=1), {"x": x}, {"k": i(2, 0, 2)})
    g.add("identity_dropout", [H("Identity", ["x"], ["t"]), H("Dropout", ["t"], ["y"])], {"x": x})


def fusions(g):
    """two-op pairs an importer or a backend may fuse"""
    x = g.r(2, 3, 4, 4)
    w, b = g.r(4, 3, 3, 3), g.r(4)
    conv = H("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1])
    cw = {"w": w, "b": b}
    bn = {"s": g.r(4), "bb": g.r(4), "m": g.r(4), "v": np.abs(g.r(4)) + 1e-3}
    g.add("conv_relu", [conv, H("Relu", ["c"], ["y"])], {"x": x}, cw)
    g.add("conv_clip6", [conv, H("Clip", ["c", "lo", "hi"], ["y"])], {"x": x},
          {**cw, "lo": np.array(0, np.float32), "hi": np.array(6, np.float32)})
    g.add("conv_leakyrelu", [conv, H("LeakyRelu", ["c"], ["y"], alpha=0.2)], {"x": x}, cw)
    g.add("conv_hardswish", [conv, H("HardSwish", ["c"], ["y"])], {"x": x}, cw, opset=14)
    g.add("conv_sigmoid_large", [conv, H("Sigmoid", ["c"], ["y"])], {"x": x * 30}, cw)
    g.add("conv_batchnorm", [conv, H("BatchNormalization", ["c", "s", "bb", "m", "v"], ["y"])],
          {"x": x}, {**cw, **bn})
    g.add("conv_add_residual", [H("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                                H("Add", ["c", "x"], ["y"])], {"x": x}, {"w": g.r(3, 3, 3, 3)})
    g.add("depthwise_1x1_relu", [H("Conv", ["x", "w"], ["c"], group=3),
                                 H("Relu", ["c"], ["y"])], {"x": g.r(2, 3, 1, 1)},
          {"w": g.r(3, 1, 1, 1)})
    g.add("batchnorm_relu_1x1", [H("BatchNormalization", ["x", "s", "bb", "m", "v"], ["c"]),
                                 H("Relu", ["c"], ["y"])], {"x": g.r(2, 4, 1, 1)}, bn)
    g.add("gemm_relu_n1", [H("Gemm", ["x", "w", "b"], ["c"], transB=1), H("Relu", ["c"], ["y"])],
          {"x": g.r(3, 4)}, {"w": g.r(1, 4), "b": g.r(1)})
    g.add("gap_flatten_gemm", [H("GlobalAveragePool", ["x"], ["p"]), H("Flatten", ["p"], ["f"]),
                               H("Gemm", ["f", "w"], ["y"], transB=1)],
          {"x": g.r(2, 3, 1, 1)}, {"w": g.r(5, 3)})
    g.add("maxpool_relu_neg", [H("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                               H("Relu", ["p"], ["y"])], {"x": g.r(1, 2, 2, 2) - 2.0})
    g.add("resize_conv_1x1", [H("Resize", ["x", "", "sc"], ["r"], mode="nearest"),
                              H("Conv", ["r", "w"], ["y"], pads=[1, 1, 1, 1])],
          {"x": g.r(1, 2, 1, 1)}, {"sc": np.array([1, 1, 2, 2], np.float32), "w": g.r(2, 2, 3, 3)})


def graphs(g):
    """graph outputs that are inputs, other outputs or read again: buffer reuse"""
    x = g.r(2, 3, 4, 4)
    g.add("graph_identity_only", H("Identity", ["x"], ["y"]), {"x": x})
    g.add("graph_output_read_again", [H("Relu", ["x"], ["y"]), H("Sigmoid", ["y"], ["z"])],
          {"x": x}, outputs=("y", "z"))
    g.add("graph_two_outputs_one_value", [H("Relu", ["x"], ["y"]), H("Identity", ["y"], ["z"])],
          {"x": x}, outputs=("y", "z"))
    g.add("graph_output_and_input", [H("Identity", ["x"], ["y"]), H("Tanh", ["x"], ["z"])],
          {"x": x}, outputs=("y", "z"))
    w = {"w1": g.r(3, 3, 3, 3), "w2": g.r(3, 3, 1, 1)}
    g.add("graph_diamond", [H("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
                            H("Relu", ["a"], ["b"]),
                            H("Conv", ["b", "w2"], ["c"]), H("Sigmoid", ["a"], ["d"]),
                            H("Mul", ["c", "d"], ["e"]), H("Add", ["e", "x"], ["f"]),
                            H("Add", ["f", "b"], ["y"])], {"x": x}, w)
    g.add("graph_two_inputs_concat_same", H("Concat", ["x", "x"], ["y"], axis=1), {"x": x})
    g.add("graph_mul_self", H("Mul", ["x", "x"], ["y"]), {"x": x})
    g.add("graph_const_output", [H("Relu", ["x"], ["y"]), H("Add", ["k1", "k2"], ["z"])],
          {"x": x}, {"k1": g.r(2, 3), "k2": g.r(2, 3)}, outputs=("y", "z"))


def halves(g):
    """float16 models (the importer converts them to the run's dtype)"""
    h = np.float16
    g.add("f16_conv_k3_on_2x2", H("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]),
          {"x": g.r(1, 2, 2, 2, dtype=h)}, {"w": g.r(3, 2, 3, 3, dtype=h), "b": g.r(3, dtype=h)})
    g.add("f16_depthwise", H("Conv", ["x", "w"], ["y"], group=3, pads=[1, 1, 1, 1]),
          {"x": g.r(1, 3, 4, 4, dtype=h)}, {"w": g.r(3, 1, 3, 3, dtype=h)})
    g.add("f16_maxpool_ceil", H("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                                ceil_mode=1), {"x": g.r(1, 2, 5, 5, dtype=h)})
    g.add("f16_averagepool_pads", H("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                    pads=[1, 1, 1, 1]), {"x": g.r(1, 2, 3, 3, dtype=h)})
    g.add("f16_softmax_long", H("Softmax", ["x"], ["y"]), {"x": g.r(2, 2000, dtype=h)})
    g.add("f16_gemm_n1", H("Gemm", ["x", "w", "c"], ["y"], transB=1), {"x": g.r(3, 4, dtype=h)},
          {"w": g.r(1, 4, dtype=h), "c": g.r(1, dtype=h)})
    g.add("f16_resize_linear_from_1x1", H("Resize", ["x", "", "", "s"], ["y"], mode="linear"),
          {"x": g.r(1, 2, 1, 1, dtype=h)}, {"s": np.array([1, 2, 3, 3], np.int64)})
    g.add("f16_add_bcast", H("Add", ["x", "c"], ["y"]), {"x": g.r(2, 3, 2, 2, dtype=h)},
          {"c": g.r(3, 1, 1, dtype=h)})
    extremes(g, np.float16, "_f16")


def main():
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)  # no test of an earlier version left behind
    os.makedirs(out)
    g = Gen(out, 20240611)
    for part in (convs, conv_transposes, pools, linears, softmaxes, extremes, norms, resizes,
                 binaries, shapes, fusions, graphs, halves):
        part(g)
    g.write_index()
    print(f"gen_edge_tests: wrote {len(g.names)} tests into {out}")


if __name__ == "__main__":
    main()
