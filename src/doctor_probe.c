/* doctor_probe.c: the libraries of the installation report (doctor.h): cuDNN and each of its
 * sub-libraries, cuBLASLt, NVRTC and the CUDA driver, loaded with the platform loader one by
 * one, so that one missing piece never hides the others and nothing is called through a
 * library that did not load; then the verdicts, each with its fix in words. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "doctor.h"
#include "platform/platform.h"

#define CUDNN_LIB_MAJOR 9
/* cuDNN status values the verdicts name (cudnn_graph.h, stable in cuDNN 9) */
#define DOC_CUDNN_SUBLIBRARY_VERSION_MISMATCH 1002
#define DOC_CUDNN_SUBLIBRARY_LOADING_FAILED   1008

typedef size_t (*size_fn)(void);
typedef int (*status_fn)(void);
typedef int (*int_ptr_fn)(int *);
typedef int (*two_int_ptr_fn)(int *, int *);

static const struct {
    const char *key;
    const char *stem;    /* Linux: lib<stem>.so.9, Windows: <stem>64_9.dll */
    const char *check;   /* its own cudnn*VersionCheck, or NULL */
    const char *version; /* its version data symbol (0x00MMmmpp), or NULL */
    const char *role;    /* what is lost without it */
} cudnn_libs[] = {
        {"cudnn", "cudnn", NULL, NULL, "the entry points nnop loads, which reach all the others"},
        {"cudnn_graph", "cudnn_graph", "cudnnGraphVersionCheck", "cudnn_graph_version",
         "the graph API, every cuDNN call"},
        {"cudnn_engines_precompiled", "cudnn_engines_precompiled", NULL, NULL,
         "the precompiled engines"},
        {"cudnn_engines_runtime_compiled", "cudnn_engines_runtime_compiled", NULL, NULL,
         "the runtime-compiled engines: fused graphs, NNOP_POLICY_FASTEST"},
        {"cudnn_heuristic", "cudnn_heuristic", NULL, NULL, "the engine heuristics"},
        {"cudnn_ops", "cudnn_ops", "cudnnOpsVersionCheck", "cudnn_ops_infer_version",
         "the legacy ops"},
        {"cudnn_cnn", "cudnn_cnn", "cudnnCnnVersionCheck", "cudnn_cnn_infer_version",
         "the legacy convolutions"},
        {"cudnn_adv", "cudnn_adv", "cudnnAdvVersionCheck", "cudnn_adv_infer_version",
         "the legacy RNN and attention"},
};
#define N_CUDNN_LIBS ((int)(sizeof cudnn_libs / sizeof cudnn_libs[0]))

