/* bench_kernels.c: nnop's own memory-bound kernels (pooling, global average pooling, softmax,
 * flatten, the standalone epilogue chain, one-op SiLU, GELU and squeeze-excitation multiply,
 * layer norm over C on cuDNN's norm-forward and on the own kernel, alone and with GELU)
 * on large tensors, each as a one-op graph through the public API on a CUDA context: GPU time
 * per execute (CUDA events around ITERS back-to-back executes, median of REPS), achieved GB/s
 * over the bytes the op must move (inputs read once, output written once), next to a
 * cudaMemcpyAsync device-to-device of the same number of bytes timed the same way in the same
 * run. Before timing, the same configuration on a small tensor is checked against the CPU
 * backend. Prints a markdown table.   usage: bench_kernels [--quick]   (--quick: batch / 8,
 * for a smoke run; NNOP_BENCH_ONLY=TEXT: the rows whose "name dtype layout" holds TEXT) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "bench_check.h"
#include "nnop/nnop.h"

#define ITERS 20
#define REPS  7

enum {
    K_MAX,
    K_AVG,
    K_GAP,
    K_SOFTMAX,
    K_FLATTEN,
    K_EPILOGUE,
    K_SILU,
    K_GELU,
    K_SE_MUL,
    K_LN,
    K_LN_PLAIN,
    K_LN_GELU,
    K_LN_GELU_TWO /* the same compiled without fusion: two passes */
};

typedef struct kcase {
    const char *name;
    int kind;
    nnop_dtype dt;
    nnop_layout lay;
    int64_t n, c, h, w;
    int64_t k, s, p; /* pooling window, stride, pad (square) */
    int ndim;        /* 2: softmax over an N x C input */
} kcase;

