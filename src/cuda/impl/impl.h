/* impl.h: the CUDA backend's implementation stage: the steps a compiled plan runs and the
 * implementation list, each way of running a partition (own stem kernel, cuBLASLt, the
 * cuDNN graph, a cuDNN prefix with the rest split off, own kernels) behind one interface
 * (fits and why not, build, run, describe, destroy), tried in order by the compile (in the
 * manner of oneDNN's primitive implementation lists). Adding a way to run a partition: one
 * file with its nnop__impl and one line in list.c (see README.md). */
#ifndef NNOP_CUDA_IMPL_H
#define NNOP_CUDA_IMPL_H

#include "cuda/engine/engine.h"

/* ------------------------------------------------------------------ steps */
/* What each step runs with (kind: which own kernel, for the ones that share a launcher). */
typedef enum nnop__step_kind {
    NNOP_STEP_DNN = 0,
    NNOP_STEP_EPILOGUE,
    NNOP_STEP_POOL,
    NNOP_STEP_GAP,
    NNOP_STEP_SOFTMAX,
    NNOP_STEP_FLATTEN,
    NNOP_STEP_LINEAR,
    NNOP_STEP_STEM,
    NNOP_STEP_BLASLT,
    NNOP_STEP_DEPTHWISE,
    NNOP_STEP_NORM,
    NNOP_STEP_RESIZE,
    NNOP_STEP_CONCAT,
    NNOP_STEP_DECONV,
    NNOP_STEP_GATE,
    NNOP_STEP_IGEMM,
    NNOP_STEP_LRN,
    NNOP_STEP_SHUFFLE
} nnop__step_kind;

typedef struct nnop__lt_step nnop__lt_step;         /* blaslt.c */
typedef struct nnop__concat_step nnop__concat_step; /* concat.c */
typedef struct nnop__gate_step nnop__gate_step;     /* gate.c */

typedef struct nnop__cuda_step {
    const struct nnop__impl *impl; /* the entry that built it (list.c), NULL until then */
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
    int32_t scratch_slot; /* global average pooling: its chunk sums (-1: none) */
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
    /* depthwise.c: the own depthwise conv (x_slot, w_slot, y_slot as above; the weights
     * uploaded tap-major; the fused epilogue in epi and op_slots) */
    nnop__dw_kparams dw;
    int dw_tap_major;
    /* norm.c: a normalization (x_slot, y_slot; gamma and beta slots, -1 = absent); the
     * depthwise step's fused norm uses the same two slots */
    nnop__norm_kparams norm;
    int32_t gamma_slot, beta_slot;
    /* resize.c, deconv.c (x_slot, w_slot, y_slot as above) */
    nnop__resize_kparams rs;
    nnop__deconv_kparams dc;
    /* concat.c: one copy per input into its channel slice of y_slot */
    nnop__concat_step *cat;
    /* gate.c: two 1x1 convs on 1x1 images and their epilogues (x_slot, y_slot as above) */
    nnop__gate_step *gate;
    /* igemm.c: the own split-K implicit-GEMM conv (x_slot, w_slot: the packed weights,
     * y_slot; its epilogue in epi and op_slots) */
    nnop__igemm_kparams ig;
    /* channels.c: LRN (x_slot, y_slot), the channel shuffle (x_slot, y_slot, xv, yv, dtype:
     * one copy a group) and slice */
    nnop__lrn_kparams lrn;
    int64_t shuffle_groups;
    int64_t slice_start; /* the channel slice (xv: the sliced channels of x) */
    /* schedule/: run on the side stream (with the side workspace); wait for the side
     * stream's work before this step (it reads a side step's output) */
    int side, wait_side;
} nnop__cuda_step;

/* The workspace of step s: the main stream's, or the side stream's. */
static inline void *nnop__step_workspace(const nnop_plan *p, const nnop__cuda_step *s)
{
    return s->side ? p->cuda->side_workspace : p->cuda->workspace;
}

