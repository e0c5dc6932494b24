#!/usr/bin/env python3
"""sweep_report.py: issue 12's conv sweep as markdown: each shape against its roofline floor and
against PyTorch, from one nnop-bench run and its PyTorch peer on the same problem file.

    nnop-bench --perf -f bench/problems/conv_sweep.txt --json sweep.json
    python3 bench/torch_problems.py -f bench/problems/conv_sweep.txt --json torch_sweep.json
    python3 bench/sweep_report.py sweep.json torch_sweep.json > sweep.md

The whole sweep does not fit one 600-s device call: `bench/gpu_bench.sh sweep` with NNOP_SWEEP_PART=k/n
runs a part, and --part NNOP TORCH adds each further part's pair of files (every shape against
the floor of its own run's peaks, and against the PyTorch peer of that run).

Floor of a shape: the larger of its bytes at the run's measured copy bandwidth and its FLOPs at
the run's measured matmul peak (nnop-bench's "peaks"), and at least 8 us (issue 12's rule).
Goals checked: no conv slower than 10x its floor; depthwise convs at least as fast as PyTorch.
"""
import argparse
import json
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("tool") != "nnop-bench":
        sys.exit(f"{path}: not nnop-bench JSON")
    return doc


def grouping(desc):
    """dense, depthwise (groups == C) or grouped, from a conv descriptor."""
    c = re.search(r"c(\d+)h", desc)
    g = re.search(r"\bg(\d+)\b", desc)
    groups = int(g.group(1)) if g else 1
    if groups == 1:
        return "dense"
    return "depthwise" if c and int(c.group(1)) == groups else "grouped"


def shapes(path, doc, peer, rows, failed):
    """The timed problems of one nnop-bench run (doc, read from path) into rows, each against the floor of
    that run's peaks and its PyTorch time in peer; the untimed ones into failed. Returns the
    peaks (copy GB/s, matmul TFLOP/s)."""
    peaks = doc.get("peaks") or {}
    bw, tf = peaks.get("copy_gbs"), peaks.get("matmul_tflops")
    if not bw or not tf:
        sys.exit(f"{path}: no measured peaks (a --perf run on the GPU has them)")
    for r in doc["results"]:
        if r.get("kind") != "problem" or r.get("cuda_graph"):
            continue
        us = r.get("gpu_us") if r.get("gpu_us") is not None else r.get("host_us")
        if r.get("status") == "ok" and us is None and r.get("check") is not None:
            continue  # a --check row (--perf --check writes one beside the timed row)
        if r.get("status") != "ok" or us is None:
            failed.append(r)
            continue
        floor = max(r["bytes"] / (bw * 1e3), r["flops"] / (tf * 1e6), 8.0)
        t = peer.get(r["name"])
        rows.append({"name": r["name"], "desc": r["desc"], "class": grouping(r["desc"]),
                     "us": us, "floor": floor, "x_floor": us / floor, "torch": t,
                     "x_torch": us / t if t else None})
    return bw, tf


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nnop")
    ap.add_argument("torch", nargs="?")
    ap.add_argument("--part", nargs=2, action="append", default=[], metavar=("NNOP", "TORCH"),
                    help="another part of the sweep: its nnop-bench and PyTorch JSON")
    ap.add_argument("--worst", type=int, default=15)
    ap.add_argument("--all", action="store_true", help="also a table of every shape")
    a = ap.parse_args()
    rows, failed, runs = [], [], []
    for nnop_path, torch_path in [(a.nnop, a.torch)] + [tuple(p) for p in a.part]:
        doc = load(nnop_path)
        peer = {}
        if torch_path:
            peer = {r["name"]: r.get("gpu_us") for r in load(torch_path)["results"]}
        bw, tf = shapes(nnop_path, doc, peer, rows, failed)
        runs.append((doc, bw, tf))
    no_peer = sum(r["torch"] is None for r in rows)
    print(f"# conv sweep: {len(rows)} shapes timed, {len(failed)} not; {no_peer} of the timed "
          f"without a PyTorch time (a peer that failed or stopped at its time limit)\n")
    for doc, bw, tf in runs:
        print(f"device {doc.get('device')}; peaks: copy {bw:.0f} GB/s, matmul {tf:.0f} TFLOP/s "
              f"({doc['peaks'].get('matmul_dtype')}); floor at least 8 us\n")
    print("| class | shapes | median x floor | worst x floor | > 10x floor | median nnop/torch | "
          "slower than torch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for cls in ("dense", "grouped", "depthwise"):
        sel = [r for r in rows if r["class"] == cls]
        if not sel:
            continue
        vs = [r["x_torch"] for r in sel if r["x_torch"]]
        torch_cols = f"{statistics.median(vs):.2f} | {sum(v > 1 for v in vs)}" if vs else "- | -"
        print(f"| {cls} | {len(sel)} | {statistics.median(r['x_floor'] for r in sel):.2f} | "
              f"{max(r['x_floor'] for r in sel):.1f} | {sum(r['x_floor'] > 10 for r in sel)} | "
              f"{torch_cols} |")
    print(f"\n## The {a.worst} slowest against their floor\n")
    print("| shape | class | nnop us | floor us | x floor | torch us |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in sorted(rows, key=lambda r: -r["x_floor"])[:a.worst]:
        t = f"{r['torch']:.1f}" if r["torch"] else "-"
        print(f"| `{r['desc']}` | {r['class']} | {r['us']:.1f} | {r['floor']:.1f} | "
              f"{r['x_floor']:.1f} | {t} |")
    if a.all:
        print("\n## Every shape\n")
        print("| name | nnop us | floor us | x floor | torch us | nnop/torch |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            t = f"{r['torch']:.1f} | {r['x_torch']:.2f}" if r["torch"] else "- | -"
            print(f"| {r['name']} | {r['us']:.1f} | {r['floor']:.1f} | {r['x_floor']:.1f} | {t} |")
    dw = [r for r in rows if r["class"] == "depthwise" and r["x_torch"] and r["x_torch"] > 1]
    if dw:
        print("\n## Depthwise convs slower than PyTorch\n")
        print("| shape | nnop us | torch us | nnop/torch |")
        print("| --- | ---: | ---: | ---: |")
        for r in sorted(dw, key=lambda r: -r["x_torch"]):
            print(f"| `{r['desc']}` | {r['us']:.1f} | {r['torch']:.1f} | {r['x_torch']:.2f} |")
    if failed:
        print("\n## Not timed\n")
        for r in failed:
            print(f"- `{r.get('desc')}`: {r.get('status')} {r.get('note') or ''}")


if __name__ == "__main__":
    main()
