/* main.c: nnop-bench, the command-line driver: check, time and inspect nnop on your own
 * problems or the bundled networks before you link. Public nnop API only. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nb.h"
#include "nb_run.h"
#include "nb_serve.h"
#include "nb_thread.h"

#define MAX_DEVICES 64

static void usage(FILE *f)
{
    fputs("usage: nnop-bench [MODES] [OPTIONS] [PROBLEM ...] [-f FILE ...] [--net NAME ...]\n"
          "                  [--onnx MODEL.onnx ...]\n"
          "\n"
          "Checks, times and inspects nnop on problems given as descriptors or on the bundled\n"
          "networks. Progress goes to stderr; the table (or --json/--csv '-') to stdout.\n"
          "\n"
          "Modes (any combination; default --perf):\n"
          "  --check            compare with a reference on the same data; print the error and\n"
          "                     tolerance; exit status 1 on a mismatch\n"
          "  --perf             warm-up, rotating inputs larger than L2, median of repeats: GPU\n"
          "                     time per call (CUDA events), host time per call, TFLOP/s, GB/s "
          "and\n"
          "                     the fraction of this run's measured peaks (copy bandwidth and an\n"
          "                     nnop_linear matmul)\n"
          "  --engines          compile under each nnop_engine_policy (prefer-precompiled,\n"
          "                     precompiled-only, fastest + autotune) and print what each picks\n"
          "                     (nnop_plan_describe), with compile and run time; then every\n"
          "                     engine cuDNN's heuristics offer for each cuDNN partition\n"
          "                     (nnop_plan_engines): precompiled or runtime compiled, build time,\n"
          "                     GPU time, workspace, notes, and which policy takes it (rows of\n"
          "                     kind \"engine\" in --json/--csv). Builds every engine: slow\n"
          "\n"
          "Problems (a descriptor is one argument, or several up to the next op name):\n"
          "  conv    nNcChHwWkKrRsS [pP|pPHxPW] [stS|stSHxSW] [dlD|dlDHxDW] [gG]\n"
          "  pool    nNcChHwWrRsS [max|avg] [incpad] [pP..] [stS..]\n"
          "  gap     nNcChHwW                 global average pool\n"
          "  linear  nNcCkK                   x N x C, w K x C (post=bias uses the linear's bias)\n"
          "  softmax nNcC | nNcChHwW          over dim 1\n"
          "  flatten nNcChHwW\n"
          "  eltwise nNcChHwW                 only the post-ops\n"
          "  deconv  nNcChHwWkKrRsS [pP..] [stS..] [dlD..] [gG] [opO|opOHxOW]\n"
          "                                   transposed conv (w C x K/G x R x S), output pad\n"
          "  norm    nNcChHwW [kind=layer|layer_chw|group|rms] [gG] [eps=E]\n"
          "                                   over C (layer, rms), C,H,W, or G groups\n"
          "  resize  nNcChHwW [nearest|bilinear] [align] [size=H|HxW | scale=S|SHxSW]\n"
          "  common: dt=f32|f16|bf16 (f32)  layout=nchw|nhwc (nchw)  name=LABEL\n"
          "          post=LIST, comma-separated, in order: bias, bn, add (a second input),\n"
          "          mul (a second input of N,C,1,1: squeeze-excitation), identity, relu,\n"
          "          relu6, leaky_relu[:a], gelu, gelu_tanh, sigmoid, tanh, silu, elu[:a],\n"
          "          hardswish, hardsigmoid, mish, clamp:lo:hi\n"

          "  w defaults to h and s to r; p0 st1 dl1 g1 by default.\n"
          "  example: conv n32c64h56w56k64r3s3 p1 st1 dl1 g1 dt=f16 layout=nhwc "
          "post=bias,bn,add,relu\n"
          "  -f, --file FILE    a problem file: one descriptor a line, '#' comments\n"
          "\n",
          f);
    fputs("Networks:\n"
          "  --net NAME         resnet50 (seeded random weights), lenet, mnist-resnet (the\n"
          "                     bundled MNIST models, mnist/), mobilenet_v3_large,\n"
          "                     efficientnet_b0, convnext_tiny, unet (bundled graphs, nets/,\n"
          "                     seeded random weights); repeatable. The bundled files are read\n"
          "                     from $NNOP_BENCH_DATA_DIR when set, else from share/nnop of the\n"
          "                     installation (../share/nnop from bin/), else from the source\n"
          "                     tree's examples/ (an uninstalled build)\n"
          "  --onnx FILE        an ONNX model, loaded with nnop_onnx (docs/onnx.md) in --dt and\n"
          "                     --layout (default f32 nchw), its symbolic batch dims set to\n"
          "                     --batch; inputs seeded uniform in [0, 1); repeatable\n"
          "  --onnx-data DIR    the ONNX models' test data (input_0.pb ... and output_0.pb, as\n"
          "                     in ONNX's test_data_set_0): their inputs are run, --check\n"
          "                     compares output 0 with output_0.pb, and the batch defaults to\n"
          "                     input_0.pb's; without it a check runs against the CPU backend\n"
          "  --batch N          images per batch (default 32; per GPU with --devices)\n"
          "  --dt T, --layout L dtype and layout of the network (default f16 nhwc for resnet50\n"
          "                     on CUDA, f32 elsewhere; the MNIST models take NCHW input)\n"
          "  --size S           image height and width of resnet50 and the examples/nets\n"
          "                     networks (default 224)\n"
          "  --weights-dir DIR  folder with lenet.safetensors and resnet.safetensors\n"
          "  --cuda-graph off|on|both   whole-plan CUDA graph replay (default off; both runs\n"
          "                     each problem and network twice)\n"
          "\n"
          "Devices and contexts:\n"
          "  --backend auto|cuda|cpu    (default auto: the GPU when there is one)\n"
          "  --device N         CUDA device (default 0)\n"
          "  --devices LIST|all one context per device on its own thread, data-parallel: each\n"
          "                     runs the whole batch; prints per-device and aggregate images/s\n"
          "                     and the scaling efficiency against device LIST[0] alone.\n"
          "                     Devices that do not exist are dropped with a note.\n"
          "  --policy P         prefer-precompiled (default), precompiled-only, fastest\n"
          "  --serve T          serve the network from T threads (1 to 64), two ways in one\n"
          "                     run: one batch_range plan (a plain one for one size)\n"
          "                     with T execution contexts, and a\n"
          "                     context a thread with a plan per batch size; images/s, p50\n"
          "                     and p99 request latency, memory held; both ways' outputs are\n"
          "                     checked (finite, equal) before they are timed\n"
          "  --serve-batches L  request sizes, drawn uniformly (default 1,2,4,.. --batch)\n"
          "  --serve-requests N requests a thread (default 32)\n"
          "  --autotune, --deterministic, --allow-tf32, --cache FILE, --workspace-limit BYTES\n"
          "\n",
          f);
    fputs("Method:\n"
          "  --warmup N         calls before timing (default 2 x the rotated sets)\n"
          "  --reps N           timed repeats, median reported (default 5, at most 101)\n"
          "  --calls N          calls per repeat (default: about 20 ms worth, 1 to 1000)\n"
          "  --rotate-mib M     bytes of input/output sets to rotate (default 2 x L2)\n"
          "  --no-peaks         skip the copy and matmul peak measurements\n"
          "  --seed N           data seed (default 1)\n"
          "  --ref auto|cpu|naive  check reference: nnop's CPU backend or nnop-bench's naive\n"
          "                     float64 one (default auto: cpu backend for CUDA runs, naive on\n"
          "                     the CPU backend; networks need the CPU backend)\n"
          "  --tol X            check tolerance (default f32 1e-3, f16 1e-2, bf16 6e-2 of\n"
          "                     |ref| + rms(ref) per element)\n"
          "\n"
          "Output:\n"
          "  --json FILE, --csv FILE   also write JSON or CSV ('-' = stdout, no table then)\n"
          "  --time-limit S     start no new problem after S seconds (the first always runs);\n"
          "                     the report holds those done, stderr says where it stopped\n"
          "  --quiet            no table\n"
          "  --list-nets        the networks built in\n"
          "  -h, --help, --version\n"
          "\n"
          "Environment:\n"
          "  NNOP_BENCH_DATA_DIR  folder of the bundled network files (mnist/*.safetensors,\n"
          "                     nets/*.json); when set, the only place they are looked for\n"
          "\n"
          "Exit status: 0 all fine, 1 a check mismatched, 2 usage error, 3 a problem or network\n"
          "failed to build, compile or run (a bundled network file missing included).\n"
          "\n"
          "Examples:\n"
          "  nnop-bench --check conv n2c16h8w8k8r3 p1 post=bias,relu --backend cpu\n"
          "  nnop-bench --perf -f bench/problems/resnet50_conv.txt --json conv.json\n"
          "  nnop-bench --perf --net resnet50 --batch 256 --cuda-graph both --devices all\n"
          "  nnop-bench --check --perf --onnx model.onnx --onnx-data test_data_set_0 --dt f16\n",
          f);
}

typedef struct item {
    nb_problem prob; /* when net < 0 and onnx NULL */
    int net;
    const char *onnx; /* --onnx FILE */
    char text[300];
} item;

