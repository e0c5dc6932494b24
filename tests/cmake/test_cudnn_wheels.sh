#!/bin/sh
# test_cudnn_wheels.sh SOURCE_DIR VERSION...: nnop built against real cuDNN releases, each from
# its pip wheel (nvidia-cudnn-cu12==VERSION from PyPI; run by .ci/run, which has the network).
# For each: configure with CUDNN_ROOT at the wheel's nvidia/cudnn and check the build's own
# report (the version, the header and the library from that root), build the library and the
# doctor with warnings as errors, check that device.c's compile line finds that cudnn.h, and
# that the doctor, pointed at the wheel with NNOP_CUDNN_PATH, loads that release's libraries.
# A version below the floor (src/internal.h; 9.0 since issue 48, so no 9.x release) must be
# refused at configure instead.
set -eu
SRC=$(cd "${1:?usage: test_cudnn_wheels.sh SOURCE_DIR VERSION...}" && pwd)
shift
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
. "$(dirname "$0")/cudnn_header_version.sh"
FLOOR=$(sed -n 's/^#define NNOP_CUDNN_MIN_VERSION \([0-9]*\).*/\1/p' "$SRC/src/internal.h")

# extract WHEEL DIR: only the headers and libraries of the wheel
extract() {
    python3 - "$1" "$2" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in z.namelist():
        if n.startswith(("nvidia/cudnn/include/", "nvidia/cudnn/lib/")):
            z.extract(n, sys.argv[2])
PY
}

for v in "$@"; do
    echo "== cuDNN $v from its wheel"
    mkdir -p "$W/dl"
    python3 -m pip download -q --no-deps --only-binary=:all: --dest "$W/dl" \
        "nvidia-cudnn-cu12==$v" || fail "pip download nvidia-cudnn-cu12==$v"
    extract "$W"/dl/*.whl "$W/$v"
    rm -rf "$W/dl"
    root="$W/$v/nvidia/cudnn"
    short=$(echo "$v" | cut -d. -f1-3)
    num=$(echo "$short" | awk -F. '{print $1 * 10000 + $2 * 100 + $3}')
    b="$W/b-$v"
    if [ "$num" -lt "$FLOOR" ]; then
        if cmake -S "$SRC" -B "$b" -DCUDNN_ROOT="$root" >"$W/$v.log" 2>&1; then
            cat "$W/$v.log"
            fail "configure accepted cuDNN $v, below the floor $FLOOR"
        fi
        grep -q "nnop needs cuDNN >=" "$W/$v.log" || { cat "$W/$v.log"; fail "no floor in the error"; }
        echo "ok: $v refused at configure (floor $FLOOR)"
        rm -rf "$W/$v" "$b"
        continue
    fi
    # one CUDA architecture: the kernels do not see cuDNN, and five releases are built
    cmake -S "$SRC" -B "$b" -DCUDNN_ROOT="$root" -DNNOP_WERROR=ON -DNNOP_BUILD_TESTS=OFF \
        -DNNOP_BUILD_EXAMPLES=OFF -DNNOP_BUILD_BENCH=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
        -DNNOP_CUDA_ARCHITECTURES=90 >"$W/$v.log" 2>&1 || { cat "$W/$v.log"; fail "configure against $v"; }
    report=$(grep "^-- nnop: CUDA" "$W/$v.log") || { cat "$W/$v.log"; fail "no cuDNN line in the report"; }
    echo "$report"
    case "$report" in
    *"cuDNN $short (header $root/include, library $root/lib/libcudnn.so.9)"*) ;;
    *) fail "the report does not name cuDNN $short from $root" ;;
    esac
    cmake --build "$b" -j "$(nproc 2>/dev/null || echo 2)" --target nnop nnop-doctor \
        >"$W/$v.build.log" 2>&1 || { tail -40 "$W/$v.build.log"; fail "build against $v"; }
    # the cudnn.h that device.c's compile line finds first
    got=$(header_version "$b") || fail "cudnn.h does not preprocess"
    [ "$got" = "$short" ] || fail "device.c compiles against cudnn.h $got, not $short"
    # the doctor (exit status aside: a cu12 wheel beside CUDA 13 is a problem it reports)
    out=$(NNOP_CUDNN_PATH="$root/lib" "$b/tools/nnop-doctor" 2>&1) || true
    echo "$out" | grep -q "cuDNN built against *$short" || { echo "$out"; fail "doctor: built against"; }
    echo "$out" | grep -q "libcudnn_graph.so.9: $root/lib/libcudnn_graph.so.9 ($short" ||
        { echo "$out"; fail "doctor: the wheel's graph library not loaded"; }
    echo "ok: built against $short (header, library and loaded graph library from the wheel)"
    rm -rf "$W/$v" "$b"
done
