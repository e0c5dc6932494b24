// resize.cu: data movement over H, W and C: nearest and bilinear resize with PyTorch's index
// math (the same float arithmetic as the CPU reference, no contraction into FMAs, so nearest
// picks the same pixels), and the strided copy that writes a concat input into its channel
// slice. Channels-last resize: a thread per output pixel and vector of channels (the source
// taps computed once a vector, 16-byte accesses where C and the pointers allow, 32-bit
// indices); a copy whose views are rows of a uniform stride (a channels-last slice, or a
// channels-first sample): widest aligned vectors along the rows. Else one thread per output
// element, the output's fastest dim thread-fastest.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/device_util.cuh"

namespace
{

constexpr int kThreads = 256;

using nnop_k::aligned;
using nnop_k::coords;
using nnop_k::fromf;
using nnop_k::grid_for;
using nnop_k::ld;
using nnop_k::ldv;
using nnop_k::st;
using nnop_k::stv;
using nnop_k::tof;
using nnop_k::Vec;

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

// As the CPU reference (ops/resize.c, linear_index): an axis that keeps its size is a copy.
__device__ __forceinline__ Taps linear_src(int64_t dst, int64_t in, int64_t out, float s, int align)
{
    Taps t;
    float real;
    if (out == in) {
        t.i0 = t.i1 = dst;
        t.l0 = 1.f;
        t.l1 = 0.f;
        return t;
    }
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
            const Taps th = linear_src(h, xv.h, yv.h, p.scale[0], p.align_corners);
            const Taps tw = linear_src(w, xv.w, yv.w, p.scale[1], p.align_corners);
            const float top = tw.l0 * ld(p.x, p.dtype, at(xv, n, c, th.i0, tw.i0)) +
                              tw.l1 * ld(p.x, p.dtype, at(xv, n, c, th.i0, tw.i1));
            const float bottom = tw.l0 * ld(p.x, p.dtype, at(xv, n, c, th.i1, tw.i0)) +
                                 tw.l1 * ld(p.x, p.dtype, at(xv, n, c, th.i1, tw.i1));
            v = th.l0 * top + th.l1 * bottom;
        }
        st(p.y, p.dtype, at(yv, n, c, h, w), v);
    }
}

// Channels-last resize of packed-in-C views (sc == 1): thread i takes channels [g V, g V + V)
// of output pixel i / G (G = C / V vectors a pixel).
template <typename T, int V>
__global__ void __launch_bounds__(kThreads) resize_cl_kernel(nnop__resize_kparams p, uint32_t G)
{
    const nnop__kview &xv = p.xv, &yv = p.yv;
    const T *__restrict__ x = static_cast<const T *>(p.x);
    T *__restrict__ y = static_cast<T *>(p.y);
    const uint32_t total = G * (uint32_t)(yv.n * yv.h * yv.w);
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += gridDim.x * blockDim.x) {
        const uint32_t g = i % G, pix = i / G;
        const uint32_t w = pix % (uint32_t)yv.w, nh = pix / (uint32_t)yv.w;
        const uint32_t h = nh % (uint32_t)yv.h, n = nh / (uint32_t)yv.h;
        const uint32_t c = g * V, xn = n * (uint32_t)xv.sn + c, yo = n * (uint32_t)yv.sn + c;
        Vec<T, V> out;
        if (!p.bilinear) {
            const uint32_t sh = (uint32_t)nearest_src(h, xv.h, yv.h, p.scale[0]);
            const uint32_t sw = (uint32_t)nearest_src(w, xv.w, yv.w, p.scale[1]);
            out = ldv<T, V>(x + xn + sh * (uint32_t)xv.sh + sw * (uint32_t)xv.sw);
        } else {
            const Taps th = linear_src(h, xv.h, yv.h, p.scale[0], p.align_corners);
            const Taps tw = linear_src(w, xv.w, yv.w, p.scale[1], p.align_corners);
            const uint32_t r0 = xn + (uint32_t)th.i0 * (uint32_t)xv.sh,
                           r1 = xn + (uint32_t)th.i1 * (uint32_t)xv.sh;
            const uint32_t c0 = (uint32_t)tw.i0 * (uint32_t)xv.sw,
                           c1 = (uint32_t)tw.i1 * (uint32_t)xv.sw;
            const Vec<T, V> a = ldv<T, V>(x + r0 + c0), b = ldv<T, V>(x + r0 + c1);
            const Vec<T, V> d = ldv<T, V>(x + r1 + c0), e = ldv<T, V>(x + r1 + c1);
#pragma unroll
            for (int j = 0; j < V; j++) {
                const float top = tw.l0 * tof(a.v[j]) + tw.l1 * tof(b.v[j]);
                const float bottom = tw.l0 * tof(d.v[j]) + tw.l1 * tof(e.v[j]);
                out.v[j] = fromf<T>(th.l0 * top + th.l1 * bottom);
            }
        }
        stv<T, V>(y + yo + h * (uint32_t)yv.sh + w * (uint32_t)yv.sw, out);
    }
}

// rows x len units of U (a 2-, 4-, 8- or 16-byte word), row r from x + r * xs to y + r * ys.
template <typename U>
__global__ void __launch_bounds__(kThreads)
        rows_copy_kernel(const U *__restrict__ x, U *__restrict__ y, int64_t rows, int64_t len,
                         int64_t xs, int64_t ys)
{
    const int64_t total = rows * len;
    if (total <= INT32_MAX) {
        const uint32_t l = (uint32_t)len;
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (uint32_t)total;
             i += gridDim.x * blockDim.x) {
            const uint32_t r = i / l, k = i % l;
            y[r * ys + k] = x[r * xs + k];
        }
        return;
    }
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i / len * ys + i % len] = x[i / len * xs + i % len];
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

