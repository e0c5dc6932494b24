/* cli.c: command-line helpers shared by the example programs. */
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
