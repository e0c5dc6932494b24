#!/usr/bin/env bash
# cudnn_gpu_run.sh VERSION [STAGES]: on the GPU machine (repository root), nnop on a cuDNN
# release carried as the subset tools/cudnn_subset.sh made (.cudnn/VERSION, carried with
# .deps), beside the machine's own cuDNN (issue 48). One call of at most NNOP_HARD_END
# seconds (default 540: the device allows 600 a command); every step runs under `timeout`
# cut to the time left, and no stage starts past NNOP_DEADLINE (default 420 s).
#
# STAGES, comma-separated, run in this order whatever the order given (default: all but
# vision, which gets a call of its own):
#   build       unpack the subset into /tmp/cudnn-VERSION/{include,lib,nvrtc}; build the GPU
#               tests, nnop-doctor, nnop-bench and vision_net against the subset's headers (a context refuses
#               a cuDNN older than its headers, so one build serves VERSION and every newer
#               cuDNN) in build-cudnn-VERSION/ (ignored; a warm machine keeps it, and a later
#               call only relinks)
#   doctor      nnop-doctor with NNOP_CUDNN_PATH at the subset: it names the libraries left
#               out (the precompiled engines among them)
#   edge        the edge-shape ONNX models (tests/onnx/gen_edge_tests.py) on the subset's cuDNN,
#               f32 NCHW and f16 NHWC (onnx_conformance, built by the build stage when asked)
#   gpu         NNOP_REQUIRE_GPU=1 ctest -R '^gpu\.' on the subset, under the default policy
#               (prefer-precompiled: runtime-compiled engines where nothing else works, and
#               here nothing else does). The cases that ask for precompiled-only fail there
#               by design: their messages are the ones a user gets
#   nvrtc       which libnvrtc the subset's cuDNN loads (LD_DEBUG), one conv
#   refuse      ResNet-50 and one fused conv under --policy precompiled-only on the subset:
#               the message a user gets
#   gpu-system  the same ctest on the system cuDNN (9.14, /usr/lib/x86_64-linux-gnu)
#   resnet      ResNet-50 fp16 NHWC batch 1 and 32 (nnop-bench --perf, prefer-precompiled)
#               on the subset, the system cuDNN 9.14 and PyTorch's 9.19, same build
#   wscost      what a workspace limit costs the compile: ResNet-50 batch 32 with
#               --workspace-limit 1 MiB and without, on the subset (below 9.2 every candidate's
#               plan is built to learn its workspace) and on the system cuDNN (from 9.2 the
#               engine config says it before any plan is built); compile_ms of each
#   vision      the issue-15 networks against PyTorch (tools/export_vision_net.py reference,
#               examples/vision_net), CUDA f16 NHWC, on the subset
# Writes $OUT/summary.md (pass counts, failures, messages, times) and $OUT/logs.tgz.
#
#   usage: tools/cudnn_gpu_run.sh 9.0.0.312 [build,doctor,gpu,nvrtc,refuse,gpu-system,resnet]
#   a second call on the warm machine (the build kept; stages without build skip it):
#          tools/cudnn_gpu_run.sh 9.0.0.312 resnet,wscost,vision
set -u
VERSION=${1:?usage: tools/cudnn_gpu_run.sh VERSION [STAGES]}
STAGES=${2:-build,doctor,gpu,nvrtc,refuse,gpu-system,resnet}
START=$(date +%s)
HARD_END=${NNOP_HARD_END:-540}
DEADLINE=${NNOP_DEADLINE:-420}
ROOT=$(pwd)
RESULTS=${OUT:-/tmp/nnop-out}
LOGS=/tmp/cudnn-run-logs
BUILD=${NNOP_BUILD_DIR:-$ROOT/build-cudnn-$VERSION}
SUB=/tmp/cudnn-$VERSION
ARCHIVE=$ROOT/.cudnn/$VERSION/cudnn-$VERSION.tar.xz
SYSTEM_CUDNN=${NNOP_SYSTEM_CUDNN:-/usr/lib/x86_64-linux-gnu}
TORCH_CUDNN=${NNOP_TORCH_CUDNN:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib}
SUMMARY=$RESULTS/summary.md
rm -rf "$LOGS" && mkdir -p "$LOGS" "$RESULTS"
: >"$SUMMARY"
exec > >(tee "$LOGS/run.log") 2>&1
finish() {
    tar czf "$RESULTS/logs.tgz" -C "$LOGS" . 2>/dev/null
}
trap finish EXIT
trap 'echo "== stopped by a signal"; exit 143' TERM INT

