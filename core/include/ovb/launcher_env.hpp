// Rank and world size as the launcher's environment gives them, read without MPI: for the injected
// tracer (which runs inside programs that may not use MPI) and for programs deciding whether to
// start MPI at all (run_main). No MPI, nothing else of core: ovb_launcher_env is PIC and travels
// into the injected tracer.
#pragma once

#include <functional>
#include <string>

namespace ovb {

struct LauncherRank {
  int rank = 0;
  int world = 1;
  std::string source;  // the variable the rank came from, empty when none was set
};

// First of OMPI_COMM_WORLD_RANK/_SIZE (Open MPI), PMI_RANK/PMI_SIZE (MPICH, Intel MPI),
// SLURM_PROCID/SLURM_NTASKS (srun), RANK/WORLD_SIZE (torchrun). `getenv` is replaceable for tests.
LauncherRank launcher_rank(const std::function<const char*(const char*)>& getenv_fn = nullptr);

}  // namespace ovb
