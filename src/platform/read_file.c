/* read_file.c: a whole file into memory, bounded (the plan cache file, the calibration
 * table). Portable C on nnop__fopen_read, which refuses FIFOs and devices unread. */
#include <stdlib.h>

#include "platform/platform.h"

const char *nnop__open_problem(nnop__open_result why)
{
    switch (why) {
    case NNOP__OPEN_OK:
        return "no problem";
    case NNOP__OPEN_MISSING:
        return "no such file";
    case NNOP__OPEN_NOT_REGULAR:
        return "not a regular file (a directory, FIFO or device)";
    case NNOP__OPEN_NO_MEMORY:
        return "out of memory";
    case NNOP__OPEN_EXISTS:
        return "the name is taken";
    case NNOP__OPEN_FAILED:
        break;
    }
    return "cannot be read (no permission, or an I/O error)";
}

/* Grow *buf to hold at least need + 1 bytes (doubling, from 4 KiB); 0 when out of memory. */
static int grow(unsigned char **buf, size_t *cap, size_t need)
{
    size_t c = *cap ? *cap : 4096;
    unsigned char *p;
    while (c < need + 1 && c <= ((size_t)-1) / 2)
        c *= 2;
    if (c < need + 1)
        return 0;
    if (c == *cap && *buf)
        return 1;
    p = (unsigned char *)realloc(*buf, c);
    if (!p)
        return 0;
    *buf = p;
    *cap = c;
    return 1;
}

int nnop__read_file(const char *path, size_t max, unsigned char **buf, size_t *len, int *longer,
                    nnop__open_result *why)
{
    FILE *f = nnop__fopen_read(path, why);
    unsigned char *b = NULL;
    size_t n = 0, cap = 0, limit = max + 1; /* the byte past max says the file is longer */
    int oom = 0;
    *buf = NULL;
    *len = 0;
    *longer = 0;
    if (!f)
        return -1;
    while (n < limit) {
        size_t room, got;
        if (cap - n < 2 && !grow(&b, &cap, n + 1)) {
            oom = 1;
            break;
        }
        room = cap - 1 - n < limit - n ? cap - 1 - n : limit - n;
        got = fread(b + n, 1, room, f);
        n += got;
        if (got < room) /* end of file, or an error (ferror below) */
            break;
    }
    if (oom || ferror(f)) {
        fclose(f);
        free(b);
        *why = oom ? NNOP__OPEN_NO_MEMORY : NNOP__OPEN_FAILED;
        return -1;
    }
    fclose(f);
    *longer = n > max;
    *len = n > max ? max : n;
    b[*len] = '\0';
    *buf = b;
    *why = NNOP__OPEN_OK;
    return 0;
}
