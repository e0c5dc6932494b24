/* test_gate_fits.c: which partitions the CUDA backend's squeeze-excitation gate entry takes
 * (impl/gate.c, nnop__impl_gate.fits), without a GPU, on the partitions of a real block
 * (pool -> 1x1 conv + bias + SiLU -> 1x1 conv + bias + sigmoid -> multiply): channels-last,
 * the pool's partition (the step pools too); channels-first, the first conv's (the pool is a
 * step of its own); never the second conv's (no conv after it) nor the multiply's; none when
 * the hidden value is also a graph output, when the first conv is 3x3 on a 3x3 image, or when
 * the weights are inputs rather than constants. */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/impl/impl.h"
#include "plan_fixture.h"

enum { PLAIN, HIDDEN_OUT, WIDE_CONV, INPUT_WEIGHTS };

static nnop_value weights(plan_fixture *f, const char *name, int64_t k, int64_t c, int64_t r,
                          nnop_layout lay, int as_input)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F16, lay, k, c, r, r);
    return as_input ? nnop_input(f->g, name, &d) : fixture_zeros(f, name, &d);
}

static nnop_value bias(plan_fixture *f, const char *name, nnop_value x, int64_t k)
{
    nnop_tensor_desc d = nnop_tensor_1d(NNOP_F16, k);
    return nnop_bias(f->g, x, fixture_zeros(f, name, &d));
}

/* x 2 x 32 x H x H -> pool -> 32 -> 8 -> 32 -> x * gate, compiled on the CPU backend (whose
 * partitions are the CUDA compile's before it builds them). */
static void build(plan_fixture *f, nnop_layout lay, int variant)
{
    const int64_t hw = variant == WIDE_CONV ? 3 : 7;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, lay, 2, 32, hw, hw);
    nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
    nnop_value x, s, h;
    fixture_begin(f);
    x = nnop_input(f->g, "x", &xd);
    s = variant == WIDE_CONV ? x : nnop_global_avg_pool(f->g, x);
    h = nnop_conv(
            f->g, s,
            weights(f, "w1", 8, 32, variant == WIDE_CONV ? 3 : 1, lay, variant == INPUT_WEIGHTS),
            &p);
    h = nnop_act(f->g, bias(f, "b1", h, 8), NNOP_ACT_SILU, 0.0f);
    if (variant == HIDDEN_OUT)
        assert_int_equal(nnop_output(f->g, h, "h"), NNOP_OK);
    s = nnop_conv(f->g, h, weights(f, "w2", 32, 8, 1, lay, variant == INPUT_WEIGHTS), &p);
    s = nnop_act(f->g, bias(f, "b2", s, 32), NNOP_ACT_SIGMOID, 0.0f);
    assert_int_equal(nnop_output(f->g, variant == WIDE_CONV ? s : nnop_mul(f->g, x, s), "y"),
                     NNOP_OK);
    fixture_compile(f);
}

/* Whether the gate entry takes partition i; why_not is set when it does not. */
static int fits(const plan_fixture *f, int32_t i)
{
    nnop__impl_try t = fixture_try(f, i);
    const char *why_not = "";
    int ok = nnop__impl_gate.fits(f->p, &t, &why_not);
    assert_true(ok || strlen(why_not) > 0);
    return ok;
}

static void test_channels_last_block_takes_the_pool(void **state)
{
    plan_fixture f;
    (void)state;
    build(&f, NNOP_NHWC, PLAIN);
    assert_int_equal(f.p->n_parts, 4); /* pool | conv+bias+act | conv+bias+act | mul */
    assert_true(fits(&f, 0));
    assert_true(fits(&f, 1)); /* offered alone (after a pool step of its own) it fits too */
    assert_false(fits(&f, 2));
    assert_false(fits(&f, 3));
    fixture_end(&f);
}

static void test_channels_first_block_leaves_the_pool(void **state)
{
    plan_fixture f;
    (void)state;
    build(&f, NNOP_NCHW, PLAIN);
    assert_int_equal(f.p->n_parts, 4);
    assert_false(fits(&f, 0));
    assert_true(fits(&f, 1));
    assert_false(fits(&f, 2));
    fixture_end(&f);
}

static void test_no_gate_where_the_block_differs(void **state)
{
    static const int variants[] = {HIDDEN_OUT, WIDE_CONV, INPUT_WEIGHTS};
    int v;
    int32_t i;
    (void)state;
    for (v = 0; v < 3; v++) {
        plan_fixture f;
        build(&f, NNOP_NHWC, variants[v]);
        for (i = 0; i < f.p->n_parts; i++)
            if (fits(&f, i))
                fail_msg("variant %d: the gate took partition %d", variants[v], (int)i);
        fixture_end(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_channels_last_block_takes_the_pool),
            cmocka_unit_test(test_channels_first_block_leaves_the_pool),
            cmocka_unit_test(test_no_gate_where_the_block_differs),
    };
    return cmocka_run_group_tests_name("gate_fits", tests, NULL, NULL);
}

#else /* a build without CUDA has no GPU steps */
static void test_gate_fits_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gate_fits_needs_cuda_build)};
    return cmocka_run_group_tests_name("gate_fits", tests, NULL, NULL);
}
#endif
