/* onnx_conv.c: the window operators: Conv, ConvTranspose, Max/AveragePool and the global
 * pools (ReduceMean over H, W among them), with their pads, strides and dilations. */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* ---------------------------------------------------------------- conv and pooling */
/* One axis of a window op padded b before and e after, run as nnop's op padded b on both
 * sides (nnop has no pad operator). The windows then start at the same places, and the two agree
 * exactly when they make as many outputs: every window of both lies in the input and the pads of
 * both, padding is zero for a conv and never wins a max or counts in an average without
 * count_include_pad; with it, both divide by the whole window while it stays inside the pads
 * of both (checked). ceil_mode (pools) rounds ONNX's count up; nnop's always rounds down.
 * A pool (pad_end not NULL) that needs more outputs than that pads the end by *pad_end more
 * (nnop_pool_params.pad_end): more padding after than before, or ceil_mode's partial window. */
static nnop_status axis_pads(ox_ctx *ox, int axis, int64_t in_, int64_t k, int64_t stride,
                             int64_t dil, int64_t b, int64_t e, int ceil_mode, int avg_cip,
                             const char *what, int64_t *pad, int64_t *pad_end)
{
    int64_t ke = (k - 1) * dil + 1, span = in_ + b + e - ke, span2 = in_ + 2 * b - ke;
    int64_t out = 0, mine = 0;
    *pad = b;
    if (pad_end)
        *pad_end = 0;
    if (b < 0 || e < 0)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "negative pads");
    if (span < 0 || (span2 < 0 && !pad_end)) /* no window fits: nnop's builder says so */
        return b == e ? NNOP_OK
                      : ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                                "pads %lld before and %lld after axis %d of %lld with a window of "
                                "%lld (nnop pads both sides alike)",
                                (long long)b, (long long)e, axis, (long long)in_, (long long)ke);
    out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    mine = span2 / stride + 1;
    if (out > mine && pad_end && (out - 1) * stride - span2 < ke && (out - 1) * stride - b < in_) {
        *pad_end = (out - 1) * stride - span2;
        mine = out;
    }
    if (out != mine) {
        if (b == e)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "ceil_mode 1 where it adds a partial window (axis %d)", axis);
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "%s: axis %d padded %lld before and %lld after (nnop pads both sides alike "
                       "and has no pad operator: padded %lld on both sides it gives %lld "
                       "outputs, not %lld)",
                       what, axis, (long long)b, (long long)e, (long long)b, (long long)mine,
                       (long long)out);
    }
    if (avg_cip &&
        (out - 1) * stride - b + ke >
                in_ + (e < b + (pad_end ? *pad_end : 0) ? e : b + (pad_end ? *pad_end : 0)))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "count_include_pad 1 with the last window of axis %d past the pads", axis);
    return NNOP_OK;
}

/* pads of a 2-D window op from pads / auto_pad, plus those of a zero Pad before it (a padded
 * view, ox_tensor.view_pad): symmetric, or what axis_pads proves exact */
