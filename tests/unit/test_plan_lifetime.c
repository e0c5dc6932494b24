/* test_plan_lifetime.c: a plan outlives its graph: constants are consumed at compile (the
 * plan keeps no pointer into the graph's data), so destroying the graph first is fine. */
#include <string.h>

#include "nnop_test.h"

static nnop_graph *conv_graph(nnop_context *ctx, const float *w, const float *b)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 2, 3, 3);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 2, 2, 1, 1);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F32, 2);
    nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
    nnop_graph *g = NULL;
    nnop_value x, y;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    x = nnop_input(g, "x", &xd);
    y = nnop_conv(g, x, nnop_constant(g, "w", &wd, w), &p);
    y = nnop_bias(g, y, nnop_constant(g, "b", &bd, b));
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    return g;
}

static void test_plan_runs_after_its_graph_is_destroyed(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    /* w swaps the two channels and doubles the second: y0 = x1, y1 = 2 x0; bias 10, 20 */
    float w[4] = {0.0f, 1.0f, 2.0f, 0.0f}, b[2] = {10.0f, 20.0f};
    float x[18], y[18], want[18];
    nnop_graph *g = conv_graph(ctx, w, b);
    nnop_plan *plan = NULL;
    const void *in[1];
    void *out[1];
    int i;
    (void)state;
    for (i = 0; i < 9; i++) {
        x[2 * i] = (float)i;             /* channel 0 (NHWC: channels innermost) */
        x[2 * i + 1] = (float)(100 + i); /* channel 1 */
        want[2 * i] = (float)(100 + i) + 10.0f;
        want[2 * i + 1] = 2.0f * (float)i + 20.0f;
    }
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    memset(w, 0, sizeof w); /* the caller's arrays were copied by nnop_constant anyway */
    nnop_graph_destroy(g);  /* and now the graph's own copies are gone too */
    nnop_test_poison(y, sizeof y);
    in[0] = x;
    out[0] = y;
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
    for (i = 0; i < 18; i++)
        assert_float_equal(y[i], want[i], 0.0f);
    nnop_plan_destroy(plan);
    nnop_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_plan_runs_after_its_graph_is_destroyed),
    };
    return cmocka_run_group_tests_name("plan_lifetime", tests, NULL, NULL);
}
