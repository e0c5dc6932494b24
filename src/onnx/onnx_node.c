/* onnx_node.c: what every operator's converter reads and writes: attributes, inputs,
 * outputs (values, aliases, constants), constant int lists and scalars, and the per-channel
 * affine the activations and arithmetic are built from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ---------------------------------------------------------------- attributes */
const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name)
{
    size_t k;
    for (k = 0; k < n->n_attribute; k++)
        if (n->attribute[k]->name && strcmp(n->attribute[k]->name, name) == 0)
            return n->attribute[k];
    return NULL;
}

/* Every attribute of n must be one of known (NULL-terminated): one the converter does not
 * read could change the result. */
nnop_status ox_check_attrs(ox_ctx *ox, const Onnx__NodeProto *n, const char *const *known)
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

nnop_status ox_attr_i(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, int64_t def,
                      int64_t *out)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    *out = def;
    if (!a)
        return NNOP_OK;
    if (!attr_type_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT))
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute '%s' is not an int", name);
    *out = a->i;
    return NNOP_OK;
}

nnop_status ox_attr_f(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, float def, float *out)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    *out = def;
    if (!a)
        return NNOP_OK;
    if (!attr_type_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT))
        return ox_fail(ox, NNOP_ERR_FORMAT, "attribute '%s' is not a float", name);
    *out = a->f;
    return NNOP_OK;
}

/* ints attribute: *count -1 when absent */
nnop_status ox_attr_ints(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, const int64_t **v,
                         int *count)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
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
int ox_attr_s_is(const Onnx__NodeProto *n, const char *name, const char *def, const char *s)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    size_t len = strlen(s);
    if (!a || !a->has_s)
        return strcmp(def, s) == 0;
    return a->s.len == len && memcmp(a->s.data, s, len) == 0;
}

/* ---------------------------------------------------------------- inputs and outputs */
ox_tensor *ox_in(ox_ctx *ox, const Onnx__NodeProto *n, size_t k)
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
int ox_out_used(ox_ctx *ox, const Onnx__NodeProto *n, size_t k)
{
    return has_out(n, k) && ox_used(ox, n->output[k]);
}

nnop_status ox_need_in(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, ox_tensor **out)
{
    *out = ox_in(ox, n, k);
    if (!*out)
        return ox_fail(ox, NNOP_ERR_FORMAT, "input %zu is missing", k);
    return NNOP_OK;
}

/* A run-time float value as input k (a constant becomes an nnop constant). */
nnop_status ox_need_value(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, ox_tensor **t,
                          nnop_value *v)
{
    nnop_status s = ox_need_in(ox, n, k, t);
    return s ? s : ox_value_of(ox, *t, v);
}

/* Only output 0 may be used (the others are training or index outputs). */
nnop_status ox_only_output0(ox_ctx *ox, const Onnx__NodeProto *n, const char *what)
{
    size_t k;
    for (k = 1; k < n->n_output; k++)
        if (ox_out_used(ox, n, k))
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "output %zu ('%s', %s) is not supported", k,
                           n->output[k], what);
    return NNOP_OK;
}

ox_tensor *ox_out_tensor(ox_ctx *ox, const Onnx__NodeProto *n, size_t k)
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

nnop_status ox_set_value(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, nnop_value v, int elem)
{
    nnop_tensor_desc d;
    ox_tensor *t;
    int i;
    nnop_status s = ox_check(ox, v);
    if (s)
        return s;
    t = ox_out_tensor(ox, n, k);
    if (!t)
        return ox->status;
    s = nnop_value_desc(ox->g, v, &d);
    if (s)
        return ox_fail(ox, s, "nnop_value_desc failed");
    t->kind = OX_VALUE;
    t->v = v;
    t->elem = elem;
    t->view_groups = 0;
    t->view_swapped = 0;
    t->view_cl = 0;
    t->view_flat = 0;
    t->view_padded = 0;
    t->ndim = d.ndim;
    for (i = 0; i < d.ndim; i++)
        t->dims[i] = d.dims[i];
    return NNOP_OK;
}

nnop_status ox_ints_moved(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, int64_t since,
                          size_t k, const int64_t **v, int64_t *count)
{
    int c;
    nnop_status s;
    if (ox->opset >= since)
        return ox_const_ints(ox, n, k, name, v, count);
    s = ox_attr_ints(ox, n, name, v, &c);
    *count = c;
    return s;
}

