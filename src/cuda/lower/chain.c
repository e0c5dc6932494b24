/* chain.c: a partition's nodes as a canonical epilogue chain: batch-norm with constant
 * parameters as scale+shift (a multiply by a constant 1,C,1,1 as a scale), leading constant affine
 * ops folded into constant producer weights and one bias, residual adds moved before the bias
 * (cudnn-backend-notes 4.4-4.5: conv -> add Z -> add bias -> relu is the form precompiled sm_90
 * engines take). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/lower/lower_parts.h"

static float *const_floats(const nnop__value *v)
{
    int64_t n = nnop_tensor_elements(&v->desc);
    float *f = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (f)
        nnop__to_f32(v->desc.dtype, v->data, f, n);
    return f;
}

int nnop__value_is_const(const nnop_graph *g, int32_t v)
{
    return v != NNOP_NONE_ID && g->values[v].kind == NNOP_VALUE_CONSTANT && g->values[v].data;
}

int nnop__bn_is_const(const nnop_graph *g, const nnop__node *n)
{
    return n->op == NNOP_OP_BATCHNORM && nnop__value_is_const(g, n->in[1]) &&
           nnop__value_is_const(g, n->in[2]) && nnop__value_is_const(g, n->in[3]) &&
           nnop__value_is_const(g, n->in[4]);
}

static nnop_status oom(nnop_plan *p)
{
    return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
}

/* gamma/sqrt(var+eps) and beta - mean*scale, as the reference computes them; centered (the
 * chain subtracts the mean first): beta alone as the shift. */
static nnop_status bn_scale_shift(nnop_plan *p, const nnop__node *n, int centered,
                                  nnop__chain_op *o)
{
    const nnop_graph *g = p->g;
    int64_t k, C = g->values[n->in[1]].desc.dims[0];
    float *q[4];
    int i, ok = 1;
    for (i = 0; i < 4; i++)
        ok &= (q[i] = const_floats(&g->values[n->in[1 + i]])) != NULL;
    o->host[0] = (float *)malloc((size_t)C * sizeof(float));
    o->host[1] = (float *)malloc((size_t)C * sizeof(float));
    if (ok && o->host[0] && o->host[1])
        for (k = 0; k < C; k++) {
            double s = q[0][k] / sqrt((double)q[3][k] + n->attr.eps);
            o->host[0][k] = (float)s;
            o->host[1][k] = (float)(centered ? q[1][k] : q[1][k] - q[2][k] * s);
        }
    for (i = 0; i < 4; i++)
        free(q[i]);
    return ok && o->host[0] && o->host[1] ? NNOP_OK : oom(p);
}

static nnop_status runtime_operand(nnop_plan *p, int32_t v, nnop__chain_op *o, int i)
{
    o->dtype = p->g->values[v].desc.dtype;
    return nnop__slot_value(p, v, &o->slot[i]);
}

static nnop_status bias_op(nnop_plan *p, int32_t b, nnop__chain_op *o)
{
    o->kind = NNOP_EPI_BIAS;
    o->dtype = p->g->values[b].desc.dtype;
    if (!nnop__value_is_const(p->g, b))
        return runtime_operand(p, b, o, 0);
    o->host[0] = const_floats(&p->g->values[b]);
    return o->host[0] ? NNOP_OK : oom(p);
}

/* v - mean of a constant batch-norm, as a bias of -mean (bn_center). */
static nnop_status bn_center_op(nnop_plan *p, const nnop__node *n, nnop__chain_op *o)
{
    int64_t k, C = p->g->values[n->in[3]].desc.dims[0];
    o->kind = NNOP_EPI_BIAS;
    o->dtype = p->g->values[n->in[0]].desc.dtype;
    o->host[0] = const_floats(&p->g->values[n->in[3]]);
    if (!o->host[0])
        return oom(p);
    for (k = 0; k < C; k++)
        o->host[0][k] = -o->host[0][k];
    return NNOP_OK;
}

