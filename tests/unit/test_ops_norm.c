/* test_ops_norm.c: layer norm (over C, over C, H, W), group norm (instance norm = groups C) and
 * RMS norm over C: hand-computed values, optional affine parameters, random odd shapes against a
 * naive one-pass implementation in every dtype and layout, and the errors. */
#include "op_test_util.h"

typedef enum norm_kind { LAYER, GROUP, RMS } norm_kind;

typedef struct norm_case {
    norm_kind kind;
    nnop_norm_axes axes;
    int64_t groups;
    float eps;
} norm_case;

static nnop_value build_norm(nnop_graph *g, const nnop_value *in, const void *arg)
{
    const norm_case *k = (const norm_case *)arg;
    if (k->kind == LAYER)
        return nnop_layer_norm(g, in[0], in[1], in[2], k->axes, k->eps);
    if (k->kind == GROUP)
        return nnop_group_norm(g, in[0], k->groups, in[1], in[2], k->eps);
    return nnop_rms_norm(g, in[0], in[1], k->eps);
}

/* gd/bd may be NULL with gamma/beta NULL (absent: nnop_none()). */
static nnop_status run_norm(nnop_context *ctx, const norm_case *k, const nnop_tensor_desc *xd,
                            const float *x, const nnop_tensor_desc *gd, const float *gamma,
                            const nnop_tensor_desc *bd, const float *beta, float *y, int64_t cap)
{
    nnop_tensor_desc d[3], yd;
    const float *v[3];
    nnop_status st;
    d[0] = *xd;
    d[1] = gd ? *gd : *xd;
    d[2] = bd ? *bd : *xd;
    v[0] = x;
    v[1] = gamma;
    v[2] = beta;
    st = opt_run(ctx, k->kind == RMS ? 2 : 3, d, v, build_norm, k, y, cap, &yd);
    if (st == NNOP_OK)
        assert_memory_equal(&yd, xd, sizeof yd);
    return st;
}

static void expect_values(const float *y, const double *want, int64_t n)
{
    opt_assert_close(y, want, n, 1e-6, "norm");
}

/* x (1 x 2 x 1 x 2, logical) = c0: [1, 4], c1: [3, 0]. Over C at each position: (1, 3) has mean 2
 * and variance 1, (4, 0) mean 2 and variance 4: y = c0: [-1, 1], c1: [1, -1]; with gamma
 * [2, 0.5] and beta [1, -1]: c0: [-1, 3], c1: [-0.5, -1.5]. */
static void test_layer_norm_over_c_hand_computed(void **state)
{
    static const float x[4] = {1, 4, 3, 0}, gamma[2] = {2, 0.5f}, beta[2] = {1, -1};
    static const double plain[4] = {-1, 1, 1, -1}, affine[4] = {-1, 3, -0.5, -1.5};
    static const double gamma_only[4] = {-2, 2, 0.5, -0.5};
    norm_case k = {LAYER, NNOP_NORM_C, 0, 0.0f};
    int l;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 2, 1, 2);
        nnop_tensor_desc pd = nnop_tensor_1d(NNOP_F32, 2);
        float y[4];
        assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, NULL, NULL, NULL, NULL, y, 4),
                         NNOP_OK);
        expect_values(y, plain, 4);
        assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, &pd, gamma, &pd, beta, y, 4),
                         NNOP_OK);
        expect_values(y, affine, 4);
        assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, &pd, gamma, NULL, NULL, y, 4),
                         NNOP_OK);
        expect_values(y, gamma_only, 4);
    }
}

/* eps goes under the root: x = [0, 2] over C has variance 1; eps = 3 makes the divisor 2. */
static void test_layer_norm_eps_under_the_root(void **state)
{
    static const float x[2] = {0, 2};
    static const double want[2] = {-0.5, 0.5};
    norm_case k = {LAYER, NNOP_NORM_C, 0, 3.0f};
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 1, 2);
    float y[2];
    assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, NULL, NULL, NULL, NULL, y, 2),
                     NNOP_OK);
    expect_values(y, want, 2);
}

/* Over C, H, W: [1, 4, 3, 0] has mean 2 and variance 2.5: y = (x - 2) / sqrt(2.5). Per-element
 * gamma (1 x 2 x 1 x 2, nn.LayerNorm([C, H, W])) [1, 2, 3, 4] and per-channel beta [10, 20]. */
