/* test_gpu_new_ops.c: the ops of issue 15 on the GPU against the CPU reference, in all three
 * dtypes and both layouts, on odd shapes: mul/sub/div with each broadcast form (standalone and
 * split off a conv), a constant layer scale folded into the conv, the activations cuDNN has no
 * mode for (split off a conv and standalone), layer norm over C (warp and thread paths) and
 * over C, H, W (per-element gamma), group and instance norm, RMS norm (layer and RMS norm on
 * cuDNN's norm-forward where it takes them, else the own kernel with cuDNN's reason), channel
 * concat of three
 * inputs (and of 2-D ones), nearest and bilinear resize by scale and by size (align_corners
 * both ways, down and up, an axis that keeps its size), transposed convs (stride = kernel, padded
 * with output padding, grouped, dilated) with a bias+ReLU epilogue, on cuDNN's data-gradient
 * convolution and (output padding not below the stride) on the own kernel. "wide" cases have
 * channel counts and positions that take the 16-byte paths (epilogue channel modes, concat rows,
 * channels-last resize). Squeeze-excitation blocks (pool, two 1x1 convs with their epilogues,
 * multiply) run their gate on the own gate kernel (channels-last: with the pool); one whose hidden
 * value is also an output does not. A depthwise conv followed by a layer or RMS norm over C
 * (ConvNeXt's 7x7 + layer norm; a strided 3x3; a 1x1 image; C = 20 on the kernel's scalar path; C =
 * 384 with 4-element vectors, which needs the plan's own buffers on both sides; no affine
 * parameters) runs as one step where channels are contiguous (channels-last, or a 1x1 image)
 * and as two channels-first; not when the conv's output is an output too. Concats of conv
 * outputs whose producers write straight into the slices where those are contiguous
 * (channels-first at batch 1), read again after the concat; strided slices are copied. A
 * norm and the pointwise chain after it (layer scale and residual add, GELU, SiLU, a multiply
 * by a per-sample or a full operand, hard-swish; every norm kind and kernel path) run as one
 * step. LRN (odd and even window) and the channel shuffle on their own kernels. Inputs are
 * seeded random, outputs poisoned. */
#include "gpu_harness.h"

enum {
    K_MUL_SAMPLE,    /* x * s, s N,C,1,1 (squeeze-excitation) */
    K_MUL_CHANNEL,   /* x * s, s 1,C,1,1 at run time */
    K_SUB_SAME,      /* x - y, same shape */
    K_DIV_SAMPLE,    /* x / sigmoid(s), s N,C,1,1 */
    K_CONV_SE,       /* conv -> bias -> mul by N,C,1,1 (split off cuDNN) */
    K_LAYER_SCALE,   /* conv -> bias -> mul by a constant 1,C,1,1 -> add x (folded) */
    K_CONV_HSWISH,   /* conv -> bias -> hard-swish (split off cuDNN) */
    K_HSIGMOID,      /* hard-sigmoid, standalone */
    K_MISH,          /* mish, standalone */
    K_LN_C,          /* layer norm over C, gamma and beta */
    K_LN_CHW,        /* layer norm over C, H, W, gamma 1,C,H,W, beta 1-D */
    K_GN,            /* group norm, 4 groups, affine */
    K_IN,            /* instance norm (groups = C), no affine */
    K_RMS,           /* RMS norm over C, gamma */
    K_CONCAT,        /* three 4-D inputs of 3, 8 and 5 channels */
    K_CONCAT_2D,     /* two N x C inputs */
    K_NEAREST_2X,    /* nearest, scale 2 */
    K_NEAREST_SIZE,  /* nearest, 7x5 -> 10x13 by size */
    K_BILINEAR,      /* bilinear, scale 2 */
    K_BILINEAR_AC,   /* bilinear, align_corners, by size, down in H and up in W */
    K_DECONV_S2,     /* 2x2 stride 2 (U-Net's up-convolution) + bias + relu */
    K_DECONV_PAD,    /* 3x3 stride 2 pad 1 output_pad 1 */
    K_DECONV_GROUP,  /* 3x3 stride 1 pad 1, 2 groups, dilation 2 */
    K_DECONV_OWN,    /* 3x3 stride 1 dilation 2 output_pad 1: no forward conv's gradient */
    K_MUL_WIDE,      /* x * s, x 2x16x4x6, s N,C,1,1 */
    K_CONCAT_WIDE,   /* inputs of 8 and 16 channels */
    K_BILINEAR_WIDE, /* bilinear, scale 2, 16 channels */
    K_BILINEAR_KEEP, /* bilinear, scale 1.1 x 2, 16 channels: H 7 -> 7 is a copy (as PyTorch's
                      * CPU kernel), W doubled */
    K_SE,            /* x * sigmoid(fc2(silu(fc1(gap(x))))), 12 -> 3 -> 12: one launch */
    K_SE_WIDE,       /* MobileNetV3's form: fc1 + batch-norm + ReLU, hard-sigmoid; 96 -> 24:
                      * two launches, 16-byte weight rows */
    K_SE_SHARED,     /* K_SE with fc1's output a graph output too: no gate kernel */
    K_ACT_BIG,       /* SiLU alone on 4x5x661x673 (8.9 M): the one-op kernel's four vectors a
                      * thread and (16-bit) its scalar tail */
    K_MUL_BIG,       /* x 8x24x151x157 (4.6 M) * s N,C,1,1: the one-op kernel's multiply */
    K_DW_LN,         /* relu(x) -> 7x7 depthwise + bias -> layer norm over C: C = 96, 9x11 */
    K_DW_RMS,        /* x -> 3x3/2 depthwise + bias + SiLU -> RMS norm over C: C = 40, 8x7 */
    K_DW_LN_PIXEL,   /* a 1x1 image through 7x7 pad 3 (every tap but one in the padding) */
    K_DW_LN_ODD,     /* x -> 5x5 depthwise -> layer norm, no affine: C = 20 (lanes of 1) */
    K_DW_LN_WIDE,    /* relu(x) -> 7x7 depthwise -> layer norm -> softmax: C = 384, 4x3,
                      * batch 3 */
    K_DW_LN_SHARED,  /* K_DW_LN with the conv's output a graph output too: two steps */
    K_CAT_CONV,      /* 1x1 conv of concat(a = relu(conv(x)), conv(x), relu(conv(x)), a) + a,
                      * batch 1: channels-first, every slice is contiguous and its producer
                      * writes it in place, but a's second slice, a copy (a is read after the
                      * concat too) */
    K_CAT_CONV_N2,   /* 1x1 conv of concat(relu(conv(x)), conv(x)), batch 2, the second also
                      * pooled: strided slices, copied */
    K_LN_EPI,        /* layer norm over C (96: warp path) -> constant layer scale -> add x */
    K_LN_VEC_EPI,    /* layer norm over C (64: the vector path in NHWC) -> tanh-GELU -> mul by
                      * an input of x's shape */
    K_LN_CHW_EPI,    /* layer norm over C, H, W, no affine -> constant bias -> GELU */
    K_GN_EPI,        /* group norm, 4 groups, affine -> SiLU (U-Net's block) */
    K_IN_EPI,        /* instance norm -> add an input of x's shape -> ReLU */
    K_RMS_EPI,       /* RMS norm -> mul by an N,C,1,1 input -> hard-swish */
    K_LRN,           /* LRN, size 5, AlexNet's alpha, beta, bias; C = 12 */
    K_LRN_EVEN,      /* LRN, size 4 (ONNX's window, one channel more after c), bias 2 */
    K_SHUFFLE,       /* channel shuffle, 3 groups of 4 channels */
    K_SHUFFLE_WIDE,  /* channel shuffle, 2 groups of 24 channels, after a ReLU */
    K_SLICE,         /* channels 3..9 of 12 */
    K_POOL_PAD_END,  /* max 3x3/2 padded 0 before, 1 after (AlexNet's), then average 3x3/2
                      * padded 1 before, 2 after, count_include_pad */
    K_SLICE_CHUNKS,  /* torch.chunk(x, 2, 1) of 48 channels: the halves, the second ReLU'd,
                      * concatenated and shuffled (ShuffleNet v2's unit) */
    K_KINDS
};