/* clang-format off */
static const kcase cases[] = {
    {"max pool 3x3/2 p1 (ResNet-50 stem)", K_MAX, NNOP_F16, NNOP_NHWC, 256, 64, 112, 112, 3, 2, 1, 4},
    {"max pool 3x3/2 p1", K_MAX, NNOP_BF16, NNOP_NHWC, 256, 64, 112, 112, 3, 2, 1, 4},
    {"max pool 3x3/2 p1", K_MAX, NNOP_F32, NNOP_NHWC, 128, 64, 112, 112, 3, 2, 1, 4},
    {"max pool 3x3/2 p1", K_MAX, NNOP_F16, NNOP_NCHW, 256, 64, 112, 112, 3, 2, 1, 4},
    {"max pool 2x2/2", K_MAX, NNOP_F16, NNOP_NHWC, 64, 128, 112, 112, 2, 2, 0, 4},
    {"avg pool 3x3/1 p1", K_AVG, NNOP_F16, NNOP_NHWC, 64, 256, 56, 56, 3, 1, 1, 4},
    {"avg pool 2x2/2", K_AVG, NNOP_F32, NNOP_NCHW, 64, 128, 112, 112, 2, 2, 0, 4},
    {"max pool 3x3/2 p1, C=3", K_MAX, NNOP_F16, NNOP_NHWC, 256, 3, 224, 224, 3, 2, 1, 4},
    {"global avg pool (ResNet-50)", K_GAP, NNOP_F16, NNOP_NHWC, 256, 2048, 7, 7, 0, 0, 0, 4},
    {"global avg pool", K_GAP, NNOP_F16, NNOP_NHWC, 256, 2048, 14, 14, 0, 0, 0, 4},
    {"global avg pool", K_GAP, NNOP_F32, NNOP_NCHW, 256, 2048, 7, 7, 0, 0, 0, 4},
    {"softmax N x 1000", K_SOFTMAX, NNOP_F16, NNOP_NCHW, 65536, 1000, 1, 1, 0, 0, 0, 2},
    {"softmax N x 1000", K_SOFTMAX, NNOP_F32, NNOP_NCHW, 32768, 1000, 1, 1, 0, 0, 0, 2},
    {"softmax N x 32000 (a block a row)", K_SOFTMAX, NNOP_F16, NNOP_NCHW, 2048, 32000, 1, 1, 0, 0, 0, 2},
    {"softmax over C=21, 4-D", K_SOFTMAX, NNOP_F16, NNOP_NCHW, 32, 21, 256, 256, 0, 0, 0, 4},
    {"softmax over C=21, 4-D, plane not a power of 2", K_SOFTMAX, NNOP_F16, NNOP_NCHW, 32, 21, 248, 264, 0, 0, 0, 4},
    {"epilogue add+bias+relu", K_EPILOGUE, NNOP_F16, NNOP_NHWC, 64, 256, 56, 56, 0, 0, 0, 4},
    {"epilogue add+bias+relu", K_EPILOGUE, NNOP_F32, NNOP_NCHW, 32, 256, 56, 56, 0, 0, 0, 4},
    {"epilogue SiLU (one op, EfficientNet-B0)", K_SILU, NNOP_F16, NNOP_NHWC, 32, 96, 112, 112, 0, 0, 0, 4},
    {"epilogue GELU (one op, ConvNeXt-T)", K_GELU, NNOP_F16, NNOP_NHWC, 32, 384, 56, 56, 0, 0, 0, 4},
    {"epilogue mul by N,C,1,1 (one op, SE)", K_SE_MUL, NNOP_F16, NNOP_NHWC, 32, 96, 112, 112, 0, 0, 0, 4},
    {"layer norm over C, constant affine (cuDNN norm-forward)", K_LN, NNOP_F16, NNOP_NHWC, 64, 96, 56, 56, 0, 0, 0, 4},
    {"layer norm over C, no affine (own kernel)", K_LN_PLAIN, NNOP_F16, NNOP_NHWC, 64, 96, 56, 56, 0, 0, 0, 4},
    {"layer norm over C, constant affine, then GELU (one pass)", K_LN_GELU, NNOP_F16, NNOP_NHWC, 64, 96, 56, 56, 0, 0, 0, 4},
    {"layer norm over C, constant affine, then GELU (one pass)", K_LN_GELU, NNOP_BF16, NNOP_NHWC, 64, 96, 56, 56, 0, 0, 0, 4},
    {"layer norm over C, constant affine, then GELU (two passes, fusion off)", K_LN_GELU_TWO, NNOP_F16, NNOP_NHWC, 64, 96, 56, 56, 0, 0, 0, 4},
    {"flatten (NHWC transpose)", K_FLATTEN, NNOP_F16, NNOP_NHWC, 256, 512, 14, 14, 0, 0, 0, 4},
    {"flatten (NHWC transpose)", K_FLATTEN, NNOP_F32, NNOP_NHWC, 256, 2048, 7, 7, 0, 0, 0, 4},
};
/* clang-format on */

