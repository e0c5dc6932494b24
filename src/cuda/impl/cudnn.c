/* cudnn.c: partitions on cuDNN: the whole chain as one operation graph with the engine the
 * engine stage picks (a C=3 first layer tried zero-padded to C=4 first, stem.c), or, after
 * cuDNN refused the whole chain, its longest prefix cuDNN takes, the rest split off to run
 * as an own epilogue kernel (the reason kept for nnop_plan_describe); a transposed conv as
 * cuDNN's data-gradient convolution (its epilogue split off the same way), a layer or RMS
 * norm as its norm-forward operation (inference) with its whole epilogue in the graph. Linear
 * layers never come here: they run on cuBLASLt or the own linear kernel (issue 10). Execute binds
 * the slots into a variant pack: up to NNOP_VPACK_CACHE prebuilt per step, keyed by pointers. */
#include <stdio.h>
#include <string.h>

#include "cuda/impl/impl.h"
#include "platform/platform.h"

static int splittable(nnop_status st)
{
    return NNOP_IMPL_REFUSED(st);
}

static nnop_status try_dnn_once(nnop_plan *p, int32_t first, int32_t count, nnop__cuda_step *step,
                                char *why, size_t len, int pad)
{
    nnop__dnn_step *dnn = (nnop__dnn_step *)nnop__calloc(1, sizeof *dnn);
    nnop__chain c;
    nnop_status st;
    if (!dnn)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    why[0] = '\0';
    st = nnop__chain_build(p, first, count, 1, &c);
    if (st == NNOP_OK && pad)
        st = nnop__stem_pad(p, &c, step);
    if (st == NNOP_OK)
        st = nnop__lower_chain(p, &c, dnn);
    if (st == NNOP_OK)
        st = nnop__engine_select(p, dnn, why, len);
    else
        nnop__copy_text(why, len, nnop__error_body(p->ctx));
    step->folded = c.folded;
    nnop__chain_free(&c);
    if (st != NNOP_OK) {
        nnop__dnn_step_destroy(dnn);
        return st;
    }
    step->kind = NNOP_STEP_DNN;
    step->dnn = dnn;
    step->y_slot = p->g->nodes[first + count - 1].out;
    return NNOP_OK;
}
/* A C=3 first layer tries the zero-padded C=4 form first (stem.c), then the plain one. */
static nnop_status try_dnn(nnop_plan *p, int32_t first, int32_t count, nnop__cuda_step *step,
                           char *why, size_t len)
{
    nnop_status st;
    if (nnop__stem_applies(p, first)) {
        st = try_dnn_once(p, first, count, step, why, len, 1);
        if (st == NNOP_OK || !splittable(st))
            return st;
        step->padded = 0;
    }
    return try_dnn_once(p, first, count, step, why, len, 0);
}
static nnop_status run_dnn(nnop_plan *p, nnop__dnn_step *s, void *workspace)
{
    struct nnop__cuda_plan *cp = p->cuda;
    size_t n = (size_t)s->n_io * sizeof(void *);
    int j, k;
    for (j = 0; j < s->n_io; j++)
        s->ptrs[j] = nnop__dnn_io_ptr(s, j, s->slots[j] >= 0 ? cp->slot[s->slots[j]] : NULL);
    for (k = 0; k < s->n_vpack && memcmp(s->vptrs[k], s->ptrs, n) != 0; k++)
        ;
    if (k == s->n_vpack) { /* a binding set not seen before: the one place execute builds */
        nnop_status st;
        k = s->n_vpack < NNOP_VPACK_CACHE ? s->n_vpack++ : s->next_vpack;
        s->next_vpack = (k + 1) % NNOP_VPACK_CACHE;
        if (s->vpack[k])
            (void)cudnnBackendDestroyDescriptor(s->vpack[k]);
        s->vpack[k] = NULL;
        memcpy(s->vptrs[k], s->ptrs, n);
        st = nnop__dnn_make_vpack(p->ctx, s, s->ptrs, workspace, &s->vpack[k]);
        if (st != NNOP_OK) {
            memset(s->vptrs[k], 0, n);
            return st;
        }
    }
    return NNOP_DNN(p->ctx, cudnnBackendExecute(p->ctx->cuda->handle, s->plan, s->vpack[k]));
}
static const char *tuned(const nnop__dnn_step *d)
{
    static NNOP_THREAD_LOCAL char buf[64];
    if (!d->tuned)
        return "";
    if (d->n_timed > 0)
        snprintf(buf, sizeof buf, ", autotuned %.1f us, fastest of %d configs", (double)d->time_us,
                 d->n_timed);
    else
        snprintf(buf, sizeof buf, ", autotuned %.1f us", (double)d->time_us);
    return buf;
}
/* ------------------------------------------------------------------ the entries */
/* Producer partitions but linear layers: cuDNN's matmul engines are not used (on sm_90 they
 * gave fp32 results off by TF32 rounding with TF32 off, dropped a clamp's lower bound, and
 * the runtime-compiled one wrote wrong fp16 sums: issue 10's differential tester). */