typedef struct new_case {
    const char *name;
    int kind;
    nnop_dtype dt;
    nnop_layout lay;
} new_case;

#define F16  NNOP_F16
#define BF16 NNOP_BF16
#define F32  NNOP_F32
#define NHWC NNOP_NHWC
#define NCHW NNOP_NCHW

#define ROWS(name, kind)                                                                           \
    {name "_f32_nhwc", kind, F32, NHWC}, {name "_f16_nhwc", kind, F16, NHWC},                      \
            {name "_bf16_nhwc", kind, BF16, NHWC}, {name "_f32_nchw", kind, F32, NCHW},            \
            {name "_f16_nchw", kind, F16, NCHW},                                                   \
    {                                                                                              \
        name "_bf16_nchw", kind, BF16, NCHW                                                        \
    }

static const new_case cases[] = {
        ROWS("mul_sample", K_MUL_SAMPLE),
        ROWS("mul_channel", K_MUL_CHANNEL),
        ROWS("sub_same", K_SUB_SAME),
        ROWS("div_sample", K_DIV_SAMPLE),
        ROWS("conv_se", K_CONV_SE),
        ROWS("layer_scale", K_LAYER_SCALE),
        ROWS("conv_hswish", K_CONV_HSWISH),
        ROWS("hsigmoid", K_HSIGMOID),
        ROWS("mish", K_MISH),
        ROWS("ln_c", K_LN_C),
        ROWS("ln_chw", K_LN_CHW),
        ROWS("gn", K_GN),
        ROWS("in", K_IN),
        ROWS("rms", K_RMS),
        ROWS("se", K_SE),
        ROWS("se_wide", K_SE_WIDE),
        ROWS("se_shared", K_SE_SHARED),
        ROWS("act_big", K_ACT_BIG),
        ROWS("mul_big", K_MUL_BIG),
        ROWS("concat", K_CONCAT),
        ROWS("concat_2d", K_CONCAT_2D),
        ROWS("nearest_2x", K_NEAREST_2X),
        ROWS("nearest_size", K_NEAREST_SIZE),
        ROWS("bilinear", K_BILINEAR),
        ROWS("bilinear_ac", K_BILINEAR_AC),
        ROWS("deconv_s2", K_DECONV_S2),
        ROWS("deconv_pad", K_DECONV_PAD),
        ROWS("deconv_group", K_DECONV_GROUP),
        ROWS("deconv_own", K_DECONV_OWN),
        ROWS("mul_wide", K_MUL_WIDE),
        ROWS("concat_wide", K_CONCAT_WIDE),
        ROWS("bilinear_wide", K_BILINEAR_WIDE),
        ROWS("bilinear_keep", K_BILINEAR_KEEP),
        ROWS("dw_ln", K_DW_LN),
        ROWS("dw_rms", K_DW_RMS),
        ROWS("dw_ln_pixel", K_DW_LN_PIXEL),
        ROWS("dw_ln_odd", K_DW_LN_ODD),
        ROWS("dw_ln_wide", K_DW_LN_WIDE),
        ROWS("dw_ln_shared", K_DW_LN_SHARED),
        ROWS("cat_conv", K_CAT_CONV),
        ROWS("cat_conv_n2", K_CAT_CONV_N2),
        ROWS("ln_epi", K_LN_EPI),
        ROWS("ln_vec_epi", K_LN_VEC_EPI),
        ROWS("ln_chw_epi", K_LN_CHW_EPI),
        ROWS("gn_epi", K_GN_EPI),
        ROWS("in_epi", K_IN_EPI),
        ROWS("rms_epi", K_RMS_EPI),
        ROWS("lrn", K_LRN),
        ROWS("lrn_even", K_LRN_EVEN),
        ROWS("shuffle", K_SHUFFLE),
        ROWS("shuffle_wide", K_SHUFFLE_WIDE),
        ROWS("slice", K_SLICE),
        ROWS("pool_pad_end", K_POOL_PAD_END),
        ROWS("slice_chunks", K_SLICE_CHUNKS),
};

