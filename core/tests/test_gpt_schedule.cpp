// The schedule of one iteration: its issues and waits by hand for a one-block model on a Z-only
// grid under each overlap flag (docs/algorithm.md's orders), and for every grid, flag subset and
// option its invariants: the collectives are gpt_collectives() as a multiset, every collective is
// issued before it is waited for and waited for exactly once, dependencies are earlier issues, no
// slot is taken while held, and the slot counts are those of the memory account.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ovb/error.hpp"
#include "ovb/gpt_schedule.hpp"

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
      for (int variant = 0; variant < 16; ++variant) {
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
        const std::string what =
            std::string(grid) + " " + flags + " variant " + std::to_string(variant);
        const GptSchedule s = gpt_schedule(m, o);
        ++cases;
        EXPECT_EQ(sorted(s.collectives), sorted(gpt_collectives(m, o))) << what;
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
  EXPECT_EQ(cases, 6 * 8 * 16);
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
