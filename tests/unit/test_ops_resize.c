/* test_ops_resize.c: nnop_resize with F.interpolate's semantics: nearest (floor rule, in float,
 * with its out = in and out = 2 in shortcuts), bilinear with align_corners false and true, by
 * output size or by scale factor (coordinates then map by 1/scale); hand-computed values worked
 * out from PyTorch's definitions, random odd shapes against a separable naive implementation in
 * every dtype and layout, and the errors. */
#include "op_test_util.h"

static nnop_value build_resize(nnop_graph *g, const nnop_value *in, const void *arg)
{
    return nnop_resize(g, in[0], (const nnop_resize_params *)arg);
}

static nnop_resize_params by_size(nnop_resize_mode m, int align, int64_t oh, int64_t ow)
{
    nnop_resize_params p;
    memset(&p, 0, sizeof p);
    p.mode = m;
    p.align_corners = align;
    p.size[0] = oh;
    p.size[1] = ow;
    return p;
}

static nnop_resize_params by_scale(nnop_resize_mode m, int align, double sh, double sw)
{
    nnop_resize_params p = by_size(m, align, 0, 0);
    p.scale[0] = sh;
    p.scale[1] = sw;
    return p;
}

static nnop_status run_resize(nnop_context *ctx, const nnop_resize_params *p,
                              const nnop_tensor_desc *xd, const float *x, float *y, int64_t cap,
                              nnop_tensor_desc *yd)
{
    return opt_run(ctx, 1, xd, &x, build_resize, p, y, cap, yd);
}

/* One row (1 x 1 x 1 x W) through p; checks the output width and the values. */
static void check_row(nnop_context *ctx, const nnop_resize_params *p, const float *x, int64_t w,
                      const double *want, int64_t ow)
{
    int l;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 1, 1, w), yd;
        float y[16];
        assert_int_equal(run_resize(ctx, p, &xd, x, y, 16, &yd), NNOP_OK);
        assert_int_equal(yd.dims[2], 1);
        assert_int_equal(yd.dims[3], ow);
        opt_assert_close(y, want, ow, 1e-6, "row");
    }
}

/* Nearest 2x: each pixel becomes a 2 x 2 block. */
static void test_nearest_2x_replicates_pixels(void **state)
{
    static const float x[4] = {1, 2, 3, 4};
    static const double want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    nnop_resize_params ps = by_size(NNOP_RESIZE_NEAREST, 0, 4, 4);
    nnop_resize_params pf = by_scale(NNOP_RESIZE_NEAREST, 0, 2.0, 2.0);
    int l;
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 1, 2, 2), yd, wd;
        float y[16];
        assert_int_equal(run_resize((nnop_context *)*state, &ps, &xd, x, y, 16, &yd), NNOP_OK);
        wd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 1, 4, 4);
        assert_memory_equal(&yd, &wd, sizeof yd);
        opt_assert_close(y, want, 16, 0.0, "nearest 2x by size");
        assert_int_equal(run_resize((nnop_context *)*state, &pf, &xd, x, y, 16, &yd), NNOP_OK);
        opt_assert_close(y, want, 16, 0.0, "nearest 2x by scale");
    }
}

/* Nearest by size: src = floor(dst * in / out). 5 -> 3: s = 5/3, dst 0 1 2 -> 0 1 3;
 * 3 -> 5: s = 0.6, dst 0..4 -> 0 0 1 1 2. */
static void test_nearest_floor_rule(void **state)
{
    static const float x5[5] = {10, 11, 12, 13, 14}, x3[3] = {20, 21, 22};
    static const double down[3] = {10, 11, 13}, up[5] = {20, 20, 21, 21, 22};
    nnop_resize_params p = by_size(NNOP_RESIZE_NEAREST, 0, 1, 3);
    check_row((nnop_context *)*state, &p, x5, 5, down, 3);
    p.size[1] = 5;
    check_row((nnop_context *)*state, &p, x3, 3, up, 5);
}

/* By scale factor the coordinates map by 1/scale, not in/out (PyTorch with scale_factor and no
 * recompute_scale_factor): W = 4, scale 1.7 gives floor(6.8) = 6 columns, s = 1/1.7 = 0.588:
 * dst 0..5 -> 0 0 1 1 2 2; size 6 gives s = 4/6: 0 0 1 2 2 3. */
static void test_nearest_by_scale_maps_by_inverse_scale(void **state)
{
    static const float x[4] = {0, 1, 2, 3};
    static const double scaled[6] = {0, 0, 1, 1, 2, 2}, sized[6] = {0, 0, 1, 2, 2, 3};
    nnop_resize_params ps = by_scale(NNOP_RESIZE_NEAREST, 0, 1.0, 1.7);
    nnop_resize_params pz = by_size(NNOP_RESIZE_NEAREST, 0, 1, 6);
    check_row((nnop_context *)*state, &ps, x, 4, scaled, 6);
    check_row((nnop_context *)*state, &pz, x, 4, sized, 6);
}

