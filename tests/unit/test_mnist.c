/* test_mnist.c: the bundled MNIST classifiers through nnop.
 *
 * CPU reference backend (runs everywhere): each model reaches the test accuracy PyTorch
 * recorded at training (and at least 98% lenet, 98.5% resnet), predicts the same class as
 * PyTorch for at least 99.9% of the 2,000 test digits, and its logits are close to PyTorch's.
 * GPU (skipped without one; fails instead when NNOP_REQUIRE_GPU=1): in fp32 and fp16 the
 * predictions equal the CPU reference's on at least 99.9% of the digits. */
#include "nnop_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NNOP_HAVE_EXAMPLES_SUPPORT

#include "mnist.h"
#include "safetensors.h"

#define DATA_DIR NNOP_EXAMPLES_DIR "/mnist"
#define BATCH    500
/* Agreement needed between two runs of one model: 99.9% of the digits. */
#define MIN_AGREEMENT 0.999

static mnist_set g_test;
static int *g_cpu_pred[2]; /* per model, computed once */
static float *g_cpu_logits[2];

static int setup(void **state)
{
    char err[MNIST_ERROR_LEN];
    (void)state;
    if (mnist_load(DATA_DIR, "test", &g_test, err, sizeof err) != NNOP_OK) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    int m;
    (void)state;
    for (m = 0; m < 2; m++) {
        free(g_cpu_pred[m]);
        free(g_cpu_logits[m]);
    }
    mnist_free(&g_test);
    return 0;
}

static safetensors_file *open_weights(mnist_model_kind m)
{
    char path[1024], err[SAFETENSORS_ERROR_LEN];
    safetensors_file *w = NULL;
    snprintf(path, sizeof path, "%s/%s.safetensors", DATA_DIR, mnist_model_name(m));
    if (safetensors_open(path, &w, err, sizeof err) != NNOP_OK)
        fail_msg("%s", err);
    return w;
}

/* Classify every test digit with model m in dtype t on ctx; fills pred (and logits as
 * float32 when not NULL). */
static void classify(nnop_context *ctx, mnist_model_kind m, nnop_dtype t, int *pred, float *logits)
{
    safetensors_file *w = open_weights(m);
    nnop_graph *g = NULL;
    nnop_plan *plan = NULL;
    char err[MNIST_ERROR_LEN];
    size_t es = nnop_dtype_size(t);
    size_t xn = (size_t)BATCH * MNIST_PIXELS, yn = (size_t)BATCH * MNIST_CLASSES;
    float *xf = (float *)malloc(xn * sizeof(float)), *yf = (float *)malloc(yn * sizeof(float));
    void *xt = malloc(xn * es), *yt = malloc(yn * es), *dx = NULL, *dy = NULL;
    nnop_status st;
    int first, j;
    assert_true(xf && yf && xt && yt);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    st = mnist_build(g, ctx, m, w, t, BATCH, err, sizeof err);
    if (st != NNOP_OK)
        fail_msg("%s", err);
    st = nnop_graph_compile(g, NULL, &plan);
    if (st != NNOP_OK)
        fail_msg("compile %s: %s: %s", mnist_model_name(m), nnop_status_string(st),
                 nnop_context_last_error(ctx));
    nnop_graph_destroy(g);
    assert_int_equal(nnop_malloc(ctx, xn * es, &dx), NNOP_OK);
    assert_int_equal(nnop_malloc(ctx, yn * es, &dy), NNOP_OK);
    for (first = 0; first < g_test.count; first += BATCH) {
        int n = g_test.count - first < BATCH ? g_test.count - first : BATCH;
        const void *ins[1];
        void *outs[1];
        memset(xf, 0, xn * sizeof(float));
        mnist_to_input(g_test.pixels + (size_t)first * MNIST_PIXELS, n, xf);
        assert_int_equal(nnop_convert(NNOP_F32, xf, t, xt, (int64_t)xn), NNOP_OK);
        assert_int_equal(nnop_copy_in(ctx, dx, xt, xn * es), NNOP_OK);
        ins[0] = dx, outs[0] = dy;
        st = nnop_plan_execute(plan, ins, outs);
        if (st != NNOP_OK)
            fail_msg("execute: %s: %s", nnop_status_string(st), nnop_context_last_error(ctx));
        assert_int_equal(nnop_copy_out(ctx, yt, dy, yn * es), NNOP_OK);
        assert_int_equal(nnop_convert(t, yt, NNOP_F32, yf, (int64_t)yn), NNOP_OK);
        for (j = 0; j < n; j++) {
            pred[first + j] = mnist_argmax(NNOP_F32, yf + (size_t)j * MNIST_CLASSES);
            if (logits)
                memcpy(logits + (size_t)(first + j) * MNIST_CLASSES, yf + (size_t)j * MNIST_CLASSES,
                       MNIST_CLASSES * sizeof(float));
        }
    }
    nnop_free(ctx, dx);
    nnop_free(ctx, dy);
    nnop_plan_destroy(plan);
    safetensors_close(w);
    free(xf), free(yf), free(xt), free(yt);
}

