/* compare.c: every output of a run against a reference, with the graph dtype's tolerance. */
#include <math.h>
#include <stdlib.h>

#include "difftest.h"

/* "output 1 (node 7 conv 2x13x3x3): rel_l2 ... at [n,c,h,w] got ... want ..." */
static void describe(const dt_graph *g, int i, const dts_diff *d, double got, double want,
                     char *msg, size_t len)
{
    const dt_node *v = &g->node[g->out[i]];
    int64_t at = d->worst, idx[4] = {0, 0, 0, 0};
    int k;
    for (k = v->ndim - 1; k >= 0; k--) {
        idx[k] = at % v->dims[k];
        at /= v->dims[k];
    }
    snprintf(msg, len,
             "output %d (node %d %s, %lldx%lldx%lldx%lld): rel_l2 %.3g, max_rel %.3g, %lld "
             "NaN/Inf mismatches (tol %.3g); worst at [%lld,%lld,%lld,%lld]: got %.8g want %.8g",
             i, g->out[i], dt_kind_name(v->kind), (long long)v->dims[0],
             (long long)(v->ndim > 1 ? v->dims[1] : 1), (long long)(v->ndim > 2 ? v->dims[2] : 1),
             (long long)(v->ndim > 3 ? v->dims[3] : 1), d->rel_l2, d->max_rel,
             (long long)d->nonfinite, dts_tolerance(g->dtype), (long long)idx[0], (long long)idx[1],
             (long long)idx[2], (long long)idx[3], got, want);
}

/* The rms of the terms output i's values sum (dt_oracle_terms), 0 when unknown. */
static double term_scale(const dt_graph *g, int i)
{
    double *terms[DT_MAX_OUT] = {0}, s2 = 0.0;
    int64_t j, n = dt_elems(&g->node[g->out[i]]);
    int k;
    if (dt_oracle_terms(g, terms) == 0)
        for (j = 0; j < n; j++)
            s2 += terms[i][j] * terms[i][j];
    for (k = 0; k < DT_MAX_OUT; k++)
        free(terms[k]);
    return n > 0 ? sqrt(s2 / (double)n) : 0.0;
}

static long ill_conditioned;

long dt_ill_conditioned_count(void)
{
    return ill_conditioned;
}

/* Perturbed float64 runs the judge below takes the largest move from. Three were too few: in
 * case 0xb1c506f34228a82d (bf16, a group norm of four values within three ulps) they moved
 * one element by 0.38 where one-ulp flips of the norm's input move it by 0.94 and eight runs
 * find moves of 3.4 (difftest.tolerance). */
#define JUDGE_RUNS 8

/* A judge for ill-conditioned graphs (a norm of nearly constant values, a softmax of large
 * 16-bit logits): output i's difference counts only past twice the largest distance the
 * output moved in JUDGE_RUNS float64 runs where every intermediate result moved by up to two
 * ulps of the dtype. Rounding at another place (a fused chain keeps float32) moves it as
 * much. */
static int within_conditioning(const dt_graph *g, int i, const float *got, const double *want)
{
    double *base[DT_MAX_OUT] = {0}, *pert[DT_MAX_OUT] = {0};
    int64_t j, n = dt_elems(&g->node[g->out[i]]);
    float *adj = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    double *moved = (double *)calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    int k, ok = adj && moved && dt_oracle(g, base) == 0;
    dts_diff d;
    for (k = 1; ok && k <= JUDGE_RUNS; k++) {
        ok = dt_oracle_perturbed(g, 0x9e3779b97f4a7c15ull * (uint64_t)k, pert) == 0;
        for (j = 0; ok && j < n; j++)
            moved[j] = fmax(moved[j], fabs(pert[i][j] - base[i][j]));
        for (j = 0; j < DT_MAX_OUT; j++)
            free(pert[j]), pert[j] = NULL;
    }
    for (j = 0; ok && j < n; j++) { /* the difference less the allowance, toward want */
        double e = (double)got[j] - want[j], a = fabs(e) - 2.0 * moved[j];
        adj[j] = isfinite(e) ? (float)(want[j] + (a > 0.0 ? (e > 0.0 ? a : -a) : 0.0)) : got[j];
    }
    if (ok) {
        dts_compare(adj, want, n, &d);
        ok = dts_diff_ok(&d, dts_tolerance(g->dtype));
    }
    for (k = 0; k < DT_MAX_OUT; k++)
        free(base[k]);
    free(adj);
    free(moved);
    return ok;
}

