/* test_doctor_libs.c: the doctor's library checks (src/doctor.h) driven through the failure
 * modes of a cuDNN installation with fake library folders (an empty one, one whose
 * libcudnn_engines_runtime_compiled is a text file, one without libcudnn_graph), the verdicts
 * on given facts (versions that do not fit, a sub-library version mismatch, a driver older
 * than the runtime, NVRTC missing, cuBLASLt missing as a note), the fixes while
 * NNOP_CUDNN_PATH is set, which cuDNN nnop's own loader takes, the JSON escaping and
 * NNOP_CUDNN_PATH. The build's facts
 * are filled in by the test, so every check runs in CPU-only builds too. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "doctor.h"
#include "platform/platform.h"

#ifdef _WIN32
#define SKIP_ON_WINDOWS() skip()
#else
#define SKIP_ON_WINDOWS() ((void)0)
#endif

static const char *const cudnn_files[] = {
        "libcudnn.so.9",
        "libcudnn_graph.so.9",
        "libcudnn_engines_precompiled.so.9",
        "libcudnn_engines_runtime_compiled.so.9",
        "libcudnn_heuristic.so.9",
        "libcudnn_ops.so.9",
        "libcudnn_cnn.so.9",
        "libcudnn_adv.so.9",
};
#define N_FILES (sizeof cudnn_files / sizeof cudnn_files[0])

/* A CUDA 13 build against cuDNN 9.19 headers, whatever this build is. */
static void as_cuda_build(nnop__doctor *d, const char *dir)
{
    nnop__doctor_init(d, 0);
    snprintf(d->cudnn_dir, sizeof d->cudnn_dir, "%s", dir ? dir : "");
    d->with_cuda = 1;
    d->cudnn_headers = 91900;
    d->cudart_built = 13000;
    d->cublas_built = 0;
    d->cudart_loaded = 13000;
    d->gpu = NNOP__DOC_GPU_NONE;
    snprintf(d->gpu_error, sizeof d->gpu_error, "no CUDA device");
}

static char *report(const nnop__doctor *d, int json)
{
    nnop__text t;
    size_t need;
    char *s;
    nnop__text_init(&t, NULL, 0);
    if (json)
        nnop__doctor_json(d, &t);
    else
        nnop__doctor_text(d, &t);
    need = t.used + 1;
    s = (char *)malloc(need);
    assert_non_null(s);
    nnop__text_init(&t, s, need);
    if (json)
        nnop__doctor_json(d, &t);
    else
        nnop__doctor_text(d, &t);
    return s;
}

static void assert_has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("missing line:\n%s\nin the report:\n%s", want, text);
}

#ifndef _WIN32
static void make_dir(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/nnop_doctor_XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
    size_t i;
    char path[600];
    for (i = 0; i < N_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, cudnn_files[i]);
        (void)remove(path);
    }
    (void)rmdir(dir);
}

/* The folder of the real libcudnn_graph (symbolic links resolved), found once before any
 * test runs: the doctor keeps what it loads, so a later lookup by name could answer with a
 * fake folder's copy, which that test has removed since (seen on the GPU machine). */
static char real_dir[512];

static void find_real_cudnn_dir(void)
{
    char loaded[512], *resolved = NULL, *slash;
    nnop__dl *h = nnop__dl_open("libcudnn_graph.so.9", 0, NULL, 0);
    real_dir[0] = '\0';
    if (!h)
        return;
    if (nnop__dl_path(h, loaded, sizeof loaded) == 0)
        resolved = realpath(loaded, NULL);
    nnop__dl_close(h);
    if (resolved)
        snprintf(real_dir, sizeof real_dir, "%s", resolved);
    free(resolved);
    slash = strrchr(real_dir, '/');
    if (slash)
        *slash = '\0';
    else
        real_dir[0] = '\0';
}

/* A fake folder: the real cuDNN's files linked in, but `text` written as a text file and
 * `missing` left out (either may be NULL). Skips when no cuDNN is installed. */
static void fake_install(char *dir, size_t len, const char *text, const char *missing)
{
    char from[700], to[700];
    size_t i;
    if (!real_dir[0])
        skip();
    make_dir(dir, len);
    for (i = 0; i < N_FILES; i++) {
        if (missing && strcmp(cudnn_files[i], missing) == 0)
            continue;
        snprintf(to, sizeof to, "%s/%s", dir, cudnn_files[i]);
        if (text && strcmp(cudnn_files[i], text) == 0) {
            FILE *f = fopen(to, "w");
            assert_non_null(f);
            fputs("this is not a shared library, only a text file that has its name\n", f);
            assert_int_equal(fclose(f), 0);
            continue;
        }
        snprintf(from, sizeof from, "%s/%s", real_dir, cudnn_files[i]);
        assert_int_equal(symlink(from, to), 0);
    }
}

/* A folder with a copy of the real libcudnn.so.9 and, if graph, a link to the real graph
 * library. A copy is a file of its own, which the process loads under this folder's name: a
 * link to a file loaded before answers with the name it was first loaded under, maybe that of
 * another test's folder, removed since. Skips when no cuDNN is installed. */
