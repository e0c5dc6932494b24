#!/usr/bin/env bash
# The next GPU call (nvidia-h200, repo root, .deps carried; call 2 of 2026-12-05, about 900 s
# of device time left): the norm kernel holding x as loaded, 3 blocks a SM for its epilogue
# instance, against the GPU test programs that run norms (and the regression, network and
# pooling ones), the four vision networks against PyTorch, the exports check and the
# differential tester's regression repros; the layer-norm rows of bench_kernels; then, while
# time is left, ConvNeXt-T (the network with layer norm + GELU) beside torch.compile.
set -u
T0=$(date +%s)
left() { echo $((${CALL_BUDGET:-540} - ($(date +%s) - T0))); }
R=$OUT
B=$PWD/build-gpu
mkdir -p "$R/x"
export NNOP_BUILD_DIR=$B
export NNOP_BUILD_TARGETS="test_gpu_new_ops test_gpu_regressions test_gpu_network test_gpu_pool vision_net bench_kernels nnop-bench difftest exports_check $(ls tests/difftest/regress/*.c | xargs -n1 basename | sed 's/[.]c$//; s/^/difftest_/' | tr '\n' ' ')"
# LEAN=1 (about 500 s of device time left): the norm tests and the layer-norm rows only
if [ "${LEAN:-0}" = 1 ]; then
    NNOP_BUILD_TARGETS="test_gpu_new_ops bench_kernels"
    CALL_BUDGET=${CALL_BUDGET:-330}
fi
NNOP_DEADLINE=1 tools/gpu_run.sh build-only >"$R/x/build.txt" 2>&1
echo "build rc $? at $(date -u +%T), $(left) s left"; grep -E "error|nnop:" "$R/x/build.txt" | head
rm -f "$R/logs.tgz" "$R/gpu_run.log"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
TESTS='^gpu[.](new_ops|regressions|network|pool)|^example[.]vision|^unit[.]exports$|^difftest[.]regress'
[ "${LEAN:-0}" = 1 ] && TESTS='^gpu[.]new_ops'
(cd "$B" && NNOP_REQUIRE_GPU=1 timeout 200 ctest -j6 --output-on-failure --timeout 190 -R "$TESTS" \
    >"$R/ctest.log" 2>&1)
echo "ctest rc $? at $(date -u +%T), $(left) s left"
grep -E "tests passed|tests failed|\(Failed\)|Timeout|\(Skipped\)|Not Run" "$R/ctest.log" | tail -20
NNOP_BENCH_ONLY="layer norm" timeout 60 "$B/bench/bench_kernels" >"$R/bench_ln.md" 2>&1
grep -E "layer norm" "$R/bench_ln.md" | cut -c1-150
L=$(left)
[ "$L" -gt 60 ] && [ "${LEAN:-0}" != 1 ] && NNOP_SKIP_BUILD=1 NNOP_VISION_NETS=convnext_tiny NNOP_DEADLINE=$((L - 20)) \
    timeout "$L" tools/gpu_run.sh vision >"$R/x/vision.txt" 2>&1
echo "vision rc $? at $(date -u +%T)"
grep -E "NNOP_NET|TORCH_|^\|" "$R/x/vision.txt" | head -20
echo "== end at $(date -u +%T)"
mv "$R/logs.tgz" "$R/x/vision_logs.tgz" 2>/dev/null
rm -f "$R/gpu_run.log"
tar czf "$R/next.tgz" -C "$R/x" . && rm -rf "$R/x"
