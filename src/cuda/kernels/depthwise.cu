// depthwise.cu: depthwise convolution (groups = C = K) with its per-channel epilogue (bias,
// batch-norm, scale/shift, activation, channel or sample broadcast multiply) applied before
// the one store: cuDNN's engines on sm_90 took 3-22 ms for what moves a few megabytes
// (issue 12), and a separate epilogue pass reads and writes the output once more.
//
// Channels-last with channel-contiguous (tap-major) weights: each thread computes TW outputs
// along W for V channels. For the common filter widths (3, 5, 7) at stride 1 or 2 and width
// dilation 1, it loads an input row's span of (TW - 1) * stride + S vectors once into
// registers and reuses each for every tap that covers it: 7x7 stride 1 with TW = 8 is 14
// loads a row for 56 outputs' taps, where one thread per output loaded 7 per output. Other
// widths and dilations loop over the taps. Any other layout (or weights not channel
// contiguous) takes the general kernel: one thread per output, the output's fastest dim as
// the thread-fastest index. Float accumulation; 32-bit index math when the tensors fit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/epilogue.cuh"

namespace
{

constexpr int kThreads = 256;

using nnop_k::act_out;
using nnop_k::aligned;
using nnop_k::binary;
using nnop_k::coords;
using nnop_k::epi_op;
using nnop_k::fromf;
using nnop_k::grid_for;
using nnop_k::ld;
using nnop_k::ldv;
using nnop_k::load;
using nnop_k::store;
using nnop_k::stv;
using nnop_k::tof;
using nnop_k::Vec;

// ---------------------------------------------------------------- the fused epilogue
// The per-channel ops of p.ops on v[t * V + e], channel c0 + e of sample n (the entry fuses
// no other kind: depthwise.c, fusable).
template <typename T, int V, int TW>
__device__ __forceinline__ void epilogue(const nnop__dw_kparams &p, float *v, int c0, int n)
{
    for (int k = 0; k < p.n_ops; k++) {
        const nnop__epi_op &o = p.ops[k];
        float a[V], b[V];
#pragma unroll
        for (int e = 0; e < V; e++)
            a[e] = 1.f, b[e] = 0.f;
        if (o.kind == NNOP_EPI_ACT) {
            act_out<T, V * TW>(o, v);
            continue;
        }
#pragma unroll
        for (int e = 0; e < V; e++) {
            const int c = c0 + e;
            switch (o.kind) {
            case NNOP_EPI_BIAS:
                b[e] = ld(o.p[0], o.dtype, c);
                break;
            case NNOP_EPI_SCALE_SHIFT:
                a[e] = ld(o.p[0], o.dtype, c), b[e] = ld(o.p[1], o.dtype, c);
                break;
            case NNOP_EPI_BN: // as the epilogue kernel: gamma / sqrt(var + eps), beta - mean * s
                a[e] = ld(o.p[0], o.dtype, c) / sqrtf(ld(o.p[3], o.dtype, c) + o.eps);
                b[e] = ld(o.p[1], o.dtype, c) - ld(o.p[2], o.dtype, c) * a[e];
                break;
            default: // MUL, SUB, DIV by a 1,C,1,1 or N,C,1,1 operand
                a[e] = ld(o.p[0], o.dtype,
                          (o.bmode == NNOP_BCAST_SAMPLE ? (int64_t)n * o.bsn : 0) + c * o.bsc);
                break;
            }
        }
#pragma unroll
        for (int t = 0; t < TW; t++)
#pragma unroll
            for (int e = 0; e < V; e++) {
                float &x = v[t * V + e];
                if (o.kind >= NNOP_EPI_MUL)
                    x = binary(o.kind, x, a[e]);
                else if (o.kind == NNOP_EPI_BIAS)
                    x += b[e];
                else
                    x = x * a[e] + b[e]; // the epilogue kernel's order
            }
    }
}

// ---------------------------------------------------------------- channels-last, tiled
template <typename T, int V> __device__ __forceinline__ void load_f(const T *p, float *f)
{
    const Vec<T, V> a = ldv<T, V>(p);
#pragma unroll
    for (int e = 0; e < V; e++)
        f[e] = tof(a.v[e]);
}

// One input row's contribution to TW outputs at columns ow0 + t (input columns iw0 + t * SW
// + s): S and SW fixed, the span loaded once; S == 0: any width, stride and dilation.
template <typename T, int V, int TW, int S, int SW>
__device__ __forceinline__ void row(const nnop__dw_kparams &p, const T *xr, const T *wr, int iw0,
                                    float *acc)
{
    const int W = (int)p.xv.w, xsw = (int)p.xv.sw, wsw = (int)p.wv.sw;
    if (S > 0) {
        constexpr int SPAN = (TW - 1) * SW + (S > 0 ? S : 1);
        float xs[SPAN][V];
#pragma unroll
        for (int j = 0; j < SPAN; j++) {
            const int iw = iw0 + j;
            if (iw >= 0 && iw < W) {
                load_f<T, V>(xr + iw * xsw, xs[j]);
            } else {
#pragma unroll
                for (int e = 0; e < V; e++)
                    xs[j][e] = 0.f;
            }
        }
#pragma unroll
        for (int s = 0; s < S; s++) {
            float wf[V];
            load_f<T, V>(wr + s * wsw, wf);
#pragma unroll
            for (int t = 0; t < TW; t++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    acc[t * V + e] += xs[t * SW + s][e] * wf[e];
        }
    } else {
        const int sw = p.stride_w, dw = p.dil_w;
        for (int s = 0; s < (int)p.wv.w; s++) {
            float wf[V];
            load_f<T, V>(wr + s * wsw, wf);
#pragma unroll
            for (int t = 0; t < TW; t++) {
                const int iw = iw0 + t * sw + s * dw;
                if (iw < 0 || iw >= W)
                    continue;
                float xf[V];
                load_f<T, V>(xr + iw * xsw, xf);
#pragma unroll
                for (int e = 0; e < V; e++)
                    acc[t * V + e] += xf[e] * wf[e];
            }
        }
    }
}

// ---------------------------------------------------------------- the fused norm over C
// A position's C channels lie in cv = C / V consecutive threads (one thread's V channels for
// each of its TW positions), and a block holds whole positions (its size a multiple of cv
// and of 32). Sums over a position: each warp adds its lanes of a group with shuffles (a
// segmented sum: the group's first lane in the warp ends with the warp's part), those parts
// go to shared memory by thread index, and every thread adds its group's parts in the same
// order: deterministic, no atomics. Two passes (mean, then the squares about it) on the
// float accumulators, as the norm kernel; ConvNeXt's layer norm after each 7x7 depthwise
// conv was a launch of its own and one more read and write of the tensor (issue 15).

// v summed over lanes [lane, seg_end) of the warp (the segment's first lane gets its sum).
__device__ __forceinline__ float segment_sum(float v, int lane, int seg_end)
{
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const float o = __shfl_down_sync(0xffffffffu, v, off);
        if (lane + off < seg_end)
            v += o;
    }
    return v;
}

// v[t] summed over the cv threads of this thread's group (its first thread g0), through
// part[t * blockDim.x + thread] (written by each warp's first lane of a group, then read).
template <int TW> __device__ __forceinline__ void group_sum(float *v, float *part, int g0, int cv)
{
    const int tid = threadIdx.x, lane = tid & 31, seg_end = min(32, g0 + cv - (tid & ~31));
#pragma unroll
    for (int t = 0; t < TW; t++)
        v[t] = segment_sum(v[t], lane, seg_end);
    if (tid == g0 || lane == 0)
#pragma unroll
        for (int t = 0; t < TW; t++)
            part[t * blockDim.x + tid] = v[t];
    __syncthreads();
#pragma unroll
    for (int t = 0; t < TW; t++) {
        float sum = 0.f;
        for (int h = g0; h < g0 + cv; h = (h & ~31) + 32)
            sum += part[t * blockDim.x + h];
        v[t] = sum;
    }
}

// Normalize the TW positions of acc over C (this thread: channels c0 .. c0 + V - 1), part
// being this iteration's 2 * TW * blockDim.x floats.
template <int V, int TW>
__device__ __forceinline__ void norm_over_c(const nnop__dw_kparams &p, float *acc, int c0, int cv,
                                            float *part)
{
    const int g0 = (int)threadIdx.x / cv * cv;
    const float inv_c = 1.f / (float)(cv * V);
    float mean[TW], q[TW];
#pragma unroll
    for (int t = 0; t < TW; t++) {
        mean[t] = 0.f;
        if (p.norm == 1)
#pragma unroll
            for (int e = 0; e < V; e++)
                mean[t] += acc[t * V + e];
    }
    if (p.norm == 1) {
        group_sum<TW>(mean, part, g0, cv);
#pragma unroll
        for (int t = 0; t < TW; t++)
            mean[t] *= inv_c;
    }
#pragma unroll
    for (int t = 0; t < TW; t++) {
        q[t] = 0.f;
#pragma unroll
        for (int e = 0; e < V; e++) {
            const float d = acc[t * V + e] - mean[t];
            q[t] += d * d;
        }
    }
    group_sum<TW>(q, part + TW * blockDim.x, g0, cv);
    float g[V], b[V];
#pragma unroll
    for (int e = 0; e < V; e++) {
        g[e] = p.gamma ? ld(p.gamma, p.g_dtype, (int64_t)(c0 + e) * p.gsn) : 1.f;
        b[e] = p.beta ? ld(p.beta, p.b_dtype, (int64_t)(c0 + e) * p.bsn) : 0.f;
    }
#pragma unroll
    for (int t = 0; t < TW; t++) {
        const float rstd = rsqrtf(q[t] * inv_c + p.norm_eps);
#pragma unroll
        for (int e = 0; e < V; e++)
            acc[t * V + e] = (acc[t * V + e] - mean[t]) * rstd * g[e] + b[e];
    }
}

// Thread i: channel vector i % (C / V) (consecutive threads on consecutive channels), then
// the tile of TW output columns, the output row, the sample. Every thread of a block runs
// every round of the loop (those past the end compute nothing and store nothing), so the
// norm's block barriers are reached by all; NORM: the norm over C before the store.
template <typename T, int V, int TW, int S, int SW, bool NORM>
__global__ void __launch_bounds__(kThreads, 2) depthwise_cl_kernel(nnop__dw_kparams p)
{
    extern __shared__ float norm_part[]; // NORM: 2 rounds x 2 sums x TW x blockDim.x
    const T *__restrict__ x = static_cast<const T *>(p.x);
    const T *__restrict__ w = static_cast<const T *>(p.w);
    T *__restrict__ y = static_cast<T *>(p.y);
    const int cv = (int)p.yv.c / V, OW = (int)p.yv.w, OH = (int)p.yv.h;
    const int tiles = (OW + TW - 1) / TW;
    const int total = (int)p.yv.n * OH * tiles * cv;
    int round = 0;
    for (int base = blockIdx.x * blockDim.x; base < total;
         base += gridDim.x * blockDim.x, round ^= 1) {
        const int i = base + (int)threadIdx.x;
        const bool active = i < total;
        int q = i / cv;
        const int c0 = (i - q * cv) * V;
        const int tile = q % tiles;
        q /= tiles;
        const int oh = q % OH, n = q / OH, ow0 = tile * TW;
        const int iw0 = ow0 * p.stride_w - p.pad_w, ih0 = oh * p.stride_h - p.pad_h;
        const T *xn = x + n * (int)p.xv.sn + c0;
        float acc[TW * V];
#pragma unroll
        for (int j = 0; j < TW * V; j++)
            acc[j] = 0.f;
        for (int r = 0; active && r < (int)p.wv.h; r++) {
            const int ih = ih0 + r * p.dil_h;
            if (ih >= 0 && ih < (int)p.xv.h)
                row<T, V, TW, S, SW>(p, xn + ih * (int)p.xv.sh, w + r * (int)p.wv.sh + c0, iw0,
                                     acc);
        }
        if (active)
            epilogue<T, V, TW>(p, acc, c0, n);
        if (NORM) // the previous round's sums are in the other half
            norm_over_c<V, TW>(p, acc, c0, cv, norm_part + round * 2 * TW * blockDim.x);
        if (!active)
            continue;
        T *yr = y + n * (int)p.yv.sn + oh * (int)p.yv.sh + c0;
#pragma unroll
        for (int t = 0; t < TW; t++) {
            if (ow0 + t >= OW)
                break;
            Vec<T, V> o;
#pragma unroll
            for (int e = 0; e < V; e++)
                o.v[e] = fromf<T>(acc[t * V + e]);
            stv<T, V>(yr + (ow0 + t) * (int)p.yv.sw, o);
        }
    }
}

// ---------------------------------------------------------------- any layout
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
        const I yi = n * (I)p.yv.sn + c * (I)p.yv.sc + oh * (I)p.yv.sh + ow * (I)p.yv.sw;
        for (int k = 0; k < p.n_ops; k++) // the sample of a broadcast operand: yi / yv.sn
            acc = epi_op(p.ops[k], acc, (int64_t)yi, (int64_t)c);
        store(y, yi, acc);
    }
}

