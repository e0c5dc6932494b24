/* nb_serve.c: the serving benchmark (--serve T, issue 49): T threads send requests of random
 * batch sizes to one network, two ways side by side in one run:
 *   contexts: one plan compiled with batch_range for the largest batch asked (without it
 *             when one size is asked: nothing to range over), T execution
 *             contexts of it (nnop_exec), one a thread: the weights held once;
 *   plans:    today's way, each thread a context of its own holding a plan per batch size.
 * Both ways draw the same request sizes (a seeded sequence per thread). Before its time
 * counts, each way's output of every batch size is checked: finite, and the two ways equal
 * within the dtype's tolerance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb_run.h"
#include "nb_serve.h"

/* xorshift64* */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ull;
}

/* One thread's side of a way: its buffers at the largest batch, its request sizes. */
typedef struct serve_thread {
    const nb_serve_opts *so;
    nnop_context *ctx;                      /* where its buffers live */
    nnop_exec *exec;                        /* contexts way */
    nnop_plan *plans[NB_SERVE_MAX_BATCHES]; /* plans way: one per batch size */
    nb_env env;                             /* plans way: the thread's own context */
    void *in[4], *out[4];                   /* device (or host) buffers at the largest batch */
    int nin, nout;
    int *sizes;     /* requests: index into so->batches */
    double *lat_us; /* per request */
    int64_t images;
    int failed;
    char err[256];
} serve_thread;

