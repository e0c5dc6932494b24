// kernels.cu: nnop's own CUDA kernels: epilogue chains, pooling, global average pooling,
// softmax and flatten, for every dtype (float32 arithmetic inside).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "cuda/kernels/epilogue.cuh"

namespace
{

const int kThreads = 256;
const int64_t kMaxBlocks = 132 * 64;

using nnop_k::act;
using nnop_k::act_k;
using nnop_k::act_out;
using nnop_k::aligned;
using nnop_k::binary;
using nnop_k::block_max;
using nnop_k::block_sum;
using nnop_k::epi_op;
using nnop_k::fromf;
using nnop_k::ld;
using nnop_k::ldv;
using nnop_k::st;
using nnop_k::stv;
using nnop_k::tof;
using nnop_k::Vec;
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

// ---------------------------------------------------------------- memory-bound kernels
// Every kernel below moves each byte once (or reads a window's overlap from L1/L2), with
// consecutive threads on consecutive addresses, 16-byte vectors where the channel count and
// the pointers allow, and 32-bit index math when the tensors fit (a 64-bit strided variant
// takes the rest). Arithmetic is float32, as the CPU reference's values rounded to float.

// The largest element count the 32-bit kernels take: a grid-stride step past it still fits.
const int64_t kMax32 = INT32_MAX - (int64_t)kThreads * kMaxBlocks;

template <typename T, int V> __device__ __forceinline__ Vec<T, V> splat(float f)
{
    Vec<T, V> r;
#pragma unroll
    for (int j = 0; j < V; j++)
        r.v[j] = fromf<T>(f);
    return r;
}

// max that propagates NaN (PyTorch's max pooling): a NaN operand gives NaN
__device__ __forceinline__ float max_nan(float a, float b)
{
    return (b > a || b != b) ? b : a;
}

// Max accumulators of V elements: float for f32, native pairs (HMNMX2 .NAN) for f16/bf16,
// which is exact (max only picks) and saves the conversions.
template <typename T, int V> struct MaxAcc {
    float a[V];
    __device__ __forceinline__ void init()
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] = -INFINITY;
    }
    __device__ __forceinline__ void add(const Vec<T, V> &v)
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] = max_nan(a[j], tof(v.v[j]));
    }
    __device__ __forceinline__ void merge(const MaxAcc &o)
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] = max_nan(a[j], o.a[j]);
    }
    __device__ __forceinline__ Vec<T, V> get() const
    {
        Vec<T, V> r;
#pragma unroll
        for (int j = 0; j < V; j++)
            r.v[j] = fromf<T>(a[j]);
        return r;
    }
};
template <typename T2, typename T, int V> struct MaxAccPairs {
    T2 a[V / 2];
    __device__ __forceinline__ void init()
    {
        T2 m;
        m.x = m.y = fromf<T>(-INFINITY);
#pragma unroll
        for (int j = 0; j < V / 2; j++)
            a[j] = m;
    }
    __device__ __forceinline__ void add(const Vec<T, V> &v)
    {
        const T2 *p = reinterpret_cast<const T2 *>(v.v);
#pragma unroll
        for (int j = 0; j < V / 2; j++)
            a[j] = __hmax2_nan(a[j], p[j]);
    }
    __device__ __forceinline__ void merge(const MaxAccPairs &o)
    {
#pragma unroll
        for (int j = 0; j < V / 2; j++)
            a[j] = __hmax2_nan(a[j], o.a[j]);
    }
    __device__ __forceinline__ Vec<T, V> get() const
    {
        Vec<T, V> r;
#pragma unroll
        for (int j = 0; j < V / 2; j++) {
            r.v[2 * j] = a[j].x;
            r.v[2 * j + 1] = a[j].y;
        }
        return r;
    }
};
template <> struct MaxAcc<__half, 8> : MaxAccPairs<__half2, __half, 8> {
};
// One 16-bit value: native max (HMNMX .NAN), no conversions a tap.
template <typename T> struct MaxAccNative1 {
    T a;
    __device__ __forceinline__ void init()
    {
        a = fromf<T>(-INFINITY);
    }
    __device__ __forceinline__ void add(const Vec<T, 1> &v)
    {
        a = __hmax_nan(a, v.v[0]);
    }
    __device__ __forceinline__ void merge(const MaxAccNative1 &o)
    {
        a = __hmax_nan(a, o.a);
    }
    __device__ __forceinline__ Vec<T, 1> get() const
    {
        Vec<T, 1> r;
        r.v[0] = a;
        return r;
    }
};
template <> struct MaxAcc<__half, 1> : MaxAccNative1<__half> {
};
template <> struct MaxAcc<__nv_bfloat16, 1> : MaxAccNative1<__nv_bfloat16> {
};
template <> struct MaxAcc<__nv_bfloat16, 8> : MaxAccPairs<__nv_bfloat162, __nv_bfloat16, 8> {
};

// Sums of V floats: what every sum accumulator shares (the loads' conversions differ).
template <int V> struct SumAccBase {
    float a[V];
    __device__ __forceinline__ void init()
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] = 0.f;
    }
    __device__ __forceinline__ void merge(const SumAccBase &o)
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] += o.a[j];
    }
};

template <typename T, int V> struct SumAcc : SumAccBase<V> {
    using SumAccBase<V>::a;
    __device__ __forceinline__ void add(const Vec<T, V> &v)
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] += tof(v.v[j]);
    }
    __device__ __forceinline__ Vec<T, V> get(float inv) const
    {
        Vec<T, V> r;
#pragma unroll
        for (int j = 0; j < V; j++)
            r.v[j] = fromf<T>(a[j] * inv);
        return r;
    }
};

// Sums of 16-bit values, converted to float and back two at a time (one pair conversion per
// two values, where element-wise conversion takes one per value).
__device__ __forceinline__ float2 to_float2(__half2 v)
{
    return __half22float2(v);
}
__device__ __forceinline__ float2 to_float2(__nv_bfloat162 v)
{
    return __bfloat1622float2(v);
}
template <typename T2> __device__ __forceinline__ T2 from_float2(float a, float b);
template <> __device__ __forceinline__ __half2 from_float2<__half2>(float a, float b)
{
    return __floats2half2_rn(a, b);
}
template <> __device__ __forceinline__ __nv_bfloat162 from_float2<__nv_bfloat162>(float a, float b)
{
    return __floats2bfloat162_rn(a, b);
}
template <typename T2, typename T, int V> struct SumAccPairs : SumAccBase<V> {
    using SumAccBase<V>::a;
    __device__ __forceinline__ void add(const Vec<T, V> &v)
    {
#pragma unroll
        for (int j = 0; j < V / 2; j++) {
            T2 h;
            h.x = v.v[2 * j];
            h.y = v.v[2 * j + 1];
            float2 f = to_float2(h);
            a[2 * j] += f.x;
            a[2 * j + 1] += f.y;
        }
    }
    __device__ __forceinline__ Vec<T, V> get(float inv) const
    {
        Vec<T, V> r;
#pragma unroll
        for (int j = 0; j < V / 2; j++) {
            T2 h = from_float2<T2>(a[2 * j] * inv, a[2 * j + 1] * inv);
            r.v[2 * j] = h.x;
            r.v[2 * j + 1] = h.y;
        }
        return r;
    }
};
template <> struct SumAcc<__half, 8> : SumAccPairs<__half2, __half, 8> {
};
template <> struct SumAcc<__nv_bfloat16, 8> : SumAccPairs<__nv_bfloat162, __nv_bfloat16, 8> {
};

// Pooling geometry of packed tensors (32-bit).
struct PoolGeo {
    int n, c, h, w, oh, ow;
    int kh, kw, sh, sw, ph, pw;
    int incl; // count_include_pad
};

// The divisor of an average window at (h0, w0): positions inside the input, or with
// count_include_pad the window clipped to the padded input (PyTorch's rule).
__device__ __forceinline__ float avg_inv(const PoolGeo &g, int h0, int w0, int kh, int kw)
{
    int hs = max(h0, 0), he = min(h0 + kh, g.h), ws = max(w0, 0), we = min(w0 + kw, g.w);
    int cnt = (he - hs) * (we - ws);
    if (g.incl)
        cnt = (min(h0 + kh, g.h + g.ph) - h0) * (min(w0 + kw, g.w + g.pw) - w0);
    return 1.f / (float)cnt;
}

// Channels-last pooling: thread i makes V consecutive channels of one output pixel (channel
// fastest, so a warp reads whole 16-byte-aligned pixel rows); KH, KW > 0 fix the window at
// compile time (all loads of a window in flight at once), 0 takes it from g.
template <typename T, int V, bool MAX, int KH, int KW>
__global__ void __launch_bounds__(kThreads)
        pool_nhwc_kernel(const T *__restrict__ x, T *__restrict__ y, PoolGeo g)
{
    const int kh = KH ? KH : g.kh, kw = KW ? KW : g.kw;
    const int cv = g.c / V;
    const int total = g.n * g.oh * g.ow * cv;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        int c = (i % cv) * V, pix = i / cv;
        int ow = pix % g.ow, t = pix / g.ow;
        int oh = t % g.oh, n = t / g.oh;
        int h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
        const T *xb = x + (n * g.h) * g.w * g.c + c;
        Vec<T, V> out;
        if (MAX) {
            MaxAcc<T, V> acc;
            const Vec<T, V> none = splat<T, V>(-INFINITY);
            acc.init();
            if (KH && KW) {
#pragma unroll
                for (int r = 0; r < kh; r++)
#pragma unroll
                    for (int s = 0; s < kw; s++) {
                        // every load issued (clamped into the input), the ones
                        // outside it replaced by the neutral element: no branches
                        int hh = h0 + r, ww = w0 + s;
                        int hc = min(max(hh, 0), g.h - 1), wc = min(max(ww, 0), g.w - 1);
                        Vec<T, V> v = ldv<T, V>(xb + (hc * g.w + wc) * g.c);
                        acc.add(hh == hc && ww == wc ? v : none);
                    }
            } else {
                int hs = max(h0, 0), he = min(h0 + kh, g.h), ws = max(w0, 0),
                    we = min(w0 + kw, g.w);
                for (int hh = hs; hh < he; hh++)
                    for (int ww = ws; ww < we; ww++)
                        acc.add(ldv<T, V>(xb + (hh * g.w + ww) * g.c));
            }
            out = acc.get();
        } else {
            SumAcc<T, V> acc;
            const Vec<T, V> none = splat<T, V>(0.f);
            acc.init();
            if (KH && KW) {
#pragma unroll
                for (int r = 0; r < kh; r++)
#pragma unroll
                    for (int s = 0; s < kw; s++) {
                        // every load issued (clamped into the input), the ones
                        // outside it replaced by the neutral element: no branches
                        int hh = h0 + r, ww = w0 + s;
                        int hc = min(max(hh, 0), g.h - 1), wc = min(max(ww, 0), g.w - 1);
                        Vec<T, V> v = ldv<T, V>(xb + (hc * g.w + wc) * g.c);
                        acc.add(hh == hc && ww == wc ? v : none);
                    }
            } else {
                int hs = max(h0, 0), he = min(h0 + kh, g.h), ws = max(w0, 0),
                    we = min(w0 + kw, g.w);
                for (int hh = hs; hh < he; hh++)
                    for (int ww = ws; ww < we; ww++)
                        acc.add(ldv<T, V>(xb + (hh * g.w + ww) * g.c));
            }
            out = acc.get(avg_inv(g, h0, w0, kh, kw));
        }
        stv<T, V>(y + i * V, out);
    }
}

// A window's result: the max, or the sum times the average's 1 / count.
template <typename T, int V>
__device__ __forceinline__ Vec<T, V> pool_result(const MaxAcc<T, V> &a, float)
{
    return a.get();
}
template <typename T, int V>
__device__ __forceinline__ Vec<T, V> pool_result(const SumAcc<T, V> &a, float inv)
{
    return a.get(inv);
}

