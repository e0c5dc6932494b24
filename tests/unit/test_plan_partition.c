/* test_plan_partition.c: the structured partition query (issue 50): nnop_plan_partition gives
 * each partition's nodes, what runs it and its bytes, the node queries give each node's op
 * and name, together covering the plan's nodes once in order, agreeing with
 * nnop_plan_describe; bad arguments are refused with a message. */
#include <string.h>

#include "nnop_test.h"

enum { C = 2, K = 4, HW = 6, CLASSES = 3 };

/* conv 'c1' -> bias -> relu 'r1' -> max pool -> flatten -> linear 'fc' -> softmax */
static nnop_plan *small_net(nnop_context *ctx, int fuse)
{
    static float w[K * C * 3 * 3], b[K], fw[CLASSES * K * 9], fb[CLASSES];
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, C, HW, HW);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, K, C, 3, 3);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F32, K);
    nnop_tensor_desc fwd = nnop_tensor_2d(NNOP_F32, CLASSES, K * 9);
    nnop_tensor_desc fbd = nnop_tensor_1d(NNOP_F32, CLASSES);
    nnop_compile_options co;
    nnop_conv_params cp;
    nnop_pool_params pp;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_value v;
    nnop_test_fill_f32(w, K * C * 9, 1, -1.0f, 1.0f);
    nnop_test_fill_f32(fw, CLASSES * K * 9, 2, -1.0f, 1.0f);
    nnop_conv_params_init(&cp);
    cp.pad[0] = cp.pad[1] = 1;
    nnop_pool_params_init(&pp);
    pp.window[0] = pp.window[1] = pp.stride[0] = pp.stride[1] = 2;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &xd);
    assert_int_equal(nnop_graph_name_next(g, "c1"), NNOP_OK);
    v = nnop_conv(g, v, nnop_constant(g, "w", &wd, w), &cp);
    v = nnop_bias(g, v, nnop_constant(g, "b", &bd, b));
    assert_int_equal(nnop_graph_name_next(g, "r1"), NNOP_OK);
    v = nnop_act(g, v, NNOP_ACT_RELU, 0.0f);
    v = nnop_flatten(g, nnop_pool(g, v, NNOP_POOL_MAX, &pp));
    assert_int_equal(nnop_graph_name_next(g, "fc"), NNOP_OK);
    v = nnop_linear(g, v, nnop_constant(g, "fw", &fwd, fw), nnop_constant(g, "fb", &fbd, fb));
    assert_int_equal(nnop_output(g, nnop_softmax(g, v), "y"), NNOP_OK);
    nnop_compile_options_init(&co);
    co.fuse = fuse;
    assert_int_equal(nnop_graph_compile(g, &co, &p), NNOP_OK);
    nnop_graph_destroy(g);
    return p;
}

static void check_partitions(nnop_plan *p, int fuse)
{
    static const char *ops[] = {"conv", "bias", "act", "pool", "flatten", "linear", "softmax"};
    static const char *names[] = {"c1", "", "r1", "", "", "fc", ""};
    int n = nnop_plan_num_partitions(p), i, next = 0;
    char text[4096];
    assert_int_equal(nnop_plan_num_nodes(p), 7);
    for (i = 0; i < 7; i++) {
        assert_string_equal(nnop_plan_node_op(p, i), ops[i]);
        assert_string_equal(nnop_plan_node_name(p, i), names[i]);
    }
    assert_true(nnop_plan_describe(p, text, sizeof text) < sizeof text);
    assert_true(fuse ? n < 7 : n == 7);
    for (i = 0; i < n; i++) {
        nnop_partition_info info;
        int k;
        memset(&info, 0xAB, sizeof info);
        assert_int_equal(nnop_plan_partition(p, i, &info), NNOP_OK);
        assert_int_equal(info.first_node, next); /* in order, each node once */
        assert_true(info.num_nodes >= 1);
        next += info.num_nodes;
        assert_string_equal(info.impl, "reference");
        assert_true(info.engine == -1 && info.runtime_compiled == 0 && info.from_cache == 0);
        assert_int_equal(info.workspace, 0);
        assert_true(info.bytes_moved > 0);
        assert_non_null(info.reason);
        for (k = 0; k < 4; k++)
            assert_int_equal(info.reserved[k], 0);
        /* describe names the same first node of each partition */
        assert_non_null(strstr(text, nnop_plan_node_op(p, info.first_node)));
    }
    assert_int_equal(next, 7);
    /* the conv heads a fused partition that takes the bias and the named relu */
    if (fuse) {
        nnop_partition_info info;
        assert_int_equal(nnop_plan_partition(p, 0, &info), NNOP_OK);
        assert_true(info.num_nodes >= 3);
        assert_non_null(strstr(text, "conv[c1]+bias+act[r1]"));
    }
}

static void test_fused_and_unfused(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    int fuse;
    for (fuse = 0; fuse < 2; fuse++) {
        nnop_plan *p = small_net(ctx, fuse);
        check_partitions(p, fuse);
        nnop_plan_destroy(p);
    }
}

static void test_bad_arguments(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_plan *p = small_net(ctx, 1);
    nnop_partition_info info;
    int n = nnop_plan_num_partitions(p);
    assert_int_equal(nnop_plan_partition(NULL, 0, &info), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_partition(p, n, &info), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx, "nnop_plan_partition: partition index out of range");
    assert_int_equal(nnop_plan_partition(p, -1, &info), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_partition(p, 0, NULL), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx, "nnop_plan_partition: out is NULL");
    assert_null(nnop_plan_node_op(p, 7));
    assert_null(nnop_plan_node_name(p, -1));
    assert_null(nnop_plan_node_op(NULL, 0));
    assert_int_equal(nnop_plan_num_nodes(NULL), 0);
    nnop_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fused_and_unfused),
            cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
