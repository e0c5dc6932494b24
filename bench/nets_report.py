"""nets_report.py: the table of issue 15's networks from one `bench/gpu_bench.sh vision` run: nnop-bench's
JSON (nb_<net>_b<batch>.json, with and without CUDA graph replay) beside bench/torch_resnet.py's
lines (torch_<net>.txt: eager, eager CUDA graph, torch.compile reduce-overhead), per network and
batch; the ratio is nnop's time (CUDA graph) over torch.compile's (lower is better).
With --plot OUT, also OUT/nets_ms.png (nnop with CUDA graph beside PyTorch's three, per network
and batch) and OUT/nets_ratio.png (the ratio against each batch's goal); needs matplotlib.
  usage: python3 bench/nets_report.py DIR [--plot OUT]"""
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


def rows(d):
    """(net, batch, nnop ms, nnop + graph ms, eager, torch graph, torch.compile) per case."""
    nets = [n for n in NETS if glob.glob(os.path.join(d, f"nb_{n}_b*.json"))] or NETS
    out = []
    for net in nets:
        t = torch_ms(os.path.join(d, f"torch_{net}.txt"))
        for b in (1, 32):
            n = nnop_ms(os.path.join(d, f"nb_{net}_b{b}.json"))
            out.append((net, b, n.get(False), n.get(True)) + t.get(b, (None, None, None)))
    return out


def goal_of(batch):
    return 0.8 if batch == 1 else 1.0


def plot(table, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out, exist_ok=True)
    labels = [f"{net}\nbatch {b}" for net, b, *_ in table]
    series = [("nnop + CUDA graph", 3), ("torch.compile reduce-overhead", 6),
              ("torch CUDA graph", 5), ("torch eager", 4)]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    w = 0.8 / len(series)
    for k, (name, col) in enumerate(series):
        ax.bar([i + k * w for i in range(len(table))], [r[col] or 0 for r in table], w, label=name)
    ax.set_xticks([i + w * (len(series) - 1) / 2 for i in range(len(table))])
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms per forward (log)")
    ax.set_title("fp16 channels-last 224x224, H200: nnop beside PyTorch")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "nets_ms.png"), dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(11, 4))
    ratios = [(r[3] / r[6]) if r[3] and r[6] else 0 for r in table]
    colors = ["tab:green" if v and v <= goal_of(r[1]) else "tab:red" for v, r in zip(ratios, table)]
    ax.bar(range(len(table)), ratios, color=colors)
    for i, r in enumerate(table):
        ax.plot([i - 0.4, i + 0.4], [goal_of(r[1])] * 2, color="black", linewidth=1)
    ax.set_xticks(range(len(table)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("nnop (CUDA graph) / torch.compile")
    ax.set_title("time ratio, lower is better; black: the goal (0.8x at batch 1, 1.0x at 32)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "nets_ratio.png"), dpi=120)
    plt.close(fig)


def main():
    args = sys.argv[1:]
    out = None
    if "--plot" in args:
        i = args.index("--plot")
        out = args[i + 1] if i + 1 < len(args) else sys.exit("--plot needs a folder")
        del args[i:i + 2]
    d = args[0] if args else "."
    table = rows(d)
    print("| network | batch | nnop ms | nnop + CUDA graph ms | torch eager ms | torch CUDA graph ms "
          "| torch.compile reduce-overhead ms | nnop (graph) / torch.compile | goal |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for net, b, n0, ng, te, tg, tc in table:
        ratio = ng / tc if ng is not None and tc else None
        goal = goal_of(b)
        verdict = "-" if ratio is None else ("met" if ratio <= goal else "missed")
        print(f"| {net} | {b} | {cell(n0)} | {cell(ng)} | {cell(te)} | {cell(tg)} "
              f"| {cell(tc)} | {'-' if ratio is None else f'{ratio:.2f}x'} "
              f"| <= {goal}x: {verdict} |")
    if out:
        plot(table, out)


if __name__ == "__main__":
    main()
