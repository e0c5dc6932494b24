/* quant_oracle.c: the float64 oracle of a quantized plan (--quant), written from nnop.h's
 * "Quantized plans" and not from nnop's code. Before each layer nnop quantizes
 * (dt_quant_layer), the layer's input and its weights (per output channel) go to the 8-bit grid
 * and back: the scale amax / 127 or amax / 448 in float32, raised to FLT_MIN; x / scale in
 * float32; rounded to nearest even (int8 saturated to [-128, 127]; fp8 e4m3: 3 mantissa bits,
 * steps of 2^-9 below 2^-6, saturated to 448); times the scale in float32. The grid is nnop's
 * exactly (the same float32 scales from the same table), so only the values fed to it may
 * differ: nnop's float32 and this float64 round differently now and then.
 *
 * The tolerance rule of --quant. Such a difference may carry a value across a rounding boundary
 * of the grid and flip its code by one step, a jump no float tolerance covers (an int8 step is
 * amax / 127). So beside each value the oracle carries an allowance: a bound on how far nnop's
 * may be from it through flips. At a quantized layer's input, element x with allowance a (from
 * earlier layers) and float margin m may become any grid value from q(x - r) to q(x + r),
 * r = a + m (q is monotone), so its quantized value gets the allowance
 * max(q(x + r) - q(x), q(x) - q(x - r)): zero unless x lies within r of a boundary. The margin
 * m is how far float rounding may move x: 0 for a graph input (both sides read the same data),
 * else 4 units of roundoff of the dtype times |x| (a 16-bit result rounded the other way) plus
 * max(u, 2^-18) times amax (earlier roundings, float32 sums, carried through the sums). Ops pass
 * allowances on by their Lipschitz bounds: conv and linear as the sums of |w| times them; bias,
 * add, pooling and flatten as themselves; clamp unchanged; an activation times its largest
 * slope; batch norm times |gamma| / sqrt(var + eps); softmax as y (exp(2 max a) - 1). An output
 * passes when it agrees within the dtype's normal tolerance (dt_agree), or when what is left of
 * each difference past its allowance does (dt_agree_within). A wrong scale, rounding or
 * saturation moves far more values than the few flips allowed: difftest.quant_* fail then
 * (checked by breaking them in nnop), and quant.c puts graph inputs on rounding ties, margin 0,
 * where only the rounding rule decides. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difftest.h"

typedef struct qo {
    const dt_graph *g;
    const dt_quant *q;
    dt_quant_stats *s;
    double *val[DT_MAX_NODES], *al[DT_MAX_NODES]; /* values, allowances */
} qo;

int dt_quant_layer(const dt_graph *g, int i)
{
    const dt_node *v = &g->node[i];
    return (v->kind == DT_CONV || v->kind == DT_LINEAR) && g->node[v->in[0]].kind != DT_CONST &&
           g->node[v->in[1]].kind == DT_CONST;
}

static double qmax_of(const dt_quant *q)
{
    return q->fp8 ? 448.0 : 127.0;
}

/* nnop.h: amax / qmax in float32, raised to the smallest normal float */
float dt_quant_scale(float amax, int fp8)
{
    float s = (float)(amax / (fp8 ? 448.0f : 127.0f));
    return s >= FLT_MIN ? s : FLT_MIN;
}

static float scale_of(float amax, const dt_quant *q)
{
    return dt_quant_scale(amax, q->fp8);
}

double dt_quant_tie(double v, int fp8)
{
    double a = fabs(v), step;
    int e;
    if (!fp8 || a < 0x1p-6)
        step = fp8 ? 0x1p-9 : 1.0;
    else
        (void)frexp(a, &e), step = ldexp(1.0, e - 4);
    return copysign((floor(a / step) + 0.5) * step, v);
}

/* v to the e4m3 grid: nearest even of 3 mantissa bits, steps of 2^-9 below 2^-6, 448 at most */
static double round_e4m3(double v)
{
    double a = fabs(v), r;
    int e;
    if (isnan(v))
        return v;
    if (a >= 448.0)
        return copysign(448.0, v);
    if (a == 0.0)
        return v;
    (void)frexp(a, &e); /* a = 0.m * 2^e */
    e = e - 1 < -6 ? -6 : e - 1;
    r = rint(ldexp(a, 3 - e));
    return copysign(fmin(ldexp(r, e - 3), 448.0), v);
}

/* v to the int8 grid: nearest even, saturated to [-128, 127]; NaN (none has) gives 0 */
static double round_i8(double v)
{
    double r = rint(v);
    return isnan(v) ? 0.0 : r > 127.0 ? 127.0 : r < -128.0 ? -128.0 : r;
}

/* x quantized with scale s and back, as a float32 value */
static double grid(const dt_quant *q, float s, double x)
{
    float v = (float)((float)x / s);
    double c = q->fp8 ? round_e4m3(v) : round_i8(v);
    return (double)(float)(c * (double)s);
}

