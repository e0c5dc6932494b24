/* cli.h: command-line helpers shared by the example programs: integers in a range, the
 * --dtype and --backend values, a wall clock, and one run of a plan. */
#ifndef NNOP_EXAMPLES_CLI_H
#define NNOP_EXAMPLES_CLI_H

#include "nnop/nnop.h"

/* *out = s as a decimal integer in [lo, hi]; returns 0 (and leaves *out) otherwise. */
int cli_parse_int(const char *s, int lo, int hi, int *out);
/* "f32" or "f16"; returns 0 for anything else. */
int cli_parse_dtype(const char *s, nnop_dtype *out);
/* "auto", "cpu" or "cuda"; returns 0 for anything else. */
int cli_parse_backend(const char *s, nnop_backend *out);
/* Wall-clock seconds (for throughput figures). */
double cli_now_seconds(void);
/* One run of a plan of one input and one output from host memory: device buffers for x
 * (xbytes) and y (ybytes), the copy in, the execute, the copy out, the buffers freed again;
 * *seconds (may be NULL) = the execute and the copy out. The first failing call's status
 * (nnop_context_last_error says more). */
nnop_status cli_run_once(nnop_context *ctx, nnop_plan *plan, const void *x, size_t xbytes, void *y,
                         size_t ybytes, double *seconds);

#endif /* NNOP_EXAMPLES_CLI_H */
