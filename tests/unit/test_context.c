/* test_context.c: context options and creation (backend choice, no-GPU errors), status strings,
 * dtype conversion (fp16/bf16 bit patterns, rounding, inf/nan, subnormals), tensor memory on
 * the CPU backend, and descriptor constructors. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

/* ------------------------------------------------------------------ options and creation */

static void test_options_init_sets_documented_defaults(void **state)
{
    nnop_context_options o;
    size_t i;
    (void)state;
    memset(&o, 0xAB, sizeof o);
    nnop_context_options_init(&o);
    assert_int_equal(o.backend, NNOP_BACKEND_AUTO);
    assert_int_equal(o.device, 0);
    assert_null(o.stream);
    assert_null(o.cache_path);
    assert_int_equal(o.policy, NNOP_POLICY_PREFER_PRECOMPILED);
    assert_int_equal(o.deterministic, 0);
    assert_int_equal(o.autotune, 0);
    assert_int_equal(o.workspace_limit, 0);
    assert_int_equal(o.log_level, NNOP_LOG_OFF);
    assert_null(o.log_fn);
    assert_null(o.log_user);
    assert_null(o.log_tag);
    assert_null(o.disable_impl);
    assert_null(o.enable_impl);
    assert_int_equal(o.norm_rtc, 0);
    for (i = 0; i < sizeof o.reserved / sizeof o.reserved[0]; i++)
        assert_int_equal(o.reserved[i], 0);
    nnop_context_options_init(NULL); /* tolerated */
}

static void test_compile_options_init_enables_fusion(void **state)
{
    nnop_compile_options o;
    size_t i;
    (void)state;
    memset(&o, 0xAB, sizeof o);
    nnop_compile_options_init(&o);
    assert_int_equal(o.fuse, 1);
    assert_int_equal(o.cuda_graph, 0);
    for (i = 0; i < sizeof o.reserved / sizeof o.reserved[0]; i++)
        assert_int_equal(o.reserved[i], 0);
    nnop_compile_options_init(NULL);
}

static void test_auto_picks_cpu_without_gpu_and_cuda_with_one(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_backend want = nnop_test_have_gpu() ? NNOP_BACKEND_CUDA : NNOP_BACKEND_CPU;
    (void)state;
    nnop_context_options_init(&o);
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    assert_non_null(ctx);
    assert_int_equal(nnop_context_backend(ctx), want);
    assert_string_equal(nnop_context_last_error(ctx), "");
    nnop_context_destroy(ctx);
    /* NULL options mean the defaults: the same choice */
    assert_int_equal(nnop_context_create(NULL, &ctx), NNOP_OK);
    assert_int_equal(nnop_context_backend(ctx), want);
    nnop_context_destroy(ctx);
}

/* A graph of one ReLU over a 1 x 2 x 3 x 3 f32 input, compiled on ctx. */
static nnop_plan *relu_plan(nnop_context *ctx, nnop_graph **g_out)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 2, 3, 3);
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, nnop_input(g, "x", &d), NNOP_ACT_RELU, 0.0f), "y"),
                     NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    *g_out = g;
    return p;
}

/* The context destroyed before its graphs and plans (a binding's garbage collector may do
 * that): each is left an orphan that fails cleanly, writes nothing, and can be destroyed. On
 * a GPU this also frees the plans' device memory while the context can. */
