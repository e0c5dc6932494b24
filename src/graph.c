/* graph.c: the graph builder: values, nodes, validation through the op table (the first
 * error is the graph's; every builder error is listed, each once). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define ERROR_VALUE (-1)

static nnop_value value_of(int32_t id)
{
    nnop_value v;
    v.id = id;
    return v;
}

/* The public value of index i of g: the index with the graph's tag (internal.h). */
static nnop_value tagged(const nnop_graph *g, int32_t i)
{
    return value_of((int32_t)((uint32_t)g->tag << NNOP__VALUE_INDEX_BITS) | i);
}

/* Resolve a user's value to its index in g; on a bad one return -1 and say why, as the end
 * of a sentence that names the value ("input 1 (id 5) ..."). */
static int32_t index_in(const nnop_graph *g, nnop_value v, const char **why)
{
    const int32_t i = NNOP__VALUE_INDEX(v.id);
    const int32_t tag =
            (int32_t)((uint32_t)v.id >> NNOP__VALUE_INDEX_BITS); /* used for v.id >= 0 */
    if (v.id < 0) {
        *why = "is an error value: the builder that returned it failed";
        return -1;
    }
    if (v.id == NNOP_NONE_ID) {
        *why = "is nnop_none(), which stands for an absent optional operand";
        return -1;
    }
    if (tag < 1 || tag > NNOP__GRAPH_TAGS) { /* a tag no graph has */
        *why = "is no value a builder returned (a zeroed or made-up nnop_value?)";
        return -1;
    }
    if (tag != g->tag) {
        *why = "is a value of another graph (a value is used only in the graph that made it)";
        return -1;
    }
    if (i >= g->n_values) {
        *why = "is a dangling value: this graph has fewer values";
        return -1;
    }
    return i;
}

static void *dup_bytes(const void *src, size_t bytes)
{
    void *p;
    if (!src)
        return NULL;
    p = malloc(bytes ? bytes : 1);
    if (p && bytes)
        memcpy(p, src, bytes);
    return p;
}

nnop_value nnop_none(void)
{
    return value_of(NNOP_NONE_ID);
}

/* Record a builder's error and return the error value: the graph's status and message stay
 * the first error's (compile fails with it); every error's message is listed
 * (nnop_graph_error) and is the context's last error, so an importer learns them all in one
 * pass. */
static nnop_value graph_fail(nnop_graph *g, nnop_status st, const char *fmt, ...) NNOP_PRINTF(3, 4);

static nnop_value graph_fail(nnop_graph *g, nnop_status st, const char *fmt, ...)
{
    char msg[NNOP_ERROR_LEN];
    va_list ap;
    if (!g->ctx) /* an orphan: its status says so, no context is left for a message */
        return value_of(ERROR_VALUE);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    nnop__fail(g->ctx, st, "%s", msg);
    if (g->status == NNOP_OK) {
        memcpy(g->error, msg, sizeof g->error);
        g->status = st;
    }
    if (g->n_errors < NNOP_GRAPH_ERRORS) {
        if (!g->errors)
            g->errors = (char **)calloc(NNOP_GRAPH_ERRORS, sizeof *g->errors);
        if (g->errors) /* out of memory: counted, not kept */
            g->errors[g->n_errors] = (char *)dup_bytes(msg, strlen(msg) + 1);
    }
    g->n_errors++;
    return value_of(ERROR_VALUE);
}

int nnop_graph_num_errors(const nnop_graph *g)
{
    return g ? (int)g->n_errors : 0;
}

const char *nnop_graph_error(const nnop_graph *g, int i)
{
    if (!g || i < 0 || i >= g->n_errors || i >= NNOP_GRAPH_ERRORS || !g->errors)
        return NULL;
    return g->errors[i] ? g->errors[i] : "(out of memory: the message was not kept)";
}

static int grow(void **arr, int32_t *cap, int32_t need, size_t elem)
{
    int32_t ncap;
    void *p;
    if (need <= *cap)
        return 1;
    if (need > NNOP_MAX_GRAPH_VALUES)
        return 0; /* the documented graph size limit (and int32_t ids never wrap) */
    ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    p = realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return 0;
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
    *arr = p;
    *cap = ncap;
    return 1;
}

