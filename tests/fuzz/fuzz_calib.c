/* fuzz_calib.c: libFuzzer target for the calibration table parser (nnop_calib_table_load's).
 * Whatever the bytes, it must not read out of bounds or allocate beyond what the text can
 * hold, and a table it accepts has unique nonempty names and finite amax >= 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nnop_calib_table *t = NULL;
    int32_t i, k;
    if (nnop__calib_table_parse(NULL, "fuzz", (const char *)data, size, &t) != NNOP_OK) {
        if (t)
            abort();
        return 0;
    }
    if (!t || (size_t)nnop_calib_table_count(t) > size / 3)
        abort();
    for (i = 0; i < t->n; i++) {
        if (!t->entry[i].name[0] || !isfinite(t->entry[i].amax) || t->entry[i].amax < 0.0f)
            abort();
        for (k = 0; k < i; k++)
            if (strcmp(t->entry[i].name, t->entry[k].name) == 0)
                abort();
    }
    nnop_calib_table_destroy(t);
    return 0;
}
