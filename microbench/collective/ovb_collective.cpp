// ovb-collective: all-reduce, reduce-scatter and all-gather bandwidth (Google Benchmark, plus an
// nccl-tests-style table) over the world or one dimension of a 4D grid, on NCCL (CUDA backend) or
// MPI (host backend), with sizes swept like nccl-tests (-b/-e/-f). Examples:
//   mpirun -np 8 ovb-collective -b 1K -e 1G -f 2 --dtypes bf16 --benchmark_out=coll.json
//   mpirun -np 8 ovb-collective --gx 2 --gy 4 --groups x,y --colls all_gather --max-ctas 2,8
//   mpirun -np 4 ovb-collective --sweep quick --backend host
// Options: ovb-collective --help; counters, table and output: microbench/README.md.
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include "collective/coll_bench.hpp"
#include "collective/nccl_table.hpp"
#include "harness/bench_main.hpp"
#include "harness/comm_options.hpp"
#include "harness/sizes.hpp"
#include "ovb/cli.hpp"
#include "ovb/error.hpp"

namespace {

struct CollOptions {
  std::vector<std::string> colls{"all_reduce", "reduce_scatter", "all_gather"};
  std::vector<std::string> dtypes{"default"};
  std::vector<int> in_place{0, 1};
  std::string min_bytes = "1K", max_bytes = "64M";
  std::size_t factor = 4;
  ovb::mb::CommOptions comm;
  int inner = 1;
  bool no_table = false;
  std::map<std::string, ovb::mb::CollPoint> points;  // registered benchmarks, for the table
};

ovb::mb::Program collective_program(CollOptions& o) {
  ovb::mb::Program p;
  p.name = "ovb-collective";
  p.about = "Collective bandwidth (nccl-tests conventions) on NCCL (CUDA) or MPI (host)";
  p.add_options = [&o](CLI::App& app) {
    ovb::mb::add_colls_option(app, o.colls);
    app.add_option("--dtypes", o.dtypes,
                   "Element types: bf16, fp16, fp32; default: bf16 on CUDA, fp32 on host")
        ->delimiter(',')
        ->check(CLI::IsMember({"default", "bf16", "fp16", "fp32"}))
        ->capture_default_str();
    app.add_option("-b,--min-bytes", o.min_bytes,
                   "Smallest size S (bytes of the full buffer, nccl-tests' -b), e.g. 8, 1K, 64M")
        ->capture_default_str();
    app.add_option("-e,--max-bytes", o.max_bytes, "Largest size S (nccl-tests' -e)")
        ->capture_default_str();
    app.add_option("-f,--step-factor", o.factor, "Size multiplication factor (nccl-tests' -f)")
        ->check(ovb::positive())
        ->capture_default_str();
    app.add_option("--in-place", o.in_place, "0 (out of place), 1 (in place), or 0,1")
        ->delimiter(',')
        ->check(CLI::Range(0, 1))
        ->capture_default_str();
    ovb::mb::add_comm_options(app, o.comm);
    app.add_option("--inner", o.inner,
                   "Collectives per timed sample (back to back, like nccl-tests' -n); the "
                   "reported time is per collective")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_flag("--no-table", o.no_table, "Do not print the nccl-tests-style table");
  };
  p.configure = [&o](const ovb::LaunchContext& ctx, const std::set<std::string>& cli) {
    ovb::mb::size_sweep(ovb::mb::parse_bytes(o.min_bytes, "--min-bytes"),
                        ovb::mb::parse_bytes(o.max_bytes, "--max-bytes"), o.factor);
    ovb::mb::check_comm_options(o.comm, cli, ctx.world);
  };
  p.register_all = [&o](ovb::mb::BenchEnv& env) {
    ovb::mb::setup_groups(env, o.comm);
    const auto sizes =
        ovb::mb::size_sweep(ovb::mb::parse_bytes(o.min_bytes, "--min-bytes"),
                            ovb::mb::parse_bytes(o.max_bytes, "--max-bytes"), o.factor);
    std::set<ovb::DType> types;
    for (const std::string& d : o.dtypes)
      types.insert(d == "default" ? ovb::mb::default_dtype(env.backend()) : ovb::parse_dtype(d));
    for (const std::string& coll : o.colls)
      for (ovb::DType t : types)
        for (const std::string& g : o.comm.groups)
          for (const ovb::CommConfig& cfg : ovb::mb::comm_configs(o.comm))
            for (std::size_t bytes : sizes)
              for (int ip : o.in_place) {
                ovb::mb::CollPoint pt;
                pt.kind = ovb::parse_coll_kind(coll);
                pt.type = t;
                pt.group = ovb::mb::GroupSpec::parse(g);
                pt.in_place = ip != 0;
                pt.bytes = bytes;
                pt.cfg = cfg;
                pt.inner = o.inner;
                const std::string name = ovb::mb::coll_benchmark_name(pt);
                if (!o.points.emplace(name, pt).second) continue;  // listed twice
                ovb::mb::add_benchmark(env, name, [&env, pt](benchmark::State& st) {
                  ovb::mb::run_coll_point(st, env, pt);
                });
              }
  };
  p.report = [&o](const std::vector<ovb::mb::RunRecord>& records) {
    if (!o.no_table) ovb::mb::print_nccl_table(std::cout, records, o.points);
  };
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  CollOptions o;
  return ovb::mb::bench_main(collective_program(o), argc, argv);
}
