/* test_graph.c: shape inference through the builders and nnop_value_desc, plan queries and
 * partitioning, and a multi-node network (conv-bn-relu, max pool, conv-bias-relu + residual
 * add, global average pool, flatten, linear, softmax) compiled and executed on the CPU backend
 * against a straightforward computation written out in this file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

static nnop_context *ctx_;

static nnop_graph *new_graph(void)
{
    nnop_graph *g = NULL;
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    return g;
}

static void assert_desc(const nnop_tensor_desc *d, nnop_dtype t, int ndim, const int64_t *dims,
                        const int64_t *strides)
{
    int i;
    assert_int_equal(d->dtype, t);
    assert_int_equal(d->ndim, ndim);
    for (i = 0; i < ndim; i++) {
        if (d->dims[i] != dims[i])
            fail_msg("dims[%d] = %lld, want %lld", i, (long long)d->dims[i], (long long)dims[i]);
        if (strides && d->strides[i] != strides[i])
            fail_msg("strides[%d] = %lld, want %lld", i, (long long)d->strides[i],
                     (long long)strides[i]);
    }
}

static nnop_tensor_desc desc_of(nnop_graph *g, nnop_value v)
{
    nnop_tensor_desc d;
    assert_true(v.id >= 0);
    assert_int_equal(nnop_value_desc(g, v, &d), NNOP_OK);
    return d;
}

/* ------------------------------------------------------------------ shape inference */

/* 17x13 input, 5x3 filter, pad (1, 2), stride (2, 3), dilation (2, 1):
 * height: extent (5-1)*2+1 = 9, (17 + 2 - 9) / 2 + 1 = 6; width: extent 3,
 * (13 + 4 - 3) / 3 + 1 = 5. NHWC in, NHWC out: strides [240, 1, 40, 8]. */
static void test_conv_output_dims_with_stride_pad_dilation(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 1, 3, 17, 13);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 8, 3, 5, 3);
    nnop_conv_params p = {{1, 2}, {2, 3}, {2, 1}, 1};
    const int64_t dims[4] = {1, 8, 6, 5}, strides[4] = {240, 1, 40, 8};
    nnop_value y;
    nnop_tensor_desc d;
    (void)state;
    y = nnop_conv(g, nnop_input(g, "x", &xd), nnop_input(g, "w", &wd), &p);
    d = desc_of(g, y);
    assert_desc(&d, NNOP_F16, 4, dims, strides);
    nnop_graph_destroy(g);
}

/* A table of cases against the textbook formula (in + 2 pad - dil (k - 1) - 1) / stride + 1. */
static void test_conv_output_dims_table(void **state)
{
    static const struct {
        int64_t h, w, r, s, pad, stride, dil, groups, c, k;
    } cases[] = {
            {8, 8, 3, 3, 1, 1, 1, 1, 3, 4},      /* same */
            {8, 8, 3, 3, 0, 1, 1, 1, 3, 4},      /* valid */
            {7, 9, 3, 3, 1, 2, 1, 1, 2, 2},      /* odd, stride 2 */
            {224, 224, 7, 7, 3, 2, 1, 1, 3, 64}, /* resnet stem */
            {5, 5, 3, 3, 2, 1, 2, 1, 1, 1},      /* dilation 2 */
            {6, 4, 1, 1, 0, 3, 1, 4, 8, 4},      /* 1x1 stride 3 grouped */
            {10, 3, 4, 2, 3, 4, 3, 2, 4, 6},     /* everything odd */
            {1, 1, 3, 3, 1, 1, 1, 1, 1, 1},      /* 1x1 input */
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nnop_graph *g = new_graph();
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, (nnop_layout)(i % 2), 2, cases[i].c,
                                             cases[i].h, cases[i].w);
        nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, (nnop_layout)(i % 2), cases[i].k,
                                             cases[i].c / cases[i].groups, cases[i].r, cases[i].s);
        nnop_conv_params p;
        nnop_tensor_desc d, want;
        p.pad[0] = p.pad[1] = cases[i].pad;
        p.stride[0] = p.stride[1] = cases[i].stride;
        p.dilation[0] = p.dilation[1] = cases[i].dil;
        p.groups = cases[i].groups;
        d = desc_of(g, nnop_conv(g, nnop_input(g, "x", &xd), nnop_input(g, "w", &wd), &p));
        want = nnop_tensor_4d(NNOP_F32, (nnop_layout)(i % 2), 2, cases[i].k,
                              (cases[i].h + 2 * cases[i].pad - cases[i].dil * (cases[i].r - 1) -
                               1) / cases[i].stride +
                                      1,
                              (cases[i].w + 2 * cases[i].pad - cases[i].dil * (cases[i].s - 1) -
                               1) / cases[i].stride +
                                      1);
        assert_desc(&d, NNOP_F32, 4, want.dims, want.strides);
        nnop_graph_destroy(g);
    }
}

