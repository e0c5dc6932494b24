/* difftest.h: the random differential tester's own graph description (built, run and checked
 * through nnop.h alone) and its stages: generate, build and run, oracle, compare, reproduce. */
#ifndef NNOP_DIFFTEST_H
#define NNOP_DIFFTEST_H

#include <stdint.h>
#include <stdio.h>

#include "dt_support.h"

#define DT_MAX_NODES 64
#define DT_MAX_OUT   8
#define DT_MAX_ELEMS 65536 /* per tensor: thousands of graphs a minute on a CPU */

typedef enum dt_kind {
    DT_INPUT,
    DT_CONST,
    DT_CONV,
    DT_BIAS,
    DT_ACT,
    DT_CLAMP,
    DT_BN,
    DT_ADD,
    DT_POOL,
    DT_GAP,
    DT_FLATTEN,
    DT_LINEAR,
    DT_SOFTMAX,
    /* the issue-15 ops, generated with DT_GEN_NEW_OPS only (the default stream is unchanged) */
    DT_ARITH,  /* mul, sub, div: same shape, N,C,1,1 or 1,C,1,1 second operand */
    DT_NORM,   /* layer norm (C or C,H,W), group norm, RMS norm; affine optional */
    DT_CONCAT, /* along channels, 2 to 4 operands */
    DT_RESIZE, /* nearest or bilinear, by size or by scale */
    DT_DECONV, /* transposed conv */
    DT_NUM_KINDS
} dt_kind;

/* dt_generate flags */
#define DT_GEN_NEW_OPS 1u /* also the issue-15 ops and activations */
#define DT_GEN_SPECIAL 2u /* graph inputs hold NaN, +inf and -inf (every 5th-40th element) */
/* with DT_GEN_SPECIAL, for a GPU: none of them reaches an fp16/bf16 conv on cuDNN (gen.c) */
#define DT_GEN_SPECIAL_NO_HALF_CONV 4u
/* tiny spatial tensors on purpose (issue 43): 1x1 and 2x2 values after a GAP or a strided conv
 * or pool, kernels larger than their input reached through padding, dilations that step past
 * the input, grouped and depthwise 1x1 convs on 1x1 values, residual branches, long chains */
#define DT_GEN_TINY 8u

typedef enum dt_arith { DT_MUL, DT_SUB, DT_DIV } dt_arith;
typedef enum dt_norm { DT_LAYER_NORM_C, DT_LAYER_NORM_CHW, DT_GROUP_NORM, DT_RMS_NORM } dt_norm;

/* One value of the graph and the node that makes it (inputs and constants make themselves). */
typedef struct dt_node {
    dt_kind kind;
    int in[5]; /* operand node indices, -1 = none (linear without bias) */
    int n_in;
    int ndim; /* 2 or 4 (1 for bias and batch-norm parameters) */
    int64_t dims[4];
    nnop_conv_params conv;
    nnop_pool_params pool;
    nnop_pool_kind pool_kind;
    nnop_act_kind act;
    float alpha, lo, hi, eps;
    dt_arith arith;
    dt_norm norm;
    int64_t groups; /* group norm */
    nnop_resize_params resize;
    nnop_conv_transpose_params deconv;
    uint64_t seed; /* inputs and constants: dts_fill(seed, scale, positive) */
    float scale;
    int positive;
    int special; /* inputs (0 for constants): dts_specials(special) after dts_fill */
    float *data; /* inputs and constants: logical order, rounded to the graph's dtype */
} dt_node;

typedef struct dt_graph {
    uint64_t seed;
    unsigned flags; /* DT_GEN_* it was generated with */
    nnop_dtype dtype;
    nnop_layout layout;
    int n_nodes;
    dt_node node[DT_MAX_NODES];
    int n_out;
    int out[DT_MAX_OUT];
} dt_graph;

/* gen.c: whether conv or transposed conv v runs on cuDNN on the GPU: all but the depthwise
 * convs (groups = C = K), which nnop's own kernel takes, every one of them. */
int dt_conv_on_cudnn(const dt_graph *g, const dt_node *v);
/* gen.c: a random valid graph from a case seed and DT_GEN_* flags; 0 on success. */
int dt_generate(uint64_t seed, dt_graph *g);
int dt_generate_ex(uint64_t seed, unsigned flags, dt_graph *g);
void dt_graph_free(dt_graph *g);
int64_t dt_elems(const dt_node *v);
nnop_tensor_desc dt_desc(const dt_graph *g, const dt_node *v);
const char *dt_kind_name(dt_kind k);
const char *dt_dtype_name(nnop_dtype t);

