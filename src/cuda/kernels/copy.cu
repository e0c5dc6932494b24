// copy.cu: copies into another layout: flatten (a copy for channels-first, a tiled
// transpose for channels-last) and the stem's channel pad (C = 3 to 4 in one store a
// pixel).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda/kernels/memory_bound.cuh"

namespace
{

using nnop_k::aligned;
using nnop_k::blocks_for;
using nnop_k::dtype_size;
using nnop_k::elems;
using nnop_k::kMax32;
using nnop_k::kMaxBlocks;
using nnop_k::kThreads;
using nnop_k::ld;
using nnop_k::packed_nchw;
using nnop_k::packed_nhwc;
using nnop_k::st;

// Flatten of a channels-last tensor: per image a [H*W][C] -> [C][H*W] transpose through a
// 64 x 64 shared tile (both the reads and the writes are row-contiguous). 64, not 32: each
// thread has 16 independent loads in flight before the barrier (a 32 x 32 tile of 16-bit
// elements moved 2 KB a block a round: 30% of the copy bandwidth, bench_kernels 2026-12-02).
// Rows padded so that a warp's column read hits 32 banks (1 word for 4-byte, 2 elements for
// 2-byte elements).
constexpr int kTile = 64;
template <typename T>
__global__ void __launch_bounds__(kThreads)
        transpose_kernel(const T *__restrict__ x, T *__restrict__ y, int n_, int hw, int c)
{
    __shared__ T tile[kTile][kTile + 4 / sizeof(T)];
    const int tiles_p = (hw + kTile - 1) / kTile, tiles_c = (c + kTile - 1) / kTile;
    const int total = n_ * tiles_p * tiles_c;
    for (int b = blockIdx.x; b < total; b += gridDim.x) {
        int tc = b % tiles_c, t = b / tiles_c;
        int tp = t % tiles_p, n = t / tiles_p;
        const T *xb = x + (size_t)n * hw * c;
        T *yb = y + (size_t)n * hw * c;
        int c0 = tc * kTile, p0 = tp * kTile;
#pragma unroll
        for (int r = threadIdx.y; r < kTile; r += kThreads / 32)
#pragma unroll
            for (int h = 0; h < kTile; h += 32) {
                int p = p0 + r, cc = c0 + h + threadIdx.x;
                if (p < hw && cc < c)
                    tile[r][h + threadIdx.x] = xb[(size_t)p * c + cc];
            }
        __syncthreads();
#pragma unroll
        for (int r = threadIdx.y; r < kTile; r += kThreads / 32)
#pragma unroll
            for (int h = 0; h < kTile; h += 32) {
                int cc = c0 + r, p = p0 + h + threadIdx.x;
                if (p < hw && cc < c)
                    yb[(size_t)cc * hw + p] = tile[h + threadIdx.x][r];
            }
        __syncthreads();
    }
}

// Flatten of a channels-last 16-bit tensor with C and H*W even (the pointers 4-byte aligned):
// 32-bit words both ways, channel pairs read and position pairs written, so a warp moves 128
// bytes an access (2-byte elements held 64: 65% of the copy bandwidth, bench_kernels
// 2026-12-03). Each thread reads the channel pair of two adjacent positions, so the 2x2 swap
// happens in registers (byte permutes) and the tile holds output words: [channel][position
// pair], the column XOR-swizzled by channel / 2 so that both the stores of channel pairs and
// the reads of position pairs hit 32 banks.
__global__ void __launch_bounds__(kThreads)
        transpose_pairs_kernel(const unsigned *__restrict__ x, unsigned *__restrict__ y, int n_,
                               int hw, int c)
{
    __shared__ unsigned tile[kTile][kTile / 2];
    const int tiles_p = (hw + kTile - 1) / kTile, tiles_c = (c + kTile - 1) / kTile;
    const int total = n_ * tiles_p * tiles_c, c2 = c / 2, hw2 = hw / 2;
    const int j = threadIdx.x; // read: channel pair; write: position pair
    for (int b = blockIdx.x; b < total; b += gridDim.x) {
        int tc = b % tiles_c, t = b / tiles_c;
        int tp = t % tiles_p, n = t / tiles_p;
        const unsigned *xb = x + (size_t)n * hw * c2;
        unsigned *yb = y + (size_t)n * hw2 * c;
        int c0 = tc * kTile, p0 = tp * kTile;
        // C and H*W even: a pair is inside the tensor whole or not at all
        unsigned lo[kTile / 16], hi[kTile / 16];
#pragma unroll
        for (int q = 0; q < kTile / 16; q++) {
            int p = p0 + 2 * (threadIdx.y + 8 * q), cc = c0 + 2 * j;
            unsigned a = 0, b2 = 0;
            if (p < hw && cc < c) {
                a = xb[p * c2 + cc / 2];
                b2 = xb[(p + 1) * c2 + cc / 2];
            }
            lo[q] = __byte_perm(a, b2, 0x5410); // channel cc at positions p, p + 1
            hi[q] = __byte_perm(a, b2, 0x7632); // channel cc + 1
        }
#pragma unroll
        for (int q = 0; q < kTile / 16; q++) {
            int k = threadIdx.y + 8 * q;
            tile[2 * j][k ^ j] = lo[q];
            tile[2 * j + 1][k ^ j] = hi[q];
        }
        __syncthreads();
#pragma unroll
        for (int r = threadIdx.y; r < kTile; r += kThreads / 32) {
            int cc = c0 + r, p = p0 + 2 * j;
            if (p < hw && cc < c)
                yb[(size_t)cc * hw2 + p / 2] = tile[r][j ^ (r >> 1)];
        }
        __syncthreads();
    }
}

__global__ void flatten_strided_kernel(const void *x, void *y, int dt, nnop__kview v)
{
    int64_t total = v.n * v.c * v.h * v.w;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t w = i % v.w, h = (i / v.w) % v.h, c = (i / (v.w * v.h)) % v.c;
        int64_t n = i / (v.w * v.h * v.c);
        st(y, dt, i, ld(x, dt, n * v.sn + c * v.sc + h * v.sh + w * v.sw));
    }
}

