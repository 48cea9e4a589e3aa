// One ovb-collective benchmark point: a collective kind, dtype, group, size, in/out of place and
// NCCL communicator settings, checked once and then timed with events (per-sample barrier,
// `inner` back-to-back calls, mean and max over ranks).
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>

#include "harness/env.hpp"

namespace ovb::mb {

struct CollPoint {
  CollKind kind = CollKind::all_reduce;
  DType type = DType::bf16;
  GroupSpec group;
  bool in_place = false;
  std::size_t bytes = 0;  // S of docs/metrics.md
  CommConfig cfg;         // min/max CTAs, CTA policy (-1: NCCL's default)
  int inner = 1;          // collectives per timed sample
};

// "all_reduce/bf16/world/oop/1048576", plus "/cta=MIN,MAX,POLICY" when any is set.
std::string coll_benchmark_name(const CollPoint& p);

// Counters: bytes, count, ranks, time_us (mean over ranks), time_max_us, algbw, busbw (GB/s, from
// time_max_us), wrong. Label: "dtype=bf16 group=world inplace=0 min_ctas=... max_ctas=...
// cta_policy=...".
void run_coll_point(benchmark::State& state, BenchEnv& env, const CollPoint& p);

}  // namespace ovb::mb
