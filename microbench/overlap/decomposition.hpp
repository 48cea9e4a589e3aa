// The decomposition scenario's AG+GEMM pipeline (ag_gemm.cpp), made by decomposition.cpp.
#pragma once

#include <memory>
#include <string>

#include "harness/env.hpp"
#include "overlap/overlap_bench.hpp"
#include "overlap/scenario.hpp"

namespace ovb::mb {

// AG+GEMM: A sharded by rows over the ranks, all-gathered chunk by chunk, each chunk's GEMM after
// its gather. Throws UsageError as the scenario's make may.
std::unique_ptr<OverlapOps> make_ag_gemm(BenchEnv& env, Communicator& comm, const OverlapPoint& p);

}  // namespace ovb::mb
