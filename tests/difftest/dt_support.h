/* dt_support.h: what the differential tester shares with the reproducers it writes (each
 * reproducer carries a verbatim copy of this file and dt_support.c, so that it needs nothing
 * but nnop.h): seeded data, moving logical (row-major N, C, H, W) floats to and from a
 * tensor's strides and dtype, the per-dtype comparison, and one run of a graph. */
#ifndef NNOP_DT_SUPPORT_H
#define NNOP_DT_SUPPORT_H

#include <stdint.h>

#include "nnop/nnop.h"

#define DTS_MAX_OUT 8

/* How far a result is from the reference: relative L2 and largest difference, both relative
 * to the reference's scale, and the elements whose NaN/Inf status differs. */
typedef struct dts_diff {
    double rel_l2, max_rel;
    int64_t nonfinite;
    int64_t worst; /* index of the worst element (the first non-finite mismatch if any) */
} dts_diff;

/* A graph input or constant: its shape (1-, 2- or 4-D) and the seed of its data. */
typedef struct dts_tensor {
    int ndim;
    int64_t dims[4];
    uint64_t seed;
    float scale;
    int positive;
    int special; /* > 0: every special-th element NaN, +inf, -inf in turn (dts_specials) */
} dts_tensor;

/* A graph and how to test it. build declares the inputs (in[i] for the i-th) and outputs. */
typedef struct dts_case dts_case;
struct dts_case {
    nnop_dtype dtype;
    nnop_layout layout;
    nnop_backend backend; /* the run under test */
    int fuse;
    nnop_status (*build)(nnop_graph *g, const dts_case *c);
    const dts_tensor *in;
    int n_in;
    const double *const *expected; /* per output, logical order; NULL = the CPU backend's */
    const void *user;
};

typedef enum dts_outcome { DTS_RAN, DTS_REFUSED, DTS_ERROR } dts_outcome;
typedef struct dts_result {
    dts_outcome outcome;
    nnop_status status;
    char message[600];
    char plan[1500]; /* nnop_plan_describe of the plan that ran */
    int n_out;
    float *out[DTS_MAX_OUT]; /* logical order */
    int64_t count[DTS_MAX_OUT];
} dts_result;

uint64_t dts_next(uint64_t *s);
void dts_fill(float *v, int64_t n, uint64_t seed, float scale, int positive);
/* Every every-th of v's n values (from the first) NaN, +inf and -inf in turn; none when
 * every <= 0. */
void dts_specials(float *v, int64_t n, int every);
int dts_pack(const nnop_tensor_desc *d, const float *logical, void *packed);
int dts_unpack(const nnop_tensor_desc *d, const void *packed, float *logical);
int dts_same_layout(const nnop_tensor_desc *got, const nnop_tensor_desc *want);
double dts_tolerance(nnop_dtype t);
void dts_compare(const float *got, const double *want, int64_t n, dts_diff *o);
/* The same with another scale floor (an rms below which the result is compared absolutely). */
void dts_compare_floor(const float *got, const double *want, int64_t n, double floor, dts_diff *o);
int dts_diff_ok(const dts_diff *d, double tol);
nnop_tensor_desc dts_desc(nnop_dtype t, nnop_layout l, int ndim, const int64_t *dims);
nnop_value dts_constant(nnop_graph *g, const dts_case *c, const dts_tensor *x);
nnop_value dts_input(nnop_graph *g, const dts_case *c, const dts_tensor *x);
/* Build, compile, execute on ctx with poisoned outputs, read back. fuse: 0 or 1 (the compile
 * option), plus DTS_CUDA_GRAPH for a plan replayed as a CUDA graph. */
#define DTS_CUDA_GRAPH 2
/* DTS_REBIND: execute first with one set of buffers, then with another (the inputs copied
 * anew, the outputs poisoned), and read the second: the rebinding path of a plan */
#define DTS_REBIND 4
void dts_run(nnop_context *ctx, const dts_case *c, int fuse, dts_result *r);
void dts_result_free(dts_result *r);
/* A reproducer's main: the run under test against the reference; 0 agree (or refused), 1
 * not, 77 no GPU (unless NNOP_REQUIRE_GPU=1). */
int dts_main(const dts_case *c);

#endif /* NNOP_DT_SUPPORT_H */
