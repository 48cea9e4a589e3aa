// The memory-bound kernel classes of a training step (normalisation, bias+activation, SwiGLU, RoPE,
// dropout,
// residual add, softmax, cross-entropy, optimizer, gradient accumulation, and a plain copy as the
// STREAM-like reference) and the exact bytes each moves: the one definition that ovb-membw times
// and reports and that the model's machine file keys its per-class memory efficiencies by
// (gpu.memory_efficiency_by_class, docs/model-machines.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ovb {

enum class MemClass {
  copy,           // y = x
  layernorm,      // forward: y = (x - mean) * rstd * gamma + beta, per row; mean, rstd kept
  rmsnorm,        // forward: y = x * rstd * gamma, per row; rstd kept
  bias_gelu,      // pre = x + bias (per column), y = gelu(pre); both kept (backward needs pre)
  swiglu,         // y = silu(gate) * up (Llama's MLP activation, one exponential per element)
  rope,           // rotary embedding in place: each pair of a row turned by pos * theta^(-2i/row)
  dropout,        // mask = uniform >= p (one byte per element), y = x * mask / (1 - p)
  residual,       // y = a + b
  softmax,        // y = softmax(x) per row
  cross_entropy,  // forward: loss[row] = logsumexp(x[row]) - x[row, target[row]]
  adamw,          // one AdamW step: fp32 master weights, m, v; gradient in the dtype
  grad_accum,     // fp32 accumulator += gradient (in the dtype)
};

inline constexpr std::array<MemClass, 12> kMemClasses = {
    MemClass::copy,    MemClass::layernorm,     MemClass::rmsnorm, MemClass::bias_gelu,
    MemClass::swiglu,  MemClass::rope,          MemClass::dropout, MemClass::residual,
    MemClass::softmax, MemClass::cross_entropy, MemClass::adamw,   MemClass::grad_accum};

std::string_view name_of(MemClass c);  // "copy", "layernorm", ..., "grad_accum"
// The class named s; nullopt when none is.
std::optional<MemClass> find_mem_class(std::string_view s);
// The class named s; throws UsageError "unknown memory-bound kernel class 'x' (one of ...)".
MemClass parse_mem_class(std::string_view s);
// "copy, layernorm, ..." for help texts and messages.
std::string mem_class_names();

// Bytes one kernel of class c moves to and from memory, each element read or written once, for n
// elements of the main tensor in rows of `row` elements (rows = n / row) and `elem` bytes per
// element of the dtype (a). Per-row statistics are fp32, the dropout mask one byte, targets int32:
//   copy            2 a n                  softmax        2 a n
//   layernorm       2 a n + 2 a row + 8 rows   (x, y; gamma, beta; mean, rstd)
//   rmsnorm         2 a n + a row + 4 rows     (x, y; gamma; rstd)
//   bias_gelu       3 a n + a row              (x; pre, y; bias)
//   swiglu          3 a n                      (gate, up; y)
//   rope            2 a n                      (x read and written in place)
//   dropout         2 a n + n                  (x, y; mask)
//   residual        3 a n                      (a, b; y)
//   cross_entropy   a n + 8 rows               (logits; target, loss)
//   adamw           24 n + a n (+ a n when a != 4: the weights' copy in the dtype)
//   grad_accum      8 n + a n                  (fp32 accumulator read and written; gradient)
double mem_class_bytes(MemClass c, std::int64_t n, std::int64_t row, std::size_t elem);

}  // namespace ovb
