/* test_gpu_regressions.c: whole graphs that once gave wrong GPU results, crashed the CUDA
 * context or raced with the legacy default stream (issue 10), each fused and unfused against
 * the CPU reference; the shapes are small and odd on purpose (1x1 results of kernels larger
 * than their input, channel counts that are not multiples of 8). */
#include "gpu_harness.h"

typedef struct reg_case {
    const char *name;
    nnop_dtype dt;
    nnop_layout lay;
    h_build_fn build;
    int fuse;
} reg_case;

static nnop_conv_params conv_p(int64_t ph, int64_t pw, int64_t sh, int64_t sw, int64_t dh,
                               int64_t dw, int64_t groups)
{
    nnop_conv_params p;
    p.pad[0] = ph, p.pad[1] = pw, p.stride[0] = sh, p.stride[1] = sw;
    p.dilation[0] = dh, p.dilation[1] = dw, p.groups = groups;
    return p;
}

static nnop_pool_params pool_p(int64_t wh, int64_t ww, int64_t sh, int64_t sw, int64_t ph,
                               int64_t pw, int include_pad)
{
    nnop_pool_params p;
    nnop_pool_params_init(&p);
    p.window[0] = wh, p.window[1] = ww, p.stride[0] = sh, p.stride[1] = sw;
    p.pad[0] = ph, p.pad[1] = pw, p.count_include_pad = include_pad;
    return p;
}

/* A conv with seeded weights scaled to keep outputs O(1). */
static nnop_value conv(nnop_graph *g, nnop_layout lay, nnop_value x, int64_t k, int64_t r,
                       int64_t s, nnop_conv_params p, uint64_t seed)
{
    nnop_tensor_desc xd, wd;
    float bound;
    nnop_value_desc(g, x, &xd);
    wd = nnop_tensor_4d(xd.dtype, lay, k, xd.dims[1] / p.groups, r, s);
    bound = 1.5f / sqrtf((float)(xd.dims[1] / p.groups * r * s));
    return nnop_conv(g, x, h_const(g, "w", &wd, seed, -bound, bound), &p);
}

static nnop_value channel_const(nnop_graph *g, nnop_value x, uint64_t seed, float lo, float hi)
{
    nnop_tensor_desc xd, cd;
    nnop_value_desc(g, x, &xd);
    cd = nnop_tensor_1d(xd.dtype, xd.dims[1]);
    return h_const(g, "c", &cd, seed, lo, hi);
}

static nnop_value linear(nnop_graph *g, nnop_value x, int64_t out, uint64_t seed)
{
    nnop_tensor_desc xd, wd, bd;
    nnop_value_desc(g, x, &xd);
    wd = nnop_tensor_2d(xd.dtype, out, xd.dims[1]);
    bd = nnop_tensor_1d(xd.dtype, out);
    return nnop_linear(g, x, h_const(g, "lw", &wd, seed, -0.5f, 0.5f),
                       h_const(g, "lb", &bd, seed + 1, -0.5f, 0.5f));
}

static nnop_value batchnorm(nnop_graph *g, nnop_value x, uint64_t seed)
{
    return nnop_batchnorm(g, x, channel_const(g, x, seed, 0.5f, 1.5f),
                          channel_const(g, x, seed + 1, -0.5f, 0.5f),
                          channel_const(g, x, seed + 2, -0.5f, 0.5f),
                          channel_const(g, x, seed + 3, 0.5f, 1.5f), 1e-5f);
}

static nnop_value input(nnop_graph *g, const reg_case *rc, int64_t n, int64_t c, int64_t h,
                        int64_t w)
{
    nnop_tensor_desc d = nnop_tensor_4d(rc->dt, rc->lay, n, c, h, w);
    return nnop_input(g, "x", &d);
}

/* 1. max pool 1x1 s2 -> conv 7x7 s2 p3 (1x1 result) -> relu6 -> conv 5x3 s2 -> clamp ->
 * gelu-tanh + conv 1x1 -> GAP -> flatten -> linear -> softmax, also output at the clamp's
 * input. */
