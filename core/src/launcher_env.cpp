// Rank and world size from the launcher's environment (see ovb/launcher_env.hpp).
#include "ovb/launcher_env.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace ovb {

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

}  // namespace ovb
