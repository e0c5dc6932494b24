/* gen.c: seeded random graphs over every op, parameter, dtype and layout of nnop.h, biased to
 * the hard corners: odd and prime channel counts, 1x1 and 1xN images, kernels larger than the
 * input, padding larger than the kernel, asymmetric stride/padding/dilation, groups and
 * depthwise, residual joins, several outputs, outputs at intermediate values, inputs and
 * constants. Every graph is valid by the header's rules; shapes are computed here too, so that
 * the library's shape inference is checked as well. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difftest.h"

typedef struct gen {
    dt_graph *g;
    uint64_t rng;
    unsigned flags; /* DT_GEN_*: every extra random draw is behind a flag test */
} gen;

static const int channel_choices[] = {1, 2, 3, 3, 4, 5, 7, 7, 8, 11, 13, 16, 17, 24, 31, 32};
static const int size_choices[] = {1, 1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int rnd_int(gen *s, int lo, int hi) /* inclusive */
{
    return lo + (int)(dts_next(&s->rng) % (uint64_t)(hi - lo + 1));
}

static int chance(gen *s, int percent)
{
    return rnd_int(s, 0, 99) < percent;
}

static int pick(gen *s, const int *v, int n)
{
    return v[rnd_int(s, 0, n - 1)];
}

int64_t dt_elems(const dt_node *v)
{
    int64_t n = 1;
    int k;
    for (k = 0; k < v->ndim; k++)
        n *= v->dims[k];
    return n;
}

nnop_tensor_desc dt_desc(const dt_graph *g, const dt_node *v)
{
    if (v->ndim == 4)
        return nnop_tensor_4d(g->dtype, g->layout, v->dims[0], v->dims[1], v->dims[2], v->dims[3]);
    if (v->ndim == 2)
        return nnop_tensor_2d(g->dtype, v->dims[0], v->dims[1]);
    return nnop_tensor_1d(g->dtype, v->dims[0]);
}

/* A new node of kind k with the shape of node like (or -1 for none); -1 when the graph is full */
static int add_node(gen *s, dt_kind k, int like)
{
    dt_graph *g = s->g;
    dt_node *v;
    if (g->n_nodes >= DT_MAX_NODES)
        return -1;
    v = &g->node[g->n_nodes];
    memset(v, 0, sizeof *v);
    v->kind = k;
    v->in[0] = v->in[1] = v->in[2] = v->in[3] = v->in[4] = -1;
    if (like >= 0) {
        v->ndim = g->node[like].ndim;
        memcpy(v->dims, g->node[like].dims, sizeof v->dims);
    }
    return g->n_nodes++;
}

static void set_dims(dt_node *v, int ndim, int64_t a, int64_t b, int64_t c, int64_t d)
{
    v->ndim = ndim;
    v->dims[0] = a, v->dims[1] = b, v->dims[2] = c, v->dims[3] = d;
}

/* v's seeded values (and specials) rounded to dtype into v->data, as both backends and the
 * oracle will see them; 0 on success */
static int fill_data(dt_node *v, nnop_dtype dtype)
{
    int64_t n = dt_elems(v);
    void *tmp = malloc((size_t)n * 4);
    if (!tmp)
        return -1;
    dts_fill(v->data, n, v->seed, v->scale, v->positive);
    dts_specials(v->data, n, v->special);
    nnop_convert(NNOP_F32, v->data, dtype, tmp, n);
    nnop_convert(dtype, tmp, NNOP_F32, v->data, n);
    free(tmp);
    return 0;
}

/* Seeded data rounded to the graph's dtype, as both backends and the oracle will see it. */
static int add_data(gen *s, int i, float scale, int positive)
{
    dt_node *v = &s->g->node[i];
    v->seed = dts_next(&s->rng);
    v->scale = scale;
    v->positive = positive;
    /* --special: graph inputs (never constants, nor the positive ones) hold NaN and infinities */
    v->special =
            (s->flags & DT_GEN_SPECIAL) && v->kind == DT_INPUT && !positive ? rnd_int(s, 5, 40) : 0;
    v->data = (float *)malloc((size_t)dt_elems(v) * sizeof(float));
    return v->data ? fill_data(v, s->g->dtype) : -1;
}

int dt_conv_on_cudnn(const dt_graph *g, const dt_node *v)
{
    int64_t c;
    if (v->kind == DT_DECONV)
        return 1;
    if (v->kind != DT_CONV)
        return 0;
    c = g->node[v->in[0]].dims[1];
    return !(v->conv.groups >= 2 && v->conv.groups == c && v->dims[1] == c);
}

/* Half-precision graphs under DT_GEN_SPECIAL_NO_HALF_CONV: no NaN or infinity reaches the data
 * operand of a conv or transposed conv that cuDNN runs (its inputs are refilled without them).
 * cuDNN's fp16/bf16 conv engines do not follow IEEE there (nnop.h, "Numbers"), in PyTorch as
 * in nnop. */
static int spare_half_convs(dt_graph *g)
{
    int feeds_conv[DT_MAX_NODES] = {0}, i, k;
    if (g->dtype == NNOP_F32)
        return 0;
    for (i = g->n_nodes - 1; i >= 0; i--) {
        const dt_node *v = &g->node[i];
        if (dt_conv_on_cudnn(g, v) && v->in[0] >= 0)
            feeds_conv[v->in[0]] = 1;
        for (k = 0; feeds_conv[i] && k < v->n_in; k++)
            if (v->in[k] >= 0)
                feeds_conv[v->in[k]] = 1;
    }
    for (i = 0; i < g->n_nodes; i++) {
        dt_node *v = &g->node[i];
        if (feeds_conv[i] && v->kind == DT_INPUT && v->special) {
            v->special = 0;
            if (fill_data(v, g->dtype) != 0)
                return -1;
        }
    }
    return 0;
}

/* A graph input (kind DT_INPUT) or constant of the given shape; -1 on failure */
static int add_tensor(gen *s, dt_kind k, int ndim, const int64_t *dims, float scale, int positive)
{
    int i = add_node(s, k, -1);
    if (i < 0)
        return -1;
    set_dims(&s->g->node[i], ndim, dims[0], ndim > 1 ? dims[1] : 1, ndim > 2 ? dims[2] : 1,
             ndim > 3 ? dims[3] : 1);
    return add_data(s, i, scale, positive) == 0 ? i : -1;
}

/* Inputs are ~U(-2, 2) without zero, and now and then larger. */
static float input_scale(gen *s)
{
    return chance(s, 10) ? 8.0f : 1.0f;
}

static int add_op1(gen *s, dt_kind k, int x)
{
    int i = add_node(s, k, x);
    if (i >= 0) {
        s->g->node[i].in[0] = x;
        s->g->node[i].n_in = 1;
    }
    return i;
}

static int add_op2(gen *s, dt_kind k, int a, int b)
{
    int i = add_op1(s, k, a);
    if (i >= 0 && b >= 0) {
        s->g->node[i].in[1] = b;
        s->g->node[i].n_in = 2;
    }
    return i < 0 || b < 0 ? -1 : i;
}

static int gen_bias(gen *s, int x)
{
    int64_t c = s->g->node[x].dims[1];
    return add_op2(s, DT_BIAS, x, add_tensor(s, DT_CONST, 1, &c, 1.0f, 0));
}

static int gen_act(gen *s, int x)
{
    static const int kinds[] = {NNOP_ACT_IDENTITY,   NNOP_ACT_RELU,       NNOP_ACT_RELU6,
                                NNOP_ACT_LEAKY_RELU, NNOP_ACT_GELU,       NNOP_ACT_GELU_TANH,
                                NNOP_ACT_SIGMOID,    NNOP_ACT_TANH,       NNOP_ACT_SILU,
                                NNOP_ACT_ELU,        NNOP_ACT_LEAKY_RELU, NNOP_ACT_ELU};
    static const float alphas[] = {0.01f, 0.1f, 0.2f, 0.5f, 1.0f, 1.5f, -0.25f};
    static const int new_kinds[] = {NNOP_ACT_HARDSWISH, NNOP_ACT_HARDSIGMOID, NNOP_ACT_MISH};
    int i = add_op1(s, DT_ACT, x);
    if (i >= 0) {
        s->g->node[i].act = (nnop_act_kind)pick(s, kinds, COUNT(kinds));
        s->g->node[i].alpha = alphas[rnd_int(s, 0, COUNT(alphas) - 1)];
        if ((s->flags & DT_GEN_NEW_OPS) && chance(s, 30))
            s->g->node[i].act = (nnop_act_kind)pick(s, new_kinds, COUNT(new_kinds));
    }
    return i;
}

static int gen_clamp(gen *s, int x)
{
    int i = add_op1(s, DT_CLAMP, x);
    if (i >= 0) {
        dt_node *v = &s->g->node[i];
        v->lo = (float)rnd_int(s, -200, 50) / 100.0f;
        v->hi = chance(s, 5) ? v->lo : v->lo + (float)rnd_int(s, 1, 250) / 100.0f;
    }
    return i;
}

static int gen_batchnorm(gen *s, int x)
{
    static const float eps[] = {0.0f, 1e-5f, 1e-3f, 0.1f};
    int64_t c = s->g->node[x].dims[1];
    int gamma = add_tensor(s, DT_CONST, 1, &c, 1.0f, 0);
    int beta = add_tensor(s, DT_CONST, 1, &c, 1.0f, 0);
    int mean = add_tensor(s, DT_CONST, 1, &c, 1.0f, 0);
    int var = add_tensor(s, DT_CONST, 1, &c, 1.0f, 1);
    int i = add_op2(s, DT_BN, x, gamma);
    if (i < 0 || beta < 0 || mean < 0 || var < 0)
        return -1;
    s->g->node[i].in[2] = beta, s->g->node[i].in[3] = mean, s->g->node[i].in[4] = var;
    s->g->node[i].n_in = 5;
    s->g->node[i].eps = eps[rnd_int(s, 0, COUNT(eps) - 1)];
    return i;
}

static int64_t conv_groups(gen *s, int64_t c)
{
    int r = rnd_int(s, 0, 9), d;
    if (r < 6 || c == 1)
        return 1;
    if (r < 8)
        return c;                    /* depthwise */
    for (d = (int)c - 1; d > 1; d--) /* the largest proper divisor, often c itself for primes */
        if (c % d == 0 && chance(s, 60))
            return d;
    return c;
}

/* Filter size, dilation, stride and padding of one spatial dim of input size h: padding may
 * exceed the kernel, and a kernel larger than the input gets just enough padding. */
static int64_t conv_dim(gen *s, int64_t h, int64_t *r, nnop_conv_params *p, int i)
{
    static const int taps[] = {1, 1, 2, 3, 3, 5, 7}, dil[] = {1, 1, 1, 2, 3},
                     str[] = {1, 1, 1, 2, 3};
    /* tiny: mostly kernels larger than the 1x1-3x3 values, reached through padding */
    static const int tiny_taps[] = {1, 1, 3, 3, 5, 5, 7, 2};
    int64_t extent;
    if (s->flags & DT_GEN_TINY)
        *r = pick(s, tiny_taps, COUNT(tiny_taps));
    else
        *r = pick(s, taps, COUNT(taps));
    p->dilation[i] = pick(s, dil, COUNT(dil));
    p->stride[i] = pick(s, str, COUNT(str));
    p->pad[i] = rnd_int(s, 0, (int)*r + 1);
    extent = (*r - 1) * p->dilation[i] + 1;
    if (h + 2 * p->pad[i] < extent)
        p->pad[i] = (extent - h + 1) / 2;
    return (h + 2 * p->pad[i] - extent) / p->stride[i] + 1;
}

static int gen_conv_with(gen *s, int x, int64_t k, int64_t groups)
{
    nnop_conv_params p;
    const dt_node *xv = &s->g->node[x];
    int64_t r[2], o[2], wd[4];
    int w, i;
    p.groups = groups;
    o[0] = conv_dim(s, xv->dims[2], &r[0], &p, 0);
    o[1] = conv_dim(s, xv->dims[3], &r[1], &p, 1);
    while (k > groups && xv->dims[0] * k * o[0] * o[1] > DT_MAX_ELEMS)
        k -= groups;
    if (xv->dims[0] * k * o[0] * o[1] > DT_MAX_ELEMS)
        return x; /* too large: skip the op */
    wd[0] = k, wd[1] = xv->dims[1] / groups, wd[2] = r[0], wd[3] = r[1];
    w = add_tensor(s, DT_CONST, 4, wd, 1.0f / (float)sqrt((double)(wd[1] * r[0] * r[1])), 0);
    i = add_op2(s, DT_CONV, x, w);
    if (i < 0)
        return -1;
    s->g->node[i].conv = p;
    set_dims(&s->g->node[i], 4, xv->dims[0], k, o[0], o[1]);
    return i;
}

static int gen_conv(gen *s, int x)
{
    int64_t c = s->g->node[x].dims[1], groups = conv_groups(s, c);
    int64_t k = groups == 1 ? pick(s, channel_choices, COUNT(channel_choices))
                            : groups * rnd_int(s, 1, 2);
    int y = gen_conv_with(s, x, k, groups);
    return y >= 0 && y != x && chance(s, 40) ? gen_bias(s, y) : y;
}

/* A 1x1 convolution (4-D) or linear layer (2-D) keeping the shape: a residual branch */
static int gen_same_shape_producer(gen *s, int x)
{
    const dt_node *xv = &s->g->node[x];
    int64_t wd[4];
    int w, i;
    if (xv->dims[1] * xv->dims[1] > DT_MAX_ELEMS)
        return gen_act(s, x);
    if (xv->ndim == 2) {
        wd[0] = wd[1] = xv->dims[1];
        w = add_tensor(s, DT_CONST, 2, wd, 1.0f / (float)sqrt((double)wd[1]), 0);
        return add_op2(s, DT_LINEAR, x, w);
    }
    wd[0] = wd[1] = xv->dims[1], wd[2] = wd[3] = 1;
    w = add_tensor(s, DT_CONST, 4, wd, 1.0f / (float)sqrt((double)wd[1]), 0);
    i = add_op2(s, DT_CONV, x, w);
    if (i >= 0) {
        nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
        s->g->node[i].conv = p;
    }
    return i;
}

/* An earlier op value of x's shape (a residual join), -1 if none or not chosen */
static int earlier_same_shape(gen *s, int x)
{
    const dt_graph *g = s->g;
    int i;
    for (i = rnd_int(s, 0, x); i < x; i++) {
        const dt_node *v = &g->node[i];
        if (v->kind != DT_CONST && v->ndim == g->node[x].ndim &&
            memcmp(v->dims, g->node[x].dims, sizeof v->dims) == 0 && chance(s, 50))
            return i;
    }
    return -1;
}

static int gen_add(gen *s, int x)
{
    const dt_node *xv = &s->g->node[x];
    int r = rnd_int(s, 0, 9), a = x, b = earlier_same_shape(s, x);
    if (b < 0 || r >= 4) {
        if (r < 7) { /* [act] + [1x1 conv]: x has two consumers */
            a = chance(s, 70) ? gen_act(s, x) : x;
            b = a >= 0 ? gen_same_shape_producer(s, x) : -1;
        } else {
            b = add_tensor(s, r < 9 ? DT_INPUT : DT_CONST, xv->ndim, xv->dims, input_scale(s), 0);
        }
    }
    if (a < 0 || b < 0)
        return -1;
    return chance(s, 50) ? add_op2(s, DT_ADD, a, b) : add_op2(s, DT_ADD, b, a);
}

/* Window, stride and padding of one dim (pad <= window / 2, window within the padded input;
 * a quarter of them padded more after, pad_end < window, the last window not all padding) */
static int64_t pool_dim(gen *s, int64_t h, nnop_pool_params *p, int i)
{
    int64_t o;
    p->window[i] = rnd_int(s, 1, 4);
    p->pad[i] = rnd_int(s, 0, (int)p->window[i] / 2);
    p->stride[i] = rnd_int(s, 1, 3);
    p->pad_end[i] = chance(s, 25) ? rnd_int(s, 0, (int)p->window[i] - 1) : 0;
    if (h + 2 * p->pad[i] + p->pad_end[i] < p->window[i])
        p->window[i] = h + 2 * p->pad[i] + p->pad_end[i];
    o = (h + 2 * p->pad[i] + p->pad_end[i] - p->window[i]) / p->stride[i] + 1;
    if (p->pad_end[i] >= p->window[i] || (o - 1) * p->stride[i] - p->pad[i] >= h) {
        p->pad_end[i] = 0;
        if (h + 2 * p->pad[i] < p->window[i])
            p->window[i] = h + 2 * p->pad[i];
        o = (h + 2 * p->pad[i] - p->window[i]) / p->stride[i] + 1;
    }
    return o;
}

static int gen_pool(gen *s, int x)
{
    int i = add_op1(s, DT_POOL, x);
    dt_node *v;
    if (i < 0)
        return -1;
    v = &s->g->node[i];
    v->pool_kind = chance(s, 50) ? NNOP_POOL_MAX : NNOP_POOL_AVG;
    v->pool.count_include_pad = chance(s, 50);
    v->dims[2] = pool_dim(s, v->dims[2], &v->pool, 0);
    v->dims[3] = pool_dim(s, v->dims[3], &v->pool, 1);
    return i;
}

static int gen_reduce(gen *s, int x, dt_kind k)
{
    int i = add_op1(s, k, x);
    dt_node *v;
    if (i < 0)
        return -1;
    v = &s->g->node[i];
    if (k == DT_GAP)
        v->dims[2] = v->dims[3] = 1;
    else
        set_dims(v, 2, v->dims[0], v->dims[1] * v->dims[2] * v->dims[3], 1, 1);
    return i;
}

static int gen_linear(gen *s, int x)
{
    int64_t in = s->g->node[x].dims[1], wd[2];
    int w, b = -1, i;
    wd[0] = pick(s, channel_choices, COUNT(channel_choices));
    while (wd[0] > 1 && wd[0] * in > DT_MAX_ELEMS)
        wd[0] /= 2;
    if (wd[0] * in > DT_MAX_ELEMS)
        return x;
    wd[1] = in;
    w = add_tensor(s, DT_CONST, 2, wd, 1.0f / (float)sqrt((double)in), 0);
    if (chance(s, 70))
        b = add_tensor(s, DT_CONST, 1, wd, 1.0f, 0);
    i = add_op2(s, DT_LINEAR, x, w);
    if (i < 0)
        return -1;
    s->g->node[i].in[2] = b;
    s->g->node[i].n_in = 3;
    s->g->node[i].dims[1] = wd[0];
    return i;
}

/* ---------------------------------------------------------------- the issue-15 ops */

/* x * b, x - b or x / b: b of x's shape (an earlier value, a new input or constant), or for
 * 4-D x a per-sample (N,C,1,1) or per-channel (1,C,1,1) constant or input; divisors positive */
static int gen_arith(gen *s, int x)
{
    const dt_node *xv = &s->g->node[x];
    int64_t d[4];
    int i, b, form = xv->ndim == 4 ? rnd_int(s, 0, 2) : 0;
    dt_arith op = (dt_arith)rnd_int(s, 0, 2);
    memcpy(d, xv->dims, sizeof d);
    if (form == 1)
        d[2] = d[3] = 1;
    else if (form == 2)
        d[0] = d[2] = d[3] = 1;
    b = form == 0 && op != DT_DIV ? earlier_same_shape(s, x) : -1;
    if (b < 0)
        b = add_tensor(s, chance(s, 50) ? DT_INPUT : DT_CONST, xv->ndim, d, 1.0f, op == DT_DIV);
    i = add_op2(s, DT_ARITH, x, b);
    if (i >= 0)
        s->g->node[i].arith = op;
    return i;
}

/* The largest divisor of c up to c (often c itself, sometimes 1) */
static int64_t some_divisor(gen *s, int64_t c)
{
    int64_t d;
    for (d = c; d > 1; d--)
        if (c % d == 0 && chance(s, 40))
            return d;
    return 1;
}

static int gen_norm(gen *s, int x)
{
    static const float eps[] = {1e-6f, 1e-5f, 1e-3f, 0.1f};
    const dt_node *xv = &s->g->node[x];
    int64_t c = xv->dims[1], d[4];
    int i, gamma = -1, beta = -1;
    dt_norm kind = (dt_norm)rnd_int(s, 0, 3);
    if (kind == DT_LAYER_NORM_CHW && xv->ndim != 4)
        kind = DT_LAYER_NORM_C;
    if (chance(s, 70)) {
        if (kind == DT_LAYER_NORM_CHW && chance(s, 50)) { /* per element: 1,C,H,W */
            d[0] = 1, d[1] = c, d[2] = xv->dims[2], d[3] = xv->dims[3];
            gamma = add_tensor(s, DT_CONST, 4, d, 1.0f, 0);
            beta = chance(s, 70) ? add_tensor(s, DT_CONST, 4, d, 1.0f, 0) : -1;
        } else {
            gamma = add_tensor(s, DT_CONST, 1, &c, 1.0f, 0);
            beta = kind != DT_RMS_NORM && chance(s, 70) ? add_tensor(s, DT_CONST, 1, &c, 1.0f, 0)
                                                        : -1;
        }
    }
    i = add_op1(s, DT_NORM, x);
    if (i < 0)
        return -1;
    s->g->node[i].norm = kind;
    s->g->node[i].in[1] = gamma, s->g->node[i].in[2] = beta, s->g->node[i].n_in = 3;
    s->g->node[i].eps = eps[rnd_int(s, 0, COUNT(eps) - 1)];
    s->g->node[i].groups = kind == DT_GROUP_NORM ? some_divisor(s, c) : 1;
    return i;
}

/* x with 1 to 3 more operands along C: new inputs or constants of other channel counts,
 * x again, or an activation of x (x has two consumers) */
static int gen_concat(gen *s, int x)
{
    const dt_node *xv = &s->g->node[x];
    int n = rnd_int(s, 2, 4), k, i, ops[4];
    int64_t c = xv->dims[1], per = dt_elems(xv) / xv->dims[1];
    ops[0] = x;
    for (k = 1; k < n; k++) {
        int r = rnd_int(s, 0, 9);
        int64_t d[4];
        memcpy(d, xv->dims, sizeof d);
        if (r < 2) {
            ops[k] = x;
        } else if (r < 4) {
            ops[k] = gen_act(s, x);
        } else {
            d[1] = pick(s, channel_choices, COUNT(channel_choices));
            ops[k] = add_tensor(s, r < 7 ? DT_INPUT : DT_CONST, xv->ndim, d, input_scale(s), 0);
        }
        if (ops[k] < 0)
            return -1;
        c += s->g->node[ops[k]].dims[1];
    }
    if (c * per > DT_MAX_ELEMS)
        return x;        /* too large: skip the op */
    if (chance(s, 50)) { /* x not first */
        int t = ops[0], j = rnd_int(s, 0, n - 1);
        ops[0] = ops[j], ops[j] = t;
    }
    i = add_node(s, DT_CONCAT, x);
    if (i < 0)
        return -1;
    for (k = 0; k < n; k++)
        s->g->node[i].in[k] = ops[k];
    s->g->node[i].n_in = n;
    s->g->node[i].dims[1] = c;
    return i;
}

static int gen_resize(gen *s, int x)
{
    static const double scales[] = {0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0};
    const dt_node *xv = &s->g->node[x];
    nnop_resize_params p;
    int64_t o[2];
    int i, k;
    memset(&p, 0, sizeof p);
    p.mode = chance(s, 50) ? NNOP_RESIZE_NEAREST : NNOP_RESIZE_BILINEAR;
    p.align_corners = p.mode == NNOP_RESIZE_BILINEAR && chance(s, 50);
    if (chance(s, 50) || p.align_corners) {
        for (k = 0; k < 2; k++)
            o[k] = p.size[k] = rnd_int(s, 1, 2 * (int)xv->dims[2 + k] + 1);
    } else {
        for (k = 0; k < 2; k++) {
            p.scale[k] = scales[rnd_int(s, 0, COUNT(scales) - 1)];
            o[k] = (int64_t)floor((double)xv->dims[2 + k] * p.scale[k]);
            if (o[k] < 1) {
                p.scale[k] = 1.0;
                o[k] = xv->dims[2 + k];
            }
        }
    }
    if (xv->dims[0] * xv->dims[1] * o[0] * o[1] > DT_MAX_ELEMS)
        return x;
    i = add_op1(s, DT_RESIZE, x);
    if (i < 0)
        return -1;
    s->g->node[i].resize = p;
    s->g->node[i].dims[2] = o[0], s->g->node[i].dims[3] = o[1];
    return i;
}

/* Transposed conv: stride 1-3, dilation 1-2, output padding below max(stride, dilation),
 * padding up to what keeps the output at least 1 */
static int gen_deconv(gen *s, int x)
{
    static const int taps[] = {1, 2, 3, 3, 4, 5};
    const dt_node *xv = &s->g->node[x];
    nnop_conv_transpose_params p;
    int64_t c = xv->dims[1], r[2], o[2], wd[4], kpg;
    int k, w, i;
    p.groups = chance(s, 30) ? some_divisor(s, c) : 1;
    kpg = rnd_int(s, 1, 3) * (chance(s, 50) ? 1 : 5);
    for (k = 0; k < 2; k++) {
        int64_t full;
        r[k] = pick(s, taps, COUNT(taps));
        p.stride[k] = rnd_int(s, 1, 3);
        p.dilation[k] = rnd_int(s, 1, 2);
        p.output_pad[k] =
                rnd_int(s, 0, (int)(p.stride[k] > p.dilation[k] ? p.stride[k] : p.dilation[k]) - 1);
        full = (xv->dims[2 + k] - 1) * p.stride[k] + p.dilation[k] * (r[k] - 1) + p.output_pad[k];
        p.pad[k] = rnd_int(s, 0, (int)(full / 2 < 4 ? full / 2 : 4));
        o[k] = full - 2 * p.pad[k] + 1;
    }
    while (kpg > 1 && xv->dims[0] * p.groups * kpg * o[0] * o[1] > DT_MAX_ELEMS)
        kpg--;
    if (xv->dims[0] * p.groups * kpg * o[0] * o[1] > DT_MAX_ELEMS)
        return x;
    wd[0] = c, wd[1] = kpg, wd[2] = r[0], wd[3] = r[1];
    w = add_tensor(s, DT_CONST, 4, wd, 1.0f / (float)sqrt((double)(c / p.groups * r[0] * r[1])), 0);
    i = add_op2(s, DT_DECONV, x, w);
    if (i < 0)
        return -1;
    s->g->node[i].deconv = p;
    set_dims(&s->g->node[i], 4, xv->dims[0], p.groups * kpg, o[0], o[1]);
    return i;
}

/* One of the issue-15 ops after x */
static int gen_new_op(gen *s, int x)
{
    int r = rnd_int(s, 0, 99);
    if (s->g->node[x].ndim == 2)
        return r < 50 ? gen_arith(s, x) : r < 80 ? gen_norm(s, x) : gen_concat(s, x);
    return r < 25   ? gen_arith(s, x)
           : r < 45 ? gen_norm(s, x)
           : r < 65 ? gen_concat(s, x)
           : r < 82 ? gen_resize(s, x)
                    : gen_deconv(s, x);
}

/* A grouped or depthwise 1x1 conv (pad 0 or 1) keeping the channels: the class of the
 * squeeze-excitation and mobile blocks on 1x1 values */
static int gen_grouped_1x1(gen *s, int x)
{
    const dt_node *xv = &s->g->node[x];
    int64_t c = xv->dims[1], groups = conv_groups(s, c), wd[4];
    nnop_conv_params p;
    int w, i;
    memset(&p, 0, sizeof p);
    p.groups = groups;
    p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = rnd_int(s, 1, 2), p.dilation[1] = rnd_int(s, 1, 2);
    if (chance(s, 30))
        p.pad[0] = rnd_int(s, 0, 1), p.pad[1] = rnd_int(s, 0, 1);
    if (xv->dims[0] * c * (xv->dims[2] + 2 * p.pad[0]) * (xv->dims[3] + 2 * p.pad[1]) >
        DT_MAX_ELEMS)
        return gen_act(s, x);
    wd[0] = c, wd[1] = c / groups, wd[2] = wd[3] = 1;
    w = add_tensor(s, DT_CONST, 4, wd, 1.0f / (float)sqrt((double)wd[1]), 0);
    i = add_op2(s, DT_CONV, x, w);
    if (i < 0)
        return -1;
    s->g->node[i].conv = p;
    set_dims(&s->g->node[i], 4, xv->dims[0], c, xv->dims[2] + 2 * p.pad[0],
             xv->dims[3] + 2 * p.pad[1]);
    return i;
}

/* A strided conv or pool, or a GAP: a value shrunk towards 1x1 */
static int gen_shrink(gen *s, int x)
{
    const dt_node *xv = &s->g->node[x];
    int r = rnd_int(s, 0, 9);
    if (xv->dims[2] * xv->dims[3] == 1)
        return gen_grouped_1x1(s, x);
    if (r < 4)
        return gen_reduce(s, x, DT_GAP);
    return r < 7 ? gen_pool(s, x) : gen_conv(s, x);
}

/* One op after x in a tiny-spatial graph: convs and residual joins on 1x1 and 2x2 values;
 * on a 1x1 value mostly the blocks of a network's head (1x1 convs with residual adds, grouped
 * 1x1 convs, pointwise chains), as exporters' squeeze-excitation and classifier tails are */
static int gen_tiny_step(gen *s, int x, int r)
{
    const dt_node *xv = &s->g->node[x];
    if (xv->ndim == 4 && xv->dims[2] * xv->dims[3] == 1)
        return r < 30   ? gen_add(s, x)
               : r < 44 ? gen_grouped_1x1(s, x)
               : r < 54 ? gen_conv(s, x)
               : r < 64 ? gen_act(s, x)
               : r < 71 ? gen_clamp(s, x)
               : r < 78 ? gen_bias(s, x)
               : r < 84 ? gen_batchnorm(s, x)
               : r < 93 ? gen_reduce(s, x, DT_FLATTEN)
                        : add_op1(s, DT_SOFTMAX, x);
    return r < 26   ? gen_conv(s, x)
           : r < 36 ? gen_shrink(s, x)
           : r < 44 ? gen_grouped_1x1(s, x)
           : r < 50 ? gen_bias(s, x)
           : r < 60 ? gen_act(s, x)
           : r < 65 ? gen_clamp(s, x)
           : r < 70 ? gen_batchnorm(s, x)
           : r < 85 ? gen_add(s, x)
           : r < 92 ? gen_reduce(s, x, DT_FLATTEN)
                    : add_op1(s, DT_SOFTMAX, x);
}

/* One op after x: the next value of the main chain */
static int gen_step(gen *s, int x)
{
    int r = rnd_int(s, 0, 99);
    if ((s->flags & DT_GEN_NEW_OPS) && chance(s, 35))
        return gen_new_op(s, x);
    if (s->g->node[x].ndim == 2) {
        return r < 30   ? gen_linear(s, x)
               : r < 40 ? gen_bias(s, x)
               : r < 55 ? gen_act(s, x)
               : r < 62 ? gen_clamp(s, x)
               : r < 70 ? gen_batchnorm(s, x)
               : r < 85 ? gen_add(s, x)
                        : add_op1(s, DT_SOFTMAX, x);
    }
    if (s->flags & DT_GEN_TINY)
        return gen_tiny_step(s, x, r);
    return r < 24   ? gen_conv(s, x)
           : r < 32 ? gen_bias(s, x)
           : r < 45 ? gen_act(s, x)
           : r < 50 ? gen_clamp(s, x)
           : r < 57 ? gen_batchnorm(s, x)
           : r < 69 ? gen_add(s, x)
           : r < 79 ? gen_pool(s, x)
           : r < 83 ? gen_reduce(s, x, DT_GAP)
           : r < 89 ? gen_reduce(s, x, DT_FLATTEN)
                    : add_op1(s, DT_SOFTMAX, x);
}

static int first_input(gen *s)
{
    int64_t d[4];
    d[0] = rnd_int(s, 1, 3);
    d[1] = pick(s, channel_choices, COUNT(channel_choices));
    if (chance(s, 12)) /* a 2-D start: N x features */
        return add_tensor(s, DT_INPUT, 2, d, input_scale(s), 0);
    d[2] = pick(s, size_choices, COUNT(size_choices));
    d[3] = pick(s, size_choices, COUNT(size_choices));
    if (s->flags & DT_GEN_TINY) /* 1x1 to 3x3 mostly, else shrunk by the steps */
        d[2] = rnd_int(s, 1, chance(s, 70) ? 3 : 9), d[3] = rnd_int(s, 1, chance(s, 70) ? 3 : 9);
    if (chance(s, 15)) /* 1xN and Nx1 images */
        d[rnd_int(s, 2, 3)] = 1;
    return add_tensor(s, DT_INPUT, 4, d, input_scale(s), 0);
}

static int is_output(const dt_graph *g, int v)
{
    int i;
    for (i = 0; i < g->n_out; i++)
        if (g->out[i] == v)
            return 1;
    return 0;
}

/* A value of one of the kinds (inputs and constants, or ops) not yet an output; -1 if none */
static int pick_value(gen *s, int want_data)
{
    const dt_graph *g = s->g;
    int start = rnd_int(s, 0, g->n_nodes - 1), k;
    for (k = 0; k < g->n_nodes; k++) {
        int i = (start + k) % g->n_nodes;
        int data = g->node[i].kind == DT_INPUT || g->node[i].kind == DT_CONST;
        if (data == want_data && !is_output(g, i))
            return i;
    }
    return -1;
}

static void add_output(dt_graph *g, int v)
{
    if (v >= 0 && g->n_out < DT_MAX_OUT && !is_output(g, v))
        g->out[g->n_out++] = v;
}

/* The last value always; sometimes intermediate values, an input or a constant too, in a
 * random order */
static void gen_outputs(gen *s, int last)
{
    dt_graph *g = s->g;
    if (chance(s, 40))
        add_output(g, pick_value(s, 0));
    add_output(g, last);
    if (chance(s, 20))
        add_output(g, pick_value(s, 0));
    if (chance(s, 8))
        add_output(g, pick_value(s, 1));
}

/* nnop.h: a graph none of whose 4-D inputs or constants states its layout (all N x 1 x 1 x 1
 * and the like) is NCHW, whatever layout its descriptors were made with; the runs declare the
 * case's layout (nnop_graph_set_layout), so the old seeds' graphs say NCHW there. */
static void settle_graph_layout(dt_graph *g)
{
    int i;
    for (i = 0; i < g->n_nodes; i++) {
        const dt_node *v = &g->node[i];
        if ((v->kind == DT_INPUT || v->kind == DT_CONST) && v->ndim == 4) {
            nnop_tensor_desc a = dts_desc(g->dtype, NNOP_NCHW, 4, v->dims);
            nnop_tensor_desc b = dts_desc(g->dtype, NNOP_NHWC, 4, v->dims);
            if (!dts_same_layout(&a, &b))
                return;
        }
    }
    g->layout = NNOP_NCHW;
}

int dt_generate(uint64_t seed, dt_graph *g)
{
    return dt_generate_ex(seed, 0, g);
}

int dt_generate_ex(uint64_t seed, unsigned flags, dt_graph *g)
{
    gen s;
    int x, steps, i;
    memset(g, 0, sizeof *g);
    s.g = g;
    s.rng = seed;
    s.flags = flags;
    g->seed = seed;
    g->flags = flags;
    g->dtype = (nnop_dtype)rnd_int(&s, 0, 2);
    g->layout = (nnop_layout)rnd_int(&s, 0, 1);
    x = first_input(&s);
    steps = (flags & DT_GEN_TINY) ? rnd_int(&s, 3, 14) : rnd_int(&s, 1, 10);
    for (i = 0; i < steps && x >= 0 && g->n_nodes + 8 < DT_MAX_NODES; i++)
        x = gen_step(&s, x);
    if (x < 0)
        return -1;
    gen_outputs(&s, x);
    if (!(flags & DT_GEN_TINY)) /* tiny graphs keep their layout: the runs declare it */
        settle_graph_layout(g);
    return (flags & DT_GEN_SPECIAL_NO_HALF_CONV) ? spare_half_convs(g) : 0;
}

void dt_graph_free(dt_graph *g)
{
    int i;
    for (i = 0; i < g->n_nodes; i++) {
        free(g->node[i].data);
        g->node[i].data = NULL;
    }
}

const char *dt_kind_name(dt_kind k)
{
    static const char *const names[DT_NUM_KINDS] = {
            "input",   "constant",  "conv",          "bias",  "act",
            "clamp",   "batchnorm", "add",           "pool",  "global_avg_pool",
            "flatten", "linear",    "softmax",       "arith", "norm",
            "concat",  "resize",    "conv_transpose"};
    return (int)k >= 0 && k < DT_NUM_KINDS ? names[k] : "?";
}

const char *dt_dtype_name(nnop_dtype t)
{
    return t == NNOP_F32 ? "f32" : t == NNOP_F16 ? "f16" : "bf16";
}
