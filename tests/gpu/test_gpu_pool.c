/* test_gpu_pool.c: nnop's own memory-bound kernels on the GPU against the CPU reference: max
 * and average pooling (every window class: 3x3 unrolled and generic, asymmetric windows,
 * strides and pads, windows larger than the input, 1x1 spatial, count_include_pad both ways)
 * in both layouts and all three dtypes, channel counts that take the 16-byte vector path and
 * odd ones that take the scalar path, NaN inputs (max pooling propagates them), and global
 * average pooling, softmax, flatten and the standalone epilogue chain on their fast and
 * fallback paths. Outputs are poisoned before the GPU run. */
#include "gpu_harness.h"

enum { K_MAX, K_AVG, K_GAP, K_SOFTMAX, K_FLATTEN, K_EPILOGUE, K_EPILOGUE_BN };

typedef struct pool_case {
    const char *name;
    int kind;
    nnop_dtype dt;
    nnop_layout lay;
    int64_t n, c, h, w;
    int64_t kh, kw, sh, sw, ph, pw;
    int incl; /* count_include_pad */
    int nan;  /* > 0: every nan-th input element is NaN, the outputs poisoned with finite bytes;
               * < 0: every -nan-th is -inf, so is the whole first slice (softmax: NaN) and the
               * second but its last element (1 there: a long run of -inf before a number) */
    int ndim; /* softmax: 2 for an N x C input (c), else 4 */
} pool_case;

#define F16  NNOP_F16
#define BF16 NNOP_BF16
#define F32  NNOP_F32
#define NHWC NNOP_NHWC
#define NCHW NNOP_NCHW

