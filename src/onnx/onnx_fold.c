/* onnx_fold.c: the constant subgraphs exporters write, folded at load: Constant, Shape,
 * Gather, Cast (also the widening casts of run-time values), ConstantOfShape and Slice (of a
 * run-time value too: its channels). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

nnop_status ox_op_constant(ox_ctx *ox, const Onnx__NodeProto *n)
{
    const Onnx__AttributeProto *a;
    ox_tensor *t;
    nnop_status s;
    size_t k;
    int64_t dims[1] = {0}; /* a scalar reads none */
    if (n->n_attribute != 1)
        return ox_fail(ox, NNOP_ERR_FORMAT, "%zu attributes (one expected)", n->n_attribute);
    a = n->attribute[0];
    if (a->name && strcmp(a->name, "value") == 0 && a->t) {
        t = ox_out_tensor(ox, n, 0);
        if (!t)
            return ox->status;
        s = ox_tensor_from_proto(ox, t, a->t);
        if (s)
            t->kind = OX_UNSET;
        return s;
    }
    if (!a->name)
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute without a name");
    if (strcmp(a->name, "value_float") == 0 || strcmp(a->name, "value_int") == 0) {
        int isf = a->name[6] == 'f';
        t = ox_set_const(ox, n, 0, isf ? OX_FLOAT : OX_INT64, 0, dims);
        if (!t)
            return ox->status;
        if (isf)
            t->f[0] = a->f;
        else
            t->i[0] = a->i;
        return NNOP_OK;
    }
    if (strcmp(a->name, "value_floats") == 0 || strcmp(a->name, "value_ints") == 0) {
        int isf = a->name[6] == 'f';
        dims[0] = (int64_t)(isf ? a->n_floats : a->n_ints);
        t = ox_set_const(ox, n, 0, isf ? OX_FLOAT : OX_INT64, 1, dims);
        if (!t)
            return ox->status;
        for (k = 0; k < (size_t)dims[0]; k++) {
            if (isf)
                t->f[k] = a->floats[k];
            else
                t->i[k] = a->ints[k];
        }
        return NNOP_OK;
    }
    return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute '%s'", a->name);
}

nnop_status ox_op_shape(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"start", "end", NULL};
    ox_tensor *xt, *t;
    int64_t start, end, len;
    int d;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (!s)
        s = ox_attr_i(ox, n, "start", 0, &start);
    if (!s)
        s = ox_attr_i(ox, n, "end", xt->ndim, &end);
    if (s)
        return s;
    start = ox_norm_axis(start, xt->ndim);
    end = ox_norm_axis(end, xt->ndim);
    start = start < 0 ? 0 : start > xt->ndim ? xt->ndim : start;
    end = end < 0 ? 0 : end > xt->ndim ? xt->ndim : end;
    len = end > start ? end - start : 0;
    {
        int ndim = xt->ndim;
        int64_t dims[OX_MAX_DIMS];
        memcpy(dims, xt->dims, sizeof dims);
        t = ox_set_const(ox, n, 0, OX_INT64, 1, &len);
        if (!t)
            return ox->status;
        for (d = 0; d < len; d++)
            t->i[d] = dims[start + d];
        (void)ndim;
    }
    return NNOP_OK;
}

/* A Gather of a flat view (ox_tensor.view_flat) taking every element in order, its indices
 * shaped as the value: the value itself (torch's as_strided of a contiguous tensor, as the
 * dynamo exporter writes it: ConvNeXt's classifier). */
static nnop_status gather_every_element(ox_ctx *ox, const Onnx__NodeProto *n, const ox_tensor *xt,
                                        const ox_tensor *it, int64_t axis)
{
    nnop_tensor_desc d;
    int64_t k;
    nnop_status s = nnop_value_desc(ox->g, xt->v, &d);
    int every =
            s == NNOP_OK && it->i && axis == 0 && ox_same_dims(it->dims, it->ndim, d.dims, d.ndim);
    for (k = 0; every && k < it->numel; k++)
        every = it->i[k] == k;
    if (!every)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a gather of a flattened value other than every element in order, "
                       "shaped as the value (nnop folds gathers of constants)");
    return ox_set_value(ox, n, 0, xt->v, xt->elem);
}

