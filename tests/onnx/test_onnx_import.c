/* test_onnx_import: nnop_onnx's API on a small model built here with protobuf-c (conv, bias,
 * relu, max pool, global average pool, flatten, gemm, softmax, with the Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape subgraph exporters write before the classifier), and hostile
 * files: every truncation, byte flips, garbage, a cycle, a lying initializer. Each must be
 * refused with a message and no graph, never crash (run under ASan in CI). The model's
 * symbolic batch runs as a batch range (issue 49). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop/nnop_onnx.h"
#include "onnx.pb-c.h"

static int failures;

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, #c,  \
                    nnop_onnx_last_error());                                                       \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------- building a model */
typedef struct builder {
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto os;
    Onnx__OperatorSetIdProto *osp[1];
    Onnx__NodeProto nodes[16];
    Onnx__NodeProto *nodep[16];
    Onnx__AttributeProto attrs[32];
    Onnx__AttributeProto *attrp[32];
    int nattr;
    Onnx__TensorProto inits[8];
    Onnx__TensorProto *initp[8];
    Onnx__ValueInfoProto in, out;
    Onnx__ValueInfoProto *inp[1], *outp[1];
    Onnx__TypeProto in_t, out_t;
    Onnx__TypeProto__Tensor in_tt, out_tt;
    Onnx__TensorShapeProto in_s;
    Onnx__TensorShapeProto__Dimension dims[4];
    Onnx__TensorShapeProto__Dimension *dimp[4];
    char *strs[64][3];
    float wconv[4 * 3 * 3 * 3], bconv[4], wfc[10 * 4], bfc[10];
    int64_t shape_dims[4][4];
    int64_t idx0, unsq_axes;
    /* external data (variants 6 to 10): location, offset, length of each float initializer */
    Onnx__StringStringEntryProto ext[4][3];
    Onnx__StringStringEntryProto *extp[4][3];
    char ext_text[4][2][24];
} builder;

static void node(builder *b, int k, const char *op, const char *name, char **in, size_t nin,
                 char **out, size_t nout)
{
    Onnx__NodeProto *n = &b->nodes[k];
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = (char *)name;
    n->input = in;
    n->n_input = nin;
    n->output = out;
    n->n_output = nout;
    b->nodep[k] = n;
}

static Onnx__AttributeProto *attr_ints(builder *b, const char *name, int64_t *v, size_t n)
{
    Onnx__AttributeProto *a = &b->attrs[b->nattr];
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->ints = v;
    a->n_ints = n;
    b->attrp[b->nattr++] = a;
    return a;
}

static Onnx__AttributeProto *attr_int(builder *b, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = &b->attrs[b->nattr];
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    b->attrp[b->nattr++] = a;
    return a;
}

static void init_f(builder *b, int k, const char *name, float *data, const int64_t *dims, size_t nd,
                   size_t n)
{
    Onnx__TensorProto *t = &b->inits[k];
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = 1;
    t->dims = (int64_t *)dims;
    t->n_dims = nd;
    t->float_data = data;
    t->n_float_data = n;
    b->initp[k] = t;
}

static void init_i(builder *b, int k, const char *name, int64_t *data, const int64_t *dims,
                   size_t nd, size_t n)
{
    Onnx__TensorProto *t = &b->inits[k];
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = 7;
    t->dims = (int64_t *)dims;
    t->n_dims = nd;
    t->int64_data = data;
    t->n_int64_data = n;
    b->initp[k] = t;
}

static char *S[] = {"x",  "W",  "B",     "c",    "r",  "p",  "g",      "shp",  "i0",  "n",     "ax",
                    "nu", "m1", "shape", "flat", "Wf", "Bf", "logits", "prob", "sh2", "unused"};
enum { X, W, B, C, R, P, G, SHP, I0, N, AX, NU, M1, SHAPE, FLAT, WF, BF, LOGITS, PROB, SH2 };

/* Variants 6 to 10: the four float initializers' bytes in a file beside the model (raw
 * little-endian floats, each after a 16-byte gap so no offset is 0), as torch.onnx.export
 * writes model.onnx.data. 6: right; 7: the location through '..'; 8: B's length one short;
 * 9: a missing file; 10: an absolute location. Variant 6 writes EXT_WEIGHTS in the working
 * directory. */
