/* test_plan_memory.c: nnop_plan_memory reports what a CPU plan holds, and the CPU backend
 * shares buffers by liveness (issue 50): a chain of six biases holds two activations, not
 * seven, and every result stays right where values are read late, read twice, or are graph
 * outputs read again by later nodes. nnop_graph_memory tells the same figures before the
 * compile. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nnop_test.h"

enum { C = 8, H = 16, W = 16, PIX = C * H * W };

static nnop_plan *compile(nnop_graph *g)
{
    nnop_plan *p = NULL;
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    return p;
}

/* nnop_graph_memory asked before the compile equals what the plan then holds, field for
 * field (the output poisoned first: every field is written). */
static void expect_graph_memory_as_plan(nnop_graph *g, const nnop_plan *p)
{
    nnop_plan_memory_info before, after;
    memset(&before, 0xAB, sizeof before);
    assert_int_equal(nnop_graph_memory(g, NULL, &before), NNOP_OK);
    assert_int_equal(nnop_plan_memory(p, &after), NNOP_OK);
    assert_memory_equal(&before, &after, sizeof after);
}

/* x + b0 + ... + b5, each bias a node: two buffers of PIX floats, six biases of C. */
static void test_bias_chain_two_buffers(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, C, H, W);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F32, C);
    static float x[PIX], y[PIX], b[6][C];
    nnop_plan_memory_info m;
    nnop_graph *g = NULL;
    nnop_plan *p;
    nnop_value v;
    const void *in[1];
    void *out[1];
    int i, k;
    nnop_test_fill_f32(x, PIX, 11, -1.0f, 1.0f);
    nnop_test_fill_f32(&b[0][0], 6 * C, 12, -1.0f, 1.0f);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &xd);
    for (i = 0; i < 6; i++)
        v = nnop_bias(g, v, nnop_constant(g, NULL, &bd, b[i]));
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    p = compile(g);
    expect_graph_memory_as_plan(g, p);
    nnop_graph_destroy(g);
    memset(&m, 0xAB, sizeof m);
    assert_int_equal(nnop_plan_memory(p, &m), NNOP_OK);
    assert_int_equal(m.weights, 6 * C * sizeof(float));
    assert_int_equal(m.intermediates, 2 * PIX * sizeof(float));
    assert_int_equal(m.workspace, 0);
    assert_int_equal(m.other, 0);
    assert_int_equal(m.device_total, 0);
    assert_int_equal(m.host_total, m.weights + m.intermediates);
    for (i = 0; i < 4; i++)
        assert_int_equal(m.reserved[i], 0);
    {
        char text[2048], want[128];
        snprintf(want, sizeof want, "memory: %zu bytes of weights, %zu of intermediates", m.weights,
                 m.intermediates);
        assert_true(nnop_plan_describe(p, text, sizeof text) < sizeof text);
        assert_non_null(strstr(text, want));
    }
    in[0] = x, out[0] = y;
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    for (i = 0; i < PIX; i++) {
        float want = x[i];
        for (k = 0; k < 6; k++)
            want += b[k][i / (H * W)];
        assert_true(fabsf(y[i] - want) <= 1e-5f * (1.0f + fabsf(want)));
    }
    nnop_plan_destroy(p);
}

/* x -> a = relu(x) (an output, read again at the end), s = sigmoid(x), t = tanh(s), an
 * unread branch u = elu(t), c = t + a: a late reader keeps a's buffer and x's until their last
 * use; the dead branch's buffer is free at once. */
