// Counter-based random numbers for weight initialisation and synthetic data: a value depends only
// on (seed, tensor id, global element index), never on which rank computes it or in what order,
// so every grid builds the same model. Usable from host code and CUDA kernels.
#pragma once

#include <cmath>
#include <cstdint>

#include "ovb/host_device.hpp"

namespace ovb::gpt {

// splitmix64 finaliser: a bijective 64-bit mix with good avalanche.
OVB_HD std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

OVB_HD std::uint64_t hash3(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return mix64(mix64(mix64(seed) ^ stream) ^ index);
}

// Standard normal by Box-Muller from the two 32-bit halves of one hash, in double so that host
// and device agree to the last float bit in practice.
OVB_HD float normal_at(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t r = hash3(seed, stream, index);
  const double u1 = (static_cast<double>(r >> 32) + 1.0) / 4294967296.0;  // (0, 1]
  const double u2 = static_cast<double>(r & 0xFFFFFFFFull) / 4294967296.0;
  return static_cast<float>(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

}  // namespace ovb::gpt
