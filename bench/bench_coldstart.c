/* bench_coldstart.c: time from nnop_graph_compile start to the first result for ResNet-50
 * (fp16 NHWC), with a persistent plan cache file, under one engine policy. Run it twice in
 * two processes: the first (cache file absent) is the cold start, the second the warm one.
 * Also reports the steady per-batch time, so a warm plan can be compared with a cold one,
 * and where the time to the first result went (the plan's compile profile, device.h).
 *   usage: bench_coldstart --cache FILE [--policy prefer|precompiled|fastest] [--batch N]
 *          [--load-threads N] (nnop_context_options.load_threads; default 0: the library's)
 *          [--warmup-only]   (compile and write the cache, run nothing: ahead-of-time)
 *          [--describe]      (print the plan: which engine or kernel runs each step)
 *          [--no-prefetch]   (nnop_context_options.prefetch -1: no plans rebuilt in the
 *                             background from context creation; src/cuda/prefetch.c)
 *          [--weights-first] (generate the weights before creating the context, so building
 *                             the graph costs only the copies: the compile follows the
 *                             context closely, as in a program that loaded its weights first;
 *                             the prefetch then has little time to run ahead)
 * Besides compile -> first result it prints the context creation and graph building times
 * and the whole of it: process start to first result. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#ifdef __linux__
#include <dlfcn.h>
#endif

#include "cuda/impl/impl.h"
#include "nnop/nnop.h"
#include "resnet50_graph.h"

#define RUNS 20
#define REPS 5

typedef struct args {
    const char *cache, *policy;
    int64_t batch;
    int warmup_only, load_threads, describe, no_prefetch, weights_first;
} args;

static double now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Limits tools/prof_sampler.c (when LD_PRELOADed with NNOP_SAMPLER_GATED=1) to compile ->
 * first result. */
static void sampler_enable(int on)
{
#ifdef __linux__
    void (*enable)(int);
    *(void **)&enable = dlsym(RTLD_DEFAULT, "nnop_sampler_enable");
    if (enable)
        enable(on);
#else
    (void)on;
#endif
}

static int parse(int argc, char **argv, args *a)
{
    int i;
    a->cache = NULL, a->policy = "prefer", a->batch = 32, a->warmup_only = 0, a->load_threads = 0;
    a->describe = 0, a->no_prefetch = 0, a->weights_first = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cache") && i + 1 < argc)
            a->cache = argv[++i];
        else if (!strcmp(argv[i], "--policy") && i + 1 < argc)
            a->policy = argv[++i];
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            a->batch = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--load-threads") && i + 1 < argc)
            a->load_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup-only"))
            a->warmup_only = 1;
        else if (!strcmp(argv[i], "--describe"))
            a->describe = 1;
        else if (!strcmp(argv[i], "--no-prefetch"))
            a->no_prefetch = 1;
        else if (!strcmp(argv[i], "--weights-first"))
            a->weights_first = 1;
        else
            return 0;
    }
    return a->cache != NULL && a->batch > 0;
}

