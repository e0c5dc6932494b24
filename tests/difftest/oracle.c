/* oracle.c: an independent float64 evaluation of a tester graph, written from the op
 * definitions in nnop.h (and PyTorch's, where the header points to it), in logical N, C, H, W
 * order, so that the CPU backend is not only checked against itself. Plain loops, no cleverness. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difftest.h"

typedef struct shape4 {
    int64_t n, c, h, w;
} shape4;

/* any value as N, C, H, W (2-D: H = W = 1; 1-D: N = 1, C = its length) */
static shape4 shape_of(const dt_node *v)
{
    shape4 s = {1, 1, 1, 1};
    if (v->ndim == 1)
        s.c = v->dims[0];
    else {
        s.n = v->dims[0], s.c = v->dims[1];
        if (v->ndim == 4)
            s.h = v->dims[2], s.w = v->dims[3];
    }
    return s;
}

static int64_t at(const shape4 *s, int64_t n, int64_t c, int64_t h, int64_t w)
{
    return ((n * s->c + c) * s->h + h) * s->w + w;
}

typedef void (*op_fn)(const dt_graph *g, const dt_node *v, double *const *val, double *y);

static void o_conv(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 xs = shape_of(&g->node[v->in[0]]), ws = shape_of(&g->node[v->in[1]]);
    shape4 ys = shape_of(v);
    const double *x = val[v->in[0]], *w = val[v->in[1]];
    const nnop_conv_params *p = &v->conv;
    int64_t kpg = ys.c / p->groups, n, k, oh, ow, c, r, s;
    for (n = 0; n < ys.n; n++)
        for (k = 0; k < ys.c; k++)
            for (oh = 0; oh < ys.h; oh++)
                for (ow = 0; ow < ys.w; ow++) {
                    double acc = 0.0;
                    for (c = 0; c < ws.c; c++)
                        for (r = 0; r < ws.h; r++)
                            for (s = 0; s < ws.w; s++) {
                                int64_t ih = oh * p->stride[0] - p->pad[0] + r * p->dilation[0];
                                int64_t iw = ow * p->stride[1] - p->pad[1] + s * p->dilation[1];
                                if (ih >= 0 && ih < xs.h && iw >= 0 && iw < xs.w)
                                    acc += x[at(&xs, n, (k / kpg) * ws.c + c, ih, iw)] *
                                           w[at(&ws, k, c, r, s)];
                            }
                    y[at(&ys, n, k, oh, ow)] = acc;
                }
}

/* y = x + b[c] (bias), per-channel batch-norm, both over dim 1 */
static void o_channel(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 s = shape_of(v);
    const double *x = val[v->in[0]], *b = val[v->in[1]];
    int64_t n, c, i;
    (void)g;
    for (n = 0; n < s.n; n++)
        for (c = 0; c < s.c; c++)
            for (i = 0; i < s.h * s.w; i++) {
                int64_t j = at(&s, n, c, 0, 0) + i;
                if (v->kind == DT_BIAS)
                    y[j] = x[j] + b[c];
                else
                    y[j] = (x[j] - val[v->in[3]][c]) / sqrt(val[v->in[4]][c] + (double)v->eps) *
                                   b[c] +
                           val[v->in[2]][c];
            }
}

