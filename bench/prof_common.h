/* prof_common.h: what the profiling modules (prof_resnet.c, prof_nets.c) share: one compiled
 * plan with its input and output buffers, and the functions bench/profile_kernels.py calls
 * through ctypes besides each module's prof_init. Public API only. */
#ifndef NNOP_BENCH_PROF_COMMON_H
#define NNOP_BENCH_PROF_COMMON_H

#include <stddef.h>

#include "nnop/nnop.h"

#if defined(_WIN32)
#define PROF_API __declspec(dllexport)
#else
#define PROF_API __attribute__((visibility("default")))
#endif

PROF_API void prof_fini(void);
/* iters forwards back to back, then wait for them; 0 on success */
PROF_API int prof_run(int iters);
/* the plan's description into buf (len bytes) */
PROF_API int prof_describe(char *buf, int len);

/* The module's context (after prof_context). */
nnop_context *prof_ctx(void);
/* 1 after printing "prof: what: why" (why NULL: the context's last error). */
int prof_fail(const char *what, const char *why);
/* A fresh CUDA context (after prof_fini), autotuned with the fastest policy or not. */
int prof_context(int autotune);
/* Compile g (destroyed here, also on failure) with or without CUDA graph replay and allocate
 * the input (xbytes, filled with fp16 0.125) and the output (ybytes). */
int prof_compile(nnop_graph *g, int cuda_graph, size_t xbytes, size_t ybytes);

#endif /* NNOP_BENCH_PROF_COMMON_H */
