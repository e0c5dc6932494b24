/* onnx_ops.c: one converter per ONNX operator, from a node to nnop graph builders (or to a
 * constant folded at load), with each opset's attribute changes. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

typedef nnop_status (*ox_op_fn)(ox_ctx *ox, const Onnx__NodeProto *n);

/* ---------------------------------------------------------------- attributes */
static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
    size_t k;
    for (k = 0; k < n->n_attribute; k++)
        if (n->attribute[k]->name && strcmp(n->attribute[k]->name, name) == 0)
            return n->attribute[k];
    return NULL;
}

/* Every attribute of n must be one of known (NULL-terminated): one the converter does not
 * read could change the result. */
static nnop_status check_attrs(ox_ctx *ox, const Onnx__NodeProto *n, const char *const *known)
{
    size_t k;
    for (k = 0; k < n->n_attribute; k++) {
        const char *name = n->attribute[k]->name ? n->attribute[k]->name : "";
        const char *const *q;
        int found = 0;
        for (q = known; *q; q++)
            if (strcmp(*q, name) == 0)
                found = 1;
        if (!found)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute '%s' is not supported", name);
        if (n->attribute[k]->ref_attr_name && *n->attribute[k]->ref_attr_name)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "attribute '%s' refers to a function's attribute", name);
    }
    return NNOP_OK;
}

static int attr_type_is(const Onnx__AttributeProto *a, Onnx__AttributeProto__AttributeType t)
{
    return !a->has_type || a->type == t;
}

static nnop_status attr_i(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, int64_t def,
                          int64_t *out)
{
    const Onnx__AttributeProto *a = attr(n, name);
    *out = def;
    if (!a)
        return NNOP_OK;
    if (!attr_type_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT))
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute '%s' is not an int", name);
    *out = a->i;
    return NNOP_OK;
}

static nnop_status attr_f(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, float def,
                          float *out)
{
    const Onnx__AttributeProto *a = attr(n, name);
    *out = def;
    if (!a)
        return NNOP_OK;
    if (!attr_type_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT))
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute '%s' is not a float", name);
    *out = a->f;
    return NNOP_OK;
}

/* ints attribute: *count -1 when absent */
static nnop_status attr_ints(ox_ctx *ox, const Onnx__NodeProto *n, const char *name,
                             const int64_t **v, int *count)
{
    const Onnx__AttributeProto *a = attr(n, name);
    *v = NULL;
    *count = -1;
    if (!a)
        return NNOP_OK;
    if (!attr_type_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS))
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute '%s' is not a list of ints", name);
    if (a->n_ints > 64)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute '%s' has %zu values", name, a->n_ints);
    *v = a->ints;
    *count = (int)a->n_ints;
    return NNOP_OK;
}

/* string attribute compared with s; absent means def */
static int attr_s_is(const Onnx__NodeProto *n, const char *name, const char *def, const char *s)
{
    const Onnx__AttributeProto *a = attr(n, name);
    size_t len = strlen(s);
    if (!a || !a->has_s)
        return strcmp(def, s) == 0;
    return a->s.len == len && memcmp(a->s.data, s, len) == 0;
}

/* ---------------------------------------------------------------- inputs and outputs */
static ox_tensor *in(ox_ctx *ox, const Onnx__NodeProto *n, size_t k)
{
    if (k >= n->n_input || !n->input[k] || !*n->input[k])
        return NULL;
    return ox_find(ox, n->input[k]);
}

static int has_out(const Onnx__NodeProto *n, size_t k)
{
    return k < n->n_output && n->output[k] && *n->output[k];
}

/* an output that something reads (an unread mask or statistic is left unmade) */
static int out_used(ox_ctx *ox, const Onnx__NodeProto *n, size_t k)
{
    return has_out(n, k) && ox_used(ox, n->output[k]);
}

static nnop_status need_in(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, ox_tensor **out)
{
    *out = in(ox, n, k);
    if (!*out)
        return ox_fail(ox, NNOP_ERR_FORMAT, "input %zu is missing", k);
    return NNOP_OK;
}

/* A run-time float value as input k (a constant becomes an nnop constant). */
static nnop_status need_value(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, ox_tensor **t,
                              nnop_value *v)
{
    nnop_status s = need_in(ox, n, k, t);
    return s ? s : ox_value_of(ox, *t, v);
}

/* Only output 0 may be used (the others are training or index outputs). */
static nnop_status only_output0(ox_ctx *ox, const Onnx__NodeProto *n, const char *what)
{
    size_t k;
    for (k = 1; k < n->n_output; k++)
        if (out_used(ox, n, k))
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "output %zu ('%s', %s) is not supported", k,
                           n->output[k], what);
    return NNOP_OK;
}

static ox_tensor *out_tensor(ox_ctx *ox, const Onnx__NodeProto *n, size_t k)
{
    ox_tensor *t;
    if (!has_out(n, k)) {
        ox_fail(ox, NNOP_ERR_FORMAT, "output %zu has no name", k);
        return NULL;
    }
    t = ox_add(ox, n->output[k]);
    if (t && t->kind != OX_UNSET) {
        ox_fail(ox, NNOP_ERR_FORMAT, "output '%s' is made by an earlier node too", n->output[k]);
        return NULL;
    }
    return t;
}

static nnop_status set_value(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, nnop_value v, int elem)
{
    nnop_tensor_desc d;
    ox_tensor *t;
    int i;
    nnop_status s = ox_check(ox, v);
    if (s)
        return s;
    t = out_tensor(ox, n, k);
    if (!t)
        return ox->status;
    s = nnop_value_desc(ox->g, v, &d);
    if (s)
        return ox_fail(ox, s, "nnop_value_desc failed");
    t->kind = OX_VALUE;
    t->v = v;
    t->elem = elem;
    t->ndim = d.ndim;
    for (i = 0; i < d.ndim; i++)
        t->dims[i] = d.dims[i];
    return NNOP_OK;
}

/* output k is src under another name */
static nnop_status set_alias(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const ox_tensor *src)
{
    ox_tensor copy = *src, *t;
    size_t idx = (size_t)(src - ox->t);
    nnop_status s;
    t = out_tensor(ox, n, k); /* may move the table */
    if (!t)
        return ox->status;
    copy = ox->t[idx];
    if (copy.kind == OX_VALUE) {
        const char *name = t->name;
        int used = t->used;
        *t = copy;
        t->name = name;
        t->used = used;
        return NNOP_OK;
    }
    t->ndim = copy.ndim;
    memcpy(t->dims, copy.dims, sizeof t->dims);
    s = ox_const_alloc(ox, t, copy.elem);
    if (s)
        return s;
    if (copy.f)
        memcpy(t->f, copy.f, (size_t)copy.numel * sizeof(float));
    else
        memcpy(t->i, copy.i, (size_t)copy.numel * sizeof(int64_t));
    return NNOP_OK;
}

