// igemm_conv.cu: convolutions whose output is too small to fill the GPU (ResNet-50 at batch 1:
// 49-3136 output pixels) as a tensor-core implicit GEMM with the reduction split over the
// blocks of a thread-block cluster. cuDNN 9.14's sm_90 engines run these on a handful of
// blocks (the 512-channel 7x7 3x3 conv: 8 tiles, 12 us); here each 64 x 64 output tile gets
// up to 16 blocks, each summing a share of R * S * C, and the shares are added through
// distributed shared memory in rank order (deterministic) before the epilogue and one store.
//
// GEMM view: M = output pixels (n, p, q), N = output channels, K = (r, s, c) with c fastest.
// A block's 64 x 64 tile runs four warps of 32 x 32 (mma.sync m16n8k16, ldmatrix from
// XOR-swizzled 64 x 64 half tiles), fed by a 4-stage cp.async pipeline; the input patch rows
// are gathered with zero fill for padding, C beyond the channels and pixels beyond M.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/epilogue.cuh"
#include "cuda/kernels/mma.cuh"

namespace cg = cooperative_groups;

namespace
{

using nnop_k::ldsm_x4;
using nnop_k::mma;
using nnop_k::pack2;

const int kBM = 64, kBN = 64, kBK = 64; // tile: pixels, channels, reduction (halves)
const int kThreads = 128;               // four warps, 2 x 2 of 32 x 32
const int kStages = 4;
const int kStageHalves = (kBM + kBN) * kBK;
const int kRedStride = kBN + 4; // floats a staged row of sums (16-byte rows, fewer conflicts)
const int kMaxSplits = 16;

// The pipeline's stages; after it the staged sums and the epilogue's per-channel operands
// (static_assert below: they fit where the stages were).
constexpr size_t smem_bytes()
{
    return (size_t)kStages * kStageHalves * 2;
}
static_assert((size_t)(kBM * kRedStride + NNOP_EPI_MAX_OPS * 4 * kBN) * 4 <= smem_bytes(),
              "the sums and operands fit in the stages' memory");

// The device code needs sm_90 (clusters, distributed shared memory): the images for older
// GPUs hold only a trapping kernel, which impl/igemm.c never picks there.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define NNOP_IGEMM_DEVICE 1

const int kLoads = kBM * kBK / 8 / kThreads; // 16-byte chunks a thread loads per operand

// Half offset of 16-byte chunk `chunk` of tile row `row`: chunks XOR-swizzled by the row so
// that ldmatrix's 8 rows at one logical chunk hit 8 different bank groups.
__device__ __forceinline__ int swz(int row, int chunk)
{
    return row * kBK + ((chunk ^ (row & 7)) << 3);
}

__device__ __forceinline__ void cp_async16(void *smem, const void *g, bool valid)
{
    unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    int n = valid ? 16 : 0; // 0: the 16 bytes are zero-filled, nothing read
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(g), "r"(n));
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Where a thread's input rows start: per loaded tile row, the image offset and the top-left
// input position of its output pixel (ih0 = INT_MIN / 2 for a pixel beyond M: never inside).
struct a_rows {
    int64_t base[kLoads];
    int ih0[kLoads], iw0[kLoads];
};

__device__ __forceinline__ void locate_rows(const nnop__igemm_kparams &p, int m0, int row0,
                                            a_rows &a)
{
    const int pq = p.p * p.q, m_total = p.n * pq;
#pragma unroll
    for (int i = 0; i < kLoads; i++) {
        const int m = m0 + row0 + i * (kThreads / 8);
        const int n = m / pq, rem = m - n * pq, oh = rem / p.q, ow = rem - oh * p.q;
        a.base[i] = (int64_t)n * p.h * p.w * p.c;
        a.ih0[i] = m < m_total ? oh * p.stride_h - p.pad_h : -(1 << 29);
        a.iw0[i] = ow * p.stride_w - p.pad_w;
    }
}

// Stage `t` of the reduction (filter tap rs = t / chunks, channels (t % chunks) * 64 ..) of
// the A (pixels) and B (weights) tiles into shared memory at `stage`.
__device__ __forceinline__ void load_stage(const nnop__igemm_kparams &p, const a_rows &a, int n0,
                                           int t, int chunks, unsigned short *stage)
{
    const unsigned short *x = static_cast<const unsigned short *>(p.x);
    const unsigned short *w = static_cast<const unsigned short *>(p.wp);
    const int ch = threadIdx.x & 7, row0 = threadIdx.x >> 3;
    const int rs = t / chunks, c = (t - rs * chunks) * kBK + ch * 8;
    const int r = rs / p.s, s = rs - r * p.s;
    const bool c_in = c < p.c;
    unsigned short *as = stage, *bs = stage + kBM * kBK;
#pragma unroll
    for (int i = 0; i < kLoads; i++) {
        const int row = row0 + i * (kThreads / 8);
        const int ih = a.ih0[i] + r * p.dil_h, iw = a.iw0[i] + s * p.dil_w;
        const bool in = c_in && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
        const unsigned short *src = in ? x + a.base[i] + ((int64_t)ih * p.w + iw) * p.c + c : x;
        cp_async16(as + swz(row, ch), src, in);
        const int k = n0 + row;
        const bool kin = c_in && k < p.k;
        cp_async16(bs + swz(row, ch), kin ? w + ((int64_t)k * p.r * p.s + rs) * p.c + c : w, kin);
    }
}

// One stage's 64-deep reduction into the warp's 32 x 32 accumulators.
template <bool BF16>
__device__ __forceinline__ void mma_stage(const unsigned short *stage, int wm, int wn,
                                          float (&acc)[2][4][4])
{
    const int lane = threadIdx.x & 31;
    const unsigned short *as = stage, *bs = stage + kBM * kBK;
#pragma unroll
    for (int kk = 0; kk < kBK / 16; kk++) {
        unsigned a[2][4], b[2][4];
#pragma unroll
        for (int mt = 0; mt < 2; mt++) // rows 0-15 at k 0-7, then at k 8-15
            ldsm_x4(a[mt], as + swz(wm * 32 + mt * 16 + (lane & 15), kk * 2 + (lane >> 4)));
#pragma unroll
        for (int jp = 0; jp < 2; jp++) // n-tile 2 jp: k 0-7, 8-15; n-tile 2 jp + 1: the same
            ldsm_x4(b[jp], bs + swz(wn * 32 + jp * 16 + (lane & 7) + ((lane >> 4) << 3),
                                    kk * 2 + ((lane >> 3) & 1)));
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int jp = 0; jp < 2; jp++) {
                mma<BF16>(acc[mt][2 * jp], a[mt], b[jp][0], b[jp][1]);
                mma<BF16>(acc[mt][2 * jp + 1], a[mt], b[jp][2], b[jp][3]);
            }
    }
}

