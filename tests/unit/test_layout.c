/* test_layout.c: every value's layout follows the graph's, also where a dim of 1 makes NCHW
 * and NHWC strides coincide; the weights' layout rule; NaN through ReLU, ReLU6 and clamp as
 * in PyTorch (issue 10). CPU backend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

static nnop_context *ctx_;

static int setup(void **state)
{
    (void)state;
    ctx_ = nnop_test_cpu_context();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    nnop_context_destroy(ctx_);
    return 0;
}

static nnop_value const_4d(nnop_graph *g, nnop_layout l, int64_t n, int64_t c, int64_t h, int64_t w,
                           uint64_t seed)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, l, n, c, h, w);
    float *logical = (float *)malloc(nnop_tensor_bytes(&d));
    float *data = (float *)malloc(nnop_tensor_bytes(&d));
    nnop_value v;
    assert_non_null(logical);
    assert_non_null(data);
    nnop_test_fill_f32(logical, nnop_tensor_elements(&d), seed, -1.0f, 1.0f);
    nnop_test_pack(&d, logical, data); /* the same logical weights in either layout */
    v = nnop_constant(g, "w", &d, data);
    free(logical);
    free(data);
    return v;
}

static void assert_strides_of(nnop_graph *g, nnop_value v, nnop_layout l)
{
    nnop_tensor_desc got, want;
    int i;
    assert_int_equal(nnop_value_desc(g, v, &got), NNOP_OK);
    want = nnop_tensor_4d(got.dtype, l, got.dims[0], got.dims[1], got.dims[2], got.dims[3]);
    for (i = 0; i < 4; i++)
        if (got.strides[i] != want.strides[i])
            fail_msg("strides[%d] = %lld, want %lld (%s)", i, (long long)got.strides[i],
                     (long long)want.strides[i], l == NNOP_NHWC ? "NHWC" : "NCHW");
}

/* x -> conv K1 -> GAP (N x 1 x 1 x 1, no layout of its own) -> conv K6 3x3 p2 (3x3) + z. */
static nnop_graph *n111_graph(nnop_layout l, nnop_value *y)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, l, 2, 5, 4, 4);
    nnop_tensor_desc zd = nnop_tensor_4d(NNOP_F32, l, 2, 6, 3, 3);
    nnop_conv_params p1 = {{1, 1}, {1, 1}, {1, 1}, 1}, p2 = {{2, 2}, {1, 1}, {1, 1}, 1};
    nnop_value x, v;
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    x = nnop_input(g, "x", &xd);
    v = nnop_global_avg_pool(g, nnop_conv(g, x, const_4d(g, l, 1, 5, 3, 3, 1), &p1));
    v = nnop_conv(g, v, const_4d(g, l, 6, 1, 3, 3, 2), &p2);
    *y = nnop_add(g, v, nnop_input(g, "z", &zd));
    assert_int_equal(nnop_graph_status(g), NNOP_OK);
    assert_int_equal(nnop_output(g, *y, "y"), NNOP_OK);
    return g;
}

static void test_n111_value_keeps_the_graph_layout(void **state)
{
    nnop_value y;
    nnop_graph *g = n111_graph(NNOP_NHWC, &y);
    (void)state;
    assert_strides_of(g, y, NNOP_NHWC);
    nnop_graph_destroy(g);
    g = n111_graph(NNOP_NCHW, &y);
    assert_strides_of(g, y, NNOP_NCHW);
    nnop_graph_destroy(g);
}

/* Only N x 1 x 1 x 1 leaves at first: a conv grows the value to 1 x 4 x 1 x 3 (NCHW by
 * assumption); an NHWC input added to it later states the layout, and the earlier result
 * follows it: the add is accepted and the output is NHWC. Without a stated one, NCHW. */
