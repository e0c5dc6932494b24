/* test_gpu_conv.c: fused conv partitions on the GPU against the CPU reference: dtypes,
 * layouts, kernel sizes, strides, padding, dilation, groups, odd sizes, every activation,
 * bias on/off, batch-norm (folded and runtime), residual add, engine policies. */
#include "gpu_harness.h"

typedef struct conv_case {
    const char *name;
    nnop_dtype dt;
    nnop_layout lay;
    int64_t n, c, h, w, k, r, s, stride, pad, dil, groups;
    int bias; /* 0 none, 1 constant, 2 graph input */
    int act;  /* nnop_act_kind, -1 none */
    float alpha;
    int bn;       /* 0 none, 1 constant parameters (folded), 2 runtime parameters */
    int residual; /* add a second input of the output's shape before the activation */
    int w_input;  /* weights as a graph input instead of a constant */
    nnop_engine_policy policy;
    int autotune;
    const char *expect; /* substring the plan description must contain, or NULL */
} conv_case;

#define F16  NNOP_F16
#define BF16 NNOP_BF16
#define F32  NNOP_F32
#define NHWC NNOP_NHWC
#define NCHW NNOP_NCHW
#define PP   NNOP_POLICY_PREFER_PRECOMPILED

/* one case per line reads as a table */
/* clang-format off */
static const conv_case cases[] = {
    {"fp16_nhwc_3x3_bias_relu", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "precompiled"},
    {"bf16_nhwc_3x3_bias_relu", BF16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp32_nhwc_3x3_bias_relu", F32, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nchw_3x3_bias_relu", F16, NCHW, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp32_nchw_3x3_bias_relu", F32, NCHW, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"bf16_nchw_3x3_bias_relu", BF16, NCHW, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_1x1", F16, NHWC, 2, 64, 14, 14, 64, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_5x5_pad2", F16, NHWC, 2, 16, 13, 13, 16, 5, 5, 1, 2, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_7x7_s2_pad3_c3", F16, NHWC, 2, 3, 32, 32, 16, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "zero-padded"},
    {"bf16_nhwc_7x7_s2_pad3_c3_bn", BF16, NHWC, 2, 3, 32, 32, 16, 7, 7, 2, 3, 1, 1, 0, 1, 0, 1, 0, 0, PP, 0, "zero-padded"},
    {"fp16_nhwc_7x7_s2_pad3_c3_k64_stem_kernel", F16, NHWC, 3, 3, 17, 23, 64, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "own kernel: stem conv"},
    {"bf16_nhwc_7x7_s2_pad3_c3_k64_bn_stem_kernel", BF16, NHWC, 2, 3, 40, 36, 64, 7, 7, 2, 3, 1, 1, 0, 1, 0, 1, 0, 0, PP, 0, "own kernel: stem conv, bn/bias folded"},
    {"fp16_nhwc_5x3_s2_c4_k64_stem_kernel_no_act", F16, NHWC, 2, 4, 21, 19, 64, 5, 3, 2, 1, 1, 1, 1, -1, 0, 0, 0, 0, PP, 0, "own kernel: stem conv"},
    {"fp16_nhwc_3x3_s2_c1_k64_stem_kernel_conv_only", F16, NHWC, 2, 1, 33, 31, 64, 3, 3, 2, 1, 1, 1, 0, -1, 0, 0, 0, 0, PP, 0, "own kernel: stem conv"},
    {"fp16_nhwc_7x7_s2_c3_k64_gelu_not_stem_kernel", F16, NHWC, 2, 3, 32, 32, 64, 7, 7, 2, 3, 1, 1, 1, NNOP_ACT_GELU, 0, 0, 0, 0, PP, 0, "zero-padded"},
    {"fp32_nchw_7x7_s2_pad3_c3", F32, NCHW, 2, 3, 32, 32, 16, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_3x3_s2", F16, NHWC, 2, 16, 15, 15, 32, 3, 3, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_3x3_dil2", F16, NHWC, 2, 16, 15, 15, 16, 3, 3, 1, 2, 2, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_groups2", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 2, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_depthwise", F16, NHWC, 2, 32, 12, 12, 32, 3, 3, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, PP, 0, "own kernel: depthwise conv, tap-major weights"},
    {"bf16_nchw_depthwise_5x5_s2_bn_relu6", BF16, NCHW, 3, 19, 17, 13, 19, 5, 5, 2, 2, 1, 19, 0, NNOP_ACT_RELU6, 0, 1, 0, 0, PP, 0, "own kernel: depthwise conv"},
    {"fp32_nhwc_depthwise_dil2_residual", F32, NHWC, 2, 24, 11, 9, 24, 3, 3, 1, 2, 2, 24, 1, 1, 0, 0, 1, 0, PP, 0, "own kernel: depthwise conv, tap-major weights"},
    {"fp16_nhwc_depthwise_7x7_weights_input", F16, NHWC, 1, 40, 14, 14, 40, 7, 7, 1, 3, 1, 40, 1, NNOP_ACT_SILU, 0, 0, 0, 1, PP, 0, "own kernel: depthwise conv"},
    {"fp32_nchw_depthwise_kernel_larger_than_input", F32, NCHW, 2, 5, 2, 3, 5, 5, 5, 1, 2, 1, 5, 1, -1, 0, 0, 0, 0, PP, 0, "own kernel: depthwise conv"},
    /* the channels-last tiled kernel (V = 4 channels, TW outputs a thread, fixed widths 3/5/7
     * at stride 1 and 2, any width otherwise) and its fused per-channel epilogue */
    {"fp16_nhwc_depthwise_3x3_tiled_bias_relu_odd_w", F16, NHWC, 3, 64, 13, 11, 64, 3, 3, 1, 1, 1, 64, 1, 1, 0, 0, 0, 0, PP, 0, "epilogue fused: bias + activation]"},
    {"bf16_nhwc_depthwise_5x5_s2_bn_relu6_fused", BF16, NHWC, 2, 36, 17, 19, 36, 5, 5, 2, 2, 1, 36, 0, NNOP_ACT_RELU6, 0, 1, 0, 0, PP, 0, "epilogue fused: scale/shift + activation]"},
    {"fp32_nhwc_depthwise_7x7_s2_bias_silu", F32, NHWC, 2, 20, 23, 29, 20, 7, 7, 2, 3, 1, 20, 1, NNOP_ACT_SILU, 0, 0, 0, 0, PP, 0, "epilogue fused: bias + activation]"},
    {"fp16_nhwc_depthwise_7x7_tw8_bias_gelu", F16, NHWC, 8, 128, 56, 53, 128, 7, 7, 1, 3, 1, 128, 1, NNOP_ACT_GELU, 0, 0, 0, 0, PP, 0, "epilogue fused: bias + activation]"},
    {"bf16_nhwc_depthwise_3x3_tw8_bn_runtime_hardswish", BF16, NHWC, 16, 96, 57, 57, 96, 3, 3, 1, 1, 1, 96, 1, NNOP_ACT_HARDSWISH, 0, 2, 0, 0, PP, 0, "epilogue fused: bias + batch-norm + activation]"},
    {"fp16_nhwc_depthwise_3x3_s2_tw4_bias_relu6", F16, NHWC, 32, 144, 56, 55, 144, 3, 3, 2, 1, 1, 144, 1, NNOP_ACT_RELU6, 0, 0, 0, 0, PP, 0, "epilogue fused: bias + activation]"},
    {"fp16_nhwc_depthwise_5x5_larger_than_input_silu", F16, NHWC, 2, 16, 2, 3, 16, 5, 5, 1, 2, 1, 16, 1, NNOP_ACT_SILU, 0, 0, 0, 0, PP, 0, "epilogue fused: bias + activation]"},
    {"bf16_nhwc_depthwise_7x7_c184_bn_hardswish", BF16, NHWC, 3, 184, 14, 13, 184, 7, 7, 1, 3, 1, 184, 0, NNOP_ACT_HARDSWISH, 0, 1, 0, 0, PP, 0, "epilogue fused: scale/shift + activation]"},
    {"fp32_nhwc_depthwise_5x5_s2_c60_residual", F32, NHWC, 2, 60, 21, 18, 60, 5, 5, 2, 2, 1, 60, 1, 1, 0, 0, 1, 0, PP, 0, "own kernel: depthwise conv, tap-major weights"},
    {"fp16_nhwc_depthwise_3x3_b8_112x111_bn_silu", F16, NHWC, 8, 32, 112, 111, 32, 3, 3, 1, 1, 1, 32, 1, NNOP_ACT_SILU, 0, 2, 0, 0, PP, 0, "epilogue fused: bias + batch-norm + activation]"},
    {"fp16_nhwc_depthwise_c7_one_channel_a_thread", F16, NHWC, 2, 7, 9, 10, 7, 3, 3, 1, 1, 1, 7, 1, NNOP_ACT_GELU_TANH, 0, 0, 0, 0, PP, 0, "epilogue fused: bias + activation]"},
    {"fp32_nhwc_depthwise_3x3_dil2_any_width_path", F32, NHWC, 2, 12, 10, 9, 12, 3, 3, 1, 2, 2, 12, 1, NNOP_ACT_LEAKY_RELU, 0.1f, 0, 0, 0, PP, 0, "epilogue fused: bias + activation]"},
    {"fp16_nhwc_depthwise_4x4_s2_any_width_path", F16, NHWC, 2, 16, 11, 12, 16, 4, 4, 2, 1, 1, 16, 1, NNOP_ACT_ELU, 1.0f, 0, 0, 0, PP, 0, "epilogue fused: bias + activation]"},
    {"fp16_nhwc_depthwise_bias_then_residual_split", F16, NHWC, 2, 32, 9, 9, 32, 3, 3, 1, 1, 1, 32, 1, 1, 0, 0, 1, 0, PP, 0, "epilogue fused: bias]"},
    {"fp32_nchw_depthwise_bn_relu_general_kernel_fused", F32, NCHW, 2, 10, 9, 8, 10, 3, 3, 1, 1, 1, 10, 1, 1, 0, 1, 0, 0, PP, 0, "depthwise conv, epilogue fused: bias + scale/shift + activation]"},
    {"fp16_nhwc_odd_n3_c3_k7_17x13", F16, NHWC, 3, 3, 17, 13, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp32_nchw_odd_n3_c3_k7_17x17", F32, NCHW, 3, 3, 17, 17, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"bf16_nhwc_odd_n3_c5_k7_pad0", BF16, NHWC, 3, 5, 17, 11, 7, 3, 3, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_no_bias_relu", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_bias_no_act", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, -1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_conv_only", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 0, -1, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_relu6", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_RELU6, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_clamp", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_CLAMP, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_leaky_relu", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_LEAKY_RELU, 0.1f, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_gelu", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_GELU, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_gelu_tanh", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_GELU_TANH, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_sigmoid", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_SIGMOID, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_tanh", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_TANH, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_silu", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_SILU, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_elu", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_ELU, 1.0f, 0, 0, 0, PP, 0, NULL},
    {"fp32_nhwc_sigmoid", F32, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_SIGMOID, 0, 0, 0, 0, PP, 0, NULL},
    {"fp16_nhwc_bn_relu_folded", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, PP, 0, "folded"},
    {"bf16_nhwc_bias_bn_relu_folded", BF16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, PP, 0, "folded"},
    {"fp32_nchw_bn_relu_folded", F32, NCHW, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, PP, 0, "folded"},
    {"fp16_nhwc_bn_runtime_params", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 2, 0, 0, PP, 0, "split"},
    {"fp16_nhwc_residual_relu", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, PP, 0, "precompiled"},
    {"bf16_nhwc_bn_residual_relu", BF16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, PP, 0, NULL},
    {"fp32_nchw_residual_relu", F32, NCHW, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, PP, 0, NULL},
    {"fp16_nhwc_runtime_weights_bias", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 2, 1, 0, 0, 0, 1, PP, 0, NULL},
    {"fp16_nhwc_precompiled_only_gelu_splits", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_GELU, 0, 0, 0, 0, NNOP_POLICY_PRECOMPILED_ONLY, 0, "split"},
    {"fp16_nhwc_precompiled_only_sigmoid_splits", F16, NHWC, 2, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_SIGMOID, 0, 0, 0, 0, NNOP_POLICY_PRECOMPILED_ONLY, 0, "split"},
    {"fp16_nhwc_autotune", F16, NHWC, 32, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 1, "autotuned"},
    /* autotuning times other knob choices of the fastest engine too (cuDNN offers 30-40
     * configs for a 3x3 conv), odd and asymmetric ones, each dtype; outputs too big for the
     * own implicit GEMM (below), should it be on */
    {"fp16_nhwc_b4_56x56_autotune_knobs", F16, NHWC, 4, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 1, "configs"},
    {"fp16_nhwc_b16_s2_bn_autotune_knobs", F16, NHWC, 16, 256, 28, 28, 256, 3, 3, 2, 1, 1, 1, 1, 1, 0, 1, 0, 0, PP, 1, "configs"},
    {"bf16_nhwc_b4_residual_autotune_knobs", BF16, NHWC, 4, 48, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, PP, 1, "configs"},
    {"fp16_nchw_odd_3x5_autotune_knobs", F16, NCHW, 3, 24, 17, 9, 40, 3, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 1, "autotuned"},
    {"fp32_nhwc_odd_autotune_knobs", F32, NHWC, 2, 32, 15, 11, 48, 3, 3, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 1, "autotuned"},
};
/* clang-format on */

/* The own split-K implicit GEMM (16-bit channels-last, >= 64 channels, few output tiles),
 * run alone by `test_gpu_conv --igemm` (ctest gpu.conv_igemm, NNOP_ENABLE_IMPL naming it):
 * ResNet-50's batch-1 shapes (the 7x7 one split 16 ways on an H200), residual adds and every
 * epilogue kind (the fast form: add, bias, ReLU in that order, any of them; the general one:
 * the rest), channels not a multiple of the 64-wide tile, outputs not a multiple of the
 * 64-pixel tile, filters larger than the image, 1x1 images, dilation, stride, runtime
 * batch-norm parameters; with and without autotuning (it is not timed) */
/* clang-format off */
static const conv_case igemm_cases[] = {
    {"fp16_nhwc_igemm_b1_7x7_c512_bias_relu", F16, NHWC, 1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "implicit-GEMM conv"},
    {"fp16_nhwc_igemm_b1_56x56_autotune", F16, NHWC, 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 1, "implicit-GEMM conv"},
    {"fp16_nhwc_igemm_b1_s2_bn_folded", F16, NHWC, 1, 256, 28, 28, 256, 3, 3, 2, 1, 1, 1, 1, 1, 0, 1, 0, 0, PP, 1, "implicit-GEMM conv, split"},
    {"bf16_nhwc_igemm_b1_bn_residual_relu", BF16, NHWC, 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, PP, 0, "bn/bias folded, epilogue of 3 ops fused"},
    {"fp16_nhwc_igemm_1x1_c2048_to_512_residual", F16, NHWC, 1, 2048, 7, 7, 512, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 0, PP, 0, "implicit-GEMM conv"},
    {"bf16_nhwc_igemm_1x1_s2_downsample_bn", BF16, NHWC, 1, 256, 28, 28, 512, 1, 1, 2, 0, 1, 1, 0, -1, 0, 1, 0, 0, PP, 0, "implicit-GEMM conv"},
    {"fp16_nhwc_igemm_odd_c72_k136_3x3_s2", F16, NHWC, 3, 72, 9, 11, 136, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "implicit-GEMM conv"},
    {"bf16_nhwc_igemm_odd_c200_k88_5x5_gelu", BF16, NHWC, 2, 200, 5, 7, 88, 5, 5, 1, 2, 1, 1, 1, NNOP_ACT_GELU, 0, 0, 0, 0, PP, 0, "implicit-GEMM conv"},
    {"fp16_nhwc_igemm_filter_larger_than_image", F16, NHWC, 1, 64, 2, 3, 64, 5, 5, 1, 2, 1, 1, 1, NNOP_ACT_SILU, 0, 0, 0, 0, PP, 0, "implicit-GEMM conv"},
    {"fp16_nhwc_igemm_1x1_images", F16, NHWC, 2, 128, 1, 1, 256, 1, 1, 1, 0, 1, 1, 1, NNOP_ACT_TANH, 0, 0, 0, 0, PP, 0, "implicit-GEMM conv"},
    {"fp16_nhwc_igemm_dil2_no_epilogue", F16, NHWC, 1, 64, 15, 13, 64, 3, 3, 1, 2, 2, 1, 0, -1, 0, 0, 0, 0, PP, 0, "epilogue of 0 ops"},
    {"bf16_nhwc_igemm_bn_runtime_leaky", BF16, NHWC, 2, 96, 10, 9, 160, 3, 3, 1, 1, 1, 1, 1, NNOP_ACT_LEAKY_RELU, 0.1f, 2, 0, 0, PP, 0, "implicit-GEMM conv"},
    {"bf16_nhwc_igemm_b1_residual_no_act", BF16, NHWC, 1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, 1, -1, 0, 0, 1, 0, PP, 0, "epilogue of 2 ops fused"},
    {"fp16_nhwc_igemm_b1_relu_only", F16, NHWC, 1, 64, 19, 23, 64, 3, 3, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, PP, 0, "epilogue of 1 op fused"},
};
/* clang-format on */

/* A conv case, then a pool over its output (the ResNet stem and its max pool). */
typedef struct pooled_case {
    conv_case conv;
    int64_t window, stride, pad;
    int avg;        /* average pooling instead of max */
    int conv_out;   /* the conv's output a graph output too */
    const char *no; /* substring the plan description must not contain, or NULL */
    int special;    /* > 0: every special-th input element NaN; < 0: every -special-th +inf */
} pooled_case;

#define FUSED "3x3/2 max pool fused"

/* clang-format off */
static const pooled_case pooled_cases[] = {
    /* the ResNet-50 stem and its pool, two images: 112 -> 56, 8 x 8 tiles of 7 x 7 */
    {{"fp16_nhwc_resnet_stem_maxpool_fused", F16, NHWC, 2, 3, 224, 224, 64, 7, 7, 2, 3, 1, 1, 1, 1, 0, 1, 0, 0, PP, 0, FUSED}, 3, 2, 1, 0, 0, NULL, 0},
    /* odd sizes: conv 19 x 27, pool 10 x 14 (partial tiles both ways), bn folded */
    {{"bf16_nhwc_stem_bn_maxpool_fused_odd", BF16, NHWC, 3, 3, 37, 53, 64, 7, 7, 2, 3, 1, 1, 0, 1, 0, 1, 0, 0, PP, 0, FUSED}, 3, 2, 1, 0, 0, NULL, 0},
    /* no activation: negative values and the pool's padding */
    {{"fp16_nhwc_stem_no_act_maxpool_fused", F16, NHWC, 2, 4, 30, 17, 64, 5, 3, 2, 1, 1, 1, 1, -1, 0, 0, 0, 0, PP, 0, FUSED}, 3, 2, 1, 0, 0, NULL, 0},
    /* a 1 x 1 image under a 7 x 7 filter: conv 1 x 1, pool 1 x 1 */
    {{"fp16_nhwc_stem_1x1_image_maxpool_fused", F16, NHWC, 2, 3, 1, 1, 64, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, FUSED}, 3, 2, 1, 0, 0, NULL, 0},
    /* 15 x 15 conv (one pooled tile and a row of one more), 8 x 8 pool */
    {{"bf16_nhwc_stem_15x15_maxpool_fused", BF16, NHWC, 1, 3, 29, 30, 64, 3, 3, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, FUSED}, 3, 2, 1, 0, 0, NULL, 0},
    /* not fused: another window, average pooling, the conv's output also read by the caller */
    {{"fp16_nhwc_stem_maxpool_2x2_not_fused", F16, NHWC, 2, 3, 40, 36, 64, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "stem conv"}, 2, 2, 0, 0, 0, FUSED, 0},
    {{"fp16_nhwc_stem_avgpool_not_fused", F16, NHWC, 2, 3, 40, 36, 64, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "stem conv"}, 3, 2, 1, 1, 0, FUSED, 0},
    {{"fp16_nhwc_stem_output_read_not_fused", F16, NHWC, 2, 3, 40, 36, 64, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "stem conv"}, 3, 2, 1, 0, 1, FUSED, 0},
    /* NaN and infinite inputs reach exactly the outputs whose windows hold them (PyTorch's
     * rules: ReLU and max pool keep NaN): the kernel's K slices span 8 filter columns, the
     * 8th weight zero for a 7-wide filter, and 0 x NaN must not leak into a neighbour. The
     * spacings leave outputs without NaN, and with the leak 11, 6 and 5 pooled positions of
     * the NaN cases would differ (counted on the host from the NaN positions) */
    {{"fp16_nhwc_stem_nan_maxpool_fused", F16, NHWC, 2, 3, 37, 53, 64, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, FUSED}, 3, 2, 1, 0, 0, NULL, 211},
    {{"bf16_nhwc_stem_inf_no_act_maxpool_fused", BF16, NHWC, 2, 3, 37, 53, 64, 7, 7, 2, 3, 1, 1, 1, -1, 0, 0, 0, 0, PP, 0, FUSED}, 3, 2, 1, 0, 0, NULL, -97},
    {{"fp16_nhwc_stem_nan_5x5_maxpool_fused", F16, NHWC, 1, 4, 30, 17, 64, 5, 5, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, FUSED}, 3, 2, 1, 0, 0, NULL, 401},
    {{"fp16_nhwc_stem_nan_maxpool_2x2_not_fused", F16, NHWC, 2, 3, 40, 36, 64, 7, 7, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, PP, 0, "stem conv"}, 2, 2, 0, 0, 0, FUSED, 211},
};
/* clang-format on */

/* The case's conv and its epilogue, on a new input "x". */
static nnop_value build_conv(nnop_graph *g, const conv_case *cc)
{
    nnop_tensor_desc xd = nnop_tensor_4d(cc->dt, cc->lay, cc->n, cc->c, cc->h, cc->w);
    nnop_tensor_desc wd = nnop_tensor_4d(cc->dt, cc->lay, cc->k, cc->c / cc->groups, cc->r, cc->s);
    nnop_tensor_desc kd = nnop_tensor_1d(cc->dt, cc->k), yd;
    nnop_conv_params p;
    float ws = 1.0f / sqrtf((float)(cc->c / cc->groups * cc->r * cc->s));
    nnop_value x = nnop_input(g, "x", &xd), w, y;
    p.pad[0] = p.pad[1] = cc->pad;
    p.stride[0] = p.stride[1] = cc->stride;
    p.dilation[0] = p.dilation[1] = cc->dil;
    p.groups = cc->groups;
    w = cc->w_input ? nnop_input(g, "w", &wd) : h_const(g, "w", &wd, 11, -ws, ws);
    y = nnop_conv(g, x, w, &p);
    if (cc->bias)
        y = nnop_bias(g, y,
                      cc->bias == 2 ? nnop_input(g, "b", &kd)
                                    : h_const(g, "b", &kd, 12, -0.5f, 0.5f));
    if (cc->bn == 1)
        y = nnop_batchnorm(g, y, h_const(g, "gamma", &kd, 13, 0.5f, 1.5f),
                           h_const(g, "beta", &kd, 14, -0.5f, 0.5f),
                           h_const(g, "mean", &kd, 15, -0.5f, 0.5f),
                           h_const(g, "var", &kd, 16, 0.5f, 1.5f), 1e-5f);
    if (cc->bn == 2) /* runtime parameters; var from [-1, 1) inputs would be negative: abs'd */
        y = nnop_batchnorm(g, y, nnop_input(g, "gamma", &kd), nnop_input(g, "beta", &kd),
                           nnop_input(g, "mean", &kd), h_const(g, "var", &kd, 16, 0.5f, 1.5f),
                           1e-5f);
    if (cc->residual) {
        assert_int_equal(nnop_value_desc(g, y, &yd), NNOP_OK);
        y = nnop_add(g, y, nnop_input(g, "z", &yd));
    }
    if (cc->act == NNOP_ACT_CLAMP)
        y = nnop_clamp(g, y, -0.5f, 0.5f);
    else if (cc->act >= 0)
        y = nnop_act(g, y, (nnop_act_kind)cc->act, cc->alpha);
    return y;
}

static void build_case(nnop_graph *g, const void *arg)
{
    assert_int_equal(nnop_output(g, build_conv(g, (const conv_case *)arg), "y"), NNOP_OK);
}

/* The case's conv pooled into output "pool" (the conv's output "y" an output too or not). */
static void build_pooled(nnop_graph *g, const void *arg)
{
    const pooled_case *pc = (const pooled_case *)arg;
    nnop_value y = build_conv(g, &pc->conv);
    nnop_pool_params q;
    memset(&q, 0, sizeof q);
    q.window[0] = q.window[1] = pc->window;
    q.stride[0] = q.stride[1] = pc->stride;
    q.pad[0] = q.pad[1] = pc->pad;
    if (pc->conv_out)
        assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    assert_int_equal(
            nnop_output(g, nnop_pool(g, y, pc->avg ? NNOP_POOL_AVG : NNOP_POOL_MAX, &q), "pool"),
            NNOP_OK);
}

/* Every "fastest of N configs" the description gives counts at least two timed configs. */
static void check_timed_counts(const char *name, const char *describe)
{
    const char *at = describe;
    while ((at = strstr(at, "fastest of ")) != NULL) {
        int n = atoi(at + strlen("fastest of "));
        if (n < 2)
            fail_msg("%s: autotuning timed %d configs:\n%s", name, n, describe);
        at++;
    }
}

static void run_case(void **state)
{
    const conv_case *cc = (const conv_case *)*state;
    h_run r;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, cc->dt, (double)(cc->c / cc->groups * cc->r * cc->s));
    r.gpu_opts.policy = cc->policy;
    r.gpu_opts.autotune = cc->autotune;
    h_check_case(&r, cc->name, build_case, cc, cc->expect);
    if (cc->autotune)
        check_timed_counts(cc->name, r.describe);
}

