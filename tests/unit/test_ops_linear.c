/* test_ops_linear.c: known answers for the fully connected layer y = x w^T + b and for flatten
 * (N,C,H,W -> N, C*H*W in logical C, H, W order, as torch.flatten(x, 1), whatever the memory
 * layout), through the public graph API on a CPU context, in f32, f16 and bf16. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

/* y = x w^T (+ b) with x rows x in, w out x in; w and b constants when w_constant, else graph
 * inputs. b NULL = no bias (nnop_none()). */
static void run_linear(nnop_context *ctx, nnop_dtype t, int64_t rows, int64_t in_f, int64_t out_f,
                       const float *x, const float *w, const float *b, float *y, int w_constant)
{
    nnop_tensor_desc xd = nnop_tensor_2d(t, rows, in_f), wd = nnop_tensor_2d(t, out_f, in_f);
    nnop_tensor_desc bd = nnop_tensor_1d(t, out_f), yd = nnop_tensor_2d(t, rows, out_f), got;
    nnop_graph *g = NULL;
    nnop_value vx, vw, vb = nnop_none(), vy;
    void *xb = malloc(nnop_tensor_bytes(&xd)), *wb = malloc(nnop_tensor_bytes(&wd));
    void *bb = malloc(nnop_tensor_bytes(&bd)), *yb = malloc(nnop_tensor_bytes(&yd));
    const void *in[3];
    int n_in = 0;
    int64_t i;
    assert_true(xb && wb && bb && yb);
    nnop_test_pack(&xd, x, xb);
    nnop_test_pack(&wd, w, wb);
    if (b)
        nnop_test_pack(&bd, b, bb);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    vx = nnop_input(g, "x", &xd);
    in[n_in++] = xb;
    if (w_constant) {
        vw = nnop_constant(g, "w", &wd, wb);
        if (b)
            vb = nnop_constant(g, "b", &bd, bb);
    } else {
        vw = nnop_input(g, "w", &wd);
        in[n_in++] = wb;
        if (b) {
            vb = nnop_input(g, "b", &bd);
            in[n_in++] = bb;
        }
    }
    vy = nnop_linear(g, vx, vw, vb);
    assert_int_equal(nnop_output(g, vy, "y"), NNOP_OK);
    assert_int_equal(nnop_value_desc(g, vy, &got), NNOP_OK);
    assert_int_equal(got.ndim, 2);
    assert_int_equal(got.dims[0], rows);
    assert_int_equal(got.dims[1], out_f);
    assert_int_equal(got.dtype, t);
    nnop_test_run_unpack(g, in, &yd, yb, y);
    for (i = 0; i < rows * out_f; i++)
        assert_false(isnan(y[i]));
    nnop_graph_destroy(g);
    free(xb);
    free(wb);
    free(bb);
    free(yb);
}

static void naive_linear(int64_t rows, int64_t in_f, int64_t out_f, const float *x, const float *w,
                         const float *b, float *y)
{
    int64_t i, j, k;
    for (i = 0; i < rows; i++)
        for (j = 0; j < out_f; j++) {
            double acc = 0.0;
            for (k = 0; k < in_f; k++)
                acc += (double)x[i * in_f + k] * (double)w[j * in_f + k];
            y[i * out_f + j] = (float)(acc + (b ? (double)b[j] : 0.0));
        }
}

/* x = [[1,2,3],[4,5,6]], w = [[1,0,-1],[0.5,0.5,0.5]], b = [10,-1]:
 * y = [[1-3+10, 3-1], [4-6+10, 7.5-1]] = [[8, 2], [8, 6.5]] (w is OUT x IN: x w^T). */
static void test_linear_hand_computed_with_bias(void **state)
{
    const float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, -1, 0.5f, 0.5f, 0.5f};
    const float b[2] = {10, -1}, want[4] = {8, 2, 8, 6.5f};
    float y[4];
    run_linear((nnop_context *)*state, NNOP_F32, 2, 3, 2, x, w, b, y, 1);
    assert_memory_equal(y, want, sizeof want);
    run_linear((nnop_context *)*state, NNOP_F32, 2, 3, 2, x, w, b, y, 0);
    assert_memory_equal(y, want, sizeof want);
}

static void test_linear_without_bias_hand_computed(void **state)
{
    const float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, -1, 0.5f, 0.5f, 0.5f};
    const float want[4] = {-2, 3, -2, 7.5f};
    float y[4];
    run_linear((nnop_context *)*state, NNOP_F32, 2, 3, 2, x, w, NULL, y, 1);
    assert_memory_equal(y, want, sizeof want);
    run_linear((nnop_context *)*state, NNOP_F32, 2, 3, 2, x, w, NULL, y, 0);
    assert_memory_equal(y, want, sizeof want);
}

static void test_linear_identity_weight_copies_input(void **state)
{
    float x[12], w[16] = {0}, y[12];
    int i;
    for (i = 0; i < 4; i++)
        w[i * 4 + i] = 1.0f;
    nnop_test_fill_f32(x, 12, 901, -3.0f, 3.0f);
    run_linear((nnop_context *)*state, NNOP_F32, 3, 4, 4, x, w, NULL, y, 1);
    assert_memory_equal(y, x, sizeof x);
}

