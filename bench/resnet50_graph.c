/* resnet50_graph.c: the ResNet-50 inference graph of the benchmarks (fp16 NHWC, seeded random
 * weights, batch-norm as constants so it folds into the convs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_check.h"
#include "resnet50_graph.h"

static uint64_t rng = 88172645463325252ull;

/* With bench_resnet50_keep_weights: the host data of every constant, in the order built, so a
 * later build replays them (copies only) instead of generating them again. The first build
 * records, every later one replays (it once replayed kept[0] for the first build's second
 * constant on: a heap over-read and a network of garbage, issue 43). */
static void **kept;
static size_t *kept_bytes;
static size_t n_kept, cap_kept, replay_at;
static int keeping, replaying;

void bench_resnet50_keep_weights(void)
{
    keeping = 1;
}

static void keep(void *h, size_t bytes)
{
    if (n_kept == cap_kept) {
        cap_kept = cap_kept ? 2 * cap_kept : 512;
        kept = (void **)realloc(kept, cap_kept * sizeof *kept);
        kept_bytes = (size_t *)realloc(kept_bytes, cap_kept * sizeof *kept_bytes);
        CHECK(kept != NULL && kept_bytes != NULL);
    }
    kept_bytes[n_kept] = bytes;
    kept[n_kept++] = h;
}

static float uniform(float a)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return a * (2.0f * (float)(rng >> 40) / (float)(1 << 24) - 1.0f);
}

static nnop_value constant(nnop_graph *g, const nnop_tensor_desc *d, float a, float base)
{
    int64_t n = nnop_tensor_elements(d), i;
    float *f;
    void *h;
    nnop_value v;
    if (replaying) { /* the same graph again: the same constants in the same order */
        CHECK(replay_at < n_kept && kept_bytes[replay_at] == nnop_tensor_bytes(d));
        return nnop_constant(g, NULL, d, kept[replay_at++]);
    }
    f = (float *)malloc((size_t)n * sizeof(float));
    h = malloc(nnop_tensor_bytes(d));
    CHECK(f && h);
    for (i = 0; i < n; i++)
        f[i] = base + uniform(a);
    CHECK(nnop_convert(NNOP_F32, f, d->dtype, h, n) == NNOP_OK);
    v = nnop_constant(g, NULL, d, h);
    free(f);
    if (keeping)
        keep(h, nnop_tensor_bytes(d));
    else
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

nnop_graph *bench_resnet50_graph(nnop_context *ctx, int64_t n)
{
    static const int blocks[4] = {3, 4, 6, 3};
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, n, 3, 224, 224);
    nnop_tensor_desc fd = nnop_tensor_2d(NNOP_F16, 1000, 2048), bd = nnop_tensor_1d(NNOP_F16, 1000);
    nnop_pool_params pp = {{3, 3}, {2, 2}, {1, 1}, 0, {0, 0}};
    nnop_graph *g = NULL;
    nnop_value y;
    int64_t cin = 64, width = 64;
    int s, b;
    replaying = keeping && n_kept > 0;
    replay_at = 0;
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
    CHECK(!replaying || replay_at == n_kept);
    return g;
}