// The block's partial sums of its reduction range [t0, t1) for the tile at (m0, n0).
template <bool BF16>
__device__ __forceinline__ void partial_sums(const nnop__igemm_kparams &p, int m0, int n0, int t0,
                                             int t1, int chunks, unsigned short *smem,
                                             float (&acc)[2][4][4])
{
    const int warp = threadIdx.x >> 5, wm = warp & 1, wn = warp >> 1;
    a_rows a;
    locate_rows(p, m0, threadIdx.x >> 3, a);
#pragma unroll
    for (int s = 0; s < kStages - 1; s++) { // the pipeline's head; empty groups past t1
        if (t0 + s < t1)
            load_stage(p, a, n0, t0 + s, chunks, smem + s * kStageHalves);
        cp_async_commit();
    }
    for (int t = t0; t < t1; t++) {
        const int i = t - t0;
        cp_async_wait<kStages - 2>(); // stage i has landed (for this thread)
        __syncthreads();              // for every thread; stage i - 1 is no longer read
        if (t + kStages - 1 < t1)
            load_stage(p, a, n0, t + kStages - 1, chunks,
                       smem + (i + kStages - 1) % kStages * kStageHalves);
        cp_async_commit();
        mma_stage<BF16>(smem + i % kStages * kStageHalves, wm, wn, acc);
    }
    cp_async_wait<0>();
    __syncthreads(); // the stages are free: the sums go where they were
}