nnop_status nnop_graph_create(nnop_context *ctx, nnop_graph **out)
{
    nnop_graph *g;
    if (!out)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_graph_create: out is NULL");
    *out = NULL;
    if (!ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(ctx);
    g = (nnop_graph *)nnop__calloc(1, sizeof *g);
    if (!g)
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_create: out of memory");
    g->ctx = ctx;
    g->layout = -1;
    /* consecutive graphs of a context get different tags; the context's address spreads
     * the tags of graphs made by different contexts */
    g->tag = 1 +
             (int32_t)((ctx->graphs_made++ + (uint32_t)((uintptr_t)ctx >> 6)) % NNOP__GRAPH_TAGS);
    g->live_next = ctx->live_graphs;
    if (g->live_next)
        g->live_next->live_prev = g;
    ctx->live_graphs = g;
    g->listed = 1;
    *out = g;
    return NNOP_OK;
}

static void unlist(nnop_graph *g)
{
    if (!g->listed)
        return;
    if (g->live_prev)
        g->live_prev->live_next = g->live_next;
    else
        g->ctx->live_graphs = g->live_next;
    if (g->live_next)
        g->live_next->live_prev = g->live_prev;
    g->live_prev = g->live_next = NULL;
    g->listed = 0;
}

void nnop__graphs_orphan(nnop_context *ctx)
{
    while (ctx->live_graphs) {
        nnop_graph *g = ctx->live_graphs;
        unlist(g);
        g->status = NNOP_ERR_INVALID_ARGUMENT; /* builders do nothing now, compile fails */
        snprintf(g->error, sizeof g->error, "the graph's context was destroyed");
        g->ctx = NULL;
    }
}

void nnop_graph_destroy(nnop_graph *g)
{
    int32_t i;
    if (!g)
        return;
    unlist(g);
    for (i = 0; !g->borrows_data && i < g->n_values; i++)
        free(g->values[i].data);
    for (i = 0; g->errors && i < g->n_errors && i < NNOP_GRAPH_ERRORS; i++)
        free(g->errors[i]);
    free(g->errors);
    free(g->values);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g);
}

nnop_status nnop_graph_status(const nnop_graph *g)
{
    return g ? g->status : NNOP_ERR_INVALID_ARGUMENT;
}

/* Append a value; returns its id or -1 when out of memory (error recorded). */
static int32_t new_value(nnop_graph *g, const nnop_tensor_desc *d, nnop__value_kind kind,
                         const char *name)
{
    nnop__value *v;
    if (!grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values)) {
        graph_fail(g, NNOP_ERR_OUT_OF_MEMORY, "graph builder: out of memory");
        return ERROR_VALUE;
    }
    v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->desc = *d;
    v->kind = kind;
    v->producer = -1;
    v->input_index = -1;
    v->output_index = -1;
    if (name)
        snprintf(v->name, sizeof v->name, "%s", name);
    return g->n_values++;
}

/* The graph's layout is stated now: results computed before (from degenerate N x 1 x 1 x 1
 * leaves only) were NCHW by assumption and take it, so one graph never mixes layouts. */
static void state_layout(nnop_graph *g, nnop_layout l)
{
    int32_t i;
    g->layout = (int)l;
    for (i = 0; i < g->n_values; i++)
        if (g->values[i].layout_assumed) {
            nnop__set_packed_strides(&g->values[i].desc, l);
            g->values[i].layout_assumed = 0;
        }
}

/* The graph's layout is that of its first 4-D input or constant whose strides say NCHW or
 * NHWC (or the one nnop_graph_set_layout declared). */
static void note_leaf_layout(nnop_graph *g, const nnop_tensor_desc *d)
{
    if (g->layout >= 0 || d->ndim != 4 || nnop__layout_ambiguous(d))
        return;
    state_layout(g, nnop__layout_of(d));
}

