// Element formats and buffer access (see pattern.hpp).
#include "harness/pattern.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "ovb/error.hpp"

namespace ovb::mb {

Storage storage_of(DType t) {
  switch (t) {
    case DType::f32: return Storage::f32;
    case DType::f16: return Storage::f16;
    case DType::bf16: return Storage::bf16;
  }
  return Storage::f32;
}

Storage input_storage(GemmType t) {
  switch (t) {
    case GemmType::fp32:
    case GemmType::tf32: return Storage::f32;
    case GemmType::fp16: return Storage::f16;
    case GemmType::bf16: return Storage::bf16;
    case GemmType::fp8: return Storage::e4m3;
  }
  return Storage::f32;
}

Storage output_storage(GemmType t) {
  return storage_of(output_dtype(t));
}

std::size_t size_of(Storage s) {
  switch (s) {
    case Storage::f32: return 4;
    case Storage::f16:
    case Storage::bf16: return 2;
    case Storage::e4m3: return 1;
  }
  return 4;
}

namespace {
// fp8 e4m3 (OCP "E4M3FN"): sign, 4 exponent bits (bias 7), 3 mantissa bits, no infinities.
std::uint8_t float_to_e4m3_exact(float v) {
  if (v == 0.0f) return 0;
  const std::uint8_t sign = v < 0 ? 0x80 : 0;
  int e = 0;
  const float m = std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  const int exp_field = e - 1 + 7;
  const float frac = (m * 2.0f - 1.0f) * 8.0f;
  if (exp_field < 1 || exp_field > 15 || frac != std::floor(frac) || (exp_field == 15 && frac == 7))
    throw Error("fp8 e4m3 cannot hold " + std::to_string(v) + " exactly");
  return static_cast<std::uint8_t>(sign | (exp_field << 3) | static_cast<int>(frac));
}

float e4m3_to_float(std::uint8_t b) {
  const int exp_field = (b >> 3) & 0xF, mant = b & 7;
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  if (exp_field == 15 && mant == 7) return std::nanf("");
  if (exp_field == 0) return sign * std::ldexp(static_cast<float>(mant) / 8.0f, -6);
  return sign * std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp_field - 7);
}
}  // namespace

void encode(Storage s, float v, void* dst, std::size_t i) {
  switch (s) {
    case Storage::f32: store_host(dst, DType::f32, i, v); return;
    case Storage::f16: store_host(dst, DType::f16, i, v); return;
    case Storage::bf16: store_host(dst, DType::bf16, i, v); return;
    case Storage::e4m3: static_cast<std::uint8_t*>(dst)[i] = float_to_e4m3_exact(v); return;
  }
}

float decode(Storage s, const void* src, std::size_t i) {
  switch (s) {
    case Storage::f32: return load_host(src, DType::f32, i);
    case Storage::f16: return load_host(src, DType::f16, i);
    case Storage::bf16: return load_host(src, DType::bf16, i);
    case Storage::e4m3: return e4m3_to_float(static_cast<const std::uint8_t*>(src)[i]);
  }
  return 0;
}

std::vector<std::int64_t> check_points(std::int64_t count, std::int64_t all_up_to, int spread,
                                       std::uint64_t seed) {
  std::vector<std::int64_t> at;
  if (count <= all_up_to) {
    for (std::int64_t i = 0; i < count; ++i) at.push_back(i);
    return at;
  }
  at = {0, count - 1};
  for (std::uint64_t q = 0; q < static_cast<std::uint64_t>(spread); ++q)
    at.push_back(small_int(q, seed, static_cast<int>(std::min<std::int64_t>(count, 1 << 30))));
  return at;
}

std::vector<float> read(Backend& backend, const Buffer& b, Storage s, std::size_t first,
                        std::size_t count) {
  std::vector<unsigned char> host(count * size_of(s));
  if (count > 0) backend.download(host.data(), b, host.size(), first * size_of(s));
  std::vector<float> out(count);
  for (std::size_t j = 0; j < count; ++j) out[j] = decode(s, host.data(), j);
  return out;
}

void poke(Backend& backend, Buffer& b, Storage s, std::size_t i, float v) {
  unsigned char host[4];
  encode(s, v, host, 0);
  backend.upload(b, host, size_of(s), i * size_of(s));
}

}  // namespace ovb::mb
