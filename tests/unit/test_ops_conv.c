/* test_ops_conv.c: known answers for the 2-D convolution reference kernel, run through the
 * public graph API on a CPU context: identity kernels, all-ones window counts, hand-computed
 * 3x3 cases, stride, dilation, groups, depthwise, layouts, odd sizes, fp16 and bf16. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

typedef struct conv_case {
    int64_t n, c, h, w; /* input */
    int64_t k, r, s;    /* filter */
    nnop_conv_params p;
} conv_case;

/* Output size by the textbook formula, written out here independently of the library. */
static int64_t out_size(int64_t in, int64_t pad, int64_t k, int64_t stride, int64_t dil)
{
    return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

static int64_t case_oh(const conv_case *cc)
{
    return out_size(cc->h, cc->p.pad[0], cc->r, cc->p.stride[0], cc->p.dilation[0]);
}

static int64_t case_ow(const conv_case *cc)
{
    return out_size(cc->w, cc->p.pad[1], cc->s, cc->p.stride[1], cc->p.dilation[1]);
}

/* Straightforward direct convolution on logical NCHW / KCRS arrays (the test's own oracle). */
static void naive_conv(const conv_case *cc, const float *x, const float *w, float *y)
{
    int64_t oh = case_oh(cc), ow = case_ow(cc), cg = cc->c / cc->p.groups;
    int64_t kg = cc->k / cc->p.groups;
    int64_t n, k, i, j, c, r, s;
    for (n = 0; n < cc->n; n++)
        for (k = 0; k < cc->k; k++)
            for (i = 0; i < oh; i++)
                for (j = 0; j < ow; j++) {
                    double acc = 0.0;
                    int64_t grp = k / kg;
                    for (c = 0; c < cg; c++)
                        for (r = 0; r < cc->r; r++)
                            for (s = 0; s < cc->s; s++) {
                                int64_t ih =
                                        i * cc->p.stride[0] - cc->p.pad[0] + r * cc->p.dilation[0];
                                int64_t iw =
                                        j * cc->p.stride[1] - cc->p.pad[1] + s * cc->p.dilation[1];
                                if (ih < 0 || ih >= cc->h || iw < 0 || iw >= cc->w)
                                    continue;
                                acc += (double)x[((n * cc->c + grp * cg + c) * cc->h + ih) * cc->w +
                                                 iw] *
                                       (double)w[((k * cg + c) * cc->r + r) * cc->s + s];
                            }
                    y[((n * cc->k + k) * oh + i) * ow + j] = (float)acc;
                }
}

/* Run one conv node through a graph: x (logical NCHW floats) is a graph input, w (logical
 * KCRS) a constant, both stored as dtype t in layout l. y receives the output, logical NCHW
 * float32. Checks the inferred output descriptor and that every output element was written. */
static void run_conv(nnop_context *ctx, const conv_case *cc, nnop_dtype t, nnop_layout l,
                     const float *x, const float *w, float *y)
{
    nnop_tensor_desc xd = nnop_tensor_4d(t, l, cc->n, cc->c, cc->h, cc->w);
    nnop_tensor_desc wd = nnop_tensor_4d(t, l, cc->k, cc->c / cc->p.groups, cc->r, cc->s);
    nnop_tensor_desc yd = nnop_tensor_4d(t, l, cc->n, cc->k, case_oh(cc), case_ow(cc));
    nnop_tensor_desc got;
    nnop_graph *g = NULL;
    nnop_value vx, vw, vy;
    void *xb = malloc(nnop_tensor_bytes(&xd));
    void *wb = malloc(nnop_tensor_bytes(&wd));
    void *yb = malloc(nnop_tensor_bytes(&yd));
    const void *in[1];
    int i;
    assert_non_null(xb);
    assert_non_null(wb);
    assert_non_null(yb);
    nnop_test_pack(&xd, x, xb);
    nnop_test_pack(&wd, w, wb);

    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    vx = nnop_input(g, "x", &xd);
    vw = nnop_constant(g, "w", &wd, wb);
    vy = nnop_conv(g, vx, vw, &cc->p);
    assert_int_equal(nnop_output(g, vy, "y"), NNOP_OK);
    assert_int_equal(nnop_value_desc(g, vy, &got), NNOP_OK);
    assert_int_equal(got.dtype, t);
    assert_int_equal(got.ndim, 4);
    for (i = 0; i < 4; i++) {
        assert_int_equal(got.dims[i], yd.dims[i]);
        assert_int_equal(got.strides[i], yd.strides[i]);
    }
    in[0] = xb;
    nnop_test_run_unpack(g, in, &yd, yb, y);
    for (i = 0; i < nnop_tensor_elements(&yd); i++)
        assert_false(isnan(y[i])); /* a poisoned element would read as NaN */
    nnop_graph_destroy(g);
    free(xb);
    free(wb);
    free(yb);
}

static void fill_const(float *x, int64_t n, float v)
{
    int64_t i;
    for (i = 0; i < n; i++)
        x[i] = v;
}

/* ------------------------------------------------------------------ known answers */

static void test_conv_1x1_identity_kernel_copies_input(void **state)
{
    conv_case cc = {2, 3, 4, 5, 3, 1, 1, {{0, 0}, {1, 1}, {1, 1}, 1}};
    float x[2 * 3 * 4 * 5], w[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, y[2 * 3 * 4 * 5];
    nnop_test_fill_f32(x, 120, 11, -2.0f, 2.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    nnop_test_assert_floats(y, x, 120, 0.0);
}

static void test_conv_1x1_permutation_kernel_swaps_channels(void **state)
{
    /* K = 2 outputs from C = 2 inputs: y0 = x1, y1 = 3 * x0 */
    conv_case cc = {1, 2, 3, 3, 2, 1, 1, {{0, 0}, {1, 1}, {1, 1}, 1}};
    float x[18], w[4] = {0, 1, 3, 0}, y[18], want[18];
    int i;
    nnop_test_fill_f32(x, 18, 12, -1.0f, 1.0f);
    for (i = 0; i < 9; i++) {
        want[i] = x[9 + i];
        want[9 + i] = 3.0f * x[i];
    }
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NHWC, x, w, y);
    nnop_test_assert_floats(y, want, 18, 0.0);
}

static void test_conv_3x3_centre_tap_kernel_is_identity_with_pad_1(void **state)
{
    conv_case cc = {1, 1, 5, 7, 1, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 1}};
    float x[35], w[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0}, y[35];
    nnop_test_fill_f32(x, 35, 13, -3.0f, 3.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    nnop_test_assert_floats(y, x, 35, 0.0);
}

/* 3x3 all-ones filter on an all-ones input with pad 1: each output counts the in-bounds taps:
 * 4 at corners, 6 on edges, 9 inside; times C for C input channels. */
static void test_conv_3x3_all_ones_pad_1_counts_4_6_9(void **state)
{
    conv_case cc = {1, 1, 4, 5, 1, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 1}};
    float x[20], w[9], y[20];
    static const float want[20] = {4, 6, 6, 6, 4, /**/ 6, 9, 9, 9, 6, /**/
                                   6, 9, 9, 9, 6, /**/ 4, 6, 6, 6, 4};
    fill_const(x, 20, 1.0f);
    fill_const(w, 9, 1.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    nnop_test_assert_floats(y, want, 20, 0.0);
}

static void test_conv_3x3_all_ones_two_channels_doubles_counts(void **state)
{
    conv_case cc = {1, 2, 3, 3, 1, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 1}};
    float x[18], w[18], y[9];
    static const float want[9] = {8, 12, 8, 12, 18, 12, 8, 12, 8};
    fill_const(x, 18, 1.0f);
    fill_const(w, 18, 1.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NHWC, x, w, y);
    nnop_test_assert_floats(y, want, 9, 0.0);
}

/* x = 1..9, Sobel-x filter, no padding: one output, worked out by hand:
 * 1*1 - 1*3 + 2*4 - 2*6 + 1*7 - 1*9 = -8. */
static void test_conv_hand_computed_sobel_valid(void **state)
{
    conv_case cc = {1, 1, 3, 3, 1, 3, 3, {{0, 0}, {1, 1}, {1, 1}, 1}};
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    float w[9] = {1, 0, -1, 2, 0, -2, 1, 0, -1};
    float y[1];
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    assert_true(y[0] == -8.0f);
}

/* The same with pad 1: a 3x3 output, every element worked out by hand (cross-correlation, the
 * filter is not flipped: a flipped filter would negate every value). */
static void test_conv_hand_computed_sobel_pad_1(void **state)
{
    conv_case cc = {1, 1, 3, 3, 1, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 1}};
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    float w[9] = {1, 0, -1, 2, 0, -2, 1, 0, -1};
    static const float want[9] = {-9, -6, 9, -20, -8, 20, -21, -6, 21};
    float y[9];
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    nnop_test_assert_floats(y, want, 9, 0.0);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NHWC, x, w, y);
    nnop_test_assert_floats(y, want, 9, 0.0);
}

