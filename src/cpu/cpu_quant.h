/* cpu_quant.h: the quantized layers of a CPU plan (nnop_compile_options.precision, issue 45):
 * which convs and linear layers read 8-bit activations and weights, their scales, and the
 * weights quantized and back, so that the reference kernels compute on exactly the values an
 * 8-bit plan holds. cpu_backend.c asks it at build and at each quantized node. */
#ifndef NNOP_CPU_QUANT_H
#define NNOP_CPU_QUANT_H

#include "../internal.h"

typedef struct nnop__cpu_quant {
    nnop_dtype type;     /* NNOP_I8 or NNOP_F8E4M3 */
    float qmax;          /* its largest finite magnitude: 127 or 448 */
    float *in_scale;     /* per node: its activation input's scale, 0 where it runs in float */
    float **weights;     /* per node: its weights quantized and back, NULL where in float */
    float *w_lo, *w_hi;  /* per node: its least and largest channel scale (describe) */
    int64_t stage;       /* floats: the largest activation input of a quantized node */
    size_t weight_bytes; /* the quantized weights' float32 copies */
} nnop__cpu_quant;

/* Which nodes of p->g run quantized under p->opts, and their input scales and staging
 * floats; *out NULL for a float plan. Wrong options fail naming the field, with p's context's
 * message. No weights yet (nnop_graph_memory stops here): weight_bytes is what they will be. */
nnop_status nnop__cpu_quant_choose(const nnop_plan *p, nnop__cpu_quant **out);
/* Each quantized node's weights, per output channel (dim 0), quantized and back. */
nnop_status nnop__cpu_quant_weights(const nnop_plan *p, nnop__cpu_quant *q);
/* q and its weights (allocated on ctx; n_nodes of the graph, 0 before any). */
void nnop__cpu_quant_destroy(const nnop_context *ctx, nnop__cpu_quant *q, int32_t n_nodes);
/* x, node's activation input of n floats, quantized and back into out. */
void nnop__cpu_quant_input(const nnop__cpu_quant *q, int32_t node, const float *x, int64_t n,
                           float *out);
/* A line per quantized layer for nnop_plan_describe. */
void nnop__cpu_quant_describe(const nnop_plan *p, const nnop__cpu_quant *q, nnop__text *t);

#endif
