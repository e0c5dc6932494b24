/* repro.c: a failing case as a small self-contained C program (nnop.h only): the graph as
 * straight-line builder calls, its data as seeds for the copy of dt_support.c it carries, and
 * a main that runs the configuration under test against the reference. Dropped into
 * tests/difftest/regress/, it becomes the CTest case difftest.regress.<name>. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <direct.h>
#define make_dir(d) _mkdir(d)
#else
#include <sys/stat.h>
#define make_dir(d) mkdir(d, 0777)
#endif

#include "difftest.h"
#include "dt_support_text.h" /* dt_support_h_lines, dt_support_c_lines (generated) */

static const char *act_name(nnop_act_kind k)
{
    static const char *const names[] = {
            "NNOP_ACT_IDENTITY",    "NNOP_ACT_RELU", "NNOP_ACT_RELU6",     "NNOP_ACT_CLAMP",
            "NNOP_ACT_LEAKY_RELU",  "NNOP_ACT_GELU", "NNOP_ACT_GELU_TANH", "NNOP_ACT_SIGMOID",
            "NNOP_ACT_TANH",        "NNOP_ACT_SILU", "NNOP_ACT_ELU",       "NNOP_ACT_HARDSWISH",
            "NNOP_ACT_HARDSIGMOID", "NNOP_ACT_MISH"};
    return (int)k >= 0 && (int)k <= (int)NNOP_ACT_MISH ? names[k] : "NNOP_ACT_IDENTITY";
}

static const char *arith_name(dt_arith a)
{
    return a == DT_MUL ? "mul" : a == DT_SUB ? "sub" : "div";
}

static const char *norm_call(dt_norm k)
{
    static const char *const calls[] = {"nnop_layer_norm", "nnop_layer_norm", "nnop_group_norm",
                                        "nnop_rms_norm"};
    return calls[k];
}

static void print_dims(FILE *f, const dt_node *v)
{
    int k;
    for (k = 0; k < v->ndim; k++)
        fprintf(f, "%s%lld", k ? "x" : "", (long long)v->dims[k]);
}

/* The attributes of one node, as a short text ("pad 1,2 stride 1,1 ...") */
static void print_attrs(FILE *f, const dt_node *v)
{
    const nnop_conv_params *c = &v->conv;
    const nnop_pool_params *p = &v->pool;
    if (v->kind == DT_CONV)
        fprintf(f, " pad %lld,%lld stride %lld,%lld dilation %lld,%lld groups %lld",
                (long long)c->pad[0], (long long)c->pad[1], (long long)c->stride[0],
                (long long)c->stride[1], (long long)c->dilation[0], (long long)c->dilation[1],
                (long long)c->groups);
    else if (v->kind == DT_POOL)
        fprintf(f,
                " %s window %lld,%lld stride %lld,%lld pad %lld,%lld pad_end %lld,%lld "
                "count_include_pad %d",
                v->pool_kind == NNOP_POOL_MAX ? "max" : "avg", (long long)p->window[0],
                (long long)p->window[1], (long long)p->stride[0], (long long)p->stride[1],
                (long long)p->pad[0], (long long)p->pad[1], (long long)p->pad_end[0],
                (long long)p->pad_end[1], p->count_include_pad);
    else if (v->kind == DT_ACT)
        fprintf(f, " %s alpha %g", act_name(v->act), (double)v->alpha);
    else if (v->kind == DT_CLAMP)
        fprintf(f, " lo %g hi %g", (double)v->lo, (double)v->hi);
    else if (v->kind == DT_BN)
        fprintf(f, " eps %g", (double)v->eps);
    else if (v->kind == DT_INPUT || v->kind == DT_CONST)
        fprintf(f, " scale %g%s special %d", (double)v->scale, v->positive ? " positive" : "",
                v->special);
    else if (v->kind == DT_ARITH)
        fprintf(f, " %s", arith_name(v->arith));
    else if (v->kind == DT_NORM)
        fprintf(f, " %s%s groups %lld eps %g", norm_call(v->norm),
                v->norm == DT_LAYER_NORM_CHW ? " (C,H,W)" : "", (long long)v->groups,
                (double)v->eps);
    else if (v->kind == DT_RESIZE)
        fprintf(f, " %s align_corners %d size %lld,%lld scale %g,%g",
                v->resize.mode == NNOP_RESIZE_NEAREST ? "nearest" : "bilinear",
                v->resize.align_corners, (long long)v->resize.size[0], (long long)v->resize.size[1],
                v->resize.scale[0], v->resize.scale[1]);
    else if (v->kind == DT_DECONV)
        fprintf(f,
                " pad %lld,%lld stride %lld,%lld dilation %lld,%lld output_pad %lld,%lld "
                "groups %lld",
                (long long)v->deconv.pad[0], (long long)v->deconv.pad[1],
                (long long)v->deconv.stride[0], (long long)v->deconv.stride[1],
                (long long)v->deconv.dilation[0], (long long)v->deconv.dilation[1],
                (long long)v->deconv.output_pad[0], (long long)v->deconv.output_pad[1],
                (long long)v->deconv.groups);
}

