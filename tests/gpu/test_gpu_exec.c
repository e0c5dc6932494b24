/* test_gpu_exec.c: execution contexts and batch ranges on the CUDA backend (issue 49). A small
 * network that takes most of the backend's step kinds (the C=3 stem with its padded input, cuDNN
 * conv chains, max pooling, a depthwise conv, a squeeze-excitation gate with its pooled sums, a
 * residual add, global average pooling, a linear layer on cuBLASLt, softmax) in f16 NHWC and
 * f32 NCHW, with and without CUDA-graph replay. Four execution contexts of one plan run on
 * four threads at once, each run bitwise equal to the plan's own quiet run of the same input
 * (a deterministic context: same engines, same sums); then the memory they report, caller's
 * scratch at an odd address, a stream of the caller's, and a context whose plan went first.
 * Batch ranges: one plan for batch 8 runs every batch 1 to 8 within the dtype's tolerance of
 * a plan compiled for that batch (buckets 1, 2, 4, 8 directly, the others through staging),
 * writing nothing past the batch's samples, with the weights of one plain plan; four
 * contexts running random batches at once equal the same batches run alone.
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
    int64_t batch; /* N unless set */
    int range;     /* compile with batch_range */
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
    nnop_tensor_desc xd = nnop_tensor_4d(n->t, n->layout, n->batch ? n->batch : N, C0, HW, HW);
    nnop_compile_options co;
    nnop_pool_params pp;
    nnop_graph *g = NULL;
    nnop_value x, v, block, s;
    nnop_status st;
    seed_next = 100; /* the same weights in every plan */
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
    co.batch_range = n->range;
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

/* A thread's side of a many-context test: its context, its counts, its first error. */
typedef struct worker {
    const net *n;               /* contexts of a plain plan: the net and its quiet runs */
    const void *x;              /* contexts of a range plan: the input and ... */
    const unsigned char *quiet; /* ... each batch's output run alone, RMAX rows */
    nnop_exec *e;
    uint64_t seed;
    int runs, wrong, failed;
    char error[256];
} worker;

/* Each worker on a thread of its own, then: no failed run, no wrong one, every run made. */
static void run_workers(worker *w, void (*fn)(void *))
{
    nnop__thread *th[THREADS];
    int i;
    for (i = 0; i < THREADS; i++)
        assert_int_equal(nnop__thread_start(fn, &w[i], &th[i]), NNOP_OK);
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
}

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
    int i;
    setup_net(&n, t, layout, cuda_graph);
    memset(w, 0, sizeof w);
    for (i = 0; i < THREADS; i++) {
        w[i].n = &n;
        w[i].seed = 7000 + (uint64_t)i;
        assert_int_equal(nnop_exec_create(n.p, &w[i].e), NNOP_OK);
    }
    run_workers(w, worker_main);
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

/* ------------------------------------------------------------------ batch ranges */
enum { RMAX = 8 }; /* buckets 1, 2, 4, 8; batches 3, 5, 6, 7 run padded */

typedef struct range_case {
    nnop_dtype t;
    nnop_layout layout;
    int cuda_graph;
} range_case;

/* A CUDA context of allocator a (NULL: nnop's own), deterministic, and the net's range plan
 * for batch RMAX on it, in *range. */
static void compile_range(net *range, const range_case *rc, const nnop_allocator *a)
{
    nnop_context_options o;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.deterministic = 1;
    o.allocator = a;
    memset(range, 0, sizeof *range);
    range->t = rc->t, range->layout = rc->layout, range->cuda_graph = rc->cuda_graph;
    range->batch = RMAX, range->range = 1;
    assert_int_equal(nnop_context_create(&o, &range->ctx), NNOP_OK);
    assert_int_equal(build(range), NNOP_OK);
}