static void test_late_readers(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, C, H, W);
    static float x[PIX], a[PIX], c[PIX], x_out[PIX];
    nnop_plan_memory_info m;
    nnop_graph *g = NULL;
    nnop_plan *p;
    nnop_value xv, av, sv, tv;
    const void *in[1];
    void *out[3];
    int i;
    nnop_test_fill_f32(x, PIX, 21, -3.0f, 3.0f);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    xv = nnop_input(g, "x", &xd);
    av = nnop_act(g, xv, NNOP_ACT_RELU, 0.0f);
    sv = nnop_act(g, xv, NNOP_ACT_SIGMOID, 0.0f);
    tv = nnop_act(g, sv, NNOP_ACT_TANH, 0.0f);
    (void)nnop_act(g, tv, NNOP_ACT_ELU, 1.0f);
    assert_int_equal(nnop_output(g, av, "a"), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_add(g, tv, av), "c"), NNOP_OK);
    assert_int_equal(nnop_output(g, xv, "x_again"), NNOP_OK);
    p = compile(g);
    expect_graph_memory_as_plan(g, p);
    nnop_graph_destroy(g);
    assert_int_equal(nnop_plan_memory(p, &m), NNOP_OK);
    assert_int_equal(m.weights, 0);
    /* x, a and c live to the end; s, t and the dead elu share what is left: 5 at most */
    assert_true(m.intermediates <= 5 * PIX * sizeof(float));
    assert_true(m.intermediates >= 4 * PIX * sizeof(float));
    in[0] = x, out[0] = a, out[1] = c, out[2] = x_out;
    nnop_test_poison(a, sizeof a);
    nnop_test_poison(c, sizeof c);
    nnop_test_poison(x_out, sizeof x_out);
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    for (i = 0; i < PIX; i++) {
        float relu = x[i] > 0.0f ? x[i] : 0.0f;
        float t = tanhf(1.0f / (1.0f + expf(-x[i])));
        assert_true(a[i] == relu);
        assert_true(fabsf(c[i] - (t + relu)) <= 1e-5f * (1.0f + fabsf(t + relu)));
        assert_true(x_out[i] == x[i]);
    }
    nnop_plan_destroy(p);
}

/* The same chain in f16: the biases are kept in f16 (2 bytes each), a node's bias staged as
 * float32 while it runs (the workspace: one bias of C), the activations float32 buffers; the
 * result equals adding the biases one by one with each sum rounded to f16, bit for bit. An
 * execution context on the caller's memory gives the same bits. */
static void test_f16_constants_kept_16bit(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NCHW, 1, C, H, W);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F16, C);
    static float xf[PIX], bf[6 * C], want[PIX], got[PIX];
    static uint16_t x[PIX], y[PIX], y2[PIX], b[6 * C];
    static unsigned char scratch[1 << 20];
    nnop_plan_memory_info m;
    nnop_graph *g = NULL;
    nnop_exec *e = NULL;
    nnop_plan *p;
    nnop_value v;
    const void *in[1];
    void *out[1];
    int i, k;
    nnop_test_fill_f32(xf, PIX, 31, -1.0f, 1.0f);
    nnop_test_fill_f32(bf, 6 * C, 32, -1.0f, 1.0f);
    assert_int_equal(nnop_convert(NNOP_F32, xf, NNOP_F16, x, PIX), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F32, bf, NNOP_F16, b, 6 * C), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F16, x, NNOP_F32, want, PIX), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F16, b, NNOP_F32, bf, 6 * C), NNOP_OK);
    for (k = 0; k < 6; k++) {
        for (i = 0; i < PIX; i++)
            want[i] += bf[k * C + i / (H * W)];
        assert_int_equal(nnop_convert(NNOP_F32, want, NNOP_F16, y, PIX), NNOP_OK);
        assert_int_equal(nnop_convert(NNOP_F16, y, NNOP_F32, want, PIX), NNOP_OK);
    }
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &xd);
    for (i = 0; i < 6; i++)
        v = nnop_bias(g, v, nnop_constant(g, NULL, &bd, &b[i * C]));
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    p = compile(g);
    expect_graph_memory_as_plan(g, p);
    nnop_graph_destroy(g);
    assert_int_equal(nnop_plan_memory(p, &m), NNOP_OK);
    assert_int_equal(m.weights, 6 * C * 2);
    assert_int_equal(m.workspace, C * sizeof(float));
    assert_int_equal(m.intermediates, 2 * PIX * sizeof(float));
    assert_int_equal(m.host_total, m.weights + m.workspace + m.intermediates);
    in[0] = x, out[0] = y;
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F16, y, NNOP_F32, got, PIX), NNOP_OK);
    for (i = 0; i < PIX; i++)
        assert_true(got[i] == want[i]);
    assert_true(nnop_exec_scratch_bytes(p) <= sizeof scratch);
    assert_int_equal(nnop_exec_create_in(p, scratch, sizeof scratch, &e), NNOP_OK);
    assert_int_equal(nnop_exec_memory(e, &m), NNOP_OK);
    assert_int_equal(m.workspace, 64); /* C floats, 64-byte aligned in the caller's block */
    out[0] = y2;
    nnop_test_poison(y2, sizeof y2);
    assert_int_equal(nnop_exec_run(e, 0, in, out), NNOP_OK);
    assert_memory_equal(y, y2, sizeof y);
    nnop_exec_destroy(e);
    nnop_plan_destroy(p);
}

