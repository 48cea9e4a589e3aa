// Element types and exact host conversions (see ovb/dtype.hpp).
#include "ovb/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "ovb/error.hpp"

namespace ovb {

std::size_t size_of(DType t) { return t == DType::f32 ? 4 : 2; }

std::string_view name_of(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

DType parse_dtype(std::string_view s) {
  if (s == "fp32" || s == "f32" || s == "float" || s == "float32") return DType::f32;
  if (s == "fp16" || s == "f16" || s == "half" || s == "float16") return DType::f16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  throw UsageError("unknown dtype '" + std::string(s) + "' (expected fp32, fp16 or bf16)");
}

std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // quiet NaN
  const std::uint32_t rounding = 0x7FFF + ((u >> 16) & 1);                // nearest even
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

float bf16_bits_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (u >> 16) & 0x8000;
  const std::uint32_t abs = u & 0x7FFFFFFF;
  if (abs >= 0x7F800000) return static_cast<std::uint16_t>(sign | (abs > 0x7F800000 ? 0x7E00 : 0x7C00));
  if (abs >= 0x477FF000) return static_cast<std::uint16_t>(sign | 0x7C00);  // rounds to inf
  if (abs < 0x38800000) {                                                  // subnormal or zero
    const float a = std::bit_cast<float>(abs);
    const auto m = static_cast<std::uint32_t>(std::nearbyint(a * 16777216.0f));  // a / 2^-24
    return static_cast<std::uint16_t>(sign | m);
  }
  const std::uint32_t mant_round = 0xFFF + ((abs >> 13) & 1);
  const std::uint32_t r = abs + mant_round - (112u << 23);
  return static_cast<std::uint16_t>(sign | (r >> 13));
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1F;
  const std::uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    const float v = static_cast<float>(mant) / 16777216.0f;  // mant * 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

float load_host(const void* src, DType t, std::size_t i) {
  switch (t) {
    case DType::f32: return static_cast<const float*>(src)[i];
    case DType::f16: return half_bits_to_float(static_cast<const std::uint16_t*>(src)[i]);
    case DType::bf16: return bf16_bits_to_float(static_cast<const std::uint16_t*>(src)[i]);
  }
  return 0;
}

void store_host(void* dst, DType t, std::size_t i, float v) {
  switch (t) {
    case DType::f32: static_cast<float*>(dst)[i] = v; break;
    case DType::f16: static_cast<std::uint16_t*>(dst)[i] = float_to_half_bits(v); break;
    case DType::bf16: static_cast<std::uint16_t*>(dst)[i] = float_to_bf16_bits(v); break;
  }
}

}  // namespace ovb