/* Bilinear, align_corners false, 2 -> 4: src = (dst + 0.5) / 2 - 0.5 = -0.25 (clamped to 0),
 * 0.25, 0.75, 1.25 (past the last pixel: the edge): [1, 3] -> [1, 1.5, 2.5, 3]. Down 4 -> 2:
 * src 0.5 and 2.5: [1, 2, 3, 4] -> [1.5, 3.5]. */
static void test_bilinear_half_pixel_known_values(void **state)
{
    static const float x2[2] = {1, 3}, x4[4] = {1, 2, 3, 4};
    static const double up[4] = {1, 1.5, 2.5, 3}, down[2] = {1.5, 3.5};
    nnop_resize_params p = by_size(NNOP_RESIZE_BILINEAR, 0, 1, 4);
    check_row((nnop_context *)*state, &p, x2, 2, up, 4);
    p.size[1] = 2;
    check_row((nnop_context *)*state, &p, x4, 4, down, 2);
    p = by_scale(NNOP_RESIZE_BILINEAR, 0, 1.0, 2.0);
    check_row((nnop_context *)*state, &p, x2, 2, up, 4);
}

/* align_corners true: src = dst * (in - 1) / (out - 1): [1, 3] -> 4 is [1, 5/3, 7/3, 3]; 2-D
 * [[1, 2], [3, 4]] -> 3 x 3 is [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]]; out = 1 takes pixel 0;
 * the scale factor does not change the mapping (only the size). */
static void test_bilinear_align_corners_known_values(void **state)
{
    static const float x2[2] = {1, 3}, x[4] = {1, 2, 3, 4};
    static const double up[4] = {1, 5.0 / 3, 7.0 / 3, 3}, one[1] = {1};
    static const double want[9] = {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4};
    nnop_resize_params p = by_size(NNOP_RESIZE_BILINEAR, 1, 1, 4);
    int l;
    check_row((nnop_context *)*state, &p, x2, 2, up, 4);
    p.size[1] = 1;
    check_row((nnop_context *)*state, &p, x2, 2, one, 1);
    p = by_scale(NNOP_RESIZE_BILINEAR, 1, 1.0, 2.2); /* floor(4.4) = 4 columns, as size 4 */
    check_row((nnop_context *)*state, &p, x2, 2, up, 4);
    p = by_size(NNOP_RESIZE_BILINEAR, 1, 3, 3);
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 1, 2, 2), yd;
        float y[9];
        assert_int_equal(run_resize((nnop_context *)*state, &p, &xd, x, y, 9, &yd), NNOP_OK);
        opt_assert_close(y, want, 9, 1e-7, "align_corners 2-D");
    }
}

/* An axis whose size does not change is copied, as PyTorch's CPU kernel does, even with a
 * scale factor other than 1 (floor(6 * 1.1) = 6): [0..5] stays [0..5]. Its zero-weight tap is
 * the pixel itself, so a NaN reaches no neighbour, and inf gives NaN there, as in PyTorch
 * (1 * inf + 0 * inf). Found by an outside test against PyTorch 2.15. */
static void test_bilinear_axis_of_unchanged_size_is_a_copy(void **state)
{
    static const float ramp[6] = {0, 1, 2, 3, 4, 5};
    static const double same[6] = {0, 1, 2, 3, 4, 5};
    nnop_context *ctx = (nnop_context *)*state;
    nnop_resize_params p = by_scale(NNOP_RESIZE_BILINEAR, 0, 1.0, 1.1);
    int l, align, k;
    check_row(ctx, &p, ramp, 6, same, 6);
    p = by_scale(NNOP_RESIZE_BILINEAR, 1, 1.0, 1.1);
    check_row(ctx, &p, ramp, 6, same, 6);
    for (align = 0; align < 2; align++)
        for (l = 0; l < 2; l++) {
            /* 2 x 3, column 1 NaN in row 0 and inf in row 1 -> 4 x 3: W kept, H doubled */
            float x[6] = {1, NAN, 5, 2, INFINITY, 6}, y[12];
            nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, opt_layout(l), 1, 1, 2, 3), yd;
            p = by_size(NNOP_RESIZE_BILINEAR, align, 4, 3);
            assert_int_equal(run_resize(ctx, &p, &xd, x, y, 12, &yd), NNOP_OK);
            assert_int_equal(yd.dims[2], 4);
            for (k = 0; k < 4; k++) {
                assert_false(isnan(y[k * 3 + 0]) || isinf(y[k * 3 + 0]));
                assert_true(isnan(y[k * 3 + 1]));
                assert_false(isnan(y[k * 3 + 2]) || isinf(y[k * 3 + 2]));
            }
        }
}

