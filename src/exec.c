/* exec.c: execution contexts (nnop_exec, issue 49): runs of one compiled plan at once, each
 * with buffers of its own, sharing the plan's weights and buffer plan; and the check a compile
 * with the batch_range option makes (every value computed from the inputs keeps the batch as
 * its dim 0, so a run may take any batch up to the built one).
 * The backends hold the buffers: src/cpu (nnop__cpu_exec) and src/cuda/exec.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

struct nnop_exec {
    nnop_plan *p; /* NULL once the plan or its context is gone (an orphan) */
    struct nnop__cpu_exec *cpu;
    struct nnop__cuda_exec *cuda;
    char last_error[NNOP_ERROR_LEN]; /* its own: runs on other threads share no message */
    struct nnop_exec *prev, *next;   /* in the plan's list */
};

static nnop_status exec_fail(nnop_exec *e, nnop_status st, const char *fmt, ...) NNOP_PRINTF(3, 4);

static nnop_status exec_fail(nnop_exec *e, nnop_status st, const char *fmt, ...)
{
    va_list ap;
    int k = snprintf(e->last_error, sizeof e->last_error, "%s: ", nnop_status_string(st));
    va_start(ap, fmt);
    vsnprintf(e->last_error + k, sizeof e->last_error - (size_t)k, fmt, ap);
    va_end(ap);
    return st;
}

nnop_status nnop__batch_range_check(nnop_plan *p)
{
    const nnop_graph *g = p->g;
    int64_t batch;
    int32_t i;
    if (!p->opts.batch_range)
        return NNOP_OK;
    if (g->n_inputs == 0)
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_graph_compile: batch_range needs a graph input to take the batch");
    batch = g->values[g->inputs[0]].desc.dims[0];
    for (i = 0; i < g->n_values; i++) {
        const nnop__value *v = &g->values[i];
        if (v->kind != NNOP_VALUE_CONSTANT && v->desc.dims[0] != batch)
            return nnop__fail(p->ctx, NNOP_ERR_SHAPE,
                              "nnop_graph_compile: batch_range: value '%s' has dim 0 = %lld, not "
                              "the batch %lld of input '%s' (every value computed from the "
                              "inputs keeps the batch as its dim 0)",
                              v->name, (long long)v->desc.dims[0], (long long)batch,
                              g->values[g->inputs[0]].name);
    }
    p->batch_max = batch;
    return NNOP_OK;
}

size_t nnop_exec_scratch_bytes(const nnop_plan *p)
{
    if (!p || !p->ctx)
        return 0;
    return p->cuda  ? nnop__cuda_exec_scratch_bytes(p)
           : p->cpu ? nnop__cpu_exec_scratch_bytes(p)
                    : 0;
}

/* The backend's half of e (its buffers; on CUDA also its stream and handles). */
static nnop_status backend_create(nnop_plan *p, void *scratch, nnop_exec *e, const char *fn)
{
    char why[NNOP_ERROR_LEN / 2];
    nnop_status st;
    if (p->cuda) {
        st = nnop__cuda_exec_create(p, scratch, &e->cuda);
        if (st == NNOP_OK)
            return st;
        snprintf(why, sizeof why, "%s", nnop__error_body(p->ctx)); /* not read while written */
        return nnop__fail(p->ctx, st, "%s: %s", fn, why);
    }
    st = nnop__cpu_exec_create(p, scratch, &e->cpu, why, sizeof why);
    return st == NNOP_OK ? st : nnop__fail(p->ctx, st, "%s: %s", fn, why);
}

static void backend_destroy(nnop_plan *p, nnop_exec *e)
{
    if (e->cuda)
        nnop__cuda_exec_destroy(p, e->cuda);
    else
        nnop__cpu_exec_destroy(p, e->cpu);
    e->cuda = NULL;
    e->cpu = NULL;
}

static nnop_status create(nnop_plan *p, void *scratch, size_t bytes, nnop_exec **out,
                          const char *fn)
{
    nnop_exec *e;
    nnop_status st;
    size_t need;
    if (out)
        *out = NULL;
    if (!p || !p->ctx) /* an orphan plan has no context to hold a message */
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!out)
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    need = nnop_exec_scratch_bytes(p);
    if (scratch && bytes < need)
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "%s: %zu bytes of scratch, the plan's buffers need %zu "
                          "(nnop_exec_scratch_bytes)",
                          fn, bytes, need);
    e = (nnop_exec *)nnop__calloc(1, sizeof *e);
    if (!e)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    st = backend_create(p, scratch, e, fn);
    if (st != NNOP_OK) {
        nnop__free(e);
        return st;
    }
    e->p = p;
    e->next = p->execs;
    if (e->next)
        e->next->prev = e;
    p->execs = e;
    nnop__clear_error(p->ctx);
    *out = e;
    return NNOP_OK;
}

