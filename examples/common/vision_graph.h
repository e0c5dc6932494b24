/* vision_graph.h: networks described as nnop operations, as tools/export_vision_net.py writes
 * them from torchvision models (examples/nets/<model>.json): {"model", "n_values", "ops": [{"op",
 * "out", "inputs", attributes...}], "outputs", "tensors": {name: shape}}. Value 0 is the input
 * image; each op is one nnop builder call (conv, conv_transpose, batchnorm, act, add, mul,
 * mul_const, pool, gap, flatten, linear, layer_norm, concat, resize). Used by the vision_net
 * example and nnop-bench's --net. */
#ifndef NNOP_EXAMPLES_VISION_GRAPH_H
#define NNOP_EXAMPLES_VISION_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "nnop/nnop.h"
#include "safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A graph file: a regular file of at most 64 MiB holding one JSON object (cJSON_Delete it);
 * NULL with the reason, naming the file, in err. */
cJSON *vision_graph_read(const char *path, char *err, size_t len);
/* The network of j on g from its input x: weights from the file (NULL: seeded random ones from
 * seed), constants in dtype t, 4-D ones in layout (x's). *out is the network's first output.
 * NNOP_OK, or NNOP_ERR_FORMAT (the file does not describe a graph), NNOP_ERR_OUT_OF_MEMORY, a
 * weights-file status, or the status of a builder that refused an op, with the reason in
 * err. Numbers in the file are checked before use (no cast of NaN or of huge values). */
nnop_status vision_graph_build(nnop_context *ctx, nnop_graph *g, const cJSON *j, nnop_value x,
                               const safetensors_file *weights, nnop_dtype t, nnop_layout layout,
                               uint64_t seed, nnop_value *out, char *err, size_t len);
/* Logical row-major floats into (to_tensor 1) or out of (0) a packed tensor of d's strides
 * and element count: the input and output buffers of an NHWC graph, its NHWC constants. */
void vision_tensor_restride(const nnop_tensor_desc *d, float *dst, const float *src, int to_tensor);
/* Its "model" ("network" when absent) and its number of ops. */
const char *vision_graph_model(const cJSON *j);
int vision_graph_ops(const cJSON *j);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_EXAMPLES_VISION_GRAPH_H */
