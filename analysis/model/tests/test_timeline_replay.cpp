// The timeline as a replay of the schedule: the list replayed equals simulate()'s visit; the
// spans tile each stream without overlap and the compute stream's sum to the iteration; a forward
// all-reduce cut by hand into k chunks behind k GEMM chunks costs the pipeline worked out here
// from gemm_term() and cost_collective() alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ovb/model/comm_cost.hpp"
#include "ovb/model/predict.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

GptPlanOptions config(const char* grid, std::int64_t batch, const char* overlap) {
  GptPlanOptions o;
  o.grid = GridShape::parse(grid);
  o.batch = batch;
  o.act_dtype = DType::bf16;
  parse_overlap(overlap, o);
  return o;
}

struct Case {
  const char* grid;
  const char* overlap;
  bool recompute;
  int micro_batch;
  bool shard;
};

const Case kCases[] = {
    {"2x2x2x1", "all", false, 0, false},     {"1x2x2x2", "all", true, 0, false},
    {"2x1x4x1", "oar,ors", false, 1, false}, {"1x1x2x4", "ors", false, 1, true},
    {"2x2x2x1", "none", true, 1, false},     {"1x1x2x4", "none", false, 1, true},
    {"2x2x1x2", "oag", true, 0, true},       {"1x2x2x2:y,x,z", "none", false, 2, false},
};

// The rounding of a sum of the schedule's terms in another order.
double rounding(const GptSchedule& s, double total) {
  return static_cast<double>(s.steps.size()) * 2.3e-16 * total;
}

GptPlanOptions options_of(const Case& c) {
  GptPlanOptions o = config(c.grid, 16, c.overlap);
  o.recompute = c.recompute;
  o.micro_batch = c.micro_batch;
  o.shard_optimizer = c.shard;
  o.shard_gradients = c.shard && c.micro_batch > 0;
  return o;
}

}  // namespace

TEST(TimelineReplay, TheListReplaysAsTheVisit) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset("1.3B");
  for (const Case& c : kCases) {
    const GptPlanOptions o = options_of(c);
    const Prediction p = predict(m, o, mc);
    const GptSchedule sched = gpt_schedule(m, o);
    const Timeline t = replay_schedule(sched, m, p.compute, p.comm, o, mc);
    // Without flags simulate() sums the terms instead: the same additions in another order, each
    // rounding by at most one part in 2^52 of the total.
    const double tol = rounding(sched, t.iteration_us);
    EXPECT_NEAR(t.iteration_us, p.timeline.iteration_us, tol) << c.grid << ' ' << c.overlap;
    EXPECT_NEAR(t.compute_us, p.timeline.compute_us, tol) << c.grid;
    EXPECT_NEAR(t.interference_us, p.timeline.interference_us, tol) << c.grid;
    for (int g = 0; g < 5; ++g)
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(t.comm_us[g][k], p.timeline.comm_us[g][k], tol) << c.grid;
        EXPECT_NEAR(t.exposed_us[g][k], p.timeline.exposed_us[g][k], tol) << c.grid;
        EXPECT_EQ(t.count[g][k], p.timeline.count[g][k]) << c.grid;
      }
  }
}

// Every interval, stream by stream: none overlaps the next; the compute stream's tile [0,
// iteration] and sum to compute + interference + exposed; one span per collective.
TEST(TimelineReplay, SpansTileTheStreams) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset("1.3B");
  for (const Case& c : kCases) {
    const GptPlanOptions o = options_of(c);
    const Prediction p = predict(m, o, mc);
    std::vector<Span> spans;
    const Timeline t =
        simulate(m, p.compute, p.comm, o, mc, std::numeric_limits<double>::infinity(), &spans);
    EXPECT_NEAR(t.iteration_us, p.timeline.iteration_us,
                rounding(gpt_schedule(m, o), t.iteration_us))
        << c.grid;  // the replay; without flags predict() summed
    const double tol = 1e-9 * t.iteration_us;
    std::map<StreamId, std::vector<const Span*>> by_stream;
    for (const Span& s : spans) {
      EXPECT_LE(s.start_us, s.end_us) << s.name;
      by_stream[s.stream].push_back(&s);
    }
    double compute_sum = 0, waits = 0, collectives = 0;
    for (auto& [stream, list] : by_stream) {
      std::stable_sort(list.begin(), list.end(),
                       [](const Span* a, const Span* b) { return a->start_us < b->start_us; });
      for (std::size_t i = 1; i < list.size(); ++i)
        EXPECT_GE(list[i]->start_us, list[i - 1]->end_us - tol)
            << c.grid << ' ' << c.overlap << ' ' << name_of(stream) << ": " << list[i - 1]->name
            << " then " << list[i]->name;
      for (const Span* s : list) {
        if (stream == StreamId::compute) {
          compute_sum += s->end_us - s->start_us;
          if (s->comm) {
            EXPECT_EQ(s->name.rfind("wait ", 0), 0u) << s->name;
            waits += s->end_us - s->start_us;
          }
        } else {
          EXPECT_TRUE(s->comm) << s->name;
          collectives += 1;
        }
      }
    }
    EXPECT_NEAR(compute_sum, t.iteration_us, tol) << c.grid << ' ' << c.overlap;
    EXPECT_NEAR(compute_sum, t.compute_us + t.interference_us + t.exposed_total_us(), tol);
    EXPECT_NEAR(waits, t.exposed_total_us(), tol) << c.grid;
    double count = 0;
    for (const auto& g : t.count)
      for (double v : g) count += v;
    EXPECT_EQ(collectives, count) << c.grid;
    EXPECT_NEAR(by_stream[StreamId::compute].back()->end_us, t.iteration_us, tol) << c.grid;
  }
}

