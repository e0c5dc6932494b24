/* bench_resnet.c: ResNet-50 inference (fp16 NHWC, random weights, batch-norm as constants
 * so it folds into the convs) built with nnop's graph API; time per batch with CUDA events
 * around 20 back-to-back executes, median of 5, with and without whole-plan CUDA graph
 * replay, for batch 1 and 32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop/nnop.h"
#include "cuda/cuda_plan.h"

#define ITERS 20
#define REPS 5

#define CHECK(x)                                                                           \
    do {                                                                                   \
        if (!(x)) {                                                                        \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static uint64_t rng = 88172645463325252ull;

static float uniform(float a)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return a * (2.0f * (float)(rng >> 40) / (float)(1 << 24) - 1.0f);
}

static nnop_value constant(nnop_graph *g, const nnop_tensor_desc *d, float a, float base)
{
    int64_t n = nnop_tensor_elements(d), i;
    float *f = (float *)malloc((size_t)n * sizeof(float));
    void *h = malloc(nnop_tensor_bytes(d));
    nnop_value v;
    CHECK(f && h);
    for (i = 0; i < n; i++)
        f[i] = base + uniform(a);
    CHECK(nnop_convert(NNOP_F32, f, d->dtype, h, n) == NNOP_OK);
    v = nnop_constant(g, NULL, d, h);
    free(f);
    free(h);
    return v;
}

/* conv (no bias) + batch-norm, optionally + relu */
static nnop_value conv_bn(nnop_graph *g, nnop_value x, int64_t cin, int64_t cout, int64_t k,
                          int64_t stride, int relu)
{
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, cout, cin, k, k);
    nnop_tensor_desc cd = nnop_tensor_1d(NNOP_F16, cout);
    nnop_conv_params p = {{k / 2, k / 2}, {stride, stride}, {1, 1}, 1};
    nnop_value y = nnop_conv(g, x, constant(g, &wd, 1.0f / sqrtf((float)(cin * k * k)), 0.0f), &p);
    y = nnop_batchnorm(g, y, constant(g, &cd, 0.2f, 1.0f), constant(g, &cd, 0.1f, 0.0f),
                       constant(g, &cd, 0.1f, 0.0f), constant(g, &cd, 0.2f, 1.0f), 1e-5f);
    return relu ? nnop_act(g, y, NNOP_ACT_RELU, 0.0f) : y;
}

/* Bottleneck; the projection is built first so conv3+bn3+add+relu stay one contiguous run. */
static nnop_value bottleneck(nnop_graph *g, nnop_value x, int64_t cin, int64_t width,
                             int64_t stride)
{
    int64_t cout = width * 4;
    nnop_value skip = (stride != 1 || cin != cout) ? conv_bn(g, x, cin, cout, 1, stride, 0) : x;
    nnop_value y = conv_bn(g, x, cin, width, 1, 1, 1);
    y = conv_bn(g, y, width, width, 3, stride, 1);
    y = conv_bn(g, y, width, cout, 1, 1, 0);
    return nnop_act(g, nnop_add(g, y, skip), NNOP_ACT_RELU, 0.0f);
}

static nnop_plan *build(nnop_context *ctx, int64_t n, int cuda_graph)
{
    static const int blocks[4] = {3, 4, 6, 3};
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, n, 3, 224, 224);
    nnop_tensor_desc fd = nnop_tensor_2d(NNOP_F16, 1000, 2048), bd = nnop_tensor_1d(NNOP_F16, 1000);
    nnop_pool_params pp = {{3, 3}, {2, 2}, {1, 1}, 0};
    nnop_compile_options co;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_value y;
    int64_t cin = 64, width = 64;
    int s, b;
    CHECK(nnop_graph_create(ctx, &g) == NNOP_OK);
    y = nnop_pool(g, conv_bn(g, nnop_input(g, "x", &xd), 3, 64, 7, 2, 1), NNOP_POOL_MAX, &pp);
    for (s = 0; s < 4; s++, width *= 2)
        for (b = 0; b < blocks[s]; b++) {
            y = bottleneck(g, y, cin, width, (s > 0 && b == 0) ? 2 : 1);
            cin = width * 4;
        }
    y = nnop_flatten(g, nnop_global_avg_pool(g, y));
    y = nnop_linear(g, y, constant(g, &fd, 0.02f, 0.0f), constant(g, &bd, 0.1f, 0.0f));
    CHECK(nnop_output(g, y, "logits") == NNOP_OK);
    nnop_compile_options_init(&co);
    co.cuda_graph = cuda_graph;
    if (nnop_graph_compile(g, &co, &plan) != NNOP_OK) {
        fprintf(stderr, "compile: %s\n", nnop_context_last_error(ctx));
        exit(1);
    }
    nnop_graph_destroy(g);
    return plan;
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float time_plan(nnop_context *ctx, nnop_plan *plan, const void *x, void *y)
{
    cudaStream_t st = ctx->cuda->stream;
    cudaEvent_t e0, e1;
    const void *in[1];
    void *out[1];
    float t[REPS], ms;
    int r, i;
    in[0] = x;
    out[0] = y;
    CHECK(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess);
    for (i = 0; i < 3; i++)
        CHECK(nnop_plan_execute(plan, in, out) == NNOP_OK);
    for (r = 0; r < REPS; r++) {
        CHECK(cudaEventRecord(e0, st) == cudaSuccess);
        for (i = 0; i < ITERS; i++)
            if (nnop_plan_execute(plan, in, out) != NNOP_OK) {
                fprintf(stderr, "execute: %s\n", nnop_context_last_error(ctx));
                exit(1);
            }
        CHECK(cudaEventRecord(e1, st) == cudaSuccess);
        CHECK(cudaEventSynchronize(e1) == cudaSuccess);
        CHECK(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess);
        t[r] = ms / ITERS;
    }
    qsort(t, REPS, sizeof t[0], cmp_f);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return t[REPS / 2];
}

int main(int argc, char **argv)
{
    static const int64_t batches[2] = {1, 32};
    nnop_context_options o;
    nnop_context *ctx = NULL;
    int i, cg;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.autotune = argc > 1 && strcmp(argv[1], "--autotune") == 0;
    if (nnop_context_create(&o, &ctx) != NNOP_OK) {
        fprintf(stderr, "no CUDA context: %s\n", nnop_context_create_error());
        return 1;
    }
    for (i = 0; i < 2; i++) {
        void *x = NULL, *y = NULL;
        CHECK(nnop_malloc(ctx, (size_t)(batches[i] * 3 * 224 * 224 * 2), &x) == NNOP_OK);
        CHECK(nnop_malloc(ctx, (size_t)(batches[i] * 1000 * 2), &y) == NNOP_OK);
        CHECK(cudaMemset(x, 0x30, (size_t)(batches[i] * 3 * 224 * 224 * 2)) == cudaSuccess);
        for (cg = 0; cg < 2; cg++) {
            nnop_plan *plan = build(ctx, batches[i], cg);
            float ms = time_plan(ctx, plan, x, y);
            printf("RESNET50 batch %lld | cuda_graph %d | %.3f ms | %.0f img/s | %d partitions\n",
                   (long long)batches[i], cg, (double)ms, (double)batches[i] * 1000.0 / ms,
                   nnop_plan_num_partitions(plan));
            if (i == 1 && cg == 0) {
                char d[8192];
                nnop_plan_describe(plan, d, sizeof d);
                printf("%s", d);
            }
            nnop_plan_destroy(plan);
        }
        nnop_free(ctx, x);
        nnop_free(ctx, y);
    }
    nnop_context_destroy(ctx);
    return 0;
}
