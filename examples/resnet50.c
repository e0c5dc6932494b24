/* resnet50.c: ImageNet ResNet-50 (torchvision's architecture and parameter names) as one nnop
 * graph, with weights from a safetensors file written by tools/export_resnet50.py. Classifies
 * PPM images (P6), random data, or the input stored in a reference file, and prints the top-5
 * classes. With --reference it also compares the logits with PyTorch's.
 *
 *   resnet50 --weights resnet50.safetensors [image.ppm ...]
 *   resnet50 --weights resnet50.safetensors --reference ref.safetensors --max-rel-err 1e-4
 *   resnet50 --random-weights --size 64          (no file at all: a quick smoke run)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nnop/nnop.h"
#include "safetensors.h"

#define CLASSES    1000
#define MAX_IMAGES 256

typedef struct options {
    const char *weights, *reference, *labels;
    const char *images[MAX_IMAGES];
    int n_images, batch, size, random_weights, top;
    nnop_dtype dtype;
    nnop_backend backend;
    double max_rel_err;
} options;

/* Where weights come from: a safetensors file, or seeded random numbers. */
typedef struct weights {
    const safetensors_file *file;
    nnop_graph *g;
    nnop_dtype t;
    uint64_t seed;
    nnop_status st;
    char err[SAFETENSORS_ERROR_LEN];
} weights;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: resnet50 (--weights FILE | --random-weights) [options] [image.ppm ...]\n"
            "  --weights FILE      safetensors with torchvision names (tools/export_resnet50.py)\n"
            "  --random-weights    seeded random weights instead (no file needed)\n"
            "  --reference FILE    take the input from FILE's \"input\" tensor and compare the\n"
            "                      logits with its \"logits\" tensor (PyTorch's)\n"
            "  --max-rel-err E     with --reference: exit 1 when max|y - ref| / max|ref| > E\n"
            "  --dtype f32|f16     tensor type of the graph (default f32)\n"
            "  --batch N           images per batch when no image or reference is given "
            "(default 2)\n"
            "  --size N            input height and width (default 224)\n"
            "  --backend B         auto (default), cpu or cuda\n"
            "  --labels FILE       class names, one per line (1000 lines)\n"
            "  --top K             classes to print per image (default 5)\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->batch = 2;
    o->size = 224;
    o->top = 5;
    o->dtype = NNOP_F32;
    o->backend = NNOP_BACKEND_AUTO;
    o->max_rel_err = -1.0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (a[0] != '-') {
            if (o->n_images == MAX_IMAGES) {
                fprintf(stderr, "resnet50: at most %d images\n", MAX_IMAGES);
                return 0;
            }
            o->images[o->n_images++] = a;
            continue;
        } else if (strcmp(a, "--random-weights") == 0) {
            o->random_weights = 1;
            continue;
        } else if (!v) {
            fprintf(stderr, "resnet50: %s needs a value\n", a);
            return 0;
        } else if (strcmp(a, "--weights") == 0) {
            o->weights = v;
        } else if (strcmp(a, "--reference") == 0) {
            o->reference = v;
        } else if (strcmp(a, "--labels") == 0) {
            o->labels = v;
        } else if (strcmp(a, "--max-rel-err") == 0) {
            char *end;
            o->max_rel_err = strtod(v, &end);
            if (end == v || *end || o->max_rel_err < 0) {
                fprintf(stderr, "resnet50: bad --max-rel-err '%s'\n", v);
                return 0;
            }
        } else if (strcmp(a, "--dtype") == 0) {
            if (!cli_parse_dtype(v, &o->dtype)) {
                fprintf(stderr, "resnet50: --dtype must be f32 or f16\n");
                return 0;
            }
        } else if (strcmp(a, "--batch") == 0) {
            if (!cli_parse_int(v, 1, 1024, &o->batch)) {
                fprintf(stderr, "resnet50: --batch must be 1..1024\n");
                return 0;
            }
        } else if (strcmp(a, "--size") == 0) {
            if (!cli_parse_int(v, 32, 1024, &o->size)) {
                fprintf(stderr, "resnet50: --size must be 32..1024\n");
                return 0;
            }
        } else if (strcmp(a, "--top") == 0) {
            if (!cli_parse_int(v, 1, CLASSES, &o->top)) {
                fprintf(stderr, "resnet50: --top must be 1..1000\n");
                return 0;
            }
        } else if (strcmp(a, "--backend") == 0) {
            if (!cli_parse_backend(v, &o->backend)) {
                fprintf(stderr, "resnet50: --backend must be auto, cpu or cuda\n");
                return 0;
            }
        } else {
            fprintf(stderr, "resnet50: unknown option '%s'\n", a);
            usage(stderr);
            return 0;
        }
        i++;
    }
    if (!o->weights == !o->random_weights) {
        fprintf(stderr, "resnet50: give exactly one of --weights FILE and --random-weights\n");
        usage(stderr);
        return 0;
    }
    if (o->reference && o->n_images) {
        fprintf(stderr, "resnet50: --reference brings its own input: give no images\n");
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------ weights */
static float uniform(uint64_t *s)
{
    /* xorshift64*: uniform in [-1, 1) */
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (float)((*s * 2685821657736338717ull) >> 40) / 8388608.0f - 1.0f;
}

/* A constant called name of shape (ndim dims); from the file or random. fan_in > 0: a conv or
 * linear weight (uniform with variance 2 / fan_in); bn_kind: 1 gamma, 2 beta, 3 mean, 4 var. */
static nnop_value weight(weights *w, const char *name, int ndim, const int64_t *shape,
                         int64_t fan_in, int bn_kind)
{
    nnop_tensor_desc d;
    int64_t count = 1, i;
    float *f32;
    void *conv;
    nnop_value v;
    v.id = -1;
    if (w->st != NNOP_OK)
        return v;
    for (i = 0; i < ndim; i++)
        count *= shape[i];
    if (ndim == 4)
        d = nnop_tensor_4d(w->t, NNOP_NCHW, shape[0], shape[1], shape[2], shape[3]);
    else if (ndim == 2)
        d = nnop_tensor_2d(w->t, shape[0], shape[1]);
    else
        d = nnop_tensor_1d(w->t, shape[0]);
    f32 = (float *)malloc((size_t)count * sizeof(float));
    conv = malloc((size_t)count * nnop_dtype_size(w->t));
    if (!f32 || !conv) {
        snprintf(w->err, sizeof w->err, "out of memory for tensor '%s'", name);
        w->st = NNOP_ERR_OUT_OF_MEMORY;
    } else if (w->file) {
        w->st = safetensors_read_f32(w->file, name, ndim, shape, f32, w->err, sizeof w->err);
    } else {
        float scale = fan_in > 0 ? (float)sqrt(6.0 / (double)fan_in) : 0.1f;
        for (i = 0; i < count; i++) {
            float u = uniform(&w->seed);
            f32[i] = bn_kind == 1   ? 1.0f + 0.1f * u
                     : bn_kind == 3 ? 0.05f * u
                     : bn_kind == 4 ? 1.0f + 0.25f * (u + 1.0f)
                                    : scale * u;
        }
    }
    if (w->st == NNOP_OK)
        w->st = nnop_convert(NNOP_F32, f32, w->t, conv, count);
    if (w->st == NNOP_OK)
        v = nnop_constant(w->g, name, &d, conv);
    free(f32);
    free(conv);
    return v;
}

static nnop_value conv(weights *w, nnop_value x, const char *name, int64_t k, int64_t c, int64_t r,
                       int64_t stride, int64_t pad)
{
    int64_t shape[4];
    nnop_conv_params p;
    shape[0] = k, shape[1] = c, shape[2] = r, shape[3] = r;
    p.pad[0] = p.pad[1] = pad;
    p.stride[0] = p.stride[1] = stride;
    p.dilation[0] = p.dilation[1] = 1;
    p.groups = 1;
    return nnop_conv(w->g, x, weight(w, name, 4, shape, c * r * r, 0), &p);
}

static nnop_value batchnorm(weights *w, nnop_value x, const char *prefix, int64_t c)
{
    static const char *const suffix[4] = {"weight", "bias", "running_mean", "running_var"};
    nnop_value p[4];
    char name[160];
    int i;
    for (i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%.140s.%s", prefix, suffix[i]);
        p[i] = weight(w, name, 1, &c, 0, i + 1);
    }
    return nnop_batchnorm(w->g, x, p[0], p[1], p[2], p[3], 1e-5f);
}

static nnop_value relu(weights *w, nnop_value x)
{
    return nnop_act(w->g, x, NNOP_ACT_RELU, 0.0f);
}

/* torchvision Bottleneck (v1.5: the stride is on the 3x3 conv). */
static nnop_value bottleneck(weights *w, nnop_value x, const char *prefix, int64_t cin,
                             int64_t width, int64_t stride, int downsample)
{
    char n[160], bn[160];
    nnop_value y, shortcut = x;
    int64_t cout = width * 4;
    snprintf(n, sizeof n, "%s.conv1.weight", prefix), snprintf(bn, sizeof bn, "%s.bn1", prefix);
    y = relu(w, batchnorm(w, conv(w, x, n, width, cin, 1, 1, 0), bn, width));
    snprintf(n, sizeof n, "%s.conv2.weight", prefix), snprintf(bn, sizeof bn, "%s.bn2", prefix);
    y = relu(w, batchnorm(w, conv(w, y, n, width, width, 3, stride, 1), bn, width));
    snprintf(n, sizeof n, "%s.conv3.weight", prefix), snprintf(bn, sizeof bn, "%s.bn3", prefix);
    y = batchnorm(w, conv(w, y, n, cout, width, 1, 1, 0), bn, cout);
    if (downsample) {
        snprintf(n, sizeof n, "%s.downsample.0.weight", prefix);
        snprintf(bn, sizeof bn, "%s.downsample.1", prefix);
        shortcut = batchnorm(w, conv(w, x, n, cout, cin, 1, stride, 0), bn, cout);
    }
    return relu(w, nnop_add(w->g, y, shortcut));
}

static nnop_value resnet50(weights *w, nnop_value x)
{
    static const int blocks[4] = {3, 4, 6, 3};
    nnop_pool_params mp;
    int64_t cin = 64, fc_shape[2] = {CLASSES, 2048}, fcb = CLASSES;
    nnop_value fw, fb;
    int layer, i;
    x = relu(w, batchnorm(w, conv(w, x, "conv1.weight", 64, 3, 7, 2, 3), "bn1", 64));
    memset(&mp, 0, sizeof mp);
    mp.window[0] = mp.window[1] = 3;
    mp.stride[0] = mp.stride[1] = 2;
    mp.pad[0] = mp.pad[1] = 1;
    x = nnop_pool(w->g, x, NNOP_POOL_MAX, &mp);
    for (layer = 0; layer < 4; layer++) {
        int64_t width = (int64_t)64 << layer;
        for (i = 0; i < blocks[layer]; i++) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "layer%d.%d", layer + 1, i);
            x = bottleneck(w, x, prefix, cin, width, i == 0 && layer > 0 ? 2 : 1, i == 0);
            cin = width * 4;
        }
    }
    x = nnop_flatten(w->g, nnop_global_avg_pool(w->g, x));
    fw = weight(w, "fc.weight", 2, fc_shape, 2048, 0);
    fb = weight(w, "fc.bias", 1, &fcb, 0, 0);
    return nnop_linear(w->g, x, fw, fb);
}

