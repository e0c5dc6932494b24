/* onnx_shape.c: the operators that change a shape, of run-time values or constants:
 * Flatten, Reshape, Squeeze/Unsqueeze, Concat and Transpose (of constants, and the channel
 * shuffle's view). */
#include <string.h>

#include "onnx_internal.h"

/* A channel shuffle's Reshapes: 4-D x to its 5-D view N,g,C/g,H,W (the view of the same
 * value), or a view back to x's N,C,H,W: the value itself, or the shuffle where Transpose
 * swapped the view's dims 1 and 2. 1: done (or failed: ox->status); 0: not such a reshape. */
static int reshape_view(ox_ctx *ox, const Onnx__NodeProto *n, ox_tensor *x, const int64_t *dims,
                        int ndim, nnop_status *s)
{
    if (!x->view_groups && x->ndim == 4 && ndim == 5 && dims[0] == x->dims[0] &&
        dims[1] * dims[2] == x->dims[1] && dims[3] == x->dims[2] && dims[4] == x->dims[3]) {
        ox_tensor *t;
        if ((*s = ox_set_alias(ox, n, 0, x)) != NNOP_OK)
            return 1;
        t = ox_find(ox, n->output[0]);
        t->ndim = 5;
        memcpy(t->dims, dims, 5 * sizeof *dims);
        t->view_groups = dims[1];
        t->view_swapped = 0;
        return 1;
    }
    if (x->view_groups && ndim == 4 && dims[0] == x->dims[0] &&
        dims[1] == x->dims[1] * x->dims[2] && dims[2] == x->dims[3] && dims[3] == x->dims[4]) {
        nnop_value v = x->view_swapped ? nnop_channel_shuffle(ox->g, x->v, x->view_groups) : x->v;
        *s = ox_set_value(ox, n, 0, v, x->elem);
        return 1;
    }
    return 0;
}

/* A value to its 1-D flat view, or a flat view back to its value's dims (ox_tensor.view_flat).
 * 1: done (or failed: ox->status); 0: not such a reshape. */
static int reshape_flat(ox_ctx *ox, const Onnx__NodeProto *n, ox_tensor *x, const int64_t *dims,
                        int ndim, nnop_status *s)
{
    nnop_tensor_desc d;
    ox_tensor *t;
    if (x->view_flat) {
        *s = nnop_value_desc(ox->g, x->v, &d);
        if (*s == NNOP_OK && !ox_same_dims(d.dims, d.ndim, dims, ndim))
            *s = ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                         "reshape of a flattened value to other than its own shape");
        if (*s == NNOP_OK)
            *s = ox_set_value(ox, n, 0, x->v, x->elem);
        return 1;
    }
    if (ndim != 1 || x->view_cl || x->view_groups)
        return 0;
    if ((*s = ox_set_alias(ox, n, 0, x)) != NNOP_OK)
        return 1;
    t = ox_find(ox, n->output[0]);
    t->dims[0] = ox_numel(x->dims, x->ndim);
    t->ndim = 1;
    t->view_flat = 1;
    return 1;
}

/* x viewed with new dims: the same value, nnop_flatten when it is N,C,H,W -> N,CHW, or a
 * channel shuffle's view (reshape_view) */
