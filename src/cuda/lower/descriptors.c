/* descriptors.c: common lowering helpers: descriptors owned by a step, tensors (real at
 * partition boundaries, virtual FLOAT inside), the finalized operation graph. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cuda/lower/lower_parts.h"

cudnnDataType_t nnop__dnn_dtype(nnop_dtype t)
{
    return t == NNOP_F16    ? CUDNN_DATA_HALF
           : t == NNOP_BF16 ? CUDNN_DATA_BFLOAT16
                            : CUDNN_DATA_FLOAT;
}

nnop_status nnop__dnn_create(nnop_context *ctx, nnop__dnn_step *s, cudnnBackendDescriptorType_t t,
                             cudnnBackendDescriptor_t *out)
{
    nnop_status st;
    *out = NULL;
    if (s->n_owned >= NNOP_STEP_MAX_DESC)
        return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "lowering: more than %d descriptors",
                          NNOP_STEP_MAX_DESC);
    st = NNOP_DNN(ctx, cudnnBackendCreateDescriptor(t, out));
    if (st == NNOP_OK)
        s->owned[s->n_owned++] = *out;
    return st;
}

nnop_status nnop__dnn_set(nnop_context *ctx, cudnnBackendDescriptor_t d,
                          cudnnBackendAttributeName_t a, const char *aname,
                          cudnnBackendAttributeType_t t, int64_t n, const void *v, const char *file,
                          int line)
{
    char call[160];
    snprintf(call, sizeof call, "cudnnBackendSetAttribute(%s)", aname);
    return nnop__cudnn_check(ctx, cudnnBackendSetAttribute(d, a, t, n, v), call, file, line);
}

nnop_status nnop__dnn_finalize(nnop_context *ctx, cudnnBackendDescriptor_t d, const char *what)
{
    char call[160];
    snprintf(call, sizeof call, "cudnnBackendFinalize(%s)", what);
    return nnop__cudnn_check(ctx, cudnnBackendFinalize(d), call, __FILE__, __LINE__);
}

nnop_status nnop__dnn_set_all(nnop_context *ctx, cudnnBackendDescriptor_t d, const nnop__attr *a,
                              int n, const char *what)
{
    nnop_status st = NNOP_OK;
    int i;
    for (i = 0; i < n && st == NNOP_OK; i++)
        if (a[i].n > 0) /* a count of 0 leaves an optional attribute unset */
            st = nnop__dnn_set(ctx, d, a[i].name, a[i].text, a[i].type, a[i].n, a[i].value,
                               __FILE__, __LINE__);
    return st == NNOP_OK ? nnop__dnn_finalize(ctx, d, what) : st;
}

nnop_status nnop__dnn_add_op(nnop_context *ctx, nnop__dnn_step *s, cudnnBackendDescriptor_t op)
{
    if (s->n_ops >= NNOP_STEP_MAX_OPS)
        return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "lowering: more than %d operations",
                          NNOP_STEP_MAX_OPS);
    s->ops[s->n_ops++] = op;
    return NNOP_OK;
}

void *nnop__dnn_io_ptr(const nnop__dnn_step *s, int i, void *dev)
{
    return s->scalar_io == i + 1 ? (void *)&s->scalar : dev;
}

static nnop_status add_io(nnop_context *ctx, nnop__dnn_step *s, int64_t uid, int32_t slot,
                          int64_t bytes)
{
    if (s->n_io >= NNOP_STEP_MAX_IO)
        return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "lowering: more than %d real tensors",
                          NNOP_STEP_MAX_IO);
    s->uids[s->n_io] = uid;
    s->slots[s->n_io] = slot;
    s->bytes[s->n_io] = bytes;
    s->n_io++;
    return NNOP_OK;
}

static int64_t extent_bytes(int ndim, const int64_t *dims, const int64_t *strides, nnop_dtype dt)
{
    int64_t e = 1;
    int i;
    for (i = 0; i < ndim; i++)
        e += (dims[i] - 1) * strides[i];
    return e * (int64_t)nnop_dtype_size(dt);
}

