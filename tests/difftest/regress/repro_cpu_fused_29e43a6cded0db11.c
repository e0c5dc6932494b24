/* repro_cpu_fused_29e43a6cded0db11: a reproducer written by tests/difftest.
 * The run under test is checked against the CPU backend.
 * Found: NNOP_OK: output 0 is 4-D with strides 25,5,5,1: not packed in the graph's layout
 * (the layout lost after an N x 1 x 1 x 1 value, issue 10; fixed)
 *
 * bf16 NHWC, case seed 0x29e43a6cded0db11
 * v0 = input() scale 1 -> 3x1x1x1
 * v1 = constant() scale 0.333333 -> 5x1x3x3
 * v2 = conv(v0, v1) pad 3,4 stride 1,1 dilation 3,2 groups 1 -> 3x5x1x5
 * v3 = pool(v2) max window 1,1 stride 1,3 pad 0,0 count_include_pad 1 -> 3x5x1x2
 * outputs: v2 v3
 *
 * Dropped into tests/difftest/regress/ it is the CTest case
 * difftest.regress.repro_cpu_fused_29e43a6cded0db11: 0 = agrees (or refused), 1 = not, 77 = no GPU.
 */
/* dt_support.h: what the differential tester shares with the reproducers it writes (each
 * reproducer carries a verbatim copy of this file and dt_support.c, so that it needs nothing
 * but nnop.h): seeded data, moving logical (row-major N, C, H, W) floats to and from a
 * tensor's strides and dtype, the per-dtype comparison, and one run of a graph. */
#ifndef NNOP_DT_SUPPORT_H
#define NNOP_DT_SUPPORT_H

#include <stdint.h>

#include "nnop/nnop.h"

#define DTS_MAX_OUT 8

/* How far a result is from the reference: relative L2 and largest difference, both relative
 * to the reference's scale, and the elements whose NaN/Inf status differs. */
typedef struct dts_diff {
    double rel_l2, max_rel;
    int64_t nonfinite;
    int64_t worst; /* index of the worst element (the first non-finite mismatch if any) */
} dts_diff;

/* A graph input or constant: its shape (1-, 2- or 4-D) and the seed of its data. */
typedef struct dts_tensor {
    int ndim;
    int64_t dims[4];
    uint64_t seed;
    float scale;
    int positive;
} dts_tensor;

/* A graph and how to test it. build declares the inputs (in[i] for the i-th) and outputs. */
typedef struct dts_case dts_case;
struct dts_case {
    nnop_dtype dtype;
    nnop_layout layout;
    nnop_backend backend; /* the run under test */
    int fuse;
    nnop_status (*build)(nnop_graph *g, const dts_case *c);
    const dts_tensor *in;
    int n_in;
    const double *const *expected; /* per output, logical order; NULL = the CPU backend's */
    const void *user;
};

typedef enum dts_outcome { DTS_RAN, DTS_REFUSED, DTS_ERROR } dts_outcome;
typedef struct dts_result {
    dts_outcome outcome;
    nnop_status status;
    char message[600];
    char plan[1500]; /* nnop_plan_describe of the plan that ran */
    int n_out;
    float *out[DTS_MAX_OUT]; /* logical order */
    int64_t count[DTS_MAX_OUT];
} dts_result;

uint64_t dts_next(uint64_t *s);
void dts_fill(float *v, int64_t n, uint64_t seed, float scale, int positive);
int dts_pack(const nnop_tensor_desc *d, const float *logical, void *packed);
int dts_unpack(const nnop_tensor_desc *d, const void *packed, float *logical);
int dts_same_layout(const nnop_tensor_desc *got, const nnop_tensor_desc *want);
double dts_tolerance(nnop_dtype t);
void dts_compare(const float *got, const double *want, int64_t n, dts_diff *o);
int dts_diff_ok(const dts_diff *d, double tol);
nnop_tensor_desc dts_desc(nnop_dtype t, nnop_layout l, int ndim, const int64_t *dims);
nnop_value dts_constant(nnop_graph *g, const dts_case *c, const dts_tensor *x);
nnop_value dts_input(nnop_graph *g, const dts_case *c, const dts_tensor *x);
/* Build, compile (fuse or not), execute on ctx with poisoned outputs, read back. */
void dts_run(nnop_context *ctx, const dts_case *c, int fuse, dts_result *r);
void dts_result_free(dts_result *r);
/* A reproducer's main: the run under test against the reference; 0 agree (or refused), 1
 * not, 77 no GPU (unless NNOP_REQUIRE_GPU=1). */