/* ------------------------------------------------------------------ random against naive */

/* PyTorch's source coordinate scale in float (see nnop_resize). */
static float naive_scale(const nnop_resize_params *p, int i, int64_t in, int64_t out)
{
    if (p->mode == NNOP_RESIZE_BILINEAR && p->align_corners)
        return out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
    return p->size[0] ? (float)in / (float)out : (float)(1.0 / p->scale[i]);
}

/* Separable: a W pass into a double buffer (rows of x resized), then an H pass. */
static void naive_resize(const nnop_resize_params *p, const float *x, int64_t nc, int64_t h,
                         int64_t w, int64_t oh, int64_t ow, double *y)
{
    static double tmp[4096];
    int64_t k, i, j, pass;
    assert_true(nc * h * ow <= 4096);
    for (pass = 0; pass < 2; pass++) {
        int64_t in = pass ? h : w, out = pass ? oh : ow;
        float s = naive_scale(p, (int)(1 - pass), in, out);
        for (j = 0; j < out; j++) {
            int64_t i0, i1;
            double l1;
            if (p->mode == NNOP_RESIZE_NEAREST) {
                i0 = out == in ? j : out == 2 * in ? j / 2 : (int64_t)floorf((float)j * s);
                i0 = i0 < in - 1 ? i0 : in - 1;
                i1 = i0, l1 = 0.0;
            } else if (out == in) { /* an axis that keeps its size: a copy */
                i0 = i1 = j, l1 = 0.0;
            } else {
                float r = p->align_corners ? s * (float)j : s * ((float)j + 0.5f) - 0.5f;
                r = r < 0.0f ? 0.0f : r;
                i0 = (int64_t)r < in - 1 ? (int64_t)r : in - 1;
                i1 = i0 + 1 < in ? i0 + 1 : i0;
                l1 = (double)(r - (float)i0);
                l1 = l1 > 1.0 ? 1.0 : l1;
            }
            for (k = 0; k < nc; k++)
                for (i = 0; i < (pass ? ow : h); i++) {
                    if (!pass)
                        tmp[(k * h + i) * ow + j] =
                                (1.0 - l1) * x[(k * h + i) * w + i0] + l1 * x[(k * h + i) * w + i1];
                    else
                        y[(k * oh + j) * ow + i] = (1.0 - l1) * tmp[(k * h + i0) * ow + i] +
                                                   l1 * tmp[(k * h + i1) * ow + i];
                }
        }
    }
}

static void test_resize_random_matches_naive(void **state)
{
    enum { N = 2, C = 3, H = 5, W = 7, CAP = N * C * 16 * 16 };
    nnop_resize_params ps[12];
    static float x[N * C * H * W], y[CAP];
    static double want[CAP];
    uint64_t seed = 4500;
    int t, l, k;
    ps[0] = by_size(NNOP_RESIZE_NEAREST, 0, 3, 11);
    ps[1] = by_size(NNOP_RESIZE_NEAREST, 0, 10, 14); /* the 2x shortcut */
    ps[2] = by_scale(NNOP_RESIZE_NEAREST, 0, 1.7, 0.6);
    ps[3] = by_scale(NNOP_RESIZE_NEAREST, 0, 1.0, 2.3); /* H: out = in; W: 16 columns by 1/2.3 */
    ps[4] = by_size(NNOP_RESIZE_BILINEAR, 0, 9, 4);
    ps[5] = by_scale(NNOP_RESIZE_BILINEAR, 0, 2.5, 1.3);
    ps[6] = by_size(NNOP_RESIZE_BILINEAR, 1, 9, 4);
    ps[7] = by_scale(NNOP_RESIZE_BILINEAR, 1, 0.5, 2.0);
    ps[8] = by_size(NNOP_RESIZE_BILINEAR, 1, 1, 13);
    ps[9] = by_scale(NNOP_RESIZE_BILINEAR, 0, 1.1, 1.1);  /* 5 x 7 again: both axes copied */
    ps[10] = by_scale(NNOP_RESIZE_BILINEAR, 0, 1.1, 2.0); /* H kept (scale 1.1), W doubled */
    ps[11] = by_size(NNOP_RESIZE_BILINEAR, 1, 9, 7);      /* W kept, with align_corners */
    for (k = 0; k < 12; k++)
        for (t = 0; t < 3; t++)
            for (l = 0; l < 2; l++) {
                nnop_dtype dt = opt_dtype(t);
                nnop_tensor_desc xd = nnop_tensor_4d(dt, opt_layout(l), N, C, H, W), yd;
                char what[64];
                int64_t oh, ow;
                opt_fill(dt, x, N * C * H * W, seed++, -3.0f, 3.0f);
                assert_int_equal(run_resize((nnop_context *)*state, &ps[k], &xd, x, y, CAP, &yd),
                                 NNOP_OK);
                oh = yd.dims[2], ow = yd.dims[3];
                if (ps[k].size[0]) {
                    assert_int_equal(oh, ps[k].size[0]);
                    assert_int_equal(ow, ps[k].size[1]);
                } else {
                    assert_int_equal(oh, (int64_t)floor(H * ps[k].scale[0]));
                    assert_int_equal(ow, (int64_t)floor(W * ps[k].scale[1]));
                }
                naive_resize(&ps[k], x, N * C, H, W, oh, ow, want);
                snprintf(what, sizeof what, "params %d dtype %d layout %d", k, t, l);
                opt_assert_close(y, want, N * C * oh * ow,
                                 ps[k].mode == NNOP_RESIZE_NEAREST ? 0.0 : opt_tol(dt), what);
            }
}

