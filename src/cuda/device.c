/* device.c: CUDA device discovery and (stub) CUDA backend until the GPU path lands. */
#include <cuda_runtime.h>

#include "internal.h"

int nnop__cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}

nnop_status nnop__cuda_context_init(nnop_context *ctx)
{
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "CUDA backend not built yet");
}

void nnop__cuda_context_fini(nnop_context *ctx)
{
    (void)ctx;
}

nnop_status nnop__cuda_set_stream(nnop_context *ctx, void *stream)
{
    (void)stream;
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "CUDA backend not built yet");
}

nnop_status nnop__cuda_synchronize(nnop_context *ctx)
{
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "CUDA backend not built yet");
}

nnop_status nnop__cuda_plan_build(nnop_plan *p)
{
    return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED, "CUDA backend not built yet");
}

nnop_status nnop__cuda_plan_execute(nnop_plan *p, const void *const *in, void *const *out)
{
    (void)in;
    (void)out;
    return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED, "CUDA backend not built yet");
}

void nnop__cuda_plan_destroy(nnop_plan *p)
{
    (void)p;
}

size_t nnop__cuda_partition_describe(const nnop_plan *p, int32_t i, char *buf, size_t len)
{
    (void)p;
    (void)i;
    if (len)
        buf[0] = '\0';
    return 0;
}