// Channels-last 3x3 pooling with stride 1 (inception and ASPP branches, blur pools): each
// thread slides down kS1Rows outputs of one column and V channels, keeping the last three
// input rows' 3-wide partial results: 3 loads an output instead of 9, and a third of the
// conversions for average pooling.
const int kS1Rows = 8;
template <typename T, int V, bool MAX>
__global__ void __launch_bounds__(kThreads)
        pool_nhwc_s1_kernel(const T *__restrict__ x, T *__restrict__ y, PoolGeo g)
{
    typedef typename std::conditional<MAX, MaxAcc<T, V>, SumAcc<T, V>>::type Acc;
    const int cv = g.c / V, blocks_h = (g.oh + kS1Rows - 1) / kS1Rows;
    const int total = g.n * blocks_h * g.ow * cv;
    const Vec<T, V> none = splat<T, V>(MAX ? -INFINITY : 0.f);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        int c = (i % cv) * V, pix = i / cv;
        int ow = pix % g.ow, t = pix / g.ow;
        int bh = t % blocks_h, n = t / blocks_h;
        int oh0 = bh * kS1Rows, w0 = ow - g.pw, nout = min(kS1Rows, g.oh - oh0);
        const T *xb = x + (n * g.h) * g.w * g.c + c;
        T *yb = y + ((n * g.oh + oh0) * g.ow + ow) * g.c + c;
        Acc r0, r1, r2; // input rows k-2, k-1, k, each over the 3 window columns
        r0.init();
        r1.init();
        for (int k = 0; k < nout + 2; k++) {
            const int hh = oh0 - g.ph + k;
            r2.init();
            if (hh >= 0 && hh < g.h) {
#pragma unroll
                for (int s = 0; s < 3; s++) {
                    int ww = w0 + s, wc = min(max(ww, 0), g.w - 1);
                    Vec<T, V> v = ldv<T, V>(xb + (hh * g.w + wc) * g.c);
                    r2.add(ww == wc ? v : none);
                }
            }
            if (k >= 2) {
                Acc o = r0;
                o.merge(r1);
                o.merge(r2);
                stv<T, V>(yb + (k - 2) * g.ow * g.c,
                          pool_result(o, MAX ? 1.f : avg_inv(g, oh0 + k - 2 - g.ph, w0, 3, 3)));
            }
            r0 = r1;
            r1 = r2;
        }
    }
}

// Channels-first pooling: one output per thread, W fastest (a warp writes 32 consecutive
// outputs and reads the rows under them, the windows' overlap from L1).
template <typename T, bool MAX, int KH, int KW>
__global__ void __launch_bounds__(kThreads)
        pool_nchw_kernel(const T *__restrict__ x, T *__restrict__ y, PoolGeo g)
{
    const int kh = KH ? KH : g.kh, kw = KW ? KW : g.kw;
    const int total = g.n * g.c * g.oh * g.ow;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        int ow = i % g.ow, t = i / g.ow;
        int oh = t % g.oh, nc = t / g.oh;
        int h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
        const T *xb = x + nc * g.h * g.w;
        Vec<T, 1> out;
        if (MAX) {
            MaxAcc<T, 1> acc;
            const Vec<T, 1> none = splat<T, 1>(-INFINITY);
            acc.init();
            if (KH && KW) {
#pragma unroll
                for (int r = 0; r < kh; r++)
#pragma unroll
                    for (int s = 0; s < kw; s++) {
                        // every load issued (clamped into the input), the ones
                        // outside it replaced by the neutral element: no branches
                        int hh = h0 + r, ww = w0 + s;
                        int hc = min(max(hh, 0), g.h - 1), wc = min(max(ww, 0), g.w - 1);
                        Vec<T, 1> v = ldv<T, 1>(xb + hc * g.w + wc);
                        acc.add(hh == hc && ww == wc ? v : none);
                    }
            } else {
                int hs = max(h0, 0), he = min(h0 + kh, g.h), ws = max(w0, 0),
                    we = min(w0 + kw, g.w);
                for (int hh = hs; hh < he; hh++)
                    for (int ww = ws; ww < we; ww++)
                        acc.add(ldv<T, 1>(xb + hh * g.w + ww));
            }
            out = acc.get();
        } else {
            SumAcc<T, 1> acc;
            acc.init();
            int hs = max(h0, 0), he = min(h0 + kh, g.h), ws = max(w0, 0), we = min(w0 + kw, g.w);
            for (int hh = hs; hh < he; hh++)
                for (int ww = ws; ww < we; ww++)
                    acc.add(ldv<T, 1>(xb + hh * g.w + ww));
            out = acc.get(avg_inv(g, h0, w0, kh, kw));
        }
        y[i] = out.v[0];
    }
}

// Copies count elements from src (any element-aligned address) into shared memory so that
// stage[off + i] = src[i], with off = src's offset in its 16-byte line in elements: the aligned
// middle moves as 16-byte vectors (coalesced loads, conflict-free shared stores), the two
// ragged ends element by element. stage is 16-byte aligned and holds count + 16 / sizeof(T)
// (stage_elems).
template <typename T> __host__ __device__ constexpr int stage_elems(int bytes)
{
    return bytes / (int)sizeof(T) - 16 / (int)sizeof(T); // the most count a stage of bytes takes
}
template <typename T>
__device__ __forceinline__ int stage_flat(T *stage, const T *__restrict__ src, int count)
{
    constexpr int V = 16 / (int)sizeof(T);
    const int off = (int)(((uintptr_t)src & 15) / sizeof(T));
    const int head = off ? min(V - off, count) : 0;
    const int nvec = (count - head) / V, tail = head + nvec * V;
    const uint4 *vs = reinterpret_cast<const uint4 *>(src + head);
    uint4 *vd = reinterpret_cast<uint4 *>(stage + off + head);
#pragma unroll 4
    for (int i = threadIdx.x; i < nvec; i += blockDim.x)
        vd[i] = __ldg(vs + i);
    const int t = (int)threadIdx.x;
    if (t < head)
        stage[off + t] = src[t];
    if (t < count - tail)
        stage[off + tail + t] = src[tail + t];
    return off;
}

const int kBandBytes = 32768;

// A thread's outputs in a band of contiguous output rows of row_out = ow * cin elements: the
// one at the thread's index first, then every step-th (the block's size). Their (row, column,
// channel) advance by carries, not divisions.
struct BandWalk {
    int rr, ow, c;                  // the current output: row in the band, column, channel
    int step_rows, step_ow, step_c; // the step in the same terms
    __device__ BandWalk(int t, int step, int row_out, int cin)
    {
        const int col0 = t % row_out, step_col = step % row_out;
        rr = t / row_out, ow = col0 / cin, c = col0 % cin;
        step_rows = step / row_out, step_ow = step_col / cin, step_c = step_col % cin;
    }
    // CL: channels last (cin > 1 possible); channels first has one channel, never carried
    template <bool CL> __device__ __forceinline__ void next(int ow_n, int cin)
    {
        c += step_c;
        ow += step_ow;
        rr += step_rows;
        if (CL && c >= cin) {
            c -= cin;
            ow++;
        }
        if (ow >= ow_n) {
            ow -= ow_n;
            rr++;
        }
    }
};

// One window of pool_band_kernel: `at` is the window's top-left element in the staged band
// (row_in elements a row, cin a column); inside the input (the common case) every tap is
// loaded without a test.
template <typename Acc, typename T, int KH, int KW>
__device__ __forceinline__ void band_window(Acc &acc, const T *at, const PoolGeo &g, int h0, int w0,
                                            int row_in, int cin)
{
    const int kh = KH ? KH : g.kh, kw = KW ? KW : g.kw;
    acc.init();
    if (h0 >= 0 && h0 + kh <= g.h && w0 >= 0 && w0 + kw <= g.w) {
#pragma unroll
        for (int r = 0; r < kh; r++)
#pragma unroll
            for (int s = 0; s < kw; s++) {
                Vec<T, 1> v;
                v.v[0] = at[r * row_in + s * cin];
                acc.add(v);
            }
        return;
    }
#pragma unroll
    for (int r = 0; r < kh; r++)
#pragma unroll
        for (int s = 0; s < kw; s++)
            if (h0 + r >= 0 && h0 + r < g.h && w0 + s >= 0 && w0 + s < g.w) {
                Vec<T, 1> v;
                v.v[0] = at[r * row_in + s * cin];
                acc.add(v);
            }
}

// Pooling through a band of whole input rows in shared memory, for the layouts where
// one-output-a-thread loads are narrow: channels first (a plane is n, c) and channels last
// with C not a multiple of a 16-byte vector (a plane is a sample). The rows under ob output
// rows of one plane are contiguous (and so are pp whole small planes, pp > 1 only when
// ob covers a plane), so a block stages them with 16-byte loads and then computes their
// outputs from shared memory (the windows' overlap costs no global reads); the outputs,
// contiguous too, are written coalesced. A thread's outputs sit a fixed step apart, so
// their (row, column, channel) advance by carries, not divisions: the computing half is
// what bounds this kernel. One output a thread held scalar 2-byte loads at 31% of the copy
// bandwidth (NCHW f16 3x3/2, bench_kernels 2026-12-02) and 29% for C = 3.
template <typename T, bool MAX, bool CL, int KH, int KW>
__global__ void __launch_bounds__(kThreads)
        pool_band_kernel(const T *__restrict__ x, T *__restrict__ y, PoolGeo g, int planes, int ob,
                         int pp)
{
    __shared__ __align__(16) unsigned char raw[kBandBytes];
    T *stage = reinterpret_cast<T *>(raw);
    typedef typename std::conditional<MAX, MaxAcc<T, 1>, SumAcc<T, 1>>::type Acc;
    const int kh = KH ? KH : g.kh, cin = CL ? g.c : 1;
    const int bands = (g.oh + ob - 1) / ob, groups = (planes + pp - 1) / pp;
    const int row_in = g.w * cin, row_out = g.ow * cin;
    const BandWalk first((int)threadIdx.x, (int)blockDim.x, row_out, cin);
    for (int b = blockIdx.x; b < groups * bands; b += gridDim.x) {
        const int p0 = b / bands * pp, npl = min(pp, planes - p0);
        const int oh0 = (b % bands) * ob, rows = min(ob, g.oh - oh0);
        const int hs = pp > 1 ? 0 : max(oh0 * g.sh - g.ph, 0);
        const int he = pp > 1 ? g.h : min((oh0 + rows - 1) * g.sh - g.ph + kh, g.h);
        const int count = pp > 1 ? npl * g.h * row_in : max(he - hs, 0) * row_in;
        const int off = stage_flat(stage, x + ((size_t)p0 * g.h + hs) * row_in, count);
        __syncthreads();
        T *yb = y + ((size_t)p0 * g.oh + oh0) * row_out;
        const int all_rows = pp > 1 ? npl * g.oh : rows; // rows of outputs the block makes
        for (BandWalk o = first; o.rr < all_rows; o.next<CL>(g.ow, cin)) {
            int q = 0, oh = oh0 + o.rr; // plane in the group, output row
            if (pp > 1) {
                q = o.rr / g.oh;
                oh = o.rr - q * g.oh;
            }
            const int h0 = oh * g.sh - g.ph, w0 = o.ow * g.sw - g.pw;
            Acc acc;
            band_window<Acc, T, KH, KW>(acc,
                                        stage + off + (q * g.h + h0 - hs) * row_in + w0 * cin + o.c,
                                        g, h0, w0, row_in, cin);
            yb[o.rr * row_out + o.ow * cin + o.c] =
                    pool_result(acc, MAX ? 1.f : avg_inv(g, h0, w0, kh, KW ? KW : g.kw)).v[0];
        }
        __syncthreads();
    }
}

// Channels-last max pooling of 16-bit tensors with fewer channels than a 16-byte vector (the
// RGB stem's 3x3/2 max pool), separable: a band of ob output rows of one sample first takes
// the max over each window's rows, 16-byte vectors of whole input rows straight from global
// memory (the row a window shares with the next one comes from L2), into shared memory; then
// each output, consecutive threads on consecutive elements of the band's contiguous output,
// takes the max of its kw columns there: kh + kw narrow steps an output, not kh * kw (the
// band kernel's one element a tap held 49% of the copy bandwidth, bench_kernels 2026-12-03).
// Only for 16-bit types, whose native max (.NAN) gives the same bits in any order; float's
// max_nan keeps the first of +0 and -0.
const int kSepBytes = 16384;