static void test_layer_norm_over_chw_hand_computed(void **state)
{
    static const float x[4] = {1, 4, 3, 0}, gamma[4] = {1, 2, 3, 4}, beta[2] = {10, 20};
    norm_case k = {LAYER, NNOP_NORM_CHW, 0, 0.0f};
    double r = 1.0 / sqrt(2.5), plain[4], affine[4];
    int l, i;
    for (i = 0; i < 4; i++) {
        plain[i] = (x[i] - 2.0) * r;
        affine[i] = plain[i] * gamma[i] + beta[i / 2];
    }
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 2, 1, 2);
        nnop_tensor_desc gd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 2, 1, 2);
        nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F32, 2);
        float y[4];
        assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, NULL, NULL, NULL, NULL, y, 4),
                         NNOP_OK);
        expect_values(y, plain, 4);
        assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, &gd, gamma, &bd, beta, y, 4),
                         NNOP_OK);
        expect_values(y, affine, 4);
    }
}

/* groups = 2 over C = 4: (1, 3) mean 2 variance 1, (10, 14) mean 12 variance 4: y = -1 1 -1 1;
 * gamma [1, 2, 3, 4] and beta [0, 0, 1, 1] per channel: -1 2 -2 5. */
static void test_group_norm_hand_computed(void **state)
{
    static const float x[4] = {1, 3, 10, 14}, gamma[4] = {1, 2, 3, 4}, beta[4] = {0, 0, 1, 1};
    static const double plain[4] = {-1, 1, -1, 1}, affine[4] = {-1, 2, -2, 5};
    norm_case k = {GROUP, NNOP_NORM_C, 2, 0.0f};
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 4, 1, 1);
    nnop_tensor_desc pd = nnop_tensor_1d(NNOP_F32, 4);
    float y[4];
    assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, NULL, NULL, NULL, NULL, y, 4),
                     NNOP_OK);
    expect_values(y, plain, 4);
    assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, &pd, gamma, &pd, beta, y, 4),
                     NNOP_OK);
    expect_values(y, affine, 4);
}

/* Instance norm (groups = C) normalizes each channel of each sample over H, W alone:
 * c0: [1, 3] -> [-1, 1]; c1: [5, 5] (variance 0, eps 1) -> [0, 0]; c2: [0, -4] -> [1, -1]
 * (eps 1 makes c0's divisor sqrt(2) and c2's sqrt(5)). */
static void test_instance_norm_is_group_norm_with_groups_c(void **state)
{
    static const float x[6] = {1, 3, 5, 5, 0, -4};
    norm_case k = {GROUP, NNOP_NORM_C, 3, 1.0f};
    double want[6];
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, 2, 1);
    float y[6];
    want[0] = -1 / sqrt(2.0), want[1] = 1 / sqrt(2.0), want[2] = 0, want[3] = 0;
    want[4] = 2 / sqrt(5.0), want[5] = -2 / sqrt(5.0);
    assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, NULL, NULL, NULL, NULL, y, 6),
                     NNOP_OK);
    expect_values(y, want, 6);
}

/* RMS over C: x = [1, 7] has mean square 25, so y = x / 5 = [0.2, 1.4]; gamma [2, -1]: [0.4,
 * -1.4]. No mean is subtracted: [3, 3] stays [1, 1]. */
static void test_rms_norm_hand_computed(void **state)
{
    static const float x[4] = {1, 7, 3, 3}, gamma[2] = {2, -1};
    static const double plain[4] = {0.2, 1.4, 1, 1}, affine[4] = {0.4, -1.4, 2, -1};
    norm_case k = {RMS, NNOP_NORM_C, 0, 0.0f};
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 2, 2), pd = nnop_tensor_1d(NNOP_F32, 2);
    float y[4];
    assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, NULL, NULL, NULL, NULL, y, 4),
                     NNOP_OK);
    expect_values(y, plain, 4);
    assert_int_equal(run_norm((nnop_context *)*state, &k, &xd, x, &pd, gamma, NULL, NULL, y, 4),
                     NNOP_OK);
    expect_values(y, affine, 4);
}

/* ------------------------------------------------------------------ random against naive */

enum { RN = 2, RC = 6, RH = 5, RW = 3, RALL = RN * RC * RH * RW };

