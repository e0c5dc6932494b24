/* test_ops_mul.c: the elementwise binary ops nnop_mul, nnop_sub, nnop_div: same shape, and b
 * broadcast as N,C,1,1 (squeeze-excitation) and 1,C,1,1 (layer scale) over 4-D a; hand-computed
 * values, random odd shapes against a naive loop in every dtype and layout, and the errors. */
#include "op_test_util.h"

typedef enum bin_op { MUL, SUB, DIV } bin_op;

static nnop_value build_bin(nnop_graph *g, const nnop_value *in, const void *arg)
{
    bin_op op = *(const bin_op *)arg;
    return op == MUL   ? nnop_mul(g, in[0], in[1])
           : op == SUB ? nnop_sub(g, in[0], in[1])
                       : nnop_div(g, in[0], in[1]);
}

static nnop_status run_bin(nnop_context *ctx, bin_op op, const nnop_tensor_desc *ad, const float *a,
                           const nnop_tensor_desc *bd, const float *b, float *y, int64_t cap)
{
    nnop_tensor_desc d[2], yd;
    const float *x[2];
    nnop_status st;
    d[0] = *ad;
    d[1] = *bd;
    x[0] = a;
    x[1] = b;
    st = opt_run(ctx, 2, d, x, build_bin, &op, y, cap, &yd);
    if (st == NNOP_OK) {
        assert_int_equal(yd.ndim, ad->ndim);
        assert_memory_equal(yd.dims, ad->dims, sizeof yd.dims);
        assert_memory_equal(yd.strides, ad->strides, sizeof yd.strides);
    }
    return st;
}

/* a = [[1 2; 3 4], [5 6; 7 8]] (1 x 2 x 2 x 2), b per channel [10, -1]:
 * mul 10 20 30 40 -5 -6 -7 -8; sub -9 -8 -7 -6 6 7 8 9; div 0.1 0.2 0.3 0.4 -5 -6 -7 -8. */
static void test_mul_sub_div_per_channel_hand_computed(void **state)
{
    static const float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[2] = {10, -1};
    static const float want[3][8] = {{10, 20, 30, 40, -5, -6, -7, -8},
                                     {-9, -8, -7, -6, 6, 7, 8, 9},
                                     {0.1f, 0.2f, 0.3f, 0.4f, -5, -6, -7, -8}};
    int op, l;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc ad = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 2, 2, 2);
        nnop_tensor_desc bd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 2, 1, 1);
        for (op = MUL; op <= DIV; op++) {
            float y[8];
            assert_int_equal(run_bin((nnop_context *)*state, (bin_op)op, &ad, a, &bd, b, y, 8),
                             NNOP_OK);
            assert_memory_equal(y, want[op], sizeof y);
        }
    }
}

/* Squeeze-excitation: b is N,C,1,1, a different scale per sample and channel. */
static void test_mul_per_sample_and_channel_hand_computed(void **state)
{
    static const float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[4] = {2, 3, -1, 0.5f};
    static const float want[8] = {2, 4, 9, 12, -5, -6, 3.5f, 4};
    int l;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc ad = nnop_tensor_4d(NNOP_F32, opt_layout(l), 2, 2, 1, 2);
        nnop_tensor_desc bd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 2, 2, 1, 1);
        float y[8];
        assert_int_equal(run_bin((nnop_context *)*state, MUL, &ad, a, &bd, b, y, 8), NNOP_OK);
        assert_memory_equal(y, want, sizeof y);
    }
}

/* Same shape, any rank (here 2-D and 5-D), elementwise. */
static void test_mul_same_shape_any_rank(void **state)
{
    static const float a[6] = {1, -2, 3, 0.5f, 0, 7}, b[6] = {4, 5, -6, 8, 9, 0.25f};
    static const float want[6] = {4, -10, -18, 4, 0, 1.75f};
    nnop_tensor_desc d2 = nnop_tensor_2d(NNOP_F32, 2, 3), d5 = d2;
    float y[6];
    assert_int_equal(run_bin((nnop_context *)*state, MUL, &d2, a, &d2, b, y, 6), NNOP_OK);
    assert_memory_equal(y, want, sizeof y);
    d5.ndim = 5; /* 1 x 2 x 1 x 3 x 1 row-major */
    d5.dims[0] = 1, d5.dims[1] = 2, d5.dims[2] = 1, d5.dims[3] = 3, d5.dims[4] = 1;
    d5.strides[0] = 6, d5.strides[1] = 3, d5.strides[2] = 3, d5.strides[3] = 1, d5.strides[4] = 1;
    assert_int_equal(run_bin((nnop_context *)*state, MUL, &d5, a, &d5, b, y, 6), NNOP_OK);
    assert_memory_equal(y, want, sizeof y);
}

