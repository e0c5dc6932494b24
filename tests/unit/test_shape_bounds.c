/* test_shape_bounds.c: inferred output shapes pass the same bounds as given descriptors
 * (issue 11): a huge pad or huge linear dims fail at the builder with NNOP_ERR_SHAPE naming
 * the node, on the graph builder, at compile and through the one-call entry point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* to forge a graph whose stored shape is out of bounds */
#include "nnop_test.h"

static nnop_context *ctx_;

static nnop_graph *new_graph(void)
{
    nnop_graph *g = NULL;
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    return g;
}

static void expect_shape_error(nnop_graph *g, nnop_value v, const char *substr)
{
    nnop_plan *plan = NULL;
    assert_true(v.id < 0);
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_SHAPE);
    NNOP_TEST_ASSERT_ERROR(ctx_, substr);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_ERR_SHAPE);
    assert_null(plan);
    nnop_graph_destroy(g);
}

static void test_conv_with_huge_pad_is_refused_at_the_builder(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 1, 1);
    nnop_conv_params p;
    nnop_value x, w;
    (void)state;
    memset(&p, 0, sizeof p);
    p.pad[0] = p.pad[1] = (int64_t)1 << 20; /* y would be 1 x 1 x 2097153 x 2097153 */
    p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = p.dilation[1] = 1;
    p.groups = 1;
    x = nnop_input(g, "x", &xd);
    w = nnop_input(g, "w", &xd);
    expect_shape_error(g, nnop_conv(g, x, w, &p), "nnop_conv (node #0): the inferred output");
}

static void test_linear_with_huge_dims_is_refused_at_the_builder(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, (int64_t)1 << 21, 1);
    nnop_tensor_desc wd = nnop_tensor_2d(NNOP_F32, (int64_t)1 << 20, 1);
    nnop_value x, w, y;
    (void)state;
    x = nnop_input(g, "x", &xd);
    w = nnop_input(g, "w", &wd);
    y = nnop_linear(g, x, w, nnop_none());
    expect_shape_error(g, y, "nnop_linear (node #0)");
    NNOP_TEST_ASSERT_ERROR(ctx_, "NNOP_MAX_TENSOR_ELEMENTS");
}

static void test_largest_inferred_shape_is_accepted(void **state)
{
    /* exactly NNOP_MAX_TENSOR_ELEMENTS elements: the bound is inclusive (never executed) */
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, (int64_t)1 << 20, 1);
    nnop_tensor_desc wd = nnop_tensor_2d(NNOP_F32, (int64_t)1 << 20, 1);
    nnop_tensor_desc yd;
    nnop_value y;
    (void)state;
    y = nnop_linear(g, nnop_input(g, "x", &xd), nnop_input(g, "w", &wd), nnop_none());
    assert_true(y.id >= 0);
    assert_int_equal(nnop_value_desc(g, y, &yd), NNOP_OK);
    assert_int_equal(nnop_tensor_elements(&yd), NNOP_MAX_TENSOR_ELEMENTS);
    nnop_graph_destroy(g);
}

static void test_conv_bias_relu_with_huge_pad_fails_and_leaves_y_untouched(void **state)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 1, 1);
    nnop_tensor_desc yd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 2097153, 2097153), big = yd;
    float x[1] = {1.0f}, w[1] = {2.0f}, y[64];
    nnop_conv_params p;
    (void)state;
    memset(&p, 0, sizeof p);
    p.pad[0] = p.pad[1] = (int64_t)1 << 20;
    p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = p.dilation[1] = 1;
    p.groups = 1;
    nnop_test_poison(y, sizeof y);
    /* the true output's descriptor is itself out of bounds: refused as y_desc */
    assert_int_equal(nnop_conv_bias_relu(ctx_, &xd, x, &xd, w, NULL, &p, &big, y),
                     NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_,
                           "nnop_conv_bias_relu: y_desc: f32[1,1,2097153,2097153] NCHW: more than");
    /* with any valid y_desc, the conv's inferred shape is refused */
    yd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 4, 4);
    assert_int_equal(nnop_conv_bias_relu(ctx_, &xd, x, &xd, w, NULL, &p, &yd, y), NNOP_ERR_SHAPE);
    NNOP_TEST_ASSERT_ERROR(ctx_, "inferred output shape is out of bounds");
    assert_true(nnop_test_is_poisoned(y, sizeof y));
}

static void test_compile_rejects_a_forged_out_of_bounds_shape(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 4, 4);
    nnop_plan *plan = NULL;
    nnop_value y;
    (void)state;
    y = nnop_act(g, nnop_input(g, "x", &xd), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    g->values[NNOP__VALUE_INDEX(y.id)].desc.dims[0] =
            (int64_t)1 << 40; /* a corrupted graph: refused, not run */
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_ERR_SHAPE);
    assert_null(plan);
    NNOP_TEST_ASSERT_ERROR(ctx_, "has an invalid shape");
    nnop_graph_destroy(g);
}

static int setup(void **state)
{
    int r = nnop_test_setup_cpu_context(state);
    ctx_ = (nnop_context *)*state;
    return r;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conv_with_huge_pad_is_refused_at_the_builder),
            cmocka_unit_test(test_linear_with_huge_dims_is_refused_at_the_builder),
            cmocka_unit_test(test_largest_inferred_shape_is_accepted),
            cmocka_unit_test(test_conv_bias_relu_with_huge_pad_fails_and_leaves_y_untouched),
            cmocka_unit_test(test_compile_rejects_a_forged_out_of_bounds_shape),
    };
    return cmocka_run_group_tests_name("shape_bounds", tests, setup, nnop_test_teardown_context);
}
