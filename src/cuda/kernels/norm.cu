// norm.cu: inference normalizations with the statistics of the input itself (layer norm over
// C or over C, H, W; group norm; RMS norm over C), as the CPU reference computes them: mean,
// then the biased variance of the deviations (two passes, float accumulation), then
// (x - mean) * rsqrt(var + eps) * gamma + beta. The sums run over x - x0, x0 the box's first
// element (exact where x is within a factor 2 of it): a box of equal values normalizes to
// exactly beta, and a box of values close together keeps its digits (the differential tester
// found float cancellation there: 2e-4 off in f32 for three values 0.1 apart near -1.9).
// Per-position boxes over contiguous channels (channels-last) take one warp each, or, packed
// with C a multiple of 16 bytes' worth, G lanes each (G a power of two, up to 4 vectors of 16
// bytes a lane held in registers: one read of x, 32/G positions a warp); over strided channels
// (channels-first) one thread each, neighbouring threads on neighbouring pixels. Per-group boxes
// take one block each. Every path then runs the step's fused epilogue (p.ops: the pointwise
// chain after the norm, in its partition) on each value before the one store.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/device_util.cuh"
#include "cuda/kernels/epilogue.cuh"

namespace
{

constexpr int kThreads = 256;

using nnop_k::act_out;
using nnop_k::act_out_k;
using nnop_k::aligned;
using nnop_k::block_sum;
using nnop_k::elem;
using nnop_k::epi_op_inline;
using nnop_k::grid_for;
using nnop_k::ld;
using nnop_k::ldv;
using nnop_k::pack;
using nnop_k::st;
using nnop_k::stv;
using nnop_k::Vec;
using nnop_k::warp_sum;

// gamma (or beta) at channel c, row h, column w: 1-D of C or per element (dim 0 = 1).
__device__ __forceinline__ float param(const void *q, int dt, const nnop__kview &v, int per_el,
                                       int64_t c, int64_t h, int64_t w, float absent)
{
    if (!q)
        return absent;
    return ld(q, dt, per_el ? c * v.sc + h * v.sh + w * v.sw : c * v.sn);
}

__device__ __forceinline__ float affine(const nnop__norm_kparams &p, float v, int64_t c, int64_t h,
                                        int64_t w)
{
    return v * param(p.gamma, p.g_dtype, p.gv, p.g_per_element, c, h, w, 1.f) +
           param(p.beta, p.b_dtype, p.bv, p.b_per_element, c, h, w, 0.f);
}

// The fused epilogue on the V values u of y's elements i0.. (offsets: y has x's view),
// channels c0..: an activation's switch once for all V, every op inlined.
template <typename T, int V>
__device__ __forceinline__ void epilogue_vec(const nnop__norm_kparams &p, float *u, int64_t i0,
                                             int64_t c0)
{
    for (int k = 0; k < p.n_ops; k++) {
        const nnop__epi_op &o = p.ops[k];
        if (o.kind == NNOP_EPI_ACT) {
            act_out<T, V>(o, u);
        } else {
#pragma unroll
            for (int e = 0; e < V; e++)
                u[e] = epi_op_inline(o, u[e], i0 + e, c0 + e);
        }
    }
}

__device__ __forceinline__ float epilogue(const nnop__norm_kparams &p, float v, int64_t i,
                                          int64_t c)
{
    epilogue_vec<float, 1>(p, &v, i, c); // exact functions: the paths of every dtype
    return v;
}

// Offset into x of position pos (n, h, w with w fastest) of a per-position box; its h and w.
__device__ __forceinline__ int64_t position(const nnop__norm_kparams &p, int64_t pos, int64_t *h,
                                            int64_t *w)
{
    const int64_t wi = pos % p.xv.w, hi = (pos / p.xv.w) % p.xv.h, n = pos / (p.xv.w * p.xv.h);
    *h = hi, *w = wi;
    return n * p.xv.sn + hi * p.xv.sh + wi * p.xv.sw;
}

// Per position, channels contiguous (sc == 1): one warp per (n, h, w).
__global__ void __launch_bounds__(kThreads) norm_rows_warp_kernel(nnop__norm_kparams p)
{
    const int64_t positions = p.xv.n * p.xv.h * p.xv.w, C = p.xv.c;
    const int lane = threadIdx.x & 31;
    for (int64_t pos = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; pos < positions;
         pos += ((int64_t)gridDim.x * blockDim.x) >> 5) {
        int64_t h, w;
        const int64_t base = position(p, pos, &h, &w);
        const float x0 = p.rms ? 0.f : ld(p.x, p.dtype, base);
        float mean = 0.f, var = 0.f; // of x - x0
        if (!p.rms) {
            float s = 0.f;
            for (int64_t c = lane; c < C; c += 32)
                s += ld(p.x, p.dtype, base + c) - x0;
            mean = warp_sum(s) / (float)C;
        }
        for (int64_t c = lane; c < C; c += 32) {
            float d = (ld(p.x, p.dtype, base + c) - x0) - mean;
            var += d * d;
        }
        const float rstd = rsqrtf(warp_sum(var) / (float)C + p.eps);
        for (int64_t c = lane; c < C; c += 32)
            st(p.y, p.dtype, base + c,
               epilogue(p, affine(p, ((ld(p.x, p.dtype, base + c) - x0) - mean) * rstd, c, h, w),
                        base + c, c));
    }
}

// Sum over the G lanes of an aligned group of the warp (every lane of the warp takes part).
__device__ __forceinline__ float group_sum(float v, int G)
{
    for (int o = G / 2; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// V per-channel parameters from channel c0 at stride sn (absent: all a), one dtype switch.
template <int V>
__device__ __forceinline__ void chan_params(const void *q, int dt, int64_t sn, int c0, float a,
                                            float *out)
{
    if (!q) {
#pragma unroll
        for (int e = 0; e < V; e++)
            out[e] = a;
    } else if (dt == 0) {
#pragma unroll
        for (int e = 0; e < V; e++)
            out[e] = static_cast<const float *>(q)[(c0 + e) * sn];
    } else if (dt == 1) {
#pragma unroll
        for (int e = 0; e < V; e++)
            out[e] = __half2float(static_cast<const __half *>(q)[(c0 + e) * sn]);
    } else {
#pragma unroll
        for (int e = 0; e < V; e++)
            out[e] = __bfloat162float(static_cast<const __nv_bfloat16 *>(q)[(c0 + e) * sn]);
    }
}

constexpr int kNormVecR = 4; // vectors a lane at most

// Per position of packed channels-last x (and y), C = nv vectors of V: G lanes a position, lane
// l of the group holding vectors l, l + G, ... (at most R); 1-D gamma and beta (or none), as
// floats in shared memory: read per vector there, they had cost 16 scalar loads a vector (62%
// of copy bandwidth against 73% without them, H200). EPI: 0 no epilogue; A > 0 the epilogue is
// activation A alone; -1 any chain of p.ops. Why instances: the chain's code holds every
// activation's temporaries for V values at once, and the generic instance spilled under any
// launch bound (ncu, H100: 310k local-memory requests a launch; ReLU after the norm ran at 67%
// of copy bandwidth, GELU at 49%, against 80% for the norm alone). (kThreads, 4): 64 registers;
// the generic instance at 2 blocks a SM (128: at 3, 80 registers, ptxas spilled 380 bytes).
// bf16 x is widened word by word (elem) and y packed in pairs (pack): one value at a time,
// the bf16 instances spilled 16-60 bytes and the norm ran at 79% of copy bandwidth against
// f16's 85%; now only f16 hard-swish and hard-sigmoid spill, 4 bytes (ptxas -v, sm_90).
constexpr int kNormEpiBlocks = 2; // resident blocks a SM of the generic epilogue instance

constexpr int norm_blocks(int epi)
{
    return epi < 0 ? kNormEpiBlocks : 4;
}

// Lane sub's vectors of x at position pos (none where !live), as loaded.
template <typename T, int V, int R>
__device__ __forceinline__ void load_row(const T *__restrict__ x, int64_t pos, bool live, int64_t C,
                                         int nv, int sub, int G, Vec<T, V> *a)
{
#pragma unroll
    for (int r = 0; r < R; r++)
        if (live && sub + r * G < nv)
            a[r] = ldv<T, V>(x + pos * C + (sub + r * G) * V);
}

// The epilogue on the V values u of y's elements i0.. (channels c0..).
template <typename T, int V, int EPI>
__device__ __forceinline__ void norm_epilogue(const nnop__norm_kparams &p, float *u, int64_t i0,
                                              int64_t c0)
{
    if (EPI > 0) { // (EPI > 0 ? EPI : 1): no act_out_k of 0 or -1 is instantiated
#pragma unroll
        for (int e = 0; e < V; e++)
            u[e] = act_out_k<T, (EPI > 0 ? EPI : 1)>(p.ops[0], u[e]);
    } else if (EPI < 0) {
        epilogue_vec<T, V>(p, u, i0, c0);
    }
}

template <typename T, int V, int R, int EPI>
__global__ void __launch_bounds__(kThreads, norm_blocks(EPI))
        norm_rows_vec_kernel(nnop__norm_kparams p, int nv, int G)
{
    __shared__ __align__(16) float sg[32 * kNormVecR * 8], sb[32 * kNormVecR * 8];
    const int64_t positions = p.xv.n * p.xv.h * p.xv.w, C = p.xv.c;
    const int sub = threadIdx.x & (G - 1);
    const T *__restrict__ x = static_cast<const T *>(p.x);
    T *__restrict__ y = static_cast<T *>(p.y);
    const int64_t per_step = ((int64_t)gridDim.x * blockDim.x) / G;
    // the loop bound is tested on the warp's first position, so whole warps iterate together
    const int64_t first0 = (blockIdx.x * (int64_t)blockDim.x + (threadIdx.x & ~31)) / G;
    const int in_warp = (threadIdx.x & 31) / G;
    // x stays as loaded (16-bit values take half the registers of floats) and is widened at
    // each use. The first position's x is on its way before gamma and beta are staged, so that
    // the barrier waits while the loads fly (the f16 norm alone: 85% of copy bandwidth, from 80%,
    // H100)
    Vec<T, V> a[R];
    load_row<T, V, R>(x, first0 + in_warp, first0 + in_warp < positions, C, nv, sub, G, a);
    for (int c = threadIdx.x; c * V < C; c += blockDim.x) {
        chan_params<V>(p.gamma, p.g_dtype, p.gv.sn, c * V, 1.f, sg + c * V);
        chan_params<V>(p.beta, p.b_dtype, p.bv.sn, c * V, 0.f, sb + c * V);
    }
    __syncthreads();
    for (int64_t first = first0; first < positions; first += per_step) {
        const int64_t pos = first + in_warp;
        const bool live = pos < positions;
        // the next position's x is on its way while this one's is reduced and written (f16
        // layer norm + GELU: 72% -> 78% of copy bandwidth, the norm alone 85% -> 90%, H100)
        Vec<T, V> nx[R];
        load_row<T, V, R>(x, pos + per_step, pos + per_step < positions, C, nv, sub, G, nx);
        // x0, the box's first element, is element 0 of the group's first lane's first vector
        const float x0 = p.rms ? 0.f
                               : __shfl_sync(0xffffffffu, live ? elem(a[0], 0) : 0.f,
                                             (threadIdx.x & 31) & ~(G - 1));
        float s = 0.f;
#pragma unroll
        for (int r = 0; r < R; r++)
            if (live && sub + r * G < nv)
#pragma unroll
                for (int e = 0; e < V; e++)
                    s += elem(a[r], e) - x0;
        const float mean = p.rms ? 0.f : group_sum(s, G) / (float)C;
        float q = 0.f;
#pragma unroll
        for (int r = 0; r < R; r++)
            if (live && sub + r * G < nv)
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const float d = (elem(a[r], e) - x0) - mean;
                    q += d * d;
                }
        const float rstd = rsqrtf(group_sum(q, G) / (float)C + p.eps);
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int j = sub + r * G;
            if (!live || j >= nv)
                continue;
            float g[V], b[V];
#pragma unroll
            for (int e = 0; e < V; e += 4) {
                *reinterpret_cast<float4 *>(g + e) =
                        *reinterpret_cast<const float4 *>(sg + j * V + e);
                *reinterpret_cast<float4 *>(b + e) =
                        *reinterpret_cast<const float4 *>(sb + j * V + e);
            }
            float u[V];
#pragma unroll
            for (int e = 0; e < V; e++)
                u[e] = ((elem(a[r], e) - x0) - mean) * rstd * g[e] + b[e];
            norm_epilogue<T, V, EPI>(p, u, pos * C + j * V, j * V);
            stv<T, V>(y + pos * C + j * V, pack<T, V>(u));
        }
#pragma unroll
        for (int r = 0; r < R; r++)
            a[r] = nx[r];
    }
}

constexpr int64_t kNormVecWant = 132 * 2 * kThreads; // threads that fill the GPU

// The vector path's lanes a position for p's shape, or 0 where the shape rules it out; x and y
// must also be 16-byte aligned. V: elements in 16 bytes. The smallest group holding C in at
// most kNormVecR vectors a lane, widened (while every lane keeps a vector) until the positions
// fill the GPU: ConvNeXt-T's 56 x 56 x 96 at batch 1 ran 4 lanes a position on 49 blocks.
int norm_vec_lanes(const nnop__norm_kparams *p, int V)
{
    const nnop__kview &v = p->xv;
    if (!p->per_position || v.sc != 1 || v.sw != v.c || v.sh != v.w * v.c || v.sn != v.h * v.sh ||
        v.c % V != 0 || v.c > 32 * kNormVecR * V || p->g_per_element || p->b_per_element)
        return 0;
    const int nv = (int)(v.c / V);
    const int64_t positions = v.n * v.h * v.w;
    int G = 1;
    while (G * kNormVecR < nv)
        G *= 2;
    while (G < 32 && 2 * G <= nv && positions * G < kNormVecWant)
        G *= 2;
    return G;
}

// Where the vector path does not run: a warp a position over 32 or more contiguous
// channels, else a thread a position.
bool norm_rows_warp(const nnop__norm_kparams *p)
{
    return p->xv.sc == 1 && p->xv.c >= 32;
}

// The instance for p's epilogue: 0 none, the activation's kind where it is the one op, -1 the
// generic chain.
int norm_epi_kind(const nnop__norm_kparams &p)
{
    if (p.n_ops == 0)
        return 0;
    if (p.n_ops == 1 && p.ops[0].kind == NNOP_EPI_ACT)
        switch (p.ops[0].act) {
#define NNOP_NORM_ACT(A)                                                                           \
    case A:                                                                                        \
        return A;
            NNOP_ACT_KINDS(NNOP_NORM_ACT)
#undef NNOP_NORM_ACT
        default:
            break;
        }
    return -1;
}

// The vector kernel of instance epi (norm_epi_kind).
template <typename T, int V, int R>
void launch_vec(int epi, unsigned grid, int bs, cudaStream_t s, const nnop__norm_kparams &p, int nv,
                int G)
{
    switch (epi) {
    case 0:
        norm_rows_vec_kernel<T, V, R, 0><<<grid, bs, 0, s>>>(p, nv, G);
        break;
#define NNOP_NORM_ACT(A)                                                                           \
    case A:                                                                                        \
        norm_rows_vec_kernel<T, V, R, A><<<grid, bs, 0, s>>>(p, nv, G);                            \
        break;
        NNOP_ACT_KINDS(NNOP_NORM_ACT)
#undef NNOP_NORM_ACT
    default:
        norm_rows_vec_kernel<T, V, R, -1><<<grid, bs, 0, s>>>(p, nv, G);
        break;
    }
}

// The vector path for T, if the shape and pointers allow it.
template <typename T> bool norm_rows_vec(const nnop__norm_kparams *p, cudaStream_t s)
{
    constexpr int V = 16 / sizeof(T), R = kNormVecR;
    const nnop__kview &v = p->xv;
    const int64_t positions = v.n * v.h * v.w;
    const int G = norm_vec_lanes(p, V);
    if (G == 0 || !aligned(p->x, 16) || !aligned(p->y, 16))
        return false;
    const int nv = (int)(v.c / V);
    // blocks of 128 where 256 would leave SMs idle; no more blocks than stay resident (4 a
    // SM of 256 threads), each looping over positions: a block stages gamma and beta behind a
    // barrier before its first load of x, and 3136 one-pass blocks paid that latency 6 times
    // over (ncu: 38% of DRAM peak, barrier stalls; 64 x 96 x 56 x 56 f16, H200)
    const int bs = positions * G < kNormVecWant ? kThreads / 2 : kThreads;
    const int epi = norm_epi_kind(*p);
    const int resident = norm_blocks(epi); // a SM, as the launch bounds
    const unsigned grid = grid_for(positions * G, bs, (int64_t)132 * resident * (kThreads / bs));
    launch_vec<T, V, R>(epi, grid, bs, s, *p, nv, G);
    return true;
}

// Per position, channels strided: one thread per (n, h, w), w fastest.
__global__ void __launch_bounds__(kThreads) norm_rows_thread_kernel(nnop__norm_kparams p)
{
    const int64_t positions = p.xv.n * p.xv.h * p.xv.w, C = p.xv.c, sc = p.xv.sc;
    for (int64_t pos = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; pos < positions;
         pos += (int64_t)gridDim.x * blockDim.x) {
        int64_t h, w;
        const int64_t base = position(p, pos, &h, &w);
        const float x0 = p.rms ? 0.f : ld(p.x, p.dtype, base);
        float mean = 0.f, var = 0.f; // of x - x0
        if (!p.rms) {
            float s = 0.f;
            for (int64_t c = 0; c < C; c++)
                s += ld(p.x, p.dtype, base + c * sc) - x0;
            mean = s / (float)C;
        }
        for (int64_t c = 0; c < C; c++) {
            float d = (ld(p.x, p.dtype, base + c * sc) - x0) - mean;
            var += d * d;
        }
        const float rstd = rsqrtf(var / (float)C + p.eps);
        for (int64_t c = 0; c < C; c++)
            st(p.y, p.dtype, base + c * sc,
               epilogue(p,
                        affine(p, ((ld(p.x, p.dtype, base + c * sc) - x0) - mean) * rstd, c, h, w),
                        base + c * sc, c));
    }
}

// The box of one group as three (extent, stride) axes, the smallest stride innermost, so that
// neighbouring threads read neighbouring elements in either layout.
struct Box {
    int64_t ext[3];
    int which[3]; // 0 = c, 1 = h, 2 = w
};

__device__ __forceinline__ void box_coords(const Box &b, int64_t j, int64_t *chw)
{
    const int64_t i0 = j % b.ext[0], rest = j / b.ext[0];
    const int64_t i1 = rest % b.ext[1], i2 = rest / b.ext[1];
    chw[b.which[0]] = i0;
    chw[b.which[1]] = i1;
    chw[b.which[2]] = i2;
}

// Element j of the box at base, as an offset into x, and its channel (from c0), row, column.
__device__ __forceinline__ int64_t box_at(const nnop__norm_kparams &p, const Box &b, int64_t base,
                                          int64_t j, int64_t *chw)
{
    box_coords(b, j, chw);
    return base + chw[0] * p.xv.sc + chw[1] * p.xv.sh + chw[2] * p.xv.sw;
}

// Per group: one block per (n, g), looping over the group's C/G x H x W elements.
__global__ void __launch_bounds__(kThreads) norm_groups_kernel(nnop__norm_kparams p, Box b)
{
    __shared__ float red[kThreads / 32];
    const int64_t cg = p.xv.c / p.groups, count = cg * p.xv.h * p.xv.w;
    for (int64_t box = blockIdx.x; box < p.xv.n * p.groups; box += gridDim.x) {
        const int64_t n = box / p.groups, c0 = (box % p.groups) * cg;
        const int64_t base = n * p.xv.sn + c0 * p.xv.sc;
        const float x0 = p.rms ? 0.f : ld(p.x, p.dtype, base);
        float mean = 0.f, var = 0.f; // of x - x0
        int64_t chw[3];
        if (!p.rms) {
            float s = 0.f;
            for (int64_t j = threadIdx.x; j < count; j += blockDim.x)
                s += ld(p.x, p.dtype, box_at(p, b, base, j, chw)) - x0;
            mean = block_sum(s, red) / (float)count;
        }
        for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
            float d = (ld(p.x, p.dtype, box_at(p, b, base, j, chw)) - x0) - mean;
            var += d * d;
        }
        const float rstd = rsqrtf(block_sum(var, red) / (float)count + p.eps);
        for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
            const int64_t i = box_at(p, b, base, j, chw);
            const float v = affine(p, ((ld(p.x, p.dtype, i) - x0) - mean) * rstd, c0 + chw[0],
                                   chw[1], chw[2]);
            st(p.y, p.dtype, i, epilogue(p, v, i, c0 + chw[0]));
        }
    }
}