static double unit_roundoff(nnop_dtype t)
{
    return t == NNOP_F32 ? 0x1p-24 : t == NNOP_F16 ? 0x1p-11 : 0x1p-8;
}

/* Node i's input quantized (into xq) and its allowance (into ex); see the top. */
static void quantize_input(qo *o, int i, double *xq, double *ex)
{
    const dt_node *v = &o->g->node[i], *x = &o->g->node[v->in[0]];
    const double *xv = o->val[v->in[0]], *xa = o->al[v->in[0]];
    float amax = o->q->in_amax[i], s = scale_of(amax, o->q);
    double u = unit_roundoff(o->g->dtype), floor_u = u > 0x1p-18 ? u : 0x1p-18;
    int64_t j, n = dt_elems(x);
    for (j = 0; j < n; j++) {
        double m = x->kind == DT_INPUT ? 0.0 : 4.0 * u * fabs(xv[j]) + floor_u * amax;
        double r = xa[j] + m;
        xq[j] = grid(o->q, s, xv[j]);
        ex[j] = fmax(grid(o->q, s, xv[j] + r) - xq[j], xq[j] - grid(o->q, s, xv[j] - r));
        o->s->ambiguous += ex[j] > 0.0;
        o->s->saturated += fabs(xq[j]) >= (double)(float)(qmax_of(o->q) * (double)s);
    }
    o->s->elements += n;
    o->s->layers++;
}

/* Node i's weights quantized per output channel (dim 0) into wq, their magnitudes into wa */
static void quantize_weights(const qo *o, int i, double *wq, double *wa)
{
    const dt_node *w = &o->g->node[o->g->node[i].in[1]];
    const double *wv = o->val[o->g->node[i].in[1]];
    int64_t n = dt_elems(w), k = w->dims[0], per = n / k, c, j;
    for (c = 0; c < k; c++) {
        float top = 0.0f, s;
        for (j = c * per; j < (c + 1) * per; j++)
            top = fabsf((float)wv[j]) > top ? fabsf((float)wv[j]) : top;
        s = scale_of(top, o->q);
        for (j = c * per; j < (c + 1) * per; j++) {
            wq[j] = grid(o->q, s, wv[j]);
            wa[j] = fabs(wq[j]);
        }
    }
}

/* A quantized layer: the node on the quantized operands, its allowance on theirs */
static int quantized_node(qo *o, int i)
{
    const dt_node *v = &o->g->node[i];
    int64_t nx = dt_elems(&o->g->node[v->in[0]]), nw = dt_elems(&o->g->node[v->in[1]]);
    double *xq = (double *)malloc((size_t)nx * sizeof(double));
    double *ex = (double *)malloc((size_t)nx * sizeof(double));
    double *wq = (double *)malloc((size_t)nw * sizeof(double));
    double *wa = (double *)malloc((size_t)nw * sizeof(double));
    double *vals[DT_MAX_NODES], *als[DT_MAX_NODES];
    int rc = xq && ex && wq && wa ? 0 : -1;
    if (rc == 0) {
        quantize_input(o, i, xq, ex);
        quantize_weights(o, i, wq, wa);
        memcpy(vals, o->val, sizeof vals);
        memcpy(als, o->al, sizeof als);
        vals[v->in[0]] = xq, vals[v->in[1]] = wq;
        als[v->in[0]] = ex, als[v->in[1]] = wa;
        rc = dt_oracle_node(o->g, i, vals, o->val[i], 1);
        if (rc == 0)
            rc = dt_oracle_node(o->g, i, als, o->al[i], 0);
    }
    free(xq), free(ex), free(wq), free(wa);
    return rc;
}

/* The largest slope of activation v (d/dx of x Phi(x) peaks at 1.129, SiLU's at 1.100) */
static double act_slope(const dt_node *v)
{
    double a = fabs((double)v->alpha);
    switch (v->act) {
    case NNOP_ACT_LEAKY_RELU:
    case NNOP_ACT_ELU:
        return a > 1.0 ? a : 1.0;
    case NNOP_ACT_GELU:
    case NNOP_ACT_GELU_TANH:
    case NNOP_ACT_SILU:
    case NNOP_ACT_MISH:
        return 1.2;
    case NNOP_ACT_SIGMOID:
        return 0.25;
    case NNOP_ACT_HARDSWISH:
        return 1.5;
    default: /* identity, ReLU, ReLU6, tanh; hard-sigmoid's 1/6 bounded by 1 */
        return 1.0;
    }
}

