// NVTX ranges in the "OverlapBench" domain plus the host-timeline recorder (see ovb/annotate.hpp).
#include "ovb/annotate.hpp"

#ifdef OVB_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

namespace ovb {

namespace {
RangeRecorder* g_recorder = nullptr;

#ifdef OVB_HAVE_CUDA
struct OvbDomain {
  static constexpr const char* name{"OverlapBench"};
};
void nvtx_push(const RangeInfo& info) {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA(OvbDomain::name);
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
  nvtxDomainRangePushEx(domain, &a);
}
void nvtx_pop() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA(OvbDomain::name);
  nvtxDomainRangePop(domain);
}
#else
void nvtx_push(const RangeInfo&) {}
void nvtx_pop() {}
#endif
}  // namespace

void set_range_recorder(RangeRecorder* r) { g_recorder = r; }
RangeRecorder* range_recorder() { return g_recorder; }

ScopedRange::ScopedRange(const RangeInfo& info) {
  nvtx_push(info);
  if (g_recorder) g_recorder->begin(info);
}

ScopedRange::ScopedRange(const std::string& name, const char* category)
    : ScopedRange(RangeInfo{name, category, "", "", -1, -1}) {}

ScopedRange::~ScopedRange() {
  if (g_recorder) g_recorder->end();
  nvtx_pop();
}

}  // namespace ovb
