/* executor.c: the CUDA plan: build (partition by partition, splitting fused partitions cuDNN
 * refuses), the slot table of device pointers, intermediate buffers reused by liveness, one
 * workspace, execute (prebuilt variant packs, nothing allocated for a binding set already
 * seen), optional whole-plan CUDA graph replay, describe and destroy. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_plan.h"
#include "platform/platform.h"

#define ARENA_ALIGN 256
/* Smallest constant block after the first; a request at least this big gets its own. */
#define CONST_BLOCK_MIN ((size_t)4 << 20)

/* ------------------------------------------------------------------ slots and memory */
nnop_status nnop__plan_alloc(nnop_plan *p, size_t bytes, void **out)
{
    struct nnop__cuda_plan *cp = p->cuda;
    nnop_status st;
    *out = NULL;
    if (cp->n_owned == cp->cap_owned) {
        int32_t cap = cp->cap_owned ? 2 * cp->cap_owned : 32;
        void **o = (void **)realloc(cp->owned, (size_t)cap * sizeof *o);
        if (!o)
            return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
        cp->owned = o;
        cp->cap_owned = cap;
    }
    st = NNOP_CU(p->ctx, cudaMalloc(out, bytes ? bytes : 1));
    if (st == NNOP_OK)
        cp->owned[cp->n_owned++] = *out;
    return st;
}

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* What the plan's slots will likely take: every constant once (folded weights replace the
 * originals) and a few per-channel float vectors (bias, scale) per node. An estimate: what
 * does not fit goes to further blocks. */
static size_t const_estimate(const nnop_plan *p)
{
    size_t total = 0;
    int32_t i;
    for (i = 0; i < p->g->n_values; i++)
        if (p->g->values[i].kind == NNOP_VALUE_CONSTANT)
            total += round_up(nnop_tensor_bytes(&p->g->values[i].desc), ARENA_ALIGN);
    for (i = 0; i < p->g->n_nodes; i++) {
        const nnop_tensor_desc *d = &p->g->values[p->g->nodes[i].out].desc;
        size_t channels = (size_t)(d->ndim > 1 ? d->dims[1] : d->dims[0]);
        total += 3 * round_up(channels * sizeof(float), ARENA_ALIGN);
    }
    return total > CONST_BLOCK_MIN ? total : CONST_BLOCK_MIN;
}

/* Device memory for a slot, carved 256-byte aligned from the plan's constant block: one
 * cudaMalloc for a network's weights instead of one per tensor (~300 for ResNet-50). Large
 * scratch (no data, e.g. a padded copy of an input) is not in the estimate: its own block. */
static nnop_status const_take(nnop_plan *p, size_t bytes, int scratch, void **dev)
{
    struct nnop__cuda_plan *cp = p->cuda;
    size_t need = round_up(bytes ? bytes : 1, ARENA_ALIGN), cap;
    void *block = NULL;
    nnop_status st;
    if (scratch && need >= CONST_BLOCK_MIN)
        return nnop__plan_alloc(p, need, dev);
    if (cp->const_cap - cp->const_used < need) {
        cap = cp->const_block ? CONST_BLOCK_MIN : const_estimate(p);
        if (need >= cap) /* keeps the current block for the small requests to come */
            return nnop__plan_alloc(p, need, dev);
        st = nnop__plan_alloc(p, cap, &block);
        if (st != NNOP_OK)
            return st;
        cp->const_block = (char *)block;
        cp->const_used = 0;
        cp->const_cap = cap;
    }
    *dev = cp->const_block + cp->const_used;
    cp->const_used += need;
    return NNOP_OK;
}

/* One copy per constant, straight from the caller's (pageable) memory, in order on the
 * stream. Staging all of them through one pinned buffer would save calls but is unlikely to
 * pay: pinning ~51 MB (ResNet-50 fp16) touches every page, and the host memcpy alone took
 * 8.6 ms on the build machine, before the first byte moves; the driver already stages
 * pageable copies through pinned buffers of its own. Kernels queued at compile time (weight
 * folding, stem padding) would also have to wait for a flush of the staged data. */
