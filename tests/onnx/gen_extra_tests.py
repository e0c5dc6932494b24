#!/usr/bin/env python3
"""gen_extra_tests.py OUT_DIR: nnop's own ONNX node tests, in the layout of ONNX's
(OUT_DIR/test_<name>/model.onnx, test_data_set_0/input_0.pb, output_0.pb), for what ONNX's node
tests cannot show: Resize and Upsample with constant scales and sizes (ONNX's feed them as
graph inputs, which the importer refuses), pools whose asymmetric pads nnop runs exactly, and
the ones it must refuse, and exporters' patterns (ConvNeXt's channels-last block with GELU in
its erf form, as torch.onnx.export writes it before opset 20). Expected outputs by the onnx package's reference evaluator. A test
named *_refused must be refused; onnx_conformance runs them all (ctest onnx.extra_cpu).
Exit 77 (skip) without onnx or numpy."""
import os
import shutil
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator
except ImportError as e:
    print(f"gen_extra_tests: {e}: skipped")
    sys.exit(77)


def repeat(x, fh, fw):
    """nearest upsampling by whole factors (Upsample, Resize-10: asymmetric, floor)"""
    return np.repeat(np.repeat(x, fh, axis=2), fw, axis=3)


def write(out, name, node, x, inits, opset, out_shape=None, expected=None, external=False):
    """node: one node or a list of them (a subgraph from x to y); external: the initializers
    in model.onnx.data beside the model, as torch.onnx.export writes them (onnx's own writer)"""
    d = os.path.join(out, f"test_{name}")
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    graph = helper.make_graph(
        node if isinstance(node, list) else [node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7 if opset < 16 else 8
    if external:  # a copy: the writer moves the copy's initializers out
        kept = onnx.ModelProto()
        kept.CopyFrom(model)
        onnx.save_model(kept, os.path.join(d, "model.onnx"), save_as_external_data=True,
                        all_tensors_to_one_file=True, location="model.onnx.data",
                        size_threshold=0)
    else:
        onnx.save(model, os.path.join(d, "model.onnx"))
    if expected is not None:
        y = expected
    else:
        y = ReferenceEvaluator(model).run(None, {"x": x})[0] if "refused" not in name else x
    for k, v in (("input_0", x), ("output_0", y)):
        t = numpy_helper.from_array(np.asarray(v, dtype=np.float32), "x" if k == "input_0" else "y")
        with open(os.path.join(d, "test_data_set_0", k + ".pb"), "wb") as f:
            f.write(t.SerializeToString())


def gelu_erf(x, y, tag):
    """GELU as torch.onnx.export writes nn.GELU() before opset 20: Div by sqrt 2, Erf, Add 1,
    Mul x, Mul 0.5, its constants in Constant nodes between"""
    c = lambda name, v: helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, TensorProto.FLOAT, [], [v]))
    return [c(f"{tag}_s2", 1.4142135381698608), helper.make_node("Div", [x, f"{tag}_s2"], [f"{tag}_d"]),
            helper.make_node("Erf", [f"{tag}_d"], [f"{tag}_e"]), c(f"{tag}_one", 1.0),
            helper.make_node("Add", [f"{tag}_e", f"{tag}_one"], [f"{tag}_a"]),
            helper.make_node("Mul", [x, f"{tag}_a"], [f"{tag}_m"]), c(f"{tag}_half", 0.5),
            helper.make_node("Mul", [f"{tag}_m", f"{tag}_half"], [y])]


