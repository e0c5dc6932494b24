/* safetensors.c: validating safetensors reader (JSON header parsed with cJSON) and a small
 * float32 writer. See safetensors.h for the checks. */
#include "safetensors.h"
#include "errbuf.h"
#include "regular_file.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers in JSON numbers are exact up to 2^53. */
#define ST_MAX_JSON_INT 9007199254740992.0
/* Largest file safetensors_open reads (the bundled weights are under 1 MiB, ResNet-50's ~100 MiB)
 */
#define SAFETENSORS_MAX_FILE_BYTES ((uint64_t)4 << 30)

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

const char *safetensors_dtype_name(nnop_dtype t)
{
    switch (t) {
    case NNOP_F32:
        return "F32";
    case NNOP_F16:
        return "F16";
    case NNOP_BF16:
        return "BF16";
    case NNOP_F8E4M3:
        return "F8_E4M3";
    case NNOP_F8E5M2:
        return "F8_E5M2";
    case NNOP_I8:
        return "I8";
    }
    return "?";
}

const char *safetensors_shape_string(int ndim, const int64_t *shape, char *buf, size_t len)
{
    size_t used = 0;
    int i;
    if (!buf || len == 0)
        return "";
    buf[0] = '\0';
    used += (size_t)snprintf(buf, len, "[");
    for (i = 0; i < ndim && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "",
                                 (long long)shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
    return buf;
}

/* dtype names of the format that nnop does not read, for a clearer message. */
static int known_unsupported_dtype(const char *s)
{
    static const char *const names[] = {
            "F64",  "I64",     "I32",     "I16",     "I8", "U64",     "U32",     "U16", "U8",
            "BOOL", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0)
            return 1;
    return 0;
}

void safetensors_close(safetensors_file *f)
{
    int i;
    if (!f)
        return;
    for (i = 0; i < f->n_tensors; i++)
        free(f->tensors[i].name);
    for (i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->tensors);
    free(f->meta_keys);
    free(f->meta_values);
    free(f->data);
    free(f->path);
    free(f);
}

/* A non-negative integer JSON number (exact in a double). what names it in messages. */
static int json_uint(const cJSON *item, uint64_t *out, const char *file, const char *tensor,
                     const char *what, char *err, size_t err_len)
{
    double d;
    if (!cJSON_IsNumber(item)) {
        errbuf_set(err, err_len, "%s: tensor '%s': %s is not a number", file, tensor, what);
        return 0;
    }
    d = item->valuedouble;
    if (d != d || d < 0.0) {
        errbuf_set(err, err_len, "%s: tensor '%s': %s is negative (%g)", file, tensor, what, d);
        return 0;
    }
    if (d > ST_MAX_JSON_INT) {
        errbuf_set(err, err_len, "%s: tensor '%s': %s is too large (%g)", file, tensor, what, d);
        return 0;
    }
    if ((double)(uint64_t)d != d) {
        errbuf_set(err, err_len, "%s: tensor '%s': %s is not an integer (%g)", file, tensor, what,
                   d);
        return 0;
    }
    *out = (uint64_t)d;
    return 1;
}

static nnop_status parse_entry(safetensors_tensor *t, const cJSON *entry, const char *file,
                               size_t data_bytes, char *err, size_t err_len)
{
    const char *name = t->name;
    const cJSON *dtype, *shape, *offsets, *dim;
    uint64_t begin, end, count = 1, esize, need;
    char shape_buf[160];
    if (!cJSON_IsObject(entry)) {
        errbuf_set(err, err_len, "%s: tensor '%s': header entry is not a JSON object", file, name);
        return NNOP_ERR_FORMAT;
    }
    dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
    shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
    offsets = cJSON_GetObjectItemCaseSensitive(entry, "data_offsets");
    if (!dtype || !shape || !offsets) {
        errbuf_set(err, err_len, "%s: tensor '%s': header entry lacks \"%s\"", file, name,
                   !dtype   ? "dtype"
                   : !shape ? "shape"
                            : "data_offsets");
        return NNOP_ERR_FORMAT;
    }
    if (!cJSON_IsString(dtype)) {
        errbuf_set(err, err_len, "%s: tensor '%s': \"dtype\" is not a string", file, name);
        return NNOP_ERR_FORMAT;
    }
    if (strcmp(dtype->valuestring, "F32") == 0)
        t->dtype = NNOP_F32;
    else if (strcmp(dtype->valuestring, "F16") == 0)
        t->dtype = NNOP_F16;
    else if (strcmp(dtype->valuestring, "BF16") == 0)
        t->dtype = NNOP_BF16;
    else {
        errbuf_set(err, err_len,
                   "%s: tensor '%s': %s dtype '%.32s' (nnop reads F32, F16 and "
                   "BF16)",
                   file, name,
                   known_unsupported_dtype(dtype->valuestring) ? "unsupported" : "unknown",
                   dtype->valuestring);
        return NNOP_ERR_FORMAT;
    }
    esize = nnop_dtype_size(t->dtype);
    if (!cJSON_IsArray(shape)) {
        errbuf_set(err, err_len, "%s: tensor '%s': \"shape\" is not an array", file, name);
        return NNOP_ERR_FORMAT;
    }
    if (cJSON_GetArraySize(shape) > NNOP_MAX_DIMS) {
        errbuf_set(err, err_len, "%s: tensor '%s': shape has %d dims, more than %d", file, name,
                   cJSON_GetArraySize(shape), NNOP_MAX_DIMS);
        return NNOP_ERR_FORMAT;
    }
    t->ndim = 0;
    cJSON_ArrayForEach(dim, shape)
    {
        uint64_t v;
        char what[32];
        snprintf(what, sizeof what, "shape[%d]", t->ndim);
        if (!json_uint(dim, &v, file, name, what, err, err_len))
            return NNOP_ERR_FORMAT;
        t->shape[t->ndim++] = (int64_t)v;
        if (v != 0 && count > (uint64_t)SIZE_MAX / esize / v) {
            errbuf_set(err, err_len, "%s: tensor '%s': shape %s is too large", file, name,
                       safetensors_shape_string(t->ndim, t->shape, shape_buf, sizeof shape_buf));
            return NNOP_ERR_FORMAT;
        }
        count *= v;
    }
    t->count = (int64_t)count;
    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2) {
        errbuf_set(err, err_len, "%s: tensor '%s': \"data_offsets\" is not an array [begin, end]",
                   file, name);
        return NNOP_ERR_FORMAT;
    }
    if (!json_uint(cJSON_GetArrayItem(offsets, 0), &begin, file, name, "data_offsets[0]", err,
                   err_len) ||
        !json_uint(cJSON_GetArrayItem(offsets, 1), &end, file, name, "data_offsets[1]", err,
                   err_len))
        return NNOP_ERR_FORMAT;
    if (end < begin) {
        errbuf_set(err, err_len,
                   "%s: tensor '%s': data_offsets [%llu, %llu] end before they "
                   "begin",
                   file, name, (unsigned long long)begin, (unsigned long long)end);
        return NNOP_ERR_FORMAT;
    }
    if (end > data_bytes) {
        errbuf_set(err, err_len,
                   "%s: tensor '%s': data_offsets [%llu, %llu] lie outside the "
                   "data region of %llu bytes (truncated file?)",
                   file, name, (unsigned long long)begin, (unsigned long long)end,
                   (unsigned long long)data_bytes);
        return NNOP_ERR_FORMAT;
    }
    need = count * esize;
    if (end - begin != need) {
        errbuf_set(err, err_len,
                   "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes but "
                   "shape %s of %s needs %llu",
                   file, name, (unsigned long long)begin, (unsigned long long)end,
                   (unsigned long long)(end - begin),
                   safetensors_shape_string(t->ndim, t->shape, shape_buf, sizeof shape_buf),
                   dtype->valuestring, (unsigned long long)need);
        return NNOP_ERR_FORMAT;
    }
    t->offset = (size_t)begin;
    t->bytes = (size_t)(end - begin);
    return NNOP_OK;
}