/* x[h][w] = 5h + w on 5x5, 2x2 all-ones filter, stride 2: windows at (0,0), (0,2), (2,0),
 * (2,2): 0+1+5+6 = 12, 2+3+7+8 = 20, 10+11+15+16 = 52, 12+13+17+18 = 60. */
static void test_conv_stride_2_hand_computed(void **state)
{
    conv_case cc = {1, 1, 5, 5, 1, 2, 2, {{0, 0}, {2, 2}, {1, 1}, 1}};
    float x[25], w[4] = {1, 1, 1, 1}, y[4];
    static const float want[4] = {12, 20, 52, 60};
    int i;
    for (i = 0; i < 25; i++)
        x[i] = (float)i;
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    nnop_test_assert_floats(y, want, 4, 0.0);
}

/* All ones 5x5, 3x3 ones, pad 1, stride 2: a 3x3 output sampling corners, edges, centre. */
static void test_conv_stride_2_pad_1_all_ones_counts(void **state)
{
    conv_case cc = {1, 1, 5, 5, 1, 3, 3, {{1, 1}, {2, 2}, {1, 1}, 1}};
    float x[25], w[9], y[9];
    static const float want[9] = {4, 6, 4, 6, 9, 6, 4, 6, 4};
    fill_const(x, 25, 1.0f);
    fill_const(w, 9, 1.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NHWC, x, w, y);
    nnop_test_assert_floats(y, want, 9, 0.0);
}

