/* test_concat_slices.c: which concat inputs the CUDA backend plans to have written straight
 * into their channel slices (impl/concat.c, nnop__concat_plan_slices), without a GPU:
 * channels-first at batch 1 every computed input's slice is contiguous, whoever else reads
 * it; strided slices (channels-last, or batch 2) are copied; so are graph inputs, a concat's
 * output, a value's second slice, a slice whose address is not 16-byte aligned, and every
 * input of a concat whose output is a graph output. */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"

enum { THREE_CONVS, MISALIGNED, INPUT_AND_TWICE, NESTED, CAT_IS_OUTPUT };

typedef struct fixture {
    nnop_context *ctx;
    nnop_graph *g;
    nnop_plan *p;
    struct nnop__cuda_plan cp;
    nnop_value in[4]; /* the concat's inputs (the outer concat's for NESTED) */
} fixture;

static nnop_value conv(fixture *f, nnop_layout lay, nnop_value x, int64_t k)
{
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, lay, k, 6, 3, 3);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    void *data = calloc((size_t)nnop_tensor_elements(&wd), 2);
    nnop_value y;
    assert_non_null(data);
    y = nnop_conv(f->g, x, nnop_constant(f->g, "w", &wd, data), &p);
    free(data);
    return y;
}

/* x n x 6 x 5 x 7 -> convs -> concat -> tanh -> output "y" (THREE_CONVS: a + b is output
 * "z" too, a second reader of both). */
static void build(fixture *f, nnop_layout lay, int64_t n, int variant)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, lay, n, 6, 5, 7);
    nnop_value x, a, b, y;
    f->ctx = nnop_test_cpu_context();
    assert_int_equal(nnop_graph_create(f->ctx, &f->g), NNOP_OK);
    x = nnop_input(f->g, "x", &xd);
    a = nnop_act(f->g, conv(f, lay, x, variant == MISALIGNED ? 3 : 8), NNOP_ACT_RELU, 0);
    b = conv(f, lay, x, 8);
    f->in[0] = a, f->in[1] = b;
    if (variant == THREE_CONVS || variant == MISALIGNED) {
        f->in[2] = nnop_act(f->g, b, NNOP_ACT_RELU, 0);
        y = nnop_concat(f->g, f->in, 3);
    } else if (variant == INPUT_AND_TWICE) {
        f->in[2] = a, f->in[3] = x;
        y = nnop_concat(f->g, f->in, 4);
    } else if (variant == NESTED) {
        f->in[0] = nnop_concat(f->g, f->in, 2);
        f->in[1] = nnop_act(f->g, b, NNOP_ACT_TANH, 0);
        y = nnop_concat(f->g, f->in, 2);
    } else {
        y = nnop_concat(f->g, f->in, 2);
        assert_int_equal(nnop_output(f->g, y, "cat"), NNOP_OK);
    }
    if (variant == THREE_CONVS)
        assert_int_equal(nnop_output(f->g, nnop_add(f->g, a, b), "z"), NNOP_OK);
    assert_int_equal(nnop_output(f->g, nnop_act(f->g, y, NNOP_ACT_TANH, 0), "y"), NNOP_OK);
    assert_int_equal(nnop_graph_status(f->g), NNOP_OK);
    assert_int_equal(nnop_graph_compile(f->g, NULL, &f->p), NNOP_OK);
    memset(&f->cp, 0, sizeof f->cp);
    f->p->cuda = &f->cp;
    assert_int_equal(nnop__concat_plan_slices(f->p), NNOP_OK);
}

static void destroy(fixture *f)
{
    nnop__free(f->cp.slice_in);
    nnop__free(f->cp.slice_off);
    f->p->cuda = NULL;
    nnop_plan_destroy(f->p);
    nnop_graph_destroy(f->g);
    nnop_context_destroy(f->ctx);
}

/* Whether input i lives in its slice. */
static int in_slice(const fixture *f, int i)
{
    return f->cp.slice_in[NNOP__VALUE_INDEX(f->in[i].id)] >= 0;
}

static void test_batch_one_channels_first_slices_are_contiguous(void **state)
{
    fixture f;
    (void)state;
    build(&f, NNOP_NCHW, 1, THREE_CONVS);
    assert_true(in_slice(&f, 0));
    assert_true(in_slice(&f, 1));
    assert_true(in_slice(&f, 2));
    assert_int_equal(f.cp.slice_off[NNOP__VALUE_INDEX(f.in[1].id)], 8 * 5 * 7);
    assert_int_equal(f.cp.slice_off[NNOP__VALUE_INDEX(f.in[2].id)], 16 * 5 * 7);
    destroy(&f);
}

static void test_strided_slices_are_copied(void **state)
{
    fixture f;
    (void)state;
    build(&f, NNOP_NHWC, 1, THREE_CONVS);
    assert_false(in_slice(&f, 0));
    assert_false(in_slice(&f, 1));
    assert_false(in_slice(&f, 2));
    destroy(&f);
    build(&f, NNOP_NCHW, 2, THREE_CONVS);
    assert_false(in_slice(&f, 0));
    assert_false(in_slice(&f, 2));
    destroy(&f);
}

static void test_no_slice_where_it_cannot_be_shared(void **state)
{
    fixture f;
    (void)state;
    build(&f, NNOP_NCHW, 1, MISALIGNED); /* b at 3 x 35 halves: 210 bytes */
    assert_true(in_slice(&f, 0));
    assert_false(in_slice(&f, 1));
    assert_false(in_slice(&f, 2)); /* 11 x 35 halves */
    destroy(&f);
    build(&f, NNOP_NCHW, 1, INPUT_AND_TWICE); /* a, b, a, x: a's first slice; x the caller's */
    assert_true(in_slice(&f, 0));
    assert_int_equal(f.cp.slice_off[NNOP__VALUE_INDEX(f.in[0].id)], 0);
    assert_true(in_slice(&f, 1));
    assert_false(in_slice(&f, 3));
    destroy(&f);
    build(&f, NNOP_NCHW, 1, NESTED); /* the inner concat lives in no slice; its inputs do */
    assert_false(in_slice(&f, 0));
    assert_true(in_slice(&f, 1));
    assert_int_equal(f.cp.slice_in[NNOP__VALUE_INDEX(f.in[1].id)],
                     f.g->nodes[f.g->n_nodes - 2].out);
    destroy(&f);
    build(&f, NNOP_NCHW, 1, CAT_IS_OUTPUT); /* the caller's memory, bound only at execute */
    assert_false(in_slice(&f, 0));
    assert_false(in_slice(&f, 1));
    destroy(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_batch_one_channels_first_slices_are_contiguous),
            cmocka_unit_test(test_strided_slices_are_copied),
            cmocka_unit_test(test_no_slice_where_it_cannot_be_shared),
    };
    return cmocka_run_group_tests_name("concat_slices", tests, NULL, NULL);
}

#else /* a build without CUDA has no GPU steps */
static void test_concat_slices_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_concat_slices_needs_cuda_build)};
    return cmocka_run_group_tests_name("concat_slices", tests, NULL, NULL);
}
#endif