static nnop_status parse_metadata(safetensors_file *f, const cJSON *meta, char *err, size_t err_len)
{
    const cJSON *item;
    int n = cJSON_GetArraySize(meta), i = 0;
    if (!cJSON_IsObject(meta)) {
        errbuf_set(err, err_len, "%s: \"__metadata__\" is not a JSON object", f->path);
        return NNOP_ERR_FORMAT;
    }
    if (n == 0)
        return NNOP_OK;
    f->meta_keys = (char **)calloc((size_t)n, sizeof *f->meta_keys);
    f->meta_values = (char **)calloc((size_t)n, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values)
        return NNOP_ERR_OUT_OF_MEMORY;
    cJSON_ArrayForEach(item, meta)
    {
        if (!cJSON_IsString(item)) {
            errbuf_set(err, err_len, "%s: \"__metadata__\" value of '%s' is not a string", f->path,
                       item->string);
            return NNOP_ERR_FORMAT;
        }
        f->meta_keys[i] = dup_string(item->string);
        f->meta_values[i] = dup_string(item->valuestring);
        f->n_meta = ++i;
        if (!f->meta_keys[i - 1] || !f->meta_values[i - 1])
            return NNOP_ERR_OUT_OF_MEMORY;
    }
    return NNOP_OK;
}

