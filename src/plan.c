/* plan.c: compile (validate, clone, partition, backend build), execute dispatch, describe. */
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "internal.h"
#include "platform/platform.h"

void nnop_compile_options_init(nnop_compile_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->fuse = 1;
}

static nnop_status build_backend(nnop_plan *p)
{
    if (p->ctx->backend == NNOP_BACKEND_CUDA)
        return nnop__cuda_plan_build(p);
    return nnop__cpu_plan_build(p);
}

static const char *policy_name(nnop_engine_policy p)
{
    return p == NNOP_POLICY_PRECOMPILED_ONLY ? "precompiled_only"
           : p == NNOP_POLICY_FASTEST        ? "fastest"
                                             : "prefer_precompiled";
}

/* NNOP_LOG=1: one line per partition of a compiled plan (ONEDNN_VERBOSE style):
 * nnop_log,compile,<backend>,plan <id>,partition <i>/<n>,<nodes>,<implementation>,
 * policy <p|- on the CPU>,cache <hit|miss|->,<ms of the whole compile>,<bytes> B (the least the
 * partition moves: with a profile's GPU time, its bandwidth) */
static void log_compile(const nnop_plan *p, uint64_t ns)
{
    int32_t i, k;
    for (i = 0; i < p->n_parts; i++) {
        const nnop__partition *part = &p->parts[i];
        char nodes[256], impl[512];
        nnop__text t;
        nnop__text_init(&t, nodes, sizeof nodes);
        for (k = 0; k < part->count; k++)
            nnop__textf(&t, "%s%s", k ? "+" : "", nnop__op(p->g->nodes[part->first + k].op)->name);
        impl[0] = '\0';
        if (p->cuda)
            nnop__cuda_partition_describe(p, i, impl, sizeof impl);
        for (k = 0; impl[k]; k++)
            if (impl[k] == '\n' || impl[k] == ',')
                impl[k] = impl[k] == ',' ? ';' : ' ';
        nnop__log(p->ctx, NNOP_LOG_COMPILE,
                  "compile,%s,plan %d,partition %d/%d,%s,%s,policy %s,cache %s,%.3f ms,%lld B",
                  p->cuda ? "cuda" : "cpu", (int)p->log_id, (int)i, (int)p->n_parts, nodes,
                  impl[0] ? impl : "reference (float32)",
                  p->cuda ? policy_name(p->ctx->opts.policy) : "-",
                  !p->cuda                     ? "-"
                  : strstr(impl, "from cache") ? "hit"
                                               : "miss",
                  (double)ns / 1e6, (long long)nnop__partition_bytes(p->g, part));
    }
}

/* Plans are numbered in the process, not per context, so that the log lines of two contexts
 * are told apart (each had its "plan 0"). The lock is made once, by the first compile that
 * logs, and kept; where it could not be made, the context's own count stands in. */
static nnop__mutex *log_lock;
static int32_t log_plans_made;

static void make_log_lock(void)
{
    if (nnop__mutex_create(&log_lock) != NNOP_OK)
        log_lock = NULL;
}

static int32_t next_log_id(nnop_context *ctx)
{
    int32_t id;
    nnop__once(NNOP__ONCE_LOG, make_log_lock);
    if (!log_lock)
        return ctx->log_plans++;
    nnop__mutex_lock(log_lock);
    id = log_plans_made++;
    nnop__mutex_unlock(log_lock);
    return id;
}

static void list(nnop_plan *p)
{
    p->live_next = p->ctx->live_plans;
    if (p->live_next)
        p->live_next->live_prev = p;
    p->ctx->live_plans = p;
    p->listed = 1;
}

static void unlist(nnop_plan *p)
{
    if (!p->listed)
        return;
    if (p->live_prev)
        p->live_prev->live_next = p->live_next;
    else
        p->ctx->live_plans = p->live_next;
    if (p->live_next)
        p->live_next->live_prev = p->live_prev;
    p->live_prev = p->live_next = NULL;
    p->listed = 0;
}

/* The compile up to the backend's build, shared with nnop_graph_memory: the options checked,
 * the graph validated and copied (its constants borrowed), the batch range checked, the
 * layouts settled and the graph partitioned. who names the caller in messages. */
