/* test_concurrency.c: a serving load (issue 43). Many threads, each with its own context and
 * one shared plan cache, compile the same network as CUDA-graph plans and execute it at once,
 * alternating two sets of buffers (so captures keep happening while other threads compile,
 * allocate, copy and free), and compile a second plan while the others run. Every result must
 * equal, bit for bit, the same thread's quiet run: the one made before the threads started,
 * alone on the device. The whole storm repeats NNOP_CONCURRENCY_RUNS times (default 3 on the
 * CPU, 30 on the GPU: a failure in one run of six then passes with probability (5/6)^30,
 * 0.4%). Runs on the CPU backend always (CI's ThreadSanitizer run too) and on the CUDA backend
 * where there is a GPU. Worker threads never call cmocka: they record and the main thread
 * asserts. Threads come from src/platform (MSVC has no <threads.h>). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "nnop/nnop_cache.h"
#include "platform/platform.h"

#define THREADS 32
#define ROUNDS  6

typedef struct worker {
    nnop_backend backend;
    nnop_plan_cache *cache;
    nnop_dtype dt;
    nnop_layout lay;
    int index;
    const unsigned char *quiet; /* the quiet run's output bytes */
    size_t out_bytes;
    int differed;    /* outputs unlike the quiet run's */
    char error[512]; /* the first failure's status and message */
} worker;

static nnop_conv_params conv_p(int64_t pad, int64_t stride)
{
    nnop_conv_params p;
    p.pad[0] = p.pad[1] = pad;
    p.stride[0] = p.stride[1] = stride;
    p.dilation[0] = p.dilation[1] = 1;
    p.groups = 1;
    return p;
}

static nnop_value constant(nnop_graph *g, const nnop_tensor_desc *d, uint64_t seed, float bound)
{
    size_t bytes = nnop_tensor_bytes(d);
    void *data = malloc(bytes);
    nnop_value v;
    if (data) /* else nnop_constant records the NULL data: the compile fails, naming it */
        nnop_test_fill(d->dtype, data, NULL, nnop_tensor_elements(d), seed, -bound, bound);
    v = nnop_constant(g, "k", d, data);
    free(data);
    return v;
}

static nnop_value conv(nnop_graph *g, nnop_layout lay, nnop_value x, int64_t c, int64_t k,
                       int64_t r, nnop_conv_params p, uint64_t seed)
{
    nnop_tensor_desc xd, wd, bd;
    nnop_value_desc(g, x, &xd);
    wd = nnop_tensor_4d(xd.dtype, lay, k, c, r, r);
    bd = nnop_tensor_1d(xd.dtype, k);
    x = nnop_conv(g, x, constant(g, &wd, seed, 1.2f / (float)(r * (c > 8 ? 4 : 2))), &p);
    return nnop_bias(g, x, constant(g, &bd, seed + 1, 0.5f));
}

/* A small residual classifier: conv-bias-relu, conv-bias + skip, relu, max pool, 1x1 conv,
 * GAP, linear, softmax: several cuDNN partitions and own kernels. */
static void build(nnop_graph *g, nnop_dtype dt, nnop_layout lay)
{
    nnop_tensor_desc xd = nnop_tensor_4d(dt, lay, 2, 16, 12, 12), wd, bd;
    nnop_pool_params pp;
    nnop_value x = nnop_input(g, "x", &xd), y;
    y = nnop_act(g, conv(g, lay, x, 16, 16, 3, conv_p(1, 1), 1), NNOP_ACT_RELU, 0);
    y = nnop_act(g, nnop_add(g, conv(g, lay, y, 16, 16, 3, conv_p(1, 1), 3), x), NNOP_ACT_RELU, 0);
    nnop_pool_params_init(&pp);
    pp.window[0] = pp.window[1] = 2, pp.stride[0] = pp.stride[1] = 2;
    pp.pad[0] = pp.pad[1] = 0, pp.count_include_pad = 0;
    y = nnop_pool(g, y, NNOP_POOL_MAX, &pp);
    y = nnop_act(g, conv(g, lay, y, 16, 32, 1, conv_p(0, 1), 5), NNOP_ACT_SILU, 0);
    y = nnop_flatten(g, nnop_global_avg_pool(g, y));
    wd = nnop_tensor_2d(dt, 10, 32);
    bd = nnop_tensor_1d(dt, 10);
    y = nnop_linear(g, y, constant(g, &wd, 7, 0.3f), constant(g, &bd, 8, 0.3f));
    nnop_output(g, nnop_softmax(g, y), "p");
}

