// The CUDA backend's hooks for core's CUDA-agnostic sources (see cuda_entry.hpp), installed before
// main in every program that links this library (ovb::cuda_backend links it whole, so that this
// file is never left out for want of a reference): the backend itself, its measures, and NVTX
// ranges in the suite's own domain ("OverlapBench"), which Nsight and the suite's CUPTI tracer see.
#include <nvtx3/nvToolsExt.h>

#include "cuda/cuda_backend.hpp"
#include "cuda_entry.hpp"

namespace ovb::cuda {

namespace {

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts, const LaunchContext& ctx) {
  return std::make_unique<CudaBackend>(opts, ctx);
}

std::optional<nlohmann::json> telemetry_of(const Backend& b) {
  if (const auto* c = dynamic_cast<const CudaBackend*>(&b)) return c->telemetry();
  return std::nullopt;
}

std::optional<double> device_memory_peak_of(const Backend& b) {
  if (const auto* c = dynamic_cast<const CudaBackend*>(&b)) return c->device_memory_peak_bytes();
  return std::nullopt;
}

struct OvbDomain {
  static constexpr const char* name{"OverlapBench"};
};
nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA(OvbDomain::name);
  return d;
}

void nvtx_push(const RangeInfo& info) {
  // Collectives carry kind/group/bytes in the message (see nvtx_message) for NVTX-only tools.
  const std::string message = nvtx_message(info);
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message.c_str();
  if (info.bytes >= 0) {  // collectives carry their bytes in the payload
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = info.bytes;
  }
  nvtxDomainRangePushEx(domain(), &a);
}

void nvtx_pop() {
  nvtxDomainRangePop(domain());
}

}  // namespace

// A name of its own, not file-local: ci/check_cuda_links.py looks for it to see that a program
// carries the backend, not only CUDA's libraries.
extern const cuda_entry::Hooks backend_hooks;
constexpr cuda_entry::Hooks backend_hooks{
    .visible_device_count = visible_device_count,
    .make_backend = make_cuda_backend,
    .make_cublaslt_gemm = make_cublaslt_gemm,
    .nvtx_push = nvtx_push,
    .nvtx_pop = nvtx_pop,
    .telemetry = telemetry_of,
    .device_memory_peak_bytes = device_memory_peak_of,
};

namespace {
// A program that links this library has the CUDA backend from its first line on.
[[maybe_unused]] const bool installed = (cuda_entry::install(&backend_hooks), true);
}  // namespace

}  // namespace ovb::cuda
