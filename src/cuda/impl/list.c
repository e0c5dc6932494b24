/* list.c: the implementation list: the ways of running a partition, in the order the compile
 * tries them; the first entry that fits and builds wins (a refusal passes its reason to the
 * next). A new way of running a partition is one file with its nnop__impl and one line here,
 * at the place in the order where it should be preferred. */
#include "cuda/impl/impl.h"

const nnop__impl *const nnop__impls[] = {
        &nnop__impl_stem_kernel,  /* own tensor-core stem conv (stem.c) */
        &nnop__impl_own_gemv,     /* linear layers at batch <= 8: the matrix-vector kernel */
        &nnop__impl_blaslt,       /* linear [+ bias] [+ ReLU/GELU] on cuBLASLt, longest prefix */
        &nnop__impl_own_linear,   /* linear layers cuBLASLt refused */
        &nnop__impl_depthwise,    /* depthwise convs (cuDNN took milliseconds on sm_90) */
        &nnop__impl_gate,         /* squeeze-excitation gates: two 1x1 convs on 1x1 images */
        &nnop__impl_igemm,        /* small 16-bit convs: the split-K implicit GEMM */
        &nnop__impl_cudnn_dgrad,  /* transposed convs as cuDNN's data-gradient conv */
        &nnop__impl_deconv,       /* transposed convs cuDNN refused: the own gather kernel */
        &nnop__impl_cudnn_graph,  /* the whole chain as one cuDNN graph */
        &nnop__impl_cudnn_prefix, /* the longest prefix cuDNN takes; the rest split off */
        &nnop__impl_own_epilogue, /* pointwise partitions, split-off epilogues included */
        &nnop__impl_cudnn_norm,   /* layer and RMS norm as cuDNN's norm-forward */
        &nnop__impl_norm,         /* layer, group and RMS norm; what cuDNN refused */
        &nnop__impl_resize,       /* nearest and bilinear resize */
        &nnop__impl_concat,       /* channel concat: a copy per input into its slice */
        &nnop__impl_lrn,          /* local response normalization across channels */
        &nnop__impl_shuffle,      /* channel shuffle: a copy per group */
        &nnop__impl_slice,        /* channel slice: one copy */
        &nnop__impl_own_kernel,   /* pooling, global average pooling, softmax, flatten */
        NULL};
