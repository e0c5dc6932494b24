/* op_test_util.h: running a one-op graph from logical-order float data, for the op tests of
 * issue 15 (test_ops_mul, _norm, _concat, _resize, _deconv). Every operand is a graph input;
 * data go through nnop_test_pack/unpack, so any dtype and layout is exercised. */
#ifndef NNOP_OP_TEST_UTIL_H
#define NNOP_OP_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#define OPT_MAX_IN 33

/* Adds the op under test to g; in[] are the graph inputs in order. */
typedef nnop_value (*opt_build_fn)(nnop_graph *g, const nnop_value *in, const void *arg);

/* Build the graph, compile and run it on ctx. d[i] and x[i] (logical order, NULL = skip the
 * input: a placeholder nnop_none() is passed to build) are the inputs. On success y (capacity
 * cap elements) gets the output in logical order and *yd its descriptor. Returns the first
 * failing status (builder, compile or execute). */
static inline nnop_status opt_run(nnop_context *ctx, int n_in, const nnop_tensor_desc *d,
                                  const float *const *x, opt_build_fn build, const void *arg,
                                  float *y, int64_t cap, nnop_tensor_desc *yd)
{
    nnop_graph *g = NULL;
    nnop_value vin[OPT_MAX_IN], vy;
    void *buf[OPT_MAX_IN];
    const void *in[OPT_MAX_IN];
    void *out[1], *yb = NULL;
    nnop_status st;
    int i, k = 0;
    assert_true(n_in <= OPT_MAX_IN);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    for (i = 0; i < n_in; i++) {
        buf[i] = NULL;
        if (!x[i]) {
            vin[i] = nnop_none();
            continue;
        }
        buf[i] = malloc(nnop_tensor_bytes(&d[i]));
        assert_non_null(buf[i]);
        nnop_test_pack(&d[i], x[i], buf[i]);
        vin[i] = nnop_input(g, NULL, &d[i]);
        in[k++] = buf[i];
    }
    vy = build(g, vin, arg);
    st = nnop_graph_status(g);
    if (st == NNOP_OK) {
        assert_int_equal(nnop_value_desc(g, vy, yd), NNOP_OK);
        assert_true(nnop_tensor_elements(yd) <= cap);
        assert_int_equal(nnop_output(g, vy, "y"), NNOP_OK);
        yb = malloc(nnop_tensor_bytes(yd));
        assert_non_null(yb);
        nnop_test_poison(yb, nnop_tensor_bytes(yd));
        out[0] = yb;
        st = nnop_test_run_graph(g, NULL, in, out);
        if (st == NNOP_OK)
            nnop_test_unpack(yd, yb, y);
    }
    nnop_graph_destroy(g);
    for (i = 0; i < n_in; i++)
        free(buf[i]);
    free(yb);
    return st;
}

/* Random logical data exactly representable in t, in [lo, hi). */
static inline void opt_fill(nnop_dtype t, float *x, int64_t n, uint64_t seed, float lo, float hi)
{
    void *tmp = malloc((size_t)n * 4 + 4);
    assert_non_null(tmp);
    nnop_test_fill(t, tmp, x, n, seed, lo, hi);
    free(tmp);
}

/* Values rounded to t (what an output of dtype t holds), in place. */
static inline void opt_round(nnop_dtype t, float *x, int64_t n)
{
    void *tmp = malloc((size_t)n * 4 + 4);
    assert_non_null(tmp);
    assert_int_equal(nnop_convert(NNOP_F32, x, t, tmp, n), NNOP_OK);
    assert_int_equal(nnop_convert(t, tmp, NNOP_F32, x, n), NNOP_OK);
    free(tmp);
}

/* |got - want| <= tol * (1 + |want|) everywhere (NaN fails); names the first mismatches. */
static inline void opt_assert_close(const float *got, const double *want, int64_t n, double tol,
                                    const char *what)
{
    int64_t i, bad = 0;
    for (i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]);
        if (!(e <= tol * (1.0 + fabs(want[i])))) {
            if (bad < 5)
                print_error("%s: element %lld: got %.9g, want %.9g\n", what, (long long)i,
                            (double)got[i], want[i]);
            bad++;
        }
    }
    if (bad)
        fail_msg("%s: %lld of %lld elements differ", what, (long long)bad, (long long)n);
}

/* The context's last error is exactly msg. */
static inline void opt_assert_error(nnop_context *ctx, const char *msg)
{
    const char *got = nnop_context_last_error(ctx);
    if (strcmp(got, msg) != 0)
        fail_msg("last error\n  \"%s\"\nwant\n  \"%s\"", got, msg);
}

/* Tolerance of an output of dtype t against a double reference: its rounding, a bit more. */
static inline double opt_tol(nnop_dtype t)
{
    return t == NNOP_F32 ? 2e-6 : t == NNOP_F16 ? 1e-3 : 8e-3;
}

/* The three dtypes and two layouts, for loops: i = 0..2, 0..1. */
static inline nnop_dtype opt_dtype(int i)
{
    return i == 0 ? NNOP_F32 : i == 1 ? NNOP_F16 : NNOP_BF16;
}

static inline nnop_layout opt_layout(int i)
{
    return i == 0 ? NNOP_NCHW : NNOP_NHWC;
}

#endif /* NNOP_OP_TEST_UTIL_H */
