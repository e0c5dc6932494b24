#!/usr/bin/env bash
# gpu_common.sh: what the GPU machine's scripts share, sourced by tools/gpu_test.sh and
# bench/gpu_bench.sh after they set WHAT (their comma-separated modes): the deadline and mode
# tests (asked, wants), the logs (a folder tarred into $OUT, also when a `timeout` ends the
# script), the machine's versions, CMocka and cJSON, and the Release build (sm_90) in
# NNOP_BUILD_DIR (default /tmp/nnop-build). Environment:
#   NNOP_DEADLINE=S       no stage starts once S seconds have passed (the device's limit is
#                         600 s a command; a stage cut there leaves nothing after it)
#   NNOP_SKIP_BUILD=1     use the build already in NNOP_BUILD_DIR
#   NNOP_BUILD_TARGETS=.. build only these targets
#   NNOP_CUDNN_ROOT=DIR   the cuDNN to build against (default /usr, the system package)
# CMocka and cJSON come from .deps/*.deb where that folder exists (the device machine has no
# network: `mkdir -p .deps && cd .deps && apt-get download libcmocka0 libcmocka-dev libcjson1
# libcjson-dev libprotobuf-c1 libprotobuf-c-dev protobuf-c-compiler libprotoc32 libprotobuf32`,
# carried with the tree; protobuf-c builds the ONNX importer), else from the system
# (apt-get install libcmocka-dev libcjson-dev libprotobuf-c-dev protobuf-c-compiler).
# asked NAME: whether NAME is among the comma-separated modes; wants NAME: that, or all.
# NNOP_DEADLINE=S: no stage starts once S seconds have passed (the device's limit is 600 s a
# command, and a stage cut short there leaves nothing after it; say which were skipped).
START=$(date +%s)
asked() {
    if [ -n "${NNOP_DEADLINE:-}" ] && [ $(($(date +%s) - START)) -ge "$NNOP_DEADLINE" ]; then
        case ",$WHAT," in *",$1,"*) echo "== $1: skipped, past NNOP_DEADLINE" ;; esac
        return 1
    fi
    case ",$WHAT," in *",$1,"*) return 0 ;; esac
    return 1
}
wants() { asked "$1" || asked all; }
# Stages run in this script's fixed order, whatever the order asked: say which will run (read
# from the script's own `if ... asked NAME` lines), so that a deadline cuts the ones expected
# (a call that asked newops,kernels,vision lost kernels to NNOP_DEADLINE behind vision)
order_note() {
    local s run=""
    for s in $(sed -nE 's/^if .*(asked|wants) ([a-z0-9-]+); then.*/\2/p' "$0"); do
        case ",$WHAT," in *",$s,"*) run="$run $s" ;; esac
    done
    echo "== stages, in the order they run:${run:- all of the default set}"
}
# the device tool returns at most 8 files from $OUT: logs go to one folder, tarred at the end
RESULTS=${OUT:-/tmp/nnop-out}
OUT=/tmp/nnop-logs
BUILD=${NNOP_BUILD_DIR:-/tmp/nnop-build}
LOG_NAME=$(basename "$0" .sh).log
# each call's logs its own: on a warm machine /tmp keeps the last call's (whose ctest line the
# summary of a difftest-collect call had printed as its own)
rm -rf "$OUT" && mkdir -p "$OUT" "$RESULTS"
exec > >(tee "$OUT/$LOG_NAME") 2>&1
# the logs come back also when an outer `timeout` ends the script early
finish() {
    tar czf "$RESULTS/logs.tgz" -C "$OUT" . 2>/dev/null
    cp "$OUT/$LOG_NAME" "$RESULTS/" 2>/dev/null
}
trap finish EXIT
# the logs so far, after every stage: bash runs the TERM trap only once its foreground child
# ends, so a run stopped at the device's limit inside a long child returned no files at all
checkpoint() { finish; }
trap 'echo "== stopped by a signal"; exit 143' TERM INT

order_note
echo "== machine"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
nvcc --version | tail -1
echo "== deps"
DEPS_ARGS=()
if ls .deps/*.deb >/dev/null 2>&1; then
    mkdir -p /tmp/deps && for f in .deps/*.deb; do dpkg -x "$f" /tmp/deps; done
    export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
    # protoc-c (protobuf-c-compiler, libprotoc32, libprotobuf32) for the ONNX importer
    export PATH=/tmp/deps/usr/bin:$PATH
    DEPS_ARGS=(-DCMAKE_PREFIX_PATH=/tmp/deps/usr
        -Dcmocka_DIR=/tmp/deps/usr/lib/x86_64-linux-gnu/cmake/cmocka
        -DCMOCKA_INCLUDE_DIR=/tmp/deps/usr/include
        -DCMOCKA_LIBRARIES=/tmp/deps/usr/lib/x86_64-linux-gnu/libcmocka.so
        -DCJSON_ROOT=/tmp/deps/usr)
elif [ ! -f /usr/include/cmocka.h ]; then
    # without them the build fails minutes later on cmocka.h: say so now
    echo "no .deps/*.deb and no system CMocka: apt-get install libcmocka-dev libcjson-dev, or" \
        "run 'mkdir -p .deps && cd .deps && apt-get download libcmocka0 libcmocka-dev libcjson1 libcjson-dev' here and carry .deps"
    exit 1
fi

# NNOP_SKIP_BUILD=1: use the build already in $BUILD (a later call on the same warm machine,
# with NNOP_BUILD_DIR inside the repo: the device keeps ignored build folders between calls)
if [ "${NNOP_SKIP_BUILD:-0}" = 1 ] && [ -x "$BUILD/tests/difftest/difftest" ]; then
    echo "== build: the one in $BUILD, kept from the last call"
else
echo "== configure and build"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCUDNN_ROOT="${NNOP_CUDNN_ROOT:-/usr}" \
    ${DEPS_ARGS[@]+"${DEPS_ARGS[@]}"} \
    -DNNOP_CUDA_ARCHITECTURES=90 >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
grep -E "nnop:|CUDA|cuDNN" "$OUT/configure.log" | head -5
# NNOP_BUILD_TARGETS="a b": only these targets (a quick call that runs a few programs)
if [ -n "${NNOP_BUILD_TARGETS:-}" ]; then
    # shellcheck disable=SC2086 # the targets are words
    cmake --build "$BUILD" -j16 --target $NNOP_BUILD_TARGETS >"$OUT/build.log" 2>&1 ||
        { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }
elif ! cmake --build "$BUILD" -j16 >"$OUT/build.log" 2>&1; then
    grep -E "error|Error" "$OUT/build.log" | head -40
    echo "full build failed: building the GPU tests and the benchmark alone"
    cmake --build "$BUILD" -j16 --target test_gpu_conv test_gpu_network test_gpu_pool >>"$OUT/build.log" 2>&1 || exit 1
    cmake --build "$BUILD" -j16 --target bench_conv bench_kernels probe_knobs >>"$OUT/build.log" 2>&1 || true
fi
checkpoint
grep -E "warning" "$OUT/build.log" | head -10
fi

TEST_RC=0
