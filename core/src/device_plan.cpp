// GPU selection and oversubscription set-up (see ovb/device_plan.hpp).
#include "ovb/device_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "ovb/error.hpp"

namespace ovb {

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

static int parse_positive(const std::string& what, const std::string& text) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v >= 1) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(what + " must be a positive integer, got '" + text + "'");
}

// The most local ranks that would use one physical GPU, from each local rank's GPU identity.
static int busiest_gpu(const std::vector<std::string>& ids) {
  std::map<std::string, int> n;
  int most = 0;
  for (const auto& id : ids) most = std::max(most, ++n[id]);
  return most;
}

DevicePlan plan_device(const LaunchContext& ctx, int visible_gpus, int opt_in_ranks_per_gpu,
                       const EnvLookup& env, const std::vector<std::string>& local_device_ids) {
  if (visible_gpus < 1)
    throw UsageError("no CUDA device is visible to rank " + std::to_string(ctx.rank) + " on " +
                     ctx.host + " (check CUDA_VISIBLE_DEVICES, or use --backend host)");
  int opt_in = opt_in_ranks_per_gpu;
  if (opt_in == 0) {
    if (auto v = env("OVB_RANKS_PER_GPU")) opt_in = parse_positive("OVB_RANKS_PER_GPU", *v);
  } else if (opt_in < 0) {
    throw UsageError("--ranks-per-gpu must be a positive integer, got " + std::to_string(opt_in));
  }

  DevicePlan plan;
  plan.device = ctx.local_rank % visible_gpus;
  plan.ranks_per_gpu = (ctx.local_size + visible_gpus - 1) / visible_gpus;
  if (ctx.local_size <= visible_gpus) return plan;
  if (static_cast<int>(local_device_ids.size()) == ctx.local_size) {
    plan.ranks_per_gpu = busiest_gpu(local_device_ids);
    if (plan.ranks_per_gpu <= 1) return plan;  // each rank bound to GPUs of its own
  }

  const int needed = plan.ranks_per_gpu;
  if (opt_in < needed)
    throw UsageError(std::to_string(ctx.local_size) + " ranks on " + ctx.host + " but only " +
                     std::to_string(visible_gpus) + " GPU(s) visible to rank " +
                     std::to_string(ctx.rank) + " and " + std::to_string(needed) +
                     " ranks would use one GPU: to share GPUs (" + std::to_string(needed) +
                     " ranks per GPU, communication emulated over loopback) pass --ranks-per-gpu " +
                     std::to_string(needed) +
                     " or set OVB_RANKS_PER_GPU=" + std::to_string(needed));
  plan.oversubscribed = true;
  if (!env("NCCL_HOSTID"))
    plan.env_to_set.emplace_back("NCCL_HOSTID", ctx.host + "-r" + std::to_string(ctx.rank));
  if (!env("NCCL_SOCKET_IFNAME")) plan.env_to_set.emplace_back("NCCL_SOCKET_IFNAME", "lo");
  plan.warning = std::to_string(needed) +
                 " ranks share each GPU: NCCL connects them through its socket transport over "
                 "loopback, so communication bandwidth is emulated (~1-3 GB/s), not NVLink or "
                 "InfiniBand; start CUDA MPS so that the ranks' kernels run concurrently";
  return plan;
}

}  // namespace ovb
