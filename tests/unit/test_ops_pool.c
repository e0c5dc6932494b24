/* test_ops_pool.c: known answers for max and average pooling (windows at borders with padding,
 * count_include_pad both ways) and global average pooling, through the public graph API on a
 * CPU context, in both layouts and in f16 and bf16. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#define GAP_KIND (-1) /* run_pool: nnop_global_avg_pool instead of nnop_pool */

static nnop_pool_params pool_params(int64_t window, int64_t stride, int64_t pad, int incl)
{
    nnop_pool_params p;
    memset(&p, 0, sizeof p);
    p.window[0] = p.window[1] = window;
    p.stride[0] = p.stride[1] = stride;
    p.pad[0] = p.pad[1] = pad;
    p.count_include_pad = incl;
    return p;
}

static int64_t out_size(int64_t in, int64_t window, int64_t stride, int64_t pad, int64_t pad_end)
{
    return (in + 2 * pad + pad_end - window) / stride + 1;
}

/* Pool x (logical NCHW floats, dims n,c,h,w) stored as dtype t in layout l; y logical NCHW.
 * Checks the inferred output shape (oh x ow) and layout. */
static void run_pool(nnop_context *ctx, nnop_dtype t, nnop_layout l, const int64_t dims[4],
                     int kind, const nnop_pool_params *p, const float *x, float *y)
{
    nnop_tensor_desc xd = nnop_tensor_4d(t, l, dims[0], dims[1], dims[2], dims[3]);
    int64_t oh = kind == GAP_KIND
                         ? 1
                         : out_size(dims[2], p->window[0], p->stride[0], p->pad[0], p->pad_end[0]);
    int64_t ow = kind == GAP_KIND
                         ? 1
                         : out_size(dims[3], p->window[1], p->stride[1], p->pad[1], p->pad_end[1]);
    nnop_tensor_desc yd = nnop_tensor_4d(t, l, dims[0], dims[1], oh, ow);
    nnop_tensor_desc got;
    nnop_graph *g = NULL;
    nnop_value v;
    void *xb = malloc(nnop_tensor_bytes(&xd)), *yb = malloc(nnop_tensor_bytes(&yd));
    const void *in[1];
    int i;
    assert_true(xb && yb);
    nnop_test_pack(&xd, x, xb);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &xd);
    v = kind == GAP_KIND ? nnop_global_avg_pool(g, v) : nnop_pool(g, v, (nnop_pool_kind)kind, p);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_value_desc(g, v, &got), NNOP_OK);
    assert_int_equal(got.ndim, 4);
    for (i = 0; i < 4; i++) {
        assert_int_equal(got.dims[i], yd.dims[i]);
        assert_int_equal(got.strides[i], yd.strides[i]);
    }
    in[0] = xb;
    nnop_test_run_unpack(g, in, &yd, yb, y);
    for (i = 0; i < nnop_tensor_elements(&yd); i++)
        assert_false(isnan(y[i]));
    nnop_graph_destroy(g);
    free(xb);
    free(yb);
}

/* The test's own pooling: loops over the window, skipping positions outside the input. */
static void naive_pool(const int64_t dims[4], int kind, const nnop_pool_params *p, const float *x,
                       float *y)
{
    int64_t oh = out_size(dims[2], p->window[0], p->stride[0], p->pad[0], p->pad_end[0]);
    int64_t ow = out_size(dims[3], p->window[1], p->stride[1], p->pad[1], p->pad_end[1]);
    int64_t n, c, i, j, r, s;
    for (n = 0; n < dims[0]; n++)
        for (c = 0; c < dims[1]; c++)
            for (i = 0; i < oh; i++)
                for (j = 0; j < ow; j++) {
                    double best = -INFINITY, sum = 0.0;
                    int64_t inside = 0;
                    for (r = 0; r < p->window[0]; r++)
                        for (s = 0; s < p->window[1]; s++) {
                            int64_t h = i * p->stride[0] - p->pad[0] + r;
                            int64_t w = j * p->stride[1] - p->pad[1] + s;
                            double v;
                            if (h < 0 || h >= dims[2] || w < 0 || w >= dims[3])
                                continue;
                            v = x[((n * dims[1] + c) * dims[2] + h) * dims[3] + w];
                            best = v > best ? v : best;
                            sum += v;
                            inside++;
                        }
                    y[((n * dims[1] + c) * oh + i) * ow + j] =
                            (float)(kind == NNOP_POOL_MAX
                                            ? best
                                            : sum / (double)(p->count_include_pad
                                                                     ? p->window[0] * p->window[1]
                                                                     : inside));
                }
}

