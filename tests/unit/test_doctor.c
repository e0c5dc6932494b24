/* test_doctor.c: nnop_diagnose (the installation report), nnop_cache_file_check (what
 * nnop-doctor --cache prints) and the nnop-doctor program itself, run as users run it: its
 * exit status, what goes to stdout and stderr, a verdict that counts every PROBLEM printed,
 * --json as one valid JSON document (read back with Python's json module where CMake found a
 * Python), the cache check inside it, and the cuDNN nnop loads when a broken copy comes first
 * on LD_LIBRARY_PATH. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "cache.h"
#include "platform/platform.h"

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

/* A plan cache file of three entries, as a context saves one. */
static void write_good_cache(const char *path)
{
    nnop_plan_cache *c = NULL;
    nnop__cache_entry e;
    nnop__fp fp;
    char msg[256];
    int i;
    remove(path);
    assert_int_equal(nnop__cache_create(path, 16, 0, &c), NNOP_OK);
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
}

static void test_cache_check_counts_good_entries(void **state)
{
    char text[512];
    (void)state;
    write_good_cache("doctor_good.bin");
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

/* A folder is no cache file: the check says why it cannot be read, not only that. */
static void test_cache_check_says_why_it_cannot_read(void **state)
{
#ifndef _WIN32
    char text[512];
    (void)state;
    (void)rmdir("doctor_dir.bin");
    assert_int_equal(mkdir("doctor_dir.bin", 0700), 0);
    assert_int_equal(nnop_cache_file_check("doctor_dir.bin", text, sizeof text), NNOP_ERR_IO);
    assert_non_null(strstr(text, "cache file doctor_dir.bin: exists but cannot be read: not a "
                                 "regular file"));
    assert_int_equal(rmdir("doctor_dir.bin"), 0);
#else
    (void)state;
    skip();
#endif
}

/* A missing file is fine where it can be saved; where its folder is missing too nothing ever
 * can be, and "" is no path (both once read "missing (plans will be built and saved)"). */
static void test_cache_check_missing_file_and_missing_folder(void **state)
{
    char text[512];
    (void)state;
    (void)remove("doctor_never_written.bin");
    assert_int_equal(nnop_cache_file_check("doctor_never_written.bin", text, sizeof text), NNOP_OK);
    assert_non_null(strstr(text, "missing (plans will be built and saved)"));
    assert_int_equal(nnop_cache_file_check("no_such_dir_nnop_doctor/x.bin", text, sizeof text),
                     NNOP_ERR_IO);
    assert_non_null(strstr(text, "cache file no_such_dir_nnop_doctor/x.bin: missing, and its "
                                 "folder does not exist or cannot be read: nothing can be saved "
                                 "there"));
    /* a failed call writes nothing (nnop.h), the report aside: "" and NULL are no path */
    nnop_test_poison(text, sizeof text);
    assert_int_equal(nnop_cache_file_check("", text, sizeof text), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_cache_file_check(NULL, text, sizeof text), NNOP_ERR_INVALID_ARGUMENT);
    assert_true(nnop_test_is_poisoned(text, sizeof text));
}

/* ------------------------------------------------------------------ the nnop-doctor program */
#if defined(NNOP_DOCTOR_EXE) && !defined(_WIN32)
#define HAVE_DOCTOR_EXE 1

/* A file's text (NUL-terminated by nnop_test_read_file). */
static char *slurp(const char *path)
{
    size_t n;
    char *s = (char *)nnop_test_read_file(path, &n);
    assert_non_null(s);
    return s;
}

/* What one run of nnop-doctor gave. */
typedef struct doctor_run {
    int rc;
    char *out, *err;
} doctor_run;

/* nnop-doctor args, with env ("NAME=value ...", may be "") set for it alone. */
static doctor_run run_doctor(const char *env, const char *args)
{
    char cmd[2048];
    doctor_run r;
    int st;
    snprintf(cmd, sizeof cmd, "%s '%s' %s > doctor_tool.out 2> doctor_tool.err", env,
             NNOP_DOCTOR_EXE, args);
    st = system(cmd);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp("doctor_tool.out");
    r.err = slurp("doctor_tool.err");
    return r;
}

static void free_run(doctor_run *r)
{
    free(r->out);
    free(r->err);
    remove("doctor_tool.out");
    remove("doctor_tool.err");
}

static void assert_has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("missing:\n%s\nin:\n%s", want, text);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (; (text = strstr(text, what)) != NULL; text++)
        n++;
    return n;
}

