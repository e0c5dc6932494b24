#!/usr/bin/env python3
"""torch_problems.py: the PyTorch peer of `nnop-bench --perf` on the same problem file.

Reads nnop-bench conv descriptors (bench/problems/*.txt; other ops are skipped with a note)
and times each as PyTorch eager runs it: conv2d, then the post-ops in order (bias, bn in
inference form, add of a second input, the activations), `cudnn.benchmark` on, the problem's
dtype and layout (channels_last for nhwc). Method as nnop-bench's: warm-up calls, CUDA events
around back-to-back calls, median of the repeats. Output: JSON in nnop-bench's shape (tool,
results[] with name, kind "problem", gpu_us, flops, bytes, tflops, gbs), so that
tools/plot_bench.py draws both side by side:
    python3 bench/torch_problems.py -f bench/problems/resnet50_conv.txt --json torch.json
"""
import argparse
import json
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def parse_pair(text, default):
    if text is None:
        return (default, default)
    if "x" in text:
        a, b = text.split("x")
        return (int(a), int(b))
    return (int(text), int(text))


def parse_conv(tokens):
    """A conv descriptor's fields (the subset of nb_parse.c's grammar the peer needs)."""
    dims = dict(re.findall(r"([a-z])(\d+)", tokens[0]))
    p = {"n": int(dims["n"]), "c": int(dims["c"]), "h": int(dims["h"]),
         "w": int(dims.get("w", dims["h"])), "k": int(dims["k"]), "r": int(dims["r"])}
    p["s"] = int(dims.get("s", p["r"]))
    opts = {"p": None, "st": None, "dl": None}
    p.update(g=1, dt="f32", layout="nchw", post=[], name=None)
    for t in tokens[1:]:
        m = re.fullmatch(r"(p|st|dl)(\d+(?:x\d+)?)", t)
        if m:
            opts[m.group(1)] = m.group(2)
        elif re.fullmatch(r"g\d+", t):
            p["g"] = int(t[1:])
        elif "=" in t:
            k, v = t.split("=", 1)
            if k == "post":
                p["post"] = v.split(",")
            elif k in ("dt", "layout", "name"):
                p[k] = v
    p["pad"], p["stride"], p["dil"] = (parse_pair(opts["p"], 0), parse_pair(opts["st"], 1),
                                       parse_pair(opts["dl"], 1))
    return p


def activation(name):
    kind, *args = name.split(":")
    a = [float(x) for x in args]
    table = {
        "identity": lambda x: x, "relu": F.relu, "relu6": F.relu6,
        "leaky_relu": lambda x: F.leaky_relu(x, a[0] if a else 0.01),
        "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
        "sigmoid": torch.sigmoid, "tanh": torch.tanh, "silu": F.silu,
        "elu": lambda x: F.elu(x, a[0] if a else 1.0), "hardswish": F.hardswish,
        "hardsigmoid": F.hardsigmoid, "mish": F.mish,
        "clamp": lambda x: torch.clamp(x, a[0], a[1]),
    }
    if kind not in table:
        raise ValueError(f"post-op {name} has no PyTorch peer here")
    return table[kind]


def build(p, dev):
    dt = DTYPES[p["dt"]]
    fmt = torch.channels_last if p["layout"] == "nhwc" else torch.contiguous_format
    x = torch.randn(p["n"], p["c"], p["h"], p["w"], device=dev, dtype=dt).to(memory_format=fmt)
    wt = torch.randn(p["k"], p["c"] // p["g"], p["r"], p["s"], device=dev, dtype=dt)
    wt = wt.to(memory_format=fmt)
    y0 = F.conv2d(x, wt, None, p["stride"], p["pad"], p["dil"], p["g"])
    steps, extra = [], 0
    for op in p["post"]:
        if op == "bias":
            b = torch.randn(p["k"], device=dev, dtype=dt).view(1, -1, 1, 1)
            steps.append(lambda v, b=b: v + b)
            extra += b.numel() * b.element_size()
        elif op == "bn":
            s = torch.rand(p["k"], device=dev, dtype=dt).view(1, -1, 1, 1) + 0.5
            t = torch.randn(p["k"], device=dev, dtype=dt).view(1, -1, 1, 1)
            steps.append(lambda v, s=s, t=t: v * s + t)
            extra += 2 * s.numel() * s.element_size()
        elif op == "add":
            z = torch.randn_like(y0)
            steps.append(lambda v, z=z: v + z)
            extra += z.numel() * z.element_size()
        else:
            steps.append(activation(op))

    def run():
        v = F.conv2d(x, wt, None, p["stride"], p["pad"], p["dil"], p["g"])
        for f in steps:
            v = f(v)
        return v

    flops = 2 * y0.numel() * (p["c"] // p["g"]) * p["r"] * p["s"]
    size = x.element_size()
    nbytes = (x.numel() + wt.numel() + y0.numel()) * size + extra
    return run, flops, nbytes


def time_us(run, warmup, calls, reps, dev):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        if dev == "cpu":  # host time (a check of this script where there is no GPU)
            t0 = time.perf_counter()
            for _ in range(calls):
                run()
            times.append((time.perf_counter() - t0) * 1e6 / calls)
            continue
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(calls):
            run()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0 / calls)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-f", "--file", action="append", required=True)
    ap.add_argument("--json", default="-")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--device", default="cuda", help="cuda (default), or cpu to check the script")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="start no new problem after this many seconds (0: no limit)")
    a = ap.parse_args()
    t_start = time.monotonic()
    torch.backends.cudnn.benchmark = True
    results = []
    for path in a.file:
        for line in open(path):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            tokens = line.split()
            if a.time_limit and time.monotonic() - t_start > a.time_limit:
                print(f"--time-limit {a.time_limit:g} s reached: stopped after {len(results)}",
                      file=sys.stderr)
                break
            if tokens[0] != "conv":
                print(f"skipped (no PyTorch peer here): {line}", file=sys.stderr)
                continue
            p = parse_conv(tokens[1:])
            name = p["name"] or line
            try:
                run, flops, nbytes = build(p, a.device)
                us = time_us(run, a.warmup, a.calls, a.reps, a.device)
                row = {"name": name, "kind": "problem", "desc": line, "backend": "torch",
                       "status": "ok", "gpu_us": us, "host_us": None, "flops": flops,
                       "bytes": nbytes, "tflops": flops / us / 1e6, "gbs": nbytes / us / 1e3}
            except (RuntimeError, ValueError) as e:
                row = {"name": name, "kind": "problem", "desc": line, "backend": "torch",
                       "status": f"error: {e}"}
            print(f"{name}: {row.get('gpu_us')}", file=sys.stderr)
            results.append(row)
    doc = {"tool": "nnop-bench", "peer": "torch", "torch_version": torch.__version__,
           "cudnn_version": torch.backends.cudnn.version(),
           "device": torch.cuda.get_device_name(0) if a.device == "cuda" else "host CPU",
           "method": {"warmup": a.warmup, "reps": a.reps, "calls": a.calls},
           "results": results}
    text = json.dumps(doc, indent=2)
    if a.json == "-":
        print(text)
    else:
        with open(a.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
