// Unit tests: the GPT-derived local GEMMs (harness/gemm_cases.hpp).
#include <gtest/gtest.h>

#include "harness/gemm_cases.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {
namespace {

// hidden 64, 4 heads, seq 128, batch 4 on Gx=2, Gy=2, Gz=1, Gdata=1: T = 4*128 = 512 tokens.
// QKV (normal, 64->192): in over X (32), out over Y (96); attn_out (transposed, 64->64): in over Y
// (32), out over X (32); mlp_up (normal, 64->256): 32 -> 128; mlp_down (transposed, 256->64):
// in over Y (128), out over X (32).
TEST(GemmCases, GptLocalGemmsOnA2x2Grid) {
  GptGemmOptions o;
  o.run.model.preset = "tiny";
  o.run.model.seq = 128;
  o.run.plan.batch = 4;
  GridShape g;
  g.gx = 2;
  g.gy = 2;
  const std::vector<GemmCase> cases = gpt_gemm_cases(o, g);
  ASSERT_EQ(cases.size(), 12u);
  auto find = [&](const std::string& tag) {
    for (const GemmCase& c : cases)
      if (c.tag == tag) return c.shape;
    ADD_FAILURE() << "no " << tag;
    return GemmShape{};
  };
  EXPECT_EQ(find("qkv.fwd"), (GemmShape{512, 96, 32, Trans::n, Trans::t}));
  EXPECT_EQ(find("qkv.dx"), (GemmShape{512, 32, 96, Trans::n, Trans::n}));
  EXPECT_EQ(find("qkv.dw"), (GemmShape{96, 32, 512, Trans::t, Trans::n}));
  EXPECT_EQ(find("attn_out.fwd"), (GemmShape{512, 32, 32, Trans::n, Trans::t}));
  EXPECT_EQ(find("mlp_up.fwd"), (GemmShape{512, 128, 32, Trans::n, Trans::t}));
  EXPECT_EQ(find("mlp_down.fwd"), (GemmShape{512, 32, 128, Trans::n, Trans::t}));
  EXPECT_EQ(find("mlp_down.dw"), (GemmShape{32, 128, 512, Trans::t, Trans::n}));
}

TEST(GemmCases, GptDataAndZSplitTheTokens) {
  GptGemmOptions o;
  o.run.model.preset = "tiny";
  o.run.model.seq = 64;
  o.run.plan.batch = 8;
  o.linears.set({"lm_head"});
  o.passes.set({"fwd"});
  GridShape g;
  g.gz = 2;
  g.gdata = 2;
  const auto cases = gpt_gemm_cases(o, g);
  ASSERT_EQ(cases.size(), 1u);
  // T = 8/(2*2)*64 = 128; the LM head (64 -> 50304) is not split when Gx = Gy = 1.
  EXPECT_EQ(cases[0].shape, (GemmShape{128, 50304, 64, Trans::n, Trans::t}));
}

TEST(GemmCases, InvalidGptConfigurationsNameTheProblem) {
  GptGemmOptions o;
  o.run.model.preset = "tiny";
  o.run.plan.batch = 3;
  GridShape g;
  g.gdata = 2;
  try {
    gpt_gemm_cases(o, g);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("batch"), std::string::npos) << e.what();
  }
  o.run.plan.batch = 4;
  // An unknown layer is refused as the option is read (a typed axis, harness/axes.hpp).
  EXPECT_THROW(o.linears.set({"conv"}), UsageError);
  o.linears.set({"qkv"});
  o.run.model.preset = "no-such-model";
  EXPECT_THROW(gpt_gemm_cases(o, g), UsageError);
}

}  // namespace
}  // namespace ovb::mb
