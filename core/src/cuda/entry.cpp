// The CUDA backend's entry points for core's CUDA-agnostic sources (see cuda_entry.hpp): the
// backend itself and NVTX ranges in the suite's own domain ("OverlapBench"), which Nsight and the
// suite's CUPTI tracer see.
#include <nvtx3/nvToolsExt.h>

#include "cuda/cuda_backend.hpp"
#include "cuda_entry.hpp"

namespace ovb::cuda {

bool built() {
  return true;
}

std::unique_ptr<Backend> make_backend(const BackendOptions& opts, const LaunchContext& ctx) {
  return std::make_unique<CudaBackend>(opts, ctx);
}

namespace {
struct OvbDomain {
  static constexpr const char* name{"OverlapBench"};
};
nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA(OvbDomain::name);
  return d;
}
}  // namespace

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

}  // namespace ovb::cuda