static nnop_status reshape_value(ox_ctx *ox, const Onnx__NodeProto *n, ox_tensor *x,
                                 const int64_t *dims, int ndim)
{
    char a[128], b[128];
    nnop_value v;
    nnop_status s = NNOP_OK;
    if (x->kind == OX_CONST) {
        ox_tensor *t = ox_set_const(ox, n, 0, x->elem, ndim, dims);
        if (!t)
            return ox->status;
        x = ox_find(ox, n->input[0]);
        if (t->numel != x->numel)
            return ox_fail(ox, NNOP_ERR_FORMAT, "reshape of %lld elements to %lld",
                           (long long)x->numel, (long long)t->numel);
        if (x->f)
            memcpy(t->f, x->f, (size_t)x->numel * sizeof(float));
        else
            memcpy(t->i, x->i, (size_t)x->numel * sizeof(int64_t));
        return NNOP_OK;
    }
    if (ox_same_dims(x->dims, x->ndim, dims, ndim))
        return ox_set_alias(ox, n, 0, x);
    if (reshape_view(ox, n, x, dims, ndim, &s))
        return s;
    if (x->view_groups)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "reshape of a channel shuffle's 5-D view to other than its 4-D shape");
    if (reshape_flat(ox, n, x, dims, ndim, &s))
        return s;
    if (x->ndim == 4 && ndim == 2 && dims[0] == x->dims[0] &&
        dims[1] == x->dims[1] * x->dims[2] * x->dims[3]) {
        v = nnop_flatten(ox->g, x->v);
        return ox_set_value(ox, n, 0, v, x->elem);
    }
    ox_shape_str(a, sizeof a, x->dims, x->ndim);
    ox_shape_str(b, sizeof b, dims, ndim);
    return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                   "reshape of %s to %s (nnop reshapes only N,C,H,W to N,C*H*W, and a channel "
                   "shuffle's N,C,H,W to N,g,C/g,H,W and back)",
                   a, b);
}

/* ---------------------------------------------------------------- shapes, constants */
nnop_status ox_op_flatten(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", NULL};
    ox_tensor *xt;
    int64_t axis, od[2] = {1, 1};
    int d;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (!s)
        s = ox_attr_i(ox, n, "axis", 1, &axis);
    if (s)
        return s;
    axis = ox_norm_axis(axis, xt->ndim);
    if (axis < 0 || axis > xt->ndim)
        return ox_fail(ox, NNOP_ERR_FORMAT, "axis out of range");
    for (d = 0; d < xt->ndim; d++)
        od[d < axis ? 0 : 1] *= xt->dims[d];
    return reshape_value(ox, n, xt, od, 2);
}

nnop_status ox_op_reshape(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"shape", "allowzero", "consumed_inputs", NULL};
    ox_tensor *xt;
    const int64_t *sh;
    int64_t cnt, od[OX_MAX_DIMS], known = 1, allowzero = 0;
    int d, infer = -1;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (!s)
        s = ox_attr_i(ox, n, "allowzero", 0, &allowzero);
    if (s)
        return s;
    if ((s = ox_ints_moved(ox, n, "shape", 5, 1, &sh, &cnt)) != NNOP_OK)
        return s;
    if (cnt < 0 || cnt > OX_MAX_DIMS)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "target shape of %lld dims", (long long)cnt);
    for (d = 0; d < cnt; d++) {
        od[d] = sh[d];
        if (sh[d] == 0 && !allowzero) {
            if (d >= xt->ndim)
                return ox_fail(ox, NNOP_ERR_FORMAT, "shape copies dim %d of a %d-D input", d,
                               xt->ndim);
            od[d] = xt->dims[d];
        }
        if (od[d] == -1) {
            if (infer >= 0)
                return ox_fail(ox, NNOP_ERR_FORMAT, "shape has two -1");
            infer = d;
        } else if (od[d] < 0)
            return ox_fail(ox, NNOP_ERR_FORMAT, "shape has %lld", (long long)od[d]);
        else if (od[d] && known > NNOP_MAX_TENSOR_ELEMENTS / od[d])
            return ox_fail(ox, NNOP_ERR_FORMAT, "shape of over %lld elements",
                           (long long)NNOP_MAX_TENSOR_ELEMENTS);
        else
            known *= od[d];
    }
    if (infer >= 0) {
        int64_t total = ox_numel(xt->dims, xt->ndim);
        if (known == 0 || total % known)
            return ox_fail(ox, NNOP_ERR_FORMAT, "shape does not fit %lld elements",
                           (long long)total);
        od[infer] = total / known;
    }
    return reshape_value(ox, n, xt, od, (int)cnt);
}

