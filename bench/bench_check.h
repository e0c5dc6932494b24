/* bench_check.h: the benchmarks' one failure check: print the failed expression and exit
 * (a benchmark has nothing to unwind). */
#ifndef NNOP_BENCH_CHECK_H
#define NNOP_BENCH_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif /* NNOP_BENCH_CHECK_H */
