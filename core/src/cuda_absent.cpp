// The CUDA entry points of a build without the CUDA backend (see cuda_entry.hpp): no devices, no
// NVTX, and an error naming the configure option wherever CUDA is asked for.
#include "cuda_entry.hpp"
#include "ovb/error.hpp"

namespace ovb::cuda {

bool built() {
  return false;
}

int visible_device_count() {
  return 0;
}

std::unique_ptr<Backend> make_backend(const BackendOptions&, const LaunchContext&) {
  throw UsageError(
      "this build has no CUDA backend (configure with -DOVB_ENABLE_CUDA=ON on a "
      "machine with nvcc, cuBLASLt and NCCL), or use --backend host");
}

std::unique_ptr<Gemm> make_cublaslt_gemm(Backend&) {
  throw Error("this build has no CUDA backend, so no cuBLASLt GEMM");
}

void nvtx_push(const RangeInfo&) {}
void nvtx_pop() {}

}  // namespace ovb::cuda
