// Which GPU a rank uses, and what to set up when several ranks share one GPU.
// Pure logic (no CUDA calls) so that it is unit-tested on machines without a GPU.
//
// Rule: device = local_rank % visible_gpus. More ranks on a node than visible GPUs is fine when
// each rank sees its own GPUs (Slurm's --gpus-per-task / --gpu-bind, a per-rank
// CUDA_VISIBLE_DEVICES): the caller passes the identity (UUID) of the GPU each local rank would
// use, and only ranks that would share one physical GPU count. Several ranks on one GPU
// ("oversubscribed", the only way to run multi-rank on a one-GPU machine) is an error unless the
// user opted in with --ranks-per-gpu N or OVB_RANKS_PER_GPU=N (N >= ranks per GPU needed). Then
// each rank gets its own NCCL_HOSTID (NCCL otherwise refuses with "Duplicate GPU detected") and
// NCCL_SOCKET_IFNAME=lo, unless the user set them, and a warning says bandwidth is emulated.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ovb/launch.hpp"

namespace ovb {

struct DevicePlan {
  int device = 0;
  int ranks_per_gpu = 1;  // ranks sharing the busiest GPU on this node
  bool oversubscribed = false;
  std::vector<std::pair<std::string, std::string>> env_to_set;  // set before creating NCCL comms
  std::string warning;                                          // empty when none
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();

// opt_in_ranks_per_gpu: the --ranks-per-gpu value, 0 when not given (then OVB_RANKS_PER_GPU is
// read). local_device_ids: for each local rank (index = local rank), the identity of the GPU it
// would use; empty when unknown (then every GPU is assumed to be visible to every rank of the
// node). Throws UsageError when no GPU is visible or the node is oversubscribed without opt-in.
DevicePlan plan_device(const LaunchContext& ctx, int visible_gpus, int opt_in_ranks_per_gpu,
                       const EnvLookup& env, const std::vector<std::string>& local_device_ids = {});

}  // namespace ovb
