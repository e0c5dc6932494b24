/* slots.c: the compiled plan's device state: the slot table of device pointers (values
 * first, then extras such as folded weights and per-channel constants), constants uploaded
 * on first use and carved from one device block, and the other blocks the plan owns. The
 * stages above (lowering, implementations, the compile) receive it through nnop_plan. */
#include <stdlib.h>
#include <string.h>

#include "cuda/device/device.h"
#include "platform/platform.h"

#define ARENA_ALIGN 256
/* Smallest constant block after the first; a request at least this big gets its own. */
#define CONST_BLOCK_MIN ((size_t)4 << 20)

nnop_status nnop__plan_alloc(nnop_plan *p, size_t bytes, const char *what, void **out)
{
    struct nnop__cuda_plan *cp = p->cuda;
    cudaError_t e;
    *out = NULL;
    if (cp->n_owned == cp->cap_owned) {
        int32_t cap = cp->cap_owned ? 2 * cp->cap_owned : 32;
        void **o = (void **)realloc(cp->owned, (size_t)cap * sizeof *o);
        if (!o)
            return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY,
                              "nnop_graph_compile: out of memory (host: the table of %d device "
                              "blocks)",
                              (int)cap);
        cp->owned = o;
        cp->cap_owned = cap;
    }
    e = nnop__dev_malloc(&p->ctx->alloc, out, bytes);
    if (e != cudaSuccess) {
        *out = NULL;
        (void)cudaGetLastError(); /* not sticky: later calls start clean */
        /* what was asked, what for and what the plan held: an engine budgeting memory needs
         * the number, not just the failure */
        return nnop__fail(
                p->ctx, e == cudaErrorMemoryAllocation ? NNOP_ERR_OUT_OF_MEMORY : NNOP_ERR_CUDA,
                "nnop_graph_compile: %zu bytes of device memory for %s could not be "
                "had (%s%s: %s); the plan held %zu bytes of device memory in %d blocks "
                "before it",
                bytes, what,
                p->ctx->alloc.device_alloc ? "the context's allocator: " : "cudaMalloc: ",
                cudaGetErrorName(e), cudaGetErrorString(e), cp->owned_bytes, (int)cp->n_owned);
    }
    cp->owned[cp->n_owned++] = *out;
    cp->owned_bytes += bytes;
    return NNOP_OK;
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
        return nnop__plan_alloc(p, need, "a scratch copy", dev);
    if (cp->const_cap - cp->const_used < need) {
        cap = cp->const_block ? CONST_BLOCK_MIN : const_estimate(p);
        if (need >= cap) { /* keeps the current block for the small requests to come */
            st = nnop__plan_alloc(p, need, scratch ? "scratch" : "a constant", dev);
            cp->weight_bytes += st == NNOP_OK && !scratch ? need : 0;
            return st;
        }
        st = nnop__plan_alloc(p, cap, "a block of constants", &block);
        if (st != NNOP_OK)
            return st;
        cp->weight_bytes += cap;
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

/* A new entry of the slot table, NULL until set. */
static nnop_status new_slot(nnop_plan *p, int32_t *slot)
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
    return NNOP_OK;
}

nnop_status nnop__slot_upload(nnop_plan *p, const void *host, size_t bytes, int32_t *slot)
{
    nnop_status st = new_slot(p, slot);
    return st == NNOP_OK ? upload(p, host, bytes, &p->cuda->slot[*slot]) : st;
}

nnop_status nnop__slot_alloc(nnop_plan *p, size_t bytes, int32_t *slot)
{
    return nnop__slot_upload(p, NULL, bytes, slot);
}

nnop_status nnop__slot_run_scratch(nnop_plan *p, size_t bytes, int32_t *slot)
{
    struct nnop__cuda_plan *cp = p->cuda;
    nnop_status st;
    if (cp->n_run == cp->cap_run) {
        int32_t cap = cp->cap_run ? 2 * cp->cap_run : 8;
        int32_t *s = (int32_t *)realloc(cp->run_slot, (size_t)cap * sizeof *s);
        size_t *b = s ? (size_t *)realloc(cp->run_bytes, (size_t)cap * sizeof *b) : NULL;
        int32_t *g = b ? (int32_t *)realloc(cp->run_group, (size_t)cap * sizeof *g) : NULL;
        if (s)
            cp->run_slot = s;
        if (b)
            cp->run_bytes = b;
        if (!g)
            return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
        cp->run_group = g;
        cp->cap_run = cap;
    }
    /* a bucket's steps run only in execution contexts, which place their scratch: the plan
     * itself keeps a slot without memory */
    st = cp->building_bucket ? new_slot(p, slot) : nnop__slot_alloc(p, bytes, slot);
    if (st == NNOP_OK) {
        cp->run_slot[cp->n_run] = *slot;
        cp->run_bytes[cp->n_run] = bytes;
        cp->run_group[cp->n_run++] = cp->building_bucket;
    }
    return st;
}

nnop_status nnop__slot_value(nnop_plan *p, int32_t v, int32_t *slot)
{
    const nnop__value *val = &p->g->values[v];
    *slot = v;
    if (val->kind != NNOP_VALUE_CONSTANT || p->cuda->slot[v])
        return NNOP_OK;
    return upload(p, val->data, nnop_tensor_bytes(&val->desc), &p->cuda->slot[v]);
}
