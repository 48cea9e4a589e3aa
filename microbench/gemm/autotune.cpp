// GEMM autotuning among the heuristic's top-k algorithms (see autotune.hpp).
#include "gemm/autotune.hpp"

#include <algorithm>
#include <vector>

#include "harness/ranks.hpp"
#include "ovb/annotate.hpp"

namespace ovb::mb {

AutotuneResult autotune(GemmWorkload& w, Stream& s, StreamTimer& timer, int reps) {
  ScopedRange range("autotune " + std::string(name_of(w.type())), "measure");
  AutotuneResult r;
  r.candidates = w.plan().algo_count();
  // Every rank times the same candidates (each time is reduced over ranks): a GPU that offers a
  // different number must stop the run, not desynchronize it.
  require_same_on_all_ranks(r.candidates, "the number of cuBLASLt autotune candidates");
  for (int i = 0; i < r.candidates; ++i) {
    w.plan().set_algo(i);
    w.run(s);  // first call of an algorithm: module loading, not its speed
    s.synchronize();
    std::vector<double> t;
    for (int rep = 0; rep < std::max(1, reps); ++rep)
      t.push_back(timer.seconds(s, 1, [&] { w.run(s); }));
    const double med = max_over_ranks(median(t));
    if (i == 0) r.default_s = med;
    if (i == 0 || med < r.best_s) {
      r.best_s = med;
      r.best = i;
    }
  }
  w.plan().set_algo(r.best);
  return r;
}

SustainedBest sustained_best(GemmWorkload& w, Stream& s, StreamTimer& timer, double seconds_each,
                             double per_call_estimate_s) {
  ScopedRange range("sustained best " + std::string(name_of(w.type())), "measure");
  const int chosen = w.plan().algo();
  const int candidates = w.plan().algo_count();
  require_same_on_all_ranks(candidates, "the number of cuBLASLt autotune candidates");
  // One call count for all candidates, from the benchmark's own time, so every rank agrees.
  const int n =
      static_cast<int>(std::clamp(seconds_each / std::max(per_call_estimate_s, 1e-9), 1.0, 1e5));
  SustainedBest r;
  for (int i = 0; i < candidates; ++i) {
    w.plan().set_algo(i);
    w.run(s);
    s.synchronize();
    const double t = max_over_ranks(timer.seconds(s, n, [&] { w.run(s); }));
    if (i == 0 || t < r.best_s) {
      r.best_s = t;
      r.best = i;
    }
  }
  if (chosen >= 0) w.plan().set_algo(chosen);  // the host GEMM has no index to restore
  return r;
}

}  // namespace ovb::mb