static int by_name(const void *a, const void *b)
{
    const safetensors_tensor *x = *(const safetensors_tensor *const *)a;
    const safetensors_tensor *y = *(const safetensors_tensor *const *)b;
    return strcmp(x->name, y->name);
}

static int by_offset(const void *a, const void *b)
{
    const safetensors_tensor *x = *(const safetensors_tensor *const *)a;
    const safetensors_tensor *y = *(const safetensors_tensor *const *)b;
    size_t xe = x->offset + x->bytes, ye = y->offset + y->bytes;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (xe != ye)
        return xe < ye ? -1 : 1;
    return 0;
}

/* Unique names, no overlaps, no holes, the data region covered exactly. */
static nnop_status check_layout(safetensors_file *f, char *err, size_t err_len)
{
    safetensors_tensor **order;
    size_t pos = 0;
    int i;
    nnop_status st = NNOP_OK;
    if (f->n_tensors == 0) {
        if (f->data_bytes != 0) {
            errbuf_set(err, err_len, "%s: no tensors in the header but %llu bytes of data", f->path,
                       (unsigned long long)f->data_bytes);
            return NNOP_ERR_FORMAT;
        }
        return NNOP_OK;
    }
    order = (safetensors_tensor **)malloc((size_t)f->n_tensors * sizeof *order);
    if (!order)
        return NNOP_ERR_OUT_OF_MEMORY;
    for (i = 0; i < f->n_tensors; i++)
        order[i] = &f->tensors[i];
    qsort(order, (size_t)f->n_tensors, sizeof *order, by_name);
    for (i = 1; i < f->n_tensors; i++) {
        if (strcmp(order[i - 1]->name, order[i]->name) == 0) {
            errbuf_set(err, err_len, "%s: tensor '%s' appears twice in the header", f->path,
                       order[i]->name);
            free(order);
            return NNOP_ERR_FORMAT;
        }
    }
    qsort(order, (size_t)f->n_tensors, sizeof *order, by_offset);
    for (i = 0; i < f->n_tensors && st == NNOP_OK; i++) {
        const safetensors_tensor *t = order[i];
        if (t->offset < pos) {
            errbuf_set(err, err_len,
                       "%s: tensor '%s' (data_offsets [%llu, %llu]) overlaps "
                       "tensor '%s' (data_offsets [%llu, %llu])",
                       f->path, t->name, (unsigned long long)t->offset,
                       (unsigned long long)(t->offset + t->bytes), order[i - 1]->name,
                       (unsigned long long)order[i - 1]->offset,
                       (unsigned long long)(order[i - 1]->offset + order[i - 1]->bytes));
            st = NNOP_ERR_FORMAT;
        } else if (t->offset > pos) {
            errbuf_set(err, err_len,
                       "%s: bytes [%llu, %llu) of the data region before tensor "
                       "'%s' belong to no tensor (a hole)",
                       f->path, (unsigned long long)pos, (unsigned long long)t->offset, t->name);
            st = NNOP_ERR_FORMAT;
        }
        pos = t->offset + t->bytes;
    }
    if (st == NNOP_OK && pos != f->data_bytes) {
        errbuf_set(err, err_len,
                   "%s: the last %llu bytes of the data region belong to no tensor "
                   "(after tensor '%s')",
                   f->path, (unsigned long long)(f->data_bytes - pos),
                   order[f->n_tensors - 1]->name);
        st = NNOP_ERR_FORMAT;
    }
    free(order);
    return st;
}

