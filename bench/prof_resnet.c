/* prof_resnet.c: ResNet-50 (bench/resnet50_graph.c) as a small shared library for
 * bench/profile_kernels.py, which loads it with ctypes and runs it under torch.profiler, so
 * that CUPTI records every kernel nnop launches beside PyTorch's (the GPU machine has no
 * nsys). Public API only. Each function returns 0 on success and prints why not. */
#include <stdio.h>
#include <stdlib.h>

#include "nnop/nnop.h"
#include "resnet50_graph.h"

#if defined(_WIN32)
#define PROF_API __declspec(dllexport)
#else
#define PROF_API __attribute__((visibility("default")))
#endif

PROF_API void prof_fini(void);
PROF_API int prof_init(int n, int autotune, int cuda_graph);
PROF_API int prof_run(int iters);
PROF_API int prof_describe(char *buf, int len);

static nnop_context *ctx_;
static nnop_plan *plan_;
static void *x_, *y_;

static int fail(const char *what)
{
    fprintf(stderr, "prof_resnet: %s: %s\n", what,
            ctx_ ? nnop_context_last_error(ctx_) : nnop_context_create_error());
    return 1;
}

PROF_API void prof_fini(void)
{
    nnop_plan_destroy(plan_);
    if (ctx_) {
        nnop_free(ctx_, x_);
        nnop_free(ctx_, y_);
    }
    nnop_context_destroy(ctx_);
    plan_ = NULL, ctx_ = NULL, x_ = NULL, y_ = NULL;
}

/* Build the network for batch n (autotune: time cuDNN's candidates; cuda_graph: replay the
 * plan as one CUDA graph) and fill the input with a constant. */
PROF_API int prof_init(int n, int autotune, int cuda_graph)
{
    nnop_context_options o;
    nnop_compile_options co;
    nnop_graph *g;
    size_t xbytes = (size_t)n * 3 * 224 * 224 * 2;
    unsigned char *host = (unsigned char *)malloc(xbytes);
    size_t i;
    if (!host)
        return fail("out of host memory");
    for (i = 0; i < xbytes; i++)
        host[i] = (unsigned char)(i % 2 ? 0x30 : 0x00); /* fp16 0x3000 = 0.125 */
    prof_fini();
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.autotune = autotune;
    if (autotune)
        o.policy = NNOP_POLICY_FASTEST;
    if (nnop_context_create(&o, &ctx_) != NNOP_OK)
        return free(host), fail("context");
    g = bench_resnet50_graph(ctx_, n);
    nnop_compile_options_init(&co);
    co.cuda_graph = cuda_graph;
    if (nnop_graph_compile(g, &co, &plan_) != NNOP_OK)
        return nnop_graph_destroy(g), free(host), fail("compile");
    nnop_graph_destroy(g);
    if (nnop_malloc(ctx_, xbytes, &x_) != NNOP_OK ||
        nnop_malloc(ctx_, (size_t)n * 1000 * 2, &y_) != NNOP_OK ||
        nnop_copy_in(ctx_, x_, host, xbytes) != NNOP_OK)
        return free(host), fail("buffers");
    free(host);
    return 0;
}

/* iters forwards back to back, then wait for them. */
PROF_API int prof_run(int iters)
{
    const void *in[1];
    void *out[1];
    int i;
    in[0] = x_, out[0] = y_;
    for (i = 0; i < iters; i++)
        if (nnop_plan_execute(plan_, in, out) != NNOP_OK)
            return fail("execute");
    return nnop_context_synchronize(ctx_) == NNOP_OK ? 0 : fail("synchronize");
}

/* The plan's description into buf (len bytes). */
PROF_API int prof_describe(char *buf, int len)
{
    nnop_plan_describe(plan_, buf, (size_t)len);
    return 0;
}