/* Large but valid strides: one output position, no overflow in the shape arithmetic. */
static void test_conv_huge_stride_gives_one_output(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 9, 9);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 1, 3, 3);
    nnop_conv_params p = {{1, 1}, {INT32_MAX, INT32_MAX}, {1, 1}, 1};
    const int64_t dims[4] = {1, 2, 1, 1};
    nnop_tensor_desc d;
    (void)state;
    d = desc_of(g, nnop_conv(g, nnop_input(g, "x", &xd), nnop_input(g, "w", &wd), &p));
    assert_desc(&d, NNOP_F32, 4, dims, NULL);
    nnop_graph_destroy(g);
}

static void test_pool_output_dims(void **state)
{
    static const struct {
        int64_t h, w, wh, ww, sh, sw, ph, pw, oh, ow;
    } cases[] = {
            {7, 7, 3, 3, 2, 2, 1, 1, 4, 4}, /* (7 + 2 - 3) / 2 + 1 */
            {7, 7, 2, 2, 2, 2, 0, 0, 3, 3}, /* floor: the last row/column is dropped */
            {5, 6, 3, 2, 1, 2, 1, 0, 5, 3}, {4, 4, 4, 4, 1, 1, 0, 0, 1, 1},
            {1, 1, 2, 2, 1, 1, 1, 1, 2, 2}, /* padded 1x1 */
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nnop_graph *g = new_graph();
        nnop_tensor_desc xd =
                nnop_tensor_4d(NNOP_BF16, (nnop_layout)(i % 2), 3, 4, cases[i].h, cases[i].w);
        nnop_pool_params p;
        nnop_tensor_desc d, want;
        memset(&p, 0, sizeof p);
        p.window[0] = cases[i].wh, p.window[1] = cases[i].ww;
        p.stride[0] = cases[i].sh, p.stride[1] = cases[i].sw;
        p.pad[0] = cases[i].ph, p.pad[1] = cases[i].pw;
        d = desc_of(g, nnop_pool(g, nnop_input(g, "x", &xd), (nnop_pool_kind)(i % 2), &p));
        want = nnop_tensor_4d(NNOP_BF16, (nnop_layout)(i % 2), 3, 4, cases[i].oh, cases[i].ow);
        assert_desc(&d, NNOP_BF16, 4, want.dims, want.strides);
        nnop_graph_destroy(g);
    }
}

static void test_global_avg_pool_output_dims_keep_layout(void **state)
{
    int l;
    (void)state;
    for (l = 0; l < 2; l++) {
        nnop_graph *g = new_graph();
        nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, 2, 5, 7, 3);
        nnop_tensor_desc want = nnop_tensor_4d(NNOP_F32, (nnop_layout)l, 2, 5, 1, 1);
        nnop_tensor_desc d = desc_of(g, nnop_global_avg_pool(g, nnop_input(g, "x", &xd)));
        assert_desc(&d, NNOP_F32, 4, want.dims, want.strides);
        nnop_graph_destroy(g);
    }
}

