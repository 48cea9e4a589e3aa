// The schedule of one iteration: its issues and waits by hand for a one-block model on a Z-only
// grid under each overlap flag (docs/algorithm.md's orders), and for every grid, flag subset and
// option its invariants: the collectives are gpt_collectives() as a multiset (each forward output
// all-reduce in tp_chunks pieces with the tp flag), every collective is
// issued before it is waited for and waited for exactly once, dependencies are earlier issues, no
// slot is taken while held, and the slot counts are those of the memory account.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ovb/error.hpp"
#include "ovb/gpt_schedule.hpp"
#include "ovb/tp_chunks.hpp"

using namespace ovb;

namespace {

GptShape one_block() {
  GptShape m = gpt_preset("tiny");  // hidden 64, 4 heads
  m.layers = 1;
  m.seq = 16;
  m.vocab = 256;
  return m;
}

GptPlanOptions opts(const char* grid, const char* flags) {
  GptPlanOptions o;
  o.grid = GridShape::parse(grid);
  o.batch = 8;
  o.cache_weights = true;  // backward gathers nothing: shorter lists by hand
  const std::string f(flags);
  o.oar = f.find("oar") != std::string::npos;
  o.ors = f.find("ors") != std::string::npos;
  o.oag = f.find("oag") != std::string::npos;
  o.otp = f.find("tp") != std::string::npos;
  return o;
}

// "I qkv weight_gather" / "W mlp_down weight_grad_scatter" per issue and wait, in order.
std::vector<std::string> issues_and_waits(const GptSchedule& s) {
  std::vector<std::string> out;
  for (const Step& st : s.steps) {
    if (st.kind != StepKind::issue && st.kind != StepKind::wait) continue;
    const CollOp& c = s.collectives[static_cast<std::size_t>(st.coll)];
    out.push_back(std::string(st.kind == StepKind::issue ? "I " : "W ") + c.op + " " +
                  std::string(name_of(c.role)));
  }
  return out;
}

std::vector<std::string> sorted(const std::vector<CollOp>& ops) {
  std::vector<std::string> out;
  for (const CollOp& c : ops) out.push_back(describe(c));
  std::sort(out.begin(), out.end());
  return out;
}

const char* const kForwardCached[] = {"I qkv weight_gather",      "W qkv weight_gather",
                                      "I attn_out weight_gather", "W attn_out weight_gather",
                                      "I mlp_up weight_gather",   "W mlp_up weight_gather",
                                      "I mlp_down weight_gather", "W mlp_down weight_gather",
                                      "I lm_head weight_gather",  "W lm_head weight_gather"};

// The steps after the forward phase, without collective ids: kind, op, GEMM, collective.
std::vector<std::string> after_forward(const GptSchedule& s) {
  std::vector<std::string> out;
  for (const Step& st : s.steps)
    if (st.phase != Phase::forward)
      out.push_back(
          std::string(name_of(st.kind)) + " " + std::string(st.op) + " " + std::to_string(st.gemm.m) + "x" +
          std::to_string(st.gemm.n) + "x" + std::to_string(st.gemm.k) +
          (st.coll >= 0 ? " " + describe(s.collectives[static_cast<std::size_t>(st.coll)]) : ""));
  return out;
}

std::vector<std::string> concat(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

// Gz = 2 only (X, Y, data of size 1): the Z gathers, the dW reduce-scatters, the Z all-reduces of
// small parameters and the world all-reduce. Without flags each is waited for at once; the
// weights are cached, so backward gathers nothing.
TEST(GptSchedule, NoOverlapWaitsAtOnceByHand) {
  const GptSchedule s = gpt_schedule(one_block(), opts("1x1x2x1", "none"));
  const std::vector<std::string> fwd(std::begin(kForwardCached), std::end(kForwardCached));
  const auto want =
      concat({fwd,
              {"I lm_head weight_grad_scatter", "W lm_head weight_grad_scatter",
               "I mlp_down weight_grad_scatter", "W mlp_down weight_grad_scatter",
               "I mlp_up weight_grad_scatter", "W mlp_up weight_grad_scatter",
               "I attn_out weight_grad_scatter", "W attn_out weight_grad_scatter",
               "I qkv weight_grad_scatter", "W qkv weight_grad_scatter",
               "I block param_grad_reduce", "W block param_grad_reduce", "I head param_grad_reduce",
               "W head param_grad_reduce", "I global scalars", "W global scalars"}});
  EXPECT_EQ(issues_and_waits(s), want);
  EXPECT_EQ(s.dw_slots, 1);
  EXPECT_EQ(s.gathered_slots, 5);  // every layer's block, cached
}

// ORS: the reduce-scatters stay in flight, four dW blocks at most (the default window): the
// fifth layer's (QKV) takes the LM head's slot, so waits for its reduce-scatter first; the rest
// are waited for before the step, in issue order.
TEST(GptSchedule, OrsWindowByHand) {
  const GptSchedule s = gpt_schedule(one_block(), opts("1x1x2x1", "ors"));
  const std::vector<std::string> fwd(std::begin(kForwardCached), std::end(kForwardCached));
  const auto want = concat(
      {fwd,
       {"I lm_head weight_grad_scatter", "I mlp_down weight_grad_scatter",
        "I mlp_up weight_grad_scatter", "I attn_out weight_grad_scatter",
        "W lm_head weight_grad_scatter", "I qkv weight_grad_scatter", "I block param_grad_reduce",
        "I head param_grad_reduce", "W mlp_down weight_grad_scatter",
        "W mlp_up weight_grad_scatter", "W attn_out weight_grad_scatter",
        "W qkv weight_grad_scatter", "W block param_grad_reduce", "W head param_grad_reduce",
        "I global scalars", "W global scalars"}});
  EXPECT_EQ(issues_and_waits(s), want);
  EXPECT_EQ(s.dw_slots, 4);
}

// OAG: each gather issues the next layer's (in forward order, into the LM head) before waiting
// for its own.
TEST(GptSchedule, OagPrefetchByHand) {
  const GptSchedule s = gpt_schedule(one_block(), opts("1x1x2x1", "oag"));
  const std::vector<std::string> fwd = {"I qkv weight_gather",      "I attn_out weight_gather",
                                        "W qkv weight_gather",      "I mlp_up weight_gather",
                                        "W attn_out weight_gather", "I mlp_down weight_gather",
                                        "W mlp_up weight_gather",   "I lm_head weight_gather",
                                        "W mlp_down weight_gather", "W lm_head weight_gather"};
  const auto got = issues_and_waits(s);
  ASSERT_GE(got.size(), fwd.size());
  EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + 10), fwd);
}

