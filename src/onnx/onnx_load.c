/* onnx_load.c: the importer's entry points: parse a ModelProto with protobuf-c, declare the
 * inputs, convert the nodes in order, mark the outputs; any failure destroys the graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

#if defined(_MSC_VER)
#define OX_THREAD_LOCAL __declspec(thread)
#else
#define OX_THREAD_LOCAL _Thread_local
#endif

static OX_THREAD_LOCAL char last_error[1024];

/* The largest model read: protobuf's own limit for one message. */
#define OX_MAX_MODEL_BYTES ((size_t)2147483647)
/* the longest directory a model file may lie in (external data paths are joined to it) */
#define OX_DIR_MAX 4096

const char *nnop_onnx_last_error(void)
{
    return last_error;
}

static void set_last(const char *msg)
{
    snprintf(last_error, sizeof last_error, "%s", msg);
}

void nnop_onnx_options_init(nnop_onnx_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->dtype = NNOP_F32;
    o->layout = NNOP_NCHW;
    o->batch = 1;
}

static void ox_free(ox_ctx *ox)
{
    size_t k;
    for (k = 0; k < ox->nt; k++) {
        free(ox->t[k].f);
        free(ox->t[k].i);
    }
    free(ox->t);
    free(ox->hash);
    free(ox->skip);
}

static nnop_status declare_input(ox_ctx *ox, const Onnx__ValueInfoProto *vi)
{
    const Onnx__TypeProto__Tensor *tt;
    nnop_tensor_desc d;
    ox_tensor *t;
    size_t k;
    int elem;
    const char *name = vi->name ? vi->name : "";
    if (!*name)
        return ox_fail(ox, NNOP_ERR_FORMAT, "a graph input has no name");
    if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !vi->type->tensor_type)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "graph input '%s' is not a tensor", name);
    tt = vi->type->tensor_type;
    elem = tt->has_elem_type ? tt->elem_type : 0;
    if (!ox_is_float_elem(elem))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "graph input '%s' is %s (nnop computes on float "
                       "tensors)",
                       name, ox_elem_name(elem));
    if (!tt->shape)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "graph input '%s' has no shape", name);
    if (tt->shape->n_dim < 1 || tt->shape->n_dim > NNOP_MAX_DIMS)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "graph input '%s' has %zu dims (nnop: 1 to %d)",
                       name, tt->shape->n_dim, NNOP_MAX_DIMS);
    memset(&d, 0, sizeof d);
    d.dtype = ox->o.dtype;
    d.ndim = (int)tt->shape->n_dim;
    for (k = 0; k < tt->shape->n_dim; k++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[k];
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dim->dim_value < 1)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "graph input '%s' has dim %zu of size "
                               "%lld",
                               name, k, (long long)dim->dim_value);
            d.dims[k] = dim->dim_value;
        } else
            d.dims[k] = ox->o.batch; /* symbolic */
    }
    for (k = (size_t)d.ndim; k-- > 0;)
        d.strides[k] = k + 1 == (size_t)d.ndim ? 1 : d.strides[k + 1] * d.dims[k + 1];
    if (d.ndim == 4)
        d = nnop_tensor_4d(ox->o.dtype, ox->o.layout, d.dims[0], d.dims[1], d.dims[2], d.dims[3]);
    t = ox_add(ox, name);
    if (!t)
        return ox->status;
    if (t->kind != OX_UNSET)
        return ox_fail(ox, NNOP_ERR_FORMAT, "graph input '%s' is declared twice", name);
    t->kind = OX_VALUE;
    t->elem = elem;
    t->ndim = d.ndim;
    for (k = 0; k < (size_t)d.ndim; k++)
        t->dims[k] = d.dims[k];
    t->v = nnop_input(ox->g, name, &d);
    return ox_check(ox, t->v);
}

