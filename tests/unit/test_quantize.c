/* test_quantize.c: the 8-bit storage dtypes from the header alone (issue 45, item 1): every
 * FP8 code decoded and encoded back, rounding against a brute-force nearest-even search over
 * all codes (ties and the subnormals included), saturation, NaN and infinities, INT8's
 * rounding and range, nnop_quantize / nnop_dequantize per tensor and per channel,
 * nnop_tensor_copy of int8 weights into NHWC, and the refusals (nothing written; a graph
 * refuses the dtypes by name). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnop_test.h"

static float dec(nnop_dtype t, uint8_t c)
{
    float v;
    assert_int_equal(nnop_convert(t, &c, NNOP_F32, &v, 1), NNOP_OK);
    return v;
}

static uint8_t enc(nnop_dtype t, float v)
{
    uint8_t c = 0xA5;
    assert_int_equal(nnop_convert(NNOP_F32, &v, t, &c, 1), NNOP_OK);
    return c;
}

/* The oracle: the finite code nearest to x (ties to the even code, whose last mantissa bit
 * is 0), saturated at the largest; independent of the library's bit arithmetic. */
static uint8_t nearest(nnop_dtype t, float x)
{
    double best = INFINITY;
    int c, pick = -1;
    for (c = 0; c < 256; c++) {
        float v = dec(t, (uint8_t)c);
        double d;
        if (!isfinite(v) || (signbit(v) != signbit(x) && v != 0.0f) ||
            (v == 0.0f && signbit(v) != signbit(x)))
            continue;
        d = fabs((double)v - (double)x);
        if (d < best || (d == best && !(c & 1))) {
            best = d;
            pick = c;
        }
    }
    assert_true(pick >= 0);
    return (uint8_t)pick;
}

static void test_fp8_codes_round_trip(void **state)
{
    static const nnop_dtype types[2] = {NNOP_F8E4M3, NNOP_F8E5M2};
    int k, c;
    (void)state;
    assert_int_equal(nnop_dtype_size(NNOP_F8E4M3), 1);
    assert_int_equal(nnop_dtype_size(NNOP_I8), 1);
    for (k = 0; k < 2; k++)
        for (c = 0; c < 256; c++) {
            float v = dec(types[k], (uint8_t)c);
            if (isnan(v))
                assert_int_equal(enc(types[k], v), (c & 0x80) | 0x7f);
            else if (isinf(v)) /* E5M2's: saturated */
                assert_int_equal(enc(types[k], v), (c & 0x80) | 0x7b);
            else
                assert_int_equal(enc(types[k], v), c);
        }
    /* the formats' landmarks */
    assert_true(dec(NNOP_F8E4M3, 0x7e) == 448.0f);
    assert_true(isnan(dec(NNOP_F8E4M3, 0x7f)));
    assert_true(dec(NNOP_F8E4M3, 0x78) == 256.0f); /* exponent all ones is finite in E4M3 */
    assert_true(dec(NNOP_F8E4M3, 0x01) == ldexpf(1.0f, -9));
    assert_true(dec(NNOP_F8E5M2, 0x7b) == 57344.0f);
    assert_true(isinf(dec(NNOP_F8E5M2, 0x7c)));
    assert_true(dec(NNOP_F8E5M2, 0x01) == ldexpf(1.0f, -16));
    assert_true(dec(NNOP_F8E4M3, 0x80) == 0.0f && signbit(dec(NNOP_F8E4M3, 0x80)));
}

