/* nb_run.c: nnop-bench contexts, binding, timing, checks and device peaks. The CUDA runtime is
 * used only for events, streams and a device-to-device copy, and only in a CUDA build
 * (NNOP_BENCH_HAVE_CUDA); everything else goes through nnop's public API. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nb_run.h"

#ifdef NNOP_BENCH_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static int failf(char *err, size_t len, const char *fmt, ...) NB_PRINTF(3, 4);
static int failf(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (err && len) {
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int nb_have_cuda_timing(void)
{
#ifdef NNOP_BENCH_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int nb_cuda_device_count(void)
{
#ifdef NNOP_BENCH_HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
#else
    return 0;
#endif
}

int nb_env_open(nb_env *e, nnop_backend backend, int device, const nnop_context_options *base,
                char *err, size_t len)
{
    nnop_context_options o;
    memset(e, 0, sizeof *e);
    if (base)
        o = *base;
    else
        nnop_context_options_init(&o);
    o.backend = backend;
    o.device = device;
    o.stream = NULL;
    if (nnop_context_create(&o, &e->ctx) != NNOP_OK)
        return failf(err, len, "%s", nnop_context_create_error());
    e->device = device;
    e->cuda = nnop_context_backend(e->ctx) == NNOP_BACKEND_CUDA;
    snprintf(e->name, sizeof e->name, "host CPU");
#ifdef NNOP_BENCH_HAVE_CUDA
    if (e->cuda) {
        cudaStream_t s;
        struct cudaDeviceProp prop;
        if (cudaSetDevice(device) != cudaSuccess ||
            cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
            nnop_context_destroy(e->ctx);
            e->ctx = NULL;
            return failf(err, len, "device %d: no CUDA stream", device);
        }
        e->stream = (void *)s;
        if (nnop_context_set_stream(e->ctx, e->stream) != NNOP_OK) {
            failf(err, len, "nnop_context_set_stream: %s", nnop_context_last_error(e->ctx));
            nb_env_close(e);
            return -1;
        }
        if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
            snprintf(e->name, sizeof e->name, "%.120s", prop.name);
            e->l2_bytes = (size_t)prop.l2CacheSize;
        }
    }
#endif
    return 0;
}

void nb_env_close(nb_env *e)
{
    if (e->ctx) {
        nnop_context_synchronize(e->ctx);
        nnop_context_destroy(e->ctx);
    }
#ifdef NNOP_BENCH_HAVE_CUDA
    if (e->stream) {
        cudaSetDevice(e->device);
        cudaStreamDestroy((cudaStream_t)e->stream);
    }
#endif
    memset(e, 0, sizeof *e);
}

/* xorshift64* uniform in [lo, hi) */
static float uniform(uint64_t *s, float lo, float hi)
{
    uint64_t x = *s;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    *s = x;
    return lo + (hi - lo) * (float)((x * 2685821657736338717ull) >> 40) / (float)(1 << 24);
}

nnop_status nb_work_graph(nb_work *w, nnop_context *ctx, nnop_graph **out, char *err, size_t len)
{
    if (w->inst)
        return nb_instance_graph(w->inst, ctx, out, err, len);
    return nb_net_graph(w->net, ctx, out, err, len);
}

/* Host data of input i (a problem's own; a net's made from the seed, or an ONNX model's from
 * its test data, malloc'ed in *owned); NULL with the reason in err. */
static const void *input_data(nb_work *w, int i, const nnop_tensor_desc *d, void **owned, char *err,
                              size_t len)
{
    int64_t n = nnop_tensor_elements(d), j;
    uint64_t s = (w->seed + 7u) * 0x9E3779B97F4A7C15ull + (uint64_t)i;
    float *f;
    *owned = NULL;
    if (w->inst)
        return w->inst->host[w->inst->input_slot[i]];
    if (w->net->onnx_data)
        return *owned = nb_onnx_data_input(w->net->onnx_data, i, d, err, len);
    f = (float *)malloc((size_t)n * sizeof *f);
    *owned = malloc(nnop_tensor_bytes(d));
    if (!f || !*owned) {
        free(f);
        free(*owned);
        *owned = NULL;
        failf(err, len, "out of host memory");
        return NULL;
    }
    for (j = 0; j < n; j++)
        f[j] = uniform(&s, w->net->kind == NB_NET_RESNET50 ? -1.0f : 0.0f, 1.0f);
    nnop_convert(NNOP_F32, f, d->dtype, *owned, n);
    free(f);
    return *owned;
}

