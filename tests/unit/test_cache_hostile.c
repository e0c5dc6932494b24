/* test_cache_hostile.c: the plan cache file against hostile and unlucky files (issue 11):
 * a parse linear in the file's size, saves that never replace a file they could not read,
 * special files, values from the file checked, stale temporary files removed. */
#include "nnop_test.h"

#include "cache_test_util.h"
#include "internal.h"

/* A valid header and two entries, then back-to-back record heads each claiming the rest of
 * the file as its length (with a wrong checksum): *len bytes in all. */
static unsigned char *crafted_heads(size_t total, size_t *len, size_t *good_len)
{
    size_t flen, off;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, 2, &flen);
    unsigned char *buf = (unsigned char *)malloc(total);
    assert_non_null(buf);
    assert_true(total > flen + 12);
    memcpy(buf, f, flen);
    free(f);
    for (off = flen; off + 12 <= total; off += 12) {
        size_t rest = total - off - 12;
        uint32_t claim = rest > 0xffffffffu ? 0xffffffffu : (uint32_t)rest;
        memcpy(buf + off, "NNCE", 4);
        buf[off + 4] = (unsigned char)claim;
        buf[off + 5] = (unsigned char)(claim >> 8);
        buf[off + 6] = (unsigned char)(claim >> 16);
        buf[off + 7] = (unsigned char)(claim >> 24);
        memset(buf + off + 8, 0, 4);
    }
    memset(buf + off, 0, total - off);
    *len = total;
    *good_len = flen;
    return buf;
}

static void test_cache_parse_is_linear_on_back_to_back_heads(void **state)
{
    size_t len, good;
    unsigned char *buf = crafted_heads((size_t)1 << 20, &len, &good);
    nnop__cache_report rep;
    (void)state;
    nnop__cache_parse(buf, len, CT_CUDNN, CT_KEY, NULL, NULL, &rep);
    assert_int_equal(rep.entries_ok, 2); /* the good entries before the damage */
    assert_int_equal(rep.status, NNOP_ERR_FORMAT);
    assert_true(rep.ignored_corrupt >= 1);
    /* quadratic before: every head checksummed the rest of the file (~43 GB here) */
    assert_true(rep.bytes_checksummed <= 4 * (uint64_t)len);
    free(buf);
}

static void test_cache_parse_still_resyncs_after_one_damaged_length(void **state)
{
    /* one record whose length claims the rest of the file: the records after it still load */
    size_t len, hlen;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, 4, &len), *h;
    nnop__cache_report rep;
    uint32_t claim;
    (void)state;
    h = ct_file(CT_CUDNN, CT_KEY, 0, 0, &hlen);
    free(h);
    claim = (uint32_t)(len - hlen - 12);
    f[hlen + 4] = (unsigned char)claim;
    f[hlen + 5] = (unsigned char)(claim >> 8);
    f[hlen + 6] = (unsigned char)(claim >> 16);
    f[hlen + 7] = (unsigned char)(claim >> 24);
    nnop__cache_parse(f, len, CT_CUDNN, CT_KEY, NULL, NULL, &rep);
    assert_int_equal(rep.entries_ok, 3);
    assert_int_equal(rep.ignored_corrupt, 1);
    free(f);
}

/* entry 1 of a two-entry file with its first io pair's byte size set to bytes (checksum fixed) */
static size_t entries_loaded_with_io_bytes(int64_t bytes, int64_t workspace)
{
    nnop__fp fps[2] = {ct_fp(1), ct_fp(2)};
    nnop__cache_entry es[2];
    nnop__cache_report rep;
    unsigned char *f = NULL;
    size_t len = 0;
    int k;
    for (k = 0; k < 2; k++)
        ct_entry(k + 1, 3, &es[k]); /* entry 1 has one io pair */
    es[0].io[0].bytes = bytes;
    es[0].workspace_bytes = workspace;
    assert_int_equal(nnop__cache_serialize(CT_CUDNN, CT_KEY, 2, fps, es, &f, &len), NNOP_OK);
    nnop__cache_parse(f, len, CT_CUDNN, CT_KEY, NULL, NULL, &rep);
    for (k = 0; k < 2; k++)
        nnop__cache_entry_clear(&es[k]);
    free(f);
    return (size_t)rep.entries_ok;
}

static void test_cache_file_io_sizes_out_of_range_are_rejected(void **state)
{
    (void)state;
    assert_int_equal(entries_loaded_with_io_bytes(300, 0), 2);
    assert_int_equal(entries_loaded_with_io_bytes(1, -1), 2);
    assert_int_equal(entries_loaded_with_io_bytes(-1, 0), 1);
    assert_int_equal(entries_loaded_with_io_bytes(0, 0), 1);
    assert_int_equal(entries_loaded_with_io_bytes(INT64_MAX, 0), 1);
    assert_int_equal(entries_loaded_with_io_bytes(NNOP_MAX_TENSOR_ELEMENTS * 4 + 1, 0), 1);
    assert_int_equal(entries_loaded_with_io_bytes(300, -2), 1);
    assert_int_equal(entries_loaded_with_io_bytes(300, INT64_MAX), 1);
}

#ifndef _WIN32
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* A FIFO as cache_path: load and save return at once with NNOP_ERR_IO (before: fopen waited
 * forever for a writer), and the FIFO is still there. */
