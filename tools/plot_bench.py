#!/usr/bin/env python3
"""plot_bench.py: turn nnop-bench JSON results (--json) into PNG charts.

usage: plot_bench.py RESULT.json [MORE.json ...] [-o DIR] [--metric gpu_us|host_us|tflops|
                     gbs|images_s] [--labels A,B,...]

One chart per metric: a bar per problem or network (matched by name across files), a group
per file (another nnop run, another machine, or a PyTorch result converted to the same JSON
shape), and, for the first file, the roofline fraction (time the measured peaks allow over the
time taken) as a second chart; with --engines rows (kind "engine"), nnop_bench_engines.png: each
engine's GPU time per problem, the ones a policy takes marked. matplotlib is needed: pip install
matplotlib.
"""
import argparse
import json
import os
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("tool") != "nnop-bench":
        sys.exit(f"{path}: not an nnop-bench result (no \"tool\": \"nnop-bench\")")
    rows = [r for r in doc.get("results", []) if r.get("kind") in ("problem", "net", "devices")]
    return doc, rows


def plot_engines(plt, doc, out):
    """nnop_bench_engines.png from the "engine" rows of one result, or None when it has none."""
    eng = [r for r in doc.get("results", []) if r.get("kind") == "engine" and r.get("gpu_us")]
    if not eng:
        return None
    def label(r):
        t = r["desc"].split()
        keep = t[:2] + [w for w in t if w.startswith(("dt=", "layout="))]
        return f"{' '.join(keep)}  {r['name']}{' (rtc)' if 'runtime-compiled' in r.get('note', '') else ''}"
    names = [label(r) for r in eng]
    taken = [r.get("policy", "-") not in ("", "-") for r in eng]
    fig, ax = plt.subplots(figsize=(12, 0.3 * len(eng) + 1.5))
    ax.barh(range(len(eng)), [r["gpu_us"] for r in eng],
            color=["tab:green" if t else "tab:gray" for t in taken])
    ax.set_yticks(range(len(eng)))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("GPU time per call (us, log); green: taken by a policy")
    ax.set_title("every cuDNN engine offered (nnop-bench --engines)", fontsize=9)
    fig.tight_layout()
    p = os.path.join(out, "nnop_bench_engines.png")
    fig.savefig(p, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return p


def key(r):
    dev = r.get("device_id")
    on = f" [device {dev}]" if r.get("kind") == "devices" and dev is not None and dev >= 0 else ""
    return r["name"] + on + (" [graph]" if r.get("cuda_graph") else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("-o", "--out", default=".", help="folder for the PNG files")
    ap.add_argument("--metric", action="append",
                    help="gpu_us, host_us, tflops, gbs or images_s (default: gpu_us or host_us, and tflops)")
    ap.add_argument("--labels", help="comma-separated legend labels, one per file")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_bench.py needs matplotlib: pip install matplotlib (or apt install python3-matplotlib)")

    docs = [load(p) for p in a.results]
    os.makedirs(a.out, exist_ok=True)
    engines = plot_engines(plt, docs[0][0], a.out)
    labels = a.labels.split(",") if a.labels else [
        f"{os.path.basename(p)} ({d.get('device', '?')})" for p, (d, _) in zip(a.results, docs)]
    names = []
    for _, rows in docs:
        for r in rows:
            if key(r) not in names:
                names.append(key(r))
    if not names:
        if engines:
            print(engines)
            return
        sys.exit("no problem or network results in the files")
    metrics = a.metric
    if not metrics:
        has_gpu = any(r.get("gpu_us") for _, rows in docs for r in rows)
        metrics = ["gpu_us" if has_gpu else "host_us", "tflops"]
    units = {"gpu_us": "GPU time per call (us)", "host_us": "host time per call (us)",
             "tflops": "TFLOP/s", "gbs": "GB/s", "images_s": "images/s"}
    width = 0.8 / len(docs)
    written = []
    for m in metrics:
        fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(names) * len(docs) + 2), 4.5))
        for i, (_, rows) in enumerate(docs):
            by = {key(r): r for r in rows}
            vals = [(by[n].get(m) or 0) if n in by else 0 for n in names]
            ax.bar([j + i * width for j in range(len(names))], vals, width, label=labels[i])
        ax.set_xticks([j + width * (len(docs) - 1) / 2 for j in range(len(names))])
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(units.get(m, m))
        ax.set_title(f"nnop-bench: {units.get(m, m)}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(a.out, f"nnop_bench_{m}.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    doc, rows = docs[0]
    roof = [(key(r), r.get("roofline")) for r in rows if r.get("roofline") is not None]
    if roof:
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(roof) + 2), 4.5))
        ax.bar([n for n, _ in roof], [100 * v for _, v in roof])
        ax.set_ylabel("% of the roofline (measured peaks)")
        peaks = doc.get("peaks", {})
        ax.set_title(f"{labels[0]}: copy {peaks.get('copy_gbs') or 0:.0f} GB/s, "
                     f"{peaks.get('matmul_dtype', '')} matmul {peaks.get('matmul_tflops') or 0:.1f} TFLOP/s",
                     fontsize=9)
        ax.set_xticks(range(len(roof)))
        ax.set_xticklabels([n for n, _ in roof], rotation=45, ha="right", fontsize=8)
        fig.tight_layout()
        path = os.path.join(a.out, "nnop_bench_roofline.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    for p in written + ([engines] if engines else []):
        print(p)


if __name__ == "__main__":
    main()