static nnop_status plan_front(nnop_graph *g, const nnop_compile_options *opts, const char *who,
                              nnop_plan **out)
{
    nnop_plan *p;
    nnop_status st;
    if (opts &&
        nnop__first_nonzero(opts->reserved, sizeof opts->reserved / sizeof opts->reserved[0]) >= 0)
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "%s: opts->reserved is not all zero (start from "
                          "nnop_compile_options_init)",
                          who);
    if (opts && opts->precision != NNOP_PRECISION_FLOAT && g->ctx->backend == NNOP_BACKEND_CUDA)
        return nnop__fail(g->ctx, NNOP_ERR_UNSUPPORTED,
                          "%s: opts->precision %d: quantized plans run on the CPU backend only in "
                          "this version (an emulation of the 8-bit steps; the GPU's FP8 and INT8 "
                          "lowering is not built yet)",
                          who, opts->precision);
    st = nnop__graph_validate(g);
    if (st != NNOP_OK)
        return st;
    nnop__clear_error(g->ctx);
    p = (nnop_plan *)nnop__calloc(1, sizeof *p);
    if (!p)
        return nnop__fail(g->ctx, NNOP_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    p->ctx = g->ctx;
    if (opts)
        p->opts = *opts;
    else
        nnop_compile_options_init(&p->opts);
    st = nnop__graph_clone(g, &p->g);
    if (st == NNOP_OK)
        st = nnop__batch_range_check(p);
    if (st == NNOP_OK) {
        nnop__graph_settle_layouts(p->g);
        st = nnop__partition_graph(p->g, p->opts.fuse, &p->parts, &p->n_parts);
    }
    *out = p;
    return st;
}

/* A plan that failed, or nnop_graph_memory's that was never to be built. */
static nnop_status discard(nnop_plan *p, nnop_status st, const char *who)
{
    if (p->g)
        nnop__graph_drop_borrowed(p->g);
    if (st == NNOP_ERR_OUT_OF_MEMORY && p->ctx->last_error[0] == '\0')
        nnop__fail(p->ctx, st, "%s: out of memory", who);
    nnop_plan_destroy(p);
    return st;
}

nnop_status nnop__plan_compile_reference(nnop_graph *g, nnop_plan **out)
{
    nnop_plan *p = NULL;
    nnop_status st = plan_front(g, NULL, "nnop_calibrate", &p);
    *out = NULL;
    if (st == NNOP_OK)
        st = nnop__cpu_plan_build(p);
    if (st != NNOP_OK)
        return p ? discard(p, st, "nnop_calibrate") : st;
    nnop__graph_drop_borrowed(p->g);
    *out = p;
    return NNOP_OK;
}

nnop_status nnop_graph_compile(nnop_graph *g, const nnop_compile_options *opts, nnop_plan **out)
{
    uint64_t t0 = (g && g->ctx && g->ctx->log) ? nnop__monotonic_ns() : 0;
    nnop_plan *p = NULL;
    nnop_status st;
    if (!out)
        return g ? nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_graph_compile: out is NULL")
                 : NNOP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!g || !g->ctx) /* no graph, or an orphan: no context to compile for */
        return NNOP_ERR_INVALID_ARGUMENT;
    st = plan_front(g, opts, "nnop_graph_compile", &p);
    if (st == NNOP_OK)
        st = build_backend(p);
    if (st != NNOP_OK)
        return p ? discard(p, st, "nnop_graph_compile") : st;
    nnop__graph_drop_borrowed(p->g);
    p->log_id = p->ctx->log ? next_log_id(p->ctx) : -1; /* only the log shows it */
    if (p->ctx->log)
        log_compile(p, nnop__monotonic_ns() - t0);
    list(p);
    *out = p;
    return NNOP_OK;
}

/* Its buffers and engines; what describes it (the graph's copy, the partitions) stays. */
static void release_backend(nnop_plan *p)
{
    nnop__execs_orphan(p); /* their buffers first: they use the plan's backend state */
    if (p->cuda)
        nnop__cuda_plan_destroy(p);
    if (p->cpu)
        nnop__cpu_plan_destroy(p);
}

