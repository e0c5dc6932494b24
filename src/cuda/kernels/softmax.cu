// softmax.cu: softmax over C: contiguous rows in registers (a few lanes a row, or a block
// a long row), channels-first a thread a position (C up to 24 in registers), a 64-bit
// strided kernel for the rest.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda/kernels/memory_bound.cuh"

namespace
{

using nnop_k::aligned;
using nnop_k::block_max;
using nnop_k::block_sum;
using nnop_k::blocks_for;
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
using nnop_k::stv;
using nnop_k::tof;
using nnop_k::Vec;

// Online softmax state: running max m (NaN-ignoring, as the reference's max) and the sum s of
// exp(x - m); -inf inputs add nothing (exp(-inf - m) is 0 once m is known).
__device__ __forceinline__ void sm_push(float &m, float &s, float v)
{
    float mn = fmaxf(m, v);
    s = s * (mn == m ? 1.f : expf(m - mn)) + (v == -INFINITY ? 0.f : expf(v - mn));
    m = mn;
}
// V values at once: their max first, so the running sum is rescaled once per vector (V + 1
// exponentials for V values instead of 2 V).
template <int V> __device__ __forceinline__ void sm_push_vec(float &m, float &s, const float *v)
{
    float mn = m, add = 0.f;
#pragma unroll
    for (int e = 0; e < V; e++)
        mn = fmaxf(mn, v[e]);
#pragma unroll
    for (int e = 0; e < V; e++)
        add += v[e] == -INFINITY ? 0.f : expf(v[e] - mn);
    s = s * (mn == m ? 1.f : expf(m - mn)) + add;
    m = mn;
}

// Softmax over rows of C contiguous elements (2-D, NHWC, or 1x1 spatial), rows of up to
// L * kSmK vectors: L lanes a row (32 / L rows a warp), the row in registers (one read, one
// write, exact max then sum as the reference). L is the fewest lanes that hold the row: a warp
// a row left a 1000-class f16 row at 4 loads a lane and 47% of the copy bandwidth
// (bench_kernels, 2026-12-02), and a 10-class row at 10 busy lanes of 32.
const int kSmK = 8;

// A 16-bit row: kept as loaded (packed, 4 registers a vector where floats took 8: 80
// registers a thread), every load issued before the first use, the exponentials by __expf
// (its error, a few 1e-6 relative, is far below 16-bit rounding) computed twice rather than
// kept. The float kernel's exact expf and float row held f16 x 1000 rows at 60% of the copy
// bandwidth, where f32 rows ran at 95%: twice the elements a byte. NaN and -inf as there: a
// NaN never wins the max and makes the sum NaN; -inf gives __expf(-inf) = 0.
template <typename T, int V, int L>
__device__ __forceinline__ void row_packed(const T *xr, T *yr, bool live, int lane, int cv)
{
    Vec<T, V> r[kSmK];
    float mx = -INFINITY, sum = 0.f;
#pragma unroll
    for (int k = 0; k < kSmK; k++)
        if (live && k * L + lane < cv)
            r[k] = ldv<T, V>(xr + (k * L + lane) * V);
#pragma unroll
    for (int k = 0; k < kSmK; k++)
        if (live && k * L + lane < cv)
#pragma unroll
            for (int e = 0; e < V; e++) {
                const float f = tof(r[k].v[e]);
                mx = f > mx ? f : mx;
            }
    for (int o = L / 2; o > 0; o >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
#pragma unroll
    for (int k = 0; k < kSmK; k++)
        if (live && k * L + lane < cv)
#pragma unroll
            for (int e = 0; e < V; e++)
                sum += __expf(tof(r[k].v[e]) - mx);
    for (int o = L / 2; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    const float inv = 1.f / sum;
#pragma unroll
    for (int k = 0; k < kSmK; k++)
        if (live && k * L + lane < cv) {
            Vec<T, V> a;
#pragma unroll
            for (int e = 0; e < V; e++)
                a.v[e] = fromf<T>(__expf(tof(r[k].v[e]) - mx) * inv);
            stv<T, V>(yr + (k * L + lane) * V, a);
        }
}

template <typename T, int V, int L>
__global__ void __launch_bounds__(kThreads)
        softmax_rows_kernel(const T *__restrict__ x, T *__restrict__ y, int rows, int c)
{
    constexpr int G = 32 / L; // rows a warp
    const int lane = threadIdx.x % L, sub = (threadIdx.x & 31) / L;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int nwarps = (gridDim.x * blockDim.x) >> 5;
    const int cv = c / V;
    // rb is the same in every lane of the warp, so all of them reach every shuffle
    for (int rb = warp * G; rb < rows; rb += nwarps * G) {
        const int r = rb + sub;
        const bool live = r < rows;
        const T *xr = x + (size_t)(live ? r : 0) * c;
        T *yr = y + (size_t)r * c;
        if (sizeof(T) == 2) {
            row_packed<T, V, L>(xr, yr, live, lane, cv);
            continue;
        }
        float v[kSmK][V];
        float mx = -INFINITY, sum = 0.f;
#pragma unroll
        for (int k = 0; k < kSmK; k++) {
            int j = k * L + lane;
            if (live && j < cv) {
                Vec<T, V> a = ldv<T, V>(xr + j * V);
#pragma unroll
                for (int e = 0; e < V; e++) {
                    v[k][e] = tof(a.v[e]);
                    mx = v[k][e] > mx ? v[k][e] : mx;
                }
            }
        }
        for (int o = L / 2; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
#pragma unroll
        for (int k = 0; k < kSmK; k++)
            if (live && k * L + lane < cv)
#pragma unroll
                for (int e = 0; e < V; e++) {
                    v[k][e] = expf(v[k][e] - mx);
                    sum += v[k][e];
                }
        for (int o = L / 2; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        const float inv = 1.f / sum; // one division a row, not one an element
#pragma unroll
        for (int k = 0; k < kSmK; k++) {
            int j = k * L + lane;
            if (live && j < cv) {
                Vec<T, V> a;
#pragma unroll
                for (int e = 0; e < V; e++)
                    a.v[e] = fromf<T>(v[k][e] * inv);
                stv<T, V>(yr + j * V, a);
            }
        }
    }
}

// Rows longer than 32 * kSmK vectors: a block a row. The first kLongK * kLongThreads vectors
// stay in registers as loaded (16-bit stays packed), read once: their exact max, then the sum
// of exponentials, then the outputs, as row_packed does (sm_exp: __expf for 16-bit types); any
// vectors beyond are read twice, summed online. The online sum over the registers too (two
// exact expf an element) held f16 x 32000 rows at 57% of the copy bandwidth (bench_kernels
// 2026-12-03); a warp a row with two reads of every element at 31%.
constexpr int kLongThreads = 512, kLongK = 8;
// exp for softmax: __expf for 16-bit outputs, whose rounding is far above its error
template <typename T> __device__ __forceinline__ float sm_exp(float v)
{
    return sizeof(T) == 2 ? __expf(v) : expf(v);
}
template <typename T, int V>
__global__ void __launch_bounds__(kLongThreads)
        softmax_long_kernel(const T *__restrict__ x, T *__restrict__ y, int rows, int c)
{
    __shared__ float red[kLongThreads / 32];
    const int cv = c / V;
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + (size_t)r * c;
        T *yr = y + (size_t)r * c;
        Vec<T, V> keep[kLongK];
#pragma unroll
        for (int k = 0; k < kLongK; k++) {
            const int j = k * kLongThreads + threadIdx.x;
            if (j < cv)
                keep[k] = ldv<T, V>(xr + j * V);
        }
        // the tail beyond the registers, online: its max mt and sum st relative to it
        float mt = -INFINITY, st = 0.f, mx = -INFINITY;
        for (int j = kLongK * kLongThreads + threadIdx.x; j < cv; j += kLongThreads) {
            Vec<T, V> a = ldv<T, V>(xr + j * V);
            float f[V];
#pragma unroll
            for (int e = 0; e < V; e++)
                f[e] = tof(a.v[e]);
            sm_push_vec<V>(mt, st, f);
        }
#pragma unroll
        for (int k = 0; k < kLongK; k++)
            if (k * kLongThreads + (int)threadIdx.x < cv)
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const float f = tof(keep[k].v[e]);
                    mx = f > mx ? f : mx;
                }
        mx = block_max(mt > mx ? mt : mx, red);
        // an empty or all -inf tail adds nothing (not 0 * NaN where the whole row is -inf); a
        // NaN in it makes st NaN
        float sum = st == 0.f ? 0.f : st * expf(mt - mx);
#pragma unroll
        for (int k = 0; k < kLongK; k++)
            if (k * kLongThreads + (int)threadIdx.x < cv)
#pragma unroll
                for (int e = 0; e < V; e++)
                    sum += sm_exp<T>(tof(keep[k].v[e]) - mx);
        const float inv = 1.f / block_sum(sum, red);
#pragma unroll
        for (int k = 0; k < kLongK; k++) {
            const int j = k * kLongThreads + threadIdx.x;
            if (j < cv) {
                Vec<T, V> a;
#pragma unroll
                for (int e = 0; e < V; e++)
                    a.v[e] = fromf<T>(sm_exp<T>(tof(keep[k].v[e]) - mx) * inv);
                stv<T, V>(yr + j * V, a);
            }
        }
        for (int j = kLongK * kLongThreads + threadIdx.x; j < cv; j += kLongThreads) {
            Vec<T, V> a = ldv<T, V>(xr + j * V);
#pragma unroll
            for (int e = 0; e < V; e++)
                a.v[e] = fromf<T>(sm_exp<T>(tof(a.v[e]) - mx) * inv);
            stv<T, V>(yr + j * V, a);
        }
    }
}

// Softmax over C of channels-first 4-D tensors (C strided by H*W): one thread per (n, h, w),
// so consecutive threads read consecutive addresses at every channel.
template <typename T>
__global__ void __launch_bounds__(kThreads)
        softmax_cstrided_kernel(const T *__restrict__ x, T *__restrict__ y, int n_, int c, int hw)
{
    const int total = n_ * hw;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        int n = i / hw, p = i - n * hw;
        size_t base = (size_t)n * c * hw + p;
        float m = -INFINITY, s = 0.f;
        for (int k = 0; k < c; k++)
            sm_push(m, s, tof(x[base + (size_t)k * hw]));
        for (int k = 0; k < c; k++)
            y[base + (size_t)k * hw] = fromf<T>(expf(tof(x[base + (size_t)k * hw]) - m) / s);
    }
}

// The same for C <= kSmRegC (24: VOC 21, Cityscapes 19 classes; 32 spilled for bf16): a thread owns
// V consecutive positions (one 8-byte load a channel, a warp 256 bytes of each channel row) and
// keeps the C loaded vectors in registers, so x is read once, with one reciprocal a position.
// What limits it is occupancy (3 blocks a SM; see the launch). For 16-bit outputs the
// exponentials take __expf, whose error is far below their rounding.
const int kSmRegC = 24;
template <typename T, int V>
__global__ void __launch_bounds__(kThreads, 3)
        softmax_cstrided_reg_kernel(const T *__restrict__ x, T *__restrict__ y, int n_, int c,
                                    int hw)
{
    const int hv = hw / V, total = n_ * hv;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        const int n = i / hv;
        const size_t at = (size_t)n * c * hw + (size_t)(i - n * hv) * V;
        Vec<T, V> r[kSmRegC];
        float m[V], s[V];
#pragma unroll
        for (int k = 0; k < kSmRegC; k++)
            if (k < c)
                r[k] = ldv<T, V>(x + at + (size_t)k * hw);
#pragma unroll
        for (int j = 0; j < V; j++)
            m[j] = -INFINITY, s[j] = 0.f;
#pragma unroll
        for (int k = 0; k < kSmRegC; k++)
            if (k < c)
#pragma unroll
                for (int j = 0; j < V; j++)
                    m[j] = fmaxf(m[j], tof(r[k].v[j]));
#pragma unroll
        for (int k = 0; k < kSmRegC; k++)
            if (k < c)
#pragma unroll
                for (int j = 0; j < V; j++) {
                    const float v = tof(r[k].v[j]);
                    s[j] += v == -INFINITY ? 0.f : sm_exp<T>(v - m[j]);
                }
#pragma unroll
        for (int j = 0; j < V; j++)
            s[j] = 1.f / s[j];
#pragma unroll
        for (int k = 0; k < kSmRegC; k++)
            if (k < c) {
                Vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = fromf<T>(sm_exp<T>(tof(r[k].v[j]) - m[j]) * s[j]);
                stv<T, V>(y + at + (size_t)k * hw, o);
            }
    }
}

__global__ void softmax_strided_kernel(const void *x, void *y, int dt, nnop__kview v)
{
    int64_t rows = v.n * v.h * v.w;
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        int64_t w = r % v.w, h = (r / v.w) % v.h, n = r / (v.w * v.h);
        int64_t base = n * v.sn + h * v.sh + w * v.sw;
        float m = -INFINITY, s = 0.f;
        for (int64_t c = 0; c < v.c; c++)
            sm_push(m, s, ld(x, dt, base + c * v.sc));
        for (int64_t c = 0; c < v.c; c++)
            st(y, dt, base + c * v.sc, expf(ld(x, dt, base + c * v.sc) - m) / s);
    }
}

