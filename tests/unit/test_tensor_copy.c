/* test_tensor_copy.c: nnop_tensor_copy from the header alone: a conv weight from PyTorch's
 * K,C,R,S f32 into K,R,S,C f16 (odd dims), the way back, row-major ranks 1 to 8 against
 * nnop_convert, and the refusals (nothing written). */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

enum { K = 3, C = 5, R = 2, S = 7, NW = K * C * R * S };

static float f16_of(float x)
{
    uint16_t h;
    float y;
    assert_int_equal(nnop_convert(NNOP_F32, &x, NNOP_F16, &h, 1), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F16, &h, NNOP_F32, &y, 1), NNOP_OK);
    return y;
}

static void test_kcrs_f32_to_krsc_f16(void **state)
{
    nnop_tensor_desc sd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, K, C, R, S);
    nnop_tensor_desc dd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, K, C, R, S);
    float w[NW], back[NW];
    uint16_t h[NW];
    int k, c, r, s;
    (void)state;
    nnop_test_fill_f32(w, NW, 11, -3.f, 3.f);
    nnop_test_poison(h, sizeof h);
    assert_int_equal(nnop_tensor_copy(&sd, w, &dd, h), NNOP_OK);
    for (k = 0; k < K; k++)
        for (c = 0; c < C; c++)
            for (r = 0; r < R; r++)
                for (s = 0; s < S; s++) {
                    float got;
                    assert_int_equal(nnop_convert(NNOP_F16, &h[((k * R + r) * S + s) * C + c],
                                                  NNOP_F32, &got, 1),
                                     NNOP_OK);
                    assert_true(got == f16_of(w[((k * C + c) * R + r) * S + s]));
                }
    /* and back to K,C,R,S f32: every element is the f16 rounding of the original */
    sd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, K, C, R, S);
    nnop_test_poison(back, sizeof back);
    assert_int_equal(nnop_tensor_copy(&dd, h, &sd, back), NNOP_OK);
    for (k = 0; k < NW; k++)
        assert_true(back[k] == f16_of(w[k]));
}

/* Same layout, any rank: the same as nnop_convert over the whole buffer. */
static void test_row_major_ranks_match_convert(void **state)
{
    int64_t dims[NNOP_MAX_DIMS] = {2, 1, 3, 1, 2, 1, 3, 2};
    int nd;
    (void)state;
    for (nd = 1; nd <= NNOP_MAX_DIMS; nd++) {
        nnop_tensor_desc sd, dd;
        float x[144];
        uint16_t got[144], want[144];
        int64_t n = 1, st = 1;
        int i;
        memset(&sd, 0, sizeof sd);
        sd.dtype = NNOP_F32;
        sd.ndim = nd;
        for (i = nd - 1; i >= 0; i--) {
            sd.dims[i] = dims[i];
            sd.strides[i] = st;
            st *= dims[i];
        }
        n = st;
        dd = sd;
        dd.dtype = NNOP_BF16;
        nnop_test_fill_f32(x, n, 20 + (uint64_t)nd, -2.f, 2.f);
        assert_int_equal(nnop_convert(NNOP_F32, x, NNOP_BF16, want, n), NNOP_OK);
        assert_int_equal(nnop_tensor_copy(&sd, x, &dd, got), NNOP_OK);
        assert_memory_equal(got, want, (size_t)n * sizeof *got);
    }
}

/* A count whose byte size wraps 64 bits is refused, not taken for 0 bytes by the overlap test
 * (the outside tester's n = 2^62 of f32 in place read past its buffer). */
static void test_convert_refuses_counts_past_the_bound(void **state)
{
    float v[4] = {1.5f, -2.0f, 3.25f, 7.0f};
    uint16_t h[4] = {0x1111, 0x2222, 0x3333, 0x4444};
    (void)state;
    assert_int_equal(nnop_convert(NNOP_F32, v, NNOP_F16, v, (int64_t)1 << 62),
                     NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_convert(NNOP_F32, v, NNOP_F16, h, NNOP_MAX_TENSOR_ELEMENTS + 1),
                     NNOP_ERR_INVALID_ARGUMENT);
    assert_true(v[0] == 1.5f && v[3] == 7.0f && h[0] == 0x1111 && h[3] == 0x4444);
    assert_int_equal(nnop_convert(NNOP_F32, v, NNOP_F16, h, 4), NNOP_OK);
    assert_int_equal(h[0], 0x3e00); /* 1.5 in f16 */
}

static void test_refusals_write_nothing(void **state)
{
    nnop_tensor_desc sd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, K, C, R, S);
    nnop_tensor_desc dd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, K, C, R, S);
    nnop_tensor_desc other = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, K, C, S, R);
    nnop_tensor_desc bad = nnop_tensor_4d(NNOP_F32, (nnop_layout)99, K, C, R, S);
    float w[2 * NW], y[NW];
    (void)state;
    nnop_test_fill_f32(w, 2 * NW, 5, -1.f, 1.f);
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_tensor_copy(NULL, w, &dd, y), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_tensor_copy(&sd, NULL, &dd, y), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_tensor_copy(&sd, w, NULL, y), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_tensor_copy(&sd, w, &dd, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_tensor_copy(&sd, w, &other, y), NNOP_ERR_SHAPE);
    assert_int_equal(nnop_tensor_copy(&sd, w, &bad, y), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_tensor_copy(&bad, w, &dd, y), NNOP_ERR_INVALID_ARGUMENT);
    assert_true(nnop_test_is_poisoned(y, sizeof y));
    /* in place, or into a buffer that overlaps the source: a permutation would read what it
     * already wrote */
    assert_int_equal(nnop_tensor_copy(&sd, w, &dd, w), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_tensor_copy(&sd, w, &dd, w + NW - 1), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_tensor_copy(&sd, w, &dd, w + NW), NNOP_OK); /* just after: fine */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_kcrs_f32_to_krsc_f16),
            cmocka_unit_test(test_row_major_ranks_match_convert),
            cmocka_unit_test(test_refusals_write_nothing),
            cmocka_unit_test(test_convert_refuses_counts_past_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