static void test_results_follow_a_later_stated_layout(void **state)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 1, 1, 1);
    nnop_tensor_desc zd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 4, 1, 3);
    nnop_conv_params p = {{0, 1}, {1, 1}, {1, 1}, 1};
    nnop_value v, y;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    v = nnop_conv(g, nnop_input(g, "x", &xd), const_4d(g, NNOP_NHWC, 4, 1, 1, 1, 5), &p);
    assert_strides_of(g, v, NNOP_NCHW);
    y = nnop_add(g, v, nnop_input(g, "z", &zd));
    assert_int_equal(nnop_graph_status(g), NNOP_OK);
    assert_strides_of(g, v, NNOP_NHWC);
    assert_strides_of(g, y, NNOP_NHWC);
    nnop_graph_destroy(g);
}

/* The same graph in both layouts computes the same logical values. */
static void run_logical(nnop_layout l, const float *x, const float *z, float *y)
{
    nnop_value v;
    nnop_graph *g = n111_graph(l, &v);
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, l, 2, 5, 4, 4);
    nnop_tensor_desc zd = nnop_tensor_4d(NNOP_F32, l, 2, 6, 3, 3);
    nnop_tensor_desc yd;
    float xb[160], zb[108], yb[108];
    const void *in[2];
    void *out[1];
    nnop_plan *plan = NULL;
    assert_int_equal(nnop_value_desc(g, v, &yd), NNOP_OK);
    nnop_test_pack(&xd, x, xb);
    nnop_test_pack(&zd, z, zb);
    in[0] = xb, in[1] = zb, out[0] = yb;
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
    nnop_test_unpack(&yd, yb, y);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

static void test_n111_graph_same_values_in_both_layouts(void **state)
{
    float x[160], z[108], y1[108], y2[108];
    (void)state;
    nnop_test_fill_f32(x, 160, 3, -1.0f, 1.0f);
    nnop_test_fill_f32(z, 108, 4, -1.0f, 1.0f);
    run_logical(NNOP_NCHW, x, z, y1);
    run_logical(NNOP_NHWC, x, z, y2);
    nnop_test_assert_floats(y2, y1, 108, 1e-5);
}

static void test_weights_in_another_layout_are_refused(void **state)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 1, 3, 5, 5);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NCHW, 4, 3, 3, 3);
    uint16_t w[108];
    nnop_value v;
    (void)state;
    memset(w, 0x3c, sizeof w);
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    v = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w), &p);
    assert_true(v.id < 0);
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_SHAPE);
    NNOP_TEST_ASSERT_ERROR(ctx_, "w must be packed in x's layout (x is NHWC, w is NCHW)");
    nnop_graph_destroy(g);
}

/* Depthwise weights (C/groups = 1) have offsets alike in both layouts: accepted either way. */
static void test_depthwise_weights_fit_both_layouts(void **state)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 4, 5, 5);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 4};
    (void)state;
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    assert_true(
            nnop_conv(g, nnop_input(g, "x", &xd), const_4d(g, NNOP_NCHW, 4, 1, 3, 3, 5), &p).id >=
            0);
    nnop_graph_destroy(g);
}

static void run_act(nnop_act_kind kind, float lo, float hi, const float *x, float *y, int n)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 1, n);
    nnop_value v;
    const void *in[1];
    void *out[1];
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    v = nnop_input(g, "x", &d);
    v = kind == NNOP_ACT_CLAMP ? nnop_clamp(g, v, lo, hi) : nnop_act(g, v, kind, 0.1f);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    in[0] = x, out[0] = y;
    assert_int_equal(nnop_test_run_graph(g, NULL, in, out), NNOP_OK);
    nnop_graph_destroy(g);
}

static void test_nan_propagates_through_relu_family(void **state)
{
    static const nnop_act_kind kinds[] = {NNOP_ACT_RELU, NNOP_ACT_RELU6, NNOP_ACT_CLAMP,
                                          NNOP_ACT_LEAKY_RELU, NNOP_ACT_ELU};
    float x[4], y[4];
    size_t k;
    (void)state;
    x[0] = NAN, x[1] = -2.0f, x[2] = 7.0f, x[3] = -NAN;
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        run_act(kinds[k], -1.0f, 1.0f, x, y, 4);
        if (!isnan(y[0]) || !isnan(y[3]))
            fail_msg("activation %d turned NaN into %g / %g", (int)kinds[k], (double)y[0],
                     (double)y[3]);
        assert_false(isnan(y[1]));
        assert_false(isnan(y[2]));
    }
}

