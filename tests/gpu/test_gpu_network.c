/* test_gpu_network.c: whole graphs on the GPU against the CPU reference: a small residual
 * network (conv-bn-relu, max pool, conv-bias + residual add + relu, global average pool,
 * flatten, linear, softmax) in several dtypes/layouts and with CUDA graph replay; the fusion
 * check (fp16 NHWC conv+bias+relu is exactly one partition); the one-call entry points;
 * standalone pointwise and pooling partitions; bad bindings. */
#include <time.h>

#include "gpu_harness.h"

typedef struct net_case {
    nnop_dtype dt;
    nnop_layout lay;
    int64_t n, c, hw, k, classes;
} net_case;

static void build_net(nnop_graph *g, const void *arg)
{
    const net_case *nc = (const net_case *)arg;
    nnop_tensor_desc xd = nnop_tensor_4d(nc->dt, nc->lay, nc->n, nc->c, nc->hw, nc->hw);
    nnop_tensor_desc w1d = nnop_tensor_4d(nc->dt, nc->lay, nc->k, nc->c, 3, 3);
    nnop_tensor_desc w2d = nnop_tensor_4d(nc->dt, nc->lay, nc->k, nc->k, 3, 3);
    nnop_tensor_desc kd = nnop_tensor_1d(nc->dt, nc->k), cd = nnop_tensor_1d(nc->dt, nc->classes);
    nnop_tensor_desc fd = nnop_tensor_2d(nc->dt, nc->classes, nc->k);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_pool_params pp = {{3, 3}, {2, 2}, {1, 1}, 0, {0, 0}};
    float s1 = 1.0f / sqrtf((float)(nc->c * 9)), s2 = 1.0f / sqrtf((float)(nc->k * 9));
    float s3 = 1.0f / sqrtf((float)nc->k);
    nnop_value x = nnop_input(g, "x", &xd), y, skip;
    y = nnop_conv(g, x, h_const(g, "w1", &w1d, 21, -s1, s1), &p);
    y = nnop_batchnorm(g, y, h_const(g, "g", &kd, 22, 0.5f, 1.5f),
                       h_const(g, "b", &kd, 23, -0.5f, 0.5f), h_const(g, "m", &kd, 24, -0.5f, 0.5f),
                       h_const(g, "v", &kd, 25, 0.5f, 1.5f), 1e-5f);
    y = nnop_act(g, y, NNOP_ACT_RELU, 0.0f);
    skip = nnop_pool(g, y, NNOP_POOL_MAX, &pp);
    y = nnop_conv(g, skip, h_const(g, "w2", &w2d, 26, -s2, s2), &p);
    y = nnop_bias(g, y, h_const(g, "b2", &kd, 27, -0.5f, 0.5f));
    y = nnop_add(g, y, skip);
    y = nnop_act(g, y, NNOP_ACT_RELU, 0.0f);
    y = nnop_global_avg_pool(g, y);
    y = nnop_flatten(g, y);
    y = nnop_linear(g, y, h_const(g, "fc", &fd, 28, -4 * s3, 4 * s3),
                    h_const(g, "fcb", &cd, 29, -0.5f, 0.5f));
    y = nnop_softmax(g, y);
    assert_int_equal(nnop_output(g, y, "probs"), NNOP_OK);
}

static void check_net(const net_case *nc, int cuda_graph, nnop_engine_policy policy)
{
    h_run r;
    h_run_init(&r, nc->dt, (double)(nc->k * 9));
    r.copts.cuda_graph = cuda_graph;
    r.gpu_opts.policy = policy;
    if (!h_run_compare(&r, build_net, nc)) {
        if (r.gpu_compile_status != NNOP_OK)
            fail_msg("GPU compile: %s: %s", nnop_status_string(r.gpu_compile_status), r.gpu_error);
        fail_msg("%s", "network: GPU result differs from the CPU reference");
    }
    print_message("%s", r.describe);
    assert_non_null(strstr(r.describe, "conv+batchnorm+act"));
    assert_non_null(strstr(r.describe, "conv+bias+add+act"));
}