static void note(worker *w, const char *what, nnop_status st, nnop_context *ctx)
{
    if (!w->error[0])
        snprintf(w->error, sizeof w->error, "thread %d: %s: %s: %s", w->index, what,
                 nnop_status_string(st), ctx ? nnop_context_last_error(ctx) : "");
}

static nnop_context *make_context(worker *w)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_status st;
    nnop_context_options_init(&o);
    o.backend = w->backend;
    o.plan_cache = w->cache;
    o.deterministic = 1; /* the quiet run and the loaded one must choose alike */
    st = nnop_context_create(&o, &ctx);
    if (st != NNOP_OK)
        note(w, "nnop_context_create", st, NULL);
    return ctx;
}

static nnop_plan *compile(worker *w, nnop_context *ctx)
{
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_compile_options co;
    nnop_status st = nnop_graph_create(ctx, &g);
    if (st == NNOP_OK) {
        build(g, w->dt, w->lay);
        nnop_compile_options_init(&co);
        co.cuda_graph = 1;
        st = nnop_graph_compile(g, &co, &p);
    }
    if (st != NNOP_OK)
        note(w, "compile", st, ctx);
    nnop_graph_destroy(g);
    return p;
}

typedef struct buffers {
    void *in[2], *out[2];
    size_t in_bytes;
} buffers;

/* The input of thread i (seeded by i) copied into both input sets; outputs poisoned. */
static nnop_status make_buffers(worker *w, nnop_context *ctx, nnop_plan *p, buffers *b)
{
    nnop_tensor_desc xd;
    void *host;
    nnop_status st = nnop_plan_input_desc(p, 0, &xd);
    int k;
    memset(b, 0, sizeof *b);
    b->in_bytes = nnop_tensor_bytes(&xd);
    host = malloc(b->in_bytes > w->out_bytes ? b->in_bytes : w->out_bytes);
    if (!host)
        return NNOP_ERR_OUT_OF_MEMORY;
    nnop_test_fill(xd.dtype, host, NULL, nnop_tensor_elements(&xd), 1000 + (uint64_t)w->index, -1.f,
                   1.f);
    for (k = 0; k < 2 && st == NNOP_OK; k++) {
        st = nnop_malloc(ctx, b->in_bytes, &b->in[k]);
        if (st == NNOP_OK)
            st = nnop_copy_in(ctx, b->in[k], host, b->in_bytes);
        if (st == NNOP_OK)
            st = nnop_malloc(ctx, w->out_bytes, &b->out[k]);
    }
    nnop_test_poison(host, w->out_bytes);
    for (k = 0; k < 2 && st == NNOP_OK; k++)
        st = nnop_copy_in(ctx, b->out[k], host, w->out_bytes);
    free(host);
    return st;
}

static void free_buffers(nnop_context *ctx, buffers *b)
{
    int k;
    for (k = 0; k < 2; k++) {
        nnop_free(ctx, b->in[k]);
        nnop_free(ctx, b->out[k]);
    }
}

/* Execute with set k and compare with the quiet run (or record it when w->quiet is NULL). */
static void execute_check(worker *w, nnop_context *ctx, nnop_plan *p, buffers *b, int k,
                          unsigned char *got)
{
    const void *in[1];
    void *out[1];
    nnop_status st;
    in[0] = b->in[k], out[0] = b->out[k];
    st = nnop_plan_execute(p, in, out);
    if (st == NNOP_OK)
        st = nnop_copy_out(ctx, got, b->out[k], w->out_bytes);
    if (st != NNOP_OK)
        note(w, "execute", st, ctx);
    else if (w->quiet && memcmp(got, w->quiet, w->out_bytes) != 0)
        w->differed++;
}

