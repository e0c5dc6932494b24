#!/usr/bin/env bash
# The next GPU calls (repo root, .deps carried: carry [".deps"]; written 2026-12-07, ninth
# session). `bench/next-gpu-call.sh 1` on a fresh machine: the Release build (every test, the
# ONNX importer with the carried protobuf-c), every unit and GPU test with NNOP_REQUIRE_GPU=1,
# the examples and regression repros, the engine example on CUDA, the ONNX node and light-zoo
# tests on the CUDA backend (f32, f16). `bench/next-gpu-call.sh 2` on the same warm machine
# (the build in build-gpu kept): the random graphs with the GPU's intermediates poisoned and
# every plan rebound (NNOP_DEBUG_POISON=1, difftest --rebind; tiny spatial graphs, issue 43),
# the own-kernel table, then tools/gpu_test.sh's fixed-seed difftest sets with the time left.
# Stage outputs gather in /tmp/nx and are tarred into $OUT/next.tgz after every stage, so that
# a call cut at the device's 600 s still returns them (the device returns at most 8 files).
set -u
T0=$(date +%s)
PART=${1:-1}
R=$OUT
B=$PWD/build-gpu
X=/tmp/nx
rm -rf "$X" && mkdir -p "$X"
ck() { tar czf "$R/next.tgz" -C "$X" . 2>/dev/null; }
at() { echo "$* at $(($(date +%s) - T0)) s"; }
export NNOP_BUILD_DIR=$B
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PATH=/tmp/deps/usr/bin:$PATH
if [ "$PART" = 1 ]; then
    tools/gpu_test.sh build >"$X/build.txt" 2>&1
    at "build rc $?"; grep -E "error|nnop:" "$X/build.txt" | head -12; ck
    rm -f "$R/logs.tgz" "$R/gpu_test.log"
    (cd "$B" && NNOP_REQUIRE_GPU=1 timeout 270 ctest -j6 --output-on-failure --timeout 250 \
        -R '^unit[.]|^gpu[.]|^example[.]|^difftest[.]regress' >"$X/ctest.txt" 2>&1)
    at "ctest rc $?"
    grep -E "tests passed|tests failed|\(Failed\)|Timeout|\(Skipped\)|Not Run|runs of" "$X/ctest.txt" | tail -24; ck
    timeout 60 "$B/examples/engine" >"$X/engine.txt" 2>&1
    at "engine rc $?"; grep -vE "^  log" "$X/engine.txt" | tail -4; ck
    (cd "$B" && NNOP_REQUIRE_GPU=1 timeout 200 ctest -j6 --output-on-failure --timeout 190 \
        -R '^onnx[.](generate|node_cuda|light_cuda)' >"$X/onnx.txt" 2>&1)
    at "onnx ctest rc $?"
    grep -E "tests passed|tests failed|\(Failed\)|Timeout|Not Run|^[0-9]+ passed|passed,|refused" "$X/onnx.txt" | tail -14
    cp "$B"/tests/onnx/node_cuda_*.md "$X/" 2>/dev/null; ck
else
    NNOP_DEBUG_POISON=1 timeout 150 "$B/tests/difftest/difftest" --seed 4545 --backend cuda --tiny \
        --rebind --time-limit 140 --repro-dir "$X/rep" >"$X/tiny_poison.txt" 2>&1
    at "tiny poisoned rc $?"; tail -10 "$X/tiny_poison.txt" | head -8; ck
    NNOP_DEBUG_POISON=1 timeout 80 "$B/tests/difftest/difftest" --seed 4646 --backend cuda --rebind \
        --new-ops --time-limit 70 --repro-dir "$X/rep" >"$X/new_ops_poison.txt" 2>&1
    at "new-ops poisoned rc $?"; tail -10 "$X/new_ops_poison.txt" | head -8; ck
    timeout 100 "$B/bench/bench_kernels" >"$X/bench_kernels.md" 2>&1
    at "bench_kernels rc $?"; grep -E "^\| [a-z]|lowest" "$X/bench_kernels.md" | cut -c1-150; ck
    LEFT=$((${CALL_TOTAL:-560} - ($(date +%s) - T0)))
    [ "$LEFT" -gt 30 ] && NNOP_SKIP_BUILD=1 NNOP_SKIP_CTEST=1 NNOP_DEADLINE=$((LEFT - 60)) \
        NNOP_DIFFTEST_COUNT=504 NNOP_DIFFTEST_NEW_COUNT=504 NNOP_DIFFTEST_SPECIAL_COUNT=504 \
        NNOP_DIFFTEST_GRAPH_COUNT=504 NNOP_DIFFTEST_MEMCHECK_COUNT=16 NNOP_MEMCHECK_TIMEOUT=60 \
        timeout "$LEFT" tools/gpu_test.sh tests >"$X/tests.txt" 2>&1
    at "gpu_test.sh tests rc $?"
    grep -E "^difftest|ERROR SUMMARY|FAIL|skipped" "$X/tests.txt" | head -14
    mv "$R/logs.tgz" "$X/tests_logs.tgz" 2>/dev/null
    rm -f "$R/gpu_test.log"
fi
at "== end"
ck
