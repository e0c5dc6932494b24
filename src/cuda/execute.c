/* execute.c: running a compiled CUDA plan: binding the user's pointers into the slot table,
 * each step by its implementation (cuDNN steps through prebuilt variant packs: nothing is
 * allocated for a binding set already seen), the copies of outputs that are inputs or
 * constants, and the optional whole-plan CUDA graph (stream capture, captured again when
 * the user pointers change). */
#include <stdint.h>
#include <string.h>

#include "cuda/schedule/schedule.h"

static nnop_status copy_outputs(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    nnop_status st = NNOP_OK;
    int32_t i;
    for (i = 0; i < p->g->n_outputs && st == NNOP_OK; i++)
        if (cp->copy_slot[i] >= 0)
            st = NNOP_CU(p->ctx,
                         cudaMemcpyAsync(cp->out_ptr[i], cp->slot[cp->copy_slot[i]],
                                         nnop_tensor_bytes(&p->g->values[p->g->outputs[i]].desc),
                                         cudaMemcpyDeviceToDevice, p->ctx->cuda->stream));
    return st;
}

/* Step s queued on the side stream (schedule/): forked after what the main stream holds. */
static nnop_status run_on_side(nnop_plan *p, nnop__cuda_step *s)
{
    nnop_status st = nnop__device_fork(p->ctx), back;
    if (st != NNOP_OK)
        return st;
    st = s->impl->run(p, s);
    back = nnop__device_unfork(p->ctx);
    return st != NNOP_OK ? st : back;
}

static nnop_status run_step(nnop_plan *p, nnop__cuda_step *s, int *forked)
{
    nnop_status st = NNOP_OK;
    if (s->wait_side && *forked)
        st = nnop__device_join(p->ctx);
    if (st == NNOP_OK && s->side) {
        *forked = 1;
        return run_on_side(p, s);
    }
    return st == NNOP_OK ? s->impl->run(p, s) : st;
}

static nnop_status run_steps(nnop_plan *p)
{
    int32_t i;
    int forked = 0;
    nnop_status st = NNOP_OK;
    for (i = 0; i < p->n_parts && st == NNOP_OK; i++) {
        nnop__cuda_step *s = &p->cuda->steps[i];
        st = run_step(p, s, &forked);
        if (st != NNOP_OK) {
            char msg[NNOP_ERROR_LEN];
            nnop__copy_text(msg, sizeof msg, nnop__error_body(p->ctx));
            nnop__fail(p->ctx, st, "nnop_plan_execute: partition %d: %s", (int)i, msg);
        }
    }
    if (forked) { /* also after a failure: a capture must end with its streams joined */
        nnop_status j = nnop__device_join(p->ctx);
        st = st == NNOP_OK ? j : st;
    }
    return st == NNOP_OK ? copy_outputs(p) : st;
}

/* Run the plan eagerly (building any variant packs outside the capture), then capture it
 * into *exec (replacing what it held). NNOP_ERR_UNSUPPORTED when capture fails (the eager run
 * has happened). */
static nnop_status capture(nnop_plan *p, cudaGraphExec_t *exec)
{
    cudaStream_t s = p->ctx->cuda->stream;
    cudaGraph_t g = NULL;
    nnop_status st = run_steps(p);
    if (st != NNOP_OK)
        return st == NNOP_ERR_UNSUPPORTED ? NNOP_ERR_CUDNN : st;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        (void)cudaGetLastError();
        return NNOP_ERR_UNSUPPORTED;
    }
    st = run_steps(p);
    if (cudaStreamEndCapture(s, &g) != cudaSuccess || !g || st != NNOP_OK) {
        (void)cudaGetLastError();
        if (g)
            (void)cudaGraphDestroy(g);
        nnop__clear_error(p->ctx);
        return NNOP_ERR_UNSUPPORTED;
    }
    if (*exec)
        (void)cudaGraphExecDestroy(*exec);
    *exec = NULL;
    if (cudaGraphInstantiate(exec, g, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        *exec = NULL;
        st = NNOP_ERR_UNSUPPORTED;
    }
    (void)cudaGraphDestroy(g);
    return st;
}

static void *bound_output(const nnop_plan *p, int32_t i)
{
    const struct nnop__cuda_plan *cp = p->cuda;
    return cp->copy_slot[i] >= 0 ? cp->out_ptr[i] : cp->slot[p->g->outputs[i]];
}

/* The kept graph captured with the pointers bound now (written to key first), or -1. */
static int find_graph(const nnop_plan *p, void **key)
{
    const struct nnop__cuda_plan *cp = p->cuda;
    int32_t i, n = p->g->n_inputs + p->g->n_outputs;
    int k;
    for (i = 0; i < n; i++)
        key[i] = i < p->g->n_inputs ? cp->slot[p->g->inputs[i]]
                                    : bound_output(p, i - p->g->n_inputs);
    for (k = 0; k < cp->n_graphs; k++)
        if (memcmp(&cp->gkey[(size_t)k * (size_t)n], key, (size_t)n * sizeof *key) == 0)
            return k;
    return -1;
}