static void test_gpu_network_fp16_nhwc_matches_ref(void **state)
{
    net_case nc = {NNOP_F16, NNOP_NHWC, 4, 8, 16, 16, 10};
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_net(&nc, 0, NNOP_POLICY_PREFER_PRECOMPILED);
}

static void test_gpu_network_fp32_nchw_matches_ref(void **state)
{
    net_case nc = {NNOP_F32, NNOP_NCHW, 2, 8, 15, 16, 10};
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_net(&nc, 0, NNOP_POLICY_PREFER_PRECOMPILED);
}

static void test_gpu_network_bf16_nhwc_matches_ref(void **state)
{
    net_case nc = {NNOP_BF16, NNOP_NHWC, 2, 8, 16, 16, 10};
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_net(&nc, 0, NNOP_POLICY_PREFER_PRECOMPILED);
}

static void test_gpu_network_cuda_graph_matches_ref(void **state)
{
    net_case nc = {NNOP_F16, NNOP_NHWC, 4, 8, 16, 16, 10};
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_net(&nc, 1, NNOP_POLICY_PREFER_PRECOMPILED);
}

static void test_gpu_network_precompiled_only_matches_ref(void **state)
{
    net_case nc = {NNOP_F16, NNOP_NHWC, 4, 8, 16, 16, 10};
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    check_net(&nc, 0, NNOP_POLICY_PRECOMPILED_ONLY);
}

/* A CUDA-graph plan keeps one graph per pointer set (up to 4): six sets in turn, twice,
 * each output poisoned first and compared with the CPU's for its own input (a graph replayed
 * with another set's pointers would write the wrong buffer or read the wrong input). */
#define PTR_SETS 6
static void test_gpu_cuda_graph_pointer_sets_match_ref(void **state)
{
    net_case nc = {NNOP_F16, NNOP_NHWC, 2, 8, 13, 16, 10};
    h_run r;
    h_pair hp;
    nnop_tensor_desc xd, yd;
    size_t xb, yb;
    int64_t ny;
    void *hx[PTR_SETS], *hy[PTR_SETS], *dx[PTR_SETS], *dy[PTR_SETS], *got;
    float *want;
    int k, round;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, nc.dt, (double)(nc.k * 9));
    r.copts.cuda_graph = 1;
    assert_true(h_compile(&r, &hp, build_net, &nc));
    assert_int_equal(nnop_plan_input_desc(hp.pc, 0, &xd), NNOP_OK);
    assert_int_equal(nnop_plan_output_desc(hp.pc, 0, &yd), NNOP_OK);
    xb = nnop_tensor_bytes(&xd), yb = nnop_tensor_bytes(&yd), ny = nnop_tensor_elements(&yd);
    want = (float *)malloc((size_t)ny * sizeof *want);
    got = malloc(yb);
    assert_true(want && got);
    for (k = 0; k < PTR_SETS; k++) {
        hx[k] = malloc(xb), hy[k] = malloc(yb);
        assert_true(hx[k] && hy[k]);
        nnop_test_fill(xd.dtype, hx[k], NULL, nnop_tensor_elements(&xd), 500 + (uint64_t)k, -1, 1);
        assert_int_equal(nnop_plan_execute(hp.pc, (const void *const *)&hx[k], &hy[k]), NNOP_OK);
        assert_int_equal(nnop_malloc(hp.gpu, xb, &dx[k]), NNOP_OK);
        assert_int_equal(nnop_malloc(hp.gpu, yb, &dy[k]), NNOP_OK);
        assert_int_equal(nnop_copy_in(hp.gpu, dx[k], hx[k], xb), NNOP_OK);
    }
    for (round = 0; round < 2; round++)
        for (k = 0; k < PTR_SETS; k++) {
            nnop_test_poison(got, yb);
            assert_int_equal(nnop_copy_in(hp.gpu, dy[k], got, yb), NNOP_OK);
            assert_int_equal(nnop_plan_execute(hp.pg, (const void *const *)&dx[k], &dy[k]),
                             NNOP_OK);
            assert_int_equal(nnop_copy_out(hp.gpu, got, dy[k], yb), NNOP_OK);
            assert_int_equal(nnop_convert(yd.dtype, hy[k], NNOP_F32, want, ny), NNOP_OK);
            if (!nnop_test_compare(yd.dtype, got, want, ny, r.rtol, r.atol, "pointer set",
                                   (uint64_t)k))
                fail_msg("round %d, pointer set %d: GPU result differs from the CPU", round, k);
        }
    for (k = 0; k < PTR_SETS; k++) {
        nnop_free(hp.gpu, dx[k]), nnop_free(hp.gpu, dy[k]);
        free(hx[k]), free(hy[k]);
    }
    free(want), free(got);
    h_release(&hp);
}

