/* libs.c: cuDNN and cuBLASLt loaded at run time through the platform loader (libs.h). cuDNN
 * is libcudnn.so.9 / cudnn64_9.dll: from NNOP_CUDNN_PATH only when that is set, else as the
 * loader finds it, else from the folder nnop was built against. Its graph library is loaded
 * first from the same folder: libcudnn forwards every call to it lazily and aborts the
 * process when it cannot load it, so a missing one must be found here, not there. The doctor
 * repeats these rules (nnop__doctor_which_cudnn, src/doctor_probe.c): change both together. */
#define NNOP_LIBS_NO_MACROS 1

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuda/device/libs.h"
#include "internal.h"
#include "platform/platform.h"

#define LOAD_ERROR_LEN NNOP_ERROR_LEN

#ifndef NNOP_CUDNN_BUILD_DIR
#define NNOP_CUDNN_BUILD_DIR ""
#endif
#ifndef NNOP_CUBLASLT_BUILD_DIR
#define NNOP_CUBLASLT_BUILD_DIR ""
#endif

/* snprintf that truncates without a word (messages and paths longer than their buffers are
 * cut, never overflowed) */
static void say(char *buf, size_t len, const char *fmt, ...) NNOP_PRINTF(3, 4);
static void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* one symbol: its name and where its address goes in a table */
typedef struct lib_symbol {
    const char *name;
    size_t offset;
} lib_symbol;

/* ------------------------------------------------------------ stand-ins for a missing library */
static size_t dnn_no_version(void)
{
    return 0;
}
static const char *dnn_no_error_string(cudnnStatus_t s)
{
    (void)s;
    return "cuDNN is not loaded";
}
static void dnn_no_last_error(char *m, size_t n)
{
    if (m && n)
        say(m, n, "%s", nnop__cudnn_load_error());
}
static cudnnStatus_t dnn_no_create(cudnnHandle_t *h)
{
    (void)h;
    return CUDNN_STATUS_NOT_INITIALIZED;
}
static cudnnStatus_t dnn_no_destroy(cudnnHandle_t h)
{
    (void)h;
    return CUDNN_STATUS_NOT_INITIALIZED;
}
static cudnnStatus_t dnn_no_set_stream(cudnnHandle_t h, cudaStream_t s)
{
    (void)h, (void)s;
    return CUDNN_STATUS_NOT_INITIALIZED;
}
static cudnnStatus_t dnn_no_get_stream(cudnnHandle_t h, cudaStream_t *s)
{
    (void)h, (void)s;
    return CUDNN_STATUS_NOT_INITIALIZED;
}
static cudnnStatus_t dnn_no_create_desc(cudnnBackendDescriptorType_t t, cudnnBackendDescriptor_t *d)
{
    (void)t, (void)d;
    return CUDNN_STATUS_NOT_INITIALIZED;
}
static cudnnStatus_t dnn_no_desc(cudnnBackendDescriptor_t d)
{
    (void)d;
    return CUDNN_STATUS_NOT_INITIALIZED;
}
static cudnnStatus_t dnn_no_set_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                                     cudnnBackendAttributeType_t t, int64_t n, const void *v)
{
    (void)d, (void)a, (void)t, (void)n, (void)v;
    return CUDNN_STATUS_NOT_INITIALIZED;
}
static cudnnStatus_t dnn_no_get_attr(cudnnBackendDescriptor_t const d,
                                     cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t,
                                     int64_t r, int64_t *n, void *v)
{
    (void)d, (void)a, (void)t, (void)r, (void)n, (void)v;
    return CUDNN_STATUS_NOT_INITIALIZED;
}
static cudnnStatus_t dnn_no_execute(cudnnHandle_t h, cudnnBackendDescriptor_t p,
                                    cudnnBackendDescriptor_t v)
{
    (void)h, (void)p, (void)v;
    return CUDNN_STATUS_NOT_INITIALIZED;
}

static const nnop__cudnn_api dnn_missing = {
        dnn_no_version,    dnn_no_error_string, dnn_no_last_error,  dnn_no_create, dnn_no_destroy,
        dnn_no_set_stream, dnn_no_get_stream,   dnn_no_create_desc, dnn_no_desc,   dnn_no_desc,
        dnn_no_set_attr,   dnn_no_get_attr,     dnn_no_execute};