#define EXT_WEIGHTS "test_onnx_import_weights.bin"
static void externalize(builder *b, int variant)
{
    static const char *where[] = {EXT_WEIGHTS, "../" EXT_WEIGHTS, EXT_WEIGHTS,
                                  "test_onnx_import_missing.bin", "/" EXT_WEIGHTS};
    static const char zeros[16] = {0};
    FILE *f = variant == 6 ? fopen(EXT_WEIGHTS, "wb") : NULL;
    long long offset = 0;
    int k, e;
    for (k = 0; k < 4; k++) {
        Onnx__TensorProto *t = &b->inits[k];
        size_t bytes = t->n_float_data * sizeof(float);
        offset += sizeof zeros;
        if (f) {
            fwrite(zeros, 1, sizeof zeros, f);
            fwrite(t->float_data, 1, bytes, f);
        }
        snprintf(b->ext_text[k][0], sizeof b->ext_text[k][0], "%lld", offset);
        snprintf(b->ext_text[k][1], sizeof b->ext_text[k][1], "%zu",
                 bytes - (variant == 8 && k == 1 ? 1 : 0));
        offset += (long long)bytes;
        for (e = 0; e < 3; e++) {
            onnx__string_string_entry_proto__init(&b->ext[k][e]);
            b->extp[k][e] = &b->ext[k][e];
        }
        b->ext[k][0].key = "location";
        b->ext[k][0].value = (char *)where[variant - 6];
        b->ext[k][1].key = "offset";
        b->ext[k][1].value = b->ext_text[k][0];
        b->ext[k][2].key = "length";
        b->ext[k][2].value = b->ext_text[k][1];
        t->external_data = b->extp[k];
        t->n_external_data = 3;
        t->has_data_location = 1;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
        t->float_data = NULL;
        t->n_float_data = 0;
    }
    if (f)
        fclose(f);
}