int dts_main(const dts_case *c);

#endif /* NNOP_DT_SUPPORT_H */

/* dt_support.c: see dt_support.h. The tester compiles this file; every reproducer carries a
 * verbatim copy of it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: one 64-bit draw */
uint64_t dts_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* n values of magnitude scale * [0.05, 2) with a random sign (always + when positive): never
 * zero, so that no product or sum is trivially exact */
void dts_fill(float *v, int64_t n, uint64_t seed, float scale, int positive)
{
    uint64_t s = seed;
    int64_t i;
    for (i = 0; i < n; i++) {
        uint64_t r = dts_next(&s);
        double m = scale * (0.05 + 1.95 * (double)(r >> 11) * (1.0 / 9007199254740992.0));
        v[i] = (float)(positive || (r & 1) ? m : -m);
    }
}

/* Storage offset of the i-th element in logical row-major order; -1 outside a packed d. */
static int64_t dts_offset(const nnop_tensor_desc *d, int64_t i, int64_t n)
{
    int64_t off = 0;
    int k;
    for (k = d->ndim - 1; k >= 0; k--) {
        off += (i % d->dims[k]) * d->strides[k];
        i /= d->dims[k];
    }
    return off >= 0 && off < n ? off : -1;
}

/* logical floats -> d's strides and dtype (rounded to nearest even); 0 on success */
int dts_pack(const nnop_tensor_desc *d, const float *logical, void *packed)
{
    int64_t n = nnop_tensor_elements(d), i, off;
    float *tmp = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    int rc = tmp ? 0 : -1;
    for (i = 0; rc == 0 && i < n; i++) {
        off = dts_offset(d, i, n);
        if (off < 0)
            rc = -1;
        else
            tmp[off] = logical[i];
    }
    if (rc == 0 && nnop_convert(NNOP_F32, tmp, d->dtype, packed, n) != NNOP_OK)
        rc = -1;
    free(tmp);
    return rc;
}

/* d's strides and dtype -> logical floats; 0 on success */
int dts_unpack(const nnop_tensor_desc *d, const void *packed, float *logical)
{
    int64_t n = nnop_tensor_elements(d), i, off;
    float *tmp = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    int rc = tmp && nnop_convert(d->dtype, packed, NNOP_F32, tmp, n) == NNOP_OK ? 0 : -1;
    for (i = 0; rc == 0 && i < n; i++) {
        off = dts_offset(d, i, n);
        if (off < 0)
            rc = -1;
        else
            logical[i] = tmp[off];
    }
    free(tmp);
    return rc;
}

/* Same dims, and the same strides wherever a dim has more than one element (the strides of a
 * dim of one element do not change where anything is stored). */
int dts_same_layout(const nnop_tensor_desc *got, const nnop_tensor_desc *want)
{
    int k;
    if (got->ndim != want->ndim || got->dtype != want->dtype)
        return 0;
    for (k = 0; k < want->ndim; k++)
        if (got->dims[k] != want->dims[k] ||
            (want->dims[k] > 1 && got->strides[k] != want->strides[k]))
            return 0;
    return 1;
}

/* relative L2 tolerance per dtype (TF32 off); the largest difference may be 10 times that */
double dts_tolerance(nnop_dtype t)
{
    return t == NNOP_F32 ? 1e-4 : t == NNOP_F16 ? 5e-3 : 3e-2;
}

/* One element whose NaN/Inf status differs: NaN against NaN and equal infinities match. */
static int dts_nonfinite_mismatch(double g, double w)
{
    if (isnan(w) || isnan(g))
        return !(isnan(w) && isnan(g));
    return g != w;
}

void dts_compare(const float *got, const double *want, int64_t n, dts_diff *o)
{
    double d2 = 0.0, w2 = 0.0, dmax = -1.0, wmax = 0.0;
    int64_t i;
    o->nonfinite = 0;
    o->worst = -1;
    for (i = 0; i < n; i++) {
        double g = got[i], w = want[i], d = fabs(g - w);
        if (!isfinite(g) || !isfinite(w)) {
            if (dts_nonfinite_mismatch(g, w) && o->nonfinite++ == 0)
                o->worst = i;
            continue;
        }
        d2 += d * d;
        w2 += w * w;
        wmax = fabs(w) > wmax ? fabs(w) : wmax;
        if (d > dmax && o->nonfinite == 0) {
            dmax = d;
            o->worst = i;
        }
    }
    /* The scale has a floor (rms 0.25): values are O(1) by construction (inputs in (-2, 2),
     * weights scaled by 1/sqrt(fan-in)), and a result far below that is a sum that cancelled,
     * whose error is the dtype's rounding of its O(1) terms, not of the result (issue 10:
     * f16 0.0199 against 0.0200 from 0.841 - 0.821 is 8 ulp of the result, a quarter ulp of
     * its terms). Smaller results are thus compared absolutely. */
    o->rel_l2 = sqrt(d2 / (w2 > 0.0625 * (double)n ? w2 : 0.0625 * (double)n));
    o->max_rel = (dmax > 0.0 ? dmax : 0.0) / (wmax > 0.25 ? wmax : 0.25);
}

