/* test_ops_pointwise.c: known answers for bias add, every activation (relu, relu6, clamp, leaky
 * relu, gelu erf and tanh forms, sigmoid, tanh, silu, elu, hard-swish, hard-sigmoid, mish) and
 * residual add, run through the
 * public graph API on a CPU context, in f32, f16 and bf16 and in NCHW and NHWC. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#define CLAMP_KIND (-1) /* run_act: nnop_clamp(lo = a, hi = b) instead of nnop_act */

/* The eight inputs of the activation tables below. */
static const float act_x[8] = {-3.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f, 7.0f};

/* y = act(x) through a one-node graph: x (logical order) is stored as d (dtype, layout). */
static void run_act(nnop_context *ctx, const nnop_tensor_desc *d, const float *x, float *y,
                    int kind, float a, float b)
{
    nnop_graph *g = NULL;
    nnop_value v;
    nnop_tensor_desc got;
    size_t bytes = nnop_tensor_bytes(d);
    void *xb = malloc(bytes), *yb = malloc(bytes);
    const void *in[1];
    int64_t i;
    assert_true(xb && yb);
    nnop_test_pack(d, x, xb);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", d);
    v = kind == CLAMP_KIND ? nnop_clamp(g, v, a, b) : nnop_act(g, v, (nnop_act_kind)kind, a);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_value_desc(g, v, &got), NNOP_OK);
    assert_memory_equal(got.dims, d->dims, sizeof d->dims);
    assert_int_equal(got.dtype, d->dtype);
    in[0] = xb;
    nnop_test_run_unpack(g, in, d, yb, y);
    for (i = 0; i < nnop_tensor_elements(d); i++)
        assert_false(isnan(y[i]));
    nnop_graph_destroy(g);
    free(xb);
    free(yb);
}

static void check_table(nnop_context *ctx, int kind, float a, float b, const float *want,
                        double tol, const char *what)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 4);
    float y[8];
    int i, bad = 0;
    run_act(ctx, &d, act_x, y, kind, a, b);
    for (i = 0; i < 8; i++)
        if (fabs((double)y[i] - (double)want[i]) > tol) {
            print_error("%s(%g): got %.9g, want %.9g\n", what, (double)act_x[i], (double)y[i],
                        (double)want[i]);
            bad++;
        }
    assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------------ activations: known values */

static void test_act_identity_returns_input(void **state)
{
    check_table((nnop_context *)*state, NNOP_ACT_IDENTITY, 0.0f, 0.0f, act_x, 0.0, "identity");
}

static void test_act_relu_known_values(void **state)
{
    static const float want[8] = {0, 0, 0, 0, 0.5f, 1, 3, 7};
    check_table((nnop_context *)*state, NNOP_ACT_RELU, 0.0f, 0.0f, want, 0.0, "relu");
}

static void test_act_relu6_caps_at_6(void **state)
{
    static const float want[8] = {0, 0, 0, 0, 0.5f, 1, 3, 6};
    check_table((nnop_context *)*state, NNOP_ACT_RELU6, 0.0f, 0.0f, want, 0.0, "relu6");
}

static void test_act_clamp_between_bounds(void **state)
{
    static const float want[8] = {-1, -1, -0.5f, 0, 0.5f, 1, 2.5f, 2.5f};
    check_table((nnop_context *)*state, CLAMP_KIND, -1.0f, 2.5f, want, 0.0, "clamp");
}

static void test_act_clamp_with_equal_bounds_is_constant(void **state)
{
    static const float want[8] = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
    check_table((nnop_context *)*state, CLAMP_KIND, 0.25f, 0.25f, want, 0.0, "clamp");
}

static void test_act_leaky_relu_scales_negatives_by_alpha(void **state)
{
    static const float want[8] = {-0.3f, -0.1f, -0.05f, 0, 0.5f, 1, 3, 7};
    check_table((nnop_context *)*state, NNOP_ACT_LEAKY_RELU, 0.1f, 0.0f, want, 1e-7, "leaky_relu");
}