/* IEEE division as PyTorch's float tensors: x / 0 = +-inf, 0 / 0 = NaN. */
static void test_div_by_zero_is_ieee(void **state)
{
    static const float a[3] = {1, -2, 0}, b[3] = {0, 0, 0};
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 1, 3);
    float y[3];
    assert_int_equal(run_bin((nnop_context *)*state, DIV, &d, a, &d, b, y, 3), NNOP_OK);
    assert_true(isinf(y[0]) && y[0] > 0);
    assert_true(isinf(y[1]) && y[1] < 0);
    assert_true(isnan(y[2]));
}

/* Random odd shapes, every op, b form, dtype and layout, against a naive loop. */
static void test_binary_random_matches_naive(void **state)
{
    enum { N = 3, C = 5, H = 7, W = 3 };
    static float a[N * C * H * W], b[N * C * H * W], y[N * C * H * W];
    static double want[N * C * H * W];
    int op, form, t, l;
    uint64_t seed = 1500;
    for (t = 0; t < 3; t++)
        for (l = 0; l < 2; l++)
            for (form = 0; form < 3; form++) /* same shape, N,C,1,1, 1,C,1,1 */
                for (op = MUL; op <= DIV; op++) {
                    nnop_dtype dt = opt_dtype(t);
                    int64_t bn = form == 2 ? 1 : N, bhw = form == 0 ? 1 : 0;
                    nnop_tensor_desc ad = nnop_tensor_4d(dt, opt_layout(l), N, C, H, W);
                    nnop_tensor_desc bd = nnop_tensor_4d(dt, opt_layout(l), bn, C,
                                                         form == 0 ? H : 1, form == 0 ? W : 1);
                    int64_t n, c, h, w, i = 0;
                    char what[64];
                    opt_fill(dt, a, N * C * H * W, seed++, -4.0f, 4.0f);
                    opt_fill(dt, b, nnop_tensor_elements(&bd), seed++, 0.5f, 3.0f);
                    for (n = 0; n < N; n++)
                        for (c = 0; c < C; c++)
                            for (h = 0; h < H; h++)
                                for (w = 0; w < W; w++, i++) {
                                    double x = a[i];
                                    double z = b[bhw ? i : (form == 2 ? 0 : n) * C + c];
                                    want[i] = op == MUL ? x * z : op == SUB ? x - z : x / z;
                                }
                    assert_int_equal(run_bin((nnop_context *)*state, (bin_op)op, &ad, a, &bd, b, y,
                                             N * C * H * W),
                                     NNOP_OK);
                    snprintf(what, sizeof what, "op %d form %d dtype %d layout %d", op, form, t, l);
                    opt_assert_close(y, want, N * C * H * W, opt_tol(dt), what);
                }
}

/* The multiply is a pointwise epilogue: conv -> mul(layer scale) -> relu is one partition,
 * as the SE and layer-scale multiplies are meant to run in a conv's epilogue on the GPU. */
static void test_mul_fuses_as_an_epilogue(void **state)
{
    static const float w[4] = {1, 0, 0, 1}, s[2] = {2, -1}, x[2] = {3, 4};
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 2, 1, 1);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 2, 2, 1, 1);
    nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_value v;
    const void *in[1];
    void *out[1];
    float y[2];
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w), &p);
    v = nnop_act(g, nnop_mul(g, v, nnop_constant(g, "s", &xd, s)), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_partitions(plan), 1);
    in[0] = x;
    out[0] = y;
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
    assert_true(y[0] == 6.0f && y[1] == 0.0f);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* ------------------------------------------------------------------ errors */