/* Issue 43: a 1x1x1x1 NHWC input and a conv K2 1x1 pad (1,0) (weights 2x1x1x1): nothing in
 * the graph can state NHWC, so the output is NCHW unless the graph's layout is declared;
 * declared before or after the builders, it is NHWC [6,1,2,2] with the values of the NCHW run
 * in NHWC order. */
static nnop_graph *degenerate_graph(int declare, nnop_value *y)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 1, 1, 1);
    nnop_conv_params p = {{1, 0}, {1, 1}, {1, 1}, 1};
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    if (declare == 1)
        assert_int_equal(nnop_graph_set_layout(g, NNOP_NHWC), NNOP_OK);
    *y = nnop_conv(g, nnop_input(g, "x", &xd), const_4d(g, NNOP_NHWC, 2, 1, 1, 1, 43), &p);
    assert_int_equal(nnop_output(g, *y, "y"), NNOP_OK);
    if (declare == 2)
        assert_int_equal(nnop_graph_set_layout(g, NNOP_NHWC), NNOP_OK);
    return g;
}

static void run_degenerate(nnop_graph *g, float *y_logical)
{
    float x = 0.75f, y[6];
    const void *in[1] = {&x};
    void *out[1] = {y};
    nnop_plan *p = NULL;
    nnop_tensor_desc yd;
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    assert_int_equal(nnop_plan_output_desc(p, 0, &yd), NNOP_OK);
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    nnop_test_unpack(&yd, y, y_logical);
    nnop_plan_destroy(p);
}

static void test_degenerate_graph_declares_its_layout(void **state)
{
    nnop_value y;
    float plain[6], declared[6];
    int declare, i;
    nnop_graph *g = degenerate_graph(0, &y);
    (void)state;
    assert_strides_of(g, y, NNOP_NCHW); /* nnop.h: undeclared, nothing states one */
    run_degenerate(g, plain);
    nnop_graph_destroy(g);
    for (declare = 1; declare <= 2; declare++) {
        g = degenerate_graph(declare, &y);
        assert_strides_of(g, y, NNOP_NHWC);
        run_degenerate(g, declared);
        for (i = 0; i < 6; i++)
            assert_true(plain[i] == declared[i] && !isnan(plain[i]));
        nnop_graph_destroy(g);
    }
}

static void test_set_layout_refuses_a_conflict(void **state)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, 4, 4);
    (void)state;
    assert_int_equal(nnop_graph_set_layout(NULL, NNOP_NHWC), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    assert_int_equal(nnop_graph_set_layout(g, (nnop_layout)7), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(ctx_), "neither NNOP_NCHW nor NNOP_NHWC"));
    nnop_input(g, "x", &xd);
    assert_int_equal(nnop_graph_set_layout(g, NNOP_NHWC), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(ctx_), "NCHW already"));
    assert_int_equal(nnop_graph_status(g), NNOP_OK); /* not sticky */
    assert_int_equal(nnop_graph_set_layout(g, NNOP_NCHW), NNOP_OK);
    nnop_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_n111_value_keeps_the_graph_layout),
            cmocka_unit_test(test_n111_graph_same_values_in_both_layouts),
            cmocka_unit_test(test_results_follow_a_later_stated_layout),
            cmocka_unit_test(test_weights_in_another_layout_are_refused),
            cmocka_unit_test(test_depthwise_weights_fit_both_layouts),
            cmocka_unit_test(test_nan_propagates_through_relu_family),
            cmocka_unit_test(test_degenerate_graph_declares_its_layout),
            cmocka_unit_test(test_set_layout_refuses_a_conflict),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
