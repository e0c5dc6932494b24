/* engine.c: nnop inside an inference engine (issue 50). Two models (the bundled MNIST LeNet
 * and ResNet) are served at once, each on a thread with its own context; both draw their memory
 * (tensors too: nnop_malloc) from one budget the engine owns (an nnop_allocator over malloc and
 * cudaMalloc) and log through the engine's logger, each line tagged with its model. Node names
 * come from the builder; the partition table from the structured query (nnop_plan_partition).
 *   engine [--budget MiB] [--batch N]   (defaults: 64 MiB, 100)
 * Exit 0 when both models get 97% or more of the 2,000 test digits right within the budget. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnist.h"
#include "safetensors.h"

#ifndef _WIN32 /* POSIX threads: ThreadSanitizer crashed here on glibc's C11 thrd_create */
#include <pthread.h>
#define ENGINE_THREADS 1
#define LOCK(b)        pthread_mutex_lock(&(b)->mu)
#define UNLOCK(b)      pthread_mutex_unlock(&(b)->mu)
#else /* Windows: the models run one after the other */
#define LOCK(b)   (void)(b)
#define UNLOCK(b) (void)(b)
#endif
#ifdef ENGINE_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* ------------------------------------------------------------ the engine's memory budget */
typedef struct budget {
    size_t limit, in_use, peak;
    int refused;
#ifdef ENGINE_THREADS
    pthread_mutex_t mu; /* nnop calls these from each model's thread, and from its own threads */
#endif
    void *ptr[4096];
    size_t size[4096];
    int n;
} budget;

/* Reserve bytes of the budget: 0 when they do not fit (nnop then fails with the bytes named). */
static int reserve(budget *b, size_t bytes)
{
    int ok;
    LOCK(b);
    ok = b->n < 4096 && b->in_use + bytes <= b->limit;
    if (ok) {
        b->in_use += bytes;
        b->peak = b->in_use > b->peak ? b->in_use : b->peak;
    } else
        b->refused++;
    UNLOCK(b);
    return ok;
}

static void record(budget *b, void *p, size_t bytes)
{
    LOCK(b);
    if (p) {
        b->ptr[b->n] = p;
        b->size[b->n++] = bytes;
    } else
        b->in_use -= bytes; /* the underlying allocation failed: give the reservation back */
    UNLOCK(b);
}

static void release(budget *b, void *p)
{
    int i;
    LOCK(b);
    for (i = 0; i < b->n; i++)
        if (b->ptr[i] == p) {
            b->in_use -= b->size[i];
            b->ptr[i] = b->ptr[--b->n];
            b->size[i] = b->size[b->n];
            break;
        }
    UNLOCK(b);
}

static void *host_alloc(void *user, size_t bytes)
{
    void *p = NULL;
    if (reserve((budget *)user, bytes))
        record((budget *)user, p = malloc(bytes), bytes);
    return p;
}

static void host_free(void *user, void *p)
{
    release((budget *)user, p);
    free(p);
}

#ifdef ENGINE_HAVE_CUDA
static void *device_alloc(void *user, size_t bytes)
{
    void *p = NULL;
    if (reserve((budget *)user, bytes)) {
        if (cudaMalloc(&p, bytes) != cudaSuccess)
            p = NULL;
        record((budget *)user, p, bytes);
    }
    return p;
}

static void device_free(void *user, void *p)
{
    release((budget *)user, p);
    (void)cudaFree(p);
}
#endif

/* ------------------------------------------------------------ the engine's log */
static void log_line(void *user, int level, const char *tag, const char *line)
{
    budget *b = (budget *)user; /* its lock keeps the two models' lines whole */
    (void)level;
    LOCK(b);
    printf("  log [%s] %s\n", tag, line);
    UNLOCK(b);
}

/* ------------------------------------------------------------ one model */
typedef struct model {
    mnist_model_kind kind;
    budget *mem;
    const mnist_set *digits;
    int batch, correct;
    nnop_status st;
    char report[8192]; /* printed by the main thread once both are done */
} model;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
appendf(model *m, const char *fmt, ...)
{
    size_t len = strlen(m->report);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->report + len, sizeof m->report - len, fmt, ap);
    va_end(ap);
}

static void partition_table(model *m, const nnop_plan *p)
{
    int i, k;
    for (i = 0; i < nnop_plan_num_partitions(p); i++) {
        nnop_partition_info info;
        char nodes[512] = "";
        if (nnop_plan_partition(p, i, &info) != NNOP_OK)
            continue;
        for (k = info.first_node; k < info.first_node + info.num_nodes; k++) {
            const char *name = nnop_plan_node_name(p, k);
            size_t len = strlen(nodes);
            snprintf(nodes + len, sizeof nodes - len, "%s%s%s%s%s", k > info.first_node ? "+" : "",
                     nnop_plan_node_op(p, k), *name ? "[" : "", name, *name ? "]" : "");
        }
        appendf(m, "  %-48s", nodes);
        appendf(m, " %-22s engine %-5lld %lld bytes moved\n", info.impl, info.engine,
                info.bytes_moved);
    }
}

