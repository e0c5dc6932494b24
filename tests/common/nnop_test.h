/* nnop_test.h: shared test helpers: seeded random data, poisoning, per-dtype comparison, GPU
 * requirement. CMocka 1.1.5 needs the four standard headers before cmocka.h. */
#ifndef NNOP_TEST_H
#define NNOP_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "nnop/nnop.h"

/* Deterministic uniform floats in [lo, hi) from a seed (xorshift64*). */
typedef struct nnop_test_rng {
    uint64_t s;
} nnop_test_rng;
void nnop_test_rng_seed(nnop_test_rng *r, uint64_t seed);
float nnop_test_uniform(nnop_test_rng *r, float lo, float hi);

/* Fill n floats with seeded uniform values in [lo, hi). */
void nnop_test_fill_f32(float *x, int64_t n, uint64_t seed, float lo, float hi);
/* Fill n elements of dtype t with seeded values in [lo, hi), exactly representable in t;
 * also returns them as float32 in ref (may be NULL). */
void nnop_test_fill(nnop_dtype t, void *x, float *ref, int64_t n, uint64_t seed, float lo,
                    float hi);
/* Overwrite bytes with 0xFF (NaN for every float dtype), so unwritten outputs show. */
void nnop_test_poison(void *p, size_t bytes);

/* Compare n elements of dtype t in got against float32 want: |got - want| <= atol + rtol *
 * |want| and finite. Prints the first mismatches with what and seed; returns 1 if all match. */
int nnop_test_compare(nnop_dtype t, const void *got, const float *want, int64_t n, double rtol,
                      double atol, const char *what, uint64_t seed);
/* Fail unless every |got[i] - want[i]| <= tol (a NaN fails), naming the first bad element. */
void nnop_test_assert_floats(const float *got, const float *want, int64_t n, double tol);
/* Default tolerances per dtype (relative; absolute equal to the relative one). */
double nnop_test_rtol(nnop_dtype t);

/* 1 when a CUDA device is usable. */
int nnop_test_have_gpu(void);
/* In a GPU test: skip without a GPU, but fail when NNOP_REQUIRE_GPU=1 is set. */
#define NNOP_TEST_REQUIRE_GPU()                                                                    \
    do {                                                                                           \
        if (!nnop_test_have_gpu()) {                                                               \
            if (nnop_test_gpu_required())                                                          \
                fail_msg("%s", "NNOP_REQUIRE_GPU=1 but no usable CUDA device was found");          \
            nnop_test_note_skip();                                                                 \
            skip();                                                                                \
        }                                                                                          \
    } while (0)
int nnop_test_gpu_required(void);
/* Count one skipped case (NNOP_TEST_REQUIRE_GPU does, just before skip()). */
void nnop_test_note_skip(void);
/* The exit code of a test program: failed (CMocka's count of failed cases), or
 * NNOP_TEST_SKIPPED when none failed and every one of its n cases skipped, which CTest
 * reports as skipped (SKIP_RETURN_CODE in tests/CMakeLists.txt). */
#define NNOP_TEST_SKIPPED 77
int nnop_test_exit_code(int failed, size_t n);

/* A CPU-backend context (asserts success). */
nnop_context *nnop_test_cpu_context(void);

/* ---- appended: layout-independent data movement and graph running ---- */
#include <string.h> /* strstr in NNOP_TEST_ASSERT_ERROR */

/* 1 when every byte of p is still 0xFF (nnop_test_poison's pattern): nothing wrote there. */
int nnop_test_is_poisoned(const void *p, size_t bytes);
/* Store the elements of a tensor given in logical row-major order (N, C, H, W for 4-D) as
 * float32 into dst, laid out with d's strides and converted to d's dtype. */
void nnop_test_pack(const nnop_tensor_desc *d, const float *logical, void *dst);
/* The inverse of nnop_test_pack: read a tensor of d into logical row-major float32. */
void nnop_test_unpack(const nnop_tensor_desc *d, const void *src, float *logical);
/* Compile g (opts may be NULL), execute it once with in/out and destroy the plan. Returns the
 * first failing status (compile or execute). */
nnop_status nnop_test_run_graph(nnop_graph *g, const nnop_compile_options *opts,
                                const void *const *in, void *const *out);
/* A whole run on a context of its own: create it with o, build a graph with build(g, arg)
 * (which asserts nothing: a failure is the graph's sticky status), compile, execute once with
 * in/out, synchronize, destroy everything. Returns the first failing status; error (len
 * bytes) gets its message, "" on success. For tests that fail allocations in turn. */
typedef void (*nnop_test_build_fn)(nnop_graph *g, const void *arg);
nnop_status nnop_test_whole_run(const nnop_context_options *o, nnop_test_build_fn build,
                                const void *arg, const void *const *in, void *const *out,
                                char *error, size_t len);
/* Poison yb (a buffer for a tensor yd), run g once with inputs in and yb as its one output
 * (asserting success), and unpack yb into y (logical order, float32). */
void nnop_test_run_unpack(nnop_graph *g, const void *const *in, const nnop_tensor_desc *yd,
                          void *yb, float *y);
/* main() of a test of the examples' support code (cJSON) built without it: one test that
 * skips, or fails where NNOP_REQUIRE_GPU=1 (the GPU machine is set up to build it). */
int nnop_test_main_without_examples_support(void);
/* CMocka group setup and teardown: *state is a CPU-backend context (nnop_test_cpu_context). */
int nnop_test_setup_cpu_context(void **state);
int nnop_test_teardown_context(void **state);
/* The whole file at path, malloc'd (non-NULL even when empty) and NUL-terminated after its
 * *len bytes (text reads as a string); NULL when it cannot be opened or read (no assertion:
 * the fuzz corpus replay uses it too). */
unsigned char *nnop_test_read_file(const char *path, size_t *len);
/* Assert that the context's last error contains substr (prints the message otherwise). */
#define NNOP_TEST_ASSERT_ERROR(ctx, substr)                                                        \
    do {                                                                                           \
        const char *msg_ = nnop_context_last_error(ctx);                                           \
        if (!strstr(msg_, (substr)))                                                               \
            fail_msg("last error \"%s\" does not contain \"%s\"", msg_, (substr));                 \
    } while (0)

#endif /* NNOP_TEST_H */
