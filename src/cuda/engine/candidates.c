/* candidates.c: the engine configs cuDNN's heuristics offer for one operation graph (modes A,
 * B, FALLBACK; each engine's first config, and for autotuning its other knob choices too, with
 * the engine's behaviour and numerical notes), the rules under which no policy may take one
 * (cudnn-backend-notes 7.2; issue 10's shape class), and which pass of the selection a policy
 * takes one in. Shared by the selection (engine.c) and the
 * survey of every engine (survey.c), so that the survey's picks follow the same rules. */
#include <string.h>

#include "cuda/engine/engine.h"
#include "util/hash.h"

#define MAX_NOTES 32

static nnop_status read_notes(nnop_context *ctx, cudnnBackendDescriptor_t cfg, nnop__cand *c)
{
    cudnnBackendDescriptor_t e = NULL;
    cudnnBackendBehaviorNote_t bn[MAX_NOTES];
    cudnnBackendNumericalNote_t nn[MAX_NOTES];
    int64_t n = 0, i;
    nnop_status st =
            NNOP_DNN(ctx, cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e));
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e));
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                    CUDNN_TYPE_INT64, 1, &n, &c->engine));
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                                    CUDNN_TYPE_BEHAVIOR_NOTE, MAX_NOTES, &n, bn));
    for (i = 0; st == NNOP_OK && i < n; i++)
        c->rtc |= bn[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                                    CUDNN_TYPE_NUMERICAL_NOTE, MAX_NOTES, &n, nn));
    for (i = 0; st == NNOP_OK && i < n; i++) {
        c->nondet |= nn[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
        c->tf32 |= nn[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
                   nn[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    }
    if (e)
        (void)cudnnBackendDestroyDescriptor(e);
    return st;
}

/* A digest of cfg's knob choices, to tell an engine's configs apart (0: none readable). */
static uint64_t knob_digest(cudnnBackendDescriptor_t cfg)
{
    nnop__knob k[NNOP_CACHE_MAX_KNOBS];
    int32_t n = nnop__dnn_cfg_knobs(cfg, k);
    uint64_t lo = 0, hi = 0;
    nnop__h128 h;
    if (n <= 0)
        return 0;
    nnop__h128_init(&h);
    nnop__h128_update(&h, k, (size_t)n * sizeof k[0]);
    nnop__h128_final(&h, &lo, &hi);
    return lo ^ hi;
}

int nnop__cands_admit(const nnop__cands *s, nnop__cand *c, int variants)
{
    int i, engine_listed = 0;
    if (s->n >= NNOP_MAX_CANDS)
        return 0;
    for (i = 0; i < s->n; i++)
        if (s->c[i].engine == c->engine) {
            if (s->c[i].knobs == c->knobs)
                return 0;
            engine_listed = 1;
        }
    c->variant = engine_listed;
    return !engine_listed || variants;
}

/* Keep the configs of result list cfgs[0..got) not seen before (with variants: an engine's
 * other knob choices too, marked). */
static void take_results(nnop_context *ctx, nnop__cands *s, cudnnBackendDescriptor_t *cfgs,
                         int64_t got, int mode_index, int variants)
{
    int64_t i;
    for (i = 0; i < got; i++) {
        nnop__cand c;
        int read;
        memset(&c, 0, sizeof c);
        c.cfg = cfgs[i];
        c.mode = mode_index;
        read = s->n < NNOP_MAX_CANDS && read_notes(ctx, cfgs[i], &c) == NNOP_OK;
        if (read && variants)
            c.knobs = knob_digest(cfgs[i]);
        if (read && nnop__cands_admit(s, &c, variants)) {
            s->c[s->n++] = c;
            s->per_mode[mode_index]++;
        } else {
            (void)cudnnBackendDestroyDescriptor(cfgs[i]);
        }
    }
}

static nnop_status heuristics(nnop_context *ctx, nnop__dnn_step *st, cudnnBackendHeurMode_t mode,
                              int mode_index, int variants, nnop__cands *s)
{
    cudnnBackendDescriptor_t h = NULL, cfgs[NNOP_MAX_CANDS];
    int64_t count = 0, got = 0, i;
    const nnop__attr attrs[] = {
            NNOP_ATTR_DESC(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, &st->graph),
            NNOP_ATTR(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode)};
    nnop_status r =
            NNOP_DNN(ctx, cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &h));
    if (r == NNOP_OK)
        r = nnop__dnn_set_all(ctx, h, attrs, NNOP_COUNT(attrs), "engine heuristics");
    if (r == NNOP_OK)
        r = NNOP_DNN(ctx, cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL));
    if (count > NNOP_MAX_CANDS)
        count = NNOP_MAX_CANDS;
    for (i = 0; r == NNOP_OK && i < count; i++)
        r = NNOP_DNN(ctx,
                     cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]));
    count = i;
    if (r == NNOP_OK && count > 0)
        r = NNOP_DNN(ctx,
                     cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs));
    if (r != NNOP_OK)
        got = 0;
    take_results(ctx, s, cfgs, got, mode_index, variants);
    for (i = got; i < count; i++)
        (void)cudnnBackendDestroyDescriptor(cfgs[i]);
    if (h)
        (void)cudnnBackendDestroyDescriptor(h);
    return r;
}

void nnop__cands_collect(nnop_context *ctx, nnop__dnn_step *st, int variants, nnop__cands *s)
{
    static const cudnnBackendHeurMode_t modes[3] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B,
                                                    CUDNN_HEUR_MODE_FALLBACK};
    int i;
    for (i = 0; i < 3; i++) /* a mode may refuse a graph: not fatal */
        (void)heuristics(ctx, st, modes[i], i, variants, s);
}

void nnop__cands_free(nnop__cands *s)
{
    int i;
    for (i = 0; i < s->n; i++)
        if (s->c[i].cfg) {
            (void)cudnnBackendDestroyDescriptor(s->c[i].cfg);
            s->c[i].cfg = NULL;
        }
}

nnop__cand_rule nnop__cand_refused(const nnop_context *ctx, const nnop__dnn_step *st,
                                   const nnop__cand *c)
{
    const nnop_context_options *o = &ctx->opts;
    if (c->engine == 0 && st->is_conv && st->n_ops > 1)
        return NNOP_CAND_ENGINE0;
    if (c->rtc && st->rtc_unsafe)
        return NNOP_CAND_SHAPE;
    if ((o->deterministic && c->nondet) || (st->fp32 && !o->allow_tf32 && c->tf32))
        return NNOP_CAND_OPTIONS;
    return NNOP_CAND_OK;
}

int nnop__cand_pass(nnop_engine_policy pol, const nnop__cand *c)
{
    if (!c->rtc)
        return 0;
    if (pol == NNOP_POLICY_PRECOMPILED_ONLY)
        return -1;
    return pol == NNOP_POLICY_PREFER_PRECOMPILED ? 1 : 0;
}

int nnop__cand_limit(const nnop_context_options *o, nnop_engine_policy pol)
{
    return o->autotune || pol == NNOP_POLICY_FASTEST ? NNOP_AUTOTUNE_TOP_K : 1;
}
