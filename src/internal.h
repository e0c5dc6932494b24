/* internal.h: the few data structures every stage shares (context, graph, node, plan). */
#ifndef NNOP_INTERNAL_H
#define NNOP_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "nnop/nnop.h"
#include "util/compiler.h"

#define NNOP_ERROR_LEN        2048
#define NNOP_LOAD_THREADS_MAX 8 /* nnop_context_options.load_threads */
#define NNOP_NAME_LEN         48
#define NNOP_GRAPH_ERRORS     64   /* builder messages a graph keeps (graph.c) */
#define NNOP_IMPL_LIST_LEN    1024 /* options.disable_impl / enable_impl, NUL included */
/* Oldest cuDNN the CUDA backend runs on: the first 9.x backend API (9.0). What later 9.x
 * releases added is asked for only under a run-time version gate (src/cuda/engine/engine.h:
 * nnop__cfg_workspace_way). The context refuses an older one; the doctor reports it. */
#define NNOP_CUDNN_MIN_VERSION 90000
#define NNOP_MAX_NODE_INPUTS   NNOP_MAX_CONCAT_INPUTS /* concat; the other ops take 1 to 5 */
#define NNOP_NONE_ID           INT32_MAX              /* nnop_none(): an absent optional operand */
/* A public nnop_value id is the value's index in its graph (below NNOP_MAX_GRAPH_VALUES =
 * 2^24) plus its graph's tag in bits 24..30, so that a value handed to another graph's
 * builder is refused, not read as one of that graph's. Tags run 1..126: ids stay positive
 * and never equal NNOP_NONE_ID. Node and value arrays inside the library hold indices. */
#define NNOP__VALUE_INDEX_BITS 24
#define NNOP__VALUE_INDEX(id)  ((int32_t)((id) & ((1 << NNOP__VALUE_INDEX_BITS) - 1)))
#define NNOP__GRAPH_TAGS       126

/* ------------------------------------------------------------------ ops */
typedef enum nnop_op_kind {
    NNOP_OP_CONV = 0,
    NNOP_OP_BIAS,
    NNOP_OP_ACT,
    NNOP_OP_BATCHNORM,
    NNOP_OP_ADD,
    NNOP_OP_POOL,
    NNOP_OP_GLOBAL_AVG_POOL,
    NNOP_OP_FLATTEN,
    NNOP_OP_LINEAR,
    NNOP_OP_SOFTMAX,
    NNOP_OP_MUL,
    NNOP_OP_SUB,
    NNOP_OP_DIV,
    NNOP_OP_LAYER_NORM,
    NNOP_OP_GROUP_NORM,
    NNOP_OP_RMS_NORM,
    NNOP_OP_CONCAT,
    NNOP_OP_RESIZE,
    NNOP_OP_CONV_TRANSPOSE,
    NNOP_OP_LRN,
    NNOP_OP_CHANNEL_SHUFFLE,
    NNOP_OP_CHANNEL_SLICE,
    NNOP_OP_KIND_COUNT
} nnop_op_kind;

/* How the partitioner treats an op. */
typedef enum nnop_fusion_role {
    NNOP_ROLE_PRODUCER,  /* conv, transposed conv, linear: may absorb an epilogue chain */
    NNOP_ROLE_EPILOGUE,  /* bias, activation, batch-norm, add, mul/sub/div: pointwise */
    NNOP_ROLE_NORM,      /* layer, group and RMS norm: may absorb an epilogue chain (run in the
                          * norm's own pass, not as a producer with weights) */
    NNOP_ROLE_STANDALONE /* pooling, softmax, flatten, concat, resize, LRN, channel shuffle
                          * and slice: its own partition */
} nnop_fusion_role;

typedef struct nnop__act_attr {
    nnop_act_kind kind;
    float alpha;  /* leaky slope, elu alpha */
    float lo, hi; /* clamp bounds (relu6: 0, 6) */
} nnop__act_attr;

typedef struct nnop__pool_attr {
    nnop_pool_kind kind;
    nnop_pool_params p;
} nnop__pool_attr;

typedef struct nnop__norm_attr {
    float eps;
    nnop_norm_axes axes; /* layer norm */
    int64_t groups;      /* group norm */
} nnop__norm_attr;

typedef struct nnop__lrn_attr {
    int64_t size;
    float alpha, beta, bias;
} nnop__lrn_attr;

