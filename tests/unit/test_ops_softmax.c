/* test_ops_softmax.c: known answers for softmax over dim 1: rows sum to 1, known values, shift
 * invariance, stability for large inputs, the NaN and -inf rules, 4-D over channels in both
 * layouts, f16 and bf16. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

static void run_softmax(nnop_context *ctx, const nnop_tensor_desc *d, const float *x, float *y)
{
    nnop_graph *g = NULL;
    nnop_value v;
    nnop_tensor_desc got;
    size_t bytes = nnop_tensor_bytes(d);
    void *xb = malloc(bytes), *yb = malloc(bytes);
    const void *in[1];
    assert_true(xb && yb);
    nnop_test_pack(d, x, xb);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_softmax(g, nnop_input(g, "x", d));
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_value_desc(g, v, &got), NNOP_OK);
    assert_int_equal(got.ndim, d->ndim);
    assert_memory_equal(got.dims, d->dims, sizeof d->dims);
    in[0] = xb;
    nnop_test_run_unpack(g, in, d, yb, y);
    nnop_graph_destroy(g);
    free(xb);
    free(yb);
}

/* softmax([1, 2, 3]) = e^k / (e + e^2 + e^3) = [0.0900305732, 0.244728471, 0.665240956] */
static void test_softmax_known_values_1_2_3(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 1, 3);
    const float x[3] = {1, 2, 3}, want[3] = {0.0900305732f, 0.244728471f, 0.665240956f};
    float y[3];
    run_softmax((nnop_context *)*state, &d, x, y);
    nnop_test_assert_floats(y, want, 3, 1e-7);
}

static void test_softmax_equal_inputs_give_uniform_rows(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 3, 4);
    const float x[12] = {0, 0, 0, 0, 5, 5, 5, 5, -7.5f, -7.5f, -7.5f, -7.5f};
    float y[12], want[12];
    int i;
    for (i = 0; i < 12; i++)
        want[i] = 0.25f;
    run_softmax((nnop_context *)*state, &d, x, y);
    nnop_test_assert_floats(y, want, 12, 0.0);
}

static void test_softmax_single_class_is_one(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 3, 1);
    const float x[3] = {-100, 0, 55}, want[3] = {1, 1, 1};
    float y[3];
    run_softmax((nnop_context *)*state, &d, x, y);
    nnop_test_assert_floats(y, want, 3, 0.0);
}

/* Each row is a separate distribution: rows sum to 1, entries in [0, 1], and the order of the
 * entries follows the order of the inputs. */
static void test_softmax_rows_sum_to_one(void **state)
{
    enum { R = 5, C = 10 };
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, R, C);
    float x[R * C], y[R * C];
    int r, c, c2;
    nnop_test_fill_f32(x, R * C, 1001, -10.0f, 10.0f);
    run_softmax((nnop_context *)*state, &d, x, y);
    for (r = 0; r < R; r++) {
        double s = 0.0;
        for (c = 0; c < C; c++) {
            assert_true(y[r * C + c] >= 0.0f && y[r * C + c] <= 1.0f);
            s += y[r * C + c];
            for (c2 = 0; c2 < C; c2++)
                if (x[r * C + c] < x[r * C + c2])
                    assert_true(y[r * C + c] <= y[r * C + c2]);
        }
        assert_true(fabs(s - 1.0) < 1e-6);
    }
}

static void test_softmax_random_rows_match_formula(void **state)
{
    enum { R = 4, C = 7 };
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, R, C);
    float x[R * C], y[R * C], want[R * C];
    int r, c;
    nnop_test_fill_f32(x, R * C, 1002, -5.0f, 5.0f);
    for (r = 0; r < R; r++) {
        double s = 0.0; /* without the max shift: the inputs are small */
        for (c = 0; c < C; c++)
            s += exp((double)x[r * C + c]);
        for (c = 0; c < C; c++)
            want[r * C + c] = (float)(exp((double)x[r * C + c]) / s);
    }
    run_softmax((nnop_context *)*state, &d, x, y);
    assert_true(nnop_test_compare(NNOP_F32, y, want, R * C, 1e-6, 1e-7, "softmax", 1002));
}

/* softmax(x + k) = softmax(x): [1001, 1002, 1003] must give the known values of [1, 2, 3]
 * (a naive exp(1003) overflows to inf and gives NaN). */
static void test_softmax_large_inputs_are_stable(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 3);
    const float x[6] = {1001, 1002, 1003, -1001, -1002, -1003};
    const float want[6] = {0.0900305732f, 0.244728471f, 0.665240956f,
                           0.665240956f,  0.244728471f, 0.0900305732f};
    float y[6];
    run_softmax((nnop_context *)*state, &d, x, y);
    nnop_test_assert_floats(y, want, 6, 1e-6);
}

