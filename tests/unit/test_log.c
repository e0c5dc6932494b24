/* test_log.c: NNOP_LOG (read once at context creation): 1 prints one line per compiled
 * partition to stderr, 2 also one per execute; unset prints nothing. Each case runs in a child
 * process whose stderr goes to a file; the messages: one status prefix, never two. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "internal.h"
#include "platform/platform.h"

#define LOG_FILE "nnop_log_test.txt"

/* Nonzero: run_one_context also makes one execute fail (outputs NULL). Set before the fork. */
static int fail_one_execute;

/* A CPU context, a conv+relu graph compiled and run twice, all destroyed. */
static void run_one_context(void)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 3, 3);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 1, 1);
    nnop_conv_params cp;
    float x[9] = {0}, w[1] = {1.0f}, y[9];
    const void *in[1];
    void *out[1];
    nnop_value v;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    memset(&cp, 0, sizeof cp);
    cp.stride[0] = cp.stride[1] = cp.dilation[0] = cp.dilation[1] = cp.groups = 1;
    if (nnop_context_create(&o, &ctx) != NNOP_OK || nnop_graph_create(ctx, &g) != NNOP_OK)
        nnop__exit_now(4);
    v = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w), &cp);
    v = nnop_act(g, v, NNOP_ACT_RELU, 0.0f);
    if (nnop_output(g, v, "y") != NNOP_OK || nnop_graph_compile(g, NULL, &p) != NNOP_OK)
        nnop__exit_now(5);
    in[0] = x;
    out[0] = y;
    if (nnop_plan_execute(p, in, out) != NNOP_OK || nnop_plan_execute(p, in, out) != NNOP_OK)
        nnop__exit_now(6);
    if (fail_one_execute && nnop_plan_execute(p, in, NULL) != NNOP_ERR_INVALID_ARGUMENT)
        nnop__exit_now(7);
    nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

/* In a child with stderr to LOG_FILE and NNOP_LOG=level (NULL: unset): run_one_context,
 * contexts times. */
static void run_child(const char *level, int contexts)
{
    int i;
    if (!freopen(LOG_FILE, "w", stderr))
        nnop__exit_now(3);
#ifndef _WIN32
    if (level)
        setenv("NNOP_LOG", level, 1);
    else
        unsetenv("NNOP_LOG");
#endif
    for (i = 0; i < contexts; i++)
        run_one_context();
    fflush(stderr);
    nnop__exit_now(0);
}

/* Run the child with contexts contexts, return its stderr (malloc'd). */
static char *log_of_contexts(const char *level, int contexts)
{
    int64_t pid;
    FILE *f;
    char *text = (char *)calloc(1, 8192);
    size_t n;
    assert_non_null(text);
    fflush(stdout);
    fflush(stderr);
    pid = nnop__fork();
    assert_true(pid >= 0);
    if (pid == 0)
        run_child(level, contexts);
    assert_int_equal(nnop__wait_child(pid), 0);
    f = fopen(LOG_FILE, "r");
    assert_non_null(f);
    n = fread(text, 1, 8191, f);
    text[n] = '\0';
    fclose(f);
    remove(LOG_FILE);
    return text;
}

static char *log_of(const char *level)
{
    return log_of_contexts(level, 1);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    const char *s = text;
    while ((s = strstr(s, what)) != NULL) {
        n++;
        s += strlen(what);
    }
    return n;
}

static void test_log_off_by_default(void **state)
{
    char *text;
    (void)state;
    if (!nnop__fork_available())
        skip();
    text = log_of(NULL);
    assert_string_equal(text, "");
    free(text);
}

/* 0 and empty are off and quiet; a value other than 0, 1, 2 ("1abc", " 1", "3", "yes") is
 * off and says so, once per context (it once turned logging on or off by atoi). */
static void test_log_odd_values_are_off_and_said(void **state)
{
    static const char *const odd[] = {"1abc", " 1", "3", "-1", "yes", "99999999999999999999"};
    char *text;
    size_t i;
    (void)state;
    if (!nnop__fork_available())
        skip();
    text = log_of("0");
    assert_string_equal(text, "");
    free(text);
    text = log_of("");
    assert_string_equal(text, "");
    free(text);
    for (i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        text = log_of(odd[i]);
        assert_string_equal(text,
                            "nnop: NNOP_LOG is set to neither 0, 1 nor 2; logging stays off\n");
        free(text);
    }
}

