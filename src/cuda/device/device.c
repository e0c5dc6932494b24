/* device.c: CUDA context life cycle, the device's half (device, cuDNN handle, stream,
 * version checks; ../context.c adds the engine's prefetch) and the checked-call helpers that
 * turn CUDA/cuDNN failures into messages in the context. */
#include <stdio.h>
#include <string.h>

#include "cuda/device/device.h"

#define CUDNN_MSG_LEN 768
#ifndef NNOP_CUDA_ARCHS
#define NNOP_CUDA_ARCHS "?"
#endif

static int count_devices(nnop_status *st, char *why, size_t len)
{
    int n = 0, rt = 0, drv = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    *st = NNOP_ERR_NO_DEVICE;
    if (e == cudaSuccess) {
        if (n <= 0)
            snprintf(why, len, "cudaGetDeviceCount reports no device");
        return n > 0 ? n : 0;
    }
    (void)cudaGetLastError(); /* clear the sticky "no device" error */
    (void)cudaRuntimeGetVersion(&rt);
    (void)cudaDriverGetVersion(&drv);
    (void)cudaGetLastError();
    if (e == cudaErrorInsufficientDriver && drv > 0) {
        /* the driver is there but older than the runtime: a version problem with a fix */
        *st = NNOP_ERR_VERSION;
        snprintf(why, len,
                 "the CUDA driver supports CUDA %d.%d but nnop's CUDA runtime is %d.%d "
                 "(cudaErrorInsufficientDriver): update the NVIDIA driver to one for CUDA %d.%d "
                 "or newer, or build nnop with a CUDA toolkit no newer than %d.%d",
                 drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, rt / 1000,
                 (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10);
    } else if (e == cudaErrorInsufficientDriver) {
        snprintf(why, len, "no CUDA driver is installed (cudaGetDeviceCount: %s)",
                 cudaGetErrorName(e));
    } else {
        snprintf(why, len, "cudaGetDeviceCount: %s: %s", cudaGetErrorName(e),
                 cudaGetErrorString(e));
    }
    return 0;
}

/* Devices, and cuDNN loaded (device/libs.c): without it there is no CUDA backend, and the
 * reason names the file and the loader's error (NNOP_ERR_VERSION: an installation problem).
 * No usable GPU comes first (count_devices' status): a server that branches on
 * NNOP_ERR_NO_DEVICE must see it also where cuDNN is broken too. */
int nnop__cuda_device_count(nnop_status *st, char *why, size_t len)
{
    char devices[512] = "";
    int n = count_devices(st, devices, sizeof devices);
    const char *dnn = nnop__cudnn_load_error();
    if (dnn[0] && n > 0) {
        *st = NNOP_ERR_VERSION;
        snprintf(why, len, "%s", dnn);
        return 0;
    }
    if (dnn[0])
        snprintf(why, len, "%s; also: %s", devices, dnn);
    else
        snprintf(why, len, "%s", devices);
    return n;
}

nnop_status nnop__cuda_check(nnop_context *ctx, cudaError_t e, const char *call, const char *file,
                             int line)
{
    if (e == cudaSuccess)
        return NNOP_OK;
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction)
        return nnop__fail(ctx, NNOP_ERR_CUDA,
                          "%s failed: %s (%d): %s [%s:%d]: nnop's own kernels were built for "
                          "CUDA architectures %s, none of which runs on this GPU (compute "
                          "capability %d.%d): rebuild with -DNNOP_CUDA_ARCHITECTURES=<yours>",
                          call, cudaGetErrorName(e), (int)e, cudaGetErrorString(e), file, line,
                          NNOP_CUDA_ARCHS, ctx->cuda ? ctx->cuda->cc_major : 0,
                          ctx->cuda ? ctx->cuda->cc_minor : 0);
    return nnop__fail(ctx, e == cudaErrorMemoryAllocation ? NNOP_ERR_OUT_OF_MEMORY : NNOP_ERR_CUDA,
                      "%s failed: %s (%d): %s [%s:%d]", call, cudaGetErrorName(e), (int)e,
                      cudaGetErrorString(e), file, line);
}

/* cuDNN 9.0 and 9.5 fail the first descriptor they finalize, a tensor's, when
 * their precompiled engines library is missing (9.0: NOT_INITIALIZED, 9.5: SUBLIBRARY_LOADING_
 * FAILED, 1008, seen on an H100 with a runtime-compiled-only subset, issue 48): name the file,
 * as cuDNN's own message does not. */
static const char *missing_note(cudnnStatus_t s, const char *call)
{
    if ((s != CUDNN_STATUS_NOT_INITIALIZED && (int)s != 1008) || !strstr(call, "Finalize") ||
        !nnop__cudnn_precompiled_missing()[0])
        return "";
    return " (cuDNN's graph API needs its precompiled engines library even where only "
           "runtime-compiled engines run, and it is missing: ";
}

