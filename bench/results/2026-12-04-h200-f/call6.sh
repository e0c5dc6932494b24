#!/usr/bin/env bash
# Call 6 (nvidia-h200-x2, repo root, .deps carried): the vector layer-norm kernel on a grid
# of resident blocks only: its bench_kernels rows, the GPU norm tests, difftest --new-ops.
set -u
R=$OUT
B=/tmp/nnop-build
export NNOP_BUILD_TARGETS="bench_kernels test_gpu_new_ops difftest"
NNOP_DEADLINE=1 tools/gpu_run.sh build-only >"$R/build.txt" 2>&1
echo "build rc $? at $(date -u +%T)"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
mkdir -p "$R/x"
NNOP_BENCH_ONLY="layer norm" timeout 60 "$B/bench/bench_kernels" >"$R/x/bench_ln.md" 2>&1
grep -E "layer norm" "$R/x/bench_ln.md" | cut -c1-160
NNOP_REQUIRE_GPU=1 timeout 120 "$B/tests/test_gpu_new_ops" >"$R/x/new_ops.txt" 2>&1
echo "test_gpu_new_ops rc $? $(grep -E 'PASSED|FAILED' "$R/x/new_ops.txt" | tail -2 | tr '\n' ' ')"
grep -E "^\[  FAILED" "$R/x/new_ops.txt" | head
for j in 0 1 2 3 4 5 6 7; do
    NNOP_REQUIRE_GPU=1 timeout 60 "$B/tests/difftest/difftest" --backend cuda --seed $((11 + j)) \
        --count 60 --new-ops >"$R/x/dt_$j.txt" 2>&1 &
done
wait
grep -hE "^FAIL|cases in" "$R"/x/dt_*.txt | head -12
tar czf "$R/call6.tgz" -C "$R/x" . && rm -rf "$R/x" "$R/logs.tgz" "$R/gpu_run.log"
