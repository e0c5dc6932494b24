/* prof_nets.c: the networks of examples/nets (MobileNetV3-Large, EfficientNet-B0,
 * ConvNeXt-Tiny, the U-Net; their JSON with seeded random weights, fp16 channels-last) as a
 * small shared library for bench/profile_kernels.py --net, as prof_resnet.c is for ResNet-50:
 * the same four functions, prof_init taking the graph file. Each returns 0 on success and
 * prints why not. */
#include <stdio.h>
#include <stdlib.h>

#include "nnop/nnop.h"
#include "vision_graph.h"

#if defined(_WIN32)
#define PROF_API __declspec(dllexport)
#else
#define PROF_API __attribute__((visibility("default")))
#endif

PROF_API void prof_fini(void);
PROF_API int prof_init_net(const char *graph, int n, int size, int autotune, int cuda_graph);
PROF_API int prof_run(int iters);
PROF_API int prof_describe(char *buf, int len);

static nnop_context *ctx_;
static nnop_plan *plan_;
static void *x_, *y_;

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "prof_nets: %s: %s\n", what,
            why    ? why
            : ctx_ ? nnop_context_last_error(ctx_)
                   : nnop_context_create_error());
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

/* The graph of file `graph` on ctx_ for n images of size x size; its output's descriptor. */
static int build(const char *graph, int n, int size, nnop_graph *g, nnop_tensor_desc *yd)
{
    char err[512];
    cJSON *j = vision_graph_read(graph, err, sizeof err);
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, n, 3, size, size);
    nnop_value out;
    nnop_status st;
    if (!j)
        return fail(graph, err);
    st = vision_graph_build(ctx_, g, j, nnop_input(g, "image", &xd), NULL, NNOP_F16, NNOP_NHWC,
                            20261201u, &out, err, sizeof err);
    cJSON_Delete(j);
    if (st != NNOP_OK)
        return fail(graph, err);
    if (nnop_output(g, out, "output") != NNOP_OK || nnop_value_desc(g, out, yd) != NNOP_OK)
        return fail("output", NULL);
    return 0;
}

/* Build the network for batch n (autotune: time cuDNN's candidates; cuda_graph: replay the
 * plan as one CUDA graph) and fill the input with a constant. */
PROF_API int prof_init_net(const char *graph, int n, int size, int autotune, int cuda_graph)
{
    nnop_context_options o;
    nnop_compile_options co;
    nnop_graph *g = NULL;
    nnop_tensor_desc yd;
    size_t xbytes = (size_t)n * 3 * (size_t)size * (size_t)size * 2, i;
    unsigned char *host = (unsigned char *)malloc(xbytes);
    int rc;
    if (!host)
        return fail("buffers", "out of host memory");
    for (i = 0; i < xbytes; i++)
        host[i] = (unsigned char)(i % 2 ? 0x30 : 0x00); /* fp16 0x3000 = 0.125 */
    prof_fini();
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.autotune = autotune;
    if (autotune)
        o.policy = NNOP_POLICY_FASTEST;
    if (nnop_context_create(&o, &ctx_) != NNOP_OK)
        return free(host), fail("context", NULL);
    if (nnop_graph_create(ctx_, &g) != NNOP_OK)
        return free(host), fail("graph", NULL);
    rc = build(graph, n, size, g, &yd);
    nnop_compile_options_init(&co);
    co.cuda_graph = cuda_graph;
    if (rc == 0 && nnop_graph_compile(g, &co, &plan_) != NNOP_OK)
        rc = fail("compile", NULL);
    nnop_graph_destroy(g);
    if (rc == 0 && (nnop_malloc(ctx_, xbytes, &x_) != NNOP_OK ||
                    nnop_malloc(ctx_, nnop_tensor_bytes(&yd), &y_) != NNOP_OK ||
                    nnop_copy_in(ctx_, x_, host, xbytes) != NNOP_OK))
        rc = fail("buffers", NULL);
    free(host);
    return rc;
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
            return fail("execute", NULL);
    return nnop_context_synchronize(ctx_) == NNOP_OK ? 0 : fail("synchronize", NULL);
}

/* The plan's description into buf (len bytes). */
PROF_API int prof_describe(char *buf, int len)
{
    nnop_plan_describe(plan_, buf, (size_t)len);
    return 0;
}
