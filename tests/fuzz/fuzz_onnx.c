/* fuzz_onnx.c: libFuzzer target for the ONNX importer (nnop_onnx). Whatever the bytes, a load
 * gives NNOP_OK and a graph, or another status, no graph and a message: never a crash, an
 * out-of-bounds access or an allocation without bound. A model that loads is loaded again in
 * f16 NHWC at batch 2 (the layout and dtype conversions) and compiled on the CPU backend; the
 * bytes are read as a TensorProto too (the test data reader). Seeds: tests/fuzz/corpus/onnx,
 * written by tests/fuzz/make_onnx_seeds.py. */
#include <stdint.h>
#include <stdlib.h>

#include "nnop/nnop_onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static nnop_context *cpu_context(void)
{
    static nnop_context *ctx;
    if (!ctx) {
        nnop_context_options o;
        nnop_context_options_init(&o);
        o.backend = NNOP_BACKEND_CPU;
        if (nnop_context_create(&o, &ctx) != NNOP_OK)
            abort();
    }
    return ctx;
}

/* one load: the contract of nnop_onnx_load_memory, then the graph compiled (any status) */
static int load(const uint8_t *data, size_t size, nnop_dtype dt, nnop_layout layout, int64_t batch)
{
    nnop_onnx_options o;
    nnop_graph *g = (nnop_graph *)&o; /* not NULL: must come back NULL on failure */
    nnop_plan *p = NULL;
    nnop_status s;
    nnop_onnx_options_init(&o);
    o.dtype = dt;
    o.layout = layout;
    o.batch = batch;
    s = nnop_onnx_load_memory(cpu_context(), data, size, &o, &g);
    if (s != NNOP_OK) {
        if (g != NULL || !nnop_onnx_last_error()[0])
            abort();
        return 0;
    }
    if (!g || nnop_onnx_last_error()[0])
        abort();
    if (nnop_graph_compile(g, NULL, &p) == NNOP_OK)
        nnop_plan_destroy(p);
    nnop_graph_destroy(g);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nnop_tensor_desc d;
    void *buf = NULL;
    char name[16];
    if (load(data, size, NNOP_F32, NNOP_NCHW, 1))
        load(data, size, NNOP_F16, NNOP_NHWC, 2);
    if (nnop_onnx_tensor_read(data, size, NNOP_F32, &d, &buf, name, sizeof name) == NNOP_OK) {
        if (!buf && nnop_tensor_bytes(&d))
            abort();
        nnop_onnx_free(buf);
    }
    return 0;
}
