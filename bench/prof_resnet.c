/* prof_resnet.c: ResNet-50 (bench/resnet50_graph.c) as a small shared library for
 * bench/profile_kernels.py, which loads it with ctypes and runs it under torch.profiler, so
 * that CUPTI records every kernel nnop launches beside PyTorch's (the GPU machine has no
 * nsys). Public API only; the rest of the module's functions are in prof_common.c. */
#include "prof_common.h"
#include "resnet50_graph.h"

PROF_API int prof_init(int n, int autotune, int cuda_graph);

/* Build the network for batch n (autotune: time cuDNN's candidates; cuda_graph: replay the
 * plan as one CUDA graph) and fill the input with a constant; 0 on success. */
PROF_API int prof_init(int n, int autotune, int cuda_graph)
{
    if (prof_context(autotune) != 0)
        return 1;
    return prof_compile(bench_resnet50_graph(prof_ctx(), n), cuda_graph,
                        (size_t)n * 3 * 224 * 224 * 2, (size_t)n * 1000 * 2);
}