/* Naive: statistics as E[x^2] - E[x]^2 over the index set of each output, one element at a
 * time (the kernel groups elements and uses two passes). */
static void naive_norm(const norm_case *k, const float *x, const float *gamma, int gamma_full,
                       const float *beta, double *y)
{
    int n, c, h, w;
    for (n = 0; n < RN; n++)
        for (c = 0; c < RC; c++)
            for (h = 0; h < RH; h++)
                for (w = 0; w < RW; w++) {
                    double s = 0, s2 = 0, cnt = 0, mean, var, v;
                    int c2, h2, w2, i = ((n * RC + c) * RH + h) * RW + w;
                    for (c2 = 0; c2 < RC; c2++)
                        for (h2 = 0; h2 < RH; h2++)
                            for (w2 = 0; w2 < RW; w2++) {
                                int in_set;
                                double xv = x[((n * RC + c2) * RH + h2) * RW + w2];
                                if (k->kind == GROUP)
                                    in_set = c2 / (RC / k->groups) == c / (RC / k->groups);
                                else if (k->kind == LAYER && k->axes == NNOP_NORM_CHW)
                                    in_set = 1;
                                else
                                    in_set = h2 == h && w2 == w;
                                if (!in_set)
                                    continue;
                                s += xv, s2 += xv * xv, cnt += 1;
                            }
                    mean = k->kind == RMS ? 0.0 : s / cnt;
                    var = s2 / cnt - mean * mean;
                    v = (x[i] - mean) / sqrt(var + k->eps);
                    if (gamma)
                        v *= gamma[gamma_full ? i - n * RC * RH * RW : c];
                    if (beta)
                        v += beta[c];
                    y[i] = v;
                }
}

static void test_norms_random_match_naive(void **state)
{
    static const norm_case cases[] = {
            {LAYER, NNOP_NORM_C, 0, 1e-5f},   {LAYER, NNOP_NORM_CHW, 0, 1e-5f},
            {GROUP, NNOP_NORM_C, 1, 1e-5f},   {GROUP, NNOP_NORM_C, 3, 0.1f},
            {GROUP, NNOP_NORM_C, RC, 1e-5f},  {RMS, NNOP_NORM_C, 0, 1e-6f},
            {LAYER, NNOP_NORM_CHW, 0, 0.25f},
    };
    static float x[RALL], gamma[RALL], beta[RC], y[RALL];
    static double want[RALL];
    uint64_t seed = 2500;
    size_t ci;
    int t, l, affine;
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (t = 0; t < 3; t++)
            for (l = 0; l < 2; l++)
                for (affine = 0; affine < 3; affine++) { /* none, gamma + beta, gamma only */
                    const norm_case *k = &cases[ci];
                    nnop_dtype dt = opt_dtype(t);
                    int full = k->kind == LAYER && k->axes == NNOP_NORM_CHW && ci == 6;
                    nnop_tensor_desc xd = nnop_tensor_4d(dt, opt_layout(l), RN, RC, RH, RW);
                    nnop_tensor_desc gd = full ? nnop_tensor_4d(dt, opt_layout(l), 1, RC, RH, RW)
                                               : nnop_tensor_1d(dt, RC);
                    nnop_tensor_desc bd = nnop_tensor_1d(dt, RC);
                    const float *g = affine ? gamma : NULL;
                    const float *b = affine == 1 && k->kind != RMS ? beta : NULL;
                    char what[64];
                    opt_fill(dt, x, RALL, seed++, -2.0f, 3.0f);
                    opt_fill(dt, gamma, nnop_tensor_elements(&gd), seed++, 0.5f, 2.0f);
                    opt_fill(dt, beta, RC, seed++, -1.0f, 1.0f);
                    naive_norm(k, x, g, full, b, want);
                    assert_int_equal(run_norm((nnop_context *)*state, k, &xd, x, g ? &gd : NULL, g,
                                              b ? &bd : NULL, b, y, RALL),
                                     NNOP_OK);
                    snprintf(what, sizeof what, "case %d dtype %d layout %d affine %d", (int)ci, t,
                             l, affine);
                    opt_assert_close(y, want, RALL, opt_tol(dt) + 1e-6, what);
                }
}

