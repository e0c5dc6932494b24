/* test_nnop_bench_parse.c: nnop-bench's problem descriptors: valid ones (fields, defaults,
 * the canonical form parsing back), invalid ones with their exact messages, problem files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "nb.h"

static void test_conv_full(void **state)
{
    nb_problem p;
    char err[256];
    (void)state;
    assert_int_equal(nb_parse("conv n32c64h56w56k64r3s3 p1 st1 dl1 g1 dt=f16 layout=nhwc "
                              "post=bias,bn,add,relu",
                              &p, err, sizeof err),
                     0);
    assert_int_equal(p.op, NB_OP_CONV);
    assert_true(p.n == 32 && p.c == 64 && p.h == 56 && p.w == 56 && p.k == 64);
    assert_true(p.r == 3 && p.s == 3 && p.pad[0] == 1 && p.pad[1] == 1 && p.groups == 1);
    assert_int_equal(p.dt, NNOP_F16);
    assert_int_equal(p.layout, NNOP_NHWC);
    assert_int_equal(p.npost, 4);
    assert_int_equal(p.post[0].kind, NB_POST_BIAS);
    assert_int_equal(p.post[1].kind, NB_POST_BN);
    assert_int_equal(p.post[2].kind, NB_POST_ADD);
    assert_int_equal(p.post[3].kind, NB_POST_ACT);
    assert_int_equal(p.post[3].act, NNOP_ACT_RELU);
}

static void test_defaults_and_pairs(void **state)
{
    nb_problem p;
    char err[256];
    (void)state;
    assert_int_equal(nb_parse("  conv\tn1c8h9k4r3  p1x0 st2x1 dl2 g2 ", &p, err, sizeof err), 0);
    assert_true(p.w == 9 && p.s == 3);
    assert_true(p.pad[0] == 1 && p.pad[1] == 0 && p.stride[0] == 2 && p.stride[1] == 1);
    assert_true(p.dil[0] == 2 && p.dil[1] == 2 && p.groups == 2);
    assert_int_equal(p.dt, NNOP_F32);
    assert_int_equal(p.layout, NNOP_NCHW);
    assert_int_equal(nb_parse("pool n1c3h7r3 avg incpad st2", &p, err, sizeof err), 0);
    assert_true(p.pool == NNOP_POOL_AVG && p.incpad == 1 && p.s == 3 && p.stride[0] == 2);
    assert_int_equal(nb_parse("softmax n4c10", &p, err, sizeof err), 0);
    assert_false(p.four_d);
    assert_int_equal(nb_parse("softmax n4c10h2w3", &p, err, sizeof err), 0);
    assert_true(p.four_d);
    assert_int_equal(nb_parse("linear n4c64k10 post=bias,leaky_relu:0.2,clamp:-1:2.5 name=fc", &p,
                              err, sizeof err),
                     0);
    assert_int_equal(p.npost, 3);
    assert_true(p.post[1].act == NNOP_ACT_LEAKY_RELU && p.post[1].a == 0.2f);
    assert_true(p.post[2].kind == NB_POST_CLAMP && p.post[2].a == -1.0f && p.post[2].b == 2.5f);
    assert_string_equal(p.name, "fc");
    assert_int_equal(nb_parse("gap n2c16h7w7 dt=bf16", &p, err, sizeof err), 0);
    assert_int_equal(nb_parse("flatten n2c3h4w4", &p, err, sizeof err), 0);
    assert_int_equal(
            nb_parse("eltwise n2c8h4 post=gelu,gelu_tanh,silu,elu:0.5", &p, err, sizeof err), 0);
}

static void test_format_round_trip(void **state)
{
    static const char *const in[] = {
            "conv n32c64h56w56k64r3s3 p1 st1 dl1 g1 dt=f16 layout=nhwc post=bias,bn,add,relu",
            "conv n1c8h10w7k8r3s2 p1x0 st2x1 dl2 g2 dt=bf16 post=bn,silu",
            "pool n2c4h9w9r3 avg incpad st2 p1",
            "linear n4c64k10 post=bias,leaky_relu:0.2,clamp:-1:2.5 name=fc",
            "softmax n4c10 dt=f16",
            "softmax n2c5h3w3 layout=nhwc",
            "gap n2c16h7w7",
            "flatten n2c3h4w4",
            "eltwise n2c8h4w4 post=bias,bn,add,elu:0.5,relu6,identity",
            "deconv n1c6h4w7k9r2s3 p1 st2x1 dl1x2 g3 op1x0 dt=f16 layout=nhwc post=bias,relu",
            "norm n2c12h5w5 kind=group g4 eps=0.001 post=silu,mul",
            "norm n3c7h1w1 kind=rms eps=1e-06",
            "norm n2c12h5w5 kind=layer_chw",
            "resize n2c3h5w7 bilinear align size=9x4",
            "resize n2c3h5w7 nearest scale=1.5",
            "resize n2c3h5w7 bilinear scale=2x0.5 post=hardswish"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof in / sizeof in[0]; i++) {
        nb_problem a, b;
        char err[256], canon[512], again[512];
        assert_int_equal(nb_parse(in[i], &a, err, sizeof err), 0);
        nb_format(&a, canon, sizeof canon);
        if (nb_parse(canon, &b, err, sizeof err) != 0)
            fail_msg("'%s' -> '%s': %s", in[i], canon, err);
        nb_format(&b, again, sizeof again);
        assert_string_equal(canon, again);
        assert_memory_equal(&a, &b, sizeof a);
    }
}

static void expect_error(const char *text, const char *msg)
{
    nb_problem p;
    char err[512] = "";
    if (nb_parse(text, &p, err, sizeof err) == 0)
        fail_msg("'%s' parsed, expected '%s'", text ? text : "(null)", msg);
    if (strcmp(err, msg) != 0)
        fail_msg("'%s': got '%s', expected '%s'", text ? text : "(null)", err, msg);
}

/* The issue-15 ops: transposed conv, the norms, resize, and the SE multiply. */
static void test_new_ops(void **state)
{
    nb_problem p;
    char err[256];
    (void)state;
    assert_int_equal(nb_parse("deconv n1c8h5w5k6r3 st2 p1 op1x0 g2", &p, err, sizeof err), 0);
    assert_true(p.op == NB_OP_DECONV && p.k == 6 && p.s == 3 && p.groups == 2);
    assert_true(p.out_pad[0] == 1 && p.out_pad[1] == 0 && p.stride[1] == 2);
    assert_int_equal(nb_deconv_out(&p, 0), 10);
    assert_int_equal(nb_deconv_out(&p, 1), 9);
    assert_int_equal(nb_parse("norm n2c12h5w5 kind=group g4 eps=0.01", &p, err, sizeof err), 0);
    assert_true(p.norm == NB_NORM_GROUP && p.groups == 4 && p.eps == 0.01f);
    assert_int_equal(nb_parse("norm n2c12h5", &p, err, sizeof err), 0);
    assert_true(p.norm == NB_NORM_LAYER && p.eps == 1e-5f && p.w == 5);
    assert_int_equal(nb_parse("resize n1c3h5w7 bilinear align size=9x4", &p, err, sizeof err), 0);
    assert_true(p.resize == NNOP_RESIZE_BILINEAR && p.align && p.size[0] == 9 && p.size[1] == 4);
    assert_int_equal(nb_parse("resize n1c3h5w7 scale=1.5x2", &p, err, sizeof err), 0);
    assert_true(p.resize == NNOP_RESIZE_NEAREST && p.scale[0] == 1.5 && p.scale[1] == 2.0);
    assert_int_equal(nb_resize_out(&p, 0), 7);
    assert_int_equal(nb_resize_out(&p, 1), 14);
    assert_int_equal(nb_parse("conv n1c8h6k8r3 post=bias,mul,hardswish", &p, err, sizeof err), 0);
    assert_true(p.post[1].kind == NB_POST_MUL && p.post[2].act == NNOP_ACT_HARDSWISH);
    expect_error("deconv n1c8h5k6r3 op1x",
                 "deconv: bad output padding 'op1x' (op<n> or op<h>x<w>)");
    expect_error("conv n1c8h5k6r3 op1", "conv: option 'op1' does not apply to conv");
    expect_error("deconv n1c8h5k6r3 g4", "deconv: groups 4 must divide c 8 and k 6");
    expect_error("norm n1c8h5 kind=batch",
                 "norm: unknown kind 'batch' (layer, layer_chw, group or rms)");
    expect_error("norm n1c8h5 eps=-1", "norm: bad eps '-1' (a number >= 0)");
    expect_error("norm n1c8h5 kind=group g3", "norm: groups 3 must divide c 8");
    expect_error("norm n1c8h5 g2", "norm: g2 needs kind=group");
    expect_error("conv n1c8h5k6r3 kind=rms", "conv: unknown option 'kind='");
    expect_error("resize n1c3h5 size=0x2", "resize: bad size '0x2' (size=<n> or size=<h>x<w>)");
    expect_error("resize n1c3h5 scale=0", "resize: bad scale (scale=<s> or scale=<h>x<w>, > 0)");
    expect_error("resize n1c3h5 align", "resize: align needs bilinear");
    expect_error("resize n1c3h5 p1", "resize: option 'p1' does not apply to resize");
}

