/* test_graph_errors.c: one test per error class of the graph builder, compile, execute and the
 * one-call entry points. Each asserts the status, a substring of nnop_context_last_error() and
 * that no output buffer was touched (poisoned first, checked unchanged). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* to forge corrupted graphs (cycles, dangling ids) */
#include "nnop_test.h"

static nnop_context *ctx_; /* the group's CPU context */
static float zeros[4096];  /* constant data for weights; only descriptors matter here */

static nnop_graph *new_graph(void)
{
    nnop_graph *g = NULL;
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    assert_non_null(g);
    return g;
}

static nnop_value input4(nnop_graph *g, nnop_dtype t, nnop_layout l, int64_t n, int64_t c,
                         int64_t h, int64_t w)
{
    nnop_tensor_desc d = nnop_tensor_4d(t, l, n, c, h, w);
    nnop_value v = nnop_input(g, "x", &d);
    assert_true(v.id >= 0);
    return v;
}

static nnop_value const4(nnop_graph *g, nnop_dtype t, nnop_layout l, int64_t n, int64_t c,
                         int64_t h, int64_t w)
{
    nnop_tensor_desc d = nnop_tensor_4d(t, l, n, c, h, w);
    nnop_value v;
    assert_true(nnop_tensor_bytes(&d) <= sizeof zeros);
    v = nnop_constant(g, "w", &d, zeros);
    assert_true(v.id >= 0);
    return v;
}

static nnop_value const1(nnop_graph *g, nnop_dtype t, int64_t n)
{
    nnop_tensor_desc d = nnop_tensor_1d(t, n);
    nnop_value v = nnop_constant(g, "p", &d, zeros);
    assert_true(v.id >= 0);
    return v;
}

/* What a failed builder returns (for expect_builder_error after nnop_output errors). */
static nnop_value value_neg(void)
{
    nnop_value v;
    v.id = -1;
    return v;
}

static nnop_conv_params conv_params(int64_t pad, int64_t stride, int64_t dil, int64_t groups)
{
    nnop_conv_params p;
    p.pad[0] = p.pad[1] = pad;
    p.stride[0] = p.stride[1] = stride;
    p.dilation[0] = p.dilation[1] = dil;
    p.groups = groups;
    return p;
}

static nnop_pool_params pool_params(int64_t window, int64_t stride, int64_t pad)
{
    nnop_pool_params p;
    memset(&p, 0, sizeof p);
    p.window[0] = p.window[1] = window;
    p.stride[0] = p.stride[1] = stride;
    p.pad[0] = p.pad[1] = pad;
    return p;
}

/* v is the result of the failing builder. The graph must hold status st with a message
 * containing substr; compile must refuse with the same status and message (and set its out
 * to NULL); nothing may be written to an output buffer; then the graph is destroyed. */
static void expect_builder_error(nnop_graph *g, nnop_value v, nnop_status st, const char *substr)
{
    unsigned char out[256];
    nnop_plan *plan = (nnop_plan *)(void *)out; /* must be reset to NULL */
    nnop_test_poison(out, sizeof out);
    assert_true(v.id < 0);
    assert_int_equal(nnop_graph_status(g), st);
    NNOP_TEST_ASSERT_ERROR(ctx_, substr);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), st);
    assert_null(plan);
    NNOP_TEST_ASSERT_ERROR(ctx_, substr);
    assert_true(nnop_test_is_poisoned(out, sizeof out));
    nnop_graph_destroy(g);
}

/* A graph without builder error that compile must refuse (structural errors). */
static void expect_compile_error(nnop_graph *g, nnop_status st, const char *substr)
{
    unsigned char out[256];
    nnop_plan *plan = (nnop_plan *)(void *)out;
    nnop_test_poison(out, sizeof out);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), st);
    assert_null(plan);
    NNOP_TEST_ASSERT_ERROR(ctx_, substr);
    assert_true(nnop_test_is_poisoned(out, sizeof out));
    nnop_graph_destroy(g);
}

/* ------------------------------------------------------------------ wrong channel count */

static void test_conv_rejects_wrong_channel_count(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(1, 1, 1, 1);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 3, 8, 8);
    nnop_value w = const4(g, NNOP_F32, NNOP_NCHW, 4, 2, 3, 3); /* C = 2, x has 3 */
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE, "wrong channel count");
}

static void test_grouped_conv_rejects_wrong_channels_per_group(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(0, 1, 1, 2);
    nnop_value x = input4(g, NNOP_F32, NNOP_NHWC, 1, 4, 5, 5);
    nnop_value w = const4(g, NNOP_F32, NNOP_NHWC, 4, 4, 1, 1); /* needs C/groups = 2 */
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE, "expected 2");
}

static void test_bias_rejects_wrong_channel_count(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 2, 4, 3, 3);
    (void)state;
    expect_builder_error(g, nnop_bias(g, x, const1(g, NNOP_F32, 5)), NNOP_ERR_SHAPE,
                         "wrong channel count: bias");
}

/* The per-channel ops and flatten take 2 to 4 dims; a 1-D x is refused by each. */
static void test_channel_ops_reject_1d_x(void **state)
{
    int op;
    (void)state;
    for (op = 0; op < 4; op++) {
        nnop_graph *g = new_graph();
        nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 4);
        nnop_value x = nnop_input(g, "x", &d), p = const1(g, NNOP_F32, 4), y;
        y = op == 0   ? nnop_bias(g, x, p)
            : op == 1 ? nnop_batchnorm(g, x, p, p, p, p, 1e-5f)
            : op == 2 ? nnop_softmax(g, x)
                      : nnop_flatten(g, x);
        expect_builder_error(g, y, NNOP_ERR_SHAPE, "x must have 2 to 4 dims");
    }
}

static void test_bias_rejects_2d_bias(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 2, 4, 3, 3);
    nnop_tensor_desc bd = nnop_tensor_2d(NNOP_F32, 4, 1);
    (void)state;
    expect_builder_error(g, nnop_bias(g, x, nnop_constant(g, "b", &bd, zeros)), NNOP_ERR_SHAPE,
                         "must be 1-D");
}

static void test_batchnorm_rejects_wrong_channel_count(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NHWC, 1, 4, 2, 2);
    nnop_value ok = const1(g, NNOP_F32, 4), bad = const1(g, NNOP_F32, 3);
    (void)state;
    expect_builder_error(g, nnop_batchnorm(g, x, ok, ok, ok, bad, 1e-5f), NNOP_ERR_SHAPE,
                         "wrong channel count: var");
}

static void test_batchnorm_rejects_wrong_gamma_count(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 4, 2, 2);
    nnop_value ok = const1(g, NNOP_F32, 4), bad = const1(g, NNOP_F32, 8);
    (void)state;
    expect_builder_error(g, nnop_batchnorm(g, x, bad, ok, ok, ok, 1e-5f), NNOP_ERR_SHAPE, "gamma");
}

static void test_linear_rejects_wrong_input_features(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 2, 8), wd = nnop_tensor_2d(NNOP_F32, 3, 7);
    nnop_value x = nnop_input(g, "x", &xd), w = nnop_constant(g, "w", &wd, zeros);
    (void)state;
    expect_builder_error(g, nnop_linear(g, x, w, nnop_none()), NNOP_ERR_SHAPE,
                         "wrong input features");
}

static void test_linear_rejects_wrong_bias_length(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 2, 8), wd = nnop_tensor_2d(NNOP_F32, 3, 8);
    nnop_value x = nnop_input(g, "x", &xd), w = nnop_constant(g, "w", &wd, zeros);
    (void)state;
    expect_builder_error(g, nnop_linear(g, x, w, const1(g, NNOP_F32, 4)), NNOP_ERR_SHAPE,
                         "bias must be 1-D with 3 elements");
}

static void test_linear_rejects_4d_input(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc wd = nnop_tensor_2d(NNOP_F32, 3, 8);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 2, 2, 2, 2);
    nnop_value w = nnop_constant(g, "w", &wd, zeros);
    (void)state;
    expect_builder_error(g, nnop_linear(g, x, w, nnop_none()), NNOP_ERR_SHAPE, "nnop_flatten");
}

static void test_add_rejects_different_shapes(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value a = input4(g, NNOP_F32, NNOP_NCHW, 1, 4, 3, 3);
    nnop_value b = input4(g, NNOP_F32, NNOP_NCHW, 1, 4, 3, 4);
    (void)state;
    expect_builder_error(g, nnop_add(g, a, b), NNOP_ERR_SHAPE, "differ in dim 3");
}

