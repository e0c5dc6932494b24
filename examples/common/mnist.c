/* mnist.c: MNIST IDX reader and the graphs of the bundled classifiers (see mnist.h). */
#include "mnist.h"
#include "errbuf.h"
#include "regular_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------ IDX files */
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Read a whole IDX file: header of hdr_bytes (magic first: its low byte is the number of
 * dimensions, each a big-endian count after it), then payload bytes. A regular file only, and
 * the payload the header's dimensions describe is checked against the file's size before a
 * byte of it is read or allocated (a 1 GiB sparse file used to be read whole first). */
static nnop_status read_idx(const char *path, uint32_t magic, size_t hdr_bytes, unsigned char *hdr,
                            unsigned char **payload, size_t *payload_bytes, char *err,
                            size_t err_len)
{
    FILE *fp = NULL;
    uint64_t size = 0, want = 1;
    size_t i, ndim = (hdr_bytes - 4) / 4;
    nnop_status st = regular_file_open(path, &fp, &size, err, err_len);
    *payload = NULL;
    if (st != NNOP_OK)
        return st;
    if (size < hdr_bytes || fread(hdr, 1, hdr_bytes, fp) != hdr_bytes) {
        fclose(fp);
        errbuf_set(err, err_len, "%s: file of %llu bytes is too short for an IDX header", path,
                   (unsigned long long)size);
        return NNOP_ERR_FORMAT;
    }
    if (be32(hdr) != magic) {
        fclose(fp);
        errbuf_set(err, err_len,
                   "%s: IDX magic is 0x%08lx, expected 0x%08lx (is it gzip "
                   "compressed? gunzip it first)",
                   path, (unsigned long)be32(hdr), (unsigned long)magic);
        return NNOP_ERR_FORMAT;
    }
    for (i = 0; i < ndim; i++) /* each dim < 2^32: the product of 3 never wraps 2^64 ... */
        want = want * be32(hdr + 4 + 4 * i) > ((uint64_t)1 << 40)
                       ? ((uint64_t)1 << 40) + 1 /* ... and is capped well below it */
                       : want * be32(hdr + 4 + 4 * i);
    if (size - hdr_bytes != want) {
        fclose(fp);
        errbuf_set(err, err_len,
                   "%s: the header's dimensions describe %llu bytes of data, the file holds %llu",
                   path, (unsigned long long)want, (unsigned long long)(size - hdr_bytes));
        return NNOP_ERR_FORMAT;
    }
    *payload_bytes = (size_t)want;
    *payload = (unsigned char *)malloc(*payload_bytes ? *payload_bytes : 1);
    if (!*payload) {
        fclose(fp);
        errbuf_set(err, err_len, "%s: out of memory", path);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    if (fread(*payload, 1, *payload_bytes, fp) != *payload_bytes) {
        fclose(fp);
        free(*payload);
        *payload = NULL;
        errbuf_set(err, err_len, "%s: read error", path);
        return NNOP_ERR_IO;
    }
    fclose(fp);
    return NNOP_OK;
}

nnop_status mnist_read_idx1(const char *path, int expected_count, int max_value,
                            unsigned char **out, int *count, char *err, size_t err_len)
{
    unsigned char hdr[8], *data;
    size_t bytes;
    uint32_t n;
    size_t i;
    nnop_status st = read_idx(path, 0x801, sizeof hdr, hdr, &data, &bytes, err, err_len);
    *out = NULL;
    if (st != NNOP_OK)
        return st;
    n = be32(hdr + 4);
    if (bytes != n || n > 0x7fffffffu || (expected_count > 0 && n != (uint32_t)expected_count)) {
        errbuf_set(err, err_len, "%s: header says %lu entries, the file holds %lu%s%d", path,
                   (unsigned long)n, (unsigned long)bytes, expected_count > 0 ? ", expected " : "",
                   expected_count > 0 ? expected_count : 0);
        free(data);
        return NNOP_ERR_FORMAT;
    }
    for (i = 0; i < bytes; i++) {
        if (data[i] >= max_value) {
            errbuf_set(err, err_len, "%s: entry %lu is %d, must be below %d", path,
                       (unsigned long)i, data[i], max_value);
            free(data);
            return NNOP_ERR_FORMAT;
        }
    }
    *out = data;
    *count = (int)n;
    return NNOP_OK;
}

void mnist_free(mnist_set *s)
{
    if (!s)
        return;
    free(s->pixels);
    free(s->labels);
    s->pixels = s->labels = NULL;
    s->count = 0;
}

nnop_status mnist_load(const char *dir, const char *prefix, mnist_set *out, char *err,
                       size_t err_len)
{
    char path[4096];
    unsigned char hdr[16];
    size_t bytes;
    uint32_t n, rows, cols;
    nnop_status st;
    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte", dir, prefix);
    st = read_idx(path, 0x803, sizeof hdr, hdr, &out->pixels, &bytes, err, err_len);
    if (st != NNOP_OK)
        return st;
    n = be32(hdr + 4), rows = be32(hdr + 8), cols = be32(hdr + 12);
    if (rows != MNIST_ROWS || cols != MNIST_COLS || n == 0 || n > 1000000 ||
        bytes != (size_t)n * MNIST_PIXELS) {
        errbuf_set(err, err_len,
                   "%s: header says %lu images of %lux%lu, the file holds %lu "
                   "pixel bytes (expected 28x28 images)",
                   path, (unsigned long)n, (unsigned long)rows, (unsigned long)cols,
                   (unsigned long)bytes);
        mnist_free(out);
        return NNOP_ERR_FORMAT;
    }
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte", dir, prefix);
    st = mnist_read_idx1(path, (int)n, MNIST_CLASSES, &out->labels, &out->count, err, err_len);
    if (st != NNOP_OK) {
        mnist_free(out);
        return st;
    }
    return NNOP_OK;
}

void mnist_to_input(const unsigned char *pixels, int n, float *x)
{
    size_t i, total = (size_t)n * MNIST_PIXELS;
    for (i = 0; i < total; i++)
        x[i] = (float)pixels[i] / 255.0f;
}

/* ------------------------------------------------------------------------------ models */
int mnist_model_from_name(const char *name)
{
    if (name && strcmp(name, "lenet") == 0)
        return MNIST_LENET;
    if (name && strcmp(name, "resnet") == 0)
        return MNIST_RESNET;
    return -1;
}

const char *mnist_model_name(mnist_model_kind m)
{
    return m == MNIST_RESNET ? "resnet" : "lenet";
}

/* Widths of the bundled models (tools/train_mnist.py has the same). */
#define LENET_C1     16
#define LENET_C2     32
#define LENET_HIDDEN 128
#define RESNET_C1    12
#define RESNET_C2    24
#define RESNET_C3    32

/* State of one graph build: the first failure stops further weight loads. */
typedef struct builder {
    nnop_graph *g;
    const safetensors_file *w;
    nnop_dtype t;
    nnop_status st;
    char *err;
    size_t err_len;
} builder;

/* A constant from the weight file, checked against the shape the model needs. */
static nnop_value weight(builder *b, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2,
                         int64_t d3)
{
    int64_t shape[4];
    int64_t count;
    nnop_tensor_desc d;
    float *f32 = NULL;
    void *conv = NULL;
    nnop_value v;
    v.id = -1; /* on failure: an error value, never nnop_none() where an operand is required */
    if (b->st != NNOP_OK)
        return v;
    shape[0] = d0, shape[1] = d1, shape[2] = d2, shape[3] = d3;
    if (ndim == 4)
        d = nnop_tensor_4d(b->t, NNOP_NCHW, d0, d1, d2, d3);
    else if (ndim == 2)
        d = nnop_tensor_2d(b->t, d0, d1);
    else
        d = nnop_tensor_1d(b->t, d0);
    count = nnop_tensor_elements(&d);
    f32 = (float *)malloc((size_t)count * sizeof(float));
    conv = malloc((size_t)count * nnop_dtype_size(b->t));
    if (!f32 || !conv) {
        errbuf_set(b->err, b->err_len, "out of memory loading tensor '%s'", name);
        b->st = NNOP_ERR_OUT_OF_MEMORY;
    } else {
        b->st = safetensors_read_f32(b->w, name, ndim, shape, f32, b->err, b->err_len);
        if (b->st == NNOP_OK)
            b->st = nnop_convert(NNOP_F32, f32, b->t, conv, count);
        if (b->st == NNOP_OK)
            v = nnop_constant(b->g, name, &d, conv);
    }
    free(f32);
    free(conv);
    return v;
}

static nnop_value conv_w(builder *b, const char *name, int64_t k, int64_t c, int64_t r)
{
    return weight(b, name, 4, k, c, r, r);
}

static nnop_value vec(builder *b, const char *name, int64_t n)
{
    return weight(b, name, 1, n, 0, 0, 0);
}

static nnop_value mat(builder *b, const char *name, int64_t rows, int64_t cols)
{
    return weight(b, name, 2, rows, cols, 0, 0);
}

/* Inference batch-norm with PyTorch's parameter names under prefix (eps 1e-5). */
static nnop_value batchnorm(builder *b, nnop_value x, const char *prefix, int64_t c)
{
    char n0[128], n1[128], n2[128], n3[128];
    nnop_value gamma, beta, mean, var;
    snprintf(n0, sizeof n0, "%s.weight", prefix);
    snprintf(n1, sizeof n1, "%s.bias", prefix);
    snprintf(n2, sizeof n2, "%s.running_mean", prefix);
    snprintf(n3, sizeof n3, "%s.running_var", prefix);
    gamma = vec(b, n0, c), beta = vec(b, n1, c), mean = vec(b, n2, c), var = vec(b, n3, c);
    return nnop_batchnorm(b->g, x, gamma, beta, mean, var, 1e-5f);
}

/* The next node is named after its weight's module ("layer1.0.conv1" for
 * "layer1.0.conv1.weight"), so messages and nnop_plan_describe speak of the model's layers. */
static void name_node(builder *b, const char *weight_name)
{
    char name[128];
    const char *dot = strrchr(weight_name, '.');
    size_t n =
            dot && strcmp(dot, ".weight") == 0 ? (size_t)(dot - weight_name) : strlen(weight_name);
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), weight_name);
    (void)nnop_graph_name_next(b->g, name);
}

