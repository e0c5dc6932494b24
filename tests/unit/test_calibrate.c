/* test_calibrate.c: nnop_calibrate's methods on distributions whose answer is known (issue 45),
 * the table's names (unique even against a graph's own "x@2"), its file (a round trip to the
 * same bits, also under comma locales where installed; every malformed file refused
 * naming its line), and the arguments refused. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"
#include "../../src/platform/platform.h"

enum { N = 65536 }; /* values a sample batch: 1 x 1 x 256 x 256 */

static nnop_tensor_desc batch_desc(void)
{
    return nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 1, 256, 256);
}

/* x -> relu (named "r") -> tanh: three tensors to calibrate. */
static nnop_graph *relu_tanh_graph(nnop_context *ctx)
{
    nnop_tensor_desc d = batch_desc();
    nnop_graph *g = NULL;
    nnop_value r;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_graph_name_next(g, "r"), NNOP_OK);
    r = nnop_act(g, nnop_input(g, "x", &d), NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, nnop_act(g, r, NNOP_ACT_TANH, 0.0f), "y"), NNOP_OK);
    return g;
}

/* One input a batch: x[b]. */
static nnop_calib_table *calibrate(nnop_graph *g, const nnop_calib_options *o, float *const *x,
                                   int32_t n_batches)
{
    const void *in[4][1];
    const void *const *batches[4];
    nnop_calib_table *t = NULL;
    int32_t b;
    for (b = 0; b < n_batches; b++) {
        in[b][0] = x[b];
        batches[b] = in[b];
    }
    assert_int_equal(nnop_calibrate(g, o, batches, n_batches, &t), NNOP_OK);
    assert_non_null(t);
    return t;
}

static float amax_of(const nnop_calib_table *t, const char *name)
{
    float a = -1.0f;
    assert_int_equal(nnop_calib_table_find(t, name, &a), NNOP_OK);
    return a;
}

static float max_abs(const float *x, int64_t n, int positive_only)
{
    float m = 0.0f;
    int64_t i;
    for (i = 0; i < n; i++) {
        float a = positive_only ? x[i] : fabsf(x[i]);
        m = a > m ? a : m;
    }
    return m;
}

/* |x| uniform over (0, 1): x_i = +-(i + 0.5) / N, signs alternating. */
static void fill_uniform_magnitudes(float *x)
{
    int i;
    for (i = 0; i < N; i++)
        x[i] = (float)((i + 0.5) / N) * (i % 2 ? -1.0f : 1.0f);
}

/* Standard normal samples (Box-Muller on the seeded uniform), and `outliers` values of 40 in
 * place of the first ones. */
static void fill_normal(float *x, uint64_t seed, int outliers)
{
    nnop_test_rng r;
    int i;
    nnop_test_rng_seed(&r, seed);
    for (i = 0; i < N; i += 2) {
        double u = 1.0 - nnop_test_uniform(&r, 0.0f, 1.0f), v = nnop_test_uniform(&r, 0.0f, 1.0f);
        double m = sqrt(-2.0 * log(u));
        x[i] = (float)(m * cos(6.283185307179586 * v));
        x[i + 1] = (float)(m * sin(6.283185307179586 * v));
    }
    for (i = 0; i < outliers; i++)
        x[i] = i % 2 ? -40.0f : 40.0f;
}

static float xa[N], xb[N], xc[N];

/* Max: the largest |x| over both batches, exactly; relu's is the largest x. Entries are the
 * input and the two node results, named as given or as nnop names them. */
