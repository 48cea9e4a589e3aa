// reduce_scatter: rank r ends with elements [r*count, (r+1)*count) of the element-wise sum of all
// ranks' buffers (count*n elements each). In place, its result lands at that offset of its buffer.
#include "harness/collective.hpp"

namespace ovb::mb {

const CollDef& reduce_scatter_def() {
  static const CollDef def{
      CollKind::reduce_scatter,
      [](int n) { return n; },
      [](std::size_t count, int n) { return count * static_cast<std::size_t>(n); },
      [](std::size_t count, int) { return count; },
      [](std::size_t, int) -> std::size_t { return 0; },
      [](std::size_t count, int rank) { return count * static_cast<std::size_t>(rank); },
      [](std::size_t i, std::size_t count, int rank, const CollInput& in) {
        const std::size_t j = static_cast<std::size_t>(rank) * count + i;
        float sum = 0;
        for (int q = 0; q < in.n; ++q) sum += in(q, j);
        return sum;
      }};
  return def;
}

}  // namespace ovb::mb