/* ------------------------------------------------------------------ errors */

static void expect_resize_error(nnop_context *ctx, const nnop_resize_params *p,
                                const nnop_tensor_desc *xd, const char *msg)
{
    static float zeros[64];
    float y[64];
    nnop_tensor_desc yd;
    assert_int_not_equal(run_resize(ctx, p, xd, zeros, y, 64, &yd), NNOP_OK);
    opt_assert_error(ctx, msg);
}

static void test_resize_errors(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc x = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 1, 2, 4, 3);
    nnop_tensor_desc x2 = nnop_tensor_2d(NNOP_F16, 2, 3);
    nnop_resize_params p = by_size((nnop_resize_mode)5, 0, 2, 2);
    expect_resize_error(ctx, NULL, &x, "NNOP_ERR_INVALID_ARGUMENT: nnop_resize: params is NULL");
    expect_resize_error(ctx, &p, &x,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_resize (node #0): unknown resize mode 5");
    p = by_size(NNOP_RESIZE_NEAREST, 1, 2, 2);
    expect_resize_error(ctx, &p, &x,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_resize (node #0): align_corners is for "
                        "bilinear resize only (mode is nearest)");
    p = by_size(NNOP_RESIZE_BILINEAR, 0, 2, 2);
    expect_resize_error(ctx, &p, &x2,
                        "NNOP_ERR_SHAPE: nnop_resize (node #0): x must be 4-D (is 2-D)");
    p = by_size(NNOP_RESIZE_BILINEAR, 0, 3, 0);
    expect_resize_error(ctx, &p, &x,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_resize (node #0): size[1] = 0 must be >= "
                        "1 (or size 0, 0 to resize by scale)");
    p = by_size(NNOP_RESIZE_BILINEAR, 0, 4, 4);
    p.scale[0] = 2.0;
    expect_resize_error(ctx, &p, &x,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_resize (node #0): give size or scale, not "
                        "both (size[0] = 4, scale[0] = 2)");
    p = by_scale(NNOP_RESIZE_NEAREST, 0, 0.0, 0.0);
    expect_resize_error(ctx, &p, &x,
                        "NNOP_ERR_INVALID_ARGUMENT: nnop_resize (node #0): scale[0] = 0 must be "
                        "finite and > 0 (or give size)");
    p = by_scale(NNOP_RESIZE_NEAREST, 0, 0.1, 1.0);
    expect_resize_error(ctx, &p, &x,
                        "NNOP_ERR_SHAPE: nnop_resize (node #0): scale[0] = 0.1 gives an output "
                        "height of 0 (input height 4)");
    p = by_scale(NNOP_RESIZE_BILINEAR, 0, 1.0, 1e300);
    expect_resize_error(ctx, &p, &x,
                        "NNOP_ERR_SHAPE: nnop_resize (node #0): scale[1] = 1e+300 gives an output "
                        "width past 1099511627776");
    p = by_scale(NNOP_RESIZE_BILINEAR, 0, 1e6, 1e6); /* each fits, the tensor does not */
    expect_resize_error(ctx, &p, &x,
                        "NNOP_ERR_SHAPE: nnop_resize (node #0): the inferred output shape is out "
                        "of bounds: f16[1,2,4000000,3000000] NHWC: more than "
                        "NNOP_MAX_TENSOR_ELEMENTS (2^40 = 1099511627776) elements");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_nearest_2x_replicates_pixels),
            cmocka_unit_test(test_nearest_floor_rule),
            cmocka_unit_test(test_nearest_by_scale_maps_by_inverse_scale),
            cmocka_unit_test(test_bilinear_half_pixel_known_values),
            cmocka_unit_test(test_bilinear_align_corners_known_values),
            cmocka_unit_test(test_bilinear_axis_of_unchanged_size_is_a_copy),
            cmocka_unit_test(test_resize_random_matches_naive),
            cmocka_unit_test(test_resize_errors),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
