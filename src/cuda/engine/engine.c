/* engine.c: engine selection for one cuDNN operation graph: the heuristics' candidates
 * (candidates.c) filtered by policy (runtime-compiled, deterministic, TF32, workspace limit,
 * never engine 0 for a fused conv graph: cudnn-backend-notes 7.2); first plan that
 * finalizes, or when autotuning the fastest of the top engines timed on the GPU (timing.c),
 * then of that engine's other knob choices; identical steps of a plan share one execution
 * plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/engine/engine.h"
#include "platform/platform.h"

typedef struct search {
    nnop__cands cands;
    int skipped_eng0, skipped_policy, skipped_shape, failed;
    char last_fail[384];
} search;

/* 1 when no pass takes c under the context's options and policy (counted by reason, on the
 * first pass). */
static int refused(const nnop_context *ctx, const nnop__dnn_step *st, const nnop__cand *c, int pass,
                   search *s)
{
    switch (nnop__cand_refused(ctx, st, c)) {
    case NNOP_CAND_ENGINE0:
        s->skipped_eng0 += pass == 0;
        return 1;
    case NNOP_CAND_SHAPE:
        s->skipped_shape += pass == 0;
        return 1;
    case NNOP_CAND_OPTIONS:
        s->skipped_policy += pass == 0;
        return 1;
    case NNOP_CAND_OK:
        break;
    }
    if (nnop__cand_pass(ctx->opts.policy, c) < 0) {
        s->skipped_policy += pass == 0;
        return 1;
    }
    return 0;
}

/* Why a step's runtime-compiled engines are refused, for the no-engine message. */
static const char *rtc_rule_text(int rtc_unsafe)
{
    switch (rtc_unsafe) {
    case NNOP_RTC_1X1:
        return "16-bit 1x1 conv, measured slower";
    case NNOP_RTC_NORM:
        return "norm forward, measured 13x slower than the own kernel";
    default:
        return "this shape class";
    }
}

/* ------------------------------------------------------------------ selection */
static void keep(nnop__dnn_step *st, search *s, int i, cudnnBackendDescriptor_t plan, int64_t ws,
                 float us)
{
    if (st->plan)
        (void)cudnnBackendDestroyDescriptor(st->plan);
    if (st->cfg)
        (void)cudnnBackendDestroyDescriptor(st->cfg);
    st->plan = plan;
    st->cfg = s->cands.c[i].cfg;
    s->cands.c[i].cfg = NULL;
    st->engine = s->cands.c[i].engine;
    st->rtc = s->cands.c[i].rtc;
    st->workspace = ws;
    st->time_us = us;
}

static int autotuning(const nnop_context *ctx)
{
    return nnop__cand_limit(&ctx->opts, ctx->opts.policy) > 1;
}

/* Candidate c failed (why): counted, its config dropped; returns 0. */
static int drop(search *s, nnop__cand *c, const char *why)
{
    int n = snprintf(s->last_fail, sizeof s->last_fail, "eng%lld: ", (long long)c->engine);
    nnop__copy_text(s->last_fail + n, sizeof s->last_fail - (size_t)n, why);
    s->failed++;
    (void)cudnnBackendDestroyDescriptor(c->cfg);
    c->cfg = NULL;
    return 0;
}

/* 1 when the engine config of c says, before any plan is built, that it needs more workspace
 * than the limit (cuDNN 9.2 and later: a runtime-compiled engine over the limit is then not
 * compiled for nothing); on 9.0 and 9.1 the plan built from it says so (try_cand). */
static int config_over_limit(nnop_context *ctx, const nnop__cand *c)
{
    int64_t ws = 0;
    return ctx->opts.workspace_limit && nnop__dnn_cfg_workspace(ctx, c->cfg, &ws) &&
           (size_t)ws > ctx->opts.workspace_limit;
}

/* Build candidate i (and time it when timed), keeping it when it is the first or the
 * fastest; 1 when it built and ran, 0 when it failed (counted, config dropped). */
static int try_cand(nnop_plan *p, nnop__dnn_step *st, search *s, int i, int timed)
{
    nnop_context *ctx = p->ctx;
    nnop__cand *c = &s->cands.c[i];
    cudnnBackendDescriptor_t plan = NULL;
    int64_t ws = 0;
    float us = 0.0f;
    if (config_over_limit(ctx, c))
        return drop(s, c, "over the workspace limit (its engine config says so; no plan built)");
    if (nnop__dnn_build_plan(ctx, c->cfg, &plan, &ws) != NNOP_OK)
        return drop(s, c, nnop__error_body(ctx));
    if ((ctx->opts.workspace_limit && (size_t)ws > ctx->opts.workspace_limit) ||
        (timed && nnop__dnn_time_plan(ctx, st, plan, ws, &us) != NNOP_OK)) {
        (void)cudnnBackendDestroyDescriptor(plan);
        return drop(s, c, "over the workspace limit or failed to run");
    }
    if (!st->plan || us < st->time_us)
        keep(st, s, i, plan, ws, us);
    else
        (void)cudnnBackendDestroyDescriptor(plan);
    return 1;
}

