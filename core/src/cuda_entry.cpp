// The CUDA entry points as core sees them (see cuda_entry.hpp): the hooks the CUDA backend's
// library installed when the program links it, else what a program without CUDA does.
#include "cuda_entry.hpp"

#include "ovb/error.hpp"

namespace ovb::cuda_entry {

namespace {
// Constant-initialised, so it is null before any start-up code of another file runs.
const Hooks* g_hooks = nullptr;
}  // namespace

void install(const Hooks* hooks) {
  g_hooks = hooks;
}

bool built() {
  return g_hooks != nullptr;
}

int visible_device_count() {
  return g_hooks ? g_hooks->visible_device_count() : 0;
}

std::unique_ptr<Backend> make_backend(const BackendOptions& opts, const LaunchContext& ctx) {
  if (g_hooks) return g_hooks->make_backend(opts, ctx);
  throw UsageError(
      "this program has no CUDA backend: a build configured with -DOVB_ENABLE_CUDA=ON (on a "
      "machine with nvcc, cuBLASLt and NCCL) links it into the programs that run CUDA code "
      "(gpt4d, the microbenchmarks, ovb-trace-demo); or use --backend host");
}

std::unique_ptr<Gemm> make_cublaslt_gemm(Backend& backend) {
  if (g_hooks) return g_hooks->make_cublaslt_gemm(backend);
  throw Error("this program has no CUDA backend, so no cuBLASLt GEMM");
}

// Without CUDA no tool could see NVTX ranges.
void nvtx_push(const RangeInfo& info) {
  if (g_hooks) g_hooks->nvtx_push(info);
}

void nvtx_pop() {
  if (g_hooks) g_hooks->nvtx_pop();
}

std::optional<nlohmann::json> telemetry(const Backend& b) {
  return g_hooks ? g_hooks->telemetry(b) : std::nullopt;
}

std::optional<double> device_memory_peak_bytes(const Backend& b) {
  return g_hooks ? g_hooks->device_memory_peak_bytes(b) : std::nullopt;
}

}  // namespace ovb::cuda_entry