nnop_status nnop__cudnn_check(nnop_context *ctx, cudnnStatus_t s, const char *call,
                              const char *file, int line)
{
    char msg[CUDNN_MSG_LEN];
    const char *note;
    nnop_status st;
    if (s == CUDNN_STATUS_SUCCESS)
        return NNOP_OK;
    msg[0] = '\0';
    cudnnGetLastErrorString(msg, sizeof msg);
    st = (s / 1000 == 3)                  ? NNOP_ERR_UNSUPPORTED
         : s == CUDNN_STATUS_ALLOC_FAILED ? NNOP_ERR_OUT_OF_MEMORY
                                          : NNOP_ERR_CUDNN;
    note = missing_note(s, call);
    return nnop__fail(ctx, st, "%s failed: %s (%d): %s [%s:%d]%s%s%s", call, cudnnGetErrorString(s),
                      (int)s, msg, file, line, note,
                      note[0] ? nnop__cudnn_precompiled_missing() : "", note[0] ? ")" : "");
}

void nnop__copy_text(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (!len)
        return;
    n = n < len - 1 ? n : len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

cudaStream_t nnop__cuda_stream(const nnop_context *ctx)
{
    return ctx->cuda ? ctx->cuda->stream : (cudaStream_t)0;
}

/* Refuse a loaded cuDNN of another major version or older than the headers we were built
 * with (features are gated on the compile-time version), and a driver older than the
 * runtime. */
static nnop_status check_versions(nnop_context *ctx)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    int rt = 0, drv = 0;
    nnop_status st;
    c->cudnn_version = cudnnGetVersion();
    if (c->cudnn_version / 10000 != CUDNN_MAJOR || c->cudnn_version < NNOP_CUDNN_MIN_VERSION ||
        c->cudnn_version < (size_t)CUDNN_VERSION)
        return nnop__fail(ctx, NNOP_ERR_VERSION,
                          "nnop_context_create: loaded cuDNN %zu (%s) is incompatible with the "
                          "cuDNN %d headers nnop was built with (need major %d, >= %d; set "
                          "NNOP_CUDNN_PATH to the folder of a newer one)",
                          c->cudnn_version,
                          nnop__cudnn_loaded_path()[0] ? nnop__cudnn_loaded_path() : "?",
                          (int)CUDNN_VERSION, (int)CUDNN_MAJOR, (int)CUDNN_VERSION);
    st = NNOP_CU(ctx, cudaRuntimeGetVersion(&rt));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaDriverGetVersion(&drv));
    if (st == NNOP_OK && drv < rt)
        return nnop__fail(ctx, NNOP_ERR_VERSION,
                          "nnop_context_create: CUDA driver %d is older than the runtime %d", drv,
                          rt);
    return st;
}

static nnop_status query_device(nnop_context *ctx)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    struct cudaDeviceProp prop;
    nnop_status st = NNOP_CU(ctx, cudaGetDeviceProperties(&prop, c->device));
    if (st != NNOP_OK)
        return st;
    c->sm_count = prop.multiProcessorCount;
    c->cc_major = prop.major;
    c->cc_minor = prop.minor;
    snprintf(c->name, sizeof c->name, "%s", prop.name);
    return NNOP_OK;
}

/* Give the plan cache its identity (loads its file). A shared cache already bound to another
 * device is simply not used by this context. */
static void bind_cache(nnop_context *ctx)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    if (!ctx->plan_cache)
        return;
    c->cache_ok = nnop__context_cache_bind(ctx, (uint64_t)c->cudnn_version, c->name,
                                           c->cc_major * 10 + c->cc_minor, c->sm_count) == NNOP_OK;
    if (!c->cache_ok)
        nnop__clear_error(ctx);
}

nnop_status nnop__device_init(nnop_context *ctx)
{
    nnop_status st;
    ctx->cuda = (struct nnop__cuda_ctx *)nnop__calloc(1, sizeof *ctx->cuda);
    if (!ctx->cuda)
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_context_create: out of memory");
    ctx->cuda->device = ctx->opts.device;
    st = NNOP_CU(ctx, cudaSetDevice(ctx->cuda->device));
    if (st == NNOP_OK)
        st = check_versions(ctx);
    if (st == NNOP_OK)
        st = query_device(ctx);
    if (st == NNOP_OK)
        bind_cache(ctx);
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnCreate(&ctx->cuda->handle));
    if (st == NNOP_OK)
        /* a blocking stream orders with the legacy default stream, as cuDNN's default (the
         * NULL stream) does: a plain cudaMemcpy after a call sees its result. Unlike the NULL
         * stream itself it can be captured into a CUDA graph. */
        st = NNOP_CU(ctx, cudaStreamCreateWithFlags(&ctx->cuda->own_stream, cudaStreamDefault));
    if (st == NNOP_OK)
        st = nnop__device_set_stream(ctx, ctx->opts.stream);
    return st; /* on failure nnop_context_destroy calls fini on the half-built state */
}

