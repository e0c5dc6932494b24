/* nnop: fused neural-network operators for NVIDIA GPUs on the cuDNN 9 backend graph API.
 *
 * Threads: a context and everything made from it (graphs, plans) is used by one thread at a
 * time; different contexts may run concurrently. Nothing detects a breach: one plan executed
 * from two threads at once gives wrong results with NNOP_OK, and two plans of one context
 * run at once race on its error message. Give each thread its own context (a shared
 * nnop_plan_cache lets them share compiled plans), or serialize the calls on one context.
 * Many contexts on one device compile, execute and capture at once: nnop waits only for what
 * its context queued (its stream), never for the device (no cudaDeviceSynchronize, no legacy
 * default stream), and captures its CUDA graphs in cudaStreamCaptureModeThreadLocal, so one
 * thread's capture does not fail another's calls (tests/unit/test_concurrency.c, 32 threads
 * with one shared cache). A capture of your own in
 * cudaStreamCaptureModeGlobal forbids other threads' cudaMalloc and cudaFree, which nnop's
 * compile and destroy call: capture in ThreadLocal or Relaxed mode beside nnop.
 *
 * Devices (CUDA backend): each call on a context makes the context's device (options.device)
 * current for the call and the caller's current device current again before it returns, as
 * PyTorch's device guards do. So one thread per GPU needs no cudaSetDevice of its own, and a
 * call never changes which device the caller's own CUDA calls go to.
 *
 * Memory: tensor pointers passed to execute calls are device memory on the CUDA backend and
 * host memory on the CPU backend. Constants given to the graph builder are host memory and
 * are copied.
 *
 * Errors: every call returns an nnop_status (graph builders return an error value and record
 * the error in the graph, see nnop_value). nnop_context_last_error() names the call, argument
 * or node and why. A failed
 * call writes nothing to user memory (tensors, descriptors, text and count arguments keep
 * what they held), with two exceptions: the handle a create or compile call returns in *out
 * is NULL after a failure, so that it never dangles; and nnop_cache_file_check, whose report
 * on a damaged or unreadable file is its result, writes it with NNOP_ERR_FORMAT or _IO.
 *
 * Libraries (CUDA build): the CUDA runtime is linked; cuDNN 9 (9.0 or newer, and not older
 * than the cuDNN headers nnop was built with) and cuBLASLt are loaded when first needed (the
 * first context that may use the GPU), so a program starts without them.
 * cuDNN is libcudnn.so.9 (cudnn64_9.dll): from the folder in the environment variable
 * NNOP_CUDNN_PATH alone when it is set (a library file named there stands for its folder;
 * a value over 4095 bytes loads no cuDNN and says so), else where the platform loader finds
 * it, else from the folder nnop was built against; its graph library must sit beside it.
 * Without a usable cuDNN, AUTO runs on the CPU (nnop_context_backend_reason() says why) and
 * NNOP_BACKEND_CUDA fails with NNOP_ERR_VERSION naming the file and the loader's error (with
 * NNOP_ERR_NO_DEVICE where there is no usable GPU either: that comes first, the cuDNN trouble
 * follows in the message after "also:"). cuBLASLt
 * (libcublasLt.so.<CUDA major>) missing only moves linear layers to nnop's own kernel.
 *
 * Streams (CUDA backend), as cuDNN users expect: with no stream given, a context's work runs
 * on a blocking stream of its own, which orders with the legacy default stream (the NULL
 * stream, cuDNN's default) both ways. So a plain cudaMemcpy or a kernel on stream 0 after any
 * nnop call sees its results, and nnop sees what was queued on stream 0 before the call. With
 * nnop_context_set_stream (or options.stream) nnop queues everything on that stream and
 * orders with nothing else: you synchronize. nnop_plan_execute, nnop_conv_bias_relu and
 * nnop_conv_bias_act are asynchronous on that stream; nnop_copy_in, nnop_copy_out and
 * nnop_context_synchronize wait for it; nnop_graph_compile waits for its own uploads only.
 * A program built with nvcc --default-stream per-thread does not use the legacy stream:
 * there, set your stream or call nnop_context_synchronize before reading results.
 *
 * Numbers, as in PyTorch: NaN propagates through every op (ReLU, ReLU6, clamp and max
 * pooling included). One exception, which PyTorch on a GPU shares: fp16 and bf16 convolutions
 * and transposed convolutions that cuDNN runs follow its engines, some of which give 0 for a
 * -inf input or spread a NaN to outputs whose window does not hold it (docs/performance.md
 * names the engines and versions). fp32 convs, the CPU
 * backend and nnop's own kernels keep IEEE rules. Two-element parameters (pad, stride,
 * dilation, window) are {H, W}.
 * Every value is a tensor of its dtype: the CPU backend computes a node in float32 (double
 * accumulation) and rounds its result to fp16/bf16, like PyTorch eager; the CUDA backend keeps
 * the values inside a fused partition in float32, so it can only be closer to exact.
 *
 * Layout: a 4-D value's layout is in its strides (nnop_tensor_4d). Results take the layout
 * of their first 4-D operand that has one; a tensor whose NCHW and NHWC strides coincide
 * (N x 1 x 1 x 1) takes the graph's, which is that of its first 4-D input or constant that
 * has one. So an NHWC graph gives NHWC results and outputs, degenerate shapes included.
 * Until an input or constant states the layout, results are NCHW (as PyTorch's default
 * memory format); when one does, those results take its layout (nnop_value_desc then gives
 * the new strides). A graph none of whose 4-D inputs or constants states one is NCHW, unless
 * nnop_graph_set_layout declared the graph's layout: an NHWC graph whose every input is
 * N x 1 x 1 x 1 (and weights K x 1 x 1 x 1) needs it to give NHWC results.
 *
 * Logging, as ONEDNN_VERBOSE, per context: options.log_level (or the environment variable
 * NNOP_LOG, read when a context is created, which overrides it when set to 0, 1 or 2) says what
 * is logged, and options.log_fn where it goes (NULL: stderr, one line each, "nnop_log," and
 * the line, or "nnop_log:<tag>," with options.log_tag). Level 1 (NNOP_LOG_COMPILE): a line per
 * context creation, "create,<backend>,device <d>[,<why AUTO chose the CPU>]" or
 * "create,failed,<message>", and one per partition of each compiled plan,
 * "compile,<backend>,plan <id>,partition <i>/<n>,<nodes>,<implementation>,
 * policy <p>,cache <hit|miss|->,<ms>,<bytes> B" (the implementation as nnop_plan_describe gives
 * it; the time is the whole compile's; the bytes are the least the partition moves: each value
 * it reads from outside it and each it writes for use outside, once). Level 2
 * (NNOP_LOG_EXECUTE): also one line per execute, failed ones included,
 * "exec,<backend>,plan <id>,<n> partitions,<status>,<ms> (host)" (plan ids count the plans
 * compiled in the process, whatever their context; the tag tells contexts apart). Level 0 (the
 * default; NNOP_LOG unset, empty or 0): off, and nothing is measured. NNOP_LOG set to any other
 * value is off too, and each context creation says so on stderr.
 *
 * Which implementation runs a partition on the CUDA backend, for side-by-side benchmarks and
 * for telling whose result is wrong (read at each compile; comma-separated names as
 * NNOP_LOG=1 and src/cuda/README.md give them): options.disable_impl skips the entries named
 * ("own stem kernel,own depthwise kernel": cuDNN then runs those convs); options.enable_impl
 * turns on experimental ones, today "own implicit-GEMM conv" (16-bit channels-last convs too
 * small to fill the GPU, as a split-K tensor-core implicit GEMM; sm_90 only). options.norm_rtc
 * lets cuDNN's runtime-compiled norm-forward engines run (excluded by default: see
 * nnop_layer_norm). The environment variables NNOP_DISABLE_IMPL, NNOP_ENABLE_IMPL (lists) and
 * NNOP_NORM_RTC (1 on, anything else off) override those options wherever they are set to a
 * non-empty value, so a deployed program can be steered without a rebuild.
 * NNOP_DEBUG_POISON=1 (read at context creation; CUDA backend): before each execute the
 * plan's intermediate buffers and workspaces are filled with 0xFF bytes (NaN in every dtype),
 * so a step that reads memory no step of that execute wrote gives NaN instead of old values;
 * for testing, as it costs a memset of them per execute. */
#ifndef NNOP_NNOP_H
#define NNOP_NNOP_H

#include <stddef.h>
#include <stdint.h>

#include "nnop_export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNOP_VERSION_MAJOR 0
#define NNOP_VERSION_MINOR 1
#define NNOP_VERSION_PATCH 0

/** Version of the loaded library as MAJOR*10000 + MINOR*100 + PATCH. */
NNOP_API int nnop_version(void);

/** Installation report (the doctor): nnop version, CUDA runtime and driver, cuDNN built and
 * loaded versions, each cuDNN sub-library, cuBLASLt, the libcudnn file nnop itself loads (by
 * the rules under "Libraries" above), devices. Writes at most len bytes (NUL-terminated) and
 * returns the length the whole text needs. Never fails. */
NNOP_API size_t nnop_diagnose(char *buf, size_t len);
/* nnop_diagnose_ex flags */
#define NNOP_DIAGNOSE_JSON        1u /* one JSON object instead of text */
#define NNOP_DIAGNOSE_REQUIRE_GPU 2u /* no usable GPU is a problem (else only reported) */
/* Load the libraries in child processes (POSIX fork; ignored on Windows), so that a damaged
 * one that crashes the loader is reported instead of ending the caller: for single-threaded
 * callers such as nnop-doctor, which always sets it. */