/* 2-D and 3-D inputs: layer norm over C of N x C is nn.LayerNorm(C); over C, H of N x C x H. */
static void test_norms_on_2d_and_3d(void **state)
{
    static const float x[6] = {1, 2, 3, 6, 6, 6};
    norm_case k = {LAYER, NNOP_NORM_C, 0, 0.0f};
    nnop_tensor_desc d2 = nnop_tensor_2d(NNOP_F32, 2, 3), d3 = d2;
    double want[6];
    float y[6];
    want[0] = -sqrt(1.5), want[1] = 0, want[2] = sqrt(1.5); /* (1 2 3): variance 2/3 */
    want[3] = want[4] = want[5] = 0;                        /* variance 0: 0 / sqrt(eps) */
    k.eps = 1e-30f; /* so that the constant row gives 0, not NaN */
    assert_int_equal(run_norm((nnop_context *)*state, &k, &d2, x, NULL, NULL, NULL, NULL, y, 6),
                     NNOP_OK);
    expect_values(y, want, 6);
    d3.ndim = 3; /* 1 x 2 x 3: over C, H = all six */
    d3.dims[0] = 1, d3.dims[1] = 2, d3.dims[2] = 3;
    d3.strides[0] = 6, d3.strides[1] = 3, d3.strides[2] = 1;
    k.axes = NNOP_NORM_CHW;
    k.eps = 0.0f;
    assert_int_equal(run_norm((nnop_context *)*state, &k, &d3, x, NULL, NULL, NULL, NULL, y, 6),
                     NNOP_OK);
    {
        int i;
        double mean = 4.0, var = (9 + 4 + 1 + 4 + 4 + 4) / 6.0;
        for (i = 0; i < 6; i++)
            want[i] = (x[i] - mean) / sqrt(var);
    }
    expect_values(y, want, 6);
}

/* A norm starts a partition and absorbs the pointwise chain after it (run in the norm's own
 * pass on the GPU): relu | group norm + SiLU | RMS norm + relu. */
static void test_norm_takes_its_epilogue(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 4, 2, 2);
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_value v;
    char text[2048];
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_act(g, nnop_input(g, "x", &xd), NNOP_ACT_RELU, 0.0f);
    v = nnop_act(g, nnop_group_norm(g, v, 2, nnop_none(), nnop_none(), 1e-5f), NNOP_ACT_SILU, 0);
    v = nnop_act(g, nnop_rms_norm(g, v, nnop_none(), 1e-6f), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_partitions(plan), 3);
    assert_true(nnop_plan_describe(plan, text, sizeof text) > 0);
    assert_non_null(strstr(text, "group_norm+act"));
    assert_non_null(strstr(text, "rms_norm+act"));
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* ------------------------------------------------------------------ errors */

static void expect_norm_error(nnop_context *ctx, const norm_case *k, const nnop_tensor_desc *xd,
                              const nnop_tensor_desc *gd, const nnop_tensor_desc *bd,
                              const char *msg)
{
    static float zeros[256];
    float y[256];
    nnop_status st =
            run_norm(ctx, k, xd, zeros, gd, gd ? zeros : NULL, bd, bd ? zeros : NULL, y, 256);
    assert_int_not_equal(st, NNOP_OK);
    opt_assert_error(ctx, msg);
}

