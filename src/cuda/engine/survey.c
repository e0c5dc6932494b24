/* survey.c: nnop_plan_engines for one cuDNN step: every engine the heuristics offer, built,
 * run and timed on scratch memory with its first config (the selection builds one, or times
 * the top 6 when autotuning, then other knob choices of the fastest, which no row lists), and
 * which engine each nnop_engine_policy would take. The picks replay the selection's passes
 * (engine.c) over the survey's own results, so they say what the policy takes given these build
 * results and times, not what a later run's noise would pick. */
#include <stdio.h>
#include <string.h>

#include "cuda/engine/engine.h"
#include "platform/platform.h"

/* One candidate's survey result beside what the policy replay needs. */
typedef struct row {
    nnop__cand_rule rule;
    int usable; /* built, within the workspace limit, and ran */
    float us;
} row;

static const char *rule_text(nnop__cand_rule r)
{
    switch (r) {
    case NNOP_CAND_ENGINE0:
        return "no policy: engine 0 is refused for a fused conv graph";
    case NNOP_CAND_SHAPE:
        return "no policy: runtime-compiled engines are refused for this shape (nnop_plan_describe "
               "says why)";
    case NNOP_CAND_OPTIONS:
        return "no policy: the context's deterministic or allow_tf32 option excludes it";
    case NNOP_CAND_OK:
        break;
    }
    return "";
}

/* Build, run and time candidate c into info (status, times, workspace, note). */
static void measure(nnop_context *ctx, nnop__dnn_step *s, const nnop__cand *c,
                    nnop_engine_info *info, row *r)
{
    cudnnBackendDescriptor_t plan = NULL;
    int64_t ws = 0;
    float us = 0.0f;
    uint64_t t0 = nnop__monotonic_ns();
    nnop_status st = nnop__dnn_build_plan(ctx, c->cfg, &plan, &ws);
    info->build_ms = (double)(nnop__monotonic_ns() - t0) / 1e6;
    if (st == NNOP_OK) {
        info->workspace = (size_t)ws;
        st = nnop__dnn_time_plan(ctx, s, plan, ws, &us);
    }
    info->status = st;
    if (st == NNOP_OK) {
        info->gpu_us = us;
        r->us = us;
        r->usable = !(ctx->opts.workspace_limit && (size_t)ws > ctx->opts.workspace_limit);
        if (!r->usable)
            snprintf(info->note, sizeof info->note, "over the context's workspace limit");
    } else {
        nnop__copy_text(info->note, sizeof info->note, nnop__error_body(ctx));
        nnop__clear_error(ctx);
        (void)cudaGetLastError(); /* a failed execute leaves nothing sticky for later rows */
    }
    if (plan)
        (void)cudnnBackendDestroyDescriptor(plan);
}

/* The index the selection would keep under policy pol (engine.c's try_pass twice), or -1. */
static int policy_pick(const nnop_context *ctx, const nnop__cands *cs, const row *r,
                       nnop_engine_policy pol)
{
    int limit = nnop__cand_limit(&ctx->opts, pol);
    int pass, i, built = 0, best = -1;
    for (pass = 0; pass < 2; pass++) {
        if (pass == 1 && !(built == 0 || (limit > 1 && built < limit)))
            break;
        for (i = 0; i < cs->n && built < limit; i++) {
            if (r[i].rule != NNOP_CAND_OK || nnop__cand_pass(pol, &cs->c[i]) != pass ||
                !r[i].usable)
                continue;
            if (best < 0 || (limit > 1 && r[i].us < r[best].us))
                best = i;
            built++;
        }
    }
    return best;
}

nnop_status nnop__engine_survey(nnop_plan *p, int32_t part, nnop__dnn_step *s,
                                nnop_engine_info *out, int cap, int *n)
{
    nnop_context *ctx = p->ctx;
    nnop__cands *cs = (nnop__cands *)nnop__calloc(1, sizeof *cs);
    row r[NNOP_MAX_CANDS];
    nnop_engine_info info;
    nnop_status st;
    int i, k, pick[3];
    *n = 0;
    if (!cs)
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_plan_engines: out of memory");
    st = nnop__dnn_graph(ctx, s); /* absent when the step's plan came from the plan cache */
    if (st == NNOP_OK)
        nnop__cands_collect(ctx, s, 0, cs);
    memset(r, 0, sizeof r);
    for (i = 0; st == NNOP_OK && i < cs->n; i++) {
        memset(&info, 0, sizeof info);
        r[i].rule = nnop__cand_refused(ctx, s, &cs->c[i]);
        /* never run what a rule excludes for the shape: issue 10's engines of that class
         * wrote out of bounds, which ends the CUDA context */
        if (r[i].rule == NNOP_CAND_OK || r[i].rule == NNOP_CAND_OPTIONS)
            measure(ctx, s, &cs->c[i], &info, &r[i]);
        else
            info.status = NNOP_ERR_UNSUPPORTED;
        if (r[i].rule != NNOP_CAND_OK)
            nnop__copy_text(info.note, sizeof info.note, rule_text(r[i].rule));
        if (i < cap) {
            info.partition = (int)part;
            info.rank = i;
            info.engine = (long long)cs->c[i].engine;
            info.heuristic = cs->c[i].mode;
            info.runtime_compiled = cs->c[i].rtc;
            info.nondeterministic = cs->c[i].nondet;
            info.tensor_core = cs->c[i].tf32;
            if (s->plan && cs->c[i].engine == s->engine)
                info.policies |= NNOP_ENGINE_CHOSEN;
            out[i] = info;
        }
    }
    for (k = 0; k < 3; k++)
        pick[k] = policy_pick(ctx, cs, r, (nnop_engine_policy)k);
    for (k = 0; k < 3; k++)
        if (pick[k] >= 0 && pick[k] < cap)
            out[pick[k]].policies |= 1u << k;
    *n = st == NNOP_OK ? cs->n : 0;
    nnop__cands_free(cs);
    nnop__free(cs);
    return st;
}