#define NNOP_DIAGNOSE_ISOLATED 4u /* (other bits are ignored) */
/** nnop_diagnose with choices. Every library is loaded and checked on its own (the file
 * loaded, its version, the loader's error); each problem found (a cuDNN library missing or
 * not loading, versions that do not fit the build, each other or the driver) comes with its
 * fix. *problems (may be NULL) gets their number: 0 when the installation is healthy; a
 * machine without a GPU is healthy unless NNOP_DIAGNOSE_REQUIRE_GPU. A missing cuBLASLt is a
 * note, shown with its fix but not counted (linear layers run on nnop's own kernel). While
 * NNOP_CUDNN_PATH is set, the fixes for cuDNN name it, not the loader's path. The environment
 * variable NNOP_CUDNN_PATH, a folder (or a library file in it), makes it check the cuDNN
 * libraries of that folder only (to try an installation before using it). */
NNOP_API size_t nnop_diagnose_ex(char *buf, size_t len, unsigned flags, int *problems);

/* ---------------------------------------------------------------- status codes (fixed) */
typedef enum nnop_status {
    NNOP_OK = 0,
    NNOP_ERR_INVALID_ARGUMENT = 1, /* null pointer, bad enum, non-positive dim ...     */
    NNOP_ERR_SHAPE = 2,            /* shapes or dtypes that do not fit together         */
    NNOP_ERR_UNSUPPORTED = 3,      /* valid request that no engine can run              */
    NNOP_ERR_OUT_OF_MEMORY = 4,    /* host or device allocation failed                  */
    NNOP_ERR_NO_DEVICE = 5,        /* CUDA backend asked for, no usable GPU             */
    NNOP_ERR_VERSION = 6,          /* cuDNN/CUDA missing or incompatible with the build */
    NNOP_ERR_CUDA = 7,             /* a CUDA call failed; the message says which        */
    NNOP_ERR_CUDNN = 8,            /* a cuDNN call failed; message and cuDNN's text     */
    NNOP_ERR_IO = 9,               /* a file could not be read or written               */
    NNOP_ERR_FORMAT = 10,          /* a file is malformed (weights, cache)              */
    NNOP_ERR_INTERNAL = 11         /* a bug in nnop: please report it with the message  */
} nnop_status;

/** Static, never-NULL name of a status ("NNOP_ERR_SHAPE"); unknown values give a fixed text. */
NNOP_API const char *nnop_status_string(nnop_status s);

/* ---------------------------------------------------------------- tensors (fixed) */
/* Graphs compute in f32, f16 and bf16. The 8-bit dtypes are for storage in this version:
 * nnop_convert, nnop_tensor_copy, nnop_quantize and nnop_dequantize take them; a graph
 * input, constant or one-call descriptor in one fails with NNOP_ERR_UNSUPPORTED naming it.
 * Conversion to them rounds to nearest even and saturates: a finite value or an infinity
 * beyond the largest finite one gives that one (E4M3 448, E5M2 57344, INT8 -128 and 127), as
 * CUDA's __NV_SATFINITE conversions do; NaN stays NaN in FP8 (0x7f with its sign) and becomes
 * 0 in INT8, which has none. */
typedef enum nnop_dtype {
    NNOP_F32 = 0,
    NNOP_F16 = 1,
    NNOP_BF16 = 2,
    NNOP_F8E4M3 = 3, /* OCP FP8 E4M3FN: 4 exponent bits (bias 7), 3 mantissa, no inf  */
    NNOP_F8E5M2 = 4, /* OCP FP8 E5M2: 5 exponent bits (bias 15), 2 mantissa, inf, NaN */
    NNOP_I8 = 5      /* two's complement int8                                          */
} nnop_dtype;
typedef enum nnop_layout { NNOP_NCHW = 0, NNOP_NHWC = 1 } nnop_layout;
typedef enum nnop_backend {
    NNOP_BACKEND_AUTO = 0,
    NNOP_BACKEND_CUDA = 1,
    NNOP_BACKEND_CPU = 2
} nnop_backend;

#define NNOP_MAX_DIMS 8

/* Limits. Every descriptor, given (nnop_input, nnop_constant, the one-call entry points) or
 * inferred by a builder (the output of nnop_conv, nnop_linear, ...), is checked against them
 * on every backend; an inferred one past them fails with NNOP_ERR_SHAPE naming the node.
 *  - dims: 1 to NNOP_MAX_DIMS, each >= 1;
 *  - the largest tensor: NNOP_MAX_TENSOR_ELEMENTS elements (2^40, 4 TiB of f32), and its bytes
 *    must fit in size_t (so less on 32-bit systems);
 *  - the largest graph: NNOP_MAX_GRAPH_VALUES values (inputs, constants and node outputs), so
 *    as many nodes at most; the builder fails with NNOP_ERR_OUT_OF_MEMORY past it. */
#define NNOP_MAX_TENSOR_ELEMENTS ((int64_t)1 << 40)
#define NNOP_MAX_GRAPH_VALUES    (1 << 24)

/** A tensor description: dtype, logical dims (N, C, H, W for 4-D) and strides in elements.
 * The layout lives in the strides. nnop accepts packed tensors: 4-D NCHW or NHWC, and
 * row-major of 1 to NNOP_MAX_DIMS dims. Conv, transposed conv, pooling and resize take 4-D
 * values, linear 2-D, concat 2-D to 4-D; the pointwise ops (activations, clamp, bias,
 * batch-norm, add, mul, sub, div), softmax and the norms take what their own text says, and
 * where it says nothing, any rank (dim 1 is the channel dim). */
typedef struct nnop_tensor_desc {
    nnop_dtype dtype;
    int ndim;
    int64_t dims[NNOP_MAX_DIMS];
    int64_t strides[NNOP_MAX_DIMS];
} nnop_tensor_desc;

/** A packed 4-D descriptor with logical dims N, C, H, W in layout l. Nothing is checked here;
 * calls that take the descriptor refuse bad dims, and a layout other than NNOP_NCHW and
 * NNOP_NHWC (its strides are then 0). */
NNOP_API nnop_tensor_desc nnop_tensor_4d(nnop_dtype t, nnop_layout l, int64_t n, int64_t c,
                                         int64_t h, int64_t w);
/** A packed row-major 1-D descriptor (bias, batch-norm parameters). */
NNOP_API nnop_tensor_desc nnop_tensor_1d(nnop_dtype t, int64_t n);
/** A packed row-major 2-D descriptor (rows x cols: linear layer inputs and weights). */
NNOP_API nnop_tensor_desc nnop_tensor_2d(nnop_dtype t, int64_t rows, int64_t cols);
/** Number of elements of d (0 when d is invalid). */
NNOP_API int64_t nnop_tensor_elements(const nnop_tensor_desc *d);
/** Bytes of storage of a packed tensor d (0 when d is invalid). */
NNOP_API size_t nnop_tensor_bytes(const nnop_tensor_desc *d);
/** Convert n elements between dtypes on the host (round to nearest even; into an 8-bit dtype
 * also saturating, as above: the value itself, unscaled, see nnop_quantize). Returns
 * NNOP_ERR_INVALID_ARGUMENT for NULL pointers, unknown dtypes, n < 0 or above
 * NNOP_MAX_TENSOR_ELEMENTS, or overlapping src and dst. */
NNOP_API nnop_status nnop_convert(nnop_dtype src_type, const void *src, nnop_dtype dst_type,
                                  void *dst, int64_t n);
/** Copy a host tensor into another description of the same dims, converting its layout and
 * dtype: say PyTorch's K,C,R,S f32 conv weights (nnop_tensor_4d(NNOP_F32, NNOP_NCHW, ...))
 * into the K,R,S,C f16 memory of an NHWC graph's constant (nnop_tensor_4d(NNOP_F16, NNOP_NHWC,
 * ...)). Elements convert as nnop_convert does. NNOP_ERR_INVALID_ARGUMENT for NULL pointers,
 * an invalid descriptor or overlapping buffers (so no copy in place), NNOP_ERR_SHAPE when the
 * dims differ; nothing is written then. Takes no context: nnop_context_last_error is not set. */
NNOP_API nnop_status nnop_tensor_copy(const nnop_tensor_desc *src_desc, const void *src,
                                      const nnop_tensor_desc *dst_desc, void *dst);
/** Size in bytes of one element of dtype t (0 for an unknown dtype). */
NNOP_API size_t nnop_dtype_size(nnop_dtype t);
/** Symmetric quantization on the host: q[i] = x[i] / scales[c] in float32, then converted to
 * the 8-bit dtype q_type as nnop_convert does (nearest even, saturating), where c is i's
 * channel: x holds `channels` blocks of n / channels contiguous elements (channel-major:
 * conv weights K x C x R x S in NCHW order, linear OUT x IN; channels 1 is one scale for
 * the tensor). nnop_dequantize is the inverse: x[i] = value(q[i]) * scales[c] in float32
 * (each code's value is exact in float32). NNOP_ERR_INVALID_ARGUMENT, nothing written, for NULL
 * pointers, n < 1 or above NNOP_MAX_TENSOR_ELEMENTS, channels < 1 or not dividing n, a scale that
 * is not finite and positive, a q_type that is not an 8-bit dtype, or overlapping buffers. */
NNOP_API nnop_status nnop_quantize(const float *x, int64_t n, const float *scales, int64_t channels,
                                   nnop_dtype q_type, void *q);
