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

// The best of every candidate in the sustained regime the benchmark itself runs in: each
// candidate run back to back for ~seconds_each (after the benchmark's timed loop, clocks already
// at their sustained level), the fastest kept. The short autotuning bursts above read faster than
// any sustained run on an H100 (boost clocks), so they cannot be this reference. The plan's
// algorithm is left as it was.
struct SustainedBest {
  int best = 0;       // candidate index
  double best_s = 0;  // its time per call, max over ranks
};
SustainedBest sustained_best(GemmWorkload& w, Stream& s, StreamTimer& timer, double seconds_each,
                             double per_call_estimate_s);

}  // namespace ovb::mb