static void test_log_1_one_line_per_partition(void **state)
{
    char *text;
    (void)state;
    if (!nnop__fork_available())
        skip();
    text = log_of("1");
    assert_non_null(strstr(text, "nnop_log,create,cpu,device 0\n"));
    assert_non_null(strstr(text, "nnop_log,compile,cpu,plan 0,partition 0/1,conv+act,reference "
                                 "(float32),policy -,cache -,"));
    /* x 36 B, w 4 B, y 36 B: the conv's result stays inside the partition */
    assert_non_null(strstr(text, " ms,76 B\n"));
    assert_int_equal(count(text, "nnop_log,compile,"), 1);
    assert_int_equal(count(text, "nnop_log,exec,"), 0);
    free(text);
}

static void test_log_2_also_each_execute(void **state)
{
    char *text;
    (void)state;
    if (!nnop__fork_available())
        skip();
    text = log_of("2");
    assert_int_equal(count(text, "nnop_log,compile,"), 1);
    assert_int_equal(count(text, "nnop_log,exec,cpu,plan 0,1 partitions,NNOP_OK,"), 2);
    assert_int_equal(count(text, " ms (host)\n"), 2);
    free(text);
}

/* A failed execute writes its line too, with its status (it once wrote none: the argument
 * checks returned before the log). */
static void test_log_2_failed_execute_has_its_line(void **state)
{
    char *text;
    (void)state;
    if (!nnop__fork_available())
        skip();
    fail_one_execute = 1;
    text = log_of("2");
    fail_one_execute = 0;
    assert_int_equal(count(text, "nnop_log,exec,cpu,plan 0,1 partitions,NNOP_OK,"), 2);
    assert_int_equal(
            count(text, "nnop_log,exec,cpu,plan 0,1 partitions,NNOP_ERR_INVALID_ARGUMENT,"), 1);
    assert_int_equal(count(text, " ms (host)\n"), 3);
    free(text);
}

/* Plan ids count the process's plans: two contexts' first plans are 0 and 1 (each was "plan 0",
 * and their lines could not be told apart). */
static void test_log_plan_ids_unique_across_contexts(void **state)
{
    char *text;
    (void)state;
    if (!nnop__fork_available())
        skip();
    text = log_of_contexts("2", 2);
    assert_int_equal(count(text, "nnop_log,create,cpu,"), 2);
    assert_int_equal(count(text, "nnop_log,compile,cpu,plan 0,"), 1);
    assert_int_equal(count(text, "nnop_log,compile,cpu,plan 1,"), 1);
    assert_int_equal(count(text, "nnop_log,exec,cpu,plan 0,"), 2);
    assert_int_equal(count(text, "nnop_log,exec,cpu,plan 1,"), 2);
    free(text);
}

static void test_status_named_once(void **state)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    o.device = 100000;
    (void)nnop_context_create(&o, &ctx);
    nnop_context_destroy(ctx);
    /* no GPU: NO_DEVICE (or VERSION); a GPU: device out of range. Either way, named once */
    assert_int_equal(count(nnop_context_create_error(), "NNOP_ERR_"), 1);
    assert_int_equal(strncmp(nnop_context_create_error(), "NNOP_ERR_", 9), 0);
}

static void test_wrapped_message_names_the_status_once(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    (void)state;
    nnop__fail(ctx, NNOP_ERR_CUDA, "cudaMemcpy failed: boom");
    assert_string_equal(nnop__error_body(ctx), "cudaMemcpy failed: boom");
    {
        char msg[NNOP_ERROR_LEN];
        snprintf(msg, sizeof msg, "%s", nnop__error_body(ctx));
        nnop__fail(ctx, NNOP_ERR_CUDA, "nnop_plan_execute: partition 2: %s", msg);
    }
    assert_string_equal(nnop_context_last_error(ctx),
                        "NNOP_ERR_CUDA: nnop_plan_execute: partition 2: cudaMemcpy failed: boom");
    nnop__clear_error(ctx);
    assert_string_equal(nnop__error_body(ctx), "");
    nnop_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_log_off_by_default),
            cmocka_unit_test(test_log_odd_values_are_off_and_said),
            cmocka_unit_test(test_log_1_one_line_per_partition),
            cmocka_unit_test(test_log_2_also_each_execute),
            cmocka_unit_test(test_log_2_failed_execute_has_its_line),
            cmocka_unit_test(test_log_plan_ids_unique_across_contexts),
            cmocka_unit_test(test_status_named_once),
            cmocka_unit_test(test_wrapped_message_names_the_status_once),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
