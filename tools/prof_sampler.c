/* prof_sampler.c: a wall-clock stack sampler to LD_PRELOAD into a program on the GPU machine,
 * which has no perf, gdb or nsys. It samples the thread that loaded it (the main thread)
 * every NNOP_SAMPLER_US microseconds (default 250) and at exit prints where the samples fell:
 * by library (self and anywhere on the stack) and by the nearest exported symbol. Symbols
 * inside stripped libraries (libcuda, the bulk of cuDNN) are the nearest dynamic symbol
 * below the address, so read them as "somewhere after". With NNOP_SAMPLER_GATED=1 it samples
 * only between the program's calls nnop_sampler_enable(1) and (0), found with dlsym (as
 * bench_coldstart does around its compile). Linux/glibc only; a diagnostic tool, not part of
 * the library.
 *   build: cc -O1 -shared -fPIC tools/prof_sampler.c -o /tmp/prof_sampler.so -ldl
 *   use:   LD_PRELOAD=/tmp/prof_sampler.so NNOP_SAMPLER_OUT=prof.txt ./program ... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

enum { MAX_SAMPLES = 200000, DEPTH = 40, MAX_KEYS = 4096 };

typedef struct sample {
    int n;
    void *pc[DEPTH];
} sample;

static sample *samples_;
static volatile int n_samples_;
static timer_t timer_;
static int armed_;
static volatile int enabled_ = 1;

/* For a program to limit sampling to a phase (NNOP_SAMPLER_GATED=1 starts it off). */
void nnop_sampler_enable(int on)
{
    enabled_ = on;
}

/* ---- calls timed by interposition (libraries that link cuBLASLt dynamically, as cuDNN's
 * engines do, reach these first): count, total and largest wall time per function. */
typedef struct call_stat {
    const char *name;
    int calls;
    double total_ms, max_ms, first_ms;
} call_stat;

static call_stat heur_ = {"cublasLtMatmulAlgoGetHeuristic", 0, 0, 0, 0};
static call_stat matmul_ = {"cublasLtMatmul", 0, 0, 0, 0};

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void record(call_stat *c, double ms)
{
    if (!enabled_)
        return;
    if (c->calls == 0)
        c->first_ms = ms;
    c->calls++;
    c->total_ms += ms;
    c->max_ms = ms > c->max_ms ? ms : c->max_ms;
}

typedef int (*heur_fn)(void *, void *, void *, void *, void *, void *, void *, int, void *, int *);
int cublasLtMatmulAlgoGetHeuristic(void *h, void *op, void *a, void *b, void *c, void *d,
                                   void *pref, int n, void *res, int *found)
{
    static heur_fn real;
    double t0 = mono_ms();
    int r;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "cublasLtMatmulAlgoGetHeuristic");
    r = real(h, op, a, b, c, d, pref, n, res, found);
    record(&heur_, mono_ms() - t0);
    return r;
}

typedef int (*matmul_fn)(void *, void *, const void *, const void *, void *, const void *, void *,
                         const void *, const void *, void *, void *, void *, const void *, void *,
                         size_t, void *);
int cublasLtMatmul(void *h, void *op, const void *alpha, const void *a, void *ad, const void *b,
                   void *bd, const void *beta, const void *c, void *cd, void *d, void *dd,
                   const void *algo, void *ws, size_t ws_size, void *stream)
{
    static matmul_fn real;
    double t0 = mono_ms();
    int r;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "cublasLtMatmul");
    r = real(h, op, alpha, a, ad, b, bd, beta, c, cd, d, dd, algo, ws, ws_size, stream);
    record(&matmul_, mono_ms() - t0);
    return r;
}

static void on_tick(int sig)
{
    (void)sig;
    if (enabled_ && n_samples_ < MAX_SAMPLES) {
        sample *s = &samples_[n_samples_];
        s->n = backtrace(s->pc, DEPTH);
        n_samples_++;
    }
}

__attribute__((constructor)) static void sampler_start(void)
{
    struct sigaction sa;
    struct sigevent ev;
    struct itimerspec its;
    const char *us = getenv("NNOP_SAMPLER_US");
    long period = us ? atol(us) : 250;
    void *warm[4];
    const char *gated = getenv("NNOP_SAMPLER_GATED");
    enabled_ = !(gated && atoi(gated));
    samples_ = (sample *)calloc(MAX_SAMPLES, sizeof *samples_);
    if (!samples_)
        return;
    (void)backtrace(warm, 4); /* loads libgcc's unwinder now, not inside the handler */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer_) != 0)
        return;
    its.it_interval.tv_sec = 0;
    its.it_interval.tv_nsec = (period > 0 ? period : 250) * 1000;
    its.it_value = its.it_interval;
    armed_ = timer_settime(timer_, 0, &its, NULL) == 0;
}

