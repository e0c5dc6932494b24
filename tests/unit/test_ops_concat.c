/* test_ops_concat.c: nnop_concat along channels (torch.cat(xs, 1)): hand-computed, 2 to 32
 * inputs, 2-D and 4-D, random odd shapes against a naive copy in every dtype and layout, the
 * output's layout, and the errors. */
#include "op_test_util.h"

#define NULL_XS (-1) /* build_concat: pass xs = NULL */

static nnop_value build_concat(nnop_graph *g, const nnop_value *in, const void *arg)
{
    int n = *(const int *)arg;
    return n == NULL_XS ? nnop_concat(g, NULL, 2) : nnop_concat(g, in, n);
}

static nnop_status run_concat(nnop_context *ctx, int n, const nnop_tensor_desc *d,
                              const float *const *x, float *y, int64_t cap, nnop_tensor_desc *yd)
{
    return opt_run(ctx, n == NULL_XS ? 2 : n, d, x, build_concat, &n, y, cap, yd);
}

/* a = 1 x 1 x 2 x 2 [1 2 3 4], b = 1 x 2 x 2 x 2 [5 .. 12]: y = 1 x 3 x 2 x 2 [1 .. 12]. */
static void test_concat_two_inputs_hand_computed(void **state)
{
    static const float a[4] = {1, 2, 3, 4}, b[8] = {5, 6, 7, 8, 9, 10, 11, 12};
    int l, i;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc d[2], yd, want;
        const float *x[2];
        float y[12];
        d[0] = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 1, 2, 2);
        d[1] = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 2, 2, 2);
        x[0] = a, x[1] = b;
        assert_int_equal(run_concat((nnop_context *)*state, 2, d, x, y, 12, &yd), NNOP_OK);
        want = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 3, 2, 2);
        assert_memory_equal(&yd, &want, sizeof yd);
        for (i = 0; i < 12; i++)
            assert_true(y[i] == (float)(i + 1));
    }
}

/* Per sample: y[n] = a[n], b[n], c[n] (N = 2, 2-D rows N x C). */
static void test_concat_three_inputs_2d_per_sample(void **state)
{
    static const float a[2] = {1, 2}, b[4] = {3, 4, 5, 6}, c[2] = {7, 8};
    static const float want[8] = {1, 3, 4, 7, 2, 5, 6, 8};
    nnop_tensor_desc d[3], yd;
    const float *x[3];
    float y[8];
    d[0] = nnop_tensor_2d(NNOP_F32, 2, 1);
    d[1] = nnop_tensor_2d(NNOP_F32, 2, 2);
    d[2] = nnop_tensor_2d(NNOP_F32, 2, 1);
    x[0] = a, x[1] = b, x[2] = c;
    assert_int_equal(run_concat((nnop_context *)*state, 3, d, x, y, 8, &yd), NNOP_OK);
    assert_int_equal(yd.ndim, 2);
    assert_int_equal(yd.dims[1], 4);
    assert_memory_equal(y, want, sizeof want);
}

/* NNOP_MAX_CONCAT_INPUTS inputs of one channel each: channel i of y is input i. */
static void test_concat_max_inputs(void **state)
{
    enum { K = NNOP_MAX_CONCAT_INPUTS };
    static float vals[K][4], y[K * 4];
    nnop_tensor_desc d[K], yd;
    const float *x[K];
    int i, j;
    for (i = 0; i < K; i++) {
        d[i] = nnop_tensor_4d(NNOP_BF16, NNOP_NHWC, 2, 1, 1, 2);
        for (j = 0; j < 4; j++)
            vals[i][j] = (float)(i * 4 + j);
        x[i] = vals[i];
    }
    assert_int_equal(run_concat((nnop_context *)*state, K, d, x, y, K * 4, &yd), NNOP_OK);
    assert_int_equal(yd.dims[1], K);
    for (i = 0; i < K; i++) /* y is 2 x K x 1 x 2 logical: y[n][i][w] = vals[i][n * 2 + w] */
        for (j = 0; j < 4; j++)
            assert_true(y[(j / 2) * K * 2 + i * 2 + j % 2] == vals[i][j]);
}