static nnop_status bn_op(nnop_plan *p, const nnop__node *n, int centered, nnop__chain_op *o)
{
    const nnop_graph *g = p->g;
    nnop_status st = NNOP_OK;
    int i;
    o->dtype = g->values[n->in[0]].desc.dtype;
    o->eps = n->attr.eps;
    if (nnop__bn_is_const(g, n)) {
        o->kind = NNOP_EPI_SCALE_SHIFT;
        return bn_scale_shift(p, n, centered, o);
    }
    o->kind = NNOP_EPI_BN;
    for (i = 0; i < 4 && st == NNOP_OK; i++)
        st = runtime_operand(p, n->in[1 + i], o, i);
    return st;
}

/* b is a constant of shape 1,C,1,1 over the 4-D chain value a: a per-channel constant. */
static int channel_constant(const nnop_graph *g, int32_t b, const nnop_tensor_desc *a)
{
    const nnop_tensor_desc *d = &g->values[b].desc;
    return nnop__value_is_const(g, b) && a->ndim == 4 && d->ndim == 4 && d->dims[0] == 1 &&
           d->dims[1] == a->dims[1] && d->dims[2] == 1 && d->dims[3] == 1;
}

/* a * b or a - b with b a per-channel constant: a scale (shift 0) or a bias of -b, which fold
 * into constant producer weights like batch-norm's. */
static nnop_status channel_constant_op(nnop_plan *p, const nnop__node *n, nnop__chain_op *o)
{
    int64_t k, C = p->g->values[n->in[1]].desc.dims[1];
    o->dtype = p->g->values[n->in[1]].desc.dtype;
    o->host[0] = const_floats(&p->g->values[n->in[1]]);
    if (!o->host[0])
        return oom(p);
    if (n->op == NNOP_OP_SUB) {
        o->kind = NNOP_EPI_BIAS;
        for (k = 0; k < C; k++)
            o->host[0][k] = -o->host[0][k];
        return NNOP_OK;
    }
    o->kind = NNOP_EPI_SCALE_SHIFT;
    o->host[1] = (float *)calloc((size_t)C, sizeof(float));
    return o->host[1] ? NNOP_OK : oom(p);
}

/* a op b (mul, sub, div) with a the chain value: b of a's shape, 1,C,1,1 or N,C,1,1. */
static nnop_status binary_op(nnop_plan *p, const nnop__node *n, int32_t cur, nnop__chain_op *o)
{
    const nnop_tensor_desc *a = &p->g->values[cur].desc, *b = &p->g->values[n->in[1]].desc;
    if (n->in[0] != cur)
        return nnop__fail(p->ctx, NNOP_ERR_INTERNAL, "chain: %s continues from its second operand",
                          nnop__op(n->op)->name);
    if (n->op != NNOP_OP_DIV && channel_constant(p->g, n->in[1], a))
        return channel_constant_op(p, n, o);
    o->kind = n->op == NNOP_OP_MUL   ? NNOP_EPI_MUL
              : n->op == NNOP_OP_SUB ? NNOP_EPI_SUB
                                     : NNOP_EPI_DIV;
    o->bmode = nnop_tensor_elements(b) == nnop_tensor_elements(a) ? NNOP_BCAST_NONE
               : b->dims[0] == 1                                  ? NNOP_BCAST_CHANNEL
                                                                  : NNOP_BCAST_SAMPLE;
    o->bsn = b->strides[0];
    o->bsc = b->ndim > 1 ? b->strides[1] : 1;
    o->xsn = a->strides[0];
    return runtime_operand(p, n->in[1], o, 0);
}

/* A constant batch-norm with no producer to fold into (the chain's first op on a partition
 * input, as DenseNet's after a concat): two ops, v - mean then * scale + beta, as PyTorch's
 * kernel computes it. One op, v * scale + (beta - mean * scale), rounds v * scale where inputs
 * lie far from 0 (mean 1000, spread 0.1: f32 lost 3 digits, onnx.edge_cuda_f32_nchw). */
