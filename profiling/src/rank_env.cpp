// Per-rank trace names (see rank_env.hpp).
#include "rank_env.hpp"

#include <cstdio>

namespace ovb::trace {

std::string rank_trace_path(const std::string& dir, int rank) {
  char name[48];
  std::snprintf(name, sizeof name, "rank-%05d.trace.json", rank);
  return (dir.empty() ? std::string(".") : dir) + "/" + name;
}

bool writes_trace(bool rank_from_launcher, bool device_activity) {
  return rank_from_launcher || device_activity;
}

}  // namespace ovb::trace