// Lanes a row for rows of cv vectors in registers: the fewest of 4, 8, 16, 32 that hold it
// (0: longer rows, a block each).
int softmax_lanes(int64_t cv)
{
    for (int l = 4; l <= 32; l *= 2)
        if (cv <= (int64_t)l * kSmK)
            return l;
    return 0;
}

template <typename T, int V> void softmax_rows(const T *x, T *y, int rows, int c, cudaStream_t s)
{
    const int lanes = softmax_lanes(c / V);
    const unsigned b = blocks_for((int64_t)rows * (lanes ? lanes : 32));
    if (lanes == 4)
        softmax_rows_kernel<T, V, 4><<<b, kThreads, 0, s>>>(x, y, rows, c);
    else if (lanes == 8)
        softmax_rows_kernel<T, V, 8><<<b, kThreads, 0, s>>>(x, y, rows, c);
    else if (lanes == 16)
        softmax_rows_kernel<T, V, 16><<<b, kThreads, 0, s>>>(x, y, rows, c);
    else if (lanes == 32)
        softmax_rows_kernel<T, V, 32><<<b, kThreads, 0, s>>>(x, y, rows, c);
    else
        softmax_long_kernel<T, V>
                <<<(unsigned)(rows < kMaxBlocks ? rows : kMaxBlocks), kLongThreads, 0, s>>>(
                        x, y, rows, c);
}