// The column pass of pool_sep_kernel for CIN channels (3: RGB) with KW and the stride SW
// fixed: a thread takes 4 consecutive output pixels of a row, loads their span of staged
// columns once, and stores its 4 * CIN outputs as 4-element vectors. The element-a-thread walk
// issued about 40 instructions an output and held C = 3 at 55-56% of the copy, 78% of SM
// issue under ncu; with this 59-69% (bench_kernels 2026-12-04, two runs).
template <typename T, int KW, int SW, int CIN>
__device__ __forceinline__ void sep_columns(const T *vbuf, T *yb, const PoolGeo &g, int rows,
                                            bool vec_out)
{
    constexpr int P = 4, SV = 4, SPAN = KW > 0 ? (P - 1) * SW + KW : 1, ROW = P * CIN;
    const int runs = (g.ow + P - 1) / P, row_in = g.w * CIN, row_out = g.ow * CIN;
    const Vec<T, 1> none = splat<T, 1>(-INFINITY);
    for (int i = (int)threadIdx.x; i < rows * runs; i += blockDim.x) {
        const int rr = i / runs, ow0 = (i - rr * runs) * P, w0 = ow0 * SW - g.pw;
        const T *at = vbuf + rr * row_in;
        Vec<T, 1> xs[SPAN * CIN];
        if (w0 >= 0 && w0 + SPAN <= g.w) {
#pragma unroll
            for (int j = 0; j < SPAN * CIN; j++)
                xs[j].v[0] = at[w0 * CIN + j];
        } else {
#pragma unroll
            for (int j = 0; j < SPAN; j++) {
                const int ww = w0 + j, wc = min(max(ww, 0), g.w - 1);
#pragma unroll
                for (int c = 0; c < CIN; c++) {
                    xs[j * CIN + c].v[0] = at[wc * CIN + c];
                    xs[j * CIN + c] = ww == wc ? xs[j * CIN + c] : none;
                }
            }
        }
        T o[ROW];
#pragma unroll
        for (int q = 0; q < P; q++)
#pragma unroll
            for (int c = 0; c < CIN; c++) {
                MaxAcc<T, 1> acc;
                acc.init();
#pragma unroll
                for (int s = 0; s < KW; s++)
                    acc.add(xs[(q * SW + s) * CIN + c]);
                o[q * CIN + c] = acc.get().v[0];
            }
        T *yr = yb + rr * row_out + ow0 * CIN;
        if (vec_out && ow0 + P <= g.ow) {
#pragma unroll
            for (int k = 0; k < ROW / SV; k++) {
                Vec<T, SV> part;
#pragma unroll
                for (int e = 0; e < SV; e++)
                    part.v[e] = o[k * SV + e];
                stv<T, SV>(yr + k * SV, part);
            }
        } else {
#pragma unroll
            for (int e = 0; e < ROW; e++)
                if (ow0 + e / CIN < g.ow)
                    yr[e] = o[e];
        }
    }
}

template <typename T, int KH, int KW, int SW>
__global__ void __launch_bounds__(kThreads)
        pool_sep_kernel(const T *__restrict__ x, T *__restrict__ y, PoolGeo g, int ob)
{
    constexpr int V = 16 / (int)sizeof(T);
    __shared__ __align__(16) T vbuf[kSepBytes / sizeof(T)];
    const int kh = KH ? KH : g.kh, kw = KW ? KW : g.kw, cin = g.c;
    const int row_in = g.w * cin, row_out = g.ow * cin, nv = row_in / V;
    const int bands = (g.oh + ob - 1) / ob, t = (int)threadIdx.x;
    const BandWalk first(t, (int)blockDim.x, row_out, cin);
    const Vec<T, V> none = splat<T, V>(-INFINITY);
    const Vec<T, 1> none1 = splat<T, 1>(-INFINITY);
    for (int b = blockIdx.x; b < g.n * bands; b += gridDim.x) {
        const int n = b / bands, oh0 = (b % bands) * ob, rows = min(ob, g.oh - oh0);
        const T *xb = x + n * g.h * row_in;
        for (int i = t; i < rows * nv; i += blockDim.x) {
            const int r = i / nv, e = (i - r * nv) * V, h0 = (oh0 + r) * g.sh - g.ph;
            MaxAcc<T, V> acc;
            acc.init();
            if (KH) {
#pragma unroll
                for (int k = 0; k < KH; k++) {
                    // every load issued (clamped into the input), padding rows replaced by
                    // the neutral element
                    int hh = h0 + k, hc = min(max(hh, 0), g.h - 1);
                    Vec<T, V> v = ldv<T, V>(xb + hc * row_in + e);
                    acc.add(hh == hc ? v : none);
                }
            } else {
                for (int hh = max(h0, 0); hh < min(h0 + kh, g.h); hh++)
                    acc.add(ldv<T, V>(xb + hh * row_in + e));
            }
            stv<T, V>(vbuf + r * row_in + e, acc.get());
        }
        __syncthreads();
        T *yb = y + (n * g.oh + oh0) * row_out;
        if (SW > 0 && KW > 0 && cin == 3) {
            // vector stores where every output row starts aligned to them
            const bool vec_out = row_out % 4 == 0 && ((uintptr_t)y % (4 * sizeof(T))) == 0;
            sep_columns<T, KW, SW, 3>(vbuf, yb, g, rows, vec_out);
            __syncthreads();
            continue;
        }
        for (BandWalk o = first; o.rr < rows; o.next<true>(g.ow, cin)) {
            const int w0 = o.ow * g.sw - g.pw;
            const T *at = vbuf + o.rr * row_in + o.c;
            MaxAcc<T, 1> acc;
            acc.init();
            if (KW) {
#pragma unroll
                for (int s = 0; s < KW; s++) {
                    int ww = w0 + s, wc = min(max(ww, 0), g.w - 1);
                    Vec<T, 1> v;
                    v.v[0] = at[wc * cin];
                    acc.add(ww == wc ? v : none1);
                }
            } else {
                for (int ww = max(w0, 0); ww < min(w0 + kw, g.w); ww++) {
                    Vec<T, 1> v;
                    v.v[0] = at[ww * cin];
                    acc.add(v);
                }
            }
            yb[o.rr * row_out + o.ow * cin + o.c] = acc.get().v[0];
        }
        __syncthreads();
    }
}

// 16-bit max pooling of rows of CIN channels (1: NCHW planes, a plane (n, c) a sample; see
// pool_rows for why not 3) for the two windows of real networks, 3x3/2 pad 1 and 2x2/2 pad 0, with
// W a multiple of 16 (so OW = W / 2 is a multiple of 8): a thread makes 8 output pixels of a row
// from 2 * CIN 16-byte loads of each of the K input rows (plus the pixel to their left for 3x3), in
// registers, and stores them as CIN vectors. The separable kernel's shared-memory column pass
// held NCHW f16 3x3/2 at 61% of the copy, issue-bound (ncu: SM 80%, DRAM 41%), this 100%
// (DRAM 82% under ncu); runs of 8 outputs a thread from shared memory hit 8-way bank
// conflicts (51%) (bench_kernels, 2026-12-04).
template <typename T, int K, int CIN>
__global__ void __launch_bounds__(kThreads)
        pool_rows_kernel(const T *__restrict__ x, T *__restrict__ y, PoolGeo g)
{
    constexpr int PAD = K == 3 ? 1 : 0, NV = 2 * CIN; // 16-byte vectors a chunk row
    const Vec<T, 8> none = splat<T, 8>(-INFINITY);
    const int chunks = g.w / 16, total = g.n * g.oh * chunks, row = g.w * CIN;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        const int k = i % chunks, r = i / chunks, oh = r % g.oh, n = r / g.oh;
        const T *xn = x + (size_t)n * g.h * row + 16 * k * CIN;
        MaxAcc<T, 8> cols[NV];  // pixels 16k..16k+15, max over the K rows
        MaxAcc<T, 1> left[CIN]; // pixel 16k-1 (3x3 only; padding for k = 0)
#pragma unroll
        for (int v = 0; v < NV; v++)
            cols[v].init();
#pragma unroll
        for (int ch = 0; ch < CIN; ch++)
            left[ch].init();
#pragma unroll
        for (int t = 0; t < K; t++) {
            // every load issued (clamped into the input), padding rows made neutral
            const int hh = oh * 2 - PAD + t, hc = min(max(hh, 0), g.h - 1);
            const T *xr = xn + hc * row;
#pragma unroll
            for (int v = 0; v < NV; v++) {
                const Vec<T, 8> a = ldv<T, 8>(xr + 8 * v);
                cols[v].add(hh == hc ? a : none);
            }
            if (K == 3 && k > 0 && hh == hc) {
#pragma unroll
                for (int ch = 0; ch < CIN; ch++) {
                    Vec<T, 1> l;
                    l.v[0] = xr[ch - CIN];
                    left[ch].add(l);
                }
            }
        }
        T c[17 * CIN]; // c[(j + 1) * CIN + ch]: pixel 16k + j, j = -1 the one to the left
#pragma unroll
        for (int ch = 0; ch < CIN; ch++)
            c[ch] = left[ch].get().v[0];
#pragma unroll
        for (int v = 0; v < NV; v++) {
            const Vec<T, 8> m = cols[v].get();
#pragma unroll
            for (int j = 0; j < 8; j++)
                c[CIN + 8 * v + j] = m.v[j];
        }
        Vec<T, 8> o[CIN];
#pragma unroll
        for (int e = 0; e < 8 * CIN; e++) {
            const int q = e / CIN, ch = e % CIN; // output pixel 8k + q, channel ch
            MaxAcc<T, 1> m;                      // pixels 16k + 2q - PAD .. + K - 1
            m.init();
#pragma unroll
            for (int s = 0; s < K; s++) {
                Vec<T, 1> v;
                v.v[0] = c[(2 * q - PAD + s + 1) * CIN + ch];
                m.add(v);
            }
            o[e / 8].v[e % 8] = m.get().v[0];
        }
        T *yr = y + (((size_t)n * g.oh + oh) * g.ow + 8 * k) * CIN;
#pragma unroll
        for (int v = 0; v < CIN; v++)
            stv<T, 8>(yr + 8 * v, o[v]);
    }
}

// Any strides, 64-bit indices: tensors past the 32-bit kernels' reach or of mixed layouts.
__global__ void pool_strided_kernel(nnop__pool_kparams p)
{
    int64_t total = p.yv.n * p.yv.c * p.yv.h * p.yv.w;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t ow = i % p.yv.w, oh = (i / p.yv.w) % p.yv.h;
        int64_t c = (i / (p.yv.w * p.yv.h)) % p.yv.c, n = i / (p.yv.w * p.yv.h * p.yv.c);
        int64_t h0 = oh * p.stride[0] - p.pad[0], w0 = ow * p.stride[1] - p.pad[1];
        const int64_t base = n * p.xv.sn + c * p.xv.sc;
        float acc = p.is_max ? -INFINITY : 0.f;
        int64_t count = 0;
        for (int64_t r = h0; r < h0 + p.window[0]; r++) {
            if (r < 0 || r >= p.xv.h)
                continue;
            for (int64_t s = w0; s < w0 + p.window[1]; s++) {
                if (s < 0 || s >= p.xv.w)
                    continue;
                float v = ld(p.x, p.dtype, base + r * p.xv.sh + s * p.xv.sw);
                acc = p.is_max ? max_nan(acc, v) : acc + v;
                count++;
            }
        }
        if (!p.is_max && p.count_include_pad) {
            int64_t hend = min(h0 + p.window[0], p.xv.h + p.pad[0]);
            int64_t wend = min(w0 + p.window[1], p.xv.w + p.pad[1]);
            count = (hend - h0) * (wend - w0);
        }
        if (!p.is_max)
            acc /= (float)count;
        st(p.y, p.dtype, n * p.yv.sn + c * p.yv.sc + oh * p.yv.sh + ow * p.yv.sw, acc);
    }
}

// Global average pooling, channels last: block (blockIdx.x, n, blockIdx.z) owns blockDim.x
// vectors of channels and chunk z of H*W (positions [z * chunk, (z + 1) * chunk)); threadIdx.y
// splits the chunk; partial sums meet in shared memory. One chunk (gridDim.z = 1): the mean
// goes to y. Several (a few samples of many positions: one block a sample left most SMs
// idle), or to_sums: each block's float sum goes to sums[(n * gridDim.z + z) * c + channel]
// and gap_finish_kernel (or the gate kernel, gate.cu) adds them in chunk order
// (deterministic).
template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
        gap_nhwc_kernel(const T *__restrict__ x, T *__restrict__ y, float *__restrict__ sums,
                        int n_, int hw, int c, int chunk, float inv, bool to_sums)
{
    extern __shared__ float part[]; // [blockDim.y][blockDim.x][V]
    const int cv = c / V;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int p0 = blockIdx.z * chunk, p1 = p0 + chunk < hw ? p0 + chunk : hw;
    for (int n = blockIdx.y; n < n_; n += gridDim.y) {
        SumAcc<T, V> acc;
        acc.init();
        if (j < cv) {
            const T *xb = x + (size_t)n * hw * c + j * V;
            for (int p = p0 + threadIdx.y; p < p1; p += blockDim.y)
                acc.add(ldv<T, V>(xb + p * c));
        }
        float *mine = part + (threadIdx.y * blockDim.x + threadIdx.x) * V;
#pragma unroll
        for (int e = 0; e < V; e++)
            mine[e] = acc.a[e];
        __syncthreads();
        if (threadIdx.y == 0 && j < cv) {
            for (int r = 1; r < (int)blockDim.y; r++) {
                const float *o = part + (r * blockDim.x + threadIdx.x) * V;
#pragma unroll
                for (int e = 0; e < V; e++)
                    acc.a[e] += o[e];
            }
            if (gridDim.z == 1 && !to_sums) {
                stv<T, V>(y + (size_t)n * c + j * V, acc.get(inv));
            } else {
                float *o = sums + ((size_t)n * gridDim.z + blockIdx.z) * c + j * V;
#pragma unroll
                for (int e = 0; e < V; e++)
                    o[e] = acc.a[e];
            }
        }
        __syncthreads();
    }
}

