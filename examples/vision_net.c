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
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "nnop/nnop.h"
#include "regular_file.h"
#include "safetensors.h"

typedef struct options {
    const char *graph, *weights, *reference;
    int batch, size, random_weights, top;
    nnop_dtype dtype;
    nnop_backend backend;
    double max_rel_err;
} options;

/* The graph being built: the JSON, the weights' source, the values made so far. */
typedef struct builder {
    const cJSON *tensors; /* name -> shape */
    const safetensors_file *file;
    nnop_graph *g;
    nnop_dtype t;
    uint64_t seed;
    nnop_value *v;
    int n_values;
    nnop_status st;
    char err[SAFETENSORS_ERROR_LEN + 128];
} builder;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: vision_net --graph FILE.json (--weights FILE | --random-weights) [options]\n"
            "  --graph FILE        the network as nnop operations "
            "(tools/export_vision_net.py)\n"
            "  --weights FILE      its weights (safetensors, torchvision's names)\n"
            "  --random-weights    seeded random weights instead (no file needed)\n"
            "  --reference FILE    take the input from FILE's \"input\" tensor and compare the\n"
            "                      output with its \"output\" tensor (PyTorch's)\n"
            "  --max-rel-err E     with --reference: exit 1 when max|y - ref| / max|ref| > E\n"
            "  --dtype f32|f16     tensor type of the graph (default f32)\n"
            "  --batch N           batch without a reference (default 2)\n"
            "  --size N            input height and width without a reference (default 64)\n"
            "  --backend B         auto (default), cpu or cuda\n"
            "  --top K             classes to print per image of a classifier (default 3)\n");
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

/* A JSON number as an integer; -1 for NaN, fractions and magnitudes past 2^53 (a cast of
 * those would be undefined; the builders then refuse the -1 with a message). */
static int64_t whole(double v)
{
    if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0) || v != (double)(int64_t)v)
        return -1;
    return (int64_t)v;
}

/* ------------------------------------------------------------------------------ weights */
static float uniform(uint64_t *s)
{
    /* xorshift64*: uniform in [-1, 1) */
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (float)((*s * 2685821657736338717ull) >> 40) / 8388608.0f - 1.0f;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static void fail(builder *b, nnop_status st, const char *what, const char *name)
{
    if (b->st == NNOP_OK) {
        b->st = st;
        if (name)
            snprintf(b->err, sizeof b->err, "%s '%s'", what, name);
        else
            snprintf(b->err, sizeof b->err, "%s", what);
    }
}

/* Random values for a tensor of the network: batch-norm statistics and scales near their
 * usual values, weights uniform with variance 2 / fan_in. */
static void random_fill(builder *b, const char *name, int ndim, const int64_t *shape, float *f,
                        int64_t count)
{
    int64_t fan_in = 1, i;
    int k;
    for (k = 1; k < ndim; k++)
        fan_in *= shape[k];
    for (i = 0; i < count; i++) {
        float u = uniform(&b->seed);
        f[i] = ends_with(name, "running_var")           ? 1.0f + 0.25f * (u + 1.0f)
               : ends_with(name, "running_mean")        ? 0.05f * u
               : ndim == 1 && ends_with(name, "weight") ? 1.0f + 0.1f * u
               : ndim == 1                              ? 0.05f * u
                                                        : (float)sqrt(6.0 / (double)fan_in) * u;
    }
}

/* The constant called name (shape from the graph's tensor table), in the graph's dtype. */
static nnop_value constant(builder *b, const char *name)
{
    const cJSON *s = name ? cJSON_GetObjectItemCaseSensitive(b->tensors, name) : NULL;
    int64_t shape[4], count = 1;
    int ndim = 0;
    const cJSON *e;
    nnop_tensor_desc d;
    float *f32;
    void *conv;
    nnop_value v;
    v.id = -1;
    if (b->st != NNOP_OK)
        return v;
    if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) < 1 || cJSON_GetArraySize(s) > 4) {
        fail(b, NNOP_ERR_FORMAT, "the graph has no 1-D to 4-D shape for tensor", name);
        return v;
    }
    cJSON_ArrayForEach(e, s)
    {
        if (!cJSON_IsNumber(e) || whole(e->valuedouble) < 1 || e->valuedouble > 1e9) {
            fail(b, NNOP_ERR_FORMAT, "bad shape for tensor", name);
            return v;
        }
        shape[ndim] = whole(e->valuedouble);
        count *= shape[ndim++];
    }
    if (ndim == 3) {
        fail(b, NNOP_ERR_FORMAT, "3-D tensors are not read:", name);
        return v;
    }
    d = ndim == 4   ? nnop_tensor_4d(b->t, NNOP_NCHW, shape[0], shape[1], shape[2], shape[3])
        : ndim == 2 ? nnop_tensor_2d(b->t, shape[0], shape[1])
                    : nnop_tensor_1d(b->t, shape[0]);
    f32 = (float *)malloc((size_t)count * sizeof(float));
    conv = malloc((size_t)count * nnop_dtype_size(b->t));
    if (!f32 || !conv) {
        fail(b, NNOP_ERR_OUT_OF_MEMORY, "out of memory for tensor", name);
    } else if (b->file) {
        char err[SAFETENSORS_ERROR_LEN];
        nnop_status st = safetensors_read_f32(b->file, name, ndim, shape, f32, err, sizeof err);
        if (st != NNOP_OK) {
            b->st = st;
            snprintf(b->err, sizeof b->err, "%s", err);
        }
    } else {
        random_fill(b, name, ndim, shape, f32, count);
    }
    if (b->st == NNOP_OK)
        b->st = nnop_convert(NNOP_F32, f32, b->t, conv, count);
    if (b->st == NNOP_OK)
        v = nnop_constant(b->g, name, &d, conv);
    free(f32);
    free(conv);
    return v;
}

