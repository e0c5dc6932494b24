/* win32.c: platform services on Windows (MSVC, clang-cl, MinGW). */
#ifdef _WIN32

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <errno.h>
#include <io.h>
#include <process.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

static INIT_ONCE onces[NNOP__ONCE_SLOTS] = {INIT_ONCE_STATIC_INIT, INIT_ONCE_STATIC_INIT,
                                            INIT_ONCE_STATIC_INIT};

static BOOL CALLBACK run_once(PINIT_ONCE once, PVOID fn, PVOID *context)
{
    void (*f)(void);
    (void)once, (void)context;
    memcpy(&f, &fn, sizeof f); /* ISO C has no cast between data and function pointers */
    f();
    return TRUE;
}

void nnop__once(int slot, void (*fn)(void))
{
    PVOID p;
    memcpy(&p, &fn, sizeof p);
    (void)InitOnceExecuteOnce(&onces[slot], run_once, p, NULL);
}

struct nnop__mutex {
    SRWLOCK lock; /* no destruction needed; never recursive, which is all we need */
};

nnop_status nnop__mutex_create(nnop__mutex **out)
{
    nnop__mutex *m = (nnop__mutex *)calloc(1, sizeof *m);
    *out = NULL;
    if (!m)
        return NNOP_ERR_OUT_OF_MEMORY;
    InitializeSRWLock(&m->lock);
    *out = m;
    return NNOP_OK;
}

void nnop__mutex_destroy(nnop__mutex *m)
{
    free(m);
}

void nnop__mutex_lock(nnop__mutex *m)
{
    AcquireSRWLockExclusive(&m->lock);
}

void nnop__mutex_unlock(nnop__mutex *m)
{
    ReleaseSRWLockExclusive(&m->lock);
}

struct nnop__thread {
    HANDLE h;
    void (*fn)(void *);
    void *arg;
};

static unsigned __stdcall thread_main(void *p)
{
    nnop__thread *t = (nnop__thread *)p;
    t->fn(t->arg);
    return 0;
}

nnop_status nnop__thread_start(void (*fn)(void *), void *arg, nnop__thread **out)
{
    nnop__thread *t = (nnop__thread *)calloc(1, sizeof *t);
    uintptr_t h;
    *out = NULL;
    if (!t)
        return NNOP_ERR_OUT_OF_MEMORY;
    t->fn = fn;
    t->arg = arg;
    h = _beginthreadex(NULL, 0, thread_main, t, 0, NULL);
    if (h == 0) {
        free(t);
        return NNOP_ERR_INTERNAL;
    }
    t->h = (HANDLE)h;
    *out = t;
    return NNOP_OK;
}

void nnop__thread_join(nnop__thread *t)
{
    if (!t)
        return;
    WaitForSingleObject(t->h, INFINITE);
    CloseHandle(t->h);
    free(t);
}

void nnop__thread_yield(void)
{
    (void)SwitchToThread();
}

uint64_t nnop__monotonic_ns(void)
{
    LARGE_INTEGER freq, now;
    uint64_t sec, rem;
    if (!QueryPerformanceFrequency(&freq) || !QueryPerformanceCounter(&now) || freq.QuadPart <= 0)
        return 0;
    /* split to avoid overflowing counter * 1e9 */
    sec = (uint64_t)now.QuadPart / (uint64_t)freq.QuadPart;
    rem = (uint64_t)now.QuadPart % (uint64_t)freq.QuadPart;
    return sec * 1000000000u + rem * 1000000000u / (uint64_t)freq.QuadPart;
}

uint64_t nnop__process_id(void)
{
    return (uint64_t)GetCurrentProcessId();
}

/* UTF-8 -> UTF-16 in a malloc'd buffer, NULL on failure. */
static wchar_t *to_wide(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
    wchar_t *w;
    if (n <= 0)
        return NULL;
    w = (wchar_t *)malloc((size_t)n * sizeof *w);
    if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
        free(w);
        w = NULL;
    }
    return w;
}

FILE *nnop__fopen(const char *path, const char *mode, int *not_found)
{
    wchar_t *wp = to_wide(path), *wm = to_wide(mode);
    FILE *f = NULL;
    errno_t err = EINVAL;
    if (wp && wm)
        err = _wfopen_s(&f, wp, wm);
    if (err != 0)
        f = NULL;
    free(wp);
    free(wm);
    if (not_found)
        *not_found = (!f && err == ENOENT);
    return f;
}

static nnop__open_result open_errno(errno_t e)
{
    return e == ENOENT   ? NNOP__OPEN_MISSING
           : e == ENOMEM ? NNOP__OPEN_NO_MEMORY
           : e == EEXIST ? NNOP__OPEN_EXISTS
                         : NNOP__OPEN_FAILED;
}