/* a new constant output k with the given dims; storage to fill by the caller */
static ox_tensor *set_const(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, int elem, int ndim,
                            const int64_t *dims)
{
    ox_tensor *t = out_tensor(ox, n, k);
    int d;
    if (!t)
        return NULL;
    if (ndim > OX_MAX_DIMS) {
        ox_fail(ox, NNOP_ERR_UNSUPPORTED, "a result of %d dims", ndim);
        return NULL;
    }
    t->ndim = ndim;
    for (d = 0; d < ndim; d++)
        t->dims[d] = dims[d];
    if (ox_const_alloc(ox, t, elem)) {
        t->kind = OX_UNSET;
        return NULL;
    }
    return t;
}

static void shape_str(char *buf, size_t len, const int64_t *dims, int ndim)
{
    int d;
    size_t used = 0;
    buf[0] = 0;
    used += (size_t)snprintf(buf, len, "[");
    for (d = 0; d < ndim && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, d ? ", %lld" : "%lld", (long long)dims[d]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

static int same_dims(const int64_t *a, int an, const int64_t *b, int bn)
{
    int d;
    if (an != bn)
        return 0;
    for (d = 0; d < an; d++)
        if (a[d] != b[d])
            return 0;
    return 1;
}

/* constant input k as a list of int64 (shape, axes, pads); absent: *count -1 */
static nnop_status const_ints(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const char *what,
                              const int64_t **v, int64_t *count)
{
    ox_tensor *t = in(ox, n, k);
    *v = NULL;
    *count = -1;
    if (!t)
        return NNOP_OK;
    if (t->kind != OX_CONST)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "input '%s' (%s) is computed at run time: nnop "
                       "needs it constant",
                       t->name, what);
    if (!t->i)
        return ox_fail(ox, NNOP_ERR_FORMAT, "input '%s' (%s) is not an integer tensor", t->name,
                       what);
    *v = t->i;
    *count = t->numel;
    return NNOP_OK;
}

/* constant scalar float input k (Clip bounds, Dropout ratio); absent: *present 0 */
static nnop_status const_scalar(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const char *what,
                                double *v, int *present)
{
    ox_tensor *t = in(ox, n, k);
    *present = 0;
    if (!t)
        return NNOP_OK;
    if (t->kind != OX_CONST)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "input '%s' (%s) is computed at run time: nnop "
                       "needs it constant",
                       t->name, what);
    if (t->numel != 1)
        return ox_fail(ox, NNOP_ERR_FORMAT, "input '%s' (%s) has %lld elements, not 1", t->name,
                       what, (long long)t->numel);
    *v = ox_const_get(t, 0);
    *present = 1;
    return NNOP_OK;
}

static int64_t norm_axis(int64_t axis, int rank)
{
    return axis < 0 ? axis + rank : axis;
}

/* ---------------------------------------------------------------- shared building blocks */
/* y = x * a[c] + b[c] per channel (dim 1) as an inference batch-norm with mean 0, var 1,
 * eps 0 (exact: divides by sqrt(1) = 1). a, b: C floats each. */
static nnop_status affine(ox_ctx *ox, nnop_value x, const float *a, const float *b, int64_t c,
                          nnop_value *out)
{
    float *buf = (float *)malloc((size_t)c * 4 * sizeof(float));
    nnop_value gamma, beta, mean, var;
    nnop_status s;
    int64_t k;
    if (!buf)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < c; k++) {
        buf[k] = a[k];
        buf[c + k] = b[k];
        buf[2 * c + k] = 0.0f;
        buf[3 * c + k] = 1.0f;
    }
    s = ox_make_const(ox, "affine.gamma", buf, 1, &c, &gamma);
    if (!s)
        s = ox_make_const(ox, "affine.beta", buf + c, 1, &c, &beta);
    if (!s)
        s = ox_make_const(ox, "affine.mean", buf + 2 * c, 1, &c, &mean);
    if (!s)
        s = ox_make_const(ox, "affine.var", buf + 3 * c, 1, &c, &var);
    free(buf);
    if (s)
        return s;
    *out = nnop_batchnorm(ox->g, x, gamma, beta, mean, var, 0.0f);
    return ox_check(ox, *out);
}

/* y = x * a + b with scalars */
static nnop_status affine1(ox_ctx *ox, const ox_tensor *xt, nnop_value x, float a, float b,
                           nnop_value *out)
{
    float *ab;
    int64_t c, k;
    nnop_status s;
    if (xt->ndim < 2)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a scale or shift of a %d-D value (nnop needs a channel dim)", xt->ndim);
    c = xt->dims[1];
    ab = (float *)malloc((size_t)c * 2 * sizeof(float));
    if (!ab)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < c; k++) {
        ab[k] = a;
        ab[c + k] = b;
    }
    s = affine(ox, x, ab, ab + c, c, out);
    free(ab);
    return s;
}

/* x viewed with new dims: the same value, or nnop_flatten when it is N,C,H,W -> N,CHW */
static nnop_status reshape_value(ox_ctx *ox, const Onnx__NodeProto *n, ox_tensor *x,
                                 const int64_t *dims, int ndim)
{
    char a[128], b[128];
    nnop_value v;
    if (x->kind == OX_CONST) {
        ox_tensor *t = set_const(ox, n, 0, x->elem, ndim, dims);
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
    if (same_dims(x->dims, x->ndim, dims, ndim))
        return set_alias(ox, n, 0, x);
    if (x->ndim == 4 && ndim == 2 && dims[0] == x->dims[0] &&
        dims[1] == x->dims[1] * x->dims[2] * x->dims[3]) {
        v = nnop_flatten(ox->g, x->v);
        return set_value(ox, n, 0, v, x->elem);
    }
    shape_str(a, sizeof a, x->dims, x->ndim);
    shape_str(b, sizeof b, dims, ndim);
    return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                   "reshape of %s to %s (nnop reshapes only N,C,H,W to N,C*H*W)", a, b);
}

/* ---------------------------------------------------------------- activations */
static const char *const no_attrs[] = {"consumed_inputs", NULL};