void dt_print_graph(FILE *f, const dt_graph *g, const char *prefix)
{
    int i, k;
    fprintf(f, "%s%s %s, case seed 0x%016" PRIx64 "\n", prefix, dt_dtype_name(g->dtype),
            g->layout == NNOP_NCHW ? "NCHW" : "NHWC", g->seed);
    for (i = 0; i < g->n_nodes; i++) {
        const dt_node *v = &g->node[i];
        fprintf(f, "%sv%d = %s(", prefix, i, dt_kind_name(v->kind));
        for (k = 0; k < v->n_in; k++)
            fprintf(f, k ? ", v%d" : "v%d", v->in[k]);
        fprintf(f, ")");
        print_attrs(f, v);
        fprintf(f, " -> ");
        print_dims(f, v);
        fprintf(f, "\n");
    }
    fprintf(f, "%soutputs:", prefix);
    for (i = 0; i < g->n_out; i++)
        fprintf(f, " v%d", g->out[i]);
    fprintf(f, "\n");
}

static void emit_lines(FILE *f, const char *const *lines, int skip_include)
{
    int i;
    for (i = 0; lines[i]; i++)
        if (!skip_include || strstr(lines[i], "#include \"dt_support.h\"") == NULL)
            fputs(lines[i], f);
}

/* static const dts_tensor name[] = {...} of the nodes of one kind; returns their count */
static int emit_tensors(FILE *f, const dt_graph *g, dt_kind kind, const char *name)
{
    int i, n = 0;
    for (i = 0; i < g->n_nodes; i++) {
        const dt_node *v = &g->node[i];
        if (v->kind != kind)
            continue;
        fprintf(f, n++ ? ",\n" : "static const dts_tensor %s[] = {\n", name);
        fprintf(f,
                "        {%d, {%lld, %lld, %lld, %lld}, 0x%016" PRIx64 "ull, (float)%.9g, %d, %d}",
                v->ndim, (long long)v->dims[0], (long long)v->dims[1], (long long)v->dims[2],
                (long long)v->dims[3], v->seed, (double)v->scale, v->positive, v->special);
    }
    if (n)
        fprintf(f, "};\n\n");
    return n;
}

static void emit_expected(FILE *f, const dt_graph *g, double *const *expected)
{
    int i;
    int64_t j;
    for (i = 0; i < g->n_out; i++) {
        int64_t n = dt_elems(&g->node[g->out[i]]);
        fprintf(f, "static const double expected_%d[] = {", i);
        for (j = 0; j < n; j++)
            fprintf(f, "%s%.17g", j % 4 ? ", " : j ? ",\n        " : "\n        ", expected[i][j]);
        fprintf(f, "};\n");
    }
    fprintf(f, "static const double *const expected[] = {");
    for (i = 0; i < g->n_out; i++)
        fprintf(f, "%sexpected_%d", i ? ", " : "", i);
    fprintf(f, "};\n\n");
}

