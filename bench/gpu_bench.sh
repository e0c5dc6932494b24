#!/usr/bin/env bash
# gpu_bench.sh: the benchmark drivers on a GPU machine (repo root): the build of
# tools/gpu_common.sh, then nnop beside PyTorch in the same call, each mode's raw output and
# its table (the report scripts beside this one: nets_report.py, sweep_report.py,
# merge_table.py, launch_steps.py). Logs go to $OUT (default /tmp/nnop-out): gpu_bench.log and
# logs.tgz. docs/performance.md names the mode behind each current figure.
#   usage: bench/gpu_bench.sh MODE[,MODE...]
#   resnet          ResNet-50 fp16 NHWC at batch 1, 32, 256 beside PyTorch, per-kernel profile
#   vision          the four --net networks (nnop-bench) beside PyTorch, batch 1 and 32
#   kernels         the own memory-bound kernels against a device-to-device copy
#   sweep           the conv sweep (bench/problems/conv_sweep.txt) beside PyTorch eager
#   coldstart       ResNet-50 compile to first result, cold and warm, per policy
#   devices, side, nnop-bench, depthwise, bench, knobs, profile, vision-profile, bench19: see
#   each stage's comment below. all: bench, kernels, coldstart.
#   Several modes run in the script's order (printed first), not in the order given.
set -u
WHAT=${1:-all}
. "$(dirname "$0")/../tools/gpu_common.sh"

# steps_table PROFILE OUT: with NNOP_LOG=1 and NNOP_PROFILE_ARGS=--launches, the GPU time and
# GB/s per kind of plan step of a profile_kernels.py output (bench/launch_steps.py); else false
steps_table() {
    [ -n "${NNOP_LOG:-}" ] && [[ "${NNOP_PROFILE_ARGS:-}" == *--launches* ]] &&
        python3 bench/launch_steps.py "$1" >"$2" 2>&1
}

if asked vision-profile; then
    # per-kernel GPU time of one forward of each issue-15 network (batch 32, fp16 NHWC,
    # 224x224), nnop (autotuned) beside PyTorch eager in one process. NNOP_PROFILE_BATCH may
    # list several; NNOP_PROFILE_ARGS=--launches adds one forward's launches in order, which
    # with NNOP_LOG=1 (the partitions in order, in the same file) names each launch's step:
    # bench/launch_steps.py then writes steps_NET.md, the GPU time per kind of step
    echo "== vision networks: per-kernel profiles"
    for net in ${NNOP_VISION_NETS:-mobilenet_v3_large efficientnet_b0 convnext_tiny unet}; do
        PYTHONUNBUFFERED=1 timeout 120 python3 bench/profile_kernels.py \
            "$BUILD/bench/libprof_nets.so" --net "$net" --batch ${NNOP_PROFILE_BATCH:-32} \
            --no-compile --top ${NNOP_PROFILE_TOP:-15} ${NNOP_PROFILE_ARGS:-} >"$OUT/profile_$net.md" 2>&1 ||
            tail -5 "$OUT/profile_$net.md"
        grep -E "^SUMMARY" "$OUT/profile_$net.md"
        steps_table "$OUT/profile_$net.md" "$OUT/steps_$net.md" && grep -E "^### " "$OUT/steps_$net.md"
    done
fi
checkpoint