/* The text verdict, the last line, agrees with the exit status and counts every problem
 * printed (a context that cannot be created counts too). */
static void assert_verdict_consistent(const doctor_run *r)
{
    const char *last = r->out + strlen(r->out);
    int n = count(r->out, "\nPROBLEM: ") + count(r->out, "context (AUTO backend): FAILED");
    assert_true(last > r->out && last[-1] == '\n');
    for (last--; last > r->out && last[-1] != '\n'; last--)
        ;
    if (n == 0) {
        if (strncmp(last, "verdict: ok", 11) != 0)
            fail_msg("no problem printed but the last line is: %s", last);
        assert_int_equal(r->rc, 0);
    } else {
        int v = -1;
        if (sscanf(last, "verdict: %d problem", &v) != 1 || v != n)
            fail_msg("%d problems printed but the last line is: %s\nin:\n%s", n, last, r->out);
        assert_int_equal(r->rc, 1);
    }
}

static void test_tool_help_goes_to_stdout_and_exits_0(void **state)
{
    doctor_run r;
    (void)state;
    r = run_doctor("", "--help");
    assert_int_equal(r.rc, 0);
    assert_has(r.out, "usage: nnop-doctor [--json] [--require-gpu] [--cache FILE]\n");
    assert_string_equal(r.err, "");
    free_run(&r);
    r = run_doctor("", "-h");
    assert_int_equal(r.rc, 0);
    assert_has(r.out, "usage: nnop-doctor");
    free_run(&r);
    r = run_doctor("", "--no-such-option"); /* a mistake stays one */
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.out, "");
    assert_has(r.err, "usage: nnop-doctor");
    free_run(&r);
    r = run_doctor("", "--cache");
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.out, "");
    free_run(&r);
}

/* The cache files the tool is tried on: name, state in the JSON, what the text must say. */
static const struct {
    const char *file, *state, *says;
} cache_cases[] = {
        {"doctor_tool_good.bin", "ok", "cache file doctor_tool_good.bin: header ok; 3 good"},
        {"doctor_tool_garbage.bin", "damaged",
         "PROBLEM: cache file doctor_tool_garbage.bin: header rejected (whole file ignored)"},
        {"doctor_tool_cut.bin", "damaged", "PROBLEM: cache file doctor_tool_cut.bin: "},
        {"doctor_tool_dir.bin", "unreadable",
         "PROBLEM: cache file doctor_tool_dir.bin: exists but cannot be read: not a regular"},
        {"doctor_tool_missing.bin", "missing",
         "PROBLEM: cache file doctor_tool_missing.bin does not exist\n  fix: check the path"},
};
#define N_CACHE_CASES (sizeof cache_cases / sizeof cache_cases[0])

static void make_cache_cases(void)
{
    unsigned char *good;
    size_t n;
    write_good_cache("doctor_tool_good.bin");
    write_file("doctor_tool_garbage.bin", "not a cache at all", 18);
    good = nnop_test_read_file("doctor_tool_good.bin", &n); /* cut in its last entry */
    assert_non_null(good);
    assert_true(n > 8);
    write_file("doctor_tool_cut.bin", good, n - 5);
    free(good);
    (void)rmdir("doctor_tool_dir.bin");
    assert_int_equal(mkdir("doctor_tool_dir.bin", 0700), 0);
    remove("doctor_tool_missing.bin");
}

static void remove_cache_cases(void)
{
    remove("doctor_tool_good.bin");
    remove("doctor_tool_good.bin.lock"); /* the save's */
    remove("doctor_tool_garbage.bin");
    remove("doctor_tool_cut.bin");
    (void)rmdir("doctor_tool_dir.bin");
}

