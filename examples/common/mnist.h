/* mnist.h: the MNIST test split (IDX files) and the two bundled classifiers (lenet, resnet)
 * built as nnop graphs from safetensors weights, shared by examples/classify_mnist.c and
 * tests/unit/test_mnist.c. */
#ifndef NNOP_EXAMPLES_MNIST_H
#define NNOP_EXAMPLES_MNIST_H

#include <stddef.h>
#include <stdint.h>

#include "nnop/nnop.h"
#include "safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MNIST_ROWS      28
#define MNIST_COLS      28
#define MNIST_PIXELS    (MNIST_ROWS * MNIST_COLS)
#define MNIST_CLASSES   10
#define MNIST_ERROR_LEN 512

/* Digits and labels read from IDX files (the format MNIST ships in, uncompressed). */
typedef struct mnist_set {
    int count;
    unsigned char *pixels; /* count * 784, row-major, 0 = background */
    unsigned char *labels; /* count, 0..9 */
} mnist_set;

/* Read <dir>/test-images-idx3-ubyte and <dir>/test-labels-idx1-ubyte (prefix "test", or
 * another prefix such as "train"). Checks magic numbers, sizes, counts and label values. */
nnop_status mnist_load(const char *dir, const char *prefix, mnist_set *out, char *err,
                       size_t err_len);
/* Read an IDX1 ubyte file (labels, or recorded predictions) of expected_count entries (0: any)
 * with values below max_value; *out is malloc'ed, *count set. */
nnop_status mnist_read_idx1(const char *path, int expected_count, int max_value,
                            unsigned char **out, int *count, char *err, size_t err_len);
void mnist_free(mnist_set *s);

/* Input tensor convention of the bundled models: NCHW [n, 1, 28, 28], pixel / 255. */
void mnist_to_input(const unsigned char *pixels, int n, float *x);

typedef enum mnist_model_kind { MNIST_LENET = 0, MNIST_RESNET = 1 } mnist_model_kind;

/* Parse "lenet" / "resnet"; -1 if unknown. */
int mnist_model_from_name(const char *name);
const char *mnist_model_name(mnist_model_kind m);

/* Build the graph of model m for batch size n and dtype t on g: one input [n,1,28,28] NCHW
 * of dtype t, one output logits [n,10] of dtype t. Weights come from w (float32 in the file
 * or converted from F16/BF16) and are converted to t with nnop_convert. Returns NNOP_OK or a
 * status with the reason in err: a missing tensor, a wrong shape (loader), or the graph
 * builder's error (with nnop_context_last_error's message). */
nnop_status mnist_build(nnop_graph *g, nnop_context *ctx, mnist_model_kind m,
                        const safetensors_file *w, nnop_dtype t, int64_t n, char *err,
                        size_t err_len);

/* Index of the largest of 10 logits of dtype t (first wins ties). */
int mnist_argmax(nnop_dtype t, const void *logits_row);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_EXAMPLES_MNIST_H */
