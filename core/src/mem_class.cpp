// Memory-bound kernel classes: names and bytes moved (see ovb/mem_class.hpp).
#include "ovb/mem_class.hpp"

#include "ovb/error.hpp"

namespace ovb {

std::string_view name_of(MemClass c) {
  switch (c) {
    case MemClass::copy: return "copy";
    case MemClass::layernorm: return "layernorm";
    case MemClass::rmsnorm: return "rmsnorm";
    case MemClass::bias_gelu: return "bias_gelu";
    case MemClass::swiglu: return "swiglu";
    case MemClass::rope: return "rope";
    case MemClass::dropout: return "dropout";
    case MemClass::residual: return "residual";
    case MemClass::softmax: return "softmax";
    case MemClass::cross_entropy: return "cross_entropy";
    case MemClass::adamw: return "adamw";
    case MemClass::grad_accum: return "grad_accum";
  }
  return "?";
}

std::optional<MemClass> find_mem_class(std::string_view s) {
  for (MemClass c : kMemClasses)
    if (name_of(c) == s) return c;
  return std::nullopt;
}

std::string mem_class_names() {
  std::string out;
  for (MemClass c : kMemClasses) out += (out.empty() ? "" : ", ") + std::string(name_of(c));
  return out;
}

MemClass parse_mem_class(std::string_view s) {
  if (const auto c = find_mem_class(s)) return *c;
  throw UsageError("unknown memory-bound kernel class '" + std::string(s) + "' (one of " +
                   mem_class_names() + ")");
}

double mem_class_bytes(MemClass c, std::int64_t n, std::int64_t row, std::size_t elem) {
  const double a = static_cast<double>(elem), N = static_cast<double>(n),
               R = static_cast<double>(row), rows = row > 0 ? N / R : 0;
  switch (c) {
    case MemClass::copy:
    case MemClass::rope:
    case MemClass::softmax: return 2 * a * N;
    case MemClass::layernorm: return 2 * a * N + 2 * a * R + 8 * rows;
    case MemClass::rmsnorm: return 2 * a * N + a * R + 4 * rows;
    case MemClass::bias_gelu: return 3 * a * N + a * R;
    case MemClass::dropout: return 2 * a * N + N;
    case MemClass::swiglu:
    case MemClass::residual: return 3 * a * N;
    case MemClass::cross_entropy: return a * N + 8 * rows;
    case MemClass::adamw: return 24 * N + a * N + (elem != 4 ? a * N : 0);
    case MemClass::grad_accum: return 8 * N + a * N;
  }
  return 0;
}

}  // namespace ovb