static void copy_install(char *dir, size_t len, int graph)
{
    char from[700], to[700], buf[65536];
    FILE *in, *out;
    size_t n;
    if (!real_dir[0])
        skip();
    make_dir(dir, len);
    snprintf(from, sizeof from, "%s/libcudnn.so.9", real_dir);
    snprintf(to, sizeof to, "%s/libcudnn.so.9", dir);
    in = fopen(from, "rb");
    out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    if (!graph)
        return;
    snprintf(from, sizeof from, "%s/libcudnn_graph.so.9", real_dir);
    snprintf(to, sizeof to, "%s/libcudnn_graph.so.9", dir);
    assert_int_equal(symlink(from, to), 0);
}
#endif

/* A library that kills the process loading it (here a module raising SIGBUS from its
 * constructor, in the place of libcudnn_ops.so.9): the isolated probe reports it as not
 * loaded, naming it and the signal; the other libraries are probed by the next child, and
 * this process lives on. Runs in every build, with or without a cuDNN. */
static void test_isolated_probe_reports_a_library_that_kills_its_loader(void **state)
{
#if !defined(_WIN32) && defined(NNOP_TEST_CRASH_MODULE)
    nnop__doctor d;
    char dir[64], link[128], want[256], *text;
    const nnop__doc_lib *ops, *adv;
    (void)state;
    make_dir(dir, sizeof dir);
    snprintf(link, sizeof link, "%s/libcudnn_ops.so.9", dir);
    assert_int_equal(symlink(NNOP_TEST_CRASH_MODULE, link), 0);
    as_cuda_build(&d, dir);
    nnop__doctor_probe_isolated(&d);
    assert_string_equal(d.probe_failure, "");
    assert_int_equal(d.n_crashed, 1);
    assert_int_equal(d.progress_fd, -1);
    ops = nnop__doctor_lib(&d, "cudnn_ops");
    adv = nnop__doctor_lib(&d, "cudnn_adv");
    assert_non_null(ops);
    assert_non_null(adv); /* probed after it, by the next child */
    assert_false(ops->loaded);
    snprintf(want, sizeof want, "%s: loading or probing it crashed a probe process (signal %d, ",
             link, SIGBUS);
    assert_has(ops->error, want);
    assert_has(adv->error, "No such file");
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    assert_has(text, "PROBLEM: libcudnn_ops.so.9 (the legacy ops) cannot be loaded: ");
    assert_has(text, "fix: the file is damaged (a cut download or copy): reinstall it");
    free(text);
    assert_int_equal(remove(link), 0);
    remove_dir(dir);
#else
    (void)state;
    skip();
#endif
}

static void test_empty_folder_is_every_library_missing(void **state)
{
#ifndef _WIN32
    nnop__doctor d;
    char dir[64], want[1024];
    char *text;
    size_t i;
    (void)state;
    make_dir(dir, sizeof dir);
    as_cuda_build(&d, dir);
    nnop__doctor_probe(&d);
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    for (i = 0; i < N_FILES; i++) { /* each file listed with the loader's error */
        snprintf(want, sizeof want,
                 "%s: NOT LOADED: %s/%s: cannot open shared object file: No such file or "
                 "directory\n",
                 cudnn_files[i], dir, cudnn_files[i]);
        assert_has(text, want);
    }
    /* and one problem for them all, not eight with the same fix */
    /* NNOP_CUDNN_PATH is set: the fix names it, LD_LIBRARY_PATH cannot help */
    snprintf(want, sizeof want,
             "PROBLEM: no cuDNN library is in NNOP_CUDNN_PATH=%s: none of the %d files listed "
             "above is there\n  fix: install cuDNN 9 for CUDA 13 (the cudnn9-cuda-13 package, or "
             "pip install nvidia-cudnn-cu13) and set NNOP_CUDNN_PATH to the folder that holds "
             "all its cuDNN files, or unset it (while it is set nnop looks in that folder alone: "
             "LD_LIBRARY_PATH cannot help)\n",
             dir, (int)N_FILES);
    assert_has(text, want);
    assert_null(strstr(text, "PROBLEM: libcudnn"));
    assert_int_equal(d.n_problem, 1 + (nnop__doctor_lib(&d, "nvrtc")->loaded ? 0 : 1));
    snprintf(want, sizeof want, "verdict: %d problem%s\n", d.n_problem,
             d.n_problem == 1 ? "" : "s");
    assert_has(text, want);
    free(text);
    remove_dir(dir);
#else
    (void)state;
    skip();
#endif
}

