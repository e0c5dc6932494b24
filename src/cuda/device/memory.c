/* memory.c: device memory for nnop_malloc/nnop_copy_in/nnop_copy_out. */
#include <cuda_runtime.h>

#include "cuda/device/device.h"

cudaError_t nnop__dev_malloc(const nnop_allocator *a, void **out, size_t bytes)
{
    if (!bytes)
        bytes = 1;
    if (!a || !a->device_alloc)
        return cudaMalloc(out, bytes);
    *out = a->device_alloc(a->user, bytes);
    return *out ? cudaSuccess : cudaErrorMemoryAllocation;
}

void nnop__dev_free(const nnop_allocator *a, void *p)
{
    if (!p)
        return;
    if (a && a->device_free)
        a->device_free(a->user, p);
    else if (cudaFree(p) != cudaSuccess)
        (void)cudaGetLastError(); /* not sticky: later calls start clean */
}

nnop_status nnop__cuda_malloc(nnop_context *ctx, size_t bytes, void **out)
{
    int prev;
    cudaError_t e = cudaErrorInvalidDevice;
    if (nnop__device_enter(ctx, &prev) == NNOP_OK)
        e = nnop__dev_malloc(&ctx->alloc, out, bytes);
    nnop__device_leave(prev);
    if (e != cudaSuccess) {
        *out = NULL;
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_malloc: cudaMalloc(%zu) failed: %s",
                          bytes, cudaGetErrorString(e));
    }
    return NNOP_OK;
}

void nnop__cuda_free(nnop_context *ctx, void *p)
{
    int prev;
    if (nnop__device_enter(ctx, &prev) == NNOP_OK)
        nnop__dev_free(&ctx->alloc, p);
    nnop__device_leave(prev);
}

nnop_status nnop__cuda_copy(nnop_context *ctx, void *dst, const void *src, size_t bytes,
                            int to_device)
{
    /* On the context's stream, after what it queued, then waited for: not cudaMemcpy, whose
     * legacy default stream would wait for every blocking stream of the device and fails
     * while another thread captures one into a CUDA graph (issue 43). */
    int prev;
    nnop_status st = nnop__device_enter(ctx, &prev);
    cudaError_t e = cudaSuccess;
    if (st == NNOP_OK)
        e = cudaMemcpyAsync(dst, src, bytes,
                            to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                            ctx->cuda->stream);
    if (st == NNOP_OK && e == cudaSuccess)
        e = cudaStreamSynchronize(ctx->cuda->stream);
    nnop__device_leave(prev);
    if (st != NNOP_OK)
        return st;
    if (e != cudaSuccess)
        return nnop__fail(ctx, NNOP_ERR_CUDA, "%s: cudaMemcpyAsync(%zu bytes) failed: %s",
                          to_device ? "nnop_copy_in" : "nnop_copy_out", bytes,
                          cudaGetErrorString(e));
    return NNOP_OK;
}