static int bn_centered(const nnop_plan *p, const nnop__node *n, const nnop__chain *c, int32_t after)
{
    /* room for the extra op beside one for each of the `after` nodes still to come: a chain
     * of NNOP_EPI_MAX_OPS ops that fitted before keeps fitting (else one op, as before) */
    return c->producer < 0 && nnop__bn_is_const(p->g, n) && c->n_ops + after < NNOP_EPI_MAX_OPS;
}

static nnop_status bn_centered_ops(nnop_plan *p, const nnop__node *n, nnop__chain *c)
{
    nnop__chain_op *o = &c->ops[c->n_ops++];
    nnop_status st = bn_center_op(p, n, &c->ops[c->n_ops - 2]);
    o->slot[0] = o->slot[1] = o->slot[2] = o->slot[3] = -1;
    return st == NNOP_OK ? bn_op(p, n, 1, o) : st;
}

/* Append node n, which consumes the chain value cur, as a chain op (after: the chain's nodes
 * still to come). */
static nnop_status node_op(nnop_plan *p, const nnop__node *n, int32_t cur, int32_t after,
                           nnop__chain *c)
{
    nnop__chain_op *o;
    if (n->op == NNOP_OP_ACT && n->attr.act.kind == NNOP_ACT_IDENTITY)
        return NNOP_OK;
    if (c->n_ops >= NNOP_EPI_MAX_OPS)
        return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED, "epilogue chain longer than %d operations",
                          NNOP_EPI_MAX_OPS);
    o = &c->ops[c->n_ops++];
    o->slot[0] = o->slot[1] = o->slot[2] = o->slot[3] = -1;
    switch (n->op) {
    case NNOP_OP_BIAS:
        return bias_op(p, n->in[1], o);
    case NNOP_OP_BATCHNORM:
        return bn_centered(p, n, c, after) ? bn_centered_ops(p, n, c) : bn_op(p, n, 0, o);
    case NNOP_OP_ADD:
        o->kind = NNOP_EPI_ADD;
        return runtime_operand(p, n->in[0] == cur ? n->in[1] : n->in[0], o, 0);
    case NNOP_OP_MUL:
    case NNOP_OP_SUB:
    case NNOP_OP_DIV:
        return binary_op(p, n, cur, o);
    case NNOP_OP_ACT:
        o->kind = NNOP_EPI_ACT;
        o->act = n->attr.act;
        o->dtype = p->g->values[cur].desc.dtype;
        return NNOP_OK;
    default:
        return nnop__fail(p->ctx, NNOP_ERR_INTERNAL, "chain: node of op %s is not an epilogue",
                          nnop__op(n->op)->name);
    }
}

/* Upload the weights as a new slot and multiply each output channel's weights by s[k] there:
 * converting tens of millions of fp16 weights on the host cost ~0.3 s of a ResNet-50 compile,
 * the device does it in microseconds (same float32 product, same rounding). */
static nnop_status scale_weights(nnop_plan *p, nnop__chain *c, const float *s)
{
    const nnop__value *w = &p->g->values[p->g->nodes[c->producer].in[1]];
    int64_t n = nnop_tensor_elements(&w->desc), per_k = n / w->desc.dims[0];
    size_t s_bytes = (size_t)w->desc.dims[0] * sizeof(float);
    int32_t s_slot = -1;
    nnop_status st;
    /* a batch_range plan's other buckets fold the same weights by the same scales */
    if (nnop__const_memo_find(p, "folded weights", c->producer, s, s_bytes, &c->w_slot))
        return NNOP_OK;
    st = nnop__slot_upload(p, w->data, nnop_tensor_bytes(&w->desc), &c->w_slot);
    if (st == NNOP_OK)
        st = nnop__slot_upload(p, s, s_bytes, &s_slot);
    if (st == NNOP_OK)
        st = NNOP_CU(p->ctx, nnop__k_scale_rows(p->cuda->slot[c->w_slot], (int)w->desc.dtype, n,
                                                per_k, (const float *)p->cuda->slot[s_slot],
                                                p->ctx->cuda->stream));
    if (st == NNOP_OK)
        st = nnop__const_memo_keep(p, "folded weights", c->producer, s, s_bytes, c->w_slot);
    return st;
}

