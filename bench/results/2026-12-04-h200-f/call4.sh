#!/usr/bin/env bash
# Call 4 (nvidia-h200-x2, repo root, .deps carried): ResNet-50 at batch 1 and 32 on the
# system's cuDNN 9.14 and, with nothing rebuilt, on PyTorch's cuDNN 9.19 (NNOP_CUDNN_PATH),
# beside PyTorch; the GPU conv and network tests on 9.19; per-kernel profiles at batch 1.
set -u
R=$OUT
B=/tmp/nnop-build
export NNOP_BUILD_TARGETS="bench_resnet prof_resnet test_gpu_conv test_gpu_network test_gpu_branches"
NNOP_DEADLINE=1 tools/gpu_run.sh build-only >"$R/build.txt" 2>&1
echo "build rc $? at $(date -u +%T)"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
C19=$(python3 -c "import os,nvidia.cudnn as m;print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])")/lib
ls "$C19" | head -20
mkdir -p "$R/x"
for run in 1 2; do
    "$B/bench/bench_resnet" --autotune 1 32 >"$R/x/resnet_914_$run.txt" 2>&1
    echo "9.14 run $run: $(grep -o 'RESNET50 batch [0-9]* | cuda_graph [01] | [0-9.]* ms' "$R/x/resnet_914_$run.txt" | tr '\n' ';')"
    NNOP_CUDNN_PATH=$C19 "$B/bench/bench_resnet" --autotune 1 32 >"$R/x/resnet_919_$run.txt" 2>&1
    echo "9.19 run $run: $(grep -o 'RESNET50 batch [0-9]* | cuda_graph [01] | [0-9.]* ms' "$R/x/resnet_919_$run.txt" | tr '\n' ';')"
done
grep -m3 -i "cudnn" "$R/x/resnet_919_1.txt"
PYTHONUNBUFFERED=1 timeout 200 python3 bench/torch_resnet.py 1 32 >"$R/x/torch.txt" 2>&1
grep -E "^TORCH_RESNET50" "$R/x/torch.txt"
for t in test_gpu_conv test_gpu_network test_gpu_branches; do
    NNOP_SIDE_STREAM=1 NNOP_CUDNN_PATH=$C19 NNOP_REQUIRE_GPU=1 timeout 150 "$B/tests/$t" >"$R/x/$t-919.txt" 2>&1
    echo "$t on 9.19 rc $? $(grep -E 'PASSED|FAILED' "$R/x/$t-919.txt" | tail -2 | tr '\n' ' ')"
done
NNOP_CUDNN_PATH=$C19 PYTHONUNBUFFERED=1 timeout 150 python3 bench/profile_kernels.py "$B/bench/libprof_resnet.so" \
    --batch 1 --no-compile >"$R/x/profile_b1_919.md" 2>&1
grep -E "SUMMARY|^\| \`" "$R/x/profile_b1_919.md" | head -24
tar czf "$R/call4.tgz" -C "$R/x" . && rm -rf "$R/x" "$R/logs.tgz" "$R/gpu_run.log"
