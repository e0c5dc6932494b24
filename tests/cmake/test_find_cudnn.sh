#!/bin/sh
# test_find_cudnn.sh SOURCE_DIR: cmake/FindCUDNN.cmake finds cuDNN as one installation.
# Fake installations under a temporary folder (the real headers copied, CUDNN_MINOR edited;
# the real libraries symlinked), with the toolkit's own cuDNN still present:
#   - CUDNN_ROOT=<9.5 tree>: configure reports 9.5 from that root, its library folder is the
#     one the run-time loader falls back to (nothing of cuDNN is linked), and its cudnn.h is
#     the one the compile line finds (not the toolkit's);
#   - CUDNN_PATH (environment) to the same tree: the same;
#   - CUDNN_ROOT=<9.0 tree>: found (9.0 is the floor, src/internal.h);
#   - the module with CUDNN_MIN_VERSION above the tree's version: configure stops, naming it;
#   - CUDNN_ROOT=<8.9 tree>: configure stops (cuDNN 9 only);
#   - a pip wheel's layout (lib/libcudnn.so.9 only): found;
#   - CUDNN_ROOT to a folder without cuDNN: configure stops (no silent fallback);
#   - Windows installer (include/12.8, lib/12.8/x64, bin/12.8) and zip layouts, configured
#     as Windows with the MinGW-w64 cross compiler where it is installed.
# Exits 77 (skipped) when no real cuDNN 9 is installed to copy from.
set -eu
SRC=$(cd "${1:?usage: test_find_cudnn.sh SOURCE_DIR}" && pwd)
CUDA=${CUDA_HOME:-/usr/local/cuda}
REAL_INC=$CUDA/include
REAL_LIB=$CUDA/lib64
if [ ! -f "$REAL_INC/cudnn_version.h" ] || [ ! -e "$REAL_LIB/libcudnn.so.9" ]; then
    echo "no cuDNN 9 under $CUDA to copy from: skipped"
    exit 77
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# fake_tree DIR MINOR LIBDIR LIBNAMES...
fake_tree() {
    d=$1 minor=$2 libdir=$3
    shift 3
    mkdir -p "$d/include" "$d/$libdir"
    cp "$REAL_INC"/cudnn*.h "$d/include/"
    # the version and each sub-library header's own copy of it (they are compared)
    sed -i "s/^#define \(CUDNN[A-Z_]*_MINOR\) .*/#define \1 $minor/" "$d"/include/cudnn*.h
    for n in "$@"; do
        ln -s "$(readlink -f "$REAL_LIB/libcudnn.so.9")" "$d/$libdir/$n"
    done
}
fake_tree "$W/cudnn-9.5" 5 lib libcudnn.so libcudnn.so.9
fake_tree "$W/cudnn-9.0" 0 lib libcudnn.so libcudnn.so.9
fake_tree "$W/cudnn-8.9" 9 lib libcudnn.so libcudnn.so.9
sed -i "s/^#define \(CUDNN[A-Z_]*_MAJOR\) .*/#define \1 8/" "$W"/cudnn-8.9/include/cudnn*.h
fake_tree "$W/wheel/nvidia/cudnn" 7 lib libcudnn.so.9
mkdir -p "$W/empty"

# configure NAME ARGS...: the project, library only (no tests, examples, bench), quiet
configure() {
    name=$1
    shift
    cmake -S "$SRC" -B "$W/b-$name" -DNNOP_BUILD_TESTS=OFF -DNNOP_BUILD_EXAMPLES=OFF \
        -DNNOP_BUILD_BENCH=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" >"$W/$name.log" 2>&1
}

# The cudnn.h that device.c's compile line finds first: its CUDNN_MINOR.
. "$(dirname "$0")/cudnn_header_version.sh"
header_minor() {
    v=$(header_version "$1") || fail "cudnn.h does not preprocess"
    echo "$v" | cut -d. -f2
}

echo "== CUDNN_ROOT to a 9.5 tree, the toolkit's $(sed -n 's/^#define CUDNN_MINOR /9./p' "$REAL_INC/cudnn_version.h") beside it"
configure root95 -DCUDNN_ROOT="$W/cudnn-9.5" || { cat "$W/root95.log"; fail "configure"; }
grep -q "cuDNN 9.5.0 at $W/cudnn-9.5" "$W/root95.log" || { cat "$W/root95.log"; fail "not 9.5 from the root"; }
grep -q "library: $W/cudnn-9.5/lib/libcudnn.so" "$W/root95.log" || fail "library not from the root"
# cuDNN is loaded at run time (src/cuda/device/libs.c): never on the link line, and the
# root's folder is where the loader looks when the search path has none
if grep -q "libcudnn" "$W/b-root95/CMakeFiles/nnop.dir/link.txt" 2>/dev/null; then
    fail "the link line names libcudnn (it is loaded at run time)"
fi
grep -q "NNOP_CUDNN_BUILD_DIR=[^ ]*$W/cudnn-9.5/lib[^/]" "$W/b-root95/compile_commands.json" ||
    fail "the loader's last folder is not the root's library folder"
m=$(header_minor "$W/b-root95")
[ "$m" = 5 ] || fail "device.c's compile line finds cudnn.h of minor $m, not the root's 5"
echo "ok: 9.5 header, library and version from $W/cudnn-9.5"