say() { echo "$*" | tee -a "$SUMMARY"; }
elapsed() { echo $(($(date +%s) - START)); }
# left: seconds to the hard end; cap S: S or what is left (at least 1)
left() { echo $((HARD_END - $(elapsed))); }
cap() {
    l=$(left)
    [ "$l" -lt 1 ] && l=1
    [ "$1" -lt "$l" ] && echo "$1" || echo "$l"
}
# stage NAME: whether NAME was asked, and there is time to start it
stage() {
    case ",$STAGES," in *",$1,"*) ;; *) return 1 ;; esac
    if [ "$(elapsed)" -ge "$DEADLINE" ]; then
        say "- $1: skipped, past the deadline (${DEADLINE} s)"
        return 1
    fi
    echo "== $1 (at $(elapsed) s)"
    return 0
}
# on CUDNN_DIR CMD...: CMD with nnop's cuDNN from CUDNN_DIR (and the subset's NVRTC first on
# the loader's path when CUDNN_DIR is the subset's)
on() {
    d=$1
    shift
    if [ "$d" = "$SUB/lib" ]; then
        NNOP_CUDNN_PATH=$d LD_LIBRARY_PATH=$SUB/nvrtc:$LD_LIBRARY_PATH "$@"
    else
        NNOP_CUDNN_PATH=$d "$@"
    fi
}

say "# nnop on cuDNN $VERSION (issue 48), $(date -u +%Y-%m-%dT%H:%MZ)"
say "- machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(nvcc --version 2>/dev/null | tail -1)"
say "- commit: $(git rev-parse --short HEAD 2>/dev/null) $(git status --short 2>/dev/null | wc -l) paths changed"