static nnop_status window_pads(ox_ctx *ox, const Onnx__NodeProto *n, const ox_tensor *x,
                               const int64_t *k, const int64_t *stride, const int64_t *dil,
                               int ceil_mode, int avg_cip, int64_t *pad, int64_t *pad_end)
{
    const int64_t *p;
    int np, i;
    int64_t b[2] = {0, 0}, e[2] = {0, 0};
    const char *mode = "no pads of its own";
    char what[160];
    nnop_status s = ox_attr_ints(ox, n, "pads", &p, &np);
    if (s)
        return s;
    pad[0] = pad[1] = 0;
    if (ox_attr_s_is(n, "auto_pad", "NOTSET", "SAME_UPPER") ||
        ox_attr_s_is(n, "auto_pad", "NOTSET", "SAME_LOWER")) {
        int upper = ox_attr_s_is(n, "auto_pad", "NOTSET", "SAME_UPPER");
        mode = upper ? "auto_pad SAME_UPPER" : "auto_pad SAME_LOWER";
        for (i = 0; i < 2; i++) {
            int64_t in_ = x->dims[2 + i], out = (in_ + stride[i] - 1) / stride[i];
            int64_t total = (out - 1) * stride[i] + (k[i] - 1) * dil[i] + 1 - in_;
            if (total < 0)
                total = 0;
            b[i] = upper ? total / 2 : total - total / 2;
            e[i] = total - b[i];
        }
        p = NULL;
    } else {
        if (!ox_attr_s_is(n, "auto_pad", "NOTSET", "NOTSET") &&
            !ox_attr_s_is(n, "auto_pad", "NOTSET", "VALID"))
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute auto_pad: unknown value");
        if (ox_attr_s_is(n, "auto_pad", "NOTSET", "VALID"))
            np = -1;
        if (np != -1 && np != 4)
            return ox_fail(ox, NNOP_ERR_FORMAT, "attribute pads has %d values, not 4", np);
        for (i = 0; np == 4 && i < 2; i++) {
            b[i] = p[i];
            e[i] = p[i + 2];
        }
        if (np != 4)
            p = NULL;
    }
    if (p)
        snprintf(what, sizeof what, "attribute pads [%lld, %lld, %lld, %lld]", (long long)p[0],
                 (long long)p[1], (long long)p[2], (long long)p[3]);
    else
        snprintf(what, sizeof what, "%s", mode);
    if (x->view_padded)
        snprintf(what + strlen(what), sizeof what - strlen(what), " and the Pad before it");
    for (i = 0; i < 2; i++)
        if (b[i] > NNOP_MAX_TENSOR_ELEMENTS || e[i] > NNOP_MAX_TENSOR_ELEMENTS)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%s: pads of over 2^40", what);
    for (i = 0; i < 2; i++) {
        int64_t vb = x->view_padded ? x->view_pad[i] : 0,
                ve = x->view_padded ? x->view_pad[2 + i] : 0;
        s = axis_pads(ox, 2 + i, x->dims[2 + i] - vb - ve, k[i], stride[i], dil[i], b[i] + vb,
                      e[i] + ve, ceil_mode, avg_cip, what, &pad[i], pad_end ? &pad_end[i] : NULL);
        if (s)
            return s;
    }
    return NNOP_OK;
}

/* a 2-ints attribute (strides, dilations), default 1 */
static nnop_status pair_attr(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, int64_t *v)
{
    const int64_t *p;
    int np;
    nnop_status s = ox_attr_ints(ox, n, name, &p, &np);
    v[0] = v[1] = 1;
    if (s || np == -1)
        return s;
    if (np != 2)
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute %s has %d values, not 2", name, np);
    if (p[0] < 1 || p[1] < 1)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute %s below 1", name);
    v[0] = p[0];
    v[1] = p[1];
    return NNOP_OK;
}

static nnop_status need_4d(ox_ctx *ox, const ox_tensor *x, const char *what)
{
    if (x->ndim != 4)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%d-D %s (nnop runs 2-D spatial ops on N,C,H,W)",
                       x->ndim, what);
    return NNOP_OK;
}

