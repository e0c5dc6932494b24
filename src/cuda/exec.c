/* exec.c: execution contexts on the CUDA backend (nnop_exec, issue 49). A context is a shadow
 * of its compiled plan that execute.c runs as it runs the plan itself: the plan's fields with
 * a context of its own (cuDNN and cuBLASLt handles, a stream, its own last error), a slot table
 * of its own (the plan's, with every slot in the intermediates' arena, the workspace or the
 * memory a run writes moved into the context's one device block) and its own copies of the
 * steps (impl/run_copy.c). The weights, engines and execution plans stay the plan's: a context
 * compiles nothing, and allocates only its block, its handles and its stream. */
#include <stdint.h>
#include <string.h>

#include "cuda/schedule/schedule.h"

#define EXEC_ALIGN 256 /* as the arena's buffers (and more than cuDNN's 16 bytes) */

struct nnop__cuda_exec {
    nnop_plan plan; /* the shadow: the compiled plan with ctx and cuda below */
    nnop_context ctx;
    struct nnop__cuda_ctx dev;
    struct nnop__cuda_plan cp;
    char *block; /* arena, workspace, run scratch: one block */
    size_t block_bytes;
    int own_block; /* allocated by us (not nnop_exec_create_in's scratch) */
};

static size_t round_up(size_t n)
{
    return (n + EXEC_ALIGN - 1) / EXEC_ALIGN * EXEC_ALIGN;
}

/* The block's layout: the arena, then one workspace (side steps run on the main stream here,
 * so the larger of the plan's two) at *ws_off, then each run scratch (run_off[k]; either
 * pointer may be NULL). Returns the whole size. */
static size_t layout(const struct nnop__cuda_plan *cp, size_t *ws_off, size_t *run_off)
{
    int64_t ws = cp->workspace_bytes > cp->side_workspace_bytes ? cp->workspace_bytes
                                                                : cp->side_workspace_bytes;
    size_t at = round_up((size_t)cp->arena_bytes);
    int32_t k;
    if (ws_off)
        *ws_off = at;
    at += round_up((size_t)ws);
    for (k = 0; k < cp->n_run; k++) {
        if (run_off)
            run_off[k] = at;
        at += round_up(cp->run_bytes[k]);
    }
    return at;
}

size_t nnop__cuda_exec_scratch_bytes(const nnop_plan *p)
{
    return p->cuda ? layout(p->cuda, NULL, NULL) + EXEC_ALIGN : 0; /* room to align a caller's */
}

/* The context's half: the plan's context copied, with a handle, a stream and a cuBLASLt
 * handle of its own (no prefetch, deserialization handles or side stream). */
static nnop_status make_context(struct nnop__cuda_exec *e, nnop_context *ctx)
{
    nnop_context *c = &e->ctx;
    *c = *ctx;
    c->last_error[0] = '\0';
    c->oneshot = NULL;
    c->live_graphs = NULL;
    c->live_plans = NULL;
    c->cuda = &e->dev;
    memset(&e->dev, 0, sizeof e->dev);
    e->dev.device = ctx->cuda->device;
    e->dev.sm_count = ctx->cuda->sm_count;
    e->dev.cc_major = ctx->cuda->cc_major;
    e->dev.cc_minor = ctx->cuda->cc_minor;
    e->dev.cudnn_version = ctx->cuda->cudnn_version;
    e->dev.cache_ok = ctx->cuda->cache_ok;
    memcpy(e->dev.name, ctx->cuda->name, sizeof e->dev.name);
    if (NNOP_CU(ctx, cudaStreamCreateWithFlags(&e->dev.own_stream, cudaStreamNonBlocking)) !=
        NNOP_OK)
        return NNOP_ERR_CUDA;
    e->dev.stream = e->dev.own_stream;
    if (NNOP_DNN(ctx, cudnnCreate(&e->dev.handle)) != NNOP_OK)
        return NNOP_ERR_CUDNN;
    return NNOP_DNN(ctx, cudnnSetStream(e->dev.handle, e->dev.stream));
}

/* The plan's half: its fields, with a slot table, steps, graph keys and output pointers of
 * the context's own, and the slots that a run writes moved into the block. */