typedef union nnop__node_attr {
    nnop_conv_params conv;
    nnop__act_attr act;
    float eps; /* batch-norm */
    nnop__pool_attr pool;
    nnop__norm_attr norm;
    nnop_resize_params resize;
    nnop_conv_transpose_params deconv;
    nnop__lrn_attr lrn;
    int64_t shuffle_groups; /* channel shuffle */
    int64_t slice[2];       /* channel slice: start, count */
} nnop__node_attr;

/* A node: op kind, attributes, input value ids and one output value id. Absent optional
 * inputs (linear without bias) are NNOP_NONE_ID. */
typedef struct nnop__node {
    nnop_op_kind op;
    int n_in;
    int32_t in[NNOP_MAX_NODE_INPUTS];
    int32_t out;
    nnop__node_attr attr;
} nnop__node;

/* One entry of the op table (ops/registry.c). */
typedef struct nnop__op_def {
    const char *name;
    nnop_fusion_role role;
    /* Check inputs (descs of the node's inputs, NULL for absent optional ones) and attributes,
     * fill *out. On failure return the status and write the reason into msg. */
    nnop_status (*infer)(const nnop__node *n, const nnop_tensor_desc *const *in,
                         nnop_tensor_desc *out, char *msg, size_t msg_len);
    /* CPU reference kernel on float32 data laid out with the descriptors' strides. Cannot fail:
     * everything was validated by infer. Inputs may alias nothing; out is separate memory. */
    void (*reference)(const nnop__node *n, const float *const *in,
                      const nnop_tensor_desc *const *in_desc, float *out,
                      const nnop_tensor_desc *out_desc);
} nnop__op_def;

/* The op table entry for kind k (NULL for an unknown kind). */
const nnop__op_def *nnop__op(nnop_op_kind k);
/* Resize's source-coordinate scale along axis i (0 H, 1 W) from in to out, in float as PyTorch
 * computes it (ops/resize.c; the CUDA kernel uses the same value). */
float nnop__resize_coord_scale(const nnop_resize_params *p, int i, int64_t in, int64_t out);

/* ------------------------------------------------------------------ graph */
typedef enum nnop__value_kind {
    NNOP_VALUE_INPUT,
    NNOP_VALUE_CONSTANT,
    NNOP_VALUE_NODE
} nnop__value_kind;

typedef struct nnop__value {
    nnop_tensor_desc desc;
    nnop__value_kind kind;
    int32_t producer;     /* node index, -1 for inputs and constants */
    int32_t n_consumers;  /* node inputs using it, graph outputs excluded */
    int32_t input_index;  /* position among graph inputs, or -1 */
    int32_t output_index; /* position among graph outputs, or -1 */
    void *data;           /* constants: host copy in desc.dtype, packed as desc */
    int layout_assumed;   /* NCHW by default: no input or constant has stated a layout yet */
    int named;            /* a node's result, named by nnop_graph_name_next (else "act#3") */
    char name[NNOP_NAME_LEN];
    char output_name[NNOP_NAME_LEN]; /* as nnop_output named it (an input keeps its own name) */
} nnop__value;

struct nnop_graph {
    nnop_context *ctx;
    nnop__value *values;
    int32_t n_values, cap_values;
    nnop__node *nodes;
    int32_t n_nodes, cap_nodes;
    int32_t *inputs; /* value ids in declaration order */
    int32_t n_inputs, cap_inputs;
    int32_t *outputs;
    int32_t n_outputs, cap_outputs;
    nnop_status status;         /* first builder error: the graph's, compile fails with it */
    char error[NNOP_ERROR_LEN]; /* its message, reported again by compile */
    char **errors;    /* every builder error's message in order, the first NNOP_GRAPH_ERRORS kept */
    int32_t n_errors; /* all of them, kept or not */
    int borrows_data; /* a plan's copy: constants' data belong to the user's graph */
    int layout;  /* nnop_layout of the first 4-D input or constant with one of its own, -1 before */
    int32_t tag; /* 1..NNOP__GRAPH_TAGS, in the ids of this graph's values */
    char next_name[NNOP_NAME_LEN]; /* nnop_graph_name_next: the next node's name, "" none */
    /* In its context's list of live graphs (a plan's copy is in none), so that
     * nnop_context_destroy can leave it an orphan instead of a dangling pointer. */
    int listed;
    struct nnop_graph *live_prev, *live_next;
};

/* ------------------------------------------------------------------ context */
struct nnop__cuda_ctx; /* src/cuda: handle, stream, device properties */
struct nnop__oneshot;  /* src/oneshot.c: plan cache of the one-call entry points */

