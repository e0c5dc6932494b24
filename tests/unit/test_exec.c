/* test_exec.c: execution contexts and batch ranges (issue 49) on the CPU backend. One plan
 * compiled with batch_range for batch 8 gives, at every batch 1 to 8, exactly the result of a
 * plan compiled for that batch, writing nothing past the batch's samples; 8 threads, each with
 * an execution context of that one plan, running random batches at once, each result equal to
 * its quiet run (ThreadSanitizer runs this in CI); what a range needs, the refusals, the
 * memory, and execution contexts whose plan or context went. Worker threads never call
 * cmocka: they count, the main thread asserts. Threads come from src/platform. */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "platform/platform.h"

enum { MAXB = 8, C = 3, HW = 6, K = 4, CLASSES = 5, X1 = C * HW * HW, THREADS = 8, RUNS = 24 };

static float w_conv[K * C * 9], b_conv[K], w_fc[CLASSES * K * 9], b_fc[CLASSES];

/* conv 3x3 p1 + bias + relu -> max pool 2x2 -> flatten -> linear -> softmax at batch n */
static nnop_plan *compile_net(nnop_context *ctx, int64_t n, int batch_range)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, n, C, HW, HW);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, K, C, 3, 3);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F32, K);
    nnop_tensor_desc fwd = nnop_tensor_2d(NNOP_F32, CLASSES, K * 9);
    nnop_tensor_desc fbd = nnop_tensor_1d(NNOP_F32, CLASSES);
    nnop_compile_options co;
    nnop_conv_params cp;
    nnop_pool_params pp;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_value v;
    nnop_conv_params_init(&cp);
    cp.pad[0] = cp.pad[1] = 1;
    nnop_pool_params_init(&pp);
    pp.window[0] = pp.window[1] = pp.stride[0] = pp.stride[1] = 2;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w_conv), &cp);
    v = nnop_act(g, nnop_bias(g, v, nnop_constant(g, "b", &bd, b_conv)), NNOP_ACT_RELU, 0.0f);
    v = nnop_flatten(g, nnop_pool(g, v, NNOP_POOL_MAX, &pp));
    v = nnop_linear(g, v, nnop_constant(g, "fw", &fwd, w_fc), nnop_constant(g, "fb", &fbd, b_fc));
    assert_int_equal(nnop_output(g, nnop_softmax(g, v), "y"), NNOP_OK);
    nnop_compile_options_init(&co);
    co.batch_range = batch_range;
    assert_int_equal(nnop_graph_compile(g, &co, &p), NNOP_OK);
    nnop_graph_destroy(g);
    return p;
}

static float x_all[MAXB * X1], want[MAXB + 1][MAXB * CLASSES];

/* want[n]: the plan compiled for batch n, on the first n samples of x_all */
static void quiet_runs(nnop_context *ctx)
{
    int64_t n;
    nnop_test_fill_f32(w_conv, K * C * 9, 41, -0.5f, 0.5f);
    nnop_test_fill_f32(b_conv, K, 42, -0.5f, 0.5f);
    nnop_test_fill_f32(w_fc, CLASSES * K * 9, 43, -0.5f, 0.5f);
    nnop_test_fill_f32(b_fc, CLASSES, 44, -0.5f, 0.5f);
    nnop_test_fill_f32(x_all, MAXB * X1, 45, -1.0f, 1.0f);
    for (n = 1; n <= MAXB; n++) {
        nnop_plan *p = compile_net(ctx, n, 0);
        const void *in[1] = {x_all};
        void *out[1] = {want[n]};
        assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
        nnop_plan_destroy(p);
    }
}

static void test_every_batch_equals_its_own_plan(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_plan *p;
    nnop_exec *e = NULL;
    float y[MAXB * CLASSES + 16];
    int64_t n;
    quiet_runs(ctx);
    p = compile_net(ctx, MAXB, 1);
    {
        char text[2048];
        assert_true(nnop_plan_describe(p, text, sizeof text) < sizeof text);
        assert_non_null(strstr(text, "runs take a batch of 1 to 8 (batch_range)"));
    }
    assert_int_equal(nnop_exec_create(p, &e), NNOP_OK);
    for (n = MAXB; n >= 1; n--) { /* down, then up again: shapes change both ways */
        const void *in[1] = {x_all};
        void *out[1] = {y};
        nnop_test_poison(y, sizeof y);
        assert_int_equal(nnop_exec_run(e, n, in, out), NNOP_OK);
        assert_memory_equal(y, want[n], (size_t)n * CLASSES * sizeof(float));
        assert_true(nnop_test_is_poisoned(y + n * CLASSES, sizeof y - n * CLASSES * sizeof(float)));
        assert_string_equal(nnop_exec_last_error(e), "");
    }
    for (n = 1; n <= MAXB; n++) {
        const void *in[1] = {x_all};
        void *out[1] = {y};
        assert_int_equal(nnop_exec_run(e, n == MAXB ? 0 : n, in, out), NNOP_OK); /* 0: built */
        assert_memory_equal(y, want[n], (size_t)n * CLASSES * sizeof(float));
    }
    nnop_exec_destroy(e);
    nnop_plan_destroy(p);
}