static void test_cache_fifo_path_never_blocks_and_is_not_replaced(void **state)
{
    char path[256], msg[256];
    nnop__cache_report rep;
    nnop_plan_cache *c;
    struct stat st;
    (void)state;
    ct_path(path, sizeof path, "fifo");
    ct_cleanup(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    c = ct_cache(NULL, 0, 0);
    ct_insert(c, 1, 4);
    assert_int_equal(nnop__cache_load(c, path, &rep), NNOP_ERR_IO);
    assert_int_equal(nnop__cache_save(c, path, 0, msg, sizeof msg), NNOP_ERR_IO);
    assert_non_null(strstr(msg, "not a regular file"));
    assert_non_null(strstr(msg, "not replaced"));
    assert_int_equal(nnop__cache_check_file(path, CT_CUDNN, CT_KEY, &rep), NNOP_ERR_IO);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    nnop__cache_release(c);
    ct_cleanup(path);
}

/* A directory as cache_path: refused clearly, left alone. */
static void test_cache_directory_path_is_refused(void **state)
{
    char path[256], msg[256];
    nnop_plan_cache *c;
    struct stat st;
    (void)state;
    ct_path(path, sizeof path, "dir");
    ct_cleanup(path);
    rmdir(path);
    assert_int_equal(mkdir(path, 0700), 0);
    c = ct_cache(NULL, 0, 0);
    ct_insert(c, 1, 4);
    assert_int_equal(nnop__cache_save(c, path, 0, msg, sizeof msg), NNOP_ERR_IO);
    assert_non_null(strstr(msg, "not a regular file"));
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    nnop__cache_release(c);
    assert_int_equal(rmdir(path), 0);
    ct_cleanup(path);
}

/* A file the process may write but not read (mode 0200), holding a user's text: a save must
 * not replace what it could not read. Root reads it anyway: skipped there. */
static void test_cache_write_only_file_is_not_overwritten(void **state)
{
    char path[256], msg[256];
    static const char text[] = "my notes, not a cache\n";
    unsigned char *back;
    size_t len;
    nnop_plan_cache *c;
    (void)state;
    ct_path(path, sizeof path, "writeonly");
    ct_cleanup(path);
    ct_write(path, text, sizeof text - 1);
    assert_int_equal(chmod(path, 0200), 0);
    if (access(path, R_OK) == 0) {
        ct_cleanup(path);
        skip(); /* root: permission bits do not stop it */
    }
    c = ct_cache(NULL, 0, 0);
    ct_insert(c, 1, 4);
    assert_int_equal(nnop__cache_save(c, path, 0, msg, sizeof msg), NNOP_ERR_IO);
    assert_non_null(strstr(msg, "not replaced"));
    assert_int_equal(chmod(path, 0600), 0);
    back = nnop_test_read_file(path, &len);
    assert_non_null(back);
    assert_int_equal(len, sizeof text - 1);
    assert_memory_equal(back, text, len);
    free(back);
    nnop__cache_release(c);
    ct_cleanup(path);
}
#endif

/* Temporary files of killed writers (any pid, any sequence) are removed by a later save; other
 * files that only look alike are not. */
static void test_cache_save_removes_stale_temporary_files(void **state)
{
    char path[256], stale1[300], stale2[300], keep1[300], keep2[300];
    nnop_plan_cache *c;
    FILE *f;
    (void)state;
    ct_path(path, sizeof path, "stale");
    ct_cleanup(path);
    snprintf(stale1, sizeof stale1, "%s.tmp.12345.7f00dead.0", path);
    snprintf(stale2, sizeof stale2, "%s.tmp.1.2.3", path);
    snprintf(keep1, sizeof keep1, "%s.tmp.1.2.3.bak", path);
    snprintf(keep2, sizeof keep2, "%s.tmpx.1.2.3", path);
    ct_write(stale1, "x", 1);
    ct_write(stale2, "y", 1);
    ct_write(keep1, "z", 1);
    ct_write(keep2, "w", 1);
    c = ct_cache(path, 0, 0);
    ct_insert(c, 1, 4);
    assert_int_equal(nnop__cache_save(c, NULL, 0, NULL, 0), NNOP_OK);
    assert_null(f = nnop__fopen(stale1, "rb", NULL));
    assert_null(f = nnop__fopen(stale2, "rb", NULL));
    assert_non_null(f = nnop__fopen(keep1, "rb", NULL));
    fclose(f);
    assert_non_null(f = nnop__fopen(keep2, "rb", NULL));
    fclose(f);
    nnop__cache_release(c);
    nnop__remove(keep1);
    nnop__remove(keep2);
    ct_cleanup(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cache_parse_is_linear_on_back_to_back_heads),
            cmocka_unit_test(test_cache_parse_still_resyncs_after_one_damaged_length),
            cmocka_unit_test(test_cache_file_io_sizes_out_of_range_are_rejected),
#ifndef _WIN32
            cmocka_unit_test(test_cache_fifo_path_never_blocks_and_is_not_replaced),
            cmocka_unit_test(test_cache_directory_path_is_refused),
            cmocka_unit_test(test_cache_write_only_file_is_not_overwritten),
#endif
            cmocka_unit_test(test_cache_save_removes_stale_temporary_files),
    };
    return cmocka_run_group_tests_name("cache_hostile", tests, NULL, NULL);
}