static void build_1(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_pool_params pp = pool_p(1, 1, 2, 2, 0, 0, 0);
    nnop_value x = nnop_pool(g, input(g, rc, 2, 13, 3, 3), NNOP_POOL_MAX, &pp);
    nnop_value c, y;
    x = conv(g, rc->lay, x, 1, 7, 7, conv_p(3, 3, 2, 2, 1, 1, 1), 1);
    x = nnop_act(g, x, NNOP_ACT_RELU6, 0);
    x = conv(g, rc->lay, x, 24, 5, 3, conv_p(2, 1, 2, 2, 1, 1, 1), 2);
    assert_int_equal(nnop_output(g, x, "pre_clamp"), NNOP_OK);
    c = nnop_clamp(g, x, -0.07f, 1.3f);
    y = nnop_add(g, nnop_act(g, c, NNOP_ACT_GELU_TANH, 0),
                 conv(g, rc->lay, c, 24, 1, 1, conv_p(0, 0, 1, 1, 1, 1, 1), 3));
    y = nnop_flatten(g, nnop_global_avg_pool(g, y));
    assert_int_equal(nnop_output(g, nnop_softmax(g, linear(g, y, 10, 4)), "p"), NNOP_OK);
}

/* 2. avg pool 1x1 s3 -> silu + conv 1x1 -> add */
static void build_2(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_pool_params pp = pool_p(1, 1, 3, 3, 0, 0, 1);
    nnop_value x = nnop_pool(g, input(g, rc, 3, 16, 3, 3), NNOP_POOL_AVG, &pp);
    nnop_value y = nnop_add(g, nnop_act(g, x, NNOP_ACT_SILU, 0),
                            conv(g, rc->lay, x, 16, 1, 1, conv_p(0, 0, 1, 1, 1, 1, 1), 5));
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

/* 3. softmax -> conv 3x3 s2 p2 d2 -> gelu -> max pool 1x1 s(1,2) */
static void build_3(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_pool_params pp = pool_p(1, 1, 1, 2, 0, 0, 0);
    nnop_value x = nnop_softmax(g, input(g, rc, 1, 7, 2, 2));
    x = nnop_act(g, conv(g, rc->lay, x, 17, 3, 3, conv_p(2, 2, 2, 2, 2, 2, 1), 6), NNOP_ACT_GELU,
                 0);
    assert_int_equal(nnop_output(g, nnop_pool(g, x, NNOP_POOL_MAX, &pp), "y"), NNOP_OK);
}

/* 4. 1x1 input -> conv 5x5 p2 -> bias -> gelu -> gelu-tanh -> softmax */
static void build_4(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_value x =
            conv(g, rc->lay, input(g, rc, 1, 13, 1, 1), 2, 5, 5, conv_p(2, 2, 1, 1, 1, 1, 1), 7);
    x = nnop_bias(g, x, channel_const(g, x, 8, -0.5f, 0.5f));
    x = nnop_act(g, nnop_act(g, x, NNOP_ACT_GELU, 0), NNOP_ACT_GELU_TANH, 0);
    assert_int_equal(nnop_output(g, nnop_softmax(g, x), "y"), NNOP_OK);
}

/* 5. bias -> elu -> conv 5x3 p(3,1) d2 -> bias -> bn -> bn -> gelu-tanh -> flatten -> linear
 * -> softmax */
static void build_5(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_value x = input(g, rc, 2, 13, 3, 3);
    x = nnop_act(g, nnop_bias(g, x, channel_const(g, x, 9, -0.5f, 0.5f)), NNOP_ACT_ELU, 0.5f);
    x = conv(g, rc->lay, x, 4, 5, 3, conv_p(3, 1, 1, 1, 2, 2, 1), 10);
    x = nnop_bias(g, x, channel_const(g, x, 11, -0.5f, 0.5f));
    x = batchnorm(g, batchnorm(g, x, 12), 16);
    x = nnop_flatten(g, nnop_act(g, x, NNOP_ACT_GELU_TANH, 0));
    assert_int_equal(nnop_output(g, nnop_softmax(g, linear(g, x, 10, 20)), "y"), NNOP_OK);
}

/* A constant batch-norm first in its partition, on inputs near 1000 spread by 1 (bias 1000,
 * mean the same 1000, var 0.01 to 0.02: scale about 8): the one-op form x * s + (beta - mean *
 * s) lost 3 digits in f32 (onnx.edge_cuda_f32_nchw, the H100); seven nodes, so the centered
 * form (v - mean first) fits the chain limit. */
static void build_bn_far(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_value x = input(g, rc, 2, 6, 3, 3);
    x = nnop_bias(g, x, channel_const(g, x, 30, 999.0f, 1001.0f));
    x = nnop_batchnorm(
            g, x, channel_const(g, x, 31, 0.5f, 1.5f), channel_const(g, x, 32, -0.5f, 0.5f),
            channel_const(g, x, 30, 999.0f, 1001.0f), channel_const(g, x, 33, 0.01f, 0.02f), 1e-5f);
    x = nnop_act(g, nnop_clamp(g, x, -12.0f, 12.0f), NNOP_ACT_SILU, 0);
    x = nnop_act(g, x, NNOP_ACT_TANH, 0);
    x = nnop_act(g, nnop_bias(g, x, channel_const(g, x, 34, -0.5f, 0.5f)), NNOP_ACT_RELU, 0);
    assert_int_equal(nnop_output(g, x, "y"), NNOP_OK);
}

/* A chain of the partition limit's 8 nodes led by a constant batch-norm: the centered form's
 * extra op must not push it past the 8 ops an epilogue holds (23 of 35,299 tiny random graphs
 * were refused so, "epilogue chain longer than 8 operations", on the H100). */
static void build_bn_chain8(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_value x = batchnorm(g, input(g, rc, 2, 6, 3, 3), 40);
    x = nnop_bias(g, nnop_act(g, x, NNOP_ACT_RELU6, 0), channel_const(g, x, 44, -0.5f, 0.5f));
    x = nnop_act(g, nnop_clamp(g, x, -2.0f, 2.0f), NNOP_ACT_SILU, 0);
    x = nnop_bias(g, x, channel_const(g, x, 45, -0.5f, 0.5f));
    x = nnop_clamp(g, nnop_act(g, x, NNOP_ACT_TANH, 0), -0.9f, 0.9f);
    assert_int_equal(nnop_output(g, x, "y"), NNOP_OK);
}

/* 7. 1x1x3x3 -> GAP -> conv 3x3 p2 -> conv 3x3 p2 d2 -> conv 7x7 s(1,2) p5 d2 -> relu6 ->
 * avg pool 2x2 s3 p1 -> flatten -> linear */
static void build_7(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_pool_params pp = pool_p(2, 2, 3, 3, 1, 1, 0);
    nnop_value x = nnop_global_avg_pool(g, input(g, rc, 1, 1, 3, 3));
    x = conv(g, rc->lay, x, 13, 3, 3, conv_p(2, 2, 1, 1, 1, 1, 1), 21);
    x = conv(g, rc->lay, x, 3, 3, 3, conv_p(2, 2, 1, 1, 2, 2, 1), 22);
    x = nnop_act(g, conv(g, rc->lay, x, 13, 7, 7, conv_p(5, 5, 1, 2, 2, 2, 1), 23), NNOP_ACT_RELU6,
                 0);
    x = nnop_flatten(g, nnop_pool(g, x, NNOP_POOL_AVG, &pp));
    assert_int_equal(nnop_output(g, linear(g, x, 5, 24), "y"), NNOP_OK);
}

/* The context crash: relu6 + conv 1x1 -> add -> grouped 7x7 convs on a 1x1 image, K = 34 ->
 * clamp -> bn -> bias -> avg pool -> GAP -> flatten -> linear. */
static void build_crash(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_pool_params pp = pool_p(1, 1, 3, 3, 0, 0, 0);
    nnop_value x = input(g, rc, 2, 2, 1, 1);
    x = nnop_add(g, nnop_act(g, x, NNOP_ACT_RELU6, 0),
                 conv(g, rc->lay, x, 2, 1, 1, conv_p(0, 0, 1, 1, 1, 1, 1), 30));
    x = conv(g, rc->lay, x, 34, 7, 7, conv_p(6, 6, 2, 2, 2, 2, 2), 31);
    x = nnop_clamp(g, conv(g, rc->lay, x, 16, 7, 7, conv_p(3, 3, 1, 1, 1, 1, 2), 32), -0.5f, 0.8f);
    x = batchnorm(g, x, 33);
    x = nnop_bias(g, x, channel_const(g, x, 37, -0.5f, 0.5f));
    x = nnop_global_avg_pool(g, nnop_pool(g, x, NNOP_POOL_AVG, &pp));
    assert_int_equal(nnop_output(g, linear(g, nnop_flatten(g, x), 10, 38), "y"), NNOP_OK);
}

/* Layout lost: in an NHWC graph an N x 1 x 1 x 1 value grown by a conv stays NHWC, so the
 * add with an NHWC input of the same shape is accepted, and so are the outputs. */
static void build_layout(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_value x = input(g, rc, 2, 5, 4, 4);
    nnop_tensor_desc zd = nnop_tensor_4d(rc->dt, rc->lay, 2, 6, 3, 3);
    nnop_value z = nnop_input(g, "z", &zd);
    x = nnop_global_avg_pool(g, conv(g, rc->lay, x, 1, 3, 3, conv_p(1, 1, 1, 1, 1, 1, 1), 40));
    x = conv(g, rc->lay, x, 6, 3, 3, conv_p(2, 2, 1, 1, 1, 1, 1), 41);
    assert_int_equal(nnop_output(g, nnop_add(g, x, z), "y"), NNOP_OK);
}

/* Outputs that are an input and a constant are copies on both backends. */
static void build_passthrough(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_tensor_desc cd = nnop_tensor_4d(rc->dt, rc->lay, 1, 3, 2, 5);
    nnop_value x = input(g, rc, 2, 3, 5, 7);
    assert_int_equal(nnop_output(g, nnop_act(g, x, NNOP_ACT_RELU, 0), "relu"), NNOP_OK);
    assert_int_equal(nnop_output(g, x, "x"), NNOP_OK);
    assert_int_equal(nnop_output(g, h_const(g, "k", &cd, 50, -1.f, 1.f), "k"), NNOP_OK);
}

/* NaN propagates through ReLU (fused into the conv or not) and max pooling, as in PyTorch:
 * x is a constant with one NaN pixel, so some outputs are NaN and the rest are not. */
static void build_nan(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    nnop_tensor_desc xd = nnop_tensor_4d(rc->dt, rc->lay, 1, 8, 6, 6);
    nnop_pool_params pp = pool_p(3, 3, 2, 2, 1, 1, 0);
    float logical[288];
    void *data = malloc(nnop_tensor_bytes(&xd));
    nnop_value x, y;
    int i;
    assert_non_null(data);
    for (i = 0; i < 288; i++)
        logical[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
    logical[2 * 36 + 2 * 6 + 3] = NAN; /* channel 2, row 2, column 3 */
    nnop_test_pack(&xd, logical, data);
    x = nnop_constant(g, "x", &xd, data);
    free(data);
    y = conv(g, rc->lay, x, 8, 3, 3, conv_p(1, 1, 1, 1, 1, 1, 1), 60);
    y = nnop_act(g, nnop_bias(g, y, channel_const(g, y, 61, -0.5f, 0.5f)), NNOP_ACT_RELU, 0);
    assert_int_equal(nnop_output(g, y, "relu"), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_pool(g, x, NNOP_POOL_MAX, &pp), "maxpool"), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, x, NNOP_ACT_RELU6, 0), "relu6"), NNOP_OK);
}

