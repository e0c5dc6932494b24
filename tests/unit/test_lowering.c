/* test_lowering.c: lowering to cuDNN backend descriptors up to finalize, without a GPU
 * (tensor, convolution, matmul and pointwise descriptors finalize on a CPU-only machine;
 * the operation graph needs a handle and is left to the GPU tests): canonical epilogue
 * order, real vs virtual tensors, every activation, refusal of runtime batch-norm, of the
 * activations cuDNN has no mode for and of multiplies by tensors; constant layer scales; the
 * rules that keep runtime-compiled engines off a step. */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/lower/lower.h"

typedef struct fixture {
    nnop_context *ctx;
    nnop_graph *g;
    nnop_plan *p;
} fixture;

/* Compile g on the CPU backend and give the plan an empty CUDA slot table, so the lowering
 * functions can run on it (nothing may be uploaded: no device). The plan's graph borrows the
 * constants' host data back from g, as it holds it during a CUDA compile. */
static void attach(fixture *f)
{
    struct nnop__cuda_plan *cp;
    int32_t i;
    assert_int_equal(nnop_graph_compile(f->g, NULL, &f->p), NNOP_OK);
    for (i = 0; i < f->g->n_values; i++)
        f->p->g->values[i].data = f->g->values[i].data;
    cp = (struct nnop__cuda_plan *)calloc(1, sizeof *cp);
    assert_non_null(cp);
    cp->cap_slots = cp->n_slots = f->p->g->n_values;
    cp->slot = (void **)calloc((size_t)cp->cap_slots, sizeof *cp->slot);
    f->p->cuda = cp;
}

static void detach(fixture *f)
{
    free(f->p->cuda->slot);
    free(f->p->cuda);
    f->p->cuda = NULL;
    nnop_plan_destroy(f->p);
    nnop_graph_destroy(f->g);
    nnop_context_destroy(f->ctx);
}

static nnop_value conv_in(fixture *f, nnop_layout lay)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, lay, 2, 16, 10, 10);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, lay, 32, 16, 3, 3);
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    f->ctx = nnop_test_cpu_context();
    assert_int_equal(nnop_graph_create(f->ctx, &f->g), NNOP_OK);
    return nnop_conv(f->g, nnop_input(f->g, "x", &xd), nnop_input(f->g, "w", &wd), &p);
}

/* conv -> bias -> add Z -> relu lowers as conv -> add Z -> add bias -> relu. */
static void test_lowering_residual_moves_before_bias(void **state)
{
    fixture f;
    nnop_tensor_desc kd = nnop_tensor_1d(NNOP_F16, 32), yd;
    nnop__chain c;
    nnop__dnn_step *s = (nnop__dnn_step *)calloc(1, sizeof *s);
    nnop_value y;
    (void)state;
    y = conv_in(&f, NNOP_NHWC);
    y = nnop_bias(f.g, y, nnop_input(f.g, "b", &kd));
    assert_int_equal(nnop_value_desc(f.g, y, &yd), NNOP_OK);
    y = nnop_add(f.g, y, nnop_input(f.g, "z", &yd));
    y = nnop_act(f.g, y, NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(f.g, y, "y"), NNOP_OK);
    attach(&f);
    assert_int_equal(nnop__chain_build(f.p, 0, 4, 1, &c), NNOP_OK);
    assert_int_equal(c.n_ops, 3);
    assert_int_equal(c.ops[0].kind, NNOP_EPI_ADD);
    assert_int_equal(c.ops[1].kind, NNOP_EPI_BIAS);
    assert_int_equal(c.ops[2].kind, NNOP_EPI_ACT);
    assert_int_equal(nnop__lower_chain(f.p, &c, s), NNOP_OK);
    assert_int_equal(s->n_ops, 4); /* conv, add, add, relu */
    assert_int_equal(s->n_io, 5);  /* x, w, z, bias, y real; 3 virtual intermediates */
    assert_true(s->is_conv);
    nnop__chain_free(&c);
    nnop__dnn_step_destroy(s);
    detach(&f);
}