template <typename T>
__global__ void pad_channels_kernel(const T *x, T *y, int64_t pixels, int cin, int cout)
{
    int64_t total = pixels * cout;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t p = i / cout;
        int c = (int)(i % cout);
        y[i] = c < cin ? x[p * cin + c] : T(0);
    }
}

// The stem's case, one thread per pixel: three 2-byte channels in, one 8-byte store out (the
// 8-pixel, 16-byte-access variant measured no faster on H200: 75.5 vs 73.5 us for the stem).
__global__ void pad_3to4_u16_kernel(const unsigned short *x, uint2 *y, int64_t pixels)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < pixels;
         p += (int64_t)gridDim.x * blockDim.x) {
        const unsigned short *q = x + 3 * p;
        y[p] = make_uint2((unsigned)q[0] | ((unsigned)q[1] << 16), (unsigned)q[2]);
    }
}

} // namespace

extern "C" cudaError_t nnop__k_pad_channels(const void *x, void *y, int elem_size, int64_t pixels,
                                            int cin, int cout, cudaStream_t s)
{
    unsigned b = blocks_for(pixels * cout);
    if (elem_size == 2 && cin == 3 && cout == 4) {
        pad_3to4_u16_kernel<<<blocks_for(pixels), kThreads, 0, s>>>(
                static_cast<const unsigned short *>(x), static_cast<uint2 *>(y), pixels);
        return cudaGetLastError();
    }
    if (elem_size == 2)
        pad_channels_kernel<unsigned short>
                <<<b, kThreads, 0, s>>>(static_cast<const unsigned short *>(x),
                                        static_cast<unsigned short *>(y), pixels, cin, cout);
    else
        pad_channels_kernel<float><<<b, kThreads, 0, s>>>(
                static_cast<const float *>(x), static_cast<float *>(y), pixels, cin, cout);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_flatten(const void *x, void *y, int dtype, const nnop__kview *xv,
                                       cudaStream_t s)
{
    int64_t n = elems(*xv), hw = xv->h * xv->w;
    if (packed_nchw(*xv)) /* logical order is memory order: a copy */
        return cudaMemcpyAsync(y, x, (size_t)n * dtype_size(dtype), cudaMemcpyDeviceToDevice, s);
    if (packed_nhwc(*xv) && n <= kMax32) {
        int64_t tiles = xv->n * ((hw + kTile - 1) / kTile) * ((xv->c + kTile - 1) / kTile);
        unsigned b = (unsigned)(tiles < kMaxBlocks ? tiles : kMaxBlocks);
        dim3 block(32, kThreads / 32);
        if (dtype == 0)
            transpose_kernel<unsigned><<<b, block, 0, s>>>(static_cast<const unsigned *>(x),
                                                           static_cast<unsigned *>(y), (int)xv->n,
                                                           (int)hw, (int)xv->c);
        else if (xv->c % 2 == 0 && hw % 2 == 0 && aligned(x, 4) && aligned(y, 4))
            transpose_pairs_kernel<<<b, block, 0, s>>>(static_cast<const unsigned *>(x),
                                                       static_cast<unsigned *>(y), (int)xv->n,
                                                       (int)hw, (int)xv->c);
        else
            transpose_kernel<unsigned short><<<b, block, 0, s>>>(
                    static_cast<const unsigned short *>(x), static_cast<unsigned short *>(y),
                    (int)xv->n, (int)hw, (int)xv->c);
    } else {
        flatten_strided_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, dtype, *xv);
    }
    return cudaGetLastError();
}
