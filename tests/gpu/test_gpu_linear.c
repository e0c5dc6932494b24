/* test_gpu_linear.c: linear partitions on the GPU against the CPU reference: cuBLASLt with
 * its epilogues (bias, ReLU, tanh-GELU, batch-norm folded) in every dtype and policy, bias
 * as a constant or a graph input, odd sizes; chains cuBLASLt cannot express go to cuDNN or
 * the own kernel and still match. Batches up to 8 take the matrix-vector kernel (any chain),
 * larger ones and inputs over 12288 cuBLASLt. */
#include "gpu_harness.h"

typedef struct linear_case {
    const char *name;
    nnop_dtype dt;
    int64_t n, in, out;
    int bias;    /* 0 none, 1 constant, 2 graph input */
    int act;     /* nnop_act_kind, -1 none */
    int bn;      /* batch-norm with constant parameters after the bias */
    int w_input; /* weights as a graph input */
    nnop_engine_policy policy;
    int deterministic;
    const char *expect; /* substring the plan description must contain */
} linear_case;

#define F16  NNOP_F16
#define BF16 NNOP_BF16
#define F32  NNOP_F32
#define PP   NNOP_POLICY_PREFER_PRECOMPILED
#define PO   NNOP_POLICY_PRECOMPILED_ONLY
#define FA   NNOP_POLICY_FASTEST
#define RELU NNOP_ACT_RELU
#define GELU NNOP_ACT_GELU_TANH

/* one case per line reads as a table */
/* clang-format off */
static const linear_case cases[] = {
    {"fp16_bias_relu", F16, 32, 256, 128, 1, RELU, 0, 0, PP, 0, "cublasLt matmul, epilogue bias+relu"},
    {"bf16_bias_relu", BF16, 32, 256, 128, 1, RELU, 0, 0, PP, 0, "cublasLt matmul, epilogue bias+relu"},
    {"fp32_bias_relu_precompiled_only", F32, 32, 256, 128, 1, RELU, 0, 0, PO, 0, "cublasLt matmul, epilogue bias+relu"},
    {"fp16_resnet_fc_2048_to_1000", F16, 32, 2048, 1000, 1, -1, 0, 0, PO, 0, "cublasLt matmul, epilogue bias,"},
    {"fp16_odd_sizes_n11_37_to_19", F16, 11, 37, 19, 1, RELU, 0, 0, PP, 0, "cublasLt matmul"},
    {"fp32_odd_sizes_n9_37_to_19", F32, 9, 37, 19, 1, -1, 0, 0, PP, 0, "cublasLt matmul, epilogue bias,"},
    {"fp16_no_bias_no_act", F16, 9, 64, 32, 0, -1, 0, 0, PP, 0, "cublasLt matmul, epilogue none"},
    {"fp16_no_bias_relu", F16, 9, 64, 32, 0, RELU, 0, 0, PP, 0, "cublasLt matmul, epilogue relu"},
    {"fp16_bias_gelu_tanh", F16, 16, 128, 64, 1, GELU, 0, 0, PP, 0, "cublasLt matmul, epilogue bias+gelu_tanh"},
    {"bf16_bias_bn_relu_folded", BF16, 16, 128, 64, 1, RELU, 1, 0, PP, 0, "epilogue bias+relu, workspace"},
    {"fp16_runtime_bias", F16, 16, 128, 64, 2, RELU, 0, 0, PP, 0, "cublasLt matmul, epilogue bias+relu"},
    {"fp16_runtime_weights", F16, 16, 128, 64, 1, RELU, 0, 1, PP, 0, "cublasLt matmul"},
    {"fp16_deterministic", F16, 32, 512, 256, 1, RELU, 0, 0, PP, 1, "cublasLt matmul"},
    {"fp16_fastest_cublaslt_too", F16, 32, 256, 128, 1, RELU, 0, 0, FA, 0, "cublasLt matmul, epilogue bias+relu"},
    {"fp16_sigmoid_own_epilogue", F16, 16, 128, 64, 1, NNOP_ACT_SIGMOID, 0, 0, PP, 0, "split, cuBLASLt took the prefix"},
    {"fp32_sigmoid_precompiled_only", F32, 16, 128, 64, 1, NNOP_ACT_SIGMOID, 0, 0, PO, 0, "split, cuBLASLt took the prefix"},
    /* batch <= 8: the matrix-vector kernel (16-byte weight rows, or any row where in is odd) */
    {"fp16_gemv_resnet_fc_n1_2048_to_1000", F16, 1, 2048, 1000, 1, -1, 0, 0, PP, 0, "linear as matrix-vector"},
    {"bf16_gemv_n8_bias_relu", BF16, 8, 256, 129, 1, RELU, 0, 0, PP, 0, "linear as matrix-vector"},
    {"fp32_gemv_n3_odd_37_to_19", F32, 3, 37, 19, 1, -1, 0, 0, PP, 0, "linear as matrix-vector"},
    {"fp16_gemv_n1_odd_37_to_19_relu", F16, 1, 37, 19, 1, RELU, 0, 0, PP, 0, "linear as matrix-vector"},
    {"fp16_gemv_n2_bn_sigmoid", F16, 2, 128, 64, 1, NNOP_ACT_SIGMOID, 1, 0, PP, 0, "linear as matrix-vector"},
    {"fp16_gemv_n4_runtime_weights_no_bias", F16, 4, 96, 40, 0, GELU, 0, 1, PP, 0, "linear as matrix-vector"},
    {"fp32_gemv_n1_12288_inputs", F32, 1, 12288, 33, 2, -1, 0, 0, PO, 0, "linear as matrix-vector"},
    {"fp16_gemv_n1_12296_inputs_cublaslt", F16, 1, 12296, 33, 1, -1, 0, 0, PP, 0, "cublasLt matmul"},
};
/* clang-format on */

