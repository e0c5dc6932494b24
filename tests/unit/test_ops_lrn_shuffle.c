/* test_ops_lrn_shuffle.c: nnop_lrn (ONNX's LRN: the window c - floor((size-1)/2) ..
 * c + ceil((size-1)/2), alpha / size), nnop_channel_shuffle (nn.ChannelShuffle) and
 * nnop_channel_slice (x[:, a:b]): values
 * worked out by hand from the definitions, random odd shapes against naive implementations in
 * every dtype and layout, and the errors. */
#include "op_test_util.h"

typedef struct lrn_args {
    int64_t size;
    float alpha, beta, bias;
} lrn_args;

static nnop_value build_lrn(nnop_graph *g, const nnop_value *in, const void *arg)
{
    const lrn_args *a = (const lrn_args *)arg;
    return nnop_lrn(g, in[0], a->size, a->alpha, a->beta, a->bias);
}

static nnop_value build_shuffle(nnop_graph *g, const nnop_value *in, const void *arg)
{
    return nnop_channel_shuffle(g, in[0], *(const int64_t *)arg);
}

/* The definition, written per output element with the window's ends as ONNX states them. */
static void naive_lrn(const lrn_args *a, const float *x, int64_t n, int64_t c, int64_t hw,
                      double *y)
{
    int64_t i, k, p, j;
    for (i = 0; i < n; i++)
        for (k = 0; k < c; k++)
            for (p = 0; p < hw; p++) {
                double s = 0.0;
                for (j = k - (int64_t)floor((a->size - 1) / 2.0);
                     j <= k + (int64_t)ceil((a->size - 1) / 2.0); j++)
                    if (j >= 0 && j < c)
                        s += (double)x[(i * c + j) * hw + p] * x[(i * c + j) * hw + p];
                y[(i * c + k) * hw + p] = x[(i * c + k) * hw + p] /
                                          pow(a->bias + a->alpha / (double)a->size * s, a->beta);
            }
}

/* C = 4 values 1, 2, 3, 4 at one position, size 3, alpha 3, beta 1, bias 1: the window sums
 * of squares are 5, 14, 29, 25, so y = x / (1 + s): 1/6, 2/15, 3/30, 4/26. */
static void test_lrn_known_values(void **state)
{
    static const float x[4] = {1, 2, 3, 4};
    static const double want[4] = {1.0 / 6, 2.0 / 15, 3.0 / 30, 4.0 / 26};
    lrn_args a = {3, 3.0f, 1.0f, 1.0f};
    int l;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 4, 1, 1), yd;
        const float *xs[1] = {x};
        float y[4];
        assert_int_equal(opt_run((nnop_context *)*state, 1, &xd, xs, build_lrn, &a, y, 4, &yd),
                         NNOP_OK);
        opt_assert_close(y, want, 4, 1e-6, "lrn size 3");
    }
}

/* Even size 2: ONNX's window is c .. c + 1 (PyTorch's would be c - 1 .. c). */
static void test_lrn_even_window_is_onnx_s(void **state)
{
    static const float x[3] = {1, 2, 3};
    static const double want[3] = {1.0 / 6, 2.0 / 14, 3.0 / 10}; /* s = 5, 13, 9; alpha/size 1 */
    lrn_args a = {2, 2.0f, 1.0f, 1.0f};
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 1, 3), yd;
    const float *xs[1] = {x};
    float y[3];
    assert_int_equal(opt_run((nnop_context *)*state, 1, &xd, xs, build_lrn, &a, y, 3, &yd),
                     NNOP_OK);
    opt_assert_close(y, want, 3, 1e-6, "lrn size 2");
}

static void test_lrn_random_matches_naive(void **state)
{
    enum { N = 2, C = 7, H = 3, W = 5 };
    static const lrn_args args[4] = {{5, 1e-4f, 0.75f, 1.0f},
                                     {3, 0.5f, 0.6f, 2.0f},
                                     {1, 1.0f, 1.0f, 1.0f},
                                     {9, 2.0f, 1.5f, 0.5f}};
    float x[N * C * H * W], y[N * C * H * W];
    double want[N * C * H * W];
    uint64_t seed = 1;
    int k, t, l;
    for (k = 0; k < 4; k++)
        for (t = 0; t < 3; t++)
            for (l = 0; l < 2; l++) {
                nnop_dtype dt = opt_dtype(t);
                nnop_tensor_desc xd = nnop_tensor_4d(dt, opt_layout(l), N, C, H, W), yd;
                const float *xs[1] = {x};
                char what[64];
                opt_fill(dt, x, N * C * H * W, seed++, -3.0f, 3.0f);
                assert_int_equal(opt_run((nnop_context *)*state, 1, &xd, xs, build_lrn, &args[k], y,
                                         N * C * H * W, &yd),
                                 NNOP_OK);
                naive_lrn(&args[k], x, N, C, H * W, want);
                snprintf(what, sizeof what, "lrn %d dtype %d layout %d", k, t, l);
                opt_assert_close(y, want, N * C * H * W, opt_tol(dt), what);
            }
}

