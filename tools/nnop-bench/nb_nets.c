/* nb_nets.c: the networks nnop-bench runs by name: ResNet-50 (seeded random weights, any
 * batch, dtype, layout and image size; the graph of bench/resnet50_graph.c) and, when the
 * examples' support library is built in (NB_HAVE_MNIST), the bundled MNIST models and the
 * torchvision networks of examples/nets (random weights, any batch, dtype, layout and size). */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* readlink */
#endif
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE 1 /* realpath beside _POSIX_C_SOURCE */
#endif
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nb_run.h"

#ifdef NB_HAVE_MNIST
#include "mnist.h"
#include "safetensors.h"
#include "vision_graph.h"
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#elif defined(__APPLE__)
#include <limits.h> /* PATH_MAX */
#include <mach-o/dyld.h>
#elif defined(__linux__)
#include <unistd.h>
#endif
#endif

#ifndef NB_EXAMPLES_DIR
#define NB_EXAMPLES_DIR "examples"
#endif

static const char *const net_names[NB_NET_COUNT] = {
        "resnet50",        "lenet",         "mnist-resnet", "mobilenet_v3_large",
        "efficientnet_b0", "convnext_tiny", "unet"};

int nb_net_parse(const char *name)
{
    int i;
    for (i = 0; i < NB_NET_COUNT; i++)
        if (strcmp(name, net_names[i]) == 0)
            return i;
    return -1;
}

const char *nb_net_name(nb_net_kind k)
{
    return (unsigned)k < NB_NET_COUNT ? net_names[k] : "?";
}

int nb_net_any_shape(nb_net_kind k)
{
    return k != NB_NET_LENET && k != NB_NET_MNIST_RESNET;
}

int nb_have_mnist(void)
{
#ifdef NB_HAVE_MNIST
    return 1;
#else
    return 0;
#endif
}

#ifdef NB_HAVE_MNIST
/* The folder of this executable with its trailing separator in buf (len > 1); its length,
 * 0 where unknown. */
static size_t exe_dir(char *buf, size_t len)
{
    size_t n = 0;
    (void)len;
#if defined(_WIN32)
    DWORD r = GetModuleFileNameA(NULL, buf, (DWORD)(len > 0x7fffffff ? 0x7fffffff : len));
    n = r > 0 && r < len ? (size_t)r : 0;
#elif defined(__APPLE__)
    /* the path it was started by may be a symbolic link (a bin/ link into a package's own
     * folder, as Homebrew makes): resolved, share/nnop is looked for beside the real file, as
     * /proc/self/exe gives it on Linux */
    char raw[PATH_MAX], real[PATH_MAX];
    uint32_t sz = (uint32_t)sizeof raw;
    if (_NSGetExecutablePath(raw, &sz) == 0 && realpath(raw, real) && strlen(real) < len) {
        n = strlen(real);
        memcpy(buf, real, n + 1);
    }
#elif defined(__linux__)
    ssize_t r = readlink("/proc/self/exe", buf, len - 1);
    n = r > 0 && (size_t)r < len - 1 ? (size_t)r : 0;
#endif
    while (n > 0 && buf[n - 1] != '/' && buf[n - 1] != '\\')
        n--;
    buf[n] = '\0';
    return n;
}

/* A bundled data file (rel: mnist/lenet.safetensors, nets/unet.json): in $NNOP_BENCH_DATA_DIR
 * when set (and only there, so a test can point it anywhere), else in the installed
 * share/nnop when it is there beside this executable, else in the source tree (a build
 * tree's nnop-bench). */
static void data_path(const char *rel, char *out, size_t len)
{
    const char *env = getenv("NNOP_BENCH_DATA_DIR");
    if (env && env[0]) {
        snprintf(out, len, "%s/%s", env, rel);
        return;
    }
#ifdef NB_DATA_REL
    {
        size_t n = exe_dir(out, len);
        if (n > 0 && (size_t)snprintf(out + n, len - n, "%s/%s", NB_DATA_REL, rel) < len - n) {
            FILE *f = fopen(out, "rb");
            if (f) {
                fclose(f);
                return;
            }
        }
    }
#endif
    snprintf(out, len, "%s/%s", NB_EXAMPLES_DIR, rel);
}

