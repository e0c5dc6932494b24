/* calibrate.c: nnop_calibrate. The graph is compiled for the CPU reference backend and each
 * sample batch run through it with an observer on every input and node result: the first
 * pass takes each tensor's largest |x| (and refuses a value that is not finite), a second
 * pass, for the histogram methods, counts |x| into equal bins over [0, that maximum]; amax.c
 * then picks each tensor's clip. The entropy method counts no exact zero: every scale
 * represents zero exactly, and the zeros after a ReLU (half a tensor, often more) fill the
 * first bin so that any clip wide enough to merge bins looks costly; the MNIST LeNet's conv2
 * input was clipped at an eighth of its range with them, losing 3.7 points of accuracy. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib.h"

/* What the observer gathers over the batches. */
typedef struct gather {
    int32_t *row;   /* per value id: its table entry, -1 for none (constants) */
    float *top;     /* per entry: the largest |x| so far */
    uint64_t *hist; /* per entry: bins counts (second pass only) */
    int32_t bins;
    int histogram;  /* the second pass */
    int skip_zeros; /* NNOP_CALIB_ENTROPY: exact zeros are not counted */
    int32_t bad;    /* the first value seen not finite, -1 none */
} gather;

static void seen(void *user, int32_t v, const float *x, int64_t n)
{
    gather *s = (gather *)user;
    int32_t r = s->row[v];
    int64_t i;
    if (r < 0)
        return;
    if (!s->histogram) {
        float top = s->top[r];
        for (i = 0; i < n; i++) {
            float a = fabsf(x[i]);
            if (!isfinite(a)) {
                if (s->bad < 0)
                    s->bad = v;
                return;
            }
            top = a > top ? a : top;
        }
        s->top[r] = top;
        return;
    }
    if (s->top[r] > 0.0f) {
        uint64_t *h = s->hist + (size_t)r * (size_t)s->bins;
        double per = (double)s->bins / s->top[r];
        for (i = 0; i < n; i++) {
            int64_t k = (int64_t)((double)fabsf(x[i]) * per);
            if (x[i] != 0.0f || !s->skip_zeros)
                h[k < s->bins ? k : s->bins - 1]++;
        }
    }
}

static nnop_status check_batches(nnop_context *ctx, const nnop_graph *g,
                                 const void *const *const *batches, int32_t n_batches)
{
    int32_t b, i;
    if (n_batches < 1)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_calibrate: n_batches is %d (at least one batch)", (int)n_batches);
    if (!batches)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_calibrate: batches is NULL");
    for (b = 0; b < n_batches; b++) {
        if (!batches[b])
            return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_calibrate: batches[%d] is NULL",
                              (int)b);
        for (i = 0; i < g->n_inputs; i++)
            if (!batches[b][i])
                return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                                  "nnop_calibrate: batches[%d][%d] (input '%s') is NULL", (int)b,
                                  (int)i, g->values[g->inputs[i]].name);
    }
    return NNOP_OK;
}

/* Every batch through p, one pass (s->histogram says which); a value not finite fails. */
static nnop_status run_pass(nnop_context *ctx, nnop_plan *p, const nnop_calib_table *t,
                            const void *const *const *batches, int32_t n_batches, gather *s)
{
    int32_t b;
    for (b = 0; b < n_batches; b++) {
        nnop__cpu_plan_observe(p, batches[b], seen, s);
        if (s->bad >= 0)
            return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                              "nnop_calibrate: tensor '%s' has a value that is not finite in "
                              "batch %d (calibration needs finite samples)",
                              t->entry[s->row[s->bad]].name, (int)b);
    }
    return NNOP_OK;
}

static nnop_status calibrate(nnop_context *ctx, nnop_plan *p, const nnop_calib_options *o,
                             const void *const *const *batches, int32_t n_batches,
                             nnop_calib_table **out)
{
    const nnop_graph *g = p->g;
    gather s;
    nnop_calib_table *t;
    nnop_status st = NNOP_ERR_OUT_OF_MEMORY;
    int32_t r;
    memset(&s, 0, sizeof s);
    s.bad = -1;
    s.bins = o->bins;
    s.skip_zeros = o->method == NNOP_CALIB_ENTROPY;
    s.row = (int32_t *)nnop__calloc((size_t)g->n_values, sizeof *s.row);
    t = s.row ? nnop__calib_table_for_graph(g, s.row) : NULL;
    s.top = t ? (float *)nnop__calloc((size_t)t->n + 1, sizeof *s.top) : NULL;
    if (s.top && o->method != NNOP_CALIB_MAX)
        s.hist = (uint64_t *)nnop__calloc((size_t)t->n * (size_t)o->bins + 1, sizeof *s.hist);
    if (s.top && (o->method == NNOP_CALIB_MAX || s.hist)) {
        t->opts = *o;
        t->batches = n_batches;
        st = run_pass(ctx, p, t, batches, n_batches, &s);
        s.histogram = 1;
        if (st == NNOP_OK && s.hist)
            st = run_pass(ctx, p, t, batches, n_batches, &s);
        for (r = 0; st == NNOP_OK && r < t->n; r++)
            t->entry[r].amax =
                    s.hist ? nnop__calib_amax(o, s.hist + (size_t)r * (size_t)o->bins, s.top[r])
                           : s.top[r];
    } else {
        nnop__fail(ctx, st, "nnop_calibrate: out of memory for the histograms");
    }
    nnop__free(s.row);
    nnop__free(s.top);
    nnop__free(s.hist);
    if (st != NNOP_OK)
        nnop_calib_table_destroy(t);
    else
        *out = t;
    return st;
}

nnop_status nnop_calibrate(nnop_graph *g, const nnop_calib_options *opts,
                           const void *const *const *batches, int32_t n_batches,
                           nnop_calib_table **out)
{
    nnop_calib_options o;
    nnop_plan *p = NULL;
    nnop_status st;
    char why[160];
    if (out)
        *out = NULL;
    if (!g || !g->ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!out)
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_calibrate: out is NULL");
    if (opts)
        o = *opts;
    else
        nnop_calib_options_init(&o);
    nnop__calib_options_check(&o, why, sizeof why);
    if (why[0])
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_calibrate: %s", why);
    st = nnop__plan_compile_reference(g, &p);
    if (st == NNOP_OK)
        st = check_batches(g->ctx, p->g, batches, n_batches);
    if (st == NNOP_OK) {
        nnop__clear_error(g->ctx);
        st = calibrate(g->ctx, p, &o, batches, n_batches, out);
    }
    nnop_plan_destroy(p);
    return st;
}
