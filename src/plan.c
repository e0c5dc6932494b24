/* plan.c: compile (validate, clone, partition, backend build), execute dispatch, describe. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

void nnop_compile_options_init(nnop_compile_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->fuse = 1;
}

static nnop_status build_backend(nnop_plan *p)
{
    if (p->ctx->backend == NNOP_BACKEND_CUDA)
        return nnop__cuda_plan_build(p);
    return nnop__cpu_plan_build(p);
}

nnop_status nnop_graph_compile(nnop_graph *g, const nnop_compile_options *opts, nnop_plan **out)
{
    nnop_plan *p;
    nnop_status st;
    if (!out)
        return g ? nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_graph_compile: out is NULL")
                 : NNOP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!g)
        return NNOP_ERR_INVALID_ARGUMENT;
    st = nnop__graph_validate(g);
    if (st != NNOP_OK)
        return st;
    nnop__clear_error(g->ctx);
    p = (nnop_plan *)nnop__calloc(1, sizeof *p);
    if (!p)
        return nnop__fail(g->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    p->ctx = g->ctx;
    if (opts)
        p->opts = *opts;
    else
        nnop_compile_options_init(&p->opts);
    st = nnop__graph_clone(g, &p->g);
    if (st == NNOP_OK) {
        nnop__graph_settle_layouts(p->g);
        st = nnop__partition_graph(p->g, p->opts.fuse, &p->parts, &p->n_parts);
    }
    if (st == NNOP_OK)
        st = build_backend(p);
    if (p->g)
        nnop__graph_drop_borrowed(p->g);
    if (st != NNOP_OK) {
        if (st == NNOP_ERR_OUT_OF_MEMORY && p->ctx->last_error[0] == '\0')
            nnop__fail(p->ctx, st, "nnop_graph_compile: out of memory");
        nnop_plan_destroy(p);
        return st;
    }
    *out = p;
    return NNOP_OK;
}

void nnop_plan_destroy(nnop_plan *p)
{
    if (!p)
        return;
    if (p->cuda)
        nnop__cuda_plan_destroy(p);
    if (p->cpu_buf)
        nnop__cpu_plan_destroy(p);
    nnop__free(p->parts);
    nnop_graph_destroy(p->g);
    nnop__free(p);
}

nnop_status nnop_plan_execute(nnop_plan *p, const void *const *inputs, void *const *outputs)
{
    int32_t i;
    if (!p)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(p->ctx);
    if ((p->g->n_inputs > 0 && !inputs) || !outputs)
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_plan_execute: %s array is NULL",
                          outputs ? "inputs" : "outputs");
    for (i = 0; i < p->g->n_inputs; i++)
        if (!inputs[i])
            return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                              "nnop_plan_execute: inputs[%d] ('%s') is NULL", (int)i,
                              p->g->values[p->g->inputs[i]].name);
    for (i = 0; i < p->g->n_outputs; i++)
        if (!outputs[i])
            return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                              "nnop_plan_execute: outputs[%d] ('%s') is NULL", (int)i,
                              p->g->values[p->g->outputs[i]].name);
    if (p->cuda)
        return nnop__cuda_plan_execute(p, inputs, outputs);
    return nnop__cpu_plan_execute(p, inputs, outputs);
}

int nnop_plan_num_inputs(const nnop_plan *p)
{
    return p ? (int)p->g->n_inputs : 0;
}

int nnop_plan_num_outputs(const nnop_plan *p)
{
    return p ? (int)p->g->n_outputs : 0;
}

int nnop_plan_num_partitions(const nnop_plan *p)
{
    return p ? (int)p->n_parts : 0;
}

nnop_status nnop_plan_input_desc(const nnop_plan *p, int i, nnop_tensor_desc *out)
{
    if (!p || !out || i < 0 || i >= p->g->n_inputs)
        return NNOP_ERR_INVALID_ARGUMENT;
    *out = p->g->values[p->g->inputs[i]].desc;
    return NNOP_OK;
}

nnop_status nnop_plan_output_desc(const nnop_plan *p, int i, nnop_tensor_desc *out)
{
    if (!p || !out || i < 0 || i >= p->g->n_outputs)
        return NNOP_ERR_INVALID_ARGUMENT;
    *out = p->g->values[p->g->outputs[i]].desc;
    return NNOP_OK;
}

size_t nnop_plan_describe(const nnop_plan *p, char *buf, size_t len)
{
    nnop__text t;
    int32_t i, k;
    nnop__text_init(&t, buf, len);
    if (!p)
        return 0;
    nnop__textf(&t, "plan: %s backend, %d nodes, %d partitions\n", p->cuda ? "cuda" : "cpu",
                (int)p->g->n_nodes, (int)p->n_parts);
    for (i = 0; i < p->n_parts; i++) {
        const nnop__partition *part = &p->parts[i];
        nnop__textf(&t, "  [%d] ", (int)i);
        for (k = 0; k < part->count; k++)
            nnop__textf(&t, "%s%s", k ? "+" : "", nnop__op(p->g->nodes[part->first + k].op)->name);
        if (p->cuda) {
            char tmp[512];
            nnop__cuda_partition_describe(p, i, tmp, sizeof tmp);
            nnop__textf(&t, " %s", tmp);
        }
        nnop__textf(&t, "%s%s%s\n", part->count > 1 ? " (fused)" : "", part->reason[0] ? ": " : "",
                    part->reason);
    }
    return t.used;
}

nnop_status nnop_graph_warmup(nnop_graph *g, const nnop_compile_options *opts)
{
    nnop_plan *p = NULL;
    nnop_status st;
    if (!g)
        return NNOP_ERR_INVALID_ARGUMENT;
    st = nnop_graph_compile(g, opts, &p);
    if (st != NNOP_OK)
        return st;
    nnop_plan_destroy(p);
    return nnop_cache_save(g->ctx);
}
