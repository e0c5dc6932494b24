/* test_gpu_new_ops.c: the ops of issue 15 have no CUDA path yet: a graph with any of them fails
 * to compile on the CUDA backend with NNOP_ERR_UNSUPPORTED and a message naming the node and
 * the op, leaving *plan NULL; the same graph compiles on the CPU backend. A graph of the older
 * ops still compiles on the GPU. */
#include "new_ops_graphs.h"

static void test_new_ops_refused_on_cuda_with_the_op_named(void **state)
{
    nnop_context_options o;
    nnop_context *gpu = NULL, *cpu;
    int op;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    cpu = nnop_test_cpu_context(); /* after the skip, which returns at once */
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    assert_int_equal(nnop_context_create(&o, &gpu), NNOP_OK);
    for (op = 0; op < OP_COUNT; op++) {
        nnop_graph *g = new_op_graph(gpu, op), *gc = new_op_graph(cpu, op);
        unsigned char junk[16];
        nnop_plan *plan = (nnop_plan *)(void *)junk; /* must be reset to NULL */
        char want[256];
        assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_ERR_UNSUPPORTED);
        assert_null(plan);
        new_op_refusal(op, want, sizeof want);
        assert_string_equal(nnop_context_last_error(gpu), want);
        assert_int_equal(nnop_graph_compile(gc, NULL, &plan), NNOP_OK);
        nnop_plan_destroy(plan);
        nnop_graph_destroy(g);
        nnop_graph_destroy(gc);
    }
    nnop_context_destroy(gpu);
    nnop_context_destroy(cpu);
}

/* The refusal looks at the new op kinds only: conv + bias + relu6 still compiles. */
static void test_older_ops_still_compile_on_cuda(void **state)
{
    static const float zeros[512];
    nnop_context_options o;
    nnop_context *gpu = NULL;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 8, 6, 6);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 8, 8, 3, 3);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F16, 8);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_value v;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    assert_int_equal(nnop_context_create(&o, &gpu), NNOP_OK);
    assert_int_equal(nnop_graph_create(gpu, &g), NNOP_OK);
    v = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, zeros), &p);
    v = nnop_act(g, nnop_bias(g, v, nnop_constant(g, "b", &bd, zeros)), NNOP_ACT_RELU6, 0.0f);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
    nnop_context_destroy(gpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_new_ops_refused_on_cuda_with_the_op_named),
            cmocka_unit_test(test_older_ops_still_compile_on_cuda),
    };
    return nnop_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL),
                               sizeof tests / sizeof tests[0]);
}
