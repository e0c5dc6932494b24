/* error.c: status names and the per-context last-error message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform/platform.h"

static const char *const status_names[] = {
        "NNOP_OK",
        "NNOP_ERR_INVALID_ARGUMENT",
        "NNOP_ERR_SHAPE",
        "NNOP_ERR_UNSUPPORTED",
        "NNOP_ERR_OUT_OF_MEMORY",
        "NNOP_ERR_NO_DEVICE",
        "NNOP_ERR_VERSION",
        "NNOP_ERR_CUDA",
        "NNOP_ERR_CUDNN",
        "NNOP_ERR_IO",
        "NNOP_ERR_FORMAT",
        "NNOP_ERR_INTERNAL",
};

const char *nnop_status_string(nnop_status s)
{
    size_t i = (size_t)s;
    if ((int)s < 0 || i >= sizeof status_names / sizeof status_names[0])
        return "NNOP_ERR_<unknown status>";
    return status_names[i];
}

nnop_status nnop__vfail(nnop_context *ctx, nnop_status st, const char *fmt, va_list ap)
{
    if (ctx) {
        int n = snprintf(ctx->last_error, sizeof ctx->last_error, "%s: ", nnop_status_string(st));
        if (n < 0 || (size_t)n >= sizeof ctx->last_error)
            n = 0;
        vsnprintf(ctx->last_error + n, sizeof ctx->last_error - (size_t)n, fmt, ap);
    }
    return st;
}

nnop_status nnop__fail(nnop_context *ctx, nnop_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nnop__vfail(ctx, st, fmt, ap);
    va_end(ap);
    return st;
}

int nnop__log_level(int option)
{
    char v[16];
    int got = nnop__env_get("NNOP_LOG", v, sizeof v);
    if (got == 0 && !v[0])
        return option; /* empty is unset */
    if (got == 0 && strcmp(v, "0") == 0)
        return 0;
    if (got == 0 && (strcmp(v, "1") == 0 || strcmp(v, "2") == 0))
        return v[0] - '0';
    if (nnop__env_is_set("NNOP_LOG")) { /* say so: a mistyped value must not look like "off" */
        fprintf(stderr, "nnop: NNOP_LOG is set to neither 0, 1 nor 2; logging stays off\n");
        return 0;
    }
    return option;
}

void nnop__log(const nnop_context *ctx, int level, const char *fmt, ...)
{
    char line[NNOP_ERROR_LEN + 256];
    va_list ap;
    if (!ctx || ctx->log < level)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (ctx->opts.log_fn)
        ctx->opts.log_fn(ctx->opts.log_user, level, ctx->log_tag, line);
    else
        fprintf(stderr, "nnop_log%s%s,%s\n", ctx->log_tag[0] ? ":" : "", ctx->log_tag, line);
}

int nnop__debug_poison(void)
{
    char v[16];
    return nnop__env_get("NNOP_DEBUG_POISON", v, sizeof v) == 0 && strcmp(v, "1") == 0;
}

const char *nnop__error_body(const nnop_context *ctx)
{
    const char *s = ctx->last_error;
    if (strncmp(s, "NNOP_", 5) == 0) {
        const char *colon = strstr(s, ": ");
        size_t i;
        for (i = 0; i < sizeof status_names / sizeof status_names[0]; i++)
            if (colon && strlen(status_names[i]) == (size_t)(colon - s) &&
                strncmp(s, status_names[i], (size_t)(colon - s)) == 0)
                return colon + 2;
    }
    return s;
}

void nnop__clear_error(nnop_context *ctx)
{
    if (ctx)
        ctx->last_error[0] = '\0';
}

const char *nnop_context_last_error(const nnop_context *ctx)
{
    if (!ctx)
        return "no context (NULL)";
    return ctx->last_error;
}

int nnop_version(void)
{
    return NNOP_VERSION_MAJOR * 10000 + NNOP_VERSION_MINOR * 100 + NNOP_VERSION_PATCH;
}
