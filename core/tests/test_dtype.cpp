// Host conversions to fp16/bf16 against known bit patterns.
#include <gtest/gtest.h>

#include "ovb/dtype.hpp"
#include "ovb/error.hpp"

TEST(DType, Bf16KnownBits) {
  EXPECT_EQ(ovb::float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(ovb::float_to_bf16_bits(-2.0f), 0xC000);
  EXPECT_EQ(ovb::float_to_bf16_bits(3.140625f), 0x4049);
  // 1 + 2^-8 lies halfway between 1 and 1+2^-7: ties to even -> 1.0
  EXPECT_EQ(ovb::float_to_bf16_bits(1.00390625f), 0x3F80);
  EXPECT_EQ(ovb::bf16_bits_to_float(0x4049), 3.140625f);
}

TEST(DType, HalfKnownBits) {
  EXPECT_EQ(ovb::float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(ovb::float_to_half_bits(-2.0f), 0xC000);
  EXPECT_EQ(ovb::float_to_half_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(ovb::float_to_half_bits(1e6f), 0x7C00);            // overflow -> inf
  EXPECT_EQ(ovb::float_to_half_bits(5.9604645e-8f), 0x0001);   // smallest subnormal
  EXPECT_EQ(ovb::float_to_half_bits(1.00048828125f), 0x3C00);  // tie to even
  EXPECT_EQ(ovb::half_bits_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(ovb::half_bits_to_float(0x0001), 5.9604645e-8f);
}

TEST(DType, SmallIntegersRoundTripExactly) {
  for (int i = -256; i <= 256; ++i) {
    const float f = static_cast<float>(i);
    EXPECT_EQ(ovb::half_bits_to_float(ovb::float_to_half_bits(f)), f);
    EXPECT_EQ(ovb::bf16_bits_to_float(ovb::float_to_bf16_bits(f)), f);
  }
}

TEST(DType, StoreLoadAndParse) {
  std::uint16_t buf[2];
  ovb::store_host(buf, ovb::DType::bf16, 1, 7.0f);
  EXPECT_EQ(ovb::load_host(buf, ovb::DType::bf16, 1), 7.0f);
  EXPECT_EQ(ovb::parse_dtype("bf16"), ovb::DType::bf16);
  EXPECT_EQ(ovb::parse_dtype("fp16"), ovb::DType::f16);
  EXPECT_EQ(ovb::parse_dtype("fp32"), ovb::DType::f32);
  EXPECT_EQ(ovb::size_of(ovb::DType::bf16), 2u);
  EXPECT_THROW(ovb::parse_dtype("int8"), ovb::UsageError);
}
