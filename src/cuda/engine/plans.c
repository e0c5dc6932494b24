/* plans.c: execution plans for the engine stage: finalized from an engine config, or from a
 * cached JSON (with the raw status, for threads that must not touch the context), variant
 * packs, and warm-up runs on scratch memory (cuDNN's first-execute cost, paid on the threads
 * that deserialize or prefetch plans). */
#include <stdlib.h>
#include <string.h>

#include "cuda/engine/engine.h"

nnop_status nnop__dnn_build_plan(nnop_context *ctx, cudnnBackendDescriptor_t cfg,
                                 cudnnBackendDescriptor_t *plan, int64_t *ws)
{
    cudnnHandle_t h = ctx->cuda->handle;
    int64_t n = 0;
    const nnop__attr attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h),
            NNOP_ATTR_DESC(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, &cfg)};
    nnop_status st = NNOP_DNN(
            ctx, cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan));
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, *plan, attrs, NNOP_COUNT(attrs), "execution plan");
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                    CUDNN_TYPE_INT64, 1, &n, ws));
    if (st != NNOP_OK && *plan) {
        (void)cudnnBackendDestroyDescriptor(*plan);
        *plan = NULL;
    }
    return st;
}

/* CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE by its value (cudnn_graph.h of 9.2 and later): nnop
 * also builds against the 9.0 and 9.1 headers, which lack the name. */
#define ATTR_ENGINECFG_WORKSPACE_SIZE ((cudnnBackendAttributeName_t)303)

nnop__ws_way nnop__cfg_workspace_way(size_t cudnn_version)
{
    return cudnn_version >= NNOP_CFG_WORKSPACE_MIN ? NNOP_WS_FROM_CONFIG : NNOP_WS_FROM_PLAN;
}

int nnop__dnn_cfg_workspace(const nnop_context *ctx, cudnnBackendDescriptor_t cfg, int64_t *ws)
{
    int64_t n = 0, v = 0;
    if (nnop__cfg_workspace_way(ctx->cuda->cudnn_version) != NNOP_WS_FROM_CONFIG ||
        cudnnBackendGetAttribute(cfg, ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &v) !=
                CUDNN_STATUS_SUCCESS ||
        n != 1 || v < 0)
        return 0;
    *ws = v;
    return 1;
}

static nnop_status make_vpack(nnop_context *ctx, const nnop__dnn_step *s, void **ptrs, void *ws,
                              cudnnBackendDescriptor_t *out)
{
    const nnop__attr attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, s->n_io, s->uids),
            NNOP_ATTR(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, s->n_io, ptrs),
            NNOP_ATTR(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)};
    nnop_status st =
            NNOP_DNN(ctx, cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, out));
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, *out, attrs, NNOP_COUNT(attrs), "variant pack");
    return st;
}

nnop_status nnop__dnn_make_vpack(nnop_context *ctx, const nnop__dnn_step *s, void **ptrs, void *ws,
                                 cudnnBackendDescriptor_t *out)
{
    return make_vpack(ctx, s, ptrs, ws, out);
}

cudnnStatus_t nnop__plan_from_json(cudnnHandle_t h, const void *json, size_t len,
                                   cudnnBackendDescriptor_t *plan, int64_t *workspace,
                                   const char **call)
{
    int64_t n = 0;
    cudnnStatus_t r;
    *plan = NULL;
    *call = "cudnnBackendCreateDescriptor(EXECUTION_PLAN)";
    r = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan);
    if (r == CUDNN_STATUS_SUCCESS) {
        *call = "cudnnBackendSetAttribute(CUDNN_ATTR_EXECUTION_PLAN_HANDLE)";
        r = cudnnBackendSetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                     &h);
    }
    if (r == CUDNN_STATUS_SUCCESS) {
        *call = "cudnnBackendSetAttribute(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION)";
        r = cudnnBackendSetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                                     CUDNN_TYPE_CHAR, (int64_t)len, json);
    }
    if (r == CUDNN_STATUS_SUCCESS) {
        *call = "cudnnBackendFinalize(execution plan from JSON)";
        r = cudnnBackendFinalize(*plan);
    }
    if (r == CUDNN_STATUS_SUCCESS) {
        *call = "cudnnBackendGetAttribute(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)";
        r = cudnnBackendGetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     CUDNN_TYPE_INT64, 1, &n, workspace);
    }
    if (r != CUDNN_STATUS_SUCCESS && *plan) {
        (void)cudnnBackendDestroyDescriptor(*plan);
        *plan = NULL;
    }
    return r;
}