static nnop_status upload(nnop_plan *p, const void *host, size_t bytes, void **dev)
{
    nnop__compile_prof *prof = &p->cuda->prof;
    uint64_t t0 = nnop__monotonic_ns();
    nnop_status st = const_take(p, bytes, host == NULL, dev);
    if (st == NNOP_OK && bytes && host) {
        /* on the context's stream, so kernels queued there later (weight folding) see the
         * data; a pageable source is staged before the call returns, so it may be freed */
        st = NNOP_CU(p->ctx, cudaMemcpyAsync(*dev, host, bytes, cudaMemcpyHostToDevice,
                                             p->ctx->cuda->stream));
        prof->n_uploads++;
        prof->upload_bytes += (int64_t)bytes;
    }
    prof->upload_ns += nnop__monotonic_ns() - t0;
    return st;
}

nnop_status nnop__slot_upload(nnop_plan *p, const void *host, size_t bytes, int32_t *slot)
{
    struct nnop__cuda_plan *cp = p->cuda;
    if (cp->n_slots == cp->cap_slots) {
        int32_t cap = 2 * cp->cap_slots;
        void **s = (void **)realloc(cp->slot, (size_t)cap * sizeof *s);
        if (!s)
            return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
        memset(s + cp->cap_slots, 0, (size_t)(cap - cp->cap_slots) * sizeof *s);
        cp->slot = s;
        cp->cap_slots = cap;
    }
    *slot = cp->n_slots++;
    return upload(p, host, bytes, &cp->slot[*slot]);
}

nnop_status nnop__slot_alloc(nnop_plan *p, size_t bytes, int32_t *slot)
{
    return nnop__slot_upload(p, NULL, bytes, slot);
}

nnop_status nnop__slot_value(nnop_plan *p, int32_t v, int32_t *slot)
{
    const nnop__value *val = &p->g->values[v];
    *slot = v;
    if (val->kind != NNOP_VALUE_CONSTANT || p->cuda->slot[v])
        return NNOP_OK;
    return upload(p, val->data, nnop_tensor_bytes(&val->desc), &p->cuda->slot[v]);
}

/* ------------------------------------------------------------------ partitions */
static nnop_status try_dnn_once(nnop_plan *p, int32_t first, int32_t count, nnop__cuda_step *step,
                                char *why, size_t len, int pad)
{
    nnop__dnn_step *dnn = (nnop__dnn_step *)nnop__calloc(1, sizeof *dnn);
    nnop__chain c;
    nnop_status st;
    if (!dnn)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    why[0] = '\0';
    st = nnop__chain_build(p, first, count, 1, &c);
    if (st == NNOP_OK && pad)
        st = nnop__stem_pad(p, &c, step);
    if (st == NNOP_OK)
        st = nnop__lower_chain(p, &c, dnn);
    if (st == NNOP_OK)
        st = nnop__engine_select(p, dnn, why, len);
    else
        nnop__copy_text(why, len, p->ctx->last_error);
    step->folded = c.folded;
    nnop__chain_free(&c);
    if (st != NNOP_OK) {
        nnop__dnn_step_destroy(dnn);
        return st;
    }
    step->kind = NNOP_STEP_DNN;
    step->dnn = dnn;
    step->y_slot = p->g->nodes[first + count - 1].out;
    return NNOP_OK;
}

static int splittable(nnop_status st);

/* A C=3 first layer tries the zero-padded C=4 form first (stem.c), then the plain one. */
static nnop_status try_dnn(nnop_plan *p, int32_t first, int32_t count, nnop__cuda_step *step,
                           char *why, size_t len)
{
    nnop_status st;
    if (nnop__stem_applies(p, first)) {
        st = try_dnn_once(p, first, count, step, why, len, 1);
        if (st == NNOP_OK || !splittable(st))
            return st;
        step->padded = 0;
    }
    return try_dnn_once(p, first, count, step, why, len, 0);
}