int nb_sets_for(const nb_env *e, const nb_method *m, double set_bytes)
{
    double want = m->rotate_bytes > 0 ? m->rotate_bytes
                                      : (e->l2_bytes ? 2.0 * (double)e->l2_bytes : 64.0 * 1048576);
    double sets = ceil(want / (set_bytes > 1 ? set_bytes : 1));
    if (!e->cuda && m->rotate_bytes <= 0)
        return 2; /* the CPU backend: caches matter less than its run time */
    return sets < 2 ? 2 : sets > 64 ? 64 : (int)sets;
}

void nb_unbind(nb_bound *b)
{
    int i;
    if (b->env && b->env->ctx) {
        nnop_context_synchronize(b->env->ctx);
        for (i = 0; b->in && i < b->sets * b->nin; i++)
            nnop_free(b->env->ctx, b->in[i]);
        for (i = 0; b->out && i < b->sets * b->nout; i++)
            nnop_free(b->env->ctx, b->out[i]);
    }
    free(b->in);
    free(b->out);
    nnop_plan_destroy(b->plan);
    memset(b, 0, sizeof *b);
}

int nb_bind(nb_bound *b, nb_env *e, nb_work *w, int cuda_graph, int sets, char *err, size_t len)
{
    nnop_graph *g = NULL;
    nnop_compile_options co;
    nnop_tensor_desc d;
    double t0;
    int i, s;
    memset(b, 0, sizeof *b);
    b->env = e;
    if (nb_work_graph(w, e->ctx, &g, err, len) != NNOP_OK)
        return -1;
    nnop_compile_options_init(&co);
    co.cuda_graph = cuda_graph;
    t0 = nb_now();
    if (nnop_graph_compile(g, &co, &b->plan) != NNOP_OK) {
        failf(err, len, "compile: %s", nnop_context_last_error(e->ctx));
        nnop_graph_destroy(g);
        return -1;
    }
    b->compile_ms = (nb_now() - t0) * 1e3;
    nnop_graph_destroy(g);
    b->nin = nnop_plan_num_inputs(b->plan);
    b->nout = nnop_plan_num_outputs(b->plan);
    b->sets = sets < 1 ? 1 : sets;
    b->in = (void **)calloc((size_t)(b->sets * b->nin + 1), sizeof(void *));
    b->out = (void **)calloc((size_t)(b->sets * b->nout + 1), sizeof(void *));
    if (!b->in || !b->out) {
        nb_unbind(b);
        return failf(err, len, "out of host memory");
    }
    for (i = 0; i < b->nin; i++) {
        void *owned;
        const void *h;
        nnop_plan_input_desc(b->plan, i, &d);
        h = input_data(w, i, &d, &owned, err, len);
        if (!h) {
            nb_unbind(b);
            return -1;
        }
        b->set_bytes += (double)nnop_tensor_bytes(&d);
        for (s = 0; s < b->sets; s++) {
            void **p = &b->in[s * b->nin + i];
            if (nnop_malloc(e->ctx, nnop_tensor_bytes(&d), p) != NNOP_OK ||
                nnop_copy_in(e->ctx, *p, h, nnop_tensor_bytes(&d)) != NNOP_OK) {
                failf(err, len, "input %d: %s", i, nnop_context_last_error(e->ctx));
                free(owned);
                nb_unbind(b);
                return -1;
            }
        }
        free(owned);
    }
    for (i = 0; i < b->nout; i++) {
        nnop_plan_output_desc(b->plan, i, &d);
        b->set_bytes += (double)nnop_tensor_bytes(&d);
        for (s = 0; s < b->sets; s++)
            if (nnop_malloc(e->ctx, nnop_tensor_bytes(&d), &b->out[s * b->nout + i]) != NNOP_OK) {
                failf(err, len, "output %d: %s", i, nnop_context_last_error(e->ctx));
                nb_unbind(b);
                return -1;
            }
    }
    return 0;
}