/* A clamp with a nonzero lower bound is not lowered: fused engines dropped that bound. */
static void test_lowering_refuses_clamp_with_nonzero_lo(void **state)
{
    fixture f;
    nnop__chain c;
    nnop__dnn_step *s = (nnop__dnn_step *)calloc(1, sizeof *s);
    nnop_value y = conv_in(&f, NNOP_NHWC);
    (void)state;
    y = nnop_clamp(f.g, y, -1.0f, 1.0f);
    assert_int_equal(nnop_output(f.g, y, "y"), NNOP_OK);
    attach(&f);
    assert_int_equal(nnop__chain_build(f.p, 0, 2, 1, &c), NNOP_OK);
    assert_int_equal(nnop__lower_chain(f.p, &c, s), NNOP_ERR_UNSUPPORTED);
    NNOP_TEST_ASSERT_ERROR(f.ctx, "clamp with lo = -1");
    nnop__chain_free(&c);
    nnop__dnn_step_destroy(s);
    detach(&f);
}

static void lower_act(nnop_act_kind k, nnop_layout lay)
{
    fixture f;
    nnop__chain c;
    nnop__dnn_step *s = (nnop__dnn_step *)calloc(1, sizeof *s);
    nnop_value y = conv_in(&f, lay);
    y = k == NNOP_ACT_CLAMP ? nnop_clamp(f.g, y, 0.0f, 1.0f) : nnop_act(f.g, y, k, 0.5f);
    assert_int_equal(nnop_output(f.g, y, "y"), NNOP_OK);
    attach(&f);
    assert_int_equal(nnop__chain_build(f.p, 0, 2, 1, &c), NNOP_OK);
    assert_int_equal(c.n_ops, k == NNOP_ACT_IDENTITY ? 0 : 1);
    if (nnop__lower_chain(f.p, &c, s) != NNOP_OK)
        fail_msg("activation %d: %s", (int)k, nnop_context_last_error(f.ctx));
    assert_int_equal(s->n_ops, k == NNOP_ACT_IDENTITY ? 1 : 2);
    assert_int_equal(s->n_io, 3);
    nnop__chain_free(&c);
    nnop__dnn_step_destroy(s);
    detach(&f);
}

static void test_lowering_every_activation_finalizes(void **state)
{
    int k;
    (void)state;
    for (k = NNOP_ACT_IDENTITY; k <= NNOP_ACT_ELU; k++) {
        lower_act((nnop_act_kind)k, NNOP_NHWC);
        lower_act((nnop_act_kind)k, NNOP_NCHW);
    }
}

static void test_lowering_linear_with_bias_is_matmul_add(void **state)
{
    fixture f;
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 4, 64), wd = nnop_tensor_2d(NNOP_F32, 10, 64);
    nnop_tensor_desc bd = nnop_tensor_1d(NNOP_F32, 10);
    nnop__chain c;
    nnop__dnn_step *s = (nnop__dnn_step *)calloc(1, sizeof *s);
    nnop_value y;
    (void)state;
    f.ctx = nnop_test_cpu_context();
    assert_int_equal(nnop_graph_create(f.ctx, &f.g), NNOP_OK);
    y = nnop_linear(f.g, nnop_input(f.g, "x", &xd), nnop_input(f.g, "w", &wd),
                    nnop_input(f.g, "b", &bd));
    assert_int_equal(nnop_output(f.g, nnop_act(f.g, y, NNOP_ACT_GELU, 0.0f), "y"), NNOP_OK);
    attach(&f);
    assert_int_equal(nnop__chain_build(f.p, 0, 2, 1, &c), NNOP_OK);
    assert_int_equal(c.n_ops, 2);
    assert_int_equal(c.ops[0].kind, NNOP_EPI_BIAS);
    assert_int_equal(nnop__lower_chain(f.p, &c, s), NNOP_OK);
    assert_int_equal(s->n_ops, 3); /* matmul, add bias, gelu */
    assert_int_equal(s->n_io, 4);
    assert_false(s->is_conv);
    assert_true(s->fp32);
    nnop__chain_free(&c);
    nnop__dnn_step_destroy(s);
    detach(&f);
}