static void expect_bin_error(nnop_context *ctx, bin_op op, const nnop_tensor_desc *ad,
                             const nnop_tensor_desc *bd, nnop_status st, const char *msg)
{
    static float zeros[64];
    float y[64];
    assert_int_equal(run_bin(ctx, op, ad, zeros, bd, zeros, y, 64), st);
    opt_assert_error(ctx, msg);
}

static void test_mul_rejects_shapes_that_do_not_broadcast(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc a = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 2, 3, 3);
    nnop_tensor_desc b = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 3, 1, 1);
    nnop_tensor_desc c1 = nnop_tensor_1d(NNOP_F32, 2);
    nnop_tensor_desc hw = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 2, 3, 1);
    expect_bin_error(
            ctx, MUL, &a, &b, NNOP_ERR_SHAPE,
            "NNOP_ERR_SHAPE: nnop_mul (node #0): b is [2,3,1,1] but must be a's shape [2,2,3,3] or "
            "broadcast as [2,2,1,1] or [1,2,1,1] (the broadcast operand goes second)");
    expect_bin_error(
            ctx, SUB, &a, &hw, NNOP_ERR_SHAPE,
            "NNOP_ERR_SHAPE: nnop_sub (node #0): b is [2,2,3,1] but must be a's shape [2,2,3,3] or "
            "broadcast as [2,2,1,1] or [1,2,1,1] (the broadcast operand goes second)");
    b = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 2, 1, 1);
    expect_bin_error(
            ctx, DIV, &b, &a, NNOP_ERR_SHAPE,
            "NNOP_ERR_SHAPE: nnop_div (node #0): b is [2,2,3,3] but must be a's shape [2,2,1,1] or "
            "broadcast as [2,2,1,1] or [1,2,1,1] (the broadcast operand goes second)");
    a = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 2, 3, 3); /* one sample: one broadcast shape */
    expect_bin_error(
            ctx, MUL, &a, &b, NNOP_ERR_SHAPE,
            "NNOP_ERR_SHAPE: nnop_mul (node #0): b is [2,2,1,1] but must be a's shape [1,2,3,3] or "
            "broadcast as [1,2,1,1] (the broadcast operand goes second)");
    expect_bin_error(ctx, MUL, &a, &c1, NNOP_ERR_SHAPE,
                     "NNOP_ERR_SHAPE: nnop_mul (node #0): operands have 4 and 1 dims (b must have "
                     "a's shape, or "
                     "N,C,1,1 or 1,C,1,1 with a 4-D)");
}

static void test_mul_rejects_2d_broadcast_layout_mix_and_dtype_mix(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc a2 = nnop_tensor_2d(NNOP_F32, 2, 3), b2 = nnop_tensor_2d(NNOP_F32, 1, 3);
    nnop_tensor_desc a = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 2, 3, 3);
    nnop_tensor_desc b = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 2, 3, 3);
    nnop_tensor_desc h = nnop_tensor_4d(NNOP_F16, NNOP_NCHW, 1, 2, 3, 3);
    expect_bin_error(
            ctx, MUL, &a2, &b2, NNOP_ERR_SHAPE,
            "NNOP_ERR_SHAPE: nnop_mul (node #0): operand shapes differ in dim 0: 2 vs 1 (only 4-D "
            "operands broadcast)");
    expect_bin_error(
            ctx, SUB, &a, &b, NNOP_ERR_SHAPE,
            "NNOP_ERR_SHAPE: nnop_sub (node #0): operand layouts differ (a is NCHW, b is NHWC)");
    expect_bin_error(ctx, DIV, &a, &h, NNOP_ERR_SHAPE,
                     "NNOP_ERR_SHAPE: nnop_div: dtype mix: input 0 is f32 but input 1 is f16");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_mul_sub_div_per_channel_hand_computed),
            cmocka_unit_test(test_mul_per_sample_and_channel_hand_computed),
            cmocka_unit_test(test_mul_same_shape_any_rank),
            cmocka_unit_test(test_div_by_zero_is_ieee),
            cmocka_unit_test(test_binary_random_matches_naive),
            cmocka_unit_test(test_mul_fuses_as_an_epilogue),
            cmocka_unit_test(test_mul_rejects_shapes_that_do_not_broadcast),
            cmocka_unit_test(test_mul_rejects_2d_broadcast_layout_mix_and_dtype_mix),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
