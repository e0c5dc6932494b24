/* lower_parts.h: what the lowering stage's parts share: the canonical epilogue chain (chain.c),
 * the step that owns the descriptors and the sticky-status descriptor helpers (descriptors.c),
 * the producers (conv.c), the epilogue ops (pointwise.c) and the norm (norm.c). The parts
 * include this header and never lower.h, whose entry (lower.c) calls them: the stage reads
 * one way. Nothing here chooses an engine or runs anything. */
#ifndef NNOP_CUDA_LOWER_PARTS_H
#define NNOP_CUDA_LOWER_PARTS_H

#include "cuda/device/device.h"
#include "cuda/kernels/kernels.h"

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
    int bmode;             /* MUL, SUB, DIV: NNOP_BCAST_* of the operand in slot[0] */
    int64_t bsn, bsc, xsn; /* its sample and channel strides, the chain value's sample stride */
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

/* Why a step takes no runtime-compiled engine (nnop__dnn_step.rtc_unsafe; 0: none). */
enum { NNOP_RTC_UNSAFE = 1, NNOP_RTC_1X1 = 2, NNOP_RTC_NORM = 3 };

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
    /* nonzero: no runtime-compiled engine (descriptors.c): NNOP_RTC_UNSAFE, a 16-bit real
     * tensor in the class where they gave wrong results or misaligned stores (issue 10);
     * NNOP_RTC_1X1, a 16-bit 1x1 conv, where they were measured slower; NNOP_RTC_NORM, a
     * norm forward, whose runtime-compiled engine ran 13x slower than the own kernel */
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
    int n_timed; /* configs this process's autotuning timed (0: none, or from the plan cache) */
    float time_us;
    /* variant packs, one per binding set seen (round robin) */
    cudnnBackendDescriptor_t vpack[NNOP_VPACK_CACHE];
    void *vptrs[NNOP_VPACK_CACHE][NNOP_STEP_MAX_IO];
    int n_vpack, next_vpack;
    void *ptrs[NNOP_STEP_MAX_IO]; /* scratch for execute */
    /* a by-value scalar (a norm's epsilon): 1 + its io index (0: none), its value; its slot
     * is -1 and its pointer this host copy (nnop__dnn_io_ptr); such steps skip the plan cache,
     * whose warm-up runs would hand it device memory */
    int scalar_io;
    float scalar;
} nnop__dnn_step;

/* ------------------------------------------------------------------ chain.c */
/* Value v is a constant with host data (so it can be folded). */
int nnop__value_is_const(const nnop_graph *g, int32_t v);
/* n is a batch-norm whose four parameters are such constants (it becomes scale+shift). */
int nnop__bn_is_const(const nnop_graph *g, const nnop__node *n);
/* Canonical epilogue chain of nodes [first, first + count): batch-norm with constant
 * parameters becomes scale+shift, a multiply by (subtract of) a constant 1,C,1,1 a scale (a
 * bias); with fold, leading constant bias/scale/shift ops go into
 * the (constant) producer weights and one bias; residual adds move before the bias. */
nnop_status nnop__chain_build(nnop_plan *p, int32_t first, int32_t count, int fold, nnop__chain *c);
void nnop__chain_free(nnop__chain *c);

/* ------------------------------------------------------------------ lowering */
/* descriptors.c, conv.c, pointwise.c, norm.c */
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
/* A conv's real filter tensor w (K, C/groups, R, S; or C, K/groups, R, S for the data-gradient
 * conv): as nnop__lower_tensor, but a 1x1 filter is not taken for a batch of 1x1 images; a
 * 16-bit one marks the step NNOP_RTC_1X1. */
nnop_status nnop__lower_filter(nnop_context *ctx, nnop__dnn_step *s, const nnop_tensor_desc *w,
                               int32_t slot, cudnnBackendDescriptor_t *out);
cudnnDataType_t nnop__dnn_dtype(nnop_dtype t);
/* One more operation of the step's graph. */
nnop_status nnop__dnn_add_op(nnop_context *ctx, nnop__dnn_step *s, cudnnBackendDescriptor_t op);
/* The pointer bound to io i: dev, or the step's host copy of its by-value scalar. */
void *nnop__dnn_io_ptr(const nnop__dnn_step *s, int i, void *dev);
nnop_status nnop__lower_scalar(nnop_context *ctx, nnop__dnn_step *s, float v,
                               cudnnBackendDescriptor_t *out);
/* A layer norm (over C with contiguous channels, or over C, H, W) or an RMS norm over C as
 * cuDNN's norm-forward operation, inference phase (norm.c): x_slot in, float32 scale and
 * bias slots (bias -1: none, RMS norm); out the node's output, or with epi (NULL: none) that
 * chain's output after its ops as pointwise operations. Runtime-compiled engines only with
 * NNOP_NORM_RTC=1 (nnop.h). */
nnop_status nnop__lower_norm(nnop_plan *p, int32_t node, int32_t x_slot, int32_t scale_slot,
                             int32_t bias_slot, const nnop__chain *epi, nnop__dnn_step *s);
/* Producers: y (virtual when an epilogue follows) from the chain's x and w. */
nnop_status nnop__lower_conv(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                             cudnnBackendDescriptor_t y);
nnop_status nnop__lower_matmul(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                               cudnnBackendDescriptor_t y);
/* Transposed conv node as a one-operation step (its own fingerprint): cuDNN's data-gradient
 * convolution from x_slot and w_slot into the node's output value. */
nnop_status nnop__lower_deconv(nnop_plan *p, int32_t node, int32_t x_slot, int32_t w_slot,
                               nnop__dnn_step *s);
/* Epilogue op k of the chain from tensor in to tensor out (pointwise.c). view dims and
 * strides describe the producer output (4-D conv or 3-D matmul). */
nnop_status nnop__lower_epilogue_op(nnop_plan *p, const nnop__chain *c, int k, nnop__dnn_step *s,
                                    int ndim, const int64_t *dims, const int64_t *strides,
                                    cudnnBackendDescriptor_t in, cudnnBackendDescriptor_t out);
/* The chain's epilogue ops (pointwise.c) from tensor in (the producer's output) to the chain's
 * output value, virtual dt tensors of the view between. */
nnop_status nnop__lower_epilogue_chain(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                                       int ndim, const int64_t *dims, const int64_t *strides,
                                       nnop_dtype dt, cudnnBackendDescriptor_t in);
/* s->graph, the finalized operation graph of the lowered operations (built once, on first
 * need: a plan from cached JSON or one shared with an identical earlier step needs none). */
nnop_status nnop__dnn_graph(nnop_context *ctx, nnop__dnn_step *s);
void nnop__dnn_step_destroy(nnop__dnn_step *s);
/* A copy of s for an execution context (../exec.c): s's execution plan and descriptors,
 * shared, and a variant-pack cache of its own (what a run writes); nnop__dnn_step_destroy
 * frees the copy and its packs only. NNOP_ERR_OUT_OF_MEMORY (no message) when it fails. */
nnop_status nnop__dnn_step_run_copy(const nnop__dnn_step *s, nnop__dnn_step **out);

#endif /* NNOP_CUDA_LOWER_PARTS_H */