NNOP_API nnop_status nnop_dequantize(nnop_dtype q_type, const void *q, int64_t n,
                                     const float *scales, int64_t channels, float *x);

/* ---------------------------------------------------------------- context (fixed core) */
typedef struct nnop_context nnop_context;

/** Which engines the CUDA backend may choose. */
typedef enum nnop_engine_policy {
    NNOP_POLICY_PREFER_PRECOMPILED = 0, /* runtime-compiled only where nothing else works */
    NNOP_POLICY_PRECOMPILED_ONLY = 1,   /* never compile at run time                      */
    NNOP_POLICY_FASTEST = 2             /* allow runtime-compiled engines and autotune    */
} nnop_engine_policy;

#define NNOP_DEVICE_DEFAULT 0

/* Log levels (nnop_context_options.log_level, NNOP_LOG). */
#define NNOP_LOG_OFF     0
#define NNOP_LOG_COMPILE 1 /* a line per context creation and per partition of each compile */
#define NNOP_LOG_EXECUTE 2 /* also one per execute */

/** A log sink (nnop_context_options.log_fn): user as the options gave it, the line's level
 * (NNOP_LOG_COMPILE or NNOP_LOG_EXECUTE), the context's log_tag ("" when none) and the line
 * without "nnop_log," and without a newline ("compile,cpu,plan 0,partition 0/1,..."). It is
 * called on the thread of the nnop call that logs, during that call, and must not call nnop
 * functions on the same context; tag and line live until it returns. */
typedef void (*nnop_log_fn)(void *user, int level, const char *tag, const char *line);

/** Memory the engine controls (nnop_context_options.allocator). Each pair is both set or both
 * NULL (nnop's own then: cudaMalloc/cudaFree, malloc/free).
 * device_alloc: bytes (> 0) of device memory on the context's device, 256-byte aligned, or
 * NULL when it cannot be had (the call that asked fails with NNOP_ERR_OUT_OF_MEMORY naming the
 * bytes and what they were for). It serves every device block nnop allocates itself: a plan's
 * weights, intermediates arena, workspaces and scratch copies (nnop_plan_memory counts them),
 * nnop_malloc, and the scratch of engine warm-up and autotuning runs, which cached plans'
 * rebuilds ask for from nnop's own threads: the functions must be thread-safe. It does not
 * serve what cuDNN, cuBLASLt, the CUDA runtime and CUDA graphs allocate inside their own calls.
 * device_free gets back what device_alloc gave, after the work that used it is done.
 * host_alloc/host_free: the CPU backend's tensor memory (a plan's buffers, nnop_malloc). nnop's
 * small bookkeeping (graphs, descriptors, messages) stays on malloc. */
typedef struct nnop_allocator {
    void *(*device_alloc)(void *user, size_t bytes);
    void (*device_free)(void *user, void *ptr);
    void *(*host_alloc)(void *user, size_t bytes);
    void (*host_free)(void *user, void *ptr);
    void *user; /* given to each function */
} nnop_allocator;

typedef struct nnop_context_options {
    /* AUTO: CUDA if a usable GPU, else the CPU reference backend (nnop_context_backend_reason
     * says why), silently. A server that must not run on the CPU asks for NNOP_BACKEND_CUDA:
     * it fails where AUTO would fall back (NNOP_ERR_NO_DEVICE, or NNOP_ERR_VERSION for a
     * driver or cuDNN that does not fit), with the reason in nnop_context_create_error. */
    nnop_backend backend;
    int device;             /* CUDA device ordinal                         */
    void *stream;           /* cudaStream_t, NULL = the context's own      */
    const char *cache_path; /* persistent plan cache file, NULL = none     */
    nnop_engine_policy policy;
    int deterministic;      /* nonzero: deterministic engines only           */
    int autotune;           /* nonzero: time the top 6 engines, then up to 12 other knob
                             * choices of the fastest, and keep the fastest of all       */
    int allow_tf32;         /* nonzero: fp32 convs may use TF32 tensor cores */
    size_t workspace_limit; /* bytes, 0 = no limit                           */
    /* A plan cache shared with other contexts (nnop_plan_cache_create), NULL = the context
     * makes its own (with the file cache_path, if set). When set, cache_path is ignored. */
    struct nnop_plan_cache *plan_cache;
    /* Threads that rebuild execution plans found in the plan cache when a graph compiles,
     * each with a cuDNN handle of its own that the context keeps (cuDNN 9.8 or later; older
     * versions use one): 0 = the default (4), 1 = the compiling thread alone, at most 8. */
    int load_threads;
    /* With a cache file: its newest execution plans are rebuilt on load_threads threads from
     * context creation on, while the program builds its graph, and the first compile waits
     * for them and takes those it needs (cuDNN 9.8 or later, load_threads > 1): 0 = the
     * default (on), -1 = off. */
    int prefetch;
    /* The log (see "Logging" at the top): what, where, and which context's. */
    int log_level;       /* NNOP_LOG_OFF (0, the default), _COMPILE or _EXECUTE; NNOP_LOG,
                          * when set to 0, 1 or 2, overrides it */
    nnop_log_fn log_fn;  /* NULL: the lines go to stderr */
    void *log_user;      /* given to log_fn */
    const char *log_tag; /* NULL or a name for the context's lines (copied, 47 bytes kept) */
    /* Implementation choice on the CUDA backend, read at each compile (see "Which
     * implementation" at the top; the environment variables override): comma-separated
     * names, copied, at most 1023 bytes; NULL or "" names none. */
    const char *disable_impl; /* entries skipped as if they did not fit */
    const char *enable_impl;  /* experimental entries turned on */
    int norm_rtc;             /* nonzero: cuDNN's runtime-compiled norm engines may run */
    /* Where the context's tensor memory comes from (nnop_allocator): NULL = nnop's own. The
     * struct is copied at create; its functions must work until the context is destroyed. */
    const nnop_allocator *allocator;
    uint64_t reserved[7]; /* zero (else refused); room for later options   */
} nnop_context_options;

/** Fill o with defaults: AUTO backend, device 0, own stream, no cache file. */
NNOP_API void nnop_context_options_init(nnop_context_options *o);
/** Create a context. o may be NULL (defaults). On failure *out is NULL and the status says
 * why; NNOP_ERR_NO_DEVICE when the CUDA backend is asked for and there is no usable GPU. */
NNOP_API nnop_status nnop_context_create(const nnop_context_options *o, nnop_context **out);
/** Message of the last failed nnop_context_create on this thread (never NULL); "" after a
 * successful one, whichever backend it chose. */
NNOP_API const char *nnop_context_create_error(void);
/** Why ctx runs on the CPU although it was created with NNOP_BACKEND_AUTO: why the GPU was not
 * used ("NNOP_ERR_VERSION: ... the CUDA driver supports CUDA 12.2 but nnop's CUDA runtime is
 * 13.0 ..."), the message NNOP_BACKEND_CUDA would have failed with; "" for a context on the
 * backend it asked for or on CUDA. Never NULL (ctx NULL gives a fixed text). */
NNOP_API const char *nnop_context_backend_reason(const nnop_context *ctx);
/** Destroy a context (NULL is fine), in any order with its graphs and plans (a binding's
 * garbage collector may destroy them in any order, though, as every call on them, from one
 * thread at a time with the context's other calls). Those still alive become orphans: their
 * device memory is freed now; nnop_graph_destroy and nnop_plan_destroy free the rest; a plan's
 * shape queries (num_inputs, input/output_desc and _index) and nnop_value_desc still answer,
 * and nnop_plan_describe says the plan is an orphan; execute, engines, compile, warm-up,
 * nnop_output and the graph builders fail with NNOP_ERR_INVALID_ARGUMENT (nnop_graph_status
 * says so) and write nothing, with no message (no context is left to hold one). */
NNOP_API void nnop_context_destroy(nnop_context *ctx);
/** The backend the context runs on (never AUTO; NNOP_BACKEND_CPU for a NULL ctx). */
NNOP_API nnop_backend nnop_context_backend(const nnop_context *ctx);
/** Message of the last failure on ctx, or "" (never NULL; ctx NULL gives a fixed text). A
 * later call on ctx may replace it, or clear it when it succeeds: read it right after the
 * failed call. The string belongs to ctx and stays valid until the next call on it. */
NNOP_API const char *nnop_context_last_error(const nnop_context *ctx);
/** Set the CUDA stream (cudaStream_t) later executes run on; NULL = the context's own. */
NNOP_API nnop_status nnop_context_set_stream(nnop_context *ctx, void *stream);
/** Wait until all work the context queued has finished. */
NNOP_API nnop_status nnop_context_synchronize(nnop_context *ctx);

/* ---------------------------------------------------------------- tensor memory */
/** Allocate bytes of tensor memory for the context's backend: device memory on CUDA, host
 * memory on CPU; 0 bytes gives a pointer to free all the same. More than any tensor can take
 * (NNOP_MAX_TENSOR_ELEMENTS 4-byte elements) is NNOP_ERR_OUT_OF_MEMORY without trying. *out
 * is NULL on failure. Free with nnop_free. */
NNOP_API nnop_status nnop_malloc(nnop_context *ctx, size_t bytes, void **out);
/** Free memory of nnop_malloc (p NULL is fine). ctx is a context of the backend (and, for
 * CUDA, the device) that allocated p; with ctx NULL nothing is freed. */