/* Random odd shapes, channel counts 1, 4, 2, 5, every dtype and layout, against a naive copy
 * (exact: concat only moves values). */
static void test_concat_random_matches_naive(void **state)
{
    enum { N = 3, H = 5, W = 3, CT = 12 };
    static const int64_t cs[4] = {1, 4, 2, 5};
    static float x[4][N * 5 * H * W], y[N * CT * H * W];
    int t, l, i;
    uint64_t seed = 3500;
    for (t = 0; t < 3; t++)
        for (l = 0; l < 2; l++) {
            nnop_tensor_desc d[4], yd;
            const float *xp[4];
            int64_t n, c, hw, c0 = 0;
            for (i = 0; i < 4; i++) {
                d[i] = nnop_tensor_4d(opt_dtype(t), opt_layout(l), N, cs[i], H, W);
                opt_fill(opt_dtype(t), x[i], nnop_tensor_elements(&d[i]), seed++, -3.0f, 3.0f);
                xp[i] = x[i];
            }
            assert_int_equal(run_concat((nnop_context *)*state, 4, d, xp, y, N * CT * H * W, &yd),
                             NNOP_OK);
            assert_true(nnop_tensor_bytes(&yd) ==
                        (size_t)N * CT * H * W * nnop_dtype_size(yd.dtype));
            for (i = 0; i < 4; i++) {
                for (n = 0; n < N; n++)
                    for (c = 0; c < cs[i]; c++)
                        for (hw = 0; hw < H * W; hw++)
                            assert_true(y[(n * CT + c0 + c) * H * W + hw] ==
                                        x[i][(n * cs[i] + c) * H * W + hw]);
                c0 += cs[i];
            }
        }
}

/* ------------------------------------------------------------------ errors */

static void expect_concat_error(nnop_context *ctx, int n, const nnop_tensor_desc *d,
                                const char *msg)
{
    static float zeros[64];
    const float *x[NNOP_MAX_CONCAT_INPUTS + 1];
    float y[64];
    nnop_tensor_desc yd;
    int i;
    for (i = 0; i < NNOP_MAX_CONCAT_INPUTS + 1; i++)
        x[i] = zeros;
    assert_int_not_equal(run_concat(ctx, n, d, x, y, 64, &yd), NNOP_OK);
    opt_assert_error(ctx, msg);
}

static void test_concat_rejects_bad_counts(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc d[NNOP_MAX_CONCAT_INPUTS + 1];
    int i;
    for (i = 0; i < NNOP_MAX_CONCAT_INPUTS + 1; i++)
        d[i] = nnop_tensor_2d(NNOP_F32, 1, 1);
    expect_concat_error(ctx, 1, d,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_concat: n = 1 inputs, must be 2 to 32");
    expect_concat_error(ctx, NNOP_MAX_CONCAT_INPUTS + 1, d,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_concat: n = 33 inputs, must be 2 to 32");
    expect_concat_error(ctx, NULL_XS, d, "NNOP_ERR_INVALID_ARGUMENT: nnop_concat: xs is NULL");
}

static void test_concat_rejects_mismatched_inputs(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc d[3];
    d[0] = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    d[1] = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 3, 2);
    expect_concat_error(ctx, 2, d,
                        "NNOP_ERR_SHAPE: nnop_concat (node #0): input 1 differs from input 0 in "
                        "dim 2: 3 vs 2 (only dim 1, the channels, may differ)");
    d[1] = nnop_tensor_2d(NNOP_F32, 1, 2);
    expect_concat_error(ctx, 2, d,
                        "NNOP_ERR_SHAPE: nnop_concat (node #0): input 1 has 2 dims but input 0 has "
                        "4");
    d[1] = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 5, 2, 2);
    d[2] = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 3, 2, 2);
    expect_concat_error(ctx, 3, d,
                        "NNOP_ERR_SHAPE: nnop_concat (node #0): input 2 is NHWC but input 0 is "
                        "NCHW (one layout for all inputs)");
    d[2] = nnop_tensor_4d(NNOP_BF16, NNOP_NCHW, 1, 3, 2, 2);
    expect_concat_error(ctx, 3, d,
                        "NNOP_ERR_SHAPE: nnop_concat: dtype mix: input 0 is f32 but input 2 is "
                        "bf16");
    d[0] = nnop_tensor_1d(NNOP_F32, 4);
    d[1] = nnop_tensor_1d(NNOP_F32, 4);
    expect_concat_error(ctx, 2, d,
                        "NNOP_ERR_SHAPE: nnop_concat (node #0): input 0 must have 2 to 4 dims, N, "
                        "C[, H[, W]] (has 1)");
}

