/* test_gpu_devices.c: a context of any device works from a thread whose current device is
 * another, and no call changes the caller's current device (nnop.h, "Devices"): each device
 * against the CPU reference while another is current, eager and as a CUDA graph, with the
 * memory nnop_malloc returns on the context's device. With one GPU the "other" device is the
 * same one, and the test still checks results and the current device. */
#include "gpu_harness.h"

#ifdef NNOP_HAVE_CUDA
#include <cuda_runtime.h>

static int device_count(void)
{
    int n = 0;
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    return n;
}

static int current_device(void)
{
    int d = -1;
    assert_int_equal(cudaGetDevice(&d), cudaSuccess);
    return d;
}

static void build_net(nnop_graph *g, const void *arg)
{
    nnop_dtype dt = *(const nnop_dtype *)arg;
    nnop_tensor_desc xd = nnop_tensor_4d(dt, NNOP_NHWC, 2, 16, 11, 9);
    nnop_tensor_desc wd = nnop_tensor_4d(dt, NNOP_NHWC, 32, 16, 3, 3);
    nnop_tensor_desc pd = nnop_tensor_4d(dt, NNOP_NHWC, 32, 16, 1, 1);
    nnop_tensor_desc kd = nnop_tensor_1d(dt, 32);
    nnop_conv_params p3 = {{1, 1}, {1, 1}, {1, 1}, 1}, p1 = {{0, 0}, {1, 1}, {1, 1}, 1};
    float s = 1.0f / sqrtf(16.0f * 9.0f);
    nnop_value x = nnop_input(g, "x", &xd), side, y;
    side = nnop_conv(g, x, h_const(g, "wp", &pd, 41, -0.25f, 0.25f), &p1);
    y = nnop_conv(g, x, h_const(g, "w", &wd, 42, -s, s), &p3);
    y = nnop_act(g, nnop_bias(g, y, h_const(g, "b", &kd, 43, -0.5f, 0.5f)), NNOP_ACT_RELU, 0.0f);
    y = nnop_act(g, y, NNOP_ACT_SIGMOID, 0.0f);
    y = nnop_add(g, y, side);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

/* The context's device d, with device `other` current on this thread throughout. */
static void check_device(int d, int other, int cuda_graph)
{
    nnop_dtype dt = NNOP_F16;
    h_run r;
    h_run_init(&r, dt, 16.0 * 9.0);
    r.gpu_opts.device = d;
    r.copts.cuda_graph = cuda_graph;
    assert_int_equal(cudaSetDevice(other), cudaSuccess);
    if (!h_run_compare(&r, build_net, &dt))
        fail_msg("device %d (device %d current), cuda_graph %d: %s", d, other, cuda_graph,
                 r.gpu_compile_status != NNOP_OK ? r.gpu_error : "result differs from the CPU");
    if (current_device() != other)
        fail_msg("device %d's calls left device %d current; the caller had %d", d, current_device(),
                 other);
}

static void test_each_device_while_another_is_current(void **state)
{
    int n, d;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    n = device_count();
    print_message("%d CUDA device%s\n", n, n == 1 ? "" : "s");
    for (d = 0; d < n; d++) {
        check_device(d, (d + 1) % n, 0);
        check_device(d, (d + 1) % n, 1);
    }
}

/* nnop_malloc's memory is on the context's device, not on the current one. */
static void test_malloc_lands_on_the_contexts_device(void **state)
{
    int n, d;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    n = device_count();
    for (d = 0; d < n; d++) {
        nnop_context_options o;
        nnop_context *ctx;
        struct cudaPointerAttributes at;
        void *p = NULL;
        int other = (d + 1) % n;
        nnop_context_options_init(&o);
        o.backend = NNOP_BACKEND_CUDA;
        o.device = d;
        assert_int_equal(cudaSetDevice(other), cudaSuccess);
        ctx = h_gpu_context(&o);
        assert_int_equal(current_device(), other);
        assert_int_equal(nnop_malloc(ctx, 4096, &p), NNOP_OK);
        assert_int_equal(cudaPointerGetAttributes(&at, p), cudaSuccess);
        assert_int_equal(at.device, d);
        assert_int_equal(current_device(), other);
        nnop_free(ctx, p);
        nnop_context_destroy(ctx);
        assert_int_equal(current_device(), other);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_each_device_while_another_is_current),
            cmocka_unit_test(test_malloc_lands_on_the_contexts_device),
    };
    return nnop_test_exit_code(cmocka_run_group_tests_name("gpu_devices", tests, NULL, NULL),
                               sizeof tests / sizeof tests[0]);
}
#else
int main(void)
{
    return nnop_test_gpu_required() ? 1 : NNOP_TEST_SKIPPED; /* CPU-only: no GPU path */
}
#endif
