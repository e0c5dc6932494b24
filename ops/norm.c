/* norm.c: inference normalizations with statistics of the input itself: layer norm (over C, or
 * over C, H, W), group norm (instance norm is groups = C) and RMS norm over C: mean and biased
 * variance in double, two passes; affine parameters optional. Local response normalization
 * (LRN) over a window of channels, in double. */
#include <math.h>

#include "ops_common.h"

static nnop_status check_eps(float eps, char *msg, size_t msg_len)
{
    if (!(eps >= 0.0f) || !isfinite(eps)) {
        NNOP_MSG("eps = %g must be a finite value >= 0", (double)eps);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    return NNOP_OK;
}

/* An optional affine parameter: 1-D of C elements, or (per_element) x's shape with dim 0 = 1. */
static nnop_status check_param(const nnop_tensor_desc *x, const nnop_tensor_desc *p,
                               const char *what, int per_element, char *msg, size_t msg_len)
{
    char got[96], want[96];
    int i, ok;
    if (!p)
        return NNOP_OK;
    if (p->ndim == 1 && p->dims[0] == x->dims[1])
        return NNOP_OK;
    ok = per_element && p->ndim == x->ndim && p->dims[0] == 1;
    for (i = 1; ok && i < x->ndim; i++)
        ok = p->dims[i] == x->dims[i];
    if (ok)
        return NNOP_OK;
    /* the whole shapes: naming dim 0 alone misled where another dim was wrong */
    nnop__desc_string(p, got, sizeof got);
    nnop__desc_string(x, want, sizeof want);
    if (per_element)
        NNOP_MSG("wrong shape: %s must be 1-D with C = %lld elements or x's shape with dim 0 = 1 "
                 "(got %s; x is %s)",
                 what, (long long)x->dims[1], got, want);
    else
        NNOP_MSG("wrong %s: %s must be 1-D with C = %lld elements (got %s)",
                 p->ndim == 1 ? "channel count" : "shape", what, (long long)x->dims[1], got);
    return NNOP_ERR_SHAPE;
}

static nnop_status layer_norm_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                    nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop__norm_attr *a = &node->attr.norm;
    int per_element = a->axes == NNOP_NORM_CHW;
    nnop_status st = check_eps(a->eps, msg, msg_len);
    if (st != NNOP_OK)
        return st;
    if (a->axes != NNOP_NORM_C && a->axes != NNOP_NORM_CHW) {
        NNOP_MSG("unknown normalization axes %d (NNOP_NORM_C or NNOP_NORM_CHW)", (int)a->axes);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if ((st = nnop__check_nchw_rank(in[0], msg, msg_len)) != NNOP_OK ||
        (st = check_param(in[0], in[1], "gamma", per_element, msg, msg_len)) != NNOP_OK ||
        (st = check_param(in[0], in[2], "beta", per_element, msg, msg_len)) != NNOP_OK)
        return st;
    *out = *in[0];
    return NNOP_OK;
}

static nnop_status group_norm_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                    nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop__norm_attr *a = &node->attr.norm;
    nnop_status st = check_eps(a->eps, msg, msg_len);
    if (st != NNOP_OK)
        return st;
    if (a->groups < 1) {
        NNOP_MSG("groups = %lld must be >= 1", (long long)a->groups);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if ((st = nnop__check_nchw_rank(in[0], msg, msg_len)) != NNOP_OK)
        return st;
    if (in[0]->dims[1] % a->groups != 0) {
        NNOP_MSG("groups = %lld does not divide C = %lld", (long long)a->groups,
                 (long long)in[0]->dims[1]);
        return NNOP_ERR_SHAPE;
    }
    if ((st = check_param(in[0], in[1], "gamma", 0, msg, msg_len)) != NNOP_OK ||
        (st = check_param(in[0], in[2], "beta", 0, msg, msg_len)) != NNOP_OK)
        return st;
    *out = *in[0];
    return NNOP_OK;
}

static nnop_status rms_norm_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                  nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    nnop_status st = check_eps(node->attr.norm.eps, msg, msg_len);
    if (st != NNOP_OK)
        return st;
    if ((st = nnop__check_nchw_rank(in[0], msg, msg_len)) != NNOP_OK ||
        (st = check_param(in[0], in[1], "gamma", 0, msg, msg_len)) != NNOP_OK)
        return st;
    *out = *in[0];
    return NNOP_OK;
}

