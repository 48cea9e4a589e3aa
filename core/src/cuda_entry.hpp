// What core's CUDA-agnostic sources (backend.cpp, gemm_host.cpp, annotate.cpp) call of the CUDA
// backend. A CUDA build defines these in src/cuda/ (entry.cpp and the backend's own files); a
// build without CUDA links src/cuda_absent.cpp instead. So no compile-time switch reaches any
// header, and every other object of the suite compiles the same in the host and the CUDA build
// (ccache reuses the first build's objects in the second).
#pragma once

#include <memory>

#include "ovb/annotate.hpp"
#include "ovb/backend.hpp"
#include "ovb/gemm.hpp"
#include "ovb/launch.hpp"

namespace ovb::cuda {

bool built();                // this build has the CUDA backend
int visible_device_count();  // CUDA devices this process can use (0: none, no driver, no CUDA)
// The CUDA backend; without CUDA, a UsageError saying how to get it.
std::unique_ptr<Backend> make_backend(const BackendOptions& opts, const LaunchContext& ctx);
std::unique_ptr<Gemm> make_cublaslt_gemm(Backend& backend);  // a backend made by make_backend
// NVTX ranges in the suite's domain; nothing without CUDA (no tool could see them).
void nvtx_push(const RangeInfo& info);
void nvtx_pop();

}  // namespace ovb::cuda
