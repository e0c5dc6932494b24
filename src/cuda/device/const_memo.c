/* const_memo.c: derived constants made once per plan. A batch_range plan builds its steps once
 * per batch bucket (../compile.c), and each build derives device constants from the graph's
 * weights: batch-norm folded into them, packed or padded copies for own kernels, per-channel
 * float vectors. With the memo on (cp->memo_on), such a constant is looked up by what it is
 * made of (a tag, a number such as the producer node or the source slot, and the host bytes
 * it came from, compared in full) and its slot reused, so the weights sit in device memory
 * once whatever the number of buckets. Off (every other plan), nothing is kept. */
#include <stdlib.h>
#include <string.h>

#include "cuda/device/device.h"

struct nnop__const_memo {
    const char *tag; /* a string literal of the caller's */
    int64_t key;
    void *aux; /* a copy of the bytes it was made from (NULL when aux_len is 0) */
    size_t aux_len;
    int32_t slot;
};

int nnop__const_memo_find(nnop_plan *p, const char *tag, int64_t key, const void *aux,
                          size_t aux_len, int32_t *slot)
{
    const struct nnop__cuda_plan *cp = p->cuda;
    int32_t i;
    if (!cp->memo_on)
        return 0;
    for (i = 0; i < cp->n_cmemo; i++) {
        const struct nnop__const_memo *m = &cp->cmemo[i];
        if (m->key == key && m->aux_len == aux_len && strcmp(m->tag, tag) == 0 &&
            (aux_len == 0 || memcmp(m->aux, aux, aux_len) == 0)) {
            *slot = m->slot;
            return 1;
        }
    }
    return 0;
}

nnop_status nnop__const_memo_keep(nnop_plan *p, const char *tag, int64_t key, const void *aux,
                                  size_t aux_len, int32_t slot)
{
    struct nnop__cuda_plan *cp = p->cuda;
    struct nnop__const_memo *m;
    if (!cp->memo_on)
        return NNOP_OK;
    if (cp->n_cmemo == cp->cap_cmemo) {
        int32_t cap = cp->cap_cmemo ? 2 * cp->cap_cmemo : 64;
        m = (struct nnop__const_memo *)realloc(cp->cmemo, (size_t)cap * sizeof *m);
        if (!m)
            return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
        cp->cmemo = m;
        cp->cap_cmemo = cap;
    }
    m = &cp->cmemo[cp->n_cmemo];
    m->aux = aux_len ? malloc(aux_len) : NULL;
    if (aux_len && !m->aux)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    if (aux_len)
        memcpy(m->aux, aux, aux_len);
    m->tag = tag;
    m->key = key;
    m->aux_len = aux_len;
    m->slot = slot;
    cp->n_cmemo++;
    return NNOP_OK;
}

nnop_status nnop__slot_upload_const(nnop_plan *p, const char *tag, const void *host, size_t bytes,
                                    int32_t *slot)
{
    nnop_status st;
    if (nnop__const_memo_find(p, tag, (int64_t)bytes, host, bytes, slot))
        return NNOP_OK;
    st = nnop__slot_upload(p, host, bytes, slot);
    return st == NNOP_OK ? nnop__const_memo_keep(p, tag, (int64_t)bytes, host, bytes, *slot) : st;
}

void nnop__const_memo_free(struct nnop__cuda_plan *cp)
{
    int32_t i;
    for (i = 0; i < cp->n_cmemo; i++)
        free(cp->cmemo[i].aux);
    free(cp->cmemo);
    cp->cmemo = NULL;
    cp->n_cmemo = cp->cap_cmemo = 0;
}