void nnop__plans_orphan(nnop_context *ctx)
{
    while (ctx->live_plans) {
        nnop_plan *p = ctx->live_plans;
        unlist(p);
        release_backend(p);
        p->ctx = NULL;
        p->g->ctx = NULL;
    }
}

void nnop_plan_destroy(nnop_plan *p)
{
    if (!p)
        return;
    unlist(p);
    release_backend(p);
    nnop__free(p->parts);
    nnop_graph_destroy(p->g);
    nnop__free(p);
}

/* nnop_plan_execute on a plan with a context: the arguments checked, then the backend. */
static nnop_status execute_checked(nnop_plan *p, const void *const *inputs, void *const *outputs)
{
    char why[NNOP_ERROR_LEN / 2];
    if (!nnop__check_io(p->g, inputs, outputs, why, sizeof why))
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_plan_execute: %s", why);
    if (p->cuda)
        return nnop__cuda_plan_execute(p, inputs, outputs);
    return nnop__cpu_plan_execute(p, inputs, outputs);
}

nnop_status nnop_plan_execute(nnop_plan *p, const void *const *inputs, void *const *outputs)
{
    uint64_t t0;
    nnop_status st;
    if (!p || !p->ctx) /* an orphan has no buffers, and no context to hold a message */
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(p->ctx);
    if (p->ctx->log < 2)
        return execute_checked(p, inputs, outputs);
    /* NNOP_LOG=2: one line per execute, host time, failed ones included (their status) */
    t0 = nnop__monotonic_ns();
    st = execute_checked(p, inputs, outputs);
    nnop__log(p->ctx, NNOP_LOG_EXECUTE, "exec,%s,plan %d,%d partitions,%s,%.3f ms (host)",
              p->cuda ? "cuda" : "cpu", (int)p->log_id, (int)p->n_parts, nnop_status_string(st),
              (double)(nnop__monotonic_ns() - t0) / 1e6);
    return st;
}

int nnop_plan_num_inputs(const nnop_plan *p)
{
    return p ? (int)p->g->n_inputs : 0;
}

int nnop_plan_num_outputs(const nnop_plan *p)
{
    return p ? (int)p->g->n_outputs : 0;
}

int nnop_plan_num_partitions(const nnop_plan *p)
{
    return p ? (int)p->n_parts : 0;
}

nnop_status nnop_plan_input_desc(const nnop_plan *p, int i, nnop_tensor_desc *out)
{
    if (!p)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!out || i < 0 || i >= p->g->n_inputs)
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_plan_input_desc: %s (the plan has %d inputs)",
                          !out ? "out is NULL" : "index out of range", (int)p->g->n_inputs);
    *out = p->g->values[p->g->inputs[i]].desc;
    return NNOP_OK;
}

nnop_status nnop_plan_output_desc(const nnop_plan *p, int i, nnop_tensor_desc *out)
{
    if (!p)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!out || i < 0 || i >= p->g->n_outputs)
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_plan_output_desc: %s (the plan has %d outputs)",
                          !out ? "out is NULL" : "index out of range", (int)p->g->n_outputs);
    *out = p->g->values[p->g->outputs[i]].desc;
    return NNOP_OK;
}

/* The name a plan's input or output is bound by. */
static const char *bound_name(const nnop_plan *p, int32_t id, int output)
{
    return output ? p->g->values[id].output_name : p->g->values[id].name;
}

/* Index of the first of the plan's inputs (outputs) named name, or -1. Names are kept to
 * NNOP_NAME_LEN - 1 bytes, and compared as kept. A miss is an answer, not a failure: the
 * context's last error stays as it was (nnop_plan_input_name lists the names there are). */
static int index_by_name(const nnop_plan *p, int output, const char *name)
{
    const int32_t *ids = output ? p->g->outputs : p->g->inputs;
    const int32_t n = output ? p->g->n_outputs : p->g->n_inputs;
    int32_t i;
    if (!name)
        return -1;
    for (i = 0; i < n; i++)
        if (strncmp(bound_name(p, ids[i], output), name, NNOP_NAME_LEN - 1) == 0)
            return (int)i;
    return -1;
}

