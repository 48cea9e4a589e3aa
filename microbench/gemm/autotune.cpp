// GEMM autotuning among the heuristic's top-k algorithms (see autotune.hpp).
#include "gemm/autotune.hpp"

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

}  // namespace ovb::mb
