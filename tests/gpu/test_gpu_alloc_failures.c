/* test_gpu_alloc_failures.c: every host allocation nnop's CUDA backend makes while building,
 * compiling, running and destroying a small network (cuDNN fused convs, own pool/reduction/
 * softmax kernels, a cuBLASLt linear layer) is failed in turn, each run on a context of its
 * own: each run must end with NNOP_ERR_OUT_OF_MEMORY and a message saying so, or succeed
 * through a fallback with the right result; the output stays untouched on failure, nothing
 * nnop allocated outlives its context, and a run afterwards works. Only allocations called from
 * nnop's own code fail (cuDNN's and CUDA's are left alone: tests/common/alloc_inject.h, nnop_only).
 */
#include <time.h>

#include "gpu_harness.h"

#include "alloc_inject.h"
#include "cuda_alloc_inject.h"

#ifdef NNOP_CAN_INJECT
/* A small residual network, fp16 NHWC: conv-bn-relu, max pool, conv-bias + residual add +
 * relu, global average pool, flatten, linear + bias, softmax. Its constants are made before
 * any allocation fails, and building it asserts nothing: its status is the graph's. */
enum { N = 2, C = 16, HW = 12, K = 32, CLASSES = 10 };

typedef struct net_data {
    void *w1, *gamma, *beta, *mean, *var, *w2, *b2, *fc, *fcb; /* fp16 host data */
} net_data;

static void *half_data(int64_t n, uint64_t seed, float lo, float hi)
{
    void *p = malloc((size_t)n * 2);
    assert_non_null(p);
    nnop_test_fill(NNOP_F16, p, NULL, n, seed, lo, hi);
    return p;
}

static void make_data(net_data *d)
{
    d->w1 = half_data(K * C * 9, 21, -0.08f, 0.08f);
    d->gamma = half_data(K, 22, 0.5f, 1.5f);
    d->beta = half_data(K, 23, -0.5f, 0.5f);
    d->mean = half_data(K, 24, -0.5f, 0.5f);
    d->var = half_data(K, 25, 0.5f, 1.5f);
    d->w2 = half_data(K * K * 9, 26, -0.06f, 0.06f);
    d->b2 = half_data(K, 27, -0.5f, 0.5f);
    d->fc = half_data(CLASSES * K, 28, -0.5f, 0.5f);
    d->fcb = half_data(CLASSES, 29, -0.5f, 0.5f);
}

static void free_data(net_data *d)
{
    free(d->w1), free(d->gamma), free(d->beta), free(d->mean), free(d->var);
    free(d->w2), free(d->b2), free(d->fc), free(d->fcb);
}

static void build(nnop_graph *g, const void *arg)
{
    const net_data *d = (const net_data *)arg;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, N, C, HW, HW);
    nnop_tensor_desc w1d = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, K, C, 3, 3);
    nnop_tensor_desc w2d = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, K, K, 3, 3);
    nnop_tensor_desc kd = nnop_tensor_1d(NNOP_F16, K), cd = nnop_tensor_1d(NNOP_F16, CLASSES);
    nnop_tensor_desc fd = nnop_tensor_2d(NNOP_F16, CLASSES, K);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_pool_params pp = {{3, 3}, {2, 2}, {1, 1}, 0, {0, 0}};
    nnop_value y, skip;
    y = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w1", &w1d, d->w1), &p);
    y = nnop_batchnorm(g, y, nnop_constant(g, "g", &kd, d->gamma),
                       nnop_constant(g, "b", &kd, d->beta), nnop_constant(g, "m", &kd, d->mean),
                       nnop_constant(g, "v", &kd, d->var), 1e-5f);
    skip = nnop_pool(g, nnop_act(g, y, NNOP_ACT_RELU, 0.0f), NNOP_POOL_MAX, &pp);
    y = nnop_conv(g, skip, nnop_constant(g, "w2", &w2d, d->w2), &p);
    y = nnop_add(g, nnop_bias(g, y, nnop_constant(g, "b2", &kd, d->b2)), skip);
    y = nnop_flatten(g, nnop_global_avg_pool(g, nnop_act(g, y, NNOP_ACT_RELU, 0.0f)));
    y = nnop_linear(g, y, nnop_constant(g, "fc", &fd, d->fc), nnop_constant(g, "fcb", &cd, d->fcb));
    (void)nnop_output(g, nnop_softmax(g, y), "probs");
}

