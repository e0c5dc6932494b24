/* cache_use.c: the plan cache seen from engine selection: the fingerprint of a lowered step,
 * rebuilding a plan from a cached entry (plan JSON first: no heuristics, no runtime
 * compilation; else engine id + knobs), recording a fresh choice, and the queue of cached
 * JSONs that deserialize.c resolves on threads. */
#include <stdlib.h>
#include <string.h>

#include "cuda/engine/engine.h"
#include "platform/platform.h"

nnop__fp nnop__dnn_fingerprint(const nnop_context *ctx, const nnop__dnn_step *s)
{
    const nnop_context_options *o = &ctx->opts;
    nnop__fp_builder b = s->fpb;
    nnop__fp_add_i64(&b, (int64_t)ctx->cuda->cudnn_version); /* loaded, not built */
    nnop__fp_add_str(&b, ctx->cuda->name);
    nnop__fp_add_i64(&b, ctx->cuda->cc_major * 10 + ctx->cuda->cc_minor);
    nnop__fp_add_i64(&b, ctx->cuda->sm_count);
    nnop__fp_add_i64(&b, (int64_t)o->policy);
    nnop__fp_add_i64(&b, o->deterministic != 0);
    nnop__fp_add_i64(&b, (int64_t)o->workspace_limit);
    nnop__fp_add_i64(&b, o->allow_tf32 != 0);
    nnop__fp_add_i64(&b, o->autotune != 0);
    return nnop__fp_final(&b);
}

static nnop_status plan_from_json(nnop_context *ctx, nnop__dnn_step *s, const nnop__cache_entry *e)
{
    const char *call = "";
    uint64_t t0 = nnop__monotonic_ns();
    cudnnStatus_t r = nnop__plan_from_json(ctx->cuda->handle, e->blob, e->blob_len, &s->plan,
                                           &s->workspace, &call);
    nnop__cache_add_time(ctx->plan_cache, NNOP_CACHE_T_DESERIALIZE, nnop__monotonic_ns() - t0);
    return nnop__cudnn_check(ctx, r, call, __FILE__, __LINE__);
}

static nnop_status knob_choice(nnop_context *ctx, nnop__dnn_step *s, const nnop__knob *k,
                               cudnnBackendDescriptor_t *out)
{
    cudnnBackendKnobType_t type = (cudnnBackendKnobType_t)k->type;
    const nnop__attr attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type),
            NNOP_ATTR(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &k->value)};
    nnop_status st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, out);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, *out, attrs, NNOP_COUNT(attrs), "knob choice");
    return st;
}

static nnop_status plan_from_choice(nnop_context *ctx, nnop__dnn_step *s,
                                    const nnop__cache_entry *e)
{
    cudnnBackendDescriptor_t eng = NULL, knobs[NNOP_CACHE_MAX_KNOBS];
    const nnop__attr eng_attrs[] = {
            NNOP_ATTR_DESC(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, &s->graph),
            NNOP_ATTR(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &e->engine_id)};
    const nnop__attr cfg_attrs[] = {NNOP_ATTR_DESC(CUDNN_ATTR_ENGINECFG_ENGINE, &eng),
                                    NNOP_ATTR(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, e->n_knobs, knobs)};
    nnop_status st = nnop__dnn_graph(ctx, s);
    int i;
    if (st == NNOP_OK)
        st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, eng, eng_attrs, NNOP_COUNT(eng_attrs), "engine");
    for (i = 0; i < e->n_knobs && st == NNOP_OK; i++)
        st = knob_choice(ctx, s, &e->knobs[i], &knobs[i]);
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx,
                      cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &s->cfg));
    if (st == NNOP_OK) /* no knobs (a count of 0): the attribute stays unset */
        st = nnop__dnn_set_all(ctx, s->cfg, cfg_attrs, NNOP_COUNT(cfg_attrs), "engine config");
    if (st == NNOP_OK)
        st = nnop__dnn_build_plan(ctx, s->cfg, &s->plan, &s->workspace);
    return st;
}

static void drop_plan(nnop__dnn_step *s)
{
    if (s->plan)
        (void)cudnnBackendDestroyDescriptor(s->plan);
    if (s->cfg)
        (void)cudnnBackendDestroyDescriptor(s->cfg);
    s->plan = s->cfg = NULL;
}