// ---------------------------------------------------------------- launch
int64_t extent(const nnop__kview &v)
{
    return 1 + (v.n - 1) * v.sn + (v.c - 1) * v.sc + (v.h - 1) * v.sh + (v.w - 1) * v.sw;
}

// The channels-last kernel takes V channels a thread (4: 16 or 8 bytes; 1 for other counts):
// channels contiguous in x, y and w, C and every other stride a multiple of V, the pointers aligned
// to V elements.
bool vector_fits(const nnop__dw_kparams *p, int V, size_t es)
{
    const nnop__kview &x = p->xv, &y = p->yv, &w = p->wv;
    return x.sc == 1 && y.sc == 1 && w.sn == 1 && y.c % V == 0 && x.sn % V == 0 && x.sh % V == 0 &&
           x.sw % V == 0 && y.sn % V == 0 && y.sh % V == 0 && y.sw % V == 0 && w.sh % V == 0 &&
           w.sw % V == 0 && aligned(p->x, V * es) && aligned(p->y, V * es) && aligned(p->w, V * es);
}

// Threads a block: 256, or with the norm whole positions of cv threads (a multiple of cv and
// of 32, at most 256; 0 where none is).
int block_threads(bool norm, int64_t cv)
{
    if (!norm)
        return kThreads;
    int64_t a = cv, b = 32; // lcm(cv, 32) = cv * 32 / gcd
    while (b) {
        const int64_t t = a % b;
        a = b, b = t;
    }
    const int64_t lcm = cv > 0 ? cv / a * 32 : 0;
    return lcm > 0 && lcm <= kThreads ? (int)(kThreads / lcm * lcm) : 0;
}