static int uses(const dt_graph *g, dt_kind kind)
{
    int i;
    for (i = 0; i < g->n_nodes; i++)
        if (g->node[i].kind == kind)
            return 1;
    return 0;
}

/* v[k] or nnop_none() as text */
static const char *operand_text(int k, char *buf, size_t len)
{
    if (k < 0)
        return "nnop_none()";
    snprintf(buf, len, "v[%d]", k);
    return buf;
}

static void emit_norm(FILE *f, const dt_node *v)
{
    char g[32], b[32];
    const char *gamma = operand_text(v->in[1], g, sizeof g),
               *beta = operand_text(v->in[2], b, sizeof b);
    if (v->norm == DT_RMS_NORM)
        fprintf(f, "nnop_rms_norm(g, v[%d], %s, (float)%.9g);\n", v->in[0], gamma, (double)v->eps);
    else if (v->norm == DT_GROUP_NORM)
        fprintf(f, "nnop_group_norm(g, v[%d], %lld, %s, %s, (float)%.9g);\n", v->in[0],
                (long long)v->groups, gamma, beta, (double)v->eps);
    else
        fprintf(f, "nnop_layer_norm(g, v[%d], %s, %s, %s, (float)%.9g);\n", v->in[0], gamma, beta,
                v->norm == DT_LAYER_NORM_C ? "NNOP_NORM_C" : "NNOP_NORM_CHW", (double)v->eps);
}

