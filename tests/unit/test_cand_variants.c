/* test_cand_variants.c: which engine configs the CUDA backend's candidate list keeps
 * (engine/candidates.c, nnop__cands_admit), without a GPU: each engine's first config always;
 * its other knob choices only when autotuning collects variants, marked so that the engine
 * passes skip them; never the same config twice (heuristics A and B list the same ones), nor
 * more than NNOP_MAX_CANDS. */
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/engine/engine.h"

/* Offer (engine, knob digest) to s; 1 when it joined (then appended, as candidates.c does). */
static int offer(nnop__cands *s, int64_t engine, uint64_t knobs, int variants, int *variant)
{
    nnop__cand c;
    memset(&c, 0, sizeof c);
    c.engine = engine;
    c.knobs = knobs;
    c.variant = -1;
    if (!nnop__cands_admit(s, &c, variants))
        return 0;
    assert_true(c.variant == 0 || c.variant == 1);
    *variant = c.variant;
    s->c[s->n++] = c;
    return 1;
}

static void test_variants_kept_and_marked_when_autotuning(void **state)
{
    static nnop__cands s;
    int v = -1;
    (void)state;
    memset(&s, 0, sizeof s);
    assert_true(offer(&s, 10, 0x111, 1, &v));
    assert_int_equal(v, 0);
    assert_true(offer(&s, 41, 0x222, 1, &v));
    assert_int_equal(v, 0);
    assert_true(offer(&s, 10, 0x333, 1, &v)); /* eng10's second knob choice */
    assert_int_equal(v, 1);
    assert_false(offer(&s, 10, 0x111, 1, &v)); /* mode B repeating mode A's first */
    assert_false(offer(&s, 10, 0x333, 1, &v));
    assert_true(offer(&s, 23, 0x111, 1, &v)); /* same knobs, another engine: new */
    assert_int_equal(v, 0);
    assert_int_equal(s.n, 4);
}

static void test_one_config_an_engine_otherwise(void **state)
{
    static nnop__cands s;
    int v = -1;
    (void)state;
    memset(&s, 0, sizeof s);
    /* without variants no digest is read: every config of an engine has knobs 0 */
    assert_true(offer(&s, 10, 0, 0, &v));
    assert_false(offer(&s, 10, 0, 0, &v));
    assert_true(offer(&s, 41, 0, 0, &v));
    /* a digest that differs still adds nothing without variants */
    assert_false(offer(&s, 41, 0x999, 0, &v));
    assert_int_equal(s.n, 2);
}

static void test_list_capped(void **state)
{
    static nnop__cands s;
    int v = -1, i;
    (void)state;
    memset(&s, 0, sizeof s);
    for (i = 0; i < NNOP_MAX_CANDS; i++)
        assert_true(offer(&s, 7, (uint64_t)i + 1, 1, &v));
    assert_false(offer(&s, 8, 1, 1, &v)); /* a new engine too: the list is full */
    assert_int_equal(s.n, NNOP_MAX_CANDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_variants_kept_and_marked_when_autotuning),
            cmocka_unit_test(test_one_config_an_engine_otherwise),
            cmocka_unit_test(test_list_capped),
    };
    return cmocka_run_group_tests_name("cand_variants", tests, NULL, NULL);
}

#else /* a build without CUDA has no engine candidates */
static void test_cand_variants_needs_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cand_variants_needs_cuda_build)};
    return cmocka_run_group_tests_name("cand_variants", tests, NULL, NULL);
}
#endif
