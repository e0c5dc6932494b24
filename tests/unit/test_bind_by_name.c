/* test_bind_by_name.c: nnop_plan_input_index / nnop_plan_output_index from the header alone:
 * buffers bound by name run the graph right, an input that is also an output keeps its input
 * name, unnamed outputs carry their node's name, long names are kept to 47 bytes, a missing
 * name gives -1 and leaves the context's last error as it was (issue 50), and
 * nnop_plan_input_name / nnop_plan_output_name list the names there are. */
#include <stdio.h>
#include <string.h>

#include "nnop_test.h"

static const char long_name[] = "a_name_that_is_longer_than_the_forty_seven_bytes_kept_here";

/* y = relu(a) - b, named outputs "diff" and "a_again" (the input a itself), and relu(b)
 * unnamed; inputs "a", NULL, long_name (b). */
static nnop_plan *compile_named(nnop_context *ctx)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 3);
    nnop_plan *p = NULL;
    nnop_value a, u, b;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    a = nnop_input(g, "a", &d);
    u = nnop_input(g, NULL, &d);
    b = nnop_input(g, long_name, &d);
    assert_int_equal(nnop_output(g, nnop_sub(g, nnop_act(g, a, NNOP_ACT_RELU, 0.f), b), "diff"),
                     NNOP_OK);
    assert_int_equal(nnop_output(g, a, "a_again"), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, nnop_add(g, b, u), NNOP_ACT_RELU, 0.f), NULL),
                     NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &p), NNOP_OK);
    nnop_graph_destroy(g);
    return p;
}

static void test_indices_by_name(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_plan *p = compile_named(ctx);
    assert_int_equal(nnop_plan_input_index(p, "a"), 0);
    assert_int_equal(nnop_plan_input_index(p, ""), 1);
    assert_int_equal(nnop_plan_input_index(p, long_name), 2);
    assert_int_equal(nnop_plan_output_index(p, "diff"), 0);
    assert_int_equal(nnop_plan_output_index(p, "a_again"), 1);
    assert_int_equal(nnop_plan_output_index(p, "act#3"), 2);
    /* the input a is also output a_again: it keeps its input name */
    assert_int_equal(nnop_plan_input_index(p, "a_again"), -1);
    assert_int_equal(nnop_plan_output_index(p, "a"), -1);
    assert_int_equal(nnop_plan_output_index(p, NULL), -1);
    assert_int_equal(nnop_plan_input_index(NULL, "a"), -1);
    /* the names there are */
    assert_string_equal(nnop_plan_input_name(p, 0), "a");
    assert_string_equal(nnop_plan_input_name(p, 1), "");
    assert_string_equal(nnop_plan_input_name(p, 2),
                        "a_name_that_is_longer_than_the_forty_seven_byte");
    assert_null(nnop_plan_input_name(p, 3));
    assert_null(nnop_plan_input_name(p, -1));
    assert_null(nnop_plan_input_name(NULL, 0));
    assert_string_equal(nnop_plan_output_name(p, 0), "diff");
    assert_string_equal(nnop_plan_output_name(p, 1), "a_again");
    assert_string_equal(nnop_plan_output_name(p, 2), "act#3");
    assert_null(nnop_plan_output_name(p, 3));
    nnop_plan_destroy(p);
}

static void test_buffers_bound_by_name_run_right(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_plan *p = compile_named(ctx);
    float a[6], u[6], b[6], diff[6], again[6], act[6];
    const void *in[3];
    void *out[3];
    int i;
    nnop_test_fill_f32(a, 6, 1, -1.f, 1.f);
    nnop_test_fill_f32(u, 6, 2, -1.f, 1.f);
    nnop_test_fill_f32(b, 6, 3, -1.f, 1.f);
    nnop_test_poison(diff, sizeof diff);
    nnop_test_poison(again, sizeof again);
    nnop_test_poison(act, sizeof act);
    in[nnop_plan_input_index(p, long_name)] = b;
    in[nnop_plan_input_index(p, "a")] = a;
    in[nnop_plan_input_index(p, "")] = u;
    out[nnop_plan_output_index(p, "act#3")] = act;
    out[nnop_plan_output_index(p, "a_again")] = again;
    out[nnop_plan_output_index(p, "diff")] = diff;
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    for (i = 0; i < 6; i++) {
        assert_true(diff[i] == (a[i] > 0.f ? a[i] : 0.f) - b[i]);
        assert_true(again[i] == a[i]);
        assert_true(act[i] == (b[i] + u[i] > 0.f ? b[i] + u[i] : 0.f));
    }
    nnop_plan_destroy(p);
}

/* A lookup that misses is an answer, not a failure: the message of the failure before it
 * stays for the caller to read (a miss once replaced it with the list of names). */
static void test_miss_keeps_the_last_error(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_plan *p = compile_named(ctx);
    nnop_tensor_desc d;
    char before[512];
    assert_int_equal(nnop_plan_input_desc(p, 7, &d), NNOP_ERR_INVALID_ARGUMENT);
    snprintf(before, sizeof before, "%s", nnop_context_last_error(ctx));
    assert_non_null(strstr(before, "nnop_plan_input_desc"));
    assert_int_equal(nnop_plan_input_index(p, "nope"), -1);
    assert_int_equal(nnop_plan_output_index(p, "nope"), -1);
    assert_int_equal(nnop_plan_output_index(p, NULL), -1);
    assert_string_equal(nnop_context_last_error(ctx), before);
    /* and a hit does not clear it either: lookups leave the message alone */
    assert_int_equal(nnop_plan_input_index(p, "a"), 0);
    assert_string_equal(nnop_context_last_error(ctx), before);
    nnop_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_indices_by_name),
            cmocka_unit_test(test_buffers_bound_by_name_run_right),
            cmocka_unit_test(test_miss_keeps_the_last_error),
    };
    return cmocka_run_group_tests(tests, nnop_test_setup_cpu_context, nnop_test_teardown_context);
}
