// all_reduce: every rank ends with the element-wise sum of all ranks' buffers (count elements).
#include "harness/collective.hpp"

namespace ovb::mb {

const CollDef& all_reduce_def() {
  static const CollDef def{CollKind::all_reduce,
                           [](int) { return 1; },
                           [](std::size_t count, int) { return count; },
                           [](std::size_t count, int) { return count; },
                           [](std::size_t, int) -> std::size_t { return 0; },
                           [](std::size_t, int) -> std::size_t { return 0; },
                           [](std::size_t i, std::size_t, int, const CollInput& in) {
                             float sum = 0;
                             for (int q = 0; q < in.n; ++q) sum += in(q, i);
                             return sum;
                           }};
  return def;
}

}  // namespace ovb::mb
