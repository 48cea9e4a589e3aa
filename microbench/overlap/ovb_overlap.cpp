// ovb-overlap: one GEMM and one collective launched concurrently on two streams, against each
// alone, swept over the scenario (overlap/scenario.hpp), GEMM shape, collective kind and size,
// stream priorities, launch order, NCCL CTA settings and (one value per process)
// CUDA_DEVICE_MAX_CONNECTIONS; the sweep's options are typed axes (harness/axes.hpp), parsed once.
// Dependent scenarios (decomposition) cut the GEMM and its collective into --chunks pieces along
// --split and pipeline them instead; --sizes and --orders do not apply to them. The ring scenario
// exchanges shards point to point, one step per rank (--exchange send_recv|copy_engine).
// --gemm-sms gives the GEMM an SM budget; every result records its transport (transport.hpp).
// The blocking_wait scenario (host only) runs the GEMM and then the collective, waited for, on one
// stream: the wait a blocking collective costs after compute (overlap/blocking_wait.hpp).
// On the host backend the "overlap" is MPI progress against OpenBLAS: the code path and metrics,
// not meaningful numbers.
// Examples:
//   mpirun -np 8 ovb-overlap --shapes 8192x8192x8192 --sizes 64M --priorities equal,comm_high
//   microbench/overlap-cdmc-sweep.sh out/overlap mpirun -np 8 ovb-overlap --sweep full
//   mpirun -np 4 ovb-overlap --sweep quick --backend host
//   mpirun -np 4 ovb-overlap --backend host --scenarios decomposition --shapes 64x64x32
//          --colls all_reduce,reduce_scatter --chunks 1,2,4 --split m,n
//   mpirun -np 4 ovb-overlap --scenarios ring --colls all_gather,reduce_scatter
//          --exchange send_recv,copy_engine --gemm-sms default,66 --shapes 8192x8192x8192
// Options: ovb-overlap --help; counters and how to read them: microbench/README.md.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>
#include <vector>

#include "harness/axes.hpp"
#include "harness/bench_main.hpp"
#include "harness/comm_options.hpp"
#include "harness/gemm_cases.hpp"
#include "ovb/error.hpp"
#include "ovb/run_main.hpp"
#include "overlap/blocking_wait.hpp"
#include "overlap/overlap_bench.hpp"

namespace {

using ovb::mb::Axis;

Axis<const ovb::mb::OverlapScenario*> scenarios_axis() {
  std::vector<std::pair<std::string, const ovb::mb::OverlapScenario*>> words;
  std::string help = "Overlap scenarios (what runs on the two streams):";
  for (const ovb::mb::OverlapScenario& s : ovb::mb::overlap_scenarios()) {
    words.emplace_back(s.name, &s);
    help += " " + s.name + " (" + s.about + ")";
  }
  return ovb::mb::enum_axis<const ovb::mb::OverlapScenario*>(
      "--scenarios", help, {ovb::mb::kDefaultScenario}, std::move(words));
}

// CUDA_DEVICE_MAX_CONNECTIONS values: default (unset), env (as the environment has it), 1..32.
std::string cdmc_problem(const std::string& v) {
  if (v == "default" || v == "env") return "";
  if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(v) < 1 || std::stoi(v) > 32)
    return "is not default, env or 1..32";
  return "";
}

