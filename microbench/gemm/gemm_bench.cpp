// The ovb-gemm benchmark body (see gemm_bench.hpp).
#include "gemm/gemm_bench.hpp"

#include <memory>

#include <algorithm>

#include "gemm/autotune.hpp"
#include "harness/ranks.hpp"
#include "harness/samples.hpp"
#include "harness/sizes.hpp"
#include "harness/timing.hpp"
#include "ovb/annotate.hpp"
#include "ovb/metrics.hpp"

namespace ovb::mb {

namespace {
struct GemmState {
  GemmState(BenchEnv& env, const GemmPoint& p)
      : work(env.backend(), env.gemm(), p.gcase.shape, p.type, std::max(1, p.autotune),
             env.memory_budget() - std::min(env.memory_budget(), p.flush_bytes), 0, p.inputs),
        timer(env.backend()) {
    if (p.flush_bytes > 0) flush = env.backend().allocate(p.flush_bytes);
  }
  GemmWorkload work;
  StreamTimer timer;
  Buffer flush;
  bool ready = false;
  std::int64_t wrong = 0;
  AutotuneResult tune;
};

std::string trans_text(const GemmShape& s) {
  return std::string(s.ta == Trans::n ? "n" : "t") + (s.tb == Trans::n ? "n" : "t");
}
}  // namespace

std::string gemm_benchmark_name(const GemmPoint& p) {
  const GemmShape& s = p.gcase.shape;
  return "gemm/" + std::string(name_of(p.type)) + (p.gcase.tag.empty() ? "" : "/" + p.gcase.tag) +
         "/" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + "/" +
         trans_text(s);
}

void run_gemm_point(benchmark::State& state, BenchEnv& env, const GemmPoint& p) {
  const std::string name = gemm_benchmark_name(p);
  GemmState* st = prepare_or_skip<GemmState>(state, env, name,
                                             [&] { return std::make_unique<GemmState>(env, p); });
  if (!st) return;
  Stream& s = env.stream(0, Priority::normal);
  if (!st->ready) {
    if (p.autotune > 1) st->tune = autotune(st->work, s, st->timer, p.autotune_reps);
    st->wrong = check_and_warm_up(env, name, st->work, s);  // checks the algorithm it will time
    st->ready = true;
  }

  const std::string range = name + " " + shape_text(p.gcase.shape);
  Mean t;
  const Samples samples = timed_loop(state, env, [&](bool in_loop) {
    if (st->flush.bytes() > 0) {
      env.backend().memset_zero(st->flush);
      env.backend().synchronize();  // the flush must finish before the start event
    }
    double sec = 0;
    {
      ScopedRange r(range, "measure");
      sec = st->timer.seconds(s, p.inner, [&] { st->work.run(s); });
    }
    sec = max_over_ranks(sec);
    if (in_loop) t.add(sec);
    return sec;
  });
  samples.report(state);

  const GemmShape& sh = p.gcase.shape;
  const double flop = metrics::gemm_flop(static_cast<double>(sh.m), static_cast<double>(sh.n),
                                         static_cast<double>(sh.k));
  const double tflops = metrics::tflops(flop, t.value());
  auto& c = state.counters;
  c["m"] = static_cast<double>(sh.m);
  c["n"] = static_cast<double>(sh.n);
  c["k"] = static_cast<double>(sh.k);
  c["flop"] = flop;
  c["time_us"] = t.value() * 1e6;
  c["tflops"] = tflops;
  if (const auto peak = metrics::peak_tflops(env.device_name(), name_of(p.type)))
    c["pct_peak"] = metrics::percent_of_peak(tflops, *peak);
  c["algo"] = st->work.plan().algo();
  c["wrong"] = static_cast<double>(st->wrong);
  if (p.autotune > 1) {
    c["autotune_candidates"] = st->tune.candidates;
    c["autotune_default_us"] = st->tune.default_s * 1e6;
    c["autotune_best_us"] = st->tune.best_s * 1e6;
    c["default_over_best"] = st->tune.default_s / st->tune.best_s;
    // The harness's overhead is judged against the best of all candidates, each run back to back
    // with no harness in between, right after the timed loop and for ~0.2 s: the same sustained
    // regime. over_best > 1: the harness (or the autotuned choice) is slower than it could be.
    const SustainedBest b = sustained_best(st->work, s, st->timer, 0.2, t.value());
    c["best_sustained_us"] = b.best_s * 1e6;
    c["best_sustained_algo"] = b.best;
    c["over_best"] = t.value() / b.best_s;
  }
  // Random inputs are named in the label (exact ones, the default, are not: labels as before).
  state.SetLabel((p.label.empty() ? "" : p.label + " ") +
                 (p.inputs == GemmInputs::random ? "inputs=random " : "") +
                 "plan=" + st->work.plan().description());
}

}  // namespace ovb::mb
