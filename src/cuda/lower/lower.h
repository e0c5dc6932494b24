/* cuda_plan.h: the CUDA backend's compiled plan: steps (cuDNN graphs or own kernels), the
 * slot table of device pointers, the canonical epilogue chain, and the functions between the
 * backend's files. */
#ifndef NNOP_CUDA_PLAN_H
#define NNOP_CUDA_PLAN_H

#include "cache.h"
#include "cuda/cuda_ctx.h"
#include "cuda/kernels.h"

#define NNOP_STEP_MAX_DESC 64 /* descriptors one cuDNN step owns */
#define NNOP_STEP_MAX_OPS  16
#define NNOP_STEP_MAX_IO   16 /* real (non-virtual) tensors of one cuDNN step */
#define NNOP_VPACK_CACHE   8  /* prebuilt variant packs per step, one per binding set */
#define NNOP_TENSOR_ALIGN  16 /* byte alignment promised to cuDNN for every real tensor */

/* ------------------------------------------------------------------ the epilogue chain */
/* One epilogue operation after a producer (or of a standalone pointwise partition). host[]
 * holds per-channel float constants known at compile time (folded or foldable); slot[] the
 * runtime operands (-1 = none). */
typedef struct nnop__chain_op {
    int kind; /* NNOP_EPI_* */
    nnop_dtype dtype;
    float *host[2];
    int32_t slot[4];
    nnop__act_attr act;
    float eps;
} nnop__chain_op;

typedef struct nnop__chain {
    int32_t producer;  /* node index of the conv/linear, -1 for a pointwise-only chain */
    int32_t x_slot;    /* producer input, or the chain's input value */
    int32_t w_slot;    /* producer weights (possibly folded), -1 without producer */
    int32_t mid_value; /* value the epilogue starts from: producer output or chain input */
    int32_t out_value; /* the partition's output value */
    int64_t channels;  /* dim 1 of the producer output */
    int folded;        /* batch-norm/bias folded into the weights */
    int xw_override;   /* x and w are the descs below (stem.c), not the values' */
    nnop_tensor_desc x_desc, w_desc;
    int n_ops;
    nnop__chain_op ops[NNOP_EPI_MAX_OPS];
} nnop__chain;

/* ------------------------------------------------------------------ steps */
typedef enum nnop__step_kind {
    NNOP_STEP_DNN = 0,
    NNOP_STEP_EPILOGUE,
    NNOP_STEP_POOL,
    NNOP_STEP_GAP,
    NNOP_STEP_SOFTMAX,
    NNOP_STEP_FLATTEN,
    NNOP_STEP_LINEAR,
    NNOP_STEP_STEM,
    NNOP_STEP_BLASLT
} nnop__step_kind;

typedef struct nnop__lt_step nnop__lt_step; /* blaslt.c */

/* A cuDNN operation graph with its chosen execution plan. */
typedef struct nnop__dnn_step {
    cudnnBackendDescriptor_t owned[NNOP_STEP_MAX_DESC]; /* destroyed in reverse order */
    int n_owned;
    cudnnBackendDescriptor_t ops[NNOP_STEP_MAX_OPS];
    int n_ops;
    cudnnBackendDescriptor_t graph, cfg, plan;
    int64_t uids[NNOP_STEP_MAX_IO];
    int32_t slots[NNOP_STEP_MAX_IO];
    int64_t bytes[NNOP_STEP_MAX_IO];
    int n_io;
    int64_t next_uid;
    int is_conv, fp32;
    /* a 16-bit real tensor in the class where runtime-compiled engines gave wrong results or
     * misaligned stores (lower.c, rtc_unsafe_tensor; issue 10) */
    int rtc_unsafe;
    nnop__fp_builder fpb; /* everything lowered so far, for the plan cache */
    int cached;      /* 1: engine choice from the plan cache, 2: plan from its JSON, 3: the same,
                      * rebuilt by the context's prefetch threads */
    int plan_shared; /* plan belongs to an identical earlier step of the same plan */
    /* the chosen engine */
    int64_t engine;
    int rtc;
    int64_t workspace;
    int tuned;
    float time_us;
    /* variant packs, one per binding set seen (round robin) */
    cudnnBackendDescriptor_t vpack[NNOP_VPACK_CACHE];
    void *vptrs[NNOP_VPACK_CACHE][NNOP_STEP_MAX_IO];
    int n_vpack, next_vpack;
    void *ptrs[NNOP_STEP_MAX_IO]; /* scratch for execute */
} nnop__dnn_step;

