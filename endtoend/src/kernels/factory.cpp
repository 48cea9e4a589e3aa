// Picks the kernel implementation of a backend, and what memory a rank may use (kernels.hpp).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "kernels/host/host_kernels.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt {

// The CUDA kernels (kernels/cuda/cuda_kernels.cpp, device.cpp); in a build without CUDA,
// kernels/cuda_kernels_absent.cpp, which no rank reaches: such a build makes no "cuda" backend.
std::unique_ptr<Kernels> make_cuda_kernels(Backend& backend, DType act, TrackedMemory* mem,
                                           AttentionKind attention, int gemm_autotune);
double cuda_free_memory();

std::string_view name_of(AttentionKind k) {
  switch (k) {
    case AttentionKind::automatic: return "auto";
    case AttentionKind::cudnn: return "cudnn";
    case AttentionKind::simt: return "simt";
  }
  return "?";
}

AttentionKind parse_attention(std::string_view s) {
  if (s == "auto") return AttentionKind::automatic;
  if (s == "cudnn") return AttentionKind::cudnn;
  if (s == "simt") return AttentionKind::simt;
  throw UsageError("--attention: unknown implementation '" + std::string(s) +
                   "' (expected auto, cudnn or simt)");
}

std::unique_ptr<Kernels> make_kernels(Backend& backend, DType act, TrackedMemory* mem,
                                      AttentionKind attention, int gemm_autotune) {
  if (backend.name() == "host") {
    if (act != DType::f32)
      throw UsageError("the host backend computes in fp32 only, not " + std::string(name_of(act)));
    if (attention != AttentionKind::automatic)
      throw UsageError("--attention " + std::string(name_of(attention)) +
                       " needs the cuda backend (the host backend has one attention)");
    if (gemm_autotune > 1)
      throw UsageError("--gemm-autotune needs the cuda backend (the host GEMM has one algorithm)");
    return std::make_unique<HostKernels>(backend);
  }
  if (backend.name() == "cuda")
    return make_cuda_kernels(backend, act, mem, attention, gemm_autotune);
  throw Error("gpt4d has no kernels for backend '" + std::string(backend.name()) + "'");
}

double free_device_memory(Backend& backend, const LaunchContext& ctx) {
  // Ranks sharing one GPU (--ranks-per-gpu) share its free memory.
  if (backend.name() == "cuda") return cuda_free_memory() / std::max(1, backend.ranks_per_gpu());
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream f(line.substr(13));
      double kib = 0;
      f >> kib;
      return kib * 1024.0 / std::max(1, ctx.local_size);
    }
  return static_cast<double>(backend.device_info().memory_bytes) / std::max(1, ctx.local_size);
}

}  // namespace ovb::gpt
