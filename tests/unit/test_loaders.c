/* test_loaders.c: the examples' loaders (IDX, safetensors) against special and lying files
 * (issue 11): a FIFO never blocks, a directory or device is refused clearly, an IDX header's
 * count is checked against the file's size before the data is read, and a second
 * "__metadata__" is refused even after an empty first one. */
#include "nnop_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(NNOP_HAVE_EXAMPLES_SUPPORT) && !defined(_WIN32)
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "mnist.h"
#include "safetensors.h"

static char err_[MNIST_ERROR_LEN];

static void temp_name(char *buf, size_t len, const char *what)
{
    snprintf(buf, len, "nnop_loaders_%ld_%s", (long)getpid(), what);
}

static void test_idx_fifo_is_refused_without_blocking(void **state)
{
    char path[128];
    unsigned char *out = NULL;
    int count = 0;
    (void)state;
    temp_name(path, sizeof path, "fifo");
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(mnist_read_idx1(path, 0, 10, &out, &count, err_, sizeof err_), NNOP_ERR_IO);
    assert_non_null(strstr(err_, "not a regular file"));
    assert_null(out);
    unlink(path);
}

static void test_idx_directory_is_refused_clearly(void **state)
{
    char path[128];
    unsigned char *out = NULL;
    int count = 0;
    (void)state;
    temp_name(path, sizeof path, "dir");
    rmdir(path);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(mnist_read_idx1(path, 0, 10, &out, &count, err_, sizeof err_), NNOP_ERR_IO);
    assert_non_null(strstr(err_, "is a directory")); /* was "file of 2^63-1 bytes" */
    rmdir(path);
}

static void test_idx_count_is_checked_before_reading(void **state)
{
    /* header: 10 labels; the file is 64 MiB (sparse): refused from the sizes alone */
    static const unsigned char hdr[8] = {0, 0, 8, 1, 0, 0, 0, 10};
    char path[128];
    unsigned char *out = NULL;
    int count = 0;
    FILE *f;
    (void)state;
    temp_name(path, sizeof path, "sparse");
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(hdr, 1, sizeof hdr, f), sizeof hdr);
    assert_int_equal(fseek(f, 64L << 20, SEEK_SET), 0);
    assert_int_equal(fputc(0, f), 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(mnist_read_idx1(path, 0, 10, &out, &count, err_, sizeof err_),
                     NNOP_ERR_FORMAT);
    assert_non_null(strstr(err_, "the header's dimensions describe 10 bytes"));
    assert_null(out);
    unlink(path);
}

static void test_safetensors_special_files_are_refused(void **state)
{
    char path[128];
    safetensors_file *f = NULL;
    (void)state;
    /* /dev/zero used to grow the buffer until memory ran out */
    assert_int_equal(safetensors_open("/dev/zero", &f, err_, sizeof err_), NNOP_ERR_IO);
    assert_non_null(strstr(err_, "not a regular file"));
    assert_null(f);
    temp_name(path, sizeof path, "stfifo");
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(safetensors_open(path, &f, err_, sizeof err_), NNOP_ERR_IO);
    assert_null(f);
    unlink(path);
    assert_int_equal(safetensors_open(".", &f, err_, sizeof err_), NNOP_ERR_IO);
    assert_non_null(strstr(err_, "is a directory"));
}

static void test_safetensors_second_metadata_after_an_empty_one_is_refused(void **state)
{
    static const char json[] = "{\"__metadata__\":{},\"__metadata__\":{\"a\":\"b\"}}";
    unsigned char buf[128];
    size_t n = sizeof json - 1, i;
    safetensors_file *f = NULL;
    (void)state;
    for (i = 0; i < 8; i++)
        buf[i] = (unsigned char)(i == 0 ? n : 0);
    memcpy(buf + 8, json, n);
    assert_int_equal(safetensors_parse(buf, 8 + n, "dup", &f, err_, sizeof err_), NNOP_ERR_FORMAT);
    assert_non_null(strstr(err_, "appears twice"));
    assert_null(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_idx_fifo_is_refused_without_blocking),
            cmocka_unit_test(test_idx_directory_is_refused_clearly),
            cmocka_unit_test(test_idx_count_is_checked_before_reading),
            cmocka_unit_test(test_safetensors_special_files_are_refused),
            cmocka_unit_test(test_safetensors_second_metadata_after_an_empty_one_is_refused),
    };
    return cmocka_run_group_tests_name("loaders", tests, NULL, NULL);
}
#else
int main(void)
{
    return nnop_test_main_without_examples_support();
}
#endif
