/* oneshot.c: the one-call entry points (nnop_conv_bias_relu, nnop_conv_bias_act) over a small
 * per-context cache of compiled plans keyed by descriptors, parameters and activation. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define ONESHOT_SLOTS 64

typedef struct oneshot_key {
    nnop_tensor_desc x, w;
    nnop_conv_params p;
    int has_bias;
    int act;
    float alpha;
} oneshot_key;

typedef struct oneshot_entry {
    oneshot_key key;
    nnop_plan *plan;
    uint64_t last_use;
} oneshot_entry;

struct nnop__oneshot {
    oneshot_entry slots[ONESHOT_SLOTS];
    uint64_t clock;
};

void nnop__oneshot_destroy(nnop_context *ctx)
{
    int i;
    if (!ctx->oneshot)
        return;
    for (i = 0; i < ONESHOT_SLOTS; i++)
        nnop_plan_destroy(ctx->oneshot->slots[i].plan);
    nnop__free(ctx->oneshot);
    ctx->oneshot = NULL;
}

void nnop_oneshot_clear(nnop_context *ctx)
{
    if (ctx)
        nnop__oneshot_destroy(ctx);
}

/* A builder's message without its own name ("nnop_conv (node #0): groups ..." gives
 * "groups ..."): the user called the one-call op, not the builder. */
static const char *builder_reason(const char *msg)
{
    const char *colon = strstr(msg, ": ");
    return colon ? colon + 2 : msg;
}

/* The graph of k. A builder's error names the argument it came from (the descriptors were
 * checked before: what fails here is their combination, p or act). */
static nnop_status build_graph(nnop_graph *g, const char *api, const oneshot_key *k)
{
    const char *arg = "x_desc, w_desc and p";
    nnop_value x = nnop_input(g, "x", &k->x); /* inputs in execute's order: x, w, bias */
    nnop_value w = nnop_input(g, "w", &k->w);
    nnop_value y = nnop_conv(g, x, w, &k->p);
    if (k->has_bias && nnop_graph_status(g) == NNOP_OK) {
        nnop_tensor_desc bd = nnop_tensor_1d(k->x.dtype, k->w.dims[0]);
        arg = "bias";
        y = nnop_bias(g, y, nnop_input(g, "bias", &bd));
    }
    if (k->act != NNOP_ACT_IDENTITY && nnop_graph_status(g) == NNOP_OK) {
        arg = "act";
        y = nnop_act(g, y, (nnop_act_kind)k->act, k->alpha);
    }
    if (nnop_graph_status(g) != NNOP_OK)
        return nnop__fail(g->ctx, g->status, "%s: %s: %s", api, arg, builder_reason(g->error));
    return nnop_output(g, y, "y");
}

static nnop_status build_plan(nnop_context *ctx, const char *api, const oneshot_key *k,
                              nnop_plan **out)
{
    nnop_graph *g = NULL;
    nnop_status st = nnop_graph_create(ctx, &g);
    if (st != NNOP_OK)
        return st;
    st = build_graph(g, api, k);
    if (st == NNOP_OK)
        st = nnop_graph_compile(g, NULL, out);
    nnop_graph_destroy(g);
    return st;
}

/* The cached plan for k, compiled on a miss (evicting the least recently used). */
static nnop_status get_plan(nnop_context *ctx, const char *api, const oneshot_key *k,
                            nnop_plan **out)
{
    oneshot_entry *victim;
    nnop_status st;
    int i;
    if (!ctx->oneshot) {
        ctx->oneshot = (struct nnop__oneshot *)nnop__calloc(1, sizeof *ctx->oneshot);
        if (!ctx->oneshot)
            return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "%s: out of memory", api);
    }
    victim = &ctx->oneshot->slots[0];
    for (i = 0; i < ONESHOT_SLOTS; i++) {
        oneshot_entry *e = &ctx->oneshot->slots[i];
        if (e->plan && memcmp(&e->key, k, sizeof *k) == 0) {
            e->last_use = ++ctx->oneshot->clock;
            *out = e->plan;
            return NNOP_OK;
        }
        if (!e->plan || (victim->plan && e->last_use < victim->last_use))
            victim = e;
    }
    st = build_plan(ctx, api, k, out);
    if (st != NNOP_OK)
        return st;
    nnop_plan_destroy(victim->plan);
    victim->key = *k;
    victim->plan = *out;
    victim->last_use = ++ctx->oneshot->clock;
    return NNOP_OK;
}

