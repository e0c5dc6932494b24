/* libs.h: cuDNN and cuBLASLt, loaded at run time (libs.c) instead of linked, so that a CUDA
 * build of nnop starts, and falls back to the CPU backend with the reason, on a machine
 * without them. The calls of the backend keep their names: each cudnn* and cublasLt* function
 * nnop uses is a macro for the same call through the loaded library's table. Include this
 * instead of <cudnn.h> and <cublasLt.h>. */
#ifndef NNOP_CUDA_DEVICE_LIBS_H
#define NNOP_CUDA_DEVICE_LIBS_H

#include <stddef.h>

#include <cublasLt.h>
#include <cudnn.h>

typedef struct nnop__cudnn_api {
    size_t (*get_version)(void);
    const char *(*get_error_string)(cudnnStatus_t);
    void (*get_last_error_string)(char *, size_t);
    cudnnStatus_t (*create)(cudnnHandle_t *);
    cudnnStatus_t (*destroy)(cudnnHandle_t);
    cudnnStatus_t (*set_stream)(cudnnHandle_t, cudaStream_t);
    cudnnStatus_t (*get_stream)(cudnnHandle_t, cudaStream_t *);
    cudnnStatus_t (*create_descriptor)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *);
    cudnnStatus_t (*destroy_descriptor)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*finalize)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*set_attribute)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                                   cudnnBackendAttributeType_t, int64_t, const void *);
    cudnnStatus_t (*get_attribute)(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t,
                                   cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
    cudnnStatus_t (*execute)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t);
} nnop__cudnn_api;

typedef struct nnop__cublaslt_api {
    cublasStatus_t (*create)(cublasLtHandle_t *);
    cublasStatus_t (*destroy)(cublasLtHandle_t);
    const char *(*get_status_name)(cublasStatus_t);
    const char *(*get_status_string)(cublasStatus_t);
    cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
                             cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t,
                             const void *, const void *, cublasLtMatrixLayout_t, void *,
                             cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *, size_t,
                             cudaStream_t);
    cublasStatus_t (*algo_get_heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                         cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                         cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                         cublasLtMatmulPreference_t, int,
                                         cublasLtMatmulHeuristicResult_t[], int *);
    cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
    cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t);
    cublasStatus_t (*desc_set_attribute)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                         const void *, size_t);
    cublasStatus_t (*preference_create)(cublasLtMatmulPreference_t *);
    cublasStatus_t (*preference_destroy)(cublasLtMatmulPreference_t);
    cublasStatus_t (*preference_set_attribute)(cublasLtMatmulPreference_t,
                                               cublasLtMatmulPreferenceAttributes_t, const void *,
                                               size_t);
    cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t,
                                    int64_t);
    cublasStatus_t (*layout_destroy)(cublasLtMatrixLayout_t);
} nnop__cublaslt_api;

/* The tables, loaded on first use (once per process, thread-safe). Where a library could not
 * be loaded, every entry is a stand-in that fails (CUDNN_STATUS_NOT_INITIALIZED,
 * CUBLAS_STATUS_NOT_INITIALIZED; version 0), so no call ever goes through a null pointer. */
const nnop__cudnn_api *nnop__cudnn(void);
const nnop__cublaslt_api *nnop__cublaslt(void);
/* "" when the library loaded; else the file and the loader's own error, with the fix. */
const char *nnop__cudnn_load_error(void);
const char *nnop__cublaslt_load_error(void);
/* The file that was loaded ("" when none, or where the platform cannot tell). */
const char *nnop__cudnn_loaded_path(void);
/* Where cuDNN's precompiled engines library was looked for beside the loaded libcudnn and is
 * not ("" when it is there, or no cuDNN loaded): only runtime-compiled engines run then. */
const char *nnop__cudnn_precompiled_missing(void);

#ifndef NNOP_LIBS_NO_MACROS /* libs.c itself sees the libraries' own declarations */
#define cudnnGetVersion               (*nnop__cudnn()->get_version)
#define cudnnGetErrorString           (*nnop__cudnn()->get_error_string)
#define cudnnGetLastErrorString       (*nnop__cudnn()->get_last_error_string)
#define cudnnCreate                   (*nnop__cudnn()->create)
#define cudnnDestroy                  (*nnop__cudnn()->destroy)
#define cudnnSetStream                (*nnop__cudnn()->set_stream)
#define cudnnGetStream                (*nnop__cudnn()->get_stream)
#define cudnnBackendCreateDescriptor  (*nnop__cudnn()->create_descriptor)
#define cudnnBackendDestroyDescriptor (*nnop__cudnn()->destroy_descriptor)
#define cudnnBackendFinalize          (*nnop__cudnn()->finalize)
#define cudnnBackendSetAttribute      (*nnop__cudnn()->set_attribute)
#define cudnnBackendGetAttribute      (*nnop__cudnn()->get_attribute)
#define cudnnBackendExecute           (*nnop__cudnn()->execute)

#define cublasLtCreate                       (*nnop__cublaslt()->create)
#define cublasLtDestroy                      (*nnop__cublaslt()->destroy)
#define cublasLtGetStatusName                (*nnop__cublaslt()->get_status_name)
#define cublasLtGetStatusString              (*nnop__cublaslt()->get_status_string)
#define cublasLtMatmul                       (*nnop__cublaslt()->matmul)
#define cublasLtMatmulAlgoGetHeuristic       (*nnop__cublaslt()->algo_get_heuristic)
#define cublasLtMatmulDescCreate             (*nnop__cublaslt()->desc_create)
#define cublasLtMatmulDescDestroy            (*nnop__cublaslt()->desc_destroy)
#define cublasLtMatmulDescSetAttribute       (*nnop__cublaslt()->desc_set_attribute)
#define cublasLtMatmulPreferenceCreate       (*nnop__cublaslt()->preference_create)
#define cublasLtMatmulPreferenceDestroy      (*nnop__cublaslt()->preference_destroy)
#define cublasLtMatmulPreferenceSetAttribute (*nnop__cublaslt()->preference_set_attribute)
#define cublasLtMatrixLayoutCreate           (*nnop__cublaslt()->layout_create)
#define cublasLtMatrixLayoutDestroy          (*nnop__cublaslt()->layout_destroy)
#endif

#endif