/* Partition i keeps its first `cut` nodes; the rest becomes partition i + 1. */
static nnop_status split(nnop_plan *p, int32_t i, int32_t cut, const char *who, const char *why)
{
    nnop__partition *ps =
            (nnop__partition *)realloc(p->parts, (size_t)(p->n_parts + 1) * sizeof *ps);
    nnop__partition *head, *tail;
    if (!ps)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    p->parts = ps;
    memmove(&ps[i + 2], &ps[i + 1], (size_t)(p->n_parts - i - 1) * sizeof *ps);
    p->n_parts++;
    head = &ps[i];
    tail = &ps[i + 1];
    *tail = *head;
    tail->first = head->first + cut;
    tail->count = head->count - cut;
    head->count = cut;
    snprintf(head->reason, sizeof head->reason, "split, %s: %.200s", who, why);
    snprintf(tail->reason, sizeof tail->reason, "epilogue split off partition %d, own kernel",
             (int)i);
    return NNOP_OK;
}

static int splittable(nnop_status st)
{
    return st == NNOP_ERR_UNSUPPORTED || st == NNOP_ERR_CUDNN;
}

/* A linear partition: the longest prefix cuBLASLt's epilogues take (linear [+ bias]
 * [+ ReLU/GELU]), the rest on the own epilogue kernel; the own linear kernel when cuBLASLt
 * takes nothing. cuDNN's matmul engines are not used: on sm_90 they gave fp32 results off by
 * TF32 rounding with TF32 off, dropped a clamp's lower bound, and the runtime-compiled one
 * wrote wrong fp16 sums (issue 10's differential tester). */
static nnop_status build_linear(nnop_plan *p, int32_t i)
{
    int32_t first = p->parts[i].first, count = p->parts[i].count, cut;
    nnop_status st = NNOP_ERR_UNSUPPORTED;
    for (cut = count; cut >= 1 && st == NNOP_ERR_UNSUPPORTED; cut--) {
        st = nnop__step_build_blaslt(p, first, cut, &p->cuda->steps[i]);
        if (st == NNOP_ERR_UNSUPPORTED)
            nnop__clear_error(p->ctx);
        else if (st == NNOP_OK && cut < count)
            return split(p, i, cut, "cuBLASLt took the prefix",
                         "its epilogues take linear [+ bias] [+ ReLU/GELU]");
    }
    if (st != NNOP_ERR_UNSUPPORTED)
        return st;
    snprintf(p->parts[i].reason, sizeof p->parts[i].reason,
             "own linear kernel: cuBLASLt has no algorithm for it");
    return nnop__step_build_linear(p, first, count, &p->cuda->steps[i]);
}

/* A producer partition: the own stem kernel, the whole chain on cuDNN, else shorter
 * prefixes (the rest runs as an own epilogue kernel); linear layers go to build_linear. */
static nnop_status build_fused(nnop_plan *p, int32_t i)
{
    char why[NNOP_REASON_LEN], first_why[NNOP_REASON_LEN];
    int32_t first = p->parts[i].first, count = p->parts[i].count, cut;
    nnop_status st;
    first_why[0] = '\0';
    if (p->g->nodes[first].op == NNOP_OP_LINEAR)
        return build_linear(p, i);
    st = nnop__stem_build_kernel(p, first, count, &p->cuda->steps[i]);
    if (st != NNOP_ERR_UNSUPPORTED)
        return st;
    for (cut = count; cut >= 1; cut--) {
        st = try_dnn(p, first, cut, &p->cuda->steps[i], why, sizeof why);
        if (st == NNOP_OK || !splittable(st))
            break;
        if (cut == count)
            snprintf(first_why, sizeof first_why, "%s", why);
    }
    if (st != NNOP_OK && !splittable(st))
        return st; /* out of memory, a CUDA error: its own message says what */
    if (st != NNOP_OK) {
        char label[64];
        return nnop__fail(p->ctx, st, "nnop_graph_compile: no cuDNN engine for %s: %s",
                          nnop__node_label(p->g, first, label, sizeof label), first_why);
    }
    return cut < count ? split(p, i, cut, "cuDNN refused the longer chain", first_why) : NNOP_OK;
}

static nnop_status build_part(nnop_plan *p, int32_t i)
{
    const nnop__partition *part = &p->parts[i];
    nnop_fusion_role role = nnop__op(p->g->nodes[part->first].op)->role;
    if (role == NNOP_ROLE_PRODUCER)
        return build_fused(p, i);
    if (role == NNOP_ROLE_EPILOGUE)
        return nnop__step_build_epilogue(p, part->first, part->count, &p->cuda->steps[i]);
    return nnop__step_build_kernel(p, i, &p->cuda->steps[i]);
}

