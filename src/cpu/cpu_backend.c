/* cpu_backend.c: the CPU reference backend: runs a plan node by node with the ops' reference
 * kernels on float32 buffers allocated at compile time. Constants keep a buffer each; the
 * other values share buffers by liveness (a value's buffer is free for another once the last
 * node that reads it has run), as the CUDA plan's arena does, so a chain of n nodes holds
 * two activations, not n + 1. Tensor memory comes from the context's allocator. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The CPU side of a compiled plan (p->cpu). */
struct nnop__cpu_plan {
    float **buf;   /* per value: where it lives (a constant's own buffer, or a shared one) */
    float **owned; /* the buffers: constants' first, then the shared ones */
    int32_t n_owned;
    size_t weights_bytes;      /* constants as float32 */
    size_t intermediate_bytes; /* the shared buffers: inputs, outputs and node results */
};

void nnop__cpu_plan_destroy(nnop_plan *p)
{
    struct nnop__cpu_plan *cp = p->cpu;
    int32_t i;
    if (!cp)
        return;
    for (i = 0; i < cp->n_owned; i++)
        nnop__host_free(p->ctx, cp->owned[i]);
    nnop__free(cp->owned);
    nnop__free(cp->buf);
    nnop__free(cp);
    p->cpu = NULL;
}

/* The buffer plan: slot_of[v] for every non-constant value, slot_cap[s] in elements. */
typedef struct cpu_slots {
    int32_t *slot_of;
    int64_t *cap;
    int8_t *busy;
    int32_t n;
} cpu_slots;

/* The node index after which value v is read no more: n_nodes for a graph output (kept to
 * the end); for a value no node reads, the step that writes it (-1 for an input), so its
 * buffer is free again at once. */
static void last_uses(const nnop_graph *g, int32_t *last)
{
    int32_t i;
    int k;
    for (i = 0; i < g->n_values; i++)
        last[i] = -1;
    for (i = 0; i < g->n_nodes; i++)
        for (k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] != NNOP_NONE_ID)
                last[g->nodes[i].in[k]] = i;
    for (i = 0; i < g->n_nodes; i++)
        if (last[g->nodes[i].out] < 0)
            last[g->nodes[i].out] = i;
    for (i = 0; i < g->n_outputs; i++)
        last[g->outputs[i]] = g->n_nodes;
}

/* A free slot for n elements: the smallest free one that holds n, else the largest free one
 * grown to n (growing costs nothing while planning), else a new one. */
static int32_t take_slot(cpu_slots *s, int64_t n)
{
    int32_t i, fit = -1, big = -1;
    for (i = 0; i < s->n; i++) {
        if (s->busy[i])
            continue;
        if (s->cap[i] >= n && (fit < 0 || s->cap[i] < s->cap[fit]))
            fit = i;
        if (big < 0 || s->cap[i] > s->cap[big])
            big = i;
    }
    if (fit < 0 && big >= 0)
        fit = big;
    if (fit < 0)
        fit = s->n++;
    if (s->cap[fit] < n)
        s->cap[fit] = n;
    s->busy[fit] = 1;
    return fit;
}

static void release_dead(const nnop_graph *g, cpu_slots *s, const int32_t *last, int32_t step)
{
    int32_t v;
    for (v = 0; v < g->n_values; v++)
        if (s->slot_of[v] >= 0 && last[v] == step)
            s->busy[s->slot_of[v]] = 0;
}

/* Inputs are all written before the first node (step -1); node i's result takes a slot
 * before the values whose last reader is node i give theirs back, so no node writes over
 * what it reads. */
static void plan_slots(const nnop_graph *g, const int32_t *last, cpu_slots *s)
{
    int32_t i;
    for (i = 0; i < g->n_values; i++)
        s->slot_of[i] = -1;
    for (i = 0; i < g->n_inputs; i++)
        s->slot_of[g->inputs[i]] =
                take_slot(s, nnop_tensor_elements(&g->values[g->inputs[i]].desc));
    release_dead(g, s, last, -1);
    for (i = 0; i < g->n_nodes; i++) {
        int32_t out = g->nodes[i].out;
        s->slot_of[out] = take_slot(s, nnop_tensor_elements(&g->values[out].desc));
        release_dead(g, s, last, i);
    }
}

static nnop_status out_of_memory(nnop_plan *p, size_t bytes, const char *what)
{
    return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY,
                      "nnop_graph_compile: out of memory: %zu bytes for %s (the CPU plan held %zu "
                      "bytes of weights and %zu of buffers)",
                      bytes, what, p->cpu ? p->cpu->weights_bytes : 0,
                      p->cpu ? p->cpu->intermediate_bytes : 0);
}

static nnop_status own(nnop_plan *p, int64_t n, const char *what, float **out)
{
    struct nnop__cpu_plan *cp = p->cpu;
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
    *out = (float *)nnop__host_alloc(p->ctx, bytes); /* the context's allocator */
    if (!*out)
        return out_of_memory(p, bytes, what);
    cp->owned[cp->n_owned++] = *out;
    return NNOP_OK;
}

static nnop_status alloc_constants(nnop_plan *p)
{
    const nnop_graph *g = p->g;
    int32_t i;
    for (i = 0; i < g->n_values; i++) {
        const nnop__value *v = &g->values[i];
        int64_t n = nnop_tensor_elements(&v->desc);
        nnop_status st;
        if (v->kind != NNOP_VALUE_CONSTANT)
            continue;
        st = own(p, n, "a constant", &p->cpu->buf[i]);
        if (st != NNOP_OK)
            return st;
        p->cpu->weights_bytes += (size_t)n * sizeof(float);
        nnop__to_f32(v->desc.dtype, v->data, p->cpu->buf[i], n);
    }
    return NNOP_OK;
}