typedef struct opts {
    int check, perf, engines, quiet, no_peaks, cuda_graph_mode; /* 0 off, 1 on, 2 both */
    nnop_backend backend;
    int device, ndev, devices[MAX_DEVICES], devices_all, devices_given;
    nnop_context_options co;
    nb_method m;
    uint64_t seed;
    int ref; /* 0 auto, 1 cpu, 2 naive */
    double tol;
    double time_limit_s; /* 0: none; else no new problem starts after this many seconds */
    const char *json, *csv, *weights_dir, *onnx_data;
    int serve, serve_requests, nserve_batches; /* --serve T, --serve-requests, -batches */
    int64_t serve_batches[NB_SERVE_MAX_BATCHES];
    int64_t batch, size;
    int dt_set, layout_set, batch_set;
    nnop_dtype dt;
    nnop_layout layout;
    item *items;
    int nitems, cap;
} opts;

static int is_op(const char *s)
{
    int i;
    size_t n;
    for (i = 0; i < NB_OP_COUNT; i++) {
        n = strlen(nb_op_name((nb_op)i));
        if (strncmp(s, nb_op_name((nb_op)i), n) == 0 && (s[n] == '\0' || s[n] == ' '))
            return 1;
    }
    return 0;
}

static item *add_item(opts *o)
{
    if (o->nitems == o->cap) {
        int cap = o->cap ? 2 * o->cap : 16;
        item *v = (item *)realloc(o->items, (size_t)cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "nnop-bench: out of memory\n");
            exit(2);
        }
        o->items = v;
        o->cap = cap;
    }
    memset(&o->items[o->nitems], 0, sizeof o->items[0]);
    o->items[o->nitems].net = -1;
    return &o->items[o->nitems++];
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int
bad(const char *fmt, ...) NB_PRINTF(1, 2);
static int bad(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "nnop-bench: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see --help)\n");
    return 2;
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v;
    if (!s)
        return -1;
    v = strtoll(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_devices(opts *o, const char *s)
{
    char buf[512], *p, *q;
    long long v;
    o->devices_given = 1;
    if (strcmp(s, "all") == 0) {
        o->devices_all = 1;
        return 0;
    }
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    o->ndev = 0;
    for (p = buf; p; p = q) {
        q = strchr(p, ',');
        if (q)
            *q++ = '\0';
        if (parse_int(p, 0, 1023, &v) != 0 || o->ndev == MAX_DEVICES)
            return -1;
        o->devices[o->ndev++] = (int)v;
    }
    return 0;
}

/* --serve-batches 1,8,32 */
static int parse_batches(opts *o, const char *s)
{
    char buf[512], *p, *q;
    long long v;
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    o->nserve_batches = 0;
    for (p = buf; p; p = q) {
        q = strchr(p, ',');
        if (q)
            *q++ = '\0';
        if (parse_int(p, 1, 65536, &v) != 0 || o->nserve_batches == NB_SERVE_MAX_BATCHES)
            return -1;
        o->serve_batches[o->nserve_batches++] = v;
    }
    return 0;
}

/* --serve: networks only; request sizes default to the powers of two up to --batch. */
static int serve_defaults(opts *o)
{
    int i;
    for (i = 0; i < o->nitems; i++)
        if (o->items[i].net < 0 && !o->items[i].onnx)
            return bad("--serve serves a network (--net or --onnx), not '%s'", o->items[i].text);
    if (!o->serve_requests)
        o->serve_requests = 32;
    if (!o->nserve_batches) {
        int64_t b;
        for (b = 1; b < o->batch && o->nserve_batches < NB_SERVE_MAX_BATCHES - 1; b *= 2)
            o->serve_batches[o->nserve_batches++] = b;
        o->serve_batches[o->nserve_batches++] = o->batch;
    }
    return 0;
}

/* Flush the descriptor being gathered from loose arguments. */
static int flush_desc(opts *o, char *acc)
{
    item *it;
    char err[512];
    if (!acc[0])
        return 0;
    it = add_item(o);
    if (nb_parse(acc, &it->prob, err, sizeof err) != 0) {
        fprintf(stderr, "nnop-bench: %s\n", err);
        return 2;
    }
    snprintf(it->text, sizeof it->text, "%s", acc);
    acc[0] = '\0';
    return 0;
}

static int parse_args(int argc, char **argv, opts *o)
{
    char acc[1024] = "", err[512];
    int i, rc;
    long long v;
    memset(o, 0, sizeof *o);
    nnop_context_options_init(&o->co);
    o->backend = NNOP_BACKEND_AUTO;
    o->m.reps = 5;
    o->seed = 1;
    o->batch = 32;
    o->size = 224;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            if (is_op(a) && (rc = flush_desc(o, acc)) != 0)
                return rc;
            if (!acc[0] && !is_op(a))
                return bad("'%s' is neither an option nor a problem", a);
            if (strlen(acc) + strlen(a) + 2 >= sizeof acc)
                return bad("descriptor too long at '%s'", a);
            if (acc[0])
                strcat(acc, " ");
            strcat(acc, a);
            continue;
        }
        if ((rc = flush_desc(o, acc)) != 0)
            return rc;
#define NEEDS_VALUE()                                                                              \
    do {                                                                                           \
        if (!val)                                                                                  \
            return bad("%s needs a value", a);                                                     \
        i++;                                                                                       \
    } while (0)
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            int ver = nnop_version();
            printf("nnop-bench (nnop %d.%d.%d)\n", ver / 10000, ver / 100 % 100, ver % 100);
            exit(0);
        } else if (strcmp(a, "--list-nets") == 0) {
            int k;
            for (k = 0; k < NB_NET_COUNT; k++)
                printf("%s%s\n", nb_net_name((nb_net_kind)k),
                       k == NB_NET_RESNET50 || nb_have_mnist() ? "" : " (not built in)");
            exit(0);
        } else if (strcmp(a, "--check") == 0) {
            o->check = 1;
        } else if (strcmp(a, "--perf") == 0) {
            o->perf = 1;
        } else if (strcmp(a, "--engines") == 0) {
            o->engines = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--no-peaks") == 0) {
            o->no_peaks = 1;
        } else if (strcmp(a, "--autotune") == 0) {
            o->co.autotune = 1;
        } else if (strcmp(a, "--deterministic") == 0) {
            o->co.deterministic = 1;
        } else if (strcmp(a, "--allow-tf32") == 0) {
            o->co.allow_tf32 = 1;
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--file") == 0) {
            nb_problem *ps;
            int n, k;
            NEEDS_VALUE();
            n = nb_parse_file(val, &ps, err, sizeof err);
            if (n < 0) {
                fprintf(stderr, "nnop-bench: %s\n", err);
                return 2;
            }
            for (k = 0; k < n; k++) {
                item *it = add_item(o);
                it->prob = ps[k];
                nb_format(&ps[k], it->text, sizeof it->text);
            }
            free(ps);
        } else if (strcmp(a, "--net") == 0) {
            item *it;
            NEEDS_VALUE();
            if (nb_net_parse(val) < 0)
                return bad("unknown network '%s' (resnet50, lenet, mnist-resnet, "
                           "mobilenet_v3_large, efficientnet_b0, convnext_tiny, unet)",
                           val);
            it = add_item(o);
            it->net = nb_net_parse(val);
            snprintf(it->text, sizeof it->text, "%s", val);
        } else if (strcmp(a, "--onnx") == 0) {
            item *it;
            NEEDS_VALUE();
            it = add_item(o);
            it->onnx = val;
            snprintf(it->text, sizeof it->text, "onnx %s", val);
        } else if (strcmp(a, "--onnx-data") == 0) {
            NEEDS_VALUE();
            o->onnx_data = val;
        } else if (strcmp(a, "--batch") == 0) {
            NEEDS_VALUE();
            if (parse_int(val, 1, 1 << 20, &v) != 0)
                return bad("bad --batch '%s'", val);
            o->batch = v;
            o->batch_set = 1;
        } else if (strcmp(a, "--size") == 0) {
            NEEDS_VALUE();
            if (parse_int(val, 32, 4096, &v) != 0)
                return bad("bad --size '%s' (32 to 4096)", val);
            o->size = v;
        } else if (strcmp(a, "--dt") == 0) {
            NEEDS_VALUE();
            if (nb_parse_dtype(val, &o->dt) != 0)
                return bad("unknown dtype '%s' (f32, f16 or bf16)", val);
            o->dt_set = 1;
        } else if (strcmp(a, "--layout") == 0) {
            NEEDS_VALUE();
            if (nb_parse_layout(val, &o->layout) != 0)
                return bad("unknown layout '%s' (nchw or nhwc)", val);
            o->layout_set = 1;
        } else if (strcmp(a, "--weights-dir") == 0) {
            NEEDS_VALUE();
            o->weights_dir = val;
        } else if (strcmp(a, "--cuda-graph") == 0) {
            NEEDS_VALUE();
            if (strcmp(val, "off") == 0)
                o->cuda_graph_mode = 0;
            else if (strcmp(val, "on") == 0)
                o->cuda_graph_mode = 1;
            else if (strcmp(val, "both") == 0)
                o->cuda_graph_mode = 2;
            else
                return bad("bad --cuda-graph '%s' (off, on or both)", val);
        } else if (strcmp(a, "--backend") == 0) {
            NEEDS_VALUE();
            if (strcmp(val, "auto") == 0)
                o->backend = NNOP_BACKEND_AUTO;
            else if (strcmp(val, "cuda") == 0)
                o->backend = NNOP_BACKEND_CUDA;
            else if (strcmp(val, "cpu") == 0)
                o->backend = NNOP_BACKEND_CPU;
            else
                return bad("unknown backend '%s' (auto, cuda or cpu)", val);
        } else if (strcmp(a, "--device") == 0) {
            NEEDS_VALUE();
            if (parse_int(val, 0, 1023, &v) != 0)
                return bad("bad --device '%s'", val);
            o->device = (int)v;
        } else if (strcmp(a, "--devices") == 0) {
            NEEDS_VALUE();
            if (parse_devices(o, val) != 0)
                return bad("bad --devices '%s' (0,1,... or all)", val);
        } else if (strcmp(a, "--policy") == 0) {
            NEEDS_VALUE();
            if (strcmp(val, "prefer-precompiled") == 0)
                o->co.policy = NNOP_POLICY_PREFER_PRECOMPILED;
            else if (strcmp(val, "precompiled-only") == 0)
                o->co.policy = NNOP_POLICY_PRECOMPILED_ONLY;
            else if (strcmp(val, "fastest") == 0)
                o->co.policy = NNOP_POLICY_FASTEST;
            else
                return bad("unknown policy '%s'", val);
        } else if (strcmp(a, "--cache") == 0) {
            NEEDS_VALUE();
            o->co.cache_path = val;
        } else if (strcmp(a, "--workspace-limit") == 0) {
            NEEDS_VALUE();
            if (parse_int(val, 0, (long long)1 << 50, &v) != 0)
                return bad("bad --workspace-limit '%s'", val);
            o->co.workspace_limit = (size_t)v;
        } else if (strcmp(a, "--warmup") == 0 || strcmp(a, "--reps") == 0 ||
                   strcmp(a, "--calls") == 0 || strcmp(a, "--rotate-mib") == 0 ||
                   strcmp(a, "--seed") == 0) {
            NEEDS_VALUE();
            if (parse_int(val, a[2] == 'r' && a[3] == 'e' ? 1 : 0, 1 << 30, &v) != 0)
                return bad("bad number '%s'", val);
            if (a[2] == 'w')
                o->m.warmup = (int)v;
            else if (a[2] == 'r' && a[3] == 'e')
                o->m.reps = (int)v;
            else if (a[2] == 'c')
                o->m.calls = (int)v;
            else if (a[2] == 'r')
                o->m.rotate_bytes = (double)v * 1048576.0;
            else
                o->seed = (uint64_t)v;
        } else if (strcmp(a, "--ref") == 0) {
            NEEDS_VALUE();
            if (strcmp(val, "auto") == 0)
                o->ref = 0;
            else if (strcmp(val, "cpu") == 0)
                o->ref = 1;
            else if (strcmp(val, "naive") == 0)
                o->ref = 2;
            else
                return bad("bad --ref '%s' (auto, cpu or naive)", val);
        } else if (strcmp(a, "--tol") == 0) {
            char *end;
            NEEDS_VALUE();
            o->tol = strtod(val, &end);
            if (*end || !(o->tol > 0))
                return bad("bad --tol '%s'", val);
        } else if (strcmp(a, "--time-limit") == 0) {
            char *end;
            NEEDS_VALUE();
            o->time_limit_s = strtod(val, &end);
            if (*end || !(o->time_limit_s > 0))
                return bad("bad --time-limit '%s' (seconds > 0)", val);
        } else if (strcmp(a, "--serve") == 0 || strcmp(a, "--serve-requests") == 0) {
            NEEDS_VALUE();
            if (parse_int(val, 1, a[7] ? 100000 : NB_SERVE_MAX_THREADS, &v) != 0)
                return bad("bad %s '%s'", a, val);
            *(a[7] ? &o->serve_requests : &o->serve) = (int)v;
        } else if (strcmp(a, "--serve-batches") == 0) {
            NEEDS_VALUE();
            if (parse_batches(o, val) != 0)
                return bad("bad --serve-batches '%s' (at most %d sizes of 1 to 65536)", val,
                           NB_SERVE_MAX_BATCHES);
        } else if (strcmp(a, "--json") == 0) {
            NEEDS_VALUE();
            o->json = val;
        } else if (strcmp(a, "--csv") == 0) {
            NEEDS_VALUE();
            o->csv = val;
        } else {
            return bad("unknown option '%s'", a);
        }
    }
    if ((rc = flush_desc(o, acc)) != 0)
        return rc;
    if (o->serve && (rc = serve_defaults(o)) != 0)
        return rc;
    if (!o->check && !o->perf && !o->engines && !o->serve)
        o->perf = 1;
    if (o->nitems == 0)
        return bad("nothing to run: give a problem, -f FILE, --net NAME or --onnx FILE");
    return 0;
}