// y[n, c] = inv * the sum over chunks of sums[n, chunk, c]
template <typename T>
__global__ void gap_finish_kernel(const float *__restrict__ sums, T *__restrict__ y, int n_, int c,
                                  int chunks, float inv)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_ * c; i += gridDim.x * blockDim.x) {
        const int n = i / c, ch = i - n * c;
        const float *q = sums + (size_t)n * chunks * c + ch;
        float a = 0.f;
        for (int z = 0; z < chunks; z++)
            a += q[(size_t)z * c];
        y[i] = fromf<T>(a * inv);
    }
}

// Global average pooling, channels first: one warp per (n, c) row of H*W contiguous
// elements, V-element vectors across the lanes, a shuffle reduction.
template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
        gap_nchw_kernel(const T *__restrict__ x, T *__restrict__ y, int rows, int hw, float inv)
{
    int lane = threadIdx.x & 31;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int nwarps = (gridDim.x * blockDim.x) >> 5;
    for (int r = warp; r < rows; r += nwarps) {
        const T *xr = x + (size_t)r * hw;
        SumAcc<T, V> acc;
        acc.init();
        for (int p = lane * V; p < hw; p += 32 * V)
            acc.add(ldv<T, V>(xr + p));
        float s = 0.f;
#pragma unroll
        for (int e = 0; e < V; e++)
            s += acc.a[e];
        s = warp_sum(s);
        if (lane == 0)
            y[r] = fromf<T>(s * inv);
    }
}

// Global average pooling, channels first, short rows (H*W <= kGapSmallHW, 7x7 heads): a
// warp a row would leave most lanes idle and read 196-byte pieces; instead a block stages
// `per` whole rows, per * H*W contiguous elements, in shared memory with 16-byte loads
// (stage_flat), then each of `per` threads sums one row there. Scalar staging loads held a
// 7x7 f32 head at 45% of the copy bandwidth (bench_kernels, 2026-12-02).
const int kGapSmallHW = 64;
const int kGapMaxChunks = 32; // channels-last: H*W chunks a sample at most
const int kGapSmallBytes = 32768;
template <typename T> __host__ __device__ constexpr int gap_small_rows(int hw)
{
    return stage_elems<T>(kGapSmallBytes) / hw < kThreads ? stage_elems<T>(kGapSmallBytes) / hw
                                                          : kThreads;
}
template <typename T>
__global__ void __launch_bounds__(kThreads)
        gap_nchw_small_kernel(const T *__restrict__ x, T *__restrict__ y, int rows, int hw,
                              float inv)
{
    __shared__ __align__(16) unsigned char raw[kGapSmallBytes];
    T *stage = reinterpret_cast<T *>(raw);
    const int per = gap_small_rows<T>(hw);
    for (int r0 = blockIdx.x * per; r0 < rows; r0 += gridDim.x * per) {
        const int nrows = min(per, rows - r0);
        const int off = stage_flat(stage, x + (size_t)r0 * hw, nrows * hw);
        __syncthreads();
        if ((int)threadIdx.x < nrows) {
            const T *row = stage + off + threadIdx.x * hw;
            float s = 0.f;
            for (int k = 0; k < hw; k++)
                s += tof(row[k]);
            y[r0 + threadIdx.x] = fromf<T>(s * inv);
        }
        __syncthreads();
    }
}

__global__ void gap_strided_kernel(const void *x, void *y, int dt, nnop__kview xv, nnop__kview yv)
{
    int64_t total = xv.n * xv.c;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = i % xv.c, n = i / xv.c;
        float acc = 0.f;
        for (int64_t h = 0; h < xv.h; h++)
            for (int64_t w = 0; w < xv.w; w++)
                acc += ld(x, dt, n * xv.sn + c * xv.sc + h * xv.sh + w * xv.sw);
        st(y, dt, n * yv.sn + c * yv.sc, acc / (float)(xv.h * xv.w));
    }
}

// Online softmax state: running max m (NaN-ignoring, as the reference's max) and the sum s of
// exp(x - m); -inf inputs add nothing (exp(-inf - m) is 0 once m is known).
__device__ __forceinline__ void sm_push(float &m, float &s, float v)
{
    float mn = fmaxf(m, v);
    s = s * (mn == m ? 1.f : expf(m - mn)) + (v == -INFINITY ? 0.f : expf(v - mn));
    m = mn;
}
// V values at once: their max first, so the running sum is rescaled once per vector (V + 1
// exponentials for V values instead of 2 V).
template <int V> __device__ __forceinline__ void sm_push_vec(float &m, float &s, const float *v)
{
    float mn = m, add = 0.f;
#pragma unroll
    for (int e = 0; e < V; e++)
        mn = fmaxf(mn, v[e]);
#pragma unroll
    for (int e = 0; e < V; e++)
        add += v[e] == -INFINITY ? 0.f : expf(v[e] - mn);
    s = s * (mn == m ? 1.f : expf(m - mn)) + add;
    m = mn;
}

// Softmax over rows of C contiguous elements (2-D, NHWC, or 1x1 spatial), rows of up to
// L * kSmK vectors: L lanes a row (32 / L rows a warp), the row in registers (one read, one
// write, exact max then sum as the reference). L is the fewest lanes that hold the row: a warp
// a row left a 1000-class f16 row at 4 loads a lane and 47% of the copy bandwidth
// (bench_kernels, 2026-12-02), and a 10-class row at 10 busy lanes of 32.
const int kSmK = 8;

// A 16-bit row: kept as loaded (packed, 4 registers a vector where floats took 8: 80
// registers a thread), every load issued before the first use, the exponentials by __expf
// (its error, a few 1e-6 relative, is far below 16-bit rounding) computed twice rather than
// kept. The float kernel's exact expf and float row held f16 x 1000 rows at 60% of the copy
// bandwidth, where f32 rows ran at 95%: twice the elements a byte. NaN and -inf as there: a
// NaN never wins the max and makes the sum NaN; -inf gives __expf(-inf) = 0.
template <typename T, int V, int L>
__device__ __forceinline__ void row_packed(const T *xr, T *yr, bool live, int lane, int cv)
{
    Vec<T, V> r[kSmK];
    float mx = -INFINITY, sum = 0.f;
#pragma unroll
    for (int k = 0; k < kSmK; k++)
        if (live && k * L + lane < cv)
            r[k] = ldv<T, V>(xr + (k * L + lane) * V);
#pragma unroll
    for (int k = 0; k < kSmK; k++)
        if (live && k * L + lane < cv)
#pragma unroll
            for (int e = 0; e < V; e++) {
                const float f = tof(r[k].v[e]);
                mx = f > mx ? f : mx;
            }
    for (int o = L / 2; o > 0; o >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
#pragma unroll
    for (int k = 0; k < kSmK; k++)
        if (live && k * L + lane < cv)
#pragma unroll
            for (int e = 0; e < V; e++)
                sum += __expf(tof(r[k].v[e]) - mx);
    for (int o = L / 2; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    const float inv = 1.f / sum;
#pragma unroll
    for (int k = 0; k < kSmK; k++)
        if (live && k * L + lane < cv) {
            Vec<T, V> a;
#pragma unroll
            for (int e = 0; e < V; e++)
                a.v[e] = fromf<T>(__expf(tof(r[k].v[e]) - mx) * inv);
            stv<T, V>(yr + (k * L + lane) * V, a);
        }
}

template <typename T, int V, int L>
__global__ void __launch_bounds__(kThreads)
        softmax_rows_kernel(const T *__restrict__ x, T *__restrict__ y, int rows, int c)
{
    constexpr int G = 32 / L; // rows a warp
    const int lane = threadIdx.x % L, sub = (threadIdx.x & 31) / L;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int nwarps = (gridDim.x * blockDim.x) >> 5;
    const int cv = c / V;
    // rb is the same in every lane of the warp, so all of them reach every shuffle
    for (int rb = warp * G; rb < rows; rb += nwarps * G) {
        const int r = rb + sub;
        const bool live = r < rows;
        const T *xr = x + (size_t)(live ? r : 0) * c;
        T *yr = y + (size_t)r * c;
        if (sizeof(T) == 2) {
            row_packed<T, V, L>(xr, yr, live, lane, cv);
            continue;
        }
        float v[kSmK][V];
        float mx = -INFINITY, sum = 0.f;
#pragma unroll
        for (int k = 0; k < kSmK; k++) {
            int j = k * L + lane;
            if (live && j < cv) {
                Vec<T, V> a = ldv<T, V>(xr + j * V);
#pragma unroll
                for (int e = 0; e < V; e++) {
                    v[k][e] = tof(a.v[e]);
                    mx = v[k][e] > mx ? v[k][e] : mx;
                }
            }
        }
        for (int o = L / 2; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
#pragma unroll
        for (int k = 0; k < kSmK; k++)
            if (live && k * L + lane < cv)
#pragma unroll
                for (int e = 0; e < V; e++) {
                    v[k][e] = expf(v[k][e] - mx);
                    sum += v[k][e];
                }
        for (int o = L / 2; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        const float inv = 1.f / sum; // one division a row, not one an element
#pragma unroll
        for (int k = 0; k < kSmK; k++) {
            int j = k * L + lane;
            if (live && j < cv) {
                Vec<T, V> a;
#pragma unroll
                for (int e = 0; e < V; e++)
                    a.v[e] = fromf<T>(v[k][e] * inv);
                stv<T, V>(yr + j * V, a);
            }
        }
    }
}

// Rows longer than 32 * kSmK vectors: a block a row. The first kLongK * kLongThreads vectors
// stay in registers as loaded (16-bit stays packed), read once: their exact max, then the sum
// of exponentials, then the outputs, as row_packed does (sm_exp: __expf for 16-bit types); any
// vectors beyond are read twice, summed online. The online sum over the registers too (two
// exact expf an element) held f16 x 32000 rows at 57% of the copy bandwidth (bench_kernels
// 2026-12-03); a warp a row with two reads of every element at 31%.
constexpr int kLongThreads = 512, kLongK = 8;
// exp for softmax: __expf for 16-bit outputs, whose rounding is far above its error
template <typename T> __device__ __forceinline__ float sm_exp(float v)
{
    return sizeof(T) == 2 ? __expf(v) : expf(v);
}
template <typename T, int V>
__global__ void __launch_bounds__(kLongThreads)
        softmax_long_kernel(const T *__restrict__ x, T *__restrict__ y, int rows, int c)
{
    __shared__ float red[kLongThreads / 32];
    const int cv = c / V;
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + (size_t)r * c;
        T *yr = y + (size_t)r * c;
        Vec<T, V> keep[kLongK];
#pragma unroll
        for (int k = 0; k < kLongK; k++) {
            const int j = k * kLongThreads + threadIdx.x;
            if (j < cv)
                keep[k] = ldv<T, V>(xr + j * V);
        }
        // the tail beyond the registers, online: its max mt and sum st relative to it
        float mt = -INFINITY, st = 0.f, mx = -INFINITY;
        for (int j = kLongK * kLongThreads + threadIdx.x; j < cv; j += kLongThreads) {
            Vec<T, V> a = ldv<T, V>(xr + j * V);
            float f[V];
#pragma unroll
            for (int e = 0; e < V; e++)
                f[e] = tof(a.v[e]);
            sm_push_vec<V>(mt, st, f);
        }
#pragma unroll
        for (int k = 0; k < kLongK; k++)
            if (k * kLongThreads + (int)threadIdx.x < cv)
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const float f = tof(keep[k].v[e]);
                    mx = f > mx ? f : mx;
                }
        mx = block_max(mt > mx ? mt : mx, red);
        // an empty or all -inf tail adds nothing (not 0 * NaN where the whole row is -inf); a
        // NaN in it makes st NaN
        float sum = st == 0.f ? 0.f : st * expf(mt - mx);
#pragma unroll
        for (int k = 0; k < kLongK; k++)
            if (k * kLongThreads + (int)threadIdx.x < cv)
#pragma unroll
                for (int e = 0; e < V; e++)
                    sum += sm_exp<T>(tof(keep[k].v[e]) - mx);
        const float inv = 1.f / block_sum(sum, red);
#pragma unroll
        for (int k = 0; k < kLongK; k++) {
            const int j = k * kLongThreads + threadIdx.x;
            if (j < cv) {
                Vec<T, V> a;
#pragma unroll
                for (int e = 0; e < V; e++)
                    a.v[e] = fromf<T>(sm_exp<T>(tof(keep[k].v[e]) - mx) * inv);
                stv<T, V>(yr + j * V, a);
            }
        }
        for (int j = kLongK * kLongThreads + threadIdx.x; j < cv; j += kLongThreads) {
            Vec<T, V> a = ldv<T, V>(xr + j * V);
#pragma unroll
            for (int e = 0; e < V; e++)
                a.v[e] = fromf<T>(sm_exp<T>(tof(a.v[e]) - mx) * inv);
            stv<T, V>(yr + j * V, a);
        }
    }
}

// Softmax over C of channels-first 4-D tensors (C strided by H*W): one thread per (n, h, w),
// so consecutive threads read consecutive addresses at every channel.
template <typename T>
__global__ void __launch_bounds__(kThreads)
        softmax_cstrided_kernel(const T *__restrict__ x, T *__restrict__ y, int n_, int c, int hw)
{
    const int total = n_ * hw;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        int n = i / hw, p = i - n * hw;
        size_t base = (size_t)n * c * hw + p;
        float m = -INFINITY, s = 0.f;
        for (int k = 0; k < c; k++)
            sm_push(m, s, tof(x[base + (size_t)k * hw]));
        for (int k = 0; k < c; k++)
            y[base + (size_t)k * hw] = fromf<T>(expf(tof(x[base + (size_t)k * hw]) - m) / s);
    }
}

// The same for C <= kSmRegC (24: VOC 21, Cityscapes 19 classes; 32 spilled for bf16): a thread owns
// V consecutive positions (one 8-byte load a channel, a warp 256 bytes of each channel row) and
// keeps the C loaded vectors in registers, so x is read once, with one reciprocal a position.
// What limits it is occupancy (3 blocks a SM; see the launch). For 16-bit outputs the
// exponentials take __expf, whose error is far below their rounding.
const int kSmRegC = 24;
template <typename T, int V>
__global__ void __launch_bounds__(kThreads, 3)
        softmax_cstrided_reg_kernel(const T *__restrict__ x, T *__restrict__ y, int n_, int c,
                                    int hw)
{
    const int hv = hw / V, total = n_ * hv;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        const int n = i / hv;
        const size_t at = (size_t)n * c * hw + (size_t)(i - n * hv) * V;
        Vec<T, V> r[kSmRegC];
        float m[V], s[V];
#pragma unroll
        for (int k = 0; k < kSmRegC; k++)
            if (k < c)
                r[k] = ldv<T, V>(x + at + (size_t)k * hw);
#pragma unroll
        for (int j = 0; j < V; j++)
            m[j] = -INFINITY, s[j] = 0.f;
#pragma unroll
        for (int k = 0; k < kSmRegC; k++)
            if (k < c)
#pragma unroll
                for (int j = 0; j < V; j++)
                    m[j] = fmaxf(m[j], tof(r[k].v[j]));
#pragma unroll
        for (int k = 0; k < kSmRegC; k++)
            if (k < c)
#pragma unroll
                for (int j = 0; j < V; j++) {
                    const float v = tof(r[k].v[j]);
                    s[j] += v == -INFINITY ? 0.f : sm_exp<T>(v - m[j]);
                }
#pragma unroll
        for (int j = 0; j < V; j++)
            s[j] = 1.f / s[j];
#pragma unroll
        for (int k = 0; k < kSmRegC; k++)
            if (k < c) {
                Vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = fromf<T>(sm_exp<T>(tof(r[k].v[j]) - m[j]) * s[j]);
                stv<T, V>(y + at + (size_t)k * hw, o);
            }
    }
}

