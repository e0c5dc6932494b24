// device_util.cuh: device helpers nnop's own kernels share (dtype codes as in kernels.h: 0 f32,
// 1 f16, 2 bf16; float arithmetic inside): loads and stores by dtype code or by element type,
// vectors of V elements loaded or stored as one access, warp and block sums and maxima, the
// (n, c, h, w) of a linear index over a view, channel or width fastest, and grid sizes.
#ifndef NNOP_CUDA_DEVICE_UTIL_CUH
#define NNOP_CUDA_DEVICE_UTIL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

#include "cuda/kernels/kernels.h"

namespace nnop_k
{

__device__ __forceinline__ float ld(const void *p, int dt, int64_t i)
{
    if (dt == 0)
        return static_cast<const float *>(p)[i];
    if (dt == 1)
        return __half2float(static_cast<const __half *>(p)[i]);
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
}

__device__ __forceinline__ void st(void *p, int dt, int64_t i, float v)
{
    if (dt == 0)
        static_cast<float *>(p)[i] = v;
    else if (dt == 1)
        static_cast<__half *>(p)[i] = __float2half_rn(v);
    else
        static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
}

__device__ __forceinline__ float load(const float *p, int64_t i)
{
    return __ldg(p + i);
}
__device__ __forceinline__ float load(const __half *p, int64_t i)
{
    return __half2float(p[i]);
}
__device__ __forceinline__ float load(const __nv_bfloat16 *p, int64_t i)
{
    return __bfloat162float(p[i]);
}
__device__ __forceinline__ void store(float *p, int64_t i, float v)
{
    p[i] = v;
}
__device__ __forceinline__ void store(__half *p, int64_t i, float v)
{
    p[i] = __float2half_rn(v);
}
__device__ __forceinline__ void store(__nv_bfloat16 *p, int64_t i, float v)
{
    p[i] = __float2bfloat16_rn(v);
}

// Element conversions to and from float by element type.
__device__ __forceinline__ float tof(float v)
{
    return v;
}
__device__ __forceinline__ float tof(__half v)
{
    return __half2float(v);
}
__device__ __forceinline__ float tof(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}
template <typename T> __device__ __forceinline__ T fromf(float v);
template <> __device__ __forceinline__ float fromf<float>(float v)
{
    return v;
}
template <> __device__ __forceinline__ __half fromf<__half>(float v)
{
    return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 fromf<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

// V elements of T loaded or stored as one access (16 bytes for the vector paths).
template <typename T, int V> struct alignas(sizeof(T) * V) Vec {
    T v[V];
};
template <typename T, int V> __device__ __forceinline__ Vec<T, V> ldv(const T *p)
{
    return *reinterpret_cast<const Vec<T, V> *>(p);
}
template <typename T, int V> __device__ __forceinline__ void stv(T *p, const Vec<T, V> &v)
{
    *reinterpret_cast<Vec<T, V> *>(p) = v;
}

// Element e of a vector as a float. bf16 pairs are read as 32-bit words, each value float's
// upper half: taken one by one, the compiler split every word into 16-bit registers first (ptx:
// a mov, a cvt and a shift a value), and the bf16 layer norm spilled where f16 did not.
template <typename T, int V> __device__ __forceinline__ float elem(const Vec<T, V> &a, int e)
{
    if constexpr (std::is_same<T, __nv_bfloat16>::value && V % 2 == 0) {
        const unsigned w = reinterpret_cast<const unsigned *>(a.v)[e / 2];
        return __uint_as_float(e % 2 ? w & 0xffff0000u : w << 16);
    } else {
        return tof(a.v[e]);
    }
}

// V floats rounded to T as a vector, 16-bit pairs in one instruction (cvt.rn.*x2.f32; bf16's
// one-value conversion is inline assembly the compiler cannot pair).
template <typename T, int V> __device__ __forceinline__ Vec<T, V> pack(const float *u)
{
    Vec<T, V> o;
    if constexpr (sizeof(T) == 2 && V % 2 == 0) {
        using T2 = typename std::conditional<std::is_same<T, __half>::value, __half2,
                                             __nv_bfloat162>::type;
        T2 *o2 = reinterpret_cast<T2 *>(o.v);
#pragma unroll
        for (int e = 0; e < V; e += 2)
            if constexpr (std::is_same<T, __half>::value)
                o2[e / 2] = __floats2half2_rn(u[e], u[e + 1]);
            else
                o2[e / 2] = __floats2bfloat162_rn(u[e], u[e + 1]);
    } else {
#pragma unroll
        for (int e = 0; e < V; e++)
            o.v[e] = fromf<T>(u[e]);
    }
    return o;
}

// The element of linear index i over view y, in (n, c, h, w), channel fastest or width fastest.
template <typename I>
__device__ __forceinline__ void coords(I i, const nnop__kview &y, bool c_fastest, I *n, I *c, I *h,
                                       I *w)
{
    if (c_fastest) {
        *c = i % (I)y.c, i /= (I)y.c;
        *w = i % (I)y.w, i /= (I)y.w;
        *h = i % (I)y.h, *n = i / (I)y.h;
    } else {
        *w = i % (I)y.w, i /= (I)y.w;
        *h = i % (I)y.h, i /= (I)y.h;
        *c = i % (I)y.c, *n = i / (I)y.c;
    }
}

// Sums and maxima over a warp (xor butterfly: every lane gets the result) and over a block of
// up to 1024 threads (red: blockDim.x / 32 floats; each call first waits until the last call's
// readers are done with red, so one buffer serves a row of calls). The maxima take fmaxf: a NaN
// operand never wins.
__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
template <bool MAX> __device__ __forceinline__ float block_reduce(float v, float *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = MAX ? warp_max(v) : warp_sum(v);
    __syncthreads();
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x >> 5) ? red[lane] : (MAX ? -INFINITY : 0.f);
    return MAX ? warp_max(v) : warp_sum(v);
}
__device__ __forceinline__ float block_sum(float v, float *red)
{
    return block_reduce<false>(v, red);
}
__device__ __forceinline__ float block_max(float v, float *red)
{
    return block_reduce<true>(v, red);
}

// Whether p is aligned to a bytes (a launcher's test for a vector path).
inline bool aligned(const void *p, size_t a)
{
    return ((uintptr_t)p % a) == 0;
}

// Blocks for `items` work items of per_block each: at least 1, at most cap (132 SMs x 64; the
// kernels loop over the rest).
inline unsigned grid_for(int64_t items, int64_t per_block, int64_t cap = 132 * 64)
{
    int64_t blocks = (items + per_block - 1) / per_block;
    return (unsigned)(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

} // namespace nnop_k

#endif // NNOP_CUDA_DEVICE_UTIL_CUH