static void fill_common(nb_result *r, const nb_env *e, const opts *o, const item *it,
                        const nb_net *net)
{
    snprintf(r->backend, sizeof r->backend, "%s", e->cuda ? "cuda" : "cpu");
    snprintf(r->device, sizeof r->device, "%s", e->name);
    r->device_id = e->cuda ? e->device : -1;
    snprintf(r->policy, sizeof r->policy, "%s",
             o->co.policy == NNOP_POLICY_FASTEST            ? "fastest"
             : o->co.policy == NNOP_POLICY_PRECOMPILED_ONLY ? "precompiled-only"
                                                            : "prefer-precompiled");
    if (net) {
        snprintf(r->kind, sizeof r->kind, "net");
        snprintf(r->name, sizeof r->name, "%s", nb_net_label(net));
        if (net->onnx_path)
            snprintf(r->desc, sizeof r->desc, "onnx %.180s batch=%lld dt=%s layout=%s",
                     net->onnx_path, (long long)net->batch, nb_dtype_name(net->dt),
                     nb_layout_name(net->layout));
        else
            snprintf(r->desc, sizeof r->desc, "%s batch=%lld dt=%s layout=%s size=%lld",
                     nb_net_name(net->kind), (long long)net->batch, nb_dtype_name(net->dt),
                     nb_net_any_shape(net->kind) ? nb_layout_name(net->layout) : "nchw",
                     (long long)net->size);
        r->batch = net->batch;
        r->flops = nb_net_flops(net);
    } else {
        snprintf(r->kind, sizeof r->kind, "problem");
        nb_format(&it->prob, r->desc, sizeof r->desc);
        if (it->prob.name[0])
            snprintf(r->name, sizeof r->name, "%s", it->prob.name);
        else
            snprintf(r->name, sizeof r->name, "%.63s", r->desc);
        r->batch = it->prob.n;
        r->flops = nb_problem_flops(&it->prob);
        r->bytes = nb_problem_bytes(&it->prob);
    }
}