/* A packed row-major descriptor of n dims. */
static nnop_tensor_desc row_major(nnop_dtype t, int n, const int64_t *dims)
{
    nnop_tensor_desc d;
    int i;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = n;
    for (i = n - 1; i >= 0; i--) {
        d.dims[i] = dims[i];
        d.strides[i] = i == n - 1 ? 1 : d.strides[i + 1] * dims[i + 1];
    }
    return d;
}

/* Ranks other than 4 where the builders take them (an outside test found the CPU backend
 * takes them; nothing on the GPU had run them): pointwise ops on 5-D and 6-D, bias and
 * softmax over dim 1 of 3-D. */
static void build_ranks(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    const int64_t d5[5] = {2, 3, 4, 5, 6}, d6[6] = {1, 2, 3, 2, 3, 5}, d3[3] = {2, 7, 5};
    nnop_tensor_desc x5 = row_major(rc->dt, 5, d5), x6 = row_major(rc->dt, 6, d6);
    nnop_tensor_desc x3 = row_major(rc->dt, 3, d3), b3 = nnop_tensor_1d(rc->dt, 7);
    nnop_value a = nnop_input(g, "a", &x5), t = nnop_input(g, "t", &x3);
    nnop_value y = nnop_add(g, a, h_const(g, "b", &x5, 70, -1.f, 1.f));
    y = nnop_mul(g, nnop_act(g, y, NNOP_ACT_SILU, 0), h_const(g, "m", &x5, 71, 0.5f, 1.5f));
    assert_int_equal(nnop_output(g, y, "five"), NNOP_OK);
    y = nnop_act(g, nnop_input(g, "six", &x6), NNOP_ACT_GELU, 0);
    assert_int_equal(nnop_output(g, nnop_sub(g, y, h_const(g, "s", &x6, 72, -1.f, 1.f)), "six"),
                     NNOP_OK);
    y = nnop_act(g, nnop_bias(g, t, h_const(g, "c", &b3, 73, -0.5f, 0.5f)), NNOP_ACT_RELU, 0);
    assert_int_equal(nnop_output(g, nnop_softmax(g, y), "three"), NNOP_OK);
}

