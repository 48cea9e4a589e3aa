// The main() of every microbenchmark: options (own, sweep file, Google Benchmark's), backend, the
// program's benchmarks, rank-aware output, and the exit status (non-zero when any correctness
// check found wrong elements). A program supplies its options and a registration function:
//
//   int main(int argc, char** argv) { return ovb::mb::bench_main(my_program(), argc, argv); }
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "harness/env.hpp"
#include "harness/reporting.hpp"
#include "ovb/cli_fwd.hpp"
#include "ovb/launch.hpp"

namespace ovb::mb {

struct Program {
  const char* name;   // "ovb-gemm": also the section of sweep files
  const char* about;  // first line of --help
  std::function<void(CLI::App&)> add_options;
  // After parsing (and the sweep file), before the backend exists: checks and environment set-up.
  // `cli` holds the options given on the command line (e.g. "--gx"), as opposed to the sweep file.
  // May throw UsageError, or ExitRequest to stop after printing something. Optional.
  std::function<void(const LaunchContext&, const std::set<std::string>& cli)> configure;
  // Registers the benchmarks with add_benchmark().
  std::function<void(BenchEnv&)> register_all;
  // Streams each rank's benchmarks use at once (ovb-overlap: 2), for the
  // CUDA_DEVICE_MAX_CONNECTIONS check (ovb/device_connections.hpp).
  int streams = 1;
  // Rank 0, after the run: extra summaries. Optional.
  std::function<void(const std::vector<RunRecord>&)> report;
};

// --backend, --ranks-per-gpu, --sweep, --repetitions, --min-time, --iterations, --warmup, and the
// hidden --inject-wrong.
void add_common_options(CLI::App& app, CommonOptions& o);

// Registers one benchmark with the suite's settings: manual time (events, max over ranks),
// microseconds, and the --repetitions / --min-time / --iterations options.
benchmark::internal::Benchmark* add_benchmark(BenchEnv& env, const std::string& name,
                                              std::function<void(benchmark::State&)> body);

// Grid options for collective groups: a grid named on the command line (--gx.. in cli) must fit
// the world (UsageError naming the wrong factor); one from a sweep file may not, and then only the
// benchmarks over its dimensions are skipped, with the reason.
void check_cli_grid(const GridShape& grid, const std::set<std::string>& cli, int world);

int bench_main(const Program& program, int argc, char** argv);

}  // namespace ovb::mb