static int64_t largest(const nb_serve_opts *so)
{
    int64_t m = 1;
    int k;
    for (k = 0; k < so->nbatches; k++)
        m = so->batches[k] > m ? so->batches[k] : m;
    return m;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Buffers for plan p's inputs and outputs at its (largest) batch on ctx, inputs seeded. */
static int alloc_io(serve_thread *t, nnop_plan *p, uint64_t seed)
{
    nnop_tensor_desc d;
    int i;
    t->nin = nnop_plan_num_inputs(p);
    t->nout = nnop_plan_num_outputs(p);
    if (t->nin > 4 || t->nout > 4) {
        snprintf(t->err, sizeof t->err, "more than 4 inputs or outputs");
        return -1;
    }
    for (i = 0; i < t->nin; i++) {
        int64_t n, j;
        float *f;
        void *h;
        nnop_plan_input_desc(p, i, &d);
        n = nnop_tensor_elements(&d);
        f = (float *)malloc((size_t)n * sizeof *f);
        h = malloc(nnop_tensor_bytes(&d));
        if (!f || !h || nnop_malloc(t->ctx, nnop_tensor_bytes(&d), &t->in[i]) != NNOP_OK) {
            free(f), free(h);
            snprintf(t->err, sizeof t->err, "input %d: out of memory", i);
            return -1;
        }
        for (j = 0; j < n; j++)
            f[j] = (float)((next_u64(&seed) >> 40) / (double)(1 << 24)) * 2.0f - 1.0f;
        nnop_convert(NNOP_F32, f, d.dtype, h, n);
        i = nnop_copy_in(t->ctx, t->in[i], h, nnop_tensor_bytes(&d)) == NNOP_OK ? i : -1;
        free(f), free(h);
        if (i < 0) {
            snprintf(t->err, sizeof t->err, "copy in: %s", nnop_context_last_error(t->ctx));
            return -1;
        }
    }
    for (i = 0; i < t->nout; i++) {
        nnop_plan_output_desc(p, i, &d);
        if (nnop_malloc(t->ctx, nnop_tensor_bytes(&d), &t->out[i]) != NNOP_OK) {
            snprintf(t->err, sizeof t->err, "output %d: out of memory", i);
            return -1;
        }
    }
    return 0;
}

static void free_io(serve_thread *t)
{
    int i;
    if (!t->ctx)
        return;
    nnop_context_synchronize(t->ctx);
    for (i = 0; i < 4; i++) {
        nnop_free(t->ctx, t->in[i]);
        nnop_free(t->ctx, t->out[i]);
        t->in[i] = t->out[i] = NULL;
    }
}

static nnop_status run_one(serve_thread *t, int k)
{
    nnop_status s;
    if (t->exec) { /* batch 0: the one size, built without a range */
        s = nnop_exec_run(t->exec, t->so->nbatches == 1 ? 0 : t->so->batches[k],
                          (const void *const *)t->in, t->out);
        return s ? s : nnop_exec_synchronize(t->exec);
    }
    s = nnop_plan_execute(t->plans[k], (const void *const *)t->in, t->out);
    return s ? s : nnop_context_synchronize(t->ctx);
}

static void serve_loop(void *arg)
{
    serve_thread *t = (serve_thread *)arg;
    int i;
    for (i = 0; i < t->so->requests; i++) {
        double t0 = nb_now();
        if (run_one(t, t->sizes[i]) != NNOP_OK) {
            snprintf(t->err, sizeof t->err, "run: %s",
                     t->exec ? nnop_exec_last_error(t->exec) : nnop_context_last_error(t->ctx));
            t->failed = 1;
            return;
        }
        t->lat_us[i] = (nb_now() - t0) * 1e6;
        t->images += t->so->batches[t->sizes[i]];
    }
}

/* Output 0 of thread 0 at batch size k into logical float64 (malloc'ed, *n elements). */
static double *read_out(serve_thread *t, nnop_plan *p, int k, int64_t *n)
{
    nnop_tensor_desc d;
    void *h;
    double *v;
    if (run_one(t, k) != NNOP_OK)
        return NULL;
    nnop_plan_output_desc(p, 0, &d);
    d.dims[0] = t->so->batches[k]; /* the run's batch (packed: dim 0 is outermost) */
    h = malloc(nnop_tensor_bytes(&d));
    if (!h || nnop_copy_out(t->ctx, h, t->out[0], nnop_tensor_bytes(&d)) != NNOP_OK) {
        free(h);
        return NULL;
    }
    v = nb_to_logical(&d, h);
    free(h);
    *n = nnop_tensor_elements(&d);
    return v;
}

/* Run all threads of one way, then fill r: images/s, latency percentiles. */
static int time_way(serve_thread *th, int T, nb_result *r)
{
    nb_thread *h[NB_SERVE_MAX_THREADS];
    double wall, *all;
    int64_t images = 0;
    int k, i, n = 0;
    double t0 = nb_now();
    for (k = 0; k < T; k++)
        if (nb_thread_start(&h[k], serve_loop, &th[k]) != 0)
            serve_loop(&th[k]), h[k] = NULL;
    for (k = 0; k < T; k++)
        if (h[k])
            nb_thread_join(h[k]);
    wall = nb_now() - t0;
    for (k = 0; k < T; k++)
        if (th[k].failed) {
            snprintf(r->status, sizeof r->status, "error");
            snprintf(r->note, sizeof r->note, "thread %d: %s", k, th[k].err);
            return -1;
        }
    all = (double *)malloc((size_t)T * (size_t)th[0].so->requests * sizeof *all);
    if (!all)
        return -1;
    for (k = 0; k < T; k++) {
        images += th[k].images;
        for (i = 0; i < th[k].so->requests; i++)
            all[n++] = th[k].lat_us[i];
    }
    qsort(all, (size_t)n, sizeof *all, cmp_d);
    r->images_s = (double)images / wall;
    r->host_us = all[n / 2];
    r->lat_p99_us = all[(size_t)((double)(n - 1) * 0.99)];
    free(all);
    return 0;
}

static double plan_bytes(const nnop_plan *p)
{
    nnop_plan_memory_info m;
    if (nnop_plan_memory(p, &m) != NNOP_OK)
        return 0;
    return (double)(m.device_total + m.host_total);
}

/* Make thread k's side of the contexts way: an execution context of range, buffers on env. */
static int setup_contexts(serve_thread *t, nnop_plan *range, nb_env *env, uint64_t seed)
{
    t->ctx = env->ctx;
    if (nnop_exec_create(range, &t->exec) != NNOP_OK) {
        snprintf(t->err, sizeof t->err, "%s", nnop_context_last_error(env->ctx));
        return -1;
    }
    return alloc_io(t, range, seed);
}

/* Thread k's side of the plans way: its own context, a plan per batch size. */
static int setup_plans(serve_thread *t, const nb_serve_opts *so, const nb_net *net,
                       nnop_backend backend, int device, const nnop_context_options *co,
                       uint64_t seed)
{
    int k, at_max = 0;
    if (nb_env_open(&t->env, backend, device, co, t->err, sizeof t->err) != 0)
        return -1;
    t->ctx = t->env.ctx;
    for (k = 0; k < so->nbatches; k++) {
        nb_net nk = *net;
        nnop_graph *g = NULL;
        nnop_compile_options c;
        nnop_compile_options_init(&c);
        c.cuda_graph = so->cuda_graph;
        nk.batch = so->batches[k];
        if (nb_net_graph(&nk, t->ctx, &g, t->err, sizeof t->err) != NNOP_OK)
            return -1;
        if (nnop_graph_compile(g, &c, &t->plans[k]) != NNOP_OK) {
            snprintf(t->err, sizeof t->err, "compile at batch %lld: %s", (long long)nk.batch,
                     nnop_context_last_error(t->ctx));
            nnop_graph_destroy(g);
            return -1;
        }
        nnop_graph_destroy(g);
        if (so->batches[k] == largest(so))
            at_max = k;
    }
    /* one set of buffers at the largest batch serves every plan: each reads its prefix */
    return alloc_io(t, t->plans[at_max], seed);
}

static void teardown(serve_thread *t)
{
    int k;
    free_io(t);
    nnop_exec_destroy(t->exec);
    for (k = 0; k < NB_SERVE_MAX_BATCHES; k++)
        nnop_plan_destroy(t->plans[k]);
    if (t->env.ctx)
        nb_env_close(&t->env);
    free(t->sizes);
    free(t->lat_us);
    memset(t, 0, sizeof *t);
}

/* Every batch size once on thread 0 of both ways: finite, and equal within tol. */
static int check_ways(serve_thread *a, nnop_plan *range, serve_thread *b, double tol, nb_result *ra,
                      nb_result *rb)
{
    int k, ok = 1;
    double worst = 0;
    for (k = 0; k < a->so->nbatches; k++) {
        int64_t na = 0, nb = 0, j;
        double *ya = a->exec ? read_out(a, range, k, &na) : NULL;
        double *yb = read_out(b, b->plans[k], k, &nb);
        double e = 0;
        if (!yb || (a->exec && (!ya || na != nb))) {
            ok = -1;
        } else {
            for (j = 0; j < nb; j++)
                if (!isfinite(yb[j]) || (ya && !isfinite(ya[j])))
                    ok = ok > 0 ? 0 : ok; /* a failed run (-1) stays the worse */
            if (ya && !nb_compare(ya, yb, nb, tol, &e))
                ok = ok > 0 ? 0 : ok;
            worst = e > worst ? e : worst;
        }
        free(ya);
        free(yb);
    }
    ra->check = rb->check = ok < 0 ? 2 : ok;
    ra->check_err = rb->check_err = worst;
    ra->check_tol = rb->check_tol = tol;
    snprintf(ra->check_ref, sizeof ra->check_ref, "plans");
    snprintf(rb->check_ref, sizeof rb->check_ref, a->exec ? "contexts" : "finite");
    return ok;
}

/* The rows' names and kind before the run; their notes and the log after it. */
static void label(const nb_serve_opts *so, const nb_net *net, nb_result *r, int plans)
{
    snprintf(r->kind, sizeof r->kind, "serve");
    snprintf(r->name, sizeof r->name, "%.40s x%d %s", nb_net_label(net), so->threads,
             plans ? "plans" : "contexts");
    r->cuda_graph = so->cuda_graph;
}

static void report(const nb_serve_opts *so, const char *sizes, nb_result *r, int plans)
{
    size_t n = strlen(r->note);
    if (r->images_s > 0)
        snprintf(r->note + n, sizeof r->note - n,
                 "%srequests p50 %.1f us, p99 %.1f us; %.1f MiB held; batches %s, %d x %d",
                 n ? "; " : "", r->host_us, r->lat_p99_us, r->mem_mib, sizes, so->threads,
                 so->requests);
    fprintf(stderr, "  serve %s: %s%s%s\n", plans ? "plans" : "contexts", r->status,
            r->note[0] ? ": " : "", r->note);
}

static int serve(const nb_serve_opts *so, nb_env *env, nnop_backend backend, int device,
                 const nnop_context_options *co, const nb_net *net, nb_result *rc, nb_result *rp);

int nb_serve(const nb_serve_opts *so, nb_env *env, nnop_backend backend, int device,
             const nnop_context_options *co, const nb_net *net, nb_result *rc, nb_result *rp)
{
    char sizes[160] = "";
    int k, rv;
    for (k = 0; k < so->nbatches; k++)
        snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%lld", k ? "," : "",
                 (long long)so->batches[k]);
    label(so, net, rc, 0);
    label(so, net, rp, 1);
    fprintf(stderr, "  serve: %d threads x %d requests of batch %s, two ways ...\n", so->threads,
            so->requests, sizes);
    rv = serve(so, env, backend, device, co, net, rc, rp);
    report(so, sizes, rc, 0);
    report(so, sizes, rp, 1);
    return rv;
}