static void test_lowering_refuses_runtime_batchnorm(void **state)
{
    fixture f;
    nnop_tensor_desc kd = nnop_tensor_1d(NNOP_F16, 32);
    nnop__chain c;
    nnop__dnn_step *s = (nnop__dnn_step *)calloc(1, sizeof *s);
    nnop_value y;
    (void)state;
    y = conv_in(&f, NNOP_NHWC);
    y = nnop_batchnorm(f.g, y, nnop_input(f.g, "g", &kd), nnop_input(f.g, "b", &kd),
                       nnop_input(f.g, "m", &kd), nnop_input(f.g, "v", &kd), 1e-5f);
    assert_int_equal(nnop_output(f.g, y, "y"), NNOP_OK);
    attach(&f);
    assert_int_equal(nnop__chain_build(f.p, 0, 2, 1, &c), NNOP_OK);
    assert_int_equal(c.ops[0].kind, NNOP_EPI_BN);
    assert_int_equal(nnop__lower_chain(f.p, &c, s), NNOP_ERR_UNSUPPORTED);
    assert_non_null(strstr(nnop_context_last_error(f.ctx), "batch-norm"));
    nnop__chain_free(&c);
    nnop__dnn_step_destroy(s);
    detach(&f);
}

/* Activations cuDNN has no pointwise mode for are refused by name (the cuDNN prefix entry then
 * splits them off to the own epilogue kernel), never lowered as identity. */
static void test_lowering_refuses_modeless_activations(void **state)
{
    static const nnop_act_kind kinds[] = {NNOP_ACT_HARDSWISH, NNOP_ACT_HARDSIGMOID, NNOP_ACT_MISH};
    static const char *const names[] = {"hard-swish", "hard-sigmoid", "mish"};
    int i;
    (void)state;
    for (i = 0; i < 3; i++) {
        fixture f;
        nnop__chain c;
        nnop__dnn_step *s = (nnop__dnn_step *)calloc(1, sizeof *s);
        char want[96];
        nnop_value y = conv_in(&f, NNOP_NHWC);
        y = nnop_act(f.g, y, kinds[i], 0.0f);
        assert_int_equal(nnop_output(f.g, y, "y"), NNOP_OK);
        attach(&f);
        assert_int_equal(nnop__chain_build(f.p, 0, 2, 1, &c), NNOP_OK);
        assert_int_equal(c.ops[0].kind, NNOP_EPI_ACT);
        assert_int_equal(nnop__lower_chain(f.p, &c, s), NNOP_ERR_UNSUPPORTED);
        snprintf(want, sizeof want, "activation %s has no cuDNN pointwise mode", names[i]);
        NNOP_TEST_ASSERT_ERROR(f.ctx, want);
        nnop__chain_free(&c);
        nnop__dnn_step_destroy(s);
        detach(&f);
    }
}

