"""test_launch_steps.py: bench/launch_steps.py matches launches to an nnop plan's partitions
(tests/bench/launch_steps_profile.md): a stem's channel pad goes with its cuDNN step, a
global average pool's two kernels with its step, a depthwise step is not taken for an
epilogue (its description names a fused epilogue), a run of epilogue steps with a tail launch
is matched as a whole (and the result says so), a flatten that is a view launched nothing, and
the times add up to the forward's; each kind's bytes (NNOP_LOG's least moved) give its GB/s
and its share of the copy bandwidth (the file's, or --copy). tests/bench/launch_steps_gate.md:
a squeeze-excitation gate step takes its launches (with the pool's kernel, when it pools) and
the lean one-op epilogue kernel counts as an epilogue."""
import contextlib
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import launch_steps  # noqa: E402


def main():
    sets = launch_steps.parse(os.path.join(HERE, "launch_steps_profile.md"))
    assert len(sets) == 1, sets
    parts, launches, title = sets[0]
    assert title == "nnop tiny batch 2", title
    assert len(parts) == 11 and len(launches) == 13, (len(parts), len(launches))
    kinds, exact = launch_steps.match(parts, launches)
    assert not exact  # act + mul: 2 steps, 3 launches
    by_nodes = {(k[0], k[2]): v for k, v in kinds.items()}
    assert by_nodes[("conv+batchnorm", "-")] == [1, 2, 5.0, 1000000], by_nodes
    assert by_nodes[("act", "conv+batchnorm")] == [1, 1, 2.0, 2000000], by_nodes
    assert by_nodes[("conv+batchnorm+act", "act")] == [1, 1, 5.0, 3000000], by_nodes
    assert by_nodes[("global_avg_pool", "conv+batchnorm+act")] == [1, 2, 4.0, 500000], by_nodes
    assert by_nodes[("conv+bias", "global_avg_pool")] == [1, 1, 2.0, 100000], by_nodes
    assert by_nodes[("conv+bias", "conv+bias")] == [1, 1, 2.5, 100000], by_nodes
    assert by_nodes[("act + mul", "conv+bias")] == [2, 3, 4.0, 100000], by_nodes
    assert by_nodes[("global_avg_pool", "mul")] == [1, 1, 2.0, 8000], by_nodes
    assert by_nodes[("flatten", "global_avg_pool")] == [1, 0, 0.0, 0], by_nodes
    assert by_nodes[("linear", "flatten")] == [1, 1, 3.0, 5000], by_nodes
    assert abs(sum(v[2] for v in kinds.values()) - sum(us for _, us in launches)) < 1e-9
    assert sum(v[0] for v in kinds.values()) == len(parts)
    assert sum(v[1] for v in kinds.values()) == len(launches)
    # the table: 2 MB in 2.0 us is 1000 GB/s, a quarter of the file's 4000 GB/s copy, half
    # of a 2000 GB/s one given with --copy
    for extra, share in (([], "25%"), (["--copy", "2000"], "50%")):
        sys.argv = ["launch_steps.py", os.path.join(HERE, "launch_steps_profile.md")] + extra
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            launch_steps.main()
        row = [r for r in out.getvalue().splitlines()
               if r.startswith("| act | [own kernel: epilogue]")]
        assert len(row) == 1 and row[0].endswith(f"| 2.0 | 1000 | {share} |"), row
    gate()
    print("launch_steps: ok")


def gate():
    sets = launch_steps.parse(os.path.join(HERE, "launch_steps_gate.md"))
    assert len(sets) == 1, sets
    parts, launches, title = sets[0]
    assert len(parts) == 5 and len(launches) == 7, (len(parts), len(launches))
    kinds, exact = launch_steps.match(parts, launches)
    assert exact
    by_nodes = {k[0]: v for k, v in kinds.items()}
    assert by_nodes["global_avg_pool+conv+bias+act+conv+bias+act"] == [1, 3, 8.0, 1500000], by_nodes
    assert by_nodes["conv+bias+act+conv+bias+act"] == [1, 1, 4.0, 1000], by_nodes
    muls = sorted(v for k, v in kinds.items() if k[0] == "mul")
    assert muls == [[1, 1, 1.0, 3000], [1, 1, 2.0, 3000000]], muls


if __name__ == "__main__":
    main()