/* ------------------------------------------------------------------------------ operations */
static const char *str(const cJSON *op, const char *key)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(op, key);
    return cJSON_IsString(s) ? s->valuestring : NULL;
}

static double num(const cJSON *op, const char *key, double dflt)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(op, key);
    return cJSON_IsNumber(n) ? n->valuedouble : dflt;
}

/* A JSON number as a float, clamped to float's range (a cast past it would be undefined). */
static float fnum(const cJSON *op, const char *key, float dflt)
{
    double v = num(op, key, dflt);
    return v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : (float)v;
}

static int64_t inum(const cJSON *op, const char *key, int64_t dflt)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(op, key);
    return cJSON_IsNumber(n) ? whole(n->valuedouble) : dflt;
}

/* key as [h, w] of integers into out; dflt for both when absent */
static void pair(const cJSON *op, const char *key, int64_t dflt, int64_t *out)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(op, key);
    out[0] = out[1] = dflt;
    if (cJSON_IsArray(a) && cJSON_GetArraySize(a) == 2) {
        out[0] = whole(cJSON_GetArrayItem(a, 0)->valuedouble);
        out[1] = whole(cJSON_GetArrayItem(a, 1)->valuedouble);
    }
}

static nnop_value opt_constant(builder *b, const cJSON *op, const char *key)
{
    const char *name = str(op, key);
    return name ? constant(b, name) : nnop_none();
}

static const struct {
    const char *name;
    nnop_act_kind kind;
} acts[] = {{"relu", NNOP_ACT_RELU},
            {"relu6", NNOP_ACT_RELU6},
            {"hardswish", NNOP_ACT_HARDSWISH},
            {"hardsigmoid", NNOP_ACT_HARDSIGMOID},
            {"silu", NNOP_ACT_SILU},
            {"sigmoid", NNOP_ACT_SIGMOID},
            {"gelu", NNOP_ACT_GELU},
            {"gelu_tanh", NNOP_ACT_GELU_TANH},
            {"tanh", NNOP_ACT_TANH}};

static nnop_value act(builder *b, nnop_value x, const char *kind)
{
    size_t i;
    for (i = 0; kind && i < sizeof acts / sizeof acts[0]; i++)
        if (strcmp(kind, acts[i].name) == 0)
            return nnop_act(b->g, x, acts[i].kind, 0.0f);
    fail(b, NNOP_ERR_FORMAT, "unknown activation", kind);
    return x;
}

