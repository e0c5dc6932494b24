/* cli.c: command-line helpers shared by the example programs, and one run of a plan. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

int cli_parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

int cli_parse_dtype(const char *s, nnop_dtype *out)
{
    if (strcmp(s, "f32") == 0)
        *out = NNOP_F32;
    else if (strcmp(s, "f16") == 0)
        *out = NNOP_F16;
    else
        return 0;
    return 1;
}

int cli_parse_backend(const char *s, nnop_backend *out)
{
    if (strcmp(s, "auto") == 0)
        *out = NNOP_BACKEND_AUTO;
    else if (strcmp(s, "cpu") == 0)
        *out = NNOP_BACKEND_CPU;
    else if (strcmp(s, "cuda") == 0)
        *out = NNOP_BACKEND_CUDA;
    else
        return 0;
    return 1;
}

double cli_now_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

nnop_status cli_run_once(nnop_context *ctx, nnop_plan *plan, const void *x, size_t xbytes, void *y,
                         size_t ybytes, double *seconds)
{
    void *dx = NULL, *dy = NULL;
    const void *ins[1];
    void *outs[1];
    double t0;
    nnop_status st = nnop_malloc(ctx, xbytes, &dx);
    if (st == NNOP_OK)
        st = nnop_malloc(ctx, ybytes, &dy);
    if (st == NNOP_OK)
        st = nnop_copy_in(ctx, dx, x, xbytes);
    ins[0] = dx, outs[0] = dy;
    t0 = cli_now_seconds();
    if (st == NNOP_OK)
        st = nnop_plan_execute(plan, ins, outs);
    if (st == NNOP_OK)
        st = nnop_copy_out(ctx, y, dy, ybytes);
    if (seconds)
        *seconds = cli_now_seconds() - t0;
    nnop_free(ctx, dx);
    nnop_free(ctx, dy);
    return st;
}
