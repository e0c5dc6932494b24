/* compile.c: the CUDA plan's compile: each partition to a step by the implementation list
 * (impl/list.c: the first entry that fits and builds wins; one that takes a prefix splits
 * the partition, the reason kept for nnop_plan_describe; one may take the next partitions
 * whole, as the squeeze-excitation gate does), buffers for partition outputs
 * reused by liveness in one arena, one workspace, outputs that are inputs or constants
 * (copied after the steps at execute), the restart when a cached plan failed on a thread;
 * describe and destroy. The slot table and constants are the device stage's (slots.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/schedule/schedule.h"
#include "platform/platform.h"

#define ARENA_ALIGN 256

/* ------------------------------------------------------------------ partitions */
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
/* Partition i takes the next k partitions' nodes (the step built for it runs them too). */
static void absorb(nnop_plan *p, int32_t i, int32_t k, const char *who)
{
    nnop__partition *ps = p->parts;
    char last[NNOP_REASON_LEN];
    int32_t j;
    for (j = 1; j <= k; j++)
        ps[i].count += ps[i + j].count;
    memcpy(last, ps[i + k].reason, sizeof last);
    snprintf(ps[i].reason, sizeof ps[i].reason, "%s (%d partitions in one step)%s%.200s", who,
             (int)k + 1, last[0] ? "; then " : "", last);
    memmove(&ps[i + 1], &ps[i + k + 1], (size_t)(p->n_parts - i - k - 1) * sizeof *ps);
    p->n_parts -= k;
}

/* Partition i by the first entry of the implementation list that fits and builds. */
static nnop_status build_part(nnop_plan *p, int32_t i)
{
    nnop__cuda_step *step = &p->cuda->steps[i];
    char before[NNOP_REASON_LEN];
    nnop__impl_try t;
    nnop_status st = NNOP_ERR_UNSUPPORTED;
    int k, tried = 0;
    memset(&t, 0, sizeof t);
    t.part = i;
    t.first = p->parts[i].first;
    t.count = p->parts[i].count;
    t.refused = NNOP_ERR_UNSUPPORTED;
    before[0] = '\0';
    for (k = 0; nnop__impls[k]; k++) {
        const nnop__impl *e = nnop__impls[k];
        const char *why_not = "";
        /* options.disable_impl or NNOP_DISABLE_IMPL: skipped as if they did not fit (nnop.h) */
        if (nnop__impl_listed(p->ctx, 0, e->name) || !e->fits(p, &t, &why_not))
            continue;
        t.before = before;
        t.taken = t.count;
        t.who = NULL;
        t.absorbed = 0;
        t.why[0] = '\0';
        tried = 1;
        st = e->build(p, &t, step);
        if (st == NNOP_OK) {
            step->impl = e;
            break;
        }
        if (!NNOP_IMPL_REFUSED(st))
            return st; /* out of memory, a CUDA error: its own message says what */
        t.refused = st;
        snprintf(before, sizeof before, "%s", t.why);
    }
    if (!tried)
        return nnop__fail(p->ctx, NNOP_ERR_INTERNAL,
                          "CUDA backend: no implementation for partition %d", (int)i);
    if (st != NNOP_OK)
        return st; /* the last entry's message says why */
    if (t.absorbed > 0) {
        absorb(p, i, t.absorbed, step->impl->name);
        return NNOP_OK;
    }
    return t.taken < t.count ? split(p, i, t.taken, t.who, t.why) : NNOP_OK;
}

/* ------------------------------------------------------------------ batch buckets */
/* A batch_range plan (nnop.h) runs a batch n on the steps of the smallest bucket >= n: the
 * powers of two below the built batch B, then B. Each bucket's steps are built on the graph
 * with every computed value's dim 0 set to the bucket (the strides of packed tensors do not
 * depend on it) and must cut the graph into B's partitions, so that one buffer plan (B's,
 * whose buffers only shrink) serves every bucket; a bucket that would cut it otherwise, or
 * whose build is refused, is left out (its batches run on the next bucket up). Weights and
 * other derived constants are made once (device/const_memo.c). */