static void test_context_destroyed_first_leaves_orphans(void **state)
{
    nnop_context *ctx = NULL;
    nnop_graph *g1, *g2, *g3, *unfinished = NULL;
    nnop_plan *p1, *p2, *p3, *none = (nnop_plan *)&none, *again = NULL;
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 2, 3, 3), got;
    nnop_engine_info info[4];
    float x[18], y[18];
    const void *in[1] = {x};
    void *out[1] = {y};
    char text[256];
    int count = -1;
    (void)state;
    assert_int_equal(nnop_context_create(NULL, &ctx), NNOP_OK);
    p1 = relu_plan(ctx, &g1);
    p2 = relu_plan(ctx, &g2);
    p3 = relu_plan(ctx, &g3);
    nnop_plan_destroy(p2); /* the middle of the context's list */
    nnop_graph_destroy(g2);
    assert_int_equal(nnop_graph_create(ctx, &unfinished), NNOP_OK);
    (void)nnop_input(unfinished, "x", &d);
    nnop_context_destroy(ctx);

    nnop_test_fill_f32(x, 18, 7, -1.0f, 1.0f);
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_plan_execute(p1, in, out), NNOP_ERR_INVALID_ARGUMENT);
    assert_true(nnop_test_is_poisoned(y, sizeof y));
    assert_int_equal(nnop_plan_engines(p3, info, 4, &count), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(count, -1);
    assert_true(nnop_plan_describe(p1, text, sizeof text) > 0);
    assert_non_null(strstr(text, "its context was destroyed"));
    /* what only describes the plan still answers */
    assert_int_equal(nnop_plan_num_inputs(p1), 1);
    assert_int_equal(nnop_plan_output_desc(p1, 0, &got), NNOP_OK);
    assert_int_equal(got.dims[1], 2);
    /* a graph builds nothing more and compiles to nothing */
    assert_int_equal(nnop_graph_status(unfinished), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_output(unfinished, nnop_input(unfinished, "z", &d), "z"),
                     NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_graph_compile(g1, NULL, &none), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(none);
    assert_int_equal(nnop_graph_compile(unfinished, NULL, &again), NNOP_ERR_INVALID_ARGUMENT);
    nnop_plan_destroy(p3);
    nnop_plan_destroy(p1);
    nnop_graph_destroy(g1);
    nnop_graph_destroy(g3);
    nnop_graph_destroy(unfinished);
}

static void test_cpu_backend_is_always_available(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    (void)state;
    assert_int_equal(nnop_context_backend(ctx), NNOP_BACKEND_CPU);
    assert_string_equal(nnop_context_last_error(ctx), "");
    nnop_context_destroy(ctx);
}

static void test_cuda_without_gpu_is_no_device_with_a_message(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = (nnop_context *)(void *)&o; /* must be reset to NULL */
    (void)state;
    if (nnop_test_have_gpu())
        skip(); /* this machine has a GPU: nothing to check here */
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_NO_DEVICE);
    assert_null(ctx);
    assert_non_null(strstr(nnop_context_create_error(), "NNOP_ERR_NO_DEVICE"));
    assert_non_null(strstr(nnop_context_create_error(), "CUDA"));
    assert_non_null(strstr(nnop_context_create_error(), "no usable CUDA device"));
}

/* A successful create clears nnop_context_create_error, AUTO's fallback included (it once kept
 * the NNOP_ERR_NO_DEVICE text after success); why AUTO chose the CPU is the context's own
 * nnop_context_backend_reason, and NNOP_BACKEND_CUDA refuses where AUTO would fall back. */
static void test_successful_create_clears_create_error(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.device = 100000; /* fails with and without a GPU */
    assert_int_not_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    assert_true(nnop_context_create_error()[0] != '\0');
    o.device = 0;
    o.backend = NNOP_BACKEND_CPU;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    assert_string_equal(nnop_context_create_error(), "");
    assert_string_equal(nnop_context_backend_reason(ctx), "");
    nnop_context_destroy(ctx);
    ctx = NULL;
    o.backend = NNOP_BACKEND_AUTO;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    assert_string_equal(nnop_context_create_error(), "");
    if (nnop_context_backend(ctx) == NNOP_BACKEND_CPU) {
        /* no GPU: the reason is what NNOP_BACKEND_CUDA fails with */
        const char *why = nnop_context_backend_reason(ctx);
        char reason[512];
        nnop_context *cuda = NULL;
        assert_non_null(strstr(why, "AUTO chose the CPU backend"));
        assert_int_equal(strncmp(why, "NNOP_ERR_", 9), 0);
        snprintf(reason, sizeof reason, "%s", why);
        o.backend = NNOP_BACKEND_CUDA;
        assert_int_not_equal(nnop_context_create(&o, &cuda), NNOP_OK);
        assert_null(cuda);
        assert_int_equal(strncmp(nnop_context_create_error(), reason, 18), 0);
        assert_non_null(strstr(nnop_context_create_error(), "CUDA backend requested"));
    } else {
        assert_string_equal(nnop_context_backend_reason(ctx), "");
    }
    nnop_context_destroy(ctx);
    assert_non_null(nnop_context_backend_reason(NULL));
}