typedef struct gpu_run {
    nnop_context *ctx; /* holds the buffers; each run makes a context of its own */
    const net_data *data;
    void *x, *y; /* device buffers */
    size_t xb, yb;
    int warm; /* runs read a cache file: a copy of pristine at cache */
    char cache[256], pristine[256];
} gpu_run;

/* dst := src (whole file); asserts. */
static void copy_file(const char *src, const char *dst)
{
    size_t len = 0;
    unsigned char *data = nnop_test_read_file(src, &len);
    FILE *f = fopen(dst, "wb");
    assert_non_null(data);
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(data);
}

/* A whole run on a fresh CUDA context (so everything it allocates must be freed by its end). */
static nnop_status once(gpu_run *r, char *error, size_t len)
{
    nnop_context_options o;
    const void *in[1];
    void *out[1];
    in[0] = r->x, out[0] = r->y;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.cache_path = r->warm ? r->cache : NULL;
    return nnop_test_whole_run(&o, build, r->data, in, out, error, len);
}

/* Every problem is printed; the test fails after trying all allocations, so one run shows
 * them all. */
static long report(long k, long total, const char *what, nnop_status st, const char *error)
{
    print_error("allocation %ld of %ld failed: %s (%s: '%s')\n", k, total, what,
                nnop_status_string(st), error);
    return 1;
}

/* A warm run starts from the pristine cache file (a run that fell back may have rewritten it). */
static void fresh_cache(gpu_run *r)
{
    if (r->warm)
        copy_file(r->pristine, r->cache);
}

static void poison_output(gpu_run *r, void *host)
{
    nnop_test_poison(host, r->yb);
    assert_int_equal(nnop_copy_in(r->ctx, r->y, host, r->yb), NNOP_OK);
}

/* Host (malloc and friends, nnop's own calls) or device (cudaMalloc) failures. */
typedef struct injector {
    const char *what;
    void (*arm)(long fail_at);
    void (*disarm)(void);
    const long *count, *failed, *live;
    long min_total; /* a run must make at least this many, or the test means little */
} injector;

static void host_arm(long fail_at)
{
    arm(fail_at, 1);
}

static const injector host_failures = {"host", host_arm, disarm, &count_, &failed_, &live_, 50};
static const injector device_failures = {"device",     dev_arm,    dev_disarm, &dev_count_,
                                         &dev_failed_, &dev_live_, 2};

/* Each run cold (no cache file), or warm: plans from a cache file, rebuilt by the prefetch
 * threads (their allocations fail too) and the compile. */