static void test_fp8_rounding_against_search(void **state)
{
    static const nnop_dtype types[2] = {NNOP_F8E4M3, NNOP_F8E5M2};
    int k, c, i;
    (void)state;
    for (k = 0; k < 2; k++) {
        float largest = types[k] == NNOP_F8E4M3 ? 448.0f : 57344.0f;
        /* every midpoint between neighbours (the ties), and a quarter either side */
        for (c = 0; c < 0x7f; c++) {
            float a = dec(types[k], (uint8_t)c), b = dec(types[k], (uint8_t)(c + 1));
            float probes[3];
            if (!isfinite(b) || isnan(b))
                continue;
            probes[0] = a + (b - a) * 0.5f, probes[1] = a + (b - a) * 0.25f;
            probes[2] = a + (b - a) * 0.75f;
            for (i = 0; i < 3; i++) {
                assert_int_equal(enc(types[k], probes[i]), nearest(types[k], probes[i]));
                assert_int_equal(enc(types[k], -probes[i]), nearest(types[k], -probes[i]));
            }
        }
        /* random values over the whole range, below the smallest subnormal to past the top */
        {
            uint64_t s = 45;
            for (i = 0; i < 4000; i++) {
                float x;
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                x = ldexpf((float)((s >> 40) & 0xffffff) / 16777216.0f + 0.5f,
                           (int)((s >> 20) % 44) - 22);
                x = (s >> 63) ? -x : x;
                assert_int_equal(enc(types[k], x), nearest(types[k], x));
            }
        }
        /* saturation and the specials */
        assert_int_equal(enc(types[k], largest * 1.02f), nearest(types[k], largest));
        assert_int_equal(enc(types[k], -1e30f), 0x80 | nearest(types[k], largest));
        assert_int_equal(enc(types[k], INFINITY), nearest(types[k], largest));
        assert_int_equal(enc(types[k], -INFINITY), 0x80 | nearest(types[k], largest));
        assert_int_equal(enc(types[k], NAN), 0x7f);
        assert_int_equal(enc(types[k], -0.0f), 0x80);
        assert_int_equal(enc(types[k], 1e-30f), 0x00);
    }
}

static void test_int8_rounding_and_range(void **state)
{
    static const float in[] = {0.5f,    1.5f,   2.5f,   -2.5f,   -0.5f,   126.5f,
                               127.49f, 127.5f, 300.0f, -128.4f, -128.6f, -1e9f};
    static const int8_t want[] = {0, 2, 2, -2, 0, 126, 127, 127, 127, -128, -128, -128};
    int8_t q[12];
    float back[2], nan_inf[3] = {NAN, INFINITY, -INFINITY};
    int8_t s[3];
    int i;
    (void)state;
    assert_int_equal(nnop_convert(NNOP_F32, in, NNOP_I8, q, 12), NNOP_OK);
    for (i = 0; i < 12; i++)
        assert_int_equal(q[i], want[i]);
    assert_int_equal(nnop_convert(NNOP_F32, nan_inf, NNOP_I8, s, 3), NNOP_OK);
    assert_int_equal(s[0], 0);
    assert_int_equal(s[1], 127);
    assert_int_equal(s[2], -128);
    assert_int_equal(nnop_convert(NNOP_I8, &q[9], NNOP_F32, back, 2), NNOP_OK);
    assert_true(back[0] == -128.0f && back[1] == -128.0f);
    /* between 8-bit types through float32: I8 100 -> E4M3 96 (100 rounds to 96 or 104: even) */
    {
        int8_t h = 100;
        uint8_t f8 = 0;
        assert_int_equal(nnop_convert(NNOP_I8, &h, NNOP_F8E4M3, &f8, 1), NNOP_OK);
        assert_true(dec(NNOP_F8E4M3, f8) == 96.0f);
    }
}

static void test_quantize_per_channel(void **state)
{
    enum { CH = 3, PER = 5, N = CH * PER };
    float w[N], back[N], scales[CH] = {0.5f, 0.02f, 4.0f};
    int8_t q[N];
    uint8_t f8[N];
    int c, i;
    (void)state;
    nnop_test_fill_f32(w, N, 7, -2.f, 2.f);
    w[PER + 1] = 10.0f; /* channel 1: 10 / 0.02 = 500, saturated to 127 */
    assert_int_equal(nnop_quantize(w, N, scales, CH, NNOP_I8, q), NNOP_OK);
    for (c = 0; c < CH; c++)
        for (i = 0; i < PER; i++) {
            float v = w[c * PER + i] / scales[c];
            float r = nearbyintf(v);
            int8_t want = (int8_t)(r > 127 ? 127 : r < -128 ? -128 : r);
            assert_int_equal(q[c * PER + i], want);
        }
    assert_int_equal(q[PER + 1], 127);
    assert_int_equal(nnop_dequantize(NNOP_I8, q, N, scales, CH, back), NNOP_OK);
    for (i = 0; i < N; i++)
        assert_true(back[i] == (float)q[i] * scales[i / PER]);
    /* per tensor, FP8: dequantize(quantize(x)) is x's nearest code times the scale */
    assert_int_equal(nnop_quantize(w, N, &scales[0], 1, NNOP_F8E4M3, f8), NNOP_OK);
    assert_int_equal(nnop_dequantize(NNOP_F8E4M3, f8, N, &scales[0], 1, back), NNOP_OK);
    for (i = 0; i < N; i++)
        assert_true(back[i] == dec(NNOP_F8E4M3, nearest(NNOP_F8E4M3, w[i] / 0.5f)) * 0.5f);
}