static void build_cbr(nnop_graph *g, const void *arg)
{
    const nnop_dtype *dt = (const nnop_dtype *)arg;
    nnop_tensor_desc xd = nnop_tensor_4d(*dt, NNOP_NHWC, 2, 32, 14, 14);
    nnop_tensor_desc wd = nnop_tensor_4d(*dt, NNOP_NHWC, 64, 32, 3, 3);
    nnop_tensor_desc kd = nnop_tensor_1d(*dt, 64);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    float s = 1.0f / sqrtf(32.0f * 9.0f);
    nnop_value y = nnop_conv(g, nnop_input(g, "x", &xd), h_const(g, "w", &wd, 31, -s, s), &p);
    y = nnop_bias(g, y, h_const(g, "b", &kd, 32, -0.5f, 0.5f));
    y = nnop_act(g, y, NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

/* The fusion actually happens: one partition of three nodes on a precompiled engine that is
 * not the slow engine 0. Fails if the partition was split. */
static void test_gpu_fusion_fp16_nhwc_conv_bias_relu_is_one_partition(void **state)
{
    nnop_dtype dt = NNOP_F16;
    h_run r;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, dt, 32.0 * 9.0);
    assert_true(h_run_compare(&r, build_cbr, &dt));
    print_message("%s", r.describe);
    assert_int_equal(r.n_parts, 1);
    assert_non_null(strstr(r.describe, "conv+bias+act [cudnn eng"));
    assert_non_null(strstr(r.describe, "(fused)"));
    assert_null(strstr(r.describe, "split"));
    assert_null(strstr(r.describe, "eng0 "));
}

static void build_pointwise(nnop_graph *g, const void *arg)
{
    const nnop_layout *lay = (const nnop_layout *)arg;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, *lay, 2, 12, 9, 7);
    nnop_tensor_desc kd = nnop_tensor_1d(NNOP_F16, 12);
    nnop_pool_params pp = {{2, 2}, {2, 2}, {1, 1}, 1, {0, 0}};
    nnop_value a = nnop_input(g, "a", &xd), b = nnop_input(g, "b", &xd), y;
    y = nnop_add(g, a, b); /* standalone epilogue chain: add, bias, silu */
    y = nnop_bias(g, y, h_const(g, "bias", &kd, 41, -0.5f, 0.5f));
    y = nnop_act(g, y, NNOP_ACT_SILU, 0.0f);
    y = nnop_pool(g, y, NNOP_POOL_AVG, &pp);
    y = nnop_softmax(g, y);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

static void test_gpu_pointwise_pool_softmax_nhwc_matches_ref(void **state)
{
    nnop_layout lay = NNOP_NHWC;
    h_run r;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, NNOP_F16, 1.0);
    assert_true(h_run_compare(&r, build_pointwise, &lay));
    print_message("%s", r.describe);
}