static nnop_status call(nb_bound *b, int i)
{
    int s = i % b->sets;
    return nnop_plan_execute(b->plan, (const void *const *)&b->in[s * b->nin],
                             &b->out[s * b->nout]);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define NB_MAX_REPS 101

int nb_time(nb_bound *b, const nb_method *m, double *gpu_us, double *host_us, char *err, size_t len)
{
    double g[NB_MAX_REPS], h[NB_MAX_REPS], t0;
    int reps = m->reps < 1 ? 1 : m->reps > NB_MAX_REPS ? NB_MAX_REPS : m->reps;
    int warm = m->warmup > 0 ? m->warmup : 2 * b->sets, calls = m->calls, r, i;
    nnop_context *ctx = b->env->ctx;
#ifdef NNOP_BENCH_HAVE_CUDA
    cudaEvent_t e0 = NULL, e1 = NULL;
    if (b->env->cuda) {
        cudaSetDevice(b->env->device);
        if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess)
            return failf(err, len, "cudaEventCreate failed");
    }
#endif
    *gpu_us = -1.0;
    for (i = 0; i < warm; i++)
        if (call(b, i) != NNOP_OK)
            return failf(err, len, "execute: %s", nnop_context_last_error(ctx));
    nnop_context_synchronize(ctx);
    if (calls <= 0) { /* about 20 ms a repeat */
        t0 = nb_now();
        for (i = 0; i < b->sets; i++)
            call(b, i);
        nnop_context_synchronize(ctx);
        t0 = (nb_now() - t0) / b->sets;
        calls = t0 > 0 ? (int)(0.02 / t0) : 1000;
        calls = calls < 1 ? 1 : calls > 1000 ? 1000 : calls;
    }
    for (r = 0; r < reps; r++) {
#ifdef NNOP_BENCH_HAVE_CUDA
        if (b->env->cuda)
            cudaEventRecord(e0, (cudaStream_t)b->env->stream);
#endif
        t0 = nb_now();
        for (i = 0; i < calls; i++)
            if (call(b, i) != NNOP_OK)
                return failf(err, len, "execute: %s", nnop_context_last_error(ctx));
        h[r] = (nb_now() - t0) * 1e6 / calls;
#ifdef NNOP_BENCH_HAVE_CUDA
        if (b->env->cuda) {
            float ms = 0.0f;
            cudaEventRecord(e1, (cudaStream_t)b->env->stream);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&ms, e0, e1);
            g[r] = (double)ms * 1e3 / calls;
        }
#endif
        nnop_context_synchronize(ctx);
        if (!b->env->cuda)
            g[r] = h[r];
    }
    qsort(h, (size_t)reps, sizeof h[0], cmp_d);
    qsort(g, (size_t)reps, sizeof g[0], cmp_d);
    *host_us = h[reps / 2];
    if (b->env->cuda && nb_have_cuda_timing())
        *gpu_us = g[reps / 2];
#ifdef NNOP_BENCH_HAVE_CUDA
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
#endif
    return 0;
}

double *nb_run_once(nb_bound *b, int64_t *n, char *err, size_t len)
{
    nnop_tensor_desc d;
    void *h;
    double *y;
    *n = 0;
    if (call(b, 0) != NNOP_OK) {
        failf(err, len, "execute: %s", nnop_context_last_error(b->env->ctx));
        return NULL;
    }
    nnop_plan_output_desc(b->plan, 0, &d);
    h = malloc(nnop_tensor_bytes(&d));
    if (!h || nnop_copy_out(b->env->ctx, h, b->out[0], nnop_tensor_bytes(&d)) != NNOP_OK) {
        failf(err, len, "copy out: %s", h ? nnop_context_last_error(b->env->ctx) : "no memory");
        free(h);
        return NULL;
    }
    y = nb_to_logical(&d, h);
    free(h);
    *n = nnop_tensor_elements(&d);
    return y;
}

