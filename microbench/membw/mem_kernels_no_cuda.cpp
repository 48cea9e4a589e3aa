// The CUDA side of ovb-membw in a build without CUDA: the host backend is the only one there, so
// this is never reached through a backend; it says why if it is.
#include "membw/mem_kernels.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {

void run_cuda_mem_kernel(const MemArgs&, void*) {
  throw Error("ovb-membw was built without CUDA: no CUDA memory-bound kernels");
}

}  // namespace ovb::mb