NNOP_API void nnop_free(nnop_context *ctx, void *p);
/** Copy host memory into tensor memory of the context (synchronous). */
NNOP_API nnop_status nnop_copy_in(nnop_context *ctx, void *dst, const void *host_src, size_t bytes);
/** Copy tensor memory of the context into host memory (waits for queued work first). */
NNOP_API nnop_status nnop_copy_out(nnop_context *ctx, void *host_dst, const void *src,
                                   size_t bytes);

/* ---------------------------------------------------------------- one-call ops (fixed) */
typedef struct nnop_conv_params {
    int64_t pad[2], stride[2], dilation[2], groups;
} nnop_conv_params;
/** Fill p with a plain convolution's parameters: pad 0, stride 1, dilation 1, groups 1 (p
 * NULL does nothing). The parameter structs are plain data whose layout is part of the API;
 * a new parameter comes as a new struct and builder, never as a field of these. Start from
 * the init function and set what differs: it reads the same whatever the field order. */
NNOP_API void nnop_conv_params_init(nnop_conv_params *p);

/** y = relu(conv(x, w) + bias). Pointers are device memory on the CUDA backend and host
 * memory on the CPU backend. w is K x C/groups x R x S in x's layout; bias has K elements of
 * x's dtype (NULL = no bias); y_desc must match the inferred output shape. The first call for
 * a shape builds and caches a plan; later calls only execute it. */
NNOP_API nnop_status nnop_conv_bias_relu(nnop_context *ctx, const nnop_tensor_desc *x_desc,
                                         const void *x, const nnop_tensor_desc *w_desc,
                                         const void *w, const void *bias, const nnop_conv_params *p,
                                         const nnop_tensor_desc *y_desc, void *y);

/** y = act(conv(x, w) + bias), the general form of nnop_conv_bias_relu: act is any
 * activation except NNOP_ACT_CLAMP; alpha as in nnop_act. */
NNOP_API nnop_status nnop_conv_bias_act(nnop_context *ctx, const nnop_tensor_desc *x_desc,
                                        const void *x, const nnop_tensor_desc *w_desc,
                                        const void *w, const void *bias, const nnop_conv_params *p,
                                        int act, float alpha, const nnop_tensor_desc *y_desc,
                                        void *y);

/** The one-call entry points keep up to 64 plans per context (the least recently used is
 * replaced), with their workspaces and intermediates on the device, until the context is
 * destroyed. This destroys them now; a later call compiles again (from the plan cache, if
 * the context has one). As nnop_plan_destroy, it frees with cudaFree, which waits for the
 * work queued on the device. NULL does nothing. */
NNOP_API void nnop_oneshot_clear(nnop_context *ctx);

/* ---------------------------------------------------------------- graph builder */
typedef struct nnop_graph nnop_graph;
typedef struct nnop_plan nnop_plan;

/** A value of a graph: copyable, no lifetime of its own. A negative id means the builder that
 * returned it failed: the error is recorded in the graph, and a builder given that value fails
 * too without a message of its own. Builders whose inputs are good go on working after an
 * error, each reporting its own failure, so one pass over a model finds every node that does
 * not fit (nnop_graph_error); the graph's status stays the first error's and compile fails
 * with it. The id
 * is opaque: it carries its graph's tag, so a value given to another graph's builder,
 * nnop_output or nnop_value_desc is refused with NNOP_ERR_INVALID_ARGUMENT ("is a value of
 * another graph"), never read as that graph's own. Tags repeat after 126 graphs of one
 * context (and two contexts' graphs may share one): the check catches every value of a
 * graph made fewer than 126 graphs apart on the same context. */
typedef struct nnop_value {
    int32_t id;
} nnop_value;

typedef enum nnop_act_kind {
    NNOP_ACT_IDENTITY = 0,
    NNOP_ACT_RELU = 1,
    NNOP_ACT_RELU6 = 2,      /* min(max(x, 0), 6)                       */
    NNOP_ACT_CLAMP = 3,      /* min(max(x, lo), hi): use nnop_clamp     */
    NNOP_ACT_LEAKY_RELU = 4, /* x > 0 ? x : alpha * x                   */
    NNOP_ACT_GELU = 5,       /* x * Phi(x), erf form                    */
    NNOP_ACT_GELU_TANH = 6,  /* tanh approximation                      */
    NNOP_ACT_SIGMOID = 7,
    NNOP_ACT_TANH = 8,
    NNOP_ACT_SILU = 9,         /* x * sigmoid(x), also called swish       */
    NNOP_ACT_ELU = 10,         /* x > 0 ? x : alpha * expm1(x)            */
    NNOP_ACT_HARDSWISH = 11,   /* x * min(max(x + 3, 0), 6) / 6           */
    NNOP_ACT_HARDSIGMOID = 12, /* min(max(x + 3, 0), 6) / 6               */
    NNOP_ACT_MISH = 13         /* x * tanh(log(1 + exp(x)))               */
} nnop_act_kind;

typedef enum nnop_pool_kind { NNOP_POOL_MAX = 0, NNOP_POOL_AVG = 1 } nnop_pool_kind;

typedef struct nnop_pool_params {
    int64_t window[2], stride[2], pad[2];
    int count_include_pad; /* average pooling: divide by the full window (PyTorch default) */
    int64_t pad_end[2];    /* more padding after (bottom, right), 0 to window - 1: ONNX's pads
                            * [b, b, b + e, b + e], Caffe's and PyTorch's ceil_mode outputs */
} nnop_pool_params;
/** Fill p with window 1, stride 1, pad 0, pad_end 0 and count_include_pad 1 (PyTorch's default);
 * set the window (and the stride, which PyTorch defaults to the window) after it. */
NNOP_API void nnop_pool_params_init(nnop_pool_params *p);

/* Normalization axes of nnop_layer_norm. */
typedef enum nnop_norm_axes {
    NNOP_NORM_C = 0,  /* over C at each (n, h, w): ConvNeXt's channels-last LayerNorm */
    NNOP_NORM_CHW = 1 /* over C, H, W at each n: nn.LayerNorm([C, H, W])            */
} nnop_norm_axes;

typedef enum nnop_resize_mode {
    NNOP_RESIZE_NEAREST = 0, /* PyTorch mode="nearest" (not "nearest-exact") */
    NNOP_RESIZE_BILINEAR = 1
} nnop_resize_mode;

/* nnop_resize: give the output size, or scale factors (size 0, 0), not both. */
typedef struct nnop_resize_params {
    nnop_resize_mode mode;
    int align_corners; /* bilinear only (nonzero: corner pixels aligned); 0 for nearest */
    int64_t size[2];   /* output H, W; 0, 0 = from scale                                */
    double scale[2];   /* H, W scale factors (> 0) when size is 0, 0                     */
} nnop_resize_params;
/** Fill p with nearest mode, align_corners 0, size 0, 0 and scale 1, 1 (an identity resize);
 * set the size or the scale after it. */
NNOP_API void nnop_resize_params_init(nnop_resize_params *p);

/* nnop_conv_transpose (PyTorch ConvTranspose2d): output_pad[i] < max(stride[i], dilation[i]). */
typedef struct nnop_conv_transpose_params {
    int64_t pad[2], stride[2], dilation[2], groups;
    int64_t output_pad[2];
} nnop_conv_transpose_params;
/** Fill p with pad 0, stride 1, dilation 1, groups 1 and output_pad 0. */
NNOP_API void nnop_conv_transpose_params_init(nnop_conv_transpose_params *p);

/** Most inputs of one nnop_concat. */
#define NNOP_MAX_CONCAT_INPUTS 32

/** Create an empty graph on ctx. */
NNOP_API nnop_status nnop_graph_create(nnop_context *ctx, nnop_graph **out);
NNOP_API void nnop_graph_destroy(nnop_graph *g);
/** First error recorded by a builder (NNOP_OK if none); the message is in the context. */
NNOP_API nnop_status nnop_graph_status(const nnop_graph *g);
/** Every builder error of g in the order they happened, each failing call once (a builder fed
 * a failed builder's value records nothing): how many, and message i (as the context had it;
 * NULL out of range). The first 64 messages are kept, all are counted; they live as long as
 * g. 0 and NULL for a NULL g. */
NNOP_API int nnop_graph_num_errors(const nnop_graph *g);
NNOP_API const char *nnop_graph_error(const nnop_graph *g, int i);
/** Declare g's layout, for graphs whose 4-D inputs and constants cannot say it themselves
 * (N x 1 x 1 x 1 has the same strides in both layouts): results whose strides would fit
 * either layout take l, those built already included. Needed only there; call it before or
 * after the builders. NNOP_ERR_INVALID_ARGUMENT (the graph unchanged, no sticky error) for a
 * NULL g, an l other than NNOP_NCHW and NNOP_NHWC, or an l unlike the layout an input or
 * constant of g already states. */
NNOP_API nnop_status nnop_graph_set_layout(nnop_graph *g, nnop_layout l);

/** Name the node the next builder call creates (nnop_conv to nnop_conv_transpose; not
 * nnop_input, nnop_constant or nnop_output, which take names of their own), for importers
 * that map nnop's messages back to their own nodes: that call's errors say "nnop_conv
 * 'conv1' (node #4): ...", later messages that name the node say "node #4 (conv 'conv1')",
 * nnop_plan_describe lists it as "conv[conv1]", and as an output named NULL it is bound by
 * that name (instead of "conv#4"). The name is copied (47 bytes kept) and used by the next
 * builder call only, whether it succeeds or not; NULL or "" names none. The builder
 * signatures stay as they are. NNOP_ERR_INVALID_ARGUMENT for a NULL or orphaned g. */
