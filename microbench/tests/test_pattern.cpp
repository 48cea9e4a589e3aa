// Unit tests: element formats and input patterns (harness/pattern.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "harness/pattern.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {
namespace {

TEST(Pattern, E4m3EncodesExactValues) {
  std::uint8_t b[1];
  // 1.0 = exponent 7 (bias 7), mantissa 0; -1.0 sets the sign; 448 is the largest finite value.
  const std::pair<float, std::uint8_t> known[] = {{0.0f, 0x00}, {1.0f, 0x38}, {-1.0f, 0xB8},
                                                  {2.0f, 0x40}, {1.5f, 0x3C}, {448.0f, 0x7E}};
  for (const auto& [v, bits] : known) {
    encode(Storage::e4m3, v, b, 0);
    EXPECT_EQ(b[0], bits) << v;
    EXPECT_EQ(decode(Storage::e4m3, b, 0), v);
  }
  EXPECT_THROW(encode(Storage::e4m3, 1.1f, b, 0), Error);
  EXPECT_THROW(encode(Storage::e4m3, 512.0f, b, 0), Error);
}

TEST(Pattern, RoundTripsEveryStorage) {
  unsigned char buf[8];
  for (Storage s : {Storage::f32, Storage::f16, Storage::bf16, Storage::e4m3})
    for (float v : {-2.0f, -1.0f, 0.0f, 1.0f, 3.0f}) {
      encode(s, v, buf, 1);
      EXPECT_EQ(decode(s, buf, 1), v);
    }
  EXPECT_EQ(size_of(Storage::e4m3), 1u);
  EXPECT_EQ(size_of(input_storage(GemmType::fp8)), 1u);
  EXPECT_EQ(output_storage(GemmType::fp8), Storage::bf16);
  EXPECT_EQ(output_storage(GemmType::tf32), Storage::f32);
}

TEST(Pattern, SmallIntsCoverTheirRangeWithoutShortPeriods) {
  std::set<int> seen;
  int same_as_shifted = 0;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    const int v = small_int(i, 7, 3);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 3);
    seen.insert(v);
    if (v == small_int(i + 3, 7, 3)) ++same_as_shifted;
  }
  EXPECT_EQ(seen.size(), 3u);
  // A period-3 pattern would match its shift everywhere; a mixed one about a third of the time.
  EXPECT_LT(same_as_shifted, 1500);
  EXPECT_NE(small_int(5, 1, 1000), small_int(5, 2, 1000));
}

}  // namespace
}  // namespace ovb::mb
