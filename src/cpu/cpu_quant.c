/* cpu_quant.c: the quantized layers of a CPU plan (cpu_quant.h). A conv or linear layer whose
 * activation comes from the graph (not a constant) and whose weights are a constant is
 * quantized unless a rule or the caller keeps it in float; its input's scale comes from the
 * calibration table by the name nnop_calibrate gave that tensor. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../calib/calib.h"
#include "cpu_quant.h"

static int quantizable(const nnop_graph *g, const nnop__node *n)
{
    return (n->op == NNOP_OP_CONV || n->op == NNOP_OP_LINEAR) &&
           g->values[n->in[0]].kind != NNOP_VALUE_CONSTANT &&
           g->values[n->in[1]].kind == NNOP_VALUE_CONSTANT;
}

/* The option fields a quantized (or a float) plan may not have, each refused by name. */
static nnop_status check_options(const nnop_plan *p)
{
    const nnop_compile_options *o = &p->opts;
    const char *why = NULL;
    if (o->precision < NNOP_PRECISION_FLOAT || o->precision > NNOP_PRECISION_FP8)
        why = "opts->precision is not an nnop_precision";
    else if (o->precision == NNOP_PRECISION_FLOAT && (o->calib || o->n_keep_float))
        why = "opts->calib or keep_float without a precision (set opts->precision to "
              "NNOP_PRECISION_INT8 or NNOP_PRECISION_FP8)";
    else if (o->precision != NNOP_PRECISION_FLOAT && !o->calib)
        why = "a quantized precision needs opts->calib (a table from nnop_calibrate)";
    else if (o->n_keep_float < 0 || (o->n_keep_float > 0 && !o->keep_float))
        why = "opts->n_keep_float is negative, or keep_float is NULL";
    if (!why)
        return NNOP_OK;
    return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_graph_compile: %s", why);
}

/* The node whose result is named name, -1 for none. */
static int32_t node_named(const nnop_graph *g, const char *name)
{
    int32_t i;
    for (i = 0; i < g->n_nodes; i++)
        if (strcmp(g->values[g->nodes[i].out].name, name) == 0)
            return i;
    return -1;
}

/* in_scale[i] = 1 for each node that will be quantized (scales come next), 0 else. */
static nnop_status mark_nodes(const nnop_plan *p, float *mark)
{
    const nnop_graph *g = p->g;
    int32_t i, first = -1, last = -1;
    for (i = 0; i < g->n_nodes; i++)
        if (quantizable(g, &g->nodes[i])) {
            mark[i] = 1.0f;
            first = first < 0 ? i : first;
            last = i;
        }
    if (!p->opts.quantize_ends && first >= 0) {
        mark[first] = 0.0f;
        mark[last] = 0.0f;
    }
    for (i = 0; i < p->opts.n_keep_float; i++) {
        const char *name = p->opts.keep_float[i];
        int32_t node = name ? node_named(g, name) : -1;
        if (node < 0)
            return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                              "nnop_graph_compile: opts->keep_float[%d] '%s' names no node of "
                              "the graph",
                              (int)i, name ? name : "(NULL)");
        mark[node] = 0.0f;
    }
    return NNOP_OK;
}

/* amax / qmax, raised to the smallest normal float: a denormal amax would give 0 (a node
 * marked float, or zero weights' 0 / 0 a NaN in fp8) or a scale whose divisions overflow. */
static float scale_of(float amax, float qmax)
{
    float s = amax / qmax;
    return s >= FLT_MIN ? s : FLT_MIN;
}

/* Each marked node's input scale from the table: amax / qmax, by the input's table name. */
static nnop_status input_scales(const nnop_plan *p, nnop__cpu_quant *q)
{
    const nnop_graph *g = p->g;
    int32_t *row = (int32_t *)nnop__calloc((size_t)g->n_values, sizeof *row);
    nnop_calib_table *names = row ? nnop__calib_table_for_graph(g, row) : NULL;
    nnop_status st = names ? NNOP_OK : NNOP_ERR_OUT_OF_MEMORY;
    int32_t i;
    for (i = 0; st == NNOP_OK && i < g->n_nodes; i++) {
        int32_t v = g->nodes[i].in[0];
        const char *name;
        float amax;
        if (q->in_scale[i] == 0.0f)
            continue;
        name = names->entry[row[v]].name;
        if (nnop_calib_table_find(p->opts.calib, name, &amax) != NNOP_OK) {
            char label[160];
            st = nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                            "nnop_graph_compile: opts->calib has no entry for '%s', the input "
                            "of quantized %s (calibrate this graph, or keep the node in float)",
                            name, nnop__node_label(g, i, label, sizeof label));
            break;
        }
        q->in_scale[i] = scale_of(amax, q->qmax);
        q->stage = nnop_tensor_elements(&g->values[v].desc) > q->stage
                           ? nnop_tensor_elements(&g->values[v].desc)
                           : q->stage;
        q->weight_bytes +=
                (size_t)nnop_tensor_elements(&g->values[g->nodes[i].in[1]].desc) * sizeof(float);
    }
    if (!names && st == NNOP_ERR_OUT_OF_MEMORY)
        nnop__fail(p->ctx, st, "nnop_graph_compile: out of memory for the calibration names");
    nnop_calib_table_destroy(names);
    nnop__free(row);
    return st;
}

