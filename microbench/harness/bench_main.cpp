// The shared main of the microbenchmarks (see bench_main.hpp).
#include "harness/bench_main.hpp"

#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "harness/sweep.hpp"
#include "ovb/backend_kind.hpp"
#include "ovb/cli.hpp"
#include "ovb/context.hpp"
#include "ovb/device_connections.hpp"
#include "ovb/error.hpp"
#include "ovb/output_file.hpp"
#include "ovb/run_main.hpp"

namespace ovb::mb {

void add_common_options(CLI::App& app, CommonOptions& o) {
  add_backend_options(app, o.backend);
  app.add_option("--sweep", o.sweep,
                 "Sweep file: quick, full, or a JSON file; options given on the command line "
                 "override it (format: microbench/README.md)");
  app.add_option("--repetitions", o.repetitions,
                 "Repetitions of each benchmark; 2 or more adds mean/median/stddev/cv aggregates "
                 "(0: --benchmark_repetitions, default 1)")
      ->check(ovb::non_negative())
      ->capture_default_str();
  app.add_option("--min-time", o.min_time,
                 "Measured seconds per benchmark before Google Benchmark stops adding iterations "
                 "(0: --benchmark_min_time, default 0.5)")
      ->check(ovb::non_negative())
      ->capture_default_str();
  app.add_option("--iterations", o.iterations,
                 "Fixed number of timed samples per benchmark (0: adaptive, from --min-time)")
      ->check(ovb::non_negative())
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed runs of each workload before its first sample")
      ->check(ovb::non_negative())
      ->capture_default_str();
  // Tests only: proves that the correctness check catches a wrong result. Hidden from --help.
  app.add_flag("--inject-wrong", o.inject_wrong)->group("");
}

benchmark::internal::Benchmark* add_benchmark(BenchEnv& env, const std::string& name,
                                              std::function<void(benchmark::State&)> body) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [body](benchmark::State& st) { body(st); });
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  const CommonOptions& o = env.opts();
  if (o.repetitions > 0) b->Repetitions(o.repetitions);
  if (o.min_time > 0) b->MinTime(o.min_time);
  if (o.iterations > 0) b->Iterations(o.iterations);
  return b;
}

void check_cli_grid(const GridShape& grid, const std::set<std::string>& cli, int world) {
  for (const char* o : {"--gx", "--gy", "--gz", "--gdata"})
    if (cli.count(o)) {
      Grid(grid, world);  // throws UsageError naming the factor that is wrong
      return;
    }
}

namespace {
std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> v;
  for (std::string& a : args) v.push_back(a.data());
  v.push_back(nullptr);
  return v;
}
}  // namespace

int bench_main(const Program& program, int argc, char** argv) {
  return run_main(program.name, argc, argv, [&](const LaunchContext& ctx) {
    SplitArgs args = split_args(argc, argv);
    CLI::App app{program.about, program.name};
    app.footer(gbench_flags_help());
    CommonOptions common;
    add_common_options(app, common);
    program.add_options(app);
    std::vector<char*> own = argv_of(args.own);
    parse_cli(app, static_cast<int>(args.own.size()), own.data(), ctx);
    // --benchmark_out=- : the JSON alone on stdout, the table on stderr (as parse_cli does).
    if (is_stdout_name(args.out.out_path)) reserve_stdout_for_results();
    std::set<std::string> cli;
    for (const CLI::Option* opt : app.get_options())
      if (opt->count() > 0) cli.insert(opt->get_name());
    if (!common.sweep.empty())
      apply_sweep(app, program.name, common.sweep, backend_kind(common.backend));
    if (program.configure) program.configure(ctx, cli);

    // Google Benchmark's own --benchmark_min_time also decides which run is reported (and topped
    // up to the minimum sample count): the harness needs its value.
    for (const std::string& a : args.gbench)
      if (a.rfind("--benchmark_min_time=", 0) == 0 && common.min_time == 0) {
        try {
          common.min_time = std::stod(a.substr(a.find('=') + 1));
        } catch (const std::exception&) {
          throw UsageError("--benchmark_min_time: not a number of seconds: '" + a + "'");
        }
      }
    std::vector<char*> gb = argv_of(args.gbench);
    int gb_argc = static_cast<int>(args.gbench.size());
    benchmark::Initialize(&gb_argc, gb.data());
    if (gb_argc > 1) throw UsageError("unknown Google Benchmark flag '" + std::string(gb[1]) + "'");

    std::unique_ptr<Backend> backend = make_backend(common.backend, ctx);
    const DeviceConnections connections = check_device_connections(
        std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), backend->name(), program.streams);
    if (ctx.rank == 0)
      for (const std::string& w : connections.warnings)
        std::cerr << program.name << ": warning: " << w << std::endl;
    std::map<std::string, std::int64_t> wrong;
    int all_errored = 0;  // rank 0 decides: only it holds the records
    std::string why;
    {
      BenchEnv env(ctx, *backend, common);
      program.register_all(env);
      const std::vector<RunRecord> records = run_benchmarks(args.out, ctx.rank, ctx.world, [&] {
        nlohmann::json c = run_context(backend.get(), ctx);
        record_device_connections(c, connections);
        return c;
      });
      if (ctx.rank == 0 && program.report) program.report(records);
      why = every_case_errored(records);
      all_errored = why.empty() ? 0 : 1;
      OVB_CHECK_MPI(MPI_Bcast(&all_errored, 1, MPI_INT, 0, MPI_COMM_WORLD));
      wrong = env.wrong();
      benchmark::ClearRegisteredBenchmarks();  // their closures refer to env
    }
    benchmark::Shutdown();
    if (all_errored) {
      // Nothing was measured: a caller (the suite, a script) must not take this run as done.
      if (ctx.rank == 0) write_error_line(program.name, 0, 1, why);
      return 1;
    }
    if (wrong.empty()) return 0;
    if (ctx.rank == 0) {
      std::cerr << program.name << ": error: the correctness check found wrong results in "
                << wrong.size() << " benchmark(s):";
      for (const auto& [name, n] : wrong) std::cerr << "\n  " << name << ": " << n << " wrong";
      std::cerr << std::endl;
    }
    return 1;
  });
}

}  // namespace ovb::mb
