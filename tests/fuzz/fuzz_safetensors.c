/* fuzz_safetensors.c: the examples' safetensors reader on any bytes: a status, never a
 * crash, a leak or a read outside the buffer; what it accepts reads back as float32. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    safetensors_file *f = NULL;
    int i;
    if (safetensors_parse(data, size, "fuzz", &f, err, sizeof err) != NNOP_OK) {
        if (f)
            abort(); /* a failed parse hands nothing out */
        return 0;
    }
    for (i = 0; i < f->n_tensors; i++) {
        const safetensors_tensor *t = &f->tensors[i];
        int64_t n = 1;
        int k;
        float *dst;
        if (safetensors_find(f, t->name) == NULL)
            abort();
        for (k = 0; k < t->ndim; k++)
            n *= t->shape[k];
        if (n > ((int64_t)1 << 20))
            continue; /* the reader checked the bytes exist; no need to copy huge ones */
        dst = (float *)malloc((size_t)(n ? n : 1) * sizeof *dst); /* exact size: ASan checks */
        if (dst)
            (void)safetensors_read_f32(f, t->name, t->ndim, t->shape, dst, err, sizeof err);
        free(dst);
    }
    safetensors_close(f);
    return 0;
}
