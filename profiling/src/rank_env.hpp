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

// Whether a traced process writes its trace at exit: always with a rank from the launcher; without
// one (rank 0 by default) only if it ran something on the GPU - a program run alone writes
// rank-00000, a launcher or helper process that merely initialised CUDA (mpirun's hwloc, a GPU
// probe) does not replace the real rank 0's trace with an empty one.
bool writes_trace(bool rank_from_launcher, bool device_activity);

}  // namespace ovb::trace
