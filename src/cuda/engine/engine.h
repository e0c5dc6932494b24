/* engine.h: the CUDA backend's engine stage: an execution plan for a lowered cuDNN step.
 * Bottom to top (each file calls only those before it): plans.c (an execution plan from an
 * engine config or a JSON, variant packs, warm-up runs), timing.c (a plan's GPU time on
 * scratch memory), prefetch.c (the cache file's plans rebuilt in the background from context
 * creation), cache_use.c (the plan cache seen from a step: fingerprint, lookup, record, the
 * deferred-deserialization queue), candidates.c (the heuristics' engine configs and the
 * rules no policy passes), engine.c (policy filters, autotuning, identical steps sharing a
 * plan), survey.c (every candidate built and timed, and which each policy would take),
 * deserialize.c (the queued plans deserialized on threads). */
#ifndef NNOP_CUDA_ENGINE_H
#define NNOP_CUDA_ENGINE_H

#include "cuda/lower/lower.h"

/* ------------------------------------------------------------------ plans.c */
/* Execution plan of cfg: finalized, with its workspace size. */
nnop_status nnop__dnn_build_plan(nnop_context *ctx, cudnnBackendDescriptor_t cfg,
                                 cudnnBackendDescriptor_t *plan, int64_t *ws);
/* An execution plan from its JSON with handle h, with the raw status so that threads that
 * must not touch the context can call it; *call names the call that failed. */
cudnnStatus_t nnop__plan_from_json(cudnnHandle_t h, const void *json, size_t len,
                                   cudnnBackendDescriptor_t *plan, int64_t *workspace,
                                   const char **call);
/* Where the loaded cuDNN (cudnnGetVersion()) tells a candidate's workspace size: its engine
 * config, before any plan is built (CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, from cuDNN 9.2), or
 * only the execution plan built from it (CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, every 9.x:
 * 9.0 and 9.1 know no other way). */
typedef enum nnop__ws_way { NNOP_WS_FROM_PLAN = 0, NNOP_WS_FROM_CONFIG } nnop__ws_way;
#define NNOP_CFG_WORKSPACE_MIN 90200
nnop__ws_way nnop__cfg_workspace_way(size_t cudnn_version);
/* 1 and cfg's workspace in *ws where the loaded cuDNN tells it before a plan is built; 0 where
 * it does not (cuDNN older than 9.2, or the query failed): only the plan tells it then. */
int nnop__dnn_cfg_workspace(const nnop_context *ctx, cudnnBackendDescriptor_t cfg, int64_t *ws);
/* A variant pack binding ptrs (in s->uids order) and the workspace ws. */
nnop_status nnop__dnn_make_vpack(nnop_context *ctx, const nnop__dnn_step *s, void **ptrs, void *ws,
                                 cudnnBackendDescriptor_t *out);
/* Scratch device memory for warm-up runs, on stream (which the runs are queued on). */
typedef struct nnop__scratch {
    cudaStream_t stream;
    char *mem;
    size_t cap;
    const nnop_allocator *alloc; /* the context's (NULL: cudaMalloc), read-only on threads */
} nnop__scratch;
/* Run plan once with handle h (on s's stream) on scratch memory from s, grown as needed; best
 * effort: failures are ignored (the real first execute reports them). */
void nnop__plan_warm_up(cudnnHandle_t h, cudnnBackendDescriptor_t plan, int n_io,
                        const int64_t *uids, const int64_t *bytes, int64_t workspace,
                        nnop__scratch *s);
/* Wait for the warm-ups queued on s's stream and free its memory. */
void nnop__scratch_release(nnop__scratch *s);
/* Threads deserializing a compile's cached plans, the caller's included (the context's
 * load_threads, 4 by default), or 0: each plan deserialized in place (load_threads 1, cuDNN
 * older than 9.8, no usable plan cache). */
int nnop__deser_threads(const nnop_context *ctx);

/* ------------------------------------------------------------------ timing.c */
/* Mean GPU time in *us of one execute of plan (workspace ws) on scratch buffers. */
nnop_status nnop__dnn_time_plan(nnop_context *ctx, const nnop__dnn_step *s,
                                cudnnBackendDescriptor_t plan, int64_t ws, float *us);