/* all-ones weight sums each row; a single output feature */
static void test_linear_all_ones_weight_sums_rows(void **state)
{
    const float x[6] = {1, 2, 3, -4, 0.5f, 10}, w[3] = {1, 1, 1}, b[1] = {0.25f};
    float y[2];
    run_linear((nnop_context *)*state, NNOP_F32, 2, 3, 1, x, w, b, y, 1);
    assert_true(y[0] == 6.25f);
    assert_true(y[1] == 6.75f);
}

static void test_linear_random_odd_sizes_match_naive(void **state)
{
    enum { R = 3, IN = 37, OUT = 5 };
    float x[R * IN], w[OUT * IN], b[OUT], y[R * OUT], want[R * OUT];
    nnop_test_fill_f32(x, R * IN, 911, -1.0f, 1.0f);
    nnop_test_fill_f32(w, OUT * IN, 912, -1.0f, 1.0f);
    nnop_test_fill_f32(b, OUT, 913, -1.0f, 1.0f);
    naive_linear(R, IN, OUT, x, w, b, want);
    run_linear((nnop_context *)*state, NNOP_F32, R, IN, OUT, x, w, b, y, 1);
    assert_true(nnop_test_compare(NNOP_F32, y, want, R * OUT, 1e-5, 1e-6, "linear", 911));
    naive_linear(R, IN, OUT, x, w, NULL, want);
    run_linear((nnop_context *)*state, NNOP_F32, R, IN, OUT, x, w, NULL, y, 0);
    assert_true(nnop_test_compare(NNOP_F32, y, want, R * OUT, 1e-5, 1e-6, "linear", 911));
}

static void test_linear_f16_and_bf16_match_naive(void **state)
{
    static const nnop_dtype types[2] = {NNOP_F16, NNOP_BF16};
    enum { R = 4, IN = 16, OUT = 6 };
    float x[R * IN], w[OUT * IN], b[OUT], y[R * OUT], want[R * OUT];
    uint16_t tmp[OUT * IN]; /* the largest of x, w, b */
    int t;
    for (t = 0; t < 2; t++) {
        nnop_test_fill(types[t], tmp, x, R * IN, 921 + t, -1.0f, 1.0f);
        nnop_test_fill(types[t], tmp, w, OUT * IN, 923 + t, -1.0f, 1.0f);
        nnop_test_fill(types[t], tmp, b, OUT, 925 + t, -1.0f, 1.0f);
        naive_linear(R, IN, OUT, x, w, b, want);
        run_linear((nnop_context *)*state, types[t], R, IN, OUT, x, w, b, y, t);
        assert_true(nnop_test_compare(NNOP_F32, y, want, R * OUT, nnop_test_rtol(types[t]),
                                      nnop_test_rtol(types[t]), "linear", 921 + t));
    }
}

/* ------------------------------------------------------------------ flatten */

/* Flatten a tensor of d holding logical values x; y gets the N x rest result (logical). */
static void run_flatten(nnop_context *ctx, const nnop_tensor_desc *d, const float *x, float *y,
                        int64_t want_cols)
{
    nnop_graph *g = NULL;
    nnop_value v;
    nnop_tensor_desc got, yd;
    void *xb = malloc(nnop_tensor_bytes(d)), *yb;
    const void *in[1];
    assert_non_null(xb);
    nnop_test_pack(d, x, xb);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_flatten(g, nnop_input(g, "x", d));
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_value_desc(g, v, &got), NNOP_OK);
    yd = nnop_tensor_2d(d->dtype, d->dims[0], want_cols);
    assert_int_equal(got.ndim, 2);
    assert_int_equal(got.dims[0], yd.dims[0]);
    assert_int_equal(got.dims[1], yd.dims[1]);
    assert_int_equal(got.strides[0], yd.strides[0]);
    assert_int_equal(got.strides[1], 1);
    assert_int_equal(got.dtype, d->dtype);
    yb = malloc(nnop_tensor_bytes(&yd));
    assert_non_null(yb);
    in[0] = xb;
    nnop_test_run_unpack(g, in, &yd, yb, y);
    nnop_graph_destroy(g);
    free(xb);
    free(yb);
}

/* x[n,c,h,w] = 1000n + 100c + 10h + w (logical order, 2x3x2x4): the flattened row n must
 * read 100c + 10h + w in c, h, w order (torch.flatten order), in either layout. */
static void order_pattern(float *x)
{
    int n, c, h, w;
    for (n = 0; n < 2; n++)
        for (c = 0; c < 3; c++)
            for (h = 0; h < 2; h++)
                for (w = 0; w < 4; w++)
                    x[((n * 3 + c) * 2 + h) * 4 + w] = (float)(1000 * n + 100 * c + 10 * h + w);
}

static void check_chw_order(const float *y)
{
    int n, c, h, w;
    for (n = 0; n < 2; n++)
        for (c = 0; c < 3; c++)
            for (h = 0; h < 2; h++)
                for (w = 0; w < 4; w++)
                    assert_true(y[n * 24 + c * 8 + h * 4 + w] ==
                                (float)(1000 * n + 100 * c + 10 * h + w));
}

