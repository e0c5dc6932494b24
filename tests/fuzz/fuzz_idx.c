/* fuzz_idx.c: the examples' IDX reader (MNIST labels and images) on any file: a status, never
 * a crash or a leak; what it accepts has exactly the count and values the header says. The
 * reader takes paths, so the input is written to a file of this process first. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnist.h"
#include "platform/platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok = f && (!size || fwrite(data, 1, size, f) == size);
    if (f && fclose(f) != 0)
        ok = 0;
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[64], path[128], err[MNIST_ERROR_LEN];
    unsigned char *labels = NULL;
    int count = 0, i;
    mnist_set set;
    snprintf(dir, sizeof dir, "nnop_fuzz_idx_%llu", (unsigned long long)nnop__process_id());
    /* labels: the file as it is */
    snprintf(path, sizeof path, "%s-labels-idx1-ubyte", dir);
    if (!write_file(path, data, size))
        abort();
    if (mnist_read_idx1(path, 0, 10, &labels, &count, err, sizeof err) == NNOP_OK) {
        if (count < 0 || (size_t)count + 8 != size)
            abort();
        for (i = 0; i < count; i++)
            if (labels[i] >= 10)
                abort();
        free(labels);
    }
    /* images: the same bytes as a 28x28 image file (prefix "<dir>" in the current folder) */
    snprintf(path, sizeof path, "./%s-images-idx3-ubyte", dir);
    if (!write_file(path, data, size))
        abort();
    if (mnist_load(".", dir, &set, err, sizeof err) == NNOP_OK) {
        if ((size_t)set.count * MNIST_PIXELS + 16 != size)
            abort();
        mnist_free(&set);
    }
    return 0;
}