/* Known values (erf form): gelu(1) = Phi(1) = 0.841344746, gelu(-3) = -3 Phi(-3). */
static void test_act_gelu_erf_known_values(void **state)
{
    static const float want[8] = {-0.00404969409f, -0.158655254f, -0.154268769f, 0.0f,
                                  0.345731231f,    0.841344746f,  2.99595031f,   7.0f};
    check_table((nnop_context *)*state, NNOP_ACT_GELU, 0.0f, 0.0f, want, 1e-6, "gelu");
}

/* The tanh approximation differs from the erf form (at -3: -0.003637 vs -0.004050). */
static void test_act_gelu_tanh_known_values(void **state)
{
    static const float want[8] = {-0.00363739208f, -0.158808009f, -0.15428599f, 0.0f,
                                  0.34571401f,     0.841191991f,  2.99636261f,  7.0f};
    check_table((nnop_context *)*state, NNOP_ACT_GELU_TANH, 0.0f, 0.0f, want, 1e-6, "gelu_tanh");
}

static void test_act_sigmoid_known_values(void **state)
{
    static const float want[8] = {0.0474258732f, 0.268941421f, 0.377540669f, 0.5f,
                                  0.622459331f,  0.731058579f, 0.952574127f, 0.999088949f};
    check_table((nnop_context *)*state, NNOP_ACT_SIGMOID, 0.0f, 0.0f, want, 1e-7, "sigmoid");
}

static void test_act_tanh_known_values(void **state)
{
    static const float want[8] = {-0.995054754f, -0.761594156f, -0.462117157f, 0.0f,
                                  0.462117157f,  0.761594156f,  0.995054754f,  0.999998337f};
    check_table((nnop_context *)*state, NNOP_ACT_TANH, 0.0f, 0.0f, want, 1e-7, "tanh");
}

static void test_act_silu_known_values(void **state)
{
    static const float want[8] = {-0.14227762f, -0.268941421f, -0.188770334f, 0.0f,
                                  0.311229666f, 0.731058579f,  2.85772238f,   6.99362264f};
    check_table((nnop_context *)*state, NNOP_ACT_SILU, 0.0f, 0.0f, want, 1e-6, "silu");
}

static void test_act_elu_alpha_1_known_values(void **state)
{
    static const float want[8] = {-0.950212932f, -0.632120559f, -0.39346934f, 0, 0.5f, 1, 3, 7};
    check_table((nnop_context *)*state, NNOP_ACT_ELU, 1.0f, 0.0f, want, 1e-7, "elu");
}

static void test_act_elu_alpha_half_known_values(void **state)
{
    static const float want[8] = {-0.475106466f, -0.316060279f, -0.19673467f, 0, 0.5f, 1, 3, 7};
    check_table((nnop_context *)*state, NNOP_ACT_ELU, 0.5f, 0.0f, want, 1e-7, "elu");
}

/* Tiny negative inputs keep their relative precision (expm1, as PyTorch): exp(x) - 1 gave 0
 * for -1e-20 and 11% off at -1e-16 (an outside test found it). */
static void test_act_elu_tiny_negatives_keep_precision(void **state)
{
    static const float x[4] = {-1e-30f, -1e-20f, -1e-16f, -1e-13f};
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 4);
    float y[4];
    int i;
    run_act((nnop_context *)*state, &d, x, y, NNOP_ACT_ELU, 0.5f, 0.0f);
    for (i = 0; i < 4; i++)
        assert_true(fabs((double)y[i] / (0.5 * (double)x[i]) - 1.0) < 1e-6);
}

/* alpha only matters for leaky relu and elu: relu with alpha 0.3 is still relu. */
static void test_act_relu_ignores_alpha(void **state)
{
    static const float want[8] = {0, 0, 0, 0, 0.5f, 1, 3, 7};
    check_table((nnop_context *)*state, NNOP_ACT_RELU, 0.3f, 0.0f, want, 0.0, "relu");
}

/* PyTorch's Hardsigmoid: relu6(x + 3) / 6; 0 from -3 down, 1 from 3 up. */
static void test_act_hardsigmoid_known_values(void **state)
{
    static const float want[8] = {
            0, 0.333333333f, 0.416666667f, 0.5f, 0.583333333f, 0.666666667f, 1, 1};
    check_table((nnop_context *)*state, NNOP_ACT_HARDSIGMOID, 0.0f, 0.0f, want, 1e-7,
                "hardsigmoid");
}