struct OverlapOptions {
  Axis<const ovb::mb::OverlapScenario*> scenarios = scenarios_axis();
  ovb::mb::GemmSelection gemms;
  Axis<ovb::CollKind> colls = ovb::mb::colls_axis({"all_reduce"});
  Axis<std::size_t> sizes = ovb::mb::bytes_axis(
      "--sizes", "Collective sizes S (bytes of the full buffer), e.g. 16M, or MIN:MAX[:FACTOR]",
      {"16M"});
  ovb::mb::CommOptions comm;
  Axis<ovb::mb::PrioMode> priorities = ovb::mb::enum_axis<ovb::mb::PrioMode>(
      "--priorities", "Stream priorities: equal, comm_high (collective stream high), compute_high",
      {"equal", "comm_high", "compute_high"},
      {{"equal", ovb::mb::PrioMode::equal},
       {"comm_high", ovb::mb::PrioMode::comm_high},
       {"compute_high", ovb::mb::PrioMode::compute_high}});
  Axis<bool> comm_first = ovb::mb::enum_axis<bool>(
      "--orders", "Launch order on the host: comm_first (collective, then GEMM), gemm_first",
      {"comm_first", "gemm_first"}, {{"comm_first", true}, {"gemm_first", false}});
  Axis<std::string> cdmc = ovb::mb::string_axis(
      "--cdmc",
      "CUDA_DEVICE_MAX_CONNECTIONS for this process: default (unset), 1..32, or env (as the "
      "environment has it, the default); one value per process - sweep with "
      "microbench/overlap-cdmc-sweep.sh",
      {"env"}, cdmc_problem);
  // Dependent scenarios only (the others ignore them).
  Axis<std::int64_t> chunks = ovb::mb::int64_axis(
      "--chunks",
      "Dependent scenarios: pieces the GEMM and its collective are cut into (1: unchunked); each "
      "must divide the split dimension",
      {"1", "2", "4"}, 1, 4096);
  Axis<ovb::mb::SplitAxis> split = ovb::mb::enum_axis<ovb::mb::SplitAxis>(
      "--split", "Dependent scenarios: the dimension of C cut into chunks: m (rows), n (columns)",
      {"m"}, {{"m", ovb::mb::SplitAxis::m}, {"n", ovb::mb::SplitAxis::n}});
  Axis<std::int64_t> gemm_sms = ovb::mb::int64_axis(
      "--gemm-sms",
      "SM budgets of the GEMM (cuBLASLt's SM count target), default (the device's) or N >= 1; "
      "CUDA only",
      {"default"}, 1, 1 << 20, {{"default", -1}});
  Axis<ovb::mb::Exchange> exchange = ovb::mb::enum_axis<ovb::mb::Exchange>(
      "--exchange",
      "Ring scenarios: how a step moves its shard: send_recv (MPI on host, ncclSend/ncclRecv on "
      "CUDA), copy_engine (CUDA IPC + cudaMemcpyAsync, no SM; CUDA only)",
      {"send_recv"},
      {{"send_recv", ovb::mb::Exchange::send_recv},
       {"copy_engine", ovb::mb::Exchange::copy_engine}});
  bool require_transport = false;
  double inject_delay_us = 0;  // hidden, tests: blocking_wait's last rank sleeps this long
  std::string cdmc_run;
  bool print_cdmc = false;
  std::string cdmc_label;
};