/* op types no converter knows, listed once each, for the first failure's message */
static void unknown_ops(const Onnx__GraphProto *gp, char *buf, size_t len)
{
    size_t k, j, used = 0;
    buf[0] = 0;
    for (k = 0; k < gp->n_node; k++) {
        const char *op = gp->node[k]->op_type ? gp->node[k]->op_type : "";
        int seen = 0;
        if (ox_op_known(op))
            continue;
        for (j = 0; j < k && !seen; j++)
            seen = gp->node[j]->op_type && strcmp(gp->node[j]->op_type, op) == 0;
        if (seen || used + strlen(op) + 3 >= len)
            continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", op);
    }
}

static nnop_status load(ox_ctx *ox, const Onnx__ModelProto *m)
{
    const Onnx__GraphProto *gp = m->graph;
    size_t k, j;
    nnop_status s;
    char unknown[256];
    if (!gp)
        return ox_fail(ox, NNOP_ERR_FORMAT, "the model has no graph");
    ox->opset = 0;
    for (k = 0; k < m->n_opset_import; k++) {
        const Onnx__OperatorSetIdProto *os = m->opset_import[k];
        if (!os->domain || !*os->domain || strcmp(os->domain, "ai.onnx") == 0)
            ox->opset = os->has_version ? os->version : 1;
    }
    if (!ox->opset)
        ox->opset = 1; /* IR version 1 models name no opset */
    if (gp->n_sparse_initializer)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "sparse initializers");
    /* operators no converter knows, before anything else: the whole list at once */
    unknown_ops(gp, unknown, sizeof unknown);
    for (k = 0; unknown[0] && k < gp->n_node; k++)
        if (!ox_op_known(gp->node[k]->op_type)) {
            ox->node = gp->node[k];
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "operator not supported by nnop's importer "
                           "(the model's unsupported operators: %s)",
                           unknown);
        }
    /* what is read: node inputs and graph outputs (unread extra outputs need not be made) */
    for (k = 0; k < gp->n_node; k++)
        for (j = 0; j < gp->node[k]->n_input; j++) {
            const char *name = gp->node[k]->input[j];
            ox_tensor *t;
            if (!name || !*name)
                continue;
            if (!(t = ox_add(ox, name)))
                return ox->status;
            t->used = 1;
            t->readers++;
        }
    for (k = 0; k < gp->n_output; k++) {
        ox_tensor *t = gp->output[k]->name ? ox_add(ox, gp->output[k]->name) : NULL;
        if (!t)
            return ox_fail(ox, NNOP_ERR_FORMAT, "graph output %zu has no name", k);
        t->used = 1;
        t->readers++;
    }
    ox->graph = gp;
    ox->skip = (unsigned char *)calloc(gp->n_node ? gp->n_node : 1, 1);
    if (!ox->skip)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    s = nnop_graph_create(ox->ctx, &ox->g);
    if (s)
        return ox_fail(ox, s, "nnop_graph_create: %s", nnop_context_last_error(ox->ctx));
    for (k = 0; k < gp->n_initializer; k++) {
        const Onnx__TensorProto *tp = gp->initializer[k];
        ox_tensor *t;
        if (!tp->name || !*tp->name)
            return ox_fail(ox, NNOP_ERR_FORMAT, "initializer %zu has no name", k);
        t = ox_add(ox, tp->name);
        if (!t)
            return ox->status;
        if (t->kind != OX_UNSET)
            return ox_fail(ox, NNOP_ERR_FORMAT, "initializer '%s' is given twice", tp->name);
        if ((s = ox_tensor_from_proto(ox, t, tp)) != NNOP_OK)
            return s;
    }
    /* inputs that are not initializers (IR < 4 lists the initializers among them too) */
    for (k = 0; k < gp->n_input; k++) {
        const ox_tensor *t = gp->input[k]->name ? ox_find(ox, gp->input[k]->name) : NULL;
        if (t && t->kind == OX_CONST)
            continue;
        if ((s = declare_input(ox, gp->input[k])) != NNOP_OK)
            return s;
    }
    for (k = 0; k < gp->n_node; k++) {
        const Onnx__NodeProto *n = gp->node[k];
        int fused;
        if (ox->skip[k]) /* made by a pattern that an earlier node began */
            continue;
        ox->node = n;
        if (!n->op_type)
            return ox_fail(ox, NNOP_ERR_FORMAT, "node %zu has no op_type", k);
        if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "operator of domain '%s'", n->domain);
        for (j = 0; j < n->n_input; j++) {
            const ox_tensor *t;
            if (!n->input[j] || !*n->input[j])
                continue;
            t = ox_find(ox, n->input[j]);
            if (!t || t->kind == OX_UNSET)
                return ox_fail(ox, NNOP_ERR_FORMAT,
                               "input '%s' is made by no earlier node (the "
                               "nodes are not in topological order, or they form a cycle)",
                               n->input[j]);
        }
        if (n->n_output < 1 || !n->output[0] || !*n->output[0])
            return ox_fail(ox, NNOP_ERR_FORMAT, "no output");
        /* the first nnop node the converter makes carries the ONNX node's name (else its
         * first output's): messages, nnop_plan_describe and nnop_plan_node_name show it */
        (void)nnop_graph_name_next(ox->g, n->name && *n->name ? n->name : n->output[0]);
        fused = ox_fuse_at(ox, k);
        s = fused < 0 ? ox->status : fused ? NNOP_OK : ox_convert_node(ox, n);
        (void)nnop_graph_name_next(ox->g, NULL); /* a converter that folded leaves it unused */
        if (s != NNOP_OK)
            return s;
        if (fused) /* its outputs are the pattern's insides, read by no one else */
            continue;
        for (j = 0; j < n->n_output; j++) {
            const ox_tensor *t = n->output[j] && *n->output[j] ? ox_find(ox, n->output[j]) : NULL;
            if (t && t->used && t->kind == OX_UNSET)
                return ox_fail(ox, NNOP_ERR_INTERNAL, "output '%s' was not made", n->output[j]);
        }
    }
    ox->node = NULL;
    if (gp->n_output < 1)
        return ox_fail(ox, NNOP_ERR_FORMAT, "the graph has no output");
    for (k = 0; k < gp->n_output; k++) {
        const char *name = gp->output[k]->name ? gp->output[k]->name : "";
        ox_tensor *t = ox_find(ox, name);
        nnop_value v;
        if (!t || t->kind == OX_UNSET)
            return ox_fail(ox, NNOP_ERR_FORMAT, "graph output '%s' is made by no node", name);
        if (!ox_is_float_elem(t->elem))
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "graph output '%s' is %s (nnop computes "
                           "float tensors)",
                           name, ox_elem_name(t->elem));
        if (t->kind == OX_VALUE && t->view_groups)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "graph output '%s' is a 5-D view of a 4-D value (a channel shuffle "
                           "cut short)",
                           name);
        if (t->kind == OX_VALUE && t->view_padded)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "graph output '%s' is made by a Pad (nnop has no pad operator: it "
                           "folds a zero Pad into the Conv that reads it)",
                           name);
        if (t->kind == OX_VALUE && t->view_flat)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "graph output '%s' is a flattened (1-D) view of a value of more "
                           "dims (nnop outputs a value in its own shape)",
                           name);
        if (t->kind == OX_VALUE && t->view_cl)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "graph output '%s' is a channels-last (N,H,W,C) view of an N,C,H,W "
                           "value (nnop outputs it after a Transpose 0,3,1,2)",
                           name);
        if ((s = ox_value_of(ox, t, &v)) != NNOP_OK)
            return s;
        for (j = 0; j < k; j++) {
            const ox_tensor *o = ox_find(ox, gp->output[j]->name ? gp->output[j]->name : "");
            if (o && o->v.id == v.id && (o->kind == OX_VALUE || o->has_v))
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "graph outputs '%s' and '%s' are one "
                               "value (nnop outputs a value once)",
                               o->name, name);
        }
        s = nnop_output(ox->g, v, name);
        if (s)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "graph output '%s': %s", name,
                           nnop_context_last_error(ox->ctx));
    }
    s = nnop_graph_status(ox->g);
    if (s)
        return ox_fail(ox, s, "%s", nnop_context_last_error(ox->ctx));
    return NNOP_OK;
}

