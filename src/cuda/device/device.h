/* device.h: the CUDA backend's lowest stage: per-context state (device, cuDNN and cuBLASLt
 * handles, stream), checked-call helpers, and the compiled plan's device state (the slot
 * table of device pointers, constants, owned memory) that every stage above receives. */
#ifndef NNOP_CUDA_DEVICE_H
#define NNOP_CUDA_DEVICE_H

#include <cuda_runtime.h>

#include "cache.h"
#include "cuda/device/libs.h"
#include "internal.h"

/* Most threads deserializing cached plans at once (engine/deserialize.c), the caller's
 * included. */
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
    struct nnop__prefetch *prefetch; /* cached plans rebuilt in the background (engine/) */
    /* the side stream, for steps of a CUDA-graph plan that run beside the main chain
     * (schedule/), made on the first plan that has one; main: the stream in use before the
     * fork, while side work is being queued */
    cudaStream_t side;
    cudaEvent_t fork_ev, join_ev;
    cudaStream_t main;
};

/* ------------------------------------------------------------------ context (device.c) */
/* The context's device half: device, version checks, plan-cache binding, cuDNN handle, own
 * stream, the stream to use (ctx->opts.stream). fini undoes it (idempotent, also on a
 * half-built state); set_stream points the handles at stream (NULL: the own one). The
 * backend's entry points (../context.c) add the engine's prefetch around these. */
nnop_status nnop__device_init(nnop_context *ctx);
void nnop__device_fini(nnop_context *ctx);
nnop_status nnop__device_set_stream(nnop_context *ctx, void *stream);

/* Every backend entry point runs between these two (nnop.h, "Devices"): enter makes ctx's
 * device current on the calling thread and keeps the caller's in *prev; leave makes that
 * one current again. A thread may thus use a context of any device, whatever its current
 * device, and finds its own unchanged afterwards. */
nnop_status nnop__device_enter(nnop_context *ctx, int *prev);
void nnop__device_leave(int prev);

/* The side stream (schedule/): side_init makes it and its two events once per context.
 * fork: what is queued on the stream so far comes before what follows on the side stream,
 * and the context's stream (and cuDNN handle) becomes the side stream; unfork: back to the
 * main stream, marking where the side work queued so far ends; join: the main stream waits
 * for that mark. */
nnop_status nnop__device_side_init(nnop_context *ctx);
nnop_status nnop__device_fork(nnop_context *ctx);
nnop_status nnop__device_unfork(nnop_context *ctx);
nnop_status nnop__device_join(nnop_context *ctx);

/* Wait for the work ctx queued on its streams (the context's and the side stream), never
 * for the device as a whole. The device must be current (between enter and leave). */
nnop_status nnop__device_wait_queued(nnop_context *ctx);

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

/* Device memory through the context's allocator (options.allocator; cudaMalloc/cudaFree where
 * it has none): every block nnop allocates itself goes through these two (memory.c). a may be
 * NULL (nnop's own). A NULL from the allocator is cudaErrorMemoryAllocation. */
cudaError_t nnop__dev_malloc(const nnop_allocator *a, void **out, size_t bytes);
void nnop__dev_free(const nnop_allocator *a, void *p);

/* Copy src into dst of len bytes, truncating, always NUL-terminated. */
void nnop__copy_text(char *dst, size_t len, const char *src);

#define NNOP_CU(ctx, call)  nnop__cuda_check((ctx), (call), #call, __FILE__, __LINE__)
#define NNOP_DNN(ctx, call) nnop__cudnn_check((ctx), (call), #call, __FILE__, __LINE__)

/* ------------------------------------------------------------------ the compiled plan */
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

/* Batch buckets of a batch_range plan: powers of two below the built batch, then it. */
#define NNOP_MAX_BUCKETS 24

/* Pointer sets a plan keeps a captured CUDA graph for (double buffering, several batches'
 * buffers): the fifth set captures again over the oldest. */
#define NNOP_GRAPH_SETS 4

/* The CUDA side of a compiled plan (p->cuda). Its slot table and constant block are this
 * stage's (slots.c); the steps, the engine memo and the deserialization queue are filled by
 * the stages above (their types are theirs: lower/, engine/, impl/). */
