/* nb_thread.h: a tiny thread shim for nnop-bench (POSIX threads or Win32). */
#ifndef NNOP_BENCH_NB_THREAD_H
#define NNOP_BENCH_NB_THREAD_H

typedef struct nb_thread nb_thread;
typedef void (*nb_thread_fn)(void *arg);

/* Start fn(arg) on a new thread; returns 0, or -1 when no thread could be made. */
int nb_thread_start(nb_thread **out, nb_thread_fn fn, void *arg);
/* Wait for the thread and free it. */
void nb_thread_join(nb_thread *t);
/* Seconds on a monotonic clock (for intervals). */
double nb_now(void);

#endif /* NNOP_BENCH_NB_THREAD_H */
