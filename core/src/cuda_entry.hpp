// What core's CUDA-agnostic sources (backend.cpp, gemm_host.cpp, annotate.cpp) call of the CUDA
// backend. The backend is a library of its own (ovb::cuda_backend), linked only into the programs
// that run CUDA code: when linked, src/cuda/entry.cpp installs its hooks at start-up; a program
// without it (the analysis tools, or any program of a build without CUDA) keeps the defaults of
// cuda_entry.cpp. So ovb_core needs no CUDA library, no compile-time switch reaches any header,
// and every other object of the suite compiles the same in the host and the CUDA build (ccache
// reuses the first build's objects in the second).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>

#include "ovb/annotate.hpp"
#include "ovb/backend.hpp"
#include "ovb/gemm.hpp"
#include "ovb/launch.hpp"

namespace ovb::cuda_entry {

// The CUDA backend's side; every member is set.
struct Hooks {
  int (*visible_device_count)();  // CUDA devices this process can use (0: none, or no driver)
  std::unique_ptr<Backend> (*make_backend)(const BackendOptions&, const LaunchContext&);
  std::unique_ptr<Gemm> (*make_cublaslt_gemm)(Backend&);  // a backend made by make_backend
  void (*nvtx_push)(const RangeInfo&);                    // NVTX ranges in the suite's domain
  void (*nvtx_pop)();
  // ovb/backend_measures.hpp for a CUDA backend; nullopt for any other backend.
  std::optional<nlohmann::json> (*telemetry)(const Backend&);
  std::optional<double> (*device_memory_peak_bytes)(const Backend&);
};

// Called once, before main, by the CUDA backend's library; `hooks` must outlive the program.
void install(const Hooks* hooks);

// What core calls. Without the hooks: not built, no devices, no NVTX, no measures, and an error
// naming the configure option and the programs that have the backend wherever CUDA is asked for.
bool built();
int visible_device_count();
std::unique_ptr<Backend> make_backend(const BackendOptions& opts, const LaunchContext& ctx);
std::unique_ptr<Gemm> make_cublaslt_gemm(Backend& backend);
void nvtx_push(const RangeInfo& info);
void nvtx_pop();
std::optional<nlohmann::json> telemetry(const Backend& b);
std::optional<double> device_memory_peak_bytes(const Backend& b);

}  // namespace ovb::cuda_entry