nnop_status nnop_graph_set_layout(nnop_graph *g, nnop_layout l)
{
    if (!g)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!g->ctx)
        return NNOP_ERR_INVALID_ARGUMENT; /* an orphan: no context to hold a message */
    if (l != NNOP_NCHW && l != NNOP_NHWC)
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_graph_set_layout: layout %d is neither NNOP_NCHW nor NNOP_NHWC",
                          (int)l);
    if (g->layout >= 0 && g->layout != (int)l)
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_graph_set_layout: the graph is %s already (an input or constant "
                          "states it), not %s",
                          g->layout == NNOP_NHWC ? "NHWC" : "NCHW",
                          l == NNOP_NHWC ? "NHWC" : "NCHW");
    state_layout(g, l);
    return NNOP_OK;
}

/* A 4-D result takes the layout of its first 4-D operand that has one of its own, else the
 * graph's: a value like N x 1 x 1 x 1 must not turn an NHWC graph into NCHW downstream.
 * Returns 1 when neither says one (the result is NCHW until a leaf states the layout). */
static int settle_layout(const nnop_graph *g, const int32_t *in, int n_in, nnop_tensor_desc *out)
{
    int i, layout = g->layout;
    if (out->ndim != 4)
        return 0;
    for (i = n_in - 1; i >= 0; i--) {
        const nnop__value *v = in[i] == NNOP_NONE_ID ? NULL : &g->values[in[i]];
        if (v && v->desc.ndim == 4 && !v->layout_assumed && !nnop__layout_ambiguous(&v->desc))
            layout = (int)nnop__layout_of(&v->desc);
    }
    if (layout >= 0) {
        nnop__set_packed_strides(out, (nnop_layout)layout);
        return 0;
    }
    nnop__set_packed_strides(out, NNOP_NCHW);
    return !nnop__layout_ambiguous(out);
}

static nnop_value add_leaf(nnop_graph *g, const char *fn, const char *name,
                           const nnop_tensor_desc *d, nnop__value_kind kind)
{
    char msg[256];
    nnop_status st;
    if (!g->ctx) /* an orphan: builders do nothing */
        return value_of(ERROR_VALUE);
    if (!d)
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "%s('%s'): descriptor is NULL", fn,
                          name ? name : "");
    st = nnop__check_desc(d, msg, sizeof msg);
    if (st != NNOP_OK)
        return graph_fail(g, st, "%s('%s'): %s", fn, name ? name : "", msg);
    note_leaf_layout(g, d);
    {
        int32_t i = new_value(g, d, kind, name);
        return i < 0 ? value_of(ERROR_VALUE) : tagged(g, i);
    }
}

nnop_value nnop_input(nnop_graph *g, const char *name, const nnop_tensor_desc *d)
{
    nnop_value v;
    int32_t i;
    if (!g)
        return value_of(ERROR_VALUE);
    v = add_leaf(g, "nnop_input", name, d, NNOP_VALUE_INPUT);
    if (v.id < 0)
        return v;
    if (!grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof *g->inputs))
        return graph_fail(g, NNOP_ERR_OUT_OF_MEMORY, "nnop_input: out of memory");
    i = NNOP__VALUE_INDEX(v.id);
    g->values[i].input_index = g->n_inputs;
    g->inputs[g->n_inputs++] = i;
    return v;
}

nnop_value nnop_constant(nnop_graph *g, const char *name, const nnop_tensor_desc *d,
                         const void *host_data)
{
    nnop_value v;
    size_t bytes;
    void **data;
    if (!g)
        return value_of(ERROR_VALUE);
    if (!host_data)
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "nnop_constant('%s'): host_data is NULL",
                          name ? name : "");
    v = add_leaf(g, "nnop_constant", name, d, NNOP_VALUE_CONSTANT);
    if (v.id < 0)
        return v;
    bytes = nnop_tensor_bytes(d);
    data = &g->values[NNOP__VALUE_INDEX(v.id)].data;
    *data = malloc(bytes);
    if (!*data)
        return graph_fail(g, NNOP_ERR_OUT_OF_MEMORY, "nnop_constant('%s'): out of memory",
                          name ? name : "");
    memcpy(*data, host_data, bytes);
    return v;
}

const char *nnop__node_label(const nnop_graph *g, int32_t node, char *buf, size_t len)
{
    const nnop__op_def *def = nnop__op(g->nodes[node].op);
    const nnop__value *out = &g->values[g->nodes[node].out];
    if (out->named)
        snprintf(buf, len, "node #%d (%s '%s')", (int)node, def ? def->name : "?", out->name);
    else
        snprintf(buf, len, "node #%d (%s)", (int)node, def ? def->name : "?");
    return buf;
}