static void set_batch(nnop_plan *p, int64_t b)
{
    int32_t v;
    for (v = 0; v < p->g->n_values; v++)
        if (p->g->values[v].kind != NNOP_VALUE_CONSTANT)
            p->g->values[v].desc.dims[0] = b;
}

static void destroy_steps(nnop__cuda_step *steps, int32_t n)
{
    int32_t i;
    for (i = 0; steps && i < n; i++)
        if (steps[i].impl && steps[i].impl->destroy)
            steps[i].impl->destroy(&steps[i]);
    nnop__free(steps);
}

/* A malloc'd copy of n partitions (room for one more), NULL when memory is short. */
static nnop__partition *copy_parts(const nnop__partition *src, int32_t n)
{
    nnop__partition *c = (nnop__partition *)malloc(((size_t)n + 1) * sizeof *c);
    if (c)
        memcpy(c, src, (size_t)n * sizeof *c);
    return c;
}

static int same_parts(const nnop__partition *a, int32_t na, const nnop__partition *b, int32_t nb)
{
    int32_t i;
    if (na != nb)
        return 0;
    for (i = 0; i < na; i++)
        if (a[i].first != b[i].first || a[i].count != b[i].count)
            return 0;
    return 1;
}

/* Bucket b's steps on the partitions the compile started from (orig): NULL when left out
 * (with NNOP_OK), or a failure that ends the compile (out of memory, a CUDA error). */
static nnop_status build_bucket(nnop_plan *p, int64_t b, const nnop__partition *orig,
                                int32_t n_orig, nnop__cuda_step **out)
{
    struct nnop__cuda_plan *cp = p->cuda;
    nnop__partition *kept_parts = p->parts;
    nnop__cuda_step *kept_steps = cp->steps;
    int32_t kept_n = p->n_parts, kept_memo = cp->n_memo, i;
    nnop_status st = NNOP_OK;
    *out = NULL;
    p->parts = copy_parts(orig, n_orig);
    cp->steps = (nnop__cuda_step *)nnop__calloc((size_t)p->g->n_nodes + 1, sizeof *cp->steps);
    if (!p->parts || !cp->steps)
        st = nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    if (st == NNOP_OK) {
        p->n_parts = n_orig;
        set_batch(p, b);
        cp->building_bucket = cp->n_buckets + 1;
        for (i = 0; st == NNOP_OK && i < p->n_parts; i++)
            st = build_part(p, i);
        cp->building_bucket = 0;
        set_batch(p, p->batch_max);
    }
    if (st == NNOP_OK && same_parts(p->parts, p->n_parts, kept_parts, kept_n)) {
        *out = cp->steps;
    } else {
        destroy_steps(cp->steps, p->g->n_nodes + 1);
        cp->n_memo = kept_memo; /* no shared engine may point into what is gone */
        if (st != NNOP_OK && NNOP_IMPL_REFUSED(st)) {
            nnop__clear_error(p->ctx);
            st = NNOP_OK;
        }
    }
    free(p->parts);
    p->parts = kept_parts;
    p->n_parts = kept_n;
    cp->steps = kept_steps;
    return st;
}

static nnop_status build_buckets(nnop_plan *p, const nnop__partition *orig, int32_t n_orig)
{
    struct nnop__cuda_plan *cp = p->cuda;
    int64_t b;
    nnop_status st = NNOP_OK;
    int deser = cp->deser_threads;
    cp->deser_threads = 0; /* the buckets' plans are built in place */
    for (b = 1; b < p->batch_max && cp->n_buckets < NNOP_MAX_BUCKETS - 1 && st == NNOP_OK; b *= 2) {
        nnop__cuda_step *steps = NULL;
        st = build_bucket(p, b, orig, n_orig, &steps);
        if (steps) {
            cp->bucket_batch[cp->n_buckets] = b;
            cp->bucket_steps[cp->n_buckets++] = steps;
        }
    }
    cp->deser_threads = deser;
    if (st == NNOP_OK) {
        cp->bucket_batch[cp->n_buckets] = p->batch_max;
        cp->bucket_steps[cp->n_buckets++] = cp->steps;
    }
    return st;
}

