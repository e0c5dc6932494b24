"""profile_kernels.py: per-kernel GPU time of one ResNet-50 forward (fp16, channels-last),
nnop beside PyTorch in one process, from CUPTI kernel records through torch.profiler (the GPU
machine has no nsys). nnop runs from libprof_resnet.so (bench/prof_resnet.c) via ctypes; with
--net, one of the networks of examples/nets from libprof_nets.so (bench/prof_nets.c) beside
the same network in PyTorch (tools/export_vision_net.py's), both with random weights.

  usage: python3 bench/profile_kernels.py LIBPROF [--net NAME] [--batch N ...] [--iters N]
                                          [--no-compile] [--launches]

Prints, per side and batch, every kernel's GPU time per forward, launches per forward and
share, as markdown tables, and a summary line per side. --launches also lists one nnop
forward's launches in order (GPU time, grid, block), which, beside the partitions that
NNOP_LOG=1 prints in order, says which step each launch is (bench/launch_steps.py), and
measures the device-to-device copy bandwidth of this run, for the steps' share of it."""
import argparse
import collections
import ctypes
import json
import os
import sys
import tempfile

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile


def kernel_table(fn, iters):
    """Run fn() (which runs `iters` forwards and synchronizes) under the profiler; return
    {kernel name: (us per forward, launches per forward)}."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
    us = collections.defaultdict(float)
    calls = collections.defaultdict(int)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0:
            us[e.name] += e.device_time
            calls[e.name] += 1
    return {k: (us[k] / iters, calls[k] / iters) for k in us}


def launch_list(fn):
    """Run fn() (one forward, synchronized) under the profiler; return its kernel launches in
    order as (name, us, grid, block), from the Chrome trace (FunctionEvent has no grid)."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f).get("traceEvents", [])
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    return [(e["name"], e.get("dur", 0.0), e.get("args", {}).get("grid"),
             e.get("args", {}).get("block")) for e in kernels]


def print_launches(title, launches):
    print(f"\n### {title}: one forward's {len(launches)} launches in order\n")
    print("| # | kernel | us | grid | block |")
    print("| ---: | --- | ---: | --- | --- |")
    for i, (name, us, grid, block) in enumerate(launches):
        short = name if len(name) <= 70 else name[:67] + "..."
        print(f"| {i} | `{short}` | {us:.1f} | {grid} | {block} |")


def copy_gbs(mib=256, reps=20):
    """Device-to-device copy bandwidth, read + write bytes, median of `reps` copies."""
    a = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    times = []
    for _ in range(reps):
        t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0.record()
        b.copy_(a)
        t1.record()
        t1.synchronize()
        times.append(t0.elapsed_time(t1) / 1e3)
    times.sort()
    return 2 * a.numel() / times[len(times) // 2] / 1e9


def print_table(title, table, top):
    total = sum(v[0] for v in table.values())
    launches = sum(v[1] for v in table.values())
    print(f"\n### {title}: {total / 1000:.3f} ms GPU time per forward, "
          f"{launches:.0f} kernel launches\n")
    print("| kernel | us / forward | launches | share |")
    print("| --- | ---: | ---: | ---: |")
    for name, (t, c) in sorted(table.items(), key=lambda kv: -kv[1][0])[:top]:
        short = name if len(name) <= 90 else name[:87] + "..."
        print(f"| `{short}` | {t:.1f} | {c:.0f} | {100 * t / total:.1f}% |")
    print(f"SUMMARY {title}: {total / 1000:.3f} ms per forward, {launches:.0f} kernels", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--batch", type=int, nargs="+", default=[32, 256])
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--net", default="resnet50")
    ap.add_argument("--launches", action="store_true")
    a = ap.parse_args()
    lib = ctypes.CDLL(a.lib)
    torch.backends.cudnn.benchmark = True
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if a.net == "resnet50":
        model, title = torchvision.models.resnet50(), "ResNet-50"
    else:
        sys.path.insert(0, os.path.join(root, "tools"))
        import export_vision_net
        model, title = export_vision_net.build(a.net), a.net
        graph = os.path.join(root, "examples", "nets", a.net + ".json").encode()
    model = model.half().cuda().eval().to(memory_format=torch.channels_last)
    if a.launches:
        print(f"copy bandwidth of this run: {copy_gbs():.1f} GB/s", flush=True)
    compiled = None if a.no_compile else torch.compile(model)
    for n in a.batch:
        if a.net == "resnet50":
            rc = lib.prof_init(n, 1, 0)
        else:
            rc = lib.prof_init_net(ctypes.c_char_p(graph), n, 224, 1, 0)
        if rc != 0:
            sys.exit("prof_init failed")
        lib.prof_run(3)
        nn = kernel_table(lambda: lib.prof_run(a.iters), a.iters)
        print_table(f"nnop {title} batch {n} (autotuned)", nn, a.top)
        if a.launches:
            print_launches(f"nnop {title} batch {n}", launch_list(lambda: lib.prof_run(1)))
        x = torch.randn(n, 3, 224, 224, device="cuda", dtype=torch.half) \
            .to(memory_format=torch.channels_last)
        with torch.inference_mode():
            for name, m in (("torch eager", model), ("torch.compile", compiled)):
                if m is None:
                    continue
                for _ in range(3):
                    m(x)
                torch.cuda.synchronize()

                def run():
                    for _ in range(a.iters):
                        m(x)
                    torch.cuda.synchronize()
                print_table(f"{name} {title} batch {n}", kernel_table(run, a.iters), a.top)
        lib.prof_fini()


if __name__ == "__main__":
    main()
