/* classify_onnx.c: load an ONNX classifier with nnop_onnx, compile it, run it and print the
 * top-5 classes. By default the model is the bundled MNIST ResNet (examples/mnist/resnet.onnx,
 * written by examples/mnist/make_onnx.py from the weights classify_mnist uses) and the input
 * the 2,000 bundled test digits, with the accuracy; with --input, any model on one ONNX
 * TensorProto (an input_0.pb of ONNX's test data). Runs on the GPU when there is one.
 *
 *   classify_onnx [MODEL.onnx] [--dtype f32|f16|bf16] [--layout nchw|nhwc] [--batch N]
 *                 [--backend auto|cpu|cuda] [--data-dir DIR] [--input FILE.pb] [--show N]
 *                 [--min-accuracy A]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mnist.h"
#include "nnop/nnop.h"
#include "nnop/nnop_onnx.h"

#ifndef NNOP_EXAMPLES_DIR
#define NNOP_EXAMPLES_DIR "examples"
#endif

#define TOP 5

typedef struct options {
    const char *model, *data_dir, *input;
    nnop_dtype dtype;
    nnop_layout layout;
    int batch, show;
    nnop_backend backend;
    double min_accuracy;
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: classify_onnx [MODEL.onnx] [--dtype f32|f16|bf16] [--layout nchw|nhwc]\n"
            "                     [--batch N] [--backend auto|cpu|cuda] [--data-dir DIR]\n"
            "                     [--input FILE.pb] [--show N] [--min-accuracy A]\n"
            "  MODEL.onnx      default %s/mnist/resnet.onnx (the bundled MNIST ResNet)\n"
            "  --dtype         the dtype the graph runs in (default f32)\n"
            "  --layout        nchw (default) or nhwc (channels-last)\n"
            "  --batch N       images per execute: the model's symbolic batch (default 100)\n"
            "  --backend       auto (default: the GPU if there is one), cpu or cuda\n"
            "  --data-dir DIR  the MNIST test split (default %s/mnist)\n"
            "  --input FILE    classify this ONNX TensorProto instead of the digits (any model;\n"
            "                  its dims give the batch)\n"
            "  --show N        images whose top-5 is printed (default 4)\n"
            "  --min-accuracy  exit with status 1 when the accuracy is below A (0..1)\n",
            NNOP_EXAMPLES_DIR, NNOP_EXAMPLES_DIR);
}

static int parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->model = NNOP_EXAMPLES_DIR "/mnist/resnet.onnx";
    o->data_dir = NNOP_EXAMPLES_DIR "/mnist";
    o->dtype = NNOP_F32;
    o->layout = NNOP_NCHW;
    o->batch = 100;
    o->show = 4;
    o->backend = NNOP_BACKEND_AUTO;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (a[0] != '-') {
            o->model = a;
            continue;
        } else if (!v) {
            fprintf(stderr, "classify_onnx: %s needs a value\n", a);
            return 0;
        } else if (strcmp(a, "--dtype") == 0) {
            if (strcmp(v, "bf16") == 0)
                o->dtype = NNOP_BF16;
            else if (!cli_parse_dtype(v, &o->dtype)) {
                fprintf(stderr, "classify_onnx: --dtype must be f32, f16 or bf16, not '%s'\n", v);
                return 0;
            }
        } else if (strcmp(a, "--layout") == 0) {
            if (strcmp(v, "nchw") != 0 && strcmp(v, "nhwc") != 0) {
                fprintf(stderr, "classify_onnx: --layout must be nchw or nhwc, not '%s'\n", v);
                return 0;
            }
            o->layout = v[2] == 'c' ? NNOP_NCHW : NNOP_NHWC;
        } else if (strcmp(a, "--batch") == 0) {
            if (!cli_parse_int(v, 1, 100000, &o->batch)) {
                fprintf(stderr, "classify_onnx: --batch must be 1..100000, not '%s'\n", v);
                return 0;
            }
        } else if (strcmp(a, "--backend") == 0) {
            if (!cli_parse_backend(v, &o->backend)) {
                fprintf(stderr, "classify_onnx: --backend must be auto, cpu or cuda\n");
                return 0;
            }
        } else if (strcmp(a, "--data-dir") == 0) {
            o->data_dir = v;
        } else if (strcmp(a, "--input") == 0) {
            o->input = v;
        } else if (strcmp(a, "--show") == 0) {
            if (!cli_parse_int(v, 0, 1000, &o->show)) {
                fprintf(stderr, "classify_onnx: --show must be 0..1000, not '%s'\n", v);
                return 0;
            }
        } else if (strcmp(a, "--min-accuracy") == 0) {
            char *end;
            o->min_accuracy = strtod(v, &end);
            if (end == v || *end || !(o->min_accuracy >= 0.0 && o->min_accuracy <= 1.0)) {
                fprintf(stderr, "classify_onnx: --min-accuracy must be in 0..1, not '%s'\n", v);
                return 0;
            }
        } else {
            fprintf(stderr, "classify_onnx: unknown option '%s'\n", a);
            usage(stderr);
            return 0;
        }
        i++;
    }
    return 1;
}

/* A row-major f32 descriptor of d's dims (for nnop_tensor_copy to and from the plan's). */
static nnop_tensor_desc row_major_f32(const nnop_tensor_desc *d)
{
    nnop_tensor_desc r = *d;
    int i;
    r.dtype = NNOP_F32;
    for (i = d->ndim - 1; i >= 0; i--)
        r.strides[i] = i == d->ndim - 1 ? 1 : r.strides[i + 1] * r.dims[i + 1];
    return r;
}

