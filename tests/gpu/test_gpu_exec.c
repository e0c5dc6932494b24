/* test_gpu_exec.c: execution contexts on the CUDA backend (issue 49). A small network that
 * takes most of the backend's step kinds (the C=3 stem with its padded input, cuDNN conv
 * chains, max pooling, a depthwise conv, a squeeze-excitation gate with its pooled sums, a
 * residual add, global average pooling, a linear layer on cuBLASLt, softmax) in f16 NHWC and
 * f32 NCHW, with and without CUDA-graph replay. Four execution contexts of one plan run on
 * four threads at once, each run bitwise equal to the plan's own quiet run of the same input
 * (a deterministic context: same engines, same sums); then the memory they report, caller's
 * scratch at an odd address, a stream of the caller's, and a context whose plan went first.
 * Worker threads never call cmocka: they count, the main thread asserts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include <cuda_runtime.h>

#include "platform/platform.h"

enum { N = 4, C0 = 3, HW = 32, C1 = 16, C2 = 32, SE = 8, CLASSES = 10, INPUTS = 6 };
enum { THREADS = 4, RUNS = 16 };

typedef struct net {
    nnop_dtype t;
    nnop_layout layout;
    int cuda_graph;
    nnop_context *ctx;
    nnop_plan *p;
    size_t xbytes, ybytes;
    void *x[INPUTS];             /* device inputs */
    unsigned char *want[INPUTS]; /* the plan's own runs, host bytes */
} net;

static uint64_t seed_next = 100;

/* A constant of dims d (4-D in the net's layout) with values in +-1/sqrt(fan_in). */
static nnop_value weight(nnop_graph *g, const net *n, nnop_tensor_desc d, double fan_in)
{
    float bound = (float)(1.0 / sqrt(fan_in));
    int64_t count = nnop_tensor_elements(&d);
    void *data = malloc(nnop_tensor_bytes(&d));
    nnop_value v;
    assert_non_null(data);
    (void)n;
    nnop_test_fill(d.dtype, data, NULL, count, seed_next++, -bound, bound);
    v = nnop_constant(g, NULL, &d, data);
    free(data);
    return v;
}

static nnop_value vec(nnop_graph *g, const net *n, int64_t c, float lo, float hi)
{
    nnop_tensor_desc d = nnop_tensor_1d(n->t, c);
    void *data = malloc(nnop_tensor_bytes(&d));
    nnop_value v;
    assert_non_null(data);
    nnop_test_fill(n->t, data, NULL, c, seed_next++, lo, hi);
    v = nnop_constant(g, NULL, &d, data);
    free(data);
    return v;
}

static nnop_value conv(nnop_graph *g, const net *n, nnop_value x, int64_t cin, int64_t cout, int r,
                       int stride, int groups)
{
    nnop_conv_params cp;
    nnop_conv_params_init(&cp);
    cp.pad[0] = cp.pad[1] = r / 2;
    cp.stride[0] = cp.stride[1] = stride;
    cp.groups = groups;
    return nnop_conv(g, x,
                     weight(g, n, nnop_tensor_4d(n->t, n->layout, cout, cin / groups, r, r),
                            (double)(cin / groups * r * r)),
                     &cp);
}

static nnop_value bn(nnop_graph *g, const net *n, nnop_value x, int64_t c)
{
    return nnop_batchnorm(g, x, vec(g, n, c, 0.5f, 1.5f), vec(g, n, c, -0.2f, 0.2f),
                          vec(g, n, c, -0.2f, 0.2f), vec(g, n, c, 0.5f, 1.5f), 1e-5f);
}

/* stem conv+bn+relu -> max pool -> 1x1 conv+bn+relu -> depthwise 3x3 + bias + hardswish ->
 * SE gate -> 1x1 conv + bias, + the block's input -> GAP -> flatten -> linear -> softmax */