Box box_of(const nnop__norm_kparams &p)
{
    Box b;
    const int64_t ext[3] = {p.xv.c / p.groups, p.xv.h, p.xv.w};
    const int64_t str[3] = {p.xv.sc, p.xv.sh, p.xv.sw};
    int64_t key[3];
    int order[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++) // by stride; an axis of extent 1 (any stride) outermost
        key[i] = ext[i] == 1 ? INT64_MAX : str[i];
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (key[order[j]] < key[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    for (int i = 0; i < 3; i++) {
        b.ext[i] = ext[order[i]];
        b.which[i] = order[i];
    }
    return b;
}

} // namespace

extern "C" int nnop__k_norm_vec_lanes(const nnop__norm_kparams *p)
{
    return norm_vec_lanes(p, p->dtype == 0 ? 4 : 8);
}

extern "C" int nnop__k_norm_rows_warp(const nnop__norm_kparams *p)
{
    return norm_rows_warp(p);
}

extern "C" cudaError_t nnop__k_norm(const nnop__norm_kparams *p, cudaStream_t s)
{
    const int64_t positions = p->xv.n * p->xv.h * p->xv.w;
    if (p->per_position && (p->dtype == 0   ? norm_rows_vec<float>(p, s)
                            : p->dtype == 1 ? norm_rows_vec<__half>(p, s)
                                            : norm_rows_vec<__nv_bfloat16>(p, s)))
        return cudaGetLastError();
    if (!p->per_position)
        norm_groups_kernel<<<grid_for(p->xv.n * p->groups, 1), kThreads, 0, s>>>(*p, box_of(*p));
    else if (norm_rows_warp(p))
        norm_rows_warp_kernel<<<grid_for(positions, kThreads / 32), kThreads, 0, s>>>(*p);
    else
        norm_rows_thread_kernel<<<grid_for(positions, kThreads), kThreads, 0, s>>>(*p);
    return cudaGetLastError();
}