typedef struct worker {
    nnop_exec *e;
    uint64_t seed;
    int runs, wrong, failed;
} worker;

static void worker_main(void *arg)
{
    worker *w = (worker *)arg;
    float y[MAXB * CLASSES];
    int r;
    for (r = 0; r < RUNS; r++) {
        const void *in[1] = {x_all};
        void *out[1] = {y};
        int64_t n;
        w->seed = w->seed * 6364136223846793005ull + 1442695040888963407ull;
        n = 1 + (int64_t)((w->seed >> 33) % MAXB);
        if (nnop_exec_run(w->e, n, in, out) != NNOP_OK) {
            w->failed++;
            continue;
        }
        w->wrong += memcmp(y, want[n], (size_t)n * CLASSES * sizeof(float)) != 0;
        w->runs++;
    }
}

static void test_threads_share_one_plan(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_plan *p;
    worker w[THREADS];
    nnop__thread *t[THREADS];
    nnop_plan_memory_info pm, em;
    int i;
    quiet_runs(ctx);
    p = compile_net(ctx, MAXB, 1);
    memset(w, 0, sizeof w);
    for (i = 0; i < THREADS; i++) {
        assert_int_equal(nnop_exec_create(p, &w[i].e), NNOP_OK);
        w[i].seed = 1000 + (uint64_t)i;
    }
    assert_int_equal(nnop_plan_memory(p, &pm), NNOP_OK);
    assert_int_equal(nnop_exec_memory(w[0].e, &em), NNOP_OK);
    assert_int_equal(em.intermediates, pm.intermediates); /* the same buffer plan */
    assert_int_equal(em.weights, 0);                      /* the weights are the plan's */
    for (i = 0; i < THREADS; i++)
        assert_int_equal(nnop__thread_start(worker_main, &w[i], &t[i]), NNOP_OK);
    for (i = 0; i < THREADS; i++)
        nnop__thread_join(t[i]);
    for (i = 0; i < THREADS; i++) {
        assert_int_equal(w[i].failed, 0);
        assert_int_equal(w[i].wrong, 0);
        assert_int_equal(w[i].runs, RUNS);
        nnop_exec_destroy(w[i].e);
    }
    nnop_plan_destroy(p);
}

