/* timing.c: the GPU time of one execution plan on scratch memory (contents irrelevant to the
 * time), for autotuning (engine.c) and the survey of every engine (survey.c): warm-up runs,
 * then runs queued behind a spin kernel so that all of them are on the GPU before the first
 * timed one and the events time the GPU, not the ~8 us host cost of each cudnnBackendExecute. */
#include "cuda/engine/engine.h"

#define TIMING_WARMUP  3
#define TIMING_RUNS    20
#define TIMING_SPIN_NS 1000000

/* One scratch block for every real tensor of s (contents irrelevant to timing) and the
 * workspace after them. */
static nnop_status scratch(nnop_context *ctx, const nnop__dnn_step *s, int64_t ws, void **mem,
                           void **ptrs, void **wsp)
{
    size_t off = 0, total = (size_t)ws + 256;
    int i;
    nnop_status st;
    for (i = 0; i < s->n_io; i++)
        total += ((size_t)s->bytes[i] + 255) / 256 * 256;
    st = NNOP_CU(ctx, nnop__dev_malloc(&ctx->alloc, mem, total));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaMemsetAsync(*mem, 0, total, ctx->cuda->stream));
    for (i = 0; st == NNOP_OK && i < s->n_io; i++) {
        ptrs[i] = nnop__dnn_io_ptr(s, i, (char *)*mem + off);
        off += ((size_t)s->bytes[i] + 255) / 256 * 256;
    }
    *wsp = ws ? (char *)*mem + off : NULL;
    return st;
}

/* GPU time of TIMING_RUNS executes queued behind a spin kernel, per execute. */
static nnop_status timed_runs(nnop_context *ctx, cudnnBackendDescriptor_t plan,
                              cudnnBackendDescriptor_t vp, cudaEvent_t e0, cudaEvent_t e1,
                              float *us)
{
    cudaStream_t strm = ctx->cuda->stream;
    float ms = 0.0f;
    int i;
    nnop_status st = NNOP_OK;
    for (i = 0; i < TIMING_WARMUP && st == NNOP_OK; i++)
        st = NNOP_DNN(ctx, cudnnBackendExecute(ctx->cuda->handle, plan, vp));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, nnop__k_spin(TIMING_SPIN_NS, strm));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventRecord(e0, strm));
    for (i = 0; i < TIMING_RUNS && st == NNOP_OK; i++)
        st = NNOP_DNN(ctx, cudnnBackendExecute(ctx->cuda->handle, plan, vp));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventRecord(e1, strm));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventSynchronize(e1));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventElapsedTime(&ms, e0, e1));
    *us = ms * 1000.0f / TIMING_RUNS;
    return st;
}

nnop_status nnop__dnn_time_plan(nnop_context *ctx, const nnop__dnn_step *s,
                                cudnnBackendDescriptor_t plan, int64_t ws, float *us)
{
    void *mem = NULL, *wsp = NULL, *ptrs[NNOP_STEP_MAX_IO];
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudnnBackendDescriptor_t vp = NULL;
    nnop_status st = scratch(ctx, s, ws, &mem, ptrs, &wsp);
    if (st == NNOP_OK)
        st = nnop__dnn_make_vpack(ctx, s, ptrs, wsp, &vp);
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventCreate(&e0));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventCreate(&e1));
    if (st == NNOP_OK)
        st = timed_runs(ctx, plan, vp, e0, e1, us);
    if (vp)
        (void)cudnnBackendDestroyDescriptor(vp);
    if (e0)
        (void)cudaEventDestroy(e0);
    if (e1)
        (void)cudaEventDestroy(e1);
    (void)cudaStreamSynchronize(ctx->cuda->stream);
    nnop__dev_free(&ctx->alloc, mem);
    return st;
}
