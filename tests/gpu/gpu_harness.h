/* gpu_harness.h: run one graph on the CUDA backend and on the CPU reference backend with the
 * same seeded random inputs (GPU outputs poisoned with 0xFF first) and compare per dtype. */
#ifndef NNOP_GPU_HARNESS_H
#define NNOP_GPU_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#define H_MAX_IO 8

/* Builds the same graph on any context: inputs, constants (seeded), nodes, outputs. */
typedef void (*h_build_fn)(nnop_graph *g, const void *arg);

typedef struct h_run {
    nnop_context_options gpu_opts;
    nnop_compile_options copts;
    double rtol, atol;
    uint64_t seed;
    char describe[4096];
    int n_parts;
    nnop_status gpu_compile_status;
    char gpu_error[1024];
} h_run;

static inline void h_run_init(h_run *r, nnop_dtype t, double red_len)
{
    double scale = sqrt(red_len > 1.0 ? red_len : 1.0) / 8.0;
    memset(r, 0, sizeof *r);
    nnop_context_options_init(&r->gpu_opts);
    r->gpu_opts.backend = NNOP_BACKEND_CUDA;
    nnop_compile_options_init(&r->copts);
    /* Weights are scaled by 1/sqrt(L) (L = reduction length) so outputs are O(1); the
     * tolerance is the dtype's, widened by sqrt(L)/8 for long reductions. */
    r->rtol = nnop_test_rtol(t);
    r->atol = nnop_test_rtol(t) * (scale > 1.0 ? scale : 1.0);
    r->seed = 1234;
}

static inline nnop_context *h_gpu_context(const nnop_context_options *o)
{
    nnop_context *ctx = NULL;
    nnop_status st = nnop_context_create(o, &ctx);
    if (st != NNOP_OK)
        fail_msg("CUDA context: %s: %s", nnop_status_string(st), nnop_context_create_error());
    return ctx;
}

/* Constant data for a builder: seeded uniform values in [lo, hi) of dtype t (caller frees). */
static inline void *h_const_data(const nnop_tensor_desc *d, uint64_t seed, float lo, float hi)
{
    int64_t n = nnop_tensor_elements(d);
    void *p = malloc(nnop_tensor_bytes(d));
    assert_non_null(p);
    nnop_test_fill(d->dtype, p, NULL, n, seed, lo, hi);
    return p;
}

static inline nnop_value h_const(nnop_graph *g, const char *name, const nnop_tensor_desc *d,
                                 uint64_t seed, float lo, float hi)
{
    void *data = h_const_data(d, seed, lo, hi);
    nnop_value v = nnop_constant(g, name, d, data);
    free(data);
    return v;
}

/* Both backends' contexts, graphs, plans and the buffers of one comparison. */
typedef struct h_pair {
    nnop_context *cpu, *gpu;
    nnop_graph *gc, *gg;
    nnop_plan *pc, *pg;
    int n_in, n_out;
    void *hin[H_MAX_IO], *din[H_MAX_IO], *hout[H_MAX_IO], *dout[H_MAX_IO];
} h_pair;

static inline int h_compile(h_run *r, h_pair *hp, h_build_fn build, const void *arg)
{
    memset(hp, 0, sizeof *hp);
    hp->cpu = nnop_test_cpu_context();
    hp->gpu = h_gpu_context(&r->gpu_opts);
    assert_int_equal(nnop_graph_create(hp->cpu, &hp->gc), NNOP_OK);
    assert_int_equal(nnop_graph_create(hp->gpu, &hp->gg), NNOP_OK);
    build(hp->gc, arg);
    build(hp->gg, arg);
    assert_int_equal(nnop_graph_compile(hp->gc, NULL, &hp->pc), NNOP_OK);
    r->gpu_compile_status = nnop_graph_compile(hp->gg, &r->copts, &hp->pg);
    snprintf(r->gpu_error, sizeof r->gpu_error, "%s", nnop_context_last_error(hp->gpu));
    if (r->gpu_compile_status != NNOP_OK)
        return 0;
    nnop_plan_describe(hp->pg, r->describe, sizeof r->describe);
    r->n_parts = nnop_plan_num_partitions(hp->pg);
    hp->n_in = nnop_plan_num_inputs(hp->pc);
    hp->n_out = nnop_plan_num_outputs(hp->pc);
    assert_true(hp->n_in <= H_MAX_IO && hp->n_out <= H_MAX_IO);
    return 1;
}

