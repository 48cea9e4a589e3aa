// The one naming rule for per-rank trace files; the rank itself comes from the launcher's
// environment (ovb/launcher_env.hpp, core's ovb_launcher_env).
#pragma once

#include <string>

#include "ovb/launcher_env.hpp"

namespace ovb::trace {

using ovb::launcher_rank;
using ovb::LauncherRank;

// DIR/rank-00003.trace.json: one file per rank, sorted by rank in a listing.
std::string rank_trace_path(const std::string& dir, int rank);

}  // namespace ovb::trace