static void test_flatten_nchw_keeps_logical_chw_order(void **state)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 3, 2, 4);
    float x[48], y[48];
    order_pattern(x);
    run_flatten((nnop_context *)*state, &d, x, y, 24);
    check_chw_order(y);
}

static void test_flatten_nhwc_gives_chw_order_not_memory_order(void **state)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 2, 3, 2, 4);
    float x[48], y[48];
    float mem[48];
    order_pattern(x);
    run_flatten((nnop_context *)*state, &d, x, y, 24);
    check_chw_order(y);
    /* and the NHWC memory order is different, so a plain copy would have failed */
    nnop_test_pack(&d, x, mem);
    assert_true(memcmp(mem, y, sizeof y) != 0);
}

static void test_flatten_of_2d_is_identity(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 3, 5);
    float x[15], y[15];
    nnop_test_fill_f32(x, 15, 931, -1.0f, 1.0f);
    run_flatten((nnop_context *)*state, &d, x, y, 5);
    assert_memory_equal(x, y, sizeof x);
}

static void test_flatten_of_3d_merges_trailing_dims(void **state)
{
    nnop_tensor_desc d;
    float x[24], y[24];
    memset(&d, 0, sizeof d);
    d.dtype = NNOP_F32;
    d.ndim = 3;
    d.dims[0] = 2;
    d.dims[1] = 3;
    d.dims[2] = 4;
    d.strides[0] = 12;
    d.strides[1] = 4;
    d.strides[2] = 1;
    nnop_test_fill_f32(x, 24, 932, -1.0f, 1.0f);
    run_flatten((nnop_context *)*state, &d, x, y, 12);
    assert_memory_equal(x, y, sizeof x);
}

static void test_flatten_f16_nhwc_keeps_logical_order(void **state)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 1, 4, 3, 2);
    float x[24], y[24];
    int i;
    for (i = 0; i < 24; i++)
        x[i] = (float)i * 0.5f; /* exact in f16 */
    run_flatten((nnop_context *)*state, &d, x, y, 24);
    assert_memory_equal(x, y, sizeof x);
}

/* flatten + linear on NHWC gives what it gives on NCHW: the classifier head of a network does
 * not depend on the layout the features were computed in. */
static void test_flatten_then_linear_same_in_nchw_and_nhwc(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    enum { N = 2, C = 3, H = 2, W = 3, F = C * H * W, OUT = 4 };
    float x[N * F], w[OUT * F], b[OUT], want[N * OUT], y[2][N * OUT];
    int l;
    nnop_test_fill_f32(x, N * F, 941, -1.0f, 1.0f);
    nnop_test_fill_f32(w, OUT * F, 942, -1.0f, 1.0f);
    nnop_test_fill_f32(b, OUT, 943, -1.0f, 1.0f);
    naive_linear(N, F, OUT, x, w, b, want); /* logical NCHW x is already torch.flatten order */
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, N, C, H, W);
        nnop_tensor_desc wd = nnop_tensor_2d(NNOP_F32, OUT, F), bd = nnop_tensor_1d(NNOP_F32, OUT);
        float xb[N * F];
        nnop_graph *g = NULL;
        nnop_value v;
        const void *in[1];
        void *out[1];
        nnop_test_pack(&xd, x, xb);
        assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
        v = nnop_flatten(g, nnop_input(g, "x", &xd));
        v = nnop_linear(g, v, nnop_constant(g, "w", &wd, w), nnop_constant(g, "b", &bd, b));
        assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
        nnop_test_poison(y[l], sizeof y[l]);
        in[0] = xb;
        out[0] = y[l];
        assert_int_equal(nnop_test_run_graph(g, NULL, in, out), NNOP_OK);
        nnop_graph_destroy(g);
        assert_true(nnop_test_compare(NNOP_F32, y[l], want, N * OUT, 1e-5, 1e-6, "head", 941));
    }
    assert_memory_equal(y[0], y[1], sizeof y[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_linear_hand_computed_with_bias),
            cmocka_unit_test(test_linear_without_bias_hand_computed),
            cmocka_unit_test(test_linear_identity_weight_copies_input),
            cmocka_unit_test(test_linear_all_ones_weight_sums_rows),
            cmocka_unit_test(test_linear_random_odd_sizes_match_naive),
            cmocka_unit_test(test_linear_f16_and_bf16_match_naive),
            cmocka_unit_test(test_flatten_nchw_keeps_logical_chw_order),
            cmocka_unit_test(test_flatten_nhwc_gives_chw_order_not_memory_order),
            cmocka_unit_test(test_flatten_of_2d_is_identity),
            cmocka_unit_test(test_flatten_of_3d_merges_trailing_dims),
            cmocka_unit_test(test_flatten_f16_nhwc_keeps_logical_order),
            cmocka_unit_test(test_flatten_then_linear_same_in_nchw_and_nhwc),
    };
    return cmocka_run_group_tests_name("ops_linear", tests, nnop_test_setup_cpu_context,
                                       nnop_test_teardown_context);
}
