/* test_gpu_stream.c: what a cuDNN user expects of streams. With no stream given, nnop's work
 * orders with the legacy default stream, so a plain cudaMemcpy right after a call sees its
 * result (the context's own stream was once non-blocking and the copy read stale memory). */
#include "nnop_test.h"

#include <stdlib.h>
#include <string.h>

#ifdef NNOP_HAVE_CUDA
#include <cuda_runtime.h>

/* Long enough convs (7x7 over 64 channels) that a copy not ordered after them would race. */
typedef struct race_case {
    int64_t n, c, h, w, k, r;
    nnop_dtype dt;
} race_case;

static const race_case race_cases[] = {
        {8, 64, 56, 56, 64, 7, NNOP_F16},  {16, 64, 56, 56, 64, 5, NNOP_F16},
        {4, 64, 56, 56, 128, 7, NNOP_F32}, {8, 32, 57, 55, 48, 7, NNOP_BF16},
        {16, 64, 28, 28, 64, 7, NNOP_F16},
};

static void *dev_filled(size_t bytes, nnop_dtype t, int64_t n, uint64_t seed, void **host)
{
    void *d = NULL;
    *host = malloc(bytes);
    assert_non_null(*host);
    nnop_test_fill(t, *host, NULL, n, seed, -1.0f, 1.0f);
    assert_int_equal(cudaMalloc(&d, bytes), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, *host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    return d;
}

/* Run the one-call op twice: once synchronized (the reference bytes), then on poisoned y
 * followed at once by a plain cudaMemcpy, which must read the same bytes. */
static void check_race_case(const race_case *rc)
{
    nnop_tensor_desc xd = nnop_tensor_4d(rc->dt, NNOP_NHWC, rc->n, rc->c, rc->h, rc->w);
    nnop_tensor_desc wd = nnop_tensor_4d(rc->dt, NNOP_NHWC, rc->k, rc->c, rc->r, rc->r);
    nnop_tensor_desc yd = nnop_tensor_4d(rc->dt, NNOP_NHWC, rc->n, rc->k, rc->h, rc->w);
    nnop_tensor_desc bd = nnop_tensor_1d(rc->dt, rc->k);
    nnop_conv_params p = {{rc->r / 2, rc->r / 2}, {1, 1}, {1, 1}, 1};
    size_t ybytes = nnop_tensor_bytes(&yd);
    void *hx, *hw, *hb, *x, *w, *b, *y = NULL;
    unsigned char *want = (unsigned char *)malloc(ybytes), *got = (unsigned char *)malloc(ybytes);
    nnop_context *ctx = NULL;
    assert_non_null(want);
    assert_non_null(got);
    assert_int_equal(nnop_context_create(NULL, &ctx), NNOP_OK);
    x = dev_filled(nnop_tensor_bytes(&xd), rc->dt, nnop_tensor_elements(&xd), 1, &hx);
    w = dev_filled(nnop_tensor_bytes(&wd), rc->dt, nnop_tensor_elements(&wd), 2, &hw);
    b = dev_filled(nnop_tensor_bytes(&bd), rc->dt, rc->k, 3, &hb);
    assert_int_equal(cudaMalloc(&y, ybytes), cudaSuccess);
    assert_int_equal(nnop_conv_bias_relu(ctx, &xd, x, &wd, w, b, &p, &yd, y), NNOP_OK);
    assert_int_equal(nnop_context_synchronize(ctx), NNOP_OK);
    assert_int_equal(cudaMemcpy(want, y, ybytes, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_false(nnop_test_is_poisoned(want, 64));

    assert_int_equal(cudaMemset(y, 0xFF, ybytes), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(nnop_conv_bias_relu(ctx, &xd, x, &wd, w, b, &p, &yd, y), NNOP_OK);
    assert_int_equal(cudaMemcpy(got, y, ybytes, cudaMemcpyDeviceToHost), cudaSuccess);
    if (memcmp(want, got, ybytes) != 0)
        fail_msg("a plain cudaMemcpy after nnop_conv_bias_relu read other bytes than after a "
                 "synchronize (%lld x %lld x %lldx%lld, K %lld, %lldx%lld)",
                 (long long)rc->n, (long long)rc->c, (long long)rc->h, (long long)rc->w,
                 (long long)rc->k, (long long)rc->r, (long long)rc->r);
    cudaFree(x), cudaFree(w), cudaFree(b), cudaFree(y);
    free(hx), free(hw), free(hb), free(want), free(got);
    nnop_context_destroy(ctx);
}

static void test_plain_memcpy_after_one_call_sees_result(void **state)
{
    size_t i;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    for (i = 0; i < sizeof race_cases / sizeof race_cases[0]; i++)
        check_race_case(&race_cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_plain_memcpy_after_one_call_sees_result),
    };
    return nnop_test_exit_code(cmocka_run_group_tests(tests, NULL, NULL),
                               sizeof tests / sizeof tests[0]);
}
#else
int main(void)
{
    return nnop_test_gpu_required() ? 1 : NNOP_TEST_SKIPPED; /* CPU-only: no GPU path */
}
#endif
