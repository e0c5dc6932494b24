#!/usr/bin/env python3
"""nnop_calibrate's percentile and entropy methods against an independent NumPy version of
the same definitions (nnop.h), on five distributions: equal to the bin. Exit 77 (a skip) where
NumPy is missing.  usage: calib_entropy_check.py CALIB_AMAX_EXECUTABLE"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("calib_entropy_check: no NumPy, skipped")
    sys.exit(77)

BINS, LEVELS = 2048, 128


def histogram(x, skip_zeros):
    a = np.abs(x.astype(np.float64))
    top = float(np.abs(x).max())
    if skip_zeros:
        a = a[x != 0]
    k = np.minimum((a * (BINS / top)).astype(np.int64), BINS - 1)
    return np.bincount(k, minlength=BINS).astype(np.float64), top


def entropy_amax(x):
    """The clip of least KL(P || Q) among bin edges LEVELS..BINS: P the counts below the edge
    with those beyond added to its last bin, Q each of LEVELS groups spread evenly over its
    nonempty bins; exact zeros not counted."""
    h, top = histogram(x, True)
    best_kl, best = np.inf, BINS
    for i in range(LEVELS, BINS + 1):
        p = h[:i].copy()
        p[i - 1] += h[i:].sum()
        q = np.zeros(i)
        w = i // LEVELS
        for j in range(LEVELS):
            lo, hi = j * w, (i if j == LEVELS - 1 else j * w + w)
            used = np.count_nonzero(h[lo:hi])
            if used:
                q[lo:hi] = np.where(h[lo:hi] != 0, h[lo:hi].sum() / used, 0.0)
        p, q = p / p.sum(), q / q.sum()
        m = p > 0
        kl = np.inf if np.any(q[m] == 0) else float((p[m] * np.log(p[m] / q[m])).sum())
        if kl < best_kl:
            best_kl, best = kl, i
    return top * best / BINS


def percentile_amax(x, pct=99.99):
    h, top = histogram(x, False)
    run = np.cumsum(h)
    i = int(np.argmax(run >= pct / 100.0 * run[-1]))
    return top * (i + 1) / BINS


def nnop_amax(exe, x, method):
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
        f.write(x.astype(np.float32).tobytes())
    try:
        out = subprocess.run([exe, f.name, str(x.size), method], capture_output=True, text=True,
                             check=True).stdout
    finally:
        os.unlink(f.name)
    return float(out)


def main():
    exe = sys.argv[1]
    rng = np.random.default_rng(45)
    n = 20000
    cases = {
        "normal": rng.standard_normal(n),
        "relu(normal) * exponential": np.maximum(rng.standard_normal(n), 0) * rng.exponential(1, n),
        "lognormal": rng.lognormal(0, 1, n),
        "uniform": rng.uniform(-2, 3, n),
        "normal with 8 outliers": np.concatenate([rng.standard_normal(n - 8), np.full(8, 40.0)]),
    }
    bad = 0
    for name, x in cases.items():
        x = x.astype(np.float32)
        width = float(np.abs(x).max()) / BINS
        for method, ref in (("entropy", entropy_amax), ("percentile", percentile_amax)):
            got, want = nnop_amax(exe, x, method), ref(x)
            ok = abs(got - want) <= 1e-5 * width + 1e-6 * want
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {name:28s} {method:10s} nnop {got:.6g} numpy {want:.6g}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