/* ------------------------------------------------------------------ max pooling */

static void test_max_pool_2x2_stride_2_hand_computed(void **state)
{
    const int64_t dims[4] = {1, 1, 4, 4};
    nnop_pool_params p = pool_params(2, 2, 0, 0);
    float x[16], y[4];
    static const float want[4] = {5, 7, 13, 15};
    int i;
    for (i = 0; i < 16; i++)
        x[i] = (float)i;
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NCHW, dims, NNOP_POOL_MAX, &p, x, y);
    nnop_test_assert_floats(y, want, 4, 0.0);
}

/* All-negative input x[h][w] = -(5h + w) - 1, 3x3 window, stride 2, pad 1: padding must not
 * act as a zero (the corner would give 0); each window's max is its top-left in-bounds
 * element, worked out by hand. */
static void test_max_pool_padding_never_wins_on_negative_input(void **state)
{
    const int64_t dims[4] = {1, 1, 5, 5};
    nnop_pool_params p = pool_params(3, 2, 1, 0);
    float x[25], y[9];
    static const float want[9] = {-1, -2, -4, -6, -7, -9, -16, -17, -19};
    int i;
    for (i = 0; i < 25; i++)
        x[i] = -(float)i - 1.0f;
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NCHW, dims, NNOP_POOL_MAX, &p, x, y);
    nnop_test_assert_floats(y, want, 9, 0.0);
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NHWC, dims, NNOP_POOL_MAX, &p, x, y);
    nnop_test_assert_floats(y, want, 9, 0.0);
}

static void test_max_pool_random_nchw_and_nhwc_match_naive(void **state)
{
    const int64_t dims[4] = {2, 3, 7, 9};
    nnop_pool_params p = pool_params(3, 2, 1, 0);
    float x[2 * 3 * 7 * 9], y[2 * 3 * 4 * 4], want[2 * 3 * 4 * 4];
    int l;
    p.window[1] = 2; /* rectangular: 3x2 window, strides 2x3 */
    p.stride[1] = 3; /* 7x9 -> 4x4 */
    nnop_test_fill_f32(x, 378, 801, -5.0f, 5.0f);
    naive_pool(dims, NNOP_POOL_MAX, &p, x, want);
    for (l = 0; l < 2; l++) {
        memset(y, 0, sizeof y);
        run_pool((nnop_context *)*state, NNOP_F32, (nnop_layout)l, dims, NNOP_POOL_MAX, &p, x, y);
        nnop_test_assert_floats(y, want, 2 * 3 * 4 * 4, 0.0);
    }
}

/* A NaN inside a window makes that max-pool output NaN (as PyTorch), wherever it sits in the
 * window and whatever the other values are (even +inf); windows without it are unaffected. */
static void test_max_pool_propagates_nan(void **state)
{
    nnop_pool_params p = pool_params(2, 2, 0, 0);
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 4, 4);
    nnop_tensor_desc yd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 2, 2);
    nnop_graph *g = NULL;
    float x[16], y[4], yb[4];
    const void *in[1];
    int i;
    for (i = 0; i < 16; i++)
        x[i] = (float)i;
    x[5] = NAN;      /* last element of window (0, 0) */
    x[2] = INFINITY; /* window (0, 1): first element +inf, then NaN */
    x[3] = NAN;
    assert_int_equal(nnop_graph_create((nnop_context *)*state, &g), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_pool(g, nnop_input(g, "x", &xd), NNOP_POOL_MAX, &p), "y"),
                     NNOP_OK);
    in[0] = x;
    nnop_test_run_unpack(g, in, &yd, yb, y);
    assert_true(isnan(y[0]));
    assert_true(isnan(y[1]));
    assert_true(y[2] == 13.0f);
    assert_true(y[3] == 15.0f);
    nnop_graph_destroy(g);
}

static void test_max_pool_window_1_stride_1_is_identity(void **state)
{
    const int64_t dims[4] = {2, 2, 3, 5};
    nnop_pool_params p = pool_params(1, 1, 0, 0);
    float x[60], y[60];
    nnop_test_fill_f32(x, 60, 802, -1.0f, 1.0f);
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NHWC, dims, NNOP_POOL_MAX, &p, x, y);
    assert_memory_equal(x, y, sizeof x);
}

/* ------------------------------------------------------------------ average pooling */

/* x = 0..8 on 3x3, 3x3 window, stride 1, pad 1. Window sums by hand: corners 8, 12, 20, 24
 * (4 inside), edges 15, 21, 27, 33 (6 inside), centre 36 (9 inside). */