#define DEFAULT_THREADS      4
#define HANDLELESS_PLANS_MIN 90800 /* cuDNN version from which plans are handle-free */

int nnop__deser_threads(const nnop_context *ctx)
{
    int n = ctx->opts.load_threads ? ctx->opts.load_threads : DEFAULT_THREADS;
    if (n < 2 || !ctx->plan_cache || !ctx->cuda->cache_ok ||
        ctx->cuda->cudnn_version < HANDLELESS_PLANS_MIN)
        return 0;
    return n > NNOP_DESER_MAX_THREADS ? NNOP_DESER_MAX_THREADS : n;
}

static size_t round256(int64_t bytes)
{
    return ((size_t)bytes + 255) / 256 * 256;
}

/* Largest tensor or workspace a warm-up accepts (the prefetch's sizes come from the file). */
#define WARM_UP_BYTES_MAX (NNOP_MAX_TENSOR_ELEMENTS * 4)

/* Scratch for one execute: the real tensors, then the workspace; 0 when a size is out of
 * range (no warm-up then: round256(-1) was 0, and sums could wrap). */
static size_t warm_up_bytes(int n_io, const int64_t *bytes, int64_t workspace)
{
    size_t total;
    int i;
    if (n_io < 0 || workspace < 0 || workspace > WARM_UP_BYTES_MAX)
        return 0;
    total = round256(workspace);
    for (i = 0; i < n_io; i++) {
        size_t b;
        if (bytes[i] < 1 || bytes[i] > WARM_UP_BYTES_MAX)
            return 0;
        b = round256(bytes[i]);
        if (total > (size_t)-1 - b)
            return 0;
        total += b;
    }
    return total;
}

/* s's block, at least bytes (the work queued on a smaller one is waited for before it is
 * replaced); NULL when the memory cannot be had. */
static char *scratch_get(nnop__scratch *s, size_t bytes)
{
    if (bytes <= s->cap)
        return s->mem;
    nnop__scratch_release(s);
    if (nnop__dev_malloc(s->alloc, (void **)&s->mem, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        s->mem = NULL;
        return NULL;
    }
    s->cap = bytes;
    return s->mem;
}

void nnop__scratch_release(nnop__scratch *s)
{
    if (!s->mem)
        return;
    if (cudaStreamSynchronize(s->stream) != cudaSuccess) /* the warm-ups read the block */
        (void)cudaGetLastError();
    nnop__dev_free(s->alloc, s->mem);
    (void)cudaGetLastError(); /* a failed warm-up leaves nothing for the context */
    s->mem = NULL;
    s->cap = 0;
}

/* cuDNN spends ~3 ms in the first execute of each plan (80-130 ms for ResNet-50's 24 plans on
 * an H200: loading kernels, and cuBLASLt's own first-call work inside the engines ResNet-50
 * gets), so threads run each plan once before the real first execute. */
void nnop__plan_warm_up(cudnnHandle_t h, cudnnBackendDescriptor_t plan, int n_io,
                        const int64_t *uids, const int64_t *bytes, int64_t workspace,
                        nnop__scratch *s)
{
    void *ptrs[NNOP_STEP_MAX_IO], *ws;
    cudnnBackendDescriptor_t vp = NULL;
    char *mem;
    size_t off = 0, need = warm_up_bytes(n_io, bytes, workspace > 0 ? workspace : 0);
    int i;
    if (n_io > NNOP_STEP_MAX_IO || need == 0 || !(mem = scratch_get(s, need)))
        return;
    for (i = 0; i < n_io; i++) {
        ptrs[i] = mem + off;
        off += round256(bytes[i]);
    }
    ws = workspace ? mem + off : NULL;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp) !=
        CUDNN_STATUS_SUCCESS)
        return;
    if (cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                 n_io, ptrs) == CUDNN_STATUS_SUCCESS &&
        cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n_io,
                                 uids) == CUDNN_STATUS_SUCCESS &&
        cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                 &ws) == CUDNN_STATUS_SUCCESS &&
        cudnnBackendFinalize(vp) == CUDNN_STATUS_SUCCESS)
        (void)cudnnBackendExecute(h, plan, vp);
    (void)cudnnBackendDestroyDescriptor(vp);
}