NNOP_API nnop_status nnop_graph_name_next(nnop_graph *g, const char *name);
/** A graph input, bound at execute time, in declaration order. name may be NULL; names given
 * to nnop_input, nnop_constant and nnop_output are copied. */
NNOP_API nnop_value nnop_input(nnop_graph *g, const char *name, const nnop_tensor_desc *d);
/** A constant (weights): d describes host data of d->dtype, copied now. Every operand of a
 * node has the same dtype: constants are given in the graph's dtype (float32 batch-norm
 * parameters of an f16 graph go through nnop_convert first; nnop_tensor_copy also changes a
 * weight's layout). */
NNOP_API nnop_value nnop_constant(nnop_graph *g, const char *name, const nnop_tensor_desc *d,
                                  const void *host_data);
/** 2-D convolution (cross-correlation, as PyTorch's conv2d); x is 4-D N,C,H,W, w is
 * K,C/groups,R,S packed in x's layout (NNOP_ERR_SHAPE otherwise, on both backends). Output
 * H = floor((H + 2 pad[0] - dilation[0] (R - 1) - 1) / stride[0]) + 1, W likewise with [1];
 * kernels larger than the input are fine while the padded input covers them. On the CUDA
 * backend depthwise convs (groups = C = K) run on nnop's own kernel, which applies the bias,
 * batch-norm, activations and the mul/sub/div by N,C,1,1 or 1,C,1,1 operands that follow
 * before its one store (nnop_plan_describe: "epilogue fused: ..."); a residual add after them
 * runs as a second step. Two 1x1 convs with constant weights on N,C,1,1 values, the second the
 * first's only reader, each with bias, batch-norm or activations after it (a squeeze-excitation
 * gate), run on nnop's own gate kernel, with the global average pool in front of them when x
 * is channels-last; the hidden values are rounded to the dtype as the unfused plan stores
 * them ("squeeze-excitation gate" in nnop_plan_describe). */
NNOP_API nnop_value nnop_conv(nnop_graph *g, nnop_value x, nnop_value w, const nnop_conv_params *p);
/** x + b with b 1-D of x's channel count (dim 1), broadcast over the other dims. */
NNOP_API nnop_value nnop_bias(nnop_graph *g, nnop_value x, nnop_value b);
/** Activation. alpha is the slope of LEAKY_RELU and the alpha of ELU, ignored otherwise. For
 * f16 and bf16 outputs, nnop's own GPU kernels take faster forms whose error is far below the
 * rounding: SIGMOID and SILU a fast exponential and division (relative error a few 1e-6), GELU
 * erfc's Abramowitz-Stegun 7.1.26 form (absolute error at most 2.1e-7); f32 outputs and the
 * CPU backend compute the exact functions, and epilogues fused into cuDNN's kernels its own. */
NNOP_API nnop_value nnop_act(nnop_graph *g, nnop_value x, nnop_act_kind kind, float alpha);
/** min(max(x, lo), hi); needs lo <= hi (NNOP_ERR_INVALID_ARGUMENT otherwise). */
NNOP_API nnop_value nnop_clamp(nnop_graph *g, nnop_value x, float lo, float hi);
/** Inference batch-norm over dim 1: (x - mean) / sqrt(var + eps) * gamma + beta; all four
 * parameters 1-D of the channel count. */
NNOP_API nnop_value nnop_batchnorm(nnop_graph *g, nnop_value x, nnop_value gamma, nnop_value beta,
                                   nnop_value mean, nnop_value var, float eps);
/** Elementwise a + b of the same shape and layout (residual add). */
NNOP_API nnop_value nnop_add(nnop_graph *g, nnop_value a, nnop_value b);
/** Max or average pooling over H, W, padded pad before and pad + pad_end after. Output size
 * rounds down: floor((H + 2 pad[0] + pad_end[0] - window[0]) / stride[0]) + 1 (PyTorch's
 * ceil_mode=True is the pad_end that adds its partial window). Padding never wins a max; NaN
 * does. count_include_pad (a flag: any nonzero value is true) divides by the window clipped to
 * the padded input. As in PyTorch, pad is at most window / 2; pad_end is 0 to window - 1, and the
 * last window must start inside the input (NNOP_ERR_INVALID_ARGUMENT otherwise). Window, stride
 * and pad, like the conv and transposed-conv parameters, are at most 2^31 - 1. On the GPU a pool
 * with pad_end runs on the general strided kernel. */
NNOP_API nnop_value nnop_pool(nnop_graph *g, nnop_value x, nnop_pool_kind kind,
                              const nnop_pool_params *p);
/** Mean over H and W: N,C,H,W -> N,C,1,1 in x's layout. */
NNOP_API nnop_value nnop_global_avg_pool(nnop_graph *g, nnop_value x);
/** N,C,H,W -> N, C*H*W in logical (C, H, W) order, as torch.flatten(x, 1) (so a 2-D value
 * stays as it is). */
NNOP_API nnop_value nnop_flatten(nnop_graph *g, nnop_value x);
/** "No value", for optional operands (nnop_linear without bias). */
NNOP_API nnop_value nnop_none(void);
/** y = x w^T + b: x is N x IN, w is OUT x IN, b 1-D OUT or nnop_none(). On the GPU: cuBLASLt
 * with its epilogues; at N <= 8 (IN <= 12288, y of x's dtype) an own matrix-vector kernel with
 * float accumulation. */
NNOP_API nnop_value nnop_linear(nnop_graph *g, nnop_value x, nnop_value w, nnop_value b);
/** Softmax over dim 1 (classes of N x C, channels of 4-D), max subtracted first. A NaN in a
 * slice makes the whole slice NaN; -inf entries give 0, and a slice of only -inf gives NaN.
 * Float accumulation in every dtype; on the GPU, f16/bf16 outputs take a fast exponential
 * (relative error a few 1e-6, far below their rounding), f32 outputs the exact one. */
NNOP_API nnop_value nnop_softmax(nnop_graph *g, nnop_value x);
/* The ops from nnop_mul to nnop_conv_transpose, and the activations hard-swish, hard-sigmoid
 * and mish, run on both backends. On the CUDA backend: a multiply by (or subtract of) a
 * constant 1,C,1,1 after a conv folds into its weights and bias like batch-norm; the other
 * multiplies, subtracts and divides and the three activations run in nnop's own epilogue
 * kernel (split off a cuDNN conv, whose fused engines have no such pointwise mode: the plan
 * says so); the norms, concat (a copy per input) and resize on own kernels; a transposed conv
 * as cuDNN's data-gradient convolution when its output padding is below the stride, else on
 * an own kernel (its epilogue split off either way). Norms accumulate in float, the sums taken
 * relative to each box's first element (a box of equal values gives exactly beta where eps > 0;
 * with eps = 0 it is 0/0, NaN, as in PyTorch). */
/** Elementwise a * b. b has a's shape (and layout), or a is 4-D N,C,H,W and b is N,C,1,1
 * (per-sample, per-channel: squeeze-excitation) or 1,C,1,1 (per-channel: layer scale),
 * broadcast over a. The broadcast operand goes second (swap them: the product commutes). */
NNOP_API nnop_value nnop_mul(nnop_graph *g, nnop_value a, nnop_value b);
/** Elementwise a - b, with the shapes of nnop_mul (b may broadcast over a). */
NNOP_API nnop_value nnop_sub(nnop_graph *g, nnop_value a, nnop_value b);
/** Elementwise a / b (IEEE: x / 0 is +-inf, 0 / 0 NaN), with the shapes of nnop_mul. */
NNOP_API nnop_value nnop_div(nnop_graph *g, nnop_value a, nnop_value b);
/** Layer norm, inference: y = (x - mean) / sqrt(var + eps) * gamma + beta, mean and biased
 * variance over C at each (n, h, w) (NNOP_NORM_C) or over C, H, W at each n (NNOP_NORM_CHW).
 * x is 2-D to 4-D, N, C[, H[, W]]. gamma and beta are optional (nnop_none(): 1 and 0): 1-D of
 * C elements (per channel), or, with NNOP_NORM_CHW, x's shape with dim 0 = 1 (1,C,H,W for
 * 4-D x: per element, as nn.LayerNorm([C, H, W])). eps finite >= 0. On the GPU a 4-D layer norm
 * (and RMS norm) with constant parameters is offered to cuDNN's norm-forward with precompiled
 * engines only (runtime-compiled ones too with options.norm_rtc or NNOP_NORM_RTC=1); otherwise
 * nnop's own kernel runs, and nnop_plan_describe gives
 * cuDNN's refusal as the reason. Every norm takes the pointwise chain after it (bias, batch-norm,
 * activations, add, mul/sub/div, while each value has one reader) into its partition: cuDNN's
 * norm-forward is offered the norm and the chain as one graph, and the own kernel applies the
 * chain to each value before its one store
 * (nnop_plan_describe: "then ..., in the same pass"). */
NNOP_API nnop_value nnop_layer_norm(nnop_graph *g, nnop_value x, nnop_value gamma, nnop_value beta,
                                    nnop_norm_axes axes, float eps);
/** Group norm, inference (nn.GroupNorm): C split into groups of C/groups consecutive channels,
 * mean and biased variance over each group's channels and H, W at each n, then per-channel
 * gamma and beta (1-D of C elements, each optional: nnop_none()). groups = C is instance norm
 * (nn.InstanceNorm2d, affine or not), groups = 1 a layer norm over C, H, W with per-channel
 * affine. x is 2-D to 4-D, N, C[, H[, W]]; groups >= 1 divides C. */
