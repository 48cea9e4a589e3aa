// ovb-overlap: one GEMM and one collective launched concurrently on two streams, against each
// alone, swept over GEMM shape, collective kind and size, stream priorities, launch order, NCCL
// CTA settings and (one value per process) CUDA_DEVICE_MAX_CONNECTIONS. On the host backend the
// "overlap" is MPI progress against OpenBLAS: the code path and metrics, not meaningful numbers.
// Examples:
//   mpirun -np 8 ovb-overlap --shapes 8192x8192x8192 --sizes 64M --priorities equal,comm_high
//   microbench/overlap-cdmc-sweep.sh out/overlap mpirun -np 8 ovb-overlap --sweep full
//   mpirun -np 4 ovb-overlap --sweep quick --backend host
// Options: ovb-overlap --help; counters and how to read them: microbench/README.md.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>
#include <vector>

#include "harness/bench_main.hpp"
#include "harness/comm_options.hpp"
#include "harness/gemm_cases.hpp"
#include "harness/sizes.hpp"
#include "ovb/error.hpp"
#include "ovb/run_main.hpp"
#include "overlap/overlap_bench.hpp"

namespace {

struct OverlapOptions {
  ovb::mb::GemmSelection gemms;
  std::vector<std::string> colls{"all_reduce"};
  std::vector<std::string> sizes{"16M"};
  ovb::mb::CommOptions comm;
  std::vector<std::string> priorities{"equal", "comm_high", "compute_high"};
  std::vector<std::string> orders{"comm_first", "gemm_first"};
  std::vector<std::string> cdmc;
  std::string cdmc_run;
  bool print_cdmc = false;
  std::string cdmc_label;
};

// CUDA_DEVICE_MAX_CONNECTIONS is read when the CUDA context is created: one value per process.
// Sets (or, for "default", unsets) it before the backend exists, and names it for the labels.
void apply_cdmc(OverlapOptions& o, const ovb::LaunchContext& ctx) {
  const std::vector<std::string> values = o.cdmc.empty() ? std::vector<std::string>{"env"} : o.cdmc;
  for (const std::string& v : values)
    if (v != "default" && v != "env" &&
        (v.find_first_not_of("0123456789") != std::string::npos || v.empty() || v.size() > 2 ||
         std::stoi(v) < 1 || std::stoi(v) > 32))
      throw ovb::UsageError("--cdmc values must be default, env or 1..32, not '" + v + "'");
  if (o.print_cdmc) {
    if (ctx.rank == 0)
      for (const std::string& v : values) std::cout << v << "\n";
    throw ovb::ExitRequest{0};
  }
  std::string v = values[0];
  if (!o.cdmc_run.empty()) {
    if (std::find(values.begin(), values.end(), o.cdmc_run) == values.end())
      throw ovb::UsageError("--cdmc-run " + o.cdmc_run + " is not one of the --cdmc values");
    v = o.cdmc_run;
  } else if (values.size() > 1) {
    throw ovb::UsageError(
        "--cdmc lists " + std::to_string(values.size()) +
        " values, but CUDA_DEVICE_MAX_CONNECTIONS is read once, when the process creates its "
        "CUDA context: run microbench/overlap-cdmc-sweep.sh (one process per value), or give "
        "one value with --cdmc");
  }
  if (v == "default")
    unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  else if (v != "env")
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", v.c_str(), 1);
  const char* now = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  o.cdmc_label = now && *now ? now : "default";
}

ovb::mb::Program overlap_program(OverlapOptions& o) {
  ovb::mb::Program p;
  p.name = "ovb-overlap";
  p.about = "Overlap of one GEMM and one collective on two streams, against each alone";
  p.add_options = [&o](CLI::App& app) {
    ovb::mb::add_gemm_selection_options(app, o.gemms, "the collective uses the GEMM's output type");
    ovb::mb::add_colls_option(app, o.colls);
    app.add_option("--sizes", o.sizes, "Collective sizes S (bytes of the full buffer), e.g. 16M")
        ->delimiter(',')
        ->capture_default_str();
    ovb::mb::add_comm_options(app, o.comm);
    app.add_option("--priorities", o.priorities,
                   "Stream priorities: equal, comm_high (collective stream high), compute_high")
        ->delimiter(',')
        ->check(CLI::IsMember({"equal", "comm_high", "compute_high"}))
        ->capture_default_str();
    app.add_option("--orders", o.orders,
                   "Launch order on the host: comm_first (collective, then GEMM), gemm_first")
        ->delimiter(',')
        ->check(CLI::IsMember({"comm_first", "gemm_first"}))
        ->capture_default_str();
    app.add_option("--cdmc", o.cdmc,
                   "CUDA_DEVICE_MAX_CONNECTIONS for this process: default (unset), 1..32, or env "
                   "(as the environment has it, the default); one value per process - sweep "
                   "with microbench/overlap-cdmc-sweep.sh")
        ->delimiter(',');
    app.add_option("--cdmc-run", o.cdmc_run,
                   "Run only this one of the --cdmc values (set by overlap-cdmc-sweep.sh)");
    app.add_flag("--print-cdmc", o.print_cdmc,
                 "Print the --cdmc values (after the sweep file), one per line, and exit (used by "
                 "overlap-cdmc-sweep.sh)");
  };
  p.configure = [&o](const ovb::LaunchContext& ctx, const std::set<std::string>& cli) {
    apply_cdmc(o, ctx);
    ovb::mb::gemm_cases(o.gemms, o.comm.grid);  // fails before the run
    for (const std::string& s : o.sizes) ovb::mb::parse_bytes(s, "--sizes");
    ovb::mb::check_comm_options(o.comm, cli, ctx.world);
  };
  p.register_all = [&o](ovb::mb::BenchEnv& env) {
    ovb::mb::setup_groups(env, o.comm);
    std::string gpt_label;
    const std::vector<ovb::mb::GemmCase> cases =
        ovb::mb::gemm_cases(o.gemms, o.comm.grid, &gpt_label);
    std::set<std::string> names;
    for (const ovb::GemmType gt : ovb::mb::gemm_types(o.gemms, env.backend().name())) {
      for (const ovb::mb::GemmCase& c : cases)
        for (const std::string& coll : o.colls)
          for (const std::string& g : o.comm.groups)
            for (const std::string& size : o.sizes)
              for (const ovb::CommConfig& cfg : ovb::mb::comm_configs(o.comm))
                for (const std::string& prio : o.priorities)
                  for (const std::string& order : o.orders) {
                    ovb::mb::OverlapPoint pt;
                    pt.gcase = c;
                    pt.gemm_type = gt;
                    pt.kind = ovb::parse_coll_kind(coll);
                    pt.coll_type = ovb::output_dtype(gt);
                    pt.group = ovb::mb::GroupSpec::parse(g);
                    pt.bytes = ovb::mb::parse_bytes(size, "--sizes");
                    pt.cfg = cfg;
                    pt.prio = ovb::mb::parse_prio_mode(prio);
                    pt.comm_first = order == "comm_first";
                    pt.cdmc = o.cdmc_label;
                    pt.label = c.tag.empty() ? "" : gpt_label;
                    const std::string name = ovb::mb::overlap_benchmark_name(pt);
                    if (!names.insert(name).second) continue;
                    ovb::mb::add_benchmark(env, name, [&env, pt](benchmark::State& st) {
                      ovb::mb::run_overlap_point(st, env, pt);
                    });
                  }
    }
  };
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  OverlapOptions o;
  return ovb::mb::bench_main(overlap_program(o), argc, argv);
}