typedef struct key_count {
    char key[160];
    int self, incl, last; /* last: the sample that last counted it inclusively */
} key_count;

static key_count keys_[3][MAX_KEYS]; /* 0: libraries, 1: symbols, 2: self by named caller */
static int n_keys_[3];

static key_count *lookup(int table, const char *key)
{
    int i;
    for (i = 0; i < n_keys_[table]; i++)
        if (strcmp(keys_[table][i].key, key) == 0)
            return &keys_[table][i];
    if (n_keys_[table] == MAX_KEYS)
        return NULL;
    snprintf(keys_[table][i].key, sizeof keys_[table][i].key, "%s", key);
    keys_[table][i].last = -1;
    return &keys_[table][n_keys_[table]++];
}

static void describe(void *pc, char *lib, size_t lib_len, char *sym, size_t sym_len)
{
    Dl_info info;
    const char *base;
    if (!dladdr(pc, &info) || !info.dli_fname) {
        snprintf(lib, lib_len, "?");
        snprintf(sym, sym_len, "?");
        return;
    }
    base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    snprintf(lib, lib_len, "%s", *base ? base : "(main)");
    snprintf(sym, sym_len, "%s:%s", lib, info.dli_sname ? info.dli_sname : "?");
}

static void count(int table, const char *key, int sample_index, int self)
{
    key_count *k = lookup(table, key);
    if (!k)
        return;
    if (self)
        k->self++;
    if (k->last != sample_index) {
        k->incl++;
        k->last = sample_index;
    }
}

static int by_incl(const void *a, const void *b)
{
    return ((const key_count *)b)->incl - ((const key_count *)a)->incl;
}

static int by_self(const void *a, const void *b)
{
    return ((const key_count *)b)->self - ((const key_count *)a)->self;
}

static void print_table(FILE *f, int table, int (*order)(const void *, const void *), int rows,
                        double ms_per)
{
    int i;
    qsort(keys_[table], (size_t)n_keys_[table], sizeof(key_count), order);
    static const char *const what[] = {"library", "symbol", "top frame <- nearest named frame"};
    fprintf(f, "%9s %9s  %s\n", "self ms", "incl ms", what[table]);
    for (i = 0; i < n_keys_[table] && i < rows; i++)
        fprintf(f, "%9.1f %9.1f  %s\n", keys_[table][i].self * ms_per,
                keys_[table][i].incl * ms_per, keys_[table][i].key);
}

__attribute__((destructor)) static void sampler_report(void)
{
    const char *out = getenv("NNOP_SAMPLER_OUT");
    const char *us = getenv("NNOP_SAMPLER_US");
    double ms_per = (us ? atof(us) : 250.0) / 1000.0;
    FILE *f = out ? fopen(out, "w") : stderr;
    int i, j, n;
    if (!armed_ || !f)
        return;
    timer_delete(timer_);
    n = n_samples_;
    for (i = 0; i < n; i++) {
        /* frames 0-1 are the handler and the signal trampoline */
        char top[160] = "", pair[160];
        int named = 0;
        for (j = 2; j < samples_[i].n; j++) {
            char lib[96], sym[160];
            describe(samples_[i].pc[j], lib, sizeof lib, sym, sizeof sym);
            count(0, lib, i, j == 2);
            count(1, sym, i, j == 2);
            if (j == 2)
                snprintf(top, sizeof top, "%s", sym);
            if (!named && !strstr(sym, ":?")) {
                snprintf(pair, sizeof pair, "%.70s <- %.80s", top, sym);
                count(2, pair, i, 1);
                named = 1;
            }
        }
    }
    fprintf(f, "== sampler: %d samples, %.3f ms each (main thread, wall clock)\n", n, ms_per);
    fprintf(f, "-- libraries by inclusive time\n");
    print_table(f, 0, by_incl, 20, ms_per);
    fprintf(f, "-- symbols by self time\n");
    print_table(f, 1, by_self, 30, ms_per);
    fprintf(f, "-- symbols by inclusive time\n");
    print_table(f, 1, by_incl, 60, ms_per);
    fprintf(f, "-- top frames by the nearest named frame above them\n");
    print_table(f, 2, by_self, 30, ms_per);
    fprintf(f, "-- timed calls (interposed)\n");
    fprintf(f, "%s: %d calls, %.1f ms total, first %.2f ms, largest %.2f ms\n", heur_.name,
            heur_.calls, heur_.total_ms, heur_.first_ms, heur_.max_ms);
    fprintf(f, "%s: %d calls, %.1f ms total, first %.2f ms, largest %.2f ms\n", matmul_.name,
            matmul_.calls, matmul_.total_ms, matmul_.first_ms, matmul_.max_ms);
    if (f != stderr)
        fclose(f);
}
