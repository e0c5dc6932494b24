/* quickstart.c: nnop in two steps: one fused conv+bias+relu call, then a tiny network built
 * with the graph API. Runs on the GPU when there is one, on the CPU reference otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nnop/nnop.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        nnop_status st_ = (call);                                                                  \
        if (st_ != NNOP_OK) {                                                                      \
            fprintf(stderr, "%s failed: %s\n", #call, nnop_context_last_error(ctx));               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void fill(float *x, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    }
}

/* Copy host floats into a new tensor buffer of the context. */
static void *upload(nnop_context *ctx, const float *host, size_t n)
{
    void *dev = NULL;
    CHECK(nnop_malloc(ctx, n * sizeof(float), &dev));
    CHECK(nnop_copy_in(ctx, dev, host, n * sizeof(float)));
    return dev;
}

static void conv_bias_relu_demo(nnop_context *ctx)
{
    enum { N = 2, C = 8, H = 16, W = 16, K = 16 };
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, N, C, H, W);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, K, C, 3, 3);
    nnop_tensor_desc yd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, N, K, H, W);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    static float x[N * C * H * W], w[K * C * 9], b[K], y[N * K * H * W];
    void *dx, *dw, *db, *dy;
    double sum = 0.0;
    size_t i, positive = 0;
    fill(x, N * C * H * W, 1);
    fill(w, K * C * 9, 2);
    fill(b, K, 3);
    dx = upload(ctx, x, N * C * H * W);
    dw = upload(ctx, w, K * C * 9);
    db = upload(ctx, b, K);
    CHECK(nnop_malloc(ctx, sizeof y, &dy));
    CHECK(nnop_conv_bias_relu(ctx, &xd, dx, &wd, dw, db, &p, &yd, dy));
    CHECK(nnop_copy_out(ctx, y, dy, sizeof y));
    for (i = 0; i < N * K * H * W; i++) {
        sum += y[i];
        positive += y[i] > 0.0f;
    }
    printf("conv+bias+relu  %dx%dx%dx%d -> %dx%dx%dx%d: mean %.5f, %zu of %d outputs > 0\n", N, C,
           H, W, N, K, H, W, sum / (N * K * H * W), positive, N * K * H * W);
    nnop_free(ctx, dx);
    nnop_free(ctx, dw);
    nnop_free(ctx, db);
    nnop_free(ctx, dy);
}

/* conv -> bias -> relu -> max pool -> global average pool -> flatten -> linear -> softmax */
static void tiny_network_demo(nnop_context *ctx)
{
    enum { N = 4, C = 3, H = 12, W = 12, K = 8, CLASSES = 5 };
    static float w1[K * C * 9], b1[K], w2[CLASSES * K], b2[CLASSES], x[N * C * H * W];
    float probs[N * CLASSES];
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, N, C, H, W);
    nnop_tensor_desc w1d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, K, C, 3, 3);
    nnop_tensor_desc b1d = nnop_tensor_1d(NNOP_F32, K), b2d = nnop_tensor_1d(NNOP_F32, CLASSES);
    nnop_tensor_desc w2d = nnop_tensor_2d(NNOP_F32, CLASSES, K);
    nnop_conv_params cp = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_pool_params pp = {{2, 2}, {2, 2}, {0, 0}, 0, {0, 0}};
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_value v;
    void *dx, *dy;
    const void *ins[1];
    void *outs[1];
    char text[2048];
    int n, k;
    fill(w1, K * C * 9, 4), fill(b1, K, 5), fill(w2, CLASSES * K, 6), fill(b2, CLASSES, 7);
    fill(x, N * C * H * W, 8);
    CHECK(nnop_graph_create(ctx, &g));
    v = nnop_input(g, "image", &xd);
    v = nnop_conv(g, v, nnop_constant(g, "conv.w", &w1d, w1), &cp);
    v = nnop_act(g, nnop_bias(g, v, nnop_constant(g, "conv.b", &b1d, b1)), NNOP_ACT_RELU, 0);
    v = nnop_pool(g, v, NNOP_POOL_MAX, &pp);
    v = nnop_flatten(g, nnop_global_avg_pool(g, v));
    v = nnop_linear(g, v, nnop_constant(g, "fc.w", &w2d, w2), nnop_constant(g, "fc.b", &b2d, b2));
    CHECK(nnop_output(g, nnop_softmax(g, v), "probs"));
    CHECK(nnop_graph_compile(g, NULL, &plan));
    nnop_graph_destroy(g);
    nnop_plan_describe(plan, text, sizeof text);
    printf("%s", text);
    dx = upload(ctx, x, N * C * H * W);
    CHECK(nnop_malloc(ctx, sizeof probs, &dy));
    ins[0] = dx;
    outs[0] = dy;
    CHECK(nnop_plan_execute(plan, ins, outs));
    CHECK(nnop_copy_out(ctx, probs, dy, sizeof probs));
    for (n = 0; n < N; n++) {
        double total = 0.0;
        printf("image %d: class probabilities", n);
        for (k = 0; k < CLASSES; k++) {
            printf(" %.4f", probs[n * CLASSES + k]);
            total += probs[n * CLASSES + k];
        }
        printf("  (sum %.6f)\n", total);
        if (fabs(total - 1.0) > 1e-3) {
            fprintf(stderr, "softmax rows must sum to 1\n");
            exit(1);
        }
    }
    nnop_free(ctx, dx);
    nnop_free(ctx, dy);
    nnop_plan_destroy(plan);
}

int main(void)
{
    nnop_context *ctx = NULL;
    nnop_status st = nnop_context_create(NULL, &ctx);
    if (st != NNOP_OK) {
        fprintf(stderr, "nnop_context_create: %s\n", nnop_context_create_error());
        return 1;
    }
    printf("nnop %d.%d.%d on the %s backend\n", nnop_version() / 10000, nnop_version() / 100 % 100,
           nnop_version() % 100,
           nnop_context_backend(ctx) == NNOP_BACKEND_CUDA ? "CUDA (GPU)" : "CPU reference");
    conv_bias_relu_demo(ctx);
    tiny_network_demo(ctx);
    nnop_context_destroy(ctx);
    return 0;
}
