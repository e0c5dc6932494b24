/* cpu_backend.c: the CPU reference backend: runs a plan node by node with the ops' reference
 * kernels on float32 buffers allocated at compile time. Constants keep a buffer each, owned by
 * the plan, in their own dtype when it is 16-bit (half the bytes of float32; converted into
 * the execution state's staging floats as a node reads them, so the results are the same
 * bits); the other values share float32 buffers by liveness (a value's buffer is free for
 * another once the last node that reads it has run), as the CUDA plan's arena does, so a chain
 * of n nodes holds two activations, not n + 1. Intermediates stay float32: the reference
 * kernels compute on floats, and 16-bit buffers would need a float copy of each node's
 * inputs and output besides (12 bytes a value for a chain, against 8). Those buffers are an
 * execution state's: the plan has one for nnop_plan_execute, and each nnop_exec one of its own
 * (src/exec.c), all sharing the plan's constants and buffer plan. Tensor memory comes from the
 * context's allocator. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "cpu_quant.h"

/* The CPU side of a compiled plan (p->cpu): what every execution state shares, read-only once
 * built. */
struct nnop__cpu_plan {
    void **cdata;     /* per value: a constant's data (float32, or its 16-bit dtype), else NULL */
    int32_t *slot_of; /* per value: its buffer in an execution state, -1 for constants */
    int64_t *cap;     /* per buffer: floats */
    int32_t n_slots;
    int64_t stage_cap;          /* floats: the most 16-bit constant elements one node reads */
    size_t weights_bytes;       /* constants as stored, quantized layers' weights besides */
    nnop__cpu_quant *quant;     /* a quantized plan's layers (cpu_quant.h), else NULL */
    struct nnop__cpu_exec *own; /* the plan's own execution state (nnop_plan_execute) */
};

/* An execution state: the buffers of one run at a time, and the values' shapes at its batch. */
struct nnop__cpu_exec {
    float **buf;            /* per value: where it lives (a float32 constant's is the plan's;
                             * NULL for a 16-bit constant, staged as a node reads it) */
    float **slot;           /* its n_slots buffers */
    float *stage;           /* stage_cap floats: 16-bit constants as float32, one node's */
    nnop_tensor_desc *desc; /* per value, at the batch of the last run */
    int64_t batch;          /* of desc: 0 the built shapes, -1 before the first run */
    size_t bytes;           /* its buffers together */
    size_t stage_bytes;     /* of which the staging floats */
    int external;           /* the buffers are carved from the caller's memory: not freed */
};

/* Buffers carved from a caller's block start 64-byte aligned (a cache line). */
#define EXEC_ALIGN 64

static size_t align_up(size_t n)
{
    return (n + EXEC_ALIGN - 1) / EXEC_ALIGN * EXEC_ALIGN;
}

/* ---------------------------------------------------------------- the buffer plan */
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

/* A free buffer for n elements: the smallest free one that holds n, else the largest free
 * one grown to n (growing costs nothing while planning), else a new one. */
static int32_t take_slot(struct nnop__cpu_plan *cp, int8_t *busy, int64_t n)
{
    int32_t i, fit = -1, big = -1;
    for (i = 0; i < cp->n_slots; i++) {
        if (busy[i])
            continue;
        if (cp->cap[i] >= n && (fit < 0 || cp->cap[i] < cp->cap[fit]))
            fit = i;
        if (big < 0 || cp->cap[i] > cp->cap[big])
            big = i;
    }
    if (fit < 0 && big >= 0)
        fit = big;
    if (fit < 0)
        fit = cp->n_slots++;
    if (cp->cap[fit] < n)
        cp->cap[fit] = n;
    busy[fit] = 1;
    return fit;
}

static void release_dead(const nnop_graph *g, const struct nnop__cpu_plan *cp, int8_t *busy,
                         const int32_t *last, int32_t step)
{
    int32_t v;
    for (v = 0; v < g->n_values; v++)
        if (cp->slot_of[v] >= 0 && last[v] == step)
            busy[cp->slot_of[v]] = 0;
}

