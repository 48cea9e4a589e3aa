// Device properties for the trace header through the driver API (see device_props.hpp).
#include "device_props.hpp"

#include <cuda.h>

namespace ovb::trace::cuda {

nlohmann::ordered_json device_properties(int ordinal) {
  nlohmann::ordered_json p = {{"id", ordinal}};
  CUdevice dev = 0;
  if (cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS) return p;
  char name[256] = {};
  if (cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS) p["name"] = name;
  std::size_t mem = 0;
  if (cuDeviceTotalMem(&mem, dev) == CUDA_SUCCESS) p["totalGlobalMem"] = mem;
  const std::pair<const char*, CUdevice_attribute> attrs[] = {
      {"computeMajor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {"computeMinor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {"maxThreadsPerBlock", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {"maxThreadsPerMultiprocessor", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
      {"regsPerBlock", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {"regsPerMultiprocessor", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
      {"warpSize", CU_DEVICE_ATTRIBUTE_WARP_SIZE},
      {"sharedMemPerBlock", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
      {"sharedMemPerMultiprocessor", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
      {"numSms", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {"sharedMemPerBlockOptin", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
  };
  for (const auto& [key, attr] : attrs) {
    int v = 0;
    if (cuDeviceGetAttribute(&v, attr, dev) == CUDA_SUCCESS) p[key] = v;
  }
  return p;
}

}  // namespace ovb::trace::cuda