/* s->plan now from entry e: its JSON, else its engine and knobs. */
static nnop_status from_entry(nnop_context *ctx, nnop__dnn_step *s, const nnop__cache_entry *e)
{
    nnop_status st = NNOP_ERR_UNSUPPORTED;
    if (e->blob_len > 0) {
        st = plan_from_json(ctx, s, e);
        nnop__cache_count(ctx->plan_cache, st == NNOP_OK ? NNOP_CACHE_EV_PLAN_FROM_BLOB
                                                         : NNOP_CACHE_EV_BLOB_REJECTED);
        s->cached = st == NNOP_OK ? 2 : 0;
    }
    if (st != NNOP_OK) {
        drop_plan(s);
        st = plan_from_choice(ctx, s, e);
        if (st == NNOP_OK)
            nnop__cache_count(ctx->plan_cache, NNOP_CACHE_EV_PLAN_BUILT);
        s->cached = st == NNOP_OK;
    }
    if (st == NNOP_OK && ctx->opts.workspace_limit &&
        (size_t)s->workspace > ctx->opts.workspace_limit)
        st = NNOP_ERR_UNSUPPORTED;
    if (st != NNOP_OK) {
        drop_plan(s);
        s->cached = 0;
    }
    return st;
}

/* The plan the context's prefetch rebuilt for fp (waiting for it, or rebuilding it here if no
 * thread has started it), if any and within the workspace limit. */
static nnop_status from_prefetch(nnop_plan *p, nnop__dnn_step *s, const nnop__fp *fp)
{
    nnop_context *ctx = p->ctx;
    cudnnBackendDescriptor_t plan = NULL;
    int64_t ws = 0;
    uint64_t t0 = nnop__monotonic_ns();
    int taken = nnop__prefetch_take(ctx, fp, &plan, &ws);
    p->cuda->prof.prefetch_wait_ns += nnop__monotonic_ns() - t0;
    if (!taken)
        return NNOP_ERR_UNSUPPORTED;
    if (ctx->opts.workspace_limit && (size_t)ws > ctx->opts.workspace_limit) {
        (void)cudnnBackendDestroyDescriptor(plan);
        return NNOP_ERR_UNSUPPORTED;
    }
    s->plan = plan;
    s->workspace = ws;
    s->cached = 3;
    p->cuda->prof.prefetched++;
    nnop__cache_count(ctx->plan_cache, NNOP_CACHE_EV_PLAN_FROM_BLOB);
    return NNOP_OK;
}

/* 1 when the entry's io list (from the file: any values a crafted or stale file holds) is
 * exactly the step's tensors, uid by uid and byte size by byte size; 0 (unknown) also fits. */
static int io_fits_step(const nnop__cache_entry *e, const nnop__dnn_step *s)
{
    int i;
    if (e->n_io == 0)
        return 1;
    if (e->n_io != s->n_io)
        return 0;
    for (i = 0; i < s->n_io; i++)
        if (e->io[i].uid != s->uids[i] || e->io[i].bytes != s->bytes[i])
            return 0;
    return 1;
}

nnop_status nnop__dnn_from_cache(nnop_plan *p, nnop__dnn_step *s, const nnop__fp *fp,
                                 int *no_engine)
{
    nnop_context *ctx = p->ctx;
    nnop__cache_entry e;
    nnop_status st = NNOP_ERR_UNSUPPORTED;
    *no_engine = 0;
    if (!nnop__cache_lookup(ctx->plan_cache, fp, &e))
        return st;
    if (e.flags & NNOP_CACHE_FLAG_NO_ENGINE) {
        *no_engine = 1;
        nnop__cache_entry_clear(&e);
        return st;
    }
    if (!io_fits_step(&e, s)) { /* stale or crafted: chosen again, and replaced */
        nnop__cache_entry_clear(&e);
        return st;
    }
    if (e.blob_len > 0)
        st = from_prefetch(p, s, fp);
    if (st != NNOP_OK && e.blob_len > 0 && p->cuda->deser_threads > 0)
        st = nnop__deser_defer(p, s, &e); /* with the others, after every partition */
    if (st != NNOP_OK)
        st = from_entry(ctx, s, &e);
    if (st == NNOP_OK) {
        s->engine = e.engine_id;
        s->rtc = (e.flags & NNOP_CACHE_FLAG_RUNTIME_COMPILED) != 0;
        s->time_us = e.time_us;
        s->tuned = e.time_us >= 0.0f;
    }
    nnop__cache_entry_clear(&e);
    return st;
}

