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

static void h_run_init(h_run *r, nnop_dtype t, double red_len)
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

static nnop_context *h_gpu_context(const nnop_context_options *o)
{
    nnop_context *ctx = NULL;
    nnop_status st = nnop_context_create(o, &ctx);
    if (st != NNOP_OK)
        fail_msg("CUDA context: %s: %s", nnop_status_string(st), nnop_context_create_error());
    return ctx;
}

/* Constant data for a builder: seeded uniform values in [lo, hi) of dtype t (caller frees). */
static void *h_const_data(const nnop_tensor_desc *d, uint64_t seed, float lo, float hi)
{
    int64_t n = nnop_tensor_elements(d);
    void *p = malloc(nnop_tensor_bytes(d));
    assert_non_null(p);
    nnop_test_fill(d->dtype, p, NULL, n, seed, lo, hi);
    return p;
}

static nnop_value h_const(nnop_graph *g, const char *name, const nnop_tensor_desc *d,
                          uint64_t seed, float lo, float hi)
{
    void *data = h_const_data(d, seed, lo, hi);
    nnop_value v = nnop_constant(g, name, d, data);
    free(data);
    return v;
}

/* Compile on both backends, run, compare every output. Returns 1 when all match; 0 when the
 * GPU compile failed (status in r) or an output differs. */
static int h_run_compare(h_run *r, h_build_fn build, const void *arg)
{
    nnop_context *cpu = nnop_test_cpu_context(), *gpu = h_gpu_context(&r->gpu_opts);
    nnop_graph *gc = NULL, *gg = NULL;
    nnop_plan *pc = NULL, *pg = NULL;
    void *hin[H_MAX_IO], *din[H_MAX_IO], *hout[H_MAX_IO], *dout[H_MAX_IO], *got;
    int i, n_in, n_out, ok = 1;
    assert_int_equal(nnop_graph_create(cpu, &gc), NNOP_OK);
    assert_int_equal(nnop_graph_create(gpu, &gg), NNOP_OK);
    build(gc, arg);
    build(gg, arg);
    assert_int_equal(nnop_graph_compile(gc, NULL, &pc), NNOP_OK);
    r->gpu_compile_status = nnop_graph_compile(gg, &r->copts, &pg);
    snprintf(r->gpu_error, sizeof r->gpu_error, "%s", nnop_context_last_error(gpu));
    if (r->gpu_compile_status != NNOP_OK) {
        nnop_graph_destroy(gc);
        nnop_graph_destroy(gg);
        nnop_plan_destroy(pc);
        nnop_context_destroy(gpu);
        nnop_context_destroy(cpu);
        return 0;
    }
    nnop_plan_describe(pg, r->describe, sizeof r->describe);
    r->n_parts = nnop_plan_num_partitions(pg);
    n_in = nnop_plan_num_inputs(pc);
    n_out = nnop_plan_num_outputs(pc);
    assert_true(n_in <= H_MAX_IO && n_out <= H_MAX_IO);
    for (i = 0; i < n_in; i++) {
        nnop_tensor_desc d;
        size_t bytes;
        assert_int_equal(nnop_plan_input_desc(pc, i, &d), NNOP_OK);
        bytes = nnop_tensor_bytes(&d);
        hin[i] = malloc(bytes);
        assert_non_null(hin[i]);
        nnop_test_fill(d.dtype, hin[i], NULL, nnop_tensor_elements(&d), r->seed + (uint64_t)i,
                       -1.0f, 1.0f);
        assert_int_equal(nnop_malloc(gpu, bytes, &din[i]), NNOP_OK);
        assert_int_equal(nnop_copy_in(gpu, din[i], hin[i], bytes), NNOP_OK);
    }
    for (i = 0; i < n_out; i++) {
        nnop_tensor_desc d;
        size_t bytes;
        assert_int_equal(nnop_plan_output_desc(pc, i, &d), NNOP_OK);
        bytes = nnop_tensor_bytes(&d);
        hout[i] = malloc(bytes);
        assert_non_null(hout[i]);
        nnop_test_poison(hout[i], bytes);
        assert_int_equal(nnop_malloc(gpu, bytes, &dout[i]), NNOP_OK);
        assert_int_equal(nnop_copy_in(gpu, dout[i], hout[i], bytes), NNOP_OK); /* poison */
    }
    assert_int_equal(nnop_plan_execute(pc, (const void *const *)hin, hout), NNOP_OK);
    {
        nnop_status st = nnop_plan_execute(pg, (const void *const *)din, dout);
        if (st == NNOP_OK)
            st = nnop_context_synchronize(gpu);
        if (st != NNOP_OK)
            fail_msg("GPU execute: %s: %s\n%s", nnop_status_string(st),
                     nnop_context_last_error(gpu), r->describe);
    }
    for (i = 0; i < n_out; i++) {
        nnop_tensor_desc d;
        int64_t n;
        float *ref;
        assert_int_equal(nnop_plan_output_desc(pc, i, &d), NNOP_OK);
        n = nnop_tensor_elements(&d);
        ref = (float *)malloc((size_t)n * sizeof(float));
        got = malloc(nnop_tensor_bytes(&d));
        assert_non_null(ref);
        assert_non_null(got);
        assert_int_equal(nnop_convert(d.dtype, hout[i], NNOP_F32, ref, n), NNOP_OK);
        assert_int_equal(nnop_copy_out(gpu, got, dout[i], nnop_tensor_bytes(&d)), NNOP_OK);
        if (!nnop_test_compare(d.dtype, got, ref, n, r->rtol, r->atol, "gpu vs cpu", r->seed))
            ok = 0;
        free(ref);
        free(got);
    }
    if (!ok)
        print_error("%s", r->describe);
    for (i = 0; i < n_in; i++) {
        free(hin[i]);
        nnop_free(gpu, din[i]);
    }
    for (i = 0; i < n_out; i++) {
        free(hout[i]);
        nnop_free(gpu, dout[i]);
    }
    nnop_plan_destroy(pc);
    nnop_plan_destroy(pg);
    nnop_graph_destroy(gc);
    nnop_graph_destroy(gg);
    nnop_context_destroy(gpu);
    nnop_context_destroy(cpu);
    return ok;
}

#endif /* NNOP_GPU_HARNESS_H */