/* What nnop_plan_describe must say for each kind. */
static const char *const expect[K_KINDS] = {
        [K_MUL_SAMPLE] = "own kernel: epilogue",
        [K_MUL_CHANNEL] = "own kernel: epilogue",
        [K_SUB_SAME] = "own kernel: epilogue",
        [K_DIV_SAMPLE] = "own kernel: epilogue",
        [K_CONV_SE] = "is not lowered to cuDNN",
        [K_LAYER_SCALE] = "bn/bias folded",
        [K_CONV_HSWISH] = "hard-swish has no cuDNN",
        [K_HSIGMOID] = "own kernel: epilogue",
        [K_MISH] = "own kernel: epilogue",
        [K_LN_C] = "norm",
        [K_LN_CHW] = "norm",
        [K_GN] = "norm over 4 groups",
        [K_IN] = "norm over 12 groups",
        [K_RMS] = "norm",
        [K_CONCAT] = "concat, a copy per input (3)",
        [K_CONCAT_2D] = "concat",
        [K_NEAREST_2X] = "resize, nearest",
        [K_NEAREST_SIZE] = "resize, nearest",
        [K_BILINEAR] = "resize, bilinear",
        [K_BILINEAR_AC] = "corners aligned",
        [K_DECONV_S2] = "cudnn data gradient (transposed conv), eng",
        [K_DECONV_PAD] = "cudnn data gradient (transposed conv), eng",
        [K_DECONV_GROUP] = "transposed conv",
        [K_DECONV_OWN] = "own kernel: transposed conv",
        [K_MUL_WIDE] = "own kernel: epilogue",
        [K_CONCAT_WIDE] = "concat, a copy per input (2)",
        [K_BILINEAR_WIDE] = "resize, bilinear",
        [K_BILINEAR_KEEP] = "resize, bilinear",
        [K_SE] = "1x1 convs 12 -> 3 -> 12 channels",
        [K_SE_WIDE] = "1x1 convs 96 -> 24 -> 96 channels",
        [K_SE_SHARED] = "[own kernel: global_avg_pool]",
        [K_ACT_BIG] = "own kernel: epilogue",
        [K_MUL_BIG] = "own kernel: epilogue",
        [K_DW_LN] = "own kernel: depthwise conv",
        [K_DW_RMS] = "own kernel: depthwise conv",
        [K_DW_LN_PIXEL] = "own kernel: depthwise conv",
        [K_DW_LN_ODD] = "own kernel: depthwise conv",
        [K_DW_LN_WIDE] = "own kernel: depthwise conv",
        [K_DW_LN_SHARED] = "own kernel: depthwise conv",
        [K_CAT_CONV] = "concat",
        [K_CAT_CONV_N2] = "concat, a copy per input (2)",
        [K_LN_EPI] = "norm",
        [K_LN_VEC_EPI] = "norm",
        [K_LN_CHW_EPI] = "norm",
        [K_GN_EPI] = "norm over 4 groups",
        [K_IN_EPI] = "norm over 12 groups",
        [K_RMS_EPI] = "norm",
        [K_LRN] = "own kernel: LRN over 5 channels",
        [K_LRN_EVEN] = "own kernel: LRN over 4 channels",
        [K_SHUFFLE] = "channel shuffle, 3 groups",
        [K_SHUFFLE_WIDE] = "channel shuffle, 2 groups",
        [K_SLICE] = "channel slice 3..9",
        [K_POOL_PAD_END] = "pool",
        [K_SLICE_CHUNKS] = "channel slice 24..47"};

