#!/usr/bin/env bash
# The next GPU call (repo root, .deps carried: carry [".deps"]; updated 2026-12-06, seventh
# session): every unit test, every GPU test program, the vision networks and ResNet-50 against
# PyTorch, the regression repros, then the random graphs with the GPU's intermediates poisoned
# and every plan rebound (NNOP_DEBUG_POISON=1, difftest --rebind; tiny spatial graphs and the
# issue-15 ops), the own-kernel table of bench_kernels, and with the time left (CALL_TOTAL,
# default 560 s) the fixed-seed difftest sets with memcheck.
# What the seventh session ran on the H100 (four calls): the concurrency storm (30 runs x 32
# threads, f16 NHWC and f32 NCHW), the GPU suite after the kernel split, 4,975 tiny-spatial
# graphs (0 wrong), cuDNN 9.0/9.5 subsets (they fail without the precompiled engines). What it
# did not run there and this call must show: NNOP_DEBUG_POISON and --rebind (written after
# the device time was spent; the outside tester's NaN class was not reproduced without them),
# the precompiled-engines note in a failed finalize's message, and tools/gpu_test.sh itself.
# Then: the ONNX tests on the CUDA backend (protobuf-c is not on the machine: carry
# libprotobuf-c1 and libprotobuf-c-dev debs in .deps, and pip's onnx there), `ctest -L onnx`.
# Written in the eighth session (no device time was left to it), first run here: gpu.allocator
# (the engine's device allocator serves every block, nnop_plan_memory's device_total equals it,
# a refusal names the bytes, nnop_plan_partition on a cuDNN step), examples/engine on the CUDA
# backend (device memory from its budget), and the out-of-memory messages of nnop__plan_alloc
# (gpu.alloc_failures).
set -u
T0=$(date +%s)
R=$OUT
B=$PWD/build-gpu
mkdir -p "$R/x"
export NNOP_BUILD_DIR=$B
export NNOP_BUILD_TARGETS="$(ls tests/gpu/test_gpu_*.c tests/unit/test_*.c | xargs -n1 basename | sed 's/\.c$//' | tr '\n' ' ') test_cudnn_loading nnop-doctor difftest vision_net resnet50 bench_kernels exports_check engine $(ls tests/difftest/regress/*.c | xargs -n1 basename | sed 's/[.]c$//; s/^/difftest_/' | tr '\n' ' ')"
tools/gpu_test.sh build >"$R/x/build.txt" 2>&1
echo "build rc $? at $(date -u +%T)"; grep -E "error|nnop:" "$R/x/build.txt" | head
rm -f "$R/logs.tgz" "$R/gpu_test.log"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
(cd "$B" && NNOP_REQUIRE_GPU=1 timeout 260 ctest -j4 --output-on-failure --timeout 240 \
    -R '^unit[.]|^gpu[.]|^example[.](vision|resnet50)|^difftest[.]regress' >"$R/ctest.log" 2>&1)
echo "ctest rc $? at $(date -u +%T)"
grep -E "tests passed|tests failed|\(Failed\)|Timeout|\(Skipped\)|Not Run" "$R/ctest.log" | tail -20
# issue 50: the example engine on the GPU, its two models' device memory from its budget
timeout 60 "$B/examples/engine" >"$R/x/engine.txt" 2>&1
echo "engine rc $? at $(date -u +%T)"; grep -vE "^  log" "$R/x/engine.txt" | tail -4
# issue 43: memory no step wrote reads as NaN, and each plan runs on a second set of buffers
NNOP_DEBUG_POISON=1 timeout 130 "$B/tests/difftest/difftest" --seed 4545 --backend cuda --tiny \
    --rebind --time-limit 120 --repro-dir "$R/x/rep" >"$R/x/tiny_poison.txt" 2>&1
echo "tiny poisoned rc $? at $(date -u +%T)"; tail -10 "$R/x/tiny_poison.txt" | head -8
NNOP_DEBUG_POISON=1 timeout 70 "$B/tests/difftest/difftest" --seed 4646 --backend cuda --rebind \
    --new-ops --time-limit 60 --repro-dir "$R/x/rep" >"$R/x/new_ops_poison.txt" 2>&1
echo "new-ops poisoned rc $? at $(date -u +%T)"; tail -10 "$R/x/new_ops_poison.txt" | head -8
timeout 120 "$B/bench/bench_kernels" >"$R/bench_kernels.md" 2>&1
grep -E "^\| [a-z]|lowest" "$R/bench_kernels.md" | cut -c1-150
LEFT=$((${CALL_TOTAL:-560} - ($(date +%s) - T0)))
[ "$LEFT" -gt 30 ] && NNOP_SKIP_BUILD=1 NNOP_SKIP_CTEST=1 NNOP_DEADLINE=${CALL_DEADLINE:-60} \
    NNOP_DIFFTEST_COUNT=504 NNOP_DIFFTEST_NEW_COUNT=504 NNOP_DIFFTEST_SPECIAL_COUNT=504 \
    NNOP_DIFFTEST_GRAPH_COUNT=504 NNOP_DIFFTEST_MEMCHECK_COUNT=16 NNOP_MEMCHECK_TIMEOUT=60 \
    timeout "$LEFT" tools/gpu_test.sh tests >"$R/x/tests.txt" 2>&1
echo "tests rc $? at $(date -u +%T)"
grep -E "^difftest|ERROR SUMMARY|FAIL" "$R/x/tests.txt" | head -12
echo "== end at $(date -u +%T)"
mv "$R/logs.tgz" "$R/x/tests_logs.tgz" 2>/dev/null
rm -f "$R/gpu_test.log"
tar czf "$R/next.tgz" -C "$R/x" . && rm -rf "$R/x"