static nnop_value conv(builder *b, nnop_value x, const char *name, int64_t k, int64_t c, int64_t r,
                       int64_t stride, int64_t pad)
{
    nnop_conv_params p;
    nnop_value w;
    p.pad[0] = p.pad[1] = pad;
    p.stride[0] = p.stride[1] = stride;
    p.dilation[0] = p.dilation[1] = 1;
    p.groups = 1;
    w = conv_w(b, name, k, c, r);
    name_node(b, name); /* after the weight: the name is the next builder call's */
    return nnop_conv(b->g, x, w, &p);
}

static nnop_value maxpool2(builder *b, nnop_value x)
{
    nnop_pool_params p;
    memset(&p, 0, sizeof p);
    p.window[0] = p.window[1] = 2;
    p.stride[0] = p.stride[1] = 2;
    return nnop_pool(b->g, x, NNOP_POOL_MAX, &p);
}

static nnop_value relu(builder *b, nnop_value x)
{
    return nnop_act(b->g, x, NNOP_ACT_RELU, 0.0f);
}

/* torchvision's BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)). */
static nnop_value basic_block(builder *b, nnop_value x, const char *prefix, int64_t cin,
                              int64_t cout, int64_t stride)
{
    char name[128], bn[128];
    nnop_value y, shortcut = x;
    snprintf(name, sizeof name, "%s.conv1.weight", prefix);
    snprintf(bn, sizeof bn, "%s.bn1", prefix);
    y = relu(b, batchnorm(b, conv(b, x, name, cout, cin, 3, stride, 1), bn, cout));
    snprintf(name, sizeof name, "%s.conv2.weight", prefix);
    snprintf(bn, sizeof bn, "%s.bn2", prefix);
    y = batchnorm(b, conv(b, y, name, cout, cout, 3, 1, 1), bn, cout);
    if (stride != 1 || cin != cout) {
        snprintf(name, sizeof name, "%s.downsample.0.weight", prefix);
        snprintf(bn, sizeof bn, "%s.downsample.1", prefix);
        shortcut = batchnorm(b, conv(b, x, name, cout, cin, 1, stride, 0), bn, cout);
    }
    return relu(b, nnop_add(b->g, y, shortcut));
}