/* ------------------------------------------------------------------ buffers */
typedef struct liveness {
    int32_t *last_use; /* per value: last partition reading it */
    int32_t *buf_of;   /* per value: buffer index or -1 */
    int64_t *buf_size; /* per buffer */
    int32_t *buf_busy; /* per buffer: partition after which it is free */
} liveness;

static void mark_uses(const nnop_plan *p, liveness *l)
{
    int32_t i, k, j;
    for (i = 0; i < p->g->n_values; i++)
        l->last_use[i] = -1, l->buf_of[i] = -1;
    for (i = 0; i < p->n_parts; i++)
        for (k = p->parts[i].first; k < p->parts[i].first + p->parts[i].count; k++)
            for (j = 0; j < p->g->nodes[k].n_in; j++)
                if (p->g->nodes[k].in[j] != NNOP_NONE_ID)
                    l->last_use[p->g->nodes[k].in[j]] = i;
}

/* Greedy: each partition output that is not a graph output takes a buffer whose value is
 * dead before this partition (never one the partition reads), growing it as needed. */
static int32_t assign(const nnop_plan *p, liveness *l)
{
    int32_t i, b, n_buf = 0;
    for (i = 0; i < p->n_parts; i++) {
        int32_t v = p->g->nodes[p->parts[i].first + p->parts[i].count - 1].out;
        int64_t bytes = (int64_t)nnop_tensor_bytes(&p->g->values[v].desc);
        if (p->g->values[v].output_index >= 0)
            continue;
        for (b = 0; b < n_buf && l->buf_busy[b] >= i; b++)
            ;
        if (b == n_buf)
            l->buf_size[n_buf++] = 0;
        l->buf_size[b] = bytes > l->buf_size[b] ? bytes : l->buf_size[b];
        l->buf_busy[b] = l->last_use[v] > i ? l->last_use[v] : i;
        l->buf_of[v] = b;
    }
    return n_buf;
}

