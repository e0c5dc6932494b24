// depthwise.cu: depthwise convolution (groups = C = K), the shape class where cuDNN's engines
// on sm_90 took 3-22 ms for what moves a few megabytes (issue 12). One thread per output
// element, the output's fastest dim as the thread-fastest index (coalesced stores and, for
// channels-last, coalesced loads across channels), float accumulation, 32-bit index math
// when the tensors fit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/device_util.cuh"

namespace
{

constexpr int kThreads = 256;

using nnop_k::coords;
using nnop_k::grid_for;
using nnop_k::load;
using nnop_k::store;

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads) depthwise_kernel(nnop__dw_kparams p, bool c_fastest)
{
    const T *__restrict__ x = static_cast<const T *>(p.x);
    const T *__restrict__ w = static_cast<const T *>(p.w);
    T *__restrict__ y = static_cast<T *>(p.y);
    const I total = (I)p.yv.n * (I)p.yv.c * (I)p.yv.h * (I)p.yv.w;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (I)gridDim.x * blockDim.x) {
        I n, c, oh, ow;
        coords<I>(i, p.yv, c_fastest, &n, &c, &oh, &ow);
        const I h0 = oh * p.stride_h - p.pad_h, w0 = ow * p.stride_w - p.pad_w;
        const T *xc = x + n * (I)p.xv.sn + c * (I)p.xv.sc;
        const T *wc = w + c * (I)p.wv.sn;
        float acc = 0.f;
        for (I r = 0; r < (I)p.wv.h; r++) {
            I ih = h0 + r * p.dil_h;
            if (ih < 0 || ih >= (I)p.xv.h)
                continue;
            for (I s = 0; s < (I)p.wv.w; s++) {
                I iw = w0 + s * p.dil_w;
                if (iw >= 0 && iw < (I)p.xv.w)
                    acc += load(xc, ih * (I)p.xv.sh + iw * (I)p.xv.sw) *
                           load(wc, r * (I)p.wv.sh + s * (I)p.wv.sw);
            }
        }
        store(y, n * (I)p.yv.sn + c * (I)p.yv.sc + oh * (I)p.yv.sh + ow * (I)p.yv.sw, acc);
    }
}

int64_t extent(const nnop__kview &v)
{
    return 1 + (v.n - 1) * v.sn + (v.c - 1) * v.sc + (v.h - 1) * v.sh + (v.w - 1) * v.sw;
}

template <typename T> void launch(const nnop__dw_kparams *p, cudaStream_t s)
{
    const int64_t total = p->yv.n * p->yv.c * p->yv.h * p->yv.w;
    const bool c_fastest = p->yv.sc == 1 && p->yv.c > 1;
    const bool small = total < INT32_MAX && extent(p->xv) < INT32_MAX &&
                       extent(p->yv) < INT32_MAX && extent(p->wv) < INT32_MAX;
    const unsigned grid = grid_for(total, kThreads, 65535 * 16);
    if (small)
        depthwise_kernel<T, int><<<grid, kThreads, 0, s>>>(*p, c_fastest);
    else
        depthwise_kernel<T, int64_t><<<grid, kThreads, 0, s>>>(*p, c_fastest);
}

} // namespace

extern "C" cudaError_t nnop__k_depthwise(const nnop__dw_kparams *p, cudaStream_t s)
{
    if (p->dtype == 0)
        launch<float>(p, s);
    else if (p->dtype == 1)
        launch<__half>(p, s);
    else
        launch<__nv_bfloat16>(p, s);
    return cudaGetLastError();
}
