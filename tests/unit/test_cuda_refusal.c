/* test_cuda_refusal.c: without a GPU, the CUDA backend's plan build is called on a plan of each
 * issue-15 op (compiled on the CPU): it refuses with NNOP_ERR_UNSUPPORTED and the op's name
 * before touching anything CUDA (tests/gpu/test_gpu_new_ops.c checks the same through
 * nnop_graph_compile on a GPU). */
#include "new_ops_graphs.h"

#include "internal.h"

#ifdef NNOP_HAVE_CUDA
static void test_cuda_build_refuses_new_ops_by_name(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    int op;
    for (op = 0; op < OP_COUNT; op++) {
        nnop_graph *g = new_op_graph(ctx, op);
        nnop_plan *plan = NULL;
        char want[256];
        assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
        assert_int_equal(nnop__cuda_plan_build(plan), NNOP_ERR_UNSUPPORTED);
        assert_null(plan->cuda);
        new_op_refusal(op, want, sizeof want);
        assert_string_equal(nnop_context_last_error(ctx), want);
        nnop_plan_destroy(plan);
        nnop_graph_destroy(g);
    }
}
#else
static void test_cuda_build_refuses_new_ops_by_name(void **state)
{
    (void)state;
    skip(); /* built without CUDA: there is no CUDA backend to refuse anything */
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cuda_build_refuses_new_ops_by_name),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
