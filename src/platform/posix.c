/* posix.c: platform services on POSIX systems (Linux, macOS, BSD). */
#ifndef _WIN32

/* flock() lives outside strict POSIX: ask for it (C_EXTENSIONS is off, so -std=c11). */
#define _POSIX_C_SOURCE  200809L
#define _DEFAULT_SOURCE  1
#define _DARWIN_C_SOURCE 1

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"

static pthread_once_t onces[NNOP__ONCE_SLOTS] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
                                                 PTHREAD_ONCE_INIT};

void nnop__once(int slot, void (*fn)(void))
{
    (void)pthread_once(&onces[slot], fn);
}

struct nnop__mutex {
    pthread_mutex_t m;
};

nnop_status nnop__mutex_create(nnop__mutex **out)
{
    nnop__mutex *m = (nnop__mutex *)calloc(1, sizeof *m);
    *out = NULL;
    if (!m)
        return NNOP_ERR_OUT_OF_MEMORY;
    if (pthread_mutex_init(&m->m, NULL) != 0) {
        free(m);
        return NNOP_ERR_INTERNAL;
    }
    *out = m;
    return NNOP_OK;
}

void nnop__mutex_destroy(nnop__mutex *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->m);
    free(m);
}

void nnop__mutex_lock(nnop__mutex *m)
{
    pthread_mutex_lock(&m->m);
}

void nnop__mutex_unlock(nnop__mutex *m)
{
    pthread_mutex_unlock(&m->m);
}

struct nnop__thread {
    pthread_t t;
    void (*fn)(void *);
    void *arg;
};

static void *thread_main(void *p)
{
    nnop__thread *t = (nnop__thread *)p;
    t->fn(t->arg);
    return NULL;
}

nnop_status nnop__thread_start(void (*fn)(void *), void *arg, nnop__thread **out)
{
    nnop__thread *t = (nnop__thread *)calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return NNOP_ERR_OUT_OF_MEMORY;
    t->fn = fn;
    t->arg = arg;
    if (pthread_create(&t->t, NULL, thread_main, t) != 0) {
        free(t);
        return NNOP_ERR_INTERNAL;
    }
    *out = t;
    return NNOP_OK;
}

void nnop__thread_join(nnop__thread *t)
{
    if (!t)
        return;
    pthread_join(t->t, NULL);
    free(t);
}

void nnop__thread_yield(void)
{
    (void)sched_yield();
}

uint64_t nnop__monotonic_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t nnop__process_id(void)
{
    return (uint64_t)getpid();
}

FILE *nnop__fopen(const char *path, const char *mode, int *not_found)
{
    FILE *f = fopen(path, mode);
    if (not_found)
        *not_found = (!f && (errno == ENOENT || errno == ENOTDIR));
    return f;
}

static nnop__open_result open_errno(int e)
{
    return e == ENOENT || e == ENOTDIR ? NNOP__OPEN_MISSING
           : e == ENOMEM               ? NNOP__OPEN_NO_MEMORY
           : e == EEXIST               ? NNOP__OPEN_EXISTS
           : e == EISDIR               ? NNOP__OPEN_NOT_REGULAR
                                       : NNOP__OPEN_FAILED;
}

/* fdopen(fd) or close it; *why NNOP__OPEN_NO_MEMORY when the FILE could not be made. */
static FILE *fd_to_file(int fd, const char *mode, nnop__open_result *why)
{
    FILE *f = fdopen(fd, mode);
    if (!f) {
        *why = errno == ENOMEM || errno == 0 ? NNOP__OPEN_NO_MEMORY : open_errno(errno);
        close(fd);
        return NULL;
    }
    *why = NNOP__OPEN_OK;
    return f;
}

FILE *nnop__fopen_read(const char *path, nnop__open_result *why)
{
    struct stat st;
    int fd, flags;
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = open_errno(errno);
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = S_ISREG(st.st_mode) ? NNOP__OPEN_FAILED : NNOP__OPEN_NOT_REGULAR;
        close(fd);
        return NULL;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        *why = NNOP__OPEN_FAILED;
        close(fd);
        return NULL;
    }
    errno = 0;
    return fd_to_file(fd, "rb", why);
}

FILE *nnop__fopen_create(const char *path, nnop__open_result *why)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        *why = open_errno(errno);
        return NULL;
    }
    errno = 0;
    return fd_to_file(fd, "wb", why);
}

int nnop__list_dir(const char *dir, void (*fn)(void *user, const char *name), void *user)
{
    DIR *d = opendir(dir && dir[0] ? dir : ".");
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            fn(user, e->d_name);
    closedir(d);
    return 0;
}

