// Check macro for CUPTI calls: throws ovb::Error with file, line, call and cuptiGetResultString.
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED gets an explanation (another profiler holds CUPTI).
#pragma once

#include <cupti.h>

#include <string>

#include "ovb/error.hpp"

namespace ovb::cuda {
std::string cupti_message(CUptiResult rc);
}

#define OVB_CHECK_CUPTI(call)                                                                   \
  do {                                                                                          \
    const CUptiResult ovb_cupti_rc_ = (call);                                                   \
    if (ovb_cupti_rc_ != CUPTI_SUCCESS)                                                         \
      ::ovb::raise_call_error("CUPTI", #call, ::ovb::cuda::cupti_message(ovb_cupti_rc_),        \
                              __FILE__, __LINE__);                                              \
  } while (0)
