/* difftest: the random differential tester of nnop, from the outside (nnop.h only).
 *
 *   difftest [--seed S] [--count N] [--backend cpu|cuda] [--time-limit SEC] [--repro-dir DIR]
 *            [--oracle-every K] [--case SEED] [--new-ops] [--special] [--tiny] [--verbose]
 *            [--quant int8|fp8]
 *
 * Each case is a seeded random graph, run with the CPU backend (fused) as the reference and
 * then fused and unfused on the backend under test (CPU: unfused only), with poisoned outputs;
 * every K-th case the reference is checked against a float64 oracle as well. A failure prints
 * the graph and, with --repro-dir, writes a self-contained reproducer. Exit: 0 no failure,
 * 1 failures, 77 --backend cuda without a GPU (a failure when NNOP_REQUIRE_GPU=1).
 * --new-ops: the graphs also use the issue-15 ops (mul/sub/div, the norms, concat, resize,
 * transposed conv, hard-swish, hard-sigmoid, mish); without it a seed gives the same graphs
 * as before they existed.
 * --special: graph inputs hold NaN, +inf and -inf (every 5th to 40th element), which must
 * reach the outputs as PyTorch's rules say (nnop.h); the same seeds give other graphs. With
 * --backend cuda, none reaches an fp16/bf16 conv that cuDNN runs (all but depthwise ones):
 * cuDNN's engines do not keep IEEE rules there (nnop.h), which PyTorch shares.
 * --rebind: each plan under test runs first on one set of buffers, then on another (inputs
 * copied anew, outputs poisoned), whose results are checked: the rebinding path. With
 * NNOP_DEBUG_POISON=1 the GPU's intermediates are NaN before each execute (nnop.h).
 * --tiny: graphs of tiny spatial values (issue 43): 1x1 and 2x2 after a GAP or a strided conv
 * or pool, kernels larger than their input through padding, dilations past the input, grouped
 * and depthwise 1x1 convs on 1x1 values, residual branches, chains of up to 14 steps.
 * --quant int8|fp8 (issue 45): instead of the runs above, each graph is calibrated on the CPU
 * backend, compiled with that precision and quantize_ends (every conv and linear layer
 * quantized), run, and compared with the float64 oracle quantizing the same way, within the
 * allowance for values that round the other way (quant.c, quant_oracle.c). CPU backend only;
 * not with --new-ops or --special (quant_oracle.c has no allowance rule for their ops). */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "difftest.h"

typedef struct options {
    uint64_t seed;
    long count; /* -1 = until the time limit */
    nnop_backend backend;
    double time_limit; /* seconds, 0 = none */
    const char *repro_dir;
    int oracle_every;
    int verbose;
    unsigned gen_flags; /* DT_GEN_*: --new-ops, --special */
    int single;         /* --case: run that case seed alone */
    int cuda_graph;     /* --cuda-graph: plans replayed as CUDA graphs (side streams) */
    int rebind;         /* --rebind: each plan executed on a first set of buffers, then read
                         * from a second */
    uint64_t case_seed;
    int quant; /* --quant: 0 off, 1 int8, 2 fp8 */
} options;

#define MAX_REASONS 24
typedef struct stats {
    long passed[3][2], refused[3][2], failed[3][2];
    long ops[DT_NUM_KINDS], oracle_checked;
    char reason[MAX_REASONS][120];
    long reason_count[MAX_REASONS];
    dt_quant_stats q;
} stats;

typedef struct tester {
    options o;
    stats s;
    nnop_context *cpu, *dut; /* reference and device under test (the same for --backend cpu) */
} tester;

static volatile uint64_t g_current_case; /* for the crash message */
static volatile int g_current_valid;

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(void)
{
    fprintf(stderr, "usage: difftest [--seed S] [--count N] [--backend cpu|cuda] "
                    "[--time-limit SEC] [--repro-dir DIR] [--oracle-every K] [--case SEED] "
                    "[--new-ops] [--special] [--tiny] [--cuda-graph] [--rebind] [--verbose] "
                    "[--quant int8|fp8]\n");
}

