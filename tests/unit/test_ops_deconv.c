/* test_ops_deconv.c: nnop_conv_transpose (PyTorch ConvTranspose2d: w is C_in x C_out/groups x R x
 * S, not flipped): hand-computed values for stride, padding, output padding, dilation and
 * groups, random odd shapes against a naive scatter loop in every dtype and layout, and the
 * errors. */
#include "op_test_util.h"

static nnop_value build_deconv(nnop_graph *g, const nnop_value *in, const void *arg)
{
    return nnop_conv_transpose(g, in[0], in[1], (const nnop_conv_transpose_params *)arg);
}

static nnop_conv_transpose_params params(int64_t stride, int64_t pad, int64_t out_pad,
                                         int64_t dilation, int64_t groups)
{
    nnop_conv_transpose_params p;
    int i;
    for (i = 0; i < 2; i++) {
        p.stride[i] = stride;
        p.pad[i] = pad;
        p.output_pad[i] = out_pad;
        p.dilation[i] = dilation;
    }
    p.groups = groups;
    return p;
}

static nnop_status run_deconv(nnop_context *ctx, const nnop_conv_transpose_params *p,
                              const nnop_tensor_desc *xd, const float *x,
                              const nnop_tensor_desc *wd, const float *w, float *y, int64_t cap,
                              nnop_tensor_desc *yd)
{
    nnop_tensor_desc d[2];
    const float *v[2];
    d[0] = *xd;
    d[1] = *wd;
    v[0] = x;
    v[1] = w;
    return opt_run(ctx, 2, d, v, build_deconv, p, y, cap, yd);
}

/* x: 1 x C x H x W, w: C x K x R x S, both layouts; checks y's shape and values. */
static void check_case(nnop_context *ctx, const nnop_conv_transpose_params *p, int64_t c, int64_t h,
                       int64_t w, const float *x, int64_t k, int64_t r, int64_t s, const float *wt,
                       int64_t oh, int64_t ow, const double *want)
{
    int l;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, c, h, w);
        nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, opt_layout(l), c, k, r, s), yd, e;
        float y[64];
        assert_int_equal(run_deconv(ctx, p, &xd, x, &wd, wt, y, 64, &yd), NNOP_OK);
        e = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, k * p->groups, oh, ow);
        assert_memory_equal(&yd, &e, sizeof yd);
        opt_assert_close(y, want, k * p->groups * oh * ow, 1e-7, "deconv");
    }
}

/* Stride 2 with a 2 x 2 kernel of ones: each pixel becomes its own 2 x 2 block. */
static void test_deconv_stride_2_blocks(void **state)
{
    static const float x[4] = {1, 2, 3, 4}, w[4] = {1, 1, 1, 1};
    static const double want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    nnop_conv_transpose_params p = params(2, 0, 0, 1, 1);
    check_case((nnop_context *)*state, &p, 1, 2, 2, x, 1, 2, 2, w, 4, 4, want);
}

/* Stride 1, 2 x 2 ones: overlapping blocks add: [[1, 3, 2], [4, 10, 6], [3, 7, 4]]. */
static void test_deconv_stride_1_overlaps_add(void **state)
{
    static const float x[4] = {1, 2, 3, 4}, w[4] = {1, 1, 1, 1};
    static const double want[9] = {1, 3, 2, 4, 10, 6, 3, 7, 4};
    nnop_conv_transpose_params p = params(1, 0, 0, 1, 1);
    check_case((nnop_context *)*state, &p, 1, 2, 2, x, 1, 2, 2, w, 3, 3, want);
}

/* A single pixel of 1 gives the kernel itself, not flipped. */
static void test_deconv_of_a_delta_is_the_kernel(void **state)
{
    static const float x[1] = {1}, w[6] = {1, 2, 3, 4, 5, 6};
    static const double want[6] = {1, 2, 3, 4, 5, 6};
    nnop_conv_transpose_params p = params(1, 0, 0, 1, 1);
    check_case((nnop_context *)*state, &p, 1, 1, 1, x, 1, 2, 3, w, 2, 3, want);
}

