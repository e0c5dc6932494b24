/* test_allocator.c: nnop_context_options.allocator (issue 50) on the CPU backend: a plan's
 * tensor memory and nnop_malloc come from the engine's host functions, every block goes back
 * to them (at plan destroy, or at context destroy for a plan that outlives its context), a
 * refusal is NNOP_ERR_OUT_OF_MEMORY naming the bytes, a half-set pair is refused, and the
 * allocator struct is copied at create. */
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

typedef struct budget {
    size_t in_use, peak, limit; /* limit 0: none */
    int live, calls;
    void *blocks[64];
    size_t sizes[64];
} budget;

static void *host_alloc(void *user, size_t bytes)
{
    budget *b = (budget *)user;
    void *p;
    b->calls++;
    if ((b->limit && b->in_use + bytes > b->limit) || b->live == 64)
        return NULL;
    p = malloc(bytes);
    if (!p)
        return NULL;
    b->blocks[b->live] = p;
    b->sizes[b->live++] = bytes;
    b->in_use += bytes;
    b->peak = b->in_use > b->peak ? b->in_use : b->peak;
    return p;
}

static void host_free(void *user, void *p)
{
    budget *b = (budget *)user;
    int i;
    for (i = 0; i < b->live; i++)
        if (b->blocks[i] == p) {
            b->in_use -= b->sizes[i];
            b->blocks[i] = b->blocks[b->live - 1];
            b->sizes[i] = b->sizes[--b->live];
            free(p);
            return;
        }
    fail_msg("host_free of a block host_alloc never gave");
}

static nnop_context *context_with(budget *b)
{
    nnop_allocator a; /* on the stack: the context keeps a copy */
    nnop_context_options o;
    nnop_context *ctx = NULL;
    memset(&a, 0, sizeof a);
    a.host_alloc = host_alloc;
    a.host_free = host_free;
    a.user = b;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    o.allocator = &a;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    memset(&a, 0, sizeof a);
    return ctx;
}

enum { C = 4, H = 8, W = 8, PIX = C * H * W };

/* x -> conv 1x1 (C -> C) -> relu -> + x */
static nnop_status build_compile(nnop_context *ctx, const float *w, nnop_plan **p)
{
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, C, H, W);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, C, C, 1, 1);
    nnop_conv_params cp;
    nnop_graph *g = NULL;
    nnop_value x, v;
    nnop_status st;
    nnop_conv_params_init(&cp);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    x = nnop_input(g, "x", &xd);
    v = nnop_act(g, nnop_conv(g, x, nnop_constant(g, "w", &wd, w), &cp), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, nnop_add(g, v, x), "y"), NNOP_OK);
    st = nnop_graph_compile(g, NULL, p);
    nnop_graph_destroy(g);
    return st;
}

static void test_plan_memory_comes_from_the_allocator(void **state)
{
    static float x[PIX], w[C * C], y[PIX];
    budget b;
    nnop_context *ctx;
    nnop_plan *p = NULL;
    nnop_plan_memory_info m;
    const void *in[1] = {x};
    void *out[1] = {y}, *buf = NULL;
    int i, k, calls;
    (void)state;
    memset(&b, 0, sizeof b);
    ctx = context_with(&b);
    nnop_test_fill_f32(x, PIX, 5, -1.0f, 1.0f);
    nnop_test_fill_f32(w, C * C, 6, -1.0f, 1.0f);
    assert_int_equal(build_compile(ctx, w, &p), NNOP_OK);
    assert_int_equal(nnop_plan_memory(p, &m), NNOP_OK);
    assert_true(b.live > 0);
    assert_int_equal(b.in_use, m.host_total); /* every byte the query counts, and no other */
    calls = b.calls;
    nnop_test_poison(y, sizeof y);
    assert_int_equal(nnop_plan_execute(p, in, out), NNOP_OK);
    assert_int_equal(b.calls, calls); /* execute allocates nothing */
    for (i = 0; i < PIX; i++) {
        int c = i / (H * W), s = i % (H * W);
        float acc = 0.0f;
        for (k = 0; k < C; k++)
            acc += w[c * C + k] * x[k * H * W + s];
        acc = acc > 0.0f ? acc : 0.0f;
        assert_true(y[i] - (acc + x[i]) < 1e-5f && (acc + x[i]) - y[i] < 1e-5f);
    }
    assert_int_equal(nnop_malloc(ctx, 100, &buf), NNOP_OK);
    assert_int_equal(b.calls, calls + 1);
    nnop_free(ctx, buf);
    nnop_plan_destroy(p);
    assert_int_equal(b.live, 0);
    assert_int_equal(b.in_use, 0);
    nnop_context_destroy(ctx);
}

/* a plan destroyed after its context: its memory went back when the context went */
static void test_orphan_plan_frees_at_context_destroy(void **state)
{
    static float w[C * C];
    budget b;
    nnop_context *ctx;
    nnop_plan *p = NULL;
    (void)state;
    memset(&b, 0, sizeof b);
    ctx = context_with(&b);
    assert_int_equal(build_compile(ctx, w, &p), NNOP_OK);
    assert_true(b.live > 0);
    nnop_context_destroy(ctx);
    assert_int_equal(b.live, 0);
    nnop_plan_destroy(p);
}

/* a budget below the plan's needs: refused with the bytes named, all given back */
static void test_refusal_names_the_bytes(void **state)
{
    static float w[C * C];
    budget b;
    nnop_context *ctx;
    nnop_plan *p = (nnop_plan *)&p;
    (void)state;
    memset(&b, 0, sizeof b);
    b.limit = 2 * PIX * sizeof(float); /* the weights and one activation fit, not the rest */
    ctx = context_with(&b);
    assert_int_equal(build_compile(ctx, w, &p), NNOP_ERR_OUT_OF_MEMORY);
    assert_null(p);
    NNOP_TEST_ASSERT_ERROR(ctx, "bytes for an intermediate buffer");
    assert_int_equal(b.live, 0);
    nnop_context_destroy(ctx);
}

static void test_half_set_pairs_are_refused(void **state)
{
    nnop_allocator a;
    nnop_context_options o;
    nnop_context *ctx = NULL;
    (void)state;
    memset(&a, 0, sizeof a);
    a.host_alloc = host_alloc;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    o.allocator = &a;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(nnop_context_create_error(), "sets host_alloc without host_free"));
    memset(&a, 0, sizeof a);
    a.device_free = host_free;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(nnop_context_create_error(), "sets device_free without device_alloc"));
    memset(&a, 0, sizeof a); /* all NULL: nnop's own */
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    nnop_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_plan_memory_comes_from_the_allocator),
            cmocka_unit_test(test_orphan_plan_frees_at_context_destroy),
            cmocka_unit_test(test_refusal_names_the_bytes),
            cmocka_unit_test(test_half_set_pairs_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
