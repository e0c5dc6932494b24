#!/bin/sh
# vision_nets_vs_torch.sh VISION_NET_BINARY EXPORT_SCRIPT [MODEL...]: each network through nnop
# against PyTorch with the same weights (tools/export_vision_net.py: seeded random weights, a
# batch of 2 at 64x64, PyTorch's output in float64; for f16 runs, float64 from the same
# f16-rounded weights and input, so the bound is on arithmetic, not on the rounding of the
# weights, which is the same for every f16 engine), and the same top-1 for the classifiers.
# On the CPU backend: relative error (max |diff| / max |ref|) at most 1e-4 in f32 (NCHW and
# NHWC) and 2e-2 in f16 (it rounds every node's result to f16, as PyTorch eager does; against
# the f16 reference MobileNetV3's small random logits come to 5.3e-3, against the f32 one to
# 1.1e-2, GPU log 2026-12-02-h200 in git history: docs/performance.md). On the CUDA backend (with
# NNOP_REQUIRE_GPU=1, or NNOP_VISION_BACKENDS="cpu cuda"): 1e-3 in f32 (TF32 off, both
# layouts) and 1e-2 in f16 NHWC (issue 15). Exits 77 (CTest: skipped) when python3 has no
# torch and torchvision.
set -eu
bin=$1
export_py=$2
shift 2
[ $# -gt 0 ] || set -- mobilenet_v3_large efficientnet_b0 convnext_tiny unet
if ! python3 -c "import torch, torchvision" >/dev/null 2>&1; then
  echo "vision_nets_vs_torch: python3 has no torch and torchvision: skipped"
  exit 77
fi
backends=${NNOP_VISION_BACKENDS:-cpu}
[ "${NNOP_REQUIRE_GPU:-0}" = 1 ] && [ -z "${NNOP_VISION_BACKENDS:-}" ] && backends="cpu cuda"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in "$@"; do
  echo "== $m"
  python3 "$export_py" "$m" --graph "$tmp/$m.json" --weights "$tmp/$m.safetensors" \
    --reference "$tmp/$m.ref.safetensors" --batch 2 --size 64
  for backend in $backends; do
    if [ "$backend" = cpu ]; then
      runs="f32:nchw:1e-4 f16:nchw:2e-2 f32:nhwc:1e-4"
    else
      runs="f32:nchw:1e-3 f32:nhwc:1e-3 f16:nhwc:1e-2"
    fi
    for run in $runs; do
      dt=${run%%:*} rest=${run#*:}
      "$bin" --backend "$backend" --graph "$tmp/$m.json" \
        --weights "$tmp/$m.safetensors" --reference "$tmp/$m.ref.safetensors" --dtype "$dt" \
        --layout "${rest%%:*}" --max-rel-err "${rest#*:}"
    done
  done
done
echo "vision_nets_vs_torch: passed"
