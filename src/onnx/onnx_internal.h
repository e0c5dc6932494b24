/* onnx_internal.h: the importer's state shared by its files (load, tensors, the converters'
 * helpers, the converters by operator family). */
#ifndef NNOP_ONNX_INTERNAL_H
#define NNOP_ONNX_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "nnop/nnop_onnx.h"
#include "onnx.pb-c.h"

#if defined(__GNUC__)
#define OX_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define OX_PRINTF(f, a)
#endif

/* ONNX element types the importer reads (TensorProto.DataType) */
enum {
    OX_FLOAT = 1,
    OX_UINT8 = 2,
    OX_INT8 = 3,
    OX_UINT16 = 4,
    OX_INT16 = 5,
    OX_INT32 = 6,
    OX_INT64 = 7,
    OX_BOOL = 9,
    OX_FLOAT16 = 10,
    OX_DOUBLE = 11,
    OX_UINT32 = 12,
    OX_UINT64 = 13,
    OX_BFLOAT16 = 16
};

#define OX_MAX_DIMS 8
/* What a load makes beyond the file's bytes, so that a small file cannot ask for gigabytes:
 * constants folded at load, ox_max_made elements in all; one buffer sized by a value's dims
 * (a constant broadcast to it, per-channel parameters), as many. The options' max_made, else
 * OX_MAX_MADE_DEFAULT; at most OX_MAX_MADE_LIMIT. */
#define OX_MAX_MADE_DEFAULT ((int64_t)1 << 26)
#define OX_MAX_MADE_LIMIT   ((int64_t)1 << 34)

/* What a name of the ONNX graph stands for. */
typedef enum ox_kind {
    OX_UNSET = 0, /* no node made it (yet) */
    OX_CONST,     /* known at load: initializer, Constant, folded subgraph */
    OX_VALUE      /* an nnop value computed at run time */
} ox_kind;

typedef struct ox_tensor {
    const char *name; /* the proto's string (lives as long as the load) */
    ox_kind kind;
    int elem; /* ONNX element type */
    int ndim; /* 0 for a scalar constant */
    int64_t dims[OX_MAX_DIMS];
    /* OX_CONST: numel elements, in f (float types, converted to float32) or i (integers
     * and bool). */
    int64_t numel;
    float *f;
    int64_t *i;
    /* OX_VALUE: the value; OX_CONST: its nnop_constant once an op needed one (has_v). */
    nnop_value v;
    int has_v;
    int used; /* a node or the graph's outputs read it */
    /* OX_VALUE in the 5-D view of a channel shuffle (ShuffleNet's Reshape -> Transpose ->
     * Reshape): view_groups g > 0: v is N,C,H,W and this tensor is N,g,C/g,H,W, or with
     * view_swapped N,C/g,g,H,W (its dims 1 and 2 transposed). Only Reshape and Transpose read
     * a view (ox_convert_node refuses the rest). */
    int64_t view_groups;
    int view_swapped;
    /* OX_VALUE in channels-last view (ConvNeXt's Transpose 0,2,3,1 ... Transpose 0,3,1,2):
     * this tensor is N,H,W,C and v is N,C,H,W. Read by the ops of onnx_view.c's list, whose
     * outputs are views again, and ended by the Transpose 0,3,1,2. */
    int view_cl;
    /* OX_VALUE flattened to 1-D (the dynamo exporter's as_strided: Reshape to [-1], then a
     * Gather of every element in order): v keeps its own dims. Read only by that Gather and
     * by a Reshape back to v's dims, each of which gives v itself. */
    int view_flat;
    /* OX_VALUE padded with zeros by a Pad (onnx_conv.c): v is unpadded, dims padded, view_pad
     * top, left, bottom, right. Read only by a Conv or a count_include_pad AveragePool, which
     * add them to their own pads, and by another Pad. */
    int view_padded;
    int64_t view_pad[4];
    int readers; /* node inputs and graph outputs that read it */
} ox_tensor;

typedef struct ox_ctx {
    nnop_context *ctx;
    nnop_graph *g;
    nnop_onnx_options o;
    const char *dir; /* the model file's directory (external data), NULL: loaded from memory */
    int64_t opset;   /* of the default domain */
    ox_tensor *t;
    size_t nt, cap;
    size_t *hash; /* open addressing: index + 1 into t, 0 = empty */
    size_t hcap;
    int64_t folded;              /* elements of the constants folded so far (max_made) */
    const Onnx__NodeProto *node; /* the node being converted, for messages */
    const Onnx__GraphProto *graph;
    unsigned char *skip; /* per node: made by a fused pattern (onnx_fuse.c), not converted */
    nnop_status status;
    char err[1024];
} ox_ctx;

