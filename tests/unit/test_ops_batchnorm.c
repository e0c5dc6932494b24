/* test_ops_batchnorm.c: known answers for inference batch-norm over dim 1,
 * y = (x - mean) / sqrt(var + eps) * gamma + beta, through the public graph API on a CPU
 * context: hand-computed values, eps, 2-D and 4-D in both layouts, f16 and bf16. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#define MAXC 8

/* v[0..3] = gamma, beta, mean, var. */
typedef struct bn_params {
    float v[4][MAXC];
} bn_params;

/* p[0..3] = gamma, beta, mean, var (C values each), given as constants or graph inputs. */
static void run_bn(nnop_context *ctx, const nnop_tensor_desc *d, const float *x, const bn_params *p,
                   float eps, float *y, int constants)
{
    static const char *const names[4] = {"gamma", "beta", "mean", "var"};
    int64_t c = d->dims[1];
    nnop_tensor_desc pd = nnop_tensor_1d(d->dtype, c);
    nnop_graph *g = NULL;
    nnop_value vx, vp[4], vy;
    size_t bytes = nnop_tensor_bytes(d);
    void *xb = malloc(bytes), *yb = malloc(bytes);
    uint32_t pb[4][MAXC];
    const void *in[5];
    int i, n_in = 0;
    assert_true(xb && yb);
    assert_true(c <= MAXC);
    nnop_test_pack(d, x, xb);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    vx = nnop_input(g, "x", d);
    in[n_in++] = xb;
    for (i = 0; i < 4; i++) {
        nnop_test_pack(&pd, p->v[i], pb[i]);
        if (constants) {
            vp[i] = nnop_constant(g, names[i], &pd, pb[i]);
        } else {
            vp[i] = nnop_input(g, names[i], &pd);
            in[n_in++] = pb[i];
        }
    }
    vy = nnop_batchnorm(g, vx, vp[0], vp[1], vp[2], vp[3], eps);
    assert_int_equal(nnop_output(g, vy, "y"), NNOP_OK);
    nnop_test_run_unpack(g, in, d, yb, y);
    nnop_graph_destroy(g);
    free(xb);
    free(yb);
}

/* Worked out by hand, C = 2, eps = 0:
 *   channel 0: gamma 2, beta 1, mean 3, var 4:       x = 5 -> (5-3)/2*2+1 = 3; x = 3 -> 1
 *   channel 1: gamma 0.5, beta -1, mean -2, var 0.25: x = -1 -> (1/0.5)*0.5-1 = 0;
 *                                                    x = -2.5 -> (-0.5/0.5)*0.5-1 = -1.5 */
static void test_batchnorm_hand_computed_2d(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 2);
    const bn_params p = {{{2, 0.5f}, {1, -1}, {3, -2}, {4, 0.25f}}};
    const float x[4] = {5, -1, 3, -2.5f}, want[4] = {3, 0, 1, -1.5f};
    float y[4];
    run_bn((nnop_context *)*state, &d, x, &p, 0.0f, y, 1);
    assert_memory_equal(y, want, sizeof want);
    run_bn((nnop_context *)*state, &d, x, &p, 0.0f, y, 0);
    assert_memory_equal(y, want, sizeof want);
}

/* var = 0 with eps = 1: the divisor is sqrt(0 + 1) = 1, so y = (x - mean) * gamma + beta;
 * eps is added under the square root, not outside it. */
static void test_batchnorm_eps_is_added_to_var_under_the_root(void **state)
{
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 1, 3);
    const bn_params p = {{{1, 2, -1}, {0, 0.5f, 0}, {1, 1, 1}, {0, 0, 0}}};
    const float x[3] = {4, 4, 4}, want[3] = {3, 6.5f, -3};
    float y[3];
    run_bn((nnop_context *)*state, &d, x, &p, 1.0f, y, 1);
    assert_memory_equal(y, want, sizeof want);
}

/* var = 3, eps = 1: divisor 2. */
static void test_batchnorm_var_3_eps_1_divides_by_2(void **state)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 1, 1, 2, 2);
    const bn_params p = {{{1}, {0}, {0}, {3}}};
    const float x[4] = {2, -4, 1, 0}, want[4] = {1, -2, 0.5f, 0};
    float y[4];
    run_bn((nnop_context *)*state, &d, x, &p, 1.0f, y, 0);
    assert_memory_equal(y, want, sizeof want);
}

/* gamma 1, beta 0, mean 0, var 1, eps 0 is the identity. */
static void test_batchnorm_unit_parameters_are_identity(void **state)
{
    enum { E = 2 * 3 * 4 * 5 };
    const bn_params p = {{{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}}};
    float x[E], y[E];
    int l;
    nnop_test_fill_f32(x, E, 701, -5.0f, 5.0f);
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, 2, 3, 4, 5);
        run_bn((nnop_context *)*state, &d, x, &p, 0.0f, y, l);
        assert_memory_equal(y, x, sizeof x);
    }
}