static int count_correct(const int *pred)
{
    int i, c = 0;
    for (i = 0; i < g_test.count; i++)
        c += pred[i] == g_test.labels[i];
    return c;
}

static int count_same(const int *a, const int *b)
{
    int i, c = 0;
    for (i = 0; i < g_test.count; i++)
        c += a[i] == b[i];
    return c;
}

/* The CPU reference predictions of model m (computed on first use). */
static const int *cpu_predictions(mnist_model_kind m)
{
    if (!g_cpu_pred[m]) {
        nnop_context *ctx = nnop_test_cpu_context();
        g_cpu_pred[m] = (int *)malloc((size_t)g_test.count * sizeof(int));
        g_cpu_logits[m] = (float *)malloc((size_t)g_test.count * MNIST_CLASSES * sizeof(float));
        assert_true(g_cpu_pred[m] && g_cpu_logits[m]);
        classify(ctx, m, NNOP_F32, g_cpu_pred[m], g_cpu_logits[m]);
        nnop_context_destroy(ctx);
    }
    return g_cpu_pred[m];
}

static void check_cpu(mnist_model_kind m, double floor_accuracy)
{
    const int *pred = cpu_predictions(m);
    const float *logits = g_cpu_logits[m];
    safetensors_file *w = open_weights(m), *tl = NULL;
    const char *recorded_text = safetensors_metadata(w, "test_accuracy");
    unsigned char *torch_pred = NULL;
    int torch_count = 0, correct = count_correct(pred), torch_correct = 0, same = 0, i;
    double acc = (double)correct / g_test.count, recorded, max_diff = 0.0, max_logit = 0.0;
    char path[1024], err[SAFETENSORS_ERROR_LEN];
    int64_t lshape[2];
    float *tlog;

    assert_non_null(recorded_text);
    recorded = atof(recorded_text);
    snprintf(path, sizeof path, "%s/%s.torch_pred", DATA_DIR, mnist_model_name(m));
    if (mnist_read_idx1(path, g_test.count, MNIST_CLASSES, &torch_pred, &torch_count, err,
                        sizeof err) != NNOP_OK)
        fail_msg("%s", err);
    for (i = 0; i < g_test.count; i++) {
        same += torch_pred[i] == pred[i];
        torch_correct += torch_pred[i] == g_test.labels[i];
    }

    /* logits against PyTorch's */
    snprintf(path, sizeof path, "%s/%s.torch_logits.safetensors", DATA_DIR, mnist_model_name(m));
    if (safetensors_open(path, &tl, err, sizeof err) != NNOP_OK)
        fail_msg("%s", err);
    lshape[0] = g_test.count, lshape[1] = MNIST_CLASSES;
    tlog = (float *)malloc((size_t)g_test.count * MNIST_CLASSES * sizeof(float));
    assert_non_null(tlog);
    if (safetensors_read_f32(tl, "logits", 2, lshape, tlog, err, sizeof err) != NNOP_OK)
        fail_msg("%s", err);
    for (i = 0; i < g_test.count * MNIST_CLASSES; i++) {
        double d = fabs((double)logits[i] - (double)tlog[i]);
        max_diff = d > max_diff ? d : max_diff;
        max_logit = fabs(tlog[i]) > max_logit ? fabs(tlog[i]) : max_logit;
    }
    print_message("%s on the CPU reference: accuracy %.2f%% (%d/%d); PyTorch recorded %.2f%% "
                  "(%d/%d); same prediction on %d/%d; logits max |diff| %.2e (max |logit| "
                  "%.1f)\n",
                  mnist_model_name(m), 100.0 * acc, correct, g_test.count, 100.0 * recorded,
                  torch_correct, g_test.count, same, g_test.count, max_diff, max_logit);

    /* the recorded figure is the one of the committed predictions */
    assert_true(fabs(recorded - (double)torch_correct / g_test.count) < 1e-4);
    assert_true(acc >= floor_accuracy);
    /* reaches the recorded accuracy, up to the 0.1% of digits allowed to differ */
    assert_true(correct >= torch_correct - (int)((1.0 - MIN_AGREEMENT) * g_test.count));
    assert_true(same >= (int)ceil(MIN_AGREEMENT * g_test.count));
    assert_true(max_diff <= 1e-3 * (1.0 + max_logit));

    free(tlog);
    free(torch_pred);
    safetensors_close(tl);
    safetensors_close(w);
}