// The accumulators as floats [64][kRedStride] in shared memory (the fragment layout: row
// g / g + 8 of each m16, columns 2 (lane & 3) + 0, 1 of each n8).
__device__ __forceinline__ void stage_sums(const float (&acc)[2][4][4], float *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wm = warp & 1, wn = warp >> 1;
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int row = wm * 32 + mt * 16 + (lane >> 2) + h * 8;
                const int col = wn * 32 + j * 8 + (lane & 3) * 2;
                *reinterpret_cast<float2 *>(red + row * kRedStride + col) =
                        make_float2(acc[mt][j][h * 2], acc[mt][j][h * 2 + 1]);
            }
}

// ------------------------------------------------------------------ the epilogue
// Its operands are loaded before they are needed, all of a thread's at once: one op at a
// time, element by element, each load waited for its own round trip (ResNet-50's batch-1
// convs took 14-33 us that way). Per-channel operands of the tile's channels go to shared
// memory while the cluster syncs; per-element ones (a residual) are loaded, four channels
// of kGroup tasks at a time, before the splits' sums are read.
const int kVec = 4;       // channels a finishing task: one 8-byte store
const int kGroup = 4;     // tasks a thread finishes together
const int kElemOps = 2;   // per-element operands loaded ahead (more are read where used)
const int kChanWords = 4; // per-channel operands an op has at most (batch-norm)

__device__ __forceinline__ bool channel_operand(const nnop__epi_op &o, int j)
{
    switch (o.kind) {
    case NNOP_EPI_BIAS:
        return j == 0;
    case NNOP_EPI_SCALE_SHIFT:
        return j < 2;
    case NNOP_EPI_BN:
        return true;
    case NNOP_EPI_MUL:
    case NNOP_EPI_SUB:
    case NNOP_EPI_DIV:
        return j == 0 && o.bmode == NNOP_BCAST_CHANNEL;
    default:
        return false;
    }
}

__device__ __forceinline__ bool element_operand(const nnop__epi_op &o)
{
    return o.kind == NNOP_EPI_ADD ||
           ((o.kind == NNOP_EPI_MUL || o.kind == NNOP_EPI_SUB || o.kind == NNOP_EPI_DIV) &&
            o.bmode == NNOP_BCAST_NONE);
}

// chan[(o kChanWords + j) kBN + col]: operand j of op o at channel n0 + col.
__device__ __forceinline__ void stage_channel_operands(const nnop__igemm_kparams &p, int n0,
                                                       float *chan)
{
    for (int i = threadIdx.x; i < p.n_ops * kChanWords * kBN; i += kThreads) {
        const int o = i / (kChanWords * kBN), j = i / kBN % kChanWords, k = n0 + i % kBN;
        const nnop__epi_op &op = p.ops[o];
        if (k < p.k && channel_operand(op, j))
            chan[i] = nnop_k::ld(op.p[j], op.dtype,
                                 op.kind == NNOP_EPI_BN || op.kind == NNOP_EPI_BIAS ||
                                                 op.kind == NNOP_EPI_SCALE_SHIFT
                                         ? (int64_t)k
                                         : (int64_t)k * op.bsc);
    }
}

// Four elements i.. of a per-element operand (i a multiple of 4, the operand 16-byte aligned).
__device__ __forceinline__ void load4(const void *q, int dt, int64_t i, float (&v)[kVec])
{
    if (dt == 0) {
        const float4 f = *reinterpret_cast<const float4 *>(static_cast<const float *>(q) + i);
        v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
        return;
    }
    const uint2 u = *reinterpret_cast<const uint2 *>(static_cast<const unsigned short *>(q) + i);
    const unsigned w[2] = {u.x, u.y};
#pragma unroll
    for (int h = 0; h < 2; h++) {
        if (dt == 1) {
            const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[h]));
            v[2 * h] = f.x, v[2 * h + 1] = f.y;
        } else {
            const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&w[h]));
            v[2 * h] = f.x, v[2 * h + 1] = f.y;
        }
    }
}