int dts_diff_ok(const dts_diff *d, double tol)
{
    return d->nonfinite == 0 && d->rel_l2 <= tol && d->max_rel <= 10.0 * tol;
}

nnop_tensor_desc dts_desc(nnop_dtype t, nnop_layout l, int ndim, const int64_t *dims)
{
    if (ndim == 4)
        return nnop_tensor_4d(t, l, dims[0], dims[1], dims[2], dims[3]);
    return ndim == 2 ? nnop_tensor_2d(t, dims[0], dims[1]) : nnop_tensor_1d(t, dims[0]);
}

/* x's seeded values in the graph's dtype and layout (host bytes, malloc'd); NULL on failure */
static void *dts_host_data(const dts_case *c, const dts_tensor *x, const nnop_tensor_desc *d)
{
    int64_t n = nnop_tensor_elements(d);
    float *v = (float *)malloc((size_t)n * sizeof(float));
    void *host = malloc(nnop_tensor_bytes(d));
    int ok = v && host;
    (void)c;
    if (ok) {
        dts_fill(v, n, x->seed, x->scale, x->positive);
        ok = dts_pack(d, v, host) == 0;
    }
    free(v);
    if (!ok) {
        free(host);
        host = NULL;
    }
    return host;
}

nnop_value dts_constant(nnop_graph *g, const dts_case *c, const dts_tensor *x)
{
    nnop_tensor_desc d = dts_desc(c->dtype, c->layout, x->ndim, x->dims);
    void *host = dts_host_data(c, x, &d);
    nnop_value v = host ? nnop_constant(g, NULL, &d, host) : nnop_none();
    free(host);
    return v;
}

nnop_value dts_input(nnop_graph *g, const dts_case *c, const dts_tensor *x)
{
    nnop_tensor_desc d = dts_desc(c->dtype, c->layout, x->ndim, x->dims);
    return nnop_input(g, NULL, &d);
}