nnop_status nnop_graph_name_next(nnop_graph *g, const char *name)
{
    if (!g || !g->ctx) /* no graph, or an orphan */
        return NNOP_ERR_INVALID_ARGUMENT;
    snprintf(g->next_name, sizeof g->next_name, "%s", name ? name : "");
    return NNOP_OK;
}

/* Resolve the inputs of a new node to value indices (NNOP_NONE_ID for an absent optional
 * one); on error record it and return 0. */
static int check_inputs(nnop_graph *g, const char *fn, const nnop_value *in, int n_in,
                        unsigned optional, int32_t *ids, const nnop_tensor_desc **descs)
{
    int i, first = -1;
    for (i = 0; i < n_in; i++) {
        const char *why = NULL;
        descs[i] = NULL;
        ids[i] = NNOP_NONE_ID;
        if (in[i].id == NNOP_NONE_ID && (optional & (1u << i)))
            continue;
        if (in[i].id == NNOP_NONE_ID) {
            graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "%s: input %d is required but is nnop_none()",
                       fn, i);
            return 0;
        }
        if (in[i].id < 0 && g->n_errors > 0) /* a failed builder's: reported where it failed */
            return 0;
        ids[i] = index_in(g, in[i], &why);
        if (ids[i] < 0) {
            graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "%s: input %d (id %ld) %s", fn, i,
                       (long)in[i].id, why);
            return 0;
        }
        descs[i] = &g->values[ids[i]].desc;
        if (first < 0)
            first = i;
        else if (descs[i]->dtype != descs[first]->dtype) {
            graph_fail(g, NNOP_ERR_SHAPE, "%s: dtype mix: input %d is %s but input %d is %s", fn,
                       first, nnop__dtype_name(descs[first]->dtype), i,
                       nnop__dtype_name(descs[i]->dtype));
            return 0;
        }
    }
    return 1;
}