static nnop_value conv(builder *b, const cJSON *op, nnop_value x)
{
    nnop_conv_params p;
    nnop_value y;
    pair(op, "pad", 0, p.pad);
    pair(op, "stride", 1, p.stride);
    pair(op, "dilation", 1, p.dilation);
    p.groups = inum(op, "groups", 1);
    y = nnop_conv(b->g, x, constant(b, str(op, "weight")), &p);
    return str(op, "bias") ? nnop_bias(b->g, y, constant(b, str(op, "bias"))) : y;
}

static nnop_value conv_transpose(builder *b, const cJSON *op, nnop_value x)
{
    nnop_conv_transpose_params p;
    nnop_value y;
    pair(op, "pad", 0, p.pad);
    pair(op, "stride", 1, p.stride);
    pair(op, "dilation", 1, p.dilation);
    pair(op, "output_pad", 0, p.output_pad);
    p.groups = inum(op, "groups", 1);
    y = nnop_conv_transpose(b->g, x, constant(b, str(op, "weight")), &p);
    return str(op, "bias") ? nnop_bias(b->g, y, constant(b, str(op, "bias"))) : y;
}

static nnop_value batchnorm(builder *b, const cJSON *op, nnop_value x)
{
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(op, "params");
    nnop_value p[4];
    int i;
    if (!cJSON_IsArray(ps) || cJSON_GetArraySize(ps) != 4) {
        fail(b, NNOP_ERR_FORMAT, "batchnorm needs 4 params, op", str(op, "op"));
        return x;
    }
    for (i = 0; i < 4; i++)
        p[i] = constant(b, cJSON_GetStringValue(cJSON_GetArrayItem(ps, i)));
    return nnop_batchnorm(b->g, x, p[0], p[1], p[2], p[3], fnum(op, "eps", 1e-5f));
}

static nnop_value pool(builder *b, const cJSON *op, nnop_value x)
{
    nnop_pool_params p;
    const char *kind = str(op, "kind");
    memset(&p, 0, sizeof p);
    pair(op, "window", 1, p.window);
    pair(op, "stride", 1, p.stride);
    pair(op, "pad", 0, p.pad);
    p.count_include_pad = inum(op, "count_include_pad", 1) != 0;
    return nnop_pool(b->g, x, kind && strcmp(kind, "avg") == 0 ? NNOP_POOL_AVG : NNOP_POOL_MAX, &p);
}

static nnop_value resize(builder *b, const cJSON *op, nnop_value x)
{
    nnop_resize_params p;
    const cJSON *scale = cJSON_GetObjectItemCaseSensitive(op, "scale");
    const char *mode = str(op, "mode");
    memset(&p, 0, sizeof p);
    p.mode = mode && strcmp(mode, "bilinear") == 0 ? NNOP_RESIZE_BILINEAR : NNOP_RESIZE_NEAREST;
    if (mode && strcmp(mode, "bilinear") != 0 && strcmp(mode, "nearest") != 0)
        fail(b, NNOP_ERR_FORMAT, "unknown resize mode", mode);
    p.align_corners = inum(op, "align_corners", 0) != 0;
    pair(op, "size", 0, p.size);
    if (cJSON_IsArray(scale) && cJSON_GetArraySize(scale) == 2) {
        p.scale[0] = cJSON_GetArrayItem(scale, 0)->valuedouble;
        p.scale[1] = cJSON_GetArrayItem(scale, 1)->valuedouble;
    }
    return nnop_resize(b->g, x, &p);
}

/* The op's inputs as values; 0 when one is not made yet. */
static int inputs(builder *b, const cJSON *op, nnop_value *in, int max, int *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(op, "inputs"), *e;
    *n = 0;
    cJSON_ArrayForEach(e, a)
    {
        int64_t id = cJSON_IsNumber(e) ? whole(e->valuedouble) : -1;
        if (*n == max || id < 0 || id >= b->n_values || b->v[id].id < 0)
            return 0;
        in[(*n)++] = b->v[id];
    }
    return *n > 0;
}

