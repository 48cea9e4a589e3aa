// run_main (MPI session) and run_one_process: the body, and one clear line on failure (see
// ovb/run_main.hpp).
#include "ovb/run_main.hpp"

#include <mpi.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "ovb/error.hpp"
#include "ovb/launcher_env.hpp"

namespace ovb {

void write_error_line(std::string_view program, int rank, int world, std::string_view what) {
  std::string line = world > 1 ? "[rank " + std::to_string(rank) + "] " : std::string();
  line.append(program).append(": error: ").append(what).append("\n");
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
}

// A usage error is the same on every rank (every rank parsed the same input): rank 0 says it and
// aborts the job; the other ranks say it only if rank 0 has not ended the job within a moment (an
// input problem seen by some ranks only). Any other error is said by every rank that meets it.
static int report(const char* program, const LaunchContext& ctx, const char* what, int code) {
  std::cout.flush();
  std::fflush(nullptr);
  const bool several = ctx.world > 1;
  if (several && code == 2 && ctx.rank != 0) std::this_thread::sleep_for(std::chrono::seconds(2));
  write_error_line(program, ctx.rank, ctx.world, what);
  if (several) MPI_Abort(MPI_COMM_WORLD, code);  // the other ranks may wait in a collective
  return code;
}

static int run_body(const char* program, const LaunchContext& ctx,
                    const std::function<int(const LaunchContext&)>& body) {
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
}

int run_one_process(const char* program, const std::function<int(const LaunchContext&)>& body) {
  return run_body(program, single_process_context(), body);
}

int run_main(const char* program, int argc, char** argv,
             const std::function<int(const LaunchContext&)>& body) {
  LaunchContext ctx;
  try {
    MpiSession session(&argc, &argv);
    ctx = session.context();
    return run_body(program, ctx, body);
  } catch (const std::exception& e) {  // MPI could not start
    return report(program, ctx, e.what(), 1);
  }
}

int run_main(const char* program, int argc, char** argv, bool needs_no_ranks,
             const std::function<int(const LaunchContext&)>& body) {
  if (needs_no_ranks && launcher_rank().world == 1) return run_one_process(program, body);
  return run_main(program, argc, argv, body);
}

}  // namespace ovb
