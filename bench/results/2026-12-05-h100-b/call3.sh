#!/usr/bin/env bash
# Call 3 (2026-12-05, fifth session), repo root: ConvNeXt-T (layer norm + GELU after every
# depthwise conv, GELU in every block's MLP) beside torch.compile in one run, on the code of
# calls 1-2 (gelu_16, bf16 words, the norm's prefetch).
set -u
export NNOP_BUILD_DIR=$PWD/build-gpu NNOP_BUILD_TARGETS="nnop-bench"
NNOP_VISION_NETS=${NETS:-convnext_tiny} NNOP_DEADLINE=${DL:-420} timeout ${TO:-470} tools/gpu_run.sh vision 2>&1 |
    grep -vE "^-- |^\[" | tail -40
echo "== end $(date -u +%T)"