if asked nnop-bench; then
    # nnop-bench on the GPU: the ResNet-50 conv layers beside their PyTorch peer (same
    # problem file), ResNet-50 with and without graph replay, one problem's engines; JSON
    echo "== nnop-bench --perf"
    NB="$BUILD/tools/nnop-bench"
    timeout 120 "$NB" --perf -f bench/problems/resnet50_conv.txt --cuda-graph both \
        --json "$OUT/nb_resnet50_conv.json" 2>"$OUT/nb_resnet50_conv.err" || tail -5 "$OUT/nb_resnet50_conv.err"
    PYTHONUNBUFFERED=1 timeout 120 python3 bench/torch_problems.py -f bench/problems/resnet50_conv.txt \
        --json "$OUT/torch_resnet50_conv.json" 2>"$OUT/torch_resnet50_conv.err" || tail -5 "$OUT/torch_resnet50_conv.err"
    timeout 150 "$NB" --perf --net resnet50 --batch 256 --dt f16 --layout nhwc --cuda-graph both \
        --json "$OUT/nb_resnet50_b256.json" 2>"$OUT/nb_resnet50_b256.err" || tail -5 "$OUT/nb_resnet50_b256.err"
    timeout 60 "$NB" --engines "conv n32c64h56w56k64r3 p1 dt=f16 layout=nhwc post=bias,relu name=l1_3x3_64" \
        >"$OUT/nb_engines.txt" 2>&1 || tail -5 "$OUT/nb_engines.txt"
    timeout 60 "$NB" --perf --check -f bench/problems/resnet50_conv.txt >"$OUT/nb_resnet50_conv.txt" 2>&1
    cat "$OUT/nb_resnet50_conv.txt" "$OUT/nb_engines.txt" | head -60
fi
checkpoint

if asked sweep; then
    # issue 12's conv sweep: the conv shapes of 17 torchvision networks (tools/export_conv_shapes.py)
    # through nnop-bench and through PyTorch eager, each against its roofline floor; markdown last.
    # NNOP_SWEEP_FILE picks another problem file (a batch-1 subset: grep 'n1 \|\.n1$');
    # NNOP_SWEEP_PART=k/n runs every n-th problem from the k-th (1-based): the whole sweep
    # (892 problems, two 420-s halves) does not fit the device's 600 s a call; one report of
    # all parts: bench/sweep_report.py N1.json T1.json --part N2.json T2.json ...
    SW=${NNOP_SWEEP_FILE:-bench/problems/conv_sweep.txt}
    if [ -n "${NNOP_SWEEP_PART:-}" ]; then
        awk -v part="$NNOP_SWEEP_PART" 'BEGIN {split(part, a, "/")}
            !/^conv/ {print; next} {if (i++ % a[2] == a[1] - 1) print}' "$SW" >/tmp/nnop_sweep_part.txt
        SW=/tmp/nnop_sweep_part.txt
    fi
    echo "== conv sweep ($SW: $(grep -c '^conv' "$SW") problems)"
    # each side stops starting problems at NNOP_SWEEP_TIMEOUT s and still writes its JSON
    # (the report compares the problems both sides reached); the hard timeout is a backstop
    ST=${NNOP_SWEEP_TIMEOUT:-420}
    timeout $((ST + 60)) "$BUILD/tools/nnop-bench" --perf -f "$SW" --time-limit "$ST" \
        --json "$OUT/sweep.json" >"$OUT/sweep.txt" 2>"$OUT/sweep.err" || tail -5 "$OUT/sweep.err"
    grep -- "--time-limit" "$OUT/sweep.err"
    PYTHONUNBUFFERED=1 timeout $((ST + 60)) python3 bench/torch_problems.py -f "$SW" \
        --time-limit "$ST" --calls 20 --reps 3 --json "$OUT/torch_sweep.json" \
        2>"$OUT/torch_sweep.err" || tail -5 "$OUT/torch_sweep.err"
    grep -- "--time-limit" "$OUT/torch_sweep.err"
    python3 bench/sweep_report.py "$OUT/sweep.json" "$OUT/torch_sweep.json" >"$OUT/sweep.md" 2>&1
    head -40 "$OUT/sweep.md"
fi
checkpoint

if asked depthwise; then
    # the depthwise convs of the issue-15 networks with their epilogues, and issue 12's worst
    # depthwise shapes (bench/problems/depthwise.txt): nnop-bench beside PyTorch eager, each
    # against its roofline floor; markdown last
    echo "== depthwise convs"
    timeout 240 "$BUILD/tools/nnop-bench" --perf --check -f bench/problems/depthwise.txt \
        --json "$OUT/dw.json" >"$OUT/dw.txt" 2>"$OUT/dw.err" || { TEST_RC=1; tail -5 "$OUT/dw.err"; }
    grep -cE " (fail|FAIL) " "$OUT/dw.txt" | sed 's/^/depthwise --check failures: /'
    PYTHONUNBUFFERED=1 timeout 240 python3 bench/torch_problems.py -f bench/problems/depthwise.txt \
        --calls 20 --reps 3 --json "$OUT/torch_dw.json" 2>"$OUT/torch_dw.err" || tail -5 "$OUT/torch_dw.err"
    python3 bench/sweep_report.py --all "$OUT/dw.json" "$OUT/torch_dw.json" >"$OUT/dw.md" 2>&1
    cat "$OUT/dw.md"
fi
checkpoint

if asked vision; then
    # issue 15's networks, fp16 NHWC at 224x224, batch 1 and 32: nnop (autotuned, with and
    # without CUDA graph replay) beside PyTorch (eager, CUDA graph, torch.compile
    # reduce-overhead) in the same run; then the table (bench/nets_report.py)
    echo "== vision networks side by side"
    for net in ${NNOP_VISION_NETS:-mobilenet_v3_large efficientnet_b0 convnext_tiny unet}; do
        for b in 1 32; do
            timeout 240 "$BUILD/tools/nnop-bench" --perf --net "$net" --batch "$b" --dt f16 \
                --layout nhwc --autotune --cuda-graph both --json "$OUT/nb_${net}_b$b.json" \
                >"$OUT/nb_${net}_b$b.txt" 2>"$OUT/nb_${net}_b$b.err" || tail -5 "$OUT/nb_${net}_b$b.err"
            grep -E "^$net" "$OUT/nb_${net}_b$b.txt" | awk -v b="$b" '{print "NNOP_NET", $1, "batch", b, "gpu_us", $6, ($NF == "graph" ? "(CUDA graph)" : "")}'
        done
        checkpoint
        PYTHONUNBUFFERED=1 timeout 300 python3 bench/torch_resnet.py --model "$net" 1 32 \
            >"$OUT/torch_$net.txt" 2>&1 || tail -5 "$OUT/torch_$net.txt"
        grep -E "^TORCH_" "$OUT/torch_$net.txt"
    done
    python3 bench/nets_report.py "$OUT" | tee "$OUT/nets.md"
fi
checkpoint

if wants bench; then
    echo "== bench"
    if [ -x "$BUILD/bench/bench_conv" ]; then
        "$BUILD/bench/bench_conv" >"$OUT/bench_nnop.txt" 2>&1 || tail -20 "$OUT/bench_nnop.txt"
        "$BUILD/bench/bench_conv" --autotune >"$OUT/bench_nnop_autotune.txt" 2>&1 ||
            tail -20 "$OUT/bench_nnop_autotune.txt"
        if [ "${NNOP_BENCH_PROBE:-0}" = 1 ]; then
            "$BUILD/bench/bench_conv" --autotune --probe >"$OUT/bench_probe.txt" 2>&1 ||
                tail -20 "$OUT/bench_probe.txt"
        fi
        cat "$OUT/bench_nnop.txt" "$OUT/bench_nnop_autotune.txt"
    fi
    if [ -f bench/torch_conv.py ]; then
        PYTHONUNBUFFERED=1 python3 bench/torch_conv.py >"$OUT/bench_torch.txt" 2>&1 || tail -20 "$OUT/bench_torch.txt"
    fi
    if ! asked resnet; then # (resnet, when asked too, runs them at three batch sizes)
        if [ -x "$BUILD/bench/bench_resnet" ]; then
            "$BUILD/bench/bench_resnet" --autotune >"$OUT/bench_resnet.txt" 2>&1 || tail -20 "$OUT/bench_resnet.txt"
            grep -E "RESNET50|\[0\]|\[5\]|\[56\]" "$OUT/bench_resnet.txt"
        fi
        PYTHONUNBUFFERED=1 python3 bench/torch_resnet.py >"$OUT/bench_torch_resnet.txt" 2>&1 ||
            tail -20 "$OUT/bench_torch_resnet.txt"
        cat "$OUT/bench_torch_resnet.txt"
    fi
    cat "$OUT/bench_torch.txt"
    if [ -f bench/merge_table.py ] && [ -f "$OUT/bench_nnop.txt" ]; then
        echo "heuristics' first engine:"
        python3 bench/merge_table.py "$OUT/bench_nnop.txt" "$OUT/bench_torch.txt" | tee "$OUT/bench_table.md"
        echo "autotuned (top 4 timed):"
        python3 bench/merge_table.py "$OUT/bench_nnop_autotune.txt" "$OUT/bench_torch.txt" | tee "$OUT/bench_table_autotune.md"
    fi