template <typename T>
void softmax_typed(const void *x, void *y, const nnop__kview &v, int rows_contig, cudaStream_t s)
{
    const int V = 16 / (int)sizeof(T);
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    int n = (int)v.n, c = (int)v.c, hw = (int)(v.h * v.w);
    if (rows_contig) {
        if (c % V == 0 && aligned(x, 16) && aligned(y, 16))
            softmax_rows<T, V>(xt, yt, n * hw, c, s);
        else
            softmax_rows<T, 1>(xt, yt, n * hw, c, s);
    } else {
        // 8-byte vectors (4 of 16-bit, 2 floats), at most 85 registers a thread so that 3
        // blocks fit a SM: 16-byte vectors took 138 registers, one block a SM (12.5%
        // occupancy), and held C = 21 f16 at 40-45% of the copy; this 72% (ncu, bench_kernels
        // 2026-12-04: 8-byte with 2 blocks 62%, 4-byte with 4 blocks 67%)
        constexpr int VR = 8 / sizeof(T);
        if (c <= kSmRegC && hw % VR == 0 && aligned(x, 8) && aligned(y, 8))
            softmax_cstrided_reg_kernel<T, VR>
                    <<<blocks_for((int64_t)n * hw / VR), kThreads, 0, s>>>(xt, yt, n, c, hw);
        else
            softmax_cstrided_kernel<T>
                    <<<blocks_for((int64_t)n * hw), kThreads, 0, s>>>(xt, yt, n, c, hw);
    }
}

} // namespace

extern "C" cudaError_t nnop__k_softmax(const void *x, void *y, int dtype, const nnop__kview *v,
                                       cudaStream_t s)
{
    bool rows = packed_nhwc(*v), cfirst = !rows && packed_nchw(*v);
    if (!(rows || cfirst) || elems(*v) > kMax32)
        softmax_strided_kernel<<<blocks_for(v->n * v->h * v->w), kThreads, 0, s>>>(x, y, dtype, *v);
    else if (dtype == 0)
        softmax_typed<float>(x, y, *v, rows, s);
    else if (dtype == 1)
        softmax_typed<__half>(x, y, *v, rows, s);
    else
        softmax_typed<__nv_bfloat16>(x, y, *v, rows, s);
    return cudaGetLastError();
}