/* Stride 2, pad 1, output_pad 1, 3 x 3 ones on [[1, 2], [3, 4]]: OH = (2 - 1) * 2 - 2 + 2 + 1 + 1
 * = 4. Row oh gathers input rows {0}, {0, 1}, {1}, {1} (output padding adds the last row). */
static void test_deconv_padding_and_output_padding(void **state)
{
    static const float x[4] = {1, 2, 3, 4}, w[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    static const double want[16] = {1, 3, 2, 2, 4, 10, 6, 6, 3, 7, 4, 4, 3, 7, 4, 4};
    static const double no_out_pad[9] = {1, 3, 2, 4, 10, 6, 3, 7, 4};
    nnop_conv_transpose_params p = params(2, 1, 1, 1, 1);
    check_case((nnop_context *)*state, &p, 1, 2, 2, x, 1, 3, 3, w, 4, 4, want);
    p.output_pad[0] = p.output_pad[1] = 0;
    check_case((nnop_context *)*state, &p, 1, 2, 2, x, 1, 3, 3, w, 3, 3, no_out_pad);
}

/* Dilation 2 spreads the taps: a pixel through [1, 2] gives [1, 0, 2]. */
static void test_deconv_dilation(void **state)
{
    static const float x[1] = {1}, w[2] = {1, 2};
    static const double want[3] = {1, 0, 2};
    nnop_conv_transpose_params p = params(1, 0, 0, 2, 1);
    check_case((nnop_context *)*state, &p, 1, 1, 1, x, 1, 1, 2, w, 1, 3, want);
}

/* Weight layout: w[c][k] (input channel first). x = [1, 10]: groups 1 with w = [[1, 2], [3, 4]]
 * gives y_k = sum_c x_c w[c][k] = [31, 42]; groups 2 with w = [[2], [3]] gives [2, 30]. */
static void test_deconv_weight_layout_and_groups(void **state)
{
    static const float x[2] = {1, 10}, w1[4] = {1, 2, 3, 4}, w2[2] = {2, 3};
    static const double want1[2] = {31, 42}, want2[2] = {2, 30};
    nnop_conv_transpose_params p = params(1, 0, 0, 1, 1);
    check_case((nnop_context *)*state, &p, 2, 1, 1, x, 2, 1, 1, w1, 1, 1, want1);
    p.groups = 2;
    check_case((nnop_context *)*state, &p, 2, 1, 1, x, 1, 1, 1, w2, 1, 1, want2);
}

/* ------------------------------------------------------------------ random against naive */

/* Scatter form: every input pixel adds x * w into the outputs it reaches. */
static void naive_deconv(const nnop_conv_transpose_params *p, const float *x, int64_t n_,
                         int64_t c_, int64_t h_, int64_t w_, const float *w, int64_t kg, int64_t r_,
                         int64_t s_, double *y, int64_t oh_, int64_t ow_)
{
    int64_t cg = c_ / p->groups, k_ = kg * p->groups, n, c, ih, iw, kk, r, s, i;
    for (i = 0; i < n_ * k_ * oh_ * ow_; i++)
        y[i] = 0.0;
    for (n = 0; n < n_; n++)
        for (c = 0; c < c_; c++)
            for (ih = 0; ih < h_; ih++)
                for (iw = 0; iw < w_; iw++)
                    for (kk = 0; kk < kg; kk++)
                        for (r = 0; r < r_; r++)
                            for (s = 0; s < s_; s++) {
                                int64_t k = (c / cg) * kg + kk;
                                int64_t oh = ih * p->stride[0] - p->pad[0] + r * p->dilation[0];
                                int64_t ow = iw * p->stride[1] - p->pad[1] + s * p->dilation[1];
                                if (oh < 0 || oh >= oh_ || ow < 0 || ow >= ow_)
                                    continue;
                                y[((n * k_ + k) * oh_ + oh) * ow_ + ow] +=
                                        (double)x[((n * c_ + c) * h_ + ih) * w_ + iw] *
                                        w[((c * kg + kk) * r_ + r) * s_ + s];
                            }
}

typedef struct rcase {
    int64_t n, c, h, w, kg, r, s, groups;
    int64_t stride[2], pad[2], out_pad[2], dil[2];
} rcase;

static void test_deconv_random_matches_naive(void **state)
{
    static const rcase cases[] = {
            {2, 4, 3, 5, 3, 3, 2, 2, {2, 3}, {1, 0}, {1, 2}, {1, 2}},
            {1, 3, 4, 3, 1, 3, 3, 3, {2, 2}, {1, 1}, {1, 0}, {1, 1}}, /* depthwise */
            {3, 2, 2, 3, 5, 2, 3, 1, {1, 1}, {0, 1}, {0, 0}, {2, 1}},
            {1, 5, 3, 3, 2, 4, 4, 1, {2, 2}, {1, 1}, {0, 1}, {1, 1}}, /* U-Net 4x4/2 up */
    };
    static float x[256], w[256], y[4096];
    static double want[4096];
    uint64_t seed = 5500;
    size_t ci;
    int t, l;
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (t = 0; t < 3; t++)
            for (l = 0; l < 2; l++) {
                const rcase *rc = &cases[ci];
                nnop_dtype dt = opt_dtype(t);
                nnop_conv_transpose_params p;
                nnop_tensor_desc xd = nnop_tensor_4d(dt, opt_layout(l), rc->n, rc->c, rc->h, rc->w);
                nnop_tensor_desc wd =
                        nnop_tensor_4d(dt, opt_layout(l), rc->c, rc->kg, rc->r, rc->s);
                nnop_tensor_desc yd;
                int64_t oh, ow;
                int i;
                char what[64];
                for (i = 0; i < 2; i++) {
                    p.stride[i] = rc->stride[i];
                    p.pad[i] = rc->pad[i];
                    p.output_pad[i] = rc->out_pad[i];
                    p.dilation[i] = rc->dil[i];
                }
                p.groups = rc->groups;
                opt_fill(dt, x, nnop_tensor_elements(&xd), seed++, -2.0f, 2.0f);
                opt_fill(dt, w, nnop_tensor_elements(&wd), seed++, -1.0f, 1.0f);
                assert_int_equal(
                        run_deconv((nnop_context *)*state, &p, &xd, x, &wd, w, y, 4096, &yd),
                        NNOP_OK);
                oh = (rc->h - 1) * rc->stride[0] - 2 * rc->pad[0] + rc->dil[0] * (rc->r - 1) +
                     rc->out_pad[0] + 1;
                ow = (rc->w - 1) * rc->stride[1] - 2 * rc->pad[1] + rc->dil[1] * (rc->s - 1) +
                     rc->out_pad[1] + 1;
                assert_int_equal(yd.dims[0], rc->n);
                assert_int_equal(yd.dims[1], rc->kg * rc->groups);
                assert_int_equal(yd.dims[2], oh);
                assert_int_equal(yd.dims[3], ow);
                naive_deconv(&p, x, rc->n, rc->c, rc->h, rc->w, w, rc->kg, rc->r, rc->s, want, oh,
                             ow);
                snprintf(what, sizeof what, "case %d dtype %d layout %d", (int)ci, t, l);
                opt_assert_close(y, want, nnop_tensor_elements(&yd), opt_tol(dt), what);
            }
}

/* Transposed conv + bias + ReLU: a producer with its epilogue, fused into one partition. */
static void test_deconv_bias_relu_fuse_on_cpu(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 1, 1, 1);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 1, 1, 2);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F32, 1);
    static const float w[2] = {1, -3}, b[1] = {0.5f}, x[1] = {1};
    nnop_conv_transpose_params p = params(1, 0, 0, 1, 1);
    nnop_value v;
    float y[2];
    const void *in[1];
    void *out[1];
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_conv_transpose(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w), &p);
    v = nnop_act(g, nnop_bias(g, v, nnop_constant(g, "b", &bd, b)), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_partitions(plan), 1);
    in[0] = x;
    out[0] = y;
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
    assert_true(y[0] == 1.5f && y[1] == 0.0f);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* ------------------------------------------------------------------ errors */

