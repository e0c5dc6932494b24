/* test_partition.c: the partitioner: what fuses (producer + epilogue chain, standalone
 * pointwise chains), where it stops and why (multiple consumers, graph outputs, standalone
 * ops, chain limit, fusion disabled), and the least each partition moves. CPU only. */
#include <string.h>

#include "nnop_test.h"
#include "internal.h"

static nnop_tensor_desc xd16(void)
{
    return nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 8, 8, 8);
}

static nnop_value conv(nnop_graph *g, nnop_value x)
{
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 8, 8, 3, 3);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    return nnop_conv(g, x, nnop_input(g, "w", &wd), &p);
}

static nnop_plan *compile(nnop_graph *g, int fuse)
{
    nnop_compile_options o;
    nnop_plan *p = NULL;
    nnop_compile_options_init(&o);
    o.fuse = fuse;
    assert_int_equal(nnop_graph_compile(g, &o, &p), NNOP_OK);
    return p;
}

/* "conv+bias+act|pool|..." from the plan's partitions. */
static void shape(const nnop_plan *p, char *buf, size_t len)
{
    int32_t i, k;
    buf[0] = '\0';
    for (i = 0; i < p->n_parts; i++) {
        if (i)
            strncat(buf, "|", len - strlen(buf) - 1);
        for (k = 0; k < p->parts[i].count; k++) {
            if (k)
                strncat(buf, "+", len - strlen(buf) - 1);
            strncat(buf, nnop__op(p->g->nodes[p->parts[i].first + k].op)->name,
                    len - strlen(buf) - 1);
        }
    }
}

