# cudnn_header_version.sh (sourced): header_version BUILD_DIR: the version (major.minor.patch)
# of the cudnn.h that src/cuda/device/device.c's compile line finds first, from the build's
# compile_commands.json; used by test_find_cudnn.sh and test_cudnn_wheels.sh.
header_version() {
    _flags=$(python3 - "$1/compile_commands.json" <<'PY'
import json, shlex, sys
for e in json.load(open(sys.argv[1])):
    if e["file"].endswith("src/cuda/device/device.c"):
        a = shlex.split(e["command"])
        out = []
        for i, x in enumerate(a):
            if x in ("-I", "-isystem"):
                out += [x, a[i + 1]]
            elif x.startswith(("-I", "-isystem")):
                out.append(x)
        print(" ".join(shlex.quote(x) for x in out))
        break
PY
    ) || return 1
    # shellcheck disable=SC2086
    eval "set -- $_flags"
    echo '#include <cudnn.h>' | cc "$@" -E -dM -x c - |
        awk '/^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{v[$2] = $3}
             END {print v["CUDNN_MAJOR"] "." v["CUDNN_MINOR"] "." v["CUDNN_PATCHLEVEL"]}'
}