/* clang-format off */
static const pool_case cases[] = {
    /* the ResNet stem's max pool shape class: 3x3 s2 p1, C multiple of 8 (16-byte vectors) */
    {"max_f16_nhwc_3x3_s2_p1_c64", K_MAX, F16, NHWC, 2, 64, 17, 15, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_bf16_nhwc_3x3_s2_p1_c64", K_MAX, BF16, NHWC, 2, 64, 17, 15, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f32_nhwc_3x3_s2_p1_c16", K_MAX, F32, NHWC, 2, 16, 17, 15, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f16_nchw_3x3_s2_p1", K_MAX, F16, NCHW, 2, 16, 17, 15, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_bf16_nchw_3x3_s2_p1", K_MAX, BF16, NCHW, 2, 16, 17, 15, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f32_nchw_3x3_s2_p1", K_MAX, F32, NCHW, 2, 16, 17, 15, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    /* odd channel counts: the scalar path (C % 8 != 0 for 16-bit, C % 4 != 0 for f32) */
    {"max_f16_nhwc_3x3_s2_p1_c3", K_MAX, F16, NHWC, 2, 3, 13, 11, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_bf16_nhwc_3x3_s1_p1_c13", K_MAX, BF16, NHWC, 2, 13, 9, 10, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    {"max_f32_nhwc_3x3_s2_p0_c5", K_MAX, F32, NHWC, 3, 5, 11, 12, 3, 3, 2, 2, 0, 0, 0, 0, 4},
    {"avg_f16_nhwc_3x3_s2_p1_c12_incl", K_AVG, F16, NHWC, 2, 12, 13, 11, 3, 3, 2, 2, 1, 1, 1, 0, 4},
    {"avg_f32_nhwc_3x3_s1_p1_c7_excl", K_AVG, F32, NHWC, 2, 7, 9, 8, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    /* generic windows (the loop kernel): 2x2, 5x5, 7x7, 1x1, asymmetric */
    {"max_f16_nhwc_2x2_s2_c32", K_MAX, F16, NHWC, 2, 32, 14, 15, 2, 2, 2, 2, 0, 0, 0, 0, 4},
    {"avg_bf16_nhwc_2x2_s2_p1_c16_incl", K_AVG, BF16, NHWC, 2, 16, 9, 7, 2, 2, 2, 2, 1, 1, 1, 0, 4},
    {"avg_bf16_nhwc_2x2_s2_p1_c16_excl", K_AVG, BF16, NHWC, 2, 16, 9, 7, 2, 2, 2, 2, 1, 1, 0, 0, 4},
    {"avg_f16_nhwc_5x5_s1_p2_c24_incl", K_AVG, F16, NHWC, 2, 24, 10, 9, 5, 5, 1, 1, 2, 2, 1, 0, 4},
    {"avg_f16_nhwc_5x5_s1_p2_c24_excl", K_AVG, F16, NHWC, 2, 24, 10, 9, 5, 5, 1, 1, 2, 2, 0, 0, 4},
    {"avg_f32_nchw_5x5_s2_p2_incl", K_AVG, F32, NCHW, 2, 6, 11, 10, 5, 5, 2, 2, 2, 2, 1, 0, 4},
    {"avg_f32_nchw_5x5_s2_p2_excl", K_AVG, F32, NCHW, 2, 6, 11, 10, 5, 5, 2, 2, 2, 2, 0, 0, 4},
    {"avg_f16_nchw_3x3_s2_p1_excl", K_AVG, F16, NCHW, 2, 6, 11, 10, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"avg_bf16_nchw_3x3_s1_p1_incl", K_AVG, BF16, NCHW, 2, 6, 11, 10, 3, 3, 1, 1, 1, 1, 1, 0, 4},
    {"avg_f32_nhwc_7x7_s7_c8", K_AVG, F32, NHWC, 2, 8, 14, 14, 7, 7, 7, 7, 0, 0, 0, 0, 4},
    {"max_bf16_nchw_1x1_s2", K_MAX, BF16, NCHW, 2, 5, 9, 8, 1, 1, 2, 2, 0, 0, 0, 0, 4},
    {"max_f16_nhwc_1x1_s2_c8", K_MAX, F16, NHWC, 2, 8, 9, 8, 1, 1, 2, 2, 0, 0, 0, 0, 4},
    {"max_f16_nhwc_3x2_s2x1_p1x0_c16", K_MAX, F16, NHWC, 2, 16, 10, 9, 3, 2, 2, 1, 1, 0, 0, 0, 4},
    {"avg_f32_nhwc_2x3_s1x3_p0x1_c4_incl", K_AVG, F32, NHWC, 2, 4, 7, 10, 2, 3, 1, 3, 0, 1, 1, 0, 4},
    {"avg_bf16_nchw_4x2_s3x2_p2x1_excl", K_AVG, BF16, NCHW, 2, 3, 11, 9, 4, 2, 3, 2, 2, 1, 0, 0, 4},
    {"max_f32_nchw_4x2_s3x2_p2x1", K_MAX, F32, NCHW, 2, 3, 11, 9, 4, 2, 3, 2, 2, 1, 0, 0, 4},
    /* windows larger than the input (padding makes room), and 1x1 spatial */
    {"max_f16_nhwc_5x5_on_2x3_p2_c16", K_MAX, F16, NHWC, 2, 16, 2, 3, 5, 5, 1, 1, 2, 2, 0, 0, 4},
    {"avg_f16_nhwc_5x5_on_2x3_p2_c16_incl", K_AVG, F16, NHWC, 2, 16, 2, 3, 5, 5, 1, 1, 2, 2, 1, 0, 4},
    {"avg_f32_nchw_5x5_on_2x3_p2_excl", K_AVG, F32, NCHW, 2, 5, 2, 3, 5, 5, 1, 1, 2, 2, 0, 0, 4},
    {"max_bf16_nchw_3x3_on_1x1_p1", K_MAX, BF16, NCHW, 3, 5, 1, 1, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    {"max_f16_nhwc_3x3_on_1x1_p1_c8", K_MAX, F16, NHWC, 3, 8, 1, 1, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    {"avg_f32_nhwc_3x3_on_1x1_p1_c3_incl", K_AVG, F32, NHWC, 3, 3, 1, 1, 3, 3, 1, 1, 1, 1, 1, 0, 4},
    {"avg_f16_nhwc_1x1_on_1x1_c16", K_AVG, F16, NHWC, 3, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 4},
    /* 3x3 stride 1 on the vector path: the sliding kernel (8 output rows a thread; heights
     * that leave a partial last group, padding 0 and 1, both divisors) */
    {"max_f16_nhwc_3x3_s1_p1_c16", K_MAX, F16, NHWC, 2, 16, 13, 11, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    {"max_bf16_nhwc_3x3_s1_p0_c8", K_MAX, BF16, NHWC, 2, 8, 12, 5, 3, 3, 1, 1, 0, 0, 0, 0, 4},
    {"max_f32_nhwc_3x3_s1_p1_c4", K_MAX, F32, NHWC, 3, 4, 9, 10, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    {"avg_f16_nhwc_3x3_s1_p1_c24_incl", K_AVG, F16, NHWC, 2, 24, 17, 9, 3, 3, 1, 1, 1, 1, 1, 0, 4},
    {"avg_bf16_nhwc_3x3_s1_p1_c16_excl", K_AVG, BF16, NHWC, 2, 16, 10, 7, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    {"avg_f32_nhwc_3x3_s1_p0_c8_excl", K_AVG, F32, NHWC, 2, 8, 5, 6, 3, 3, 1, 1, 0, 0, 0, 0, 4},
    {"avg_f16_nhwc_3x3_s1_p1_on_1x2_c8", K_AVG, F16, NHWC, 2, 8, 1, 2, 3, 3, 1, 1, 1, 1, 1, 0, 4},
    {"max_f16_nhwc_3x3_s1_p1_c16_nan", K_MAX, F16, NHWC, 2, 16, 11, 9, 3, 3, 1, 1, 1, 1, 0, 29, 4},
    {"avg_f16_nhwc_3x3_s1_p1_big", K_AVG, F16, NHWC, 4, 64, 56, 56, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    /* channels first: rows wider than a warp, and many narrow rows a warp */
    {"max_f16_nchw_3x3_s2_p1_wide", K_MAX, F16, NCHW, 2, 8, 30, 150, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"avg_f32_nchw_2x2_s2_narrow", K_AVG, F32, NCHW, 3, 70, 6, 6, 2, 2, 2, 2, 0, 0, 0, 0, 4},
    {"max_bf16_nchw_3x3_s1_p1_ow5", K_MAX, BF16, NCHW, 5, 33, 7, 5, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    /* enough outputs that the grid-stride loops go round more than once */
    {"max_f16_nhwc_3x3_s2_p1_big", K_MAX, F16, NHWC, 8, 64, 112, 112, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f32_nchw_3x3_s1_p1_big", K_MAX, F32, NCHW, 4, 16, 200, 200, 3, 3, 1, 1, 1, 1, 0, 0, 4},
    /* the band kernel (rows staged in shared memory): several small planes a block with a
     * partial last group, many bands a plane, ragged 16-byte ends (odd rows), NHWC C = 3,
     * and a row too wide for a band (the one-output-a-thread fallback) */
    {"max_f16_nchw_3x3_s2_p1_grouped", K_MAX, F16, NCHW, 8, 200, 9, 7, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"avg_f32_nchw_2x2_s2_grouped", K_AVG, F32, NCHW, 4, 301, 6, 6, 2, 2, 2, 2, 0, 0, 0, 0, 4},
    {"avg_bf16_nchw_3x3_s2_p1_grouped_incl", K_AVG, BF16, NCHW, 5, 211, 7, 7, 3, 3, 2, 2, 1, 1, 1, 0, 4},
    {"max_f16_nchw_3x3_s2_p1_bands", K_MAX, F16, NCHW, 2, 32, 201, 301, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"avg_f32_nchw_5x5_s1_p2_bands_excl", K_AVG, F32, NCHW, 1, 3, 150, 257, 5, 5, 1, 1, 2, 2, 0, 0, 4},
    {"max_f32_nchw_3x3_s2_p1_too_wide", K_MAX, F32, NCHW, 1, 2, 5, 3000, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f16_nhwc_3x3_s2_p1_c3_w75", K_MAX, F16, NHWC, 3, 3, 40, 75, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"avg_bf16_nhwc_2x2_s2_c3_big", K_AVG, BF16, NHWC, 4, 3, 64, 224, 2, 2, 2, 2, 0, 0, 0, 0, 4},
    {"max_f32_nhwc_3x3_s2_p1_c7_grouped", K_MAX, F32, NHWC, 1200, 7, 5, 5, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f16_nhwc_3x3_s1_p1_c9_nan", K_MAX, F16, NHWC, 2, 9, 11, 13, 3, 3, 1, 1, 1, 1, 0, 29, 4},
    {"max_f32_nchw_3x3_s2_p1_grouped_nan", K_MAX, F32, NCHW, 8, 200, 9, 7, 3, 3, 2, 2, 1, 1, 0, 29, 4},
    /* the separable channels-last max pool (16-bit, C under a 16-byte vector, rows of whole
     * vectors: W * C * 2 a multiple of 16): 3x3 and 2x2 unrolled, an asymmetric window (the
     * generic loops), the stem's 224 x 224 (many bands), NaN inputs; the f32 twin stays on
     * the band kernel */
    {"max_f16_nhwc_3x3_s2_p1_c3_sep", K_MAX, F16, NHWC, 3, 3, 40, 48, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f16_nhwc_3x3_s2_p1_c3_sep_224", K_MAX, F16, NHWC, 2, 3, 224, 224, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_bf16_nhwc_3x3_s2_p1_c3_sep_nan", K_MAX, BF16, NHWC, 2, 3, 37, 64, 3, 3, 2, 2, 1, 1, 0, 29, 4},
    {"max_f16_nhwc_2x2_s2_c5_sep", K_MAX, F16, NHWC, 2, 5, 17, 24, 2, 2, 2, 2, 0, 0, 0, 0, 4},
    {"max_bf16_nhwc_3x2_s2x1_p1x0_c7_sep", K_MAX, BF16, NHWC, 2, 7, 11, 16, 3, 2, 2, 1, 1, 0, 0, 0, 4},
    {"max_f32_nhwc_3x3_s2_p1_c3_w48_band", K_MAX, F32, NHWC, 2, 3, 40, 48, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    /* NaN inputs: max pooling's output is NaN wherever its window holds one */
    {"max_f16_nhwc_3x3_s2_p1_c64_nan", K_MAX, F16, NHWC, 2, 64, 17, 15, 3, 3, 2, 2, 1, 1, 0, 29, 4},
    {"max_bf16_nhwc_3x3_s2_p1_c64_nan", K_MAX, BF16, NHWC, 2, 64, 17, 15, 3, 3, 2, 2, 1, 1, 0, 29, 4},
    {"max_f32_nhwc_3x3_s2_p1_c16_nan", K_MAX, F32, NHWC, 2, 16, 17, 15, 3, 3, 2, 2, 1, 1, 0, 29, 4},
    {"max_f16_nhwc_2x2_s2_c5_nan", K_MAX, F16, NHWC, 2, 5, 10, 9, 2, 2, 2, 2, 0, 0, 0, 29, 4},
    {"max_f16_nchw_3x3_s2_p1_nan", K_MAX, F16, NCHW, 2, 6, 17, 15, 3, 3, 2, 2, 1, 1, 0, 29, 4},
    /* 16-bit channels-first max pooling with W a multiple of 8: a plane a sample of one
     * channel, on the separable kernel (3x3, 2x2 and the general window; padding rows and
     * columns, NaN), or the rows kernel below (W 16 and 112 here) */
    {"max_f16_nchw_3x3_s2_p1_sep", K_MAX, F16, NCHW, 2, 16, 17, 16, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f16_nchw_3x3_s2_p1_sep_112", K_MAX, F16, NCHW, 1, 4, 112, 112, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_bf16_nchw_2x2_s2_sep", K_MAX, BF16, NCHW, 2, 6, 12, 24, 2, 2, 2, 2, 0, 0, 0, 0, 4},
    {"max_bf16_nchw_3x2_s1_p1_sep_nan", K_MAX, BF16, NCHW, 2, 5, 9, 16, 3, 2, 1, 1, 1, 1, 0, 29, 4},
    {"max_f16_nchw_5x5_s3_p2_sep_nan", K_MAX, F16, NCHW, 3, 3, 11, 8, 5, 5, 3, 3, 2, 2, 0, 13, 4},
    {"max_bf16_nchw_2x3_s1_p1_nan", K_MAX, BF16, NCHW, 2, 6, 9, 8, 2, 3, 1, 1, 1, 1, 0, 29, 4},
    /* 16-bit NCHW 3x3/2 pad 1 and 2x2/2 with W a multiple of 16: the rows kernel (8 output
     * pixels a thread in registers; odd H, the pixel left of each 16-wide chunk, NaN); the
     * rest stays on the separable kernel, whose column pass takes runs of 4 pixels for C = 3
     * (the C = 3 _sep cases above and these: scalar stores where rows are not whole vectors,
     * OW 20, 23, 19; vector stores, OW 20, 16 and 8; a last run past the right edge, p0) */
    {"max_f16_nchw_3x3_s2_p1_rows_nan", K_MAX, F16, NCHW, 2, 3, 13, 32, 3, 3, 2, 2, 1, 1, 0, 7, 4},
    {"max_bf16_nchw_3x3_s2_p1_rows_h9", K_MAX, BF16, NCHW, 3, 2, 9, 48, 3, 3, 2, 2, 1, 1, 0, 0, 4},
    {"max_f16_nchw_3x3_s2_p1_sep_ow20_nan", K_MAX, F16, NCHW, 2, 5, 13, 40, 3, 3, 2, 2, 1, 1, 0, 7, 4},
    {"max_bf16_nchw_3x3_s2_p0_sep_ow23", K_MAX, BF16, NCHW, 2, 3, 9, 48, 3, 3, 2, 2, 0, 0, 0, 0, 4},
    {"max_f16_nchw_2x2_s2_rows_nan", K_MAX, F16, NCHW, 2, 4, 10, 32, 2, 2, 2, 2, 0, 0, 0, 11, 4},
    {"max_f16_nhwc_3x3_s2_p1_c3_sep_w40_nan", K_MAX, F16, NHWC, 2, 3, 11, 40, 3, 3, 2, 2, 1, 1, 0, 9, 4},
    {"max_f16_nhwc_3x3_s2_p0_c3_sep_ow19", K_MAX, F16, NHWC, 2, 3, 9, 40, 3, 3, 2, 2, 0, 0, 0, 0, 4},
    {"max_bf16_nhwc_3x3_s2_p1_c3_sep_w32_nan", K_MAX, BF16, NHWC, 2, 3, 11, 32, 3, 3, 2, 2, 1, 1, 0, 13, 4},
    {"max_f16_nhwc_2x2_s2_c3_sep_nan", K_MAX, F16, NHWC, 2, 3, 8, 16, 2, 2, 2, 2, 0, 0, 0, 5, 4},
    {"max_f32_nchw_5x5_s2_p2_nan", K_MAX, F32, NCHW, 2, 6, 11, 10, 5, 5, 2, 2, 2, 2, 0, 29, 4},
    {"avg_f16_nhwc_3x3_s2_p1_c16_nan", K_AVG, F16, NHWC, 2, 16, 9, 9, 3, 3, 2, 2, 1, 1, 1, 29, 4},
    /* global average pooling: channel vectors (NHWC), H*W vectors (NCHW), scalar paths */
    {"gap_f16_nhwc_c2048_7x7", K_GAP, F16, NHWC, 3, 2048, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_bf16_nhwc_c64_14x14", K_GAP, BF16, NHWC, 2, 64, 14, 14, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f32_nhwc_c12_9x11", K_GAP, F32, NHWC, 2, 12, 9, 11, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f16_nhwc_c5_9x11", K_GAP, F16, NHWC, 2, 5, 9, 11, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f16_nhwc_c24_1x1", K_GAP, F16, NHWC, 2, 24, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    /* channels-last, few samples of many positions: H*W summed in chunks by more blocks,
     * the chunks added by a second kernel (even and uneven chunks, vector and scalar paths) */
    {"gap_f16_nhwc_c32_112x112_chunked", K_GAP, F16, NHWC, 2, 32, 112, 112, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_bf16_nhwc_c96_56x57_chunked", K_GAP, BF16, NHWC, 3, 96, 56, 57, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f32_nhwc_c36_33x35_uneven_chunks", K_GAP, F32, NHWC, 1, 36, 33, 35, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f16_nhwc_c5_64x64_scalar_chunked", K_GAP, F16, NHWC, 2, 5, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f16_nchw_7x7", K_GAP, F16, NCHW, 2, 40, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_bf16_nchw_8x8", K_GAP, BF16, NCHW, 2, 40, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f32_nchw_56x56", K_GAP, F32, NCHW, 2, 20, 56, 56, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    /* NCHW short rows (H*W <= 64, staged in shared memory): many rows, odd and even H*W */
    {"gap_f32_nchw_7x7_many", K_GAP, F32, NCHW, 64, 300, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f16_nchw_3x5", K_GAP, F16, NCHW, 3, 170, 3, 5, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_bf16_nchw_8x8_many", K_GAP, BF16, NCHW, 17, 129, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"gap_f32_nchw_9x9", K_GAP, F32, NCHW, 2, 30, 9, 9, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    /* softmax: rows in registers (vector and scalar), long rows (a block a row), channels
     * strided by H*W (NCHW) */
    {"softmax_f32_2d_c1000", K_SOFTMAX, F32, NCHW, 7, 1000, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
    {"softmax_f16_2d_c1000", K_SOFTMAX, F16, NCHW, 7, 1000, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
    {"softmax_bf16_2d_c10", K_SOFTMAX, BF16, NCHW, 9, 10, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
    {"softmax_f32_2d_c3001_long", K_SOFTMAX, F32, NCHW, 5, 3001, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
    {"softmax_f16_2d_c4096_long", K_SOFTMAX, F16, NCHW, 5, 4096, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
    /* 8 lanes a row (50 vectors), and long rows past the registers (read twice) */
    {"softmax_f32_2d_c200_8lanes", K_SOFTMAX, F32, NCHW, 11, 200, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
    {"softmax_f16_2d_c40000_long", K_SOFTMAX, F16, NCHW, 3, 40000, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
    /* NaN in the part of a long row beyond the registers (row 1 at 33003; rows 2 and 4 clean) */
    {"softmax_f16_2d_c40000_long_tail_nan", K_SOFTMAX, F16, NCHW, 5, 40000, 1, 1, 0, 0, 0, 0, 0, 0, 0, 73000, 2},
    {"softmax_f32_2d_c5001_long", K_SOFTMAX, F32, NCHW, 2, 5001, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
    {"softmax_bf16_nhwc_c16", K_SOFTMAX, BF16, NHWC, 2, 16, 5, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f16_nchw_c19", K_SOFTMAX, F16, NCHW, 2, 19, 5, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f32_nchw_c8", K_SOFTMAX, F32, NCHW, 2, 8, 6, 6, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f32_2d_c64_nan", K_SOFTMAX, F32, NCHW, 9, 64, 1, 1, 0, 0, 0, 0, 0, 0, 0, 97, 2},
    {"softmax_f16_2d_c4096_long_nan", K_SOFTMAX, F16, NCHW, 5, 4096, 1, 1, 0, 0, 0, 0, 0, 0, 0, 9000, 2},
    /* channels first: C = 32 and 1 with odd H*W (the loop kernel), 45 (past the registers), 21
     * f32 with NaN (H*W = 42: in registers) */
    {"softmax_bf16_nchw_c32", K_SOFTMAX, BF16, NCHW, 2, 32, 9, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f32_nchw_c1", K_SOFTMAX, F32, NCHW, 2, 1, 9, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f16_nchw_c45", K_SOFTMAX, F16, NCHW, 2, 45, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f32_nchw_c21_nan", K_SOFTMAX, F32, NCHW, 2, 21, 6, 7, 0, 0, 0, 0, 0, 0, 0, 31, 4},
    /* channels first, C <= 24 and H*W a multiple of the vector (8 positions for 16-bit, 2
     * for f32): the loaded vectors in registers; odd H*W: the loop kernel */
    {"softmax_f16_nchw_c21_16x16_reg", K_SOFTMAX, F16, NCHW, 3, 21, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_bf16_nchw_c24_8x6_reg", K_SOFTMAX, BF16, NCHW, 2, 24, 8, 6, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f32_nchw_c1_4x2_reg", K_SOFTMAX, F32, NCHW, 3, 1, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f32_nchw_c5_3x3", K_SOFTMAX, F32, NCHW, 3, 5, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"softmax_f16_nchw_c21_8x8_reg_nan", K_SOFTMAX, F16, NCHW, 2, 21, 8, 8, 0, 0, 0, 0, 0, 0, 0, 29, 4},
    {"softmax_f32_nchw_c21_6x8_reg_nan", K_SOFTMAX, F32, NCHW, 2, 21, 6, 8, 0, 0, 0, 0, 0, 0, 0, 31, 4},
    {"softmax_f16_nchw_c33_8x8", K_SOFTMAX, F16, NCHW, 2, 33, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    /* -inf entries give 0, a slice of only -inf gives NaN (nnop.h), on each kernel's path */
    {"softmax_f32_2d_c64_neginf", K_SOFTMAX, F32, NCHW, 9, 64, 1, 1, 0, 0, 0, 0, 0, 0, 0, -7, 2},
    {"softmax_f16_2d_c4096_long_neginf", K_SOFTMAX, F16, NCHW, 5, 4096, 1, 1, 0, 0, 0, 0, 0, 0, 0, -50, 2},
    {"softmax_bf16_2d_c40000_long_neginf", K_SOFTMAX, BF16, NCHW, 3, 40000, 1, 1, 0, 0, 0, 0, 0, 0, 0, -77, 2},
    {"softmax_bf16_nhwc_c16_neginf", K_SOFTMAX, BF16, NHWC, 2, 16, 5, 7, 0, 0, 0, 0, 0, 0, 0, -5, 4},
    {"softmax_f16_nchw_c21_8x8_reg_neginf", K_SOFTMAX, F16, NCHW, 2, 21, 8, 8, 0, 0, 0, 0, 0, 0, 0, -5, 4},
    {"softmax_f32_nchw_c21_6x7_neginf", K_SOFTMAX, F32, NCHW, 2, 21, 6, 7, 0, 0, 0, 0, 0, 0, 0, -5, 4},
    {"softmax_f16_nchw_c45_neginf", K_SOFTMAX, F16, NCHW, 2, 45, 6, 7, 0, 0, 0, 0, 0, 0, 0, -5, 4},
    /* flatten: NHWC transpose (16- and 32-bit), NCHW and 1x1 spatial copies */
    {"flatten_f16_nhwc_c64_7x7", K_FLATTEN, F16, NHWC, 3, 64, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"flatten_f32_nhwc_c5_9x11", K_FLATTEN, F32, NHWC, 2, 5, 9, 11, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"flatten_bf16_nhwc_c40_33x3", K_FLATTEN, BF16, NHWC, 2, 40, 33, 3, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    /* partial 64 x 64 tiles on both sides */
    {"flatten_f16_nhwc_c130_9x9", K_FLATTEN, F16, NHWC, 2, 130, 9, 9, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"flatten_f32_nhwc_c70_10x13", K_FLATTEN, F32, NHWC, 2, 70, 10, 13, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    /* 16-bit with C and H*W even: word pairs both ways (partial tiles in positions and
     * channels); odd C, and odd H*W above (c64_7x7, c130_9x9): the element kernel */
    {"flatten_f16_nhwc_c96_14x14_pairs", K_FLATTEN, F16, NHWC, 3, 96, 14, 14, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"flatten_bf16_nhwc_c130_10x13_pairs", K_FLATTEN, BF16, NHWC, 2, 130, 10, 13, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"flatten_f16_nhwc_c7_8x8_odd_c", K_FLATTEN, F16, NHWC, 2, 7, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"flatten_f16_nchw", K_FLATTEN, F16, NCHW, 2, 6, 5, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"flatten_f16_nhwc_1x1", K_FLATTEN, F16, NHWC, 3, 24, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    /* standalone epilogue chain (add, bias, silu): vector path and scalar tail */
    {"epilogue_f16_nhwc_c64", K_EPILOGUE, F16, NHWC, 2, 64, 5, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"epilogue_bf16_nhwc_c3_tail", K_EPILOGUE, BF16, NHWC, 1, 3, 5, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"epilogue_f32_nchw_c6", K_EPILOGUE, F32, NCHW, 2, 6, 5, 8, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"epilogue_f16_nchw_c5_odd", K_EPILOGUE, F16, NCHW, 3, 5, 3, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    /* batch-norm, then two activations: the per-channel operands on the vector path */
    {"epilogue_bn_f16_nhwc_c64", K_EPILOGUE_BN, F16, NHWC, 2, 64, 5, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"epilogue_bn_f32_nchw_c6", K_EPILOGUE_BN, F32, NCHW, 2, 6, 5, 8, 0, 0, 0, 0, 0, 0, 0, 0, 4},
    {"epilogue_bn_bf16_nhwc_c24", K_EPILOGUE_BN, BF16, NHWC, 3, 24, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 4},
};
/* clang-format on */

static nnop_tensor_desc input_desc(const pool_case *pc)
{
    if (pc->ndim == 2)
        return nnop_tensor_2d(pc->dt, pc->n, pc->c);
    return nnop_tensor_4d(pc->dt, pc->lay, pc->n, pc->c, pc->h, pc->w);
}

static void build_case(nnop_graph *g, const void *arg)
{
    const pool_case *pc = (const pool_case *)arg;
    nnop_tensor_desc xd = input_desc(pc), kd = nnop_tensor_1d(pc->dt, pc->c);
    nnop_value x = nnop_input(g, "x", &xd), y;
    nnop_pool_params p;
    memset(&p, 0, sizeof p);
    p.window[0] = pc->kh, p.window[1] = pc->kw;
    p.stride[0] = pc->sh, p.stride[1] = pc->sw;
    p.pad[0] = pc->ph, p.pad[1] = pc->pw;
    p.count_include_pad = pc->incl;
    switch (pc->kind) {
    case K_MAX:
    case K_AVG:
        y = nnop_pool(g, x, pc->kind == K_MAX ? NNOP_POOL_MAX : NNOP_POOL_AVG, &p);
        break;
    case K_GAP:
        y = nnop_global_avg_pool(g, x);
        break;
    case K_SOFTMAX:
        y = nnop_softmax(g, x);
        break;
    case K_FLATTEN:
        y = nnop_flatten(g, x);
        break;
    case K_EPILOGUE_BN:
        y = nnop_batchnorm(g, x, h_const(g, "gamma", &kd, 42, 0.5f, 1.5f),
                           h_const(g, "beta", &kd, 43, -0.5f, 0.5f),
                           h_const(g, "mean", &kd, 44, -0.5f, 0.5f),
                           h_const(g, "var", &kd, 45, 0.25f, 2.0f), 1e-5f);
        y = nnop_act(g, y, NNOP_ACT_GELU, 0.0f);
        y = nnop_clamp(g, y, -0.25f, 0.75f);
        break;
    default:
        y = nnop_add(g, x, nnop_input(g, "z", &xd));
        y = nnop_bias(g, y, h_const(g, "bias", &kd, 41, -0.5f, 0.5f));
        y = nnop_act(g, y, NNOP_ACT_SILU, 0.0f);
        break;
    }
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

static const char *kernel_of(int kind)
{
    static const char *const names[] = {
            "own kernel: pool",    "own kernel: pool",    "own kernel: global_avg_pool",
            "own kernel: softmax", "own kernel: flatten", "own kernel: epilogue",
            "own kernel: epilogue"};
    return names[kind];
}

/* A NaN case: every pc->nan-th input element NaN on both backends (or -inf, and one slice all
 * -inf: NaN there); the GPU output is poisoned with finite bytes (0x5A), so an output left
 * unwritten where NaN is expected shows too. */
static void run_nan_case(h_run *r, const pool_case *pc)
{
    h_pair hp;
    nnop_tensor_desc d;
    int64_t i, n;
    if (!h_compile(r, &hp, build_case, pc))
        fail_msg("%s: GPU compile: %s: %s", pc->name, nnop_status_string(r->gpu_compile_status),
                 r->gpu_error);
    h_buffers(r, &hp);
    assert_int_equal(nnop_plan_input_desc(hp.pc, 0, &d), NNOP_OK);
    n = nnop_tensor_elements(&d);
    for (i = 3; pc->nan > 0 && i < n; i += pc->nan)
        h_set_special(d.dtype, hp.hin[0], i, NAN);
    for (i = 3; pc->nan < 0 && i < n; i += -pc->nan)
        h_set_special(d.dtype, hp.hin[0], i, -INFINITY);
    for (i = 0; pc->nan < 0 && i < d.dims[1]; i++) { /* the first slice; the next but its last */
        const int64_t next = d.ndim == 2 ? d.strides[0] : d.strides[3];
        h_set_special(d.dtype, hp.hin[0], i * d.strides[1], -INFINITY);
        if (i + 1 < d.dims[1])
            h_set_special(d.dtype, hp.hin[0], next + i * d.strides[1], -INFINITY);
    }
    h_check_special(r, &hp, pc->name, kernel_of(pc->kind));
    h_release(&hp);
}

static void run_case(void **state)
{
    const pool_case *pc = (const pool_case *)*state;
    h_run r;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, pc->dt, 1.0);
    if (pc->nan)
        run_nan_case(&r, pc);
    else
        h_check_case(&r, pc->name, build_case, pc, kernel_of(pc->kind));
}

int main(void)
{
    return h_run_table("gpu_pool", cases, sizeof cases / sizeof cases[0], sizeof cases[0],
                       run_case);
}