/* ------------------------------------------------------------------ buffers */
typedef struct liveness {
    int32_t *last_use; /* per value: last partition reading it (a concat's output: or one of
                        * the values living in its slices) */
    int32_t *buf_of;   /* per value: buffer index or -1 */
    int64_t *buf_size; /* per buffer */
    int32_t *buf_busy; /* per buffer: partition after which it is free */
} liveness;

/* Value v lives in a slice of a concat's output (impl/concat.c), not in a buffer of its own. */
static int32_t home_of(const nnop_plan *p, int32_t v)
{
    return p->cuda->slice_in[v] >= 0 ? p->cuda->slice_in[v] : v;
}

/* A step on the side stream may still read its inputs and write its output until its
 * first reader has waited for it: nothing the main stream writes before then may reuse their
 * buffers. */
static void extend_side_uses(const nnop_plan *p, liveness *l, int32_t i)
{
    int32_t until = nnop__schedule_side_until(p, i), k, j, v;
    for (k = p->parts[i].first; k < p->parts[i].first + p->parts[i].count; k++) {
        for (j = 0; j < p->g->nodes[k].n_in; j++) {
            v = p->g->nodes[k].in[j];
            if (v != NNOP_NONE_ID && l->last_use[home_of(p, v)] < until)
                l->last_use[home_of(p, v)] = until;
        }
        v = home_of(p, p->g->nodes[k].out);
        if (l->last_use[v] < until)
            l->last_use[v] = until;
    }
}

static void mark_uses(const nnop_plan *p, liveness *l)
{
    int32_t i, k, j;
    for (i = 0; i < p->g->n_values; i++)
        l->last_use[i] = -1, l->buf_of[i] = -1;
    for (i = 0; i < p->n_parts; i++)
        for (k = p->parts[i].first; k < p->parts[i].first + p->parts[i].count; k++)
            for (j = 0; j < p->g->nodes[k].n_in; j++)
                if (p->g->nodes[k].in[j] != NNOP_NONE_ID)
                    l->last_use[home_of(p, p->g->nodes[k].in[j])] = i;
    for (i = 0; i < p->n_parts; i++)
        if (p->cuda->steps[i].side)
            extend_side_uses(p, l, i);
}

/* Greedy: each partition output that is not a graph output takes a buffer whose value is
 * dead before this partition (never one the partition reads), growing it as needed. A value
 * living in a concat's slice takes the concat output's buffer, from its first writer on. */
