// The ovb-overlap benchmark body (see overlap_bench.hpp).
#include "overlap/overlap_bench.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "harness/comm_options.hpp"
#include "harness/ranks.hpp"
#include "harness/samples.hpp"
#include "harness/sizes.hpp"
#include "harness/timing.hpp"
#include "ovb/annotate.hpp"
#include "ovb/error.hpp"
#include "ovb/metrics.hpp"

namespace ovb::mb {

std::string_view name_of(PrioMode p) {
  switch (p) {
    case PrioMode::equal: return "equal";
    case PrioMode::comm_high: return "comm_high";
    case PrioMode::compute_high: return "compute_high";
  }
  return "?";
}

std::string_view name_of(SplitAxis a) {
  return a == SplitAxis::m ? "m" : "n";
}

namespace {
struct OverlapState {
  OverlapState(BenchEnv& env, Communicator& comm, const OverlapPoint& p)
      : ops(p.scenario->make(env, comm, p)),
        timer(env.backend()),
        base(env.backend().create_event()),
        c0(env.backend().create_event()),
        c1(env.backend().create_event()),
        m0(env.backend().create_event()),
        m1(env.backend().create_event()) {
    pipeline = dynamic_cast<PipelineOps*>(ops.get());
    if (p.scenario->dependent && !pipeline)
      throw Error("scenario " + p.scenario->name + " is dependent but made no PipelineOps");
    for (int i = 0; pipeline && i < pipeline->chunks(); ++i)
      chunk_done.push_back(env.backend().create_event());
  }
  std::unique_ptr<OverlapOps> ops;
  PipelineOps* pipeline = nullptr;  // the dependent form, else nullptr
  StreamTimer timer;
  std::unique_ptr<Event> base, c0, c1, m0, m1;
  std::vector<std::unique_ptr<Event>> chunk_done;  // per chunk: its producer has completed
  bool ready = false;
  std::int64_t wrong = 0;
  std::string transport;  // observed (transport.hpp)
};

// Per-rank times of one concurrent run, in seconds: {t_o, t_c', t_m'}.
struct UnderOverlap {
  double t_o, t_c, t_m;
};

// The dependent form: chunk i's consumer (the collective, or for AG+GEMM the GEMM) waits for
// chunk i's producer; the consumer's span starts when its first chunk may start.
void run_pipeline(BenchEnv& env, OverlapState& st, Stream& sc, Stream& sm) {
  PipelineOps& p = *st.pipeline;
  const bool gather_first = p.comm_feeds_compute();
  Stream& up = gather_first ? sm : sc;
  Stream& down = gather_first ? sc : sm;
  Event& up0 = gather_first ? *st.m0 : *st.c0;
  Event& up1 = gather_first ? *st.m1 : *st.c1;
  Event& down0 = gather_first ? *st.c0 : *st.m0;
  Event& down1 = gather_first ? *st.c1 : *st.m1;
  up0.record(up);
  for (int i = 0; i < p.chunks(); ++i) {
    Event& done = *st.chunk_done[static_cast<std::size_t>(i)];
    gather_first ? p.comm_chunk(up, i) : p.compute_chunk(up, i);
    done.record(up);
    env.backend().wait_event(down, done);
    if (i == 0) down0.record(down);
    gather_first ? p.compute_chunk(down, i) : p.comm_chunk(down, i);
  }
  up1.record(up);
  down1.record(down);
}

UnderOverlap run_both(BenchEnv& env, OverlapState& st, Stream& sc, Stream& sm, bool comm_first) {
  // Both streams start after `base`, so each op's span is measured from a common origin.
  st.base->record(sc);
  env.backend().wait_event(sm, *st.base);
  auto compute = [&] {
    st.c0->record(sc);
    st.ops->compute(sc);
    st.c1->record(sc);
  };
  auto comm = [&] {
    st.m0->record(sm);
    st.ops->comm(sm);
    st.m1->record(sm);
  };
  if (st.pipeline) {
    run_pipeline(env, st, sc, sm);
  } else if (comm_first) {
    comm();
    compute();
  } else {
    compute();
    comm();
  }
  const double c0 = st.c0->elapsed_ms(*st.base), c1 = st.c1->elapsed_ms(*st.base);
  const double m0 = st.m0->elapsed_ms(*st.base), m1 = st.m1->elapsed_ms(*st.base);
  return {(std::max(c1, m1) - std::min(c0, m0)) / 1e3, (c1 - c0) / 1e3, (m1 - m0) / 1e3};
}

std::string order_text(const OverlapPoint& p) {
  if (p.scenario->dependent) return "pipeline";
  if (p.scenario->sequential) return "sequence";
  return p.comm_first ? "comm_first" : "gemm_first";
}
}  // namespace

std::string overlap_label(const OverlapPoint& p, const std::string& transport,
                          const std::string& requested) {
  return "coll=" + std::string(name_of(p.kind)) + " prio=" + std::string(name_of(p.prio)) +
         " order=" + order_text(p) + " max_ctas=" + knob_text(p.cfg.max_ctas) + " cdmc=" + p.cdmc +
         " group=" + p.group.name() + " dtype=" + std::string(name_of(p.gemm_type)) +
         " min_ctas=" + knob_text(p.cfg.min_ctas) + " cta_policy=" + knob_text(p.cfg.cta_policy) +
         " scenario=" + p.scenario->name +
         (p.scenario->dependent
              ? " chunks=" + std::to_string(p.chunks) + " split=" + std::string(name_of(p.split))
              : "") +
         " gemm_sms=" + knob_text(p.gemm_sms) + " transport=" + transport +
         " transport_requested=" + requested +
         (p.scenario->chunk_per_rank ? " exchange=" + std::string(name_of(p.exchange)) : "") +
         (p.label.empty() ? "" : " " + p.label);
}

std::string overlap_benchmark_name(const OverlapPoint& p) {
  const GemmShape& s = p.gcase.shape;
  const std::string scenario = p.scenario->name == kDefaultScenario ? "" : p.scenario->name + "/";
  const std::string n =
      "overlap/" + scenario + std::string(name_of(p.kind)) + "/" + p.group.name() + "/" +
      std::to_string(p.bytes) + "/" + std::string(name_of(p.gemm_type)) + "/" +
      (p.gcase.tag.empty() ? "" : p.gcase.tag + "/") + std::to_string(s.m) + "x" +
      std::to_string(s.n) + "x" + std::to_string(s.k) + "/" + (s.ta == Trans::n ? "n" : "t") +
      (s.tb == Trans::n ? "n" : "t") + "/" + std::string(name_of(p.prio)) + "/" +
      order_text(p);
  return n + cta_suffix(p.cfg) +
         (p.scenario->dependent
              ? "/chunks=" + std::to_string(p.chunks) + "/split=" + std::string(name_of(p.split))
              : "") +
         (p.gemm_sms > 0 ? "/gemm_sms=" + std::to_string(p.gemm_sms) : "") +
         (p.scenario->chunk_per_rank && p.exchange != Exchange::send_recv
              ? "/exchange=" + std::string(name_of(p.exchange))
              : "");
}

void run_overlap_point(benchmark::State& state, BenchEnv& env, const OverlapPoint& p) {
  const std::string name = overlap_benchmark_name(p);
  OverlapState* st = prepare_point<OverlapState>(state, env, p);
  if (!st) return;
  Stream& sc = env.stream(0, p.prio == PrioMode::compute_high ? Priority::high : Priority::normal);
  Stream& sm = env.stream(1, p.prio == PrioMode::comm_high ? Priority::high : Priority::normal);
  const std::string requested =
      requested_transport(env.backend(), p.scenario->chunk_per_rank, p.exchange, p.cfg.cta_policy);
  if (!st->ready) {
    st->transport = observe_transport(env, *st->ops, sm);
    settle_transport(name, p.require_transport, requested, st->transport);
    // The check runs on results computed concurrently: overlap must not corrupt either op.
    run_both(env, *st, sc, sm, p.comm_first);
    env.backend().synchronize();
    st->wrong = sum_over_ranks(st->ops->check(env.opts().inject_wrong));
    env.add_wrong(name, st->wrong);
    for (int i = 0; i < env.opts().warmup; ++i) {
      st->ops->compute(sc);
      st->ops->comm(sm);
      env.backend().synchronize();
    }
    st->ready = true;
  }

  const std::string range = name;
  Mean tc, tm, to, tcu, tmu, tcw, tmw;
  const Samples samples = timed_loop(state, env, [&](bool in_loop) {
    ScopedRange r(range, "measure");
    barrier();
    const double c = max_over_ranks(st->timer.seconds(sc, 1, [&] { st->ops->compute(sc); }));
    barrier();
    const double m = max_over_ranks(st->timer.seconds(sm, 1, [&] { st->ops->comm(sm); }));
    barrier();
    double whole[2] = {0, 0};  // the dependent form's unchunked GEMM and collective alone
    if (st->pipeline) {
      whole[0] = st->timer.seconds(sc, 1, [&] { st->pipeline->compute_whole(sc); });
      barrier();
      whole[1] = st->timer.seconds(sm, 1, [&] { st->pipeline->comm_whole(sm); });
      max_over_ranks(whole, 2);
      barrier();
    }
    UnderOverlap u = run_both(env, *st, sc, sm, p.comm_first);
    double under[3] = {u.t_o, u.t_c, u.t_m};
    max_over_ranks(under, 3);
    if (in_loop) {
      tc.add(c);
      tm.add(m);
      to.add(under[0]);
      tcu.add(under[1]);
      tmu.add(under[2]);
      tcw.add(whole[0]);
      tmw.add(whole[1]);
    }
    return under[0];  // the sample is the overlapped time t_o
  });
  samples.report(state);

  const metrics::OverlapTimes times{tc.value(), tm.value(), to.value(), tcu.value(), tmu.value()};
  const metrics::OverlapMetrics om = metrics::overlap_metrics(times);
  auto& k = state.counters;
  k["t_compute_us"] = times.t_compute * 1e6;
  k["t_comm_us"] = times.t_comm * 1e6;
  k["t_overlap_us"] = times.t_overlap * 1e6;
  k["t_compute_under_us"] = times.t_compute_under * 1e6;
  k["t_comm_under_us"] = times.t_comm_under * 1e6;
  k["ideal_us"] = om.ideal * 1e6;
  k["serial_us"] = om.serial * 1e6;
  k["overlap_efficiency"] = om.overlap_efficiency;
  k["speedup_vs_serial"] = om.speedup_vs_serial;
  if (!std::isnan(om.fraction_of_ideal)) k["fraction_of_ideal"] = om.fraction_of_ideal;
  k["compute_slowdown"] = om.compute_slowdown;
  k["comm_slowdown"] = om.comm_slowdown;
  k["exposed_comm_us"] = om.exposed_comm * 1e6;
  if (st->pipeline) {
    k["chunks"] = p.chunks;
    k["t_compute_whole_us"] = tcw.value() * 1e6;
    k["t_comm_whole_us"] = tmw.value() * 1e6;
    k["decomposition_loss_us"] = metrics::decomposition_loss(tc.value(), tcw.value()) * 1e6;
    const double f = metrics::pipeline_fraction_of_ideal(tcw.value(), tmw.value(), to.value());
    if (!std::isnan(f)) k["pipeline_fraction_of_ideal"] = f;
  }
  finish_point(state, p, st->ops->ranks(), st->wrong, st->transport, requested);
}

void finish_point(benchmark::State& state, const OverlapPoint& p, int ranks, std::int64_t wrong,
                  const std::string& transport, const std::string& requested) {
  auto& k = state.counters;
  const GemmShape& sh = p.gcase.shape;
  k["bytes"] = static_cast<double>(p.bytes);
  k["ranks"] = ranks;
  k["m"] = static_cast<double>(sh.m);
  k["n"] = static_cast<double>(sh.n);
  k["k"] = static_cast<double>(sh.k);
  k["wrong"] = static_cast<double>(wrong);
  state.SetLabel(overlap_label(p, transport, requested));
}

}  // namespace ovb::mb
