/* concat.c: concatenation along dim 1 (channels), torch.cat(xs, 1), of 2 to
 * NNOP_MAX_CONCAT_INPUTS values of one rank (2 to 4 dims) and one layout. */
#include "ops_common.h"

/* The layouts whose packed offsets x's memory fits: bit 0 NCHW, bit 1 NHWC (both for a 4-D
 * value like N,1,H,W or N,C,1,1, whose memory is the same in either). */
static unsigned layouts_fitting(const nnop_tensor_desc *x)
{
    return (nnop__fits_layout(x, NNOP_NCHW) ? 1u : 0u) |
           (nnop__fits_layout(x, NNOP_NHWC) ? 2u : 0u);
}

static nnop_status concat_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *x0 = in[0];
    int64_t c = 0;
    unsigned common = 3u, fits;
    int i, d, own = -1; /* the first input whose memory fits one layout only */
    int declared = -1;  /* the first input with a layout of its own */
    for (i = 0; i < node->n_in; i++) {
        const nnop_tensor_desc *x = in[i];
        if (x->ndim < 2 || x->ndim > 4) {
            NNOP_MSG("input %d must have 2 to 4 dims, N, C[, H[, W]] (has %d)", i, x->ndim);
            return NNOP_ERR_SHAPE;
        }
        if (x->ndim != x0->ndim) {
            NNOP_MSG("input %d has %d dims but input 0 has %d", i, x->ndim, x0->ndim);
            return NNOP_ERR_SHAPE;
        }
        for (d = 0; d < x->ndim; d++)
            if (d != 1 && x->dims[d] != x0->dims[d]) {
                NNOP_MSG("input %d differs from input 0 in dim %d: %lld vs %lld (only dim 1, "
                         "the channels, may differ)",
                         i, d, (long long)x->dims[d], (long long)x0->dims[d]);
                return NNOP_ERR_SHAPE;
            }
        /* the inputs' memory must share a layout; a declared one that the memory does not
         * need (N,1,H,W said NHWC) does not count against the others */
        fits = x->ndim == 4 ? layouts_fitting(x) : 3u;
        if ((common & fits) == 0) {
            NNOP_MSG("input %d is %s but input %d is %s (one layout for all inputs)", i,
                     nnop__layout_name(x), own, nnop__layout_name(in[own]));
            return NNOP_ERR_SHAPE;
        }
        if (fits != 3u && own < 0)
            own = i;
        common &= fits;
        if (x->ndim == 4 && declared < 0 && !nnop__layout_ambiguous(x))
            declared = i;
        c += x->dims[1]; /* each <= 2^40 and at most 32 of them: no overflow */
    }
    *out = *x0;
    out->dims[1] = c;
    /* as the graph settles it: the first input with a layout of its own (the copy or slice
     * steps take any strides, so an N,1,H,W input of the other layout is fine) */
    nnop__set_packed_strides(out, declared >= 0 ? nnop__layout_of(in[declared]) : NNOP_NCHW);
    return NNOP_OK;
}

static void concat_reference(const nnop__node *node, const float *const *in,
                             const nnop_tensor_desc *const *in_desc, float *out,
                             const nnop_tensor_desc *out_desc)
{
    nnop__view4 yv = nnop__view(out_desc);
    int64_t c0 = 0, n, c, h, w;
    int i;
    for (i = 0; i < node->n_in; i++) {
        nnop__view4 xv = nnop__view(in_desc[i]);
        for (n = 0; n < xv.n; n++)
            for (c = 0; c < xv.c; c++)
                for (h = 0; h < xv.h; h++)
                    for (w = 0; w < xv.w; w++)
                        out[nnop__at(&yv, n, c0 + c, h, w)] = in[i][nnop__at(&xv, n, c, h, w)];
        c0 += xv.c;
    }
}

const nnop__op_def nnop__op_concat = {"concat", NNOP_ROLE_STANDALONE, concat_infer,
                                      concat_reference};
