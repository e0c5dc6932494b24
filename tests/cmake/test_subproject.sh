#!/bin/sh
# test_subproject.sh SOURCE_DIR: nnop inside another project (add_subdirectory, as a vendored
# folder or FetchContent gives it), CPU-only so it builds in a minute:
#   - the parent's own targets named like nnop's internal ones (quickstart, test_graph)
#     configure: nnop adds no tests, examples, benchmarks or tools to a parent;
#   - the parent's ctest lists its own test alone;
#   - nnop::nnop links, the program runs a conv + bias + ReLU and gets the hand-computed value;
#   - the parent's install holds nothing of nnop, and with NNOP_INSTALL=ON the library, its
#     header and package files;
#   - find_package(nnop 0.1) takes the installed 0.1.0; 0.2 (another minor of a 0.x release)
#     and an unknown component are refused, the latter saying which.
set -eu
SRC=$(cd "${1:?usage: test_subproject.sh SOURCE_DIR}" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

mkdir -p "$W/parent"
cat > "$W/parent/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.22)
project(parent C)
enable_testing()
add_subdirectory("$SRC" nnop)
add_executable(app app.c)
target_link_libraries(app PRIVATE nnop::nnop)
add_test(NAME parent.app COMMAND app)
# names nnop uses for its own examples and tests when it is the top-level project
add_executable(quickstart app.c)
target_link_libraries(quickstart PRIVATE nnop::nnop)
add_executable(test_graph app.c)
target_link_libraries(test_graph PRIVATE nnop::nnop)
install(TARGETS app RUNTIME DESTINATION bin)
CM
cat > "$W/parent/app.c" <<'C'
/* 1 x 1 x 2 x 2 input, 1 x 1 x 1 x 1 weight 2, bias -1: relu(2 x - 1) */
#include <stdio.h>
#include <nnop/nnop.h>
int main(void)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_tensor_desc xd, wd, yd;
    float x[4] = {0.f, 0.5f, 1.f, 4.5f}, w = 2.f, b = -1.f, y[4];
    nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    if (nnop_context_create(&o, &ctx) != NNOP_OK)
        return 1;
    xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 2, 2);
    wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 1, 1);
    yd = xd;
    if (nnop_conv_bias_relu(ctx, &xd, x, &wd, &w, &b, &p, &yd, y) != NNOP_OK) {
        printf("%s\n", nnop_context_last_error(ctx));
        return 1;
    }
    nnop_context_destroy(ctx);
    printf("%g %g %g %g\n", y[0], y[1], y[2], y[3]);
    return y[0] == 0.f && y[1] == 0.f && y[2] == 1.f && y[3] == 8.f ? 0 : 1;
}
C
cmake -S "$W/parent" -B "$W/build" -DNNOP_WITH_CUDA=OFF >"$W/configure.log" 2>&1 ||
    { cat "$W/configure.log"; fail "a parent with targets quickstart and test_graph does not configure"; }
cmake --build "$W/build" -j2 >"$W/build.log" 2>&1 || { cat "$W/build.log"; fail "build"; }
"$W/build/app" || fail "the parent's program"
TESTS=$(ctest --test-dir "$W/build" -N | sed -n 's/^Total Tests: //p')
[ "$TESTS" = 1 ] || { ctest --test-dir "$W/build" -N; fail "the parent's ctest lists $TESTS tests, not its own 1"; }
for t in nnop-bench nnop-doctor classify_mnist difftest; do
    if [ -e "$W/build/nnop/tools/$t" ] || [ -e "$W/build/nnop/examples/$t" ] ||
        [ -e "$W/build/nnop/tests/$t" ]; then
        fail "$t was built for the parent"
    fi
done
cmake --install "$W/build" --prefix "$W/inst" >/dev/null
[ -x "$W/inst/bin/app" ] || fail "the parent's install lacks its own program"
if [ -e "$W/inst/include/nnop" ] || ls "$W/inst"/lib*/libnnop* >/dev/null 2>&1; then
    find "$W/inst"
    fail "the parent's install holds nnop's files without NNOP_INSTALL"
fi

cmake -S "$W/parent" -B "$W/build" -DNNOP_INSTALL=ON >/dev/null
cmake --build "$W/build" -j2 >/dev/null
cmake --install "$W/build" --prefix "$W/inst2" >/dev/null
# lib, or lib64 where GNUInstallDirs says so
for f in include/nnop/nnop.h "lib*/cmake/nnop/nnopConfig.cmake" "lib*/pkgconfig/nnop.pc" \
    "lib*/libnnop.so*"; do
    # shellcheck disable=SC2086
    ls "$W/inst2"/$f >/dev/null 2>&1 || fail "NNOP_INSTALL=ON: $f not installed"
done
if [ -e "$W/inst2/bin/nnop-bench" ]; then
    fail "NNOP_INSTALL=ON as a subproject: tools installed though not built"
fi

# the installed package's version rule for a 0.x release, and an unknown component
mkdir -p "$W/ver"
for req in "0.1" "0.2" "0.1 COMPONENTS bogus"; do
    cat > "$W/ver/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.22)
project(ver C)
find_package(nnop $req REQUIRED)
CM
    rm -rf "$W/ver/b"
    if cmake -S "$W/ver" -B "$W/ver/b" -DCMAKE_PREFIX_PATH="$W/inst2" >"$W/ver.log" 2>&1; then
        [ "$req" = "0.1" ] || { cat "$W/ver.log"; fail "find_package(nnop $req) took 0.1.0"; }
    else
        [ "$req" != "0.1" ] || { cat "$W/ver.log"; fail "find_package(nnop 0.1) refused 0.1.0"; }
        case $req in
        *bogus) tr -s '\n ' '  ' <"$W/ver.log" | grep -q "no component 'bogus'" ||
                    { cat "$W/ver.log"; fail "an unknown component is refused without its name"; } ;;
        esac
    fi
done
echo "all subproject checks passed"