static void worker_main(void *arg)
{
    worker *w = (worker *)arg;
    nnop_context *ctx = make_context(w);
    nnop_plan *p = ctx ? compile(w, ctx) : NULL, *second = NULL;
    unsigned char *got = (unsigned char *)malloc(w->out_bytes);
    buffers b;
    int r;
    memset(&b, 0, sizeof b);
    if (p && got && make_buffers(w, ctx, p, &b) == NNOP_OK) {
        for (r = 0; r < ROUNDS && !w->error[0]; r++) {
            execute_check(w, ctx, p, &b, r & 1, got);
            if (r == 1) /* compile again while the other threads capture and replay */
                second = compile(w, ctx);
        }
        if (second && !w->error[0])
            execute_check(w, ctx, second, &b, 0, got);
    } else if (!w->error[0]) {
        note(w, "buffers", NNOP_ERR_OUT_OF_MEMORY, ctx);
    }
    if (ctx)
        free_buffers(ctx, &b);
    free(got);
    nnop_plan_destroy(second);
    nnop_plan_destroy(p);
    nnop_context_destroy(ctx);
}

/* The quiet run of worker w: alone, one execute, its output kept in quiet (out_bytes). */
static void quiet_run(worker *w, unsigned char **quiet)
{
    nnop_context *ctx = make_context(w);
    nnop_plan *p = ctx ? compile(w, ctx) : NULL;
    nnop_tensor_desc yd;
    buffers b;
    assert_non_null(p);
    assert_int_equal(nnop_plan_output_desc(p, 0, &yd), NNOP_OK);
    w->out_bytes = nnop_tensor_bytes(&yd);
    *quiet = (unsigned char *)malloc(w->out_bytes);
    assert_non_null(*quiet);
    assert_int_equal(make_buffers(w, ctx, p, &b), NNOP_OK);
    w->quiet = NULL;
    execute_check(w, ctx, p, &b, 0, *quiet);
    assert_string_equal(w->error, "");
    free_buffers(ctx, &b);
    nnop_plan_destroy(p);
    nnop_context_destroy(ctx);
    w->quiet = *quiet;
}

static int runs_wanted(nnop_backend b)
{
    const char *e = getenv("NNOP_CONCURRENCY_RUNS");
    int n = e ? atoi(e) : 0;
    return n > 0 ? n : b == NNOP_BACKEND_CUDA ? 30 : 3;
}

static void storm(nnop_backend backend, nnop_dtype dt, nnop_layout lay)
{
    static worker w[THREADS];
    unsigned char *quiet[THREADS];
    nnop__thread *t[THREADS];
    nnop_plan_cache *cache = NULL;
    int runs = runs_wanted(backend), run, i, differed = 0;
    assert_int_equal(nnop_plan_cache_create(NULL, 0, &cache), NNOP_OK);
    for (i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].backend = backend, w[i].cache = cache, w[i].dt = dt, w[i].lay = lay;
        w[i].index = i;
        quiet_run(&w[i], &quiet[i]);
    }
    for (run = 0; run < runs; run++) {
        for (i = 0; i < THREADS; i++)
            assert_int_equal(nnop__thread_start(worker_main, &w[i], &t[i]), NNOP_OK);
        for (i = 0; i < THREADS; i++)
            nnop__thread_join(t[i]);
        for (i = 0; i < THREADS; i++) {
            if (w[i].error[0])
                fail_msg("run %d of %d: %s", run + 1, runs, w[i].error);
            differed += w[i].differed;
        }
    }
    printf("%d runs of %d threads (%s): %d results unlike the quiet run's\n", runs, THREADS,
           backend == NNOP_BACKEND_CUDA ? "CUDA" : "CPU", differed);
    assert_int_equal(differed, 0);
    for (i = 0; i < THREADS; i++)
        free(quiet[i]);
    nnop_plan_cache_destroy(cache);
}

static void cpu_f32_nchw(void **state)
{
    (void)state;
    storm(NNOP_BACKEND_CPU, NNOP_F32, NNOP_NCHW);
}

static void cuda_f16_nhwc(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    storm(NNOP_BACKEND_CUDA, NNOP_F16, NNOP_NHWC);
}

static void cuda_f32_nchw(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    storm(NNOP_BACKEND_CUDA, NNOP_F32, NNOP_NCHW);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(cpu_f32_nchw),
            cmocka_unit_test(cuda_f16_nhwc),
            cmocka_unit_test(cuda_f32_nchw),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return nnop_test_exit_code(failed, sizeof tests / sizeof tests[0]);
}