static void bn_formula(const float *x, const bn_params *bp, float eps, int64_t n, int64_t c,
                       int64_t hw, float *want)
{
    const float(*p)[MAXC] = bp->v;
    int64_t i, k, j;
    for (i = 0; i < n; i++)
        for (k = 0; k < c; k++)
            for (j = 0; j < hw; j++) {
                int64_t e = (i * c + k) * hw + j;
                want[e] = (float)(((double)x[e] - p[2][k]) * p[0][k] /
                                          sqrt((double)p[3][k] + (double)eps) +
                                  p[1][k]);
            }
}

static void random_params(bn_params *bp, int c, uint64_t seed)
{
    float(*p)[MAXC] = bp->v;
    nnop_test_fill_f32(p[0], c, seed, -2.0f, 2.0f);
    nnop_test_fill_f32(p[1], c, seed + 1, -1.0f, 1.0f);
    nnop_test_fill_f32(p[2], c, seed + 2, -1.0f, 1.0f);
    nnop_test_fill_f32(p[3], c, seed + 3, 0.1f, 3.0f);
}

static void test_batchnorm_random_4d_nchw_and_nhwc_match_formula(void **state)
{
    enum { N = 2, C = 5, H = 3, W = 7, E = N * C * H * W };
    bn_params p;
    float x[E], y[E], want[E];
    int l;
    random_params(&p, C, 710);
    nnop_test_fill_f32(x, E, 715, -3.0f, 3.0f);
    bn_formula(x, &p, 1e-5f, N, C, H * W, want);
    for (l = 0; l < 2; l++) {
        nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, N, C, H, W);
        run_bn((nnop_context *)*state, &d, x, &p, 1e-5f, y, l);
        assert_true(nnop_test_compare(NNOP_F32, y, want, E, 1e-5, 1e-6, "batchnorm", 710));
    }
}

static void test_batchnorm_random_2d_matches_formula(void **state)
{
    enum { N = 3, C = 7 };
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, N, C);
    bn_params p;
    float x[N * C], y[N * C], want[N * C];
    random_params(&p, C, 720);
    nnop_test_fill_f32(x, N * C, 725, -3.0f, 3.0f);
    bn_formula(x, &p, 0.001f, N, C, 1, want);
    run_bn((nnop_context *)*state, &d, x, &p, 0.001f, y, 1);
    assert_true(nnop_test_compare(NNOP_F32, y, want, N * C, 1e-5, 1e-6, "batchnorm 2d", 720));
}

static void test_batchnorm_f16_and_bf16_match_formula(void **state)
{
    static const nnop_dtype types[2] = {NNOP_F16, NNOP_BF16};
    enum { N = 2, C = 4, H = 3, W = 3, E = N * C * H * W };
    bn_params p;
    float x[E], y[E], want[E];
    uint16_t tmp[E];
    int t, i;
    for (t = 0; t < 2; t++) {
        nnop_tensor_desc d = nnop_tensor_4d(types[t], t ? NNOP_NHWC : NNOP_NCHW, N, C, H, W);
        random_params(&p, C, 730 + 10 * t);
        for (i = 0; i < 4; i++) /* make the parameters representable in the dtype */
            nnop_test_fill(types[t], tmp, p.v[i], C, 730 + 10 * t + i, i == 3 ? 0.1f : -2.0f,
                           i == 3 ? 3.0f : 2.0f);
        nnop_test_fill(types[t], tmp, x, E, 735 + t, -3.0f, 3.0f);
        bn_formula(x, &p, 1e-3f, N, C, H * W, want);
        run_bn((nnop_context *)*state, &d, x, &p, 1e-3f, y, t);
        assert_true(nnop_test_compare(NNOP_F32, y, want, E, nnop_test_rtol(types[t]),
                                      nnop_test_rtol(types[t]), "batchnorm", 730 + t));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_batchnorm_hand_computed_2d),
            cmocka_unit_test(test_batchnorm_eps_is_added_to_var_under_the_root),
            cmocka_unit_test(test_batchnorm_var_3_eps_1_divides_by_2),
            cmocka_unit_test(test_batchnorm_unit_parameters_are_identity),
            cmocka_unit_test(test_batchnorm_random_4d_nchw_and_nhwc_match_formula),
            cmocka_unit_test(test_batchnorm_random_2d_matches_formula),
            cmocka_unit_test(test_batchnorm_f16_and_bf16_match_formula),
    };
    return cmocka_run_group_tests_name("ops_batchnorm", tests, nnop_test_setup_cpu_context,
                                       nnop_test_teardown_context);
}
