#!/usr/bin/env bash
# The next GPU call (repo root, .deps carried: carry [".deps"]; rewritten 2026-12-07, tenth
# session, for a session left with about 11 minutes of device time: one call, everything at
# once after the build). On a fresh machine:
#   1. the Release build (sm_90, every test, the ONNX importer with the carried protobuf-c);
#   2. at the same time, each under its own `timeout` (16 cores: cuDNN's runtime compilation is
#      CPU-bound, the GPU is mostly idle between kernels):
#      - every unit, GPU and example test and the difftest regressions, NNOP_REQUIRE_GPU=1
#        (a skipped GPU test fails);
#      - tiny-spatial random graphs (issue 43) with the GPU's intermediates poisoned and every
#        plan rebound (NNOP_DEBUG_POISON=1, difftest --tiny --rebind), in TINY_JOBS processes;
#      - the ONNX node, light-zoo and edge-shape tests on the CUDA backend, and with TV=1
#        torchvision's networks exported there against ONNX Runtime (issue 44), f32 and f16,
#        for ONNX_SECS seconds (default SECS).
#   3. with TV=1, after them: the same networks timed from ONNX and built by hand (issue 44:
#      fp16 NHWC, batch 8, CUDA graphs), ResNet-50 and MobileNetV3-Large, EfficientNet-B0 and
#      ConvNeXt-Tiny (nnop-bench --check --perf, one run: the outputs checked before timing).
#   4. with SERVE=1, last: the serving benchmark on ResNet-50 fp16 NHWC (issue 49): 8 threads of
#      batch-8 requests, 8 execution contexts of one plan against a plan per thread, with and
#      without CUDA graphs (nnop-bench --serve 8 --serve-batches 8); then requests of 1 to 32
#      on one batch_range plan against a plan per size per thread; PyTorch's peer after each
#      (bench/torch_serve.py: a CUDA graph per size per thread, the weights shared).
# Stage outputs gather in /tmp/nx and are tarred into $OUT/next.tgz after every stage, so that
# a call cut at its limit still returns them. SECS (default 210) bounds the parallel stage.
# CTEST_RE narrows the first ctest (default: unit, gpu, example and the difftest regressions);
# HARD (default 560) is the second at which the call must be over (the outer timeout).
# MINI=1 (a call with under 4 minutes to run): only the library and the GPU tests are built,
# and only ctest's gpu.* run (NNOP_REQUIRE_GPU=1), for SECS seconds (MINI_TARGETS and CTEST_RE
# narrow both).
set -u
T0=$(date +%s)
R=$OUT
B=$PWD/build-gpu
X=/tmp/nx
SECS=${SECS:-210}
TINY_JOBS=${TINY_JOBS:-5}
ONNX_SECS=${ONNX_SECS:-$SECS}
ONNX_TESTS='generate|edge_generate|node_cuda|light_cuda|edge_cuda'
[ "${TV:-0}" = 1 ] && ONNX_TESTS="$ONNX_TESTS|torchvision_generate|torchvision_cuda"
rm -rf "$X" && mkdir -p "$X"
ck() { tar czf "$R/next.tgz" -C "$X" . 2>/dev/null; }
at() { echo "$* at $(($(date +%s) - T0)) s"; }
export NNOP_BUILD_DIR=$B
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PATH=/tmp/deps/usr/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${MINI:-0}" = 1 ]; then
    export NNOP_BUILD_TARGETS="${MINI_TARGETS:-$(cd tests/gpu && ls test_gpu_*.c | sed 's/[.]c$//' | tr '\n' ' ')}"
fi
tools/gpu_test.sh build >"$X/build.txt" 2>&1
at "build rc $?"
grep -E "error|nnop:|cuDNN" "$X/build.txt" | head -12
rm -f "$R/logs.tgz" "$R/gpu_test.log"
ck
if [ "${MINI:-0}" = 1 ]; then
    (cd "$B" && NNOP_REQUIRE_GPU=1 timeout "$SECS" ctest -j6 --output-on-failure \
        --timeout $((SECS - 5)) -R "${CTEST_RE:-^gpu[.]}" >"$X/ctest.txt" 2>&1)
    at "gpu ctest rc $?"
    grep -E "tests passed|tests failed|\(Failed\)|Timeout|\(Skipped\)|Not Run" "$X/ctest.txt" | tail -20
    ck
    exit 0
fi

