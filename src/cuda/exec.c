/* exec.c: execution contexts on the CUDA backend (nnop_exec, issue 49). A context is a shadow
 * of its compiled plan that execute.c runs as it runs the plan itself: the plan's fields with
 * a context of its own (cuDNN and cuBLASLt handles, a stream, its own last error) and, per
 * batch bucket (one without a batch range), a slot table of its own (the plan's, with every
 * slot in the intermediates' arena or in the memory a run writes moved into the context's
 * one device block) and its own copies of the bucket's steps (impl/run_copy.c). The weights,
 * engines and execution plans stay the plan's: a context compiles nothing, and allocates only
 * its block, its handles and its stream.
 * A batch_range plan's run of batch n takes the smallest bucket b >= n (compile.c). Where b
 * is n it runs on the caller's buffers; otherwise the inputs' n samples are copied into
 * staging buffers of the built batch (zeroed once, so the b - n samples after them hold
 * zeros or an earlier run's inputs: every op works sample by sample, so they reach no
 * sample of the caller's), the bucket runs there, and the outputs' n samples are copied out. */
#include <stdint.h>
#include <string.h>

#include "cuda/schedule/schedule.h"

#define EXEC_ALIGN 256 /* as the arena's buffers (and more than cuDNN's 16 bytes) */

struct nnop__cuda_exec {
    nnop_plan plan; /* the shadow: the compiled plan, its ctx and cuda below */
    nnop_context ctx;
    struct nnop__cuda_ctx dev;
    struct nnop__cuda_plan cps[NNOP_MAX_BUCKETS]; /* per bucket (one without a range) */
    int32_t n_cps;
    int64_t batch[NNOP_MAX_BUCKETS]; /* each bucket's batch (range plans) */
    char *block;                     /* arena, workspace, run scratch, staging: one block */
    size_t block_bytes;
    int own_block;  /* allocated by us (not nnop_exec_create_in's scratch) */
    char **stage;   /* per input, then per output: the built batch's bytes (range plans) */
    int any_copies; /* an output is an input or a constant (copied at the built batch) */
};

static size_t round_up(size_t n)
{
    return (n + EXEC_ALIGN - 1) / EXEC_ALIGN * EXEC_ALIGN;
}

/* The value of the plan's io tensor i: input i, then output i - n_inputs. */
static const nnop__value *io_value(const nnop_plan *p, int32_t i)
{
    int32_t v = i < p->g->n_inputs ? p->g->inputs[i] : p->g->outputs[i - p->g->n_inputs];
    return &p->g->values[v];
}

/* One workspace for every step: side steps run on the main stream here. */
static int64_t one_workspace(const struct nnop__cuda_plan *cp)
{
    return cp->workspace_bytes > cp->side_workspace_bytes ? cp->workspace_bytes
                                                          : cp->side_workspace_bytes;
}

/* Where each part of the block goes: the arena at 0, one workspace at *ws_off, each run
 * scratch at
 * run_off[k] (the buckets' one after the other from one base: a context runs one bucket at a
 * time), each staging buffer at stage_off[i] (range plans only). Either array or ws_off may
 * be NULL. Returns the whole size. */
static size_t layout(const nnop_plan *p, size_t *ws_off, size_t *run_off, size_t *stage_off)
{
    const struct nnop__cuda_plan *cp = p->cuda;
    size_t at = round_up((size_t)cp->arena_bytes), run_base, run_end;
    int32_t k, g, n_io = p->g->n_inputs + p->g->n_outputs;
    if (ws_off)
        *ws_off = at;
    at += round_up((size_t)one_workspace(cp));
    run_base = run_end = at;
    for (g = 0; g <= NNOP_MAX_BUCKETS; g++) { /* each group from the base */
        size_t in_group = run_base;
        for (k = 0; k < cp->n_run; k++)
            if (cp->run_group[k] == g) {
                if (run_off)
                    run_off[k] = in_group;
                in_group += round_up(cp->run_bytes[k]);
            }
        run_end = in_group > run_end ? in_group : run_end;
    }
    at = run_end;
    for (k = 0; p->batch_max && k < n_io; k++) {
        if (stage_off)
            stage_off[k] = at;
        at += round_up(nnop_tensor_bytes(&io_value(p, k)->desc));
    }
    return at;
}

size_t nnop__cuda_exec_scratch_bytes(const nnop_plan *p)
{
    return p->cuda ? layout(p, NULL, NULL, NULL) + EXEC_ALIGN : 0; /* room to align a caller's */
}

/* The context's half: the plan's context copied, with a handle, a stream and a cuBLASLt
 * handle (made by the first step copy that needs one) of its own; no prefetch,
 * deserialization handles or side stream. */
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

/* The plan's cuda half for bucket k: its fields, with a slot table, steps, graph keys and
 * output pointers of its own, the arena's slots and the run scratch moved into the block. */