nnop_status ox_made(ox_ctx *ox, int64_t n, const char *what)
{
    if (n < 0 || n > ox_max_made(ox))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "%s of %lld elements (the importer makes at most %lld at load: "
                       "nnop_onnx_options.max_made)",
                       what, (long long)n, (long long)ox_max_made(ox));
    return NNOP_OK;
}

int64_t ox_max_made(const ox_ctx *ox)
{
    return ox->o.max_made > 0 ? ox->o.max_made : OX_MAX_MADE_DEFAULT;
}

/* n more elements of folded constants */
static nnop_status fold_budget(ox_ctx *ox, int64_t n)
{
    if (n > ox_max_made(ox) - ox->folded)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "constants of over %lld elements in all folded at load "
                       "(nnop_onnx_options.max_made)",
                       (long long)ox_max_made(ox));
    ox->folded += n;
    return NNOP_OK;
}

/* output k is src under another name */
nnop_status ox_set_alias(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const ox_tensor *src)
{
    ox_tensor copy = *src, *t;
    size_t idx = (size_t)(src - ox->t);
    nnop_status s;
    t = ox_out_tensor(ox, n, k); /* may move the table */
    if (!t)
        return ox->status;
    copy = ox->t[idx];
    if (copy.kind == OX_VALUE) {
        const char *name = t->name;
        int used = t->used, readers = t->readers;
        *t = copy;
        t->name = name;
        t->used = used;
        t->readers = readers; /* its own readers, not src's (the fused patterns count them) */
        return NNOP_OK;
    }
    t->ndim = copy.ndim;
    memcpy(t->dims, copy.dims, sizeof t->dims);
    s = fold_budget(ox, copy.numel);
    if (!s)
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
ox_tensor *ox_set_const(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, int elem, int ndim,
                        const int64_t *dims)
{
    ox_tensor *t = ox_out_tensor(ox, n, k);
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
    if (ox_numel(dims, ndim) >= 0 && fold_budget(ox, ox_numel(dims, ndim))) {
        t->ndim = 0;
        return NULL;
    }
    if (ox_const_alloc(ox, t, elem)) {
        t->kind = OX_UNSET;
        return NULL;
    }
    return t;
}

void ox_shape_str(char *buf, size_t len, const int64_t *dims, int ndim)
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

int ox_same_dims(const int64_t *a, int an, const int64_t *b, int bn)
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
nnop_status ox_const_ints(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const char *what,
                          const int64_t **v, int64_t *count)
{
    ox_tensor *t = ox_in(ox, n, k);
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
nnop_status ox_const_scalar(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const char *what,
                            double *v, int *present)
{
    ox_tensor *t = ox_in(ox, n, k);
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

int64_t ox_norm_axis(int64_t axis, int rank)
{
    return axis < 0 ? axis + rank : axis;
}

const char *const ox_no_attrs[] = {"consumed_inputs", NULL};

/* ---------------------------------------------------------------- shared building blocks */
/* y = x * a[c] + b[c] per channel (dim 1) as an inference batch-norm with mean 0, var 1,
 * eps 0 (exact: divides by sqrt(1) = 1). a, b: C floats each. */
nnop_status ox_affine(ox_ctx *ox, nnop_value x, const float *a, const float *b, int64_t c,
                      nnop_value *out)
{
    float *buf;
    nnop_value gamma, beta, mean, var;
    nnop_status s = ox_made(ox, c, "a per-channel affine");
    int64_t k;
    if (s)
        return s;
    buf = (float *)malloc((size_t)c * 4 * sizeof(float));
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
nnop_status ox_affine1(ox_ctx *ox, const ox_tensor *xt, nnop_value x, float a, float b,
                       nnop_value *out)
{
    float *ab;
    int64_t c, k;
    nnop_status s;
    if (xt->ndim < 2)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "a scale or shift of a %d-D value (nnop needs a channel dim)", xt->ndim);
    c = xt->dims[1];
    if ((s = ox_made(ox, c, "a per-channel affine")) != NNOP_OK)
        return s;
    ab = (float *)malloc((size_t)c * 2 * sizeof(float));
    if (!ab)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < c; k++) {
        ab[k] = a;
        ab[c + k] = b;
    }
    s = ox_affine(ox, x, ab, ab + c, c, out);
    free(ab);
    return s;
}
