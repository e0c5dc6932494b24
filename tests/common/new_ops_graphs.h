/* new_ops_graphs.h: small graphs with one op of issue 15 each (node #1, after a ReLU), for the
 * tests that the CUDA backend refuses them by name (tests/unit/test_cuda_refusal.c without a
 * GPU, tests/gpu/test_gpu_new_ops.c with one). */
#ifndef NNOP_NEW_OPS_GRAPHS_H
#define NNOP_NEW_OPS_GRAPHS_H

#include <stdio.h>
#include <string.h>

#include "nnop_test.h"

enum {
    OP_MUL,
    OP_SUB,
    OP_DIV,
    OP_LN,
    OP_GN,
    OP_RMS,
    OP_CAT,
    OP_RESIZE,
    OP_DECONV,
    OP_HARDSWISH,
    OP_HARDSIGMOID,
    OP_MISH,
    OP_COUNT
};

static const char *const new_op_names[OP_COUNT] = {"mul",        "sub",         "div",
                                                   "layer_norm", "group_norm",  "rms_norm",
                                                   "concat",     "resize",      "conv_transpose",
                                                   "hardswish",  "hardsigmoid", "mish"};

/* x (NHWC 2 x 4 x 6 x 6) -> relu -> the op under test (node #1) -> output. */
static inline nnop_graph *new_op_graph(nnop_context *ctx, int op)
{
    static const float zeros[256];
    nnop_graph *g = NULL;
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 4, 6, 6);
    nnop_tensor_desc sd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 2, 4, 1, 1);
    nnop_tensor_desc wd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 4, 2, 2, 2);
    nnop_tensor_desc cd = nnop_tensor_1d(NNOP_F16, 4);
    nnop_resize_params rp;
    nnop_conv_transpose_params dp;
    nnop_value x, y, xs[2];
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    x = nnop_act(g, nnop_input(g, "x", &xd), NNOP_ACT_RELU, 0.0f);
    switch (op) {
    case OP_MUL:
        y = nnop_mul(g, x, nnop_input(g, "s", &sd));
        break;
    case OP_SUB:
        y = nnop_sub(g, x, nnop_input(g, "s", &sd));
        break;
    case OP_DIV:
        y = nnop_div(g, x, nnop_input(g, "s", &sd));
        break;
    case OP_LN:
        y = nnop_layer_norm(g, x, nnop_constant(g, "g", &cd, zeros), nnop_none(), NNOP_NORM_C,
                            1e-6f);
        break;
    case OP_GN:
        y = nnop_group_norm(g, x, 2, nnop_none(), nnop_none(), 1e-5f);
        break;
    case OP_RMS:
        y = nnop_rms_norm(g, x, nnop_none(), 1e-6f);
        break;
    case OP_CAT:
        xs[0] = x;
        xs[1] = x;
        y = nnop_concat(g, xs, 2);
        break;
    case OP_RESIZE:
        memset(&rp, 0, sizeof rp);
        rp.mode = NNOP_RESIZE_BILINEAR;
        rp.scale[0] = rp.scale[1] = 2.0;
        y = nnop_resize(g, x, &rp);
        break;
    case OP_DECONV:
        memset(&dp, 0, sizeof dp);
        dp.stride[0] = dp.stride[1] = 2;
        dp.dilation[0] = dp.dilation[1] = 1;
        dp.groups = 1;
        y = nnop_conv_transpose(g, x, nnop_constant(g, "w", &wd, zeros), &dp);
        break;
    default:
        y = nnop_act(g, x, (nnop_act_kind)(NNOP_ACT_HARDSWISH + (op - OP_HARDSWISH)), 0.0f);
        break;
    }
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
    return g;
}

/* The message compile leaves for graph op on the CUDA backend. */
static inline void new_op_refusal(int op, char *buf, size_t len)
{
    snprintf(buf, len,
             "NNOP_ERR_UNSUPPORTED: nnop_graph_compile: node #1 (%s): %s has no CUDA "
             "implementation yet; use the CPU backend",
             op >= OP_HARDSWISH ? "act" : new_op_names[op], new_op_names[op]);
}

#endif /* NNOP_NEW_OPS_GRAPHS_H */