int nnop__cuda_deser_handles(nnop_context *ctx, int n)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    while (c->n_deser < n) {
        cudnnHandle_t h = NULL;
        if (NNOP_DNN(ctx, cudnnCreate(&h)) != NNOP_OK) {
            nnop__clear_error(ctx); /* fewer threads, not a failure */
            break;
        }
        if (NNOP_DNN(ctx, cudnnSetStream(h, c->stream)) != NNOP_OK) {
            (void)cudnnDestroy(h);
            nnop__clear_error(ctx);
            break;
        }
        c->deser[c->n_deser++] = h;
    }
    return c->n_deser;
}

void nnop__device_fini(nnop_context *ctx)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    int i;
    if (!c)
        return;
    if (c->stream)
        (void)cudaStreamSynchronize(c->stream);
    for (i = 0; i < c->n_deser; i++)
        (void)cudnnDestroy(c->deser[i]);
    if (c->lt)
        (void)cublasLtDestroy(c->lt);
    if (c->handle)
        (void)cudnnDestroy(c->handle);
    if (c->own_stream)
        (void)cudaStreamDestroy(c->own_stream);
    if (c->side) {
        (void)cudaStreamSynchronize(c->side);
        (void)cudaStreamDestroy(c->side);
    }
    if (c->fork_ev)
        (void)cudaEventDestroy(c->fork_ev);
    if (c->join_ev)
        (void)cudaEventDestroy(c->join_ev);
    nnop__free(c);
    ctx->cuda = NULL;
}

nnop_status nnop__device_set_stream(nnop_context *ctx, void *stream)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    cudaStream_t s = stream ? (cudaStream_t)stream : c->own_stream;
    nnop_status st;
    int i;
    st = NNOP_DNN(ctx, cudnnSetStream(c->handle, s));
    for (i = 0; st == NNOP_OK && i < c->n_deser; i++)
        st = NNOP_DNN(ctx, cudnnSetStream(c->deser[i], s));
    if (st == NNOP_OK)
        c->stream = s;
    return st;
}

nnop_status nnop__device_enter(nnop_context *ctx, int *prev)
{
    int want = ctx->opts.device;
    *prev = -1;
    if (cudaGetDevice(prev) != cudaSuccess) {
        (void)cudaGetLastError();
        *prev = -1;
    }
    return *prev == want ? NNOP_OK : NNOP_CU(ctx, cudaSetDevice(want));
}

void nnop__device_leave(int prev)
{
    int now = -1;
    if (prev >= 0 && cudaGetDevice(&now) == cudaSuccess && now != prev)
        (void)cudaSetDevice(prev);
}

nnop_status nnop__device_side_init(nnop_context *ctx)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    nnop_status st = NNOP_OK;
    /* non-blocking: it meets the other streams only at the fork and join events */
    if (!c->side)
        st = NNOP_CU(ctx, cudaStreamCreateWithFlags(&c->side, cudaStreamNonBlocking));
    if (st == NNOP_OK && !c->fork_ev)
        st = NNOP_CU(ctx, cudaEventCreateWithFlags(&c->fork_ev, cudaEventDisableTiming));
    if (st == NNOP_OK && !c->join_ev)
        st = NNOP_CU(ctx, cudaEventCreateWithFlags(&c->join_ev, cudaEventDisableTiming));
    return st;
}

/* The context's stream (and its cuDNN handle's) becomes s. */
static nnop_status use_stream(nnop_context *ctx, cudaStream_t s)
{
    nnop_status st = NNOP_DNN(ctx, cudnnSetStream(ctx->cuda->handle, s));
    if (st == NNOP_OK)
        ctx->cuda->stream = s;
    return st;
}

nnop_status nnop__device_fork(nnop_context *ctx)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    nnop_status st = NNOP_CU(ctx, cudaEventRecord(c->fork_ev, c->stream));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaStreamWaitEvent(c->side, c->fork_ev, 0));
    if (st == NNOP_OK) {
        c->main = c->stream;
        st = use_stream(ctx, c->side);
    }
    return st;
}

nnop_status nnop__device_unfork(nnop_context *ctx)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    nnop_status st = NNOP_CU(ctx, cudaEventRecord(c->join_ev, c->side));
    nnop_status back = use_stream(ctx, c->main); /* also after a failed record */
    return st != NNOP_OK ? st : back;
}

nnop_status nnop__device_join(nnop_context *ctx)
{
    return NNOP_CU(ctx, cudaStreamWaitEvent(ctx->cuda->stream, ctx->cuda->join_ev, 0));
}

/* Only what this context queued: a device-wide synchronization would wait for every other
 * tenant's work and fails while any thread captures a CUDA graph (issue 43). */
nnop_status nnop__device_wait_queued(nnop_context *ctx)
{
    nnop_status st = NNOP_CU(ctx, cudaStreamSynchronize(ctx->cuda->stream));
    if (st == NNOP_OK && ctx->cuda->side)
        st = NNOP_CU(ctx, cudaStreamSynchronize(ctx->cuda->side));
    return st;
}

nnop_status nnop__cuda_synchronize(nnop_context *ctx)
{
    int prev;
    nnop_status st = nnop__device_enter(ctx, &prev);
    if (st == NNOP_OK)
        st = nnop__device_wait_queued(ctx);
    nnop__device_leave(prev);
    return st;
}
