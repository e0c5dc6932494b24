#!/usr/bin/env bash
# Call 3 (2026-12-05, fourth session), repo root, .deps carried: the layer-norm vector kernel
# with one instance per lone activation (and the generic chain at 2 blocks a SM, x loaded
# before the barrier) against the GPU tests that run norms, epilogues and depthwise convs, the
# differential tester's issue-15 fixed-seed set, bench_kernels' layer-norm rows, and
# exp_norm.cu's none/ReLU/GELU rows (the landed kernel, norm_head.cu, beside the new one).
set -u
T0=$(date +%s)
left() { echo $((${CALL_BUDGET:-480} - ($(date +%s) - T0))); }
R=$OUT; B=$PWD/build-gpu; E=bench/results/2026-12-05-h100
mkdir -p "$R/x"
I="-std=c++17 -O3 -arch=sm_90 -Iinclude -Isrc"
nvcc $I -DNORM_FILE='"norm_head.cu"' -I$E $E/exp_norm.cu -o /tmp/expA > "$R/x/expA.txt" 2>&1 &
nvcc $I -DNORM_FILE='"cuda/kernels/norm.cu"' $E/exp_norm.cu -o /tmp/expN > "$R/x/expN.txt" 2>&1 &
export NNOP_BUILD_DIR=$B
export NNOP_BUILD_TARGETS="test_gpu_new_ops test_gpu_regressions test_gpu_conv test_gpu_network bench_kernels difftest"
NNOP_DEADLINE=1 tools/gpu_run.sh build-only >"$R/x/build.txt" 2>&1
echo "build rc $? at $(date -u +%T), $(left) s left"; grep -E "error|nnop:" "$R/x/build.txt" | head
wait
rm -f "$R/logs.tgz" "$R/gpu_run.log"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
(cd "$B" && NNOP_REQUIRE_GPU=1 timeout 200 ctest -j6 --output-on-failure --timeout 190 \
    -R '^gpu[.](new_ops|regressions|conv|network)' >"$R/ctest.log" 2>&1)
echo "ctest rc $? at $(date -u +%T), $(left) s left"
grep -E "tests passed|tests failed|\(Failed\)|Timeout|\(Skipped\)|Not Run" "$R/ctest.log" | tail -20
for j in 1 2 3 4; do
  NNOP_REQUIRE_GPU=1 timeout 70 "$B/tests/difftest/difftest" --backend cuda --seed $j --count 100 --new-ops \
      > "$R/x/difftest_$j.log" 2>&1 &
done
wait
tail -n 2 "$R"/x/difftest_*.log
NNOP_BENCH_ONLY="layer norm" timeout 60 "$B/bench/bench_kernels" >"$R/bench_ln.md" 2>&1
grep -E "layer norm|lowest" "$R/bench_ln.md" | cut -c1-150
echo "== expA (landed)"; timeout 60 /tmp/expA
echo "== expN (new)"; timeout 60 /tmp/expN
echo "== end at $(date -u +%T)"
rm -f "$R/gpu_run.log" "$R/logs.tgz"
tar czf "$R/call3.tgz" -C "$R/x" . && rm -rf "$R/x"