typedef struct nnop__cuda_step {
    nnop__step_kind kind;
    nnop__dnn_step *dnn;
    int32_t x_slot, y_slot;
    int32_t op_slots[NNOP_EPI_MAX_OPS][4]; /* epilogue operands, -1 = none */
    nnop__epi_params epi;
    nnop__pool_kparams pool;
    nnop__linear_kparams lin;
    int32_t w_slot;
    nnop__kview xv, yv;
    int dtype;
    int folded;
    /* stem.c: before the cuDNN step, zero-pad the input's channels into a plan buffer */
    int padded;
    int32_t pad_src, pad_dst;
    int64_t pad_pixels;
    int pad_cin, pad_cout, pad_elem;
    /* stem.c: the own stem kernel (w_slot: its prepared weights) */
    nnop__stem_kparams stem;
    int32_t stem_bias_slot;
    /* blaslt.c: a linear partition on cuBLASLt (x_slot, w_slot, y_slot as above) */
    nnop__lt_step *lt;
} nnop__cuda_step;

/* Where the compile time went, for bench_coldstart: a few clock reads per partition. */
typedef struct nnop__compile_prof {
    uint64_t parts_ns;   /* building every partition (lowering, engine selection, uploads) */
    uint64_t select_ns;  /* of which engine selection: plan cache, JSON, graph finalize, search */
    uint64_t upload_ns;  /* of which constants: device memory and the copy calls */
    uint64_t resolve_ns; /* plans deserialized on worker threads after the partitions */
    uint64_t prefetch_wait_ns; /* taking plans from the context's prefetch: waiting for them,
                                * or rebuilding those no thread had started (prefetch.c) */
    int32_t prefetched;        /* plans taken from them */
    uint64_t buffers_ns;       /* intermediate buffers and the workspace */
    uint64_t sync_ns;          /* the final wait for queued copies and kernels */
    uint64_t handles_ns;       /* of resolve_ns: creating the worker threads' cuDNN handles */
    int64_t upload_bytes;
    int32_t n_uploads;
    int32_t deser_threads; /* threads that deserialized plans (0: in place, serially) */
    int32_t restarted;     /* deferred deserialization failed: built again serially */
} nnop__compile_prof;

/* A cached plan's JSON, deserialized after every partition is lowered (deserialize.c). */
typedef struct nnop__deser_job {
    nnop__dnn_step *step;
    void *json; /* owned */
    size_t len;
    cudnnBackendDescriptor_t plan; /* NULL until done, and when cuDNN refused it */
    int64_t workspace;
} nnop__deser_job;

struct nnop__cuda_plan {
    nnop__cuda_step *steps; /* one per partition, capacity n_nodes */
    void **slot;            /* device pointer of each slot: values first, then extras */
    int32_t n_slots, cap_slots;
    void **owned; /* cudaMalloc'd blocks */
    int32_t n_owned, cap_owned;
    /* the block compile-time slots (constants, folded weights) are carved from */
    char *const_block;
    size_t const_used, const_cap;
    void *workspace;
    int64_t workspace_bytes;
    int64_t arena_bytes;
    /* whole-plan CUDA graph (compile option cuda_graph), keyed by the user pointers */
    cudaGraphExec_t gexec;
    void **gkey;
    /* outputs that are inputs or constants: a device copy after the steps into out_ptr[i]
     * from slot copy_slot[i] (-1 for computed outputs, which the steps write in place) */
    int32_t *copy_slot;
    void **out_ptr;
    int graph_failed;
    /* steps whose engine is chosen, by fingerprint: an identical later step (ResNet-50 has
     * 54 conv steps of 25 kinds) shares the execution plan instead of building it again */
    nnop__fp *memo_fp;
    nnop__dnn_step **memo_step;
    int32_t n_memo, cap_memo;
    nnop__compile_prof prof;
    /* > 0: cached plans are queued in jobs and deserialized by this many threads */
    int deser_threads;
    int deser_failed;
    nnop__deser_job *jobs;
    int32_t n_jobs, cap_jobs;
};

/* ------------------------------------------------------------------ slots (executor.c) */
/* Slot of value v; constants are uploaded on first use. */
nnop_status nnop__slot_value(nnop_plan *p, int32_t v, int32_t *slot);
/* A new slot holding a device copy of bytes of host data. */
nnop_status nnop__slot_upload(nnop_plan *p, const void *host, size_t bytes, int32_t *slot);
/* A new slot with bytes of uninitialized device memory owned by the plan. */
nnop_status nnop__slot_alloc(nnop_plan *p, size_t bytes, int32_t *slot);
/* A device allocation owned by the plan. */
nnop_status nnop__plan_alloc(nnop_plan *p, size_t bytes, void **out);

/* ------------------------------------------------------------------ chain.c */
/* Value v is a constant with host data (so it can be folded). */
int nnop__value_is_const(const nnop_graph *g, int32_t v);
/* n is a batch-norm whose four parameters are such constants (it becomes scale+shift). */
int nnop__bn_is_const(const nnop_graph *g, const nnop__node *n);
/* Canonical epilogue chain of nodes [first, first + count): batch-norm with constant
 * parameters becomes scale+shift; with fold, leading constant bias/scale/shift ops go into
 * the (constant) producer weights and one bias; residual adds move before the bias. */
