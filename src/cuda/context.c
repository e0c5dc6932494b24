/* context.c: the backend's context entry points (src/internal.h): the device's half
 * (device/) with the engine's prefetch of cached plans (engine/) around it, so that the
 * device stage never calls up into the engine. */
#include "cuda/engine/engine.h"

nnop_status nnop__cuda_context_init(nnop_context *ctx)
{
    int prev;
    nnop_status st = nnop__device_enter(ctx, &prev);
    if (st == NNOP_OK)
        st = nnop__device_init(ctx);
    if (st == NNOP_OK)
        nnop__prefetch_start(ctx); /* the cache file's plans, while the caller builds a graph */
    nnop__device_leave(prev);
    return st; /* on failure nnop_context_destroy calls fini on the half-built state */
}

void nnop__cuda_context_fini(nnop_context *ctx)
{
    int prev;
    (void)nnop__device_enter(ctx, &prev); /* destroy goes on whatever it says */
    nnop__prefetch_stop(ctx);             /* its plans go before the handles that built them */
    nnop__device_fini(ctx);
    nnop__device_leave(prev);
}

nnop_status nnop__cuda_set_stream(nnop_context *ctx, void *stream)
{
    int prev;
    nnop_status st = nnop__device_enter(ctx, &prev);
    (void)nnop__prefetch_join(ctx, 1); /* its threads' handles become the context's */
    if (st == NNOP_OK)
        st = nnop__device_set_stream(ctx, stream);
    nnop__device_leave(prev);
    return st;
}
