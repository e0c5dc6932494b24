/* nb_serve.h: the serving benchmark of nnop-bench (--serve, nb_serve.c). */
#ifndef NNOP_BENCH_NB_SERVE_H
#define NNOP_BENCH_NB_SERVE_H

#include "nb_run.h"

#define NB_SERVE_MAX_THREADS 64
#define NB_SERVE_MAX_BATCHES 16

typedef struct nb_serve_opts {
    int threads;  /* T: execution contexts (contexts way), nnop contexts (plans way) */
    int requests; /* per thread */
    int64_t batches[NB_SERVE_MAX_BATCHES]; /* request sizes, drawn uniformly */
    int nbatches;
    int cuda_graph;
    uint64_t seed;
    double tol; /* the two ways' outputs agree within it (nb_compare) */
} nb_serve_opts;

/* Time net served both ways on T threads (names, kind, notes and a log line written here):
 * rc gets the contexts way (one batch_range plan, T
 * nnop_exec; status "unsupported" where the backend refuses them), rp the plans way (a
 * context a thread, a plan per batch size); images_s, host_us (median request latency),
 * lat_p99_us, mem_mib (plans and execution contexts, the I/O buffers not counted) and the
 * check. The caller fills their common fields. 0, 1 (outputs not finite or the ways
 * disagree: nothing timed) or 3 (a build, compile or run failed). */
int nb_serve(const nb_serve_opts *so, nb_env *env, nnop_backend backend, int device,
             const nnop_context_options *co, const nb_net *net, nb_result *rc, nb_result *rp);

#endif /* NNOP_BENCH_NB_SERVE_H */