// OAR on a Y grid: the dX all-reduce of a layer is waited for after its dW GEMM, not before.
TEST(GptSchedule, OarWaitsAfterTheWeightGradient) {
  for (const char* flags : {"none", "oar"}) {
    const GptSchedule s = gpt_schedule(one_block(), opts("1x2x1x1", flags));
    // The LM head (normal: dX over Y): its dX all-reduce's issue, the dW GEMM, the wait.
    std::vector<std::string> order;
    for (const Step& st : s.steps)
      if (st.phase == Phase::backward && st.layer == -1 && st.linear.value == 4)
        order.push_back(std::string(name_of(st.kind)) + " " + std::string(st.op));
    const std::vector<std::string> want =
        std::string(flags) == "oar"
            ? std::vector<std::string>{"compute lm_head.dx", "issue lm_head", "compute lm_head.dw",
                                       "wait lm_head"}
            : std::vector<std::string>{"compute lm_head.dx", "issue lm_head", "wait lm_head",
                                       "compute lm_head.dw"};
    EXPECT_EQ(order, want) << flags;
  }
}

// tp on an X grid: every forward GEMM whose output is all-reduced over X (normal layers: QKV,
// MLP-up, LM head) runs as k row slices, each followed by its slice's all-reduce, all waited for
// after the last; the transposed layers (reduced over Y, of size 1) keep one GEMM. Backward and
// the unchunked list are unchanged.
TEST(GptSchedule, TpChunksForwardByHand) {
  const GptShape m = one_block();
  const std::int64_t T = 8 * 16, h = 64;
  for (int k : {1, 2, 4}) {
    GptPlanOptions o = opts("2x1x1x1", "tp");
    o.tp_chunks = k;
    const GptSchedule s = gpt_schedule(m, o);
    for (const char* layer : {"qkv", "attn_out", "lm_head"}) {
      const bool reduced = std::string(layer) != "attn_out";
      const GemmShape full = std::string(layer) == "qkv"        ? GemmShape{T, 3 * h, h / 2}
                             : std::string(layer) == "attn_out" ? GemmShape{T, h / 2, h}
                                                                : GemmShape{T, 256, h / 2};
      std::vector<std::string> want, got;
      const int n = reduced ? k : 1;
      for (int c = 0; c < n; ++c) {
        want.push_back("compute " + std::string(layer) + ".fwd " + std::to_string(full.m / n) +
                       "x" + std::to_string(full.n) + "x" + std::to_string(full.k));
        if (reduced) want.push_back("issue tp " + std::to_string(full.m / n * full.n));
      }
      for (int c = 0; c < n && reduced; ++c) want.push_back("wait");
      for (const Step& st : s.steps) {
        if (st.phase != Phase::forward || st.op.rfind(layer, 0) != 0) continue;
        if (st.kind == StepKind::compute && st.op == std::string(layer) + ".fwd")
          got.push_back("compute " + std::string(st.op) + " " + std::to_string(st.gemm.m) + "x" +
                        std::to_string(st.gemm.n) + "x" + std::to_string(st.gemm.k));
        if (st.kind == StepKind::issue)
          got.push_back("issue " + std::string(name_of(st.stream)) + " " +
                        std::to_string(s.collectives[static_cast<std::size_t>(st.coll)].count));
        if (st.kind == StepKind::wait) got.push_back("wait");
      }
      EXPECT_EQ(got, want) << layer << " k=" << k;
    }
    EXPECT_EQ(gpt_collectives(m, o), gpt_collectives(m, opts("2x1x1x1", "none"))) << k;
    EXPECT_EQ(sorted(s.collectives),
              sorted(ovb::testing::with_tp_chunks(gpt_collectives(m, o), o)));
    // Backward and the step are the unchunked schedule's (collective ids aside).
    EXPECT_EQ(after_forward(s), after_forward(gpt_schedule(m, opts("2x1x1x1", "none")))) << k;
  }
  GptPlanOptions bad = opts("2x1x1x1", "tp");
  bad.tp_chunks = 3;  // 128 tokens per rank
  EXPECT_THROW(gpt_schedule(m, bad), UsageError);
  bad.tp_chunks = 0;
  EXPECT_THROW(gpt_schedule(m, bad), UsageError);
  bad.otp = false;  // the count is checked without the flag too; the divisibility only with it
  EXPECT_THROW(gpt_schedule(m, bad), UsageError);
  bad.tp_chunks = 3;
  EXPECT_NO_THROW(gpt_schedule(m, bad));
}

