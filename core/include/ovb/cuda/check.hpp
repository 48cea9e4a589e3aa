// Check macros for CUDA runtime, cuBLAS(Lt) and NCCL calls: throw ovb::Error with file, line, the
// call's text and the library's own message (NCCL: also ncclGetLastError). The OVB_WARN_* twins
// print instead of throwing, for destructors. CUPTI: ovb/cuda/cupti_check.hpp.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "ovb/error.hpp"

namespace ovb::cuda {
std::string nccl_message(ncclResult_t rc, ncclComm_t comm);
std::string cublas_message(cublasStatus_t rc);
void warn_call_failed(const char* library, const char* call, const std::string& message,
                      const char* file, int line);
}  // namespace ovb::cuda

#define OVB_CHECK_CUDA(call)                                                                    \
  do {                                                                                          \
    const cudaError_t ovb_cuda_rc_ = (call);                                                    \
    if (ovb_cuda_rc_ != cudaSuccess)                                                            \
      ::ovb::raise_call_error("CUDA", #call,                                                    \
                              std::string(cudaGetErrorName(ovb_cuda_rc_)) + ": " +              \
                                  cudaGetErrorString(ovb_cuda_rc_),                             \
                              __FILE__, __LINE__);                                              \
  } while (0)

#define OVB_CHECK_CUBLAS(call)                                                                  \
  do {                                                                                          \
    const cublasStatus_t ovb_cublas_rc_ = (call);                                              \
    if (ovb_cublas_rc_ != CUBLAS_STATUS_SUCCESS)                                                \
      ::ovb::raise_call_error("cuBLAS", #call, ::ovb::cuda::cublas_message(ovb_cublas_rc_),     \
                              __FILE__, __LINE__);                                              \
  } while (0)

// comm may be nullptr (e.g. for ncclCommInitRank before the communicator exists).
#define OVB_CHECK_NCCL(call, comm)                                                              \
  do {                                                                                          \
    const ncclResult_t ovb_nccl_rc_ = (call);                                                   \
    if (ovb_nccl_rc_ != ncclSuccess && ovb_nccl_rc_ != ncclInProgress)                          \
      ::ovb::raise_call_error("NCCL", #call, ::ovb::cuda::nccl_message(ovb_nccl_rc_, (comm)),   \
                              __FILE__, __LINE__);                                              \
  } while (0)

#define OVB_WARN_CUDA(call)                                                                     \
  do {                                                                                          \
    const cudaError_t ovb_cuda_rc_ = (call);                                                    \
    if (ovb_cuda_rc_ != cudaSuccess)                                                            \
      ::ovb::cuda::warn_call_failed("CUDA", #call, cudaGetErrorString(ovb_cuda_rc_), __FILE__,  \
                                    __LINE__);                                                  \
  } while (0)

#define OVB_WARN_NCCL(call, comm)                                                               \
  do {                                                                                          \
    const ncclResult_t ovb_nccl_rc_ = (call);                                                   \
    if (ovb_nccl_rc_ != ncclSuccess)                                                            \
      ::ovb::cuda::warn_call_failed("NCCL", #call,                                              \
                                    ::ovb::cuda::nccl_message(ovb_nccl_rc_, (comm)), __FILE__,  \
                                    __LINE__);                                                  \
  } while (0)