/* the model, serialized into a malloc'ed buffer */
static uint8_t *make_model(size_t *len, int variant)
{
    static const int64_t wdims[4] = {4, 3, 3, 3}, bdims[1] = {4}, fdims[2] = {10, 4}, fbd[1] = {10},
                         one[1] = {1};
    static int64_t pads[4] = {1, 1, 1, 1}, k2[2] = {2, 2}, minus1 = -1;
    static const int64_t huge[1] = {(int64_t)1 << 39}, two[1] = {2};
    static int64_t big = (int64_t)1 << 62, wide[2] = {1 << 14, 1 << 14};
    builder *b = (builder *)calloc(1, sizeof *b);
    uint8_t *buf;
    int k;
    static char *io[40][4];
    for (k = 0; k < 4 * 3 * 3 * 3; k++)
        b->wconv[k] = (float)((k * 7) % 11 - 5) / 8.0f;
    for (k = 0; k < 4; k++)
        b->bconv[k] = 0.1f * (float)k;
    for (k = 0; k < 40; k++)
        b->wfc[k] = (float)((k * 5) % 9 - 4) / 4.0f;
    for (k = 0; k < 10; k++)
        b->bfc[k] = 0.05f * (float)k;
    b->idx0 = 0;
    b->unsq_axes = 0;
    onnx__model_proto__init(&b->m);
    onnx__graph_proto__init(&b->g);
    onnx__operator_set_id_proto__init(&b->os);
    b->os.has_version = 1;
    b->os.version = 13;
    b->osp[0] = &b->os;
    b->m.has_ir_version = 1;
    b->m.ir_version = 7;
    b->m.opset_import = b->osp;
    b->m.n_opset_import = 1;
    b->m.graph = &b->g;
    /* x: [N, 3, 8, 8] with a symbolic batch */
    onnx__value_info_proto__init(&b->in);
    onnx__type_proto__init(&b->in_t);
    onnx__type_proto__tensor__init(&b->in_tt);
    onnx__tensor_shape_proto__init(&b->in_s);
    for (k = 0; k < 4; k++) {
        onnx__tensor_shape_proto__dimension__init(&b->dims[k]);
        b->dimp[k] = &b->dims[k];
        if (k == 0) {
            b->dims[k].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            b->dims[k].dim_param = "batch";
        } else {
            b->dims[k].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            b->dims[k].dim_value = k == 1 ? 3 : 8;
        }
    }
    b->in_s.dim = b->dimp;
    b->in_s.n_dim = 4;
    b->in_tt.has_elem_type = 1;
    b->in_tt.elem_type = 1;
    b->in_tt.shape = &b->in_s;
    b->in_t.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    b->in_t.tensor_type = &b->in_tt;
    b->in.name = S[X];
    b->in.type = &b->in_t;
    b->inp[0] = &b->in;
    b->g.input = b->inp;
    b->g.n_input = 1;
    onnx__value_info_proto__init(&b->out);
    b->out.name = S[PROB];
    b->outp[0] = &b->out;
    b->g.output = b->outp;
    b->g.n_output = 1;
    init_f(b, 0, S[W], b->wconv, wdims, 4, 36 * 3);
    init_f(b, 1, S[B], b->bconv, bdims, 1, 4);
    init_f(b, 2, S[WF], b->wfc, fdims, 2, 40);
    init_f(b, 3, S[BF], b->bfc, fbd, 1, 10);
    init_i(b, 4, S[I0], &b->idx0, one, 0, 1);
    init_i(b, 5, S[NU], &minus1, one, 1, 1);
    init_i(b, 6, S[AX], &b->unsq_axes, one, 1, 1);
    b->g.initializer = b->initp;
    b->g.n_initializer = 7;
    if (variant == 1) /* an initializer whose dims claim 2^39 elements and hold 4 */
        b->inits[1].dims = (int64_t *)huge;
    if (variant == 4) /* the Reshape target [N, 2^62] (fuzz_onnx: the product overflowed) */
        b->inits[5].int64_data = &big;
    if (variant == 5) { /* 2^28 floats folded from a 40-byte shape (fuzz_onnx: 3 GB asked) */
        init_i(b, 7, S[SH2], wide, two, 1, 2);
        b->g.n_initializer = 8;
    }
    if (variant >= 6)
        externalize(b, variant);
    /* conv -> relu -> maxpool -> gap -> Shape/Gather/Unsqueeze/Concat -> Reshape -> gemm ->
     * softmax */
    io[0][0] = S[X], io[0][1] = S[W], io[0][2] = S[B], io[0][3] = S[C];
    node(b, 0, "Conv", "conv1", io[0], 3, &io[0][3], 1);
    b->nodes[0].attribute = &b->attrp[b->nattr];
    attr_ints(b, "pads", pads, 4);
    b->nodes[0].n_attribute = 1;
    io[1][0] = S[C], io[1][1] = S[R];
    node(b, 1, variant == 2 ? "NoSuchOp" : "Relu", "relu1", io[1], 1, &io[1][1], 1);
    io[2][0] = S[R], io[2][1] = S[P];
    node(b, 2, "MaxPool", "pool1", io[2], 1, &io[2][1], 1);
    b->nodes[2].attribute = &b->attrp[b->nattr];
    attr_ints(b, "kernel_shape", k2, 2);
    attr_ints(b, "strides", k2, 2);
    b->nodes[2].n_attribute = 2;
    io[3][0] = S[P], io[3][1] = S[G];
    node(b, 3, "GlobalAveragePool", "gap", io[3], 1, &io[3][1], 1);
    io[4][0] = S[G], io[4][1] = S[SHP];
    node(b, 4, variant == 5 ? "ConstantOfShape" : "Shape", "shape", io[4], 1, &io[4][1], 1);
    if (variant == 5)
        io[4][0] = S[SH2];
    io[5][0] = S[SHP], io[5][1] = S[I0], io[5][2] = S[N];
    node(b, 5, "Gather", "gather", io[5], 2, &io[5][2], 1);
    b->nodes[5].attribute = &b->attrp[b->nattr];
    attr_int(b, "axis", 0);
    b->nodes[5].n_attribute = 1;
    io[6][0] = S[N], io[6][1] = S[AX], io[6][2] = S[M1];
    node(b, 6, "Unsqueeze", "unsq", io[6], 2, &io[6][2], 1);
    io[7][0] = S[M1], io[7][1] = S[NU], io[7][2] = S[SHAPE];
    node(b, 7, "Concat", "cat", io[7], 2, &io[7][2], 1);
    b->nodes[7].attribute = &b->attrp[b->nattr];
    attr_int(b, "axis", 0);
    b->nodes[7].n_attribute = 1;
    io[8][0] = S[G], io[8][1] = S[SHAPE], io[8][2] = S[FLAT];
    node(b, 8, "Reshape", "reshape", io[8], 2, &io[8][2], 1);
    io[9][0] = S[FLAT], io[9][1] = S[WF], io[9][2] = S[BF], io[9][3] = S[LOGITS];
    node(b, 9, "Gemm", "fc", io[9], 3, &io[9][3], 1);
    b->nodes[9].attribute = &b->attrp[b->nattr];
    attr_int(b, "transB", 1);
    b->nodes[9].n_attribute = 1;
    io[10][0] = S[LOGITS], io[10][1] = S[PROB];
    node(b, 10, "Softmax", "softmax", io[10], 1, &io[10][1], 1);
    if (variant == 3) /* a cycle: relu reads the softmax's output */
        io[1][0] = S[PROB];
    b->g.node = b->nodep;
    b->g.n_node = 11;
    *len = onnx__model_proto__get_packed_size(&b->m);
    buf = (uint8_t *)malloc(*len);
    onnx__model_proto__pack(&b->m, buf);
    free(b);
    return buf;
}