/* x[h][w] = 5h + w, 3x3 ones with dilation 2 and no padding: the taps are rows and columns
 * {0, 2, 4}: sum = 3 * 5 * (0+2+4) + 3 * (0+2+4) = 108, a single output. */
static void test_conv_dilation_2_hand_computed(void **state)
{
    conv_case cc = {1, 1, 5, 5, 1, 3, 3, {{0, 0}, {1, 1}, {2, 2}, 1}};
    float x[25], w[9], y[1];
    int i;
    for (i = 0; i < 25; i++)
        x[i] = (float)i;
    fill_const(w, 9, 1.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    assert_true(y[0] == 108.0f);
}

/* With pad 2 the output is 5x5; the centre is still 108 and the corner (0,0) sees taps at rows
 * and columns {-2, 0, 2}, of which {0, 2} x {0, 2} are inside: 0 + 2 + 10 + 12 = 24. */
static void test_conv_dilation_2_pad_2_corner_and_centre(void **state)
{
    conv_case cc = {1, 1, 5, 5, 1, 3, 3, {{2, 2}, {1, 1}, {2, 2}, 1}};
    float x[25], w[9], y[25], want[25];
    int i;
    for (i = 0; i < 25; i++)
        x[i] = (float)i;
    fill_const(w, 9, 1.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NHWC, x, w, y);
    assert_true(y[0] == 24.0f);
    assert_true(y[12] == 108.0f);
    naive_conv(&cc, x, w, want);
    nnop_test_assert_floats(y, want, 25, 0.0);
}

/* C = 4, K = 2, groups = 2: channel c holds c + 1; each filter is [1, 10] over its group's
 * two channels: y0 = 1*1 + 10*2 = 21 (channels 0, 1), y1 = 1*3 + 10*4 = 43 (channels 2, 3). */
static void test_conv_groups_2_hand_computed(void **state)
{
    conv_case cc = {1, 4, 2, 3, 2, 1, 1, {{0, 0}, {1, 1}, {1, 1}, 2}};
    float x[24], w[4] = {1, 10, 1, 10}, y[12];
    int c, i;
    for (c = 0; c < 4; c++)
        for (i = 0; i < 6; i++)
            x[c * 6 + i] = (float)(c + 1);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    for (i = 0; i < 6; i++) {
        assert_true(y[i] == 21.0f);
        assert_true(y[6 + i] == 43.0f);
    }
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NHWC, x, w, y);
    for (i = 0; i < 6; i++) {
        assert_true(y[i] == 21.0f);
        assert_true(y[6 + i] == 43.0f);
    }
}

