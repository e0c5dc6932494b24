/* test_gpu_branches.c: with NNOP_SIDE_STREAM=1 (ctest sets it), plans replayed as a CUDA
 * graph run a step whose output the next step does not read on a side stream, joined back
 * before its first reader (src/cuda/schedule).
 * Against the CPU reference, on graphs where that happens: a projection shortcut beside two
 * convs, a value read only at the end, one read by nothing (a graph output), and two
 * branches where the side step's input would be reused by the main stream's next output if
 * the buffers' liveness ignored the overlap. Odd sizes, 1x1 images, every dtype, both
 * layouts; large enough that the streams really overlap. */
#include "gpu_harness.h"

typedef enum shape_kind {
    PROJECTION,   /* ResNet's block: projection first, then three convs, the add last */
    TWO_BRANCHES, /* the side step reads a value whose buffer the next output could take */
    OUTPUT_ONLY   /* the side step writes a graph output nothing reads */
} shape_kind;

typedef struct branch_case {
    const char *name;
    shape_kind kind;
    nnop_dtype dt;
    nnop_layout lay;
    int64_t n, c, h, w, k, stride;
} branch_case;

static const branch_case cases[] = {
        {"projection_f16_nhwc_b1_56", PROJECTION, NNOP_F16, NNOP_NHWC, 1, 64, 56, 56, 128, 1},
        {"projection_f16_nhwc_odd_s2", PROJECTION, NNOP_F16, NNOP_NHWC, 3, 24, 13, 11, 40, 2},
        {"projection_bf16_nhwc_1x1", PROJECTION, NNOP_BF16, NNOP_NHWC, 2, 16, 1, 1, 24, 1},
        {"projection_f32_nchw_odd", PROJECTION, NNOP_F32, NNOP_NCHW, 2, 8, 9, 7, 16, 2},
        {"two_branches_f16_nhwc_b8", TWO_BRANCHES, NNOP_F16, NNOP_NHWC, 8, 64, 28, 28, 64, 1},
        {"two_branches_bf16_nchw_odd", TWO_BRANCHES, NNOP_BF16, NNOP_NCHW, 2, 16, 15, 9, 32, 1},
        {"two_branches_f32_nhwc_s2", TWO_BRANCHES, NNOP_F32, NNOP_NHWC, 4, 32, 20, 20, 32, 2},
        {"output_only_f16_nhwc", OUTPUT_ONLY, NNOP_F16, NNOP_NHWC, 4, 32, 17, 19, 48, 1},
        {"output_only_f32_nchw_1x1", OUTPUT_ONLY, NNOP_F32, NNOP_NCHW, 3, 8, 1, 1, 8, 1},
};

/* conv (r x r, stride, pad r/2) + bias, optionally + relu, weights scaled to keep O(1). */
static nnop_value conv(nnop_graph *g, const branch_case *bc, nnop_value x, int64_t c, int64_t k,
                       int64_t r, int64_t stride, uint64_t seed, int relu)
{
    nnop_tensor_desc wd = nnop_tensor_4d(bc->dt, bc->lay, k, c, r, r);
    nnop_tensor_desc kd = nnop_tensor_1d(bc->dt, k);
    nnop_conv_params p = {{r / 2, r / 2}, {stride, stride}, {1, 1}, 1};
    float s = 1.0f / sqrtf((float)(c * r * r));
    char wn[16], bn[16];
    snprintf(wn, sizeof wn, "w%u", (unsigned)seed);
    snprintf(bn, sizeof bn, "b%u", (unsigned)seed);
    x = nnop_conv(g, x, h_const(g, wn, &wd, seed, -s, s), &p);
    x = nnop_bias(g, x, h_const(g, bn, &kd, seed + 100, -0.5f, 0.5f));
    return relu ? nnop_act(g, x, NNOP_ACT_RELU, 0.0f) : x;
}

static void build_case(nnop_graph *g, const void *arg)
{
    const branch_case *bc = (const branch_case *)arg;
    nnop_tensor_desc xd = nnop_tensor_4d(bc->dt, bc->lay, bc->n, bc->c, bc->h, bc->w);
    nnop_value x = nnop_input(g, "x", &xd), a, b, y, side;
    int64_t k = bc->k, s = bc->stride;
    switch (bc->kind) {
    case PROJECTION:
        side = conv(g, bc, x, bc->c, k, 1, s, 1, 0);
        y = conv(g, bc, x, bc->c, k / 2, 1, 1, 2, 1);
        y = conv(g, bc, y, k / 2, k / 2, 3, s, 3, 1);
        y = conv(g, bc, y, k / 2, k, 1, 1, 4, 0);
        y = nnop_act(g, nnop_add(g, y, side), NNOP_ACT_RELU, 0.0f);
        break;
    case TWO_BRANCHES:
        a = conv(g, bc, x, bc->c, k, 3, 1, 1, 1);
        b = conv(g, bc, x, bc->c, k, 3, 1, 2, 1);
        side = conv(g, bc, a, k, k, 3, s, 3, 0); /* the last reader of a */
        y = conv(g, bc, b, k, k, 3, s, 4, 1);    /* its output could take a's buffer */
        y = conv(g, bc, y, k, k, 3, 1, 5, 1);
        y = conv(g, bc, y, k, k, 1, 1, 6, 0);
        y = nnop_act(g, nnop_add(g, y, side), NNOP_ACT_RELU, 0.0f);
        break;
    default: /* OUTPUT_ONLY */
        side = conv(g, bc, x, bc->c, k, 3, 1, 1, 1);
        y = conv(g, bc, x, bc->c, k, 3, 1, 2, 1);
        y = conv(g, bc, y, k, k, 3, 1, 3, 1);
        assert_int_equal(nnop_output(g, side, "tap"), NNOP_OK);
        break;
    }
    assert_int_equal(nnop_output(g, y, "y"), NNOP_OK);
}

static void run_case(void **state)
{
    const branch_case *bc = (const branch_case *)*state;
    h_run r;
    int rep;
    NNOP_TEST_REQUIRE_GPU();
    if (!getenv("NNOP_SIDE_STREAM") || strcmp(getenv("NNOP_SIDE_STREAM"), "1") != 0)
        fail_msg("%s", "run with NNOP_SIDE_STREAM=1 (ctest sets it): the side stream is off");
    for (rep = 0; rep < 3; rep++) { /* fresh inputs each time: a race shows on some */
        h_run_init(&r, bc->dt, (double)(bc->k * 9));
        r.seed = 1234 + 77 * (uint64_t)rep;
        r.copts.cuda_graph = 1;
        h_check_case(&r, bc->name, build_case, bc, "[side stream, joined");
    }
}

int main(void)
{
    return h_run_table("gpu_branches", cases, sizeof cases / sizeof cases[0], sizeof cases[0],
                       run_case);
}
