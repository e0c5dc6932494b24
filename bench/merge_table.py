"""merge_table.py: join bench_conv's RESULT lines and torch_conv.py's TORCH lines into one
markdown table (per-call us, GPU-bound; host us per call for nnop and the raw execute)."""
import sys


def fields(line):
    head, *rest = line.split(" | ")
    vals = {}
    for part in rest:
        bits = part.split()
        if len(bits) == 2:
            try:
                vals[bits[0]] = float(bits[1])
            except ValueError:
                pass
    return head.split(" ", 1)[1], vals, rest[-1] if rest else ""


def main(nnop_file, torch_file):
    nn, tt = {}, {}
    for line in open(nnop_file):
        if line.startswith("RESULT "):
            key, vals, tail = fields(line.rstrip("\n"))
            eng = tail.split("[cudnn ")[1].split(",")[0] if "[cudnn " in tail else "?"
            vals["engine"] = eng.replace(" precompiled", " (P)").replace(" runtime-compiled", " (RTC)")
            nn[key] = vals
    try:
        for line in open(torch_file):
            if line.startswith("TORCH "):
                key, vals, _ = fields(line.rstrip("\n"))
                tt[key] = vals
    except OSError:
        pass
    print("| layer (N,C,H,W -> K, RxS, stride) | nnop us | nnop graph us | raw cudnn us "
          "| torch conv | torch eager c+b+r | torch cudnn_conv_relu | nnop/cudnn_relu "
          "| host us nnop / raw | engine |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, v in nn.items():
        t = tt.get(key, {})
        ratio = v["nnop"] / t["cudnn_relu"] if t.get("cudnn_relu") else float("nan")
        print(f"| {key} | {v['nnop']:.1f} | {v['graph']:.1f} | {v['raw']:.1f} | "
              f"{t.get('conv', float('nan')):.1f} | {t.get('eager', float('nan')):.1f} | "
              f"{t.get('cudnn_relu', float('nan')):.1f} | {ratio:.2f} | "
              f"{v['host_nnop']:.2f} / {v['host_raw']:.2f} | {v['engine']} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
