#!/usr/bin/env bash
# Call 1 of the evening session (nvidia-h200-x2, repo root, .deps carried): build the GPU
# tests and benchmarks once, run the new GPU tests (devices, side stream) and the network
# and stream tests, the differential tester as CUDA graphs, then gpu_run.sh's devices and
# side stages on the same build.
set -u
R=$OUT
B=/tmp/nnop-build
export NNOP_BUILD_TARGETS="test_gpu_branches test_gpu_devices test_gpu_network test_gpu_stream bench_resnet nnop-bench difftest prof_resnet"
NNOP_DEADLINE=1 tools/gpu_run.sh build-only >"$R/build.txt" 2>&1
echo "build rc $? at $(date -u +%T)"; grep -E "error|nnop:" "$R/build.txt" | head
mv "$R/logs.tgz" "$R/build_logs.tgz"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi -L
for t in test_gpu_devices test_gpu_branches test_gpu_stream test_gpu_network; do
    NNOP_REQUIRE_GPU=1 timeout 150 "$B/tests/$t" >"$R/$t.txt" 2>&1
    echo "$t rc $? $(grep -E 'PASSED|FAILED' "$R/$t.txt" | tail -2 | tr '\n' ' ')"
done
grep -E "side stream" "$R/test_gpu_branches.txt" | head -3
grep -E "^\[  FAILED|Error|error" "$R"/test_gpu_*.txt | head -20
for j in 0 1 2 3 4 5 6 7; do
    NNOP_REQUIRE_GPU=1 timeout 150 "$B/tests/difftest/difftest" --backend cuda --seed $((1 + j)) \
        --count 100 --new-ops --cuda-graph >"$R/dt_graph_$j.txt" 2>&1 &
done
wait
grep -hE "^FAIL|cases in" "$R"/dt_graph_*.txt | head -20
echo "== at $(date -u +%T)"
NNOP_SKIP_BUILD=1 NNOP_DEADLINE=${CALL_DEADLINE:-300} tools/gpu_run.sh devices,side
