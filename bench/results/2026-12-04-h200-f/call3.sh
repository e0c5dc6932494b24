#!/usr/bin/env bash
# Call 3 (nvidia-h200-x2, right after call 2 on the warm machine: its build-gpu kept; a cold
# machine builds again): the difftest fixed-seed sets (plain, issue-15 ops, NaN/inf inputs,
# CUDA graphs with the side stream), memcheck, then ResNet-50 at batch 1 and 32 with the
# side stream on and off beside PyTorch.
set -u
R=$OUT
NNOP_BUILD_DIR=$PWD/build-gpu NNOP_SKIP_BUILD=1 NNOP_SKIP_CTEST=1 NNOP_DEADLINE=${CALL_DEADLINE:-400} \
    NNOP_DIFFTEST_COUNT=1000 NNOP_DIFFTEST_NEW_COUNT=1000 NNOP_DIFFTEST_SPECIAL_COUNT=1000 \
    NNOP_DIFFTEST_GRAPH_COUNT=1000 NNOP_DIFFTEST_MEMCHECK_COUNT=40 NNOP_MEMCHECK_TIMEOUT=80 \
    NNOP_SIDE_RUNS=1 tools/gpu_run.sh tests,side
