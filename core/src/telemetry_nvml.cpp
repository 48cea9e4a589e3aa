// The NVML sampling thread of ovb::telemetry::Sampler (see telemetry.hpp). NVML is opened with
// dlopen: the driver installs libnvidia-ml.so.1, while the toolkit's nvml.h and stub library are
// missing from some build machines; the few entry points used are declared here by their
// documented C signatures (NVML API reference), which NVML keeps stable across versions.
#include <dlfcn.h>

#include <chrono>

#include "ovb/telemetry.hpp"

namespace ovb::telemetry {

namespace {
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
}  // namespace

struct Sampler::Nvml {
  void* lib = nullptr;
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  bool initialised = false;

  template <class F>
  bool sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }
  std::string err(const char* call, nvmlReturn_t rc) const {
    return std::string(call) + " failed: " + (error_string ? error_string(rc) : "unknown error") +
           " (NVML error " + std::to_string(rc) + ")";
  }
  // "" when the device can be sampled, else why not.
  std::string open(const std::string& pci_bus_id) {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return std::string("NVML not loadable: ") + dlerror();
    if (!sym(init, "nvmlInit_v2") || !sym(shutdown, "nvmlShutdown") ||
        !sym(error_string, "nvmlErrorString") || !sym(by_pci, "nvmlDeviceGetHandleByPciBusId_v2") ||
        !sym(clock, "nvmlDeviceGetClockInfo") || !sym(power, "nvmlDeviceGetPowerUsage") ||
        !sym(temperature, "nvmlDeviceGetTemperature"))
      return "NVML lacks an entry point the sampler needs";
    // Renamed in newer drivers; the old name stays exported for compatibility.
    if (!sym(reasons, "nvmlDeviceGetCurrentClocksEventReasons") &&
        !sym(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons"))
      return "NVML lacks nvmlDeviceGetCurrentClocksEventReasons";
    if (nvmlReturn_t rc = init(); rc != kNvmlSuccess) return err("nvmlInit_v2", rc);
    initialised = true;
    if (nvmlReturn_t rc = by_pci(pci_bus_id.c_str(), &dev); rc != kNvmlSuccess)
      return err(("nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ")").c_str(), rc);
    return "";
  }
  // "" on success, else the failing call.
  std::string read(Sample& s) const {
    unsigned v = 0;
    unsigned long long r = 0;
    if (nvmlReturn_t rc = clock(dev, kNvmlClockSm, &v); rc != kNvmlSuccess)
      return err("nvmlDeviceGetClockInfo", rc);
    s.sm_clock_mhz = v;
    if (nvmlReturn_t rc = power(dev, &v); rc != kNvmlSuccess)
      return err("nvmlDeviceGetPowerUsage", rc);
    s.power_w = v / 1000.0;  // milliwatts
    if (nvmlReturn_t rc = temperature(dev, kNvmlTemperatureGpu, &v); rc != kNvmlSuccess)
      return err("nvmlDeviceGetTemperature", rc);
    s.temperature_c = v;
    if (nvmlReturn_t rc = reasons(dev, &r); rc != kNvmlSuccess)
      return err("nvmlDeviceGetCurrentClocksEventReasons", rc);
    s.reasons = r;
    return "";
  }
  ~Nvml() {
    if (initialised) shutdown();
    if (lib) dlclose(lib);
  }
};

Sampler::Sampler(std::string pci_bus_id, double interval_s)
    : nvml_(std::make_unique<Nvml>()), interval_s_(interval_s) {
  problem_ = nvml_->open(pci_bus_id);
  if (problem_.empty()) thread_ = std::thread([this] { loop(); });
}

Sampler::~Sampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void Sampler::loop() {
  const auto t0 = std::chrono::steady_clock::now();
  const auto step = std::chrono::duration<double>(interval_s_);
  auto next = t0;
  while (!stop_) {
    Sample s;
    s.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string why = nvml_->read(s);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!why.empty()) {
        problem_ = why;  // a device that stops answering ends sampling, and the summary says why
        return;
      }
      samples_.push_back(s);
    }
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(step);
    // Sleep in short slices so that the destructor is not held up by a long interval.
    while (!stop_ && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

nlohmann::json Sampler::summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (samples_.empty())
    return not_available(problem_.empty() ? "no telemetry sample taken" : problem_);
  nlohmann::json j = summarize(samples_, interval_s_);
  if (!problem_.empty()) j["sampling_stopped"] = problem_;
  return j;
}

}  // namespace ovb::telemetry
