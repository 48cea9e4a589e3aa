// run_main: MPI session, the body, and one clear line on failure (see ovb/main.hpp).
#include "ovb/main.hpp"

#include <mpi.h>

#include <cstdio>
#include <iostream>

#include "ovb/error.hpp"

namespace ovb {

static int report(const char* program, const LaunchContext& ctx, const char* what, int code) {
  std::cout.flush();
  if (ctx.world > 1) std::cerr << "[rank " << ctx.rank << "] ";
  std::cerr << program << ": error: " << what << std::endl;
  std::fflush(nullptr);
  if (ctx.world > 1) MPI_Abort(MPI_COMM_WORLD, code);  // the other ranks may wait in a collective
  return code;
}

int run_main(const char* program, int argc, char** argv,
             const std::function<int(const LaunchContext&)>& body) {
  LaunchContext ctx;
  try {
    MpiSession session(&argc, &argv);
    ctx = session.context();
    try {
      const int rc = body(ctx);
      std::fflush(nullptr);
      return rc;
    } catch (const ExitRequest& e) {
      return e.code;
    } catch (const UsageError& e) {
      return report(program, ctx, e.what(), 2);
    } catch (const std::exception& e) {
      return report(program, ctx, e.what(), 1);
    }
  } catch (const std::exception& e) {  // MPI could not start
    return report(program, ctx, e.what(), 1);
  }
}

}  // namespace ovb