def write_patterns(out, rng):
    """ConvNeXt's block (torchvision's CNBlock at opset 17): a channels-last view from
    Transpose 0,2,3,1 to 0,3,1,2 around LayerNorm, two MatMuls with bias Adds and GELU's erf
    form; then the layer scale and the residual Add on N,C,H,W. And what must be refused."""
    x = rng.standard_normal((2, 8, 5, 6)).astype(np.float32)
    r = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    inits = {"ln_w": 1 + 0.1 * r(8), "ln_b": 0.1 * r(8), "w1": 0.3 * r(8, 16), "b1": 0.1 * r(16),
             "w2": 0.3 * r(16, 8), "b2": 0.1 * r(8), "gamma": r(8, 1, 1)}
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("LayerNormalization", ["t", "ln_w", "ln_b"], ["ln"], axis=-1,
                              epsilon=1e-6),
             helper.make_node("MatMul", ["ln", "w1"], ["m1"]),
             helper.make_node("Add", ["b1", "m1"], ["h"])]
    nodes += gelu_erf("h", "g", "gelu")
    nodes += [helper.make_node("MatMul", ["g", "w2"], ["m2"]),
              helper.make_node("Add", ["b2", "m2"], ["o"]),
              helper.make_node("Transpose", ["o"], ["back"], perm=[0, 3, 1, 2]),
              helper.make_node("Mul", ["gamma", "back"], ["s"]),
              helper.make_node("Add", ["s", "x"], ["y"])]
    write(out, "convnext_block", nodes, x, inits, 17)
    write(out, "gelu_erf_nchw", gelu_erf("x", "y", "gelu"), x, {}, 17)
    # Split along the channels of a run-time value (torch.chunk as the dynamo exporter writes
    # it: ShuffleNet v2), equal parts, sizes as an input (opset 13) and as an attribute
    # (opset 11), opset 18's num_outputs with a smaller last part; a constant split at load
    def split_case(name, split_node, inits, opset):
        outs = list(split_node.output)
        nodes = [split_node, helper.make_node("Relu", [outs[0]], ["r0"])]
        nodes += [helper.make_node("Concat", ["r0"] + outs[1:], ["y"], axis=1)]
        write(out, name, nodes, x, inits, opset)
    split_case("split_channels_equal", helper.make_node("Split", ["x"], ["a", "b"], axis=1), {}, 13)
    split_case("split_channels_sizes_input",
               helper.make_node("Split", ["x", "sz"], ["a", "b", "c"], axis=1),
               {"sz": np.array([1, 5, 2], dtype=np.int64)}, 13)
    split_case("split_channels_sizes_attr",
               helper.make_node("Split", ["x"], ["a", "b"], axis=-3, split=[6, 2]), {}, 11)
    split_case("split_channels_num_outputs_uneven",
               helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3), {}, 18)
    write(out, "split_constant_folded",
          [helper.make_node("Split", ["k"], ["k0", "k1"], axis=1),
           helper.make_node("Add", ["x", "k1"], ["y"])], x,
          {"k": r(1, 16, 5, 6)}, 13)
    write(out, "split_spatial_refused",
          [helper.make_node("Split", ["x"], ["a", "b"], axis=2, split=[2, 3]),
           helper.make_node("Relu", ["a"], ["y"])], x, {}, 11)
    # torch's as_strided of a contiguous tensor as the dynamo exporter writes it (ConvNeXt's
    # classifier): Reshape to [-1], Gather of every element in order shaped as the value
    flat = np.array([-1], dtype=np.int64)
    every = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    write(out, "as_strided_gather_every_element",
          [helper.make_node("Reshape", ["x", "flat"], ["f"]),
           helper.make_node("Gather", ["f", "idx"], ["g"], axis=0),
           helper.make_node("Relu", ["g"], ["y"])], x, {"flat": flat, "idx": every}, 18)
    write(out, "flat_reshape_back",
          [helper.make_node("Reshape", ["x", "flat"], ["f"]),
           helper.make_node("Reshape", ["f", "shape"], ["y"])], x,
          {"flat": flat, "shape": np.array(x.shape, dtype=np.int64)}, 18)
    # ... and with a dynamic batch the indices come from a Range of constants (folded at load)
    write(out, "range_gather_every_element",
          [helper.make_node("Reshape", ["x", "flat"], ["f"]),
           helper.make_node("Range", ["zero", "count", "one"], ["r"]),
           helper.make_node("Reshape", ["r", "shape"], ["idx"]),
           helper.make_node("Gather", ["f", "idx"], ["y"], axis=0)], x,
          {"flat": flat, "zero": np.array(0, dtype=np.int64),
           "count": np.array(x.size, dtype=np.int64), "one": np.array(1, dtype=np.int64),
           "shape": np.array(x.shape, dtype=np.int64)}, 18)
    write(out, "range_float_per_channel",
          [helper.make_node("Range", ["lo", "hi", "step"], ["r"]),
           helper.make_node("Reshape", ["r", "shape"], ["c"]),
           helper.make_node("Add", ["x", "c"], ["y"])], x,
          {"lo": np.array(-1.0, dtype=np.float32), "hi": np.array(1.0, dtype=np.float32),
           "step": np.array(0.25, dtype=np.float32),
           "shape": np.array([1, 8, 1, 1], dtype=np.int64)}, 18)
    write(out, "gather_flat_reversed_refused",
          [helper.make_node("Reshape", ["x", "flat"], ["f"]),
           helper.make_node("Gather", ["f", "idx"], ["y"], axis=0)], x,
          {"flat": flat, "idx": every[::-1].copy()}, 18)
    write(out, "flat_read_by_relu_refused",
          [helper.make_node("Reshape", ["x", "flat"], ["f"]),
           helper.make_node("Relu", ["f"], ["y"])], x, {"flat": flat}, 18, out_shape=[x.size])
    # a zero Pad folded into the Conv or count_include_pad AveragePool that reads it (nnop has
    # no pad operator): as pads input (11+), attribute (2 to 10), axes (18), two Pads in a row;
    # what it cannot fold is refused by name
    w3 = 0.3 * r(4, 8, 3, 3)
    pads_in = lambda *v: np.array(v, dtype=np.int64)
    conv = lambda i, o, **kw: helper.make_node("Conv", [i, "w"], [o], **kw)
    write(out, "pad_conv_symmetric",
          [helper.make_node("Pad", ["x", "p"], ["px"]), conv("px", "y")], x,
          {"p": pads_in(0, 0, 1, 1, 0, 0, 1, 1), "w": w3}, 13)
    write(out, "pad_conv_end_only_stride2",  # TF's SAME on an odd H: one more after
          [helper.make_node("Pad", ["x", "p"], ["px"]), conv("px", "y", strides=[2, 2])], x,
          {"p": pads_in(0, 0, 0, 1, 0, 0, 1, 1), "w": w3}, 13)
    write(out, "pad_attr_opset2_conv_pads",
          [helper.make_node("Pad", ["x"], ["px"], pads=[0, 0, 1, 0, 0, 0, 1, 0]),
           conv("px", "y", pads=[0, 1, 0, 1])], x, {"w": w3}, 7)
    write(out, "pad_axes_opset18_twice",
          [helper.make_node("Pad", ["x", "p", "", "ax"], ["p1"]),
           helper.make_node("Pad", ["p1", "p", "", "ax"], ["p2"]), conv("p2", "y")], x,
          {"p": pads_in(1, 0, 1, 0), "ax": pads_in(2, 3), "w": w3}, 18)
    write(out, "pad_avgpool_count_include_pad",
          [helper.make_node("Pad", ["x", "p"], ["px"]),
           helper.make_node("AveragePool", ["px"], ["y"], kernel_shape=[3, 3],
                            count_include_pad=1)], x,
          {"p": pads_in(0, 0, 1, 1, 0, 0, 1, 1)}, 13)
    write(out, "pad_maxpool_refused",
          [helper.make_node("Pad", ["x", "p"], ["px"]),
           helper.make_node("MaxPool", ["px"], ["y"], kernel_shape=[3, 3])], x,
          {"p": pads_in(0, 0, 1, 1, 0, 0, 1, 1)}, 13)
    write(out, "pad_relu_refused",
          [helper.make_node("Pad", ["x", "p"], ["px"]), helper.make_node("Relu", ["px"], ["y"])],
          x, {"p": pads_in(0, 0, 1, 1, 0, 0, 1, 1)}, 13)
    write(out, "pad_value_refused",
          [helper.make_node("Pad", ["x", "p", "v"], ["px"]), conv("px", "y")], x,
          {"p": pads_in(0, 0, 1, 1, 0, 0, 1, 1), "v": np.array(1.0, dtype=np.float32), "w": w3},
          13)
    write(out, "pad_conv_end_adds_output_refused",  # W 6: padded end 1, stride 2 makes 3, not 2
          [helper.make_node("Pad", ["x", "p"], ["px"]), conv("px", "y", strides=[2, 2])], x,
          {"p": pads_in(0, 0, 0, 0, 0, 0, 0, 1), "w": w3}, 13)
    # squeeze-excitation at batch 2: x times an N,C,1,1 value computed from it (refused for
    # N > 1 before: the run-time broadcast wanted 1,C,1,1)
    write(out, "mul_se_batch2",
          [helper.make_node("GlobalAveragePool", ["x"], ["p"]),
           helper.make_node("Sigmoid", ["p"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])],
          x, {}, 13)
    # Erf alone; a view as the graph's output; a Conv reading a view (its channels are W)
    # a conv, a per-channel scale and ReLU whose weights lie in model.onnx.data (external data)
    conv = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Mul", ["c", "s"], ["m"]), helper.make_node("Relu", ["m"], ["y"])]
    write(out, "external_data_conv_scale_relu", conv, x,
          {"w": 0.3 * r(6, 8, 3, 3), "b": r(6), "s": 1 + 0.1 * r(6, 1, 1)}, 13, external=True)
    write(out, "erf_alone_refused", helper.make_node("Erf", ["x"], ["y"]), x, {}, 17)
    write(out, "transpose_nhwc_output_refused",
          helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1]), x, {}, 17)
    write(out, "layernorm_view_axis1_refused",
          [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
           helper.make_node("LayerNormalization", ["t", "s"], ["l"], axis=1),
           helper.make_node("Transpose", ["l"], ["y"], perm=[0, 3, 1, 2])], x,
          {"s": r(5, 6, 8)}, 17)
    write(out, "conv_on_view_refused",
          [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
           helper.make_node("Conv", ["t", "w"], ["y"])], x, {"w": r(4, 5, 1, 1)}, 17)