/* Each request size alone on thread 0 of both ways, interleaved, after a warm-up: the median
 * latency of the shared (batch-range) plan's context against the plan built for that size
 * (issue 49's goal: within 5% at the buckets, 15% between them), on stderr. */
static void per_size(serve_thread *a, serve_thread *b)
{
    enum { WARM = 3, REPS = 21 };
    double ta[REPS], tb[REPS];
    int k, r;
    for (k = 0; k < a->so->nbatches; k++) {
        for (r = 0; r < WARM; r++)
            (void)run_one(a, k), (void)run_one(b, k);
        for (r = 0; r < REPS; r++) {
            double t0 = nb_now();
            nnop_status sa = run_one(a, k);
            double t1 = nb_now();
            nnop_status sb = run_one(b, k);
            ta[r] = sa == NNOP_OK ? (t1 - t0) * 1e6 : 1e30;
            tb[r] = sb == NNOP_OK ? (nb_now() - t1) * 1e6 : 1e30;
        }
        qsort(ta, REPS, sizeof *ta, cmp_d);
        qsort(tb, REPS, sizeof *tb, cmp_d);
        fprintf(stderr, "  serve batch %lld alone: contexts %.1f us, plans %.1f us (%.3fx)\n",
                (long long)a->so->batches[k], ta[REPS / 2], tb[REPS / 2],
                ta[REPS / 2] / tb[REPS / 2]);
    }
}