/* The shape class in which cuDNN's runtime-compiled fusion engine (eng7 on sm_90, cuDNN
 * 9.14) returned wrong sums and NaN, or faulted with misaligned 16-byte stores: fp16/bf16
 * 4-D tensors with a channel count that is not a multiple of 8, NCHW with H x W > 1, or a
 * batch of 1x1 images (a [1, K, 1, 1] per-channel operand is fine). The last clause is about
 * activations, not a 1x1 conv's filter [K, C, 1, 1]. */
static int rtc_unsafe_tensor(int ndim, const int64_t *dims, const int64_t *strides, nnop_dtype dt,
                             bool filter)
{
    if (dt == NNOP_F32 || ndim != 4)
        return 0;
    return dims[1] % 8 != 0 || (strides[1] != 1 && dims[2] * dims[3] > 1) ||
           (!filter && dims[0] > 1 && dims[2] * dims[3] == 1);
}

/* A 16-bit 1x1 conv keeps to precompiled engines, its activation split off to the own
 * epilogue kernel. Runtime-compiled engines fuse that activation, but with them the networks
 * ran slower in 3 of 4 runs on the H200 (cuDNN 9.14, autotuned: ConvNeXt-Tiny at batch 1 and
 * 32, EfficientNet-B0 at batch 1; only EfficientNet-B0 at batch 32 gained; GPU log
 * 2026-12-02-h200-c, in git history: docs/performance.md), and each costs a compile at the first
 * plan. Until autotuning times both forms of the step, the one measured faster more often. */
static int rtc_kept_off_filter(int ndim, const int64_t *dims, nnop_dtype dt, bool filter)
{
    return filter && dt != NNOP_F32 && ndim == 4 && dims[2] * dims[3] == 1;
}

/* Mark the step for the rules above (the unsafe class wins over the 1x1 rule). */
static void mark_rtc(nnop__dnn_step *s, int ndim, const int64_t *dims, const int64_t *strides,
                     nnop_dtype dt, bool filter)
{
    if (s->rtc_unsafe == NNOP_RTC_UNSAFE)
        return;
    if (rtc_unsafe_tensor(ndim, dims, strides, dt, filter)) {
        s->rtc_unsafe = NNOP_RTC_UNSAFE;
        nnop__fp_add_str(&s->fpb, "runtime-compiled engines excluded");
    } else if (s->rtc_unsafe == 0 && rtc_kept_off_filter(ndim, dims, dt, filter)) {
        s->rtc_unsafe = NNOP_RTC_1X1;
        nnop__fp_add_str(&s->fpb, "runtime-compiled engines kept off a 1x1 conv");
    }
}

static nnop_status lower_tensor_as(nnop_context *ctx, nnop__dnn_step *s, int ndim,
                                   const int64_t *dims, const int64_t *strides, nnop_dtype dt,
                                   int32_t slot, bool filter, cudnnBackendDescriptor_t *out)
{
    int64_t uid = ++s->next_uid, align = NNOP_TENSOR_ALIGN;
    bool virt = slot < 0;
    cudnnDataType_t t = virt ? CUDNN_DATA_FLOAT : nnop__dnn_dtype(dt);
    const nnop__attr attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, ndim, dims),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, ndim, strides),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt)};
    nnop_status st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, *out, attrs, NNOP_COUNT(attrs), "tensor");
    nnop__fp_add_str(&s->fpb, "tensor");
    nnop__fp_add_i64(&s->fpb, uid);
    nnop__fp_add_i64(&s->fpb, (int64_t)t);
    nnop__fp_add_i64(&s->fpb, virt);
    nnop__fp_add_i64(&s->fpb, align);
    nnop__fp_add_bytes(&s->fpb, dims, (size_t)ndim * sizeof *dims);
    nnop__fp_add_bytes(&s->fpb, strides, (size_t)ndim * sizeof *strides);
    if (!virt)
        mark_rtc(s, ndim, dims, strides, dt, filter);
    if (st == NNOP_OK && !virt)
        st = add_io(ctx, s, uid, slot, extent_bytes(ndim, dims, strides, dt));
    return st;
}

