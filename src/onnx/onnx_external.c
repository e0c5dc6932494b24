/* onnx_external.c: tensors whose bytes live in a file beside the model (TensorProto
 * data_location EXTERNAL, keys location, offset and length), as torch.onnx.export writes the
 * weights of a model over 2 GiB, and by default with its dynamo exporter (model.onnx.data). Only a
 * model loaded from a path has a directory to look in. A location must name a file under that
 * directory (relative, no '..': a model from elsewhere reads no other file of the machine), and the
 * bytes must be what the dims need, exactly. */
#if !defined(_WIN32)
#define _FILE_OFFSET_BITS 64 /* offsets past 2 GiB on 32-bit builds */
#define _POSIX_C_SOURCE   200809L
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

#if defined(_WIN32)
typedef __int64 ox_off;
#define ox_fseek _fseeki64
#define ox_ftell _ftelli64
#else
#include <sys/types.h>
typedef off_t ox_off;
#define ox_fseek fseeko
#define ox_ftell ftello
#endif

#define OX_PATH_MAX 4096

/* A location is a relative path inside the model's directory: not empty, not absolute (no
 * leading separator, no drive letter), no '..' component. */
static int location_is_inside(const char *loc)
{
    const char *c = loc;
    if (!*loc || *loc == '/' || *loc == '\\' || strchr(loc, ':'))
        return 0;
    while (*c) {
        size_t len = strcspn(c, "/\\");
        if (len == 2 && c[0] == '.' && c[1] == '.')
            return 0;
        c += len;
        c += *c != '\0';
    }
    return 1;
}

/* A decimal count of bytes, the whole string (an offset or a length), or -1. */
static long long parse_count(const char *s)
{
    char *end;
    long long v;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    return errno || *end ? -1 : v;
}

static nnop_status read_at(ox_ctx *ox, const char *name, const char *path, long long offset,
                           size_t want, unsigned char *buf)
{
    FILE *f = fopen(path, "rb");
    ox_off size;
    size_t got;
    if (!f)
        return ox_fail(ox, NNOP_ERR_IO, "tensor '%s': cannot open its external data '%s'", name,
                       path);
    if (ox_fseek(f, 0, SEEK_END) != 0 || (size = ox_ftell(f)) < 0) {
        fclose(f);
        return ox_fail(ox, NNOP_ERR_IO, "tensor '%s': cannot read '%s' (not a regular file?)", name,
                       path);
    }
    if ((long long)size < offset || (unsigned long long)((long long)size - offset) < want) {
        fclose(f);
        return ox_fail(ox, NNOP_ERR_FORMAT,
                       "tensor '%s': its external data '%s' holds %lld bytes, the tensor needs "
                       "%zu from offset %lld",
                       name, path, (long long)size, want, offset);
    }
    got = ox_fseek(f, (ox_off)offset, SEEK_SET) == 0 ? fread(buf, 1, want, f) : 0;
    fclose(f);
    if (got != want)
        return ox_fail(ox, NNOP_ERR_IO, "tensor '%s': cannot read %zu bytes of '%s'", name, want,
                       path);
    return NNOP_OK;
}

nnop_status ox_external_read(ox_ctx *ox, const Onnx__TensorProto *p, const char *name, size_t want,
                             unsigned char **out)
{
    const char *loc = NULL;
    long long offset = 0, length = -1;
    char path[OX_PATH_MAX];
    unsigned char *buf;
    nnop_status s;
    size_t k;
    *out = NULL;
    for (k = 0; k < p->n_external_data; k++) {
        const Onnx__StringStringEntryProto *e = p->external_data[k];
        if (!e->key || !e->value)
            continue;
        if (strcmp(e->key, "location") == 0)
            loc = e->value;
        else if (strcmp(e->key, "offset") == 0 && (offset = parse_count(e->value)) < 0)
            return ox_fail(ox, NNOP_ERR_FORMAT, "tensor '%s': external data offset '%s'", name,
                           e->value);
        else if (strcmp(e->key, "length") == 0 && (length = parse_count(e->value)) < 0)
            return ox_fail(ox, NNOP_ERR_FORMAT, "tensor '%s': external data length '%s'", name,
                           e->value);
    }
    if (!loc)
        return ox_fail(ox, NNOP_ERR_FORMAT, "tensor '%s': external data without a location", name);
    if (!ox->dir)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "tensor '%s': its data is in the file '%s' beside the model; a model "
                       "loaded from memory has no directory to find it in (load it with "
                       "nnop_onnx_load_file)",
                       name, loc);
    if (!location_is_inside(loc))
        return ox_fail(ox, NNOP_ERR_FORMAT,
                       "tensor '%s': external data location '%s' is not a file under the "
                       "model's directory (absolute, or through '..')",
                       name, loc);
    if (length >= 0 && (unsigned long long)length != (unsigned long long)want)
        return ox_fail(ox, NNOP_ERR_FORMAT,
                       "tensor '%s': external data length %lld, its dims need %zu bytes", name,
                       length, want);
    if ((size_t)snprintf(path, sizeof path, "%s/%s", ox->dir, loc) >= sizeof path)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "tensor '%s': external data path too long", name);
    buf = (unsigned char *)malloc(want ? want : 1);
    if (!buf)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "tensor '%s': %zu bytes for its external data",
                       name, want);
    s = read_at(ox, name, path, offset, want, buf);
    if (s) {
        free(buf);
        return s;
    }
    *out = buf;
    return NNOP_OK;
}
