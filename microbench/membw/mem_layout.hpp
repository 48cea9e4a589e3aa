// The buffers of each memory-bound kernel class (ovb/mem_class.hpp): their order (the kernels'
// argument order), whether the kernel reads, writes or updates them, their length (per element,
// per row, per column) and their element format. Summing them gives the bytes a kernel moves
// independently of mem_class_bytes' closed formulas (tests/test_membw.cpp compares the two).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ovb/dtype.hpp"
#include "ovb/mem_class.hpp"

namespace ovb::mb {

enum class Access { in, out, inout };              // inout: read and written (counted twice)
enum class Extent { elements, rows, rows2, row };  // n, n/row, 2 n/row, row (one per column)
enum class Elem { act, f32, u8, i32 };             // act: the benchmark's dtype

struct MemBuf {
  const char* name;
  Access access;
  Extent extent;
  Elem elem;
};

// The buffers of class c with activations of type t (adamw writes a copy of the weights in t
// when t is not fp32).
std::vector<MemBuf> mem_layout(MemClass c, DType t);

std::size_t elem_bytes(Elem e, DType t);
std::int64_t extent_elements(Extent x, std::int64_t n, std::int64_t row);
// Sum over the layout of elements * element size, inout buffers twice.
double layout_bytes(MemClass c, DType t, std::int64_t n, std::int64_t row);

}  // namespace ovb::mb
