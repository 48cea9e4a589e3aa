// ovb-gemm: GEMM throughput (Google Benchmark) on the CUDA backend (cuBLASLt: fp32, tf32, fp16,
// bf16, fp8) or the host backend (OpenBLAS fp32), for explicit shapes or the local GEMMs of a GPT
// on a 4D grid. Examples:
//   ovb-gemm --shapes 8192x8192x8192 --dtypes bf16 --autotune 8
//   ovb-gemm --preset 13B --gx 2 --gy 2 --batch 16 --dtypes bf16,fp8 --benchmark_out=gemm.json
//   mpirun -np 4 ovb-gemm --sweep quick --backend host
// Options: ovb-gemm --help; counters and output: microbench/README.md.
#include <set>
#include <string>
#include <vector>

#include "gemm/gemm_bench.hpp"
#include "harness/axes.hpp"
#include "harness/bench_main.hpp"
#include "harness/gemm_cases.hpp"
#include "harness/gemm_workload.hpp"
#include "harness/sizes.hpp"
#include "ovb/cli.hpp"
#include "ovb/error.hpp"

namespace {

struct GemmOptions {
  ovb::mb::GemmSelection gemms;
  ovb::GridShape grid;
  int autotune = 0;
  int autotune_reps = 5;
  bool l2_flush = false;
  std::size_t flush_bytes = 256u << 20;
  int inner = 1;
  std::string inputs = "exact";
};

ovb::mb::Program gemm_program(GemmOptions& o) {
  ovb::mb::Program p;
  p.name = "ovb-gemm";
  p.about = "GEMM throughput on cuBLASLt (CUDA) or OpenBLAS (host), explicit or GPT-layer shapes";
  p.add_options = [&o](CLI::App& app) {
    ovb::mb::add_gemm_selection_options(app, o.gemms, "");
    ovb::add_grid_options(app, o.grid);
    app.add_option("--autotune", o.autotune,
                   "Time the top N cuBLASLt heuristic algorithms and use the fastest (0: the "
                   "heuristic's first)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    app.add_option("--autotune-reps", o.autotune_reps, "Samples per autotune candidate")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_flag("--l2-flush", o.l2_flush,
                 "Overwrite a buffer larger than the L2 cache before every sample (cold cache)");
    // Parsed once, as it is read (sweep files set options through the same callback).
    app.add_option_function<std::string>(
           "--flush-bytes",
           [&o](const std::string& v) { o.flush_bytes = ovb::mb::parse_bytes(v, "--flush-bytes"); },
           "Size of the L2 flush buffer (e.g. 256M)")
        ->default_str("256M");
    app.add_option("--inner", o.inner,
                   "GEMMs per timed sample (back to back); the reported time is per GEMM")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--inputs", o.inputs,
                   "Values of A and B: exact (-1, 0, 1; C checked to the bit) or random (sign, "
                   "exponent and seven significant bits vary, as in training data: its switching "
                   "power, and so its clock under a power cap; C checked to fp32 accumulation's "
                   "bound)")
        ->check(CLI::IsMember(ovb::mb::kGemmInputNames))
        ->capture_default_str();
  };
  p.configure = [&o](const ovb::LaunchContext&, const std::set<std::string>&) {
    ovb::mb::gemm_cases(o.gemms, o.grid);  // fails before the run
  };
  p.register_all = [&o](ovb::mb::BenchEnv& env) {
    std::string gpt_label;
    const auto cases = ovb::mb::Axis<ovb::mb::GemmCase>::derived(
        "GEMM cases", ovb::mb::gemm_cases(o.gemms, o.grid, &gpt_label));
    const auto types = ovb::mb::Axis<ovb::GemmType>::derived(
        "GEMM types", ovb::mb::gemm_types(o.gemms, env.backend().name()));
    const std::size_t flush_bytes = o.l2_flush ? o.flush_bytes : 0;
    ovb::mb::for_each_point({&types, &cases}, [&](const ovb::mb::Point& at) {
      ovb::mb::GemmPoint pt;
      pt.gcase = cases.at(at);
      pt.type = types.at(at);
      pt.label = pt.gcase.tag.empty() ? "" : gpt_label;
      pt.autotune = o.autotune;
      pt.autotune_reps = o.autotune_reps;
      pt.flush_bytes = flush_bytes;
      pt.inner = o.inner;
      pt.inputs = ovb::mb::parse_gemm_inputs(o.inputs);
      ovb::mb::add_benchmark(
          env, ovb::mb::gemm_benchmark_name(pt),
          [&env, pt](benchmark::State& st) { ovb::mb::run_gemm_point(st, env, pt); });
    });
  };
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  GemmOptions o;
  return ovb::mb::bench_main(gemm_program(o), argc, argv);
}
