// Rank from the launcher's environment and per-rank trace names (see rank_env.hpp).
#include "rank_env.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace ovb::trace {

static bool parse_int(const char* s, int& out) {
  if (!s || !*s) return false;
  const std::string_view v(s);
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  return r.ec == std::errc() && r.ptr == v.data() + v.size() && out >= 0;
}

LauncherRank launcher_rank(const std::function<const char*(const char*)>& getenv_fn) {
  auto get = [&](const char* name) { return getenv_fn ? getenv_fn(name) : std::getenv(name); };
  static constexpr const char* kVars[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                             {"PMI_RANK", "PMI_SIZE"},
                                             {"SLURM_PROCID", "SLURM_NTASKS"},
                                             {"RANK", "WORLD_SIZE"}};
  LauncherRank r;
  for (const auto& v : kVars) {
    int rank = 0;
    if (!parse_int(get(v[0]), rank)) continue;
    r.rank = rank;
    r.source = v[0];
    int world = 0;
    r.world = parse_int(get(v[1]), world) && world > rank ? world : rank + 1;
    return r;
  }
  return r;
}

std::string rank_trace_path(const std::string& dir, int rank) {
  char name[48];
  std::snprintf(name, sizeof name, "rank-%05d.trace.json", rank);
  return (dir.empty() ? std::string(".") : dir) + "/" + name;
}

}  // namespace ovb::trace