static nnop_status make_plan(struct nnop__cuda_exec *e, nnop_plan *p)
{
    const struct nnop__cuda_plan *src = p->cuda;
    struct nnop__cuda_plan *cp = &e->cp;
    size_t nio = (size_t)(p->g->n_inputs + p->g->n_outputs), ws_off;
    const char *arena = (const char *)src->arena;
    int32_t i;
    *cp = *src;
    cp->slot = (void **)nnop__calloc((size_t)src->cap_slots, sizeof *cp->slot);
    cp->steps = (nnop__cuda_step *)nnop__calloc((size_t)p->n_parts + 1, sizeof *cp->steps);
    cp->gkey = (void **)nnop__calloc(nio * (NNOP_GRAPH_SETS + 1), sizeof *cp->gkey);
    cp->out_ptr = (void **)nnop__calloc((size_t)p->g->n_outputs + 1, sizeof *cp->out_ptr);
    cp->n_graphs = cp->next_graph = cp->graph_failed = 0;
    memset(cp->gexec, 0, sizeof cp->gexec);
    cp->owned = NULL, cp->n_owned = cp->cap_owned = 0;
    cp->memo_fp = NULL, cp->memo_step = NULL, cp->n_memo = cp->cap_memo = 0;
    cp->jobs = NULL, cp->n_jobs = cp->cap_jobs = 0;
    if (!cp->slot || !cp->steps || !cp->gkey || !cp->out_ptr)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(cp->slot, src->slot, (size_t)src->n_slots * sizeof *cp->slot);
    layout(src, &ws_off, NULL);
    cp->arena = e->block;
    cp->workspace = e->block + ws_off;
    cp->workspace_bytes = cp->workspace_bytes > cp->side_workspace_bytes ? cp->workspace_bytes
                                                                         : cp->side_workspace_bytes;
    cp->side_workspace = NULL;
    cp->side_workspace_bytes = 0;
    for (i = 0; i < src->n_slots; i++) { /* buffers in the arena, concat slices of them too */
        const char *s = (const char *)src->slot[i];
        if (arena && s >= arena && s < arena + src->arena_bytes)
            cp->slot[i] = e->block + (s - arena);
    }
    return NNOP_OK;
}

/* Each memory a run writes outside the arena and workspace (impl's run scratch) gets its
 * place in the block. */
static nnop_status place_run_scratch(struct nnop__cuda_exec *e)
{
    struct nnop__cuda_plan *cp = &e->cp;
    size_t *off = (size_t *)nnop__calloc((size_t)cp->n_run + 1, sizeof *off);
    int32_t k;
    if (!off)
        return NNOP_ERR_OUT_OF_MEMORY;
    layout(cp, NULL, off);
    for (k = 0; k < cp->n_run; k++)
        cp->slot[cp->run_slot[k]] = e->block + off[k];
    nnop__free(off);
    return NNOP_OK;
}

/* On the shadow plan, so that a cuBLASLt handle is made for the context's own; a failure's
 * message is moved to the plan's context, where nnop_exec_create's caller reads it. */
static nnop_status copy_steps(struct nnop__cuda_exec *e, nnop_plan *p)
{
    nnop_status st = NNOP_OK;
    int32_t i;
    for (i = 0; i < p->n_parts && st == NNOP_OK; i++)
        st = nnop__step_run_copy(&e->plan, &p->cuda->steps[i], &e->cp.steps[i]);
    return st == NNOP_OK ? st : nnop__fail(p->ctx, st, "%s", nnop__error_body(&e->ctx));
}

static nnop_status take_block(struct nnop__cuda_exec *e, nnop_plan *p, void *scratch)
{
    e->block_bytes = layout(p->cuda, NULL, NULL);
    if (scratch) {
        uintptr_t a = ((uintptr_t)scratch + EXEC_ALIGN - 1) / EXEC_ALIGN * EXEC_ALIGN;
        e->block = (char *)a;
        return NNOP_OK;
    }
    e->own_block = 1;
    if (e->block_bytes == 0)
        return NNOP_OK;
    if (nnop__dev_malloc(&p->ctx->alloc, (void **)&e->block, e->block_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        e->block = NULL;
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY,
                          "out of device memory: %zu bytes asked for the execution context's "
                          "intermediates, workspace and scratch",
                          e->block_bytes);
    }
    return NNOP_OK;
}