static void test_gpu_pointwise_pool_softmax_nchw_matches_ref(void **state)
{
    nnop_layout lay = NNOP_NCHW;
    h_run r;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, NNOP_F16, 1.0);
    assert_true(h_run_compare(&r, build_pointwise, &lay));
}

/* nnop_conv_bias_relu on device pointers equals the same call on the CPU backend; a second
 * call reuses the cached plan. */
static void test_gpu_conv_bias_relu_oneshot_matches_ref(void **state)
{
    nnop_context *cpu = NULL, *gpu = NULL;
    nnop_context_options o;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 16, 10, 10);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 32, 16, 3, 3);
    nnop_tensor_desc yd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 32, 10, 10);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    size_t xb = nnop_tensor_bytes(&xd), wb = nnop_tensor_bytes(&wd), yb = nnop_tensor_bytes(&yd);
    size_t bb = 32 * 2;
    void *hx, *hw, *hb, *hy, *got;
    void *dx, *dw, *db, *dy;
    float *ref, *ref2;
    int iter;
    (void)state;
    NNOP_TEST_REQUIRE_GPU(); /* before allocating: a skip returns through longjmp */
    hx = malloc(xb), hw = malloc(wb), hb = malloc(bb), hy = malloc(yb), got = malloc(yb);
    ref = (float *)malloc(yb / 2 * sizeof(float));
    ref2 = (float *)malloc(yb / 2 * sizeof(float));
    cpu = nnop_test_cpu_context();
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    gpu = h_gpu_context(&o);
    nnop_test_fill(NNOP_F16, hx, NULL, nnop_tensor_elements(&xd), 51, -1.0f, 1.0f);
    nnop_test_fill(NNOP_F16, hw, NULL, nnop_tensor_elements(&wd), 52, -0.08f, 0.08f);
    nnop_test_fill(NNOP_F16, hb, NULL, 32, 53, -0.5f, 0.5f);
    assert_int_equal(nnop_conv_bias_relu(cpu, &xd, hx, &wd, hw, hb, &p, &yd, hy), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F16, hy, NNOP_F32, ref, nnop_tensor_elements(&yd)), NNOP_OK);
    assert_int_equal(
            nnop_conv_bias_act(cpu, &xd, hx, &wd, hw, hb, &p, NNOP_ACT_SILU, 0.0f, &yd, hy),
            NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F16, hy, NNOP_F32, ref2, nnop_tensor_elements(&yd)),
                     NNOP_OK);
    assert_int_equal(nnop_malloc(gpu, xb, &dx), NNOP_OK);
    assert_int_equal(nnop_malloc(gpu, wb, &dw), NNOP_OK);
    assert_int_equal(nnop_malloc(gpu, bb, &db), NNOP_OK);
    assert_int_equal(nnop_malloc(gpu, yb, &dy), NNOP_OK);
    assert_int_equal(nnop_copy_in(gpu, dx, hx, xb), NNOP_OK);
    assert_int_equal(nnop_copy_in(gpu, dw, hw, wb), NNOP_OK);
    assert_int_equal(nnop_copy_in(gpu, db, hb, bb), NNOP_OK);
    for (iter = 0; iter < 4; iter++) { /* relu twice (cached plan), then silu twice */
        nnop_status st;
        nnop_test_poison(got, yb);
        assert_int_equal(nnop_copy_in(gpu, dy, got, yb), NNOP_OK);
        st = iter < 2 ? nnop_conv_bias_relu(gpu, &xd, dx, &wd, dw, db, &p, &yd, dy)
                      : nnop_conv_bias_act(gpu, &xd, dx, &wd, dw, db, &p, NNOP_ACT_SILU, 0.0f, &yd,
                                           dy);
        if (st != NNOP_OK)
            fail_msg("one-call %d: %s", iter, nnop_context_last_error(gpu));
        assert_int_equal(nnop_copy_out(gpu, got, dy, yb), NNOP_OK);
        assert_true(nnop_test_compare(NNOP_F16, got, iter < 2 ? ref : ref2,
                                      nnop_tensor_elements(&yd), 2e-3, 2e-3, "oneshot", 51));
    }
    nnop_free(gpu, dx);
    nnop_free(gpu, dw);
    nnop_free(gpu, db);
    nnop_free(gpu, dy);
    free(hx), free(hw), free(hb), free(hy), free(got), free(ref), free(ref2);
    nnop_context_destroy(gpu);
    nnop_context_destroy(cpu);
}

