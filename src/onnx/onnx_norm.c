/* onnx_norm.c: the normalizations: Batch-, Instance-, Group- and LayerNormalization. */
#include <stdlib.h>

#include "onnx_internal.h"

/* ---------------------------------------------------------------- normalization */
nnop_status ox_op_batchnorm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"epsilon",         "momentum",      "spatial", "is_test",
                                        "consumed_inputs", "training_mode", NULL};
    ox_tensor *t[5];
    nnop_value v[5], y;
    float eps;
    int64_t spatial, training;
    int k;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_attr_f(ox, n, "epsilon", 1e-5f, &eps);
    if (!s)
        s = ox_attr_i(ox, n, "spatial", 1, &spatial);
    if (!s)
        s = ox_attr_i(ox, n, "training_mode", 0, &training);
    if (!s)
        s = ox_only_output0(ox, n, "a training statistic");
    if (s)
        return s;
    if (!spatial)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute spatial 0");
    if (training)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute training_mode 1");
    for (k = 0; k < 5; k++)
        if ((s = ox_need_value(ox, n, (size_t)k, &t[k], &v[k])) != NNOP_OK)
            return s;
    y = nnop_batchnorm(ox->g, v[0], v[1], v[2], v[3], v[4], eps);
    return ox_set_value(ox, n, 0, y, t[0]->elem);
}

/* a per-channel (1-D, C) parameter from a constant broadcast over C, or a 1-D value */
static nnop_status channel_param(ox_ctx *ox, ox_tensor *t, int64_t c, int64_t groups,
                                 nnop_value *out)
{
    float *buf;
    int64_t k;
    nnop_status s;
    if (t->kind == OX_VALUE) {
        if (t->ndim != 1 || t->dims[0] != c)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "parameter '%s' is computed at run time and "
                           "not 1-D of %lld",
                           t->name, (long long)c);
        *out = t->v;
        return NNOP_OK;
    }
    if (!t->f || (t->numel != 1 && t->numel != c && t->numel != groups))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "parameter '%s' has %lld elements for %lld "
                       "channels",
                       t->name, (long long)t->numel, (long long)c);
    if ((s = ox_made(ox, c, "a per-channel parameter")) != NNOP_OK)
        return s;
    buf = (float *)malloc((size_t)c * sizeof(float));
    if (!buf)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < c; k++)
        buf[k] = t->numel == 1 ? t->f[0] : t->numel == c ? t->f[k] : t->f[k / (c / groups)];
    s = ox_make_const(ox, t->name, buf, 1, &c, out);
    free(buf);
    return s;
}

