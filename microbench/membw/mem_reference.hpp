// The correctness side of ovb-membw: the input value of every element of every input buffer (a
// function of the class, buffer and index, exact in every dtype), and the expected outputs of one
// row computed in double precision from those inputs, independent of the timed implementations.
#pragma once

#include <cstdint>
#include <vector>

#include "membw/mem_layout.hpp"

namespace ovb::mb {

// Value of element i of buffer `b` of class c before the first call (rows of `row` elements):
// multiples of 1/8 in [-1, 1) (gamma in [0.5, 1.5), v >= 0, target in [0, row)).
double mem_input(MemClass c, int b, std::uint64_t i, std::int64_t row);

// The expected values, after one call, of row `r` of every output (out or inout) buffer of the
// layout: result[b] holds the row's slice of buffer b (empty for inputs); the slice of a per-row
// buffer is its one (rows) or two (rows2) entries of the row.
std::vector<std::vector<double>> mem_reference_row(MemClass c, DType t, std::int64_t r,
                                                   std::int64_t row);

// Relative tolerance of an output against the reference: the output's rounding (bf16: one unit
// in the last place, 2^-8) plus fp32 arithmetic: 4 * row units (2^-24) for the classes that sum
// over a row, 64 units for the others (transcendentals and a few dependent operations). Applied
// as |got - ref| <= tol * max(|ref|, 1/8): inputs are O(1), so 1/8 bounds the size of the terms
// a near-zero result comes from.
double mem_tolerance(MemClass c, Elem e, DType t, std::int64_t row);

}  // namespace ovb::mb
