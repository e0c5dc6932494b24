/* nnop_test.c: shared test helpers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nnop_test.h"
#include "platform/platform.h"

void nnop_test_rng_seed(nnop_test_rng *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (r->s == 0)
        r->s = 1;
}

float nnop_test_uniform(nnop_test_rng *r, float lo, float hi)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    x *= 0x2545F4914F6CDD1Dull;
    return lo + (hi - lo) * (float)((double)(x >> 40) / (double)(1ull << 24));
}

void nnop_test_fill_f32(float *x, int64_t n, uint64_t seed, float lo, float hi)
{
    nnop_test_rng r;
    int64_t i;
    nnop_test_rng_seed(&r, seed);
    for (i = 0; i < n; i++)
        x[i] = nnop_test_uniform(&r, lo, hi);
}

void nnop_test_fill(nnop_dtype t, void *x, float *ref, int64_t n, uint64_t seed, float lo, float hi)
{
    float *tmp = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    assert_non_null(tmp);
    nnop_test_fill_f32(tmp, n, seed, lo, hi);
    assert_int_equal(nnop_convert(NNOP_F32, tmp, t, x, n), NNOP_OK);
    if (ref)
        assert_int_equal(nnop_convert(t, x, NNOP_F32, ref, n), NNOP_OK);
    free(tmp);
}

void nnop_test_poison(void *p, size_t bytes)
{
    memset(p, 0xFF, bytes);
}

double nnop_test_rtol(nnop_dtype t)
{
    switch (t) {
    case NNOP_F32:
        return 1e-5;
    case NNOP_F16:
        return 2e-3;
    case NNOP_BF16:
        return 1e-2;
    case NNOP_F8E4M3: /* storage only: no graph computes in them (one step of the format) */
        return 0.0625;
    case NNOP_F8E5M2:
        return 0.125;
    case NNOP_I8:
        return 0.0;
    }
    return 0.0;
}

int nnop_test_compare(nnop_dtype t, const void *got, const float *want, int64_t n, double rtol,
                      double atol, const char *what, uint64_t seed)
{
    float *g = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    int64_t i, bad = 0;
    assert_non_null(g);
    assert_int_equal(nnop_convert(t, got, NNOP_F32, g, n), NNOP_OK);
    for (i = 0; i < n; i++) {
        double d = fabs((double)g[i] - (double)want[i]);
        if (isnan(want[i]) && isnan(g[i]))
            continue; /* NaN propagates, as in PyTorch */
        if (!isfinite(g[i]) || d > atol + rtol * fabs((double)want[i])) {
            if (bad < 5)
                print_error("%s (seed %llu): element %lld: got %.8g, want %.8g (|diff| %.3g)\n",
                            what, (unsigned long long)seed, (long long)i, (double)g[i],
                            (double)want[i], d);
            bad++;
        }
    }
    if (bad)
        print_error("%s: %lld of %lld elements out of tolerance (rtol %g, atol %g)\n", what,
                    (long long)bad, (long long)n, rtol, atol);
    free(g);
    return bad == 0;
}

int nnop_test_gpu_required(void)
{
    const char *e = getenv("NNOP_REQUIRE_GPU");
    return e && strcmp(e, "1") == 0;
}

static size_t skipped_cases;

void nnop_test_note_skip(void)
{
    skipped_cases++;
}

int nnop_test_exit_code(int failed, size_t n)
{
    if (failed == 0 && n > 0 && skipped_cases >= n) {
        fprintf(stderr, "all %zu cases skipped (no usable CUDA device): exit %d\n", n,
                NNOP_TEST_SKIPPED);
        return NNOP_TEST_SKIPPED;
    }
    return failed;
}

/* the library's own probe (0 in a build without CUDA) */
int nnop_test_have_gpu(void)
{
    nnop_status st;
    char why[256];
    return nnop__cuda_device_count(&st, why, sizeof why) > 0;
}

nnop_context *nnop_test_cpu_context(void)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    assert_non_null(ctx);
    return ctx;
}

/* ---- appended: layout-independent data movement and graph running ---- */
int nnop_test_is_poisoned(const void *p, size_t bytes)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < bytes; i++)
        if (b[i] != 0xFF)
            return 0;
    return 1;
}

/* Element offset of the i-th logical (row-major) element of d. */
static int64_t logical_offset(const nnop_tensor_desc *d, int64_t i)
{
    int64_t off = 0;
    int k;
    for (k = d->ndim - 1; k >= 0; k--) {
        off += (i % d->dims[k]) * d->strides[k];
        i /= d->dims[k];
    }
    return off;
}