static void test_flatten_and_linear_output_dims(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 5, 3, 3);
    nnop_tensor_desc wd = nnop_tensor_2d(NNOP_F16, 10, 45), bd = nnop_tensor_1d(NNOP_F16, 10);
    const int64_t fdims[2] = {2, 45}, fstrides[2] = {45, 1};
    const int64_t ldims[2] = {2, 10}, lstrides[2] = {10, 1};
    nnop_value f, y;
    nnop_tensor_desc d;
    (void)state;
    f = nnop_flatten(g, nnop_input(g, "x", &xd));
    d = desc_of(g, f);
    assert_desc(&d, NNOP_F16, 2, fdims, fstrides);
    y = nnop_linear(g, f, nnop_input(g, "w", &wd), nnop_input(g, "b", &bd));
    d = desc_of(g, y);
    assert_desc(&d, NNOP_F16, 2, ldims, lstrides);
    y = nnop_linear(g, f, nnop_input(g, "w2", &wd), nnop_none());
    d = desc_of(g, y);
    assert_desc(&d, NNOP_F16, 2, ldims, lstrides);
    nnop_graph_destroy(g);
}

/* Pointwise ops and softmax keep the descriptor of x, layout included. */
static void test_pointwise_and_softmax_keep_the_input_desc(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_BF16, NNOP_NHWC, 2, 3, 4, 5);
    nnop_tensor_desc pd = nnop_tensor_1d(NNOP_BF16, 3);
    nnop_value x = nnop_input(g, "x", &xd), p = nnop_input(g, "p", &pd);
    nnop_value vs[6];
    nnop_tensor_desc d;
    int i;
    (void)state;
    vs[0] = nnop_bias(g, x, p);
    vs[1] = nnop_act(g, x, NNOP_ACT_GELU, 0.0f);
    vs[2] = nnop_clamp(g, x, -1.0f, 1.0f);
    vs[3] = nnop_batchnorm(g, x, p, p, p, p, 1e-5f);
    vs[4] = nnop_add(g, x, vs[0]);
    vs[5] = nnop_softmax(g, x);
    for (i = 0; i < 6; i++) {
        d = desc_of(g, vs[i]);
        assert_desc(&d, NNOP_BF16, 4, xd.dims, xd.strides);
    }
    nnop_graph_destroy(g);
}

static void test_value_desc_of_inputs_and_constants_is_what_was_given(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 1, 3, 2, 2);
    nnop_tensor_desc cd = nnop_tensor_2d(NNOP_F32, 3, 4), d;
    float data[12] = {0};
    (void)state;
    d = desc_of(g, nnop_input(g, "x", &xd));
    assert_memory_equal(&d, &xd, sizeof d);
    d = desc_of(g, nnop_constant(g, "c", &cd, data));
    assert_memory_equal(&d, &cd, sizeof d);
    nnop_graph_destroy(g);
}

/* ------------------------------------------------------------------ partitions and describe */