/* ------------------------------------------------------------------ the implementation list */
/* A partition offered to an implementation: nodes [first, first + count) of p->parts[part]. */
typedef struct nnop__impl_try {
    int32_t part, first, count;
    /* the refusal of the entry tried before this one: its status and why ("" for none) */
    nnop_status refused;
    const char *before;
    /* build's answers: the nodes the step runs (count, or a prefix: the rest becomes the next
     * partition, an own epilogue kernel), and with a prefix who took it and why not all */
    int32_t taken;
    const char *who;
    /* or: whole partitions after this one that the step runs too (their nodes join it) */
    int32_t absorbed;
    char why[NNOP_REASON_LEN]; /* also: why the build refused */
} nnop__impl_try;

/* One way of running a partition. fits: 1 when the entry applies to the partition, else 0
 * with *why_not saying why (cheap, no device work). build: the step, or a refusal
 * (NNOP_IMPL_REFUSED: t->why says why, the compile tries the next entry); any other failure
 * ends the compile. run: queue the step on the context's stream (no allocation). describe:
 * nnop_plan_describe's bracket for the step. destroy: what build made (NULL: nothing). */
typedef struct nnop__impl {
    const char *name;
    int (*fits)(const nnop_plan *p, const nnop__impl_try *t, const char **why_not);
    nnop_status (*build)(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st);
    nnop_status (*run)(nnop_plan *p, nnop__cuda_step *st);
    size_t (*describe)(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len);
    void (*destroy)(nnop__cuda_step *st);
} nnop__impl;

/* A refusal: the compile tries the next entry (a cuDNN failure to build counts as one). */
#define NNOP_IMPL_REFUSED(st) ((st) == NNOP_ERR_UNSUPPORTED || (st) == NNOP_ERR_CUDNN)

/* The entries, each in its own file, and the list of them in the order the compile tries
 * them, NULL-terminated (list.c). */
extern const nnop__impl nnop__impl_stem_kernel;  /* stem.c */
extern const nnop__impl nnop__impl_blaslt;       /* blaslt.c */
extern const nnop__impl nnop__impl_own_gemv;     /* own_kernels.c */
extern const nnop__impl nnop__impl_own_linear;   /* own_kernels.c */
extern const nnop__impl nnop__impl_depthwise;    /* depthwise.c */
extern const nnop__impl nnop__impl_gate;         /* gate.c */
extern const nnop__impl nnop__impl_igemm;        /* igemm.c */
extern const nnop__impl nnop__impl_cudnn_graph;  /* cudnn.c */
extern const nnop__impl nnop__impl_cudnn_prefix; /* cudnn.c */
extern const nnop__impl nnop__impl_cudnn_dgrad;  /* cudnn.c */
extern const nnop__impl nnop__impl_cudnn_norm;   /* cudnn.c */
extern const nnop__impl nnop__impl_deconv;       /* deconv.c */
extern const nnop__impl nnop__impl_own_epilogue; /* own_kernels.c */
extern const nnop__impl nnop__impl_norm;         /* norm.c */
extern const nnop__impl nnop__impl_resize;       /* resize.c */
extern const nnop__impl nnop__impl_concat;       /* concat.c */
extern const nnop__impl nnop__impl_lrn;          /* channels.c */
extern const nnop__impl nnop__impl_shuffle;      /* channels.c */
extern const nnop__impl nnop__impl_slice;        /* channels.c */
extern const nnop__impl nnop__impl_own_kernel;   /* own_kernels.c */
extern const nnop__impl *const nnop__impls[];

/* ------------------------------------------------------------------ run copies */
/* A copy of step src for an execution context (../exec.c) of the plan p: what a run writes
 * its own (kernel arguments, cuDNN variant packs, cuBLASLt's matmul descriptor with its bias
 * pointer), what it only reads shared (engines, weights, layouts, slot numbers), and run on
 * the main stream (side = 0: a context has no side stream). run_copy.c; undone by
 * nnop__step_run_copy_free, never by the entry's destroy. */