static nnop_status op_act(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const alpha_attrs[] = {"alpha", "consumed_inputs", NULL};
    static const char *const hs_attrs[] = {"alpha", "beta", NULL};
    static const char *const selu_attrs[] = {"alpha", "gamma", "consumed_inputs", NULL};
    static const char *const gelu_attrs[] = {"approximate", NULL};
    const char *op = n->op_type;
    ox_tensor *xt;
    nnop_value x, y;
    float alpha = 0.0f, beta, gamma;
    nnop_act_kind kind;
    nnop_status s = need_value(ox, n, 0, &xt, &x);
    if (s)
        return s;
    if (strcmp(op, "Relu") == 0 || strcmp(op, "Sigmoid") == 0 || strcmp(op, "Tanh") == 0) {
        s = check_attrs(ox, n, no_attrs);
        kind = op[0] == 'R' ? NNOP_ACT_RELU : op[0] == 'S' ? NNOP_ACT_SIGMOID : NNOP_ACT_TANH;
    } else if (strcmp(op, "HardSwish") == 0 || strcmp(op, "Mish") == 0) {
        s = check_attrs(ox, n, no_attrs);
        kind = op[0] == 'H' ? NNOP_ACT_HARDSWISH : NNOP_ACT_MISH;
    } else if (strcmp(op, "LeakyRelu") == 0 || strcmp(op, "Elu") == 0) {
        s = check_attrs(ox, n, alpha_attrs);
        if (!s)
            s = attr_f(ox, n, "alpha", op[0] == 'L' ? 0.01f : 1.0f, &alpha);
        kind = op[0] == 'L' ? NNOP_ACT_LEAKY_RELU : NNOP_ACT_ELU;
    } else if (strcmp(op, "Gelu") == 0) {
        s = check_attrs(ox, n, gelu_attrs);
        if (attr_s_is(n, "approximate", "none", "none"))
            kind = NNOP_ACT_GELU;
        else if (attr_s_is(n, "approximate", "none", "tanh"))
            kind = NNOP_ACT_GELU_TANH;
        else
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute approximate: unknown value");
    } else if (strcmp(op, "HardSigmoid") == 0) {
        s = check_attrs(ox, n, hs_attrs);
        if (!s)
            s = attr_f(ox, n, "alpha", 0.2f, &alpha);
        if (!s)
            s = attr_f(ox, n, "beta", 0.5f, &beta);
        if (s)
            return s;
        if (fabsf(alpha - 1.0f / 6.0f) < 1e-7f && beta == 0.5f) {
            kind = NNOP_ACT_HARDSIGMOID;
        } else { /* max(0, min(1, alpha x + beta)) */
            s = affine1(ox, xt, x, alpha, beta, &y);
            if (s)
                return s;
            y = nnop_clamp(ox->g, y, 0.0f, 1.0f);
            return set_value(ox, n, 0, y, xt->elem);
        }
    } else { /* Selu: gamma * elu_alpha(x) */
        s = check_attrs(ox, n, selu_attrs);
        if (!s)
            s = attr_f(ox, n, "alpha", 1.67326319217681884765625f, &alpha);
        if (!s)
            s = attr_f(ox, n, "gamma", 1.05070102214813232421875f, &gamma);
        if (s)
            return s;
        y = nnop_act(ox->g, x, NNOP_ACT_ELU, alpha);
        s = ox_check(ox, y);
        if (!s)
            s = affine1(ox, xt, y, gamma, 0.0f, &y);
        return s ? s : set_value(ox, n, 0, y, xt->elem);
    }
    if (s)
        return s;
    y = nnop_act(ox->g, x, kind, alpha);
    return set_value(ox, n, 0, y, xt->elem);
}

static nnop_status op_clip(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const old_attrs[] = {"min", "max", "consumed_inputs", NULL};
    ox_tensor *xt;
    nnop_value x, y;
    double lo = -INFINITY, hi = INFINITY, v;
    int present;
    nnop_status s = need_value(ox, n, 0, &xt, &x);
    if (s)
        return s;
    if (ox->opset < 11) {
        float f;
        s = check_attrs(ox, n, old_attrs);
        if (!s && attr(n, "min"))
            s = attr_f(ox, n, "min", 0.0f, &f), lo = f;
        if (!s && attr(n, "max"))
            s = attr_f(ox, n, "max", 0.0f, &f), hi = f;
    } else {
        s = check_attrs(ox, n, no_attrs);
        if (!s)
            s = const_scalar(ox, n, 1, "min", &v, &present);
        if (!s && present)
            lo = v;
        if (!s)
            s = const_scalar(ox, n, 2, "max", &v, &present);
        if (!s && present)
            hi = v;
    }
    if (s)
        return s;
    if (lo > hi)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "min %g above max %g", lo, hi);
    y = nnop_clamp(ox->g, x, (float)lo, (float)hi);
    return set_value(ox, n, 0, y, xt->elem);
}

static nnop_status op_prelu(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *xt, *st;
    nnop_value x, y, neg, slope;
    int64_t c, k, adims[OX_MAX_DIMS];
    float *buf;
    int d, per_channel = 1, uniform = 1;
    nnop_status s = check_attrs(ox, n, no_attrs);
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_in(ox, n, 1, &st);
    if (s)
        return s;
    if (st->kind != OX_CONST || !st->f)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "slope '%s' is not a float constant", st->name);
    for (k = 1; k < st->numel; k++)
        if (st->f[k] != st->f[0])
            uniform = 0;
    if (uniform && st->numel >= 1) {
        y = nnop_act(ox->g, x, NNOP_ACT_LEAKY_RELU, st->f[0]);
        return set_value(ox, n, 0, y, xt->elem);
    }
    /* per channel: relu(x) - slope[c] * relu(-x) */
    if (xt->ndim < 2 || st->ndim > xt->ndim)
        per_channel = 0;
    for (d = 0; per_channel && d < xt->ndim; d++) {
        int sd = d - (xt->ndim - st->ndim);
        adims[d] = sd >= 0 ? st->dims[sd] : 1;
        if (d != 1 && adims[d] != 1)
            per_channel = 0;
    }
    if (!per_channel || adims[1] != xt->dims[1])
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "slope '%s' is neither one value nor one per "
                       "channel",
                       st->name);
    c = xt->dims[1];
    buf = (float *)malloc((size_t)c * 2 * sizeof(float));
    if (!buf)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < c; k++) {
        buf[k] = -1.0f;
        buf[c + k] = 0.0f;
    }
    s = affine(ox, x, buf, buf + c, c, &neg);
    if (!s) {
        neg = nnop_act(ox->g, neg, NNOP_ACT_RELU, 0.0f);
        s = ox_check(ox, neg);
    }
    if (!s) {
        for (k = 0; k < c; k++)
            buf[k] = -st->f[k];
        s = affine(ox, neg, buf, buf + c, c, &slope); /* -slope * relu(-x) */
    }
    free(buf);
    if (s)
        return s;
    y = nnop_act(ox->g, x, NNOP_ACT_RELU, 0.0f);
    if ((s = ox_check(ox, y)) != NNOP_OK)
        return s;
    y = nnop_add(ox->g, y, slope);
    return set_value(ox, n, 0, y, xt->elem);
}

static nnop_status op_identity(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *x;
    nnop_status s = check_attrs(ox, n, no_attrs);
    if (!s)
        s = need_in(ox, n, 0, &x);
    return s ? s : set_alias(ox, n, 0, x);
}

static nnop_status op_dropout(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"ratio", "is_test", "seed", "consumed_inputs", NULL};
    ox_tensor *x, *tm;
    int64_t is_test = 0;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &x);
    if (!s)
        s = attr_i(ox, n, "is_test", 0, &is_test);
    if (s)
        return s;
    if (out_used(ox, n, 1))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "output 1 ('%s', the mask)", n->output[1]);
    tm = in(ox, n, 2); /* opset 12: training_mode */
    if (tm && (tm->kind != OX_CONST || tm->numel != 1 || ox_const_get(tm, 0) != 0.0))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "training_mode '%s' is not constant false "
                       "(nnop runs inference)",
                       tm->name);
    return set_alias(ox, n, 0, x);
}

/* ---------------------------------------------------------------- elementwise binary */
typedef enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV } bin_kind;

