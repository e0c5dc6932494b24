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
        y[i] = v->kind == DT_ACT     ? act(v, x[i])
               : v->kind == DT_CLAMP ? fmin(fmax(x[i], (double)v->lo), (double)v->hi)
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

static void o_data(const dt_graph *g, const dt_node *v, double *const *val, double *y)
{
    int64_t i, n = dt_elems(v);
    (void)g, (void)val;
    for (i = 0; i < n; i++)
        y[i] = v->data[i];
}

static const op_fn ops[DT_NUM_KINDS] = {o_data,      o_data,    o_conv,      o_channel, o_pointwise,
                                        o_pointwise, o_channel, o_pointwise, o_pool,    o_gap,
                                        o_flatten,   o_linear,  o_softmax};

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

int dt_oracle(const dt_graph *g, double **out)
{
    double *val[DT_MAX_NODES] = {0};
    int i, rc = 0;
    for (i = 0; i < g->n_nodes && rc == 0; i++) {
        val[i] = (double *)malloc((size_t)dt_elems(&g->node[i]) * sizeof(double));
        if (!val[i])
            rc = -1;
        else
            ops[g->node[i].kind](g, &g->node[i], val, val[i]);
        if (rc == 0 && g->node[i].kind != DT_INPUT && g->node[i].kind != DT_CONST)
            rc = round_to_dtype(g->dtype, val[i], dt_elems(&g->node[i]));
    }
    for (i = 0; i < g->n_out; i++) {
        int64_t n = dt_elems(&g->node[g->out[i]]);
        out[i] = rc == 0 ? (double *)malloc((size_t)n * sizeof(double)) : NULL;
        if (!out[i])
            rc = -1;
        else
            memcpy(out[i], val[g->out[i]], (size_t)n * sizeof(double));
        if (rc == 0)
            rc = round_to_dtype(g->dtype, out[i], n);
    }
    for (i = 0; i < g->n_nodes; i++)
        free(val[i]);
    return rc;
}