/* ---------------------------------------------------------------- checks */
static nnop_context *cpu_context(void)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    if (nnop_context_create(&o, &ctx) != NNOP_OK) {
        fprintf(stderr, "no CPU context\n");
        exit(1);
    }
    return ctx;
}

/* load, compile and run the model at batch 2 in the given dtype and layout; softmax rows */
static void run_model(nnop_context *ctx, const uint8_t *buf, size_t len, nnop_dtype dt,
                      nnop_layout layout, float *probs)
{
    nnop_onnx_options o;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_tensor_desc xd, yd, src;
    float x[2 * 3 * 8 * 8];
    void *xin, *yout;
    const void *ins[1];
    void *outs[1];
    int k;
    nnop_onnx_options_init(&o);
    o.dtype = dt;
    o.layout = layout;
    o.batch = 2;
    CHECK(nnop_onnx_load_memory(ctx, buf, len, &o, &g) == NNOP_OK);
    CHECK(g != NULL);
    if (!g)
        return;
    CHECK(nnop_graph_compile(g, NULL, &p) == NNOP_OK);
    nnop_graph_destroy(g);
    if (!p)
        return;
    { /* the nodes carry the ONNX node names: the node queries and describe show them */
        char text[2048];
        CHECK(nnop_plan_node_name(p, 0) && strcmp(nnop_plan_node_name(p, 0), "conv1") == 0);
        CHECK(nnop_plan_describe(p, text, sizeof text) < sizeof text);
        CHECK(strstr(text, "conv[conv1]") != NULL && strstr(text, "[relu1]") != NULL);
    }
    CHECK(nnop_plan_input_index(p, "x") == 0);
    CHECK(nnop_plan_output_index(p, "prob") == 0);
    nnop_plan_input_desc(p, 0, &xd);
    nnop_plan_output_desc(p, 0, &yd);
    CHECK(xd.ndim == 4 && xd.dims[0] == 2 && xd.dims[1] == 3 && xd.dtype == dt);
    CHECK(yd.ndim == 2 && yd.dims[0] == 2 && yd.dims[1] == 10);
    for (k = 0; k < 2 * 3 * 8 * 8; k++)
        x[k] = (float)((k * 13) % 17 - 8) / 8.0f;
    src = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 2, 3, 8, 8);
    xin = malloc(nnop_tensor_bytes(&xd));
    yout = malloc(nnop_tensor_bytes(&yd));
    CHECK(nnop_tensor_copy(&src, x, &xd, xin) == NNOP_OK);
    ins[0] = xin;
    outs[0] = yout;
    CHECK(nnop_plan_execute(p, ins, outs) == NNOP_OK);
    nnop_convert(dt, yout, NNOP_F32, probs, 20);
    free(xin);
    free(yout);
    nnop_plan_destroy(p);
}

