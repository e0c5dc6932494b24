/* doctor.h: the installation report behind nnop_diagnose and tools/nnop-doctor. Facts are
 * gathered in steps (the build's, the CUDA half's, the libraries probed with the platform
 * loader), judged into problems with their fix in words, and written as text or JSON. Tests
 * fill the build's facts themselves and point NNOP_CUDNN_PATH at fake library folders. */
#ifndef NNOP_DOCTOR_H
#define NNOP_DOCTOR_H

#include "internal.h"
#include "platform/platform.h"

#define NNOP__DOC_MAX_LIBS     12
#define NNOP__DOC_MAX_PROBLEMS 32
#define NNOP__DOC_MAX_NOTES    8
#define NNOP__DOC_TEXT         640

/* One shared library looked for. */
typedef struct nnop__doc_lib {
    const char *key; /* "cudnn", "cudnn_graph", ..., "cublasLt", "nvrtc", "cuda_driver" */
    char file[96];   /* the file name looked for (libcudnn_graph.so.9, cudnn_graph64_9.dll) */
    int loaded;      /* 1: loaded, path is the file */
    char path[NNOP__LIB_PATH_LEN]; /* the file actually loaded */
    long version;                  /* MAJOR*10000 + MINOR*100 + PATCH; 0: unknown */
    long cudart; /* cuDNN graph: the CUDA runtime cuDNN was built for (CUDA style) */
    int check;   /* cuDNN sub-library's own cudnn*VersionCheck: -1 none, else status */
    char error[NNOP__DOC_TEXT]; /* the loader's own text when not loaded */
} nnop__doc_lib;

/* A problem (counted: the verdict fails) or a note (shown, not counted: something is lost
 * that nnop does without, such as cuBLASLt). */
typedef struct nnop__doc_problem {
    char what[NNOP__DOC_TEXT];
    char fix[NNOP__DOC_TEXT];
} nnop__doc_problem;

typedef enum nnop__doc_gpu {
    NNOP__DOC_GPU_UNKNOWN = 0, /* CPU-only build: not asked */
    NNOP__DOC_GPU_OK,          /* devices found */
    NNOP__DOC_GPU_NONE,        /* no device, or no driver: a machine without a GPU */
    NNOP__DOC_GPU_OLD_DRIVER,  /* cudaErrorInsufficientDriver with a driver installed */
    NNOP__DOC_GPU_ERROR        /* another CUDA error */
} nnop__doc_gpu;

typedef struct nnop__doctor {
    /* asked for */
    int require_gpu;                /* no usable GPU is a problem */
    char cudnn_dir[NNOP__PATH_LEN]; /* NNOP_CUDNN_PATH: probe cuDNN in this folder only; "" none */
    int cudnn_dir_too_long;         /* NNOP_CUDNN_PATH is set, too long to use: no cuDNN probed */
    char cudnn_build_dir[NNOP__PATH_LEN];    /* where nnop's loader looks last; "" none */
    char cublaslt_build_dir[NNOP__PATH_LEN]; /* where nnop's loader looks last; "" none */
    /* the build (nnop__cuda_doctor_facts; all 0 in a CPU-only build) */
    int with_cuda;
    long cudnn_headers; /* CUDNN_VERSION */
    long cudart_built;  /* CUDART_VERSION (CUDA style: 12080) */
    long cublas_built;  /* CUBLAS_VERSION */
    /* the run */
    int cudart_loaded; /* cudaRuntimeGetVersion, 0: unknown */
    int driver;        /* cudaDriverGetVersion or cuDriverGetVersion, 0: none installed */
    nnop__doc_gpu gpu;
    int n_devices;
    char gpu_error[256]; /* why there is none */
    char devices[1024];  /* one line per device */
    nnop__doc_lib lib[NNOP__DOC_MAX_LIBS];
    int n_lib;
    /* the libcudnn nnop itself loads (nnop__doctor_which_cudnn) */
    int cudnn_used_known;                /* 0: not worked out (CPU-only build, given facts) */
    char cudnn_used[NNOP__LIB_PATH_LEN]; /* its file; "": none, the CPU backend runs */
    char cudnn_used_how[NNOP__DOC_TEXT]; /* where it was found, or why there is none */
    /* an isolated probe (doctor_isolate.c): in a probe process, each library is named on
     * progress_fd before it loads (-1: not in one); one whose loading killed a probe process
     * is not loaded by the next, and reads as not loaded, with the signal */
    int progress_fd;
    int n_crashed;
    char crashed[NNOP__DOC_MAX_LIBS][NNOP__LIB_PATH_LEN];
    int crash_fate[NNOP__DOC_MAX_LIBS]; /* nnop__run_in_child's: a signal, or an exit status */
    char probe_failure[NNOP__DOC_TEXT]; /* why no probe process gave a report; "" none */
    nnop__doc_problem problem[NNOP__DOC_MAX_PROBLEMS];
    int n_problem;
    nnop__doc_problem note[NNOP__DOC_MAX_NOTES];
    int n_note;
} nnop__doctor;

/* Defaults, the environment (NNOP_CUDNN_PATH) and the build's cuDNN folder. */
void nnop__doctor_init(nnop__doctor *d, int require_gpu);
/* The CUDA half: built-against versions (nnop__cuda_doctor_build_facts, no CUDA call), then
 * runtime, driver, devices (cuda/device/doctor.c; no_cuda.c leaves the CPU-only defaults).
 * Calls no cuDNN function. */
void nnop__cuda_doctor_build_facts(nnop__doctor *d);
void nnop__cuda_doctor_facts(nnop__doctor *d);
/* Load each library with the platform loader (cuDNN and its sub-libraries, cuBLASLt, NVRTC,
 * the CUDA driver), noting the file, its version and the loader's error. A function is
 * called only in a library that loaded, never through libcudnn's own lazy loader. */
void nnop__doctor_probe(nnop__doctor *d);
/* Which libcudnn nnop's own loader (cuda/device/libs.c) takes, by its rules, from the probed
 * facts and the build's folder: called by nnop__doctor_probe in a CUDA build. */
void nnop__doctor_which_cudnn(nnop__doctor *d);
/* nnop__doctor_probe and the CUDA runtime facts in child processes, where nnop__fork_available
 * (POSIX; the caller probes in-process elsewhere): a damaged library that crashes the loader
 * (a file cut short that another one loads, bytes zeroed in the middle) kills a child, not
 * the caller, and is reported as not loaded, the next child probing the rest. */
void nnop__doctor_probe_isolated(nnop__doctor *d);
/* The index in d->crashed of the step named name, or -1. */
int nnop__doctor_crashed(const nnop__doctor *d, const char *name);
/* Before path (a library, or another step that may crash) runs in a probe: 1 (skip it, err
 * says why) when it killed an earlier probe process; else 0, with path first named on
 * progress_fd, so that if it kills this one the next knows what did. */
int nnop__doctor_before_load(nnop__doctor *d, const char *path, char *err, size_t len);
/* Turn the facts into problems (and notes) with their fix. */
void nnop__doctor_judge(nnop__doctor *d);
/* The report, as text or as a JSON object. */
void nnop__doctor_text(const nnop__doctor *d, nnop__text *t);
void nnop__doctor_json(const nnop__doctor *d, nnop__text *t);
/* The library named by key, NULL when not looked for. */
const nnop__doc_lib *nnop__doctor_lib(const nnop__doctor *d, const char *key);

#endif /* NNOP_DOCTOR_H */