template <typename T, int V, int TW, int S, int SW, bool NORM>
void go(const nnop__dw_kparams *p, cudaStream_t s)
{
    const int64_t cv = p->yv.c / V, items = p->yv.n * p->yv.h * ((p->yv.w + TW - 1) / TW) * cv;
    const int threads = block_threads(NORM, cv);
    const size_t smem = NORM ? sizeof(float) * 4 * TW * (size_t)threads : 0;
    depthwise_cl_kernel<T, V, TW, S, SW, NORM><<<grid_for(items, threads), threads, smem, s>>>(*p);
}

// The filter width and stride as template arguments where the kernel has them fixed; at
// stride 2 at most 4 outputs a thread (8 would hold a 19-vector span: spills). With the norm,
// only ConvNeXt's 7x7 at stride 1 is fixed (fewer instantiations); the rest take the loop.
template <typename T, int V, int TW, bool NORM>
void by_filter(const nnop__dw_kparams *p, cudaStream_t s)
{
    constexpr int TW2 = TW > 4 ? 4 : TW;
    const int S = (int)p->wv.w, sw = p->stride_w;
    const bool fixed = p->dil_w == 1 && (sw == 1 || sw == 2);
    if (NORM)
        fixed &&S == 7 && sw == 1 ? go<T, V, TW, 7, 1, NORM>(p, s) : go<T, V, TW, 0, 1, NORM>(p, s);
    else if (fixed && S == 3)
        sw == 1 ? go<T, V, TW, 3, 1, NORM>(p, s) : go<T, V, TW2, 3, 2, NORM>(p, s);
    else if (fixed && S == 5)
        sw == 1 ? go<T, V, TW, 5, 1, NORM>(p, s) : go<T, V, TW2, 5, 2, NORM>(p, s);
    else if (fixed && S == 7)
        sw == 1 ? go<T, V, TW, 7, 1, NORM>(p, s) : go<T, V, TW2, 7, 2, NORM>(p, s);
    else
        go<T, V, TW, 0, 1, NORM>(p, s);
}

