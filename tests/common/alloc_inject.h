/* alloc_inject.h: host allocation failures on demand, for tests. Include it in exactly one
 * source file of a test executable: it replaces malloc, calloc, realloc and free there (glibc
 * supports replacing them and routes its own calls through the replacement) and forwards to
 * glibc's __libc_* functions. While armed it counts allocations, fails the fail_at-th one,
 * and tracks the live ones so that leaks show. With nnop_only, only allocations called from
 * this executable's own code (nnop is linked in statically) are counted and failed, not
 * those of shared libraries such as cuDNN.
 *
 * NNOP_CAN_INJECT is 1 where this works (glibc, no sanitizer, which replaces malloc itself),
 * else 0 and tests skip (SKIP_WITHOUT_INJECTION). */
#ifndef NNOP_ALLOC_INJECT_H
#define NNOP_ALLOC_INJECT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
        __has_feature(memory_sanitizer)
#define NNOP_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NNOP_SANITIZED 1
#endif

#if defined(__GLIBC__) && !defined(NNOP_SANITIZED)
#define NNOP_CAN_INJECT 1
#include <pthread.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern char __executable_start, etext; /* this executable's code (GNU linkers) */

enum { TRACK_SLOTS = 1 << 16 };

static pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
static int armed_, nnop_only_;
static long count_, fail_at_, failed_, live_, overflow_;
static void *slots_[TRACK_SLOTS];

static size_t slot_of(const void *p)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 48) & (TRACK_SLOTS - 1);
}

static void track_add(void *p)
{
    size_t i = slot_of(p), n;
    for (n = 0; n < TRACK_SLOTS; n++, i = (i + 1) & (TRACK_SLOTS - 1))
        if (!slots_[i] || slots_[i] == (void *)1) {
            slots_[i] = p;
            live_++;
            return;
        }
    overflow_++;
}

static void track_remove(void *p)
{
    size_t i = slot_of(p), n;
    for (n = 0; n < TRACK_SLOTS && slots_[i]; n++, i = (i + 1) & (TRACK_SLOTS - 1))
        if (slots_[i] == p) {
            slots_[i] = (void *)1; /* a tombstone keeps later probes going */
            live_--;
            return;
        }
}

static int counted(const void *caller)
{
    const char *c = (const char *)caller;
    return armed_ && (!nnop_only_ || (c >= &__executable_start && c < &etext));
}

/* 1 when this allocation is the one to fail. */
static int next_fails(const void *caller)
{
    int fail;
    if (!counted(caller))
        return 0;
    pthread_mutex_lock(&mu_);
    fail = ++count_ == fail_at_;
    failed_ += fail;
    pthread_mutex_unlock(&mu_);
    return fail;
}

static void *tracked(void *p, const void *caller)
{
    if (p && counted(caller)) {
        pthread_mutex_lock(&mu_);
        track_add(p);
        pthread_mutex_unlock(&mu_);
    }
    return p;
}

static void untrack(void *p)
{
    if (p && armed_) {
        pthread_mutex_lock(&mu_);
        track_remove(p);
        pthread_mutex_unlock(&mu_);
    }
}

void *malloc(size_t n)
{
    const void *caller = __builtin_return_address(0);
    return next_fails(caller) ? NULL : tracked(__libc_malloc(n), caller);
}

void *calloc(size_t n, size_t size)
{
    const void *caller = __builtin_return_address(0);
    return next_fails(caller) ? NULL : tracked(__libc_calloc(n, size), caller);
}

void *realloc(void *p, size_t n)
{
    const void *caller = __builtin_return_address(0);
    void *q;
    if (next_fails(caller))
        return NULL; /* p stays valid, as after a real failure */
    q = __libc_realloc(p, n);
    if (q || n == 0) {
        untrack(p);
        tracked(q, caller);
    }
    return q;
}

void free(void *p)
{
    untrack(p);
    __libc_free(p);
}

/* Count from now on, failing the fail_at-th allocation (0: none); nnop_only: see above. */
static void arm(long fail_at, int nnop_only)
{
    pthread_mutex_lock(&mu_);
    memset(slots_, 0, sizeof slots_);
    count_ = failed_ = live_ = overflow_ = 0;
    fail_at_ = fail_at;
    nnop_only_ = nnop_only;
    armed_ = 1;
    pthread_mutex_unlock(&mu_);
}

static void disarm(void)
{
    pthread_mutex_lock(&mu_);
    armed_ = 0;
    pthread_mutex_unlock(&mu_);
}
#define NNOP_CAN_INJECT_V 1
#else
#define NNOP_CAN_INJECT_V 0
#endif /* glibc, no sanitizer */

#define SKIP_WITHOUT_INJECTION()                                                                   \
    do {                                                                                           \
        if (!NNOP_CAN_INJECT_V) {                                                                  \
            print_message("malloc cannot be replaced here (not glibc, or a sanitizer)\n");         \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

#endif /* NNOP_ALLOC_INJECT_H */
