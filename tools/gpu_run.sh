#!/usr/bin/env bash
# gpu_run.sh: the one script run on the GPU machine: unpack CMocka and cJSON (Debian debs
# carried in .deps: apt-get download libcmocka0 libcmocka-dev libcjson1 libcjson-dev), build
# against the system cuDNN, run every test with NNOP_REQUIRE_GPU=1, then the conv benchmark
# (nnop and PyTorch side by side), printing a short table last. Logs go to $OUT.
#   usage (repo root): tools/gpu_run.sh [tests|side|devices|bench|kernels|knobs|resnet|examples|coldstart|profile|difftest-random|difftest-bg|difftest-collect|engines|doctor|bench-check|nnop-bench|sweep|depthwise|vision-errors|vision|vision-profile|newops|sanitize|bench19|all]
#   (default all; several may be given, comma-separated: tests,profile; they run in the script's order,
#   printed first, not in the order given)
set -u
WHAT=${1:-all}
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
# each call's logs its own: on a warm machine /tmp keeps the last call's (whose ctest line the
# summary of a difftest-collect call had printed as its own)
rm -rf "$OUT" && mkdir -p "$OUT" "$RESULTS"
exec > >(tee "$OUT/gpu_run.log") 2>&1
# the logs come back also when an outer `timeout` ends the script early
finish() {
    tar czf "$RESULTS/logs.tgz" -C "$OUT" . 2>/dev/null
    cp "$OUT/gpu_run.log" "$RESULTS/" 2>/dev/null
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
# without them the build fails minutes later on cmocka.h: say so now (a fresh checkout lacks .deps)
if ! ls .deps/*.deb >/dev/null 2>&1; then
    echo "no .deps/*.deb: run 'mkdir -p .deps && cd .deps && apt-get download libcmocka0 libcmocka-dev libcjson1 libcjson-dev' here and carry .deps"
    exit 1
fi
mkdir -p /tmp/deps && for f in .deps/*.deb; do dpkg -x "$f" /tmp/deps; done
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

# NNOP_SKIP_BUILD=1: use the build already in $BUILD (a later call on the same warm machine,
# with NNOP_BUILD_DIR inside the repo: the device keeps ignored build folders between calls)
if [ "${NNOP_SKIP_BUILD:-0}" = 1 ] && [ -x "$BUILD/tests/difftest/difftest" ]; then
    echo "== build: the one in $BUILD, kept from the last call"
else
echo "== configure and build"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCUDNN_ROOT=/usr \
    -Dcmocka_DIR=/tmp/deps/usr/lib/x86_64-linux-gnu/cmake/cmocka \
    -DCMOCKA_INCLUDE_DIR=/tmp/deps/usr/include \
    -DCMOCKA_LIBRARIES=/tmp/deps/usr/lib/x86_64-linux-gnu/libcmocka.so \
    -DCJSON_ROOT=/tmp/deps/usr \
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

# steps_table PROFILE OUT: with NNOP_LOG=1 and NNOP_PROFILE_ARGS=--launches, the GPU time and
# GB/s per kind of plan step of a profile_kernels.py output (bench/launch_steps.py); else false
steps_table() {
    [ -n "${NNOP_LOG:-}" ] && [[ "${NNOP_PROFILE_ARGS:-}" == *--launches* ]] &&
        python3 bench/launch_steps.py "$1" >"$2" 2>&1
}

# difftest_jobs NAME JOBS FIRST_SEED ARGS...: the differential tester on the GPU in JOBS
# processes at once (runtime compilation of cuDNN engines is CPU-bound), seeds FIRST_SEED.. ;
# prints each process's summary, every failure, and the cases per second of all together.
difftest_jobs() {
    local name=$1 jobs=$2 seed=$3 j rc=0 t0 t1
    shift 3
    t0=$(date +%s)
    for ((j = 0; j < jobs; j++)); do
        NNOP_REQUIRE_GPU=1 timeout "${NNOP_DIFFTEST_TIMEOUT:-900}" "$BUILD/tests/difftest/difftest" \
            --backend cuda --seed $((seed + j)) --repro-dir "$OUT/difftest-repro" "$@" \
            >"$OUT/difftest_${name}_$j.log" 2>&1 &
    done
    for ((j = 0; j < jobs; j++)); do wait -n || rc=1; done
    t1=$(date +%s)
    difftest_report "$name" $((t1 - t0)) "$OUT"/difftest_"${name}"_[0-9]*.log
    return $rc
}

# difftest_report NAME SECONDS LOG...: each process's failures and summary, then all together:
# cases, failures, the processes that got to their summary, cases per second over SECONDS
difftest_report() {
    local name=$1 secs=$2 f
    shift 2
    for f in "$@"; do
        grep -E "^FAIL|^difftest: signal" "$f" | head -10
        sed -n '/^difftest: backend/,/^  bf16 NHWC/p' "$f"
    done
    awk '/ cases in /{for (i = 1; i <= NF; i++) if ($i == "cases") n += $(i - 1); p++}
         /^  (f32|f16|bf16) /{f += $NF}
         END {printf "difftest %s: %d cases, %d failed, %d of '"$#"' processes finished, in '"$secs"' s (%.1f cases/s)\n",
              "'"$name"'", n, f, p, n / '"$((secs > 0 ? secs : 1))"'}' "$@"
}

# difftest_fixed_new JOBS: the fixed-seed set with the issue-15 ops (NNOP_DIFFTEST_NEW_COUNT
# graphs, default 2000) in JOBS processes
difftest_fixed_new() {
    local n=${NNOP_DIFFTEST_NEW_COUNT:-2000}
    echo "== difftest fixed-seed set with the issue-15 ops: seeds 1..$1, $((n / $1)) graphs each"
    difftest_jobs fixed_new "$1" 1 --count $((n / $1)) --new-ops
}

# difftest_fixed_special JOBS: the fixed-seed set with NaN, +inf and -inf in the graph inputs,
# the issue-15 ops included (NNOP_DIFFTEST_SPECIAL_COUNT graphs, default 2000)
difftest_fixed_special() {
    local n=${NNOP_DIFFTEST_SPECIAL_COUNT:-2000}
    echo "== difftest fixed-seed set with NaN and infinite inputs: seeds 1..$1, $((n / $1)) graphs each"
    difftest_jobs fixed_special "$1" 1 --count $((n / $1)) --new-ops --special
}

# difftest_fixed_graph JOBS: the fixed-seed set with the issue-15 ops, each plan replayed as a
# CUDA graph with the side stream on (NNOP_DIFFTEST_GRAPH_COUNT graphs, default 2000)
difftest_fixed_graph() {
    local n=${NNOP_DIFFTEST_GRAPH_COUNT:-2000}
    echo "== difftest fixed-seed set as CUDA graphs: seeds 1..$1, $((n / $1)) graphs each"
    NNOP_SIDE_STREAM=1 difftest_jobs fixed_graph "$1" 1 --count $((n / $1)) --new-ops --cuda-graph
}

TEST_RC=0
if asked doctor; then
    # the doctor on this machine's installation, then on broken ones: a cuDNN path that
    # holds no cuDNN, and PyTorch's own cuDNN wheel when it is there
    echo "== doctor"
    timeout 60 "$BUILD/tools/nnop-doctor"
    echo "doctor rc $?"
    mkdir -p /tmp/empty-cudnn
    echo "== doctor, NNOP_CUDNN_PATH=/tmp/empty-cudnn/libcudnn.so.9 (missing)"
    NNOP_CUDNN_PATH=/tmp/empty-cudnn/libcudnn.so.9 timeout 60 "$BUILD/tools/nnop-doctor"
    echo "doctor rc $?"
    WHEEL=$(python3 -c "import nvidia.cudnn as m, os; print(list(m.__path__)[0])" 2>/dev/null)
    if [ -n "$WHEEL" ] && ls "$WHEEL"/lib/libcudnn.so.9 >/dev/null 2>&1; then
        echo "== doctor, NNOP_CUDNN_PATH=$WHEEL/lib (PyTorch's wheel)"
        NNOP_CUDNN_PATH=$WHEEL/lib timeout 60 "$BUILD/tools/nnop-doctor"
        echo "doctor rc $?"
        echo "== doctor, NNOP_CUDNN_PATH=$WHEEL/lib/libcudnn.so.9 (the file named, not the folder)"
        NNOP_CUDNN_PATH=$WHEEL/lib/libcudnn.so.9 timeout 60 "$BUILD/tools/nnop-doctor" | grep -E "looked for|^libcudnn.so|verdict"
        # failure mode 2: a folder holding every cuDNN library but the graph library
        mkdir -p /tmp/nograph-cudnn
        for f in "$WHEEL"/lib/libcudnn*.so.9; do
            case "$f" in *libcudnn_graph.so.9) ;; *) ln -sf "$f" /tmp/nograph-cudnn/ ;; esac
        done
        echo "== doctor, NNOP_CUDNN_PATH=/tmp/nograph-cudnn (every cuDNN library but libcudnn_graph)"
        NNOP_CUDNN_PATH=/tmp/nograph-cudnn timeout 60 "$BUILD/tools/nnop-doctor"
        echo "doctor rc $?"
        echo "== quickstart there (AUTO falls back to the CPU and says why)"
        NNOP_CUDNN_PATH=/tmp/nograph-cudnn NNOP_LOG=info timeout 60 "$BUILD/examples/quickstart" 2>&1 | tail -6
        echo "quickstart rc $?"
        # the GPU tests on PyTorch's cuDNN instead of the system's (another 9.x)
        for t in test_gpu_conv test_gpu_network test_gpu_regressions; do
            NNOP_REQUIRE_GPU=1 NNOP_CUDNN_PATH=$WHEEL/lib timeout 120 \
                "$BUILD/tests/$t" >"$OUT/${t}_wheel.log" 2>&1
            rc=$?
            [ $rc -ne 0 ] && TEST_RC=1
            echo "$t on PyTorch's cuDNN: rc $rc | $(grep -cE '^\[       OK' "$OUT/${t}_wheel.log") ok | $(grep -E '^\[  (PASSED|FAILED)' "$OUT/${t}_wheel.log" | tr '\n' ' ')"
        done
    fi
fi
checkpoint

if asked bench-check; then
    # nnop-bench --check on the GPU: 200 random conv chains, the every-op file, the networks
    echo "== nnop-bench --check on the GPU"
    for f in bench/problems/random_conv_chains.txt bench/problems/cpu_check.txt; do
        timeout 300 "$BUILD/tools/nnop-bench" --check --backend cuda -f "$f" \
            >"$OUT/bench_check_$(basename "$f" .txt).txt" 2>"$OUT/bench_check_$(basename "$f" .txt).err"
        rc=$?
        [ $rc -ne 0 ] && TEST_RC=1
        echo "$f: rc $rc | $(grep -cE ' pass ' "$OUT/bench_check_$(basename "$f" .txt).txt") pass," \
            "$(grep -cE ' (FAIL|error) ' "$OUT/bench_check_$(basename "$f" .txt).txt") fail"
        grep -E ' (FAIL|error) ' "$OUT/bench_check_$(basename "$f" .txt).txt" | head -20
        tail -5 "$OUT/bench_check_$(basename "$f" .txt).err"
    done
fi
checkpoint

if wants tests; then
    echo "== tests"
    # difftest.gpu and difftest.gpu_new_ops (the fixed-seed sets) run below on their own, in
    # several processes, with their own time limit
    # NNOP_SKIP_CTEST=1: only the difftest sets below (ctest ran in an earlier call)
    if [ "${NNOP_SKIP_CTEST:-0}" != 1 ]; then
        (cd "$BUILD" && NNOP_REQUIRE_GPU=1 ctest --output-on-failure --timeout 150 \
            -E '^difftest[.]gpu' >"$OUT/ctest.log" 2>&1)
        TEST_RC=$?
        grep -E "^\[  (FAILED|SKIPPED|  OK    |PASSED  )|tests passed|tests failed|Failed|Passed|cudnn eng|own kernel" "$OUT/ctest.log" | grep -vE "^\[       OK" | tail -80
        tail -25 "$OUT/ctest.log"
    fi
    J=${NNOP_DIFFTEST_JOBS:-8}
    N=${NNOP_DIFFTEST_COUNT:-5000}
    echo "== difftest fixed-seed set: seeds 1..$J, $((N / J)) graphs each, fused and unfused"
    difftest_jobs fixed "$J" 1 --count $((N / J)) || TEST_RC=1
    difftest_fixed_new "$J" || TEST_RC=1
    difftest_fixed_special "$J" || TEST_RC=1
    difftest_fixed_graph "$J" || TEST_RC=1
    # the exception nnop.h states for fp16/bf16 cuDNN convs, seen in PyTorch on this machine
    echo "== PyTorch's GPU convs and NaN/inf inputs (informs; nnop.h, Numbers)"
    timeout 120 python3 tools/torch_conv_special.py 2>&1 | grep -v Warning
    # the differential tester's fixed-seed GPU set again under
    # memcheck, smaller since memcheck is slow: no invalid access in any kernel it reaches
    echo "== difftest under compute-sanitizer memcheck"
    NNOP_REQUIRE_GPU=1 timeout "${NNOP_MEMCHECK_TIMEOUT:-1200}" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$BUILD/tests/difftest/difftest" --seed 1 --count "${NNOP_DIFFTEST_MEMCHECK_COUNT:-500}" \
        --backend cuda --repro-dir "$OUT/difftest-repro" ${NNOP_DIFFTEST_MEMCHECK_ARGS:-} \
        >"$OUT/difftest_memcheck.log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && TEST_RC=1
    echo "difftest memcheck: rc $rc | $(grep -E 'ERROR SUMMARY' "$OUT/difftest_memcheck.log" | tail -1)"
    grep -E "^FAIL" "$OUT/difftest_memcheck.log" | head -20
    sed -n '/^difftest: backend/,$p' "$OUT/difftest_memcheck.log"
fi
checkpoint

if asked newops; then
    # the GPU tests and the kept reproducers (not the examples), the issue-15 fixed-seed set,
    # and the cases of NNOP_DIFFTEST_CASES (seeds, with --new-ops) run alone again
    echo "== GPU tests and reproducers"
    (cd "$BUILD" && NNOP_REQUIRE_GPU=1 ctest --output-on-failure --timeout 150 \
        -R '^gpu[.]|^difftest[.]regress' >"$OUT/ctest_newops.log" 2>&1) || TEST_RC=1
    grep -E "tests passed|tests failed|Failed|\(Failed\)" "$OUT/ctest_newops.log" | tail -15
    J=${NNOP_DIFFTEST_JOBS:-8}
    difftest_fixed_new "$J" || TEST_RC=1
    # NNOP_DIFFTEST_COUNT=N: the older ops' fixed-seed set too (as `tests` runs it)
    if [ -n "${NNOP_DIFFTEST_COUNT:-}" ]; then
        echo "== difftest fixed-seed set: seeds 1..$J, $((NNOP_DIFFTEST_COUNT / J)) graphs each"
        difftest_jobs fixed "$J" 1 --count $((NNOP_DIFFTEST_COUNT / J)) || TEST_RC=1
    fi
    for c in ${NNOP_DIFFTEST_CASES:-}; do
        NNOP_REQUIRE_GPU=1 timeout 60 "$BUILD/tests/difftest/difftest" --backend cuda --new-ops \
            --case "$c" >"$OUT/difftest_case_$c.log" 2>&1
        echo "case $c: rc $? | $(grep -cE '^FAIL' "$OUT/difftest_case_$c.log") failures |" \
            "$(grep -E 'conditioning' "$OUT/difftest_case_$c.log" | grep -oE '[0-9]+$') tolerated as ill-conditioned"
    done
fi
checkpoint

if asked engines; then
    # nnop_plan_engines: the GPU test, and nnop-bench --engines on a fused conv chain per
    # dtype (every engine cuDNN offers, built and timed, and which policy takes it)
    echo "== engines"
    (cd "$BUILD" && NNOP_REQUIRE_GPU=1 ctest --output-on-failure --timeout 300 \
        -R '^gpu[.]engines$|^unit[.]plan_engines$' >"$OUT/ctest_engines.log" 2>&1) || TEST_RC=1
    grep -E "tests passed|tests failed|Failed|\(Failed\)|Test time" "$OUT/ctest_engines.log" | tail -8
    timeout 240 "$BUILD/tools/nnop-bench" --engines \
        "conv n32c64h56w56k64r3 p1 dt=f16 layout=nhwc post=bias,relu name=l1_3x3_64" \
        "conv n8c256h14w14k256r3 p1 dt=bf16 layout=nchw post=bias,add,relu name=bf16_nchw_add" \
        "conv n4c96h28w28k96r7 p3 g96 dt=f32 layout=nhwc name=dw7_f32" \
        --json "$OUT/nb_engines.json" >"$OUT/nb_engines.txt" 2>"$OUT/nb_engines.err" ||
        { echo "nnop-bench --engines: rc $?"; tail -5 "$OUT/nb_engines.err"; }
    grep -E "^== every|^  +[0-9]" "$OUT/nb_engines.txt" | head -80
fi
checkpoint

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

if asked difftest-random; then
    # a time-boxed random run (fresh seed, printed) of the differential tester on the GPU
    # (half the processes with the issue-15 ops in the graphs)
    J=$((${NNOP_DIFFTEST_JOBS:-8} / 2))
    seed=$(date +%s)
    echo "== difftest random: 2 x $J processes x ${NNOP_DIFFTEST_SECONDS:-600} s, seeds from $seed"
    # each set in a subshell of its own, so that each one's `wait -n` sees only its processes
    (difftest_jobs random "$J" "$seed" --time-limit "${NNOP_DIFFTEST_SECONDS:-600}") &
    p1=$!
    (difftest_jobs random_new "$J" "$((seed + 1000))" --time-limit "${NNOP_DIFFTEST_SECONDS:-600}" \
        --new-ops) &
    p2=$!
    wait $p1 || TEST_RC=1
    wait $p2 || TEST_RC=1
    ls "$OUT/difftest-repro" 2>/dev/null | head -20
fi
checkpoint

if asked vision-errors; then
    # each issue-15 network against PyTorch (float64) without stopping at the first miss: the
    # relative error of the CUDA backend fused and unfused (--no-fuse) and of the CPU backend,
    # f16 NHWC and f32 NCHW (the bounds are vision_nets_vs_torch.sh's)
    echo "== vision networks: relative error against PyTorch"
    vt=$(mktemp -d)
    for m in ${NNOP_VISION_NETS:-mobilenet_v3_large efficientnet_b0 convnext_tiny unet}; do
        python3 tools/export_vision_net.py "$m" --graph "$vt/$m.json" --weights "$vt/$m.safetensors" \
            --reference "$vt/$m.ref.safetensors" --batch 2 --size 64 >/dev/null 2>&1 || echo "$m: export failed"
        # NNOP_VISION_RUNS="cuda f16 nhwc" (comma-separated) runs some of them only
        IFS=, read -r -a runs <<<"${NNOP_VISION_RUNS:-cuda f16 nhwc,cuda f16 nhwc --no-fuse,cpu f16 nhwc,cuda f32 nchw,cuda f32 nhwc}"
        for run in "${runs[@]}"; do
            set -- $run
            e=$("$BUILD/examples/vision_net" --backend "$1" --dtype "$2" --layout "$3" ${4:-} \
                --graph "$vt/$m.json" --weights "$vt/$m.safetensors" --reference "$vt/$m.ref.safetensors" 2>&1 |
                grep -oE "reference: [a-z0-9_]+|relative error [0-9.e+-]+|same top-1 on [0-9]+ of [0-9]+" | tr '\n' ' ')
            echo "$m $run: $e"
        done
    done
    rm -rf "$vt"
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
if wants examples; then
    echo "== examples on the GPU (MNIST f32/f16, ResNet-50 vs PyTorch)"
    bash examples/check_examples.sh "$BUILD" >"$OUT/examples.log" 2>&1 || { TEST_RC=1; echo "examples FAILED"; }
    grep -E "^==|accuracy|agree|backend|rel|img/s|PASS|FAIL" "$OUT/examples.log" | head -40
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
        # ms, so the compile soon joins the prefetch (and helps with what is left)
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

if asked sanitize; then
    # compute-sanitizer over the own kernels and the threaded plan paths: the stem kernel's
    # cases (memcheck and racecheck), the network tests (prefetch and deserialization
    # threads), the cuBLASLt linear cases (memcheck), the pooling/softmax cases (memcheck) and
    # the shared-memory band and staging kernels (racecheck). NNOP_SANITIZE: another list of
    # tool:test[:filter]
    echo "== sanitize"
    san_n=0
    san() { # tool test [filter]
        san_n=$((san_n + 1))
        local log="$OUT/san_${san_n}_$1_$2.log"
        NNOP_REQUIRE_GPU=1 NNOP_TEST_FILTER="${3:-}" timeout 240 compute-sanitizer --tool "$1" \
            --error-exitcode 9 "$BUILD/tests/$2" >"$log" 2>&1
        echo "compute-sanitizer $1 $2 ${3:-}: rc $? | $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' \
            "$log" | tail -1) | $(grep -cE '^\[       OK' "$log") ok"
    }
    SAN_LIST=${NNOP_SANITIZE:-"memcheck:test_gpu_conv:*stem_kernel* racecheck:test_gpu_conv:*stem_kernel*
        memcheck:test_gpu_linear memcheck:test_gpu_network memcheck:test_gpu_pool
        racecheck:test_gpu_pool:*grouped* racecheck:test_gpu_pool:*bands*
        racecheck:test_gpu_pool:gap_f32_nchw_7x7_many"}
    set -f # the filters' * are cmocka's, not the shell's
    for spec in $SAN_LIST; do
        IFS=: read -r tool test filt <<<"$spec"
        san "$tool" "$test" "$filt"
    done
    set +f
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
if asked difftest-bg; then
    # issue 10's random run for longer than one device call allows (600 s a command): the
    # processes start here, detached, and the next call on the same warm machine collects them
    # (difftest-collect). Their logs go to the build folder, which that call still has.
    BG="$BUILD/difftest-bg"
    rm -rf "$BG" && mkdir -p "$BG"
    J=$((${NNOP_DIFFTEST_JOBS:-8} / 2))
    S=${NNOP_DIFFTEST_SECONDS:-600}
    seed=$(date +%s)
    echo "== difftest random, detached: 2 x $J processes x $S s, seeds from $seed and $((seed + 1000))"
    for ((j = 0; j < J; j++)); do
        for set in random random_new; do
            extra=
            sd=$((seed + j))
            [ $set = random_new ] && extra=--new-ops && sd=$((seed + 1000 + j))
            NNOP_REQUIRE_GPU=1 setsid nohup timeout $((S + 300)) "$BUILD/tests/difftest/difftest" \
                --backend cuda --seed $sd --repro-dir "$BG/repro" --time-limit "$S" $extra \
                >"$BG/difftest_${set}_$j.log" 2>&1 </dev/null &
        done
    done
    date +%s >"$BG/started"
    echo "$S" >"$BG/seconds"
    # a heartbeat: the next call sees from it whether detached work outlived this call
    setsid nohup bash -c 'while sleep 5; do date +%s >>"$0/heartbeat"; done' "$BG" \
        </dev/null >/dev/null 2>&1 &
    # this call holds on NNOP_BG_HOLD s (90), so that the next one's wait (580 s at most)
    # reaches the processes' end: 600 s + a minute after their start
    sleep "${NNOP_BG_HOLD:-90}"
    echo "started $(ls "$BG"/difftest_*.log | wc -l) processes at $(cat "$BG/started")"
fi

if asked difftest-collect; then
    # wait for difftest-bg's processes (until their time limit and a minute for the last
    # case, at most NNOP_COLLECT_WAIT s: 580 by default), then their summaries. The first
    # use waited a fixed 560 s, 574 s after the start of 600-s processes: none had finished,
    # so start them at least 60 s before the end of the call before (after its other stages)
    BG="$BUILD/difftest-bg"
    echo "== difftest random, detached: collect"
    if [ ! -f "$BG/started" ]; then
        echo "no detached run in $BG"
        TEST_RC=1
    else
        hb=$(tail -1 "$BG/heartbeat" 2>/dev/null || echo 0)
        echo "started $(cat "$BG/started"), now $(date +%s), last heartbeat $hb"
        end=$(($(cat "$BG/started") + $(cat "$BG/seconds" 2>/dev/null || echo 600) + 60))
        cap=$(($(date +%s) + ${NNOP_COLLECT_WAIT:-580}))
        [ "$end" -gt "$cap" ] && end=$cap
        while pgrep -f "difftest/difftest --backend cuda" >/dev/null && [ "$(date +%s)" -lt "$end" ]; do
            sleep 5
        done
        pgrep -f "difftest/difftest --backend cuda" >/dev/null && echo "still running: not all collected"
        echo "ended $(date +%s); $(($(date +%s) - $(cat "$BG/started"))) s after the start"
        cp "$BG"/difftest_*.log "$OUT/" 2>/dev/null
        cp -r "$BG/repro" "$OUT/difftest-repro" 2>/dev/null
        difftest_report "random, detached" $(($(date +%s) - $(cat "$BG/started"))) "$BG"/difftest_*.log
        grep -qE "^FAIL|^difftest: signal" "$BG"/difftest_*.log && TEST_RC=1
        pkill -f 'while sleep 5; do date' 2>/dev/null
    fi
fi
checkpoint
echo "== summary"
for f in "$OUT/bench_table_autotune.md" "$OUT/coldstart.txt" "$OUT/bench_kernels.md"; do
    [ -f "$f" ] && cat "$f"
done
grep -E "RESNET50" "$OUT/bench_resnet.txt" 2>/dev/null
grep -E "^SUMMARY" "$OUT/probe_knobs.md" 2>/dev/null
grep -E "tests passed|tests failed" "$OUT/ctest.log" 2>/dev/null
echo "== done (tests rc $TEST_RC)"
exit $TEST_RC
