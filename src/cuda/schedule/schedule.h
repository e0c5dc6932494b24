/* schedule.h: the schedule stage: which steps of a plan run on the context's side stream,
 * beside the main chain, and what that asks of the buffers. */
#ifndef NNOP_CUDA_SCHEDULE_H
#define NNOP_CUDA_SCHEDULE_H

#include "cuda/impl/impl.h"

/* Mark the steps of a CUDA-graph plan that go on the side stream (step.side, and
 * step.wait_side on the first step reading one) and make the side stream. A step goes there
 * when the next step does not read it (ResNet's projection shortcut, beside the block's first
 * two convs). Experimental, on only with NNOP_SIDE_STREAM=1: on the H200, ResNet-50 fp16 at
 * batch 1 took 0.316 ms with it and 0.296 without, at batch 32 0.969 and 0.954
 * (GPU log 2026-12-04-h200-f, in git history: docs/performance.md; not profiled: likely the
 * projection convs take SMs from convs on the critical path, and each join is a wait across the
 * graph's branches). Nothing is marked without compile option cuda_graph or when values live in a
 * concat's slices. */
nnop_status nnop__schedule_streams(nnop_plan *p);

/* Partition until which a side step may still be running (its first reader; n_parts when
 * none reads it): the last use of its inputs and output for the buffers' liveness. */
int32_t nnop__schedule_side_until(const nnop_plan *p, int32_t i);

#endif /* NNOP_CUDA_SCHEDULE_H */