static nnop_status fold_binary(ox_ctx *ox, const Onnx__NodeProto *n, bin_kind op, ox_tensor *a,
                               ox_tensor *b, const int64_t *bd, int bn)
{
    int64_t od[OX_MAX_DIMS], k;
    int on;
    ox_tensor *t;
    size_t ia = (size_t)(a - ox->t), ib = (size_t)(b - ox->t);
    int isf = a->f != NULL;
    if ((a->f != NULL) != (b->f != NULL))
        return ox_fail(ox, NNOP_ERR_FORMAT, "operands of different element types");
    if (!ox_bcast_shape(a->dims, a->ndim, bd, bn, od, &on))
        return ox_fail(ox, NNOP_ERR_FORMAT, "operand shapes do not broadcast");
    t = set_const(ox, n, 0, a->elem, on, od);
    if (!t)
        return ox->status;
    a = &ox->t[ia];
    b = &ox->t[ib];
    for (k = 0; k < t->numel; k++) {
        int64_t i = ox_bcast_index(k, od, on, a->dims, a->ndim);
        int64_t j = ox_bcast_index(k, od, on, bd, bn);
        if (isf) {
            float x = a->f[i], y = b->f[j];
            t->f[k] = op == BIN_ADD ? x + y : op == BIN_SUB ? x - y : op == BIN_MUL ? x * y : x / y;
        } else {
            int64_t x = a->i[i], y = b->i[j];
            if (op == BIN_DIV && y == 0)
                return ox_fail(ox, NNOP_ERR_FORMAT, "integer division by zero");
            t->i[k] = op == BIN_ADD                 ? (int64_t)((uint64_t)x + (uint64_t)y)
                      : op == BIN_SUB               ? (int64_t)((uint64_t)x - (uint64_t)y)
                      : op == BIN_MUL               ? (int64_t)((uint64_t)x * (uint64_t)y)
                      : (x == INT64_MIN && y == -1) ? x
                                                    : x / y;
        }
    }
    return NNOP_OK;
}

static nnop_status op_binary(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"broadcast", "axis", "consumed_inputs", NULL};
    const char *op = n->op_type;
    bin_kind kind = op[0] == 'A'   ? BIN_ADD
                    : op[0] == 'S' ? BIN_SUB
                    : op[0] == 'M' ? BIN_MUL
                                   : BIN_DIV;
    ox_tensor *a, *b;
    int64_t bd[OX_MAX_DIMS], od[OX_MAX_DIMS], axis = -1, bcast = 0;
    int bn, on, d, per_channel, uniform;
    char sa[128], sb[128];
    nnop_value va, vb, y;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &a);
    if (!s)
        s = need_in(ox, n, 1, &b);
    if (!s)
        s = attr_i(ox, n, "broadcast", 0, &bcast);
    if (!s)
        s = attr_i(ox, n, "axis", -1, &axis);
    if (s)
        return s;
    if (a->kind == OX_CONST && b->kind == OX_CONST && ox->opset >= 7) {
        /* fall through to folding below with b's own dims */
    }
    bn = b->ndim;
    memcpy(bd, b->dims, sizeof bd);
    if (ox->opset < 7 && bcast && attr(n, "axis")) {
        /* legacy broadcast: b's dims line up with a's from axis on */
        int64_t ax = norm_axis(axis, a->ndim);
        if (ax < 0 || ax + b->ndim > a->ndim)
            return ox_fail(ox, NNOP_ERR_FORMAT, "attribute axis %lld out of range",
                           (long long)axis);
        for (d = 0; d < a->ndim; d++)
            bd[d] = d >= ax && d < ax + b->ndim ? b->dims[d - ax] : 1;
        bn = a->ndim;
    } else if (ox->opset < 7 && !bcast && !same_dims(a->dims, a->ndim, b->dims, b->ndim)) {
        return ox_fail(ox, NNOP_ERR_FORMAT, "operand shapes differ without broadcast");
    }
    if (a->kind == OX_CONST && b->kind == OX_CONST)
        return fold_binary(ox, n, kind, a, b, bd, bn);
    if (!ox_bcast_shape(a->dims, a->ndim, bd, bn, od, &on))
        return ox_fail(ox, NNOP_ERR_FORMAT, "operand shapes do not broadcast");
    /* the run-time operand goes first */
    if (a->kind == OX_CONST || !same_dims(od, on, a->dims, a->ndim)) {
        if (kind == BIN_ADD || kind == BIN_MUL) {
            ox_tensor *t = a;
            if (bn != b->ndim)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "legacy broadcast of a constant first "
                               "operand");
            a = b;
            b = t;
            bn = b->ndim;
            memcpy(bd, b->dims, sizeof bd);
        } else if (kind == BIN_SUB && a->kind == OX_CONST && same_dims(od, on, b->dims, b->ndim)) {
            /* c - x = (-x) + c */
            ox_tensor *t = a;
            s = ox_value_of(ox, b, &vb);
            if (!s)
                s = affine1(ox, b, vb, -1.0f, 0.0f, &va);
            if (s)
                return s;
            kind = BIN_ADD;
            a = NULL;
            b = t;
            bn = b->ndim;
            memcpy(bd, b->dims, sizeof bd);
            goto have_a;
        }
    }
    if (a->kind == OX_CONST || !same_dims(od, on, a->dims, a->ndim)) {
        shape_str(sa, sizeof sa, a->dims, a->ndim);
        shape_str(sb, sizeof sb, b->dims, b->ndim);
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "%s %s by %s: nnop broadcasts the second operand only", op, sa, sb);
    }
    s = ox_value_of(ox, a, &va);
    if (s)
        return s;
have_a:
    /* b aligned to the output's rank */
    {
        int64_t al[OX_MAX_DIMS];
        for (d = 0; d < on; d++) {
            int sd = d - (on - bn);
            al[d] = sd >= 0 ? bd[sd] : 1;
        }
        per_channel = on >= 2;
        for (d = 0; d < on; d++)
            if (d != 1 && al[d] != 1)
                per_channel = 0;
        if (b->kind == OX_CONST) {
            int64_t k, c = od[1];
            float *ab;
            if (!b->f)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "operand '%s' is %s", b->name,
                               ox_elem_name(b->elem));
            uniform = 1;
            for (k = 1; k < b->numel; k++)
                if (b->f[k] != b->f[0])
                    uniform = 0;
            if (same_dims(bd, bn, od, on) && !uniform) {
                s = ox_value_of(ox, b, &vb);
            } else if ((uniform || per_channel) && on >= 2 && kind != BIN_DIV) {
                ab = (float *)malloc((size_t)c * 2 * sizeof(float));
                if (!ab)
                    return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
                for (k = 0; k < c; k++) {
                    float v = b->f[uniform ? 0 : k];
                    ab[k] = kind == BIN_MUL ? v : 1.0f;
                    ab[c + k] = kind == BIN_ADD ? v : kind == BIN_SUB ? -v : 0.0f;
                }
                s = affine(ox, va, ab, ab + c, c, &y);
                free(ab);
                return s ? s : set_value(ox, n, 0, y, a ? a->elem : b->elem);
            } else { /* the constant broadcast to the output's shape */
                float *full;
                int64_t total = ox_numel(od, on);
                if (total <= 0)
                    return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "empty operand");
                full = (float *)malloc((size_t)total * sizeof(float));
                if (!full)
                    return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
                for (k = 0; k < total; k++)
                    full[k] = b->f[ox_bcast_index(k, od, on, bd, bn)];
                if (on == 4 && per_channel) { /* 1,C,1,1: nnop's own broadcast */
                    int64_t cd[4] = {1, od[1], 1, 1};
                    for (k = 0; k < c; k++)
                        full[k] = b->f[uniform ? 0 : k];
                    s = ox_make_const(ox, b->name, full, 4, cd, &vb);
                } else
                    s = ox_make_const(ox, b->name, full, on, od, &vb);
                free(full);
            }
            if (s)
                return s;
        } else {
            s = ox_value_of(ox, b, &vb);
            if (s)
                return s;
            if (!same_dims(bd, bn, od, on) &&
                !(on == 4 && bn == 4 && per_channel && (kind != BIN_ADD))) {
                shape_str(sa, sizeof sa, od, on);
                shape_str(sb, sizeof sb, b->dims, b->ndim);
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "%s of %s by %s computed at run time "
                               "(nnop broadcasts N,C,1,1 over N,C,H,W for Mul, Sub and Div)",
                               op, sa, sb);
            }
        }
    }
    y = kind == BIN_ADD   ? nnop_add(ox->g, va, vb)
        : kind == BIN_SUB ? nnop_sub(ox->g, va, vb)
        : kind == BIN_MUL ? nnop_mul(ox->g, va, vb)
                          : nnop_div(ox->g, va, vb);
    return set_value(ox, n, 0, y, a ? a->elem : b->elem);
}

