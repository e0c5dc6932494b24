/* probe_knobs.c: is there a cuDNN engine config (engine + knob values) that runs ResNet-50's
 * 3x3 convs at batch 1 (fp16 NHWC, conv + bias + ReLU as nnop lowers it) much faster than the
 * heuristics' first choice? At batch 1 that choice is a 64x64-tile implicit GEMM filling ~8 of
 * 132 SMs for C=K=512 at 7x7, so split-K style knobs may pay. Per shape: the configs of
 * heuristics modes A and B, the knobs each engine offers, then each config timed as given and
 * with each knob of the first mode-A configs of four engines set to each value allowed, every
 * output checked against the first config's. Raw cuDNN backend calls only (no nnop); prints
 * markdown, and one line per shape starting with SUMMARY. Options: --shape N,C,H,W,K,R,S,stride,pad
 * (one shape instead of the list), --max-variants M (per shape), --budget S (seconds for plan
 * builds). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <cudnn.h>

#define MAXK     48 /* knob choices / infos read per config or engine (44 types in 9.19) */
#define MAXCFG   64 /* configs read per heuristics mode */
#define MAXENG   32 /* distinct engines per shape */
#define BASES    4  /* engines whose knobs are varied (add_variants) */
#define MAXVALS  16 /* values tried per knob */
#define MAXRANGE 64 /* wider knob ranges are tried at powers of two */
#define WS_LIMIT ((int64_t)256 << 20)
#define WARMUP   3
#define REPS     5
#define BATCH    20
/* a memset the executes queue behind, so that the events time the GPU, not the ~8 us host
 * cost of each cudnnBackendExecute (2026-12-04's run lacked it: its batch-1 times were
 * host-bound, 8-12 us where the GPU needs 6-12) */
#define BUSY_BYTES ((size_t)1 << 30)
#define BAD_DIFF   1e-2

enum { UID_X = 1, UID_W, UID_B, UID_Y, UID_CONV, UID_SUM }; /* the last two virtual */
enum { ST_NEW, ST_DUP, ST_FAIL, ST_SKIP_TIME, ST_SKIP_WS, ST_BUILT, ST_TIMED };

typedef struct shape {
    long long n, c, h, w, k, r, s, stride, pad;
} shape;

typedef struct knob {
    int64_t type, value;
} knob;

typedef struct kinfo {
    int64_t type, min, max, stride;
} kinfo;

typedef struct engine_info {
    int64_t id;
    kinfo k[MAXK];
    int nk;
    cudnnStatus_t status; /* of finalizing a fresh engine for the graph */
} engine_info;

typedef struct entry {
    char label[16], what[64], why[96];
    int64_t engine, ws;
    knob k[MAXK];
    int nk, notes, dup, state; /* notes: bit i = behaviour note i (bit 0: runtime-compiled) */
    cudnnBackendDescriptor_t cfg, plan;
    double build_ms, us, diff;
} entry;

typedef struct run {
    entry *e;
    int n, cap, n_a, n_var, capped;
    engine_info eng[MAXENG];
    int neng;
} run;

typedef struct probe {
    cudnnHandle_t h;
    cudaStream_t stream;
    cudaEvent_t ev[2];
    void *x, *w, *b, *y, *ws, *busy;
    int64_t ws_bytes, y_elems;
    uint16_t *yh;
    float *ref;
    int ref_bad; /* non-finite outputs of the reference: the comparisons skip them */
    int max_variants;
} probe;

/* Knob type names in order of value (cudnnBackendKnobType_t, whose values are stable: naming
 * them by number keeps deprecated enumerators and newer headers out of the build). */
static const char knob_names[] =
        "SPLIT_K SWIZZLE TILE_SIZE USE_TEX EDGE KBLOCK LDGA LDGB CHUNK_K SPLIT_H WINO_TILE "
        "MULTIPLY SPLIT_K_BUF TILEK STAGES REDUCTION_MODE CTA_SPLIT_K_MODE SPLIT_K_SLC IDX_MODE "
        "SLICED SPLIT_RS SINGLEBUFFER LDGC SPECFILT KERNEL_CFG WORKSPACE TILE_CGA TILE_CGA_M "
        "TILE_CGA_N BLOCK_SIZE OCCUPANCY ARRAY_SIZE_PER_THREAD NUM_C_PER_BLOCK SPLIT_COLS "
        "TILE_ROWS TILE_COLS LOAD_SIZE CTA_COUNT STREAM_K SPLIT_P_SLC TILE_M TILE_N WARP_SPEC_CFG "
        "SWAP_AB";
static const char *const note_names[] = {"rtc", "filter_int8x32_reorder", "bias_int8x32_reorder",
                                         "cuda_graph_native", "cublaslt"};

static const char *g_where = "setup"; /* what a fatal error message names */

