// Backend allocations counted by purpose, in the same categories as ovb::GptMemory, so gpt4d
// reports what it allocated beside the plan's estimate (and a test checks they agree). It sits in
// core, below gpt4d's kernels and trainer, because both allocate through it (the kernels count
// their workspaces).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "ovb/backend.hpp"
#include "ovb/gpt_plan.hpp"

namespace ovb::gpt {

enum class MemKind { params, grads, optimizer, gathered, grad_blocks, activations, workspace };
inline constexpr int kMemKinds = 7;
std::string_view name_of(MemKind k);

class TrackedMemory {
 public:
  explicit TrackedMemory(Backend& b) : backend_(b) {}
  // A buffer of `bytes` (0 allowed: an empty buffer, counted as 0).
  Buffer allocate(std::size_t bytes, MemKind kind);
  double bytes(MemKind k) const { return bytes_[static_cast<std::size_t>(k)]; }
  double total() const;
  // The same numbers as a GptMemory, for printing and comparison with gpt_memory().
  GptMemory as_gpt_memory() const;

 private:
  Backend& backend_;
  std::array<double, kMemKinds> bytes_{};
};

}  // namespace ovb::gpt
