/* test_nnop_bench_json.c: nnop-bench's JSON writer gives well-formed JSON (parsed back with
 * cJSON) with escaped strings, null for what was not measured, and every result; the CSV has
 * a header and one line per result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "nb.h"

#ifdef NB_HAVE_CJSON
#include <cjson/cJSON.h>

static char *write_to_string(const nb_report *rep, int csv)
{
    FILE *f = tmpfile();
    long n;
    char *s;
    assert_non_null(f);
    if (csv)
        nb_write_csv(rep, f);
    else
        nb_write_json(rep, f);
    n = ftell(f);
    rewind(f);
    s = (char *)malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void test_json_well_formed(void **state)
{
    nb_report rep;
    nb_result *r;
    char *text;
    cJSON *root, *results, *item;
    (void)state;
    nb_report_init(&rep);
    snprintf(rep.version, sizeof rep.version, "0.1.0");
    snprintf(rep.backend, sizeof rep.backend, "cpu");
    snprintf(rep.device, sizeof rep.device, "host \"CPU\"\\x");
    rep.peak_gbs = 12.5;
    r = nb_report_add(&rep);
    snprintf(r->name, sizeof r->name, "conv\t\"a\"");
    snprintf(r->desc, sizeof r->desc, "conv n1c3h8w8k4r3s3");
    r->check = 1;
    r->check_err = 1e-5;
    r->check_tol = 1e-3;
    r->host_us = 12.0;
    r->plan = (char *)malloc(32);
    assert_non_null(r->plan);
    strcpy(r->plan, "line 1\nline \x01 2");
    r = nb_report_add(&rep);
    snprintf(r->name, sizeof r->name, "second");
    r->check_err = 1.0 / 0.0 * 0.0; /* NaN must not leak into JSON */
    text = write_to_string(&rep, 0);
    root = cJSON_Parse(text);
    if (!root)
        fail_msg("not JSON:\n%s", text);
    assert_string_equal(cJSON_GetObjectItem(root, "tool")->valuestring, "nnop-bench");
    assert_string_equal(cJSON_GetObjectItem(root, "device")->valuestring, "host \"CPU\"\\x");
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "peaks"), "copy_gbs")->valuedouble ==
                12.5);
    assert_true(
            cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "peaks"), "matmul_tflops")));
    results = cJSON_GetObjectItem(root, "results");
    assert_int_equal(cJSON_GetArraySize(results), 2);
    item = cJSON_GetArrayItem(results, 0);
    assert_string_equal(cJSON_GetObjectItem(item, "name")->valuestring, "conv\t\"a\"");
    assert_string_equal(cJSON_GetObjectItem(item, "check")->valuestring, "pass");
    assert_true(cJSON_GetObjectItem(item, "host_us")->valuedouble == 12.0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(item, "gpu_us")));
    assert_string_equal(cJSON_GetObjectItem(item, "plan")->valuestring, "line 1\nline \x01 2");
    item = cJSON_GetArrayItem(results, 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(item, "check_err")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(item, "plan")));
    cJSON_Delete(root);
    free(text);
    text = write_to_string(&rep, 1);
    assert_int_equal(strncmp(text, "name,kind,desc,", 15), 0);
    {
        int lines = 0;
        const char *p;
        for (p = text; *p; p++)
            lines += *p == '\n';
        assert_int_equal(lines, 3);
    }
    free(text);
    nb_report_free(&rep);
}

/* An engine row (nnop-bench --engines) keeps the whole list of policies that take it: the
 * field once held 23 characters and cut "prefer-precompiled,precompiled-only,..." short, and
 * the CSV wrote the list unquoted, its commas splitting it over four columns. */
static void test_engine_row_policies_whole(void **state)
{
    const char *all = "prefer-precompiled,precompiled-only,fastest,this plan";
    nb_report rep;
    nb_result *r;
    char *text;
    cJSON *root, *item;
    (void)state;
    nb_report_init(&rep);
    r = nb_report_add(&rep);
    snprintf(r->kind, sizeof r->kind, "engine");
    snprintf(r->name, sizeof r->name, "p0 eng41");
    snprintf(r->policy, sizeof r->policy, "%s", all);
    assert_string_equal(r->policy, all);
    text = write_to_string(&rep, 0);
    root = cJSON_Parse(text);
    assert_non_null(root);
    item = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "results"), 0);
    assert_string_equal(cJSON_GetObjectItem(item, "kind")->valuestring, "engine");
    assert_string_equal(cJSON_GetObjectItem(item, "policy")->valuestring, all);
    cJSON_Delete(root);
    free(text);
    text = write_to_string(&rep, 1);
    assert_non_null(strstr(text, all));
    /* the CSV row has as many fields as the header: the list's commas are quoted */
    {
        int fields[2] = {1, 1}, row = 0, quoted = 0;
        const char *p;
        for (p = text; *p && row < 2; p++) {
            if (*p == '"')
                quoted = !quoted;
            else if (*p == ',' && !quoted)
                fields[row]++;
            else if (*p == '\n' && !quoted)
                row++;
        }
        assert_int_equal(row, 2);
        assert_int_equal(fields[1], fields[0]);
    }
    free(text);
    nb_report_free(&rep);
}

static void test_json_empty(void **state)
{
    nb_report rep;
    char *text;
    cJSON *root;
    (void)state;
    nb_report_init(&rep);
    text = write_to_string(&rep, 0);
    root = cJSON_Parse(text);
    assert_non_null(root);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "results")), 0);
    cJSON_Delete(root);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_json_well_formed),
            cmocka_unit_test(test_json_empty),
            cmocka_unit_test(test_engine_row_policies_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
static void test_no_cjson(void **state)
{
    (void)state;
    skip();
}
int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_cjson)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