static void expect_refused(nnop_context *ctx, const uint8_t *buf, size_t len, nnop_status want,
                           const char *substr)
{
    nnop_graph *g = (nnop_graph *)&g; /* not NULL: must come back NULL */
    nnop_status s = nnop_onnx_load_memory(ctx, buf, len, NULL, &g);
    CHECK(s == want);
    CHECK(g == NULL);
    CHECK(strstr(nnop_onnx_last_error(), substr) != NULL);
    if (s != want || !strstr(nnop_onnx_last_error(), substr))
        fprintf(stderr, "  wanted %s with '%s', got %s: %s\n", nnop_status_string(want), substr,
                nnop_status_string(s), nnop_onnx_last_error());
}

/* nnop_onnx_options.max_made: out of range refused, and a budget smaller than what the model
 * folds at load (its Shape -> Gather -> Unsqueeze -> Concat constants) refuses it by name */
static void check_max_made(nnop_context *ctx, const uint8_t *model, size_t len)
{
    static const int64_t bad_values[] = {-1, ((int64_t)1 << 34) + 1};
    nnop_onnx_options o;
    nnop_graph *g = NULL;
    size_t k;
    for (k = 0; k < sizeof bad_values / sizeof bad_values[0]; k++) {
        nnop_onnx_options_init(&o);
        o.max_made = bad_values[k];
        CHECK(nnop_onnx_load_memory(ctx, model, len, &o, &g) == NNOP_ERR_INVALID_ARGUMENT);
        CHECK(g == NULL && strstr(nnop_onnx_last_error(), "max_made"));
    }
    nnop_onnx_options_init(&o);
    o.max_made = 1;
    CHECK(nnop_onnx_load_memory(ctx, model, len, &o, &g) == NNOP_ERR_UNSUPPORTED);
    CHECK(g == NULL && strstr(nnop_onnx_last_error(), "nnop_onnx_options.max_made"));
    o.max_made = (int64_t)1 << 34; /* the most allowed: loads as the default does */
    CHECK(nnop_onnx_load_memory(ctx, model, len, &o, &g) == NNOP_OK && g);
    nnop_graph_destroy(g);
}

/* The model loaded at a batch of its symbolic dimension, or 0 for none; NULL on failure. */
static nnop_plan *load_at(nnop_context *ctx, const uint8_t *buf, size_t len, int64_t batch,
                          int batch_range)
{
    nnop_onnx_options o;
    nnop_compile_options co;
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_onnx_options_init(&o);
    o.batch = batch;
    nnop_compile_options_init(&co);
    co.batch_range = batch_range;
    CHECK(nnop_onnx_load_memory(ctx, buf, len, &o, &g) == NNOP_OK);
    if (g)
        CHECK(nnop_graph_compile(g, &co, &p) == NNOP_OK);
    nnop_graph_destroy(g);
    return p;
}

/* issue 49: the ONNX batch dimension (symbolic, set by nnop_onnx_options.batch) as a batch
 * range. Loaded at batch 6 and compiled with batch_range, every batch from 1 to 6 (through
 * one execution context) gives the same bits as the model loaded at exactly that batch;
 * the Shape -> ... -> Reshape subgraph before the classifier keeps the batch as its dim 0. */
static void check_batch_range(nnop_context *ctx, const uint8_t *buf, size_t len)
{
    enum { MAX = 6, PIX = 3 * 8 * 8 };
    static float x[MAX * PIX], y[MAX * 10], want[MAX * 10];
    nnop_plan *range = load_at(ctx, buf, len, MAX, 1);
    nnop_exec *e = NULL;
    int64_t n;
    int k;
    if (!range)
        return;
    CHECK(nnop_exec_create(range, &e) == NNOP_OK);
    for (k = 0; k < MAX * PIX; k++)
        x[k] = (float)((k * 7) % 23 - 11) / 11.0f;
    for (n = 1; e && n <= MAX; n++) {
        nnop_plan *exact = load_at(ctx, buf, len, n, 0);
        const void *ins[1] = {x};
        void *outs[1];
        if (!exact)
            continue;
        outs[0] = want;
        CHECK(nnop_plan_execute(exact, ins, outs) == NNOP_OK);
        memset(y, 0xff, sizeof y);
        outs[0] = y;
        CHECK(nnop_exec_run(e, n, ins, outs) == NNOP_OK);
        CHECK(memcmp(y, want, (size_t)n * 10 * sizeof(float)) == 0);
        nnop_plan_destroy(exact);
    }
    nnop_exec_destroy(e);
    nnop_plan_destroy(range);
}