nnop_status nnop_exec_create(nnop_plan *p, nnop_exec **out)
{
    return create(p, NULL, 0, out, "nnop_exec_create");
}

nnop_status nnop_exec_create_in(nnop_plan *p, void *scratch, size_t bytes, nnop_exec **out)
{
    if (out)
        *out = NULL;
    if (!scratch)
        return p && p->ctx ? nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                                        "nnop_exec_create_in: scratch is NULL")
                           : NNOP_ERR_INVALID_ARGUMENT;
    return create(p, scratch, bytes, out, "nnop_exec_create_in");
}

static nnop_status check_run(nnop_exec *e, int64_t batch, const void *const *in, void *const *out)
{
    char why[NNOP_ERROR_LEN / 2];
    if (!nnop__check_io(e->p->g, in, out, why, sizeof why))
        return exec_fail(e, NNOP_ERR_INVALID_ARGUMENT, "nnop_exec_run: %s", why);
    if (batch != 0 && !e->p->batch_max)
        return exec_fail(e, NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_exec_run: batch %lld given to a plan compiled without "
                         "batch_range (0 runs the shapes it was built with)",
                         (long long)batch);
    if (batch < 0 || batch > e->p->batch_max)
        return exec_fail(e, NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_exec_run: batch %lld is outside 1 to %lld (0: the built batch)",
                         (long long)batch, (long long)e->p->batch_max);
    return NNOP_OK;
}

/* The failure of a call fn on e whose plan or context was destroyed, NNOP_OK otherwise. */
static nnop_status orphaned(nnop_exec *e, const char *fn)
{
    return e->p ? NNOP_OK
                : exec_fail(e, NNOP_ERR_INVALID_ARGUMENT,
                            "%s: its plan, or the plan's context, was destroyed", fn);
}

nnop_status nnop_exec_run(nnop_exec *e, int64_t batch, const void *const *inputs,
                          void *const *outputs)
{
    nnop_status st;
    if (!e)
        return NNOP_ERR_INVALID_ARGUMENT;
    st = orphaned(e, "nnop_exec_run");
    if (st == NNOP_OK)
        st = check_run(e, batch, inputs, outputs);
    if (st != NNOP_OK)
        return st;
    e->last_error[0] = '\0';
    if (e->cuda)
        return nnop__cuda_exec_run(e->cuda, batch, inputs, outputs, e->last_error,
                                   sizeof e->last_error);
    nnop__cpu_exec_run(e->p, e->cpu, batch, inputs, outputs);
    return NNOP_OK;
}

nnop_status nnop_exec_set_stream(nnop_exec *e, void *stream)
{
    nnop_status st;
    if (!e)
        return NNOP_ERR_INVALID_ARGUMENT;
    e->last_error[0] = '\0';
    st = orphaned(e, "nnop_exec_set_stream");
    if (st != NNOP_OK)
        return st;
    if (e->cuda)
        return nnop__cuda_exec_set_stream(e->cuda, stream, e->last_error, sizeof e->last_error);
    return stream ? exec_fail(e, NNOP_ERR_INVALID_ARGUMENT,
                              "nnop_exec_set_stream: the CPU backend has no streams")
                  : NNOP_OK;
}

nnop_status nnop_exec_synchronize(nnop_exec *e)
{
    nnop_status st;
    if (!e)
        return NNOP_ERR_INVALID_ARGUMENT;
    e->last_error[0] = '\0';
    st = orphaned(e, "nnop_exec_synchronize");
    if (st != NNOP_OK)
        return st;
    return e->cuda ? nnop__cuda_exec_synchronize(e->cuda, e->last_error, sizeof e->last_error)
                   : NNOP_OK;
}

nnop_status nnop_exec_memory(const nnop_exec *e, nnop_plan_memory_info *out)
{
    if (!e || !out)
        return NNOP_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!e->p)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (e->cuda)
        nnop__cuda_exec_memory(e->cuda, out);
    else
        nnop__cpu_exec_memory(e->cpu, out);
    return NNOP_OK;
}

const char *nnop_exec_last_error(const nnop_exec *e)
{
    return e ? e->last_error : "nnop_exec_last_error: the execution context is NULL";
}

static void unlink_exec(nnop_exec *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else if (e->p)
        e->p->execs = e->next;
    if (e->next)
        e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

void nnop_exec_destroy(nnop_exec *e)
{
    if (!e)
        return;
    if (e->p) {
        backend_destroy(e->p, e);
        unlink_exec(e);
    }
    nnop__free(e);
}

void nnop__execs_orphan(nnop_plan *p)
{
    while (p->execs) {
        nnop_exec *e = p->execs;
        backend_destroy(p, e);
        unlink_exec(e);
        e->p = NULL;
    }
}