static void emit_op(FILE *f, const dt_node *v, int i)
{
    const nnop_conv_params *c = &v->conv;
    const nnop_pool_params *p = &v->pool;
    if (v->kind == DT_CONV)
        fprintf(f, "    cp = (nnop_conv_params){{%lld, %lld}, {%lld, %lld}, {%lld, %lld}, %lld};\n",
                (long long)c->pad[0], (long long)c->pad[1], (long long)c->stride[0],
                (long long)c->stride[1], (long long)c->dilation[0], (long long)c->dilation[1],
                (long long)c->groups);
    if (v->kind == DT_POOL)
        fprintf(f,
                "    pp = (nnop_pool_params){{%lld, %lld}, {%lld, %lld}, {%lld, %lld}, %d, "
                "{%lld, %lld}};\n",
                (long long)p->window[0], (long long)p->window[1], (long long)p->stride[0],
                (long long)p->stride[1], (long long)p->pad[0], (long long)p->pad[1],
                p->count_include_pad, (long long)p->pad_end[0], (long long)p->pad_end[1]);
    if (v->kind == DT_RESIZE)
        fprintf(f, "    rp = (nnop_resize_params){%s, %d, {%lld, %lld}, {%.17g, %.17g}};\n",
                v->resize.mode == NNOP_RESIZE_NEAREST ? "NNOP_RESIZE_NEAREST"
                                                      : "NNOP_RESIZE_BILINEAR",
                v->resize.align_corners, (long long)v->resize.size[0], (long long)v->resize.size[1],
                v->resize.scale[0], v->resize.scale[1]);
    if (v->kind == DT_DECONV)
        fprintf(f,
                "    tp = (nnop_conv_transpose_params){{%lld, %lld}, {%lld, %lld}, {%lld, %lld}, "
                "%lld, {%lld, %lld}};\n",
                (long long)v->deconv.pad[0], (long long)v->deconv.pad[1],
                (long long)v->deconv.stride[0], (long long)v->deconv.stride[1],
                (long long)v->deconv.dilation[0], (long long)v->deconv.dilation[1],
                (long long)v->deconv.groups, (long long)v->deconv.output_pad[0],
                (long long)v->deconv.output_pad[1]);
    if (v->kind == DT_CONCAT) {
        int k;
        for (k = 0; k < v->n_in; k++)
            fprintf(f, "    xs[%d] = v[%d];\n", k, v->in[k]);
    }
    fprintf(f, "    v[%d] = ", i);
    switch (v->kind) {
    case DT_ARITH:
        fprintf(f, "nnop_%s(g, v[%d], v[%d]);\n", arith_name(v->arith), v->in[0], v->in[1]);
        break;
    case DT_NORM:
        emit_norm(f, v);
        break;
    case DT_CONCAT:
        fprintf(f, "nnop_concat(g, xs, %d);\n", v->n_in);
        break;
    case DT_RESIZE:
        fprintf(f, "nnop_resize(g, v[%d], &rp);\n", v->in[0]);
        break;
    case DT_DECONV:
        fprintf(f, "nnop_conv_transpose(g, v[%d], v[%d], &tp);\n", v->in[0], v->in[1]);
        break;
    case DT_CONV:
        fprintf(f, "nnop_conv(g, v[%d], v[%d], &cp);\n", v->in[0], v->in[1]);
        break;
    case DT_BIAS:
        fprintf(f, "nnop_bias(g, v[%d], v[%d]);\n", v->in[0], v->in[1]);
        break;
    case DT_ACT:
        fprintf(f, "nnop_act(g, v[%d], %s, (float)%.9g);\n", v->in[0], act_name(v->act),
                (double)v->alpha);
        break;
    case DT_CLAMP:
        fprintf(f, "nnop_clamp(g, v[%d], (float)%.9g, (float)%.9g);\n", v->in[0], (double)v->lo,
                (double)v->hi);
        break;
    case DT_BN:
        fprintf(f, "nnop_batchnorm(g, v[%d], v[%d], v[%d], v[%d], v[%d], (float)%.9g);\n", v->in[0],
                v->in[1], v->in[2], v->in[3], v->in[4], (double)v->eps);
        break;
    case DT_ADD:
        fprintf(f, "nnop_add(g, v[%d], v[%d]);\n", v->in[0], v->in[1]);
        break;
    case DT_POOL:
        fprintf(f, "nnop_pool(g, v[%d], %s, &pp);\n", v->in[0],
                v->pool_kind == NNOP_POOL_MAX ? "NNOP_POOL_MAX" : "NNOP_POOL_AVG");
        break;
    case DT_GAP:
        fprintf(f, "nnop_global_avg_pool(g, v[%d]);\n", v->in[0]);
        break;
    case DT_FLATTEN:
        fprintf(f, "nnop_flatten(g, v[%d]);\n", v->in[0]);
        break;
    case DT_LINEAR:
        if (v->in[2] >= 0)
            fprintf(f, "nnop_linear(g, v[%d], v[%d], v[%d]);\n", v->in[0], v->in[1], v->in[2]);
        else
            fprintf(f, "nnop_linear(g, v[%d], v[%d], nnop_none());\n", v->in[0], v->in[1]);
        break;
    default:
        fprintf(f, "nnop_softmax(g, v[%d]);\n", v->in[0]);
    }
}