/* RMAX samples of seeded input in rc's dtype and layout, on the device (cudaFree it). */
static void *device_input(const range_case *rc, uint64_t seed)
{
    nnop_tensor_desc xd = nnop_tensor_4d(rc->t, rc->layout, RMAX, C0, HW, HW);
    void *host = malloc(nnop_tensor_bytes(&xd)), *x = NULL;
    assert_non_null(host);
    nnop_test_fill(rc->t, host, NULL, nnop_tensor_elements(&xd), seed, -1.0f, 1.0f);
    assert_int_equal(cudaMalloc(&x, nnop_tensor_bytes(&xd)), cudaSuccess);
    assert_int_equal(cudaMemcpy(x, host, nnop_tensor_bytes(&xd), cudaMemcpyHostToDevice),
                     cudaSuccess);
    free(host);
    return x;
}

static void destroy_range(net *range)
{
    nnop_plan_destroy(range->p);
    nnop_context_destroy(range->ctx);
}

/* Each batch's reference: a plain plan compiled for it, on the first n samples of x. */
static void plain_runs(const range_case *rc, nnop_context *ctx, const void *x, float *want)
{
    int64_t n;
    for (n = 1; n <= RMAX; n++) {
        net m;
        nnop_tensor_desc yd = nnop_tensor_2d(rc->t, n, CLASSES);
        void *y = NULL;
        const void *in[1] = {x};
        void *out[1];
        unsigned char *host = (unsigned char *)malloc(nnop_tensor_bytes(&yd));
        memset(&m, 0, sizeof m);
        m.t = rc->t, m.layout = rc->layout, m.batch = n, m.ctx = ctx;
        assert_non_null(host);
        assert_int_equal(build(&m), NNOP_OK);
        assert_int_equal(cudaMalloc(&y, nnop_tensor_bytes(&yd)), cudaSuccess);
        out[0] = y;
        assert_int_equal(nnop_plan_execute(m.p, in, out), NNOP_OK);
        assert_int_equal(nnop_context_synchronize(ctx), NNOP_OK);
        assert_int_equal(cudaMemcpy(host, y, nnop_tensor_bytes(&yd), cudaMemcpyDeviceToHost),
                         cudaSuccess);
        assert_int_equal(
                nnop_convert(rc->t, host, NNOP_F32, want + (n - 1) * RMAX * CLASSES, n * CLASSES),
                NNOP_OK);
        cudaFree(y);
        free(host);
        nnop_plan_destroy(m.p);
    }
}

/* Run batch n on e into y (poisoned first, RMAX samples long): n samples within the dtype's
 * tolerance of the plain plan's, the rest untouched. */