__global__ void softmax_strided_kernel(const void *x, void *y, int dt, nnop__kview v)
{
    int64_t rows = v.n * v.h * v.w;
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        int64_t w = r % v.w, h = (r / v.w) % v.h, n = r / (v.w * v.h);
        int64_t base = n * v.sn + h * v.sh + w * v.sw;
        float m = -INFINITY, s = 0.f;
        for (int64_t c = 0; c < v.c; c++)
            sm_push(m, s, ld(x, dt, base + c * v.sc));
        for (int64_t c = 0; c < v.c; c++)
            st(y, dt, base + c * v.sc, expf(ld(x, dt, base + c * v.sc) - m) / s);
    }
}

// Flatten of a channels-last tensor: per image a [H*W][C] -> [C][H*W] transpose through a
// 64 x 64 shared tile (both the reads and the writes are row-contiguous). 64, not 32: each
// thread has 16 independent loads in flight before the barrier (a 32 x 32 tile of 16-bit
// elements moved 2 KB a block a round: 30% of the copy bandwidth, bench_kernels 2026-12-02).
// Rows padded so that a warp's column read hits 32 banks (1 word for 4-byte, 2 elements for
// 2-byte elements).
constexpr int kTile = 64;
template <typename T>
__global__ void __launch_bounds__(kThreads)
        transpose_kernel(const T *__restrict__ x, T *__restrict__ y, int n_, int hw, int c)
{
    __shared__ T tile[kTile][kTile + 4 / sizeof(T)];
    const int tiles_p = (hw + kTile - 1) / kTile, tiles_c = (c + kTile - 1) / kTile;
    const int total = n_ * tiles_p * tiles_c;
    for (int b = blockIdx.x; b < total; b += gridDim.x) {
        int tc = b % tiles_c, t = b / tiles_c;
        int tp = t % tiles_p, n = t / tiles_p;
        const T *xb = x + (size_t)n * hw * c;
        T *yb = y + (size_t)n * hw * c;
        int c0 = tc * kTile, p0 = tp * kTile;
#pragma unroll
        for (int r = threadIdx.y; r < kTile; r += kThreads / 32)
#pragma unroll
            for (int h = 0; h < kTile; h += 32) {
                int p = p0 + r, cc = c0 + h + threadIdx.x;
                if (p < hw && cc < c)
                    tile[r][h + threadIdx.x] = xb[(size_t)p * c + cc];
            }
        __syncthreads();
#pragma unroll
        for (int r = threadIdx.y; r < kTile; r += kThreads / 32)
#pragma unroll
            for (int h = 0; h < kTile; h += 32) {
                int cc = c0 + r, p = p0 + h + threadIdx.x;
                if (p < hw && cc < c)
                    yb[(size_t)cc * hw + p] = tile[h + threadIdx.x][r];
            }
        __syncthreads();
    }
}

// Flatten of a channels-last 16-bit tensor with C and H*W even (the pointers 4-byte aligned):
// 32-bit words both ways, channel pairs read and position pairs written, so a warp moves 128
// bytes an access (2-byte elements held 64: 65% of the copy bandwidth, bench_kernels
// 2026-12-03). Each thread reads the channel pair of two adjacent positions, so the 2x2 swap
// happens in registers (byte permutes) and the tile holds output words: [channel][position
// pair], the column XOR-swizzled by channel / 2 so that both the stores of channel pairs and
// the reads of position pairs hit 32 banks.
__global__ void __launch_bounds__(kThreads)
        transpose_pairs_kernel(const unsigned *__restrict__ x, unsigned *__restrict__ y, int n_,
                               int hw, int c)
{
    __shared__ unsigned tile[kTile][kTile / 2];
    const int tiles_p = (hw + kTile - 1) / kTile, tiles_c = (c + kTile - 1) / kTile;
    const int total = n_ * tiles_p * tiles_c, c2 = c / 2, hw2 = hw / 2;
    const int j = threadIdx.x; // read: channel pair; write: position pair
    for (int b = blockIdx.x; b < total; b += gridDim.x) {
        int tc = b % tiles_c, t = b / tiles_c;
        int tp = t % tiles_p, n = t / tiles_p;
        const unsigned *xb = x + (size_t)n * hw * c2;
        unsigned *yb = y + (size_t)n * hw2 * c;
        int c0 = tc * kTile, p0 = tp * kTile;
        // C and H*W even: a pair is inside the tensor whole or not at all
        unsigned lo[kTile / 16], hi[kTile / 16];
#pragma unroll
        for (int q = 0; q < kTile / 16; q++) {
            int p = p0 + 2 * (threadIdx.y + 8 * q), cc = c0 + 2 * j;
            unsigned a = 0, b2 = 0;
            if (p < hw && cc < c) {
                a = xb[p * c2 + cc / 2];
                b2 = xb[(p + 1) * c2 + cc / 2];
            }
            lo[q] = __byte_perm(a, b2, 0x5410); // channel cc at positions p, p + 1
            hi[q] = __byte_perm(a, b2, 0x7632); // channel cc + 1
        }
#pragma unroll
        for (int q = 0; q < kTile / 16; q++) {
            int k = threadIdx.y + 8 * q;
            tile[2 * j][k ^ j] = lo[q];
            tile[2 * j + 1][k ^ j] = hi[q];
        }
        __syncthreads();
#pragma unroll
        for (int r = threadIdx.y; r < kTile; r += kThreads / 32) {
            int cc = c0 + r, p = p0 + 2 * j;
            if (p < hw && cc < c)
                yb[(size_t)cc * hw2 + p / 2] = tile[r][j ^ (r >> 1)];
        }
        __syncthreads();
    }
}

__global__ void flatten_strided_kernel(const void *x, void *y, int dt, nnop__kview v)
{
    int64_t total = v.n * v.c * v.h * v.w;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t w = i % v.w, h = (i / v.w) % v.h, c = (i / (v.w * v.h)) % v.c;
        int64_t n = i / (v.w * v.h * v.c);
        st(y, dt, i, ld(x, dt, n * v.sn + c * v.sc + h * v.sh + w * v.sw));
    }
}

// V elements of an operand of dtype dt at element i (vector loads; alignment checked by the
// launcher).
template <int V> __device__ __forceinline__ void ld_any(const void *p, int dt, int i, float *o)
{
    if (dt == 0) {
        Vec<float, V> a = ldv<float, V>(static_cast<const float *>(p) + i);
#pragma unroll
        for (int e = 0; e < V; e++)
            o[e] = a.v[e];
    } else if (dt == 1) {
        Vec<__half, V> a = ldv<__half, V>(static_cast<const __half *>(p) + i);
#pragma unroll
        for (int e = 0; e < V; e++)
            o[e] = tof(a.v[e]);
    } else {
        Vec<__nv_bfloat16, V> a = ldv<__nv_bfloat16, V>(static_cast<const __nv_bfloat16 *>(p) + i);
#pragma unroll
        for (int e = 0; e < V; e++)
            o[e] = tof(a.v[e]);
    }
}

// The channels of a vector's V elements. CM 0: any (V stepped channels, ch[]); 1: V
// consecutive channels from c0 (channels contiguous, C a multiple of V); 2: all c0 (the channel
// stride a multiple of V). The last two hold no array, which keeps the kernel's registers
// down (more loads in flight).
template <int V, int CM> struct Chans {
    int c0;
    int ch[CM == 0 ? V : 1];
    __device__ __forceinline__ int operator[](int e) const
    {
        return CM == 1 ? c0 + e : CM == 2 ? c0 : ch[e];
    }
};

// V per-channel operands at channels ch[] (one dtype switch for all of them).
template <int V, typename CH>
__device__ __forceinline__ void ld_chan(const void *p, int dt, const CH &ch, float *o)
{
    if (dt == 0) {
#pragma unroll
        for (int e = 0; e < V; e++)
            o[e] = static_cast<const float *>(p)[ch[e]];
    } else if (dt == 1) {
#pragma unroll
        for (int e = 0; e < V; e++)
            o[e] = __half2float(static_cast<const __half *>(p)[ch[e]]);
    } else {
#pragma unroll
        for (int e = 0; e < V; e++)
            o[e] = __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[ch[e]]);
    }
}

