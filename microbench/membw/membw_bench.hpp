// One ovb-membw benchmark point: a memory-bound kernel class, dtype and size, checked, then timed
// with events (max over ranks): achieved GB/s = bytes moved (mem_class_bytes) / time.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/env.hpp"
#include "ovb/dtype.hpp"
#include "ovb/mem_class.hpp"

namespace ovb::mb {

struct MemPoint {
  MemClass c = MemClass::copy;
  DType t = DType::f32;
  std::size_t size = 0;  // bytes of the main tensor: n = size / dtype size elements
  std::int64_t row = 4096;
  int inner = 1;  // kernels per sample
};

// "membw/layernorm/fp32/16777216" ("membw/<class>/<dtype>/<size in bytes>").
std::string membw_benchmark_name(const MemPoint& p);

// Counters: n, row, size, bytes, time_us, gbps, pct_peak_bw (when the device's bandwidth is
// known), wrong (see microbench/README.md, "ovb-membw").
void run_mem_point(benchmark::State& state, BenchEnv& env, const MemPoint& p);

}  // namespace ovb::mb