/* conv (weight name.weight) + bias (name.bias) + relu + 2x2 max pool, weights loaded in
 * order so that the first missing or wrong tensor is the one reported. */
static nnop_value conv_bias_relu_pool(builder *b, nnop_value x, const char *name, int64_t k,
                                      int64_t c, int64_t r)
{
    char wn[128], bn[128];
    nnop_conv_params p;
    nnop_value w, bias;
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    w = conv_w(b, wn, k, c, r);
    bias = vec(b, bn, k);
    memset(&p, 0, sizeof p);
    p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = p.groups = 1;
    name_node(b, name);
    return maxpool2(b, relu(b, nnop_bias(b->g, nnop_conv(b->g, x, w, &p), bias)));
}

/* y = x w^T + bias with name.weight (out x in) and name.bias. */
static nnop_value linear(builder *b, nnop_value x, const char *name, int64_t out, int64_t in)
{
    char wn[128], bn[128];
    nnop_value w, bias;
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    w = mat(b, wn, out, in);
    bias = vec(b, bn, out);
    name_node(b, name);
    return nnop_linear(b->g, x, w, bias);
}

/* Architectures: keep in step with tools/train_mnist.py. */
static nnop_value lenet(builder *b, nnop_value x)
{
    x = conv_bias_relu_pool(b, x, "conv1", LENET_C1, 1, 5);
    x = conv_bias_relu_pool(b, x, "conv2", LENET_C2, LENET_C1, 5);
    x = relu(b, linear(b, nnop_flatten(b->g, x), "fc1", LENET_HIDDEN, LENET_C2 * 4 * 4));
    return linear(b, x, "fc2", MNIST_CLASSES, LENET_HIDDEN);
}

