#!/bin/sh
# vision_nets_vs_torch.sh VISION_NET_BINARY EXPORT_SCRIPT [MODEL...]: each network through nnop
# against PyTorch with the same weights (tools/export_vision_net.py: seeded random weights, a
# batch of 2 at 64x64, PyTorch's output in float64): relative error (max |diff| / max |ref|)
# at most 1e-4 in f32 (NCHW and NHWC) and 2e-2 in f16 (the CPU backend rounds every node's result to f16, as
# PyTorch eager does: MobileNetV3's small random logits come to 1.1e-2), and the same top-1
# for the classifiers. Exits 77
# (CTest: skipped) when python3 has no torch and torchvision. Runs on the backend it
# is told: the CPU backend by default (the CUDA backend refuses these ops for now, issue 15;
# NNOP_VISION_BACKEND=auto|cuda to try it).
set -eu
bin=$1
export_py=$2
shift 2
[ $# -gt 0 ] || set -- mobilenet_v3_large efficientnet_b0 convnext_tiny unet
if ! python3 -c "import torch, torchvision" >/dev/null 2>&1; then
  echo "vision_nets_vs_torch: python3 has no torch and torchvision: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in "$@"; do
  echo "== $m"
  python3 "$export_py" "$m" --graph "$tmp/$m.json" --weights "$tmp/$m.safetensors" \
    --reference "$tmp/$m.ref.safetensors" --batch 2 --size 64
  for run in "f32 nchw" "f16 nchw" "f32 nhwc"; do
    set -- $run
    tol=1e-4
    [ "$1" = f16 ] && tol=2e-2
    "$bin" --backend "${NNOP_VISION_BACKEND:-cpu}" --graph "$tmp/$m.json" \
      --weights "$tmp/$m.safetensors" --reference "$tmp/$m.ref.safetensors" --dtype "$1" \
      --layout "$2" --max-rel-err "$tol"
  done
done
echo "vision_nets_vs_torch: passed"