/* Try the engines of one pass (each engine's first config); returns how many plans were
 * kept/timed. Each candidate belongs to one pass (nnop__cand_pass): none is built twice. */
static int try_pass(nnop_plan *p, nnop__dnn_step *st, search *s, int pass, int built)
{
    nnop_context *ctx = p->ctx;
    int i, limit = nnop__cand_limit(&ctx->opts, ctx->opts.policy);
    for (i = 0; i < s->cands.n && built < limit; i++) {
        nnop__cand *c = &s->cands.c[i];
        if (!c->cfg || c->variant || refused(ctx, st, c, pass, s) ||
            nnop__cand_pass(ctx->opts.policy, c) != pass)
            continue;
        built += try_cand(p, st, s, i, limit > 1);
    }
    return built;
}

/* Autotuning: time the fastest engine's other knob choices (NNOP_AUTOTUNE_VARIANTS at most,
 * in the heuristics' order, under the same rules); returns how many were timed. */
static int try_variants(nnop_plan *p, nnop__dnn_step *st, search *s)
{
    nnop_context *ctx = p->ctx;
    int i, timed = 0;
    const int64_t engine = st->engine;
    for (i = 0; i < s->cands.n && timed < NNOP_AUTOTUNE_VARIANTS; i++) {
        nnop__cand *c = &s->cands.c[i];
        if (!c->cfg || !c->variant || c->engine != engine ||
            nnop__cand_refused(ctx, st, c) != NNOP_CAND_OK ||
            nnop__cand_pass(ctx->opts.policy, c) < 0)
            continue;
        timed += try_cand(p, st, s, i, 1);
    }
    return timed;
}

static int cache_usable(const nnop_context *ctx)
{
    return ctx->plan_cache && ctx->cuda->cache_ok;
}

/* Heuristics, then the passes; times go to the plan cache's counters. */
static void search_engines(nnop_plan *p, nnop__dnn_step *st, search *s)
{
    nnop_context *ctx = p->ctx;
    uint64_t t0 = nnop__monotonic_ns();
    int built;
    nnop__cands_collect(ctx, st, autotuning(ctx), &s->cands);
    if (ctx->plan_cache)
        nnop__cache_add_time(ctx->plan_cache, NNOP_CACHE_T_HEURISTICS, nnop__monotonic_ns() - t0);
    t0 = nnop__monotonic_ns();
    built = try_pass(p, st, s, 0, 0);
    if (!built || (autotuning(ctx) && built < NNOP_AUTOTUNE_TOP_K))
        built = try_pass(p, st, s, 1, built);
    if (autotuning(ctx) && st->plan)
        built += try_variants(p, st, s);
    st->tuned = autotuning(ctx) && built > 1;
    st->n_timed = st->tuned ? built : 0;
    if (ctx->plan_cache)
        nnop__cache_add_time(ctx->plan_cache,
                             autotuning(ctx) ? NNOP_CACHE_T_AUTOTUNE : NNOP_CACHE_T_FINALIZE,
                             nnop__monotonic_ns() - t0);
    nnop__cands_free(&s->cands);
}

/* An earlier step of this plan with the same fingerprint (same lowered graph, uids
 * included), or NULL. */
static nnop__dnn_step *find_twin(const struct nnop__cuda_plan *cp, const nnop__fp *fp)
{
    int32_t i;
    for (i = 0; i < cp->n_memo; i++)
        if (cp->memo_fp[i].lo == fp->lo && cp->memo_fp[i].hi == fp->hi)
            return cp->memo_step[i];
    return NULL;
}

static void share_plan(nnop__dnn_step *st, const nnop__dnn_step *twin)
{
    st->plan = twin->plan;
    st->plan_shared = 1;
    st->cached = twin->cached;
    st->engine = twin->engine;
    st->rtc = twin->rtc;
    st->workspace = twin->workspace;
    st->tuned = twin->tuned;
    st->n_timed = twin->n_timed;
    st->time_us = twin->time_us;
}