/* conv -> op(b) for b a runtime tensor of shape bd: the chain op and its operand indexing. */
static void binary_chain(nnop_op_kind op, const nnop_tensor_desc *bd, int want_kind, int want_bmode)
{
    fixture f;
    nnop__chain c;
    nnop__dnn_step *s = (nnop__dnn_step *)calloc(1, sizeof *s);
    nnop_value y = conv_in(&f, NNOP_NHWC), b = nnop_input(f.g, "b", bd);
    y = op == NNOP_OP_MUL   ? nnop_mul(f.g, y, b)
        : op == NNOP_OP_SUB ? nnop_sub(f.g, y, b)
                            : nnop_div(f.g, y, b);
    assert_int_equal(nnop_output(f.g, y, "y"), NNOP_OK);
    attach(&f);
    assert_int_equal(nnop__chain_build(f.p, 0, 2, 1, &c), NNOP_OK);
    assert_int_equal(c.n_ops, 1);
    assert_int_equal(c.ops[0].kind, want_kind);
    assert_int_equal(c.ops[0].bmode, want_bmode);
    assert_int_equal(c.ops[0].xsn, 32 * 10 * 10); /* the conv output, 2 x 32 x 10 x 10 NHWC */
    assert_int_equal(c.ops[0].bsn, bd->strides[0]);
    assert_int_equal(c.ops[0].bsc, bd->strides[1]);
    assert_int_equal(nnop__lower_chain(f.p, &c, s), NNOP_ERR_UNSUPPORTED);
    NNOP_TEST_ASSERT_ERROR(f.ctx, "is not lowered to cuDNN");
    nnop__chain_free(&c);
    nnop__dnn_step_destroy(s);
    detach(&f);
}

static void test_lowering_binary_ops_by_tensors_split_off(void **state)
{
    nnop_tensor_desc same = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 32, 10, 10);
    nnop_tensor_desc per_sample = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 32, 1, 1);
    nnop_tensor_desc per_channel = nnop_tensor_4d(NNOP_F16, NNOP_NCHW, 1, 32, 1, 1);
    (void)state;
    binary_chain(NNOP_OP_MUL, &per_sample, NNOP_EPI_MUL, NNOP_BCAST_SAMPLE);
    binary_chain(NNOP_OP_SUB, &same, NNOP_EPI_SUB, NNOP_BCAST_NONE);
    binary_chain(NNOP_OP_DIV, &per_channel, NNOP_EPI_DIV, NNOP_BCAST_CHANNEL);
    binary_chain(NNOP_OP_MUL, &per_channel, NNOP_EPI_MUL, NNOP_BCAST_CHANNEL); /* runtime b */
}

/* A multiply by a constant 1,C,1,1 (layer scale) is a scale with shift 0, a subtract of one a
 * bias of -b: both fold into constant weights like batch-norm. */
static void test_lowering_constant_channel_mul_and_sub_are_affine(void **state)
{
    float vals[32];
    uint16_t packed[32]; /* f16: the values are exact */
    nnop_tensor_desc gd = nnop_tensor_4d(NNOP_F16, NNOP_NCHW, 1, 32, 1, 1);
    int op, k;
    (void)state;
    for (k = 0; k < 32; k++)
        vals[k] = 0.25f * (float)(k + 1);
    for (op = 0; op < 2; op++) {
        fixture f;
        nnop__chain c;
        nnop_value y = conv_in(&f, NNOP_NCHW), b;
        nnop_test_pack(&gd, vals, packed);
        b = nnop_constant(f.g, "g", &gd, packed);
        y = op == 0 ? nnop_mul(f.g, y, b) : nnop_sub(f.g, y, b);
        assert_int_equal(nnop_output(f.g, y, "y"), NNOP_OK);
        attach(&f);
        if (nnop__chain_build(f.p, 0, 2, 0, &c) != NNOP_OK)
            fail_msg("%s", nnop_context_last_error(f.ctx));
        assert_int_equal(c.n_ops, 1);
        assert_int_equal(c.ops[0].kind, op == 0 ? NNOP_EPI_SCALE_SHIFT : NNOP_EPI_BIAS);
        assert_int_equal(c.ops[0].slot[0], -1);
        for (k = 0; k < 32; k++) {
            assert_true(c.ops[0].host[0][k] == (op == 0 ? vals[k] : -vals[k]));
            if (op == 0)
                assert_true(c.ops[0].host[1][k] == 0.0f);
        }
        nnop__chain_free(&c);
        detach(&f);
    }
}