/* Sum of values of one shape (older exporters' residual add): a chain of adds */
static nnop_status op_sum(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *first, *t;
    nnop_value acc, v;
    size_t k;
    nnop_status s = check_attrs(ox, n, no_attrs);
    if (!s)
        s = need_value(ox, n, 0, &first, &acc);
    if (s)
        return s;
    if (n->n_input == 1)
        return set_alias(ox, n, 0, first);
    for (k = 1; k < n->n_input; k++) {
        if ((s = need_value(ox, n, k, &t, &v)) != NNOP_OK)
            return s;
        if (!same_dims(t->dims, t->ndim, first->dims, first->ndim))
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "inputs of different shapes (nnop sums "
                           "values of one shape)");
        acc = nnop_add(ox->g, acc, v);
        if ((s = ox_check(ox, acc)) != NNOP_OK)
            return s;
    }
    return set_value(ox, n, 0, acc, first->elem);
}

/* ---------------------------------------------------------------- conv and pooling */
/* pads of a 2-D window op from pads / auto_pad: symmetric only */
static nnop_status window_pads(ox_ctx *ox, const Onnx__NodeProto *n, const ox_tensor *x,
                               const int64_t *k, const int64_t *stride, const int64_t *dil,
                               int64_t *pad)
{
    const int64_t *p;
    int np, i;
    nnop_status s = attr_ints(ox, n, "pads", &p, &np);
    if (s)
        return s;
    pad[0] = pad[1] = 0;
    if (attr_s_is(n, "auto_pad", "NOTSET", "SAME_UPPER") ||
        attr_s_is(n, "auto_pad", "NOTSET", "SAME_LOWER")) {
        for (i = 0; i < 2; i++) {
            int64_t in_ = x->dims[2 + i], out = (in_ + stride[i] - 1) / stride[i];
            int64_t total = (out - 1) * stride[i] + (k[i] - 1) * dil[i] + 1 - in_;
            if (total < 0)
                total = 0;
            if (total % 2)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "auto_pad SAME pads axis %d by %lld "
                               "(nnop pads both sides alike)",
                               2 + i, (long long)total);
            pad[i] = total / 2;
        }
        return NNOP_OK;
    }
    if (!attr_s_is(n, "auto_pad", "NOTSET", "NOTSET") &&
        !attr_s_is(n, "auto_pad", "NOTSET", "VALID"))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute auto_pad: unknown value");
    if (attr_s_is(n, "auto_pad", "NOTSET", "VALID"))
        return NNOP_OK;
    if (np == -1)
        return NNOP_OK;
    if (np != 4)
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute pads has %d values, not 4", np);
    for (i = 0; i < 2; i++) {
        if (p[i] != p[i + 2])
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "attribute pads [%lld, %lld, %lld, %lld] "
                           "(nnop pads both sides alike)",
                           (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3]);
        if (p[i] < 0)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "negative pads");
        pad[i] = p[i];
    }
    return NNOP_OK;
}

/* a 2-ints attribute (strides, dilations), default 1 */
static nnop_status pair_attr(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, int64_t *v)
{
    const int64_t *p;
    int np;
    nnop_status s = attr_ints(ox, n, name, &p, &np);
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

static nnop_status op_conv(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                        "pads",     "strides",   NULL};
    ox_tensor *xt, *wt, *bt;
    nnop_value x, w, b, y;
    nnop_conv_params p;
    const int64_t *ks;
    int nks;
    int64_t k[2];
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_4d(ox, xt, "input");
    if (!s)
        s = need_in(ox, n, 1, &wt);
    if (!s)
        s = need_4d(ox, wt, "weight");
    if (!s)
        s = ox_value_of(ox, wt, &w);
    if (!s)
        s = attr_ints(ox, n, "kernel_shape", &ks, &nks);
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
        s = attr_i(ox, n, "group", 1, &p.groups);
    if (!s)
        s = window_pads(ox, n, xt, k, p.stride, p.dilation, p.pad);
    if (s)
        return s;
    y = nnop_conv(ox->g, x, w, &p);
    if ((s = ox_check(ox, y)) != NNOP_OK)
        return s;
    bt = in(ox, n, 2);
    if (bt) {
        s = ox_value_of(ox, bt, &b);
        if (s)
            return s;
        y = nnop_bias(ox->g, y, b);
    }
    return set_value(ox, n, 0, y, xt->elem);
}

static nnop_status op_conv_transpose(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"auto_pad",       "dilations", "group",   "kernel_shape",
                                        "output_padding", "pads",      "strides", NULL};
    ox_tensor *xt, *wt, *bt;
    nnop_value x, w, b, y;
    nnop_conv_transpose_params p;
    const int64_t *v;
    int nv, i;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_4d(ox, xt, "input");
    if (!s)
        s = need_in(ox, n, 1, &wt);
    if (!s)
        s = need_4d(ox, wt, "weight");
    if (!s)
        s = ox_value_of(ox, wt, &w);
    if (s)
        return s;
    if (!attr_s_is(n, "auto_pad", "NOTSET", "NOTSET"))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute auto_pad other than NOTSET");
    memset(&p, 0, sizeof p);
    s = pair_attr(ox, n, "strides", p.stride);
    if (!s)
        s = pair_attr(ox, n, "dilations", p.dilation);
    if (!s)
        s = attr_i(ox, n, "group", 1, &p.groups);
    if (!s)
        s = attr_ints(ox, n, "output_padding", &v, &nv);
    if (s)
        return s;
    if (nv == 2) {
        p.output_pad[0] = v[0];
        p.output_pad[1] = v[1];
    } else if (nv != -1)
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute output_padding has %d values", nv);
    s = attr_ints(ox, n, "pads", &v, &nv);
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
    bt = in(ox, n, 2);
    if (bt) {
        s = ox_value_of(ox, bt, &b);
        if (s)
            return s;
        y = nnop_bias(ox->g, y, b);
    }
    return set_value(ox, n, 0, y, xt->elem);
}