/* Depthwise (groups = C = K = 3): filter k is all (k + 1); on all-ones with pad 1 each channel
 * gives (k + 1) times the 4/6/9 window counts. */
static void test_conv_depthwise_all_ones_scales_per_channel(void **state)
{
    conv_case cc = {1, 3, 4, 4, 3, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 3}};
    static const float counts[16] = {4, 6, 6, 4, 6, 9, 9, 6, 6, 9, 9, 6, 4, 6, 6, 4};
    float x[48], w[27], y[48];
    int k, i;
    fill_const(x, 48, 1.0f);
    for (k = 0; k < 3; k++)
        fill_const(w + 9 * k, 9, (float)(k + 1));
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NHWC, x, w, y);
    for (k = 0; k < 3; k++)
        for (i = 0; i < 16; i++)
            assert_true(y[k * 16 + i] == (float)(k + 1) * counts[i]);
}

static void test_conv_depthwise_random_matches_naive(void **state)
{
    conv_case cc = {2, 6, 7, 5, 6, 3, 3, {{1, 1}, {2, 1}, {1, 1}, 6}};
    float x[2 * 6 * 7 * 5], w[6 * 9], y[2 * 6 * 4 * 5], want[2 * 6 * 4 * 5];
    nnop_test_fill_f32(x, 420, 21, -1.0f, 1.0f);
    nnop_test_fill_f32(w, 54, 22, -1.0f, 1.0f);
    naive_conv(&cc, x, w, want);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    assert_true(nnop_test_compare(NNOP_F32, y, want, 240, 1e-5, 1e-6, "depthwise nchw", 21));
}

/* Channel multiplier 2 (groups = C = 3, K = 6): filters 2g and 2g+1 read channel g only. */
static void test_conv_depthwise_multiplier_2_reads_own_channel(void **state)
{
    conv_case cc = {1, 3, 2, 2, 6, 1, 1, {{0, 0}, {1, 1}, {1, 1}, 3}};
    float x[12], w[6] = {1, 2, 1, 2, 1, 2}, y[24];
    int k, i;
    for (i = 0; i < 12; i++)
        x[i] = (float)(i / 4 + 1) * 100.0f + (float)(i % 4);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    for (k = 0; k < 6; k++)
        for (i = 0; i < 4; i++)
            assert_true(y[k * 4 + i] == (float)(k % 2 + 1) * x[(k / 2) * 4 + i]);
}

/* ------------------------------------------------------------------ layouts and odd sizes */

static void check_random_case(nnop_context *ctx, const conv_case *cc, nnop_layout l, uint64_t seed)
{
    int64_t nx = cc->n * cc->c * cc->h * cc->w;
    int64_t nw = cc->k * (cc->c / cc->p.groups) * cc->r * cc->s;
    int64_t ny = cc->n * cc->k * case_oh(cc) * case_ow(cc);
    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
    float *y = malloc((size_t)ny * sizeof *y), *want = malloc((size_t)ny * sizeof *want);
    assert_true(x && w && y && want);
    nnop_test_fill_f32(x, nx, seed, -1.0f, 1.0f);
    nnop_test_fill_f32(w, nw, seed + 1, -1.0f, 1.0f);
    naive_conv(cc, x, w, want);
    run_conv(ctx, cc, NNOP_F32, l, x, w, y);
    assert_true(nnop_test_compare(NNOP_F32, y, want, ny, 1e-5, 1e-6,
                                  l == NNOP_NHWC ? "conv nhwc" : "conv nchw", seed));
    free(x);
    free(w);
    free(y);
    free(want);
}