static nnop_value operation(builder *b, const cJSON *op)
{
    nnop_value in[NNOP_MAX_CONCAT_INPUTS], bad;
    const char *kind = str(op, "op");
    int n;
    bad.id = -1;
    if (!kind || !inputs(b, op, in, NNOP_MAX_CONCAT_INPUTS, &n)) {
        fail(b, NNOP_ERR_FORMAT,
             kind ? "an input of this op is not a value made before it, op"
                  : "an op without \"op\" or \"inputs\"",
             kind);
        return bad;
    }
    if (strcmp(kind, "conv") == 0)
        return conv(b, op, in[0]);
    if (strcmp(kind, "conv_transpose") == 0)
        return conv_transpose(b, op, in[0]);
    if (strcmp(kind, "batchnorm") == 0)
        return batchnorm(b, op, in[0]);
    if (strcmp(kind, "act") == 0)
        return act(b, in[0], str(op, "kind"));
    if (strcmp(kind, "add") == 0 && n == 2)
        return nnop_add(b->g, in[0], in[1]);
    if (strcmp(kind, "mul") == 0 && n == 2)
        return nnop_mul(b->g, in[0], in[1]);
    if (strcmp(kind, "mul_const") == 0)
        return nnop_mul(b->g, in[0], constant(b, str(op, "tensor")));
    if (strcmp(kind, "pool") == 0)
        return pool(b, op, in[0]);
    if (strcmp(kind, "gap") == 0)
        return nnop_global_avg_pool(b->g, in[0]);
    if (strcmp(kind, "flatten") == 0)
        return nnop_flatten(b->g, in[0]);
    if (strcmp(kind, "linear") == 0)
        return nnop_linear(b->g, in[0], constant(b, str(op, "weight")),
                           opt_constant(b, op, "bias"));
    if (strcmp(kind, "layer_norm") == 0)
        return nnop_layer_norm(b->g, in[0], opt_constant(b, op, "weight"),
                               opt_constant(b, op, "bias"), NNOP_NORM_C, fnum(op, "eps", 1e-5f));
    if (strcmp(kind, "concat") == 0)
        return nnop_concat(b->g, in, n);
    if (strcmp(kind, "resize") == 0)
        return resize(b, op, in[0]);
    fail(b, NNOP_ERR_FORMAT, "unknown op", kind);
    return bad;
}

/* The whole network on input x: every op in order; the graph's first output. */
static nnop_value network(builder *b, const cJSON *j, nnop_value x)
{
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(j, "ops"), *op;
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(j, "outputs");
    int i;
    int64_t out;
    nnop_value bad;
    bad.id = -1;
    b->n_values = (int)(inum(j, "n_values", 0) > 1000000 ? -1 : inum(j, "n_values", 0));
    if (b->n_values < 1 || !cJSON_IsArray(ops) || !cJSON_IsArray(outs)) {
        fail(b, NNOP_ERR_FORMAT, "the graph lacks n_values (1 to 1000000), ops or outputs", NULL);
        return bad;
    }
    b->v = (nnop_value *)malloc((size_t)b->n_values * sizeof *b->v);
    if (!b->v) {
        fail(b, NNOP_ERR_OUT_OF_MEMORY, "out of memory for the values", NULL);
        return bad;
    }
    for (i = 0; i < b->n_values; i++)
        b->v[i].id = -1;
    b->v[0] = x;
    cJSON_ArrayForEach(op, ops)
    {
        int64_t id = inum(op, "out", -1);
        nnop_value y = operation(b, op);
        if (b->st != NNOP_OK)
            return bad;
        if (nnop_graph_status(b->g) != NNOP_OK)
            return y; /* a builder refused the op: the compile reports why */
        if (id < 1 || id >= b->n_values) {
            fail(b, NNOP_ERR_FORMAT, "an op's out is out of range, op", str(op, "op"));
            return bad;
        }
        b->v[id] = y;
    }
    out = cJSON_IsNumber(cJSON_GetArrayItem(outs, 0))
                  ? whole(cJSON_GetArrayItem(outs, 0)->valuedouble)
                  : -1;
    if (out < 0 || out >= b->n_values || b->v[out].id < 0) {
        fail(b, NNOP_ERR_FORMAT, "the graph's first output is not a value it makes", NULL);
        return bad;
    }
    return b->v[out];
}

