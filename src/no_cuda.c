/* no_cuda.c: the CUDA backend entry points of a build without CUDA (NNOP_WITH_CUDA=OFF). */

#include <stdio.h>

#include "doctor.h"
#include "internal.h"

void nnop__cuda_doctor_build_facts(nnop__doctor *d)
{
    (void)d; /* a CPU-only build: nothing built against, nothing judged */
}

void nnop__cuda_doctor_facts(nnop__doctor *d)
{
    (void)d;
}

int nnop__cuda_device_count(nnop_status *st, char *why, size_t len)
{
    *st = NNOP_ERR_NO_DEVICE;
    if (len)
        snprintf(why, len, "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
    return 0;
}

nnop_status nnop__cuda_context_init(nnop_context *ctx)
{
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED,
                      "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
}

void nnop__cuda_context_fini(nnop_context *ctx)
{
    (void)ctx;
}

nnop_status nnop__cuda_set_stream(nnop_context *ctx, void *stream)
{
    (void)stream;
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED,
                      "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
}

nnop_status nnop__cuda_synchronize(nnop_context *ctx)
{
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED,
                      "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
}

nnop_status nnop__cuda_plan_build(nnop_plan *p)
{
    return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED,
                      "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
}

nnop_status nnop__cuda_plan_execute(nnop_plan *p, const void *const *in, void *const *out)
{
    (void)in;
    (void)out;
    return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED,
                      "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
}

void nnop__cuda_plan_destroy(nnop_plan *p)
{
    (void)p;
}

size_t nnop__cuda_partition_describe(const nnop_plan *p, int32_t i, char *buf, size_t len)
{
    (void)p;
    (void)i;
    if (len)
        buf[0] = '\0';
    return 0;
}

nnop_status nnop__cuda_plan_engines(nnop_plan *p, nnop_engine_info *out, int cap, int *count)
{
    (void)p;
    (void)out;
    (void)cap;
    *count = 0;
    return NNOP_OK;
}

void nnop__cuda_partition_info(const nnop_plan *p, int32_t i, nnop_partition_info *out)
{
    (void)p;
    (void)i;
    (void)out;
}

void nnop__cuda_plan_memory(const nnop_plan *p, nnop_plan_memory_info *m)
{
    (void)p;
    (void)m;
}

size_t nnop__cuda_plan_buckets(const nnop_plan *p, char *buf, size_t len)
{
    (void)p, (void)buf, (void)len;
    return 0;
}

/* No CUDA plan exists in this build, so no execution context of one either. */
size_t nnop__cuda_exec_scratch_bytes(const nnop_plan *p)
{
    (void)p;
    return 0;
}

nnop_status nnop__cuda_exec_create(nnop_plan *p, void *scratch, struct nnop__cuda_exec **out)
{
    (void)scratch;
    *out = NULL;
    return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED,
                      "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
}

nnop_status nnop__cuda_exec_run(struct nnop__cuda_exec *e, int64_t batch, const void *const *in,
                                void *const *out, char *err, size_t len)
{
    (void)e, (void)batch, (void)in, (void)out;
    if (len)
        snprintf(err, len, "NNOP_ERR_UNSUPPORTED: this nnop was built without CUDA");
    return NNOP_ERR_UNSUPPORTED;
}

nnop_status nnop__cuda_exec_set_stream(struct nnop__cuda_exec *e, void *stream, char *err,
                                       size_t len)
{
    (void)stream;
    return nnop__cuda_exec_run(e, 0, NULL, NULL, err, len);
}

nnop_status nnop__cuda_exec_synchronize(struct nnop__cuda_exec *e, char *err, size_t len)
{
    return nnop__cuda_exec_run(e, 0, NULL, NULL, err, len);
}

void nnop__cuda_exec_memory(const struct nnop__cuda_exec *e, nnop_plan_memory_info *m)
{
    (void)e, (void)m;
}

void nnop__cuda_exec_destroy(nnop_plan *p, struct nnop__cuda_exec *e)
{
    (void)p, (void)e;
}

nnop_status nnop__cuda_malloc(nnop_context *ctx, size_t bytes, void **out)
{
    (void)bytes;
    *out = NULL;
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED,
                      "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
}

void nnop__cuda_free(nnop_context *ctx, void *p)
{
    (void)ctx;
    (void)p;
}

nnop_status nnop__cuda_copy(nnop_context *ctx, void *dst, const void *src, size_t bytes,
                            int to_device)
{
    (void)dst;
    (void)src;
    (void)bytes;
    (void)to_device;
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED,
                      "this nnop was built without CUDA (NNOP_WITH_CUDA=OFF)");
}
