/* test_cudnn_loading.c MODE: a CUDA build loads cuDNN at run time (src/cuda/device/libs.c), so
 * a program starts without it and hears what is missing. Public API only; one mode per
 * process (the library is looked for once), NNOP_CUDNN_PATH set by the mode:
 *   missing  an empty folder: AUTO runs on the CPU and says which file could not be loaded;
 *            NNOP_BACKEND_CUDA is NNOP_ERR_VERSION with the same words (NNOP_ERR_NO_DEVICE on a
 *            machine without a GPU, the same words after "also:"); the CPU backend works
 *   nograph  libcudnn.so.9 alone (no libcudnn_graph.so.9, which libcudnn would abort the
 *            process for): refused with the graph library named, no abort
 *   garbage  a text file named libcudnn.so.9: the loader's own error in the message
 *   cut      the first 4 KiB of the real libcudnn.so.9 (a cut download): refused, naming the
 *            file and the sizes, where the loader would die of SIGBUS
 *   cutsub   the real libcudnn and graph library beside a cut libcudnn_ops.so.9, which cuDNN
 *            would load at its first use: refused at once, naming it
 *   deep     an empty folder whose path is over 600 bytes long: looked in, as a short one
 *   toolong  a value of 5,000 bytes (longer than any path): refused as too long, never cut
 *            short or passed over for another cuDNN
 *   real     the folder nnop was built against: no word about cuDNN in AUTO's reason */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnop/nnop.h"

#ifndef NNOP_CUDNN_BUILD_DIR
#define NNOP_CUDNN_BUILD_DIR ""
#endif

static int failures;

static void expect(int ok, const char *what, const char *text)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n  text: %s\n", what, text ? text : "(null)");
        failures++;
    } else {
        printf("ok: %s\n", what);
    }
}

/* a fresh folder for NNOP_CUDNN_PATH */
/* NNOP_REQUIRE_GPU=1: the machine has a GPU (as the GPU machine's runs set it). */
static int gpu_required(void)
{
    const char *e = getenv("NNOP_REQUIRE_GPU");
    return e && strcmp(e, "1") == 0;
}

static char made[64]; /* the folder this run made, removed at exit */

/* Remove path and all below it (the test's own folder only). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    if (!d) {
        (void)unlink(path);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        char sub[1024];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        remove_tree(sub);
    }
    closedir(d);
    (void)rmdir(path);
}

static void remove_made(void)
{
    if (made[0])
        remove_tree(made);
}

static void make_folder(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/nnop-cudnn-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(made, sizeof made, "%s", dir);
    atexit(remove_made);
}

/* One CPU conv through the one-call API: the CPU backend is untouched by a missing cuDNN. */
static void cpu_still_works(void)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 3, 3);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 3, 3);
    nnop_tensor_desc yd = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 1, 1);
    nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
    float x[9], w[9], b[1] = {0.5f}, y[1] = {-7.0f}, want = 0.5f;
    int i;
    for (i = 0; i < 9; i++) {
        x[i] = (float)(i + 1) / 9.0f;
        w[i] = (float)(9 - i) / 9.0f;
        want += x[i] * w[i];
    }
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    expect(nnop_context_create(&o, &ctx) == NNOP_OK, "the CPU backend starts", "");
    expect(ctx && nnop_conv_bias_relu(ctx, &xd, x, &wd, w, b, &p, &yd, y) == NNOP_OK,
           "a CPU conv runs", ctx ? nnop_context_last_error(ctx) : "");
    expect(y[0] > want - 1e-5f && y[0] < want + 1e-5f, "and is right", "");
    nnop_context_destroy(ctx);
}

/* AUTO falls back to the CPU with a reason naming `file`; CUDA is refused with it. */
static void refused_naming(const char *file, const char *also)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_status st;
    const char *why;
    nnop_context_options_init(&o);
    st = nnop_context_create(&o, &ctx);
    why = ctx ? nnop_context_backend_reason(ctx) : nnop_context_create_error();
    expect(st == NNOP_OK && ctx, "AUTO creates a context", why);
    if (ctx)
        expect(nnop_context_backend(ctx) == NNOP_BACKEND_CPU, "AUTO chose the CPU backend", why);
    expect(why && strstr(why, file) != NULL, "AUTO's reason names the file", why);
    expect(why && strstr(why, also) != NULL, "AUTO's reason says why", why);
    nnop_context_destroy(ctx);
    ctx = NULL;
    o.backend = NNOP_BACKEND_CUDA;
    st = nnop_context_create(&o, &ctx);
    why = nnop_context_create_error();
    /* with a GPU, a broken cuDNN is an installation problem; without one, no usable GPU comes
     * first (NNOP_ERR_NO_DEVICE, cuDNN's trouble after "also:"); NNOP_REQUIRE_GPU=1 says
     * which machine this is */
    if (gpu_required())
        expect(st == NNOP_ERR_VERSION && !ctx, "NNOP_BACKEND_CUDA is NNOP_ERR_VERSION", why);
    else
        expect(!ctx && (st == NNOP_ERR_VERSION ||
                        (st == NNOP_ERR_NO_DEVICE && why && strstr(why, "; also: "))),
               "NNOP_BACKEND_CUDA is NNOP_ERR_VERSION, or NO_DEVICE without a GPU", why);
    expect(why && strstr(why, file) != NULL, "its message names the file", why);
    nnop_context_destroy(ctx);
    cpu_still_works();
}

