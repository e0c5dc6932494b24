/* test_doctor.c: nnop_diagnose (the installation report) and nnop_cache_file_check (what
 * nnop-doctor --cache prints). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "cache.h"

static void test_diagnose_reports_version_and_needed_length(void **state)
{
    char small[8], want[64];
    size_t need = nnop_diagnose(NULL, 0), got;
    char *full = (char *)malloc(need + 1);
    (void)state;
    assert_non_null(full);
    got = nnop_diagnose(full, need + 1);
    assert_int_equal(got, need);
    assert_int_equal(strlen(full), need);
    snprintf(want, sizeof want, "nnop %d.%d.%d", NNOP_VERSION_MAJOR, NNOP_VERSION_MINOR,
             NNOP_VERSION_PATCH);
    assert_non_null(strstr(full, want));
    assert_int_equal(nnop_diagnose(small, sizeof small), need); /* truncated, still counted */
    assert_int_equal(strlen(small), sizeof small - 1);
    free(full);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_cache_check_missing_file_is_fine(void **state)
{
    char text[512];
    (void)state;
    remove("doctor_missing.bin");
    assert_int_equal(nnop_cache_file_check("doctor_missing.bin", text, sizeof text), NNOP_OK);
    assert_non_null(strstr(text, "missing"));
}

static void test_cache_check_garbage_is_format_error(void **state)
{
    char text[512];
    (void)state;
    write_file("doctor_garbage.bin", "not a cache at all", 18);
    assert_int_equal(nnop_cache_file_check("doctor_garbage.bin", text, sizeof text),
                     NNOP_ERR_FORMAT);
    assert_non_null(strstr(text, "bad magic"));
    remove("doctor_garbage.bin");
}

static void test_cache_check_counts_good_entries(void **state)
{
    nnop_plan_cache *c = NULL;
    nnop__cache_entry e;
    nnop__fp fp;
    char text[512], msg[256];
    int i;
    (void)state;
    remove("doctor_good.bin");
    assert_int_equal(nnop__cache_create("doctor_good.bin", 16, 0, &c), NNOP_OK);
    assert_int_equal(nnop__cache_bind(c, 91400, "TestGPU/sm_90/132"), NNOP_OK);
    memset(&e, 0, sizeof e);
    e.time_us = -1.0f;
    e.workspace_bytes = 0;
    for (i = 0; i < 3; i++) {
        fp.lo = (uint64_t)i + 1;
        fp.hi = 7;
        e.engine_id = 40 + i;
        assert_int_equal(nnop__cache_insert(c, &fp, &e), NNOP_OK);
    }
    assert_int_equal(nnop__cache_save(c, NULL, 0, msg, sizeof msg), NNOP_OK);
    nnop__cache_release(c);
    assert_int_equal(nnop_cache_file_check("doctor_good.bin", text, sizeof text), NNOP_OK);
    assert_non_null(strstr(text, "header ok; 3 good entries, 0 corrupt"));
    remove("doctor_good.bin");
}

static void test_cache_check_rejects_null_path(void **state)
{
    char text[16];
    (void)state;
    assert_int_equal(nnop_cache_file_check(NULL, text, sizeof text), NNOP_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_diagnose_reports_version_and_needed_length),
            cmocka_unit_test(test_cache_check_missing_file_is_fine),
            cmocka_unit_test(test_cache_check_garbage_is_format_error),
            cmocka_unit_test(test_cache_check_counts_good_entries),
            cmocka_unit_test(test_cache_check_rejects_null_path),
    };
    return cmocka_run_group_tests_name("doctor", tests, NULL, NULL);
}