/* ---------------------------------------------------------------- several devices */
typedef struct dev_job {
    nb_bound b;
    int iters;
    double seconds;
    int failed;
} dev_job;

static void dev_thread(void *arg)
{
    dev_job *j = (dev_job *)arg;
    double t0 = nb_now();
    int i;
    for (i = 0; i < j->iters; i++)
        if (nnop_plan_execute(j->b.plan, (const void *const *)&j->b.in[(i % j->b.sets) * j->b.nin],
                              &j->b.out[(i % j->b.sets) * j->b.nout]) != NNOP_OK) {
            j->failed = 1;
            break;
        }
    nnop_context_synchronize(j->b.env->ctx);
    j->seconds = nb_now() - t0;
}

static int run_devices(opts *o, nb_report *rep, const item *it, nb_work *w, const nb_net *net,
                       int cg)
{
    nb_env envs[MAX_DEVICES];
    dev_job jobs[MAX_DEVICES];
    nb_thread *th[MAX_DEVICES];
    int devs[MAX_DEVICES], n = 0, k, have = nb_cuda_device_count(), rc = 0, iters;
    double single_us = -1, host_us, wall, t0, agg;
    char err[512];
    nb_result *r = NULL;
    if (o->backend == NNOP_BACKEND_CPU || have == 0) {
        fprintf(stderr, "nnop-bench: --devices: %s: one device (the host)\n",
                have == 0 ? "no CUDA device" : "CPU backend");
        devs[n++] = 0;
    } else if (o->devices_all) {
        for (k = 0; k < have && k < MAX_DEVICES; k++)
            devs[n++] = k;
    } else {
        for (k = 0; k < o->ndev; k++) {
            if (o->devices[k] >= have) {
                fprintf(stderr,
                        "nnop-bench: --devices: device %d does not exist (%d CUDA "
                        "device%s): left out\n",
                        o->devices[k], have, have == 1 ? "" : "s");
                continue;
            }
            devs[n++] = o->devices[k];
        }
        if (n == 0)
            devs[n++] = 0;
    }
    fprintf(stderr, "nnop-bench: data-parallel on %d device%s\n", n, n == 1 ? "" : "s");
    memset(jobs, 0, sizeof jobs);
    for (k = 0; k < n; k++) {
        fprintf(stderr, "  [device %d] compiling %s ...\n", devs[k], it->text);
        if (nb_env_open(&envs[k], o->backend, devs[k], &o->co, err, sizeof err) != 0 ||
            nb_bind(&jobs[k].b, &envs[k], w, cg, 2, err, sizeof err) != 0) {
            fprintf(stderr, "nnop-bench: device %d: %s\n", devs[k], err);
            if (envs[k].ctx)
                nb_env_close(&envs[k]);
            n = k;
            rc = 3;
            break;
        }
    }
    if (n > 0 && nb_time(&jobs[0].b, &o->m, &single_us, &host_us, err, sizeof err) != 0) {
        fprintf(stderr, "nnop-bench: %s\n", err);
        rc = 3;
    }
    if (single_us < 0)
        single_us = host_us;
    iters = single_us > 0 ? (int)(o->m.reps * 0.05 / (single_us * 1e-6)) : 10;
    iters = iters < 10 ? 10 : iters > 2000 ? 2000 : iters;
    if (rc == 0) {
        for (k = 0; k < n; k++)
            jobs[k].iters = iters;
        t0 = nb_now();
        for (k = 0; k < n; k++)
            if (nb_thread_start(&th[k], dev_thread, &jobs[k]) != 0)
                dev_thread(&jobs[k]), th[k] = NULL;
        for (k = 0; k < n; k++)
            nb_thread_join(th[k]);
        wall = nb_now() - t0;
        agg = 0;
        for (k = 0; k < n; k++) {
            r = nb_report_add(rep);
            fill_common(r, &envs[k], o, it, net);
            snprintf(r->kind, sizeof r->kind, "devices");
            r->cuda_graph = cg;
            r->compile_ms = jobs[k].b.compile_ms;
            r->host_us = jobs[k].seconds * 1e6 / iters;
            r->images_s = (double)r->batch * iters / jobs[k].seconds;
            if (jobs[k].failed) {
                snprintf(r->status, sizeof r->status, "execute failed");
                rc = 3;
            }
            snprintf(r->note, sizeof r->note, "device %d of %d, concurrent, %d batches", devs[k], n,
                     iters);
        }
        agg = (double)n * iters * (double)(net ? net->batch : it->prob.n) / wall;
        r = nb_report_add(rep);
        fill_common(r, &envs[0], o, it, net);
        snprintf(r->kind, sizeof r->kind, "devices");
        snprintf(r->name, sizeof r->name, "%.40s x%d", it->text, n);
        r->cuda_graph = cg;
        r->images_s = agg;
        r->efficiency = agg / ((double)n * (double)r->batch / (single_us * 1e-6));
        r->device_id = -1;
        snprintf(r->note, sizeof r->note,
                 "aggregate of %d device%s; one alone: %.1f images/s (%.1f us/batch)", n,
                 n == 1 ? "" : "s", (double)r->batch / (single_us * 1e-6), single_us);
    }
    for (k = 0; k < n; k++) {
        nb_unbind(&jobs[k].b);
        nb_env_close(&envs[k]);
    }
    return rc;
}