/* y (exp(2A) - 1) per row over dim 1, A the row's largest allowance; 1 at most */
static void softmax_allowance(const dt_node *v, const double *y, const double *a, double *out)
{
    int64_t c = v->dims[1], hw = v->ndim == 4 ? v->dims[2] * v->dims[3] : 1, n, k, p;
    for (n = 0; n < v->dims[0]; n++)
        for (p = 0; p < hw; p++) {
            double big = 0.0;
            for (k = 0; k < c; k++)
                big = fmax(big, a[(n * c + k) * hw + p]);
            for (k = 0; k < c; k++) {
                int64_t j = (n * c + k) * hw + p;
                out[j] = 2.0 * big > 700.0 ? 1.0 : fmin(1.0, y[j] * expm1(2.0 * big));
            }
        }
}

/* batch norm: a |gamma| / sqrt(var + eps) per channel */
static void bn_allowance(const qo *o, const dt_node *v, double *out)
{
    int64_t c = v->dims[1], hw = v->ndim == 4 ? v->dims[2] * v->dims[3] : 1, j;
    const double *a = o->al[v->in[0]], *gamma = o->val[v->in[1]], *var = o->val[v->in[4]];
    for (j = 0; j < dt_elems(v); j++) {
        int64_t k = j / hw % c;
        out[j] = a[j] * fabs(gamma[k]) / sqrt(var[k] + (double)v->eps);
    }
}

/* A layer kept in float: its weights' magnitudes in place of the weights */
static int float_layer_allowance(qo *o, int i)
{
    const dt_node *v = &o->g->node[i];
    int64_t j, nw = dt_elems(&o->g->node[v->in[1]]);
    double *wa = (double *)malloc((size_t)nw * sizeof(double)), *als[DT_MAX_NODES];
    int rc;
    if (!wa)
        return -1;
    for (j = 0; j < nw; j++)
        wa[j] = fabs(o->val[v->in[1]][j]);
    memcpy(als, o->al, sizeof als);
    als[v->in[1]] = wa;
    rc = dt_oracle_node(o->g, i, als, o->al[i], 0);
    free(wa);
    return rc;
}

/* Node i's allowance from its operands' (not a quantized layer); -1 for an op it has no rule
 * for (dt_quant_run refuses those graphs first) */
static int pass_on(qo *o, int i)
{
    const dt_node *v = &o->g->node[i];
    int64_t j, n = dt_elems(v);
    switch (v->kind) {
    case DT_INPUT:
    case DT_CONST:
        return 0; /* calloc'd */
    case DT_CONV:
    case DT_LINEAR:
        return float_layer_allowance(o, i);
    case DT_BIAS:
    case DT_ADD:
    case DT_POOL:
    case DT_GAP:
    case DT_FLATTEN:
        return dt_oracle_node(o->g, i, o->al, o->al[i], 0);
    case DT_CLAMP:
    case DT_ACT:
        for (j = 0; j < n; j++)
            o->al[i][j] = o->al[v->in[0]][j] * (v->kind == DT_ACT ? act_slope(v) : 1.0);
        return 0;
    case DT_BN:
        bn_allowance(o, v, o->al[i]);
        return 0;
    case DT_SOFTMAX:
        softmax_allowance(v, o->val[i], o->al[v->in[0]], o->al[i]);
        return 0;
    default:
        return -1;
    }
}

static int evaluate(qo *o)
{
    int i, rc = 0;
    for (i = 0; rc == 0 && i < o->g->n_nodes; i++) {
        size_t n = (size_t)dt_elems(&o->g->node[i]);
        o->val[i] = (double *)malloc(n * sizeof(double));
        o->al[i] = (double *)calloc(n, sizeof(double));
        if (!o->val[i] || !o->al[i])
            return -1;
        if (o->q->in_amax[i] >= 0.0f && dt_quant_layer(o->g, i))
            rc = quantized_node(o, i);
        else if ((rc = dt_oracle_node(o->g, i, o->val, o->val[i], 1)) == 0)
            rc = pass_on(o, i);
    }
    return rc;
}

int dt_oracle_quant(const dt_graph *g, const dt_quant *q, double **out, double **allow,
                    dt_quant_stats *s)
{
    qo o;
    int i, rc;
    memset(&o, 0, sizeof o);
    o.g = g, o.q = q, o.s = s;
    rc = evaluate(&o);
    for (i = 0; i < g->n_out; i++) {
        size_t bytes = (size_t)dt_elems(&g->node[g->out[i]]) * sizeof(double);
        out[i] = rc == 0 ? (double *)malloc(bytes) : NULL;
        allow[i] = rc == 0 ? (double *)malloc(bytes) : NULL;
        if (!out[i] || !allow[i]) {
            rc = -1;
            continue;
        }
        memcpy(out[i], o.val[g->out[i]], bytes);
        memcpy(allow[i], o.al[g->out[i]], bytes);
    }
    for (i = 0; i < g->n_nodes; i++)
        free(o.val[i]), free(o.al[i]);
    return rc;
}
