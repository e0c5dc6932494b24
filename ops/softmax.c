/* softmax.c: softmax over dim 1 (classes), numerically stable (max subtracted). */
#include <math.h>

#include "ops_common.h"

static nnop_status softmax_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                 nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    nnop_status st = nnop__check_nchw_rank(in[0], msg, msg_len);
    (void)node;
    if (st == NNOP_OK)
        *out = *in[0];
    return st;
}

static void softmax_reference(const nnop__node *node, const float *const *in,
                              const nnop_tensor_desc *const *in_desc, float *out,
                              const nnop_tensor_desc *out_desc)
{
    nnop__view4 v = nnop__view(in_desc[0]);
    int64_t n, c, h, w;
    (void)node;
    (void)out_desc;
    for (n = 0; n < v.n; n++)
        for (h = 0; h < v.h; h++)
            for (w = 0; w < v.w; w++) {
                double mx = -INFINITY, sum = 0.0;
                for (c = 0; c < v.c; c++) {
                    double x = in[0][nnop__at(&v, n, c, h, w)];
                    mx = x > mx ? x : mx;
                }
                for (c = 0; c < v.c; c++)
                    sum += exp(in[0][nnop__at(&v, n, c, h, w)] - mx);
                for (c = 0; c < v.c; c++)
                    out[nnop__at(&v, n, c, h, w)] =
                            (float)(exp(in[0][nnop__at(&v, n, c, h, w)] - mx) / sum);
            }
}

const nnop__op_def nnop__op_softmax = {"softmax", NNOP_ROLE_STANDALONE, softmax_infer,
                                       softmax_reference};