static double act(const dt_node *v, double x)
{
    double a = v->alpha;
    switch (v->act) {
    case NNOP_ACT_RELU:
        return isnan(x) ? x : x > 0 ? x : 0.0;
    case NNOP_ACT_RELU6:
        return isnan(x) ? x : fmin(fmax(x, 0.0), 6.0);
    case NNOP_ACT_LEAKY_RELU:
        return x > 0 ? x : a * x;
    case NNOP_ACT_GELU:
        return x * 0.5 * erfc(-x / sqrt(2.0)); /* x * Phi(x) */
    case NNOP_ACT_GELU_TANH:
        return 0.5 * x *
               (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case NNOP_ACT_SIGMOID:
        return 1.0 / (1.0 + exp(-x));
    case NNOP_ACT_TANH:
        return tanh(x);
    case NNOP_ACT_SILU:
        return x / (1.0 + exp(-x));
    case NNOP_ACT_ELU:
        return x > 0 ? x : a * expm1(x);
    case NNOP_ACT_HARDSWISH:
        return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case NNOP_ACT_HARDSIGMOID:
        return isnan(x) ? x : fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case NNOP_ACT_MISH:
        return x * tanh(log1p(exp(x)));
    default:
        return x;
    }
}

static void o_pointwise(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    int64_t i, n = dt_elems(v);
    const double *x = val[v->in[0]];
    (void)g;
    for (i = 0; i < n; i++)
        y[i] = v->kind == DT_ACT ? act(v, x[i])
               : v->kind == DT_CLAMP
                       ? (isnan(x[i]) ? x[i] /* NaN stays, as in PyTorch */
                                      : fmin(fmax(x[i], (double)v->lo), (double)v->hi))
                       : x[i] + val[v->in[1]][i];
}

/* max that propagates NaN, as PyTorch's max pooling */
static double nan_max(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : fmax(a, b);
}

/* One window: max over the input elements it covers, or their sum over the window (padding
 * included, as PyTorch) or over the elements. */
static double pool_window(const dt_node *v, const double *x, const shape4 *xs, int64_t n, int64_t c,
                          int64_t oh, int64_t ow)
{
    const nnop_pool_params *p = &v->pool;
    double acc = v->pool_kind == NNOP_POOL_MAX ? -INFINITY : 0.0;
    int64_t r, s, count = 0;
    for (r = 0; r < p->window[0]; r++)
        for (s = 0; s < p->window[1]; s++) {
            int64_t ih = oh * p->stride[0] - p->pad[0] + r, iw = ow * p->stride[1] - p->pad[1] + s;
            if (ih < 0 || ih >= xs->h || iw < 0 || iw >= xs->w)
                continue;
            count++;
            if (v->pool_kind == NNOP_POOL_MAX)
                acc = nan_max(acc, x[at(xs, n, c, ih, iw)]);
            else
                acc += x[at(xs, n, c, ih, iw)];
        }
    if (v->pool_kind == NNOP_POOL_MAX)
        return acc;
    return acc / (double)(p->count_include_pad ? p->window[0] * p->window[1] : count);
}

static void o_pool(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 xs = shape_of(&g->node[v->in[0]]), ys = shape_of(v);
    int64_t n, c, h, w;
    for (n = 0; n < ys.n; n++)
        for (c = 0; c < ys.c; c++)
            for (h = 0; h < ys.h; h++)
                for (w = 0; w < ys.w; w++)
                    y[at(&ys, n, c, h, w)] = pool_window(v, val[v->in[0]], &xs, n, c, h, w);
}

static void o_gap(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 xs = shape_of(&g->node[v->in[0]]);
    int64_t nc, i;
    (void)v;
    for (nc = 0; nc < xs.n * xs.c; nc++) {
        double acc = 0.0;
        for (i = 0; i < xs.h * xs.w; i++)
            acc += val[v->in[0]][nc * xs.h * xs.w + i];
        y[nc] = acc / (double)(xs.h * xs.w);
    }
}

/* flatten keeps logical order: a copy */
static void o_flatten(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    (void)g;
    memcpy(y, val[v->in[0]], (size_t)dt_elems(v) * sizeof(double));
}

static void o_linear(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    int64_t rows = v->dims[0], cols = v->dims[1], in = g->node[v->in[0]].dims[1], i, j, t;
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++) {
            double acc = v->in[2] >= 0 ? val[v->in[2]][j] : 0.0;
            for (t = 0; t < in; t++)
                acc += val[v->in[0]][i * in + t] * val[v->in[1]][j * in + t];
            y[i * cols + j] = acc;
        }
}

/* exp(x - max) / sum over dim 1 */
static void o_softmax(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 s = shape_of(v);
    const double *x = val[v->in[0]];
    int64_t n, c, i, hw = s.h * s.w;
    (void)g;
    for (n = 0; n < s.n; n++)
        for (i = 0; i < hw; i++) {
            double mx = -INFINITY, sum = 0.0;
            for (c = 0; c < s.c; c++)
                mx = fmax(mx, x[at(&s, n, c, 0, 0) + i]);
            for (c = 0; c < s.c; c++)
                sum += exp(x[at(&s, n, c, 0, 0) + i] - mx);
            for (c = 0; c < s.c; c++)
                y[at(&s, n, c, 0, 0) + i] = exp(x[at(&s, n, c, 0, 0) + i] - mx) / sum;
        }
}

