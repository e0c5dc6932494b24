/* engine.h: the CUDA backend's engine stage: an execution plan for a lowered cuDNN step.
 * Bottom to top (each file calls only those before it): plans.c (an execution plan from an
 * engine config or a JSON, variant packs, warm-up runs), prefetch.c (the cache file's plans
 * rebuilt in the background from context creation), cache_use.c (the plan cache seen from a
 * step: fingerprint, lookup, record, the deferred-deserialization queue), engine.c
 * (heuristics, policy filters, autotuning, identical steps sharing a plan), deserialize.c
 * (the queued plans deserialized on threads). */
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
/* A variant pack binding ptrs (in s->uids order) and the workspace ws. */
nnop_status nnop__dnn_make_vpack(nnop_context *ctx, const nnop__dnn_step *s, void **ptrs, void *ws,
                                 cudnnBackendDescriptor_t *out);
/* Scratch device memory for warm-up runs, on stream (which the runs are queued on). */
typedef struct nnop__scratch {
    cudaStream_t stream;
    char *mem;
    size_t cap;
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
/* Record the choice of s (engine, knobs, time, plan JSON); failures are harmless. */
void nnop__dnn_to_cache(nnop_context *ctx, const nnop__dnn_step *s, const nnop__fp *fp);
/* Queue the JSON of cached entry e (taken from it) as s's plan. */
nnop_status nnop__deser_defer(nnop_plan *p, nnop__dnn_step *s, nnop__cache_entry *e);
/* Free the queue (plans not handed to steps included). */
void nnop__deser_free(struct nnop__cuda_plan *cp);

/* ------------------------------------------------------------------ engine.c */
/* Pick and build the execution plan of s by the context's policy; on failure the returned
 * status is NNOP_ERR_UNSUPPORTED (or the library error) and why says what was tried. */
nnop_status nnop__engine_select(nnop_plan *p, nnop__dnn_step *s, char *why, size_t len);
/* Step d (NULL: none), if it shared an identical step's plan before that plan existed
 * (deferred deserialization), takes it now. */
void nnop__engine_reshare(nnop_plan *p, nnop__dnn_step *d);

/* ------------------------------------------------------------------ deserialize.c */
/* Deserialize the queued plans on threads, then let identical steps share them (reshare:
 * the caller's walk over its steps with nnop__engine_reshare; the steps are the stage
 * above's). Any failure (cuDNN refused a plan, one is over the workspace limit) sets
 * deser_failed and returns NNOP_ERR_UNSUPPORTED: the caller builds the plan again,
 * deserializing in place. */
nnop_status nnop__deser_resolve(nnop_plan *p, void (*reshare)(nnop_plan *p));

#endif /* NNOP_CUDA_ENGINE_H */
