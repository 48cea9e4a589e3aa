// ovb-collective: all-reduce, reduce-scatter and all-gather bandwidth (Google Benchmark, plus an
// nccl-tests-style table) over the world or one dimension of a 4D grid, on NCCL (CUDA backend) or
// MPI (host backend), with sizes swept like nccl-tests (-b/-e/-f). Examples:
//   mpirun -np 8 ovb-collective -b 1K -e 1G -f 2 --dtypes bf16 --benchmark_out=coll.json
//   mpirun -np 8 ovb-collective --gx 2 --gy 4 --groups x,y --colls all_gather --max-ctas 2,8
//   mpirun -np 4 ovb-collective --sweep quick --backend host
// Options: ovb-collective --help; counters, table and output: microbench/README.md.
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "collective/coll_bench.hpp"
#include "collective/nccl_table.hpp"
#include "harness/axes.hpp"
#include "harness/bench_main.hpp"
#include "harness/comm_options.hpp"
#include "harness/sizes.hpp"
#include "ovb/cli.hpp"
#include "ovb/error.hpp"

namespace {

using ovb::mb::Axis;

struct CollOptions {
  Axis<ovb::CollKind> colls = ovb::mb::colls_axis({"all_reduce", "reduce_scatter", "all_gather"});
  Axis<std::optional<ovb::DType>> dtypes = ovb::mb::enum_axis<std::optional<ovb::DType>>(
      "--dtypes", "Element types: bf16, fp16, fp32; default: bf16 on CUDA, fp32 on host",
      {"default"},
      {{"default", std::nullopt},
       {"bf16", ovb::DType::bf16},
       {"fp16", ovb::DType::f16},
       {"fp32", ovb::DType::f32}});
  Axis<bool> in_place =
      ovb::mb::bool_axis("--in-place", "0 (out of place), 1 (in place), or 0,1", {"0", "1"});
  // The size axis is nccl-tests' -b -e -f, read as three options and expanded once.
  std::size_t min_bytes = 1u << 10, max_bytes = 64u << 20;
  std::size_t factor = 4;
  Axis<std::size_t> sizes = Axis<std::size_t>::derived("sizes", {});
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
    o.colls.add_to(app);
    o.dtypes.add_to(app);
    app.add_option_function<std::string>(
           "-b,--min-bytes",
           [&o](const std::string& v) { o.min_bytes = ovb::mb::parse_bytes(v, "--min-bytes"); },
           "Smallest size S (bytes of the full buffer, nccl-tests' -b), e.g. 8, 1K, 64M")
        ->default_str("1K");
    app.add_option_function<std::string>(
           "-e,--max-bytes",
           [&o](const std::string& v) { o.max_bytes = ovb::mb::parse_bytes(v, "--max-bytes"); },
           "Largest size S (nccl-tests' -e)")
        ->default_str("64M");
    app.add_option("-f,--step-factor", o.factor, "Size multiplication factor (nccl-tests' -f)")
        ->check(ovb::positive())
        ->capture_default_str();
    o.in_place.add_to(app);
    ovb::mb::add_comm_options(app, o.comm);
    app.add_option("--inner", o.inner,
                   "Collectives per timed sample (back to back, like nccl-tests' -n); the "
                   "reported time is per collective")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_flag("--no-table", o.no_table, "Do not print the nccl-tests-style table");
  };
  p.configure = [&o](const ovb::LaunchContext& ctx, const std::set<std::string>& cli) {
    o.sizes.assign(ovb::mb::size_sweep(o.min_bytes, o.max_bytes, o.factor));
    ovb::mb::check_comm_options(o.comm, cli, ctx.world);
  };
  p.register_all = [&o](ovb::mb::BenchEnv& env) {
    ovb::mb::setup_groups(env, o.comm);
    ovb::mb::check_cta_backend(env.backend(), o.comm);
    std::set<ovb::DType> set;  // "default" resolved, each type once, in the enum's order
    for (const std::optional<ovb::DType>& d : o.dtypes.values())
      set.insert(d ? *d : ovb::mb::default_dtype(env.backend()));
    const auto types = Axis<ovb::DType>::derived("dtypes", {set.begin(), set.end()});
    const ovb::mb::CommOptions& c = o.comm;
    ovb::mb::for_each_point({&o.colls, &types, &c.groups, &c.min_ctas, &c.max_ctas, &c.cta_policy,
                             &o.sizes, &o.in_place},
                            [&](const ovb::mb::Point& at) {
                              ovb::mb::CollPoint pt;
                              pt.kind = o.colls.at(at);
                              pt.type = types.at(at);
                              pt.group = c.groups.at(at);
                              pt.in_place = o.in_place.at(at);
                              pt.bytes = o.sizes.at(at);
                              pt.cfg = ovb::mb::comm_config(c, at);
                              pt.inner = o.inner;
                              const std::string name = ovb::mb::coll_benchmark_name(pt);
                              if (!o.points.emplace(name, pt).second) return;  // listed twice
                              ovb::mb::add_benchmark(env, name, [&env, pt](benchmark::State& st) {
                                ovb::mb::run_coll_point(st, env, pt);
                              });
                            });
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