nnop_status ox_op_squeeze(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axes", NULL};
    int unsq = n->op_type[0] == 'U';
    ox_tensor *xt;
    const int64_t *ax;
    int64_t cnt, od[OX_MAX_DIMS];
    int d, on = 0, rank, mark[OX_MAX_DIMS] = {0};
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (s)
        return s;
    if ((s = ox_ints_moved(ox, n, "axes", 13, 1, &ax, &cnt)) != NNOP_OK)
        return s;
    rank = unsq ? xt->ndim + (int)(cnt < 0 ? 0 : cnt) : xt->ndim;
    if (rank > OX_MAX_DIMS || (unsq && cnt < 0))
        return ox_fail(ox, NNOP_ERR_FORMAT, "axes");
    for (d = 0; d < cnt; d++) {
        int64_t a = ox_norm_axis(ax[d], rank);
        if (a < 0 || a >= rank || mark[a])
            return ox_fail(ox, NNOP_ERR_FORMAT, "axis %lld", (long long)ax[d]);
        mark[a] = 1;
    }
    if (unsq) {
        int src = 0;
        for (d = 0; d < rank; d++)
            od[on++] = mark[d] ? 1 : xt->dims[src++];
    } else {
        for (d = 0; d < xt->ndim; d++) {
            if (cnt < 0 ? xt->dims[d] == 1 : mark[d]) {
                if (xt->dims[d] != 1)
                    return ox_fail(ox, NNOP_ERR_FORMAT, "squeeze of dim %d, of size %lld", d,
                                   (long long)xt->dims[d]);
                continue;
            }
            od[on++] = xt->dims[d];
        }
    }
    return reshape_value(ox, n, xt, od, on);
}

nnop_status ox_op_concat(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", NULL};
    ox_tensor *first, *t;
    nnop_value xs[NNOP_MAX_CONCAT_INPUTS], y;
    int64_t axis, od[OX_MAX_DIMS];
    size_t k, nin = n->n_input;
    int all_const = 1, d;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &first);
    if (!s)
        s = ox_attr_i(ox, n, "axis", 1, &axis);
    if (s)
        return s;
    if (ox->opset >= 4 && !ox_attr(n, "axis"))
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute axis is missing");
    axis = ox_norm_axis(axis, first->ndim);
    if (axis < 0 || axis >= first->ndim)
        return ox_fail(ox, NNOP_ERR_FORMAT, "axis out of range");
    memcpy(od, first->dims, sizeof od);
    od[axis] = 0;
    for (k = 0; k < nin; k++) {
        if ((s = ox_need_in(ox, n, k, &t)) != NNOP_OK)
            return s;
        if (t->ndim != first->ndim)
            return ox_fail(ox, NNOP_ERR_FORMAT, "inputs of different ranks");
        for (d = 0; d < t->ndim; d++)
            if (d != axis && t->dims[d] != first->dims[d])
                return ox_fail(ox, NNOP_ERR_FORMAT, "input %zu's dim %d differs", k, d);
        od[axis] += t->dims[axis];
        if (t->kind != OX_CONST)
            all_const = 0;
        /* by elem, not by storage: a value (first may be one) has no f */
        if (ox_is_float_elem(t->elem) != ox_is_float_elem(first->elem))
            return ox_fail(ox, NNOP_ERR_FORMAT, "inputs of different element types");
    }
    if (all_const) {
        int64_t outer = 1, inner = 1, off = 0, i, j;
        int elem = first->elem;
        ox_tensor *out;
        for (d = 0; d < axis; d++)
            outer *= od[d];
        for (d = (int)axis + 1; d < first->ndim; d++)
            inner *= od[d];
        out = ox_set_const(ox, n, 0, elem, first->ndim, od);
        if (!out)
            return ox->status;
        for (k = 0; k < nin; k++) {
            t = ox_in(ox, n, k);
            for (i = 0; i < outer; i++)
                for (j = 0; j < t->dims[axis] * inner; j++) {
                    int64_t dst = i * od[axis] * inner + off * inner + j;
                    int64_t src = i * t->dims[axis] * inner + j;
                    if (out->f)
                        out->f[dst] = t->f[src];
                    else
                        out->i[dst] = t->i[src];
                }
            off += t->dims[axis];
        }
        return NNOP_OK;
    }
    if (nin == 1)
        return ox_set_alias(ox, n, 0, first);
    if (axis != 1)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "axis %lld (nnop concatenates along dim 1)",
                       (long long)axis);
    if (nin > NNOP_MAX_CONCAT_INPUTS)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%zu inputs (nnop: at most %d)", nin,
                       NNOP_MAX_CONCAT_INPUTS);
    for (k = 0; k < nin; k++) {
        s = ox_value_of(ox, ox_in(ox, n, k), &xs[k]);
        if (s)
            return s;
    }
    y = nnop_concat(ox->g, xs, (int)nin);
    return ox_set_value(ox, n, 0, y, first->elem);
}