static int cudnn_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    const nnop__node *n = &p->g->nodes[t->first];
    if (nnop__op(n->op)->role != NNOP_ROLE_PRODUCER) {
        *why_not = "not a producer partition";
        return 0;
    }
    if (n->op == NNOP_OP_LINEAR) {
        *why_not = "linear layers run on cuBLASLt or the own linear kernel";
        return 0;
    }
    if (n->op != NNOP_OP_CONV) {
        *why_not = "a transposed convolution is cuDNN's data gradient, alone";
        return 0;
    }
    return 1;
}

static nnop_status graph_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    return try_dnn(p, t->first, t->count, st, t->why, sizeof t->why);
}

/* The longest prefix cuDNN takes after it refused the whole chain (the entry before). */
static nnop_status prefix_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *step)
{
    char why[NNOP_REASON_LEN];
    int32_t cut;
    nnop_status st = t->refused;
    for (cut = t->count - 1; cut >= 1; cut--) {
        st = try_dnn(p, t->first, cut, step, why, sizeof why);
        if (st == NNOP_OK || !splittable(st))
            break;
    }
    if (st != NNOP_OK && !splittable(st))
        return st; /* out of memory, a CUDA error: its own message says what */
    if (st != NNOP_OK) {
        char label[NNOP_NAME_LEN + 64];
        snprintf(t->why, sizeof t->why, "%s", t->before);
        return nnop__fail(p->ctx, st, "nnop_graph_compile: no cuDNN engine for %s: %s",
                          nnop__node_label(p->g, t->first, label, sizeof label), t->before);
    }
    t->taken = cut;
    t->who = "cuDNN refused the longer chain";
    snprintf(t->why, sizeof t->why, "%s", t->before);
    return NNOP_OK;
}

/* A transposed conv whose output padding keeps it the data gradient of a forward conv (that
 * conv's output size, from the transposed conv's output, is then its input's). */
static int dgrad_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_conv_transpose_params *cp = &n->attr.deconv;
    if (n->op != NNOP_OP_CONV_TRANSPOSE) {
        *why_not = "not a transposed convolution";
        return 0;
    }
    if (cp->output_pad[0] >= cp->stride[0] || cp->output_pad[1] >= cp->stride[1]) {
        *why_not = "output padding not below the stride: no forward conv has this data gradient";
        return 0;
    }
    return 1;
}

static nnop_status dgrad_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *step)
{
    const nnop__node *n = &p->g->nodes[t->first];
    nnop__dnn_step *dnn = (nnop__dnn_step *)nnop__calloc(1, sizeof *dnn);
    int32_t x_slot = -1, w_slot = -1;
    nnop_status st;
    if (!dnn)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    st = nnop__slot_value(p, n->in[0], &x_slot);
    if (st == NNOP_OK)
        st = nnop__slot_value(p, n->in[1], &w_slot);
    if (st == NNOP_OK)
        st = nnop__lower_deconv(p, t->first, x_slot, w_slot, dnn);
    if (st == NNOP_OK)
        st = nnop__engine_select(p, dnn, t->why, sizeof t->why);
    else
        nnop__copy_text(t->why, sizeof t->why, nnop__error_body(p->ctx));
    if (st != NNOP_OK) {
        nnop__dnn_step_destroy(dnn);
        return st;
    }
    step->kind = NNOP_STEP_DNN;
    step->dnn = dnn;
    step->y_slot = n->out;
    if (t->count > 1) {
        t->taken = 1;
        t->who = "cuDNN's data-gradient convolution took the transposed conv";
        snprintf(t->why, sizeof t->why, "the epilogue runs on the own epilogue kernel");
    }
    return NNOP_OK;
}

/* A layer norm (over C with contiguous channels, or over C, H, W) or an RMS norm over C whose
 * affine parameters are constants (uploaded as float32, as cuDNN's samples take them). */
static int norm_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const int rms = n->op == NNOP_OP_RMS_NORM;
    if (n->op == NNOP_OP_GROUP_NORM) {
        *why_not = "cuDNN's norm-forward has no group count (group and instance norm run on "
                   "the own kernel)";
        return 0;
    }
    if (n->op != NNOP_OP_LAYER_NORM && !rms) {
        *why_not = "not a layer or RMS norm";
        return 0;
    }
    if (x->ndim != 4) { /* an N x C or N x C x H norm stays on the own kernel */
        *why_not = "only 4-D tensors are lowered to cuDNN's norm-forward";
        return 0;
    }
    if ((rms || n->attr.norm.axes == NNOP_NORM_C) && x->strides[1] != 1) {
        *why_not = "a norm over strided channels (channels-first) is no cuDNN norm-forward view";
        return 0;
    }
    if (!nnop__value_is_const(p->g, n->in[1]) || (!rms && !nnop__value_is_const(p->g, n->in[2]))) {
        *why_not = "cuDNN's norm-forward is given constant scale and bias here";
        return 0;
    }
    return 1;
}

