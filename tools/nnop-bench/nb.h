/* nb.h: nnop-bench internals shared by the tool (main.c) and its tests: the problem
 * descriptor, problem instances (seeded data, graph building, the naive float64 reference),
 * measurement, and the result writers. Public nnop API only. */
#ifndef NNOP_BENCH_NB_H
#define NNOP_BENCH_NB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* printf-style checking of the tool's formatting helpers */
#if defined(__MINGW32__)
#define NB_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__) || defined(__clang__)
#define NB_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define NB_PRINTF(fmt, args)
#endif

#include "nnop/nnop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- descriptors */
typedef enum nb_op {
    NB_OP_CONV = 0,
    NB_OP_POOL,
    NB_OP_GAP,
    NB_OP_LINEAR,
    NB_OP_SOFTMAX,
    NB_OP_FLATTEN,
    NB_OP_ELTWISE,
    NB_OP_DECONV, /* transposed conv */
    NB_OP_NORM,   /* layer norm over C or C,H,W, group norm, RMS norm */
    NB_OP_RESIZE, /* nearest or bilinear */
    NB_OP_COUNT
} nb_op;

typedef enum nb_post_kind {
    NB_POST_BIAS = 0,
    NB_POST_BN,
    NB_POST_ADD,
    NB_POST_ACT,
    NB_POST_CLAMP,
    NB_POST_MUL /* by a second input of N,C,1,1 (squeeze-excitation) */
} nb_post_kind;

typedef enum nb_norm_kind {
    NB_NORM_LAYER = 0,
    NB_NORM_LAYER_CHW,
    NB_NORM_GROUP,
    NB_NORM_RMS
} nb_norm_kind;

typedef struct nb_post {
    nb_post_kind kind;
    nnop_act_kind act; /* NB_POST_ACT */
    float a, b;        /* act alpha; clamp lo, hi */
} nb_post;

#define NB_MAX_POST 8
#define NB_NAME_LEN 64

typedef struct nb_problem {
    nb_op op;
    int64_t n, c, h, w, k, r, s; /* linear: x n x c, w k x c; pool: window r x s */
    int four_d;                  /* softmax: h (and w) given */
    int64_t pad[2], stride[2], dil[2], groups;
    nnop_pool_kind pool;
    int incpad;
    int64_t out_pad[2]; /* deconv */
    nb_norm_kind norm;  /* norm (groups: g<n>) */
    float eps;
    nnop_resize_mode resize; /* resize: size (0, 0: by scale) or scale */
    int align;
    int64_t size[2];
    double scale[2];
    nnop_dtype dt;
    nnop_layout layout;
    int npost;
    nb_post post[NB_MAX_POST];
    char name[NB_NAME_LEN];
} nb_problem;

/* Parse one descriptor ("conv n32c64h56w56k64r3s3 p1 st1 dl1 g1 dt=f16 layout=nhwc
 * post=bias,bn,add,relu"). Returns 0, or -1 with the reason in err. */
int nb_parse(const char *text, nb_problem *p, char *err, size_t err_len);
/* The canonical descriptor of p (parses back to p). */
void nb_format(const nb_problem *p, char *buf, size_t len);
const char *nb_op_name(nb_op op);
const char *nb_dtype_name(nnop_dtype t);
const char *nb_layout_name(nnop_layout l);
int nb_parse_dtype(const char *s, nnop_dtype *t);
int nb_parse_layout(const char *s, nnop_layout *l);

/* A problem file: one descriptor a line, '#' starts a comment, blank lines skipped. Returns
 * the number of problems (*out malloc'ed) or -1 with "file:line: reason" in err. */
int nb_parse_file(const char *path, nb_problem **out, char *err, size_t err_len);

/* Output height (i 0) or width (i 1) of a deconv or resize problem. */
int64_t nb_deconv_out(const nb_problem *p, int i);
int64_t nb_resize_out(const nb_problem *p, int i);
/* Floating-point operations and minimal bytes moved (inputs, constants, output) of p. */
double nb_problem_flops(const nb_problem *p);
double nb_problem_bytes(const nb_problem *p);

/* ---------------------------------------------------------------- instances */
#define NB_MAX_TENSORS (3 + 4 * NB_MAX_POST)

