/* errbuf.h: the examples' support code reports failures as text in a caller's buffer. */
#ifndef NNOP_EXAMPLES_ERRBUF_H
#define NNOP_EXAMPLES_ERRBUF_H

#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
#define ERRBUF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ERRBUF_PRINTF(a, b)
#endif

/* Format into err (err_len bytes, NUL-terminated, truncating); nothing when err is NULL. */
void errbuf_set(char *err, size_t err_len, const char *fmt, ...) ERRBUF_PRINTF(3, 4);

#endif /* NNOP_EXAMPLES_ERRBUF_H */
