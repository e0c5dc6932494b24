/* test_gpu_alloc_failures.c: every host allocation nnop's CUDA backend makes while building,
 * compiling, running and destroying a small network (cuDNN fused convs, own pool/reduction/
 * softmax kernels, a cuBLASLt linear layer) is failed in turn on one context: each run must
 * end with NNOP_ERR_OUT_OF_MEMORY and a message saying so, or succeed through a fallback with
 * the right result; the output stays untouched on failure, nothing nnop allocated leaks, and
 * the context still works afterwards. Only allocations called from nnop's own code fail
 * (cuDNN's and CUDA's are left alone: tests/common/alloc_inject.h, nnop_only). */
#include "gpu_harness.h"

#include "alloc_inject.h"

static const net_case net = {NNOP_F16, NNOP_NHWC, 2, 16, 12, 32, 10};

typedef struct gpu_run {
    nnop_context *ctx;
    void *x, *y; /* device buffers */
    size_t xb, yb;
} gpu_run;

/* Build, compile, execute, synchronize, destroy: the first failing status. */
static nnop_status once(gpu_run *r, char *error, size_t len)
{
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    const void *in[1];
    void *out[1];
    nnop_status st = nnop_graph_create(r->ctx, &g);
    in[0] = r->x, out[0] = r->y;
    if (st == NNOP_OK) {
        build_net(g, &net);
        st = nnop_graph_compile(g, NULL, &plan);
    }
    if (st == NNOP_OK)
        st = nnop_plan_execute(plan, in, out);
    if (st == NNOP_OK)
        st = nnop_context_synchronize(r->ctx);
    snprintf(error, len, "%s", st == NNOP_OK ? "" : nnop_context_last_error(r->ctx));
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
    return st;
}

static void poison_output(gpu_run *r, void *host)
{
    nnop_test_poison(host, r->yb);
    assert_int_equal(nnop_copy_in(r->ctx, r->y, host, r->yb), NNOP_OK);
}

static void test_gpu_every_allocation_failure_is_clean(void **state)
{
    nnop_context_options o;
    nnop_tensor_desc xd = nnop_tensor_4d(net.dt, net.lay, net.n, net.c, net.hw, net.hw);
    gpu_run r;
    void *hx, *want, *got;
    char error[1024];
    long k, total, oom = 0, fallback = 0;
    int64_t n_out = net.n * net.classes;
    float *want_f32;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    SKIP_WITHOUT_INJECTION();
#ifdef NNOP_CAN_INJECT
    memset(&r, 0, sizeof r);
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    r.ctx = h_gpu_context(&o);
    r.xb = nnop_tensor_bytes(&xd);
    r.yb = (size_t)(net.n * net.classes) * nnop_dtype_size(net.dt);
    hx = malloc(r.xb), want = malloc(r.yb), got = malloc(r.yb);
    assert_true(hx && want && got);
    nnop_test_fill(net.dt, hx, NULL, nnop_tensor_elements(&xd), 91, -1.0f, 1.0f);
    assert_int_equal(nnop_malloc(r.ctx, r.xb, &r.x), NNOP_OK);
    assert_int_equal(nnop_malloc(r.ctx, r.yb, &r.y), NNOP_OK);
    assert_int_equal(nnop_copy_in(r.ctx, r.x, hx, r.xb), NNOP_OK);
    /* a first run fills the context's memory-only plan cache: every run below takes the
     * same path, which the counting run measures */
    assert_int_equal(once(&r, error, sizeof error), NNOP_OK);
    arm(0, 1);
    assert_int_equal(once(&r, error, sizeof error), NNOP_OK);
    disarm();
    total = count_;
    assert_int_equal(live_, 0);
    assert_true(total > 50);
    assert_int_equal(nnop_copy_out(r.ctx, want, r.y, r.yb), NNOP_OK);
    want_f32 = (float *)malloc((size_t)n_out * sizeof(float));
    assert_non_null(want_f32);
    assert_int_equal(nnop_convert(net.dt, want, NNOP_F32, want_f32, n_out), NNOP_OK);
    for (k = 1; k <= total; k++) {
        nnop_status st;
        poison_output(&r, got);
        arm(k, 1);
        st = once(&r, error, sizeof error);
        disarm();
        if (failed_ != 1)
            fail_msg("allocation %ld of %ld: the run made only %ld", k, total, count_);
        if (live_ != 0 || overflow_ != 0)
            fail_msg("allocation %ld of %ld failed (%s: %s): %ld allocations leaked", k, total,
                     nnop_status_string(st), error, live_);
        assert_int_equal(nnop_copy_out(r.ctx, got, r.y, r.yb), NNOP_OK);
        if (st == NNOP_OK) { /* a fallback (another engine, a split) took over */
            fallback++;
            if (!nnop_test_compare(net.dt, got, want_f32, n_out, nnop_test_rtol(net.dt),
                                   nnop_test_rtol(net.dt), "fallback run", (uint64_t)k))
                fail_msg("allocation %ld of %ld failed: a fallback gave another result", k, total);
            continue;
        }
        oom++;
        if (st != NNOP_ERR_OUT_OF_MEMORY ||
            !(strstr(error, "out of memory") || strstr(error, "allocate")))
            fail_msg("allocation %ld of %ld failed: status %s, message '%s'", k, total,
                     nnop_status_string(st), error);
        if (!nnop_test_is_poisoned(got, r.yb))
            fail_msg("allocation %ld of %ld failed: the output was written", k, total);
    }
    print_message("%ld nnop allocations failed in turn: %ld runs out of memory, %ld through a "
                  "fallback\n",
                  total, oom, fallback);
    assert_int_equal(once(&r, error, sizeof error), NNOP_OK); /* the context still works */
    assert_int_equal(nnop_copy_out(r.ctx, got, r.y, r.yb), NNOP_OK);
    assert_memory_equal(got, want, r.yb);
    nnop_free(r.ctx, r.x);
    nnop_free(r.ctx, r.y);
    nnop_context_destroy(r.ctx);
    free(hx), free(want), free(got), free(want_f32);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_gpu_every_allocation_failure_is_clean),
    };
    return cmocka_run_group_tests_name("gpu_alloc_failures", tests, NULL, NULL);
}