static void print_desc(const char *what, const char *name, const nnop_tensor_desc *d)
{
    int i;
    printf("%s '%s' [", what, name);
    for (i = 0; i < d->ndim; i++)
        printf("%s%lld", i ? ", " : "", (long long)d->dims[i]);
    printf("]\n");
}

/* The top-5 of a row of k logits, as softmax probabilities; returns the best class. */
static int top5(const float *logits, int64_t k, int print)
{
    int best[TOP], n = 0, i, j;
    double mx = -INFINITY, sum = 0.0;
    int64_t c;
    for (c = 0; c < k; c++)
        mx = logits[c] > mx ? logits[c] : mx;
    for (c = 0; c < k; c++)
        sum += exp(logits[c] - mx);
    for (c = 0; c < k; c++) {
        /* insert c into the sorted best[0..n) (a NaN never enters) */
        for (i = n; i > 0 && logits[c] > logits[best[i - 1]]; i--)
            ;
        if (i >= TOP || !(logits[c] == logits[c]))
            continue;
        for (j = n < TOP ? n : TOP - 1; j > i; j--)
            best[j] = best[j - 1];
        best[i] = (int)c;
        n += n < TOP;
    }
    if (print) {
        for (i = 0; i < n; i++)
            printf("  %d (%5.1f%%)", best[i], 100.0 * exp(logits[best[i]] - mx) / sum);
        printf("\n");
    }
    return n ? best[0] : -1;
}

/* Copy the f32 row-major host data x into the plan's input 0, execute, and read output 0 as
 * row-major f32 into y. */
static nnop_status run(nnop_context *ctx, nnop_plan *plan, const float *x, float *y)
{
    nnop_tensor_desc di, dout, ri, ro;
    void *hx = NULL, *hy = NULL, *dx = NULL, *dy = NULL;
    const void *ins[1];
    void *outs[1];
    nnop_status st = NNOP_ERR_OUT_OF_MEMORY;
    nnop_plan_input_desc(plan, 0, &di);
    nnop_plan_output_desc(plan, 0, &dout);
    ri = row_major_f32(&di);
    ro = row_major_f32(&dout);
    hx = malloc(nnop_tensor_bytes(&di));
    hy = malloc(nnop_tensor_bytes(&dout));
    if (!hx || !hy)
        goto done;
    st = nnop_tensor_copy(&ri, x, &di, hx);
    if (st == NNOP_OK)
        st = nnop_malloc(ctx, nnop_tensor_bytes(&di), &dx);
    if (st == NNOP_OK)
        st = nnop_malloc(ctx, nnop_tensor_bytes(&dout), &dy);
    if (st == NNOP_OK)
        st = nnop_copy_in(ctx, dx, hx, nnop_tensor_bytes(&di));
    ins[0] = dx, outs[0] = dy;
    if (st == NNOP_OK)
        st = nnop_plan_execute(plan, ins, outs);
    if (st == NNOP_OK)
        st = nnop_copy_out(ctx, hy, dy, nnop_tensor_bytes(&dout));
    if (st == NNOP_OK)
        st = nnop_tensor_copy(&dout, hy, &ro, y);
done:
    nnop_free(ctx, dx);
    nnop_free(ctx, dy);
    free(hx);
    free(hy);
    return st;
}