/* one option with its value; 0 = understood */
static int parse_one(options *o, const char *a, const char *v)
{
    if (!v)
        return -1;
    if (strcmp(a, "--seed") == 0)
        o->seed = strtoull(v, NULL, 0);
    else if (strcmp(a, "--count") == 0)
        o->count = strtol(v, NULL, 0);
    else if (strcmp(a, "--backend") == 0 && (!strcmp(v, "cpu") || !strcmp(v, "cuda")))
        o->backend = strcmp(v, "cpu") == 0 ? NNOP_BACKEND_CPU : NNOP_BACKEND_CUDA;
    else if (strcmp(a, "--time-limit") == 0)
        o->time_limit = strtod(v, NULL);
    else if (strcmp(a, "--repro-dir") == 0)
        o->repro_dir = v;
    else if (strcmp(a, "--oracle-every") == 0)
        o->oracle_every = atoi(v) > 0 ? atoi(v) : 1;
    else if (strcmp(a, "--quant") == 0 && (!strcmp(v, "int8") || !strcmp(v, "fp8")))
        o->quant = strcmp(v, "int8") == 0 ? 1 : 2;
    else if (strcmp(a, "--case") == 0)
        o->single = 1, o->case_seed = strtoull(v, NULL, 0);
    else
        return -1;
    return 0;
}

static int parse(options *o, int argc, char **argv)
{
    int i, seed_given = 0;
    memset(o, 0, sizeof *o);
    o->count = -2;
    o->backend = NNOP_BACKEND_CPU;
    o->oracle_every = 10;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0) {
            o->verbose = 1;
            continue;
        }
        if (strcmp(argv[i], "--new-ops") == 0) {
            o->gen_flags |= DT_GEN_NEW_OPS;
            continue;
        }
        if (strcmp(argv[i], "--special") == 0) {
            o->gen_flags |= DT_GEN_SPECIAL;
            continue;
        }
        if (strcmp(argv[i], "--tiny") == 0) {
            o->gen_flags |= DT_GEN_TINY;
            continue;
        }
        if (strcmp(argv[i], "--cuda-graph") == 0) {
            o->cuda_graph = 1;
            continue;
        }
        if (strcmp(argv[i], "--rebind") == 0) {
            o->rebind = 1;
            continue;
        }
        seed_given |= strcmp(argv[i], "--seed") == 0;
        if (parse_one(o, argv[i], i + 1 < argc ? argv[i + 1] : NULL) != 0)
            return -1;
        i++;
    }
    if (!seed_given) /* the random mode: a fresh seed, printed so the run can be repeated */
        o->seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    if (o->count == -2)
        o->count = o->time_limit > 0 ? -1 : 1000;
    if (o->quant && (o->backend != NNOP_BACKEND_CPU || o->cuda_graph || o->rebind ||
                     (o->gen_flags & (DT_GEN_NEW_OPS | DT_GEN_SPECIAL)))) {
        fprintf(stderr, "difftest: --quant runs on the CPU backend, without --new-ops, "
                        "--special, --cuda-graph and --rebind\n");
        return -1;
    }
    if ((o->gen_flags & DT_GEN_SPECIAL) && o->backend == NNOP_BACKEND_CUDA)
        o->gen_flags |= DT_GEN_SPECIAL_NO_HALF_CONV;
    return 0;
}

/* AddressSanitizer reports crashes itself, with more to say than the handler below */
#if defined(__SANITIZE_ADDRESS__)
#define DT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DT_ASAN 1
#endif
#endif

