// pool.cu: max and average pooling, every dtype and layout: channels-last vectors (3x3
// stride 1 sliding down the rows), channels-first one output a thread, bands of rows
// staged in shared memory, the separable and rows kernels for 16-bit max pooling, a 64-bit
// strided kernel for the rest. Max pooling propagates NaN.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "cuda/kernels/memory_bound.cuh"

namespace
{

using nnop_k::aligned;
using nnop_k::blocks_for;
using nnop_k::elems;
using nnop_k::fromf;
using nnop_k::kMax32;
using nnop_k::kMaxBlocks;
using nnop_k::kThreads;
using nnop_k::ld;
using nnop_k::ldv;
using nnop_k::packed_nchw;
using nnop_k::packed_nhwc;
using nnop_k::splat;
using nnop_k::st;
using nnop_k::stage_elems;
using nnop_k::stage_flat;
using nnop_k::stv;
using nnop_k::SumAcc;
using nnop_k::tof;
using nnop_k::Vec;

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

// Any strides, 64-bit indices: tensors past the 32-bit kernels' reach, of mixed layouts, or
// padded more after than before (pad_end).
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
            int64_t hend = min(h0 + p.window[0], p.xv.h + p.pad[0] + p.pad_end[0]);
            int64_t wend = min(w0 + p.window[1], p.xv.w + p.pad[1] + p.pad_end[1]);
            count = (hend - h0) * (wend - w0);
        }
        if (!p.is_max)
            acc /= (float)count;
        st(p.y, p.dtype, n * p.yv.sn + c * p.yv.sc + oh * p.yv.sh + ow * p.yv.sw, acc);
    }
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

} // namespace

extern "C" cudaError_t nnop__k_pool(const nnop__pool_kparams *p, cudaStream_t s)
{
    int lay = layout_of(p->xv, p->yv);
    bool small = elems(p->xv) <= kMax32 && elems(p->yv) <= kMax32;
    for (int i = 0; i < 2; i++) /* h0 = oh * stride - pad and h0 + window stay in int */
        small = small && p->window[i] <= (1 << 24) && p->stride[i] <= (1 << 24) &&
                p->pad[i] <= (1 << 24) && p->xv.h <= (1 << 24) && p->xv.w <= (1 << 24);
    if (lay < 0 || !small || p->pad_end[0] || p->pad_end[1])
        pool_strided_kernel<<<blocks_for(elems(p->yv)), kThreads, 0, s>>>(*p);
    else if (p->dtype == 0)
        pool_typed<float>(p, lay == 0, s);
    else if (p->dtype == 1)
        pool_typed<__half>(p, lay == 0, s);
    else
        pool_typed<__nv_bfloat16>(p, lay == 0, s);
    return cudaGetLastError();
}
