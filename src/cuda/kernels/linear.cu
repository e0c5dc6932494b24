// linear.cu: the linear layer's fallback kernel (a warp an output, lanes over the input
// features, its epilogue chain after the sum) and the launch that prefers the gate's
// matrix-vector kernel (gate.cu) where it fits.
#include <stdint.h>

#include "cuda/kernels/epilogue.cuh"
#include "cuda/kernels/memory_bound.cuh"

namespace
{

using nnop_k::blocks_for;
using nnop_k::epi_op;
using nnop_k::kThreads;
using nnop_k::ld;
using nnop_k::st;
using nnop_k::warp_sum;

// One warp per output element; lanes stride over the input features.
__global__ void linear_kernel(nnop__linear_kparams p)
{
    int lane = threadIdx.x & 31;
    int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t r = warp; r < p.n * p.out; r += nwarps) {
        int64_t n = r / p.out, o = r % p.out;
        float acc = 0.f;
        for (int64_t i = lane; i < p.in; i += 32)
            acc += ld(p.x, p.dtype, n * p.in + i) * ld(p.w, p.dtype, o * p.in + i);
        acc = warp_sum(acc);
        if (lane == 0) {
            for (int k = 0; k < p.epi.n_ops; k++)
                acc = epi_op(p.epi.ops[k], acc, r, o);
            st(p.y, p.y_dtype, r, acc);
        }
    }
}

} // namespace

extern "C" cudaError_t nnop__k_linear(const nnop__linear_kparams *p, cudaStream_t s)
{
    if (nnop__linear_gemv_fits(p))
        return nnop__k_linear_gemv(p, s);
    linear_kernel<<<blocks_for(p->n * p->out * 32), kThreads, 0, s>>>(*p);
    return cudaGetLastError();
}
