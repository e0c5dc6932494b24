/* quantize_mnist.c: the path from a float graph to a calibrated 8-bit plan (issue 45), on the
 * bundled MNIST networks with their trained weights. The first --calib digits of the test
 * split calibrate the activations' ranges (nnop_calibrate); the float32 plan and an int8 and
 * an fp8 plan then classify the other digits, and the accuracy of each is printed with its
 * drop against float32. Quantized plans run on the CPU backend in this version.
 *
 *   quantize_mnist [lenet|resnet] [--method percentile|max|entropy] [--calib N]
 *                  [--all] [--max-drop POINTS] [--table FILE] [--data-dir DIR]
 * --all quantizes the first and last layer too (by default they stay float32).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mnist.h"
#include "nnop/nnop.h"
#include "safetensors.h"

#ifndef NNOP_EXAMPLES_DIR
#define NNOP_EXAMPLES_DIR "examples"
#endif

enum { BATCH = 100 };

typedef struct options {
    mnist_model_kind model;
    nnop_calib_method method;
    int calib_digits;
    double max_drop; /* points of accuracy; < 0: not checked */
    int all;         /* quantize the first and last layer too */
    const char *table_path, *data_dir;
} options;

static int parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->method = NNOP_CALIB_PERCENTILE;
    o->calib_digits = 200;
    o->max_drop = -1.0;
    o->data_dir = NNOP_EXAMPLES_DIR "/mnist";
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--all") == 0) {
            o->all = 1;
            continue;
        }
        if (a[0] != '-') {
            int m = mnist_model_from_name(a);
            if (m < 0)
                return 0;
            o->model = (mnist_model_kind)m;
            continue;
        }
        if (!v)
            return 0;
        if (strcmp(a, "--method") == 0)
            o->method = strcmp(v, "max") == 0          ? NNOP_CALIB_MAX
                        : strcmp(v, "percentile") == 0 ? NNOP_CALIB_PERCENTILE
                        : strcmp(v, "entropy") == 0    ? NNOP_CALIB_ENTROPY
                                                       : (nnop_calib_method)-1;
        else if (strcmp(a, "--calib") == 0) {
            if (!cli_parse_int(v, 1, 1000, &o->calib_digits) || o->calib_digits % BATCH)
                return 0;
        } else if (strcmp(a, "--max-drop") == 0)
            o->max_drop = atof(v);
        else if (strcmp(a, "--table") == 0)
            o->table_path = v;
        else if (strcmp(a, "--data-dir") == 0)
            o->data_dir = v;
        else
            return 0;
        i++;
    }
    return (int)o->method >= 0;
}

/* The digits [first, last) as inputs of BATCH each, float32 NCHW: *xs holds them all. */
static float *digits_as_batches(const mnist_set *s, int first, int last)
{
    int n = last - first;
    float *x = (float *)calloc((size_t)n * MNIST_PIXELS, sizeof *x);
    if (x)
        mnist_to_input(s->pixels + (size_t)first * MNIST_PIXELS, n, x);
    return x;
}

/* Percent of the digits [first, count) plan classifies right (-1 on an error). */
static double accuracy(nnop_plan *p, const mnist_set *s, int first)
{
    float y[BATCH * MNIST_CLASSES];
    float *x = digits_as_batches(s, first, s->count);
    int b, j, correct = 0, n = s->count - first;
    if (!x)
        return -1.0;
    for (b = 0; b < n / BATCH; b++) {
        const void *in[1] = {x + (size_t)b * BATCH * MNIST_PIXELS};
        void *out[1] = {y};
        if (nnop_plan_execute(p, in, out) != NNOP_OK) {
            free(x);
            return -1.0;
        }
        for (j = 0; j < BATCH; j++)
            correct += mnist_argmax(NNOP_F32, y + j * MNIST_CLASSES) ==
                       s->labels[first + b * BATCH + j];
    }
    free(x);
    return 100.0 * correct / (n / BATCH * BATCH);
}

