/* test_node_names.c: nnop_graph_name_next, the importer's name for the node the next builder
 * creates: it appears in that builder's error, in later messages naming the node, in
 * nnop_plan_describe, and as the bind-by-name of an unnamed output; it names one node only. */
#include <string.h>

#include "nnop_test.h"

static void test_name_in_describe_and_binding(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 2, 2);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 1, 1);
    nnop_conv_params cp;
    float w = 2.f, x[4] = {1.f, -1.f, 2.f, -2.f}, y[4], z[4];
    const void *in[1] = {x};
    void *out[2];
    nnop_value v;
    char text[1024];
    nnop_conv_params_init(&cp);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &xd);
    assert_int_equal(nnop_graph_name_next(g, "conv1"), NNOP_OK);
    v = nnop_conv(g, v, nnop_constant(g, "w", &wd, &w), &cp);
    assert_int_equal(nnop_graph_name_next(g, "relu1"), NNOP_OK);
    v = nnop_act(g, v, NNOP_ACT_RELU, 0.f);
    assert_int_equal(nnop_output(g, v, NULL), NNOP_OK);
    /* the name was used once: this node has the default name */
    assert_int_equal(nnop_output(g, nnop_act(g, v, NNOP_ACT_IDENTITY, 0.f), NULL), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    assert_true(nnop_plan_describe(p, text, sizeof text) < sizeof text);
    assert_non_null(strstr(text, "conv[conv1]+act[relu1]"));
    assert_int_equal(nnop_plan_output_index(p, "relu1"), 0);
    assert_int_equal(nnop_plan_output_index(p, "act#2"), 1);
    out[nnop_plan_output_index(p, "relu1")] = y;
    out[nnop_plan_output_index(p, "act#2")] = z;
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    assert_true(y[0] == 2.f && y[1] == 0.f && y[2] == 4.f && y[3] == 0.f);
    assert_true(z[2] == 4.f);
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
}

static void test_name_in_the_builders_error(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = NULL;
    nnop_tensor_desc a = nnop_tensor_2d(NNOP_F32, 2, 3), b = nnop_tensor_2d(NNOP_F32, 3, 2);
    nnop_value v;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_graph_name_next(g, "Add_17"), NNOP_OK);
    v = nnop_add(g, nnop_input(g, "a", &a), nnop_input(g, "b", &b));
    assert_true(v.id < 0);
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_SHAPE);
    NNOP_TEST_ASSERT_ERROR(ctx, "nnop_add 'Add_17' (node #0): ");
    nnop_graph_destroy(g);
    /* an input error names the node too */
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_graph_name_next(g, "Relu_3"), NNOP_OK);
    v = nnop_act(g, nnop_none(), NNOP_ACT_RELU, 0.f);
    assert_true(v.id < 0);
    NNOP_TEST_ASSERT_ERROR(ctx, "nnop_act 'Relu_3': input 0 is required");
    nnop_graph_destroy(g);
}

static void test_name_next_arguments(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = NULL;
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 1, 2);
    nnop_plan *p = NULL;
    nnop_value v;
    char long_name[80];
    assert_int_equal(nnop_graph_name_next(NULL, "x"), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    assert_int_equal(nnop_graph_name_next(g, long_name), NNOP_OK);
    assert_int_equal(nnop_graph_name_next(g, NULL), NNOP_OK); /* takes it back */
    v = nnop_act(g, nnop_input(g, "x", &d), NNOP_ACT_RELU, 0.f);
    assert_int_equal(nnop_graph_name_next(g, long_name), NNOP_OK);
    v = nnop_act(g, v, NNOP_ACT_RELU, 0.f);
    assert_int_equal(nnop_output(g, v, NULL), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    long_name[47] = '\0'; /* 47 bytes kept */
    assert_string_equal(nnop_plan_output_name(p, 0), long_name);
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_name_in_describe_and_binding),
            cmocka_unit_test(test_name_in_the_builders_error),
            cmocka_unit_test(test_name_next_arguments),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
