/* test_plan_engines.c: nnop_plan_engines' arguments and the CPU backend's answer (no engines:
 * a count of 0); the survey itself runs in gpu.engines. */
#include <string.h>

#include "nnop_test.h"

static nnop_plan *conv_plan(nnop_context *ctx)
{
    static const float w[4] = {0.0f, 1.0f, 2.0f, 0.0f};
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 2, 3, 3);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 2, 1, 1);
    nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_value y;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    y = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w), &p);
    assert_int_equal(nnop_output(g, nnop_act(g, y, NNOP_ACT_RELU, 0.0f), "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    nnop_graph_destroy(g);
    return plan;
}

static void test_cpu_plan_has_no_engines(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_plan *p = conv_plan(ctx);
    nnop_engine_info e[2];
    int n = -1;
    (void)state;
    memset(e, 0x5A, sizeof e);
    assert_int_equal(nnop_plan_engines(p, e, 2, &n), NNOP_OK);
    assert_int_equal(n, 0);
    assert_int_equal(((unsigned char *)e)[0], 0x5A); /* no row written */
    n = -1;
    assert_int_equal(nnop_plan_engines(p, NULL, 0, &n), NNOP_OK);
    assert_int_equal(n, 0);
    nnop_plan_destroy(p);
    nnop_context_destroy(ctx);
}

static void test_bad_arguments_are_refused_by_name(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_plan *p = conv_plan(ctx);
    nnop_engine_info e[1];
    int n = 7;
    (void)state;
    assert_int_equal(nnop_plan_engines(NULL, e, 1, &n), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(n, 7); /* a failed call writes nothing (nnop.h, "Errors") */
    assert_int_equal(nnop_plan_engines(p, e, 1, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(ctx), "nnop_plan_engines: count is NULL"));
    assert_int_equal(nnop_plan_engines(p, NULL, 1, &n), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(
            strstr(nnop_context_last_error(ctx), "nnop_plan_engines: cap is 1 with out NULL"));
    assert_int_equal(nnop_plan_engines(p, e, -1, &n), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(ctx), "cap is -1"));
    assert_int_equal(n, 7);
    nnop_plan_destroy(p);
    nnop_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cpu_plan_has_no_engines),
            cmocka_unit_test(test_bad_arguments_are_refused_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