/* Inputs are all written before the first node (step -1); node i's result takes a buffer
 * before the values whose last reader is node i give theirs back, so no node writes over
 * what it reads. */
static void plan_slots(const nnop_graph *g, struct nnop__cpu_plan *cp, const int32_t *last,
                       int8_t *busy)
{
    int32_t i;
    for (i = 0; i < g->n_values; i++)
        cp->slot_of[i] = -1;
    for (i = 0; i < g->n_inputs; i++)
        cp->slot_of[g->inputs[i]] =
                take_slot(cp, busy, nnop_tensor_elements(&g->values[g->inputs[i]].desc));
    release_dead(g, cp, busy, last, -1);
    for (i = 0; i < g->n_nodes; i++) {
        int32_t out = g->nodes[i].out;
        cp->slot_of[out] = take_slot(cp, busy, nnop_tensor_elements(&g->values[out].desc));
        release_dead(g, cp, busy, last, i);
    }
}

/* A constant of this dtype is kept as it is (16-bit) and staged as float32 when read. */
static int kept_16bit(nnop_dtype t)
{
    return t == NNOP_F16 || t == NNOP_BF16;
}

static int staged(const nnop_graph *g, int32_t id)
{
    return id != NNOP_NONE_ID && g->values[id].kind == NNOP_VALUE_CONSTANT &&
           kept_16bit(g->values[id].desc.dtype);
}

/* The staging floats an execution state needs: the most elements of 16-bit constants that one
 * node reads (each read counted: a constant read twice is staged twice). */
static int64_t stage_floats(const nnop_graph *g)
{
    int64_t most = 0;
    int32_t i;
    int k;
    for (i = 0; i < g->n_nodes; i++) {
        int64_t n = 0;
        for (k = 0; k < g->nodes[i].n_in; k++)
            if (staged(g, g->nodes[i].in[k]))
                n += nnop_tensor_elements(&g->values[g->nodes[i].in[k]].desc);
        most = n > most ? n : most;
    }
    return most;
}

/* ---------------------------------------------------------------- memory */
static nnop_status out_of_memory(nnop_plan *p, size_t bytes, const char *what)
{
    return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY,
                      "nnop_graph_compile: out of memory: %zu bytes for %s (the CPU plan held %zu "
                      "bytes of weights and %zu of buffers)",
                      bytes, what, p->cpu ? p->cpu->weights_bytes : 0,
                      p->cpu && p->cpu->own ? p->cpu->own->bytes : 0);
}

static float *tensor_alloc(const nnop_plan *p, int64_t n)
{
    return (float *)nnop__host_alloc(p->ctx, (size_t)(n > 0 ? n : 1) * sizeof(float));
}

void nnop__cpu_exec_destroy(const nnop_plan *p, struct nnop__cpu_exec *e)
{
    int32_t i;
    if (!e)
        return;
    for (i = 0; !e->external && e->slot && i < p->cpu->n_slots; i++)
        nnop__host_free(p->ctx, e->slot[i]);
    if (!e->external)
        nnop__host_free(p->ctx, e->stage);
    nnop__free(e->slot);
    nnop__free(e->buf);
    nnop__free(e->desc);
    nnop__free(e);
}

size_t nnop__cpu_exec_scratch_bytes(const nnop_plan *p)
{
    size_t total = 0;
    int32_t i;
    for (i = 0; i < p->cpu->n_slots; i++)
        total += align_up((size_t)(p->cpu->cap[i] > 0 ? p->cpu->cap[i] : 1) * sizeof(float));
    total += align_up((size_t)p->cpu->stage_cap * sizeof(float));
    return total + EXEC_ALIGN; /* room to align the block's start */
}

