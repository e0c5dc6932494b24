/* nnop_onnx: load an ONNX model into an nnop graph (the library nnop_onnx, built where
 * protobuf-c is found; issue 44).
 *
 * The importer sits above nnop's public API: it parses the model with protobuf-c, folds the
 * constant subgraphs exporters emit (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Cast
 * of constants, Constant nodes), and calls the graph builders of nnop.h. A model with a node
 * nnop cannot run fails at load with NNOP_ERR_UNSUPPORTED and a message naming the node (its
 * name, op type, and the attribute, input or shape that does not fit); then no graph is
 * returned (a graph is given back complete or not at all). docs/onnx.md lists the operators
 * and what of each is supported.
 *
 * Names: each graph input (those that are not initializers) becomes an nnop_input of the
 * ONNX name, each graph output an nnop_output of the ONNX name, in the model's order, so
 * nnop_plan_input_index(plan, "input.1") finds them (nnop keeps the first 47 bytes of a name).
 *
 * Threads: as nnop (one thread per context at a time); nnop_onnx_last_error is per thread. */
#ifndef NNOP_NNOP_ONNX_H
#define NNOP_NNOP_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "nnop.h"

#if defined(NNOP_ONNX_BUILDING_DLL) && defined(NNOP_ONNX_USING_DLL)
#error "define NNOP_ONNX_BUILDING_DLL or NNOP_ONNX_USING_DLL, not both"
#endif
#if defined(_WIN32) && defined(NNOP_ONNX_BUILDING_DLL)
#define NNOP_ONNX_API __declspec(dllexport)
#elif defined(_WIN32) && defined(NNOP_ONNX_USING_DLL)
#define NNOP_ONNX_API __declspec(dllimport)
#elif defined(__GNUC__)
#define NNOP_ONNX_API __attribute__((visibility("default")))
#else
#define NNOP_ONNX_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Options of nnop_onnx_load_file and nnop_onnx_load_memory; start from
 * nnop_onnx_options_init. */
typedef struct nnop_onnx_options {
    /* The dtype the graph runs in: inputs, outputs and every value. Float initializers
     * (float, double, float16, bfloat16) are converted to it. Default NNOP_F32. */
    nnop_dtype dtype;
    /* The layout of 4-D values: NNOP_NCHW keeps ONNX's, NNOP_NHWC runs channels-last (4-D
     * inputs and outputs are then NHWC in memory, conv weights are converted with
     * nnop_tensor_copy). Shapes stay ONNX's logical N, C, H, W. Default NNOP_NCHW. */
    nnop_layout layout;
    /* The size of symbolic dimensions (dim_param, or a dim without a value) of the graph
     * inputs: the batch size. Default 1. Compiled with nnop_compile_options.batch_range, the
     * plan then runs any batch from 1 to this one (nnop_exec_run; on the CUDA backend
     * through batch buckets, nnop.h), with the bits of the model loaded at that batch. */
    int64_t batch;
    /* The most elements a load makes beyond the file's bytes: constants folded at load (in
     * all) and any one buffer sized by a value's dims, so that a small file cannot ask for
     * gigabytes. 0 (the default): 2^26 (256 MB of float). A model that builds its weights at
     * load (ONNX's light VGG-19: a ConstantOfShape of 102.8 M elements) needs more; 1 to
     * 2^34, else NNOP_ERR_INVALID_ARGUMENT. Initializers stored in the file never count. */
    int64_t max_made;
    uint64_t reserved[7]; /* zero (else NNOP_ERR_INVALID_ARGUMENT) */
} nnop_onnx_options;

/** Defaults: NNOP_F32, NNOP_NCHW, batch 1. */
NNOP_ONNX_API void nnop_onnx_options_init(nnop_onnx_options *o);

/** Load the ONNX model in the file path into a new graph of ctx (opts may be NULL:
 * defaults). On success *out is a complete graph whose inputs and outputs carry the ONNX
 * names; compile it with nnop_graph_compile and destroy it with nnop_graph_destroy. On
 * failure *out is NULL and nnop_onnx_last_error() says why: NNOP_ERR_IO (unreadable file),
 * NNOP_ERR_FORMAT (not a valid ONNX model: truncated, garbage, an input no node makes, a
 * cycle), NNOP_ERR_UNSUPPORTED (a node, dtype or shape nnop does not run: the message names
 * the node), NNOP_ERR_INVALID_ARGUMENT, NNOP_ERR_OUT_OF_MEMORY, or what a graph builder
 * reported (its message follows the node's name).
 * External data (initializers whose bytes lie in a file beside the model, as torch.onnx.export
 * writes model.onnx.data): read from the file's location relative to the directory of path,
 * at its offset; a location that is absolute or passes through '..' is NNOP_ERR_FORMAT (a
 * model reads no file outside its directory), a file shorter than offset + the tensor's bytes
 * or a length key other than those bytes NNOP_ERR_FORMAT, a file that does not open
 * NNOP_ERR_IO. */
NNOP_ONNX_API nnop_status nnop_onnx_load_file(nnop_context *ctx, const char *path,
                                              const nnop_onnx_options *opts, nnop_graph **out);
/** nnop_onnx_load_file from size bytes of a serialized ModelProto in memory (not kept). A
 * model with external data is NNOP_ERR_UNSUPPORTED here (no directory to find it in). */
NNOP_ONNX_API nnop_status nnop_onnx_load_memory(nnop_context *ctx, const void *data, size_t size,
                                                const nnop_onnx_options *opts, nnop_graph **out);

/** Message of the last failed call of this library on this thread, "" after a success
 * (never NULL). */
NNOP_ONNX_API const char *nnop_onnx_last_error(void);

/** Read a serialized ONNX TensorProto (the input_0.pb and output_0.pb files of ONNX's test
 * data) of a float type (float, double, float16, bfloat16) into dtype t: *desc gets its dims,
 * row-major (a scalar is 1-D of 1 element), *data a buffer of nnop_tensor_bytes(desc) bytes to
 * free with nnop_onnx_free, and name (if not NULL, name_len > 0) the tensor's name, cut to
 * fit and NUL-terminated. On failure nothing is written and nnop_onnx_last_error says why. */
NNOP_ONNX_API nnop_status nnop_onnx_tensor_read(const void *bytes, size_t size, nnop_dtype t,
                                                nnop_tensor_desc *desc, void **data, char *name,
                                                size_t name_len);
/** Free memory of nnop_onnx_tensor_read (NULL is fine). */
NNOP_ONNX_API void nnop_onnx_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_NNOP_ONNX_H */
