#!/usr/bin/env bash
# Call 1 (2026-12-05, fifth session), repo root, .deps carried: every test of the next-call
# script on the code with GELU for 16-bit outputs from erfc's A&S 7.1.26 form (epilogue.cuh
# gelu_16), then exp_norm.cu's four variants: A = HEAD (erff GELU), B = gelu_16, C = erff +
# next position's x loaded before this one's math, D = gelu_16 + that prefetch.
set -u
E=bench/results/2026-12-05-h100-b
F="-std=c++17 -O3 -arch=sm_90 -DNORM_FILE=\"cuda/kernels/norm.cu\""
X="-I$E/exact -Iinclude -Isrc"; N="-Iinclude -Isrc"
nvcc $F $X $E/exp_norm.cu -o /tmp/expA > /tmp/expA.txt 2>&1 &
nvcc $F $N $E/exp_norm.cu -o /tmp/expB > /tmp/expB.txt 2>&1 &
nvcc $F $X -DNNOP_NORM_PREFETCH=1 $E/exp_norm.cu -o /tmp/expC > /tmp/expC.txt 2>&1 &
nvcc $F $N -DNNOP_NORM_PREFETCH=1 $E/exp_norm.cu -o /tmp/expD > /tmp/expD.txt 2>&1 &
CALL_TOTAL=${CALL_TOTAL:-470} bash bench/next-gpu-call.sh
wait
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in A B C D; do echo "== exp $v"; tail -3 /tmp/exp$v.txt; timeout 40 /tmp/exp$v; done
echo "== end $(date -u +%T)"