/* printf checking of dts_fail's format where the compiler has it */
#if defined(__MINGW32__)
#define DTS_PRINTF __attribute__((format(gnu_printf, 3, 4)))
#elif defined(__GNUC__) || defined(__clang__)
#define DTS_PRINTF __attribute__((format(printf, 3, 4)))
#else
#define DTS_PRINTF
#endif
static void dts_fail(dts_result *r, nnop_status st, const char *fmt, ...) DTS_PRINTF;
static void dts_fail(dts_result *r, nnop_status st, const char *fmt, ...)
{
    va_list ap;
    r->outcome = DTS_ERROR;
    r->status = st;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/* Tensor memory of the context holding host (bytes of d), or NaN poison when host is NULL */
static void *dts_device_copy(nnop_context *ctx, const nnop_tensor_desc *d, const void *host)
{
    size_t bytes = nnop_tensor_bytes(d);
    void *poison = host ? NULL : malloc(bytes), *dev = NULL;
    if (!host && !poison)
        return NULL;
    if (poison)
        memset(poison, 0xFF, bytes); /* NaN in every float dtype: unwritten outputs show */
    if (nnop_malloc(ctx, bytes, &dev) == NNOP_OK &&
        nnop_copy_in(ctx, dev, host ? host : poison, bytes) != NNOP_OK) {
        nnop_free(ctx, dev);
        dev = NULL;
    }
    free(poison);
    return dev;
}

/* Output i into r->out[i], logical order; its descriptor must be packed in the graph's layout */
static void dts_read_output(nnop_context *ctx, const dts_case *c, nnop_plan *p, int i, void *dev,
                            dts_result *r)
{
    nnop_tensor_desc d, want;
    void *host;
    int rc = -1;
    nnop_plan_output_desc(p, i, &d);
    want = dts_desc(c->dtype, c->layout, d.ndim, d.dims);
    if (!dts_same_layout(&d, &want)) {
        dts_fail(r, NNOP_OK,
                 "output %d is %d-D with strides %lld,%lld,%lld,%lld: not packed in "
                 "the graph's layout",
                 i, d.ndim, (long long)d.strides[0], (long long)d.strides[1],
                 (long long)d.strides[2], (long long)d.strides[3]);
        return;
    }
    host = malloc(nnop_tensor_bytes(&d));
    r->count[i] = nnop_tensor_elements(&d);
    r->out[i] = (float *)malloc((size_t)r->count[i] * sizeof(float));
    if (host && r->out[i] && nnop_copy_out(ctx, host, dev, nnop_tensor_bytes(&d)) == NNOP_OK)
        rc = dts_unpack(&d, host, r->out[i]);
    free(host);
    if (rc != 0)
        dts_fail(r, NNOP_OK, "output %d could not be read back", i);
}

/* Inputs from their seeds, poisoned outputs, execute, read back, free */
static void dts_execute(nnop_context *ctx, const dts_case *c, nnop_plan *p, dts_result *r)
{
    void *in[64] = {0}, *out[DTS_MAX_OUT] = {0};
    int i, ok = c->n_in <= 64 && nnop_plan_num_inputs(p) == c->n_in && r->n_out <= DTS_MAX_OUT;
    for (i = 0; ok && i < c->n_in; i++) {
        nnop_tensor_desc d = dts_desc(c->dtype, c->layout, c->in[i].ndim, c->in[i].dims);
        void *host = dts_host_data(c, &c->in[i], &d);
        ok = host && (in[i] = dts_device_copy(ctx, &d, host)) != NULL;
        free(host);
    }
    for (i = 0; ok && i < r->n_out; i++) {
        nnop_tensor_desc d;
        ok = nnop_plan_output_desc(p, i, &d) == NNOP_OK &&
             (out[i] = dts_device_copy(ctx, &d, NULL)) != NULL;
    }
    if (!ok)
        dts_fail(r, NNOP_OK,
                 "could not set up the inputs and outputs (or the plan's counts differ)");
    else if ((r->status = nnop_plan_execute(p, (const void *const *)in, out)) != NNOP_OK)
        dts_fail(r, r->status, "execute: %s", nnop_context_last_error(ctx));
    for (i = 0; i < r->n_out && r->outcome == DTS_RAN; i++)
        dts_read_output(ctx, c, p, i, out[i], r);
    for (i = 0; i < c->n_in && i < 64; i++)
        nnop_free(ctx, in[i]);
    for (i = 0; i < r->n_out && i < DTS_MAX_OUT; i++)
        nnop_free(ctx, out[i]);
}

void dts_run(nnop_context *ctx, const dts_case *c, int fuse, dts_result *r)
{
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_compile_options o;
    memset(r, 0, sizeof *r);
    if ((r->status = nnop_graph_create(ctx, &g)) != NNOP_OK) {
        dts_fail(r, r->status, "graph_create: %s", nnop_context_last_error(ctx));
        return;
    }
    nnop_compile_options_init(&o);
    o.fuse = fuse;
    c->build(g, c);
    r->status = nnop_graph_compile(g, &o, &p);
    if (r->status == NNOP_ERR_SHAPE || r->status == NNOP_ERR_UNSUPPORTED) {
        r->outcome = DTS_REFUSED; /* a valid refusal, not a failure */
        snprintf(r->message, sizeof r->message, "%s", nnop_context_last_error(ctx));
    } else if (r->status != NNOP_OK) {
        dts_fail(r, r->status, "compile: %s", nnop_context_last_error(ctx));
    } else {
        r->n_out = nnop_plan_num_outputs(p);
        nnop_plan_describe(p, r->plan, sizeof r->plan);
        dts_execute(ctx, c, p, r);
    }
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
}

void dts_result_free(dts_result *r)
{
    int i;
    for (i = 0; i < DTS_MAX_OUT; i++) {
        free(r->out[i]);
        r->out[i] = NULL;
    }
}

/* A context for backend b (TF32 off); 77 = no GPU and none required, 1 = failed */
static int dts_context(nnop_backend b, nnop_context **ctx)
{
    nnop_context_options o;
    nnop_status st;
    const char *req = getenv("NNOP_REQUIRE_GPU");
    nnop_context_options_init(&o);
    o.backend = b;
    o.allow_tf32 = 0;
    st = nnop_context_create(&o, ctx);
    if (st == NNOP_OK)
        return 0;
    fprintf(stderr, "context: %s: %s\n", nnop_status_string(st), nnop_context_create_error());
    if (b == NNOP_BACKEND_CUDA && (st == NNOP_ERR_NO_DEVICE || st == NNOP_ERR_UNSUPPORTED) &&
        !(req && strcmp(req, "1") == 0))
        return 77;
    return 1;
}

/* Every output of got against want (the reference run or the expected values); 0 = agree */
static int dts_check(const dts_case *c, const dts_result *got, const dts_result *want)
{
    int i, j, bad = 0;
    for (i = 0; i < got->n_out; i++) {
        double *w = (double *)malloc((size_t)got->count[i] * sizeof(double));
        dts_diff d;
        if (!w)
            return 1;
        for (j = 0; j < got->count[i]; j++)
            w[j] = c->expected ? c->expected[i][j] : (double)want->out[i][j];
        dts_compare(got->out[i], w, got->count[i], &d);
        bad |= !dts_diff_ok(&d, dts_tolerance(c->dtype));
        printf("output %d: rel_l2 %.3g max_rel %.3g, %lld NaN/Inf mismatches (tol %.3g)%s\n", i,
               d.rel_l2, d.max_rel, (long long)d.nonfinite, dts_tolerance(c->dtype),
               dts_diff_ok(&d, dts_tolerance(c->dtype)) ? "" : "  MISMATCH");
        if (d.worst >= 0)
            printf("  worst element %lld: got %.8g want %.8g\n", (long long)d.worst,
                   (double)got->out[i][d.worst], w[d.worst]);
        free(w);
    }
    return bad;
}

/* The reference (CPU backend, fused) unless expected values are given */
static int dts_reference(const dts_case *c, dts_result *want)
{
    nnop_context *cpu = NULL;
    memset(want, 0, sizeof *want);
    if (c->expected)
        return 0;
    if (dts_context(NNOP_BACKEND_CPU, &cpu) != 0)
        return 1;
    dts_run(cpu, c, 1, want);
    nnop_context_destroy(cpu);
    if (want->outcome != DTS_RAN)
        printf("reference (CPU backend): %s %s\n", nnop_status_string(want->status), want->message);
    return want->outcome != DTS_RAN;
}

int dts_main(const dts_case *c)
{
    nnop_context *ctx = NULL;
    dts_result want, got;
    int rc = dts_reference(c, &want);
    if (rc == 0 && (rc = dts_context(c->backend, &ctx)) == 0) {
        dts_run(ctx, c, c->fuse, &got);
        if (got.outcome == DTS_REFUSED)
            printf("refused (fine): %s %s\n", nnop_status_string(got.status), got.message);
        else if (got.outcome == DTS_ERROR)
            printf("error: %s %s\n", nnop_status_string(got.status), got.message);
        rc = got.outcome == DTS_ERROR || (got.outcome == DTS_RAN && dts_check(c, &got, &want));
        dts_result_free(&got);
        nnop_context_destroy(ctx);
    }
    dts_result_free(&want);
    printf("%s\n", rc == 0 ? "PASS" : rc == 77 ? "SKIP (no GPU)" : "FAIL");
    return rc;
}

/* ---------------------------------------------------------------- the case */
static const dts_tensor in[] = {{4, {3, 1, 1, 1}, 0x5d3c45a237f6220dull, (float)1, 0}};

static const dts_tensor k[] = {{4, {5, 1, 3, 3}, 0x374ad2d31efdeae4ull, (float)0.333333343, 0}};

static nnop_status build(nnop_graph *g, const dts_case *c)
{
    nnop_value v[4];
    nnop_conv_params cp;
    nnop_pool_params pp;
    v[0] = dts_input(g, c, &in[0]);
    v[1] = dts_constant(g, c, &k[0]);
    cp = (nnop_conv_params){{3, 4}, {1, 1}, {3, 2}, 1};
    v[2] = nnop_conv(g, v[0], v[1], &cp);
    pp = (nnop_pool_params){{1, 1}, {1, 3}, {0, 0}, 1, {0, 0}};
    v[3] = nnop_pool(g, v[2], NNOP_POOL_MAX, &pp);
    nnop_output(g, v[2], NULL);
    nnop_output(g, v[3], NULL);
    return nnop_graph_status(g);
}

int main(void)
{
    dts_case c;
    memset(&c, 0, sizeof c);
    c.dtype = NNOP_BF16;
    c.layout = NNOP_NHWC;
    c.backend = NNOP_BACKEND_CPU;
    c.fuse = 1;
    c.build = build;
    c.in = in;
    c.n_in = 1;
    return dts_main(&c);
}
