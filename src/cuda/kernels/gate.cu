// gate.cu: a squeeze-excitation gate: y = ops2(W2 h), h = ops1(W1 x), two 1x1 convs on
// N x C x 1 x 1 values with their per-channel epilogues (bias, batch-norm, activations), as
// two launches of one matrix-vector kernel (h in a float scratch buffer, rounded to the dtype
// as the unfused plan stored it). On cuDNN this was two convs and two split-off activations,
// four launches (issue 15: EfficientNet-B0's gates were half its batch-1 time). A first
// version in one launch, each block recomputing all of h, took 28-105 us on the widest gates
// (MobileNetV3's 960 -> 240 -> 960): every block read all of W1, one row a warp at a time.
// Here a warp computes one output row: block (bx, n) stages sample n's input in shared
// memory, its warps take rows bx * 8 + warp, the weights read as 16-byte vectors (four in
// flight a lane) where the rows are contiguous and aligned. Narrow gates (h of at most 16)
// keep one launch, each block computing h for itself. Float accumulation.
// The same matrix-vector kernel runs linear layers at small batch (nnop__k_linear_gemv): at
// batch 1, cuBLASLt took 12.9 us for ResNet-50's 2048 -> 1000 classifier on H200, 4 MB of
// weights (1 us at copy bandwidth).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <string.h>

#include "cuda/kernels/epilogue.cuh"

