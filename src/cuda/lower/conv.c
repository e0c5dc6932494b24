/* conv.c: the producers: 2-D convolution forward, the transposed convolution as cuDNN's
 * data-gradient convolution, and the linear layer as a matmul. */
#include "cuda/lower/lower_parts.h"

/* pad, stride and dilation as the convolution descriptor takes them (a transposed conv's are
 * those of the forward conv it is the data gradient of). */
static nnop_status conv_desc(nnop_context *ctx, nnop__dnn_step *s, const int64_t *cpad,
                             const int64_t *cstride, const int64_t *cdil,
                             cudnnBackendDescriptor_t *out)
{
    int64_t sd = 2, pad[2], stride[2], dil[2];
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const nnop__attr attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp),
            NNOP_ATTR(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode),
            NNOP_ATTR(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &sd),
            NNOP_ATTR(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad),
            NNOP_ATTR(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad),
            NNOP_ATTR(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil),
            NNOP_ATTR(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride)};
    nnop_status st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, out);
    int i;
    for (i = 0; i < 2; i++) {
        pad[i] = cpad[i];
        stride[i] = cstride[i];
        dil[i] = cdil[i];
    }
    nnop__fp_add_str(&s->fpb, "conv");
    nnop__fp_add_bytes(&s->fpb, pad, sizeof pad);
    nnop__fp_add_bytes(&s->fpb, stride, sizeof stride);
    nnop__fp_add_bytes(&s->fpb, dil, sizeof dil);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, *out, attrs, NNOP_COUNT(attrs), "convolution");
    return st;
}

nnop_status nnop__lower_conv(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                             cudnnBackendDescriptor_t y)
{
    nnop_context *ctx = p->ctx;
    const nnop__node *n = &p->g->nodes[c->producer];
    cudnnBackendDescriptor_t x = NULL, w = NULL, cd = NULL, op = NULL;
    float alpha = 1.0f, beta = 0.0f;
    const nnop__attr attrs[] = {
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, &x),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, &w),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, &y),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, &cd),
            NNOP_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha),
            NNOP_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta)};
    const nnop_tensor_desc *xd = c->xw_override ? &c->x_desc : &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *wd = c->xw_override ? &c->w_desc : &p->g->values[n->in[1]].desc;
    nnop_status st =
            nnop__lower_tensor(ctx, s, xd->ndim, xd->dims, xd->strides, xd->dtype, c->x_slot, &x);
    if (st == NNOP_OK)
        st = nnop__lower_filter(ctx, s, wd, c->w_slot, &w);
    if (st == NNOP_OK)
        st = conv_desc(ctx, s, n->attr.conv.pad, n->attr.conv.stride, n->attr.conv.dilation, &cd);
    if (st == NNOP_OK)
        st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, op, attrs, NNOP_COUNT(attrs), "convolution forward operation");
    return st == NNOP_OK ? nnop__dnn_add_op(ctx, s, op) : st;
}

/* y = conv_transpose(x, w) is the data gradient dx of the forward conv with the same pad,
 * stride and dilation: dy is x, dx is y, and the weights [C_in, C_out/groups, R, S] are that
 * conv's [K, C/groups, R, S] as they are (cuDNN takes the groups from the channel counts). */
nnop_status nnop__lower_deconv(nnop_plan *p, int32_t node, int32_t x_slot, int32_t w_slot,
                               nnop__dnn_step *s)
{
    nnop_context *ctx = p->ctx;
    const nnop__node *n = &p->g->nodes[node];
    const nnop_conv_transpose_params *cp = &n->attr.deconv;
    const nnop_tensor_desc *xd = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *wd = &p->g->values[n->in[1]].desc;
    const nnop_tensor_desc *yd = &p->g->values[n->out].desc;
    cudnnBackendDescriptor_t dy = NULL, w = NULL, dx = NULL, cd = NULL, op = NULL;
    float alpha = 1.0f, beta = 0.0f;
    const nnop__attr attrs[] = {
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, &dx),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, &w),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, &dy),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, &cd),
            NNOP_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha),
            NNOP_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta)};
    nnop_status st;
    nnop__fp_init(&s->fpb);
    nnop__fp_add_str(&s->fpb, "nnop-dnn/dgrad/v1");
    s->is_conv = 1;
    s->fp32 = yd->dtype == NNOP_F32;
    st = nnop__lower_tensor(ctx, s, yd->ndim, yd->dims, yd->strides, yd->dtype, n->out, &dx);
    if (st == NNOP_OK)
        st = nnop__lower_tensor(ctx, s, xd->ndim, xd->dims, xd->strides, xd->dtype, x_slot, &dy);
    if (st == NNOP_OK)
        st = nnop__lower_filter(ctx, s, wd, w_slot, &w);
    if (st == NNOP_OK)
        st = conv_desc(ctx, s, cp->pad, cp->stride, cp->dilation, &cd);
    if (st == NNOP_OK)
        st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                              &op);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, op, attrs, NNOP_COUNT(attrs),
                               "convolution backward data operation");
    return st == NNOP_OK ? nnop__dnn_add_op(ctx, s, op) : st;
}

/* x [N, IN] row-major as A [1, N, IN]; w [OUT, IN] row-major as B [1, IN, OUT] column-major
 * (cudnn-backend-notes 5.1). */
static nnop_status matmul_inputs(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                                 cudnnBackendDescriptor_t *a, cudnnBackendDescriptor_t *b)
{
    const nnop__node *n = &p->g->nodes[c->producer];
    const nnop_tensor_desc *xd = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *wd = &p->g->values[n->in[1]].desc;
    int64_t N = xd->dims[0], IN = xd->dims[1], OUT = wd->dims[0];
    int64_t ad[3], as[3], bd[3], bs[3];
    nnop_status st;
    ad[0] = 1, ad[1] = N, ad[2] = IN;
    as[0] = N * IN, as[1] = IN, as[2] = 1;
    bd[0] = 1, bd[1] = IN, bd[2] = OUT;
    bs[0] = IN * OUT, bs[1] = 1, bs[2] = IN;
    st = nnop__lower_tensor(p->ctx, s, 3, ad, as, xd->dtype, c->x_slot, a);
    if (st == NNOP_OK)
        st = nnop__lower_tensor(p->ctx, s, 3, bd, bs, wd->dtype, c->w_slot, b);
    return st;
}

nnop_status nnop__lower_matmul(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                               cudnnBackendDescriptor_t y)
{
    nnop_context *ctx = p->ctx;
    cudnnBackendDescriptor_t a = NULL, b = NULL, md = NULL, op = NULL;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    const nnop__attr md_attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp)};
    const nnop__attr op_attrs[] = {NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_MATMUL_ADESC, &a),
                                   NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_MATMUL_BDESC, &b),
                                   NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_MATMUL_CDESC, &y),
                                   NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_MATMUL_DESC, &md)};
    nnop_status st = matmul_inputs(p, c, s, &a, &b);
    if (st == NNOP_OK)
        st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_MATMUL_DESCRIPTOR, &md);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, md, md_attrs, NNOP_COUNT(md_attrs), "matmul");
    if (st == NNOP_OK)
        st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, &op);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, op, op_attrs, NNOP_COUNT(op_attrs), "matmul operation");
    return st == NNOP_OK ? nnop__dnn_add_op(ctx, s, op) : st;
}
