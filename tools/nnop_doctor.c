/* nnop_doctor.c: print what nnop sees of the installation (versions, sub-libraries, devices)
 * and whether a context can be created, so a broken setup is diagnosed in one command. */
#include <stdio.h>
#include <stdlib.h>

#include "nnop/nnop.h"

int main(void)
{
    nnop_context *ctx = NULL;
    size_t need = nnop_diagnose(NULL, 0) + 1;
    char *text = (char *)malloc(need);
    nnop_status st;
    if (!text)
        return 1;
    nnop_diagnose(text, need);
    fputs(text, stdout);
    free(text);
    st = nnop_context_create(NULL, &ctx);
    if (st != NNOP_OK) {
        printf("context (AUTO backend): FAILED: %s\n", nnop_context_create_error());
        return 1;
    }
    printf("context (AUTO backend): %s\n",
           nnop_context_backend(ctx) == NNOP_BACKEND_CUDA ? "CUDA" : "CPU reference (no GPU)");
    nnop_context_destroy(ctx);
    return 0;
}