static void test_invalid_messages(void **state)
{
    (void)state;
    expect_error(NULL, "empty descriptor");
    expect_error("   ", "empty descriptor");
    expect_error("matmul n1c2k3", "unknown op 'matmul' (conv, pool, gap, linear, softmax, "
                                  "flatten, eltwise, deconv, norm or resize)");
    expect_error("conv p1", "conv: missing shape (e.g. n32c64h56w56k64r3s3)");
    expect_error("conv n1c3h8w8", "conv: dimension 'k' missing in 'n1c3h8w8' "
                                  "(e.g. n32c64h56w56k64r3s3)");
    expect_error("conv n1c3h8k4r3q2", "conv: 'q' is not a dimension of conv (nchwkrs)");
    expect_error("linear n1c3h8k4", "linear: 'h' is not a dimension of linear (nck)");
    expect_error("conv n1c3c4h8k4r3", "conv: dimension 'c' given twice in 'n1c3c4h8k4r3'");
    expect_error("conv n1ch8k4r3", "conv: expected a number after 'c' in 'n1ch8k4r3'");
    expect_error("conv n1c0h8k4r3", "conv: dimension 'c' must be from 1 to 2^40 in 'n1c0h8k4r3'");
    expect_error("conv n1c3-h8k4r3", "conv: unexpected '-' in shape 'n1c3-h8k4r3'");
    expect_error("conv n1c3h8k4r3 dt=f64", "conv: unknown dtype 'f64' (f32, f16 or bf16)");
    expect_error("conv n1c3h8k4r3 layout=chwn", "conv: unknown layout 'chwn' (nchw or nhwc)");
    expect_error("conv n1c3h8k4r3 foo=1", "conv: unknown option 'foo='");
    expect_error("conv n1c3h8k4r3 fast", "conv: unknown option 'fast'");
    expect_error("conv n1c3h8k4r3 p1x", "conv: bad padding 'p1x' (p<n> or p<h>x<w>)");
    expect_error("conv n1c3h8k4r3 st0", "conv: bad stride 'st0' (st<n> or st<h>x<w>, >= 1)");
    expect_error("conv n1c3h8k4r3 dl0", "conv: bad dilation 'dl0' (dl<n> or dl<h>x<w>, >= 1)");
    expect_error("conv n1c3h8k4r3 g0", "conv: bad groups 'g0' (g<n>, >= 1)");
    expect_error("conv n1c6h8k4r3 g3", "conv: groups 3 must divide c 6 and k 4");
    expect_error("pool n1c3h8r3 g2", "pool: option 'g2' does not apply to pool");
    expect_error("gap n1c3h8 p1", "gap: option 'p1' does not apply to gap");
    expect_error("conv n1c3h8k4r3 post=bias,swish",
                 "conv: unknown post-op 'swish' (bias, bn, add, mul, clamp:lo:hi, identity, relu, "
                 "relu6, leaky_relu[:a], gelu, gelu_tanh, sigmoid, tanh, silu, elu[:a], "
                 "hardswish, hardsigmoid, mish)");
    expect_error("conv n1c3h8k4r3 post=clamp:1", "conv: clamp needs clamp:lo:hi");
    expect_error("conv n1c3h8k4r3 post=clamp:a:1", "conv: bad number in clamp:a:1");
    expect_error("conv n1c3h8k4r3 post=relu:1", "conv: post-op 'relu' takes no parameter");
    expect_error("conv n1c3h8k4r3 post=bias,,relu", "conv: empty post-op in post=");
    expect_error("conv n1c3h8k4r3 post=relu,relu,relu,relu,relu,relu,relu,relu,relu",
                 "conv: more than 8 post-ops");
    expect_error("softmax n4c10w3", "softmax: dimension 'h' missing in 'n4c10w3' (e.g. n32c1000)");
    expect_error("conv n1c3h8k4r3 name=", "conv: name must have 1 to 63 characters");
}

