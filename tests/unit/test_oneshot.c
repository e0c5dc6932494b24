/* test_oneshot.c: nnop_conv_bias_relu and nnop_conv_bias_act on the CPU backend against a naive
 * loop written here and against the op-by-op graph (conv, bias and activation as separate
 * nodes, fusion disabled), for NCHW and NHWC, with and without bias, every activation, cached
 * plans reused across calls and different shapes in turn. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

static nnop_context *ctx_;

typedef struct conv_shape {
    int64_t n, c, h, w, k, r, s;
    nnop_conv_params p;
} conv_shape;

static int64_t out_h(const conv_shape *s)
{
    return (s->h + 2 * s->p.pad[0] - s->p.dilation[0] * (s->r - 1) - 1) / s->p.stride[0] + 1;
}

static int64_t out_w(const conv_shape *s)
{
    return (s->w + 2 * s->p.pad[1] - s->p.dilation[1] * (s->s - 1) - 1) / s->p.stride[1] + 1;
}

static double act_ref(int act, double a, double x)
{
    switch (act) {
    case NNOP_ACT_IDENTITY:
        return x;
    case NNOP_ACT_RELU:
        return x > 0.0 ? x : 0.0;
    case NNOP_ACT_RELU6:
        return fmin(fmax(x, 0.0), 6.0);
    case NNOP_ACT_LEAKY_RELU:
        return x > 0.0 ? x : a * x;
    case NNOP_ACT_GELU:
        return 0.5 * x * erfc(-x / sqrt(2.0));
    case NNOP_ACT_GELU_TANH:
        return 0.5 * x *
               (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case NNOP_ACT_SIGMOID:
        return 1.0 / (1.0 + exp(-x));
    case NNOP_ACT_TANH:
        return tanh(x);
    case NNOP_ACT_SILU:
        return x / (1.0 + exp(-x));
    case NNOP_ACT_ELU:
        return x > 0.0 ? x : a * expm1(x);
    }
    fail_msg("act_ref: activation %d", act);
    return 0.0;
}

/* y = act(conv(x, w) + b) on logical NCHW / KCRS arrays; b may be NULL. */
static void naive(const conv_shape *s, const float *x, const float *w, const float *b, int act,
                  float alpha, float *y)
{
    int64_t oh = out_h(s), ow = out_w(s), cg = s->c / s->p.groups, kg = s->k / s->p.groups;
    int64_t n, k, i, j, c, r, q;
    for (n = 0; n < s->n; n++)
        for (k = 0; k < s->k; k++)
            for (i = 0; i < oh; i++)
                for (j = 0; j < ow; j++) {
                    double acc = b ? (double)b[k] : 0.0;
                    for (c = 0; c < cg; c++)
                        for (r = 0; r < s->r; r++)
                            for (q = 0; q < s->s; q++) {
                                int64_t ih =
                                        i * s->p.stride[0] - s->p.pad[0] + r * s->p.dilation[0];
                                int64_t iw =
                                        j * s->p.stride[1] - s->p.pad[1] + q * s->p.dilation[1];
                                if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
                                    continue;
                                acc += (double)x[((n * s->c + (k / kg) * cg + c) * s->h + ih) *
                                                         s->w +
                                                 iw] *
                                       (double)w[((k * cg + c) * s->r + r) * s->s + q];
                            }
                    y[((n * s->k + k) * oh + i) * ow + j] = (float)act_ref(act, alpha, acc);
                }
}

