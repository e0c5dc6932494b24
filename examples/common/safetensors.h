/* safetensors.h: a validating reader for safetensors weight files (the format of PyTorch's
 * safetensors package and the Hugging Face hub), for the examples and their tests.
 *
 * File layout: 8 bytes little-endian u64 N, then N bytes of JSON header, then the data
 * region. The header is an object mapping tensor names to {"dtype", "shape",
 * "data_offsets": [begin, end]} (offsets relative to the data region), plus an optional
 * "__metadata__" object of string values.
 *
 * safetensors_open() checks everything before it returns a file: the header length fits the
 * file, the header is one JSON object (parsed with cJSON) of well-formed entries, dtypes are
 * F32, F16 or BF16, shapes are non-negative integers whose element count matches the byte
 * range, every range lies inside the data region, no two ranges overlap and together they
 * cover the data region exactly, and no name appears twice. Every failure gives a status and
 * a message naming the file, the tensor and the problem. */
#ifndef NNOP_EXAMPLES_SAFETENSORS_H
#define NNOP_EXAMPLES_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "nnop/nnop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest JSON header accepted (the reference implementation's limit too). */
#define SAFETENSORS_MAX_HEADER_BYTES (100u * 1024u * 1024u)
/* Room for error messages: pass a buffer of this size. */
#define SAFETENSORS_ERROR_LEN 512

typedef struct safetensors_tensor {
    char *name;
    nnop_dtype dtype;
    int ndim; /* 0 .. NNOP_MAX_DIMS */
    int64_t shape[NNOP_MAX_DIMS];
    int64_t count; /* elements (1 for a scalar) */
    size_t offset; /* byte offset in the data region */
    size_t bytes;  /* byte length */
} safetensors_tensor;

typedef struct safetensors_file {
    char *path;          /* as given to open (or "<memory>") */
    unsigned char *data; /* the data region (malloc'ed, so 16-byte aligned) */
    size_t data_bytes;
    safetensors_tensor *tensors; /* in header order */
    int n_tensors;
    char **meta_keys, **meta_values; /* __metadata__ */
    int n_meta;
} safetensors_file;

/* Read and validate a file. On failure *out is NULL and err (may be NULL) holds the reason:
 * NNOP_ERR_IO (cannot open or read), NNOP_ERR_FORMAT (malformed file),
 * NNOP_ERR_OUT_OF_MEMORY, NNOP_ERR_INVALID_ARGUMENT (NULL path or out). */
nnop_status safetensors_open(const char *path, safetensors_file **out, char *err, size_t err_len);
/* The same for a whole file image in memory (copied); name is used in messages. */
nnop_status safetensors_parse(const void *bytes, size_t size, const char *name,
                              safetensors_file **out, char *err, size_t err_len);
/* Free a file (NULL is fine). */
void safetensors_close(safetensors_file *f);

/* The tensor called name, or NULL. */
const safetensors_tensor *safetensors_find(const safetensors_file *f, const char *name);
/* A __metadata__ value, or NULL. */
const char *safetensors_metadata(const safetensors_file *f, const char *key);

/* Look up a tensor the caller needs with the shape it needs (ndim dims in shape) and copy it
 * as float32 into dst (count elements, converted from F16/BF16 where needed). Gives
 * NNOP_ERR_FORMAT with "tensor 'x' is missing ..." or NNOP_ERR_SHAPE with "tensor 'x' has
 * shape [..] in the file, the model needs [..]". dst may be NULL to check only. */
nnop_status safetensors_read_f32(const safetensors_file *f, const char *name, int ndim,
                                 const int64_t *shape, float *dst, char *err, size_t err_len);

/* "[2, 3, 4]" into buf; returns buf. */
const char *safetensors_shape_string(int ndim, const int64_t *shape, char *buf, size_t len);
/* Name of a dtype as written in files ("F32", "F16", "BF16"). */
const char *safetensors_dtype_name(nnop_dtype t);

/* Write a file of float32 tensors (for tests and tools): names[i] with shapes[i] (ndims[i]
 * dims) and data[i]; metadata key/value pairs may be NULL when n_meta is 0. */
nnop_status safetensors_write_f32(const char *path, int n, const char *const *names,
                                  const int *ndims, const int64_t *const *shapes,
                                  const float *const *data, int n_meta,
                                  const char *const *meta_keys, const char *const *meta_values,
                                  char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_EXAMPLES_SAFETENSORS_H */