static void test_refusals(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc ad = nnop_tensor_2d(NNOP_F32, 4, 3), bd = nnop_tensor_2d(NNOP_F32, 1, 3);
    nnop_compile_options co;
    nnop_graph *g = NULL;
    nnop_plan *p = (nnop_plan *)&p, *fixed;
    nnop_exec *e = (nnop_exec *)&e;
    float y[MAXB * CLASSES];
    const void *in[1] = {x_all};
    void *out[1] = {y};
    /* a value without the batch as its dim 0: refused by name */
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    (void)nnop_input(g, "a", &ad);
    assert_int_equal(nnop_output(g, nnop_input(g, "b", &bd), "b"), NNOP_OK);
    nnop_compile_options_init(&co);
    co.batch_range = 1;
    assert_int_equal(nnop_graph_compile(g, &co, &p), NNOP_ERR_SHAPE);
    assert_null(p);
    NNOP_TEST_ASSERT_ERROR(ctx,
                           "batch_range: value 'b' has dim 0 = 1, not the batch 4 of input 'a'");
    nnop_graph_destroy(g);
    /* runs outside the range, a batch for a plan without one, NULL arrays: the exec's message */
    p = compile_net(ctx, MAXB, 1);
    assert_int_equal(nnop_exec_create(p, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_exec_create(NULL, &e), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(e);
    assert_int_equal(nnop_exec_create(p, &e), NNOP_OK);
    assert_int_equal(nnop_exec_run(e, MAXB + 1, in, out), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_exec_last_error(e), "batch 9 is outside 1 to 8"));
    assert_int_equal(nnop_exec_run(e, -1, in, out), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_exec_run(e, 2, NULL, out), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_exec_last_error(e), "inputs array is NULL"));
    fixed = compile_net(ctx, 2, 0);
    {
        nnop_exec *f = NULL;
        assert_int_equal(nnop_exec_create(fixed, &f), NNOP_OK);
        assert_int_equal(nnop_exec_run(f, 2, in, out), NNOP_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(nnop_exec_last_error(f), "compiled without batch_range"));
        assert_int_equal(nnop_exec_run(f, 0, in, out), NNOP_OK);
        /* streams: the CPU backend has none (NULL is its own), and nothing to wait for */
        assert_int_equal(nnop_exec_set_stream(f, NULL), NNOP_OK);
        assert_int_equal(nnop_exec_set_stream(f, &f), NNOP_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(nnop_exec_last_error(f), "the CPU backend has no streams"));
        assert_int_equal(nnop_exec_synchronize(f), NNOP_OK);
        assert_string_equal(nnop_exec_last_error(f), "");
        assert_int_equal(nnop_exec_synchronize(NULL), NNOP_ERR_INVALID_ARGUMENT);
        assert_int_equal(nnop_exec_set_stream(NULL, NULL), NNOP_ERR_INVALID_ARGUMENT);
        nnop_exec_destroy(f);
    }
    nnop_plan_destroy(fixed);
    /* its plan destroyed first: no buffers left, a clear failure, destroy still fine */
    nnop_plan_destroy(p);
    assert_int_equal(nnop_exec_run(e, 1, in, out), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(
            strstr(nnop_exec_last_error(e), "its plan, or the plan's context, was destroyed"));
    assert_int_equal(nnop_exec_synchronize(e), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_exec_set_stream(e, NULL), NNOP_ERR_INVALID_ARGUMENT);
    nnop_exec_destroy(e);
    nnop_exec_destroy(NULL);
    assert_non_null(nnop_exec_last_error(NULL));
}

/* an execution context on the caller's memory: its buffers are in that block (an odd start
 * included), results as with nnop's own, the block untouched by destroy; too small refused */
static void test_on_callers_memory(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_plan *p;
    nnop_exec *e = NULL;
    nnop_plan_memory_info m;
    float y[MAXB * CLASSES];
    const void *in[1] = {x_all};
    void *out[1] = {y};
    size_t need;
    unsigned char *block;
    int64_t n;
    quiet_runs(ctx);
    p = compile_net(ctx, MAXB, 1);
    need = nnop_exec_scratch_bytes(p);
    assert_true(need > 0);
    assert_int_equal(nnop_exec_scratch_bytes(NULL), 0);
    block = (unsigned char *)malloc(need + 1);
    assert_non_null(block);
    assert_int_equal(nnop_exec_create_in(p, block + 1, need - 1, &e), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(e);
    NNOP_TEST_ASSERT_ERROR(ctx, "bytes of scratch, the plan's buffers need");
    assert_int_equal(nnop_exec_create_in(p, NULL, need, &e), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_exec_create_in(p, block + 1, need, &e), NNOP_OK); /* unaligned */
    assert_int_equal(nnop_exec_memory(e, &m), NNOP_OK);
    assert_true(m.intermediates > 0 && m.intermediates <= need);
    for (n = 1; n <= MAXB; n++) {
        assert_int_equal(nnop_exec_run(e, n, in, out), NNOP_OK);
        assert_memory_equal(y, want[n], (size_t)n * CLASSES * sizeof(float));
    }
    nnop_exec_destroy(e);
    nnop_plan_destroy(p);
    free(block); /* ours to free: nnop never did (ASan would say) */
}

/* the context destroyed under a plan and its execution context */
static void test_context_destroyed_first(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_plan *p;
    nnop_exec *e = NULL;
    float y[MAXB * CLASSES];
    const void *in[1] = {x_all};
    void *out[1] = {y};
    (void)state;
    p = compile_net(ctx, MAXB, 1);
    assert_int_equal(nnop_exec_create(p, &e), NNOP_OK);
    nnop_context_destroy(ctx);
    assert_int_equal(nnop_exec_run(e, 1, in, out), NNOP_ERR_INVALID_ARGUMENT);
    nnop_exec_destroy(e);
    nnop_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_batch_equals_its_own_plan),
            cmocka_unit_test(test_threads_share_one_plan),
            cmocka_unit_test(test_refusals),
            cmocka_unit_test(test_on_callers_memory),
            cmocka_unit_test(test_context_destroyed_first),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