/* Host data of a problem, made on the first graph build from a seed and reused by later
 * builds (another backend, another policy), so every run sees the same numbers. */
typedef struct nb_instance {
    nb_problem p;
    uint64_t seed;
    nnop_tensor_desc desc[NB_MAX_TENSORS];
    void *host[NB_MAX_TENSORS]; /* in desc's dtype and strides; NULL = unused */
    int input_slot[1 + NB_MAX_POST];
    int n_inputs;
} nb_instance;

void nb_instance_init(nb_instance *in, const nb_problem *p, uint64_t seed);
void nb_instance_free(nb_instance *in);
/* Build the problem's graph on ctx (one output). Returns a status with the message in err. */
nnop_status nb_instance_graph(nb_instance *in, nnop_context *ctx, nnop_graph **out, char *err,
                              size_t err_len);
/* The float64 result of the problem in logical row-major order (N, C, H, W), from the
 * instance's data (built first); *count elements, malloc'ed. */
double *nb_reference(const nb_instance *in, int64_t *count);
/* Read a tensor of d (host memory) into logical row-major float64 (malloc'ed). */
double *nb_to_logical(const nnop_tensor_desc *d, const void *data);

/* Compare got with ref: per element |got - ref| <= tol * (|ref| + rms(ref)); err is the
 * largest |got - ref| / (|ref| + rms(ref)) (infinity for a NaN). Returns 1 when it passes. */
int nb_compare(const double *got, const double *ref, int64_t n, double tol, double *err);
/* Check tolerance of a dtype. */
double nb_tolerance(nnop_dtype t);

/* ---------------------------------------------------------------- results */
typedef struct nb_result {
    char name[NB_NAME_LEN];
    char desc[256];
    char kind[16];    /* "problem", "net", "peak", "engines", "devices", "serve" */
    char backend[8];  /* "cpu", "cuda" */
    char device[128]; /* device name */
    int device_id;
    char policy[64]; /* a policy name; for engine rows, the policies that take it */
    int cuda_graph;
    int64_t batch;
    double compile_ms; /* < 0: not measured */
    int check;         /* -1 not run, 0 mismatch, 1 pass, 2 error */
    char check_ref[16];
    double check_err, check_tol;
    double gpu_us, host_us; /* per call; < 0: not measured */
    double flops, bytes;
    double tflops, gbs, frac_flops, frac_bw, roofline; /* < 0: not measured */
    double images_s, efficiency;                       /* < 0: not measured */
    double lat_p99_us, mem_mib; /* --serve: 99th percentile request latency (host_us: the
                                 * median), memory of plans and contexts; < 0: not measured */
    int partitions;
    char status[32]; /* "ok" or nnop_status_string */
    char note[512];
    char *plan; /* nnop_plan_describe (malloc'ed, may be NULL) */
} nb_result;

void nb_result_init(nb_result *r);

typedef struct nb_report {
    nb_result *r;
    int n, cap;
    /* measured peaks of this run (< 0: not measured) */
    double peak_gbs, peak_tflops;
    char peak_dtype[8];
    char backend[8], device[128], version[32];
    int warmup, reps, calls;
} nb_report;

void nb_report_init(nb_report *rep);
nb_result *nb_report_add(nb_report *rep);
void nb_report_free(nb_report *rep);
/* r's throughput, images/s and fractions of rep's peaks from its time (GPU, else host), its
 * flops, bytes and batch; what it cannot derive stays as it was. */
void nb_result_derive(nb_result *r, const nb_report *rep);
void nb_write_table(const nb_report *rep, FILE *f);
void nb_write_json(const nb_report *rep, FILE *f);
void nb_write_csv(const nb_report *rep, FILE *f);
/* nb_engines.c: every cuDNN engine of plan (nnop_plan_engines) as rows of kind "engine" (the
 * problem's description, device, flops and bytes from base; the times and what follows from
 * them each engine's own), and a table of them on stdout unless quiet; -1 and err on a
 * failure. */
int nb_engines_survey(nb_report *rep, const nb_result *base, nnop_plan *plan, int quiet, char *err,
                      size_t errlen);
/* JSON string escaping into f (with the quotes). */
void nb_json_string(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_BENCH_NB_H */
