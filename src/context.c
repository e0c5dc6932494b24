/* context.c: context options, creation (backend choice) and destruction. */
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "internal.h"
#include "platform/platform.h"

void nnop_context_options_init(nnop_context_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->backend = NNOP_BACKEND_AUTO;
    o->device = NNOP_DEVICE_DEFAULT;
    o->policy = NNOP_POLICY_PREFER_PRECOMPILED;
}

static nnop_status check_options(nnop_context *ctx, const nnop_context_options *o)
{
    const int reserved =
            nnop__first_nonzero(o->reserved, sizeof o->reserved / sizeof o->reserved[0]);
    if (o->backend != NNOP_BACKEND_AUTO && o->backend != NNOP_BACKEND_CUDA &&
        o->backend != NNOP_BACKEND_CPU)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->backend has unknown value %d",
                          (int)o->backend);
    if (o->policy != NNOP_POLICY_PREFER_PRECOMPILED && o->policy != NNOP_POLICY_PRECOMPILED_ONLY &&
        o->policy != NNOP_POLICY_FASTEST)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->policy has unknown value %d",
                          (int)o->policy);
    if (o->device < 0)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->device %d is negative", o->device);
    if (o->load_threads < 0 || o->load_threads > NNOP_LOAD_THREADS_MAX)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->load_threads %d is outside 0..%d",
                          o->load_threads, NNOP_LOAD_THREADS_MAX);
    if (reserved >= 0)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->reserved[%d] is not zero (start from "
                          "nnop_context_options_init)",
                          reserved);
    if (o->log_level < NNOP_LOG_OFF || o->log_level > NNOP_LOG_EXECUTE)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->log_level %d is outside 0..2",
                          o->log_level);
    if (o->disable_impl && strlen(o->disable_impl) >= NNOP_IMPL_LIST_LEN)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->disable_impl is longer than %d bytes",
                          NNOP_IMPL_LIST_LEN - 1);
    if (o->enable_impl && strlen(o->enable_impl) >= NNOP_IMPL_LIST_LEN)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->enable_impl is longer than %d bytes",
                          NNOP_IMPL_LIST_LEN - 1);
    if (o->allocator && (!o->allocator->device_alloc != !o->allocator->device_free ||
                         !o->allocator->host_alloc != !o->allocator->host_free))
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->allocator sets %s without %s (each "
                          "pair is both set or both NULL)",
                          !o->allocator->device_alloc != !o->allocator->device_free
                                  ? (o->allocator->device_alloc ? "device_alloc" : "device_free")
                                  : (o->allocator->host_alloc ? "host_alloc" : "host_free"),
                          !o->allocator->device_alloc != !o->allocator->device_free
                                  ? (o->allocator->device_alloc ? "device_free" : "device_alloc")
                                  : (o->allocator->host_alloc ? "host_free" : "host_alloc"));
    if (o->prefetch != 0 && o->prefetch != -1)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_create: options->prefetch %d is neither 0 (on) nor -1 "
                          "(off)",
                          o->prefetch);
    return NNOP_OK;
}

static nnop_status pick_backend(nnop_context *ctx)
{
    char why[NNOP_ERROR_LEN / 2] = ""; /* room for the prefixes below */
    nnop_status st = NNOP_ERR_NO_DEVICE;
    int n = 0;
    if (ctx->opts.backend == NNOP_BACKEND_CPU) {
        ctx->backend = NNOP_BACKEND_CPU;
        return NNOP_OK;
    }
    n = nnop__cuda_device_count(&st, why, sizeof why);
    if (n <= 0 && ctx->opts.backend == NNOP_BACKEND_AUTO) {
        ctx->backend = NNOP_BACKEND_CPU;
        snprintf(ctx->backend_reason, sizeof ctx->backend_reason,
                 "%s: nnop_context_create: AUTO chose the CPU backend: %s", nnop_status_string(st),
                 why);
        return NNOP_OK;
    }
    if (n <= 0 && st == NNOP_ERR_VERSION)
        return nnop__fail(ctx, st, "nnop_context_create: CUDA backend requested but %s", why);
    if (n <= 0)
        return nnop__fail(ctx, NNOP_ERR_NO_DEVICE,
                          "nnop_context_create: CUDA backend requested but no usable CUDA "
                          "device was found (%s)",
                          why);
    if (ctx->opts.device >= n)
        return nnop__fail(ctx, NNOP_ERR_NO_DEVICE,
                          "nnop_context_create: device %d requested but only %d CUDA "
                          "device(s) present",
                          ctx->opts.device, n);
    ctx->backend = NNOP_BACKEND_CUDA;
    return nnop__cuda_context_init(ctx);
}

/* The options' strings into the context (the library keeps no pointer to the caller's
 * memory): the tag cut to its room, first (a failed creation logs with it); the lists once
 * check_options has refused those that would be cut. */