static void emit_build(FILE *f, const dt_graph *g)
{
    int i, n_in = 0, n_k = 0;
    fprintf(f, "static nnop_status build(nnop_graph *g, const dts_case *c)\n{\n");
    fprintf(f, "    nnop_value v[%d];\n", g->n_nodes);
    if (uses(g, DT_CONV))
        fprintf(f, "    nnop_conv_params cp;\n");
    if (uses(g, DT_POOL))
        fprintf(f, "    nnop_pool_params pp;\n");
    if (uses(g, DT_RESIZE))
        fprintf(f, "    nnop_resize_params rp;\n");
    if (uses(g, DT_DECONV))
        fprintf(f, "    nnop_conv_transpose_params tp;\n");
    if (uses(g, DT_CONCAT))
        fprintf(f, "    nnop_value xs[5];\n");
    for (i = 0; i < g->n_nodes; i++) {
        if (g->node[i].kind == DT_INPUT)
            fprintf(f, "    v[%d] = dts_input(g, c, &in[%d]);\n", i, n_in++);
        else if (g->node[i].kind == DT_CONST)
            fprintf(f, "    v[%d] = dts_constant(g, c, &k[%d]);\n", i, n_k++);
        else
            emit_op(f, &g->node[i], i);
    }
    for (i = 0; i < g->n_out; i++)
        fprintf(f, "    nnop_output(g, v[%d], NULL);\n", g->out[i]);
    fprintf(f, "    return nnop_graph_status(g);\n}\n\n");
}

static void emit_main(FILE *f, const dt_graph *g, nnop_backend backend, int fuse, int n_in,
                      int with_expected)
{
    fprintf(f, "int main(void)\n{\n    dts_case c;\n    memset(&c, 0, sizeof c);\n");
    fprintf(f, "    c.dtype = %s;\n    c.layout = %s;\n",
            g->dtype == NNOP_F32   ? "NNOP_F32"
            : g->dtype == NNOP_F16 ? "NNOP_F16"
                                   : "NNOP_BF16",
            g->layout == NNOP_NCHW ? "NNOP_NCHW" : "NNOP_NHWC");
    fprintf(f, "    c.backend = %s;\n    c.fuse = %d;\n",
            backend == NNOP_BACKEND_CUDA ? "NNOP_BACKEND_CUDA" : "NNOP_BACKEND_CPU", fuse);
    fprintf(f, "    c.build = build;\n    c.in = in;\n    c.n_in = %d;\n", n_in);
    if (with_expected)
        fprintf(f, "    c.expected = expected;\n");
    fprintf(f, "    return dts_main(&c);\n}\n");
}

static void emit_header(FILE *f, const dt_graph *g, const char *name, const char *why,
                        int with_expected)
{
    fprintf(f,
            "/* %s: a reproducer written by tests/difftest.\n * The run under test is checked "
            "against %s.\n",
            name, with_expected ? "float64 values (the tester's oracle)" : "the CPU backend");
    fprintf(f, " * Found: %s\n *\n", why);
    dt_print_graph(f, g, " * ");
    fprintf(f,
            " *\n * Dropped into tests/difftest/regress/ it is the CTest case "
            "difftest.regress.%s:\n * 0 = agrees (or refused), 1 = not, 77 = no GPU. */\n",
            name);
}

int dt_write_repro(const char *dir, const dt_graph *g, nnop_backend backend, int fuse,
                   double *const *expected, const char *why, char *path, size_t path_len)
{
    char name[96];
    FILE *f;
    int n_in;
    snprintf(name, sizeof name, "repro_%s_%s_%016" PRIx64,
             backend == NNOP_BACKEND_CUDA ? "cuda" : "cpu",
             expected     ? "oracle"
             : (fuse & 1) ? "fused"
                          : "unfused",
             g->seed);
    snprintf(path, path_len, "%s/%s.c", dir, name);
    make_dir(dir); /* may exist already */
    f = fopen(path, "w");
    if (!f)
        return -1;
    emit_header(f, g, name, why, expected != NULL);
    emit_lines(f, dt_support_h_lines, 0);
    fprintf(f, "\n");
    emit_lines(f, dt_support_c_lines, 1);
    fprintf(f,
            "\n/* ---------------------------------------------------------------- the case */\n");
    n_in = emit_tensors(f, g, DT_INPUT, "in");
    emit_tensors(f, g, DT_CONST, "k");
    if (expected)
        emit_expected(f, g, expected);
    emit_build(f, g);
    emit_main(f, g, backend, fuse, n_in, expected != NULL);
    return fclose(f) == 0 ? 0 : -1;
}
