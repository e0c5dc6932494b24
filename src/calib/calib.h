/* calib.h: what the calibration files share (issue 45). calibrate.c runs the sample batches
 * and gathers each tensor's maximum and histogram, amax.c holds the methods' options and
 * turns a histogram into an amax by the method asked, table.c holds the result and reads and
 * writes its file. */
#ifndef NNOP_CALIB_H
#define NNOP_CALIB_H

#include "../internal.h"

/* A name as given (NNOP_NAME_LEN) and room for "@<value id>.<k>" when it is taken. */
#define NNOP__CALIB_NAME_LEN (NNOP_NAME_LEN + 24)
/* Bins of the histogram, and the levels an entropy candidate is quantized to (int8's 0..127
 * of one sign, as TensorRT's calibrator uses). */
#define NNOP__CALIB_MIN_BINS 128
#define NNOP__CALIB_MAX_BINS 16384

typedef struct nnop__calib_entry {
    char name[NNOP__CALIB_NAME_LEN];
    float amax;
} nnop__calib_entry;

struct nnop_calib_table {
    nnop_calib_options opts; /* how it was made (method, percentile, bins) */
    int32_t batches;         /* sample batches it was made from */
    int32_t n;
    nnop__calib_entry *entry;
};

/* A table of n entries, names empty and amax 0; NULL when out of memory. */
nnop_calib_table *nnop__calib_table_new(int32_t n);
/* The entries a table of g has, named, amax 0: g's inputs, then each node's result, in order;
 * row[v] (g->n_values of them) is value v's entry, -1 for a constant. NULL when out of memory.
 * nnop_calibrate fills it, a quantized compile looks its names up. */
nnop_calib_table *nnop__calib_table_for_graph(const nnop_graph *g, int32_t *row);
/* nnop_calib_table_load's parser on len bytes of text (path names it in messages; fuzz_calib). */
nnop_status nnop__calib_table_parse(nnop_context *ctx, const char *path, const char *text,
                                    size_t len, nnop_calib_table **out);
/* Why o cannot be used ("" when it can): written to why. */
void nnop__calib_options_check(const nnop_calib_options *o, char *why, size_t len);
/* The amax of a tensor from counts[o->bins] of |x| in equal bins over [0, top], by o->method
 * (NNOP_CALIB_PERCENTILE or NNOP_CALIB_ENTROPY); top itself when nothing was counted. */
float nnop__calib_amax(const nnop_calib_options *o, const uint64_t *counts, float top);
/* The method's name in the table file ("max", "percentile", "entropy"), NULL when unknown;
 * and back (-1 when unknown). */
const char *nnop__calib_method_name(nnop_calib_method m);
int nnop__calib_method_parse(const char *name);

#endif
