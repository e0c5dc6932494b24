/* cli.h: command-line helpers shared by the example programs: integers in a range, the
 * --dtype and --backend values, and a wall clock. */
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

#endif /* NNOP_EXAMPLES_CLI_H */