static void test_add_rejects_different_layouts(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value a = input4(g, NNOP_F32, NNOP_NCHW, 1, 4, 3, 3);
    nnop_value b = input4(g, NNOP_F32, NNOP_NHWC, 1, 4, 3, 3);
    (void)state;
    expect_builder_error(g, nnop_add(g, a, b), NNOP_ERR_SHAPE, "layouts differ");
}

/* ------------------------------------------------------------------ non-positive dims */

static void test_input_rejects_zero_dim(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, 0, 5);
    (void)state;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT,
                         "dims[2] = 0 is not positive");
}

static void test_input_rejects_negative_dim(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, -3, 4, 5);
    (void)state;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT,
                         "dims[1] = -3 is not positive");
}

static void test_constant_rejects_non_positive_dim(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 0);
    (void)state;
    expect_builder_error(g, nnop_constant(g, "b", &d, zeros), NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_constant('b'): dims[0] = 0");
}

/* Dims whose product overflows: refused (and nnop_tensor_4d itself must not overflow). */
static void test_input_rejects_element_count_overflow(void **state)
{
    nnop_graph *g = new_graph();
    int64_t big = (int64_t)1 << 40;
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, big, big, big, big);
    (void)state;
    assert_int_equal(nnop_tensor_elements(&d), 0);
    assert_int_equal(nnop_tensor_bytes(&d), 0);
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT, "overflow");
}

/* ------------------------------------------------------------------ conv / pool parameters */

static void conv_with(const nnop_conv_params *p, nnop_status st, const char *substr)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 4, 8, 8);
    nnop_value w = const4(g, NNOP_F32, NNOP_NCHW, 4,
                          4 / (p->groups > 0 && 4 % p->groups == 0 ? p->groups : 1), 3, 3);
    expect_builder_error(g, nnop_conv(g, x, w, p), st, substr);
}

static void test_conv_rejects_zero_stride(void **state)
{
    nnop_conv_params p = conv_params(1, 1, 1, 1);
    (void)state;
    p.stride[1] = 0;
    conv_with(&p, NNOP_ERR_INVALID_ARGUMENT, "stride[1] = 0 must be >= 1");
}

static void test_conv_rejects_negative_stride(void **state)
{
    nnop_conv_params p = conv_params(1, -2, 1, 1);
    (void)state;
    conv_with(&p, NNOP_ERR_INVALID_ARGUMENT, "stride[0] = -2");
}

static void test_conv_rejects_zero_dilation(void **state)
{
    nnop_conv_params p = conv_params(1, 1, 1, 1);
    (void)state;
    p.dilation[0] = 0;
    conv_with(&p, NNOP_ERR_INVALID_ARGUMENT, "dilation[0] = 0 must be >= 1");
}

static void test_conv_rejects_negative_pad(void **state)
{
    nnop_conv_params p = conv_params(1, 1, 1, 1);
    (void)state;
    p.pad[1] = -1;
    conv_with(&p, NNOP_ERR_INVALID_ARGUMENT, "pad[1] = -1 is negative");
}

/* Extreme values must be refused without signed overflow (UBSan aborts on it). */
static void test_conv_rejects_huge_pad_without_overflow(void **state)
{
    nnop_conv_params p = conv_params(INT64_MAX, 1, 1, 1);
    (void)state;
    conv_with(&p, NNOP_ERR_INVALID_ARGUMENT, "pad[0]");
}

static void test_conv_rejects_huge_dilation_without_overflow(void **state)
{
    nnop_conv_params p = conv_params(0, 1, INT64_MAX, 1);
    (void)state;
    conv_with(&p, NNOP_ERR_INVALID_ARGUMENT, "dilation[0]");
}

static void test_conv_rejects_huge_stride_without_overflow(void **state)
{
    nnop_conv_params p = conv_params(0, INT64_MAX, 1, 1);
    (void)state;
    conv_with(&p, NNOP_ERR_INVALID_ARGUMENT, "stride[0]");
}

/* A filter so tall that (R - 1) * dilation overflows: only a descriptor, no data. */
static void test_conv_rejects_filter_extent_overflow(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(0, 1, INT32_MAX, 1);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, (int64_t)1 << 38, 1);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 1, 8, 8);
    nnop_value w = nnop_input(g, "w", &wd);
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE, "extent overflows");
}

static void test_conv_rejects_zero_groups(void **state)
{
    nnop_conv_params p = conv_params(1, 1, 1, 0);
    (void)state;
    conv_with(&p, NNOP_ERR_INVALID_ARGUMENT, "groups = 0 must be >= 1");
}

static void test_conv_rejects_groups_not_dividing_channels(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(0, 1, 1, 2);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 3, 4, 4); /* C = 3 */
    nnop_value w = const4(g, NNOP_F32, NNOP_NCHW, 4, 1, 1, 1);
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE,
                         "groups = 2 does not divide C = 3");
}

static void test_conv_rejects_groups_not_dividing_filters(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(0, 1, 1, 4);
    nnop_value x = input4(g, NNOP_F32, NNOP_NHWC, 1, 4, 4, 4);
    nnop_value w = const4(g, NNOP_F32, NNOP_NHWC, 6, 1, 1, 1); /* K = 6 */
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE, "K = 6");
}

static void test_conv_rejects_filter_larger_than_padded_input(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(1, 1, 1, 1);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 3, 3);
    nnop_value w = const4(g, NNOP_F32, NNOP_NCHW, 2, 2, 7, 3); /* 7 > 3 + 2 */
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE, "exceeds the padded input");
}

static void test_conv_rejects_dilated_filter_larger_than_input(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(0, 1, 3, 1);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 6, 6);
    nnop_value w = const4(g, NNOP_F32, NNOP_NCHW, 2, 2, 3, 3); /* extent 7 > 6 */
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE, "extent 7");
}

static void test_conv_rejects_non_4d_input(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(0, 1, 1, 1);
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 4, 4);
    nnop_value x = nnop_input(g, "x", &xd);
    nnop_value w = const4(g, NNOP_F32, NNOP_NCHW, 2, 4, 1, 1);
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE, "must be 4-D");
}

static void pool_with(nnop_pool_kind kind, const nnop_pool_params *p, nnop_status st,
                      const char *substr)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NHWC, 1, 2, 6, 6);
    expect_builder_error(g, nnop_pool(g, x, kind, p), st, substr);
}

static void test_pool_rejects_zero_stride(void **state)
{
    nnop_pool_params p = pool_params(2, 2, 0);
    (void)state;
    p.stride[0] = 0;
    pool_with(NNOP_POOL_MAX, &p, NNOP_ERR_INVALID_ARGUMENT, "stride[0] = 0 must be >= 1");
}

static void test_pool_rejects_zero_window(void **state)
{
    nnop_pool_params p = pool_params(2, 2, 0);
    (void)state;
    p.window[1] = 0;
    pool_with(NNOP_POOL_AVG, &p, NNOP_ERR_INVALID_ARGUMENT, "window[1] = 0 must be >= 1");
}

static void test_pool_rejects_negative_pad(void **state)
{
    nnop_pool_params p = pool_params(3, 1, -1);
    (void)state;
    pool_with(NNOP_POOL_MAX, &p, NNOP_ERR_INVALID_ARGUMENT, "pad[0] = -1 must be >= 0");
}

static void test_pool_rejects_pad_over_half_the_window(void **state)
{
    nnop_pool_params p = pool_params(3, 1, 2);
    (void)state;
    pool_with(NNOP_POOL_MAX, &p, NNOP_ERR_INVALID_ARGUMENT, "exceeds half the window");
}

static void test_pool_rejects_huge_pad_without_overflow(void **state)
{
    nnop_pool_params p = pool_params(3, 1, INT64_MAX);
    (void)state;
    pool_with(NNOP_POOL_AVG, &p, NNOP_ERR_INVALID_ARGUMENT, "pad[0]");
}

static void test_pool_rejects_huge_window_without_overflow(void **state)
{
    nnop_pool_params p = pool_params(INT64_MAX, 1, INT64_MAX / 2);
    (void)state;
    pool_with(NNOP_POOL_MAX, &p, NNOP_ERR_INVALID_ARGUMENT, "window[0]");
}

static void test_pool_rejects_window_larger_than_input(void **state)
{
    nnop_pool_params p = pool_params(7, 1, 0);
    (void)state;
    pool_with(NNOP_POOL_AVG, &p, NNOP_ERR_SHAPE, "window 7 exceeds the padded input 6");
}