/* Compile conv+bias+gelu (runtime-compiled) in a context with a cache file, then again in a
 * fresh context reading that file: the second plan comes from the cached plan JSON and
 * still matches the CPU reference. */
static void build_cbg(nnop_graph *g, const void *arg)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 16, 12, 12);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 32, 16, 3, 3);
    nnop_tensor_desc kd = nnop_tensor_1d(NNOP_F16, 32);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    float s = 1.0f / 12.0f;
    nnop_value y = nnop_conv(g, nnop_input(g, "x", &xd), h_const(g, "w", &wd, 61, -s, s), &p);
    (void)arg;
    y = nnop_bias(g, y, h_const(g, "b", &kd, 62, -0.5f, 0.5f));
    y = nnop_act(g, y, NNOP_ACT_GELU, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

static void test_gpu_plan_cache_file_reuses_plan(void **state)
{
    char path[256];
    h_run r;
    int i;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    snprintf(path, sizeof path, "/tmp/nnop_gpu_cache_%ld.bin", (long)time(NULL));
    remove(path);
    for (i = 0; i < 2; i++) {
        h_run_init(&r, NNOP_F16, 16.0 * 9.0);
        r.gpu_opts.cache_path = path;
        if (!h_run_compare(&r, build_cbg, NULL))
            fail_msg("run %d: %s %s", i, nnop_status_string(r.gpu_compile_status), r.gpu_error);
        print_message("run %d: %s", i, r.describe);
        assert_true((strstr(r.describe, "from cache") != NULL) == (i == 1));
    }
    remove(path);
}

/* Three conv+bias+relu layers, the last two identical (one plan shared by both). */
static void build_cbr3(nnop_graph *g, const void *arg)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 32, 14, 14);
    nnop_tensor_desc w1d = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 64, 32, 3, 3);
    nnop_tensor_desc w2d = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 64, 64, 3, 3);
    nnop_tensor_desc kd = nnop_tensor_1d(NNOP_F16, 64);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    float s1 = 1.0f / sqrtf(32.0f * 9.0f), s2 = 1.0f / sqrtf(64.0f * 9.0f);
    nnop_value y = nnop_conv(g, nnop_input(g, "x", &xd), h_const(g, "w1", &w1d, 71, -s1, s1), &p);
    int i;
    (void)arg;
    y = nnop_act(g, nnop_bias(g, y, h_const(g, "b1", &kd, 72, -0.5f, 0.5f)), NNOP_ACT_RELU, 0.0f);
    for (i = 0; i < 2; i++) {
        y = nnop_conv(g, y, h_const(g, i ? "w3" : "w2", &w2d, 73 + 2 * (uint64_t)i, -s2, s2), &p);
        y = nnop_bias(g, y, h_const(g, i ? "b3" : "b2", &kd, 74 + 2 * (uint64_t)i, -0.5f, 0.5f));
        y = nnop_act(g, y, NNOP_ACT_RELU, 0.0f);
    }
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (text = strstr(text, what); text; text = strstr(text + 1, what))
        n++;
    return n;
}

/* A warm compile with the cached plans rebuilt by the context's prefetch threads
 * (src/cuda/prefetch.c), deserialized on threads at compile (src/cuda/deserialize.c) or on
 * the compiling thread alone still takes every plan from the cache, shares the twin's, and
 * matches the reference. */