/* optional: bit i set when input i may be nnop_none() */
static nnop_value add_node(nnop_graph *g, const char *fn, nnop_op_kind op, const nnop_value *in,
                           int n_in, unsigned optional, const nnop__node_attr *attr)
{
    const nnop_tensor_desc *descs[NNOP_MAX_NODE_INPUTS];
    int32_t ids[NNOP_MAX_NODE_INPUTS];
    const nnop__op_def *def = nnop__op(op);
    nnop_tensor_desc out;
    nnop__node *node;
    char msg[384], name[NNOP_NAME_LEN], who[NNOP_NAME_LEN + 48];
    int32_t vid;
    int i, assumed;
    if (!g)
        return value_of(ERROR_VALUE);
    /* the name of nnop_graph_name_next is this node's alone, whatever becomes of it */
    memcpy(name, g->next_name, sizeof name);
    g->next_name[0] = '\0';
    if (!g->ctx) /* an orphan: builders do nothing */
        return value_of(ERROR_VALUE);
    if (name[0]) /* messages name the node as the importer knows it */
        snprintf(who, sizeof who, "%s '%s'", fn, name);
    else
        snprintf(who, sizeof who, "%s", fn);
    fn = who;
    if (!check_inputs(g, fn, in, n_in, optional, ids, descs))
        return value_of(ERROR_VALUE);
    if (!grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
        return graph_fail(g, NNOP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    node = &g->nodes[g->n_nodes];
    memset(node, 0, sizeof *node);
    node->op = op;
    node->n_in = n_in;
    for (i = 0; i < n_in; i++)
        node->in[i] = ids[i];
    if (attr)
        node->attr = *attr;
    memset(&out, 0, sizeof out);
    msg[0] = '\0';
    {
        nnop_status st = def->infer(node, descs, &out, msg, sizeof msg);
        if (st != NNOP_OK)
            return graph_fail(g, st, "%s (node #%d): %s", fn, (int)g->n_nodes, msg);
        /* an inferred shape passes the bounds of a given one: the backends size buffers
         * from it (a conv with a huge pad once inferred a shape whose byte size wrapped) */
        st = nnop__check_desc(&out, msg, sizeof msg);
        if (st != NNOP_OK)
            return graph_fail(g, NNOP_ERR_SHAPE,
                              "%s (node #%d): the inferred output shape is out of bounds: %s", fn,
                              (int)g->n_nodes, msg);
    }
    assumed = settle_layout(g, ids, n_in, &out);
    vid = new_value(g, &out, NNOP_VALUE_NODE, NULL);
    if (vid < 0)
        return value_of(ERROR_VALUE);
    g->values[vid].layout_assumed = assumed;
    g->values[vid].producer = g->n_nodes;
    if (name[0])
        memcpy(g->values[vid].name, name, sizeof g->values[vid].name);
    else
        snprintf(g->values[vid].name, sizeof g->values[vid].name, "%s#%d", def->name,
                 (int)g->n_nodes);
    g->values[vid].named = name[0] != '\0';
    node->out = vid;
    for (i = 0; i < n_in; i++)
        if (ids[i] != NNOP_NONE_ID)
            g->values[ids[i]].n_consumers++;
    g->n_nodes++;
    return tagged(g, vid);
}

nnop_value nnop_conv(nnop_graph *g, nnop_value x, nnop_value w, const nnop_conv_params *p)
{
    nnop_value in[2];
    nnop__node_attr a;
    if (g && !p)
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "nnop_conv: params is NULL");
    memset(&a, 0, sizeof a);
    if (p)
        a.conv = *p;
    in[0] = x;
    in[1] = w;
    return add_node(g, "nnop_conv", NNOP_OP_CONV, in, 2, 0, &a);
}

nnop_value nnop_bias(nnop_graph *g, nnop_value x, nnop_value b)
{
    nnop_value in[2];
    in[0] = x;
    in[1] = b;
    return add_node(g, "nnop_bias", NNOP_OP_BIAS, in, 2, 0, NULL);
}

nnop_value nnop_act(nnop_graph *g, nnop_value x, nnop_act_kind kind, float alpha)
{
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.act.kind = kind;
    a.act.alpha = alpha;
    a.act.lo = 0.0f;
    a.act.hi = 6.0f;
    if (kind == NNOP_ACT_CLAMP && g)
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_act: NNOP_ACT_CLAMP needs bounds: use nnop_clamp");
    return add_node(g, "nnop_act", NNOP_OP_ACT, &x, 1, 0, &a);
}

nnop_value nnop_clamp(nnop_graph *g, nnop_value x, float lo, float hi)
{
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.act.kind = NNOP_ACT_CLAMP;
    a.act.lo = lo;
    a.act.hi = hi;
    return add_node(g, "nnop_clamp", NNOP_OP_ACT, &x, 1, 0, &a);
}

nnop_value nnop_batchnorm(nnop_graph *g, nnop_value x, nnop_value gamma, nnop_value beta,
                          nnop_value mean, nnop_value var, float eps)
{
    nnop_value in[5];
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.eps = eps;
    in[0] = x;
    in[1] = gamma;
    in[2] = beta;
    in[3] = mean;
    in[4] = var;
    return add_node(g, "nnop_batchnorm", NNOP_OP_BATCHNORM, in, 5, 0, &a);
}

nnop_value nnop_add(nnop_graph *g, nnop_value a, nnop_value b)
{
    nnop_value in[2];
    in[0] = a;
    in[1] = b;
    return add_node(g, "nnop_add", NNOP_OP_ADD, in, 2, 0, NULL);
}

nnop_value nnop_pool(nnop_graph *g, nnop_value x, nnop_pool_kind kind, const nnop_pool_params *p)
{
    nnop__node_attr a;
    if (g && !p)
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "nnop_pool: params is NULL");
    memset(&a, 0, sizeof a);
    a.pool.kind = kind;
    if (p)
        a.pool.p = *p;
    return add_node(g, "nnop_pool", NNOP_OP_POOL, &x, 1, 0, &a);
}

nnop_value nnop_global_avg_pool(nnop_graph *g, nnop_value x)
{
    return add_node(g, "nnop_global_avg_pool", NNOP_OP_GLOBAL_AVG_POOL, &x, 1, 0, NULL);
}

nnop_value nnop_flatten(nnop_graph *g, nnop_value x)
{
    return add_node(g, "nnop_flatten", NNOP_OP_FLATTEN, &x, 1, 0, NULL);
}

