/* test_cache_threads.c: one plan cache hit by many threads; saves racing inserts; several
 * caches and several processes writing the same file. Threads come from src/platform (no C11
 * <threads.h>: MSVC lacks it). Worker threads never call cmocka: they count failures and the
 * main thread asserts. */
#include "nnop_test.h"

#include "cache_test_util.h"

#define KEYS 200

typedef struct worker {
    nnop_plan_cache *c;
    const char *path; /* save to it now and then, if set */
    uint64_t seed;
    int64_t key_base; /* distinct keys per worker when nonzero */
    int ops;
    int saves;
    uint64_t lookups, hits, bad, failed;
} worker;

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static size_t key_blob(int64_t k)
{
    return (size_t)(k % 7) * 10;
}

static void insert_key(worker *w, int64_t k)
{
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(k);
    ct_entry(k, key_blob(k), &e);
    if (nnop__cache_insert(w->c, &fp, &e) != NNOP_OK)
        w->failed++;
    nnop__cache_entry_clear(&e);
}

static void lookup_insert_main(void *arg)
{
    worker *w = (worker *)arg;
    int i;
    for (i = 0; i < w->ops; i++) {
        uint64_t r = next_rand(&w->seed);
        int64_t k = (int64_t)(r % KEYS);
        if (r % 3 == 0) {
            insert_key(w, k);
        } else {
            nnop__cache_entry e;
            nnop__fp fp = ct_fp(k);
            w->lookups++;
            if (nnop__cache_lookup(w->c, &fp, &e)) {
                w->hits++;
                w->bad += !ct_entry_matches(&e, k, key_blob(k));
            }
            nnop__cache_entry_clear(&e);
        }
        if (i % 64 == 0)
            nnop__cache_add_time(w->c, NNOP_CACHE_T_FINALIZE, 1);
    }
}

static void run_workers(worker *w, int n, void (*fn)(void *))
{
    nnop__thread *t[16];
    int i;
    assert_true(n <= 16);
    for (i = 0; i < n; i++)
        assert_int_equal(nnop__thread_start(fn, &w[i], &t[i]), NNOP_OK);
    for (i = 0; i < n; i++)
        nnop__thread_join(t[i]);
}

static void test_cache_threads_lookup_insert(void **state)
{
    enum { N = 8 };
    worker w[N];
    nnop_plan_cache *c = ct_cache(NULL, 64, 0);
    nnop_cache_stats st;
    uint64_t lookups = 0, hits = 0;
    int i;
    (void)state;
    memset(w, 0, sizeof w);
    for (i = 0; i < N; i++) {
        w[i].c = c;
        w[i].seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
        w[i].ops = 20000;
    }
    run_workers(w, N, lookup_insert_main);
    for (i = 0; i < N; i++) {
        assert_int_equal(w[i].bad, 0);
        assert_int_equal(w[i].failed, 0);
        lookups += w[i].lookups;
        hits += w[i].hits;
    }
    nnop__cache_stats(c, &st);
    assert_int_equal(st.hits + st.misses, lookups);
    assert_int_equal(st.hits, hits);
    assert_true(st.entries <= 64);
    assert_int_equal(st.finalize_ns, (uint64_t)N * (20000 / 64 + 1));
    nnop__cache_release(c);
}

/* Insert w->ops distinct keys from key_base, saving every w->saves inserts. */
static void insert_save_main(void *arg)
{
    worker *w = (worker *)arg;
    int i;
    for (i = 0; i < w->ops; i++) {
        insert_key(w, w->key_base + i);
        if (w->path && w->saves && i % w->saves == 0 &&
            nnop__cache_save(w->c, w->path, 1, NULL, 0) != NNOP_OK)
            w->failed++;
    }
    if (w->path && nnop__cache_save(w->c, w->path, 0, NULL, 0) != NNOP_OK)
        w->failed++;
}

/* Load path into a fresh cache; every key of each worker must be there. */
static void check_file_has_all(const char *path, const worker *w, int n)
{
    nnop_plan_cache *c = ct_cache(NULL, 0, 0);
    nnop__cache_report rep;
    int i, k;
    assert_int_equal(nnop__cache_load(c, path, &rep), NNOP_OK);
    assert_int_equal(rep.status, NNOP_OK);
    assert_int_equal(rep.ignored_corrupt, 0);
    for (i = 0; i < n; i++)
        for (k = 0; k < w[i].ops; k++)
            assert_true(ct_has(c, w[i].key_base + k, key_blob(w[i].key_base + k)));
    nnop__cache_release(c);
}

static void test_cache_threads_saves_race_inserts(void **state)
{
    enum { N = 4 };
    worker w[N];
    char path[256];
    nnop_plan_cache *c;
    int i;
    (void)state;
    ct_path(path, sizeof path, "race");
    ct_cleanup(path);
    c = ct_cache(path, 0, 0);
    memset(w, 0, sizeof w);
    for (i = 0; i < N; i++) {
        w[i].c = c;
        w[i].path = path;
        w[i].key_base = 1000 * (i + 1);
        w[i].ops = 60;
        w[i].saves = 7;
    }
    run_workers(w, N, insert_save_main);
    for (i = 0; i < N; i++)
        assert_int_equal(w[i].failed, 0);
    check_file_has_all(path, w, N);
    nnop__cache_release(c);
    ct_cleanup(path);
}

static void test_cache_threads_several_caches_one_file(void **state)
{
    enum { N = 4 };
    worker w[N];
    char path[256];
    int i;
    (void)state;
    ct_path(path, sizeof path, "several");
    ct_cleanup(path);
    memset(w, 0, sizeof w);
    for (i = 0; i < N; i++) { /* as four contexts with their own caches on one file */
        w[i].c = ct_cache(path, 0, 0);
        w[i].path = path;
        w[i].key_base = 1000 * (i + 1);
        w[i].ops = 40;
        w[i].saves = 5;
    }
    run_workers(w, N, insert_save_main);
    for (i = 0; i < N; i++) {
        assert_int_equal(w[i].failed, 0);
        nnop__cache_release(w[i].c);
    }
    check_file_has_all(path, w, N);
    ct_cleanup(path);
}

static void test_cache_two_processes_share_a_file(void **state)
{
    enum { N = 2 };
    worker w[N];
    int64_t pid[N];
    char path[256];
    int i;
    (void)state;
    if (!nnop__fork_available())
        skip(); /* Windows: no fork */
    ct_path(path, sizeof path, "procs");
    ct_cleanup(path);
    memset(w, 0, sizeof w);
    for (i = 0; i < N; i++) {
        w[i].path = path;
        w[i].key_base = 1000 * (i + 1);
        w[i].ops = 50;
        w[i].saves = 3;
    }
    for (i = 0; i < N; i++) {
        pid[i] = nnop__fork();
        assert_true(pid[i] >= 0);
        if (pid[i] == 0) { /* child: its own cache on the shared file, then exit at once */
            w[i].c = ct_cache(path, 0, 0);
            insert_save_main(&w[i]);
            nnop__cache_release(w[i].c);
            nnop__exit_now(w[i].failed ? 1 : 0);
        }
    }
    for (i = 0; i < N; i++)
        assert_int_equal(nnop__wait_child(pid[i]), 0);
    check_file_has_all(path, w, N);
    ct_cleanup(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cache_threads_lookup_insert),
            cmocka_unit_test(test_cache_threads_saves_race_inserts),
            cmocka_unit_test(test_cache_threads_several_caches_one_file),
            cmocka_unit_test(test_cache_two_processes_share_a_file),
    };
    return cmocka_run_group_tests_name("cache_threads", tests, NULL, NULL);
}