// Op o on v at element i, channel c (col in the tile): per-channel operands from ch (op o's
// staged rows), a per-element one given as e (loaded ahead) or read here (has_e false).
__device__ __forceinline__ float apply_op(const nnop__epi_op &o, float v, const float *ch, int col,
                                          bool has_e, float e, int64_t i, int64_t c)
{
    switch (o.kind) {
    case NNOP_EPI_BIAS:
        return v + ch[col];
    case NNOP_EPI_SCALE_SHIFT:
        return v * ch[col] + ch[kBN + col];
    case NNOP_EPI_BN: {
        const float sc = ch[col] / sqrtf(ch[3 * kBN + col] + o.eps);
        return v * sc + (ch[kBN + col] - ch[2 * kBN + col] * sc);
    }
    case NNOP_EPI_ADD:
        return v + (has_e ? e : nnop_k::ld(o.p[0], o.dtype, i));
    case NNOP_EPI_MUL:
    case NNOP_EPI_SUB:
    case NNOP_EPI_DIV: {
        const float b = o.bmode == NNOP_BCAST_CHANNEL ? ch[col]
                        : has_e                       ? e
                                : nnop_k::ld(o.p[0], o.dtype, nnop_k::bcast_index(o, i, c));
        return nnop_k::binary(o.kind, v, b);
    }
    default:
        return nnop_k::act(o, v);
    }
}

// The sum over the cluster's ranks, in rank order, of the staged floats at offset off (four
// ranks' loads in flight at a time).
__device__ __forceinline__ float4 sum_ranks(cg::cluster_group &cl, float *red, int off, int splits)
{
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int src = 0; src < splits; src += 4) {
        float4 a[4];
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (src + j < splits)
                a[j] = *reinterpret_cast<const float4 *>(cl.map_shared_rank(red, src + j) + off);
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (src + j < splits)
                s.x += a[j].x, s.y += a[j].y, s.z += a[j].z, s.w += a[j].w;
    }
    return s;
}

// Rows [row0, row1) of the tile: the splits' sums, the epilogue, one 8-byte store per four
// channels; a task is four channels of one row.
template <bool BF16, bool FAST>
__device__ __forceinline__ void finish_rows(const nnop__igemm_kparams &p, cg::cluster_group &cl,
                                            float *red, const float *chan, int m0, int n0, int row0,
                                            int row1)
{
    const int m_total = p.n * p.p * p.q, tasks = (row1 - row0) * (kBN / kVec);
    int eop0 = -1, eop1 = -1; // the ops whose per-element operands are loaded ahead
    for (int o = 0; o < p.n_ops; o++)
        if (element_operand(p.ops[o]) && eop1 < 0) {
            eop1 = eop0 < 0 ? -1 : o;
            eop0 = eop0 < 0 ? o : eop0;
        }
    for (int base = threadIdx.x; base < tasks; base += kGroup * kThreads) {
        float e[kGroup][kElemOps][kVec];
#pragma unroll
        for (int g = 0; g < kGroup; g++) { // the per-element operands, all loads in flight
            const int task = base + g * kThreads, row = row0 + task / (kBN / kVec);
            const int col = task % (kBN / kVec) * kVec, m = m0 + row, k0 = n0 + col;
            if (task >= tasks || m >= m_total || k0 >= p.k)
                continue;
            if (eop0 >= 0)
                load4(p.ops[eop0].p[0], p.ops[eop0].dtype, (int64_t)m * p.k + k0, e[g][0]);
            if (eop1 >= 0)
                load4(p.ops[eop1].p[0], p.ops[eop1].dtype, (int64_t)m * p.k + k0, e[g][1]);
        }
#pragma unroll
        for (int g = 0; g < kGroup; g++) {
            const int task = base + g * kThreads, row = row0 + task / (kBN / kVec);
            const int col = task % (kBN / kVec) * kVec, m = m0 + row, k0 = n0 + col;
            if (task >= tasks || m >= m_total || k0 >= p.k)
                continue;
            const float4 s4 = sum_ranks(cl, red, row * kRedStride + col, p.splits);
            float v[kVec] = {s4.x, s4.y, s4.z, s4.w};
            const int64_t i0 = (int64_t)m * p.k + k0;
            if (FAST) { // [ADD] [BIAS] [ReLU]: eop0 the add, the bias staged as op b's row 0
                const int b = eop0 + 1;
                const bool bias = b < p.n_ops && p.ops[b].kind == NNOP_EPI_BIAS;
                const bool relu = p.n_ops > 0 && p.ops[p.n_ops - 1].kind == NNOP_EPI_ACT;
#pragma unroll
                for (int q = 0; q < kVec; q++) {
                    if (eop0 >= 0)
                        v[q] += e[g][0][q];
                    if (bias)
                        v[q] += chan[b * kChanWords * kBN + col + q];
                    if (relu)
                        v[q] = nnop_k::act_k<1>(p.ops[p.n_ops - 1], v[q]);
                }
            }
            for (int o = 0; !FAST && o < p.n_ops; o++) {
                const int x = o == eop0 ? 0 : o == eop1 ? 1 : -1;
#pragma unroll
                for (int q = 0; q < kVec; q++)
                    v[q] = apply_op(p.ops[o], v[q], chan + o * kChanWords * kBN, col + q, x >= 0,
                                    x == 0 ? e[g][0][q] : e[g][1][q], i0 + q, k0 + q);
            }
            *reinterpret_cast<uint2 *>(static_cast<unsigned short *>(p.y) + i0) =
                    make_uint2(pack2<BF16>(v[0], v[1]), pack2<BF16>(v[2], v[3]));
        }
    }
}