static void copy(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    n = n < len - 1 ? n : len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* snprintf that may truncate (a problem's text is bounded, paths are not). */
static void setf(char *dst, size_t len, const char *fmt, ...) NNOP_PRINTF(3, 4);
static void setf(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

/* The folders nnop's loader takes cuDNN and cuBLASLt from when the loader's search finds none
 * (CMake sets them for the whole library, this file included, as libs.c reads them). */
#ifndef NNOP_CUDNN_BUILD_DIR
#define NNOP_CUDNN_BUILD_DIR ""
#endif
#ifndef NNOP_CUBLASLT_BUILD_DIR
#define NNOP_CUBLASLT_BUILD_DIR ""
#endif

void nnop__doctor_init(nnop__doctor *d, int require_gpu)
{
    memset(d, 0, sizeof *d);
    d->require_gpu = require_gpu;
    d->progress_fd = -1;
    d->cudnn_dir_too_long = nnop__env_lib_dir("NNOP_CUDNN_PATH", d->cudnn_dir,
                                              sizeof d->cudnn_dir) == NNOP__ENV_TOO_LONG;
    copy(d->cudnn_build_dir, sizeof d->cudnn_build_dir, NNOP_CUDNN_BUILD_DIR);
    copy(d->cublaslt_build_dir, sizeof d->cublaslt_build_dir, NNOP_CUBLASLT_BUILD_DIR);
}

const nnop__doc_lib *nnop__doctor_lib(const nnop__doctor *d, const char *key)
{
    int i;
    for (i = 0; i < d->n_lib; i++)
        if (strcmp(d->lib[i].key, key) == 0)
            return &d->lib[i];
    return NULL;
}

static void *sym(nnop__dl *h, const char *name)
{
    return name ? nnop__dl_sym(h, name) : NULL;
}

/* A function pointer from a symbol's address (ISO C has no cast between the two). */
#define FN(type, var, addr) (memcpy(&(var), &(addr), sizeof(var)), (type)(var))

/* The loader found no file (ENOTDIR: a file stands where a folder of the path should be, as
 * with NNOP_CUDNN_PATH set to a file). */
static int not_found(const char *err)
{
    return strstr(err, "No such file") || strstr(err, "could not be found") ||
           strstr(err, "error 126") || strstr(err, "Not a directory");
}

int nnop__doctor_crashed(const nnop__doctor *d, const char *name)
{
    int i;
    for (i = 0; i < d->n_crashed; i++)
        if (strcmp(d->crashed[i], name) == 0)
            return i;
    return -1;
}

int nnop__doctor_before_load(nnop__doctor *d, const char *path, char *err, size_t len)
{
    int i = nnop__doctor_crashed(d, path);
    if (i >= 0) {
        int fate = d->crash_fate[i];
        char how[96];
        if (fate >= NNOP__CHILD_EXITED)
            setf(how, sizeof how, "exited with status %d", fate - NNOP__CHILD_EXITED);
        else
            setf(how, sizeof how, "signal %d, %s", fate, nnop__signal_name(fate));
        setf(err, len,
             "%s: loading or probing it crashed a probe process (%s): it, or a library it "
             "loads, is damaged",
             path, how);
        return 1;
    }
    if (d->progress_fd >= 0) {
        size_t n = strlen(path) + 1;
        (void)nnop__fd_write(d->progress_fd, "O", 1);
        (void)nnop__fd_write(d->progress_fd, path, n);
    }
    return 0;
}

/* Load lib->file from the first of its places that loads, by the loader's rule
 * (nnop__lib_places: `only` alone when given, else by name, where one already in this
 * process counts, else from `fallback`). lib->error is why none did: the first place's
 * error, or the fallback's when the file is there but broken, which says more. A place
 * whose loading crashed a probe process ends the search: nnop's loader would crash there
 * too, not go on to the next. */
static nnop__dl *open_lib(nnop__doctor *d, nnop__doc_lib *lib, const char *only,
                          const char *fallback)
{
    char places[NNOP__LIB_PLACES][NNOP__LIB_PATH_LEN], err[NNOP__DOC_TEXT];
    int n = nnop__lib_places(lib->file, only, fallback, places), i;
    nnop__dl *h = NULL;
    for (i = 0; i < n; i++) {
        char *why = i == 0 ? lib->error : err;
        size_t why_len = i == 0 ? sizeof lib->error : sizeof err;
        h = nnop__dl_open(places[i], 1, NULL, 0);
        if (!h && nnop__doctor_before_load(d, places[i], why, why_len)) {
            if (why != lib->error)
                copy(lib->error, sizeof lib->error, why);
            return NULL;
        }
        if (!h)
            h = nnop__dl_open(places[i], 0, why, why_len);
        if (h)
            break;
        if (i > 0 && !not_found(err))
            copy(lib->error, sizeof lib->error, err);
    }
    if (!h)
        return NULL;
    lib->error[0] = '\0';
    if (nnop__dl_path(h, lib->path, sizeof lib->path) != 0)
        copy(lib->path, sizeof lib->path, places[i]);
    lib->loaded = 1;
    return h;
}

/* A library that loaded stays loaded: cuDNN's are C++ libraries whose unloading frees
 * nothing useful and can run their destructors while another copy is in use; in a CUDA
 * build they are in the process anyway. */
static void keep(nnop__dl *h)
{
    (void)h;
}

static nnop__doc_lib *new_lib(nnop__doctor *d, const char *key)
{
    nnop__doc_lib *l = &d->lib[d->n_lib++];
    memset(l, 0, sizeof *l);
    l->key = key;
    l->check = -1;
    return l;
}

/* A sub-library's version data symbol: 0x00MMmmpp (cuDNN 9), checked for sense. */
static long packed_version(const void *p)
{
    uint32_t v;
    long major, minor, patch;
    if (!p)
        return 0;
    memcpy(&v, p, sizeof v);
    major = (long)((v >> 16) & 0xff);
    minor = (long)((v >> 8) & 0xff);
    patch = (long)(v & 0xff);
    if (v >> 24 || major < 8 || major > 99 || minor > 99 || patch > 99)
        return 0;
    return major * 10000 + minor * 100 + patch;
}

static void probe_cudnn(nnop__doctor *d)
{
    char beside[NNOP__PATH_LEN] = "";
    int i;
    if (d->cudnn_dir_too_long) /* nnop loads none then (libs.c): neither does the probe */
        return;
    for (i = 0; i < N_CUDNN_LIBS && d->n_lib < NNOP__DOC_MAX_LIBS; i++) {
        nnop__doc_lib *l = new_lib(d, cudnn_libs[i].key);
        nnop__dl *h;
#ifdef _WIN32
        snprintf(l->file, sizeof l->file, "%s64_%d.dll", cudnn_libs[i].stem, CUDNN_LIB_MAJOR);
#else
        snprintf(l->file, sizeof l->file, "lib%s.so.%d", cudnn_libs[i].stem, CUDNN_LIB_MAJOR);
#endif
        h = open_lib(d, l, d->cudnn_dir, beside);
        if (!h)
            continue;
        if (i == 0) {
            nnop__dl_dir_of(l->path, beside, sizeof beside);
        } else if (strcmp(l->key, "cudnn_graph") == 0) {
            /* cudnnGetVersion of libcudnn.so itself loads the graph library lazily and aborts
             * the process when it cannot: ask the graph library directly */
            void *a = sym(h, "cudnnGetVersion"), *b = sym(h, "cudnnGetCudartVersion");
            size_fn f;
            if (a)
                l->version = (long)FN(size_fn, f, a)();
            if (b)
                l->cudart = (long)FN(size_fn, f, b)();
        }
        if (!l->version)
            l->version = packed_version(sym(h, cudnn_libs[i].version));
        if (cudnn_libs[i].check) {
            void *a = sym(h, cudnn_libs[i].check);
            status_fn f;
            if (a)
                l->check = FN(status_fn, f, a)();
        }
        keep(h);
    }
}

/* The CUDA major version whose cuBLASLt/NVRTC to look for: the build's, else 13 then 12. */
static void probe_cuda_libs(nnop__doctor *d)
{
    int majors[2], n = 0, i, k;
    if (d->cudart_built) {
        majors[n++] = (int)(d->cudart_built / 1000);
    } else {
        majors[n++] = 13;
        majors[n++] = 12;
    }
    for (k = 0; k < 2 && d->n_lib < NNOP__DOC_MAX_LIBS; k++) {
        nnop__doc_lib *l = new_lib(d, k == 0 ? "cublasLt" : "nvrtc");
        nnop__dl *h = NULL;
        char first_error[NNOP__DOC_TEXT] = "";
        for (i = 0; i < n && !h; i++) {
            int m = majors[i];
#ifdef _WIN32
            if (k == 0)
                snprintf(l->file, sizeof l->file, "cublasLt64_%d.dll", m);
            else
                snprintf(l->file, sizeof l->file, "nvrtc64_%d0_0.dll", m);
#else
            snprintf(l->file, sizeof l->file, k == 0 ? "libcublasLt.so.%d" : "libnvrtc.so.%d", m);
#endif
            if (k == 0) { /* where libs.c takes it: by name, else the toolkit's folder */
                h = open_lib(d, l, NULL, d->cublaslt_build_dir);
            } else { /* cuDNN loads NVRTC itself: NNOP_CUDNN_PATH's folder (a wheel's) too */
                if (d->cudnn_dir[0])
                    h = open_lib(d, l, d->cudnn_dir, NULL);
                if (!h)
                    h = open_lib(d, l, NULL, NULL);
            }
            if (!h && i == 0)
                copy(first_error, sizeof first_error, l->error);
        }
        if (!h) {
            if (first_error[0])
                copy(l->error, sizeof l->error, first_error);
            if (n > 1) { /* report the first name looked for */
#ifdef _WIN32
                snprintf(l->file, sizeof l->file,
                         k == 0 ? "cublasLt64_%d.dll" : "nvrtc64_%d0_0.dll", majors[0]);
#else
                snprintf(l->file, sizeof l->file, k == 0 ? "libcublasLt.so.%d" : "libnvrtc.so.%d",
                         majors[0]);
#endif
            }
            continue;
        }
        if (k == 0) {
            void *a = sym(h, "cublasLtGetVersion");
            size_fn f;
            if (a)
                l->version = (long)FN(size_fn, f, a)();
        } else {
            void *a = sym(h, "nvrtcVersion");
            two_int_ptr_fn f;
            int major = 0, minor = 0;
            if (a && FN(two_int_ptr_fn, f, a)(&major, &minor) == 0)
                l->version = major * 1000L + minor * 10L; /* CUDA style */
        }
        keep(h);
    }
}

/* The driver: its version without initializing it (cuDriverGetVersion needs no cuInit). */
static void probe_driver(nnop__doctor *d)
{
    nnop__doc_lib *l;
    nnop__dl *h;
    if (d->n_lib >= NNOP__DOC_MAX_LIBS)
        return;
    l = new_lib(d, "cuda_driver");
#ifdef _WIN32
    copy(l->file, sizeof l->file, "nvcuda.dll");
#else
    copy(l->file, sizeof l->file, "libcuda.so.1");
#endif
    h = open_lib(d, l, NULL, NULL);
    if (h) {
        void *a = sym(h, "cuDriverGetVersion");
        int_ptr_fn f;
        int v = 0;
        if (a && FN(int_ptr_fn, f, a)(&v) == 0)
            l->version = v;
        keep(h);
    }
    if (!d->driver && l->version)
        d->driver = (int)l->version;
}

#ifdef _WIN32
#define CUDNN_GRAPH_FILE "cudnn_graph64_9.dll"
#else
#define CUDNN_GRAPH_FILE "libcudnn_graph.so.9"
#endif

/* path opened to see that it loads. *fresh: it was not in the process before, and is to be
 * closed again: a copy left loaded would answer the probe's next lookup by name (its soname
 * matches), so a second report (the size query's, then the real one) would no longer see a
 * broken libcudnn first on the search path. */
static nnop__dl *try_open(nnop__doctor *d, const char *path, char *err, size_t len, int *fresh)
{
    nnop__dl *h = nnop__dl_open(path, 1, NULL, 0);
    *fresh = h == NULL;
    if (h)
        return h;
    return nnop__doctor_before_load(d, path, err, len) ? NULL : nnop__dl_open(path, 0, err, len);
}

static void done_with(nnop__dl *h, int fresh)
{
    if (fresh)
        nnop__dl_close(h);
    else
        keep(h);
}

/* The libcudnn at path, with its graph library beside it as nnop's loader requires: 0 with
 * d->cudnn_used and how set, or -1 with why in d->cudnn_used_how. */
static int use_cudnn_at(nnop__doctor *d, const char *path, const char *how)
{
    char dir[NNOP__PATH_LEN], graph[NNOP__LIB_PATH_LEN], err[NNOP__DOC_TEXT];
    int fresh, graph_fresh;
    nnop__dl *h = try_open(d, path, err, sizeof err, &fresh), *g;
    if (!h) {
        copy(d->cudnn_used_how, sizeof d->cudnn_used_how, err);
        return -1;
    }
    if (nnop__dl_path(h, d->cudnn_used, sizeof d->cudnn_used) != 0)
        copy(d->cudnn_used, sizeof d->cudnn_used, path);
    nnop__dl_dir_of(d->cudnn_used, dir, sizeof dir);
    nnop__path_join(graph, sizeof graph, dir, CUDNN_GRAPH_FILE);
    g = try_open(d, graph, err, sizeof err, &graph_fresh);
    if (g)
        done_with(g, graph_fresh);
    done_with(h, fresh);
    if (!g) {
        setf(d->cudnn_used_how, sizeof d->cudnn_used_how,
             "%s loads, but not the graph library beside it: %s", d->cudnn_used, err);
        d->cudnn_used[0] = '\0';
        return -1;
    }
    copy(d->cudnn_used_how, sizeof d->cudnn_used_how, how);
    return 0;
}

/* By libs.c's rule (nnop__lib_places): NNOP_CUDNN_PATH's folder alone while it is set, else
 * the one found by name (the probe's, places[0]), else the one in the folder nnop was built
 * against; each only with its graph library beside it. Worked out here, not asked of libs.c:
 * that one loads once per process, so it could answer neither for a NNOP_CUDNN_PATH changed
 * since nor for a test's folders. (libs.c also wants its entry points in the file: any
 * cuDNN 9 has them.) */
void nnop__doctor_which_cudnn(nnop__doctor *d)
{
    const nnop__doc_lib *c = nnop__doctor_lib(d, "cudnn");
    char places[NNOP__LIB_PLACES][NNOP__LIB_PATH_LEN], err[NNOP__DOC_TEXT];
    int n;
    d->cudnn_used_known = 1;
    d->cudnn_used[0] = '\0';
    d->cudnn_used_how[0] = '\0';
    if (d->cudnn_dir_too_long) {
        copy(d->cudnn_used_how, sizeof d->cudnn_used_how, "NNOP_CUDNN_PATH is too long");
        return;
    }
    if (!c)
        return;
    if (c->loaded) {
        (void)use_cudnn_at(d, c->path,
                           d->cudnn_dir[0] ? "from NNOP_CUDNN_PATH"
                                           : "found by name: on the loader's search path, or "
                                             "already in this process");
        return;
    }
    n = nnop__lib_places(c->file, d->cudnn_dir, d->cudnn_build_dir, places);
    if (n < 2) {
        setf(d->cudnn_used_how, sizeof d->cudnn_used_how, "%s does not load", c->file);
        return;
    }
    if (use_cudnn_at(d, places[1],
                     "from the folder nnop was built against, as the one found by name does "
                     "not load") != 0) {
        copy(err, sizeof err, d->cudnn_used_how);
        setf(d->cudnn_used_how, sizeof d->cudnn_used_how,
             "%s does not load by name, nor from the folder nnop was built against: %s", c->file,
             err);
    }
}

void nnop__doctor_probe(nnop__doctor *d)
{
    probe_cudnn(d);
    probe_cuda_libs(d);
    probe_driver(d);
    if (d->with_cuda) /* a CPU-only build loads no cuDNN at all */
        nnop__doctor_which_cudnn(d);
}

/* ------------------------------------------------------------------ verdicts */

static nnop__doc_problem *problem(nnop__doctor *d)
{
    static nnop__doc_problem spare; /* past the table: written, never shown */
    if (d->n_problem >= NNOP__DOC_MAX_PROBLEMS) {
        d->n_problem = NNOP__DOC_MAX_PROBLEMS; /* the count stays non-zero */
        return &spare;
    }
    return &d->problem[d->n_problem++];
}

/* A note: shown with its fix like a problem, but the verdict stays ok. */
static nnop__doc_problem *note(nnop__doctor *d)
{
    static nnop__doc_problem spare;
    if (d->n_note >= NNOP__DOC_MAX_NOTES)
        return &spare;
    return &d->note[d->n_note++];
}

static void cudnn_version_text(long v, char *buf, size_t len)
{
    snprintf(buf, len, "%ld.%ld.%ld", v / 10000, (v % 10000) / 100, v % 100);
}

static void cuda_version_text(long v, char *buf, size_t len)
{
    snprintf(buf, len, "%ld.%ld", v / 1000, (v % 1000) / 10);
}

static const char *cudnn_status_name(int s)
{
    switch (s) {
    case 0:
        return "CUDNN_STATUS_SUCCESS";
    case DOC_CUDNN_SUBLIBRARY_VERSION_MISMATCH:
        return "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH";
    case DOC_CUDNN_SUBLIBRARY_LOADING_FAILED:
        return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
    default:
        return "cuDNN status";
    }
}

static const char *search_path_name(void)
{
#ifdef _WIN32
    return "PATH (or next to the program)";
#else
    return "LD_LIBRARY_PATH";
#endif
}

/* The start of a fix that puts folder (words: "the folder of cuDNN 9.14.0 or newer") where
 * nnop looks for cuDNN: while NNOP_CUDNN_PATH is set nnop looks in that folder alone
 * (src/cuda/device/libs.c), so the loader's search path cannot help then. */
static void cudnn_folder_fix(const nnop__doctor *d, char *buf, size_t len, const char *folder)
{
#ifdef _WIN32
    const char *var = "PATH",
               *place = "PATH (or next to the program, or set NNOP_CUDNN_PATH to it)";
#else
    const char *var = "LD_LIBRARY_PATH", *place = "LD_LIBRARY_PATH (or set NNOP_CUDNN_PATH to it)";
#endif
    if (d->cudnn_dir[0])
        setf(buf, len,
             "set NNOP_CUDNN_PATH to %s, or unset it (while it is set nnop looks in that folder "
             "alone: %s cannot help)",
             folder, var);
    else
        setf(buf, len, "put %s first on %s", folder, place);
}

/* 1 when none of cuDNN's libraries was found at all (not one that failed to load). */
static int no_cudnn_at_all(const nnop__doctor *d)
{
    int i, n = 0;
    for (i = 0; i < d->n_lib; i++) {
        const nnop__doc_lib *l = &d->lib[i];
        if (strncmp(l->key, "cudnn", 5) != 0)
            continue;
        if (l->loaded || !not_found(l->error))
            return 0;
        n++;
    }
    return n > 0;
}

/* "cuBLAS for CUDA 13 (the libcublas-13-* package, or pip install nvidia-cublas-cu13)" */
static void cuda_package(char *buf, size_t len, const char *name, const char *deb, const char *pip,
                         long major)
{
    setf(buf, len, "%s for CUDA %ld (the %s-%ld-* package, or pip install %s-cu%ld)", name, major,
         deb, major, pip, major);
}

/* "cuDNN 9 for CUDA 13 (the cudnn9-cuda-13 package, or pip install nvidia-cudnn-cu13)" */
static void cudnn_package(const nnop__doctor *d, char *buf, size_t len)
{
    int m = d->cudart_built ? (int)(d->cudart_built / 1000) : 12;
    setf(buf, len,
         "cuDNN %d for CUDA %d (the cudnn9-cuda-%d package, or pip install "
         "nvidia-cudnn-cu%d)",
         CUDNN_LIB_MAJOR, m, m, m);
}

/* NNOP_CUDNN_PATH too long: nnop loads no cuDNN, so nothing else about cuDNN is judged. */
static void judge_cudnn_dir_too_long(nnop__doctor *d)
{
    nnop__doc_problem *p = problem(d);
    setf(p->what, sizeof p->what,
         "NNOP_CUDNN_PATH is set but longer than %d bytes: nnop loads no cuDNN (while it is "
         "set, nnop looks in that folder alone)",
         NNOP__PATH_LEN - 1);
    setf(p->fix, sizeof p->fix,
         "set NNOP_CUDNN_PATH to a shorter path of the folder holding cuDNN (a symbolic link "
         "will do), or unset it");
}

/* 1 when a cuDNN library's error says NNOP_CUDNN_PATH's folder is a file. */
static int cudnn_dir_is_a_file(const nnop__doctor *d)
{
    const nnop__doc_lib *c = nnop__doctor_lib(d, "cudnn");
    return d->cudnn_dir[0] && c && strstr(c->error, "Not a directory");
}

/* One problem for a cuDNN not found at all, not one a library with the same fix. */
static void judge_cudnn_absent(nnop__doctor *d)
{
    nnop__doc_problem *p = problem(d);
    char pkg[160], where[NNOP__DOC_TEXT];
    if (cudnn_dir_is_a_file(d)) {
        setf(p->what, sizeof p->what, "NNOP_CUDNN_PATH=%s is a file, not a folder", d->cudnn_dir);
        setf(p->fix, sizeof p->fix,
             "set NNOP_CUDNN_PATH to the folder holding %s (or to that file), or unset it",
             nnop__doctor_lib(d, "cudnn")->file);
        return;
    }
    if (d->cudnn_dir[0])
        setf(p->what, sizeof p->what,
             "no cuDNN library is in NNOP_CUDNN_PATH=%s: none of the %d files listed above "
             "is there",
             d->cudnn_dir, N_CUDNN_LIBS);
    else
        setf(p->what, sizeof p->what,
             "cuDNN is not where the loader looks: none of its %d files listed above was found",
             N_CUDNN_LIBS);
    cudnn_package(d, pkg, sizeof pkg);
    cudnn_folder_fix(d, where, sizeof where, "the folder that holds all its cuDNN files");
    setf(p->fix, sizeof p->fix, "install %s and %s", pkg, where);
}

/* A load error that says the file is damaged: cut short, or it crashed a probe process. */
static int damaged(const char *err)
{
    return strstr(err, "truncated file") || strstr(err, "crashed a probe process");
}

/* The fix for a file there that the loader cannot use for a reason of its own, not a cuDNN
 * mismatch: 1 with fix set, else 0. */
static int load_error_fix(const nnop__doc_lib *l, char *fix, size_t len)
{
    if (strstr(l->error, "Permission denied"))
        setf(fix, len, "make %s readable by this user (chmod a+r), and its folders searchable",
             l->file);
    else if (strstr(l->error, "Is a directory"))
        setf(fix, len, "a folder stands where the library %s should be: remove it and reinstall",
             l->file);
    else if (strstr(l->error, "Too many levels of symbolic links"))
        setf(fix, len, "%s is a loop of symbolic links: point the link at the real file", l->file);
    else if (damaged(l->error))
        setf(fix, len, "the file is damaged (a cut download or copy): reinstall it");
    else
        return 0;
    return 1;
}

/* Each cuDNN library that did not load, with the fix for its kind of failure. */
static void judge_cudnn_files(nnop__doctor *d)
{
    const nnop__doc_lib *g = nnop__doctor_lib(d, "cudnn_graph");
    char pkg[160], where[NNOP__DOC_TEXT];
    int i, k;
    cudnn_package(d, pkg, sizeof pkg);
    for (i = 0; i < d->n_lib; i++) {
        const nnop__doc_lib *l = &d->lib[i];
        nnop__doc_problem *p;
        if (strncmp(l->key, "cudnn", 5) != 0 || l->loaded)
            continue;
        for (k = 0; k < N_CUDNN_LIBS && strcmp(cudnn_libs[k].key, l->key) != 0; k++)
            ;
        p = problem(d);
        setf(p->what, sizeof p->what, "%s (%s) cannot be loaded: %s", l->file,
             k < N_CUDNN_LIBS ? cudnn_libs[k].role : "cuDNN", l->error);
        if (not_found(l->error)) {
            cudnn_folder_fix(d, where, sizeof where, "the folder that holds all its cuDNN files");
            setf(p->fix, sizeof p->fix, "install %s and %s", pkg, where);
        } else if (g && !g->loaded && g != l &&
                   (strstr(l->error, g->file) != NULL ||
                    (damaged(g->error) && damaged(l->error)))) {
            setf(p->fix, sizeof p->fix,
                 "it needs %s, which did not load (the problem above): fix that one and this "
                 "one loads too",
                 g->file);
        } else if (load_error_fix(l, p->fix, sizeof p->fix)) {
            continue;
        } else {
            where[0] = '\0';
            if (d->cudnn_dir[0]) /* the copy in that folder is the one that counts */
                cudnn_folder_fix(d, where, sizeof where,
                                 "the folder of another, complete cuDNN installation");
            setf(p->fix, sizeof p->fix,
                 "the file exists but does not load: it is damaged or from another cuDNN "
                 "version than the rest; reinstall cuDNN so that every cuDNN library comes "
                 "from one installation, and remove the stray copy%s%s",
                 where[0] ? "; or " : "", where);
        }
    }
}

/* The loaded graph library's version against the build's headers, nnop's floor, the CUDA
 * nnop was built for. */
static void judge_cudnn_version(nnop__doctor *d, const nnop__doc_lib *g)
{
    char have[32], want[32], folder[96], where[NNOP__DOC_TEXT];
    nnop__doc_problem *p;
    cudnn_version_text(g->version, have, sizeof have);
    cudnn_version_text(d->cudnn_headers, want, sizeof want);
    if (d->cudnn_headers && g->version / 10000 != d->cudnn_headers / 10000) {
        p = problem(d);
        setf(p->what, sizeof p->what,
             "loaded cuDNN %s (%s) is of another major version than the cuDNN %s headers nnop "
             "was built with",
             have, g->path, want);
        setf(folder, sizeof folder, "the folder of a cuDNN %ld.x installation",
             d->cudnn_headers / 10000);
        cudnn_folder_fix(d, where, sizeof where, folder);
        setf(p->fix, sizeof p->fix, "%s, or rebuild nnop against the cuDNN that is installed",
             where);
    } else if (d->cudnn_headers && g->version < d->cudnn_headers) {
        p = problem(d);
        setf(p->what, sizeof p->what,
             "loaded cuDNN %s (%s) is older than the cuDNN %s headers nnop was built with", have,
             g->path, want);
        setf(folder, sizeof folder, "the folder of cuDNN %s or newer", want);
        cudnn_folder_fix(d, where, sizeof where, folder);
        setf(p->fix, sizeof p->fix, "%s, or rebuild nnop against cuDNN %s%s", where, have,
             d->cudnn_dir[0] ? ""
                             : "; another copy, such as PyTorch's, may be the one found first");
    }
    if (d->with_cuda && g->version < NNOP_CUDNN_MIN_VERSION) {
        p = problem(d);
        cudnn_version_text(NNOP_CUDNN_MIN_VERSION, want, sizeof want);
        setf(p->what, sizeof p->what,
             "loaded cuDNN %s is below %s, the oldest nnop's CUDA backend runs on", have, want);
        cudnn_folder_fix(d, where, sizeof where, "its folder");
        setf(p->fix, sizeof p->fix, "install cuDNN %s or newer and %s", want, where);
    }
    if (d->cudart_built && g->cudart && g->cudart / 1000 != d->cudart_built / 1000) {
        long m = d->cudart_built / 1000;
        p = problem(d);
        cuda_version_text(g->cudart, have, sizeof have);
        cuda_version_text(d->cudart_built, want, sizeof want);
        setf(p->what, sizeof p->what, "the loaded cuDNN was built for CUDA %s but nnop for CUDA %s",
             have, want);
        cudnn_folder_fix(d, where, sizeof where, "its folder");
        setf(p->fix, sizeof p->fix,
             "install the cuDNN build for CUDA %ld (cudnn9-cuda-%ld, or pip install "
             "nvidia-cudnn-cu%ld) and %s",
             m, m, m, where);
    }
}

/* Sub-libraries of another version than the graph library, or failing their own check. */
static void judge_cudnn_mixed(nnop__doctor *d, const nnop__doc_lib *g)
{
    char have[32], want[32], where[NNOP__DOC_TEXT];
    int i;
    cudnn_folder_fix(d, where, sizeof where, "the folder of one complete cuDNN installation");
    for (i = 0; i < d->n_lib; i++) {
        const nnop__doc_lib *l = &d->lib[i];
        nnop__doc_problem *p;
        if (strncmp(l->key, "cudnn", 5) != 0 || !l->loaded || l == g)
            continue;
        if (!l->version || !g->version || l->version == g->version)
            continue;
        p = problem(d);
        cudnn_version_text(l->version, have, sizeof have);
        cudnn_version_text(g->version, want, sizeof want);
        setf(p->what, sizeof p->what,
             "%s (%s) is cuDNN %s but %s (%s) is cuDNN %s: two installations are mixed", l->file,
             l->path, have, g->file, g->path, want);
        setf(p->fix, sizeof p->fix, "%s; remove or move the other copy of %s", where, l->file);
    }
    for (i = 0; i < d->n_lib; i++) {
        const nnop__doc_lib *l = &d->lib[i];
        nnop__doc_problem *p;
        if (strncmp(l->key, "cudnn", 5) != 0 || !l->loaded || l->check <= 0)
            continue;
        p = problem(d);
        setf(p->what, sizeof p->what, "%s (%s) reports %s (%d)", l->file, l->path,
             cudnn_status_name(l->check), l->check);
        setf(p->fix, sizeof p->fix,
             "the cuDNN libraries come from different versions: %s; remove the stray copies",
             where);
    }
}

/* The libraries may each load and still leave nnop without cuDNN (a libcudnn whose graph
 * library is elsewhere): said when nothing above explains it. */
static void judge_cudnn_used(nnop__doctor *d)
{
    nnop__doc_problem *p;
    char where[NNOP__DOC_TEXT];
    if (!d->cudnn_used_known || d->cudnn_used[0])
        return;
    p = problem(d);
    setf(p->what, sizeof p->what, "nnop itself loads no cuDNN (%s): the CPU backend runs",
         d->cudnn_used_how);
    cudnn_folder_fix(d, where, sizeof where,
                     "the folder of one complete cuDNN installation (libcudnn and its graph "
                     "library side by side)");
    setf(p->fix, sizeof p->fix, "%s", where);
}

static void judge_cudnn(nnop__doctor *d)
{
    const nnop__doc_lib *g = nnop__doctor_lib(d, "cudnn_graph");
    int before = d->n_problem;
    if (d->cudnn_dir_too_long) {
        judge_cudnn_dir_too_long(d);
        return;
    }
    if (no_cudnn_at_all(d)) {
        judge_cudnn_absent(d);
        return;
    }
    judge_cudnn_files(d);
    if (g && g->version) {
        judge_cudnn_version(d, g);
        judge_cudnn_mixed(d, g);
    }
    if (d->n_problem == before)
        judge_cudnn_used(d);
}

/* The runtime's "no driver" while a libcuda.so.1 loads: a broken driver library (one whose
 * kernel module is missing, or a stray copy first on the library path), not a machine
 * without a driver; an outside test put a fake one first on LD_LIBRARY_PATH. */
static void reconcile_driver(nnop__doctor *d)
{
    const nnop__doc_lib *drv = nnop__doctor_lib(d, "cuda_driver");
    if (d->gpu != NNOP__DOC_GPU_NONE || !drv || !drv->loaded ||
        !strstr(d->gpu_error, "cudaErrorInsufficientDriver"))
        return;
    d->gpu = NNOP__DOC_GPU_ERROR;
    setf(d->gpu_error, sizeof d->gpu_error,
         "%s loads, but the CUDA runtime cannot use it (cudaErrorInsufficientDriver): a driver "
         "library without its kernel module, or a stray copy first on the library path",
         drv->path);
}

static void judge_cuda(nnop__doctor *d)
{
    const nnop__doc_lib *lt = nnop__doctor_lib(d, "cublasLt");
    const nnop__doc_lib *rtc = nnop__doctor_lib(d, "nvrtc");
    char a[32], b[32], cublas[128], nvrtc[128];
    long cuda_major = d->cudart_built / 1000;
    cuda_package(cublas, sizeof cublas, "cuBLAS", "libcublas", "nvidia-cublas", cuda_major);
    cuda_package(nvrtc, sizeof nvrtc, "NVRTC", "cuda-nvrtc", "nvidia-cuda-nvrtc", cuda_major);
    if (lt && !lt->loaded && damaged(lt->error)) {
        /* not a note: nnop's loader (libs.c) would load it too, and the program die */
        nnop__doc_problem *p = problem(d);
        setf(p->what, sizeof p->what,
             "%s (cuBLASLt) is damaged: %s; a program that starts a GPU context loads it and "
             "would die the same way",
             lt->file, lt->error);
        setf(p->fix, sizeof p->fix, "reinstall %s, or remove the damaged copy from %s", cublas,
             search_path_name());
    } else if (lt && !lt->loaded) {
        /* a note, not a problem: without cuBLASLt nnop runs linear layers on its own kernel
         * (include/nnop/nnop.h, "Libraries"), nothing fails */
        nnop__doc_problem *p = note(d);
        setf(p->what, sizeof p->what,
             "%s (cuBLASLt) cannot be loaded: %s; linear layers run on nnop's own kernel "
             "instead, everything else is unaffected",
             lt->file, lt->error);
        setf(p->fix, sizeof p->fix, "to run them on cuBLASLt, install %s and put its folder on %s",
             cublas, search_path_name());
    } else if (lt && lt->version && d->cublas_built && lt->version < d->cublas_built) {
        nnop__doc_problem *p = problem(d);
        cudnn_version_text(lt->version, a, sizeof a);
        cudnn_version_text(d->cublas_built, b, sizeof b);
        setf(p->what, sizeof p->what,
             "loaded cuBLASLt %s (%s) is older than the cuBLAS %s headers nnop was built with", a,
             lt->path, b);
        setf(p->fix, sizeof p->fix, "put the folder of cuBLAS %s or newer first on %s", b,
             search_path_name());
    }
    if (rtc && !rtc->loaded) {
        nnop__doc_problem *p = problem(d);
        setf(p->what, sizeof p->what,
             "%s (NVRTC, needed by cuDNN's runtime-compiled engines) cannot be loaded: %s",
             rtc->file, rtc->error);
        setf(p->fix, sizeof p->fix, "install %s and put its folder on %s", nvrtc,
             search_path_name());
    }
    if (d->driver && d->cudart_loaded && d->driver < d->cudart_loaded) {
        nnop__doc_problem *p = problem(d);
        cuda_version_text(d->driver, a, sizeof a);
        cuda_version_text(d->cudart_loaded, b, sizeof b);
        setf(p->what, sizeof p->what,
             "the CUDA driver supports CUDA %s but the CUDA runtime is %s (the driver is "
             "older than the runtime: no GPU can be used)",
             a, b);
        setf(p->fix, sizeof p->fix,
             "update the NVIDIA driver to one for CUDA %s or newer, or build nnop with a CUDA "
             "toolkit no newer than %s",
             b, a);
    } else if (d->gpu == NNOP__DOC_GPU_OLD_DRIVER) {
        nnop__doc_problem *p = problem(d);
        setf(p->what, sizeof p->what, "the CUDA driver is too old for the runtime: %s",
             d->gpu_error);
        setf(p->fix, sizeof p->fix, "update the NVIDIA driver");
    }
    reconcile_driver(d);
    if (d->gpu == NNOP__DOC_GPU_ERROR) {
        nnop__doc_problem *p = problem(d);
        setf(p->what, sizeof p->what, "the CUDA devices cannot be listed: %s", d->gpu_error);
        setf(p->fix, sizeof p->fix,
             "check the NVIDIA driver installation (nvidia-smi) and the device permissions");
    }
}

void nnop__doctor_judge(nnop__doctor *d)
{
    d->n_problem = 0;
    d->n_note = 0;
    /* a CPU-only build uses none of these: they are reported, never judged; nor are the
     * libraries when no probe process reported on them */
    if (d->with_cuda && !d->probe_failure[0]) {
        judge_cudnn(d);
        judge_cuda(d);
    }
    if (d->probe_failure[0]) {
        nnop__doc_problem *p = problem(d);
        setf(p->what, sizeof p->what, "%s: the libraries above were not all checked",
             d->probe_failure);
        setf(p->fix, sizeof p->fix,
             "a library the probe loads is damaged or hangs: reinstall cuDNN and CUDA, or "
             "run with NNOP_CUDNN_PATH set to a known good cuDNN folder to narrow it down");
    }
    if (d->require_gpu && d->gpu != NNOP__DOC_GPU_OK) {
        nnop__doc_problem *p = problem(d);
        setf(p->what, sizeof p->what, "no usable GPU (--require-gpu): %s",
             !d->with_cuda     ? "this nnop was built without CUDA"
             : d->gpu_error[0] ? d->gpu_error
                               : "no CUDA device");
        setf(p->fix, sizeof p->fix, "%s",
             !d->with_cuda ? "rebuild nnop with CUDA (NNOP_WITH_CUDA=ON, CUDA 12+ and cuDNN 9)"
                           : "run on a machine with an NVIDIA GPU and its driver "
                             "(nvidia-smi lists it)");
    }
}