static void test_quantize_refusals_write_nothing(void **state)
{
    float x[6] = {1, 2, 3, 4, 5, 6}, good[2] = {1.0f, 1.0f}, y[6];
    float bad[4][2] = {{0.0f, 1.0f}, {-1.0f, 1.0f}, {NAN, 1.0f}, {INFINITY, 1.0f}};
    uint8_t q[6], poison[6];
    int k;
    (void)state;
    memset(poison, 0xA5, sizeof poison);
    memcpy(q, poison, sizeof q);
    for (k = 0; k < 4; k++)
        assert_int_equal(nnop_quantize(x, 6, bad[k], 2, NNOP_I8, q), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_quantize(x, 6, good, 4, NNOP_I8, q), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_quantize(x, 6, good, 0, NNOP_I8, q), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_quantize(x, 0, good, 1, NNOP_I8, q), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_quantize(x, 6, good, 2, NNOP_F16, q), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_quantize(NULL, 6, good, 2, NNOP_I8, q), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_quantize(x, 6, NULL, 2, NNOP_I8, q), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_quantize(x, 6, good, 2, NNOP_I8, (uint8_t *)x + 1),
                     NNOP_ERR_INVALID_ARGUMENT); /* overlapping */
    assert_memory_equal(q, poison, sizeof q);
    memcpy(y, x, sizeof y);
    assert_int_equal(nnop_dequantize(NNOP_I8, q, 6, bad[0], 2, y), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_dequantize((nnop_dtype)9, q, 6, good, 2, y), NNOP_ERR_INVALID_ARGUMENT);
    assert_memory_equal(y, x, sizeof y);
    assert_int_equal(nnop_convert(NNOP_F32, x, (nnop_dtype)6, q, 1), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_dtype_size((nnop_dtype)6), 0);
}

static void test_int8_weights_into_nhwc(void **state)
{
    nnop_tensor_desc sd = nnop_tensor_4d(NNOP_I8, NNOP_NCHW, 2, 3, 2, 5);
    nnop_tensor_desc dd = nnop_tensor_4d(NNOP_I8, NNOP_NHWC, 2, 3, 2, 5);
    int8_t w[60], got[60];
    int k, c, r, s;
    (void)state;
    for (k = 0; k < 60; k++)
        w[k] = (int8_t)(k * 37 % 255 - 127);
    assert_int_equal(nnop_tensor_bytes(&sd), 60);
    assert_int_equal(nnop_tensor_copy(&sd, w, &dd, got), NNOP_OK);
    for (k = 0; k < 2; k++)
        for (c = 0; c < 3; c++)
            for (r = 0; r < 2; r++)
                for (s = 0; s < 5; s++)
                    assert_int_equal(got[((k * 2 + r) * 5 + s) * 3 + c],
                                     w[((k * 3 + c) * 2 + r) * 5 + s]);
}

static void test_graphs_refuse_8bit_by_name(void **state)
{
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_I8, NNOP_NCHW, 1, 2, 3, 3);
    nnop_value v;
    (void)state;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    v = nnop_input(g, "x", &d);
    assert_true(v.id < 0);
    assert_int_equal(nnop_graph_status(g), NNOP_ERR_UNSUPPORTED);
    assert_non_null(strstr(nnop_context_last_error(ctx), "i8"));
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fp8_codes_round_trip),
            cmocka_unit_test(test_fp8_rounding_against_search),
            cmocka_unit_test(test_int8_rounding_and_range),
            cmocka_unit_test(test_quantize_per_channel),
            cmocka_unit_test(test_quantize_refusals_write_nothing),
            cmocka_unit_test(test_int8_weights_into_nhwc),
            cmocka_unit_test(test_graphs_refuse_8bit_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