static void test_norm_errors(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc x = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 2, 3, 2, 2);
    nnop_tensor_desc c4 = nnop_tensor_1d(NNOP_F32, 4), c3 = nnop_tensor_1d(NNOP_F32, 3);
    nnop_tensor_desc full = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 3, 2, 2);
    nnop_tensor_desc two = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 2, 3, 2, 2);
    nnop_tensor_desc x1 = nnop_tensor_1d(NNOP_F32, 6),
                     x6 = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 6, 1, 1);
    norm_case k = {LAYER, NNOP_NORM_C, 0, -1.0f};
    expect_norm_error(ctx, &k, &x, NULL, NULL,
                      "NNOP_ERR_INVALID_ARGUMENT: nnop_layer_norm (node #0): eps = -1 must be a "
                      "finite value >= 0");
    k.eps = 1e-5f;
    k.axes = (nnop_norm_axes)7;
    expect_norm_error(ctx, &k, &x, NULL, NULL,
                      "NNOP_ERR_INVALID_ARGUMENT: nnop_layer_norm (node #0): unknown normalization "
                      "axes 7 (NNOP_NORM_C or NNOP_NORM_CHW)");
    k.axes = NNOP_NORM_C;
    expect_norm_error(ctx, &k, &x, &c4, NULL,
                      "NNOP_ERR_SHAPE: nnop_layer_norm (node #0): wrong channel count: gamma must "
                      "be 1-D with C = 3 elements (got f32[4])");
    expect_norm_error(ctx, &k, &x, &full, NULL, /* per-element only over C, H, W */
                      "NNOP_ERR_SHAPE: nnop_layer_norm (node #0): wrong shape: gamma must be 1-D "
                      "with C = 3 elements (got f32[1,3,2,2] NHWC)");
    k.axes = NNOP_NORM_CHW;
    expect_norm_error(ctx, &k, &x, &full, &two,
                      "NNOP_ERR_SHAPE: nnop_layer_norm (node #0): wrong shape: beta must be 1-D "
                      "with C = 3 elements or x's shape with dim 0 = 1 (got f32[2,3,2,2] NHWC; x "
                      "is f32[2,3,2,2] NHWC)");
    /* H and W swapped: the message shows both shapes (it named only dim 0, which was right) */
    {
        nnop_tensor_desc xr = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 3, 2, 4);
        nnop_tensor_desc swapped = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, 4, 2);
        expect_norm_error(ctx, &k, &xr, &swapped, NULL,
                          "NNOP_ERR_SHAPE: nnop_layer_norm (node #0): wrong shape: gamma must be "
                          "1-D with C = 3 elements or x's shape with dim 0 = 1 (got f32[1,3,4,2] "
                          "NCHW; x is f32[2,3,2,4] NCHW)");
    }
    k.kind = GROUP;
    k.groups = 4;
    expect_norm_error(
            ctx, &k, &x6, NULL, NULL,
            "NNOP_ERR_SHAPE: nnop_group_norm (node #0): groups = 4 does not divide C = 6");
    k.groups = 0;
    expect_norm_error(ctx, &k, &x6, NULL, NULL,
                      "NNOP_ERR_INVALID_ARGUMENT: nnop_group_norm (node #0): groups = 0 must be "
                      ">= 1");
    k.groups = 3;
    expect_norm_error(ctx, &k, &x, &c3, &c4,
                      "NNOP_ERR_SHAPE: nnop_group_norm (node #0): wrong channel count: beta must "
                      "be 1-D with C = 3 elements (got f32[4])");
    k.kind = RMS;
    expect_norm_error(ctx, &k, &x1, NULL, NULL,
                      "NNOP_ERR_SHAPE: nnop_rms_norm (node #0): x must have 2 to 4 dims, N, C[, "
                      "H[, W]] (has 1)");
    k.eps = (float)INFINITY;
    expect_norm_error(ctx, &k, &x, NULL, NULL,
                      "NNOP_ERR_INVALID_ARGUMENT: nnop_rms_norm (node #0): eps = inf must be a "
                      "finite value >= 0");
}

/* gamma of another dtype than x is a dtype mix, like every other operand. */
static void test_norm_rejects_dtype_mix(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc x = nnop_tensor_4d(NNOP_F16, NNOP_NCHW, 1, 3, 2, 2);
    nnop_tensor_desc c3 = nnop_tensor_1d(NNOP_F32, 3);
    norm_case k = {LAYER, NNOP_NORM_C, 0, 1e-5f};
    expect_norm_error(ctx, &k, &x, NULL, &c3,
                      "NNOP_ERR_SHAPE: nnop_layer_norm: dtype mix: input 0 is f16 but input 2 is "
                      "f32");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_layer_norm_over_c_hand_computed),
            cmocka_unit_test(test_layer_norm_eps_under_the_root),
            cmocka_unit_test(test_layer_norm_over_chw_hand_computed),
            cmocka_unit_test(test_group_norm_hand_computed),
            cmocka_unit_test(test_instance_norm_is_group_norm_with_groups_c),
            cmocka_unit_test(test_rms_norm_hand_computed),
            cmocka_unit_test(test_norms_random_match_naive),
            cmocka_unit_test(test_norms_on_2d_and_3d),
            cmocka_unit_test(test_norm_takes_its_epilogue),
            cmocka_unit_test(test_norm_errors),
            cmocka_unit_test(test_norm_rejects_dtype_mix),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
