/* prof_common.c: the state and functions the profiling modules share (prof_common.h). */
#include <stdio.h>
#include <stdlib.h>

#include "prof_common.h"

static nnop_context *ctx_;
static nnop_plan *plan_;
static void *x_, *y_;

nnop_context *prof_ctx(void)
{
    return ctx_;
}

int prof_fail(const char *what, const char *why)
{
    fprintf(stderr, "prof: %s: %s\n", what,
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

int prof_context(int autotune)
{
    nnop_context_options o;
    prof_fini();
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.autotune = autotune;
    if (autotune)
        o.policy = NNOP_POLICY_FASTEST;
    return nnop_context_create(&o, &ctx_) == NNOP_OK ? 0 : prof_fail("context", NULL);
}

int prof_compile(nnop_graph *g, int cuda_graph, size_t xbytes, size_t ybytes)
{
    nnop_compile_options co;
    unsigned char *host = (unsigned char *)malloc(xbytes);
    size_t i;
    int rc = 0;
    nnop_compile_options_init(&co);
    co.cuda_graph = cuda_graph;
    if (!host)
        rc = prof_fail("buffers", "out of host memory");
    for (i = 0; host && i < xbytes; i++)
        host[i] = (unsigned char)(i % 2 ? 0x30 : 0x00); /* fp16 0x3000 = 0.125 */
    if (rc == 0 && nnop_graph_compile(g, &co, &plan_) != NNOP_OK)
        rc = prof_fail("compile", NULL);
    nnop_graph_destroy(g);
    if (rc == 0 &&
        (nnop_malloc(ctx_, xbytes, &x_) != NNOP_OK || nnop_malloc(ctx_, ybytes, &y_) != NNOP_OK ||
         nnop_copy_in(ctx_, x_, host, xbytes) != NNOP_OK))
        rc = prof_fail("buffers", NULL);
    free(host);
    return rc;
}

PROF_API int prof_run(int iters)
{
    const void *in[1];
    void *out[1];
    int i;
    in[0] = x_, out[0] = y_;
    for (i = 0; i < iters; i++)
        if (nnop_plan_execute(plan_, in, out) != NNOP_OK)
            return prof_fail("execute", NULL);
    return nnop_context_synchronize(ctx_) == NNOP_OK ? 0 : prof_fail("synchronize", NULL);
}

PROF_API int prof_describe(char *buf, int len)
{
    nnop_plan_describe(plan_, buf, (size_t)len);
    return 0;
}
