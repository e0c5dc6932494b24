/* test_quantized_plan.c: plans compiled with a precision (issue 45) on the CPU backend. A
 * quantized layer equals the float layer run on its input and weights quantized and back by
 * nnop_quantize / nnop_dequantize (per tensor with the table's amax, per output channel),
 * bit for bit, in int8 and fp8, denormal ranges included; the first and last layers stay float
 * unless asked; keep_float and the describe text; nnop_graph_memory; every wrong option refused
 * by name. */
#include <math.h>
#include <string.h>

#include "nnop_test.h"

enum { ROWS = 4, IN = 16, OUT = 8 };

static float x[ROWS * IN], w[OUT * IN], b[OUT];

/* x [ROWS, IN] -> linear (named "fc", weights ww) -> relu -> linear "head" -> y */
static nnop_graph *two_linears(nnop_context *ctx, const float *ww)
{
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, ROWS, IN);
    nnop_tensor_desc wd = nnop_tensor_2d(NNOP_F32, OUT, IN), bd = nnop_tensor_1d(NNOP_F32, OUT);
    nnop_tensor_desc hd = nnop_tensor_2d(NNOP_F32, OUT, OUT);
    static float head[OUT * OUT];
    nnop_graph *g = NULL;
    nnop_value v;
    nnop_test_fill_f32(head, OUT * OUT, 3, -1.0f, 1.0f);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_graph_name_next(g, "fc"), NNOP_OK);
    v = nnop_linear(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, ww),
                    nnop_constant(g, "b", &bd, b));
    v = nnop_act(g, v, NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_graph_name_next(g, "head"), NNOP_OK);
    v = nnop_linear(g, v, nnop_constant(g, "hw", &hd, head), nnop_none());
    assert_int_equal(nnop_output(g, v, NULL), NNOP_OK); /* bound as "head" */
    return g;
}

static nnop_calib_table *calibrate_max(nnop_graph *g)
{
    nnop_calib_options o;
    nnop_calib_table *t = NULL;
    const void *in[1] = {x};
    const void *const *batches[1] = {in};
    nnop_calib_options_init(&o);
    o.method = NNOP_CALIB_MAX;
    assert_int_equal(nnop_calibrate(g, &o, batches, 1, &t), NNOP_OK);
    return t;
}

/* Every layer quantized by t (the ends too) but the one named "head". */
static void all_but_head(nnop_compile_options *o, nnop_precision precision,
                         const nnop_calib_table *t)
{
    static const char *keep[1] = {"head"};
    nnop_compile_options_init(o);
    o->precision = precision;
    o->calib = t;
    o->quantize_ends = 1;
    o->keep_float = keep;
    o->n_keep_float = 1;
}

static void run(nnop_graph *g, const nnop_compile_options *o, const float *in, float *y)
{
    nnop_plan *p = NULL;
    const void *ins[1] = {in};
    void *outs[1] = {y};
    assert_int_equal(nnop_graph_compile(g, o, &p), NNOP_OK);
    nnop_test_poison(y, ROWS * OUT * sizeof(float));
    assert_int_equal(nnop_plan_execute(p, ins, outs), NNOP_OK);
    nnop_plan_destroy(p);
}

/* v quantized and back, one scale per block of n / channels, each block's max |v| / qmax. */
static void per_channel_qdq(nnop_dtype q, float qmax, const float *v, int64_t n, int64_t channels,
                            float *out)
{
    float scales[8];
    signed char codes[4 * 6 * 9 * 2 * 2]; /* the largest tensor of the tests */
    int64_t c, i, per = n / channels;
    for (c = 0; c < channels; c++) {
        float top = 0.0f;
        for (i = 0; i < per; i++)
            top = fmaxf(top, fabsf(v[c * per + i]));
        scales[c] = top / qmax;
    }
    assert_int_equal(nnop_quantize(v, n, scales, channels, q, codes), NNOP_OK);
    assert_int_equal(nnop_dequantize(q, codes, n, scales, channels, out), NNOP_OK);
}