/* Read a TensorProto file into f32 row-major (nnop_onnx_free it). */
static nnop_status read_pb(const char *path, nnop_tensor_desc *d, float **data)
{
    FILE *f = fopen(path, "rb");
    long n;
    void *bytes;
    nnop_status st;
    if (!f) {
        fprintf(stderr, "classify_onnx: cannot open %s\n", path);
        return NNOP_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(bytes = malloc((size_t)n + 1)) || fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        fprintf(stderr, "classify_onnx: cannot read %s\n", path);
        return NNOP_ERR_IO;
    }
    fclose(f);
    st = nnop_onnx_tensor_read(bytes, (size_t)n, NNOP_F32, d, (void **)data, NULL, 0);
    free(bytes);
    if (st != NNOP_OK)
        fprintf(stderr, "classify_onnx: %s: %s\n", path, nnop_onnx_last_error());
    return st;
}

int main(int argc, char **argv)
{
    options o;
    nnop_context_options copts;
    nnop_context *ctx = NULL;
    nnop_onnx_options lo;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_tensor_desc di, dout, pd;
    mnist_set test;
    float *x = NULL, *y = NULL, *given = NULL;
    int64_t classes, per_image, i, j;
    int rc = 1, correct = 0, n_batches, b;
    char err[MNIST_ERROR_LEN];
    const char *dtname;
    double t0, seconds, acc;
    nnop_status st;

    memset(&test, 0, sizeof test);
    if (!parse_args(argc, argv, &o))
        return 2;
    dtname = o.dtype == NNOP_F32 ? "f32" : o.dtype == NNOP_F16 ? "f16" : "bf16";
    if (o.input && read_pb(o.input, &pd, &given) != NNOP_OK)
        return 1;
    if (o.input)
        o.batch = (int)pd.dims[0];
    else if (mnist_load(o.data_dir, "test", &test, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "classify_onnx: %s (pass --data-dir DIR or --input FILE.pb)\n", err);
        return 1;
    }

    nnop_context_options_init(&copts);
    copts.backend = o.backend;
    if (nnop_context_create(&copts, &ctx) != NNOP_OK) {
        fprintf(stderr, "classify_onnx: nnop_context_create: %s\n", nnop_context_create_error());
        goto done;
    }
    printf("backend %s\n", nnop_context_backend(ctx) == NNOP_BACKEND_CUDA
                                   ? "CUDA (GPU)"
                                   : "CPU reference (no GPU used)");

    /* Load: the ONNX model becomes an nnop graph, in the dtype and layout asked for, with
     * its symbolic batch dimension set; then compile it as any graph. */
    nnop_onnx_options_init(&lo);
    lo.dtype = o.dtype;
    lo.layout = o.layout;
    lo.batch = o.batch;
    if (nnop_onnx_load_file(ctx, o.model, &lo, &g) != NNOP_OK) {
        fprintf(stderr, "classify_onnx: %s\n", nnop_onnx_last_error());
        goto done;
    }
    st = nnop_graph_compile(g, NULL, &plan);
    nnop_graph_destroy(g);
    if (st != NNOP_OK) {
        fprintf(stderr, "classify_onnx: nnop_graph_compile: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    if (nnop_plan_num_inputs(plan) != 1 || nnop_plan_num_outputs(plan) != 1) {
        fprintf(stderr, "classify_onnx: the model has %d inputs and %d outputs (1 and 1 here)\n",
                nnop_plan_num_inputs(plan), nnop_plan_num_outputs(plan));
        goto done;
    }
    nnop_plan_input_desc(plan, 0, &di);
    nnop_plan_output_desc(plan, 0, &dout);
    printf("model %s: %s %s, batch %d, %d partitions\n", o.model, dtname,
           o.layout == NNOP_NHWC ? "NHWC" : "NCHW", o.batch, nnop_plan_num_partitions(plan));
    print_desc("  input", nnop_plan_input_name(plan, 0), &di);
    print_desc("  output", nnop_plan_output_name(plan, 0), &dout);
    classes = nnop_tensor_elements(&dout) / dout.dims[0];
    per_image = nnop_tensor_elements(&di) / di.dims[0];
    y = (float *)malloc((size_t)nnop_tensor_elements(&dout) * sizeof(float));
    if (!y) {
        fprintf(stderr, "classify_onnx: out of memory\n");
        goto done;
    }

    if (o.input) { /* one given input: the top-5 of each image */
        if (nnop_tensor_elements(&pd) != nnop_tensor_elements(&di)) {
            fprintf(stderr, "classify_onnx: %s has %lld elements, the model's input %lld\n",
                    o.input, (long long)nnop_tensor_elements(&pd),
                    (long long)nnop_tensor_elements(&di));
            goto done;
        }
        if (run(ctx, plan, given, y) != NNOP_OK) {
            fprintf(stderr, "classify_onnx: %s\n", nnop_context_last_error(ctx));
            goto done;
        }
        printf("\ntop-5 classes (softmax of the output)\n");
        for (i = 0; i < di.dims[0]; i++) {
            printf("  image %lld:", (long long)i);
            top5(y + i * classes, classes, 1);
        }
        rc = 0;
        goto done;
    }

    /* The MNIST digits, a batch at a time (the last one padded with zeros). */
    if (per_image != MNIST_PIXELS || classes != MNIST_CLASSES) {
        fprintf(stderr,
                "classify_onnx: the model takes %lld values an image and gives %lld classes, "
                "not MNIST's 784 and 10: pass --input FILE.pb\n",
                (long long)per_image, (long long)classes);
        goto done;
    }
    x = (float *)calloc((size_t)o.batch * MNIST_PIXELS, sizeof(float));
    if (!x) {
        fprintf(stderr, "classify_onnx: out of memory\n");
        goto done;
    }
    if (o.show > 0)
        printf("\ntop-5 classes of the first %d digits (softmax of the logits)\n", o.show);
    n_batches = (test.count + o.batch - 1) / o.batch;
    t0 = cli_now_seconds();
    for (b = 0; b < n_batches; b++) {
        int first = b * o.batch, n = test.count - first < o.batch ? test.count - first : o.batch;
        memset(x, 0, (size_t)o.batch * MNIST_PIXELS * sizeof(float));
        mnist_to_input(test.pixels + (size_t)first * MNIST_PIXELS, n, x);
        if (run(ctx, plan, x, y) != NNOP_OK) {
            fprintf(stderr, "classify_onnx: batch %d: %s\n", b, nnop_context_last_error(ctx));
            goto done;
        }
        for (j = 0; j < n; j++) {
            int show = first + j < o.show, pred;
            if (show)
                printf("  #%-4lld true %d:", (long long)(first + j), test.labels[first + j]);
            pred = top5(y + j * MNIST_CLASSES, MNIST_CLASSES, show);
            correct += pred == test.labels[first + j];
        }
    }
    seconds = cli_now_seconds() - t0;
    acc = (double)correct / test.count;
    printf("\naccuracy %.2f%% (%d of %d digits)\n", 100.0 * acc, correct, test.count);
    printf("throughput %.0f images/s (%d batches of %d in %.3f s, including copies)\n",
           test.count / seconds, n_batches, o.batch, seconds);
    rc = 0;
    if (acc < o.min_accuracy) {
        fprintf(stderr, "classify_onnx: accuracy %.4f is below --min-accuracy %.4f\n", acc,
                o.min_accuracy);
        rc = 1;
    }
done:
    nnop_plan_destroy(plan);
    nnop_context_destroy(ctx);
    mnist_free(&test);
    nnop_onnx_free(given);
    free(x);
    free(y);
    return rc;
}