/* Host and device buffers: inputs seeded in [-1, 1), outputs poisoned with 0xFF (NaN). */
static inline void h_buffers(const h_run *r, h_pair *hp)
{
    int i;
    for (i = 0; i < hp->n_in + hp->n_out; i++) {
        int out = i >= hp->n_in, k = out ? i - hp->n_in : i;
        nnop_tensor_desc d;
        size_t bytes;
        void **h = out ? &hp->hout[k] : &hp->hin[k], **dv = out ? &hp->dout[k] : &hp->din[k];
        assert_int_equal(out ? nnop_plan_output_desc(hp->pc, k, &d)
                             : nnop_plan_input_desc(hp->pc, k, &d),
                         NNOP_OK);
        bytes = nnop_tensor_bytes(&d);
        *h = malloc(bytes);
        assert_non_null(*h);
        if (out)
            nnop_test_poison(*h, bytes);
        else
            nnop_test_fill(d.dtype, *h, NULL, nnop_tensor_elements(&d), r->seed + (uint64_t)k,
                           -1.0f, 1.0f);
        assert_int_equal(nnop_malloc(hp->gpu, bytes, dv), NNOP_OK);
        assert_int_equal(nnop_copy_in(hp->gpu, *dv, *h, bytes), NNOP_OK);
    }
}

static inline void h_execute(const h_run *r, h_pair *hp)
{
    nnop_status st;
    assert_int_equal(nnop_plan_execute(hp->pc, (const void *const *)hp->hin, hp->hout), NNOP_OK);
    st = nnop_plan_execute(hp->pg, (const void *const *)hp->din, hp->dout);
    if (st == NNOP_OK)
        st = nnop_context_synchronize(hp->gpu);
    if (st != NNOP_OK)
        fail_msg("GPU execute: %s: %s\n%s", nnop_status_string(st),
                 nnop_context_last_error(hp->gpu), r->describe);
}

/* Output k of the GPU against the CPU's, per dtype. */
static inline int h_compare(const h_run *r, h_pair *hp, int k)
{
    nnop_tensor_desc d;
    int64_t n;
    float *ref;
    void *got;
    int ok;
    assert_int_equal(nnop_plan_output_desc(hp->pc, k, &d), NNOP_OK);
    n = nnop_tensor_elements(&d);
    ref = (float *)malloc((size_t)n * sizeof(float));
    got = malloc(nnop_tensor_bytes(&d));
    assert_non_null(ref);
    assert_non_null(got);
    assert_int_equal(nnop_convert(d.dtype, hp->hout[k], NNOP_F32, ref, n), NNOP_OK);
    assert_int_equal(nnop_copy_out(hp->gpu, got, hp->dout[k], nnop_tensor_bytes(&d)), NNOP_OK);
    ok = nnop_test_compare(d.dtype, got, ref, n, r->rtol, r->atol, "gpu vs cpu", r->seed);
    free(ref);
    free(got);
    return ok;
}

/* Element i of a dtype-t buffer set to v (NaN or an infinity). */
static inline void h_set_special(nnop_dtype t, void *p, int64_t i, float v)
{
    if (t == NNOP_F32) {
        ((float *)p)[i] = v;
    } else {
        uint16_t bits = isnan(v)  ? (t == NNOP_F16 ? 0x7E00u : 0x7FC0u)
                        : v > 0.f ? (t == NNOP_F16 ? 0x7C00u : 0x7F80u)
                                  : (t == NNOP_F16 ? 0xFC00u : 0xFF80u);
        memcpy((char *)p + 2 * i, &bits, 2);
    }
}

/* Output 0 of the GPU against the CPU's with NaN or infinite inputs: NaN exactly where the
 * reference is NaN, the same infinity where it is infinite, elsewhere within tolerance; a
 * reference with no NaN at all, or only NaN, tests nothing and fails. */
static inline int h_compare_special(const h_run *r, h_pair *hp)
{
    nnop_tensor_desc d;
    int64_t n, i, bad = 0, nans = 0;
    float *ref, *got;
    void *raw;
    assert_int_equal(nnop_plan_output_desc(hp->pc, 0, &d), NNOP_OK);
    n = nnop_tensor_elements(&d);
    ref = (float *)malloc((size_t)n * sizeof(float));
    got = (float *)malloc((size_t)n * sizeof(float));
    raw = malloc(nnop_tensor_bytes(&d));
    assert_true(ref && got && raw);
    assert_int_equal(nnop_convert(d.dtype, hp->hout[0], NNOP_F32, ref, n), NNOP_OK);
    assert_int_equal(nnop_copy_out(hp->gpu, raw, hp->dout[0], nnop_tensor_bytes(&d)), NNOP_OK);
    assert_int_equal(nnop_convert(d.dtype, raw, NNOP_F32, got, n), NNOP_OK);
    for (i = 0; i < n; i++) {
        int ok;
        nans += isnan(ref[i]) != 0;
        if (isnan(ref[i]))
            ok = isnan(got[i]) != 0;
        else if (isinf(ref[i]))
            ok = got[i] == ref[i];
        else
            ok = fabs((double)got[i] - ref[i]) <= r->atol + r->rtol * fabs((double)ref[i]);
        if (!ok && bad++ < 5)
            print_error("element %lld: got %.8g, want %.8g\n", (long long)i, (double)got[i],
                        (double)ref[i]);
    }
    if (nans == 0 || nans == n) {
        print_error("the reference has %lld NaN of %lld: the case tests nothing\n", (long long)nans,
                    (long long)n);
        bad++;
    }
    free(ref);
    free(got);
    free(raw);
    return bad == 0;
}