static void test_problem_file(void **state)
{
    const char *path = "nnop_bench_parse_test.txt";
    FILE *f = fopen(path, "w");
    nb_problem *ps = NULL;
    char err[512];
    (void)state;
    assert_non_null(f);
    fputs("# comment\n\nconv n1c3h8k4r3 p1 # trailing\r\n  linear n2c4k5\n", f);
    fclose(f);
    assert_int_equal(nb_parse_file(path, &ps, err, sizeof err), 2);
    assert_int_equal(ps[0].op, NB_OP_CONV);
    assert_int_equal(ps[1].op, NB_OP_LINEAR);
    free(ps);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("conv n1c3h8k4r3\n# x\nconv n1c3h8k4\n", f);
    fclose(f);
    assert_int_equal(nb_parse_file(path, &ps, err, sizeof err), -1);
    assert_string_equal(err, "nnop_bench_parse_test.txt:3: conv: dimension 'r' missing in "
                             "'n1c3h8k4' (e.g. n32c64h56w56k64r3s3)");
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("# nothing\n", f);
    fclose(f);
    assert_int_equal(nb_parse_file(path, &ps, err, sizeof err), -1);
    assert_string_equal(err, "nnop_bench_parse_test.txt: no problems in the file");
    remove(path);
}

static void test_flops_bytes(void **state)
{
    nb_problem p;
    char err[256];
    (void)state;
    assert_int_equal(nb_parse("conv n1c2h4w4k3r3 p1", &p, err, sizeof err), 0);
    /* 1 x 3 x 4 x 4 outputs, 2 x 3 x 3 MACs each */
    assert_true(nb_problem_flops(&p) == 2.0 * 48 * 18);
    /* x 32 + y 48 + w 54 elements of 4 bytes */
    assert_true(nb_problem_bytes(&p) == 4.0 * (32 + 48 + 54));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conv_full),         cmocka_unit_test(test_defaults_and_pairs),
            cmocka_unit_test(test_format_round_trip), cmocka_unit_test(test_invalid_messages),
            cmocka_unit_test(test_new_ops),           cmocka_unit_test(test_problem_file),
            cmocka_unit_test(test_flops_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
