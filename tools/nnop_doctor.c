/* nnop_doctor.c: print what nnop sees of the installation (each library's file and version,
 * the loader's own error for one that does not load, version mismatches, the driver, the
 * devices), each problem with its fix, whether a context can be created and, with --cache
 * FILE, the state of a plan cache file, so a broken setup is diagnosed in one command.
 *
 * Exit status: 0 when nothing is wrong (a machine without a GPU is not wrong: the CPU backend
 * is used; --require-gpu makes it a problem), 1 when any problem was found, 2 on bad usage.
 * NNOP_CUDNN_PATH=<folder> checks the cuDNN libraries of that folder only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop/nnop.h"

/* nnop-doctor --cache FILE: also check a plan cache file. */
static int check_cache(const char *path)
{
    char text[1024];
    nnop_status st = nnop_cache_file_check(path, text, sizeof text);
    fputs(text, stdout);
    return st == NNOP_OK ? 0 : 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: nnop-doctor [--json] [--require-gpu] [--cache FILE]\n"
                    "  exit status 0: healthy, 1: problems found (each printed with its fix)\n"
                    "  NNOP_CUDNN_PATH=<folder>: check the cuDNN libraries of that folder\n");
    return 2;
}

int main(int argc, char **argv)
{
    nnop_context *ctx = NULL;
    const char *cache = NULL;
    unsigned flags = 0;
    int problems = 0, rc, i;
    size_t need;
    char *text;
    nnop_status st;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            flags |= NNOP_DIAGNOSE_JSON;
        else if (strcmp(argv[i], "--require-gpu") == 0)
            flags |= NNOP_DIAGNOSE_REQUIRE_GPU;
        else if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc)
            cache = argv[++i];
        else
            return usage();
    }
    need = nnop_diagnose_ex(NULL, 0, flags, NULL) + 256; /* room for a longer second run */
    text = (char *)malloc(need);
    if (!text) {
        fprintf(stderr, "nnop-doctor: out of memory\n");
        return 1;
    }
    nnop_diagnose_ex(text, need, flags, &problems);
    fputs(text, stdout);
    free(text);
    rc = problems ? 1 : 0;
    if (cache && check_cache(cache) != 0)
        rc = 1;
    if (flags & NNOP_DIAGNOSE_JSON)
        return rc;
    if (problems) {
        /* a broken cuDNN can abort the process inside cuDNN's own loader: stop here */
        printf("context (AUTO backend): not tried: fix the problems above first\n");
        return rc;
    }
    st = nnop_context_create(NULL, &ctx);
    if (st != NNOP_OK) {
        printf("context (AUTO backend): FAILED: %s\n", nnop_context_create_error());
        return 1;
    }
    printf("context (AUTO backend): %s\n",
           nnop_context_backend(ctx) == NNOP_BACKEND_CUDA ? "CUDA" : "CPU reference (no GPU)");
    nnop_context_destroy(ctx);
    return rc;
}
