/* test_options.c: the context and compile options that stand for what only environment
 * variables set before (issue 50): the log callback with its level and tag, the
 * implementation lists, the runtime-compiled norm switch and the side stream; each variable
 * overrides its option where it is set, and the options' strings are copied. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "internal.h"
#include "platform/platform.h"

/* ---------------------------------------------------------------- environment (POSIX) */

static const char *const vars[] = {"NNOP_LOG", "NNOP_DISABLE_IMPL", "NNOP_ENABLE_IMPL",
                                   "NNOP_NORM_RTC", "NNOP_SIDE_STREAM"};

static int env_set(const char *name, const char *value)
{
#ifdef _WIN32
    return _putenv_s(name, value ? value : "") == 0; /* "" removes it */
#else
    return value ? setenv(name, value, 1) == 0 : unsetenv(name) == 0;
#endif
}

/* Each case starts with none of the variables set (skipped where they cannot be unset). */
static int clear_vars(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (!env_set(vars[i], NULL))
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- the log callback */

typedef struct seen {
    int lines, compile, execute;
    char tag[64];
    char first[512];
    char last_exec[512];
} seen;

static void collect(void *user, int level, const char *tag, const char *line)
{
    seen *s = (seen *)user;
    if (s->lines++ == 0)
        snprintf(s->first, sizeof s->first, "%s", line);
    snprintf(s->tag, sizeof s->tag, "%s", tag);
    if (level == NNOP_LOG_COMPILE)
        s->compile++;
    if (level == NNOP_LOG_EXECUTE) {
        s->execute++;
        snprintf(s->last_exec, sizeof s->last_exec, "%s", line);
    }
}

/* A CPU context with log options, a relu graph compiled, run once fine and once failing. */
static void run_logged(int level, const char *tag, seen *s)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 3);
    float x[6] = {0}, y[6];
    const void *in[1] = {x};
    void *out[1] = {y};
    char tag_copy[64];
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    o.log_level = level;
    o.log_fn = collect;
    o.log_user = s;
    snprintf(tag_copy, sizeof tag_copy, "%s", tag ? tag : "");
    o.log_tag = tag ? tag_copy : NULL;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    memset(tag_copy, 'Z', sizeof tag_copy - 1); /* the context keeps its own copy */
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, nnop_input(g, "x", &d), NNOP_ACT_RELU, 0.f), "y"),
                     NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    assert_int_equal(nnop_plan_execute(p, in, NULL), NNOP_ERR_INVALID_ARGUMENT);
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

static void test_log_callback_gets_levels_and_tag(void **state)
{
    seen s;
    (void)state;
    memset(&s, 0, sizeof s);
    run_logged(NNOP_LOG_EXECUTE, "model-a", &s);
    /* create, one partition's compile, two executes (the failed one too) */
    assert_int_equal(s.compile, 2);
    assert_int_equal(s.execute, 2);
    assert_int_equal(s.lines, 4);
    assert_string_equal(s.tag, "model-a");
    assert_string_equal(s.first, "create,cpu,device 0");
    assert_non_null(strstr(s.last_exec, "exec,cpu,plan "));
    assert_non_null(strstr(s.last_exec, ",1 partitions,NNOP_ERR_INVALID_ARGUMENT,"));
    assert_null(strchr(s.last_exec, '\n'));
}

static void test_log_level_compile_and_off(void **state)
{
    seen s;
    (void)state;
    memset(&s, 0, sizeof s);
    run_logged(NNOP_LOG_COMPILE, NULL, &s);
    assert_int_equal(s.compile, 2);
    assert_int_equal(s.execute, 0);
    assert_string_equal(s.tag, "");
    memset(&s, 0, sizeof s);
    run_logged(NNOP_LOG_OFF, "quiet", &s);
    assert_int_equal(s.lines, 0);
}

/* NNOP_LOG overrides options.log_level both ways where set; empty is unset. */
static void test_nnop_log_overrides_the_level(void **state)
{
    seen s;
    (void)state;
    if (!env_set("NNOP_LOG", "0"))
        skip();
    memset(&s, 0, sizeof s);
    run_logged(NNOP_LOG_EXECUTE, "t", &s);
    assert_int_equal(s.lines, 0);
    assert_true(env_set("NNOP_LOG", "2"));
    memset(&s, 0, sizeof s);
    run_logged(NNOP_LOG_OFF, "t", &s);
    assert_int_equal(s.execute, 2);
    assert_true(env_set("NNOP_LOG", ""));
    memset(&s, 0, sizeof s);
    run_logged(NNOP_LOG_COMPILE, "t", &s);
    assert_int_equal(s.compile, 2);
    assert_int_equal(s.execute, 0);
    assert_true(env_set("NNOP_LOG", NULL));
}

/* A failed creation logs through the callback too. */
static void test_failed_create_is_logged(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    seen s;
    (void)state;
    memset(&s, 0, sizeof s);
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.device = 100000;
    o.log_level = NNOP_LOG_COMPILE;
    o.log_fn = collect;
    o.log_user = &s;
    o.log_tag = "srv";
    assert_int_not_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    assert_int_equal(s.lines, 1);
    assert_int_equal(strncmp(s.first, "create,failed,NNOP_ERR_", 23), 0);
    assert_string_equal(s.tag, "srv");
}

/* ---------------------------------------------------------------- validation */