// The GEMMs of a layer carry its local shape: forward [T, out/Gy] x [in/Gx]; dX and dW likewise.
TEST(GptSchedule, GemmShapes) {
  const GptShape m = one_block();
  const GptSchedule s = gpt_schedule(m, opts("2x2x1x1", "none"));
  std::map<std::string, GemmShape> g;
  for (const Step& st : s.steps)
    if (st.kind == StepKind::compute && st.gemm.m > 0 && !st.recompute) g[std::string(st.op)] = st.gemm;
  const std::int64_t T = 8 * 16, h = 64;
  EXPECT_EQ(g["qkv.fwd"], (GemmShape{T, 3 * h / 2, h / 2}));
  EXPECT_EQ(g["qkv.dx"], (GemmShape{T, h / 2, 3 * h / 2}));
  EXPECT_EQ(g["qkv.dw"], (GemmShape{3 * h / 2, h / 2, T}));
  EXPECT_EQ(g["mlp_down.fwd"], (GemmShape{T, h / 2, 4 * h / 2}));  // transposed: out over X
  EXPECT_EQ(g["lm_head.fwd"], (GemmShape{T, 256 / 2, h / 2}));
}

// Invariants on every grid of 8 ranks and every option set.
TEST(GptSchedule, InvariantsForEveryGridAndOption) {
  const char* grids[] = {"2x2x2x1", "2x1x2x2", "1x2x1x4", "1x1x8x1", "1x1x1x8", "1x2x2x2"};
  const char* flag_sets[] = {"none",    "oar",     "ors",     "oag",
                             "oar,ors", "oar,oag", "ors,oag", "oar,ors,oag"};
  int cases = 0;
  for (const char* grid : grids)
    for (const char* flags : flag_sets)
      for (int variant = 0; variant < 32; ++variant) {
        GptShape m = one_block();
        if (variant & 8) {  // Llama: 8 query heads over 4 K/V heads, so Gy = 2 keeps whole groups
          m = gpt_preset("llama-tiny");
          m.heads = 8;
          m.kv_heads = 4;
          m.seq = 16;
          m.vocab = 256;
        }
        m.layers = 2;
        GptPlanOptions o = opts(grid, flags);
        o.recompute = variant & 1;
        o.cache_weights = variant & 2;
        o.shard_optimizer = o.shard_gradients = variant & 4;
        o.micro_batch = (variant % 3 == 0 && o.grid.gz * o.grid.gdata <= 4) ? 1 : 0;
        o.ors_window = variant % 5 == 0 ? 1 : kDefaultOrsWindow;
        o.otp = variant & 16;  // and tp, in 2 or 4 chunks (16 tokens per micro-step at least)
        o.tp_chunks = variant % 3 == 1 ? 4 : 2;
        const std::string what =
            std::string(grid) + " " + flags + " variant " + std::to_string(variant);
        const GptSchedule s = gpt_schedule(m, o);
        ++cases;
        EXPECT_EQ(sorted(s.collectives),
                  sorted(ovb::testing::with_tp_chunks(gpt_collectives(m, o), o)))
            << what;
        EXPECT_EQ(s.micro_steps, micro_steps(o)) << what;
        EXPECT_EQ(s.dw_slots, dw_slots(m, o)) << what;
        EXPECT_EQ(s.bucket_slots, gradients_sharded(o) ? grad_bucket_slots(o) + 1 : 0) << what;
        std::vector<int> issued(s.collectives.size(), 0), waited(s.collectives.size(), 0);
        std::map<std::pair<int, int>, bool> held;  // (pool, slot)
        for (const Step& st : s.steps) {
          if (st.kind == StepKind::issue) {
            ASSERT_EQ(issued[static_cast<std::size_t>(st.coll)]++, 0) << what;
            EXPECT_EQ(st.stream, stream_of(s.collectives[static_cast<std::size_t>(st.coll)]));
            for (int d : st.deps) EXPECT_EQ(issued[static_cast<std::size_t>(d)], 1) << what;
          } else if (st.kind == StepKind::wait) {
            ASSERT_EQ(issued[static_cast<std::size_t>(st.coll)], 1) << what << " waits first";
            ASSERT_EQ(waited[static_cast<std::size_t>(st.coll)]++, 0) << what;
          } else if (st.kind == StepKind::slot_take) {
            const int n = st.pool == SlotPool::gathered ? s.gathered_slots
                          : st.pool == SlotPool::dw     ? s.dw_slots
                                                        : s.bucket_slots;
            EXPECT_LT(st.slot, n) << what << " " << describe(st, s);
            bool& h = held[{static_cast<int>(st.pool), st.slot}];
            // Cached gathered blocks are taken again by every micro-step, never released.
            if (!(st.pool == SlotPool::gathered && o.cache_weights)) {
              EXPECT_FALSE(h) << what << ": taken while held: " << describe(st, s);
            }
            h = true;
          } else if (st.kind == StepKind::slot_release) {
            held[{static_cast<int>(st.pool), st.slot}] = false;
          }
        }
        for (std::size_t i = 0; i < s.collectives.size(); ++i)
          EXPECT_EQ(waited[i], 1) << what << ": " << describe(s.collectives[i]);
      }
  EXPECT_EQ(cases, 6 * 8 * 32);
}