static int serve(const nb_serve_opts *so, nb_env *env, nnop_backend backend, int device,
                 const nnop_context_options *co, const nb_net *net, nb_result *rc, nb_result *rp)
{
    serve_thread a[NB_SERVE_MAX_THREADS], b[NB_SERVE_MAX_THREADS];
    int T = so->threads, k, i, rv = 0, have_contexts = 1;
    nnop_plan *range = NULL;
    nnop_graph *g = NULL;
    nnop_compile_options c;
    nb_net nmax = *net;
    double mem_a = 0, mem_b = 0;
    char err[256];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    for (k = 0; k < T; k++) {
        uint64_t s = so->seed * 1000003u + (uint64_t)k + 1;
        a[k].so = b[k].so = so;
        a[k].sizes = (int *)malloc((size_t)so->requests * sizeof(int));
        b[k].sizes = (int *)malloc((size_t)so->requests * sizeof(int));
        a[k].lat_us = (double *)calloc((size_t)so->requests, sizeof(double));
        b[k].lat_us = (double *)calloc((size_t)so->requests, sizeof(double));
        if (!a[k].sizes || !b[k].sizes || !a[k].lat_us || !b[k].lat_us) {
            rv = 3;
            goto done;
        }
        for (i = 0; i < so->requests; i++)
            a[k].sizes[i] = b[k].sizes[i] = (int)(next_u64(&s) >> 33) % so->nbatches;
    }
    /* contexts: one batch-range plan at the largest batch */
    nmax.batch = largest(so);
    nnop_compile_options_init(&c);
    c.cuda_graph = so->cuda_graph;
    c.batch_range = so->nbatches > 1;
    if (nb_net_graph(&nmax, env->ctx, &g, err, sizeof err) != NNOP_OK ||
        nnop_graph_compile(g, &c, &range) != NNOP_OK) {
        snprintf(rc->status, sizeof rc->status, "unsupported");
        snprintf(rc->note, sizeof rc->note, "%s", g ? nnop_context_last_error(env->ctx) : err);
        have_contexts = 0;
    }
    nnop_graph_destroy(g);
    if (have_contexts) {
        mem_a = plan_bytes(range);
        for (k = 0; k < T; k++) {
            nnop_plan_memory_info m;
            if (setup_contexts(&a[k], range, env, so->seed + (uint64_t)k) != 0) {
                snprintf(rc->status, sizeof rc->status, "error");
                snprintf(rc->note, sizeof rc->note, "thread %d: %s", k, a[k].err);
                rv = 3;
                goto done;
            }
            if (nnop_exec_memory(a[k].exec, &m) == NNOP_OK)
                mem_a += (double)(m.device_total + m.host_total);
        }
    }
    for (k = 0; k < T; k++) {
        if (setup_plans(&b[k], so, net, backend, device, co, so->seed + (uint64_t)k) != 0) {
            snprintf(rp->status, sizeof rp->status, "error");
            snprintf(rp->note, sizeof rp->note, "thread %d: %s", k, b[k].err);
            rv = 3;
            goto done;
        }
        for (i = 0; i < so->nbatches; i++)
            mem_b += plan_bytes(b[k].plans[i]);
    }
    /* the same inputs both ways: thread 0's contexts buffers take the plans way's data */
    if (have_contexts) {
        for (i = 0; i < a[0].nin; i++) {
            nnop_tensor_desc d;
            void *h;
            nnop_plan_input_desc(range, i, &d);
            h = malloc(nnop_tensor_bytes(&d));
            if (!h || nnop_copy_out(b[0].ctx, h, b[0].in[i], nnop_tensor_bytes(&d)) != NNOP_OK ||
                nnop_copy_in(a[0].ctx, a[0].in[i], h, nnop_tensor_bytes(&d)) != NNOP_OK)
                rv = 3;
            free(h);
        }
    }
    if (rv || check_ways(&a[0], range, &b[0], so->tol, rc, rp) <= 0) {
        /* a wrong or failed way is not timed */
        snprintf(rp->status, sizeof rp->status, "error");
        snprintf(rp->note, sizeof rp->note, "the check failed: not timed");
        if (have_contexts)
            snprintf(rc->status, sizeof rc->status, "error");
        rv = rv ? rv : 1;
        goto done;
    }
    if (have_contexts && time_way(a, T, rc) != 0)
        rv = 3;
    if (time_way(b, T, rp) != 0)
        rv = 3;
    if (have_contexts && rv == 0)
        per_size(&a[0], &b[0]);
    rc->mem_mib = mem_a / 1048576.0;
    rp->mem_mib = mem_b / 1048576.0;
done:
    for (k = 0; k < T; k++) {
        teardown(&a[k]);
        teardown(&b[k]);
    }
    nnop_plan_destroy(range);
    return rv;
}
