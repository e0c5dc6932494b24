// stem_conv.cu: the ResNet-style first layer (RxS <= 7x7, stride 2, C <= 4 channels-last
// fp16/bf16 input, 64 output channels, optional float bias and ReLU) as one tensor-core
// implicit GEMM. cuDNN's sm_90 engines run this shape at 85 TFLOP/s (C=3 fills a tensor-core
// K slice badly; C padded to 4 or space-to-depth forms were no faster: bench --probe).
//
// GEMM view: M = output pixels, N = 64 channels, K = R * 32 where each filter row r holds
// s = 0..7 x c = 0..3 (zero weights for s >= S, c >= C). The input tile is staged in shared
// memory with 4 channels per pixel, so for a fixed r the 32 K values of an output pixel are
// 32 contiguous halves there (stride 2: neighbouring output pixels are 16 bytes apart), which
// ldmatrix loads straight into mma.sync fragments.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels.h"

namespace
{

const int kTileH = 16;                    // output rows per tile, two per warp
const int kTileW = 16;                    // output columns per tile: one m16 fragment
const int kThreads = kTileH / 2 * 32;     // eight warps
const int kOutC = 64;                     // output channels: eight n8 fragments
const int kPatchW = (kTileW - 1) * 2 + 8; // input pixels per staged row (s up to 7)
const int kPatchStride = kPatchW * 4;     // halves per staged row, 4 channels a pixel
const int kStageStride = kOutC / 2 + 4;   // words per staged output pixel (+16 B: no conflicts)
const int kStageWords = kTileW * kStageStride; // one warp's output staging area

__host__ __device__ inline int w_stride(int r)
{
    return r * 32 + 8; // +8 halves: the 8 rows of one ldmatrix hit 8 different bank groups
}

__host__ __device__ inline int patch_rows(int r)
{
    return (kTileH - 1) * 2 + r;
}

size_t smem_bytes(int r)
{
    return (size_t)(kOutC * w_stride(r) + patch_rows(r) * kPatchStride) * 2 +
           ((size_t)kThreads / 32 * kStageWords + kOutC) * 4;
}

__device__ __forceinline__ void ldsm_x4(unsigned (&d)[4], const unsigned short *p)
{
    unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a));
}

// m16n8k16 (and bf16 in it) needs sm_80: the images for older GPUs (sm_75) trap here, and
// impl/stem.c never picks this kernel below compute capability 8.0.
template <bool BF16>
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    (void)c, (void)a, (void)b0, (void)b1;
    __trap();