/* Transpose: of a constant, folded (any permutation); of a channel shuffle's 5-D view, perm
 * 0,2,1,3,4 swaps its group dims; the identity permutation is the value itself. */
nnop_status ox_op_transpose(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"perm", NULL};
    ox_tensor *xt, *t;
    const int64_t *perm;
    int64_t pm[OX_MAX_DIMS], od[OX_MAX_DIMS], k, total;
    int np, d, seen[OX_MAX_DIMS] = {0}, identity = 1;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &xt);
    if (!s)
        s = ox_attr_ints(ox, n, "perm", &perm, &np);
    if (s)
        return s;
    if (np >= 0 && np != xt->ndim)
        return ox_fail(ox, NNOP_ERR_FORMAT, "perm of %d axes for a %d-D input", np, xt->ndim);
    for (d = 0; d < xt->ndim; d++) {
        pm[d] = np < 0 ? xt->ndim - 1 - d : perm[d]; /* default: the dims reversed */
        if (pm[d] < 0 || pm[d] >= xt->ndim || seen[pm[d]]++)
            return ox_fail(ox, NNOP_ERR_FORMAT, "perm is not a permutation of %d axes", xt->ndim);
        od[d] = xt->dims[pm[d]];
        identity &= pm[d] == d;
    }
    if (identity)
        return ox_set_alias(ox, n, 0, xt);
    if (xt->kind == OX_VALUE && xt->ndim == 4 && !xt->view_groups && pm[0] == 0 &&
        (xt->view_cl ? pm[1] == 3 && pm[2] == 1 && pm[3] == 2     /* the view's end */
                     : pm[1] == 2 && pm[2] == 3 && pm[3] == 1)) { /* a view's start */
        int start = !xt->view_cl;
        if ((s = ox_set_alias(ox, n, 0, xt)) != NNOP_OK)
            return s;
        t = ox_find(ox, n->output[0]);
        memcpy(t->dims, od, sizeof od[0] * 4);
        t->view_cl = start;
        return NNOP_OK;
    }
    if (xt->kind == OX_VALUE) {
        if (!xt->view_groups || pm[0] != 0 || pm[1] != 2 || pm[2] != 1 || pm[3] != 3 || pm[4] != 4)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "transpose of a run-time value (nnop transposes only a channel "
                           "shuffle's N,g,C/g,H,W view, perm 0,2,1,3,4, and a 4-D value into "
                           "channels-last and back, perm 0,2,3,1 then 0,3,1,2)");
        if ((s = ox_set_alias(ox, n, 0, xt)) != NNOP_OK)
            return s;
        t = ox_find(ox, n->output[0]);
        memcpy(t->dims, od, sizeof od[0] * 5);
        t->view_swapped = !t->view_swapped;
        return NNOP_OK;
    }
    t = ox_set_const(ox, n, 0, xt->elem, xt->ndim, od);
    if (!t)
        return ox->status;
    xt = ox_find(ox, n->input[0]);
    total = t->numel;
    for (k = 0; k < total; k++) { /* k over the output; its source index by the permutation */
        int64_t rest = k, src = 0, stride[OX_MAX_DIMS], st = 1;
        for (d = xt->ndim - 1; d >= 0; d--)
            stride[d] = st, st *= xt->dims[d];
        for (d = xt->ndim - 1; d >= 0; d--) {
            src += (rest % od[d]) * stride[pm[d]];
            rest /= od[d];
        }
        if (xt->f)
            t->f[k] = xt->f[src];
        else
            t->i[k] = xt->i[src];
    }
    return NNOP_OK;
}
