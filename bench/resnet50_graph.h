/* resnet50_graph.h: the ResNet-50 graph shared by the benchmarks. */
#ifndef NNOP_BENCH_RESNET50_GRAPH_H
#define NNOP_BENCH_RESNET50_GRAPH_H

#include "nnop/nnop.h"

/* ResNet-50 for batch n (fp16 NHWC 3x224x224 input "x", output "logits" 1000); exits on
 * failure, as a benchmark may. */
nnop_graph *bench_resnet50_graph(nnop_context *ctx, int64_t n);
/* Keep the weights of the next build (host memory, never freed) and replay them in later
 * builds, which then cost only the copies into the graph. */
void bench_resnet50_keep_weights(void);

#endif
