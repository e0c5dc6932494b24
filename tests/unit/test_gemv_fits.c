/* test_gemv_fits.c: which linear partitions the CUDA backend's own matrix-vector entry takes
 * (impl/own_kernels.c, ahead of cuBLASLt), without a GPU: batch 1 to 8 with up to 12288 inputs
 * and its whole epilogue chain; not batch 9, nor 12289 inputs. */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"

/* x n x in -> linear to 19 outputs + bias -> sigmoid; 1: the own matrix-vector entry fits
 * the linear's partition. */
static int gemv_takes(nnop_dtype dt, int64_t n, int64_t in)
{
    nnop_tensor_desc xd = nnop_tensor_2d(dt, n, in), wd = nnop_tensor_2d(dt, 19, in);
    nnop_tensor_desc bd = nnop_tensor_1d(dt, 19);
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop__impl_try t;
    const char *why_not = "";
    void *w = calloc((size_t)(19 * in), 4), *b = calloc(19, 4);
    nnop_value y;
    int fits;
    assert_non_null(w);
    assert_non_null(b);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    y = nnop_linear(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w),
                    nnop_constant(g, "b", &bd, b));
    assert_int_equal(nnop_output(g, nnop_act(g, y, NNOP_ACT_SIGMOID, 0), "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    assert_int_equal(p->n_parts, 1);
    memset(&t, 0, sizeof t);
    t.first = p->parts[0].first;
    t.count = p->parts[0].count;
    fits = nnop__impl_own_gemv.fits(p, &t, &why_not);
    if (!fits)
        assert_true(strlen(why_not) > 0);
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
    free(w);
    free(b);
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