/* The buffers from the caller's block of at least nnop__cpu_exec_scratch_bytes. */
static void carve(const nnop_plan *p, struct nnop__cpu_exec *e, void *scratch)
{
    uintptr_t at = ((uintptr_t)scratch + EXEC_ALIGN - 1) / EXEC_ALIGN * EXEC_ALIGN;
    int32_t i;
    for (i = 0; i < p->cpu->n_slots; i++) {
        size_t b = align_up((size_t)(p->cpu->cap[i] > 0 ? p->cpu->cap[i] : 1) * sizeof(float));
        e->slot[i] = (float *)at;
        at += b;
        e->bytes += b;
    }
    if (p->cpu->stage_cap > 0) {
        e->stage = (float *)at;
        e->stage_bytes = align_up((size_t)p->cpu->stage_cap * sizeof(float));
        e->bytes += e->stage_bytes;
    }
    e->external = 1;
}

/* A new execution state of p: its buffers, carved from scratch when given (the caller checked
 * its size), else allocated; what failed, with the bytes, in why. */
nnop_status nnop__cpu_exec_create(const nnop_plan *p, void *scratch, struct nnop__cpu_exec **out,
                                  char *why, size_t len)
{
    const struct nnop__cpu_plan *cp = p->cpu;
    const nnop_graph *g = p->g;
    size_t nv = (size_t)(g->n_values > 0 ? g->n_values : 1);
    struct nnop__cpu_exec *e = (struct nnop__cpu_exec *)nnop__calloc(1, sizeof *e);
    int32_t i;
    *out = NULL;
    if (e) {
        e->buf = (float **)nnop__calloc(nv, sizeof *e->buf);
        e->slot = (float **)nnop__calloc((size_t)(cp->n_slots > 0 ? cp->n_slots : 1),
                                         sizeof *e->slot);
        e->desc = (nnop_tensor_desc *)nnop__calloc(nv, sizeof *e->desc);
    }
    if (!e || !e->buf || !e->slot || !e->desc) {
        snprintf(why, len, "out of memory: the tables of an execution state");
        nnop__cpu_exec_destroy(p, e);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    if (scratch)
        carve(p, e, scratch);
    for (i = 0; !scratch && i < cp->n_slots; i++) {
        e->slot[i] = tensor_alloc(p, cp->cap[i]);
        if (!e->slot[i]) {
            snprintf(why, len,
                     "out of memory: %zu bytes for an intermediate buffer (%zu held before it)",
                     (size_t)cp->cap[i] * sizeof(float), e->bytes);
            nnop__cpu_exec_destroy(p, e);
            return NNOP_ERR_OUT_OF_MEMORY;
        }
        e->bytes += (size_t)cp->cap[i] * sizeof(float);
    }
    if (!scratch && cp->stage_cap > 0) {
        e->stage_bytes = (size_t)cp->stage_cap * sizeof(float);
        e->stage = tensor_alloc(p, cp->stage_cap);
        if (!e->stage) {
            snprintf(why, len,
                     "out of memory: %zu bytes to stage 16-bit constants as float32 (%zu held "
                     "before it)",
                     e->stage_bytes, e->bytes);
            nnop__cpu_exec_destroy(p, e);
            return NNOP_ERR_OUT_OF_MEMORY;
        }
        e->bytes += e->stage_bytes;
    }
    for (i = 0; i < g->n_values; i++)
        e->buf[i] = cp->slot_of[i] >= 0 ? e->slot[cp->slot_of[i]]
                    : staged(g, i)      ? NULL
                                        : (float *)cp->cdata[i];
    e->batch = -1;
    *out = e;
    return NNOP_OK;
}

void nnop__cpu_exec_memory(const struct nnop__cpu_exec *e, nnop_plan_memory_info *m)
{
    m->intermediates = e ? e->bytes - e->stage_bytes : 0;
    m->workspace = e ? e->stage_bytes : 0;
    m->host_total += m->intermediates + m->workspace;
}

void nnop__cpu_plan_destroy(nnop_plan *p)
{
    struct nnop__cpu_plan *cp = p->cpu;
    int32_t i;
    if (!cp)
        return;
    nnop__cpu_exec_destroy(p, cp->own);
    for (i = 0; cp->cdata && i < p->g->n_values; i++)
        nnop__host_free(p->ctx, cp->cdata[i]);
    nnop__free(cp->cdata);
    nnop__cpu_quant_destroy(p->ctx, cp->quant, p->g->n_nodes);
    nnop__free(cp->slot_of);
    nnop__free(cp->cap);
    nnop__free(cp);
    p->cpu = NULL;
}

/* A constant's bytes in the plan: its dtype's when kept 16-bit, else float32. */
static size_t constant_bytes(const nnop_graph *g, int32_t i)
{
    return (size_t)nnop_tensor_elements(&g->values[i].desc) * (staged(g, i) ? 2 : sizeof(float));
}

static nnop_status alloc_constants(nnop_plan *p)
{
    const nnop_graph *g = p->g;
    int32_t i;
    for (i = 0; i < g->n_values; i++) {
        const nnop__value *v = &g->values[i];
        int64_t n = nnop_tensor_elements(&v->desc);
        size_t bytes;
        if (v->kind != NNOP_VALUE_CONSTANT)
            continue;
        bytes = (size_t)(n > 0 ? n : 1) * (staged(g, i) ? 2 : sizeof(float));
        p->cpu->cdata[i] = nnop__host_alloc(p->ctx, bytes);
        if (!p->cpu->cdata[i])
            return out_of_memory(p, bytes, "a constant");
        p->cpu->weights_bytes += constant_bytes(g, i);
        if (staged(g, i))
            memcpy(p->cpu->cdata[i], v->data, (size_t)n * 2);
        else
            nnop__to_f32(v->desc.dtype, v->data, (float *)p->cpu->cdata[i], n);
    }
    return NNOP_OK;
}

/* The buffer plan, the quantized layers and the staging floats of p into cp (its slot_of and
 * cap allocated; last and busy scratch of g->n_values each): what a build allocates and
 * nnop_graph_memory counts, from one place. */
static nnop_status lay_out(const nnop_plan *p, struct nnop__cpu_plan *cp, int32_t *last,
                           int8_t *busy)
{
    nnop_status st;
    last_uses(p->g, last);
    plan_slots(p->g, cp, last, busy);
    st = nnop__cpu_quant_choose(p, &cp->quant);
    if (st == NNOP_OK)
        cp->stage_cap = stage_floats(p->g) + (cp->quant ? cp->quant->stage : 0);
    return st;
}

/* What nnop__cpu_plan_build will hold for p's graph and options, laid out as the build lays
 * it out, without building it (nnop_graph_memory). */
nnop_status nnop__cpu_graph_memory(const nnop_plan *p, nnop_plan_memory_info *m)
{
    const nnop_graph *g = p->g;
    size_t n = (size_t)(g->n_values > 0 ? g->n_values : 1);
    int32_t *last = (int32_t *)nnop__calloc(n, sizeof *last);
    int8_t *busy = (int8_t *)nnop__calloc(n, sizeof *busy);
    struct nnop__cpu_plan cp;
    nnop_status st;
    int32_t i;
    memset(&cp, 0, sizeof cp);
    cp.slot_of = (int32_t *)nnop__calloc(n, sizeof *cp.slot_of);
    cp.cap = (int64_t *)nnop__calloc(n, sizeof *cp.cap);
    st = last && busy && cp.slot_of && cp.cap
                 ? lay_out(p, &cp, last, busy)
                 : nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY,
                              "nnop_graph_memory: out of memory for the buffer plan's tables");
    if (st == NNOP_OK) {
        for (i = 0; i < cp.n_slots; i++)
            m->intermediates += (size_t)cp.cap[i] * sizeof(float);
        for (i = 0; i < g->n_values; i++)
            if (g->values[i].kind == NNOP_VALUE_CONSTANT)
                m->weights += constant_bytes(g, i);
        m->weights += cp.quant ? cp.quant->weight_bytes : 0;
        m->workspace = (size_t)cp.stage_cap * sizeof(float);
        m->host_total = m->weights + m->intermediates + m->workspace;
    }
    nnop__cpu_quant_destroy(p->ctx, cp.quant, 0);
    nnop__free(last);
    nnop__free(busy);
    nnop__free(cp.slot_of);
    nnop__free(cp.cap);
    return st;
}