static nnop_status place(nnop_plan *p, liveness *l, int32_t n_buf)
{
    int64_t *off = (int64_t *)nnop__calloc((size_t)n_buf + 1, sizeof *off);
    char *arena = NULL;
    int32_t b, v;
    nnop_status st = off ? NNOP_OK : NNOP_ERR_OUT_OF_MEMORY;
    for (b = 0; st == NNOP_OK && b < n_buf; b++)
        off[b + 1] = off[b] + (l->buf_size[b] + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    if (st == NNOP_OK && n_buf)
        st = nnop__plan_alloc(p, (size_t)off[n_buf], (void **)&arena);
    for (v = 0; st == NNOP_OK && v < p->g->n_values; v++)
        if (l->buf_of[v] >= 0)
            p->cuda->slot[v] = arena + off[l->buf_of[v]];
    if (st == NNOP_OK)
        p->cuda->arena_bytes = off[n_buf];
    nnop__free(off);
    return st;
}

static nnop_status assign_buffers(nnop_plan *p)
{
    size_t nv = (size_t)p->g->n_values, np = (size_t)p->n_parts + 1;
    liveness l;
    nnop_status st = NNOP_ERR_OUT_OF_MEMORY;
    l.last_use = (int32_t *)nnop__calloc(nv, sizeof *l.last_use);
    l.buf_of = (int32_t *)nnop__calloc(nv, sizeof *l.buf_of);
    l.buf_size = (int64_t *)nnop__calloc(np, sizeof *l.buf_size);
    l.buf_busy = (int32_t *)nnop__calloc(np, sizeof *l.buf_busy);
    if (l.last_use && l.buf_of && l.buf_size && l.buf_busy) {
        mark_uses(p, &l);
        st = place(p, &l, assign(p, &l));
    }
    nnop__free(l.last_use);
    nnop__free(l.buf_of);
    nnop__free(l.buf_size);
    nnop__free(l.buf_busy);
    return st == NNOP_ERR_OUT_OF_MEMORY && p->ctx->last_error[0] == '\0'
                   ? nnop__fail(p->ctx, st, "nnop_graph_compile: out of memory")
                   : st;
}

static nnop_status alloc_workspace(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    int32_t i;
    for (i = 0; i < p->n_parts; i++) {
        int64_t need = cp->steps[i].dnn ? cp->steps[i].dnn->workspace
                                        : (int64_t)nnop__lt_step_workspace(cp->steps[i].lt);
        cp->workspace_bytes = need > cp->workspace_bytes ? need : cp->workspace_bytes;
    }
    return cp->workspace_bytes ? nnop__plan_alloc(p, (size_t)cp->workspace_bytes, &cp->workspace)
                               : NNOP_OK;
}

/* An output that is an input or a constant is copied into the caller's buffer after the
 * steps (as the CPU backend does); the constant is uploaded once here. */
static nnop_status plan_output_copies(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    nnop_status st = NNOP_OK;
    int32_t i;
    for (i = 0; i < p->g->n_outputs && st == NNOP_OK; i++) {
        int32_t v = p->g->outputs[i];
        cp->copy_slot[i] = -1;
        if (p->g->values[v].kind != NNOP_VALUE_NODE)
            st = nnop__slot_value(p, v, &cp->copy_slot[i]);
    }
    return st;
}

static nnop_status plan_init(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = (struct nnop__cuda_plan *)nnop__calloc(1, sizeof *cp);
    if (!cp)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    p->cuda = cp;
    cp->cap_slots = p->g->n_values + 16;
    cp->n_slots = p->g->n_values;
    cp->slot = (void **)nnop__calloc((size_t)cp->cap_slots, sizeof *cp->slot);
    cp->steps = (nnop__cuda_step *)nnop__calloc((size_t)p->g->n_nodes + 1, sizeof *cp->steps);
    cp->gkey =
            (void **)nnop__calloc((size_t)(p->g->n_inputs + p->g->n_outputs) + 1, sizeof *cp->gkey);
    cp->copy_slot = (int32_t *)nnop__calloc((size_t)p->g->n_outputs + 1, sizeof *cp->copy_slot);
    cp->out_ptr = (void **)nnop__calloc((size_t)p->g->n_outputs + 1, sizeof *cp->out_ptr);
    if (!cp->slot || !cp->steps || !cp->gkey || !cp->copy_slot || !cp->out_ptr)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    return NNOP_OK;
}

static nnop_status build_parts(nnop_plan *p)
{
    uint64_t t0 = nnop__monotonic_ns();
    int32_t i;
    nnop_status st = plan_output_copies(p);
    for (i = 0; st == NNOP_OK && i < p->n_parts; i++)
        st = build_part(p, i);
    p->cuda->prof.parts_ns = nnop__monotonic_ns() - t0;
    return st;
}

/* Buffers and workspace, then wait for the copies and kernels queued while building. */
static nnop_status finish(nnop_plan *p)
{
    nnop__compile_prof *prof = &p->cuda->prof;
    uint64_t t0 = nnop__monotonic_ns(), t1;
    nnop_status st = assign_buffers(p);
    if (st == NNOP_OK)
        st = alloc_workspace(p);
    t1 = nnop__monotonic_ns();
    prof->buffers_ns = t1 - t0;
    if (st == NNOP_OK)
        st = NNOP_CU(p->ctx, cudaDeviceSynchronize());
    prof->sync_ns = nnop__monotonic_ns() - t1;
    return st;
}

static nnop_status build_once(nnop_plan *p, int deser_threads)
{
    nnop_status st = plan_init(p);
    if (st == NNOP_OK) {
        p->cuda->deser_threads = deser_threads;
        st = build_parts(p);
    }
    if (st == NNOP_OK)
        st = nnop__deser_resolve(p);
    if (st == NNOP_OK)
        st = finish(p);
    return st;
}

/* Ops and activations of issue 15 that this backend does not run yet: refused up front with
 * NNOP_ERR_UNSUPPORTED naming the node, before anything is lowered or allocated. */
static nnop_status refuse_unimplemented(nnop_plan *p)
{
    static const char *const new_acts[] = {"hardswish", "hardsigmoid", "mish"};
    char label[64];
    int32_t i;
    for (i = 0; i < p->g->n_nodes; i++) {
        const nnop__node *n = &p->g->nodes[i];
        const char *what = NULL;
        if (n->op >= NNOP_OP_MUL)
            what = nnop__op(n->op)->name;
        else if (n->op == NNOP_OP_ACT && n->attr.act.kind >= NNOP_ACT_HARDSWISH &&
                 n->attr.act.kind <= NNOP_ACT_MISH)
            what = new_acts[n->attr.act.kind - NNOP_ACT_HARDSWISH];
        if (what)
            return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED,
                              "nnop_graph_compile: %s: %s has no CUDA implementation yet; use the "
                              "CPU backend",
                              nnop__node_label(p->g, i, label, sizeof label), what);
    }
    return NNOP_OK;
}

