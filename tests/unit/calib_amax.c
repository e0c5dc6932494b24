/* calib_amax.c: the amax nnop_calibrate gives the float32 values of a raw file by a method,
 * printed with nine digits; calib_entropy_check.py compares it with NumPy.
 *   calib_amax FILE COUNT max|percentile|entropy */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop/nnop.h"

int main(int argc, char **argv)
{
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_calib_table *t = NULL;
    nnop_calib_options o;
    nnop_tensor_desc d;
    const void *in[1];
    const void *const *batches[1];
    float *x, amax = -1.0f;
    long n = argc == 4 ? atol(argv[2]) : 0;
    FILE *f;
    int rc = 1;
    if (n < 1)
        return 2;
    x = (float *)malloc((size_t)n * sizeof *x);
    f = fopen(argv[1], "rb");
    if (!x || !f || fread(x, sizeof *x, (size_t)n, f) != (size_t)n)
        return 2;
    fclose(f);
    nnop_calib_options_init(&o);
    o.method = strcmp(argv[3], "max") == 0          ? NNOP_CALIB_MAX
               : strcmp(argv[3], "percentile") == 0 ? NNOP_CALIB_PERCENTILE
                                                    : NNOP_CALIB_ENTROPY;
    d = nnop_tensor_1d(NNOP_F32, n);
    in[0] = x;
    batches[0] = in;
    if (nnop_context_create(NULL, &ctx) == NNOP_OK && nnop_graph_create(ctx, &g) == NNOP_OK &&
        nnop_output(g, nnop_act(g, nnop_input(g, "x", &d), NNOP_ACT_RELU, 0.0f), "y") == NNOP_OK &&
        nnop_calibrate(g, &o, batches, 1, &t) == NNOP_OK &&
        nnop_calib_table_find(t, "x", &amax) == NNOP_OK) {
        printf("%.9g\n", (double)amax);
        rc = 0;
    } else {
        fprintf(stderr, "calib_amax: %s\n", nnop_context_last_error(ctx));
    }
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
    free(x);
    return rc;
}
