/* test_tap_major.c: the depthwise entry's channels-last weight layout without a GPU:
 * nnop__dw_tap_major puts element (c, r, s) of C,1,R,S weights, in either layout and dtype, at
 * (r S + s) C + c, which the kernel reads through the view the entry sets (depthwise.c). */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"

static void check(nnop_dtype t, nnop_layout lay, int64_t C, int64_t R, int64_t S)
{
    nnop_tensor_desc d = nnop_tensor_4d(t, lay, C, 1, R, S);
    int64_t n = C * R * S, c, r, s;
    size_t es = nnop_dtype_size(t);
    float *logical = (float *)malloc((size_t)n * sizeof(float));
    float *back = (float *)malloc((size_t)n * sizeof(float));
    void *packed = malloc((size_t)n * es), *out = malloc((size_t)n * es);
    assert_non_null(logical);
    assert_non_null(back);
    assert_non_null(packed);
    assert_non_null(out);
    for (c = 0; c < n; c++)
        logical[c] = (float)(c % 1000); /* exact in f16 and bf16 up to 256; distinct mod 1000 */
    if (t == NNOP_BF16)
        for (c = 0; c < n; c++)
            logical[c] = (float)(c % 250);
    nnop_test_pack(&d, logical, packed);
    nnop__dw_tap_major(packed, &d, out);
    assert_int_equal(nnop_convert(t, out, NNOP_F32, back, n), NNOP_OK);
    for (c = 0; c < C; c++)
        for (r = 0; r < R; r++)
            for (s = 0; s < S; s++)
                if (back[(r * S + s) * C + c] != logical[(c * R + r) * S + s])
                    fail_msg("C %lld R %lld S %lld: (%lld, %lld, %lld) is %g, not %g", (long long)C,
                             (long long)R, (long long)S, (long long)c, (long long)r, (long long)s,
                             (double)back[(r * S + s) * C + c],
                             (double)logical[(c * R + r) * S + s]);
    free(logical);
    free(back);
    free(packed);
    free(out);
}

static void test_tap_major_puts_each_tap_contiguous_over_channels(void **state)
{
    (void)state;
    check(NNOP_F16, NNOP_NHWC, 96, 7, 7);
    check(NNOP_F32, NNOP_NHWC, 13, 3, 5);
    check(NNOP_BF16, NNOP_NHWC, 24, 5, 5);
    check(NNOP_F16, NNOP_NCHW, 8, 3, 3);
    check(NNOP_F32, NNOP_NHWC, 1, 1, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_tap_major_puts_each_tap_contiguous_over_channels),
    };
    return cmocka_run_group_tests_name("tap_major", tests, NULL, NULL);
}

#else /* a build without CUDA has no depthwise entry */
static void test_tap_major_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tap_major_needs_cuda_build)};
    return cmocka_run_group_tests_name("tap_major", tests, NULL, NULL);
}
#endif