TEST(GptSchedule, OneRankHasComputeAndNoCollectives) {
  const GptSchedule s = gpt_schedule(one_block(), opts("1x1x1x1", "oar,ors,oag"));
  EXPECT_TRUE(s.collectives.empty());
  EXPECT_FALSE(s.steps.empty());
  for (const Step& st : s.steps) EXPECT_EQ(st.kind, StepKind::compute) << describe(st, s);
}

TEST(GptSchedule, RejectsAnInvalidPlan) {
  GptPlanOptions o = opts("1x1x3x1", "none");  // batch 8 over Gz = 3
  EXPECT_THROW(gpt_schedule(one_block(), o), UsageError);
}

// A dW slot released by a wait carries the layer and linear of the reduce-scatter waited for, also
// when the wait's own step made the list grow (the generator once read the issue step through a
// reference that this growth left dangling: GPT-1.3B on 2x2x2x1 crashed).
TEST(GptSchedule, DwReleaseAfterTheListGrew) {
  GptShape m = gpt_preset("1.3B");
  m.seq = 2048;
  m.vocab = 50304;
  GptPlanOptions o;
  o.grid = GridShape::parse("2x2x2x1");
  o.batch = 16;
  for (int layers : {16, 24}) {
    m.layers = layers;
    const GptSchedule s = gpt_schedule(m, o);
    for (std::size_t i = 1; i < s.steps.size(); ++i) {
      const Step& r = s.steps[i];
      if (r.kind != StepKind::slot_release || r.pool != SlotPool::dw) continue;
      const Step& w = s.steps[i - 1];  // the wait for the reduce-scatter that read the slot
      ASSERT_EQ(w.kind, StepKind::wait);
      EXPECT_EQ(r.layer, w.layer);
      EXPECT_EQ(r.linear, w.linear);
    }
  }
}
