/* schedule.h: the schedule stage: which steps of a plan run on the context's side stream,
 * beside the main chain, and what that asks of the buffers. */
#ifndef NNOP_CUDA_SCHEDULE_H
#define NNOP_CUDA_SCHEDULE_H

#include "cuda/impl/impl.h"

/* Mark the steps of a CUDA-graph plan that go on the side stream (step.side, and
 * step.wait_side on the first step reading one) and make the side stream. A step goes there
 * when the next step does not read it: ResNet's projection shortcut runs beside the block's
 * first two convs. Nothing is marked without compile option cuda_graph, with
 * NNOP_SIDE_STREAM=0, or when values live in a concat's slices. */
nnop_status nnop__schedule_streams(nnop_plan *p);

/* Partition until which a side step may still be running (its first reader; n_parts when
 * none reads it): the last use of its inputs and output for the buffers' liveness. */
int32_t nnop__schedule_side_until(const nnop_plan *p, int32_t i);

#endif /* NNOP_CUDA_SCHEDULE_H */