int32_t nnop__dnn_cfg_knobs(cudnnBackendDescriptor_t cfg, nnop__knob *out)
{
    cudnnBackendDescriptor_t kc[NNOP_CACHE_MAX_KNOBS];
    int64_t n = 0, got = 0, i;
    int32_t made = 0, ok = 1;
    for (made = 0; made < NNOP_CACHE_MAX_KNOBS; made++)
        if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &kc[made]) !=
            CUDNN_STATUS_SUCCESS)
            break;
    ok = made == NNOP_CACHE_MAX_KNOBS &&
         cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &n,
                                  kc) == CUDNN_STATUS_SUCCESS;
    for (i = 0; ok && i < n; i++) {
        cudnnBackendKnobType_t t;
        ok = cudnnBackendGetAttribute(kc[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE,
                                      1, &got, &t) == CUDNN_STATUS_SUCCESS &&
             cudnnBackendGetAttribute(kc[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1,
                                      &got, &out[i].value) == CUDNN_STATUS_SUCCESS;
        out[i].type = (int64_t)t;
    }
    for (i = 0; i < made; i++)
        (void)cudnnBackendDestroyDescriptor(kc[i]);
    return ok ? (int32_t)n : 0;
}

/* The plan's JSON (malloc'd, *len bytes) or NULL. */
static void *plan_json(const nnop__dnn_step *s, size_t *len)
{
    int64_t n = 0, got = 0;
    char *buf;
    *len = 0;
    if (cudnnBackendGetAttribute(s->plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                                 CUDNN_TYPE_CHAR, 0, &n, NULL) != CUDNN_STATUS_SUCCESS ||
        n <= 0 || (size_t)n > NNOP_CACHE_MAX_BLOB)
        return NULL;
    buf = (char *)malloc((size_t)n);
    if (buf && cudnnBackendGetAttribute(s->plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                                        CUDNN_TYPE_CHAR, n, &got, buf) == CUDNN_STATUS_SUCCESS) {
        while (got > 0 && buf[got - 1] == '\0') /* the cache stores it without a NUL */
            got--;
        *len = (size_t)got;
        return buf;
    }
    free(buf);
    return NULL;
}

/* The plan's real tensors, so a later process can run it before a graph asks for it. */
static void io_list(const nnop__dnn_step *s, nnop__cache_entry *e)
{
    int i;
    if (s->n_io > NNOP_CACHE_MAX_IO)
        return;
    for (i = 0; i < s->n_io; i++) {
        e->io[i].uid = s->uids[i];
        e->io[i].bytes = s->bytes[i];
    }
    e->n_io = s->n_io;
}

void nnop__dnn_no_engine_to_cache(nnop_context *ctx, const nnop__fp *fp)
{
    nnop__cache_entry *e = (nnop__cache_entry *)calloc(1, sizeof *e);
    if (!e)
        return;
    e->engine_id = -1;
    e->flags = NNOP_CACHE_FLAG_NO_ENGINE;
    e->time_us = -1.0f;
    e->workspace_bytes = -1;
    (void)nnop__cache_insert(ctx->plan_cache, fp, e);
    free(e);
}

void nnop__dnn_to_cache(nnop_context *ctx, const nnop__dnn_step *s, const nnop__fp *fp)
{
    nnop__cache_entry *e = (nnop__cache_entry *)calloc(1, sizeof *e);
    if (!e)
        return;
    e->engine_id = s->engine;
    e->n_knobs = s->cfg ? nnop__dnn_cfg_knobs(s->cfg, e->knobs) : 0;
    e->flags = (s->rtc ? NNOP_CACHE_FLAG_RUNTIME_COMPILED : 0u) |
               (ctx->opts.deterministic ? NNOP_CACHE_FLAG_DETERMINISTIC : 0u);
    e->time_us = s->tuned ? s->time_us : -1.0f;
    e->workspace_bytes = s->workspace;
    e->blob = plan_json(s, &e->blob_len);
    io_list(s, e);
    (void)nnop__cache_insert(ctx->plan_cache, fp, e);
    free(e->blob);
    free(e);
}

/* ------------------------------------------------------------------ deferred deserialization */
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
