// epilogue.cuh: the pointwise epilogue ops (nnop__epi_op) on float values, shared by the
// epilogue kernels (epilogue.cu) and the kernels that run an epilogue after their own
// producer (depthwise.cu): activations, per-channel and broadcast operands.
#ifndef NNOP_CUDA_EPILOGUE_CUH
#define NNOP_CUDA_EPILOGUE_CUH

#include "cuda/kernels/device_util.cuh"

namespace nnop_k
{

// nnop_act_kind values, as in nnop.h; A fixed at compile time (act_k) or looked up (act).
template <int A> __device__ __forceinline__ float act_k(const nnop__epi_op &o, float x)
{
    switch (A) {
    case 1: // NaN stays NaN, as in PyTorch (fmaxf would drop it)
        return x < 0.f ? 0.f : x;
    case 2:
        return x < 0.f ? 0.f : (x > 6.f ? 6.f : x);
    case 3:
        return x < o.lo ? o.lo : (x > o.hi ? o.hi : x);
    case 4:
        return x > 0.f ? x : o.alpha * x;
    case 5:
        return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case 6:
        return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case 7:
        return 1.f / (1.f + expf(-x));
    case 8:
        return tanhf(x);
    case 9:
        return x / (1.f + expf(-x));
    case 10:
        return x > 0.f ? x : o.alpha * expm1f(x);
    case 11: // hard-swish: x * hard_sigmoid(x); NaN stays NaN (both tests fail)
        return x * (x <= -3.f ? 0.f : (x >= 3.f ? 1.f : x / 6.f + 0.5f));
    case 12:
        return x <= -3.f ? 0.f : (x >= 3.f ? 1.f : x / 6.f + 0.5f);
    case 13: // mish: x * tanh(softplus(x)), softplus without overflow
        return x * tanhf(fmaxf(x, 0.f) + log1pf(expf(-fabsf(x))));
    default:
        return x;
    }
}

#define NNOP_ACT_KINDS(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)

static __device__ float act(const nnop__epi_op &o, float x)
{
    switch (o.act) {
#define NNOP_ACT_ONE(A)                                                                            \
    case A:                                                                                        \
        return act_k<A>(o, x);
        NNOP_ACT_KINDS(NNOP_ACT_ONE)
#undef NNOP_ACT_ONE
    default:
        return x;
    }
}

// The activation on N values for outputs of type T. Why: the depthwise kernel was bound by
// instruction issue, not memory (ncu, 2026-12-02: 69% issue slots busy, 10% of DRAM bandwidth, 3x3
// + batch-norm + SiLU at batch 32), and SiLU's and sigmoid's exact expf and IEEE division are most
// of the epilogue's instructions. For 16-bit outputs, whose rounding (4.9e-4 for f16) is far above
// the intrinsics' error (a few 1e-6 relative), they take __expf and __fdividef; float outputs keep
// the exact functions.
constexpr int kActGelu = 5, kActSigmoid = 7, kActSilu = 9; // nnop_act_kind values (nnop.h)

// GELU (the erf form), x * Phi(x), for 16-bit outputs: Phi(-|x|) = erfc(z) / 2, z = |x| / sqrt 2,
// as Abramowitz and Stegun's 7.1.26, t * P(t) * exp(-z^2) with t = 1 / (1 + p z) (absolute error of
// erfc <= 1.5e-7, far below f16's rounding; the 1/2 and 1/sqrt 2 folded into the constants), and
// GELU formed from it so that the negative tail keeps its relative accuracy. Why: erff took about
// 25 instructions a value, and layer norm + GELU ran at 62% of copy bandwidth against 84% for the
// norm alone (H100, 2026-12-05). NaN stays NaN (x >= 0 fails); GELU(inf) = inf.
__device__ __forceinline__ float gelu_16(float x)
{
    const float t = __fdividef(1.f, fmaf(0.23164189f, fabsf(x), 1.f));
    const float poly =
            t *
            fmaf(t, fmaf(t, fmaf(t, fmaf(t, 0.53070271f, -0.72657601f), 0.71070687f), -0.14224837f),
                 0.12741480f);
    float e; // exp(-x^2 / 2) = 2^(-x^2 log2(e) / 2)
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(x * (x * -0.72134752f)));
    const float phi_neg = poly * e; // Phi(-|x|)
    return x * (x >= 0.f ? 1.f - phi_neg : phi_neg);
}