/* PyTorch's Hardswish: x * relu6(x + 3) / 6; x itself from 3 up. */
static void test_act_hardswish_known_values(void **state)
{
    static const float want[8] = {0, -0.333333333f, -0.208333333f, 0, 0.291666667f, 0.666666667f, 3,
                                  7};
    check_table((nnop_context *)*state, NNOP_ACT_HARDSWISH, 0.0f, 0.0f, want, 1e-7, "hardswish");
}

/* Mish: x * tanh(ln(1 + e^x)); mish(1) = tanh(ln(1 + e)) = 0.865098388. */
static void test_act_mish_known_values(void **state)
{
    static const float want[8] = {-0.145647461f, -0.303401461f, -0.220743775f, 0,
                                  0.375245211f,  0.865098388f,  2.986535f,     6.99998838f};
    check_table((nnop_context *)*state, NNOP_ACT_MISH, 0.0f, 0.0f, want, 1e-6, "mish");
}

/* Mish far out: no overflow of exp (x for large x, -0 side for very negative x). */
static void test_act_mish_large_inputs_do_not_overflow(void **state)
{
    static const float x[8] = {-200, -90, -30, 30, 90, 200, 1e30f, -1e30f};
    static const float want[8] = {0, 0, -2.8072868e-12f, 30, 90, 200, 1e30f, 0};
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 4);
    float y[8];
    int i;
    run_act((nnop_context *)*state, &d, x, y, NNOP_ACT_MISH, 0.0f, 0.0f);
    for (i = 0; i < 8; i++)
        assert_true(fabs((double)y[i] - (double)want[i]) <= 1e-6 * (1.0 + fabs((double)want[i])));
}

/* ------------------------------------------------------------------ activations: formulas */

/* The activations again on random data, against formulas written here in other forms than
 * the kernel's (gelu through erfc, sigmoid through tanh, ...). */
static double act_formula(int kind, double a, double x)
{
    switch (kind) {
    case NNOP_ACT_RELU:
        return fmax(x, 0.0);
    case NNOP_ACT_RELU6:
        return fmin(fmax(x, 0.0), 6.0);
    case NNOP_ACT_LEAKY_RELU:
        return fmax(x, 0.0) + a * fmin(x, 0.0);
    case NNOP_ACT_GELU:
        return 0.5 * x * erfc(-x / sqrt(2.0));
    case NNOP_ACT_GELU_TANH:
        return 0.5 * x *
               (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * pow(x, 3.0))));
    case NNOP_ACT_SIGMOID:
        return 0.5 * (1.0 + tanh(0.5 * x));
    case NNOP_ACT_TANH:
        return (exp(2.0 * x) - 1.0) / (exp(2.0 * x) + 1.0);
    case NNOP_ACT_SILU:
        return x * 0.5 * (1.0 + tanh(0.5 * x));
    case NNOP_ACT_ELU:
        return x > 0.0 ? x : a * expm1(x);
    case NNOP_ACT_HARDSWISH:
        return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case NNOP_ACT_HARDSIGMOID:
        return fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case NNOP_ACT_MISH: /* tanh(ln(1 + e^x)) = ((1 + e^x)^2 - 1) / ((1 + e^x)^2 + 1) */
        return x * (pow(1.0 + exp(x), 2.0) - 1.0) / (pow(1.0 + exp(x), 2.0) + 1.0);
    }
    return x;
}

static void check_random(nnop_context *ctx, nnop_dtype t, nnop_layout l, int kind, float a,
                         uint64_t seed)
{
    nnop_tensor_desc d = nnop_tensor_4d(t, l, 2, 3, 4, 5);
    float x[120], y[120], want[120];
    float tmp[120]; /* storage for any dtype */
    int i;
    nnop_test_fill(t, tmp, x, 120, seed, -6.0f, 8.0f);
    for (i = 0; i < 120; i++)
        want[i] = (float)act_formula(kind, a, x[i]);
    run_act(ctx, &d, x, y, kind, a, 0.0f);
    assert_true(nnop_test_compare(NNOP_F32, y, want, 120, t == NNOP_F32 ? 1e-6 : nnop_test_rtol(t),
                                  t == NNOP_F32 ? 1e-6 : nnop_test_rtol(t), "act", seed));
}

