/* kernels.h: nnop's own CUDA kernels for what cuDNN lacks or does slowly on sm_90 (standalone
 * and split epilogues, pooling incl. bf16, global average pooling, softmax, flatten, the
 * linear fallback, the stem conv, depthwise and transposed convs, norms, LRN, resize, concat
 * and channel-shuffle copies, the squeeze-excitation gate). C interface. */
#ifndef NNOP_CUDA_KERNELS_H
#define NNOP_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dtype codes are nnop_dtype's values: 0 f32, 1 f16, 2 bf16 */

/* A tensor of up to 4 dims seen as N, C, H, W with element strides. */
typedef struct nnop__kview {
    int64_t n, c, h, w;
    int64_t sn, sc, sh, sw;
} nnop__kview;

enum {
    NNOP_EPI_BIAS = 0,        /* v += p0[c]                                  */
    NNOP_EPI_SCALE_SHIFT = 1, /* v = v * p0[c] + p1[c]                       */
    NNOP_EPI_BN = 2,          /* gamma p0, beta p1, mean p2, var p3, eps     */
    NNOP_EPI_ADD = 3,         /* v += p0[i] (same shape and strides as x)    */
    NNOP_EPI_ACT = 4,         /* activation act (nnop_act_kind), alpha/lo/hi */
    NNOP_EPI_MUL = 5,         /* v *= b, b = p0 read as bmode says           */
    NNOP_EPI_SUB = 6,         /* v -= b                                      */
    NNOP_EPI_DIV = 7          /* v /= b                                      */
};

/* How the operand b of NNOP_EPI_MUL/SUB/DIV is indexed at element i of channel c, sample n. */
enum {
    NNOP_BCAST_NONE = 0,    /* x's shape and offsets: b[i]             */
    NNOP_BCAST_CHANNEL = 1, /* 1,C,1,1: b[c * bsc]                     */
    NNOP_BCAST_SAMPLE = 2   /* N,C,1,1: b[n * bsn + c * bsc], n = i / xsn */
};

#define NNOP_EPI_MAX_OPS 8

typedef struct nnop__epi_op {
    int kind;
    int dtype; /* of the operands */
    int act;
    float alpha, lo, hi, eps;
    int bmode;             /* NNOP_BCAST_*: MUL, SUB, DIV */
    int64_t bsn, bsc, xsn; /* b's sample and channel strides, x's sample stride */
    const void *p[4];
} nnop__epi_op;

/* y[i] = ops(x[i]) for i < count; channel of i = (i / cstride) % C. */
typedef struct nnop__epi_params {
    const void *x;
    void *y;
    int x_dtype, y_dtype;
    int64_t count, C, cstride;
    int n_ops;
    nnop__epi_op ops[NNOP_EPI_MAX_OPS];
} nnop__epi_params;

typedef struct nnop__pool_kparams {
    const void *x;
    void *y;
    int dtype;
    int is_max, count_include_pad;
    nnop__kview xv, yv;
    int64_t window[2], stride[2], pad[2];
    int64_t pad_end[2]; /* nonzero: the strided kernel (the others assume pad after = pad) */
} nnop__pool_kparams;

/* y[n, o] = ops(sum_i x[n, i] w[o, i]) for a linear layer (packed row-major), channel = o. */
typedef struct nnop__linear_kparams {
    const void *x, *w;
    void *y;
    int dtype, y_dtype;
    int64_t n, in, out;
    nnop__epi_params epi; /* only n_ops and ops are used */
} nnop__linear_kparams;
/* Small batches (n <= NNOP_GEMV_MAX_N, y of x's dtype, in <= 12288) run on the gate's
 * matrix-vector kernel (gate.cu): a warp a row of w, 16-byte loads where w's rows allow. */
#define NNOP_GEMV_MAX_N 8
int nnop__linear_gemv_fits(const nnop__linear_kparams *p);
cudaError_t nnop__k_linear_gemv(const nnop__linear_kparams *p, cudaStream_t s);

/* The stem convolution (stem_conv.cu): x [n, h, w, c] packed channels-last fp16/bf16 (dtype
 * 1 or 2), c <= 4; weights prepared by nnop__k_stem_weights; conv [n, oh, ow, 64] of x's
 * dtype; stride 2, dilation 1, symmetric padding; conv = relu?(conv + bias?) with float32
 * bias (ReLU keeps NaN). y = conv, or with pool the 3x3 stride-2 max pool of it with padding 1
 * (NaN propagating): y [n, ph, pw, 64] packed channels-last, ph = (oh - 1) / 2 + 1. */