nnop_value nnop_linear(nnop_graph *g, nnop_value x, nnop_value w, nnop_value b)
{
    nnop_value in[3];
    in[0] = x;
    in[1] = w;
    in[2] = b;
    return add_node(g, "nnop_linear", NNOP_OP_LINEAR, in, 3, 1u << 2, NULL);
}

nnop_value nnop_softmax(nnop_graph *g, nnop_value x)
{
    return add_node(g, "nnop_softmax", NNOP_OP_SOFTMAX, &x, 1, 0, NULL);
}

nnop_value nnop_mul(nnop_graph *g, nnop_value a, nnop_value b)
{
    nnop_value in[2];
    in[0] = a;
    in[1] = b;
    return add_node(g, "nnop_mul", NNOP_OP_MUL, in, 2, 0, NULL);
}

nnop_value nnop_sub(nnop_graph *g, nnop_value a, nnop_value b)
{
    nnop_value in[2];
    in[0] = a;
    in[1] = b;
    return add_node(g, "nnop_sub", NNOP_OP_SUB, in, 2, 0, NULL);
}

nnop_value nnop_div(nnop_graph *g, nnop_value a, nnop_value b)
{
    nnop_value in[2];
    in[0] = a;
    in[1] = b;
    return add_node(g, "nnop_div", NNOP_OP_DIV, in, 2, 0, NULL);
}

nnop_value nnop_layer_norm(nnop_graph *g, nnop_value x, nnop_value gamma, nnop_value beta,
                           nnop_norm_axes axes, float eps)
{
    nnop_value in[3];
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.norm.eps = eps;
    a.norm.axes = axes;
    in[0] = x;
    in[1] = gamma;
    in[2] = beta;
    return add_node(g, "nnop_layer_norm", NNOP_OP_LAYER_NORM, in, 3, 3u << 1, &a);
}

nnop_value nnop_group_norm(nnop_graph *g, nnop_value x, int64_t groups, nnop_value gamma,
                           nnop_value beta, float eps)
{
    nnop_value in[3];
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.norm.eps = eps;
    a.norm.groups = groups;
    in[0] = x;
    in[1] = gamma;
    in[2] = beta;
    return add_node(g, "nnop_group_norm", NNOP_OP_GROUP_NORM, in, 3, 3u << 1, &a);
}

nnop_value nnop_rms_norm(nnop_graph *g, nnop_value x, nnop_value gamma, float eps)
{
    nnop_value in[2];
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.norm.eps = eps;
    in[0] = x;
    in[1] = gamma;
    return add_node(g, "nnop_rms_norm", NNOP_OP_RMS_NORM, in, 2, 1u << 1, &a);
}

nnop_value nnop_concat(nnop_graph *g, const nnop_value *xs, int n)
{
    if (g && !xs)
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "nnop_concat: xs is NULL");
    if (g && (n < 2 || n > NNOP_MAX_CONCAT_INPUTS))
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_concat: n = %d inputs, must be 2 to %d", n, NNOP_MAX_CONCAT_INPUTS);
    return add_node(g, "nnop_concat", NNOP_OP_CONCAT, xs, n, 0, NULL);
}

nnop_value nnop_resize(nnop_graph *g, nnop_value x, const nnop_resize_params *p)
{
    nnop__node_attr a;
    if (g && !p)
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "nnop_resize: params is NULL");
    memset(&a, 0, sizeof a);
    if (p)
        a.resize = *p;
    return add_node(g, "nnop_resize", NNOP_OP_RESIZE, &x, 1, 0, &a);
}

nnop_value nnop_conv_transpose(nnop_graph *g, nnop_value x, nnop_value w,
                               const nnop_conv_transpose_params *p)
{
    nnop_value in[2];
    nnop__node_attr a;
    if (g && !p)
        return graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "nnop_conv_transpose: params is NULL");
    memset(&a, 0, sizeof a);
    if (p)
        a.deconv = *p;
    in[0] = x;
    in[1] = w;
    return add_node(g, "nnop_conv_transpose", NNOP_OP_CONV_TRANSPOSE, in, 2, 0, &a);
}