/* ------------------------------------------------------------------------------ inputs */
static int ppm_token(FILE *fp, long *out)
{
    int c;
    long v = 0;
    int digits = 0;
    do {
        c = fgetc(fp);
        if (c == '#')
            while (c != '\n' && c != EOF)
                c = fgetc(fp);
    } while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
    while (c >= '0' && c <= '9' && digits < 9) {
        v = v * 10 + (c - '0');
        digits++;
        c = fgetc(fp);
    }
    if (digits == 0 || digits == 9)
        return 0;
    *out = v;
    return 1;
}

/* Read a binary PPM (P6, maxval < 256), resize the shorter side to size (bilinear), crop the
 * centre size x size and normalize with ImageNet's mean and std into x (3 x size x size). */
static int load_ppm(const char *path, int size, float *x)
{
    static const float mean[3] = {0.485f, 0.456f, 0.406f}, stdv[3] = {0.229f, 0.224f, 0.225f};
    FILE *fp = fopen(path, "rb");
    unsigned char *rgb;
    long w, h, maxval;
    double scale, ox, oy;
    int c, i, j;
    if (!fp) {
        fprintf(stderr, "resnet50: %s: cannot open the file\n", path);
        return 0;
    }
    if (fgetc(fp) != 'P' || fgetc(fp) != '6' || !ppm_token(fp, &w) || !ppm_token(fp, &h) ||
        !ppm_token(fp, &maxval) || w < 1 || h < 1 || w > 20000 || h > 20000 || maxval < 1 ||
        maxval > 255) {
        fprintf(stderr, "resnet50: %s: not a binary PPM (P6) with 8-bit samples\n", path);
        fclose(fp);
        return 0;
    }
    rgb = (unsigned char *)malloc((size_t)w * (size_t)h * 3);
    if (!rgb || fread(rgb, 1, (size_t)w * (size_t)h * 3, fp) != (size_t)w * (size_t)h * 3) {
        fprintf(stderr, "resnet50: %s: %s\n", path, rgb ? "truncated pixel data" : "out of memory");
        free(rgb);
        fclose(fp);
        return 0;
    }
    fclose(fp);
    scale = (double)(w < h ? w : h) / size;
    ox = (w - size * scale) / 2.0, oy = (h - size * scale) / 2.0;
    for (i = 0; i < size; i++) {
        for (j = 0; j < size; j++) {
            double sy = oy + (i + 0.5) * scale - 0.5, sx = ox + (j + 0.5) * scale - 0.5;
            long y0 = (long)floor(sy), x0 = (long)floor(sx);
            double fy = sy - y0, fx = sx - x0;
            long y1 = y0 + 1, x1 = x0 + 1;
            y0 = y0 < 0 ? 0 : y0 >= h ? h - 1 : y0, y1 = y1 < 0 ? 0 : y1 >= h ? h - 1 : y1;
            x0 = x0 < 0 ? 0 : x0 >= w ? w - 1 : x0, x1 = x1 < 0 ? 0 : x1 >= w ? w - 1 : x1;
            for (c = 0; c < 3; c++) {
                double v = (1 - fy) * ((1 - fx) * rgb[(y0 * w + x0) * 3 + c] +
                                       fx * rgb[(y0 * w + x1) * 3 + c]) +
                           fy * ((1 - fx) * rgb[(y1 * w + x0) * 3 + c] +
                                 fx * rgb[(y1 * w + x1) * 3 + c]);
                x[((size_t)c * size + i) * size + j] = (float)((v / maxval - mean[c]) / stdv[c]);
            }
        }
    }
    free(rgb);
    return 1;
}