typedef struct nnop__stem_kparams {
    const void *x, *wp;
    const float *bias; /* NULL = none */
    void *y;
    int dtype, relu, pool;
    int n, h, w, c, oh, ow, r, s, pad_h, pad_w; /* r x s: the filter */
    int ph, pw;                                 /* pool */
    int grid;                                   /* set by nnop__stem_conv_prepare */
} nnop__stem_kparams;

/* Nonzero when the stem kernel takes an r x s filter from c to k channels. */
int nnop__stem_conv_fits(int r, int s, int c, int k);
/* Bytes of the prepared weights of an r-row filter. */
size_t nnop__stem_weights_bytes(int r);
/* wp = w [64, c, r, s] (element strides of k, c, r, s) in the kernel's layout. */
cudaError_t nnop__k_stem_weights(const void *w, void *wp, int r, int s, int c,
                                 const int64_t strides[4], cudaStream_t st);
/* Launch geometry for p on a GPU of sm_count SMs (p->grid). */
cudaError_t nnop__stem_conv_prepare(nnop__stem_kparams *p, int sm_count);
cudaError_t nnop__k_stem_conv(const nnop__stem_kparams *p, cudaStream_t s);

/* Small convolutions as a split-K tensor-core implicit GEMM (igemm_conv.cu; sm_90: the K
 * splits of one output tile are a thread-block cluster, summed in a fixed order through
 * distributed shared memory, so the result does not depend on timing). x [n, c, h, w]
 * packed channels-last fp16/bf16, c % 8 == 0; wp the weights packed [k][r][s][c]
 * (nnop__k_igemm_weights); y [n, k, p, q] packed channels-last of x's dtype, k % 8 == 0;
 * x, wp, y 16-byte aligned. ops[0..n_ops) on each float sum before the one store (ADD,
 * MUL/SUB/DIV operands of NONE mode packed like y; SAMPLE ones with xsn = k p q). */
typedef struct nnop__igemm_kparams {
    const void *x, *wp;
    void *y;
    int dtype;
    int n, c, h, w, k, r, s, p, q;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    int splits; /* set by nnop__igemm_prepare: blocks a cluster, each a share of the sum */
    int fast;   /* set by nnop__igemm_prepare: ops are [ADD] [BIAS] [ReLU], each optional */
    int n_ops;
    nnop__epi_op ops[NNOP_EPI_MAX_OPS];
} nnop__igemm_kparams;
/* Output tiles of the kernel for an m-pixel, k-channel output (no split). */
int nnop__igemm_tiles(int64_t m, int k);
/* wp = w [k, c, r, s] (element strides of k, c, r, s; 16-bit) packed as [k][r][s][c]. */
cudaError_t nnop__k_igemm_weights(const void *w, void *wp, int k, int c, int r, int s,
                                  const int64_t strides[4], cudaStream_t st);
/* Split and launch attributes for p on a GPU of sm_count SMs (p->splits);
 * cudaErrorNotSupported where the device runs no cluster of the kernel. */
cudaError_t nnop__igemm_prepare(nnop__igemm_kparams *p, int sm_count);
cudaError_t nnop__k_igemm_conv(const nnop__igemm_kparams *p, cudaStream_t s);

/* Depthwise convolution (depthwise.cu): groups = C = K, w [C, 1, R, S]; any strides, float
 * accumulation, y of x's dtype; then ops[0..n_ops) on each output before its store, of the
 * per-channel kinds only: BIAS, SCALE_SHIFT, BN, ACT, and MUL/SUB/DIV with a CHANNEL or
 * SAMPLE operand (xsn = yv.sn). Channels-last with w's channel stride 1 (tap-major) takes a
 * tiled kernel, any other layout one thread per output. */
typedef struct nnop__dw_kparams {
    const void *x, *w;
    void *y;
    int dtype;
    nnop__kview xv, wv, yv;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    int n_ops;
    nnop__epi_op ops[NNOP_EPI_MAX_OPS];
    /* a norm over the C channels of each output position after the epilogue, on the float
     * values before the one store: 0 none, 1 layer norm ((v - mean) * rsqrt(var + eps) *
     * gamma + beta), 2 RMS norm (v * rsqrt(mean(v^2) + eps) * gamma). gamma and beta 1-D of C
     * (element strides gsn, bsn; NULL: 1 and 0). Channels-last, channels contiguous, only. */
    int norm;
    float norm_eps;
    const void *gamma, *beta;
    int g_dtype, b_dtype;
    int64_t gsn, bsn;
} nnop__dw_kparams;
/* With norm set, x, y and w channel-contiguous and the tensors within 32-bit indices (else
 * cudaErrorInvalidValue, nothing launched): a block holds whole positions, C / V threads
 * each (V = 4 where C, the strides and pointers allow 4-element vectors, else 1); its size:
 * nnop__k_dw_norm_block(C / V), 0 where no block of at most 256 threads holds them. */
