/* bench_resnet.c: ResNet-50 inference (fp16 NHWC, random weights, batch-norm as constants
 * so it folds into the convs) built with nnop's graph API; time per batch with CUDA events
 * around 20 back-to-back executes, median of 5, with and without whole-plan CUDA graph
 * replay, for batch 1, 32 and 256. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_check.h"
#include "nnop/nnop.h"
#include "cuda/impl/impl.h"
#include "resnet50_graph.h"

#define ITERS 20
#define REPS  5

static nnop_plan *build(nnop_context *ctx, int64_t n, int cuda_graph)
{
    nnop_graph *g = bench_resnet50_graph(ctx, n);
    nnop_compile_options co;
    nnop_plan *plan = NULL;
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

/* usage: bench_resnet [--autotune] [BATCH ...] (default batches 1, 32, 256) */
int main(int argc, char **argv)
{
    int64_t batches[8] = {1, 32, 256};
    int n_batches = 3, a = 1;
    nnop_context_options o;
    nnop_context *ctx = NULL;
    int i, cg;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.autotune = argc > 1 && strcmp(argv[1], "--autotune") == 0;
    if (o.autotune)
        a++;
    if (a < argc)
        for (n_batches = 0; a < argc && n_batches < 8; a++) {
            char *end = NULL;
            long long b = strtoll(argv[a], &end, 10);
            if (!end || *end || b < 1 || b > 4096) {
                fprintf(stderr, "bench_resnet: batch '%s' is not a number in 1..4096\n", argv[a]);
                return 2;
            }
            batches[n_batches++] = (int64_t)b;
        }
    if (nnop_context_create(&o, &ctx) != NNOP_OK) {
        fprintf(stderr, "no CUDA context: %s\n", nnop_context_create_error());
        return 1;
    }
    for (i = 0; i < n_batches; i++) {
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
            if ((batches[i] == 1 || batches[i] == 32) && cg == 1) { /* side stream marks too */
                char d[8192];
                size_t n = nnop_plan_describe(plan, d, sizeof d);
                printf("%s%s", d, n > 0 && n < sizeof d && d[n - 1] == '\n' ? "" : "\n");
            }
            nnop_plan_destroy(plan);
        }
        nnop_free(ctx, x);
        nnop_free(ctx, y);
    }
    nnop_context_destroy(ctx);
    return 0;
}
