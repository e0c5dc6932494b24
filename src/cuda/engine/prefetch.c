/* prefetch.c: the execution plans of the cache file, rebuilt in the background from context
 * creation. Rebuilding a cuDNN plan from its JSON costs ~8 ms on an H200 (for ResNet-50's
 * engines mostly cuBLASLt heuristics inside cuDNN's support check) and its first run ~4 ms
 * more (loading kernels): ~300 ms for ResNet-50's 23 plans, which a warm compile would
 * otherwise pay. A program builds or loads its graph between nnop_context_create and
 * nnop_graph_compile, so threads started at context creation (load_threads of them, each with
 * a cuDNN handle of its own) rebuild the newest cached plans meanwhile and run each once on
 * scratch memory. A compile asks for the plans it needs by fingerprint: one that is ready it
 * takes, one being rebuilt it waits for, one not started yet it rebuilds itself (with the
 * context's handle). So a compile waits only for its own plans, even when the cache file
 * holds other graphs' too. Plans no compile takes are destroyed with the context, which stops
 * the threads early.
 *
 * Needs cuDNN 9.8 or later (plans usable with another handle than the one that built them,
 * as deserialize.c) and entries that record their tensors (cache format 2). Off with
 * nnop_context_options.prefetch -1 or load_threads 1. */
#include <stdlib.h>
#include <string.h>

#include "cuda/engine/engine.h"
#include "platform/platform.h"

#define PREFETCH_MAX 256 /* plans rebuilt at most: the newest entries of a large cache file */

enum { UNCLAIMED, BUILDING, READY }; /* an item's state */

typedef struct prefetched {
    nnop__fp fp;
    nnop__cache_entry e;           /* blob: the JSON (owned); io: the tensors */
    cudnnBackendDescriptor_t plan; /* NULL when cuDNN refused it, or once taken */
    int64_t workspace;
    int state; /* guarded by the prefetch's mutex, as plan once READY */
} prefetched;

typedef struct worker {
    struct nnop__prefetch *pf;
    cudnnHandle_t h; /* made by the thread, handed to the context at join */
    nnop__thread *t;
} worker;

struct nnop__prefetch {
    prefetched *items;
    int32_t n_items;
    int32_t next; /* no item before it is UNCLAIMED */
    worker w[NNOP_DESER_MAX_THREADS - 1];
    int n_threads, joined, device;
    int running;            /* threads not done yet (guarded by mu) */
    nnop_plan_cache *cache; /* the context's: the last thread adds the wall time to it */
    cudaStream_t stream;
    const nnop_allocator *alloc;      /* the context's: the warm-ups' scratch */
    uint64_t started_ns, finished_ns; /* monotonic; finished: the last rebuild's end */
    nnop__mutex *mu;                  /* guards next, the items' states and finished_ns */
};

static void rebuild(cudnnHandle_t h, prefetched *it, nnop__scratch *scratch)
{
    int64_t uids[NNOP_CACHE_MAX_IO], bytes[NNOP_CACHE_MAX_IO];
    const char *call = "";
    int i;
    if (nnop__plan_from_json(h, it->e.blob, it->e.blob_len, &it->plan, &it->workspace, &call) !=
        CUDNN_STATUS_SUCCESS)
        return;
    for (i = 0; i < it->e.n_io; i++) {
        uids[i] = it->e.io[i].uid;
        bytes[i] = it->e.io[i].bytes;
    }
    nnop__plan_warm_up(h, it->plan, it->e.n_io, uids, bytes, it->workspace, scratch);
}

/* Items are claimed one at a time, in order, so that a compile can take any of them over. */
static int32_t claim(struct nnop__prefetch *pf)
{
    int32_t i;
    nnop__mutex_lock(pf->mu);
    while (pf->next < pf->n_items && pf->items[pf->next].state != UNCLAIMED)
        pf->next++;
    i = pf->next < pf->n_items ? pf->next++ : -1;
    if (i >= 0)
        pf->items[i].state = BUILDING;
    nnop__mutex_unlock(pf->mu);
    return i;
}

static void set_ready(struct nnop__prefetch *pf, prefetched *it)
{
    nnop__mutex_lock(pf->mu);
    it->state = READY;
    nnop__mutex_unlock(pf->mu);
}

