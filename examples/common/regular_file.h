/* regular_file.h: open a file for reading only when it is a regular file (never blocking on a
 * FIFO or device, refusing directories), with its size: the examples' loaders (IDX,
 * safetensors) check sizes against headers before reading. */
#ifndef NNOP_EXAMPLES_REGULAR_FILE_H
#define NNOP_EXAMPLES_REGULAR_FILE_H

#include <stdint.h>
#include <stdio.h>

#include "nnop/nnop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *out open for reading ("rb") and *size its bytes, or NNOP_ERR_IO with the reason in err
 * ("cannot open", "is a directory", "is not a regular file"). */
nnop_status regular_file_open(const char *path, FILE **out, uint64_t *size, char *err,
                              size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_EXAMPLES_REGULAR_FILE_H */
