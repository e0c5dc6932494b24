/* test_gap_scratch.c: the scratch a channels-last global average pooling step owns, without a
 * GPU: none where one block a sample already fills the GPU (a ResNet head at batch 256) or the
 * tensor is not packed channels-last; for few samples of many positions room for every
 * sample's chunk sums (at most 32 chunks), whichever vector width the launch takes. */
#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"

static size_t scratch(nnop_dtype t, nnop_layout lay, int64_t n, int64_t c, int64_t h, int64_t w)
{
    nnop_tensor_desc d = nnop_tensor_4d(t, lay, n, c, h, w);
    nnop__kview v = nnop__kview_of(&d);
    return nnop__gap_scratch_bytes(&v, (int)t);
}

static void test_no_scratch_where_one_pass_fills_the_gpu(void **state)
{
    (void)state;
    assert_int_equal(scratch(NNOP_F16, NNOP_NHWC, 256, 2048, 7, 7), 0);
    assert_int_equal(scratch(NNOP_F32, NNOP_NHWC, 32, 1152, 7, 7), 0);
    assert_int_equal(scratch(NNOP_F16, NNOP_NHWC, 2, 24, 1, 1), 0);
    /* channels first, or one channel: the other kernels, no chunks */
    assert_int_equal(scratch(NNOP_F16, NNOP_NCHW, 2, 32, 112, 112), 0);
    assert_int_equal(scratch(NNOP_F16, NNOP_NHWC, 2, 1, 112, 112), 0);
}

static void test_scratch_for_few_samples_of_many_positions(void **state)
{
    const int64_t cases[][4] = {{2, 32, 112, 112},
                                {32, 32, 112, 112},
                                {1, 36, 33, 35},
                                {2, 5, 64, 64},
                                {3, 96, 56, 57}};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t *k = cases[i];
        size_t b = scratch(NNOP_F16, NNOP_NHWC, k[0], k[1], k[2], k[3]);
        size_t per_chunk = (size_t)(k[0] * k[1]) * sizeof(float);
        assert_true(b >= 2 * per_chunk); /* two chunks at least, or none */
        assert_true(b <= 32 * per_chunk);
        assert_int_equal(b % per_chunk, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_no_scratch_where_one_pass_fills_the_gpu),
            cmocka_unit_test(test_scratch_for_few_samples_of_many_positions),
    };
    return cmocka_run_group_tests_name("gap_scratch", tests, NULL, NULL);
}

#else /* a build without CUDA has no GPU steps */
static void test_gap_scratch_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gap_scratch_needs_cuda_build)};
    return cmocka_run_group_tests_name("gap_scratch", tests, NULL, NULL);
}
#endif