/* ---------------------------------------------------------------- the issue-15 ops */

/* a op b, b of a's shape or broadcast where its dims are 1 (N,C,1,1 and 1,C,1,1) */
static void o_arith(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 s = shape_of(v), bs = shape_of(&g->node[v->in[1]]);
    const double *a = val[v->in[0]], *b = val[v->in[1]];
    int64_t n, c, h, w;
    for (n = 0; n < s.n; n++)
        for (c = 0; c < s.c; c++)
            for (h = 0; h < s.h; h++)
                for (w = 0; w < s.w; w++) {
                    double x = a[at(&s, n, c, h, w)];
                    double z =
                            b[at(&bs, bs.n == 1 ? 0 : n, c, bs.h == 1 ? 0 : h, bs.w == 1 ? 0 : w)];
                    y[at(&s, n, c, h, w)] = v->arith == DT_MUL   ? x * z
                                            : v->arith == DT_SUB ? x - z
                                                                 : x / z;
                }
}

/* gamma/beta at (c, h, w): 1-D per channel, or 4-D 1,C,H,W per element; absent: dflt */
static double affine(const dt_graph *g, const dt_node *v, double *const *val, int k, int64_t c,
                     int64_t h, int64_t w, double dflt)
{
    const dt_node *p;
    shape4 ps;
    if (v->in[k] < 0)
        return dflt;
    p = &g->node[v->in[k]];
    if (p->ndim == 1)
        return val[v->in[k]][c];
    ps = shape_of(p);
    return val[v->in[k]][at(&ps, 0, c, h, w)];
}

/* One normalization group of sample n: channels [c0, c1) and the spatial positions [p0, p1)
 * (one position for the per-pixel norms): mean and biased variance, or mean square (RMS). */
static void o_norm_group(const dt_graph *g, const dt_node *v, double *const *val, double *y,
                         int64_t n, int64_t c0, int64_t c1, int64_t p0, int64_t p1)
{
    shape4 s = shape_of(v);
    const double *x = val[v->in[0]];
    double sum = 0.0, sq = 0.0, mean, inv;
    int64_t c, q, count = (c1 - c0) * (p1 - p0);
    for (c = c0; c < c1; c++)
        for (q = p0; q < p1; q++)
            sum += x[at(&s, n, c, 0, 0) + q];
    mean = v->norm == DT_RMS_NORM ? 0.0 : sum / (double)count;
    for (c = c0; c < c1; c++)
        for (q = p0; q < p1; q++) {
            double d = x[at(&s, n, c, 0, 0) + q] - mean;
            sq += d * d;
        }
    inv = 1.0 / sqrt(sq / (double)count + (double)v->eps);
    for (c = c0; c < c1; c++)
        for (q = p0; q < p1; q++) {
            int64_t h = q / s.w, w = q % s.w, j = at(&s, n, c, 0, 0) + q;
            y[j] = (x[j] - mean) * inv * affine(g, v, val, 1, c, h, w, 1.0) +
                   affine(g, v, val, 2, c, h, w, 0.0);
        }
}

static void o_norm(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 s = shape_of(v);
    int64_t n, q, k, hw = s.h * s.w;
    for (n = 0; n < s.n; n++) {
        if (v->norm == DT_LAYER_NORM_C || v->norm == DT_RMS_NORM)
            for (q = 0; q < hw; q++)
                o_norm_group(g, v, val, y, n, 0, s.c, q, q + 1);
        else if (v->norm == DT_LAYER_NORM_CHW)
            o_norm_group(g, v, val, y, n, 0, s.c, 0, hw);
        else
            for (k = 0; k < v->groups; k++)
                o_norm_group(g, v, val, y, n, k * (s.c / v->groups), (k + 1) * (s.c / v->groups), 0,
                             hw);
    }
}