/* Replay the plan as a CUDA graph, one kept per pointer set (NNOP_GRAPH_SETS; a new set is
 * captured over the oldest). Capturing runs the plan eagerly once, then replays it (so the
 * first execute with a new set runs it twice). */
static nnop_status run_graph(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    size_t n = (size_t)(p->g->n_inputs + p->g->n_outputs);
    void **key = &cp->gkey[NNOP_GRAPH_SETS * n]; /* the last row: this call's pointers */
    int k = find_graph(p, key);
    if (k < 0) {
        nnop_status st;
        k = cp->n_graphs < NNOP_GRAPH_SETS ? cp->n_graphs : cp->next_graph;
        if (k == cp->n_graphs)
            cp->gexec[k] = NULL;
        st = capture(p, &cp->gexec[k]);
        if (st == NNOP_ERR_UNSUPPORTED)
            cp->graph_failed = 1; /* stay eager from now on; the eager run counted */
        if (st != NNOP_OK)
            return st == NNOP_ERR_UNSUPPORTED ? NNOP_OK : st;
        memcpy(&cp->gkey[(size_t)k * n], key, n * sizeof *key);
        if (k == cp->n_graphs)
            cp->n_graphs++;
        cp->next_graph = (k + 1) % NNOP_GRAPH_SETS;
    }
    return NNOP_CU(p->ctx, cudaGraphLaunch(cp->gexec[k], p->ctx->cuda->stream));
}

static nnop_status bind(nnop_plan *p, int32_t v, const void *ptr, const char *what, int i)
{
    if ((uintptr_t)ptr % NNOP_TENSOR_ALIGN)
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_plan_execute: %s[%d] ('%s') is not %d-byte aligned", what, i,
                          p->g->values[v].name, NNOP_TENSOR_ALIGN);
    p->cuda->slot[v] = (void *)(uintptr_t)ptr;
    return NNOP_OK;
}

/* NNOP_DEBUG_POISON=1: every byte of the intermediates' arena and the workspaces 0xFF (NaN in
 * every float dtype) before the steps run, so a step that reads what no step of this execute
 * wrote (padding, a partial tile, a stale intermediate) gives NaN instead of old values. */
static nnop_status poison_scratch(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    cudaStream_t s = p->ctx->cuda->stream;
    nnop_status st = NNOP_OK;
    if (cp->arena && cp->arena_bytes)
        st = NNOP_CU(p->ctx, cudaMemsetAsync(cp->arena, 0xFF, (size_t)cp->arena_bytes, s));
    if (st == NNOP_OK && cp->workspace && cp->workspace_bytes)
        st = NNOP_CU(p->ctx, cudaMemsetAsync(cp->workspace, 0xFF, (size_t)cp->workspace_bytes, s));
    if (st == NNOP_OK && cp->side_workspace && cp->side_workspace_bytes)
        st = NNOP_CU(p->ctx, cudaMemsetAsync(cp->side_workspace, 0xFF,
                                             (size_t)cp->side_workspace_bytes, s));
    return st;
}

static nnop_status plan_execute(nnop_plan *p, const void *const *in, void *const *out)
{
    int32_t i;
    nnop_status st = NNOP_OK;
    for (i = 0; i < p->g->n_inputs && st == NNOP_OK; i++)
        st = bind(p, p->g->inputs[i], in[i], "inputs", (int)i);
    for (i = 0; i < p->g->n_outputs && st == NNOP_OK; i++) {
        if (p->cuda->copy_slot[i] < 0) {
            st = bind(p, p->g->outputs[i], out[i], "outputs", (int)i);
        } else if ((uintptr_t)out[i] % NNOP_TENSOR_ALIGN) {
            st = nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                            "nnop_plan_execute: outputs[%d] is not %d-byte aligned", (int)i,
                            NNOP_TENSOR_ALIGN);
        } else {
            p->cuda->out_ptr[i] = out[i];
        }
    }
    if (st == NNOP_OK && p->ctx->debug_poison)
        st = poison_scratch(p);
    if (st != NNOP_OK)
        return st;
    if (p->opts.cuda_graph && !p->cuda->graph_failed)
        return run_graph(p);
    return run_steps(p);
}

nnop_status nnop__cuda_plan_execute(nnop_plan *p, const void *const *in, void *const *out)
{
    int prev;
    nnop_status st = nnop__device_enter(p->ctx, &prev);
    if (st == NNOP_OK)
        st = plan_execute(p, in, out);
    nnop__device_leave(prev);
    return st;
}