nnop_status nnop__cpu_quant_choose(const nnop_plan *p, nnop__cpu_quant **out)
{
    size_t n = (size_t)(p->g->n_nodes > 0 ? p->g->n_nodes : 1);
    nnop__cpu_quant *q;
    nnop_status st = check_options(p);
    *out = NULL;
    if (st != NNOP_OK || p->opts.precision == NNOP_PRECISION_FLOAT)
        return st;
    q = (nnop__cpu_quant *)nnop__calloc(1, sizeof *q);
    if (q) {
        q->in_scale = (float *)nnop__calloc(n, sizeof *q->in_scale);
        q->weights = (float **)nnop__calloc(n, sizeof *q->weights);
        q->w_lo = (float *)nnop__calloc(n, sizeof *q->w_lo);
        q->w_hi = (float *)nnop__calloc(n, sizeof *q->w_hi);
    }
    if (!q || !q->in_scale || !q->weights || !q->w_lo || !q->w_hi) {
        nnop__cpu_quant_destroy(p->ctx, q, 0);
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY,
                          "nnop_graph_compile: out of memory for the quantized layers' tables");
    }
    q->type = p->opts.precision == NNOP_PRECISION_INT8 ? NNOP_I8 : NNOP_F8E4M3;
    q->qmax = q->type == NNOP_I8 ? 127.0f : 448.0f;
    st = mark_nodes(p, q->in_scale);
    if (st == NNOP_OK)
        st = input_scales(p, q);
    if (st != NNOP_OK) {
        nnop__cpu_quant_destroy(p->ctx, q, 0);
        return st;
    }
    *out = q;
    return NNOP_OK;
}

/* Node i's weights as float32, quantized and back per output channel (dim 0). */
static nnop_status quantize_weights(const nnop_plan *p, nnop__cpu_quant *q, int32_t i)
{
    const nnop__value *w = &p->g->values[p->g->nodes[i].in[1]];
    int64_t n = nnop_tensor_elements(&w->desc), k = w->desc.dims[0], per = n / k, c, j;
    float *f = (float *)nnop__host_alloc(p->ctx, (size_t)n * sizeof(float));
    if (!f)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY,
                          "nnop_graph_compile: out of memory: %lld bytes for quantized weights",
                          (long long)n * 4);
    nnop__to_f32(w->desc.dtype, w->data, f, n);
    q->w_lo[i] = FLT_MAX;
    for (c = 0; c < k; c++) {
        float *ch = f + c * per, top = 0.0f, scale;
        for (j = 0; j < per; j++)
            top = fabsf(ch[j]) > top ? fabsf(ch[j]) : top;
        scale = scale_of(top, q->qmax);
        nnop__fake_quantize(q->type, ch, per, scale, ch);
        q->w_lo[i] = scale < q->w_lo[i] ? scale : q->w_lo[i];
        q->w_hi[i] = scale > q->w_hi[i] ? scale : q->w_hi[i];
    }
    q->weights[i] = f;
    return NNOP_OK;
}

nnop_status nnop__cpu_quant_weights(const nnop_plan *p, nnop__cpu_quant *q)
{
    nnop_status st = NNOP_OK;
    int32_t i;
    for (i = 0; st == NNOP_OK && i < p->g->n_nodes; i++)
        if (q->in_scale[i] > 0.0f)
            st = quantize_weights(p, q, i);
    return st;
}

void nnop__cpu_quant_destroy(const nnop_context *ctx, nnop__cpu_quant *q, int32_t n_nodes)
{
    int32_t i;
    if (!q)
        return;
    for (i = 0; q->weights && i < n_nodes; i++)
        nnop__host_free(ctx, q->weights[i]);
    nnop__free(q->in_scale);
    nnop__free(q->weights);
    nnop__free(q->w_lo);
    nnop__free(q->w_hi);
    nnop__free(q);
}

void nnop__cpu_quant_input(const nnop__cpu_quant *q, int32_t node, const float *x, int64_t n,
                           float *out)
{
    nnop__fake_quantize(q->type, x, n, q->in_scale[node], out);
}

void nnop__cpu_quant_describe(const nnop_plan *p, const nnop__cpu_quant *q, nnop__text *t)
{
    int32_t i, n = 0;
    char label[160];
    for (i = 0; i < p->g->n_nodes; i++)
        n += q->in_scale[i] > 0.0f;
    nnop__textf(t, "  quantized: %d of the convs and linear layers in %s (emulated on the CPU)\n",
                (int)n, q->type == NNOP_I8 ? "int8" : "fp8 e4m3");
    for (i = 0; i < p->g->n_nodes; i++) {
        if (!quantizable(p->g, &p->g->nodes[i]))
            continue;
        nnop__node_label(p->g, i, label, sizeof label);
        if (q->in_scale[i] > 0.0f)
            nnop__textf(t, "    %s: %s, input scale %.6g, weight scales %.6g to %.6g\n", label,
                        q->type == NNOP_I8 ? "int8" : "fp8", (double)q->in_scale[i],
                        (double)q->w_lo[i], (double)q->w_hi[i]);
        else
            nnop__textf(t, "    %s: %s\n", label,
                        nnop__dtype_name(p->g->values[p->g->nodes[i].out].desc.dtype));
    }
}