static nnop_value resnet(builder *b, nnop_value x)
{
    x = relu(b, batchnorm(b, conv(b, x, "conv1.weight", RESNET_C1, 1, 3, 1, 1), "bn1", RESNET_C1));
    x = maxpool2(b, x);
    x = basic_block(b, x, "layer1.0", RESNET_C1, RESNET_C1, 1);
    x = basic_block(b, x, "layer2.0", RESNET_C1, RESNET_C2, 2);
    x = basic_block(b, x, "layer3.0", RESNET_C2, RESNET_C3, 2);
    x = nnop_flatten(b->g, nnop_global_avg_pool(b->g, x));
    return linear(b, x, "fc", MNIST_CLASSES, RESNET_C3);
}

nnop_status mnist_build(nnop_graph *g, nnop_context *ctx, mnist_model_kind m,
                        const safetensors_file *w, nnop_dtype t, int64_t n, char *err,
                        size_t err_len)
{
    builder b;
    nnop_tensor_desc xd;
    nnop_value x;
    nnop_status st;
    if (!g || !ctx || !w || n < 1) {
        errbuf_set(err, err_len, "mnist_build: invalid argument");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    b.g = g, b.w = w, b.t = t, b.st = NNOP_OK, b.err = err, b.err_len = err_len;
    xd = nnop_tensor_4d(t, NNOP_NCHW, n, 1, MNIST_ROWS, MNIST_COLS);
    x = nnop_input(g, "digits", &xd);
    x = m == MNIST_RESNET ? resnet(&b, x) : lenet(&b, x);
    if (b.st != NNOP_OK)
        return b.st;
    st = nnop_output(g, x, "logits");
    if (st == NNOP_OK)
        st = nnop_graph_status(g);
    if (st != NNOP_OK)
        errbuf_set(err, err_len, "building the %s graph: %s", mnist_model_name(m),
                   nnop_context_last_error(ctx)[0] ? nnop_context_last_error(ctx)
                                                   : nnop_status_string(st));
    return st;
}

int mnist_argmax(nnop_dtype t, const void *logits_row)
{
    float v[MNIST_CLASSES];
    int i, best = 0;
    if (nnop_convert(t, logits_row, NNOP_F32, v, MNIST_CLASSES) != NNOP_OK)
        return -1;
    for (i = 1; i < MNIST_CLASSES; i++)
        if (v[i] > v[best])
            best = i;
    return best;
}