fi
checkpoint
if wants kernels; then
    # the own memory-bound kernels (pooling, global average pooling, softmax, flatten,
    # epilogue) on large tensors against a device-to-device copy of the same bytes, each
    # checked against the CPU backend on a small tensor first; a markdown table
    echo "== kernels"
    if [ -x "$BUILD/bench/bench_kernels" ]; then
        "$BUILD/bench/bench_kernels" >"$OUT/bench_kernels.md" 2>&1 || { TEST_RC=1; echo "bench_kernels FAILED"; }
        cat "$OUT/bench_kernels.md"
    else
        echo "bench_kernels was not built"
        TEST_RC=1
    fi
fi
checkpoint
if asked knobs; then
    # cuDNN engine configs for ResNet-50's 3x3 convs at batch 1 (fp16 NHWC, conv+bias+ReLU):
    # the heuristics' configs and each knob of the first mode-A engines at each value, timed
    # against the heuristics' first choice, outputs compared (bench/probe_knobs.c); markdown
    echo "== knobs"
    if [ -x "$BUILD/bench/probe_knobs" ]; then
        timeout 150 "$BUILD/bench/probe_knobs" >"$OUT/probe_knobs.md" 2>&1 ||
            { echo "probe_knobs: rc $?"; tail -5 "$OUT/probe_knobs.md"; }
        grep -E "^SUMMARY" "$OUT/probe_knobs.md"
    else
        echo "probe_knobs was not built"
    fi
fi
checkpoint

if wants coldstart; then
    # compile-to-first-result of ResNet-50 (batch 32): a cold process (no cache file), then a
    # warm one (the file the first wrote), per policy; separate processes each time.
    echo "== coldstart"
    : >"$OUT/coldstart.txt"
    for policy in precompiled prefer fastest; do
        cache="/tmp/nnop-cache-$policy.bin"
        rm -f "$cache" "$cache.lock"
        for run in cold warm; do
            printf '%s ' "$run" >>"$OUT/coldstart.txt"
            "$BUILD/bench/bench_coldstart" --cache "$cache" --policy "$policy" --batch 32 \
                >>"$OUT/coldstart.txt" 2>&1 || echo "coldstart $policy $run FAILED" | tee -a "$OUT/coldstart.txt"
        done
        ls -l "$cache" | awk '{print "cache file " $5 " bytes"}' >>"$OUT/coldstart.txt"
        # warm without the background rebuild from context creation (prefetch.c): the plans
        # are rebuilt inside the compile, on 4 threads (deserialize.c)
        printf 'warm-no-prefetch ' >>"$OUT/coldstart.txt"
        "$BUILD/bench/bench_coldstart" --cache "$cache" --policy "$policy" --batch 32 \
            --no-prefetch >>"$OUT/coldstart.txt" 2>&1 ||
            echo "coldstart $policy warm-no-prefetch FAILED" | tee -a "$OUT/coldstart.txt"
        # warm with the weights generated before the context: the graph is built in tens of
        # ms, so the compile soon joins the prefetch (and helps with what is left); until
        # issue 43's fix of bench_resnet50_keep_weights these rows timed garbage weights
        for extra in "" --no-prefetch; do
            printf 'warm-weights-first%s ' "$extra" >>"$OUT/coldstart.txt"
            "$BUILD/bench/bench_coldstart" --cache "$cache" --policy "$policy" --batch 32 \
                --weights-first $extra >>"$OUT/coldstart.txt" 2>&1 ||
                echo "coldstart $policy weights-first $extra FAILED" | tee -a "$OUT/coldstart.txt"
        done
        # the same warm start with the cached plans rebuilt on the compiling thread alone
        # (load_threads 1: no prefetch and no threads)
        printf 'warm-serial ' >>"$OUT/coldstart.txt"
        "$BUILD/bench/bench_coldstart" --cache "$cache" --policy "$policy" --batch 32 \
            --load-threads 1 >>"$OUT/coldstart.txt" 2>&1 ||
            echo "coldstart $policy warm-serial FAILED" | tee -a "$OUT/coldstart.txt"
    done
    # ahead-of-time: a warm-up process writes the cache, then a fresh process runs warm
    rm -f /tmp/nnop-cache-aot.bin
    "$BUILD/bench/bench_coldstart" --cache /tmp/nnop-cache-aot.bin --policy prefer --warmup-only >/dev/null 2>&1
    printf 'aot-warm ' >>"$OUT/coldstart.txt"
    "$BUILD/bench/bench_coldstart" --cache /tmp/nnop-cache-aot.bin --policy prefer >>"$OUT/coldstart.txt" 2>&1
    cat "$OUT/coldstart.txt"