cudaError_t nnop__k_depthwise(const nnop__dw_kparams *p, cudaStream_t s);
int nnop__k_dw_norm_block(int64_t vectors_per_position);

/* A squeeze-excitation gate (gate.cu): y[n, k] = ops2(sum_j w2[k, j] h[n, j]) with h[n, j] =
 * ops1(sum_i w1[j, i] x[n, i]) rounded to dtype, for two 1x1 convs on N x C x 1 x 1 values
 * (x: c channels, h: mid, y: k; element strides as named: sample and channel, and the
 * weights' output and input channel); h goes through a float scratch of
 * nnop__gate_scratch_bytes. ops1 and ops2 are per-channel kinds only: BIAS, SCALE_SHIFT, BN,
 * ACT. Needs nnop__gate_smem_bytes(c, mid) <= 48 KiB and n <= 65535. Two launches (one for narrow
 * gates). */
typedef struct nnop__gate_kparams {
    const void *x, *w1, *w2;
    void *y;
    float *h;
    const float *sums; /* non-NULL: x is instead inv * the sum of chunks of these (a pool's) */
    int chunks;
    float inv;
    int dtype;
    int64_t n, c, mid, k;
    int64_t xsn, xsc, ysn, ysc, w1sk, w1sc, w2sk, w2sc;
    int n_ops1, n_ops2;
    nnop__epi_op ops1[NNOP_EPI_MAX_OPS], ops2[NNOP_EPI_MAX_OPS];
} nnop__gate_kparams;
size_t nnop__gate_smem_bytes(int64_t c, int64_t mid);
size_t nnop__gate_scratch_bytes(int64_t n, int64_t mid);
cudaError_t nnop__k_gate(const nnop__gate_kparams *p, cudaStream_t s);

/* Normalization (norm.cu) over boxes of x with the statistics of the box itself: per position
 * (layer norm over C, RMS norm: the C values at each n, h, w) or per group (group norm, layer
 * norm over C, H, W: channels [g C/G, (g+1) C/G) and all of H, W of each n). y has x's view;
 * gamma/beta (NULL: 1 and 0) are 1-D of C (gv.n = C, gv.sn its stride) or, per_element, of
 * x's shape with dim 0 = 1 (gv's c, h, w strides). Float accumulation, two passes. Then
 * ops[0..n_ops) on each normalized value before its one store, element i being y's offset
 * (ADD and NONE-mode operands share y's view; SAMPLE ones have xsn = xv.sn). */
typedef struct nnop__norm_kparams {
    const void *x, *gamma, *beta;
    void *y;
    int dtype, g_dtype, b_dtype;
    nnop__kview xv, gv, bv;
    int g_per_element, b_per_element;
    int rms;          /* no mean subtracted, no beta */
    int per_position; /* 1: over C at each position; 0: per (n, group) */
    int64_t groups;
    float eps;
    int n_ops;
    nnop__epi_op ops[NNOP_EPI_MAX_OPS];
} nnop__norm_kparams;
cudaError_t nnop__k_norm(const nnop__norm_kparams *p, cudaStream_t s);
/* Lanes a position of the per-position vector path for p's shape (16-byte vectors, where x
 * and y are 16-byte aligned), or 0 where that path does not apply: for nnop_plan_describe. */
int nnop__k_norm_vec_lanes(const nnop__norm_kparams *p);
/* Where that path does not run: 1 for a warp a position, 0 for a thread a position. */
int nnop__k_norm_rows_warp(const nnop__norm_kparams *p);

/* Resize over H, W (resize.cu) with PyTorch's F.interpolate index math: nearest (floor(dst *
 * scale) clamped, dst itself for out = in and dst / 2 for out = 2 in) or bilinear (source
 * scale * (dst + 0.5) - 0.5 clamped at 0, or scale * dst with align_corners). scale[] is
 * PyTorch's coordinate scale per axis (float, as the CPU reference computes it). */
typedef struct nnop__resize_kparams {
    const void *x;
    void *y;
    int dtype, bilinear, align_corners;
    float scale[2];
    nnop__kview xv, yv;
} nnop__resize_kparams;
cudaError_t nnop__k_resize(const nnop__resize_kparams *p, cudaStream_t s);