static const char *knob_name(int64_t t) /* valid until the next call */
{
    static char buf[32];
    const char *p = knob_names;
    int64_t i;
    for (i = 0; i < t && p; i++)
        if ((p = strchr(p, ' ')) != NULL)
            p++;
    if (t < 0 || !p)
        snprintf(buf, sizeof buf, "KNOB_%lld", (long long)t);
    else
        snprintf(buf, sizeof buf, "%.*s", (int)strcspn(p, " "), p);
    return buf;
}

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void dnn_check(cudnnStatus_t s, const char *call, int line)
{
    char msg[1024] = "";
    if (s == CUDNN_STATUS_SUCCESS)
        return;
    cudnnGetLastErrorString(msg, sizeof msg);
    fprintf(stderr, "probe_knobs.c:%d (%s): %s failed: %s (%d)\n  %s\n", line, g_where, call,
            cudnnGetErrorString(s), (int)s, msg);
    exit(1);
}

static void cuda_check(cudaError_t e, const char *call, int line)
{
    if (e == cudaSuccess)
        return;
    fprintf(stderr, "probe_knobs.c:%d (%s): %s failed: %s\n", line, g_where, call,
            cudaGetErrorString(e));
    exit(1);
}

static void *need(void *p)
{
    if (!p) {
        fprintf(stderr, "probe_knobs: out of host memory\n");
        exit(1);
    }
    return p;
}

#define DNN(x) dnn_check((x), #x, __LINE__)
#define CU(x)  cuda_check((x), #x, __LINE__)

/* Set or get one attribute; a failure names the attribute. */
static void attr(int set, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                 const char *name, cudnnBackendAttributeType_t t, int64_t n, int64_t *got, void *v,
                 int line)
{
    char call[128];
    cudnnStatus_t s = set ? cudnnBackendSetAttribute(d, a, t, n, v)
                          : cudnnBackendGetAttribute(d, a, t, n, got, v);
    snprintf(call, sizeof call, "cudnnBackend%sAttribute(%s)", set ? "Set" : "Get", name);
    dnn_check(s, call, line);
}
#define SET(d, a, t, n, v)      attr(1, d, a, #a, t, n, NULL, (void *)(v), __LINE__)
#define GET(d, a, t, n, got, v) attr(0, d, a, #a, t, n, got, v, __LINE__)
#define FIN(d)                  DNN(cudnnBackendFinalize(d))

/* Every descriptor of the current shape, destroyed in reverse order (plans before their
 * configs, configs before their engines, the graph before its operations). */
static struct {
    cudnnBackendDescriptor_t *d;
    int n, cap;
} g_pool;

static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t t)
{
    cudnnBackendDescriptor_t d = NULL;
    if (g_pool.n == g_pool.cap) {
        g_pool.cap = g_pool.cap ? 2 * g_pool.cap : 1024;
        g_pool.d = need(realloc(g_pool.d, (size_t)g_pool.cap * sizeof *g_pool.d));
    }
    DNN(cudnnBackendCreateDescriptor(t, &d));
    g_pool.d[g_pool.n++] = d;
    return d;
}

static void pool_release(int mark) /* destroys what was made since mark */
{
    while (g_pool.n > mark)
        DNN(cudnnBackendDestroyDescriptor(g_pool.d[--g_pool.n]));
}

/* ------------------------------------------------------------------ the operation graph */