/* One normalized box of x: channels [c0, c1), rows [h0, h1), columns [w0, w1) of sample n. */
typedef struct norm_box {
    int64_t n, c0, c1, h0, h1, w0, w1;
} norm_box;

typedef struct norm_job {
    const float *x, *gamma, *beta; /* gamma, beta may be NULL */
    nnop__view4 xv, gv, bv;
    int gamma_1d, beta_1d; /* 1-D of C, else x's shape with dim 0 = 1 */
    double eps;
    int rms; /* RMS norm: no mean subtracted, no beta */
} norm_job;

static double param(const float *p, const nnop__view4 *v, int is_1d, int64_t c, int64_t h,
                    int64_t w, double absent)
{
    if (!p)
        return absent;
    return is_1d ? p[c] : p[nnop__at(v, 0, c, h, w)];
}

static void normalize_box(const norm_job *j, const norm_box *b, float *out)
{
    double sum = 0.0, var = 0.0, mean = 0.0, count, rstd;
    int64_t c, h, w;
    count = (double)((b->c1 - b->c0) * (b->h1 - b->h0) * (b->w1 - b->w0));
    if (!j->rms) {
        for (c = b->c0; c < b->c1; c++)
            for (h = b->h0; h < b->h1; h++)
                for (w = b->w0; w < b->w1; w++)
                    sum += j->x[nnop__at(&j->xv, b->n, c, h, w)];
        mean = sum / count;
    }
    for (c = b->c0; c < b->c1; c++)
        for (h = b->h0; h < b->h1; h++)
            for (w = b->w0; w < b->w1; w++) {
                double d = j->x[nnop__at(&j->xv, b->n, c, h, w)] - mean;
                var += d * d;
            }
    rstd = 1.0 / sqrt(var / count + j->eps);
    for (c = b->c0; c < b->c1; c++)
        for (h = b->h0; h < b->h1; h++)
            for (w = b->w0; w < b->w1; w++) {
                int64_t i = nnop__at(&j->xv, b->n, c, h, w);
                double y = (j->x[i] - mean) * rstd;
                y = y * param(j->gamma, &j->gv, j->gamma_1d, c, h, w, 1.0) +
                    param(j->beta, &j->bv, j->beta_1d, c, h, w, 0.0);
                out[i] = (float)y; /* out has x's layout */
            }
}

static void job_init(norm_job *j, const nnop__node *node, const float *const *in,
                     const nnop_tensor_desc *const *in_desc)
{
    nnop__view4 none = {1, 1, 1, 1, 0, 0, 0, 0};
    j->x = in[0];
    j->xv = nnop__view(in_desc[0]);
    j->gamma = in[1];
    j->gv = in[1] ? nnop__view(in_desc[1]) : none;
    j->gamma_1d = in[1] && in_desc[1]->ndim == 1;
    j->beta = node->n_in > 2 ? in[2] : NULL;
    j->bv = j->beta ? nnop__view(in_desc[2]) : none;
    j->beta_1d = j->beta && in_desc[2]->ndim == 1;
    j->eps = node->attr.norm.eps;
    j->rms = node->op == NNOP_OP_RMS_NORM;
}

/* Layer norm over C and RMS norm: one box per (n, h, w). */
static void per_position_reference(const nnop__node *node, const float *const *in,
                                   const nnop_tensor_desc *const *in_desc, float *out,
                                   const nnop_tensor_desc *out_desc)
{
    norm_job j;
    norm_box b;
    (void)out_desc;
    job_init(&j, node, in, in_desc);
    b.c0 = 0;
    b.c1 = j.xv.c;
    for (b.n = 0; b.n < j.xv.n; b.n++)
        for (b.h0 = 0; b.h0 < j.xv.h; b.h0++)
            for (b.w0 = 0; b.w0 < j.xv.w; b.w0++) {
                b.h1 = b.h0 + 1;
                b.w1 = b.w0 + 1;
                normalize_box(&j, &b, out);
            }
}