static int foldable(const nnop__chain_op *o)
{
    return (o->kind == NNOP_EPI_BIAS || o->kind == NNOP_EPI_SCALE_SHIFT) && o->host[0];
}

/* Compose ops[0..n) (constant bias/scale/shift) into y = x * s + b; returns 1 if any scales. */
static int compose(const nnop__chain *c, int n, float *s, float *b)
{
    int64_t k, K = c->channels;
    int j, scaled = 0;
    for (k = 0; k < K; k++)
        s[k] = 1.0f, b[k] = 0.0f;
    for (j = 0; j < n; j++) {
        const nnop__chain_op *o = &c->ops[j];
        for (k = 0; k < K; k++) {
            if (o->kind == NNOP_EPI_BIAS) {
                b[k] += o->host[0][k];
            } else {
                s[k] *= o->host[0][k];
                b[k] = b[k] * o->host[0][k] + o->host[1][k];
            }
        }
        scaled |= o->kind == NNOP_EPI_SCALE_SHIFT;
    }
    return scaled;
}

/* Replace ops[0..n) by one constant bias b (owned by the chain from now on). */
static void replace_with_bias(nnop_plan *p, nnop__chain *c, int n, float *b)
{
    int j;
    for (j = 0; j < n; j++) {
        free(c->ops[j].host[0]);
        free(c->ops[j].host[1]);
    }
    memset(&c->ops[0], 0, sizeof c->ops[0]);
    c->ops[0].kind = NNOP_EPI_BIAS;
    c->ops[0].dtype = p->g->values[c->out_value].desc.dtype;
    c->ops[0].host[0] = b;
    c->ops[0].slot[0] = c->ops[0].slot[1] = c->ops[0].slot[2] = c->ops[0].slot[3] = -1;
    memmove(&c->ops[1], &c->ops[n], (size_t)(c->n_ops - n) * sizeof c->ops[0]);
    c->n_ops -= n - 1;
}

/* Fold the leading constant bias/scale/shift ops into weights * s and one bias b. */
static nnop_status fold_prefix(nnop_plan *p, nnop__chain *c)
{
    float *s, *b;
    int n = 0, scaled;
    nnop_status st = NNOP_OK;
    while (n < c->n_ops && foldable(&c->ops[n]))
        n++;
    if (n == 0)
        return NNOP_OK;
    s = (float *)malloc((size_t)c->channels * sizeof(float));
    b = (float *)malloc((size_t)c->channels * sizeof(float));
    if (!s || !b) {
        free(s);
        free(b);
        return oom(p);
    }
    scaled = compose(c, n, s, b);
    if (scaled)
        st = scale_weights(p, c, s);
    free(s);
    replace_with_bias(p, c, n, b);
    c->folded = scaled || n > 1;
    return st;
}

/* Before the first activation, if only adds and biases occur, put the adds first (the sums
 * commute) and merge neighbouring constant biases. */