static nnop_status exec_create(nnop_plan *p, void *scratch, struct nnop__cuda_exec *e)
{
    nnop_status st = take_block(e, p, scratch);
    if (st == NNOP_OK)
        st = make_context(e, p->ctx);
    if (st == NNOP_OK)
        st = make_plan(e, p);
    if (st == NNOP_OK && place_run_scratch(e) != NNOP_OK)
        st = nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    e->plan = *p;
    e->plan.ctx = &e->ctx;
    e->plan.cuda = &e->cp;
    e->plan.execs = NULL;
    e->plan.listed = 0;
    e->plan.live_prev = e->plan.live_next = NULL;
    if (st == NNOP_OK)
        st = copy_steps(e, p);
    return st;
}

void nnop__cuda_exec_destroy(nnop_plan *p, struct nnop__cuda_exec *e)
{
    struct nnop__cuda_plan *cp;
    int prev;
    int32_t i;
    if (!e)
        return;
    cp = &e->cp;
    (void)nnop__device_enter(p->ctx, &prev); /* the frees go on whatever it says */
    if (e->dev.stream)
        (void)cudaStreamSynchronize(e->dev.stream);
    for (i = 0; i < cp->n_graphs; i++)
        (void)cudaGraphExecDestroy(cp->gexec[i]);
    for (i = 0; cp->steps && i < p->n_parts; i++)
        nnop__step_run_copy_free(&cp->steps[i]);
    if (e->dev.lt)
        (void)cublasLtDestroy(e->dev.lt);
    if (e->dev.handle)
        (void)cudnnDestroy(e->dev.handle);
    if (e->dev.own_stream)
        (void)cudaStreamDestroy(e->dev.own_stream);
    if (e->own_block && e->block)
        nnop__dev_free(&p->ctx->alloc, e->block);
    nnop__free(cp->slot);
    nnop__free(cp->steps);
    nnop__free(cp->gkey);
    nnop__free(cp->out_ptr);
    nnop__free(e);
    nnop__device_leave(prev);
}

nnop_status nnop__cuda_exec_create(nnop_plan *p, void *scratch, struct nnop__cuda_exec **out)
{
    struct nnop__cuda_exec *e = (struct nnop__cuda_exec *)nnop__calloc(1, sizeof *e);
    int prev;
    nnop_status st;
    *out = NULL;
    if (!e)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    st = nnop__device_enter(p->ctx, &prev);
    if (st == NNOP_OK)
        st = exec_create(p, scratch, e);
    nnop__device_leave(prev);
    if (st != NNOP_OK) {
        nnop__cuda_exec_destroy(p, e);
        return st;
    }
    *out = e;
    return NNOP_OK;
}

/* Errors land in the context's own last error; the caller copies them to the exec. */
nnop_status nnop__cuda_exec_run(struct nnop__cuda_exec *e, const void *const *in, void *const *out,
                                char *err, size_t len)
{
    nnop_status st;
    e->ctx.last_error[0] = '\0';
    st = nnop__cuda_plan_execute(&e->plan, in, out);
    if (st != NNOP_OK)
        nnop__copy_text(err, len, e->ctx.last_error);
    return st;
}

nnop_status nnop__cuda_exec_set_stream(struct nnop__cuda_exec *e, void *stream, char *err,
                                       size_t len)
{
    cudaStream_t s = stream ? (cudaStream_t)stream : e->dev.own_stream;
    int prev;
    nnop_status st = nnop__device_enter(&e->ctx, &prev);
    if (st == NNOP_OK)
        st = NNOP_DNN(&e->ctx, cudnnSetStream(e->dev.handle, s));
    if (st == NNOP_OK)
        e->dev.stream = s;
    nnop__device_leave(prev);
    if (st != NNOP_OK)
        nnop__copy_text(err, len, e->ctx.last_error);
    return st;
}

nnop_status nnop__cuda_exec_synchronize(struct nnop__cuda_exec *e, char *err, size_t len)
{
    int prev;
    nnop_status st = nnop__device_enter(&e->ctx, &prev);
    if (st == NNOP_OK)
        st = NNOP_CU(&e->ctx, cudaStreamSynchronize(e->dev.stream));
    nnop__device_leave(prev);
    if (st != NNOP_OK)
        nnop__copy_text(err, len, e->ctx.last_error);
    return st;
}

void nnop__cuda_exec_memory(const struct nnop__cuda_exec *e, nnop_plan_memory_info *m)
{
    const struct nnop__cuda_plan *cp = &e->cp;
    m->intermediates = (size_t)cp->arena_bytes;
    m->workspace = (size_t)cp->workspace_bytes;
    m->other = e->block_bytes - round_up(m->intermediates) - round_up(m->workspace);
    m->device_total = e->block_bytes; /* its own block or its share of the caller's */
}