static nnop_status op_pool(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"auto_pad",      "ceil_mode",    "count_include_pad",
                                        "dilations",     "kernel_shape", "pads",
                                        "storage_order", "strides",      NULL};
    int is_max = n->op_type[0] == 'M';
    ox_tensor *xt;
    nnop_value x, y;
    nnop_pool_params p;
    const int64_t *ks;
    int nks, i;
    int64_t dil[2], ceil_mode = 0, cip = 0;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = only_output0(ox, n, "the indices");
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_4d(ox, xt, "input");
    if (!s)
        s = attr_ints(ox, n, "kernel_shape", &ks, &nks);
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
        s = attr_i(ox, n, "ceil_mode", 0, &ceil_mode);
    if (!s)
        s = attr_i(ox, n, "count_include_pad", 0, &cip);
    if (s)
        return s;
    if (dil[0] != 1 || dil[1] != 1)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute dilations other than 1");
    s = window_pads(ox, n, xt, p.window, p.stride, dil, p.pad);
    if (s)
        return s;
    if (ceil_mode) { /* fine while rounding up gives the same size */
        for (i = 0; i < 2; i++) {
            int64_t span = xt->dims[2 + i] + 2 * p.pad[i] - p.window[i];
            if (span >= 0 && span % p.stride[i])
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "ceil_mode 1 where it adds a partial window (axis %d)", 2 + i);
        }
    }
    p.count_include_pad = (int)cip;
    y = nnop_pool(ox->g, x, is_max ? NNOP_POOL_MAX : NNOP_POOL_AVG, &p);
    return set_value(ox, n, 0, y, xt->elem);
}

static nnop_status op_global_pool(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *xt;
    nnop_value x, y;
    nnop_status s = check_attrs(ox, n, no_attrs);
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
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
    return set_value(ox, n, 0, y, xt->elem);
}

/* ---------------------------------------------------------------- normalization */
static nnop_status op_batchnorm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"epsilon",         "momentum",      "spatial", "is_test",
                                        "consumed_inputs", "training_mode", NULL};
    ox_tensor *t[5];
    nnop_value v[5], y;
    float eps;
    int64_t spatial, training;
    int k;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = attr_f(ox, n, "epsilon", 1e-5f, &eps);
    if (!s)
        s = attr_i(ox, n, "spatial", 1, &spatial);
    if (!s)
        s = attr_i(ox, n, "training_mode", 0, &training);
    if (!s)
        s = only_output0(ox, n, "a training statistic");
    if (s)
        return s;
    if (!spatial)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute spatial 0");
    if (training)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute training_mode 1");
    for (k = 0; k < 5; k++)
        if ((s = need_value(ox, n, (size_t)k, &t[k], &v[k])) != NNOP_OK)
            return s;
    y = nnop_batchnorm(ox->g, v[0], v[1], v[2], v[3], v[4], eps);
    return set_value(ox, n, 0, y, t[0]->elem);
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
    buf = (float *)malloc((size_t)c * sizeof(float));
    if (!buf)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < c; k++)
        buf[k] = t->numel == 1 ? t->f[0] : t->numel == c ? t->f[k] : t->f[k / (c / groups)];
    s = ox_make_const(ox, t->name, buf, 1, &c, out);
    free(buf);
    return s;
}

static nnop_status op_instance_norm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"epsilon", NULL};
    ox_tensor *xt, *gt, *bt;
    nnop_value x, g, b, y;
    float eps;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = attr_f(ox, n, "epsilon", 1e-5f, &eps);
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_in(ox, n, 1, &gt);
    if (!s)
        s = need_in(ox, n, 2, &bt);
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
    return set_value(ox, n, 0, y, xt->elem);
}

static nnop_status op_group_norm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"epsilon", "num_groups", "stash_type", NULL};
    ox_tensor *xt, *gt, *bt;
    nnop_value x, g, b, y;
    float eps;
    int64_t groups;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = attr_f(ox, n, "epsilon", 1e-5f, &eps);
    if (!s)
        s = attr_i(ox, n, "num_groups", 0, &groups);
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = need_in(ox, n, 1, &gt);
    if (!s)
        s = need_in(ox, n, 2, &bt);
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
    return set_value(ox, n, 0, y, xt->elem);
}

static nnop_status op_layer_norm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", "epsilon", "stash_type", NULL};
    ox_tensor *xt, *pt[2];
    nnop_value x, pv[2], y;
    float eps;
    int64_t axis, pd[OX_MAX_DIMS];
    int k, d, pn;
    nnop_norm_axes ax;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = attr_f(ox, n, "epsilon", 1e-5f, &eps);
    if (!s)
        s = attr_i(ox, n, "axis", -1, &axis);
    if (!s)
        s = only_output0(ox, n, "a statistic");
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
    if (s)
        return s;
    axis = norm_axis(axis, xt->ndim);
    if (xt->ndim == 2 && axis == 1)
        ax = NNOP_NORM_C;
    else if (xt->ndim >= 3 && xt->ndim <= 4 && axis == 1)
        ax = NNOP_NORM_CHW;
    else
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "axis %lld of a %d-D input (nnop: the last of "
                       "2-D, or 1 of 3-D and 4-D)",
                       (long long)axis, xt->ndim);
    /* parameters: the normalized shape, 1-D C for NORM_C, [1, C, H, W] for NORM_CHW */
    pn = ax == NNOP_NORM_C ? 1 : xt->ndim;
    for (d = 0; d < pn; d++)
        pd[d] = ax == NNOP_NORM_C ? xt->dims[1] : d == 0 ? 1 : xt->dims[d];
    for (k = 0; k < 2; k++) {
        ox_tensor *t = in(ox, n, (size_t)(1 + k));
        pt[k] = t;
        pv[k] = nnop_none();
        if (!t)
            continue;
        if (t->kind == OX_VALUE) {
            if (!(ax == NNOP_NORM_C && t->ndim == 1 && t->dims[0] == xt->dims[1]))
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
                !same_dims(od, on, pd, pn)) {
                if (!t->f || !ox_bcast_shape(xt->dims + axis, xt->ndim - (int)axis, t->dims,
                                             t->ndim, od, &on))
                    return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "parameter '%s' shape", t->name);
            }
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
    return set_value(ox, n, 0, y, xt->elem);
}