/* Constant v as a float32 slot. */
static nnop_status float_slot(nnop_plan *p, int32_t v, int32_t *slot)
{
    const nnop__value *val = &p->g->values[v];
    int64_t n = nnop_tensor_elements(&val->desc);
    float *f = (float *)nnop__calloc((size_t)(n > 0 ? n : 1), sizeof *f);
    nnop_status st;
    if (!f)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    nnop__to_f32(val->desc.dtype, val->data, f, n);
    st = nnop__slot_upload_const(p, "constant", f, (size_t)n * sizeof *f, slot);
    nnop__free(f);
    return st;
}

/* The norm and its whole epilogue chain as one graph: where cuDNN refuses either, the own
 * norm kernel takes both (one pass), better than cuDNN's norm with the epilogue split off. */
static nnop_status norm_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *step)
{
    const nnop__node *n = &p->g->nodes[t->first];
    nnop__dnn_step *dnn = (nnop__dnn_step *)nnop__calloc(1, sizeof *dnn);
    int32_t x_slot = -1, g_slot = -1, b_slot = -1;
    nnop__chain epi;
    nnop_status st;
    memset(&epi, 0, sizeof epi);
    if (!dnn)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    st = t->count > 1 ? nnop__chain_build(p, t->first + 1, t->count - 1, 0, &epi) : NNOP_OK;
    if (st == NNOP_OK)
        st = nnop__slot_value(p, n->in[0], &x_slot);
    if (st == NNOP_OK)
        st = float_slot(p, n->in[1], &g_slot);
    if (st == NNOP_OK && n->op == NNOP_OP_LAYER_NORM)
        st = float_slot(p, n->in[2], &b_slot);
    if (st == NNOP_OK)
        st = nnop__lower_norm(p, t->first, x_slot, g_slot, b_slot, &epi, dnn);
    if (st == NNOP_OK)
        st = nnop__engine_select(p, dnn, t->why, sizeof t->why);
    else
        nnop__copy_text(t->why, sizeof t->why, nnop__error_body(p->ctx));
    nnop__chain_free(&epi);
    if (st != NNOP_OK) {
        nnop__dnn_step_destroy(dnn);
        return st;
    }
    step->kind = NNOP_STEP_DNN;
    step->dnn = dnn;
    step->y_slot = p->g->nodes[t->first + t->count - 1].out;
    return NNOP_OK;
}

static nnop_status cudnn_run(nnop_plan *p, nnop__cuda_step *s)
{
    nnop_status st = NNOP_OK;
    if (s->padded)
        st = nnop__stem_run(p, s);
    return st == NNOP_OK ? run_dnn(p, s->dnn, nnop__step_workspace(p, s)) : st;
}

static size_t cudnn_describe(const nnop_plan *p, const nnop__cuda_step *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[cudnn %seng%lld %s, workspace %lld B%s%s%s%s]",
                     s->impl == &nnop__impl_cudnn_dgrad  ? "data gradient (transposed conv), "
                     : s->impl == &nnop__impl_cudnn_norm ? "norm forward (inference), "
                                                         : "",
                     (long long)s->dnn->engine, s->dnn->rtc ? "runtime-compiled" : "precompiled",
                     (long long)s->dnn->workspace, tuned(s->dnn),
                     s->dnn->rtc_unsafe == NNOP_RTC_UNSAFE
                             ? ", runtime-compiled engines excluded for this shape"
                     : s->dnn->rtc_unsafe == NNOP_RTC_1X1
                             ? ", runtime-compiled engines not tried on a 16-bit 1x1 conv"
                     : s->dnn->rtc_unsafe == NNOP_RTC_NORM
                             ? ", runtime-compiled engines not tried on a norm forward"
                             : "",
                     s->dnn->cached == 3   ? ", plan from cache, prefetched"
                     : s->dnn->cached == 2 ? ", plan from cache"
                     : s->dnn->cached == 1 ? ", engine from cache"
                                           : "",
                     s->folded ? ", bn/bias folded" : "");
    (void)p;
    if (n > 0 && s->padded && (size_t)n < len)
        n += snprintf(buf + n - 1, len - (size_t)n + 1, ", input C %d->%d zero-padded]", s->pad_cin,
                      s->pad_cout) -
             1;
    return n > 0 ? (size_t)n : 0;
}

static void cudnn_destroy(nnop__cuda_step *st)
{
    nnop__dnn_step_destroy(st->dnn);
    st->dnn = NULL;
}

const nnop__impl nnop__impl_cudnn_graph = {"cudnn graph", cudnn_fits,     graph_build,
                                           cudnn_run,     cudnn_describe, cudnn_destroy};
const nnop__impl nnop__impl_cudnn_prefix = {"cudnn prefix", cudnn_fits,     prefix_build,
                                            cudnn_run,      cudnn_describe, cudnn_destroy};
const nnop__impl nnop__impl_cudnn_dgrad = {
        "cudnn data gradient", dgrad_fits, dgrad_build, cudnn_run, cudnn_describe, cudnn_destroy};
const nnop__impl nnop__impl_cudnn_norm = {"cudnn norm forward", norm_fits,    norm_build, cudnn_run,
                                          cudnn_describe,       cudnn_destroy};
