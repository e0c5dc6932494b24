/* test_gpu_engines.c: nnop_plan_engines on the GPU, from the header alone: every engine of
 * a conv chain's cuDNN partition built and timed, the plan's own engine among them and marked,
 * each policy's pick consistent with its rules, the rules' exclusions named, and the plan
 * still giving the same bytes after the survey; and the rules that exclude runtime-compiled
 * engines, as nnop_plan_describe states them. */
#include "nnop_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NNOP_HAVE_CUDA
#include <cuda_runtime.h>

#define CAP 512

typedef struct chain {
    nnop_dtype dt;
    nnop_layout layout;
    int allow_tf32;
} chain;

static void *dev_random(size_t bytes, nnop_dtype t, int64_t n, uint64_t seed)
{
    void *d = NULL, *h = malloc(bytes);
    assert_non_null(h);
    nnop_test_fill(t, h, NULL, n, seed, -1.0f, 1.0f);
    assert_int_equal(cudaMalloc(&d, bytes), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    free(h);
    return d;
}

/* conv 3x3 (2 x 24 x 13 x 11 -> K 40) + bias + relu: one cuDNN partition. */
static nnop_plan *compile_chain(nnop_context *ctx, const chain *c, nnop_tensor_desc *xd,
                                nnop_tensor_desc *yd)
{
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_tensor_desc wd = nnop_tensor_4d(c->dt, c->layout, 40, 24, 3, 3);
    nnop_tensor_desc bd = nnop_tensor_1d(c->dt, 40);
    nnop_conv_params cp = {{1, 1}, {1, 1}, {1, 1}, 1};
    void *w = malloc(nnop_tensor_bytes(&wd)), *b = malloc(nnop_tensor_bytes(&bd));
    nnop_value x, y;
    assert_non_null(w);
    assert_non_null(b);
    nnop_test_fill(c->dt, w, NULL, nnop_tensor_elements(&wd), 2, -0.5f, 0.5f);
    nnop_test_fill(c->dt, b, NULL, 40, 3, -0.5f, 0.5f);
    *xd = nnop_tensor_4d(c->dt, c->layout, 2, 24, 13, 11);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    x = nnop_input(g, "x", xd);
    y = nnop_conv(g, x, nnop_constant(g, "w", &wd, w), &cp);
    y = nnop_act(g, nnop_bias(g, y, nnop_constant(g, "b", &bd, b)), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    assert_int_equal(nnop_plan_output_desc(p, 0, yd), NNOP_OK);
    nnop_graph_destroy(g);
    free(w);
    free(b);
    return p;
}

/* The engine nnop_plan_describe names for the plan ("eng<N>"), or -1. */
static long long described_engine(const nnop_plan *p)
{
    char text[2048];
    const char *e;
    nnop_plan_describe(p, text, sizeof text);
    e = strstr(text, "eng");
    return e ? strtoll(e + 3, NULL, 10) : -1;
}

static void check_rows(const nnop_engine_info *e, int n, const chain *c, long long chosen)
{
    int i, k, n_chosen = 0, picks[3] = {0, 0, 0};
    for (i = 0; i < n; i++) {
        assert_int_equal(e[i].partition, 0);
        assert_int_equal(e[i].rank, i);
        assert_in_range(e[i].heuristic, 0, 2);
        if (e[i].policies & NNOP_ENGINE_CHOSEN) {
            n_chosen++;
            assert_true(e[i].engine == chosen);
        }
        for (k = 0; k < 3; k++)
            if (e[i].policies & (1u << k)) {
                picks[k]++;
                /* a pick built and ran, and passes its policy's rules */
                assert_int_equal(e[i].status, NNOP_OK);
                assert_string_equal(e[i].note, "");
                if (k == NNOP_POLICY_PRECOMPILED_ONLY)
                    assert_false(e[i].runtime_compiled);
            }
        if (e[i].status == NNOP_OK) {
            assert_true(e[i].gpu_us > 0.0);
            assert_true(e[i].build_ms >= 0.0);
        } else {
            assert_true(e[i].note[0] != '\0'); /* every failure says why */
        }
        /* fp32 without allow_tf32: a tensor-core engine is excluded, by that rule or an
         * earlier one (engine 0 of a fused graph) */
        if (c->dt == NNOP_F32 && !c->allow_tf32 && e[i].tensor_core)
            assert_true(strstr(e[i].note, "allow_tf32") || strstr(e[i].note, "engine 0"));
    }
    assert_int_equal(n_chosen, 1);
    for (k = 0; k < 3; k++)
        assert_in_range(picks[k], 0, 1);
    /* the default context (prefer-precompiled, no autotune) took the first usable engine,
     * which is what the survey's replay of that policy takes too */
    for (i = 0; i < n; i++)
        if (e[i].policies & (1u << NNOP_POLICY_PREFER_PRECOMPILED))
            assert_true(e[i].policies & NNOP_ENGINE_CHOSEN);
    assert_int_equal(picks[NNOP_POLICY_PREFER_PRECOMPILED], 1);
}

static void survey_chain(const chain *c, int count_first)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_tensor_desc xd, yd;
    nnop_plan *p;
    nnop_engine_info *e = (nnop_engine_info *)calloc(CAP, sizeof *e);
    void *x, *y = NULL, *before, *after;
    size_t yb;
    int n = -1, n2 = -1;
    assert_non_null(e);
    nnop_context_options_init(&o);
    o.allow_tf32 = c->allow_tf32;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    p = compile_chain(ctx, c, &xd, &yd);
    yb = nnop_tensor_bytes(&yd);
    x = dev_random(nnop_tensor_bytes(&xd), c->dt, nnop_tensor_elements(&xd), 1);
    assert_int_equal(cudaMalloc(&y, yb), cudaSuccess);
    before = malloc(yb);
    after = malloc(yb);
    assert_non_null(before);
    assert_non_null(after);
    assert_int_equal(nnop_plan_execute(p, (const void *const *)&x, &y), NNOP_OK);
    assert_int_equal(nnop_copy_out(ctx, before, y, yb), NNOP_OK);

    /* counting only (cap 0) says as many as the rows (each call builds every engine: once) */
    if (count_first)
        assert_int_equal(nnop_plan_engines(p, NULL, 0, &n), NNOP_OK);
    assert_int_equal(nnop_plan_engines(p, e, CAP, &n2), NNOP_OK);
    assert_true(n2 >= 1 && n2 <= CAP);
    if (count_first)
        assert_int_equal(n2, n);
    n = n2;
    check_rows(e, n, c, described_engine(p));

    assert_int_equal(cudaMemset(y, 0xFF, yb), cudaSuccess);
    assert_int_equal(nnop_plan_execute(p, (const void *const *)&x, &y), NNOP_OK);
    assert_int_equal(nnop_copy_out(ctx, after, y, yb), NNOP_OK);
    assert_memory_equal(before, after, yb);
    cudaFree(x), cudaFree(y);
    free(before), free(after), free(e);
    nnop_plan_destroy(p);
    nnop_context_destroy(ctx);
}

static void test_every_engine_of_a_conv_chain(void **state)
{
    static const chain chains[] = {
            {NNOP_F16, NNOP_NHWC, 0},
            {NNOP_BF16, NNOP_NCHW, 0},
            {NNOP_F32, NNOP_NCHW, 0},
            {NNOP_F32, NNOP_NHWC, 1},
    };
    size_t i;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    for (i = 0; i < sizeof chains / sizeof chains[0]; i++)
        survey_chain(&chains[i], i == 0);
}

/* nnop_plan_describe of conv (2 x C x 5 x 7, K 24, R x R) + bias + SiLU, f16 NHWC. */
static void describe_conv_silu(int C, int R, char *text, size_t cap)
{
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, C, 5, 7);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 24, C, R, R);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F16, 24);
    nnop_conv_params cp = {{R / 2, R / 2}, {1, 1}, {1, 1}, 1};
    void *w = malloc(nnop_tensor_bytes(&wd)), *b = malloc(nnop_tensor_bytes(&bd));
    nnop_value y;
    assert_non_null(w);
    assert_non_null(b);
    nnop_test_fill(NNOP_F16, w, NULL, nnop_tensor_elements(&wd), 2, -0.5f, 0.5f);
    nnop_test_fill(NNOP_F16, b, NULL, 24, 3, -0.5f, 0.5f);
    assert_int_equal(nnop_context_create(NULL, &ctx), NNOP_OK);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    y = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w), &cp);
    y = nnop_act(g, nnop_bias(g, y, nnop_constant(g, "b", &bd, b)), NNOP_ACT_SILU, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    nnop_plan_describe(p, text, cap);
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
    free(w);
    free(b);
}