nnop_status nnop__cpu_plan_build(nnop_plan *p)
{
    const nnop_graph *g = p->g;
    size_t n = (size_t)(g->n_values > 0 ? g->n_values : 1);
    int32_t *last = (int32_t *)nnop__calloc(n, sizeof *last);
    int8_t *busy = (int8_t *)nnop__calloc(n, sizeof *busy);
    struct nnop__cpu_plan *cp = (struct nnop__cpu_plan *)nnop__calloc(1, sizeof *cp);
    char why[256];
    nnop_status st = NNOP_OK;
    p->cpu = cp;
    if (cp) {
        cp->cdata = (void **)nnop__calloc(n, sizeof *cp->cdata);
        cp->slot_of = (int32_t *)nnop__calloc(n, sizeof *cp->slot_of);
        cp->cap = (int64_t *)nnop__calloc(n, sizeof *cp->cap); /* at most one per value */
    }
    if (!last || !busy || !cp || !cp->cdata || !cp->slot_of || !cp->cap)
        st = out_of_memory(p, n * (sizeof *last + 1 + 2 * sizeof(void *) + sizeof(int64_t)),
                           "the buffer plan");
    if (st == NNOP_OK)
        st = lay_out(p, cp, last, busy);
    if (st == NNOP_OK)
        st = alloc_constants(p);
    if (st == NNOP_OK && cp->quant) {
        st = nnop__cpu_quant_weights(p, cp->quant);
        cp->weights_bytes += cp->quant->weight_bytes;
    }
    if (st == NNOP_OK &&
        (st = nnop__cpu_exec_create(p, NULL, &cp->own, why, sizeof why)) != NNOP_OK)
        nnop__fail(p->ctx, st, "nnop_graph_compile: %s (the CPU plan held %zu bytes of weights)",
                   why, cp->weights_bytes);
    nnop__free(last);
    nnop__free(busy);
    return st;
}

