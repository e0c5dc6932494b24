/* test_cudnn_version_gates.c: what the CUDA backend asks of the loaded cuDNN by its version,
 * without a GPU (issue 48). nnop runs on cuDNN 9.0 and later (NNOP_CUDNN_MIN_VERSION); the
 * engine config's workspace query (CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE) exists from 9.2 only,
 * so on 9.0 and 9.1 a candidate's workspace comes from its execution plan, and the config is
 * never asked (engine/plans.c: nnop__cfg_workspace_way, nnop__dnn_cfg_workspace). */
#include <string.h>

#include "nnop_test.h"

#ifdef NNOP_HAVE_CUDA
#include "cuda/engine/engine.h"

static void test_floor_is_9_0(void **state)
{
    (void)state;
    assert_int_equal(NNOP_CUDNN_MIN_VERSION, 90000);
    assert_int_equal(NNOP_CFG_WORKSPACE_MIN, 90200);
}

static void test_plan_path_below_9_2(void **state)
{
    static const size_t plan[] = {90000, 90001, 90100, 90101, 90199};
    static const size_t cfg[] = {90200, 90201, 90500, 91400, 91900, 100000};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof plan / sizeof plan[0]; i++)
        assert_int_equal(nnop__cfg_workspace_way(plan[i]), NNOP_WS_FROM_PLAN);
    for (i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        assert_int_equal(nnop__cfg_workspace_way(cfg[i]), NNOP_WS_FROM_CONFIG);
    /* a context whose cuDNN version is unknown (0: not loaded) never asks the config */
    assert_int_equal(nnop__cfg_workspace_way(0), NNOP_WS_FROM_PLAN);
}

/* On a context whose loaded cuDNN is 9.0 or 9.1 the config is not asked: 0, *ws untouched.
 * From 9.2 it is; a config cuDNN cannot answer for (here none at all) is 0 as well, and the
 * selection falls back to the plan's answer. */
static void test_config_not_asked_on_9_0(void **state)
{
    static struct nnop__cuda_ctx cuda;
    static nnop_context ctx;
    int64_t ws = 12345;
    (void)state;
    memset(&cuda, 0, sizeof cuda);
    memset(&ctx, 0, sizeof ctx);
    ctx.cuda = &cuda;
    cuda.cudnn_version = 90000;
    assert_int_equal(nnop__dnn_cfg_workspace(&ctx, NULL, &ws), 0);
    cuda.cudnn_version = 90101;
    assert_int_equal(nnop__dnn_cfg_workspace(&ctx, NULL, &ws), 0);
    assert_int_equal(ws, 12345);
    cuda.cudnn_version = 91900; /* asked: cuDNN (or its stand-in) refuses a NULL config */
    assert_int_equal(nnop__dnn_cfg_workspace(&ctx, NULL, &ws), 0);
    assert_int_equal(ws, 12345);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_floor_is_9_0),
            cmocka_unit_test(test_plan_path_below_9_2),
            cmocka_unit_test(test_config_not_asked_on_9_0),
    };
    return cmocka_run_group_tests_name("cudnn_version_gates", tests, NULL, NULL);
}

#else /* a build without CUDA asks nothing of cuDNN */
static void test_cudnn_version_gates_need_cuda_build(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cudnn_version_gates_need_cuda_build)};
    return cmocka_run_group_tests_name("cudnn_version_gates", tests, NULL, NULL);
}
#endif