static void test_pool_rejects_non_4d_input(void **state)
{
    nnop_graph *g = new_graph();
    nnop_pool_params p = pool_params(2, 2, 0);
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 4, 4);
    nnop_value x = nnop_input(g, "x", &xd);
    (void)state;
    expect_builder_error(g, nnop_pool(g, x, NNOP_POOL_MAX, &p), NNOP_ERR_SHAPE, "must be 4-D");
}

static void test_global_avg_pool_rejects_non_4d_input(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 4, 4);
    nnop_value x = nnop_input(g, "x", &xd);
    (void)state;
    expect_builder_error(g, nnop_global_avg_pool(g, x), NNOP_ERR_SHAPE, "must be 4-D");
}

static void test_batchnorm_rejects_negative_or_nan_eps(void **state)
{
    static const float bad[3] = {-1e-5f, NAN, INFINITY};
    int i;
    (void)state;
    for (i = 0; i < 3; i++) {
        nnop_graph *g = new_graph();
        nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
        nnop_value p = const1(g, NNOP_F32, 2);
        expect_builder_error(g, nnop_batchnorm(g, x, p, p, p, p, bad[i]), NNOP_ERR_INVALID_ARGUMENT,
                             "eps");
    }
}

/* ------------------------------------------------------------------ dtype mix */

static void test_conv_rejects_dtype_mix(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(1, 1, 1, 1);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    nnop_value w = const4(g, NNOP_F16, NNOP_NCHW, 2, 2, 3, 3);
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, &p), NNOP_ERR_SHAPE,
                         "dtype mix: input 0 is f32 but input 1 is f16");
}

static void test_add_rejects_dtype_mix(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value a = input4(g, NNOP_F16, NNOP_NHWC, 1, 2, 4, 4);
    nnop_value b = input4(g, NNOP_BF16, NNOP_NHWC, 1, 2, 4, 4);
    (void)state;
    expect_builder_error(g, nnop_add(g, a, b), NNOP_ERR_SHAPE, "dtype mix");
}

static void test_batchnorm_rejects_dtype_mix(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F16, NNOP_NCHW, 1, 2, 2, 2);
    nnop_value h = const1(g, NNOP_F16, 2), f = const1(g, NNOP_F32, 2);
    (void)state;
    expect_builder_error(g, nnop_batchnorm(g, x, h, h, f, h, 1e-5f), NNOP_ERR_SHAPE,
                         "input 3 is f32");
}

/* ------------------------------------------------------------------ unknown enum values */

static void test_input_rejects_unknown_dtype(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, 4, 4);
    (void)state;
    d.dtype = (nnop_dtype)7;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT,
                         "unknown dtype value 7");
}

static void test_constant_rejects_negative_dtype(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 4);
    (void)state;
    d.dtype = (nnop_dtype)-1;
    expect_builder_error(g, nnop_constant(g, "b", &d, zeros), NNOP_ERR_INVALID_ARGUMENT,
                         "unknown dtype value -1");
}

static void test_act_rejects_unknown_kind(void **state)
{
    static const int bad[2] = {99, -1};
    int i;
    (void)state;
    for (i = 0; i < 2; i++) {
        nnop_graph *g = new_graph();
        nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
        expect_builder_error(g, nnop_act(g, x, (nnop_act_kind)bad[i], 0.0f),
                             NNOP_ERR_INVALID_ARGUMENT,
                             i ? "unknown activation kind -1" : "unknown activation kind 99");
    }
}

static void test_act_rejects_clamp_kind_without_bounds(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    (void)state;
    expect_builder_error(g, nnop_act(g, x, NNOP_ACT_CLAMP, 0.0f), NNOP_ERR_INVALID_ARGUMENT,
                         "use nnop_clamp");
}

static void test_act_rejects_non_finite_alpha(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    (void)state;
    expect_builder_error(g, nnop_act(g, x, NNOP_ACT_LEAKY_RELU, NAN), NNOP_ERR_INVALID_ARGUMENT,
                         "alpha is not finite");
}

static void test_clamp_rejects_inverted_or_nan_bounds(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    (void)state;
    expect_builder_error(g, nnop_clamp(g, x, 2.0f, 1.0f), NNOP_ERR_INVALID_ARGUMENT,
                         "lo = 2 > hi = 1");
    g = new_graph();
    x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    expect_builder_error(g, nnop_clamp(g, x, NAN, 1.0f), NNOP_ERR_INVALID_ARGUMENT, "NaN");
}

static void test_pool_rejects_unknown_kind(void **state)
{
    nnop_pool_params p = pool_params(2, 2, 0);
    (void)state;
    pool_with((nnop_pool_kind)5, &p, NNOP_ERR_INVALID_ARGUMENT, "unknown pool kind 5");
}

static void test_context_rejects_unknown_backend(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = (nnop_context *)(void *)&o;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = (nnop_backend)9;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(nnop_context_create_error(), "backend has unknown value 9"));
}

static void test_context_rejects_unknown_policy(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = (nnop_context *)(void *)&o;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    o.policy = (nnop_engine_policy)42;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(nnop_context_create_error(), "policy has unknown value 42"));
}

/* Reserved fields must be zero: a caller with garbage there would change behaviour silently
 * once a field gets a meaning (found by the outside API test). */
static void test_reserved_fields_must_be_zero(void **state)
{
    nnop_context_options o;
    nnop_compile_options co;
    nnop_context *ctx = (nnop_context *)(void *)&o;
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 2);
    nnop_plan *plan = (nnop_plan *)(void *)&co;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    o.reserved[5] = 1;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(nnop_context_create_error(), "options->reserved[5] is not zero"));
    assert_int_equal(nnop_output(g, nnop_input(g, "x", &d), "y"), NNOP_OK);
    nnop_compile_options_init(&co);
    co.reserved[3] = 3;
    assert_int_equal(nnop_graph_compile(g, &co, &plan), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(plan);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_graph_compile: opts->reserved is not all zero");
    co.reserved[3] = 0;
    assert_int_equal(nnop_graph_compile(g, &co, &plan), NNOP_OK);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* nnop_output on a graph with an error: this call's message, carrying the error that stuck
 * (it once left the earlier call's message, which read as if about this one). */
static void test_output_on_an_errored_graph_says_so(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 2);
    nnop_value x = nnop_input(g, "x", &d);
    (void)state;
    assert_true(nnop_input(g, "bad", NULL).id < 0);
    assert_int_equal(nnop_output(g, x, "later"), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_output('later'): the graph has a builder error: "
                                 "nnop_input('bad'): descriptor is NULL");
    nnop_graph_destroy(g);
}

static void test_context_rejects_negative_device(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = (nnop_context *)(void *)&o;
    (void)state;
    nnop_context_options_init(&o);
    o.device = -1;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(nnop_context_create_error(), "device -1 is negative"));
}

static void test_context_rejects_too_many_load_threads(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = (nnop_context *)(void *)&o;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    o.load_threads = 9;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(nnop_context_create_error(), "load_threads 9 is outside 0..8"));
    o.load_threads = -1;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    o.load_threads = 8;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    nnop_context_destroy(ctx);
}

static void test_context_rejects_unknown_prefetch_value(void **state)
{
    static const int bad[] = {1, 2, -2};
    nnop_context_options o;
    nnop_context *ctx = (nnop_context *)(void *)&o;
    size_t i;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.prefetch = bad[i];
        assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
        assert_null(ctx);
        assert_non_null(strstr(nnop_context_create_error(), "options->prefetch"));
    }
    o.prefetch = -1;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    nnop_context_destroy(ctx);
}

static void test_convert_rejects_unknown_dtype_and_writes_nothing(void **state)
{
    float src[4] = {1, 2, 3, 4};
    unsigned char dst[16];
    (void)state;
    nnop_test_poison(dst, sizeof dst);
    assert_int_equal(nnop_convert((nnop_dtype)6, src, NNOP_F32, dst, 4), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_convert(NNOP_F32, src, (nnop_dtype)-2, dst, 4),
                     NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_convert(NNOP_F32, src, NNOP_F16, dst, -1), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_convert(NNOP_F32, NULL, NNOP_F16, dst, 4), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_convert(NNOP_F32, src, NNOP_F16, NULL, 4), NNOP_ERR_INVALID_ARGUMENT);
    assert_true(nnop_test_is_poisoned(dst, sizeof dst));
    assert_int_equal(nnop_dtype_size((nnop_dtype)6), 0);
}

/* ------------------------------------------------------------------ NULL pointers */