/* Errors: record status and message (prefixed with the current node) and return status. */
nnop_status ox_fail(ox_ctx *ox, nnop_status s, const char *fmt, ...) OX_PRINTF(3, 4);
/* After a builder returned v: NNOP_OK, or the graph's error with the context's message. */
nnop_status ox_check(ox_ctx *ox, nnop_value v);
int ox_is_float_elem(int elem);
const char *ox_elem_name(int elem);

/* Tensors by name. */
ox_tensor *ox_find(ox_ctx *ox, const char *name);
ox_tensor *ox_add(ox_ctx *ox, const char *name); /* NULL: out of memory (recorded) */
/* whether a node or the graph's outputs read the tensor of that name */
int ox_used(ox_ctx *ox, const char *name);
/* Decode a TensorProto into a constant of t (name kept). */
nnop_status ox_tensor_from_proto(ox_ctx *ox, ox_tensor *t, const Onnx__TensorProto *p);
/* onnx_external.c: the want bytes of p's external data file, read into *out (malloc'd). */
nnop_status ox_external_read(ox_ctx *ox, const Onnx__TensorProto *p, const char *name, size_t want,
                             unsigned char **out);
/* Allocate a constant's storage (float or int) for the dims already set in t. */
nnop_status ox_const_alloc(ox_ctx *ox, ox_tensor *t, int elem);
int64_t ox_numel(const int64_t *dims, int ndim);
/* t's dims as N,H,W,C and view_cl set: a channels-last view (the nnop value stays N,C,H,W) */
void ox_mark_view(ox_tensor *t);
/* The nnop value of t: a VALUE's own, or a CONST as an nnop_constant of the run dtype (4-D in
 * the run layout), made once. */
nnop_status ox_value_of(ox_ctx *ox, ox_tensor *t, nnop_value *out);
/* An nnop_constant of n floats with the given dims (4-D: run layout), in the run dtype. */
nnop_status ox_make_const(ox_ctx *ox, const char *name, const float *data, int ndim,
                          const int64_t *dims, nnop_value *out);
/* Broadcast index helper: the flat index into a tensor of dims sd (rank sn) broadcast to
 * dims od (rank on) at flat output index k. */
int64_t ox_bcast_index(int64_t k, const int64_t *od, int on, const int64_t *sd, int sn);
/* numpy broadcast of two shapes; 0 when they do not broadcast. */
int ox_bcast_shape(const int64_t *a, int an, const int64_t *b, int bn, int64_t *out, int *on);
/* The element k of a constant as double (float or int storage). */
double ox_const_get(const ox_tensor *t, int64_t k);

/* Channels-last views (onnx_view.c): whether n reads one; convert n, whose converter runs on
 * the views' N,C,H,W values with its constants permuted to match, its outputs views again
 * (refused, naming the input, for an op outside the list). */
int ox_reads_view(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_convert_on_views(ox_ctx *ox, const Onnx__NodeProto *n,
                                nnop_status (*fn)(ox_ctx *, const Onnx__NodeProto *));
/* Fused patterns (onnx_fuse.c): node k and the nodes after it as one op where they form one
 * (GELU's erf form); 1 when they did (the later nodes marked in ox->skip), 0 when not, -1 on
 * an error (recorded). */
int ox_fuse_at(ox_ctx *ox, size_t k);

/* Operators: convert node n (all its inputs known); the table is onnx_ops.c's. */
nnop_status ox_convert_node(ox_ctx *ox, const Onnx__NodeProto *n);
/* Whether the importer knows op_type at all (for the first scan's list of unknown ones). */
int ox_op_known(const char *op_type);

/* What the converters share (onnx_node.c). Attributes: */
const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name);
/* Every attribute of n must be one of known (NULL-terminated): one the converter does not
 * read could change the result. */
nnop_status ox_check_attrs(ox_ctx *ox, const Onnx__NodeProto *n, const char *const *known);
extern const char *const ox_no_attrs[]; /* {"consumed_inputs", NULL} */
nnop_status ox_attr_i(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, int64_t def,
                      int64_t *out);
nnop_status ox_attr_f(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, float def,
                      float *out);
/* ints attribute: *count -1 when absent */
nnop_status ox_attr_ints(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, const int64_t **v,
                         int *count);
/* string attribute compared with s; absent means def */
int ox_attr_s_is(const Onnx__NodeProto *n, const char *name, const char *def, const char *s);
/* Inputs: input k or NULL when absent; need_in fails on an absent one; need_value gives the
 * input as a run-time float value (a constant becomes an nnop constant). */
