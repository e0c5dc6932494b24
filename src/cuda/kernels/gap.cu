// gap.cu: global average pooling: channels last over chunks of H*W (float sums added in
// chunk order, or handed to the gate kernel), channels first a warp a row or short rows
// staged in shared memory, a 64-bit strided kernel for the rest.
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
using nnop_k::fromf;
using nnop_k::kMax32;
using nnop_k::kMaxBlocks;
using nnop_k::kThreads;
using nnop_k::ld;
using nnop_k::ldv;
using nnop_k::packed_nchw;
using nnop_k::packed_nhwc;
using nnop_k::st;
using nnop_k::stage_elems;
using nnop_k::stage_flat;
using nnop_k::stv;
using nnop_k::SumAcc;
using nnop_k::tof;
using nnop_k::warp_sum;

// Global average pooling, channels last: block (blockIdx.x, n, blockIdx.z) owns blockDim.x
// vectors of channels and chunk z of H*W (positions [z * chunk, (z + 1) * chunk)); threadIdx.y
// splits the chunk; partial sums meet in shared memory. One chunk (gridDim.z = 1): the mean
// goes to y. Several (a few samples of many positions: one block a sample left most SMs
// idle), or to_sums: each block's float sum goes to sums[(n * gridDim.z + z) * c + channel]
// and gap_finish_kernel (or the gate kernel, gate.cu) adds them in chunk order
// (deterministic).
template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
        gap_nhwc_kernel(const T *__restrict__ x, T *__restrict__ y, float *__restrict__ sums,
                        int n_, int hw, int c, int chunk, float inv, bool to_sums)
{
    extern __shared__ float part[]; // [blockDim.y][blockDim.x][V]
    const int cv = c / V;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int p0 = blockIdx.z * chunk, p1 = p0 + chunk < hw ? p0 + chunk : hw;
    for (int n = blockIdx.y; n < n_; n += gridDim.y) {
        SumAcc<T, V> acc;
        acc.init();
        if (j < cv) {
            const T *xb = x + (size_t)n * hw * c + j * V;
            for (int p = p0 + threadIdx.y; p < p1; p += blockDim.y)
                acc.add(ldv<T, V>(xb + p * c));
        }
        float *mine = part + (threadIdx.y * blockDim.x + threadIdx.x) * V;
#pragma unroll
        for (int e = 0; e < V; e++)
            mine[e] = acc.a[e];
        __syncthreads();
        if (threadIdx.y == 0 && j < cv) {
            for (int r = 1; r < (int)blockDim.y; r++) {
                const float *o = part + (r * blockDim.x + threadIdx.x) * V;
#pragma unroll
                for (int e = 0; e < V; e++)
                    acc.a[e] += o[e];
            }
            if (gridDim.z == 1 && !to_sums) {
                stv<T, V>(y + (size_t)n * c + j * V, acc.get(inv));
            } else {
                float *o = sums + ((size_t)n * gridDim.z + blockIdx.z) * c + j * V;
#pragma unroll
                for (int e = 0; e < V; e++)
                    o[e] = acc.a[e];
            }
        }
        __syncthreads();
    }
}

// y[n, c] = inv * the sum over chunks of sums[n, chunk, c]
template <typename T>
__global__ void gap_finish_kernel(const float *__restrict__ sums, T *__restrict__ y, int n_, int c,
                                  int chunks, float inv)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_ * c; i += gridDim.x * blockDim.x) {
        const int n = i / c, ch = i - n * c;
        const float *q = sums + (size_t)n * chunks * c + ch;
        float a = 0.f;
        for (int z = 0; z < chunks; z++)
            a += q[(size_t)z * c];
        y[i] = fromf<T>(a * inv);
    }
}

// Global average pooling, channels first: one warp per (n, c) row of H*W contiguous
// elements, V-element vectors across the lanes, a shuffle reduction.
template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
        gap_nchw_kernel(const T *__restrict__ x, T *__restrict__ y, int rows, int hw, float inv)
{
    int lane = threadIdx.x & 31;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int nwarps = (gridDim.x * blockDim.x) >> 5;
    for (int r = warp; r < rows; r += nwarps) {
        const T *xr = x + (size_t)r * hw;
        SumAcc<T, V> acc;
        acc.init();
        for (int p = lane * V; p < hw; p += 32 * V)
            acc.add(ldv<T, V>(xr + p));
        float s = 0.f;
#pragma unroll
        for (int e = 0; e < V; e++)
            s += acc.a[e];
        s = warp_sum(s);
        if (lane == 0)
            y[r] = fromf<T>(s * inv);
    }
}