static int set_policy(nnop_context_options *o, const char *p)
{
    if (!strcmp(p, "prefer"))
        o->policy = NNOP_POLICY_PREFER_PRECOMPILED;
    else if (!strcmp(p, "precompiled"))
        o->policy = NNOP_POLICY_PRECOMPILED_ONLY;
    else if (!strcmp(p, "fastest"))
        o->policy = NNOP_POLICY_FASTEST, o->autotune = 1;
    else
        return 0;
    return 1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median over REPS of the mean of RUNS back-to-back executes, in ms (host clock after sync) */
static double steady_ms(nnop_context *ctx, nnop_plan *plan, const void *const *in, void *const *out)
{
    double t[REPS];
    int r, i;
    for (r = 0; r < REPS; r++) {
        double t0 = now_ms();
        for (i = 0; i < RUNS; i++)
            if (nnop_plan_execute(plan, in, out) != NNOP_OK)
                return -1.0;
        if (nnop_context_synchronize(ctx) != NNOP_OK)
            return -1.0;
        t[r] = (now_ms() - t0) / RUNS;
    }
    qsort(t, REPS, sizeof t[0], cmp_d);
    return t[REPS / 2];
}

static double ms_of(uint64_t ns)
{
    return (double)ns / 1e6;
}

/* Where compile -> first result went. "lowering" is what building the partitions took
 * besides engine selection and constant uploads (chains, host-side folding, descriptors,
 * fingerprints, own-kernel steps); "other" is compile time outside the CUDA plan build
 * (graph copy, partitioning). JSON deserialization is inside engine selection, or is the
 * deferred phase when plans are deserialized on threads (load_threads > 1). */
static void breakdown(const nnop_plan *plan, const nnop_cache_stats *s, double compile_ms,
                      double exec_ms)
{
    const nnop__compile_prof *f = &plan->cuda->prof;
    uint64_t lower = f->parts_ns - f->select_ns - f->upload_ns;
    double known = ms_of(f->parts_ns + f->resolve_ns + f->buffers_ns + f->sync_ns);
    printf("  breakdown: compile %.1f ms = lowering %.1f + engine selection %.1f (taking "
           "prefetched plans %.1f of it) + constants %.1f + deferred JSON %.1f + buffers %.1f + "
           "final sync %.1f + other %.1f | plans prefetched and taken %d | JSON deserialization "
           "%.1f ms (prefetch threads' wall time included once they are done; compile threads "
           "%d, their handles %.1f ms%s) | constants: %d copies, %.1f MB, %d device allocations "
           "| first execute %.1f ms\n",
           compile_ms, ms_of(lower), ms_of(f->select_ns), ms_of(f->prefetch_wait_ns),
           ms_of(f->upload_ns), ms_of(f->resolve_ns), ms_of(f->buffers_ns), ms_of(f->sync_ns),
           compile_ms - known, (int)f->prefetched, ms_of(s->deserialize_ns), (int)f->deser_threads,
           ms_of(f->handles_ns),
           f->restarted ? ", a plan failed on a thread: compiled again serially" : "",
           (int)f->n_uploads, (double)f->upload_bytes / 1e6, (int)plan->cuda->n_owned, exec_ms);
}

static void describe(const nnop_plan *plan)
{
    size_t len = nnop_plan_describe(plan, NULL, 0) + 1;
    char *text = (char *)malloc(len);
    if (text) {
        nnop_plan_describe(plan, text, len);
        fputs(text, stdout);
        free(text);
    }
}

/* The first result checked before any time is reported: n fp16 logits, all finite (the
 * weights are random, so there is no reference to equal; a network of garbage gives NaN). */
static int logits_finite(nnop_context *ctx, const void *y, int64_t n)
{
    uint16_t *h = (uint16_t *)malloc((size_t)n * sizeof *h);
    float *f = (float *)malloc((size_t)n * sizeof *f);
    int64_t i, bad = 0;
    if (!h || !f || nnop_copy_out(ctx, h, y, (size_t)n * sizeof *h) != NNOP_OK ||
        nnop_convert(NNOP_F16, h, NNOP_F32, f, n) != NNOP_OK) {
        fprintf(stderr, "check: could not read the logits: %s\n", nnop_context_last_error(ctx));
        free(h);
        free(f);
        return 0;
    }
    for (i = 0; i < n; i++)
        bad += !isfinite(f[i]);
    if (bad)
        fprintf(stderr,
                "check: %lld of %lld logits are not finite: the network is broken, "
                "nothing timed\n",
                (long long)bad, (long long)n);
    free(h);
    free(f);
    return bad == 0;
}

static int run(const args *a, nnop_context *ctx, double start, double create_ms)
{
    double graph_t0 = now_ms();
    nnop_graph *g = bench_resnet50_graph(ctx, a->batch);
    double graph_ms = now_ms() - graph_t0;
    nnop_plan *plan = NULL;
    nnop_cache_stats s;
    void *x = NULL, *y = NULL;
    const void *in[1];
    void *out[1];
    double t0, compile_ms = 0.0, first_ms = 0.0, per_batch = 0.0, total_ms;
    size_t xb = (size_t)a->batch * 3 * 224 * 224 * 2;
    if (nnop_malloc(ctx, xb, &x) != NNOP_OK || nnop_malloc(ctx, (size_t)a->batch * 2000, &y))
        return fprintf(stderr, "alloc: %s\n", nnop_context_last_error(ctx)), 1;
    cudaMemset(x, 0x30, xb);
    in[0] = x, out[0] = y;
    sampler_enable(1);
    t0 = now_ms();
    if (a->warmup_only) {
        if (nnop_graph_warmup(g, NULL) != NNOP_OK)
            return fprintf(stderr, "warmup: %s\n", nnop_context_last_error(ctx)), 1;
    } else if (nnop_graph_compile(g, NULL, &plan) != NNOP_OK) {
        return fprintf(stderr, "compile: %s\n", nnop_context_last_error(ctx)), 1;
    }
    if (!a->warmup_only) {
        compile_ms = now_ms() - t0;
        if (nnop_plan_execute(plan, in, out) != NNOP_OK || nnop_context_synchronize(ctx))
            return fprintf(stderr, "execute: %s\n", nnop_context_last_error(ctx)), 1;
        first_ms = now_ms() - t0;
        total_ms = now_ms() - start;
        sampler_enable(0);
        if (!logits_finite(ctx, y, a->batch * 1000)) /* no time counts for a broken network */
            return 1;
        per_batch = steady_ms(ctx, plan, in, out);
    } else {
        first_ms = now_ms() - t0;
        total_ms = now_ms() - start;
    }
    nnop_context_cache_stats(ctx, &s);
    printf("COLDSTART policy %s | batch %lld | context %.1f ms | graph %.1f ms | compile->first "
           "result %.1f ms | start->first result %.1f ms | %.3f ms/batch | hits %llu misses %llu "
           "built %llu from_blob %llu loaded %llu ignored %llu | heur %.0f ms finalize %.0f ms "
           "autotune %.0f ms\n",
           a->policy, (long long)a->batch, create_ms, graph_ms, first_ms, total_ms, per_batch,
           (unsigned long long)s.hits, (unsigned long long)s.misses,
           (unsigned long long)s.plans_built, (unsigned long long)s.plans_from_blob,
           (unsigned long long)s.entries_loaded,
           (unsigned long long)(s.ignored_corrupt + s.ignored_other_device + s.ignored_other_cudnn),
           (double)s.heuristics_ns / 1e6, (double)s.finalize_ns / 1e6, (double)s.autotune_ns / 1e6);
    if (plan)
        breakdown(plan, &s, compile_ms, first_ms - compile_ms);
    if (plan && a->describe)
        describe(plan);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
    nnop_free(ctx, x);
    nnop_free(ctx, y);
    return 0;
}

/* Build the graph once on a CPU context, keeping its weights for the timed build to copy. */
static void generate_weights_first(int64_t batch)
{
    nnop_context_options o;
    nnop_context *cpu = NULL;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    bench_resnet50_keep_weights();
    if (nnop_context_create(&o, &cpu) == NNOP_OK)
        nnop_graph_destroy(bench_resnet50_graph(cpu, batch));
    nnop_context_destroy(cpu);
}

int main(int argc, char **argv)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    args a;
    double t0;
    int rc;
    nnop_context_options_init(&o);
    if (!parse(argc, argv, &a) || !set_policy(&o, a.policy)) {
        fprintf(stderr, "usage: bench_coldstart --cache FILE [--policy prefer|precompiled|"
                        "fastest] [--batch N] [--load-threads N] [--warmup-only] "
                        "[--describe] [--no-prefetch] [--weights-first]\n");
        return 2;
    }
    o.backend = NNOP_BACKEND_CUDA;
    o.cache_path = a.cache;
    o.load_threads = a.load_threads;
    o.prefetch = a.no_prefetch ? -1 : 0;
    if (a.weights_first)
        generate_weights_first(a.batch);
    t0 = now_ms();
    if (nnop_context_create(&o, &ctx) != NNOP_OK) {
        fprintf(stderr, "no CUDA context: %s\n", nnop_context_create_error());
        return 1;
    }
    rc = run(&a, ctx, t0, now_ms() - t0);
    nnop_context_destroy(ctx); /* saves the cache file */
    return rc;
}