static void check_layer_exact(nnop_context *ctx, nnop_precision precision, nnop_dtype q, float qmax)
{
    nnop_graph *g = two_linears(ctx, w);
    nnop_calib_table *t = calibrate_max(g);
    nnop_compile_options o;
    float xq[ROWS * IN], wq[OUT * IN], got[ROWS * OUT], want[ROWS * OUT];
    nnop_graph *ref;
    all_but_head(&o, precision, t);
    run(g, &o, x, got);
    per_channel_qdq(q, qmax, x, ROWS * IN, 1, xq);
    per_channel_qdq(q, qmax, w, OUT * IN, OUT, wq);
    ref = two_linears(ctx, wq);
    run(ref, NULL, xq, want);
    assert_memory_equal(got, want, sizeof got);
    run(g, NULL, x, want); /* and the float plan differs: the test sees quantization */
    assert_true(memcmp(got, want, sizeof got) != 0);
    nnop_graph_destroy(ref);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

static void test_int8_layer_is_its_emulation(void **state)
{
    nnop_test_fill_f32(x, ROWS * IN, 1, -2.0f, 3.0f);
    nnop_test_fill_f32(w, OUT * IN, 2, -0.5f, 0.5f);
    nnop_test_fill_f32(b, OUT, 4, -0.1f, 0.1f);
    check_layer_exact((nnop_context *)*state, NNOP_PRECISION_INT8, NNOP_I8, 127.0f);
}

static void test_fp8_layer_is_its_emulation(void **state)
{
    nnop_test_fill_f32(x, ROWS * IN, 5, -2.0f, 3.0f);
    nnop_test_fill_f32(w, OUT * IN, 6, -0.5f, 0.5f);
    nnop_test_fill_f32(b, OUT, 7, -0.1f, 0.1f);
    check_layer_exact((nnop_context *)*state, NNOP_PRECISION_FP8, NNOP_F8E4M3, 448.0f);
}

/* Scales below FLT_MIN are raised to it: a weight channel whose largest |w| is denormal
 * quantizes to zeros (not 0 / 0 = NaN in fp8), and an input of denormal amax is still
 * quantized (its scale was 0, which marked the layer float). */
static void test_denormal_scales(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g, *ref;
    nnop_calib_table *t;
    nnop_compile_options o;
    float xq[ROWS * IN], wq[OUT * IN], got[ROWS * OUT], want[ROWS * OUT];
    char text[4096];
    nnop_plan *p = NULL;
    int i;
    nnop_test_fill_f32(x, ROWS * IN, 21, -2.0f, 3.0f);
    nnop_test_fill_f32(w, OUT * IN, 22, -0.5f, 0.5f);
    nnop_test_fill_f32(b, OUT, 23, -0.1f, 0.1f);
    for (i = 0; i < IN; i++) /* channel 0: zeros and denormals */
        w[i] = i % 2 ? 1e-44f : 0.0f;
    g = two_linears(ctx, w);
    t = calibrate_max(g);
    all_but_head(&o, NNOP_PRECISION_FP8, t);
    run(g, &o, x, got);
    per_channel_qdq(NNOP_F8E4M3, 448.0f, x, ROWS * IN, 1, xq);
    memset(wq, 0, IN * sizeof(float)); /* 1e-44 / FLT_MIN rounds to code 0 */
    per_channel_qdq(NNOP_F8E4M3, 448.0f, w + IN, (OUT - 1) * IN, OUT - 1, wq + IN);
    ref = two_linears(ctx, wq);
    run(ref, NULL, xq, want);
    assert_memory_equal(got, want, sizeof got);
    nnop_graph_destroy(ref);
    nnop_calib_table_destroy(t);
    for (i = 0; i < ROWS * IN; i++) /* an input of denormal amax */
        x[i] *= 1e-44f;
    t = calibrate_max(g);
    o.calib = t;
    o.precision = NNOP_PRECISION_INT8;
    assert_int_equal(nnop_graph_compile(g, &o, &p), NNOP_OK);
    assert_true(nnop_plan_describe(p, text, sizeof text) < sizeof text);
    assert_non_null(strstr(text, "(linear 'fc'): int8, input scale 1.17549e-38"));
    nnop_plan_destroy(p);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

/* A conv (3x3, pad 1, K = 6 of C = 4) quantized alone (quantize_ends) in layout l: its output
 * equals the float conv's on the input and the K,C,R,S weights quantized and back per output
 * channel, which NHWC keeps as K,R,S,C blocks of the same channels. */
static void check_conv_exact(nnop_context *ctx, nnop_layout l, nnop_precision precision,
                             nnop_dtype q, float qmax)
{
    enum { C = 4, K = 6, H = 5, W = 7, NX = 2 * C * H * W, NW = K * C * 9, NY = 2 * K * H * W };
    static float xl[NX], wl[NW], xq_l[NX], wq_l[NW], xt[NX], wt[NW], got[NY], want[NY];
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, l, 2, C, H, W);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, l, K, C, 3, 3);
    nnop_tensor_desc xs = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, C, H, W);
    nnop_tensor_desc ws = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, K, C, 3, 3);
    nnop_conv_params cp;
    nnop_compile_options o;
    nnop_calib_table *t = NULL;
    const float *weights[2] = {wt, NULL};
    int pass;
    nnop_test_fill_f32(xl, NX, 11, -1.0f, 2.0f);
    nnop_test_fill_f32(wl, NW, 12, -0.3f, 0.3f);
    per_channel_qdq(q, qmax, xl, NX, 1, xq_l);
    per_channel_qdq(q, qmax, wl, NW, K, wq_l);
    nnop_conv_params_init(&cp);
    cp.pad[0] = cp.pad[1] = 1;
    for (pass = 0; pass < 2; pass++) { /* 0: quantized on x, w; 1: float on their QDQ */
        nnop_graph *g = NULL;
        const void *in[1] = {xt};
        void *out[1] = {pass ? want : got};
        nnop_plan *p = NULL;
        assert_int_equal(nnop_tensor_copy(&xs, pass ? xq_l : xl, &xd, xt), NNOP_OK);
        assert_int_equal(nnop_tensor_copy(&ws, pass ? wq_l : wl, &wd, wt), NNOP_OK);
        assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
        assert_int_equal(nnop_output(g,
                                     nnop_conv(g, nnop_input(g, "x", &xd),
                                               nnop_constant(g, "w", &wd, weights[0]), &cp),
                                     "y"),
                         NNOP_OK);
        nnop_compile_options_init(&o);
        if (!pass) {
            const void *cin[1] = {xt};
            const void *const *batches[1] = {cin};
            nnop_calib_options co;
            nnop_calib_options_init(&co);
            co.method = NNOP_CALIB_MAX;
            assert_int_equal(nnop_calibrate(g, &co, batches, 1, &t), NNOP_OK);
            o.precision = precision;
            o.calib = t;
            o.quantize_ends = 1;
        }
        assert_int_equal(nnop_graph_compile(g, &o, &p), NNOP_OK);
        nnop_test_poison(out[0], sizeof got);
        assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
        nnop_plan_destroy(p);
        nnop_graph_destroy(g);
    }
    assert_memory_equal(got, want, sizeof got);
    nnop_calib_table_destroy(t);
}