nnop_status nnop__cuda_plan_build(nnop_plan *p)
{
    nnop_status st = refuse_unimplemented(p);
    int threads;
    if (st != NNOP_OK)
        return st;
    threads = nnop__deser_threads(p->ctx);
    st = build_once(p, threads);
    if (st != NNOP_OK && p->cuda && p->cuda->deser_failed) {
        /* a cached plan failed on a thread: build again, deserializing in place, so that
         * the usual fallbacks (rebuild from the engine choice, search, split) apply */
        nnop__cuda_plan_destroy(p);
        nnop__clear_error(p->ctx);
        st = build_once(p, 0);
        if (p->cuda)
            p->cuda->prof.restarted = 1;
    }
    return st;
}

void nnop__cuda_plan_destroy(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    int32_t i;
    if (!cp)
        return;
    if (p->ctx->cuda)
        (void)cudaStreamSynchronize(p->ctx->cuda->stream);
    if (cp->gexec)
        (void)cudaGraphExecDestroy(cp->gexec);
    for (i = 0; cp->steps && i <= p->g->n_nodes; i++) {
        nnop__dnn_step_destroy(cp->steps[i].dnn);
        nnop__lt_step_destroy(cp->steps[i].lt);
    }
    nnop__deser_free(cp);
    for (i = 0; i < cp->n_owned; i++)
        (void)cudaFree(cp->owned[i]);
    free(cp->owned);
    free(cp->memo_fp);
    free(cp->memo_step);
    nnop__free(cp->slot);
    nnop__free(cp->steps);
    nnop__free(cp->gkey);
    nnop__free(cp->copy_slot);
    nnop__free(cp->out_ptr);
    nnop__free(cp);
    p->cuda = NULL;
}

/* ------------------------------------------------------------------ execute */
static nnop_status run_dnn(nnop_plan *p, nnop__dnn_step *s)
{
    struct nnop__cuda_plan *cp = p->cuda;
    size_t n = (size_t)s->n_io * sizeof(void *);
    int j, k;
    for (j = 0; j < s->n_io; j++)
        s->ptrs[j] = cp->slot[s->slots[j]];
    for (k = 0; k < s->n_vpack && memcmp(s->vptrs[k], s->ptrs, n) != 0; k++)
        ;
    if (k == s->n_vpack) { /* a binding set not seen before: the one place execute builds */
        nnop_status st;
        k = s->n_vpack < NNOP_VPACK_CACHE ? s->n_vpack++ : s->next_vpack;
        s->next_vpack = (k + 1) % NNOP_VPACK_CACHE;
        if (s->vpack[k])
            (void)cudnnBackendDestroyDescriptor(s->vpack[k]);
        s->vpack[k] = NULL;
        memcpy(s->vptrs[k], s->ptrs, n);
        st = nnop__dnn_make_vpack(p->ctx, s, s->ptrs, cp->workspace, &s->vpack[k]);
        if (st != NNOP_OK) {
            memset(s->vptrs[k], 0, n);
            return st;
        }
    }
    return NNOP_DNN(p->ctx, cudnnBackendExecute(p->ctx->cuda->handle, s->plan, s->vpack[k]));
}

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

static nnop_status run_steps(nnop_plan *p)
{
    int32_t i;
    nnop_status st = NNOP_OK;
    for (i = 0; i < p->n_parts && st == NNOP_OK; i++) {
        nnop__cuda_step *s = &p->cuda->steps[i];
        if (s->padded)
            st = nnop__stem_run(p, s);
        if (st == NNOP_OK)
            st = s->kind == NNOP_STEP_DNN ? run_dnn(p, s->dnn) : nnop__step_run_kernel(p, s);
        if (st != NNOP_OK) {
            char msg[NNOP_ERROR_LEN];
            nnop__copy_text(msg, sizeof msg, p->ctx->last_error);
            nnop__fail(p->ctx, st, "nnop_plan_execute: partition %d: %s", (int)i, msg);
        }
    }
    return st == NNOP_OK ? copy_outputs(p) : st;
}