/* Layer norm over C, H, W (one group) and group norm: one box per (n, group). */
static void per_group_reference(const nnop__node *node, const float *const *in,
                                const nnop_tensor_desc *const *in_desc, float *out,
                                const nnop_tensor_desc *out_desc)
{
    norm_job j;
    norm_box b;
    int64_t groups = node->op == NNOP_OP_GROUP_NORM ? node->attr.norm.groups : 1, gr, cg;
    (void)out_desc;
    job_init(&j, node, in, in_desc);
    cg = j.xv.c / groups;
    b.h0 = 0;
    b.h1 = j.xv.h;
    b.w0 = 0;
    b.w1 = j.xv.w;
    for (b.n = 0; b.n < j.xv.n; b.n++)
        for (gr = 0; gr < groups; gr++) {
            b.c0 = gr * cg;
            b.c1 = b.c0 + cg;
            normalize_box(&j, &b, out);
        }
}

static void layer_norm_reference(const nnop__node *node, const float *const *in,
                                 const nnop_tensor_desc *const *in_desc, float *out,
                                 const nnop_tensor_desc *out_desc)
{
    if (node->attr.norm.axes == NNOP_NORM_C)
        per_position_reference(node, in, in_desc, out, out_desc);
    else
        per_group_reference(node, in, in_desc, out, out_desc);
}

const nnop__op_def nnop__op_layer_norm = {"layer_norm", NNOP_ROLE_NORM, layer_norm_infer,
                                          layer_norm_reference};
const nnop__op_def nnop__op_group_norm = {"group_norm", NNOP_ROLE_NORM, group_norm_infer,
                                          per_group_reference};
const nnop__op_def nnop__op_rms_norm = {"rms_norm", NNOP_ROLE_NORM, rms_norm_infer,
                                        per_position_reference};

/* ---------------------------------------------------------------- LRN */
static nnop_status lrn_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                             nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop__lrn_attr *a = &node->attr.lrn;
    nnop_status st = nnop__check_nchw_rank(in[0], msg, msg_len);
    if (st != NNOP_OK)
        return st;
    if (a->size < 1) {
        NNOP_MSG("size = %lld must be >= 1", (long long)a->size);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (!isfinite(a->alpha) || !isfinite(a->beta) || !isfinite(a->bias)) {
        NNOP_MSG("alpha = %g, beta = %g and bias = %g must be finite", (double)a->alpha,
                 (double)a->beta, (double)a->bias);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    *out = *in[0];
    return NNOP_OK;
}

/* ONNX's window: channels c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), clipped */
static void lrn_reference(const nnop__node *node, const float *const *in,
                          const nnop_tensor_desc *const *in_desc, float *out,
                          const nnop_tensor_desc *out_desc)
{
    const nnop__lrn_attr *a = &node->attr.lrn;
    nnop__view4 xv = nnop__view(in_desc[0]), yv = nnop__view(out_desc);
    const int64_t before = (a->size - 1) / 2, after = a->size / 2;
    const double k = (double)a->alpha / (double)a->size;
    int64_t n, c, h, w, j;
    for (n = 0; n < xv.n; n++)
        for (c = 0; c < xv.c; c++)
            for (h = 0; h < xv.h; h++)
                for (w = 0; w < xv.w; w++) {
                    int64_t lo = c - before < 0 ? 0 : c - before;
                    int64_t hi = c + after >= xv.c ? xv.c - 1 : c + after;
                    double sum = 0.0, v = in[0][nnop__at(&xv, n, c, h, w)];
                    for (j = lo; j <= hi; j++) {
                        double t = in[0][nnop__at(&xv, n, j, h, w)];
                        sum += t * t;
                    }
                    out[nnop__at(&yv, n, c, h, w)] =
                            (float)(v / pow((double)a->bias + k * sum, (double)a->beta));
                }
}

const nnop__op_def nnop__op_lrn = {"lrn", NNOP_ROLE_STANDALONE, lrn_infer, lrn_reference};