static nnop_value input(nnop_graph *g, const char *name, const new_case *nc, int64_t n, int64_t c,
                        int64_t h, int64_t w)
{
    nnop_tensor_desc d = nnop_tensor_4d(nc->dt, nc->lay, n, c, h, w);
    return nnop_input(g, name, &d);
}

static nnop_value const4(nnop_graph *g, const char *name, const new_case *nc, int64_t n, int64_t c,
                         int64_t h, int64_t w, uint64_t seed, float lo, float hi)
{
    nnop_tensor_desc d = nnop_tensor_4d(nc->dt, nc->lay, n, c, h, w);
    return h_const(g, name, &d, seed, lo, hi);
}

static nnop_value const1(nnop_graph *g, const char *name, const new_case *nc, int64_t c,
                         uint64_t seed, float lo, float hi)
{
    nnop_tensor_desc d = nnop_tensor_1d(nc->dt, c);
    return h_const(g, name, &d, seed, lo, hi);
}

/* conv 3x3 pad 1 from 6 to k channels (weights scaled for O(1) outputs) + constant bias. */
static nnop_value conv_bias(nnop_graph *g, const new_case *nc, nnop_value x, int64_t k)
{
    nnop_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    nnop_value y = nnop_conv(g, x, const4(g, "w", nc, k, 6, 3, 3, 11, -0.14f, 0.14f), &p);
    return nnop_bias(g, y, const1(g, "b", nc, k, 12, -0.5f, 0.5f));
}

static nnop_value binary(nnop_graph *g, const new_case *nc)
{
    nnop_value x = input(g, "x", nc, 2, 12, 7, 5);
    switch (nc->kind) {
    case K_MUL_SAMPLE:
        return nnop_mul(g, x, input(g, "s", nc, 2, 12, 1, 1));
    case K_MUL_WIDE:
        return nnop_mul(g, input(g, "xw", nc, 2, 16, 4, 6), input(g, "s", nc, 2, 16, 1, 1));
    case K_MUL_CHANNEL:
        return nnop_mul(g, x, input(g, "s", nc, 1, 12, 1, 1));
    case K_ACT_BIG:
        return nnop_act(g, input(g, "xb", nc, 4, 5, 661, 673), NNOP_ACT_SILU, 0);
    case K_MUL_BIG:
        return nnop_mul(g, input(g, "xb", nc, 8, 24, 151, 157), input(g, "s", nc, 8, 24, 1, 1));
    case K_SUB_SAME:
        return nnop_sub(g, x, input(g, "y", nc, 2, 12, 7, 5));
    default: /* a divisor in (0.26, 0.74) */
        return nnop_div(g, x, nnop_act(g, input(g, "s", nc, 2, 12, 1, 1), NNOP_ACT_SIGMOID, 0));
    }
}

static nnop_value norm(nnop_graph *g, const new_case *nc)
{
    int64_t c = nc->kind == K_LN_C ? 96 : 12; /* 96: the warp-per-position path in NHWC */
    nnop_value x = input(g, "x", nc, 2, c, 5, 7);
    switch (nc->kind) {
    case K_LN_C:
        return nnop_layer_norm(g, x, const1(g, "g", nc, c, 21, 0.5f, 1.5f),
                               const1(g, "b", nc, c, 22, -0.5f, 0.5f), NNOP_NORM_C, 1e-6f);
    case K_LN_CHW:
        return nnop_layer_norm(g, x, const4(g, "g", nc, 1, c, 5, 7, 23, 0.5f, 1.5f),
                               const1(g, "b", nc, c, 24, -0.5f, 0.5f), NNOP_NORM_CHW, 1e-5f);
    case K_GN:
        return nnop_group_norm(g, x, 4, const1(g, "g", nc, c, 25, 0.5f, 1.5f),
                               const1(g, "b", nc, c, 26, -0.5f, 0.5f), 1e-5f);
    case K_IN:
        return nnop_group_norm(g, x, c, nnop_none(), nnop_none(), 1e-5f);
    default:
        return nnop_rms_norm(g, x, const1(g, "g", nc, c, 27, 0.5f, 1.5f), 1e-6f);
    }
}

static nnop_value concat(nnop_graph *g, const new_case *nc)
{
    nnop_value xs[3];
    if (nc->kind == K_CONCAT_2D) {
        nnop_tensor_desc a = nnop_tensor_2d(nc->dt, 3, 7), b = nnop_tensor_2d(nc->dt, 3, 10);
        xs[0] = nnop_input(g, "a", &a);
        xs[1] = nnop_input(g, "b", &b);
        return nnop_concat(g, xs, 2);
    }
    if (nc->kind == K_CONCAT_WIDE) {
        xs[0] = nnop_act(g, input(g, "a", nc, 2, 8, 3, 5), NNOP_ACT_RELU, 0);
        xs[1] = input(g, "b", nc, 2, 16, 3, 5);
        return nnop_concat(g, xs, 2);
    }
    xs[0] = input(g, "a", nc, 2, 3, 5, 6);
    xs[1] = nnop_act(g, input(g, "b", nc, 2, 8, 5, 6), NNOP_ACT_RELU, 0); /* a computed input */
    xs[2] = input(g, "c", nc, 2, 5, 5, 6);
    return nnop_concat(g, xs, 3);
}