/* A model's bytes into a graph; dir: the directory its external data is read from (NULL: a
 * model loaded from memory, which may have none). */
static nnop_status load_bytes(nnop_context *ctx, const void *data, size_t size,
                              const nnop_onnx_options *opts, const char *dir, nnop_graph **out)
{
    ox_ctx ox;
    Onnx__ModelProto *m;
    nnop_status s;
    size_t k;
    if (out)
        *out = NULL;
    memset(&ox, 0, sizeof ox);
    nnop_onnx_options_init(&ox.o);
    if (opts)
        ox.o = *opts;
    ox.ctx = ctx;
    ox.dir = dir;
    if (!ctx || !out || (!data && size)) {
        set_last("NNOP_ERR_INVALID_ARGUMENT: nnop_onnx_load: ctx, data and out must not be NULL");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    for (k = 0; k < sizeof ox.o.reserved / sizeof ox.o.reserved[0]; k++)
        if (ox.o.reserved[k]) {
            set_last("NNOP_ERR_INVALID_ARGUMENT: nnop_onnx_options.reserved must be zero "
                     "(start from nnop_onnx_options_init)");
            return NNOP_ERR_INVALID_ARGUMENT;
        }
    if ((ox.o.dtype != NNOP_F32 && ox.o.dtype != NNOP_F16 && ox.o.dtype != NNOP_BF16) ||
        (ox.o.layout != NNOP_NCHW && ox.o.layout != NNOP_NHWC) || ox.o.batch < 1 ||
        ox.o.batch > (int64_t)1 << 31 || ox.o.max_made < 0 || ox.o.max_made > OX_MAX_MADE_LIMIT) {
        set_last("NNOP_ERR_INVALID_ARGUMENT: nnop_onnx_options: unknown dtype or layout, batch "
                 "not in 1 to 2^31, or max_made not in 0 to 2^34");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (size == 0) {
        set_last("NNOP_ERR_FORMAT: not an ONNX model: 0 bytes");
        return NNOP_ERR_FORMAT;
    }
    m = onnx__model_proto__unpack(NULL, size, (const uint8_t *)data);
    if (!m) {
        set_last("NNOP_ERR_FORMAT: not an ONNX model: the protobuf ModelProto does not parse "
                 "(truncated or another kind of file)");
        return NNOP_ERR_FORMAT;
    }
    s = load(&ox, m);
    if (s) {
        nnop_graph_destroy(ox.g); /* never a half-built graph */
        ox.g = NULL;
        set_last(ox.err);
    } else {
        *out = ox.g;
        set_last("");
    }
    ox_free(&ox);
    onnx__model_proto__free_unpacked(m, NULL);
    return s;
}

nnop_status nnop_onnx_load_memory(nnop_context *ctx, const void *data, size_t size,
                                  const nnop_onnx_options *opts, nnop_graph **out)
{
    return load_bytes(ctx, data, size, opts, NULL, out);
}

/* The directory of the file at path (".", for a bare name) into dir; 0 when it does not fit. */
static int dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
#if defined(_WIN32)
    const char *back = strrchr(path, '\\');
    if (back && (!slash || back > slash))
        slash = back;
#endif
    if (!slash)
        return snprintf(dir, len, ".") < (int)len;
    if ((size_t)(slash - path) + 1 >= len)
        return 0;
    memcpy(dir, path, (size_t)(slash - path) + (slash == path)); /* "/model.onnx": "/" */
    dir[(size_t)(slash - path) + (slash == path)] = '\0';
    return 1;
}

nnop_status nnop_onnx_load_file(nnop_context *ctx, const char *path, const nnop_onnx_options *opts,
                                nnop_graph **out)
{
    FILE *f;
    long len;
    void *buf;
    nnop_status s;
    char msg[512], dir[OX_DIR_MAX];
    if (out)
        *out = NULL;
    if (!path) {
        set_last("NNOP_ERR_INVALID_ARGUMENT: nnop_onnx_load_file: path is NULL");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (!dir_of(path, dir, sizeof dir)) {
        set_last("NNOP_ERR_INVALID_ARGUMENT: nnop_onnx_load_file: the path's directory is over "
                 "4 KiB");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, sizeof msg, "NNOP_ERR_IO: cannot open '%s'", path);
        set_last(msg);
        return NNOP_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        snprintf(msg, sizeof msg, "NNOP_ERR_IO: cannot read '%s' (not a regular file?)", path);
        set_last(msg);
        return NNOP_ERR_IO;
    }
    if ((unsigned long)len > OX_MAX_MODEL_BYTES) {
        fclose(f);
        snprintf(msg, sizeof msg, "NNOP_ERR_FORMAT: '%s' is over 2 GiB (protobuf's limit)", path);
        set_last(msg);
        return NNOP_ERR_FORMAT;
    }
    buf = malloc(len ? (size_t)len : 1);
    if (!buf) {
        fclose(f);
        set_last("NNOP_ERR_OUT_OF_MEMORY: reading the model");
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(buf);
        snprintf(msg, sizeof msg, "NNOP_ERR_IO: cannot read '%s'", path);
        set_last(msg);
        return NNOP_ERR_IO;
    }
    fclose(f);
    s = load_bytes(ctx, buf, (size_t)len, opts, dir, out);
    free(buf);
    return s;
}

nnop_status nnop_onnx_tensor_read(const void *bytes, size_t size, nnop_dtype t,
                                  nnop_tensor_desc *desc, void **data, char *name, size_t name_len)
{
    ox_ctx ox;
    ox_tensor tt;
    Onnx__TensorProto *p;
    nnop_tensor_desc d;
    void *buf;
    nnop_status s;
    int k;
    if (!desc || !data || (!bytes && size) || nnop_dtype_size(t) == 0) {
        set_last("NNOP_ERR_INVALID_ARGUMENT: nnop_onnx_tensor_read: NULL pointer or bad dtype");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    p = onnx__tensor_proto__unpack(NULL, size, (const uint8_t *)bytes);
    if (!p) {
        set_last("NNOP_ERR_FORMAT: not an ONNX TensorProto");
        return NNOP_ERR_FORMAT;
    }
    memset(&ox, 0, sizeof ox);
    memset(&tt, 0, sizeof tt);
    tt.name = p->name ? p->name : "";
    s = ox_tensor_from_proto(&ox, &tt, p);
    if (!s && !tt.f)
        s = ox_fail(&ox, NNOP_ERR_UNSUPPORTED, "tensor '%s' is %s, not a float type", tt.name,
                    ox_elem_name(tt.elem));
    if (!s && (tt.ndim > NNOP_MAX_DIMS || tt.numel < 1))
        s = ox_fail(&ox, NNOP_ERR_UNSUPPORTED, "tensor '%s' is empty", tt.name);
    if (s) {
        set_last(ox.err);
        free(tt.f);
        free(tt.i);
        onnx__tensor_proto__free_unpacked(p, NULL);
        return s;
    }
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = tt.ndim ? tt.ndim : 1;
    for (k = 0; k < d.ndim; k++)
        d.dims[k] = tt.ndim ? tt.dims[k] : 1;
    for (k = d.ndim - 1; k >= 0; k--)
        d.strides[k] = k == d.ndim - 1 ? 1 : d.strides[k + 1] * d.dims[k + 1];
    buf = malloc(nnop_tensor_bytes(&d));
    if (!buf) {
        free(tt.f);
        onnx__tensor_proto__free_unpacked(p, NULL);
        set_last("NNOP_ERR_OUT_OF_MEMORY: nnop_onnx_tensor_read");
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    nnop_convert(NNOP_F32, tt.f, t, buf, tt.numel);
    if (name && name_len)
        snprintf(name, name_len, "%s", tt.name);
    *desc = d;
    *data = buf;
    free(tt.f);
    onnx__tensor_proto__free_unpacked(p, NULL);
    set_last("");
    return NNOP_OK;
}

void nnop_onnx_free(void *p)
{
    free(p);
}