/* The model's bytes as a file in the working directory. */
static void write_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(buf, 1, len, f) == len);
    if (f)
        fclose(f);
}

static void expect_file_refused(nnop_context *ctx, int variant, nnop_status want,
                                const char *substr)
{
    size_t len;
    uint8_t *buf = make_model(&len, variant);
    nnop_graph *g = (nnop_graph *)&g;
    nnop_status s;
    write_file("test_onnx_import_ext.onnx", buf, len);
    s = nnop_onnx_load_file(ctx, "./test_onnx_import_ext.onnx", NULL, &g);
    CHECK(s == want && g == NULL && strstr(nnop_onnx_last_error(), substr));
    if (s != want || !strstr(nnop_onnx_last_error(), substr))
        fprintf(stderr, "  variant %d: wanted %s with '%s', got %s: %s\n", variant,
                nnop_status_string(want), substr, nnop_status_string(s), nnop_onnx_last_error());
    free(buf);
}

/* Initializers in a file beside the model: loaded from the model's path they give the same
 * bits as the model holding them; from memory, or placed outside the model's directory, or
 * the wrong size, they are refused by name. */
static void check_external_data(nnop_context *ctx, const float *want)
{
    size_t len;
    uint8_t *buf = make_model(&len, 6);
    nnop_graph *g = NULL;
    nnop_plan *p = NULL;
    nnop_onnx_options o;
    float x[2 * 3 * 8 * 8], y[20];
    const void *ins[1] = {x};
    void *outs[1] = {y};
    int k;
    nnop_onnx_options_init(&o);
    o.batch = 2; /* as run_model made want */
    write_file("test_onnx_import_ext.onnx", buf, len);
    expect_refused(ctx, buf, len, NNOP_ERR_UNSUPPORTED, "nnop_onnx_load_file");
    free(buf);
    CHECK(nnop_onnx_load_file(ctx, "test_onnx_import_ext.onnx", &o, &g) == NNOP_OK);
    if (g)
        CHECK(nnop_graph_compile(g, NULL, &p) == NNOP_OK);
    nnop_graph_destroy(g);
    for (k = 0; k < 2 * 3 * 8 * 8; k++)
        x[k] = (float)((k * 13) % 17 - 8) / 8.0f;
    memset(y, 0xff, sizeof y);
    CHECK(p && nnop_plan_execute(p, ins, outs) == NNOP_OK && memcmp(y, want, sizeof y) == 0);
    nnop_plan_destroy(p);
    expect_file_refused(ctx, 7, NNOP_ERR_FORMAT, "tensor 'W': external data location '../");
    expect_file_refused(ctx, 8, NNOP_ERR_FORMAT, "tensor 'B': external data length 15");
    expect_file_refused(ctx, 9, NNOP_ERR_IO, "test_onnx_import_missing.bin");
    expect_file_refused(ctx, 10, NNOP_ERR_FORMAT, "not a file under the model's directory");
    remove("test_onnx_import_ext.onnx");
    remove(EXT_WEIGHTS);
}