echo "== CUDNN_PATH (environment) to the 9.5 tree"
CUDNN_PATH="$W/cudnn-9.5" configure env95 || { cat "$W/env95.log"; fail "configure"; }
grep -q "cuDNN 9.5.0 at $W/cudnn-9.5" "$W/env95.log" || { cat "$W/env95.log"; fail "not 9.5"; }
echo "ok"

echo "== CUDNN_ROOT to a 9.0 tree: the floor, accepted"
configure root90 -DCUDNN_ROOT="$W/cudnn-9.0" || { cat "$W/root90.log"; fail "configure refused cuDNN 9.0"; }
grep -q "cuDNN 9.0.0 at $W/cudnn-9.0" "$W/root90.log" || { cat "$W/root90.log"; fail "not 9.0"; }
echo "ok"

echo "== a floor above the found version (the module's CUDNN_MIN_VERSION): refused"
mkdir -p "$W/floorproj"
cat >"$W/floorproj/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.22)
project(findfloor C)
list(APPEND CMAKE_MODULE_PATH "$SRC/cmake")
set(CUDNN_MIN_VERSION 90100)
find_package(CUDNN REQUIRED)
CM
if cmake -S "$W/floorproj" -B "$W/b-floor" -DCUDNN_ROOT="$W/cudnn-9.0" >"$W/floor.log" 2>&1; then
    cat "$W/floor.log"
    fail "configure accepted cuDNN 9.0 below a floor of 9.1"
fi
grep -q "nnop needs cuDNN >= 9.1.0" "$W/floor.log" || { cat "$W/floor.log"; fail "no floor in the error"; }
echo "ok: refused"

echo "== CUDNN_ROOT to a cuDNN 8 tree: refused"
if configure root89 -DCUDNN_ROOT="$W/cudnn-8.9"; then
    cat "$W/root89.log"
    fail "configure accepted cuDNN 8.9"
fi
grep -q "nnop needs cuDNN 9.x" "$W/root89.log" || { cat "$W/root89.log"; fail "no major in the error"; }
echo "ok: refused"

echo "== a pip wheel's layout (lib/libcudnn.so.9 only)"
configure wheel -DCUDNN_ROOT="$W/wheel/nvidia/cudnn" || { cat "$W/wheel.log"; fail "configure"; }
grep -q "library: $W/wheel/nvidia/cudnn/lib/libcudnn.so.9" "$W/wheel.log" || { cat "$W/wheel.log"; fail "wheel"; }
[ "$(header_minor "$W/b-wheel")" = 7 ] || fail "the wheel's header is not the one compiled against"
echo "ok"

echo "== CUDNN_ROOT without cuDNN: an error, not the toolkit's"
if configure empty -DCUDNN_ROOT="$W/empty"; then
    fail "configure fell back to another cuDNN"
fi
grep -q "no complete cuDNN installation" "$W/empty.log" || { cat "$W/empty.log"; fail "message"; }
echo "ok"

if command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
    # Windows layouts: empty files stand for the headers' version, cudnn.lib and the DLL
    win_tree() { # DIR INC LIB BIN
        mkdir -p "$1/$2" "$1/$3" "$1/$4"
        cp "$REAL_INC/cudnn_version.h" "$1/$2/"
        sed -i "s/^#define CUDNN_MINOR .*/#define CUDNN_MINOR 8/" "$1/$2/cudnn_version.h"
        : >"$1/$2/cudnn.h"
        : >"$1/$3/cudnn.lib"
        : >"$1/$4/cudnn64_9.dll"
    }
    win_tree "$W/win-installer" include/12.8 lib/12.8/x64 bin/12.8
    mkdir -p "$W/win-installer/include/11.8" # an older CUDA's folder is not taken
    win_tree "$W/win-zip" include lib/x64 bin
    mkdir -p "$W/winproj"
    cat >"$W/winproj/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.22)
project(findwin C)
list(APPEND CMAKE_MODULE_PATH "$SRC/cmake")
set(CUDAToolkit_VERSION_MAJOR 12)
set(CUDNN_MIN_VERSION 90000)
find_package(CUDNN REQUIRED)
CM
    for t in installer zip; do
        echo "== Windows $t layout (MinGW-w64 cross configure)"
        cmake -S "$W/winproj" -B "$W/b-win-$t" -DCMAKE_SYSTEM_NAME=Windows \
            -DCMAKE_C_COMPILER=x86_64-w64-mingw32-gcc -DCUDNN_PATH="$W/win-$t" \
            >"$W/win-$t.log" 2>&1 || { cat "$W/win-$t.log"; fail "Windows $t configure"; }
        grep -q "cuDNN 9.8.0 at $W/win-$t" "$W/win-$t.log" || { cat "$W/win-$t.log"; fail "$t"; }
    done
    grep -q "header:  $W/win-installer/include/12.8/cudnn.h" "$W/win-installer.log" || fail "installer header"
    grep -q "library: $W/win-installer/lib/12.8/x64/cudnn.lib" "$W/win-installer.log" || fail "installer lib"
    grep -q "DLLs:    $W/win-installer/bin/12.8" "$W/win-installer.log" || fail "installer DLLs"
    grep -q "library: $W/win-zip/lib/x64/cudnn.lib" "$W/win-zip.log" || fail "zip lib"
    grep -q "DLLs:    $W/win-zip/bin" "$W/win-zip.log" || fail "zip DLLs"
    echo "ok: both Windows layouts"
fi
echo "all FindCUDNN checks passed"
