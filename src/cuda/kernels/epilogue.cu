// epilogue.cu: the pointwise epilogue chain (nnop__epi_params) as its own pass, standalone
// or split off a producer: vectors of 16 bytes with the channel known per vector, a lean
// kernel for one-op chains on big tensors, a 64-bit scalar kernel for the rest. The ops
// themselves are epilogue.cuh's.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "cuda/kernels/epilogue.cuh"
#include "cuda/kernels/memory_bound.cuh"

namespace
{

using nnop_k::act;
using nnop_k::act_k;
using nnop_k::act_out;
using nnop_k::aligned;
using nnop_k::binary;
using nnop_k::blocks_for;
using nnop_k::dtype_size;
using nnop_k::epi_op;
using nnop_k::fromf;
using nnop_k::kMax32;
using nnop_k::kThreads;
using nnop_k::ld;
using nnop_k::ldv;
using nnop_k::st;
using nnop_k::stv;
using nnop_k::tof;
using nnop_k::Vec;

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
