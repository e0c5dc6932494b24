#!/usr/bin/env bash
# Call 5 (nvidia-h200-x2, repo root, .deps carried): what cuDNN offers for a layer norm
# (norm-forward) on 9.14 and PyTorch's 9.19 (nnop-bench --engines), and where the own
# affine layer-norm kernel (69% of the copy) spends its time (bench_kernels row, ncu).
set -u
R=$OUT
B=/tmp/nnop-build
export NNOP_BUILD_TARGETS="nnop-bench bench_kernels"
NNOP_DEADLINE=1 tools/gpu_run.sh build-only >"$R/build.txt" 2>&1
echo "build rc $? at $(date -u +%T)"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
C19=$(python3 -c "import os,nvidia.cudnn as m;print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])")/lib
mkdir -p "$R/x"
P="norm n64c96h56w56 kind=layer dt=f16 layout=nhwc name=ln_c_convnext"
Q="norm n64c96h56w56 kind=layer dt=f16 layout=nhwc post=gelu name=ln_c_gelu"
for v in 914 919; do
    if [ $v = 919 ]; then export NNOP_CUDNN_PATH=$C19; fi
    timeout 90 "$B/tools/nnop-bench" --engines "$P" >"$R/x/engines_ln_$v.txt" 2>&1
    timeout 60 "$B/tools/nnop-bench" --engines "$Q" >"$R/x/engines_ln_gelu_$v.txt" 2>&1
    echo "== cuDNN $v"; grep -vE "^\s*$" "$R/x/engines_ln_$v.txt" | head -20
    grep -iE "refused|engine|eng[0-9]" "$R/x/engines_ln_gelu_$v.txt" | head -8
done
unset NNOP_CUDNN_PATH
NNOP_BENCH_ONLY="layer norm" timeout 60 "$B/bench/bench_kernels" >"$R/x/bench_ln.md" 2>&1
grep -E "layer norm" "$R/x/bench_ln.md"
NNOP_BENCH_ONLY="layer norm over C, constant" timeout 120 ncu -k regex:norm_rows --launch-count 3 \
    --metrics "gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_(long_scoreboard|lg_throttle|barrier|wait|short_scoreboard|mio_throttle)_per_issue_active.ratio" \
    "$B/bench/bench_kernels" >"$R/x/ncu_ln.txt" 2>&1
grep -E "norm_rows|duration|throughput|warps_active|grid_size|block_size|registers|inst_executed|stalled" "$R/x/ncu_ln.txt" | head -40
tar czf "$R/call5.tgz" -C "$R/x" . && rm -rf "$R/x" "$R/logs.tgz" "$R/gpu_run.log"
