/* nb_thread.c: the platform shim: threads (POSIX or Win32) and a monotonic clock. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <stdlib.h>
#include <time.h>

#include "nb_thread.h"

#ifdef _WIN32
#include <windows.h>
struct nb_thread {
    HANDLE h;
    nb_thread_fn fn;
    void *arg;
};
static DWORD WINAPI trampoline(LPVOID p)
{
    nb_thread *t = (nb_thread *)p;
    t->fn(t->arg);
    return 0;
}
int nb_thread_start(nb_thread **out, nb_thread_fn fn, void *arg)
{
    nb_thread *t = (nb_thread *)calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return -1;
    t->fn = fn;
    t->arg = arg;
    t->h = CreateThread(NULL, 0, trampoline, t, 0, NULL);
    if (!t->h) {
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}
void nb_thread_join(nb_thread *t)
{
    if (!t)
        return;
    WaitForSingleObject(t->h, INFINITE);
    CloseHandle(t->h);
    free(t);
}
double nb_now(void)
{
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
}
#else
#include <pthread.h>
struct nb_thread {
    pthread_t h;
    nb_thread_fn fn;
    void *arg;
};
static void *trampoline(void *p)
{
    nb_thread *t = (nb_thread *)p;
    t->fn(t->arg);
    return NULL;
}
int nb_thread_start(nb_thread **out, nb_thread_fn fn, void *arg)
{
    nb_thread *t = (nb_thread *)calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return -1;
    t->fn = fn;
    t->arg = arg;
    if (pthread_create(&t->h, NULL, trampoline, t) != 0) {
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}
void nb_thread_join(nb_thread *t)
{
    if (!t)
        return;
    pthread_join(t->h, NULL);
    free(t);
}
double nb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif
