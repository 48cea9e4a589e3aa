// CUPTI error messages for the tracer (see cupti_call.hpp).
#include "cupti_call.hpp"

#include "ovb/error.hpp"

namespace ovb::trace::cuda {

std::string cupti_text(CUptiResult rc) {
  const char* text = nullptr;
  cuptiGetResultString(rc, &text);
  std::string msg = text ? text : "unknown CUPTI error " + std::to_string(static_cast<int>(rc));
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    msg +=
        " - another CUPTI client already holds it (Nsight Systems / Nsight Compute, PyTorch's "
        "profiler, or a second OverlapBench tracer); run without one of them";
  return msg;
}

void raise_cupti_error(CUptiResult rc, const char* call, const char* file, int line) {
  throw Error("CUPTI error at " + std::string(file) + ":" + std::to_string(line) + ": " + call +
              " failed: " + cupti_text(rc));
}

}  // namespace ovb::trace::cuda
