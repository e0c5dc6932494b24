/* deserialize.c: cached execution plans rebuilt on a few threads. On an H200 cuDNN takes
 * ~9 ms to rebuild a plan from its JSON and ~3 ms more in the plan's first execute (warm
 * ResNet-50: 24 plans, ~330 ms serially). With nnop_context_options.load_threads > 1 (the
 * default: 4), lowering queues each cached JSON instead; once every partition is lowered, the
 * queue is split over the calling thread (with the context's handle) and up to
 * NNOP_DESER_MAX_THREADS - 1 threads, each with a cuDNN handle of its own (kept in the
 * context), since cuDNN is thread-safe as long as no handle is used by two threads at once;
 * each thread also runs its plans once on scratch memory. A plan built with one handle runs
 * with another: since cuDNN 9.8 a plan can even be deserialized without any handle and
 * executed with a handle made later (cudnn-frontend, "Deviceless Ahead-of-time
 * Compilation"), so threads are only used from 9.8 on. cuDNN serializes much of the work
 * inside: 4 threads cut a warm ResNet-50 compile to first result by about a third. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_plan.h"
#include "platform/platform.h"

#define DEFAULT_THREADS      4
#define HANDLELESS_PLANS_MIN 90800 /* cuDNN version from which plans are handle-free */

typedef struct worker {
    cudnnHandle_t h;
    int device; /* the context's: each started thread makes it current */
    nnop__deser_job *jobs;
    int32_t first, n_jobs, stride;
    nnop__thread *t;
} worker;

int nnop__deser_threads(const nnop_context *ctx)
{
    int n = ctx->opts.load_threads ? ctx->opts.load_threads : DEFAULT_THREADS;
    if (n < 2 || !ctx->plan_cache || !ctx->cuda->cache_ok ||
        ctx->cuda->cudnn_version < HANDLELESS_PLANS_MIN)
        return 0;
    return n > NNOP_DESER_MAX_THREADS ? NNOP_DESER_MAX_THREADS : n;
}