static nnop_value resize(nnop_graph *g, const new_case *nc)
{
    nnop_resize_params p;
    memset(&p, 0, sizeof p);
    p.mode = nc->kind == K_NEAREST_2X || nc->kind == K_NEAREST_SIZE ? NNOP_RESIZE_NEAREST
                                                                    : NNOP_RESIZE_BILINEAR;
    if (nc->kind == K_NEAREST_SIZE || nc->kind == K_BILINEAR_AC) {
        p.size[0] = nc->kind == K_NEAREST_SIZE ? 10 : 4;
        p.size[1] = 13;
        p.align_corners = nc->kind == K_BILINEAR_AC;
    } else {
        p.scale[0] = nc->kind == K_BILINEAR_KEEP ? 1.1 : 2.0;
        p.scale[1] = 2.0;
    }
    return nnop_resize(g,
                       input(g, "x", nc, 2,
                             nc->kind == K_BILINEAR_WIDE || nc->kind == K_BILINEAR_KEEP ? 16 : 5, 7,
                             5),
                       &p);
}

static nnop_value deconv(nnop_graph *g, const new_case *nc)
{
    nnop_conv_transpose_params p;
    nnop_value x = input(g, "x", nc, 2, 8, 5, 6), y;
    int64_t k = 6, r = nc->kind == K_DECONV_S2 ? 2 : 3, groups = nc->kind == K_DECONV_GROUP ? 2 : 1;
    int s1 = nc->kind == K_DECONV_GROUP || nc->kind == K_DECONV_OWN; /* stride 1, dilation 2 */
    memset(&p, 0, sizeof p);
    p.groups = groups;
    p.stride[0] = p.stride[1] = s1 ? 1 : 2;
    p.dilation[0] = p.dilation[1] = s1 ? 2 : 1;
    p.pad[0] = p.pad[1] = nc->kind == K_DECONV_S2 ? 0 : 1;
    p.output_pad[0] = nc->kind == K_DECONV_PAD || nc->kind == K_DECONV_OWN;
    p.output_pad[1] = 0;
    y = nnop_conv_transpose(g, x, const4(g, "w", nc, 8, k / groups, r, r, 31, -0.3f, 0.3f), &p);
    if (nc->kind == K_DECONV_S2)
        y = nnop_act(g, nnop_bias(g, y, const1(g, "b", nc, k, 32, -0.5f, 0.5f)), NNOP_ACT_RELU, 0);
    return y;
}

/* A 1x1 conv from c to k channels on x (weights scaled for O(1) outputs) + constant bias. */
static nnop_value fc(nnop_graph *g, const new_case *nc, nnop_value x, int64_t c, int64_t k,
                     uint64_t seed)
{
    nnop_conv_params p = {{0, 0}, {1, 1}, {1, 1}, 1};
    float a = 2.0f / (float)sqrt((double)c);
    nnop_value y = nnop_conv(g, x, const4(g, "w", nc, k, c, 1, 1, seed, -a, a), &p);
    return nnop_bias(g, y, const1(g, "b", nc, k, seed + 1, -0.5f, 0.5f));
}

/* Concats of conv outputs, then a 1x1 conv over the concat (so its buffer is the plan's). */
static nnop_value cat_conv(nnop_graph *g, const new_case *nc)
{
    const int n2 = nc->kind == K_CAT_CONV_N2;
    nnop_pool_params mp = {{3, 3}, {1, 1}, {1, 1}, 0, {0, 0}};
    nnop_value x = input(g, "x", nc, n2 ? 2 : 1, 6, 7, 5), xs[4], a, b, z;
    a = nnop_act(g, conv_bias(g, nc, x, 8), NNOP_ACT_RELU, 0);
    b = conv_bias(g, nc, x, 8);
    xs[0] = a, xs[1] = b, xs[2] = nnop_act(g, b, NNOP_ACT_RELU, 0), xs[3] = a;
    z = fc(g, nc, nnop_concat(g, xs, n2 ? 2 : 4), n2 ? 16 : 32, 8, 61);
    return n2 ? nnop_add(g, z, nnop_pool(g, b, NNOP_POOL_MAX, &mp)) : nnop_add(g, z, a);
}

/* A squeeze-excitation block on x (n, c, 5, 7), hidden width c / 4. */
static nnop_value se_block(nnop_graph *g, const new_case *nc)
{
    int64_t n = nc->kind == K_SE_WIDE ? 3 : 2, c = nc->kind == K_SE_WIDE ? 96 : 12, m = c / 4;
    nnop_value x = input(g, "x", nc, n, c, 5, 7);
    nnop_value h = fc(g, nc, nnop_global_avg_pool(g, x), c, m, 41), s;
    if (nc->kind == K_SE_WIDE) {
        h = nnop_batchnorm(g, h, const1(g, "bn_g", nc, m, 43, 0.5f, 1.5f),
                           const1(g, "bn_b", nc, m, 44, -0.5f, 0.5f),
                           const1(g, "bn_m", nc, m, 45, -0.2f, 0.2f),
                           const1(g, "bn_v", nc, m, 46, 0.5f, 2.0f), 1e-5f);
        h = nnop_act(g, h, NNOP_ACT_RELU, 0);
    } else {
        h = nnop_act(g, h, NNOP_ACT_SILU, 0);
    }
    if (nc->kind == K_SE_SHARED)
        assert_int_equal(nnop_output(g, h, "h"), NNOP_OK);
    s = nnop_act(g, fc(g, nc, h, m, c, 47),
                 nc->kind == K_SE_WIDE ? NNOP_ACT_HARDSIGMOID : NNOP_ACT_SIGMOID, 0);
    return nnop_mul(g, x, s);
}

