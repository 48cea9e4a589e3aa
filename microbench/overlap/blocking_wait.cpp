// The blocking_wait scenario: the point's GEMM, then its collective waited for, against each alone
// (see blocking_wait.hpp).
#include "overlap/blocking_wait.hpp"

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "harness/ranks.hpp"
#include "harness/samples.hpp"
#include "harness/timing.hpp"
#include "ovb/annotate.hpp"
#include "ovb/metrics.hpp"
#include "ovb/timing_stats.hpp"
#include "overlap/scenario.hpp"
#include "overlap/transport.hpp"

namespace ovb::mb {

namespace {

struct WaitState {
  WaitState(BenchEnv& env, Communicator& comm, const OverlapPoint& p)
      : ops(p.scenario->make(env, comm, p)),
        timer(env.backend()),
        delayed(comm.rank() == ops->ranks() - 1) {}
  std::unique_ptr<OverlapOps> ops;
  StreamTimer timer;
  bool delayed;  // this rank sleeps inject_delay_us inside t_s (the group's last rank)
  bool ready = false;
  std::int64_t wrong = 0;
  std::string transport;
};

// The GEMM, then the collective on the same stream; the caller's timer waits for both.
void sequence(WaitState& st, Stream& s, double delay_us) {
  st.ops->compute(s);
  if (st.delayed && delay_us > 0)
    std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(delay_us));
  st.ops->comm(s);
}

}  // namespace

std::string sequential_problem(const Backend& b, const OverlapScenario& s) {
  if (!s.sequential || b.name() == "host") return "";
  return "--scenarios " + s.name +
         ": host backend only (it measures ranks that share a core waiting for each other; on a "
         "GPU the wait is only the ranks' skew)";
}

void run_wait_point(benchmark::State& state, BenchEnv& env, const OverlapPoint& p) {
  const std::string name = overlap_benchmark_name(p);
  WaitState* st = prepare_point<WaitState>(state, env, p);
  if (!st) return;
  Stream& s = env.stream(0, Priority::normal);
  const std::string requested =
      requested_transport(env.backend(), false, p.exchange, p.cfg.cta_policy);
  if (!st->ready) {
    st->transport = observe_transport(env, *st->ops, s);
    settle_transport(name, p.require_transport, requested, st->transport);
    sequence(*st, s, 0);
    s.synchronize();
    st->wrong = sum_over_ranks(st->ops->check(env.opts().inject_wrong));
    env.add_wrong(name, st->wrong);
    for (int i = 0; i < env.opts().warmup; ++i) {
      sequence(*st, s, 0);
      s.synchronize();
    }
    st->ready = true;
  }

  Mean tc, tc_mean, tm, ts;
  std::vector<double> waits_us;  // every sample's own t_s - t_c - t_m
  const Samples samples = timed_loop(state, env, [&](bool in_loop) {
    ScopedRange r(name, "measure");
    double t[3];
    barrier();
    const MeanMax c = mean_max_over_ranks(st->timer.seconds(s, 1, [&] { st->ops->compute(s); }));
    t[0] = c.max;
    barrier();
    t[1] = st->timer.seconds(s, 1, [&] { st->ops->comm(s); });
    barrier();
    t[2] = st->timer.seconds(s, 1, [&] { sequence(*st, s, p.inject_delay_us); });
    max_over_ranks(t, 3);
    if (in_loop) {
      tc_mean.add(c.mean);
      tc.add(t[0]);
      tm.add(t[1]);
      ts.add(t[2]);
    }
    waits_us.push_back(metrics::blocking_wait(t[2], c.mean, t[1]) * 1e6);
    return t[2];  // the sample is the sequence t_s
  });
  samples.report(state);

  auto& k = state.counters;
  k["t_compute_us"] = tc.value() * 1e6;
  k["t_compute_mean_us"] = tc_mean.value() * 1e6;
  k["t_comm_us"] = tm.value() * 1e6;
  k["t_sequence_us"] = ts.value() * 1e6;
  k["wait_us"] = metrics::blocking_wait(ts.value(), tc_mean.value(), tm.value()) * 1e6;
  if (!waits_us.empty()) {
    k["wait_p10_us"] = stats::percentile(waits_us, 10);
    k["wait_p50_us"] = stats::percentile(waits_us, 50);
    k["wait_p90_us"] = stats::percentile(waits_us, 90);
  }
  k["injected_delay_us"] = p.inject_delay_us;
  finish_point(state, p, st->ops->ranks(), st->wrong, st->transport, requested);
}

OVB_OVERLAP_SEQUENTIAL_SCENARIO(blocking_wait,
                                "the GEMM, then the collective waited for (host only): the wait "
                                "of a blocking collective after compute",
                                make_gemm_coll);

}  // namespace ovb::mb
