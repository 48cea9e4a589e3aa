// Counted backend allocations (see ovb/tracked_memory.hpp).
#include "ovb/tracked_memory.hpp"

namespace ovb::gpt {

std::string_view name_of(MemKind k) {
  switch (k) {
    case MemKind::params: return "params";
    case MemKind::grads: return "grads";
    case MemKind::optimizer: return "optimizer";
    case MemKind::gathered: return "gathered";
    case MemKind::grad_blocks: return "grad_blocks";
    case MemKind::activations: return "activations";
    case MemKind::workspace: return "workspace";
  }
  return "?";
}

Buffer TrackedMemory::allocate(std::size_t bytes, MemKind kind) {
  if (bytes == 0) return Buffer();
  bytes_[static_cast<std::size_t>(kind)] += static_cast<double>(bytes);
  return backend_.allocate(bytes);
}

double TrackedMemory::total() const {
  double t = 0;
  for (double b : bytes_) t += b;
  return t;
}

GptMemory TrackedMemory::as_gpt_memory() const {
  GptMemory m;
  m.params = bytes(MemKind::params);
  m.grads = bytes(MemKind::grads);
  m.optimizer = bytes(MemKind::optimizer);
  m.gathered = bytes(MemKind::gathered);
  m.grad_blocks = bytes(MemKind::grad_blocks);
  m.activations = bytes(MemKind::activations);
  m.workspace = bytes(MemKind::workspace);
  return m;
}

}  // namespace ovb::gpt