#else
    if (BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

template <bool BF16> __device__ __forceinline__ unsigned pack2(float a, float b)
{
    if (BF16) {
        __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
        return *reinterpret_cast<unsigned *>(&v);
    }
    __half2 v = __floats2half2_rn(a, b);
    return *reinterpret_cast<unsigned *>(&v);
}

// max(v, 0) on two packed halves (the same as before rounding: rounding is monotonic).
template <bool BF16> __device__ __forceinline__ unsigned relu2(unsigned v)
{
    if (BF16) {
        __nv_bfloat162 h = *reinterpret_cast<__nv_bfloat162 *>(&v);
        h = __hmax2(h, __float2bfloat162_rn(0.f));
        return *reinterpret_cast<unsigned *>(&h);
    }
    __half2 h = *reinterpret_cast<__half2 *>(&v);
    h = __hmax2(h, __float2half2_rn(0.f));
    return *reinterpret_cast<unsigned *>(&h);
}

// Each thread stages up to kPerThread pixels of a tile's input (the most rows: r = 7).
const int kPerThread = ((kTileH - 1) * 2 + 7) * kPatchW / kThreads + 1;

struct staged {
    uint2 px[kPerThread]; // 4 channels a pixel, zero outside the image
};

// Load the input rows ih0.. and columns iw0.. of image n into registers: all loads are
// issued before any is used, and the caller overlaps them with the previous tile's math.
__device__ __forceinline__ void fetch_patch(const nnop__stem_kparams &p, int t, staged &s)
{
    const unsigned short *x = static_cast<const unsigned short *>(p.x);
    const int tiles_w = (p.ow + kTileW - 1) / kTileW, tiles_h = (p.oh + kTileH - 1) / kTileH;
    const int n = t / (tiles_w * tiles_h);
    const int ih0 = (t / tiles_w) % tiles_h * kTileH * 2 - p.pad_h;
    const int iw0 = t % tiles_w * kTileW * 2 - p.pad_w;
    const int count = patch_rows(p.r) * kPatchW;
#pragma unroll
    for (int k = 0; k < kPerThread; k++) {
        int i = threadIdx.x + k * kThreads, pr = i / kPatchW, pc = i - pr * kPatchW;
        int ih = ih0 + pr, iw = iw0 + pc;
        unsigned v[4] = {0, 0, 0, 0};
        if (i < count && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) {
            const unsigned short *q = x + ((static_cast<int64_t>(n) * p.h + ih) * p.w + iw) * p.c;
#pragma unroll
            for (int c = 0; c < 4; c++)
                if (c < p.c)
                    v[c] = q[c];
        }
        s.px[k] = make_uint2(v[0] | (v[1] << 16), v[2] | (v[3] << 16));
    }
}

__device__ __forceinline__ void store_patch(const nnop__stem_kparams &p, const staged &s,
                                            unsigned short *patch)
{
    const int count = patch_rows(p.r) * kPatchW;
#pragma unroll
    for (int k = 0; k < kPerThread; k++) {
        int i = threadIdx.x + k * kThreads, pr = i / kPatchW, pc = i - pr * kPatchW;
        if (i < count)
            *reinterpret_cast<uint2 *>(patch + pr * kPatchStride + pc * 4) = s.px[k];
    }
}

// One m16 fragment (16 pixels of output row oh, columns ow0..) goes through the warp's
// staging area so that global stores are 16-byte, whole-line ones: the fragment layout would
// scatter each store over 8 lines.
template <bool BF16>
__device__ __forceinline__ void store_fragment(const nnop__stem_kparams &p,
                                               const float (&acc)[8][4], unsigned *stage, int n,
                                               int oh, int ow0)
{
    const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            unsigned v = pack2<BF16>(acc[j][half * 2], acc[j][half * 2 + 1]);
            stage[(g + half * 8) * kStageStride + j * 4 + t4] = p.relu ? relu2<BF16>(v) : v;
        }
    __syncwarp();
    if (oh < p.oh) {
        uint4 *y = static_cast<uint4 *>(p.y);
#pragma unroll
        for (int k = 0; k < 4; k++) { // 16 pixels x 8 chunks of 16 bytes
            const int i = lane + k * 32, px = i >> 3, chunk = i & 7;
            if (ow0 + px < p.ow)
                y[((static_cast<int64_t>(n) * p.oh + oh) * p.ow + ow0 + px) * 8 + chunk] =
                        *reinterpret_cast<const uint4 *>(stage + px * kStageStride + chunk * 4);
        }
    }
    __syncwarp();
}

// R > 0: the filter height fixed at compile time (the k loop fully unrolled), 0: p.r.
template <bool BF16, int R>
__global__ void __launch_bounds__(kThreads, 2) stem_conv_kernel(nnop__stem_kparams p)
{
    extern __shared__ uint4 smem_raw[];
    unsigned short *wsm = reinterpret_cast<unsigned short *>(smem_raw); // [64][w_stride]
    const int ws = w_stride(p.r);
    unsigned short *patch = wsm + kOutC * ws; // [patch_rows][kPatchStride]
    unsigned *stage = reinterpret_cast<unsigned *>(patch + patch_rows(p.r) * kPatchStride) +
                      (threadIdx.x >> 5) * kStageWords;
    float *sbias = reinterpret_cast<float *>(patch + patch_rows(p.r) * kPatchStride) +
                   kThreads / 32 * kStageWords; // [64], zero without bias
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int tiles_w = (p.ow + kTileW - 1) / kTileW, tiles_h = (p.oh + kTileH - 1) / kTileH;
    const int tiles = p.n * tiles_h * tiles_w;
    // A: lanes 0-15 address rows 0-15 at k 0, lanes 16-31 the same rows at k 8.
    const int a_off = (lane & 15) * 8 + (lane >> 4) * 8;
    // B: four 8x8 blocks (n-tile j: k 0-7, k 8-15; n-tile j+1: k 0-7, k 8-15).
    const int b_off = ((lane >> 4) * 8 + (lane & 7)) * ws + ((lane >> 3) & 1) * 8;
    for (int i = threadIdx.x; i < kOutC * ws / 8; i += kThreads)
        smem_raw[i] = static_cast<const uint4 *>(p.wp)[i];
    if (threadIdx.x < kOutC)
        sbias[threadIdx.x] = p.bias ? p.bias[threadIdx.x] : 0.f;
    staged next;
    if (blockIdx.x < tiles)
        fetch_patch(p, blockIdx.x, next);
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int tw = t % tiles_w, th = (t / tiles_w) % tiles_h, n = t / (tiles_w * tiles_h);
        const int oh0 = th * kTileH, ow0 = tw * kTileW;
        float acc[2][8][4];
        __syncthreads(); // the previous tile's fragments are read
        store_patch(p, next, patch);
        __syncthreads();
        if (t + gridDim.x < tiles) // the next tile's loads fly while this one computes
            fetch_patch(p, t + gridDim.x, next);
#pragma unroll
        for (int j = 0; j < 8; j++) // the bias is where the sums start
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[0][j][e] = acc[1][j][e] = sbias[j * 8 + (lane & 3) * 2 + (e & 1)];
#pragma unroll
        for (int r = 0; r < (R ? R : p.r); r++) {
#pragma unroll
            for (int kh = 0; kh < 2; kh++) { // s 0-3, then s 4-7
                unsigned a[2][4];
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
                    ldsm_x4(a[mt],
                            patch + ((warp * 2 + mt) * 2 + r) * kPatchStride + kh * 16 + a_off);
#pragma unroll
                for (int jp = 0; jp < 4; jp++) {
                    unsigned b[4];
                    ldsm_x4(b, wsm + jp * 16 * ws + (r * 2 + kh) * 16 + b_off);
#pragma unroll
                    for (int mt = 0; mt < 2; mt++) {
                        mma<BF16>(acc[mt][2 * jp], a[mt], b[0], b[1]);
                        mma<BF16>(acc[mt][2 * jp + 1], a[mt], b[2], b[3]);
                    }
                }
            }
        }
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
            store_fragment<BF16>(p, acc[mt], stage, n, oh0 + warp * 2 + mt, ow0);
    }
}

