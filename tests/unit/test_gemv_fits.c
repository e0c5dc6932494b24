/* test_gemv_fits.c: which linear partitions the CUDA backend's own matrix-vector entry takes
 * (impl/own_kernels.c, ahead of cuBLASLt), without a GPU: batch 1 to 8 with up to 12288 inputs
 * and its whole epilogue chain; not batch 9, nor 12289 inputs. */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"
#include "plan_fixture.h"

/* x n x in -> linear to 19 outputs + bias -> sigmoid; 1: the own matrix-vector entry fits
 * the linear's partition. */
static int gemv_takes(nnop_dtype dt, int64_t n, int64_t in)
{
    nnop_tensor_desc xd = nnop_tensor_2d(dt, n, in), wd = nnop_tensor_2d(dt, 19, in);
    nnop_tensor_desc bd = nnop_tensor_1d(dt, 19);
    plan_fixture f;
    nnop__impl_try t;
    const char *why_not = "";
    nnop_value y;
    int fits;
    fixture_begin(&f);
    y = nnop_linear(f.g, nnop_input(f.g, "x", &xd), fixture_zeros(&f, "w", &wd),
                    fixture_zeros(&f, "b", &bd));
    assert_int_equal(nnop_output(f.g, nnop_act(f.g, y, NNOP_ACT_SIGMOID, 0), "y"), NNOP_OK);
    fixture_compile(&f);
    assert_int_equal(f.p->n_parts, 1);
    t = fixture_try(&f, 0);
    fits = nnop__impl_own_gemv.fits(f.p, &t, &why_not);
    if (!fits)
        assert_true(strlen(why_not) > 0);
    fixture_end(&f);
    return fits;
}

static void test_small_batches_take_the_gemv(void **state)
{
    (void)state;
    assert_true(gemv_takes(NNOP_F16, 1, 2048)); /* ResNet-50's classifier at batch 1 */
    assert_true(gemv_takes(NNOP_BF16, 8, 37));
    assert_true(gemv_takes(NNOP_F32, 3, 12288));
}

static void test_larger_ones_go_to_cublaslt(void **state)
{
    (void)state;
    assert_false(gemv_takes(NNOP_F16, 9, 2048));
    assert_false(gemv_takes(NNOP_F32, 1, 12289)); /* x staged as floats: 48 KiB at most */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_small_batches_take_the_gemv),
            cmocka_unit_test(test_larger_ones_go_to_cublaslt),
    };
    return cmocka_run_group_tests_name("gemv_fits", tests, NULL, NULL);
}

#else /* a build without CUDA has no GPU steps */
static void test_gemv_fits_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gemv_fits_needs_cuda_build)};
    return cmocka_run_group_tests_name("gemv_fits", tests, NULL, NULL);
}
#endif