static void test_partition_conv_bias_relu_is_one_partition(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = xd16(), bd = nnop_tensor_1d(NNOP_F16, 8);
    nnop_plan *p;
    char s[256];
    nnop_value y;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    y = conv(g, nnop_input(g, "x", &xd));
    y = nnop_act(g, nnop_bias(g, y, nnop_input(g, "b", &bd)), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    p = compile(g, 1);
    shape(p, s, sizeof s);
    assert_string_equal(s, "conv+bias+act");
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

static void test_partition_stops_at_graph_output_and_shared_value(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = xd16();
    nnop_plan *p;
    char s[256];
    nnop_value c, r;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    c = conv(g, nnop_input(g, "x", &xd));
    r = nnop_act(g, c, NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, c, "c"), NNOP_OK); /* conv output is a graph output */
    assert_int_equal(nnop_output(g, r, "r"), NNOP_OK);
    p = compile(g, 1);
    shape(p, s, sizeof s);
    assert_string_equal(s, "conv|act");
    assert_non_null(strstr(p->parts[0].reason, "graph output"));
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

static void test_partition_residual_network_shape(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = xd16(), kd = nnop_tensor_1d(NNOP_F16, 8);
    nnop_tensor_desc fd = nnop_tensor_2d(NNOP_F16, 10, 8), cd = nnop_tensor_1d(NNOP_F16, 10);
    nnop_pool_params pp = {{2, 2}, {2, 2}, {0, 0}, 0, {0, 0}};
    nnop_plan *p;
    char s[256];
    nnop_value y, skip;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    y = conv(g, nnop_input(g, "x", &xd));
    y = nnop_batchnorm(g, y, nnop_input(g, "g", &kd), nnop_input(g, "b", &kd),
                       nnop_input(g, "m", &kd), nnop_input(g, "v", &kd), 1e-5f);
    y = nnop_act(g, y, NNOP_ACT_RELU, 0.0f);
    skip = nnop_pool(g, y, NNOP_POOL_MAX, &pp);
    y = nnop_bias(g, conv(g, skip), nnop_input(g, "b2", &kd));
    y = nnop_act(g, nnop_add(g, y, skip), NNOP_ACT_RELU, 0.0f);
    y = nnop_flatten(g, nnop_global_avg_pool(g, y));
    y = nnop_softmax(g, nnop_linear(g, y, nnop_input(g, "fc", &fd), nnop_input(g, "fcb", &cd)));
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    p = compile(g, 1);
    shape(p, s, sizeof s);
    assert_string_equal(s, "conv+batchnorm+act|pool|conv+bias+add+act|global_avg_pool|flatten|"
                           "linear|softmax");
    assert_non_null(strstr(p->parts[0].reason, "pool"));
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

/* Two branches built one after the other: branch a's conv output is read by the add that
 * joins branch b, so the split reason names that reader and the node built between, not
 * "next op conv" (an outside user was misled by it). */
static void test_partition_reason_names_the_reader_across_a_branch(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = xd16();
    nnop_plan *p;
    char s[256];
    nnop_value x, a, b;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    x = nnop_input(g, "x", &xd);
    a = conv(g, x);                                                    /* node 0 */
    b = nnop_act(g, conv(g, x), NNOP_ACT_RELU, 0.0f);                  /* nodes 1, 2 */
    assert_int_equal(nnop_output(g, nnop_add(g, a, b), "y"), NNOP_OK); /* node 3 */
    p = compile(g, 1);
    shape(p, s, sizeof s);
    assert_string_equal(s, "conv|conv+act+add");
    assert_string_equal(p->parts[0].reason, "its reader, node #3 (add), is not next in build "
                                            "order (node #1 (conv) comes between)");
    assert_string_equal(p->parts[1].reason, "end of graph");
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

/* A value read as an operand (here the bias of a bias node) is not a chain's data. */
static void test_partition_reason_for_a_value_read_as_an_operand(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc vd = nnop_tensor_1d(NNOP_F16, 8);
    nnop_plan *p;
    nnop_value b;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    b = nnop_act(g, nnop_input(g, "b", &vd), NNOP_ACT_TANH, 0.0f);
    {
        nnop_tensor_desc x2 = nnop_tensor_2d(NNOP_F16, 3, 8);
        assert_int_equal(nnop_output(g, nnop_bias(g, nnop_input(g, "x", &x2), b), "y"), NNOP_OK);
    }
    p = compile(g, 1);
    assert_int_equal(p->n_parts, 2);
    assert_string_equal(p->parts[0].reason,
                        "next op bias reads this output as an operand, not as its data");
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

static void test_partition_fuse_off_gives_one_per_node(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = xd16();
    nnop_plan *p;
    nnop_value y;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    y = nnop_act(g, conv(g, nnop_input(g, "x", &xd)), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    p = compile(g, 0);
    assert_int_equal(p->n_parts, 2);
    assert_string_equal(p->parts[1].reason, "fusion disabled");
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

static void test_partition_standalone_pointwise_chain_fuses(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = xd16(), kd = nnop_tensor_1d(NNOP_F16, 8);
    nnop_plan *p;
    char s[256];
    nnop_value y;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    y = nnop_add(g, nnop_input(g, "a", &xd), nnop_input(g, "b", &xd));
    y = nnop_act(g, nnop_bias(g, y, nnop_input(g, "c", &kd)), NNOP_ACT_SILU, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    p = compile(g, 1);
    shape(p, s, sizeof s);
    assert_string_equal(s, "add+bias+act");
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

static void test_partition_chain_limit(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = xd16();
    nnop_plan *p;
    nnop_value y;
    int i;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    y = conv(g, nnop_input(g, "x", &xd));
    for (i = 0; i < 10; i++)
        y = nnop_act(g, y, NNOP_ACT_TANH, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    p = compile(g, 1);
    assert_int_equal(p->n_parts, 2);
    assert_int_equal(p->parts[0].count, 8);
    assert_int_equal(p->parts[1].count, 3);
    assert_non_null(strstr(p->parts[0].reason, "chain limit"));
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

/* The least each partition moves (NNOP_LOG's bytes): what it reads from outside and what it
 * writes for use outside, each value once; a fused intermediate moves nothing. */
static void test_partition_bytes_moved(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = xd16(), bd = nnop_tensor_1d(NNOP_F16, 8);
    nnop_plan *p;
    char s[256];
    nnop_value x, t, y;
    const int64_t act = 2 * 8 * 8 * 8 * 2, w = 8 * 8 * 3 * 3 * 2;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    x = nnop_input(g, "x", &xd);
    t = nnop_act(g, nnop_bias(g, conv(g, x), nnop_input(g, "b", &bd)), NNOP_ACT_RELU, 0.0f);
    y = nnop_act(g, nnop_add(g, conv(g, t), x), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, nnop_add(g, y, y), "z"), NNOP_OK);
    p = compile(g, 1);
    shape(p, s, sizeof s);
    assert_string_equal(s, "conv+bias+act|conv+add+act|add");
    assert_int_equal(nnop__partition_bytes(p->g, &p->parts[0]), act + w + 16 + act);
    assert_int_equal(nnop__partition_bytes(p->g, &p->parts[1]), act + w + act + act);
    assert_int_equal(nnop__partition_bytes(p->g, &p->parts[2]), act + act); /* y read once */
    nnop_plan_destroy(p);
    p = compile(g, 0); /* the conv's result now leaves its partition */
    assert_int_equal(nnop__partition_bytes(p->g, &p->parts[0]), act + w + act);
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_partition_conv_bias_relu_is_one_partition),
            cmocka_unit_test(test_partition_stops_at_graph_output_and_shared_value),
            cmocka_unit_test(test_partition_residual_network_shape),
            cmocka_unit_test(test_partition_reason_names_the_reader_across_a_branch),
            cmocka_unit_test(test_partition_reason_for_a_value_read_as_an_operand),
            cmocka_unit_test(test_partition_fuse_off_gives_one_per_node),
            cmocka_unit_test(test_partition_standalone_pointwise_chain_fuses),
            cmocka_unit_test(test_partition_chain_limit),
            cmocka_unit_test(test_partition_bytes_moved),
    };
    return cmocka_run_group_tests_name("partition", tests, NULL, NULL);
}
