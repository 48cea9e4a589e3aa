// Library messages for the CUDA-side check macros (see ovb/cuda/check.hpp, cupti_check.hpp).
#include <iostream>

#include "ovb/cuda/check.hpp"
#include "ovb/cuda/cupti_check.hpp"

namespace ovb::cuda {

std::string nccl_message(ncclResult_t rc, ncclComm_t comm) {
  std::string msg = ncclGetErrorString(rc);
  const char* last = ncclGetLastError(comm);
  if (last && *last) msg += " (" + std::string(last) + ")";
  return msg;
}

std::string cublas_message(cublasStatus_t rc) {
  return std::string(cublasGetStatusName(rc)) + ": " + cublasGetStatusString(rc);
}

std::string cupti_message(CUptiResult rc) {
  const char* text = nullptr;
  cuptiGetResultString(rc, &text);
  std::string msg = text ? text : "unknown CUPTI error";
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    msg += " (another profiler, e.g. Nsight Systems or Nsight Compute, already holds CUPTI; "
           "run without it or without the suite's tracer)";
  return msg;
}

void warn_call_failed(const char* library, const char* call, const std::string& message,
                      const char* file, int line) {
  std::cerr << "warning: " << library << " error at " << file << ':' << line << ": " << call
            << " failed: " << message << std::endl;
}

}  // namespace ovb::cuda