static void test_epilogue_chain_after_a_standalone_op_is_one_fused_partition(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 2, 3);
    nnop_value v = nnop_softmax(g, nnop_input(g, "x", &xd));
    nnop_plan *plan = NULL;
    char text[1024];
    (void)state;
    v = nnop_act(g, v, NNOP_ACT_RELU, 0.0f);
    v = nnop_act(g, v, NNOP_ACT_TANH, 0.0f);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_partitions(plan), 2); /* softmax | act+act */
    nnop_plan_describe(plan, text, sizeof text);
    assert_non_null(strstr(text, "[1] act+act (fusable)"));
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* A value used twice cannot be fused away: conv output read by relu and by add. */
static void test_value_with_two_consumers_ends_the_partition(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 2, 4, 4);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 2, 1, 1);
    nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
    float w[4] = {1, 0, 0, 1};
    nnop_value c, r;
    nnop_plan *plan = NULL;
    char text[1024];
    (void)state;
    c = nnop_conv(g, nnop_input(g, "x", &xd), nnop_constant(g, "w", &wd, w), &p);
    r = nnop_act(g, c, NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, nnop_add(g, r, c), "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_partitions(plan), 2); /* conv | act+add */
    nnop_plan_describe(plan, text, sizeof text);
    assert_non_null(strstr(text, "2 consumers"));
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

static void test_describe_returns_the_needed_length_like_snprintf(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 2, 3);
    nnop_plan *plan = NULL;
    char small[10], *full;
    size_t need;
    (void)state;
    assert_int_equal(nnop_output(g, nnop_softmax(g, nnop_input(g, "x", &xd)), "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    need = nnop_plan_describe(plan, NULL, 0);
    assert_true(need > 10);
    full = malloc(need + 1);
    assert_non_null(full);
    assert_int_equal(nnop_plan_describe(plan, full, need + 1), need);
    assert_int_equal(strlen(full), need);
    assert_non_null(strstr(full, "cpu backend"));
    assert_non_null(strstr(full, "softmax"));
    memset(small, 'x', sizeof small);
    assert_int_equal(nnop_plan_describe(plan, small, sizeof small), need);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, full, sizeof small - 1);
    free(full);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* ------------------------------------------------------------------ the network */

enum { N = 2, C0 = 3, H0 = 8, W0 = 8, C1 = 4, H1 = 4, W1 = 4, CLS = 5 };

typedef struct net_weights {
    float w1[C1 * C0 * 9], gamma[C1], beta[C1], mean[C1], var[C1];
    float w2[C1 * C1 * 9], b2[C1];
    float w3[CLS * C1], b3[CLS];
} net_weights;

static void net_init(net_weights *nw)
{
    int i;
    nnop_test_fill_f32(nw->w1, C1 * C0 * 9, 2001, -0.5f, 0.5f);
    nnop_test_fill_f32(nw->gamma, C1, 2002, 0.5f, 1.5f);
    nnop_test_fill_f32(nw->beta, C1, 2003, -0.2f, 0.2f);
    nnop_test_fill_f32(nw->mean, C1, 2004, -0.2f, 0.2f);
    nnop_test_fill_f32(nw->var, C1, 2005, 0.5f, 2.0f);
    nnop_test_fill_f32(nw->w2, C1 * C1 * 9, 2006, -0.5f, 0.5f);
    nnop_test_fill_f32(nw->b2, C1, 2007, -0.1f, 0.1f);
    nnop_test_fill_f32(nw->w3, CLS * C1, 2008, -1.0f, 1.0f);
    nnop_test_fill_f32(nw->b3, CLS, 2009, -0.1f, 0.1f);
    for (i = 0; i < C1; i++) /* keep the variance positive */
        nw->var[i] = fabsf(nw->var[i]) + 0.1f;
}

/* 3x3 convolution, pad 1, stride 1, on logical NCHW arrays (the test's own loops). */
static void ref_conv3x3(const float *x, int c_in, int h, int w, const float *wt, int c_out,
                        double *y)
{
    int n, k, i, j, c, r, s;
    for (n = 0; n < N; n++)
        for (k = 0; k < c_out; k++)
            for (i = 0; i < h; i++)
                for (j = 0; j < w; j++) {
                    double acc = 0.0;
                    for (c = 0; c < c_in; c++)
                        for (r = 0; r < 3; r++)
                            for (s = 0; s < 3; s++) {
                                int ih = i + r - 1, iw = j + s - 1;
                                if (ih >= 0 && ih < h && iw >= 0 && iw < w)
                                    acc += (double)x[((n * c_in + c) * h + ih) * w + iw] *
                                           wt[((k * c_in + c) * 3 + r) * 3 + s];
                            }
                    y[((n * c_out + k) * h + i) * w + j] = acc;
                }
}

/* The whole network, straightforwardly: logits and probabilities. */
static void ref_network(const net_weights *nw, const float *x, float *logits, float *probs)
{
    static double a1[N * C1 * H0 * W0], a2[N * C1 * H1 * W1];
    static float p1[N * C1 * H1 * W1];
    double feat[N * C1];
    int n, c, i, j;
    ref_conv3x3(x, C0, H0, W0, nw->w1, C1, a1);
    for (n = 0; n < N; n++)
        for (c = 0; c < C1; c++)
            for (i = 0; i < H0 * W0; i++) {
                double *v = &a1[(n * C1 + c) * H0 * W0 + i];
                *v = (*v - nw->mean[c]) / sqrt((double)nw->var[c] + 1e-5) * nw->gamma[c] +
                     nw->beta[c];
                *v = *v > 0.0 ? *v : 0.0;
            }
    for (n = 0; n < N; n++) /* 2x2 max pool, stride 2 */
        for (c = 0; c < C1; c++)
            for (i = 0; i < H1; i++)
                for (j = 0; j < W1; j++) {
                    const double *b = &a1[(n * C1 + c) * H0 * W0];
                    double m = b[(2 * i) * W0 + 2 * j];
                    m = fmax(m, b[(2 * i) * W0 + 2 * j + 1]);
                    m = fmax(m, b[(2 * i + 1) * W0 + 2 * j]);
                    m = fmax(m, b[(2 * i + 1) * W0 + 2 * j + 1]);
                    p1[((n * C1 + c) * H1 + i) * W1 + j] = (float)m;
                }
    ref_conv3x3(p1, C1, H1, W1, nw->w2, C1, a2);
    for (n = 0; n < N; n++)
        for (c = 0; c < C1; c++) {
            double s = 0.0;
            for (i = 0; i < H1 * W1; i++) {
                int e = (n * C1 + c) * H1 * W1 + i;
                double v = a2[e] + nw->b2[c];
                s += (v > 0.0 ? v : 0.0) + p1[e]; /* relu, then the residual */
            }
            feat[n * C1 + c] = s / (H1 * W1);
        }
    for (n = 0; n < N; n++) {
        double mx = -INFINITY, z = 0.0, l[CLS];
        for (c = 0; c < CLS; c++) {
            l[c] = nw->b3[c];
            for (i = 0; i < C1; i++)
                l[c] += feat[n * C1 + i] * nw->w3[c * C1 + i];
            logits[n * CLS + c] = (float)l[c];
            mx = fmax(mx, l[c]);
        }
        for (c = 0; c < CLS; c++)
            z += exp(l[c] - mx);
        for (c = 0; c < CLS; c++)
            probs[n * CLS + c] = (float)(exp(l[c] - mx) / z);
    }
}

/* Build the network on a graph with x in layout l; weights as constants in the same layout.
 * Outputs: 0 = logits (N x CLS), 1 = probabilities. */
static nnop_graph *build_network(const net_weights *nw, nnop_layout l)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, l, N, C0, H0, W0);
    nnop_tensor_desc w1d = nnop_tensor_4d(NNOP_F32, l, C1, C0, 3, 3);
    nnop_tensor_desc w2d = nnop_tensor_4d(NNOP_F32, l, C1, C1, 3, 3);
    nnop_tensor_desc cd = nnop_tensor_1d(NNOP_F32, C1), w3d = nnop_tensor_2d(NNOP_F32, CLS, C1);
    nnop_tensor_desc b3d = nnop_tensor_1d(NNOP_F32, CLS);
    nnop_conv_params cp = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_pool_params pp;
    float w1[C1 * C0 * 9], w2[C1 * C1 * 9];
    nnop_value x, v, p, logits;
    memset(&pp, 0, sizeof pp);
    pp.window[0] = pp.window[1] = 2;
    pp.stride[0] = pp.stride[1] = 2;
    nnop_test_pack(&w1d, nw->w1, w1);
    nnop_test_pack(&w2d, nw->w2, w2);

    x = nnop_input(g, "image", &xd);
    v = nnop_conv(g, x, nnop_constant(g, "w1", &w1d, w1), &cp);
    v = nnop_batchnorm(g, v, nnop_constant(g, "gamma", &cd, nw->gamma),
                       nnop_constant(g, "beta", &cd, nw->beta),
                       nnop_constant(g, "mean", &cd, nw->mean),
                       nnop_constant(g, "var", &cd, nw->var), 1e-5f);
    v = nnop_act(g, v, NNOP_ACT_RELU, 0.0f);
    p = nnop_pool(g, v, NNOP_POOL_MAX, &pp);
    v = nnop_conv(g, p, nnop_constant(g, "w2", &w2d, w2), &cp);
    v = nnop_bias(g, v, nnop_constant(g, "b2", &cd, nw->b2));
    v = nnop_act(g, v, NNOP_ACT_RELU, 0.0f);
    v = nnop_add(g, v, p);
    v = nnop_global_avg_pool(g, v);
    v = nnop_flatten(g, v);
    logits = nnop_linear(g, v, nnop_constant(g, "w3", &w3d, nw->w3),
                         nnop_constant(g, "b3", &b3d, nw->b3));
    v = nnop_softmax(g, logits);
    assert_int_equal(nnop_output(g, logits, "logits"), NNOP_OK);
    assert_int_equal(nnop_output(g, v, "probs"), NNOP_OK);
    assert_int_equal(nnop_graph_status(g), NNOP_OK);
    return g;
}