static void test_avg_pool_count_include_pad_divides_by_full_window(void **state)
{
    const int64_t dims[4] = {1, 1, 3, 3};
    nnop_pool_params p = pool_params(3, 1, 1, 1);
    float x[9], y[9];
    const float want[9] = {8.0f / 9, 15.0f / 9, 12.0f / 9, 21.0f / 9, 4.0f,
                           3.0f,     20.0f / 9, 33.0f / 9, 24.0f / 9};
    int i;
    for (i = 0; i < 9; i++)
        x[i] = (float)i;
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NCHW, dims, NNOP_POOL_AVG, &p, x, y);
    nnop_test_assert_floats(y, want, 9, 1e-6);
}

static void test_avg_pool_count_exclude_pad_divides_by_inside_count(void **state)
{
    const int64_t dims[4] = {1, 1, 3, 3};
    nnop_pool_params p = pool_params(3, 1, 1, 0);
    float x[9], y[9];
    static const float want[9] = {2, 2.5f, 3, 3.5f, 4, 4.5f, 5, 5.5f, 6};
    int i;
    for (i = 0; i < 9; i++)
        x[i] = (float)i;
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NHWC, dims, NNOP_POOL_AVG, &p, x, y);
    nnop_test_assert_floats(y, want, 9, 1e-6);
}

/* x = 1..25 on 5x5, 2x2 window, stride 2, pad 1: windows cover rows/cols [-1,0], [1,2],
 * [3,4]; the first row and column of windows are half or three quarters padding. */
static void test_avg_pool_border_windows_stride_2_both_count_modes(void **state)
{
    const int64_t dims[4] = {1, 1, 5, 5};
    nnop_pool_params incl = pool_params(2, 2, 1, 1), excl = pool_params(2, 2, 1, 0);
    float x[25], y[9];
    static const float want_incl[9] = {0.25f, 1.25f, 2.25f, 4.25f, 10, 12, 9.25f, 20, 22};
    static const float want_excl[9] = {1, 2.5f, 4.5f, 8.5f, 10, 12, 18.5f, 20, 22};
    int i;
    for (i = 0; i < 25; i++)
        x[i] = (float)(i + 1);
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NCHW, dims, NNOP_POOL_AVG, &incl, x, y);
    nnop_test_assert_floats(y, want_incl, 9, 1e-6);
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NHWC, dims, NNOP_POOL_AVG, &excl, x, y);
    nnop_test_assert_floats(y, want_excl, 9, 1e-6);
}

static void test_avg_pool_without_padding_modes_agree(void **state)
{
    const int64_t dims[4] = {1, 2, 4, 4};
    nnop_pool_params incl = pool_params(2, 2, 0, 1), excl = pool_params(2, 2, 0, 0);
    float x[32], y1[8], y2[8];
    int i;
    for (i = 0; i < 32; i++)
        x[i] = (float)(i % 16) + (i >= 16 ? 100.0f : 0.0f);
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NCHW, dims, NNOP_POOL_AVG, &incl, x, y1);
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NCHW, dims, NNOP_POOL_AVG, &excl, x, y2);
    assert_memory_equal(y1, y2, sizeof y1);
    /* (0+1+4+5)/4 = 2.5, (2+3+6+7)/4 = 4.5, ...; channel 1 is 100 more */
    assert_true(y1[0] == 2.5f && y1[1] == 4.5f && y1[2] == 10.5f && y1[3] == 12.5f);
    assert_true(y1[4] == 102.5f && y1[7] == 112.5f);
}

static void test_avg_pool_random_odd_sizes_match_naive(void **state)
{
    const int64_t dims[4] = {3, 2, 9, 7};
    float x[3 * 2 * 9 * 7], y[3 * 2 * 5 * 4], want[3 * 2 * 5 * 4];
    int incl, l;
    nnop_test_fill_f32(x, 378, 811, -3.0f, 3.0f);
    for (incl = 0; incl < 2; incl++) {
        nnop_pool_params p = pool_params(3, 2, 1, incl);
        p.window[1] = 4;
        p.pad[1] = 2; /* 9x7 -> 5x4 (w: (7 + 4 - 4) / 2 + 1) */
        naive_pool(dims, NNOP_POOL_AVG, &p, x, want);
        for (l = 0; l < 2; l++) {
            run_pool((nnop_context *)*state, NNOP_F32, (nnop_layout)l, dims, NNOP_POOL_AVG, &p, x,
                     y);
            assert_true(nnop_test_compare(NNOP_F32, y, want, 120, 1e-6, 1e-6, "avg pool", 811));
        }
    }
}

/* pad_end: 1..16 in 4x4, 3x3 windows at stride 2, one more row and column of padding after
 * (ONNX's pads 0, 0, 1, 1): 2x2 outputs, the second row and column of windows clipped. */
