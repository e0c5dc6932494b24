/* quant_report.c: the accuracy of int8 and fp8 plans against float32 (issue 45's goals) on
 * the networks of examples/nets with seeded random weights: calibrated on C random images,
 * then N other images through all three plans; per precision, the output's SNR against
 * float32 (dB, over all outputs) and how often the top-1 class is float32's. Quantized plans
 * run on the CPU backend (an exact emulation of the 8-bit steps), so no times are reported.
 *
 *   build/tools/quant_report [--size S] [--calib C] [--images N] [--method percentile|max|entropy]
 *                NET.json...
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop/nnop.h"
#include "vision_graph.h"

typedef struct options {
    int size, calib, images, sensitivity;
    nnop_calib_method method;
    const char *keep[64]; /* --keep: layers left in float32 */
    int n_keep;
} options;

/* Image-like random input: normal(0, 1) per pixel (xorshift and Box-Muller). */
static void fill_image(float *x, size_t n, uint64_t *s)
{
    size_t i;
    for (i = 0; i < n; i++) {
        double u, v;
        *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
        u = ((*s >> 11) + 1.0) / 9007199254740993.0;
        *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
        v = (*s >> 11) / 9007199254740992.0;
        x[i] = (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
    }
}

static size_t argmax(const float *y, size_t n)
{
    size_t i, best = 0;
    for (i = 1; i < n; i++)
        best = y[i] > y[best] ? i : best;
    return best;
}

/* The network of path on a new graph of ctx, one image of size x size; NULL on failure. */
static nnop_graph *build(nnop_context *ctx, const cJSON *j, int size, nnop_tensor_desc *yd)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, size, size);
    nnop_graph *g = NULL;
    nnop_value out;
    char err[512];
    if (nnop_graph_create(ctx, &g) != NNOP_OK)
        return NULL;
    if (vision_graph_build(ctx, g, j, nnop_input(g, "image", &xd), NULL, NNOP_F32, NNOP_NCHW,
                           20261201u, &out, err, sizeof err) != NNOP_OK ||
        nnop_output(g, out, "output") != NNOP_OK || nnop_value_desc(g, out, yd) != NNOP_OK) {
        fprintf(stderr, "quant_report: %s %s\n", err, nnop_context_last_error(ctx));
        nnop_graph_destroy(g);
        return NULL;
    }
    return g;
}

static nnop_calib_table *calibrate(nnop_graph *g, const options *o, size_t pixels)
{
    nnop_calib_options co;
    nnop_calib_table *t = NULL;
    float *x = (float *)malloc((size_t)o->calib * pixels * sizeof *x);
    const void **in = (const void **)malloc((size_t)o->calib * sizeof *in);
    const void *const **batches = (const void *const **)malloc((size_t)o->calib * sizeof *batches);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int b;
    if (x && in && batches) {
        fill_image(x, (size_t)o->calib * pixels, &seed);
        for (b = 0; b < o->calib; b++) {
            in[b] = x + (size_t)b * pixels;
            batches[b] = &in[b];
        }
        nnop_calib_options_init(&co);
        co.method = o->method;
        if (nnop_calibrate(g, &co, batches, o->calib, &t) != NNOP_OK)
            t = NULL;
    }
    free(x);
    free(in);
    free(batches);
    return t;
}

typedef struct layer_snr {
    const char *name;
    double snr;
} layer_snr;

static int by_snr(const void *a, const void *b)
{
    double x = ((const layer_snr *)a)->snr, y = ((const layer_snr *)b)->snr;
    return x < y ? -1 : x > y;
}

/* The SNR of plan q's output against the float outputs want of the same `images` images. */
static double snr_of(nnop_plan *q, const float *want, int images, size_t pixels, size_t ny,
                     float *x, float *y)
{
    double signal = 0.0, noise = 0.0;
    uint64_t seed = 77;
    int i;
    size_t e;
    for (i = 0; i < images; i++) {
        const void *in[1] = {x};
        void *out[1] = {y};
        fill_image(x, pixels, &seed);
        if (nnop_plan_execute(q, in, out) != NNOP_OK)
            return -1.0;
        for (e = 0; e < ny; e++) {
            double d = (double)y[e] - want[(size_t)i * ny + e];
            signal += (double)want[(size_t)i * ny + e] * want[(size_t)i * ny + e];
            noise += d * d;
        }
    }
    return 10.0 * log10(signal / (noise > 0.0 ? noise : 1e-300));
}

