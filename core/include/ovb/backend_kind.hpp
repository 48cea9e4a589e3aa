// Which backend a run gets, without creating it: for choosing what to ask of it (e.g. a sweep
// preset's backend section) before the backend exists.
#pragma once

#include <string>

#include "ovb/backend.hpp"

namespace ovb {

// "cuda" or "host": what make_backend would create for these options. For "auto" in a CUDA build
// this counts the visible GPUs, which initialises the driver but creates no CUDA context (so
// CUDA_DEVICE_MAX_CONNECTIONS set afterwards still applies). Throws UsageError for an unknown name.
std::string backend_kind(const BackendOptions& opts);

}  // namespace ovb
