/* test_cache_lru.c: the in-memory plan cache: LRU order, entry and byte bounds, replacement,
 * ownership of looked-up entries, counters; nnop__cache_newest_plans (order, filtering, max,
 * no side effects, owned copies). */
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

/* ---------------------------------------------------------------- nnop__cache_newest_plans */
/* Blob length of plan entry i in these tests (never 0). */
static size_t plan_len(int64_t i)
{
    return (size_t)(8 + 3 * i);
}

#define NP_SLOTS 8

/* Call nnop__cache_newest_plans(c, max) into slots prefilled with a pattern and check it
 * returns exactly the entries want[0..n_want-1] (ct_entry(i, plan_len(i)), io list included)
 * in that order with their fingerprints, leaves the slots past them untouched, then frees the
 * copies. */
static void expect_newest(nnop_plan_cache *c, int32_t max, const int64_t *want, int32_t n_want)
{
    nnop__fp fps[NP_SLOTS], fps_pat;
    nnop__cache_entry es[NP_SLOTS], es_pat;
    int32_t k, n;
    assert_true(max <= NP_SLOTS);
    memset(fps, 0xA5, sizeof fps);
    memset(es, 0xA5, sizeof es);
    memset(&fps_pat, 0xA5, sizeof fps_pat);
    memset(&es_pat, 0xA5, sizeof es_pat);
    n = nnop__cache_newest_plans(c, max, fps, es);
    assert_int_equal(n, n_want);
    for (k = 0; k < n; k++) {
        nnop__fp fp = ct_fp(want[k]);
        assert_true(nnop__fp_equal(&fps[k], &fp));
        assert_int_equal(es[k].engine_id, want[k]);
        assert_int_equal(es[k].blob_len, plan_len(want[k]));
        assert_non_null(es[k].blob);
        assert_int_equal(es[k].n_io, ct_n_io(want[k]));
        assert_true(ct_entry_matches(&es[k], want[k], plan_len(want[k])));
    }
    for (k = n; k < NP_SLOTS; k++) {
        assert_memory_equal(&fps[k], &fps_pat, sizeof fps_pat);
        assert_memory_equal(&es[k], &es_pat, sizeof es_pat);
    }
    for (k = 0; k < n; k++)
        nnop__cache_entry_clear(&es[k]);
}

/* Entries 1, 2, 3 have io lists (ct_n_io: 1, 16, 3); 4 and 8 have none. */
static void test_cache_newest_plans_most_recent_first(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 0, 0);
    const int64_t abc[3] = {3, 2, 1}, acb[3] = {1, 3, 2};
    (void)state;
    expect_newest(c, NP_SLOTS, NULL, 0); /* empty cache */
    ct_insert(c, 1, plan_len(1));        /* A */
    ct_insert(c, 2, plan_len(2));        /* B */
    ct_insert(c, 3, plan_len(3));        /* C */
    expect_newest(c, NP_SLOTS, abc, 3);
    assert_true(ct_has(c, 1, plan_len(1))); /* A becomes the most recently used */
    expect_newest(c, NP_SLOTS, acb, 3);
    nnop__cache_release(c);
}

static void test_cache_newest_plans_skips_entries_without_plan_or_io(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 0, 0);
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(9);
    const int64_t want[2] = {6, 1};
    (void)state;
    ct_insert(c, 1, plan_len(1)); /* plan and io */
    ct_insert(c, 0, 0);           /* neither */
    ct_insert(c, 4, plan_len(4)); /* blob, no io */
    ct_insert(c, 5, 0);           /* io, no blob */
    ct_insert(c, 6, plan_len(6)); /* plan and io */
    ct_insert(c, 7, 0);           /* io, no blob */
    ct_insert(c, 8, plan_len(8)); /* blob, no io */
    ct_entry(9, 16, &e);          /* blob and io, then the io list dropped */
    e.n_io = 0;
    assert_int_equal(nnop__cache_insert(c, &fp, &e), NNOP_OK);
    nnop__cache_entry_clear(&e);
    expect_newest(c, NP_SLOTS, want, 2);
    nnop__cache_release(c);
}

static void test_cache_newest_plans_max_bounds_the_count(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 0, 0);
    nnop__fp fps[NP_SLOTS];
    nnop__cache_entry es[NP_SLOTS];
    const int64_t two[2] = {3, 2}, one[1] = {3}, skip[2] = {7, 3};
    (void)state;
    ct_insert(c, 1, plan_len(1));
    ct_insert(c, 2, plan_len(2));
    ct_insert(c, 3, plan_len(3));
    expect_newest(c, 2, two, 2);
    expect_newest(c, 1, one, 1);
    expect_newest(c, 0, NULL, 0);
    expect_newest(c, -1, NULL, 0);
    /* entries skipped are not counted against max */
    ct_insert(c, 4, plan_len(4)); /* no io */
    ct_insert(c, 7, plan_len(7));
    ct_insert(c, 8, plan_len(8)); /* no io */
    expect_newest(c, 2, skip, 2);
    assert_int_equal(nnop__cache_newest_plans(NULL, NP_SLOTS, fps, es), 0);
    nnop__cache_release(c);
}