static void test_max_is_exact(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = relu_tanh_graph(ctx);
    nnop_calib_options o;
    float *x[2] = {xa, xb};
    nnop_calib_table *t;
    const char *name = NULL;
    float a = 0.0f;
    nnop_test_fill_f32(xa, N, 41, -3.0f, 2.0f);
    nnop_test_fill_f32(xb, N, 42, -1.0f, 2.5f);
    nnop_calib_options_init(&o);
    o.method = NNOP_CALIB_MAX;
    t = calibrate(g, &o, x, 2);
    assert_int_equal(nnop_calib_table_count(t), 3);
    assert_int_equal(nnop_calib_table_entry(t, 0, &name, &a), NNOP_OK);
    assert_string_equal(name, "x");
    assert_true(a == fmaxf(max_abs(xa, N, 0), max_abs(xb, N, 0)));
    assert_int_equal(nnop_calib_table_entry(t, 1, &name, &a), NNOP_OK);
    assert_string_equal(name, "r");
    assert_true(a == fmaxf(max_abs(xa, N, 1), max_abs(xb, N, 1)));
    assert_int_equal(nnop_calib_table_entry(t, 2, &name, &a), NNOP_OK);
    assert_true(name[0] != '\0' && strcmp(name, "r") != 0);
    assert_true(a == amax_of(t, name));
    assert_true(a > 0.98f && a < 0.9868f); /* tanh(2.5) = 0.98661 */
    assert_int_equal(nnop_calib_table_entry(t, 3, &name, &a), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_calib_table_find(t, "nothing", &a), NNOP_ERR_INVALID_ARGUMENT);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

/* Percentile: on |x| uniform over (0, 1) the p-th percentile is p / 100, to a bin (1/2048);
 * 100 is the maximum. On a standard normal, 99.73 percent of |x| lie under 3. */
static void test_percentile_known_quantiles(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = relu_tanh_graph(ctx);
    nnop_calib_options o;
    float *x[1] = {xa};
    nnop_calib_table *t;
    float a;
    fill_uniform_magnitudes(xa);
    nnop_calib_options_init(&o);
    o.method = NNOP_CALIB_PERCENTILE;
    o.percentile = 99.0;
    t = calibrate(g, &o, x, 1);
    a = amax_of(t, "x");
    assert_true(a >= 0.99f && a <= 0.99f + 1.0f / 2048 + 1e-6f);
    nnop_calib_table_destroy(t);
    o.percentile = 100.0;
    t = calibrate(g, &o, x, 1);
    assert_true(amax_of(t, "x") == max_abs(xa, N, 0));
    nnop_calib_table_destroy(t);
    fill_normal(xa, 7, 0);
    o.percentile = 99.73;
    t = calibrate(g, &o, x, 1);
    a = amax_of(t, "x");
    assert_true(a > 2.85f && a < 3.15f);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

/* Entropy: a uniform |x| is kept whole (any clip loses more than the levels gain); a normal
 * with a few outliers at 40 is clipped well below them, yet above the bulk (|x| < 2.5 holds
 * 98.8 percent of it; the clip is 3.26 here). */
static void test_entropy_clips_rare_outliers(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = relu_tanh_graph(ctx);
    nnop_calib_options o;
    float *x[1] = {xa};
    nnop_calib_table *t;
    float a;
    nnop_calib_options_init(&o);
    assert_int_equal(o.method, NNOP_CALIB_PERCENTILE);
    o.method = NNOP_CALIB_ENTROPY;
    fill_uniform_magnitudes(xa);
    t = calibrate(g, &o, x, 1);
    assert_true(amax_of(t, "x") >= 0.95f * max_abs(xa, N, 0));
    nnop_calib_table_destroy(t);
    fill_normal(xa, 8, 8);
    t = calibrate(g, &o, x, 1);
    a = amax_of(t, "x");
    printf("entropy amax of a normal with 8 outliers at 40: %g\n", (double)a);
    assert_true(a > 2.5f && a < 6.0f);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

/* A tensor zero in every batch has amax 0; names already taken get "@<value id>". */
static void test_zero_tensor_and_repeated_names(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc d = batch_desc();
    nnop_graph *g = NULL;
    nnop_calib_table *t;
    nnop_value x, z, r;
    float *xs[1] = {xa};
    const char *name = NULL;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    x = nnop_input(g, "x", &d);
    assert_int_equal(nnop_graph_name_next(g, "same"), NNOP_OK);
    z = nnop_clamp(g, x, 0.0f, 0.0f);
    assert_int_equal(nnop_graph_name_next(g, "same"), NNOP_OK);
    r = nnop_act(g, x, NNOP_ACT_RELU, 0.0f);
    assert_int_equal(nnop_output(g, nnop_add(g, z, r), "y"), NNOP_OK);
    nnop_test_fill_f32(xa, N, 43, -1.0f, 1.0f);
    t = calibrate(g, NULL, xs, 1);
    assert_int_equal(nnop_calib_table_count(t), 4);
    assert_true(amax_of(t, "same") == 0.0f);
    assert_int_equal(nnop_calib_table_entry(t, 2, &name, NULL), NNOP_OK);
    assert_non_null(strstr(name, "same@"));
    assert_true(amax_of(t, name) > 0.9f);
    assert_true(amax_of(t, "y") == amax_of(t, name));
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

static void temp_path(char *buf, size_t len, const char *what)
{
    snprintf(buf, len, "nnop_calib_test_%llu_%s.txt", (unsigned long long)nnop__process_id(), what);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

/* A graph may name a node as a taken name's suffixed form ("x@2" before the second "x", value
 * 2): the suffix is extended until the name is free, so the table saves and loads back. */
static void test_names_unique_against_own_suffixes(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_tensor_desc d = batch_desc();
    nnop_graph *g = NULL;
    nnop_calib_table *t, *back = NULL;
    nnop_value x, a, c;
    float *xs[1] = {xa};
    char path[128];
    int32_t i, k;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    x = nnop_input(g, "x", &d);
    assert_int_equal(nnop_graph_name_next(g, "x@2"), NNOP_OK);
    a = nnop_act(g, x, NNOP_ACT_RELU, 0.0f); /* value 1 */
    assert_int_equal(nnop_graph_name_next(g, "x"), NNOP_OK);
    c = nnop_clamp(g, x, -0.25f, 0.25f); /* value 2: "x" taken, "x@2" too */
    assert_int_equal(nnop_output(g, nnop_add(g, a, c), "y"), NNOP_OK);
    nnop_test_fill_f32(xa, N, 44, -1.0f, 1.0f);
    t = calibrate(g, NULL, xs, 1);
    for (i = 0; i < nnop_calib_table_count(t); i++)
        for (k = 0; k < i; k++) {
            const char *ni, *nk;
            assert_int_equal(nnop_calib_table_entry(t, i, &ni, NULL), NNOP_OK);
            assert_int_equal(nnop_calib_table_entry(t, k, &nk, NULL), NNOP_OK);
            if (strcmp(ni, nk) == 0)
                fail_msg("entries %d and %d are both named '%s'", (int)k, (int)i, ni);
        }
    assert_true(amax_of(t, "x@2") > 0.9f);     /* the relu's */
    assert_true(amax_of(t, "x@2.2") == 0.25f); /* the clamp's */
    temp_path(path, sizeof path, "suffixes");
    assert_int_equal(nnop_calib_table_save(ctx, t, path), NNOP_OK);
    assert_int_equal(nnop_calib_table_load(ctx, path, &back), NNOP_OK);
    assert_true(amax_of(back, "x@2.2") == 0.25f);
    assert_int_equal(remove(path), 0);
    nnop_calib_table_destroy(back);
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

/* Saved and loaded: the same names and the same amax bits. */
static void test_table_file_round_trip(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = relu_tanh_graph(ctx);
    float *x[3] = {xa, xb, xc};
    nnop_calib_table *t, *back = NULL;
    char path[128];
    int32_t i;
    nnop_test_fill_f32(xa, N, 51, -3.0f, 3.0f);
    nnop_test_fill_f32(xb, N, 52, -2.0f, 5.0f);
    fill_normal(xc, 53, 4);
    t = calibrate(g, NULL, x, 3);
    temp_path(path, sizeof path, "round_trip");
    assert_int_equal(nnop_calib_table_save(ctx, t, path), NNOP_OK);
    assert_int_equal(nnop_calib_table_save(ctx, t, path), NNOP_OK); /* replaces it */
    assert_int_equal(nnop_calib_table_load(ctx, path, &back), NNOP_OK);
    assert_int_equal(nnop_calib_table_count(back), nnop_calib_table_count(t));
    for (i = 0; i < nnop_calib_table_count(t); i++) {
        const char *n0, *n1;
        float a0, a1;
        assert_int_equal(nnop_calib_table_entry(t, i, &n0, &a0), NNOP_OK);
        assert_int_equal(nnop_calib_table_entry(back, i, &n1, &a1), NNOP_OK);
        assert_string_equal(n0, n1);
        assert_memory_equal(&a0, &a1, sizeof a0);
    }
    nnop_calib_table_destroy(back);
    nnop_calib_table_destroy(t);
    assert_int_equal(remove(path), 0);
    nnop_graph_destroy(g);
}

/* In locale name (when installed, with a point other than '.'): the file holds C-locale
 * numbers still, so t reads back to the same bits, and a number written with the locale's point
 * ("2,5") is refused as in the C locale, not read as 2.5 by strtod. 1 when it ran. */
static int comma_locale_round_trip(nnop_context *ctx, const nnop_calib_table *t, const char *name)
{
    nnop_calib_table *back = NULL;
    char path[128], text[160];
    int32_t i;
    if (!setlocale(LC_NUMERIC, name) || strcmp(localeconv()->decimal_point, ".") == 0)
        return 0;
    temp_path(path, sizeof path, "comma");
    assert_int_equal(nnop_calib_table_save(ctx, t, path), NNOP_OK);
    assert_int_equal(nnop_calib_table_load(ctx, path, &back), NNOP_OK);
    for (i = 0; i < nnop_calib_table_count(t); i++) {
        float a0, a1;
        assert_int_equal(nnop_calib_table_entry(t, i, NULL, &a0), NNOP_OK);
        assert_int_equal(nnop_calib_table_entry(back, i, NULL, &a1), NNOP_OK);
        assert_memory_equal(&a0, &a1, sizeof a0);
    }
    nnop_calib_table_destroy(back);
    snprintf(text, sizeof text,
             "nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 1\n2%s5 a\n",
             localeconv()->decimal_point);
    write_text(path, text);
    back = (nnop_calib_table *)path;
    assert_int_equal(nnop_calib_table_load(ctx, path, &back), NNOP_ERR_FORMAT);
    assert_null(back);
    assert_non_null(strstr(nnop_context_last_error(ctx), "line 2"));
    assert_int_equal(remove(path), 0);
    return 1;
}

static void test_table_file_comma_locale(void **state)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                                        "ps_AF.UTF-8", "ps_AF.utf8", "German_Germany.1252"};
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = relu_tanh_graph(ctx);
    float *x[1] = {xa};
    nnop_calib_table *t;
    size_t i;
    int ran = 0;
    nnop_test_fill_f32(xa, N, 71, -3.0f, 3.0f);
    t = calibrate(g, NULL, x, 1);
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        ran += comma_locale_round_trip(ctx, t, names[i]);
    setlocale(LC_NUMERIC, "C");
    if (!ran && getenv("NNOP_REQUIRE_COMMA_LOCALE")) /* CI installs de_DE and ps_AF */
        fail_msg("NNOP_REQUIRE_COMMA_LOCALE is set but no locale of %zu names is installed",
                 sizeof names / sizeof names[0]);
    if (!ran) /* nothing was tested: say so */
        print_message("no locale with another decimal point is installed: not tested\n");
    nnop_calib_table_destroy(t);
    nnop_graph_destroy(g);
}

/* Each malformed file: NNOP_ERR_FORMAT, the line named, no table. */
static void test_table_file_refused(void **state)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
            {"", "empty"},
            {"hello 1 max bins 2048 percentile 99 batches 1 entries 0\n", "line 1"},
            {"nnop-calibration 2 max bins 2048 percentile 99 batches 1 entries 0\n", "version 2"},
            {"nnop-calibration 1 median bins 2048 percentile 99 batches 1 entries 0\n", "method"},
            {"nnop-calibration 1 max bins 64 percentile 99 batches 1 entries 0\n", "bins"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 2\n1 a\n",
             "more entries than the file has lines"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 2\n1 a\n\n\n\n\n",
             "line 3"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 99999999999\n",
             "line 1"},
            {"nnop-calibration 1 max bins 2048 percentile -1 batches 1 entries 0\n", "line 1"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 1\n+1 a\n",
             "line 2"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 1\nnan a\n",
             "line 2"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 1\n-1 a\n",
             "line 2"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 1\n1 \n", "line 2"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 2\n1 a\n2 a\n",
             "has an entry"},
            {"nnop-calibration 1 max bins 2048 percentile 99 batches 1 entries 1\n1 a\n2 b\n",
             "more lines"},
    };
    nnop_context *ctx = (nnop_context *)*state;
    nnop_calib_table *t = NULL;
    char path[128];
    size_t i;
    temp_path(path, sizeof path, "bad");
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i].text);
        t = (nnop_calib_table *)path; /* must come back NULL */
        assert_int_equal(nnop_calib_table_load(ctx, path, &t), NNOP_ERR_FORMAT);
        assert_null(t);
        if (!strstr(nnop_context_last_error(ctx), bad[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, nnop_context_last_error(ctx),
                     bad[i].says);
    }
    write_text(path, "nnop-calibration 1 percentile bins 512 percentile 99.5 batches 2 "
                     "entries 2\r\n0.5 a b\r\n1e-3 c\r\n");
    assert_int_equal(nnop_calib_table_load(ctx, path, &t), NNOP_OK);
    assert_true(amax_of(t, "a b") == 0.5f);
    assert_true(amax_of(t, "c") == 1e-3f);
    nnop_calib_table_destroy(t);
    assert_int_equal(remove(path), 0);
    assert_int_equal(nnop_calib_table_load(ctx, path, &t), NNOP_ERR_IO);
    assert_non_null(strstr(nnop_context_last_error(ctx), path));
    assert_non_null(strstr(nnop_context_last_error(ctx), "no such file"));
    assert_int_equal(nnop_calib_table_load(NULL, path, &t), NNOP_ERR_IO);
}

static void expect_refused(nnop_context *ctx, nnop_status got, const char *says)
{
    assert_int_equal(got, NNOP_ERR_INVALID_ARGUMENT);
    if (!strstr(nnop_context_last_error(ctx), says))
        fail_msg("'%s' does not say '%s'", nnop_context_last_error(ctx), says);
}

static void test_calibrate_arguments(void **state)
{
    nnop_context *ctx = (nnop_context *)*state;
    nnop_graph *g = relu_tanh_graph(ctx);
    nnop_calib_options o;
    const void *in[1] = {xa}, *none[1] = {NULL};
    const void *const *batches[2] = {in, in};
    nnop_calib_table *t = NULL;
    nnop_test_fill_f32(xa, N, 61, -1.0f, 1.0f);
    assert_int_equal(nnop_calibrate(NULL, NULL, batches, 1, &t), NNOP_ERR_INVALID_ARGUMENT);
    expect_refused(ctx, nnop_calibrate(g, NULL, batches, 1, NULL), "out is NULL");
    expect_refused(ctx, nnop_calibrate(g, NULL, batches, 0, &t), "n_batches is 0");
    expect_refused(ctx, nnop_calibrate(g, NULL, NULL, 1, &t), "batches is NULL");
    batches[1] = NULL;
    expect_refused(ctx, nnop_calibrate(g, NULL, batches, 2, &t), "batches[1] is NULL");
    batches[1] = none;
    expect_refused(ctx, nnop_calibrate(g, NULL, batches, 2, &t), "batches[1][0] (input 'x')");
    batches[1] = in;
    nnop_calib_options_init(&o);
    o.bins = 100;
    expect_refused(ctx, nnop_calibrate(g, &o, batches, 1, &t), "opts->bins 100");
    nnop_calib_options_init(&o);
    o.percentile = 0.0;
    expect_refused(ctx, nnop_calibrate(g, &o, batches, 1, &t), "opts->percentile");
    o.percentile = 100.0000001; /* the message shows why: not "100" */
    expect_refused(ctx, nnop_calibrate(g, &o, batches, 1, &t), "opts->percentile 100.00000009");
    nnop_calib_options_init(&o);
    o.method = (nnop_calib_method)7;
    expect_refused(ctx, nnop_calibrate(g, &o, batches, 1, &t), "opts->method 7");
    nnop_calib_options_init(&o);
    o.reserved[6] = 1;
    expect_refused(ctx, nnop_calibrate(g, &o, batches, 1, &t), "opts->reserved");
    memcpy(xb, xa, sizeof xb);
    xb[100] = NAN;
    {
        const void *nan_in[1] = {xb};
        batches[1] = nan_in;
        expect_refused(ctx, nnop_calibrate(g, NULL, batches, 2, &t),
                       "tensor 'x' has a value that is not finite in batch 1");
    }
    assert_null(t);
    assert_int_equal(nnop_calib_table_count(NULL), 0);
    assert_int_equal(nnop_calib_table_save(ctx, NULL, "x"), NNOP_ERR_INVALID_ARGUMENT);
    nnop_calib_table_destroy(NULL);
    nnop_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_max_is_exact, nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_percentile_known_quantiles,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_entropy_clips_rare_outliers,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_zero_tensor_and_repeated_names,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_names_unique_against_own_suffixes,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_table_file_round_trip, nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_table_file_comma_locale,
                                            nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_table_file_refused, nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
            cmocka_unit_test_setup_teardown(test_calibrate_arguments, nnop_test_setup_cpu_context,
                                            nnop_test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
