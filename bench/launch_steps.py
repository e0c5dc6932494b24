"""launch_steps.py: which step of an nnop plan each GPU launch belongs to, and the GPU time
per kind of step. Reads what `bench/gpu_bench.sh vision-profile` writes with NNOP_LOG=1 and
NNOP_PROFILE_ARGS=--launches (bench/profile_kernels.py): the plan's partitions in order (one
`nnop_log,compile` line each) and one forward's launches in order, per batch.

  usage: python3 bench/launch_steps.py PROFILE.md [--top N] [--copy GBS]

Launches and partitions are matched by kernel family (own epilogue, depthwise, global average
pool, norm, resize/concat, library = cuDNN or cuBLASLt) in runs: a run of k partitions of one
family takes the next run of launches of that family, one launch each when the counts agree,
two each when there are twice as many, else the run's time is shown as a whole (a cuDNN engine
may launch two kernels, an epilogue a tail kernel); a partition whose family has no launch
next launched nothing (a flatten that is a view); a lone step takes its whole run (a
squeeze-excitation gate launches 1-3 kernels, the pool's among them). Where the log gives each partition's bytes
(the least it moves), the table adds GB/s, and the share of the device-to-device copy
bandwidth: the one profile_kernels.py measured in the same run ("copy bandwidth of this run:
X GB/s" in the file), or --copy GBS. Prints, per batch, the GPU time per kind of step (its nodes and implementation,
with the nodes of the step before it)."""
import argparse
import collections
import re
import sys

OWN = [("epilogue", ("epilogue_vec_kernel", "epilogue_one_kernel", "epilogue_kernel")),
       ("squeeze-excitation gate", ("gate_small", "gemv_kernel")),
       ("depthwise", ("depthwise",)),
       ("global_avg_pool", ("gap_",)),
       ("norm", ("norm_",)),
       ("resize/concat", ("resize", "concat", "copy_rows")),
       ("pad", ("pad_3to4", "pad_channels")),
       ("pool", ("pool_",)),
       ("deconv", ("deconv",)),
       ("softmax", ("softmax",))]


def launch_family(name):
    for fam, keys in OWN:
        if "anonymous namespace" in name and any(k in name for k in keys):
            return fam
    return "library"


def partition_family(impl):
    """The kernel family a partition's implementation launches, from nnop_plan_describe's
    text: "[cudnn ...", "[cuBLASLt ...", or "[own kernel: WHAT; ...]" (WHAT first)."""
    m = re.match(r"\[own kernel: ([^;\]]*)", impl)
    if not m:
        return "library"
    what = m.group(1)
    for fam, _ in OWN:
        if what.startswith(fam):
            return fam
    if what.endswith("norm") or " norm " in what:
        return "norm"
    if what.startswith(("resize", "concat")):
        return "resize/concat"
    return "own"


def parse(path):
    """[(partitions, launches, title)] per batch, in file order: partitions as (nodes, impl,
    bytes or None), launches as (name, us)."""
    out, parts, launches, title = [], [], None, None
    compile_re = re.compile(r"^nnop_log,compile,[^,]*,plan \d+,partition (\d+)/(\d+),([^,]*),(\[.*\])")
    for line in open(path):
        m = compile_re.match(line)
        if m:
            if launches is not None:
                out.append((parts, launches, title))
                parts, launches = [], None
            b = re.search(r",(\d+) B$", line.rstrip())
            parts.append((m.group(3), m.group(4), int(b.group(1)) if b else None))
            continue
        if line.startswith("### nnop ") and "launches in order" in line:
            title, launches = line[4:].split(":")[0], []
            continue
        if launches is not None and line.startswith("| ") and line[2:3].isdigit():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            launches.append((cells[1].strip("`"), float(cells[2])))
        elif launches is not None and line.startswith("### "):
            out.append((parts, launches, title))
            parts, launches = [], None
    if launches is not None:
        out.append((parts, launches, title))
    return out


def runs(items, family):
    """Consecutive items of one family: [(family, [indices])]."""
    out = []
    for i, it in enumerate(items):
        f = family(it)
        if out and out[-1][0] == f:
            out[-1][1].append(i)
        else:
            out.append((f, [i]))
    return out