static char **load_labels(const char *path)
{
    FILE *fp = fopen(path, "r");
    char line[512], **names;
    int n = 0;
    if (!fp) {
        fprintf(stderr, "resnet50: %s: cannot open the labels file; printing class numbers\n",
                path);
        return NULL;
    }
    names = (char **)calloc(CLASSES, sizeof *names);
    while (names && n < CLASSES && fgets(line, sizeof line, fp)) {
        size_t len = strcspn(line, "\r\n");
        line[len] = '\0';
        names[n] = (char *)malloc(len + 1);
        if (names[n])
            memcpy(names[n], line, len + 1);
        n++;
    }
    fclose(fp);
    return names;
}

/* ------------------------------------------------------------------------------ main */
int main(int argc, char **argv)
{
    options o;
    safetensors_file *wf = NULL, *ref = NULL;
    weights w;
    nnop_context_options copts;
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_tensor_desc xd;
    nnop_value v;
    void *xt = NULL, *yt = NULL;
    float *x = NULL, *y = NULL, *ref_logits = NULL;
    char **labels = NULL;
    char err[SAFETENSORS_ERROR_LEN];
    int n, i, k, rc = 1;
    size_t xcount, ycount, es;
    double t0, t_compile, t_run = 0.0;
    nnop_status st;

    if (!parse_args(argc, argv, &o))
        return 2;
    es = nnop_dtype_size(o.dtype);
    if (o.weights && safetensors_open(o.weights, &wf, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "resnet50: %s\n", err);
        return 1;
    }
    /* the input: reference file, images, or random */
    if (o.reference) {
        const safetensors_tensor *ti, *tl;
        if (safetensors_open(o.reference, &ref, err, sizeof err) != NNOP_OK) {
            fprintf(stderr, "resnet50: %s\n", err);
            goto done;
        }
        ti = safetensors_find(ref, "input");
        tl = safetensors_find(ref, "logits");
        if (!ti || !tl || ti->ndim != 4 || ti->shape[1] != 3 || ti->shape[2] != ti->shape[3] ||
            tl->ndim != 2 || tl->shape[0] != ti->shape[0] || tl->shape[1] != CLASSES) {
            fprintf(stderr,
                    "resnet50: %s: needs \"input\" [N, 3, S, S] and \"logits\" "
                    "[N, 1000]\n",
                    o.reference);
            goto done;
        }
        n = (int)ti->shape[0];
        o.size = (int)ti->shape[2];
    } else {
        n = o.n_images ? o.n_images : o.batch;
    }
    xcount = (size_t)n * 3 * o.size * o.size;
    ycount = (size_t)n * CLASSES;
    x = (float *)malloc(xcount * sizeof(float));
    y = (float *)malloc(ycount * sizeof(float));
    xt = malloc(xcount * es);
    yt = malloc(ycount * es);
    if (!x || !y || !xt || !yt) {
        fprintf(stderr, "resnet50: out of memory\n");
        goto done;
    }
    if (o.reference) {
        int64_t s4[4], s2[2];
        s4[0] = n, s4[1] = 3, s4[2] = s4[3] = o.size, s2[0] = n, s2[1] = CLASSES;
        ref_logits = (float *)malloc(ycount * sizeof(float));
        if (!ref_logits ||
            safetensors_read_f32(ref, "input", 4, s4, x, err, sizeof err) != NNOP_OK ||
            safetensors_read_f32(ref, "logits", 2, s2, ref_logits, err, sizeof err) != NNOP_OK) {
            fprintf(stderr, "resnet50: %s\n", ref_logits ? err : "out of memory");
            goto done;
        }
    } else if (o.n_images) {
        for (i = 0; i < n; i++)
            if (!load_ppm(o.images[i], o.size, x + (size_t)i * 3 * o.size * o.size))
                goto done;
    } else {
        uint64_t s = 12345;
        for (i = 0; i < (int)xcount; i++)
            x[i] = uniform(&s) * 1.5f;
    }
    if (o.labels)
        labels = load_labels(o.labels);

    nnop_context_options_init(&copts);
    copts.backend = o.backend;
    st = nnop_context_create(&copts, &ctx);
    if (st != NNOP_OK) {
        fprintf(stderr, "resnet50: nnop_context_create: %s\n", nnop_context_create_error());
        goto done;
    }
    printf("nnop %d.%d.%d: backend %s; ResNet-50, %s weights%s%s, dtype %s, batch %d of %dx%d\n",
           nnop_version() / 10000, nnop_version() / 100 % 100, nnop_version() % 100,
           nnop_context_backend(ctx) == NNOP_BACKEND_CUDA ? "CUDA (GPU)" : "CPU reference",
           o.weights ? "file" : "random", o.weights ? " " : "", o.weights ? o.weights : "",
           o.dtype == NNOP_F16 ? "f16" : "f32", n, o.size, o.size);

    t0 = cli_now_seconds();
    st = nnop_graph_create(ctx, &g);
    if (st != NNOP_OK) {
        fprintf(stderr, "resnet50: nnop_graph_create: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    memset(&w, 0, sizeof w);
    w.file = wf, w.g = g, w.t = o.dtype, w.seed = 20261129u, w.st = NNOP_OK;
    xd = nnop_tensor_4d(o.dtype, NNOP_NCHW, n, 3, o.size, o.size);
    v = resnet50(&w, nnop_input(g, "image", &xd));
    if (w.st != NNOP_OK) {
        fprintf(stderr, "resnet50: %s\n", w.err);
        goto done;
    }
    st = nnop_output(g, v, "logits");
    if (st == NNOP_OK)
        st = nnop_graph_compile(g, NULL, &plan);
    if (st != NNOP_OK) {
        fprintf(stderr, "resnet50: building the graph: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    nnop_graph_destroy(g);
    g = NULL;
    t_compile = cli_now_seconds() - t0;
    printf("graph compiled in %.2f s: %d partitions\n", t_compile, nnop_plan_num_partitions(plan));

    st = nnop_convert(NNOP_F32, x, o.dtype, xt, (int64_t)xcount);
    if (st == NNOP_OK)
        st = cli_run_once(ctx, plan, xt, xcount * es, yt, ycount * es, &t_run);
    if (st == NNOP_OK)
        st = nnop_convert(o.dtype, yt, NNOP_F32, y, (int64_t)ycount);
    if (st != NNOP_OK) {
        fprintf(stderr, "resnet50: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    printf("ran in %.3f s (first execute, including copies)\n", t_run);

    for (i = 0; i < n; i++) {
        const float *row = y + (size_t)i * CLASSES;
        int best[16];
        int top = o.top < 16 ? o.top : 16;
        double mx = row[0], sum = 0.0;
        for (k = 1; k < CLASSES; k++)
            mx = row[k] > mx ? row[k] : mx;
        for (k = 0; k < CLASSES; k++)
            sum += exp(row[k] - mx);
        for (k = 0; k < top; k++) {
            int c, b = -1;
            for (c = 0; c < CLASSES; c++) {
                int taken = 0, j;
                for (j = 0; j < k; j++)
                    taken |= best[j] == c;
                if (!taken && (b < 0 || row[c] > row[b]))
                    b = c;
            }
            best[k] = b;
        }
        printf("%s:", o.n_images ? o.images[i] : o.reference ? "reference input" : "random");
        if (!o.n_images)
            printf(" %d", i);
        printf("\n");
        for (k = 0; k < top; k++)
            printf("    %4d  p=%.4f  logit %8.4f  %s\n", best[k], exp(row[best[k]] - mx) / sum,
                   row[best[k]], labels && labels[best[k]] ? labels[best[k]] : "");
    }
    rc = 0;
    if (ref_logits) {
        double max_err = 0.0, max_ref = 0.0, rel;
        int same_top1 = 0;
        for (i = 0; i < (int)ycount; i++) {
            double d = fabs((double)y[i] - ref_logits[i]);
            max_err = d > max_err ? d : max_err;
            max_ref = fabs(ref_logits[i]) > max_ref ? fabs(ref_logits[i]) : max_ref;
        }
        for (i = 0; i < n; i++) {
            int a = 0, b = 0;
            for (k = 1; k < CLASSES; k++) {
                a = y[(size_t)i * CLASSES + k] > y[(size_t)i * CLASSES + a] ? k : a;
                b = ref_logits[(size_t)i * CLASSES + k] > ref_logits[(size_t)i * CLASSES + b] ? k
                                                                                              : b;
            }
            same_top1 += a == b;
        }
        rel = max_err / (max_ref > 0 ? max_ref : 1.0);
        printf("against PyTorch's logits: max |diff| %.3e, max |logit| %.3f, relative error "
               "%.3e; same top-1 on %d of %d\n",
               max_err, max_ref, rel, same_top1, n);
        if (o.max_rel_err >= 0 && !(rel <= o.max_rel_err)) {
            fprintf(stderr, "resnet50: relative error %.3e exceeds --max-rel-err %.3e\n", rel,
                    o.max_rel_err);
            rc = 1;
        }
    }
done:
    nnop_graph_destroy(g);
    nnop_plan_destroy(plan);
    nnop_context_destroy(ctx);
    safetensors_close(wf);
    safetensors_close(ref);
    if (labels) {
        for (i = 0; i < CLASSES; i++)
            free(labels[i]);
        free(labels);
    }
    free(x), free(y), free(xt), free(yt), free(ref_logits);
    return rc;
}