// TW = 8 outputs a thread where that still fills the GPU (132 SMs x 2 blocks of 256 threads
// at 128 registers), else 2: small layers (batch 1) need the threads more than the reuse.
template <typename T, int V, bool NORM> void by_tile(const nnop__dw_kparams *p, cudaStream_t s)
{
    const int64_t columns = p->yv.n * p->yv.h * (p->yv.c / V);
    if (columns * ((p->yv.w + 7) / 8) >= 132 * 2 * kThreads)
        by_filter<T, V, 8, NORM>(p, s);
    else
        by_filter<T, V, 2, NORM>(p, s);
}

bool fits_32bit(const nnop__dw_kparams *p)
{
    const int64_t total = p->yv.n * p->yv.c * p->yv.h * p->yv.w;
    return total < INT32_MAX && extent(p->xv) < INT32_MAX && extent(p->yv) < INT32_MAX &&
           extent(p->wv) < INT32_MAX;
}

template <typename T> cudaError_t launch(const nnop__dw_kparams *p, cudaStream_t s)
{
    const int64_t total = p->yv.n * p->yv.c * p->yv.h * p->yv.w;
    const bool c_fastest = p->yv.sc == 1 && p->yv.c > 1;
    const bool small = fits_32bit(p);
    if (p->norm) { // whole positions a block: the vector width whose block exists
        if (small && vector_fits(p, 4, sizeof(T)) && block_threads(true, p->yv.c / 4) > 0)
            by_tile<T, 4, true>(p, s);
        else if (small && vector_fits(p, 1, sizeof(T)) && block_threads(true, p->yv.c) > 0)
            by_tile<T, 1, true>(p, s);
        else
            return cudaErrorInvalidValue;
    } else if (small && vector_fits(p, 4, sizeof(T))) {
        by_tile<T, 4, false>(p, s);
    } else if (small && vector_fits(p, 1, sizeof(T))) {
        by_tile<T, 1, false>(p, s);
    } else if (small) {
        depthwise_kernel<T, int>
                <<<grid_for(total, kThreads, 65535 * 16), kThreads, 0, s>>>(*p, c_fastest);
    } else {
        depthwise_kernel<T, int64_t>
                <<<grid_for(total, kThreads, 65535 * 16), kThreads, 0, s>>>(*p, c_fastest);
    }
    return cudaSuccess;
}

} // namespace

extern "C" cudaError_t nnop__k_depthwise(const nnop__dw_kparams *p, cudaStream_t s)
{
    const cudaError_t e = p->dtype == 0   ? launch<float>(p, s)
                          : p->dtype == 1 ? launch<__half>(p, s)
                                          : launch<__nv_bfloat16>(p, s);
    return e != cudaSuccess ? e : cudaGetLastError();
}

extern "C" int nnop__k_dw_norm_block(int64_t vectors_per_position)
{
    return block_threads(true, vectors_per_position);
}
