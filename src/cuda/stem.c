/* stem.c: first-layer convolutions on 3-channel channels-last fp16/bf16 input (the ResNet
 * stem): sm_90's engines run the same conv with the channels zero-padded to 4 about 1.4x
 * faster (H200, cuDNN 9.14, 32x3x224x224 -> 64, 7x7/2: 89 us at C=3, 62 us at C=4; bench
 * --probe), so the weights are padded once at compile time and the input by an own kernel
 * before each execute. */
#include "cuda/cuda_plan.h"

#define STEM_C        3
#define STEM_PADDED_C 4

int nnop__stem_applies(const nnop_plan *p, int32_t first)
{
    const nnop__node *n = &p->g->nodes[first];
    const nnop_tensor_desc *x;
    if (n->op != NNOP_OP_CONV || n->attr.conv.groups != 1 ||
        p->g->values[n->in[1]].kind != NNOP_VALUE_CONSTANT)
        return 0;
    x = &p->g->values[n->in[0]].desc;
    return x->ndim == 4 && x->dims[1] == STEM_C && x->dtype != NNOP_F32 &&
           nnop__layout_of(x) == NNOP_NHWC;
}

nnop_status nnop__stem_pad(nnop_plan *p, nnop__chain *c, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[c->producer];
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *w = &p->g->values[n->in[1]].desc;
    int es = (int)nnop_dtype_size(x->dtype);
    int32_t xpad = -1, wpad = -1;
    nnop_status r;
    c->x_desc =
            nnop_tensor_4d(x->dtype, NNOP_NHWC, x->dims[0], STEM_PADDED_C, x->dims[2], x->dims[3]);
    c->w_desc =
            nnop_tensor_4d(w->dtype, NNOP_NHWC, w->dims[0], STEM_PADDED_C, w->dims[2], w->dims[3]);
    r = nnop__slot_alloc(p, nnop_tensor_bytes(&c->x_desc), &xpad);
    if (r == NNOP_OK)
        r = nnop__slot_alloc(p, nnop_tensor_bytes(&c->w_desc), &wpad);
    if (r == NNOP_OK) /* weights [K, R, S, 3] -> [K, R, S, 4], on the device */
        r = nnop__cuda_check(p->ctx,
                             nnop__k_pad_channels(p->cuda->slot[c->w_slot], p->cuda->slot[wpad], es,
                                                  w->dims[0] * w->dims[2] * w->dims[3], STEM_C,
                                                  STEM_PADDED_C, p->ctx->cuda->stream),
                             "nnop__k_pad_channels(weights)", __FILE__, __LINE__);
    if (r != NNOP_OK)
        return r;
    st->padded = 1;
    st->pad_src = c->x_slot;
    st->pad_dst = xpad;
    st->pad_pixels = x->dims[0] * x->dims[2] * x->dims[3];
    st->pad_cin = STEM_C;
    st->pad_cout = STEM_PADDED_C;
    st->pad_elem = es;
    c->x_slot = xpad;
    c->w_slot = wpad;
    c->xw_override = 1;
    return NNOP_OK;
}

nnop_status nnop__stem_run(nnop_plan *p, const nnop__cuda_step *st)
{
    return nnop__cuda_check(p->ctx,
                            nnop__k_pad_channels(p->cuda->slot[st->pad_src],
                                                 p->cuda->slot[st->pad_dst], st->pad_elem,
                                                 st->pad_pixels, st->pad_cin, st->pad_cout,
                                                 p->ctx->cuda->stream),
                            "nnop__k_pad_channels", __FILE__, __LINE__);
}