static void run_network(nnop_plan *plan, nnop_layout l, const float *x, float *logits, float *probs)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, l, N, C0, H0, W0);
    float xb[N * C0 * H0 * W0];
    const void *in[1];
    void *out[2];
    nnop_test_pack(&xd, x, xb);
    nnop_test_poison(logits, N * CLS * sizeof(float));
    nnop_test_poison(probs, N * CLS * sizeof(float));
    in[0] = xb;
    out[0] = logits;
    out[1] = probs;
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
}

static void check_network(nnop_layout l, int fuse, float *logits, float *probs)
{
    net_weights nw;
    nnop_graph *g;
    nnop_plan *plan = NULL;
    nnop_compile_options o;
    float x[N * C0 * H0 * W0], want_l[N * CLS], want_p[N * CLS];
    int n, c;
    net_init(&nw);
    nnop_test_fill_f32(x, N * C0 * H0 * W0, 2010, -1.0f, 1.0f);
    ref_network(&nw, x, want_l, want_p);
    g = build_network(&nw, l);
    nnop_compile_options_init(&o);
    o.fuse = fuse;
    assert_int_equal(nnop_graph_compile(g, &o, &plan), NNOP_OK);
    nnop_graph_destroy(g); /* the plan owns a copy */
    run_network(plan, l, x, logits, probs);
    assert_true(nnop_test_compare(NNOP_F32, logits, want_l, N * CLS, 1e-5, 1e-5, "logits", 2010));
    assert_true(nnop_test_compare(NNOP_F32, probs, want_p, N * CLS, 1e-5, 1e-6, "probs", 2010));
    for (n = 0; n < N; n++) {
        double s = 0.0;
        for (c = 0; c < CLS; c++)
            s += probs[n * CLS + c];
        assert_true(fabs(s - 1.0) < 1e-6);
    }
    nnop_plan_destroy(plan);
}