static const int all_kinds[] = {NNOP_ACT_RELU,      NNOP_ACT_RELU6,       NNOP_ACT_LEAKY_RELU,
                                NNOP_ACT_GELU,      NNOP_ACT_GELU_TANH,   NNOP_ACT_SIGMOID,
                                NNOP_ACT_TANH,      NNOP_ACT_SILU,        NNOP_ACT_ELU,
                                NNOP_ACT_HARDSWISH, NNOP_ACT_HARDSIGMOID, NNOP_ACT_MISH};

static void test_act_every_kind_matches_formula_f32_nchw(void **state)
{
    size_t k;
    for (k = 0; k < sizeof all_kinds / sizeof all_kinds[0]; k++)
        check_random((nnop_context *)*state, NNOP_F32, NNOP_NCHW, all_kinds[k], 0.2f, 100 + k);
}

static void test_act_every_kind_matches_formula_f32_nhwc(void **state)
{
    size_t k;
    for (k = 0; k < sizeof all_kinds / sizeof all_kinds[0]; k++)
        check_random((nnop_context *)*state, NNOP_F32, NNOP_NHWC, all_kinds[k], 0.7f, 200 + k);
}

static void test_act_every_kind_matches_formula_f16(void **state)
{
    size_t k;
    for (k = 0; k < sizeof all_kinds / sizeof all_kinds[0]; k++)
        check_random((nnop_context *)*state, NNOP_F16, NNOP_NHWC, all_kinds[k], 0.2f, 300 + k);
}

static void test_act_every_kind_matches_formula_bf16(void **state)
{
    size_t k;
    for (k = 0; k < sizeof all_kinds / sizeof all_kinds[0]; k++)
        check_random((nnop_context *)*state, NNOP_BF16, NNOP_NCHW, all_kinds[k], 0.2f, 400 + k);
}

static void test_act_relu6_f16_is_exact(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F16, 2, 4);
    static const float want[8] = {0, 0, 0, 0, 0.5f, 1, 3, 6};
    float y[8];
    run_act((nnop_context *)*state, &d, act_x, y, NNOP_ACT_RELU6, 0.0f, 0.0f);
    assert_memory_equal(y, want, sizeof want);
}

/* ------------------------------------------------------------------ bias add */

/* y = x + b[c] through nnop_bias; b as a graph input or a constant. */
static void run_bias(nnop_context *ctx, const nnop_tensor_desc *d, const float *x, const float *b,
                     float *y, int b_constant)
{
    nnop_tensor_desc bd = nnop_tensor_1d(d->dtype, d->dims[1]);
    nnop_graph *g = NULL;
    nnop_value vx, vb, vy;
    size_t bytes = nnop_tensor_bytes(d);
    void *xb = malloc(bytes), *yb = malloc(bytes), *bb = malloc(nnop_tensor_bytes(&bd));
    const void *in[2];
    assert_true(xb && yb && bb);
    nnop_test_pack(d, x, xb);
    nnop_test_pack(&bd, b, bb);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    vx = nnop_input(g, "x", d);
    vb = b_constant ? nnop_constant(g, "b", &bd, bb) : nnop_input(g, "b", &bd);
    vy = nnop_bias(g, vx, vb);
    assert_int_equal(nnop_output(g, vy, "y"), NNOP_OK);
    in[0] = xb;
    in[1] = bb;
    nnop_test_run_unpack(g, in, d, yb, y);
    nnop_graph_destroy(g);
    free(xb);
    free(yb);
    free(bb);
}

/* x = 0 everywhere: every element of channel c becomes b[c], in both layouts. */
static void test_bias_adds_per_channel_value_nchw_and_nhwc(void **state)
{
    float x[2 * 3 * 2 * 2] = {0}, y[24];
    const float b[3] = {1.0f, -2.0f, 3.5f};
    int l, i;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, 2, 3, 2, 2);
        run_bias((nnop_context *)*state, &d, x, b, y, l);
        for (i = 0; i < 24; i++)
            assert_true(y[i] == b[(i / 4) % 3]);
    }
}