nnop_value nnop_lrn(nnop_graph *g, nnop_value x, int64_t size, float alpha, float beta, float bias)
{
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.lrn.size = size;
    a.lrn.alpha = alpha;
    a.lrn.beta = beta;
    a.lrn.bias = bias;
    return add_node(g, "nnop_lrn", NNOP_OP_LRN, &x, 1, 0, &a);
}

nnop_value nnop_channel_shuffle(nnop_graph *g, nnop_value x, int64_t groups)
{
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.shuffle_groups = groups;
    return add_node(g, "nnop_channel_shuffle", NNOP_OP_CHANNEL_SHUFFLE, &x, 1, 0, &a);
}

nnop_value nnop_channel_slice(nnop_graph *g, nnop_value x, int64_t start, int64_t count)
{
    nnop__node_attr a;
    memset(&a, 0, sizeof a);
    a.slice[0] = start;
    a.slice[1] = count;
    return add_node(g, "nnop_channel_slice", NNOP_OP_CHANNEL_SLICE, &x, 1, 0, &a);
}

nnop_status nnop_output(nnop_graph *g, nnop_value v, const char *name)
{
    const char *why = NULL;
    int32_t i;
    if (!g)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (g->status != NNOP_OK) /* this call's message, with the error that stuck */
        return nnop__fail(g->ctx, g->status, "nnop_output('%s'): the graph has a builder error: %s",
                          name ? name : "", g->error);
    i = index_in(g, v, &why);
    if (i < 0) {
        graph_fail(g, NNOP_ERR_INVALID_ARGUMENT, "nnop_output('%s'): value id %ld %s",
                   name ? name : "", (long)v.id, why);
        return g->status;
    }
    if (g->values[i].output_index >= 0) {
        graph_fail(g, NNOP_ERR_INVALID_ARGUMENT,
                   "nnop_output('%s'): the value is already output %d ('%s')", name ? name : "",
                   (int)g->values[i].output_index, g->values[i].output_name);
        return g->status;
    }
    if (!grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof *g->outputs)) {
        graph_fail(g, NNOP_ERR_OUT_OF_MEMORY, "nnop_output: out of memory");
        return g->status;
    }
    g->values[i].output_index = g->n_outputs;
    if (name && g->values[i].kind == NNOP_VALUE_NODE)
        snprintf(g->values[i].name, sizeof g->values[i].name, "%s", name);
    snprintf(g->values[i].output_name, sizeof g->values[i].output_name, "%s",
             name ? name : g->values[i].name);
    g->outputs[g->n_outputs++] = i;
    return NNOP_OK;
}

nnop_status nnop_value_desc(const nnop_graph *g, nnop_value v, nnop_tensor_desc *out)
{
    const char *why = NULL;
    int32_t i;
    if (!g)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!out)
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_value_desc: out is NULL");
    i = index_in(g, v, &why);
    if (i < 0)
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_value_desc: value id %ld %s",
                          (long)v.id, why);
    *out = g->values[i].desc;
    return NNOP_OK;
}

/* Structural checks before compile: the builders keep the graph topologically ordered, but a
 * graph is also checked as a whole so that a corrupted one is refused rather than run. */
nnop_status nnop__graph_validate(nnop_graph *g)
{
    int32_t n, i;
    char label[NNOP_NAME_LEN + 64]; /* nnop__node_label: the node's name too */
    if (g->status != NNOP_OK && g->n_errors > 1)
        return nnop__fail(g->ctx, g->status,
                          "nnop_graph_compile: the graph has a builder error: %s (and %d more: "
                          "nnop_graph_error lists them)",
                          g->error, (int)g->n_errors - 1);
    if (g->status != NNOP_OK)
        return nnop__fail(g->ctx, g->status,
                          "nnop_graph_compile: the graph has a builder error: %s", g->error);
    if (g->n_outputs == 0)
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_graph_compile: the graph has no outputs (call nnop_output)");
    for (i = 0; i < g->n_values; i++) {
        char msg[256];
        if (nnop__check_desc(&g->values[i].desc, msg, sizeof msg) != NNOP_OK)
            return nnop__fail(g->ctx, NNOP_ERR_SHAPE,
                              "nnop_graph_compile: value %d ('%s') has an invalid shape: %s",
                              (int)i, g->values[i].name, msg);
    }
    for (n = 0; n < g->n_nodes; n++) {
        const nnop__node *node = &g->nodes[n];
        for (i = 0; i < node->n_in; i++) {
            int32_t id = node->in[i];
            if (id == NNOP_NONE_ID)
                continue;
            if (id < 0 || id >= g->n_values)
                return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT,
                                  "nnop_graph_compile: %s input %d is a dangling value id %d",
                                  nnop__node_label(g, n, label, sizeof label), (int)i, (int)id);
            if (g->values[id].kind == NNOP_VALUE_NODE && g->values[id].producer >= n)
                return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT,
                                  "nnop_graph_compile: cycle: %s reads value %d produced by "
                                  "node #%d, which is not before it",
                                  nnop__node_label(g, n, label, sizeof label), (int)id,
                                  (int)g->values[id].producer);
        }
    }
    return NNOP_OK;
}