/* A pooled case with every |special|-th input element NaN or +inf on both backends. */
static void run_pooled_special(h_run *r, const pooled_case *pc)
{
    const conv_case *cc = &pc->conv;
    h_pair hp;
    nnop_tensor_desc d;
    int64_t i, n, every = pc->special > 0 ? pc->special : -pc->special;
    if (!h_compile(r, &hp, build_pooled, pc))
        fail_msg("%s: GPU compile: %s: %s", cc->name, nnop_status_string(r->gpu_compile_status),
                 r->gpu_error);
    h_buffers(r, &hp);
    assert_int_equal(nnop_plan_input_desc(hp.pc, 0, &d), NNOP_OK);
    n = nnop_tensor_elements(&d);
    for (i = 5; i < n; i += every)
        h_set_special(d.dtype, hp.hin[0], i, pc->special > 0 ? NAN : INFINITY);
    h_check_special(r, &hp, cc->name, cc->expect);
    h_release(&hp);
}

static void run_pooled(void **state)
{
    const pooled_case *pc = (const pooled_case *)*state;
    const conv_case *cc = &pc->conv;
    h_run r;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, cc->dt, (double)(cc->c * cc->r * cc->s));
    if (pc->special)
        run_pooled_special(&r, pc);
    else
        h_check_case(&r, cc->name, build_pooled, pc, cc->expect);
    if (pc->no && strstr(r.describe, pc->no))
        fail_msg("%s: plan description has '%s':\n%s", cc->name, pc->no, r.describe);
}

/* Two tables, one exit code: skipped (77) only when both were, else failed if either was;
 * with --igemm the implicit-GEMM table alone. */
int main(int argc, char **argv)
{
    int a, b;
    if (argc > 1 && strcmp(argv[1], "--igemm") == 0)
        return h_run_table("gpu_conv_igemm", igemm_cases,
                           sizeof igemm_cases / sizeof igemm_cases[0], sizeof igemm_cases[0],
                           run_case);
    a = h_run_table("gpu_conv", cases, sizeof cases / sizeof cases[0], sizeof cases[0], run_case);
    b = h_run_table("gpu_conv_pooled", pooled_cases, sizeof pooled_cases / sizeof pooled_cases[0],
                    sizeof pooled_cases[0], run_pooled);
    if (a == NNOP_TEST_SKIPPED && b == NNOP_TEST_SKIPPED)
        return NNOP_TEST_SKIPPED;
    return (a != 0 && a != NNOP_TEST_SKIPPED) || (b != 0 && b != NNOP_TEST_SKIPPED);
}