int dt_agree(const dt_graph *g, float *const *got, double *const *want, char *msg, size_t len)
{
    int i;
    for (i = 0; i < g->n_out; i++) {
        dts_diff d;
        int64_t n = dt_elems(&g->node[g->out[i]]);
        dts_compare(got[i], want[i], n, &d);
        if (!dts_diff_ok(&d, dts_tolerance(g->dtype)) && d.nonfinite == 0) {
            /* a second opinion for a sum that cancelled: the difference against the size of
             * the terms it summed (a reduction's output rounds like its terms) */
            double floor = term_scale(g, i);
            dts_diff t;
            dts_compare_floor(got[i], want[i], n, floor > 0.25 ? floor : 0.25, &t);
            if (dts_diff_ok(&t, dts_tolerance(g->dtype)))
                continue;
            if (within_conditioning(g, i, got[i], want[i])) {
                ill_conditioned++;
                continue;
            }
        }
        if (!dts_diff_ok(&d, dts_tolerance(g->dtype))) {
            describe(g, i, &d, d.worst >= 0 ? got[i][d.worst] : 0.0,
                     d.worst >= 0 ? want[i][d.worst] : 0.0, msg, len);
            return 0;
        }
    }
    return 1;
}

/* the same against a float reference (another run) */
int dt_agree_f(const dt_graph *g, float *const *got, float *const *want, char *msg, size_t len)
{
    double *w[DT_MAX_OUT] = {0};
    int i, ok = 1;
    for (i = 0; i < g->n_out; i++) {
        int64_t j, n = dt_elems(&g->node[g->out[i]]);
        w[i] = (double *)malloc((size_t)n * sizeof(double));
        if (!w[i]) {
            snprintf(msg, len, "out of host memory");
            ok = 0;
            break;
        }
        for (j = 0; j < n; j++)
            w[i][j] = want[i][j];
    }
    if (ok)
        ok = dt_agree(g, got, w, msg, len);
    for (i = 0; i < g->n_out; i++)
        free(w[i]);
    return ok;
}

/* dt_agree on the part of each difference beyond its allowance (quant_oracle.c's rule): got
 * moved toward want by up to allow. *used: 1 when got failed dt_agree without the allowance. */
int dt_agree_within(const dt_graph *g, float *const *got, double *const *want, double *const *allow,
                    char *msg, size_t len, int *used)
{
    float *adj[DT_MAX_OUT] = {0};
    int i, ok = 1;
    *used = 0;
    if (dt_agree(g, got, want, msg, len))
        return 1;
    for (i = 0; ok && i < g->n_out; i++) {
        int64_t j, n = dt_elems(&g->node[g->out[i]]);
        adj[i] = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
        ok = adj[i] != NULL;
        for (j = 0; ok && j < n; j++) {
            double e = (double)got[i][j] - want[i][j], a = fabs(e) - allow[i][j];
            adj[i][j] = isfinite(e) ? (float)(want[i][j] + (a > 0.0 ? (e > 0.0 ? a : -a) : 0.0))
                                    : got[i][j];
        }
    }
    if (ok && dt_agree(g, adj, want, msg, len))
        *used = 1;
    else if (ok) { /* the message about got itself */
        dt_agree(g, got, want, msg, len);
        ok = 0;
    } else
        snprintf(msg, len, "out of host memory");
    for (i = 0; i < DT_MAX_OUT; i++)
        free(adj[i]);
    return ok;
}