static void test_network_nchw_matches_straightforward_computation(void **state)
{
    float logits[N * CLS], probs[N * CLS];
    (void)state;
    check_network(NNOP_NCHW, 1, logits, probs);
}

static void test_network_nhwc_matches_straightforward_computation(void **state)
{
    float logits[N * CLS], probs[N * CLS];
    (void)state;
    check_network(NNOP_NHWC, 1, logits, probs);
}

/* Fusion changes how the plan is cut, not what it computes: same bits on the CPU. */
static void test_network_without_fusion_gives_the_same_result(void **state)
{
    float l1[N * CLS], p1[N * CLS], l2[N * CLS], p2[N * CLS];
    (void)state;
    check_network(NNOP_NHWC, 1, l1, p1);
    check_network(NNOP_NHWC, 0, l2, p2);
    assert_memory_equal(l1, l2, sizeof l1);
    assert_memory_equal(p1, p2, sizeof p1);
}

/* conv+bn+relu | pool | conv+bias+relu+add | gap | flatten | linear | softmax: 7 partitions,
 * two of them fused; with fusion off, one partition per node (12). */
static void test_network_partitions_and_describe(void **state)
{
    net_weights nw;
    nnop_graph *g;
    nnop_plan *plan = NULL;
    nnop_compile_options o;
    char text[4096];
    const char *s;
    int fused = 0;
    (void)state;
    net_init(&nw);
    g = build_network(&nw, NNOP_NCHW);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_partitions(plan), 7);
    assert_true(nnop_plan_describe(plan, text, sizeof text) < sizeof text);
    assert_non_null(strstr(text, "conv+batchnorm+act (fusable)"));
    assert_non_null(strstr(text, "conv+bias+act+add (fusable)"));
    assert_non_null(strstr(text, "the CPU runs node by node"));
    assert_non_null(strstr(text, "not a pointwise epilogue"));
    assert_null(strstr(text, "(fused)")); /* the CPU fuses nothing */
    for (s = strstr(text, "(fusable)"); s; s = strstr(s + 1, "(fusable)"))
        fused++;
    assert_int_equal(fused, 2);
    nnop_plan_destroy(plan);

    nnop_compile_options_init(&o);
    assert_int_equal(o.fuse, 1);
    o.fuse = 0;
    assert_int_equal(nnop_graph_compile(g, &o, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_partitions(plan), 12);
    nnop_plan_describe(plan, text, sizeof text);
    assert_null(strstr(text, "(fusable)"));
    assert_non_null(strstr(text, "fusion disabled"));
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

static void test_network_plan_inputs_and_outputs(void **state)
{
    net_weights nw;
    nnop_graph *g;
    nnop_plan *plan = NULL;
    nnop_tensor_desc d, xd = nnop_tensor_4d(NNOP_F32, NNOP_NHWC, N, C0, H0, W0);
    const int64_t odims[2] = {N, CLS};
    (void)state;
    net_init(&nw);
    g = build_network(&nw, NNOP_NHWC);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_inputs(plan), 1); /* weights are constants */
    assert_int_equal(nnop_plan_num_outputs(plan), 2);
    assert_int_equal(nnop_plan_input_desc(plan, 0, &d), NNOP_OK);
    assert_memory_equal(&d, &xd, sizeof d);
    assert_int_equal(nnop_plan_output_desc(plan, 0, &d), NNOP_OK);
    assert_desc(&d, NNOP_F32, 2, odims, NULL);
    assert_int_equal(nnop_plan_output_desc(plan, 1, &d), NNOP_OK);
    assert_desc(&d, NNOP_F32, 2, odims, NULL);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* A plan runs again with new inputs: nothing stale is carried over from the first run. */
static void test_network_plan_reruns_with_new_inputs(void **state)
{
    net_weights nw;
    nnop_graph *g;
    nnop_plan *plan = NULL;
    float x1[N * C0 * H0 * W0], x2[N * C0 * H0 * W0];
    float l[N * CLS], p[N * CLS], wl[N * CLS], wp[N * CLS];
    (void)state;
    net_init(&nw);
    nnop_test_fill_f32(x1, N * C0 * H0 * W0, 2020, -1.0f, 1.0f);
    nnop_test_fill_f32(x2, N * C0 * H0 * W0, 2021, -2.0f, 2.0f);
    g = build_network(&nw, NNOP_NCHW);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    nnop_graph_destroy(g);
    run_network(plan, NNOP_NCHW, x1, l, p);
    ref_network(&nw, x1, wl, wp);
    assert_true(nnop_test_compare(NNOP_F32, p, wp, N * CLS, 1e-5, 1e-6, "probs 1", 2020));
    run_network(plan, NNOP_NCHW, x2, l, p);
    ref_network(&nw, x2, wl, wp);
    assert_true(nnop_test_compare(NNOP_F32, l, wl, N * CLS, 1e-5, 1e-5, "logits 2", 2021));
    assert_true(nnop_test_compare(NNOP_F32, p, wp, N * CLS, 1e-5, 1e-6, "probs 2", 2021));
    nnop_plan_destroy(plan);
}

/* Constants are copied at nnop_constant: changing the caller's array later has no effect. */
static void test_constants_are_copied_when_added(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 1, 3), bd = nnop_tensor_1d(NNOP_F32, 3);
    float b[3] = {1, 2, 3}, x[3] = {10, 20, 30}, y[3];
    const void *in[1];
    void *out[1];
    (void)state;
    assert_int_equal(
            nnop_output(g, nnop_bias(g, nnop_input(g, "x", &xd), nnop_constant(g, "b", &bd, b)),
                        "y"),
            NNOP_OK);
    b[0] = b[1] = b[2] = 1000.0f;
    in[0] = x;
    out[0] = y;
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_test_run_graph(g, NULL, in, out), NNOP_OK);
    assert_true(y[0] == 11.0f && y[1] == 22.0f && y[2] == 33.0f);
    nnop_graph_destroy(g);
}

