/* onnx_view.c: channels-last views, ConvNeXt's blocks as exporters write them: Transpose
 * 0,2,3,1, LayerNormalization over the last axis, MatMul by a constant, GELU, the bias Adds,
 * Transpose 0,3,1,2. nnop keeps the value N,C,H,W (in the run layout) and marks the ONNX
 * tensor N,H,W,C (ox_tensor.view_cl). Pointwise ops run on the value with their constants
 * permuted to N,C,H,W; the Transposes, the LayerNorm (nnop's over C) and the MatMul (a 1x1
 * convolution) read views in their own converters; any other op refuses one by name. */
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

static void unmark_view(ox_tensor *t) /* N,H,W,C -> N,C,H,W */
{
    int64_t c = t->dims[3];
    t->dims[3] = t->dims[2];
    t->dims[2] = t->dims[1];
    t->dims[1] = c;
    t->view_cl = 0;
}

int ox_reads_view(ox_ctx *ox, const Onnx__NodeProto *n)
{
    size_t k;
    for (k = 0; k < n->n_input; k++) {
        const ox_tensor *t = ox_in(ox, n, k);
        if (t && t->kind == OX_VALUE && t->view_cl)
            return 1;
    }
    return 0;
}

/* The constant t as seen beside an N,H,W,C view, as N,C,H,W: its dims padded to rank 4 with
 * leading 1s (numpy's broadcast), then axes 0,3,1,2 (malloc'ed into *out). */
static nnop_status permuted_const(ox_ctx *ox, const ox_tensor *t, float **out, int64_t *dims)
{
    int64_t s[4] = {1, 1, 1, 1}, i;
    int d;
    float *f;
    if (t->ndim > 4 || !t->f)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "constant '%s' (%d-D %s) beside a channels-last value (nnop: float, "
                       "at most 4-D)",
                       t->name, t->ndim, ox_elem_name(t->elem));
    for (d = 0; d < t->ndim; d++)
        s[4 - t->ndim + d] = t->dims[d];
    dims[0] = s[0], dims[1] = s[3], dims[2] = s[1], dims[3] = s[2];
    f = (float *)malloc((size_t)(t->numel > 0 ? t->numel : 1) * sizeof *f);
    if (!f)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < t->numel; i++) { /* i over N,C,H,W; its source in N,H,W,C */
        int64_t w = i % dims[3], h = i / dims[3] % dims[2], c = i / (dims[3] * dims[2]) % dims[1],
                b = i / (dims[3] * dims[2] * dims[1]);
        f[i] = t->f[((b * s[1] + h) * s[2] + w) * s[3] + c];
    }
    *out = f;
    return NNOP_OK;
}

/* What a pointwise node's inputs were before they were shown to its converter as N,C,H,W. */
typedef struct saved_input {
    size_t idx; /* into ox->t (the table may move; indices stay) */
    int was_view;
    int ndim;
    int64_t dims[OX_MAX_DIMS];
    float *f;
    int has_v;
    nnop_value v;
} saved_input;

static int is_pointwise(nnop_status (*fn)(ox_ctx *, const Onnx__NodeProto *))
{
    return fn == ox_op_act || fn == ox_op_clip || fn == ox_op_identity || fn == ox_op_dropout ||
           fn == ox_op_binary || fn == ox_op_sum;
}

/* Show input t of n to the converter as N,C,H,W: a view unmarked, a constant permuted (its
 * nnop constant, if made, set aside so that the permuted one is made for this node alone). */
static nnop_status show_nchw(ox_ctx *ox, ox_tensor *t, saved_input *sv)
{
    float *pf = NULL;
    int64_t pd[4];
    nnop_status s;
    memset(sv, 0, sizeof *sv);
    sv->idx = (size_t)(t - ox->t);
    sv->ndim = t->ndim;
    memcpy(sv->dims, t->dims, sizeof sv->dims);
    if (t->kind == OX_VALUE) {
        if (!t->view_cl)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "input '%s' is N,C,H,W beside a channels-last (N,H,W,C) input", t->name);
        sv->was_view = 1;
        unmark_view(t);
        return NNOP_OK;
    }
    if ((s = permuted_const(ox, t, &pf, pd)) != NNOP_OK)
        return s;
    sv->f = t->f, sv->has_v = t->has_v, sv->v = t->v;
    t->f = pf;
    t->ndim = 4;
    memcpy(t->dims, pd, sizeof pd);
    t->has_v = 0;
    return NNOP_OK;
}

static void restore(ox_ctx *ox, const saved_input *sv)
{
    ox_tensor *t = &ox->t[sv->idx];
    if (sv->was_view) {
        t->view_cl = 1;
    } else {
        free(t->f);
        t->f = sv->f, t->has_v = sv->has_v, t->v = sv->v;
    }
    t->ndim = sv->ndim;
    memcpy(t->dims, sv->dims, sizeof t->dims);
}

nnop_status ox_convert_on_views(ox_ctx *ox, const Onnx__NodeProto *n,
                                nnop_status (*fn)(ox_ctx *, const Onnx__NodeProto *))
{
    saved_input sv[8];
    size_t k, j, ns = 0;
    nnop_status s = NNOP_OK;
    if (fn == ox_op_transpose || fn == ox_op_layer_norm || fn == ox_op_gemm)
        return fn(ox, n); /* they read views themselves */
    if (!is_pointwise(fn) || n->n_input > 8)
        for (k = 0; k < n->n_input; k++) {
            const ox_tensor *t = ox_in(ox, n, k);
            if (t && t->kind == OX_VALUE && t->view_cl)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "input '%s' is a channels-last (N,H,W,C) view of an N,C,H,W value "
                               "(nnop takes it in pointwise ops, LayerNormalization over the "
                               "last axis and MatMul by a constant, until a Transpose 0,3,1,2)",
                               t->name);
        }
    for (k = 0; k < n->n_input && s == NNOP_OK; k++) {
        ox_tensor *t = ox_in(ox, n, k);
        int seen = 0;
        if (!t)
            continue;
        for (j = 0; j < ns; j++)
            seen |= sv[j].idx == (size_t)(t - ox->t);
        if (!seen && (s = show_nchw(ox, t, &sv[ns])) == NNOP_OK)
            ns++;
    }
    if (s == NNOP_OK)
        s = fn(ox, n);
    for (j = ns; j-- > 0;)
        restore(ox, &sv[j]);
    for (k = 0; s == NNOP_OK && k < n->n_output; k++) {
        ox_tensor *t = n->output[k] && *n->output[k] ? ox_find(ox, n->output[k]) : NULL;
        if (t && t->kind == OX_VALUE && t->ndim == 4)
            ox_mark_view(t);
    }
    return s;
}