/* ---------------------------------------------------------------- linear algebra */
/* y = alpha * A B' + beta * C with B' = B or B^T */
static nnop_status op_gemm(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"alpha", "beta", "transA", "transB", "broadcast", NULL};
    int is_matmul = n->op_type[0] == 'M';
    ox_tensor *at, *bt, *ct;
    nnop_value a, w, bias = nnop_none(), y;
    float alpha = 1.0f, beta = 1.0f;
    int64_t ta = 0, tb = 0, m, kk, nn, i, j;
    int scale_after = 0;
    float *cvec = NULL;
    nnop_status s = check_attrs(ox, n, is_matmul ? no_attrs : attrs);
    if (!s && !is_matmul) {
        s = attr_f(ox, n, "alpha", 1.0f, &alpha);
        if (!s)
            s = attr_f(ox, n, "beta", 1.0f, &beta);
        if (!s)
            s = attr_i(ox, n, "transA", 0, &ta);
        if (!s)
            s = attr_i(ox, n, "transB", 0, &tb);
    }
    if (!s)
        s = need_value(ox, n, 0, &at, &a);
    if (!s)
        s = need_in(ox, n, 1, &bt);
    if (s)
        return s;
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
    ct = is_matmul ? NULL : in(ox, n, 2);
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
        s = affine1(ox, at, y, alpha, 0.0f, &y);
    if (!s && cvec) {
        nnop_value cv;
        int64_t od[2] = {m, nn};
        s = ox_make_const(ox, ct->name, cvec, 2, od, &cv);
        if (!s)
            y = nnop_add(ox->g, y, cv);
    }
    free(cvec);
    return s ? s : set_value(ox, n, 0, y, at->elem);
}

static nnop_status op_softmax(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", NULL};
    ox_tensor *xt;
    nnop_value x, y;
    int64_t axis;
    int d, ok;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = attr_i(ox, n, "axis", ox->opset < 13 ? 1 : -1, &axis);
    if (s)
        return s;
    axis = norm_axis(axis, xt->ndim);
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
    return set_value(ox, n, 0, y, xt->elem);
}

/* ---------------------------------------------------------------- shapes, constants */
static nnop_status op_flatten(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", NULL};
    ox_tensor *xt;
    int64_t axis, od[2] = {1, 1};
    int d;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &xt);
    if (!s)
        s = attr_i(ox, n, "axis", 1, &axis);
    if (s)
        return s;
    axis = norm_axis(axis, xt->ndim);
    if (axis < 0 || axis > xt->ndim)
        return ox_fail(ox, NNOP_ERR_FORMAT, "axis out of range");
    for (d = 0; d < xt->ndim; d++)
        od[d < axis ? 0 : 1] *= xt->dims[d];
    return reshape_value(ox, n, xt, od, 2);
}

static nnop_status op_reshape(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"shape", "allowzero", "consumed_inputs", NULL};
    ox_tensor *xt;
    const int64_t *sh;
    int64_t cnt, od[OX_MAX_DIMS], known = 1, allowzero = 0;
    int d, infer = -1, nsh;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &xt);
    if (!s)
        s = attr_i(ox, n, "allowzero", 0, &allowzero);
    if (s)
        return s;
    if (ox->opset < 5) {
        s = attr_ints(ox, n, "shape", &sh, &nsh);
        cnt = nsh;
    } else
        s = const_ints(ox, n, 1, "shape", &sh, &cnt);
    if (s)
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

static nnop_status op_squeeze(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axes", NULL};
    int unsq = n->op_type[0] == 'U';
    ox_tensor *xt;
    const int64_t *ax;
    int64_t cnt, od[OX_MAX_DIMS];
    int nax, d, on = 0, rank, mark[OX_MAX_DIMS] = {0};
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &xt);
    if (s)
        return s;
    if (ox->opset < 13) {
        s = attr_ints(ox, n, "axes", &ax, &nax);
        cnt = nax;
    } else
        s = const_ints(ox, n, 1, "axes", &ax, &cnt);
    if (s)
        return s;
    rank = unsq ? xt->ndim + (int)(cnt < 0 ? 0 : cnt) : xt->ndim;
    if (rank > OX_MAX_DIMS || (unsq && cnt < 0))
        return ox_fail(ox, NNOP_ERR_FORMAT, "axes");
    for (d = 0; d < cnt; d++) {
        int64_t a = norm_axis(ax[d], rank);
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

static nnop_status op_constant(ox_ctx *ox, const Onnx__NodeProto *n)
{
    const Onnx__AttributeProto *a;
    ox_tensor *t;
    nnop_status s;
    size_t k;
    int64_t dims[1];
    if (n->n_attribute != 1)
        return ox_fail(ox, NNOP_ERR_FORMAT, "%zu attributes (one expected)", n->n_attribute);
    a = n->attribute[0];
    if (a->name && strcmp(a->name, "value") == 0 && a->t) {
        t = out_tensor(ox, n, 0);
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
        t = set_const(ox, n, 0, isf ? OX_FLOAT : OX_INT64, 0, dims);
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
        t = set_const(ox, n, 0, isf ? OX_FLOAT : OX_INT64, 1, dims);
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

static nnop_status op_shape(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"start", "end", NULL};
    ox_tensor *xt, *t;
    int64_t start, end, len;
    int d;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &xt);
    if (!s)
        s = attr_i(ox, n, "start", 0, &start);
    if (!s)
        s = attr_i(ox, n, "end", xt->ndim, &end);
    if (s)
        return s;
    start = norm_axis(start, xt->ndim);
    end = norm_axis(end, xt->ndim);
    start = start < 0 ? 0 : start > xt->ndim ? xt->ndim : start;
    end = end < 0 ? 0 : end > xt->ndim ? xt->ndim : end;
    len = end > start ? end - start : 0;
    {
        int ndim = xt->ndim;
        int64_t dims[OX_MAX_DIMS];
        memcpy(dims, xt->dims, sizeof dims);
        t = set_const(ox, n, 0, OX_INT64, 1, &len);
        if (!t)
            return ox->status;
        for (d = 0; d < len; d++)
            t->i[d] = dims[start + d];
        (void)ndim;
    }
    return NNOP_OK;
}

static nnop_status op_gather(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", NULL};
    ox_tensor *xt, *it, *t;
    int64_t axis, od[OX_MAX_DIMS], outer = 1, inner = 1, k, j, q;
    int on = 0, d;
    size_t ix, ii;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &xt);
    if (!s)
        s = need_in(ox, n, 1, &it);
    if (!s)
        s = attr_i(ox, n, "axis", 0, &axis);
    if (s)
        return s;
    if (xt->kind != OX_CONST || it->kind != OX_CONST)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a gather computed at run time (nnop folds "
                       "gathers of constants)");
    if (!it->i)
        return ox_fail(ox, NNOP_ERR_FORMAT, "indices are not integers");
    axis = norm_axis(axis, xt->ndim);
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
    t = set_const(ox, n, 0, xt->elem, on, od);
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

static nnop_status op_concat(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"axis", NULL};
    ox_tensor *first, *t;
    nnop_value xs[NNOP_MAX_CONCAT_INPUTS], y;
    int64_t axis, od[OX_MAX_DIMS];
    size_t k, nin = n->n_input;
    int all_const = 1, d;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &first);
    if (!s)
        s = attr_i(ox, n, "axis", 1, &axis);
    if (s)
        return s;
    if (ox->opset >= 4 && !attr(n, "axis"))
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute axis is missing");
    axis = norm_axis(axis, first->ndim);
    if (axis < 0 || axis >= first->ndim)
        return ox_fail(ox, NNOP_ERR_FORMAT, "axis out of range");
    memcpy(od, first->dims, sizeof od);
    od[axis] = 0;
    for (k = 0; k < nin; k++) {
        if ((s = need_in(ox, n, k, &t)) != NNOP_OK)
            return s;
        if (t->ndim != first->ndim)
            return ox_fail(ox, NNOP_ERR_FORMAT, "inputs of different ranks");
        for (d = 0; d < t->ndim; d++)
            if (d != axis && t->dims[d] != first->dims[d])
                return ox_fail(ox, NNOP_ERR_FORMAT, "input %zu's dim %d differs", k, d);
        od[axis] += t->dims[axis];
        if (t->kind != OX_CONST)
            all_const = 0;
        else if ((t->f != NULL) != (first->f != NULL))
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
        out = set_const(ox, n, 0, elem, first->ndim, od);
        if (!out)
            return ox->status;
        for (k = 0; k < nin; k++) {
            t = in(ox, n, k);
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
        return set_alias(ox, n, 0, first);
    if (axis != 1)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "axis %lld (nnop concatenates along dim 1)",
                       (long long)axis);
    if (nin > NNOP_MAX_CONCAT_INPUTS)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%zu inputs (nnop: at most %d)", nin,
                       NNOP_MAX_CONCAT_INPUTS);
    for (k = 0; k < nin; k++) {
        s = ox_value_of(ox, in(ox, n, k), &xs[k]);
        if (s)
            return s;
    }
    y = nnop_concat(ox->g, xs, (int)nin);
    return set_value(ox, n, 0, y, first->elem);
}

