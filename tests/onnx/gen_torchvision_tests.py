#!/usr/bin/env python3
"""gen_torchvision_tests.py OUT [--nets a,b] [--batches 1,8] [--dynamic-batches 2] [--size N]
[--exporter E] [--source torchvision|timm]: torchvision's (or timm's)
classification networks as ONNX test cases for onnx_conformance (issue 44), judged against
ONNX Runtime: each network with seeded random weights, its batch-norm statistics calibrated on
a random batch (so activations stay O(1) through the depth, as in a trained network), exported
with torch.onnx.export (--exporter torchscript: opset 17, the TorchScript exporter; dynamo:
torch's default exporter from 2.9, at its default opset, its weights in model.onnx.data beside
the model), run by ONNX Runtime's CPU provider on a seeded input; the input and ORT's output
written as ONNX's test data (OUT/test_tv_NET_bB/{model.onnx,test_data_set_0/{input_0,
output_0}.pb}; test_tvd_... for dynamo) with OUT/index.txt.
Exits 77 (skip) where torch, torchvision or onnxruntime is missing."""
import argparse
import os
import shutil
import sys
import time

NETS = [
    "resnet18", "resnet50", "resnext50_32x4d", "wide_resnet50_2", "vgg11_bn", "densenet121",
    "googlenet", "inception_v3", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0",
    "regnet_y_400mf", "squeezenet1_1", "shufflenet_v2_x1_0", "mnasnet1_0", "convnext_tiny",
]


def calibrate(torch, model, x):
    """Batch-norm running statistics from one random batch (cumulative average), then eval."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        model(x)
    model.eval()


# --source timm: other people's CNNs (pytorch-image-models), among them TF ports with SAME
# padding, split attention, dual paths, multi-resolution branches
TIMM_NETS = [
    "resnet50d", "tf_efficientnet_b0", "efficientnet_b0", "mobilenetv3_large_100", "regnety_008",
    "convnext_nano", "rexnet_100", "ghostnet_100", "dla34", "cspresnet50", "mixnet_s",
    "inception_v4", "xception41", "hrnet_w18_small", "dpn68", "res2net50_26w_4s", "resnest14d",
    "selecsls42b", "efficientnetv2_rw_t", "repvgg_a2",
]


def build(torch, tv, name, size, batch, seed, timm=None):
    torch.manual_seed(seed)
    if timm:
        model = timm.create_model(name, pretrained=False)
        size = model.default_cfg.get("input_size", (3, size, size))[1]
    else:
        kw = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
        model = getattr(tv.models, name)(weights=None, **kw)
    x = torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(seed + 1))
    calibrate(torch, model, torch.randn(max(batch, 8), 3, size, size))
    return model, x


def half_gaps(torch, np, model, x, yt, d):
    """Where torch has a GPU: how far PyTorch's own f16 and bf16 runs of the model (CUDA, the
    input rounded too) lie from float32, as a fraction of the largest output, in
    f16_gap.txt and bf16_gap.txt; onnx_conformance in those dtypes allows 3x that. A deep
    network's half-precision output drifts from float32 by more than a fixed tolerance
    (ResNet-50 at f16: a few 1e-2 of its largest logit); nnop's is judged by PyTorch's."""
    if not torch.cuda.is_available():
        return
    for dt, fname in ((torch.float16, "f16_gap.txt"), (torch.bfloat16, "bf16_gap.txt")):
        m = model.to("cuda", dt)
        with torch.no_grad():
            yh = m(x.to("cuda", dt)).float().cpu().numpy()
        gap = float(np.max(np.abs(yh - yt)) / (np.max(np.abs(yt)) + 1e-12))
        with open(os.path.join(d, fname), "w", encoding="utf-8") as f:
            f.write(f"{gap:.3g}\n")
    model.to("cpu", torch.float32)


def write_case(onnx, numpy_helper, d, x, y):
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    for k, v, n in (("input_0", x, "x"), ("output_0", y, "y")):
        t = numpy_helper.from_array(v, n)
        with open(os.path.join(d, "test_data_set_0", k + ".pb"), "wb") as f:
            f.write(t.SerializeToString())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--nets", default=None, help="default: every network of the source")
    ap.add_argument("--source", choices=("torchvision", "timm"), default="torchvision")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--opset", type=int, default=17, help="the TorchScript exporter's")
    ap.add_argument("--exporter", choices=("torchscript", "dynamo"), default="torchscript")
    ap.add_argument("--dynamic-batches", default="",
                    help="batches also exported with a symbolic batch dimension (test_..._bB_dyn), "
                         "as a model exported for serving is")
    a = ap.parse_args()
    dynamo = a.exporter == "dynamo"
    try:
        import numpy as np
        import onnx
        import onnxruntime as ort
        import torch
        import torchvision as tv
        from onnx import numpy_helper
        if dynamo:
            import onnxscript  # noqa: F401 (the dynamo exporter's dependency)
        timm = __import__("timm") if a.source == "timm" else None
    except ImportError as e:
        print(f"gen_torchvision_tests: {e}: skipped (pip install torch torchvision onnxruntime)")
        return 77
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    names = []
    runs = [(int(v), False) for v in a.batches.split(",") if v]
    runs += [(int(v), True) for v in a.dynamic_batches.split(",") if v]
    nets = a.nets.split(",") if a.nets else TIMM_NETS if timm else NETS
    tag = ("timm" if timm else "tv") + ("d" if dynamo else "")
    for name in nets:
        for b, dyn in runs:
            case = f"test_{tag}_{name}_b{b}{'_dyn' if dyn else ''}"
            d = os.path.join(a.out, case)
            t0 = time.time()
            model, x = build(torch, tv, name, a.size if name != "inception_v3" else 299, b, 44, timm)
            os.makedirs(d)
            path = os.path.join(d, "model.onnx")
            with torch.no_grad():
                if dynamo:  # what a user of torch.onnx.export gets by default
                    shapes = {"x": {0: torch.export.Dim("batch", min=1, max=64)}} if dyn else None
                    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                                      dynamo=True, external_data=True, verbose=False,
                                      dynamic_shapes=shapes)
                else:
                    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dyn else None
                    torch.onnx.export(model, (x,), path, opset_version=a.opset,
                                      input_names=["x"], output_names=["y"], dynamo=False,
                                      dynamic_axes=axes)
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            y = sess.run(None, {"x": x.numpy()})[0]
            with torch.no_grad():
                yt = model(x).numpy()
            gap = float(np.max(np.abs(y - yt)) / (np.max(np.abs(yt)) + 1e-12))
            write_case(onnx, numpy_helper, d, x.numpy(), y.astype(np.float32))
            with open(os.path.join(d, "ref_gap.txt"), "w", encoding="utf-8") as f:
                f.write(f"{gap:.3g}\n")  # onnx_conformance --atol-of-max: 3x this at least
            half_gaps(torch, np, model, x, yt, d)
            names.append(case)
            print(f"{case}: logits max |y| {float(np.max(np.abs(y))):.3g}, ORT vs torch "
                  f"{gap:.2g} of max, {time.time() - t0:.1f} s", flush=True)
    with open(os.path.join(a.out, "index.txt"), "w", encoding="utf-8") as f:
        f.writelines(f"{n} 1 1 1\n" for n in names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
