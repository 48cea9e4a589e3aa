// The ovb-membw benchmark body (see membw_bench.hpp).
#include "membw/membw_bench.hpp"

#include <memory>

#include "harness/ranks.hpp"
#include "harness/samples.hpp"
#include "harness/timing.hpp"
#include "membw/mem_workload.hpp"
#include "ovb/annotate.hpp"
#include "ovb/metrics.hpp"

namespace ovb::mb {

namespace {
struct MemState {
  MemState(BenchEnv& env, const MemPoint& p)
      : work(env.backend(), p.c, p.t, static_cast<std::int64_t>(p.size / size_of(p.t)), p.row,
             env.memory_budget()),
        timer(env.backend()) {}
  MemWorkload work;
  StreamTimer timer;
  bool ready = false;
  std::int64_t wrong = 0;
};
}  // namespace

std::string membw_benchmark_name(const MemPoint& p) {
  return "membw/" + std::string(name_of(p.c)) + "/" + std::string(name_of(p.t)) + "/" +
         std::to_string(p.size);
}

void run_mem_point(benchmark::State& state, BenchEnv& env, const MemPoint& p) {
  const std::string name = membw_benchmark_name(p);
  MemState* st = prepare_or_skip<MemState>(state, env, name,
                                           [&] { return std::make_unique<MemState>(env, p); });
  if (!st) return;
  Stream& s = env.stream(0, Priority::normal);
  if (!st->ready) {
    st->wrong = check_and_warm_up(env, name, st->work, s);
    st->ready = true;
  }
  Mean t;
  const Samples samples = timed_loop(state, env, [&](bool in_loop) {
    double sec = 0;
    {
      ScopedRange r(name, "measure");
      sec = st->timer.seconds(s, p.inner, [&] { st->work.run(s); });
    }
    sec = max_over_ranks(sec);
    if (in_loop) t.add(sec);
    return sec;
  });
  samples.report(state);

  const double bytes = st->work.bytes();
  const double gbps = metrics::algbw_gbps(bytes, t.value());
  auto& c = state.counters;
  c["n"] = static_cast<double>(st->work.args().n);
  c["row"] = static_cast<double>(p.row);
  c["size"] = static_cast<double>(p.size);
  c["bytes"] = bytes;
  c["time_us"] = t.value() * 1e6;
  c["gbps"] = gbps;
  if (const auto peak = metrics::peak_memory_gbps(env.device_name()))
    c["pct_peak_bw"] = 100.0 * gbps / *peak;
  c["wrong"] = static_cast<double>(st->wrong);
  state.SetLabel("class=" + std::string(name_of(p.c)) + " dtype=" + std::string(name_of(p.t)) +
                 " row=" + std::to_string(p.row));
}

}  // namespace ovb::mb
