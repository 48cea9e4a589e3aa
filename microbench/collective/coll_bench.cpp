// The ovb-collective benchmark body (see coll_bench.hpp).
#include "collective/coll_bench.hpp"

#include <memory>

#include "harness/collective.hpp"
#include "harness/comm_options.hpp"
#include "harness/ranks.hpp"
#include "harness/samples.hpp"
#include "harness/timing.hpp"
#include "ovb/annotate.hpp"
#include "ovb/dtype.hpp"
#include "ovb/metrics.hpp"

namespace ovb::mb {

namespace {
struct CollState {
  CollState(BenchEnv& env, Communicator& comm, const CollPoint& p)
      : work(env.backend(), comm, coll_def(p.kind), p.type, p.bytes, p.in_place,
             env.memory_budget()),
        timer(env.backend()) {}
  CollWorkload work;
  StreamTimer timer;
  bool ready = false;
  std::int64_t wrong = 0;
};
}  // namespace

std::string coll_benchmark_name(const CollPoint& p) {
  return std::string(name_of(p.kind)) + "/" + std::string(name_of(p.type)) + "/" + p.group.name() +
         "/" + (p.in_place ? "ip" : "oop") + "/" + std::to_string(p.bytes) + cta_suffix(p.cfg);
}

void run_coll_point(benchmark::State& state, BenchEnv& env, const CollPoint& p) {
  const std::string name = coll_benchmark_name(p);
  check_iterations_agree(state);
  if (const std::string why = env.group_problem(p.group); !why.empty()) {
    state.SkipWithError(why.c_str());  // the same on every rank: no agreement needed
    return;
  }
  Communicator& comm = env.comm(p.group, p.cfg);  // collective over the group, on first use
  CollState* st = prepare_or_skip<CollState>(
      state, env, name, [&] { return std::make_unique<CollState>(env, comm, p); });
  if (!st) return;
  Stream& s = env.stream(1, Priority::normal);
  if (!st->ready) {
    st->wrong = check_and_warm_up(env, name, st->work, s);
    st->ready = true;
  }

  RangeInfo range{name, "collective", std::string(name_of(p.kind)), p.group.name(),
                  static_cast<std::int64_t>(p.bytes)};
  Mean mean_t, max_t;
  const Samples samples = timed_loop(state, env, [&](bool in_loop) {
    barrier();  // start every sample together: the time is the collective's, not rank skew
    double sec = 0;
    {
      ScopedRange r(range);
      sec = st->timer.seconds(s, p.inner, [&] { st->work.run(s); });
    }
    const MeanMax mm = mean_max_over_ranks(sec);
    if (in_loop) {
      mean_t.add(mm.mean);
      max_t.add(mm.max);
    }
    return mm.max;
  });
  samples.report(state);

  const int n = st->work.ranks();
  const double bytes =
      metrics::collective_bytes(p.kind, st->work.count(), n, size_of(p.type));  // == p.bytes
  auto& c = state.counters;
  c["bytes"] = bytes;
  c["count"] = static_cast<double>(st->work.count());
  c["ranks"] = n;
  c["time_us"] = mean_t.value() * 1e6;
  c["time_max_us"] = max_t.value() * 1e6;
  c["algbw"] = metrics::algbw_gbps(bytes, max_t.value());
  c["busbw"] = metrics::busbw_gbps(p.kind, n, bytes, max_t.value());
  c["wrong"] = static_cast<double>(st->wrong);
  state.SetLabel("dtype=" + std::string(name_of(p.type)) + " group=" + p.group.name() +
                 " inplace=" + (p.in_place ? "1" : "0") + " " + cta_text(p.cfg));
}

}  // namespace ovb::mb
