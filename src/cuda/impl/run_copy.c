/* run_copy.c: a step copied for an execution context (nnop_exec on the CUDA backend, ../exec.c).
 * Many contexts run one plan's steps at once, so whatever a run writes into a step (the
 * kernels' argument blocks, cuDNN's variant packs keyed by pointers, cuBLASLt's bias pointer)
 * must be each context's own; the engines, the weights and the descriptors a run only reads
 * stay the plan's. The steps keep their slot numbers: the context's own slot table says where
 * each slot lives for it. */
#include <string.h>

#include "cuda/impl/impl.h"

nnop_status nnop__step_run_copy(nnop_plan *p, const nnop__cuda_step *src, nnop__cuda_step *dst)
{
    nnop_status st = NNOP_OK;
    *dst = *src;
    dst->side = dst->wait_side = 0;
    dst->dnn = NULL;
    dst->lt = NULL;
    dst->gate = NULL;
    if (src->dnn && nnop__dnn_step_run_copy(src->dnn, &dst->dnn) != NNOP_OK)
        st = nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == NNOP_OK && src->lt)
        st = nnop__lt_step_run_copy(p->ctx, src->lt, &dst->lt);
    if (st == NNOP_OK && src->gate && !(dst->gate = nnop__gate_step_run_copy(src->gate)))
        st = nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    if (st != NNOP_OK)
        nnop__step_run_copy_free(dst);
    return st;
}

void nnop__step_run_copy_free(nnop__cuda_step *dst)
{
    nnop__dnn_step_destroy(dst->dnn);
    nnop__lt_step_destroy(dst->lt);
    nnop__free(dst->gate);
    dst->dnn = NULL;
    dst->lt = NULL;
    dst->gate = NULL;
}
