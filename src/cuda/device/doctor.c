/* doctor.c: the CUDA/cuDNN half of nnop_diagnose: versions built against and loaded, each
 * cuDNN sub-library, cuBLASLt, and the devices. Every probe is independent, so one missing
 * piece never hides the others. */
#include <stdio.h>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "cuda/device/device.h"

static void version_line(nnop__text *r, const char *what, int v)
{
    nnop__textf(r, "%-28s %d.%d\n", what, v / 1000, (v % 1000) / 10);
}

static void cudnn_checks(nnop__text *r)
{
    size_t loaded = cudnnGetVersion();
    const char *verdict = (loaded / 10000 == CUDNN_MAJOR) ? "ok" : "MISMATCH: major differs";
    struct {
        const char *name;
        cudnnStatus_t (*check)(void);
    } subs[] = {{"graph", cudnnGraphVersionCheck},
                {"ops", cudnnOpsVersionCheck},
                {"cnn", cudnnCnnVersionCheck},
                {"adv", cudnnAdvVersionCheck}};
    static const char *const engine_libs[] = {"libcudnn_engines_precompiled.so.9",
                                              "libcudnn_engines_runtime_compiled.so.9",
                                              "libcudnn_heuristic.so.9"};
    size_t i;
    nnop__textf(r, "%-28s %d.%d.%d\n", "cuDNN built against", CUDNN_MAJOR, CUDNN_MINOR,
                CUDNN_PATCHLEVEL);
    nnop__textf(r, "%-28s %zu.%zu.%zu (%s)\n", "cuDNN loaded", loaded / 10000,
                (loaded % 10000) / 100, loaded % 100, verdict);
    version_line(r, "cuDNN's CUDA runtime", (int)cudnnGetCudartVersion());
    for (i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        cudnnStatus_t s = subs[i].check();
        nnop__textf(r, "cuDNN sub-library %-10s %s\n", subs[i].name,
                    s == CUDNN_STATUS_SUCCESS ? "ok" : cudnnGetErrorString(s));
    }
#ifndef _WIN32
    for (i = 0; i < sizeof engine_libs / sizeof engine_libs[0]; i++)
        nnop__textf(r, "%-28s %s\n", engine_libs[i],
                    nnop__platform_can_load(engine_libs[i]) ? "loads"
                                                            : "MISSING (cannot be loaded)");
#else
    (void)engine_libs;
#endif
}

static void device_lines(nnop__text *r)
{
    int n = 0, i;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        nnop__textf(r, "%-28s none (%s)\n", "CUDA devices", cudaGetErrorString(e));
        (void)cudaGetLastError();
        return;
    }
    nnop__textf(r, "%-28s %d\n", "CUDA devices", n);
    for (i = 0; i < n; i++) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
            continue;
        nnop__textf(r, "  device %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", i, prop.name, prop.major,
                    prop.minor, prop.multiProcessorCount,
                    (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    }
}

void nnop__cuda_diagnose(nnop__text *t)
{
    int rt = 0, drv = 0;
    nnop__textf(t, "%-28s %d.%d\n", "CUDA runtime built against", CUDART_VERSION / 1000,
                (CUDART_VERSION % 1000) / 10);
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
        version_line(t, "CUDA runtime loaded", rt);
    if (cudaDriverGetVersion(&drv) != cudaSuccess || drv == 0)
        nnop__textf(t, "%-28s none installed\n", "CUDA driver");
    else
        version_line(t, "CUDA driver supports", drv);
    cudnn_checks(t);
    {
        size_t v = cublasLtGetVersion();
        nnop__textf(t, "%-28s %zu.%zu.%zu\n", "cuBLASLt loaded", v / 10000, (v % 10000) / 100,
                    v % 100);
    }
    device_lines(t);
}