/* Rebuild claimed items with handle h until none is left, then wait for their warm-ups. It
 * touches no context state (the context's error text is not thread-safe): failures only leave
 * plans NULL, for the compile to rebuild in its own way. */
static void drain(struct nnop__prefetch *pf, cudnnHandle_t h)
{
    nnop__scratch scratch = {NULL, NULL, 0, NULL};
    int32_t i, built = 0;
    scratch.stream = pf->stream;
    scratch.alloc = pf->alloc;
    while ((i = claim(pf)) >= 0) {
        rebuild(h, &pf->items[i], &scratch);
        set_ready(pf, &pf->items[i]);
        built++;
    }
    nnop__scratch_release(&scratch);
    if (!built)
        return; /* the prefetch's time ends with the last rebuild, not with an idle join */
    nnop__mutex_lock(pf->mu);
    pf->finished_ns = nnop__monotonic_ns();
    nnop__mutex_unlock(pf->mu);
}

/* The last of `gone` threads to finish (or not start) adds the prefetch's wall time to the
 * cache's statistics. */
static void threads_done(struct nnop__prefetch *pf, int gone)
{
    uint64_t wall = 0;
    nnop__mutex_lock(pf->mu);
    pf->running -= gone;
    if (gone > 0 && pf->running == 0 && pf->finished_ns > pf->started_ns)
        wall = pf->finished_ns - pf->started_ns;
    nnop__mutex_unlock(pf->mu);
    if (wall && pf->cache)
        nnop__cache_add_time(pf->cache, NNOP_CACHE_T_DESERIALIZE, wall);
}

static void worker_main(void *arg)
{
    worker *w = (worker *)arg;
    struct nnop__prefetch *pf = w->pf;
    if (cudaSetDevice(pf->device) == cudaSuccess && cudnnCreate(&w->h) == CUDNN_STATUS_SUCCESS &&
        cudnnSetStream(w->h, pf->stream) == CUDNN_STATUS_SUCCESS)
        drain(pf, w->h);
    (void)cudaGetLastError();
    threads_done(pf, 1);
}

static void prefetch_free(struct nnop__prefetch *pf)
{
    int32_t i;
    for (i = 0; i < pf->n_items; i++) {
        if (pf->items[i].plan)
            (void)cudnnBackendDestroyDescriptor(pf->items[i].plan);
        nnop__cache_entry_clear(&pf->items[i].e);
    }
    free(pf->items);
    nnop__mutex_destroy(pf->mu);
    free(pf);
}

static int wanted(const nnop_context *ctx)
{
    return ctx->opts.prefetch >= 0 && nnop__deser_threads(ctx) > 1;
}

/* The newest cached plans with their tensors; 0 when there are none (or no memory). */
static int32_t take_entries(nnop_context *ctx, struct nnop__prefetch *pf)
{
    nnop__fp *fps = (nnop__fp *)calloc(PREFETCH_MAX, sizeof *fps);
    nnop__cache_entry *es = (nnop__cache_entry *)calloc(PREFETCH_MAX, sizeof *es);
    int32_t n = 0, i;
    if (fps && es)
        n = nnop__cache_newest_plans(ctx->plan_cache, PREFETCH_MAX, fps, es);
    pf->items = n ? (prefetched *)calloc((size_t)n, sizeof *pf->items) : NULL;
    for (i = 0; i < n; i++) {
        if (pf->items) {
            pf->items[i].fp = fps[i];
            pf->items[i].e = es[i];
        } else {
            nnop__cache_entry_clear(&es[i]);
        }
    }
    free(fps);
    free(es);
    return pf->items ? n : 0;
}

void nnop__prefetch_start(nnop_context *ctx)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    struct nnop__prefetch *pf;
    int k, n;
    if (!wanted(ctx) || c->prefetch)
        return;
    pf = (struct nnop__prefetch *)calloc(1, sizeof *pf);
    if (!pf || nnop__mutex_create(&pf->mu) != NNOP_OK ||
        (pf->n_items = take_entries(ctx, pf)) == 0) {
        if (pf)
            prefetch_free(pf);
        return;
    }
    n = nnop__deser_threads(ctx);
    n = n < NNOP_DESER_MAX_THREADS - 1 ? n : NNOP_DESER_MAX_THREADS - 1;
    n = n < pf->n_items ? n : (int)pf->n_items;
    pf->device = c->device;
    pf->stream = c->stream;
    pf->alloc = &ctx->alloc;
    pf->cache = ctx->plan_cache;
    pf->started_ns = nnop__monotonic_ns();
    pf->running = n;
    for (k = 0; k < n; k++) {
        pf->w[k].pf = pf;
        if (nnop__thread_start(worker_main, &pf->w[k], &pf->w[k].t) != NNOP_OK)
            break; /* fewer threads: the others, or the compile, take the items */
        pf->n_threads = k + 1;
    }
    threads_done(pf, n - pf->n_threads); /* those that did not start */
    c->prefetch = pf;
}

