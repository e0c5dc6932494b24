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

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cache_parse_is_linear_on_back_to_back_heads),
            cmocka_unit_test(test_cache_parse_still_resyncs_after_one_damaged_length),
    };
    return cmocka_run_group_tests_name("cache_hostile", tests, NULL, NULL);
}
