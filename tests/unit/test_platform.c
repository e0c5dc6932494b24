/* test_platform.c: the small OS services in src/platform that nothing else tests: reading an
 * integer switch from the environment (nnop__env_int). */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#endif
#include <stdlib.h>

#include "nnop_test.h"

#include "platform/platform.h"

#define VAR "NNOP_TEST_PLATFORM_ENV"

static void set_env(const char *value)
{
#ifdef _WIN32
    assert_int_equal(_putenv_s(VAR, value ? value : ""), 0);
#else
    assert_int_equal(value ? setenv(VAR, value, 1) : unsetenv(VAR), 0);
#endif
}

static void test_env_int_numbers(void **state)
{
    (void)state;
    set_env("12");
    assert_int_equal(nnop__env_int(VAR, 7), 12);
    set_env("-3");
    assert_int_equal(nnop__env_int(VAR, 7), -3);
    set_env("0");
    assert_int_equal(nnop__env_int(VAR, 7), 0);
    set_env(NULL);
}

static void test_env_int_falls_back(void **state)
{
    (void)state;
    set_env(NULL);
    assert_int_equal(nnop__env_int(VAR, 7), 7);
    set_env("");
    assert_int_equal(nnop__env_int(VAR, 7), 7);
    set_env("4x");
    assert_int_equal(nnop__env_int(VAR, 7), 7);
    set_env("on");
    assert_int_equal(nnop__env_int(VAR, 7), 7);
    set_env("99999999999");
    assert_int_equal(nnop__env_int(VAR, 7), 7);
    set_env("123456789012345678901234567890123456789");
    assert_int_equal(nnop__env_int(VAR, 7), 7);
    set_env(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_env_int_numbers),
            cmocka_unit_test(test_env_int_falls_back),
    };
    return cmocka_run_group_tests_name("platform", tests, NULL, NULL);
}