namespace
{

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// One launch up to this h (each warp then computes at most 2 of its rows in every block).
// At batch 32 the blocks' recomputed h cost more than a second launch (10 vs 8 us).
constexpr int64_t kSmallMid = 16, kSmallC = 1024, kSmallN = 8;

using nnop_k::epi_op;
using nnop_k::fromf;
using nnop_k::ldv;
using nnop_k::tof;
using nnop_k::Vec;
using nnop_k::warp_sum;

// One phase: out[n, j] = ops(sum_i w[j, i] in[n, i]) for j < rows, i < len.
struct Phase {
    const void *in; // T, or float (the scratch h)
    int in_float;
    const float *sums; // non-NULL: in[n, i] = inv * sum over z < chunks of sums[n, z, i]
    int chunks;
    float inv;
    int64_t isn, isc;
    const void *w;
    int64_t wsk, wsc;
    void *out; // T, or float rounded to T (the scratch h)
    int out_float;
    int64_t osn, osc;
    int rows, len, vec; // vec: w rows contiguous, 16-byte aligned, len a multiple of V
    int n_ops;
};

// The phase's epilogue ops, passed by value (kernel parameter space).
struct OpSet {
    nnop__epi_op op[NNOP_EPI_MAX_OPS];
};

template <typename T> __device__ __forceinline__ float in_at(const Phase &f, int64_t i)
{
    return f.in_float ? static_cast<const float *>(f.in)[i] : tof(static_cast<const T *>(f.in)[i]);
}

// Lane sums of w_row . xs over len: 16-byte vectors, four in flight a lane.
template <typename T>
__device__ __forceinline__ float dot_vec(const T *__restrict__ wr, const float *xs, int len)
{
    constexpr int V = 16 / sizeof(T);
    const int lane = threadIdx.x & 31;
    float a = 0.f;
    for (int base = 0; base < len; base += 32 * V * 4) {
        Vec<T, V> wv[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int i = base + (u * 32 + lane) * V;
            if (i < len)
                wv[u] = ldv<T, V>(wr + i);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int i = base + (u * 32 + lane) * V;
            if (i >= len)
                continue;
            // float4 reads of xs (16-byte aligned: i is a multiple of V >= 4): a scalar read
            // V floats apart a lane was a V-way bank conflict
            const float4 *x4 = reinterpret_cast<const float4 *>(xs + i);
#pragma unroll
            for (int q = 0; q < V / 4; q++) {
                const float4 xv = x4[q];
                a += tof(wv[u].v[4 * q]) * xv.x + tof(wv[u].v[4 * q + 1]) * xv.y +
                     tof(wv[u].v[4 * q + 2]) * xv.z + tof(wv[u].v[4 * q + 3]) * xv.w;
            }
        }
    }
    return a;
}

template <typename T>
__device__ __forceinline__ float dot_any(const T *__restrict__ wr, int64_t ws, const float *xs,
                                         int len)
{
    const int lane = threadIdx.x & 31;
    float a[4] = {0.f, 0.f, 0.f, 0.f};
    int i = lane;
    for (; i + 96 < len; i += 128)
#pragma unroll
        for (int u = 0; u < 4; u++)
            a[u] += tof(wr[(i + 32 * u) * ws]) * xs[i + 32 * u];
    for (; i < len; i += 32)
        a[0] += tof(wr[i * ws]) * xs[i];
    return (a[0] + a[1]) + (a[2] + a[3]);
}

// Row j of w against xs (shared memory, len values): the whole warp's sum.
template <typename T>
__device__ __forceinline__ float row_sum(const Phase &f, const float *xs, int j)
{
    const T *__restrict__ wr = static_cast<const T *>(f.w) + j * f.wsk;
    return warp_sum(f.vec ? dot_vec<T>(wr, xs, f.len) : dot_any<T>(wr, f.wsc, xs, f.len));
}

// The ops on output (n, j) of a packed [n, rows] result: element n * rows + j, channel j.
__device__ __forceinline__ float ops_on(const OpSet &ops, int n_ops, float v, int64_t n, int rows,
                                        int j)
{
    for (int k = 0; k < n_ops; k++)
        v = epi_op(ops.op[k], v, n * rows + j, j);
    return v;
}

// in[n, 0..len) into xs as float.
template <typename T> __device__ __forceinline__ void stage(const Phase &f, float *xs, int64_t n)
{
    for (int i = threadIdx.x; i < f.len; i += kThreads) {
        if (f.sums) { // the pool's mean, as gap_finish_kernel stores it
            const float *q = f.sums + n * f.chunks * f.len + i;
            float a = 0.f;
            // the loads eight at a time (up to 32 chunks: one after another they were a chain
            // of latencies), the sums still in chunk order
#pragma unroll 8
            for (int z = 0; z < f.chunks; z++)
                a += q[(int64_t)z * f.len];
            xs[i] = tof(fromf<T>(a * f.inv));
        } else {
            xs[i] = in_at<T>(f, n * f.isn + i * f.isc);
        }
    }
    __syncthreads();
}

template <typename T> __device__ __forceinline__ void put(const Phase &f, int64_t n, int j, float v)
{
    const int64_t oi = n * f.osn + j * f.osc;
    if (f.out_float)
        static_cast<float *>(f.out)[oi] = tof(fromf<T>(v));
    else
        static_cast<T *>(f.out)[oi] = fromf<T>(v);
}

// One phase, block (bx, n): rows bx * kWarps + warp of sample n.
template <typename T> __global__ void __launch_bounds__(kThreads) gemv_kernel(Phase f, OpSet ops)
{
    extern __shared__ float4 sm4[]; // 16-byte aligned for dot_vec's reads
    float *xs = reinterpret_cast<float *>(sm4);
    const int j = (int)blockIdx.x * kWarps + (threadIdx.x >> 5);
    stage<T>(f, xs, blockIdx.y);
    if (j >= f.rows)
        return;
    const float v = row_sum<T>(f, xs, j);
    if ((threadIdx.x & 31) == 0)
        put<T>(f, blockIdx.y, j, ops_on(ops, f.n_ops, v, blockIdx.y, f.rows, j));
}

// Where h starts in the one-launch kernel's shared memory: x rounded up to 4 floats.
__host__ __device__ constexpr int64_t small_h_offset(int64_t c)
{
    return (c + 3) / 4 * 4;
}

// Both phases in one launch for narrow gates (h of at most kSmallMid rows): each block
// computes all of h (its warps a row each) into shared memory, then its rows of y.
template <typename T>
__global__ void __launch_bounds__(kThreads)
        gate_small_kernel(Phase f1, Phase f2, OpSet o1, OpSet o2)
{
    extern __shared__ float4 sm4[]; // x [f1.len], then h [f2.len] from a 16-byte boundary
    float *xs = reinterpret_cast<float *>(sm4), *hs = xs + small_h_offset(f1.len);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    stage<T>(f1, xs, blockIdx.y);
    for (int j = warp; j < f1.rows; j += kWarps) {
        const float v = row_sum<T>(f1, xs, j);
        if (lane == 0)
            hs[j] = tof(fromf<T>(ops_on(o1, f1.n_ops, v, blockIdx.y, f1.rows, j)));
    }
    __syncthreads();
    const int k = (int)blockIdx.x * kWarps + warp;
    if (k >= f2.rows)
        return;
    const float v = row_sum<T>(f2, hs, k);
    if (lane == 0)
        put<T>(f2, blockIdx.y, k, ops_on(o2, f2.n_ops, v, blockIdx.y, f2.rows, k));
}

bool rows_vec(const void *w, int64_t wsk, int64_t wsc, int64_t len, size_t es)
{
    const int64_t V = 16 / (int64_t)es;
    return wsc == 1 && len % V == 0 && wsk % V == 0 && nnop_k::aligned(w, 16);
}

template <typename T> cudaError_t launch(const nnop__gate_kparams *p, cudaStream_t s)
{
    Phase f1 = {p->x,   0,     p->sums,     p->chunks, p->inv, p->xsn,
                p->xsc, p->w1, p->w1sk,     p->w1sc,   p->h,   1,
                p->mid, 1,     (int)p->mid, (int)p->c, 0,      p->n_ops1};
    Phase f2 = {p->h,    1,    NULL, 0,      0.f,    p->mid,    1,           p->w2, p->w2sk,
                p->w2sc, p->y, 0,    p->ysn, p->ysc, (int)p->k, (int)p->mid, 0,     p->n_ops2};
    OpSet o1, o2;
    f1.vec = rows_vec(p->w1, p->w1sk, p->w1sc, p->c, sizeof(T));
    f2.vec = rows_vec(p->w2, p->w2sk, p->w2sc, p->mid, sizeof(T));
    memcpy(o1.op, p->ops1, sizeof o1.op);
    memcpy(o2.op, p->ops2, sizeof o2.op);
    dim3 g1((unsigned)((p->mid + kWarps - 1) / kWarps), (unsigned)p->n);
    dim3 g2((unsigned)((p->k + kWarps - 1) / kWarps), (unsigned)p->n);
    if (p->mid <= kSmallMid && p->c <= kSmallC && p->n <= kSmallN) {
        gate_small_kernel<T>
                <<<g2, kThreads, nnop__gate_smem_bytes(p->c, p->mid), s>>>(f1, f2, o1, o2);
        return cudaGetLastError();
    }
    gemv_kernel<T><<<g1, kThreads, (size_t)p->c * sizeof(float), s>>>(f1, o1);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    gemv_kernel<T><<<g2, kThreads, (size_t)p->mid * sizeof(float), s>>>(f2, o2);
    return cudaGetLastError();
}

// A linear layer as one phase: x [n, in] and w [out, in] packed row-major, y [n, out].
template <typename T> cudaError_t launch_linear(const nnop__linear_kparams *p, cudaStream_t s)
{
    Phase f = {p->x, 0,    NULL, 0,      0.f, p->in,       1,          p->w, p->in,
               1,    p->y, 0,    p->out, 1,   (int)p->out, (int)p->in, 0,    p->epi.n_ops};
    OpSet o;
    f.vec = rows_vec(p->w, p->in, 1, p->in, sizeof(T));
    memcpy(o.op, p->epi.ops, sizeof o.op);
    dim3 g((unsigned)((p->out + kWarps - 1) / kWarps), (unsigned)p->n);
    gemv_kernel<T><<<g, kThreads, (size_t)p->in * sizeof(float), s>>>(f, o);
    return cudaGetLastError();
}

} // namespace

