/* fuzz_graph.c: a structured program of graph-builder calls read from the input (an input
 * tensor, then up to 12 ops with their parameters, huge ones included; an op byte of 240 or
 * more picks one of the issue-15 builders, with hostile parameters too), compiled on the CPU
 * backend when every tensor is small (the CPU plan allocates them all). Oracles: every descriptor
 * the builders inferred is valid and within the documented bounds; a graph with a builder error
 * does not compile; a compiled plan runs on inputs and outputs of exactly nnop_tensor_bytes (ASan
 * sees any overrun); fused and unfused plans give the same bits. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS      12
#define MAX_CONSTS   64
#define RUN_ELEMENTS (1 << 16) /* run plans whose every value is at most this big */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned rd(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

/* small values mostly, a huge one when the byte says so (the bounds checks' corner) */
static int64_t dim(reader *r, int64_t lo, int64_t span)
{
    unsigned b = rd(r);
    if (b == 255)
        return (int64_t)1 << 20;
    if (b == 254)
        return (int64_t)1 << 31;
    return lo + (int64_t)(b % (unsigned)span);
}

typedef struct consts {
    float *data[MAX_CONSTS];
    int n;
} consts;

static float *fill(size_t n, unsigned seed)
{
    float *p = (float *)malloc((n ? n : 1) * sizeof *p);
    size_t i;
    uint32_t s = seed * 2654435761u + 1u;
    for (i = 0; p && i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = (float)((int32_t)(s >> 8) % 2001 - 1000) / 1000.0f;
    }
    return p;
}

static nnop_value constant(nnop_graph *g, consts *c, nnop_tensor_desc d)
{
    int64_t n = nnop_tensor_elements(&d);
    float *p;
    if (n <= 0 || n > RUN_ELEMENTS || c->n == MAX_CONSTS)
        return nnop_input(g, "big", &d); /* an input: no data needed to build */
    p = fill((size_t)n, (unsigned)c->n);
    if (!p)
        abort();
    c->data[c->n++] = p;
    return nnop_constant(g, "c", &d, p);
}

static nnop_tensor_desc desc_of(nnop_graph *g, nnop_value v)
{
    nnop_tensor_desc d;
    memset(&d, 0, sizeof d);
    if (nnop_value_desc(g, v, &d) != NNOP_OK)
        memset(&d, 0, sizeof d);
    return d;
}

/* Parameters from a byte: ordinary values mostly, the hostile ones now and then. */
static float pick_eps(reader *r)
{
    static const float v[] = {1e-5f, 1e-3f, 0.0f, 0.1f, -1.0f, 1e30f};
    unsigned b = rd(r);
    return b == 255 ? (float)NAN : b == 254 ? (float)INFINITY : v[b % 6];
}

static double pick_scale(reader *r)
{
    static const double v[] = {2.0, 0.5, 1.0, 1.5, 3.0, 0.25, 0.0, -2.0, 1e9, 1e-9};
    unsigned b = rd(r);
    return b == 255 ? (double)NAN : v[b % 10];
}

/* gamma/beta for a norm of x: none, 1-D of C, 4-D 1,C,H,W, or one of another size */
static nnop_value norm_param(nnop_graph *g, reader *r, consts *c, const nnop_tensor_desc *x,
                             nnop_layout l)
{
    unsigned b = rd(r) % 4;
    int64_t ch = x->ndim >= 2 ? x->dims[1] : 1;
    if (b == 0)
        return nnop_none();
    if (b == 1)
        return constant(g, c, nnop_tensor_1d(NNOP_F32, ch));
    if (b == 2 && x->ndim == 4)
        return constant(g, c, nnop_tensor_4d(NNOP_F32, l, 1, ch, x->dims[2], x->dims[3]));
    return constant(g, c, nnop_tensor_1d(NNOP_F32, ch + 1));
}

/* One of the issue-15 builders on v (op 12 to 17); vals: earlier values for joins */
static nnop_value new_op(nnop_graph *g, reader *r, consts *c, unsigned op, nnop_value v,
                         const nnop_value *vals, int nv, nnop_layout l)
{
    nnop_tensor_desc d = desc_of(g, v);
    int64_t ch = d.ndim >= 2 ? d.dims[1] : 1;
    if (op == 12) { /* mul, sub, div: same shape, N,C,1,1, 1,C,1,1, or an earlier value */
        unsigned form = rd(r) % 4, kind = rd(r) % 3;
        nnop_value b = vals[rd(r) % (unsigned)nv];
        if (form == 0)
            b = constant(g, c, d);
        else if (form == 1 && d.ndim == 4)
            b = constant(g, c, nnop_tensor_4d(NNOP_F32, l, d.dims[0], ch, 1, 1));
        else if (form == 2)
            b = constant(g, c, nnop_tensor_4d(NNOP_F32, l, 1, ch, 1, 1));
        return kind == 0 ? nnop_mul(g, v, b) : kind == 1 ? nnop_sub(g, v, b) : nnop_div(g, v, b);
    }
    if (op == 13) { /* layer norm (C or C,H,W), group norm, RMS norm */
        unsigned kind = rd(r) % 4;
        nnop_value gamma = norm_param(g, r, c, &d, l), beta = norm_param(g, r, c, &d, l);
        float eps = pick_eps(r);
        if (kind == 0 || kind == 1)
            return nnop_layer_norm(g, v, gamma, beta, kind ? NNOP_NORM_CHW : NNOP_NORM_C, eps);
        if (kind == 2)
            return nnop_group_norm(g, v, dim(r, 0, 8), gamma, beta, eps);
        return nnop_rms_norm(g, v, gamma, eps);
    }
    if (op == 14) { /* concat of 0 to 4 earlier values (0 and 1 are errors) */
        nnop_value xs[4];
        int n = (int)(rd(r) % 5), k;
        for (k = 0; k < n; k++)
            xs[k] = (rd(r) & 1) ? v : vals[rd(r) % (unsigned)nv];
        return nnop_concat(g, xs, n);
    }
    if (op == 15) { /* resize by size (huge ones too) or by scale (hostile ones too) */
        nnop_resize_params p;
        memset(&p, 0, sizeof p);
        p.mode = (nnop_resize_mode)(rd(r) % 3); /* 2 is no mode */
        p.align_corners = (int)(rd(r) % 3) - (rd(r) == 7);
        if (rd(r) & 1) {
            p.size[0] = dim(r, 0, 12);
            p.size[1] = dim(r, 0, 12);
        } else {
            p.scale[0] = pick_scale(r);
            p.scale[1] = pick_scale(r);
        }
        return nnop_resize(g, v, &p);
    }
    if (op == 16) { /* transposed conv, huge and invalid parameters included */
        nnop_conv_transpose_params p;
        int64_t kpg = dim(r, 1, 4), rs = dim(r, 1, 4);
        p.pad[0] = p.pad[1] = dim(r, 0, 3);
        p.stride[0] = p.stride[1] = dim(r, 0, 4);
        p.dilation[0] = p.dilation[1] = dim(r, 1, 2);
        p.output_pad[0] = p.output_pad[1] = dim(r, 0, 3);
        p.groups = (rd(r) & 1) && ch > 0 ? ch : dim(r, 0, 3);
        return nnop_conv_transpose(
                g, v,
                constant(g, c, nnop_tensor_4d(NNOP_F32, l, ch, kpg, rs, (rd(r) & 1) ? rs : rs + 1)),
                &p);
    }
    {
        static const nnop_act_kind acts[] = {NNOP_ACT_HARDSWISH, NNOP_ACT_HARDSIGMOID,
                                             NNOP_ACT_MISH};
        return nnop_act(g, v, acts[rd(r) % 3], 0.0f);
    }
}

static void build(nnop_graph *g, reader *r, consts *c)
{
    nnop_value vals[MAX_OPS + 1], v;
    nnop_tensor_desc xd, d;
    int nv = 0, i, n_ops;
    nnop_layout l = (rd(r) & 1) ? NNOP_NHWC : NNOP_NCHW;
    xd = nnop_tensor_4d(NNOP_F32, l, dim(r, 1, 3), dim(r, 1, 6), dim(r, 1, 10), dim(r, 1, 10));
    v = nnop_input(g, "x", &xd);
    vals[nv++] = v;
    n_ops = (int)(rd(r) % MAX_OPS) + 1;
    for (i = 0; i < n_ops && r->n; i++) {
        unsigned ob = rd(r), op = ob >= 240 ? 12 + (ob - 240) % 6 : ob % 12;
        d = desc_of(g, v);
        if (op >= 12) {
            v = new_op(g, r, c, op, v, vals, nv, l);
        } else if (op == 0) { /* conv */
            nnop_conv_params p;
            int64_t k = dim(r, 1, 6), rs = dim(r, 1, 3), cin = d.ndim == 4 ? d.dims[1] : 1;
            p.pad[0] = p.pad[1] = dim(r, 0, 3);
            p.stride[0] = p.stride[1] = dim(r, 1, 3);
            p.dilation[0] = p.dilation[1] = dim(r, 1, 2);
            p.groups = (rd(r) & 1) && cin > 0 && k % cin == 0 ? cin : 1;
            v = nnop_conv(g, v,
                          constant(g, c, nnop_tensor_4d(NNOP_F32, l, k, cin / p.groups, rs, rs)),
                          &p);
        } else if (op == 1) {
            v = nnop_bias(g, v,
                          constant(g, c, nnop_tensor_1d(NNOP_F32, d.ndim >= 2 ? d.dims[1] : 1)));
        } else if (op == 2) {
            unsigned k = rd(r) % 11;
            v = k == NNOP_ACT_CLAMP ? nnop_clamp(g, v, -0.5f, 0.75f)
                                    : nnop_act(g, v, (nnop_act_kind)k, 0.125f);
        } else if (op == 3) {
            v = nnop_add(g, v, vals[rd(r) % (unsigned)nv]);
        } else if (op == 4 || op == 5) {
            nnop_pool_params p;
            memset(&p, 0, sizeof p);
            p.window[0] = p.window[1] = dim(r, 1, 3);
            p.stride[0] = p.stride[1] = dim(r, 1, 3);
            p.pad[0] = p.pad[1] = dim(r, 0, 2);
            p.count_include_pad = (int)(rd(r) & 1);
            v = nnop_pool(g, v, op == 4 ? NNOP_POOL_MAX : NNOP_POOL_AVG, &p);
        } else if (op == 6) {
            v = nnop_global_avg_pool(g, v);
        } else if (op == 7) {
            v = nnop_flatten(g, v);
        } else if (op == 8) {
            int64_t out = dim(r, 1, 8), in = d.ndim == 2 ? d.dims[1] : 1;
            nnop_value b =
                    (rd(r) & 1) ? constant(g, c, nnop_tensor_1d(NNOP_F32, out)) : nnop_none();
            v = nnop_linear(g, v, constant(g, c, nnop_tensor_2d(NNOP_F32, out, in)), b);
        } else if (op == 9) {
            v = nnop_softmax(g, v);
        } else if (op == 10) {
            int64_t ch = d.ndim >= 2 ? d.dims[1] : 1;
            nnop_tensor_desc pd = nnop_tensor_1d(NNOP_F32, ch);
            nnop_value var;
            float *ones = fill((size_t)(ch > 0 && ch <= RUN_ELEMENTS ? ch : 0), 7);
            int64_t j;
            if (!ones || c->n == MAX_CONSTS)
                abort();
            for (j = 0; ch <= RUN_ELEMENTS && j < ch; j++)
                ones[j] = 1.0f + ones[j] * ones[j]; /* a positive variance */
            c->data[c->n++] = ones;
            var = ch <= RUN_ELEMENTS ? nnop_constant(g, "var", &pd, ones) : nnop_input(g, "v", &pd);
            v = nnop_batchnorm(g, v, constant(g, c, pd), constant(g, c, pd), constant(g, c, pd),
                               var, 1e-5f);
        } else {
            v = vals[rd(r) % (unsigned)nv]; /* branch from an earlier value */
        }
        if (v.id < 0)
            return;
        if (nv <= MAX_OPS)
            vals[nv++] = v;
    }
    (void)nnop_output(g, v, "y");
    if (rd(r) & 1)
        (void)nnop_output(g, vals[rd(r) % (unsigned)nv], "z");
}

/* Run p on the inputs (deterministic data, exact sizes); outputs malloc'd into out[]. */
static int run(nnop_plan *p, void **out)
{
    const void *in[64];
    void *bufs[64];
    int ni = nnop_plan_num_inputs(p), no = nnop_plan_num_outputs(p), i, ok;
    if (ni > 64 || no > 8)
        return 0;
    for (i = 0; i < ni; i++) {
        nnop_tensor_desc d;
        if (nnop_plan_input_desc(p, i, &d) != NNOP_OK)
            abort();
        bufs[i] = fill((size_t)nnop_tensor_elements(&d), 100u + (unsigned)i);
        in[i] = bufs[i];
    }
    for (i = 0; i < no; i++) {
        nnop_tensor_desc d;
        if (nnop_plan_output_desc(p, i, &d) != NNOP_OK)
            abort();
        out[i] = malloc(nnop_tensor_bytes(&d));
    }
    ok = nnop_plan_execute(p, in, out) == NNOP_OK;
    for (i = 0; i < ni; i++)
        free(bufs[i]);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static nnop_context *ctx; /* one CPU context for the process (created once) */
    nnop_compile_options fused, unfused;
    nnop_plan *pf = NULL, *pu = NULL;
    nnop_graph *g = NULL;
    reader r;
    consts c;
    int32_t i;
    int small = 1;
    if (!ctx) {
        nnop_context_options o;
        nnop_context_options_init(&o);
        o.backend = NNOP_BACKEND_CPU;
        if (nnop_context_create(&o, &ctx) != NNOP_OK)
            abort();
    }
    r.p = data;
    r.n = size;
    memset(&c, 0, sizeof c);
    if (nnop_graph_create(ctx, &g) != NNOP_OK)
        abort();
    build(g, &r, &c);
    for (i = 0; i < g->n_values; i++) {
        char msg[256];
        if (nnop__check_desc(&g->values[i].desc, msg, sizeof msg) != NNOP_OK)
            abort(); /* an inferred descriptor out of bounds */
        if (nnop_tensor_elements(&g->values[i].desc) > RUN_ELEMENTS)
            small = 0;
    }
    nnop_compile_options_init(&fused);
    nnop_compile_options_init(&unfused);
    unfused.fuse = 0;
    /* a graph with big (valid) tensors is not compiled: the CPU plan allocates them all */
    if (small && nnop_graph_compile(g, &fused, &pf) == NNOP_OK) {
        if (nnop_graph_status(g) != NNOP_OK)
            abort(); /* a graph with a builder error compiled */
        if (nnop_graph_compile(g, &unfused, &pu) != NNOP_OK)
            abort(); /* fusion is an optimisation: the unfused graph must compile too */
        {
            void *of[8] = {0}, *ou[8] = {0};
            int no = nnop_plan_num_outputs(pf), k;
            int a = run(pf, of), b = run(pu, ou);
            if (a != b)
                abort();
            for (k = 0; a && k < no; k++) {
                nnop_tensor_desc d;
                nnop_plan_output_desc(pf, k, &d);
                if (memcmp(of[k], ou[k], nnop_tensor_bytes(&d)) != 0)
                    abort(); /* fused and unfused differ */
            }
            for (k = 0; k < no; k++) {
                free(of[k]);
                free(ou[k]);
            }
        }
    }
    nnop_plan_destroy(pf);
    nnop_plan_destroy(pu);
    nnop_graph_destroy(g);
    for (i = 0; i < c.n; i++)
        free(c.data[i]);
    return 0;
}