nnop_status ox_op_conv(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                        "pads",     "strides",   NULL};
    ox_tensor *xt, *wt, *bt;
    nnop_value x, w, b, y;
    nnop_conv_params p;
    const int64_t *ks;
    int nks;
    int64_t k[2];
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_4d(ox, xt, "input");
    if (!s)
        s = ox_need_in(ox, n, 1, &wt);
    if (!s)
        s = need_4d(ox, wt, "weight");
    if (!s)
        s = ox_value_of(ox, wt, &w);
    if (!s)
        s = ox_attr_ints(ox, n, "kernel_shape", &ks, &nks);
    if (s)
        return s;
    k[0] = wt->dims[2];
    k[1] = wt->dims[3];
    if (nks != -1 && (nks != 2 || ks[0] != k[0] || ks[1] != k[1]))
        return ox_fail(ox, NNOP_ERR_FORMAT, "kernel_shape differs from the weight's");
    memset(&p, 0, sizeof p);
    s = pair_attr(ox, n, "strides", p.stride);
    if (!s)
        s = pair_attr(ox, n, "dilations", p.dilation);
    if (!s)
        s = ox_attr_i(ox, n, "group", 1, &p.groups);
    if (!s)
        s = window_pads(ox, n, xt, k, p.stride, p.dilation, 0, 0, p.pad, NULL);
    if (s)
        return s;
    y = nnop_conv(ox->g, x, w, &p);
    if ((s = ox_check(ox, y)) != NNOP_OK)
        return s;
    bt = ox_in(ox, n, 2);
    if (bt) {
        s = ox_value_of(ox, bt, &b);
        if (s)
            return s;
        y = nnop_bias(ox->g, y, b);
    }
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_conv_transpose(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"auto_pad",       "dilations", "group",   "kernel_shape",
                                        "output_padding", "pads",      "strides", NULL};
    ox_tensor *xt, *wt, *bt;
    nnop_value x, w, b, y;
    nnop_conv_transpose_params p;
    const int64_t *v;
    int nv, i;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_4d(ox, xt, "input");
    if (!s)
        s = ox_need_in(ox, n, 1, &wt);
    if (!s)
        s = need_4d(ox, wt, "weight");
    if (!s)
        s = ox_value_of(ox, wt, &w);
    if (s)
        return s;
    if (!ox_attr_s_is(n, "auto_pad", "NOTSET", "NOTSET"))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute auto_pad other than NOTSET");
    memset(&p, 0, sizeof p);
    s = pair_attr(ox, n, "strides", p.stride);
    if (!s)
        s = pair_attr(ox, n, "dilations", p.dilation);
    if (!s)
        s = ox_attr_i(ox, n, "group", 1, &p.groups);
    if (!s)
        s = ox_attr_ints(ox, n, "output_padding", &v, &nv);
    if (s)
        return s;
    if (nv == 2) {
        p.output_pad[0] = v[0];
        p.output_pad[1] = v[1];
    } else if (nv != -1)
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute output_padding has %d values", nv);
    s = ox_attr_ints(ox, n, "pads", &v, &nv);
    if (s)
        return s;
    if (nv == 4) {
        for (i = 0; i < 2; i++) {
            if (v[i] != v[i + 2] || v[i] < 0)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "attribute pads [%lld, %lld, %lld, "
                               "%lld] (nnop pads both sides alike)",
                               (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3]);
            p.pad[i] = v[i];
        }
    } else if (nv != -1)
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute pads has %d values", nv);
    y = nnop_conv_transpose(ox->g, x, w, &p);
    if ((s = ox_check(ox, y)) != NNOP_OK)
        return s;
    bt = ox_in(ox, n, 2);
    if (bt) {
        s = ox_value_of(ox, bt, &b);
        if (s)
            return s;
        y = nnop_bias(ox->g, y, b);
    }
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_pool(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"auto_pad",      "ceil_mode",    "count_include_pad",
                                        "dilations",     "kernel_shape", "pads",
                                        "storage_order", "strides",      NULL};
    int is_max = n->op_type[0] == 'M';
    ox_tensor *xt;
    nnop_value x, y;
    nnop_pool_params p;
    const int64_t *ks;
    int nks;
    int64_t dil[2], ceil_mode = 0, cip = 0;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_only_output0(ox, n, "the indices");
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_4d(ox, xt, "input");
    if (!s)
        s = ox_attr_ints(ox, n, "kernel_shape", &ks, &nks);
    if (s)
        return s;
    if (nks != 2)
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute kernel_shape has %d values, not 2", nks);
    memset(&p, 0, sizeof p);
    p.window[0] = ks[0];
    p.window[1] = ks[1];
    s = pair_attr(ox, n, "strides", p.stride);
    if (!s)
        s = pair_attr(ox, n, "dilations", dil);
    if (!s)
        s = ox_attr_i(ox, n, "ceil_mode", 0, &ceil_mode);
    if (!s)
        s = ox_attr_i(ox, n, "count_include_pad", 0, &cip);
    if (s)
        return s;
    if (dil[0] != 1 || dil[1] != 1)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute dilations other than 1");
    if (xt->view_padded && (is_max || !cip)) /* the Pad's zeros are values: they win or count */
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "%s after a Pad (nnop folds a zero Pad only into a Conv or an "
                       "AveragePool with count_include_pad 1)",
                       is_max ? "MaxPool" : "AveragePool without count_include_pad");
    s = window_pads(ox, n, xt, p.window, p.stride, dil, ceil_mode != 0, !is_max && cip != 0, p.pad,
                    p.pad_end);
    if (s)
        return s;
    p.count_include_pad = (int)cip;
    y = nnop_pool(ox->g, x, is_max ? NNOP_POOL_MAX : NNOP_POOL_AVG, &p);
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_global_pool(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *xt;
    nnop_value x, y;
    nnop_status s = ox_check_attrs(ox, n, ox_no_attrs);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_4d(ox, xt, "input");
    if (s)
        return s;
    if (n->op_type[6] == 'A') {
        y = nnop_global_avg_pool(ox->g, x);
    } else {
        nnop_pool_params p;
        memset(&p, 0, sizeof p);
        p.window[0] = xt->dims[2];
        p.window[1] = xt->dims[3];
        p.stride[0] = p.stride[1] = 1;
        y = nnop_pool(ox->g, x, NNOP_POOL_MAX, &p);
    }
    return ox_set_value(ox, n, 0, y, xt->elem);
}