static void test_tool_cache_problem_is_in_the_verdict(void **state)
{
    char args[256];
    size_t i;
    (void)state;
    make_cache_cases();
    for (i = 0; i < N_CACHE_CASES; i++) {
        doctor_run r;
        snprintf(args, sizeof args, "--cache %s", cache_cases[i].file);
        r = run_doctor("", args);
        assert_has(r.out, cache_cases[i].says);
        if (strcmp(cache_cases[i].state, "ok") != 0) {
            assert_int_equal(r.rc, 1);
            assert_null(strstr(r.out, "verdict: ok"));
        }
        assert_verdict_consistent(&r);
        assert_string_equal(r.err, "");
        free_run(&r);
    }
    remove_cache_cases();
}

/* Python's answer to expr over the JSON document in file (as d), or NULL without a Python.
 * A file that is not one valid JSON document fails the test. */
static char *json_query(const char *file, const char *expr)
{
#ifdef NNOP_TEST_PYTHON3
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd,
             "'%s' -c 'import json, sys; d = json.load(open(sys.argv[1])); print(%s)' %s > "
             "doctor_tool.py 2>&1",
             NNOP_TEST_PYTHON3, expr, file);
    st = system(cmd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char *why = slurp("doctor_tool.py"), *doc = slurp(file);
        fail_msg("%s is not valid JSON (or lacks a field): %s\n%s", file, why, doc);
    }
    return slurp("doctor_tool.py");
#else
    (void)file;
    (void)expr;
    return NULL;
#endif
}

/* --json alone and with each cache file: one JSON document (nothing after it), "ok" as the
 * exit status says, the cache check in its "cache" field and its problem among "problems". */
static void test_tool_json_is_one_document(void **state)
{
    char args[256], want[256], *got;
    size_t i;
    (void)state;
    make_cache_cases();
    for (i = 0; i <= N_CACHE_CASES; i++) {
        doctor_run r;
        int bad = i < N_CACHE_CASES && strcmp(cache_cases[i].state, "ok") != 0;
        snprintf(args, sizeof args, "--json%s%s", i < N_CACHE_CASES ? " --cache " : "",
                 i < N_CACHE_CASES ? cache_cases[i].file : "");
        r = run_doctor("", args);
        assert_string_equal(r.err, "");
        assert_true(strlen(r.out) > 2); /* one line, the object's, and nothing after it */
        assert_string_equal(r.out + strlen(r.out) - 2, "}\n");
        assert_ptr_equal(strchr(r.out, '\n'), r.out + strlen(r.out) - 1);
        if (bad)
            assert_int_equal(r.rc, 1);
        write_file("doctor_tool.json", r.out, strlen(r.out));
        got = json_query("doctor_tool.json",
                         "d[\"ok\"], (d.get(\"cache\") or {}).get(\"state\"), "
                         "sum(p[\"what\"].startswith(\"cache file\") for p in d[\"problems\"])");
        snprintf(want, sizeof want, "%s %s %d\n", r.rc == 0 ? "True" : "False",
                 i < N_CACHE_CASES ? cache_cases[i].state : "None", bad);
        if (got)
            assert_string_equal(got, want);
        free(got);
        free_run(&r);
    }
    remove("doctor_tool.json");
    remove("doctor_tool.py");
    remove_cache_cases();
}

