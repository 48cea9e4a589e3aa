// MPI session and launch context (see ovb/launch.hpp).
#include "ovb/launch.hpp"

#include <unistd.h>

#include "ovb/error.hpp"

namespace ovb {

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  OVB_CHECK_MPI(MPI_Initialized(&initialized));
  if (!initialized) {
    int provided = 0;
    OVB_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
    owns_ = true;
  }
  // Errors come back as codes and go through OVB_CHECK_MPI instead of aborting inside MPI.
  OVB_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  ctx_ = query_launch_context();
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

LaunchContext query_launch_context() {
  LaunchContext c;
  OVB_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &c.rank));
  OVB_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &c.world));
  MPI_Comm node = MPI_COMM_NULL;
  OVB_CHECK_MPI(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &node));
  OVB_CHECK_MPI(MPI_Comm_rank(node, &c.local_rank));
  OVB_CHECK_MPI(MPI_Comm_size(node, &c.local_size));
  OVB_CHECK_MPI(MPI_Comm_free(&node));
  c.host = single_process_context().host;
  return c;
}

LaunchContext single_process_context() {
  LaunchContext c;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) c.host = host;
  return c;
}

}  // namespace ovb