static void test_bad_log_level_and_long_lists_are_refused(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    static char long_list[NNOP_IMPL_LIST_LEN + 1];
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    o.log_level = 3;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_create_error(), "log_level 3 is outside 0..2"));
    o.log_level = -1;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    o.log_level = 0;
    memset(long_list, 'a', NNOP_IMPL_LIST_LEN);
    o.disable_impl = long_list;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_create_error(), "disable_impl is longer than 1023"));
    o.disable_impl = NULL;
    o.enable_impl = long_list;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_create_error(), "enable_impl is longer than 1023"));
    assert_null(ctx);
    long_list[NNOP_IMPL_LIST_LEN - 1] = '\0'; /* 1023 bytes fit */
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    nnop_context_destroy(ctx);
}

/* ---------------------------------------------------------------- implementation switches */

static nnop_context *context_with(const char *disable, const char *enable, int norm_rtc)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    char d[128], e[128];
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    snprintf(d, sizeof d, "%s", disable ? disable : "");
    snprintf(e, sizeof e, "%s", enable ? enable : "");
    o.disable_impl = disable ? d : NULL;
    o.enable_impl = enable ? e : NULL;
    o.norm_rtc = norm_rtc;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    memset(d, 0, sizeof d); /* copied at creation */
    memset(e, 0, sizeof e);
    return ctx;
}

static void test_impl_lists_from_options(void **state)
{
    nnop_context *ctx = context_with("own stem kernel,cuBLASLt", "own implicit-GEMM conv", 0);
    (void)state;
    assert_true(nnop__impl_listed(ctx, 0, "own stem kernel"));
    assert_true(nnop__impl_listed(ctx, 0, "cuBLASLt"));
    assert_false(nnop__impl_listed(ctx, 0, "own"));
    assert_false(nnop__impl_listed(ctx, 0, "own implicit-GEMM conv"));
    assert_true(nnop__impl_listed(ctx, 1, "own implicit-GEMM conv"));
    assert_false(nnop__impl_listed(ctx, 1, "cuBLASLt"));
    assert_false(nnop__norm_rtc(ctx));
    nnop_context_destroy(ctx);
    ctx = context_with(NULL, "", 1);
    assert_false(nnop__impl_listed(ctx, 0, "cuBLASLt"));
    assert_false(nnop__impl_listed(ctx, 1, ""));
    assert_true(nnop__norm_rtc(ctx));
    nnop_context_destroy(ctx);
}

/* Where a variable is set (non-empty), it decides instead of the option. */
static void test_variables_override_the_options(void **state)
{
    nnop_context *ctx = context_with("cuBLASLt", "own implicit-GEMM conv", 1);
    (void)state;
    if (!env_set("NNOP_DISABLE_IMPL", "own stem kernel"))
        skip();
    assert_true(env_set("NNOP_ENABLE_IMPL", "something else"));
    assert_true(env_set("NNOP_NORM_RTC", "0"));
    assert_true(nnop__impl_listed(ctx, 0, "own stem kernel"));
    assert_false(nnop__impl_listed(ctx, 0, "cuBLASLt"));
    assert_false(nnop__impl_listed(ctx, 1, "own implicit-GEMM conv"));
    assert_false(nnop__norm_rtc(ctx));
    assert_true(env_set("NNOP_NORM_RTC", "")); /* empty is unset: the option again */
    assert_true(nnop__norm_rtc(ctx));
    assert_true(env_set("NNOP_DISABLE_IMPL", NULL));
    assert_true(nnop__impl_listed(ctx, 0, "cuBLASLt"));
    nnop_context_destroy(ctx);
    clear_vars(NULL);
}

static void test_side_stream_option_and_variable(void **state)
{
    nnop_plan plan;
    (void)state;
    memset(&plan, 0, sizeof plan);
    nnop_compile_options_init(&plan.opts);
    assert_int_equal(plan.opts.side_stream, 0);
    assert_false(nnop__side_stream(&plan));
    plan.opts.side_stream = 1;
    assert_true(nnop__side_stream(&plan));
    if (!env_set("NNOP_SIDE_STREAM", "0"))
        skip();
    assert_false(nnop__side_stream(&plan));
    plan.opts.side_stream = 0;
    assert_true(env_set("NNOP_SIDE_STREAM", "1"));
    assert_true(nnop__side_stream(&plan));
    clear_vars(NULL);
}

static void test_list_has_whole_entries(void **state)
{
    (void)state;
    assert_true(nnop__list_has("a,bc,d", "bc"));
    assert_true(nnop__list_has("a,bc,d", "a"));
    assert_true(nnop__list_has("a,bc,d", "d"));
    assert_false(nnop__list_has("a,bc,d", "b"));
    assert_false(nnop__list_has("a,bc,d", "c,d"));
    assert_false(nnop__list_has("", "a"));
    assert_false(nnop__list_has(NULL, "a"));
    assert_false(nnop__list_has("a", ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(test_log_callback_gets_levels_and_tag, clear_vars),
            cmocka_unit_test_setup(test_log_level_compile_and_off, clear_vars),
            cmocka_unit_test_setup(test_nnop_log_overrides_the_level, clear_vars),
            cmocka_unit_test_setup(test_failed_create_is_logged, clear_vars),
            cmocka_unit_test_setup(test_bad_log_level_and_long_lists_are_refused, clear_vars),
            cmocka_unit_test_setup(test_impl_lists_from_options, clear_vars),
            cmocka_unit_test_setup(test_variables_override_the_options, clear_vars),
            cmocka_unit_test_setup(test_side_stream_option_and_variable, clear_vars),
            cmocka_unit_test(test_list_has_whole_entries),
    };
    return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
