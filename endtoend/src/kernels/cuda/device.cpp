// Free device memory for the memory check before allocating (kernels.hpp free_device_memory).
#include <cuda_runtime.h>

#include "ovb/cuda/check.hpp"

namespace ovb::gpt {

double cuda_free_memory() {
  std::size_t free = 0, total = 0;
  OVB_CHECK_CUDA(cudaMemGetInfo(&free, &total));
  return static_cast<double>(free);
}

}  // namespace ovb::gpt
