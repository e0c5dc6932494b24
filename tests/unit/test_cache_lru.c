/* test_cache_lru.c: the in-memory plan cache: LRU order, entry and byte bounds, replacement,
 * ownership of looked-up entries, counters. */
#include "nnop_test.h"

#include "cache_test_util.h"

/* Bytes one entry without blob is charged (the node). */
static size_t node_cost(void)
{
    nnop_plan_cache *c = ct_cache(NULL, 0, 0);
    nnop_cache_stats st;
    ct_insert(c, 0, 0);
    nnop__cache_stats(c, &st);
    nnop__cache_release(c);
    return (size_t)st.bytes;
}

static void test_cache_lru_evicts_least_recently_used(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 3, 0);
    nnop_cache_stats st;
    (void)state;
    ct_insert(c, 1, 0);
    ct_insert(c, 2, 0);
    ct_insert(c, 3, 0);
    assert_true(ct_has(c, 1, 0)); /* 1 is now the most recent; 2 the least */
    ct_insert(c, 4, 0);
    assert_false(ct_has(c, 2, 0));
    assert_true(ct_has(c, 3, 0));
    ct_insert(c, 5, 0); /* order now (old->new) 1, 4, 3, 5 minus one: 1 goes */
    assert_false(ct_has(c, 1, 0));
    assert_true(ct_has(c, 4, 0));
    assert_true(ct_has(c, 5, 0));
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 3);
    assert_int_equal(st.evictions, 2);
    assert_int_equal(st.inserts, 5);
    nnop__cache_release(c);
}

static void test_cache_lru_byte_bound(void **state)
{
    size_t node = node_cost();
    /* room for three nodes with 1000-byte blobs, not four */
    nnop_plan_cache *c = ct_cache(NULL, 100, 3 * (node + 1000) + 10);
    nnop_cache_stats st;
    int64_t i;
    (void)state;
    for (i = 0; i < 4; i++)
        ct_insert(c, i, 1000);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 3);
    assert_int_equal(st.evictions, 1);
    assert_int_equal(st.bytes, 3 * (node + 1000));
    assert_false(ct_has(c, 0, 1000));
    /* one big entry pushes out several small ones */
    ct_insert(c, 9, 2 * 1000 + node + 500);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 1);
    assert_true(st.bytes <= 3 * (node + 1000) + 10);
    assert_true(ct_has(c, 9, 2 * 1000 + node + 500));
    nnop__cache_release(c);
}

static void test_cache_lru_oversized_blob_keeps_the_choice(void **state)
{
    size_t node = node_cost();
    nnop_plan_cache *c = ct_cache(NULL, 10, node + 100);
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(1);
    (void)state;
    ct_insert(c, 1, 5000);
    assert_int_equal(nnop__cache_lookup(c, &fp, &e), 1);
    assert_int_equal(e.engine_id, 1);
    assert_int_equal(e.blob_len, 0);
    assert_null(e.blob);
    nnop__cache_entry_clear(&e);
    nnop__cache_release(c);
}

static void test_cache_lru_replace_same_fingerprint(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 4, 0);
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(1);
    nnop_cache_stats st;
    (void)state;
    ct_insert(c, 1, 10);
    ct_entry(2, 20, &e); /* different value, same key */
    assert_int_equal(nnop__cache_insert(c, &fp, &e), NNOP_OK);
    nnop__cache_entry_clear(&e);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 1);
    assert_int_equal(nnop__cache_lookup(c, &fp, &e), 1);
    assert_true(ct_entry_matches(&e, 2, 20));
    nnop__cache_entry_clear(&e);
    nnop__cache_release(c);
}

static void test_cache_lru_lookup_returns_an_owned_copy(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 4, 0);
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(3);
    (void)state;
    ct_insert(c, 3, 64);
    assert_int_equal(nnop__cache_lookup(c, &fp, &e), 1);
    memset(e.blob, 0, e.blob_len);
    e.knobs[0].value = -5;
    nnop__cache_entry_clear(&e);
    assert_true(ct_has(c, 3, 64));
    nnop__cache_release(c);
}