static void test_graph_create_rejects_null_out(void **state)
{
    (void)state;
    assert_int_equal(nnop_graph_create(ctx_, NULL), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_graph_create: out is NULL");
}

static void test_graph_create_rejects_null_context(void **state)
{
    nnop_graph *g = (nnop_graph *)(void *)&g;
    (void)state;
    assert_int_equal(nnop_graph_create(NULL, &g), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(g);
    assert_non_null(nnop_context_last_error(NULL)); /* never NULL, even without a context */
}

static void test_input_rejects_null_desc(void **state)
{
    nnop_graph *g = new_graph();
    (void)state;
    expect_builder_error(g, nnop_input(g, "img", NULL), NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_input('img'): descriptor is NULL");
}

static void test_constant_rejects_null_desc(void **state)
{
    nnop_graph *g = new_graph();
    (void)state;
    expect_builder_error(g, nnop_constant(g, "w", NULL, zeros), NNOP_ERR_INVALID_ARGUMENT,
                         "descriptor is NULL");
}

static void test_constant_rejects_null_data(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 4);
    (void)state;
    expect_builder_error(g, nnop_constant(g, "w1", &d, NULL), NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_constant('w1'): host_data is NULL");
}

static void test_conv_rejects_null_params(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    nnop_value w = const4(g, NNOP_F32, NNOP_NCHW, 2, 2, 3, 3);
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, w, NULL), NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_conv: params is NULL");
}

static void test_pool_rejects_null_params(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    (void)state;
    expect_builder_error(g, nnop_pool(g, x, NNOP_POOL_MAX, NULL), NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_pool: params is NULL");
}

static void test_compile_rejects_null_out_and_null_graph(void **state)
{
    nnop_graph *g = new_graph();
    nnop_plan *plan = (nnop_plan *)(void *)&plan;
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    (void)state;
    assert_int_equal(nnop_output(g, nnop_act(g, x, NNOP_ACT_RELU, 0.0f), "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, NULL), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_graph_compile: out is NULL");
    assert_int_equal(nnop_graph_compile(NULL, NULL, &plan), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(plan);
    nnop_graph_destroy(g);
}

/* A compiled relu graph with two inputs and two outputs, for the execute checks. */
static nnop_plan *two_by_two_plan(void)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 4);
    nnop_value a = nnop_input(g, "a", &d), b = nnop_input(g, "b", &d);
    nnop_plan *plan = NULL;
    assert_int_equal(nnop_output(g, nnop_add(g, a, b), "sum"), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, a, NNOP_ACT_RELU, 0.0f), "relu"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    nnop_graph_destroy(g);
    return plan;
}

static void test_execute_rejects_null_arrays_and_entries(void **state)
{
    nnop_plan *plan = two_by_two_plan();
    float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {0}, y0[8], y1[8];
    const void *in_ok[2], *in_bad[2];
    void *out_ok[2], *out_bad0[2], *out_bad1[2];
    (void)state;
    in_ok[0] = a, in_ok[1] = b;
    in_bad[0] = a, in_bad[1] = NULL;
    out_ok[0] = y0, out_ok[1] = y1;
    out_bad0[0] = NULL, out_bad0[1] = y1;
    out_bad1[0] = y0, out_bad1[1] = NULL;
    nnop_test_poison(y0, sizeof y0);
    nnop_test_poison(y1, sizeof y1);

    assert_int_equal(nnop_plan_execute(plan, NULL, out_ok), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "inputs array is NULL");
    assert_int_equal(nnop_plan_execute(plan, in_ok, NULL), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "outputs array is NULL");
    assert_int_equal(nnop_plan_execute(plan, in_bad, out_ok), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "inputs[1] ('b') is NULL");
    assert_int_equal(nnop_plan_execute(plan, in_ok, out_bad0), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "outputs[0] ('sum') is NULL");
    assert_int_equal(nnop_plan_execute(plan, in_ok, out_bad1), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "outputs[1] ('relu') is NULL");
    assert_true(nnop_test_is_poisoned(y0, sizeof y0));
    assert_true(nnop_test_is_poisoned(y1, sizeof y1));

    /* and the same plan still runs with good arguments, clearing the error */
    assert_int_equal(nnop_plan_execute(plan, in_ok, out_ok), NNOP_OK);
    assert_string_equal(nnop_context_last_error(ctx_), "");
    assert_memory_equal(y0, a, sizeof a);
    assert_memory_equal(y1, a, sizeof a);
    nnop_plan_destroy(plan);
}

static void test_execute_rejects_null_plan(void **state)
{
    float y[8];
    void *out[1];
    (void)state;
    out[0] = y;
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_plan_execute(NULL, NULL, out), NNOP_ERR_INVALID_ARGUMENT);
    assert_true(nnop_test_is_poisoned(y, sizeof y));
}

static void test_null_graph_and_plan_are_handled_everywhere(void **state)
{
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 4), out;
    char buf[8];
    nnop_value v;
    (void)state;
    v.id = 0;
    assert_true(nnop_input(NULL, "x", &d).id < 0);
    assert_true(nnop_constant(NULL, "x", &d, zeros).id < 0);
    assert_true(nnop_act(NULL, v, NNOP_ACT_RELU, 0.0f).id < 0);
    assert_true(nnop_softmax(NULL, v).id < 0);
    assert_int_equal(nnop_output(NULL, v, "y"), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_graph_status(NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_value_desc(NULL, v, &out), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_num_inputs(NULL), 0);
    assert_int_equal(nnop_plan_num_outputs(NULL), 0);
    assert_int_equal(nnop_plan_num_partitions(NULL), 0);
    assert_int_equal(nnop_plan_input_desc(NULL, 0, &out), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_output_desc(NULL, 0, &out), NNOP_ERR_INVALID_ARGUMENT);
    buf[0] = 'x';
    assert_int_equal(nnop_plan_describe(NULL, buf, sizeof buf), 0);
    assert_int_equal(buf[0], '\0');
    nnop_graph_destroy(NULL);
    nnop_plan_destroy(NULL);
    nnop_context_destroy(NULL);
    assert_int_equal(nnop_tensor_elements(NULL), 0);
    assert_int_equal(nnop_tensor_bytes(NULL), 0);
}

static void test_value_desc_and_plan_descs_reject_null_out_and_bad_index(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 4), out;
    nnop_value x = nnop_input(g, "x", &d), bad;
    nnop_plan *plan = NULL;
    (void)state;
    bad.id = 12345;
    assert_int_equal(nnop_value_desc(g, x, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_value_desc(g, bad, &out), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_value_desc(g, nnop_none(), &out), NNOP_ERR_INVALID_ARGUMENT);
    bad.id = -1;
    assert_int_equal(nnop_value_desc(g, bad, &out), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_output(g, nnop_act(g, x, NNOP_ACT_TANH, 0.0f), "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_input_desc(plan, 0, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_input_desc(plan, 1, &out), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_input_desc(plan, -1, &out), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_output_desc(plan, 1, &out), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_output_desc(plan, 0, NULL), NNOP_ERR_INVALID_ARGUMENT);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

static void test_context_create_rejects_null_out(void **state)
{
    (void)state;
    assert_int_equal(nnop_context_create(NULL, NULL), NNOP_ERR_INVALID_ARGUMENT);
}

static void test_memory_functions_reject_null_pointers(void **state)
{
    unsigned char host[16], dev[16];
    void *p = (void *)host;
    (void)state;
    nnop_test_poison(dev, sizeof dev);
    nnop_test_poison(host, sizeof host);
    assert_int_equal(nnop_malloc(ctx_, 16, NULL), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_malloc: out is NULL");
    assert_int_equal(nnop_malloc(NULL, 16, &p), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(p);
    assert_int_equal(nnop_copy_in(ctx_, NULL, host, 16), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_copy_in: dst is NULL");
    assert_int_equal(nnop_copy_in(ctx_, dev, NULL, 16), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_copy_in: src is NULL");
    assert_int_equal(nnop_copy_out(ctx_, host, NULL, 16), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_copy_out: src is NULL");
    assert_int_equal(nnop_copy_out(NULL, host, dev, 16), NNOP_ERR_INVALID_ARGUMENT);
    assert_true(nnop_test_is_poisoned(dev, sizeof dev));
    assert_true(nnop_test_is_poisoned(host, sizeof host));
}

/* ------------------------------------------------------------------ one-call entry points */

typedef struct oneshot_args {
    nnop_tensor_desc xd, wd, yd;
    float x[1 * 2 * 5 * 5], w[3 * 2 * 3 * 3], b[3], y[1 * 3 * 5 * 5];
    nnop_conv_params p;
} oneshot_args;

static void oneshot_init(oneshot_args *a)
{
    memset(a, 0, sizeof *a);
    a->xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 2, 5, 5);
    a->wd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 3, 2, 3, 3);
    a->yd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 3, 5, 5);
    a->p = conv_params(1, 1, 1, 1);
    nnop_test_fill_f32(a->x, 50, 1, -1.0f, 1.0f);
    nnop_test_fill_f32(a->w, 54, 2, -1.0f, 1.0f);
    nnop_test_poison(a->y, sizeof a->y);
}

/* The message starts with the function called and never names a call the user did not make
 * (an outside tester saw "nnop_graph_compile: ... nnop_input('x'): ..." from the one-call op). */
static void assert_oneshot_message(const char *api)
{
    const char *msg = nnop_context_last_error(ctx_);
    assert_non_null(strstr(msg, api));
    assert_null(strstr(msg, "nnop_graph_compile"));
    assert_null(strstr(msg, "nnop_input"));
    assert_null(strstr(msg, "node #"));
}

static void expect_oneshot_error(oneshot_args *a, const nnop_tensor_desc *yd, nnop_status st,
                                 const char *substr)
{
    assert_int_equal(nnop_conv_bias_relu(ctx_, &a->xd, a->x, &a->wd, a->w, a->b, &a->p, yd, a->y),
                     st);
    NNOP_TEST_ASSERT_ERROR(ctx_, substr);
    assert_oneshot_message("nnop_conv_bias_relu: ");
    assert_true(nnop_test_is_poisoned(a->y, sizeof a->y));
}

static void test_conv_bias_relu_rejects_wrong_y_shape_and_leaves_y_untouched(void **state)
{
    oneshot_args a;
    nnop_tensor_desc yd;
    (void)state;
    oneshot_init(&a);
    yd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 3, 4, 5); /* H should be 5 */
    expect_oneshot_error(&a, &yd, NNOP_ERR_SHAPE,
                         "nnop_conv_bias_relu: y_desc f32[1,3,4,5] NHWC does not match");
    NNOP_TEST_ASSERT_ERROR(ctx_, "f32[1,3,5,5] NHWC");
    yd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 4, 5, 5); /* K should be 3 */
    expect_oneshot_error(&a, &yd, NNOP_ERR_SHAPE, "does not match the inferred output");
    /* a correct call afterwards writes y */
    assert_int_equal(nnop_conv_bias_relu(ctx_, &a.xd, a.x, &a.wd, a.w, a.b, &a.p, &a.yd, a.y),
                     NNOP_OK);
    assert_false(nnop_test_is_poisoned(a.y, sizeof a.y));
}

static void test_conv_bias_relu_rejects_wrong_y_layout(void **state)
{
    oneshot_args a;
    nnop_tensor_desc yd;
    (void)state;
    oneshot_init(&a);
    yd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, 5, 5); /* x is NHWC */
    expect_oneshot_error(&a, &yd, NNOP_ERR_SHAPE, "NCHW does not match");
}

static void test_conv_bias_relu_rejects_wrong_y_dtype(void **state)
{
    oneshot_args a;
    nnop_tensor_desc yd;
    (void)state;
    oneshot_init(&a);
    yd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 1, 3, 5, 5);
    expect_oneshot_error(&a, &yd, NNOP_ERR_SHAPE, "y_desc f16");
}

static void test_conv_bias_relu_reports_builder_errors_and_leaves_y_untouched(void **state)
{
    oneshot_args a;
    (void)state;
    oneshot_init(&a);
    a.p.stride[0] = 0;
    expect_oneshot_error(&a, &a.yd, NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_conv_bias_relu: x_desc, w_desc and p: ");
    NNOP_TEST_ASSERT_ERROR(ctx_, "stride[0] = 0");
    oneshot_init(&a);
    a.wd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 3, 1, 3, 3);
    expect_oneshot_error(&a, &a.yd, NNOP_ERR_SHAPE, "wrong channel count");
    oneshot_init(&a);
    a.xd.dims[2] = 0;
    expect_oneshot_error(&a, &a.yd, NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_conv_bias_relu: x_desc: dims[2] = 0");
    oneshot_init(&a);
    a.xd.strides[2] = 7; /* not packed */
    expect_oneshot_error(&a, &a.yd, NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_conv_bias_relu: x_desc: strides are not packed");
    oneshot_init(&a);
    a.yd.strides[2] = 99; /* same dims: the message once showed two equal shapes */
    expect_oneshot_error(&a, &a.yd, NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_conv_bias_relu: y_desc: strides are not packed");
    oneshot_init(&a);
    a.wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 3, 2, 3, 3);
    expect_oneshot_error(&a, &a.yd, NNOP_ERR_SHAPE, "dtype mix");
}

static void test_conv_bias_relu_rejects_each_null_argument(void **state)
{
    static const char *const names[7] = {"x_desc", "x", "w_desc", "w", "p", "y_desc", "y"};
    oneshot_args a;
    char want[64];
    int i;
    (void)state;
    for (i = 0; i < 7; i++) {
        nnop_status st;
        oneshot_init(&a);
        st = nnop_conv_bias_relu(ctx_, i == 0 ? NULL : &a.xd, i == 1 ? NULL : a.x,
                                 i == 2 ? NULL : &a.wd, i == 3 ? NULL : a.w, a.b,
                                 i == 4 ? NULL : &a.p, i == 5 ? NULL : &a.yd, i == 6 ? NULL : a.y);
        assert_int_equal(st, NNOP_ERR_INVALID_ARGUMENT);
        snprintf(want, sizeof want, ": %s is NULL", names[i]);
        NNOP_TEST_ASSERT_ERROR(ctx_, want);
        assert_true(nnop_test_is_poisoned(a.y, sizeof a.y));
    }
    oneshot_init(&a);
    assert_int_equal(nnop_conv_bias_relu(NULL, &a.xd, a.x, &a.wd, a.w, a.b, &a.p, &a.yd, a.y),
                     NNOP_ERR_INVALID_ARGUMENT);
    assert_true(nnop_test_is_poisoned(a.y, sizeof a.y));
}

static void test_conv_bias_act_rejects_unknown_and_clamp_activation(void **state)
{
    oneshot_args a;
    (void)state;
    oneshot_init(&a);
    assert_int_equal(
            nnop_conv_bias_act(ctx_, &a.xd, a.x, &a.wd, a.w, a.b, &a.p, 77, 0.0f, &a.yd, a.y),
            NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_conv_bias_act: act: unknown activation kind 77");
    assert_oneshot_message("nnop_conv_bias_act: ");
    assert_int_equal(nnop_conv_bias_act(ctx_, &a.xd, a.x, &a.wd, a.w, a.b, &a.p, NNOP_ACT_CLAMP,
                                        0.0f, &a.yd, a.y),
                     NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_conv_bias_act: act: ");
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_clamp");
    assert_true(nnop_test_is_poisoned(a.y, sizeof a.y));
}

/* ------------------------------------------------------------------ dangling values */

static void test_builder_rejects_out_of_range_value_id(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value bad;
    (void)state;
    input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    bad.id = g->tag << NNOP__VALUE_INDEX_BITS | 1000; /* this graph's tag, an index past its end */
    expect_builder_error(g, nnop_act(g, bad, NNOP_ACT_RELU, 0.0f), NNOP_ERR_INVALID_ARGUMENT,
                         ") is a dangling value: this graph has fewer values");
}

/* The negative id returned by an errored builder of another graph is refused here. */
static void test_builder_rejects_value_from_an_errored_builder(void **state)
{
    nnop_graph *other = new_graph(), *g;
    nnop_value bad = nnop_input(other, "x", NULL), x;
    (void)state;
    assert_true(bad.id < 0);
    nnop_graph_destroy(other);
    g = new_graph();
    x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    expect_builder_error(g, nnop_add(g, x, bad), NNOP_ERR_INVALID_ARGUMENT,
                         "input 1 (id -1) is an error value");
}

/* A value of a bigger graph: its index is past this graph's end, and its tag is another. */
static void test_builder_rejects_value_of_another_graph(void **state)
{
    nnop_graph *big = new_graph(), *g;
    nnop_value v = nnop_none();
    int i;
    (void)state;
    for (i = 0; i < 5; i++)
        v = input4(big, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    g = new_graph();
    input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    expect_builder_error(g, nnop_softmax(g, v), NNOP_ERR_INVALID_ARGUMENT,
                         "is a value of another graph");
    nnop_graph_destroy(big);
}

/* The case an outside user hit: graph 2 has a value at the same index as graph 1's, so
 * without the graph's tag in the id graph 2 computed on its own value, silently. */
static void test_builder_rejects_value_of_another_graph_at_a_valid_index(void **state)
{
    nnop_graph *one = new_graph(), *two = new_graph();
    nnop_value a = input4(one, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    nnop_value b = input4(two, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    nnop_tensor_desc d;
    (void)state;
    assert_true(a.id >= 0 && b.id >= 0);
    assert_int_equal(nnop_value_desc(two, a, &d), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "is a value of another graph");
    assert_int_equal(nnop_output(one, nnop_act(one, b, NNOP_ACT_RELU, 0.0f), "y"),
                     NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_act: input 0 (id ");
    NNOP_TEST_ASSERT_ERROR(ctx_, ") is a value of another graph");
    expect_builder_error(two, nnop_add(two, b, a), NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_add: input 1 (id ");
    nnop_graph_destroy(one);
}

/* Tags cycle through 126 values: each graph differs from the 125 made before it on the same
 * context, so a value kept from a recent graph is always caught. */
static void test_consecutive_graphs_never_share_a_tag(void **state)
{
    nnop_graph *first = new_graph(), *g;
    nnop_value v = input4(first, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    int i;
    (void)state;
    for (i = 1; i < NNOP__GRAPH_TAGS; i++) {
        nnop_tensor_desc d;
        g = new_graph();
        assert_int_not_equal(g->tag, first->tag);
        input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
        assert_int_equal(nnop_value_desc(g, v, &d), NNOP_ERR_INVALID_ARGUMENT);
        nnop_graph_destroy(g);
    }
    nnop_graph_destroy(first);
}

/* nnop_none() is only for optional operands (linear's bias). */
static void test_builder_rejects_none_for_a_required_operand(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(0, 1, 1, 1);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    (void)state;
    expect_builder_error(g, nnop_conv(g, x, nnop_none(), &p), NNOP_ERR_INVALID_ARGUMENT,
                         "input 1 is required");
    g = new_graph();
    x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    expect_builder_error(g, nnop_bias(g, x, nnop_none()), NNOP_ERR_INVALID_ARGUMENT, "required");
    g = new_graph();
    expect_builder_error(g, nnop_act(g, nnop_none(), NNOP_ACT_RELU, 0.0f),
                         NNOP_ERR_INVALID_ARGUMENT, "input 0 is required");
    g = new_graph();
    x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    expect_builder_error(
            g, nnop_batchnorm(g, x, nnop_none(), nnop_none(), nnop_none(), nnop_none(), 0.0f),
            NNOP_ERR_INVALID_ARGUMENT, "required");
}

static void test_output_rejects_dangling_value(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value bad;
    (void)state;
    input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    bad.id = g->tag << NNOP__VALUE_INDEX_BITS | 57;
    assert_int_equal(nnop_output(g, bad, "y"), NNOP_ERR_INVALID_ARGUMENT);
    expect_builder_error(g, value_neg(), NNOP_ERR_INVALID_ARGUMENT, "nnop_output('y'): value id ");
    NNOP_TEST_ASSERT_ERROR(ctx_, "is a dangling value");
}

static void test_output_rejects_none(void **state)
{
    nnop_graph *g = new_graph();
    (void)state;
    input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    assert_int_equal(nnop_output(g, nnop_none(), "y"), NNOP_ERR_INVALID_ARGUMENT);
    expect_builder_error(g, value_neg(), NNOP_ERR_INVALID_ARGUMENT, "is nnop_none()");
}

static void test_output_rejects_the_same_value_twice(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    nnop_value y = nnop_act(g, x, NNOP_ACT_RELU, 0.0f);
    (void)state;
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    assert_int_equal(nnop_output(g, y, "y2"), NNOP_ERR_INVALID_ARGUMENT);
    expect_builder_error(g, value_neg(), NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_output('y2'): the value is already output 0 ('y')");
}

/* A zeroed or made-up nnop_value carries no graph's tag: said so, not "another graph". */
static void test_builder_names_a_made_up_value(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value zero = {0}, huge = {INT32_MAX - 1};
    (void)state;
    input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    expect_builder_error(g, nnop_act(g, zero, NNOP_ACT_RELU, 0.0f), NNOP_ERR_INVALID_ARGUMENT,
                         "nnop_act: input 0 (id 0) is no value a builder returned");
    g = new_graph();
    input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    expect_builder_error(g, nnop_act(g, huge, NNOP_ACT_RELU, 0.0f), NNOP_ERR_INVALID_ARGUMENT,
                         "is no value a builder returned");
}

/* ------------------------------------------------------------------ structure */

static void test_compile_rejects_graph_without_outputs(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    (void)state;
    assert_true(nnop_act(g, x, NNOP_ACT_RELU, 0.0f).id >= 0);
    expect_compile_error(g, NNOP_ERR_INVALID_ARGUMENT, "no outputs");
}

static void test_compile_rejects_empty_graph(void **state)
{
    (void)state;
    expect_compile_error(new_graph(), NNOP_ERR_INVALID_ARGUMENT, "no outputs");
}

/* x -> relu (node 0) -> tanh (node 1) -> output; then node 0 is made to read node 1's output. */
static nnop_graph *chain_of_two(void)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 2, 2);
    nnop_value a = nnop_act(g, x, NNOP_ACT_RELU, 0.0f);
    nnop_value b = nnop_act(g, a, NNOP_ACT_TANH, 0.0f);
    assert_int_equal(nnop_output(g, b, "y"), NNOP_OK);
    assert_int_equal(g->n_nodes, 2);
    assert_int_equal(g->nodes[1].out, NNOP__VALUE_INDEX(b.id));
    return g;
}

static void test_compile_rejects_cycle(void **state)
{
    nnop_graph *g = chain_of_two();
    (void)state;
    g->nodes[0].in[0] = g->nodes[1].out;
    expect_compile_error(g, NNOP_ERR_INVALID_ARGUMENT, "cycle");
    NNOP_TEST_ASSERT_ERROR(ctx_, "node #0 (act)");
}

static void test_compile_rejects_self_loop(void **state)
{
    nnop_graph *g = chain_of_two();
    (void)state;
    g->nodes[1].in[0] = g->nodes[1].out;
    expect_compile_error(g, NNOP_ERR_INVALID_ARGUMENT, "cycle: node #1");
}

static void test_compile_rejects_forged_dangling_id(void **state)
{
    nnop_graph *g = chain_of_two();
    (void)state;
    g->nodes[1].in[0] = 999;
    expect_compile_error(g, NNOP_ERR_INVALID_ARGUMENT, "dangling value id 999");
}

/* ------------------------------------------------------------------ sticky errors */

/* The first error is the graph's; builders with good inputs go on building and report their
 * own errors, each once; a builder fed a failed builder's value fails without a message. */
static void test_errors_keep_going_each_reported_once(void **state)
{
    nnop_graph *g = new_graph();
    nnop_conv_params p = conv_params(1, 0, 1, 1); /* stride 0: the first error */
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 2);
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    nnop_value w = const4(g, NNOP_F32, NNOP_NCHW, 2, 2, 3, 3);
    nnop_value y = nnop_conv(g, x, w, &p), v;
    nnop_pool_params pp = pool_params(2, 2, 0);
    int32_t n_values;
    (void)state;
    assert_true(y.id < 0);
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "stride[0] = 0");
    /* good builders still build */
    assert_true(nnop_input(g, "x2", &d).id >= 0);
    assert_true(nnop_constant(g, "c", &d, zeros).id >= 0);
    assert_true(nnop_act(g, x, NNOP_ACT_RELU, 0.0f).id >= 0);
    assert_true(nnop_pool(g, x, NNOP_POOL_MAX, &pp).id >= 0);
    assert_true(nnop_conv(g, x, w, NULL).id < 0); /* its own error: params is NULL */
    assert_int_equal(nnop_graph_num_errors(g), 2);
    /* a failed builder's value: refused, nothing added, nothing said */
    n_values = g->n_values;
    assert_true(nnop_act(g, y, NNOP_ACT_RELU, 0.0f).id < 0);
    assert_true(nnop_add(g, y, x).id < 0);
    assert_true(nnop_linear(g, y, x, nnop_none()).id < 0);
    assert_int_equal(g->n_values, n_values);
    assert_int_equal(nnop_graph_num_errors(g), 2);
    /* another error of its own: listed and the context's message; the status the first's */
    v = nnop_bias(g, x, x);
    assert_true(v.id < 0);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_bias");
    assert_int_equal(nnop_graph_num_errors(g), 3);
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_graph_error(g, 0), "stride[0] = 0"));
    assert_non_null(strstr(nnop_graph_error(g, 1), "nnop_conv: params is NULL"));
    assert_non_null(strstr(nnop_graph_error(g, 2), "nnop_bias"));
    assert_null(nnop_graph_error(g, 3));
    assert_null(nnop_graph_error(g, -1));
    assert_null(nnop_graph_error(NULL, 0));
    assert_int_equal(nnop_graph_num_errors(NULL), 0);
    assert_int_equal(nnop_output(g, x, "x"), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(g->n_outputs, 0);
    expect_builder_error(g, y, NNOP_ERR_INVALID_ARGUMENT, "stride[0] = 0");
}

/* More errors than the graph keeps: all counted, the first 64 kept */
static void test_errors_beyond_the_kept_ones_are_counted(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    int i;
    (void)state;
    for (i = 0; i < 70; i++)
        assert_true(nnop_pool(g, x, NNOP_POOL_MAX, NULL).id < 0);
    assert_int_equal(nnop_graph_num_errors(g), 70);
    assert_non_null(nnop_graph_error(g, 63));
    assert_null(nnop_graph_error(g, 64));
    {
        nnop_plan *plan = NULL;
        assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_ERR_INVALID_ARGUMENT);
        NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_pool: params is NULL (and 69 more");
    }
    nnop_graph_destroy(g);
}

static void test_sticky_shape_error_status_is_kept_over_later_invalid_argument(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    nnop_value y = nnop_bias(g, x, const1(g, NNOP_F32, 3)); /* SHAPE first */
    nnop_plan *plan = NULL;
    (void)state;
    assert_true(y.id < 0);
    assert_true(nnop_input(g, "bad", NULL).id < 0); /* INVALID_ARGUMENT, listed */
    NNOP_TEST_ASSERT_ERROR(ctx_, "descriptor is NULL");
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_SHAPE);
    assert_int_equal(nnop_graph_num_errors(g), 2);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_ERR_SHAPE);
    NNOP_TEST_ASSERT_ERROR(ctx_, "wrong channel count: bias");
    NNOP_TEST_ASSERT_ERROR(ctx_, "(and 1 more: nnop_graph_error lists them)");
    nnop_graph_destroy(g);
}

/* The first message is kept by the graph: other calls on the context in between (which clear
 * or replace the context's message) do not lose it. */
static void test_sticky_error_message_survives_other_calls_on_the_context(void **state)
{
    nnop_graph *g = new_graph();
    nnop_value x = input4(g, NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    nnop_value y = nnop_pool(g, x, (nnop_pool_kind)9, NULL);
    nnop_pool_params pp = pool_params(2, 2, 0);
    nnop_plan *plan;
    void *p = NULL;
    (void)state;
    assert_true(y.id < 0);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_pool: params is NULL");
    y = nnop_pool(g, x, (nnop_pool_kind)9, &pp);
    assert_int_equal(nnop_malloc(ctx_, 16, &p), NNOP_OK); /* clears the context's message */
    nnop_free(ctx_, p);
    assert_int_equal(nnop_malloc(ctx_, 16, NULL), NNOP_ERR_INVALID_ARGUMENT); /* replaces it */
    assert_true(y.id < 0);
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_INVALID_ARGUMENT);
    plan = (nnop_plan *)(void *)&plan;
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(plan);
    NNOP_TEST_ASSERT_ERROR(ctx_, "builder error: nnop_pool: params is NULL");
    nnop_graph_destroy(g);
}

/* ------------------------------------------------------------------ descriptors */

static void test_input_rejects_non_packed_4d_strides(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, 4, 4);
    (void)state;
    d.strides[0] *= 2; /* a padded batch stride */
    d.strides[1] *= 2;
    d.strides[2] *= 2;
    d.strides[3] *= 2;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT,
                         "strides are not packed NCHW or NHWC");
}

static void test_input_rejects_other_permutations(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 3, 4, 5);
    (void)state;
    /* N, C, W, H order ("NCWH"): strides 60, 20, 1, 4 */
    d.strides[2] = 1;
    d.strides[3] = 4;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT,
                         "strides are not packed");
}

static void test_input_rejects_column_major_2d(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 3, 4);
    (void)state;
    d.strides[0] = 1;
    d.strides[1] = 3;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT,
                         "strides are not packed row-major");
}

static void test_input_rejects_9_dims(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 4);
    (void)state;
    d.ndim = 9;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT,
                         "ndim 9 out of range 1..8");
}

static void test_input_rejects_0_and_negative_dims_count(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F32, 4);
    (void)state;
    d.ndim = 0;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT, "ndim 0");
    g = new_graph();
    d.ndim = -3;
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT, "ndim -3");
}

