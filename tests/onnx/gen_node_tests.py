#!/usr/bin/env python3
"""gen_node_tests.py OUT_DIR: write ONNX's node conformance tests (OUT_DIR/node/test_*/model.onnx
with test_data_set_*/input_*.pb and output_*.pb) from the installed onnx package, and its light
model-zoo networks (OUT_DIR/light/test_<net>/, same layout: the package's model and expected
output, with the input its backend test runner feeds them: arange(n) / n in the input's shape).

`python3 -m onnx.backend.test.cmd_tools generate-data -o DIR` writes them with onnx < 1.19;
newer releases write only the model tests there, so this calls the same writer with the node
test cases (onnx.backend.test.case.node.collect_testcases) in their place. Exits 77 (ctest's
skip) without the onnx package."""
import argparse
import os
import sys
import warnings

try:
    import onnx.backend.test.case.node as node_test
    import onnx
    import onnx.backend.test.cmd_tools as cmd_tools
except ImportError as e:
    print(f"gen_node_tests: the onnx Python package is not installed ({e}): skipped")
    sys.exit(77)


def write_index(node_dir):
    """index.txt: one line per test, "name data_sets inputs outputs", for the C runner (which
    lists no directories, so it stays portable C11)."""
    lines = []
    for name in sorted(os.listdir(node_dir)):
        d = os.path.join(node_dir, name)
        if not name.startswith("test_") or not os.path.isfile(os.path.join(d, "model.onnx")):
            continue
        sets = sorted(s for s in os.listdir(d) if s.startswith("test_data_set_"))
        if not sets:
            continue
        files = os.listdir(os.path.join(d, sets[0]))
        nin = len([f for f in files if f.startswith("input_")])
        nout = len([f for f in files if f.startswith("output_")])
        lines.append(f"{name} {len(sets)} {nin} {nout}\n")
    with open(os.path.join(node_dir, "index.txt"), "w", encoding="utf-8") as f:
        f.writelines(lines)


def write_light(out):
    """onnx/backend/test/data/light/light_<net>.onnx and light_<net>_output_0.pb as tests."""
    import shutil

    import numpy as np
    from onnx import numpy_helper

    src = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    dst = os.path.join(out, "light")
    if not os.path.isdir(src):
        return 0
    os.makedirs(dst, exist_ok=True)
    n = 0
    for f in sorted(os.listdir(src)):
        if not f.startswith("light_") or not f.endswith(".onnx"):
            continue
        net = f[len("light_"):-len(".onnx")]
        expected = os.path.join(src, f"light_{net}_output_0.pb")
        if not os.path.isfile(expected):
            continue
        d = os.path.join(dst, f"test_{net}")
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds, exist_ok=True)
        shutil.copyfile(os.path.join(src, f), os.path.join(d, "model.onnx"))
        shutil.copyfile(expected, os.path.join(ds, "output_0.pb"))
        m = onnx.load(os.path.join(src, f))
        inits = {i.name for i in m.graph.initializer}
        k = 0
        for x in m.graph.input:
            if x.name in inits:
                continue
            shape = tuple(dd.dim_value if dd.HasField("dim_value") else 1
                          for dd in x.type.tensor_type.shape.dim)
            count = int(np.prod(shape))
            value = (np.arange(count).reshape(shape) / count).astype(np.float32)
            with open(os.path.join(ds, f"input_{k}.pb"), "wb") as fo:
                fo.write(numpy_helper.from_array(value, x.name).SerializeToString())
            k += 1
        n += 1
    write_index(dst)
    return n


def main():
    out = sys.argv[1]
    stamp = os.path.join(out, "node", ".onnx_version")
    try:
        with open(stamp, encoding="utf-8") as f:
            if f.read().strip() == onnx.__version__:
                print(f"gen_node_tests: {out}/node is up to date (onnx {onnx.__version__})")
                return 0
    except OSError:
        pass
    warnings.simplefilter("ignore")
    cmd_tools.model_test.collect_testcases = node_test.collect_testcases
    cmd_tools.generate_data(argparse.Namespace(output=out))
    write_index(os.path.join(out, "node"))
    nets = write_light(out)
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(onnx.__version__ + "\n")
    n = len([d for d in os.listdir(os.path.join(out, "node")) if d.startswith("test_")])
    print(f"gen_node_tests: {n} node tests of onnx {onnx.__version__} in {out}/node, "
          f"{nets} light networks in {out}/light")
    return 0


if __name__ == "__main__":
    sys.exit(main())
