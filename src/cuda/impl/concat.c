/* concat.c: the implementation-list entry for channel concat: one strided copy per input
 * (kernels/resize.cu's nnop__k_copy) into its channel slice of the output. Producers do not
 * yet write straight into the slices (the copy is one extra pass over the inputs). */
#include <stdio.h>
#include <stdlib.h>

#include "cuda/impl/impl.h"

struct nnop__concat_step {
    int n_in, dtype;
    int32_t x_slot[NNOP_MAX_CONCAT_INPUTS];
    nnop__kview xv[NNOP_MAX_CONCAT_INPUTS], yv[NNOP_MAX_CONCAT_INPUTS]; /* yv: the slice */
    int64_t y_offset[NNOP_MAX_CONCAT_INPUTS];                           /* in elements */
};

static int concat_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (p->g->nodes[t->first].op != NNOP_OP_CONCAT) {
        *why_not = "not a concat";
        return 0;
    }
    return 1;
}

static nnop_status concat_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_tensor_desc *y = &p->g->values[n->out].desc;
    nnop__concat_step *c = (nnop__concat_step *)nnop__calloc(1, sizeof *c);
    nnop__kview yv = nnop__kview_of(y);
    int64_t c0 = 0;
    nnop_status r = NNOP_OK;
    int i;
    if (!c)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    st->cat = c;
    st->kind = NNOP_STEP_CONCAT;
    st->y_slot = n->out;
    c->n_in = n->n_in;
    c->dtype = (int)y->dtype;
    for (i = 0; i < n->n_in && r == NNOP_OK; i++) {
        c->xv[i] = nnop__kview_of(&p->g->values[n->in[i]].desc);
        c->yv[i] = yv;
        c->yv[i].c = c->xv[i].c;
        c->y_offset[i] = c0 * yv.sc;
        c0 += c->xv[i].c;
        r = nnop__slot_value(p, n->in[i], &c->x_slot[i]);
    }
    if (r != NNOP_OK) { /* the compile ends: no destroy will see this step */
        nnop__free(c);
        st->cat = NULL;
    }
    return r;
}

static nnop_status concat_run(nnop_plan *p, nnop__cuda_step *st)
{
    const nnop__concat_step *c = st->cat;
    char *y = (char *)p->cuda->slot[st->y_slot];
    size_t elem = nnop_dtype_size((nnop_dtype)c->dtype);
    nnop_status r = NNOP_OK;
    int i;
    for (i = 0; i < c->n_in && r == NNOP_OK; i++)
        r = nnop__cuda_check(p->ctx,
                             nnop__k_copy(p->cuda->slot[c->x_slot[i]],
                                          y + (size_t)c->y_offset[i] * elem, c->dtype, &c->xv[i],
                                          &c->yv[i], p->ctx->cuda->stream),
                             "nnop__k_copy", __FILE__, __LINE__);
    return r;
}

static size_t concat_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[own kernel: concat, a copy per input (%d)]", st->cat->n_in);
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

static void concat_destroy(nnop__cuda_step *st)
{
    nnop__free(st->cat);
    st->cat = NULL;
}

const nnop__impl nnop__impl_concat = {"own concat kernel", concat_fits,     concat_build,
                                      concat_run,          concat_describe, concat_destroy};