static void test_cuda_device_out_of_range_is_no_device(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = (nnop_context *)(void *)&o;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.device = 1000;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_NO_DEVICE);
    assert_null(ctx);
    assert_non_null(
            strstr(nnop_context_create_error(), nnop_test_have_gpu() ? "device 1000" : "CUDA"));
}

static void test_last_error_is_never_null(void **state)
{
    (void)state;
    assert_non_null(nnop_context_last_error(NULL));
    assert_true(strlen(nnop_context_last_error(NULL)) > 0);
    assert_non_null(nnop_context_create_error());
}

static void test_cpu_context_has_no_streams(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    int dummy;
    (void)state;
    assert_int_equal(nnop_context_set_stream(ctx, NULL), NNOP_OK);
    assert_int_equal(nnop_context_set_stream(ctx, &dummy), NNOP_ERR_INVALID_ARGUMENT);
    NNOP_TEST_ASSERT_ERROR(ctx, "no streams");
    assert_int_equal(nnop_context_synchronize(ctx), NNOP_OK);
    assert_string_equal(nnop_context_last_error(ctx), ""); /* cleared by the good call */
    assert_int_equal(nnop_context_set_stream(NULL, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_context_synchronize(NULL), NNOP_ERR_INVALID_ARGUMENT);
    nnop_context_destroy(ctx);
}

static void test_version_matches_the_header(void **state)
{
    (void)state;
    assert_int_equal(nnop_version(),
                     NNOP_VERSION_MAJOR * 10000 + NNOP_VERSION_MINOR * 100 + NNOP_VERSION_PATCH);
}

/* ------------------------------------------------------------------ status strings */

static void test_status_string_names_every_code(void **state)
{
    static const struct {
        nnop_status s;
        const char *name;
    } names[] = {
            {NNOP_OK, "NNOP_OK"},
            {NNOP_ERR_INVALID_ARGUMENT, "NNOP_ERR_INVALID_ARGUMENT"},
            {NNOP_ERR_SHAPE, "NNOP_ERR_SHAPE"},
            {NNOP_ERR_UNSUPPORTED, "NNOP_ERR_UNSUPPORTED"},
            {NNOP_ERR_OUT_OF_MEMORY, "NNOP_ERR_OUT_OF_MEMORY"},
            {NNOP_ERR_NO_DEVICE, "NNOP_ERR_NO_DEVICE"},
            {NNOP_ERR_VERSION, "NNOP_ERR_VERSION"},
            {NNOP_ERR_CUDA, "NNOP_ERR_CUDA"},
            {NNOP_ERR_CUDNN, "NNOP_ERR_CUDNN"},
            {NNOP_ERR_IO, "NNOP_ERR_IO"},
            {NNOP_ERR_FORMAT, "NNOP_ERR_FORMAT"},
            {NNOP_ERR_INTERNAL, "NNOP_ERR_INTERNAL"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_string_equal(nnop_status_string(names[i].s), names[i].name);
}

static void test_status_string_of_unknown_code_is_a_fixed_text(void **state)
{
    static const int bad[4] = {12, 99, -1, 1 << 30};
    int i;
    (void)state;
    for (i = 0; i < 4; i++) {
        const char *s = nnop_status_string((nnop_status)bad[i]);
        assert_non_null(s);
        assert_non_null(strstr(s, "unknown"));
    }
}

/* ------------------------------------------------------------------ dtype conversion */

static uint16_t to_f16(float f)
{
    uint16_t h;
    assert_int_equal(nnop_convert(NNOP_F32, &f, NNOP_F16, &h, 1), NNOP_OK);
    return h;
}

static uint16_t to_bf16(float f)
{
    uint16_t h;
    assert_int_equal(nnop_convert(NNOP_F32, &f, NNOP_BF16, &h, 1), NNOP_OK);
    return h;
}

static float from_f16(uint16_t h)
{
    float f;
    assert_int_equal(nnop_convert(NNOP_F16, &h, NNOP_F32, &f, 1), NNOP_OK);
    return f;
}

static float from_bf16(uint16_t h)
{
    float f;
    assert_int_equal(nnop_convert(NNOP_BF16, &h, NNOP_F32, &f, 1), NNOP_OK);
    return f;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_convert_f16_known_bit_patterns(void **state)
{
    (void)state;
    assert_int_equal(to_f16(1.0f), 0x3C00);
    assert_int_equal(to_f16(-2.0f), 0xC000);
    assert_int_equal(to_f16(0.5f), 0x3800);
    assert_int_equal(to_f16(0.1f), 0x2E66);
    assert_int_equal(to_f16(65504.0f), 0x7BFF); /* largest finite */
    assert_int_equal(to_f16(0.0f), 0x0000);
    assert_int_equal(to_f16(-0.0f), 0x8000);
    assert_true(from_f16(0x3C00) == 1.0f);
    assert_true(from_f16(0xC000) == -2.0f);
    assert_true(from_f16(0x7BFF) == 65504.0f);
    assert_true(from_f16(0x3555) == 0.333251953125f);
    assert_true(from_f16(0x8000) == 0.0f && signbit(from_f16(0x8000)));
}

static void test_convert_bf16_known_bit_patterns(void **state)
{
    (void)state;
    assert_int_equal(to_bf16(1.0f), 0x3F80);
    assert_int_equal(to_bf16(-2.0f), 0xC000);
    assert_int_equal(to_bf16(0.1f), 0x3DCD); /* 0x3DCCCCCD rounds up */
    assert_int_equal(to_bf16(3.0f), 0x4040);
    assert_int_equal(to_bf16(-0.0f), 0x8000);
    assert_true(from_bf16(0x3F80) == 1.0f);
    assert_true(from_bf16(0x4049) == 3.140625f);
    assert_true(from_bf16(0x7F7F) == bits_f32(0x7F7F0000u)); /* largest finite */
}

/* Halfway cases go to the even neighbour; anything above half goes up. */
static void test_convert_f16_rounds_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(to_f16(1.0f + 0x1p-11f), 0x3C00);            /* tie, even is down */
    assert_int_equal(to_f16(1.0f + 3 * 0x1p-11f), 0x3C02);        /* tie, even is up */
    assert_int_equal(to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01); /* above half */
    assert_int_equal(to_f16(1.0f + 0x1p-11f - 0x1p-20f), 0x3C00); /* below half */
    assert_int_equal(to_f16(2049.0f), 0x6800);                    /* 2048|2050: tie -> 2048 */
    assert_int_equal(to_f16(2051.0f), 0x6802);                    /* 2050|2052: tie -> 2052 */
    assert_int_equal(to_f16(-2051.0f), 0xE802);
    assert_int_equal(to_f16(1.0f - 0x1p-12f), 0x3C00); /* tie between 0x3BFF and 1: even 1 */
    assert_int_equal(to_f16(65519.0f), 0x7BFF);        /* below the 65520 half-way point */
    assert_int_equal(to_f16(2047.5f), 0x6800);         /* 2047|2048 tie (ulp 1): even 2048 */
}

static void test_convert_bf16_rounds_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(to_bf16(1.0f + 0x1p-8f), 0x3F80);
    assert_int_equal(to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
    assert_int_equal(to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
    assert_int_equal(to_bf16(-(1.0f + 3 * 0x1p-8f)), 0xBF82);
    assert_int_equal(to_bf16(257.0f), 0x4380); /* 256|258: tie -> 256 */
    assert_int_equal(to_bf16(259.0f), 0x4382); /* 258|260: tie -> 260 */
}

static void test_convert_inf_and_overflow(void **state)
{
    (void)state;
    assert_int_equal(to_f16(INFINITY), 0x7C00);
    assert_int_equal(to_f16(-INFINITY), 0xFC00);
    assert_int_equal(to_f16(65520.0f), 0x7C00); /* half-way to 2^16 rounds to inf */
    assert_int_equal(to_f16(1e6f), 0x7C00);
    assert_int_equal(to_f16(-FLT_MAX), 0xFC00);
    assert_int_equal(to_bf16(INFINITY), 0x7F80);
    assert_int_equal(to_bf16(-INFINITY), 0xFF80);
    assert_int_equal(to_bf16(FLT_MAX), 0x7F80); /* rounds up past the largest bf16 */
    assert_true(isinf(from_f16(0x7C00)) && from_f16(0x7C00) > 0);
    assert_true(isinf(from_f16(0xFC00)) && from_f16(0xFC00) < 0);
    assert_true(isinf(from_bf16(0xFF80)) && from_bf16(0xFF80) < 0);
}

static void test_convert_nan_stays_nan(void **state)
{
    uint16_t h;
    (void)state;
    h = to_f16(NAN);
    assert_int_equal(h & 0x7C00, 0x7C00);
    assert_true((h & 0x03FF) != 0);
    h = to_f16(-NAN);
    assert_true((h & 0x7FFF) > 0x7C00);
    h = to_f16(bits_f32(0x7F800001u)); /* signalling nan with a low payload: must not be inf */
    assert_true((h & 0x7FFF) > 0x7C00);
    h = to_bf16(NAN);
    assert_int_equal(h & 0x7F80, 0x7F80);
    assert_true((h & 0x007F) != 0);
    h = to_bf16(bits_f32(0x7F800001u)); /* payload below bf16's mantissa: must stay nan */
    assert_true((h & 0x7FFF) > 0x7F80);
    assert_true(isnan(from_f16(0x7E00)));
    assert_true(isnan(from_f16(0x7C01)));
    assert_true(isnan(from_bf16(0x7FC0)));
    assert_true(isnan(from_bf16(0xFF81)));
}

static void test_convert_f16_subnormals(void **state)
{
    (void)state;
    assert_int_equal(to_f16(0x1p-24f), 0x0001); /* smallest subnormal */
    assert_int_equal(to_f16(-0x1p-24f), 0x8001);
    assert_int_equal(to_f16(1023 * 0x1p-24f), 0x03FF);    /* largest subnormal */
    assert_int_equal(to_f16(0x1p-14f), 0x0400);           /* smallest normal */
    assert_int_equal(to_f16(0x1p-25f), 0x0000);           /* tie with 0: even 0 */
    assert_int_equal(to_f16(0x1p-25f * 1.5f), 0x0001);    /* above half */
    assert_int_equal(to_f16(3 * 0x1p-25f), 0x0002);       /* 1|2 tie: even 2 */
    assert_int_equal(to_f16(1023.5f * 0x1p-24f), 0x0400); /* 0x3FF|0x400 tie: even 0x400 */
    assert_int_equal(to_f16(0x1p-26f), 0x0000);
    assert_int_equal(to_f16(FLT_MIN), 0x0000);
    assert_int_equal(to_f16(-FLT_MIN), 0x8000);
    assert_true(from_f16(0x0001) == 0x1p-24f);
    assert_true(from_f16(0x03FF) == 1023 * 0x1p-24f);
    assert_true(from_f16(0x8200) == -512 * 0x1p-24f);
}

static void test_convert_bf16_subnormals(void **state)
{
    (void)state;
    assert_int_equal(to_bf16(bits_f32(0x00010000u)), 0x0001); /* exact */
    assert_int_equal(to_bf16(bits_f32(0x00008000u)), 0x0000); /* tie with 0: even */
    assert_int_equal(to_bf16(bits_f32(0x00018000u)), 0x0002); /* 1|2 tie: even 2 */
    assert_int_equal(to_bf16(bits_f32(0x00008001u)), 0x0001);
    assert_int_equal(to_bf16(bits_f32(0x807F0000u)), 0x807F);
    assert_true(from_bf16(0x0001) == bits_f32(0x00010000u));
    assert_true(from_bf16(0x007F) == bits_f32(0x007F0000u));
}

/* Every f16 value survives f16 -> f32 -> f16 bit for bit (NaNs stay NaN), and the f32 values of
 * the non-negative finite patterns increase strictly with the pattern. */
static void test_convert_every_f16_pattern_round_trips(void **state)
{
    uint16_t *h = malloc(65536 * sizeof *h), *back = malloc(65536 * sizeof *back);
    float *f = malloc(65536 * sizeof *f);
    uint32_t i;
    (void)state;
    assert_true(h && back && f);
    for (i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    assert_int_equal(nnop_convert(NNOP_F16, h, NNOP_F32, f, 65536), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F32, f, NNOP_F16, back, 65536), NNOP_OK);
    for (i = 0; i < 65536; i++) {
        int is_nan = (i & 0x7C00) == 0x7C00 && (i & 0x03FF) != 0;
        if (is_nan) {
            assert_true(isnan(f[i]));
            assert_true((back[i] & 0x7FFF) > 0x7C00);
        } else if (back[i] != h[i]) {
            fail_msg("f16 0x%04x -> %.9g -> 0x%04x", (unsigned)i, (double)f[i], (unsigned)back[i]);
        }
        if (i > 0 && i <= 0x7C00)
            assert_true(f[i] > f[i - 1]);
    }
    free(h);
    free(back);
    free(f);
}

static void test_convert_every_bf16_pattern_round_trips(void **state)
{
    uint16_t *h = malloc(65536 * sizeof *h), *back = malloc(65536 * sizeof *back);
    float *f = malloc(65536 * sizeof *f);
    uint32_t i;
    (void)state;
    assert_true(h && back && f);
    for (i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    assert_int_equal(nnop_convert(NNOP_BF16, h, NNOP_F32, f, 65536), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F32, f, NNOP_BF16, back, 65536), NNOP_OK);
    for (i = 0; i < 65536; i++) {
        uint32_t bits;
        memcpy(&bits, &f[i], sizeof bits);
        assert_int_equal(bits, i << 16); /* bf16 is the top half of f32 */
        if ((i & 0x7F80) == 0x7F80 && (i & 0x007F) != 0)
            assert_true((back[i] & 0x7FFF) > 0x7F80);
        else if (back[i] != h[i])
            fail_msg("bf16 0x%04x -> 0x%04x", (unsigned)i, (unsigned)back[i]);
    }
    free(h);
    free(back);
    free(f);
}

/* Long arrays (more than one internal chunk) and direct f16 <-> bf16 conversion. */
static void test_convert_long_arrays_and_between_half_types(void **state)
{
    enum { LEN = 1000 };
    float x[LEN], y[LEN];
    uint16_t h[LEN], b[LEN];
    int i;
    (void)state;
    for (i = 0; i < LEN; i++)
        x[i] = (float)(i % 256 - 128); /* 8 significant bits: exact in f16 and bf16 */
    assert_int_equal(nnop_convert(NNOP_F32, x, NNOP_F16, h, LEN), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F16, h, NNOP_BF16, b, LEN), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_BF16, b, NNOP_F32, y, LEN), NNOP_OK);
    assert_memory_equal(x, y, sizeof x);
    assert_int_equal(h[129], 0x3C00); /* 1.0 */
    assert_int_equal(b[129], 0x3F80);
    assert_int_equal(h[256 + 129], 0x3C00); /* in the second chunk */
    assert_int_equal(nnop_convert(NNOP_F32, x, NNOP_F32, y, 0), NNOP_OK);
    assert_int_equal(nnop_convert(NNOP_F32, x, NNOP_F32, y, LEN), NNOP_OK);
    assert_memory_equal(x, y, sizeof x);
}

/* ------------------------------------------------------------------ tensor memory */

static void test_cpu_malloc_copy_in_copy_out_round_trip(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    unsigned char src[100], dst[100];
    void *p = NULL, *z = NULL;
    int i;
    (void)state;
    for (i = 0; i < 100; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    assert_int_equal(nnop_malloc(ctx, sizeof src, &p), NNOP_OK);
    assert_non_null(p);
    assert_int_equal(nnop_copy_in(ctx, p, src, sizeof src), NNOP_OK);
    nnop_test_poison(dst, sizeof dst);
    assert_int_equal(nnop_copy_out(ctx, dst, p, sizeof dst), NNOP_OK);
    assert_memory_equal(src, dst, sizeof src);
    /* partial copies move exactly the bytes asked for */
    nnop_test_poison(dst, sizeof dst);
    assert_int_equal(nnop_copy_out(ctx, dst, (char *)p + 10, 5), NNOP_OK);
    assert_memory_equal(dst, src + 10, 5);
    assert_true(nnop_test_is_poisoned(dst + 5, sizeof dst - 5));
    /* zero bytes: nothing to do, even with NULL pointers */
    assert_int_equal(nnop_copy_in(ctx, NULL, NULL, 0), NNOP_OK);
    assert_int_equal(nnop_copy_out(ctx, NULL, NULL, 0), NNOP_OK);
    assert_int_equal(nnop_malloc(ctx, 0, &z), NNOP_OK);
    assert_non_null(z);
    nnop_free(ctx, z);
    /* more than any tensor: refused before the allocator sees it (ASan aborted on it) */
    z = &z;
    assert_int_equal(nnop_malloc(ctx, SIZE_MAX, &z), NNOP_ERR_OUT_OF_MEMORY);
    assert_null(z);
    assert_non_null(strstr(nnop_context_last_error(ctx), "more than any tensor"));
    nnop_free(ctx, p);
    nnop_free(ctx, NULL);
    nnop_context_destroy(ctx);
}

/* ------------------------------------------------------------------ descriptors */

static void test_tensor_4d_nchw_strides(void **state)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F16, NNOP_NCHW, 2, 3, 4, 5);
    const int64_t strides[4] = {60, 20, 5, 1};
    int i;
    (void)state;
    assert_int_equal(d.dtype, NNOP_F16);
    assert_int_equal(d.ndim, 4);
    assert_true(d.dims[0] == 2 && d.dims[1] == 3 && d.dims[2] == 4 && d.dims[3] == 5);
    for (i = 0; i < 4; i++)
        assert_int_equal(d.strides[i], strides[i]);
    assert_int_equal(nnop_tensor_elements(&d), 120);
    assert_int_equal(nnop_tensor_bytes(&d), 240);
}

static void test_tensor_4d_nhwc_strides(void **state)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, 2, 3, 4, 5);
    const int64_t strides[4] = {60, 1, 15, 3}; /* N, C, H, W logical; C fastest in memory */
    int i;
    (void)state;
    for (i = 0; i < 4; i++)
        assert_int_equal(d.strides[i], strides[i]);
    assert_int_equal(nnop_tensor_bytes(&d), 480);
    d = nnop_tensor_4d(NNOP_BF16, NNOP_NHWC, 1, 1, 3, 2); /* one channel */
    assert_int_equal(d.strides[1], 1);
    assert_int_equal(d.strides[2], 2);
    assert_int_equal(d.strides[3], 1);
    assert_int_equal(nnop_tensor_bytes(&d), 12);
}