static void o_concat(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 s = shape_of(v);
    int64_t n, c, q, base = 0, hw = s.h * s.w;
    int k;
    for (k = 0; k < v->n_in; k++) {
        shape4 xs = shape_of(&g->node[v->in[k]]);
        for (n = 0; n < s.n; n++)
            for (c = 0; c < xs.c; c++)
                for (q = 0; q < hw; q++)
                    y[at(&s, n, base + c, 0, 0) + q] = val[v->in[k]][at(&xs, n, c, 0, 0) + q];
        base += xs.c;
    }
}

/* nnop.h: the coordinate scale in float: 1/scale when given by scale, (in-1)/(out-1) with
 * align_corners, else in/out */
static float resize_scale(const nnop_resize_params *p, int i, int64_t in, int64_t out)
{
    if (p->mode == NNOP_RESIZE_BILINEAR && p->align_corners)
        return out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
    if (p->size[0] == 0 && p->size[1] == 0)
        return (float)(1.0 / p->scale[i]);
    return (float)in / (float)out;
}

/* source indices and the weight of the second along one dim */
static void resize_src(const nnop_resize_params *p, int i, int64_t in, int64_t out, int64_t dst,
                       int64_t *i0, int64_t *i1, double *l1)
{
    float sc = resize_scale(p, i, in, out), real;
    if (p->mode == NNOP_RESIZE_NEAREST) {
        int64_t src = out == in ? dst : out == 2 * in ? dst / 2 : (int64_t)floorf((float)dst * sc);
        *i0 = *i1 = src < in - 1 ? src : in - 1;
        *l1 = 0.0;
        return;
    }
    if (out == in) { /* bilinear along an axis that keeps its size: a copy (nnop.h) */
        *i0 = *i1 = dst;
        *l1 = 0.0;
        return;
    }
    real = p->align_corners ? sc * (float)dst : sc * ((float)dst + 0.5f) - 0.5f;
    if (real < 0.0f)
        real = 0.0f;
    *i0 = (int64_t)real;
    if (*i0 > in - 1)
        *i0 = in - 1;
    *i1 = *i0 + 1 < in ? *i0 + 1 : in - 1;
    *l1 = (double)(real - (float)*i0);
}

static void o_resize(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 s = shape_of(v), xs = shape_of(&g->node[v->in[0]]);
    const double *x = val[v->in[0]];
    int64_t n, c, h, w;
    for (n = 0; n < s.n; n++)
        for (c = 0; c < s.c; c++)
            for (h = 0; h < s.h; h++)
                for (w = 0; w < s.w; w++) {
                    int64_t h0, h1, w0, w1;
                    double lh, lw, top, bottom;
                    resize_src(&v->resize, 0, xs.h, s.h, h, &h0, &h1, &lh);
                    resize_src(&v->resize, 1, xs.w, s.w, w, &w0, &w1, &lw);
                    if (v->resize.mode == NNOP_RESIZE_NEAREST) { /* a copy: 0 x inf is no tap */
                        y[at(&s, n, c, h, w)] = x[at(&xs, n, c, h0, w0)];
                        continue;
                    }
                    top = (1.0 - lw) * x[at(&xs, n, c, h0, w0)] + lw * x[at(&xs, n, c, h0, w1)];
                    bottom = (1.0 - lw) * x[at(&xs, n, c, h1, w0)] + lw * x[at(&xs, n, c, h1, w1)];
                    y[at(&s, n, c, h, w)] = (1.0 - lh) * top + lh * bottom;
                }
}

/* nnop.h's scatter: y[n, k, ih*stride - pad + r*dilation, ...] += x[n, c, ih, ...] *
 * w[c, k % (K/groups), r, ...] for c in k's group */
