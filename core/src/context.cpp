// The run context of every result file (see ovb/context.hpp and results/SCHEMA.md).
#include "ovb/context.hpp"

#include <mpi.h>

#include <sched.h>
#include <unistd.h>

#include <ctime>

#include "ovb/backend_measures.hpp"
#include "ovb/build_info.hpp"
#include "ovb/metrics.hpp"

extern char** environ;

namespace ovb {

bool is_relevant_env(const std::string& name) {
  static const char* const prefixes[] = {"NCCL_", "OVB_", "CUDA_MPS_"};
  static const char* const exact[] = {"CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_VISIBLE_DEVICES",
                                      "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "SLURM_JOB_ID",
                                      "SLURM_JOB_NUM_NODES", "SLURM_NTASKS", "SLURM_ARRAY_TASK_ID"};
  for (const char* p : prefixes)
    if (name.rfind(p, 0) == 0) return true;
  for (const char* e : exact)
    if (name == e) return true;
  return false;
}

nlohmann::json relevant_environment(const std::vector<std::string>& env) {
  std::vector<std::string> vars = env;
  if (vars.empty())
    for (char** e = environ; e && *e; ++e) vars.emplace_back(*e);
  nlohmann::json out = nlohmann::json::object();
  for (const std::string& kv : vars) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = kv.substr(0, eq);
    if (is_relevant_env(name)) out[name] = kv.substr(eq + 1);
  }
  return out;
}

BuildInfo build_info() {
  return {OVB_VERSION, OVB_GIT_REVISION, OVB_BUILD_TYPE, OVB_COMPILER};
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "unknown";
  std::string s(text, static_cast<std::size_t>(len));
  const auto nl = s.find_first_of(",\n");
  return s.substr(0, nl);
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

static nlohmann::json peaks_of(const std::string& device) {
  nlohmann::json peaks = nlohmann::json::object();
  for (const char* p : {"fp8", "bf16", "fp16", "tf32", "fp32"})
    if (auto v = metrics::peak_tflops(device, p)) peaks[p] = *v;
  return peaks.empty() ? nlohmann::json(nullptr) : peaks;
}

// CPUs this process may run on (its affinity mask; the online count where that fails).
static int cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

nlohmann::json run_context(const Backend* backend, const LaunchContext& ctx) {
  const BuildInfo b = build_info();
  nlohmann::json j = {
      {"schema_version", kSchemaVersion},
      {"suite", "OverlapBench"},
      {"suite_version", b.version},
      {"git_revision", b.git_revision},
      {"build_type", b.build_type},
      {"compiler", b.compiler},
      {"date", utc_now_iso8601()},
      {"host", ctx.host},
      {"world_size", ctx.world},
      {"local_size", ctx.local_size},
      // Host ranks share these CPUs: local_size / cpus is the ranks per core the model divides
      // a core's rate by (ovb-model: ranks_per_device_of).
      {"cpus", cpus_available()},
      {"environment", relevant_environment()},
  };
  nlohmann::json versions = {{"mpi", mpi_library_version()}};
  if (backend) {
    const DeviceInfo d = backend->device_info();
    j["backend"] = std::string(backend->name());
    j["device"] = {{"name", d.name},
                   {"count", d.count},
                   {"index", d.index},
                   {"memory_bytes", d.memory_bytes},
                   {"sm_clock_mhz", d.sm_clock_mhz},
                   {"memory_clock_mhz", d.memory_clock_mhz},
                   {"peak_tflops", peaks_of(d.name)}};
    const auto bw = metrics::peak_memory_gbps(d.name);
    j["device"]["peak_memory_gbps"] = bw ? nlohmann::json(*bw) : nlohmann::json(nullptr);
    if (!d.driver_version.empty()) versions["driver"] = d.driver_version;
    if (!d.runtime_version.empty()) versions["cuda_runtime"] = d.runtime_version;
    if (!d.comm_version.empty()) versions[d.comm_library == "NCCL" ? "nccl" : d.comm_library] = d.comm_version;
    j["ranks_per_gpu"] = backend->ranks_per_gpu();
    j["oversubscribed"] = backend->oversubscribed();
    // Sampled until now: a result's context is made when the run is over.
    j["gpu_telemetry"] = backend_telemetry(*backend);
  }
  j["versions"] = versions;
  return j;
}

}  // namespace ovb
