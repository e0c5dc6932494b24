/* mem.c: allocation wrappers and checked integer arithmetic. */
#include <stdlib.h>

#include "internal.h"

void *nnop__calloc(size_t n, size_t size)
{
    if (n == 0 || size == 0)
        return calloc(1, 1);
    return calloc(n, size);
}

void nnop__free(void *p)
{
    free(p);
}

int nnop__ranges_overlap(const void *a, uint64_t a_len, const void *b, uint64_t b_len)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a_len && b_len && (x < y ? y - x < a_len : x - y < b_len);
}

int nnop__first_nonzero(const uint64_t *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (v[i] != 0)
            return (int)i;
    return -1;
}

int nnop__mul_i64(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0)
        return 0;
    if (a != 0 && b > INT64_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}