// wp[k][r * 32 + s * 4 + c] = w[k, c, r, s], zero where s >= S, c >= C or in the row padding.
__global__ void stem_weights_kernel(const unsigned short *w, unsigned short *wp, int R, int S,
                                    int C, int64_t sk, int64_t sc, int64_t sr, int64_t ss)
{
    const int ws = w_stride(R);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kOutC * ws;
         i += gridDim.x * blockDim.x) {
        int k = i / ws, q = i - k * ws, r = q / 32, s = (q % 32) / 4, c = q % 4;
        wp[i] = r < R && s < S && c < C ? w[k * sk + c * sc + r * sr + s * ss] : 0;
    }
}

} // namespace

extern "C" int nnop__stem_conv_fits(int r, int s, int c, int k)
{
    return r >= 1 && r <= 7 && s >= 1 && s <= 7 && c >= 1 && c <= 4 && k == kOutC;
}

extern "C" size_t nnop__stem_weights_bytes(int r)
{
    return (size_t)kOutC * w_stride(r) * 2;
}

extern "C" cudaError_t nnop__k_stem_weights(const void *w, void *wp, int r, int s, int c,
                                            const int64_t strides[4], cudaStream_t st)
{
    stem_weights_kernel<<<(kOutC * w_stride(r) + 255) / 256, 256, 0, st>>>(
            static_cast<const unsigned short *>(w), static_cast<unsigned short *>(wp), r, s, c,
            strides[0], strides[1], strides[2], strides[3]);
    return cudaGetLastError();
}

typedef void (*stem_kernel_fn)(nnop__stem_kparams);

static stem_kernel_fn kernel_for(const nnop__stem_kparams *p)
{
    if (p->r == 7) // the ResNet stem
        return p->dtype == 2 ? stem_conv_kernel<true, 7> : stem_conv_kernel<false, 7>;
    return p->dtype == 2 ? stem_conv_kernel<true, 0> : stem_conv_kernel<false, 0>;
}

extern "C" cudaError_t nnop__stem_conv_prepare(nnop__stem_kparams *p, int sm_count)
{
    int per_sm = 0;
    const int bytes = (int)smem_bytes(p->r);
    int64_t tiles =
            (int64_t)p->n * ((p->oh + kTileH - 1) / kTileH) * ((p->ow + kTileW - 1) / kTileW);
    // over the 48 KiB a kernel gets without asking
    cudaError_t e =
            cudaFuncSetAttribute(kernel_for(p), cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_for(p), kThreads, bytes);
    if (e != cudaSuccess)
        return e;
    if (per_sm < 1)
        return cudaErrorInvalidConfiguration;
    // persistent CTAs: each loads the weights once, then walks its share of the tiles
    p->grid = (int)(tiles < (int64_t)per_sm * sm_count ? tiles : (int64_t)per_sm * sm_count);
    return cudaSuccess;
}

extern "C" cudaError_t nnop__k_stem_conv(const nnop__stem_kparams *p, cudaStream_t s)
{
    kernel_for(p)<<<p->grid, kThreads, smem_bytes(p->r), s>>>(*p);
    return cudaGetLastError();
}