struct nnop_context {
    nnop_backend backend;
    nnop_context_options opts;
    char last_error[NNOP_ERROR_LEN];
    char backend_reason[NNOP_ERROR_LEN]; /* why AUTO chose the CPU, "" otherwise */
    struct nnop__cuda_ctx *cuda;
    struct nnop__oneshot *oneshot;
    struct nnop_plan_cache *plan_cache; /* src/cache.c: own or shared, never NULL once created */
    int log; /* options.log_level or NNOP_LOG, at creation: 0 off, 1 compiles, 2 executes */
    char log_tag[NNOP_NAME_LEN];           /* options.log_tag's copy, "" none */
    char disable_impl[NNOP_IMPL_LIST_LEN]; /* options.disable_impl's copy */
    char enable_impl[NNOP_IMPL_LIST_LEN];  /* options.enable_impl's copy */
    int debug_poison;                      /* NNOP_DEBUG_POISON=1 read at creation (nnop.h) */
    nnop_allocator alloc; /* options.allocator's copy; NULL members: nnop's own (memory.c) */
    int32_t log_plans;    /* plans compiled, numbering them in the log */
    uint32_t graphs_made; /* numbers the graphs' tags */
    /* Graphs and plans not yet destroyed: nnop_context_destroy orphans them (graph.c,
     * plan.c), so a handle that outlives its context fails cleanly instead of reading freed
     * memory. One thread at a time uses a context and what it made: no lock. */
    struct nnop_graph *live_graphs;
    struct nnop_plan *live_plans;
};

/* ------------------------------------------------------------------ partitions */
#define NNOP_REASON_LEN 256

/* A contiguous run of nodes in topological order, executed as one step: node ids
 * [first, first + count) of the plan's graph. */
typedef struct nnop__partition {
    int32_t first, count;
    char reason[NNOP_REASON_LEN]; /* why it ends here / why it was split */
} nnop__partition;

/* ------------------------------------------------------------------ plan */
struct nnop__cuda_plan;
struct nnop__cpu_plan;

struct nnop_plan {
    nnop_context *ctx;
    nnop_graph *g; /* private copy of the compiled graph's structure; constants' host data
                    * are borrowed from the user's graph while compiling, then dropped */
    nnop_compile_options opts;
    nnop__partition *parts;
    int32_t n_parts;
    struct nnop__cpu_plan *cpu; /* CPU backend: its buffers (src/cpu) */
    struct nnop_exec *execs;    /* its execution contexts (src/exec.c), orphaned with it */
    int64_t batch_max;          /* compile option batch_range: the built batch; 0 without */
    int32_t log_id;             /* its number in the NNOP_LOG lines */
    struct nnop__cuda_plan *cuda;
    int listed; /* in ctx->live_plans; ctx is NULL once the context is gone (an orphan) */
    struct nnop_plan *live_prev, *live_next;
};

/* ------------------------------------------------------------------ errors (src/error.c) */
/* Record a formatted message in ctx (if not NULL) and return st. */
nnop_status nnop__fail(nnop_context *ctx, nnop_status st, const char *fmt, ...) NNOP_PRINTF(3, 4);
/* 1 when an execute's arrays hold every input and output pointer of g; else 0 and why ("inputs
 * array is NULL", "outputs[1] ('y') is NULL"), for nnop_plan_execute and nnop_exec_run, which
 * each put it where their caller reads it (graph.c). */
int nnop__check_io(const nnop_graph *g, const void *const *inputs, void *const *outputs, char *why,
                   size_t len);
/* The last error's message without its "NNOP_ERR_...: " prefix: what a message wrapping it
 * (nnop__fail(ctx, st, "...: %s", ...)) quotes, so the status is named once. */
const char *nnop__error_body(const nnop_context *ctx);
/* The log level of a context whose options ask for option: NNOP_LOG's 0, 1 or 2 when set to
 * one of them, option when unset or empty, 0 (said on stderr) for any other value. */
int nnop__log_level(int option);
/* One line of the context's log at level (1 compiles, 2 executes) when its level reaches it:
 * to options.log_fn, else to stderr as "nnop_log[:tag],<line>\n". */
void nnop__log(const nnop_context *ctx, int level, const char *fmt, ...) NNOP_PRINTF(3, 4);
/* NNOP_DEBUG_POISON=1 in the environment (nnop.h, Logging). */
int nnop__debug_poison(void);
nnop_status nnop__vfail(nnop_context *ctx, nnop_status st, const char *fmt, va_list ap)
        NNOP_PRINTF(3, 0);