/* rtc_unsafe of conv (2 x C x H x W, K, R x R) + SiLU lowered in dtype dt and layout lay. */
static int rtc_mark(nnop_dtype dt, nnop_layout lay, int C, int H, int K, int R)
{
    fixture f;
    nnop__chain c;
    nnop__dnn_step *s = (nnop__dnn_step *)calloc(1, sizeof *s);
    nnop_tensor_desc xd = nnop_tensor_4d(dt, lay, 2, C, H, H);
    nnop_tensor_desc wd = nnop_tensor_4d(dt, lay, K, C, R, R);
    nnop_conv_params p = {{R / 2, R / 2}, {1, 1}, {1, 1}, 1};
    nnop_value y;
    int mark;
    assert_non_null(s);
    f.ctx = nnop_test_cpu_context();
    assert_int_equal(nnop_graph_create(f.ctx, &f.g), NNOP_OK);
    y = nnop_conv(f.g, nnop_input(f.g, "x", &xd), nnop_input(f.g, "w", &wd), &p);
    y = nnop_act(f.g, y, NNOP_ACT_SILU, 0.0f);
    assert_int_equal(nnop_output(f.g, y, "y"), NNOP_OK);
    attach(&f);
    assert_int_equal(nnop__chain_build(f.p, 0, 2, 1, &c), NNOP_OK);
    if (nnop__lower_chain(f.p, &c, s) != NNOP_OK)
        fail_msg("%s", nnop_context_last_error(f.ctx));
    mark = s->rtc_unsafe;
    nnop__chain_free(&c);
    nnop__dnn_step_destroy(s);
    detach(&f);
    return mark;
}

/* Which steps take no runtime-compiled engine, and why: issue 10's shape class (16-bit, C or
 * K not a multiple of 8, NCHW with H x W > 1, a batch of 1x1 images) wins over the 16-bit 1x1
 * conv rule; a 1x1 filter [K, C, 1, 1] is not a batch of 1x1 images; fp32 is never marked. */
static void test_lowering_runtime_compiled_rules(void **state)
{
    (void)state;
    assert_int_equal(rtc_mark(NNOP_F16, NNOP_NHWC, 16, 10, 32, 3), 0);
    assert_int_equal(rtc_mark(NNOP_BF16, NNOP_NHWC, 16, 10, 32, 1), NNOP_RTC_1X1);
    assert_int_equal(rtc_mark(NNOP_F16, NNOP_NHWC, 16, 10, 32, 1), NNOP_RTC_1X1);
    assert_int_equal(rtc_mark(NNOP_F16, NNOP_NHWC, 12, 10, 32, 1), NNOP_RTC_UNSAFE);
    assert_int_equal(rtc_mark(NNOP_F16, NNOP_NHWC, 16, 10, 20, 3), NNOP_RTC_UNSAFE);
    assert_int_equal(rtc_mark(NNOP_F16, NNOP_NCHW, 16, 10, 32, 3), NNOP_RTC_UNSAFE);
    assert_int_equal(rtc_mark(NNOP_F16, NNOP_NHWC, 16, 1, 32, 3), NNOP_RTC_UNSAFE);
    assert_int_equal(rtc_mark(NNOP_F32, NNOP_NCHW, 12, 1, 20, 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_lowering_runtime_compiled_rules),
            cmocka_unit_test(test_lowering_refuses_modeless_activations),
            cmocka_unit_test(test_lowering_binary_ops_by_tensors_split_off),
            cmocka_unit_test(test_lowering_constant_channel_mul_and_sub_are_affine),
            cmocka_unit_test(test_lowering_residual_moves_before_bias),
            cmocka_unit_test(test_lowering_every_activation_finalizes),
            cmocka_unit_test(test_lowering_refuses_clamp_with_nonzero_lo),
            cmocka_unit_test(test_lowering_linear_with_bias_is_matmul_add),
            cmocka_unit_test(test_lowering_refuses_runtime_batchnorm),
    };
    return cmocka_run_group_tests_name("lowering", tests, NULL, NULL);
}

#else /* a build without CUDA has nothing to lower */
static void test_lowering_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lowering_needs_cuda_build)};
    return cmocka_run_group_tests_name("lowering", tests, NULL, NULL);
}
#endif