/* after a failed open of a bundled file: where it was looked for */
static void data_hint(char *err, size_t len)
{
    const char *env = getenv("NNOP_BENCH_DATA_DIR");
    size_t n = strlen(err);
    if (n >= len)
        return;
    if (env && env[0])
        snprintf(err + n, len - n, " (NNOP_BENCH_DATA_DIR is set)");
    else
        snprintf(err + n, len - n,
                 " (bundled data: share/nnop of the installation, else %s; or set "
                 "NNOP_BENCH_DATA_DIR)",
                 NB_EXAMPLES_DIR);
}
#endif

static nnop_status failf(char *err, size_t len, nnop_status s, const char *fmt, ...)
        NB_PRINTF(4, 5);
static nnop_status failf(char *err, size_t len, nnop_status s, const char *fmt, ...)
{
    va_list ap;
    if (err && len) {
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return s;
}

typedef struct rn {
    nnop_graph *g;
    nnop_dtype dt;
    nnop_layout layout;
    uint64_t rng;
    int oom;
} rn;

static float uniform(rn *b, float a)
{
    b->rng ^= b->rng << 13, b->rng ^= b->rng >> 7, b->rng ^= b->rng << 17;
    return a * (2.0f * (float)(b->rng >> 40) / (float)(1 << 24) - 1.0f);
}

static nnop_value constant(rn *b, const nnop_tensor_desc *d, float a, float base)
{
    int64_t n = nnop_tensor_elements(d), i;
    float *f = (float *)malloc((size_t)n * sizeof(float));
    void *h = malloc(nnop_tensor_bytes(d));
    nnop_value v;
    if (!f || !h) {
        free(f);
        free(h);
        b->oom = 1;
        return nnop_constant(b->g, NULL, d, NULL);
    }
    for (i = 0; i < n; i++)
        f[i] = base + uniform(b, a);
    nnop_convert(NNOP_F32, f, d->dtype, h, n);
    v = nnop_constant(b->g, NULL, d, h);
    free(f);
    free(h);
    return v;
}

static nnop_value conv_bn(rn *b, nnop_value x, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                          int relu)
{
    nnop_tensor_desc wd = nnop_tensor_4d(b->dt, b->layout, cout, cin, k, k);
    nnop_tensor_desc cd = nnop_tensor_1d(b->dt, cout);
    nnop_conv_params p = {{k / 2, k / 2}, {stride, stride}, {1, 1}, 1};
    nnop_value y =
            nnop_conv(b->g, x, constant(b, &wd, 1.0f / sqrtf((float)(cin * k * k)), 0.0f), &p);
    y = nnop_batchnorm(b->g, y, constant(b, &cd, 0.2f, 1.0f), constant(b, &cd, 0.1f, 0.0f),
                       constant(b, &cd, 0.1f, 0.0f), constant(b, &cd, 0.2f, 1.0f), 1e-5f);
    return relu ? nnop_act(b->g, y, NNOP_ACT_RELU, 0.0f) : y;
}

static nnop_value bottleneck(rn *b, nnop_value x, int64_t cin, int64_t width, int64_t stride)
{
    int64_t cout = width * 4;
    nnop_value skip = (stride != 1 || cin != cout) ? conv_bn(b, x, cin, cout, 1, stride, 0) : x;
    nnop_value y = conv_bn(b, x, cin, width, 1, 1, 1);
    y = conv_bn(b, y, width, width, 3, stride, 1);
    y = conv_bn(b, y, width, cout, 1, 1, 0);
    return nnop_act(b->g, nnop_add(b->g, y, skip), NNOP_ACT_RELU, 0.0f);
}

static void resnet50(rn *b, int64_t n, int64_t size)
{
    static const int blocks[4] = {3, 4, 6, 3};
    nnop_tensor_desc xd = nnop_tensor_4d(b->dt, b->layout, n, 3, size, size);
    nnop_tensor_desc fd = nnop_tensor_2d(b->dt, 1000, 2048), bd = nnop_tensor_1d(b->dt, 1000);
    nnop_pool_params pp = {{3, 3}, {2, 2}, {1, 1}, 0, {0, 0}};
    nnop_value y;
    int64_t cin = 64, width = 64;
    int s, k;
    y = nnop_pool(b->g, conv_bn(b, nnop_input(b->g, "x", &xd), 3, 64, 7, 2, 1), NNOP_POOL_MAX, &pp);
    for (s = 0; s < 4; s++, width *= 2)
        for (k = 0; k < blocks[s]; k++) {
            y = bottleneck(b, y, cin, width, (s > 0 && k == 0) ? 2 : 1);
            cin = width * 4;
        }
    y = nnop_flatten(b->g, nnop_global_avg_pool(b->g, y));
    y = nnop_linear(b->g, y, constant(b, &fd, 0.02f, 0.0f), constant(b, &bd, 0.1f, 0.0f));
    nnop_output(b->g, y, "logits");
}

nnop_status nb_net_graph(const nb_net *net, nnop_context *ctx, nnop_graph **out, char *err,
                         size_t len)
{
    nnop_graph *g = NULL;
    nnop_status s;
    *out = NULL;
    if (net->onnx_path)
        return nb_onnx_graph(net, ctx, out, err, len);
    s = nnop_graph_create(ctx, &g);
    if (s != NNOP_OK)
        return failf(err, len, s, "nnop_graph_create: %s", nnop_context_last_error(ctx));
    if (net->kind == NB_NET_RESNET50) {
        rn b;
        b.g = g;
        b.dt = net->dt;
        b.layout = net->layout;
        b.rng = 88172645463325252ull;
        b.oom = 0;
        resnet50(&b, net->batch, net->size);
        s = nnop_graph_status(g);
        if (s != NNOP_OK)
            failf(err, len, s, "resnet50: %s",
                  b.oom ? "out of host memory" : nnop_context_last_error(ctx));
    } else if (net->kind >= NB_NET_MOBILENET_V3_LARGE) {
#ifdef NB_HAVE_MNIST
        char path[1024], rel[64];
        cJSON *j;
        snprintf(rel, sizeof rel, "nets/%s.json", nb_net_name(net->kind));
        data_path(rel, path, sizeof path);
        j = vision_graph_read(path, err, len);
        s = j ? NNOP_OK : NNOP_ERR_IO;
        if (!j)
            data_hint(err, len);
        if (j) {
            nnop_tensor_desc xd =
                    nnop_tensor_4d(net->dt, net->layout, net->batch, 3, net->size, net->size);
            nnop_value y;
            s = vision_graph_build(ctx, g, j, nnop_input(g, "x", &xd), NULL, net->dt, net->layout,
                                   20261201u, &y, err, len);
            if (s == NNOP_OK)
                s = nnop_output(g, y, "y");
            if (s != NNOP_OK && !err[0])
                failf(err, len, s, "%s", nnop_context_last_error(ctx));
            cJSON_Delete(j);
        }
#else
        s = failf(err, len, NNOP_ERR_UNSUPPORTED,
                  "%s: this nnop-bench was built without the bundled networks (they need "
                  "NNOP_BUILD_EXAMPLES=ON and cJSON at configure)",
                  nb_net_name(net->kind));
#endif
    } else {
#ifdef NB_HAVE_MNIST
        char path[1024], rel[64];
        safetensors_file *w = NULL;
        mnist_model_kind m = net->kind == NB_NET_LENET ? MNIST_LENET : MNIST_RESNET;
        if (net->weights_dir) {
            snprintf(path, sizeof path, "%s/%s.safetensors", net->weights_dir, mnist_model_name(m));
        } else {
            snprintf(rel, sizeof rel, "mnist/%s.safetensors", mnist_model_name(m));
            data_path(rel, path, sizeof path);
        }
        s = safetensors_open(path, &w, err, len);
        if (s != NNOP_OK && !net->weights_dir)
            data_hint(err, len);
        if (s == NNOP_OK) {
            s = mnist_build(g, ctx, m, w, net->dt, net->batch, err, len);
            safetensors_close(w);
        }
#else
        s = failf(err, len, NNOP_ERR_UNSUPPORTED,
                  "%s: this nnop-bench was built without the MNIST models (they need "
                  "NNOP_BUILD_EXAMPLES=ON and cJSON at configure)",
                  nb_net_name(net->kind));
#endif
    }
    if (s != NNOP_OK) {
        nnop_graph_destroy(g);
        return s;
    }
    *out = g;
    return NNOP_OK;
}

const char *nb_net_label(const nb_net *net)
{
    const char *p, *base;
    if (!net->onnx_path)
        return nb_net_name(net->kind);
    for (p = base = net->onnx_path; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    return base;
}

double nb_net_flops(const nb_net *net)
{
    if (net->onnx_path)
        return -1.0;
    if (net->kind == NB_NET_RESNET50) /* 4.09 GMAC at 224 x 224, scaling with the area */
        return 2.0 * 4.089e9 * (double)net->batch * (double)net->size * (double)net->size /
               (224.0 * 224.0);
    return -1.0;
}