/* 6 channels in 2 groups: 0 1 2 | 3 4 5 becomes 0 3 1 4 2 5; 3 groups: 0 2 4 1 3 5. */
static void test_shuffle_known_order(void **state)
{
    static const float x[6] = {0, 1, 2, 3, 4, 5};
    static const double want2[6] = {0, 3, 1, 4, 2, 5}, want3[6] = {0, 2, 4, 1, 3, 5};
    static const double want1[6] = {0, 1, 2, 3, 4, 5};
    int64_t g2 = 2, g3 = 3, g1 = 1, g6 = 6;
    int l;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 6, 1, 1), yd;
        const float *xs[1] = {x};
        float y[6];
        nnop_context *ctx = (nnop_context *)*state;
        assert_int_equal(opt_run(ctx, 1, &xd, xs, build_shuffle, &g2, y, 6, &yd), NNOP_OK);
        opt_assert_close(y, want2, 6, 0.0, "2 groups");
        assert_int_equal(opt_run(ctx, 1, &xd, xs, build_shuffle, &g3, y, 6, &yd), NNOP_OK);
        opt_assert_close(y, want3, 6, 0.0, "3 groups");
        assert_int_equal(opt_run(ctx, 1, &xd, xs, build_shuffle, &g1, y, 6, &yd), NNOP_OK);
        opt_assert_close(y, want1, 6, 0.0, "1 group");
        assert_int_equal(opt_run(ctx, 1, &xd, xs, build_shuffle, &g6, y, 6, &yd), NNOP_OK);
        opt_assert_close(y, want1, 6, 0.0, "C groups");
    }
}

/* torch's reshape(N, g, C/g, H, W).transpose(1, 2).reshape(N, C, H, W), written as indices */
static void test_shuffle_random_matches_naive(void **state)
{
    enum { N = 2, C = 12, H = 3, W = 5 };
    static const int64_t groups[3] = {2, 3, 4};
    float x[N * C * H * W], y[N * C * H * W];
    double want[N * C * H * W];
    uint64_t seed = 100;
    int k, t, l;
    for (k = 0; k < 3; k++)
        for (t = 0; t < 3; t++)
            for (l = 0; l < 2; l++) {
                nnop_dtype dt = opt_dtype(t);
                nnop_tensor_desc xd = nnop_tensor_4d(dt, opt_layout(l), N, C, H, W), yd;
                const float *xs[1] = {x};
                int64_t n, gi, j, p, per = C / groups[k];
                opt_fill(dt, x, N * C * H * W, seed++, -3.0f, 3.0f);
                assert_int_equal(opt_run((nnop_context *)*state, 1, &xd, xs, build_shuffle,
                                         &groups[k], y, N * C * H * W, &yd),
                                 NNOP_OK);
                assert_int_equal(yd.strides[1], l == 0 ? H * W : 1); /* x's layout kept */
                for (n = 0; n < N; n++)
                    for (gi = 0; gi < groups[k]; gi++)
                        for (j = 0; j < per; j++)
                            for (p = 0; p < H * W; p++)
                                want[((n * per + j) * groups[k] + gi) * H * W + p] =
                                        x[((n * groups[k] + gi) * per + j) * H * W + p];
                opt_assert_close(y, want, N * C * H * W, 0.0, "shuffle");
            }
}

static nnop_value build_slice(nnop_graph *g, const nnop_value *in, const void *arg)
{
    const int64_t *a = (const int64_t *)arg;
    return nnop_channel_slice(g, in[0], a[0], a[1]);
}