// Activation A, fixed at compile time, on one value for an output of type T.
template <typename T, int A>
__device__ __forceinline__ float act_out_k(const nnop__epi_op &o, float x)
{
    if (sizeof(T) == 2 && A == kActSilu)
        return __fdividef(x, 1.f + __expf(-x));
    if (sizeof(T) == 2 && A == kActSigmoid)
        return __fdividef(1.f, 1.f + __expf(-x));
    if (sizeof(T) == 2 && A == kActGelu)
        return gelu_16(x);
    return act_k<A>(o, x);
}

template <typename T, int N>
__device__ __forceinline__ void act_out(const nnop__epi_op &o, float *v)
{
    switch (o.act) {
#define NNOP_ACT_OUT(A)                                                                            \
    case A:                                                                                        \
        _Pragma("unroll") for (int e = 0; e < N; e++) v[e] = act_out_k<T, A>(o, v[e]);             \
        break;
        NNOP_ACT_KINDS(NNOP_ACT_OUT)
#undef NNOP_ACT_OUT
    default:
        break;
    }
}

// Element of the MUL/SUB/DIV operand b for element i of channel c (NNOP_BCAST_*).
__device__ __forceinline__ int64_t bcast_index(const nnop__epi_op &o, int64_t i, int64_t c)
{
    if (o.bmode == NNOP_BCAST_NONE)
        return i;
    return (o.bmode == NNOP_BCAST_SAMPLE ? (i / o.xsn) * o.bsn : 0) + c * o.bsc;
}

__device__ __forceinline__ float binary(int kind, float v, float b)
{
    return kind == NNOP_EPI_MUL ? v * b : kind == NNOP_EPI_SUB ? v - b : v / b;
}

// One op on value v of element i, channel c: inlined (the norm kernel's epilogue: as calls,
// layer norm + GELU took 4x the plain norm's time on the H200), and as the call epi_op below.
__device__ __forceinline__ float epi_op_inline(const nnop__epi_op &o, float v, int64_t i, int64_t c)
{
    switch (o.kind) {
    case NNOP_EPI_MUL:
    case NNOP_EPI_SUB:
    case NNOP_EPI_DIV:
        return binary(o.kind, v, ld(o.p[0], o.dtype, bcast_index(o, i, c)));
    case NNOP_EPI_BIAS:
        return v + ld(o.p[0], o.dtype, c);
    case NNOP_EPI_SCALE_SHIFT:
        return v * ld(o.p[0], o.dtype, c) + ld(o.p[1], o.dtype, c);
    case NNOP_EPI_BN: {
        float s = ld(o.p[0], o.dtype, c) / sqrtf(ld(o.p[3], o.dtype, c) + o.eps);
        return v * s + (ld(o.p[1], o.dtype, c) - ld(o.p[2], o.dtype, c) * s);
    }
    case NNOP_EPI_ADD:
        return v + ld(o.p[0], o.dtype, i);
    default:
        act_out<float, 1>(o, &v);
        return v;
    }
}

static __device__ float epi_op(const nnop__epi_op &o, float v, int64_t i, int64_t c)
{
    switch (o.kind) {
    case NNOP_EPI_ACT:
        return act(o, v);
    default:
        return epi_op_inline(o, v, i, c);
    }
}

} // namespace nnop_k

#endif // NNOP_CUDA_EPILOGUE_CUH
