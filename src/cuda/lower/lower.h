/* lower.h: the CUDA backend's lowering stage, as the stages above see it: a partition as the
 * canonical epilogue chain (chain.c) and the chain as a cuDNN operation graph (lower.c, on
 * the parts of lower_parts.h: descriptors.c, conv.c, pointwise.c, norm.c). The parts include
 * lower_parts.h, never this header, so the entry calls the parts and no part calls back. */
#ifndef NNOP_CUDA_LOWER_H
#define NNOP_CUDA_LOWER_H

#include "cuda/lower/lower_parts.h"

/* The whole chain as a cuDNN operation graph (operations only, not finalized as a graph). */
nnop_status nnop__lower_chain(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s);

#endif /* NNOP_CUDA_LOWER_H */