static void o_deconv(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    shape4 s = shape_of(v), xs = shape_of(&g->node[v->in[0]]), ws = shape_of(&g->node[v->in[1]]);
    const nnop_conv_transpose_params *p = &v->deconv;
    const double *x = val[v->in[0]], *w = val[v->in[1]];
    int64_t cpg = xs.c / p->groups, kpg = s.c / p->groups, n, c, k, ih, iw, r, t;
    memset(y, 0, (size_t)dt_elems(v) * sizeof(double));
    for (n = 0; n < xs.n; n++)
        for (c = 0; c < xs.c; c++)
            for (k = (c / cpg) * kpg; k < (c / cpg + 1) * kpg; k++)
                for (ih = 0; ih < xs.h; ih++)
                    for (iw = 0; iw < xs.w; iw++)
                        for (r = 0; r < ws.h; r++)
                            for (t = 0; t < ws.w; t++) {
                                int64_t oh = ih * p->stride[0] - p->pad[0] + r * p->dilation[0];
                                int64_t ow = iw * p->stride[1] - p->pad[1] + t * p->dilation[1];
                                if (oh >= 0 && oh < s.h && ow >= 0 && ow < s.w)
                                    y[at(&s, n, k, oh, ow)] +=
                                            x[at(&xs, n, c, ih, iw)] * w[at(&ws, c, k % kpg, r, t)];
                            }
}

static void o_data(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    int64_t i, n = dt_elems(v);
    (void)g, (void)val;
    for (i = 0; i < n; i++)
        y[i] = v->data[i];
}

static const op_fn ops[DT_NUM_KINDS] = {o_data,      o_data,    o_conv,      o_channel, o_pointwise,
                                        o_pointwise, o_channel, o_pointwise, o_pool,    o_gap,
                                        o_flatten,   o_linear,  o_softmax,   o_arith,   o_norm,
                                        o_concat,    o_resize,  o_deconv};

/* Values as the library stores them: rounded to the graph's dtype (every node's result,
 * as the header says, like PyTorch eager). */
static int round_to_dtype(nnop_dtype t, double *v, int64_t n)
{
    float *f = (float *)malloc((size_t)n * sizeof(float));
    void *tmp = malloc((size_t)n * 4);
    int64_t i;
    int rc = f && tmp ? 0 : -1;
    for (i = 0; rc == 0 && i < n; i++)
        f[i] = (float)v[i];
    if (rc == 0 && (nnop_convert(NNOP_F32, f, t, tmp, n) != NNOP_OK ||
                    nnop_convert(t, tmp, NNOP_F32, f, n) != NNOP_OK))
        rc = -1;
    for (i = 0; rc == 0 && i < n; i++)
        v[i] = f[i];
    free(f);
    free(tmp);
    return rc;
}

/* The unit roundoff of a dtype: half its spacing of values at 1. */
static double unit_roundoff(nnop_dtype t)
{
    return t == NNOP_F32 ? 0x1p-24 : t == NNOP_F16 ? 0x1p-11 : 0x1p-8;
}

/* With seed != 0, every value that rounds moves by a seeded random fraction in [-2u, 2u] of
 * itself (u: unit roundoff): a result rounded up instead of down, anywhere in the graph. */
static void perturb(nnop_dtype t, uint64_t *seed, double *v, int64_t n)
{
    double u = 2.0 * unit_roundoff(t);
    int64_t i;
    for (i = 0; i < n; i++) {
        *seed ^= *seed << 13, *seed ^= *seed >> 7, *seed ^= *seed << 17;
        v[i] *= 1.0 + u * (2.0 * (double)(*seed >> 11) / 9007199254740992.0 - 1.0);
    }
}

/* Whether node v's result rounds (so that another order or place of rounding moves it): not
 * for data, copies and selections (clamp, ReLU, max pooling, nearest resize, flatten, concat). */
static int rounds(const dt_node *v)
{
    switch (v->kind) {
    case DT_INPUT:
    case DT_CONST:
    case DT_CLAMP:
    case DT_FLATTEN:
    case DT_CONCAT:
        return 0;
    case DT_ACT:
        return v->act != NNOP_ACT_IDENTITY && v->act != NNOP_ACT_RELU && v->act != NNOP_ACT_RELU6;
    case DT_POOL:
        return v->pool_kind != NNOP_POOL_MAX;
    case DT_RESIZE:
        return v->resize.mode != NNOP_RESIZE_NEAREST;
    default:
        return 1;
    }
}