/* ReduceMean over H and W of a 4-D value (x.mean([2, 3]) in torchvision's ShuffleNet v2 and
 * MNASNet): nnop_global_avg_pool, flattened to N,C without keepdims. Axes from the attribute
 * (opsets below 18) or the second input; other reductions are refused. */
nnop_status ox_op_reduce_mean(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axes", "keepdims", "noop_with_empty_axes", NULL};
    ox_tensor *xt;
    nnop_value x, y;
    const int64_t *ax;
    int64_t cnt, keep = 1, noop = 0;
    int d, hw[4] = {0, 0, 0, 0};
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_4d(ox, xt, "input");
    if (!s)
        s = ox_attr_i(ox, n, "keepdims", 1, &keep);
    if (!s)
        s = ox_attr_i(ox, n, "noop_with_empty_axes", 0, &noop);
    if (s)
        return s;
    if ((s = ox_ints_moved(ox, n, "axes", 18, 1, &ax, &cnt)) != NNOP_OK)
        return s;
    for (d = 0; d < cnt; d++) {
        int64_t a = ox_norm_axis(ax[d], 4);
        if (a < 0 || a > 3)
            return ox_fail(ox, NNOP_ERR_FORMAT, "axis %lld of a 4-D input", (long long)ax[d]);
        hw[a] = 1;
    }
    if (cnt != 2 || hw[0] || hw[1] || !hw[2] || !hw[3])
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "ReduceMean over other axes than 2 and 3 of a 4-D input (nnop: the "
                       "global average pool)");
    y = nnop_global_avg_pool(ox->g, x);
    if (!keep)
        y = nnop_flatten(ox->g, y);
    return ox_set_value(ox, n, 0, y, xt->elem);
}

/* ---------------------------------------------------------------- Pad */
/* The begin and end pads of each of the 4 dims from Pad's pads list (begins then ends, of
 * every axis or of the axes listed). */