static void test_conv_nchw_and_nhwc_give_the_same_logical_result(void **state)
{
    conv_case cc = {2, 4, 7, 5, 6, 3, 3, {{1, 1}, {2, 2}, {1, 1}, 2}};
    int64_t ny = 2 * 6 * case_oh(&cc) * case_ow(&cc);
    float x[2 * 4 * 7 * 5], w[6 * 2 * 9], y1[2 * 6 * 4 * 3], y2[2 * 6 * 4 * 3];
    assert_int_equal(ny, 144);
    nnop_test_fill_f32(x, 280, 31, -1.0f, 1.0f);
    nnop_test_fill_f32(w, 108, 32, -1.0f, 1.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y1);
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NHWC, x, w, y2);
    assert_memory_equal(y1, y2, sizeof y1);
    check_random_case((nnop_context *)*state, &cc, NNOP_NCHW, 31);
}

static void test_conv_odd_sizes_rectangular_kernel_match_naive(void **state)
{
    conv_case cc = {3, 5, 9, 11, 7, 2, 5, {{0, 2}, {1, 3}, {3, 1}, 1}};
    check_random_case((nnop_context *)*state, &cc, NNOP_NCHW, 41);
    check_random_case((nnop_context *)*state, &cc, NNOP_NHWC, 42);
}

static void test_conv_mixed_stride_pad_dilation_groups_match_naive(void **state)
{
    static const nnop_conv_params ps[] = {
            {{2, 1}, {2, 1}, {1, 2}, 1},
            {{1, 0}, {3, 2}, {2, 1}, 2},
            {{0, 0}, {1, 1}, {1, 1}, 4},
            {{3, 3}, {2, 2}, {3, 3}, 1},
    };
    size_t i;
    for (i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        conv_case cc = {2, 4, 8, 7, 8, 3, 3, ps[i]};
        check_random_case((nnop_context *)*state, &cc, (i % 2) ? NNOP_NHWC : NNOP_NCHW, 50 + i);
    }
}

/* Output rows wider than any internal row blocking (a few hundred columns), with stride,
 * padding and dilation, in both layouts. */
static void test_conv_wide_rows_match_naive(void **state)
{
    conv_case wide = {1, 2, 3, 700, 3, 3, 3, {{1, 2}, {1, 1}, {1, 2}, 1}};     /* 700 columns out */
    conv_case strided = {2, 3, 2, 1201, 2, 1, 5, {{0, 2}, {1, 2}, {1, 1}, 1}}; /* 601 */
    assert_int_equal(case_ow(&wide), 700);
    assert_int_equal(case_ow(&strided), 601);
    check_random_case((nnop_context *)*state, &wide, NNOP_NCHW, 45);
    check_random_case((nnop_context *)*state, &wide, NNOP_NHWC, 46);
    check_random_case((nnop_context *)*state, &strided, NNOP_NCHW, 47);
    check_random_case((nnop_context *)*state, &strided, NNOP_NHWC, 48);
}

static void test_conv_1x1_input_with_pad_sees_only_the_centre(void **state)
{
    /* 1x1 input, 3x3 filter, pad 1: one output, only the centre tap is inside */
    conv_case cc = {1, 1, 1, 1, 1, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 1}};
    float x[1] = {2.5f}, w[9] = {9, 9, 9, 9, 4, 9, 9, 9, 9}, y[1];
    run_conv((nnop_context *)*state, &cc, NNOP_F32, NNOP_NCHW, x, w, y);
    assert_true(y[0] == 10.0f);
}

/* ------------------------------------------------------------------ reduced precision */

/* Inputs exactly representable in t (filled through t), reference in double from the same
 * values; the only error is the final rounding to t, within the dtype tolerance. */
static void check_dtype(nnop_context *ctx, nnop_dtype t, nnop_layout l, uint64_t seed)
{
    conv_case cc = {2, 4, 6, 5, 4, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 2}};
    float x[2 * 4 * 6 * 5], w[4 * 2 * 9], y[2 * 4 * 6 * 5], want[2 * 4 * 6 * 5];
    uint16_t tmp[2 * 4 * 6 * 5];
    nnop_test_fill(t, tmp, x, 240, seed, -1.0f, 1.0f);
    nnop_test_fill(t, tmp, w, 72, seed + 1, -1.0f, 1.0f);
    naive_conv(&cc, x, w, want);
    run_conv(ctx, &cc, t, l, x, w, y);
    assert_true(nnop_test_compare(NNOP_F32, y, want, 240, nnop_test_rtol(t), 1e-3,
                                  t == NNOP_F16 ? "conv f16" : "conv bf16", seed));
}

