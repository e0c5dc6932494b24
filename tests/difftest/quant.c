/* quant.c: one graph in difftest's quantized mode (--quant int8|fp8; issue 45). The graph is
 * calibrated on the CPU backend (NNOP_CALIB_MAX over QUANT_BATCHES seeded batches other than
 * the run's own inputs, so that a run now and then goes past amax and saturates), compiled at
 * NNOP_PRECISION_INT8 or FP8 with quantize_ends (every conv and linear layer quantized), run,
 * and compared with quant_oracle.c's float64 emulation, which reads each layer's amax back from
 * the same table by name (dt_build_named's "n<index>", nnop's "input#<k>"). */
#include <stdlib.h>
#include <string.h>

#include "difftest.h"

#define QUANT_BATCHES 3

typedef struct qrun {
    dt_graph *g;
    dts_case c;
    dts_tensor in[DT_MAX_NODES];
    nnop_graph *ng;
    nnop_calib_table *table;
    nnop_plan *plan;
    void *batch[QUANT_BATCHES + 1][DT_MAX_NODES]; /* the last: the run's own inputs */
    float *got[DT_MAX_OUT];
    double *want[DT_MAX_OUT], *allow[DT_MAX_OUT];
} qrun;

/* 1 (refused, why in msg) for a graph this mode does not test: no layer to quantize, or an op
 * quant_oracle.c has no allowance rule for (the issue-15 ops) */
static int untestable(const dt_graph *g, char *msg, size_t len)
{
    int i, layers = 0;
    for (i = 0; i < g->n_nodes; i++) {
        layers += dt_quant_layer(g, i);
        if (g->node[i].kind >= DT_ARITH) {
            snprintf(msg, len, "--quant: no allowance rule for %s", dt_kind_name(g->node[i].kind));
            return 1;
        }
    }
    if (layers == 0)
        snprintf(msg, len, "--quant: no conv or linear layer to quantize");
    return layers == 0;
}

/* Input k's values (from seed, or data when not NULL), packed in the graph's dtype and layout
 * (malloc'd; NULL on failure) */
static void *host_input(const qrun *r, int k, uint64_t seed, const float *data)
{
    const dts_tensor *t = &r->in[k];
    nnop_tensor_desc d = dts_desc(r->g->dtype, r->g->layout, t->ndim, t->dims);
    int64_t n = nnop_tensor_elements(&d);
    float *v = (float *)malloc((size_t)n * sizeof(float));
    void *host = malloc(nnop_tensor_bytes(&d));
    if (v && host) {
        if (data)
            memcpy(v, data, (size_t)n * sizeof(float));
        else
            dts_fill(v, n, seed, t->scale, t->positive);
        if (dts_pack(&d, v, host) != 0)
            free(host), host = NULL;
    } else {
        free(host), host = NULL;
    }
    free(v);
    return host;
}

/* The node of the k-th graph input */
static int input_node(const dt_graph *g, int k)
{
    int i;
    for (i = 0; i < g->n_nodes; i++)
        if (g->node[i].kind == DT_INPUT && k-- == 0)
            return i;
    return -1;
}

/* The calibration batches (seeded, other data than the run's); with run, the run's inputs
 * from the graph's data (after place_ties) */
static int make_batches(qrun *r, int run)
{
    int b, k;
    for (b = run ? QUANT_BATCHES : 0; b < (run ? QUANT_BATCHES + 1 : QUANT_BATCHES); b++)
        for (k = 0; k < r->c.n_in; k++) {
            uint64_t seed = r->in[k].seed ^ 0x9E3779B97F4A7C15ull * (b + 1u);
            const float *data = run ? r->g->node[input_node(r->g, k)].data : NULL;
            if (!(r->batch[b][k] = host_input(r, k, seed, data)))
                return -1;
        }
    return 0;
}

/* x as the graph's dtype stores it */
static float in_dtype(nnop_dtype t, float x)
{
    unsigned char tmp[4];
    float y = x;
    nnop_convert(NNOP_F32, &x, t, tmp, 1);
    nnop_convert(t, tmp, NNOP_F32, &y, 1);
    return y;
}

