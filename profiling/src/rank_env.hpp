// Rank and world size from the launcher's environment (for the injected tracer, which runs inside
// programs that may not use MPI), and the one naming rule for per-rank trace files.
#pragma once

#include <functional>
#include <string>

namespace ovb::trace {

struct LauncherRank {
  int rank = 0;
  int world = 1;
  std::string source;  // the variable the rank came from, empty when none was set
};

// First of OMPI_COMM_WORLD_RANK/_SIZE (Open MPI), PMI_RANK/PMI_SIZE (MPICH, Intel MPI),
// SLURM_PROCID/SLURM_NTASKS (srun), RANK/WORLD_SIZE (torchrun). `getenv` is replaceable for tests.
LauncherRank launcher_rank(const std::function<const char*(const char*)>& getenv_fn = nullptr);

// DIR/rank-00003.trace.json: one file per rank, sorted by rank in a listing.
std::string rank_trace_path(const std::string& dir, int rank);

}  // namespace ovb::trace
