#!/usr/bin/env bash
# Call 2 (nvidia-h200-x2, repo root, .deps carried): the whole build in build-gpu (kept on a
# warm machine for call 3), ResNet-50 data-parallel on both GPUs with the graph cache, then
# every ctest test with NNOP_REQUIRE_GPU=1 (the difftest sets run in call 3).
set -u
R=$OUT
export NNOP_BUILD_DIR=$PWD/build-gpu
tools/gpu_run.sh devices >"$R/devices.txt" 2>&1
echo "devices rc $?"; grep -vE "^--|^  " "$R/devices.txt" | tail -22
mv "$R/logs.tgz" "$R/logs_devices.tgz"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
echo "== ctest at $(date -u +%T)"
(cd build-gpu && NNOP_REQUIRE_GPU=1 timeout "${CTEST_TIMEOUT:-240}" ctest -j4 --output-on-failure --timeout 200 \
    -E '^difftest[.]gpu' >"$R/ctest.log" 2>&1)
echo "ctest rc $?"
grep -E "tests passed|tests failed|Failed|\(Failed\)|Timeout|\(Skipped\)" "$R/ctest.log" | tail -30
grep -E "test_gpu_(devices|branches)|gpu[.](devices|branches|network)" "$R/ctest.log" | head
echo "== end at $(date -u +%T)"
rm -f "$R/gpu_run.log"
