// What the tp overlap flag does to the set of an iteration's collectives, stated apart from the
// schedule generator for tests to compare with: each forward output all-reduce (role
// output_reduce; gpt_collectives() lists only groups larger than 1) becomes tp_chunks all-reduces
// of count / tp_chunks, the row slices of the layer's output, everything else unchanged.
#pragma once

#include <vector>

#include "ovb/gpt_plan.hpp"

namespace ovb::testing {

inline std::vector<CollOp> with_tp_chunks(const std::vector<CollOp>& plain,
                                          const GptPlanOptions& o) {
  std::vector<CollOp> out;
  for (CollOp c : plain) {
    const int k = o.otp && c.role == CollRole::output_reduce ? o.tp_chunks : 1;
    c.count /= k;
    out.insert(out.end(), static_cast<std::size_t>(k), c);
  }
  return out;
}

}  // namespace ovb::testing