static nnop_status pad_list(ox_ctx *ox, const int64_t *pv, int64_t cnt, const int64_t *axes,
                            int64_t na, int64_t *begin, int64_t *end)
{
    int64_t k, n_ax = axes ? na : 4;
    if (cnt != 2 * n_ax)
        return ox_fail(ox, NNOP_ERR_FORMAT, "pads has %lld values for %lld axes", (long long)cnt,
                       (long long)n_ax);
    for (k = 0; k < n_ax; k++) {
        int64_t a = axes ? ox_norm_axis(axes[k], 4) : k;
        if (a < 0 || a > 3)
            return ox_fail(ox, NNOP_ERR_FORMAT, "axis %lld of a 4-D input", (long long)axes[k]);
        if (pv[k] < -NNOP_MAX_TENSOR_ELEMENTS || pv[k] > NNOP_MAX_TENSOR_ELEMENTS ||
            pv[n_ax + k] < -NNOP_MAX_TENSOR_ELEMENTS || pv[n_ax + k] > NNOP_MAX_TENSOR_ELEMENTS)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "pads of over 2^40");
        begin[a] += pv[k];
        end[a] += pv[n_ax + k];
    }
    return NNOP_OK;
}

/* Pad with zeros of H and W of a 4-D run-time value: a padded view (ox_tensor.view_pad) that
 * the Conv or count_include_pad AveragePool reading it adds to its own pads (nnop has no pad
 * operator); anything else reading it is refused (onnx_ops.c). Opset 1 (paddings), 2 to 10
 * (pads, value attributes), 11 on (pads, constant_value, and from 18 axes as inputs). */
nnop_status ox_op_pad(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"mode", "pads", "paddings", "value", NULL};
    ox_tensor *xt, *t;
    const int64_t *pv = NULL, *axes = NULL;
    int64_t cnt = -1, na = -1, begin[4] = {0, 0, 0, 0}, end[4] = {0, 0, 0, 0};
    double value = 0.0;
    int present = 0, c = -1, d;
    float fv = 0.0f;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (s)
        return s;
    if (!ox_attr_s_is(n, "mode", "constant", "constant"))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "mode other than constant");
    if (ox->opset < 11) {
        s = ox_attr_ints(ox, n, ox->opset < 2 ? "paddings" : "pads", &pv, &c);
        if (!s)
            s = ox_attr_f(ox, n, "value", 0.0f, &fv);
        cnt = c;
        value = fv;
    } else {
        s = ox_const_ints(ox, n, 1, "pads", &pv, &cnt);
        if (!s)
            s = ox_const_scalar(ox, n, 2, "constant_value", &value, &present);
        if (!s)
            s = ox_const_ints(ox, n, 3, "axes", &axes, &na);
    }
    if (s)
        return s;
    if (value != 0.0)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a Pad with value %g (nnop folds zero pads into the Conv that reads them)",
                       value);
    if (xt->kind != OX_VALUE || xt->ndim != 4 || xt->view_cl || xt->view_groups || xt->view_flat)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a Pad of other than a 4-D value computed at run time (nnop folds zero "
                       "pads of H and W into the Conv that reads them)");
    if (!pv || cnt < 0)
        return ox_fail(ox, NNOP_ERR_FORMAT, "pads missing");
    if ((s = pad_list(ox, pv, cnt, axes, na, begin, end)) != NNOP_OK)
        return s;
    for (d = 0; d < 4; d++)
        if (begin[d] < 0 || end[d] < 0 || ((d < 2) && (begin[d] || end[d])) ||
            begin[d] > NNOP_MAX_TENSOR_ELEMENTS || end[d] > NNOP_MAX_TENSOR_ELEMENTS ||
            xt->dims[d] + begin[d] + end[d] > NNOP_MAX_TENSOR_ELEMENTS)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "pads of axis %d %lld before and %lld after (nnop folds zero pads of H "
                           "and W, none negative, into the Conv that reads them; 2^40 at most)",
                           d, (long long)begin[d], (long long)end[d]);
    if ((s = ox_set_alias(ox, n, 0, xt)) != NNOP_OK)
        return s;
    t = ox_find(ox, n->output[0]);
    for (d = 0; d < 2; d++) {
        t->dims[2 + d] += begin[2 + d] + end[2 + d];
        t->view_pad[d] = (t->view_padded ? t->view_pad[d] : 0) + begin[2 + d];
        t->view_pad[2 + d] = (t->view_padded ? t->view_pad[2 + d] : 0) + end[2 + d];
    }
    t->view_padded = 1;
    return NNOP_OK;
}
