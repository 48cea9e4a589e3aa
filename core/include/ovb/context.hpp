// The run context written into every result file: machine, versions, environment, build, date.
// See results/SCHEMA.md ("Context").
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ovb/backend.hpp"
#include "ovb/launch.hpp"

namespace ovb {

inline constexpr int kSchemaVersion = 1;

// The variables that change communication or compute behaviour: NCCL_*, CUDA_DEVICE_MAX_CONNECTIONS,
// CUDA_VISIBLE_DEVICES, CUDA_MPS_*, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, OVB_*, SLURM job ids.
bool is_relevant_env(const std::string& name);

// Relevant variables of an environment given as "NAME=value" strings (the process's when empty).
nlohmann::json relevant_environment(const std::vector<std::string>& env = {});

// Context of this run. `backend` may be null (then the device fields are omitted).
nlohmann::json run_context(const Backend* backend, const LaunchContext& ctx);

// Build facts fixed at configure time.
struct BuildInfo {
  const char* version;
  const char* git_revision;
  const char* build_type;
  const char* compiler;
};
BuildInfo build_info();

// MPI library version string (MPI_Get_library_version, first line).
std::string mpi_library_version();

// Current UTC time as ISO 8601, e.g. 2026-11-22T21:30:00Z.
std::string utc_now_iso8601();

}  // namespace ovb