static void test_cache_newest_plans_counts_nothing(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 0, 0);
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(2), absent = ct_fp(42);
    nnop_cache_stats before, after;
    const int64_t want[2] = {2, 1};
    (void)state;
    ct_insert(c, 1, plan_len(1));
    ct_insert(c, 2, plan_len(2));
    assert_int_equal(nnop__cache_lookup(c, &fp, &e), 1);
    nnop__cache_entry_clear(&e);
    assert_int_equal(nnop__cache_lookup(c, &absent, &e), 0);
    nnop__cache_stats(c, &before);
    assert_int_equal(before.hits, 1);
    assert_int_equal(before.misses, 1);
    expect_newest(c, NP_SLOTS, want, 2);
    expect_newest(c, 1, want, 1);
    nnop__cache_stats(c, &after);
    assert_int_equal(after.hits, 1);
    assert_int_equal(after.misses, 1);
    assert_memory_equal(&after, &before, sizeof before);
    nnop__cache_release(c);
}

/* Three plans in a cache of three entries, used so that the order (oldest first) is 3, 1, 2;
 * optionally nnop__cache_newest_plans (all of them, or only the newest); then a fourth
 * insert. Returns the one entry of 1..3 that was evicted. */
static int64_t evicted_by_fourth_insert(int32_t newest_max)
{
    nnop_plan_cache *c = ct_cache(NULL, 3, 0);
    const int64_t order[3] = {2, 1, 3};
    nnop_cache_stats st;
    int64_t i, gone = 0;
    ct_insert(c, 1, plan_len(1));
    ct_insert(c, 2, plan_len(2));
    ct_insert(c, 3, plan_len(3));
    assert_true(ct_has(c, 1, plan_len(1)));
    assert_true(ct_has(c, 2, plan_len(2)));
    if (newest_max > 0) {
        expect_newest(c, newest_max, order, newest_max < 3 ? newest_max : 3);
        expect_newest(c, NP_SLOTS, order, 3); /* the same order again */
    }
    ct_insert(c, 5, plan_len(5));
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 3);
    assert_int_equal(st.evictions, 1);
    for (i = 1; i <= 3; i++) {
        if (!ct_has(c, i, plan_len(i))) {
            assert_int_equal(gone, 0);
            gone = i;
        }
    }
    assert_true(ct_has(c, 5, plan_len(5)));
    nnop__cache_release(c);
    return gone;
}

static void test_cache_newest_plans_keeps_the_lru_order(void **state)
{
    (void)state;
    assert_int_equal(evicted_by_fourth_insert(0), 3); /* without the call */
    assert_int_equal(evicted_by_fourth_insert(NP_SLOTS), 3);
    assert_int_equal(evicted_by_fourth_insert(1), 3);
}

static void test_cache_newest_plans_copies_are_independent(void **state)
{
    nnop_plan_cache *c = ct_cache(NULL, 0, 0);
    nnop__fp fps[NP_SLOTS];
    nnop__cache_entry es[NP_SLOTS], e;
    nnop__fp fp = ct_fp(3);
    int32_t k, n;
    int64_t i;
    (void)state;
    for (i = 1; i <= 3; i++)
        ct_insert(c, i, plan_len(i));
    n = nnop__cache_newest_plans(c, NP_SLOTS, fps, es);
    assert_int_equal(n, 3);
    /* a lookup's blob is another copy of the same bytes */
    assert_int_equal(nnop__cache_lookup(c, &fp, &e), 1);
    assert_int_equal(e.blob_len, es[0].blob_len);
    assert_memory_equal(e.blob, es[0].blob, e.blob_len);
    assert_ptr_not_equal(e.blob, es[0].blob);
    nnop__cache_entry_clear(&e);
    for (k = 0; k < n; k++) {
        memset(es[k].blob, 0, es[k].blob_len); /* scribble over the copy, then free it */
        es[k].io[0].uid = -7;
        nnop__cache_entry_clear(&es[k]);
        assert_null(es[k].blob);
        assert_int_equal(es[k].blob_len, 0);
    }
    for (i = 1; i <= 3; i++)
        assert_true(ct_has(c, i, plan_len(i)));
    /* and the cache still hands out copies */
    n = nnop__cache_newest_plans(c, NP_SLOTS, fps, es);
    assert_int_equal(n, 3);
    for (k = 0; k < n; k++) {
        assert_true(ct_entry_matches(&es[k], es[k].engine_id, plan_len(es[k].engine_id)));
        nnop__cache_entry_clear(&es[k]);
    }
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
            cmocka_unit_test(test_cache_newest_plans_most_recent_first),
            cmocka_unit_test(test_cache_newest_plans_skips_entries_without_plan_or_io),
            cmocka_unit_test(test_cache_newest_plans_max_bounds_the_count),
            cmocka_unit_test(test_cache_newest_plans_counts_nothing),
            cmocka_unit_test(test_cache_newest_plans_keeps_the_lru_order),
            cmocka_unit_test(test_cache_newest_plans_copies_are_independent),
    };
    return cmocka_run_group_tests_name("cache_lru", tests, NULL, NULL);
}