static void test_gpu_plan_cache_parallel_deserialize(void **state)
{
    /* per run: load_threads, prefetch, plans taken from the prefetch */
    static const int runs[4][3] = {{1, 0, 0}, {2, 0, 3}, {2, -1, 0}, {1, 0, 0}};
    char path[256];
    h_run r;
    int i;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    snprintf(path, sizeof path, "/tmp/nnop_gpu_cache_par_%ld.bin", (long)time(NULL));
    remove(path);
    for (i = 0; i < 4; i++) { /* cold, then warm: prefetched, 2 threads at compile, 1 */
        h_run_init(&r, NNOP_F16, 64.0 * 9.0);
        r.gpu_opts.cache_path = path;
        r.gpu_opts.load_threads = runs[i][0];
        r.gpu_opts.prefetch = runs[i][1];
        if (!h_run_compare(&r, build_cbr3, NULL))
            fail_msg("run %d: %s %s", i, nnop_status_string(r.gpu_compile_status), r.gpu_error);
        print_message("run %d: %s", i, r.describe);
        assert_int_equal(count(r.describe, "plan from cache"), i ? 3 : 0);
        assert_int_equal(count(r.describe, "prefetched"), runs[i][2]);
    }
    remove(path);
}

/* A cache file holding two graphs' plans: a warm compile of one takes its plans from the
 * prefetch (waiting only for those, or rebuilding them itself) and matches the reference. */
static void test_gpu_prefetch_with_other_graphs_in_the_file(void **state)
{
    char path[256];
    h_run r;
    int i;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    snprintf(path, sizeof path, "/tmp/nnop_gpu_cache_two_%ld.bin", (long)time(NULL));
    remove(path);
    for (i = 0; i < 3; i++) { /* cold A, cold B (same file), warm B */
        h_build_fn build = i == 0 ? build_cbr3 : build_cbg;
        h_run_init(&r, NNOP_F16, 64.0 * 9.0);
        r.gpu_opts.cache_path = path;
        if (!h_run_compare(&r, build, NULL))
            fail_msg("run %d: %s %s", i, nnop_status_string(r.gpu_compile_status), r.gpu_error);
        print_message("run %d: %s", i, r.describe);
        assert_int_equal(count(r.describe, "prefetched") > 0, i == 2);
    }
    remove(path);
}

/* fp32 NHWC conv + leaky ReLU: a nonzero slope takes the graph out of the precompiled
 * ConvBiasAct family, so under the precompiled-only policy cuDNN has no engine for the fused
 * chain and the activation is split off to the own epilogue kernel. */
static void build_conv_leaky(nnop_graph *g, const void *arg)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 2, 16, 10, 10);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 16, 16, 3, 3);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_value y;
    (void)arg;
    y = nnop_conv(g, nnop_input(g, "x", &xd), h_const(g, "w", &wd, 81, -0.125f, 0.125f), &p);
    assert_int_equal(nnop_output(g, nnop_act(g, y, NNOP_ACT_LEAKY_RELU, 0.1f), "y"), NNOP_OK);
}

/* A search that found no engine is remembered by the cache file: the next process takes the
 * fallback without searching (the reason says so) and still matches the reference. */
static void test_gpu_plan_cache_remembers_no_engine(void **state)
{
    char path[256];
    h_run r;
    int i;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    snprintf(path, sizeof path, "/tmp/nnop_gpu_cache_none_%ld.bin", (long)time(NULL));
    remove(path);
    for (i = 0; i < 2; i++) {
        h_run_init(&r, NNOP_F32, 144.0);
        r.gpu_opts.cache_path = path;
        r.gpu_opts.policy = NNOP_POLICY_PRECOMPILED_ONLY;
        if (!h_run_compare(&r, build_conv_leaky, NULL))
            fail_msg("run %d: %s %s", i, nnop_status_string(r.gpu_compile_status), r.gpu_error);
        print_message("run %d: %s", i, r.describe);
        assert_non_null(strstr(r.describe, "split, cuDNN refused the longer chain"));
        assert_int_equal(strstr(r.describe, "remembered by the plan cache") != NULL, i == 1);
    }
    remove(path);
}

