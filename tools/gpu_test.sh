#!/usr/bin/env bash
# gpu_test.sh: build and test on a GPU machine (repo root): the Release build of
# tools/gpu_common.sh, then every test with NNOP_REQUIRE_GPU=1 (a skipped GPU test fails) and
# the differential tester's fixed-seed sets, under compute-sanitizer too. Logs go to $OUT
# (default /tmp/nnop-out): gpu_test.log and logs.tgz. Exit status: 0 when every test passed.
#   usage: tools/gpu_test.sh [build|tests|newops|engines|doctor|bench-check|examples|vision-errors|sanitize|difftest-random|difftest-bg|difftest-collect|all]
#   build: only the build. Default all: tests and examples. Several modes may be given,
#   comma-separated; they run in the script's order (printed first), not in the order given.
# The benchmarks are bench/gpu_bench.sh's.
set -u
WHAT=${1:-all}
. "$(dirname "$0")/gpu_common.sh"
[ "$WHAT" = build ] && exit 0

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

if wants examples; then
    echo "== examples on the GPU (MNIST f32/f16, ResNet-50 vs PyTorch)"
    bash examples/check_examples.sh "$BUILD" >"$OUT/examples.log" 2>&1 || { TEST_RC=1; echo "examples FAILED"; }
    grep -E "^==|accuracy|agree|backend|rel|img/s|PASS|FAIL" "$OUT/examples.log" | head -40
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
grep -E "tests passed|tests failed" "$OUT/ctest.log" 2>/dev/null
echo "== done (tests rc $TEST_RC)"
exit $TEST_RC