nnop_status ox_op_gather(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", NULL};
    ox_tensor *xt, *it, *t;
    int64_t axis, od[OX_MAX_DIMS], outer = 1, inner = 1, k, j, q;
    int on = 0, d;
    size_t ix, ii;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (!s)
        s = ox_need_in(ox, n, 1, &it);
    if (!s)
        s = ox_attr_i(ox, n, "axis", 0, &axis);
    if (s)
        return s;
    if (xt->kind == OX_VALUE && xt->view_flat && it->kind == OX_CONST)
        return gather_every_element(ox, n, xt, it, axis);
    if (xt->kind != OX_CONST || it->kind != OX_CONST)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a gather computed at run time (nnop folds "
                       "gathers of constants)");
    if (!it->i)
        return ox_fail(ox, NNOP_ERR_FORMAT, "indices are not integers");
    axis = ox_norm_axis(axis, xt->ndim);
    if (axis < 0 || axis >= xt->ndim || xt->ndim + it->ndim - 1 > OX_MAX_DIMS)
        return ox_fail(ox, NNOP_ERR_FORMAT, "axis out of range");
    for (d = 0; d < axis; d++)
        od[on++] = xt->dims[d], outer *= xt->dims[d];
    for (d = 0; d < it->ndim; d++)
        od[on++] = it->dims[d];
    for (d = (int)axis + 1; d < xt->ndim; d++)
        od[on++] = xt->dims[d], inner *= xt->dims[d];
    ix = (size_t)(xt - ox->t);
    ii = (size_t)(it - ox->t);
    t = ox_set_const(ox, n, 0, xt->elem, on, od);
    if (!t)
        return ox->status;
    xt = &ox->t[ix];
    it = &ox->t[ii];
    for (k = 0; k < outer; k++)
        for (j = 0; j < it->numel; j++) {
            int64_t idx = it->i[j], ax = xt->dims[axis];
            if (idx < 0)
                idx += ax;
            if (idx < 0 || idx >= ax)
                return ox_fail(ox, NNOP_ERR_FORMAT, "index %lld out of range", (long long)it->i[j]);
            for (q = 0; q < inner; q++) {
                int64_t src = (k * ax + idx) * inner + q, dst = (k * it->numel + j) * inner + q;
                if (t->f)
                    t->f[dst] = xt->f[src];
                else
                    t->i[dst] = xt->i[src];
            }
        }
    return NNOP_OK;
}

/* whether a cast from float type a to float type b keeps every value */
static int float_widens(int a, int b)
{
    return ox_is_float_elem(a) && (b == OX_DOUBLE || (b == OX_FLOAT && a != OX_DOUBLE));
}

nnop_status ox_op_cast(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"to", "saturate", "round_mode", NULL};
    ox_tensor *xt, *t;
    int64_t to, k;
    size_t ix;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (!s)
        s = ox_attr_i(ox, n, "to", 0, &to);
    if (s)
        return s;
    if (to == xt->elem)
        return ox_set_alias(ox, n, 0, xt);
    if (xt->kind != OX_CONST && float_widens(xt->elem, (int)to)) {
        /* widening a float type keeps every value: the same value, of the new type */
        s = ox_set_alias(ox, n, 0, xt);
        if (!s)
            ox_find(ox, n->output[0])->elem = (int)to;
        return s;
    }
    if (xt->kind != OX_CONST)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "a cast of %s to %s computed at run time",
                       ox_elem_name(xt->elem), ox_elem_name((int)to));
    if (!ox_is_float_elem((int)to) &&
        (to < OX_UINT8 || to > OX_UINT64 || to == 8 || to == 10 || to == 11))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "a cast to %s", ox_elem_name((int)to));
    ix = (size_t)(xt - ox->t);
    t = ox_set_const(ox, n, 0, (int)to, xt->ndim, xt->dims);
    if (!t)
        return ox->status;
    xt = &ox->t[ix];
    for (k = 0; k < t->numel; k++) {
        double v = ox_const_get(xt, k);
        if (t->f) {
            float f = (float)v;
            if (to == OX_FLOAT16 || to == OX_BFLOAT16) { /* round as the type stores it */
                nnop_dtype dt = to == OX_FLOAT16 ? NNOP_F16 : NNOP_BF16;
                uint16_t h;
                nnop_convert(NNOP_F32, &f, dt, &h, 1);
                nnop_convert(dt, &h, NNOP_F32, &f, 1);
            }
            t->f[k] = f;
        } else if (to == OX_BOOL)
            t->i[k] = v != 0.0;
        else if (!(v == v) || v >= 9.2e18 || v <= -9.2e18)
            t->i[k] = xt->i ? xt->i[k] : 0;
        else
            t->i[k] = xt->i ? xt->i[k] : (int64_t)v;
    }
    return NNOP_OK;
}

