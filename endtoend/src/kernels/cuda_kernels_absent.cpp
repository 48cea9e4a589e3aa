// gpt4d's CUDA entry points in a build without the CUDA backend (factory.cpp): such a build makes
// no "cuda" backend, so these are reached only by a caller's mistake, which they name.
#include "kernels/kernels.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt {

std::unique_ptr<Kernels> make_cuda_kernels(Backend&, DType, TrackedMemory*, AttentionKind, int) {
  throw Error("this gpt4d was built without the CUDA backend: no CUDA kernels");
}

double cuda_free_memory() {
  throw Error("this gpt4d was built without the CUDA backend: no device memory to query");
}

bool cudnn_attention_built() {
  return false;
}

}  // namespace ovb::gpt