static void every_allocation_fails_cleanly(int warm, const injector *inj)
{
    nnop_context_options o;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, N, C, HW, HW);
    net_data data;
    gpu_run r;
    void *hx, *want, *got;
    char error[1024];
    long k, total, oom = 0, fallback = 0, problems = 0;
    int64_t n_out = N * CLASSES;
    float *want_f32;
    memset(&r, 0, sizeof r);
    make_data(&data);
    r.data = &data;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    r.ctx = h_gpu_context(&o);
    r.xb = nnop_tensor_bytes(&xd);
    r.yb = (size_t)n_out * 2;
    hx = malloc(r.xb), want = malloc(r.yb), got = malloc(r.yb);
    assert_true(hx && want && got);
    nnop_test_fill(NNOP_F16, hx, NULL, nnop_tensor_elements(&xd), 91, -1.0f, 1.0f);
    assert_int_equal(nnop_malloc(r.ctx, r.xb, &r.x), NNOP_OK);
    assert_int_equal(nnop_malloc(r.ctx, r.yb, &r.y), NNOP_OK);
    assert_int_equal(nnop_copy_in(r.ctx, r.x, hx, r.xb), NNOP_OK);
    r.warm = warm;
    snprintf(r.cache, sizeof r.cache, "/tmp/nnop_alloc_cache_%ld.bin", (long)time(NULL));
    snprintf(r.pristine, sizeof r.pristine, "/tmp/nnop_alloc_cache_%ld.orig", (long)time(NULL));
    remove(r.cache);
    assert_int_equal(once(&r, error, sizeof error), NNOP_OK); /* cuDNN's kernels; the file */
    if (warm)
        copy_file(r.cache, r.pristine);
    fresh_cache(&r);
    inj->arm(0);
    assert_int_equal(once(&r, error, sizeof error), NNOP_OK);
    inj->disarm();
    total = *inj->count;
    assert_int_equal(*inj->live, 0);
    assert_true(total >= inj->min_total);
    assert_int_equal(nnop_copy_out(r.ctx, want, r.y, r.yb), NNOP_OK);
    want_f32 = (float *)malloc((size_t)n_out * sizeof(float));
    assert_non_null(want_f32);
    assert_int_equal(nnop_convert(NNOP_F16, want, NNOP_F32, want_f32, n_out), NNOP_OK);
    for (k = 1; k <= total; k++) {
        nnop_status st;
        poison_output(&r, got);
        fresh_cache(&r);
        inj->arm(k);
        st = once(&r, error, sizeof error);
        inj->disarm();
        if (*inj->failed != 1) /* the path changed: the counts below would mean nothing */
            fail_msg("allocation %ld of %ld: the run made only %ld", k, total, *inj->count);
        if (*inj->live != 0 || overflow_ != 0)
            problems += report(k, total, "leaked allocations", st, error);
        assert_int_equal(nnop_copy_out(r.ctx, got, r.y, r.yb), NNOP_OK);
        if (st == NNOP_OK) { /* a fallback (another engine, a split) took over */
            fallback++;
            if (!nnop_test_compare(NNOP_F16, got, want_f32, n_out, nnop_test_rtol(NNOP_F16),
                                   nnop_test_rtol(NNOP_F16), "fallback run", (uint64_t)k))
                problems += report(k, total, "a fallback gave another result", st, error);
            continue;
        }
        oom++;
        if (st != NNOP_ERR_OUT_OF_MEMORY ||
            !(strstr(error, "out of memory") || strstr(error, "allocate")))
            problems += report(k, total, "wrong status or message", st, error);
        if (!nnop_test_is_poisoned(got, r.yb))
            problems += report(k, total, "the output was written", st, error);
    }
    print_message("%s, %s: %ld nnop allocations failed in turn: %ld runs out of memory, %ld "
                  "through a fallback, %ld problems\n",
                  inj->what, warm ? "warm" : "cold", total, oom, fallback, problems);
    assert_int_equal(problems, 0);
    fresh_cache(&r);
    assert_int_equal(once(&r, error, sizeof error), NNOP_OK); /* nothing is left broken */
    assert_int_equal(nnop_copy_out(r.ctx, got, r.y, r.yb), NNOP_OK);
    assert_memory_equal(got, want, r.yb);
    nnop_free(r.ctx, r.x);
    nnop_free(r.ctx, r.y);
    nnop_context_destroy(r.ctx);
    free(hx), free(want), free(got), free(want_f32);
    free_data(&data);
    remove(r.cache);
    remove(r.pristine);
}

#define HOST_FAILURES      (&host_failures)
#define DEVICE_FAILURES    (&device_failures)
#define RUN_ALL(warm, inj) every_allocation_fails_cleanly((warm), (inj))
#else
#define RUN_ALL(warm, inj) (void)0
#endif /* NNOP_CAN_INJECT */

static void test_gpu_every_allocation_failure_is_clean_cold(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    SKIP_WITHOUT_INJECTION();
    RUN_ALL(0, HOST_FAILURES);
}

static void test_gpu_every_allocation_failure_is_clean_warm(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    SKIP_WITHOUT_INJECTION();
    RUN_ALL(1, HOST_FAILURES);
}

static void test_gpu_every_device_allocation_failure_is_clean_cold(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    SKIP_WITHOUT_INJECTION();
    RUN_ALL(0, DEVICE_FAILURES);
}

static void test_gpu_every_device_allocation_failure_is_clean_warm(void **state)
{
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    SKIP_WITHOUT_INJECTION();
    RUN_ALL(1, DEVICE_FAILURES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_gpu_every_allocation_failure_is_clean_cold),
            cmocka_unit_test(test_gpu_every_allocation_failure_is_clean_warm),
            cmocka_unit_test(test_gpu_every_device_allocation_failure_is_clean_cold),
            cmocka_unit_test(test_gpu_every_device_allocation_failure_is_clean_warm),
    };
    return nnop_test_exit_code(cmocka_run_group_tests_name("gpu_alloc_failures", tests, NULL, NULL),
                               sizeof tests / sizeof tests[0]);
}