/* A depthwise conv (weights scaled for outputs of about unit size) and a norm over C. */
static nnop_value dw_norm(nnop_graph *g, const new_case *nc)
{
    const int k = nc->kind;
    const int64_t c = k == K_DW_LN_WIDE ? 384 : k == K_DW_RMS ? 40 : k == K_DW_LN_ODD ? 20 : 96;
    const int64_t r = k == K_DW_RMS ? 3 : k == K_DW_LN_ODD ? 5 : 7;
    const int64_t n = k == K_DW_LN_WIDE ? 3 : 2,
                  h = k == K_DW_LN_PIXEL ? 1
                      : k == K_DW_RMS    ? 8
                                         : 9,
                  w = k == K_DW_LN_PIXEL  ? 1
                      : k == K_DW_RMS     ? 7
                      : k == K_DW_LN_WIDE ? 3
                                          : 11;
    const float a = 1.5f / (float)r;
    nnop_conv_params p = {{r / 2, r / 2}, {1, 1}, {1, 1}, c};
    nnop_value x = input(g, "x", nc, n, c, k == K_DW_LN_WIDE ? 4 : h, w), y;
    if (k == K_DW_LN || k == K_DW_LN_WIDE || k == K_DW_LN_SHARED || k == K_DW_LN_PIXEL)
        x = nnop_act(g, x, NNOP_ACT_RELU, 0); /* computed: the plan's own, aligned buffer */
    if (k == K_DW_RMS)
        p.stride[0] = p.stride[1] = 2;
    y = nnop_conv(g, x, const4(g, "w", nc, c, 1, r, r, 51, -a, a), &p);
    if (k != K_DW_LN_ODD && k != K_DW_LN_WIDE)
        y = nnop_bias(g, y, const1(g, "b", nc, c, 52, -0.5f, 0.5f));
    if (k == K_DW_RMS)
        return nnop_rms_norm(g, nnop_act(g, y, NNOP_ACT_SILU, 0),
                             const1(g, "g", nc, c, 53, 0.5f, 1.5f), 1e-6f);
    if (k == K_DW_LN_SHARED)
        assert_int_equal(nnop_output(g, y, "conv"), NNOP_OK);
    if (k == K_DW_LN_WIDE) /* the norm's output the plan's own buffer too (then a softmax, not
                            * an epilogue: that would join the norm's partition) */
        return nnop_softmax(g, nnop_layer_norm(g, y, nnop_none(), nnop_none(), NNOP_NORM_C, 1e-5f));
    if (k == K_DW_LN_ODD)
        return nnop_layer_norm(g, y, nnop_none(), nnop_none(), NNOP_NORM_C, 1e-5f);
    return nnop_layer_norm(g, y, const1(g, "g", nc, c, 54, 0.5f, 1.5f),
                           const1(g, "b", nc, c, 55, -0.5f, 0.5f), NNOP_NORM_C, 1e-6f);
}

/* A norm and the pointwise chain after it: one partition, one pass. */
static nnop_value norm_epilogue(nnop_graph *g, const new_case *nc)
{
    const int k = nc->kind;
    const int64_t c = k == K_LN_EPI ? 96 : k == K_LN_VEC_EPI ? 64 : k == K_RMS_EPI ? 40 : 12;
    nnop_value x = input(g, "x", nc, 2, c, k == K_LN_VEC_EPI ? 4 : 5, 7), y;
    switch (k) {
    case K_LN_EPI:
        y = nnop_layer_norm(g, x, const1(g, "g", nc, c, 61, 0.5f, 1.5f),
                            const1(g, "b", nc, c, 62, -0.5f, 0.5f), NNOP_NORM_C, 1e-6f);
        y = nnop_mul(g, y, const4(g, "scale", nc, 1, c, 1, 1, 63, 0.1f, 1.0f));
        return nnop_add(g, y, x);
    case K_LN_VEC_EPI:
        y = nnop_layer_norm(g, x, const1(g, "g", nc, c, 64, 0.5f, 1.5f),
                            const1(g, "b", nc, c, 65, -0.5f, 0.5f), NNOP_NORM_C, 1e-6f);
        y = nnop_act(g, y, NNOP_ACT_GELU_TANH, 0);
        return nnop_mul(g, y, input(g, "m", nc, 2, c, 4, 7));
    case K_LN_CHW_EPI:
        y = nnop_layer_norm(g, x, nnop_none(), nnop_none(), NNOP_NORM_CHW, 1e-5f);
        return nnop_act(g, nnop_bias(g, y, const1(g, "bias", nc, c, 66, -1.0f, 1.0f)),
                        NNOP_ACT_GELU, 0);
    case K_GN_EPI:
        y = nnop_group_norm(g, x, 4, const1(g, "g", nc, c, 67, 0.5f, 1.5f),
                            const1(g, "b", nc, c, 68, -0.5f, 0.5f), 1e-5f);
        return nnop_act(g, y, NNOP_ACT_SILU, 0);
    case K_IN_EPI:
        y = nnop_group_norm(g, x, c, nnop_none(), nnop_none(), 1e-5f);
        return nnop_act(g, nnop_add(g, y, input(g, "r", nc, 2, c, 5, 7)), NNOP_ACT_RELU, 0);
    default:
        y = nnop_rms_norm(g, x, const1(g, "g", nc, c, 69, 0.5f, 1.5f), 1e-6f);
        y = nnop_mul(g, y, input(g, "s", nc, 2, c, 1, 1));
        return nnop_act(g, y, NNOP_ACT_HARDSWISH, 0);
    }
}