/* ------------------------------------------------------------------ prefetch.c */
/* Start rebuilding the cache file's newest plans on load_threads threads (end of context
 * init; nothing without a bound cache, cuDNN 9.8, load_threads > 1, or with prefetch -1;
 * never fails the context). Compiles take plans from it one by one (nnop__prefetch_take).
 * join waits for the threads (idempotent: before a stream change), with help rebuilding what
 * no thread has claimed yet on the calling thread (the context's handle), else leaving it
 * unbuilt; it gives the threads' handles to the context and returns the nanoseconds spent.
 * stop joins without help and destroys the plans no compile took (the context's end). */
void nnop__prefetch_start(nnop_context *ctx);
uint64_t nnop__prefetch_join(nnop_context *ctx, int help);
void nnop__prefetch_stop(nnop_context *ctx);
/* 1 and the plan the context's prefetch rebuilt for fp (now the caller's): ready, waited
 * for, or rebuilt on the calling thread if no prefetch thread had started it; 0 when the
 * prefetch has none (or cuDNN refused it). */
int nnop__prefetch_take(nnop_context *ctx, const nnop__fp *fp, cudnnBackendDescriptor_t *plan,
                        int64_t *workspace);

/* ------------------------------------------------------------------ cache_use.c */
/* A cached plan's JSON, deserialized after every partition is lowered (deserialize.c). */
typedef struct nnop__deser_job {
    nnop__dnn_step *step;
    void *json; /* owned */
    size_t len;
    cudnnBackendDescriptor_t plan; /* NULL until done, and when cuDNN refused it */
    int64_t workspace;
} nnop__deser_job;
/* The plan cache key of s: its lowered graph plus device, cuDNN version and policy. */
nnop__fp nnop__dnn_fingerprint(const nnop_context *ctx, const nnop__dnn_step *s);
/* Build s->plan from a cached entry (its plan JSON, else its engine and knobs), or queue its
 * JSON for nnop__deser_resolve when the plan deserializes on threads. NNOP_OK on success;
 * any failure leaves s without a plan (the caller searches instead), except that *no_engine
 * is set when the entry remembers a search that found no engine (the caller falls back). */
nnop_status nnop__dnn_from_cache(nnop_plan *p, nnop__dnn_step *s, const nnop__fp *fp,
                                 int *no_engine);
/* Remember that the search for s found no engine under the context's policy. */
void nnop__dnn_no_engine_to_cache(nnop_context *ctx, const nnop__fp *fp);
/* The knob choices of engine config cfg into out[NNOP_CACHE_MAX_KNOBS]: how many (0 when
 * they cannot be read). */
int32_t nnop__dnn_cfg_knobs(cudnnBackendDescriptor_t cfg, nnop__knob *out);
/* Record the choice of s (engine, knobs, time, plan JSON); failures are harmless. */
void nnop__dnn_to_cache(nnop_context *ctx, const nnop__dnn_step *s, const nnop__fp *fp);
/* Queue the JSON of cached entry e (taken from it) as s's plan. */
nnop_status nnop__deser_defer(nnop_plan *p, nnop__dnn_step *s, nnop__cache_entry *e);
/* Free the queue (plans not handed to steps included). */
void nnop__deser_free(struct nnop__cuda_plan *cp);

/* ------------------------------------------------------------------ candidates.c */
#define NNOP_MAX_CANDS      96
#define NNOP_AUTOTUNE_TOP_K 6 /* candidates an autotuning selection times */
/* Further knob choices of the fastest of them that autotuning times: an engine's first
 * config is not always its fastest (ResNet-50 at batch 256: 5.381 -> 5.292 ms of GPU time a
 * forward, GPU log 2026-12-04-h200-c call 2, in git history: docs/performance.md) */
