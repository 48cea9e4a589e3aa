// One ovb-gemm benchmark point: a GEMM case in one precision, timed with events (max over ranks),
// optionally autotuned and with the L2 cache flushed before every sample.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>

#include "harness/env.hpp"
#include "harness/gemm_cases.hpp"
#include "harness/gemm_workload.hpp"

namespace ovb::mb {

struct GemmPoint {
  GemmCase gcase;
  GemmType type = GemmType::bf16;
  std::string label;            // e.g. the GPT configuration
  int autotune = 0;             // candidates to try; 0 or 1: the heuristic's first
  int autotune_reps = 5;        // samples per candidate
  std::size_t flush_bytes = 0;  // > 0: memset this many bytes before every sample (L2 flush)
  int inner = 1;                // GEMMs per sample
  GemmInputs inputs = GemmInputs::exact;  // the data timed (gemm_workload.hpp)
};

// "gemm/bf16/qkv.fwd/4096x3072x1024/nt" ("gemm/<type>[/<tag>]/<MxNxK>/<TATB>").
std::string gemm_benchmark_name(const GemmPoint& p);

// Counters: m, n, k, flop, time_us, tflops, pct_peak (when the peak is known), algo, wrong;
// with autotuning also autotune_candidates, autotune_default_us, autotune_best_us,
// default_over_best and over_best (see microbench/README.md).
void run_gemm_point(benchmark::State& state, BenchEnv& env, const GemmPoint& p);

}  // namespace ovb::mb