static nnop_value build_op(nnop_graph *g, const new_case *nc)
{
    nnop_value x, y;
    switch (nc->kind) {
    case K_MUL_SAMPLE:
    case K_MUL_CHANNEL:
    case K_SUB_SAME:
    case K_DIV_SAMPLE:
    case K_MUL_WIDE:
    case K_ACT_BIG:
    case K_MUL_BIG:
        return binary(g, nc);
    case K_CONV_SE:
        y = conv_bias(g, nc, input(g, "x", nc, 2, 6, 7, 5), 16);
        return nnop_mul(g, y, input(g, "s", nc, 2, 16, 1, 1));
    case K_LAYER_SCALE:
        x = input(g, "x", nc, 2, 6, 7, 5);
        y = conv_bias(g, nc, x, 6);
        y = nnop_mul(g, y, const4(g, "gamma", nc, 1, 6, 1, 1, 13, 0.1f, 1.0f));
        return nnop_add(g, y, x);
    case K_CONV_HSWISH:
        y = conv_bias(g, nc, input(g, "x", nc, 2, 6, 7, 5), 16);
        return nnop_act(g, y, NNOP_ACT_HARDSWISH, 0);
    case K_HSIGMOID:
    case K_MISH: /* inputs scaled to [-4, 4): every branch of hard-sigmoid */
        x = nnop_mul(g, input(g, "x", nc, 2, 12, 7, 5), const4(g, "k", nc, 1, 12, 1, 1, 1, 4, 4));
        return nnop_act(g, x, nc->kind == K_MISH ? NNOP_ACT_MISH : NNOP_ACT_HARDSIGMOID, 0);
    case K_LN_C:
    case K_LN_CHW:
    case K_GN:
    case K_IN:
    case K_RMS:
        return norm(g, nc);
    case K_CONCAT:
    case K_CONCAT_2D:
    case K_CONCAT_WIDE:
        return concat(g, nc);
    case K_NEAREST_2X:
    case K_NEAREST_SIZE:
    case K_BILINEAR:
    case K_BILINEAR_AC:
    case K_BILINEAR_WIDE:
    case K_BILINEAR_KEEP:
        return resize(g, nc);
    case K_SE:
    case K_SE_WIDE:
    case K_SE_SHARED:
        return se_block(g, nc);
    case K_DW_LN:
    case K_DW_RMS:
    case K_DW_LN_PIXEL:
    case K_DW_LN_ODD:
    case K_DW_LN_WIDE:
    case K_DW_LN_SHARED:
        return dw_norm(g, nc);
    case K_CAT_CONV:
    case K_CAT_CONV_N2:
        return cat_conv(g, nc);
    case K_LN_EPI:
    case K_LN_VEC_EPI:
    case K_LN_CHW_EPI:
    case K_GN_EPI:
    case K_IN_EPI:
    case K_RMS_EPI:
        return norm_epilogue(g, nc);
    case K_LRN:
        return nnop_lrn(g, input(g, "x", nc, 2, 12, 7, 5), 5, 1e-4f, 0.75f, 1.0f);
    case K_LRN_EVEN:
        return nnop_lrn(g, input(g, "x", nc, 2, 12, 7, 5), 4, 0.5f, 0.6f, 2.0f);
    case K_SHUFFLE:
        return nnop_channel_shuffle(g, input(g, "x", nc, 2, 12, 7, 5), 3);
    case K_SHUFFLE_WIDE:
        x = nnop_act(g, input(g, "x", nc, 3, 48, 6, 5), NNOP_ACT_RELU, 0);
        return nnop_channel_shuffle(g, x, 2);
    case K_SLICE:
        return nnop_channel_slice(g, input(g, "x", nc, 2, 12, 7, 5), 3, 7);
    case K_POOL_PAD_END: {
        nnop_pool_params pp;
        nnop_pool_params_init(&pp);
        pp.window[0] = pp.window[1] = 3, pp.stride[0] = pp.stride[1] = 2;
        pp.pad_end[0] = pp.pad_end[1] = 1;
        x = nnop_pool(g, input(g, "x", nc, 2, 12, 14, 13), NNOP_POOL_MAX, &pp);
        /* pad_end 1, not 2: after 1 + 2 the last window (7 x 6 input) lay in the padding */
        pp.pad[0] = pp.pad[1] = 1, pp.pad_end[0] = pp.pad_end[1] = 1;
        return nnop_pool(g, x, NNOP_POOL_AVG, &pp);
    }
    case K_SLICE_CHUNKS: {
        nnop_value h[2];
        x = input(g, "x", nc, 3, 48, 6, 5);
        h[0] = nnop_channel_slice(g, x, 0, 24);
        h[1] = nnop_act(g, nnop_channel_slice(g, x, 24, 24), NNOP_ACT_RELU, 0);
        return nnop_channel_shuffle(g, nnop_concat(g, h, 2), 2);
    }
    default:
        return deconv(g, nc);
    }
}