/* Each layer quantized to int8 alone (every other node kept float): the ten that cost the
 * most SNR. The table's entries after the input are the nodes' results in order. */
static int sensitivity(nnop_context *ctx, nnop_graph *g, const nnop_calib_table *t, nnop_plan *fp32,
                       size_t pixels, size_t ny)
{
    enum { IMAGES = 16 };
    int n = nnop_calib_table_count(t) - 1, i, k, found = 0, rc = 1;
    const char **keep = (const char **)malloc((size_t)n * sizeof *keep);
    layer_snr *r = (layer_snr *)malloc((size_t)n * sizeof *r);
    float *want = (float *)malloc((size_t)IMAGES * ny * sizeof *want);
    float *x = (float *)malloc(pixels * sizeof *x), *y = (float *)malloc(ny * sizeof *y);
    char *text = (char *)malloc(1 << 16);
    uint64_t seed = 77;
    if (!keep || !r || !want || !x || !y || !text)
        goto done;
    for (i = 0; i < IMAGES; i++) { /* the float outputs */
        const void *in[1] = {x};
        void *out[1] = {want + (size_t)i * ny};
        fill_image(x, pixels, &seed);
        if (nnop_plan_execute(fp32, in, out) != NNOP_OK)
            goto done;
    }
    for (i = 0; i < n; i++)
        nnop_calib_table_entry(t, i + 1, &keep[i], NULL);
    for (i = 0; i < n; i++) {
        nnop_compile_options co;
        nnop_plan *q = NULL;
        const char *mine = keep[i];
        keep[i] = keep[n - 1]; /* every name but this one */
        nnop_compile_options_init(&co);
        co.precision = NNOP_PRECISION_INT8;
        co.calib = t;
        co.quantize_ends = 1;
        co.keep_float = keep;
        co.n_keep_float = n - 1;
        if (nnop_graph_compile(g, &co, &q) != NNOP_OK) {
            fprintf(stderr, "quant_report: %s\n", nnop_context_last_error(ctx));
            goto done;
        }
        nnop_plan_describe(q, text, 1 << 16);
        if (strstr(text, "quantized: 1 of")) {
            r[found].name = mine;
            r[found++].snr = snr_of(q, want, IMAGES, pixels, ny, x, y);
        }
        nnop_plan_destroy(q);
        keep[i] = mine;
    }
    qsort(r, (size_t)found, sizeof *r, by_snr);
    printf("  int8 one layer at a time (%d layers, %d images), the costliest:", found, IMAGES);
    for (k = 0; k < found && k < 10; k++)
        printf(" %s %.1f dB%s", r[k].name, r[k].snr, k + 1 < found && k < 9 ? "," : "\n");
    rc = 0;
done:
    free(keep);
    free(r);
    free(want);
    free(x);
    free(y);
    free(text);
    return rc;
}

