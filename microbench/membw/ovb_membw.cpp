// ovb-membw: achieved memory bandwidth (Google Benchmark) of the memory-bound kernel classes of a
// training step (copy, layernorm, rmsnorm, bias_gelu, swiglu, rope, dropout, residual, softmax,
// cross_entropy, adamw, grad_accum; ovb/mem_class.hpp), on the CUDA backend (small CUDA kernels,
// fp32 and bf16) or the host backend (fp32 loops, one core per rank), each checked before timing.
// Examples:
//   ovb-membw --sizes 1M:1G:4 --dtypes bf16,fp32                        # one GPU
//   mpirun -np 4 ovb-membw --sweep quick --backend host --benchmark_out=membw.json
// Feeds ovb-model calibrate --mem. Options: ovb-membw --help; counters: microbench/README.md.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <optional>
#include <vector>

#include "harness/axes.hpp"
#include "harness/bench_main.hpp"
#include "membw/membw_bench.hpp"

namespace {

// One class name, or "all".
std::vector<ovb::MemClass> parse_classes(const std::string& item) {
  if (item == "all") return {ovb::kMemClasses.begin(), ovb::kMemClasses.end()};
  return {ovb::parse_mem_class(item)};
}

struct MembwOptions {
  ovb::mb::Axis<ovb::MemClass> classes{"--classes",
                                       "Kernel classes (list or 'all'): " + ovb::mem_class_names(),
                                       {"all"},
                                       parse_classes};
  ovb::mb::Axis<std::optional<ovb::DType>> dtypes = ovb::mb::enum_axis<std::optional<ovb::DType>>(
      "--dtypes", "Activation dtypes: fp32, bf16 (CUDA only); default: fp32 on host, bf16 on CUDA",
      {"default"},
      {{"fp32", ovb::DType::f32}, {"bf16", ovb::DType::bf16}, {"default", std::nullopt}});
  ovb::mb::Axis<std::size_t> sizes = ovb::mb::bytes_axis(
      "--sizes", "Bytes of each kernel's main tensor (n = size / dtype size)", {"1M:1G:4"});
  std::int64_t row = 4096;
  int inner = 1;
};

ovb::mb::Program membw_program(MembwOptions& o) {
  ovb::mb::Program p;
  p.name = "ovb-membw";
  p.about = "Achieved memory bandwidth of the memory-bound kernel classes (CUDA or host)";
  p.add_options = [&o](CLI::App& app) {
    o.classes.add_to(app);
    o.dtypes.add_to(app);
    o.sizes.add_to(app);
    app.add_option("--row", o.row,
                   "Row length of the row-wise classes (normalisation, softmax, cross-entropy), "
                   "the bias and RoPE's head vector (even); sizes must be whole rows")
        ->check(CLI::Range(32, 1 << 24))
        ->capture_default_str();
    app.add_option("--inner", o.inner,
                   "Kernels per timed sample (back to back); the reported time is per kernel")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
  };
  p.register_all = [&o](ovb::mb::BenchEnv& env) {
    std::vector<ovb::DType> types;
    for (const auto& d : o.dtypes.values()) {
      const ovb::DType t = d                                ? *d
                           : env.backend().name() == "host" ? ovb::DType::f32
                                                            : ovb::DType::bf16;
      if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
    }
    const auto dtypes = ovb::mb::Axis<ovb::DType>::derived("dtypes", types);
    ovb::mb::for_each_point({&o.classes, &dtypes, &o.sizes}, [&](const ovb::mb::Point& at) {
      ovb::mb::MemPoint pt;
      pt.c = o.classes.at(at);
      pt.t = dtypes.at(at);
      pt.size = o.sizes.at(at);
      pt.row = o.row;
      pt.inner = o.inner;
      ovb::mb::add_benchmark(
          env, ovb::mb::membw_benchmark_name(pt),
          [&env, pt](benchmark::State& st) { ovb::mb::run_mem_point(st, env, pt); });
    });
  };
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  MembwOptions o;
  return ovb::mb::bench_main(membw_program(o), argc, argv);
}