static void expect_deconv_error(nnop_context *ctx, const nnop_conv_transpose_params *p,
                                const nnop_tensor_desc *xd, const nnop_tensor_desc *wd,
                                const char *msg)
{
    static float zeros[256];
    float y[256];
    nnop_tensor_desc yd;
    assert_int_not_equal(run_deconv(ctx, p, xd, zeros, wd, zeros, y, 256, &yd), NNOP_OK);
    opt_assert_error(ctx, msg);
}

static void test_deconv_errors(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc x = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 4, 3, 3);
    nnop_tensor_desc w = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 4, 2, 3, 3);
    nnop_tensor_desc w3 = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 3, 2, 3, 3);
    nnop_tensor_desc wl = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 4, 2, 3, 3);
    nnop_tensor_desc w2 = nnop_tensor_2d(NNOP_F32, 4, 2);
    nnop_tensor_desc x1 = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 4, 1, 1);
    nnop_tensor_desc w1 = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 4, 2, 1, 1);
    nnop_conv_transpose_params p = params(0, 0, 0, 1, 1);
    expect_deconv_error(ctx, NULL, &x, &w,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_conv_transpose: params is NULL");
    expect_deconv_error(ctx, &p, &x, &w,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_conv_transpose (node #0): stride[0] = 0 "
                        "must be >= 1");
    p = params(2, 0, 2, 1, 1);
    expect_deconv_error(ctx, &p, &x, &w,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_conv_transpose (node #0): output_pad[0] = "
                        "2 must be smaller than stride[0] = 2 or dilation[0] = 1");
    p = params(1, 0, 0, 1, 1);
    p.output_pad[1] = -1;
    expect_deconv_error(ctx, &p, &x, &w,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_conv_transpose (node #0): output_pad[1] = "
                        "-1 is negative");
    p = params(1, 0, 0, 1, 3);
    expect_deconv_error(ctx, &p, &x, &w,
                        "NNOP_ERR_SHAPE: nnop_conv_transpose (node #0): groups = 3 does not divide "
                        "C = 4");
    p = params(1, 0, 0, 1, 1);
    expect_deconv_error(ctx, &p, &x, &w3,
                        "NNOP_ERR_SHAPE: nnop_conv_transpose (node #0): wrong channel count: w is "
                        "C x K/groups x R x S with C = 3 in dim 0, but x has C = 4");
    expect_deconv_error(ctx, &p, &x, &wl,
                        "NNOP_ERR_SHAPE: nnop_conv_transpose (node #0): w must be packed in x's "
                        "layout (x is NCHW, w is NHWC)");
    expect_deconv_error(ctx, &p, &x, &w2,
                        "NNOP_ERR_SHAPE: nnop_conv_transpose (node #0): x and w must be 4-D (x is "
                        "4-D, w is 2-D)");
    p = params(1, 1, 0, 1, 1);
    expect_deconv_error(ctx, &p, &x1, &w1,
                        "NNOP_ERR_SHAPE: nnop_conv_transpose (node #0): the output height (1 - 1) "
                        "* 1 - 2 * 1 + 1 * (1 - 1) + 0 + 1 = -1 is not positive");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_deconv_stride_2_blocks),
            cmocka_unit_test(test_deconv_stride_1_overlaps_add),
            cmocka_unit_test(test_deconv_of_a_delta_is_the_kernel),
            cmocka_unit_test(test_deconv_padding_and_output_padding),
            cmocka_unit_test(test_deconv_dilation),
            cmocka_unit_test(test_deconv_weight_layout_and_groups),
            cmocka_unit_test(test_deconv_random_matches_naive),
            cmocka_unit_test(test_deconv_bias_relu_fuse_on_cpu),
            cmocka_unit_test(test_deconv_errors),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
