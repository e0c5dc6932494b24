/* regular_file.c: see regular_file.h. POSIX: open with O_NONBLOCK (a FIFO would wait for a
 * writer), fstat, then a blocking FILE; Windows: _wstat64 would do, but fopen + _fstat64 of
 * the descriptor keeps it short (a named pipe is not a regular file there either). */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L
#endif

#include "regular_file.h"
#include "errbuf.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef _WIN32
#include <io.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

nnop_status regular_file_open(const char *path, FILE **out, uint64_t *size, char *err,
                              size_t err_len)
{
#ifdef _WIN32
    struct _stat64 st;
    FILE *fp = fopen(path, "rb");
    *out = NULL;
    if (!fp) {
        errbuf_set(err, err_len, "%s: cannot open the file", path);
        return NNOP_ERR_IO;
    }
    if (_fstat64(_fileno(fp), &st) != 0 || !(st.st_mode & _S_IFREG)) {
        fclose(fp);
        errbuf_set(err, err_len, "%s: not a regular file", path);
        return NNOP_ERR_IO;
    }
#else
    struct stat st;
    FILE *fp;
    int fd = open(path, O_RDONLY | O_NONBLOCK), flags;
    *out = NULL;
    if (fd < 0) {
        errbuf_set(err, err_len, "%s: cannot open the file (%s)", path, strerror(errno));
        return NNOP_ERR_IO;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int dir = S_ISDIR(st.st_mode);
        close(fd);
        errbuf_set(err, err_len, "%s: %s", path,
                   dir ? "is a directory, not a file"
                       : "is not a regular file (a FIFO, device or socket)");
        return NNOP_ERR_IO;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 || !(fp = fdopen(fd, "rb"))) {
        close(fd);
        errbuf_set(err, err_len, "%s: cannot open the file", path);
        return NNOP_ERR_IO;
    }
#endif
    *out = fp;
    *size = (uint64_t)st.st_size;
    return NNOP_OK;
}