static void test_max_pool_pad_end_hand_computed(void **state)
{
    const int64_t dims[4] = {1, 1, 4, 4};
    float x[16], y[4];
    const float want[4] = {11, 12, 15, 16};
    nnop_pool_params p = pool_params(3, 2, 0, 0);
    int i, l;
    for (i = 0; i < 16; i++)
        x[i] = (float)(i + 1);
    p.pad_end[0] = p.pad_end[1] = 1;
    for (l = 0; l < 2; l++) {
        run_pool((nnop_context *)*state, NNOP_F32, (nnop_layout)l, dims, NNOP_POOL_MAX, &p, x, y);
        for (i = 0; i < 4; i++)
            assert_true(y[i] == want[i]);
    }
}

/* pad_end on odd sizes, both count modes, both layouts: the padded-end windows' divisors */
static void test_avg_pool_pad_end_matches_naive(void **state)
{
    const int64_t dims[4] = {2, 3, 8, 7};
    float x[2 * 3 * 8 * 7], y[2 * 3 * 4 * 4], want[2 * 3 * 4 * 4];
    int incl, l;
    nnop_test_fill_f32(x, 336, 812, -3.0f, 3.0f);
    for (incl = 0; incl < 2; incl++) {
        nnop_pool_params p = pool_params(3, 2, 0, incl);
        p.pad_end[0] = 1; /* H: (8 + 1 - 3) / 2 + 1 = 4 */
        p.pad[1] = 1;
        p.pad_end[1] = 2; /* W, window 4: (7 + 2 + 2 - 4) / 2 + 1 = 4 */
        p.window[1] = 4;
        naive_pool(dims, NNOP_POOL_AVG, &p, x, want);
        for (l = 0; l < 2; l++) {
            run_pool((nnop_context *)*state, NNOP_F32, (nnop_layout)l, dims, NNOP_POOL_AVG, &p, x,
                     y);
            assert_true(nnop_test_compare(NNOP_F32, y, want, 96, 1e-6, 1e-6, "avg pad_end", 812));
        }
    }
}

static void expect_pool_error(nnop_context *ctx, const nnop_pool_params *p, const char *msg)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 4, 4);
    nnop_graph *g = NULL;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    (void)nnop_pool(g, nnop_input(g, "x", &xd), NNOP_POOL_MAX, p);
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_INVALID_ARGUMENT);
    assert_string_equal(nnop_context_last_error(ctx), msg);
    nnop_graph_destroy(g);
}

static void test_pool_pad_end_errors(void **state)
{
    nnop_pool_params p = pool_params(3, 2, 0, 0);
    p.pad_end[1] = 3;
    expect_pool_error((nnop_context *)*state, &p,
                      "NNOP_ERR_INVALID_ARGUMENT: nnop_pool (node #0): pad_end[1] = 3 must be 0 "
                      "to window - 1 = 2");
    p.pad_end[1] = -1;
    expect_pool_error((nnop_context *)*state, &p,
                      "NNOP_ERR_INVALID_ARGUMENT: nnop_pool (node #0): pad_end[1] = -1 must be 0 "
                      "to window - 1 = 2");
    p = pool_params(2, 1, 1, 0); /* last window of H starts at 4 - 1 + 1 = 4: all padding */
    p.pad_end[0] = 1;
    expect_pool_error((nnop_context *)*state, &p,
                      "NNOP_ERR_INVALID_ARGUMENT: nnop_pool (node #0): pad_end[0] = 1: the last "
                      "window lies in the padding");
}

/* ------------------------------------------------------------------ global average pooling */

/* Channel c holds 1..HW plus 10c: the mean is (HW + 1) / 2 + 10c. */
static void test_global_avg_pool_known_means(void **state)
{
    const int64_t dims[4] = {2, 3, 3, 5};
    float x[90], y[6];
    int l, n, c, i;
    for (n = 0; n < 2; n++)
        for (c = 0; c < 3; c++)
            for (i = 0; i < 15; i++)
                x[(n * 3 + c) * 15 + i] = (float)(i + 1) + 10.0f * (float)c + 100.0f * (float)n;
    for (l = 0; l < 2; l++) {
        run_pool((nnop_context *)*state, NNOP_F32, (nnop_layout)l, dims, GAP_KIND, NULL, x, y);
        for (n = 0; n < 2; n++)
            for (c = 0; c < 3; c++)
                assert_true(y[n * 3 + c] == 8.0f + 10.0f * (float)c + 100.0f * (float)n);
    }
}

