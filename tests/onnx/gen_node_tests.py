#!/usr/bin/env python3
"""gen_node_tests.py OUT_DIR: write ONNX's node conformance tests (OUT_DIR/node/test_*/model.onnx
with test_data_set_*/input_*.pb and output_*.pb) from the installed onnx package.

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
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(onnx.__version__ + "\n")
    n = len([d for d in os.listdir(os.path.join(out, "node")) if d.startswith("test_")])
    print(f"gen_node_tests: {n} node tests of onnx {onnx.__version__} in {out}/node")
    return 0


if __name__ == "__main__":
    sys.exit(main())
