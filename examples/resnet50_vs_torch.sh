#!/bin/sh
# resnet50_vs_torch.sh RESNET50_BINARY EXPORT_SCRIPT: ResNet-50 through nnop against PyTorch
# with the same weights: relative error of the logits (max |diff| / max |logit|) below 1e-4 in
# f32 and 1e-2 in f16. Exits 77 (CTest: skipped) when python3 has no torch. On a GPU machine
# (nvidia-smi works, or NNOP_REQUIRE_GPU=1) it runs a batch of 4 at 224x224 on the GPU,
# otherwise a batch of 2 at 64x64 on whatever backend nnop picks.
set -eu
bin=$1
export_py=$2
if ! python3 -c "import torch" >/dev/null 2>&1; then
  echo "resnet50_vs_torch: python3 has no torch: skipped"
  exit 77
fi
backend=auto batch=2 size=64
if [ "${NNOP_REQUIRE_GPU:-0}" = 1 ] || nvidia-smi -L >/dev/null 2>&1; then
  backend=cuda batch=4 size=224
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$export_py" --out "$tmp/w.safetensors" --reference "$tmp/ref.safetensors" \
  --batch "$batch" --size "$size"
"$bin" --backend "$backend" --weights "$tmp/w.safetensors" --reference "$tmp/ref.safetensors" \
  --top 1 --max-rel-err 1e-4
"$bin" --backend "$backend" --weights "$tmp/w.safetensors" --reference "$tmp/ref.safetensors" \
  --top 1 --dtype f16 --max-rel-err 1e-2
echo "resnet50_vs_torch: passed"
