/* bench_conv.c: per-call time of nnop's fused conv+bias+relu (fp16 NHWC, ResNet-50 layer
 * shapes): CUDA events around 100 back-to-back executes rotating 8 input sets, median of 5;
 * the same with whole-plan CUDA graph replay; and the raw cudnnBackendExecute of the same
 * plan and variant pack, plus host time per call (enqueue only) for nnop and raw. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/impl/impl.h"
#include "bench_check.h"
#include "nnop/nnop.h"

#define SETS  8
#define CALLS 100
#define REPS  5

typedef struct layer {
    int64_t n, c, h, w, k, r, stride, pad;
} layer;

/* --probe: conv shapes for rewriting the C=3 stem: C padded to 4, and space-to-depth
 * (2x2 blocks: C 12 or padded 16, 112x112, 4x4 stride 1; symmetric pad 2 gives one extra
 * output row/column, close enough for timing). */
static const layer probes[] = {
        {32, 4, 224, 224, 64, 7, 2, 3},  {32, 8, 224, 224, 64, 7, 2, 3},
        {32, 12, 112, 112, 64, 4, 1, 2}, {32, 16, 112, 112, 64, 4, 1, 2},
        {32, 16, 112, 112, 64, 4, 1, 1},
};

static const layer layers[] = {
        {32, 3, 224, 224, 64, 7, 2, 3},   {32, 64, 56, 56, 64, 1, 1, 0},
        {32, 64, 56, 56, 64, 3, 1, 1},    {32, 64, 56, 56, 256, 1, 1, 0},
        {32, 128, 28, 28, 128, 3, 1, 1},  {32, 256, 14, 14, 256, 3, 1, 1},
        {32, 1024, 14, 14, 256, 1, 1, 0}, {32, 512, 7, 7, 512, 3, 1, 1},
        {1, 64, 56, 56, 64, 3, 1, 1},     {1, 512, 7, 7, 512, 3, 1, 1},
};

#define NN(ctx, x)                                                                                 \
    do {                                                                                           \
        nnop_status s_ = (x);                                                                      \
        if (s_ != NNOP_OK) {                                                                       \
            fprintf(stderr, "%s failed: %s\n", #x, nnop_context_last_error(ctx));                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_us(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef struct bench {
    nnop_context *ctx;
    nnop_plan *plan;
    void *x[SETS], *y[SETS];
    int rotate;
    int raw; /* 1: cudnnBackendExecute of step 0 with its first variant pack, or the bare
              * launch of its own kernel */
} bench;

static void one_call(bench *b, int i)
{
    int s = b->rotate ? i % SETS : 0;
    const void *in[1];
    void *out[1];
    if (b->raw && !b->plan->cuda->steps[0].dnn) { /* own kernel (the stem): its bare launch */
        CHECK(nnop__k_stem_conv(&b->plan->cuda->steps[0].stem, b->ctx->cuda->stream) ==
              cudaSuccess);
        return;
    }
    if (b->raw) {
        nnop__dnn_step *d = b->plan->cuda->steps[0].dnn;
        CHECK(cudnnBackendExecute(b->ctx->cuda->handle, d->plan, d->vpack[0]) ==
              CUDNN_STATUS_SUCCESS);
        return;
    }
    in[0] = b->x[s];
    out[0] = b->y[s];
    NN(b->ctx, nnop_plan_execute(b->plan, in, out));
}

/* Median over REPS of (GPU us per call, host us per call). */
static void time_calls(bench *b, float *gpu_us, float *host_us)
{
    cudaStream_t st = b->ctx->cuda->stream;
    cudaEvent_t e0, e1;
    float g[REPS], h[REPS];
    int r, i;
    CHECK(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess);
    for (i = 0; i < 2 * SETS; i++)
        one_call(b, i); /* warm-up; builds the variant packs of every set */
    CHECK(cudaStreamSynchronize(st) == cudaSuccess);
    for (r = 0; r < REPS; r++) {
        double t0;
        float ms;
        CHECK(cudaEventRecord(e0, st) == cudaSuccess);
        t0 = now_us();
        for (i = 0; i < CALLS; i++)
            one_call(b, i);
        h[r] = (float)((now_us() - t0) / CALLS);
        CHECK(cudaEventRecord(e1, st) == cudaSuccess);
        CHECK(cudaEventSynchronize(e1) == cudaSuccess);
        CHECK(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess);
        g[r] = ms * 1000.0f / CALLS;
    }
    qsort(g, REPS, sizeof g[0], cmp_f);
    qsort(h, REPS, sizeof h[0], cmp_f);
    *gpu_us = g[REPS / 2];
    *host_us = h[REPS / 2];
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
}

/* h = n fp16 values uniform in [-scale, scale): random data like PyTorch's peer, since
 * tensor-core power (and so clocks) depends on the data. */
static void random_f16(uint16_t *h, size_t n, uint32_t seed, float scale)
{
    float *f = (float *)malloc(n * sizeof *f);
    uint32_t x = seed * 2654435761u + 12345u;
    size_t i;
    CHECK(f != NULL);
    for (i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
        f[i] = scale * ((float)(x >> 8) / 8388608.0f - 1.0f);
    }
    CHECK(nnop_convert(NNOP_F32, f, NNOP_F16, h, (int64_t)n) == NNOP_OK);
    free(f);
}

static void fill_random_f16(nnop_context *ctx, void *dst, size_t n, uint32_t seed)
{
    uint16_t *h = (uint16_t *)malloc(n * sizeof *h);
    CHECK(h != NULL);
    random_f16(h, n, seed, 1.0f);
    NN(ctx, nnop_copy_in(ctx, dst, h, n * sizeof *h));
    free(h);
}

static nnop_plan *compile(nnop_context *ctx, const layer *l, int cuda_graph)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, l->n, l->c, l->h, l->w);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, l->k, l->c, l->r, l->r);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F16, l->k);
    nnop_conv_params p = {{l->pad, l->pad}, {l->stride, l->stride}, {1, 1}, 1};
    nnop_compile_options co;
    size_t wn = (size_t)nnop_tensor_elements(&wd);
    uint16_t *w = (uint16_t *)calloc(wn, 2), *bias = (uint16_t *)calloc((size_t)l->k, 2);
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_value y;
    CHECK(w && bias);
    random_f16(w, wn, 101u, 0.05f);
    random_f16(bias, (size_t)l->k, 102u, 1.0f);
    NN(ctx, nnop_graph_create(ctx, &g));
    y = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w), &p);
    y = nnop_bias(g, y, nnop_constant(g, "b", &bd, bias));
    y = nnop_act(g, y, NNOP_ACT_RELU, 0.0f);
    NN(ctx, nnop_output(g, y, "y"));
    nnop_compile_options_init(&co);
    co.cuda_graph = cuda_graph;
    NN(ctx, nnop_graph_compile(g, &co, &plan));
    nnop_graph_destroy(g);
    free(w);
    free(bias);
    return plan;
}