void nnop__clear_error(nnop_context *ctx);

/* ------------------------------------------------------------------ options (src/options.c) */
/* Whether the implementation entry name is listed in NNOP_ENABLE_IMPL (enable) or
 * NNOP_DISABLE_IMPL where that variable is set, else in the context's options. */
int nnop__impl_listed(const nnop_context *ctx, int enable, const char *name);
/* NNOP_NORM_RTC=1 where the variable is set, else options.norm_rtc. */
int nnop__norm_rtc(const nnop_context *ctx);
/* NNOP_SIDE_STREAM=1 where the variable is set, else the compile option side_stream. */
int nnop__side_stream(const nnop_plan *p);

/* ------------------------------------------------------------------ descriptors (src/tensor.c) */
/* dtypes graphs compute in (f32, f16, bf16); the 8-bit ones are storage only (util/eight_bit.c:
 * nnop_convert, nnop_tensor_copy, nnop_quantize) */
int nnop__dtype_valid(nnop_dtype t);
int nnop__dtype_is_8bit(nnop_dtype t);
int nnop__dtype_stored(nnop_dtype t); /* valid or 8-bit */
void nnop__8bit_to_f32(nnop_dtype t, const void *src, float *dst, int64_t n);
void nnop__8bit_from_f32(nnop_dtype t, const float *src, void *dst, int64_t n);
/* y = dequantize(quantize(x, scale)) for n floats, exactly as nnop_quantize and
 * nnop_dequantize would (src/quantize.c); x and y may be the same. */
void nnop__fake_quantize(nnop_dtype q_type, const float *x, int64_t n, float scale, float *y);
const char *nnop__dtype_name(nnop_dtype t);
/* NHWC when the 4-D strides are channels-last; everything else is treated as packed
 * row-major (NCHW for 4-D). */
nnop_layout nnop__layout_of(const nnop_tensor_desc *d);
/* d is 4-D with offsets that NCHW and NHWC strides give alike (so no layout of its own). */
int nnop__layout_ambiguous(const nnop_tensor_desc *d);
/* d is 4-D and its offsets are those of packed layout l (ambiguous ones fit both). */
int nnop__fits_layout(const nnop_tensor_desc *d, nnop_layout l);
/* Validate a user descriptor: dtype, 1 <= ndim <= 8, positive dims, packed strides (NCHW or
 * NHWC for 4-D, row-major otherwise), element count without overflow. */
nnop_status nnop__check_desc(const nnop_tensor_desc *d, char *msg, size_t len);
/* The same for host data: the 8-bit storage dtypes pass too. */
nnop_status nnop__check_stored_desc(const nnop_tensor_desc *d, char *msg, size_t len);
int nnop__desc_equal(const nnop_tensor_desc *a, const nnop_tensor_desc *b);
/* Packed strides of layout l for a 4-D desc, row-major otherwise. */
void nnop__set_packed_strides(nnop_tensor_desc *d, nnop_layout l);
/* "f16[3,7,17,17] NHWC" */
void nnop__desc_string(const nnop_tensor_desc *d, char *buf, size_t len);

/* ------------------------------------------------------------------ text (src/util/text.c) */
/* A text written into a caller's buffer like snprintf: always NUL-terminated when len > 0,
 * truncated when it does not fit, and used counts what the whole text needs. */
typedef struct nnop__text {
    char *buf;
    size_t len, used;
} nnop__text;
void nnop__text_init(nnop__text *t, char *buf, size_t len); /* buf may be NULL (len ignored) */
void nnop__textf(nnop__text *t, const char *fmt, ...) NNOP_PRINTF(2, 3);

/* ------------------------------------------------------------------ dtype conversion */
void nnop__to_f32(nnop_dtype t, const void *src, float *dst, int64_t n);
void nnop__from_f32(nnop_dtype t, const float *src, void *dst, int64_t n);
/* Round float32 values in place to dtype t's precision (no-op for f32). */
void nnop__round_to(nnop_dtype t, float *x, int64_t n);

/* ------------------------------------------------------------------ graph helpers (src/graph.c) */
const char *nnop__node_label(const nnop_graph *g, int32_t node, char *buf, size_t len);
/* Copy the structure of g; the copy borrows the constants' data (valid while g lives):
 * backends read it while building and keep what they need (CPU buffers, device uploads). */
