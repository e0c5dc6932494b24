#!/usr/bin/env bash
# Call 2 (nvidia-h200, repo root, .deps carried; after call 1 showed layer norm + GELU at 18% of
# the copy: the epilogue inlined, act_out shared): build what the norm-epilogue work touches in
# build-gpu (kept for a warm call 3), run the issue-15 GPU cases (with and without cuDNN's
# runtime-compiled norm engine), the differential tester on new ops (fused), and the
# layer-norm and pooling rows of bench_kernels.
set -u
R=$OUT
B=$PWD/build-gpu
mkdir -p "$R/x"
export NNOP_BUILD_DIR=$B
export NNOP_BUILD_TARGETS="test_gpu_new_ops test_gpu_network difftest bench_kernels"
NNOP_DEADLINE=1 tools/gpu_run.sh build-only >"$R/x/build.txt" 2>&1
echo "build rc $? at $(date -u +%T)"; grep -E "error|nnop:" "$R/x/build.txt" | head
rm -f "$R/logs.tgz" "$R/gpu_run.log"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NNOP_REQUIRE_GPU=1 timeout 200 "$B/tests/test_gpu_new_ops" >"$R/x/new_ops.txt" 2>&1
echo "new_ops rc $? $(grep -E 'PASSED|FAILED' "$R/x/new_ops.txt" | tail -2 | tr '\n' ' ')"
grep -E "^\[  FAILED|fail|differs" "$R/x/new_ops.txt" | head -20
grep -E "^(ln|gn|in|rms)_(vec_|chw_)?epi_(f16|f32)_nhwc:" "$R/x/new_ops.txt" | head -12
NNOP_REQUIRE_GPU=1 NNOP_NORM_RTC=1 NNOP_TEST_FILTER='*_epi_*' timeout 200 "$B/tests/test_gpu_new_ops" \
    >"$R/x/new_ops_rtc.txt" 2>&1
echo "new_ops_rtc rc $? $(grep -E 'PASSED|FAILED' "$R/x/new_ops_rtc.txt" | tail -2 | tr '\n' ' ')"
grep -E "^\[  FAILED|fail|differs|lacks|should" "$R/x/new_ops_rtc.txt" | head -12
grep -E "^(ln|ln_chw)_epi_f16_(nhwc|nchw):" -A3 "$R/x/new_ops_rtc.txt" | head -16
NNOP_REQUIRE_GPU=1 timeout 150 "$B/tests/test_gpu_network" >"$R/x/network.txt" 2>&1
echo "network rc $? $(grep -E 'PASSED|FAILED' "$R/x/network.txt" | tail -2 | tr '\n' ' ')"
echo "== difftest at $(date -u +%T)"
for j in 0 1 2 3 4 5 6 7; do
    NNOP_REQUIRE_GPU=1 timeout 150 "$B/tests/difftest/difftest" --backend cuda --seed $((201 + j)) \
        --count 125 --new-ops >"$R/x/dt_new_$j.txt" 2>&1 &
done
wait
grep -hE "^FAIL|cases" "$R"/x/dt_new_*.txt | head -12
echo "== bench_kernels at $(date -u +%T)"
NNOP_BENCH_ONLY="layer norm" timeout 90 "$B/bench/bench_kernels" >"$R/x/bench_ln.md" 2>&1
grep -E "layer norm|^\| kernel" "$R/x/bench_ln.md"
NNOP_BENCH_ONLY="max pool" timeout 90 "$B/bench/bench_kernels" >"$R/x/bench_pool.md" 2>&1
grep -E "C=3|stem" "$R/x/bench_pool.md"
echo "== end at $(date -u +%T)"
tar czf "$R/call2.tgz" -C "$R/x" . && rm -rf "$R/x"
