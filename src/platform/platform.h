/* platform.h: the OS services nnop needs (mutex, threads, clock, files), one implementation
 * per OS: posix.c and win32.c. Nothing outside src/platform/ includes an OS header. */
#ifndef NNOP_PLATFORM_H
#define NNOP_PLATFORM_H

#include <stdint.h>
#include <stdio.h>

#include "nnop/nnop.h"

/* ---------------------------------------------------------------- mutex */
typedef struct nnop__mutex nnop__mutex;
/* NNOP_ERR_OUT_OF_MEMORY or NNOP_ERR_INTERNAL on failure; *out is NULL then. */
nnop_status nnop__mutex_create(nnop__mutex **out);
void nnop__mutex_destroy(nnop__mutex *m); /* NULL is fine */
void nnop__mutex_lock(nnop__mutex *m);
void nnop__mutex_unlock(nnop__mutex *m);

/* ---------------------------------------------------------------- once */
/* fn runs exactly once per slot in the process, on the first caller's thread; callers that
 * come while it runs wait for it. For lazily loaded libraries (src/cuda/device/libs.c) and
 * the doctor's lock (src/doctor.c), the log's plan numbering (src/plan.c). */
enum { NNOP__ONCE_CUDNN, NNOP__ONCE_CUBLASLT, NNOP__ONCE_DOCTOR, NNOP__ONCE_LOG, NNOP__ONCE_SLOTS };
void nnop__once(int slot, void (*fn)(void));

/* ------------------------------------------------ threads (tests, tools, plan deserialization) */
typedef struct nnop__thread nnop__thread;
nnop_status nnop__thread_start(void (*fn)(void *), void *arg, nnop__thread **out);
/* Wait for the thread to end and free it. */
void nnop__thread_join(nnop__thread *t);
/* Let other threads run (a short wait for another thread's result). */
void nnop__thread_yield(void);

/* ---------------------------------------------------------------- clock, process */
/* Monotonic nanoseconds since an arbitrary start. */
uint64_t nnop__monotonic_ns(void);
uint64_t nnop__process_id(void);

/* ---------------------------------------------------------------- files */
/* fopen with a UTF-8 path (wide API on Windows). *not_found (may be NULL) is set to 1 when
 * it failed because the file or a directory on the way does not exist. */
FILE *nnop__fopen(const char *path, const char *mode, int *not_found);
/* Why nnop__fopen_read or nnop__fopen_create failed. */
typedef enum nnop__open_result {
    NNOP__OPEN_OK = 0,
    NNOP__OPEN_MISSING,     /* the file or a directory on the way does not exist */
    NNOP__OPEN_NOT_REGULAR, /* a directory, FIFO, device or socket: never read or replaced */
    NNOP__OPEN_NO_MEMORY,   /* an allocation failed (the C library's FILE, a path) */
    NNOP__OPEN_EXISTS,      /* nnop__fopen_create: the name is taken */
    NNOP__OPEN_FAILED       /* anything else: no permission, I/O error, ... */
} nnop__open_result;
/* Open an existing regular file for reading ("rb") without ever blocking: a FIFO or device is
 * refused (NNOP__OPEN_NOT_REGULAR) without being read. NULL and *why on failure. */
FILE *nnop__fopen_read(const char *path, nnop__open_result *why);
/* The regular file path, at most max bytes (max < SIZE_MAX / 2), into *buf (free() it; a NUL
 * follows the *len bytes); *longer when the file goes on past max. 0 on success, else -1 with
 * *why (read_file.c, portable). */
int nnop__read_file(const char *path, size_t max, unsigned char **buf, size_t *len, int *longer,
                    nnop__open_result *why);
/* Why in words, for messages: "no such file", "not a regular file (...)", ... */
const char *nnop__open_problem(nnop__open_result why);
/* Create a new file for writing ("wb"), failing when the name exists. */
FILE *nnop__fopen_create(const char *path, nnop__open_result *why);
/* Call fn(user, name) for each entry of the directory dir ("" or "." for the current one)
 * other than "." and "..": 0 when listed, -1 when it cannot be read. */
int nnop__list_dir(const char *dir, void (*fn)(void *user, const char *name), void *user);
/* fflush + flush to the storage device; 0 on success. */
int nnop__fsync(FILE *f);
/* Atomically replace `to` with `from` (same directory); 0 on success. */
int nnop__rename_replace(const char *from, const char *to);
/* Remove a file; 0 on success. */
int nnop__remove(const char *path);

/* An exclusive advisory lock on a lock file, created if missing. It excludes other
 * processes and other holders in this process alike; it goes away with the process. */
typedef struct nnop__file_lock nnop__file_lock;
nnop_status nnop__file_lock_acquire(const char *lock_path, nnop__file_lock **out);
void nnop__file_lock_release(nnop__file_lock *l); /* NULL is fine */

/* ---------------------------------------------------------------- shared libraries (dl.c) */
typedef struct nnop__dl nnop__dl;
/* Load a shared library: a file name searched as the OS loader does, or a path (Windows:
 * its dependencies are looked for in its folder first). Symbols are bound at once and kept
 * local (dlopen RTLD_NOW | RTLD_LOCAL, LoadLibraryEx). only_if_loaded: only one already in the
 * process (RTLD_NOLOAD, GetModuleHandleEx). NULL on failure, with the loader's own error text
 * ("...: cannot open shared object file: No such file or directory", "invalid ELF header",
 * "undefined symbol: ...") in err (len bytes, may be NULL). */
