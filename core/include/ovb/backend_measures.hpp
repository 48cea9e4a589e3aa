// What a backend measured about its device while the run went on, for the result files: device
// telemetry (ovb/telemetry.hpp; "gpu_telemetry" in every result's context) and the device memory
// actually in use. Where there is no device (host backend) they say so.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

#include "ovb/backend.hpp"

namespace ovb {

// The telemetry summary sampled since the backend was made; host: {"available": false, "reason"}.
nlohmann::json backend_telemetry(const Backend& b);

// Measured device memory, the driver's view: the peak of (device memory in use - in use once the
// backend's context existed), checked at every allocation and at this call, in bytes. It counts
// what libraries (cuBLAS, cuDNN, NCCL) allocate for themselves, which the plan's tracked buffers
// do not; with ranks sharing a GPU it counts theirs too. nullopt where there is no device (host).
std::optional<double> device_memory_peak_bytes(const Backend& b);

}  // namespace ovb
