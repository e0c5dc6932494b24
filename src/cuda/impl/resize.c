/* resize.c: the implementation-list entry for nearest and bilinear resize: the own kernel
 * (kernels/resize.cu) with the CPU reference's coordinate scales (nnop__resize_coord_scale:
 * PyTorch's, 1/scale when a scale was given, else in/out), so both pick the same pixels. */
#include <stdio.h>

#include "cuda/impl/impl.h"

static int resize_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (p->g->nodes[t->first].op != NNOP_OP_RESIZE) {
        *why_not = "not a resize";
        return 0;
    }
    return 1;
}

static nnop_status resize_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_resize_params *r = &n->attr.resize;
    nnop__resize_kparams *k = &st->rs;
    int i;
    st->kind = NNOP_STEP_RESIZE;
    st->y_slot = n->out;
    k->xv = nnop__kview_of(&p->g->values[n->in[0]].desc);
    k->yv = nnop__kview_of(&p->g->values[n->out].desc);
    k->dtype = (int)p->g->values[n->in[0]].desc.dtype;
    k->bilinear = r->mode == NNOP_RESIZE_BILINEAR;
    k->align_corners = r->align_corners != 0;
    for (i = 0; i < 2; i++)
        k->scale[i] = nnop__resize_coord_scale(r, i, i ? k->xv.w : k->xv.h, i ? k->yv.w : k->yv.h);
    return nnop__slot_value(p, n->in[0], &st->x_slot);
}

static nnop_status resize_run(nnop_plan *p, nnop__cuda_step *st)
{
    st->rs.x = p->cuda->slot[st->x_slot];
    st->rs.y = p->cuda->slot[st->y_slot];
    return nnop__cuda_check(p->ctx, nnop__k_resize(&st->rs, p->ctx->cuda->stream), "nnop__k_resize",
                            __FILE__, __LINE__);
}

static size_t resize_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[own kernel: resize, %s]",
                     !st->rs.bilinear       ? "nearest"
                     : st->rs.align_corners ? "bilinear, corners aligned"
                                            : "bilinear");
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

const nnop__impl nnop__impl_resize = {"own resize kernel", resize_fits,     resize_build,
                                      resize_run,          resize_describe, NULL};