/* Hand the threads' handles to the context (the plans they built may keep using them), or
 * destroy those it has no room for. */
static void adopt_handles(struct nnop__cuda_ctx *c, struct nnop__prefetch *pf)
{
    int k;
    for (k = 0; k < pf->n_threads; k++) {
        cudnnHandle_t h = pf->w[k].h;
        if (!h)
            continue;
        if (c->n_deser < NNOP_DESER_MAX_THREADS - 1 &&
            cudnnSetStream(h, c->stream) == CUDNN_STATUS_SUCCESS)
            c->deser[c->n_deser++] = h;
        else
            (void)cudnnDestroy(h);
        pf->w[k].h = NULL;
    }
}

uint64_t nnop__prefetch_join(nnop_context *ctx, int help)
{
    struct nnop__cuda_ctx *c = ctx->cuda;
    struct nnop__prefetch *pf = c ? c->prefetch : NULL;
    uint64_t t0 = nnop__monotonic_ns();
    int k;
    if (!pf || pf->joined)
        return 0;
    if (help) {
        drain(pf, c->handle); /* this thread's handle is free while it waits anyway */
    } else {
        nnop__mutex_lock(pf->mu); /* no new items: what is unclaimed stays unbuilt */
        pf->next = pf->n_items;
        nnop__mutex_unlock(pf->mu);
    }
    for (k = 0; k < pf->n_threads; k++)
        nnop__thread_join(pf->w[k].t);
    pf->joined = 1;
    adopt_handles(c, pf);
    return nnop__monotonic_ns() - t0;
}

/* The item of fp, or NULL. Fingerprints never change after the start: no lock needed. */
static prefetched *find(struct nnop__prefetch *pf, const nnop__fp *fp)
{
    int32_t i;
    for (i = 0; i < pf->n_items; i++)
        if (nnop__fp_equal(&pf->items[i].fp, fp))
            return &pf->items[i];
    return NULL;
}

int nnop__prefetch_take(nnop_context *ctx, const nnop__fp *fp, cudnnBackendDescriptor_t *plan,
                        int64_t *workspace)
{
    struct nnop__prefetch *pf = ctx->cuda->prefetch;
    prefetched *it = pf ? find(pf, fp) : NULL;
    int state;
    if (!it)
        return 0;
    nnop__mutex_lock(pf->mu);
    state = it->state;
    if (state == UNCLAIMED)
        it->state = BUILDING; /* this thread's now */
    nnop__mutex_unlock(pf->mu);
    if (state == UNCLAIMED) { /* not started: rebuild it here rather than wait for a thread */
        nnop__scratch scratch = {NULL, NULL, 0, NULL};
        scratch.stream = pf->stream;
        scratch.alloc = pf->alloc;
        rebuild(ctx->cuda->handle, it, &scratch);
        nnop__scratch_release(&scratch);
        set_ready(pf, it);
    }
    for (;;) { /* being rebuilt by a thread: a few ms at most */
        nnop__mutex_lock(pf->mu);
        state = it->state;
        *plan = state == READY ? it->plan : NULL;
        *workspace = it->workspace;
        if (state == READY)
            it->plan = NULL; /* taken: a later compile rebuilds its own */
        nnop__mutex_unlock(pf->mu);
        if (state == READY)
            return *plan != NULL;
        nnop__thread_yield();
    }
}

void nnop__prefetch_stop(nnop_context *ctx)
{
    struct nnop__prefetch *pf = ctx->cuda ? ctx->cuda->prefetch : NULL;
    if (!pf)
        return;
    (void)nnop__prefetch_join(ctx, 0);
    prefetch_free(pf);
    ctx->cuda->prefetch = NULL;
}
