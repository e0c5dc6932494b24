/* doctor.c: nnop_diagnose, the installation report behind tools/nnop-doctor. */
#include <stdio.h>

#include "internal.h"

size_t nnop_diagnose(char *buf, size_t len)
{
    char empty[1];
    int n;
    if (!buf || !len) {
        buf = empty;
        len = sizeof empty;
    }
    n = snprintf(buf, len, "nnop %d.%d.%d\n", NNOP_VERSION_MAJOR, NNOP_VERSION_MINOR,
                 NNOP_VERSION_PATCH);
    if (n < 0)
        return 0;
    if ((size_t)n >= len)
        return (size_t)n + nnop__cuda_diagnose(NULL, 0);
    return (size_t)n + nnop__cuda_diagnose(buf + n, len - (size_t)n);
}