nnop_status nnop__graph_clone(const nnop_graph *g, nnop_graph **out);
void nnop__graph_drop_borrowed(nnop_graph *g);
/* Give values that fit both layouts the graph's packed strides (offsets unchanged). */
void nnop__graph_settle_layouts(nnop_graph *g);
/* Check the graph is compilable: no builder error, at least one output, every id valid. */
nnop_status nnop__graph_validate(nnop_graph *g);
/* nnop_context_destroy: each live graph of ctx becomes an orphan (no context, a sticky error
 * that says so); nnop_graph_destroy is all that is left to do with it. */
void nnop__graphs_orphan(nnop_context *ctx);
/* nnop_context_destroy, before the backend is shut down: each live plan of ctx frees its
 * buffers and engines while the context still can, and becomes an orphan. */
void nnop__plans_orphan(nnop_context *ctx);

/* ------------------------------------------------------------------ partitioner */
/* Cut the graph into partitions; fuse = 0 gives one partition per node. */
nnop_status nnop__partition_graph(const nnop_graph *g, int fuse, nnop__partition **parts,
                                  int32_t *n_parts);
/* The least a partition moves: the bytes of each value it reads from outside (inputs,
 * constants, other partitions' results) and of each it writes for use outside, each once. */
int64_t nnop__partition_bytes(const nnop_graph *g, const nnop__partition *part);

/* ------------------------------------------------------------------ CPU backend (src/cpu) */
nnop_status nnop__cpu_plan_build(nnop_plan *p);
nnop_status nnop__cpu_plan_execute(nnop_plan *p, const void *const *in, void *const *out);
void nnop__cpu_plan_destroy(nnop_plan *p);
/* nnop_plan_memory of a CPU plan: fills weights, intermediates, workspace and host_total. */
void nnop__cpu_plan_memory(const nnop_plan *p, nnop_plan_memory_info *m);
/* The same for a plan not built yet (nnop_graph_memory: p has its graph and options, no
 * backend); m zeroed by the caller. Failures set p's context's message. */
nnop_status nnop__cpu_graph_memory(const nnop_plan *p, nnop_plan_memory_info *m);
/* The lines nnop_plan_describe adds for a CPU plan (its quantized layers). */
void nnop__cpu_plan_describe(const nnop_plan *p, nnop__text *t);
/* A plan of g on the CPU reference backend whatever g's context runs on, not listed among
 * the context's plans (nnop_calibrate: destroyed with nnop_plan_destroy before it returns). */
nnop_status nnop__plan_compile_reference(nnop_graph *g, nnop_plan **out);
/* An execution state of a CPU plan (its own buffers; the plan's constants shared): create
 * (in the caller's scratch when not NULL; what failed in why), run at batch (0: the built shapes;
 * checked by the caller), its bytes, destroy (before the plan's CPU side goes). */
struct nnop__cpu_exec;
nnop_status nnop__cpu_exec_create(const nnop_plan *p, void *scratch, struct nnop__cpu_exec **out,
                                  char *why, size_t len);
/* The bytes a caller's block for an execution state's buffers needs (any alignment). */
size_t nnop__cpu_exec_scratch_bytes(const nnop_plan *p);
void nnop__cpu_exec_run(const nnop_plan *p, struct nnop__cpu_exec *e, int64_t batch,
                        const void *const *in, void *const *out);
/* Run p's own execution state on in without writing outputs, handing see every input and
 * node result (value id, n floats) as it is written (nnop_calibrate). */
typedef void (*nnop__value_seen)(void *user, int32_t value, const float *x, int64_t n);
void nnop__cpu_plan_observe(nnop_plan *p, const void *const *in, nnop__value_seen see, void *user);
/* Its intermediates and workspace (the staging of 16-bit constants), added to host_total. */
void nnop__cpu_exec_memory(const struct nnop__cpu_exec *e, nnop_plan_memory_info *m);
void nnop__cpu_exec_destroy(const nnop_plan *p, struct nnop__cpu_exec *e);

/* ------------------------------------------------------------------ execution contexts */
/* Compile option batch_range: every value computed from the inputs keeps input 0's dim 0
 * (the batch); sets p->batch_max. NNOP_OK without the option (src/exec.c). */
nnop_status nnop__batch_range_check(nnop_plan *p);
/* The plan's execution contexts lose their buffers and their plan (plan destroy, context
 * destroy): later calls on them fail. */
void nnop__execs_orphan(nnop_plan *p);