/* ---------------------------------------------------------------- serving (nb_serve.c) */
static int run_serve(const opts *o, nb_report *rep, nb_env *env, const item *it, const nb_net *net)
{
    nb_serve_opts so;
    nb_result *rows;
    int k, first = rep->n;
    memset(&so, 0, sizeof so);
    so.threads = o->serve;
    so.requests = o->serve_requests;
    so.cuda_graph = o->cuda_graph_mode == 1;
    so.seed = o->seed;
    so.tol = o->tol > 0 ? o->tol : nb_tolerance(net->dt);
    so.nbatches = o->nserve_batches;
    for (k = 0; k < so.nbatches; k++)
        so.batches[k] = o->serve_batches[k];
    nb_report_add(rep);
    nb_report_add(rep);
    rows = &rep->r[first]; /* after both adds: the array may have moved */
    fill_common(&rows[0], env, o, it, net);
    fill_common(&rows[1], env, o, it, net);
    return nb_serve(&so, env, o->backend, o->device, &o->co, net, &rows[0], &rows[1]);
}

/* ---------------------------------------------------------------- main */
int main(int argc, char **argv)
{
    opts o;
    nb_report rep;
    nb_env env, ref, pol[3];
    int rc = parse_args(argc, argv, &o), worst = 0, i, cgi, have_ref = 0, have_pol = 0;
    double t_start = nb_now();
    char err[512];
    if (rc != 0)
        return rc;
    nb_report_init(&rep);
    rep.warmup = o.m.warmup;
    rep.reps = o.m.reps;
    rep.calls = o.m.calls;
    {
        int v = nnop_version();
        snprintf(rep.version, sizeof rep.version, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    }
    if (nb_env_open(&env, o.backend, o.device, &o.co, err, sizeof err) != 0) {
        fprintf(stderr, "nnop-bench: no context: %s\n", err);
        return 3;
    }
    snprintf(rep.backend, sizeof rep.backend, "%s", env.cuda ? "cuda" : "cpu");
    snprintf(rep.device, sizeof rep.device, "%s", env.name);
    fprintf(stderr, "nnop-bench: nnop %s, %s backend, %s%s\n", rep.version, rep.backend, env.name,
            env.cuda && !nb_have_cuda_timing() ? " (no CUDA events in this build)" : "");
    if (o.check && (o.ref == 1 || (o.ref == 0 && env.cuda))) {
        if (nb_env_open(&ref, NNOP_BACKEND_CPU, 0, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "nnop-bench: no CPU reference context: %s\n", err);
            return 3;
        }
        have_ref = 1;
    }
    if ((o.perf || o.devices_given) && !o.no_peaks) {
        fprintf(stderr, "nnop-bench: measuring copy bandwidth and matmul peak ...\n");
        nb_measure_peaks(&env, &o.m, &rep);
    }
    for (i = 0; i < o.nitems; i++) {
        item *it = &o.items[i];
        nb_instance inst;
        if (i > 0 && o.time_limit_s > 0 && nb_now() - t_start > o.time_limit_s) {
            fprintf(stderr, "nnop-bench: --time-limit %g s reached: stopped after %d of %d\n",
                    o.time_limit_s, i, o.nitems);
            break;
        }
        nb_net net, *np = NULL;
        nb_work w;
        memset(&w, 0, sizeof w);
        w.seed = o.seed;
        if (it->net >= 0 || it->onnx) {
            memset(&net, 0, sizeof net);
            net.kind = it->onnx ? NB_NET_COUNT : (nb_net_kind)it->net;
            net.onnx_path = it->onnx;
            net.onnx_data = it->onnx ? o.onnx_data : NULL;
            net.batch = o.batch;
            if (net.onnx_data && !o.batch_set) {
                net.batch = nb_onnx_data_batch(net.onnx_data, err, sizeof err);
                if (net.batch < 1) {
                    fprintf(stderr, "nnop-bench: --onnx-data: %s\n", err);
                    worst = 3;
                    continue;
                }
            }
            net.size = o.size;
            net.dt = o.dt_set ? o.dt
                              : (env.cuda && net.kind == NB_NET_RESNET50 ? NNOP_F16 : NNOP_F32);
            net.layout = o.layout_set ? o.layout
                                      : (net.kind == NB_NET_RESNET50 && env.cuda ? NNOP_NHWC
                                                                                 : NNOP_NCHW);
            net.weights_dir = o.weights_dir;
            np = &net;
            w.net = np;
        } else {
            nb_instance_init(&inst, &it->prob, o.seed);
            w.inst = &inst;
        }
        fprintf(stderr, "[%d/%d] %s\n", i + 1, o.nitems, it->text);
        if (o.check) {
            nb_result *r = nb_report_add(&rep);
            fill_common(r, &env, &o, it, np);
            fprintf(stderr, "  check ...\n");
            if (np && !have_ref && !np->onnx_data) {
                r->check = 2;
                snprintf(r->note, sizeof r->note,
                         "a network is checked against the CPU backend: run it on CUDA "
                         "(or --ref cpu)");
            } else {
                nb_check(&env, o.ref == 2 && !np ? NULL : (have_ref ? &ref : NULL), &w,
                         o.cuda_graph_mode == 1, o.tol, r);
            }
            fprintf(stderr, "  check: %s, error %.3g, tolerance %.3g (%s)%s%s\n",
                    r->check == 1   ? "pass"
                    : r->check == 0 ? "MISMATCH"
                                    : "error",
                    r->check_err, r->check_tol, r->check_ref, r->note[0] ? ": " : "", r->note);
            if (r->check == 0 && worst < 1)
                worst = 1;
            if (r->check == 2)
                worst = 3;
        }
        if (o.serve && np) {
            int src = run_serve(&o, &rep, &env, it, np);
            worst = src > worst ? src : worst;
        }
        for (cgi = 0; o.perf && cgi < 2; cgi++) {
            int cg = o.cuda_graph_mode == 2 ? cgi : o.cuda_graph_mode;
            nb_result *r;
            nb_bound b;
            if (cgi == 1 && o.cuda_graph_mode != 2)
                break;
            if (o.devices_given) {
                int drc = run_devices(&o, &rep, it, &w, np, cg);
                worst = drc > worst ? drc : worst;
                continue;
            }
            r = nb_report_add(&rep);
            fill_common(r, &env, &o, it, np);
            r->cuda_graph = cg;
            fprintf(stderr, "  compile%s ...\n", cg ? " (CUDA graph)" : "");
            /* size the sets with a first bind of one set, then bind the real number */
            if (nb_bind(&b, &env, &w, cg, 1, err, sizeof err) == 0) {
                int sets = cg ? 1 : nb_sets_for(&env, &o.m, b.set_bytes);
                nb_unbind(&b);
                if (nb_bind(&b, &env, &w, cg, sets, err, sizeof err) == 0) {
                    char *d;
                    size_t need;
                    r->compile_ms = b.compile_ms;
                    r->partitions = nnop_plan_num_partitions(b.plan);
                    need = nnop_plan_describe(b.plan, NULL, 0);
                    d = (char *)malloc(need + 1);
                    if (d) {
                        nnop_plan_describe(b.plan, d, need + 1);
                        r->plan = d;
                    }
                    fprintf(stderr,
                            "  compiled in %.1f ms; timing, %d rotating set%s of %.1f MiB\n",
                            b.compile_ms, b.sets, b.sets == 1 ? "" : "s", b.set_bytes / 1048576);
                    if (nb_time(&b, &o.m, &r->gpu_us, &r->host_us, err, sizeof err) != 0) {
                        snprintf(r->status, sizeof r->status, "error");
                        snprintf(r->note, sizeof r->note, "%s", err);
                        worst = 3;
                    } else { /* as it comes: a run cut before the table still tells it */
                        fprintf(stderr, "  timed: %.1f us GPU, %.1f us host a call\n", r->gpu_us,
                                r->host_us);
                    }
                    snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note),
                             "%s%d sets, %d partition%s%s", r->note[0] ? "; " : "", b.sets,
                             r->partitions, r->partitions == 1 ? "" : "s",
                             cg ? ", CUDA graph" : "");
                    nb_unbind(&b);
                    nb_result_derive(r, &rep);
                    continue;
                }
            }
            snprintf(r->status, sizeof r->status, "error");
            snprintf(r->note, sizeof r->note, "%s", err);
            fprintf(stderr, "  %s\n", err);
            worst = 3;
        }
        if (o.engines) {
            static const char *const names[3] = {"prefer-precompiled", "precompiled-only",
                                                 "fastest"};
            int k;
            if (!have_pol) {
                for (k = 0; k < 3; k++) {
                    nnop_context_options c = o.co;
                    c.policy = (nnop_engine_policy)k;
                    c.autotune = k == 2;
                    if (nb_env_open(&pol[k], env.cuda ? NNOP_BACKEND_CUDA : NNOP_BACKEND_CPU,
                                    o.device, &c, err, sizeof err) != 0) {
                        fprintf(stderr, "nnop-bench: %s\n", err);
                        return 3;
                    }
                }
                have_pol = 1;
            }
            for (k = 0; k < 3; k++) {
                nb_result *r = nb_report_add(&rep);
                nb_bound b;
                fill_common(r, &pol[k], &o, it, np);
                snprintf(r->kind, sizeof r->kind, "engines");
                snprintf(r->policy, sizeof r->policy, "%s", names[k]);
                snprintf(r->name, sizeof r->name, "%s", names[k]);
                fprintf(stderr, "  engines: compiling under %s%s ...\n", names[k],
                        k == 2 ? " + autotune" : "");
                if (nb_bind(&b, &pol[k], &w, 0, 2, err, sizeof err) != 0) {
                    snprintf(r->status, sizeof r->status, "error");
                    snprintf(r->note, sizeof r->note, "%s", err);
                    fprintf(stderr, "  %s\n", err);
                    /* the default policy failing is the run failing (a missing network
                     * file, say); the others may refuse a graph it compiles */
                    if (k == 0)
                        worst = 3;
                    continue;
                }
                {
                    size_t need = nnop_plan_describe(b.plan, NULL, 0);
                    r->plan = (char *)malloc(need + 1);
                    if (r->plan)
                        nnop_plan_describe(b.plan, r->plan, need + 1);
                }
                r->compile_ms = b.compile_ms;
                r->partitions = nnop_plan_num_partitions(b.plan);
                if (nb_time(&b, &o.m, &r->gpu_us, &r->host_us, err, sizeof err) != 0) {
                    snprintf(r->status, sizeof r->status, "error");
                    snprintf(r->note, sizeof r->note, "%s", err);
                    worst = 3;
                }
                nb_result_derive(r, &rep);
                if (!o.quiet) {
                    printf("== %s | policy %s%s | compile %.1f ms | %s %.2f us\n%s\n", it->text,
                           names[k], k == 2 ? " + autotune" : "", r->compile_ms,
                           r->gpu_us > 0 ? "gpu" : "host", r->gpu_us > 0 ? r->gpu_us : r->host_us,
                           r->plan ? r->plan : "");
                }
                /* the engines once, on the first policy's plan: the survey says what each
                 * policy would take */
                if (k == 0 && nb_engines_survey(&rep, r, b.plan, o.quiet, err, sizeof err) != 0) {
                    fprintf(stderr, "nnop-bench: %s\n", err);
                    worst = worst > 2 ? worst : 3;
                }
                nb_unbind(&b);
            }
        }
        if (!np)
            nb_instance_free(&inst);
    }
    if (!o.quiet && !(o.json && strcmp(o.json, "-") == 0) && !(o.csv && strcmp(o.csv, "-") == 0))
        nb_write_table(&rep, stdout);
    if (o.json) {
        FILE *f = strcmp(o.json, "-") == 0 ? stdout : fopen(o.json, "w");
        if (!f) {
            fprintf(stderr, "nnop-bench: cannot write %s\n", o.json);
            worst = worst > 2 ? worst : 3;
        } else {
            nb_write_json(&rep, f);
            if (f != stdout)
                fclose(f);
        }
    }
    if (o.csv) {
        FILE *f = strcmp(o.csv, "-") == 0 ? stdout : fopen(o.csv, "w");
        if (!f) {
            fprintf(stderr, "nnop-bench: cannot write %s\n", o.csv);
            worst = worst > 2 ? worst : 3;
        } else {
            nb_write_csv(&rep, f);
            if (f != stdout)
                fclose(f);
        }
    }
    if (have_pol)
        for (i = 0; i < 3; i++)
            nb_env_close(&pol[i]);
    if (have_ref)
        nb_env_close(&ref);
    nb_env_close(&env);
    nb_report_free(&rep);
    free(o.items);
    return worst;
}
