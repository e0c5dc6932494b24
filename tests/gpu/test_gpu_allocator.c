/* test_gpu_allocator.c: issue 50 on the CUDA backend: the engine's device allocator serves
 * every block a plan holds (nnop_plan_memory.device_total equals what the allocator has out
 * once compile is done; engine warm-up scratch comes and goes through it too), all of it goes
 * back at destroy; a refusing allocator fails the compile with NNOP_ERR_OUT_OF_MEMORY naming
 * the bytes; nnop_plan_partition names the implementation and the engine of cuDNN steps. The
 * result is checked against the CPU reference on random inputs, the output poisoned first. */
#include "nnop_test.h"

#include <stdlib.h>
#include <string.h>

#ifdef NNOP_HAVE_CUDA
#include <cuda_runtime.h>

typedef struct dev_budget {
    size_t in_use, limit; /* limit 0: none */
    int live, calls;
    void *blocks[256];
    size_t sizes[256];
} dev_budget;

static void *dev_alloc(void *user, size_t bytes)
{
    dev_budget *b = (dev_budget *)user;
    void *p = NULL;
    b->calls++;
    if ((b->limit && b->in_use + bytes > b->limit) || b->live == 256 ||
        cudaMalloc(&p, bytes) != cudaSuccess)
        return NULL;
    b->blocks[b->live] = p;
    b->sizes[b->live++] = bytes;
    b->in_use += bytes;
    return p;
}

static void dev_free(void *user, void *p)
{
    dev_budget *b = (dev_budget *)user;
    int i;
    for (i = 0; i < b->live; i++)
        if (b->blocks[i] == p) {
            b->in_use -= b->sizes[i];
            b->blocks[i] = b->blocks[b->live - 1];
            b->sizes[i] = b->sizes[--b->live];
            (void)cudaFree(p);
            return;
        }
    fail_msg("device_free of a block device_alloc never gave");
}

enum { N = 2, C = 16, H = 12, W = 12, K = 32 };

/* conv 3x3 'c1' + bias + relu, f16 NHWC */
static nnop_status compile_conv(nnop_context *ctx, const void *w, const void *b, nnop_plan **p)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, N, C, H, W);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, K, C, 3, 3);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F16, K);
    nnop_conv_params cp;
    nnop_graph *g = NULL;
    nnop_value v;
    nnop_status st;
    nnop_conv_params_init(&cp);
    cp.pad[0] = cp.pad[1] = 1;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &xd);
    assert_int_equal(nnop_graph_name_next(g, "c1"), NNOP_OK);
    v = nnop_conv(g, v, nnop_constant(g, "w", &wd, w), &cp);
    v = nnop_act(g, nnop_bias(g, v, nnop_constant(g, "b", &bd, b)), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    st = nnop_graph_compile(g, NULL, p);
    nnop_graph_destroy(g);
    return st;
}

static nnop_context *context_with(dev_budget *b)
{
    nnop_allocator a;
    nnop_context_options o;
    nnop_context *ctx = NULL;
    memset(&a, 0, sizeof a);
    a.device_alloc = dev_alloc;
    a.device_free = dev_free;
    a.user = b;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.allocator = &a;
    o.prefetch = -1; /* no background threads: the counts belong to this test alone */
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    return ctx;
}

static void test_device_memory_through_the_allocator(void **state)
{
    enum { XN = N * C * H * W, WN = K * C * 9, YN = N * K * H * W };
    static uint16_t x[XN], w[WN], bias[K], y[YN], want[YN];
    static float xf[XN], wf[WN], bf[K], yf[YN];
    (void)xf, (void)wf, (void)bf;
    dev_budget b;
    nnop_context *ctx, *cpu;
    nnop_plan *p = NULL, *ref = NULL;
    nnop_plan_memory_info m;
    nnop_partition_info info;
    void *dx = NULL, *dy = NULL;
    const void *in[1];
    void *out[1];
    (void)state;
    NNOP_TEST_REQUIRE_GPU(); /* before anything is made: a skip leaves nothing behind */
    cpu = nnop_test_cpu_context();
    memset(&b, 0, sizeof b);
    ctx = context_with(&b);
    nnop_test_fill(NNOP_F16, x, xf, XN, 31, -1.0f, 1.0f);
    nnop_test_fill(NNOP_F16, w, wf, WN, 32, -0.5f, 0.5f);
    nnop_test_fill(NNOP_F16, bias, bf, K, 33, -0.5f, 0.5f);
    assert_int_equal(compile_conv(ctx, w, bias, &p), NNOP_OK);
    assert_int_equal(nnop_plan_memory(p, &m), NNOP_OK);
    assert_true(m.device_total > 0 && m.weights > 0);
    assert_int_equal(b.in_use, m.device_total); /* warm-up scratch given back, blocks counted */
    assert_int_equal(nnop_plan_partition(p, 0, &info), NNOP_OK);
    assert_int_equal(info.first_node, 0);
    assert_true(strcmp(info.impl, "reference") != 0);
    assert_int_equal(nnop_malloc(ctx, sizeof x, &dx), NNOP_OK);
    assert_int_equal(nnop_malloc(ctx, sizeof y, &dy), NNOP_OK);
    assert_int_equal(b.in_use, m.device_total + sizeof x + sizeof y); /* nnop_malloc too */
    assert_int_equal(nnop_copy_in(ctx, dx, x, sizeof x), NNOP_OK);
    assert_int_equal(cudaMemset(dy, 0xFF, sizeof y), cudaSuccess);
    in[0] = dx, out[0] = dy;
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    assert_int_equal(nnop_copy_out(ctx, y, dy, sizeof y), NNOP_OK);
    /* the same graph on the CPU reference */
    assert_int_equal(compile_conv(cpu, w, bias, &ref), NNOP_OK);
    in[0] = x, out[0] = want;
    assert_int_equal(nnop_plan_execute(ref, in, out), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F16, want, NNOP_F32, yf, YN), NNOP_OK);
    assert_true(nnop_test_compare(NNOP_F16, y, yf, YN, nnop_test_rtol(NNOP_F16),
                                  nnop_test_rtol(NNOP_F16), "conv+bias+relu via allocator", 31));
    nnop_free(ctx, dx);
    nnop_free(ctx, dy);
    nnop_plan_destroy(p);
    assert_int_equal(b.live, 0);
    nnop_plan_destroy(ref);
    nnop_context_destroy(ctx);
    nnop_context_destroy(cpu);
}

static void test_refusing_allocator(void **state)
{
    static uint16_t w[K * C * 9], bias[K];
    dev_budget b;
    nnop_context *ctx;
    nnop_plan *p = NULL;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    memset(&b, 0, sizeof b);
    b.limit = 1024; /* less than the weights' block */
    ctx = context_with(&b);
    assert_int_equal(compile_conv(ctx, w, bias, &p), NNOP_ERR_OUT_OF_MEMORY);
    assert_null(p);
    NNOP_TEST_ASSERT_ERROR(ctx, "bytes of device memory for");
    NNOP_TEST_ASSERT_ERROR(ctx, "the context's allocator");
    assert_int_equal(b.live, 0);
    nnop_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_device_memory_through_the_allocator),
            cmocka_unit_test(test_refusing_allocator),
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