static void test_conv_is_its_emulation_nchw_nhwc(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    check_conv_exact(ctx, NNOP_NCHW, NNOP_PRECISION_INT8, NNOP_I8, 127.0f);
    check_conv_exact(ctx, NNOP_NHWC, NNOP_PRECISION_INT8, NNOP_I8, 127.0f);
    check_conv_exact(ctx, NNOP_NHWC, NNOP_PRECISION_FP8, NNOP_F8E4M3, 448.0f);
}

/* By default the first and last layers stay float: with two layers, nothing is quantized and
 * the result is the float plan's; the describe text lists each layer's precision. */
static void test_ends_stay_float_and_describe(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = two_linears(ctx, w);
    nnop_calib_table *t = calibrate_max(g);
    nnop_compile_options o;
    nnop_plan_memory_info before, after;
    nnop_plan *p = NULL;
    float got[ROWS * OUT], want[ROWS * OUT];
    char text[4096];
    nnop_compile_options_init(&o);
    o.precision = NNOP_PRECISION_INT8;
    o.calib = t;
    run(g, &o, x, got);
    run(g, NULL, x, want);
    assert_memory_equal(got, want, sizeof got);
    o.quantize_ends = 1;
    assert_int_equal(nnop_graph_memory(g, &o, &before), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, &o, &p), NNOP_OK);
    assert_int_equal(nnop_plan_memory(p, &after), NNOP_OK);
    assert_memory_equal(&before, &after, sizeof after);
    /* the float32 copies of both layers' quantized weights, and one input staged */
    assert_int_equal(after.weights,
                     (OUT * IN + OUT + OUT * OUT) * sizeof(float) * 2 - OUT * sizeof(float));
    assert_true(nnop_plan_describe(p, text, sizeof text) < sizeof text);
    assert_non_null(strstr(text, "quantized: 2 of the convs and linear layers in int8"));
    assert_non_null(strstr(text, "(linear 'fc'): int8, input scale"));
    assert_non_null(strstr(text, "(linear 'head'): int8, input scale"));
    nnop_plan_destroy(p);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