// The pointwise chain, V elements per thread (V = 16 bytes of x, or 1), 32-bit indices; the
// channel of each element follows from (i / cstride) % C, stepped without divisions (CM 0), or
// is known for the whole vector (CM 1, 2: see Chans; broadcast operands then index one sample).
template <typename TX, typename TY, int V, int CM>
__global__ void __launch_bounds__(kThreads) epilogue_vec_kernel(nnop__epi_params p)
{
    const int nv = (int)(p.count / V), cstride = (int)p.cstride, C = (int)p.C;
    const TX *x = static_cast<const TX *>(p.x);
    TY *y = static_cast<TY *>(p.y);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += gridDim.x * blockDim.x) {
        int e0 = i * V;
        int q = e0 / cstride, rem = e0 - q * cstride;
        Chans<V, CM> ch;
        ch.c0 = q % C;
        if (CM == 0) {
            int c = ch.c0;
#pragma unroll
            for (int e = 0; e < V; e++) {
                ch.ch[e] = c;
                if (++rem == cstride) {
                    rem = 0;
                    if (++c == C)
                        c = 0;
                }
            }
        }
        // a leading residual add's operand of x's dtype is loaded beside x, both loads in
        // flight at once, kept packed (in the op loop it waited for x: add + bias + ReLU ran
        // at 68% of a copy's bandwidth)
        const bool add_first = p.n_ops > 0 && p.ops[0].kind == NNOP_EPI_ADD &&
                               p.ops[0].dtype == (sizeof(TX) == 4                   ? 0
                                                  : std::is_same<TX, __half>::value ? 1
                                                                                    : 2);
        float v[V];
        Vec<TX, V> a = ldv<TX, V>(x + e0), r0;
        if (add_first)
            r0 = ldv<TX, V>(static_cast<const TX *>(p.ops[0].p[0]) + e0);
#pragma unroll
        for (int e = 0; e < V; e++)
            v[e] = tof(a.v[e]);
        for (int k = 0; k < p.n_ops; k++) {
            const nnop__epi_op &o = p.ops[k];
            float z[V];
            switch (o.kind) {
            case NNOP_EPI_ADD:
                if (k == 0 && add_first) {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        z[e] = tof(r0.v[e]);
                } else {
                    ld_any<V>(o.p[0], o.dtype, e0, z);
                }
#pragma unroll
                for (int e = 0; e < V; e++)
                    v[e] += z[e];
                break;
            case NNOP_EPI_BIAS:
                ld_chan<V>(o.p[0], o.dtype, ch, z);
#pragma unroll
                for (int e = 0; e < V; e++)
                    v[e] += z[e];
                break;
            case NNOP_EPI_ACT:
                act_out<float, V>(o, v); // exact functions: float and 16-bit outputs
                break;
            case NNOP_EPI_SCALE_SHIFT: {
                float t[V];
                ld_chan<V>(o.p[0], o.dtype, ch, z);
                ld_chan<V>(o.p[1], o.dtype, ch, t);
#pragma unroll
                for (int e = 0; e < V; e++)
                    v[e] = v[e] * z[e] + t[e];
                break;
            }
            case NNOP_EPI_MUL:
            case NNOP_EPI_SUB:
            case NNOP_EPI_DIV:
                if (o.bmode == NNOP_BCAST_NONE) {
                    ld_any<V>(o.p[0], o.dtype, e0, z);
                } else if (CM != 0) {
                    // the sample stride is a multiple of V: one sample for the whole vector
                    const int64_t nb =
                            o.bmode == NNOP_BCAST_SAMPLE ? (int64_t)(e0 / (int)o.xsn) * o.bsn : 0;
#pragma unroll
                    for (int e = 0; e < V; e++)
                        z[e] = ld(o.p[0], o.dtype, nb + ch[e] * o.bsc);
                } else {
                    // the sample of element e0 + e: one 32-bit division a vector, then steps
                    // (not a 64-bit division an element)
                    const int xsn = (int)o.xsn, q0 = e0 / xsn;
                    int r = e0 - q0 * xsn, q = q0;
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const int64_t nb = o.bmode == NNOP_BCAST_SAMPLE ? q * o.bsn : 0;
                        z[e] = ld(o.p[0], o.dtype, nb + ch[e] * o.bsc);
                        for (++r; r >= xsn; r -= xsn)
                            q++;
                    }
                }
#pragma unroll
                for (int e = 0; e < V; e++)
                    v[e] = binary(o.kind, v[e], z[e]);
                break;
            case NNOP_EPI_BN: { // gamma, beta, mean, var: as epi_op
                float beta[V], mean[V], var[V];
                ld_chan<V>(o.p[0], o.dtype, ch, z);
                ld_chan<V>(o.p[1], o.dtype, ch, beta);
                ld_chan<V>(o.p[2], o.dtype, ch, mean);
                ld_chan<V>(o.p[3], o.dtype, ch, var);
#pragma unroll
                for (int e = 0; e < V; e++) {
                    float sc = z[e] / sqrtf(var[e] + o.eps);
                    v[e] = v[e] * sc + (beta[e] - mean[e] * sc);
                }
                break;
            }
            default:
                break;
            }
        }
        Vec<TY, V> b;
#pragma unroll
        for (int e = 0; e < V; e++)
            b.v[e] = fromf<TY>(v[e]);
        stv<TY, V>(y + e0, b);
    }
}

// One-op chains of the big passes, lean: an activation (A >= 1: the act split off a conv,
// SiLU, GELU, hard-swish), or (A == 0) a multiply by an N,C,1,1 or 1,C,1,1 operand over
// packed channels-last x (the squeeze-excitation multiply). U vectors of V elements a thread,
// all U loads issued before any math, few registers: the general vector kernel (59
// registers, one vector a thread, about 2 MB in flight on the GPU) ran these at 50-57% of the
// copy bandwidth at batch 32 (issue 12).
template <typename T, int A, int U>
__global__ void __launch_bounds__(kThreads)
        epilogue_one_kernel(const T *__restrict__ x, T *__restrict__ y, int nv, int C,
                            nnop__epi_op o)
{
    constexpr int V = 16 / sizeof(T);
    const int stride = gridDim.x * blockDim.x;
    for (int i0 = blockIdx.x * blockDim.x + threadIdx.x; i0 < nv; i0 += stride * U) {
        Vec<T, V> a[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (i0 + u * stride < nv)
                a[u] = ldv<T, V>(x + (size_t)(i0 + u * stride) * V);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int i = i0 + u * stride;
            if (i >= nv)
                break;
            Vec<T, V> b;
            if (A > 0) {
#pragma unroll
                for (int e = 0; e < V; e++)
                    b.v[e] = fromf<T>(act_k<A>(o, tof(a[u].v[e])));
            } else {
                const int e0 = i * V, c0 = e0 % C;
                const int64_t nb =
                        o.bmode == NNOP_BCAST_SAMPLE ? (int64_t)(e0 / (int)o.xsn) * o.bsn : 0;
#pragma unroll
                for (int e = 0; e < V; e++)
                    b.v[e] = fromf<T>(tof(a[u].v[e]) * ld(o.p[0], o.dtype, nb + (c0 + e) * o.bsc));
            }
            stv<T, V>(y + (size_t)i * V, b);
        }
    }
}

// 64-bit scalar chain for any count (and the tail that the vector kernel leaves).
__global__ void epilogue_kernel(nnop__epi_params p, int64_t first)
{
    for (int64_t i = first + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < p.count;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = (i / p.cstride) % p.C;
        float v = ld(p.x, p.x_dtype, i);
        for (int k = 0; k < p.n_ops; k++)
            v = epi_op(p.ops[k], v, i, c);
        st(p.y, p.y_dtype, i, v);
    }
}

template <typename T>
__global__ void pad_channels_kernel(const T *x, T *y, int64_t pixels, int cin, int cout)
{
    int64_t total = pixels * cout;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t p = i / cout;
        int c = (int)(i % cout);
        y[i] = c < cin ? x[p * cin + c] : T(0);
    }
}

// The stem's case, one thread per pixel: three 2-byte channels in, one 8-byte store out (the
// 8-pixel, 16-byte-access variant measured no faster on H200: 75.5 vs 73.5 us for the stem).
__global__ void pad_3to4_u16_kernel(const unsigned short *x, uint2 *y, int64_t pixels)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < pixels;
         p += (int64_t)gridDim.x * blockDim.x) {
        const unsigned short *q = x + 3 * p;
        y[p] = make_uint2((unsigned)q[0] | ((unsigned)q[1] << 16), (unsigned)q[2]);
    }
}

__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_kernel(long long ns)
{
    unsigned long long end = global_ns() + (unsigned long long)ns;
    while (global_ns() < end)
        __nanosleep(1000);
}

unsigned blocks_for(int64_t work)
{
    int64_t b = (work + kThreads - 1) / kThreads;
    if (b < 1)
        b = 1;
    return (unsigned)(b < kMaxBlocks ? b : kMaxBlocks);
}

int64_t elems(const nnop__kview &v)
{
    return v.n * v.c * v.h * v.w;
}

// Packed layouts by their strides; a dim of extent 1 may carry any stride.
bool packed_nhwc(const nnop__kview &v)
{
    return (v.c == 1 || v.sc == 1) && (v.w == 1 || v.sw == v.c) &&
           (v.h == 1 || v.sh == v.w * v.c) && (v.n == 1 || v.sn == v.h * v.w * v.c);
}

bool packed_nchw(const nnop__kview &v)
{
    return (v.w == 1 || v.sw == 1) && (v.h == 1 || v.sh == v.w) &&
           (v.c == 1 || v.sc == v.h * v.w) && (v.n == 1 || v.sn == v.c * v.h * v.w);
}

template <typename T, int V, bool MAX>
void pool_nhwc(const nnop__pool_kparams *p, const PoolGeo &g, unsigned b, cudaStream_t s)
{
    const T *x = static_cast<const T *>(p->x);
    T *y = static_cast<T *>(p->y);
    if (g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && V > 1) {
        int64_t work = (int64_t)g.n * ((g.oh + kS1Rows - 1) / kS1Rows) * g.ow * (g.c / V);
        pool_nhwc_s1_kernel<T, V, MAX><<<blocks_for(work), kThreads, 0, s>>>(x, y, g);
    } else if (g.kh == 3 && g.kw == 3)
        pool_nhwc_kernel<T, V, MAX, 3, 3><<<b, kThreads, 0, s>>>(x, y, g);
    else
        pool_nhwc_kernel<T, V, MAX, 0, 0><<<b, kThreads, 0, s>>>(x, y, g);
}

// The band of pool_band_kernel for planes of row_in elements an input row: *ob output rows a
// band, as many as the staging buffer holds, fewer where that leaves under 4 blocks a SM;
// *pp whole planes a block where one band covers a plane and several fit (7x7 maps). False:
// not even one band fits.
template <typename T>
bool band_shape(const PoolGeo &g, int64_t planes, int64_t row_in, int *ob, int *pp)
{
    const int64_t cap = stage_elems<T>(kBandBytes), want = 4 * 132;
    if ((int64_t)g.kh * row_in > cap)
        return false;
    int64_t rows = (cap / row_in - g.kh) / g.sh + 1, group = 1;
    if (rows >= g.oh) {
        rows = g.oh;
        int64_t fit = cap / ((int64_t)g.h * row_in), spread = planes / want;
        group = fit < spread ? fit : spread;
    } else if (planes * ((g.oh + rows - 1) / rows) < want) {
        int64_t bands = (want + planes - 1) / planes, fewer = (g.oh + bands - 1) / bands;
        rows = fewer < rows ? fewer : rows;
    }
    *ob = (int)(rows < 1 ? 1 : rows);
    *pp = (int)(group < 1 ? 1 : group);
    return true;
}

// pool_band_kernel, true; false where a band does not fit.
template <typename T, bool MAX, bool CL>
bool pool_band(const nnop__pool_kparams *p, const PoolGeo &g, cudaStream_t s)
{
    const int64_t planes = CL ? g.n : (int64_t)g.n * g.c, row_in = (int64_t)g.w * (CL ? g.c : 1);
    int ob, pp;
    if (!band_shape<T>(g, planes, row_in, &ob, &pp))
        return false;
    const int64_t blocks = (planes + pp - 1) / pp * ((g.oh + ob - 1) / ob);
    const unsigned b = (unsigned)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
    const T *x = static_cast<const T *>(p->x);
    T *y = static_cast<T *>(p->y);
    const int np = (int)planes;
    if (g.kh == 3 && g.kw == 3)
        pool_band_kernel<T, MAX, CL, 3, 3><<<b, kThreads, 0, s>>>(x, y, g, np, ob, pp);
    else if (g.kh == 2 && g.kw == 2)
        pool_band_kernel<T, MAX, CL, 2, 2><<<b, kThreads, 0, s>>>(x, y, g, np, ob, pp);
    else
        pool_band_kernel<T, MAX, CL, 0, 0><<<b, kThreads, 0, s>>>(x, y, g, np, ob, pp);
    return true;
}