static void adds_before_bias(nnop__chain *c)
{
    nnop__chain_op tmp[NNOP_EPI_MAX_OPS];
    int end = 0, n = 0, k;
    while (end < c->n_ops && c->ops[end].kind != NNOP_EPI_ACT) {
        if (c->ops[end].kind != NNOP_EPI_ADD && c->ops[end].kind != NNOP_EPI_BIAS)
            return;
        end++;
    }
    for (k = 0; k < end; k++)
        if (c->ops[k].kind == NNOP_EPI_ADD)
            tmp[n++] = c->ops[k];
    for (k = 0; k < end; k++)
        if (c->ops[k].kind == NNOP_EPI_BIAS) {
            nnop__chain_op *prev = n ? &tmp[n - 1] : NULL;
            if (prev && prev->kind == NNOP_EPI_BIAS && prev->host[0] && c->ops[k].host[0]) {
                int64_t j;
                for (j = 0; j < c->channels; j++)
                    prev->host[0][j] += c->ops[k].host[0][j];
                free(c->ops[k].host[0]);
            } else {
                tmp[n++] = c->ops[k];
            }
        }
    memcpy(tmp + n, c->ops + end, (size_t)(c->n_ops - end) * sizeof tmp[0]);
    n += c->n_ops - end;
    memcpy(c->ops, tmp, (size_t)n * sizeof tmp[0]);
    c->n_ops = n;
}

/* The value node `first` continues the chain from: its operand produced by the node before
 * it (a split tail), else its first input. */
static int32_t chain_input(const nnop_graph *g, int32_t first)
{
    const nnop__node *n = &g->nodes[first];
    if (first > 0 && n->op == NNOP_OP_ADD && n->in[1] == g->nodes[first - 1].out)
        return n->in[1];
    return n->in[0];
}

static nnop_status chain_ops(nnop_plan *p, int32_t first, int32_t count, nnop__chain *c)
{
    const nnop_graph *g = p->g;
    int32_t i, cur = c->mid_value;
    nnop_status st = NNOP_OK;
    for (i = first; i < first + count && st == NNOP_OK; i++) {
        st = node_op(p, &g->nodes[i], cur, first + count - 1 - i, c);
        cur = g->nodes[i].out;
    }
    return st;
}

nnop_status nnop__chain_build(nnop_plan *p, int32_t first, int32_t count, int fold, nnop__chain *c)
{
    const nnop_graph *g = p->g;
    const nnop__node *n0 = &g->nodes[first];
    int is_producer = nnop__op(n0->op)->role == NNOP_ROLE_PRODUCER;
    nnop_status st;
    memset(c, 0, sizeof *c);
    c->producer = is_producer ? first : -1;
    c->w_slot = -1;
    c->out_value = g->nodes[first + count - 1].out;
    c->mid_value = is_producer ? n0->out : chain_input(g, first);
    c->channels = g->values[c->mid_value].desc.dims[1];
    st = nnop__slot_value(p, is_producer ? n0->in[0] : c->mid_value, &c->x_slot);
    if (is_producer) /* uploaded below unless folding replaces it: no unused device copy */
        c->w_slot = n0->in[1];
    if (st == NNOP_OK && is_producer && n0->op == NNOP_OP_LINEAR && n0->in[2] != NNOP_NONE_ID) {
        c->ops[0].slot[0] = c->ops[0].slot[1] = c->ops[0].slot[2] = c->ops[0].slot[3] = -1;
        c->n_ops = 1;
        st = bias_op(p, n0->in[2], &c->ops[0]);
    }
    if (st == NNOP_OK)
        st = chain_ops(p, is_producer ? first + 1 : first, is_producer ? count - 1 : count, c);
    if (st == NNOP_OK && fold && is_producer && nnop__value_is_const(g, n0->in[1]))
        st = fold_prefix(p, c);
    if (st == NNOP_OK && is_producer)
        adds_before_bias(c);
    if (st == NNOP_OK && is_producer && c->w_slot == n0->in[1])
        st = nnop__slot_value(p, n0->in[1], &c->w_slot);
    return st;
}

void nnop__chain_free(nnop__chain *c)
{
    int i;
    for (i = 0; i < c->n_ops; i++) {
        free(c->ops[i].host[0]);
        free(c->ops[i].host[1]);
        c->ops[i].host[0] = c->ops[i].host[1] = NULL;
    }
}