static void build_case(nnop_graph *g, const void *arg)
{
    assert_int_equal(nnop_output(g, build_op(g, (const new_case *)arg), "y"), NNOP_OK);
    assert_int_equal(nnop_graph_status(g), NNOP_OK);
}

/* The norm and its epilogue run as one step: the own kernel's one pass, or cuDNN's graph of
 * both. A layer or RMS norm over contiguous channels with constant parameters is offered to
 * cuDNN's norm-forward with its chain as one graph, and the plan must show that graph or the
 * refusal (the lowering's: a multiply by a tensor; or the engines': cuDNN 9.14 on sm_90 offers
 * none for a norm with pointwise ops, even with NNOP_NORM_RTC=1, ctest's
 * gpu.new_ops_norm_rtc, letting its runtime-compiled engines run). */
static void check_norm_epilogue(const new_case *nc, const h_run *r)
{
    const int offered = nc->lay == NHWC &&
                        (nc->kind == K_LN_EPI || nc->kind == K_LN_VEC_EPI || nc->kind == K_RMS_EPI);
    const int cudnn = strstr(r->describe, "norm forward (inference)") != NULL;
    const int refused = strstr(r->describe, "cuDNN's norm-forward refused: ") != NULL;
    if (r->n_parts != 1 || (!cudnn && !strstr(r->describe, ", in the same pass]")))
        fail_msg("%s: the norm and its epilogue should be one step:\n%s", nc->name, r->describe);
    if (offered != (cudnn || refused))
        fail_msg("%s: cuDNN's norm-forward should %s:\n%s", nc->name,
                 offered ? "be offered the norm and its epilogue" : "be left alone", r->describe);
}

static void run_case(void **state)
{
    const new_case *nc = (const new_case *)*state;
    h_run r;
    int conv = nc->kind == K_CONV_SE || nc->kind == K_LAYER_SCALE || nc->kind == K_CONV_HSWISH;
    int deconv = nc->kind >= K_DECONV_S2 && nc->kind <= K_DECONV_OWN;
    int se = nc->kind >= K_SE && nc->kind <= K_SE_SHARED;
    int dw = nc->kind >= K_DW_LN && nc->kind <= K_DW_LN_SHARED;
    int cat = nc->kind == K_CAT_CONV || nc->kind == K_CAT_CONV_N2;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, nc->dt, conv || cat ? 54.0 : deconv ? 36.0 : se ? 96.0 : dw ? 49.0 : 1.0);
    h_check_case(&r, nc->name, build_case, nc, expect[nc->kind]);
    /* a 1x1 image's channels are contiguous in either layout */
    if (dw &&
        (strstr(r.describe, "over C, in the same kernel") != NULL) !=
                ((nc->lay == NHWC || nc->kind == K_DW_LN_PIXEL) && nc->kind != K_DW_LN_SHARED))
        fail_msg("%s: the norm should join the depthwise step where channels are contiguous, "
                 "and not when the conv's output is an output too:\n%s",
                 nc->name, r.describe);
    if ((nc->kind == K_SE || nc->kind == K_SE_WIDE) &&
        (strstr(r.describe, "global average pool (chunk sums") != NULL) != (nc->lay == NHWC))
        fail_msg("%s: the gate should pool too in NHWC only:\n%s", nc->name, r.describe);
    if (nc->kind >= K_LN_C && nc->kind <= K_RMS) {
        /* cuDNN's norm-forward is tried for layer and RMS norms with constant parameters
         * over contiguous channels or over C, H, W; where it refuses, the reason is kept */
        const int eligible = nc->kind == K_LN_CHW ||
                             ((nc->kind == K_LN_C || nc->kind == K_RMS) && nc->lay == NHWC);
        const int tried = strstr(r.describe, "norm forward (inference)") != NULL ||
                          strstr(r.describe, "cuDNN's norm-forward refused: ") != NULL;
        if (tried != eligible)
            fail_msg("%s: cuDNN's norm-forward should be %s:\n%s", nc->name,
                     eligible ? "used, or its refusal given" : "left alone", r.describe);
    }
    if (nc->kind >= K_LN_EPI && nc->kind <= K_RMS_EPI)
        check_norm_epilogue(nc, &r);
    if (nc->kind == K_CAT_CONV &&
        !strstr(r.describe, nc->lay == NCHW ? "3 of 4 inputs written into their slices"
                                            : "a copy per input (4)"))
        fail_msg("%s: channels-first at batch 1 every producer writes its slice (a value's "
                 "second slice is a copy), channels-last none:\n%s",
                 nc->name, r.describe);
    if (nc->kind == K_SE_SHARED && strstr(r.describe, "squeeze-excitation"))
        fail_msg("%s: a gate whose hidden value is an output took the gate kernel:\n%s", nc->name,
                 r.describe);
}

int main(void)
{
    return h_run_table("gpu_new_ops", cases, sizeof cases / sizeof cases[0], sizeof cases[0],
                       run_case);
}