#endif // sm_90

// Grid: (M tiles, N tiles, splits), clusters of (1, 1, splits): rank z sums its share of the
// reduction, then finishes rows [z 64 / splits, (z + 1) 64 / splits) of the tile.
template <bool BF16, bool FAST>
__global__ void __launch_bounds__(kThreads) igemm_conv_kernel(nnop__igemm_kparams p)
{
#if !defined(NNOP_IGEMM_DEVICE)
    __trap();
#else
    extern __shared__ uint4 smem_raw[];
    unsigned short *smem = reinterpret_cast<unsigned short *>(smem_raw);
    float *red = reinterpret_cast<float *>(smem_raw); // [kBM][kRedStride] sums
    float *chan = red + kBM * kRedStride;             // the ops' per-channel operands
    cg::cluster_group cl = cg::this_cluster();
    const int rank = (int)cl.block_rank();
    const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
    const int chunks = (p.c + kBK - 1) / kBK, steps = p.r * p.s * chunks;
    const int per = (steps + p.splits - 1) / p.splits;
    const int t0 = rank * per < steps ? rank * per : steps;
    const int t1 = t0 + per < steps ? t0 + per : steps;
    float acc[2][4][4];
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[mt][j][e] = 0.f;
    partial_sums<BF16>(p, m0, n0, t0, t1, chunks, smem, acc);
    stage_sums(acc, red);
    stage_channel_operands(p, n0, chan);
    cl.sync(); // every rank's sums staged and visible
    const int rows = kBM / p.splits;
    finish_rows<BF16, FAST>(p, cl, red, chan, m0, n0, rank * rows, rank * rows + rows);
    cl.sync(); // no block leaves while another still reads its shared memory
#endif
}

// wp[((k R + r) S + s) C + c] = w[k, c, r, s].
__global__ void igemm_weights_kernel(const unsigned short *w, unsigned short *wp, int K, int C,
                                     int R, int S, int64_t sk, int64_t sc, int64_t sr, int64_t ss)
{
    const int64_t total = (int64_t)K * R * S * C;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = i % C, s = i / C % S, r = i / C / S % R, k = i / C / S / R;
        wp[i] = w[k * sk + c * sc + r * sr + s * ss];
    }
}

typedef void (*igemm_fn)(nnop__igemm_kparams);

