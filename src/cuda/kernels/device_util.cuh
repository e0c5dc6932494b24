// device_util.cuh: device helpers nnop's own kernels share (dtype codes as in kernels.h: 0 f32,
// 1 f16, 2 bf16; float arithmetic inside): loads and stores by dtype code or by element type,
// the (n, c, h, w) of a linear index over a view, channel or width fastest, and grid sizes.
#ifndef NNOP_CUDA_DEVICE_UTIL_CUH
#define NNOP_CUDA_DEVICE_UTIL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

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

// Blocks for `items` work items of per_block each: at least 1, at most cap (132 SMs x 64; the
// kernels loop over the rest).
inline unsigned grid_for(int64_t items, int64_t per_block, int64_t cap = 132 * 64)
{
    int64_t blocks = (items + per_block - 1) / per_block;
    return (unsigned)(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

} // namespace nnop_k

#endif // NNOP_CUDA_DEVICE_UTIL_CUH
