// mma.cuh: the tensor-core pieces the own implicit GEMMs share (stem_conv.cu, igemm_conv.cu):
// ldmatrix of four 8x8 half tiles, mma.sync m16n8k16 with float accumulators, and two floats
// packed as a pair of halves or bfloat16s.
#ifndef NNOP_CUDA_MMA_CUH
#define NNOP_CUDA_MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace nnop_k
{

__device__ __forceinline__ void ldsm_x4(unsigned (&d)[4], const unsigned short *p)
{
    unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a));
}

// m16n8k16 (and bf16 in it) needs sm_80: the images for older GPUs (sm_75) trap here, and
// the implementation list never picks a kernel that uses it below compute capability 8.0.
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

} // namespace nnop_k

#endif // NNOP_CUDA_MMA_CUH
