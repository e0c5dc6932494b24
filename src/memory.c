/* memory.c: backend-neutral tensor memory (device memory on CUDA, host memory on CPU). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

nnop_status nnop_malloc(nnop_context *ctx, size_t bytes, void **out)
{
    if (!out)
        return ctx ? nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_malloc: out is NULL")
                   : NNOP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(ctx);
    if ((uint64_t)bytes > (uint64_t)NNOP_MAX_TENSOR_ELEMENTS * 4) /* no tensor is that big */
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY,
                          "nnop_malloc: %zu bytes is more than any tensor takes (%lld)", bytes,
                          (long long)NNOP_MAX_TENSOR_ELEMENTS * 4);
    if (ctx->backend == NNOP_BACKEND_CUDA)
        return nnop__cuda_malloc(ctx, bytes, out);
    *out = nnop__host_alloc(ctx, bytes);
    return *out ? NNOP_OK
                : nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_malloc: %zu bytes failed", bytes);
}

void *nnop__host_alloc(const nnop_context *ctx, size_t bytes)
{
    if (ctx->alloc.host_alloc)
        return ctx->alloc.host_alloc(ctx->alloc.user, bytes ? bytes : 1);
    return malloc(bytes ? bytes : 1);
}

void nnop__host_free(const nnop_context *ctx, void *p)
{
    if (!p)
        return;
    if (ctx->alloc.host_free)
        ctx->alloc.host_free(ctx->alloc.user, p);
    else
        free(p);
}

void nnop_free(nnop_context *ctx, void *p)
{
    if (!ctx || !p)
        return;
    if (ctx->backend == NNOP_BACKEND_CUDA)
        nnop__cuda_free(ctx, p);
    else
        nnop__host_free(ctx, p);
}

static nnop_status copy(nnop_context *ctx, void *dst, const void *src, size_t bytes, int to_device,
                        const char *fn)
{
    if (!ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(ctx);
    if ((!dst || !src) && bytes)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                          dst ? "src" : "dst");
    if (!bytes)
        return NNOP_OK;
    if (ctx->backend == NNOP_BACKEND_CUDA)
        return nnop__cuda_copy(ctx, dst, src, bytes, to_device);
    memmove(dst, src, bytes);
    return NNOP_OK;
}

nnop_status nnop_copy_in(nnop_context *ctx, void *dst, const void *host_src, size_t bytes)
{
    return copy(ctx, dst, host_src, bytes, 1, "nnop_copy_in");
}

nnop_status nnop_copy_out(nnop_context *ctx, void *host_dst, const void *src, size_t bytes)
{
    return copy(ctx, host_dst, src, bytes, 0, "nnop_copy_out");
}