static void copy_tag(nnop_context *ctx)
{
    snprintf(ctx->log_tag, sizeof ctx->log_tag, "%s", ctx->opts.log_tag ? ctx->opts.log_tag : "");
    ctx->opts.log_tag = ctx->log_tag;
}

static void copy_lists(nnop_context *ctx)
{
    snprintf(ctx->disable_impl, sizeof ctx->disable_impl, "%s",
             ctx->opts.disable_impl ? ctx->opts.disable_impl : "");
    snprintf(ctx->enable_impl, sizeof ctx->enable_impl, "%s",
             ctx->opts.enable_impl ? ctx->opts.enable_impl : "");
    ctx->opts.disable_impl = ctx->disable_impl;
    ctx->opts.enable_impl = ctx->enable_impl;
}

/* A failed creation leaves its message where the caller can read it (there is no context
 * to ask; with NNOP_LOG set it also goes to stderr), and the status says the class. */
static NNOP_THREAD_LOCAL char creation_error[NNOP_ERROR_LEN];

nnop_status nnop_context_create(const nnop_context_options *o, nnop_context **out)
{
    nnop_context *ctx;
    nnop_status st;
    creation_error[0] = '\0'; /* no stale message from an earlier failure; "" after success */
    if (!out) {
        snprintf(creation_error, sizeof creation_error, "nnop_context_create: out is NULL");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    ctx = (nnop_context *)nnop__calloc(1, sizeof *ctx);
    if (!ctx) {
        snprintf(creation_error, sizeof creation_error, "nnop_context_create: out of memory");
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    if (o)
        ctx->opts = *o;
    else
        nnop_context_options_init(&ctx->opts);
    ctx->opts.cache_path = NULL; /* replaced by the cache's own copy */
    copy_tag(ctx);
    /* an unknown level logs nothing of its own: check_options refuses it, NNOP_LOG may log that */
    ctx->log = nnop__log_level(ctx->opts.log_level >= NNOP_LOG_OFF &&
                                               ctx->opts.log_level <= NNOP_LOG_EXECUTE
                                       ? ctx->opts.log_level
                                       : NNOP_LOG_OFF);
    ctx->debug_poison = nnop__debug_poison();
    ctx->opts.plan_cache = NULL;
    st = check_options(ctx, &ctx->opts);
    if (st == NNOP_OK)
        copy_lists(ctx);
    if (st == NNOP_OK && ctx->opts.allocator) { /* kept by value: the caller's may go */
        ctx->alloc = *ctx->opts.allocator;
        ctx->opts.allocator = &ctx->alloc;
    }
    if (st == NNOP_OK) /* before the backend: CUDA init binds it to the device (loads it) */
        st = nnop__context_cache_init(ctx, o);
    if (st == NNOP_OK)
        st = pick_backend(ctx);
    if (st != NNOP_OK) {
        memcpy(creation_error, ctx->last_error, sizeof creation_error);
        nnop__log(ctx, NNOP_LOG_COMPILE, "create,failed,%s", creation_error);
        nnop_context_destroy(ctx);
        return st;
    }
    *out = ctx;
    nnop__log(ctx, NNOP_LOG_COMPILE, "create,%s,device %d%s%s",
              ctx->backend == NNOP_BACKEND_CUDA ? "cuda" : "cpu", ctx->opts.device,
              ctx->backend_reason[0] ? "," : "", ctx->backend_reason);
    return NNOP_OK;
}

const char *nnop_context_create_error(void)
{
    return creation_error;
}

const char *nnop_context_backend_reason(const nnop_context *ctx)
{
    return ctx ? ctx->backend_reason : "no context (NULL)";
}

void nnop_context_destroy(nnop_context *ctx)
{
    if (!ctx)
        return;
    nnop__oneshot_destroy(ctx);
    nnop__plans_orphan(ctx); /* while their device memory can still be freed */
    nnop__graphs_orphan(ctx);
    if (ctx->cuda) /* first: its prefetch threads report to the cache until they stop */
        nnop__cuda_context_fini(ctx);
    nnop__context_cache_fini(ctx); /* saves the cache file if it has new entries */
    nnop__free(ctx);
}

nnop_backend nnop_context_backend(const nnop_context *ctx)
{
    return ctx ? ctx->backend : NNOP_BACKEND_CPU;
}

nnop_status nnop_context_set_stream(nnop_context *ctx, void *stream)
{
    if (!ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(ctx);
    if (ctx->backend != NNOP_BACKEND_CUDA)
        return stream ? nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                                   "nnop_context_set_stream: the CPU backend has no streams")
                      : NNOP_OK;
    return nnop__cuda_set_stream(ctx, stream);
}

nnop_status nnop_context_synchronize(nnop_context *ctx)
{
    if (!ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(ctx);
    if (ctx->backend != NNOP_BACKEND_CUDA)
        return NNOP_OK;
    return nnop__cuda_synchronize(ctx);
}