static void test_cpu_lenet(void **state)
{
    (void)state;
    check_cpu(MNIST_LENET, 0.98);
}

static void test_cpu_resnet(void **state)
{
    (void)state;
    check_cpu(MNIST_RESNET, 0.985);
}

static void check_gpu(mnist_model_kind m, nnop_dtype t, double floor_accuracy)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    const int *ref;
    int *pred, same, correct;
    nnop_status st;
    NNOP_TEST_REQUIRE_GPU();
    ref = cpu_predictions(m);
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CUDA;
    st = nnop_context_create(&o, &ctx);
    if (st != NNOP_OK)
        fail_msg("CUDA context: %s: %s", nnop_status_string(st), nnop_context_create_error());
    pred = (int *)malloc((size_t)g_test.count * sizeof(int));
    assert_non_null(pred);
    classify(ctx, m, t, pred, NULL);
    same = count_same(pred, ref);
    correct = count_correct(pred);
    print_message("%s on the GPU in %s: accuracy %.2f%% (%d/%d), same prediction as the CPU "
                  "reference on %d/%d\n",
                  mnist_model_name(m), t == NNOP_F16 ? "f16" : "f32",
                  100.0 * correct / g_test.count, correct, g_test.count, same, g_test.count);
    assert_true(same >= (int)ceil(MIN_AGREEMENT * g_test.count));
    assert_true((double)correct / g_test.count >= floor_accuracy);
    free(pred);
    nnop_context_destroy(ctx);
}

static void test_gpu_lenet_f32(void **state)
{
    (void)state;
    check_gpu(MNIST_LENET, NNOP_F32, 0.98);
}

static void test_gpu_lenet_f16(void **state)
{
    (void)state;
    check_gpu(MNIST_LENET, NNOP_F16, 0.98);
}

static void test_gpu_resnet_f32(void **state)
{
    (void)state;
    check_gpu(MNIST_RESNET, NNOP_F32, 0.985);
}

static void test_gpu_resnet_f16(void **state)
{
    (void)state;
    check_gpu(MNIST_RESNET, NNOP_F16, 0.985);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cpu_lenet),      cmocka_unit_test(test_cpu_resnet),
            cmocka_unit_test(test_gpu_lenet_f32),  cmocka_unit_test(test_gpu_lenet_f16),
            cmocka_unit_test(test_gpu_resnet_f32), cmocka_unit_test(test_gpu_resnet_f16),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

#else /* built without the examples' support library (no cJSON) */

int main(void)
{
    return nnop_test_main_without_examples_support();
}

#endif