int nnop_plan_input_index(const nnop_plan *p, const char *name)
{
    return p ? index_by_name(p, 0, name) : -1;
}

int nnop_plan_output_index(const nnop_plan *p, const char *name)
{
    return p ? index_by_name(p, 1, name) : -1;
}

const char *nnop_plan_input_name(const nnop_plan *p, int i)
{
    if (!p || i < 0 || i >= p->g->n_inputs)
        return NULL;
    return bound_name(p, p->g->inputs[i], 0);
}

const char *nnop_plan_output_name(const nnop_plan *p, int i)
{
    if (!p || i < 0 || i >= p->g->n_outputs)
        return NULL;
    return bound_name(p, p->g->outputs[i], 1);
}

nnop_status nnop_plan_memory(const nnop_plan *p, nnop_plan_memory_info *out)
{
    if (!p || !out)
        return p && p->ctx ? nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                                        "nnop_plan_memory: out is NULL")
                           : NNOP_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!p->ctx) /* an orphan: its buffers went with its context */
        return NNOP_ERR_INVALID_ARGUMENT;
    if (p->cuda)
        nnop__cuda_plan_memory(p, out);
    else
        nnop__cpu_plan_memory(p, out);
    return NNOP_OK;
}

nnop_status nnop_graph_memory(nnop_graph *g, const nnop_compile_options *opts,
                              nnop_plan_memory_info *out)
{
    nnop_plan *p = NULL;
    nnop_status st;
    if (out)
        memset(out, 0, sizeof *out);
    if (!g || !g->ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!out)
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_graph_memory: out is NULL");
    if (g->ctx->backend == NNOP_BACKEND_CUDA)
        return nnop__fail(g->ctx, NNOP_ERR_UNSUPPORTED,
                          "nnop_graph_memory: on the CUDA backend the engines and their "
                          "workspaces are chosen by the compile (compile, then "
                          "nnop_plan_memory; an allocator in the context options sees every "
                          "block as it is asked for)");
    st = plan_front(g, opts, "nnop_graph_memory", &p);
    if (st == NNOP_OK)
        st = nnop__cpu_graph_memory(p, out);
    if (st != NNOP_OK)
        memset(out, 0, sizeof *out);
    return p ? discard(p, st, "nnop_graph_memory") : st;
}

nnop_status nnop_plan_partition(const nnop_plan *p, int i, nnop_partition_info *out)
{
    const nnop__partition *part;
    if (out)
        memset(out, 0, sizeof *out);
    if (!p || !p->ctx || !out || i < 0 || i >= p->n_parts)
        return p && p->ctx
                       ? nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_plan_partition: %s",
                                    !out ? "out is NULL" : "partition index out of range")
                       : NNOP_ERR_INVALID_ARGUMENT;
    part = &p->parts[i];
    out->first_node = (int)part->first;
    out->num_nodes = (int)part->count;
    out->reason = part->reason;
    out->bytes_moved = (long long)nnop__partition_bytes(p->g, part);
    out->impl = "reference";
    out->engine = -1;
    if (p->cuda)
        nnop__cuda_partition_info(p, i, out);
    return NNOP_OK;
}

int nnop_plan_num_nodes(const nnop_plan *p)
{
    return p ? (int)p->g->n_nodes : 0;
}

const char *nnop_plan_node_op(const nnop_plan *p, int node)
{
    const nnop__op_def *def;
    if (!p || node < 0 || node >= p->g->n_nodes)
        return NULL;
    def = nnop__op(p->g->nodes[node].op);
    return def ? def->name : "?";
}

const char *nnop_plan_node_name(const nnop_plan *p, int node)
{
    const nnop__value *out;
    if (!p || node < 0 || node >= p->g->n_nodes)
        return NULL;
    out = &p->g->values[p->g->nodes[node].out];
    return out->named ? out->name : "";
}