def main():
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)  # no test of an earlier version left behind
    rng = np.random.default_rng(44)
    x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    f = lambda *v: np.array(v, dtype=np.float32)
    i = lambda *v: np.array(v, dtype=np.int64)
    empty = np.zeros((0,), dtype=np.float32)
    # Resize (opset 11+: X, roi, scales, sizes), constant scales or sizes
    cases = [
        ("resize_nearest_scales_2x3", "nearest", {}, f(1, 1, 2, 3), None, 13),
        ("resize_nearest_sizes_10x14", "nearest", {}, None, i(2, 3, 10, 14), 13),
        ("resize_nearest_asym_floor_2x2", "nearest",
         {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
         f(1, 1, 2, 2), None, 11),
        ("resize_linear_half_pixel_2x2", "linear", {}, f(1, 1, 2, 2), None, 13),
        ("resize_linear_half_pixel_sizes_9x11", "linear", {}, None, i(2, 3, 9, 11), 13),
        ("resize_linear_align_corners_sizes_9x13", "linear",
         {"coordinate_transformation_mode": "align_corners"}, None, i(2, 3, 9, 13), 13),
        ("resize_linear_pytorch_half_pixel_3x1.5", "linear",
         {"coordinate_transformation_mode": "pytorch_half_pixel"}, f(1, 1, 3, 1.5), None, 13),
        ("resize_linear_half_pixel_symmetric_2x2", "linear",
         {"coordinate_transformation_mode": "half_pixel_symmetric"}, f(1, 1, 2, 2), None, 19),
        ("resize_linear_down_half_pixel", "linear", {}, None, i(2, 3, 3, 4), 13),
        ("resize_nearest_axes_3_2", "nearest", {"axes": [3, 2]}, f(3, 2), None, 18),
        ("resize_nearest_round_prefer_ceil_asym_refused", "nearest",
         {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "round_prefer_ceil"},
         f(1, 1, 3, 3), None, 13),
        ("resize_linear_asymmetric_refused", "linear",
         {"coordinate_transformation_mode": "asymmetric"}, f(1, 1, 2, 2), None, 13),
        ("resize_cubic_refused", "cubic", {}, f(1, 1, 2, 2), None, 13),
    ]
    for name, mode, attrs, scales, sizes, opset in cases:
        inits = {"roi": empty}
        ins = ["x", "roi"]
        if scales is not None:
            inits["scales"] = scales
            ins.append("scales")
        else:
            inits["scales"] = empty
            inits["sizes"] = sizes
            ins += ["scales", "sizes"]
        write(out, name, helper.make_node("Resize", ins, ["y"], mode=mode, **attrs), x, inits,
              opset)
    # Resize-10 and Upsample: nearest upsampling by whole factors
    write(out, "resize10_nearest_2x3", helper.make_node("Resize", ["x", "s"], ["y"],
          mode="nearest"), x, {"s": f(1, 1, 2, 3)}, 10, expected=repeat(x, 2, 3))
    write(out, "upsample9_nearest_2x2", helper.make_node("Upsample", ["x", "s"], ["y"],
          mode="nearest"), x, {"s": f(1, 1, 2, 2)}, 9, expected=repeat(x, 2, 2))
    write(out, "upsample7_nearest_3x2", helper.make_node("Upsample", ["x"], ["y"],
          mode="nearest", scales=[1.0, 1.0, 3.0, 2.0]), x, {}, 7, expected=repeat(x, 3, 2))
    write(out, "upsample9_linear_refused", helper.make_node("Upsample", ["x", "s"], ["y"],
          mode="linear"), x, {"s": f(1, 1, 2, 2)}, 9)
    # pools with asymmetric pads: exact where the end pad adds no window, or as pad_end
    xp = rng.standard_normal((1, 2, 9, 9)).astype(np.float32)
    x8 = rng.standard_normal((1, 2, 8, 8)).astype(np.float32)
    x6 = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    pools = [
        ("maxpool_pads_0011_unused", "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2],
                                                     pads=[0, 0, 1, 1])),
        ("averagepool_pads_1021_unused", "AveragePool",
         dict(kernel_shape=[3, 3], strides=[2, 3], pads=[1, 0, 2, 1])),
        ("averagepool_pads_1100_cip_unused", "AveragePool",
         dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 0, 0], count_include_pad=1)),
        ("maxpool_ceil_asym_unused", "MaxPool",
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0], ceil_mode=1)),
        # the end pad adds a window: nnop_pool_params.pad_end (AlexNet's, Inception's pools)
        ("maxpool_pads_0011_adds_window", "MaxPool",
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])),
        ("averagepool_pads_0011_adds_window", "AveragePool",
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])),
        ("averagepool_pads_0011_cip_adds_window", "AveragePool",
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1], count_include_pad=1)),
        ("maxpool_ceil_adds_window", "MaxPool",
         dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
        ("averagepool_7x7_pads_0011_adds_window", "AveragePool",
         dict(kernel_shape=[7, 7], strides=[1, 1], pads=[0, 0, 1, 1])),
        # more padding before than after: nnop pads the end as much as the start at least
        ("maxpool_pads_1100_refused", "MaxPool",
         dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 0, 0])),
        ("conv_pads_0011_unused", "Conv", dict(kernel_shape=[3, 3], strides=[2, 2],
                                               pads=[0, 0, 1, 1])),
    ]
    for name, op, attrs in pools:
        inits, ins = {}, ["x"]
        if op == "Conv":
            inits["w"] = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
            ins.append("w")
        write(out, name, helper.make_node(op, ins, ["y"], **attrs),
              (x6 if "7x7" in name else x8) if "refused" in name or "adds_window" in name
              else xp, inits, 13)
    write_patterns(out, rng)
    names = sorted(n for n in os.listdir(out) if n.startswith("test_"))
    with open(os.path.join(out, "index.txt"), "w", encoding="utf-8") as f:
        f.writelines(f"{n} 1 1 1\n" for n in names)  # name, data sets, inputs, outputs
    print(f"gen_extra_tests: wrote {len(names)} tests into {out}")


if __name__ == "__main__":
    main()