nnop_status ox_op_constant_of_shape(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"value", NULL};
    const Onnx__AttributeProto *a = ox_attr(n, "value");
    const int64_t *sh;
    int64_t cnt, k;
    ox_tensor tmp, *t;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_const_ints(ox, n, 0, "shape", &sh, &cnt);
    if (s)
        return s;
    if (cnt < 0 || cnt > OX_MAX_DIMS)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "shape of %lld dims", (long long)cnt);
    memset(&tmp, 0, sizeof tmp);
    tmp.name = "value";
    if (a && a->t) {
        s = ox_tensor_from_proto(ox, &tmp, a->t);
        if (!s && tmp.numel != 1)
            s = ox_fail(ox, NNOP_ERR_FORMAT, "attribute value has %lld elements",
                        (long long)tmp.numel);
    } else {
        int64_t one = 1;
        tmp.ndim = 1;
        tmp.dims[0] = one;
        s = ox_const_alloc(ox, &tmp, OX_FLOAT);
        if (!s)
            tmp.f[0] = 0.0f;
    }
    if (!s) {
        t = ox_set_const(ox, n, 0, tmp.elem, (int)cnt, sh);
        if (!t)
            s = ox->status;
        else
            for (k = 0; k < t->numel; k++) {
                if (t->f)
                    t->f[k] = tmp.f[0];
                else
                    t->i[k] = tmp.i[0];
            }
    }
    free(tmp.f);
    free(tmp.i);
    return s;
}

/* A slice of a run-time value: channels of a 4-D one (step 1, the other dims whole), as
 * nnop_channel_slice (torch.chunk along dim 1: ShuffleNet v2) */
static nnop_status slice_value(ox_ctx *ox, const Onnx__NodeProto *n, const ox_tensor *xt,
                               const int64_t *b, const int64_t *step, const int64_t *od)
{
    int d, ok = xt->ndim == 4 && step[1] == 1 && od[1] >= 1;
    for (d = 0; ok && d < 4; d++)
        ok = d == 1 || (od[d] == xt->dims[d] && b[d] == 0 && step[d] == 1);
    if (!ok)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a slice computed at run time other than channels of a 4-D value at "
                       "step 1 (nnop folds slices of constants)");
    return ox_set_value(ox, n, 0, nnop_channel_slice(ox->g, xt->v, b[1], od[1]), xt->elem);
}

nnop_status ox_op_slice(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"starts", "ends", "axes", NULL};
    ox_tensor *xt, *t;
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    int64_t cs, ce, ca = -1, cp = -1, b[OX_MAX_DIMS], step[OX_MAX_DIMS], od[OX_MAX_DIMS], k;
    int d, nsv;
    size_t ix;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (s)
        return s;
    if (ox->opset < 10) {
        int c1 = -1, c2 = -1, c3 = -1;
        s = ox_attr_ints(ox, n, "starts", &st, &c1);
        if (!s)
            s = ox_attr_ints(ox, n, "ends", &en, &c2);
        if (!s)
            s = ox_attr_ints(ox, n, "axes", &ax, &c3);
        cs = c1;
        ce = c2;
        ca = c3;
    } else {
        s = ox_const_ints(ox, n, 1, "starts", &st, &cs);
        if (!s)
            s = ox_const_ints(ox, n, 2, "ends", &en, &ce);
        if (!s)
            s = ox_const_ints(ox, n, 3, "axes", &ax, &ca);
        if (!s)
            s = ox_const_ints(ox, n, 4, "steps", &sp, &cp);
    }
    if (s)
        return s;
    if (cs < 0 || cs != ce || (ca >= 0 && ca != cs) || (cp >= 0 && cp != cs))
        return ox_fail(ox, NNOP_ERR_FORMAT, "starts, ends, axes and steps differ in length");
    for (d = 0; d < xt->ndim; d++) {
        b[d] = 0;
        step[d] = 1;
        od[d] = xt->dims[d];
    }
    for (nsv = 0; nsv < cs; nsv++) {
        int64_t a = ax ? ox_norm_axis(ax[nsv], xt->ndim) : nsv, dim, lo, hi, sv;
        if (a < 0 || a >= xt->ndim)
            return ox_fail(ox, NNOP_ERR_FORMAT, "axis out of range");
        dim = xt->dims[a];
        sv = sp ? sp[nsv] : 1;
        if (sv == 0)
            return ox_fail(ox, NNOP_ERR_FORMAT, "step 0");
        /* a step past the dim takes one element either way (and keeps the sums below in range) */
        sv = sv > dim + 1 ? dim + 1 : sv < -dim - 1 ? -dim - 1 : sv;
        lo = st[nsv] < 0 ? st[nsv] + dim : st[nsv];
        hi = en[nsv] < -dim ? -1 : en[nsv] < 0 ? en[nsv] + dim : en[nsv];
        if (sv > 0) {
            lo = lo < 0 ? 0 : lo > dim ? dim : lo;
            hi = hi < 0 ? 0 : hi > dim ? dim : hi;
            od[a] = hi > lo ? (hi - lo + sv - 1) / sv : 0;
        } else {
            lo = lo < 0 ? -1 : lo > dim - 1 ? dim - 1 : lo;
            hi = hi < -1 ? -1 : hi > dim - 1 ? dim - 1 : hi;
            od[a] = lo > hi ? (lo - hi + (-sv) - 1) / (-sv) : 0;
        }
        b[a] = lo;
        step[a] = sv;
    }
    if (xt->kind != OX_CONST)
        return slice_value(ox, n, xt, b, step, od);
    ix = (size_t)(xt - ox->t);
    t = ox_set_const(ox, n, 0, xt->elem, xt->ndim, od);
    if (!t)
        return ox->status;
    xt = &ox->t[ix];
    for (k = 0; k < t->numel; k++) {
        int64_t rem = k, src = 0, stride = 1;
        for (d = xt->ndim - 1; d >= 0; d--) {
            int64_t c = rem % od[d];
            rem /= od[d];
            src += (b[d] + c * step[d]) * stride;
            stride *= xt->dims[d];
        }
        if (t->f)
            t->f[k] = xt->f[src];
        else
            t->i[k] = xt->i[src];
    }
    return NNOP_OK;
}

