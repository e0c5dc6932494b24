/* test_alloc_failures_cache.c: every host allocation of a plan cache save (with a merge of
 * another writer's entries) and of a load, failed in turn (glibc's own allocations in fopen
 * included). Each failure must give NNOP_ERR_OUT_OF_MEMORY (never IO, never a silent OK that
 * dropped entries), free everything, and keep every entry of the other writer in the file.
 * The allocator is replaced here (tests/common/alloc_inject.h); where it cannot be (not
 * glibc, or a sanitizer) the tests skip. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nnop_test.h"

#include "alloc_inject.h"
#include "cache_test_util.h"

enum { OTHER = 50, OURS = 20 };

#ifdef NNOP_CAN_INJECT
/* path holds the other writer's OTHER entries (100..149) */
static void write_other_writers_file(const char *path)
{
    nnop_plan_cache *o = ct_cache(path, 0, 0);
    int64_t i;
    for (i = 0; i < OTHER; i++)
        ct_insert(o, 100 + i, ct_blob_len(i));
    assert_int_equal(nnop__cache_save(o, NULL, 0, NULL, 0), NNOP_OK);
    nnop__cache_release(o);
}

/* entries of the other writer present in the file at path, and whether ours all are */
static int64_t count_in_file(const char *path, int *ours_all)
{
    nnop_plan_cache *c = ct_cache(path, 0, 0);
    int64_t i, n = 0;
    *ours_all = 1;
    for (i = 0; i < OTHER; i++)
        n += ct_has(c, 100 + i, ct_blob_len(i));
    for (i = 0; i < OURS; i++)
        *ours_all &= ct_has(c, i, ct_blob_len(i));
    nnop__cache_release(c);
    return n;
}
#endif

static void test_every_allocation_failure_of_a_merging_save(void **state)
{
    (void)state;
    SKIP_WITHOUT_INJECTION();
#ifdef NNOP_CAN_INJECT
    char path[256], msg[256];
    long k, total;
    nnop_plan_cache *c;
    int64_t i;
    int ours_all;
    ct_path(path, sizeof path, "oom_save");
    c = ct_cache(NULL, 0, 0); /* memory only: saved to path, merging the other writer's */
    for (i = 0; i < OURS; i++)
        ct_insert(c, i, ct_blob_len(i));
    ct_cleanup(path);
    write_other_writers_file(path);
    arm(0, 0);
    assert_int_equal(nnop__cache_save(c, path, 0, msg, sizeof msg), NNOP_OK);
    disarm();
    total = count_;
    assert_int_equal(live_, 0);
    assert_true(total > 5);
    for (k = 1; k <= total; k++) {
        nnop_status st;
        ct_cleanup(path);
        write_other_writers_file(path);
        arm(k, 0);
        st = nnop__cache_save(c, path, 0, msg, sizeof msg);
        disarm();
        if (live_ != 0 || overflow_ != 0)
            fail_msg("allocation %ld of %ld: %ld allocations leaked", k, total, live_);
        if (st != NNOP_OK && st != NNOP_ERR_OUT_OF_MEMORY)
            fail_msg("allocation %ld of %ld: status %s (%s), not out of memory", k, total,
                     nnop_status_string(st), msg);
        if (count_in_file(path, &ours_all) != OTHER)
            fail_msg("allocation %ld of %ld (%s): the other writer's entries were lost", k, total,
                     nnop_status_string(st));
        if (st == NNOP_OK && !ours_all)
            fail_msg("allocation %ld of %ld: NNOP_OK but our entries are missing", k, total);
    }
    print_message("%ld allocations of a merging save, each failed in turn\n", total);
    nnop__cache_release(c);
    ct_cleanup(path);
#endif
}

static void test_every_allocation_failure_of_a_load(void **state)
{
    (void)state;
    SKIP_WITHOUT_INJECTION();
#ifdef NNOP_CAN_INJECT
    char path[256];
    long k, total;
    nnop__cache_report rep;
    nnop_plan_cache *c;
    ct_path(path, sizeof path, "oom_load");
    ct_cleanup(path);
    write_other_writers_file(path);
    c = ct_cache(NULL, 0, 0);
    arm(0, 0);
    assert_int_equal(nnop__cache_load(c, path, &rep), NNOP_OK);
    disarm();
    total = count_;
    nnop__cache_release(c);
    for (k = 1; k <= total; k++) {
        nnop_status st;
        c = ct_cache(NULL, 0, 0);
        arm(k, 0);
        st = nnop__cache_load(c, path, &rep);
        nnop__cache_release(c);
        disarm();
        if (live_ != 0 || overflow_ != 0)
            fail_msg("allocation %ld of %ld: %ld allocations leaked", k, total, live_);
        if (st != NNOP_ERR_OUT_OF_MEMORY)
            fail_msg("allocation %ld of %ld: status %s, not out of memory", k, total,
                     nnop_status_string(st));
    }
    print_message("%ld allocations of a load, each failed in turn\n", total);
    ct_cleanup(path);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_allocation_failure_of_a_merging_save),
            cmocka_unit_test(test_every_allocation_failure_of_a_load),
    };
    return cmocka_run_group_tests_name("alloc_failures_cache", tests, NULL, NULL);
}