void nb_check(nb_env *e, nb_env *ref, nb_work *w, int cuda_graph, double tol, nb_result *r)
{
    nb_bound b, rb;
    double *got, *want = NULL;
    int64_t n = 0, nr = 0;
    char err[512];
    nnop_dtype dt = w->inst ? w->inst->p.dt : w->net->dt;
    r->check_tol = tol > 0 ? tol : nb_tolerance(dt);
    if (nb_bind(&b, e, w, cuda_graph, 1, err, sizeof err) != 0) {
        r->check = 2;
        snprintf(r->note, sizeof r->note, "%s", err);
        return;
    }
    got = nb_run_once(&b, &n, err, sizeof err);
    nb_unbind(&b);
    if (got && w->net && w->net->onnx_data) {
        /* an ONNX model's own expected output (ONNX Runtime's, or its test data's) */
        snprintf(r->check_ref, sizeof r->check_ref, "onnx-data");
        want = nb_onnx_data_output(w->net->onnx_data, &nr, err, sizeof err);
    } else if (got && ref) {
        snprintf(r->check_ref, sizeof r->check_ref, "cpu-backend");
        if (nb_bind(&rb, ref, w, 0, 1, err, sizeof err) == 0) {
            want = nb_run_once(&rb, &nr, err, sizeof err);
            nb_unbind(&rb);
        }
    } else if (got && w->inst) {
        snprintf(r->check_ref, sizeof r->check_ref, "naive-f64");
        want = nb_reference(w->inst, &nr);
        if (!want)
            snprintf(err, sizeof err, "reference: out of host memory");
    } else if (got) {
        snprintf(err, sizeof err, "no reference for a network on the CPU backend itself");
    }
    if (!got || !want) {
        r->check = 2;
        snprintf(r->note, sizeof r->note, "%s", err);
    } else if (n != nr) {
        r->check = 2;
        snprintf(r->note, sizeof r->note, "output has %lld elements, the reference %lld",
                 (long long)n, (long long)nr);
    } else {
        r->check = nb_compare(got, want, n, r->check_tol, &r->check_err);
    }
    free(got);
    free(want);
}

void nb_measure_peaks(nb_env *e, const nb_method *m, nb_report *rep)
{
    nb_method pm = *m;
    size_t bytes = e->cuda ? (size_t)512 << 20 : (size_t)64 << 20;
    void *a = NULL, *b = NULL;
    double t[NB_MAX_REPS];
    int reps = m->reps < 1 ? 1 : m->reps > NB_MAX_REPS ? NB_MAX_REPS : m->reps, r, i;
    /* copy bandwidth: read + write bytes per copy */
    if (nnop_malloc(e->ctx, bytes, &a) == NNOP_OK && nnop_malloc(e->ctx, bytes, &b) == NNOP_OK) {
        for (r = 0; r < reps; r++) {
            double t0;
#ifdef NNOP_BENCH_HAVE_CUDA
            if (e->cuda) {
                cudaEvent_t e0, e1;
                float ms = 0.0f;
                cudaSetDevice(e->device);
                cudaEventCreate(&e0);
                cudaEventCreate(&e1);
                cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)e->stream);
                cudaEventRecord(e0, (cudaStream_t)e->stream);
                for (i = 0; i < 5; i++)
                    cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)e->stream);
                cudaEventRecord(e1, (cudaStream_t)e->stream);
                cudaEventSynchronize(e1);
                cudaEventElapsedTime(&ms, e0, e1);
                cudaEventDestroy(e0);
                cudaEventDestroy(e1);
                t[r] = (double)ms * 1e-3 / 5;
                continue;
            }
#endif
            memset(a, r, bytes);
            t0 = nb_now();
            for (i = 0; i < 5; i++)
                memcpy(b, a, bytes);
            t[r] = (nb_now() - t0) / 5;
        }
        qsort(t, (size_t)reps, sizeof t[0], cmp_d);
        if (t[reps / 2] > 0)
            rep->peak_gbs = 2.0 * (double)bytes / t[reps / 2] / 1e9;
    }
    nnop_free(e->ctx, a);
    nnop_free(e->ctx, b);
    /* matmul: a big nnop_linear */
    {
        nb_problem p;
        nb_instance in;
        nb_work w;
        nb_bound bd;
        char err[256];
        double g, h;
        memset(&p, 0, sizeof p);
        p.op = NB_OP_LINEAR;
        p.n = p.c = p.k = e->cuda ? 8192 : 512;
        p.dt = e->cuda ? NNOP_F16 : NNOP_F32;
        nb_instance_init(&in, &p, 1);
        w.inst = &in;
        w.net = NULL;
        w.seed = 1;
        pm.calls = 0;
        pm.warmup = 0;
        snprintf(rep->peak_dtype, sizeof rep->peak_dtype, "%s", nb_dtype_name(p.dt));
        if (nb_bind(&bd, e, &w, 0, 2, err, sizeof err) == 0) {
            if (nb_time(&bd, &pm, &g, &h, err, sizeof err) == 0)
                rep->peak_tflops = nb_problem_flops(&p) / ((g > 0 ? g : h) * 1e-6) / 1e12;
            nb_unbind(&bd);
        } else {
            fprintf(stderr, "nnop-bench: matmul peak: %s\n", err);
        }
        nb_instance_free(&in);
    }
}