static nnop_status check_args(nnop_context *ctx, const char *api, const nnop_tensor_desc *x_desc,
                              const void *x, const nnop_tensor_desc *w_desc, const void *w,
                              const nnop_conv_params *p, const nnop_tensor_desc *y_desc,
                              const void *y)
{
    const char *missing = !x_desc   ? "x_desc"
                          : !x      ? "x"
                          : !w_desc ? "w_desc"
                          : !w      ? "w"
                          : !p      ? "p"
                          : !y_desc ? "y_desc"
                          : !y      ? "y"
                                    : NULL;
    const nnop_tensor_desc *descs[3];
    const char *names[3] = {"x_desc", "w_desc", "y_desc"};
    char msg[256];
    int i;
    if (missing)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", api, missing);
    descs[0] = x_desc, descs[1] = w_desc, descs[2] = y_desc;
    for (i = 0; i < 3; i++) {
        nnop_status st = nnop__check_desc(descs[i], msg, sizeof msg);
        if (st != NNOP_OK)
            return nnop__fail(ctx, st, "%s: %s: %s", api, names[i], msg);
    }
    return NNOP_OK;
}

/* Both entry points; api names the one the user called in messages. */
static nnop_status conv_bias_act(nnop_context *ctx, const char *api, const nnop_tensor_desc *x_desc,
                                 const void *x, const nnop_tensor_desc *w_desc, const void *w,
                                 const void *bias, const nnop_conv_params *p, int act, float alpha,
                                 const nnop_tensor_desc *y_desc, void *y)
{
    oneshot_key k;
    nnop_plan *plan = NULL;
    nnop_tensor_desc yd;
    nnop_status st;
    const void *inputs[3];
    void *outputs[1];
    if (!ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(ctx);
    st = check_args(ctx, api, x_desc, x, w_desc, w, p, y_desc, y);
    if (st != NNOP_OK)
        return st;
    memset(&k, 0, sizeof k); /* padding too: the key is compared with memcmp */
    k.x = *x_desc;
    k.w = *w_desc;
    k.p = *p;
    k.has_bias = bias != NULL;
    k.act = act;
    k.alpha = (act == NNOP_ACT_LEAKY_RELU || act == NNOP_ACT_ELU) ? alpha : 0.0f;
    st = get_plan(ctx, api, &k, &plan);
    if (st != NNOP_OK)
        return st;
    nnop_plan_output_desc(plan, 0, &yd);
    if (!nnop__desc_equal(&yd, y_desc)) {
        char want[96], got[96];
        nnop__desc_string(&yd, want, sizeof want);
        nnop__desc_string(y_desc, got, sizeof got);
        return nnop__fail(ctx, NNOP_ERR_SHAPE,
                          "%s: y_desc %s does not match the inferred output %s", api, got, want);
    }
    inputs[0] = x;
    inputs[1] = w;
    inputs[2] = bias;
    outputs[0] = y;
    return nnop_plan_execute(plan, inputs, outputs);
}

nnop_status nnop_conv_bias_relu(nnop_context *ctx, const nnop_tensor_desc *x_desc, const void *x,
                                const nnop_tensor_desc *w_desc, const void *w, const void *bias,
                                const nnop_conv_params *p, const nnop_tensor_desc *y_desc, void *y)
{
    return conv_bias_act(ctx, "nnop_conv_bias_relu", x_desc, x, w_desc, w, bias, p, NNOP_ACT_RELU,
                         0.0f, y_desc, y);
}

nnop_status nnop_conv_bias_act(nnop_context *ctx, const nnop_tensor_desc *x_desc, const void *x,
                               const nnop_tensor_desc *w_desc, const void *w, const void *bias,
                               const nnop_conv_params *p, int act, float alpha,
                               const nnop_tensor_desc *y_desc, void *y)
{
    return conv_bias_act(ctx, "nnop_conv_bias_act", x_desc, x, w_desc, w, bias, p, act, alpha,
                         y_desc, y);
}