/* x[:, start:start + count] of 2 x 7 x 3 x 5 in every dtype and layout: first, middle, last */
static void test_slice_matches_indexing(void **state)
{
    enum { N = 2, C = 7, H = 3, W = 5 };
    static const int64_t args[3][2] = {{0, 3}, {2, 4}, {6, 1}};
    float x[N * C * H * W], y[N * C * H * W];
    double want[N * C * H * W];
    int k, t, l;
    for (k = 0; k < 3; k++)
        for (t = 0; t < 3; t++)
            for (l = 0; l < 2; l++) {
                nnop_dtype dt = opt_dtype(t);
                nnop_tensor_desc xd = nnop_tensor_4d(dt, opt_layout(l), N, C, H, W), yd;
                const float *xs[1] = {x};
                int64_t n, c, p, cnt = args[k][1];
                opt_fill(dt, x, N * C * H * W, (uint64_t)(200 + k), -3.0f, 3.0f);
                assert_int_equal(opt_run((nnop_context *)*state, 1, &xd, xs, build_slice, args[k],
                                         y, N * C * H * W, &yd),
                                 NNOP_OK);
                assert_int_equal(yd.dims[1], cnt);
                assert_int_equal(yd.strides[1], l == 0 ? H * W : 1);
                for (n = 0; n < N; n++)
                    for (c = 0; c < cnt; c++)
                        for (p = 0; p < H * W; p++)
                            want[(n * cnt + c) * H * W + p] =
                                    x[(n * C + c + args[k][0]) * H * W + p];
                opt_assert_close(y, want, N * cnt * H * W, 0.0, "slice");
            }
}

static void expect_error(nnop_context *ctx, opt_build_fn build, const void *arg,
                         const nnop_tensor_desc *xd, const char *msg)
{
    static float zeros[64];
    const float *xs[1] = {zeros};
    float y[64];
    nnop_tensor_desc yd;
    assert_int_not_equal(opt_run(ctx, 1, xd, xs, build, arg, y, 64, &yd), NNOP_OK);
    opt_assert_error(ctx, msg);
}

static void test_errors(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc x = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 1, 6, 2, 2);
    nnop_tensor_desc x2 = nnop_tensor_2d(NNOP_F32, 2, 6);
    nnop_tensor_desc x1 = nnop_tensor_1d(NNOP_F32, 6);
    lrn_args a = {0, 1e-4f, 0.75f, 1.0f};
    int64_t g;
    expect_error(ctx, build_lrn, &a, &x,
                 "NNOP_ERR_INVALID_ARGUMENT: nnop_lrn (node #0): size = 0 must be >= 1");
    a.size = 3;
    a.beta = (float)INFINITY;
    expect_error(ctx, build_lrn, &a, &x,
                 "NNOP_ERR_INVALID_ARGUMENT: nnop_lrn (node #0): alpha = 0.0001, beta = inf and "
                 "bias = 1 must be finite");
    a.beta = 0.75f;
    expect_error(ctx, build_lrn, &a, &x1,
                 "NNOP_ERR_SHAPE: nnop_lrn (node #0): x must have 2 to 4 dims, N, C[, H[, W]] "
                 "(has 1)");
    g = 4;
    expect_error(
            ctx, build_shuffle, &g, &x,
            "NNOP_ERR_SHAPE: nnop_channel_shuffle (node #0): groups = 4 does not divide C = 6");
    g = 0;
    expect_error(
            ctx, build_shuffle, &g, &x,
            "NNOP_ERR_INVALID_ARGUMENT: nnop_channel_shuffle (node #0): groups = 0 must be >= 1");
    g = 2;
    expect_error(ctx, build_shuffle, &g, &x2,
                 "NNOP_ERR_SHAPE: nnop_channel_shuffle (node #0): x must be 4-D (is 2-D)");
    {
        int64_t sl[2] = {4, 3};
        expect_error(ctx, build_slice, sl, &x,
                     "NNOP_ERR_SHAPE: nnop_channel_slice (node #0): start 4, count 3: not "
                     "channels of C = 6 (start >= 0, count >= 1, start + count <= C)");
        sl[0] = -1;
        sl[1] = 2;
        expect_error(ctx, build_slice, sl, &x,
                     "NNOP_ERR_SHAPE: nnop_channel_slice (node #0): start -1, count 2: not "
                     "channels of C = 6 (start >= 0, count >= 1, start + count <= C)");
        sl[0] = 0;
        sl[1] = 0;
        expect_error(ctx, build_slice, sl, &x,
                     "NNOP_ERR_SHAPE: nnop_channel_slice (node #0): start 0, count 0: not "
                     "channels of C = 6 (start >= 0, count >= 1, start + count <= C)");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_lrn_known_values),
            cmocka_unit_test(test_lrn_even_window_is_onnx_s),
            cmocka_unit_test(test_lrn_random_matches_naive),
            cmocka_unit_test(test_shuffle_known_order),
            cmocka_unit_test(test_shuffle_random_matches_naive),
            cmocka_unit_test(test_slice_matches_indexing),
            cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
