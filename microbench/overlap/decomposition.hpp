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

// The collective's S of a dependent scenario: the gathered A (all_gather), else the GEMM's output.
std::size_t pipeline_bytes(const OverlapPoint& p);

// The type A travels in when gathered: the GEMM's input type (UsageError for fp8 e4m3, which has
// no collective type).
DType gathered_dtype(GemmType t);

// Relative tolerance of n equal GEMM outputs (output storage `out`) summed by a reduction in type
// t: the GEMM's output rounding (gemm_output_tolerance) plus n - 1 additions, each rounding by at
// most one unit roundoff u of t (0 for fp32 sums of integers below 2^24, which are exact).
double reduced_tolerance(Storage out, DType t, int n);

// AG+GEMM: A sharded by rows over the ranks, all-gathered chunk by chunk, each chunk's GEMM after
// its gather. Throws UsageError as the scenario's make may.
std::unique_ptr<OverlapOps> make_ag_gemm(BenchEnv& env, Communicator& comm, const OverlapPoint& p);

}  // namespace ovb::mb
