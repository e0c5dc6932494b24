#!/usr/bin/env bash
# Call 2 (2026-12-05, fifth session), repo root, .deps carried: the norm kernel with bf16 read as
# 32-bit words (elem) and packed in pairs (pack), no spills in any instance (ptxas), the next
# position's x loaded before this one's math (NNOP_NORM_PREFETCH, on in the build): the GPU tests
# that run norms, epilogues, depthwise and pooling, the differential tester's fixed-seed sets
# (call 1 ran out of time before them) with memcheck, the whole bench_kernels table, and
# exp_norm.cu: B2 = gelu_16 without prefetch, D2 = gelu_16 with it, E2 = erff GELU with it.
set -u
T0=$(date +%s)
left() { echo $((${CALL_BUDGET:-500} - ($(date +%s) - T0))); }
R=$OUT; B=$PWD/build-gpu; E=bench/results/2026-12-05-h100-b
mkdir -p "$R/x"
F="-std=c++17 -O3 -arch=sm_90 -DNORM_FILE=\"cuda/kernels/norm.cu\""
nvcc $F -Iinclude -Isrc -DNNOP_NORM_PREFETCH=0 $E/exp_norm.cu -o /tmp/expB2 > /tmp/expB2.txt 2>&1 &
nvcc $F -Iinclude -Isrc -DNNOP_NORM_PREFETCH=1 $E/exp_norm.cu -o /tmp/expD2 > /tmp/expD2.txt 2>&1 &
nvcc $F -I$E/exact -Iinclude -Isrc -DNNOP_NORM_PREFETCH=1 $E/exp_norm.cu -o /tmp/expE2 > /tmp/expE2.txt 2>&1 &
export NNOP_BUILD_DIR=$B
export NNOP_BUILD_TARGETS="test_gpu_new_ops test_gpu_regressions test_gpu_conv test_gpu_network test_gpu_pool bench_kernels difftest vision_net"
NNOP_DEADLINE=1 tools/gpu_run.sh build-only >"$R/x/build.txt" 2>&1
echo "build rc $? at $(date -u +%T), $(left) s left"; grep -E "error|nnop:" "$R/x/build.txt" | head
wait
rm -f "$R/logs.tgz" "$R/gpu_run.log"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in B2 D2 E2; do echo "== exp $v"; tail -3 /tmp/exp$v.txt; timeout 40 /tmp/exp$v; done
(cd "$B" && NNOP_REQUIRE_GPU=1 timeout 200 ctest -j6 --output-on-failure --timeout 190 \
    -R '^gpu[.](new_ops|regressions|conv|network|pool)$|^example[.]vision' >"$R/ctest.log" 2>&1)
echo "ctest rc $? at $(date -u +%T), $(left) s left"
grep -E "tests passed|tests failed|\(Failed\)|Timeout|\(Skipped\)|Not Run" "$R/ctest.log" | tail -20
timeout 90 "$B/bench/bench_kernels" >"$R/bench_kernels.md" 2>&1
grep -E "^\| [a-z]|lowest" "$R/bench_kernels.md" | cut -c1-130
L=$(left)
[ "$L" -gt 40 ] && NNOP_SKIP_BUILD=1 NNOP_SKIP_CTEST=1 NNOP_DEADLINE=$((L - 30)) \
    NNOP_DIFFTEST_COUNT=400 NNOP_DIFFTEST_NEW_COUNT=400 NNOP_DIFFTEST_SPECIAL_COUNT=400 \
    NNOP_DIFFTEST_GRAPH_COUNT=400 NNOP_DIFFTEST_MEMCHECK_COUNT=16 NNOP_MEMCHECK_TIMEOUT=60 \
    timeout "$L" tools/gpu_run.sh tests >"$R/x/tests.txt" 2>&1
echo "tests rc $? at $(date -u +%T)"
grep -E "^difftest|ERROR SUMMARY|FAIL" "$R/x/tests.txt" | head -12
mv "$R/logs.tgz" "$R/x/tests_logs.tgz" 2>/dev/null; rm -f "$R/gpu_run.log"
tar czf "$R/call2.tgz" -C "$R/x" . && rm -rf "$R/x"
echo "== end $(date -u +%T)"