// pool_rows_kernel, true; false where it does not apply (see there). g: planes of one channel
// (pool_nchw's; a packed C = 1 tensor is NCHW, layout_of). The kernel takes CIN = 3 as well (it
// passed gpu.pool's C = 3 cases) but is not dispatched for it: the 256 x 3 x 224 x 224 f16 pool
// took 39.3 us on it against 37.4 and 44.0 us on the separable kernel's runs of 4 pixels in two
// other runs (bench_kernels 2026-12-04), a spread wider than the difference; unsettled.
template <typename T> bool pool_rows(const nnop__pool_kparams *p, const PoolGeo &g, cudaStream_t s)
{
    const bool k3 = g.kh == 3 && g.kw == 3 && g.ph == 1 && g.pw == 1;
    const bool k2 = g.kh == 2 && g.kw == 2 && g.ph == 0 && g.pw == 0;
    if (g.c != 1 || g.w % 16 != 0 || g.ow * 2 != g.w || g.sh != 2 || g.sw != 2 || !(k3 || k2) ||
        !aligned(p->x, 16) || !aligned(p->y, 16))
        return false;
    const unsigned b = blocks_for((int64_t)g.n * g.oh * (g.w / 16));
    const T *x = static_cast<const T *>(p->x);
    T *y = static_cast<T *>(p->y);
    if (k3)
        pool_rows_kernel<T, 3, 1><<<b, kThreads, 0, s>>>(x, y, g);
    else
        pool_rows_kernel<T, 2, 1><<<b, kThreads, 0, s>>>(x, y, g);
    return true;
}

// pool_sep_kernel, true; false where it does not apply: x 16-byte aligned and its rows whole
// vectors (W * C a multiple of 16 bytes), one row fitting the buffer. ob output rows a band:
// about two vectors of rows a thread, fewer where that leaves under 4 blocks a SM.
template <typename T> bool pool_sep(const nnop__pool_kparams *p, const PoolGeo &g, cudaStream_t s)
{
    const int V = 16 / (int)sizeof(T);
    const int64_t row_in = (int64_t)g.w * g.c, cap = kSepBytes / (int)sizeof(T) / row_in;
    if (!aligned(p->x, 16) || row_in % V != 0 || cap < 1)
        return false;
    int64_t ob = 2 * kThreads / (row_in / V), want = 4 * 132;
    ob = ob < 1 ? 1 : ob > cap ? cap : ob;
    ob = ob < g.oh ? ob : g.oh;
    if (g.n * ((g.oh + ob - 1) / ob) < want) {
        int64_t bands = (want + g.n - 1) / g.n, fewer = (g.oh + bands - 1) / bands;
        ob = fewer < ob ? (fewer < 1 ? 1 : fewer) : ob;
    }
    const int64_t blocks = g.n * ((g.oh + ob - 1) / ob);
    const unsigned b = (unsigned)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
    const T *x = static_cast<const T *>(p->x);
    T *y = static_cast<T *>(p->y);
    if (g.kh == 3 && g.kw == 3 && g.sw == 2)
        pool_sep_kernel<T, 3, 3, 2><<<b, kThreads, 0, s>>>(x, y, g, (int)ob);
    else if (g.kh == 3 && g.kw == 3)
        pool_sep_kernel<T, 3, 3, 0><<<b, kThreads, 0, s>>>(x, y, g, (int)ob);
    else if (g.kh == 2 && g.kw == 2 && g.sw == 2)
        pool_sep_kernel<T, 2, 2, 2><<<b, kThreads, 0, s>>>(x, y, g, (int)ob);
    else
        pool_sep_kernel<T, 0, 0, 0><<<b, kThreads, 0, s>>>(x, y, g, (int)ob);
    return true;
}
template <> bool pool_sep<float>(const nnop__pool_kparams *, const PoolGeo &, cudaStream_t)
{
    return false; // float's max keeps the first of +0 and -0: the band kernel's order
}
template <> bool pool_rows<float>(const nnop__pool_kparams *, const PoolGeo &, cudaStream_t)
{
    return false; // as pool_sep<float>
}

template <typename T, bool MAX>
void pool_nchw(const nnop__pool_kparams *p, const PoolGeo &g, unsigned b, cudaStream_t s)
{
    const T *x = static_cast<const T *>(p->x);
    T *y = static_cast<T *>(p->y);
    // 16-bit max pooling: the rows kernel or the separable one, a plane (n, c) taken as a
    // sample of one channel (the band kernel's nine taps an output from shared memory held
    // NCHW f16 3x3/2 at 56% of the copy bandwidth, bench_kernels 2026-12-03)
    PoolGeo planes = g;
    planes.n = g.n * g.c;
    planes.c = 1;
    if (MAX && (pool_rows<T>(p, planes, s) || pool_sep<T>(p, planes, s)))
        return;
    if (pool_band<T, MAX, false>(p, g, s))
        return;
    if (g.kh == 3 && g.kw == 3)
        pool_nchw_kernel<T, MAX, 3, 3><<<b, kThreads, 0, s>>>(x, y, g);
    else
        pool_nchw_kernel<T, MAX, 0, 0><<<b, kThreads, 0, s>>>(x, y, g);
}

template <typename T> void pool_typed(const nnop__pool_kparams *p, int nhwc, cudaStream_t s)
{
    const nnop__kview &xv = p->xv, &yv = p->yv;
    const int V = 16 / (int)sizeof(T);
    PoolGeo g = {(int)xv.n,           (int)xv.c,         (int)xv.h,         (int)xv.w,
                 (int)yv.h,           (int)yv.w,         (int)p->window[0], (int)p->window[1],
                 (int)p->stride[0],   (int)p->stride[1], (int)p->pad[0],    (int)p->pad[1],
                 p->count_include_pad};
    if (nhwc) {
        bool vec = xv.c % V == 0 && aligned(p->x, 16) && aligned(p->y, 16);
        unsigned b = blocks_for(elems(yv) / (vec ? V : 1));
        if (vec)
            p->is_max ? pool_nhwc<T, V, true>(p, g, b, s) : pool_nhwc<T, V, false>(p, g, b, s);
        else if (p->is_max && xv.c < V && pool_sep<T>(p, g, s))
            return;
        else if (!(p->is_max ? pool_band<T, true, true>(p, g, s)
                             : pool_band<T, false, true>(p, g, s)))
            p->is_max ? pool_nhwc<T, 1, true>(p, g, b, s) : pool_nhwc<T, 1, false>(p, g, b, s);
    } else {
        unsigned b = blocks_for(elems(yv));
        p->is_max ? pool_nchw<T, true>(p, g, b, s) : pool_nchw<T, false>(p, g, b, s);
    }
}

// 0: channels last, 1: channels first, -1: neither (the strided kernel); both x and y.
int layout_of(const nnop__kview &x, const nnop__kview &y)
{
    bool nhwc = packed_nhwc(x) && packed_nhwc(y), nchw = packed_nchw(x) && packed_nchw(y);
    if (nhwc && (x.c > 1 || !nchw))
        return 0;
    return nchw ? 1 : -1;
}

// Chunks of H*W for a channels-last global average pool of n samples x cblocks blocks: enough
// blocks for 4 a SM (132 SMs), each thread still summing at least 4 positions, at most 32.
// The block shape of gap_nhwc_kernel for c channels, v a thread: tx threads across channel
// vectors, ty across positions.
void gap_nhwc_block(int64_t c, int v, int *tx, int *ty)
{
    const int64_t cv = c / v;
    *tx = cv < 32 ? (int)cv : 32;
    *ty = kThreads / *tx;
}

int gap_chunks(int64_t n, int64_t c, int64_t hw, int v)
{
    int tx, ty;
    gap_nhwc_block(c, v, &tx, &ty);
    const int64_t cblocks = (c / v + tx - 1) / tx;
    int64_t want = (4 * 132 + n * cblocks - 1) / (n * cblocks), most = hw / (4 * ty);
    if (want > most)
        want = most;
    return (int)(want < 1 ? 1 : (want > kGapMaxChunks ? kGapMaxChunks : want));
}

// to_sums (channels last only): every chunk's float sums into sums, none added (*chunks: how
// many), y unused.
template <typename T>
void gap_typed(const void *x, void *y, float *sums, const nnop__kview &xv, int nhwc, cudaStream_t s,
               bool to_sums = false, int *chunks_used = nullptr)
{
    const int V = 16 / (int)sizeof(T);
    int n = (int)xv.n, c = (int)xv.c, hw = (int)(xv.h * xv.w);
    float inv = 1.f / (float)(xv.h * xv.w);
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    if (nhwc) {
        bool vec = c % V == 0 && aligned(x, 16) && (to_sums || aligned(y, 16));
        int v = vec ? V : 1, cv = c / v, tx, ty;
        gap_nhwc_block(c, v, &tx, &ty);
        int chunks = sums ? gap_chunks(n, c, hw, v) : 1;
        if (chunks_used)
            *chunks_used = chunks;
        int chunk = (hw + chunks - 1) / chunks;
        dim3 block(tx, ty), grid((cv + tx - 1) / tx, n < 65535 ? n : 65535, chunks);
        size_t smem = (size_t)tx * ty * v * sizeof(float);
        if (vec)
            gap_nhwc_kernel<T, V>
                    <<<grid, block, smem, s>>>(xt, yt, sums, n, hw, c, chunk, inv, to_sums);
        else
            gap_nhwc_kernel<T, 1>
                    <<<grid, block, smem, s>>>(xt, yt, sums, n, hw, c, chunk, inv, to_sums);
        if (chunks > 1 && !to_sums)
            gap_finish_kernel<T>
                    <<<blocks_for((int64_t)n * c), kThreads, 0, s>>>(sums, yt, n, c, chunks, inv);
    } else if (hw <= kGapSmallHW) {
        int64_t per = gap_small_rows<T>(hw);
        int64_t groups = ((int64_t)n * c + per - 1) / per;
        unsigned b = (unsigned)(groups < kMaxBlocks ? groups : kMaxBlocks);
        gap_nchw_small_kernel<T><<<b, kThreads, 0, s>>>(xt, yt, n * c, hw, inv);
    } else {
        unsigned b = blocks_for((int64_t)n * c * 32);
        if (hw % V == 0 && aligned(x, 16))
            gap_nchw_kernel<T, V><<<b, kThreads, 0, s>>>(xt, yt, n * c, hw, inv);
        else
            gap_nchw_kernel<T, 1><<<b, kThreads, 0, s>>>(xt, yt, n * c, hw, inv);
    }
}

// Lanes a row for rows of cv vectors in registers: the fewest of 4, 8, 16, 32 that hold it
// (0: longer rows, a block each).
int softmax_lanes(int64_t cv)
{
    for (int l = 4; l <= 32; l *= 2)
        if (cv <= (int64_t)l * kSmK)
            return l;
    return 0;
}

template <typename T, int V> void softmax_rows(const T *x, T *y, int rows, int c, cudaStream_t s)
{
    const int lanes = softmax_lanes(c / V);
    const unsigned b = blocks_for((int64_t)rows * (lanes ? lanes : 32));
    if (lanes == 4)
        softmax_rows_kernel<T, V, 4><<<b, kThreads, 0, s>>>(x, y, rows, c);
    else if (lanes == 8)
        softmax_rows_kernel<T, V, 8><<<b, kThreads, 0, s>>>(x, y, rows, c);
    else if (lanes == 16)
        softmax_rows_kernel<T, V, 16><<<b, kThreads, 0, s>>>(x, y, rows, c);
    else if (lanes == 32)
        softmax_rows_kernel<T, V, 32><<<b, kThreads, 0, s>>>(x, y, rows, c);
    else
        softmax_long_kernel<T, V>
                <<<(unsigned)(rows < kMaxBlocks ? rows : kMaxBlocks), kLongThreads, 0, s>>>(
                        x, y, rows, c);
}

template <typename T>
void softmax_typed(const void *x, void *y, const nnop__kview &v, int rows_contig, cudaStream_t s)
{
    const int V = 16 / (int)sizeof(T);
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    int n = (int)v.n, c = (int)v.c, hw = (int)(v.h * v.w);
    if (rows_contig) {
        if (c % V == 0 && aligned(x, 16) && aligned(y, 16))
            softmax_rows<T, V>(xt, yt, n * hw, c, s);
        else
            softmax_rows<T, 1>(xt, yt, n * hw, c, s);
    } else {
        // 8-byte vectors (4 of 16-bit, 2 floats), at most 85 registers a thread so that 3
        // blocks fit a SM: 16-byte vectors took 138 registers, one block a SM (12.5%
        // occupancy), and held C = 21 f16 at 40-45% of the copy; this 72% (ncu, bench_kernels
        // 2026-12-04: 8-byte with 2 blocks 62%, 4-byte with 4 blocks 67%)
        constexpr int VR = 8 / sizeof(T);
        if (c <= kSmRegC && hw % VR == 0 && aligned(x, 8) && aligned(y, 8))
            softmax_cstrided_reg_kernel<T, VR>
                    <<<blocks_for((int64_t)n * hw / VR), kThreads, 0, s>>>(xt, yt, n, c, hw);
        else
            softmax_cstrided_kernel<T>
                    <<<blocks_for((int64_t)n * hw), kThreads, 0, s>>>(xt, yt, n, c, hw);
    }
}