void nnop_test_pack(const nnop_tensor_desc *d, const float *logical, void *dst)
{
    int64_t i, n = nnop_tensor_elements(d);
    size_t es = nnop_dtype_size(d->dtype);
    assert_true(n > 0);
    for (i = 0; i < n; i++)
        assert_int_equal(nnop_convert(NNOP_F32, &logical[i], d->dtype,
                                      (char *)dst + (size_t)logical_offset(d, i) * es, 1),
                         NNOP_OK);
}

void nnop_test_unpack(const nnop_tensor_desc *d, const void *src, float *logical)
{
    int64_t i, n = nnop_tensor_elements(d);
    size_t es = nnop_dtype_size(d->dtype);
    assert_true(n > 0);
    for (i = 0; i < n; i++)
        assert_int_equal(nnop_convert(d->dtype,
                                      (const char *)src + (size_t)logical_offset(d, i) * es,
                                      NNOP_F32, &logical[i], 1),
                         NNOP_OK);
}

nnop_status nnop_test_run_graph(nnop_graph *g, const nnop_compile_options *opts,
                                const void *const *in, void *const *out)
{
    nnop_plan *plan = NULL;
    nnop_status st = nnop_graph_compile(g, opts, &plan);
    if (st != NNOP_OK)
        return st;
    st = nnop_plan_execute(plan, in, out);
    nnop_plan_destroy(plan);
    return st;
}

static void test_without_examples_support(void **state)
{
    (void)state;
    if (nnop_test_gpu_required())
        fail_msg("%s", "NNOP_REQUIRE_GPU=1 but nnop_examples_support was not built (cJSON not "
                       "found: configure with -DCJSON_ROOT=<prefix>)");
    print_message("nnop_examples_support was not built (cJSON missing?): skipping\n");
    skip();
}

int nnop_test_main_without_examples_support(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_without_examples_support)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

void nnop_test_run_unpack(nnop_graph *g, const void *const *in, const nnop_tensor_desc *yd,
                          void *yb, float *y)
{
    void *out[1];
    out[0] = yb;
    nnop_test_poison(yb, nnop_tensor_bytes(yd));
    assert_int_equal(nnop_test_run_graph(g, NULL, in, out), NNOP_OK);
    nnop_test_unpack(yd, yb, y);
}

void nnop_test_assert_floats(const float *got, const float *want, int64_t n, double tol)
{
    int64_t i;
    for (i = 0; i < n; i++)
        if (!(fabs((double)got[i] - (double)want[i]) <= tol))
            fail_msg("element %lld: got %.9g, want %.9g", (long long)i, (double)got[i],
                     (double)want[i]);
}

nnop_status nnop_test_whole_run(const nnop_context_options *o, nnop_test_build_fn build,
                                const void *arg, const void *const *in, void *const *out,
                                char *error, size_t len)
{
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_status st = nnop_context_create(o, &ctx);
    error[0] = '\0';
    if (st != NNOP_OK) {
        snprintf(error, len, "%s", nnop_context_create_error());
        return st;
    }
    st = nnop_graph_create(ctx, &g);
    if (st == NNOP_OK) {
        build(g, arg);
        st = nnop_graph_compile(g, NULL, &plan);
    }
    if (st == NNOP_OK)
        st = nnop_plan_execute(plan, in, out);
    if (st == NNOP_OK)
        st = nnop_context_synchronize(ctx);
    if (st != NNOP_OK)
        snprintf(error, len, "%s", nnop_context_last_error(ctx));
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
    return st;
}

unsigned char *nnop_test_read_file(const char *path, size_t *len)
{
    FILE *f = nnop__fopen(path, "rb", NULL);
    unsigned char *p = NULL;
    size_t cap = 0, got = 1;
    int ok = f != NULL;
    *len = 0;
    while (ok && got) {
        if (*len == cap) {
            unsigned char *q = (unsigned char *)realloc(p, cap ? 2 * cap : 4096);
            ok = q != NULL;
            if (!ok)
                break;
            p = q;
            cap = cap ? 2 * cap : 4096;
        }
        got = fread(p + *len, 1, cap - *len, f);
        *len += got;
    }
    ok = ok && !ferror(f);
    if (f)
        fclose(f);
    if (!ok) {
        free(p);
        *len = 0;
        return NULL;
    }
    p[*len] = '\0'; /* the last read returned 0 with room asked for: *len < cap */
    return p;
}

int nnop_test_setup_cpu_context(void **state)
{
    *state = nnop_test_cpu_context();
    return 0;
}

int nnop_test_teardown_context(void **state)
{
    nnop_context_destroy((nnop_context *)*state);
    return 0;
}
