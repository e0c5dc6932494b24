// fold.cu: batch-norm folded into conv weights on the device: each row of w scaled in
// float32 and rounded back to its dtype.
#include <stdint.h>

#include "cuda/kernels/memory_bound.cuh"

namespace
{

using nnop_k::blocks_for;
using nnop_k::kThreads;
using nnop_k::ld;
using nnop_k::st;

} // namespace

// w[i] *= s[i / per_row] in float32, rounded back to the storage dtype: batch-norm folded
// into conv weights on the device (the host copy of the weights is never converted).
__global__ void scale_rows_kernel(void *w, int dt, int64_t n, int64_t per_row, const float *s)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        st(w, dt, i, ld(w, dt, i) * s[i / per_row]);
}

extern "C" cudaError_t nnop__k_scale_rows(void *w, int dtype, int64_t n, int64_t per_row,
                                          const float *s, cudaStream_t st_)
{
    scale_rows_kernel<<<blocks_for(n), kThreads, 0, st_>>>(w, dtype, n, per_row, s);
    return cudaGetLastError();
}