int nnop__fsync(FILE *f)
{
    if (fflush(f) != 0)
        return -1;
    return fsync(fileno(f)) == 0 ? 0 : -1;
}

int nnop__rename_replace(const char *from, const char *to)
{
    return rename(from, to) == 0 ? 0 : -1;
}

int nnop__remove(const char *path)
{
    return unlink(path) == 0 ? 0 : -1;
}

/* flock() rather than fcntl() locks: fcntl locks belong to the process, so two caches of one
 * process would not exclude each other, and closing any descriptor of the file drops them. */
struct nnop__file_lock {
    int fd;
};

nnop_status nnop__file_lock_acquire(const char *lock_path, nnop__file_lock **out)
{
    nnop__file_lock *l;
    int fd, r;
    *out = NULL;
    fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return NNOP_ERR_IO;
    do
        r = flock(fd, LOCK_EX);
    while (r != 0 && errno == EINTR);
    l = (nnop__file_lock *)calloc(1, sizeof *l);
    if (r != 0 || !l) {
        close(fd);
        free(l);
        return r != 0 ? NNOP_ERR_IO : NNOP_ERR_OUT_OF_MEMORY;
    }
    l->fd = fd;
    *out = l;
    return NNOP_OK;
}

void nnop__file_lock_release(nnop__file_lock *l)
{
    if (!l)
        return;
    flock(l->fd, LOCK_UN);
    close(l->fd);
    free(l);
}

int nnop__fork_available(void)
{
    return 1;
}

int64_t nnop__fork(void)
{
    return (int64_t)fork();
}

int nnop__wait_child(int64_t pid)
{
    int status = 0;
    pid_t r;
    do
        r = waitpid((pid_t)pid, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0 || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

void nnop__exit_now(int code)
{
    _exit(code);
}

const char *nnop__signal_name(int sig)
{
    const char *s = strsignal(sig);
    return s ? s : "";
}

int nnop__fd_write(int fd, const void *p, size_t n)
{
    const char *c = (const char *)p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Everything the child writes, until it closes its end or timeout_ms passes without a byte. */
static int collect(int fd, int timeout_ms, unsigned char **out, size_t *n)
{
    size_t cap = 0;
    for (;;) {
        struct pollfd pf;
        ssize_t r;
        int ready;
        pf.fd = fd;
        pf.events = POLLIN;
        pf.revents = 0;
        ready = poll(&pf, 1, timeout_ms);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return -1; /* silent too long: hung */
        if (*n == cap) {
            unsigned char *bigger = (unsigned char *)realloc(*out, cap ? 2 * cap : 65536);
            if (!bigger)
                return -1;
            *out = bigger;
            cap = cap ? 2 * cap : 65536;
        }
        r = read(fd, *out + *n, cap - *n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 ? 0 : -1;
        *n += (size_t)r;
    }
}

/* The child dies of what it meets, quietly: the default action for the crash signals (not a
 * host's handler, a JVM's or a fault handler's, that may hang it), and no core file of a
 * process with a gigabyte of cuDNN mapped. */
static void child_setup(void)
{
    static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    struct rlimit no_core = {0, 0};
    size_t i;
    for (i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        (void)signal(crash_signals[i], SIG_DFL);
    (void)setrlimit(RLIMIT_CORE, &no_core);
}

int nnop__run_in_child(void (*fn)(void *arg, int fd), void *arg, int timeout_ms,
                       unsigned char **out, size_t *n)
{
    int fds[2], status = 0, got;
    pid_t pid, r;
    *out = NULL;
    *n = 0;
    if (pipe(fds) != 0)
        return -1;
    /* a fork and exec elsewhere must not keep the write end open (EOF would wait for it) */
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL); /* nothing buffered is written twice if the child exits through stdio */
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_setup();
        fn(arg, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    got = collect(fds[0], timeout_ms, out, n);
    close(fds[0]);
    if (got != 0)
        (void)kill(pid, SIGKILL);
    do
        r = waitpid(pid, &status, 0);
    while (r < 0 && errno == EINTR);
    if (got != 0 || r < 0)
        return -1;
    if (WIFSIGNALED(status))
        return WTERMSIG(status);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return NNOP__CHILD_EXITED + WEXITSTATUS(status);
    return WIFEXITED(status) ? 0 : -1;
}

#else
/* ISO C forbids an empty translation unit. */
typedef int nnop__posix_unused;
#endif /* _WIN32 */
