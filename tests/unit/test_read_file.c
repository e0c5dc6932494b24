/* test_read_file.c: nnop__read_file, the one bounded whole-file reader (the plan cache file,
 * the calibration table): the bytes and a NUL after them, the cut at max with `longer`
 * said, empty files, missing ones and directories refused with why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "internal.h"
#include "platform/platform.h"

static void temp_name(char *buf, size_t len, const char *what)
{
    snprintf(buf, len, "nnop_read_file_test_%llu_%s.bin", (unsigned long long)nnop__process_id(),
             what);
}

/* A file of n bytes 0, 1, 2, ... (mod 251). */
static void write_bytes(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    size_t i;
    assert_non_null(f);
    for (i = 0; i < n; i++)
        assert_int_equal(fputc((int)(i % 251), f), (int)(i % 251));
    assert_int_equal(fclose(f), 0);
}

static void expect_read(const char *path, size_t max, size_t want_len, int want_longer)
{
    unsigned char *buf = NULL;
    size_t len = 99, i;
    int longer = -1;
    nnop__open_result why = NNOP__OPEN_FAILED;
    assert_int_equal(nnop__read_file(path, max, &buf, &len, &longer, &why), 0);
    assert_int_equal(why, NNOP__OPEN_OK);
    assert_non_null(buf);
    assert_int_equal(len, want_len);
    assert_int_equal(longer, want_longer);
    for (i = 0; i < len; i++)
        if (buf[i] != (unsigned char)(i % 251))
            fail_msg("byte %zu is %d, not %d", i, buf[i], (int)(i % 251));
    assert_int_equal(buf[len], 0);
    free(buf);
}

/* Sizes around the reader's 4 KiB start and its doublings, against limits around them. */
static void test_bytes_and_the_cut(void **state)
{
    static const size_t sizes[] = {0, 1, 4094, 4095, 4096, 4097, 8191, 8192, 100000};
    static const size_t maxes[] = {0, 1, 4095, 4096, 8192, 1 << 20};
    char path[128];
    size_t i, j;
    (void)state;
    temp_name(path, sizeof path, "sizes");
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        write_bytes(path, sizes[i]);
        for (j = 0; j < sizeof maxes / sizeof maxes[0]; j++) {
            size_t m = maxes[j];
            expect_read(path, m, sizes[i] < m ? sizes[i] : m, sizes[i] > m);
        }
    }
    assert_int_equal(remove(path), 0);
}

static void test_missing_and_not_regular(void **state)
{
    unsigned char *buf = (unsigned char *)state; /* must come back NULL */
    size_t len = 7;
    int longer = 7;
    nnop__open_result why = NNOP__OPEN_OK;
    assert_int_equal(nnop__read_file("no/such/dir/file.bin", 100, &buf, &len, &longer, &why), -1);
    assert_int_equal(why, NNOP__OPEN_MISSING);
    assert_null(buf);
    assert_int_equal(len, 0);
    assert_string_equal(nnop__open_problem(why), "no such file");
    assert_int_equal(nnop__read_file(".", 100, &buf, &len, &longer, &why), -1);
    assert_int_equal(why, NNOP__OPEN_NOT_REGULAR);
    assert_null(buf);
    assert_non_null(strstr(nnop__open_problem(why), "not a regular file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_bytes_and_the_cut),
            cmocka_unit_test(test_missing_and_not_regular),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
