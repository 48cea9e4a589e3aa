// Autotuning a GEMM among the top-k cuBLASLt heuristic algorithms: time each candidate with the
// same events as the benchmark (median of a few samples, max over ranks so all ranks pick the
// same one) and keep the fastest. The host GEMM has one algorithm: nothing to choose.
#pragma once

#include "harness/gemm_workload.hpp"
#include "harness/timing.hpp"

namespace ovb::mb {

struct AutotuneResult {
  int candidates = 0;    // algorithms tried (the heuristic's top k)
  int best = 0;          // index of the fastest, now set on the plan
  double best_s = 0;     // its median time
  double default_s = 0;  // median time of index 0, the heuristic's own choice
};

// Leaves the fastest algorithm set on w.plan(). reps >= 1 samples per candidate.
AutotuneResult autotune(GemmWorkload& w, Stream& s, StreamTimer& timer, int reps);

}  // namespace ovb::mb