static int is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static nnop_status parse_header(safetensors_file *f, const char *hdr, size_t hdr_bytes, char *err,
                                size_t err_len)
{
    const char *end = NULL;
    const cJSON *item;
    cJSON *root;
    nnop_status st = NNOP_OK;
    size_t i;
    int n, seen_meta = 0;
    if (hdr_bytes == 0 || hdr[0] != '{') {
        errbuf_set(err, err_len,
                   "%s: the header does not start with '{': not a safetensors "
                   "file, or a corrupt one",
                   f->path);
        return NNOP_ERR_FORMAT;
    }
    root = cJSON_ParseWithLengthOpts(hdr, hdr_bytes, &end, 0);
    if (!root) {
        size_t at = end && end >= hdr && end <= hdr + hdr_bytes ? (size_t)(end - hdr) : 0;
        size_t show = hdr_bytes - at < 24 ? hdr_bytes - at : 24;
        char snippet[32];
        for (i = 0; i < show; i++)
            snippet[i] = (hdr[at + i] >= 32 && hdr[at + i] < 127) ? hdr[at + i] : '?';
        snippet[show] = '\0';
        errbuf_set(err, err_len,
                   "%s: the JSON header (%llu bytes) is invalid near byte %llu: "
                   "\"%s\"",
                   f->path, (unsigned long long)hdr_bytes, (unsigned long long)at, snippet);
        return NNOP_ERR_FORMAT;
    }
    for (i = (size_t)(end - hdr); i < hdr_bytes; i++) {
        if (!is_json_space(hdr[i])) {
            errbuf_set(err, err_len,
                       "%s: unexpected bytes after the JSON header object at byte "
                       "%llu of %llu",
                       f->path, (unsigned long long)i, (unsigned long long)hdr_bytes);
            cJSON_Delete(root);
            return NNOP_ERR_FORMAT;
        }
    }
    if (!cJSON_IsObject(root)) {
        errbuf_set(err, err_len, "%s: the JSON header is not an object", f->path);
        cJSON_Delete(root);
        return NNOP_ERR_FORMAT;
    }
    n = 0;
    cJSON_ArrayForEach(item, root)
    {
        if (strcmp(item->string, "__metadata__") != 0)
            n++;
    }
    f->tensors = n ? (safetensors_tensor *)calloc((size_t)n, sizeof *f->tensors) : NULL;
    if (n && !f->tensors) {
        cJSON_Delete(root);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    cJSON_ArrayForEach(item, root)
    {
        if (strcmp(item->string, "__metadata__") == 0) {
            if (seen_meta++) { /* an empty first one ({}) leaves no keys: count it here */
                errbuf_set(err, err_len, "%s: \"__metadata__\" appears twice", f->path);
                st = NNOP_ERR_FORMAT;
            } else {
                st = parse_metadata(f, item, err, err_len);
            }
        } else {
            safetensors_tensor *t = &f->tensors[f->n_tensors];
            t->name = dup_string(item->string);
            if (!t->name) {
                st = NNOP_ERR_OUT_OF_MEMORY;
                break;
            }
            f->n_tensors++;
            st = parse_entry(t, item, f->path, f->data_bytes, err, err_len);
        }
        if (st != NNOP_OK)
            break;
    }
    cJSON_Delete(root);
    if (st == NNOP_OK)
        st = check_layout(f, err, err_len);
    return st;
}

nnop_status safetensors_parse(const void *bytes, size_t size, const char *name,
                              safetensors_file **out, char *err, size_t err_len)
{
    const unsigned char *b = (const unsigned char *)bytes;
    safetensors_file *f;
    uint64_t hlen = 0;
    nnop_status st;
    int i;
    errbuf_set(err, err_len, "%s", "");
    if (!out) {
        errbuf_set(err, err_len, "safetensors_parse: out is NULL");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    if (!bytes && size) {
        errbuf_set(err, err_len, "safetensors_parse: bytes is NULL");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (!name)
        name = "<memory>";
    if (size < 8) {
        errbuf_set(err, err_len,
                   "%s: file is %llu bytes, too short for the 8-byte header "
                   "length (empty or truncated file)",
                   name, (unsigned long long)size);
        return NNOP_ERR_FORMAT;
    }
    for (i = 7; i >= 0; i--)
        hlen = (hlen << 8) | b[i];
    if (hlen == 0) {
        errbuf_set(err, err_len, "%s: header length is 0", name);
        return NNOP_ERR_FORMAT;
    }
    if (hlen > SAFETENSORS_MAX_HEADER_BYTES) {
        errbuf_set(err, err_len,
                   "%s: header length %llu exceeds the limit of %u bytes (not a "
                   "safetensors file?)",
                   name, (unsigned long long)hlen, SAFETENSORS_MAX_HEADER_BYTES);
        return NNOP_ERR_FORMAT;
    }
    if (hlen > size - 8) {
        errbuf_set(err, err_len,
                   "%s: header length %llu runs past the end of the file (%llu "
                   "bytes follow the length field): truncated file?",
                   name, (unsigned long long)hlen, (unsigned long long)(size - 8));
        return NNOP_ERR_FORMAT;
    }
    f = (safetensors_file *)calloc(1, sizeof *f);
    if (!f || !(f->path = dup_string(name))) {
        free(f);
        errbuf_set(err, err_len, "%s: out of memory", name);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    f->data_bytes = size - 8 - (size_t)hlen;
    st = parse_header(f, (const char *)b + 8, (size_t)hlen, err, err_len);
    if (st == NNOP_OK) {
        f->data = (unsigned char *)malloc(f->data_bytes ? f->data_bytes : 1);
        if (!f->data)
            st = NNOP_ERR_OUT_OF_MEMORY;
        else if (f->data_bytes)
            memcpy(f->data, b + 8 + hlen, f->data_bytes);
    }
    if (st == NNOP_ERR_OUT_OF_MEMORY)
        errbuf_set(err, err_len, "%s: out of memory", name);
    if (st != NNOP_OK) {
        safetensors_close(f);
        return st;
    }
    *out = f;
    return NNOP_OK;
}

nnop_status safetensors_open(const char *path, safetensors_file **out, char *err, size_t err_len)
{
    FILE *fp;
    unsigned char *buf = NULL;
    size_t size = 0, cap = 0;
    uint64_t file_size = 0;
    nnop_status st;
    if (out)
        *out = NULL;
    if (!path || !out) {
        errbuf_set(err, err_len, "safetensors_open: %s is NULL", !path ? "path" : "out");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    /* a regular file of a known size only: /dev/zero once grew the buffer until memory ran out */
    st = regular_file_open(path, &fp, &file_size, err, err_len);
    if (st != NNOP_OK)
        return st;
    if (file_size > SAFETENSORS_MAX_FILE_BYTES || file_size > (uint64_t)(SIZE_MAX - 1)) {
        fclose(fp);
        errbuf_set(err, err_len, "%s: file of %llu bytes is larger than the %llu bytes accepted",
                   path, (unsigned long long)file_size,
                   (unsigned long long)SAFETENSORS_MAX_FILE_BYTES);
        return NNOP_ERR_FORMAT;
    }
    cap = (size_t)file_size;
    buf = (unsigned char *)malloc(cap ? cap : 1);
    if (!buf) {
        fclose(fp);
        errbuf_set(err, err_len, "%s: out of memory reading the file", path);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    size = fread(buf, 1, cap, fp); /* a file that shrank meanwhile parses as truncated */
    if (ferror(fp)) {
        free(buf);
        fclose(fp);
        errbuf_set(err, err_len, "%s: read error", path);
        return NNOP_ERR_IO;
    }
    fclose(fp);
    st = safetensors_parse(buf, size, path, out, err, err_len);
    free(buf);
    return st;
}

const safetensors_tensor *safetensors_find(const safetensors_file *f, const char *name)
{
    int i;
    if (!f || !name)
        return NULL;
    for (i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}

const char *safetensors_metadata(const safetensors_file *f, const char *key)
{
    int i;
    if (!f || !key)
        return NULL;
    for (i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta_keys[i], key) == 0)
            return f->meta_values[i];
    return NULL;
}

nnop_status safetensors_read_f32(const safetensors_file *f, const char *name, int ndim,
                                 const int64_t *shape, float *dst, char *err, size_t err_len)
{
    const safetensors_tensor *t;
    const unsigned char *src;
    char have[160], want[160];
    int i, same;
    int64_t k;
    if (!f || !name || ndim < 0 || ndim > NNOP_MAX_DIMS || (ndim && !shape)) {
        errbuf_set(err, err_len, "safetensors_read_f32: invalid argument");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    t = safetensors_find(f, name);
    if (!t) {
        errbuf_set(err, err_len,
                   "%s: tensor '%s' is missing (the file has %d tensors; is it "
                   "the right model?)",
                   f->path, name, f->n_tensors);
        return NNOP_ERR_FORMAT;
    }
    same = t->ndim == ndim;
    for (i = 0; same && i < ndim; i++)
        same = t->shape[i] == shape[i];
    if (!same) {
        errbuf_set(err, err_len, "%s: tensor '%s' has shape %s in the file, the model needs %s",
                   f->path, name, safetensors_shape_string(t->ndim, t->shape, have, sizeof have),
                   safetensors_shape_string(ndim, shape, want, sizeof want));
        return NNOP_ERR_SHAPE;
    }
    if (!dst)
        return NNOP_OK;
    src = f->data + t->offset;
    /* Bytes are little-endian in the file; assemble them so any host reads them right. */
    for (k = 0; k < t->count; k++) {
        if (t->dtype == NNOP_F32) {
            const unsigned char *p = src + 4 * k;
            uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                         (uint32_t)p[3] << 24;
            memcpy(&dst[k], &u, 4);
        } else {
            const unsigned char *p = src + 2 * k;
            uint16_t u = (uint16_t)(p[0] | p[1] << 8);
            nnop_status st = nnop_convert(t->dtype, &u, NNOP_F32, &dst[k], 1);
            if (st != NNOP_OK) {
                errbuf_set(err, err_len, "%s: tensor '%s': conversion from %s failed", f->path,
                           name, safetensors_dtype_name(t->dtype));
                return st;
            }
        }
    }
    return NNOP_OK;
}

static int write_all(FILE *fp, const void *p, size_t n)
{
    return fwrite(p, 1, n, fp) == n;
}

nnop_status safetensors_write_f32(const char *path, int n, const char *const *names,
                                  const int *ndims, const int64_t *const *shapes,
                                  const float *const *data, int n_meta,
                                  const char *const *meta_keys, const char *const *meta_values,
                                  char *err, size_t err_len)
{
    cJSON *root = NULL, *meta, *entry, *arr;
    char *json = NULL;
    size_t jlen, padded, offset = 0;
    unsigned char len_bytes[8];
    FILE *fp = NULL;
    nnop_status st = NNOP_ERR_OUT_OF_MEMORY;
    int i, d;
    errbuf_set(err, err_len, "%s", "");
    if (!path || n < 0 || (n && (!names || !ndims || !shapes || !data)) ||
        (n_meta && (!meta_keys || !meta_values))) {
        errbuf_set(err, err_len, "safetensors_write_f32: invalid argument");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    root = cJSON_CreateObject();
    if (!root)
        goto done;
    if (n_meta > 0) {
        meta = cJSON_AddObjectToObject(root, "__metadata__");
        if (!meta)
            goto done;
        for (i = 0; i < n_meta; i++)
            if (!cJSON_AddStringToObject(meta, meta_keys[i], meta_values[i]))
                goto done;
    }
    for (i = 0; i < n; i++) {
        int64_t count = 1;
        entry = cJSON_AddObjectToObject(root, names[i]);
        if (!entry || !cJSON_AddStringToObject(entry, "dtype", "F32"))
            goto done;
        arr = cJSON_AddArrayToObject(entry, "shape");
        if (!arr)
            goto done;
        for (d = 0; d < ndims[i]; d++) {
            count *= shapes[i][d];
            if (!cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)shapes[i][d])))
                goto done;
        }
        arr = cJSON_AddArrayToObject(entry, "data_offsets");
        if (!arr || !cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)offset)))
            goto done;
        offset += (size_t)count * 4;
        if (!cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)offset)))
            goto done;
    }
    json = cJSON_PrintUnformatted(root);
    if (!json)
        goto done;
    jlen = strlen(json);
    padded = (jlen + 7) / 8 * 8;
    for (i = 0; i < 8; i++)
        len_bytes[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    fp = fopen(path, "wb");
    if (!fp) {
        errbuf_set(err, err_len, "%s: cannot create the file", path);
        st = NNOP_ERR_IO;
        goto done;
    }
    st = NNOP_ERR_IO;
    if (!write_all(fp, len_bytes, 8) || !write_all(fp, json, jlen) ||
        !write_all(fp, "        ", padded - jlen))
        goto done;
    for (i = 0; i < n; i++) {
        int64_t count = 1, k;
        for (d = 0; d < ndims[i]; d++)
            count *= shapes[i][d];
        for (k = 0; k < count; k++) {
            uint32_t u;
            unsigned char b[4];
            memcpy(&u, &data[i][k], 4);
            b[0] = (unsigned char)u, b[1] = (unsigned char)(u >> 8);
            b[2] = (unsigned char)(u >> 16), b[3] = (unsigned char)(u >> 24);
            if (!write_all(fp, b, 4))
                goto done;
        }
    }
    if (fclose(fp) != 0) {
        fp = NULL;
        goto done;
    }
    fp = NULL;
    st = NNOP_OK;
done:
    if (st == NNOP_ERR_OUT_OF_MEMORY)
        errbuf_set(err, err_len, "%s: out of memory building the header", path);
    else if (st == NNOP_ERR_IO && err && err[0] == '\0')
        errbuf_set(err, err_len, "%s: write error", path);
    if (fp)
        fclose(fp);
    cJSON_free(json);
    cJSON_Delete(root);
    return st;
}