(cd "$B" && NNOP_REQUIRE_GPU=1 timeout "$SECS" ctest -j6 --output-on-failure --timeout $((SECS - 10)) \
    -R "${CTEST_RE:-^unit[.]|^gpu[.]|^example[.]|^difftest[.]regress}" \
    -E 'unit[.]find_cudnn|unit[.]concurrency' \
    >"$X/ctest.txt" 2>&1
echo "rc $?" >>"$X/ctest.txt") &
for ((j = 0; j < TINY_JOBS; j++)); do
    NNOP_DEBUG_POISON=1 NNOP_REQUIRE_GPU=1 timeout $((SECS + 20)) "$B/tests/difftest/difftest" \
        --seed $((4545 + j)) --backend cuda --tiny --rebind --time-limit $((SECS - 15)) \
        --repro-dir "$X/rep" >"$X/tiny_$j.txt" 2>&1 &
done
(cd "$B" && NNOP_REQUIRE_GPU=1 timeout "$ONNX_SECS" ctest -j2 --output-on-failure \
    --timeout $((ONNX_SECS - 10)) -R "^onnx[.]($ONNX_TESTS)" >"$X/onnx.txt" 2>&1
echo "rc $?" >>"$X/onnx.txt"
cp "$B"/tests/onnx/node_cuda_*.md "$B"/tests/onnx/edge_cuda_*.md "$B"/tests/onnx/torchvision_*.md \
    "$X/" 2>/dev/null) &
wait
at "parallel stage done"
# the serving storm alone: 32 threads x 30 runs took 28 s on an idle H100 and over 180 s beside
# the stage above (2026-12-07)
(cd "$B" && NNOP_REQUIRE_GPU=1 timeout 120 ctest --output-on-failure --timeout 110 \
    -R '^unit[.]concurrency$' >>"$X/ctest.txt" 2>&1
echo "rc $?" >>"$X/ctest.txt")
at "unit.concurrency done"
ck
echo "== ctest"
grep -E "tests passed|tests failed|\(Failed\)|Timeout|\(Skipped\)|Not Run|^rc " "$X/ctest.txt" | tail -30
echo "== tiny poisoned"
for ((j = 0; j < TINY_JOBS; j++)); do
    grep -E "^FAIL|signal| cases in " "$X/tiny_$j.txt" | head -5
done
echo "== onnx"
grep -E "tests passed|tests failed|\(Failed\)|Timeout|Not Run|^[0-9]+ passed|passed,|refused|^rc " "$X/onnx.txt" | tail -14
if [ "${TV:-0}" = 1 ]; then
    TVD=$B/tests/onnx/torchvision
    left=$((${HARD:-560} - ($(date +%s) - T0)))
    if [ "$left" -gt 60 ] && [ -f "$TVD/test_tv_resnet50_b8/model.onnx" ]; then
        set --
        for n in resnet50 mobilenet_v3_large efficientnet_b0 convnext_tiny; do
            set -- "$@" --net "$n" --onnx "$TVD/test_tv_${n}_b8/model.onnx"
        done
        NNOP_REQUIRE_GPU=1 timeout $((left - 15)) "$B/tools/nnop-bench" --check --perf \
            --dt f16 --layout nhwc --batch 8 --cuda-graph on --reps 5 "$@" >"$X/onnx_vs_net.txt" 2>&1
        at "onnx vs net rc $?"
        grep -E "^\[|check:|timed:" "$X/onnx_vs_net.txt"
        tail -10 "$X/onnx_vs_net.txt"
    else
        at "onnx vs net skipped (${left} s left, or no exported models)"
    fi
fi
if [ "${SERVE:-0}" = 1 ]; then
    # batch-8 requests (one plain plan), then random sizes 1-32 on one batch_range plan
    for run in "8 8 on" "8 8 off" "32 1,2,4,8,16,32 on"; do
        set -- $run
        left=$((${HARD:-560} - ($(date +%s) - T0)))
        [ "$left" -gt 45 ] || { at "serve $run skipped (${left} s left)"; continue; }
        NNOP_REQUIRE_GPU=1 timeout $((left - 10)) "$B/tools/nnop-bench" --net resnet50 --dt f16 \
            --layout nhwc --batch "$1" --cuda-graph "$3" --serve 8 --serve-batches "$2" \
            --serve-requests 64 >"$X/serve_$1_$3.txt" 2>&1
        at "serve $run rc $?"
        grep -E "alone|serve (contexts|plans)" "$X/serve_$1_$3.txt"
        if [ "$3" = on ]; then # PyTorch's peer: a CUDA graph per size per thread
            timeout 120 python3 bench/torch_serve.py --threads 8 --batches "$2" \
                --requests 64 >"$X/torch_serve_$1.txt" 2>&1
            at "torch serve $run rc $?"
            tail -8 "$X/torch_serve_$1.txt"
        fi
        ck
    done
fi
at "== end"
ck