#define NN(ctx, x)                                                                                 \
    do {                                                                                           \
        nnop_status s_ = (x);                                                                      \
        if (s_ != NNOP_OK) {                                                                       \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x,                      \
                    nnop_context_last_error(ctx));                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static const char *dt_name(nnop_dtype t)
{
    return t == NNOP_F32 ? "f32" : t == NNOP_F16 ? "f16" : "bf16";
}

static const char *layout_name(const kcase *kc)
{
    return kc->ndim == 2 ? "2-D" : kc->lay == NNOP_NHWC ? "NHWC" : "NCHW";
}

/* A constant per-channel vector near base (gamma 1, beta 0: the check stays well scaled). */
static nnop_value per_channel(nnop_graph *g, const char *name, const kcase *kc, float base)
{
    nnop_tensor_desc d = nnop_tensor_1d(kc->dt, kc->c);
    float *f = (float *)malloc((size_t)kc->c * sizeof(float));
    void *h = malloc((size_t)kc->c * 4);
    nnop_value v;
    int64_t i;
    CHECK(f && h);
    for (i = 0; i < kc->c; i++)
        f[i] = base + 0.01f * (float)(i % 13) - 0.06f;
    CHECK(nnop_convert(NNOP_F32, f, kc->dt, h, kc->c) == NNOP_OK);
    v = nnop_constant(g, name, &d, h);
    free(f);
    free(h);
    return v;
}

static void build(nnop_graph *g, const kcase *kc)
{
    nnop_tensor_desc xd = kc->ndim == 2
                                  ? nnop_tensor_2d(kc->dt, kc->n, kc->c)
                                  : nnop_tensor_4d(kc->dt, kc->lay, kc->n, kc->c, kc->h, kc->w);
    nnop_value x = nnop_input(g, "x", &xd), y;
    nnop_pool_params p;
    memset(&p, 0, sizeof p);
    p.window[0] = p.window[1] = kc->k;
    p.stride[0] = p.stride[1] = kc->s;
    p.pad[0] = p.pad[1] = kc->p;
    p.count_include_pad = 1;
    if (kc->kind == K_MAX || kc->kind == K_AVG) {
        y = nnop_pool(g, x, kc->kind == K_MAX ? NNOP_POOL_MAX : NNOP_POOL_AVG, &p);
    } else if (kc->kind == K_GAP) {
        y = nnop_global_avg_pool(g, x);
    } else if (kc->kind == K_SOFTMAX) {
        y = nnop_softmax(g, x);
    } else if (kc->kind == K_FLATTEN) {
        y = nnop_flatten(g, x);
    } else if (kc->kind == K_SILU || kc->kind == K_GELU) {
        y = nnop_act(g, x, kc->kind == K_SILU ? NNOP_ACT_SILU : NNOP_ACT_GELU, 0.0f);
    } else if (kc->kind == K_LN || kc->kind == K_LN_PLAIN || kc->kind == K_LN_GELU ||
               kc->kind == K_LN_GELU_TWO) {
        y = kc->kind == K_LN_PLAIN
                    ? nnop_layer_norm(g, x, nnop_none(), nnop_none(), NNOP_NORM_C, 1e-6f)
                    : nnop_layer_norm(g, x, per_channel(g, "gamma", kc, 1.0f),
                                      per_channel(g, "beta", kc, 0.0f), NNOP_NORM_C, 1e-6f);
        if (kc->kind == K_LN_GELU || kc->kind == K_LN_GELU_TWO)
            y = nnop_act(g, y, NNOP_ACT_GELU, 0.0f);
    } else if (kc->kind == K_SE_MUL) {
        nnop_tensor_desc sd = nnop_tensor_4d(kc->dt, kc->lay, kc->n, kc->c, 1, 1);
        y = nnop_mul(g, x, nnop_input(g, "s", &sd));
    } else {
        nnop_tensor_desc bd = nnop_tensor_1d(kc->dt, kc->c);
        float *bf = (float *)malloc((size_t)kc->c * sizeof(float));
        void *bb = malloc((size_t)kc->c * 4);
        int64_t i;
        CHECK(bf && bb);
        for (i = 0; i < kc->c; i++)
            bf[i] = 0.01f * (float)(i % 17) - 0.08f;
        CHECK(nnop_convert(NNOP_F32, bf, kc->dt, bb, kc->c) == NNOP_OK);
        y = nnop_add(g, x, nnop_input(g, "z", &xd));
        y = nnop_bias(g, y, nnop_constant(g, "bias", &bd, bb));
        y = nnop_act(g, y, NNOP_ACT_RELU, 0.0f);
        free(bf);
        free(bb);
    }
    CHECK(nnop_output(g, y, "y") == NNOP_OK);
}

static nnop_plan *compile(nnop_context *ctx, const kcase *kc)
{
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_compile_options o;
    nnop_compile_options_init(&o);
    o.fuse = kc->kind != K_LN_GELU_TWO;
    NN(ctx, nnop_graph_create(ctx, &g));
    build(g, kc);
    NN(ctx, nnop_graph_compile(g, &o, &p));
    nnop_graph_destroy(g);
    return p;
}

/* n floats uniform in [-1, 1) as dtype t into host memory h */
static void random_host(nnop_dtype t, void *h, int64_t n, uint32_t seed)
{
    float *f = (float *)malloc((size_t)n * sizeof *f);
    uint32_t x = seed * 2654435761u + 12345u;
    int64_t i;
    CHECK(f != NULL);
    for (i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
        f[i] = (float)(x >> 8) / 8388608.0f - 1.0f;
    }
    CHECK(nnop_convert(NNOP_F32, f, t, h, n) == NNOP_OK);
    free(f);
}

/* Device tensor of d filled with random values (a random 16 MB block, repeated). */
static void *random_device(nnop_context *ctx, const nnop_tensor_desc *d, uint32_t seed)
{
    size_t bytes = nnop_tensor_bytes(d), block = (size_t)16 << 20, off;
    int64_t esz = d->dtype == NNOP_F32 ? 4 : 2;
    void *dev = NULL, *h;
    if (block > bytes)
        block = bytes;
    h = malloc(block);
    CHECK(h != NULL);
    random_host(d->dtype, h, (int64_t)block / esz, seed);
    NN(ctx, nnop_malloc(ctx, bytes, &dev));
    for (off = 0; off < bytes; off += block)
        NN(ctx, nnop_copy_in(ctx, (char *)dev + off, h, bytes - off < block ? bytes - off : block));
    free(h);
    return dev;
}

/* The same configuration at a small size on the CPU backend and on the GPU: max relative
 * error (|diff| / (1 + |ref|)); NaN where either disagrees on NaN. */
static double check_small(nnop_context *gpu, const kcase *big)
{
    kcase kc = *big;
    nnop_context *cpu = NULL;
    nnop_context_options o;
    nnop_plan *pc, *pg;
    const void *hin[2], *din[2];
    void *hout[1], *dout[1], *got;
    float *a, *b;
    nnop_tensor_desc d;
    int i, n_in;
    int64_t n, j;
    double worst = 0.0;
    int bad = 0;
    kc.n = 2;
    if (kc.ndim == 4) {
        kc.h = kc.h > 19 ? 19 : kc.h;
        kc.w = kc.w > 17 ? 17 : kc.w;
    }
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    NN(gpu, nnop_context_create(&o, &cpu));
    pc = compile(cpu, &kc);
    pg = compile(gpu, &kc);
    n_in = nnop_plan_num_inputs(pc);
    for (i = 0; i < n_in; i++) {
        void *h, *dv = NULL;
        NN(cpu, nnop_plan_input_desc(pc, i, &d));
        h = malloc(nnop_tensor_bytes(&d));
        CHECK(h != NULL);
        random_host(d.dtype, h, nnop_tensor_elements(&d), 7u + (uint32_t)i);
        NN(gpu, nnop_malloc(gpu, nnop_tensor_bytes(&d), &dv));
        NN(gpu, nnop_copy_in(gpu, dv, h, nnop_tensor_bytes(&d)));
        hin[i] = h;
        din[i] = dv;
    }
    NN(cpu, nnop_plan_output_desc(pc, 0, &d));
    n = nnop_tensor_elements(&d);
    hout[0] = malloc(nnop_tensor_bytes(&d));
    got = malloc(nnop_tensor_bytes(&d));
    a = (float *)malloc((size_t)n * sizeof(float));
    b = (float *)malloc((size_t)n * sizeof(float));
    CHECK(hout[0] && got && a && b);
    NN(gpu, nnop_malloc(gpu, nnop_tensor_bytes(&d), &dout[0]));
    memset(got, 0xFF, nnop_tensor_bytes(&d)); /* poison: NaN */
    NN(gpu, nnop_copy_in(gpu, dout[0], got, nnop_tensor_bytes(&d)));
    NN(cpu, nnop_plan_execute(pc, hin, hout));
    NN(gpu, nnop_plan_execute(pg, din, dout));
    NN(gpu, nnop_copy_out(gpu, got, dout[0], nnop_tensor_bytes(&d)));
    CHECK(nnop_convert(d.dtype, hout[0], NNOP_F32, a, n) == NNOP_OK);
    CHECK(nnop_convert(d.dtype, got, NNOP_F32, b, n) == NNOP_OK);
    for (j = 0; j < n; j++) {
        double e = fabs((double)a[j] - (double)b[j]) / (1.0 + fabs((double)a[j]));
        if (isnan(a[j]) != isnan(b[j]) || (!isnan(a[j]) && !(e <= 1e30)))
            bad = 1;
        else if (!isnan(a[j]) && e > worst)
            worst = e;
    }
    for (i = 0; i < n_in; i++) {
        free((void *)hin[i]);
        nnop_free(gpu, (void *)din[i]);
    }
    nnop_free(gpu, dout[0]);
    free(hout[0]);
    free(got);
    free(a);
    free(b);
    nnop_plan_destroy(pc);
    nnop_plan_destroy(pg);
    nnop_context_destroy(cpu);
    return bad ? NAN : worst;
}

/* Median over REPS of the GPU microseconds of one execute (or one copy when p is NULL). */
static double time_us(nnop_context *ctx, cudaStream_t st, nnop_plan *p, const void *const *in,
                      void *const *out, void *cdst, const void *csrc, size_t cbytes)
{
    cudaEvent_t e0, e1;
    float t[REPS];
    int r, i;
    CHECK(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess);
    for (r = -1; r < REPS; r++) { /* r = -1: warm-up */
        float ms;
        CHECK(cudaEventRecord(e0, st) == cudaSuccess);
        for (i = 0; i < ITERS; i++) {
            if (p)
                NN(ctx, nnop_plan_execute(p, in, out));
            else
                CHECK(cudaMemcpyAsync(cdst, csrc, cbytes, cudaMemcpyDeviceToDevice, st) ==
                      cudaSuccess);
        }
        CHECK(cudaEventRecord(e1, st) == cudaSuccess);
        CHECK(cudaEventSynchronize(e1) == cudaSuccess);
        CHECK(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess);
        if (r >= 0)
            t[r] = ms * 1000.0f / ITERS;
    }
    qsort(t, REPS, sizeof t[0], cmp_f);
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    return t[REPS / 2];
}

int main(int argc, char **argv)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    cudaStream_t st;
    struct cudaDeviceProp prop;
    int drv = 0, rt = 0, quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    /* NNOP_BENCH_ONLY=TEXT: only the rows whose "name dtype layout" holds TEXT (for ncu) */
    const char *only = getenv("NNOP_BENCH_ONLY");
    size_t k, nk = sizeof cases / sizeof cases[0];
    double worst_frac = 1e9;
    int fails = 0;
    time_t now = time(NULL);
    char date[64];
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess);
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.stream = st;
    NN(ctx, nnop_context_create(&o, &ctx));
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# nnop own kernels vs device-to-device copy\n\n");
    printf("%s; %s (%d SMs); driver %d, runtime %d; command: bench_kernels%s\n", date, prop.name,
           prop.multiProcessorCount, drv, rt, quick ? " --quick" : "");
    printf("time: median of %d x %d back-to-back executes between CUDA events; bytes: inputs "
           "read once + output written once; copy: cudaMemcpyAsync D2D of half those bytes "
           "(it reads and writes them), same run; check: max |gpu - cpu| / (1 + |cpu|) on a "
           "small tensor of the same configuration\n\n",
           REPS, ITERS);
    printf("| kernel | shape (N, C, H, W) | dtype | layout | MB moved | time us | GB/s | copy "
           "GB/s | of copy | check | plan |\n");
    printf("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (k = 0; k < nk; k++) {
        kcase kc = cases[k];
        char row[160];
        nnop_plan *p;
        nnop_tensor_desc d;
        const void *in[2] = {NULL, NULL};
        void *out[1], *csrc = NULL, *cdst = NULL;
        size_t moved = 0, half;
        double err, t, tc, gbs, cgbs;
        char desc[512], *nl;
        int i, n_in;
        snprintf(row, sizeof row, "%s %s %s", kc.name, dt_name(kc.dt), layout_name(&kc));
        if (only && !strstr(row, only))
            continue;
        if (quick)
            kc.n = kc.n / 8 > 0 ? kc.n / 8 : 1;
        err = check_small(ctx, &kc);
        p = compile(ctx, &kc);
        nnop_plan_describe(p, desc, sizeof desc);
        nl = strchr(desc, '[');
        if (nl)
            memmove(desc, nl, strlen(nl) + 1);
        nl = strchr(desc, '\n');
        if (nl)
            *nl = '\0';
        n_in = nnop_plan_num_inputs(p);
        for (i = 0; i < n_in; i++) {
            NN(ctx, nnop_plan_input_desc(p, i, &d));
            in[i] = random_device(ctx, &d, 100u + (uint32_t)i);
            moved += nnop_tensor_bytes(&d);
        }
        NN(ctx, nnop_plan_output_desc(p, 0, &d));
        NN(ctx, nnop_malloc(ctx, nnop_tensor_bytes(&d), &out[0]));
        moved += nnop_tensor_bytes(&d);
        half = moved / 2;
        NN(ctx, nnop_malloc(ctx, half, &csrc));
        NN(ctx, nnop_malloc(ctx, half, &cdst));
        CHECK(cudaMemsetAsync(csrc, 0, half, st) == cudaSuccess);
        t = time_us(ctx, st, p, in, out, NULL, NULL, 0);
        tc = time_us(ctx, st, NULL, NULL, NULL, cdst, csrc, half);
        fails += isnan(err) || err > (kc.dt == NNOP_F32 ? 1e-4 : 2e-2);
        gbs = (double)moved / t / 1e3;
        cgbs = 2.0 * (double)half / tc / 1e3;
        /* the unfused row is the reference the one-pass row is read against, not a kernel */
        if (gbs / cgbs < worst_frac && (double)moved >= 64e6 && kc.kind != K_LN_GELU_TWO)
            worst_frac = gbs / cgbs;
        printf("| %s | %lld, %lld, %lld, %lld | %s | %s | %.1f | %.1f | %.0f | %.0f | %.0f%% | "
               "%s%.1e | %s |\n",
               kc.name, (long long)kc.n, (long long)kc.c, (long long)kc.h, (long long)kc.w,
               dt_name(kc.dt), layout_name(&kc), (double)moved / 1e6, t, gbs, cgbs,
               100.0 * gbs / cgbs,
               isnan(err) ? "FAIL " : (err > (kc.dt == NNOP_F32 ? 1e-4 : 2e-2) ? "FAIL " : ""),
               isnan(err) ? 0.0 : err, desc);
        fflush(stdout);
        for (i = 0; i < n_in; i++)
            nnop_free(ctx, (void *)in[i]);
        nnop_free(ctx, out[0]);
        nnop_free(ctx, csrc);
        nnop_free(ctx, cdst);
        nnop_plan_destroy(p);
    }
    printf("\nlowest fraction of copy bandwidth among rows moving >= 64 MB (the two-pass reference "
           "row left out): %.0f%%; %d check "
           "failure(s)\n",
           100.0 * worst_frac, fails);
    nnop_context_destroy(ctx);
    (void)cudaStreamDestroy(st);
    return fails ? 1 : 0;
}
