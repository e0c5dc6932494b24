/* errbuf.c: see errbuf.h. */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>

void errbuf_set(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    if (!err || err_len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}
