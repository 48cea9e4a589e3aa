// Device properties for the trace header through the driver API (see device_props.hpp). The
// driver is looked up at run time (dlopen of libcuda.so.1, already loaded in any CUDA program):
// linking it would stop every binary that links the tracer from starting on a machine without a
// GPU driver, even on the host backend.
#include "device_props.hpp"

#include <cuda.h>
#include <dlfcn.h>

namespace ovb::trace::cuda {

namespace {

struct Driver {
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) get_name = nullptr;
  decltype(&::cuDeviceTotalMem) total_mem = nullptr;
  decltype(&::cuDeviceGetAttribute) get_attribute = nullptr;
  bool ok() const { return device_get && get_name && total_mem && get_attribute; }
};

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);  // the process's own driver
    if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) return r;
    r.device_get = reinterpret_cast<decltype(r.device_get)>(dlsym(lib, "cuDeviceGet"));
    r.get_name = reinterpret_cast<decltype(r.get_name)>(dlsym(lib, "cuDeviceGetName"));
    r.total_mem = reinterpret_cast<decltype(r.total_mem)>(dlsym(lib, "cuDeviceTotalMem_v2"));
    r.get_attribute =
        reinterpret_cast<decltype(r.get_attribute)>(dlsym(lib, "cuDeviceGetAttribute"));
    return r;
  }();
  return d;
}

}  // namespace

nlohmann::ordered_json device_properties(int ordinal) {
  nlohmann::ordered_json p = {{"id", ordinal}};
  const Driver& d = driver();
  CUdevice dev = 0;
  if (!d.ok() || d.device_get(&dev, ordinal) != CUDA_SUCCESS) return p;
  char name[256] = {};
  if (d.get_name(name, sizeof name, dev) == CUDA_SUCCESS) p["name"] = name;
  std::size_t mem = 0;
  if (d.total_mem(&mem, dev) == CUDA_SUCCESS) p["totalGlobalMem"] = mem;
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
    if (d.get_attribute(&v, attr, dev) == CUDA_SUCCESS) p[key] = v;
  }
  return p;
}

}  // namespace ovb::trace::cuda
