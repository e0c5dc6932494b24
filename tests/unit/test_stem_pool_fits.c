/* test_stem_pool_fits.c: when the CUDA backend's own stem kernel takes the max pool after it
 * (impl/stem.c, nnop__stem_pool_follows), without a GPU, on ResNet's head (7x7/2 conv + bias
 * + ReLU -> 3x3/2 max pool with padding 1 -> 1x1 conv): it does; it does not for another
 * window, stride or padding, for average pooling, when the conv's output is a graph output
 * or has a second reader, or channels-first. */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"
#include "plan_fixture.h"

enum { PLAIN, SHARED_OUT, SECOND_READER, AVG, WINDOW_2, STRIDE_1, PAD_0 };

/* x 1 x 3 x 32 x 32 -> 7x7/2 conv to 64 + bias -> relu -> pool -> 1x1 conv to 8 channels. */
static void build(plan_fixture *f, nnop_layout lay, int variant)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, lay, 1, 3, 32, 32);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, lay, 64, 3, 7, 7);
    nnop_tensor_desc pd = nnop_tensor_4d(NNOP_F16, lay, 8, 64, 1, 1);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F16, 64);
    nnop_conv_params stem = {{3, 3}, {2, 2}, {1, 1}, 1}, pw = {{0, 0}, {1, 1}, {1, 1}, 1};
    nnop_pool_params q = {{3, 3}, {2, 2}, {1, 1}, 0, {0, 0}};
    nnop_value y, z;
    fixture_begin(f);
    y = nnop_conv(f->g, nnop_input(f->g, "x", &xd), fixture_zeros(f, "w", &wd), &stem);
    y = nnop_act(f->g, nnop_bias(f->g, y, fixture_zeros(f, "b", &bd)), NNOP_ACT_RELU, 0);
    if (variant == SHARED_OUT)
        assert_int_equal(nnop_output(f->g, y, "stem"), NNOP_OK);
    q.window[1] = variant == WINDOW_2 ? 2 : 3;
    q.stride[0] = variant == STRIDE_1 ? 1 : 2;
    q.pad[1] = variant == PAD_0 ? 0 : 1;
    z = nnop_pool(f->g, y, variant == AVG ? NNOP_POOL_AVG : NNOP_POOL_MAX, &q);
    z = nnop_conv(f->g, z, fixture_zeros(f, "pw", &pd), &pw);
    if (variant == SECOND_READER)
        assert_int_equal(nnop_output(f->g, nnop_global_avg_pool(f->g, y), "gap"), NNOP_OK);
    assert_int_equal(nnop_output(f->g, z, "y"), NNOP_OK);
    fixture_compile(f);
}

/* Whether the stem's partition (the one starting with the 7x7 conv) takes the pool. */
static int takes_pool(const plan_fixture *f)
{
    int32_t i;
    for (i = 0; i < f->p->n_parts; i++) {
        const nnop__node *n = &f->p->g->nodes[f->p->parts[i].first];
        nnop__impl_try t;
        if (n->op != NNOP_OP_CONV)
            continue;
        t = fixture_try(f, i);
        assert_int_equal(t.count, 3); /* conv + bias + relu */
        return nnop__stem_pool_follows(f->p, &t);
    }
    fail_msg("%s", "no stem partition");
    return 0;
}

static int case_takes_pool(nnop_layout lay, int variant)
{
    plan_fixture f;
    int r;
    build(&f, lay, variant);
    r = takes_pool(&f);
    fixture_end(&f);
    return r;
}

static void test_resnet_head_takes_the_pool(void **state)
{
    (void)state;
    assert_true(case_takes_pool(NNOP_NHWC, PLAIN));
}

static void test_no_pool_where_the_head_differs(void **state)
{
    (void)state;
    assert_false(case_takes_pool(NNOP_NHWC, SHARED_OUT));
    assert_false(case_takes_pool(NNOP_NHWC, SECOND_READER));
    assert_false(case_takes_pool(NNOP_NHWC, AVG));
    assert_false(case_takes_pool(NNOP_NHWC, WINDOW_2));
    assert_false(case_takes_pool(NNOP_NHWC, STRIDE_1));
    assert_false(case_takes_pool(NNOP_NHWC, PAD_0));
    assert_false(case_takes_pool(NNOP_NCHW, PLAIN));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_resnet_head_takes_the_pool),
            cmocka_unit_test(test_no_pool_where_the_head_differs),
    };
    return cmocka_run_group_tests_name("stem_pool_fits", tests, NULL, NULL);
}

#else /* a build without CUDA has no GPU steps */
static void test_stem_pool_fits_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_stem_pool_fits_needs_cuda_build)};
    return cmocka_run_group_tests_name("stem_pool_fits", tests, NULL, NULL);
}
#endif