/* Build, compile and serve every digit in batches; the result in m. */
static nnop_status serve(model *m, nnop_context *ctx)
{
    char err[MNIST_ERROR_LEN], path[1024];
    safetensors_file *w = NULL;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_plan_memory_info mem;
    const size_t xbytes = (size_t)m->batch * MNIST_PIXELS * sizeof(float);
    const size_t ybytes = (size_t)m->batch * MNIST_CLASSES * sizeof(float);
    float *x = (float *)malloc(xbytes), logits[1000 * MNIST_CLASSES];
    void *dx = NULL, *dy = NULL; /* tensor memory: the device's on CUDA, from the budget */
    nnop_status st;
    int first, i;
    snprintf(path, sizeof path, "%s/mnist/%s.safetensors", NNOP_EXAMPLES_DIR,
             mnist_model_name(m->kind));
    st = x ? safetensors_open(path, &w, err, sizeof err) : NNOP_ERR_OUT_OF_MEMORY;
    if (st == NNOP_OK)
        st = nnop_graph_create(ctx, &g);
    if (st == NNOP_OK)
        st = mnist_build(g, ctx, m->kind, w, NNOP_F32, m->batch, err, sizeof err);
    if (st == NNOP_OK)
        st = nnop_graph_compile(g, NULL, &p);
    nnop_graph_destroy(g); /* the plan keeps what it needs */
    safetensors_close(w);
    if (st == NNOP_OK && nnop_plan_memory(p, &mem) == NNOP_OK) {
        appendf(m, "%s: %zu bytes of weights, %zu of intermediates, %zu of workspace, %zu other\n",
                mnist_model_name(m->kind), mem.weights, mem.intermediates, mem.workspace,
                mem.other);
        partition_table(m, p);
    }
    st = st == NNOP_OK ? nnop_malloc(ctx, xbytes, &dx) : st;
    st = st == NNOP_OK ? nnop_malloc(ctx, ybytes, &dy) : st;
    for (first = 0; st == NNOP_OK && first + m->batch <= m->digits->count; first += m->batch) {
        const void *in[1] = {dx};
        void *out[1] = {dy};
        mnist_to_input(m->digits->pixels + (size_t)first * MNIST_PIXELS, m->batch, x);
        st = nnop_copy_in(ctx, dx, x, xbytes);
        st = st == NNOP_OK ? nnop_plan_execute(p, in, out) : st;
        st = st == NNOP_OK ? nnop_copy_out(ctx, logits, dy, ybytes) : st;
        for (i = 0; st == NNOP_OK && i < m->batch; i++)
            m->correct += mnist_argmax(NNOP_F32, logits + i * MNIST_CLASSES) ==
                          m->digits->labels[first + i];
    }
    if (st != NNOP_OK) /* the message names what failed (with the bytes, for memory) */
        appendf(m, "  %s\n", nnop_context_last_error(ctx)[0] ? nnop_context_last_error(ctx) : err);
    nnop_free(ctx, dx);
    nnop_free(ctx, dy);
    nnop_plan_destroy(p);
    free(x);
    return st;
}

static void *model_main(void *arg)
{
    model *m = (model *)arg;
    nnop_allocator a;
    nnop_context_options o;
    nnop_context *ctx = NULL;
    memset(&a, 0, sizeof a);
    a.host_alloc = host_alloc, a.host_free = host_free, a.user = m->mem;
#ifdef ENGINE_HAVE_CUDA
    a.device_alloc = device_alloc, a.device_free = device_free;
#endif
    nnop_context_options_init(&o);
    o.allocator = &a;
    o.workspace_limit = 8u << 20; /* engines choose within the budget, not beside it */
    o.log_level = NNOP_LOG_COMPILE;
    o.log_fn = log_line, o.log_user = m->mem, o.log_tag = mnist_model_name(m->kind);
    m->st = nnop_context_create(&o, &ctx);
    if (m->st != NNOP_OK)
        snprintf(m->report, sizeof m->report, "%s\n", nnop_context_create_error());
    else
        m->st = serve(m, ctx);
    nnop_context_destroy(ctx);
    return NULL;
}

int main(int argc, char **argv)
{
    static budget mem;
    model models[2];
    mnist_set digits;
    char err[MNIST_ERROR_LEN];
    double mib = 64.0;
    int batch = 100, i, ok = 1, threaded = 0;
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--budget") == 0)
            mib = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--batch") == 0)
            batch = atoi(argv[i + 1]);
    }
    if (mib <= 0 || batch < 1 || batch > 1000 || (argc % 2) == 0) {
        fprintf(stderr, "usage: engine [--budget MiB] [--batch 1..1000]\n");
        return 2;
    }
    if (mnist_load(NNOP_EXAMPLES_DIR "/mnist", "test", &digits, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "engine: %s\n", err);
        return 1;
    }
    mem.limit = (size_t)(mib * 1024 * 1024);
    for (i = 0; i < 2; i++) {
        memset(&models[i], 0, sizeof models[i]);
        models[i].kind = i ? MNIST_RESNET : MNIST_LENET;
        models[i].mem = &mem, models[i].digits = &digits, models[i].batch = batch;
    }
#ifdef ENGINE_THREADS /* both models compile and run at once, the second on a thread */
    pthread_t t;
    pthread_mutex_init(&mem.mu, NULL);
    threaded = pthread_create(&t, NULL, model_main, &models[1]) == 0;
#endif
    model_main(&models[0]);
    if (!threaded)
        model_main(&models[1]);
#ifdef ENGINE_THREADS
    if (threaded)
        pthread_join(t, NULL);
#endif
    for (i = 0; i < 2; i++) {
        int served = digits.count / batch * batch;
        fputs(models[i].report, stdout);
        printf("%s: %s, %d of %d digits right (%.2f%%)\n", mnist_model_name(models[i].kind),
               nnop_status_string(models[i].st), models[i].correct, served,
               served ? 100.0 * models[i].correct / served : 0.0);
        ok &= models[i].st == NNOP_OK && models[i].correct >= 0.97 * served;
    }
    printf("budget: %.2f MiB, peak %.2f MiB, %d allocations refused, %zu bytes still out\n", mib,
           mem.peak / (1024.0 * 1024.0), mem.refused, mem.in_use);
    ok &= mem.in_use == 0;
    mnist_free(&digits);
    return ok ? 0 : 1;
}