/* The op-by-op graph: conv, bias, activation as three nodes, compiled with fusion off. */
static void op_by_op(const conv_shape *s, const nnop_tensor_desc *xd, const void *x,
                     const nnop_tensor_desc *wd, const void *w, const void *b, int act, float alpha,
                     void *y)
{
    nnop_tensor_desc bd = nnop_tensor_1d(xd->dtype, s->k);
    nnop_compile_options o;
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    nnop_value v, vx, vw;
    const void *in[3];
    void *out[1];
    int n_in = 0;
    assert_int_equal(nnop_graph_create(ctx_, &g), NNOP_OK);
    vx = nnop_input(g, "x", xd); /* declaration order is the binding order */
    vw = nnop_input(g, "w", wd);
    v = nnop_conv(g, vx, vw, &s->p);
    in[n_in++] = x;
    in[n_in++] = w;
    if (b) {
        v = nnop_bias(g, v, nnop_input(g, "b", &bd));
        in[n_in++] = b;
    }
    v = nnop_act(g, v, (nnop_act_kind)act, alpha);
    assert_int_equal(nnop_output(g, v, "y"), NNOP_OK);
    nnop_compile_options_init(&o);
    o.fuse = 0;
    assert_int_equal(nnop_graph_compile(g, &o, &plan), NNOP_OK);
    assert_int_equal(nnop_plan_num_partitions(plan), b ? 3 : 2);
    out[0] = y;
    assert_int_equal(nnop_plan_execute(plan, in, out), NNOP_OK);
    nnop_plan_destroy(plan);
    nnop_graph_destroy(g);
}

/* Tensors of one case: logical float copies and packed buffers in the case's dtype/layout. */
typedef struct conv_case {
    conv_shape s;
    nnop_dtype t;
    nnop_layout l;
    nnop_tensor_desc xd, wd, yd, bd;
    float *x, *w, *b, *y, *want;
    void *xb, *wb, *bb, *yb, *yb2;
} conv_case;

static void case_init(conv_case *cc, const conv_shape *s, nnop_dtype t, nnop_layout l,
                      uint64_t seed)
{
    int64_t nx, nw, ny;
    memset(cc, 0, sizeof *cc);
    cc->s = *s;
    cc->t = t;
    cc->l = l;
    cc->xd = nnop_tensor_4d(t, l, s->n, s->c, s->h, s->w);
    cc->wd = nnop_tensor_4d(t, l, s->k, s->c / s->p.groups, s->r, s->s);
    cc->yd = nnop_tensor_4d(t, l, s->n, s->k, out_h(s), out_w(s));
    cc->bd = nnop_tensor_1d(t, s->k);
    nx = nnop_tensor_elements(&cc->xd);
    nw = nnop_tensor_elements(&cc->wd);
    ny = nnop_tensor_elements(&cc->yd);
    assert_true(nx > 0 && nw > 0 && ny > 0);
    cc->x = malloc((size_t)nx * sizeof(float));
    cc->w = malloc((size_t)nw * sizeof(float));
    cc->b = malloc((size_t)s->k * sizeof(float));
    cc->y = malloc((size_t)ny * sizeof(float));
    cc->want = malloc((size_t)ny * sizeof(float));
    cc->xb = malloc(nnop_tensor_bytes(&cc->xd));
    cc->wb = malloc(nnop_tensor_bytes(&cc->wd));
    cc->bb = malloc(nnop_tensor_bytes(&cc->bd));
    cc->yb = malloc(nnop_tensor_bytes(&cc->yd));
    cc->yb2 = malloc(nnop_tensor_bytes(&cc->yd));
    assert_true(cc->x && cc->w && cc->b && cc->y && cc->want && cc->xb && cc->wb && cc->bb &&
                cc->yb && cc->yb2);
    /* values exactly representable in t, so the naive loop sees what the kernel sees */
    nnop_test_fill(t, cc->xb, cc->x, nx, seed, -1.0f, 1.0f);
    nnop_test_fill(t, cc->wb, cc->w, nw, seed + 1, -1.0f, 1.0f);
    nnop_test_fill(t, cc->bb, cc->b, s->k, seed + 2, -1.0f, 1.0f);
    nnop_test_pack(&cc->xd, cc->x, cc->xb); /* into the layout */
    nnop_test_pack(&cc->wd, cc->w, cc->wb);
}

