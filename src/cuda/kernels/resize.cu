// resize.cu: data movement over H, W and C: nearest and bilinear resize with PyTorch's index
// math (the same float arithmetic as the CPU reference, no contraction into FMAs, so nearest
// picks the same pixels), and the strided copy that writes a concat input into its channel
// slice. One thread per output element, the output's fastest dim thread-fastest.
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

__device__ __forceinline__ int64_t nearest_src(int64_t dst, int64_t in, int64_t out, float s)
{
    if (out == in)
        return dst;
    if (out == 2 * in)
        return dst >> 1;
    int64_t src = (int64_t)floorf(__fmul_rn((float)dst, s));
    return src < in - 1 ? src : in - 1;
}

struct Taps {
    int64_t i0, i1;
    float l0, l1;
};

__device__ __forceinline__ Taps linear_src(int64_t dst, int64_t in, float s, int align)
{
    Taps t;
    float real;
    if (align) {
        real = __fmul_rn(s, (float)dst);
    } else {
        real = __fadd_rn(__fmul_rn(s, __fadd_rn((float)dst, 0.5f)), -0.5f);
        real = real < 0.f ? 0.f : real;
    }
    t.i0 = (int64_t)floorf(real);
    t.i0 = t.i0 < in - 1 ? t.i0 : in - 1;
    float lambda = __fadd_rn(real, -(float)t.i0);
    lambda = lambda < 0.f ? 0.f : (lambda > 1.f ? 1.f : lambda);
    t.i1 = t.i0 + (t.i0 < in - 1 ? 1 : 0);
    t.l1 = lambda;
    t.l0 = 1.f - lambda;
    return t;
}

__global__ void __launch_bounds__(kThreads) resize_kernel(nnop__resize_kparams p, bool c_fastest)
{
    const nnop__kview &xv = p.xv, &yv = p.yv;
    const int64_t total = yv.n * yv.c * yv.h * yv.w;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t n, c, h, w;
        float v;
        coords(i, yv, c_fastest, &n, &c, &h, &w);
        if (!p.bilinear) {
            v = ld(p.x, p.dtype,
                   at(xv, n, c, nearest_src(h, xv.h, yv.h, p.scale[0]),
                      nearest_src(w, xv.w, yv.w, p.scale[1])));
        } else {
            const Taps th = linear_src(h, xv.h, p.scale[0], p.align_corners);
            const Taps tw = linear_src(w, xv.w, p.scale[1], p.align_corners);
            const float top = tw.l0 * ld(p.x, p.dtype, at(xv, n, c, th.i0, tw.i0)) +
                              tw.l1 * ld(p.x, p.dtype, at(xv, n, c, th.i0, tw.i1));
            const float bottom = tw.l0 * ld(p.x, p.dtype, at(xv, n, c, th.i1, tw.i0)) +
                                 tw.l1 * ld(p.x, p.dtype, at(xv, n, c, th.i1, tw.i1));
            v = th.l0 * top + th.l1 * bottom;
        }
        st(p.y, p.dtype, at(yv, n, c, h, w), v);
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
        copy_kernel(const T *__restrict__ x, T *__restrict__ y, nnop__kview xv, nnop__kview yv,
                    bool c_fastest)
{
    const int64_t total = xv.n * xv.c * xv.h * xv.w;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t n, c, h, w;
        coords(i, yv, c_fastest, &n, &c, &h, &w);
        y[at(yv, n, c, h, w)] = x[at(xv, n, c, h, w)];
    }
}

} // namespace

extern "C" cudaError_t nnop__k_resize(const nnop__resize_kparams *p, cudaStream_t s)
{
    const nnop__kview &y = p->yv;
    resize_kernel<<<grid_for(y.n * y.c * y.h * y.w, kThreads), kThreads, 0, s>>>(
            *p, y.sc == 1 && y.c > 1);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_copy(const void *x, void *y, int dtype, const nnop__kview *xv,
                                    const nnop__kview *yv, cudaStream_t s)
{
    const unsigned grid = grid_for(xv->n * xv->c * xv->h * xv->w, kThreads);
    const bool c_fastest = yv->sc == 1 && yv->c > 1;
    if (dtype == 0)
        copy_kernel<float><<<grid, kThreads, 0, s>>>(static_cast<const float *>(x),
                                                     static_cast<float *>(y), *xv, *yv, c_fastest);
    else
        copy_kernel<unsigned short>
                <<<grid, kThreads, 0, s>>>(static_cast<const unsigned short *>(x),
                                           static_cast<unsigned short *>(y), *xv, *yv, c_fastest);
    return cudaGetLastError();
}