/* src's first n bytes (all when n is 0) into dst: 0, or -1 when src cannot be read. */
static int copy_bytes(const char *src, const char *dst, size_t n)
{
    char buf[65536];
    size_t got, done = 0;
    FILE *in = fopen(src, "rb"), *out;
    if (!in)
        return -1;
    out = fopen(dst, "wb");
    assert_non_null(out);
    while ((n == 0 || done < n) &&
           (got = fread(buf, 1, n == 0 || n - done > sizeof buf ? sizeof buf : n - done, in)) > 0) {
        assert_int_equal(fwrite(buf, 1, got, out), got);
        done += got;
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
    return 0;
}

/* --cache "" names no file: a problem that says so, with its own fix (the library writes no
 * report for a failed argument; the tool says it), not "more memory". */
static void test_tool_cache_without_a_path(void **state)
{
    doctor_run r;
    (void)state;
    r = run_doctor("", "--cache ''");
    assert_has(r.out, "PROBLEM: cache file \"\": the path is empty\n  fix: name the cache file");
    assert_verdict_consistent(&r);
    free_run(&r);
}

/* A cut copy of the graph library beside a good library that needs it: loading the good one
 * maps the cut one through its $ORIGIN, and the loader dies of SIGBUS (an outside test saw
 * nnop-doctor end so, with no output). The doctor probes in child processes: it reports the
 * cut file, names the one whose loading killed a probe, and finishes with a verdict. */
static void test_tool_survives_a_library_that_crashes_the_loader(void **state)
{
    char dir[] = "/tmp/nnop_doctor_crash_XXXXXX", real[700], from[800], to[800], env[256];
    char *resolved = NULL, *slash;
    nnop__dl *h = nnop__dl_open("libcudnn_graph.so.9", 0, NULL, 0);
    doctor_run r;
    (void)state;
    if (!h || nnop__dl_path(h, real, sizeof real) != 0 || !(resolved = realpath(real, NULL)))
        skip(); /* no cuDNN installed to damage a copy of */
    snprintf(real, sizeof real, "%s", resolved);
    free(resolved);
    slash = strrchr(real, '/');
    assert_non_null(slash);
    *slash = '\0';
    assert_non_null(mkdtemp(dir));
    snprintf(from, sizeof from, "%s/libcudnn_engines_runtime_compiled.so.9", real);
    snprintf(to, sizeof to, "%s/libcudnn_engines_runtime_compiled.so.9", dir);
    if (copy_bytes(from, to, 0) != 0)
        skip();
    snprintf(from, sizeof from, "%s/libcudnn_graph.so.9", real);
    snprintf(to, sizeof to, "%s/libcudnn_graph.so.9", dir);
    assert_int_equal(copy_bytes(from, to, 4096), 0);
    nnop__dl_close(h);
    /* nothing else first on the search path: the cut copy is what the good one finds */
    snprintf(env, sizeof env, "env -u LD_LIBRARY_PATH NNOP_CUDNN_PATH=%s", dir);
    r = run_doctor(env, "");
    assert_has(r.out, "libcudnn_graph.so.9: truncated file: 4096 bytes");
    assert_has(r.out, "libcudnn_engines_runtime_compiled.so.9: loading or probing it crashed a "
                      "probe process (signal");
    assert_verdict_consistent(&r); /* it got to the end: 0 or 1, not a signal */
    free_run(&r);
    assert_int_equal(remove(to), 0);
    snprintf(to, sizeof to, "%s/libcudnn_engines_runtime_compiled.so.9", dir);
    assert_int_equal(remove(to), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* A cuBLASLt first on LD_LIBRARY_PATH that kills the process loading it (a module raising
 * SIGBUS, named for CUDA 12 and 13): reported as damaged, not passed over for the toolkit's
 * copy, as nnop's own loader would take it by that name and die. */
static void test_tool_reports_a_crashing_library_found_by_name(void **state)
{
#ifdef NNOP_TEST_CRASH_MODULE
    char dir[] = "/tmp/nnop_doctor_lt_XXXXXX", link[2][128], env[256];
    const char *line;
    doctor_run r;
    int i;
    (void)state;
    assert_non_null(mkdtemp(dir));
    for (i = 0; i < 2; i++) {
        snprintf(link[i], sizeof link[i], "%s/libcublasLt.so.%d", dir, 12 + i);
        assert_int_equal(symlink(NNOP_TEST_CRASH_MODULE, link[i]), 0);
    }
    snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s", dir);
    r = run_doctor(env, "");
    line = strstr(r.out, "\nlibcublasLt.so.1");
    assert_non_null(line);
    assert_has(line, ": NOT LOADED: libcublasLt.so.1");
    assert_non_null(strstr(line, "crashed a probe process (signal"));
    assert_true(strstr(line, "crashed") < strchr(line + 1, '\n'));
    assert_verdict_consistent(&r);
    free_run(&r);
    for (i = 0; i < 2; i++)
        assert_int_equal(remove(link[i]), 0);
    assert_int_equal(rmdir(dir), 0);
#else
    (void)state;
    skip();
#endif
}

#if defined(NNOP_HAVE_CUDA) && defined(NNOP_TEST_CUDNN_BUILD_DIR)
/* A text file named libcudnn.so.9 first on LD_LIBRARY_PATH: the loader refuses it, nnop takes
 * the one in the folder it was built against, and the doctor says so beside the broken one. */
static void test_tool_names_the_cudnn_nnop_loads(void **state)
{
    char dir[] = "/tmp/nnop_doctor_tool_XXXXXX", file[128], env[256], want[1024], *got;
    doctor_run r;
    FILE *f;
    (void)state;
    snprintf(want, sizeof want, "%s/libcudnn.so.9", NNOP_TEST_CUDNN_BUILD_DIR);
    if (access(want, R_OK) != 0)
        skip();
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/libcudnn.so.9", dir);
    f = fopen(file, "w");
    assert_non_null(f);
    fputs("this is not a shared library, only a text file that has its name\n", f);
    assert_int_equal(fclose(f), 0);
    snprintf(env, sizeof env, "env -u NNOP_CUDNN_PATH LD_LIBRARY_PATH=%s", dir);
    r = run_doctor(env, "");
    snprintf(want, sizeof want, "libcudnn.so.9: NOT LOADED: %s: invalid ELF header\n", file);
    assert_has(r.out, want);
    snprintf(want, sizeof want,
             "cuDNN nnop loads             %s/libcudnn.so.9 (from the folder nnop was built "
             "against, as the one found by name does not load)\n",
             NNOP_TEST_CUDNN_BUILD_DIR);
    assert_has(r.out, want);
    assert_verdict_consistent(&r);
    free_run(&r);
    r = run_doctor(env, "--json");
    write_file("doctor_tool_cudnn.json", r.out, strlen(r.out));
    got = json_query("doctor_tool_cudnn.json", "d[\"cudnn_used\"]");
    snprintf(want, sizeof want, "%s/libcudnn.so.9\n", NNOP_TEST_CUDNN_BUILD_DIR);
    if (got)
        assert_string_equal(got, want);
    else
        assert_has(r.out, "\"cudnn_used\": \"");
    free(got);
    free_run(&r);
    remove("doctor_tool_cudnn.json");
    remove("doctor_tool.py");
    assert_int_equal(remove(file), 0);
    assert_int_equal(rmdir(dir), 0);
}
#endif
#endif /* NNOP_DOCTOR_EXE */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagnose_reports_version_and_needed_length),
        cmocka_unit_test(test_cache_check_missing_file_is_fine),
        cmocka_unit_test(test_cache_check_garbage_is_format_error),
        cmocka_unit_test(test_cache_check_counts_good_entries),
        cmocka_unit_test(test_cache_check_rejects_null_path),
        cmocka_unit_test(test_cache_check_says_why_it_cannot_read),
        cmocka_unit_test(test_cache_check_missing_file_and_missing_folder),
#ifdef HAVE_DOCTOR_EXE
        cmocka_unit_test(test_tool_help_goes_to_stdout_and_exits_0),
        cmocka_unit_test(test_tool_cache_problem_is_in_the_verdict),
        cmocka_unit_test(test_tool_json_is_one_document),
        cmocka_unit_test(test_tool_cache_without_a_path),
        cmocka_unit_test(test_tool_survives_a_library_that_crashes_the_loader),
        cmocka_unit_test(test_tool_reports_a_crashing_library_found_by_name),
#if defined(NNOP_HAVE_CUDA) && defined(NNOP_TEST_CUDNN_BUILD_DIR)
        cmocka_unit_test(test_tool_names_the_cudnn_nnop_loads),
#endif
#endif
    };
    return cmocka_run_group_tests_name("doctor", tests, NULL, NULL);
}