/* A case whose input 0 was given NaN or infinite elements on the host: copy it in again,
 * poison output 0 with finite bytes (0x5A: an output left unwritten where NaN is expected
 * shows), run both backends and compare (h_compare_special); fails with the plan unless they
 * match and the plan's description contains expect (NULL: no check). */
static inline void h_check_special(h_run *r, h_pair *hp, const char *name, const char *expect)
{
    nnop_tensor_desc d;
    size_t bytes;
    void *fill;
    assert_int_equal(nnop_plan_input_desc(hp->pc, 0, &d), NNOP_OK);
    assert_int_equal(nnop_copy_in(hp->gpu, hp->din[0], hp->hin[0], nnop_tensor_bytes(&d)), NNOP_OK);
    assert_int_equal(nnop_plan_output_desc(hp->pc, 0, &d), NNOP_OK);
    bytes = nnop_tensor_bytes(&d);
    fill = malloc(bytes);
    assert_non_null(fill);
    memset(fill, 0x5A, bytes);
    assert_int_equal(nnop_copy_in(hp->gpu, hp->dout[0], fill, bytes), NNOP_OK);
    free(fill);
    h_execute(r, hp);
    if (!h_compare_special(r, hp))
        fail_msg("%s: GPU result differs from the CPU reference (NaN or infinite inputs)\n%s", name,
                 r->describe);
    print_message("%s: %s", name, r->describe);
    if (expect && !strstr(r->describe, expect))
        fail_msg("%s: plan description lacks '%s':\n%s", name, expect, r->describe);
}

static inline void h_release(h_pair *hp)
{
    int i;
    for (i = 0; i < hp->n_in; i++) {
        free(hp->hin[i]);
        nnop_free(hp->gpu, hp->din[i]);
    }
    for (i = 0; i < hp->n_out; i++) {
        free(hp->hout[i]);
        nnop_free(hp->gpu, hp->dout[i]);
    }
    nnop_plan_destroy(hp->pc);
    nnop_plan_destroy(hp->pg);
    nnop_graph_destroy(hp->gc);
    nnop_graph_destroy(hp->gg);
    nnop_context_destroy(hp->gpu);
    nnop_context_destroy(hp->cpu);
}

/* Compile on both backends, run, compare every output. Returns 1 when all match; 0 when the
 * GPU compile failed (status in r) or an output differs. */
static inline int h_run_compare(h_run *r, h_build_fn build, const void *arg)
{
    h_pair hp;
    int k, ok = h_compile(r, &hp, build, arg);
    if (ok) {
        h_buffers(r, &hp);
        h_execute(r, &hp);
        for (k = 0; k < hp.n_out; k++)
            ok &= h_compare(r, &hp, k);
        if (!ok)
            print_error("%s", r->describe);
    }
    h_release(&hp);
    return ok;
}

/* h_run_compare for one row of a case table: fails with the GPU compile error or the
 * mismatch, prints the plan, and fails unless its description contains expect (NULL: no
 * check). */
static inline void h_check_case(h_run *r, const char *name, h_build_fn build, const void *row,
                                const char *expect)
{
    if (!h_run_compare(r, build, row)) {
        if (r->gpu_compile_status != NNOP_OK)
            fail_msg("%s: GPU compile: %s: %s", name, nnop_status_string(r->gpu_compile_status),
                     r->gpu_error);
        fail_msg("%s: GPU result differs from the CPU reference", name);
    }
    print_message("%s: %s", name, r->describe);
    if (expect && !strstr(r->describe, expect))
        fail_msg("%s: plan description lacks '%s':\n%s", name, expect, r->describe);
}

/* Run one CMocka test per row of a case table whose rows start with their name (a const char
 * pointer); each test gets its row as its state. NNOP_TEST_FILTER (a CMocka name pattern,
 * '*' wildcards) runs only the matching rows, e.g. under compute-sanitizer. */
#define H_MAX_CASES 512
static inline int h_run_table(const char *group, const void *rows, size_t n, size_t row_size,
                              CMUnitTestFunction fn)
{
    struct CMUnitTest tests[H_MAX_CASES];
    size_t i;
    if (n > H_MAX_CASES)
        return fprintf(stderr, "%s: %zu cases, at most %d\n", group, n, H_MAX_CASES), 1;
    if (getenv("NNOP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("NNOP_TEST_FILTER"));
    memset(tests, 0, sizeof tests);
    for (i = 0; i < n; i++) {
        const void *row = (const char *)rows + i * row_size;
        memcpy(&tests[i].name, row, sizeof tests[i].name);
        tests[i].test_func = fn;
        tests[i].initial_state = (void *)(uintptr_t)row;
    }
    return nnop_test_exit_code(_cmocka_run_group_tests(group, tests, n, NULL, NULL), n);
}

#endif /* NNOP_GPU_HARNESS_H */
