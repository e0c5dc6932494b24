/* ops_common.h: small helpers shared by the op files: 4-D views and message formatting. */
#ifndef NNOP_OPS_COMMON_H
#define NNOP_OPS_COMMON_H

#include <stdio.h>

#include "internal.h"

/* A tensor of 1 to 4 dims seen as N, C, H, W (missing trailing dims are 1). */
typedef struct nnop__view4 {
    int64_t n, c, h, w;
    int64_t sn, sc, sh, sw;
} nnop__view4;

static inline nnop__view4 nnop__view(const nnop_tensor_desc *d)
{
    nnop__view4 v = {1, 1, 1, 1, 0, 0, 0, 0};
    int64_t *dims[4];
    int64_t *strides[4];
    int i;
    dims[0] = &v.n, dims[1] = &v.c, dims[2] = &v.h, dims[3] = &v.w;
    strides[0] = &v.sn, strides[1] = &v.sc, strides[2] = &v.sh, strides[3] = &v.sw;
    for (i = 0; i < d->ndim && i < 4; i++) {
        *dims[i] = d->dims[i];
        *strides[i] = d->strides[i];
    }
    return v;
}

static inline int64_t nnop__at(const nnop__view4 *v, int64_t n, int64_t c, int64_t h, int64_t w)
{
    return n * v->sn + c * v->sc + h * v->sh + w * v->sw;
}

#define NNOP_MSG(...) snprintf(msg, msg_len, __VA_ARGS__)

/* "NHWC" or "NCHW": the layout of a 4-D value, for messages. */
static inline const char *nnop__layout_name(const nnop_tensor_desc *d)
{
    return nnop__layout_of(d) == NNOP_NHWC ? "NHWC" : "NCHW";
}

/* pad, stride, dilation ({H, W}) and groups of a conv or transposed conv (ops/conv.c). */
nnop_status nnop__check_conv_geometry(const int64_t *pad, const int64_t *stride,
                                      const int64_t *dilation, int64_t groups, char *msg,
                                      size_t msg_len);
/* x and w of a conv or transposed conv: both 4-D, w packed in x's layout (ops/conv.c). */
nnop_status nnop__check_conv_operands(const nnop_tensor_desc *x, const nnop_tensor_desc *w,
                                      char *msg, size_t msg_len);

/* x has 2 to 4 dims: N, C[, H[, W]], channels in dim 1 (the ops that work per channel or on
 * a view4). NNOP_ERR_SHAPE and the message otherwise. */
static inline nnop_status nnop__check_nchw_rank(const nnop_tensor_desc *x, char *msg,
                                                size_t msg_len)
{
    if (x->ndim >= 2 && x->ndim <= 4)
        return NNOP_OK;
    NNOP_MSG("x must have 2 to 4 dims, N, C[, H[, W]] (has %d)", x->ndim);
    return NNOP_ERR_SHAPE;
}

#endif /* NNOP_OPS_COMMON_H */