def match(parts, launches):
    """{kind: [steps, launches, us, bytes or None]} and whether every run matched one launch a
    step (or two each)."""
    # a stem's channel pad belongs to the library step after it
    fam = [("library" if launch_family(n) == "pad" else launch_family(n)) for n, _ in launches]
    # a gate step that pools launches the pool's kernel first
    for i in range(len(fam) - 1):
        if fam[i] == "global_avg_pool" and fam[i + 1] == "squeeze-excitation gate":
            fam[i] = "squeeze-excitation gate"
    lruns = runs(range(len(launches)), lambda i: fam[i])
    pruns = runs(parts, lambda p: partition_family(p[1]))
    kinds = collections.OrderedDict()
    exact, li = True, 0
    for pf, pidx in pruns:
        lf, lidx = lruns[li] if li < len(lruns) else (None, [])
        if pf != lf and not (pf == "own" and lf not in (None, "library")):
            groups = [([p], []) for p in pidx]  # launched nothing (a flatten that is a view)
        else:
            li += 1
            if len(pidx) == 1:  # one step: all of the run is its (a gate's 1-3 launches)
                groups = [(pidx, lidx)]
            elif len(pidx) == len(lidx):
                groups = [([p], [l]) for p, l in zip(pidx, lidx)]
            elif len(lidx) == 2 * len(pidx):
                groups = [([p], lidx[2 * k:2 * k + 2]) for k, p in enumerate(pidx)]
            else:
                groups = [(pidx, lidx)]
                exact = False
        for ps, ls in groups:
            before = parts[ps[0] - 1][0] if ps[0] > 0 else "-"
            impl = re.sub(r"; (autotuned [0-9.]+ us|fastest of [0-9]+ configs|workspace [0-9]+ B)", "", parts[ps[0]][1])
            impl = re.sub(r"eng\d+ ", "", impl)
            key = (" + ".join(sorted({parts[p][0] for p in ps})), impl, before)
            k = kinds.setdefault(key, [0, 0, 0.0, 0])
            k[0] += len(ps)
            k[1] += len(ls)
            k[2] += sum(launches[i][1] for i in ls)
            nbytes = [parts[p][2] for p in ps]
            k[3] = None if k[3] is None or None in nbytes else k[3] + sum(nbytes)
    return kinds, exact and li == len(lruns)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--copy", type=float, help="copy bandwidth in GB/s, for the share")
    a = ap.parse_args()
    sets = parse(a.profile)
    if a.copy is None:
        m = re.search(r"copy bandwidth of this run: ([0-9.]+) GB/s", open(a.profile).read())
        a.copy = float(m.group(1)) if m else None
    if not sets:
        sys.exit(f"{a.profile}: no NNOP_LOG=1 partitions with a launch list")
    for parts, launches, title in sets:
        kinds, exact = match(parts, launches)
        total = sum(us for _, us in launches)
        print(f"\n### {title}: {len(parts)} partitions, {len(launches)} launches, "
              f"{total:.1f} us{'' if exact else ' (some runs matched as a whole)'}\n")
        print("| step (nodes) | implementation | after | steps | launches | us | share | MB | GB/s |"
              + (" of copy |" if a.copy else ""))
        print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
              + (" ---: |" if a.copy else ""))
        for (nodes, impl, before), (n, nl, us, nb) in sorted(kinds.items(), key=lambda kv: -kv[1][2])[:a.top]:
            short = impl if len(impl) <= 90 else impl[:87] + "..."
            gbs = nb / (us * 1e3) if nb is not None and us > 0 else None
            row = (f"| {nodes} | {short} | {before} | {n} | {nl} | {us:.1f} | {100 * us / total:.1f}% | "
                   + (f"{nb / 1e6:.1f} | {gbs:.0f} |" if gbs is not None else "- | - |"))
            if a.copy:
                row += f" {100 * gbs / a.copy:.0f}% |" if gbs is not None else " - |"
            print(row)


if __name__ == "__main__":
    main()