/* 8 dims is the limit and is accepted: an 8-D input passes through a graph unchanged. */
/* A layout outside the enum gives a descriptor nobody takes, with the reason in words. */
static void test_input_rejects_a_layout_outside_the_enum(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, (nnop_layout)99, 1, 3, 4, 4);
    (void)state;
    assert_int_equal(nnop_tensor_elements(&d), 0);
    expect_builder_error(g, nnop_input(g, "x", &d), NNOP_ERR_INVALID_ARGUMENT,
                         "layout other than NNOP_NCHW and NNOP_NHWC");
}

/* Each failing query names itself in the context's message (an earlier, unrelated message
 * must not stand in for it), and leaves the caller's out untouched. */
static void test_failed_queries_say_why_and_write_nothing(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d, before;
    nnop_plan *plan = NULL;
    nnop_value bad;
    int count = -5;
    (void)state;
    bad.id = 42;
    assert_int_equal(
            nnop_output(g,
                        nnop_act(g, input4(g, NNOP_F32, NNOP_NCHW, 1, 1, 2, 2), NNOP_ACT_RELU, 0),
                        "y"),
            NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    nnop_test_poison(&d, sizeof d);
    before = d;
    assert_int_equal(nnop_malloc(ctx_, 16, NULL), NNOP_ERR_INVALID_ARGUMENT); /* a stale one */
    assert_int_equal(nnop_value_desc(g, bad, &d), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_value_desc: value id 42 is no value a builder returned");
    assert_int_equal(nnop_value_desc(g, bad, NULL), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_value_desc: out is NULL");
    assert_int_equal(nnop_plan_input_desc(plan, 5, &d), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_plan_input_desc: index out of range (the plan has 1 in");
    assert_int_equal(nnop_plan_output_desc(plan, -1, &d), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_plan_output_desc: index out of range");
    assert_memory_equal(&d, &before, sizeof d);
    assert_int_equal(nnop_context_cache_stats(ctx_, NULL), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_context_cache_stats: out is NULL");
    assert_int_equal(nnop_plan_engines(plan, NULL, 0, NULL), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_plan_engines: count is NULL");
    assert_int_equal(nnop_plan_engines(plan, NULL, -1, &count), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx_, "nnop_plan_engines: cap is -1");
    assert_int_equal(count, -5);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* nnop_convert refuses buffers that share bytes: converting f16 to f32 in place would
 * overwrite halves before reading them. Adjacent buffers are fine. */
static void test_convert_refuses_overlap(void **state)
{
    uint16_t buf[8] = {0x3c00, 0x4000, 0x4200, 0x4400, 0, 0, 0, 0};
    float f[2];
    (void)state;
    assert_int_equal(nnop_convert(NNOP_F16, buf, NNOP_F32, buf, 2), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_convert(NNOP_F16, buf + 2, NNOP_F32, buf, 2), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(buf[0], 0x3c00);
    assert_int_equal(nnop_convert(NNOP_F16, buf, NNOP_F32, buf + 4, 2), NNOP_OK); /* adjacent */
    assert_int_equal(nnop_convert(NNOP_F16, buf, NNOP_F32, f, 2), NNOP_OK);
    assert_true(f[0] == 1.0f && f[1] == 2.0f);
    assert_int_equal(nnop_convert(NNOP_F16, buf, NNOP_F32, buf, 0), NNOP_OK); /* no bytes */
}

static void test_input_accepts_8_dims(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc d;
    float x[256], y[256];
    const void *in[1];
    void *out[1];
    int i;
    (void)state;
    memset(&d, 0, sizeof d);
    d.dtype = NNOP_F32;
    d.ndim = 8;
    for (i = 0; i < 8; i++) {
        d.dims[i] = 2;
        d.strides[i] = (int64_t)1 << (7 - i);
    }
    assert_int_equal(nnop_tensor_elements(&d), 256);
    nnop_test_fill_f32(x, 256, 7, -1.0f, 1.0f);
    assert_int_equal(nnop_output(g, nnop_input(g, "x", &d), "y"), NNOP_OK);
    nnop_test_poison(y, sizeof y);
    in[0] = x;
    out[0] = y;
    assert_int_equal(nnop_test_run_graph(g, NULL, in, out), NNOP_OK);
    assert_memory_equal(x, y, sizeof x);
    nnop_graph_destroy(g);
}

/* The shared CPU-context setup, also kept in ctx_ for the helpers that take no state. */
static int setup(void **state)
{
    int r = nnop_test_setup_cpu_context(state);
    ctx_ = (nnop_context *)*state;
    return r;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conv_rejects_wrong_channel_count),
            cmocka_unit_test(test_grouped_conv_rejects_wrong_channels_per_group),
            cmocka_unit_test(test_bias_rejects_wrong_channel_count),
            cmocka_unit_test(test_bias_rejects_2d_bias),
            cmocka_unit_test(test_channel_ops_reject_1d_x),
            cmocka_unit_test(test_batchnorm_rejects_wrong_channel_count),
            cmocka_unit_test(test_batchnorm_rejects_wrong_gamma_count),
            cmocka_unit_test(test_linear_rejects_wrong_input_features),
            cmocka_unit_test(test_linear_rejects_wrong_bias_length),
            cmocka_unit_test(test_linear_rejects_4d_input),
            cmocka_unit_test(test_add_rejects_different_shapes),
            cmocka_unit_test(test_add_rejects_different_layouts),
            cmocka_unit_test(test_input_rejects_zero_dim),
            cmocka_unit_test(test_input_rejects_negative_dim),
            cmocka_unit_test(test_constant_rejects_non_positive_dim),
            cmocka_unit_test(test_input_rejects_element_count_overflow),
            cmocka_unit_test(test_conv_rejects_zero_stride),
            cmocka_unit_test(test_conv_rejects_negative_stride),
            cmocka_unit_test(test_conv_rejects_zero_dilation),
            cmocka_unit_test(test_conv_rejects_negative_pad),
            cmocka_unit_test(test_conv_rejects_huge_pad_without_overflow),
            cmocka_unit_test(test_conv_rejects_huge_dilation_without_overflow),
            cmocka_unit_test(test_conv_rejects_huge_stride_without_overflow),
            cmocka_unit_test(test_conv_rejects_filter_extent_overflow),
            cmocka_unit_test(test_conv_rejects_zero_groups),
            cmocka_unit_test(test_conv_rejects_groups_not_dividing_channels),
            cmocka_unit_test(test_conv_rejects_groups_not_dividing_filters),
            cmocka_unit_test(test_conv_rejects_filter_larger_than_padded_input),
            cmocka_unit_test(test_conv_rejects_dilated_filter_larger_than_input),
            cmocka_unit_test(test_conv_rejects_non_4d_input),
            cmocka_unit_test(test_pool_rejects_zero_stride),
            cmocka_unit_test(test_pool_rejects_zero_window),
            cmocka_unit_test(test_pool_rejects_negative_pad),
            cmocka_unit_test(test_pool_rejects_pad_over_half_the_window),
            cmocka_unit_test(test_pool_rejects_huge_pad_without_overflow),
            cmocka_unit_test(test_pool_rejects_huge_window_without_overflow),
            cmocka_unit_test(test_pool_rejects_window_larger_than_input),
            cmocka_unit_test(test_pool_rejects_non_4d_input),
            cmocka_unit_test(test_global_avg_pool_rejects_non_4d_input),
            cmocka_unit_test(test_batchnorm_rejects_negative_or_nan_eps),
            cmocka_unit_test(test_conv_rejects_dtype_mix),
            cmocka_unit_test(test_add_rejects_dtype_mix),
            cmocka_unit_test(test_batchnorm_rejects_dtype_mix),
            cmocka_unit_test(test_input_rejects_unknown_dtype),
            cmocka_unit_test(test_constant_rejects_negative_dtype),
            cmocka_unit_test(test_act_rejects_unknown_kind),
            cmocka_unit_test(test_act_rejects_clamp_kind_without_bounds),
            cmocka_unit_test(test_act_rejects_non_finite_alpha),
            cmocka_unit_test(test_clamp_rejects_inverted_or_nan_bounds),
            cmocka_unit_test(test_pool_rejects_unknown_kind),
            cmocka_unit_test(test_context_rejects_unknown_backend),
            cmocka_unit_test(test_context_rejects_unknown_policy),
            cmocka_unit_test(test_reserved_fields_must_be_zero),
            cmocka_unit_test(test_output_on_an_errored_graph_says_so),
            cmocka_unit_test(test_context_rejects_negative_device),
            cmocka_unit_test(test_context_rejects_too_many_load_threads),
            cmocka_unit_test(test_context_rejects_unknown_prefetch_value),
            cmocka_unit_test(test_convert_rejects_unknown_dtype_and_writes_nothing),
            cmocka_unit_test(test_graph_create_rejects_null_out),
            cmocka_unit_test(test_graph_create_rejects_null_context),
            cmocka_unit_test(test_input_rejects_null_desc),
            cmocka_unit_test(test_constant_rejects_null_desc),
            cmocka_unit_test(test_constant_rejects_null_data),
            cmocka_unit_test(test_conv_rejects_null_params),
            cmocka_unit_test(test_pool_rejects_null_params),
            cmocka_unit_test(test_compile_rejects_null_out_and_null_graph),
            cmocka_unit_test(test_execute_rejects_null_arrays_and_entries),
            cmocka_unit_test(test_execute_rejects_null_plan),
            cmocka_unit_test(test_null_graph_and_plan_are_handled_everywhere),
            cmocka_unit_test(test_value_desc_and_plan_descs_reject_null_out_and_bad_index),
            cmocka_unit_test(test_context_create_rejects_null_out),
            cmocka_unit_test(test_memory_functions_reject_null_pointers),
            cmocka_unit_test(test_conv_bias_relu_rejects_wrong_y_shape_and_leaves_y_untouched),
            cmocka_unit_test(test_conv_bias_relu_rejects_wrong_y_layout),
            cmocka_unit_test(test_conv_bias_relu_rejects_wrong_y_dtype),
            cmocka_unit_test(test_conv_bias_relu_reports_builder_errors_and_leaves_y_untouched),
            cmocka_unit_test(test_conv_bias_relu_rejects_each_null_argument),
            cmocka_unit_test(test_conv_bias_act_rejects_unknown_and_clamp_activation),
            cmocka_unit_test(test_builder_rejects_out_of_range_value_id),
            cmocka_unit_test(test_builder_rejects_value_from_an_errored_builder),
            cmocka_unit_test(test_builder_rejects_value_of_another_graph),
            cmocka_unit_test(test_builder_rejects_none_for_a_required_operand),
            cmocka_unit_test(test_builder_rejects_value_of_another_graph_at_a_valid_index),
            cmocka_unit_test(test_builder_names_a_made_up_value),
            cmocka_unit_test(test_consecutive_graphs_never_share_a_tag),
            cmocka_unit_test(test_output_rejects_dangling_value),
            cmocka_unit_test(test_output_rejects_none),
            cmocka_unit_test(test_output_rejects_the_same_value_twice),
            cmocka_unit_test(test_compile_rejects_graph_without_outputs),
            cmocka_unit_test(test_compile_rejects_empty_graph),
            cmocka_unit_test(test_compile_rejects_cycle),
            cmocka_unit_test(test_compile_rejects_self_loop),
            cmocka_unit_test(test_compile_rejects_forged_dangling_id),
            cmocka_unit_test(test_errors_keep_going_each_reported_once),
            cmocka_unit_test(test_errors_beyond_the_kept_ones_are_counted),
            cmocka_unit_test(test_sticky_shape_error_status_is_kept_over_later_invalid_argument),
            cmocka_unit_test(test_sticky_error_message_survives_other_calls_on_the_context),
            cmocka_unit_test(test_input_rejects_non_packed_4d_strides),
            cmocka_unit_test(test_input_rejects_other_permutations),
            cmocka_unit_test(test_input_rejects_column_major_2d),
            cmocka_unit_test(test_input_rejects_9_dims),
            cmocka_unit_test(test_input_rejects_0_and_negative_dims_count),
            cmocka_unit_test(test_input_accepts_8_dims),
            cmocka_unit_test(test_input_rejects_a_layout_outside_the_enum),
            cmocka_unit_test(test_failed_queries_say_why_and_write_nothing),
            cmocka_unit_test(test_convert_refuses_overlap),
    };
    return cmocka_run_group_tests_name("graph_errors", tests, setup, nnop_test_teardown_context);
}