// Global average pooling, channels first, short rows (H*W <= kGapSmallHW, 7x7 heads): a
// warp a row would leave most lanes idle and read 196-byte pieces; instead a block stages
// `per` whole rows, per * H*W contiguous elements, in shared memory with 16-byte loads
// (stage_flat), then each of `per` threads sums one row there. Scalar staging loads held a
// 7x7 f32 head at 45% of the copy bandwidth (bench_kernels, 2026-12-02).
const int kGapSmallHW = 64;
const int kGapMaxChunks = 32; // channels-last: H*W chunks a sample at most
const int kGapSmallBytes = 32768;
template <typename T> __host__ __device__ constexpr int gap_small_rows(int hw)
{
    return stage_elems<T>(kGapSmallBytes) / hw < kThreads ? stage_elems<T>(kGapSmallBytes) / hw
                                                          : kThreads;
}
template <typename T>
__global__ void __launch_bounds__(kThreads)
        gap_nchw_small_kernel(const T *__restrict__ x, T *__restrict__ y, int rows, int hw,
                              float inv)
{
    __shared__ __align__(16) unsigned char raw[kGapSmallBytes];
    T *stage = reinterpret_cast<T *>(raw);
    const int per = gap_small_rows<T>(hw);
    for (int r0 = blockIdx.x * per; r0 < rows; r0 += gridDim.x * per) {
        const int nrows = min(per, rows - r0);
        const int off = stage_flat(stage, x + (size_t)r0 * hw, nrows * hw);
        __syncthreads();
        if ((int)threadIdx.x < nrows) {
            const T *row = stage + off + threadIdx.x * hw;
            float s = 0.f;
            for (int k = 0; k < hw; k++)
                s += tof(row[k]);
            y[r0 + threadIdx.x] = fromf<T>(s * inv);
        }
        __syncthreads();
    }
}

__global__ void gap_strided_kernel(const void *x, void *y, int dt, nnop__kview xv, nnop__kview yv)
{
    int64_t total = xv.n * xv.c;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = i % xv.c, n = i / xv.c;
        float acc = 0.f;
        for (int64_t h = 0; h < xv.h; h++)
            for (int64_t w = 0; w < xv.w; w++)
                acc += ld(x, dt, n * xv.sn + c * xv.sc + h * xv.sh + w * xv.sw);
        st(y, dt, n * yv.sn + c * yv.sc, acc / (float)(xv.h * xv.w));
    }
}

// Chunks of H*W for a channels-last global average pool of n samples x cblocks blocks: enough
// blocks for 4 a SM (132 SMs), each thread still summing at least 4 positions, at most 32.
// The block shape of gap_nhwc_kernel for c channels, v a thread: tx threads across channel
// vectors, ty across positions.
void gap_nhwc_block(int64_t c, int v, int *tx, int *ty)
{
    const int64_t cv = c / v;
    *tx = cv < 32 ? (int)cv : 32;
    *ty = kThreads / *tx;
}

int gap_chunks(int64_t n, int64_t c, int64_t hw, int v)
{
    int tx, ty;
    gap_nhwc_block(c, v, &tx, &ty);
    const int64_t cblocks = (c / v + tx - 1) / tx;
    int64_t want = (4 * 132 + n * cblocks - 1) / (n * cblocks), most = hw / (4 * ty);
    if (want > most)
        want = most;
    return (int)(want < 1 ? 1 : (want > kGapMaxChunks ? kGapMaxChunks : want));
}