static void test_cache_lru_rejects_malformed_entries(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 4, 0);
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(1);
    nnop_cache_stats st;
    (void)state;
    ct_entry(1, 0, &e);
    e.n_knobs = NNOP_CACHE_MAX_KNOBS + 1;
    assert_int_equal(nnop__cache_insert(c, &fp, &e), NNOP_ERR_INVALID_ARGUMENT);
    e.n_knobs = -1;
    assert_int_equal(nnop__cache_insert(c, &fp, &e), NNOP_ERR_INVALID_ARGUMENT);
    e.n_knobs = 0;
    e.blob_len = 10; /* NULL blob */
    assert_int_equal(nnop__cache_insert(c, &fp, &e), NNOP_ERR_INVALID_ARGUMENT);
    e.blob_len = 0;
    assert_int_equal(nnop__cache_insert(NULL, &fp, &e), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop__cache_insert(c, NULL, &e), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop__cache_lookup(NULL, &fp, &e), 0);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.inserts, 0);
    nnop__cache_release(c);
}

static void test_cache_lru_counters(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 4, 0);
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(1), other = ct_fp(2);
    nnop_cache_stats st;
    (void)state;
    assert_int_equal(nnop__cache_lookup(c, &fp, &e), 0);
    ct_insert(c, 1, 0);
    assert_int_equal(nnop__cache_lookup(c, &fp, &e), 1);
    assert_int_equal(nnop__cache_lookup(c, &other, &e), 0);
    nnop__cache_add_time(c, NNOP_CACHE_T_HEURISTICS, 10);
    nnop__cache_add_time(c, NNOP_CACHE_T_FINALIZE, 20);
    nnop__cache_add_time(c, NNOP_CACHE_T_AUTOTUNE, 30);
    nnop__cache_add_time(c, NNOP_CACHE_T_AUTOTUNE, 1);
    nnop__cache_add_time(c, NNOP_CACHE_T_DESERIALIZE, 7);
    nnop__cache_count(c, NNOP_CACHE_EV_PLAN_BUILT);
    nnop__cache_count(c, NNOP_CACHE_EV_PLAN_FROM_BLOB);
    nnop__cache_count(c, NNOP_CACHE_EV_PLAN_FROM_BLOB);
    nnop__cache_count(c, NNOP_CACHE_EV_BLOB_REJECTED);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.misses, 2);
    assert_int_equal(st.heuristics_ns, 10);
    assert_int_equal(st.finalize_ns, 20);
    assert_int_equal(st.autotune_ns, 31);
    assert_int_equal(st.deserialize_ns, 7);
    assert_int_equal(st.plans_built, 1);
    assert_int_equal(st.plans_from_blob, 2);
    assert_int_equal(st.blobs_rejected, 1);
    nnop__cache_release(c);
}

static void test_cache_lru_many_entries(void **state)
{
    /* more entries than hash buckets: chains stay correct through evictions */
    nnop_plan_cache *c = ct_cache(NULL, 100, 0);
    nnop_cache_stats st;
    int64_t i;
    (void)state;
    for (i = 0; i < 1000; i++)
        ct_insert(c, i, (size_t)(i % 3));
    for (i = 900; i < 1000; i++)
        assert_true(ct_has(c, i, (size_t)(i % 3)));
    assert_false(ct_has(c, 899, 899 % 3));
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 100);
    assert_int_equal(st.evictions, 900);
    nnop__cache_release(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cache_lru_evicts_least_recently_used),
            cmocka_unit_test(test_cache_lru_byte_bound),
            cmocka_unit_test(test_cache_lru_oversized_blob_keeps_the_choice),
            cmocka_unit_test(test_cache_lru_replace_same_fingerprint),
            cmocka_unit_test(test_cache_lru_lookup_returns_an_owned_copy),
            cmocka_unit_test(test_cache_lru_rejects_malformed_entries),
            cmocka_unit_test(test_cache_lru_counters),
            cmocka_unit_test(test_cache_lru_many_entries),
    };
    return cmocka_run_group_tests_name("cache_lru", tests, NULL, NULL);
}