/* Split's part sizes along an axis of length dim into parts[n_out]: the split list (an
 * attribute before opset 13, input 1 from it), else equal parts (opset 18's num_outputs:
 * ceil(dim / n), the last part the rest; before it, dim must divide evenly). */
static nnop_status split_parts(ox_ctx *ox, const Onnx__NodeProto *n, int64_t dim, int64_t *parts)
{
    const int64_t *sp = NULL;
    int64_t cnt = -1, k, sum = 0, n_out = (int64_t)n->n_output, each;
    nnop_status s = ox_ints_moved(ox, n, "split", 13, 1, &sp, &cnt);
    if (s)
        return s;
    if (cnt >= 0) {
        if (cnt != n_out)
            return ox_fail(ox, NNOP_ERR_FORMAT, "split has %lld sizes for %lld outputs",
                           (long long)cnt, (long long)n_out);
        for (k = 0; k < cnt; k++) {
            if (sp[k] < 0 || sp[k] > dim - sum)
                return ox_fail(ox, NNOP_ERR_FORMAT, "split sizes do not sum to the axis' %lld",
                               (long long)dim);
            parts[k] = sp[k];
            sum += sp[k];
        }
        return sum == dim ? NNOP_OK
                          : ox_fail(ox, NNOP_ERR_FORMAT, "split sizes do not sum to the axis' %lld",
                                    (long long)dim);
    }
    if (ox->opset < 18 && dim % n_out)
        return ox_fail(ox, NNOP_ERR_FORMAT, "an axis of %lld in %lld equal parts", (long long)dim,
                       (long long)n_out);
    each = (dim + n_out - 1) / n_out;
    for (k = 0; k < n_out; k++, sum += each)
        parts[k] = sum >= dim ? 0 : dim - sum < each ? dim - sum : each;
    return NNOP_OK;
}

/* Part k of a constant along axis a: [lo, lo + len) of that axis. */
static nnop_status split_const(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, size_t ix, int a,
                               int64_t lo, int64_t len)
{
    int64_t od[OX_MAX_DIMS], inner = 1, i;
    ox_tensor *t, *xt = &ox->t[ix];
    int d;
    for (d = 0; d < xt->ndim; d++)
        od[d] = d == a ? len : xt->dims[d];
    for (d = a + 1; d < xt->ndim; d++)
        inner *= xt->dims[d];
    t = ox_set_const(ox, n, k, xt->elem, xt->ndim, od);
    if (!t)
        return ox->status;
    xt = &ox->t[ix];
    for (i = 0; i < t->numel; i++) { /* i = (outer, c, in) of the part; c + lo in x */
        int64_t in = i % inner, c = i / inner % len, outer = i / (inner * len);
        int64_t src = (outer * xt->dims[a] + lo + c) * inner + in;
        if (t->f)
            t->f[i] = xt->f[src];
        else
            t->i[i] = xt->i[src];
    }
    return NNOP_OK;
}