ox_tensor *ox_in(ox_ctx *ox, const Onnx__NodeProto *n, size_t k);
nnop_status ox_need_in(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, ox_tensor **out);
nnop_status ox_need_value(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, ox_tensor **t,
                          nnop_value *v);
/* constant input k as a list of int64 (shape, axes, pads); absent: *count -1 */
nnop_status ox_const_ints(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const char *what,
                          const int64_t **v, int64_t *count);
/* a list that moved from an attribute to constant input k at opset `since` (Reshape's shape
 * at 5, Squeeze's axes at 13, ReduceMean's at 18): the attribute before, the input from then;
 * absent: *count -1 */
nnop_status ox_ints_moved(ox_ctx *ox, const Onnx__NodeProto *n, const char *name, int64_t since,
                          size_t k, const int64_t **v, int64_t *count);
/* constant scalar float input k (Clip bounds, Dropout ratio); absent: *present 0 */
nnop_status ox_const_scalar(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const char *what,
                            double *v, int *present);
/* Outputs: whether something reads output k (an unread mask or statistic is left unmade);
 * only_output0 refuses a read output other than 0 (training or index outputs). */
int ox_out_used(ox_ctx *ox, const Onnx__NodeProto *n, size_t k);
nnop_status ox_only_output0(ox_ctx *ox, const Onnx__NodeProto *n, const char *what);
/* output k's tensor, new (NULL: recorded error) */
ox_tensor *ox_out_tensor(ox_ctx *ox, const Onnx__NodeProto *n, size_t k);
/* output k is the run-time value v (its dims read from the graph) */
nnop_status ox_set_value(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, nnop_value v, int elem);
/* output k is src under another name */
nnop_status ox_set_alias(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, const ox_tensor *src);
/* a new constant output k with the given dims; storage to fill by the caller (the table may
 * have moved: pointers into ox->t taken before are stale) */
ox_tensor *ox_set_const(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, int elem, int ndim,
                        const int64_t *dims);
/* n elements of one buffer sized by dims, not by the file's bytes: refused (recorded) above
 * ox_max_made or when negative. */
nnop_status ox_made(ox_ctx *ox, int64_t n, const char *what);
/* The options' max_made, or OX_MAX_MADE_DEFAULT where it is 0. */
int64_t ox_max_made(const ox_ctx *ox);
/* Shapes: "[a, b, ...]" into buf; equality; a negative axis counted from the end. */
void ox_shape_str(char *buf, size_t len, const int64_t *dims, int ndim);
int ox_same_dims(const int64_t *a, int an, const int64_t *b, int bn);
int64_t ox_norm_axis(int64_t axis, int rank);
/* y = x * a[c] + b[c] per channel (dim 1), an exact inference batch-norm; affine1: scalars. */
nnop_status ox_affine(ox_ctx *ox, nnop_value x, const float *a, const float *b, int64_t c,
                      nnop_value *out);
nnop_status ox_affine1(ox_ctx *ox, const ox_tensor *xt, nnop_value x, float a, float b,
                       nnop_value *out);

/* The converters, one per operator family (n: the node, all its inputs known). */
/* onnx_pointwise.c */
nnop_status ox_op_act(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_clip(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_prelu(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_identity(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_dropout(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_binary(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_sum(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_erf(ox_ctx *ox, const Onnx__NodeProto *n); /* refused: see onnx_fuse.c */
/* onnx_conv.c */
nnop_status ox_op_conv(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_conv_transpose(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_pool(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_pad(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_global_pool(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_reduce_mean(ox_ctx *ox, const Onnx__NodeProto *n);
/* onnx_resize.c: Resize, Upsample */
nnop_status ox_op_resize(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_lrn(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_transpose(ox_ctx *ox, const Onnx__NodeProto *n);
/* onnx_norm.c */
nnop_status ox_op_batchnorm(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_instance_norm(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_group_norm(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_layer_norm(ox_ctx *ox, const Onnx__NodeProto *n);
/* onnx_linear.c */
nnop_status ox_op_gemm(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_softmax(ox_ctx *ox, const Onnx__NodeProto *n);
/* onnx_shape.c */
nnop_status ox_op_flatten(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_reshape(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_squeeze(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_concat(ox_ctx *ox, const Onnx__NodeProto *n);
/* onnx_fold.c */
nnop_status ox_op_constant(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_shape(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_gather(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_cast(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_constant_of_shape(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_slice(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_split(ox_ctx *ox, const Onnx__NodeProto *n);
nnop_status ox_op_range(ox_ctx *ox, const Onnx__NodeProto *n);

#endif /* NNOP_ONNX_INTERNAL_H */