/* Run the plan eagerly (building any variant packs outside the capture), then capture it.
 * NNOP_ERR_UNSUPPORTED when capture fails (the eager run has happened). */
static nnop_status capture(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
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
    if (cp->gexec)
        (void)cudaGraphExecDestroy(cp->gexec);
    cp->gexec = NULL;
    if (cudaGraphInstantiate(&cp->gexec, g, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        cp->gexec = NULL;
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

/* Replay the plan as one CUDA graph, captured again when the user pointers change. The
 * first execute runs the plan eagerly once, then replays it (so it runs twice). */
static nnop_status run_graph(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    int32_t i, n = p->g->n_inputs + p->g->n_outputs, same = cp->gexec != NULL;
    for (i = 0; i < n; i++) {
        void *v = i < p->g->n_inputs ? cp->slot[p->g->inputs[i]]
                                     : bound_output(p, i - p->g->n_inputs);
        same &= cp->gkey[i] == v;
        cp->gkey[i] = v;
    }
    if (!same) {
        nnop_status st = capture(p);
        if (st == NNOP_ERR_UNSUPPORTED)
            cp->graph_failed = 1; /* stay eager from now on; the eager run counted */
        if (st != NNOP_OK)
            return st == NNOP_ERR_UNSUPPORTED ? NNOP_OK : st;
    }
    return NNOP_CU(p->ctx, cudaGraphLaunch(cp->gexec, p->ctx->cuda->stream));
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

nnop_status nnop__cuda_plan_execute(nnop_plan *p, const void *const *in, void *const *out)
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
    if (st != NNOP_OK)
        return st;
    if (p->opts.cuda_graph && !p->cuda->graph_failed)
        return run_graph(p);
    return run_steps(p);
}

/* ------------------------------------------------------------------ describe */
static const char *kernel_name(nnop__step_kind k)
{
    static const char *const names[] = {"cudnn",           "epilogue",  "pool",
                                        "global_avg_pool", "softmax",   "flatten",
                                        "linear",          "stem conv", "cublasLt"};
    return names[k];
}

static const char *tuned(const nnop__dnn_step *d)
{
    static NNOP_THREAD_LOCAL char buf[48];
    if (!d->tuned)
        return "";
    snprintf(buf, sizeof buf, ", autotuned %.1f us", (double)d->time_us);
    return buf;
}

size_t nnop__cuda_partition_describe(const nnop_plan *p, int32_t i, char *buf, size_t len)
{
    const nnop__cuda_step *s = &p->cuda->steps[i];
    int n;
    if (s->kind == NNOP_STEP_BLASLT) {
        size_t m = nnop__lt_step_describe(s->lt, buf, len);
        n = m < len ? (int)m +
                              snprintf(buf + m, len - m, "%s]", s->folded ? ", bn/bias folded" : "")
                    : (int)m;
    } else if (s->kind != NNOP_STEP_DNN)
        n = snprintf(buf, len, "[own kernel: %s%s]", kernel_name(s->kind),
                     s->folded ? ", bn/bias folded" : "");
    else
        n = snprintf(buf, len, "[cudnn eng%lld %s, workspace %lld B%s%s%s%s]",
                     (long long)s->dnn->engine, s->dnn->rtc ? "runtime-compiled" : "precompiled",
                     (long long)s->dnn->workspace, tuned(s->dnn),
                     s->dnn->rtc_unsafe ? ", runtime-compiled engines excluded for this shape" : "",
                     s->dnn->cached == 3   ? ", plan from cache, prefetched"
                     : s->dnn->cached == 2 ? ", plan from cache"
                     : s->dnn->cached == 1 ? ", engine from cache"
                                           : "",
                     s->folded ? ", bn/bias folded" : "");
    if (n > 0 && s->padded && (size_t)n < len)
        n += snprintf(buf + n - 1, len - (size_t)n + 1, ", input C %d->%d zero-padded]", s->pad_cin,
                      s->pad_cout) -
             1;
    return n > 0 ? (size_t)n : 0;
}