static void test_memory_arguments(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc xd = nnop_tensor_1d(NNOP_F32, 4);
    nnop_plan_memory_info m;
    nnop_compile_options opts;
    nnop_graph *g = NULL;
    nnop_plan *p;
    assert_int_equal(nnop_plan_memory(NULL, &m), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_graph_memory(NULL, NULL, &m), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, nnop_input(g, "x", &xd), NNOP_ACT_RELU, 0.0f), "y"),
                     NNOP_OK);
    assert_int_equal(nnop_graph_memory(g, NULL, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(ctx), "nnop_graph_memory: out is NULL"));
    nnop_compile_options_init(&opts);
    opts.reserved[0] = 1;
    memset(&m, 0xAB, sizeof m);
    assert_int_equal(nnop_graph_memory(g, &opts, &m), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(ctx), "opts->reserved"));
    assert_int_equal(m.host_total, 0); /* cleared on failure, never left half-written */
    p = compile(g);
    nnop_graph_destroy(g);
    assert_int_equal(nnop_plan_memory(p, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(ctx), "nnop_plan_memory: out is NULL"));
    nnop_plan_destroy(p);
}

/* A graph the compile refuses is refused the same way, before any table is built: a batch
 * range over a second input whose dim 0 is not the first's. */
static void test_graph_memory_refuses_as_compile(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 3, 4);
    nnop_tensor_desc zd = nnop_tensor_2d(NNOP_F32, 2, 4);
    nnop_compile_options opts;
    nnop_plan_memory_info m;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_status compiled;
    char compile_error[512];
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, nnop_input(g, "x", &xd), NNOP_ACT_RELU, 0.0f), "y"),
                     NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, nnop_input(g, "z", &zd), NNOP_ACT_RELU, 0.0f), "w"),
                     NNOP_OK);
    nnop_compile_options_init(&opts);
    opts.batch_range = 1;
    compiled = nnop_graph_compile(g, &opts, &p);
    assert_int_not_equal(compiled, NNOP_OK);
    assert_null(p);
    snprintf(compile_error, sizeof compile_error, "%s", nnop_context_last_error(ctx));
    memset(&m, 0xAB, sizeof m);
    assert_int_equal(nnop_graph_memory(g, &opts, &m), compiled);
    assert_int_equal(m.weights, 0);
    assert_int_equal(m.host_total, 0);
    assert_non_null(strstr(nnop_context_last_error(ctx), "batch_range"));
    assert_non_null(strstr(compile_error, "batch_range"));
    nnop_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_bias_chain_two_buffers,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_late_readers, nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_f16_constants_kept_16bit,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_memory_arguments, nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_graph_memory_refuses_as_compile,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