nnop_status nnop__chain_build(nnop_plan *p, int32_t first, int32_t count, int fold, nnop__chain *c);
void nnop__chain_free(nnop__chain *c);

/* ------------------------------------------------------------------ lowering (lower_*.c) */
/* Sticky-status descriptor helpers for one step. */
nnop_status nnop__dnn_create(nnop_context *ctx, nnop__dnn_step *s, cudnnBackendDescriptorType_t t,
                             cudnnBackendDescriptor_t *out);
nnop_status nnop__dnn_set(nnop_context *ctx, cudnnBackendDescriptor_t d,
                          cudnnBackendAttributeName_t a, const char *aname,
                          cudnnBackendAttributeType_t t, int64_t n, const void *v, const char *file,
                          int line);
#define NNOP_DNN_SET(ctx, d, a, t, n, v)                                                           \
    nnop__dnn_set((ctx), (d), (a), #a, (t), (n), (v), __FILE__, __LINE__)
nnop_status nnop__dnn_finalize(nnop_context *ctx, cudnnBackendDescriptor_t d, const char *what);
/* One attribute to set: a table of them describes a descriptor (nnop__dnn_set_all). */
typedef struct nnop__attr {
    cudnnBackendAttributeName_t name;
    const char *text; /* the name as written, for error messages */
    cudnnBackendAttributeType_t type;
    int64_t n; /* element count; 0: leave unset (an optional attribute) */
    const void *value;
} nnop__attr;
#define NNOP_ATTR(a, t, n, v)                                                                      \
    {                                                                                              \
        (a), #a, (t), (n), (v)                                                                     \
    }
/* A backend descriptor attribute: one cudnnBackendDescriptor_t at p. */
#define NNOP_ATTR_DESC(a, p) NNOP_ATTR(a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, (p))
#define NNOP_COUNT(arr)      ((int)(sizeof(arr) / sizeof((arr)[0])))
/* Set the n attributes of a in order (stopping at the first refused), then finalize d; errors
 * name the attribute, or what for the finalize. */
nnop_status nnop__dnn_set_all(nnop_context *ctx, cudnnBackendDescriptor_t d, const nnop__attr *a,
                              int n, const char *what);

/* A tensor of ndim dims/strides; slot < 0 makes it virtual (FLOAT), else real and bound to
 * slot at execute. */
nnop_status nnop__lower_tensor(nnop_context *ctx, nnop__dnn_step *s, int ndim, const int64_t *dims,
                               const int64_t *strides, nnop_dtype dt, int32_t slot,
                               cudnnBackendDescriptor_t *out);
cudnnDataType_t nnop__dnn_dtype(nnop_dtype t);
/* Producers: y (virtual when an epilogue follows) from the chain's x and w. */
nnop_status nnop__lower_conv(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                             cudnnBackendDescriptor_t y);
nnop_status nnop__lower_matmul(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                               cudnnBackendDescriptor_t y);
/* Epilogue op k of the chain from tensor in to tensor out (lower_pointwise.c). view dims and
 * strides describe the producer output (4-D conv or 3-D matmul). */
nnop_status nnop__lower_epilogue_op(nnop_plan *p, const nnop__chain *c, int k, nnop__dnn_step *s,
                                    int ndim, const int64_t *dims, const int64_t *strides,
                                    cudnnBackendDescriptor_t in, cudnnBackendDescriptor_t out);
/* The whole chain as a cuDNN operation graph (operations only, not finalized as a graph). */
nnop_status nnop__lower_chain(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s);
/* s->graph, the finalized operation graph of the lowered operations (built once, on first
 * need: a plan from cached JSON or one shared with an identical earlier step needs none). */
nnop_status nnop__dnn_graph(nnop_context *ctx, nnop__dnn_step *s);
void nnop__dnn_step_destroy(nnop__dnn_step *s);

/* ------------------------------------------------------------------ engine.c */
/* Pick and build the execution plan of s by the context's policy; on failure the returned
 * status is NNOP_ERR_UNSUPPORTED (or the library error) and why says what was tried. */
nnop_status nnop__engine_select(nnop_plan *p, nnop__dnn_step *s, char *why, size_t len);
/* Steps that shared an identical step's plan before it existed (deferred deserialization)
 * take it now. */
void nnop__engine_reshare(nnop_plan *p);

/* A variant pack binding ptrs (in s->uids order) and the workspace ws. */
nnop_status nnop__dnn_make_vpack(nnop_context *ctx, const nnop__dnn_step *s, void **ptrs, void *ws,
                                 cudnnBackendDescriptor_t *out);

/* ------------------------------------------------------------------ cache_use.c */
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
/* An execution plan from its JSON with handle h, with the raw status so that threads that
 * must not touch the context can call it; *call names the call that failed. */
cudnnStatus_t nnop__plan_from_json(cudnnHandle_t h, const void *json, size_t len,
                                   cudnnBackendDescriptor_t *plan, int64_t *workspace,
                                   const char **call);
/* Record the choice of s (engine, knobs, time, plan JSON); failures are harmless. */
void nnop__dnn_to_cache(nnop_context *ctx, const nnop__dnn_step *s, const nnop__fp *fp);
/* Execution plan of cfg: finalized, with its workspace size. */
nnop_status nnop__dnn_build_plan(nnop_context *ctx, cudnnBackendDescriptor_t cfg,
                                 cudnnBackendDescriptor_t *plan, int64_t *ws);

/* ------------------------------------------------------------------ prefetch.c */
/* (start, join and stop are in cuda_ctx.h) 1 and the plan the context's prefetch rebuilt for
 * fp (now the caller's): ready, waited for, or rebuilt on the calling thread if no prefetch
 * thread had started it; 0 when the prefetch has none (or cuDNN refused it). */
int nnop__prefetch_take(nnop_context *ctx, const nnop__fp *fp, cudnnBackendDescriptor_t *plan,
                        int64_t *workspace);

/* ------------------------------------------------------------------ deserialize.c */
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
/* Queue the JSON of cached entry e (taken from it) as s's plan. */
nnop_status nnop__deser_defer(nnop_plan *p, nnop__dnn_step *s, nnop__cache_entry *e);
/* Deserialize the queued plans on threads, then let identical steps share them. Any failure
 * (cuDNN refused a plan, one is over the workspace limit) sets deser_failed and returns
 * NNOP_ERR_UNSUPPORTED: the caller builds the plan again, deserializing in place. */
nnop_status nnop__deser_resolve(nnop_plan *p);
/* Free the queue (plans not handed to steps included). */
void nnop__deser_free(struct nnop__cuda_plan *cp);

/* ------------------------------------------------------------------ stem.c */
/* Partition starting at node first is a C=3 channels-last conv with constant weights. */
int nnop__stem_applies(const nnop_plan *p, int32_t first);
/* Pad the chain's weights to C=4 now and make the step pad its input at execute. */
nnop_status nnop__stem_pad(nnop_plan *p, nnop__chain *c, nnop__cuda_step *st);
nnop_status nnop__stem_run(nnop_plan *p, const nnop__cuda_step *st);
/* The partition [first, first + count) as the own stem kernel; NNOP_ERR_UNSUPPORTED (no
 * message) when the kernel does not take it. */
nnop_status nnop__stem_build_kernel(nnop_plan *p, int32_t first, int32_t count,
                                    nnop__cuda_step *st);
nnop_status nnop__stem_run_kernel(nnop_plan *p, nnop__cuda_step *st);

/* ------------------------------------------------------------------ blaslt.c */
/* The linear partition [first, first + count) on cuBLASLt: linear [+ bias] [+ ReLU or
 * tanh-GELU] after folding. NNOP_ERR_UNSUPPORTED when the chain is not one of cuBLASLt's
 * epilogues, or cuBLASLt offers no algorithm (a message is set only for the latter). */
nnop_status nnop__step_build_blaslt(nnop_plan *p, int32_t first, int32_t count,
                                    nnop__cuda_step *st);
nnop_status nnop__step_run_blaslt(nnop_plan *p, nnop__cuda_step *st);
void nnop__lt_step_destroy(nnop__lt_step *s);
size_t nnop__lt_step_workspace(const nnop__lt_step *s);
/* "[cublasLt matmul, epilogue E, workspace N B" (no closing bracket) */
size_t nnop__lt_step_describe(const nnop__lt_step *s, char *buf, size_t len);

/* ------------------------------------------------------------------ steps.c */
nnop_status nnop__step_build_kernel(nnop_plan *p, int32_t part, nnop__cuda_step *st);
nnop_status nnop__step_build_epilogue(nnop_plan *p, int32_t first, int32_t count,
                                      nnop__cuda_step *st);
/* A linear partition (with its whole epilogue chain) on the own linear kernel: the fallback
 * when cuDNN offers no acceptable matmul engine (e.g. fp32 without TF32, precompiled only). */
nnop_status nnop__step_build_linear(nnop_plan *p, int32_t first, int32_t count,
                                    nnop__cuda_step *st);
nnop_status nnop__step_run_kernel(nnop_plan *p, nnop__cuda_step *st);
nnop__kview nnop__kview_of(const nnop_tensor_desc *d);

#endif /* NNOP_CUDA_PLAN_H */
