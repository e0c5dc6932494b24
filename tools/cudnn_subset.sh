#!/bin/sh
# cudnn_subset.sh VERSION [NVRTC_VERSION]: the part of a cuDNN 9 release (its pip wheel,
# nvidia-cudnn-cu12==VERSION) that nnop's graphs need on a machine of runtime-compiled engines
# only, small enough to carry to the GPU machine (a device call carries at most 64 MiB, the
# working tree included; issue 48). Kept from the wheel:
#   include/cudnn*.h                          the headers (nnop is built against them: a
#                                             context refuses a cuDNN older than its headers)
#   lib/libcudnn.so.9                         the dispatcher nnop loads
#   lib/libcudnn_graph.so.9                   the backend graph API
#   lib/libcudnn_engines_runtime_compiled.so.9  the runtime-compiled (NVRTC) engines
#   lib/libcudnn_heuristic.so.9               the engine heuristics
#   nvrtc/libnvrtc.so.12, libnvrtc-builtins.so.12.*   CUDA 12's NVRTC (nvidia-cuda-nvrtc-cu12
#                                             ==NVRTC_VERSION, default 12.4.127): a cuDNN built
#                                             for CUDA 12 compiles its runtime engines with it,
#                                             and the GPU machine's toolkit is CUDA 13
# Left out: libcudnn_engines_precompiled.so.9 (the precompiled engines, 430-574 MB: what the
# precompiled-only policy needs), libcudnn_ops/cnn/adv.so.9 (the legacy and attention APIs,
# which nnop does not call), and NVRTC's .alt variants. None of the four kept libraries needs
# cuBLAS (readelf -d; their only dynamic load is NVRTC).
#
# Writes .cudnn/VERSION/cudnn-VERSION.tar.xz under the repository root (.cudnn/ is ignored:
# .git/info/exclude), which unpacks to cudnn-VERSION/{include,lib,nvrtc}; then prints the
# sizes: each file unpacked, the archive, and what a device call carrying it and .deps would
# take with the working tree. Wheels are downloaded once into $NNOP_WHEEL_DIR (default .whl/,
# ignored). tools/cudnn_gpu_run.sh unpacks and runs it on the GPU machine.
set -eu
VERSION=${1:?usage: tools/cudnn_subset.sh VERSION [NVRTC_VERSION], e.g. 9.0.0.312}
NVRTC=${2:-12.4.127}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHEELS=${NNOP_WHEEL_DIR:-$ROOT/.whl}
OUTDIR=$ROOT/.cudnn/$VERSION
NAME=cudnn-$VERSION
mkdir -p "$WHEELS" "$OUTDIR"
git -C "$ROOT" check-ignore -q "$OUTDIR/x" || {
    echo "$OUTDIR is not ignored by git: add /.cudnn/ to .git/info/exclude first" >&2
    exit 1
}

# wheel PACKAGE VERSION: the wheel's path, downloaded when not there yet
wheel() {
    glob=$(echo "$1" | tr - _)-$2-
    set -- "$1" "$2" "$WHEELS/$glob"*.whl
    if [ ! -f "$3" ]; then
        python3 -m pip download -q --no-deps --only-binary=:all: --dest "$WHEELS" "$1==$2" >&2
        set -- "$1" "$2" "$WHEELS/$glob"*.whl
    fi
    [ -f "$3" ] || { echo "no wheel of $1==$2 in $WHEELS" >&2; exit 1; }
    echo "$3"
}
CUDNN_WHL=$(wheel nvidia-cudnn-cu12 "$VERSION")
NVRTC_WHL=$(wheel nvidia-cuda-nvrtc-cu12 "$NVRTC")

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
python3 - "$CUDNN_WHL" "$NVRTC_WHL" "$W/$NAME" <<'PY'
import os, re, shutil, sys, zipfile
cudnn, nvrtc, out = sys.argv[1:4]
keep = {"libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_engines_runtime_compiled.so.9",
        "libcudnn_heuristic.so.9"}
def take(whl, want, sub):
    got = []
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            base = n.rsplit("/", 1)[-1]
            if want(n, base):
                os.makedirs(os.path.join(out, sub), exist_ok=True)
                with z.open(n) as src, open(os.path.join(out, sub, base), "wb") as dst:
                    shutil.copyfileobj(src, dst)
                got.append(base)
    return got
inc = take(cudnn, lambda n, b: n.startswith("nvidia/cudnn/include/") and b.endswith(".h"), "include")
lib = take(cudnn, lambda n, b: n.startswith("nvidia/cudnn/lib/") and b in keep, "lib")
rtc = take(nvrtc, lambda n, b: n.startswith("nvidia/cuda_nvrtc/lib/") and ".alt." not in b
           and re.match(r"libnvrtc(-builtins)?\.so\.12(\.\d+)?$", b), "nvrtc")
if set(lib) != keep or "cudnn_version.h" not in inc or "libnvrtc.so.12" not in rtc or \
        not any(b.startswith("libnvrtc-builtins") for b in rtc):
    sys.exit("the wheels lack files: lib %s, nvrtc %s" % (sorted(lib), sorted(rtc)))
PY
chmod 755 "$W/$NAME"/lib/* "$W/$NAME"/nvrtc/*

echo "== files kept (unpacked)"
(cd "$W" && find "$NAME" -type f \( -name '*.so*' \) -exec ls -l {} + | awk '{printf "%8.1f MB  %s\n", $5 / 1e6, $9}')
echo "$(cd "$W" && du -cb "$NAME"/include/* | tail -1 | awk '{printf "%8.1f MB", $1 / 1e6}')  $NAME/include (headers)"

echo "== compressing (xz -9; a few minutes)"
rm -f "$OUTDIR"/*.tar.xz
tar -C "$W" -cf - "$NAME" | xz -9 -T0 >"$OUTDIR/$NAME.tar.xz"
echo "nvidia-cudnn-cu12==$VERSION nvidia-cuda-nvrtc-cu12==$NVRTC" >"$OUTDIR/SOURCES"

mb() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
archive=$(wc -c <"$OUTDIR/$NAME.tar.xz")
# the working tree a device call copies: tracked files and untracked ones git does not ignore
tree=$(cd "$ROOT" && { git ls-files -z; git ls-files -z -o --exclude-standard; } |
    xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
deps=$(du -sb "$ROOT/.deps" 2>/dev/null | cut -f1)
deps=${deps:-0}
echo "== sizes"
echo "archive      $(mb "$archive")  .cudnn/$VERSION/$NAME.tar.xz"
echo "working tree $(mb "$tree")"
echo ".deps        $(mb "$deps")"
echo "device call  $(mb $((archive + tree + deps))) of 64 MiB (carry: .deps .cudnn/$VERSION)"
