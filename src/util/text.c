/* text.c: building a text into a caller's buffer snprintf-style (describe, diagnose). */
#include <stdio.h>

#include "internal.h"

void nnop__text_init(nnop__text *t, char *buf, size_t len)
{
    t->buf = buf;
    t->len = buf ? len : 0;
    t->used = 0;
    if (t->len)
        buf[0] = '\0';
}

void nnop__textf(nnop__text *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(t->used < t->len ? t->buf + t->used : NULL,
                  t->used < t->len ? t->len - t->used : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->used += (size_t)n;
}
