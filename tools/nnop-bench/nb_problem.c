/* nb_problem.c: problem instances: seeded data, the nnop graph of a descriptor, and the naive
 * float64 reference the checks compare against. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nb.h"

#define SLOT_X    0
#define SLOT_W    1
#define SLOT_BIAS 2
#define SLOT_POST 3 /* + 4 * post index */
#define BN_EPS    1e-5f

void nb_instance_init(nb_instance *in, const nb_problem *p, uint64_t seed)
{
    memset(in, 0, sizeof *in);
    in->p = *p;
    in->seed = seed;
}

void nb_instance_free(nb_instance *in)
{
    int i;
    for (i = 0; i < NB_MAX_TENSORS; i++)
        free(in->host[i]);
    memset(in->host, 0, sizeof in->host);
}

static nnop_status failf(char *err, size_t len, nnop_status s, const char *fmt, ...)
        NB_PRINTF(4, 5);
static nnop_status failf(char *err, size_t len, nnop_status s, const char *fmt, ...)
{
    va_list ap;
    if (err && len) {
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* xorshift64* uniform in [lo, hi) */
static float uniform(uint64_t *s, float lo, float hi)
{
    uint64_t x = *s;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    *s = x;
    return lo + (hi - lo) * (float)((x * 2685821657736338717ull) >> 40) / (float)(1 << 24);
}

/* The host data of slot i for d (made on first use, from the seed and the slot). */
static const void *slot_data(nb_instance *in, int i, const nnop_tensor_desc *d, float lo, float hi)
{
    int64_t n = nnop_tensor_elements(d), j;
    uint64_t s =
            (in->seed + 1u) * 0x9E3779B97F4A7C15ull + (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull;
    float *f;
    if (in->host[i]) {
        if (memcmp(&in->desc[i], d, sizeof *d) != 0)
            return NULL;
        return in->host[i];
    }
    f = (float *)malloc((size_t)n * sizeof *f);
    in->host[i] = malloc(nnop_tensor_bytes(d) ? nnop_tensor_bytes(d) : 1);
    if (!f || !in->host[i]) {
        free(f);
        free(in->host[i]);
        in->host[i] = NULL;
        return NULL;
    }
    for (j = 0; j < n; j++)
        f[j] = uniform(&s, lo, hi);
    nnop_convert(NNOP_F32, f, d->dtype, in->host[i], n);
    free(f);
    in->desc[i] = *d;
    return in->host[i];
}

static nnop_value constant(nb_instance *in, nnop_graph *g, int slot, const nnop_tensor_desc *d,
                           float lo, float hi)
{
    const void *h = slot_data(in, slot, d, lo, hi);
    if (!h)
        return nnop_constant(g, NULL, d, NULL); /* records the failure in the graph */
    return nnop_constant(g, NULL, d, h);
}

static nnop_tensor_desc x_desc(const nb_problem *p)
{
    if (p->op == NB_OP_LINEAR || (p->op == NB_OP_SOFTMAX && !p->four_d))
        return nnop_tensor_2d(p->dt, p->n, p->c);
    return nnop_tensor_4d(p->dt, p->layout, p->n, p->c, p->h, p->w);
}

nnop_status nb_instance_graph(nb_instance *in, nnop_context *ctx, nnop_graph **out, char *err,
                              size_t len)
{
    const nb_problem *p = &in->p;
    nnop_tensor_desc xd = x_desc(p), d;
    nnop_graph *g = NULL;
    nnop_value v, b = nnop_none();
    nnop_status s;
    int i, first_post = 0;
    *out = NULL;
    s = nnop_graph_create(ctx, &g);
    if (s != NNOP_OK)
        return failf(err, len, s, "nnop_graph_create: %s", nnop_context_last_error(ctx));
    in->n_inputs = 0;
    if (!slot_data(in, SLOT_X, &xd, -1.0f, 1.0f)) {
        nnop_graph_destroy(g);
        return failf(err, len, NNOP_ERR_OUT_OF_MEMORY, "out of host memory for the input");
    }
    in->input_slot[in->n_inputs++] = SLOT_X;
    v = nnop_input(g, "x", &xd);
    switch (p->op) {
    case NB_OP_CONV: {
        nnop_conv_params cp;
        float a = 1.0f / sqrtf((float)(p->c / p->groups * p->r * p->s));
        d = nnop_tensor_4d(p->dt, p->layout, p->k, p->c / p->groups, p->r, p->s);
        cp.pad[0] = p->pad[0], cp.pad[1] = p->pad[1];
        cp.stride[0] = p->stride[0], cp.stride[1] = p->stride[1];
        cp.dilation[0] = p->dil[0], cp.dilation[1] = p->dil[1];
        cp.groups = p->groups;
        v = nnop_conv(g, v, constant(in, g, SLOT_W, &d, -a, a), &cp);
        break;
    }
    case NB_OP_POOL: {
        nnop_pool_params pp;
        nnop_pool_params_init(&pp);
        pp.window[0] = p->r, pp.window[1] = p->s;
        pp.stride[0] = p->stride[0], pp.stride[1] = p->stride[1];
        pp.pad[0] = p->pad[0], pp.pad[1] = p->pad[1];
        pp.count_include_pad = p->incpad;
        v = nnop_pool(g, v, p->pool, &pp);
        break;
    }
    case NB_OP_GAP:
        v = nnop_global_avg_pool(g, v);
        break;
    case NB_OP_LINEAR: {
        float a = 1.0f / sqrtf((float)p->c);
        d = nnop_tensor_2d(p->dt, p->k, p->c);
        if (p->npost > 0 && p->post[0].kind == NB_POST_BIAS) {
            nnop_tensor_desc bd = nnop_tensor_1d(p->dt, p->k);
            b = constant(in, g, SLOT_BIAS, &bd, -0.5f, 0.5f);
            first_post = 1;
        }
        v = nnop_linear(g, v, constant(in, g, SLOT_W, &d, -a, a), b);
        break;
    }
    case NB_OP_SOFTMAX:
        v = nnop_softmax(g, v);
        break;
    case NB_OP_FLATTEN:
        v = nnop_flatten(g, v);
        break;
    case NB_OP_DECONV: {
        nnop_conv_transpose_params tp;
        float a = 1.0f / sqrtf((float)(p->c / p->groups * p->r * p->s));
        d = nnop_tensor_4d(p->dt, p->layout, p->c, p->k / p->groups, p->r, p->s);
        for (i = 0; i < 2; i++) {
            tp.pad[i] = p->pad[i], tp.stride[i] = p->stride[i], tp.dilation[i] = p->dil[i];
            tp.output_pad[i] = p->out_pad[i];
        }
        tp.groups = p->groups;
        v = nnop_conv_transpose(g, v, constant(in, g, SLOT_W, &d, -a, a), &tp);
        break;
    }
    case NB_OP_NORM: {
        nnop_tensor_desc cd = nnop_tensor_1d(p->dt, p->c);
        nnop_value ga = constant(in, g, SLOT_W, &cd, 0.8f, 1.2f);
        nnop_value be =
                p->norm == NB_NORM_RMS ? nnop_none() : constant(in, g, SLOT_BIAS, &cd, -0.2f, 0.2f);
        v = p->norm == NB_NORM_GROUP ? nnop_group_norm(g, v, p->groups, ga, be, p->eps)
            : p->norm == NB_NORM_RMS
                    ? nnop_rms_norm(g, v, ga, p->eps)
                    : nnop_layer_norm(g, v, ga, be,
                                      p->norm == NB_NORM_LAYER ? NNOP_NORM_C : NNOP_NORM_CHW,
                                      p->eps);
        break;
    }
    case NB_OP_RESIZE: {
        nnop_resize_params rp;
        memset(&rp, 0, sizeof rp);
        rp.mode = p->resize;
        rp.align_corners = p->align;
        rp.size[0] = p->size[0], rp.size[1] = p->size[1];
        if (!p->size[0]) /* by scale (1 by default) */
            rp.scale[0] = p->scale[0], rp.scale[1] = p->scale[1];
        v = nnop_resize(g, v, &rp);
        break;
    }
    default:
        break;
    }
    for (i = first_post; i < p->npost && nnop_graph_status(g) == NNOP_OK; i++) {
        const nb_post *q = &p->post[i];
        int slot = SLOT_POST + 4 * i;
        nnop_tensor_desc vd, cd;
        if (nnop_value_desc(g, v, &vd) != NNOP_OK)
            break;
        cd = nnop_tensor_1d(p->dt, vd.ndim > 1 ? vd.dims[1] : vd.dims[0]);
        switch (q->kind) {
        case NB_POST_BIAS:
            v = nnop_bias(g, v, constant(in, g, slot, &cd, -0.5f, 0.5f));
            break;
        case NB_POST_BN: {
            nnop_value ga = constant(in, g, slot, &cd, 0.8f, 1.2f);
            nnop_value be = constant(in, g, slot + 1, &cd, -0.2f, 0.2f);
            nnop_value me = constant(in, g, slot + 2, &cd, -0.2f, 0.2f);
            nnop_value va = constant(in, g, slot + 3, &cd, 0.5f, 1.5f);
            v = nnop_batchnorm(g, v, ga, be, me, va, BN_EPS);
            break;
        }
        case NB_POST_ADD: {
            char name[16];
            if (!slot_data(in, slot, &vd, -1.0f, 1.0f)) {
                nnop_graph_destroy(g);
                return failf(err, len, NNOP_ERR_OUT_OF_MEMORY, "out of host memory");
            }
            snprintf(name, sizeof name, "add%d", i);
            in->input_slot[in->n_inputs++] = slot;
            v = nnop_add(g, v, nnop_input(g, name, &vd));
            break;
        }
        case NB_POST_MUL: { /* squeeze-excitation: a second input of N,C,1,1 */
            char name[16];
            nnop_tensor_desc md =
                    vd.ndim == 4 ? nnop_tensor_4d(p->dt, p->layout, vd.dims[0], vd.dims[1], 1, 1)
                                 : vd;
            if (!slot_data(in, slot, &md, 0.0f, 1.0f)) {
                nnop_graph_destroy(g);
                return failf(err, len, NNOP_ERR_OUT_OF_MEMORY, "out of host memory");
            }
            snprintf(name, sizeof name, "mul%d", i);
            in->input_slot[in->n_inputs++] = slot;
            v = nnop_mul(g, v, nnop_input(g, name, &md));
            break;
        }
        case NB_POST_ACT:
            v = nnop_act(g, v, q->act, q->a);
            break;
        case NB_POST_CLAMP:
            v = nnop_clamp(g, v, q->a, q->b);
            break;
        }
    }
    s = nnop_graph_status(g);
    if (s == NNOP_OK)
        s = nnop_output(g, v, "y");
    if (s != NNOP_OK) {
        failf(err, len, s, "%s", nnop_context_last_error(ctx));
        nnop_graph_destroy(g);
        return s;
    }
    *out = g;
    return NNOP_OK;
}

double *nb_to_logical(const nnop_tensor_desc *d, const void *data)
{
    int64_t n = nnop_tensor_elements(d), i, idx[NNOP_MAX_DIMS];
    float *f = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    double *out = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
    int k;
    if (!f || !out || n <= 0 || nnop_convert(d->dtype, data, NNOP_F32, f, n) != NNOP_OK) {
        free(f);
        free(out);
        return NULL;
    }
    memset(idx, 0, sizeof idx);
    for (i = 0; i < n; i++) {
        int64_t off = 0;
        for (k = 0; k < d->ndim; k++)
            off += idx[k] * d->strides[k];
        out[i] = (double)f[off];
        for (k = d->ndim - 1; k >= 0; k--) {
            if (++idx[k] < d->dims[k])
                break;
            idx[k] = 0;
        }
    }
    free(f);
    return out;
}

static double act(nnop_act_kind k, double x, double a)
{
    switch (k) {
    case NNOP_ACT_RELU:
        return x > 0 ? x : 0;
    case NNOP_ACT_RELU6:
        return x < 0 ? 0 : x > 6 ? 6 : x;
    case NNOP_ACT_LEAKY_RELU:
        return x > 0 ? x : a * x;
    case NNOP_ACT_GELU:
        return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case NNOP_ACT_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case NNOP_ACT_SIGMOID:
        return 1.0 / (1.0 + exp(-x));
    case NNOP_ACT_TANH:
        return tanh(x);
    case NNOP_ACT_SILU:
        return x / (1.0 + exp(-x));
    case NNOP_ACT_ELU:
        return x > 0 ? x : a * (exp(x) - 1.0);
    case NNOP_ACT_HARDSWISH:
        return x * (x < -3 ? 0 : x > 3 ? 6 : x + 3) / 6.0;
    case NNOP_ACT_HARDSIGMOID:
        return (x < -3 ? 0 : x > 3 ? 6 : x + 3) / 6.0;
    case NNOP_ACT_MISH:
        return x * tanh(log(1.0 + exp(x)));
    default:
        return x;
    }
}

/* logical value of slot i, or NULL */
static double *slot_logical(const nb_instance *in, int i)
{
    return in->host[i] ? nb_to_logical(&in->desc[i], in->host[i]) : NULL;
}

/* nnop.h's transposed conv, as a scatter: y[n, k, ih*st - p + r*dl, ...] += x[n, c, ih, ...] *
 * w[c, k % (K/g), r, ...] for the channels c of k's group */
static double *ref_deconv(const nb_problem *p, const double *x, const double *w, int64_t *dims)
{
    int64_t oh = nb_deconv_out(p, 0), ow = nb_deconv_out(p, 1), cg = p->c / p->groups;
    int64_t kg = p->k / p->groups, n, c, k, ih, iw, r, t;
    double *y = (double *)calloc((size_t)(p->n * p->k * oh * ow), sizeof *y);
    if (!y)
        return NULL;
    for (n = 0; n < p->n; n++)
        for (c = 0; c < p->c; c++)
            for (k = (c / cg) * kg; k < (c / cg + 1) * kg; k++)
                for (ih = 0; ih < p->h; ih++)
                    for (iw = 0; iw < p->w; iw++)
                        for (r = 0; r < p->r; r++)
                            for (t = 0; t < p->s; t++) {
                                int64_t yh = ih * p->stride[0] - p->pad[0] + r * p->dil[0];
                                int64_t yw = iw * p->stride[1] - p->pad[1] + t * p->dil[1];
                                if (yh < 0 || yh >= oh || yw < 0 || yw >= ow)
                                    continue;
                                y[((n * p->k + k) * oh + yh) * ow + yw] +=
                                        x[((n * p->c + c) * p->h + ih) * p->w + iw] *
                                        w[((c * kg + k % kg) * p->r + r) * p->s + t];
                            }
    dims[1] = p->k, dims[2] = oh, dims[3] = ow;
    return y;
}

/* Normalize one set of sample n: channels [c0, c1) at the positions [q0, q1) of H*W. */
static void ref_norm_set(const nb_problem *p, const double *x, const double *gamma,
                         const double *beta, double *y, int64_t n, int64_t c0, int64_t c1,
                         int64_t q0, int64_t q1)
{
    int64_t hw = p->h * p->w, c, q, cnt = (c1 - c0) * (q1 - q0);
    double mean = 0.0, var = 0.0, inv;
    for (c = c0; c < c1; c++)
        for (q = q0; q < q1; q++)
            mean += x[(n * p->c + c) * hw + q];
    mean = p->norm == NB_NORM_RMS ? 0.0 : mean / (double)cnt;
    for (c = c0; c < c1; c++)
        for (q = q0; q < q1; q++) {
            double d = x[(n * p->c + c) * hw + q] - mean;
            var += d * d;
        }
    inv = 1.0 / sqrt(var / (double)cnt + (double)p->eps);
    for (c = c0; c < c1; c++)
        for (q = q0; q < q1; q++) {
            int64_t j = (n * p->c + c) * hw + q;
            y[j] = (x[j] - mean) * inv * gamma[c] + (beta ? beta[c] : 0.0);
        }
}

static double *ref_norm(const nb_problem *p, const double *x, const double *gamma,
                        const double *beta)
{
    int64_t hw = p->h * p->w, n, q, k, cg = p->c / p->groups;
    double *y = (double *)malloc((size_t)(p->n * p->c * hw) * sizeof *y);
    if (!y)
        return NULL;
    for (n = 0; n < p->n; n++) {
        if (p->norm == NB_NORM_LAYER || p->norm == NB_NORM_RMS)
            for (q = 0; q < hw; q++)
                ref_norm_set(p, x, gamma, beta, y, n, 0, p->c, q, q + 1);
        else if (p->norm == NB_NORM_LAYER_CHW)
            ref_norm_set(p, x, gamma, beta, y, n, 0, p->c, 0, hw);
        else
            for (k = 0; k < p->groups; k++)
                ref_norm_set(p, x, gamma, beta, y, n, k * cg, (k + 1) * cg, 0, hw);
    }
    return y;
}

/* Source index pair and the second's weight along one dim, by nnop.h's (PyTorch's) rules,
 * with the coordinate scale in float as PyTorch computes it. */
static void ref_resize_src(const nb_problem *p, int i, int64_t in, int64_t out, int64_t dst,
                           int64_t *a, int64_t *b, double *wb)
{
    float sc = p->resize == NNOP_RESIZE_BILINEAR && p->align
                       ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f)
               : p->size[0] ? (float)in / (float)out
                            : (float)(1.0 / p->scale[i]);
    float real;
    if (p->resize == NNOP_RESIZE_NEAREST) {
        int64_t src = out == in ? dst : out == 2 * in ? dst / 2 : (int64_t)floorf((float)dst * sc);
        *a = *b = src < in - 1 ? src : in - 1;
        *wb = 0.0;
        return;
    }
    real = p->align ? sc * (float)dst : sc * ((float)dst + 0.5f) - 0.5f;
    real = real < 0.0f ? 0.0f : real;
    *a = (int64_t)real < in - 1 ? (int64_t)real : in - 1;
    *b = *a + 1 < in ? *a + 1 : in - 1;
    *wb = (double)(real - (float)*a);
}

static double *ref_resize(const nb_problem *p, const double *x, int64_t *dims)
{
    int64_t oh = nb_resize_out(p, 0), ow = nb_resize_out(p, 1), nc, h, w;
    double *y = (double *)malloc((size_t)(p->n * p->c * oh * ow) * sizeof *y);
    if (!y)
        return NULL;
    for (nc = 0; nc < p->n * p->c; nc++)
        for (h = 0; h < oh; h++)
            for (w = 0; w < ow; w++) {
                const double *src = x + nc * p->h * p->w;
                int64_t h0, h1, w0, w1;
                double lh, lw;
                ref_resize_src(p, 0, p->h, oh, h, &h0, &h1, &lh);
                ref_resize_src(p, 1, p->w, ow, w, &w0, &w1, &lw);
                y[(nc * oh + h) * ow + w] =
                        (1.0 - lh) * ((1.0 - lw) * src[h0 * p->w + w0] + lw * src[h0 * p->w + w1]) +
                        lh * ((1.0 - lw) * src[h1 * p->w + w0] + lw * src[h1 * p->w + w1]);
            }
    dims[2] = oh, dims[3] = ow;
    return y;
}

double *nb_reference(const nb_instance *in, int64_t *count)
{
    const nb_problem *p = &in->p;
    double *x = slot_logical(in, SLOT_X), *w = NULL, *y = NULL;
    int64_t dims[4] = {p->n, p->c, p->h, p->w}, n, i;
    int ndim = (p->op == NB_OP_LINEAR || (p->op == NB_OP_SOFTMAX && !p->four_d)) ? 2 : 4;
    int j, first_post = 0;
    *count = 0;
    if (!x)
        return NULL;
    if (p->op == NB_OP_CONV || p->op == NB_OP_LINEAR || p->op == NB_OP_DECONV ||
        p->op == NB_OP_NORM) {
        w = slot_logical(in, SLOT_W);
        if (!w) {
            free(x);
            return NULL;
        }
    }
    switch (p->op) {
    case NB_OP_CONV:
    case NB_OP_POOL: {
        int conv = p->op == NB_OP_CONV;
        int64_t oh =
                (p->h + 2 * p->pad[0] - (conv ? p->dil[0] : 1) * (p->r - 1) - 1) / p->stride[0] + 1;
        int64_t ow =
                (p->w + 2 * p->pad[1] - (conv ? p->dil[1] : 1) * (p->s - 1) - 1) / p->stride[1] + 1;
        int64_t oc = conv ? p->k : p->c, cg = p->c / p->groups, kg = p->k / p->groups;
        int64_t b, o, q, r, s, c, ci;
        y = (double *)malloc((size_t)(p->n * oc * oh * ow) * sizeof *y);
        if (!y)
            break;
        for (b = 0; b < p->n; b++)
            for (o = 0; o < oc; o++)
                for (q = 0; q < oh; q++)
                    for (i = 0; i < ow; i++) {
                        double acc = conv ? 0.0 : (p->pool == NNOP_POOL_MAX ? -HUGE_VAL : 0.0);
                        int64_t valid = 0;
                        for (r = 0; r < p->r; r++) {
                            int64_t ih = q * p->stride[0] - p->pad[0] + r * (conv ? p->dil[0] : 1);
                            if (ih < 0 || ih >= p->h)
                                continue;
                            for (s = 0; s < p->s; s++) {
                                int64_t iw =
                                        i * p->stride[1] - p->pad[1] + s * (conv ? p->dil[1] : 1);
                                if (iw < 0 || iw >= p->w)
                                    continue;
                                if (!conv) {
                                    double v = x[((b * p->c + o) * p->h + ih) * p->w + iw];
                                    valid++;
                                    if (p->pool == NNOP_POOL_MAX)
                                        acc = v > acc ? v : acc;
                                    else
                                        acc += v;
                                    continue;
                                }
                                for (c = 0; c < cg; c++) {
                                    ci = (o / kg) * cg + c;
                                    acc += x[((b * p->c + ci) * p->h + ih) * p->w + iw] *
                                           w[((o * cg + c) * p->r + r) * p->s + s];
                                }
                            }
                        }
                        if (!conv && p->pool == NNOP_POOL_AVG)
                            acc /= (double)(p->incpad ? p->r * p->s : (valid ? valid : 1));
                        y[((b * oc + o) * oh + q) * ow + i] = acc;
                    }
        dims[1] = oc, dims[2] = oh, dims[3] = ow;
        break;
    }
    case NB_OP_GAP: {
        int64_t hw = p->h * p->w;
        y = (double *)malloc((size_t)(p->n * p->c) * sizeof *y);
        if (!y)
            break;
        for (n = 0; n < p->n * p->c; n++) {
            double acc = 0.0;
            for (i = 0; i < hw; i++)
                acc += x[n * hw + i];
            y[n] = acc / (double)hw;
        }
        dims[2] = dims[3] = 1;
        break;
    }
    case NB_OP_LINEAR: {
        double *bias = NULL;
        int64_t k, c;
        if (p->npost > 0 && p->post[0].kind == NB_POST_BIAS) {
            bias = slot_logical(in, SLOT_BIAS);
            first_post = 1;
        }
        y = (double *)malloc((size_t)(p->n * p->k) * sizeof *y);
        if (!y || (first_post && !bias)) {
            free(bias);
            free(y);
            y = NULL;
            break;
        }
        for (n = 0; n < p->n; n++)
            for (k = 0; k < p->k; k++) {
                double acc = bias ? bias[k] : 0.0;
                for (c = 0; c < p->c; c++)
                    acc += x[n * p->c + c] * w[k * p->c + c];
                y[n * p->k + k] = acc;
            }
        free(bias);
        dims[1] = p->k;
        break;
    }
    case NB_OP_SOFTMAX: {
        int64_t inner = ndim == 4 ? p->h * p->w : 1, c;
        y = x;
        x = NULL;
        for (n = 0; n < p->n; n++)
            for (i = 0; i < inner; i++) {
                double *base = y + n * p->c * inner + i, m = -HUGE_VAL, sum = 0.0;
                for (c = 0; c < p->c; c++)
                    m = base[c * inner] > m ? base[c * inner] : m;
                for (c = 0; c < p->c; c++)
                    sum += (base[c * inner] = exp(base[c * inner] - m));
                for (c = 0; c < p->c; c++)
                    base[c * inner] /= sum;
            }
        break;
    }
    case NB_OP_FLATTEN:
        y = x;
        x = NULL;
        dims[1] = p->c * p->h * p->w;
        ndim = 2;
        break;
    case NB_OP_DECONV:
        y = ref_deconv(p, x, w, dims);
        break;
    case NB_OP_NORM: {
        double *beta = p->norm == NB_NORM_RMS ? NULL : slot_logical(in, SLOT_BIAS);
        if (p->norm == NB_NORM_RMS || beta)
            y = ref_norm(p, x, w, beta);
        free(beta);
        break;
    }
    case NB_OP_RESIZE:
        y = ref_resize(p, x, dims);
        break;
    default:
        y = x;
        x = NULL;
        break;
    }
    free(x);
    free(w);
    if (!y)
        return NULL;
    n = dims[0] * dims[1] * (ndim == 4 ? dims[2] * dims[3] : 1);
    for (j = first_post; j < p->npost; j++) {
        const nb_post *q = &p->post[j];
        int slot = SLOT_POST + 4 * j;
        int64_t inner = ndim == 4 ? dims[2] * dims[3] : 1;
        double *t[4] = {NULL, NULL, NULL, NULL};
        int k, nt = q->kind == NB_POST_BN ? 4
                                          : (q->kind == NB_POST_BIAS || q->kind == NB_POST_ADD ||
                                             q->kind == NB_POST_MUL);
        for (k = 0; k < nt; k++)
            if (!(t[k] = slot_logical(in, slot + k))) {
                while (k-- > 0)
                    free(t[k]);
                free(y);
                return NULL;
            }
        for (i = 0; i < n; i++) {
            int64_t c = (i / inner) % dims[1];
            double v = y[i];
            switch (q->kind) {
            case NB_POST_BIAS:
                v += t[0][c];
                break;
            case NB_POST_BN:
                v = (v - t[2][c]) / sqrt(t[3][c] + (double)BN_EPS) * t[0][c] + t[1][c];
                break;
            case NB_POST_ADD:
                v += t[0][i];
                break;
            case NB_POST_MUL: /* N,C,1,1 (or the same shape for 2-D) */
                v *= t[0][ndim == 4 ? i / inner : i];
                break;
            case NB_POST_ACT:
                v = act(q->act, v, (double)q->a);
                break;
            case NB_POST_CLAMP:
                v = v < (double)q->a ? (double)q->a : v > (double)q->b ? (double)q->b : v;
                break;
            }
            y[i] = v;
        }
        for (k = 0; k < nt; k++)
            free(t[k]);
    }
    *count = n;
    return y;
}

int nb_compare(const double *got, const double *ref, int64_t n, double tol, double *err)
{
    double rms = 0.0, worst = 0.0;
    int64_t i;
    for (i = 0; i < n; i++)
        rms += ref[i] * ref[i];
    rms = n ? sqrt(rms / (double)n) : 0.0;
    if (rms == 0.0)
        rms = 1e-30;
    for (i = 0; i < n; i++) {
        double e = fabs(got[i] - ref[i]) / (fabs(ref[i]) + rms);
        if (!(e <= worst)) /* NaN included */
            worst = e == e ? e : HUGE_VAL;
    }
    *err = worst;
    return worst <= tol;
}

double nb_tolerance(nnop_dtype t)
{
    return t == NNOP_F16 ? 1e-2 : t == NNOP_BF16 ? 6e-2 : 1e-3;
}