static void case_free(conv_case *cc)
{
    free(cc->x);
    free(cc->w);
    free(cc->b);
    free(cc->y);
    free(cc->want);
    free(cc->xb);
    free(cc->wb);
    free(cc->bb);
    free(cc->yb);
    free(cc->yb2);
}

static double tol(nnop_dtype t)
{
    return t == NNOP_F32 ? 1e-5 : nnop_test_rtol(t);
}

/* One call of the entry point (nnop_conv_bias_relu when act is RELU), checked against the
 * naive loop and against the op-by-op graph. */
static void check_call(conv_case *cc, int has_bias, int act, float alpha, uint64_t seed)
{
    const void *bias = has_bias ? cc->bb : NULL;
    int64_t ny = nnop_tensor_elements(&cc->yd);
    nnop_status st;
    nnop_test_poison(cc->yb, nnop_tensor_bytes(&cc->yd));
    if (act == NNOP_ACT_RELU && alpha == 0.0f)
        st = nnop_conv_bias_relu(ctx_, &cc->xd, cc->xb, &cc->wd, cc->wb, bias, &cc->s.p, &cc->yd,
                                 cc->yb);
    else
        st = nnop_conv_bias_act(ctx_, &cc->xd, cc->xb, &cc->wd, cc->wb, bias, &cc->s.p, act, alpha,
                                &cc->yd, cc->yb);
    if (st != NNOP_OK)
        fail_msg("%s: %s", nnop_status_string(st), nnop_context_last_error(ctx_));
    nnop_test_unpack(&cc->yd, cc->yb, cc->y);
    naive(&cc->s, cc->x, cc->w, has_bias ? cc->b : NULL, act, alpha, cc->want);
    assert_true(nnop_test_compare(NNOP_F32, cc->y, cc->want, ny, tol(cc->t), tol(cc->t),
                                  "oneshot vs naive", seed));
    nnop_test_poison(cc->yb2, nnop_tensor_bytes(&cc->yd));
    op_by_op(&cc->s, &cc->xd, cc->xb, &cc->wd, cc->wb, bias, act, alpha, cc->yb2);
    nnop_test_unpack(&cc->yd, cc->yb2, cc->want);
    assert_true(nnop_test_compare(NNOP_F32, cc->y, cc->want, ny, 1e-6, 1e-7,
                                  "oneshot vs op-by-op graph", seed));
}

static void run_case(const conv_shape *s, nnop_dtype t, nnop_layout l, int has_bias, int act,
                     float alpha, uint64_t seed)
{
    conv_case cc;
    case_init(&cc, s, t, l, seed);
    check_call(&cc, has_bias, act, alpha, seed);
    case_free(&cc);
}

static const conv_shape shape_a = {2, 3, 7, 6, 4, 3, 3, {{1, 1}, {1, 1}, {1, 1}, 1}};
static const conv_shape shape_b = {1, 4, 9, 5, 6, 3, 1, {{1, 0}, {2, 1}, {1, 1}, 2}};
static const conv_shape shape_c = {3, 2, 5, 5, 2, 2, 2, {{0, 0}, {1, 1}, {2, 2}, 1}};
static const conv_shape shape_dw = {1, 6, 6, 7, 6, 3, 3, {{1, 1}, {2, 2}, {1, 1}, 6}};

/* ------------------------------------------------------------------ relu */

static void test_conv_bias_relu_nchw_matches_naive_and_op_by_op(void **state)
{
    (void)state;
    run_case(&shape_a, NNOP_F32, NNOP_NCHW, 1, NNOP_ACT_RELU, 0.0f, 3001);
}

static void test_conv_bias_relu_nhwc_matches_naive_and_op_by_op(void **state)
{
    (void)state;
    run_case(&shape_a, NNOP_F32, NNOP_NHWC, 1, NNOP_ACT_RELU, 0.0f, 3002);
}

