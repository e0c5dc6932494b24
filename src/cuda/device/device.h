/* cuda_ctx.h: the CUDA backend's per-context state and the checked-call helpers. */
#ifndef NNOP_CUDA_CTX_H
#define NNOP_CUDA_CTX_H

#include <cuda_runtime.h>
#include <cublasLt.h>
#include <cudnn.h>

#include "internal.h"

/* Oldest cuDNN this backend runs on: the 9.x backend API with engine-config workspace
 * queries (9.2). */
#define NNOP_CUDNN_MIN_VERSION 90200
/* Most threads deserializing cached plans at once (deserialize.c), the caller's included. */
#define NNOP_DESER_MAX_THREADS NNOP_LOAD_THREADS_MAX

struct nnop__cuda_ctx {
    int device;
    cudnnHandle_t handle;
    cudaStream_t own_stream; /* created by us, destroyed at fini */
    cudaStream_t stream;     /* where work goes: own_stream or the user's */
    int sm_count;
    int cc_major, cc_minor;
    size_t cudnn_version; /* loaded library (cudnnGetVersion) */
    int cache_ok;         /* ctx->plan_cache is bound to this device and cuDNN */
    char name[256];
    /* handles of the threads that deserialize cached plans, one each (cuDNN handles must
     * not be used by two threads at once), made on first need, on the context's stream */
    cudnnHandle_t deser[NNOP_DESER_MAX_THREADS - 1];
    int n_deser;
    cublasLtHandle_t lt;             /* made on the first linear layer that runs on cuBLASLt */
    struct nnop__prefetch *prefetch; /* cached plans rebuilt in the background (prefetch.c) */
};

/* prefetch.c: start rebuilding the cache file's newest plans on load_threads threads (end of
 * context init; nothing without a bound cache, cuDNN 9.8, load_threads > 1, or with prefetch
 * -1; never fails the context). Compiles take plans from it one by one (cuda_plan.h). join
 * waits for the threads (idempotent: before a stream change), with help rebuilding what no
 * thread has claimed yet on the calling thread (the context's handle), else leaving it
 * unbuilt; it gives the threads' handles to the context and returns the nanoseconds spent.
 * stop joins without help and destroys the plans no compile took (the context's end). */
void nnop__prefetch_start(nnop_context *ctx);
uint64_t nnop__prefetch_join(nnop_context *ctx, int help);
void nnop__prefetch_stop(nnop_context *ctx);

/* The stream the context's work is queued on. */
cudaStream_t nnop__cuda_stream(const nnop_context *ctx);
/* Make ctx->cuda->deser hold at least n handles (n <= NNOP_DESER_MAX_THREADS - 1); returns
 * how many it holds (fewer when cuDNN refuses one: the error is not kept). */
int nnop__cuda_deser_handles(nnop_context *ctx, int n);

/* Record a failed CUDA runtime call (call text, error name and string, file:line) in ctx and
 * return NNOP_ERR_CUDA (NNOP_ERR_OUT_OF_MEMORY for allocation failures); NNOP_OK on success. */
nnop_status nnop__cuda_check(nnop_context *ctx, cudaError_t e, const char *call, const char *file,
                             int line);
/* Same for cuDNN: status name and number plus cudnnGetLastErrorString(); NNOP_ERR_CUDNN, or
 * NNOP_ERR_UNSUPPORTED for the 3xxx "not supported" class. */
nnop_status nnop__cudnn_check(nnop_context *ctx, cudnnStatus_t s, const char *call,
                              const char *file, int line);

/* Copy src into dst of len bytes, truncating, always NUL-terminated. */
void nnop__copy_text(char *dst, size_t len, const char *src);

#define NNOP_CU(ctx, call)  nnop__cuda_check((ctx), (call), #call, __FILE__, __LINE__)
#define NNOP_DNN(ctx, call) nnop__cudnn_check((ctx), (call), #call, __FILE__, __LINE__)

#endif /* NNOP_CUDA_CTX_H */
