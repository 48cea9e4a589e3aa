// ovb-model-bench: how fast the model costs configurations (Google Benchmark). The headline cases
// are the ones the model is built for: every configuration of GPT-175B on 65,536 GPUs (all
// divisors, every distinct X/Y/Z order), with the micro-batch and sharding chosen per
// configuration too, each in well under a second. The run context is merged into the JSON's "context".
//   ovb-model-bench --benchmark_out=results/model/search-speed.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "ovb/context.hpp"
#include "ovb/io.hpp"
#include "ovb/model/megatron_search.hpp"
#include "ovb/run_main.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/search.hpp"

namespace {

using namespace ovb;
using namespace ovb::model;

// (preset, GPUs, batch, pow2 only) with every overlap flag on and full recomputation (so that
// 175B has configurations that fit in an A100's 40 GB).
void BM_Search(benchmark::State& state, const char* preset, int gpus, std::int64_t batch,
               bool pow2) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset(preset);
  SearchOptions so;
  so.gpus = gpus;
  so.pow2_only = pow2;
  so.base.batch = batch;
  so.base.recompute = true;
  so.base.act_dtype = DType::bf16;
  parse_overlap("all", so.base);
  std::int64_t configs = 0, fit = 0;
  for (auto _ : state) {
    const SearchResult r = search(m, so, mc);
    configs = r.configs;
    fit = r.configs - r.unfit;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.counters["configs"] = static_cast<double>(configs);
  state.counters["fitting"] = static_cast<double>(fit);
  state.counters["configs_per_s"] = benchmark::Counter(
      static_cast<double>(configs), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_Search, gpt175B_65536gpus, "175B", 65536, 16384, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, gpt175B_65536gpus_pow2, "175B", 65536, 16384, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, gpt1_3B_512gpus, "1.3B", 512, 1024, false)
    ->Unit(benchmark::kMillisecond);

// The search with the micro-batch and sharded optimizer chosen per configuration (`ovb-model
// search --strategy all --micro-batch auto --shard-optimizer auto`, overlap none as the command
// line's default): every divisor of the local batch and sharding off/on for every grid and order,
// GPT-175B on 65,536 H100s at batch 8192. `variants` counts the (configuration, variant) pairs the
// search chooses among; it replays only those that can win (search_choice.cpp).
void BM_SearchChosen(benchmark::State& state, const char* machine, const char* preset, int gpus,
                     std::int64_t batch) {
  const Machine mc = load_machine(machine);
  const GptShape m = gpt_preset(preset);
  SearchOptions so;
  so.gpus = gpus;
  so.base.batch = batch;
  so.base.act_dtype = DType::bf16;
  so.choose.micro_batch = so.choose.shard_optimizer = true;
  std::int64_t configs = 0, variants = 0, fit = 0;
  for (auto _ : state) {
    const SearchResult r = search(m, so, mc);
    configs = r.configs;
    variants = r.variants;
    fit = r.configs - r.unfit;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.counters["configs"] = static_cast<double>(configs);
  state.counters["variants"] = static_cast<double>(variants);
  state.counters["fitting"] = static_cast<double>(fit);
}
BENCHMARK_CAPTURE(BM_SearchChosen, gpt175B_65536gpus_h100_batch8192, "dgx-h100", "175B", 65536,
                  8192)
    ->Unit(benchmark::kMillisecond);

// One configuration with its full breakdown (what explain and compare call).
void BM_Predict(benchmark::State& state) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset("175B");
  GptPlanOptions o;
  o.grid = GridShape::parse("4x8x16x128");
  o.batch = 16384;
  o.recompute = true;
  o.act_dtype = DType::bf16;
  parse_overlap("all", o);
  for (auto _ : state) benchmark::DoNotOptimize(predict(m, o, mc).timeline.iteration_us);
}
BENCHMARK(BM_Predict)->Unit(benchmark::kMicrosecond);

// The Megatron-LM strategy's search of the same case (every tp, pp, micro-batch, virtual stages
// and recompute mode).
void BM_SearchMegatron(benchmark::State& state) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset("175B");
  MegatronSearchOptions o;
  o.gpus = 65536;
  o.batch = 16384;
  std::int64_t configs = 0;
  for (auto _ : state) {
    const MegatronSearchResult r = search_megatron(m, o, mc);
    configs = r.configs;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.counters["configs"] = static_cast<double>(configs);
}
BENCHMARK(BM_SearchMegatron)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  for (int i = 1; i < argc; ++i)
    if (std::string a = argv[i]; a.rfind("--benchmark_out=", 0) == 0) out = a.substr(16);
  return ovb::run_main("ovb-model-bench", argc, argv, [&](const ovb::LaunchContext& ctx) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (!out.empty()) {  // merge the suite's run context into Google Benchmark's
      nlohmann::json doc = ovb::read_json(out);
      const nlohmann::json context = ovb::run_context(nullptr, ctx);
      for (auto it = context.begin(); it != context.end(); ++it) doc["context"][it.key()] = *it;
      ovb::write_json(out, doc);
    }
    return 0;
  });
}
