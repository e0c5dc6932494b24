"""nets_report.py: the table of issue 15's networks from one gpu_run.sh vision run: nnop-bench's
JSON (nb_<net>_b<batch>.json, with and without CUDA graph replay) beside bench/torch_resnet.py's
lines (torch_<net>.txt: eager, eager CUDA graph, torch.compile reduce-overhead), per network and
batch; the ratio is nnop's time (CUDA graph) over torch.compile's (lower is better).
  usage: python3 bench/nets_report.py DIR"""
import glob
import json
import os
import re
import sys

NETS = ["mobilenet_v3_large", "efficientnet_b0", "convnext_tiny", "unet"]


def nnop_ms(path):
    """{cuda_graph: ms per forward} of one nnop-bench JSON file (empty when missing)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    return {r["cuda_graph"]: r["gpu_us"] / 1000.0 for r in doc.get("results", [])
            if r.get("status") == "ok" and r.get("gpu_us") is not None}


def torch_ms(path):
    """{batch: (eager, cuda_graph, reduce_overhead)} from torch_resnet.py's lines."""
    out = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    pat = re.compile(r"batch (\d+) \| eager ([\d.]+) ms \| cuda_graph ([\d.]+) ms \| "
                     r"compile_reduce_overhead ([\d.]+) ms")
    for line in lines:
        m = pat.search(line)
        if m:
            out[int(m.group(1))] = tuple(float(m.group(i)) for i in (2, 3, 4))
    return out


def cell(v):
    return "-" if v is None else f"{v:.3f}"


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    nets = [n for n in NETS if glob.glob(os.path.join(d, f"nb_{n}_b*.json"))] or NETS
    print("| network | batch | nnop ms | nnop + CUDA graph ms | torch eager ms | torch CUDA graph ms "
          "| torch.compile reduce-overhead ms | nnop (graph) / torch.compile | goal |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for net in nets:
        t = torch_ms(os.path.join(d, f"torch_{net}.txt"))
        for b in (1, 32):
            n = nnop_ms(os.path.join(d, f"nb_{net}_b{b}.json"))
            te, tg, tc = t.get(b, (None, None, None))
            ng = n.get(True)
            ratio = ng / tc if ng is not None and tc else None
            goal = 0.8 if b == 1 else 1.0
            verdict = "-" if ratio is None else ("met" if ratio <= goal else "missed")
            print(f"| {net} | {b} | {cell(n.get(False))} | {cell(ng)} | {cell(te)} | {cell(tg)} "
                  f"| {cell(tc)} | {'-' if ratio is None else f'{ratio:.2f}x'} "
                  f"| <= {goal}x: {verdict} |")


if __name__ == "__main__":
    main()
