/* options.c: the behaviour switches a context or compile option sets and an environment
 * variable overrides (nnop.h), read where the CUDA stages decide. Only the options and the
 * environment are read here: the stages that ask call nothing above them through it. */
#include <string.h>

#include "internal.h"
#include "platform/platform.h"

int nnop__impl_listed(const nnop_context *ctx, int enable, const char *name)
{
    const char *var = enable ? "NNOP_ENABLE_IMPL" : "NNOP_DISABLE_IMPL";
    if (nnop__env_is_set(var)) /* the variable overrides the option (nnop.h) */
        return nnop__env_lists(var, name);
    return nnop__list_has(enable ? ctx->enable_impl : ctx->disable_impl, name);
}

/* An on/off switch: the environment variable name where set (1 on, anything else off), else
 * the option. */
static int switch_of(const char *name, int option)
{
    char v[8];
    if (nnop__env_is_set(name))
        return nnop__env_get(name, v, sizeof v) == 0 && strcmp(v, "1") == 0;
    return option != 0;
}

int nnop__norm_rtc(const nnop_context *ctx)
{
    return switch_of("NNOP_NORM_RTC", ctx->opts.norm_rtc);
}

int nnop__side_stream(const nnop_plan *p)
{
    return switch_of("NNOP_SIDE_STREAM", p->opts.side_stream);
}
