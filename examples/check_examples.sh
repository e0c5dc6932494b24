#!/usr/bin/env bash
# check_examples.sh BUILD_DIR: run the bundled examples as checks on whatever backend the
# machine has (the GPU when there is one): both MNIST classifiers in f32 and f16, and, where
# python3 has torch, ResNet-50 against PyTorch with the same weights (relative error of the
# logits below 1e-4 in f32 and 1e-2 in f16). Exits non-zero on the first failure.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/examples"
for model in lenet resnet; do
  floor=0.98; [ "$model" = resnet ] && floor=0.985
  for dtype in f32 f16; do
    echo "== classify_mnist $model --dtype $dtype"
    "$bin/classify_mnist" "$model" --dtype "$dtype" --show 0 --min-accuracy "$floor"
  done
done
if python3 -c "import torch" 2>/dev/null; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "== tools/export_resnet50.py (reference logits by PyTorch, float64)"
  python3 "$here/../tools/export_resnet50.py" --out "$tmp/r50.safetensors" \
    --reference "$tmp/r50_ref.safetensors" --batch 4 --size 224
  echo "== resnet50 f32 against PyTorch"
  "$bin/resnet50" --weights "$tmp/r50.safetensors" --reference "$tmp/r50_ref.safetensors" \
    --top 3 --max-rel-err 1e-4
  echo "== resnet50 f16 against PyTorch"
  "$bin/resnet50" --weights "$tmp/r50.safetensors" --reference "$tmp/r50_ref.safetensors" \
    --top 3 --dtype f16 --max-rel-err 1e-2
else
  echo "== resnet50 against PyTorch: skipped (python3 has no torch)"
fi
echo "check_examples: all passed"