#define NNOP_AUTOTUNE_VARIANTS 12
typedef struct nnop__cand {
    cudnnBackendDescriptor_t cfg; /* owned until taken (NULL then) */
    int64_t engine;               /* cuDNN's global engine index */
    uint64_t knobs;               /* digest of its knob choices (0 unless variants collected) */
    int variant;                  /* an earlier candidate has the engine, with other knobs */
    int rtc, nondet, tf32;        /* runtime-compiled; nondeterministic; tensor-core numerics */
    int mode;                     /* the first heuristic that offered it: 0 A, 1 B, 2 FALLBACK */
} nnop__cand;
typedef struct nnop__cands {
    nnop__cand c[NNOP_MAX_CANDS];
    int n;
    int per_mode[3];
} nnop__cands;
/* Add the engine configs heuristics A, B and FALLBACK offer for s's operation graph (built
 * before), in that order (a mode may refuse a graph: not an error): each engine's first
 * config, and with variants its other distinct knob choices too (marked variant). */
void nnop__cands_collect(nnop_context *ctx, nnop__dnn_step *s, int variants, nnop__cands *out);
/* Whether candidate c (its engine read, and with variants its knob digest) joins s: a new
 * engine, or with variants another knob choice of a listed engine; never a config listed
 * already, nor past NNOP_MAX_CANDS. Sets c->variant when s lists c's engine. */
int nnop__cands_admit(const nnop__cands *s, nnop__cand *c, int variants);
/* Destroy the configs not taken. */
void nnop__cands_free(nnop__cands *c);
/* Why no policy takes candidate c for s under the context's options, or NNOP_CAND_OK. */
typedef enum nnop__cand_rule {
    NNOP_CAND_OK = 0,
    NNOP_CAND_ENGINE0, /* engine 0 for a fused conv graph (cudnn-backend-notes 7.2) */
    NNOP_CAND_SHAPE,   /* runtime-compiled, for an rtc_unsafe step (issue 10) */
    NNOP_CAND_OPTIONS  /* nondeterministic when deterministic; TF32 for fp32 without allow_tf32 */
} nnop__cand_rule;
nnop__cand_rule nnop__cand_refused(const nnop_context *ctx, const nnop__dnn_step *s,
                                   const nnop__cand *c);
/* The pass of the selection in which policy pol takes candidate c (one no rule refuses): 0
 * the first; 1 the second, which runs only when the first kept none or too few to autotune
 * (runtime-compiled under prefer-precompiled); -1 none (runtime-compiled under
 * precompiled-only). */
int nnop__cand_pass(nnop_engine_policy pol, const nnop__cand *c);
/* How many candidates the selection builds under policy pol with options o: the top
 * NNOP_AUTOTUNE_TOP_K timed when autotuning (FASTEST always autotunes), else the first. */
int nnop__cand_limit(const nnop_context_options *o, nnop_engine_policy pol);

/* ------------------------------------------------------------------ engine.c */
/* Pick and build the execution plan of s by the context's policy; on failure the returned
 * status is NNOP_ERR_UNSUPPORTED (or the library error) and why says what was tried. */
nnop_status nnop__engine_select(nnop_plan *p, nnop__dnn_step *s, char *why, size_t len);
/* Step d (NULL: none), if it shared an identical step's plan before that plan existed
 * (deferred deserialization), takes it now. */
void nnop__engine_reshare(nnop_plan *p, nnop__dnn_step *d);

/* ------------------------------------------------------------------ survey.c */
/* nnop_plan_engines for step s (partition part): every candidate built, run and timed on
 * scratch memory, rows into out[0..cap) (the rest counted, not written); *n is the number
 * of rows. A failure of one engine is its row's status, not the call's. */
nnop_status nnop__engine_survey(nnop_plan *p, int32_t part, nnop__dnn_step *s,
                                nnop_engine_info *out, int cap, int *n);

/* ------------------------------------------------------------------ deserialize.c */
/* Deserialize the queued plans on threads, then let identical steps share them (reshare:
 * the caller's walk over its steps with nnop__engine_reshare; the steps are the stage
 * above's). Any failure (cuDNN refused a plan, one is over the workspace limit) sets
 * deser_failed and returns NNOP_ERR_UNSUPPORTED: the caller builds the plan again,
 * deserializing in place. */
nnop_status nnop__deser_resolve(nnop_plan *p, void (*reshare)(nnop_plan *p));

#endif /* NNOP_CUDA_ENGINE_H */
