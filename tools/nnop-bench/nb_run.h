/* nb_run.h: nnop-bench measurement: contexts with a stream of their own, the bundled
 * networks, checks, timing (CUDA events when built with CUDA), and the device peaks. */
#ifndef NNOP_BENCH_NB_RUN_H
#define NNOP_BENCH_NB_RUN_H

#include "nb.h"
#include "nb_thread.h" /* nb_now */

#ifdef __cplusplus
extern "C" {
#endif

/* A context on one backend and device; on CUDA with a stream of nnop-bench's own, so CUDA
 * events can time it (public API: nnop_context_set_stream). */
typedef struct nb_env {
    nnop_context *ctx;
    void *stream; /* cudaStream_t, NULL on the CPU backend */
    int cuda;     /* the context runs on CUDA */
    int device;
    char name[128];  /* device name ("host CPU" on the CPU backend) */
    size_t l2_bytes; /* 0 when unknown */
} nb_env;

int nb_env_open(nb_env *e, nnop_backend backend, int device, const nnop_context_options *base,
                char *err, size_t len);
void nb_env_close(nb_env *e);
/* CUDA devices present (0 in a build without CUDA or without a usable driver). */
int nb_cuda_device_count(void);
/* 1 when this nnop-bench was built with CUDA events (NNOP_BENCH_HAVE_CUDA). */
int nb_have_cuda_timing(void);

typedef struct nb_method {
    int warmup;          /* calls before timing (0: 2 x sets) */
    int reps;            /* repeats; the median is reported  */
    int calls;           /* calls per repeat (0: automatic)  */
    double rotate_bytes; /* input+output sets to rotate through (0: 2 x L2, at least 64 MiB) */
} nb_method;

/* ---------------------------------------------------------------- the bundled networks */
typedef enum nb_net_kind {
    NB_NET_RESNET50 = 0,
    NB_NET_LENET,
    NB_NET_MNIST_RESNET,
    /* examples/nets/<name>.json (tools/export_vision_net.py), seeded random weights */
    NB_NET_MOBILENET_V3_LARGE,
    NB_NET_EFFICIENTNET_B0,
    NB_NET_CONVNEXT_TINY,
    NB_NET_UNET,
    NB_NET_COUNT
} nb_net_kind;
typedef struct nb_net {
    nb_net_kind kind;
    int64_t batch, size; /* size: image height and width (ResNet-50, the examples/nets ones) */
    nnop_dtype dt;
    nnop_layout layout;
    const char *weights_dir; /* MNIST weights (NULL: the bundled ones, nb_nets.c) */
    /* an ONNX model (--onnx; kind is then unused), loaded with nnop_onnx in dt and layout at
     * batch; onnx_data: a folder of input_<i>.pb and output_0.pb (ONNX's test_data_set_0)
     * whose inputs are run and whose output 0 is the check's reference, or NULL */
    const char *onnx_path, *onnx_data;
} nb_net;
/* "resnet50", "lenet", "mnist-resnet", "mobilenet_v3_large", "efficientnet_b0",
 * "convnext_tiny", "unet"; -1 when unknown. */
int nb_net_parse(const char *name);
const char *nb_net_name(nb_net_kind k);
/* 1 for the networks that take any layout and image size (not the MNIST models) */
int nb_net_any_shape(nb_net_kind k);
/* 1 when the MNIST models are built in (examples' support library and cJSON). */
int nb_have_mnist(void);
nnop_status nb_net_graph(const nb_net *net, nnop_context *ctx, nnop_graph **out, char *err,
                         size_t len);
double nb_net_flops(const nb_net *net);
/* The name of a network in reports: its kind's, or an ONNX file's base name. */
const char *nb_net_label(const nb_net *net);
/* nb_net_graph of an ONNX model (net->onnx_path), nb_onnx.c. */
nnop_status nb_onnx_graph(const nb_net *net, nnop_context *ctx, nnop_graph **out, char *err,
                          size_t len);
/* 1 when ONNX models can be loaded (nnop-bench built with nnop_onnx, NB_HAVE_ONNX). */
int nb_have_onnx(void);
/* An ONNX test data folder's input i (input_<i>.pb) in desc d's dtype and strides, malloc'ed
 * (free() it); NULL with the reason in err (a missing file, other dims than d's). */
void *nb_onnx_data_input(const char *dir, int i, const nnop_tensor_desc *d, char *err, size_t len);
/* Its output_0.pb in logical row-major float64 (malloc'ed, *n elements); NULL and err. */
double *nb_onnx_data_output(const char *dir, int64_t *n, char *err, size_t len);
/* Dim 0 of its input_0.pb (the batch), or -1 and err. */
int64_t nb_onnx_data_batch(const char *dir, char *err, size_t len);

/* ---------------------------------------------------------------- work: a problem or a net */
typedef struct nb_work {
    nb_instance *inst; /* a problem, or NULL */
    const nb_net *net; /* a network, or NULL */
    uint64_t seed;
} nb_work;

nnop_status nb_work_graph(nb_work *w, nnop_context *ctx, nnop_graph **out, char *err, size_t len);

/* A compiled work item with device buffers: sets of inputs and outputs to rotate through. */
typedef struct nb_bound {
    nb_env *env;
    nnop_plan *plan;
    int nin, nout, sets;
    void **in, **out; /* sets * nin, sets * nout device pointers */
    double set_bytes;
    double compile_ms;
} nb_bound;

/* Build, compile (timed) and bind w on e with sets buffers; 0 or -1 with the reason. */
int nb_bind(nb_bound *b, nb_env *e, nb_work *w, int cuda_graph, int sets, char *err, size_t len);
void nb_unbind(nb_bound *b);
/* Sets needed to rotate through m->rotate_bytes (or 2 x L2) with sets of set_bytes. */
int nb_sets_for(const nb_env *e, const nb_method *m, double set_bytes);
/* Time b per m: median GPU us per call (-1 without CUDA timing) and host us per call. */
int nb_time(nb_bound *b, const nb_method *m, double *gpu_us, double *host_us, char *err,
            size_t len);
/* Run b's set 0 once and read output 0 into logical float64 (malloc'ed, *n elements). */
double *nb_run_once(nb_bound *b, int64_t *n, char *err, size_t len);

/* Check w on e against ref (another context: nnop's CPU backend) or, with ref NULL, the naive
 * float64 reference (problems only); fills r's check fields. tol <= 0: the dtype's. */
void nb_check(nb_env *e, nb_env *ref, nb_work *w, int cuda_graph, double tol, nb_result *r);
/* Measure device-to-device copy bandwidth and a big matmul (nnop_linear: f16 8192^3 on CUDA,
 * f32 512^3 on the CPU backend) into rep->peak_*. */
void nb_measure_peaks(nb_env *e, const nb_method *m, nb_report *rep);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_BENCH_NB_RUN_H */