static nnop_status build(net *n)
{
    nnop_tensor_desc xd = nnop_tensor_4d(n->t, n->layout, N, C0, HW, HW);
    nnop_compile_options co;
    nnop_pool_params pp;
    nnop_graph *g = NULL;
    nnop_value x, v, block, s;
    nnop_status st;
    assert_int_equal(nnop_graph_create(n->ctx, &g), NNOP_OK);
    x = nnop_input(g, "x", &xd);
    v = nnop_act(g, bn(g, n, conv(g, n, x, C0, C1, 3, 2, 1), C1), NNOP_ACT_RELU, 0.0f);
    nnop_pool_params_init(&pp);
    pp.window[0] = pp.window[1] = 3;
    pp.stride[0] = pp.stride[1] = 2;
    pp.pad[0] = pp.pad[1] = 1;
    block = nnop_pool(g, v, NNOP_POOL_MAX, &pp);
    v = nnop_act(g, bn(g, n, conv(g, n, block, C1, C2, 1, 1, 1), C2), NNOP_ACT_RELU, 0.0f);
    v = nnop_act(g, nnop_bias(g, conv(g, n, v, C2, C2, 3, 1, C2), vec(g, n, C2, -0.1f, 0.1f)),
                 NNOP_ACT_HARDSWISH, 0.0f);
    s = nnop_global_avg_pool(g, v);
    s = nnop_act(g, nnop_bias(g, conv(g, n, s, C2, SE, 1, 1, 1), vec(g, n, SE, -0.1f, 0.1f)),
                 NNOP_ACT_RELU, 0.0f);
    s = nnop_act(g, nnop_bias(g, conv(g, n, s, SE, C2, 1, 1, 1), vec(g, n, C2, -0.1f, 0.1f)),
                 NNOP_ACT_SIGMOID, 0.0f);
    v = nnop_mul(g, v, s);
    v = nnop_bias(g, conv(g, n, v, C2, C1, 1, 1, 1), vec(g, n, C1, -0.1f, 0.1f));
    v = nnop_flatten(g, nnop_global_avg_pool(g, nnop_add(g, v, block)));
    v = nnop_linear(g, v, weight(g, n, nnop_tensor_2d(n->t, CLASSES, C1), (double)C1),
                    vec(g, n, CLASSES, -0.1f, 0.1f));
    assert_int_equal(nnop_output(g, nnop_softmax(g, v), "y"), NNOP_OK);
    nnop_compile_options_init(&co);
    co.cuda_graph = n->cuda_graph;
    st = nnop_graph_compile(g, &co, &n->p);
    if (st != NNOP_OK)
        print_error("compile: %s\n", nnop_context_last_error(n->ctx));
    nnop_graph_destroy(g);
    return st;
}

static int finite_bytes(nnop_dtype t, const unsigned char *b, int64_t count)
{
    float *f = (float *)malloc((size_t)count * sizeof *f);
    int64_t i;
    int ok = f != NULL;
    if (ok && nnop_convert(t, b, NNOP_F32, f, count) != NNOP_OK)
        ok = 0;
    for (i = 0; ok && i < count; i++)
        ok = isfinite(f[i]) && f[i] >= 0.0f && f[i] <= 1.0f;
    free(f);
    return ok;
}

/* The plan, its inputs and its own runs of them. */
static void setup_net(net *n, nnop_dtype t, nnop_layout layout, int cuda_graph)
{
    nnop_context_options o;
    nnop_tensor_desc xd = nnop_tensor_4d(t, layout, N, C0, HW, HW);
    nnop_tensor_desc yd = nnop_tensor_2d(t, N, CLASSES);
    void *host, *y = NULL;
    int i;
    memset(n, 0, sizeof *n);
    n->t = t, n->layout = layout, n->cuda_graph = cuda_graph;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.deterministic = 1;
    assert_int_equal(nnop_context_create(&o, &n->ctx), NNOP_OK);
    assert_int_equal(build(n), NNOP_OK);
    n->xbytes = nnop_tensor_bytes(&xd);
    n->ybytes = nnop_tensor_bytes(&yd);
    host = malloc(n->xbytes);
    assert_non_null(host);
    assert_int_equal(cudaMalloc(&y, n->ybytes), cudaSuccess);
    for (i = 0; i < INPUTS; i++) {
        const void *in[1];
        void *out[1] = {y};
        nnop_test_fill(t, host, NULL, nnop_tensor_elements(&xd), 500 + (uint64_t)i, -1.0f, 1.0f);
        assert_int_equal(cudaMalloc(&n->x[i], n->xbytes), cudaSuccess);
        assert_int_equal(cudaMemcpy(n->x[i], host, n->xbytes, cudaMemcpyHostToDevice), cudaSuccess);
        in[0] = n->x[i];
        assert_int_equal(cudaMemset(y, 0xFF, n->ybytes), cudaSuccess);
        assert_int_equal(nnop_plan_execute(n->p, in, out), NNOP_OK);
        assert_int_equal(nnop_context_synchronize(n->ctx), NNOP_OK);
        n->want[i] = (unsigned char *)malloc(n->ybytes);
        assert_non_null(n->want[i]);
        assert_int_equal(cudaMemcpy(n->want[i], y, n->ybytes, cudaMemcpyDeviceToHost), cudaSuccess);
        assert_true(finite_bytes(t, n->want[i], N * CLASSES));
    }
    assert_memory_not_equal(n->want[0], n->want[1], n->ybytes); /* the inputs matter */
    cudaFree(y);
    free(host);
}