NNOP_API nnop_value nnop_group_norm(nnop_graph *g, nnop_value x, int64_t groups, nnop_value gamma,
                                    nnop_value beta, float eps);
/** RMS norm over C at each (n, h, w) (nn.RMSNorm(C) on channels-last data):
 * y = x / sqrt(mean(x^2) + eps) * gamma, gamma 1-D of C elements or nnop_none(). x is 2-D to
 * 4-D; eps finite >= 0 (PyTorch's default eps=None is the dtype's epsilon: pass it). */
NNOP_API nnop_value nnop_rms_norm(nnop_graph *g, nnop_value x, nnop_value gamma, float eps);
/** Concatenation along dim 1 (channels), torch.cat(xs, 1): n = 2 to NNOP_MAX_CONCAT_INPUTS
 * values of one dtype and rank (2 to 4), equal in every dim but 1, and in one layout. An
 * N,1,H,W input is the same memory in both layouts and fits either; the output takes the
 * layout of the first input whose strides name one (an N,1,H,W input's strides name the
 * layout it was described in), so put a C > 1 input first to choose by it. */
NNOP_API nnop_value nnop_concat(nnop_graph *g, const nnop_value *xs, int n);
/** Resize of 4-D x over H, W (F.interpolate on N,C,H,W). With size: the output is
 * N,C,size[0],size[1] and source coordinates scale by in/out. With scale: the output is
 * floor(in * scale) and coordinates scale by 1/scale, as PyTorch does when scale_factor is
 * given (recompute_scale_factor unset). Nearest: src = min(floor(dst * s), in - 1), s in
 * float as PyTorch computes it (dst when out = in, dst / 2 when out = 2 in). Bilinear with
 * align_corners 0: src = max((dst + 0.5) * s - 0.5, 0); with align_corners 1:
 * src = dst * (in - 1) / (out - 1) (0 when out = 1), scale ignored; then the two nearest
 * rows and columns weighted linearly (edge clamped). Bilinear along an axis whose size does
 * not change is a copy, whatever the scale, as in PyTorch's CPU kernel: its second tap is the
 * pixel itself with weight 0, so a NaN stays in its pixel and an inf there gives NaN. */
NNOP_API nnop_value nnop_resize(nnop_graph *g, nnop_value x, const nnop_resize_params *p);
/** Local response normalization across channels (ONNX LRN, AlexNet's and GoogLeNet's):
 * y[c] = x[c] / (bias + alpha / size * sum of x[c']^2)^beta over the channels c' from
 * c - floor((size - 1) / 2) to c + ceil((size - 1) / 2) that exist (ONNX's window; PyTorch's
 * nn.LocalResponseNorm takes the same for odd size, and for even size one channel more
 * before c and one less after). x is 2-D to 4-D, N, C[, H[, W]]; size >= 1; alpha, beta and
 * bias finite (ONNX's defaults: 1e-4, 0.75, 1). The sum and the power in double on the CPU,
 * in float on the GPU (an own kernel). */
NNOP_API nnop_value nnop_lrn(nnop_graph *g, nnop_value x, int64_t size, float alpha, float beta,
                             float bias);
/** Channel shuffle (nn.ChannelShuffle, ShuffleNet): 4-D x's C channels read as groups rows of
 * C / groups, transposed: y[:, j * groups + i] = x[:, i * (C / groups) + j]. groups >= 1
 * divides C; the output keeps x's layout. On the GPU: one strided copy a group. */
NNOP_API nnop_value nnop_channel_shuffle(nnop_graph *g, nnop_value x, int64_t groups);
/** Channels start .. start + count - 1 of 4-D x (x[:, start:start + count], torch.chunk and
 * split along dim 1): 0 <= start, 1 <= count, start + count <= C; a packed output in x's
 * layout. On the GPU: one strided copy. */
NNOP_API nnop_value nnop_channel_slice(nnop_graph *g, nnop_value x, int64_t start, int64_t count);
/** Transposed 2-D convolution (PyTorch ConvTranspose2d, the gradient of nnop_conv with
 * respect to its input): x is N,C,H,W, w is C,K/groups,R,S in x's layout (dim 0 the input
 * channels, dim 1 the output channels of a group, PyTorch's weight shape), y is N,K,OH,OW
 * with OH = (H - 1) * stride - 2 * pad + dilation * (R - 1) + output_pad + 1 (OW alike):
 * y[n, k, ih * stride - pad + r * dilation, ...] += x[n, c, ih, ...] * w[c, k % (K/groups),
 * r, ...] for c in k's group. Add a bias with nnop_bias. */
NNOP_API nnop_value nnop_conv_transpose(nnop_graph *g, nnop_value x, nnop_value w,
                                        const nnop_conv_transpose_params *p);
/** Mark v as a graph output, in declaration order. name may be NULL. A value is an output at
 * most once (NNOP_ERR_INVALID_ARGUMENT, which also sticks in the graph, as a builder's error
 * does); an input or constant may be one: execute copies it into the output buffer, on both
 * backends. */
NNOP_API nnop_status nnop_output(nnop_graph *g, nnop_value v, const char *name);
/** Descriptor of a value (e.g. to size buffers); NNOP_ERR_INVALID_ARGUMENT for a bad id. */
NNOP_API nnop_status nnop_value_desc(const nnop_graph *g, nnop_value v, nnop_tensor_desc *out);

/* ---------------------------------------------------------------- compile and execute */
/** The arithmetic of a plan's convs and linear layers (nnop_compile_options.precision). */
typedef enum nnop_precision {
    NNOP_PRECISION_FLOAT = 0, /* the graph's dtype (default)                               */
    NNOP_PRECISION_INT8 = 1,  /* NNOP_I8 activations (per tensor) and weights (per channel) */
    NNOP_PRECISION_FP8 = 2    /* NNOP_F8E4M3, scaled the same way                          */
} nnop_precision;

struct nnop_calib_table;

typedef struct nnop_compile_options {
    int fuse;             /* nonzero (default): fuse epilogues into producers   */
    int cuda_graph;       /* nonzero: replay the whole plan as one CUDA graph    */
    int side_stream;      /* nonzero, with cuda_graph: experimental, see below   */
    int batch_range;      /* nonzero: runs take any batch up to the built one (nnop_exec_run) */
    int precision;        /* nnop_precision; quantized plans: see below          */
    int quantize_ends;    /* nonzero: the first and last conv/linear are quantized too */
    int32_t n_keep_float; /* names in keep_float                                 */
    const struct nnop_calib_table *calib; /* the activations' ranges (nnop_calibrate) */
    const char *const *keep_float;        /* nodes that stay in the graph's dtype      */
    uint64_t reserved[4];                 /* zero (else compile refuses)                        */
} nnop_compile_options;
/* Quantized plans (precision INT8 or FP8; issue 45): each conv and linear layer reads its
 * activation input quantized per tensor, scale = amax / 127 (INT8) or amax / 448 (FP8 E4M3)
 * with amax the calibration table's entry for that input, and its weights quantized per output
 * channel (scale = the channel's largest |w| over the same maximum; any scale below the
 * smallest normal float, as amax 0 or a denormal amax gives, is raised to FLT_MIN), rounded to
 * nearest even and saturated as nnop_quantize does; it computes on those values in float32,
 * then its bias, activation and the rest of the graph in the graph's dtype. The first and the last
 * conv or linear layer in node order stay in the graph's dtype unless quantize_ends is set (the
 * input layer and the classifier are where 8 bits cost the most accuracy), as does every node named
 * in keep_float (the name of its result: as nnop_output or else nnop_graph_name_next named it, else
 * nnop's "conv#4"; the names of nnop_calibrate's table); the options' pointers are read during the
 * compile only. nnop_plan_describe lists each layer's precision and scales. Compile refuses
 * (NNOP_ERR_INVALID_ARGUMENT, naming it) a precision without calib, calib or keep_float without a
 * precision, a keep_float name that is no node's, and a quantized layer whose input has no entry in
 * calib (a table made by nnop_calibrate of this graph has every one). This version runs quantized
 * plans on the CPU backend, as an exact emulation of those steps; the CUDA backend refuses them
 * with NNOP_ERR_UNSUPPORTED. */
/* cuda_graph: one graph is kept per set of input and output pointers, up to 4 sets (double
 * buffering replays without capturing again); a fifth set is captured over the oldest.
 * Experimental, with side_stream (NNOP_SIDE_STREAM in the environment overrides it where
 * set: 1 on, anything else off; read at compile): a step whose
 * output the next step does not read (ResNet's projection shortcut) runs on a second stream
 * of the context beside the steps that follow, joined back before its first reader
 * (nnop_plan_describe: "[side stream, ...]"); the plan's work still starts after and ends
 * before what the context's stream orders it with. Off by default (docs/performance.md:
 * ResNet-50 ran slower with it). */

NNOP_API void nnop_compile_options_init(nnop_compile_options *o);
/** Validate, partition, lower and build a plan for the context's backend. opts may be NULL.
 * The graph stays owned by the caller and may be destroyed after compile. */
NNOP_API nnop_status nnop_graph_compile(nnop_graph *g, const nnop_compile_options *opts,
                                        nnop_plan **out);
/** Run the plan: inputs[i] for the i-th declared input, outputs[i] for the i-th output, each
 * buffer holding nnop_tensor_bytes of nnop_plan_input_desc(p, i) (nnop_plan_output_desc for
 * outputs). nnop cannot see a pointer's size: a smaller buffer is read or written past its end.
 * No device memory is allocated here. On the CUDA backend this is asynchronous on the
 * context's stream. cuDNN binds data pointers through variant packs: the first execute with
 * a new set of input/output pointers builds them (host descriptors only; up to 8 pointer sets
 * are kept per step), later executes with a known set create nothing. Reuse your buffers. */