namespace {

// The schedule with layer 0's forward QKV GEMM and its all-reduce cut into k chunks: k GEMMs of
// T/k rows, each followed by the issue of its chunk (count / k) on the same stream, then the k
// waits - the steps a chunked tensor-parallel overlap emits. Collective ids are renumbered in
// issue order.
GptSchedule chunk_qkv(const GptSchedule& s, int k) {
  GptSchedule out;
  static_cast<ScheduleCounts&>(out) = s;
  std::vector<int> id(s.collectives.size(), -1);
  auto add_issue = [&](Step st, CollOp op) {
    const int c = static_cast<int>(out.collectives.size());
    st.coll = c;
    for (int& d : st.deps) d = id[static_cast<std::size_t>(d)];
    out.collectives.push_back(std::move(op));
    out.steps.push_back(std::move(st));
    return c;
  };
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    const bool target = st.kind == StepKind::compute && st.op == "qkv.fwd" && st.layer == 0 &&
                        st.micro_step == 0 && st.phase == Phase::forward && !st.recompute;
    if (!target) {
      Step copy = st;
      if (st.kind == StepKind::issue) {
        id[static_cast<std::size_t>(st.coll)] =
            add_issue(copy, s.collectives[static_cast<std::size_t>(st.coll)]);
        continue;
      }
      if (st.kind == StepKind::wait) copy.coll = id[static_cast<std::size_t>(st.coll)];
      out.steps.push_back(copy);
      continue;
    }
    // The GEMM, then its all-reduce's issue and wait (a slot release may come between).
    std::size_t j = i + 1;
    while (s.steps[j].kind != StepKind::issue) ++j;
    const Step& issue = s.steps[j];
    const CollOp& op = s.collectives[static_cast<std::size_t>(issue.coll)];
    EXPECT_EQ(op.role, CollRole::output_reduce);
    EXPECT_EQ(s.steps[j + 1].kind, StepKind::wait);
    for (std::size_t r = i + 1; r < j; ++r) out.steps.push_back(s.steps[r]);
    std::vector<int> chunks;
    for (int c = 0; c < k; ++c) {
      Step g = st;
      g.gemm.m = st.gemm.m / k;
      out.steps.push_back(g);
      CollOp part = op;
      part.count = op.count / k;
      chunks.push_back(add_issue(issue, part));
    }
    for (int c : chunks) {
      Step w = s.steps[j + 1];
      w.coll = c;
      out.steps.push_back(w);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

// Nothing else overlaps (no flags): the chunked iteration differs from the plain one by the
// pipeline of GEMM chunks (each g: the chunk's GEMM at its own rate plus its share of the
// epilogue) and all-reduce chunks (each a, stretched by comm_slowdown while a GEMM runs under it;
// the last one runs alone), the compute stream stretched by compute_slowdown for what ran under
// them before it waits - minus the unchunked GEMM and blocking all-reduce.
TEST(TimelineReplay, ChunkedAllReduceIsPricedAsItsPipeline) {
  const Machine mc = load_machine("perlmutter-a100");
  ASSERT_GT(mc.compute_slowdown, 0);
  ASSERT_GT(mc.comm_slowdown, 0);
  const GptShape m = gpt_preset("1.3B");
  const GptPlanOptions o = config("2x1x1x1", 8, "none");
  const Prediction p = predict(m, o, mc);
  const GptSchedule plain = gpt_schedule(m, o);
  const Timeline t0 = replay_schedule(plain, m, p.compute, p.comm, o, mc);
  EXPECT_NEAR(t0.iteration_us, p.timeline.iteration_us, rounding(plain, t0.iteration_us));
  const Grid grid(o.grid, o.grid.world());
  const LinearCompute& qkv = p.compute.block.lin[0];
  const std::int64_t T = p.compute.tokens;
  CollOp full;  // the QKV output all-reduce
  for (const CollOp& c : plain.collectives)
    if (c.role == CollRole::output_reduce && c.op == "qkv") full = c;
  ASSERT_GT(full.count, 0);
  for (int k : {2, 4, 8}) {
    const Timeline t = replay_schedule(chunk_qkv(plain, k), m, p.compute, p.comm, o, mc);
    const double g = gemm_term(mc, T / k, qkv.fwd.n, qkv.fwd.k, name_of(o.act_dtype)).time_us +
                     qkv.epilogue.time_us / k;
    CollOp part = full;
    part.count /= k;
    const double a = cost_collective(mc, grid, part).time_us;
    std::vector<double> start(k), end(k);
    for (int c = 0; c < k; ++c) {
      start[c] = std::max((c + 1) * g, c > 0 ? end[c - 1] : 0.0);
      end[c] = start[c] + a * (c + 1 < k ? 1 + mc.comm_slowdown : 1);
    }
    double under = 0;
    for (int c = 0; c < k; ++c) under += std::max(0.0, std::min(end[c], k * g) - start[c]);
    const double extra = mc.compute_slowdown * under;
    const double pipeline = std::max(k * g + extra, end[k - 1]);
    const double before =
        qkv.fwd.time_us + qkv.epilogue.time_us + cost_collective(mc, grid, full).time_us;
    const double tol = 1e-9 * t0.iteration_us;
    EXPECT_NEAR(t.iteration_us - t0.iteration_us, pipeline - before, tol) << k;
    EXPECT_NEAR(t.compute_us - t0.compute_us, k * g - qkv.fwd.time_us - qkv.epilogue.time_us, tol)
        << k;
    EXPECT_NEAR(t.interference_us - t0.interference_us, extra, tol) << k;
    const int x = static_cast<int>(Group::x), ar = static_cast<int>(CollKind::all_reduce);
    EXPECT_EQ(t.count[x][ar] - t0.count[x][ar], k - 1) << k;
    EXPECT_GT(extra, 0) << k;  // the chunks did overlap the GEMMs
  }
}