/* Inputs and constants can be graph outputs themselves (a pass-through), next to computed
 * outputs, in declaration order. */
static void test_inputs_and_constants_can_be_outputs(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 1, 3), cd = nnop_tensor_1d(NNOP_F16, 2);
    const float x[3] = {-1, 2, -3};
    float c32[2] = {0.5f, -8}, y0[3], y2[3];
    uint16_t c16[2], y1[2];
    nnop_value vx;
    const void *in[1];
    void *out[3];
    (void)state;
    assert_int_equal(nnop_convert(NNOP_F32, c32, NNOP_F16, c16, 2), NNOP_OK);
    vx = nnop_input(g, "x", &xd);
    assert_int_equal(nnop_output(g, vx, "x_again"), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_constant(g, "c", &cd, c16), "c"), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, vx, NNOP_ACT_RELU, 0.0f), "relu"), NNOP_OK);
    nnop_test_poison(y0, sizeof y0);
    nnop_test_poison(y1, sizeof y1);
    nnop_test_poison(y2, sizeof y2);
    in[0] = x;
    out[0] = y0;
    out[1] = y1;
    out[2] = y2;
    assert_int_equal(nnop_test_run_graph(g, NULL, in, out), NNOP_OK);
    assert_memory_equal(y0, x, sizeof x);
    assert_memory_equal(y1, c16, sizeof c16);
    assert_true(y2[0] == 0.0f && y2[1] == 2.0f && y2[2] == 0.0f);
    nnop_graph_destroy(g);
}