mkdir -p /tmp/deps && for f in .deps/*.deb; do dpkg -x "$f" /tmp/deps; done
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PATH=/tmp/deps/usr/bin:$PATH # protoc-c: the ONNX importer (the edge stage)

if [ ! -f "$SUB/lib/libcudnn_graph.so.9" ]; then
    if [ ! -f "$ARCHIVE" ]; then
        say "- no $ARCHIVE: run tools/cudnn_subset.sh $VERSION here, and carry .cudnn/$VERSION"
        exit 1
    fi
    t0=$(date +%s)
    xz -dc "$ARCHIVE" | tar -C /tmp -xf - || { say "- unpacking $ARCHIVE failed"; exit 1; }
    say "- subset unpacked in $(($(date +%s) - t0)) s: $(find "$SUB/lib" "$SUB/nvrtc" -name '*.so*' | wc -l) libraries, $(du -sm "$SUB" | cut -f1) MB"
fi

if stage build; then
    t0=$(date +%s)
    timeout "$(cap 60)" cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCUDNN_ROOT="$SUB" \
        -Dcmocka_DIR=/tmp/deps/usr/lib/x86_64-linux-gnu/cmake/cmocka \
        -DCMOCKA_INCLUDE_DIR=/tmp/deps/usr/include \
        -DCMOCKA_LIBRARIES=/tmp/deps/usr/lib/x86_64-linux-gnu/libcmocka.so \
        -DCJSON_ROOT=/tmp/deps/usr -DCMAKE_PREFIX_PATH=/tmp/deps/usr \
        -DNNOP_CUDA_ARCHITECTURES=90 >"$LOGS/configure.log" 2>&1 ||
        { tail -30 "$LOGS/configure.log"; say "- configure failed (configure.log)"; exit 1; }
    grep -E "^-- nnop: CUDA" "$LOGS/configure.log" | tee -a "$SUMMARY"
    # what the stages run, nothing else (the unit tests, fuzzers, ONNX and benchmarks wait)
    # shellcheck disable=SC2046 # the targets are words
    if ! timeout "$(cap 300)" cmake --build "$BUILD" -j16 --target nnop-doctor nnop-bench \
        vision_net $(find tests/gpu -name 'test_gpu_*.c' -exec basename {} .c \;) \
        $(case ",$STAGES," in *,edge,*) echo onnx_conformance ;; esac) \
        >"$LOGS/build.log" 2>&1; then
        grep -E "error|Error" "$LOGS/build.log" | head -20 | tee -a "$SUMMARY"
        say "- build failed or timed out (build.log)"
        exit 1
    fi
    say "- build: $(($(date +%s) - t0)) s against the headers of cuDNN $VERSION"
    finish
fi

# a call without the build stage uses the build a warm machine kept from an earlier call
if [ ! -x "$BUILD/tools/nnop-bench" ]; then
    say "- no build in $BUILD: ask for the build stage"
    exit 1
fi

# ctest_gpu NAME CUDNN_DIR: the GPU tests on that cuDNN; pass counts and failures to the summary
ctest_gpu() {
    name=$1 dir=$2
    t0=$(date +%s)
    (cd "$BUILD" && on "$dir" env NNOP_REQUIRE_GPU=1 timeout "$(cap 200)" ctest -R '^gpu\.' \
        -j "${NNOP_CTEST_JOBS:-4}" --timeout 150 --output-on-failure) >"$LOGS/ctest_$name.log" 2>&1
    say "- ctest gpu.* on $name ($dir): $(grep -E 'tests passed' "$LOGS/ctest_$name.log" || echo 'no result (timed out?)'), $(($(date +%s) - t0)) s"
    sed -n '/The following tests FAILED/,$p' "$LOGS/ctest_$name.log" | grep -E '^\s+[0-9]+ - ' |
        sed 's/^/    /' | tee -a "$SUMMARY"
    # each failing case with the last line the test printed before CMocka's verdict (the
    # message a user gets), all in failures_NAME.txt, the first 30 here
    awk '/^\[ RUN/ { msg = ""; next }
         /^\[  FAILED  \] [A-Za-z0-9_]+$/ { if (!seen[$4]++) print $4 ": " msg; next }
         /^\[/ || /^[0-9]+\/[0-9]+ Test/ || /^$/ { next }
         { msg = $0 }' "$LOGS/ctest_$name.log" >"$LOGS/failures_$name.txt"
    head -30 "$LOGS/failures_$name.txt" | cut -c1-400 | sed 's/^/    /' >>"$SUMMARY"
    finish
}

if stage doctor; then
    on "$SUB/lib" timeout "$(cap 60)" "$BUILD/tools/nnop-doctor" >"$LOGS/doctor.log" 2>&1
    say "- doctor on the subset: rc $?; its problems:"
    grep -iE "problem|cannot be loaded|precompiled" "$LOGS/doctor.log" | head -12 | sed 's/^/    /' | tee -a "$SUMMARY"
fi

if stage edge; then
    # the edge-shape ONNX models (tests/onnx/gen_edge_tests.py, ONNX Runtime's answers) on the
    # GPU with the subset's cuDNN: f32 NCHW and f16 NHWC
    python3 tests/onnx/gen_edge_tests.py /tmp/edge >"$LOGS/edge_gen.log" 2>&1
    for v in "f32 nchw" "f16 nhwc"; do
        set -- $v
        on "$SUB/lib" env NNOP_REQUIRE_GPU=1 timeout "$(cap 90)" "$BUILD/tests/onnx/onnx_conformance" \
            --backend cuda --dtype "$1" --layout "$2" --md "$LOGS/edge_$1.md" /tmp/edge \
            >"$LOGS/edge_$1.log" 2>&1
        say "- edge shapes, $1 $2, cuDNN $VERSION: rc $?, $(grep -E 'passed,' "$LOGS/edge_$1.log" | tail -1)"
        grep -E '\| failed \|' "$LOGS/edge_$1.md" 2>/dev/null | head -8 | cut -c1-300 | sed 's/^/    /' | tee -a "$SUMMARY"
    done
    finish
fi

if stage gpu; then
    ctest_gpu "cudnn-$VERSION" "$SUB/lib"
fi

CONV="conv n8c64h56w56k64r3s3 p1 dt=f16 layout=nhwc post=bias,relu"
if stage nvrtc; then
    # shellcheck disable=SC2086 # the problem is words
    on "$SUB/lib" env LD_DEBUG=files timeout "$(cap 60)" "$BUILD/tools/nnop-bench" --backend cuda --perf --no-peaks \
        --reps 1 $CONV >"$LOGS/nvrtc.log" 2>&1
    say "- NVRTC the subset's cuDNN loaded: $(grep -oE 'calling init: [^ ]*nvrtc[^ ]*' "$LOGS/nvrtc.log" | sort -u | sed 's/calling init: //' | tr '\n' ' ')"
fi

if stage refuse; then
    # shellcheck disable=SC2086
    on "$SUB/lib" timeout "$(cap 90)" "$BUILD/tools/nnop-bench" --backend cuda --perf --no-peaks --reps 1 \
        --policy precompiled-only $CONV >"$LOGS/refuse_conv.log" 2>&1
    say "- precompiled-only, one conv+bias+relu on the subset: rc $?; it says:"
    grep -iE "error|unsupported|no engine|refus|fail" "$LOGS/refuse_conv.log" | head -5 | cut -c1-600 | sed 's/^/    /' | tee -a "$SUMMARY"
    on "$SUB/lib" timeout "$(cap 120)" "$BUILD/tools/nnop-bench" --backend cuda --perf --no-peaks --reps 1 \
        --policy precompiled-only --net resnet50 --batch 1 >"$LOGS/refuse_resnet.log" 2>&1
    say "- precompiled-only, ResNet-50 on the subset: rc $?; it says:"
    grep -iE "error|unsupported|no engine|refus|fail" "$LOGS/refuse_resnet.log" | head -5 | cut -c1-600 | sed 's/^/    /' | tee -a "$SUMMARY"
fi

if stage gpu-system; then
    ctest_gpu "system" "$SYSTEM_CUDNN"
fi

if stage resnet; then
    for c in "$SUB/lib" "$SYSTEM_CUDNN" "$TORCH_CUDNN"; do
        [ -e "$c/libcudnn.so.9" ] || { say "- resnet: no cuDNN in $c"; continue; }
        for b in 1 32; do
            f=$LOGS/resnet_$(echo "$c" | tr / _)_b$b
            t0=$(date +%s)
            on "$c" timeout "$(cap 120)" "$BUILD/tools/nnop-bench" --backend cuda --perf --no-peaks --reps 5 \
                --net resnet50 --batch "$b" --dt f16 --layout nhwc --json "$f.json" >"$f.txt" 2>"$f.err"
            rc=$?
            say "- ResNet-50 b$b on $c: rc $rc, $(($(date +%s) - t0)) s with compile: $(grep -E '^resnet50' "$f.txt" | head -1)"
            [ $rc -ne 0 ] && tail -3 "$f.err" | cut -c1-400 | sed 's/^/    /' | tee -a "$SUMMARY"
        done
        finish
    done
    grep -hE "cuDNN|cudnn" "$LOGS"/resnet_*_b1.err | sort -u | head -6 >>"$SUMMARY"
fi

if stage wscost; then
    for c in "$SUB/lib" "$SYSTEM_CUDNN"; do
        for lim in 0 1048576; do
            f=$LOGS/wscost_$(echo "$c" | tr / _)_$lim
            on "$c" timeout "$(cap 120)" "$BUILD/tools/nnop-bench" --backend cuda --perf --no-peaks \
                --reps 1 --net resnet50 --batch 32 --dt f16 --layout nhwc --workspace-limit "$lim" \
                >"$f.txt" 2>"$f.err"
            say "- ResNet-50 b32, workspace limit $lim, on $c: rc $?: $(grep -E '^resnet50' "$f.txt" | awk '{print "compile_ms", $5}')"
        done
    done
fi

if stage vision; then
    vt=$(mktemp -d)
    for m in ${NNOP_VISION_NETS:-mobilenet_v3_large efficientnet_b0 convnext_tiny unet}; do
        [ "$(elapsed)" -ge "$DEADLINE" ] && { say "- vision $m: skipped, past the deadline"; continue; }
        timeout "$(cap 120)" python3 tools/export_vision_net.py "$m" --graph "$vt/$m.json" \
            --weights "$vt/$m.safetensors" --reference "$vt/$m.ref.safetensors" --batch 2 \
            --size 64 >"$LOGS/export_$m.log" 2>&1 || { say "- vision $m: export failed"; continue; }
        t0=$(date +%s)
        on "$SUB/lib" timeout "$(cap 150)" "$BUILD/examples/vision_net" --backend cuda --dtype f16 \
            --layout nhwc --graph "$vt/$m.json" --weights "$vt/$m.safetensors" \
            --reference "$vt/$m.ref.safetensors" >"$LOGS/vision_$m.log" 2>&1
        rc=$?
        say "- vision $m cuda f16 nhwc on the subset: rc $rc, $(($(date +%s) - t0)) s: $(grep -oE 'reference: [a-z0-9_]+|relative error [0-9.e+-]+|same top-1 on [0-9]+ of [0-9]+' "$LOGS/vision_$m.log" | tr '\n' ' ')"
        [ $rc -ne 0 ] && tail -3 "$LOGS/vision_$m.log" | cut -c1-400 | sed 's/^/    /' | tee -a "$SUMMARY"
        finish
    done
    rm -rf "$vt"
fi
say "- done at $(elapsed) s"