// to_sums (channels last only): every chunk's float sums into sums, none added (*chunks: how
// many), y unused.
template <typename T>
void gap_typed(const void *x, void *y, float *sums, const nnop__kview &xv, int nhwc, cudaStream_t s,
               bool to_sums = false, int *chunks_used = nullptr)
{
    const int V = 16 / (int)sizeof(T);
    int n = (int)xv.n, c = (int)xv.c, hw = (int)(xv.h * xv.w);
    float inv = 1.f / (float)(xv.h * xv.w);
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    if (nhwc) {
        bool vec = c % V == 0 && aligned(x, 16) && (to_sums || aligned(y, 16));
        int v = vec ? V : 1, cv = c / v, tx, ty;
        gap_nhwc_block(c, v, &tx, &ty);
        int chunks = sums ? gap_chunks(n, c, hw, v) : 1;
        if (chunks_used)
            *chunks_used = chunks;
        int chunk = (hw + chunks - 1) / chunks;
        dim3 block(tx, ty), grid((cv + tx - 1) / tx, n < 65535 ? n : 65535, chunks);
        size_t smem = (size_t)tx * ty * v * sizeof(float);
        if (vec)
            gap_nhwc_kernel<T, V>
                    <<<grid, block, smem, s>>>(xt, yt, sums, n, hw, c, chunk, inv, to_sums);
        else
            gap_nhwc_kernel<T, 1>
                    <<<grid, block, smem, s>>>(xt, yt, sums, n, hw, c, chunk, inv, to_sums);
        if (chunks > 1 && !to_sums)
            gap_finish_kernel<T>
                    <<<blocks_for((int64_t)n * c), kThreads, 0, s>>>(sums, yt, n, c, chunks, inv);
    } else if (hw <= kGapSmallHW) {
        int64_t per = gap_small_rows<T>(hw);
        int64_t groups = ((int64_t)n * c + per - 1) / per;
        unsigned b = (unsigned)(groups < kMaxBlocks ? groups : kMaxBlocks);
        gap_nchw_small_kernel<T><<<b, kThreads, 0, s>>>(xt, yt, n * c, hw, inv);
    } else {
        unsigned b = blocks_for((int64_t)n * c * 32);
        if (hw % V == 0 && aligned(x, 16))
            gap_nchw_kernel<T, V><<<b, kThreads, 0, s>>>(xt, yt, n * c, hw, inv);
        else
            gap_nchw_kernel<T, 1><<<b, kThreads, 0, s>>>(xt, yt, n * c, hw, inv);
    }
}

} // namespace

// The most chunks the channels-last pool may take for x (the launch takes V channels a thread
// when the pointers allow, else 1: room for either), or 0 where that kernel does not run.
static int gap_max_chunks(const nnop__kview &xv, int dtype)
{
    const int V = 16 / (int)dtype_size(dtype);
    const int64_t n = xv.n, c = xv.c, hw = xv.h * xv.w;
    int chunks;
    if (!packed_nhwc(xv) || c < 2 || elems(xv) > kMax32)
        return 0;
    chunks = gap_chunks(n, c, hw, 1);
    if (c % V == 0 && gap_chunks(n, c, hw, V) > chunks)
        chunks = gap_chunks(n, c, hw, V);
    return chunks;
}

extern "C" size_t nnop__gap_scratch_bytes(const nnop__kview *xv, int dtype)
{
    const int chunks = gap_max_chunks(*xv, dtype);
    return chunks > 1 ? (size_t)(xv->n * xv->c * chunks) * sizeof(float) : 0;
}

extern "C" size_t nnop__gap_sums_bytes(const nnop__kview *xv, int dtype)
{
    const int chunks = xv->n > 65535 ? 0 : gap_max_chunks(*xv, dtype);
    return (size_t)(xv->n * xv->c * chunks) * sizeof(float);
}

extern "C" cudaError_t nnop__k_gap_sums(const void *x, int dtype, const nnop__kview *xv,
                                        float *sums, int *chunks, cudaStream_t s)
{
    if (dtype == 0)
        gap_typed<float>(x, NULL, sums, *xv, 1, s, true, chunks);
    else if (dtype == 1)
        gap_typed<__half>(x, NULL, sums, *xv, 1, s, true, chunks);
    else
        gap_typed<__nv_bfloat16>(x, NULL, sums, *xv, 1, s, true, chunks);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_gap(const void *x, void *y, int dtype, const nnop__kview *xv,
                                   const nnop__kview *yv, float *sums, cudaStream_t s)
{
    /* y is [n, c] packed in either layout: y[n * C + c] */
    bool ypacked = (yv->n == 1 || yv->sn == xv->c) && (xv->c == 1 || yv->sc == 1);
    bool nhwc = packed_nhwc(*xv) && (xv->c > 1 || !packed_nchw(*xv));
    bool nchw = !nhwc && packed_nchw(*xv);
    if (!ypacked || !(nhwc || nchw) || elems(*xv) > kMax32)
        gap_strided_kernel<<<blocks_for(xv->n * xv->c), kThreads, 0, s>>>(x, y, dtype, *xv, *yv);
    else if (dtype == 0)
        gap_typed<float>(x, y, sums, *xv, nhwc, s);
    else if (dtype == 1)
        gap_typed<__half>(x, y, sums, *xv, nhwc, s);
    else
        gap_typed<__nv_bfloat16>(x, y, sums, *xv, nhwc, s);
    return cudaGetLastError();
}
