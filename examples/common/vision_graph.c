/* vision_graph.c: a network described as nnop operations (vision_graph.h) built into an nnop
 * graph, one builder call per operation. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regular_file.h"
#include "vision_graph.h"

/* The graph being built: the JSON, the weights' source, the values made so far. */
typedef struct builder {
    const cJSON *tensors; /* name -> shape */
    const safetensors_file *file;
    nnop_graph *g;
    nnop_dtype t;
    nnop_layout layout; /* of 4-D constants (conv weights are packed in x's layout) */
    uint64_t seed;
    nnop_value *v;
    int n_values;
    nnop_status st;
    char err[SAFETENSORS_ERROR_LEN + 128];
} builder;

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

void vision_tensor_restride(const nnop_tensor_desc *d, float *dst, const float *src, int to_tensor)
{
    int64_t i, n = nnop_tensor_elements(d), idx[NNOP_MAX_DIMS] = {0};
    int k;
    for (i = 0; i < n; i++) {
        int64_t off = 0;
        for (k = 0; k < d->ndim; k++)
            off += idx[k] * d->strides[k];
        if (to_tensor)
            dst[off] = src[i];
        else
            dst[i] = src[off];
        for (k = d->ndim - 1; k >= 0 && ++idx[k] == d->dims[k]; k--)
            idx[k] = 0;
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
    d = ndim == 4   ? nnop_tensor_4d(b->t, b->layout, shape[0], shape[1], shape[2], shape[3])
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
    if (b->st == NNOP_OK) { /* logical order into d's strides (NHWC weights) */
        float *packed = (float *)malloc((size_t)count * sizeof *packed);
        b->st = packed ? NNOP_OK : NNOP_ERR_OUT_OF_MEMORY;
        if (packed) {
            vision_tensor_restride(&d, packed, f32, 1);
            b->st = nnop_convert(NNOP_F32, packed, b->t, conv, count);
            free(packed);
        }
    }
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

/* y plus the op's "bias" constant when it names one (conv and conv_transpose). */
static nnop_value optional_bias(builder *b, const cJSON *op, nnop_value y)
{
    return str(op, "bias") ? nnop_bias(b->g, y, constant(b, str(op, "bias"))) : y;
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
    return optional_bias(b, op, y);
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
    return optional_bias(b, op, y);
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

nnop_status vision_graph_build(nnop_context *ctx, nnop_graph *g, const cJSON *j, nnop_value x,
                               const safetensors_file *weights, nnop_dtype t, nnop_layout layout,
                               uint64_t seed, nnop_value *out, char *err, size_t len)
{
    builder b;
    nnop_status st;
    memset(&b, 0, sizeof b);
    b.tensors = cJSON_GetObjectItemCaseSensitive(j, "tensors");
    b.file = weights, b.g = g, b.t = t, b.layout = layout, b.seed = seed, b.st = NNOP_OK;
    *out = network(&b, j, x);
    free(b.v);
    if (b.st != NNOP_OK) {
        snprintf(err, len, "%s", b.err);
        return b.st;
    }
    st = nnop_graph_status(g);
    if (st != NNOP_OK)
        snprintf(err, len, "%s", nnop_context_last_error(ctx));
    return st;
}

const char *vision_graph_model(const cJSON *j)
{
    const char *m = str(j, "model");
    return m ? m : "network";
}

int vision_graph_ops(const cJSON *j)
{
    return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "ops"));
}

/* The graph file: a regular file (never a FIFO) of at most 64 MiB, one JSON object. */
cJSON *vision_graph_read(const char *path, char *err, size_t len)
{
    FILE *f = NULL;
    uint64_t n = 0;
    char *text = NULL;
    cJSON *j = NULL;
    if (regular_file_open(path, &f, &n, err, len) != NNOP_OK)
        return NULL;
    if (n > 0 && n < ((uint64_t)64 << 20) && (text = (char *)malloc((size_t)n + 1)) != NULL &&
        fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
        j = cJSON_Parse(text);
    }
    fclose(f);
    free(text);
    if (!cJSON_IsObject(j)) {
        snprintf(err, len, "%s: not a JSON graph of at most 64 MiB", path);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}