/* The line of what the plan holds (nnop_plan_memory) and, for a batch-range plan, its runs. */
static void describe_memory(const nnop_plan *p, nnop__text *t)
{
    nnop_plan_memory_info m;
    if (nnop_plan_memory(p, &m) != NNOP_OK)
        return;
    nnop__textf(t,
                "  memory: %zu bytes of weights, %zu of intermediates, %zu of workspace, %zu "
                "other (%s)",
                m.weights, m.intermediates, m.workspace, m.other, p->cuda ? "device" : "host");
    if (p->batch_max) {
        char buckets[512];
        nnop__textf(t, "; runs take a batch of 1 to %lld (batch_range)", (long long)p->batch_max);
        if (p->cuda && nnop__cuda_plan_buckets(p, buckets, sizeof buckets))
            nnop__textf(t, "; %s", buckets);
    }
    nnop__textf(t, "\n");
}

size_t nnop_plan_describe(const nnop_plan *p, char *buf, size_t len)
{
    nnop__text t;
    int32_t i, k;
    nnop__text_init(&t, buf, len);
    if (!p)
        return 0;
    if (!p->ctx) {
        nnop__textf(&t, "plan: an orphan, its context was destroyed (only nnop_plan_destroy is "
                        "left to call)\n");
        return t.used;
    }
    nnop__textf(&t, "plan: %s backend, %d nodes, %d partitions%s\n", p->cuda ? "cuda" : "cpu",
                (int)p->g->n_nodes, (int)p->n_parts,
                p->cuda ? "" : " (the groups a GPU plan would fuse; the CPU runs node by node)");
    describe_memory(p, &t);
    if (p->cpu)
        nnop__cpu_plan_describe(p, &t);
    for (i = 0; i < p->n_parts; i++) {
        const nnop__partition *part = &p->parts[i];
        nnop__textf(&t, "  [%d] ", (int)i);
        for (k = 0; k < part->count; k++) {
            const nnop__node *n = &p->g->nodes[part->first + k];
            const nnop__value *out = &p->g->values[n->out];
            nnop__textf(&t, "%s%s", k ? "+" : "", nnop__op(n->op)->name);
            if (out->named) /* nnop_graph_name_next */
                nnop__textf(&t, "[%s]", out->name);
        }
        if (p->cuda) {
            char tmp[512];
            nnop__cuda_partition_describe(p, i, tmp, sizeof tmp);
            nnop__textf(&t, " %s", tmp);
        }
        nnop__textf(&t, "%s%s%s\n",
                    part->count < 2 ? ""
                    : p->cuda       ? " (fused)"
                                    : " (fusable)",
                    part->reason[0] ? ": " : "", part->reason);
    }
    return t.used;
}

nnop_status nnop_plan_engines(nnop_plan *p, nnop_engine_info *out, int cap, int *count)
{
    if (!p || !p->ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!count)
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_plan_engines: count is NULL");
    if (cap < 0 || (cap > 0 && !out))
        return nnop__fail(p->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_plan_engines: cap is %d with out %s (cap must be >= 0, and out "
                          "set when cap > 0)",
                          cap, out ? "set" : "NULL");
    *count = 0;
    if (!p->cuda)
        return NNOP_OK; /* the CPU backend has no engines */
    return nnop__cuda_plan_engines(p, out, cap, count);
}

nnop_status nnop_graph_warmup(nnop_graph *g, const nnop_compile_options *opts)
{
    nnop_plan *p = NULL;
    nnop_status st;
    if (!g || !g->ctx)
        return NNOP_ERR_INVALID_ARGUMENT;
    /* a warm-up that writes nothing must not look like one that did */
    if (!nnop__cache_has_file(g->ctx->plan_cache))
        return nnop__fail(g->ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_graph_warmup: the context has no cache file to write (set "
                          "options.cache_path, or give it a shared cache with a path)");
    if (g->ctx->backend != NNOP_BACKEND_CUDA)
        return nnop__fail(g->ctx, NNOP_ERR_NO_DEVICE,
                          "nnop_graph_warmup: the context runs on the CPU, which has no plans to "
                          "cache; warm up with a CUDA context on the kind of GPU the cache is for");
    st = nnop_graph_compile(g, opts, &p);
    if (st != NNOP_OK)
        return st;
    nnop_plan_destroy(p);
    return nnop_cache_save(g->ctx);
}