static nnop_calib_table *calibrate(nnop_graph *g, const options *o, const mnist_set *s)
{
    nnop_calib_options co;
    nnop_calib_table *t = NULL;
    const void *in[10][1];
    const void *const *batches[10];
    float *x = digits_as_batches(s, 0, o->calib_digits);
    int b, n = o->calib_digits / BATCH;
    if (!x)
        return NULL;
    for (b = 0; b < n; b++) {
        in[b][0] = x + (size_t)b * BATCH * MNIST_PIXELS;
        batches[b] = in[b];
    }
    nnop_calib_options_init(&co);
    co.method = o->method;
    if (nnop_calibrate(g, &co, batches, n, &t) != NNOP_OK)
        t = NULL;
    free(x);
    return t;
}

/* g compiled at precision with table t (NULL for float32). */
static nnop_plan *compile(nnop_graph *g, nnop_precision precision, const nnop_calib_table *t,
                          int all)
{
    nnop_compile_options co;
    nnop_plan *p = NULL;
    nnop_compile_options_init(&co);
    co.precision = precision;
    co.calib = t;
    co.quantize_ends = precision != NNOP_PRECISION_FLOAT && all;
    return nnop_graph_compile(g, &co, &p) == NNOP_OK ? p : NULL;
}

int main(int argc, char **argv)
{
    static const char *names[3] = {"float32", "int8", "fp8 e4m3"};
    options o;
    mnist_set test;
    safetensors_file *w = NULL;
    nnop_context_options copts;
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_calib_table *table = NULL;
    double acc[3];
    char err[MNIST_ERROR_LEN], path[4096], text[8192];
    int k, rc = 1;
    if (!parse_args(argc, argv, &o)) {
        fprintf(stderr,
                "usage: quantize_mnist [lenet|resnet] [--method max|percentile|entropy] "
                "[--calib N (a multiple of 100)] [--all] [--max-drop POINTS] [--table FILE] "
                "[--data-dir DIR]\n");
        return 2;
    }
    if (mnist_load(o.data_dir, "test", &test, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "quantize_mnist: %s\n", err);
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s.safetensors", o.data_dir, mnist_model_name(o.model));
    nnop_context_options_init(&copts);
    copts.backend = NNOP_BACKEND_CPU; /* quantized plans: the CPU backend in this version */
    if (safetensors_open(path, &w, err, sizeof err) != NNOP_OK ||
        nnop_context_create(&copts, &ctx) != NNOP_OK || nnop_graph_create(ctx, &g) != NNOP_OK ||
        mnist_build(g, ctx, o.model, w, NNOP_F32, BATCH, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "quantize_mnist: %s %s\n", err, nnop_context_last_error(ctx));
        goto done;
    }
    table = calibrate(g, &o, &test);
    if (!table || (o.table_path && nnop_calib_table_save(ctx, table, o.table_path) != NNOP_OK)) {
        fprintf(stderr, "quantize_mnist: calibration: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    printf("model %s: calibrated on digits 0..%d (%d tensors), tested on the other %d\n",
           mnist_model_name(o.model), o.calib_digits - 1, nnop_calib_table_count(table),
           test.count - o.calib_digits);
    for (k = 0; k < 3; k++) {
        nnop_plan *p = compile(g, (nnop_precision)k, k ? table : NULL, o.all);
        acc[k] = p ? accuracy(p, &test, o.calib_digits) : -1.0;
        if (p && k == NNOP_PRECISION_INT8 && nnop_plan_describe(p, text, sizeof text) < sizeof text)
            printf("%s", strstr(text, "  quantized:") ? strstr(text, "  quantized:") : "");
        nnop_plan_destroy(p);
        if (acc[k] < 0.0) {
            fprintf(stderr, "quantize_mnist: %s plan: %s\n", names[k],
                    nnop_context_last_error(ctx));
            goto done;
        }
    }
    rc = 0;
    for (k = 0; k < 3; k++) {
        double drop = acc[0] - acc[k];
        printf("%-9s accuracy %.2f%%", names[k], acc[k]);
        if (k)
            printf(" (%+.2f points against float32)", -drop);
        printf("\n");
        if (k && o.max_drop >= 0.0 && drop > o.max_drop) {
            fprintf(stderr, "quantize_mnist: %s loses %.2f points, more than --max-drop %.2f\n",
                    names[k], drop, o.max_drop);
            rc = 1;
        }
    }
done:
    nnop_calib_table_destroy(table);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
    safetensors_close(w);
    mnist_free(&test);
    return rc;
}