static void build_cbr32(nnop_graph *g, const void *arg)
{
    nnop_dtype dt = NNOP_F32;
    (void)arg;
    build_cbr(g, &dt);
}

static void test_gpu_deterministic_policy_matches_ref(void **state)
{
    h_run r;
    nnop_dtype dt = NNOP_F16;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, dt, 32.0 * 9.0);
    r.gpu_opts.deterministic = 1;
    r.gpu_opts.workspace_limit = 1 << 20;
    assert_true(h_run_compare(&r, build_cbr, &dt));
    print_message("%s", r.describe);
}

/* TF32 keeps 10 mantissa bits: fp32 results within ~1e-3 relative; strict fp32 (the default)
 * is checked at 1e-5 by the conv matrix. */
static void test_gpu_fp32_tf32_allowed_matches_ref(void **state)
{
    h_run r;
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, NNOP_F32, 32.0 * 9.0);
    r.gpu_opts.allow_tf32 = 1;
    r.rtol = r.atol = 2e-3;
    assert_true(h_run_compare(&r, build_cbr32, NULL));
    print_message("%s", r.describe);
}

/* A misaligned binding is refused before anything runs. */
static void test_gpu_execute_rejects_misaligned_pointer(void **state)
{
    nnop_context_options o;
    nnop_context *gpu;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_dtype dt = NNOP_F16;
    void *dx, *dy;
    const void *in[1];
    void *out[1];
    (void)state;
    NNOP_TEST_REQUIRE_GPU();
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    gpu = h_gpu_context(&o);
    assert_int_equal(nnop_graph_create(gpu, &g), NNOP_OK);
    build_cbr(g, &dt);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    assert_int_equal(nnop_malloc(gpu, 1 << 20, &dx), NNOP_OK);
    assert_int_equal(nnop_malloc(gpu, 1 << 20, &dy), NNOP_OK);
    in[0] = (char *)dx + 2;
    out[0] = dy;
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(gpu), "aligned"));
    nnop_free(gpu, dx);
    nnop_free(gpu, dy);
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(gpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_gpu_fusion_fp16_nhwc_conv_bias_relu_is_one_partition),
            cmocka_unit_test(test_gpu_network_fp16_nhwc_matches_ref),
            cmocka_unit_test(test_gpu_network_fp32_nchw_matches_ref),
            cmocka_unit_test(test_gpu_network_bf16_nhwc_matches_ref),
            cmocka_unit_test(test_gpu_network_cuda_graph_matches_ref),
            cmocka_unit_test(test_gpu_cuda_graph_pointer_sets_match_ref),
            cmocka_unit_test(test_gpu_network_precompiled_only_matches_ref),
            cmocka_unit_test(test_gpu_pointwise_pool_softmax_nhwc_matches_ref),
            cmocka_unit_test(test_gpu_pointwise_pool_softmax_nchw_matches_ref),
            cmocka_unit_test(test_gpu_conv_bias_relu_oneshot_matches_ref),
            cmocka_unit_test(test_gpu_execute_rejects_misaligned_pointer),
            cmocka_unit_test(test_gpu_plan_cache_file_reuses_plan),
            cmocka_unit_test(test_gpu_plan_cache_parallel_deserialize),
            cmocka_unit_test(test_gpu_plan_cache_remembers_no_engine),
            cmocka_unit_test(test_gpu_prefetch_with_other_graphs_in_the_file),
            cmocka_unit_test(test_gpu_deterministic_policy_matches_ref),
            cmocka_unit_test(test_gpu_fp32_tf32_allowed_matches_ref),
    };
    return nnop_test_exit_code(cmocka_run_group_tests_name("gpu_network", tests, NULL, NULL),
                               sizeof tests / sizeof tests[0]);
}