/* Local response normalization over C (lrn.cu, ONNX's LRN): y = x * (bias + k * sum)^-beta,
 * sum of x^2 over channels c - before .. c + after (clipped), k = alpha / size; float math. */
typedef struct nnop__lrn_kparams {
    const void *x;
    void *y;
    int dtype;
    int64_t before, after;
    float k, beta, bias;
    nnop__kview xv, yv;
} nnop__lrn_kparams;
cudaError_t nnop__k_lrn(const nnop__lrn_kparams *p, cudaStream_t s);

/* y (view yv) = x (view xv, same dims) element by element: a concat input into its channel
 * slice of the output (resize.cu holds it beside the other data-movement kernel). */
cudaError_t nnop__k_copy(const void *x, void *y, int dtype, const nnop__kview *xv,
                         const nnop__kview *yv, cudaStream_t s);

/* Transposed convolution (deconv.cu), gather form: y[n, k, oh, ow] = sum over c of k's group,
 * r, s with oh = ih * stride - pad + r * dilation (ow alike) of x[n, c, ih, iw] *
 * w[c, k % (K/groups), r, s]; float accumulation, y of x's dtype. */
typedef struct nnop__deconv_kparams {
    const void *x, *w;
    void *y;
    int dtype;
    nnop__kview xv, wv, yv;
    int64_t groups, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
} nnop__deconv_kparams;
cudaError_t nnop__k_deconv(const nnop__deconv_kparams *p, cudaStream_t s);

/* Each launcher queues one kernel on s and returns cudaGetLastError(). The pointwise chain as
 * its own pass (epilogue.cu). */
cudaError_t nnop__k_epilogue(const nnop__epi_params *p, cudaStream_t s);
/* y[p, c] = c < cin ? x[p, c] : 0 for p < pixels, c < cout (channels-last, elem_size 2 or 4
 * bytes): the zero-padded input of a C=3 first layer (copy.cu). */
cudaError_t nnop__k_pad_channels(const void *x, void *y, int elem_size, int64_t pixels, int cin,
                                 int cout, cudaStream_t s);
/* w[i] *= s[i / per_row] for i < n (float32 math, rounded to w's dtype); s is device memory
 * (fold.cu). */
cudaError_t nnop__k_scale_rows(void *w, int dtype, int64_t n, int64_t per_row, const float *s,
                               cudaStream_t st);
/* Keep the GPU busy for about ns nanoseconds (timing: lets the host queue work ahead;
 * spin.cu). */
cudaError_t nnop__k_spin(int64_t ns, cudaStream_t s);
/* A linear layer: the gate's matrix-vector kernel where it fits, else a warp an output
 * (linear.cu). */
cudaError_t nnop__k_linear(const nnop__linear_kparams *p, cudaStream_t s);
/* Max or average pooling (pool.cu). */
cudaError_t nnop__k_pool(const nnop__pool_kparams *p, cudaStream_t s);
/* y[n, c] (strides of yv) = mean over H, W of x (gap.cu). sums: float scratch of
 * nnop__gap_scratch_bytes(xv, dtype) bytes (NULL when that is 0, or to run in one pass): a
 * channels-last x of few samples and many positions is then summed in chunks of H*W by more
 * blocks, the chunks added in a second kernel, in a fixed order. */
size_t nnop__gap_scratch_bytes(const nnop__kview *xv, int dtype);
cudaError_t nnop__k_gap(const void *x, void *y, int dtype, const nnop__kview *xv,
                        const nnop__kview *yv, float *sums, cudaStream_t s);
/* The channels-last pool's chunk sums, none added: bytes of their scratch for x (0 where x is
 * not packed channels-last with C >= 2, or too large), and the launch that writes them
 * (sums[(n * chunks + z) * C + c], *chunks set): the gate kernel adds them (gate.cu). */
size_t nnop__gap_sums_bytes(const nnop__kview *xv, int dtype);
cudaError_t nnop__k_gap_sums(const void *x, int dtype, const nnop__kview *xv, float *sums,
                             int *chunks, cudaStream_t s);
/* softmax over C at every (n, h, w); x and y share the view (softmax.cu) */
cudaError_t nnop__k_softmax(const void *x, void *y, int dtype, const nnop__kview *v,
                            cudaStream_t s);
/* y (packed N x C*H*W) = x in logical N, C, H, W order (copy.cu) */
cudaError_t nnop__k_flatten(const void *x, void *y, int dtype, const nnop__kview *xv,
                            cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_CUDA_KERNELS_H */