/* An empty folder of `levels` nested 200-byte names below a fresh one, its path into deep. */
static void make_deep_folder(char *deep, size_t len, int levels)
{
    char part[201];
    int i;
    make_folder(deep, len);
    memset(part, 'd', 200);
    part[200] = '\0';
    for (i = 0; i < levels; i++) {
        size_t n = strlen(deep);
        snprintf(deep + n, len - n, "/%s", part);
        if (mkdir(deep, 0700) != 0) {
            perror("mkdir");
            exit(1);
        }
    }
}

/* The first 4 KiB of the build's cuDNN file name, as dir/name (into cut): 0, 77 (no such
 * file to cut: skipped) or 1 (could not write). */
static int cut_copy(const char *name, const char *dir, char *cut, size_t len)
{
    char path[256], buf[4096];
    FILE *from, *to;
    size_t n;
    snprintf(path, sizeof path, "%s/%s", NNOP_CUDNN_BUILD_DIR, name);
    from = fopen(path, "rb");
    if (!from) {
        printf("no %s to cut: skipped\n", path);
        return 77;
    }
    snprintf(cut, len, "%s/%s", dir, name);
    to = fopen(cut, "wb");
    n = fread(buf, 1, sizeof buf, from);
    fclose(from);
    if (!to || n != sizeof buf || fwrite(buf, 1, n, to) != n || fclose(to) != 0) {
        perror(cut);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char dir[64], path[256];
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "missing") == 0) {
        make_folder(dir, sizeof dir);
        setenv("NNOP_CUDNN_PATH", dir, 1);
        refused_naming("libcudnn.so.9", "No such file");
    } else if (strcmp(mode, "nograph") == 0) {
        make_folder(dir, sizeof dir);
        snprintf(path, sizeof path, "%s/libcudnn.so.9", NNOP_CUDNN_BUILD_DIR);
        if (access(path, R_OK) != 0) {
            printf("no %s to link to: skipped\n", path);
            return 77;
        }
        {
            char link[256];
            snprintf(link, sizeof link, "%s/libcudnn.so.9", dir);
            if (symlink(path, link) != 0) {
                perror("symlink");
                return 1;
            }
        }
        setenv("NNOP_CUDNN_PATH", dir, 1);
        refused_naming("libcudnn_graph.so.9", "graph library");
    } else if (strcmp(mode, "garbage") == 0) {
        FILE *f;
        make_folder(dir, sizeof dir);
        snprintf(path, sizeof path, "%s/libcudnn.so.9", dir);
        f = fopen(path, "w");
        if (!f || fputs("not a library\n", f) < 0 || fclose(f) != 0) {
            perror(path);
            return 1;
        }
        setenv("NNOP_CUDNN_PATH", dir, 1);
        refused_naming(path, "cuDNN could not be loaded");
    } else if (strcmp(mode, "cut") == 0) {
        char cut[256];
        int rc;
        make_folder(dir, sizeof dir);
        rc = cut_copy("libcudnn.so.9", dir, cut, sizeof cut);
        if (rc != 0)
            return rc;
        setenv("NNOP_CUDNN_PATH", dir, 1);
        refused_naming(cut, "truncated file: 4096 bytes");
    } else if (strcmp(mode, "cutsub") == 0) {
        /* the real libcudnn and graph library linked in, the ops library cut: cuDNN would
         * load it at its first use and die of SIGBUS, so it is refused now */
        static const char *const whole[] = {"libcudnn.so.9", "libcudnn_graph.so.9"};
        char cut[256], link[256];
        size_t i;
        int rc;
        make_folder(dir, sizeof dir);
        for (i = 0; i < 2; i++) {
            snprintf(path, sizeof path, "%s/%s", NNOP_CUDNN_BUILD_DIR, whole[i]);
            snprintf(link, sizeof link, "%s/%s", dir, whole[i]);
            if (access(path, R_OK) != 0) {
                printf("no %s to link to: skipped\n", path);
                return 77;
            }
            if (symlink(path, link) != 0) {
                perror("symlink");
                return 1;
            }
        }
        rc = cut_copy("libcudnn_ops.so.9", dir, cut, sizeof cut);
        if (rc != 0)
            return rc;
        setenv("NNOP_CUDNN_PATH", dir, 1);
        refused_naming(cut, "truncated file: 4096 bytes");
    } else if (strcmp(mode, "deep") == 0) {
        char deep[700];
        make_deep_folder(deep, sizeof deep, 3);
        setenv("NNOP_CUDNN_PATH", deep, 1);
        refused_naming(deep, "No such file");
    } else if (strcmp(mode, "toolong") == 0) {
        static char value[5001];
        memset(value, 'x', sizeof value - 1);
        value[0] = '/';
        setenv("NNOP_CUDNN_PATH", value, 1);
        refused_naming("NNOP_CUDNN_PATH is longer than 4095 bytes", "cuDNN could not be loaded");
    } else if (strcmp(mode, "real") == 0) {
        nnop_context_options o;
        nnop_context *ctx = NULL;
        const char *why;
        if (!NNOP_CUDNN_BUILD_DIR[0])
            return 77;
        setenv("NNOP_CUDNN_PATH", NNOP_CUDNN_BUILD_DIR, 1);
        nnop_context_options_init(&o);
        expect(nnop_context_create(&o, &ctx) == NNOP_OK, "AUTO creates a context", "");
        why = ctx ? nnop_context_backend_reason(ctx) : nnop_context_create_error();
        if (ctx && nnop_context_backend(ctx) == NNOP_BACKEND_CPU)
            expect(why && strstr(why, "cuDNN") == NULL,
                   "a loadable cuDNN is not given as AUTO's reason", why);
        nnop_context_destroy(ctx);
    } else {
        fprintf(stderr,
                "usage: test_cudnn_loading missing|nograph|garbage|cut|deep|toolong|real\n");
        return 2;
    }
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