/* An N,1,H,W input has the same memory in both layouts, so its declared layout does not
 * clash with the others' (as nnop_add takes the pair); an outside user hit the refusal. */
static void test_concat_takes_one_channel_inputs_of_either_declared_layout(void **state)
{
    enum { N = 2, H = 2, W = 3, C = 5 };
    float a[N * H * W], b[N * 3 * H * W], c[N * H * W], y[N * C * H * W];
    nnop_tensor_desc d[3], yd;
    const float *x[3];
    int i, n, ch, h, w;
    for (i = 0; i < N * H * W; i++)
        a[i] = (float)(100 + i), c[i] = (float)(200 + i);
    for (i = 0; i < N * 3 * H * W; i++)
        b[i] = (float)(300 + i);
    d[0] = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, N, 1, H, W);
    d[1] = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, N, 3, H, W);
    d[2] = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, N, 1, H, W);
    x[0] = a, x[1] = b, x[2] = c;
    assert_int_equal(run_concat((nnop_context *)*state, 3, d, x, y, N * C * H * W, &yd), NNOP_OK);
    assert_int_equal(yd.dims[1], C);
    for (n = 0; n < N; n++) /* x and y in logical N,C,H,W order (the test packs them) */
        for (ch = 0; ch < C; ch++)
            for (h = 0; h < H; h++)
                for (w = 0; w < W; w++) {
                    int pix = (n * H + h) * W + w;
                    float want = ch == 0   ? a[pix]
                                 : ch == 4 ? c[pix]
                                           : b[((n * 3 + ch - 1) * H + h) * W + w];
                    assert_true(y[((n * C + ch) * H + h) * W + w] == want);
                }
    assert_true(nnop_tensor_4d(NNOP_F32, NNOP_NCHW, N, C, H, W).strides[1] == yd.strides[1]);
    /* the memory of two 3-channel inputs still must agree */
    d[0] = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, N, 3, H, W);
    expect_concat_error((nnop_context *)*state, 3, d,
                        "NNOP_ERR_SHAPE: nnop_concat (node #0): input 1 is NHWC but input 0 is "
                        "NCHW (one layout for all inputs)");
}

/* A missing operand is named. */
static void test_concat_rejects_none_input(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = NULL;
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 1, 2);
    nnop_value xs[2];
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    xs[0] = nnop_input(g, "a", &d);
    xs[1] = nnop_none();
    assert_true(nnop_concat(g, xs, 2).id < 0);
    opt_assert_error(ctx, "NNOP_ERR_INVALID_ARGUMENT: nnop_concat: input 1 is required but is "
                          "nnop_none()");
    nnop_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_concat_two_inputs_hand_computed),
            cmocka_unit_test(test_concat_three_inputs_2d_per_sample),
            cmocka_unit_test(test_concat_max_inputs),
            cmocka_unit_test(test_concat_random_matches_naive),
            cmocka_unit_test(test_concat_rejects_bad_counts),
            cmocka_unit_test(test_concat_rejects_mismatched_inputs),
            cmocka_unit_test(test_concat_rejects_none_input),
            cmocka_unit_test(test_concat_takes_one_channel_inputs_of_either_declared_layout),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