extern "C" int nnop__linear_gemv_fits(const nnop__linear_kparams *p)
{
    return p->n >= 1 && p->n <= NNOP_GEMV_MAX_N && p->dtype == p->y_dtype && p->out <= INT32_MAX &&
           p->in * (int64_t)sizeof(float) <= 49152;
}

extern "C" cudaError_t nnop__k_linear_gemv(const nnop__linear_kparams *p, cudaStream_t s)
{
    if (p->dtype == 0)
        return launch_linear<float>(p, s);
    if (p->dtype == 1)
        return launch_linear<__half>(p, s);
    return launch_linear<__nv_bfloat16>(p, s);
}

extern "C" size_t nnop__gate_smem_bytes(int64_t c, int64_t mid)
{
    return (size_t)(small_h_offset(c) + mid) * sizeof(float);
}

extern "C" size_t nnop__gate_scratch_bytes(int64_t n, int64_t mid)
{
    return (size_t)(n * mid) * sizeof(float);
}

extern "C" cudaError_t nnop__k_gate(const nnop__gate_kparams *p, cudaStream_t s)
{
    if (p->dtype == 0)
        return launch<float>(p, s);
    if (p->dtype == 1)
        return launch<__half>(p, s);
    return launch<__nv_bfloat16>(p, s);
}
