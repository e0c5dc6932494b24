// lrn.cu: local response normalization across channels (ONNX's LRN): a thread per output
// element, the output's fastest dim thread-fastest, the window's squares summed in float in
// channel order (as the CPU reference sums them, in double), then x * (bias + k * sum)^-beta.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/device_util.cuh"

namespace
{

constexpr int kThreads = 256;

using nnop_k::coords;
using nnop_k::grid_for;
using nnop_k::ld;
using nnop_k::st;

__device__ __forceinline__ int64_t at(const nnop__kview &v, int64_t n, int64_t c, int64_t h,
                                      int64_t w)
{
    return n * v.sn + c * v.sc + h * v.sh + w * v.sw;
}

__global__ void __launch_bounds__(kThreads) lrn_kernel(nnop__lrn_kparams p, bool c_fastest)
{
    const nnop__kview &xv = p.xv, &yv = p.yv;
    const int64_t total = yv.n * yv.c * yv.h * yv.w;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t n, c, h, w;
        coords(i, yv, c_fastest, &n, &c, &h, &w);
        const int64_t lo = c - p.before < 0 ? 0 : c - p.before;
        const int64_t hi = c + p.after >= xv.c ? xv.c - 1 : c + p.after;
        float sum = 0.f;
        for (int64_t j = lo; j <= hi; j++) {
            const float t = ld(p.x, p.dtype, at(xv, n, j, h, w));
            sum = fmaf(t, t, sum);
        }
        const float v = ld(p.x, p.dtype, at(xv, n, c, h, w));
        st(p.y, p.dtype, at(yv, n, c, h, w), v * powf(fmaf(p.k, sum, p.bias), -p.beta));
    }
}

} // namespace

extern "C" cudaError_t nnop__k_lrn(const nnop__lrn_kparams *p, cudaStream_t s)
{
    const nnop__kview &y = p->yv;
    lrn_kernel<<<grid_for(y.n * y.c * y.h * y.w, kThreads), kThreads, 0, s>>>(*p,
                                                                              y.sc == 1 && y.c > 1);
    return cudaGetLastError();
}