// CUDA_DEVICE_MAX_CONNECTIONS is read when the CUDA context is created: one value per process.
// Sets (or, for "default", unsets) it before the backend exists, and names it for the labels.
void apply_cdmc(OverlapOptions& o, const ovb::LaunchContext& ctx) {
  const std::vector<std::string>& values = o.cdmc.values();
  if (o.print_cdmc) {
    if (ctx.rank == 0)
      for (const std::string& v : values) std::cout << v << "\n";
    throw ovb::ExitRequest{0};
  }
  if (values.empty()) throw ovb::UsageError("--cdmc: no value given");
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
  p.streams = 2;
  p.add_options = [&o](CLI::App& app) {
    o.scenarios.add_to(app);
    ovb::mb::add_gemm_selection_options(app, o.gemms, "the collective uses the GEMM's output type");
    o.colls.add_to(app);
    o.sizes.add_to(app);
    ovb::mb::add_comm_options(app, o.comm);
    o.priorities.add_to(app);
    o.comm_first.add_to(app);
    o.chunks.add_to(app);
    o.split.add_to(app);
    o.exchange.add_to(app);
    o.gemm_sms.add_to(app);
    app.add_flag("--require-transport", o.require_transport,
                 "A requested transport (CTA policy 2: nccl-ce) that is not observed is an error, "
                 "not a warning");
    app.add_option("--inject-delay-us", o.inject_delay_us)->check(CLI::Range(0.0, 1e7))->group("");
    o.cdmc.add_to(app);
    app.add_option("--cdmc-run", o.cdmc_run,
                   "Run only this one of the --cdmc values (set by overlap-cdmc-sweep.sh)");
    app.add_flag("--print-cdmc", o.print_cdmc,
                 "Print the --cdmc values (after the sweep file), one per line, and exit (used by "
                 "overlap-cdmc-sweep.sh)");
  };
  p.configure = [&o](const ovb::LaunchContext& ctx, const std::set<std::string>& cli) {
    apply_cdmc(o, ctx);
    ovb::mb::gemm_cases(o.gemms, o.comm.grid);  // fails before the run
    ovb::mb::check_comm_options(o.comm, cli, ctx.world);
  };
  p.register_all = [&o](ovb::mb::BenchEnv& env) {
    ovb::mb::setup_groups(env, o.comm);
    ovb::mb::check_cta_backend(env.backend(), o.comm);
    std::string gpt_label;
    const auto cases = Axis<ovb::mb::GemmCase>::derived(
        "GEMM cases", ovb::mb::gemm_cases(o.gemms, o.comm.grid, &gpt_label));
    const auto types = Axis<ovb::GemmType>::derived(
        "GEMM types", ovb::mb::gemm_types(o.gemms, env.backend().name()));
    const ovb::mb::CommOptions& c = o.comm;
    std::set<std::string> names;
    ovb::mb::for_each_point({&o.scenarios, &types, &cases, &o.colls, &c.groups, &o.sizes,
                             &c.min_ctas, &c.max_ctas, &c.cta_policy, &o.priorities, &o.comm_first,
                             &o.chunks, &o.split, &o.exchange, &o.gemm_sms},
                            [&](const ovb::mb::Point& at) {
                              ovb::mb::OverlapPoint pt;
                              pt.scenario = o.scenarios.at(at);
                              pt.gcase = cases.at(at);
                              pt.gemm_type = types.at(at);
                              pt.kind = o.colls.at(at);
                              pt.coll_type = ovb::output_dtype(pt.gemm_type);
                              pt.group = c.groups.at(at);
                              pt.bytes = o.sizes.at(at);
                              pt.cfg = ovb::mb::comm_config(c, at);
                              pt.prio = o.priorities.at(at);
                              pt.comm_first = o.comm_first.at(at);
                              pt.cdmc = o.cdmc_label;
                              pt.label = pt.gcase.tag.empty() ? "" : gpt_label;
                              pt.chunks = static_cast<int>(o.chunks.at(at));
                              pt.split = o.split.at(at);
                              pt.exchange = o.exchange.at(at);
                              pt.gemm_sms = static_cast<int>(o.gemm_sms.at(at));
                              pt.require_transport = o.require_transport;
                              pt.inject_delay_us = o.inject_delay_us;
                              for (const std::string& why :
                                   {ovb::mb::backend_problem(env.backend(), pt.gemm_sms,
                                                             pt.scenario->chunk_per_rank,
                                                             pt.exchange),
                                    ovb::mb::sequential_problem(env.backend(), *pt.scenario)})
                                if (!why.empty()) throw ovb::UsageError(why);
                              if (pt.scenario->sequential) {  // one stream, fixed order
                                pt.prio = ovb::mb::PrioMode::equal;
                                pt.comm_first = false;
                              }
                              if (pt.scenario->chunk_per_rank) {  // --chunks, --split: n/a
                                pt.chunks = env.group_problem(pt.group).empty()
                                                ? env.group_size(pt.group)
                                                : 1;
                                pt.split = ovb::mb::SplitAxis::m;
                              } else {
                                pt.exchange = ovb::mb::Exchange::send_recv;  // n/a
                              }
                              if (pt.scenario->dependent) {
                                pt.bytes = pt.scenario->bytes(pt);  // --sizes does not apply
                                if (env.group_problem(pt.group).empty())
                                  if (const std::string why =
                                          pt.scenario->problem(pt, env.group_size(pt.group));
                                      !why.empty())
                                    throw ovb::UsageError(why);
                              }
                              const std::string name = ovb::mb::overlap_benchmark_name(pt);
                              if (!names.insert(name).second) return;  // a value listed twice
                              ovb::mb::add_benchmark(env, name, [&env, pt](benchmark::State& st) {
                                if (pt.scenario->sequential)
                                  ovb::mb::run_wait_point(st, env, pt);
                                else
                                  ovb::mb::run_overlap_point(st, env, pt);
                              });
                            });
  };
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  OverlapOptions o;
  return ovb::mb::bench_main(overlap_program(o), argc, argv);
}
