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
//
// With p.pool, a 3x3 stride-2 max pool (padding 1) follows in the same kernel and the conv
// output is never written: a tile computes the 16 x 16 conv outputs at rows and columns
// 14 t - 1 .. 14 t + 14 and pools them into the 7 x 7 outputs 7 t .. 7 t + 6. Neighbouring
// tiles share two conv rows and columns, computed twice (1.31x the conv's math), so that the
// tiles stay independent and batch 1 still fills the GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/mma.cuh"
#include "kernels.h"

namespace
{

using nnop_k::ldsm_x4;
using nnop_k::mma;
using nnop_k::pack2;

const int kTileH = 16;                    // output rows per tile, two per warp
const int kTileW = 16;                    // output columns per tile: one m16 fragment
const int kThreads = kTileH / 2 * 32;     // eight warps
const int kOutC = 64;                     // output channels: eight n8 fragments
const int kPatchW = (kTileW - 1) * 2 + 8; // input pixels per staged row (s up to 7)
const int kPatchStride = kPatchW * 4;     // halves per staged row, 4 channels a pixel
const int kStageStride = kOutC / 2 + 4;   // words per staged output pixel (+16 B: no conflicts)
const int kStageWords = kTileW * kStageStride; // one warp's output staging area
const int kPoolTile = 7;                       // pooled outputs a tile, each way (p.pool)
const int kPoolVectors = kPoolTile * kPoolTile * kOutC / 8; // 16-byte outputs a pooled tile

__host__ __device__ inline int w_stride(int r)
{
    return r * 32 + 8; // +8 halves: the 8 rows of one ldmatrix hit 8 different bank groups
}

__host__ __device__ inline int patch_rows(int r)
{
    return (kTileH - 1) * 2 + r;
}

// Words of output staging: a warp's fragment each, or with the pool the whole tile.
__host__ __device__ inline int stage_words(int pool)
{
    return pool ? kTileH * kTileW * kStageStride : kThreads / 32 * kStageWords;
}

size_t smem_bytes(int r, int pool)
{
    return (size_t)(kOutC * w_stride(r) + patch_rows(r) * kPatchStride) * 2 +
           ((size_t)stage_words(pool) + kOutC) * 4;
}

// max of two packed pairs, NaN propagating (PyTorch's ReLU and max pool).
template <bool BF16> __device__ __forceinline__ unsigned max2(unsigned a, unsigned b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    (void)b;
    __trap(); // never picked below sm_80 (see mma)
    return a;
#else
    if (BF16) {
        __nv_bfloat162 h = __hmax2_nan(*reinterpret_cast<__nv_bfloat162 *>(&a),
                                       *reinterpret_cast<__nv_bfloat162 *>(&b));
        return *reinterpret_cast<unsigned *>(&h);
    }
    __half2 h = __hmax2_nan(*reinterpret_cast<__half2 *>(&a), *reinterpret_cast<__half2 *>(&b));
    return *reinterpret_cast<unsigned *>(&h);
#endif
}

// max(v, 0) on two packed halves (the same as before rounding: rounding is monotonic); NaN
// stays NaN.
template <bool BF16> __device__ __forceinline__ unsigned relu2(unsigned v)
{
    return max2<BF16>(v, 0u);
}

// Where tile t's conv outputs start: 16 x 16 tiles side by side, or with the pool 16 x 16
// tiles 14 apart from row and column -1.
struct tile_pos {
    int n, oh0, ow0;
};

__host__ __device__ inline int64_t tile_count(const nnop__stem_kparams &p)
{
    if (p.pool)
        return (int64_t)p.n * ((p.ph + kPoolTile - 1) / kPoolTile) *
               ((p.pw + kPoolTile - 1) / kPoolTile);
    return (int64_t)p.n * ((p.oh + kTileH - 1) / kTileH) * ((p.ow + kTileW - 1) / kTileW);
}

__device__ __forceinline__ tile_pos tile_at(const nnop__stem_kparams &p, int t)
{
    tile_pos q;
    if (p.pool) {
        const int tw = (p.pw + kPoolTile - 1) / kPoolTile, th = (p.ph + kPoolTile - 1) / kPoolTile;
        q.n = t / (tw * th);
        q.oh0 = (t / tw) % th * kPoolTile * 2 - 1;
        q.ow0 = t % tw * kPoolTile * 2 - 1;
        return q;
    }
    const int tw = (p.ow + kTileW - 1) / kTileW, th = (p.oh + kTileH - 1) / kTileH;
    q.n = t / (tw * th);
    q.oh0 = (t / tw) % th * kTileH;
    q.ow0 = t % tw * kTileW;
    return q;
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
    const tile_pos q = tile_at(p, t);
    const int n = q.n, ih0 = q.oh0 * 2 - p.pad_h, iw0 = q.ow0 * 2 - p.pad_w;
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

// One m16 fragment (16 conv outputs of one row) into shared memory, 36 words a pixel: the
// fragment layout would scatter each global store over 8 lines.
template <bool BF16>
__device__ __forceinline__ void stage_fragment(const nnop__stem_kparams &p,
                                               const float (&acc)[8][4], unsigned *stage)
{
    const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            unsigned v = pack2<BF16>(acc[j][half * 2], acc[j][half * 2 + 1]);
            stage[(g + half * 8) * kStageStride + j * 4 + t4] = p.relu ? relu2<BF16>(v) : v;
        }
}

// A fragment of output row oh, columns ow0.., through the warp's staging area to y as
// 16-byte, whole-line stores.
template <bool BF16>
__device__ __forceinline__ void store_fragment(const nnop__stem_kparams &p,
                                               const float (&acc)[8][4], unsigned *stage, int n,
                                               int oh, int ow0)
{
    const int lane = threadIdx.x & 31;
    stage_fragment<BF16>(p, acc, stage);
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

// The pooled tile from the staged 16 x 16 conv outputs (the whole block's, after a barrier):
// output (ph, pw) is the max over conv rows 2 ph - 1 .. 2 ph + 1 and the same columns, those
// outside the conv output skipped (padding never wins); a thread a 16-byte vector.
template <bool BF16>
__device__ __forceinline__ void pool_tile(const nnop__stem_kparams &p, const unsigned *stage,
                                          tile_pos q)
{
    const unsigned neg_inf = BF16 ? 0xFF80FF80u : 0xFC00FC00u;
    const int ph0 = (q.oh0 + 1) / 2, pw0 = (q.ow0 + 1) / 2;
    for (int v = threadIdx.x; v < kPoolVectors; v += kThreads) {
        const int px = v >> 3, chunk = v & 7, pr = px / kPoolTile, pc = px - pr * kPoolTile;
        if (ph0 + pr >= p.ph || pw0 + pc >= p.pw)
            continue;
        unsigned m[4] = {neg_inf, neg_inf, neg_inf, neg_inf};
#pragma unroll
        for (int dr = 0; dr < 3; dr++) {
            const int lr = pr * 2 + dr, oh = q.oh0 + lr;
            if (oh < 0 || oh >= p.oh)
                continue;
#pragma unroll
            for (int dc = 0; dc < 3; dc++) {
                const int lc = pc * 2 + dc, ow = q.ow0 + lc;
                if (ow < 0 || ow >= p.ow)
                    continue;
                const uint4 e = *reinterpret_cast<const uint4 *>(
                        stage + (lr * kTileW + lc) * kStageStride + chunk * 4);
                m[0] = max2<BF16>(m[0], e.x), m[1] = max2<BF16>(m[1], e.y);
                m[2] = max2<BF16>(m[2], e.z), m[3] = max2<BF16>(m[3], e.w);
            }
        }
        static_cast<uint4 *>(
                p.y)[((static_cast<int64_t>(q.n) * p.ph + ph0 + pr) * p.pw + pw0 + pc) * 8 +
                     chunk] = make_uint4(m[0], m[1], m[2], m[3]);
    }
}

// R > 0: the filter height fixed at compile time (the k loop fully unrolled), 0: p.r.
// POOL: p.pool (the tiles pooled in shared memory, the conv output never stored).
template <bool BF16, int R, bool POOL>
__global__ void __launch_bounds__(kThreads, 2) stem_conv_kernel(nnop__stem_kparams p)
{
    extern __shared__ uint4 smem_raw[];
    unsigned short *wsm = reinterpret_cast<unsigned short *>(smem_raw); // [64][w_stride]
    const int ws = w_stride(p.r);
    unsigned short *patch = wsm + kOutC * ws; // [patch_rows][kPatchStride]
    unsigned *stage_all = reinterpret_cast<unsigned *>(patch + patch_rows(p.r) * kPatchStride);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // the warp's rows of the tile (POOL), or its own fragment area
    unsigned *stage = stage_all + (POOL ? warp * 2 * kTileW * kStageStride : warp * kStageWords);
    float *sbias = reinterpret_cast<float *>(stage_all + stage_words(POOL)); // [64], 0: no bias
    const int tiles = (int)tile_count(p);
    // A: lanes 0-15 address rows 0-15 at k 0, lanes 16-31 the same rows at k 8.
    const int a_off = (lane & 15) * 8 + (lane >> 4) * 8;
    // B: four 8x8 blocks (n-tile j: k 0-7, k 8-15; n-tile j+1: k 0-7, k 8-15).
    const int b_off = ((lane >> 4) * 8 + (lane & 7)) * ws + ((lane >> 3) & 1) * 8;
    for (int i = threadIdx.x; i < kOutC * ws / 8; i += kThreads)
        smem_raw[i] = static_cast<const uint4 *>(p.wp)[i];
    if (threadIdx.x < kOutC)
        sbias[threadIdx.x] = p.bias ? p.bias[threadIdx.x] : 0.f;
    // A K slice spans 8 filter columns: those at s >= S hold a neighbour's pixel against a
    // zero weight, and 0 x NaN or 0 x inf would leak into this output (PyTorch's NaN rules):
    // they are zeroed in the A fragments. Registers 0-1 hold column 4 kh + (lane & 3) / 2,
    // registers 2-3 two columns further.
    unsigned keep[2][2];
#pragma unroll
    for (int kh = 0; kh < 2; kh++)
#pragma unroll
        for (int half = 0; half < 2; half++)
            keep[kh][half] = kh * 4 + half * 2 + ((lane & 3) >> 1) < p.s ? ~0u : 0u;
    staged next;
    if (blockIdx.x < tiles)
        fetch_patch(p, blockIdx.x, next);
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const tile_pos q = tile_at(p, t);
        float acc[2][8][4];
        __syncthreads(); // the previous tile's staged outputs are read
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
                for (int mt = 0; mt < 2; mt++) {
                    ldsm_x4(a[mt],
                            patch + ((warp * 2 + mt) * 2 + r) * kPatchStride + kh * 16 + a_off);
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        a[mt][e] &= keep[kh][e >> 1];
                }
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
        if (POOL) {
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
                stage_fragment<BF16>(p, acc[mt], stage + mt * kTileW * kStageStride);
            __syncthreads(); // the whole tile staged
            pool_tile<BF16>(p, stage_all, q);
        } else {
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
                store_fragment<BF16>(p, acc[mt], stage, q.n, q.oh0 + warp * 2 + mt, q.ow0);
        }
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

template <bool POOL> static stem_kernel_fn kernel_of(const nnop__stem_kparams *p)
{
    if (p->r == 7) // the ResNet stem
        return p->dtype == 2 ? stem_conv_kernel<true, 7, POOL> : stem_conv_kernel<false, 7, POOL>;
    return p->dtype == 2 ? stem_conv_kernel<true, 0, POOL> : stem_conv_kernel<false, 0, POOL>;
}

static stem_kernel_fn kernel_for(const nnop__stem_kparams *p)
{
    return p->pool ? kernel_of<true>(p) : kernel_of<false>(p);
}

extern "C" cudaError_t nnop__stem_conv_prepare(nnop__stem_kparams *p, int sm_count)
{
    int per_sm = 0;
    const int bytes = (int)smem_bytes(p->r, p->pool);
    const int64_t tiles = tile_count(*p);
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
    kernel_for(p)<<<p->grid, kThreads, smem_bytes(p->r, p->pool), s>>>(*p);
    return cudaGetLastError();
}
