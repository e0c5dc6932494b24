// gate.cu: a squeeze-excitation gate in one launch: y = ops2(W2 h), h = ops1(W1 x), two 1x1
// convs on N x C x 1 x 1 values with their per-channel epilogues (bias, batch-norm,
// activations). On cuDNN this was two convs and two split-off activations, four launches of
// about 2 us each for a few kilobytes (issue 15: half of EfficientNet-B0's batch-1 time was
// its gates). Block (bx, n) loads sample n's input into shared memory, computes all of h (a
// warp a row, lanes along the input), rounds it to the dtype as the unfused plan stored it,
// then its share of y's channels. Float accumulation.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/epilogue.cuh"

namespace
{

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

using nnop_k::epi_op;
using nnop_k::fromf;
using nnop_k::load;
using nnop_k::store;
using nnop_k::tof;

// Row j of a 1x1 conv's weights (channel stride ws) against in[0..len): the warp's sum.
template <typename T>
__device__ __forceinline__ float row_dot(const T *__restrict__ w, int64_t ws, const float *in,
                                         int len)
{
    const int lane = threadIdx.x & 31;
    float a0 = 0.f, a1 = 0.f;
    int i = lane;
    for (; i + 32 < len; i += 64) {
        a0 += in[i] * load(w, i * ws);
        a1 += in[i + 32] * load(w, (i + 32) * ws);
    }
    if (i < len)
        a0 += in[i] * load(w, i * ws);
    a0 += a1;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        a0 += __shfl_xor_sync(0xffffffffu, a0, o);
    return a0;
}

__device__ __forceinline__ float apply(const nnop__epi_op *ops, int n_ops, float v, int64_t c)
{
    for (int k = 0; k < n_ops; k++)
        v = epi_op(ops[k], v, c, c);
    return v;
}

template <typename T> __global__ void __launch_bounds__(kThreads) gate_kernel(nnop__gate_kparams p)
{
    extern __shared__ float sm[]; // x of this sample [c], then h [mid]
    const T *__restrict__ x = static_cast<const T *>(p.x);
    const T *__restrict__ w1 = static_cast<const T *>(p.w1);
    const T *__restrict__ w2 = static_cast<const T *>(p.w2);
    T *__restrict__ y = static_cast<T *>(p.y);
    const int C = (int)p.c, M = (int)p.mid, K = (int)p.k;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    float *xs = sm, *hs = sm + C;
    const int64_t n = blockIdx.y;
    for (int i = threadIdx.x; i < C; i += kThreads)
        xs[i] = load(x, n * p.xsn + i * p.xsc);
    __syncthreads();
    for (int j = warp; j < M; j += kWarps) {
        float v = row_dot(w1 + j * p.w1sk, p.w1sc, xs, C);
        if (lane == 0)
            hs[j] = tof(fromf<T>(apply(p.ops1, p.n_ops1, v, j)));
    }
    __syncthreads();
    const int per = (K + (int)gridDim.x - 1) / (int)gridDim.x;
    const int k1 = (int)blockIdx.x * per + per < K ? (int)blockIdx.x * per + per : K;
    for (int k = (int)blockIdx.x * per + warp; k < k1; k += kWarps) {
        float v = row_dot(w2 + k * p.w2sk, p.w2sc, hs, M);
        if (lane == 0)
            store(y, n * p.ysn + k * p.ysc, apply(p.ops2, p.n_ops2, v, k));
    }
}

// Blocks a sample: enough for two a SM over the batch, each with at least a warp's rows of y.
unsigned blocks_per_sample(const nnop__gate_kparams *p)
{
    int64_t want = (132 * 2 + p->n - 1) / p->n, most = (p->k + kWarps - 1) / kWarps;
    want = want < most ? want : most;
    return (unsigned)(want < 1 ? 1 : want);
}

template <typename T> void launch(const nnop__gate_kparams *p, cudaStream_t s)
{
    dim3 grid(blocks_per_sample(p), (unsigned)p->n);
    gate_kernel<T><<<grid, kThreads, nnop__gate_smem_bytes(p->c, p->mid), s>>>(*p);
}

} // namespace

extern "C" size_t nnop__gate_smem_bytes(int64_t c, int64_t mid)
{
    return (size_t)(c + mid) * sizeof(float);
}

extern "C" cudaError_t nnop__k_gate(const nnop__gate_kparams *p, cudaStream_t s)
{
    if (p->dtype == 0)
        launch<float>(p, s);
    else if (p->dtype == 1)
        launch<__half>(p, s);
    else
        launch<__nv_bfloat16>(p, s);
    return cudaGetLastError();
}