/* Every node's values, rounded as the library stores them (and perturbed with seed != 0),
 * into val[] (the caller frees them, also on failure); 0, or -1 out of memory. */
static int evaluate_ex(const dt_graph *g, double **val, uint64_t seed)
{
    int i;
    for (i = 0; i < g->n_nodes; i++) {
        const dt_node *v = &g->node[i];
        val[i] = (double *)malloc((size_t)dt_elems(v) * sizeof(double));
        if (!val[i])
            return -1;
        ops[v->kind](g, v, val, val[i]);
        if (v->kind != DT_INPUT && v->kind != DT_CONST &&
            round_to_dtype(g->dtype, val[i], dt_elems(v)) != 0)
            return -1;
        if (seed && rounds(v))
            perturb(g->dtype, &seed, val[i], dt_elems(v));
    }
    return 0;
}

int dt_oracle_node(const dt_graph *g, int i, double *const *val, double *y, int round)
{
    const dt_node *v = &g->node[i];
    ops[v->kind](g, v, val, y);
    if (!round || v->kind == DT_INPUT || v->kind == DT_CONST)
        return 0;
    return round_to_dtype(g->dtype, y, dt_elems(v));
}

static int evaluate(const dt_graph *g, double **val)
{
    return evaluate_ex(g, val, 0);
}

/* The outputs' values of val[] into out[] (rounded to the dtype with round_out), then val[]
 * freed; rc: evaluate's answer (nothing is copied unless 0). */
static int take_outputs(const dt_graph *g, double **val, int rc, int round_out, double **out)
{
    int i;
    for (i = 0; i < g->n_out; i++) {
        int64_t n = dt_elems(&g->node[g->out[i]]);
        out[i] = rc == 0 ? (double *)malloc((size_t)n * sizeof(double)) : NULL;
        if (!out[i])
            rc = -1;
        else
            memcpy(out[i], val[g->out[i]], (size_t)n * sizeof(double));
        if (rc == 0 && round_out)
            rc = round_to_dtype(g->dtype, out[i], n);
    }
    for (i = 0; i < g->n_nodes; i++)
        free(val[i]);
    return rc;
}

int dt_oracle_perturbed(const dt_graph *g, uint64_t seed, double **out)
{
    double *val[DT_MAX_NODES] = {0};
    return take_outputs(g, val, evaluate_ex(g, val, seed | 1), 0, out);
}

int dt_oracle(const dt_graph *g, double **out)
{
    double *val[DT_MAX_NODES] = {0};
    return take_outputs(g, val, evaluate(g, val), 1, out);
}

/* The size of the terms each output value sums: for an output of an op that adds products
 * (conv, linear, bias, add) the same op on its inputs' magnitudes (sum |w| |x| + |b|), else
 * |value|. A result that cancelled carries the rounding of its terms, not of itself (issue 10:
 * f16 0.068 from three products of size about 2, where one half-ulp of a term is 0.56e-3), so
 * a difference is also judged against these (dt_agree). One level only: the inputs' own
 * rounding is relative to their values, which the magnitudes here are. */
int dt_oracle_terms(const dt_graph *g, double **out)
{
    double *mag[DT_MAX_NODES] = {0};
    int i, rc = evaluate(g, mag);
    for (i = 0; rc == 0 && i < g->n_nodes; i++) { /* the values become their magnitudes */
        int64_t j, n = dt_elems(&g->node[i]);
        for (j = 0; j < n; j++)
            mag[i][j] = fabs(mag[i][j]);
    }
    for (i = 0; i < g->n_out; i++) {
        const dt_node *v = &g->node[g->out[i]];
        int64_t n = dt_elems(v);
        out[i] = rc == 0 ? (double *)malloc((size_t)n * sizeof(double)) : NULL;
        if (!out[i])
            rc = -1;
        else if (v->kind == DT_CONV || v->kind == DT_LINEAR || v->kind == DT_BIAS ||
                 v->kind == DT_ADD)
            ops[v->kind](g, v, mag, out[i]);
        else
            memcpy(out[i], mag[g->out[i]], (size_t)n * sizeof(double));
    }
    for (i = 0; i < g->n_nodes; i++)
        free(mag[i]);
    return rc;
}