/* Random data rarely lands on a rounding tie, where round-to-nearest-even shows: every third
 * element of a graph input read by a quantized layer is moved onto the tie nearest it (where
 * its dtype holds one: x / scale exactly halfway in float32). Their margin is 0 (the same data
 * both sides): a layer that rounds ties otherwise fails. */
static void place_ties(qrun *r, const dt_quant *q, dt_quant_stats *st)
{
    int i;
    int64_t j;
    for (i = 0; i < r->g->n_nodes; i++) {
        dt_node *x;
        float s;
        /* only a quantized layer has an amax; an input node's in[0] is -1 */
        if (q->in_amax[i] < 0.0f || r->g->node[i].in[0] < 0)
            continue;
        x = &r->g->node[r->g->node[i].in[0]];
        if (x->kind != DT_INPUT)
            continue;
        s = dt_quant_scale(q->in_amax[i], q->fp8);
        for (j = i % 3; j < dt_elems(x); j += 3) {
            double tie = dt_quant_tie((double)(x->data[j] / s), q->fp8);
            float moved = in_dtype(r->g->dtype, (float)(tie * (double)s));
            if ((double)(float)(moved / s) == tie)
                x->data[j] = moved, st->ties++;
        }
    }
}

/* A status of calibrate or compile: 0 ok, 1 refused (shape or unsupported), -1 failed */
static int judge(nnop_context *ctx, nnop_status st, const char *what, char *msg, size_t len)
{
    if (st == NNOP_OK)
        return 0;
    snprintf(msg, len, "%s: %s: %s", what, nnop_status_string(st), nnop_context_last_error(ctx));
    return st == NNOP_ERR_SHAPE || st == NNOP_ERR_UNSUPPORTED ? 1 : -1;
}

/* The table's amax of each quantized layer's input, by name */
static int read_amax(const qrun *r, dt_quant *q, char *msg, size_t len)
{
    int i, k;
    for (i = 0; i < r->g->n_nodes; i++) {
        int x = r->g->node[i].in[0], inputs = 0;
        char name[32];
        q->in_amax[i] = -1.0f;
        if (!dt_quant_layer(r->g, i))
            continue;
        for (k = 0; k < x; k++)
            inputs += r->g->node[k].kind == DT_INPUT;
        if (r->g->node[x].kind == DT_INPUT)
            snprintf(name, sizeof name, "input#%d", inputs);
        else
            snprintf(name, sizeof name, "n%d", x);
        if (nnop_calib_table_find(r->table, name, &q->in_amax[i]) != NNOP_OK) {
            snprintf(msg, len, "the calibration table has no entry '%s' (node %d's input)", name,
                     i);
            return -1;
        }
    }
    return 0;
}

/* Build (named), calibrate with the seeded batches, read the amax back: 0, 1 refused, -1
 * failed */
static int calibrate(nnop_context *ctx, qrun *r, dt_quant *q, char *msg, size_t len)
{
    nnop_calib_options co;
    const void *const *batches[QUANT_BATCHES];
    int b, rc;
    if (make_batches(r, 0) != 0 || nnop_graph_create(ctx, &r->ng) != NNOP_OK) {
        snprintf(msg, len, "out of host memory");
        return -1;
    }
    nnop_graph_set_layout(r->ng, r->g->layout);
    dt_build_named(r->ng, &r->c);
    nnop_calib_options_init(&co);
    co.method = NNOP_CALIB_MAX; /* the amax the oracle reads back is then plain */
    for (b = 0; b < QUANT_BATCHES; b++)
        batches[b] = (const void *const *)r->batch[b];
    rc = judge(ctx, nnop_calibrate(r->ng, &co, batches, QUANT_BATCHES, &r->table), "calibrate", msg,
               len);
    return rc != 0 ? rc : read_amax(r, q, msg, len);
}