static void test_global_avg_pool_random_matches_mean(void **state)
{
    const int64_t dims[4] = {2, 5, 7, 3};
    float x[210], y[10], want[10];
    int k, i, l;
    nnop_test_fill_f32(x, 210, 821, -2.0f, 2.0f);
    for (k = 0; k < 10; k++) {
        double s = 0.0;
        for (i = 0; i < 21; i++)
            s += x[k * 21 + i];
        want[k] = (float)(s / 21.0);
    }
    for (l = 0; l < 2; l++) {
        run_pool((nnop_context *)*state, NNOP_F32, (nnop_layout)l, dims, GAP_KIND, NULL, x, y);
        assert_true(nnop_test_compare(NNOP_F32, y, want, 10, 1e-6, 1e-7, "gap", 821));
    }
}

static void test_global_avg_pool_of_1x1_is_identity(void **state)
{
    const int64_t dims[4] = {3, 4, 1, 1};
    float x[12], y[12];
    nnop_test_fill_f32(x, 12, 822, -2.0f, 2.0f);
    run_pool((nnop_context *)*state, NNOP_F32, NNOP_NHWC, dims, GAP_KIND, NULL, x, y);
    assert_memory_equal(x, y, sizeof x);
}

/* ------------------------------------------------------------------ reduced precision */

static void test_pool_f16_and_bf16_match_naive(void **state)
{
    static const nnop_dtype types[2] = {NNOP_F16, NNOP_BF16};
    const int64_t dims[4] = {1, 3, 6, 5};
    nnop_pool_params p = pool_params(3, 2, 1, 0);
    float x[90], y[3 * 3 * 3], want[3 * 3 * 3], gap[3];
    uint16_t tmp[90];
    int t, i;
    for (t = 0; t < 2; t++) {
        nnop_test_fill(types[t], tmp, x, 90, 831 + t, -4.0f, 4.0f);
        /* max of representable values is exact */
        naive_pool(dims, NNOP_POOL_MAX, &p, x, want);
        run_pool((nnop_context *)*state, types[t], NNOP_NHWC, dims, NNOP_POOL_MAX, &p, x, y);
        nnop_test_assert_floats(y, want, 27, 0.0);
        naive_pool(dims, NNOP_POOL_AVG, &p, x, want);
        run_pool((nnop_context *)*state, types[t], NNOP_NCHW, dims, NNOP_POOL_AVG, &p, x, y);
        assert_true(nnop_test_compare(NNOP_F32, y, want, 27, nnop_test_rtol(types[t]),
                                      nnop_test_rtol(types[t]), "avg pool", 831 + t));
        run_pool((nnop_context *)*state, types[t], NNOP_NHWC, dims, GAP_KIND, NULL, x, gap);
        for (i = 0; i < 3; i++) {
            double s = 0.0;
            int j;
            for (j = 0; j < 30; j++)
                s += x[i * 30 + j];
            want[i] = (float)(s / 30.0);
        }
        assert_true(nnop_test_compare(NNOP_F32, gap, want, 3, nnop_test_rtol(types[t]),
                                      nnop_test_rtol(types[t]), "gap", 831 + t));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_max_pool_2x2_stride_2_hand_computed),
            cmocka_unit_test(test_max_pool_padding_never_wins_on_negative_input),
            cmocka_unit_test(test_max_pool_random_nchw_and_nhwc_match_naive),
            cmocka_unit_test(test_max_pool_propagates_nan),
            cmocka_unit_test(test_max_pool_window_1_stride_1_is_identity),
            cmocka_unit_test(test_avg_pool_count_include_pad_divides_by_full_window),
            cmocka_unit_test(test_avg_pool_count_exclude_pad_divides_by_inside_count),
            cmocka_unit_test(test_avg_pool_border_windows_stride_2_both_count_modes),
            cmocka_unit_test(test_avg_pool_without_padding_modes_agree),
            cmocka_unit_test(test_avg_pool_random_odd_sizes_match_naive),
            cmocka_unit_test(test_max_pool_pad_end_hand_computed),
            cmocka_unit_test(test_avg_pool_pad_end_matches_naive),
            cmocka_unit_test(test_pool_pad_end_errors),
            cmocka_unit_test(test_global_avg_pool_known_means),
            cmocka_unit_test(test_global_avg_pool_random_matches_mean),
            cmocka_unit_test(test_global_avg_pool_of_1x1_is_identity),
            cmocka_unit_test(test_pool_f16_and_bf16_match_naive),
    };
    return cmocka_run_group_tests_name("ops_pool", tests, nnop_test_setup_cpu_context,
                                       nnop_test_teardown_context);
}
