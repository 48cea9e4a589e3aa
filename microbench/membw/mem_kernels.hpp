// The memory-bound kernels ovb-membw times: one host implementation (plain loops, fp32: the host
// backend's type) and one CUDA implementation (membw/cuda/mem_kernels.cu) per class, both checked
// against the double-precision reference of mem_reference.hpp. The trainer's own kernels live in
// endtoend/, above microbench in the suite's layering, so these are small stand-alone versions of
// the same arithmetic, their scalar formulas (GELU, SiLU, RoPE's angle) core's ovb/kernel_math.hpp
// as the trainer's are (docs/model-costs.md counts the trainer's kernels with mem_class_bytes too).
#pragma once

#include <array>
#include <cstdint>

#include "ovb/dtype.hpp"
#include "ovb/host_device.hpp"
#include "ovb/kernel_math.hpp"  // the trainer's gelu, silu, rope_angle
#include "ovb/mem_class.hpp"

namespace ovb::mb {

// Constants every implementation and the reference share.
struct MemConstants {
  static constexpr float ln_eps = 1e-5f;
  static constexpr float dropout_p = 0.1f;
  static constexpr std::uint64_t dropout_seed = 1234;
  static constexpr float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, adam_eps = 1e-8f,
                         weight_decay = 0.01f;
  static constexpr int adam_step = 1;  // bias corrections of the first step, every call
  // RoPE: row r is one head vector at position r % rope_positions (small positions keep the fp32
  // angle within the check's tolerance), base theta as Llama 2's.
  static constexpr std::int64_t rope_positions = 128;
  static constexpr float rope_theta = 10000.0f;
};


// Dropout's keep decision for element i: a hash of (seed, i) against p, the same on host and GPU.
OVB_HD bool dropout_keep(std::uint64_t i, std::uint64_t seed, float p) {
  std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f) >= p;
}

// One kernel call: the class, the dtype, n elements in rows of `row`, and the buffers in the
// order of mem_layout(c, t).
struct MemArgs {
  MemClass c = MemClass::copy;
  DType t = DType::f32;
  std::int64_t n = 0, row = 0;
  std::array<void*, 6> buf{};
};

// Host loops (fp32 only; throws Error for another type).
void run_host_mem_kernel(const MemArgs& a);
// CUDA kernels on `stream` (a cudaStream_t), fp32 and bf16; throws Error in a build without CUDA.
void run_cuda_mem_kernel(const MemArgs& a, void* stream);

}  // namespace ovb::mb