static void test_conv_bias_relu_without_bias(void **state)
{
    (void)state;
    run_case(&shape_a, NNOP_F32, NNOP_NCHW, 0, NNOP_ACT_RELU, 0.0f, 3003);
    run_case(&shape_a, NNOP_F32, NNOP_NHWC, 0, NNOP_ACT_RELU, 0.0f, 3004);
}

static void test_conv_bias_relu_strided_grouped_dilated_depthwise(void **state)
{
    int l;
    (void)state;
    for (l = 0; l < 2; l++) {
        run_case(&shape_b, NNOP_F32, (nnop_layout)l, 1, NNOP_ACT_RELU, 0.0f, 3010 + l);
        run_case(&shape_c, NNOP_F32, (nnop_layout)l, 1, NNOP_ACT_RELU, 0.0f, 3012 + l);
        run_case(&shape_dw, NNOP_F32, (nnop_layout)l, 0, NNOP_ACT_RELU, 0.0f, 3014 + l);
    }
}

/* Relu really clips: with a large negative bias every output is exactly 0. */
static void test_conv_bias_relu_negative_bias_gives_zeros(void **state)
{
    conv_case cc;
    int64_t i, ny;
    (void)state;
    case_init(&cc, &shape_a, NNOP_F32, NNOP_NHWC, 3020);
    for (i = 0; i < shape_a.k; i++)
        ((float *)cc.bb)[i] = -1000.0f;
    nnop_test_poison(cc.yb, nnop_tensor_bytes(&cc.yd));
    assert_int_equal(nnop_conv_bias_relu(ctx_, &cc.xd, cc.xb, &cc.wd, cc.wb, cc.bb, &shape_a.p,
                                         &cc.yd, cc.yb),
                     NNOP_OK);
    ny = nnop_tensor_elements(&cc.yd);
    for (i = 0; i < ny; i++)
        assert_true(((float *)cc.yb)[i] == 0.0f);
    case_free(&cc);
}

/* ------------------------------------------------------------------ other activations */

static void test_conv_bias_act_every_activation(void **state)
{
    static const struct {
        int act;
        float alpha;
    } acts[] = {
            {NNOP_ACT_IDENTITY, 0.0f}, {NNOP_ACT_RELU6, 0.0f},     {NNOP_ACT_LEAKY_RELU, 0.2f},
            {NNOP_ACT_GELU, 0.0f},     {NNOP_ACT_GELU_TANH, 0.0f}, {NNOP_ACT_SIGMOID, 0.0f},
            {NNOP_ACT_TANH, 0.0f},     {NNOP_ACT_SILU, 0.0f},      {NNOP_ACT_ELU, 0.7f},
            {NNOP_ACT_RELU, 0.0f},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof acts / sizeof acts[0]; i++)
        run_case(&shape_a, NNOP_F32, (nnop_layout)(i % 2), (int)(i % 3 != 2), acts[i].act,
                 acts[i].alpha, 3100 + i);
}

/* relu6 needs outputs above 6 to show: scale the weights up. */
static void test_conv_bias_act_relu6_caps_large_outputs(void **state)
{
    conv_case cc;
    int64_t i, ny, capped = 0;
    (void)state;
    case_init(&cc, &shape_a, NNOP_F32, NNOP_NCHW, 3200);
    for (i = 0; i < shape_a.k * shape_a.c * 9; i++) {
        cc.w[i] *= 8.0f;
        ((float *)cc.wb)[i] *= 8.0f; /* NCHW f32: the same order */
    }
    check_call(&cc, 1, NNOP_ACT_RELU6, 0.0f, 3200);
    ny = nnop_tensor_elements(&cc.yd);
    for (i = 0; i < ny; i++) {
        assert_true(cc.y[i] >= 0.0f && cc.y[i] <= 6.0f);
        capped += cc.y[i] == 6.0f;
    }
    assert_true(capped > 0);
    case_free(&cc);
}

