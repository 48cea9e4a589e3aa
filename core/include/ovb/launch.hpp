// Launch context: who this process is (rank, world, local rank on its node) and the MPI session.
// Works under mpirun/srun and as a single process started without a launcher.
#pragma once

#include <mpi.h>

#include <string>

namespace ovb {

struct LaunchContext {
  int rank = 0;
  int world = 1;
  int local_rank = 0;  // rank among the processes on this node
  int local_size = 1;
  std::string host;
};

// Initialises MPI (unless already initialised) and finalises it on destruction if it initialised it.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  const LaunchContext& context() const { return ctx_; }

 private:
  bool owns_ = false;
  LaunchContext ctx_;
};

// Reads the context of MPI_COMM_WORLD (MPI must be initialised).
LaunchContext query_launch_context();

// Rank 0 of 1 on this host, without MPI: for tools that are always one process.
LaunchContext single_process_context();

}  // namespace ovb