/* The run's inputs (ties placed), and the plan at q's precision, every layer quantized */
static int compile_quantized(nnop_context *ctx, qrun *r, const dt_quant *q, dt_quant_stats *st,
                             char *msg, size_t len)
{
    nnop_compile_options o;
    place_ties(r, q, st);
    if (make_batches(r, 1) != 0) {
        snprintf(msg, len, "out of host memory");
        return -1;
    }
    nnop_compile_options_init(&o);
    o.precision = q->fp8 ? NNOP_PRECISION_FP8 : NNOP_PRECISION_INT8;
    o.quantize_ends = 1;
    o.calib = r->table;
    return judge(ctx, nnop_graph_compile(r->ng, &o, &r->plan), "compile", msg, len);
}

/* Poisoned output buffers (NaN: an unwritten output shows) and room for their floats */
static int output_buffers(qrun *r, void **out)
{
    int i;
    if (nnop_plan_num_outputs(r->plan) != r->g->n_out)
        return -1;
    for (i = 0; i < r->g->n_out; i++) {
        nnop_tensor_desc d;
        nnop_plan_output_desc(r->plan, i, &d);
        out[i] = malloc(nnop_tensor_bytes(&d));
        r->got[i] = (float *)malloc((size_t)nnop_tensor_elements(&d) * sizeof(float));
        if (!out[i] || !r->got[i])
            return -1;
        memset(out[i], 0xFF, nnop_tensor_bytes(&d));
    }
    return 0;
}

/* Execute on the run's inputs and read the outputs back: 0, or -1 failed */
static int execute(nnop_context *ctx, qrun *r, char *msg, size_t len)
{
    void *out[DT_MAX_OUT] = {0};
    int i, rc = output_buffers(r, out);
    if (rc != 0)
        snprintf(msg, len, "out of host memory, or the plan's outputs are not the graph's");
    else if (judge(ctx,
                   nnop_plan_execute(r->plan, (const void *const *)r->batch[QUANT_BATCHES], out),
                   "execute", msg, len) != 0)
        rc = -1;
    for (i = 0; rc == 0 && i < r->g->n_out; i++) {
        nnop_tensor_desc d;
        nnop_plan_output_desc(r->plan, i, &d);
        if (dts_unpack(&d, out[i], r->got[i]) != 0) {
            snprintf(msg, len, "output %d could not be read back", i);
            rc = -1;
        }
    }
    for (i = 0; i < DT_MAX_OUT; i++)
        free(out[i]);
    return rc;
}

/* The outputs against the quantized oracle, within the allowance */
static int check(qrun *r, const dt_quant *q, dt_quant_stats *s, char *msg, size_t len)
{
    int used = 0;
    if (dt_oracle_quant(r->g, q, r->want, r->allow, s) != 0) {
        snprintf(msg, len, "the oracle ran out of host memory");
        return -1;
    }
    if (!dt_agree_within(r->g, r->got, r->want, r->allow, msg, len, &used))
        return -1;
    s->used_allowance += used;
    return 0;
}

static void release(qrun *r)
{
    int b, k;
    for (b = 0; b <= QUANT_BATCHES; b++)
        for (k = 0; k < DT_MAX_NODES; k++)
            free(r->batch[b][k]);
    for (k = 0; k < DT_MAX_OUT; k++)
        free(r->got[k]), free(r->want[k]), free(r->allow[k]);
    nnop_plan_destroy(r->plan);
    nnop_calib_table_destroy(r->table);
    nnop_graph_destroy(r->ng);
}

int dt_quant_run(nnop_context *cpu, dt_graph *g, int fp8, dt_quant_stats *s, char *msg, size_t len,
                 char *plan, size_t plan_len)
{
    qrun r;
    dt_quant q;
    int rc;
    memset(&r, 0, sizeof r);
    memset(&q, 0, sizeof q);
    if (untestable(g, msg, len))
        return 1;
    r.g = g;
    q.fp8 = fp8;
    dt_case_of(g, r.in, &r.c);
    rc = calibrate(cpu, &r, &q, msg, len);
    if (rc == 0)
        rc = compile_quantized(cpu, &r, &q, s, msg, len);
    if (rc == 0)
        rc = execute(cpu, &r, msg, len);
    if (rc == 0)
        rc = check(&r, &q, s, msg, len);
    if (plan_len > 0)
        plan[0] = '\0';
    if (r.plan)
        nnop_plan_describe(r.plan, plan, plan_len);
    release(&r);
    return rc;
}