/* Dims [N, C, H, W] with channels-last strides [HWC, 1, WC, C]. */
static cudnnBackendDescriptor_t tensor(int64_t uid, cudnnDataType_t dt, const int64_t *d, bool virt)
{
    int64_t st[4] = {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]}, align = 16;
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    SET(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    SET(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    SET(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, d);
    SET(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, st);
    SET(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    SET(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
    FIN(t);
    return t;
}

static cudnnBackendDescriptor_t conv_op(const shape *p, cudnnBackendDescriptor_t x,
                                        cudnnBackendDescriptor_t w, cudnnBackendDescriptor_t y)
{
    int64_t sd = 2, pad[2] = {p->pad, p->pad}, str[2] = {p->stride, p->stride}, dil[2] = {1, 1};
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    float alpha = 1.0f, beta = 0.0f;
    cudnnBackendDescriptor_t cd = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR), op;
    SET(cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    SET(cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    SET(cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &sd);
    SET(cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    SET(cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, str);
    FIN(cd);
    op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &cd);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    FIN(op);
    return op;
}

/* y = mode(x[, b]) in float math; plain ReLU leaves its clips unset (notes 10.1). */
static cudnnBackendDescriptor_t pointwise(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x,
                                          cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y)
{
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR), op;
    SET(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    SET(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    FIN(pw);
    op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    SET(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
    SET(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    if (b)
        SET(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
    SET(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    FIN(op);
    return op;
}

static int64_t out_size(long long in, long long k, const shape *p)
{
    return (in + 2 * p->pad - k) / p->stride + 1;
}

/* conv -> add bias [1, K, 1, 1] -> ReLU, fp16 I/O, float intermediates: nnop's conv lowering. */
static cudnnBackendDescriptor_t build_graph(cudnnHandle_t h, const shape *p)
{
    int64_t xd[4] = {p->n, p->c, p->h, p->w}, wd[4] = {p->k, p->c, p->r, p->s};
    int64_t bd[4] = {1, p->k, 1, 1}, yd[4] = {p->n, p->k, out_size(p->h, p->r, p), 0};
    cudnnBackendDescriptor_t x, w, b, y, t1, t2, ops[3], g;
    yd[3] = out_size(p->w, p->s, p);
    x = tensor(UID_X, CUDNN_DATA_HALF, xd, false);
    w = tensor(UID_W, CUDNN_DATA_HALF, wd, false);
    b = tensor(UID_B, CUDNN_DATA_HALF, bd, false);
    y = tensor(UID_Y, CUDNN_DATA_HALF, yd, false);
    t1 = tensor(UID_CONV, CUDNN_DATA_FLOAT, yd, true);
    t2 = tensor(UID_SUM, CUDNN_DATA_FLOAT, yd, true);
    ops[0] = conv_op(p, x, w, t1);
    ops[1] = pointwise(CUDNN_POINTWISE_ADD, t1, b, t2);
    ops[2] = pointwise(CUDNN_POINTWISE_RELU_FWD, t2, NULL, y);
    g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    SET(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    SET(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, ops);
    FIN(g);
    return g;
}

/* ------------------------------------------------------------ configs, engines, knobs */

static int same_cfg(const entry *a, const entry *b)
{
    int i, j;
    if (a->engine != b->engine || a->nk != b->nk)
        return 0;
    for (i = 0; i < a->nk; i++) {
        for (j = 0; j < b->nk && b->k[j].type != a->k[i].type; j++)
            ;
        if (j == b->nk || b->k[j].value != a->k[i].value)
            return 0;
    }
    return 1;
}

static int find_same(const run *r, const entry *c)
{
    int i;
    for (i = 0; i < r->n; i++)
        if (same_cfg(&r->e[i], c))
            return i;
    return -1;
}

/* Engine index, behaviour notes and knob choices of a config from the heuristics. */
static void read_cfg(entry *e)
{
    int mark = g_pool.n, i;
    int64_t n = 0, got = 0;
    cudnnBackendDescriptor_t eng = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR), ch[MAXK];
    cudnnBackendBehaviorNote_t bn[16];
    GET(e->cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &eng);
    GET(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &e->engine);
    GET(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, 16, &n, bn);
    for (i = 0; i < n && i < 16; i++)
        e->notes |= (bn[i] >= 0 && bn[i] < 31) ? 1 << bn[i] : 0;
    for (i = 0; i < MAXK; i++)
        ch[i] = make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    GET(e->cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, MAXK, &got, ch);
    e->nk = got < MAXK ? (int)got : MAXK;
    for (i = 0; i < e->nk; i++) {
        cudnnBackendKnobType_t t;
        GET(ch[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n, &t);
        GET(ch[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &n, &e->k[i].value);
        e->k[i].type = (int64_t)t;
    }
    pool_release(mark);
}

/* Appends the configs of one heuristics mode; a mode may refuse a graph (said, not fatal). */
static int heuristics(run *r, cudnnBackendDescriptor_t g, cudnnBackendHeurMode_t mode, char tag)
{
    cudnnBackendDescriptor_t h = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR), cfgs[MAXCFG];
    int64_t n = 0, got = 0, i;
    int first = r->n;
    cudnnStatus_t s;
    SET(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    SET(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if ((s = cudnnBackendFinalize(h)) != CUDNN_STATUS_SUCCESS) {
        printf("mode %c: cudnnBackendFinalize(engine heuristics) failed: %s\n", tag,
               cudnnGetErrorString(s));
        return 0;
    }
    /* the count asked with no array is an upper bound (notes 6.2) */
    GET(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL);
    n = n < MAXCFG ? n : MAXCFG;
    for (i = 0; i < n; i++)
        cfgs[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    if (n > 0)
        GET(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, cfgs);
    for (i = 0; i < got && r->n < r->cap; i++) {
        entry *e = &r->e[r->n];
        memset(e, 0, sizeof *e);
        e->cfg = cfgs[i];
        snprintf(e->label, sizeof e->label, "%c%d", tag, (int)i);
        read_cfg(e);
        e->dup = find_same(r, e); /* mode B often repeats mode A's configs */
        e->state = e->dup >= 0 ? ST_DUP : ST_NEW;
        snprintf(e->what, sizeof e->what, "as given");
        if (e->dup >= 0)
            snprintf(e->why, sizeof e->why, "not built (same as %s)", r->e[e->dup].label);
        r->n++;
    }
    return r->n - first;
}

/* Knob ranges of a fresh engine for the graph (the engine of a heuristics config is read
 * back, not built, so its knob info is taken from one built here as the frontend does). */
static void read_engine(cudnnBackendDescriptor_t g, engine_info *ei)
{
    int mark = g_pool.n, i;
    int64_t n = 0, got = 0;
    cudnnBackendDescriptor_t eng = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR), ki[MAXK];
    SET(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    SET(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &ei->id);
    ei->status = cudnnBackendFinalize(eng);
    for (i = 0; ei->status == CUDNN_STATUS_SUCCESS && i < MAXK; i++)
        ki[i] = make(CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR);
    if (ei->status == CUDNN_STATUS_SUCCESS)
        GET(eng, CUDNN_ATTR_ENGINE_KNOB_INFO, CUDNN_TYPE_BACKEND_DESCRIPTOR, MAXK, &got, ki);
    ei->nk = got < MAXK ? (int)got : MAXK;
    for (i = 0; i < ei->nk; i++) {
        cudnnBackendKnobType_t t;
        kinfo *k = &ei->k[i];
        GET(ki[i], CUDNN_ATTR_KNOB_INFO_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n, &t);
        GET(ki[i], CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE, CUDNN_TYPE_INT64, 1, &n, &k->min);
        GET(ki[i], CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE, CUDNN_TYPE_INT64, 1, &n, &k->max);
        GET(ki[i], CUDNN_ATTR_KNOB_INFO_STRIDE, CUDNN_TYPE_INT64, 1, &n, &k->stride);
        k->type = (int64_t)t;
    }
    pool_release(mark);
}

static const engine_info *find_engine(const run *r, int64_t id)
{
    int i;
    for (i = 0; i < r->neng; i++)
        if (r->eng[i].id == id)
            return &r->eng[i];
    return NULL;
}

/* The values tried for a knob (max taken as inclusive): all when at most MAXVALS; up to
 * MAXRANGE, the first half as they come (small counts are the likely wins) and the rest spread
 * evenly to the maximum; wider ranges at powers of two. The split-K knobs are the wide ones:
 * SPLIT_K_SLC 1..128 on the runtime-compiled engines, SPLIT_K_SLC and SPLIT_K_BUF 1..2048 on
 * eng23/29 (H200, cuDNN 9.14: shared/docs/cudnn-probe/run2), so skipping them would miss the
 * point. Returns how many. */
static int knob_values(const kinfo *k, int64_t *v)
{
    int64_t step = k->stride > 0 ? k->stride : 1, n = (k->max - k->min) / step + 1, i, h = 0;
    if (k->max < k->min)
        return 0;
    if (n > MAXRANGE) {
        v[h++] = k->min;
        for (i = 1; i <= k->max && h < MAXVALS; i *= 2)
            if (i > k->min && (i - k->min) % step == 0)
                v[h++] = i;
        return (int)h;
    }
    if (n <= MAXVALS) {
        for (i = 0; i < n; i++)
            v[i] = k->min + i * step;
        return (int)n;
    }
    h = MAXVALS / 2;
    for (i = 0; i < h; i++) {
        v[i] = k->min + i * step;
        v[h + i] = k->min + (h + (n - 1 - h) * (i + 1) / h) * step;
    }
    return MAXVALS;
}

static void set_knob(entry *c, int64_t type, int64_t value)
{
    int i;
    for (i = 0; i < c->nk && c->k[i].type != type; i++)
        ;
    if (i == c->nk && c->nk < MAXK)
        c->nk++;
    c->k[i].type = type;
    c->k[i].value = value;
}

/* Configs from base config r->e[b]: each knob of its engine at each value tried, one knob
 * changed at a time; new configs only, at most max in all. */
static void vary(run *r, int b, int max)
{
    const engine_info *ei = find_engine(r, r->e[b].engine);
    int64_t vals[MAXVALS];
    int j, v, nv;
    for (j = 0; ei && j < ei->nk; j++)
        for (v = 0, nv = knob_values(&ei->k[j], vals); v < nv; v++) {
            entry c = r->e[b];
            set_knob(&c, ei->k[j].type, vals[v]);
            if (find_same(r, &c) >= 0)
                continue;
            if (r->n_var >= max || r->n >= r->cap) {
                r->capped++;
                continue;
            }
            c.cfg = c.plan = NULL;
            c.dup = -1;
            c.state = ST_NEW;
            snprintf(c.label, sizeof c.label, "v%d", r->n_var++);
            snprintf(c.what, sizeof c.what, "%s + %s=%lld", r->e[b].label, knob_name(ei->k[j].type),
                     (long long)vals[v]);
            r->e[r->n++] = c;
        }
}

/* The bases: the first mode-A config of each engine, for the first BASES engines. Not simply
 * the first BASES configs: on an H200 (deviceless, cuDNN 9.19) mode A's first seven configs
 * for C=K=512 7x7 were all eng41 with other cluster shapes, and eng23, the one with split-K
 * knobs, came eighth. */
static void add_variants(run *r, int max)
{
    int b, j, bases = 0;
    for (b = 0; b < r->n_a && bases < BASES; b++) {
        for (j = 0; j < b && r->e[j].engine != r->e[b].engine; j++)
            ;
        if (j == b) {
            vary(r, b, max);
            bases++;
        }
    }
}

/* ----------------------------------------------------------------- plans and timing */

static cudnnStatus_t failed_at(entry *e, const char *step, cudnnStatus_t s)
{
    snprintf(e->why, sizeof e->why, "no (%s: %s)", step, cudnnGetErrorString(s));
    return s;
}

/* A config for a variant: a fresh engine and knob choices (kept in the pool: the config
 * refers to them). Returns the first failing status. */
static cudnnStatus_t make_cfg(cudnnBackendDescriptor_t g, entry *e)
{
    cudnnBackendDescriptor_t eng = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR), ch[MAXK], cfg;
    cudnnStatus_t s;
    int i;
    SET(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    SET(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &e->engine);
    if ((s = cudnnBackendFinalize(eng)) != CUDNN_STATUS_SUCCESS)
        return failed_at(e, "engine", s);
    for (i = 0; i < e->nk; i++) {
        cudnnBackendKnobType_t t = (cudnnBackendKnobType_t)e->k[i].type;
        ch[i] = make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
        SET(ch[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &t);
        SET(ch[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &e->k[i].value);
        if ((s = cudnnBackendFinalize(ch[i])) != CUDNN_STATUS_SUCCESS)
            return failed_at(e, "knob choice", s);
    }
    cfg = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    SET(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &eng);
    if (e->nk > 0)
        SET(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, e->nk, ch);
    if ((s = cudnnBackendFinalize(cfg)) != CUDNN_STATUS_SUCCESS)
        return failed_at(e, "config", s);
    e->cfg = cfg;
    return s;
}

static void build(probe *P, cudnnBackendDescriptor_t g, entry *e)
{
    double t0 = now_s();
    int64_t n = 0;
    cudnnStatus_t s = e->cfg ? CUDNN_STATUS_SUCCESS : make_cfg(g, e);
    cudnnBackendDescriptor_t plan = NULL;
    if (s == CUDNN_STATUS_SUCCESS) {
        plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        SET(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &P->h);
        SET(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
            &e->cfg);
        if ((s = cudnnBackendFinalize(plan)) != CUDNN_STATUS_SUCCESS)
            failed_at(e, "plan", s);
    }
    e->build_ms = (now_s() - t0) * 1e3;
    if (s != CUDNN_STATUS_SUCCESS) {
        e->state = ST_FAIL;
        return;
    }
    GET(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &e->ws);
    e->plan = plan;
    e->state = e->ws > WS_LIMIT ? ST_SKIP_WS : ST_BUILT;
    snprintf(e->why, sizeof e->why, "%s (%.1f ms, workspace %lld B)",
             e->state == ST_BUILT ? "ok" : "ok, not run: over 256 MB", e->build_ms,
             (long long)e->ws);
    if (e->state == ST_BUILT && e->ws > P->ws_bytes)
        P->ws_bytes = e->ws;
}

/* Phase 1, all plans before any run (so one workspace of the largest size serves all): the
 * first config, then the precompiled ones, then the runtime-compiled ones (0.1-2.4 s each),
 * until the shape's share of the time is spent. */
static void build_all(probe *P, run *r, cudnnBackendDescriptor_t g, double deadline)
{
    int pass, i;
    for (pass = 0; pass < 3; pass++)
        for (i = 0; i < r->n; i++) {
            entry *e = &r->e[i];
            int want = pass == 0 ? i == 0 : pass == 1 ? !(e->notes & 1) : (e->notes & 1);
            if (!want || e->state != ST_NEW)
                continue;
            g_where = e->label;
            if (i > 0 && now_s() > deadline) {
                e->state = ST_SKIP_TIME;
                snprintf(e->why, sizeof e->why, "not built (time budget spent)");
            } else {
                build(P, g, e);
            }
        }
}

static uint16_t to_half(float f) /* round to nearest even; tiny values flush to zero */
{
    uint32_t x, sign, m, rest, h;
    int32_t e;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u, m = x & 0x7fffffu;
    e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    if (e <= 0)
        return (uint16_t)sign;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    h = sign | ((uint32_t)e << 10) | (m >> 13), rest = m & 0x1fffu;
    h += rest > 0x1000u || (rest == 0x1000u && (h & 1u));
    return (uint16_t)h;
}

static float from_half(uint16_t v)
{
    uint32_t sign = (uint32_t)(v & 0x8000u) << 16, e = (v >> 10) & 0x1fu, m = v & 0x3ffu, x;
    float f;
    if (e == 0)
        return (sign ? -1.0f : 1.0f) * (float)m * 5.9604645e-8f; /* subnormal: m * 2^-24 */
    x = sign | (e == 31 ? 0x7f800000u : (e + 112) << 23) | (m << 13);
    memcpy(&f, &x, sizeof f);
    return f;
}

/* max |y - ref| / (|ref| + 1% of max |ref|): relative where the output is not near zero, and
 * not blown up by ReLU's zeros; infinite where y is not finite (0xffff fill never written). */
static double rel_diff(const uint16_t *y, const float *ref, int64_t n)
{
    double m = 0.0, worst = 0.0;
    int64_t i;
    for (i = 0; i < n; i++)
        m = fmax(m, fabs(ref[i]));
    for (i = 0; i < n; i++) {
        double a = from_half(y[i]);
        if (!isfinite(a))
            return INFINITY;
        worst = fmax(worst, fabs(a - ref[i]) / (fabs(ref[i]) + 0.01 * m + 1e-30));
    }
    return worst;
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Phase 2: warm-up, median of REPS timings of BATCH back-to-back executes; the output kept as
 * the reference (first config timed) or compared with it. */
static void time_entry(probe *P, entry *e, int is_ref)
{
    int64_t uids[4] = {UID_X, UID_W, UID_B, UID_Y};
    void *ptrs[4] = {P->x, P->w, P->b, P->y};
    float ms[REPS];
    int mark = g_pool.n, i, j;
    cudnnStatus_t s;
    cudnnBackendDescriptor_t vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    g_where = e->label;
    SET(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 4, uids);
    SET(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 4, ptrs);
    SET(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &P->ws);
    FIN(vp);
    CU(cudaMemsetAsync(P->y, 0xff, (size_t)P->y_elems * 2, P->stream)); /* fp16 NaN */
    if ((s = cudnnBackendExecute(P->h, e->plan, vp)) != CUDNN_STATUS_SUCCESS) {
        failed_at(e, "execute", s); /* a knob value cuDNN took but cannot run */
        e->state = ST_FAIL;
        CU(cudaStreamSynchronize(P->stream)); /* stops here if the context is lost */
        pool_release(mark);
        return;
    }
    for (i = 1; i < WARMUP; i++)
        DNN(cudnnBackendExecute(P->h, e->plan, vp));
    for (i = 0; i < REPS; i++) {
        CU(cudaMemsetAsync(P->busy, i, BUSY_BYTES, P->stream));
        CU(cudaEventRecord(P->ev[0], P->stream));
        for (j = 0; j < BATCH; j++)
            DNN(cudnnBackendExecute(P->h, e->plan, vp));
        CU(cudaEventRecord(P->ev[1], P->stream));
        CU(cudaEventSynchronize(P->ev[1]));
        CU(cudaEventElapsedTime(&ms[i], P->ev[0], P->ev[1]));
    }
    qsort(ms, REPS, sizeof *ms, cmp_f);
    e->us = ms[REPS / 2] * 1e3 / BATCH;
    CU(cudaMemcpy(P->yh, P->y, (size_t)P->y_elems * 2, cudaMemcpyDeviceToHost));
    for (i = 0, j = 0; is_ref && i < P->y_elems; i++) {
        P->ref[i] = from_half(P->yh[i]);
        j += !isfinite(P->ref[i]);
    }
    P->ref_bad = is_ref ? j : P->ref_bad;
    e->diff = is_ref ? 0.0 : rel_diff(P->yh, P->ref, P->y_elems);
    e->state = ST_TIMED;
    pool_release(mark);
}

/* ---------------------------------------------------------------------- reporting */

static void knob_str(const entry *e, char *buf, size_t size)
{
    size_t at = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; i < e->nk && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s=%lld", i ? " " : "",
                               knob_name(e->k[i].type), (long long)e->k[i].value);
}

static void print_configs(const run *r)
{
    char ks[512];
    int i, b;
    printf("\n### heuristics configs\n\n| config | engine | knob choices | notes |\n"
           "| --- | --- | --- | --- |\n");
    for (i = 0; i < r->n; i++) {
        const entry *e = &r->e[i];
        knob_str(e, ks, sizeof ks);
        printf("| %s | eng%lld | %s | %s", e->label, (long long)e->engine, ks,
               e->notes & 1 ? "" : "precompiled");
        for (b = 0; b < 5; b++)
            if (e->notes & (1 << b))
                printf(" %s", note_names[b]);
        printf(" |\n");
    }
    printf("\n### knobs per engine (min..max step stride)\n\n");
    for (i = 0; i < r->neng; i++) {
        const engine_info *ei = &r->eng[i];
        printf("- eng%lld:", (long long)ei->id);
        if (ei->status != CUDNN_STATUS_SUCCESS)
            printf(" engine finalize failed: %s", cudnnGetErrorString(ei->status));
        for (b = 0; b < ei->nk; b++) {
            const kinfo *k = &ei->k[b];
            int64_t v[MAXVALS];
            printf("%s %s %lld..%lld step %lld (%d tried)", b ? "," : "", knob_name(k->type),
                   (long long)k->min, (long long)k->max, (long long)k->stride, knob_values(k, v));
        }
        printf("%s\n", ei->nk || ei->status != CUDNN_STATUS_SUCCESS ? "" : " no knobs");
    }
}

static void print_row(const entry *e, double ref_us)
{
    char us[24] = "-", sp[24] = "-", df[32] = "-";
    if (e->state == ST_TIMED) {
        snprintf(us, sizeof us, "%.2f", e->us);
        snprintf(sp, sizeof sp, "%.2fx", ref_us > 0 ? ref_us / e->us : 0.0);
        snprintf(df, sizeof df, "%.1e%s", e->diff, e->diff > BAD_DIFF ? " **WRONG**" : "");
    }
    printf("| %s eng%lld%s | %s | %s | %s | %s | %s |\n", e->label, (long long)e->engine,
           e->notes & 1 ? " (rtc)" : "", e->what, e->why, us, sp, df);
}

/* ------------------------------------------------------------------------ per shape */

static void *upload_random(int64_t n, float scale, uint32_t *seed)
{
    uint16_t *h = need(malloc((size_t)n * 2));
    void *d = NULL;
    int64_t i;
    for (i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        h[i] = to_half(((float)(*seed >> 8) / 16777216.0f * 2.0f - 1.0f) * scale);
    }
    CU(cudaMalloc(&d, (size_t)n * 2));
    CU(cudaMemcpy(d, h, (size_t)n * 2, cudaMemcpyHostToDevice));
    free(h);
    return d;
}

static void io_alloc(probe *P, const shape *p)
{
    uint32_t seed = 12345u;
    P->y_elems = p->n * p->k * out_size(p->h, p->r, p) * out_size(p->w, p->s, p);
    P->x = upload_random(p->n * p->c * p->h * p->w, 1.0f, &seed);
    /* weights ~ 1/sqrt(fan-in): outputs of order 1, well inside fp16 */
    P->w = upload_random(p->k * p->c * p->r * p->s, 1.0f / sqrtf((float)(p->c * p->r * p->s)),
                         &seed);
    P->b = upload_random(p->k, 0.5f, &seed);
    CU(cudaMalloc(&P->y, (size_t)P->y_elems * 2));
    P->yh = need(malloc((size_t)P->y_elems * 2));
    P->ref = need(malloc((size_t)P->y_elems * sizeof *P->ref));
    P->ws = NULL;
    P->ws_bytes = 0;
    CU(cudaMalloc(&P->busy, BUSY_BYTES));
}

static void io_free(probe *P)
{
    CU(cudaFree(P->x));
    CU(cudaFree(P->w));
    CU(cudaFree(P->b));
    CU(cudaFree(P->y));
    CU(cudaFree(P->ws));
    CU(cudaFree(P->busy));
    free(P->yh);
    free(P->ref);
}

static void collect_engines(run *r, cudnnBackendDescriptor_t g)
{
    int i;
    for (i = 0; i < r->n && r->neng < MAXENG; i++)
        if (!find_engine(r, r->e[i].engine)) {
            r->eng[r->neng].id = r->e[i].engine;
            read_engine(g, &r->eng[r->neng++]);
        }
}

static void summary(const run *r, const char *name, int ref, int best, int best_h, int *count)
{
    const entry *f = &r->e[ref], *b = &r->e[best], *h = &r->e[best_h];
    printf("\nSUMMARY %s: heuristic first %s eng%lld %.2f us; best heuristic %s eng%lld %.2f us "
           "(%.2fx); best %s eng%lld %s %.2f us (%.2fx); %d timed, %d failed, %d skipped, %d "
           "over --max-variants, %d wrong\n",
           name, f->label, (long long)f->engine, f->us, h->label, (long long)h->engine, h->us,
           f->us / h->us, b->label, (long long)b->engine, b->what, b->us, f->us / b->us, count[0],
           count[1], count[2], r->capped, count[3]);
}

/* Phase 2 and the table: rows as they are timed (those so far survive a crash in a later
 * config), then the summary line. */
static void run_all(probe *P, run *r, const char *name)
{
    int i, ref = -1, best = -1, best_h = -1, count[4] = {0, 0, 0, 0}; /* timed, failed, ... */
    printf("\n### timings\n\nus per execute: median of %d timings of %d back-to-back executes "
           "(queued behind a 1 GiB memset: GPU time); "
           "speedup against the first config timed; max rel diff: max |y - ref| / (|ref| + 1%% "
           "of max |ref|) against its output, > %g flagged\n\n"
           "| config | knobs changed | finalize | us/exec | speedup | max rel diff |\n"
           "| --- | --- | --- | --- | --- | --- |\n",
           REPS, BATCH, BAD_DIFF);
    for (i = 0; i < r->n; i++) {
        entry *e = &r->e[i];
        if (e->state == ST_BUILT)
            time_entry(P, e, ref < 0);
        if (e->state == ST_TIMED) {
            ref = ref < 0 ? i : ref;
            count[0]++;
            count[3] += e->diff > BAD_DIFF;
            if (e->diff <= BAD_DIFF && (best < 0 || e->us < r->e[best].us))
                best = i;
            if (e->label[0] != 'v' && (best_h < 0 || e->us < r->e[best_h].us))
                best_h = i;
        }
        count[1] += e->state == ST_FAIL;
        count[2] += e->state == ST_SKIP_TIME || e->state == ST_SKIP_WS;
        print_row(e, ref >= 0 ? r->e[ref].us : 0.0);
        fflush(stdout);
    }
    if (ref >= 0 && P->ref_bad > 0)
        printf("\nnote: the reference %s has %d non-finite outputs, not compared\n",
               r->e[ref].label, P->ref_bad);
    if (ref < 0)
        printf("\nSUMMARY %s: nothing ran (%d failed)\n", name, count[1]);
    else /* the reference is the heuristics' unless all of theirs failed */
        summary(r, name, ref, best, best_h >= 0 ? best_h : ref, count);
}

static void probe_shape(probe *P, const shape *p, double deadline)
{
    run r;
    char name[96];
    cudnnBackendDescriptor_t g;
    memset(&r, 0, sizeof r);
    r.cap = 2 * MAXCFG + P->max_variants;
    r.e = need(calloc((size_t)r.cap, sizeof *r.e));
    snprintf(name, sizeof name, "n%lld c%lld %lldx%lld k%lld %lldx%lld/%lld p%lld", p->n, p->c,
             p->h, p->w, p->k, p->r, p->s, p->stride, p->pad);
    printf("\n## %s (fp16 NHWC, conv + bias + ReLU)\n\n", name);
    g_where = name;
    io_alloc(P, p);
    g = build_graph(P->h, p);
    r.n_a = heuristics(&r, g, CUDNN_HEUR_MODE_A, 'A');
    printf("mode A: %d configs, mode B: %d configs\n", r.n_a,
           heuristics(&r, g, CUDNN_HEUR_MODE_B, 'B'));
    collect_engines(&r, g);
    print_configs(&r);
    add_variants(&r, P->max_variants);
    build_all(P, &r, g, deadline);
    if (P->ws_bytes > 0)
        CU(cudaMalloc(&P->ws, (size_t)P->ws_bytes));
    run_all(P, &r, name);
    io_free(P);
    pool_release(0);
    free(r.e);
}

static const shape resnet50_3x3[] = {
        {1, 64, 56, 56, 64, 3, 3, 1, 1},   {1, 128, 28, 28, 128, 3, 3, 1, 1},
        {1, 256, 14, 14, 256, 3, 3, 1, 1}, {1, 512, 7, 7, 512, 3, 3, 1, 1},
        {1, 128, 56, 56, 128, 3, 3, 2, 1}, {1, 256, 28, 28, 256, 3, 3, 2, 1},
        {1, 512, 14, 14, 512, 3, 3, 2, 1},
};

/* N,C,H,W,K,R,S,stride,pad; strtoll, not sscanf (which MSVC's /W4 /WX refuses). */
static int parse_shape(const char *v, shape *p)
{
    long long *f[9] = {&p->n, &p->c, &p->h, &p->w, &p->k, &p->r, &p->s, &p->stride, &p->pad};
    char *end;
    int i;
    for (i = 0; i < 9; i++, v = end + 1) {
        *f[i] = strtoll(v, &end, 10);
        if (end == v || *end != (i < 8 ? ',' : '\0') || *f[i] < (i == 8 ? 0 : 1))
            return 0;
    }
    return out_size(p->h, p->r, p) > 0 && out_size(p->w, p->s, p) > 0;
}

static int parse_args(int argc, char **argv, probe *P, shape *one, double *budget)
{
    int i, have = 0, ok = argc % 2 == 1; /* options come in pairs */
    for (i = 1; ok && i < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        char *end = NULL;
        if (!strcmp(o, "--shape")) {
            ok = have = parse_shape(v, one);
        } else if (!strcmp(o, "--max-variants")) {
            P->max_variants = (int)strtol(v, &end, 10);
            ok = end != v && !*end && P->max_variants >= 0;
        } else if (!strcmp(o, "--budget")) {
            *budget = strtod(v, &end);
            ok = end != v && !*end && *budget >= 0;
        } else {
            ok = 0;
        }
    }
    if (!ok) {
        fprintf(stderr, "usage: probe_knobs [--shape N,C,H,W,K,R,S,stride,pad] "
                        "[--max-variants M (256)] [--budget seconds (90)]\n");
        exit(2);
    }
    return have;
}

int main(int argc, char **argv)
{
    probe P;
    shape one;
    struct cudaDeviceProp prop;
    double budget = 90.0;
    const shape *list = resnet50_3x3;
    int i, n = (int)(sizeof resnet50_3x3 / sizeof *resnet50_3x3);
    memset(&P, 0, sizeof P);
    P.max_variants = 256;
    if (parse_args(argc, argv, &P, &one, &budget)) {
        list = &one;
        n = 1;
    }
    CU(cudaSetDevice(0));
    CU(cudaGetDeviceProperties(&prop, 0));
    CU(cudaStreamCreate(&P.stream));
    CU(cudaEventCreate(&P.ev[0]));
    CU(cudaEventCreate(&P.ev[1]));
    DNN(cudnnCreate(&P.h));
    DNN(cudnnSetStream(P.h, P.stream));
    printf("# cuDNN engine configs and knobs at batch 1\n\n%s, %d SMs, cuDNN %zu; budget %.0f s "
           "for plan builds, at most %d knob variants a shape\n",
           prop.name, prop.multiProcessorCount, cudnnGetVersion(), budget, P.max_variants);
    budget += now_s();
    for (i = 0; i < n; i++) /* each shape its share of what is left */
        probe_shape(&P, &list[i], now_s() + (budget - now_s()) / (n - i));
    DNN(cudnnDestroy(P.h));
    CU(cudaEventDestroy(P.ev[0]));
    CU(cudaEventDestroy(P.ev[1]));
    CU(cudaStreamDestroy(P.stream));
    free(g_pool.d);
    return 0;
}