static nnop_status alloc_slots(nnop_plan *p, const cpu_slots *s)
{
    const nnop_graph *g = p->g;
    float **slot = (float **)nnop__calloc((size_t)(s->n > 0 ? s->n : 1), sizeof *slot);
    nnop_status st = NNOP_OK;
    int32_t i;
    if (!slot)
        return out_of_memory(p, (size_t)s->n * sizeof *slot, "the buffer table");
    for (i = 0; i < s->n && st == NNOP_OK; i++) {
        st = own(p, s->cap[i], "an intermediate buffer", &slot[i]);
        p->cpu->intermediate_bytes += st == NNOP_OK ? (size_t)s->cap[i] * sizeof(float) : 0;
    }
    for (i = 0; i < g->n_values && st == NNOP_OK; i++)
        if (s->slot_of[i] >= 0)
            p->cpu->buf[i] = slot[s->slot_of[i]];
    nnop__free(slot);
    return st;
}

static nnop_status build(nnop_plan *p, int32_t *last, cpu_slots *s)
{
    const nnop_graph *g = p->g;
    nnop_status st;
    last_uses(g, last);
    plan_slots(g, last, s);
    p->cpu->buf = (float **)nnop__calloc((size_t)g->n_values, sizeof *p->cpu->buf);
    p->cpu->owned = (float **)nnop__calloc((size_t)(g->n_values + s->n), sizeof *p->cpu->owned);
    if (!p->cpu->buf || !p->cpu->owned)
        return out_of_memory(p, (size_t)(2 * g->n_values + s->n) * sizeof(float *),
                             "the buffer tables");
    st = alloc_constants(p);
    return st == NNOP_OK ? alloc_slots(p, s) : st;
}

nnop_status nnop__cpu_plan_build(nnop_plan *p)
{
    const nnop_graph *g = p->g;
    size_t n = (size_t)(g->n_values > 0 ? g->n_values : 1);
    cpu_slots s;
    int32_t *last = (int32_t *)nnop__calloc(n, sizeof *last);
    nnop_status st;
    memset(&s, 0, sizeof s);
    s.slot_of = (int32_t *)nnop__calloc(n, sizeof *s.slot_of);
    s.cap = (int64_t *)nnop__calloc(n, sizeof *s.cap); /* at most one slot per value */
    s.busy = (int8_t *)nnop__calloc(n, sizeof *s.busy);
    p->cpu = (struct nnop__cpu_plan *)nnop__calloc(1, sizeof *p->cpu);
    if (!last || !s.slot_of || !s.cap || !s.busy || !p->cpu)
        st = out_of_memory(p, n * (sizeof *last + sizeof *s.slot_of + sizeof *s.cap + 1),
                           "the buffer plan");
    else
        st = build(p, last, &s);
    nnop__free(last);
    nnop__free(s.slot_of);
    nnop__free(s.cap);
    nnop__free(s.busy);
    return st;
}

void nnop__cpu_plan_memory(const nnop_plan *p, nnop_plan_memory_info *m)
{
    if (!p->cpu)
        return;
    m->weights = p->cpu->weights_bytes;
    m->intermediates = p->cpu->intermediate_bytes;
    m->host_total = m->weights + m->intermediates;
}

static void run_node(nnop_plan *p, const nnop__node *node)
{
    const nnop_graph *g = p->g;
    float **buf = p->cpu->buf;
    const float *in[NNOP_MAX_NODE_INPUTS];
    const nnop_tensor_desc *in_desc[NNOP_MAX_NODE_INPUTS];
    int i;
    for (i = 0; i < node->n_in; i++) {
        int32_t id = node->in[i];
        in[i] = id == NNOP_NONE_ID ? NULL : buf[id];
        in_desc[i] = id == NNOP_NONE_ID ? NULL : &g->values[id].desc;
    }
    nnop__op(node->op)->reference(node, in, in_desc, buf[node->out], &g->values[node->out].desc);
    /* every value is a tensor of its dtype (as in PyTorch eager): a 16-bit result is stored
     * rounded, so a chain of nodes matches a GPU plan that stores between its steps */
    nnop__round_to(g->values[node->out].desc.dtype, buf[node->out],
                   nnop_tensor_elements(&g->values[node->out].desc));
}

nnop_status nnop__cpu_plan_execute(nnop_plan *p, const void *const *in, void *const *out)
{
    const nnop_graph *g = p->g;
    float **buf = p->cpu->buf;
    int32_t i;
    for (i = 0; i < g->n_inputs; i++) {
        const nnop__value *v = &g->values[g->inputs[i]];
        nnop__to_f32(v->desc.dtype, in[i], buf[g->inputs[i]], nnop_tensor_elements(&v->desc));
    }
    for (i = 0; i < g->n_nodes; i++)
        run_node(p, &g->nodes[i]);
    for (i = 0; i < g->n_outputs; i++) {
        const nnop__value *v = &g->values[g->outputs[i]];
        nnop__from_f32(v->desc.dtype, buf[g->outputs[i]], out[i], nnop_tensor_elements(&v->desc));
    }
    return NNOP_OK;
}