static void build_case(nnop_graph *g, const void *arg)
{
    const linear_case *lc = (const linear_case *)arg;
    nnop_tensor_desc xd = nnop_tensor_2d(lc->dt, lc->n, lc->in);
    nnop_tensor_desc wd = nnop_tensor_2d(lc->dt, lc->out, lc->in);
    nnop_tensor_desc kd = nnop_tensor_1d(lc->dt, lc->out);
    float s = 1.0f / sqrtf((float)lc->in);
    nnop_value x = nnop_input(g, "x", &xd), w, b = nnop_none(), y;
    w = lc->w_input ? nnop_input(g, "w", &wd) : h_const(g, "w", &wd, 41, -s, s);
    if (lc->bias)
        b = lc->bias == 2 ? nnop_input(g, "b", &kd) : h_const(g, "b", &kd, 42, -0.5f, 0.5f);
    y = nnop_linear(g, x, w, b);
    if (lc->bn)
        y = nnop_batchnorm(g, y, h_const(g, "gamma", &kd, 43, 0.5f, 1.5f),
                           h_const(g, "beta", &kd, 44, -0.5f, 0.5f),
                           h_const(g, "mean", &kd, 45, -0.5f, 0.5f),
                           h_const(g, "var", &kd, 46, 0.5f, 1.5f), 1e-5f);
    if (lc->act >= 0)
        y = nnop_act(g, y, (nnop_act_kind)lc->act, 0.0f);
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

static void run_case(void **state)
{
    const linear_case *lc = (const linear_case *)*state;
    h_run r;
    NNOP_TEST_REQUIRE_GPU();
    h_run_init(&r, lc->dt, (double)lc->in);
    r.gpu_opts.policy = lc->policy;
    r.gpu_opts.deterministic = lc->deterministic;
    h_check_case(&r, lc->name, build_case, lc, lc->expect);
}

int main(void)
{
    return h_run_table("gpu_linear", cases, sizeof cases / sizeof cases[0], sizeof cases[0],
                       run_case);
}