/* The rules that keep runtime-compiled engines off a step, as nnop_plan_describe states them:
 * a channel count that is not a multiple of 8 (issue 10's shape class), and a 16-bit 1x1
 * conv, whose filter [K, C, 1, 1] is not that class's batch of 1x1 images but which keeps to
 * precompiled engines (measured faster; descriptors.c). */
static void test_runtime_compiled_exclusions_are_described(void **state)
{
    char text[4096];
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    describe_conv_silu(16, 1, text, sizeof text);
    if (!strstr(text, "runtime-compiled engines not tried on a 16-bit 1x1 conv") ||
        strstr(text, "excluded for this shape"))
        fail_msg("1x1 conv on 2 x 16 x 5 x 7, f16 NHWC: %s", text);
    describe_conv_silu(12, 3, text, sizeof text);
    if (!strstr(text, "runtime-compiled engines excluded for this shape"))
        fail_msg("3x3 conv on 2 x 12 x 5 x 7, f16 NHWC: %s", text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_engine_of_a_conv_chain),
            cmocka_unit_test(test_runtime_compiled_exclusions_are_described),
    };
    return nnop_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL),
                               sizeof tests / sizeof tests[0]);
}
#else
int main(void)
{
    return nnop_test_gpu_required() ? 1 : NNOP_TEST_SKIPPED; /* CPU-only: no GPU path */
}
#endif
