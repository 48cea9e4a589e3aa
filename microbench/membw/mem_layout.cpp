// Buffers of the memory-bound kernel classes (see mem_layout.hpp).
#include "membw/mem_layout.hpp"

namespace ovb::mb {

std::vector<MemBuf> mem_layout(MemClass c, DType t) {
  using A = Access;
  using X = Extent;
  using E = Elem;
  switch (c) {
    case MemClass::copy:
      return {{"x", A::in, X::elements, E::act}, {"y", A::out, X::elements, E::act}};
    case MemClass::layernorm:
      return {{"x", A::in, X::elements, E::act},
              {"gamma", A::in, X::row, E::act},
              {"beta", A::in, X::row, E::act},
              {"y", A::out, X::elements, E::act},
              {"mean_rstd", A::out, X::rows2, E::f32}};
    case MemClass::rmsnorm:
      return {{"x", A::in, X::elements, E::act},
              {"gamma", A::in, X::row, E::act},
              {"y", A::out, X::elements, E::act},
              {"rstd", A::out, X::rows, E::f32}};
    case MemClass::bias_gelu:
      return {{"x", A::in, X::elements, E::act},
              {"bias", A::in, X::row, E::act},
              {"pre", A::out, X::elements, E::act},
              {"y", A::out, X::elements, E::act}};
    case MemClass::swiglu:
      return {{"gate", A::in, X::elements, E::act},
              {"up", A::in, X::elements, E::act},
              {"y", A::out, X::elements, E::act}};
    case MemClass::rope: return {{"x", A::inout, X::elements, E::act}};
    case MemClass::dropout:
      return {{"x", A::in, X::elements, E::act},
              {"y", A::out, X::elements, E::act},
              {"mask", A::out, X::elements, E::u8}};
    case MemClass::residual:
      return {{"a", A::in, X::elements, E::act},
              {"b", A::in, X::elements, E::act},
              {"y", A::out, X::elements, E::act}};
    case MemClass::softmax:
      return {{"x", A::in, X::elements, E::act}, {"y", A::out, X::elements, E::act}};
    case MemClass::cross_entropy:
      return {{"logits", A::in, X::elements, E::act},
              {"target", A::in, X::rows, E::i32},
              {"loss", A::out, X::rows, E::f32}};
    case MemClass::adamw: {
      std::vector<MemBuf> b = {{"p", A::inout, X::elements, E::f32},
                               {"m", A::inout, X::elements, E::f32},
                               {"v", A::inout, X::elements, E::f32},
                               {"g", A::in, X::elements, E::act}};
      if (t != DType::f32) b.push_back({"w", A::out, X::elements, E::act});
      return b;
    }
    case MemClass::grad_accum:
      return {{"acc", A::inout, X::elements, E::f32}, {"g", A::in, X::elements, E::act}};
  }
  return {};
}

std::size_t elem_bytes(Elem e, DType t) {
  switch (e) {
    case Elem::act: return size_of(t);
    case Elem::f32:
    case Elem::i32: return 4;
    case Elem::u8: return 1;
  }
  return 0;
}

std::int64_t extent_elements(Extent x, std::int64_t n, std::int64_t row) {
  switch (x) {
    case Extent::elements: return n;
    case Extent::rows: return n / row;
    case Extent::rows2: return 2 * (n / row);
    case Extent::row: return row;
  }
  return 0;
}

double layout_bytes(MemClass c, DType t, std::int64_t n, std::int64_t row) {
  double sum = 0;
  for (const MemBuf& b : mem_layout(c, t))
    sum += static_cast<double>(extent_elements(b.extent, n, row)) *
           static_cast<double>(elem_bytes(b.elem, t)) * (b.access == Access::inout ? 2 : 1);
  return sum;
}

}  // namespace ovb::mb