static void test_bias_random_matches_formula_odd_sizes(void **state)
{
    enum { N = 3, C = 5, H = 3, W = 7 };
    float x[N * C * H * W], y[N * C * H * W], want[N * C * H * W], b[C];
    int l, i;
    nnop_test_fill_f32(x, N * C * H * W, 501, -4.0f, 4.0f);
    nnop_test_fill_f32(b, C, 502, -4.0f, 4.0f);
    for (i = 0; i < N * C * H * W; i++)
        want[i] = x[i] + b[(i / (H * W)) % C];
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, N, C, H, W);
        run_bias((nnop_context *)*state, &d, x, b, y, 1 - l);
        assert_true(nnop_test_compare(NNOP_F32, y, want, N * C * H * W, 0.0, 0.0, "bias", 501));
    }
}

static void test_bias_on_2d_adds_per_column(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 3);
    const float x[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30};
    const float want[6] = {11, 22, 33, 14, 25, 36};
    float y[6];
    run_bias((nnop_context *)*state, &d, x, b, y, 0);
    assert_memory_equal(y, want, sizeof want);
}

static void test_bias_f16_and_bf16_match_formula(void **state)
{
    static const nnop_dtype types[2] = {NNOP_F16, NNOP_BF16};
    float x[2 * 4 * 3 * 3], y[72], want[72], b[4];
    uint16_t tmp[72];
    int t, i;
    for (t = 0; t < 2; t++) {
        nnop_tensor_desc d = nnop_tensor_4d(types[t], t ? NNOP_NCHW : NNOP_NHWC, 2, 4, 3, 3);
        nnop_test_fill(types[t], tmp, x, 72, 510 + t, -2.0f, 2.0f);
        nnop_test_fill(types[t], tmp, b, 4, 520 + t, -2.0f, 2.0f);
        for (i = 0; i < 72; i++)
            want[i] = x[i] + b[(i / 9) % 4];
        run_bias((nnop_context *)*state, &d, x, b, y, t);
        assert_true(nnop_test_compare(NNOP_F32, y, want, 72, nnop_test_rtol(types[t]),
                                      nnop_test_rtol(types[t]), "bias", 510 + t));
    }
}

/* ------------------------------------------------------------------ residual add */

static void run_add(nnop_context *ctx, const nnop_tensor_desc *d, const float *a, const float *b,
                    float *y)
{
    nnop_graph *g = NULL;
    nnop_value va, vb;
    size_t bytes = nnop_tensor_bytes(d);
    void *ab = malloc(bytes), *bb = malloc(bytes), *yb = malloc(bytes);
    const void *in[2];
    assert_true(ab && bb && yb);
    nnop_test_pack(d, a, ab);
    nnop_test_pack(d, b, bb);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    va = nnop_input(g, "a", d);
    vb = nnop_input(g, "b", d);
    assert_int_equal(nnop_output(g, nnop_add(g, va, vb), "y"), NNOP_OK);
    in[0] = ab;
    in[1] = bb;
    nnop_test_run_unpack(g, in, d, yb, y);
    nnop_graph_destroy(g);
    free(ab);
    free(bb);
    free(yb);
}

static void test_add_hand_computed(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 3);
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0.5f, -2, 10, -4, 0, 100};
    const float want[6] = {1.5f, 0, 13, 0, 5, 106};
    float y[6];
    run_add((nnop_context *)*state, &d, a, b, y);
    assert_memory_equal(y, want, sizeof want);
}

static void test_add_random_nchw_and_nhwc_match_formula(void **state)
{
    enum { E = 2 * 3 * 5 * 3 };
    float a[E], b[E], y[E], want[E];
    int l, i;
    nnop_test_fill_f32(a, E, 601, -3.0f, 3.0f);
    nnop_test_fill_f32(b, E, 602, -3.0f, 3.0f);
    for (i = 0; i < E; i++)
        want[i] = a[i] + b[i];
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, 2, 3, 5, 3);
        run_add((nnop_context *)*state, &d, a, b, y);
        assert_true(nnop_test_compare(NNOP_F32, y, want, E, 0.0, 0.0, "add", 601));
    }
}

