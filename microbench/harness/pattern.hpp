// Exact, predictable inputs for the correctness checks: small integers from a hash of the element
// index (so any slice can be generated on its own, and reference values computed without keeping
// the inputs), written into backend buffers in any element format, and read back as float.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ovb/backend.hpp"
#include "ovb/dtype.hpp"
#include "ovb/gemm.hpp"

namespace ovb::mb {

// Element formats of benchmark buffers: the DTypes plus fp8 e4m3 (GEMM inputs only).
enum class Storage { f32, f16, bf16, e4m3 };
Storage storage_of(DType t);
Storage input_storage(GemmType t);   // A and B of a GEMM
Storage output_storage(GemmType t);  // C of a GEMM
std::size_t size_of(Storage s);

// Exact conversions; e4m3 encoding throws Error for values it cannot hold exactly.
void encode(Storage s, float v, void* dst, std::size_t i);
float decode(Storage s, const void* src, std::size_t i);

// An integer in [0, levels) from (index, seed): a mix of the bits, not a short period, so rows
// and columns of a matrix differ.
inline int small_int(std::uint64_t index, std::uint64_t seed, int levels) {
  std::uint64_t h = index * 0x9E3779B97F4A7C15ull + (seed + 1) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  return static_cast<int>(h % static_cast<std::uint64_t>(levels));
}

// Writes value(first + j) for j in [0, count) into elements [first, first+count) of b, in chunks.
template <class F>
void fill(Backend& backend, Buffer& b, Storage s, std::size_t first, std::size_t count, F value) {
  const std::size_t chunk = std::min<std::size_t>(count, 1u << 20);
  std::vector<unsigned char> host(chunk * size_of(s));
  for (std::size_t done = 0; done < count;) {
    const std::size_t n = std::min(chunk, count - done);
    for (std::size_t j = 0; j < n; ++j) encode(s, value(first + done + j), host.data(), j);
    backend.upload(b, host.data(), n * size_of(s), (first + done) * size_of(s));
    done += n;
  }
}

// Indices a check reads among [0, count): all of them when count <= all_up_to, else the first,
// the last and `spread` indices from small_int(., seed, .).
std::vector<std::int64_t> check_points(std::int64_t count, std::int64_t all_up_to, int spread,
                                       std::uint64_t seed);

// Elements [first, first+count) of b as float.
std::vector<float> read(Backend& backend, const Buffer& b, Storage s, std::size_t first,
                        std::size_t count);

// Overwrites element i of b with v (used to inject a wrong result in tests).
void poke(Backend& backend, Buffer& b, Storage s, std::size_t i, float v);

}  // namespace ovb::mb
