// Check for the tracer's CUPTI calls: throws ovb::Error with file, line, the call and CUPTI's own
// text, and for CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED says which tools hold CUPTI. The
// tracer has its own check (not core's OVB_CHECK_CUPTI) because the injected library must not pull
// the core library - and with it MPI and NCCL - into a foreign process such as PyTorch.
#pragma once

#include <cupti.h>

#include <string>

namespace ovb::trace::cuda {

[[noreturn]] void raise_cupti_error(CUptiResult rc, const char* call, const char* file, int line);
std::string cupti_text(CUptiResult rc);

}  // namespace ovb::trace::cuda

#define OVB_TRACE_CUPTI(call)                                                          \
  do {                                                                                 \
    const CUptiResult ovb_trace_rc_ = (call);                                          \
    if (ovb_trace_rc_ != CUPTI_SUCCESS)                                                \
      ::ovb::trace::cuda::raise_cupti_error(ovb_trace_rc_, #call, __FILE__, __LINE__); \
  } while (0)