static void test_softmax_extreme_inputs_stay_finite(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 3, 2);
    const float x[6] = {FLT_MAX, FLT_MAX, -FLT_MAX, 0.0f, 1e4f, 0.0f};
    const float want[6] = {0.5f, 0.5f, 0.0f, 1.0f, 1.0f, 0.0f};
    float y[6];
    run_softmax((nnop_context *)*state, &d, x, y);
    nnop_test_assert_floats(y, want, 6, 0.0);
}

/* nnop.h's rules: a NaN makes its whole slice NaN; -inf entries give 0 (the rest is the
 * softmax of the finite entries); a slice of only -inf gives NaN. */
static void test_softmax_nan_and_minus_inf_rules(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 3, 3);
    const float x[9] = {1, NAN, 3, -INFINITY, 0, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    float y[9];
    int i;
    run_softmax((nnop_context *)*state, &d, x, y);
    for (i = 0; i < 3; i++)
        assert_true(isnan(y[i]));
    assert_true(y[3] == 0.0f && y[4] == 1.0f && y[5] == 0.0f);
    for (i = 6; i < 9; i++)
        assert_true(isnan(y[i]));
}

static void test_softmax_is_shift_invariant(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 6);
    float x[12], xs[12], y[12], ys[12];
    int i;
    nnop_test_fill_f32(x, 12, 1003, -3.0f, 3.0f);
    for (i = 0; i < 12; i++)
        xs[i] = x[i] + 64.0f; /* exact in float for |x| < 3 */
    run_softmax((nnop_context *)*state, &d, x, y);
    run_softmax((nnop_context *)*state, &d, xs, ys);
    nnop_test_assert_floats(ys, y, 12, 1e-6);
}

/* 4-D: softmax over C at every (n, h, w), in both layouts. */
static void test_softmax_4d_over_channels_nchw_and_nhwc(void **state)
{
    enum { N = 2, C = 3, H = 3, W = 2, HW = H * W, E = N * C * HW };
    float x[E], y[E], want[E];
    int l, n, c, i;
    nnop_test_fill_f32(x, E, 1004, -4.0f, 4.0f);
    for (n = 0; n < N; n++)
        for (i = 0; i < HW; i++) {
            double s = 0.0;
            for (c = 0; c < C; c++)
                s += exp((double)x[(n * C + c) * HW + i]);
            for (c = 0; c < C; c++)
                want[(n * C + c) * HW + i] = (float)(exp((double)x[(n * C + c) * HW + i]) / s);
        }
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, N, C, H, W);
        run_softmax((nnop_context *)*state, &d, x, y);
        assert_true(nnop_test_compare(NNOP_F32, y, want, E, 1e-6, 1e-7, "softmax 4d", 1004));
    }
}

static void test_softmax_f16_and_bf16_match_formula(void **state)
{
    static const nnop_dtype types[2] = {NNOP_F16, NNOP_BF16};
    enum { R = 3, C = 8 };
    float x[R * C], y[R * C], want[R * C];
    uint16_t tmp[R * C];
    int t, r, c;
    for (t = 0; t < 2; t++) {
        nnop_tensor_desc d = nnop_tensor_2d(types[t], R, C);
        nnop_test_fill(types[t], tmp, x, R * C, 1010 + t, -6.0f, 6.0f);
        for (r = 0; r < R; r++) {
            double s = 0.0;
            for (c = 0; c < C; c++)
                s += exp((double)x[r * C + c]);
            for (c = 0; c < C; c++)
                want[r * C + c] = (float)(exp((double)x[r * C + c]) / s);
        }
        run_softmax((nnop_context *)*state, &d, x, y);
        assert_true(nnop_test_compare(NNOP_F32, y, want, R * C, nnop_test_rtol(types[t]), 1e-4,
                                      "softmax", 1010 + t));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_softmax_known_values_1_2_3),
            cmocka_unit_test(test_softmax_equal_inputs_give_uniform_rows),
            cmocka_unit_test(test_softmax_single_class_is_one),
            cmocka_unit_test(test_softmax_rows_sum_to_one),
            cmocka_unit_test(test_softmax_random_rows_match_formula),
            cmocka_unit_test(test_softmax_large_inputs_are_stable),
            cmocka_unit_test(test_softmax_extreme_inputs_stay_finite),
            cmocka_unit_test(test_softmax_nan_and_minus_inf_rules),
            cmocka_unit_test(test_softmax_is_shift_invariant),
            cmocka_unit_test(test_softmax_4d_over_channels_nchw_and_nhwc),
            cmocka_unit_test(test_softmax_f16_and_bf16_match_formula),
    };
    return cmocka_run_group_tests_name("ops_softmax", tests, nnop_test_setup_cpu_context,
                                       nnop_test_teardown_context);
}
