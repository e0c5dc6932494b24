// deconv.cu: transposed 2-D convolution (PyTorch ConvTranspose2d) in gather form: one thread
// per output element sums the taps that land on it (oh = ih * stride - pad + r * dilation),
// float accumulation; the output's fastest dim is the thread-fastest index, so for
// channels-last neighbouring threads read neighbouring weights and share x's loads.
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

// The input index ih of tap r for output row oh, or -1 when the tap falls between inputs.
__device__ __forceinline__ int64_t source(int64_t oh, int64_t r, int64_t pad, int64_t stride,
                                          int64_t dil, int64_t in)
{
    const int64_t t = oh + pad - r * dil;
    if (t < 0 || t % stride != 0)
        return -1;
    const int64_t ih = t / stride;
    return ih < in ? ih : -1;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) deconv_kernel(nnop__deconv_kparams p, bool c_fastest)
{
    const T *__restrict__ x = static_cast<const T *>(p.x);
    const T *__restrict__ w = static_cast<const T *>(p.w);
    T *__restrict__ y = static_cast<T *>(p.y);
    const nnop__kview &xv = p.xv, &wv = p.wv, &yv = p.yv;
    const int64_t total = yv.n * yv.c * yv.h * yv.w, cg = xv.c / p.groups, kg = wv.c;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t n, k, oh, ow;
        coords<int64_t>(i, yv, c_fastest, &n, &k, &oh, &ow);
        const int64_t c0 = (k / kg) * cg, kk = k % kg;
        float acc = 0.f;
        for (int64_t r = 0; r < wv.h; r++) {
            const int64_t ih = source(oh, r, p.pad_h, p.stride_h, p.dil_h, xv.h);
            if (ih < 0)
                continue;
            for (int64_t s = 0; s < wv.w; s++) {
                const int64_t iw = source(ow, s, p.pad_w, p.stride_w, p.dil_w, xv.w);
                if (iw < 0)
                    continue;
                const T *xp = x + n * xv.sn + ih * xv.sh + iw * xv.sw;
                const T *wp = w + kk * wv.sc + r * wv.sh + s * wv.sw;
                for (int64_t c = c0; c < c0 + cg; c++)
                    acc += load(xp, c * xv.sc) * load(wp, c * wv.sn);
            }
        }
        store(y, n * yv.sn + k * yv.sc + oh * yv.sh + ow * yv.sw, acc);
    }
}

template <typename T> void launch(const nnop__deconv_kparams *p, cudaStream_t s)
{
    const unsigned grid = grid_for(p->yv.n * p->yv.c * p->yv.h * p->yv.w, kThreads);
    deconv_kernel<T><<<grid, kThreads, 0, s>>>(*p, p->yv.sc == 1 && p->yv.c > 1);
}

} // namespace

extern "C" cudaError_t nnop__k_deconv(const nnop__deconv_kparams *p, cudaStream_t s)
{
    if (p->dtype == 0)
        launch<float>(p, s);
    else if (p->dtype == 1)
        launch<__half>(p, s);
    else
        launch<__nv_bfloat16>(p, s);
    return cudaGetLastError();
}