struct nnop__cuda_plan {
    struct nnop__cuda_step *steps; /* one per partition, capacity n_nodes (impl/impl.h) */
    void **slot;                   /* device pointer of each slot: values first, then extras */
    int32_t n_slots, cap_slots;
    void **owned; /* cudaMalloc'd blocks */
    int32_t n_owned, cap_owned;
    size_t owned_bytes;  /* their sizes together (nnop_plan_memory's device_total) */
    size_t weight_bytes; /* of which blocks of constants and constants of their own */
    /* the block compile-time slots (constants, folded weights) are carved from */
    char *const_block;
    size_t const_used, const_cap;
    void *workspace;
    int64_t workspace_bytes;
    /* the side stream's steps have a workspace of their own (schedule/) */
    void *side_workspace;
    int64_t side_workspace_bytes;
    int64_t arena_bytes;
    void *arena; /* the partition outputs' buffers (compile.c), arena_bytes long */
    /* whole-plan CUDA graph (compile option cuda_graph), keyed by the user pointers */
    cudaGraphExec_t gexec[NNOP_GRAPH_SETS];
    void **gkey; /* per kept graph, then this call's: the inputs' and outputs' pointers */
    int n_graphs, next_graph;
    /* outputs that are inputs or constants: a device copy after the steps into out_ptr[i]
     * from slot copy_slot[i] (-1 for computed outputs, which the steps write in place) */
    int32_t *copy_slot;
    void **out_ptr;
    int graph_failed;
    /* steps whose engine is chosen, by fingerprint: an identical later step (ResNet-50 has
     * 54 conv steps of 25 kinds) shares the execution plan instead of building it again */
    nnop__fp *memo_fp;
    struct nnop__dnn_step **memo_step;
    int32_t n_memo, cap_memo;
    nnop__compile_prof prof;
    /* > 0: cached plans are queued in jobs and deserialized by this many threads */
    int deser_threads;
    int deser_failed;
    struct nnop__deser_job *jobs; /* engine/engine.h */
    int32_t n_jobs, cap_jobs;
    /* values that live in a channel slice of a concat's output instead of a buffer of their
     * own (impl/concat.c plans them before the steps are built): per value, the concat's
     * output value (-1: none) and the slice's offset there in elements */
    int32_t *slice_in;
    int64_t *slice_off;
    /* slots of the memory a run writes outside the arena and the workspaces (a padded input,
     * partial sums: nnop__slot_run_scratch) and their sizes */
    int32_t *run_slot;
    size_t *run_bytes;
    int32_t *run_group; /* 0: the built batch's steps; k > 0: a bucket's (no memory here) */
    int32_t n_run, cap_run;
    int32_t building_bucket; /* while a bucket's steps are built: its group (compile.c) */
    /* batch_range (../compile.c): the steps of each batch bucket, smallest batch first; the
     * last bucket is the built batch, whose steps are `steps` (n_buckets 0: no range) */
    int32_t n_buckets;
    int64_t bucket_batch[NNOP_MAX_BUCKETS];
    struct nnop__cuda_step *bucket_steps[NNOP_MAX_BUCKETS];
    /* derived constants made once whatever the number of buckets (const_memo.c) */
    int memo_on;
    struct nnop__const_memo *cmemo;
    int32_t n_cmemo, cap_cmemo;
};

/* The plan's sets of steps: one per batch bucket, or the plan's own alone without a range;
 * set k's steps. */
static inline int32_t nnop__bucket_count(const struct nnop__cuda_plan *cp)
{
    return cp->n_buckets ? cp->n_buckets : 1;
}
static inline struct nnop__cuda_step *nnop__bucket_steps(const struct nnop__cuda_plan *cp,
                                                         int32_t k)
{
    return cp->n_buckets ? cp->bucket_steps[k] : cp->steps;
}

/* ------------------------------------------------------------------ memo (const_memo.c) */
/* Derived constants (folded, packed, per-channel vectors) made once per plan where memo_on
 * (batch_range plans build every step once per bucket): find says whether one made of (tag,
 * key, the aux_len bytes at aux: compared in full) exists and gives its slot; keep records
 * one (a copy of aux is kept until the plan goes). tag must be a string literal. Both do
 * nothing where memo_on is 0. upload_const: nnop__slot_upload of host data that no kernel
 * changes afterwards, through the memo. */
int nnop__const_memo_find(nnop_plan *p, const char *tag, int64_t key, const void *aux,
                          size_t aux_len, int32_t *slot);
nnop_status nnop__const_memo_keep(nnop_plan *p, const char *tag, int64_t key, const void *aux,
                                  size_t aux_len, int32_t slot);
nnop_status nnop__slot_upload_const(nnop_plan *p, const char *tag, const void *host, size_t bytes,
                                    int32_t *slot);
void nnop__const_memo_free(struct nnop__cuda_plan *cp);

/* ------------------------------------------------------------------ slots (slots.c) */
/* Slot of value v; constants are uploaded on first use. */
nnop_status nnop__slot_value(nnop_plan *p, int32_t v, int32_t *slot);
/* A new slot holding a device copy of bytes of host data. */
nnop_status nnop__slot_upload(nnop_plan *p, const void *host, size_t bytes, int32_t *slot);
/* A new slot with bytes of uninitialized device memory owned by the plan. */
nnop_status nnop__slot_alloc(nnop_plan *p, size_t bytes, int32_t *slot);
/* The same for memory a run writes (a padded input, partial sums): recorded in the plan's
 * run_slot list, so an execution context (../exec.c) gives each one a copy of its own. */
nnop_status nnop__slot_run_scratch(nnop_plan *p, size_t bytes, int32_t *slot);
/* A device allocation owned by the plan; what names it in the out-of-memory message (which
 * gives the bytes asked and what the plan held before). */
nnop_status nnop__plan_alloc(nnop_plan *p, size_t bytes, const char *what, void **out);

#endif /* NNOP_CUDA_DEVICE_H */
