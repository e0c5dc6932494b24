/* amax.c: the calibration methods: their options, and a tensor's clip magnitude from its
 * histogram of |x| (every method but the maximum, which needs no histogram). Bins are equal over
 * [0, top]; an amax is always a bin's upper edge. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"

/* Levels a candidate clip is quantized to: int8's 128 magnitudes of one sign. */
enum { LEVELS = 128 };

static uint64_t total_of(const uint64_t *h, int32_t n)
{
    uint64_t s = 0;
    int32_t i;
    for (i = 0; i < n; i++)
        s += h[i];
    return s;
}

/* The upper edge of the first bin where the counts so far reach pct percent of all. */
static float percentile_amax(const uint64_t *h, int32_t bins, float top, double pct)
{
    double want = pct / 100.0 * (double)total_of(h, bins);
    uint64_t run = 0;
    int32_t i;
    for (i = 0; i < bins; i++) {
        run += h[i];
        if ((double)run >= want)
            return (float)((double)top * (i + 1) / bins);
    }
    return top;
}

/* KL(P || Q) for the clip at bin edge i: P is h[0..i) with the counts beyond i added to its
 * last bin (the clipped values land there); Q spreads each of LEVELS groups of h[0..i) evenly
 * over the group's bins that are not empty (what quantizing to LEVELS levels keeps). A bin of
 * P that Q leaves empty makes the divergence infinite (HUGE_VAL). p and q hold i doubles. */
static double divergence_at(const uint64_t *h, int32_t bins, int32_t i, double *p, double *q)
{
    int32_t width = i / LEVELS, j, k;
    double psum = 0.0, qsum = 0.0, kl = 0.0;
    for (k = 0; k < i; k++)
        p[k] = (double)h[k];
    for (k = i; k < bins; k++)
        p[i - 1] += (double)h[k];
    for (j = 0; j < LEVELS; j++) {
        int32_t lo = j * width, hi = j == LEVELS - 1 ? i : lo + width, used = 0;
        double sum = 0.0;
        for (k = lo; k < hi; k++) {
            sum += (double)h[k];
            used += h[k] != 0;
        }
        for (k = lo; k < hi; k++)
            q[k] = h[k] != 0 ? sum / used : 0.0;
    }
    for (k = 0; k < i; k++) {
        psum += p[k];
        qsum += q[k];
    }
    if (psum <= 0.0 || qsum <= 0.0)
        return HUGE_VAL;
    for (k = 0; k < i; k++) {
        double pk = p[k] / psum, qk = q[k] / qsum;
        if (pk <= 0.0)
            continue;
        if (qk <= 0.0)
            return HUGE_VAL;
        kl += pk * log(pk / qk);
    }
    return kl;
}

/* The clip of least divergence among bin edges LEVELS .. bins (about 2,048 candidates: every
 * edge up to 2,048 bins, then evenly spaced). The first of equal divergences wins: the
 * tighter clip, finer steps. */
static float entropy_amax(const uint64_t *h, int32_t bins, float top)
{
    double *p = (double *)nnop__calloc((size_t)bins, sizeof *p);
    double *q = (double *)nnop__calloc((size_t)bins, sizeof *q);
    int32_t stride = bins > 2048 ? bins / 2048 : 1, i, best = bins;
    double best_kl = HUGE_VAL;
    if (!p || !q) { /* no room to search: the maximum is the safe clip */
        nnop__free(p);
        nnop__free(q);
        return top;
    }
    for (i = LEVELS; i <= bins; i += stride) {
        double kl = divergence_at(h, bins, i, p, q);
        if (kl < best_kl) {
            best_kl = kl;
            best = i;
        }
    }
    nnop__free(p);
    nnop__free(q);
    return (float)((double)top * best / bins);
}

void nnop_calib_options_init(nnop_calib_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->method = NNOP_CALIB_PERCENTILE;
    o->percentile = 99.99;
    o->bins = 2048;
}

void nnop__calib_options_check(const nnop_calib_options *o, char *why, size_t len)
{
    why[0] = '\0';
    if (nnop__first_nonzero(o->reserved, sizeof o->reserved / sizeof o->reserved[0]) >= 0)
        snprintf(why, len, "opts->reserved is not all zero (start from nnop_calib_options_init)");
    else if (!nnop__calib_method_name(o->method))
        snprintf(why, len, "opts->method %d is not an nnop_calib_method", (int)o->method);
    else if (!(o->percentile > 0.0 && o->percentile <= 100.0))
        snprintf(why, len, "opts->percentile %.17g is not in (0, 100]", o->percentile);
    else if (o->bins < NNOP__CALIB_MIN_BINS || o->bins > NNOP__CALIB_MAX_BINS)
        snprintf(why, len, "opts->bins %d is not in [%d, %d]", (int)o->bins, NNOP__CALIB_MIN_BINS,
                 NNOP__CALIB_MAX_BINS);
}

float nnop__calib_amax(const nnop_calib_options *o, const uint64_t *counts, float top)
{
    if (top <= 0.0f || total_of(counts, o->bins) == 0)
        return top;
    if (o->method == NNOP_CALIB_PERCENTILE)
        return percentile_amax(counts, o->bins, top, o->percentile);
    if (o->method == NNOP_CALIB_ENTROPY)
        return entropy_amax(counts, o->bins, top);
    return top;
}

const char *nnop__calib_method_name(nnop_calib_method m)
{
    switch (m) {
    case NNOP_CALIB_MAX:
        return "max";
    case NNOP_CALIB_PERCENTILE:
        return "percentile";
    case NNOP_CALIB_ENTROPY:
        return "entropy";
    }
    return NULL;
}

int nnop__calib_method_parse(const char *name)
{
    int m;
    for (m = NNOP_CALIB_MAX; m <= NNOP_CALIB_ENTROPY; m++)
        if (strcmp(name, nnop__calib_method_name((nnop_calib_method)m)) == 0)
            return m;
    return -1;
}
