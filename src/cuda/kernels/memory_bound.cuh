// memory_bound.cuh: what nnop's memory-bound kernels share (pool.cu, gap.cu, softmax.cu,
// epilogue.cu, copy.cu and the small ones): block and grid sizes, the 32-bit index limit,
// float sum accumulators of V elements, staging of a flat run into shared memory, the packed
// layouts' tests. Every such kernel moves each byte once (or reads a window's overlap from
// L1/L2), with consecutive threads on consecutive addresses, 16-byte vectors where the channel
// count and the pointers allow, and 32-bit index math when the tensors fit (a 64-bit strided
// variant takes the rest). Arithmetic is float32, as the CPU reference's values rounded to
// float.
#ifndef NNOP_CUDA_MEMORY_BOUND_CUH
#define NNOP_CUDA_MEMORY_BOUND_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda/kernels/device_util.cuh"

namespace nnop_k
{

const int kThreads = 256;
const int64_t kMaxBlocks = 132 * 64;

// The largest element count the 32-bit kernels take: a grid-stride step past it still fits.
const int64_t kMax32 = INT32_MAX - (int64_t)kThreads * kMaxBlocks;

template <typename T, int V> __device__ __forceinline__ Vec<T, V> splat(float f)
{
    Vec<T, V> r;
#pragma unroll
    for (int j = 0; j < V; j++)
        r.v[j] = fromf<T>(f);
    return r;
}

// Sums of V floats: what every sum accumulator shares (the loads' conversions differ).
template <int V> struct SumAccBase {
    float a[V];
    __device__ __forceinline__ void init()
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] = 0.f;
    }
    __device__ __forceinline__ void merge(const SumAccBase &o)
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] += o.a[j];
    }
};

template <typename T, int V> struct SumAcc : SumAccBase<V> {
    using SumAccBase<V>::a;
    __device__ __forceinline__ void add(const Vec<T, V> &v)
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] += tof(v.v[j]);
    }
    __device__ __forceinline__ Vec<T, V> get(float inv) const
    {
        Vec<T, V> r;
#pragma unroll
        for (int j = 0; j < V; j++)
            r.v[j] = fromf<T>(a[j] * inv);
        return r;
    }
};

// Sums of 16-bit values, converted to float and back two at a time (one pair conversion per
// two values, where element-wise conversion takes one per value).
__device__ __forceinline__ float2 to_float2(__half2 v)
{
    return __half22float2(v);
}
__device__ __forceinline__ float2 to_float2(__nv_bfloat162 v)
{
    return __bfloat1622float2(v);
}
template <typename T2> __device__ __forceinline__ T2 from_float2(float a, float b);
template <> __device__ __forceinline__ __half2 from_float2<__half2>(float a, float b)
{
    return __floats2half2_rn(a, b);
}
template <> __device__ __forceinline__ __nv_bfloat162 from_float2<__nv_bfloat162>(float a, float b)
{
    return __floats2bfloat162_rn(a, b);
}
template <typename T2, typename T, int V> struct SumAccPairs : SumAccBase<V> {
    using SumAccBase<V>::a;
    __device__ __forceinline__ void add(const Vec<T, V> &v)
    {
#pragma unroll
        for (int j = 0; j < V / 2; j++) {
            T2 h;
            h.x = v.v[2 * j];
            h.y = v.v[2 * j + 1];
            float2 f = to_float2(h);
            a[2 * j] += f.x;
            a[2 * j + 1] += f.y;
        }
    }
    __device__ __forceinline__ Vec<T, V> get(float inv) const
    {
        Vec<T, V> r;
#pragma unroll
        for (int j = 0; j < V / 2; j++) {
            T2 h = from_float2<T2>(a[2 * j] * inv, a[2 * j + 1] * inv);
            r.v[2 * j] = h.x;
            r.v[2 * j + 1] = h.y;
        }
        return r;
    }
};
template <> struct SumAcc<__half, 8> : SumAccPairs<__half2, __half, 8> {
};
template <> struct SumAcc<__nv_bfloat16, 8> : SumAccPairs<__nv_bfloat162, __nv_bfloat16, 8> {
};

// Copies count elements from src (any element-aligned address) into shared memory so that
// stage[off + i] = src[i], with off = src's offset in its 16-byte line in elements: the aligned
// middle moves as 16-byte vectors (coalesced loads, conflict-free shared stores), the two
// ragged ends element by element. stage is 16-byte aligned and holds count + 16 / sizeof(T)
// (stage_elems).
template <typename T> __host__ __device__ constexpr int stage_elems(int bytes)
{
    return bytes / (int)sizeof(T) - 16 / (int)sizeof(T); // the most count a stage of bytes takes
}
template <typename T>
__device__ __forceinline__ int stage_flat(T *stage, const T *__restrict__ src, int count)
{
    constexpr int V = 16 / (int)sizeof(T);
    const int off = (int)(((uintptr_t)src & 15) / sizeof(T));
    const int head = off ? min(V - off, count) : 0;
    const int nvec = (count - head) / V, tail = head + nvec * V;
    const uint4 *vs = reinterpret_cast<const uint4 *>(src + head);
    uint4 *vd = reinterpret_cast<uint4 *>(stage + off + head);
#pragma unroll 4
    for (int i = threadIdx.x; i < nvec; i += blockDim.x)
        vd[i] = __ldg(vs + i);
    const int t = (int)threadIdx.x;
    if (t < head)
        stage[off + t] = src[t];
    if (t < count - tail)
        stage[off + tail + t] = src[tail + t];
    return off;
}

inline unsigned blocks_for(int64_t work)
{
    int64_t b = (work + kThreads - 1) / kThreads;
    if (b < 1)
        b = 1;
    return (unsigned)(b < kMaxBlocks ? b : kMaxBlocks);
}

inline int64_t elems(const nnop__kview &v)
{
    return v.n * v.c * v.h * v.w;
}

// Packed layouts by their strides; a dim of extent 1 may carry any stride.
inline bool packed_nhwc(const nnop__kview &v)
{
    return (v.c == 1 || v.sc == 1) && (v.w == 1 || v.sw == v.c) &&
           (v.h == 1 || v.sh == v.w * v.c) && (v.n == 1 || v.sn == v.h * v.w * v.c);
}

inline bool packed_nchw(const nnop__kview &v)
{
    return (v.w == 1 || v.sw == 1) && (v.h == 1 || v.sh == v.w) &&
           (v.c == 1 || v.sc == v.h * v.w) && (v.n == 1 || v.sn == v.c * v.h * v.w);
}

inline size_t dtype_size(int dt)
{
    return dt == 0 ? 4 : 2;
}

} // namespace nnop_k

#endif /* NNOP_CUDA_MEMORY_BOUND_CUH */
