// Unit tests: the GEMM shape text (ovb/gemm.hpp), shared by the microbenchmarks and the model.
#include <gtest/gtest.h>

#include "ovb/error.hpp"
#include "ovb/gemm.hpp"

namespace ovb {
namespace {

TEST(GemmShape, ParsesAndPrintsTheShapeText) {
  const GemmShape a = parse_gemm_shape("4096x1024x512");
  EXPECT_EQ(a.m, 4096);
  EXPECT_EQ(a.n, 1024);
  EXPECT_EQ(a.k, 512);
  EXPECT_EQ(a.ta, Trans::n);
  EXPECT_EQ(a.tb, Trans::n);
  const GemmShape b = parse_gemm_shape("8x16x32:tn");
  EXPECT_EQ(b.ta, Trans::t);
  EXPECT_EQ(b.tb, Trans::n);
  EXPECT_EQ(shape_text(b), "8x16x32:tn");
  for (const char* bad : {"", "1x2", "1x2x3x4", "0x2x3", "1x2x3:nx", "1x2x3:", "ax2x3", "-1x2x3",
                          "1xx3", "1x2x", "x2x3"})
    EXPECT_THROW(parse_gemm_shape(bad), UsageError) << bad;
}

}  // namespace
}  // namespace ovb
