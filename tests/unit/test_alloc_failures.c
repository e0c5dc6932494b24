/* test_alloc_failures.c: every host allocation nnop makes, failed in turn. A whole CPU run
 * (context, graph with conv/bias/relu/pool/flatten/linear/softmax, compile, execute, destroy)
 * is repeated with the k-th allocation failing, for k = 1, 2, ... up to the number a run
 * makes: each run must fail with NNOP_ERR_OUT_OF_MEMORY and a message saying so ("out of
 * memory" or "cannot allocate") or succeed where a fallback exists, leave the output buffer
 * untouched unless it succeeded, and free everything it allocated. Also: executing a compiled
 * plan allocates nothing. The allocator is replaced in this executable
 * (tests/common/alloc_inject.h); where it cannot be (not glibc, or a sanitizer) the tests
 * skip. tests/gpu/test_gpu_alloc_failures.c does the same on the GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nnop_test.h"

#include "alloc_inject.h"

#ifdef NNOP_CAN_INJECT
enum { N = 2, C = 3, H = 8, W = 8, K = 4, CLASSES = 5 };

typedef struct run_data {
    float x[N * C * H * W];
    float w[K * C * 3 * 3], b[K];
    float fw[CLASSES * K * (H / 2) * (W / 2)], fb[CLASSES];
    float y[N * CLASSES];
} run_data;

static void build(nnop_graph *g, const void *arg)
{
    const run_data *d = (const run_data *)arg;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, N, C, H, W);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, K, C, 3, 3);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F32, K);
    nnop_tensor_desc fwd = nnop_tensor_2d(NNOP_F32, CLASSES, K * (H / 2) * (W / 2));
    nnop_tensor_desc fbd = nnop_tensor_1d(NNOP_F32, CLASSES);
    nnop_conv_params cp = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_pool_params pp = {{2, 2}, {2, 2}, {0, 0}, 0, {0, 0}};
    nnop_value v;
    v = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, d->w), &cp);
    v = nnop_act(g, nnop_bias(g, v, nnop_constant(g, "b", &bd, d->b)), NNOP_ACT_RELU, 0.0f);
    v = nnop_flatten(g, nnop_pool(g, v, NNOP_POOL_MAX, &pp));
    v = nnop_linear(g, v, nnop_constant(g, "fw", &fwd, d->fw), nnop_constant(g, "fb", &fbd, d->fb));
    (void)nnop_output(g, nnop_softmax(g, v), "y"); /* its status is the graph's (sticky) */
}

/* One whole run on a CPU context of its own; returns its first failing status. */
static nnop_status whole_run(run_data *d, char *error, size_t len)
{
    nnop_context_options o;
    const void *in[1];
    void *out[1];
    in[0] = d->x, out[0] = d->y;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    return nnop_test_whole_run(&o, build, d, in, out, error, len);
}

static run_data *new_data(void)
{
    run_data *d = (run_data *)calloc(1, sizeof *d);
    assert_non_null(d);
    nnop_test_fill_f32(d->x, N * C * H * W, 1, -1.0f, 1.0f);
    nnop_test_fill_f32(d->w, K * C * 9, 2, -0.3f, 0.3f);
    nnop_test_fill_f32(d->b, K, 3, -0.5f, 0.5f);
    nnop_test_fill_f32(d->fw, CLASSES * K * (H / 2) * (W / 2), 4, -0.1f, 0.1f);
    nnop_test_fill_f32(d->fb, CLASSES, 5, -0.5f, 0.5f);
    return d;
}

#endif /* NNOP_CAN_INJECT */

static void test_every_allocation_failure_is_clean(void **state)
{
    (void)state;
    SKIP_WITHOUT_INJECTION();
#ifdef NNOP_CAN_INJECT
    run_data *d = new_data();
    float want[N * CLASSES];
    char error[512];
    long k, total = 0;
    arm(0, 0); /* counting only: how many allocations a whole run makes */
    assert_int_equal(whole_run(d, error, sizeof error), NNOP_OK);
    disarm();
    total = count_;
    assert_int_equal(live_, 0);
    assert_true(total > 20); /* the test means something only if nnop allocates */
    memcpy(want, d->y, sizeof want);
    for (k = 1; k <= total; k++) {
        nnop_status st;
        nnop_test_poison(d->y, sizeof d->y);
        arm(k, 0);
        st = whole_run(d, error, sizeof error);
        disarm();
        if (failed_ != 1)
            fail_msg("allocation %ld of %ld: the run made only %ld", k, total, count_);
        if (live_ != 0 || overflow_ != 0)
            fail_msg("allocation %ld of %ld failed: %ld allocations leaked (%s)", k, total, live_,
                     nnop_status_string(st));
        if (st == NNOP_OK) { /* a fallback took over: the result must still be right */
            assert_memory_equal(d->y, want, sizeof want);
            continue;
        }
        if (st != NNOP_ERR_OUT_OF_MEMORY ||
            !(strstr(error, "out of memory") || strstr(error, "allocate")))
            fail_msg("allocation %ld of %ld failed: status %s, message '%s'", k, total,
                     nnop_status_string(st), error);
        if (!nnop_test_is_poisoned(d->y, sizeof d->y))
            fail_msg("allocation %ld of %ld failed: the output was written", k, total);
    }
    print_message("%ld allocations, each failed in turn\n", total);
    free(d);
#endif
}

static void test_execute_allocates_nothing(void **state)
{
    (void)state;
    SKIP_WITHOUT_INJECTION();
#ifdef NNOP_CAN_INJECT
    run_data *d = new_data();
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    const void *in[1];
    void *out[1];
    int i;
    in[0] = d->x, out[0] = d->y;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    build(g, d);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK); /* a first run may set up */
    arm(0, 0);
    for (i = 0; i < 3; i++)
        assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
    disarm();
    assert_int_equal(count_, 0);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
    free(d);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_allocation_failure_is_clean),
            cmocka_unit_test(test_execute_allocates_nothing),
    };
    return cmocka_run_group_tests_name("alloc_failures", tests, NULL, NULL);
}