/* alpha is part of leaky relu and elu (different alphas, different results) and ignored by the
 * others (relu with alpha 0.5 is still relu, also when its plan comes from the cache). */
static void test_conv_bias_act_alpha_matters_only_where_it_is_used(void **state)
{
    conv_case cc;
    int64_t ny;
    float *first;
    (void)state;
    case_init(&cc, &shape_a, NNOP_F32, NNOP_NHWC, 3300);
    ny = nnop_tensor_elements(&cc.yd);
    first = malloc((size_t)ny * sizeof *first);
    assert_non_null(first);
    check_call(&cc, 1, NNOP_ACT_LEAKY_RELU, 0.1f, 3300);
    memcpy(first, cc.y, (size_t)ny * sizeof *first);
    check_call(&cc, 1, NNOP_ACT_LEAKY_RELU, 0.3f, 3300);
    assert_true(memcmp(first, cc.y, (size_t)ny * sizeof *first) != 0);
    check_call(&cc, 1, NNOP_ACT_ELU, 0.5f, 3300);
    check_call(&cc, 1, NNOP_ACT_ELU, 1.0f, 3300);
    check_call(&cc, 1, NNOP_ACT_RELU, 0.0f, 3300);
    memcpy(first, cc.y, (size_t)ny * sizeof *first);
    check_call(&cc, 1, NNOP_ACT_RELU, 0.5f, 3300); /* through nnop_conv_bias_act */
    assert_memory_equal(first, cc.y, (size_t)ny * sizeof *first);
    free(first);
    case_free(&cc);
}

/* ------------------------------------------------------------------ plan cache */

/* The second call for the same shape reuses the cached plan: the same result, and new data in
 * the same buffers is picked up (nothing of the first call's data is baked in). */
static void test_second_call_reuses_the_plan_with_the_same_result(void **state)
{
    conv_case cc;
    int64_t nx;
    void *first;
    (void)state;
    case_init(&cc, &shape_b, NNOP_F32, NNOP_NHWC, 3400);
    nx = nnop_tensor_elements(&cc.xd);
    first = malloc(nnop_tensor_bytes(&cc.yd));
    assert_non_null(first);
    check_call(&cc, 1, NNOP_ACT_RELU, 0.0f, 3400);
    memcpy(first, cc.yb, nnop_tensor_bytes(&cc.yd));
    check_call(&cc, 1, NNOP_ACT_RELU, 0.0f, 3400);
    assert_memory_equal(first, cc.yb, nnop_tensor_bytes(&cc.yd));
    /* new input values, same shape: the cached plan computes the new answer */
    nnop_test_fill_f32(cc.x, nx, 3401, -2.0f, 2.0f);
    nnop_test_pack(&cc.xd, cc.x, cc.xb);
    check_call(&cc, 1, NNOP_ACT_RELU, 0.0f, 3401);
    assert_true(memcmp(first, cc.yb, nnop_tensor_bytes(&cc.yd)) != 0);
    free(first);
    case_free(&cc);
}

/* Shapes, layouts, bias and activation in turn: each call gets the plan of its own key. */
static void test_different_shapes_in_turn(void **state)
{
    static const conv_shape *const shapes[3] = {&shape_a, &shape_b, &shape_c};
    conv_case cc[3];
    int round, i;
    (void)state;
    for (i = 0; i < 3; i++)
        case_init(&cc[i], shapes[i], NNOP_F32, (nnop_layout)(i % 2), 3500 + (uint64_t)i);
    for (round = 0; round < 3; round++)
        for (i = 0; i < 3; i++)
            check_call(&cc[i], (round + i) % 2, round == 1 ? NNOP_ACT_SILU : NNOP_ACT_RELU, 0.0f,
                       3500 + (uint64_t)i);
    for (i = 0; i < 3; i++)
        case_free(&cc[i]);
}