igemm_fn kernel_for(const nnop__igemm_kparams *p)
{
    if (p->fast)
        return p->dtype == 2 ? igemm_conv_kernel<true, true> : igemm_conv_kernel<false, true>;
    return p->dtype == 2 ? igemm_conv_kernel<true, false> : igemm_conv_kernel<false, false>;
}

// The epilogue's fast form: [ADD of y's dtype] [BIAS] [ReLU], each optional, in this order
// (the chain's canonical order puts residual adds before the bias).
int fast_form(const nnop__igemm_kparams *p)
{
    int o = 0;
    if (o < p->n_ops && p->ops[o].kind == NNOP_EPI_ADD && p->ops[o].dtype == p->dtype)
        o++;
    if (o < p->n_ops && p->ops[o].kind == NNOP_EPI_BIAS)
        o++;
    if (o < p->n_ops && p->ops[o].kind == NNOP_EPI_ACT && p->ops[o].act == 1) // ReLU
        o++;
    return o == p->n_ops;
}

cudaLaunchConfig_t launch_config(const nnop__igemm_kparams *p, cudaStream_t s,
                                 cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t cfg = {};
    const int64_t m = (int64_t)p->n * p->p * p->q;
    cfg.gridDim = dim3((unsigned)((m + kBM - 1) / kBM), (unsigned)((p->k + kBN - 1) / kBN),
                       (unsigned)p->splits);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = smem_bytes();
    cfg.stream = s;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = 1;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = (unsigned)p->splits;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

// The most splits worth having: doubled while the blocks stay within 1.25 waves of one a SM
// and each split keeps at least two stages of the reduction.
int choose_splits(const nnop__igemm_kparams *p, int sm_count)
{
    const int64_t tiles = nnop__igemm_tiles((int64_t)p->n * p->p * p->q, p->k);
    const int steps = p->r * p->s * ((p->c + kBK - 1) / kBK);
    int s = 1;
    while (s < kMaxSplits && tiles * s * 2 <= sm_count + sm_count / 4 && steps >= 4 * s)
        s *= 2;
    return s;
}

} // namespace

extern "C" int nnop__igemm_tiles(int64_t m, int k)
{
    return (int)(((m + kBM - 1) / kBM) * ((k + kBN - 1) / kBN));
}

extern "C" cudaError_t nnop__k_igemm_weights(const void *w, void *wp, int k, int c, int r, int s,
                                             const int64_t strides[4], cudaStream_t st)
{
    const int64_t total = (int64_t)k * c * r * s;
    const int blocks = (int)((total + 255) / 256 < 4096 ? (total + 255) / 256 : 4096);
    igemm_weights_kernel<<<blocks, 256, 0, st>>>(static_cast<const unsigned short *>(w),
                                                 static_cast<unsigned short *>(wp), k, c, r, s,
                                                 strides[0], strides[1], strides[2], strides[3]);
    return cudaGetLastError();
}

extern "C" cudaError_t nnop__igemm_prepare(nnop__igemm_kparams *p, int sm_count)
{
    p->fast = fast_form(p);
    const igemm_fn fn = kernel_for(p);
    cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem_bytes());
    if (e == cudaSuccess) // clusters of 16 are beyond the portable 8
        e = cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e != cudaSuccess)
        return e;
    // the largest split the device schedules, from the one the shape wants down
    for (p->splits = choose_splits(p, sm_count); p->splits >= 1; p->splits /= 2) {
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg = launch_config(p, 0, &attr);
        int clusters = 0;
        e = cudaOccupancyMaxActiveClusters(&clusters, fn, &cfg);
        if (e == cudaSuccess && clusters > 0)
            return cudaSuccess;
        (void)cudaGetLastError(); // a refused size is no error of the stream's
    }
    p->splits = 1;
    return cudaErrorNotSupported;
}

extern "C" cudaError_t nnop__k_igemm_conv(const nnop__igemm_kparams *p, cudaStream_t s)
{
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = launch_config(p, s, &attr);
    return cudaLaunchKernelEx(&cfg, kernel_for(p), *p);
}
