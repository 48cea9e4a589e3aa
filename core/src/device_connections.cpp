// CUDA_DEVICE_MAX_CONNECTIONS against the streams a run uses (see device_connections.hpp).
#include "ovb/device_connections.hpp"

#include <charconv>

#include "ovb/error.hpp"

namespace ovb {

DeviceConnections check_device_connections(const char* env_value, std::string_view backend,
                                           int streams) {
  DeviceConnections c;
  c.streams = streams;
  c.applies = backend == "cuda";
  if (env_value && *env_value) {
    const std::string_view v(env_value);
    int n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 1 || n > 32)
      throw UsageError("CUDA_DEVICE_MAX_CONNECTIONS='" + std::string(v) +
                       "' is not an integer 1..32");
    c.value = n;
  }
  if (c.applies && c.value == 1 && streams > 1)
    c.warnings.push_back(
        "CUDA_DEVICE_MAX_CONNECTIONS=1 with " + std::to_string(streams) +
        " streams: all of them share one hardware queue, so a collective launched before a GEMM "
        "on another stream runs wholly before or after it (no overlap, whatever the stream "
        "priorities); unset it or set 2 or more to let them overlap");
  return c;
}

void record_device_connections(nlohmann::json& context, const DeviceConnections& c) {
  context["device_max_connections"] = c.value ? nlohmann::json(*c.value) : nlohmann::json(nullptr);
  if (!context.contains("warnings") || !context["warnings"].is_array())
    context["warnings"] = nlohmann::json::array();
  for (const std::string& w : c.warnings) context["warnings"].push_back(w);
}

}  // namespace ovb