/* More distinct shapes than the cache holds: plans get evicted and rebuilt, results stay right
 * (the first shape again after 70 others). */
static void test_many_shapes_evict_and_stay_correct(void **state)
{
    conv_shape s = {1, 2, 3, 3, 2, 1, 1, {{0, 0}, {1, 1}, {1, 1}, 1}};
    int i;
    (void)state;
    for (i = 0; i < 70; i++) {
        s.w = 3 + i;
        run_case(&s, NNOP_F32, NNOP_NCHW, i % 2, NNOP_ACT_RELU, 0.0f, 3600 + (uint64_t)i);
    }
    s.w = 3;
    run_case(&s, NNOP_F32, NNOP_NCHW, 0, NNOP_ACT_RELU, 0.0f, 3700);
    run_case(&s, NNOP_F32, NNOP_NHWC, 1, NNOP_ACT_TANH, 0.0f, 3701);
}

/* nnop_oneshot_clear drops the cached plans: the next call compiles again and is right, and
 * clearing an empty cache or a NULL context does nothing. */
static void test_clear_then_call_again(void **state)
{
    conv_case cc;
    void *first;
    (void)state;
    case_init(&cc, &shape_a, NNOP_F32, NNOP_NCHW, 3800);
    first = malloc(nnop_tensor_bytes(&cc.yd));
    assert_non_null(first);
    check_call(&cc, 1, NNOP_ACT_RELU, 0.0f, 3800);
    memcpy(first, cc.yb, nnop_tensor_bytes(&cc.yd));
    nnop_oneshot_clear(ctx_);
    nnop_oneshot_clear(ctx_);
    nnop_oneshot_clear(NULL);
    check_call(&cc, 1, NNOP_ACT_RELU, 0.0f, 3800);
    assert_memory_equal(first, cc.yb, nnop_tensor_bytes(&cc.yd));
    check_call(&cc, 0, NNOP_ACT_GELU, 0.0f, 3800);
    free(first);
    case_free(&cc);
}

/* ------------------------------------------------------------------ reduced precision */

static void test_conv_bias_relu_f16_and_bf16(void **state)
{
    int l;
    (void)state;
    for (l = 0; l < 2; l++) {
        run_case(&shape_a, NNOP_F16, (nnop_layout)l, 1, NNOP_ACT_RELU, 0.0f, 3800 + l);
        run_case(&shape_b, NNOP_BF16, (nnop_layout)l, 1, NNOP_ACT_RELU, 0.0f, 3810 + l);
        run_case(&shape_dw, NNOP_F16, (nnop_layout)l, 0, NNOP_ACT_GELU, 0.0f, 3820 + l);
    }
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
            cmocka_unit_test(test_conv_bias_relu_nchw_matches_naive_and_op_by_op),
            cmocka_unit_test(test_conv_bias_relu_nhwc_matches_naive_and_op_by_op),
            cmocka_unit_test(test_conv_bias_relu_without_bias),
            cmocka_unit_test(test_conv_bias_relu_strided_grouped_dilated_depthwise),
            cmocka_unit_test(test_conv_bias_relu_negative_bias_gives_zeros),
            cmocka_unit_test(test_conv_bias_act_every_activation),
            cmocka_unit_test(test_conv_bias_act_relu6_caps_large_outputs),
            cmocka_unit_test(test_conv_bias_act_alpha_matters_only_where_it_is_used),
            cmocka_unit_test(test_second_call_reuses_the_plan_with_the_same_result),
            cmocka_unit_test(test_different_shapes_in_turn),
            cmocka_unit_test(test_many_shapes_evict_and_stay_correct),
            cmocka_unit_test(test_clear_then_call_again),
            cmocka_unit_test(test_conv_bias_relu_f16_and_bf16),
    };
    return cmocka_run_group_tests_name("oneshot", tests, setup, nnop_test_teardown_context);
}
