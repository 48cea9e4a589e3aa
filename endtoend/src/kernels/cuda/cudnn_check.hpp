// Check macros for cuDNN calls (cudnnStatus_t, with cudnnGetErrorString) and for cudnn-frontend
// calls (error_t, with the frontend's message): both throw ovb::Error naming file, line and call.
// Include only where the cuDNN and cudnn-frontend headers are available (OVB_HAVE_CUDNN).
#pragma once

#include <cudnn.h>

#include <string>

#include "ovb/error.hpp"

#define OVB_CHECK_CUDNN(call)                                                               \
  do {                                                                                      \
    const cudnnStatus_t ovb_cudnn_rc_ = (call);                                             \
    if (ovb_cudnn_rc_ != CUDNN_STATUS_SUCCESS)                                              \
      ::ovb::raise_call_error("cuDNN", #call, cudnnGetErrorString(ovb_cudnn_rc_), __FILE__, \
                              __LINE__);                                                    \
  } while (0)

// For calls returning cudnn_frontend::error_t.
#define OVB_CHECK_CUDNN_FE(call)                                                           \
  do {                                                                                     \
    auto ovb_fe_rc_ = (call);                                                              \
    if (ovb_fe_rc_.is_bad())                                                               \
      ::ovb::raise_call_error("cudnn-frontend", #call, ovb_fe_rc_.get_message(), __FILE__, \
                              __LINE__);                                                   \
  } while (0)
