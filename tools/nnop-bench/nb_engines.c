/* nb_engines.c: nnop-bench --engines: every cuDNN engine of a compiled plan
 * (nnop_plan_engines) as report rows of kind "engine" and, unless quiet, a table of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb.h"

static const char *const policy_names[3] = {"prefer-precompiled", "precompiled-only", "fastest"};

/* "prefer-precompiled,fastest,chosen" or "-" */
static void policy_list(unsigned bits, char *buf, size_t len)
{
    size_t used = 0;
    int k;
    buf[0] = '\0';
    for (k = 0; k < 3; k++)
        if (bits & (1u << k))
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
                                     used ? "," : "", policy_names[k]);
    if (bits & NNOP_ENGINE_CHOSEN)
        used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%sthis plan",
                                 used ? "," : "");
    if (!used)
        snprintf(buf, len, "-");
}

static void add_row(nb_report *rep, const nb_result *base, const nnop_engine_info *e)
{
    nb_result *r = nb_report_add(rep);
    char pol[64];
    /* the problem's identity from base, none of its measurements: this engine's are its own */
    snprintf(r->desc, sizeof r->desc, "%s", base->desc);
    snprintf(r->backend, sizeof r->backend, "%s", base->backend);
    snprintf(r->device, sizeof r->device, "%s", base->device);
    r->device_id = base->device_id;
    r->batch = base->batch;
    r->flops = base->flops;
    r->bytes = base->bytes;
    snprintf(r->kind, sizeof r->kind, "engine");
    snprintf(r->name, sizeof r->name, "p%d eng%lld", e->partition, e->engine);
    policy_list(e->policies, pol, sizeof pol);
    snprintf(r->policy, sizeof r->policy, "%s", pol);
    r->compile_ms = e->build_ms;
    r->gpu_us = e->status == NNOP_OK ? e->gpu_us : -1.0;
    snprintf(r->status, sizeof r->status, "%s",
             e->status == NNOP_OK ? "ok" : nnop_status_string(e->status));
    snprintf(r->note, sizeof r->note,
             "partition %d, rank %d, heuristic %s, %s%s%s, workspace %zu B, taken by: %s%s%s",
             e->partition, e->rank,
             e->heuristic == 0   ? "A"
             : e->heuristic == 1 ? "B"
                                 : "FALLBACK",
             e->runtime_compiled ? "runtime-compiled" : "precompiled",
             e->nondeterministic ? ", nondeterministic" : "",
             e->tensor_core ? ", tensor-core numerics" : "", e->workspace, pol,
             e->note[0] ? "; " : "", e->note);
    nb_result_derive(r, rep);
}

static void print_rows(const nnop_engine_info *e, int n, FILE *f)
{
    int i;
    fprintf(f, "  %4s %4s %6s %-5s %-4s %10s %10s %12s  %s\n", "part", "rank", "engine", "heur",
            "kind", "build_ms", "gpu_us", "workspace_B", "taken by / note");
    for (i = 0; i < n; i++) {
        char pol[64], us[24];
        policy_list(e[i].policies, pol, sizeof pol);
        if (e[i].status == NNOP_OK)
            snprintf(us, sizeof us, "%.2f", e[i].gpu_us);
        else
            snprintf(us, sizeof us, "-");
        fprintf(f, "  %4d %4d %6lld %-5s %-4s %10.1f %10s %12zu  %s%s%s%s%s\n", e[i].partition,
                e[i].rank, e[i].engine,
                e[i].heuristic == 0   ? "A"
                : e[i].heuristic == 1 ? "B"
                                      : "FB",
                e[i].runtime_compiled ? "rtc" : "pre", e[i].build_ms, us, e[i].workspace, pol,
                e[i].note[0] ? " | " : "", e[i].note, e[i].status == NNOP_OK ? "" : " | ",
                e[i].status == NNOP_OK ? "" : nnop_status_string(e[i].status));
    }
}

/* Rows per partition to make room for: cuDNN's heuristics offer a few dozen engines at most
 * (the library keeps 96 a step). */
#define ROWS_PER_PARTITION 96

int nb_engines_survey(nb_report *rep, const nb_result *base_in, nnop_plan *plan, int quiet,
                      char *err, size_t errlen)
{
    nb_result base = *base_in; /* base_in may live in rep, which adding rows moves */
    int parts = nnop_plan_num_partitions(plan), cap, got = 0, i;
    nnop_engine_info *e;
    nnop_status st;
    cap = ROWS_PER_PARTITION * (parts > 0 ? parts : 1);
    e = (nnop_engine_info *)calloc((size_t)cap, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    st = nnop_plan_engines(plan, e, cap, &got); /* builds and times every engine: slow */
    if (st != NNOP_OK) {
        snprintf(err, errlen, "nnop_plan_engines: %s", nnop_status_string(st));
        free(e);
        return -1;
    }
    if (got > cap)
        got = cap;
    for (i = 0; i < got; i++)
        add_row(rep, &base, &e[i]);
    if (!quiet) {
        printf("== every cuDNN engine of %s: %d\n", base.desc, got);
        if (got)
            print_rows(e, got, stdout);
        else
            printf("  (no partition runs on cuDNN: own kernels, cuBLASLt or the CPU backend)\n");
    }
    free(e);
    return 0;
}
