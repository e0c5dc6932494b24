/* test_params.c: the parameter structs' init functions give the documented defaults in every
 * field (whatever the memory held), tolerate NULL, and a conv, pool, resize and transposed
 * conv built from them alone run as identities on a 1x1 kernel. */
#include <string.h>

#include "nnop_test.h"

static void test_conv_params_init(void **state)
{
    nnop_conv_params p;
    (void)state;
    memset(&p, 0xAB, sizeof p);
    nnop_conv_params_init(&p);
    assert_int_equal(p.pad[0], 0);
    assert_int_equal(p.pad[1], 0);
    assert_int_equal(p.stride[0], 1);
    assert_int_equal(p.stride[1], 1);
    assert_int_equal(p.dilation[0], 1);
    assert_int_equal(p.dilation[1], 1);
    assert_int_equal(p.groups, 1);
    nnop_conv_params_init(NULL);
}

static void test_pool_params_init(void **state)
{
    nnop_pool_params p;
    (void)state;
    memset(&p, 0xAB, sizeof p);
    nnop_pool_params_init(&p);
    assert_int_equal(p.window[0], 1);
    assert_int_equal(p.window[1], 1);
    assert_int_equal(p.stride[0], 1);
    assert_int_equal(p.stride[1], 1);
    assert_int_equal(p.pad[0], 0);
    assert_int_equal(p.pad[1], 0);
    assert_int_equal(p.count_include_pad, 1);
    nnop_pool_params_init(NULL);
}

static void test_resize_params_init(void **state)
{
    nnop_resize_params p;
    (void)state;
    memset(&p, 0xAB, sizeof p);
    nnop_resize_params_init(&p);
    assert_int_equal(p.mode, NNOP_RESIZE_NEAREST);
    assert_int_equal(p.align_corners, 0);
    assert_int_equal(p.size[0], 0);
    assert_int_equal(p.size[1], 0);
    assert_true(p.scale[0] == 1.0 && p.scale[1] == 1.0);
    nnop_resize_params_init(NULL);
}

static void test_conv_transpose_params_init(void **state)
{
    nnop_conv_transpose_params p;
    (void)state;
    memset(&p, 0xAB, sizeof p);
    nnop_conv_transpose_params_init(&p);
    assert_int_equal(p.pad[0], 0);
    assert_int_equal(p.pad[1], 0);
    assert_int_equal(p.stride[0], 1);
    assert_int_equal(p.stride[1], 1);
    assert_int_equal(p.dilation[0], 1);
    assert_int_equal(p.dilation[1], 1);
    assert_int_equal(p.groups, 1);
    assert_int_equal(p.output_pad[0], 0);
    assert_int_equal(p.output_pad[1], 0);
    nnop_conv_transpose_params_init(NULL);
}

/* x (1x1x2x3) through conv, transposed conv (1x1 weights of 1), max pool and resize, each with
 * its init parameters alone: x again. */
static void test_init_params_build_identities(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 2, 3);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 1, 1);
    nnop_conv_params cp;
    nnop_pool_params pp;
    nnop_resize_params rp;
    nnop_conv_transpose_params tp;
    float one = 1.f, x[6] = {1.f, -2.f, 3.f, -4.f, 5.f, 6.5f}, y[6];
    const void *in[1] = {x};
    void *out[1] = {y};
    nnop_value v;
    int i;
    nnop_conv_params_init(&cp);
    nnop_pool_params_init(&pp);
    nnop_resize_params_init(&rp);
    nnop_conv_transpose_params_init(&tp);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &xd);
    v = nnop_conv(g, v, nnop_constant(g, "w", &wd, &one), &cp);
    v = nnop_conv_transpose(g, v, nnop_constant(g, "wt", &wd, &one), &tp);
    v = nnop_pool(g, v, NNOP_POOL_MAX, &pp);
    v = nnop_resize(g, v, &rp);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
    for (i = 0; i < 6; i++)
        assert_true(y[i] == x[i]);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conv_params_init),
            cmocka_unit_test(test_pool_params_init),
            cmocka_unit_test(test_resize_params_init),
            cmocka_unit_test(test_conv_transpose_params_init),
            cmocka_unit_test(test_init_params_build_identities),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