/* One-channel values declared in the other layout join a concat (their memory is the same
 * in both): the copy and in-slice steps must follow each input's own strides. */
static void build_concat_mixed_decl(nnop_graph *g, const void *arg)
{
    const reg_case *rc = (const reg_case *)arg;
    const nnop_layout other = rc->lay == NNOP_NHWC ? NNOP_NCHW : NNOP_NHWC;
    nnop_tensor_desc md = nnop_tensor_4d(rc->dt, other, 2, 1, 5, 7);
    nnop_value x = input(g, rc, 2, 4, 5, 7), xs[4];
    nnop_value m = nnop_input(g, "mask", &md), y;
    xs[0] = m;
    xs[1] = nnop_act(g, conv(g, rc->lay, x, 3, 3, 3, conv_p(1, 1, 1, 1, 1, 1, 1), 80),
                     NNOP_ACT_RELU, 0);
    xs[2] = nnop_act(g, m, NNOP_ACT_TANH, 0);
    xs[3] = conv(g, rc->lay, x, 1, 1, 1, conv_p(0, 0, 1, 1, 1, 1, 1), 81);
    y = nnop_concat(g, xs, 4);
    assert_int_equal(
            nnop_output(g, conv(g, rc->lay, y, 5, 1, 1, conv_p(0, 0, 1, 1, 1, 1, 1), 82), "y"),
            NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_concat(g, xs + 1, 3), "cat"), NNOP_OK);
}