NNOP_API nnop_status nnop_plan_execute(nnop_plan *p, const void *const *inputs,
                                       void *const *outputs);
NNOP_API int nnop_plan_num_inputs(const nnop_plan *p);
NNOP_API int nnop_plan_num_outputs(const nnop_plan *p);
NNOP_API nnop_status nnop_plan_input_desc(const nnop_plan *p, int i, nnop_tensor_desc *out);
NNOP_API nnop_status nnop_plan_output_desc(const nnop_plan *p, int i, nnop_tensor_desc *out);
/** Bind by name: the index in nnop_plan_execute's inputs (outputs) of the first input (output)
 * given that name, or -1 when none has it (or p or name is NULL). A miss is an answer, not a
 * failure: nnop_context_last_error keeps what it held. Names are kept to their first 47 bytes
 * and compared so. An output named NULL carries its node's name (nnop_graph_name_next's,
 * else "act#3"; or the input's or constant's name), an input named NULL the empty name. */
NNOP_API int nnop_plan_input_index(const nnop_plan *p, const char *name);
NNOP_API int nnop_plan_output_index(const nnop_plan *p, const char *name);
/** The name input (output) i is bound by, as nnop_plan_input_index compares it; NULL for a
 * NULL p or an i out of range. The string belongs to the plan and lives as long as it. */
NNOP_API const char *nnop_plan_input_name(const nnop_plan *p, int i);
NNOP_API const char *nnop_plan_output_name(const nnop_plan *p, int i);
/** Number of partitions (fused kernels or standalone steps) of the plan. */
NNOP_API int nnop_plan_num_partitions(const nnop_plan *p);
/** Human-readable description: one line per partition with its nodes, engine, workspace and
 * why it was fused or split. Writes at most len bytes (NUL-terminated) and returns the length
 * the whole text needs (like snprintf; buf may be NULL with len 0; a NULL p gives 0 and,
 * with len > 0, an empty string). On the CPU backend the
 * partitions only show the graph's fusable groups: the reference runs node by node. */
NNOP_API size_t nnop_plan_describe(const nnop_plan *p, char *buf, size_t len);

/** One partition of a compiled plan, as nnop_plan_describe prints it, for programs: which of
 * the plan's nodes it runs and what runs it (nnop_plan_partition). */
typedef struct nnop_partition_info {
    int first_node; /* its nodes: first_node .. first_node + num_nodes - 1, numbered
                     * in build order as messages number them ("node #4")          */
    int num_nodes;
    const char *impl;      /* what runs it: the implementation entry's name as NNOP_LOG
                            * gives it ("cudnn graph", "own depthwise kernel", "cublasLt",
                            * ...), "reference" on the CPU backend; static              */
    const char *reason;    /* why the partition ends where it does; owned by the plan    */
    long long engine;      /* cuDNN's global engine index, -1 where no cuDNN engine runs  */
    int runtime_compiled;  /* that engine is compiled at run time                       */
    int from_cache;        /* its engine or plan came from the plan cache                */
    size_t workspace;      /* bytes of workspace it uses                                 */
    long long bytes_moved; /* the least it reads and writes (NNOP_LOG's bytes)           */
    uint64_t reserved[4];  /* written as zero                                            */
} nnop_partition_info;

/** Fill *out for partition i (0 .. nnop_plan_num_partitions - 1; all fields written).
 * NNOP_ERR_INVALID_ARGUMENT for a NULL p or out, an i out of range, or a plan whose context is
 * gone. The strings live as long as the plan. */
NNOP_API nnop_status nnop_plan_partition(const nnop_plan *p, int i, nnop_partition_info *out);
/** The plan's nodes, numbered as nnop_partition_info and messages number them: how many,
 * each one's operator ("conv", "act", ...) and its name (nnop_graph_name_next's, "" when it
 * has none). NULL (0 for the count) for a NULL p or a node out of range; the strings live as
 * long as the plan. */
NNOP_API int nnop_plan_num_nodes(const nnop_plan *p);
NNOP_API const char *nnop_plan_node_op(const nnop_plan *p, int node);
NNOP_API const char *nnop_plan_node_name(const nnop_plan *p, int node);

/** What a compiled plan holds, in bytes, for the life of the plan (nnop_plan_memory). Each
 * field counts what the plan allocated itself; the caller's input and output buffers are
 * never counted. */
typedef struct nnop_plan_memory_info {
    size_t weights;       /* constants: weights as uploaded or folded (CUDA: the constant
                           * blocks; CPU: f16 and bf16 constants in their dtype, the others
                           * as float32)                                                    */
    size_t intermediates; /* values between steps, buffers shared by liveness (CUDA: the
                           * arena; CPU: float32 buffers for inputs, outputs and results)   */
    size_t workspace;     /* scratch (CUDA: the engines', main and side stream; CPU: float32
                           * copies of the 16-bit constants that one node reads)            */
    size_t other;         /* other device blocks the plan owns (scratch copies such as a
                           * padded input; CUDA only)                                       */
    size_t device_total;  /* all device memory the plan allocated (0 on the CPU backend)    */
    size_t host_total;    /* host memory for tensor data (the CPU backend's buffers; the
                           * CUDA backend's host descriptors are not counted)               */
    uint64_t reserved[4]; /* written as zero                                                */
} nnop_plan_memory_info;

/** Fill *out with what p holds (all fields written). NNOP_ERR_INVALID_ARGUMENT for a NULL p
 * or out, or a plan whose context is gone (it holds nothing then). */
NNOP_API nnop_status nnop_plan_memory(const nnop_plan *p, nnop_plan_memory_info *out);
/** What nnop_graph_compile(g, opts) will hold, before compiling (all fields of *out written):
 * on the CPU backend exactly what nnop_plan_memory then reports, computed by the same buffer
 * plan without allocating tensor memory. NNOP_ERR_UNSUPPORTED on the CUDA backend, where the
 * compile chooses the engines and their workspaces (compile, then nnop_plan_memory; the
 * context's allocator sees each block as it is asked for). A graph that would not compile
 * fails with the compile's status and message; NNOP_ERR_INVALID_ARGUMENT for a NULL g or out,
 * or opts->reserved not zero. */
NNOP_API nnop_status nnop_graph_memory(nnop_graph *g, const nnop_compile_options *opts,
                                       nnop_plan_memory_info *out);
NNOP_API void nnop_plan_destroy(nnop_plan *p);

/* ---------------------------------------------------------------- execution contexts */
/** An execution context: one run at a time of a compiled plan, with intermediate buffers of
 * its own, sharing the plan's weights (the engine / execution context split of TensorRT).
 * Many execution contexts of one plan may run at once, each from one thread at a time; they
 * only read the plan. Creating one allocates its buffers (through the context's allocator;
 * nnop_exec_memory counts them) and compiles nothing; a run allocates no tensor memory. The
 * plan's own nnop_plan_execute runs on the plan's buffers, as one more execution context.
 * While any of them runs, no other call may use the plan or its context (compile, execute,
 * destroy). Creating and destroying execution contexts are such calls too (they change the
 * plan's list of them and its context's last error): one thread at a time, none while a run
 * is active; make every context a server needs before its threads start running them.
 * Destroy them before their plan: one whose plan or context was destroyed has no buffers
 * left, and nnop_exec_run fails with NNOP_ERR_INVALID_ARGUMENT. Errors of a run are the
 * execution context's own (nnop_exec_last_error), so threads share no message.
 * CUDA backend: each execution context has a stream of its own (created non-blocking: it
 * orders with no other stream, the legacy default one included), a cuDNN handle and a
 * cuBLASLt handle; nnop_exec_run queues the run there and returns (asynchronous, as
 * nnop_plan_execute); nnop_exec_synchronize waits for it, nnop_exec_set_stream moves it to a
 * stream of yours. Its first run with a set of pointers builds cuDNN's variant packs (host
 * descriptors), as nnop_plan_execute does; with the compile option cuda_graph it keeps its
 * own captured graphs. Steps the side_stream option put on the side stream run on the
 * context's one stream. nnop_exec_create_in's scratch is device memory there.
 * Batch range: a plan compiled with nnop_compile_options.batch_range takes at each run a batch
 * from 1 to the one its graph was built with (dim 0 of input 0); every value computed from
 * the inputs must keep that batch as its dim 0 (compile fails with NNOP_ERR_SHAPE naming the
 * first that does not; constants are free), and the run's buffers hold that many samples.
 * On the CUDA backend the compile chooses engines for batch buckets, the powers of two below
 * the built batch and the built batch itself (so it takes about as long as that many
 * compiles; the plan cache keeps them all), holding the weights once; a bucket whose steps
 * would split the graph otherwise than the built batch's is left out (nnop_plan_describe
 * lists the buckets). A run of batch n takes the smallest bucket of at least n: where that
 * is n it runs on your buffers, else through the execution context's staging buffers (n
 * samples copied in and out on its stream; the bucket's other samples read zeros or an
 * earlier run's inputs, which no sample of yours depends on). nnop_plan_execute runs the
 * built batch. */