FILE *nnop__fopen_read(const char *path, nnop__open_result *why)
{
    wchar_t *wp = to_wide(path);
    DWORD attr;
    HANDLE h;
    FILE *f = NULL;
    errno_t err;
    if (!wp) {
        *why = NNOP__OPEN_NO_MEMORY;
        return NULL;
    }
    attr = GetFileAttributesW(wp);
    if (attr == INVALID_FILE_ATTRIBUTES) {
        DWORD e = GetLastError();
        free(wp);
        *why = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? NNOP__OPEN_MISSING
                                                                      : NNOP__OPEN_FAILED;
        return NULL;
    }
    if (attr & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_DEVICE)) {
        free(wp);
        *why = NNOP__OPEN_NOT_REGULAR;
        return NULL;
    }
    /* a named pipe or console is not a disk file: refused before it is read */
    h = CreateFileW(wp, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                    OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (h != INVALID_HANDLE_VALUE) {
        DWORD type = GetFileType(h);
        CloseHandle(h);
        if (type != FILE_TYPE_DISK) {
            free(wp);
            *why = NNOP__OPEN_NOT_REGULAR;
            return NULL;
        }
    }
    err = _wfopen_s(&f, wp, L"rb");
    free(wp);
    if (err != 0 || !f) {
        *why = open_errno(err);
        return NULL;
    }
    *why = NNOP__OPEN_OK;
    return f;
}

FILE *nnop__fopen_create(const char *path, nnop__open_result *why)
{
    wchar_t *wp = to_wide(path);
    FILE *f = NULL;
    errno_t err;
    if (!wp) {
        *why = NNOP__OPEN_NO_MEMORY;
        return NULL;
    }
    err = _wfopen_s(&f, wp, L"wbx"); /* x: fail if it exists (C11) */
    free(wp);
    if (err != 0 || !f) {
        *why = open_errno(err);
        return NULL;
    }
    *why = NNOP__OPEN_OK;
    return f;
}

int nnop__list_dir(const char *dir, void (*fn)(void *user, const char *name), void *user)
{
    size_t n = strlen(dir ? dir : "");
    char *pattern = (char *)malloc(n + 4), name[MAX_PATH * 4];
    wchar_t *wp;
    WIN32_FIND_DATAW fd;
    HANDLE h;
    if (!pattern)
        return -1;
    snprintf(pattern, n + 4, "%s\\*", n ? dir : ".");
    wp = to_wide(pattern);
    free(pattern);
    if (!wp)
        return -1;
    h = FindFirstFileW(wp, &fd);
    free(wp);
    if (h == INVALID_HANDLE_VALUE)
        return -1;
    do {
        if (WideCharToMultiByte(CP_UTF8, 0, fd.cFileName, -1, name, (int)sizeof name, NULL, NULL) >
                    0 &&
            strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
            fn(user, name);
    } while (FindNextFileW(h, &fd));
    FindClose(h);
    return 0;
}

int nnop__fsync(FILE *f)
{
    if (fflush(f) != 0)
        return -1;
    return _commit(_fileno(f)) == 0 ? 0 : -1;
}

int nnop__rename_replace(const char *from, const char *to)
{
    wchar_t *wf = to_wide(from), *wt = to_wide(to);
    BOOL ok = wf && wt && MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    free(wf);
    free(wt);
    return ok ? 0 : -1;
}

int nnop__remove(const char *path)
{
    wchar_t *w = to_wide(path);
    BOOL ok = w && DeleteFileW(w);
    free(w);
    return ok ? 0 : -1;
}

struct nnop__file_lock {
    HANDLE h;
};

nnop_status nnop__file_lock_acquire(const char *lock_path, nnop__file_lock **out)
{
    wchar_t *w = to_wide(lock_path);
    nnop__file_lock *l;
    OVERLAPPED ov;
    HANDLE h;
    *out = NULL;
    if (!w)
        return NNOP_ERR_IO;
    h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE,
                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_ALWAYS,
                    FILE_ATTRIBUTE_NORMAL, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return NNOP_ERR_IO;
    memset(&ov, 0, sizeof ov);
    l = (nnop__file_lock *)calloc(1, sizeof *l);
    if (!l || !LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ov)) {
        CloseHandle(h);
        free(l);
        return l ? NNOP_ERR_IO : NNOP_ERR_OUT_OF_MEMORY;
    }
    l->h = h;
    *out = l;
    return NNOP_OK;
}

void nnop__file_lock_release(nnop__file_lock *l)
{
    OVERLAPPED ov;
    if (!l)
        return;
    memset(&ov, 0, sizeof ov);
    UnlockFileEx(l->h, 0, 1, 0, &ov);
    CloseHandle(l->h);
    free(l);
}

int nnop__fork_available(void)
{
    return 0;
}

int64_t nnop__fork(void)
{
    return -1;
}

int nnop__wait_child(int64_t pid)
{
    (void)pid;
    return -1;
}

const char *nnop__signal_name(int sig)
{
    (void)sig;
    return "";
}

int nnop__fd_write(int fd, const void *p, size_t n)
{
    (void)fd;
    (void)p;
    (void)n;
    return -1;
}

int nnop__run_in_child(void (*fn)(void *arg, int fd), void *arg, int timeout_ms,
                       unsigned char **out, size_t *n)
{
    (void)fn;
    (void)arg;
    (void)timeout_ms;
    *out = NULL;
    *n = 0;
    return -1;
}

void nnop__exit_now(int code)
{
    _exit(code);
}

#else
/* ISO C forbids an empty translation unit. */
typedef int nnop__win32_unused;
#endif /* _WIN32 */
