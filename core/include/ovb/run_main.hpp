// The one way a suite binary's main() runs: MPI session, body, and on failure one clear line.
//
//   int main(int argc, char** argv) {
//     return ovb::run_main("ovb-foo", argc, argv, [&](const ovb::LaunchContext& ctx) { ...; return 0; });
//   }
//
// A tool that is always one process (ovb-model) calls run_one_process instead: the same body and
// error lines, but MPI is never initialised (MPI_Init costs a few tenths of a second, --help
// included) and the context is rank 0 of 1 on this host.
//
// On an exception the message is printed as "ovb-foo: error: <message>" ("[rank N] " in front when
// there are several ranks), stdout/stderr are flushed, and the process exits non-zero: 2 for a
// UsageError, 1 otherwise. With several ranks, a failing rank calls MPI_Abort so that the others
// cannot hang waiting for it in a collective. A UsageError (the same input on every rank) is said
// once, by rank 0; another rank says it only when rank 0 has not ended the job within 2 s. Each
// message is one write, so lines from several ranks do not interleave.
#pragma once

#include <functional>
#include <string_view>

#include "ovb/launch.hpp"

namespace ovb {

// Thrown to end the program early with a status after, e.g., printing --help.
struct ExitRequest {
  int code = 0;
};

int run_main(const char* program, int argc, char** argv,
             const std::function<int(const LaunchContext&)>& body);
int run_one_process(const char* program, const std::function<int(const LaunchContext&)>& body);
// run_main, or run_one_process where `needs_no_ranks` (e.g. gpt4d --check-config) and no launcher
// started several processes (launcher_rank().world == 1, ovb/launcher_env.hpp): a check that is
// one process anyway skips MPI_Init's singleton start-up, and under mpirun/srun it stays one
// answer from rank 0.
int run_main(const char* program, int argc, char** argv, bool needs_no_ranks,
             const std::function<int(const LaunchContext&)>& body);

// The line run_main prints for an error ("[rank N] " when world > 1, then "PROGRAM: error: WHAT"),
// written with one write(2) so that lines of several ranks stay whole. For code that must say it
// itself before ending the job (the host backend's watchdog, whose MPI_Abort does not return).
void write_error_line(std::string_view program, int rank, int world, std::string_view what);

}  // namespace ovb