nnop_status nnop__lower_tensor(nnop_context *ctx, nnop__dnn_step *s, int ndim, const int64_t *dims,
                               const int64_t *strides, nnop_dtype dt, int32_t slot,
                               cudnnBackendDescriptor_t *out)
{
    return lower_tensor_as(ctx, s, ndim, dims, strides, dt, slot, false, out);
}

/* A FLOAT scalar [1, 1, 1, 1] passed by value (cuDNN reads it from host memory at execute:
 * the step's own copy, nnop__dnn_io_ptr); one a step. */
nnop_status nnop__lower_scalar(nnop_context *ctx, nnop__dnn_step *s, float v,
                               cudnnBackendDescriptor_t *out)
{
    int64_t uid = ++s->next_uid, one[4] = {1, 1, 1, 1}, align = NNOP_TENSOR_ALIGN;
    bool yes = true;
    cudnnDataType_t t = CUDNN_DATA_FLOAT;
    const nnop__attr attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, one),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, one),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align),
            NNOP_ATTR(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes)};
    nnop_status st;
    if (s->scalar_io)
        return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "lowering: a second by-value scalar");
    st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, *out, attrs, NNOP_COUNT(attrs), "by-value tensor");
    nnop__fp_add_str(&s->fpb, "scalar");
    nnop__fp_add_i64(&s->fpb, uid);
    nnop__fp_add_f32(&s->fpb, v);
    if (st == NNOP_OK)
        st = add_io(ctx, s, uid, -1, (int64_t)sizeof(float));
    if (st == NNOP_OK) {
        s->scalar = v;
        s->scalar_io = s->n_io;
    }
    return st;
}

nnop_status nnop__lower_filter(nnop_context *ctx, nnop__dnn_step *s, const nnop_tensor_desc *w,
                               int32_t slot, cudnnBackendDescriptor_t *out)
{
    return lower_tensor_as(ctx, s, w->ndim, w->dims, w->strides, w->dtype, slot, true, out);
}

nnop_status nnop__dnn_graph(nnop_context *ctx, nnop__dnn_step *s)
{
    cudnnHandle_t h = ctx->cuda->handle;
    cudnnBackendDescriptor_t g = NULL;
    const nnop__attr attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h),
            NNOP_ATTR(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, s->n_ops,
                      s->ops)};
    nnop_status st;
    if (s->graph)
        return NNOP_OK;
    /* owned by s, so destroyed before the ops it names even if finalizing fails */
    st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, g, attrs, NNOP_COUNT(attrs), "operation graph");
    if (st == NNOP_OK)
        s->graph = g;
    return st;
}

nnop_status nnop__dnn_step_run_copy(const nnop__dnn_step *s, nnop__dnn_step **out)
{
    nnop__dnn_step *c = (nnop__dnn_step *)nnop__calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return NNOP_ERR_OUT_OF_MEMORY;
    memcpy(c, s, sizeof *c);
    /* the descriptors stay s's: nnop__dnn_step_destroy(c) frees only c's variant packs */
    c->n_owned = 0;
    c->cfg = NULL;
    c->plan_shared = 1;
    memset(c->vpack, 0, sizeof c->vpack);
    memset(c->vptrs, 0, sizeof c->vptrs);
    c->n_vpack = c->next_vpack = 0;
    return NNOP_OK;
}

void nnop__dnn_step_destroy(nnop__dnn_step *s)
{
    int i;
    if (!s)
        return;
    for (i = 0; i < s->n_vpack; i++)
        (void)cudnnBackendDestroyDescriptor(s->vpack[i]);
    if (s->plan && !s->plan_shared)
        (void)cudnnBackendDestroyDescriptor(s->plan);
    if (s->cfg)
        (void)cudnnBackendDestroyDescriptor(s->cfg);
    for (i = s->n_owned - 1; i >= 0; i--) /* graph, ops, then tensors */
        (void)cudnnBackendDestroyDescriptor(s->owned[i]);
    nnop__free(s);
}
