/* onnx_fuse.c: node patterns converted as one nnop op. GELU's erf form, as torch.onnx.export
 * writes nn.GELU() before opset 20 (which has no Gelu): x -> Div(x, sqrt 2) (or Mul by
 * 1/sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5 becomes nnop's GELU of x, made as the last
 * Mul's output. Each intermediate must have that one reader and no other (not a graph
 * output); an Erf outside the pattern is refused (ox_op_erf, onnx_pointwise.c). */
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

/* How far after the pattern's first node its later nodes and their Constants may lie. */
#define OX_FUSE_WINDOW 24

static size_t window_end(const ox_ctx *ox, size_t k)
{
    size_t end = k + OX_FUSE_WINDOW;
    return end < ox->graph->n_node ? end : ox->graph->n_node - 1;
}

static int is_op(const Onnx__NodeProto *n, const char *op)
{
    return n->op_type && strcmp(n->op_type, op) == 0;
}

/* A one-element float TensorProto's value. */
static int proto_scalar(const Onnx__TensorProto *p, double *v)
{
    float f;
    size_t d;
    for (d = 0; d < p->n_dims; d++)
        if (p->dims[d] != 1)
            return 0;
    if (p->data_type != OX_FLOAT)
        return 0;
    if (p->n_float_data == 1) {
        *v = p->float_data[0];
        return 1;
    }
    if (p->has_raw_data && p->raw_data.len == sizeof f) { /* little-endian, as ONNX stores it */
        const unsigned char *b = p->raw_data.data;
        uint32_t u =
                (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        memcpy(&f, &u, sizeof f);
        *v = f;
        return 1;
    }
    return 0;
}

/* The scalar that name holds: a known constant, or a Constant node's value among nodes
 * k+1 .. (not converted yet). 0 when it is neither. */
static int scalar_of(ox_ctx *ox, size_t k, const char *name, double *v)
{
    const ox_tensor *t = name ? ox_find(ox, name) : NULL;
    size_t j;
    if (t && t->kind == OX_CONST && t->numel == 1 && t->f) {
        *v = t->f[0];
        return 1;
    }
    for (j = k + 1; name && j <= window_end(ox, k); j++) {
        const Onnx__NodeProto *c = ox->graph->node[j];
        const Onnx__AttributeProto *a;
        if (!is_op(c, "Constant") || c->n_output != 1 || !c->output[0] ||
            strcmp(c->output[0], name) != 0)
            continue;
        if ((a = ox_attr(c, "value")) != NULL && a->t)
            return proto_scalar(a->t, v);
        if ((a = ox_attr(c, "value_float")) != NULL && a->has_f) {
            *v = a->f;
            return 1;
        }
        return 0;
    }
    return 0;
}

/* The node among k+1 .. that reads name, where name has that one reader, is of type op
 * with one output, and is not already taken by a pattern; its index, or 0. */
static size_t only_reader(ox_ctx *ox, size_t k, const char *name, const char *op)
{
    const ox_tensor *t = name ? ox_find(ox, name) : NULL;
    size_t j, i;
    if (!t || t->readers != 1)
        return 0;
    for (j = k + 1; j <= window_end(ox, k); j++) {
        const Onnx__NodeProto *c = ox->graph->node[j];
        for (i = 0; i < c->n_input; i++)
            if (c->input[i] && strcmp(c->input[i], name) == 0)
                return is_op(c, op) && c->n_output == 1 && c->output[0] && !ox->skip[j] &&
                                       c->n_attribute == 0
                               ? j
                               : 0;
    }
    return 0;
}

/* The other input of a two-input node c, one of whose inputs is name; NULL otherwise. */
static const char *other_input(const Onnx__NodeProto *c, const char *name)
{
    if (c->n_input != 2 || !c->input[0] || !c->input[1])
        return NULL;
    return strcmp(c->input[0], name) == 0   ? c->input[1]
           : strcmp(c->input[1], name) == 0 ? c->input[0]
                                            : NULL;
}

static int near(double v, double want)
{
    return fabs(v - want) <= 1e-5 * fabs(want);
}

/* Node k as the head of GELU's erf form: the indices of its four later nodes in at[], 1. */
static int match_gelu(ox_ctx *ox, size_t k, size_t at[4])
{
    const Onnx__NodeProto *n = ox->graph->node[k], *c;
    const ox_tensor *xt;
    const char *x, *o;
    double v;
    int div = is_op(n, "Div");
    if ((!div && !is_op(n, "Mul")) || n->n_input != 2 || n->n_output != 1 || !n->output[0] ||
        !n->input[0] || !n->input[1])
        return 0;
    x = n->input[0];
    o = n->input[1];
    xt = ox_find(ox, x);
    if (!div && (!xt || xt->kind != OX_VALUE)) /* Mul(1/sqrt 2, x) */
        x = n->input[1], o = n->input[0], xt = ox_find(ox, x);
    if (!xt || xt->kind != OX_VALUE || !scalar_of(ox, k, o, &v) ||
        !near(v, div ? sqrt(2.0) : sqrt(0.5)))
        return 0;
    if (!(at[0] = only_reader(ox, k, n->output[0], "Erf")))
        return 0;
    c = ox->graph->node[at[0]];
    if (!(at[1] = only_reader(ox, k, c->output[0], "Add")))
        return 0;
    o = other_input(ox->graph->node[at[1]], c->output[0]);
    if (!o || !scalar_of(ox, k, o, &v) || !near(v, 1.0))
        return 0;
    c = ox->graph->node[at[1]];
    if (!(at[2] = only_reader(ox, k, c->output[0], "Mul")))
        return 0;
    o = other_input(ox->graph->node[at[2]], c->output[0]);
    if (!o || strcmp(o, x) != 0)
        return 0;
    c = ox->graph->node[at[2]];
    if (!(at[3] = only_reader(ox, k, c->output[0], "Mul")))
        return 0;
    o = other_input(ox->graph->node[at[3]], c->output[0]);
    return o && scalar_of(ox, k, o, &v) && near(v, 0.5);
}

int ox_fuse_at(ox_ctx *ox, size_t k)
{
    const Onnx__NodeProto *n = ox->graph->node[k];
    Onnx__NodeProto gelu;
    size_t at[4], j;
    char *in[1];
    if (!match_gelu(ox, k, at))
        return 0;
    onnx__node_proto__init(&gelu);
    in[0] = n->input[0];
    gelu.name = n->name;
    gelu.op_type = (char *)"Gelu";
    gelu.n_input = 1;
    gelu.input = in;
    gelu.n_output = 1;
    gelu.output = ox->graph->node[at[3]]->output;
    if (ox_convert_node(ox, &gelu) != NNOP_OK)
        return -1;
    for (j = 0; j < 4; j++)
        ox->skip[at[j]] = 1;
    return 1;
}