static void run_layer(nnop_context *ctx, const layer *l)
{
    bench b;
    nnop_plan *pg;
    char desc[512];
    float t_nnop, t_graph, t_raw, h_nnop, h_graph, h_raw, h_fixed, t_fixed;
    int64_t p = (l->h + 2 * l->pad - l->r) / l->stride + 1;
    size_t xb = (size_t)(l->n * l->c * l->h * l->w * 2), yb = (size_t)(l->n * l->k * p * p * 2);
    int s;
    memset(&b, 0, sizeof b);
    b.ctx = ctx;
    b.plan = compile(ctx, l, 0);
    for (s = 0; s < SETS; s++) {
        NN(ctx, nnop_malloc(ctx, xb, &b.x[s]));
        NN(ctx, nnop_malloc(ctx, yb, &b.y[s]));
        fill_random_f16(ctx, b.x[s], xb / 2, (uint32_t)s + 1u);
    }
    b.rotate = 1;
    time_calls(&b, &t_nnop, &h_nnop);
    b.rotate = 0;
    time_calls(&b, &t_fixed, &h_fixed);
    b.raw = 1;
    time_calls(&b, &t_raw, &h_raw);
    nnop_plan_describe(b.plan, desc, sizeof desc);
    pg = compile(ctx, l, 1);
    nnop_plan_destroy(b.plan);
    b.plan = pg;
    b.raw = 0;
    b.rotate = 0; /* one binding set: the captured graph is replayed */
    time_calls(&b, &t_graph, &h_graph);
    printf("RESULT %lld,%lld,%lld,%lld -> %lld, %lldx%lld, s%lld | nnop %.1f | nnop_fixed %.1f | "
           "graph %.1f | raw %.1f | host_nnop %.2f | host_raw %.2f | host_graph %.2f | %s",
           (long long)l->n, (long long)l->c, (long long)l->h, (long long)l->w, (long long)l->k,
           (long long)l->r, (long long)l->r, (long long)l->stride, (double)t_nnop, (double)t_fixed,
           (double)t_graph, (double)t_raw, (double)h_fixed, (double)h_raw, (double)h_graph,
           strchr(desc, '\n') ? strchr(desc, '\n') + 1 : desc);
    fflush(stdout);
    for (s = 0; s < SETS; s++) {
        nnop_free(ctx, b.x[s]);
        nnop_free(ctx, b.y[s]);
    }
    nnop_plan_destroy(pg);
}

int main(int argc, char **argv)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    size_t i;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.autotune = argc > 1 && strcmp(argv[1], "--autotune") == 0;
    if (nnop_context_create(&o, &ctx) != NNOP_OK) {
        fprintf(stderr, "no CUDA context: %s\n", nnop_context_create_error());
        return 1;
    }
    printf("bench_conv: fp16 NHWC conv+bias+relu, cuDNN %zu, %s, autotune %d\n",
           ctx->cuda->cudnn_version, ctx->cuda->name, o.autotune);
    if (argc > 1 && strcmp(argv[argc - 1], "--probe") == 0) {
        for (i = 0; i < sizeof probes / sizeof probes[0]; i++)
            run_layer(ctx, &probes[i]);
    } else {
        for (i = 0; i < sizeof layers / sizeof layers[0]; i++)
            run_layer(ctx, &layers[i]);
    }
    nnop_context_destroy(ctx);
    return 0;
}