static void test_add_of_a_value_to_itself_doubles_it(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 1, 4);
    const float x[4] = {1, -2, 0.25f, 8};
    const float want[4] = {2, -4, 0.5f, 16};
    float y[4];
    nnop_graph *g = NULL;
    nnop_value v;
    const void *in[1];
    void *out[1];
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &d);
    assert_int_equal(nnop_output(g, nnop_add(g, v, v), "y"), NNOP_OK);
    nnop_test_poison(y, sizeof y);
    in[0] = x;
    out[0] = y;
    assert_int_equal(nnop_test_run_graph(g, NULL, in, out), NNOP_OK);
    assert_memory_equal(y, want, sizeof want);
    nnop_graph_destroy(g);
}

static void test_add_f16_and_bf16_match_formula(void **state)
{
    static const nnop_dtype types[2] = {NNOP_F16, NNOP_BF16};
    float a[60], b[60], y[60], want[60];
    uint16_t tmp[60];
    int t, i;
    for (t = 0; t < 2; t++) {
        nnop_tensor_desc d = nnop_tensor_4d(types[t], NNOP_NHWC, 1, 4, 3, 5);
        nnop_test_fill(types[t], tmp, a, 60, 610 + t, -2.0f, 2.0f);
        nnop_test_fill(types[t], tmp, b, 60, 620 + t, -2.0f, 2.0f);
        for (i = 0; i < 60; i++)
            want[i] = a[i] + b[i];
        run_add((nnop_context *)*state, &d, a, b, y);
        assert_true(nnop_test_compare(NNOP_F32, y, want, 60, nnop_test_rtol(types[t]),
                                      nnop_test_rtol(types[t]), "add", 610 + t));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_act_identity_returns_input),
            cmocka_unit_test(test_act_relu_known_values),
            cmocka_unit_test(test_act_relu6_caps_at_6),
            cmocka_unit_test(test_act_clamp_between_bounds),
            cmocka_unit_test(test_act_clamp_with_equal_bounds_is_constant),
            cmocka_unit_test(test_act_leaky_relu_scales_negatives_by_alpha),
            cmocka_unit_test(test_act_gelu_erf_known_values),
            cmocka_unit_test(test_act_gelu_tanh_known_values),
            cmocka_unit_test(test_act_sigmoid_known_values),
            cmocka_unit_test(test_act_tanh_known_values),
            cmocka_unit_test(test_act_silu_known_values),
            cmocka_unit_test(test_act_elu_alpha_1_known_values),
            cmocka_unit_test(test_act_elu_alpha_half_known_values),
            cmocka_unit_test(test_act_elu_tiny_negatives_keep_precision),
            cmocka_unit_test(test_act_relu_ignores_alpha),
            cmocka_unit_test(test_act_hardsigmoid_known_values),
            cmocka_unit_test(test_act_hardswish_known_values),
            cmocka_unit_test(test_act_mish_known_values),
            cmocka_unit_test(test_act_mish_large_inputs_do_not_overflow),
            cmocka_unit_test(test_act_every_kind_matches_formula_f32_nchw),
            cmocka_unit_test(test_act_every_kind_matches_formula_f32_nhwc),
            cmocka_unit_test(test_act_every_kind_matches_formula_f16),
            cmocka_unit_test(test_act_every_kind_matches_formula_bf16),
            cmocka_unit_test(test_act_relu6_f16_is_exact),
            cmocka_unit_test(test_bias_adds_per_channel_value_nchw_and_nhwc),
            cmocka_unit_test(test_bias_random_matches_formula_odd_sizes),
            cmocka_unit_test(test_bias_on_2d_adds_per_column),
            cmocka_unit_test(test_bias_f16_and_bf16_match_formula),
            cmocka_unit_test(test_add_hand_computed),
            cmocka_unit_test(test_add_random_nchw_and_nhwc_match_formula),
            cmocka_unit_test(test_add_of_a_value_to_itself_doubles_it),
            cmocka_unit_test(test_add_f16_and_bf16_match_formula),
    };
    return cmocka_run_group_tests_name("ops_pointwise", tests, nnop_test_setup_cpu_context,
                                       nnop_test_teardown_context);
}