static int32_t assign(const nnop_plan *p, liveness *l)
{
    int32_t i, b, n_buf = 0;
    for (i = 0; i < p->n_parts; i++) {
        int32_t v = home_of(p, p->g->nodes[p->parts[i].first + p->parts[i].count - 1].out);
        int64_t bytes = (int64_t)nnop_tensor_bytes(&p->g->values[v].desc);
        if (p->g->values[v].output_index >= 0 || l->buf_of[v] >= 0)
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
        st = nnop__plan_alloc(p, (size_t)off[n_buf], "the intermediates arena", (void **)&arena);
    for (v = 0; st == NNOP_OK && v < p->g->n_values; v++)
        if (l->buf_of[v] >= 0)
            p->cuda->slot[v] = arena + off[l->buf_of[v]];
    for (v = 0; st == NNOP_OK && v < p->g->n_values; v++)
        if (p->cuda->slice_in[v] >= 0)
            p->cuda->slot[v] =
                    (char *)p->cuda->slot[p->cuda->slice_in[v]] +
                    p->cuda->slice_off[v] * (int64_t)nnop_dtype_size(p->g->values[v].desc.dtype);
    if (st == NNOP_OK)
        p->cuda->arena_bytes = off[n_buf], p->cuda->arena = arena;
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

/* One workspace for the main stream's steps and one for the side stream's. */
static nnop_status alloc_workspace(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    nnop_status st = NNOP_OK;
    int32_t i, k;
    /* every bucket's steps (the smaller ones run only in execution contexts, on this size) */
    for (k = 0; k < nnop__bucket_count(cp); k++)
        for (i = 0; i < p->n_parts; i++) {
            const nnop__cuda_step *s = &nnop__bucket_steps(cp, k)[i];
            int64_t need = s->dnn ? s->dnn->workspace : (int64_t)nnop__lt_step_workspace(s->lt);
            int64_t *have = s->side ? &cp->side_workspace_bytes : &cp->workspace_bytes;
            *have = need > *have ? need : *have;
        }
    if (cp->workspace_bytes)
        st = nnop__plan_alloc(p, (size_t)cp->workspace_bytes, "the workspace", &cp->workspace);
    if (st == NNOP_OK && cp->side_workspace_bytes)
        st = nnop__plan_alloc(p, (size_t)cp->side_workspace_bytes, "the side stream's workspace",
                              &cp->side_workspace);
    return st;
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
    cp->gkey = (void **)nnop__calloc(
            (size_t)(p->g->n_inputs + p->g->n_outputs) * (NNOP_GRAPH_SETS + 1), sizeof *cp->gkey);
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
    if (st == NNOP_OK)
        st = nnop__concat_plan_slices(p);
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
    nnop_status st = nnop__schedule_streams(p);
    if (st == NNOP_OK)
        st = assign_buffers(p);
    if (st == NNOP_OK)
        st = alloc_workspace(p);
    t1 = nnop__monotonic_ns();
    prof->buffers_ns = t1 - t0;
    if (st == NNOP_OK)
        st = nnop__device_wait_queued(p->ctx);
    prof->sync_ns = nnop__monotonic_ns() - t1;
    return st;
}

/* Steps that shared an identical step's plan before it existed take it now (called by
 * nnop__deser_resolve once the plans deserialized on threads are handed out). */
static void reshare(nnop_plan *p)
{
    int32_t i;
    for (i = 0; i < p->n_parts; i++)
        nnop__engine_reshare(p, p->cuda->steps[i].dnn);
}

static nnop_status build_once(nnop_plan *p, int deser_threads)
{
    nnop__partition *orig = NULL;
    int32_t n_orig = p->n_parts;
    nnop_status st = plan_init(p);
    if (st == NNOP_OK && p->batch_max) { /* the buckets start from the same partitions */
        orig = copy_parts(p->parts, n_orig);
        if (!orig)
            st = nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
        p->cuda->memo_on = 1;
    }
    if (st == NNOP_OK) {
        p->cuda->deser_threads = deser_threads;
        st = build_parts(p);
    }
    if (st == NNOP_OK)
        st = nnop__deser_resolve(p, reshare);
    if (st == NNOP_OK && orig)
        st = build_buckets(p, orig, n_orig);
    free(orig);
    if (st == NNOP_OK)
        st = finish(p);
    return st;
}

static nnop_status plan_build(nnop_plan *p)
{
    nnop_status st = build_once(p, nnop__deser_threads(p->ctx));
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

nnop_status nnop__cuda_plan_build(nnop_plan *p)
{
    int prev;
    nnop_status st = nnop__device_enter(p->ctx, &prev);
    if (st == NNOP_OK)
        st = plan_build(p);
    nnop__device_leave(prev);
    return st;
}

static void plan_destroy(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    int32_t i;
    if (p->ctx->cuda)
        (void)cudaStreamSynchronize(p->ctx->cuda->stream);
    for (i = 0; i < cp->n_graphs; i++)
        (void)cudaGraphExecDestroy(cp->gexec[i]);
    for (i = 0; i < cp->n_buckets; i++) /* the built batch's are steps itself */
        if (cp->bucket_steps[i] != cp->steps)
            destroy_steps(cp->bucket_steps[i], p->g->n_nodes + 1);
    destroy_steps(cp->steps, p->g->n_nodes + 1);
    nnop__deser_free(cp);
    for (i = 0; i < cp->n_owned; i++)
        nnop__dev_free(&p->ctx->alloc, cp->owned[i]);
    free(cp->owned);
    free(cp->memo_fp);
    free(cp->memo_step);
    nnop__free(cp->slot);
    nnop__free(cp->gkey);
    nnop__free(cp->copy_slot);
    nnop__free(cp->out_ptr);
    nnop__free(cp->slice_in);
    nnop__free(cp->slice_off);
    free(cp->run_slot);
    free(cp->run_bytes);
    free(cp->run_group);
    nnop__const_memo_free(cp);
    nnop__free(cp);
    p->cuda = NULL;
}

void nnop__cuda_plan_destroy(nnop_plan *p)
{
    int prev;
    if (!p->cuda)
        return;
    (void)nnop__device_enter(p->ctx, &prev); /* the frees go on whatever it says */
    plan_destroy(p);
    nnop__device_leave(prev);
}

/* ------------------------------------------------------------------ describe */
size_t nnop__cuda_plan_buckets(const nnop_plan *p, char *buf, size_t len)
{
    const struct nnop__cuda_plan *cp = p->cuda;
    nnop__text t;
    int32_t k;
    if (!cp || cp->n_buckets == 0)
        return 0;
    nnop__text_init(&t, buf, len);
    nnop__textf(&t, "engines for batches");
    for (k = 0; k < cp->n_buckets; k++)
        nnop__textf(&t, "%s %lld", k ? "," : "", (long long)cp->bucket_batch[k]);
    nnop__textf(&t, " (a batch between them runs on the next one up, through staging copies)");
    return t.used;
}

size_t nnop__cuda_partition_describe(const nnop_plan *p, int32_t i, char *buf, size_t len)
{
    const nnop__cuda_step *s = &p->cuda->steps[i];
    size_t n = s->impl ? s->impl->describe(p, s, buf, len) : 0;
    int32_t until;
    int k;
    if (!s->side)
        return n;
    until = nnop__schedule_side_until(p, i);
    if (until < p->n_parts)
        k = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0,
                     " [side stream, joined before partition %d]", (int)until);
    else
        k = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0,
                     " [side stream, joined at the end]");
    return n + (k > 0 ? (size_t)k : 0);
}

void nnop__cuda_partition_info(const nnop_plan *p, int32_t i, nnop_partition_info *out)
{
    const nnop__cuda_step *s = &p->cuda->steps[i];
    if (s->impl)
        out->impl = s->impl->name;
    if (s->dnn) {
        out->engine = (long long)s->dnn->engine;
        out->runtime_compiled = s->dnn->rtc;
        out->from_cache = s->dnn->cached != 0;
        out->workspace = (size_t)s->dnn->workspace;
    } else if (s->lt)
        out->workspace = nnop__lt_step_workspace(s->lt);
}

void nnop__cuda_plan_memory(const nnop_plan *p, nnop_plan_memory_info *m)
{
    const struct nnop__cuda_plan *cp = p->cuda;
    size_t known;
    m->weights = cp->weight_bytes;
    m->intermediates = (size_t)cp->arena_bytes;
    m->workspace = (size_t)(cp->workspace_bytes + cp->side_workspace_bytes);
    m->device_total = cp->owned_bytes;
    known = m->weights + m->intermediates + m->workspace;
    m->other = m->device_total > known ? m->device_total - known : 0;
}

/* The survey of every cuDNN step with an execution plan of its own (engine/survey.c). */
nnop_status nnop__cuda_plan_engines(nnop_plan *p, nnop_engine_info *out, int cap, int *count)
{
    int prev;
    nnop_status st = nnop__device_enter(p->ctx, &prev);
    int32_t i;
    *count = 0;
    for (i = 0; i < p->n_parts && st == NNOP_OK; i++) {
        nnop__dnn_step *d = p->cuda->steps[i].dnn;
        int n = 0, room = cap > *count ? cap - *count : 0;
        if (p->cuda->steps[i].kind != NNOP_STEP_DNN || !d || d->plan_shared)
            continue;
        st = nnop__engine_survey(p, i, d, room ? out + *count : NULL, room, &n);
        *count += n;
    }
    nnop__device_leave(prev);
    return st;
}