nnop_status nnop__step_run_copy(nnop_plan *p, const nnop__cuda_step *src, nnop__cuda_step *dst);
void nnop__step_run_copy_free(nnop__cuda_step *dst);
nnop_status nnop__lt_step_run_copy(nnop_context *ctx, const nnop__lt_step *s,
                                   nnop__lt_step **out);             /* blaslt.c */
nnop__gate_step *nnop__gate_step_run_copy(const nnop__gate_step *s); /* gate.c; NULL: OOM */

/* ------------------------------------------------------------------ concat.c: slices */
/* Plan which concat inputs live in their channel slice of the concat's output: those whose
 * slice has their own packed strides (N = 1 channels-first, say), the producer, whatever it
 * is, writing it at the slice's address (cuda_plan.slice_in; before any step is built). */
nnop_status nnop__concat_plan_slices(nnop_plan *p);

/* ------------------------------------------------------------------ stem.c */
/* Partition starting at node first is a C=3 channels-last conv with constant weights. */
int nnop__stem_applies(const nnop_plan *p, int32_t first);
/* Pad the chain's weights to C=4 now and make the step pad its input at execute. */
nnop_status nnop__stem_pad(nnop_plan *p, nnop__chain *c, nnop__cuda_step *st);
/* Before the cuDNN step: the input zero-padded into the step's plan buffer. */
nnop_status nnop__stem_run(nnop_plan *p, const nnop__cuda_step *st);
/* 1 when the next partition is the 3x3 stride-2 max pool (padding 1, channels-last output)
 * that alone reads the stem partition t's output: the own stem kernel takes it too. */
int nnop__stem_pool_follows(const nnop_plan *p, const nnop__impl_try *t);
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

/* ------------------------------------------------------------------ own_kernels.c */
nnop_status nnop__step_build_kernel(nnop_plan *p, int32_t part, nnop__cuda_step *st);
nnop_status nnop__step_build_epilogue(nnop_plan *p, int32_t first, int32_t count,
                                      nnop__cuda_step *st);
/* The chain's ops as st->epi.ops (per-channel constants uploaded as float32 slots, operand
 * slots in st->op_slots) and st->epi.n_ops; nnop__step_fill_ops binds their pointers before
 * a launch. */
nnop_status nnop__step_epi_ops(nnop_plan *p, const nnop__chain *c, nnop__cuda_step *st);
void nnop__step_fill_ops(nnop_plan *p, nnop__cuda_step *st);
/* The ops' kinds as "bias + activation + add", appended to t, for nnop_plan_describe. */
void nnop__epi_ops_text(const nnop__epi_op *ops, int n, nnop__text *t);
/* The same for any ops and their operand slots (-1 = none): the gate's two chains. */
void nnop__bind_epi_ops(nnop_plan *p, nnop__epi_op *ops, int n, int32_t (*slots)[4]);
/* A linear partition (with its whole epilogue chain) on the own linear kernel: the fallback
 * when cuDNN offers no acceptable matmul engine (e.g. fp32 without TF32, precompiled only). */
nnop_status nnop__step_build_linear(nnop_plan *p, int32_t first, int32_t count,
                                    nnop__cuda_step *st);
nnop_status nnop__step_run_kernel(nnop_plan *p, nnop__cuda_step *st);
nnop__kview nnop__kview_of(const nnop_tensor_desc *d);
/* depthwise.c: depthwise weights w (d: C,1,R,S with its strides) as out[(r S + s) C + c]. */
void nnop__dw_tap_major(const void *w, const nnop_tensor_desc *d, void *out);
/* Whether the depthwise step built for t, with fused epilogue ops after the conv, also takes
 * the next partition: a layer or RMS norm over C that the kernel can run (depthwise.c). */
int nnop__dw_norm_follows(const nnop_plan *p, const nnop__impl_try *t, int32_t fused);

#endif /* NNOP_CUDA_IMPL_H */