/* clang-format off */
#define BOTH(name, dt, lay, fn) \
    {name "_fused", dt, lay, fn, 1}, {name "_unfused", dt, lay, fn, 0}
static const reg_case cases[] = {
    BOTH("f32_nchw_pool_conv7x7_to_1x1_two_outputs", NNOP_F32, NNOP_NCHW, build_1),
    BOTH("f16_nhwc_pool_conv7x7_to_1x1_two_outputs", NNOP_F16, NNOP_NHWC, build_1),
    BOTH("bf16_nchw_avgpool_silu_plus_conv1x1", NNOP_BF16, NNOP_NCHW, build_2),
    BOTH("bf16_nhwc_avgpool_silu_plus_conv1x1", NNOP_BF16, NNOP_NHWC, build_2),
    BOTH("f16_nchw_softmax_conv_dilated_gelu_pool", NNOP_F16, NNOP_NCHW, build_3),
    BOTH("f16_nchw_1x1_conv5x5_bias_gelus_softmax", NNOP_F16, NNOP_NCHW, build_4),
    BOTH("f16_nchw_elu_conv_bias_bn_bn_linear", NNOP_F16, NNOP_NCHW, build_5),
    BOTH("f32_nchw_gap_conv_chain_avgpool_linear", NNOP_F32, NNOP_NCHW, build_7),
    BOTH("bf16_nchw_grouped_7x7_on_1x1_k34", NNOP_BF16, NNOP_NCHW, build_crash),
    BOTH("f16_nhwc_grouped_7x7_on_1x1_k34", NNOP_F16, NNOP_NHWC, build_crash),
    BOTH("f16_nhwc_n111_value_keeps_layout", NNOP_F16, NNOP_NHWC, build_layout),
    BOTH("f32_nhwc_n111_value_keeps_layout", NNOP_F32, NNOP_NHWC, build_layout),
    BOTH("f16_nhwc_outputs_input_and_constant", NNOP_F16, NNOP_NHWC, build_passthrough),
    BOTH("f32_nchw_outputs_input_and_constant", NNOP_F32, NNOP_NCHW, build_passthrough),
    BOTH("f16_nhwc_nan_through_relu_and_max_pool", NNOP_F16, NNOP_NHWC, build_nan),
    BOTH("f32_nchw_nan_through_relu_and_max_pool", NNOP_F32, NNOP_NCHW, build_nan),
    BOTH("f32_ranks_3_5_6", NNOP_F32, NNOP_NCHW, build_ranks),
    BOTH("f16_ranks_3_5_6", NNOP_F16, NNOP_NCHW, build_ranks),
    BOTH("bf16_ranks_3_5_6", NNOP_BF16, NNOP_NCHW, build_ranks),
    BOTH("f16_nhwc_concat_one_channel_nchw", NNOP_F16, NNOP_NHWC, build_concat_mixed_decl),
    BOTH("f32_nchw_concat_one_channel_nhwc", NNOP_F32, NNOP_NCHW, build_concat_mixed_decl),
    BOTH("bf16_nhwc_concat_one_channel_nchw", NNOP_BF16, NNOP_NHWC, build_concat_mixed_decl),
    BOTH("f32_nchw_bn_first_far_from_zero", NNOP_F32, NNOP_NCHW, build_bn_far),
    BOTH("f32_nhwc_bn_first_far_from_zero", NNOP_F32, NNOP_NHWC, build_bn_far),
    BOTH("f32_nchw_bn_first_chain_of_8", NNOP_F32, NNOP_NCHW, build_bn_chain8),
    BOTH("f16_nhwc_bn_first_chain_of_8", NNOP_F16, NNOP_NHWC, build_bn_chain8),
};
/* clang-format on */

static void run_case(void **state)
{
    const reg_case *rc = (const reg_case *)*state;
    h_run r;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, rc->dt, 1.0);
    r.gpu_opts.allow_tf32 = 0;
    r.copts.fuse = rc->fuse;
    r.rtol = rc->dt == NNOP_F32 ? 1e-4 : rc->dt == NNOP_F16 ? 5e-3 : 3e-2;
    r.atol = r.rtol;
    h_check_case(&r, rc->name, rc->build, rc, NULL);
}

int main(void)
{
    return h_run_table("gpu_regressions", cases, sizeof cases / sizeof cases[0], sizeof cases[0],
                       run_case);
}