void nnop__cpu_plan_describe(const nnop_plan *p, nnop__text *t)
{
    if (p->cpu && p->cpu->quant)
        nnop__cpu_quant_describe(p, p->cpu->quant, t);
}

void nnop__cpu_plan_memory(const nnop_plan *p, nnop_plan_memory_info *m)
{
    if (!p->cpu)
        return;
    m->weights = p->cpu->weights_bytes;
    m->host_total = m->weights;
    nnop__cpu_exec_memory(p->cpu->own, m);
}

/* ---------------------------------------------------------------- running */
/* The values' shapes at batch n: 0 the shapes the graph was built with; else dim 0 of every
 * value that is not a constant is n (a batch-range plan, whose compile checked that dim 0 is
 * the batch of each). Packed strides do not depend on dim 0, so the first n samples of each
 * buffer are the batch's. */
static void set_batch(const nnop_graph *g, struct nnop__cpu_exec *e, int64_t n)
{
    int32_t i;
    if (e->batch == n)
        return;
    for (i = 0; i < g->n_values; i++) {
        e->desc[i] = g->values[i].desc;
        if (n > 0 && g->values[i].kind != NNOP_VALUE_CONSTANT && e->desc[i].ndim > 0)
            e->desc[i].dims[0] = n;
    }
    e->batch = n;
}

/* Input id of a node: its buffer, or a 16-bit constant converted into the staging floats at
 * *stage (advanced past it). */
static const float *node_input(const nnop_plan *p, const struct nnop__cpu_exec *e, int32_t id,
                               float **stage)
{
    const float *at = *stage;
    int64_t n;
    if (id == NNOP_NONE_ID || e->buf[id])
        return id == NNOP_NONE_ID ? NULL : e->buf[id];
    n = nnop_tensor_elements(&e->desc[id]);
    nnop__to_f32(e->desc[id].dtype, p->cpu->cdata[id], *stage, n);
    *stage += n;
    return at;
}

