/* test_norm_path.c: which kernel a per-position norm step takes for its shape, without a GPU
 * (nnop__k_norm_vec_lanes, which both the launch and nnop_plan_describe use): 16-byte vectors
 * over packed channels-last C that is a multiple of the vector, in the smallest group of lanes
 * that holds C in at most 4 vectors a lane (up to 32 lanes), widened while every lane keeps
 * a vector and the positions leave the GPU's threads idle (132 SMs x 512); no vectors for
 * NCHW, for C that is not a multiple of the vector or too wide, for per-element affine
 * parameters, for group norm. */
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"

static int lanes_at(nnop_dtype t, nnop_layout lay, int64_t n, int64_t c, int64_t hw,
                    int per_position, int per_element)
{
    nnop_tensor_desc d = nnop_tensor_4d(t, lay, n, c, hw, hw);
    nnop__norm_kparams k;
    memset(&k, 0, sizeof k);
    k.dtype = (int)t;
    k.xv = nnop__kview_of(&d);
    k.per_position = per_position;
    k.groups = per_position ? 0 : 1;
    k.g_per_element = per_element;
    return nnop__k_norm_vec_lanes(&k);
}

/* At 32 x 56 x 56 positions: enough to fill the GPU, no widening. */
static int lanes(nnop_dtype t, nnop_layout lay, int64_t c, int per_position, int per_element)
{
    return lanes_at(t, lay, 32, c, 56, per_position, per_element);
}

static void test_vector_lanes_for_packed_channels_last(void **state)
{
    (void)state;
    assert_int_equal(lanes(NNOP_F16, NNOP_NHWC, 96, 1, 0), 4);   /* 12 vectors */
    assert_int_equal(lanes(NNOP_BF16, NNOP_NHWC, 32, 1, 0), 1);  /* 4 vectors */
    assert_int_equal(lanes(NNOP_F16, NNOP_NHWC, 768, 1, 0), 32); /* 96 vectors */
    assert_int_equal(lanes(NNOP_F16, NNOP_NHWC, 1024, 1, 0), 32);
    assert_int_equal(lanes(NNOP_F32, NNOP_NHWC, 96, 1, 0), 8); /* 24 vectors of 4 */
    assert_int_equal(lanes(NNOP_F32, NNOP_NHWC, 4, 1, 0), 1);
}

/* ConvNeXt-T at batch 1: few positions take more lanes, each keeping at least one vector. */
static void test_few_positions_widen_the_group(void **state)
{
    (void)state;
    assert_int_equal(lanes_at(NNOP_F16, NNOP_NHWC, 1, 96, 56, 1, 0), 8);   /* 12 vectors */
    assert_int_equal(lanes_at(NNOP_F16, NNOP_NHWC, 1, 192, 28, 1, 0), 16); /* 24 vectors */
    assert_int_equal(lanes_at(NNOP_F16, NNOP_NHWC, 1, 384, 14, 1, 0), 32); /* 48 vectors */
    assert_int_equal(lanes_at(NNOP_F16, NNOP_NHWC, 1, 768, 7, 1, 0), 32);
    assert_int_equal(lanes_at(NNOP_BF16, NNOP_NHWC, 1, 32, 3, 1, 0), 4); /* 4 vectors */
    assert_int_equal(lanes_at(NNOP_F16, NNOP_NHWC, 1, 8, 3, 1, 0), 1);   /* 1 vector */
}

static void test_no_vectors_where_the_shape_rules_them_out(void **state)
{
    (void)state;
    assert_int_equal(lanes(NNOP_F16, NNOP_NCHW, 96, 1, 0), 0);
    assert_int_equal(lanes(NNOP_F16, NNOP_NHWC, 12, 1, 0), 0);
    assert_int_equal(lanes(NNOP_F32, NNOP_NHWC, 6, 1, 0), 0);
    assert_int_equal(lanes(NNOP_F16, NNOP_NHWC, 1032, 1, 0), 0);
    assert_int_equal(lanes(NNOP_F16, NNOP_NHWC, 96, 1, 1), 0);
    assert_int_equal(lanes(NNOP_F16, NNOP_NHWC, 96, 0, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_vector_lanes_for_packed_channels_last),
            cmocka_unit_test(test_few_positions_widen_the_group),
            cmocka_unit_test(test_no_vectors_where_the_shape_rules_them_out),
    };
    return cmocka_run_group_tests_name("norm_path", tests, NULL, NULL);
}

#else /* a build without CUDA has no GPU steps */
static void test_norm_path_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_norm_path_needs_cuda_build)};
    return cmocka_run_group_tests_name("norm_path", tests, NULL, NULL);
}
#endif