static void test_text_file_as_runtime_compiled_gives_the_loader_error(void **state)
{
#ifndef _WIN32
    nnop__doctor d;
    char dir[64], want[NNOP__LIB_PATH_LEN + 256];
    char *text;
    const nnop__doc_lib *l;
    (void)state;
    fake_install(dir, sizeof dir, "libcudnn_engines_runtime_compiled.so.9", NULL);
    as_cuda_build(&d, dir);
    nnop__doctor_probe(&d);
    l = nnop__doctor_lib(&d, "cudnn_graph");
    assert_non_null(l);
    assert_true(l->loaded);
    d.cudnn_headers = l->version; /* whatever cuDNN this machine has: only the text file fails */
    d.cudart_built = l->cudart / 1000 * 1000;
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    snprintf(want, sizeof want,
             "libcudnn_engines_runtime_compiled.so.9: NOT LOADED: "
             "%s/libcudnn_engines_runtime_compiled.so.9: invalid ELF header\n",
             dir);
    assert_has(text, want);
    snprintf(want, sizeof want,
             "PROBLEM: libcudnn_engines_runtime_compiled.so.9 (the runtime-compiled engines: "
             "fused graphs, NNOP_POLICY_FASTEST) cannot be loaded: "
             "%s/libcudnn_engines_runtime_compiled.so.9: invalid ELF header\n  fix: the file "
             "exists but does not load: it is damaged or from another cuDNN version than the "
             "rest; reinstall cuDNN so that every cuDNN library comes from one installation, "
             "and remove the stray copy; or set NNOP_CUDNN_PATH to the folder of another, "
             "complete cuDNN installation, or unset it (while it is set nnop looks in that "
             "folder alone: LD_LIBRARY_PATH cannot help)\n",
             dir);
    assert_has(text, want);
    assert_int_equal(d.n_problem, 1 + (nnop__doctor_lib(&d, "nvrtc")->loaded ? 0 : 1));
    /* libcudnn and its graph library load from the folder: nnop itself takes that one (by
     * the name the process first loaded that file under: the probe's own) */
    snprintf(want, sizeof want, "cuDNN nnop loads             %s (from NNOP_CUDNN_PATH)\n",
             nnop__doctor_lib(&d, "cudnn")->path);
    assert_has(text, want);
    assert_has(text, "libcudnn_ops.so.9: ");
    free(text);
    remove_dir(dir);
#else
    (void)state;
    skip();
#endif
}

static void test_graph_missing_is_a_problem_and_nothing_is_called(void **state)
{
#ifndef _WIN32
    nnop__doctor d;
    char dir[64], want[NNOP__LIB_PATH_LEN + 256];
    char *text;
    (void)state;
    fake_install(dir, sizeof dir, NULL, "libcudnn_graph.so.9");
    as_cuda_build(&d, dir);
    nnop__doctor_probe(&d);
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    assert_false(nnop__doctor_lib(&d, "cudnn_graph")->loaded);
    if (!nnop__doctor_lib(&d, "cudnn")->loaded) /* say why before failing */
        print_error("libcudnn.so.9 from %s did not load: %s\n", dir,
                    nnop__doctor_lib(&d, "cudnn")->error);
    assert_true(nnop__doctor_lib(&d, "cudnn")->loaded);
    snprintf(want, sizeof want,
             "libcudnn_graph.so.9: NOT LOADED: %s/libcudnn_graph.so.9: cannot open shared "
             "object file: No such file or directory\n",
             dir);
    assert_has(text, want);
    snprintf(want, sizeof want,
             "PROBLEM: libcudnn_graph.so.9 (the graph API, every cuDNN call) cannot be "
             "loaded: %s/libcudnn_graph.so.9: cannot open shared object file",
             dir);
    assert_has(text, want);
    assert_has(text, "  fix: install cuDNN 9 for CUDA 13 (the cudnn9-cuda-13 package, or pip "
                     "install nvidia-cudnn-cu13) and set NNOP_CUDNN_PATH to the folder that "
                     "holds all its cuDNN files, or unset it");
    assert_true(d.n_problem >= 1);
    /* where no graph library is in the process yet (a first probe), the sub-libraries fail
     * on its symbols: their fix points at the missing graph library, not at damage */
    for (int i = 0; i < d.n_problem; i++)
        if (strstr(d.problem[i].what, "version libcudnn_graph.so.9") != NULL)
            assert_non_null(strstr(d.problem[i].fix, "it needs libcudnn_graph.so.9"));
    free(text);
    remove_dir(dir);
#else
    (void)state;
    skip();
#endif
}

/* ------------------------------------------------------------------ verdicts on given facts */
static nnop__doc_lib *add_lib(nnop__doctor *d, const char *key, const char *file, long version)
{
    nnop__doc_lib *l = &d->lib[d->n_lib++];
    memset(l, 0, sizeof *l);
    l->key = key;
    l->check = -1;
    l->loaded = 1;
    l->version = version;
    snprintf(l->file, sizeof l->file, "%s", file);
    snprintf(l->path, sizeof l->path, "/opt/cudnn/%s", file);
    return l;
}

static nnop__doc_lib *lib_of(nnop__doctor *d, const char *key)
{
    int i;
    for (i = 0; i < d->n_lib; i++)
        if (strcmp(d->lib[i].key, key) == 0)
            return &d->lib[i];
    fail_msg("no library %s", key);
    return NULL;
}

static void healthy(nnop__doctor *d, long cudnn)
{
    as_cuda_build(d, NULL);
    add_lib(d, "cudnn", "libcudnn.so.9", 0);
    add_lib(d, "cudnn_graph", "libcudnn_graph.so.9", cudnn)->cudart = 13000;
    add_lib(d, "cudnn_ops", "libcudnn_ops.so.9", cudnn)->check = 0;
    add_lib(d, "cublasLt", "libcublasLt.so.13", 130100);
    add_lib(d, "nvrtc", "libnvrtc.so.13", 13000);
}