// The lean kernel for a one-op chain of x's dtype: an activation, or a multiply by a
// broadcast operand over packed channels-last x (one sample a vector); false otherwise.
template <typename T> bool epilogue_one(const nnop__epi_params *p, cudaStream_t s)
{
    constexpr int V = 16 / (int)sizeof(T), U = 4;
    const nnop__epi_op &o = p->ops[0];
    const int nv = (int)(p->count / V);
    const unsigned b = blocks_for(((int64_t)nv + U - 1) / U);
    const T *x = static_cast<const T *>(p->x);
    T *y = static_cast<T *>(p->y);
    const bool mul = o.kind == NNOP_EPI_MUL && o.bmode != NNOP_BCAST_NONE && p->cstride == 1 &&
                     p->C % V == 0 && o.xsn % V == 0;
    // below about 4 blocks a SM of U-vector threads the general kernel's one vector a thread
    // is faster (batch 1: a SiLU pass took 3.2-4.0 us here, 1.9 us there)
    if (p->n_ops != 1 || (o.kind != NNOP_EPI_ACT && !mul) || nv < U * 132 * 4 * kThreads)
        return false;
    switch (mul ? 0 : o.act) {
    case 0:
        epilogue_one_kernel<T, 0, U><<<b, kThreads, 0, s>>>(x, y, nv, (int)p->C, o);
        break;
#define NNOP_ACT_ONE_KERNEL(A)                                                                     \
    case A:                                                                                        \
        epilogue_one_kernel<T, A, U><<<b, kThreads, 0, s>>>(x, y, nv, (int)p->C, o);               \
        break;
        NNOP_ACT_KINDS(NNOP_ACT_ONE_KERNEL)
#undef NNOP_ACT_ONE_KERNEL
    default:
        return false;
    }
    if ((int64_t)nv * V < p->count)
        epilogue_kernel<<<1, kThreads, 0, s>>>(*p, (int64_t)nv * V);
    return true;
}

template <typename TX, typename TY> void epilogue_typed(const nnop__epi_params *p, cudaStream_t s)
{
    const int V = 16 / (int)sizeof(TX);
    int64_t nv = p->count / V;
    if (epilogue_one<TX>(p, s))
        return;
    bool one_sample = true; /* every broadcast operand's sample constant over a vector */
    for (int k = 0; k < p->n_ops; k++)
        if (p->ops[k].kind >= NNOP_EPI_MUL && p->ops[k].bmode != NNOP_BCAST_NONE)
            one_sample = one_sample && p->ops[k].xsn % V == 0;
    if (!one_sample)
        epilogue_vec_kernel<TX, TY, V, 0><<<blocks_for(nv), kThreads, 0, s>>>(*p);
    else if (p->cstride == 1 && p->C % V == 0)
        epilogue_vec_kernel<TX, TY, V, 1><<<blocks_for(nv), kThreads, 0, s>>>(*p);
    else if (p->cstride % V == 0)
        epilogue_vec_kernel<TX, TY, V, 2><<<blocks_for(nv), kThreads, 0, s>>>(*p);
    else
        epilogue_vec_kernel<TX, TY, V, 0><<<blocks_for(nv), kThreads, 0, s>>>(*p);
    if (nv * V < p->count)
        epilogue_kernel<<<1, kThreads, 0, s>>>(*p, nv * V);
}

size_t dtype_size(int dt)
{
    return dt == 0 ? 4 : 2;
}

} // namespace

extern "C" cudaError_t nnop__k_epilogue(const nnop__epi_params *p, cudaStream_t s)
{
    const int V = 16 / (int)dtype_size(p->x_dtype);
    bool vec = p->x_dtype == p->y_dtype && p->count <= kMax32 && p->C <= INT32_MAX &&
               p->cstride <= INT32_MAX && p->C >= 1 && p->cstride >= 1 && aligned(p->x, 16) &&
               aligned(p->y, 16);
    for (int k = 0; k < p->n_ops && vec; k++)
        if (p->ops[k].kind == NNOP_EPI_ADD ||
            (p->ops[k].kind >= NNOP_EPI_MUL && p->ops[k].bmode == NNOP_BCAST_NONE))
            vec = aligned(p->ops[k].p[0], V * dtype_size(p->ops[k].dtype));
    if (!vec)
        epilogue_kernel<<<blocks_for(p->count), kThreads, 0, s>>>(*p, 0);
    else if (p->x_dtype == 0)
        epilogue_typed<float, float>(p, s);
    else if (p->x_dtype == 1)
        epilogue_typed<__half, __half>(p, s);
    else
        epilogue_typed<__nv_bfloat16, __nv_bfloat16>(p, s);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_pad_channels(const void *x, void *y, int elem_size, int64_t pixels,
                                            int cin, int cout, cudaStream_t s)
{
    unsigned b = blocks_for(pixels * cout);
    if (elem_size == 2 && cin == 3 && cout == 4) {
        pad_3to4_u16_kernel<<<blocks_for(pixels), kThreads, 0, s>>>(
                static_cast<const unsigned short *>(x), static_cast<uint2 *>(y), pixels);
        return cudaGetLastError();
    }
    if (elem_size == 2)
        pad_channels_kernel<unsigned short>
                <<<b, kThreads, 0, s>>>(static_cast<const unsigned short *>(x),
                                        static_cast<unsigned short *>(y), pixels, cin, cout);
    else
        pad_channels_kernel<float><<<b, kThreads, 0, s>>>(
                static_cast<const float *>(x), static_cast<float *>(y), pixels, cin, cout);
    return cudaGetLastError();
}

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

extern "C" cudaError_t nnop__k_spin(int64_t ns, cudaStream_t s)
{
    spin_kernel<<<1, 1, 0, s>>>((long long)ns);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_linear(const nnop__linear_kparams *p, cudaStream_t s)
{
    if (nnop__linear_gemv_fits(p))
        return nnop__k_linear_gemv(p, s);
    linear_kernel<<<blocks_for(p->n * p->out * 32), kThreads, 0, s>>>(*p);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_pool(const nnop__pool_kparams *p, cudaStream_t s)
{
    int lay = layout_of(p->xv, p->yv);
    bool small = elems(p->xv) <= kMax32 && elems(p->yv) <= kMax32;
    for (int i = 0; i < 2; i++) /* h0 = oh * stride - pad and h0 + window stay in int */
        small = small && p->window[i] <= (1 << 24) && p->stride[i] <= (1 << 24) &&
                p->pad[i] <= (1 << 24) && p->xv.h <= (1 << 24) && p->xv.w <= (1 << 24);
    if (lay < 0 || !small)
        pool_strided_kernel<<<blocks_for(elems(p->yv)), kThreads, 0, s>>>(*p);
    else if (p->dtype == 0)
        pool_typed<float>(p, lay == 0, s);
    else if (p->dtype == 1)
        pool_typed<__half>(p, lay == 0, s);
    else
        pool_typed<__nv_bfloat16>(p, lay == 0, s);
    return cudaGetLastError();
}

// The most chunks the channels-last pool may take for x (the launch takes V channels a thread
// when the pointers allow, else 1: room for either), or 0 where that kernel does not run.
static int gap_max_chunks(const nnop__kview &xv, int dtype)
{
    const int V = 16 / (int)dtype_size(dtype);
    const int64_t n = xv.n, c = xv.c, hw = xv.h * xv.w;
    int chunks;
    if (!packed_nhwc(xv) || c < 2 || elems(xv) > kMax32)
        return 0;
    chunks = gap_chunks(n, c, hw, 1);
    if (c % V == 0 && gap_chunks(n, c, hw, V) > chunks)
        chunks = gap_chunks(n, c, hw, V);
    return chunks;
}

extern "C" size_t nnop__gap_scratch_bytes(const nnop__kview *xv, int dtype)
{
    const int chunks = gap_max_chunks(*xv, dtype);
    return chunks > 1 ? (size_t)(xv->n * xv->c * chunks) * sizeof(float) : 0;
}

extern "C" size_t nnop__gap_sums_bytes(const nnop__kview *xv, int dtype)
{
    const int chunks = xv->n > 65535 ? 0 : gap_max_chunks(*xv, dtype);
    return (size_t)(xv->n * xv->c * chunks) * sizeof(float);
}

extern "C" cudaError_t nnop__k_gap_sums(const void *x, int dtype, const nnop__kview *xv,
                                        float *sums, int *chunks, cudaStream_t s)
{
    if (dtype == 0)
        gap_typed<float>(x, NULL, sums, *xv, 1, s, true, chunks);
    else if (dtype == 1)
        gap_typed<__half>(x, NULL, sums, *xv, 1, s, true, chunks);
    else
        gap_typed<__nv_bfloat16>(x, NULL, sums, *xv, 1, s, true, chunks);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_gap(const void *x, void *y, int dtype, const nnop__kview *xv,
                                   const nnop__kview *yv, float *sums, cudaStream_t s)
{
    /* y is [n, c] packed in either layout: y[n * C + c] */
    bool ypacked = (yv->n == 1 || yv->sn == xv->c) && (xv->c == 1 || yv->sc == 1);
    bool nhwc = packed_nhwc(*xv) && (xv->c > 1 || !packed_nchw(*xv));
    bool nchw = !nhwc && packed_nchw(*xv);
    if (!ypacked || !(nhwc || nchw) || elems(*xv) > kMax32)
        gap_strided_kernel<<<blocks_for(xv->n * xv->c), kThreads, 0, s>>>(x, y, dtype, *xv, *yv);
    else if (dtype == 0)
        gap_typed<float>(x, y, sums, *xv, nhwc, s);
    else if (dtype == 1)
        gap_typed<__half>(x, y, sums, *xv, nhwc, s);
    else
        gap_typed<__nv_bfloat16>(x, y, sums, *xv, nhwc, s);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_softmax(const void *x, void *y, int dtype, const nnop__kview *v,
                                       cudaStream_t s)
{
    bool rows = packed_nhwc(*v), cfirst = !rows && packed_nchw(*v);
    if (!(rows || cfirst) || elems(*v) > kMax32)
        softmax_strided_kernel<<<blocks_for(v->n * v->h * v->w), kThreads, 0, s>>>(x, y, dtype, *v);
    else if (dtype == 0)
        softmax_typed<float>(x, y, *v, rows, s);
    else if (dtype == 1)
        softmax_typed<__half>(x, y, *v, rows, s);
    else
        softmax_typed<__nv_bfloat16>(x, y, *v, rows, s);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__k_flatten(const void *x, void *y, int dtype, const nnop__kview *xv,
                                       cudaStream_t s)
{
    int64_t n = elems(*xv), hw = xv->h * xv->w;
    if (packed_nchw(*xv)) /* logical order is memory order: a copy */
        return cudaMemcpyAsync(y, x, (size_t)n * dtype_size(dtype), cudaMemcpyDeviceToDevice, s);
    if (packed_nhwc(*xv) && n <= kMax32) {
        int64_t tiles = xv->n * ((hw + kTile - 1) / kTile) * ((xv->c + kTile - 1) / kTile);
        unsigned b = (unsigned)(tiles < kMaxBlocks ? tiles : kMaxBlocks);
        dim3 block(32, kThreads / 32);
        if (dtype == 0)
            transpose_kernel<unsigned><<<b, block, 0, s>>>(static_cast<const unsigned *>(x),
                                                           static_cast<unsigned *>(y), (int)xv->n,
                                                           (int)hw, (int)xv->c);
        else if (xv->c % 2 == 0 && hw % 2 == 0 && aligned(x, 4) && aligned(y, 4))
            transpose_pairs_kernel<<<b, block, 0, s>>>(static_cast<const unsigned *>(x),
                                                       static_cast<unsigned *>(y), (int)xv->n,
                                                       (int)hw, (int)xv->c);
        else
            transpose_kernel<unsigned short><<<b, block, 0, s>>>(
                    static_cast<const unsigned short *>(x), static_cast<unsigned short *>(y),
                    (int)xv->n, (int)hw, (int)xv->c);
    } else {
        flatten_strided_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, dtype, *xv);
    }
    return cudaGetLastError();
}