/* ------------------------------------------------------------------ CUDA backend (src/cuda) */
/* Number of usable CUDA devices, 0 when none (or when built without CUDA). */
/* CUDA devices present; 0 with why (len bytes) and *st: NNOP_ERR_NO_DEVICE (no device, no
 * driver, a CPU-only build) or NNOP_ERR_VERSION (a driver older than the CUDA runtime). */
int nnop__cuda_device_count(nnop_status *st, char *why, size_t len);
nnop_status nnop__cuda_context_init(nnop_context *ctx);
void nnop__cuda_context_fini(nnop_context *ctx);
nnop_status nnop__cuda_set_stream(nnop_context *ctx, void *stream);
nnop_status nnop__cuda_synchronize(nnop_context *ctx);
nnop_status nnop__cuda_plan_build(nnop_plan *p);
nnop_status nnop__cuda_plan_execute(nnop_plan *p, const void *const *in, void *const *out);
void nnop__cuda_plan_destroy(nnop_plan *p);
/* Append the description of partition i (engine, workspace, ...) to buf; returns chars needed. */
size_t nnop__cuda_partition_describe(const nnop_plan *p, int32_t i, char *buf, size_t len);
/* nnop_plan_engines on a CUDA plan. */
nnop_status nnop__cuda_plan_engines(nnop_plan *p, nnop_engine_info *out, int cap, int *count);
/* nnop_plan_partition of a CUDA plan: what runs partition i (impl, engine, workspace). */
void nnop__cuda_partition_info(const nnop_plan *p, int32_t i, nnop_partition_info *out);
/* nnop_plan_memory of a CUDA plan: fills the device fields. */
void nnop__cuda_plan_memory(const nnop_plan *p, nnop_plan_memory_info *m);
/* A batch_range plan's buckets, "engines for batches 1, 2, 4, 8 (...)", into buf like
 * snprintf; 0 (nothing written) without a range. */
size_t nnop__cuda_plan_buckets(const nnop_plan *p, char *buf, size_t len);
/* Execution contexts of a CUDA plan (src/cuda/exec.c): create's errors are in p->ctx; the
 * others copy theirs into err (len bytes), the execution context's own message. */
struct nnop__cuda_exec;
size_t nnop__cuda_exec_scratch_bytes(const nnop_plan *p);
nnop_status nnop__cuda_exec_create(nnop_plan *p, void *scratch, struct nnop__cuda_exec **out);
nnop_status nnop__cuda_exec_run(struct nnop__cuda_exec *e, int64_t batch, const void *const *in,
                                void *const *out, char *err, size_t len);
nnop_status nnop__cuda_exec_set_stream(struct nnop__cuda_exec *e, void *stream, char *err,
                                       size_t len);
nnop_status nnop__cuda_exec_synchronize(struct nnop__cuda_exec *e, char *err, size_t len);
void nnop__cuda_exec_memory(const struct nnop__cuda_exec *e, nnop_plan_memory_info *m);
void nnop__cuda_exec_destroy(nnop_plan *p, struct nnop__cuda_exec *e);

nnop_status nnop__cuda_malloc(nnop_context *ctx, size_t bytes, void **out);
void nnop__cuda_free(nnop_context *ctx, void *p);
/* to_device: host -> device, else device -> host; synchronous on the context's stream */
nnop_status nnop__cuda_copy(nnop_context *ctx, void *dst, const void *src, size_t bytes,
                            int to_device);

/* 1 when the shared library `name` can be loaded (src/platform/dl.c). */
int nnop__platform_can_load(const char *name);

/* ------------------------------------------------------------------ one-call cache */
void nnop__oneshot_destroy(nnop_context *ctx);

/* ------------------------------------------------------------------ memory */
/* Tensor memory on the host through the context's allocator (malloc where it has none):
 * the CPU backend's buffers and nnop_malloc there (src/memory.c). */
void *nnop__host_alloc(const nnop_context *ctx, size_t bytes);
void nnop__host_free(const nnop_context *ctx, void *p);
void *nnop__calloc(size_t n, size_t size);
void nnop__free(void *p);
/* Whether [a, a + a_len) and [b, b + b_len) share a byte. */
int nnop__ranges_overlap(const void *a, uint64_t a_len, const void *b, uint64_t b_len);
/* Index of the first nonzero of v[0..n), or -1: an options struct's reserved fields, which must
 * be zero so that a later meaning never surprises an old caller. */
int nnop__first_nonzero(const uint64_t *v, size_t n);
/* a * b into *out; returns 0 on overflow or negative operands */
int nnop__mul_i64(int64_t a, int64_t b, int64_t *out);

#endif /* NNOP_INTERNAL_H */
