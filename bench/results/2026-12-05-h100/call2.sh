#!/usr/bin/env bash
# Call 2 (2026-12-05, fourth session): the layer-norm kernel variants of exp_norm.cu, then ncu
# on the f16 GELU launch of the landed kernel (A) and of the uncapped-grid variant (C).
set -u
cd "$(dirname "$0")"
I="-std=c++17 -O3 -arch=sm_90 -I../../../include -I../../../src"
B=/tmp/exp; mkdir -p $B
build() { nvcc $I "$@" exp_norm.cu -o "$B/$1x" 2>&1 | grep -v -i warn | head -5; }
nvcc $I -DNORM_FILE='"norm_head.cu"' exp_norm.cu -o $B/A &
nvcc $I -DNORM_FILE='"cuda/kernels/norm.cu"' -DNNOP_NORM_VEC_WAVES=1 exp_norm.cu -o $B/B &
nvcc $I -DNORM_FILE='"cuda/kernels/norm.cu"' -DNNOP_NORM_VEC_WAVES=0 exp_norm.cu -o $B/C &
nvcc $I -DNORM_FILE='"cuda/kernels/norm.cu"' -DNNOP_NORM_VEC_WAVES=2 exp_norm.cu -o $B/D &
nvcc $I -DNORM_FILE='"cuda/kernels/norm.cu"' -DNNOP_NORM_VEC_WAVES=0 -DNNOP_NORM_EPI_BLOCKS=4 exp_norm.cu -o $B/E &
nvcc $I -DNORM_FILE='"cuda/kernels/norm.cu"' -DNNOP_NORM_VEC_WAVES=0 -DNNOP_NORM_EPI_BLOCKS=2 exp_norm.cu -o $B/F &
wait
echo "built at $(date -u +%T)"; ls $B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in A B C D E F; do echo "== $v"; timeout 60 $B/$v; done
for v in A C; do
  timeout 120 ncu --clock-control none -k regex:norm_rows_vec --launch-skip 290 --launch-count 1 \
     --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
     --section MemoryWorkloadAnalysis $B/$v > "$OUT/ncu_$v.txt" 2>&1
  echo "ncu $v rc $?"; grep -E "Duration|Throughput|Registers|Achieved Occupancy|Theoretical Occupancy|Stall|Local" "$OUT/ncu_$v.txt" | head -30
done
cuobjdump -sass $B/A > "$OUT/sass_A.txt" 2>&1; cuobjdump -sass $B/C > "$OUT/sass_C.txt" 2>&1
echo "end $(date -u +%T)"