int main(void)
{
    nnop_context *ctx = cpu_context();
    size_t len, k, cut;
    uint8_t *model = make_model(&len, 0), *bad;
    float p32[20], p16[20], sum;
    unsigned seed = 12345;
    int i, loaded = 0;
    nnop_graph *g;

    /* the valid model, f32 NCHW against f16 NHWC: rows sum to 1, and they agree */
    run_model(ctx, model, len, NNOP_F32, NNOP_NCHW, p32);
    run_model(ctx, model, len, NNOP_F16, NNOP_NHWC, p16);
    for (i = 0; i < 2; i++) {
        sum = 0;
        for (k = 0; k < 10; k++)
            sum += p32[i * 10 + (int)k];
        CHECK(fabsf(sum - 1.0f) < 1e-5f);
    }
    for (k = 0; k < 20; k++)
        CHECK(fabsf(p32[k] - p16[k]) < 1e-2f);

    /* arguments */
    CHECK(nnop_onnx_load_memory(NULL, model, len, NULL, &g) == NNOP_ERR_INVALID_ARGUMENT);
    CHECK(nnop_onnx_load_memory(ctx, model, len, NULL, NULL) == NNOP_ERR_INVALID_ARGUMENT);
    CHECK(nnop_onnx_load_file(ctx, "/nonexistent/model.onnx", NULL, &g) == NNOP_ERR_IO);
    CHECK(g == NULL);
    {
        nnop_onnx_options o;
        nnop_onnx_options_init(&o);
        o.reserved[0] = 1;
        CHECK(nnop_onnx_load_memory(ctx, model, len, &o, &g) == NNOP_ERR_INVALID_ARGUMENT);
    }

    /* models nnop cannot run, or malformed: refused naming the node, no graph */
    bad = make_model(&cut, 2);
    expect_refused(ctx, bad, cut, NNOP_ERR_UNSUPPORTED, "node 'relu1' (NoSuchOp)");
    free(bad);
    bad = make_model(&cut, 3);
    expect_refused(ctx, bad, cut, NNOP_ERR_FORMAT, "node 'relu1' (Relu): input 'prob'");
    free(bad);
    bad = make_model(&cut, 1);
    expect_refused(ctx, bad, cut, NNOP_ERR_FORMAT, "tensor 'B'");
    free(bad);
    expect_refused(ctx, model, 0, NNOP_ERR_FORMAT, "0 bytes");
    /* what fuzz_onnx found: a shape whose product overflows, a small file folding gigabytes */
    bad = make_model(&cut, 4);
    expect_refused(ctx, bad, cut, NNOP_ERR_FORMAT, "node 'reshape' (Reshape): shape of over");
    free(bad);
    bad = make_model(&cut, 5);
    expect_refused(ctx, bad, cut, NNOP_ERR_UNSUPPORTED, "folded at load");
    free(bad);
    check_max_made(ctx, model, len);
    check_batch_range(ctx, model, len);
    check_external_data(ctx, p32);

    /* every truncation: refused, or (a cut at a field boundary) a smaller valid model */
    for (cut = 0; cut < len; cut++) {
        nnop_status s = nnop_onnx_load_memory(ctx, model, cut, NULL, &g);
        CHECK(s != NNOP_OK ? g == NULL && nnop_onnx_last_error()[0] : g != NULL);
        loaded += s == NNOP_OK;
        nnop_graph_destroy(g);
    }
    /* byte flips and garbage: any status, no crash, a graph only on success */
    bad = (uint8_t *)malloc(len);
    for (i = 0; i < 3000; i++) {
        nnop_status s;
        int flips = 1 + i % 4, f;
        memcpy(bad, model, len);
        for (f = 0; f < flips; f++) {
            seed = seed * 1103515245u + 12345u;
            bad[(seed >> 8) % len] ^= (uint8_t)(1u << ((seed >> 4) % 8));
        }
        if (i % 10 == 9)
            for (k = 0; k < len; k++) {
                seed = seed * 1103515245u + 12345u;
                bad[k] = (uint8_t)(seed >> 16);
            }
        s = nnop_onnx_load_memory(ctx, bad, len, NULL, &g);
        CHECK(s == NNOP_OK ? g != NULL : g == NULL && nnop_onnx_last_error()[0] != 0);
        if (g) {
            nnop_plan *p = NULL;
            if (nnop_graph_compile(g, NULL, &p) == NNOP_OK)
                nnop_plan_destroy(p);
            nnop_graph_destroy(g);
        }
    }
    free(bad);
    free(model);
    nnop_context_destroy(ctx);
    printf("test_onnx_import: %s (%d truncations loaded as smaller models)\n",
           failures ? "FAILED" : "ok", loaded);
    return failures ? 1 : 0;
}