/* Split: a run-time value along the channels of a 4-D value, each part an nnop_channel_slice
 * (torch.chunk along dim 1 as the dynamo exporter writes it: ShuffleNet v2); constants folded. */
nnop_status ox_op_split(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", "split", "num_outputs", NULL};
    int64_t axis, parts[64], lo = 0;
    ox_tensor *xt;
    size_t k, ix;
    int a;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (!s)
        s = ox_attr_i(ox, n, "axis", 0, &axis);
    if (s)
        return s;
    if (n->n_output < 1 || n->n_output > 64)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "Split into %zu outputs (1 to 64)", n->n_output);
    a = (int)ox_norm_axis(axis, xt->ndim);
    if (a < 0 || a >= xt->ndim)
        return ox_fail(ox, NNOP_ERR_FORMAT, "axis %lld of a %d-D input", (long long)axis, xt->ndim);
    s = split_parts(ox, n, xt->dims[a], parts);
    if (s)
        return s;
    if (xt->kind != OX_CONST && (xt->ndim != 4 || a != 1))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a split computed at run time other than along the channels of a 4-D "
                       "value (axis %d of %d-D; nnop folds splits of constants)",
                       a, xt->ndim);
    ix = (size_t)(xt - ox->t);
    for (k = 0; k < n->n_output && !s; lo += parts[k], k++) {
        xt = &ox->t[ix]; /* the table may move as outputs are added */
        if (!n->output[k] || !n->output[k][0])
            continue;
        if (xt->kind == OX_CONST)
            s = split_const(ox, n, k, ix, a, lo, parts[k]);
        else if (parts[k] < 1)
            s = ox_fail(ox, NNOP_ERR_UNSUPPORTED, "an empty part (output %zu)", k);
        else
            s = ox_set_value(ox, n, k, nnop_channel_slice(ox->g, xt->v, lo, parts[k]), xt->elem);
    }
    return s;
}

/* Range of constant scalars start, limit, delta (folded at load: with the batch set, the
 * dynamo exporter's index computations are constant): max(ceil((limit - start) / delta), 0)
 * elements start + k * delta, of start's type. */
nnop_status ox_op_range(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *in[3], *t;
    double v[3], count;
    int64_t k, len;
    size_t ix[3];
    int j, elem, floats;
    nnop_status s = ox_check_attrs(ox, n, ox_no_attrs);
    for (j = 0; j < 3 && !s; j++) {
        s = ox_need_in(ox, n, (size_t)j, &in[j]);
        if (!s && (in[j]->kind != OX_CONST || in[j]->numel != 1))
            s = ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                        "Range of inputs computed at run time or not scalars (nnop folds "
                        "ranges of constants)");
        if (!s && !in[j]->f && !in[j]->i)
            s = ox_fail(ox, NNOP_ERR_FORMAT, "Range input %d holds no value", j);
        if (!s) {
            v[j] = ox_const_get(in[j], 0);
            ix[j] = (size_t)(in[j] - ox->t);
        }
    }
    floats = s ? 0 : (in[0]->f != NULL) + (in[1]->f != NULL) + (in[2]->f != NULL);
    if (floats != 0 && floats != 3)
        s = ox_fail(ox, NNOP_ERR_FORMAT, "Range of mixed integer and float inputs");
    if (s)
        return s;
    if (v[2] == 0.0 || v[0] != v[0] || v[1] != v[1] || v[2] != v[2])
        return ox_fail(ox, NNOP_ERR_FORMAT, "Range with delta 0 or a NaN");
    count = ceil((v[1] - v[0]) / v[2]);
    len = count > 0 ? (int64_t)(count < 9.2e18 ? count : 9.2e18) : 0;
    if ((s = ox_made(ox, len, "a Range")) != NNOP_OK)
        return s;
    if (fabs(v[0]) + (double)len * fabs(v[2]) > 9.0e18) /* start + k * delta stays in int64 */
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "a Range past 9e18");
    elem = in[0]->elem;
    t = ox_set_const(ox, n, 0, elem, 1, &len);
    if (!t)
        return ox->status;
    for (k = 0; k < len; k++) /* integers exactly, floats as ONNX's reference computes them */
        if (t->f)
            t->f[k] = (float)(v[0] + (double)k * v[2]);
        else
            t->i[k] = ox->t[ix[0]].i[0] + k * ox->t[ix[2]].i[0];
    return NNOP_OK;
}
