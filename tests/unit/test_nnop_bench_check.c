/* test_nnop_bench_check.c: nnop-bench's --check on the CPU backend: problems of every op pass
 * against the naive float64 reference, the CPU backend as a reference agrees, and a wrong
 * answer is caught. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "nb.h"
#include "nb_run.h"

static const char *const problems[] = {
        "conv n2c8h9w9k8r3 p1 post=bias,relu",
        "conv n2c8h8w8k16r1 st2 dt=f16 layout=nhwc post=bias,bn,add,relu",
        "conv n1c8h10w7k8r3s2 p1x0 dl2 g2 dt=bf16 post=bn,silu",
        "conv n1c4h6w6k4r3 p1 g4 layout=nhwc post=clamp:-0.5:0.5",
        "pool n2c4h9w9r3 max st2 p1",
        "pool n2c4h8w8r2 avg st2 dt=f16 layout=nhwc",
        "pool n1c3h7w7r3 avg st1 p1 incpad",
        "gap n2c16h7w7",
        "gap n2c8h5w5 dt=f16 layout=nhwc",
        "linear n4c64k10 post=bias,relu",
        "linear n3c32k16 dt=f16 post=bias,gelu",
        "linear n2c16k8 dt=bf16 post=tanh",
        "softmax n4c10",
        "softmax n2c5h3w3 dt=f16 layout=nhwc",
        "flatten n2c3h4w4 layout=nhwc post=relu",
        "eltwise n2c8h4w4 post=bias,bn,add,leaky_relu:0.1",
        "eltwise n2c4h3w3 dt=f16 post=sigmoid,elu:0.5,relu6,gelu_tanh",
};

static void check_one(nb_env *e, nb_env *ref, const char *text, double tol, int want)
{
    nb_problem p;
    nb_instance in;
    nb_work w;
    nb_result r;
    char err[512];
    if (nb_parse(text, &p, err, sizeof err) != 0)
        fail_msg("%s: %s", text, err);
    nb_instance_init(&in, &p, 3);
    memset(&w, 0, sizeof w);
    w.inst = &in;
    w.seed = 3;
    nb_result_init(&r);
    nb_check(e, ref, &w, 0, tol, &r);
    if (r.check != want)
        fail_msg("%s: check %d (want %d), error %g, tolerance %g, %s", text, r.check, want,
                 r.check_err, r.check_tol, r.note);
    if (want == 2)
        assert_true(r.note[0] != '\0'); /* nnop's reason */
    else
        assert_string_equal(r.check_ref, ref ? "cpu-backend" : "naive-f64");
    nb_instance_free(&in);
}

static void test_every_op_against_naive(void **state)
{
    nb_env e;
    char err[256];
    size_t i;
    (void)state;
    assert_int_equal(nb_env_open(&e, NNOP_BACKEND_CPU, 0, NULL, err, sizeof err), 0);
    assert_false(e.cuda);
    for (i = 0; i < sizeof problems / sizeof problems[0]; i++)
        check_one(&e, NULL, problems[i], 0.0, 1);
    nb_env_close(&e);
}

static void test_cpu_backend_reference(void **state)
{
    nb_env e, ref;
    char err[256];
    (void)state;
    assert_int_equal(nb_env_open(&e, NNOP_BACKEND_CPU, 0, NULL, err, sizeof err), 0);
    assert_int_equal(nb_env_open(&ref, NNOP_BACKEND_CPU, 0, NULL, err, sizeof err), 0);
    check_one(&e, &ref, problems[1], 0.0, 1);
    check_one(&e, &ref, problems[10], 0.0, 1);
    nb_env_close(&ref);
    nb_env_close(&e);
}

/* f16 rounding alone is about 5e-4 of the values: a tolerance of 1e-9 must fail */
static void test_mismatch_caught(void **state)
{
    nb_env e;
    char err[256];
    double d;
    const double ref[3] = {1.0, -2.0, 3.0}, got[3] = {1.0, -2.0, NAN};
    (void)state;
    assert_int_equal(nb_env_open(&e, NNOP_BACKEND_CPU, 0, NULL, err, sizeof err), 0);
    check_one(&e, NULL, "conv n1c4h5w5k4r3 dt=f16", 1e-9, 0);
    nb_env_close(&e);
    assert_int_equal(nb_compare(got, ref, 3, 1.0, &d), 0);
    assert_true(d == HUGE_VAL);
    assert_int_equal(nb_compare(ref, ref, 3, 0.0, &d), 1);
    assert_true(d == 0.0);
}

/* a problem nnop rejects is an error with nnop's message, not a pass */
static void test_build_error(void **state)
{
    nb_env e;
    char err[256];
    (void)state;
    assert_int_equal(nb_env_open(&e, NNOP_BACKEND_CPU, 0, NULL, err, sizeof err), 0);
    check_one(&e, NULL, "conv n1c4h2w2k4r5", 0.0, 2);
    nb_env_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_op_against_naive),
            cmocka_unit_test(test_cpu_backend_reference),
            cmocka_unit_test(test_mismatch_caught),
            cmocka_unit_test(test_build_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