static nnop_status make_bucket(struct nnop__cuda_exec *e, nnop_plan *p, int32_t k,
                               const size_t *run_off, size_t ws_off)
{
    const struct nnop__cuda_plan *src = p->cuda;
    struct nnop__cuda_plan *cp = &e->cps[k];
    size_t nio = (size_t)(p->g->n_inputs + p->g->n_outputs);
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
    cp->cmemo = NULL, cp->n_cmemo = cp->cap_cmemo = 0, cp->memo_on = 0;
    cp->n_buckets = 0;
    if (!cp->slot || !cp->steps || !cp->gkey || !cp->out_ptr)
        return NNOP_ERR_OUT_OF_MEMORY;
    memcpy(cp->slot, src->slot, (size_t)src->n_slots * sizeof *cp->slot);
    cp->arena = e->block;
    cp->workspace = e->block + ws_off;
    cp->workspace_bytes = one_workspace(src);
    cp->side_workspace = NULL;
    cp->side_workspace_bytes = 0;
    for (i = 0; i < src->n_slots; i++) { /* buffers in the arena, concat slices of them too */
        const char *s = (const char *)src->slot[i];
        if (arena && s >= arena && s < arena + src->arena_bytes)
            cp->slot[i] = e->block + (s - arena);
    }
    for (i = 0; i < src->n_run; i++)
        cp->slot[src->run_slot[i]] = e->block + run_off[i];
    return NNOP_OK;
}

/* Bucket k's steps copied, on the shadow plan (so that a cuBLASLt handle is made for the
 * context's own); a failure's message is moved to the plan's context, where
 * nnop_exec_create's caller reads it. */
static nnop_status copy_steps(struct nnop__cuda_exec *e, nnop_plan *p, int32_t k)
{
    const nnop__cuda_step *steps = nnop__bucket_steps(p->cuda, k);
    nnop_status st = NNOP_OK;
    int32_t i;
    e->plan.cuda = &e->cps[k];
    for (i = 0; i < p->n_parts && st == NNOP_OK; i++)
        st = nnop__step_run_copy(&e->plan, &steps[i], &e->cps[k].steps[i]);
    return st == NNOP_OK ? st : nnop__fail(p->ctx, st, "%s", nnop__error_body(&e->ctx));
}

static nnop_status take_block(struct nnop__cuda_exec *e, nnop_plan *p, void *scratch)
{
    e->block_bytes = layout(p, NULL, NULL, NULL);
    if (scratch) {
        uintptr_t a = ((uintptr_t)scratch + EXEC_ALIGN - 1) / EXEC_ALIGN * EXEC_ALIGN;
        e->block = (char *)a;
    } else if (e->block_bytes) {
        e->own_block = 1;
        if (nnop__dev_malloc(&p->ctx->alloc, (void **)&e->block, e->block_bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            e->block = NULL;
            return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY,
                              "out of device memory: %zu bytes asked for the execution "
                              "context's intermediates, workspace, scratch and staging",
                              e->block_bytes);
        }
    }
    /* the staging buffers' samples past a run's batch are read: zeros, not old memory */
    return p->batch_max && e->block_bytes
                   ? NNOP_CU(p->ctx,
                             cudaMemsetAsync(e->block, 0, e->block_bytes, p->ctx->cuda->stream))
                   : NNOP_OK;
}

/* Every bucket's slot table and its place in the block, the staging buffers' places. */
static nnop_status make_buckets(struct nnop__cuda_exec *e, nnop_plan *p)
{
    int32_t n_io = p->g->n_inputs + p->g->n_outputs, k;
    size_t ws_off = 0;
    size_t *run_off = (size_t *)nnop__calloc((size_t)p->cuda->n_run + 1, sizeof *run_off);
    size_t *stage_off = (size_t *)nnop__calloc((size_t)n_io + 1, sizeof *stage_off);
    nnop_status st = NNOP_OK;
    e->stage = (char **)nnop__calloc((size_t)n_io + 1, sizeof *e->stage);
    if (!run_off || !stage_off || !e->stage)
        st = NNOP_ERR_OUT_OF_MEMORY;
    if (st == NNOP_OK) {
        layout(p, &ws_off, run_off, stage_off);
        for (k = 0; p->batch_max && k < n_io; k++)
            e->stage[k] = e->block + stage_off[k];
        e->n_cps = nnop__bucket_count(p->cuda);
        for (k = 0; k < e->n_cps && st == NNOP_OK; k++) {
            e->batch[k] = p->cuda->n_buckets ? p->cuda->bucket_batch[k] : 0;
            st = make_bucket(e, p, k, run_off, ws_off);
        }
    }
    nnop__free(run_off);
    nnop__free(stage_off);
    return st == NNOP_OK ? st
                         : nnop__fail(p->ctx, st,
                                      "out of memory (host: an execution context's "
                                      "slot tables)");
}

