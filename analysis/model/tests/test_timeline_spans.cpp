// The spans of simulate() (the predicted iteration that `ovb-model explain --timeline` writes):
// asking for them changes no term; spans of one stream never overlap; the compute stream's spans
// tile [0, iteration] with no gap, its compute spans adding up to compute + interference and its
// waits to the exposed communication (each group and kind); every collective has one span on its
// communication stream (stream_of), lasting at least its time and at most that time stretched by
// comm_slowdown and slowed by sharing its link with the other two streams. Over grids, overlap
// flags, micro-steps, recomputation, sharding and interference.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "ovb/model/predict.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

struct Case {
  const char* grid;
  const char* overlap;
  std::int64_t micro_batch;  // 0: one micro-step
  bool recompute, shard_optimizer, shard_gradients;
};

void check_spans(const Prediction& p, const Machine& mc, const std::string& what) {
  std::vector<Span> spans;
  const Timeline t = simulate(p.shape, p.compute, p.comm, p.options, mc,
                              std::numeric_limits<double>::infinity(), &spans);
  const Timeline& ref = p.timeline;  // the same iteration without spans
  ASSERT_FALSE(spans.empty()) << what;
  // Sums of a few thousand terms of the iteration's size: a relative tolerance of 1e-12 per
  // term, far above double rounding (2^-53 per addition).
  const double tol = 1e-12 * ref.iteration_us * static_cast<double>(spans.size());
  // Without overlap flags the prediction is the sum of the terms, the replay (with spans) the
  // same terms added in the schedule's order: equal up to that rounding.
  ASSERT_NEAR(t.iteration_us, ref.iteration_us, tol) << what;
  ASSERT_NEAR(t.exposed_total_us(), ref.exposed_total_us(), tol) << what;

  std::array<std::vector<const Span*>, 4> by_stream;
  for (const Span& s : spans) {
    EXPECT_GT(s.end_us, s.start_us) << what << " " << s.name;
    by_stream[static_cast<int>(s.stream)].push_back(&s);
  }
  for (auto& v : by_stream) {
    std::stable_sort(v.begin(), v.end(),
                     [](const Span* a, const Span* b) { return a->start_us < b->start_us; });
    for (std::size_t i = 1; i < v.size(); ++i)
      EXPECT_GE(v[i]->start_us, v[i - 1]->end_us - tol)
          << what << ": " << v[i - 1]->name << " and " << v[i]->name << " overlap on "
          << name_of(v[i]->stream);
  }

  // The compute stream: contiguous from 0 to the iteration's end.
  const auto& cs = by_stream[static_cast<int>(StreamId::compute)];
  EXPECT_NEAR(cs.front()->start_us, 0, tol) << what;
  EXPECT_NEAR(cs.back()->end_us, ref.iteration_us, tol) << what;
  double compute = 0, total = 0;
  std::array<std::array<double, 3>, 5> waits{};
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const Span& s = *cs[i];
    if (i > 0) {
      EXPECT_NEAR(s.start_us, cs[i - 1]->end_us, tol) << what << " gap before " << s.name;
    }
    total += s.end_us - s.start_us;
    if (s.comm) {
      EXPECT_EQ(s.name.rfind("wait ", 0), 0u) << what << " " << s.name;
      waits[static_cast<int>(s.group)][static_cast<int>(s.kind)] += s.end_us - s.start_us;
    } else {
      compute += s.end_us - s.start_us;
    }
  }
  EXPECT_NEAR(total, ref.iteration_us, tol) << what;
  EXPECT_NEAR(compute, ref.compute_us + ref.interference_us, tol) << what;
  for (int g = 0; g < 5; ++g)
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(waits[g][k], ref.exposed_us[g][k], tol) << what;

  // Communication streams: one span per collective, its own stream, its time (stretched when
  // asynchronous; a third of its link at worst, beside one collective of each other stream).
  std::array<std::array<double, 3>, 5> comm{}, count{};
  for (int st = 1; st < 4; ++st)
    for (const Span* s : by_stream[st]) {
      EXPECT_TRUE(s->comm) << what << " " << s->name;
      comm[static_cast<int>(s->group)][static_cast<int>(s->kind)] += s->end_us - s->start_us;
      count[static_cast<int>(s->group)][static_cast<int>(s->kind)] += 1;
    }
  const double stretch = 1 + std::max(0.0, mc.comm_slowdown);
  for (int g = 0; g < 5; ++g)
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(count[g][k], ref.count[g][k]) << what << " group " << g << " kind " << k;
      EXPECT_GE(comm[g][k], ref.comm_us[g][k] - tol) << what;
      EXPECT_LE(comm[g][k], 3 * ref.comm_us[g][k] * stretch + tol) << what;
    }
}

}  // namespace

TEST(TimelineSpans, TileTheComputeStreamAndNeverOverlapOnAStream) {
  const Machine a100 = load_machine("perlmutter-a100");
  nlohmann::json j = test::synthetic_machine_json();
  j["interference"] = {{"compute_slowdown", 0.3}, {"comm_slowdown", 0.5}};
  const Machine slowed = machine_from_json(j, "slowed");
  const GptShape m = test::small_gpt(4);
  const Case cases[] = {
      {"2x2x2x1", "none", 0, false, false, false}, {"2x2x2x1", "all", 0, false, false, false},
      {"2x2x2x1", "oar", 0, true, false, false},   {"1x2x2x2", "ors", 0, false, false, false},
      {"2x1x2x2", "oag", 0, false, false, false},  {"2x1x2x2", "all", 1, false, false, false},
      {"1x1x2x2", "all", 1, false, true, false},   {"1x1x2x2", "all", 1, false, true, true},
      {"1x1x2x2", "none", 1, false, true, true},   {"2x2x1x2:y,x,z", "all", 0, true, true, false},
  };
  for (const Machine* mc : {&a100, &slowed})
    for (const Case& c : cases) {
      GptPlanOptions o = test::plan_on(c.grid, 16);
      parse_overlap(c.overlap, o);
      o.micro_batch = c.micro_batch;
      o.recompute = c.recompute;
      o.shard_optimizer = c.shard_optimizer;
      o.shard_gradients = c.shard_gradients;
      const Prediction p = predict(m, o, *mc);
      check_spans(p, *mc,
                  std::string(c.grid) + " " + c.overlap + " mb " + std::to_string(c.micro_batch) +
                      (c.recompute ? " rc" : "") + (c.shard_optimizer ? " zero1" : "") +
                      (c.shard_gradients ? " zero2" : "") + " on " + mc->name);
    }
}