/* whether a cast from float type a to float type b keeps every value */
static int float_widens(int a, int b)
{
    return ox_is_float_elem(a) && (b == OX_DOUBLE || (b == OX_FLOAT && a != OX_DOUBLE));
}

static nnop_status op_cast(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"to", "saturate", "round_mode", NULL};
    ox_tensor *xt, *t;
    int64_t to, k;
    size_t ix;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &xt);
    if (!s)
        s = attr_i(ox, n, "to", 0, &to);
    if (s)
        return s;
    if (to == xt->elem)
        return set_alias(ox, n, 0, xt);
    if (xt->kind != OX_CONST && float_widens(xt->elem, (int)to)) {
        /* widening a float type keeps every value: the same value, of the new type */
        s = set_alias(ox, n, 0, xt);
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
    t = set_const(ox, n, 0, (int)to, xt->ndim, xt->dims);
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

static nnop_status op_constant_of_shape(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"value", NULL};
    const Onnx__AttributeProto *a = attr(n, "value");
    const int64_t *sh;
    int64_t cnt, k;
    ox_tensor tmp, *t;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = const_ints(ox, n, 0, "shape", &sh, &cnt);
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
        t = set_const(ox, n, 0, tmp.elem, (int)cnt, sh);
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

static nnop_status op_slice(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"starts", "ends", "axes", NULL};
    ox_tensor *xt, *t;
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    int64_t cs, ce, ca = -1, cp = -1, b[OX_MAX_DIMS], step[OX_MAX_DIMS], od[OX_MAX_DIMS], k;
    int d, nsv;
    size_t ix;
    nnop_status s = check_attrs(ox, n, attrs);
    if (!s)
        s = need_in(ox, n, 0, &xt);
    if (s)
        return s;
    if (ox->opset < 10) {
        int c1, c2, c3;
        s = attr_ints(ox, n, "starts", &st, &c1);
        if (!s)
            s = attr_ints(ox, n, "ends", &en, &c2);
        if (!s)
            s = attr_ints(ox, n, "axes", &ax, &c3);
        cs = c1;
        ce = c2;
        ca = c3;
    } else {
        s = const_ints(ox, n, 1, "starts", &st, &cs);
        if (!s)
            s = const_ints(ox, n, 2, "ends", &en, &ce);
        if (!s)
            s = const_ints(ox, n, 3, "axes", &ax, &ca);
        if (!s)
            s = const_ints(ox, n, 4, "steps", &sp, &cp);
    }
    if (s)
        return s;
    if (xt->kind != OX_CONST)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a slice computed at run time (nnop folds "
                       "slices of constants)");
    if (cs < 0 || cs != ce || (ca >= 0 && ca != cs) || (cp >= 0 && cp != cs))
        return ox_fail(ox, NNOP_ERR_FORMAT, "starts, ends, axes and steps differ in length");
    for (d = 0; d < xt->ndim; d++) {
        b[d] = 0;
        step[d] = 1;
        od[d] = xt->dims[d];
    }
    for (nsv = 0; nsv < cs; nsv++) {
        int64_t a = ax ? norm_axis(ax[nsv], xt->ndim) : nsv, dim, lo, hi, sv;
        if (a < 0 || a >= xt->ndim)
            return ox_fail(ox, NNOP_ERR_FORMAT, "axis out of range");
        dim = xt->dims[a];
        sv = sp ? sp[nsv] : 1;
        if (sv == 0)
            return ox_fail(ox, NNOP_ERR_FORMAT, "step 0");
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
    ix = (size_t)(xt - ox->t);
    t = set_const(ox, n, 0, xt->elem, xt->ndim, od);
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

/* ---------------------------------------------------------------- the table */
typedef struct ox_op {
    const char *name;
    ox_op_fn fn;
} ox_op;

static const ox_op ops[] = {
        {"Add", op_binary},
        {"AveragePool", op_pool},
        {"BatchNormalization", op_batchnorm},
        {"Cast", op_cast},
        {"Clip", op_clip},
        {"Concat", op_concat},
        {"Constant", op_constant},
        {"ConstantOfShape", op_constant_of_shape},
        {"Conv", op_conv},
        {"ConvTranspose", op_conv_transpose},
        {"Div", op_binary},
        {"Dropout", op_dropout},
        {"Elu", op_act},
        {"Flatten", op_flatten},
        {"Gather", op_gather},
        {"Gelu", op_act},
        {"Gemm", op_gemm},
        {"GlobalAveragePool", op_global_pool},
        {"GlobalMaxPool", op_global_pool},
        {"GroupNormalization", op_group_norm},
        {"HardSigmoid", op_act},
        {"HardSwish", op_act},
        {"Identity", op_identity},
        {"InstanceNormalization", op_instance_norm},
        {"LayerNormalization", op_layer_norm},
        {"LeakyRelu", op_act},
        {"MatMul", op_gemm},
        {"MaxPool", op_pool},
        {"Mish", op_act},
        {"Mul", op_binary},
        {"PRelu", op_prelu},
        {"Relu", op_act},
        {"Reshape", op_reshape},
        {"Selu", op_act},
        {"Shape", op_shape},
        {"Sigmoid", op_act},
        {"Slice", op_slice},
        {"Softmax", op_softmax},
        {"Squeeze", op_squeeze},
        {"Sub", op_binary},
        {"Sum", op_sum},
        {"Tanh", op_act},
        {"Unsqueeze", op_squeeze},
};

static const ox_op *find_op(const char *name)
{
    size_t k;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strcmp(ops[k].name, name) == 0)
            return &ops[k];
    return NULL;
}

int ox_op_known(const char *op_type)
{
    return op_type && find_op(op_type) != NULL;
}

nnop_status ox_convert_node(ox_ctx *ox, const Onnx__NodeProto *n)
{
    const ox_op *op = find_op(n->op_type ? n->op_type : "");
    if (!op)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "operator not supported by nnop's importer");
    return op->fn(ox, n);
}