static int report(nnop_context *ctx, const char *path, const options *o)
{
    static const char *names[3] = {"float32", "int8", "fp8"};
    char err[512];
    cJSON *j = vision_graph_read(path, err, sizeof err);
    nnop_tensor_desc yd;
    nnop_graph *g = j ? build(ctx, j, o->size, &yd) : NULL;
    nnop_calib_table *t = g ? calibrate(g, o, (size_t)3 * o->size * o->size) : NULL;
    nnop_plan *p[3] = {NULL, NULL, NULL};
    size_t pixels = (size_t)3 * o->size * o->size, ny = g ? (size_t)nnop_tensor_elements(&yd) : 0;
    float *x = (float *)malloc(pixels * sizeof *x), *y[3];
    double signal = 0.0, noise[3] = {0.0, 0.0, 0.0};
    int same[3] = {0, 0, 0}, k, i, rc = 1;
    uint64_t seed = 20261207u;
    for (k = 0; k < 3; k++)
        y[k] = (float *)malloc((ny ? ny : 1) * sizeof(float));
    for (k = 0; t && k < 3; k++) {
        nnop_compile_options co;
        nnop_compile_options_init(&co);
        co.precision = k;
        co.calib = k ? t : NULL;
        co.keep_float = k ? o->keep : NULL;
        co.n_keep_float = k ? o->n_keep : 0;
        if (nnop_graph_compile(g, &co, &p[k]) != NNOP_OK)
            fprintf(stderr, "quant_report: %s %s: %s\n", path, names[k],
                    nnop_context_last_error(ctx));
    }
    if (!j || !g || !t || !p[0] || !p[1] || !p[2] || !x || !y[0] || !y[1] || !y[2]) {
        fprintf(stderr, "quant_report: %s: %s %s\n", path, j ? "" : err,
                nnop_context_last_error(ctx));
        goto done;
    }
    for (i = 0; i < o->images; i++) {
        const void *in[1] = {x};
        fill_image(x, pixels, &seed);
        for (k = 0; k < 3; k++) {
            void *out[1] = {y[k]};
            if (nnop_plan_execute(p[k], in, out) != NNOP_OK)
                goto done;
        }
        for (k = 0; k < 3; k++) {
            size_t e;
            for (e = 0; e < ny; e++) {
                double d = (double)y[k][e] - y[0][e];
                if (k == 0)
                    signal += (double)y[0][e] * y[0][e];
                noise[k] += d * d;
            }
            same[k] += argmax(y[k], ny) == argmax(y[0], ny);
        }
    }
    printf("%-20s %dx%d, calibrated on %d images, %d images:", vision_graph_model(j), o->size,
           o->size, o->calib, o->images);
    for (k = 1; k < 3; k++)
        printf("  %s SNR %.1f dB, top-1 as float32 %.1f%%", names[k],
               10.0 * log10(signal / (noise[k] > 0.0 ? noise[k] : 1e-300)),
               100.0 * same[k] / o->images);
    printf("\n");
    fflush(stdout);
    rc = o->sensitivity ? sensitivity(ctx, g, t, p[0], pixels, ny) : 0;
done:
    for (k = 0; k < 3; k++) {
        nnop_plan_destroy(p[k]);
        free(y[k]);
    }
    free(x);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
    cJSON_Delete(j);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    o.size = o.calib = 64;
    o.images = 512;
    o.method = NNOP_CALIB_PERCENTILE;
    nnop_context_options copts;
    nnop_context *ctx = NULL;
    int i, rc = 0;
    nnop_context_options_init(&copts);
    copts.backend = NNOP_BACKEND_CPU;
    if (nnop_context_create(&copts, &ctx) != NNOP_OK)
        return 1;
    for (i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--size") == 0)
            o.size = atoi(v), i++;
        else if (strcmp(argv[i], "--calib") == 0)
            o.calib = atoi(v), i++;
        else if (strcmp(argv[i], "--images") == 0)
            o.images = atoi(v), i++;
        else if (strcmp(argv[i], "--method") == 0)
            o.method = strcmp(v, "max") == 0       ? NNOP_CALIB_MAX
                       : strcmp(v, "entropy") == 0 ? NNOP_CALIB_ENTROPY
                                                   : NNOP_CALIB_PERCENTILE,
            i++;
        else if (strcmp(argv[i], "--sensitivity") == 0)
            o.sensitivity = 1;
        else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
            char *names = argv[++i], *tok;
            for (tok = strtok(names, ","); tok && o.n_keep < 64; tok = strtok(NULL, ","))
                o.keep[o.n_keep++] = tok;
        } else if (o.size < 16 || o.calib < 1 || o.images < 1)
            return 2;
        else
            rc |= report(ctx, argv[i], &o);
    }
    nnop_context_destroy(ctx);
    return rc;
}
