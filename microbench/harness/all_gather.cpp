// all_gather: every rank ends with all ranks' count-element buffers, rank q's at q*count. In place,
// a rank's own contribution already sits at rank*count of the receive buffer.
#include "harness/collective.hpp"

namespace ovb::mb {

const CollDef& all_gather_def() {
  static const CollDef def{
      CollKind::all_gather,
      [](int n) { return n; },
      [](std::size_t count, int) { return count; },
      [](std::size_t count, int n) { return count * static_cast<std::size_t>(n); },
      [](std::size_t count, int rank) { return count * static_cast<std::size_t>(rank); },
      [](std::size_t, int) -> std::size_t { return 0; },
      [](std::size_t i, std::size_t count, int, const CollInput& in) {
        return in(static_cast<int>(i / count), i % count);
      }};
  return def;
}

}  // namespace ovb::mb
