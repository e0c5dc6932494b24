/* cuda_alloc_inject.h: device allocation failures on demand, for GPU tests. Include it in
 * exactly one source file of a test executable that links the shared CUDA runtime: it
 * defines cudaMalloc and cudaFree there, which nnop's calls (linked into the executable)
 * reach before libcudart's, and forwards to libcudart's (dlsym RTLD_NEXT). While armed it
 * counts cudaMalloc calls, fails the dev_fail_at-th one with cudaErrorMemoryAllocation, and
 * tracks the live blocks so that leaks show. cuDNN's and cuBLAS's own allocations go through
 * their own runtimes and are left alone. Only where alloc_inject.h works (include it first). */
#ifndef NNOP_CUDA_ALLOC_INJECT_H
#define NNOP_CUDA_ALLOC_INJECT_H

#if defined(NNOP_CAN_INJECT)
#define NNOP_CAN_INJECT_DEVICE 1
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

enum { DEV_SLOTS = 4096 };

static pthread_mutex_t dev_mu_ = PTHREAD_MUTEX_INITIALIZER; /* prefetch threads allocate */
static int dev_armed_;
static long dev_count_, dev_fail_at_, dev_failed_, dev_live_;
static void *dev_slots_[DEV_SLOTS];

typedef cudaError_t (*cuda_malloc_fn)(void **, size_t);
typedef cudaError_t (*cuda_free_fn)(void *);

cudaError_t cudaMalloc(void **p, size_t n)
{
    static cuda_malloc_fn real;
    cudaError_t e;
    int i;
    int fail;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "cudaMalloc");
    pthread_mutex_lock(&dev_mu_);
    fail = dev_armed_ && ++dev_count_ == dev_fail_at_;
    dev_failed_ += fail;
    pthread_mutex_unlock(&dev_mu_);
    if (fail) {
        *p = NULL;
        return cudaErrorMemoryAllocation;
    }
    e = real(p, n);
    pthread_mutex_lock(&dev_mu_);
    if (e == cudaSuccess && dev_armed_)
        for (i = 0; i < DEV_SLOTS; i++)
            if (!dev_slots_[i]) {
                dev_slots_[i] = *p;
                dev_live_++;
                break;
            }
    pthread_mutex_unlock(&dev_mu_);
    return e;
}

cudaError_t cudaFree(void *p)
{
    static cuda_free_fn real;
    int i;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "cudaFree");
    pthread_mutex_lock(&dev_mu_);
    for (i = 0; p && dev_armed_ && i < DEV_SLOTS; i++)
        if (dev_slots_[i] == p) {
            dev_slots_[i] = NULL;
            dev_live_--;
            break;
        }
    pthread_mutex_unlock(&dev_mu_);
    return real(p);
}

/* Count cudaMalloc calls from now on, failing the fail_at-th (0: none). */
static void dev_arm(long fail_at)
{
    pthread_mutex_lock(&dev_mu_);
    memset(dev_slots_, 0, sizeof dev_slots_);
    dev_count_ = dev_failed_ = dev_live_ = 0;
    dev_fail_at_ = fail_at;
    dev_armed_ = 1;
    pthread_mutex_unlock(&dev_mu_);
}

static void dev_disarm(void)
{
    pthread_mutex_lock(&dev_mu_);
    dev_armed_ = 0;
    pthread_mutex_unlock(&dev_mu_);
}
#endif

#endif /* NNOP_CUDA_ALLOC_INJECT_H */