static void expect_refused(nnop_context *ctx, nnop_graph *g, const nnop_compile_options *o,
                           const char *says)
{
    nnop_plan *p = (nnop_plan *)(void *)o; /* must come back NULL */
    nnop_plan_memory_info m;
    assert_int_equal(nnop_graph_compile(g, o, &p), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(p);
    if (!strstr(nnop_context_last_error(ctx), says))
        fail_msg("'%s' does not say '%s'", nnop_context_last_error(ctx), says);
    assert_int_equal(nnop_graph_memory(g, o, &m), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_last_error(ctx), says));
}

static void test_wrong_options_refused(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = two_linears(ctx, w);
    nnop_calib_table *t = calibrate_max(g), *other;
    nnop_compile_options o;
    static const char *typo[1] = {"haed"};
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, ROWS, IN);
    nnop_graph *g2 = NULL;
    const void *in[1] = {x};
    const void *const *batches[1] = {in};
    nnop_compile_options_init(&o);
    o.precision = NNOP_PRECISION_INT8;
    expect_refused(ctx, g, &o, "needs opts->calib");
    o.precision = NNOP_PRECISION_FLOAT;
    o.calib = t;
    expect_refused(ctx, g, &o, "without a precision");
    o.precision = 9;
    expect_refused(ctx, g, &o, "opts->precision is not an nnop_precision");
    o.precision = NNOP_PRECISION_FP8;
    o.keep_float = typo;
    o.n_keep_float = 1;
    expect_refused(ctx, g, &o, "keep_float[0] 'haed' names no node");
    o.keep_float = NULL;
    expect_refused(ctx, g, &o, "keep_float is NULL");
    /* a table of another graph: no entry for this one's hidden activation */
    assert_int_equal(nnop_graph_create(ctx, &g2), NNOP_OK);
    assert_int_equal(
            nnop_output(g2, nnop_act(g2, nnop_input(g2, "x", &d), NNOP_ACT_TANH, 0.0f), "y"),
            NNOP_OK);
    assert_int_equal(nnop_calibrate(g2, NULL, batches, 1, &other), NNOP_OK);
    o.n_keep_float = 0;
    o.quantize_ends = 1;
    o.calib = other;
    expect_refused(ctx, g, &o, "has no entry for 'act#1', the input of quantized node #2");
    nnop_calib_table_destroy(other);
    nnop_graph_destroy(g2);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_int8_layer_is_its_emulation,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_fp8_layer_is_its_emulation,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_denormal_scales, nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_conv_is_its_emulation_nchw_nhwc,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_ends_stay_float_and_describe,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_wrong_options_refused, nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
