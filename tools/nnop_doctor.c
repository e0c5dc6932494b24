/* nnop_doctor.c: print what nnop sees of the installation (versions, sub-libraries, devices),
 * whether a context can be created and, with --cache FILE, the state of a plan cache file, so
 * a broken setup is diagnosed in one command. */
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

int main(int argc, char **argv)
{
    nnop_context *ctx = NULL;
    int rc = 0;
    size_t need = nnop_diagnose(NULL, 0) + 1;
    char *text = (char *)malloc(need);
    nnop_status st;
    if (!text)
        return 1;
    nnop_diagnose(text, need);
    fputs(text, stdout);
    free(text);
    if (argc == 3 && strcmp(argv[1], "--cache") == 0)
        rc = check_cache(argv[2]);
    else if (argc != 1) {
        fprintf(stderr, "usage: nnop-doctor [--cache FILE]\n");
        return 2;
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
