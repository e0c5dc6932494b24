/* test_dw_norm_fits.c: when the CUDA backend's depthwise step takes the norm after it
 * (impl/depthwise.c, nnop__dw_norm_follows), without a GPU, on the partitions of ConvNeXt's
 * block head (relu -> 7x7 depthwise conv + bias -> layer norm over C -> 1x1 conv): it does
 * channels-last; it does not channels-first, for a norm over C, H, W, when the conv's output
 * is a graph output or has a second reader, nor for C = 384 read straight from a graph input
 * (a block of whole positions needs 4-element vectors there, and a caller's buffer may not be
 * aligned for them), while C = 96 from a graph input fits (lanes of one element); nor when the
 * norm has a pointwise chain after it (its own partition then takes that, in one pass). */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"
#include "plan_fixture.h"

enum { PLAIN, SHARED_OUT, SECOND_READER, OVER_CHW, GRAPH_INPUT, NORM_EPILOGUE };

/* x 1 x c x 9 x 9 -> [relu] -> dw 7x7 + bias -> norm -> 1x1 conv to 8 channels. */
static void build(plan_fixture *f, nnop_layout lay, int64_t c, int variant)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, lay, 1, c, 9, 9);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, lay, c, 1, 7, 7);
    nnop_tensor_desc pd = nnop_tensor_4d(NNOP_F16, lay, 8, c, 1, 1);
    nnop_tensor_desc vd = nnop_tensor_1d(NNOP_F16, c);
    nnop_conv_params dw = {{3, 3}, {1, 1}, {1, 1}, c}, pw = {{0, 0}, {1, 1}, {1, 1}, 1};
    nnop_value x, y, z;
    fixture_begin(f);
    x = nnop_input(f->g, "x", &xd);
    if (variant != GRAPH_INPUT)
        x = nnop_act(f->g, x, NNOP_ACT_RELU, 0);
    y = nnop_bias(f->g, nnop_conv(f->g, x, fixture_zeros(f, "w", &wd), &dw),
                  fixture_zeros(f, "b", &vd));
    if (variant == SHARED_OUT)
        assert_int_equal(nnop_output(f->g, y, "conv"), NNOP_OK);
    if (variant == OVER_CHW)
        z = nnop_layer_norm(f->g, y, nnop_none(), nnop_none(), NNOP_NORM_CHW, 1e-6f);
    else
        z = nnop_layer_norm(f->g, y, fixture_zeros(f, "g", &vd), fixture_zeros(f, "beta", &vd),
                            NNOP_NORM_C, 1e-6f);
    if (variant == SECOND_READER)
        z = nnop_add(f->g, z, y);
    if (variant == NORM_EPILOGUE) /* the norm's partition takes the GELU */
        z = nnop_act(f->g, z, NNOP_ACT_GELU, 0.0f);
    z = nnop_conv(f->g, z, fixture_zeros(f, "pw", &pd), &pw);
    assert_int_equal(nnop_output(f->g, z, "y"), NNOP_OK);
    fixture_compile(f);
}

/* Whether the depthwise partition (the one starting with the 7x7 conv) takes the norm. */
static int takes_norm(const plan_fixture *f)
{
    int32_t i;
    for (i = 0; i < f->p->n_parts; i++) {
        const nnop__node *n = &f->p->g->nodes[f->p->parts[i].first];
        nnop__impl_try t;
        const char *why_not = "";
        if (n->op != NNOP_OP_CONV || n->attr.conv.groups == 1)
            continue;
        t = fixture_try(f, i);
        assert_true(nnop__impl_depthwise.fits(f->p, &t, &why_not));
        assert_int_equal(t.count, 2); /* conv + bias */
        return nnop__dw_norm_follows(f->p, &t, t.count - 1);
    }
    fail_msg("%s", "no depthwise partition");
    return 0;
}

static int case_takes_norm(nnop_layout lay, int64_t c, int variant)
{
    plan_fixture f;
    int r;
    build(&f, lay, c, variant);
    r = takes_norm(&f);
    fixture_end(&f);
    return r;
}

static void test_channels_last_block_takes_the_norm(void **state)
{
    (void)state;
    assert_true(case_takes_norm(NNOP_NHWC, 96, PLAIN));
    assert_true(case_takes_norm(NNOP_NHWC, 384, PLAIN));
    assert_true(case_takes_norm(NNOP_NHWC, 768, PLAIN));
    assert_true(case_takes_norm(NNOP_NHWC, 20, PLAIN));
    assert_true(case_takes_norm(NNOP_NHWC, 96, GRAPH_INPUT));
}

static void test_no_norm_where_the_block_differs(void **state)
{
    (void)state;
    assert_false(case_takes_norm(NNOP_NCHW, 96, PLAIN));
    assert_false(case_takes_norm(NNOP_NHWC, 96, SHARED_OUT));
    assert_false(case_takes_norm(NNOP_NHWC, 96, SECOND_READER));
    assert_false(case_takes_norm(NNOP_NHWC, 96, OVER_CHW));
    assert_false(case_takes_norm(NNOP_NHWC, 384, GRAPH_INPUT));
    assert_false(case_takes_norm(NNOP_NHWC, 99, PLAIN)); /* no block of whole positions */
    /* the norm heads a partition with its GELU: the norm kernel runs both in one pass, the
     * depthwise step leaves them (either way one tensor fewer goes through memory) */
    assert_false(case_takes_norm(NNOP_NHWC, 96, NORM_EPILOGUE));
}

/* A norm's partition is the norm and the pointwise chain after it. */
static void test_norm_partition_takes_its_chain(void **state)
{
    plan_fixture f;
    int32_t i, found = 0;
    (void)state;
    build(&f, NNOP_NHWC, 96, NORM_EPILOGUE);
    for (i = 0; i < f.p->n_parts; i++)
        if (f.p->g->nodes[f.p->parts[i].first].op == NNOP_OP_LAYER_NORM) {
            assert_int_equal(f.p->parts[i].count, 2);
            assert_int_equal(f.p->g->nodes[f.p->parts[i].first + 1].op, NNOP_OP_ACT);
            found = 1;
        }
    assert_true(found);
    fixture_end(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_channels_last_block_takes_the_norm),
            cmocka_unit_test(test_no_norm_where_the_block_differs),
            cmocka_unit_test(test_norm_partition_takes_its_chain),
    };
    return cmocka_run_group_tests_name("dw_norm_fits", tests, NULL, NULL);
}

#else /* a build without CUDA has no GPU steps */
static void test_dw_norm_fits_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_dw_norm_fits_needs_cuda_build)};
    return cmocka_run_group_tests_name("dw_norm_fits", tests, NULL, NULL);
}
#endif