nnop__dl *nnop__dl_open(const char *name, int only_if_loaded, char *err, size_t len);
/* The address of symbol in h (a function or data), NULL when absent. */
void *nnop__dl_sym(nnop__dl *h, const char *symbol);
/* The folder part of path ('/' or '\\' separated) into dir; "" when none or too long. */
void nnop__dl_dir_of(const char *path, char *dir, size_t len);
/* The file h was loaded from (dlinfo RTLD_DI_LINKMAP, GetModuleFileName): 0 on success. */
int nnop__dl_path(nnop__dl *h, char *buf, size_t len);
void nnop__dl_close(nnop__dl *h); /* NULL is fine */
/* 1, with why in err, when path is a library file cut short (shorter than its ELF headers
 * say: a process that loads it dies of SIGBUS); 0 otherwise, or where this is not checked
 * (not Linux). */
int nnop__dl_file_cut(const char *path, char *err, size_t len);
/* '/' or '\\': what joins a folder and a file name. */
char nnop__dl_dir_separator(void);
/* dir/file into out (len bytes), or file alone when dir is NULL or "". */
void nnop__path_join(char *out, size_t len, const char *dir, const char *file);

/* The environment variable name into buf (len bytes): 0 when set and it fits, else -1 and
 * buf "". */
int nnop__env_get(const char *name, char *buf, size_t len);
/* 1 when the environment variable name is set to a non-empty value, else 0. */
int nnop__env_is_set(const char *name);
/* Whether the comma-separated list has item as one of its entries (not a prefix or suffix
 * of one); 0 for a NULL list or an empty item. */
int nnop__list_has(const char *list, const char *item);
/* 1 when the environment variable name, a comma-separated list, has item as one of its
 * entries (NNOP_DISABLE_IMPL="own stem kernel,cuBLASLt"), else 0. */
int nnop__env_lists(const char *name, const char *item);
/* Room for a file path nnop builds from a folder the user names (PATH_MAX on Linux). */
#define NNOP__PATH_LEN 4096
/* Room for that folder joined with a library's file name. */
#define NNOP__LIB_PATH_LEN (NNOP__PATH_LEN + 64)
/* A library folder from the environment variable name (NNOP_CUDNN_PATH): the folder itself,
 * or the folder of a library file it names (".../lib/libcudnn.so.9" reads as ".../lib"),
 * as people set it both ways. 0 when set, -1 when not, NNOP__ENV_TOO_LONG when set to more
 * than len - 1 bytes (never cut: a cut path would name another folder); buf "" unless 0. */
#define NNOP__ENV_TOO_LONG (-2)
int nnop__env_lib_dir(const char *name, char *buf, size_t len);
/* Where nnop loads a library from, in the order tried: only/file alone while `only` (a folder
 * from NNOP_CUDNN_PATH) is set, as looking elsewhere would load one the user did not name;
 * else file by name as the OS loader searches, then fallback/file when fallback is given (the
 * folder found at build time, or beside a library already loaded). The loader
 * (cuda/device/libs.c) and the doctor both follow it, so the doctor reports the file nnop
 * takes. Fills places[0..n) and returns n, 1 or 2. */
#define NNOP__LIB_PLACES 2
int nnop__lib_places(const char *file, const char *only, const char *fallback,
                     char places[NNOP__LIB_PLACES][NNOP__LIB_PATH_LEN]);

/* ---------------------------------------------------------------- child processes */
/* Run fn(arg, fd) in a child process (POSIX fork); what it writes to fd (nnop__fd_write)
 * comes back in *out (malloc'd, *n bytes; free it, NULL is fine). Returns 0 when the child
 * exited with status 0; the number of the signal that ended it (SIGBUS: a damaged library it
 * loaded; the child takes the crash signals' default action and writes no core file);
 * NNOP__CHILD_EXITED + status when it exited with another status (a library calling exit);
 * or -1: no child (Windows, pipe or fork failed), or one silent for timeout_ms (killed). For
 * a single-threaded caller: the child of a process with other threads may find a lock they
 * held taken forever (the timeout ends that wait). */
#define NNOP__CHILD_EXITED 1000
int nnop__run_in_child(void (*fn)(void *arg, int fd), void *arg, int timeout_ms,
                       unsigned char **out, size_t *n);
/* A signal's description ("Bus error"), "" where there is none. */
const char *nnop__signal_name(int sig);
/* Write all n bytes to fd: 0, or -1. */
int nnop__fd_write(int fd, const void *p, size_t n);

/* ---------------------------------------------------------------- processes (tests; the doctor) */
/* 1 where nnop__fork works (POSIX), 0 elsewhere (Windows). */
int nnop__fork_available(void);
/* fork(): 0 in the child, the child's id in the parent, -1 on failure. */
int64_t nnop__fork(void);
/* Wait for child pid; its exit code, or -1 if it did not exit normally. */
int nnop__wait_child(int64_t pid);
/* End the calling (child) process at once, without atexit handlers. */
void nnop__exit_now(int code);

#endif /* NNOP_PLATFORM_H */