static void test_healthy_without_gpu_is_ok_unless_required(void **state)
{
    nnop__doctor d;
    char *text;
    (void)state;
    healthy(&d, 91900);
    nnop__doctor_judge(&d);
    assert_int_equal(d.n_problem, 0);
    text = report(&d, 0);
    assert_has(text, "verdict: ok (no GPU on this machine)\n");
    free(text);
    d.require_gpu = 1;
    nnop__doctor_judge(&d);
    assert_int_equal(d.n_problem, 1);
    text = report(&d, 0);
    assert_has(text, "PROBLEM: no usable GPU (--require-gpu): no CUDA device\n");
    free(text);
}

/* Loader errors that are not a cuDNN mismatch get their own fix (an outside test found
 * "damaged or from another version" given for each). */
static void test_load_errors_get_their_own_fix(void **state)
{
    static const char *const errors[][2] = {
            {"/x/libcudnn_ops.so.9: cannot open shared object file: Permission denied",
             "make libcudnn_ops.so.9 readable by this user (chmod a+r)"},
            {"/x/libcudnn_ops.so.9: cannot read file data: Is a directory",
             "a folder stands where the library libcudnn_ops.so.9 should be"},
            {"/x/libcudnn_ops.so.9: cannot open shared object file: Too many levels of symbolic "
             "links",
             "libcudnn_ops.so.9 is a loop of symbolic links"},
            {"/x/libcudnn_ops.so.9: truncated file: 4096 bytes, where its ELF headers describe "
             "129240 (a cut download or copy; not loaded)",
             "the file is damaged (a cut download or copy): reinstall it"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        nnop__doctor d;
        nnop__doc_lib *ops;
        char *text;
        healthy(&d, 91900);
        ops = lib_of(&d, "cudnn_ops");
        ops->loaded = 0;
        snprintf(ops->error, sizeof ops->error, "%s", errors[i][0]);
        nnop__doctor_judge(&d);
        assert_int_equal(d.n_problem, 1);
        text = report(&d, 0);
        assert_has(text, errors[i][1]);
        assert_null(strstr(text, "another cuDNN version"));
        free(text);
    }
}

/* A libcuda.so.1 that loads while the runtime finds no usable driver is a broken driver
 * library, not a machine without one: a problem naming the file. */
static void test_driver_library_the_runtime_cannot_use_is_a_problem(void **state)
{
    nnop__doctor d;
    char *text;
    (void)state;
    healthy(&d, 91900);
    add_lib(&d, "cuda_driver", "libcuda.so.1", 13000);
    snprintf(d.gpu_error, sizeof d.gpu_error,
             "no CUDA driver installed "
             "(cudaErrorInsufficientDriver)");
    nnop__doctor_judge(&d);
    assert_int_equal(d.n_problem, 1);
    text = report(&d, 0);
    assert_has(text, "PROBLEM: the CUDA devices cannot be listed: /opt/cudnn/libcuda.so.1 loads, "
                     "but the CUDA runtime cannot use it (cudaErrorInsufficientDriver)");
    assert_null(strstr(text, "no CUDA driver installed"));
    free(text);
    /* no libcuda.so.1 at all: a machine without the driver, fine */
    healthy(&d, 91900);
    snprintf(d.gpu_error, sizeof d.gpu_error,
             "no CUDA driver installed "
             "(cudaErrorInsufficientDriver)");
    nnop__doctor_judge(&d);
    assert_int_equal(d.n_problem, 0);
}

static void test_loaded_older_than_headers_and_below_the_floor(void **state)
{
    nnop__doctor d;
    char *text;
    (void)state;
    healthy(&d, 90000);
    lib_of(&d, "cudnn_ops")->version = 0;
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    /* 9.0 is nnop's floor (issue 48): older than the headers is the one problem */
    assert_int_equal(d.n_problem, 1);
    assert_has(text, "PROBLEM: loaded cuDNN 9.0.0 (/opt/cudnn/libcudnn_graph.so.9) is older than "
                     "the cuDNN 9.19.0 headers nnop was built with\n  fix: put the folder of "
                     "cuDNN 9.19.0 or newer first on LD_LIBRARY_PATH (or set NNOP_CUDNN_PATH "
                     "to it)");
    assert_null(strstr(text, "the oldest nnop's CUDA backend runs on"));
    free(text);
    healthy(&d, 80907);
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    assert_has(text, "is of another major version than the cuDNN 9.19.0 headers");
    assert_has(text, "PROBLEM: loaded cuDNN 8.9.7 is below 9.0.0, the oldest nnop's CUDA backend "
                     "runs on\n");
    free(text);
}

static void test_sub_library_mismatch(void **state)
{
    nnop__doctor d;
    char *text;
    (void)state;
    healthy(&d, 91900);
    lib_of(&d, "cudnn_ops")->version = 90500;
    lib_of(&d, "cudnn_ops")->check = 1002;
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    assert_int_equal(d.n_problem, 2);
    assert_has(text, "PROBLEM: libcudnn_ops.so.9 (/opt/cudnn/libcudnn_ops.so.9) is cuDNN 9.5.0 "
                     "but libcudnn_graph.so.9 (/opt/cudnn/libcudnn_graph.so.9) is cuDNN 9.19.0: "
                     "two installations are mixed\n");
    assert_has(text, "PROBLEM: libcudnn_ops.so.9 (/opt/cudnn/libcudnn_ops.so.9) reports "
                     "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (1002)\n");
    free(text);
}

static void test_driver_older_than_runtime_and_nvrtc_missing(void **state)
{
    nnop__doctor d;
    nnop__doc_lib *rtc;
    char *text;
    (void)state;
    healthy(&d, 91900);
    d.driver = 12020;
    d.gpu = NNOP__DOC_GPU_OLD_DRIVER;
    rtc = lib_of(&d, "nvrtc");
    assert_non_null(rtc);
    rtc->loaded = 0;
    snprintf(rtc->error, sizeof rtc->error,
             "libnvrtc.so.13: cannot open shared object file: No such file or directory");
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    assert_int_equal(d.n_problem, 2);
    assert_has(text, "PROBLEM: libnvrtc.so.13 (NVRTC, needed by cuDNN's runtime-compiled "
                     "engines) cannot be loaded: libnvrtc.so.13: cannot open shared object file: "
                     "No such file or directory\n");
    assert_has(text, "PROBLEM: the CUDA driver supports CUDA 12.2 but the CUDA runtime is 13.0 "
                     "(the driver is older than the runtime: no GPU can be used)\n  fix: update "
                     "the NVIDIA driver to one for CUDA 13.0 or newer");
    free(text);
}

static void test_cpu_only_build_reports_but_never_judges(void **state)
{
    nnop__doctor d;
    (void)state;
    healthy(&d, 90000);
    d.with_cuda = 0;
    nnop__doctor_judge(&d);
    assert_int_equal(d.n_problem, 0);
}

static void test_json_is_escaped(void **state)
{
    nnop__doctor d;
    nnop__doc_lib *l;
    char *json;
    (void)state;
    healthy(&d, 91900);
    l = lib_of(&d, "cudnn_ops");
    assert_non_null(l);
    l->loaded = 0;
    snprintf(l->error, sizeof l->error, "a \"quoted\"\\path\nnext\tline\x01");
    nnop__doctor_judge(&d);
    json = report(&d, 1);
    assert_has(json, "\"error\": \"a \\\"quoted\\\"\\\\path\\nnext\\tline\\u0001\"");
    assert_has(json, "\"ok\": false}");
    assert_null(strchr(json, '\t'));
    free(json);
}

/* nnop.h: a missing cuBLASLt "only moves linear layers to nnop's own kernel": a note, shown
 * in text and JSON, that never fails the verdict. */
static void test_missing_cublaslt_is_a_note_not_a_problem(void **state)
{
    nnop__doctor d;
    nnop__doc_lib *lt;
    char *text;
    (void)state;
    healthy(&d, 91900);
    lt = lib_of(&d, "cublasLt");
    lt->loaded = 0;
    snprintf(lt->error, sizeof lt->error,
             "libcublasLt.so.13: cannot open shared object file: No such file or directory");
    nnop__doctor_judge(&d);
    assert_int_equal(d.n_problem, 0);
    assert_int_equal(d.n_note, 1);
    text = report(&d, 0);
    assert_has(text, "NOTE: libcublasLt.so.13 (cuBLASLt) cannot be loaded: libcublasLt.so.13: "
                     "cannot open shared object file: No such file or directory; linear layers "
                     "run on nnop's own kernel instead, everything else is unaffected\n  fix: to "
                     "run them on cuBLASLt, install cuBLAS for CUDA 13");
    assert_null(strstr(text, "PROBLEM"));
    assert_has(text, "verdict: ok, 1 note (no GPU on this machine)\n");
    free(text);
    text = report(&d, 1);
    assert_has(text, "\"notes\": [{\"what\": \"libcublasLt.so.13 (cuBLASLt) cannot be loaded: ");
    assert_has(text, "\"problems\": [], \"ok\": true}\n");
    free(text);
    d.require_gpu = 1; /* with a problem beside it, both are counted apart */
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    assert_has(text, "verdict: 1 problem, 1 note\n");
    free(text);
}

/* Every cuDNN fix, while NNOP_CUDNN_PATH is set, says to change or unset it: nnop looks in
 * that folder alone then, so the loader's search path cannot help. Without it, the search
 * path is the advice. */
static void test_fixes_name_nnop_cudnn_path_while_it_is_set(void **state)
{
    nnop__doctor d;
    int i, pass, n_search_path;
    (void)state;
    for (pass = 0; pass < 2; pass++) {
        healthy(&d, 80907); /* of another major than the headers, and below the floor */
        if (pass)
            snprintf(d.cudnn_dir, sizeof d.cudnn_dir, "/opt/cudnn");
        lib_of(&d, "cudnn_graph")->cudart = 12080;                    /* for another CUDA */
        lib_of(&d, "cudnn_ops")->version = 90500;                     /* mixed installations */
        lib_of(&d, "cudnn_ops")->check = 1002;                        /* and the check says so */
        add_lib(&d, "cudnn_cnn", "libcudnn_cnn.so.9", 0)->loaded = 0; /* damaged */
        snprintf(lib_of(&d, "cudnn_cnn")->error, sizeof d.lib[0].error, "invalid ELF header");
        add_lib(&d, "cudnn_adv", "libcudnn_adv.so.9", 0)->loaded = 0; /* missing */
        snprintf(lib_of(&d, "cudnn_adv")->error, sizeof d.lib[0].error,
                 "libcudnn_adv.so.9: cannot open shared object file: No such file or directory");
        nnop__doctor_judge(&d);
        assert_int_equal(d.n_problem, 7);
        for (i = n_search_path = 0; i < d.n_problem; i++) {
            const char *fix = d.problem[i].fix;
            if (pass && (!strstr(fix, "set NNOP_CUDNN_PATH to ") || !strstr(fix, "or unset it") ||
                         strstr(fix, "first on LD_LIBRARY_PATH")))
                fail_msg("NNOP_CUDNN_PATH is set, but the fix of\n%s\nis\n%s", d.problem[i].what,
                         fix);
            if (!pass && strstr(fix, "unset"))
                fail_msg("the fix of\n%s\nis\n%s", d.problem[i].what, fix);
            n_search_path += strstr(fix, "first on LD_LIBRARY_PATH") != NULL;
        }
        /* all but the damaged file's, which is to be replaced where it is */
        assert_int_equal(n_search_path, pass ? 0 : 6);
    }
}

/* The given facts of a CUDA build whose libcudnn, found by name, did not load. */
static void cudnn_by_name_broken(nnop__doctor *d, const char *build_dir)
{
    nnop__doc_lib *c;
    healthy(d, 91900);
    c = lib_of(d, "cudnn");
    c->loaded = 0;
    c->path[0] = '\0';
    snprintf(c->error, sizeof c->error, "/first/on/the/path/libcudnn.so.9: invalid ELF header");
    snprintf(d->cudnn_build_dir, sizeof d->cudnn_build_dir, "%s", build_dir);
}

/* libs.c: a libcudnn that does not load by name gives way to the one in the folder nnop was
 * built against; the report names that file, in text and JSON. */
static void test_cudnn_from_the_build_folder_when_the_one_by_name_breaks(void **state)
{
#ifndef _WIN32
    nnop__doctor d;
    char dir[64], want[NNOP__LIB_PATH_LEN + 256], *text;
    (void)state;
    copy_install(dir, sizeof dir, 1);
    cudnn_by_name_broken(&d, dir);
    nnop__doctor_which_cudnn(&d);
    snprintf(want, sizeof want, "%s/libcudnn.so.9", dir);
    assert_string_equal(d.cudnn_used, want);
    assert_string_equal(d.cudnn_used_how, "from the folder nnop was built against, as the one "
                                          "found by name does not load");
    nnop__doctor_judge(&d);
    text = report(&d, 0);
    snprintf(want, sizeof want,
             "cuDNN nnop loads             %s (from the folder nnop was built against, as the "
             "one found by name does not load)\n",
             d.cudnn_used);
    assert_has(text, want);
    assert_has(text, "PROBLEM: libcudnn.so.9 (the entry points nnop loads, which reach all the "
                     "others) cannot be loaded: /first/on/the/path/libcudnn.so.9: invalid ELF");
    free(text);
    text = report(&d, 1);
    snprintf(want, sizeof want, "\"cudnn_used\": \"%s\", \"cudnn_used_how\": \"from the folder",
             d.cudnn_used);
    assert_has(text, want);
    free(text);
    remove_dir(dir);
    /* no copy there either: none, and why */
    cudnn_by_name_broken(&d, "/no/such/folder");
    nnop__doctor_which_cudnn(&d);
    assert_string_equal(d.cudnn_used, "");
    assert_has(d.cudnn_used_how, "libcudnn.so.9 does not load by name, nor from the folder nnop "
                                 "was built against: /no/such/folder/libcudnn.so.9: cannot open");
#else
    (void)state;
    skip();
#endif
}

/* Each library loads, but libcudnn's folder lacks the graph library (found elsewhere by
 * name): nnop's loader takes no cuDNN, so that is a problem, not "ok". */
static void test_no_cudnn_for_nnop_is_a_problem(void **state)
{
#ifndef _WIN32
    nnop__doctor d;
    char dir[64], want[1024], *text;
    (void)state;
    copy_install(dir, sizeof dir, 0);
    healthy(&d, 91900);
    snprintf(lib_of(&d, "cudnn")->path, sizeof d.lib[0].path, "%s/libcudnn.so.9", dir);
    nnop__doctor_which_cudnn(&d);
    nnop__doctor_judge(&d);
    assert_int_equal(d.n_problem, 1);
    text = report(&d, 0);
    snprintf(want, sizeof want,
             "cuDNN nnop loads             none (%s/libcudnn.so.9 loads, but not the graph "
             "library beside it: %s/libcudnn_graph.so.9: cannot open shared object file: No such "
             "file or directory)\n",
             dir, dir);
    assert_has(text, want);
    snprintf(want, sizeof want,
             "PROBLEM: nnop itself loads no cuDNN (%s/libcudnn.so.9 loads, but not the graph "
             "library beside it: %s/libcudnn_graph.so.9: cannot open shared object file: No such "
             "file or directory): the CPU backend runs\n  fix: put the folder of one complete "
             "cuDNN installation (libcudnn and its graph library side by side) first on "
             "LD_LIBRARY_PATH (or set NNOP_CUDNN_PATH to it)\n",
             dir, dir);
    assert_has(text, want);
    free(text);
    remove_dir(dir);
#else
    (void)state;
    skip();
#endif
}

#ifndef _WIN32
/* nnop_diagnose_ex's report with NNOP_CUDNN_PATH set to value (unset again after); the
 * caller frees it. */
static char *diagnose_with_cudnn_path(const char *value, int *problems)
{
    size_t need;
    char *text;
    assert_int_equal(setenv("NNOP_CUDNN_PATH", value, 1), 0);
    need = nnop_diagnose_ex(NULL, 0, 0, NULL) + 256;
    text = (char *)malloc(need);
    assert_non_null(text);
    nnop_diagnose_ex(text, need, 0, problems);
    assert_int_equal(unsetenv("NNOP_CUDNN_PATH"), 0);
    return text;
}

#endif

/* NNOP_DISABLE_IMPL / NNOP_ENABLE_IMPL lists: whole entries only, any position. */
static void test_env_lists_names_whole_entries(void **state)
{
#ifndef _WIN32
    (void)state;
    assert_int_equal(unsetenv("NNOP_TEST_LIST"), 0);
    assert_int_equal(nnop__env_lists("NNOP_TEST_LIST", "own stem kernel"), 0);
    assert_int_equal(setenv("NNOP_TEST_LIST", "cuBLASLt,own stem kernel", 1), 0);
    assert_int_equal(nnop__env_lists("NNOP_TEST_LIST", "own stem kernel"), 1);
    assert_int_equal(nnop__env_lists("NNOP_TEST_LIST", "cuBLASLt"), 1);
    assert_int_equal(nnop__env_lists("NNOP_TEST_LIST", "own stem"), 0);    /* a prefix */
    assert_int_equal(nnop__env_lists("NNOP_TEST_LIST", "stem kernel"), 0); /* a suffix */
    assert_int_equal(nnop__env_lists("NNOP_TEST_LIST", ""), 0);
    assert_int_equal(setenv("NNOP_TEST_LIST", "own stem kernels,x own stem kernel", 1), 0);
    assert_int_equal(nnop__env_lists("NNOP_TEST_LIST", "own stem kernel"), 0);
    assert_int_equal(unsetenv("NNOP_TEST_LIST"), 0);
#else
    (void)state;
    skip();
#endif
}

/* The one rule the loader (libs.c) and the doctor share: the named folder alone, else by
 * name then the fallback folder. */
static void test_lib_places_are_the_loaders_order(void **state)
{
    char places[NNOP__LIB_PLACES][NNOP__LIB_PATH_LEN], want[64];
    char sep = nnop__dl_dir_separator();
    (void)state;
    assert_int_equal(nnop__lib_places("libx.so.1", "/only", "/built", places), 1);
    snprintf(want, sizeof want, "/only%clibx.so.1", sep);
    assert_string_equal(places[0], want);
    assert_int_equal(nnop__lib_places("libx.so.1", "", "/built", places), 2);
    assert_string_equal(places[0], "libx.so.1");
    snprintf(want, sizeof want, "/built%clibx.so.1", sep);
    assert_string_equal(places[1], want);
    assert_int_equal(nnop__lib_places("libx.so.1", NULL, "", places), 1);
    assert_string_equal(places[0], "libx.so.1");
    assert_int_equal(nnop__lib_places("libx.so.1", NULL, NULL, places), 1);
}

static void test_nnop_cudnn_path_is_honoured(void **state)
{
#ifndef _WIN32
    char dir[64], want[128];
    int problems = -1;
    char *text;
    (void)state;
    make_dir(dir, sizeof dir);
    text = diagnose_with_cudnn_path(dir, &problems);
    snprintf(want, sizeof want, "NNOP_CUDNN_PATH=%s\n", dir);
    assert_has(text, want);
    assert_has(text, "libcudnn_graph.so.9: NOT LOADED: ");
#ifdef NNOP_HAVE_CUDA
    assert_true(problems >= 1); /* a CUDA build needs them: non-zero exit */
    assert_has(text, "PROBLEM: no cuDNN library is in NNOP_CUDNN_PATH=");
#else
    assert_int_equal(problems, 0); /* a CPU-only build does not */
#endif
    free(text);
    remove_dir(dir);
#else
    (void)state;
    skip();
#endif
}

/* A value longer than any path is refused in words, never cut short or passed over for the
 * loader's search path (a program would load a cuDNN nobody named). */
static void test_too_long_nnop_cudnn_path_is_a_problem(void **state)
{
#ifndef _WIN32
    static char value[5001];
    int problems = -1;
    char *text;
    (void)state;
    memset(value, 'x', sizeof value - 1);
    value[0] = '/';
    text = diagnose_with_cudnn_path(value, &problems);
    assert_has(text, "cuDNN looked for in          nowhere: NNOP_CUDNN_PATH is too long\n");
    assert_null(strstr(text, "libcudnn.so.9: "));
#ifdef NNOP_HAVE_CUDA
    assert_true(problems >= 1);
    assert_has(text, "PROBLEM: NNOP_CUDNN_PATH is set but longer than 4095 bytes: nnop loads no "
                     "cuDNN");
#else
    assert_int_equal(problems, 0);
#endif
    free(text);
    /* JSON: set but unusable is not the same as unset */
    assert_int_equal(setenv("NNOP_CUDNN_PATH", value, 1), 0);
    text = (char *)malloc(1 << 16);
    assert_non_null(text);
    nnop_diagnose_ex(text, 1 << 16, NNOP_DIAGNOSE_JSON, NULL);
    assert_int_equal(unsetenv("NNOP_CUDNN_PATH"), 0);
    assert_has(text, "\"cudnn_path_env\": null, \"cudnn_path_env_too_long\": true");
    nnop_diagnose_ex(text, 1 << 16, NNOP_DIAGNOSE_JSON, NULL);
    assert_has(text, "\"cudnn_path_env\": null, \"cudnn_path_env_too_long\": false");
    free(text);
#else
    (void)state;
    skip();
#endif
}

/* NNOP_CUDNN_PATH set to a file that is no library: one problem that says so, not one for
 * each cuDNN library ("Not a directory" eight times, an outside test found). */
static void test_nnop_cudnn_path_to_a_file_is_one_problem(void **state)
{
#ifndef _WIN32
    char dir[64], file[128], want[256];
    int problems = -1;
    char *text;
    FILE *f;
    (void)state;
    make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/notes.txt", dir);
    f = fopen(file, "w");
    assert_non_null(f);
    fputs("not a folder\n", f);
    fclose(f);
    text = diagnose_with_cudnn_path(file, &problems);
#ifdef NNOP_HAVE_CUDA
    snprintf(want, sizeof want, "PROBLEM: NNOP_CUDNN_PATH=%s is a file, not a folder\n", file);
    assert_has(text, want);
    assert_null(strstr(text, "PROBLEM: libcudnn"));
    assert_int_equal(problems, 1);
#else
    (void)want;
    assert_int_equal(problems, 0);
#endif
    free(text);
    remove(file);
    remove_dir(dir);
#else
    (void)state;
    skip();
#endif
}

/* NNOP_CUDNN_PATH set to a library file, as people also do, stands for its folder. */
static void test_nnop_cudnn_path_may_name_the_library_file(void **state)
{
#ifndef _WIN32
    char dir[64], file[128], want[256];
    char *text;
    (void)state;
    make_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/libcudnn.so.9", dir);
    text = diagnose_with_cudnn_path(file, NULL);
    snprintf(want, sizeof want, "NNOP_CUDNN_PATH=%s\n", dir);
    assert_has(text, want);
    snprintf(want, sizeof want, "libcudnn_graph.so.9: NOT LOADED: %s/libcudnn_graph.so.9: ", dir);
    assert_has(text, want);
    free(text);
    remove_dir(dir);
#else
    (void)state;
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_isolated_probe_reports_a_library_that_kills_its_loader),
            cmocka_unit_test(test_empty_folder_is_every_library_missing),
            cmocka_unit_test(test_text_file_as_runtime_compiled_gives_the_loader_error),
            cmocka_unit_test(test_graph_missing_is_a_problem_and_nothing_is_called),
            cmocka_unit_test(test_healthy_without_gpu_is_ok_unless_required),
            cmocka_unit_test(test_load_errors_get_their_own_fix),
            cmocka_unit_test(test_driver_library_the_runtime_cannot_use_is_a_problem),
            cmocka_unit_test(test_loaded_older_than_headers_and_below_the_floor),
            cmocka_unit_test(test_sub_library_mismatch),
            cmocka_unit_test(test_driver_older_than_runtime_and_nvrtc_missing),
            cmocka_unit_test(test_cpu_only_build_reports_but_never_judges),
            cmocka_unit_test(test_json_is_escaped),
            cmocka_unit_test(test_missing_cublaslt_is_a_note_not_a_problem),
            cmocka_unit_test(test_fixes_name_nnop_cudnn_path_while_it_is_set),
            cmocka_unit_test(test_cudnn_from_the_build_folder_when_the_one_by_name_breaks),
            cmocka_unit_test(test_no_cudnn_for_nnop_is_a_problem),
            cmocka_unit_test(test_env_lists_names_whole_entries),
            cmocka_unit_test(test_lib_places_are_the_loaders_order),
            cmocka_unit_test(test_nnop_cudnn_path_is_honoured),
            cmocka_unit_test(test_nnop_cudnn_path_may_name_the_library_file),
            cmocka_unit_test(test_nnop_cudnn_path_to_a_file_is_one_problem),
            cmocka_unit_test(test_too_long_nnop_cudnn_path_is_a_problem),
    };
#ifndef _WIN32
    find_real_cudnn_dir();
#endif
    return cmocka_run_group_tests_name("doctor_libs", tests, NULL, NULL);
}