// The largest extent an element offset of view v reaches, plus one.
int64_t extent(const nnop__kview &v)
{
    return (v.n - 1) * v.sn + (v.c - 1) * v.sc + (v.h - 1) * v.sh + (v.w - 1) * v.sw + 1;
}

// Channels-last resize with V-element vectors, if the views and pointers allow it.
template <typename T, int V> bool resize_cl(const nnop__resize_kparams *p, cudaStream_t s)
{
    const nnop__kview &x = p->xv, &y = p->yv;
    const int64_t pixels = y.n * y.h * y.w;
    if (x.sc != 1 || y.sc != 1 || x.c % V != 0 || x.sw % V || x.sh % V || x.sn % V || y.sw % V ||
        y.sh % V || y.sn % V || !aligned(p->x, sizeof(T) * V) || !aligned(p->y, sizeof(T) * V) ||
        pixels * (x.c / V) > INT32_MAX || extent(x) > UINT32_MAX || extent(y) > UINT32_MAX)
        return false;
    const uint32_t G = (uint32_t)(x.c / V);
    resize_cl_kernel<T, V><<<grid_for(pixels * G, kThreads), kThreads, 0, s>>>(*p, G);
    return true;
}

template <typename T> bool resize_cl_any(const nnop__resize_kparams *p, cudaStream_t s)
{
    return resize_cl<T, 16 / sizeof(T)>(p, s) || resize_cl<T, 1>(p, s);
}

// Collapse view v (dims as u's) into rows of len contiguous elements at a uniform row
// stride: channels-last (positions at one stride, channels contiguous) or channels-first
// (samples at one stride, each sample's C, H, W contiguous).
bool as_rows(const nnop__kview &v, bool c_last, int64_t *rows, int64_t *len, int64_t *stride)
{
    if (c_last && v.sc == 1 && v.sh == v.w * v.sw && v.sn == v.h * v.sh && v.sw >= v.c) {
        *rows = v.n * v.h * v.w, *len = v.c, *stride = v.sw;
        return true;
    }
    if (!c_last && v.sw == 1 && v.sh == v.w && v.sc == v.h * v.w && v.sn >= v.c * v.sc) {
        *rows = v.n, *len = v.c * v.sc, *stride = v.sn;
        return true;
    }
    return false;
}

// The copy as rows of the widest word (up to 16 bytes) that divides every length, stride and
// address; false if the views are not both rows of the same kind.
bool rows_copy(const void *x, void *y, size_t elem, const nnop__kview &xv, const nnop__kview &yv,
               cudaStream_t s)
{
    int64_t rows, len, xs, yrows, ylen, ys;
    int k;
    for (k = 0; k < 2; k++)
        if (as_rows(xv, k == 0, &rows, &len, &xs) && as_rows(yv, k == 0, &yrows, &ylen, &ys) &&
            rows == yrows && len == ylen)
            break;
    if (k == 2)
        return false;
    size_t u = 16;
    while (u > elem && ((len * elem) % u || (xs * elem) % u || (ys * elem) % u || !aligned(x, u) ||
                        !aligned(y, u)))
        u /= 2;
    const int64_t l = (int64_t)(len * elem / u), sx = (int64_t)(xs * elem / u),
                  sy = (int64_t)(ys * elem / u);
    const unsigned grid = grid_for(rows * l, kThreads);
    if (u == 16)
        rows_copy_kernel<uint4><<<grid, kThreads, 0, s>>>(static_cast<const uint4 *>(x),
                                                          static_cast<uint4 *>(y), rows, l, sx, sy);
    else if (u == 8)
        rows_copy_kernel<uint2><<<grid, kThreads, 0, s>>>(static_cast<const uint2 *>(x),
                                                          static_cast<uint2 *>(y), rows, l, sx, sy);
    else if (u == 4)
        rows_copy_kernel<uint32_t><<<grid, kThreads, 0, s>>>(
                static_cast<const uint32_t *>(x), static_cast<uint32_t *>(y), rows, l, sx, sy);
    else
        rows_copy_kernel<uint16_t><<<grid, kThreads, 0, s>>>(
                static_cast<const uint16_t *>(x), static_cast<uint16_t *>(y), rows, l, sx, sy);
    return true;
}

} // namespace

extern "C" cudaError_t nnop__k_resize(const nnop__resize_kparams *p, cudaStream_t s)
{
    const nnop__kview &y = p->yv;
    const bool done = p->dtype == 0   ? resize_cl_any<float>(p, s)
                      : p->dtype == 1 ? resize_cl_any<__half>(p, s)
                                      : resize_cl_any<__nv_bfloat16>(p, s);
    if (!done)
        resize_kernel<<<grid_for(y.n * y.c * y.h * y.w, kThreads), kThreads, 0, s>>>(
                *p, y.sc == 1 && y.c > 1);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_copy(const void *x, void *y, int dtype, const nnop__kview *xv,
                                    const nnop__kview *yv, cudaStream_t s)
{
    if (rows_copy(x, y, dtype == 0 ? 4 : 2, *xv, *yv, s))
        return cudaGetLastError();
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