/* exec.c: the graph as a dts_case (in: room for its inputs, DT_MAX_NODES) run on ctx */
void dt_case_of(const dt_graph *g, dts_tensor *in, dts_case *c);
/* The library's descriptor of every value against the header's rules; 0 = all as expected */
int dt_check_descs(nnop_context *ctx, const dt_graph *g, char *msg, size_t len);

/* exec.c: the graph built as dts_run builds it, each node's result named "n<index>" */
nnop_status dt_build_named(nnop_graph *ng, const dts_case *c);

/* oracle.c: float64 results of the graph's outputs, from the ops' definitions */
int dt_oracle(const dt_graph *g, double **out);
/* Node i alone from val[] (each operand's values, logical order) into y, rounded to the dtype
 * with round (quant_oracle.c swaps operands for their quantized values); 0, -1 out of memory. */
int dt_oracle_node(const dt_graph *g, int i, double *const *val, double *y, int round);
/* Per output, the size of the terms each value sums (oracle.c); 0 or -1 out of memory. */
int dt_oracle_terms(const dt_graph *g, double **out);
/* dt_oracle with every value that rounds (each such node's, before the next reads it; not
 * copies and selections) moved by a seeded random fraction of up to two units in the last
 * place of the dtype: how far outputs move when results round the other way (dt_agree's
 * judge of ill-conditioned graphs). */
int dt_oracle_perturbed(const dt_graph *g, uint64_t seed, double **out);
/* Mismatches dt_agree tolerated because the graph is ill-conditioned there (their count). */
long dt_ill_conditioned_count(void);

/* compare.c: results against a reference; writes why to msg when they differ; 1 = agree */
int dt_agree(const dt_graph *g, float *const *got, double *const *want, char *msg, size_t len);
int dt_agree_f(const dt_graph *g, float *const *got, float *const *want, char *msg, size_t len);
/* The same on what is left of each difference past allow (per output element, the
 * quantization allowance of quant_oracle.c); *used: 1 when that was needed to agree. */
int dt_agree_within(const dt_graph *g, float *const *got, double *const *want, double *const *allow,
                    char *msg, size_t len, int *used);

/* --quant (quant.c, quant_oracle.c): a quantized plan of the graph against the oracle with
 * the same quantization. One layer's quantization: fp8 (else int8), and per node the amax of
 * its input from the calibration table (negative: the node is not quantized). */
typedef struct dt_quant {
    int fp8;
    float in_amax[DT_MAX_NODES];
} dt_quant;
typedef struct dt_quant_stats {
    long layers, elements; /* quantized layers run, and the activation elements they read */
    long ambiguous;        /* of those, the ones the allowance lets round either way */
    long saturated;        /* oracle's activation codes at the end of the range */
    long ties;             /* input elements placed on a rounding tie (quant.c) */
    long used_allowance;   /* cases that passed only with the allowance */
} dt_quant_stats;
/* quant_oracle.c: whether nnop quantizes node i (a conv or linear layer whose data comes from
 * the graph and whose weights are a constant; quantize_ends set) */
int dt_quant_layer(const dt_graph *g, int i);
/* The scale of amax (nnop.h's rule), and the midpoint between the two grid values (in units
 * of the scale) around v, a rounding tie */
float dt_quant_scale(float amax, int fp8);
double dt_quant_tie(double v, int fp8);
/* The outputs with q's quantization, and per output element the allowance (quant_oracle.c's
 * rule); 0, or -1 out of memory (the caller frees out[] and allow[] either way). */
int dt_oracle_quant(const dt_graph *g, const dt_quant *q, double **out, double **allow,
                    dt_quant_stats *s);
/* quant.c: calibrate, compile quantized, run on cpu, compare: 0 passed, 1 refused (why in
 * msg), -1 failed (why in msg); plan: nnop_plan_describe's text when it compiled, else "" */
int dt_quant_run(nnop_context *cpu, dt_graph *g, int fp8, dt_quant_stats *s, char *msg, size_t len,
                 char *plan, size_t plan_len);

/* repro.c: a self-contained reproducer (nnop.h only). backend: what is tested; fuse: how;
 * expected: oracle values to compare with, or NULL to compare with the CPU backend. */
void dt_print_graph(FILE *f, const dt_graph *g, const char *prefix);
int dt_write_repro(const char *dir, const dt_graph *g, nnop_backend backend, int fuse,
                   double *const *expected, const char *why, char *path, size_t path_len);

#endif /* NNOP_DIFFTEST_H */
