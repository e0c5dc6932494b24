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

#include "cuda/engine/engine.h"
#include "platform/platform.h"

typedef struct worker {
    cudnnHandle_t h;
    int device; /* the context's: each started thread makes it current */
    nnop__deser_job *jobs;
    int32_t first, n_jobs, stride;
    nnop__thread *t;
    const nnop_allocator *alloc; /* the context's, for the warm-up scratch */
} worker;

/* Worker threads must not touch the context (its error text is not thread-safe): a plan
 * cuDNN refuses is left NULL, and the serial rebuild reports why. With warm, each plan also
 * runs once on scratch memory of the thread's own. */
static void run_share(const worker *w, int warm)
{
    nnop__scratch scratch = {NULL, NULL, 0, NULL};
    int32_t i;
    scratch.alloc = w->alloc;
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
        w[k].alloc = &p->ctx->alloc;
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

nnop_status nnop__deser_resolve(nnop_plan *p, void (*reshare)(nnop_plan *p))
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
        reshare(p);
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