fi
checkpoint

if asked devices; then
    # data-parallel ResNet-50 on every GPU of the machine, one thread and context each
    # (nnop-bench --devices all): aggregate images/s and the scaling efficiency
    echo "== devices"
    nvidia-smi -L
    NB="$BUILD/tools/nnop-bench"
    timeout "${NNOP_DEVICES_TIMEOUT:-240}" "$NB" --perf --net resnet50 --batch "${NNOP_DEVICES_BATCH:-256}" \
        --dt f16 --layout nhwc --cuda-graph both --devices all \
        --json "$OUT/nb_devices_resnet50.json" >"$OUT/nb_devices_resnet50.txt" 2>"$OUT/nb_devices_resnet50.err" ||
        tail -20 "$OUT/nb_devices_resnet50.err"
    cat "$OUT/nb_devices_resnet50.txt"
fi
checkpoint

if asked side; then
    # ResNet-50 with CUDA graphs, steps beside the main chain on the side stream or not
    # (NNOP_SIDE_STREAM=0), alternating, then PyTorch in the same call
    echo "== side stream A/B (ResNet-50 fp16 NHWC, autotuned)"
    for run in $(seq "${NNOP_SIDE_RUNS:-2}"); do
        for side in 1 0; do
            NNOP_SIDE_STREAM=$side "$BUILD/bench/bench_resnet" --autotune ${NNOP_SIDE_BATCHES:-1 32} \
                >"$OUT/side_${side}_$run.txt" 2>&1 || tail -5 "$OUT/side_${side}_$run.txt"
            echo "side stream $side, run $run: $(grep -o 'RESNET50 batch [0-9]* | cuda_graph [01] | [0-9.]* ms' "$OUT/side_${side}_$run.txt" | tr '\n' ';')"
        done
    done
    grep -o "side stream[^]]*]" "$OUT/side_1_1.txt" | sort | uniq -c
    PYTHONUNBUFFERED=1 timeout "${NNOP_TORCH_TIMEOUT:-300}" python3 bench/torch_resnet.py ${NNOP_SIDE_BATCHES:-1 32} \
        >"$OUT/side_torch.txt" 2>&1 || tail -20 "$OUT/side_torch.txt"
    grep -E "^TORCH_RESNET50" "$OUT/side_torch.txt"
fi
checkpoint