static nnop_status exec_create(nnop_plan *p, void *scratch, struct nnop__cuda_exec *e)
{
    nnop_status st = take_block(e, p, scratch);
    int32_t k;
    if (st == NNOP_OK)
        st = make_context(e, p->ctx);
    if (st == NNOP_OK)
        st = make_buckets(e, p);
    e->plan = *p;
    e->plan.ctx = &e->ctx;
    e->plan.execs = NULL;
    e->plan.listed = 0;
    e->plan.live_prev = e->plan.live_next = NULL;
    for (k = 0; k < e->n_cps && st == NNOP_OK; k++)
        st = copy_steps(e, p, k);
    for (k = 0; k < p->g->n_outputs; k++)
        e->any_copies |= p->cuda->copy_slot[k] >= 0;
    if (st == NNOP_OK) /* the zeroed staging before any run on the context's own stream */
        st = NNOP_CU(p->ctx, cudaStreamSynchronize(p->ctx->cuda->stream));
    return st;
}

static void free_bucket(const nnop_plan *p, struct nnop__cuda_plan *cp)
{
    int32_t i;
    for (i = 0; i < cp->n_graphs; i++)
        (void)cudaGraphExecDestroy(cp->gexec[i]);
    for (i = 0; cp->steps && i < p->n_parts; i++)
        nnop__step_run_copy_free(&cp->steps[i]);
    nnop__free(cp->slot);
    nnop__free(cp->steps);
    nnop__free(cp->gkey);
    nnop__free(cp->out_ptr);
}

void nnop__cuda_exec_destroy(nnop_plan *p, struct nnop__cuda_exec *e)
{
    int prev;
    int32_t k;
    if (!e)
        return;
    (void)nnop__device_enter(p->ctx, &prev); /* the frees go on whatever it says */
    if (e->dev.stream)
        (void)cudaStreamSynchronize(e->dev.stream);
    for (k = 0; k < e->n_cps; k++)
        free_bucket(p, &e->cps[k]);
    if (e->dev.lt)
        (void)cublasLtDestroy(e->dev.lt);
    if (e->dev.handle)
        (void)cudnnDestroy(e->dev.handle);
    if (e->dev.own_stream)
        (void)cudaStreamDestroy(e->dev.own_stream);
    if (e->own_block && e->block)
        nnop__dev_free(&p->ctx->alloc, e->block);
    nnop__free(e->stage);
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

/* ------------------------------------------------------------------ runs */
/* The bucket a run of batch n takes: the smallest at least n (0: the built batch, the last). */
static int32_t bucket_of(const struct nnop__cuda_exec *e, int64_t n)
{
    int32_t k = 0;
    if (n == 0)
        return e->n_cps - 1;
    while (k + 1 < e->n_cps && e->batch[k] < n)
        k++;
    return k;
}

/* n samples of tensor i (an input, then output i - n_inputs) between dst and src. */
static nnop_status copy_samples(struct nnop__cuda_exec *e, int32_t i, int64_t n, void *dst,
                                const void *src)
{
    const nnop__value *v = io_value(&e->plan, i);
    const nnop_tensor_desc *d = &v->desc;
    size_t bytes = nnop_tensor_bytes(d);
    if (v->kind != NNOP_VALUE_CONSTANT) /* computed: dim 0 is the batch */
        bytes = bytes / (size_t)d->dims[0] * (size_t)n;
    return NNOP_CU(&e->ctx,
                   cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, e->dev.stream));
}

/* The run through the staging buffers: inputs in, bucket k's steps, outputs out. */
static nnop_status run_staged(struct nnop__cuda_exec *e, int64_t n, const void *const *in,
                              void *const *out)
{
    const nnop_plan *p = &e->plan;
    int32_t n_in = p->g->n_inputs, i;
    nnop_status st = NNOP_OK;
    for (i = 0; i < n_in && st == NNOP_OK; i++)
        st = copy_samples(e, i, n, e->stage[i], in[i]);
    if (st == NNOP_OK)
        st = nnop__cuda_plan_execute(&e->plan, (const void *const *)e->stage,
                                     (void *const *)(e->stage + n_in));
    for (i = 0; i < p->g->n_outputs && st == NNOP_OK; i++)
        st = copy_samples(e, n_in + i, n, out[i], e->stage[n_in + i]);
    return st;
}

/* Errors land in the context's own last error; the caller copies them to the exec. */
nnop_status nnop__cuda_exec_run(struct nnop__cuda_exec *e, int64_t batch, const void *const *in,
                                void *const *out, char *err, size_t len)
{
    int32_t k = bucket_of(e, batch);
    int64_t b = e->batch[k];
    nnop_status st;
    int prev;
    e->ctx.last_error[0] = '\0';
    e->plan.cuda = &e->cps[k];
    if (batch == 0 || (batch == b && (!e->any_copies || k == e->n_cps - 1))) {
        st = nnop__cuda_plan_execute(&e->plan, in, out);
    } else {
        st = nnop__device_enter(&e->ctx, &prev);
        if (st == NNOP_OK)
            st = run_staged(e, batch, in, out);
        nnop__device_leave(prev);
    }
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
    const struct nnop__cuda_plan *cp = &e->cps[0];
    m->intermediates = (size_t)cp->arena_bytes;
    m->workspace = (size_t)cp->workspace_bytes;
    m->other = e->block_bytes - round_up(m->intermediates) - round_up(m->workspace);
    m->device_total = e->block_bytes; /* its own block or its share of the caller's */
}
