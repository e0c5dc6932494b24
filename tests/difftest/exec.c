/* exec.c: a tester graph as a dts_case (the run harness the reproducers share), and the check
 * of every value's descriptor against the header's shape and layout rules. */
#include <stdlib.h>
#include <string.h>

#include "difftest.h"

static nnop_value operand(const nnop_value *v, int i)
{
    return i < 0 ? nnop_none() : v[i];
}

static dts_tensor tensor_of(const dt_node *n)
{
    dts_tensor t;
    t.ndim = n->ndim;
    memcpy(t.dims, n->dims, sizeof t.dims);
    t.seed = n->seed;
    t.scale = n->scale;
    t.positive = n->positive;
    t.special = n->special;
    return t;
}

static nnop_value build_norm(nnop_graph *ng, const dt_node *n, const nnop_value *v)
{
    nnop_value x = v[n->in[0]], gamma = operand(v, n->in[1]), beta = operand(v, n->in[2]);
    switch (n->norm) {
    case DT_LAYER_NORM_C:
        return nnop_layer_norm(ng, x, gamma, beta, NNOP_NORM_C, n->eps);
    case DT_LAYER_NORM_CHW:
        return nnop_layer_norm(ng, x, gamma, beta, NNOP_NORM_CHW, n->eps);
    case DT_GROUP_NORM:
        return nnop_group_norm(ng, x, n->groups, gamma, beta, n->eps);
    default:
        return nnop_rms_norm(ng, x, gamma, n->eps);
    }
}

/* The builder call of node i. */
static nnop_value build_node(nnop_graph *ng, const dts_case *c, int i, const nnop_value *v)
{
    const dt_node *n = &((const dt_graph *)c->user)->node[i];
    nnop_value a = operand(v, n->in[0]), b = operand(v, n->in[1]);
    dts_tensor t = tensor_of(n);
    switch (n->kind) {
    case DT_INPUT:
        return dts_input(ng, c, &t);
    case DT_CONST:
        return dts_constant(ng, c, &t);
    case DT_CONV:
        return nnop_conv(ng, a, b, &n->conv);
    case DT_BIAS:
        return nnop_bias(ng, a, b);
    case DT_ACT:
        return nnop_act(ng, a, n->act, n->alpha);
    case DT_CLAMP:
        return nnop_clamp(ng, a, n->lo, n->hi);
    case DT_BN:
        return nnop_batchnorm(ng, a, b, v[n->in[2]], v[n->in[3]], v[n->in[4]], n->eps);
    case DT_ADD:
        return nnop_add(ng, a, b);
    case DT_POOL:
        return nnop_pool(ng, a, n->pool_kind, &n->pool);
    case DT_GAP:
        return nnop_global_avg_pool(ng, a);
    case DT_FLATTEN:
        return nnop_flatten(ng, a);
    case DT_LINEAR:
        return nnop_linear(ng, a, b, operand(v, n->in[2]));
    case DT_ARITH:
        return n->arith == DT_MUL   ? nnop_mul(ng, a, b)
               : n->arith == DT_SUB ? nnop_sub(ng, a, b)
                                    : nnop_div(ng, a, b);
    case DT_NORM:
        return build_norm(ng, n, v);
    case DT_CONCAT: {
        nnop_value xs[5];
        int k;
        for (k = 0; k < n->n_in; k++)
            xs[k] = v[n->in[k]];
        return nnop_concat(ng, xs, n->n_in);
    }
    case DT_RESIZE:
        return nnop_resize(ng, a, &n->resize);
    case DT_DECONV:
        return nnop_conv_transpose(ng, a, b, &n->deconv);
    default:
        return nnop_softmax(ng, a);
    }
}

/* Every node, then the outputs; v receives the values (DT_MAX_NODES). named: each node's
 * result named "n<index>" (dt_quant_name), the calibration table's name for it. */
static nnop_status build_values(nnop_graph *ng, const dts_case *c, nnop_value *v, int named)
{
    const dt_graph *g = (const dt_graph *)c->user;
    int i;
    for (i = 0; i < g->n_nodes; i++) {
        char name[16];
        if (named && g->node[i].kind != DT_INPUT && g->node[i].kind != DT_CONST) {
            snprintf(name, sizeof name, "n%d", i);
            nnop_graph_name_next(ng, name);
        }
        v[i] = build_node(ng, c, i, v);
    }
    for (i = 0; i < g->n_out; i++)
        nnop_output(ng, v[g->out[i]], NULL);
    return nnop_graph_status(ng);
}

static nnop_status build(nnop_graph *ng, const dts_case *c)
{
    nnop_value v[DT_MAX_NODES];
    return build_values(ng, c, v, 0);
}

nnop_status dt_build_named(nnop_graph *ng, const dts_case *c)
{
    nnop_value v[DT_MAX_NODES];
    return build_values(ng, c, v, 1);
}

void dt_case_of(const dt_graph *g, dts_tensor *in, dts_case *c)
{
    int i;
    memset(c, 0, sizeof *c);
    c->dtype = g->dtype;
    c->layout = g->layout;
    c->build = build;
    c->in = in;
    c->user = g;
    for (i = 0; i < g->n_nodes; i++)
        if (g->node[i].kind == DT_INPUT)
            in[c->n_in++] = tensor_of(&g->node[i]);
}

static void describe_mismatch(const dt_graph *g, int i, const nnop_tensor_desc *got,
                              const nnop_tensor_desc *want, char *msg, size_t len)
{
    snprintf(msg, len,
             "node %d (%s): the library's descriptor is %d-D dims %lld,%lld,%lld,%lld strides "
             "%lld,%lld,%lld,%lld; the header's rules give dims %lld,%lld,%lld,%lld strides "
             "%lld,%lld,%lld,%lld",
             i, dt_kind_name(g->node[i].kind), got->ndim, (long long)got->dims[0],
             (long long)got->dims[1], (long long)got->dims[2], (long long)got->dims[3],
             (long long)got->strides[0], (long long)got->strides[1], (long long)got->strides[2],
             (long long)got->strides[3], (long long)want->dims[0], (long long)want->dims[1],
             (long long)want->dims[2], (long long)want->dims[3], (long long)want->strides[0],
             (long long)want->strides[1], (long long)want->strides[2], (long long)want->strides[3]);
}

int dt_check_descs(nnop_context *ctx, const dt_graph *g, char *msg, size_t len)
{
    dts_tensor in[DT_MAX_NODES];
    dts_case c;
    nnop_graph *ng = NULL;
    nnop_value v[DT_MAX_NODES];
    int i, rc = 0;
    dt_case_of(g, in, &c);
    if (nnop_graph_create(ctx, &ng) != NNOP_OK)
        return 0; /* the run reports it */
    /* declared after the builders here (before them in dts_run): both orders must agree */
    if (build_values(ng, &c, v, 0) == NNOP_OK && nnop_graph_set_layout(ng, c.layout) == NNOP_OK)
        for (i = 0; i < g->n_nodes && rc == 0; i++) {
            nnop_tensor_desc got, want = dt_desc(g, &g->node[i]);
            memset(&got, 0, sizeof got);
            if (nnop_value_desc(ng, v[i], &got) != NNOP_OK || !dts_same_layout(&got, &want)) {
                describe_mismatch(g, i, &got, &want, msg, len);
                rc = -1;
            }
        }
    nnop_graph_destroy(ng);
    return rc;
}