/* The plan is a snapshot: building more on the graph after compile does not change it. */
static void test_plan_is_unaffected_by_later_graph_changes(void **state)
{
    nnop_graph *g = new_graph();
    nnop_tensor_desc xd = nnop_tensor_2d(NNOP_F32, 1, 2);
    const float x[2] = {-4, 4};
    float y[2];
    nnop_value v;
    nnop_plan *plan = NULL;
    const void *in[1];
    void *out[1];
    (void)state;
    v = nnop_act(g, nnop_input(g, "x", &xd), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    assert_int_equal(nnop_graph_compile(g, NULL, &plan), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, v, NNOP_ACT_SIGMOID, 0.0f), "z"), NNOP_OK);
    assert_true(nnop_input(g, "x2", &xd).id >= 0);
    assert_int_equal(nnop_plan_num_inputs(plan), 1);
    assert_int_equal(nnop_plan_num_outputs(plan), 1);
    nnop_graph_destroy(g);
    in[0] = x;
    out[0] = y;
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
    assert_true(y[0] == 0.0f && y[1] == 4.0f);
    nnop_plan_destroy(plan);
}

/* The shared CPU-context setup, also kept in ctx_ for the helpers that take no state. */
static int setup(void **state)
{
    int r = nnop_test_setup_cpu_context(state);
    ctx_ = (nnop_context *)*state;
    return r;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_conv_output_dims_with_stride_pad_dilation),
            cmocka_unit_test(test_conv_output_dims_table),
            cmocka_unit_test(test_conv_huge_stride_gives_one_output),
            cmocka_unit_test(test_pool_output_dims),
            cmocka_unit_test(test_global_avg_pool_output_dims_keep_layout),
            cmocka_unit_test(test_flatten_and_linear_output_dims),
            cmocka_unit_test(test_pointwise_and_softmax_keep_the_input_desc),
            cmocka_unit_test(test_value_desc_of_inputs_and_constants_is_what_was_given),
            cmocka_unit_test(test_epilogue_chain_after_a_standalone_op_is_one_fused_partition),
            cmocka_unit_test(test_value_with_two_consumers_ends_the_partition),
            cmocka_unit_test(test_describe_returns_the_needed_length_like_snprintf),
            cmocka_unit_test(test_network_nchw_matches_straightforward_computation),
            cmocka_unit_test(test_network_nhwc_matches_straightforward_computation),
            cmocka_unit_test(test_network_without_fusion_gives_the_same_result),
            cmocka_unit_test(test_network_partitions_and_describe),
            cmocka_unit_test(test_network_plan_inputs_and_outputs),
            cmocka_unit_test(test_network_plan_reruns_with_new_inputs),
            cmocka_unit_test(test_constants_are_copied_when_added),
            cmocka_unit_test(test_inputs_and_constants_can_be_outputs),
            cmocka_unit_test(test_plan_is_unaffected_by_later_graph_changes),
    };
    return cmocka_run_group_tests_name("graph", tests, setup, nnop_test_teardown_context);
}
