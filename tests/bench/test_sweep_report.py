"""test_sweep_report.py: bench/sweep_report.py on two synthetic parts of a conv sweep (each an
nnop-bench JSON with its own peaks and a PyTorch peer): every shape is held against the floor of
its own run's peaks (bytes at copy bandwidth, FLOPs at matmul peak, at least 8 us), the classes
come from the descriptors, a depthwise conv slower than PyTorch is listed, an untimed problem is
reported, and one pair of files alone still works."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "..", "..", "bench", "sweep_report.py")


def nnop_doc(copy_gbs, tflops, rows):
    return {"tool": "nnop-bench", "device": "test GPU",
            "peaks": {"copy_gbs": copy_gbs, "matmul_tflops": tflops, "matmul_dtype": "f16"},
            "results": [dict({"kind": "problem", "status": "ok", "check": None,
                              "host_us": None}, **r) for r in rows]}


def torch_doc(times):
    return {"tool": "nnop-bench", "peer": "torch",
            "results": [{"name": n, "kind": "problem", "gpu_us": us} for n, us in times.items()]}


def run(args):
    out = subprocess.run([sys.executable, REPORT] + args, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def main():
    # part 1: copy 1000 GB/s (1 MB = 1 us), matmul 100 TFLOP/s (1e8 FLOP = 1 us)
    part1 = nnop_doc(1000.0, 100.0, [
        # dense: 50 MB -> floor 50 us; 100 us = 2x floor
        {"name": "a.dense", "desc": "conv n1c64h56w56k64r3s3 p1", "gpu_us": 100.0,
         "bytes": 50e6, "flops": 1e8},
        # depthwise: floor 8 us (the minimum); 200 us = 25x, slower than torch's 20 us
        {"name": "a.dw", "desc": "conv n1c32h56w56k32r3s3 p1 g32", "gpu_us": 200.0,
         "bytes": 1e6, "flops": 1e6},
        {"name": "a.fail", "desc": "conv n1c3h9w9k8r3s3", "gpu_us": None, "bytes": 1.0,
         "flops": 1.0, "status": "refused"},
    ])
    # part 2: copy 2000 GB/s, matmul 50 TFLOP/s: a FLOP-bound grouped conv, 1e10 FLOP -> 200 us
    part2 = nnop_doc(2000.0, 50.0, [
        {"name": "b.grouped", "desc": "conv n4c64h56w56k64r3s3 p1 g4", "gpu_us": 300.0,
         "bytes": 10e6, "flops": 1e10},
    ])
    with tempfile.TemporaryDirectory() as d:
        files = {}
        for name, doc in (("n1", part1), ("t1", torch_doc({"a.dense": 50.0, "a.dw": 20.0})),
                          ("n2", part2), ("t2", torch_doc({"b.grouped": 600.0}))):
            files[name] = os.path.join(d, name + ".json")
            with open(files[name], "w") as f:
                json.dump(doc, f)
        text = run([files["n1"], files["t1"], "--part", files["n2"], files["t2"], "--all"])
        assert "# conv sweep: 3 shapes timed, 1 not" in text, text
        assert "copy 1000 GB/s, matmul 100 TFLOP/s" in text and "copy 2000 GB/s, matmul 50" in text
        assert "| dense | 1 | 2.00 | 2.0 | 0 | 2.00 | 1 |" in text, text
        assert "| grouped | 1 | 1.50 | 1.5 | 0 | 0.50 | 0 |" in text, text
        assert "| depthwise | 1 | 25.00 | 25.0 | 1 | 10.00 | 1 |" in text, text
        assert "| `conv n1c32h56w56k32r3s3 p1 g32` | 200.0 | 20.0 | 10.00 |" in text, text
        assert "`conv n1c3h9w9k8r3s3`: refused" in text, text
        one = run([files["n2"], files["t2"]])
        assert "# conv sweep: 1 shapes timed, 0 not" in one, one
    print("test_sweep_report: ok")


if __name__ == "__main__":
    main()