nnop_status ox_op_instance_norm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"epsilon", NULL};
    ox_tensor *xt, *gt, *bt;
    nnop_value x, g, b, y;
    float eps;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_attr_f(ox, n, "epsilon", 1e-5f, &eps);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = ox_need_in(ox, n, 1, &gt);
    if (!s)
        s = ox_need_in(ox, n, 2, &bt);
    if (s)
        return s;
    if (xt->ndim < 3 || xt->ndim > 4)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%d-D input (nnop: 3-D or 4-D)", xt->ndim);
    s = channel_param(ox, gt, xt->dims[1], xt->dims[1], &g);
    if (!s)
        s = channel_param(ox, bt, xt->dims[1], xt->dims[1], &b);
    if (s)
        return s;
    y = nnop_group_norm(ox->g, x, xt->dims[1], g, b, eps);
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_group_norm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"epsilon", "num_groups", "stash_type", NULL};
    ox_tensor *xt, *gt, *bt;
    nnop_value x, g, b, y;
    float eps;
    int64_t groups;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_attr_f(ox, n, "epsilon", 1e-5f, &eps);
    if (!s)
        s = ox_attr_i(ox, n, "num_groups", 0, &groups);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = ox_need_in(ox, n, 1, &gt);
    if (!s)
        s = ox_need_in(ox, n, 2, &bt);
    if (s)
        return s;
    if (xt->ndim < 2 || groups < 1 || xt->dims[1] % groups)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "num_groups %lld for %lld channels",
                       (long long)groups, (long long)(xt->ndim >= 2 ? xt->dims[1] : 0));
    /* opset 18: scale and bias per group; 21: per channel */
    if (ox->opset < 21 && (gt->kind != OX_CONST || bt->kind != OX_CONST) && groups != xt->dims[1])
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "per-group scale computed at run time");
    s = channel_param(ox, gt, xt->dims[1], groups, &g);
    if (!s)
        s = channel_param(ox, bt, xt->dims[1], groups, &b);
    if (s)
        return s;
    y = nnop_group_norm(ox->g, x, groups, g, b, eps);
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_layer_norm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", "epsilon", "stash_type", NULL};
    ox_tensor *xt, *pt[2];
    nnop_value x, pv[2], y;
    float eps;
    int64_t axis, pd[OX_MAX_DIMS], c;
    int k, d, pn, view;
    nnop_norm_axes ax;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_attr_f(ox, n, "epsilon", 1e-5f, &eps);
    if (!s)
        s = ox_attr_i(ox, n, "axis", -1, &axis);
    if (!s)
        s = ox_only_output0(ox, n, "a statistic");
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (s)
        return s;
    axis = ox_norm_axis(axis, xt->ndim);
    view = xt->view_cl; /* N,H,W,C over its last axis: nnop's over C of N,C,H,W */
    c = view ? xt->dims[3] : xt->dims[1];
    if ((xt->ndim == 2 && axis == 1) || (view && axis == 3))
        ax = NNOP_NORM_C;
    else if (view) /* its parameters would be H,W,C where nnop's are C,H,W */
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "axis %lld of a channels-last view (nnop: its last axis)", (long long)axis);
    else if (xt->ndim >= 3 && xt->ndim <= 4 && axis == 1)
        ax = NNOP_NORM_CHW;
    else
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "axis %lld of a %d-D input (nnop: the last of "
                       "2-D or of a channels-last view, or 1 of 3-D and 4-D)",
                       (long long)axis, xt->ndim);
    /* parameters: the normalized shape, 1-D C for NORM_C, [1, C, H, W] for NORM_CHW */
    pn = ax == NNOP_NORM_C ? 1 : xt->ndim;
    for (d = 0; d < pn; d++)
        pd[d] = ax == NNOP_NORM_C ? c : d == 0 ? 1 : xt->dims[d];
    for (k = 0; k < 2; k++) {
        ox_tensor *t = ox_in(ox, n, (size_t)(1 + k));
        pt[k] = t;
        pv[k] = nnop_none();
        if (!t)
            continue;
        if (t->kind == OX_VALUE) {
            if (!(ax == NNOP_NORM_C && t->ndim == 1 && t->dims[0] == c))
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "parameter '%s' computed at run time "
                               "in a shape nnop does not take",
                               t->name);
            pv[k] = t->v;
        } else {
            int64_t total = ox_numel(pd, pn), i, od[OX_MAX_DIMS];
            int on;
            float *buf;
            if (!t->f || !ox_bcast_shape(pd, pn, t->dims, t->ndim, od, &on) ||
                !ox_same_dims(od, on, pd, pn)) {
                if (!t->f || !ox_bcast_shape(xt->dims + axis, xt->ndim - (int)axis, t->dims,
                                             t->ndim, od, &on))
                    return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "parameter '%s' shape", t->name);
            }
            if ((s = ox_made(ox, total, "a parameter")) != NNOP_OK)
                return s;
            buf = (float *)malloc((size_t)total * sizeof(float));
            if (!buf)
                return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
            for (i = 0; i < total; i++)
                buf[i] = t->f[ox_bcast_index(i, xt->dims + axis, xt->ndim - (int)axis, t->dims,
                                             t->ndim)];
            s = ox_make_const(ox, t->name, buf, pn, pd, &pv[k]);
            free(buf);
            if (s)
                return s;
        }
    }
    (void)pt;
    y = nnop_layer_norm(ox->g, x, pv[0], pv[1], ax, eps);
    s = ox_set_value(ox, n, 0, y, xt->elem);
    if (!s && view)
        ox_mark_view(ox_find(ox, n->output[0]));
    return s;
}

/* LRN (opset 1, 13) onto nnop_lrn, whose window and alpha / size are ONNX's. ONNX allows 3-D
 * to N-D input; nnop takes 2-D to 4-D. */
nnop_status ox_op_lrn(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"size", "alpha", "beta", "bias", NULL};
    ox_tensor *xt;
    nnop_value x;
    int64_t size;
    float alpha, beta, bias;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s && !ox_attr(n, "size"))
        return ox_fail(ox, NNOP_ERR_FORMAT, "LRN without its required attribute size");
    if (!s)
        s = ox_attr_i(ox, n, "size", 1, &size);
    if (!s)
        s = ox_attr_f(ox, n, "alpha", 1e-4f, &alpha);
    if (!s)
        s = ox_attr_f(ox, n, "beta", 0.75f, &beta);
    if (!s)
        s = ox_attr_f(ox, n, "bias", 1.0f, &bias);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (s)
        return s;
    if (xt->ndim < 2 || xt->ndim > 4)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%d-D input (nnop: 2-D to 4-D)", xt->ndim);
    return ox_set_value(ox, n, 0, nnop_lrn(ox->g, x, size, alpha, beta, bias), xt->elem);
}