if asked resnet; then
    # ResNet-50 fp16 NHWC side by side in one run: nnop (autotuned, with and without CUDA
    # graph replay) and PyTorch (eager, eager CUDA graph, torch.compile reduce-overhead) at
    # batch 1, 32, 256; then the per-kernel GPU time of one forward, nnop beside torch eager
    # and torch.compile (default), at batch ${NNOP_PROFILE_BATCH:-256}
    echo "== resnet50 side by side"
    "$BUILD/bench/bench_resnet" --autotune >"$OUT/bench_resnet.txt" 2>&1 || tail -20 "$OUT/bench_resnet.txt"
    grep -E "^RESNET50" "$OUT/bench_resnet.txt"
    PYTHONUNBUFFERED=1 timeout "${NNOP_TORCH_TIMEOUT:-300}" python3 bench/torch_resnet.py 1 32 256 \
        >"$OUT/bench_torch_resnet.txt" 2>&1 ||
        tail -20 "$OUT/bench_torch_resnet.txt"
    grep -E "^TORCH_RESNET50" "$OUT/bench_torch_resnet.txt"
    echo "== per-kernel profile"
    PYTHONUNBUFFERED=1 timeout "${NNOP_TORCH_TIMEOUT:-300}" python3 bench/profile_kernels.py \
        "$BUILD/bench/libprof_resnet.so" --batch ${NNOP_PROFILE_BATCH:-256} ${NNOP_PROFILE_ARGS:-} \
        >"$OUT/profile_kernels.md" 2>&1 ||
        tail -20 "$OUT/profile_kernels.md"
    grep -v "^nnop_log" "$OUT/profile_kernels.md"
    steps_table "$OUT/profile_kernels.md" "$OUT/steps_resnet50.md" && cat "$OUT/steps_resnet50.md"
fi
checkpoint

if asked profile; then
    # where a cold and a warm (serial) compile of ResNet-50 spend their time: a wall-clock
    # stack sampler on the main thread, limited to compile -> first result
    echo "== profile"
    cc -O1 -shared -fPIC tools/prof_sampler.c -o /tmp/prof_sampler.so -ldl || exit 1
    cache=/tmp/nnop-cache-prof.bin
    rm -f "$cache" "$cache.lock"
    for run in cold warm; do
        LD_PRELOAD=/tmp/prof_sampler.so NNOP_SAMPLER_GATED=1 NNOP_SAMPLER_OUT="$OUT/prof_$run.txt" \
            "$BUILD/bench/bench_coldstart" --cache "$cache" --policy precompiled --load-threads 1 \
            --describe | tee -a "$OUT/profile.txt" | grep -E "COLDSTART|breakdown"
        sed -n '/top frames by/,$p' "$OUT/prof_$run.txt" | head -24
        tail -2 "$OUT/prof_$run.txt"
    done
fi
checkpoint

if [ "${NNOP_BENCH_19:-0}" = 1 ] || asked bench19; then
    # the same benchmark built against PyTorch's cuDNN 9.19, for a same-version comparison
    CUDNN19=$(python3 -c "import os,nvidia.cudnn as m;print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])" 2>/dev/null)
    if [ -n "$CUDNN19" ] && [ -d "$CUDNN19/include" ]; then
        echo "== bench against cuDNN at $CUDNN19"
        cmake -S . -B "$BUILD-19" -DCMAKE_BUILD_TYPE=Release -DCUDNN_ROOT="$CUDNN19" \
            -DNNOP_BUILD_TESTS=OFF -DNNOP_BUILD_EXAMPLES=OFF -DNNOP_CUDA_ARCHITECTURES=90 \
            >"$OUT/configure19.log" 2>&1 && grep "nnop:" "$OUT/configure19.log"
        if cmake --build "$BUILD-19" -j16 --target bench_conv >"$OUT/build19.log" 2>&1; then
            LD_LIBRARY_PATH="$CUDNN19/lib:$LD_LIBRARY_PATH" "$BUILD-19/bench/bench_conv" --autotune \
                >"$OUT/bench_nnop19.txt" 2>&1 || tail -20 "$OUT/bench_nnop19.txt"
            echo "autotuned, nnop on cuDNN 9.19 (as PyTorch):"
            python3 bench/merge_table.py "$OUT/bench_nnop19.txt" "$OUT/bench_torch.txt" | tee "$OUT/bench_table19.md"
        else
            grep -E "error" "$OUT/build19.log" | head
        fi
    fi
fi
echo "== summary"
for f in "$OUT/bench_table_autotune.md" "$OUT/coldstart.txt" "$OUT/bench_kernels.md"; do
    [ -f "$f" ] && cat "$f"
done
grep -E "RESNET50" "$OUT/bench_resnet.txt" 2>/dev/null
grep -E "^SUMMARY" "$OUT/probe_knobs.md" 2>/dev/null
echo "== done (rc $TEST_RC)"
exit $TEST_RC