nnop_status nnop__graph_clone(const nnop_graph *g, nnop_graph **out)
{
    nnop_graph *c = (nnop_graph *)nnop__calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return NNOP_ERR_OUT_OF_MEMORY;
    *c = *g;
    c->listed = 0; /* the plan's own: its context's list holds the user's graphs alone */
    c->live_prev = c->live_next = NULL;
    c->borrows_data = 1; /* copying the weights again cost 25 ms and 50 MB for ResNet-50 */
    c->errors = NULL;    /* a graph with errors is never cloned: nothing to copy */
    c->n_errors = 0;
    c->values = (nnop__value *)dup_bytes(g->values, (size_t)g->n_values * sizeof *g->values);
    c->nodes = (nnop__node *)dup_bytes(g->nodes, (size_t)g->n_nodes * sizeof *g->nodes);
    c->inputs = (int32_t *)dup_bytes(g->inputs, (size_t)g->n_inputs * sizeof *g->inputs);
    c->outputs = (int32_t *)dup_bytes(g->outputs, (size_t)g->n_outputs * sizeof *g->outputs);
    c->cap_values = g->n_values;
    c->cap_nodes = g->n_nodes;
    c->cap_inputs = g->n_inputs;
    c->cap_outputs = g->n_outputs;
    if ((!c->values && g->values) || (!c->nodes && g->nodes) || (!c->inputs && g->inputs) ||
        (!c->outputs && g->outputs)) {
        nnop_graph_destroy(c);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    *out = c;
    return NNOP_OK;
}

/* After compile: the plan no longer needs (and must not keep) the user's constant data. */
void nnop__graph_drop_borrowed(nnop_graph *g)
{
    int32_t i;
    if (!g->borrows_data)
        return;
    for (i = 0; i < g->n_values; i++)
        g->values[i].data = NULL;
}

/* Before lowering: every value whose strides fit both layouts gets the graph's packed
 * strides (same offsets), so the backends see one layout per graph, never a mix. */
void nnop__graph_settle_layouts(nnop_graph *g)
{
    int32_t i;
    if (g->layout < 0)
        return;
    for (i = 0; i < g->n_values; i++)
        if (nnop__layout_ambiguous(&g->values[i].desc))
            nnop__set_packed_strides(&g->values[i].desc, (nnop_layout)g->layout);
}

/* An execute's arrays against the graph's inputs and outputs (nnop_plan_execute, nnop_exec_run) */
int nnop__check_io(const nnop_graph *g, const void *const *inputs, void *const *outputs, char *why,
                   size_t len)
{
    int32_t i;
    if ((g->n_inputs > 0 && !inputs) || !outputs) {
        snprintf(why, len, "%s array is NULL", outputs ? "inputs" : "outputs");
        return 0;
    }
    for (i = 0; i < g->n_inputs; i++)
        if (!inputs[i]) {
            snprintf(why, len, "inputs[%d] ('%s') is NULL", (int)i, g->values[g->inputs[i]].name);
            return 0;
        }
    for (i = 0; i < g->n_outputs; i++)
        if (!outputs[i]) {
            snprintf(why, len, "outputs[%d] ('%s') is NULL", (int)i, g->values[g->outputs[i]].name);
            return 0;
        }
    return 1;
}