#ifdef DT_ASAN
static void install_crash_handler(void)
{
}
#else
static void on_crash(int sig)
{
    /* best effort: name the case, then die of the signal as before */
    if (g_current_valid)
        fprintf(stderr,
                "\ndifftest: signal %d in case 0x%016" PRIx64 "; rerun it alone with "
                "--case 0x%016" PRIx64
                " [--new-ops] [--special] --repro-dir DIR (the reproducer is written "
                "before it runs)\n",
                sig, (uint64_t)g_current_case, (uint64_t)g_current_case);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_crash_handler(void)
{
    signal(SIGSEGV, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGILL, on_crash);
    signal(SIGABRT, on_crash);
}
#endif

/* msg with every number as '#', so that one reason on different nodes counts once */
static void normalize(const char *msg, char *out, size_t len)
{
    size_t o = 0;
    for (; *msg && o + 1 < len; msg++)
        if (*msg < '0' || *msg > '9')
            out[o++] = *msg;
        else if (o == 0 || out[o - 1] != '#')
            out[o++] = '#';
    out[o] = '\0';
}

static void count_reason(stats *s, const char *msg)
{
    char key[sizeof s->reason[0]];
    int i;
    normalize(msg, key, sizeof key);
    for (i = 0; i < MAX_REASONS && s->reason[i][0]; i++)
        if (strcmp(s->reason[i], key) == 0)
            break;
    if (i == MAX_REASONS)
        i = MAX_REASONS - 1; /* the last row collects the rest */
    else if (!s->reason[i][0])
        memcpy(s->reason[i], key, sizeof key);
    s->reason_count[i]++;
}

static void report_failure(tester *t, const dt_graph *g, const char *what, const char *msg,
                           nnop_backend b, int fuse, double *const *expected)
{
    char path[1024];
    fprintf(stderr, "FAIL %s: %s\n", what, msg);
    dt_print_graph(stderr, g, "    ");
    if (t->o.repro_dir &&
        dt_write_repro(t->o.repro_dir, g, b, fuse, expected, msg, path, sizeof path) == 0)
        fprintf(stderr, "    reproducer: %s\n", path);
    else if (t->o.repro_dir)
        fprintf(stderr, "    could not write a reproducer into %s\n", t->o.repro_dir);
}

/* One run under test against the reference; 1 = failed, 0 = agreed or refused (*refused) */
static int check_run(tester *t, const dt_graph *g, const dts_case *c, int fuse,
                     const dts_result *ref, int *refused)
{
    dts_result r;
    char msg[1200], what[64];
    int failed = 0;
    nnop_backend b = t->o.backend;
    snprintf(what, sizeof what, "%s %s%s vs cpu fused", b == NNOP_BACKEND_CUDA ? "cuda" : "cpu",
             fuse ? "fused" : "unfused", t->o.cuda_graph ? " cuda-graph" : "");
    if (t->o.rebind)
        snprintf(what + strlen(what), sizeof what - strlen(what), " rebound");
    dts_run(t->dut, c,
            fuse | (t->o.cuda_graph ? DTS_CUDA_GRAPH : 0) | (t->o.rebind ? DTS_REBIND : 0), &r);
    if (r.outcome == DTS_REFUSED) {
        *refused = 1;
        count_reason(&t->s, r.message);
    } else if (r.outcome == DTS_ERROR) {
        snprintf(msg, sizeof msg, "%s: %s", nnop_status_string(r.status), r.message);
        failed = 1;
    } else if (!dt_agree_f(g, r.out, ref->out, msg, sizeof msg)) {
        failed = 1;
    }
    if (failed) { /* the reproducer runs as this did: CUDA graph, rebinding */
        report_failure(t, g, what, msg, b,
                       fuse | (t->o.cuda_graph ? DTS_CUDA_GRAPH : 0) |
                               (t->o.rebind ? DTS_REBIND : 0),
                       NULL);
        fprintf(stderr, "    plan:\n%s\n", r.plan);
    }
    dts_result_free(&r);
    return failed;
}

/* The reference against the float64 oracle; 1 = failed */
static int check_oracle(tester *t, const dt_graph *g, const dts_result *ref)
{
    double *want[DT_MAX_OUT] = {0};
    char msg[1200];
    int i, failed = 0;
    if (dt_oracle(g, want) != 0) {
        report_failure(t, g, "oracle", "out of host memory", NNOP_BACKEND_CPU, 1, NULL);
        failed = 1;
    } else if (!dt_agree(g, ref->out, want, msg, sizeof msg)) {
        report_failure(t, g, "cpu vs float64 oracle", msg, NNOP_BACKEND_CPU, 1, want);
        failed = 1;
    } else if (t->o.verbose) { /* how close the reference came: the margin a tolerance has */
        for (i = 0; i < g->n_out; i++) {
            dts_diff d;
            dts_compare(ref->out[i], want[i], dt_elems(&g->node[g->out[i]]), &d);
            printf("  output %d: cpu vs float64 oracle rel_l2 %.3g, max_rel %.3g", i, d.rel_l2,
                   d.max_rel);
            if (d.worst >= 0)
                printf(", worst got %.8g want %.8g", (double)ref->out[i][d.worst],
                       want[i][d.worst]);
            printf("\n");
        }
    }
    t->s.oracle_checked++;
    for (i = 0; i < DT_MAX_OUT; i++)
        free(want[i]);
    return failed;
}

/* --quant: the quantized plan against the quantized oracle; -1 failed, 0 passed, 1 refused */
static int run_quant_graph(tester *t, dt_graph *g)
{
    char msg[1200], plan[2000];
    int rc = dt_quant_run(t->cpu, g, t->o.quant == 2, &t->s.q, msg, sizeof msg, plan, sizeof plan);
    if (rc > 0)
        count_reason(&t->s, msg);
    else
        t->s.oracle_checked++; /* the quantized oracle, every graph it did not refuse */
    if (rc >= 0)
        return rc;
    fprintf(stderr, "FAIL cpu %s vs float64 oracle (quantized alike): %s\n",
            t->o.quant == 2 ? "fp8" : "int8", msg);
    dt_print_graph(stderr, g, "    ");
    fprintf(stderr, "    rerun: difftest --quant %s --case 0x%016" PRIx64 "%s\n    plan:\n%s\n",
            t->o.quant == 2 ? "fp8" : "int8", g->seed, (g->flags & DT_GEN_TINY) ? " --tiny" : "",
            plan);
    return -1;
}

/* Reference, descriptors, runs under test, oracle; -1 failed, 0 passed, 1 refused */
static int run_graph(tester *t, const dt_graph *g, long index)
{
    dts_tensor in[DT_MAX_NODES];
    dts_case c;
    dts_result ref;
    char msg[1200];
    int failed = 0, refused = 0;
    dt_case_of(g, in, &c);
    dts_run(t->cpu, &c, 1, &ref);
    if (ref.outcome == DTS_REFUSED) {
        count_reason(&t->s, ref.message);
        dts_result_free(&ref);
        return 1;
    }
    if (ref.outcome == DTS_ERROR) {
        snprintf(msg, sizeof msg, "%s: %s", nnop_status_string(ref.status), ref.message);
        report_failure(t, g, "cpu fused (reference)", msg, NNOP_BACKEND_CPU, 1, NULL);
        failed = 1;
    } else {
        if (dt_check_descs(t->cpu, g, msg, sizeof msg) != 0) {
            report_failure(t, g, "descriptors", msg, NNOP_BACKEND_CPU, 1, NULL);
            failed = 1;
        }
        if (t->o.backend == NNOP_BACKEND_CUDA)
            failed |= check_run(t, g, &c, 1, &ref, &refused);
        failed |= check_run(t, g, &c, 0, &ref, &refused);
        if (index % t->o.oracle_every == 0)
            failed |= check_oracle(t, g, &ref);
    }
    dts_result_free(&ref);
    return failed ? -1 : refused;
}

static void run_case(tester *t, uint64_t case_seed, long index)
{
    dt_graph g;
    int rc = -1, i;
    g_current_case = case_seed;
    g_current_valid = 1;
    if (dt_generate_ex(case_seed, t->o.gen_flags, &g) == 0) {
        rc = t->o.quant ? run_quant_graph(t, &g) : run_graph(t, &g, index);
        if (rc == 0)
            for (i = 0; i < g.n_nodes; i++)
                t->s.ops[g.node[i].kind]++;
    } else {
        fprintf(stderr, "FAIL generator: case 0x%016" PRIx64 " could not be built\n", case_seed);
    }
    if (t->o.verbose)
        printf("case %ld 0x%016" PRIx64 " %s %s: %s\n", index, case_seed, dt_dtype_name(g.dtype),
               g.layout == NNOP_NCHW ? "NCHW" : "NHWC",
               rc < 0 ? "FAILED"
               : rc   ? "refused"
                      : "passed");
    (rc < 0 ? t->s.failed : rc ? t->s.refused : t->s.passed)[g.dtype][g.layout]++;
    dt_graph_free(&g);
    g_current_valid = 0;
}

/* --case with --repro-dir: the reproducer first, so that a crash still leaves it */
static void prewrite_repro(tester *t)
{
    dt_graph g;
    char path[1024];
    if (!t->o.single || !t->o.repro_dir || dt_generate_ex(t->o.case_seed, t->o.gen_flags, &g) != 0)
        return;
    if (dt_write_repro(t->o.repro_dir, &g, t->o.backend, 1, NULL, "written before running it", path,
                       sizeof path) == 0)
        printf("reproducer: %s\n", path);
    dt_graph_free(&g);
}

static void print_stats(const tester *t, long cases, double seconds)
{
    const stats *s = &t->s;
    int d, l, k;
    printf("difftest: backend %s, seed 0x%016" PRIx64 ", %ld cases in %.1f s (%.1f cases/s), %ld "
           "checked against the float64 oracle\n",
           t->o.backend == NNOP_BACKEND_CUDA ? "cuda" : "cpu", t->o.seed, cases, seconds,
           seconds > 0 ? (double)cases / seconds : 0.0, s->oracle_checked);
    printf("  %-10s %8s %8s %8s\n", "", "passed", "refused", "failed");
    for (d = 0; d < 3; d++)
        for (l = 0; l < 2; l++)
            printf("  %-4s %-5s %8ld %8ld %8ld\n", dt_dtype_name((nnop_dtype)d),
                   l ? "NHWC" : "NCHW", s->passed[d][l], s->refused[d][l], s->failed[d][l]);
    printf("  nodes in passed cases:");
    for (k = 0; k < DT_NUM_KINDS; k++)
        printf(" %s %ld", dt_kind_name((dt_kind)k), s->ops[k]);
    printf("\n");
    for (k = 0; k < MAX_REASONS && s->reason[k][0]; k++)
        printf("  refused %6ld x %s\n", s->reason_count[k], s->reason[k]);
    if (t->o.quant)
        printf("  quantized (%s): %ld layers run, reading %ld activation elements: %ld of them "
               "allowed to round either way, %ld at the end of the range, %ld graph input "
               "elements put on a rounding tie; %ld cases agreed only within that allowance\n",
               t->o.quant == 2 ? "fp8" : "int8", s->q.layers, s->q.elements, s->q.ambiguous,
               s->q.saturated, s->q.ties, s->q.used_allowance);
    printf("  comparisons within the graph's conditioning (differences as large as two-ulp "
           "moves of its intermediates make, tolerated): %ld\n",
           dt_ill_conditioned_count());
}

static long total_failed(const stats *s)
{
    long n = 0;
    int d, l;
    for (d = 0; d < 3; d++)
        for (l = 0; l < 2; l++)
            n += s->failed[d][l];
    return n;
}

/* The contexts: CPU reference, and the backend under test; 77 = skip */
static int open_contexts(tester *t)
{
    nnop_context_options o;
    nnop_status st;
    const char *req = getenv("NNOP_REQUIRE_GPU");
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    if (nnop_context_create(&o, &t->cpu) != NNOP_OK)
        return 1;
    t->dut = t->cpu;
    if (t->o.backend != NNOP_BACKEND_CUDA)
        return 0;
    o.backend = NNOP_BACKEND_CUDA;
    o.allow_tf32 = 0; /* f32 tolerance 1e-4 */
    st = nnop_context_create(&o, &t->dut);
    if (st == NNOP_OK)
        return 0;
    fprintf(stderr, "difftest: no CUDA context: %s: %s\n", nnop_status_string(st),
            nnop_context_create_error());
    if (req && strcmp(req, "1") == 0)
        return 1;
    printf("difftest: SKIP (no GPU; set NNOP_REQUIRE_GPU=1 to make this a failure)\n");
    return 77;
}

static void run_all(tester *t)
{
    double start = now_s();
    long i;
    uint64_t state = t->o.seed;
    if (t->o.single) {
        run_case(t, t->o.case_seed, 0);
        print_stats(t, 1, now_s() - start);
        return;
    }
    for (i = 0; t->o.count < 0 || i < t->o.count; i++) {
        if (t->o.time_limit > 0 && now_s() - start >= t->o.time_limit)
            break;
        run_case(t, dts_next(&state), i); /* case i depends on the seed and i alone */
    }
    print_stats(t, i, now_s() - start);
}

int main(int argc, char **argv)
{
    static tester t;
    int rc;
    if (parse(&t.o, argc, argv) != 0) {
        usage();
        return 2;
    }
    printf("difftest: seed 0x%016" PRIx64 "\n", t.o.seed);
    fflush(stdout);
    rc = open_contexts(&t);
    if (rc == 0) {
        install_crash_handler();
        prewrite_repro(&t);
        run_all(&t);
        rc = total_failed(&t.s) ? 1 : 0;
    }
    if (t.dut != t.cpu)
        nnop_context_destroy(t.dut);
    nnop_context_destroy(t.cpu);
    return rc;
}
