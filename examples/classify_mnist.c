/* classify_mnist.c: classify the 2,000 bundled MNIST test digits with a trained network
 * (lenet or resnet, weights in safetensors) built as an nnop graph. Runs on the GPU when
 * there is one, on the CPU reference backend otherwise, and says which.
 *
 *   classify_mnist [lenet|resnet] [--dtype f32|f16] [--batch N] [--data-dir DIR]
 *                  [--backend auto|cpu|cuda] [--show N] [--min-accuracy A]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnist.h"
#include "cli.h"
#include "nnop/nnop.h"
#include "safetensors.h"

#ifndef NNOP_EXAMPLES_DIR
#define NNOP_EXAMPLES_DIR "examples"
#endif

typedef struct options {
    mnist_model_kind model;
    nnop_dtype dtype;
    int batch;
    const char *data_dir;
    nnop_backend backend;
    int show;
    double min_accuracy;
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: classify_mnist [lenet|resnet] [--dtype f32|f16] [--batch N] "
            "[--data-dir DIR]\n"
            "                      [--backend auto|cpu|cuda] [--show N] [--min-accuracy A]\n"
            "  model           lenet (default) or resnet\n"
            "  --dtype         tensor type of the graph: f32 (default) or f16\n"
            "  --batch N       digits per execute (default 100)\n"
            "  --data-dir DIR  folder with the weights and the test split (default %s/mnist)\n"
            "  --backend       auto (default: the GPU if there is one), cpu or cuda\n"
            "  --show N        digits drawn as ASCII art (default 4: misclassified ones first)\n"
            "  --min-accuracy  exit with status 1 when the accuracy is below A (0..1)\n",
            NNOP_EXAMPLES_DIR);
}

static int parse_args(int argc, char **argv, options *o)
{
    int i;
    o->model = MNIST_LENET;
    o->dtype = NNOP_F32;
    o->batch = 100;
    o->data_dir = NNOP_EXAMPLES_DIR "/mnist";
    o->backend = NNOP_BACKEND_AUTO;
    o->show = 4;
    o->min_accuracy = 0.0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (a[0] != '-') {
            int m = mnist_model_from_name(a);
            if (m < 0) {
                fprintf(stderr, "classify_mnist: unknown model '%s' (lenet or resnet)\n", a);
                return 0;
            }
            o->model = (mnist_model_kind)m;
            continue;
        } else if (!v) {
            fprintf(stderr, "classify_mnist: %s needs a value\n", a);
            return 0;
        } else if (strcmp(a, "--dtype") == 0) {
            if (!cli_parse_dtype(v, &o->dtype)) {
                fprintf(stderr, "classify_mnist: --dtype must be f32 or f16, not '%s'\n", v);
                return 0;
            }
        } else if (strcmp(a, "--batch") == 0) {
            if (!cli_parse_int(v, 1, 100000, &o->batch)) {
                fprintf(stderr, "classify_mnist: --batch must be 1..100000, not '%s'\n", v);
                return 0;
            }
        } else if (strcmp(a, "--data-dir") == 0) {
            o->data_dir = v;
        } else if (strcmp(a, "--backend") == 0) {
            if (!cli_parse_backend(v, &o->backend)) {
                fprintf(stderr, "classify_mnist: --backend must be auto, cpu or cuda\n");
                return 0;
            }
        } else if (strcmp(a, "--show") == 0) {
            if (!cli_parse_int(v, 0, 100, &o->show)) {
                fprintf(stderr, "classify_mnist: --show must be 0..100, not '%s'\n", v);
                return 0;
            }
        } else if (strcmp(a, "--min-accuracy") == 0) {
            char *end;
            o->min_accuracy = strtod(v, &end);
            if (end == v || *end || o->min_accuracy < 0.0 || o->min_accuracy > 1.0) {
                fprintf(stderr, "classify_mnist: --min-accuracy must be in 0..1, not '%s'\n", v);
                return 0;
            }
        } else {
            fprintf(stderr, "classify_mnist: unknown option '%s'\n", a);
            usage(stderr);
            return 0;
        }
        i++;
    }
    return 1;
}

/* Digits side by side, two pixel rows per text line. */
static void draw_digits(const mnist_set *s, const int *idx, const int *pred, int n)
{
    static const char ramp[] = " .:-=+*#%@";
    int i, r, c;
    for (i = 0; i < n; i++)
        printf("  #%-4d pred %d true %d%s   ", idx[i], pred[idx[i]], s->labels[idx[i]],
               pred[idx[i]] == s->labels[idx[i]] ? "  " : " X");
    printf("\n");
    for (r = 0; r < MNIST_ROWS; r += 2) {
        for (i = 0; i < n; i++) {
            const unsigned char *p = s->pixels + (size_t)idx[i] * MNIST_PIXELS;
            printf("  ");
            for (c = 0; c < MNIST_COLS; c++) {
                int v = (p[r * MNIST_COLS + c] + p[(r + 1) * MNIST_COLS + c]) / 2;
                putchar(ramp[v * 9 / 255]);
            }
            printf("   ");
        }
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    options o;
    mnist_set test;
    safetensors_file *w = NULL;
    nnop_context_options copts;
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    void *dx = NULL, *dy = NULL;
    float *xf = NULL;
    unsigned char *xt = NULL, *yt = NULL, *torch_pred = NULL;
    int *pred = NULL, confusion[MNIST_CLASSES][MNIST_CLASSES];
    int i, j, n_batches, correct = 0, torch_count = 0, shown = 0, rc = 1;
    char err[MNIST_ERROR_LEN], path[4096];
    const char *recorded;
    size_t esize, xbytes, ybytes;
    double t0, seconds, acc;
    nnop_status st;

    if (!parse_args(argc, argv, &o))
        return 2;
    esize = nnop_dtype_size(o.dtype);

    if (mnist_load(o.data_dir, "test", &test, err, sizeof err) != NNOP_OK) {
        fprintf(stderr,
                "classify_mnist: %s\n  (the test split and weights live in the source "
                "tree's examples/mnist: pass --data-dir DIR)\n",
                err);
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s.safetensors", o.data_dir, mnist_model_name(o.model));
    if (safetensors_open(path, &w, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "classify_mnist: %s\n", err);
        goto done;
    }
    nnop_context_options_init(&copts);
    copts.backend = o.backend;
    st = nnop_context_create(&copts, &ctx);
    if (st != NNOP_OK) {
        fprintf(stderr, "classify_mnist: nnop_context_create: %s\n", nnop_context_create_error());
        goto done;
    }
    printf("nnop %d.%d.%d: backend %s\n", nnop_version() / 10000, nnop_version() / 100 % 100,
           nnop_version() % 100,
           nnop_context_backend(ctx) == NNOP_BACKEND_CUDA ? "CUDA (GPU)"
                                                          : "CPU reference (no GPU used)");
    printf("model %s (%s), dtype %s, batch %d, %d test digits from %s\n", mnist_model_name(o.model),
           path, o.dtype == NNOP_F16 ? "f16" : "f32", o.batch, test.count, o.data_dir);

    /* Graph: built once for the batch size; the last batch is padded with zeros. */
    st = nnop_graph_create(ctx, &g);
    if (st == NNOP_OK)
        st = mnist_build(g, ctx, o.model, w, o.dtype, o.batch, err, sizeof err);
    else
        snprintf(err, sizeof err, "nnop_graph_create: %s", nnop_context_last_error(ctx));
    if (st == NNOP_OK) {
        st = nnop_graph_compile(g, NULL, &plan);
        if (st != NNOP_OK)
            snprintf(err, sizeof err, "nnop_graph_compile: %s", nnop_context_last_error(ctx));
    }
    nnop_graph_destroy(g);
    if (st != NNOP_OK) {
        fprintf(stderr, "classify_mnist: %s\n", err);
        goto done;
    }
    printf("plan: %d partitions\n", nnop_plan_num_partitions(plan));

    xbytes = (size_t)o.batch * MNIST_PIXELS * esize;
    ybytes = (size_t)o.batch * MNIST_CLASSES * esize;
    xf = (float *)malloc((size_t)o.batch * MNIST_PIXELS * sizeof(float));
    xt = (unsigned char *)malloc(xbytes);
    yt = (unsigned char *)malloc(ybytes);
    pred = (int *)malloc((size_t)test.count * sizeof(int));
    if (!xf || !xt || !yt || !pred) {
        fprintf(stderr, "classify_mnist: out of memory\n");
        goto done;
    }
    st = nnop_malloc(ctx, xbytes, &dx);
    if (st == NNOP_OK)
        st = nnop_malloc(ctx, ybytes, &dy);
    if (st != NNOP_OK) {
        fprintf(stderr, "classify_mnist: nnop_malloc: %s\n", nnop_context_last_error(ctx));
        goto done;
    }

    n_batches = (test.count + o.batch - 1) / o.batch;
    if (nnop_context_backend(ctx) == NNOP_BACKEND_CUDA) {
        /* One untimed run so that lazy first-use work is not counted in the throughput. */
        const void *ins[1];
        void *outs[1];
        ins[0] = dx, outs[0] = dy;
        memset(xt, 0, xbytes);
        st = nnop_copy_in(ctx, dx, xt, xbytes);
        if (st == NNOP_OK)
            st = nnop_plan_execute(plan, ins, outs);
        if (st == NNOP_OK)
            st = nnop_context_synchronize(ctx);
        if (st != NNOP_OK) {
            fprintf(stderr, "classify_mnist: warm-up: %s\n", nnop_context_last_error(ctx));
            goto done;
        }
    }
    t0 = cli_now_seconds();
    for (i = 0; i < n_batches; i++) {
        int first = i * o.batch;
        int n = test.count - first < o.batch ? test.count - first : o.batch;
        const void *ins[1];
        void *outs[1];
        memset(xf, 0, (size_t)o.batch * MNIST_PIXELS * sizeof(float));
        mnist_to_input(test.pixels + (size_t)first * MNIST_PIXELS, n, xf);
        st = nnop_convert(NNOP_F32, xf, o.dtype, xt, (int64_t)o.batch * MNIST_PIXELS);
        if (st == NNOP_OK)
            st = nnop_copy_in(ctx, dx, xt, xbytes);
        ins[0] = dx, outs[0] = dy;
        if (st == NNOP_OK)
            st = nnop_plan_execute(plan, ins, outs);
        if (st == NNOP_OK)
            st = nnop_copy_out(ctx, yt, dy, ybytes);
        if (st != NNOP_OK) {
            fprintf(stderr, "classify_mnist: batch %d: %s\n", i, nnop_context_last_error(ctx));
            goto done;
        }
        for (j = 0; j < n; j++)
            pred[first + j] = mnist_argmax(o.dtype, yt + (size_t)j * MNIST_CLASSES * esize);
    }
    seconds = cli_now_seconds() - t0;

    memset(confusion, 0, sizeof confusion);
    for (i = 0; i < test.count; i++) {
        confusion[test.labels[i]][pred[i]]++;
        correct += pred[i] == test.labels[i];
    }
    acc = (double)correct / test.count;
    printf("\naccuracy %.2f%% (%d of %d digits)", 100.0 * acc, correct, test.count);
    recorded = safetensors_metadata(w, "test_accuracy");
    if (recorded)
        printf("; PyTorch recorded %.2f%% at training", 100.0 * atof(recorded));
    printf("\n");
    snprintf(path, sizeof path, "%s/%s.torch_pred", o.data_dir, mnist_model_name(o.model));
    if (mnist_read_idx1(path, test.count, MNIST_CLASSES, &torch_pred, &torch_count, err,
                        sizeof err) == NNOP_OK) {
        int same = 0;
        for (i = 0; i < test.count; i++)
            same += torch_pred[i] == pred[i];
        printf("same prediction as PyTorch on %d of %d digits (%.2f%%)\n", same, test.count,
               100.0 * same / test.count);
    }
    printf("throughput %.0f images/s (%d batches of %d in %.3f s, including copies)\n",
           test.count / seconds, n_batches, o.batch, seconds);

    printf("\nconfusion matrix (rows: true digit, columns: predicted)\n      ");
    for (j = 0; j < MNIST_CLASSES; j++)
        printf("%5d", j);
    printf("\n");
    for (i = 0; i < MNIST_CLASSES; i++) {
        printf("  %d: ", i);
        for (j = 0; j < MNIST_CLASSES; j++)
            printf("%5d", confusion[i][j]);
        printf("\n");
    }

    if (o.show > 0) {
        int idx[4], k;
        /* misclassified digits first, then the first ones */
        printf("\nsome digits (X: misclassified)\n");
        for (k = 0; k < 2 && shown < o.show; k++) {
            int fill = 0;
            for (i = 0; i < test.count && shown < o.show; i++) {
                if ((k == 0) != (pred[i] != test.labels[i]))
                    continue;
                idx[fill++] = i;
                shown++;
                if (fill == 4) {
                    draw_digits(&test, idx, pred, fill);
                    fill = 0;
                }
            }
            if (fill)
                draw_digits(&test, idx, pred, fill);
        }
    }
    rc = 0;
    if (acc < o.min_accuracy) {
        fprintf(stderr, "classify_mnist: accuracy %.4f is below --min-accuracy %.4f\n", acc,
                o.min_accuracy);
        rc = 1;
    }
done:
    if (ctx) {
        nnop_free(ctx, dx);
        nnop_free(ctx, dy);
    }
    nnop_plan_destroy(plan);
    nnop_context_destroy(ctx);
    safetensors_close(w);
    mnist_free(&test);
    free(xf);
    free(xt);
    free(yt);
    free(pred);
    free(torch_pred);
    return rc;
}
