// Causal self-attention through cuDNN's fused flash attention (SDPA forward and backward of the
// cuDNN graph API, via NVIDIA's header-only cudnn-frontend). Built only with cuDNN
// (cmake/OvbCudnn.cmake, OVB_HAVE_CUDNN); CudaKernels falls back to its CUDA-core kernels
// (attention.cu, "simt") where this is not built or cannot run a shape.
//
// No copies: the tensors are strided views of gpt4d's buffers (cudnn_attention_view.hpp).
// cuDNN's grouped-query attention sums dK and dV over a group's query heads itself. bf16 in and
// out, fp32 math, scale 1/sqrt(D), causal mask, the log-sum-exp of each softmax row saved as fp32
// [B, H, S] (the same quantity as the CUDA-core kernels' lse, so either backward can follow either
// forward).
// The graphs of a shape are built once and cached; one workspace (the larger of forward and
// backward) is allocated through TrackedMemory ("workspace") when a shape is prepared.
// Plain C++ header (no cuDNN types), so host code can include it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "kernels/cuda/cudnn_attention_view.hpp"
#include "ovb/backend.hpp"
#include "ovb/tracked_memory.hpp"

namespace cudnn_frontend::graph {
class Graph;
}

namespace ovb::gpt::cuda {

class CudnnAttention {
 public:
  CudnnAttention(Backend& backend, TrackedMemory* mem);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // Builds (once) the forward and backward graphs of `shape` with activation dtype `act` and
  // sizes the workspace. Returns "" when cuDNN runs them, else cuDNN's reason why not.
  std::string prepare(const AttnShape& shape, DType act);
  // Enqueue on s; the shape must have been prepared successfully (Error otherwise).
  void forward(Stream& s, const void* qkv, void* out, float* lse, const AttnShape& shape,
               DType act);
  void backward(Stream& s, const void* qkv, const void* out, const void* dout, const float* lse,
                void* dqkv, const AttnShape& shape, DType act);

  // "cuDNN 9.19.0, cudnn-frontend 1.32.0" (the runtime library's version).
  static std::string versions();

 private:
  struct Graphs;
  Graphs& ready(const AttnShape& shape, DType act);
  std::string ensure_handle();
  // Runs a built graph on s with the variant pack (tensor id -> pointer) and the workspace.
  void execute(Stream& s, cudnn_frontend::graph::Graph& graph,
               std::unordered_map<std::int64_t, void*>& pack);

  Backend& backend_;
  TrackedMemory* mem_;
  void* handle_ = nullptr;  // cudnnHandle_t, created on the first prepare()
  Buffer workspace_;
  std::map<std::pair<AttnShape, int>, std::unique_ptr<Graphs>> cache_;
};

}  // namespace ovb::gpt::cuda