static void teardown_net(net *n)
{
    int i;
    for (i = 0; i < INPUTS; i++) {
        cudaFree(n->x[i]);
        free(n->want[i]);
    }
    nnop_plan_destroy(n->p);
    nnop_context_destroy(n->ctx);
}

typedef struct worker {
    const net *n;
    nnop_exec *e;
    uint64_t seed;
    int runs, wrong, failed;
    char error[256];
} worker;

/* Run, wait, read back, compare: the output poisoned before each run. */
static int run_once(worker *w, int i, void *y, unsigned char *got)
{
    const void *in[1] = {w->n->x[i]};
    void *out[1] = {y};
    if (cudaMemset(y, 0xFF, w->n->ybytes) != cudaSuccess ||
        nnop_exec_run(w->e, 0, in, out) != NNOP_OK || nnop_exec_synchronize(w->e) != NNOP_OK ||
        cudaMemcpy(got, y, w->n->ybytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        snprintf(w->error, sizeof w->error, "%s", nnop_exec_last_error(w->e));
        return -1;
    }
    return memcmp(got, w->n->want[i], w->n->ybytes) != 0;
}

static void worker_main(void *arg)
{
    worker *w = (worker *)arg;
    unsigned char *got = (unsigned char *)malloc(w->n->ybytes);
    void *y = NULL;
    int r;
    if (!got || cudaMalloc(&y, w->n->ybytes) != cudaSuccess) {
        w->failed = RUNS;
        free(got);
        return;
    }
    for (r = 0; r < RUNS; r++) {
        int res;
        w->seed = w->seed * 6364136223846793005ull + 1442695040888963407ull;
        res = run_once(w, (int)((w->seed >> 33) % INPUTS), y, got);
        w->failed += res < 0;
        w->wrong += res > 0;
        w->runs += res >= 0;
    }
    cudaFree(y);
    free(got);
}

static void check_threads(nnop_dtype t, nnop_layout layout, int cuda_graph)
{
    net n;
    worker w[THREADS];
    nnop__thread *th[THREADS];
    int i;
    setup_net(&n, t, layout, cuda_graph);
    memset(w, 0, sizeof w);
    for (i = 0; i < THREADS; i++) {
        w[i].n = &n;
        w[i].seed = 7000 + (uint64_t)i;
        assert_int_equal(nnop_exec_create(n.p, &w[i].e), NNOP_OK);
    }
    for (i = 0; i < THREADS; i++)
        assert_int_equal(nnop__thread_start(worker_main, &w[i], &th[i]), NNOP_OK);
    for (i = 0; i < THREADS; i++)
        nnop__thread_join(th[i]);
    for (i = 0; i < THREADS; i++) {
        if (w[i].failed)
            print_error("context %d: %s\n", i, w[i].error);
        assert_int_equal(w[i].failed, 0);
        assert_int_equal(w[i].wrong, 0);
        assert_int_equal(w[i].runs, RUNS);
        nnop_exec_destroy(w[i].e);
    }
    teardown_net(&n);
}

static void test_threads_f16_nhwc(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_threads(NNOP_F16, NNOP_NHWC, 0);
}

static void test_threads_f16_nhwc_cuda_graph(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_threads(NNOP_F16, NNOP_NHWC, 1);
}

static void test_threads_f32_nchw(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_threads(NNOP_F32, NNOP_NCHW, 0);
}

/* Memory: the context holds the plan's intermediates and none of its weights; on caller's
 * scratch at an odd address it runs the same; too little scratch is refused naming sizes. */
static void test_memory_and_callers_scratch(void **state)
{
    net n;
    worker w;
    nnop_plan_memory_info pm, em;
    unsigned char *got;
    char *scratch = NULL;
    void *y = NULL;
    size_t need;
    nnop_exec *small = NULL;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    setup_net(&n, NNOP_F16, NNOP_NHWC, 0);
    memset(&w, 0, sizeof w);
    w.n = &n;
    assert_int_equal(nnop_exec_create(n.p, &w.e), NNOP_OK);
    assert_int_equal(nnop_plan_memory(n.p, &pm), NNOP_OK);
    assert_int_equal(nnop_exec_memory(w.e, &em), NNOP_OK);
    assert_int_equal(em.intermediates, pm.intermediates);
    assert_int_equal(em.weights, 0);
    assert_true(em.device_total >= em.intermediates + em.workspace);
    nnop_exec_destroy(w.e);

    need = nnop_exec_scratch_bytes(n.p);
    assert_true(need >= em.device_total);
    assert_int_equal(cudaMalloc((void **)&scratch, need + 1), cudaSuccess);
    assert_int_equal(nnop_exec_create_in(n.p, scratch + 1, need - 1, &small),
                     NNOP_ERR_INVALID_ARGUMENT);
    assert_null(small);
    NNOP_TEST_ASSERT_ERROR(n.ctx, "nnop_exec_scratch_bytes");
    assert_int_equal(nnop_exec_create_in(n.p, scratch + 1, need, &w.e), NNOP_OK);
    got = (unsigned char *)malloc(n.ybytes);
    assert_non_null(got);
    assert_int_equal(cudaMalloc(&y, n.ybytes), cudaSuccess);
    assert_int_equal(run_once(&w, 3, y, got), 0);
    assert_int_equal(run_once(&w, 0, y, got), 0);
    nnop_exec_destroy(w.e);
    cudaFree(scratch);
    cudaFree(y);
    free(got);
    teardown_net(&n);
}

/* A stream of the caller's: the run goes there (waiting on it is enough), then back to the
 * context's own with NULL. A context whose plan was destroyed fails cleanly. */
static void test_callers_stream_and_orphan(void **state)
{
    net n;
    nnop_exec *e = NULL;
    cudaStream_t s = NULL;
    unsigned char *got;
    void *y = NULL;
    const void *in[1];
    void *out[1];
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    setup_net(&n, NNOP_F16, NNOP_NHWC, 1);
    got = (unsigned char *)malloc(n.ybytes);
    assert_non_null(got);
    assert_int_equal(cudaMalloc(&y, n.ybytes), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(nnop_exec_create(n.p, &e), NNOP_OK);
    assert_int_equal(nnop_exec_set_stream(e, s), NNOP_OK);
    in[0] = n.x[2];
    out[0] = y;
    assert_int_equal(cudaMemset(y, 0xFF, n.ybytes), cudaSuccess);
    assert_int_equal(nnop_exec_run(e, 0, in, out), NNOP_OK);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(cudaMemcpy(got, y, n.ybytes, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(got, n.want[2], n.ybytes);
    assert_int_equal(nnop_exec_set_stream(e, NULL), NNOP_OK);
    assert_int_equal(nnop_exec_run(e, 0, in, out), NNOP_OK);
    assert_int_equal(nnop_exec_synchronize(e), NNOP_OK);
    assert_int_equal(nnop_exec_run(e, 3, in, out), NNOP_ERR_INVALID_ARGUMENT); /* no range */
    assert_non_null(strstr(nnop_exec_last_error(e), "batch_range"));
    nnop_plan_destroy(n.p);
    n.p = NULL;
    assert_int_equal(nnop_exec_run(e, 0, in, out), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_exec_last_error(e), "destroyed"));
    nnop_exec_destroy(e);
    cudaStreamDestroy(s);
    cudaFree(y);
    free(got);
    teardown_net(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_threads_f16_nhwc),
            cmocka_unit_test(test_threads_f16_nhwc_cuda_graph),
            cmocka_unit_test(test_threads_f32_nchw),
            cmocka_unit_test(test_memory_and_callers_scratch),
            cmocka_unit_test(test_callers_stream_and_orphan),
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