static void test_conv_f16_nchw_matches_naive(void **state)
{
    check_dtype((nnop_context *)*state, NNOP_F16, NNOP_NCHW, 61);
}

static void test_conv_f16_nhwc_matches_naive(void **state)
{
    check_dtype((nnop_context *)*state, NNOP_F16, NNOP_NHWC, 62);
}

static void test_conv_bf16_nchw_matches_naive(void **state)
{
    check_dtype((nnop_context *)*state, NNOP_BF16, NNOP_NCHW, 63);
}

static void test_conv_bf16_nhwc_matches_naive(void **state)
{
    check_dtype((nnop_context *)*state, NNOP_BF16, NNOP_NHWC, 64);
}

/* f16 result of 3x3 all-ones on all-ones is exact: 4/6/9 are representable. */
static void test_conv_f16_all_ones_counts_are_exact(void **state)
{
    conv_case cc = {1, 1, 3, 4, 1, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 1}};
    float x[12], w[9], y[12];
    static const float want[12] = {4, 6, 6, 4, 6, 9, 9, 6, 4, 6, 6, 4};
    fill_const(x, 12, 1.0f);
    fill_const(w, 9, 1.0f);
    run_conv((nnop_context *)*state, &cc, NNOP_F16, NNOP_NHWC, x, w, y);
    nnop_test_assert_floats(y, want, 12, 0.0);
    run_conv((nnop_context *)*state, &cc, NNOP_BF16, NNOP_NCHW, x, w, y);
    nnop_test_assert_floats(y, want, 12, 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conv_1x1_identity_kernel_copies_input),
            cmocka_unit_test(test_conv_1x1_permutation_kernel_swaps_channels),
            cmocka_unit_test(test_conv_3x3_centre_tap_kernel_is_identity_with_pad_1),
            cmocka_unit_test(test_conv_3x3_all_ones_pad_1_counts_4_6_9),
            cmocka_unit_test(test_conv_3x3_all_ones_two_channels_doubles_counts),
            cmocka_unit_test(test_conv_hand_computed_sobel_valid),
            cmocka_unit_test(test_conv_hand_computed_sobel_pad_1),
            cmocka_unit_test(test_conv_stride_2_hand_computed),
            cmocka_unit_test(test_conv_stride_2_pad_1_all_ones_counts),
            cmocka_unit_test(test_conv_dilation_2_hand_computed),
            cmocka_unit_test(test_conv_dilation_2_pad_2_corner_and_centre),
            cmocka_unit_test(test_conv_groups_2_hand_computed),
            cmocka_unit_test(test_conv_depthwise_all_ones_scales_per_channel),
            cmocka_unit_test(test_conv_depthwise_random_matches_naive),
            cmocka_unit_test(test_conv_depthwise_multiplier_2_reads_own_channel),
            cmocka_unit_test(test_conv_nchw_and_nhwc_give_the_same_logical_result),
            cmocka_unit_test(test_conv_odd_sizes_rectangular_kernel_match_naive),
            cmocka_unit_test(test_conv_mixed_stride_pad_dilation_groups_match_naive),
            cmocka_unit_test(test_conv_wide_rows_match_naive),
            cmocka_unit_test(test_conv_1x1_input_with_pad_sees_only_the_centre),
            cmocka_unit_test(test_conv_f16_nchw_matches_naive),
            cmocka_unit_test(test_conv_f16_nhwc_matches_naive),
            cmocka_unit_test(test_conv_bf16_nchw_matches_naive),
            cmocka_unit_test(test_conv_bf16_nhwc_matches_naive),
            cmocka_unit_test(test_conv_f16_all_ones_counts_are_exact),
    };
    return cmocka_run_group_tests_name("ops_conv", tests, nnop_test_setup_cpu_context,
                                       nnop_test_teardown_context);
}