typedef struct nnop_exec nnop_exec;
NNOP_API nnop_status nnop_exec_create(nnop_plan *p, nnop_exec **out);
/** The same on memory the caller owns: the execution context's buffers are carved from
 * scratch (host memory on the CPU backend, device memory on the CUDA backend; any alignment),
 * at least nnop_exec_scratch_bytes(p) long, which must outlive it and is never freed by nnop
 * (NNOP_ERR_INVALID_ARGUMENT, naming both sizes, for less). nnop_exec_scratch_bytes is 0 for
 * a NULL or orphaned plan. */
NNOP_API size_t nnop_exec_scratch_bytes(const nnop_plan *p);
NNOP_API nnop_status nnop_exec_create_in(nnop_plan *p, void *scratch, size_t bytes,
                                         nnop_exec **out);
/** Run e at batch (0: the shapes the graph was built with; 1 to the built batch for a
 * batch_range plan), inputs and outputs as for nnop_plan_execute with dim 0 = batch. */
NNOP_API nnop_status nnop_exec_run(nnop_exec *e, int64_t batch, const void *const *inputs,
                                   void *const *outputs);
/** Run e's next runs on stream (a cudaStream_t of e's device; NULL: e's own). On the CPU
 * backend only NULL is taken (NNOP_ERR_INVALID_ARGUMENT otherwise). */
NNOP_API nnop_status nnop_exec_set_stream(nnop_exec *e, void *stream);
/** Wait for what e queued on its stream (NNOP_OK at once on the CPU backend). */
NNOP_API nnop_status nnop_exec_synchronize(nnop_exec *e);
/** What e holds itself (its intermediates; the weights are the plan's). */
NNOP_API nnop_status nnop_exec_memory(const nnop_exec *e, nnop_plan_memory_info *out);
/** The message of e's last failed run, "" after a successful one (never NULL). */
NNOP_API const char *nnop_exec_last_error(const nnop_exec *e);
NNOP_API void nnop_exec_destroy(nnop_exec *e);

/* ---------------------------------------------------------------- calibration */
/* The ranges an 8-bit plan quantizes with (issue 45): nnop_calibrate runs sample batches
 * through a float graph and records, for the graph's inputs and every node's result, an amax:
 * the magnitude the tensor is clipped to. A symmetric scale follows from it as amax / 127 for
 * NNOP_I8 and amax / 448 for NNOP_F8E4M3 (nnop_quantize's scales). This version calibrates
 * on the CPU reference backend whatever backend the graph's context runs on (the same values
 * a GPU plan computes, within the dtype's tolerance); nnop_compile_options.calib takes the
 * table (quantized plans: the CPU backend in this version). */
typedef enum nnop_calib_method {
    NNOP_CALIB_MAX = 0,        /* the largest |x| seen in any batch                        */
    NNOP_CALIB_PERCENTILE = 1, /* the |x| that `percentile` percent of the values stay under */
    NNOP_CALIB_ENTROPY = 2     /* the clip whose 128-level quantization least diverges from
                                * the histogram of the nonzero |x| (KL divergence, as
                                * TensorRT's entropy calibrator; zeros, exact at any scale,
                                * left out): outliers clipped where they are rare           */
} nnop_calib_method;

/** Options of nnop_calibrate; nnop_calib_options_init sets the defaults. */
typedef struct nnop_calib_options {
    nnop_calib_method method; /* NNOP_CALIB_PERCENTILE by default (see below)          */
    double percentile;        /* NNOP_CALIB_PERCENTILE: in (0, 100]; 99.99 by default   */
    int32_t bins;             /* histogram bins over [0, max |x|], 128 to 16384; 2048    */
    uint64_t reserved[7];     /* zero (else refused)                                     */
} nnop_calib_options;
/* The default is the percentile: on the bundled MNIST networks (examples/quantize_mnist.c)
 * int8 and fp8 plans calibrated by it or by the maximum lose no accuracy against float32,
 * while the entropy method clips the ResNet's first features at a fifth of their range and
 * loses 17.6 points (docs/quantization.md). */
NNOP_API void nnop_calib_options_init(nnop_calib_options *o);

/** A calibration table: one (name, amax) entry per tensor, in the graph's order (inputs, then
 * node results). Names are the values' names: an input's or a node's as given (nnop_input,
 * nnop_output, else nnop_graph_name_next; the ONNX importer gives each ONNX node's name to its
 * first nnop node),
 * else nnop's ("conv#4", "input#0"); a name an earlier entry has gets "@<value id>" appended
 * (then "@<value id>.2", ".3", ... while an earlier entry has that too), so names are unique. It
 * belongs to no context and is read-only once made: threads may share it. */
typedef struct nnop_calib_table nnop_calib_table;
/** Run the n_batches sample batches through g and make *out. batches[b] is the inputs array of
 * one run, as nnop_plan_execute takes it (the graph's shapes and dtypes). Histogram methods
 * read the batches twice (first the maximum, then the histogram over [0, max]). Every value
 * seen must be finite: NNOP_ERR_INVALID_ARGUMENT naming the tensor and the batch otherwise,
 * as for NULL pointers, n_batches < 1, a NULL batch or input, and options out of range or
 * reserved not zero. A tensor that is zero in every batch gets
 * amax 0 (no scale can be made from it: the caller picks one). Compile errors of g are
 * returned as nnop_graph_compile's. */
NNOP_API nnop_status nnop_calibrate(nnop_graph *g, const nnop_calib_options *opts,
                                    const void *const *const *batches, int32_t n_batches,
                                    nnop_calib_table **out);
/** Entries of t (0 for NULL). */
NNOP_API int32_t nnop_calib_table_count(const nnop_calib_table *t);
/** Entry i of t: its name (owned by t) and amax. NNOP_ERR_INVALID_ARGUMENT, nothing written,
 * for a NULL t or i out of range (name and amax may each be NULL). */
NNOP_API nnop_status nnop_calib_table_entry(const nnop_calib_table *t, int32_t i, const char **name,
                                            float *amax);
/** The amax of the tensor named name: NNOP_ERR_INVALID_ARGUMENT for NULL arguments or a name
 * t has no entry for (*amax untouched). */
NNOP_API nnop_status nnop_calib_table_find(const nnop_calib_table *t, const char *name,
                                           float *amax);
/** Write t to path as text (a header line with the method, then "amax name" a line, amax with
 * nine significant digits, which reads back to the same float; numbers as in the C locale,
 * whatever LC_NUMERIC the program set), replacing the file at once
 * (written beside it, then renamed): NNOP_ERR_IO naming the path when it cannot be written.
 * Messages go to ctx, which may be NULL. */
NNOP_API nnop_status nnop_calib_table_save(nnop_context *ctx, const nnop_calib_table *t,
                                           const char *path);
/** Read a table written by nnop_calib_table_save: NNOP_ERR_IO when path cannot be read,
 * NNOP_ERR_FORMAT naming the line for anything malformed (a header of another format or
 * version, an amax that is not finite and >= 0, an empty, overlong or repeated name). */
NNOP_API nnop_status nnop_calib_table_load(nnop_context *ctx, const char *path,
                                           nnop_calib_table **out);
NNOP_API void nnop_calib_table_destroy(nnop_calib_table *t);

/** One cuDNN engine offered for one partition of a compiled plan (nnop_plan_engines). */
typedef struct nnop_engine_info {
    int partition;        /* the partition's index, as nnop_plan_describe numbers them    */
    int rank;             /* the engine's place in the order the selection tries them    */
    long long engine;     /* cuDNN's global engine index (nnop_plan_describe's "eng")     */
    int heuristic;        /* the first heuristic that offered it: 0 A, 1 B, 2 FALLBACK    */
    int runtime_compiled; /* compiled at run time (CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) */
    int nondeterministic; /* cuDNN's numerical notes                                      */
    int tensor_core;      /* tensor-core or down-converting numerics (TF32 for fp32)      */
    nnop_status status;   /* NNOP_OK: built and ran; else why not is in note              */
    double build_ms;      /* finalizing its execution plan, runtime compilation included  */
    double gpu_us;        /* mean GPU time of one execute (0 when it did not run)         */
    size_t workspace;     /* bytes                                                        */
    unsigned policies;    /* bit k (1u << k): nnop_engine_policy k would take it, with the
                           * context's other options (FASTEST always autotunes), judged by
                           * this survey's times; bit 3 (NNOP_ENGINE_CHOSEN): the plan's own */
    char note[120];       /* what no policy may take, or why it failed; "" when none       */
} nnop_engine_info;
#define NNOP_ENGINE_CHOSEN (1u << 3)

/** Every engine cuDNN's heuristics (modes A, B, FALLBACK) offer for each partition of p that
 * runs on cuDNN, each one with its first knob choices (autotuning also times other knob
 * choices of the fastest engine; the plan's own may be one of those), built (runtime compilation
 * included: this can take seconds an engine), run and timed on scratch memory, with which policy
 * would take it. Partitions that share an identical earlier one's execution plan, and partitions on
 * own kernels or cuBLASLt, have no rows; neither has a plan of the CPU backend (*count 0). Engines
 * that no policy may take for the shape (engine 0 of a fused conv; runtime-compiled engines in the
 * shape class where they wrote out of bounds) are listed with the rule in note, never built or run.
 * Writes at most cap rows into out (out may be NULL when cap is 0) and sets *count to the
 * number there are, like snprintf. For tools (nnop-bench --engines), never for the execute
 * path: it synchronizes the context's stream and allocates device memory. */
NNOP_API nnop_status nnop_plan_engines(nnop_plan *p, nnop_engine_info *out, int cap, int *count);

#ifdef __cplusplus
}
#endif

#include "nnop_cache.h"

#endif /* NNOP_NNOP_H */