static cublasStatus_t lt_no_create(cublasLtHandle_t *h)
{
    (void)h;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_destroy(cublasLtHandle_t h)
{
    (void)h;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static const char *lt_no_status_name(cublasStatus_t s)
{
    (void)s;
    return "CUBLAS_STATUS_NOT_INITIALIZED (cuBLASLt is not loaded)";
}
static const char *lt_no_status_string(cublasStatus_t s)
{
    (void)s;
    return nnop__cublaslt_load_error();
}
static cublasStatus_t lt_no_matmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *al,
                                   const void *a, cublasLtMatrixLayout_t ad, const void *b,
                                   cublasLtMatrixLayout_t bd, const void *be, const void *c,
                                   cublasLtMatrixLayout_t cd, void *o, cublasLtMatrixLayout_t od,
                                   const cublasLtMatmulAlgo_t *al2, void *w, size_t wn,
                                   cudaStream_t s)
{
    (void)h, (void)d, (void)al, (void)a, (void)ad, (void)b, (void)bd, (void)be, (void)c;
    (void)cd, (void)o, (void)od, (void)al2, (void)w, (void)wn, (void)s;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_heuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                      cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                      cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t o,
                                      cublasLtMatmulPreference_t p, int n,
                                      cublasLtMatmulHeuristicResult_t r[], int *rn)
{
    (void)h, (void)d, (void)a, (void)b, (void)c, (void)o, (void)p, (void)n, (void)r, (void)rn;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_desc_create(cublasLtMatmulDesc_t *d, cublasComputeType_t c,
                                        cudaDataType_t t)
{
    (void)d, (void)c, (void)t;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_desc_destroy(cublasLtMatmulDesc_t d)
{
    (void)d;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_desc_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                     const void *v, size_t n)
{
    (void)d, (void)a, (void)v, (void)n;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_pref_create(cublasLtMatmulPreference_t *p)
{
    (void)p;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_pref_destroy(cublasLtMatmulPreference_t p)
{
    (void)p;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_pref_set(cublasLtMatmulPreference_t p,
                                     cublasLtMatmulPreferenceAttributes_t a, const void *v,
                                     size_t n)
{
    (void)p, (void)a, (void)v, (void)n;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_layout_create(cublasLtMatrixLayout_t *l, cudaDataType t, uint64_t r,
                                          uint64_t c, int64_t ld)
{
    (void)l, (void)t, (void)r, (void)c, (void)ld;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
static cublasStatus_t lt_no_layout_destroy(cublasLtMatrixLayout_t l)
{
    (void)l;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}

static const nnop__cublaslt_api lt_missing = {
        lt_no_create,        lt_no_destroy,       lt_no_status_name,  lt_no_status_string,
        lt_no_matmul,        lt_no_heuristic,     lt_no_desc_create,  lt_no_desc_destroy,
        lt_no_desc_set,      lt_no_pref_create,   lt_no_pref_destroy, lt_no_pref_set,
        lt_no_layout_create, lt_no_layout_destroy};

/* ------------------------------------------------------------ the symbols of each table */
static const lib_symbol dnn_symbols[] = {
        {"cudnnGetVersion", offsetof(nnop__cudnn_api, get_version)},
        {"cudnnGetErrorString", offsetof(nnop__cudnn_api, get_error_string)},
        {"cudnnGetLastErrorString", offsetof(nnop__cudnn_api, get_last_error_string)},
        {"cudnnCreate", offsetof(nnop__cudnn_api, create)},
        {"cudnnDestroy", offsetof(nnop__cudnn_api, destroy)},
        {"cudnnSetStream", offsetof(nnop__cudnn_api, set_stream)},
        {"cudnnGetStream", offsetof(nnop__cudnn_api, get_stream)},
        {"cudnnBackendCreateDescriptor", offsetof(nnop__cudnn_api, create_descriptor)},
        {"cudnnBackendDestroyDescriptor", offsetof(nnop__cudnn_api, destroy_descriptor)},
        {"cudnnBackendFinalize", offsetof(nnop__cudnn_api, finalize)},
        {"cudnnBackendSetAttribute", offsetof(nnop__cudnn_api, set_attribute)},
        {"cudnnBackendGetAttribute", offsetof(nnop__cudnn_api, get_attribute)},
        {"cudnnBackendExecute", offsetof(nnop__cudnn_api, execute)},
};
static const lib_symbol lt_symbols[] = {
        {"cublasLtCreate", offsetof(nnop__cublaslt_api, create)},
        {"cublasLtDestroy", offsetof(nnop__cublaslt_api, destroy)},
        {"cublasLtGetStatusName", offsetof(nnop__cublaslt_api, get_status_name)},
        {"cublasLtGetStatusString", offsetof(nnop__cublaslt_api, get_status_string)},
        {"cublasLtMatmul", offsetof(nnop__cublaslt_api, matmul)},
        {"cublasLtMatmulAlgoGetHeuristic", offsetof(nnop__cublaslt_api, algo_get_heuristic)},
        {"cublasLtMatmulDescCreate", offsetof(nnop__cublaslt_api, desc_create)},
        {"cublasLtMatmulDescDestroy", offsetof(nnop__cublaslt_api, desc_destroy)},
        {"cublasLtMatmulDescSetAttribute", offsetof(nnop__cublaslt_api, desc_set_attribute)},
        {"cublasLtMatmulPreferenceCreate", offsetof(nnop__cublaslt_api, preference_create)},
        {"cublasLtMatmulPreferenceDestroy", offsetof(nnop__cublaslt_api, preference_destroy)},
        {"cublasLtMatmulPreferenceSetAttribute",
         offsetof(nnop__cublaslt_api, preference_set_attribute)},
        {"cublasLtMatrixLayoutCreate", offsetof(nnop__cublaslt_api, layout_create)},
        {"cublasLtMatrixLayoutDestroy", offsetof(nnop__cublaslt_api, layout_destroy)},
};
#define N_SYMBOLS(a) (sizeof(a) / sizeof((a)[0]))

/* The headers' declarations fit the tables' fields (checked by the compiler, nothing runs:
 * sizeof does not evaluate, so no symbol of the libraries is referenced). */
static void check_declarations(void)
{
    nnop__cudnn_api d;
    nnop__cublaslt_api l;
    (void)sizeof(d.get_version = cudnnGetVersion);
    (void)sizeof(d.get_error_string = cudnnGetErrorString);
    (void)sizeof(d.get_last_error_string = cudnnGetLastErrorString);
    (void)sizeof(d.create = cudnnCreate);
    (void)sizeof(d.destroy = cudnnDestroy);
    (void)sizeof(d.set_stream = cudnnSetStream);
    (void)sizeof(d.get_stream = cudnnGetStream);
    (void)sizeof(d.create_descriptor = cudnnBackendCreateDescriptor);
    (void)sizeof(d.destroy_descriptor = cudnnBackendDestroyDescriptor);
    (void)sizeof(d.finalize = cudnnBackendFinalize);
    (void)sizeof(d.set_attribute = cudnnBackendSetAttribute);
    (void)sizeof(d.get_attribute = cudnnBackendGetAttribute);
    (void)sizeof(d.execute = cudnnBackendExecute);
    (void)sizeof(l.create = cublasLtCreate);
    (void)sizeof(l.destroy = cublasLtDestroy);
    (void)sizeof(l.get_status_name = cublasLtGetStatusName);
    (void)sizeof(l.get_status_string = cublasLtGetStatusString);
    (void)sizeof(l.matmul = cublasLtMatmul);
    (void)sizeof(l.algo_get_heuristic = cublasLtMatmulAlgoGetHeuristic);
    (void)sizeof(l.desc_create = cublasLtMatmulDescCreate);
    (void)sizeof(l.desc_destroy = cublasLtMatmulDescDestroy);
    (void)sizeof(l.desc_set_attribute = cublasLtMatmulDescSetAttribute);
    (void)sizeof(l.preference_create = cublasLtMatmulPreferenceCreate);
    (void)sizeof(l.preference_destroy = cublasLtMatmulPreferenceDestroy);
    (void)sizeof(l.preference_set_attribute = cublasLtMatmulPreferenceSetAttribute);
    (void)sizeof(l.layout_create = cublasLtMatrixLayoutCreate);
    (void)sizeof(l.layout_destroy = cublasLtMatrixLayoutDestroy);
}

/* ------------------------------------------------------------ loading */
typedef struct loaded_lib {
    char error[LOAD_ERROR_LEN];
    char path[NNOP__LIB_PATH_LEN];
} loaded_lib;

static nnop__cudnn_api dnn_api;
static nnop__cublaslt_api lt_api;
static loaded_lib dnn_lib, lt_lib;

/* Every symbol of the list from h into table; 0, or -1 naming the first missing one (the
 * caller then puts the stand-ins back, so a table is never half loaded). */
static int resolve(nnop__dl *h, const lib_symbol *syms, size_t n, void *table, loaded_lib *lib,
                   const char *file)
{
    size_t i;
    for (i = 0; i < n; i++) {
        void *addr = nnop__dl_sym(h, syms[i].name);
        if (!addr) {
            say(lib->error, sizeof lib->error, "%s has no symbol %s (not the expected library?)",
                lib->path[0] ? lib->path : file, syms[i].name);
            return -1;
        }
        memcpy((char *)table + syms[i].offset, &addr, sizeof addr); /* function pointer */
    }
    return 0;
}

/* file from the first of its places (nnop__lib_places: `only` alone when given, else by name,
 * else from fallback_dir) that loads; lib->path is the file loaded, lib->error why none was:
 * the first place's error, the one the user's setup explains. */
static nnop__dl *open_lib(const char *file, const char *only, const char *fallback_dir,
                          loaded_lib *lib)
{
    char places[NNOP__LIB_PLACES][NNOP__LIB_PATH_LEN], err[LOAD_ERROR_LEN];
    int n = nnop__lib_places(file, only, fallback_dir, places), i;
    nnop__dl *h = NULL;
    for (i = 0; i < n && !h; i++)
        h = nnop__dl_open(places[i], 0, i == 0 ? err : NULL, i == 0 ? sizeof err : 0);
    if (!h) {
        say(lib->error, sizeof lib->error, "%s", err);
        return NULL;
    }
    if (nnop__dl_path(h, lib->path, sizeof lib->path) != 0)
        say(lib->path, sizeof lib->path, "%s", places[i - 1]);
    return h;
}

#ifdef _WIN32
#define CUDNN_FILE             "cudnn64_9.dll"
#define CUDNN_GRAPH_FILE       "cudnn_graph64_9.dll"
#define CUDNN_PRECOMPILED_FILE "cudnn_engines_precompiled64_9.dll"
#else
#define CUDNN_FILE             "libcudnn.so.9"
#define CUDNN_GRAPH_FILE       "libcudnn_graph.so.9"
#define CUDNN_PRECOMPILED_FILE "libcudnn_engines_precompiled.so.9"
#endif

static char precompiled_missing[NNOP__LIB_PATH_LEN];

/* Whether cuDNN's precompiled engines are in dir: an installation of the runtime-compiled
 * engines alone (cuDNN's "JIT" configuration, a subset) runs every graph that an NVRTC engine
 * takes, and a precompiled-only compile there fails; its message says why (engine.c). */
static void note_precompiled(const char *dir)
{
    char path[NNOP__LIB_PATH_LEN];
    FILE *f;
    nnop__path_join(path, sizeof path, dir, CUDNN_PRECOMPILED_FILE);
    f = fopen(path, "rb");
    if (f)
        fclose(f);
    else
        say(precompiled_missing, sizeof precompiled_missing, "%s", path);
}

/* cuDNN loads its other libraries from its own folder when a call first needs them; a copy
 * cut short there would kill the program then (SIGBUS), so each is checked now: 1, with
 * dnn_lib.error saying which, when one is cut. */
static int sub_library_cut(const char *dir)
{
    /* the ELF files of Linux (nnop__dl_file_cut checks nothing elsewhere) */
    static const char *const subs[] = {"libcudnn_engines_precompiled.so.9",
                                       "libcudnn_engines_runtime_compiled.so.9",
                                       "libcudnn_heuristic.so.9",
                                       "libcudnn_ops.so.9",
                                       "libcudnn_cnn.so.9",
                                       "libcudnn_adv.so.9"};
    char path[NNOP__LIB_PATH_LEN], why[LOAD_ERROR_LEN];
    size_t i;
    for (i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        nnop__path_join(path, sizeof path, dir, subs[i]);
        if (nnop__dl_file_cut(path, why, sizeof why)) {
            say(dnn_lib.error, sizeof dnn_lib.error,
                "cuDNN could not be loaded: %s (cuDNN would load it at its first use, and the "
                "program would die of SIGBUS; reinstall cuDNN or set NNOP_CUDNN_PATH)",
                why);
            return 1;
        }
    }
    return 0;
}

static void load_cudnn(void)
{
    char only[NNOP__PATH_LEN], dir[NNOP__PATH_LEN], graph[NNOP__LIB_PATH_LEN], err[LOAD_ERROR_LEN];
    nnop__dl *h, *g;
    dnn_api = dnn_missing;
    check_declarations();
    if (nnop__env_lib_dir("NNOP_CUDNN_PATH", only, sizeof only) == NNOP__ENV_TOO_LONG) {
        /* searching elsewhere would load a cuDNN the user did not name */
        say(dnn_lib.error, sizeof dnn_lib.error,
            "cuDNN could not be loaded: NNOP_CUDNN_PATH is longer than %d bytes; set it to a "
            "shorter path of the folder holding %s (a symbolic link will do)",
            NNOP__PATH_LEN - 1, CUDNN_FILE);
        return;
    }
    h = open_lib(CUDNN_FILE, only, NNOP_CUDNN_BUILD_DIR, &dnn_lib);
    if (!h) {
        say(err, sizeof err, "%s", dnn_lib.error);
        say(dnn_lib.error, sizeof dnn_lib.error,
            "cuDNN could not be loaded: %s; install cuDNN 9 (>= %d.%d) or set "
            "NNOP_CUDNN_PATH to the folder holding %s",
            err, NNOP_CUDNN_MIN_VERSION / 10000, NNOP_CUDNN_MIN_VERSION / 100 % 100, CUDNN_FILE);
        return;
    }
    nnop__dl_dir_of(dnn_lib.path, dir, sizeof dir);
    nnop__path_join(graph, sizeof graph, dir, CUDNN_GRAPH_FILE);
    g = nnop__dl_open(graph, 0, err, sizeof err);
    if (!g) {
        say(dnn_lib.error, sizeof dnn_lib.error,
            "cuDNN could not be loaded: %s loaded, but its graph library did not: %s (every "
            "cuDNN call needs it; reinstall cuDNN or set NNOP_CUDNN_PATH)",
            dnn_lib.path, err);
        dnn_lib.path[0] = '\0';
        return;
    }
    (void)g;
    if (sub_library_cut(dir)) {
        dnn_lib.path[0] = '\0';
        return;
    }
    if (resolve(h, dnn_symbols, N_SYMBOLS(dnn_symbols), &dnn_api, &dnn_lib, CUDNN_FILE) != 0) {
        dnn_api = dnn_missing;
        dnn_lib.path[0] = '\0';
    } else {
        note_precompiled(dir);
    }
    /* loaded libraries stay loaded: cuDNN's are C++ libraries (see doctor_probe.c) */
}

static void load_cublaslt(void)
{
    char file[64];
    nnop__dl *h;
    lt_api = lt_missing;
#ifdef _WIN32
    say(file, sizeof file, "cublasLt64_%d.dll", CUDART_VERSION / 1000);
#else
    say(file, sizeof file, "libcublasLt.so.%d", CUDART_VERSION / 1000);
#endif
    h = open_lib(file, NULL, NNOP_CUBLASLT_BUILD_DIR, &lt_lib);
    if (!h) {
        char e[LOAD_ERROR_LEN];
        say(e, sizeof e, "%s", lt_lib.error);
        say(lt_lib.error, sizeof lt_lib.error,
            "cuBLASLt could not be loaded: %s (it comes with the CUDA toolkit %d)", e,
            CUDART_VERSION / 1000);
        return;
    }
    if (resolve(h, lt_symbols, N_SYMBOLS(lt_symbols), &lt_api, &lt_lib, file) != 0) {
        lt_api = lt_missing;
        lt_lib.path[0] = '\0';
    }
}

const nnop__cudnn_api *nnop__cudnn(void)
{
    nnop__once(NNOP__ONCE_CUDNN, load_cudnn);
    return &dnn_api;
}

const nnop__cublaslt_api *nnop__cublaslt(void)
{
    nnop__once(NNOP__ONCE_CUBLASLT, load_cublaslt);
    return &lt_api;
}

const char *nnop__cudnn_load_error(void)
{
    (void)nnop__cudnn();
    return dnn_lib.error;
}

const char *nnop__cublaslt_load_error(void)
{
    (void)nnop__cublaslt();
    return lt_lib.error;
}

const char *nnop__cudnn_loaded_path(void)
{
    (void)nnop__cudnn();
    return dnn_lib.path;
}

const char *nnop__cudnn_precompiled_missing(void)
{
    (void)nnop__cudnn();
    return precompiled_missing;
}