static void test_tensor_1d_2d_and_dtype_sizes(void **state)
{
    nnop_tensor_desc a = nnop_tensor_1d(NNOP_BF16, 7), b = nnop_tensor_2d(NNOP_F32, 3, 4);
    (void)state;
    assert_int_equal(a.ndim, 1);
    assert_int_equal(a.dims[0], 7);
    assert_int_equal(a.strides[0], 1);
    assert_int_equal(nnop_tensor_bytes(&a), 14);
    assert_int_equal(b.ndim, 2);
    assert_int_equal(b.strides[0], 4);
    assert_int_equal(b.strides[1], 1);
    assert_int_equal(nnop_tensor_elements(&b), 12);
    assert_int_equal(nnop_dtype_size(NNOP_F32), 4);
    assert_int_equal(nnop_dtype_size(NNOP_F16), 2);
    assert_int_equal(nnop_dtype_size(NNOP_BF16), 2);
}

static void test_tensor_elements_of_invalid_desc_is_zero(void **state)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 0, 4, 5);
    (void)state;
    assert_int_equal(nnop_tensor_elements(&d), 0);
    d = nnop_tensor_4d((nnop_dtype)6, NNOP_NCHW, 2, 3, 4, 5); /* past NNOP_I8 */
    assert_int_equal(nnop_tensor_elements(&d), 0);
    assert_int_equal(nnop_tensor_bytes(&d), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_options_init_sets_documented_defaults),
            cmocka_unit_test(test_compile_options_init_enables_fusion),
            cmocka_unit_test(test_auto_picks_cpu_without_gpu_and_cuda_with_one),
            cmocka_unit_test(test_context_destroyed_first_leaves_orphans),
            cmocka_unit_test(test_cpu_backend_is_always_available),
            cmocka_unit_test(test_cuda_without_gpu_is_no_device_with_a_message),
            cmocka_unit_test(test_cuda_device_out_of_range_is_no_device),
            cmocka_unit_test(test_successful_create_clears_create_error),
            cmocka_unit_test(test_last_error_is_never_null),
            cmocka_unit_test(test_cpu_context_has_no_streams),
            cmocka_unit_test(test_version_matches_the_header),
            cmocka_unit_test(test_status_string_names_every_code),
            cmocka_unit_test(test_status_string_of_unknown_code_is_a_fixed_text),
            cmocka_unit_test(test_convert_f16_known_bit_patterns),
            cmocka_unit_test(test_convert_bf16_known_bit_patterns),
            cmocka_unit_test(test_convert_f16_rounds_to_nearest_even),
            cmocka_unit_test(test_convert_bf16_rounds_to_nearest_even),
            cmocka_unit_test(test_convert_inf_and_overflow),
            cmocka_unit_test(test_convert_nan_stays_nan),
            cmocka_unit_test(test_convert_f16_subnormals),
            cmocka_unit_test(test_convert_bf16_subnormals),
            cmocka_unit_test(test_convert_every_f16_pattern_round_trips),
            cmocka_unit_test(test_convert_every_bf16_pattern_round_trips),
            cmocka_unit_test(test_convert_long_arrays_and_between_half_types),
            cmocka_unit_test(test_cpu_malloc_copy_in_copy_out_round_trip),
            cmocka_unit_test(test_tensor_4d_nchw_strides),
            cmocka_unit_test(test_tensor_4d_nhwc_strides),
            cmocka_unit_test(test_tensor_1d_2d_and_dtype_sizes),
            cmocka_unit_test(test_tensor_elements_of_invalid_desc_is_zero),
    };
    return cmocka_run_group_tests_name("context", tests, NULL, NULL);
}