nnop_status nnop__deser_defer(nnop_plan *p, nnop__dnn_step *s, nnop__cache_entry *e)
{
    struct nnop__cuda_plan *cp = p->cuda;
    nnop__deser_job *j;
    if (cp->n_jobs == cp->cap_jobs) {
        int32_t cap = cp->cap_jobs ? 2 * cp->cap_jobs : 32;
        nnop__deser_job *jobs = (nnop__deser_job *)realloc(cp->jobs, (size_t)cap * sizeof *jobs);
        if (!jobs)
            return NNOP_ERR_OUT_OF_MEMORY; /* the caller deserializes in place */
        cp->jobs = jobs;
        cp->cap_jobs = cap;
    }
    j = &cp->jobs[cp->n_jobs++];
    memset(j, 0, sizeof *j);
    j->step = s;
    j->json = e->blob; /* taken: the entry is cleared without it */
    j->len = e->blob_len;
    e->blob = NULL;
    e->blob_len = 0;
    s->cached = 2;
    return NNOP_OK;
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
    if (cudaMalloc((void **)&s->mem, bytes) != cudaSuccess) {
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
    if (cudaFree(s->mem) != cudaSuccess)
        (void)cudaGetLastError();
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

/* Worker threads must not touch the context (its error text is not thread-safe): a plan
 * cuDNN refuses is left NULL, and the serial rebuild reports why. With warm, each plan also
 * runs once on scratch memory of the thread's own. */
static void run_share(const worker *w, int warm)
{
    nnop__scratch scratch = {NULL, NULL, 0};
    int32_t i;
    if (warm && cudnnGetStream(w->h, &scratch.stream) != CUDNN_STATUS_SUCCESS)
        warm = 0;
    for (i = w->first; i < w->n_jobs; i += w->stride) {
        nnop__deser_job *j = &w->jobs[i];
        const char *call = "";
        (void)nnop__plan_from_json(w->h, j->json, j->len, &j->plan, &j->workspace, &call);
        if (warm && j->plan)
            nnop__plan_warm_up(w->h, j->plan, j->step->n_io, j->step->uids, j->step->bytes,
                               j->workspace, &scratch);
    }
    nnop__scratch_release(&scratch);
}

static void worker_main(void *arg)
{
    const worker *w = (const worker *)arg;
    /* the CUDA device is per thread: cuDNN's calls must reach the context's */
    if (cudaSetDevice(w->device) != cudaSuccess) {
        (void)cudaGetLastError();
        return; /* its plans stay NULL: resolve fails and the compile goes serial */
    }
    run_share(w, 1);
}

/* Run the queue on n threads (the calling one and n - 1 started here). */
static void run_jobs(nnop_plan *p, int n)
{
    struct nnop__cuda_plan *cp = p->cuda;
    worker w[NNOP_DESER_MAX_THREADS];
    int k;
    memset(w, 0, sizeof w);
    for (k = 0; k < n; k++) {
        w[k].h = k ? p->ctx->cuda->deser[k - 1] : p->ctx->cuda->handle;
        w[k].device = p->ctx->cuda->device;
        w[k].jobs = cp->jobs;
        w[k].first = k;
        w[k].n_jobs = cp->n_jobs;
        w[k].stride = n;
        if (k && nnop__thread_start(worker_main, &w[k], &w[k].t) != NNOP_OK)
            w[k].t = NULL; /* run below on this thread, after its own share */
    }
    run_share(&w[0], n > 1);
    for (k = 1; k < n; k++)
        if (!w[k].t) {
            w[k].h = p->ctx->cuda->handle; /* this thread's handle: never used at once */
            run_share(&w[k], 1);
        }
    for (k = 1; k < n; k++)
        nnop__thread_join(w[k].t);
}

/* Hand each plan to its step; 0 if any is missing or over the workspace limit. */
static int hand_out(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    size_t limit = p->ctx->opts.workspace_limit;
    int32_t i;
    int ok = 1;
    for (i = 0; i < cp->n_jobs; i++) {
        nnop__deser_job *j = &cp->jobs[i];
        nnop__cache_count(p->ctx->plan_cache,
                          j->plan ? NNOP_CACHE_EV_PLAN_FROM_BLOB : NNOP_CACHE_EV_BLOB_REJECTED);
        if (!j->plan || (limit && (size_t)j->workspace > limit)) {
            ok = 0;
            continue;
        }
        j->step->plan = j->plan;
        j->step->workspace = j->workspace;
        j->plan = NULL;
    }
    return ok;
}

/* Threads to use: what was asked for, no more than there are plans, and as many as there
 * are handles for (made here on the first compile that needs them). */
static int threads_for(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    int n = cp->deser_threads < cp->n_jobs ? cp->deser_threads : (int)cp->n_jobs;
    uint64_t t0 = nnop__monotonic_ns();
    if (n > 1)
        n = 1 + nnop__cuda_deser_handles(p->ctx, n - 1);
    cp->prof.handles_ns = nnop__monotonic_ns() - t0;
    return n < 1 ? 1 : n;
}

nnop_status nnop__deser_resolve(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    uint64_t t0 = nnop__monotonic_ns(), ns;
    int n, ok;
    if (!cp->n_jobs)
        return NNOP_OK;
    n = threads_for(p);
    run_jobs(p, n);
    ok = hand_out(p);
    if (ok)
        nnop__engine_reshare(p);
    ns = nnop__monotonic_ns() - t0;
    nnop__cache_add_time(p->ctx->plan_cache, NNOP_CACHE_T_DESERIALIZE, ns);
    cp->prof.resolve_ns = ns;
    cp->prof.deser_threads = n;
    nnop__deser_free(cp);
    cp->deser_failed = !ok;
    return ok ? NNOP_OK
              : nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED,
                           "nnop_graph_compile: a cached plan failed to deserialize on a thread");
}

void nnop__deser_free(struct nnop__cuda_plan *cp)
{
    int32_t i;
    for (i = 0; i < cp->n_jobs; i++) {
        if (cp->jobs[i].plan)
            (void)cudnnBackendDestroyDescriptor(cp->jobs[i].plan);
        free(cp->jobs[i].json);
    }
    free(cp->jobs);
    cp->jobs = NULL;
    cp->n_jobs = cp->cap_jobs = 0;
}