/* A quantized layer (cpu_quant.h) reads its activation quantized and back, staged in the
 * first floats of the staging area, and its weights as quantized at build. */
static void quantized_inputs(const nnop__cpu_quant *q, int32_t at, const struct nnop__cpu_exec *e,
                             const nnop__node *node, const float **in)
{
    if (!q || q->in_scale[at] == 0.0f)
        return;
    nnop__cpu_quant_input(q, at, in[0], nnop_tensor_elements(&e->desc[node->in[0]]), e->stage);
    in[0] = e->stage;
    in[1] = q->weights[at];
}

static void run_node(const nnop_plan *p, const struct nnop__cpu_exec *e, int32_t at)
{
    const nnop__node *node = &p->g->nodes[at];
    const nnop__cpu_quant *q = p->cpu->quant;
    const float *in[NNOP_MAX_NODE_INPUTS];
    const nnop_tensor_desc *in_desc[NNOP_MAX_NODE_INPUTS];
    const nnop_tensor_desc *od = &e->desc[node->out];
    float *stage = e->stage + (q ? q->stage : 0);
    int i;
    for (i = 0; i < node->n_in; i++) {
        int32_t id = node->in[i];
        in[i] = node_input(p, e, id, &stage);
        in_desc[i] = id == NNOP_NONE_ID ? NULL : &e->desc[id];
    }
    quantized_inputs(q, at, e, node, in);
    nnop__op(node->op)->reference(node, in, in_desc, e->buf[node->out], od);
    /* every value is a tensor of its dtype (as in PyTorch eager): a 16-bit result is stored
     * rounded, so a chain of nodes matches a GPU plan that stores between its steps */
    nnop__round_to(od->dtype, e->buf[node->out], nnop_tensor_elements(od));
}

/* The inputs read and every node run; see (when not NULL) is handed each input and each
 * node's result as soon as it is written, before a later node may reuse its buffer. */
static void run_steps(const nnop_plan *p, struct nnop__cpu_exec *e, int64_t batch,
                      const void *const *in, nnop__value_seen see, void *user)
{
    const nnop_graph *g = p->g;
    int32_t i;
    set_batch(g, e, batch);
    for (i = 0; i < g->n_inputs; i++) {
        int32_t v = g->inputs[i];
        int64_t n = nnop_tensor_elements(&e->desc[v]);
        nnop__to_f32(e->desc[v].dtype, in[i], e->buf[v], n);
        if (see)
            see(user, v, e->buf[v], n);
    }
    for (i = 0; i < g->n_nodes; i++) {
        int32_t v = g->nodes[i].out;
        run_node(p, e, i);
        if (see)
            see(user, v, e->buf[v], nnop_tensor_elements(&e->desc[v]));
    }
}

void nnop__cpu_plan_observe(nnop_plan *p, const void *const *in, nnop__value_seen see, void *user)
{
    run_steps(p, p->cpu->own, 0, in, see, user);
}

void nnop__cpu_exec_run(const nnop_plan *p, struct nnop__cpu_exec *e, int64_t batch,
                        const void *const *in, void *const *out)
{
    const nnop_graph *g = p->g;
    int32_t i;
    run_steps(p, e, batch, in, NULL, NULL);
    for (i = 0; i < g->n_outputs; i++) {
        int32_t v = g->outputs[i];
        const nnop_tensor_desc *d = &e->desc[v];
        if (e->buf[v]) /* else a 16-bit constant, kept in its dtype */
            nnop__from_f32(d->dtype, e->buf[v], out[i], nnop_tensor_elements(d));
        else
            memcpy(out[i], p->cpu->cdata[v], (size_t)nnop_tensor_elements(d) * 2);
    }
}

nnop_status nnop__cpu_plan_execute(nnop_plan *p, const void *const *in, void *const *out)
{
    nnop__cpu_exec_run(p, p->cpu->own, 0, in, out);
    return NNOP_OK;
}