/* Remember st's choice for identical later steps (best effort: a full memo only costs time). */
static void remember(struct nnop__cuda_plan *cp, nnop__dnn_step *st, const nnop__fp *fp)
{
    if (cp->n_memo == cp->cap_memo) {
        int32_t cap = cp->cap_memo ? 2 * cp->cap_memo : 32;
        nnop__fp *f = (nnop__fp *)realloc(cp->memo_fp, (size_t)cap * sizeof *f);
        nnop__dnn_step **d;
        if (!f)
            return;
        cp->memo_fp = f;
        d = (nnop__dnn_step **)realloc(cp->memo_step, (size_t)cap * sizeof *d);
        if (!d)
            return;
        cp->memo_step = d;
        cp->cap_memo = cap;
    }
    cp->memo_fp[cp->n_memo] = *fp;
    cp->memo_step[cp->n_memo++] = st;
}

/* The start of the no-engine message's note where the loaded cuDNN has no precompiled
 * engines (a runtime-compiled-only installation): "" when it has them. */
static const char *precompiled_note(const nnop_context *ctx)
{
    if (!nnop__cudnn_precompiled_missing()[0])
        return "";
    return ctx->opts.policy == NNOP_POLICY_PRECOMPILED_ONLY
                   ? " (the precompiled-only policy needs cuDNN's precompiled engines, and the "
                     "loaded cuDNN has none: no "
                   : " (the loaded cuDNN has no precompiled engines: no ";
}

/* Heuristics (or the plan cache) for a step with no twin earlier in the plan. */
static nnop_status select_fresh(nnop_plan *p, nnop__dnn_step *st, const nnop__fp *fp, char *why,
                                size_t len)
{
    nnop_context *ctx = p->ctx;
    search *s;
    nnop_status r;
    int no_engine = 0, cache = cache_usable(ctx) && !st->scalar_io; /* lower.h says why */
    if (cache && nnop__dnn_from_cache(p, st, fp, &no_engine) == NNOP_OK) {
        nnop__clear_error(ctx);
        return NNOP_OK;
    }
    if (no_engine) {
        snprintf(why, len, "no engine under this policy (a search remembered by the plan cache)");
        return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "%s", why);
    }
    r = nnop__dnn_graph(ctx, st); /* a graph cuDNN refuses: the caller splits the chain */
    if (r != NNOP_OK) {
        nnop__copy_text(why, len, nnop__error_body(ctx));
        return r;
    }
    s = (search *)nnop__calloc(1, sizeof *s);
    if (!s)
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "engine selection: out of memory");
    search_engines(p, st, s);
    if (st->plan) {
        nnop__free(s);
        if (ctx->plan_cache)
            nnop__cache_count(ctx->plan_cache, NNOP_CACHE_EV_PLAN_BUILT);
        if (cache)
            nnop__dnn_to_cache(ctx, st, fp);
        nnop__clear_error(ctx);
        return NNOP_OK;
    }
    snprintf(why, len,
             "no engine%s%s%s: heuristics A/B/FALLBACK offered %d/%d/%d engines, %d refused by "
             "policy, %d engine-0 fallbacks refused for a fused graph, %d runtime-compiled "
             "refused (%s), %d failed%s%s",
             precompiled_note(ctx), nnop__cudnn_precompiled_missing(),
             precompiled_note(ctx)[0] ? ")" : "", s->cands.per_mode[0], s->cands.per_mode[1],
             s->cands.per_mode[2], s->skipped_policy, s->skipped_eng0, s->skipped_shape,
             rtc_rule_text(st->rtc_unsafe), s->failed, s->failed ? "; last: " : "", s->last_fail);
    if (cache && s->failed == 0) /* refused outright, not a failure to build or run */
        nnop__dnn_no_engine_to_cache(ctx, fp);
    nnop__free(s);
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "%s", why);
}

static nnop_status select_engine(nnop_plan *p, nnop__dnn_step *st, char *why, size_t len)
{
    nnop_context *ctx = p->ctx;
    nnop__fp fp = nnop__dnn_fingerprint(ctx, st);
    nnop__dnn_step *twin = find_twin(p->cuda, &fp);
    nnop_status status;
    if (twin) {
        share_plan(st, twin);
        return NNOP_OK;
    }
    status = select_fresh(p, st, &fp, why, len);
    if (status == NNOP_OK)
        remember(p->cuda, st, &fp);
    return status;
}

void nnop__engine_reshare(nnop_plan *p, nnop__dnn_step *d)
{
    nnop__fp fp;
    nnop__dnn_step *twin;
    if (!d || !d->plan_shared)
        return;
    fp = nnop__dnn_fingerprint(p->ctx, d);
    twin = find_twin(p->cuda, &fp);
    if (twin)
        share_plan(d, twin);
}

nnop_status nnop__engine_select(nnop_plan *p, nnop__dnn_step *st, char *why, size_t len)
{
    uint64_t t0 = nnop__monotonic_ns();
    nnop_status status = select_engine(p, st, why, len);
    p->cuda->prof.select_ns += nnop__monotonic_ns() - t0;
    return status;
}
