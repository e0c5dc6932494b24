/* vision_net.c: a network described as nnop operations (JSON written by
 * tools/export_vision_net.py from torchvision's MobileNetV3-Large, EfficientNet-B0,
 * ConvNeXt-Tiny, or a small U-Net) built as one nnop graph, one builder call per operation,
 * with weights from a safetensors file or seeded random ones. Runs it on random input or on
 * the input of a reference file, and compares the output with PyTorch's.
 *
 *   vision_net --graph m.json --weights m.safetensors --reference ref.safetensors \
 *       --max-rel-err 1e-4
 *   vision_net --graph examples/nets/unet.json --random-weights --size 64
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nnop/nnop.h"
#include "safetensors.h"
#include "vision_graph.h"

typedef struct options {
    const char *graph, *weights, *reference;
    int batch, size, random_weights, top, no_fuse;
    nnop_dtype dtype;
    nnop_layout layout;
    nnop_backend backend;
    double max_rel_err;
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: vision_net --graph FILE.json (--weights FILE | --random-weights) [options]\n"
            "  --graph FILE        the network as nnop operations "
            "(tools/export_vision_net.py)\n"
            "  --weights FILE      its weights (safetensors, torchvision's names)\n"
            "  --random-weights    seeded random weights instead (no file needed)\n"
            "  --reference FILE    take the input from FILE's \"input\" tensor and compare the\n"
            "                      output with its \"output\" tensor (PyTorch's float64); with\n"
            "                      --dtype f16 its \"output_f16\" where it has one (float64 from\n"
            "                      the f16-rounded weights and input)\n"
            "  --max-rel-err E     with --reference: exit 1 when max|y - ref| / max|ref| > E\n"
            "  --dtype f32|f16     tensor type of the graph (default f32)\n"
            "  --layout nchw|nhwc  layout of the input and every 4-D tensor (default nchw)\n"
            "  --batch N           batch without a reference (default 2)\n"
            "  --size N            input height and width without a reference (default 64)\n"
            "  --backend B         auto (default), cpu or cuda\n"
            "  --top K             classes to print per image of a classifier (default 3)\n"
            "  --no-fuse           compile every node as its own step (nnop_compile_options'\n"
            "                      fuse = 0): a fused result's error against the unfused one\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->batch = 2, o->size = 64, o->top = 3, o->dtype = NNOP_F32;
    o->backend = NNOP_BACKEND_AUTO, o->max_rel_err = -1.0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--random-weights") == 0) {
            o->random_weights = 1;
            continue;
        } else if (strcmp(a, "--no-fuse") == 0) {
            o->no_fuse = 1;
            continue;
        } else if (!v) {
            ok = 0;
        } else if (strcmp(a, "--graph") == 0) {
            o->graph = v;
        } else if (strcmp(a, "--weights") == 0) {
            o->weights = v;
        } else if (strcmp(a, "--reference") == 0) {
            o->reference = v;
        } else if (strcmp(a, "--max-rel-err") == 0) {
            char *end;
            o->max_rel_err = strtod(v, &end);
            ok = *end == '\0' && o->max_rel_err >= 0;
        } else if (strcmp(a, "--dtype") == 0) {
            ok = cli_parse_dtype(v, &o->dtype);
        } else if (strcmp(a, "--layout") == 0) {
            ok = strcmp(v, "nchw") == 0 || strcmp(v, "nhwc") == 0;
            o->layout = strcmp(v, "nhwc") == 0 ? NNOP_NHWC : NNOP_NCHW;
        } else if (strcmp(a, "--batch") == 0) {
            ok = cli_parse_int(v, 1, 4096, &o->batch);
        } else if (strcmp(a, "--size") == 0) {
            ok = cli_parse_int(v, 1, 4096, &o->size);
        } else if (strcmp(a, "--backend") == 0) {
            ok = cli_parse_backend(v, &o->backend);
        } else if (strcmp(a, "--top") == 0) {
            ok = cli_parse_int(v, 1, 16, &o->top);
        } else {
            fprintf(stderr, "vision_net: unknown option '%s'\n", a);
            usage(stderr);
            return 0;
        }
        if (!ok) {
            fprintf(stderr, "vision_net: bad or missing value for %s\n", a);
            return 0;
        }
        i++;
    }
    if (!o->graph || !o->weights == !o->random_weights) {
        fprintf(stderr, "vision_net: give --graph and one of --weights and --random-weights\n");
        usage(stderr);
        return 0;
    }
    return 1;
}

static float uniform(uint64_t *s)
{
    /* xorshift64*: uniform in [-1, 1) */
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (float)((*s * 2685821657736338717ull) >> 40) / 8388608.0f - 1.0f;
}

