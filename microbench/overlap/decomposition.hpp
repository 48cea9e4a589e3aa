// The decomposition scenario's AG+GEMM pipeline (ag_gemm.cpp), made by decomposition.cpp, and
// the check both pipelines make before allocating.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "harness/env.hpp"
#include "overlap/overlap_bench.hpp"
#include "overlap/scenario.hpp"

namespace ovb::mb {

// Throws UsageError unless this backend has GEMM type t and collectives in `coll`, and `need`
// bytes of buffers for GEMM `s` fit this rank's share of memory.
void check_pipeline_fits(BenchEnv& env, GemmType t, DType coll, const GemmShape& s,
                         std::size_t need);

// AG+GEMM: A sharded by rows over the ranks, all-gathered chunk by chunk, each chunk's GEMM after
// its gather. Throws UsageError as the scenario's make may.
std::unique_ptr<OverlapOps> make_ag_gemm(BenchEnv& env, Communicator& comm, const OverlapPoint& p);

}  // namespace ovb::mb