/* The graph file: a regular file (never a FIFO) of at most 64 MiB, one JSON object. */
static cJSON *read_graph(const char *path)
{
    FILE *f = NULL;
    uint64_t n = 0;
    char *text = NULL, err[256];
    cJSON *j = NULL;
    if (regular_file_open(path, &f, &n, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "vision_net: %s\n", err);
        return NULL;
    }
    if (n > 0 && n < ((uint64_t)64 << 20) && (text = (char *)malloc((size_t)n + 1)) != NULL &&
        fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
        j = cJSON_Parse(text);
    }
    fclose(f);
    free(text);
    if (!cJSON_IsObject(j)) {
        fprintf(stderr, "vision_net: %s: not a JSON graph of at most 64 MiB\n", path);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
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
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_tensor_desc xd, yd;
    builder b;
    char err[SAFETENSORS_ERROR_LEN];
    float *x = NULL, *y = NULL, *yref = NULL;
    void *xt = NULL, *yt = NULL, *dx = NULL, *dy = NULL;
    const void *ins[1];
    void *outs[1];
    size_t xcount, ycount, es;
    int n, rc = 1, i;
    int64_t classes = 0;
    nnop_status st;
    const char *model;
    double t0;

    memset(&b, 0, sizeof b);
    if (!parse_args(argc, argv, &o))
        return 2;
    es = nnop_dtype_size(o.dtype);
    j = read_graph(o.graph);
    if (!j)
        return 1;
    model = str(j, "model") ? str(j, "model") : "network";
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
    b.tensors = cJSON_GetObjectItemCaseSensitive(j, "tensors");
    b.file = wf, b.g = g, b.t = o.dtype, b.seed = 20261201u, b.st = NNOP_OK;
    xd = nnop_tensor_4d(o.dtype, NNOP_NCHW, n, 3, o.size, o.size);
    {
        nnop_value out = network(&b, j, nnop_input(g, "image", &xd));
        if (b.st != NNOP_OK) {
            fprintf(stderr, "vision_net: %s: %s\n", o.graph, b.err);
            goto done;
        }
        st = nnop_output(g, out, "output");
        if (st == NNOP_OK)
            st = nnop_value_desc(g, out, &yd);
    }
    if (st == NNOP_OK)
        st = nnop_graph_compile(g, NULL, &plan);
    if (st != NNOP_OK) {
        fprintf(stderr, "vision_net: building the graph: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    printf("graph of %d ops compiled in %.2f s: %d partitions\n",
           cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "ops")), cli_now_seconds() - t0,
           nnop_plan_num_partitions(plan));
    ycount = (size_t)nnop_tensor_elements(&yd);
    classes = yd.ndim == 2 ? yd.dims[1] : 0;
    y = (float *)malloc(ycount * sizeof(float));
    yt = malloc(ycount * es);
    if (!y || !yt) {
        fprintf(stderr, "vision_net: out of memory\n");
        goto done;
    }
    st = nnop_convert(NNOP_F32, x, o.dtype, xt, (int64_t)xcount);
    if (st == NNOP_OK)
        st = nnop_malloc(ctx, xcount * es, &dx);
    if (st == NNOP_OK)
        st = nnop_malloc(ctx, ycount * es, &dy);
    if (st == NNOP_OK)
        st = nnop_copy_in(ctx, dx, xt, xcount * es);
    ins[0] = dx, outs[0] = dy;
    t0 = cli_now_seconds();
    if (st == NNOP_OK)
        st = nnop_plan_execute(plan, ins, outs);
    if (st == NNOP_OK)
        st = nnop_copy_out(ctx, yt, dy, ycount * es);
    if (st == NNOP_OK)
        st = nnop_convert(o.dtype, yt, NNOP_F32, y, (int64_t)ycount);
    if (st != NNOP_OK) {
        fprintf(stderr, "vision_net: %s\n", nnop_context_last_error(ctx));
        goto done;
    }
    printf("ran in %.3f s (first execute, including copies); output [%lld", cli_now_seconds() - t0,
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
        const safetensors_tensor *to = safetensors_find(ref, "output");
        yref = (float *)malloc(ycount * sizeof(float));
        if (!to || !yref ||
            safetensors_read_f32(ref, "output", yd.ndim, yd.dims, yref, err, sizeof err) !=
                    NNOP_OK) {
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
    if (ctx) {
        nnop_free(ctx, dx);
        nnop_free(ctx, dy);
    }
    free(b.v);
    nnop_graph_destroy(g);
    nnop_plan_destroy(plan);
    nnop_context_destroy(ctx);
    safetensors_close(wf);
    safetensors_close(ref);
    cJSON_Delete(j);
    free(x), free(y), free(xt), free(yt), free(yref);
    return rc;
}
