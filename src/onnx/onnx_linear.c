/* onnx_linear.c: Gemm and MatMul as nnop_linear, and Softmax. */
#include <stdlib.h>

#include "onnx_internal.h"

/* ---------------------------------------------------------------- linear algebra */
/* MatMul of a channels-last view (N,H,W,C) by a constant C x K: a 1x1 convolution of its
 * N,C,H,W value, whose output is a view again (onnx_view.c). */
static nnop_status matmul_view(ox_ctx *ox, const Onnx__NodeProto *n, const ox_tensor *at,
                               nnop_value a, const ox_tensor *bt)
{
    int64_t c = at->dims[3], k, j, wd[4];
    nnop_conv_params cp;
    nnop_value w;
    float *wbuf;
    int elem = at->elem;
    nnop_status s;
    if (n->op_type[0] != 'M' || bt->kind != OX_CONST || !bt->f || bt->ndim != 2 || bt->dims[0] != c)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "%s of a channels-last view (nnop: MatMul by a constant of %lld rows)",
                       n->op_type, (long long)c);
    wd[0] = bt->dims[1], wd[1] = c, wd[2] = wd[3] = 1;
    wbuf = (float *)malloc((size_t)(wd[0] * c) * sizeof *wbuf);
    if (!wbuf)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < wd[0]; k++) /* K x C x 1 x 1 from C x K */
        for (j = 0; j < c; j++)
            wbuf[k * c + j] = bt->f[j * wd[0] + k];
    s = ox_make_const(ox, bt->name, wbuf, 4, wd, &w);
    free(wbuf);
    if (s)
        return s;
    nnop_conv_params_init(&cp);
    s = ox_set_value(ox, n, 0, nnop_conv(ox->g, a, w, &cp), elem);
    if (!s)
        ox_mark_view(ox_find(ox, n->output[0]));
    return s;
}

/* y = alpha * A B' + beta * C with B' = B or B^T */
nnop_status ox_op_gemm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"alpha", "beta", "transA", "transB", "broadcast", NULL};
    int is_matmul = n->op_type[0] == 'M';
    ox_tensor *at, *bt, *ct;
    nnop_value a, w, bias = nnop_none(), y;
    float alpha = 1.0f, beta = 1.0f;
    int64_t ta = 0, tb = 0, m, kk, nn, i, j;
    int scale_after = 0;
    float *cvec = NULL;
    nnop_status s = ox_check_attrs(ox, n, is_matmul ? ox_no_attrs : attrs);
    if (!s && !is_matmul) {
        s = ox_attr_f(ox, n, "alpha", 1.0f, &alpha);
        if (!s)
            s = ox_attr_f(ox, n, "beta", 1.0f, &beta);
        if (!s)
            s = ox_attr_i(ox, n, "transA", 0, &ta);
        if (!s)
            s = ox_attr_i(ox, n, "transB", 0, &tb);
    }
    if (!s)
        s = ox_need_value(ox, n, 0, &at, &a);
    if (!s)
        s = ox_need_in(ox, n, 1, &bt);
    if (s)
        return s;
    if (at->view_cl)
        return matmul_view(ox, n, at, a, bt);
    if (at->ndim != 2 || bt->ndim != 2)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%d-D by %d-D (nnop: 2-D by 2-D)", at->ndim,
                       bt->ndim);
    if (ta)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute transA 1");
    m = at->dims[0];
    kk = at->dims[1];
    nn = tb ? bt->dims[0] : bt->dims[1];
    if ((tb ? bt->dims[1] : bt->dims[0]) != kk)
        return ox_fail(ox, NNOP_ERR_FORMAT, "inner dims differ");
    if (bt->kind == OX_CONST) {
        float *wbuf;
        int64_t wd[2];
        if (!bt->f)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "B is %s", ox_elem_name(bt->elem));
        wbuf = (float *)malloc((size_t)(nn * kk) * sizeof(float));
        if (!wbuf)
            return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
        for (i = 0; i < nn; i++)
            for (j = 0; j < kk; j++)
                wbuf[i * kk + j] = alpha * (tb ? bt->f[i * kk + j] : bt->f[j * nn + i]);
        wd[0] = nn;
        wd[1] = kk;
        s = ox_make_const(ox, bt->name, wbuf, 2, wd, &w);
        free(wbuf);
    } else if (tb) {
        w = bt->v;
        scale_after = alpha != 1.0f;
    } else
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "B computed at run time and not transposed "
                       "(nnop's linear takes OUT x IN weights)");
    if (s)
        return s;
    ct = is_matmul ? NULL : ox_in(ox, n, 2);
    if (ct && beta != 0.0f) {
        int64_t od[2] = {m, nn}, cd[OX_MAX_DIMS];
        int on;
        if (ct->kind == OX_VALUE) {
            if (ct->ndim != 1 || ct->dims[0] != nn || beta != 1.0f || scale_after)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "C computed at run time, not 1-D of "
                               "%lld or scaled",
                               (long long)nn);
            bias = ct->v;
        } else if (!ct->f || !ox_bcast_shape(od, 2, ct->dims, ct->ndim, cd, &on) || on != 2 ||
                   cd[0] != m || cd[1] != nn) {
            return ox_fail(ox, NNOP_ERR_FORMAT, "C does not broadcast to [%lld, %lld]",
                           (long long)m, (long long)nn);
        } else {
            int rows = ct->ndim == 2 && ct->dims[0] != 1;
            if ((s = ox_made(ox, ox_numel(od, 2), "C broadcast")) != NNOP_OK)
                return s;
            cvec = (float *)malloc((size_t)(m * nn) * sizeof(float));
            if (!cvec)
                return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
            for (i = 0; i < m * nn; i++)
                cvec[i] = beta * ct->f[ox_bcast_index(i, od, 2, ct->dims, ct->ndim)];
            if (!rows && !scale_after) {
                s = ox_make_const(ox, ct->name, cvec, 1, &nn, &bias);
                free(cvec);
                cvec = NULL;
                if (s)
                    return s;
            }
        }
    }
    y = nnop_linear(ox->g, a, w, bias);
    s = ox_check(ox, y);
    if (!s && scale_after)
        s = ox_affine1(ox, at, y, alpha, 0.0f, &y);
    if (!s && cvec) {
        nnop_value cv;
        int64_t od[2] = {m, nn};
        s = ox_make_const(ox, ct->name, cvec, 2, od, &cv);
        if (!s)
            y = nnop_add(ox->g, y, cv);
    }
    free(cvec);
    return s ? s : ox_set_value(ox, n, 0, y, at->elem);
}

nnop_status ox_op_softmax(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", NULL};
    ox_tensor *xt;
    nnop_value x, y;
    int64_t axis;
    int d, ok;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = ox_attr_i(ox, n, "axis", ox->opset < 13 ? 1 : -1, &axis);
    if (s)
        return s;
    axis = ox_norm_axis(axis, xt->ndim);
    /* before opset 13 the input is flattened to 2-D at axis: the same as nnop's softmax over
     * dim 1 when axis is 1 and the dims after it are 1 (or it is 2-D) */
    ok = axis == 1 && (xt->ndim == 2 || xt->ndim == 4);
    if (ok && ox->opset < 13)
        for (d = 2; d < xt->ndim; d++)
            if (xt->dims[d] != 1)
                ok = 0;
    if (!ok)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "axis %lld of a %d-D input (opset %lld; nnop: "
                       "dim 1 of 2-D or 4-D)",
                       (long long)axis, xt->ndim, (long long)ox->opset);
    y = nnop_softmax(ox->g, x);
    return ox_set_value(ox, n, 0, y, xt->elem);
}