/* ------------------------------------------------------------------------------ main */
static void print_top(const float *y, int n, int64_t classes, int top)
{
    int i, k;
    for (i = 0; i < n; i++) {
        const float *row = y + (size_t)i * (size_t)classes;
        int best[16];
        printf("image %d:", i);
        for (k = 0; k < top && k < classes; k++) {
            int64_t c, pick = -1;
            for (c = 0; c < classes; c++) {
                int j, taken = 0;
                for (j = 0; j < k; j++)
                    taken |= best[j] == (int)c;
                if (!taken && (pick < 0 || row[c] > row[pick]))
                    pick = c;
            }
            best[k] = (int)pick;
            printf("  %d (%.3f)", best[k], row[pick]);
        }
        printf("\n");
    }
}

static int compare(const float *y, const float *ref, size_t count, int n, double max_rel_err,
                   int classifier, int64_t classes)
{
    double max_err = 0.0, max_ref = 0.0, rel;
    int i, same = 0;
    size_t k;
    for (k = 0; k < count; k++) {
        double d = fabs((double)y[k] - ref[k]);
        max_err = d > max_err || d != d ? d : max_err;
        max_ref = fabs(ref[k]) > max_ref ? fabs(ref[k]) : max_ref;
    }
    rel = max_err / (max_ref > 0 ? max_ref : 1.0);
    printf("against PyTorch: max |diff| %.3e, max |ref| %.3f, relative error %.3e", max_err,
           max_ref, rel);
    if (classifier) {
        for (i = 0; i < n; i++) {
            int64_t c, a = 0, r = 0;
            for (c = 1; c < classes; c++) {
                a = y[(size_t)i * classes + c] > y[(size_t)i * classes + a] ? c : a;
                r = ref[(size_t)i * classes + c] > ref[(size_t)i * classes + r] ? c : r;
            }
            same += a == r;
        }
        printf("; same top-1 on %d of %d", same, n);
    }
    printf("\n");
    if (max_rel_err >= 0 && !(rel <= max_rel_err)) {
        fprintf(stderr, "vision_net: relative error %.3e exceeds --max-rel-err %.3e\n", rel,
                max_rel_err);
        return 1;
    }
    if (classifier && max_rel_err >= 0 && same != n) {
        fprintf(stderr, "vision_net: top-1 differs from PyTorch's on %d of %d\n", n - same, n);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    cJSON *j = NULL;
    safetensors_file *wf = NULL, *ref = NULL;
    nnop_context_options copts;
    nnop_compile_options cco;
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_tensor_desc xd, yd;
    char err[SAFETENSORS_ERROR_LEN + 256];
    float *x = NULL, *y = NULL, *yref = NULL;
    void *xt = NULL, *yt = NULL;
    size_t xcount, ycount, es;
    int n, rc = 1, i;
    int64_t classes = 0;
    nnop_status st;
    const char *model;
    double t0, t_run = 0.0;

    if (!parse_args(argc, argv, &o))
        return 2;
    es = nnop_dtype_size(o.dtype);
    j = vision_graph_read(o.graph, err, sizeof err);
    if (!j) {
        fprintf(stderr, "vision_net: %s\n", err);
        return 1;
    }
    model = vision_graph_model(j);
    if (o.weights && safetensors_open(o.weights, &wf, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "vision_net: %s\n", err);
        goto done;
    }
    n = o.batch;
    if (o.reference) {
        const safetensors_tensor *ti;
        if (safetensors_open(o.reference, &ref, err, sizeof err) != NNOP_OK) {
            fprintf(stderr, "vision_net: %s\n", err);
            goto done;
        }
        ti = safetensors_find(ref, "input");
        if (!ti || ti->ndim != 4 || ti->shape[1] != 3 || ti->shape[2] != ti->shape[3]) {
            fprintf(stderr, "vision_net: %s: no \"input\" tensor [N, 3, S, S]\n", o.reference);
            goto done;
        }
        n = (int)ti->shape[0], o.size = (int)ti->shape[2];
    }
    xcount = (size_t)n * 3 * (size_t)o.size * (size_t)o.size;
    x = (float *)malloc(xcount * sizeof(float));
    xt = malloc(xcount * es);
    if (!x || !xt) {
        fprintf(stderr, "vision_net: out of memory\n");
        goto done;
    }
    if (ref) {
        int64_t s4[4];
        s4[0] = n, s4[1] = 3, s4[2] = s4[3] = o.size;
        if (safetensors_read_f32(ref, "input", 4, s4, x, err, sizeof err) != NNOP_OK) {
            fprintf(stderr, "vision_net: %s\n", err);
            goto done;
        }
    } else {
        uint64_t s = 12345;
        for (i = 0; i < (int)xcount; i++)
            x[i] = uniform(&s) * 1.5f;
    }

    nnop_context_options_init(&copts);
    copts.backend = o.backend;
    if (nnop_context_create(&copts, &ctx) != NNOP_OK) {
        fprintf(stderr, "vision_net: nnop_context_create: %s\n", nnop_context_create_error());
        goto done;
    }
    printf("nnop %d.%d.%d: backend %s; %s, %s weights, dtype %s, batch %d of %dx%d\n",
           nnop_version() / 10000, nnop_version() / 100 % 100, nnop_version() % 100,
           nnop_context_backend(ctx) == NNOP_BACKEND_CUDA ? "CUDA (GPU)" : "CPU reference", model,
           o.weights ? "file" : "random", o.dtype == NNOP_F16 ? "f16" : "f32", n, o.size, o.size);
    t0 = cli_now_seconds();
    if (nnop_graph_create(ctx, &g) != NNOP_OK) {
        fprintf(stderr, "vision_net: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    xd = nnop_tensor_4d(o.dtype, o.layout, n, 3, o.size, o.size);
    {
        nnop_value out;
        char berr[SAFETENSORS_ERROR_LEN + 256];
        st = vision_graph_build(ctx, g, j, nnop_input(g, "image", &xd), wf, o.dtype, o.layout,
                                20261201u, &out, berr, sizeof berr);
        if (st != NNOP_OK) {
            fprintf(stderr, "vision_net: %s: %s\n", o.graph, berr);
            goto done;
        }
        st = nnop_output(g, out, "output");
        if (st == NNOP_OK)
            st = nnop_value_desc(g, out, &yd);
    }
    nnop_compile_options_init(&cco);
    cco.fuse = !o.no_fuse;
    if (st == NNOP_OK)
        st = nnop_graph_compile(g, &cco, &plan);
    if (st != NNOP_OK) {
        fprintf(stderr, "vision_net: building the graph: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    printf("graph of %d ops compiled in %.2f s: %d partitions\n", vision_graph_ops(j),
           cli_now_seconds() - t0, nnop_plan_num_partitions(plan));
    ycount = (size_t)nnop_tensor_elements(&yd);
    classes = yd.ndim == 2 ? yd.dims[1] : 0;
    y = (float *)malloc(ycount * sizeof(float));
    yt = malloc(ycount * es);
    if (!y || !yt) {
        fprintf(stderr, "vision_net: out of memory\n");
        goto done;
    }
    {
        float *packed = (float *)malloc(xcount * sizeof(float));
        st = packed ? NNOP_OK : NNOP_ERR_OUT_OF_MEMORY;
        if (packed) {
            vision_tensor_restride(&xd, packed, x, 1);
            st = nnop_convert(NNOP_F32, packed, o.dtype, xt, (int64_t)xcount);
            free(packed);
        }
    }
    if (st == NNOP_OK)
        st = cli_run_once(ctx, plan, xt, xcount * es, yt, ycount * es, &t_run);
    if (st == NNOP_OK) {
        float *packed = (float *)malloc(ycount * sizeof(float));
        st = packed ? nnop_convert(o.dtype, yt, NNOP_F32, packed, (int64_t)ycount)
                    : NNOP_ERR_OUT_OF_MEMORY;
        if (st == NNOP_OK)
            vision_tensor_restride(&yd, y, packed, 0);
        free(packed);
    }
    if (st != NNOP_OK) {
        fprintf(stderr, "vision_net: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    printf("ran in %.3f s (first execute, including copies); output [%lld", t_run,
           (long long)yd.dims[0]);
    for (i = 1; i < yd.ndim; i++)
        printf(", %lld", (long long)yd.dims[i]);
    printf("]\n");
    if (classes > 0)
        print_top(y, n, classes, o.top);
    rc = 0;
    for (i = 0; i < (int)ycount; i++)
        if (y[i] != y[i] || y[i] - y[i] != 0.0f) {
            fprintf(stderr, "vision_net: output %d is not finite\n", i);
            rc = 1;
            break;
        }
    if (ref && rc == 0) {
        /* f16: PyTorch's float64 output from the same f16-rounded weights and input, where
         * the file has it, so the error is nnop's arithmetic, not the rounding of the weights */
        const char *name = o.dtype == NNOP_F16 && safetensors_find(ref, "output_f16") ? "output_f16"
                                                                                      : "output";
        const safetensors_tensor *to = safetensors_find(ref, name);
        yref = (float *)malloc(ycount * sizeof(float));
        printf("reference: %s\n", name);
        if (!to || !yref ||
            safetensors_read_f32(ref, name, yd.ndim, yd.dims, yref, err, sizeof err) != NNOP_OK) {
            fprintf(stderr, "vision_net: %s: %s\n", o.reference,
                    !to    ? "no \"output\" tensor"
                    : yref ? err
                           : "out of memory");
            rc = 1;
        } else {
            rc = compare(y, yref, ycount, n, o.max_rel_err, classes > 0, classes);
        }
    }
done:
    nnop_graph_destroy(g);
    nnop_plan_destroy(plan);
    nnop_context_destroy(ctx);
    safetensors_close(wf);
    safetensors_close(ref);
    cJSON_Delete(j);
    free(x), free(y), free(xt), free(yt), free(yref);
    return rc;
}
