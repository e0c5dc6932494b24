/* doctor.c: the CUDA half of the installation report (../../doctor.h): the versions nnop was
 * built against, the CUDA runtime and driver, the devices. It calls no cuDNN function: libcudnn
 * loads libcudnn_graph lazily and aborts the process when it cannot, so the libraries are
 * probed one by one in doctor_probe.c instead (device/libs.c loads them for the backend). */
#include <stdio.h>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "cuda/device/device.h"
#include "doctor.h"

static void device_lines(nnop__doctor *d, int n)
{
    nnop__text t;
    int i;
    nnop__text_init(&t, d->devices, sizeof d->devices);
    for (i = 0; i < n; i++) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        nnop__textf(&t, "  device %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", i, prop.name, prop.major,
                    prop.minor, prop.multiProcessorCount,
                    (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    }
}

void nnop__cuda_doctor_build_facts(nnop__doctor *d)
{
    d->with_cuda = 1;
    d->cudnn_headers = (long)CUDNN_VERSION;
    d->cudart_built = (long)CUDART_VERSION;
    d->cublas_built = (long)CUBLAS_VERSION;
}

void nnop__cuda_doctor_facts(nnop__doctor *d)
{
    int rt = 0, drv = 0, n = 0;
    cudaError_t e;
    nnop__cuda_doctor_build_facts(d);
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
        d->cudart_loaded = rt;
    if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0)
        d->driver = drv; /* else 0 (no driver installed), or the probe's libcuda.so.1 version */
    (void)cudaGetLastError();
    e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0) {
        d->gpu = NNOP__DOC_GPU_OK;
        d->n_devices = n;
        device_lines(d, n);
        return;
    }
    (void)cudaGetLastError();
    if (e == cudaSuccess || e == cudaErrorNoDevice) {
        d->gpu = NNOP__DOC_GPU_NONE;
        snprintf(d->gpu_error, sizeof d->gpu_error, "%s",
                 e == cudaSuccess ? "no CUDA device" : cudaGetErrorString(e));
    } else if (e == cudaErrorInsufficientDriver && drv == 0) {
        d->gpu = NNOP__DOC_GPU_NONE; /* a machine without the NVIDIA driver */
        snprintf(d->gpu_error, sizeof d->gpu_error, "no CUDA driver installed (%s)",
                 cudaGetErrorName(e));
    } else if (e == cudaErrorInsufficientDriver) {
        d->gpu = NNOP__DOC_GPU_OLD_DRIVER;
        snprintf(d->gpu_error, sizeof d->gpu_error, "%s: %s", cudaGetErrorName(e),
                 cudaGetErrorString(e));
    } else {
        d->gpu = NNOP__DOC_GPU_ERROR;
        snprintf(d->gpu_error, sizeof d->gpu_error, "%s: %s", cudaGetErrorName(e),
                 cudaGetErrorString(e));
    }
}
