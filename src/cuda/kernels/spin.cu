// spin.cu: a kernel that waits ns nanoseconds on the GPU timer, queued ahead of timed runs
// (engine/timing.c) so that the host's cost of queuing them is not what is timed.
#include <stdint.h>

#include "cuda/kernels/kernels.h"

namespace
{

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

} // namespace

extern "C" cudaError_t nnop__k_spin(int64_t ns, cudaStream_t s)
{
    spin_kernel<<<1, 1, 0, s>>>((long long)ns);
    return cudaGetLastError();
}