static void check_batch(const range_case *rc, nnop_exec *e, const void *x, void *y, int64_t n,
                        const float *want)
{
    nnop_tensor_desc yd = nnop_tensor_2d(rc->t, RMAX, CLASSES);
    size_t bytes = nnop_tensor_bytes(&yd), used = bytes / RMAX * (size_t)n;
    unsigned char *host = (unsigned char *)malloc(bytes);
    const void *in[1] = {x};
    void *out[1] = {y};
    assert_non_null(host);
    assert_int_equal(cudaMemset(y, 0xFF, bytes), cudaSuccess);
    assert_int_equal(nnop_exec_run(e, n, in, out), NNOP_OK);
    assert_int_equal(nnop_exec_synchronize(e), NNOP_OK);
    assert_int_equal(cudaMemcpy(host, y, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    if (!nnop_test_compare(rc->t, host, want + (n - 1) * RMAX * CLASSES, n * CLASSES,
                           nnop_test_rtol(rc->t), nnop_test_rtol(rc->t), "batch range",
                           (uint64_t)n))
        fail_msg("batch %lld differs from a plan compiled for it", (long long)n);
    assert_true(nnop_test_is_poisoned(host + used, bytes - used));
    free(host);
}

static void check_range(const range_case *rc)
{
    nnop_tensor_desc yd = nnop_tensor_2d(rc->t, RMAX, CLASSES);
    float *want = (float *)malloc((size_t)RMAX * RMAX * CLASSES * sizeof *want);
    void *x = device_input(rc, 77), *y = NULL;
    nnop_plan_memory_info pm, fm;
    nnop_exec *e = NULL;
    char text[8192];
    net range, full;
    int64_t n;
    int pass;
    assert_non_null(want);
    assert_int_equal(cudaMalloc(&y, nnop_tensor_bytes(&yd)), cudaSuccess);
    compile_range(&range, rc, NULL);
    plain_runs(rc, range.ctx, x, want);
    assert_true(nnop_plan_describe(range.p, text, sizeof text) < sizeof text);
    if (!strstr(text, "engines for batches 1, 2, 4, 8"))
        fail_msg("the buckets are not all there:\n%s", text);
    /* the weights once: as much as a plain plan of the built batch holds */
    memset(&full, 0, sizeof full);
    full.t = rc->t, full.layout = rc->layout, full.batch = RMAX, full.ctx = range.ctx;
    assert_int_equal(build(&full), NNOP_OK);
    assert_int_equal(nnop_plan_memory(range.p, &pm), NNOP_OK);
    assert_int_equal(nnop_plan_memory(full.p, &fm), NNOP_OK);
    assert_int_equal(pm.weights, fm.weights);
    nnop_plan_destroy(full.p);

    assert_int_equal(nnop_exec_create(range.p, &e), NNOP_OK);
    for (pass = 0; pass < 2; pass++) { /* down, then up: shapes change both ways, graphs replay */
        for (n = RMAX; n >= 1; n--)
            check_batch(rc, e, x, y, n, want);
        for (n = 1; n <= RMAX; n++)
            check_batch(rc, e, x, y, n, want);
    }
    nnop_exec_destroy(e);
    destroy_range(&range);
    cudaFree(x);
    cudaFree(y);
    free(want);
}

static void test_range_f16_nhwc(void **state)
{
    const range_case rc = {NNOP_F16, NNOP_NHWC, 0};
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_range(&rc);
}

static void test_range_f16_nhwc_cuda_graph(void **state)
{
    const range_case rc = {NNOP_F16, NNOP_NHWC, 1};
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_range(&rc);
}

static void test_range_f32_nchw(void **state)
{
    const range_case rc = {NNOP_F32, NNOP_NCHW, 0};
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_range(&rc);
}

/* Four contexts of one range plan on four threads, random batches: each run bitwise equal
 * to the same batch run alone on one context. */
static void range_worker_main(void *arg)
{
    worker *w = (worker *)arg;
    size_t row = (size_t)RMAX * CLASSES * 2;
    unsigned char got[RMAX * CLASSES * 2];
    void *y = NULL;
    int r;
    if (cudaMalloc(&y, row) != cudaSuccess) {
        w->failed = RUNS;
        return;
    }
    for (r = 0; r < RUNS; r++) {
        const void *in[1] = {w->x};
        void *out[1] = {y};
        int64_t n;
        w->seed = w->seed * 6364136223846793005ull + 1442695040888963407ull;
        n = 1 + (int64_t)((w->seed >> 33) % RMAX);
        if (nnop_exec_run(w->e, n, in, out) != NNOP_OK || nnop_exec_synchronize(w->e) != NNOP_OK ||
            cudaMemcpy(got, y, (size_t)n * CLASSES * 2, cudaMemcpyDeviceToHost) != cudaSuccess) {
            snprintf(w->error, sizeof w->error, "%s", nnop_exec_last_error(w->e));
            w->failed++;
            continue;
        }
        w->wrong += memcmp(got, w->quiet + (size_t)(n - 1) * row, (size_t)n * CLASSES * 2) != 0;
        w->runs++;
    }
    cudaFree(y);
}

static void test_range_threads(void **state)
{
    const range_case rc = {NNOP_F16, NNOP_NHWC, 1};
    size_t row = (size_t)RMAX * CLASSES * 2;
    unsigned char *quiet;
    void *x, *y = NULL;
    worker w[THREADS];
    nnop_exec *alone = NULL;
    net range;
    int64_t n;
    int i;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    quiet = (unsigned char *)malloc(row * RMAX); /* after the skip: nothing to leak */
    assert_non_null(quiet);
    compile_range(&range, &rc, NULL);
    x = device_input(&rc, 78);
    assert_int_equal(cudaMalloc(&y, row), cudaSuccess);
    assert_int_equal(nnop_exec_create(range.p, &alone), NNOP_OK);
    for (n = 1; n <= RMAX; n++) {
        const void *in[1] = {x};
        void *out[1] = {y};
        assert_int_equal(nnop_exec_run(alone, n, in, out), NNOP_OK);
        assert_int_equal(nnop_exec_synchronize(alone), NNOP_OK);
        assert_int_equal(cudaMemcpy(quiet + (size_t)(n - 1) * row, y, (size_t)n * CLASSES * 2,
                                    cudaMemcpyDeviceToHost),
                         cudaSuccess);
        assert_true(finite_bytes(NNOP_F16, quiet + (size_t)(n - 1) * row, n * CLASSES));
    }
    nnop_exec_destroy(alone);
    memset(w, 0, sizeof w);
    for (i = 0; i < THREADS; i++) {
        w[i].x = x, w[i].quiet = quiet, w[i].seed = 9000 + (uint64_t)i;
        assert_int_equal(nnop_exec_create(range.p, &w[i].e), NNOP_OK);
    }
    run_workers(w, range_worker_main);
    destroy_range(&range);
    cudaFree(x);
    cudaFree(y);
    free(quiet);
}

/* After a first run of each batch (cuDNN's variant packs for its pointers), runs allocate no
 * device memory: every allocation of nnop's goes through the context's allocator, counted. */
static int device_allocs;

static void *count_alloc(void *user, size_t bytes)
{
    void *p = NULL;
    (void)user;
    device_allocs++;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

static void count_free(void *user, void *p)
{
    (void)user;
    cudaFree(p);
}

static void test_range_runs_allocate_nothing(void **state)
{
    const range_case rc = {NNOP_F16, NNOP_NHWC, 1};
    nnop_tensor_desc yd = nnop_tensor_2d(NNOP_F16, RMAX, CLASSES);
    nnop_allocator counting;
    void *x, *y = NULL;
    const void *in[1];
    void *out[1];
    nnop_exec *e = NULL;
    net range;
    int64_t n;
    int pass, after_warmup = 0;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    memset(&counting, 0, sizeof counting);
    counting.device_alloc = count_alloc;
    counting.device_free = count_free;
    compile_range(&range, &rc, &counting);
    assert_true(device_allocs > 0); /* the allocator is the one nnop uses */
    x = device_input(&rc, 79);
    assert_int_equal(cudaMalloc(&y, nnop_tensor_bytes(&yd)), cudaSuccess);
    assert_int_equal(nnop_exec_create(range.p, &e), NNOP_OK);
    in[0] = x;
    out[0] = y;
    for (pass = 0; pass < 3; pass++) {
        for (n = 1; n <= RMAX; n++)
            assert_int_equal(nnop_exec_run(e, n, in, out), NNOP_OK);
        assert_int_equal(nnop_exec_synchronize(e), NNOP_OK);
        if (pass == 0)
            after_warmup = device_allocs;
    }
    assert_int_equal(device_allocs, after_warmup);
    nnop_exec_destroy(e);
    destroy_range(&range);
    cudaFree(x);
    cudaFree(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_threads_f16_nhwc),
            cmocka_unit_test(test_threads_f16_nhwc_cuda_graph),
            cmocka_unit_test(test_threads_f32_nchw),
            cmocka_unit_test(test_memory_and_callers_scratch),
            cmocka_unit_test(test_callers_stream_and_orphan),
            cmocka_unit_test(test_range_f16_nhwc),
            cmocka_unit_test(test_range_f16_nhwc_cuda_graph),
            cmocka_unit_test(test_range_f32_nchw),
            cmocka_unit_test(test_range_threads),
            cmocka_unit_test(test_range_runs_allocate_nothing),
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
